"""`prereg check` says where each study's sizing claims stand: it reads the newest diagnosis of
the study's design as it is now (a DIAGNOSE.json anywhere in the project, or the files
--diagnosis names), warns for each failing claim and for a diagnosis of an earlier design,
notes a study never diagnosed; exit 0 unless --strict.  Run through the CLI on the `prereg
init` starter, whose power claim fails at its 100 rows a cell (P = 0.127 exactly: see
tests/cli/test_init.py) and holds at 400 (0.818)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.compiler.load import load_yaml

STUDY = "my-study"
NOTE = (
    "note: my-study: 3 sizing claims not checked: no diagnosis in the project; run `prereg"
    " my-study diagnose --simulations N --seed S --out DIAGNOSE.json`"
)


@pytest.fixture
def starter(tmp_path, monkeypatch, capsys) -> Path:
    monkeypatch.chdir(tmp_path)
    assert main(["init", STUDY]) == 0
    assert main(["compile"]) == 0
    capsys.readouterr()
    return tmp_path


def check(capsys, *extra: str) -> tuple[int, list[str]]:
    capsys.readouterr()  # what earlier commands printed
    code = main(["check", *extra])
    return code, capsys.readouterr().out.splitlines()


def diagnose(out: str, seed: int = 1) -> dict:
    argv = [STUDY, "diagnose", "--simulations", "200", "--seed", str(seed), "--out", out]
    assert main(argv) == 0
    return json.loads(Path(out).read_text())


def edit(*pairs: tuple[str, str]) -> None:
    spec = Path("spec/studies/my-study.yaml")
    text = spec.read_text()
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec.write_text(text)
    assert main(["compile"]) == 0


ROWS_400 = [
    ("rows: 100, factors", "rows: 400, factors"),
    ("{scope: all, rows: 400}", "{scope: all, rows: 1600}"),
]
PROSE = ("  What the study asks, in a few sentences.", "  Whether the treatment helps.")


def test_a_study_never_diagnosed_gets_a_note_and_strict_fails(starter, capsys):
    assert check(capsys) == (0, ["generated/ matches the specs (7 files)", NOTE])
    code, lines = check(capsys, "--strict")
    assert code == 1
    assert lines[-1] == "check failed (--strict): sizing claims not shown to hold for my-study"
    code, lines = check(capsys, "--json")
    doc = json.loads("\n".join(lines))
    assert code == 0 and doc["ok"] is True
    assert doc["claims"] == [
        {"study": STUDY, "claims": 3, "state": "none", "diagnosis": None, "failing": []}
    ]


def test_a_failing_claim_is_named_with_its_figure_and_diagnosis(starter, capsys):
    doc = diagnose("runs/DIAGNOSE.json")
    power = next(c for c in doc["claims"] if c["id"] == "h1-power")
    assert not power["holds"]
    code, lines = check(capsys)
    assert code == 0
    assert lines == [
        "generated/ matches the specs (7 files)",
        "warning: my-study: sizing claim h1-power FAILS: P(h1 supported | scenario `effect`)"
        f" ≥ 0.8: {power['figure']:.4g} ± {power['mcSe']:.2g} (simulation) in"
        " runs/DIAGNOSE.json",
    ]
    code, lines = check(capsys, "--strict", "--json")
    got = json.loads("\n".join(lines))
    assert code == 1 and got["ok"] is False
    assert got["claims"][0]["state"] == "fails" and got["claims"][0]["failing"] == ["h1-power"]


def test_prose_keeps_a_diagnosis_current_and_a_design_change_makes_it_stale(starter, capsys):
    diagnose("a/DIAGNOSE.json")
    edit(PROSE)
    assert check(capsys)[1][1].startswith("warning: my-study: sizing claim h1-power FAILS")
    # 400 rows a cell: a registered change, so the diagnosis of 100 rows is of an earlier design
    edit(*ROWS_400)
    code, lines = check(capsys)
    assert code == 0
    assert lines[1] == (
        "warning: my-study: 3 sizing claims not checked: no diagnosis of the design as it is now"
        " (the newest, a/DIAGNOSE.json, diagnosed an earlier version); run `prereg my-study"
        " diagnose --simulations N --seed S --out DIAGNOSE.json`"
    )
    assert check(capsys, "--strict")[0] == 1
    # a diagnosis of the new design, written before the old one's file was touched again:
    # the current one is read, however new the stale one is
    doc = diagnose("b/DIAGNOSE.json")
    assert all(c["holds"] for c in doc["claims"])
    os.utime("a/DIAGNOSE.json")
    assert check(capsys) == (
        0,
        [
            "generated/ matches the specs (7 files)",
            "my-study: every sizing claim holds (3; b/DIAGNOSE.json)",
        ],
    )
    assert check(capsys, "--strict")[0] == 0


def test_the_newest_current_diagnosis_is_read(starter, capsys):
    diagnose("old-diagnose.json")
    edit(*ROWS_400)
    diagnose("x/DIAGNOSE.json", seed=1)
    diagnose("y/DIAGNOSE.json", seed=2)
    os.utime("x/DIAGNOSE.json", (2_000_000_000, 2_000_000_000))
    os.utime("y/DIAGNOSE.json", (1_000_000_000, 1_000_000_000))
    assert check(capsys)[1][1].endswith("(3; x/DIAGNOSE.json)")
    os.utime("y/DIAGNOSE.json", (2_100_000_000, 2_100_000_000))
    # seed 2 finds 0.79 ± 0.029 against the exact 0.818: a failure within Monte Carlo error
    line = check(capsys)[1][1]
    assert line.startswith("warning: my-study: sizing claim h1-power FAILS")
    assert line.endswith(" in y/DIAGNOSE.json (within Monte Carlo error)")


def test_a_document_without_a_design_digest_is_current_by_its_spec_digest(starter, capsys):
    doc = diagnose("D.json")
    del doc["designDigest"]
    Path("legacy-DIAGNOSE.json").write_text(json.dumps(doc))
    Path("D.json").unlink()
    assert "in legacy-DIAGNOSE.json" in check(capsys)[1][1]
    edit(PROSE)
    assert "not checked: no diagnosis of the design as it is now" in check(capsys)[1][1]


def test_diagnosis_names_the_files_to_read(starter, capsys):
    diagnose("DIAGNOSE.json")
    edit(*ROWS_400)
    diagnose("elsewhere/run.json")  # not found by the search: only by name
    assert "not checked: no diagnosis of the design as it is now" in check(capsys)[1][1]
    code, lines = check(capsys, "--diagnosis", "elsewhere/run.json", "--strict")
    assert code == 0 and lines[1] == "my-study: every sizing claim holds (3; elsewhere/run.json)"
    Path("other.json").write_text('{"schemaVersion": "prereg-score/v1"}')
    capsys.readouterr()
    assert main(["check", "--diagnosis", "other.json"]) == 2
    err = capsys.readouterr().err
    assert "--diagnosis: other.json: not a diagnose document (schemaVersion is not" in err
    bad = json.loads(Path("elsewhere/run.json").read_text())
    Path("bad-diagnose.json").write_text(json.dumps({**bad, "claims": {"h1-power": 1}}))
    assert main(["check", "--diagnosis", "bad-diagnose.json"]) == 2
    err = capsys.readouterr().err
    assert "--diagnosis: bad-diagnose.json: at /study or /claims: not as diagnose writes" in err
    # found by the search, a malformed document is passed over
    assert check(capsys)[1][1].startswith("warning: my-study: 3 sizing claims not checked")
    assert main(["check", "--diagnosis", "missing.json"]) == 2
    assert "--diagnosis missing.json: no such file" in capsys.readouterr().err
    # a named file of another study: this one has none there
    doc = json.loads(Path("elsewhere/run.json").read_text())
    Path("elsewhere/other-study.json").write_text(json.dumps({**doc, "study": "another"}))
    code, lines = check(capsys, "--diagnosis", "elsewhere/other-study.json")
    assert code == 0 and lines[1].startswith(
        "note: my-study: 3 sizing claims not checked: no diagnosis among the --diagnosis files;"
    )


def test_studies_without_claims_say_nothing(starter, capsys):
    spec = Path("spec/studies/my-study.yaml")
    text = spec.read_text()
    start, end = text.index("claims:\n"), text.index("hypotheses:\n")
    spec.write_text(text[:start] + text[end:])
    assert main(["compile"]) == 0
    capsys.readouterr()
    assert check(capsys, "--strict") == (0, ["generated/ matches the specs (7 files)"])


REGISTRATION = """registration:
  authors: []
  source_title: A test.
  registration_date: Not registered.
  identifier: Not registered.
  data_status: No data.
  research_question: Does the treatment change accuracy?
  rationale: A test.
  sampling_plan: 100 rows a cell.
  stopping_rule: Every row attempted.
  exclusions: None.
  missing_data: Failed attempts are unobserved.
  confirmatory: h1.
  exploratory: None.
  blinding: Not stated.
  deviations: Amendments.
