"""Observations as they come, one log per model: `score --observations` repeated, each file
read and checked as a log of its own and the files scored as one log in the order given; a
field the records leave out (`per_file: true`) takes the value each file is named with
(`--observations ft1=logs/ft1.jsonl`). The figures equal those of the same records in one
file; every problem is located at its own file's line."""

from __future__ import annotations

import json

import pytest

from prereg.cli import main
from prereg.reports.factorial import input_rows
from tests.conftest import FIXTURES

DUNNETT = FIXTURES / "newcomer" / "dunnett.yaml"
GRADES = {
    "base": [5.0, 6.2, 5.5, 6.4, 6.5, 4.3],
    "ft1": [5.2, 6.0, 5.1, 6.6, 6.2, 4.9],
    "ft2": [6.3, 7.4, 6.9, 7.7, 7.5, 5.6],
    "ft3": [5.3, 6.6, 6.2, 7.0, 7.0, 4.8],
}
MODEL = "- {name: model, factor: model, type: string, allowed: [base, ft1, ft2, ft3]}"


def _project(root, text):
    (root / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "studies" / "dunnett.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0


def _per_file_spec() -> str:
    text = DUNNETT.read_text()
    assert text.count(MODEL) == 1
    return text.replace(MODEL, MODEL[:-1] + ", per_file: true}")


def _logs(root) -> list[str]:
    """One JSONL log per model, without a model field: what a harness writes per run."""
    out = []
    for m, xs in GRADES.items():
        path = root / f"{m}.jsonl"
        path.write_text(
            "".join(json.dumps({"item": f"i{i}", "score": x}) + "\n" for i, x in enumerate(xs))
        )
        out += ["--observations", f"{m}={path}"]
    return out


def _score(root, *observations, code=0):
    out = root / "SCORE.json"
    args = ["--project", str(root), "dunnett", "score", *observations, "--out", str(out)]
    assert main([*args, "--quiet"]) == code
    return json.loads(out.read_text()) if code == 0 else None


def _one_file(root):
    """The same records in one CSV with the model column."""
    _project(root, DUNNETT.read_text())
    log = root / "grades.csv"
    lines = ["item,model,score"]
    lines += [f"i{i},{m},{x!r}" for m, xs in GRADES.items() for i, x in enumerate(xs)]
    log.write_text("\n".join(lines) + "\n")
    return _score(root, "--observations", str(log))


def _figures(doc):
    return {k: doc[k] for k in ("analyses", "verdicts", "rows", "metrics") if k in doc}


def test_one_log_per_model_scores_as_the_one_file(tmp_path):
    whole = _one_file(tmp_path / "one")
    root = tmp_path / "per-model"
    _project(root, _per_file_spec())
    doc = _score(root, *_logs(root))
    assert _figures(doc) == _figures(whole)
    assert doc["verdicts"] == {"some-better": "supported", "ft3-by-half": "supported"}
    files = doc["inputs"]["observations"]
    assert [f["file"] for f in files] == [f"{m}.jsonl" for m in GRADES]
    assert [f["perFile"] for f in files] == [{"model": m} for m in GRADES]
    assert all(f["sha256"].startswith("sha256:") and f["bytes"] > 0 for f in files)
    assert input_rows(doc["inputs"])[1][0] == "observations ft1: ft1.jsonl"
    from prereg import outputs

    schema = outputs.validator(outputs.schema_for("factorial", "score"))
    assert [e.message for e in schema.iter_errors(doc)] == []
    assert [e.message for e in schema.iter_errors(whole)] == []
    # the schema holds the list to its shape: a file without its digest is refused
    del files[0]["sha256"]
    assert list(schema.iter_errors(doc))
    # one file keeps its one input, as before
    assert whole["inputs"]["observations"]["file"] == "grades.csv"


def test_shards_of_one_log_in_two_formats(tmp_path):
    """Without a field given per file, several files are one log's parts (a CSV and a JSONL
    here): the figures are the one file's."""
    whole = _one_file(tmp_path / "one")
    root = tmp_path / "shards"
    _project(root, DUNNETT.read_text())
    first, second = root / "a.csv", root / "b.jsonl"
    rows = [(f"i{i}", m, x) for m, xs in GRADES.items() for i, x in enumerate(xs)]
    first.write_text("item,model,score\n" + "".join(f"{i},{m},{x!r}\n" for i, m, x in rows[:10]))
    second.write_text(
        "".join(json.dumps({"item": i, "model": m, "score": x}) + "\n" for i, m, x in rows[10:])
    )
    doc = _score(root, "--observations", str(first), "--observations", str(second))
    assert _figures(doc) == _figures(whole)
    assert [f["file"] for f in doc["inputs"]["observations"]] == ["a.csv", "b.jsonl"]


def test_a_repeated_key_across_shards_is_located_in_each_file(tmp_path, capsys):
    root = tmp_path / "shards"
    _project(root, DUNNETT.read_text())
    a, b = root / "a.jsonl", root / "b.jsonl"
    a.write_text('{"item": "i0", "model": "base", "score": 5.0}\n')
    b.write_text(
        '{"item": "i1", "model": "base", "score": 5.0}\n{"item": "i0", "model": "base", "score": 6.0}\n'
    )
    _score(root, "--observations", str(a), "--observations", str(b), code=2)
    err = capsys.readouterr().err
    assert f"{b}:2: duplicate record of item='i0', model='base' (first on line {a}:1)" in err
    assert not (root / "SCORE.json").exists()


@pytest.mark.parametrize(
    ("given", "words"),
    [
        (["base="], "write the file as model's value, =, and its path"),
        (["ft7=base.jsonl"], "'ft7' is not a value of model (per file): its values are base, ft1"),
        (["base=base.jsonl", "ft1=base.jsonl"], "base.jsonl is given twice"),
        (["base=base.jsonl", "ft1=missing.jsonl"], "missing.jsonl: cannot read"),
    ],
)
def test_files_named_wrongly_are_refused(tmp_path, capsys, monkeypatch, given, words):
    _project(tmp_path, _per_file_spec())
    _logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    obs = [x for g in given for x in ("--observations", g)]
    _score(tmp_path, *obs, code=2)
    assert words in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "SCORE.json").exists()


