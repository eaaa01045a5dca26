"""The truths of confidence figures (ECE, Brier score, AUROC) under a calibration scenario:
what each figure converges to when rows draw a confidence C from the registered law and are
right with the curve's chance g(C).

Oracles: hand computation in exact fractions (a uniform confidence, whose moments are
polynomials), and an independent Monte Carlo in numpy of millions of rows (the ECE's bins by
numpy's searchsorted, the AUROC by scikit-learn's roc_auc_score), within 4 Monte Carlo SEs;
end to end, diagnose reports them as truths with bias, and the Brier score and the AUROC, which
are unbiased, have a bias within 4 of its Monte Carlo SEs.
"""

from __future__ import annotations

import json
import math
import shutil
from fractions import Fraction as F

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from prereg.cli import main
from prereg.diagnose.truths import ConfidenceLaw, calibration_truth
from tests.conftest import FIXTURES, ROOT

TEN = [k / 10 for k in range(11)]


def uniform(low, high, curve="calibrated", margin=None):
    entry = {"field": "c", "distribution": "uniform", "low": low, "high": high, "curve": curve}
    if margin is not None:
        entry["margin"] = margin
    return ConfidenceLaw(entry)


def integral(poly: dict[int, F], a: F, b: F) -> F:
    """∫_a^b Σ c_k x^k dx, exactly."""
    return sum((c / (k + 1)) * (b ** (k + 1) - a ** (k + 1)) for k, c in poly.items())


def test_a_calibrated_uniform_confidence_by_hand():
    """C uniform on [1/2, 1], right with chance C. ECE: every bin's accuracy is its mean
    confidence, so 0. Brier: E[C − C²] = 3/4 − 7/12 = 1/6. AUROC: positives have density ∝ x,
    negatives ∝ 1 − y, so A = ∫∫_{y<x} x(1 − y) / (∫x · ∫(1 − y)) over [1/2, 1], worked out
    with polynomials in fractions: 13/18."""
    law = uniform(0.5, 1.0)
    h = F(1, 2)
    one = F(1)
    # inner ∫_{1/2}^{x} (1 − y) dy = x − x²/2 − (1/2 − 1/8) = -3/8 + x − x²/2; times x
    num = integral({1: F(-3, 8), 2: one, 3: F(-1, 2)}, h, one)
    den = integral({1: one}, h, one) * integral({0: one, 1: -one}, h, one)
    assert num / den == F(13, 18)
    assert calibration_truth("ece", [(1, law)], bins=TEN) == pytest.approx(0.0, abs=1e-12)
    assert calibration_truth("brier", [(1, law)]) == pytest.approx(1 / 6, rel=1e-10)
    assert calibration_truth("auroc", [(1, law)]) == pytest.approx(13 / 18, rel=1e-9)


def test_an_overconfident_uniform_confidence_by_hand():
    """C uniform on [1/2, 1], right with chance C − 3/25 (the margin is below every C): each
    bin's accuracy is 3/25 below its mean confidence, so the ECE is 3/25; the Brier score
    E[C² − 2C(C − m) + C − m] = −E[C²] + (1 + 2m)E[C] − m = −7/12 + (31/25)(3/4) − 3/25."""
    m = F(3, 25)
    law = uniform(0.5, 1.0, "overconfident", 0.12)
    brier = -F(7, 12) + (1 + 2 * m) * F(3, 4) - m
    assert calibration_truth("ece", [(1, law)], bins=TEN) == pytest.approx(0.12, rel=1e-9)
    assert calibration_truth("brier", [(1, law)]) == pytest.approx(float(brier), rel=1e-10)


def _draw(rng, entry, n):
    """Confidences and right outcomes of n rows, drawn as the scenario registers them."""
    low, high = max(0.0, entry.get("low", 0.0)), min(1.0, entry.get("high", 1.0))
    if entry["distribution"] == "uniform":
        c = rng.uniform(low, high, n)
    elif entry["distribution"] == "normal":
        c = np.clip(rng.normal(entry["mean"], entry["sd"], n), low, high)
    else:
        c = np.clip(rng.lognormal(entry["mean"], entry["sd"], n), low, high)
    g = c if entry["curve"] == "calibrated" else np.maximum(c - entry["margin"], 0.0)
    return c, rng.random(n) < g


MIXTURE = [
    # a clipped normal (atoms at 0 and 1) with its bend at 0.3 inside the range
    (3, {"distribution": "normal", "mean": 0.6, "sd": 0.25, "curve": "overconfident", "margin": 0.3}),
    (1, {"distribution": "lognormal", "mean": -0.7, "sd": 0.4, "high": 0.9, "curve": "calibrated"}),
]  # fmt: skip


