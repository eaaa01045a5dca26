"""SCORE.md's deciding figures count a comparison as met exactly as the verdict decides it: on
the exact figure SCORE.json carries (k/n, a difference of k/n, an ECE's or an analysis' exact
value) against the threshold as written, rounded half-up when the rule registers `decimals`.
They used to compare the float, so a figure exactly on its threshold (84/100 - 75/100 is
0.08999999999999997 as a float) was listed as not meeting a rule its verdict said it met."""

from __future__ import annotations

import json
from fractions import Fraction

from prereg.cli import main
from prereg.reports.verdicts import deciding_figures


def _rule(target, quantity, op, value, decimals=None):
    leaf = {"target": target, "quantity": quantity, "op": op, "value": value}
    if decimals is not None:
        leaf["decimals"] = decimals
    return {"rule": {"compare": leaf}}


def test_a_difference_of_proportions_on_its_threshold():
    # 84/100 - 75/100 = 9/100 exactly (hand computation); the float difference falls below 0.09
    assert Fraction(84, 100) - Fraction(75, 100) == Fraction(9, 100)
    assert 84 / 100 - 75 / 100 < 0.09
    row = {
        "id": "d",
        "a": {"k": 84, "n": 100, "estimate": 0.84},
        "b": {"k": 75, "n": 100, "estimate": 0.75},
        "estimate": 84 / 100 - 75 / 100,
    }
    assert "met by 1 of 1" in deciding_figures(_rule("d", "estimate", "ge", 0.09), [row])
    assert "met by 0 of 1" in deciding_figures(_rule("d", "estimate", "gt", 0.09), [row])


def test_a_proportion_estimate_and_an_ece_on_their_thresholds():
    # 7/10: the float 0.7 is 0.6999999999999999555...; the rule reads k/n
    prop = {"id": "p", "k": 7, "n": 10, "estimate": 0.7}
    assert "met by 0 of 1" in deciding_figures(_rule("p", "estimate", "lt", 0.7), [prop])
    # an ECE of 0.05 over decimal confidences whose float sum came out above it
    ece = {"id": "e", "n": 196, "exact": "1/20", "estimate": 0.05000000000000035}
    assert "met by 1 of 1" in deciding_figures(_rule("e", "estimate", "le", 0.05), [ece])


def test_an_analysis_reads_its_exact_estimate():
    # kappa 3/5 (its exact figure) with a float a hair below
    row = {"id": "k", "exact": {"estimate": "3/5"}, "estimate": 0.5999999999999999}
    assert "met by 1 of 1" in deciding_figures(_rule("k", "estimate", "ge", 0.6), [row])
    assert "met by 1 of 1" in deciding_figures(_rule("k", "abs_estimate", "ge", 0.6), [row])


def test_a_rounded_comparison_rounds_half_up():
    # 1/8 = 0.125 rounded half-up to 2 decimals is 0.13 (hand computation), so >= 0.13 holds
    row = {"id": "p", "k": 1, "n": 8, "estimate": 0.125}
    assert "met by 1 of 1" in deciding_figures(_rule("p", "estimate", "ge", 0.13, 2), [row])
    assert "met by 0 of 1" in deciding_figures(_rule("p", "estimate", "ge", 0.13), [row])


def test_score_md_agrees_with_the_verdict_on_the_threshold(tmp_path):
    """The starter of `prereg init`, its rule changed to 'treatment minus control at least
    0.09 for system-a', scored on 84/100 against 75/100: supported, and SCORE.md says met."""
    root = tmp_path
    assert main(["--project", str(root), "init", "my-study"]) == 0
    spec = root / "spec" / "studies" / "my-study.yaml"
    text = spec.read_text()
    old = 'compare: {target: "treatment-{system}", quantity: adjusted_p, op: lt, value: 0.05}'
    assert text.count(old) == 1
    text = text.replace(
        old, 'compare: {target: "treatment-{system}", quantity: estimate, op: ge, value: 0.09}'
    )
    text = text.replace("quantifier: all", "quantifier: any")
    spec.write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    items = root / "items.jsonl"
    assert main(["--project", str(root), "my-study", "items", "--out", str(items)]) == 0
    right = {"a-t": 84, "a-c": 75, "b-t": 70, "b-c": 70}
    lines = []
    for rec in map(json.loads, items.read_text().splitlines()):
        cell, n = rec["rowId"].rsplit("-", 1)
        lines.append({"rowId": rec["rowId"], "attempt": 1, "correct": int(n) <= right[cell]})
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = root / "SCORE.json"
    args = ["--project", str(root), "my-study", "score", "--items", str(items)]
    assert main([*args, "--observations", str(obs), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["verdicts"]["h1"] == "supported"
    md = out.with_suffix(".md").read_text()
    assert "estimate ≥ 0.09: met by 1 of 2: treatment-system-a (0.09)" in md


def test_the_report_plots_read_the_same_exact_figures():
    """The demo report's decides panels (prereg.reports.decides) mark a row met or missed with
    the same exact figures as SCORE.md."""
    from prereg.reports.decides import figure_value

    ece = {"id": "e", "n": 196, "exact": "1/20", "estimate": 0.05000000000000035}
    assert figure_value(ece, "estimate") == Fraction(1, 20)
    kappa = {"id": "k", "exact": {"estimate": "-3/5"}, "estimate": -0.5999999999999999}
    assert figure_value(kappa, "abs_estimate") == Fraction(3, 5)
    diff = {"id": "d", "a": {"k": 84, "n": 100}, "b": {"k": 75, "n": 100}, "estimate": 0.09}
    assert figure_value(diff, "estimate") == Fraction(9, 100)
    assert figure_value({"id": "m", "estimate": 2.5, "p": 0.01}, "p") == 0.01
    assert figure_value({"id": "m", "estimate": None}, "estimate") is None
