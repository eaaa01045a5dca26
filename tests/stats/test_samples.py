"""Figures of samples and of paired binary outcomes against independent oracles.

Oracles: scipy.stats (ttest_ind with equal_var=False, ttest_1samp, t.interval), statsmodels'
mcnemar(exact=True) and its Welch interval (CompareMeans.tconfint_diff, usevar="unequal"),
Newcombe's (1998) published worked example for method 10, a simulation of its coverage, a
plain loop over registered bins for ECE and sklearn's roc_auc_score for AUROC.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from prereg.stats.calibration import bin_index, ece_binned
from prereg.stats.methods import method
from prereg.stats.samples import (
    bootstrap_interval,
    mcnemar_exact,
    newcombe_paired,
    paired_t_test,
    t_interval,
    welch,
    welch_test,
)

RNG = np.random.default_rng(20261201)
SAMPLES = [
    (RNG.normal(10, 2, 12), RNG.normal(11, 5, 30)),
    (RNG.lognormal(0, 1, 40), RNG.lognormal(0.3, 0.5, 7)),
    (np.array([1.0, 2.0, 4.0]), np.array([2.0, 2.5])),
]


@pytest.mark.parametrize("x, y", SAMPLES)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_t_interval_is_scipys(x, y, level):
    m, lo, hi = t_interval(x, level=level)
    want = stats.t.interval(level, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
    assert m == pytest.approx(np.mean(x), rel=1e-12)
    assert (lo, hi) == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("x, y", SAMPLES)
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_welch_interval_is_statsmodels(x, y, level):
    d, lo, hi = welch(x, y, level=level)
    cm = CompareMeans(DescrStatsW(x), DescrStatsW(y))
    want = cm.tconfint_diff(alpha=1 - level, usevar="unequal")
    assert d == pytest.approx(np.mean(x) - np.mean(y), rel=1e-12)
    assert (lo, hi) == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("x, y", SAMPLES)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_welch_test_is_scipys(x, y, alternative):
    t, p = welch_test(x, y, alternative=alternative, margin=0.0)
    want = stats.ttest_ind(x, y, equal_var=False, alternative=alternative)
    assert t == pytest.approx(want.statistic, rel=1e-10)
    assert p == pytest.approx(want.pvalue, rel=1e-9)


@pytest.mark.parametrize("margin", [-1.5, 0.5])
def test_welch_test_against_a_margin_shifts_arm_b(margin):
    x, y = SAMPLES[0]
    _, p = welch_test(x, y, alternative="greater", margin=margin)
    want = stats.ttest_ind(x, y + margin, equal_var=False, alternative="greater")
    assert p == pytest.approx(want.pvalue, rel=1e-9)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_paired_t_is_scipys_one_sample_test(alternative, margin):
    d = RNG.normal(0.2, 1.0, 25)
    t, p = paired_t_test(d, alternative=alternative, margin=margin)
    want = stats.ttest_1samp(d, margin, alternative=alternative)
    assert t == pytest.approx(want.statistic, rel=1e-10)
    assert p == pytest.approx(want.pvalue, rel=1e-9)


def test_undefined_figures_are_nan():
    assert math.isnan(t_interval([1.0], level=0.95)[1])
    assert all(
        math.isnan(v) for v in welch_test([1.0], [2.0, 3.0], alternative="two-sided", margin=0)
    )
    assert all(math.isnan(v) for v in paired_t_test([2.0, 2.0, 2.0], alternative="less", margin=0))
    assert math.isnan(t_interval([], level=0.95)[0])


TABLES = [
    (36, 12, 2, 0),
    (14, 5, 0, 22),
    (7, 25, 3, 12),
    (50, 0, 0, 50),
    (3, 9, 1, 2),
    (0, 4, 6, 0),
]


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_mcnemar_exact_is_statsmodels_and_scipy(table, alternative):
    n11, n10, n01, n00 = table
    p = mcnemar_exact(*table, alternative=alternative)
    if alternative == "two-sided":
        want = mcnemar(np.array([[n11, n10], [n01, n00]]), exact=True).pvalue
    elif n10 + n01 == 0:
        want = 1.0
    else:
        want = stats.binomtest(n10, n10 + n01, 0.5, alternative=alternative).pvalue
    assert p == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_mcnemar_exact_method_refuses_a_margin():
    m = method("paired-proportion-test", "mcnemar-exact")
    from prereg.stats.methods import MethodError

    with pytest.raises(MethodError, match="margin must be 0"):
        m.fn(1, 2, 3, 4, alternative="two-sided", margin=0.1)


def test_newcombe_method_10_reproduces_the_published_example():
    # Newcombe (1998), Statistics in Medicine 17:2635, the first worked example: 36, 12, 2, 0
    # pairs give a difference of 0.2000 with 95% limits 0.0569 and 0.3404 by method 10.
    d, lo, hi = newcombe_paired(36, 12, 2, 0, level=0.95)
    assert d == pytest.approx(0.2, abs=1e-12)
    assert round(lo, 4) == 0.0569 and round(hi, 4) == 0.3404


def test_newcombe_paired_without_correlation_is_the_unpaired_square_and_add():
    # when phi is 0 the limits combine the two margins' Wilson intervals exactly as the
    # independent-samples hybrid does at the same counts: (3, 3, 3, 3) has n11*n00 = n10*n01
    from prereg.stats.proportions import newcombe_difference

    d, lo, hi = newcombe_paired(3, 3, 3, 3, level=0.95)
    _, ulo, uhi = newcombe_difference(6, 12, 6, 12, level=0.95)
    assert d == 0.0 and (lo, hi) == pytest.approx((ulo, uhi), rel=1e-12)
    # a positive numerator up to n/2 is corrected to 0 as well: (4, 3, 3, 3) has 12 - 9 = 3
    # below 13/2, so phi = 0 again
    d, lo, hi = newcombe_paired(4, 3, 3, 3, level=0.95)
    _, ulo, uhi = newcombe_difference(7, 13, 7, 13, level=0.95)
    assert (lo, hi) == pytest.approx((ulo, uhi), rel=1e-12)
    # positive correlation beyond the correction narrows the interval
    _, clo, chi = newcombe_paired(10, 2, 2, 10, level=0.95)
    _, ilo, ihi = newcombe_difference(12, 24, 12, 24, level=0.95)
    assert chi - clo < ihi - ilo
    assert newcombe_paired(0, 10, 5, 0, level=0.95)[0] == pytest.approx(5 / 15)


def test_newcombe_paired_covers_the_true_difference():
    # coverage by simulation: pairs with p_a = 0.7, p_b = 0.6 and positive correlation;
    # method 10's 95% interval covers the true 0.1 in about 95% of 4,000 studies of 80 pairs
    rng = np.random.default_rng(7)
    probs = np.array([0.5, 0.2, 0.1, 0.2])  # n11, n10, n01, n00: p_a = 0.7, p_b = 0.6
    tables = rng.multinomial(80, probs, size=4000)
    covered = 0
    for t in tables:
        _, lo, hi = newcombe_paired(*t, level=0.95)
        covered += lo <= 0.1 <= hi
    assert 0.93 <= covered / len(tables) <= 0.975


def test_newcombe_paired_is_close_to_a_paired_bootstrap():
    table = (40, 25, 10, 25)
    pairs = np.repeat(np.array([[1, 1], [1, 0], [0, 1], [0, 0]]), table, axis=0)
    lo_b, hi_b = bootstrap_interval(
        [pairs[:, 0].astype(float), pairs[:, 1].astype(float)],
        lambda a, b: float(a.mean() - b.mean()),
        level=0.95,
        resamples=4000,
        seed=3,
        paired=True,
    )
    d, lo, hi = newcombe_paired(*table, level=0.95)
    assert d == pytest.approx(0.15)
    assert lo == pytest.approx(lo_b, abs=0.02) and hi == pytest.approx(hi_b, abs=0.02)


def test_bootstrap_is_reproducible_and_follows_its_documented_draws():
    x = RNG.normal(0, 1, 30)
    a = bootstrap_interval([x], lambda v: float(v.mean()), level=0.9, resamples=500, seed=11)
    b = bootstrap_interval([x], lambda v: float(v.mean()), level=0.9, resamples=500, seed=11)
    assert a == b
    rng = np.random.Generator(np.random.PCG64(11))
    means = [x[rng.integers(0, 30, 30)].mean() for _ in range(500)]
    assert a == tuple(np.quantile(means, [0.05, 0.95]))
    assert (
        bootstrap_interval([x], lambda v: float(v.mean()), level=0.9, resamples=500, seed=12) != a
    )


@pytest.mark.parametrize("closed", ["left", "right"])
def test_ece_over_registered_bins_is_a_plain_loop(closed):
    edges = [0.0, 0.25, 0.5, 0.75, 1.0]
    q = np.array([0.0, 0.25, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0, 0.1, 0.5])
    y = np.array([0, 1, 0, 1, 1, 0, 1, 1, 0, 0])
    bins: dict[int, list[int]] = {}
    for i, v in enumerate(q):
        for b in range(4):
            lo, hi = edges[b], edges[b + 1]
            if closed == "left":
                inside = lo <= v < hi or (b == 3 and v == hi)
            else:
                inside = lo < v <= hi or (b == 0 and v == lo)
            if inside:
                bins.setdefault(b, []).append(i)
                break
    want = sum(len(ix) / len(q) * abs(np.mean(y[ix]) - np.mean(q[ix])) for ix in bins.values())
    assert ece_binned(q, y, edges, closed) == pytest.approx(want, abs=1e-15)
    # an edge value falls on the closed side
    assert bin_index([0.25], edges, closed)[0] == (1 if closed == "left" else 0)


def test_ece_refuses_a_value_outside_the_edges():
    with pytest.raises(ValueError, match="outside the bin edges"):
        ece_binned([1.2], [1], [0, 0.5, 1], "left")


def test_auroc_and_hanley_mcneil_interval_truncated():
    from prereg.stats.roc import auroc

    s = RNG.random(60)
    y = (s + RNG.normal(0, 0.3, 60) > 0.5).astype(int)
    assert auroc(s, y) == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    lo, hi = method("auroc-interval", "hanley-mcneil").fn(0.99, 10, 10, level=0.95)
    assert hi == 1.0 and lo < 0.99
