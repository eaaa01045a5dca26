"""The truth of a proportion on diagnose's row path (a study whose scenarios pair rows or draw
outcomes from a calibration curve): computed as the counts path computes it, the expected
numerator over the expected denominator at each cell's chance of a right outcome, so bias and
interval coverage are reported (they were null).

Oracles: hand computation of each truth from the registered scenario (a pairing leaves each
arm's rate as registered; a calibration curve over a uniform confidence on [l, h] gives
(l + h)/2 − m or (h − m)²/(2(h − l))); the exact coverage of the Wilson interval by
enumerating the binomial count (statsmodels' proportion_confint per count, scipy's binomial
pmf), within 4 Monte Carlo SEs; the curve's expectation for a clipped normal confidence by
numerical integration (scipy.integrate.quad).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats
from statsmodels.stats.proportion import proportion_confint

from prereg.cli import main
from prereg.engines.factorial.commands import expected_chance
from tests.conftest import FIXTURES, ROOT

N = 300

PAIRED = (
    (
        "    title: The new system is faster, item by item\n    contrasts:\n",
        "    title: The new system is faster, item by item\n"
        "    estimates:\n"
        "      - {id: acc-new, metric: accuracy, of: {where: [{factor: system, levels: [new]}]},"
        " interval: wilson, level: 0.95}\n"
        "      - {id: covered, metric: coverage, of: {where: [{factor: split, levels: [test]}]},"
        " interval: none, level: 0.95}\n"
        "    contrasts:\n"
        "      - {id: acc-diff, metric: accuracy, a: {where: [{factor: system, levels: [new]}]},"
        " b: {where: [{factor: system, levels: [old]}]}, pair_by: itemId, interval:"
        " newcombe-paired, level: 0.95, test: none}\n",
    ),
)

CALIBRATION = (
    (
        "    estimates:\n      - {id: ece-all,",
        "    estimates:\n"
        "      - {id: acc-plain, metric: accuracy, of: {where: [{factor: prompt, levels:"
        " [plain]}]}, interval: wilson, level: 0.95}\n"
        "      - {id: ece-all,",
    ),
    (
        "    rule:\n      compare: {target: ece-all,",
        "    contrasts:\n"
        "      - {id: acc-diff, metric: accuracy, a: {where: [{factor: prompt, levels: [plain]}]},"
        " b: {where: [{factor: prompt, levels: [cot]}]}, interval: newcombe-hybrid, level:"
        " 0.95, test: none}\n"
        "    rule:\n      compare: {target: ece-all,",
    ),
    # the curves hold for the plain prompt's rows; the cot prompt's rows are right at the rate
    (
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: calibrated}",
        "      - {field: confidence, where: [{factor: prompt, levels: [plain]}], distribution:"
        " uniform, low: 0.5, high: 1, curve: calibrated}",
    ),
    (
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve:"
        " overconfident, margin: 0.12}",
        "      - {field: confidence, where: [{factor: prompt, levels: [plain]}], distribution:"
        " uniform, low: 0.1, high: 0.9, curve: overconfident, margin: 0.12}",
    ),
)


def diagnosed(root: Path, study: str, edits) -> dict:
    text = (FIXTURES / "diagnose" / f"{study}.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{study}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "DIAGNOSE.json"
    args = ["--simulations", str(N), "--seed", "8", "--out", str(out), "--quiet"]
    assert main(["--project", str(root), study, "diagnose", *args]) == 0
    return json.loads(out.read_text())


def item(doc: dict, scenario: str, kind: str, id_: str) -> dict:
    cond = next(c for c in doc["conditions"] if c["scenario"] == scenario)
    return next(x for x in cond[kind] if x["id"] == id_)


def wilson_coverage(n: int, p: float, level: float = 0.95) -> float:
    """The exact coverage of the Wilson interval of k ~ Binomial(n, p)."""
    k = np.arange(n + 1)
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return float(stats.binom.pmf(k, n, p)[(lo <= p) & (p <= hi)].sum())


def unbiased(row: dict) -> None:
    """The reported bias is the mean estimate less the truth, within 4 of its MC SEs."""
    assert row["bias"] == pytest.approx(row["meanEstimate"] - row["truth"], abs=2e-6)
    assert abs(row["bias"]) < 4 * row["biasMcSe"] + 1e-6, row


def covers(row: dict, exact: float) -> None:
    cov = row["coverage"]
    assert cov["count"] > 0
    assert abs(cov["share"] - exact) < 4 * math.sqrt(exact * (1 - exact) / N), (cov, exact)


@pytest.fixture(scope="module")
def paired(tmp_path_factory) -> dict:
    return diagnosed(tmp_path_factory.mktemp("paired"), "paired", PAIRED)


@pytest.mark.parametrize("scenario", ["correlated", "independent"])
def test_a_paired_studys_proportions_have_their_truth(paired, scenario):
    """Rates 0.75 (new) and 0.55 (old), 40 rows each, all observed: the pairing leaves each
    arm's rows right at its rate, so the truths are 0.75, 0.75 − 0.55 = 0.2 and coverage 1."""
    acc = item(paired, scenario, "estimates", "acc-new")
    assert acc["truth"] == 0.75
    unbiased(acc)
    covers(acc, wilson_coverage(40, 0.75))
    diff = item(paired, scenario, "contrasts", "acc-diff")
    assert diff["truth"] == pytest.approx(0.2, abs=1e-6)
    unbiased(diff)
    assert diff["coverage"]["share"] > 0.85  # an interval at 95%, now measured
    covered = item(paired, scenario, "estimates", "covered")
    assert covered["truth"] == 1.0 and covered["bias"] == 0.0