def test_a_record_writing_another_value_than_its_files_is_refused(tmp_path, capsys):
    """A record of a file named ft1 may write model ft1 (or leave it out); one that writes
    ft2 is refused at its line, with the file's value."""
    _project(tmp_path, _per_file_spec())
    obs = _logs(tmp_path)
    (tmp_path / "ft1.jsonl").write_text(
        '{"item": "i0", "model": "ft1", "score": 1.0}\n{"item": "i1", "model": "ft2", "score": 1.0}\n'
    )
    _score(tmp_path, *obs, code=2)
    err = " ".join(capsys.readouterr().err.split())
    assert "1 problem(s) with model (given per file)" in err
    assert "ft1.jsonl:2: model is 'ft2', and the file is given as model 'ft1'" in err
    assert "ft1.jsonl:1" not in err
    assert not (tmp_path / "SCORE.json").exists()


def test_a_combined_log_and_per_model_logs_score_alike(tmp_path, capsys):
    """A file named without a value writes the field in every record (one combined log, as
    simulate writes it); mixed with per-model files, the figures are the same. A record of
    such a file without the field is refused at its line."""
    root = tmp_path / "per-model"
    _project(root, _per_file_spec())
    per_model = _score(root, *_logs(root))
    combined = tmp_path / "combined"
    _project(combined, _per_file_spec())
    lines = [
        json.dumps({"item": f"i{i}", "model": m, "score": x}) + "\n"
        for m, xs in GRADES.items()
        for i, x in enumerate(xs)
    ]
    (combined / "ab.jsonl").write_text("".join(lines[:12]))
    (combined / "ft2.jsonl").write_text(
        "".join(
            json.dumps({"item": f"i{i}", "score": x}) + "\n" for i, x in enumerate(GRADES["ft2"])
        )
    )
    (combined / "ft3.jsonl").write_text("".join(lines[18:]))
    doc = _score(
        combined,
        "--observations",
        str(combined / "ab.jsonl"),
        "--observations",
        f"ft2={combined / 'ft2.jsonl'}",
        "--observations",
        str(combined / "ft3.jsonl"),
    )
    assert _figures(doc) == _figures(per_model)
    assert [f.get("perFile") for f in doc["inputs"]["observations"]] == [
        None,
        {"model": "ft2"},
        None,
    ]
    # one combined file alone is read as it comes
    (combined / "all.jsonl").write_text("".join(lines))
    (combined / "SCORE.json").unlink()
    (combined / "SCORE.md").unlink()
    assert _figures(_score(combined, "--observations", str(combined / "all.jsonl"))) == _figures(
        per_model
    )
    (combined / "SCORE.json").unlink()
    (combined / "SCORE.md").unlink()
    (combined / "gap.jsonl").write_text(lines[0] + '{"item": "i9", "score": 1.0}\n')
    _score(combined, "--observations", str(combined / "gap.jsonl"), code=2)
    err = " ".join(capsys.readouterr().err.split())
    assert "gap.jsonl:2: model is absent; write it in every record, or name the file" in err


