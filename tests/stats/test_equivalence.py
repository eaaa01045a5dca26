"""The equivalence family (prereg.stats.equivalence) against independent oracles.

Oracles: statsmodels' tost_proportions_2indep / test_proportions_2indep /
confint_proportions_2indep with method="wald" (unpooled) and correction=False, compare="ratio"
with method="log"; ttost_ind (usevar given: its default is pooled), ttost_paired,
CompareMeans.tconfint_diff, DescrStatsW.tconfint_mean, weightstats.ttest_ind with value=.  The
Farrington–Manning restricted proportions are found here as the root of the likelihood's score
(scipy.optimize.brentq, to 1e-15), not with statsmodels' method="score", which at a non-zero
margin is wrong in statsmodels 0.15 (issue #10269) and is Miettinen–Nurminen by default.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats import proportion as smp
from statsmodels.stats.weightstats import (
    CompareMeans,
    DescrStatsW,
    ttost_ind,
    ttost_paired,
)
from statsmodels.stats.weightstats import ttest_ind as sm_ttest_ind

from prereg.stats import equivalence as eq
from prereg.stats.catalogue import SHAPES, entries
from prereg.stats.methods import MethodError

# statsmodels' two-proportion results compute the ratio and odds ratio too, dividing by a zero
# proportion for the data set with k2 = 0 (the figures compared here are unaffected)
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")

SM_ALT = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}


def close(a, b, rel=1e-12, abs_=1e-15):
    assert a is not None and b is not None
    assert math.isclose(a, b, rel_tol=rel, abs_tol=abs_), (a, b)


def fm_z(k1, n1, k2, n2, delta):
    """Farrington–Manning z at p1 − p2 = delta: the restricted proportions maximise the
    binomial likelihood, i.e. are the root of its derivative in p1 (p2 = p1 − delta)."""

    def score(p1):
        p2 = p1 - delta
        return k1 / p1 - (n1 - k1) / (1 - p1) + k2 / p2 - (n2 - k2) / (1 - p2)

    lo, hi = max(0.0, delta), min(1.0, 1.0 + delta)
    eps = 1e-13
    t1 = optimize.brentq(score, lo + eps, hi - eps, xtol=1e-16, rtol=1e-15, maxiter=500)
    t2 = t1 - delta
    se = math.sqrt(t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2)
    return (k1 / n1 - k2 / n2 - delta) / se


BINOMIAL = [
    (45, 100, 40, 90),
    (88, 100, 91, 100),
    (3, 40, 0, 35),  # a zero count
    (412_345, 1_000_000, 409_876, 1_000_000),
    (15, 100, 10, 100),
]


# -- TOST and intervals for proportions -----------------------------------------------------------


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), BINOMIAL)
@pytest.mark.parametrize(("lower", "upper"), [(-0.1, 0.1), (-0.05, 0.15), (-0.002, 0.004)])
def test_tost_proportions_wald_against_statsmodels(k1, n1, k2, n2, lower, upper):
    r = eq.tost_proportions(k1, n1, k2, n2, lower=lower, upper=upper, se="wald")
    ref = smp.tost_proportions_2indep(k1, n1, k2, n2, lower, upper, method="wald", correction=False)
    close(r.p, ref.pvalue, rel=1e-10, abs_=1e-300)
    close(r.extra["statistic_lower"], ref.results_larger.statistic, rel=1e-11)
    close(r.extra["statistic_upper"], ref.results_smaller.statistic, rel=1e-11)
    close(r.extra["p_lower"], ref.results_larger.pvalue, rel=1e-10, abs_=1e-300)
    close(r.extra["p_upper"], ref.results_smaller.pvalue, rel=1e-10, abs_=1e-300)
    assert r.p == max(r.extra["p_lower"], r.extra["p_upper"])
    assert r.exact["estimate"] == Fraction(k1, n1) - Fraction(k2, n2)


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [b for b in BINOMIAL if b[2] > 0])
@pytest.mark.parametrize(("lower", "upper"), [(-0.1, 0.1), (-0.05, 0.15)])
def test_tost_proportions_farrington_manning_against_likelihood(k1, n1, k2, n2, lower, upper):
    r = eq.tost_proportions(k1, n1, k2, n2, lower=lower, upper=upper, se="farrington-manning")
    z_lo, z_hi = fm_z(k1, n1, k2, n2, lower), fm_z(k1, n1, k2, n2, upper)
    close(r.extra["statistic_lower"], z_lo, rel=1e-9)
    close(r.extra["statistic_upper"], z_hi, rel=1e-9)
    close(r.p, max(stats.norm.sf(z_lo), stats.norm.cdf(z_hi)), rel=1e-8)
    # the reported se is the deciding side's: (d − margin)/z of the side with the larger P
    d = k1 / n1 - k2 / n2
    side_se = (
        (d - lower) / z_lo if stats.norm.sf(z_lo) >= stats.norm.cdf(z_hi) else (d - upper) / z_hi
    )
    close(r.se, side_se, rel=1e-9)


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [b for b in BINOMIAL if b[2] > 0])
def test_farrington_manning_interval_and_tost_agree(k1, n1, k2, n2):
    r = eq.equivalence_interval_proportions(
        k1, n1, k2, n2, alpha=0.05, interval="farrington-manning"
    )
    q = stats.norm.ppf(0.95)
    close(fm_z(k1, n1, k2, n2, r.lower), q, rel=1e-9)
    close(fm_z(k1, n1, k2, n2, r.upper), -q, rel=1e-9)
    # interval inclusion at 1 − 2α is the TOST at α, margins on either side of each bound
    for lower, upper in [
        (r.lower - 1e-6, r.upper + 1e-6),
        (r.lower + 1e-6, r.upper + 1e-6),
        (r.lower - 1e-6, r.upper - 1e-6),
    ]:
        t = eq.tost_proportions(k1, n1, k2, n2, lower=lower, upper=upper, se="farrington-manning")
        assert (t.p <= 0.05) == (lower < r.lower and r.upper < upper)


def test_farrington_manning_bound_at_the_end():
    # every success in arm b, none in arm a: d = −1, no margin above −1 is rejected by "less"
    # nor reached by "greater"
    r = eq.noninferiority_proportions(
        0, 20, 20, 20, margin=-0.5, alternative="greater", se="farrington-manning", level=0.95
    )
    assert r.lower == -1.0 and r.p > 0.5


def test_tost_difference_exactly_at_margin():
    # 15/100 − 10/100 is 0.04999999999999999 in floats (P 0.5000000000000016 at the margin
    # 0.05); the difference less the margin, both as exact fractions (the margin as the decimal
    # it is written as), is 0, so z = 0 and P = ½ exactly
    r = eq.tost_proportions(15, 100, 10, 100, lower=0.05, upper=0.2, se="wald")
    assert r.extra["statistic_lower"] == 0.0 and r.extra["p_lower"] == 0.5 and r.p == 0.5
    r = eq.tost_proportions(15, 100, 10, 100, lower=-0.2, upper=0.05, se="farrington-manning")
    assert r.extra["statistic_upper"] == 0.0 and r.p == 0.5
    r = eq.noninferiority_proportions(
        15, 100, 10, 100, margin=0.05, alternative="greater", se="wald", level=0.95
    )
    assert r.statistic == 0.0 and r.p == 0.5


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), BINOMIAL)
@pytest.mark.parametrize("alpha", [0.05, 0.025, 0.1])
@pytest.mark.parametrize(("interval", "sm_method"), [("wald", "wald"), ("newcombe", "newcomb")])
def test_equivalence_interval_proportions_against_statsmodels(
    k1, n1, k2, n2, alpha, interval, sm_method
):
    r = eq.equivalence_interval_proportions(k1, n1, k2, n2, alpha=alpha, interval=interval)
    lo, hi = smp.confint_proportions_2indep(
        k1, n1, k2, n2, method=sm_method, compare="diff", alpha=2 * alpha, correction=False
    )
    close(r.lower, lo, rel=1e-11, abs_=1e-14)
    close(r.upper, hi, rel=1e-11, abs_=1e-14)
    assert r.extra["level"] == 1 - 2 * alpha


# -- non-inferiority for proportions --------------------------------------------------------------


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), BINOMIAL)
@pytest.mark.parametrize(("margin", "alternative"), [(-0.05, "greater"), (0.1, "less")])
def test_noninferiority_proportions_against_oracles(k1, n1, k2, n2, margin, alternative):
    r = eq.noninferiority_proportions(
        k1, n1, k2, n2, margin=margin, alternative=alternative, se="wald", level=0.975
    )
    ref = smp.test_proportions_2indep(
        k1,
        n1,
        k2,
        n2,
        value=margin,
        method="wald",
        alternative=SM_ALT[alternative],
        correction=False,
    )
    close(r.statistic, ref.statistic, rel=1e-11)
    close(r.p, ref.pvalue, rel=1e-10, abs_=1e-300)
    lo, hi = smp.confint_proportions_2indep(
        k1, n1, k2, n2, method="wald", alpha=0.05, correction=False
    )
    if alternative == "greater":
        close(r.lower, lo, rel=1e-11, abs_=1e-14)
        assert r.upper is None
    else:
        close(r.upper, hi, rel=1e-11, abs_=1e-14)
        assert r.lower is None
    if k2 > 0:
        rf = eq.noninferiority_proportions(
            k1,
            n1,
            k2,
            n2,
            margin=margin,
            alternative=alternative,
            se="farrington-manning",
            level=0.975,
        )
        z = fm_z(k1, n1, k2, n2, margin)
        close(rf.statistic, z, rel=1e-9)
        close(rf.p, stats.norm.sf(z) if alternative == "greater" else stats.norm.cdf(z), rel=1e-8)
        # the score bound: the margin at which the Farrington–Manning z is ±Φ⁻¹(level)
        q = stats.norm.ppf(0.975)
        if alternative == "greater":
            close(fm_z(k1, n1, k2, n2, rf.lower), q, rel=1e-9)
            assert rf.upper is None
        else:
            close(fm_z(k1, n1, k2, n2, rf.upper), -q, rel=1e-9)
            assert rf.lower is None


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [b for b in BINOMIAL if b[2] > 0])
@pytest.mark.parametrize(("margin", "alternative"), [(0.9, "greater"), (1.2, "less")])
def test_noninferiority_ratio_proportions_against_statsmodels(k1, n1, k2, n2, margin, alternative):
    r = eq.noninferiority_ratio_proportions(
        k1, n1, k2, n2, margin=margin, alternative=alternative, level=0.95
    )
    ref = smp.test_proportions_2indep(
        k1, n1, k2, n2, value=margin, method="log", compare="ratio", alternative=SM_ALT[alternative]
    )
    close(r.statistic, ref.statistic, rel=1e-10)
    close(r.p, ref.pvalue, rel=1e-9)
    assert r.exact["estimate"] == Fraction(k1 * n2, n1 * k2)
    lo, hi = smp.confint_proportions_2indep(
        k1, n1, k2, n2, method="log", compare="ratio", alpha=0.1
    )
    close(
        r.lower if alternative == "greater" else r.upper,
        lo if alternative == "greater" else hi,
        rel=1e-11,
    )


def test_ratio_zero_counts():
    r = eq.noninferiority_ratio_proportions(
        0, 10, 4, 10, margin=0.9, alternative="greater", level=0.95
    )
    assert r.estimate == 0 and r.p is None
    r = eq.noninferiority_ratio_proportions(
        3, 10, 0, 10, margin=0.9, alternative="greater", level=0.95
    )
    assert r.estimate is None and r.p is None


# -- means ----------------------------------------------------------------------------------------

RNG = np.random.default_rng(11)
SAMPLES = [
    (RNG.normal(10, 2, 25), RNG.normal(10.3, 3, 31)),
    (np.array([3, 4, 4, 6, 7, 9]), np.array([2, 5, 5, 6, 8])),
    (RNG.normal(0, 1, 500_000), RNG.normal(0.001, 1.2, 400_000)),
]


@pytest.mark.parametrize(("x", "y"), SAMPLES)
@pytest.mark.parametrize(("lower", "upper"), [(-1.0, 1.0), (-0.5, 2.0), (-0.01, 0.01)])
@pytest.mark.parametrize(("variance", "usevar"), [("welch", "unequal"), ("pooled", "pooled")])
def test_tost_means_against_statsmodels(x, y, lower, upper, variance, usevar):
    r = eq.tost_means(x, y, lower=lower, upper=upper, variance=variance)
    p, (t1, p1, df1), (t2, p2, df2) = ttost_ind(x, y, lower, upper, usevar=usevar)
    close(r.p, p, rel=1e-9, abs_=1e-300)
    close(r.extra["statistic_lower"], t1, rel=1e-9)
    close(r.extra["statistic_upper"], t2, rel=1e-9)
    close(r.extra["p_lower"], p1, rel=1e-9, abs_=1e-300)
    close(r.extra["p_upper"], p2, rel=1e-9, abs_=1e-300)
    close(r.df, df1, rel=1e-11)
    # the 1 − 2α interval lies inside the margins exactly when the TOST rejects at α
    ri = eq.equivalence_interval_means(x, y, alpha=0.05, variance=variance)
    lo, hi = CompareMeans.from_data(x, y).tconfint_diff(alpha=0.1, usevar=usevar)
    close(ri.lower, lo, rel=1e-11, abs_=1e-14)
    close(ri.upper, hi, rel=1e-11, abs_=1e-14)
    assert (r.p <= 0.05) == (lower < ri.lower and ri.upper < upper)


@pytest.mark.parametrize(("lower", "upper"), [(-1.0, 1.0), (-0.2, 0.6)])
def test_tost_paired_against_statsmodels(lower, upper):
    x = SAMPLES[0][0]
    y = x + RNG.normal(0.1, 0.5, x.size)
    r = eq.tost_paired(x, y, lower=lower, upper=upper)
    p, (t1, p1, _), (t2, p2, _) = ttost_paired(x, y, lower, upper)
    close(r.p, p, rel=1e-9)
    close(r.extra["statistic_lower"], t1, rel=1e-9)
    close(r.extra["statistic_upper"], t2, rel=1e-9)
    ri = eq.equivalence_interval_paired(x, y, alpha=0.05)
    lo, hi = DescrStatsW(x - y).tconfint_mean(alpha=0.1)
    close(ri.lower, lo, rel=1e-11)
    close(ri.upper, hi, rel=1e-11)


@pytest.mark.parametrize(("x", "y"), SAMPLES)
@pytest.mark.parametrize(("margin", "alternative"), [(-0.5, "greater"), (0.7, "less")])
@pytest.mark.parametrize(("variance", "usevar"), [("welch", "unequal"), ("pooled", "pooled")])
def test_noninferiority_means_against_statsmodels(x, y, margin, alternative, variance, usevar):
    r = eq.noninferiority_means(
        x, y, margin=margin, alternative=alternative, variance=variance, level=0.975
    )
    t, p, df = sm_ttest_ind(x, y, alternative=SM_ALT[alternative], usevar=usevar, value=margin)
    close(r.statistic, t, rel=1e-9)
    close(r.p, p, rel=1e-9, abs_=1e-300)
    lo, hi = CompareMeans.from_data(x, y).tconfint_diff(
        alpha=0.025, alternative=SM_ALT[alternative], usevar=usevar
    )
    bound, ref = (r.lower, lo) if alternative == "greater" else (r.upper, hi)
    close(bound, ref, rel=1e-11)
    assert r.method == "noninferiority-means"


@pytest.mark.parametrize(("margin", "alternative"), [(0.8, "greater"), (1.25, "less")])
def test_noninferiority_ratio_means_against_statsmodels(margin, alternative):
    x, y = RNG.lognormal(0, 0.5, 40), RNG.lognormal(0.1, 0.6, 35)
    r = eq.noninferiority_ratio_means(x, y, margin=margin, alternative=alternative, level=0.95)
    t, p, _ = sm_ttest_ind(
        np.log(x),
        np.log(y),
        alternative=SM_ALT[alternative],
        usevar="unequal",
        value=math.log(margin),
    )
    close(r.statistic, t, rel=1e-9)
    close(r.p, p, rel=1e-9)


def test_means_degenerate():
    r = eq.tost_means([1.0, 1.0], [1.0, 1.0], lower=-1, upper=1, variance="welch")
    assert r.se == 0 and r.p is None
    r = eq.tost_paired([1.0], [2.0], lower=-1, upper=1)
    assert r.estimate == -1 and r.p is None
    r = eq.tost_proportions(0, 0, 3, 5, lower=-0.1, upper=0.1, se="wald")
    assert r.estimate is None and r.p is None
    r = eq.tost_proportions(0, 5, 0, 5, lower=-0.1, upper=0.1, se="wald")
    assert r.estimate == 0 and r.p is None


# -- bad input, the catalogue ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: eq.tost_proportions(5, 10, 3, 10, lower=0.1, upper=-0.1, se="wald"),
            "below upper",
        ),
        (
            lambda: eq.tost_proportions(5, 10, 3, 10, lower=-1.5, upper=0.1, se="wald"),
            "between -1 and 1",
        ),
        (
            lambda: eq.tost_proportions(11, 10, 3, 10, lower=-0.1, upper=0.1, se="wald"),
            "must not exceed",
        ),
        (lambda: eq.tost_proportions(5, 10, 3, 10, lower=-0.1, upper=0.1, se="score"), "se"),
        (
            lambda: eq.equivalence_interval_proportions(5, 10, 3, 10, alpha=0.5, interval="wald"),
            "alpha",
        ),
        (
            lambda: eq.noninferiority_proportions(
                5, 10, 3, 10, margin=-0.1, alternative="two-sided", se="wald", level=0.95
            ),
            "alternative",
        ),
        (
            lambda: eq.noninferiority_ratio_proportions(
                5, 10, 3, 10, margin=0, alternative="greater", level=0.95
            ),
            "positive",
        ),
        (lambda: eq.tost_means([1, 2], [3, 4], lower=-1, upper=1, variance="unequal"), "variance"),
        (
            lambda: eq.noninferiority_means(
                [1, 2], [3, 4], margin=-1, alternative="greater", variance="welch", level=-0.2
            ),
            "level",
        ),
        (lambda: eq.tost_paired([1, 2, 3], [3, 4], lower=-1, upper=1), "pair up"),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_complete():
    es = {n: e for n, e in entries().items() if e.family == "equivalence"}
    assert set(es) == {
        "tost-proportions",
        "equivalence-interval-proportions",
        "noninferiority-proportions",
        "noninferiority-ratio-proportions",
        "tost-means",
        "tost-paired",
        "equivalence-interval-means",
        "equivalence-interval-paired",
        "noninferiority-means",
        "noninferiority-ratio-means",
    }
    for e in es.values():
        assert e.shape in SHAPES and callable(e.load()) and e.reports
        for name in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, name).strip(), (e.name, name)
