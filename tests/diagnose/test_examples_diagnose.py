"""Every shipped study that registers scenarios diagnoses under them, through the CLI: each
example under examples/, the `prereg init` starter and the project's own d17.  A few simulated
studies each (the figures are tested elsewhere): the run succeeds, the document matches the
shipped schema, has one condition per registered scenario and effect size, and checks every
registered claim.  Every diagnose command offers --vary.

An example study without scenarios cannot be diagnosed (its engine offers no diagnose
command); only the unit studies are allowed to be such, until #33's unit data-generating
processes exist: a new example without scenarios fails here, and a unit study given scenarios
must diagnose."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from importlib import resources
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.compiler.load import load_yaml
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
# studies the language lets go without scenarios today: units have no data-generating process yet
WITHOUT_SCENARIOS = {"units/cluster-arms", "units/raters-units", "units/repo-pairs",
                     "units/samples-units"}  # fmt: skip
# simulated studies per scenario and effect: the row path costs ~0.15 s a study for the
# calibration and latency examples, the counts path ~1 ms
SIMULATIONS = {"calibration-cells": 3, "latency-cost": 4, "paired-verifiers": 10}


def example_studies() -> list[tuple[str, str]]:
    return sorted((p.parents[2].name, p.stem) for p in EXAMPLES.glob("*/spec/studies/*.yaml"))


def spec_of(example: str, study: str) -> dict:
    return load_yaml(EXAMPLES / example / "spec" / "studies" / f"{study}.yaml").data


def expected_conditions(spec: dict) -> list[tuple[str, float | None]]:
    out = []
    for s in spec.get("scenarios") or ():
        effects = s.get("effects")
        out += [(s["id"], float(e)) for e in effects] if effects else [(s["id"], None)]
    return out


def diagnose(project: Path, study: str, out: Path, simulations: int) -> dict:
    argv = ["--project", str(project), study, "diagnose", "--simulations", str(simulations),
            "--seed", "1", "--out", str(out), "--quiet"]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def check_document(doc: dict, spec: dict, simulations: int) -> None:
    import jsonschema

    schema = json.loads(
        resources.files("prereg.diagnose").joinpath("diagnose.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["study"] == spec["id"] and doc["simulations"] == simulations
    got = [(c["scenario"], c["effect"]) for c in doc["conditions"]]
    # every registered scenario at every effect size, first; a claim may add its own condition
    assert got[: len(expected_conditions(spec))] == expected_conditions(spec)
    assert [c["id"] for c in doc["claims"]] == [c["id"] for c in spec.get("claims") or ()]
    for c in doc["conditions"]:
        assert all(h["verdicts"] for h in c["hypotheses"])
        for h in c["hypotheses"]:
            assert sum(v["count"] for v in h["verdicts"]) == simulations


def test_every_example_study_is_listed_or_has_scenarios():
    studies = example_studies()
    assert len(studies) >= 9
    without = {f"{e}/{s}" for e, s in studies if not spec_of(e, s).get("scenarios")}
    assert without <= WITHOUT_SCENARIOS


@pytest.mark.parametrize(
    "example, study",
    [(e, s) for e, s in example_studies() if spec_of(e, s).get("scenarios")],
)
def test_each_example_diagnoses_under_its_registered_scenarios(tmp_path, example, study):
    project = tmp_path / example
    shutil.copytree(EXAMPLES / example, project)
    (project / "generated").mkdir(exist_ok=True)
    shutil.copy(ROOT / "generated" / "prereg.schema.json", project / "generated")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--project", str(project), "compile"]) == 0
    n = SIMULATIONS.get(example, 20)
    doc = diagnose(project, study, tmp_path / "DIAGNOSE.json", n)
    check_document(doc, spec_of(example, study), n)


def test_the_starter_diagnoses_under_its_registered_scenarios(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["init", "my-study"]) == 0
        assert main(["compile"]) == 0
    spec = load_yaml(tmp_path / "spec" / "studies" / "my-study.yaml").data
    doc = diagnose(tmp_path, "my-study", tmp_path / "DIAGNOSE.json", 20)
    check_document(doc, spec, 20)


def test_d17_diagnoses_under_its_registered_scenarios(tmp_path):
    spec = load_yaml(ROOT / "spec" / "studies" / "d17-multifact.yaml").data
    doc = diagnose(ROOT, "d17-multifact", tmp_path / "DIAGNOSE.json", 4)
    check_document(doc, spec, 4)


def test_every_diagnose_command_offers_vary(capsys):
    from prereg.compiler.build import load_all
    from prereg.compiler.project import Project

    with_diagnose = [s.id for s in load_all(Project(ROOT)) if any(
        c["id"] == "diagnose" for c in s.commands)]  # fmt: skip
    assert "d17-multifact" in with_diagnose
    for study in with_diagnose:
        capsys.readouterr()
        with pytest.raises(SystemExit):
            main([study, "diagnose", "--help"])
        text = capsys.readouterr().out
        assert "--vary VARY" in text and "--target" in text, study


def test_a_study_without_diagnose_is_told_why(tmp_path, capsys, monkeypatch):
    # the starter without its scenarios and claims: a factorial study with no diagnose
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["init", "bare"]) == 0
    spec = tmp_path / "spec" / "studies" / "bare.yaml"
    text = spec.read_text()
    for start, end in (("claims:\n", "hypotheses:\n"), ("scenarios:\n", "constants:\n")):
        text = text[: text.index(start)] + text[text.index(end) :]
    spec.write_text(text)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["compile"]) == 0
    capsys.readouterr()
    assert main(["bare", "diagnose", "--seed", "1"]) == 2
    assert capsys.readouterr().err == (
        "error: spec/studies/bare.yaml: study 'bare' has no diagnose command: the"
        " factorial engine diagnoses a study that registers scenarios (`scenarios:`, the"
        " respondents to simulate) or sizing claims (`claims:`), and this spec has neither;"
        " its commands: items, score\n"
    )
    assert main(["bare", "simulate"]) == 2
    assert "has no simulate command: the factorial engine simulates" in capsys.readouterr().err
    # a spec that renamed its diagnose command is not told it has none: argparse lists them
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["init", "renamed"]) == 0
    spec = tmp_path / "spec" / "studies" / "renamed.yaml"
    spec.write_text(spec.read_text() + "commands:\n  - {id: run-diagnose, renames: diagnose}\n")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["compile", "renamed"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["renamed", "diagnose"])
    err = capsys.readouterr().err
    assert "invalid choice: 'diagnose'" in err and "run-diagnose" in err
    monkeypatch.chdir(ROOT)
    # the multicorrect engine offers diagnose beside its `diagnostic`: its options are asked for
    with pytest.raises(SystemExit) as exc:
        main(["jev-multicorrect", "diagnose", "--out", str(tmp_path / "x")])
    assert exc.value.code == 2
    assert "--simulations" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    # an unknown command is still argparse's, with its suggestion
    with pytest.raises(SystemExit) as exc:
        main(["jev-multicorrect", "diagnosti"])
    assert exc.value.code == 2
    assert "did you mean 'diagnostic'?" in capsys.readouterr().err
