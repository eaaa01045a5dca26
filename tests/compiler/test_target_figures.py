"""A comparison of a figure an estimate or a contrast never has is refused at compile time with
its line and the rule (it could never be met, so the verdict would be decided by a figure that
is always missing): the P value of an estimate, or of a contrast without a test; a bound of a
contrast without an interval; the adjusted P of a contrast in no family
(tests/fixtures/geo_ratio's study, one edit each)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prereg.cli import main

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "geo_ratio" / "georatio.yaml"
RULE = "- compare: {target: ratio, quantity: estimate, op: OP, value: 0.9}"
TESTED = """        interval: welch
        level: 0.95
        test: welch-t
        alternative: greater
        margin: 0.9
"""
UNTESTED = """        interval: none
        level: 0.95
        test: none
"""

CASES = [
    (
        "- compare: {target: gm-new, quantity: p, op: lt, value: 0.05}",
        None,
        "estimate 'gm-new' is an estimate, which has no test, so no P value: a comparison of"
        " its p is never met",
    ),
    (
        "- compare: {target: ratio, quantity: p, op: lt, value: 0.05}",
        UNTESTED,
        "contrast 'ratio' has no test, so no P value: a comparison of its p is never met",
    ),
    (
        "- compare: {target: ratio, quantity: upper, op: lt, value: 2}",
        UNTESTED,
        "contrast 'ratio' has no interval (interval: none), so no bounds: a comparison of its"
        " upper is never met",
    ),
    (
        "- compare: {target: ratio, quantity: adjusted_p, op: lt, value: 0.05}",
        None,
        "contrast 'ratio' is in no family (or has no test), so no adjusted P: a comparison of"
        " its adjusted_p is never met",
    ),
]


@pytest.mark.parametrize(("rule", "contrast", "message"), CASES)
def test_a_figure_never_had_is_refused(tmp_path, capsys, rule, contrast, message):
    text = SPEC.read_text().replace("op: OP", "op: ge")
    assert text.count(RULE.replace("OP", "ge")) == 1 and text.count(TESTED) == 1
    text = text.replace(RULE.replace("OP", "ge"), rule)
    if contrast is not None:
        text = text.replace(TESTED, contrast)
    spec = tmp_path / "spec" / "studies" / "georatio.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    line = 1 + text[: text.index(rule)].count("\n")
    assert (
        f"georatio.yaml:{line}: at /hypotheses/0/rule/all_of/2/compare/quantity: {message}" in err
    )
    assert "Traceback" not in err and not (tmp_path / "generated").exists()
    assert re.search(r"never met \(compare a figure it has", err)


def test_the_same_figures_compile_where_they_exist(tmp_path):
    text = SPEC.read_text().replace("op: OP", "op: ge")
    text = text.replace(
        RULE.replace("OP", "ge"), "- compare: {target: ratio, quantity: upper, op: lt, value: 2}"
    )
    spec = tmp_path / "spec" / "studies" / "georatio.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