def test_several_files_are_not_read_in_partitions(tmp_path, capsys):
    _project(tmp_path, _per_file_spec())
    _score(tmp_path, *_logs(tmp_path), "--workers", "2", code=2)
    assert "several files (or a file with a value given per file) are scored in one process" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda t: t.replace(
                "- {name: score, type: number, nullable: true}",
                "- {name: score, type: number, nullable: true, per_file: true}",
            ),
            "a field given per file is a string with its values listed",
        ),
        (
            lambda t: t.replace(
                "- {name: item, type: string, min_length: 1}",
                "- {name: item, type: string, min_length: 1}\n"
                '      - {name: shard, type: string, allowed: ["a,b", c], per_file: true}',
            ),
            "field 'shard': its value 'a,b' has a comma, and the values of the 2 fields given"
            " per file are written together, joined by commas",
        ),
        (
            lambda t: t.replace("per_file: true}", "per_file: true, nullable: true}"),
            "a field given per file is neither nullable nor optional",
        ),
        (
            lambda t: t.replace("role: observation", "role: other"),
            "per_file is for the observations of a factorial study",
        ),
    ],
)
def test_compile_refuses_a_field_given_per_file_it_cannot_read(tmp_path, capsys, edit, words):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "dunnett.yaml").write_text(edit(_per_file_spec()))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "per_file" in err and words in err
    assert not (tmp_path / "generated").exists()


def test_shards_with_an_item_manifest(tmp_path):
    """A study whose rows come from an item manifest reads its observations from two shards
    (each record names its row) as it reads them from one file."""
    import numpy as np

    from tests.conftest import ROOT

    (tmp_path / "spec" / "studies").mkdir(parents=True)
    # the study declares its own score command: its --observations says it repeats
    text = (ROOT / "tests" / "fixtures" / "factorial" / "paired-latency.yaml").read_text()
    old = "help: the runs}"
    assert text.count(old) == 1
    (tmp_path / "spec" / "studies" / "paired-latency.yaml").write_text(
        text.replace(old, "help: the runs, repeated: true}")
    )
    assert main(["--project", str(tmp_path), "compile"]) == 0
    items = tmp_path / "items.jsonl"
    assert main(["--project", str(tmp_path), "paired-latency", "items", "--out", str(items)]) == 0
    rng = np.random.default_rng(7)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    recs = [
        {
            "rowId": r["rowId"],
            "attempt": 1,
            "ok": True,
            "latency_ms": round(float(rng.normal(500, 50)), 3),
            "tokens": int(rng.integers(800, 1200)),
        }
        for r in rows
    ]
    lines = [json.dumps(r) + "\n" for r in recs]
    (tmp_path / "all.jsonl").write_text("".join(lines))
    (tmp_path / "a.jsonl").write_text("".join(lines[::2]))
    (tmp_path / "b.jsonl").write_text("".join(lines[1::2]))

    def score(out, *files):
        obs = [x for f in files for x in ("--observations", str(tmp_path / f))]
        args = ["--project", str(tmp_path), "paired-latency", "score", "--items", str(items)]
        assert main([*args, *obs, "--out", str(tmp_path / out), "--quiet"]) == 0
        return json.loads((tmp_path / out).read_text())

    whole, shards = score("one.json", "all.jsonl"), score("two.json", "a.jsonl", "b.jsonl")
    assert shards["contrasts"] == whole["contrasts"] and shards["verdicts"] == whole["verdicts"]
    assert shards["rows"] == whole["rows"]
    assert [f["file"] for f in shards["inputs"]["observations"]] == ["a.jsonl", "b.jsonl"]


