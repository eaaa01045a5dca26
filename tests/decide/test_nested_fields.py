"""Fields below the top of a record (a field's ``path``): an inspect-style sample log
(tests/fixtures/nested/inspect.yaml: the sample's id, the model under ``metadata``, the
scorer's verdict under ``scores.match``) scored as it comes gives the decision figures of the
same data flattened; JSONL, a JSON array and Parquet (struct columns) give the same figures;
a hostile record is refused at its line and JSON path, once, with nothing written; compile
refuses paths that clash; items and simulate write records as the contract nests them."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

NESTED = (FIXTURES / "nested" / "inspect.yaml").read_text()
#: the decision figures: everything SCORE.json says but which spec and files it read
FIGURES = ("decision", "rows", "cells", "estimates", "contrasts", "gates", "verdicts")


def _flat(text: str) -> str:
    """The study with every field read at its top-level key (its name)."""
    out = re.sub(r"path: \[[^\]]*\], ", "", text)
    assert "path:" not in out
    return out


def _project(root: Path, text: str, name: str = "inspect") -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text)
    assert main(["--project", str(root), "compile", "--quiet"]) == 0
    return root


def _records(flat: bool = False) -> list[dict]:
    """Two models' samples over two epochs (the second counts): base right on 22 of 40,
    tuned on 33; the first epoch says otherwise, so a reader that took it would differ."""
    out = []
    for epoch in (1, 2):
        for model, right in (("base", 22), ("tuned", 33)):
            for i in range(1, 41):
                value = "C" if (i <= right) == (epoch == 2) else "I"
                rec = {
                    "id": f"s{i:03d}",
                    "epoch": epoch,
                    "metadata": {"model": model},
                    "scores": {"match": {"value": value, "answer": str(i * 7)}},
                }
                if i % 5 == 0:  # an optional field left out
                    del rec["scores"]["match"]["answer"]
                if flat:
                    rec = {
                        "sample": rec["id"],
                        "epoch": epoch,
                        "model": model,
                        "verdict": value,
                        **({"answer": str(i * 7)} if i % 5 else {}),
                    }
                out.append(rec)
    return out


def _jsonl(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def _parquet(path: Path, recs: list[dict], row_group_size: int = 50) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(recs), path, row_group_size=row_group_size)
    return path


def _score(root: Path, obs: Path, name: str = "inspect", extra=()) -> dict:
    out = obs.parent / f"{obs.name}.{len(extra)}.SCORE.json"
    argv = ["--project", str(root), name, "score", "--observations", str(obs)]
    assert main([*argv, "--out", str(out), "--quiet", *extra]) == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def nested(tmp_path_factory) -> Path:
    return _project(tmp_path_factory.mktemp("nested"), NESTED)


def test_schema_describes_the_nesting(nested):
    schema = json.loads((nested / "generated/inspect/schemas/sample.schema.json").read_text())
    assert schema["required"] == ["id", "epoch", "metadata", "scores"]
    match = schema["properties"]["scores"]["properties"]["match"]
    assert match["required"] == ["value"]  # answer is optional
    assert match["additionalProperties"] is False
    assert set(match["properties"]) == {"value", "answer"}
    assert schema["x-prereg-paths"]["verdict"] == ["scores", "match", "value"]


def test_nested_log_decides_as_the_same_data_flattened(nested, tmp_path):
    got = _score(nested, _jsonl(tmp_path / "log.jsonl", _records()))
    flat_root = _project(tmp_path / "flat", _flat(NESTED))
    want = _score(flat_root, _jsonl(tmp_path / "flat.jsonl", _records(flat=True)))
    assert {k: got[k] for k in FIGURES} == {k: want[k] for k in FIGURES}
    (tuned,) = got["contrasts"]
    # the counted (second) epoch: 33/40 against 22/40
    assert tuned["estimate"] == pytest.approx(11 / 40)
    assert got["verdicts"] == {"tuned-better": "supported"}


def test_jsonl_json_array_and_parquet_structs_agree(nested, tmp_path):
    recs = _records()
    want = _score(nested, _jsonl(tmp_path / "log.jsonl", recs))
    array = tmp_path / "log.json"
    array.write_text(json.dumps(recs, indent=1))
    for other in (array, _parquet(tmp_path / "log.parquet", recs, row_group_size=37)):
        got = _score(nested, other)
        assert {k: got[k] for k in FIGURES} == {k: want[k] for k in FIGURES}, other.name
    got = _score(
        nested, tmp_path / "log.jsonl", extra=["--workers", "2", "--partition-bytes", "2000"]
    )
    assert {k: got[k] for k in FIGURES} == {k: want[k] for k in FIGURES}


def test_other_fields_ignore_reads_past_unnamed_keys(tmp_path):
    root = _project(
        tmp_path / "p",
        NESTED.replace("role: observation\n", "role: observation\n    other_fields: ignore\n"),
    )
    plain = _score(root, _jsonl(tmp_path / "plain.jsonl", _records()))
    noisy = []
    for r in _records():
        r = copy.deepcopy(r)
        r["input"] = "What is 6 x 7?"
        r["metadata"]["temperature"] = 0.7
        r["scores"]["match"]["explanation"] = "matched the last number"
        r["scores"]["includes"] = {"value": "C"}
        noisy.append(r)
    got = _score(root, _jsonl(tmp_path / "noisy.jsonl", noisy))
    assert {k: got[k] for k in FIGURES} == {k: plain[k] for k in FIGURES}


def _break(recs: list[dict], at: int, how) -> list[dict]:
    recs = copy.deepcopy(recs)
    how(recs[at])
    return recs


HOSTILE = {
    "intermediate is a string": (
        lambda r: r.__setitem__("scores", "C"),
        "at /scores: expected object, got \"C\" (on the path of fields 'verdict', 'answer')",
    ),
    "null intermediate": (
        lambda r: r["scores"].__setitem__("match", None),
        "at /scores/match: expected object, got null (on the path of fields 'verdict', 'answer')",
    ),
    "missing path": (
        lambda r: r.pop("scores"),
        "at /: missing object 'scores' (on the path of fields 'verdict', 'answer')",
    ),
    "missing leaf": (
        lambda r: r["scores"]["match"].pop("value"),
        "at /scores/match: missing field 'value' (field 'verdict')",
    ),
    "wrong type at the leaf": (
        lambda r: r["scores"]["match"].__setitem__("answer", 42),
        "at /scores/match/answer: expected string, got 42 (field 'answer')",
    ),
    "unnamed sibling": (
        lambda r: r["metadata"].__setitem__("temperature", 0.7),
        "at /metadata: unexpected field 'temperature' (on the path of field 'model')",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_record_refused_at_its_line_and_path(nested, tmp_path, capsys, case):
    how, words = HOSTILE[case]
    obs = _jsonl(tmp_path / "log.jsonl", _break(_records(), 6, how))
    out = tmp_path / "S.json"
    argv = ["--project", str(nested), "inspect", "score", "--observations", str(obs)]
    assert main([*argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    located = [line.strip() for line in err.splitlines() if line.strip().startswith(str(obs))]
    assert located == [f"{obs}:7: {words}"]
    assert not out.exists() and not out.with_suffix(".md").exists()


PARQUET_HOSTILE = {
    "null struct in one row": (
        lambda recs: recs[6].__setitem__("scores", None),
        "row group 0, row 7: at /: missing object 'scores'",
    ),
    "null leaf in one row": (
        lambda recs: recs[6]["scores"]["match"].__setitem__("value", None),
        "row group 0, row 7: at /scores/match: missing field 'value' (field 'verdict')",
    ),
    "column that is no struct": (
        lambda recs: [r.__setitem__("scores", "C") for r in recs],
        "scores in column 'scores' is string; field(s) verdict, answer lie inside it",
    ),
    "leaf of the wrong type": (
        lambda recs: [r["metadata"].__setitem__("model", 1) for r in recs],
        "metadata.model in column 'metadata' is int64; field model is string",
    ),
}


@pytest.mark.parametrize("case", list(PARQUET_HOSTILE))
def test_hostile_parquet_refused_once(nested, tmp_path, capsys, case):
    how, words = PARQUET_HOSTILE[case]
    recs = copy.deepcopy(_records())
    how(recs)
    obs = _parquet(tmp_path / "log.parquet", recs, row_group_size=200)
    out = tmp_path / "S.json"
    argv = ["--project", str(nested), "inspect", "score", "--observations", str(obs)]
    assert main([*argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count(words) == 1, err
    assert len([ln for ln in err.splitlines() if str(obs) in ln and "problem(s)" not in ln]) == 1
    assert not out.exists()


def test_csv_refused_for_a_nested_contract(nested, tmp_path, capsys):
    obs = tmp_path / "log.csv"
    obs.write_text("id,epoch,model,verdict\ns001,1,base,C\n")
    out = tmp_path / "S.json"
    argv = ["--project", str(nested), "inspect", "score", "--observations", str(obs)]
    assert main([*argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "field 'model' of the record contract (sample.schema.json) lies at metadata.model" in err
    assert "a CSV file's cells cannot hold" in err and "Traceback" not in err
    assert not out.exists()


CLASHES = {
    "two fields at one path": (
        "{name: answer, path: [scores, match, answer]",
        "{name: answer, path: [scores, match, value]",
        "record contract 'sample': fields 'verdict' and 'answer' are both at"
        ' ["scores", "match", "value"]',
    ),
    "a path through a scalar field": (
        "{name: answer, path: [scores, match, answer]",
        "{name: answer, path: [epoch, answer]",
        "record contract 'sample': field 'answer' at [\"epoch\", \"answer\"] runs through field"
        " 'epoch' at [\"epoch\"] (of type integer",
    ),
    "a path through an object field": (
        "{name: epoch, type: integer, minimum: 1}",
        "{name: epoch, type: integer, minimum: 1}\n      - {name: scores, type: object, required: false}",
        'field \'verdict\' at ["scores", "match", "value"] runs through field \'scores\'',
    ),
    "a path beside a field of the same key": (
        "{name: sample, path: [id], type: string, min_length: 1}",
        "{name: sample, path: [id], type: string, min_length: 1}\n      - {name: id, type: string}",
        "fields 'sample' and 'id' are both at [\"id\"]",
    ),
    "CSV cells on a nested field": (
        "path: [scores, match, answer], type: string, required: false}",
        "path: [scores, match, answer], type: string, required: false, null_values: [NA]}",
        "record contract 'sample', field 'answer': null_values names CSV cells",
    ),
    "an empty path": ("path: [id]", "path: []", "at /record_contracts/0/fields/0/path:"),
}


@pytest.mark.parametrize("case", list(CLASHES))
def test_compile_refuses_clashing_paths(tmp_path, capsys, case):
    old, new, words = CLASHES[case]
    assert NESTED.count(old) == 1
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "inspect.yaml").write_text(NESTED.replace(old, new))
    assert main(["--project", str(root), "compile", "--quiet"]) != 0
    err = capsys.readouterr().err
    assert words in err, err
    assert "Traceback" not in err
    assert not (root / "generated" / "inspect").exists()


def test_items_and_simulate_write_records_as_the_contract_nests_them(tmp_path):
    text = (FIXTURES / "nested" / "simnest.yaml").read_text()
    root = _project(tmp_path / "p", text, "simnest")
    base = ["--project", str(root), "simnest"]
    items, obs = root / "items.jsonl", root / "obs.jsonl"
    assert main([*base, "items", "--out", str(items), "--quiet"]) == 0
    first = json.loads(items.read_text().splitlines()[0])
    assert first == {"sample": {"id": "base-01", "model": "base"}}
    sim = ["simulate", "--items", str(items), "--scenario", "big", "--seed", "7"]
    assert main([*base, *sim, "--out", str(obs), "--quiet"]) == 0
    recs = [json.loads(line) for line in obs.read_text().splitlines()]
    assert len(recs) == 60
    assert all(set(r) == {"sample", "scores"} for r in recs)
    assert all(type(r["scores"]["match"]["correct"]) is bool for r in recs)
    out = root / "S.json"
    argv = ["score", "--items", str(items), "--observations", str(obs), "--out", str(out)]
    assert main([*base, *argv, "--quiet"]) == 0
    score = json.loads(out.read_text())
    right = {
        m: sum(r["scores"]["match"]["correct"] for r in recs if r["sample"]["id"].startswith(m))
        for m in ("base", "tuned")
    }
    (c,) = score["contrasts"]
    assert c["estimate"] == pytest.approx((right["tuned"] - right["base"]) / 30)


def _reader_contract(tmp_path: Path) -> tuple[Path, list[dict]]:
    from prereg.compiler.contracts import contract_schema

    fields = [
        {"name": "rowId", "path": ["id"], "type": "string"},
        {"name": "p", "path": ["scores", "model", "prob"], "type": "number", "minimum": 0},
    ]
    schema = contract_schema("t", "1", {"id": "obs", "format": "jsonl", "fields": fields})
    path = tmp_path / "obs.schema.json"
    path.write_text(json.dumps(schema))
    return path, fields


def test_parquet_struct_floats_read_as_written(tmp_path):
    """A float32 inside a struct column is read as its shortest decimal (0.1, not
    0.10000000149011612), as a top-level float32 column is; a NaN inside one is refused at its
    row and JSON path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from prereg.errors import UserError
    from prereg.tabular import read_contract_records

    schema, fields = _reader_contract(tmp_path)
    kind = pa.struct([("model", pa.struct([("prob", pa.float32())]))])
    table = pa.table(
        {
            "id": ["a", "b"],
            "scores": pa.array([{"model": {"prob": 0.1}}, {"model": {"prob": 0.7}}], kind),
        }
    )
    pq.write_table(table, tmp_path / "obs.parquet")
    rows = read_contract_records(tmp_path / "obs.parquet", schema, fields)
    assert rows == [{"rowId": "a", "p": 0.1}, {"rowId": "b", "p": 0.7}]
    table = pa.table(
        {
            "id": ["a", "b"],
            "scores": pa.array(
                [{"model": {"prob": 0.1}}, {"model": {"prob": float("nan")}}],
                pa.struct([("model", pa.struct([("prob", pa.float64())]))]),
            ),
        }
    )
    pq.write_table(table, tmp_path / "nan.parquet")
    with pytest.raises(UserError) as err:
        read_contract_records(tmp_path / "nan.parquet", schema, fields)
    assert err.value.problems[0].endswith(
        "row group 0, row 2: at /scores/model/prob: nan is not a finite number (JSON has no NaN"
        " or infinity; a missing value is null)"
    )


