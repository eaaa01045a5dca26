"""Compile-time checks of the numeric, paired and calibration vocabulary: a method that does
not fit its metric and design, a bootstrap without its block, a paired contrast naming an
unknown field, margins a test cannot take, malformed ECE bins and scenario values. Each edit
of an example spec is refused with its location and rule, and nothing is written."""

from __future__ import annotations

import shutil

import pytest

from prereg.cli import main
from tests.conftest import ROOT

CASES = [
    (
        "latency-cost",
        "        interval: welch\n        level: 0.95\n        test: welch-t\n        alternative: less\n    rule:\n      all_of:\n        - compare: {target: latency-cached-vs-baseline",
        "        interval: newcombe-hybrid\n        level: 0.95\n        test: welch-t\n        alternative: less\n    rule:\n      all_of:\n        - compare: {target: latency-cached-vs-baseline",
        "interval 'newcombe-hybrid' does not fit a mean contrast of metric 'latency' (fitting: welch, bootstrap, none)",
    ),
    (
        "latency-cost",
        "        interval: welch\n        level: 0.95\n        test: welch-t\n        alternative: less\n    rule:\n      all_of:\n        - compare: {target: latency-cached-vs-baseline",
        "        interval: welch\n        level: 0.95\n        test: pooled-z\n        alternative: less\n    rule:\n      all_of:\n        - compare: {target: latency-cached-vs-baseline",
        "test 'pooled-z' does not fit a mean contrast of metric 'latency' (fitting: welch-t, none)",
    ),
    (
        "latency-cost",
        "        bootstrap: {resamples: 2000, seed: 17}\n",
        "",
        "interval bootstrap needs a bootstrap block (resamples, seed)",
    ),
    (
        "latency-cost",
        "        margin: -0.05\n",
        "        margin: -1.5\n",
        "a difference of proportions' margin lies in [-1, 1]",
    ),
    (
        "latency-cost",
        "        family: tokens-by-task\n",
        "        family: tokens-by-task\n        margin: 0\n",
        "a ratio's margin is the ratio under the null, above 0",
    ),
    (
        "latency-cost",
        "      transform: log\n",
        "      transform: log\n      bins: [0, 1]\n",
        "bins and closed are for ece",
    ),
    (
        "latency-cost",
        "distribution: lognormal, mean: 7.0, sd: 0.4}\n  - id: no-effect",
        "distribution: lognormal, mean: 7.0}\n  - id: no-effect",
        "scenario 'caching-helps': a lognormal draw needs sd",
    ),
    (
        "latency-cost",
        "      - {field: tokens, distribution: lognormal, mean: 7.0, sd: 0.4}\nhypotheses:",
        "      - {field: correct, distribution: lognormal, mean: 7.0, sd: 0.4}\nhypotheses:",
        "scenario 'no-effect' draws 'correct', which is not a numeric field of the observation contract",
    ),
    (
        "paired-verifiers",
        "        pair_by: itemId\n        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "        pair_by: item\n        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "contrast 'b-vs-a' pairs rows by unknown field 'item'",
    ),
    (
        "paired-verifiers",
        "        pair_by: itemId\n        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "        pair_by: itemId\n        interval: newcombe-hybrid\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "interval 'newcombe-hybrid' does not fit a paired proportion contrast of metric 'accuracy' (fitting: newcombe-paired, bootstrap, none)",
    ),
    (
        "paired-verifiers",
        "        pair_by: itemId\n        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "interval 'newcombe-paired' does not fit a proportion contrast of metric 'accuracy' (fitting: newcombe-hybrid, bootstrap, none)",
    ),
    (
        "paired-verifiers",
        "        pair_by: itemId\n        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n    rule:",
        "        pair_by: itemId\n        interval: newcombe-paired\n        level: 0.95\n        test: mcnemar-exact\n        margin: 0.1\n    rule:",
        "mcnemar-exact tests a - b = 0; a margin needs a test that takes one",
    ),
    (
        "calibration-cells",
        "      bins: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]\n",
        "      bins: [0, 0.5, 0.5, 1]\n",
        "the bin edges must be strictly increasing",
    ),
    (
        "calibration-cells",
        "        interval: hanley-mcneil\n",
        "        interval: wilson\n",
        "interval 'wilson' does not fit an auroc estimate of metric 'auroc' (fitting: hanley-mcneil, bootstrap, none)",
    ),
    (
        "calibration-cells",
        "      where:\n        - {field: correct, op: eq, value: true}\ngates:",
        "gates:",
        "auroc needs where (the rows that are positive)",
    ),
]


@pytest.mark.parametrize("example, old, new, message", CASES)
def test_a_bad_edit_is_refused_with_its_rule(tmp_path, capsys, example, old, new, message):
    spec = tmp_path / "spec" / "studies" / f"{example}.yaml"
    shutil.copytree(ROOT / "examples" / example / "spec", tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    text = spec.read_text()
    assert text.count(old) == 1, "the edit must be unambiguous"
    spec.write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) != 0
    err = capsys.readouterr().err
    assert message in err
    assert f"{example}.yaml:" in err and "Traceback" not in err
    assert sorted(p.name for p in (tmp_path / "generated").iterdir()) == ["prereg.schema.json"]


def _project(tmp_path, example):
    shutil.copytree(ROOT / "examples" / example / "spec", tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    return tmp_path / "spec" / "studies" / f"{example}.yaml"


def test_verdicts_must_end_with_a_default(tmp_path, capsys):
    spec = _project(tmp_path, "latency-cost")
    text = spec.read_text()
    old = "    rule:\n      compare: {target: accuracy-non-inferior, quantity: p, op: lt, value: 0.025}\n"
    new = (
        "    verdicts:\n"
        "      - verdict: non-inferior\n"
        "        when: {compare: {target: accuracy-non-inferior, quantity: p, op: lt, value: 0.025}}\n"
    )
    assert text.count(old) == 1
    spec.write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) != 0
    assert "hypothesis 'h4': the last verdict needs no when" in capsys.readouterr().err


def test_a_reported_only_hypothesis_with_a_rule_is_reported(tmp_path, capsys):
    """reported_only means what it says even when a rule is written: the verdict stays
    reported-only whatever the rule or the gates give."""
    import json

    spec = _project(tmp_path, "calibration-cells")
    text = spec.read_text()
    old = "    title: Confidence separates right from wrong answers in every cell\n"
    assert text.count(old) == 1
    text = text.replace(old, old + "    reported_only: true\n")
    # the decision reads h2's verdict, which a reported-only h2 never gives: compile refuses
    spec.write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) != 0
    assert "can never have verdict 'supported'" in capsys.readouterr().err
    read_h2 = "          - {verdict: {hypothesis: h2, is: [supported]}}\n"
    assert text.count(read_h2) == 1
    spec.write_text(text.replace(read_h2, ""))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs, out = tmp_path / "obs.jsonl", tmp_path / "SCORE.json"
    study = ["--project", str(tmp_path), "calibration-cells"]
    assert (
        main([*study, "simulate", "--scenario", "calibrated", "--seed", "1", "--out", str(obs)])
        == 0
    )
    assert main([*study, "score", "--observations", str(obs), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["verdicts"]["h2"] == "reported-only"