@pytest.fixture(scope="module")
def calibration(tmp_path_factory) -> dict:
    return diagnosed(tmp_path_factory.mktemp("calibration"), "calibration", CALIBRATION)


def test_a_calibration_studys_accuracy_has_its_truth(calibration):
    """100 rows a prompt.  calibrated: confidence uniform on [0.5, 1], right with that chance:
    (0.5 + 1)/2 = 0.75 on plain, the rate 0.75 on cot.  overconfident: uniform on [0.1, 0.9],
    right with max(c − 0.12, 0): ∫ from 0.12 to 0.9 of (c − 0.12) dc / 0.8 = 0.78²/1.6 =
    0.380250 on plain, the rate 0.3 on cot."""
    plain = 0.78**2 / 1.6
    for scenario, a, b in (("calibrated", 0.75, 0.75), ("overconfident", plain, 0.3)):
        acc = item(calibration, scenario, "estimates", "acc-plain")
        assert acc["truth"] == pytest.approx(a, abs=1e-6)
        unbiased(acc)
        covers(acc, wilson_coverage(100, a))
        diff = item(calibration, scenario, "contrasts", "acc-diff")
        assert diff["truth"] == pytest.approx(a - b, abs=1e-6)
        unbiased(diff)
    # the ECE's truth counts the plain rows alone (the cot rows draw no confidence): 0 on
    # the calibrated curve (each bin's accuracy is its mean confidence); over-confident on
    # [0.1, 0.9] by 0.12, each bin's accuracy is below its mean confidence, by
    # E[C − g(C)] = E[min(C, 0.12)] in all: ((0.12² − 0.1²)/2 + 0.12·0.78)/0.8 = 0.11975
    # (tests/diagnose/test_confidence_truths.py checks more)
    assert item(calibration, "calibrated", "estimates", "ece-all")["truth"] == 0.0
    over = ((0.12**2 - 0.1**2) / 2 + 0.12 * 0.78) / 0.8
    assert item(calibration, "overconfident", "estimates", "ece-all")["truth"] == pytest.approx(
        over, abs=1e-6
    )


def curve_by_quadrature(mean: float, sd: float, low: float, high: float, margin: float):
    def f(y):
        c = min(max(y, low), high)
        return max(c - margin, 0.0) * stats.norm.pdf(y, mean, sd)

    return integrate.quad(f, mean - 12 * sd, mean + 12 * sd, points=[low, high, margin])[0]


@pytest.mark.parametrize(
    ("entry", "low", "high", "margin"),
    [
        ({"distribution": "normal", "mean": 0.7, "sd": 0.2, "curve": "calibrated"}, 0, 1, 0),
        (
            {"distribution": "normal", "mean": 0.7, "sd": 0.2, "curve": "overconfident",
             "margin": 0.1},
            0, 1, 0.1,
        ),
        (
            {"distribution": "normal", "mean": 0.6, "sd": 0.3, "low": 0.2, "high": 0.95,
             "curve": "overconfident", "margin": 0.35},
            0.2, 0.95, 0.35,
        ),
        (
            {"distribution": "normal", "mean": 0.6, "sd": 0.3, "low": 0.2, "high": 0.5,
             "curve": "overconfident", "margin": 0.5},
            0.2, 0.5, 0.5,
        ),
    ],
)  # fmt: skip
def test_the_curves_expectation_of_a_clipped_normal_confidence(entry, low, high, margin):
    got = expected_chance({"field": "confidence", **entry})
    assert got == pytest.approx(curve_by_quadrature(0.0 + entry["mean"], entry["sd"], low,
                                                    high, margin), abs=1e-9)  # fmt: skip


def test_the_curves_expectation_of_a_uniform_confidence():
    def entry(low, high, margin):
        return {"field": "c", "distribution": "uniform", "low": low, "high": high,
                "curve": "overconfident", "margin": margin}  # fmt: skip

    assert expected_chance(entry(0.5, 1.0, 0.12)) == pytest.approx(0.75 - 0.12)
    assert expected_chance(entry(0.1, 0.9, 0.12)) == pytest.approx(0.78**2 / 1.6)
    assert expected_chance(entry(0.1, 0.9, 0.95)) == 0.0
    assert expected_chance({**entry(0.2, 0.6, 0), "curve": "calibrated"}) == pytest.approx(0.4)
    # rounded or lognormal confidences have no closed form here
    assert expected_chance({**entry(0.2, 0.6, 0.1), "decimals": 2}) is None
    assert expected_chance({"field": "c", "distribution": "lognormal", "mean": -1, "sd": 0.2,
                            "curve": "calibrated"}) is None  # fmt: skip