@pytest.mark.parametrize("positive_right", [True, False])
def test_a_mixture_of_cells_against_a_monte_carlo(positive_right):
    """Two cells, three rows of the first to one of the second; bins uneven and closed on
    the left; positives the right rows, or the wrong ones."""
    rng = np.random.default_rng(20261203)
    n = 3_000_000
    parts = [(w, ConfidenceLaw({"field": "c", **e})) for w, e in MIXTURE]
    cs, ys = [], []
    for w, e in MIXTURE:
        c, y = _draw(rng, e, n * w // 4)
        cs.append(c)
        ys.append(y)
    c, y = np.concatenate(cs), np.concatenate(ys)
    pos = y if positive_right else ~y
    rows = c.size

    # Brier: a mean of rows
    sq = (c - pos) ** 2
    got = calibration_truth("brier", parts, positive_right=positive_right)
    assert abs(got - sq.mean()) < 4 * sq.std() / math.sqrt(rows)

    # ECE: Σ_b |mean of (positive − c)·1{b}|, each bin's term a mean of rows
    edges = [0.0, 0.15, 0.3, 0.45, 0.5, 0.7, 0.95, 1.0]
    b = np.clip(np.searchsorted(edges, c, side="right") - 1, 0, len(edges) - 2)
    gap = pos - c
    terms = [np.where(b == k, gap, 0.0) for k in range(len(edges) - 1)]
    mc = sum(abs(t.mean()) for t in terms)
    se = math.sqrt(sum(t.var() for t in terms) / rows)
    got = calibration_truth("ece", parts, positive_right=positive_right, bins=edges, closed="left")
    assert abs(got - mc) < 4 * se + 1e-4, (got, mc, se)

    # AUROC by scikit-learn; its SE by Hanley and McNeil
    a = roc_auc_score(pos, c)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = math.sqrt((a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0))
    got = calibration_truth("auroc", parts, positive_right=positive_right)
    assert abs(got - a) < 4 * se, (got, a, se)


def test_a_confidence_without_spread_is_one_atom():
    """sd 0: every row has confidence 0.8 (right with 0.8 − 0.1): no positive ranks above a
    negative, every pair ties, so the AUROC is 1/2; the ECE is the margin."""
    law = ConfidenceLaw(
        {"field": "c", "distribution": "normal", "mean": 0.8, "sd": 0, "curve": "overconfident",
         "margin": 0.1}
    )  # fmt: skip
    assert calibration_truth("auroc", [(1, law)]) == pytest.approx(0.5, abs=1e-12)
    assert calibration_truth("ece", [(1, law)], bins=TEN) == pytest.approx(0.1, abs=1e-12)
    brier = 0.8**2 - 2 * 0.8 * 0.7 + 0.7  # E[(C − Y)²] at C = 0.8, P(Y) = 0.7
    assert calibration_truth("brier", [(1, law)]) == pytest.approx(brier, abs=1e-12)


def test_a_rounded_confidence_has_no_truth_here():
    assert (
        ConfidenceLaw.of(
            {"field": "c", "distribution": "uniform", "low": 0.5, "high": 1, "decimals": 2,
             "curve": "calibrated"}
        )
        is None
    )  # fmt: skip


ANALYSIS = """    estimates:
      - {id: ece-all, metric: ece, of: {where: [{factor: split, levels: [test]}]}, interval: none, level: 0.95}
"""
WITH_BRIER = ANALYSIS + """    analyses:
      - {id: brier-all, method: brier-score, metric: ece, of: {where: [{factor: split, levels: [test]}]}, options: {}}
"""  # fmt: skip


def test_diagnose_reports_the_truths(tmp_path):
    """The calibration fixture (two cells of 100 rows, C uniform on [1/2, 1]) with a Brier
    analysis: DIAGNOSE.json states the truths worked out above, with bias and RMSE; the Brier
    score and the AUROC are unbiased, so their bias is within 4 Monte Carlo SEs of 0."""
    text = (FIXTURES / "diagnose" / "calibration.yaml").read_text(encoding="utf-8")
    assert text.count(ANALYSIS) == 1
    text = text.replace(ANALYSIS, WITH_BRIER)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "calibration.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "DIAGNOSE.json"
    args = ["calibration", "diagnose", "--simulations", "400", "--seed", "5", "--quiet"]
    assert main(["--project", str(root), *args, "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    m = F(3, 25)
    brier = {
        "calibrated": F(1, 6),
        "overconfident": -F(7, 12) + (1 + 2 * m) * F(3, 4) - m,
    }
    ece = {"calibrated": 0.0, "overconfident": 0.12}
    for cond in doc["conditions"]:
        sid = cond["scenario"]
        est = {e["id"]: e for e in cond["estimates"]}
        assert est["ece-all"]["truth"] == pytest.approx(ece[sid], abs=1e-6)
        assert est["ece-all"]["bias"] > 0  # the binned ECE of 200 rows is biased upward
        auroc = est["auroc-all"]
        if sid == "calibrated":
            assert auroc["truth"] == pytest.approx(13 / 18, abs=1e-6)
        assert abs(auroc["bias"]) <= 4 * auroc["biasMcSe"], auroc
        ana = next(a for a in cond["analyses"] if a["id"] == "brier-all")
        assert ana["truth"] == pytest.approx(float(brier[sid]), abs=1e-6)
        assert abs(ana["bias"]) <= 4 * ana["biasMcSe"], ana
        assert ana["rmse"] is not None