def test_an_option_of_one_value_given_twice_is_refused(tmp_path, capsys):
    """A study's own score command whose --observations does not repeat: a second file is
    refused, not silently taken in place of the first."""
    from tests.conftest import ROOT

    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (ROOT / "tests" / "fixtures" / "factorial" / "paired-latency.yaml").read_text()
    (tmp_path / "spec" / "studies" / "paired-latency.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    args = ["--project", str(tmp_path), "paired-latency", "score", "--items", "i.jsonl"]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--observations", "a.jsonl", "--observations", "b.jsonl", "--out", "S.json"])
    assert exc.value.code == 2
    assert "argument --observations: given twice; it takes one value" in capsys.readouterr().err


def test_a_csv_with_the_column_given_per_file(tmp_path, capsys):
    """A CSV export that keeps the column: its file's value agrees, so it is read; a row with
    another value is refused at its line."""
    _project(tmp_path, _per_file_spec())
    obs = _logs(tmp_path)
    whole = _score(tmp_path, *obs)
    (tmp_path / "SCORE.json").unlink()
    (tmp_path / "SCORE.md").unlink()
    rows = "".join(f"i{i},ft1,{x!r}\n" for i, x in enumerate(GRADES["ft1"]))
    (tmp_path / "ft1.csv").write_text("item,model,score\n" + rows)
    obs[obs.index(f"ft1={tmp_path / 'ft1.jsonl'}")] = f"ft1={tmp_path / 'ft1.csv'}"
    assert _figures(_score(tmp_path, *obs)) == _figures(whole)
    (tmp_path / "SCORE.json").unlink()
    (tmp_path / "SCORE.md").unlink()
    (tmp_path / "ft1.csv").write_text("item,model,score\n" + rows.replace("i3,ft1", "i3,ft3"))
    _score(tmp_path, *obs, code=2)
    err = " ".join(capsys.readouterr().err.split())
    assert "ft1.csv:5: model is 'ft3', and the file is given as model 'ft1'" in err


# -- a .json file: one document holding an array of records --------------------------------


def _json_array(path, records, indent=2):
    path.write_text(json.dumps(records, indent=indent) + "\n")
    return path


def test_a_json_array_of_records_scores_as_jsonl(tmp_path):
    """pandas' to_json(orient="records") (here with indent=2, one key per line) read as it
    comes: the figures equal the JSONL log's, with --workers too (read in one process)."""
    whole = _one_file(tmp_path / "one")
    root = tmp_path / "json"
    _project(root, DUNNETT.read_text())
    recs = [
        {"item": f"i{i}", "model": m, "score": x}
        for m, xs in GRADES.items()
        for i, x in enumerate(xs)
    ]
    log = _json_array(root / "grades.json", recs)
    doc = _score(root, "--observations", str(log))
    assert _figures(doc) == _figures(whole)
    assert doc["inputs"]["observations"]["file"] == "grades.json"
    (root / "SCORE.json").unlink()
    (root / "SCORE.md").unlink()
    assert _figures(_score(root, "--observations", str(log), "--workers", "2")) == _figures(whole)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[]\n", "the array holds no records"),
        ("", "the file is empty"),
        # a .json file of one object per line is read as JSONL, as before
        ('{"item": "i0", "model": "bse", "score": 1}\n', "grades.json:1: at /model:"),
        (
            '[\n  {"item": "i0", "model": "base", "score": 1},\n  {"item": "i1", "model": "bse", "score": 1}\n]\n',
            "grades.json:3: at /model:",
        ),
        (
            '[\n  {"item": "i0", "model": "base", "score": 1},\n]\n',
            "grades.json:3: not valid JSON: Expecting value",
        ),
        (
            '[\n  {"item": "i0", "model": "base", "score": 1}\n  {"item": "i1"}\n]\n',
            "grades.json:3: not valid JSON: expected , or ] after a record",
        ),
        (
            '[\n  {"item": "i0", "item": "i1", "model": "base", "score": 1}\n]\n',
            "grades.json:2: duplicate key 'item'",
        ),
        (
            '[{"item": "i0", "model": "base", "score": 1}] x\n',
            "grades.json:1: not valid JSON: text after the array",
        ),
        ("[\n  1\n]\n", "grades.json:2: not a JSON object"),
    ],
)
def test_a_json_array_refused_at_its_line(tmp_path, capsys, text, words):
    _project(tmp_path, DUNNETT.read_text())
    log = tmp_path / "grades.json"
    log.write_text(text)
    _score(tmp_path, "--observations", str(log), code=2)
    assert words in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "SCORE.json").exists()