def test_generated_record_class_reads_each_field_by_its_name(nested, tmp_path):
    import importlib

    from prereg.compiler.project import find_project
    from prereg.study import load_generated

    module = load_generated(find_project(str(nested)), "inspect")
    sample = importlib.import_module(f"{module.__name__}.records").CONTRACTS["sample"]
    recs = _records()[:5]
    got = sample.read(_jsonl(tmp_path / "log.jsonl", recs))
    assert [(r.sample, r.epoch, r.model, r.verdict, r.answer) for r in got] == [
        (
            r["id"],
            r["epoch"],
            r["metadata"]["model"],
            r["scores"]["match"]["value"],
            r["scores"]["match"].get("answer"),
        )
        for r in recs
    ]


def test_a_one_key_path_names_a_csv_column(tmp_path):
    """A field at a one-key path reads the column of that key, from CSV as from JSONL (a
    column named otherwise than the field, here with a hyphen no field name may hold)."""
    from prereg.compiler.contracts import contract_schema
    from prereg.tabular import read_contract_records

    fields = [
        {"name": "rowId", "path": ["sample-id"], "type": "string"},
        {"name": "score", "type": "number", "nullable": True, "null_values": ["NA"]},
    ]
    schema = contract_schema("t", "1", {"id": "obs", "format": "jsonl", "fields": fields})
    path = tmp_path / "obs.schema.json"
    path.write_text(json.dumps(schema))
    (tmp_path / "obs.csv").write_text("sample-id,score\na,0.5\nb,NA\n")
    _jsonl(
        tmp_path / "obs.jsonl",
        [{"sample-id": "a", "score": 0.5}, {"sample-id": "b", "score": None}],
    )
    want = [{"rowId": "a", "score": 0.5}, {"rowId": "b", "score": None}]
    assert read_contract_records(tmp_path / "obs.csv", path, fields) == want
    assert read_contract_records(tmp_path / "obs.jsonl", path, fields) == want
