"""The truths of Gwet's AC1 and Krippendorff's alpha (nominal) under a ``ratings`` scenario:
what each coefficient converges to as items grow, each item's true category drawn from the
prevalence and each rater's label from its confusion row.

Oracles, none of them the code under test: each coefficient computed here by hand from its
published formula (Gwet 2008, eq. for AC1 with two raters; Krippendorff 2011, the coincidence
matrix of nominal values) over 20 batches of 20,000 simulated items (the batches give the
Monte Carlo SE), within 4 SEs; and diagnose's bias and RMSE of Krippendorff's alpha on the
raters-units example against an independent re-simulation of its 28 complete items.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from prereg.diagnose.truths import agreement

from .test_structured_truths import (
    accuracy_matrix,
    analysis,
    diagnose,
    draw_labels,
    rmse_and_se,
    z,
)
from .test_units_dgp import project


def gwet_ac1(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """AC1 of two raters' labels: (P_a − P_e)/(1 − P_e), P_e = Σ π_q(1 − π_q)/(k − 1), π_q
    the mean of the two raters' shares of label q."""
    pa = float((a == b).mean())
    pi = (np.bincount(a, minlength=k) + np.bincount(b, minlength=k)) / (2 * a.size)
    pe = float((pi * (1 - pi)).sum()) / (k - 1)
    return (pa - pe) / (1 - pe)


def krippendorff_nominal(labels: np.ndarray, k: int) -> float:
    """Alpha of complete nominal labels (items × raters): the coincidence matrix
    o_ck = Σ_u Σ_{i≠j} 1{c, k}/(m − 1), n_c its margins, n = Σ n_c;
    alpha = 1 − (n − 1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k."""
    m = labels.shape[1]
    counts = (labels[..., None] == np.arange(k)).sum(axis=1)  # items × categories
    o = (counts.T @ counts - np.diag(counts.sum(axis=0))) / (m - 1)
    nc = o.sum(axis=1)
    n = nc.sum()
    off = o.sum() - np.trace(o)
    expected = nc.sum() ** 2 - (nc**2).sum()
    return 1 - (n - 1) * off / expected


def batches(rng, prevalence, matrices, fn, reps: int = 20, items: int = 20_000):
    got = [fn(draw_labels(rng, prevalence, matrices, items)) for _ in range(reps)]
    return float(np.mean(got)), float(np.std(got, ddof=1) / math.sqrt(reps))


@pytest.mark.parametrize(
    ("prevalence", "accuracies"),
    [([0.2, 0.5, 0.3], (0.85, 0.7)), ([0.05, 0.05, 0.9], (0.9, 0.6)), ([0.5, 0.5], (0.8, 0.8))],
)
def test_gwet_ac1_truth_matches_its_formula_over_many_items(prevalence, accuracies):
    k = len(prevalence)
    matrices = [accuracy_matrix(a, k) for a in accuracies]
    rng = np.random.default_rng(31)
    mean, se = batches(rng, prevalence, matrices, lambda x: gwet_ac1(x[:, 0], x[:, 1], k))
    assert abs(agreement("gwet-ac1", prevalence, matrices) - mean) <= 4 * se


def test_gwet_ac1_by_hand():
    """Two raters right 80% of the time over two equally common categories: they agree with
    chance 0.8² + 0.2² = 0.68, each says either label half the time, so P_e = 2·(½·½)/1 = ½
    and AC1 = (0.68 − 0.5)/0.5 = 0.36 (Cohen's kappa is the same here: equal margins)."""
    m = accuracy_matrix(0.8, 2)
    assert agreement("gwet-ac1", [0.5, 0.5], [m, m]) == pytest.approx(0.36, abs=1e-12)


def test_krippendorff_alpha_truth_matches_its_formula_over_many_items():
    prevalence = [0.3, 0.3, 0.4]
    cat = np.array([[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]])
    matrices = [accuracy_matrix(0.9), accuracy_matrix(0.9), cat]
    rng = np.random.default_rng(37)
    mean, se = batches(rng, prevalence, matrices, lambda x: krippendorff_nominal(x, 3))
    truth = agreement("krippendorff-alpha", prevalence, matrices)
    assert abs(truth - mean) <= 4 * se
    assert 0.5 < truth < 0.9


KRIPPENDORFF = {
    "id": "alpha",
    "method": "krippendorff-alpha",
    "metric": "graded",
    "of": {"where": [{"factor": "domain", "levels": ["code", "prose"]}]},
    "unit": "itemId",
    "rater": "rater",
    "rating": "grade",
    "options": {"level_of_measurement": "nominal"},
}


def test_krippendorff_alpha_bias_and_rmse_match_an_independent_simulation(tmp_path):
    """raters-units with a Krippendorff analysis beside its Fleiss one: 28 complete items of
    three raters (ann and bob right 90%, cat 75%). The truth against the formula over 400,000
    items; bias and RMSE against alpha of 6,000 re-simulated sets of 28 items."""
    root = project(
        tmp_path, "raters-units", lambda s: s["hypotheses"][0]["analyses"].append(KRIPPENDORFF)
    )
    cond = diagnose(root, "raters-units", "good-raters", 400)
    prevalence = [0.3, 0.3, 0.4]
    matrices = [accuracy_matrix(0.9), accuracy_matrix(0.9), accuracy_matrix(0.75)]
    rng = np.random.default_rng(41)
    truth, truth_se = batches(rng, prevalence, matrices, lambda x: krippendorff_nominal(x, 3))
    got = analysis(cond, "alpha")
    assert abs(got["truth"] - truth) <= 4 * truth_se
    reps = 6000
    alphas = np.array(
        [krippendorff_nominal(draw_labels(rng, prevalence, matrices, 28), 3) for _ in range(reps)]
    )
    bias = alphas.mean() - truth
    se = math.hypot(alphas.std() / math.sqrt(reps), truth_se)
    assert z(got["bias"], bias, got["biasMcSe"], se) <= 4
    rmse, rmse_se = rmse_and_se(alphas, got["truth"])
    assert z(got["rmse"], rmse, got["rmseMcSe"], rmse_se) <= 4