def test_a_float32_parquet_column_is_read_as_the_decimals_written(tmp_path):
    """A tool that writes its scores as float32 meant 6.2, not 6.199999809265137: each value
    is read as its shortest decimal, so the fine-tune's mean lands exactly 1/2 above the
    baseline's as in the CSV, and every figure is the CSV's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    whole = _one_file(tmp_path / "one")
    root = tmp_path / "f32"
    _project(root, DUNNETT.read_text())
    rows = [(f"i{i}", m, x) for m, xs in GRADES.items() for i, x in enumerate(xs)]
    log = root / "grades.parquet"
    pq.write_table(
        pa.table(
            {
                "item": [r[0] for r in rows],
                "model": [r[1] for r in rows],
                "score": pa.array([r[2] for r in rows], pa.float32()),
            }
        ),
        log,
    )
    assert float(pa.array([6.2], pa.float32())[0].as_py()) != 6.2  # what a cast would read
    doc = _score(root, "--observations", str(log))
    assert _figures(doc) == _figures(whole)
    assert doc["verdicts"]["ft3-by-half"] == "supported"


SHARD = "- {name: shard, type: string, allowed: [first, second], per_file: true}"


def _two_fields_spec() -> str:
    text = _per_file_spec()
    model = MODEL[:-1] + ", per_file: true}"
    assert text.count(model) == 1
    return text.replace(model, model + "\n      " + SHARD)


def _shards(root) -> list[str]:
    """Two logs per model (its first three items, then the rest), neither writing the model
    or the shard: the harness's folder names them (runs/ft1/second.jsonl)."""
    out = []
    for m, xs in GRADES.items():
        for shard, at in (("first", range(3)), ("second", range(3, 6))):
            path = root / "runs" / m / f"{shard}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "".join(json.dumps({"item": f"i{i}", "score": xs[i]}) + "\n" for i in at)
            )
            out += ["--observations", f"{m},{shard}={path}"]
    return out


def test_two_fields_given_per_file_score_as_the_one_file(tmp_path):
    """One log per model and shard: each file named with both values, in the contract's order,
    joined by a comma; the figures are the one file's and SCORE.json lists both values."""
    whole = _one_file(tmp_path / "one")
    root = tmp_path / "two"
    _project(root, _two_fields_spec())
    doc = _score(root, *_shards(root))
    assert _figures(doc) == _figures(whole)
    files = doc["inputs"]["observations"]
    assert len(files) == 8
    assert files[3]["perFile"] == {"model": "ft1", "shard": "second"}
    from prereg import outputs

    schema = outputs.validator(outputs.schema_for("factorial", "score"))
    assert [e.message for e in schema.iter_errors(doc)] == []


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("ft1=", "gives 1 value(s) for the 2 fields given per file (model,shard, in that order"),
        ("ft1,first,x=", "gives 3 value(s) for the 2 fields given per file"),
        ("ft1,third=", "'third' is not a value of shard (per file): its values are first, second"),
        ("ft9,first=", "'ft9' is not a value of model (per file)"),
    ],
)
def test_two_fields_named_wrongly_are_refused(tmp_path, capsys, given, words):
    _project(tmp_path, _two_fields_spec())
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"item": "i0", "score": 5.0}) + "\n")
    _score(tmp_path, "--observations", f"{given}{log}", code=2)
    err = " ".join(capsys.readouterr().err.split())
    assert words in err
    assert not (tmp_path / "SCORE.json").exists()


def test_a_record_writing_another_value_of_the_second_field_is_refused(tmp_path, capsys):
    _project(tmp_path, _two_fields_spec())
    log = tmp_path / "log.jsonl"
    rows = [{"item": "i0", "score": 5.0}, {"item": "i1", "shard": "first", "score": 6.0}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _score(tmp_path, "--observations", f"ft1,second={log}", code=2)
    err = capsys.readouterr().err
    assert "problem(s) with model, shard (given per file)" in err
    assert f"{log}:2: shard is 'first', and the file is given as shard 'second'" in err
    assert f"(--observations ft1,second={log})" in err
