"""Ids that are Python keywords, or names the generated modules use themselves, are accepted
as written: generated code names them by a safe identifier (a final ``_``), the outputs keep
the id. Two ids whose generated names meet are refused, naming both and the name."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from prereg.cli import main
from prereg.compiler.project import class_name, constant_name, function_name


def _edit(path, edits):
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)


def _study(tmp_path, monkeypatch, edits):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "kw"]) == 0
    spec = tmp_path / "spec" / "studies" / "kw.yaml"
    _edit(spec, edits)
    return spec


def _score(tmp_path, capsys):
    items, obs, out = (tmp_path / n for n in ("i.jsonl", "o.jsonl", "S.json"))
    assert main(["kw", "items", "--out", str(items)]) == 0
    argv = ["kw", "simulate", "--items", str(items), "--scenario", "effect", "--seed", "1"]
    assert main([*argv, "--out", str(obs)]) == 0
    argv = ["kw", "score", "--items", str(items), "--observations", str(obs)]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    return json.loads(out.read_text())


@pytest.mark.parametrize("given, want", [("pass", "pass_"), ("decide", "decide_"), ("h1", "h1")])
def test_function_names(given, want):
    assert function_name(given) == want


def test_class_and_constant_names():
    assert class_name("none") == "None_"
    assert class_name("record") == "Record_"
    assert class_name("obs-x") == class_name("obsX") == "ObsX"
    assert constant_name("budget") == "BUDGET_"
    assert constant_name("pass") == "PASS"


@pytest.mark.parametrize("metric, hypothesis", [("pass", "class"), ("lambda", "decide")])
def test_keyword_metric_and_hypothesis_compile_score_and_keep_their_ids(
    tmp_path, monkeypatch, capsys, metric, hypothesis
):
    spec = _study(tmp_path, monkeypatch, [])
    text = spec.read_text()
    text = text.replace("id: accuracy\n", f"id: {metric}\n")
    text = text.replace("metric: accuracy", f"metric: {metric}")
    text = text.replace("  - id: h1\n", f"  - id: {hypothesis}\n")
    text = text.replace("hypothesis: h1", f"hypothesis: {hypothesis}")
    spec.write_text(text)
    assert main(["compile"]) == 0, capsys.readouterr().err
    rules = (tmp_path / "generated" / "kw" / "rules.py").read_text()
    assert f"def {hypothesis}_(results)" in rules
    score = _score(tmp_path, capsys)
    assert list(score["verdicts"]) == [hypothesis]
    assert {c["metric"] for c in score["contrasts"]} == {metric}
    assert score["verdicts"][hypothesis] in ("supported", "not-supported")


def test_constant_named_like_the_engine_configuration_keeps_its_value(
    tmp_path, monkeypatch, capsys
):
    _study(
        tmp_path,
        monkeypatch,
        [
            (
                "constants:\n",
                "constants:\n  - {id: budget, value: 5}\n  - {id: engine-config, value: 7}\n",
            )
        ],
    )
    assert main(["compile"]) == 0, capsys.readouterr().err
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "generated" or m.startswith("generated.")]:
        monkeypatch.delitem(sys.modules, name)
    constants = importlib.import_module("generated.kw.constants")
    assert constants.ENGINE_CONFIG["constants"]["budget"] == 5
    assert constants.ENGINE_CONFIG["constants"]["engine-config"] == 7
    assert constants.BUDGET_ == 5 and constants.ENGINE_CONFIG_ == 7


EXTRA = (
    "  - id: observation\n",
    "  - id: {a}\n    format: jsonl\n    role: extra1\n    fields:\n"
    "      - {{name: q, type: string}}\n"
    "  - id: {b}\n    format: jsonl\n    role: extra2\n    fields:\n"
    "      - {{name: z, type: integer}}\n"
    "  - id: observation\n",
)


def test_record_contracts_named_none_and_record_compile(tmp_path, monkeypatch, capsys):
    _study(tmp_path, monkeypatch, [(EXTRA[0], EXTRA[1].format(a="none", b="record"))])
    assert main(["compile"]) == 0, capsys.readouterr().err
    records = (tmp_path / "generated" / "kw" / "records.py").read_text()
    assert "class None_(Record):" in records and "class Record_(Record):" in records
    assert "class Observation(Record):" in records  # still the runtime's base class
    _score(tmp_path, capsys)


def test_record_contracts_with_one_class_name_are_refused(tmp_path, monkeypatch, capsys):
    _study(tmp_path, monkeypatch, [(EXTRA[0], EXTRA[1].format(a="obs-x", b="obsX"))])
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert "at /record_contracts/2/id: record contract id 'obsX' clashes with 'obs-x'" in err
    assert "(both are the class ObsX)" in err
    assert not (tmp_path / "generated" / "kw" / "records.py").exists()


def test_a_final_underscore_is_no_id_so_the_safe_names_cannot_meet_one(
    tmp_path, monkeypatch, capsys
):
    """``budget`` is the constant BUDGET_; an id cannot end in ``_`` (the Identifier pattern),
    so no other constant is named BUDGET_."""
    edit = ("constants:\n", "constants:\n  - {id: budget, value: 5}\n  - {id: budget_, value: 6}\n")
    _study(tmp_path, monkeypatch, [edit])
    assert main(["compile"]) == 2
    assert 'at /constants/1/id: "budget_" does not match the pattern' in capsys.readouterr().err