"""


def test_sealing_a_design_whose_claim_fails_says_so(starter, capsys):
    diagnose("DIAGNOSE.json")
    spec = Path("spec/studies/my-study.yaml")
    spec.write_text(spec.read_text() + REGISTRATION)
    assert main(["compile"]) == 0
    capsys.readouterr()
    # the registration record is not the design: the diagnosis is still current, and seals
    assert main(["seal", STUDY]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("registered my-study: status set to registered")
    assert captured.err.startswith(
        "warning: my-study: sizing claim h1-power FAILS: P(h1 supported | scenario `effect`)"
    )
    assert captured.err.endswith(" in DIAGNOSE.json\n") and captured.err.count("\n") == 1


def test_the_design_digest_leaves_out_prose_records_and_commands(starter):
    from prereg.diagnose.standing import design_digest

    spec = load_yaml(Path("spec/studies/my-study.yaml")).data
    same = [
        {**spec, "description": "Other words.", "version": "0.2", "status": "registered"},
        {**spec, "registration": {"research_question": "Why?", "identifier": "osf.io/x"}},
        {**spec, "commands": [{"id": "diagnose", "summary": "another summary"}]},
        {**spec, "amendments": [{"version": "0.2", "paths": ["/cells"]}]},
    ]
    assert {design_digest(s) for s in same} == {design_digest(spec)}
    cells = [dict(c) for c in spec["crossings"]]
    cells[0]["rows"] = 400
    claims = [dict(c) for c in spec["claims"]]
    claims[-1]["value"] = 0.1
    scenarios = [dict(s) for s in spec["scenarios"]]
    scenarios[0]["failed_attempt_rate"] = 0.05
    other = [{**spec, "crossings": cells}, {**spec, "claims": claims},
             {**spec, "scenarios": scenarios}]  # fmt: skip
    digests = {design_digest(s) for s in other}
    assert len(digests) == 3 and design_digest(spec) not in digests
