"""Item manifests and observations as Parquet or CSV: the same SCORE.json as JSONL (but for
the inputs' names and digests), and the contract's problems located in the file's own terms
(Parquet row group and row, CSV line) with the JSONL reader's words."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prereg.cli import main
from tests.conftest import ROOT

STUDY = "answer-position"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("columnar")
    shutil.copytree(ROOT / "examples" / STUDY / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    items = root / "items.jsonl"
    assert main(["--project", str(root), STUDY, "items", "--out", str(items)]) == 0
    obs = root / "obs.jsonl"
    assert (
        main(
            ["--project", str(root), STUDY, "simulate", "--items", str(items)]
            + ["--scenario", "position-bias", "--seed", "5", "--out", str(obs)]
        )
        == 0
    )
    return root


def run(project: Path, *args) -> int:
    return main(["--project", str(project), STUDY, *map(str, args)])


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema, group: int) -> Path:
    # several row groups, so that a reader that kept only the first would lose rows
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=group)
    return path


def write_csv(path: Path, rows: list[dict], names: list[str]) -> Path:
    def cell(v):
        return "" if v is None else ("true" if v is True else "false" if v is False else v)

    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(names)
        for r in rows:
            w.writerow([cell(r.get(n)) for n in names])
    return path


ITEMS = pa.schema([(n, pa.string()) for n in ("rowId", "split", "model", "position", "format")])
OBS = pa.schema([("rowId", pa.string()), ("correct", pa.bool_()), ("attempt", pa.int64())])


def score_text(project: Path, tag: str, items: Path, obs: Path) -> dict:
    out = project / f"{tag}.SCORE.json"
    assert run(project, "score", "--items", items, "--observations", obs, "--out", out) == 0
    doc = json.loads(out.read_text())
    inputs = doc.pop("inputs")
    assert inputs["items"]["file"] == items.name and inputs["observations"]["file"] == obs.name
    return json.dumps(doc, indent=2, ensure_ascii=False)


def test_parquet_csv_and_jsonl_give_the_same_score(project):
    items, obs = project / "items.jsonl", project / "obs.jsonl"
    item_rows, obs_rows = records(items), records(obs)
    # the simulated attempts include failed ones (a null outcome), so nulls are exercised
    assert any(r["correct"] is None for r in obs_rows)
    want = score_text(project, "jsonl", items, obs)
    pitems = write_parquet(project / "items.parquet", item_rows, ITEMS, 1000)
    pobs = write_parquet(project / "obs.parquet", obs_rows, OBS, 700)
    assert pq.ParquetFile(pobs).num_row_groups > 1
    citems = write_csv(project / "items.csv", item_rows, ITEMS.names)
    cobs = write_csv(project / "obs.csv", obs_rows, OBS.names)
    assert score_text(project, "parquet", pitems, pobs) == want
    assert score_text(project, "csv", citems, cobs) == want
    assert score_text(project, "mixed", citems, pobs) == want


def _refusal(project, tmp_path, capsys, obs: Path) -> str:
    out = tmp_path / "SCORE.json"
    code = run(
        project, "score", "--items", project / "items.jsonl", "--observations", obs, "--out", out
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert not out.exists() and not out.with_suffix(".md").exists()
    return err


def test_a_parquet_problem_is_located_by_row_group_and_row(project, tmp_path, capsys):
    rows = records(project / "obs.jsonl")[:10]
    rows[6] = {**rows[6], "attempt": 0}  # row group 1 (rows 4-7), its third row
    rows[9] = {**rows[9], "rowId": None}  # row group 2, first row: the required id missing
    err = _refusal(project, tmp_path, capsys, write_parquet(tmp_path / "o.parquet", rows, OBS, 4))
    # the same words as the JSONL reader's for the same records
    jl = tmp_path / "o.jsonl"
    jl.write_text(
        "".join(
            json.dumps({k: v for k, v in r.items() if v is not None or k == "correct"}) + "\n"
            for r in rows
        )
    )
    jerr = _refusal(project, tmp_path, capsys, jl)
    lines = {ln.strip() for ln in jerr.splitlines() if f"{jl}:" in ln}
    seven = next(ln for ln in lines if ln.startswith(f"{jl}:7: "))
    ten = next(ln for ln in lines if ln.startswith(f"{jl}:10: "))
    assert "0 is less than the minimum of 1" in seven and "'rowId'" in ten
    assert f"{tmp_path / 'o.parquet'}: row group 1, row 3: {seven.split(': ', 1)[1]}" in err
    assert f"{tmp_path / 'o.parquet'}: row group 2, row 2: {ten.split(': ', 1)[1]}" in err
    assert "2 problem(s)" in err


def test_a_csv_problem_is_located_by_line(project, tmp_path, capsys):
    rows = records(project / "obs.jsonl")[:5]
    rows[2] = {**rows[2], "attempt": -3}
    err = _refusal(project, tmp_path, capsys, write_csv(tmp_path / "o.csv", rows, OBS.names))
    # header on line 1: the third record is line 4
    assert f"{tmp_path / 'o.csv'}:4: at /attempt: -3 is less than the minimum of 1" in err


@pytest.mark.parametrize(
    "header, body, words",
    [
        ("rowId,correct,attempt,extra", "x,true,1,y\n", "'extra' are not fields"),
        (
            "rowId,correct,attempt",
            "x,true,1\nx,yes,1\n",
            ":3: field correct: 'yes' is not true or false",
        ),
        ("rowId,correct,attempt", "x,true,one\n", ":2: field attempt: 'one' is not a whole number"),
        ("rowId,correct,attempt", 'x,true,1\n"y,true\n', "not a CSV file of this contract"),
    ],
)
def test_a_csv_that_breaks_the_contracts_columns_is_refused(
    project, tmp_path, capsys, header, body, words
):
    bad = tmp_path / "o.csv"
    bad.write_text(header + "\n" + body)
    err = _refusal(project, tmp_path, capsys, bad)
    assert str(bad) in err and words in err
    if words.startswith(":"):  # the bad cell's line and field, not pyarrow's column number
        assert "cell(s) not of their field's type" in err and "CSV column #" not in err


def test_a_file_that_is_not_parquet_is_refused(project, tmp_path, capsys):
    bad = tmp_path / "o.parquet"
    bad.write_bytes(b"rowId,correct,attempt\n")
    err = _refusal(project, tmp_path, capsys, bad)
    assert f"{bad}: not a readable Parquet file" in err


def test_a_csv_read_in_many_blocks_scores_and_refuses_as_read_whole(
    project, tmp_path, capsys, monkeypatch
):
    from prereg import tabular

    items, obs = project / "items.jsonl", project / "obs.jsonl"
    want = score_text(project, "jsonl-blocks", items, obs)
    citems = write_csv(tmp_path / "items.csv", records(items), ITEMS.names)
    rows = records(obs)
    cobs = write_csv(tmp_path / "obs.csv", rows, OBS.names)
    monkeypatch.setattr(tabular, "CSV_BLOCK", 512)  # a few dozen lines a block
    assert cobs.stat().st_size > 20 * 512
    assert score_text(project, "csv-blocks", citems, cobs) == want
    # a bad cell far past the first block: refused at its own line, nothing written
    bad = [*rows[:300], {**rows[300], "attempt": "x"}, *rows[301:400]]
    err = _refusal(project, tmp_path, capsys, write_csv(tmp_path / "bad.csv", bad, OBS.names))
    assert f"{tmp_path / 'bad.csv'}:302: field attempt: 'x' is not a whole number" in err


def test_a_categorical_parquet_column_with_unused_categories_scores_as_plain_strings(project):
    """A column pandas writes from a categorical keeps its categories, used or not: a category
    the contract does not allow, that no row holds, is no problem of any record."""
    items, obs = project / "items.jsonl", project / "obs.jsonl"
    want = score_text(project, "jsonl-categorical", items, obs)
    table = pa.Table.from_pylist(records(items), schema=ITEMS)
    model = table.column("model").combine_chunks()
    categories = pa.array([*sorted(set(model.to_pylist())), "model-z"])
    coded = pa.DictionaryArray.from_arrays(
        pa.compute.index_in(model, value_set=categories), categories
    )
    table = table.set_column(table.schema.get_field_index("model"), "model", coded)
    pitems = project / "items-categorical.parquet"
    pq.write_table(table, pitems, row_group_size=1000)
    assert pa.types.is_dictionary(pq.read_schema(pitems).field("model").type)
    pobs = write_parquet(project / "obs-categorical.parquet", records(obs), OBS, 700)
    assert score_text(project, "categorical", pitems, pobs) == want


def test_the_rows_of_a_string_column_of_few_values_share_their_strings():
    from prereg.tabular import _column_values

    words = ["model-a", "model-b", None] * 5000
    col, distinct = _column_values(
        pa.chunked_array([pa.array(words[:7000]), pa.array(words[7000:])])
    )
    assert col == words
    assert len({id(v) for v in col if v is not None}) == 2
    assert set(distinct) == {"model-a", "model-b", None} and len(distinct) == 3
    ids = [f"row-{i}" for i in range(9000)]  # as many strings as rows: read as they are
    col, distinct = _column_values(pa.chunked_array([pa.array(ids)]))
    assert col == ids and distinct == ids
    numbers = [1, None, 3]
    assert _column_values(pa.chunked_array([pa.array(numbers)])) == (numbers, numbers)


def test_scoring_parquet_and_csv_does_not_import_pandas(project):
    """pyarrow imports pandas (about 0.3 s) on an array's ``to_numpy`` or on building an array
    from Python objects when pandas is installed; score reads columns without either."""
    import subprocess
    import sys

    items, obs = project / "items.jsonl", project / "obs.jsonl"
    pitems = write_parquet(project / "np-items.parquet", records(items), ITEMS, 1000)
    pobs = write_parquet(project / "np-obs.parquet", records(obs), OBS, 700)
    cobs = write_csv(project / "np-obs.csv", records(obs), OBS.names)
    for tag, its, ob in (("pq", pitems, pobs), ("csv", pitems, cobs)):
        out = project / f"np-{tag}.SCORE.json"
        code = (
            "import sys; from prereg.cli import main; "
            f"rc = main({['--project', str(project), STUDY, 'score', '--quiet', '--items', str(its), '--observations', str(ob), '--out', str(out)]!r}); "
            "print(rc, 'pandas' in sys.modules)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.stdout.split()[-2:] == ["0", "False"], done.stderr
