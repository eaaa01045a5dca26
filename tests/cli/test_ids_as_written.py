"""Ids as people write them: capitals, digits and dots (``My-Study``, ``GPT-4o``, ``v1.2``) in
study, factor and level ids; generated code names them by a deterministic Python name, and two
ids with one Python name are refused."""

from __future__ import annotations

import json

import pytest

from prereg.cli import main
from prereg.compiler.project import python_name


@pytest.mark.parametrize(
    "given, want",
    [
        ("My-Study", "my_study"),
        ("GPT-4o", "gpt_4o"),
        ("v1.2", "v1_2"),
        ("d17-multifact", "d17_multifact"),  # unchanged for the ids that were allowed before
        ("16384", "v_16384"),  # a digit cannot start a Python name
    ],
)
def test_python_names(given, want):
    assert python_name(given) == want


MODEL = [
    (
        "  - id: system\n    title: System under test\n    levels:\n"
        "      - {id: system-a, code: a}\n      - {id: system-b, code: b}",
        "  - id: Model\n    title: System under test\n    levels:\n"
        "      - {id: GPT-4o, code: g}\n      - {id: v1.2, code: v}",
    ),
    ("{system}-{condition}", "{Model}-{condition}"),
    ("factors: [system, condition]", "factors: [Model, condition]"),
    (
        "{name: system, factor: system, type: string, allowed: [system-a, system-b]}",
        "{name: model, factor: Model, type: string, allowed: [GPT-4o, v1.2]}",
    ),
    ("[system-a, system-b]", "[GPT-4o, v1.2]"),
    ("factor: system,", "factor: Model,"),
]


def _edit(path, edits):
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)


def test_init_my_study_with_capital_and_dotted_levels_compiles_and_runs(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "My-Study"]) == 0
    spec = tmp_path / "spec" / "studies" / "My-Study.yaml"
    _edit(spec, MODEL)
    assert main(["compile"]) == 0, capsys.readouterr().err
    assert (tmp_path / "generated" / "my_study" / "rules.py").is_file()
    items, obs, out = (tmp_path / n for n in ("i.jsonl", "o.jsonl", "S.json"))
    assert main(["My-Study", "items", "--out", str(items)]) == 0
    manifest = [json.loads(x) for x in items.read_text().splitlines()]
    assert {r["model"] for r in manifest} == {"GPT-4o", "v1.2"}
    argv = ["My-Study", "simulate", "--items", str(items), "--scenario", "effect", "--seed", "1"]
    assert main([*argv, "--out", str(obs)]) == 0
    argv = ["My-Study", "score", "--items", str(items), "--observations", str(obs)]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    score = json.loads(out.read_text())
    assert sorted(c["id"] for c in score["contrasts"]) == ["treatment-GPT-4o", "treatment-v1.2"]
    assert {c["levels"]["Model"] for c in score["cells"]} == {"GPT-4o", "v1.2"}


def test_two_studies_with_one_python_name_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "My-Study"]) == 0
    # init refuses the second id of the package (test_init_hostile.py), so it is written by hand
    assert main(["init", "my.study"]) == 2
    studies = tmp_path / "spec" / "studies"
    text = (studies / "My-Study.yaml").read_text(encoding="utf-8")
    assert text.count("id: My-Study\n") == 1
    (studies / "my.study.yaml").write_text(text.replace("id: My-Study\n", "id: my.study\n"))
    capsys.readouterr()
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert "my_study" in err and "My-Study" in err and "my.study" in err
    assert not (tmp_path / "generated" / "my_study").exists()


def test_two_factors_with_one_python_name_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "clash"]) == 0
    spec = tmp_path / "spec" / "studies" / "clash.yaml"
    _edit(spec, [("  - id: condition\n", "  - id: System\n")])
    line = spec.read_text().splitlines().index("  - id: System") + 1
    capsys.readouterr()
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert f"clash.yaml:{line}" in err
    assert "factor id 'System' clashes with 'system' in generated code" in err
