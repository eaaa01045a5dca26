"""A t test's mean (difference) less its margin is decided on the decimals the data and the
spec write, as the proportions' margins are: data whose mean difference is exactly on the
margin give t = 0 and a one-sided P of exactly 1/2 (floats gave t = ±3e-16, so `p lt 0.5`
held or failed by rounding), and data whose decimals are all equal (or differ by one decimal
throughout, paired) have no spread, so no t (floats gave a variance of 1e-34 and t = 1e16).

Oracles: hand arithmetic in fractions (shown); statsmodels' ttost_ind / ttost_paired /
ttest_ind away from the margin, where floats decide alike."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from prereg.stats import continuous, equivalence, samples

# x: 0.3, 0.5, 0.4 (mean 2/5); y: 0.1, 0.3, 0.2 (mean 1/5): the difference is 1/5 exactly,
# while the floats' difference of means is 0.20000000000000004
X, Y = [0.3, 0.5, 0.4], [0.1, 0.3, 0.2]


def test_the_data_are_on_the_margin_by_hand_and_off_it_in_floats():
    fx = sum(Fraction(str(v)) for v in X) / 3
    fy = sum(Fraction(str(v)) for v in Y) / 3
    assert fx - fy == Fraction(1, 5)
    assert float(np.mean(X)) - float(np.mean(Y)) != 0.2  # what the old code subtracted


@pytest.mark.parametrize("variance", ["welch", "pooled"])
def test_tost_means_on_the_lower_margin_gives_t_zero_and_p_one_half(variance):
    r = equivalence.tost_means(X, Y, lower=0.2, upper=0.5, variance=variance)
    assert r.extra["statistic_lower"] == 0.0
    assert r.extra["p_lower"] == 0.5
    assert r.p == 0.5 and r.statistic == 0.0  # the lower side is the larger P


def test_tost_means_on_the_upper_margin():
    r = equivalence.tost_means(X, Y, lower=-0.5, upper=0.2, variance="welch")
    assert r.extra["statistic_upper"] == 0.0 and r.extra["p_upper"] == 0.5


def test_one_sample_welch_student_and_noninferiority_on_the_margin():
    assert continuous.one_sample_t(X, margin=0.4, alternative="greater", level=0.95).p == 0.5
    for fn in (continuous.welch_t, continuous.student_t):
        r = fn(X, Y, margin=0.2, alternative="less", level=0.95)
        assert r.statistic == 0.0 and r.p == 0.5
    r = equivalence.noninferiority_means(
        X, Y, margin=0.2, alternative="greater", variance="welch", level=0.95
    )
    assert r.statistic == 0.0 and r.p == 0.5
    # the contrast path's Welch test reads the same decimals
    t, p = samples.welch_test(X, Y, alternative="greater", margin=0.2)
    assert t == 0.0 and p == 0.5


def test_paired_on_the_margin_reads_the_pairs():
    a = [0.3, 0.5, 0.4]
    # b = 0.1, 0.3, 0.2: differences 0.2, 0.2, 0.2 as decimals (no spread; the floats
    # 0.19999999999999998, 0.2, 0.2 have an sd of 1.6e-17)
    r = equivalence.tost_paired(a, [0.1, 0.3, 0.2], lower=0.2, upper=0.5)
    assert r.se == 0.0 and r.p is None and r.statistic is None  # undefined, not t = 1e16
    # differences 0.2, 0.3, 0.1 (mean 1/5 exactly, sd 0.1): t_L = 0 exactly
    r = equivalence.tost_paired(a, [0.1, 0.2, 0.3], lower=0.2, upper=0.5)
    assert r.extra["statistic_lower"] == 0.0 and r.extra["p_lower"] == 0.5
    assert math.isclose(r.se, 0.1 / math.sqrt(3), rel_tol=1e-12)
    r = continuous.paired_t(a, [0.1, 0.2, 0.3], margin=0.2, alternative="greater", level=0.9)
    assert r.statistic == 0.0 and r.p == 0.5
    d = np.subtract(a, [0.1, 0.2, 0.3])
    t, p = samples.paired_t_test(d, alternative="greater", margin=0.2, pairs=(a, [0.1, 0.2, 0.3]))
    assert t == 0.0 and p == 0.5
    se, df = samples.paired_se_df(np.subtract(a, [0.1, 0.3, 0.2]), (a, [0.1, 0.3, 0.2]))
    assert math.isnan(se) and math.isnan(df)


def test_equal_decimals_have_no_spread():
    r = continuous.welch_t([0.1] * 3, [0.7] * 3, margin=0.0, alternative="two-sided", level=0.95)
    assert r.se == 0.0 and r.statistic is None and r.p is None
    assert np.var([0.1] * 3, ddof=1) > 0  # the float variance the old code used
    assert samples.mean_sd([0.7] * 3)[2] == 0.0
    t, p = samples.welch_test([0.1] * 3, [0.7] * 3, alternative="less", margin=0.0)
    assert math.isnan(t) and math.isnan(p)


def test_a_hair_off_the_margin_keeps_its_sign():
    # x mean 0.4000000000001 (by hand, 0.4 + 1e-13): above the margin 0.2 by 1e-13 exactly
    x = [0.3, 0.5, 0.4000000000003]
    r = equivalence.tost_means(x, Y, lower=0.2, upper=0.5, variance="welch")
    assert r.extra["statistic_lower"] > 0 and r.extra["p_lower"] < 0.5
    x = [0.3, 0.5, 0.3999999999997]
    r = equivalence.tost_means(x, Y, lower=0.2, upper=0.5, variance="welch")
    assert r.extra["statistic_lower"] < 0 and r.extra["p_lower"] > 0.5


@pytest.mark.parametrize("seed", range(4))
def test_away_from_the_margin_statsmodels_agrees(seed):
    from statsmodels.stats.weightstats import ttest_ind, ttost_ind, ttost_paired

    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(0.5, 0.2, 12), 2)
    y = np.round(rng.normal(0.45, 0.3, 15), 2)
    for variance, usevar in (("welch", "unequal"), ("pooled", "pooled")):
        r = equivalence.tost_means(x, y, lower=-0.1, upper=0.15, variance=variance)
        p, lo, hi = ttost_ind(x, y, -0.1, 0.15, usevar=usevar)
        assert math.isclose(r.p, p, rel_tol=1e-10)
        assert math.isclose(r.extra["statistic_lower"], lo[0], rel_tol=1e-10)
        assert math.isclose(r.extra["statistic_upper"], hi[0], rel_tol=1e-10)
        t, pt, _ = ttest_ind(x, y, usevar=usevar, value=0.05, alternative="larger")
        fn = continuous.welch_t if variance == "welch" else continuous.student_t
        got = fn(x, y, margin=0.05, alternative="greater", level=0.95)
        assert math.isclose(got.statistic, t, rel_tol=1e-10)
        assert math.isclose(got.p, pt, rel_tol=1e-10)
    y12 = y[:12]
    r = equivalence.tost_paired(x, y12, lower=-0.2, upper=0.2)
    p, lo, hi = ttost_paired(x, y12, -0.2, 0.2)
    assert math.isclose(r.p, p, rel_tol=1e-10)
    assert math.isclose(r.extra["statistic_lower"], lo[0], rel_tol=1e-10)


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2", "margin"),
    [(45, 100, 50, 100, 0.9), (27, 30, 30, 30, 0.9), (33, 100, 30, 100, 1.1)],
)
def test_a_ratio_of_proportions_on_its_margin(k1, n1, k2, n2, margin):
    # by hand: 45/100 ÷ 50/100 = 9/10, 27/30 ÷ 30/30 = 9/10, 33/100 ÷ 30/100 = 11/10; the
    # floats' log(k1 n2) − log(n1 k2) − log(margin) is ±3e-15 (P 0.5000000000000013)
    assert Fraction(k1 * n2, n1 * k2) == Fraction(str(margin))
    r = equivalence.noninferiority_ratio_proportions(
        k1, n1, k2, n2, margin=margin, alternative="greater", level=0.95
    )
    assert r.statistic == 0.0 and r.p == 0.5


def test_a_ratio_of_proportions_off_its_margin_against_statsmodels():
    from statsmodels.stats.proportion import test_proportions_2indep

    for k1, n1, k2, n2, margin in [(46, 100, 50, 100, 0.9), (40, 90, 52, 100, 0.8)]:
        r = equivalence.noninferiority_ratio_proportions(
            k1, n1, k2, n2, margin=margin, alternative="greater", level=0.95
        )
        ref = test_proportions_2indep(
            k1, n1, k2, n2, value=margin, method="log", compare="ratio", alternative="larger"
        )
        assert math.isclose(r.statistic, ref.statistic, rel_tol=1e-10)
        assert math.isclose(r.p, ref.pvalue, rel_tol=1e-10)


def test_a_ratio_of_geometric_means_on_its_margin():
    # geometric means √(0.9 · 3.6) = 1.8 and 2, ratio 0.9 exactly (by hand); √(1.1 · 4.4) = 2.2
    # against 2.2: ratio 1. The floats' mean of logs less log(margin) is −8e-17.
    r = equivalence.noninferiority_ratio_means(
        [0.9, 3.6], [2.0, 2.0], margin=0.9, alternative="greater", level=0.95
    )
    assert r.statistic == 0.0 and r.p == 0.5
    r = continuous.ratio_of_geometric_means(
        [1.1, 4.4], [2.2, 2.2], margin=1, alternative="less", level=0.95
    )
    assert r.statistic == 0.0 and r.p == 0.5


def test_a_ratio_of_geometric_means_off_its_margin_against_statsmodels():
    from statsmodels.stats.weightstats import ttest_ind

    x, y = [0.9, 3.6, 2.5], [2.0, 2.1, 1.7]
    r = continuous.ratio_of_geometric_means(x, y, margin=0.9, alternative="greater", level=0.95)
    t, p, _ = ttest_ind(
        np.log(x), np.log(y), usevar="unequal", value=math.log(0.9), alternative="larger"
    )
    assert math.isclose(r.statistic, t, rel_tol=1e-10)
    assert math.isclose(r.p, p, rel_tol=1e-10)
