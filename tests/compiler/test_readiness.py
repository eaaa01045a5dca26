"""What keeps a study from being registered: compile warns, seal refuses (with the location
and the rule), a ready study seals."""

from __future__ import annotations

import shutil

from prereg.cli import main
from tests.conftest import ROOT


def without_record(text: str) -> str:
    return text[: text.index("\nregistration:\n") + 1]


def project(tmp_path, edit):
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    spec = tmp_path / "spec" / "studies" / "answer-position.yaml"
    spec.write_text(edit(spec.read_text()))
    return tmp_path


def registered(text: str) -> str:
    return text.replace("status: draft", "status: registered")


def test_a_registered_study_without_its_record_is_warned_and_not_sealed(tmp_path, capsys):
    root = project(tmp_path, lambda t: registered(without_record(t)))
    assert main(["--project", str(root), "compile"]) == 0
    err = capsys.readouterr().err
    assert "warning: spec/studies/answer-position.yaml:" in err
    assert "a registered study needs its registration record" in err
    assert main(["--project", str(root), "seal", "answer-position"]) == 2
    err = capsys.readouterr().err
    assert "not ready to seal" in err and "needs its registration record" in err
    assert not list((root / "spec" / "studies").glob("*.seal.json"))


def test_a_missing_slot_and_a_hypothesis_without_a_rule(tmp_path, capsys):
    def edit(text):
        text = registered(text)
        text = text.replace("  blinding: Not stated.\n", "")
        return text.replace("    reported_only: true\n", "")

    root = project(tmp_path, edit)
    assert main(["--project", str(root), "seal", "answer-position"]) == 2
    err = capsys.readouterr().err
    assert "registration lacks blinding" in err
    # the estimates-only hypothesis has no rule: it is refused until marked reported_only
    assert "hypothesis 'accuracy-a' has no rule and no verdicts" in err
    assert not list((root / "spec" / "studies").glob("*.seal.json"))


def test_a_draft_not_ready_is_refused_with_every_problem_at_once_and_nothing_changed(
    tmp_path, capsys
):
    def edit(text):
        text = without_record(text)  # a draft without its record, as prereg init writes one
        return text.replace("    reported_only: true\n", "")

    root = project(tmp_path, edit)
    assert main(["--project", str(root), "compile"]) == 0
    spec = root / "spec" / "studies" / "answer-position.yaml"
    before = spec.read_bytes(), sorted(p.read_bytes() for p in (root / "generated").rglob("*.py"))
    capsys.readouterr()
    assert main(["--project", str(root), "seal", "answer-position"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "error: spec/studies/answer-position.yaml: not ready to seal (2 problem(s)); nothing was changed"
    )
    # both problems in one round: the record (naming every slot it needs) and the rule
    assert "needs its registration record (registration: with authors, source_title," in err[1]
    assert "hypothesis 'accuracy-a' has no rule and no verdicts" in err[2]
    assert err[3] == (
        "  next: fix each in spec/studies/answer-position.yaml, then run `prereg seal answer-position` again"
    )
    assert len(err) == 4
    assert (
        spec.read_bytes(),
        sorted(p.read_bytes() for p in (root / "generated").rglob("*.py")),
    ) == before
    assert not list((root / "spec" / "studies").glob("*.seal.json"))


def test_a_ready_study_seals(tmp_path, capsys):
    root = project(tmp_path, registered)  # the example carries its record
    assert main(["--project", str(root), "compile"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["--project", str(root), "seal", "answer-position"]) == 0


def test_contrast_arms_selecting_no_cell_or_the_same_rows_are_warned(tmp_path, capsys):
    def edit(text):
        text = text.replace(
            "        b: {where: [{factor: split, levels: [test]}, {factor: model, levels: [model-a]}]}",
            "        b: {where: [{factor: split, levels: [test]}, {factor: model, levels: [model-b]}]}",
        )
        # the tuning cells leave position d out, so a b arm of tuning rows at d selects nothing
        text = text.replace(
            "split: tuning, rows: 10, factors: [model, position, format]}",
            "split: tuning, rows: 10, factors: [model, position, format],"
            " subset: [{factor: position, levels: [a, b, c]}]}",
        ).replace("{scope: tuning, rows: 160}", "{scope: tuning, rows: 120}")
        return text.replace(
            '{factor: format, levels: ["{format}"]}, {factor: position, levels: [d]}]}',
            '{factor: format, levels: ["{format}"]}, {factor: position, levels: [d]}, {factor: split, levels: [tuning]}]}',
        )

    root = project(tmp_path, edit)
    assert main(["--project", str(root), "compile"]) == 0
    err = capsys.readouterr().err
    assert "contrast 'b-not-inferior': both arms select the same rows" in err
    assert "contrast 'a-vs-d-model-a-plain': arm b selects no registered cell" in err


def _analysis_project(tmp_path, study: str, old: str, new: str):
    from tests.conftest import FIXTURES

    root = tmp_path / study
    (root / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "analyses" / f"{study}.yaml").read_text()
    assert text.count(old) == 1
    (root / "spec" / "studies" / f"{study}.yaml").write_text(text.replace(old, new))
    return root


def test_analysis_arms_or_groups_selecting_the_same_rows_are_warned(tmp_path, capsys):
    """An analysis whose groups repeat one selection (a trend over one, one, four passages) or
    whose arms are one selection decides nothing (a McNemar test of a system against itself
    gives P = 1): compile warns at the analysis, as for a contrast, and seal refuses it."""
    trend = "          - {where: [{factor: passages, levels: [two]}]}\n"
    root = _analysis_project(
        tmp_path,
        "dose-trend",
        trend + "          - {where: [{factor: passages, levels: [four]}]}\n"
        "        options: {scores",
        trend.replace("two", "one") + "          - {where: [{factor: passages, levels: [four]}]}\n"
        "        options: {scores",
    )
    assert main(["--project", str(root), "compile"]) == 0
    err = capsys.readouterr().err
    assert (
        "dose-trend.yaml:45: at /hypotheses/0/analyses/0: analysis 'accuracy-trend': group 1 and"
        " group 2 select the same rows" in err
    )
    assert main(["--project", str(root), "seal", "dose-trend"]) != 0
    assert "group 1 and group 2 select the same rows" in capsys.readouterr().err
    # arms: the pass@k difference of nucleus against itself
    root = _analysis_project(
        tmp_path,
        "pass-at-k",
        "constants:\n",
        """  - id: same
    title: same
    analyses:
      - id: d
        method: pass-at-k-difference
        metric: solved
        a: {where: [{factor: decoding, levels: [nucleus]}]}
        b: {where: [{factor: decoding, levels: [nucleus]}]}
        unit: problem
        options: {k: 5, alternative: two-sided, level: 0.9, margin: 0}
    rule:
      compare: {target: d, quantity: p, op: lt, value: 0.05}
constants:
""",
    )
    assert main(["--project", str(root), "compile"]) == 0
    err = capsys.readouterr().err
    assert "analysis 'd': arm a and arm b select the same rows" in err
