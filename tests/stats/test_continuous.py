"""The continuous family (prereg.stats.continuous) against independent oracles.

Oracles: scipy.stats.ttest_1samp / ttest_rel / ttest_ind and their confidence_interval
(ttest_ind is Student's pooled test unless equal_var=False); statsmodels' ttest_ind with
value= (a margin) and CompareMeans.tconfint_diff (usevar "unequal" or "pooled"; alternatives
spelled "larger"/"smaller"); scipy.stats.mannwhitneyu with method and use_continuity given
(its defaults are method="auto", which picks exact or asymptotic by the data, and
use_continuity=True); for the Hodges–Lehmann interval, the null distribution of U by
enumerating every split of the ranks and the sorted differences by a plain loop.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW
from statsmodels.stats.weightstats import ttest_ind as sm_ttest_ind

from prereg.stats import continuous
from prereg.stats.catalogue import SHAPES, entries
from prereg.stats.methods import MethodError

SM_ALT = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}
ALTS = ["two-sided", "greater", "less"]


def finite(v):
    """A library's bound, None where it is infinite (prereg reports a missing bound as None)."""
    return None if math.isinf(v) else float(v)


def same_bound(mine, ref, rel):
    ref = finite(ref)
    assert (mine is None and ref is None) or math.isclose(mine, ref, rel_tol=rel, abs_tol=1e-12)


def close(a, b, rel=1e-12, abs_=1e-15):
    assert a is not None and b is not None
    assert math.isclose(a, b, rel_tol=rel, abs_tol=abs_), (a, b)


RNG = np.random.default_rng(7)
PAIRS = [
    (RNG.normal(1.0, 2.0, 12), RNG.normal(0.2, 0.5, 9)),
    (np.array([3, 5, 5, 8, 9, 12]), np.array([1, 2, 2, 4])),  # whole numbers: exact means
    (RNG.normal(100, 15, 1_000_000), RNG.normal(100.02, 14, 800_000)),
    (RNG.exponential(1.0, 30), RNG.exponential(2.0, 40)),
]


# -- t tests --------------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("margin", [0.0, 0.7, -1.25])
@pytest.mark.parametrize("data", PAIRS[:3])
def test_one_sample_and_paired_against_scipy(data, margin, alternative):
    x = data[0]
    r = continuous.one_sample_t(x, margin=margin, alternative=alternative, level=0.9)
    ref = stats.ttest_1samp(x, popmean=margin, alternative=alternative)
    close(r.statistic, ref.statistic, rel=1e-9)
    close(r.p, ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(confidence_level=0.9)
    same_bound(r.lower, ci.low, 1e-12)
    same_bound(r.upper, ci.high, 1e-12)
    assert r.df == len(x) - 1
    y = x[::-1] * 0.5 + 1.0
    rp = continuous.paired_t(x, y, margin=margin, alternative=alternative, level=0.95)
    refp = stats.ttest_1samp(x - y, popmean=margin, alternative=alternative)
    close(rp.statistic, refp.statistic, rel=1e-9)
    close(rp.p, refp.pvalue, rel=1e-9)
    if margin == 0.0:
        rel = stats.ttest_rel(x, y, alternative=alternative)
        close(rp.p, rel.pvalue, rel=1e-9)


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -2.0])
@pytest.mark.parametrize("data", PAIRS)
@pytest.mark.parametrize("usevar", ["unequal", "pooled"])
def test_two_sample_t_against_statsmodels(data, margin, alternative, usevar):
    x, y = data
    fn = continuous.welch_t if usevar == "unequal" else continuous.student_t
    r = fn(x, y, margin=margin, alternative=alternative, level=0.95)
    t, p, df = sm_ttest_ind(x, y, alternative=SM_ALT[alternative], usevar=usevar, value=margin)
    close(r.statistic, t, rel=1e-9)
    close(r.p, p, rel=1e-8, abs_=1e-300)
    close(r.df, df, rel=1e-11)
    lo, hi = CompareMeans.from_data(x, y).tconfint_diff(
        alpha=0.05, alternative=SM_ALT[alternative], usevar=usevar
    )
    same_bound(r.lower, lo, 1e-11)
    same_bound(r.upper, hi, 1e-11)
    if margin == 0.0:  # scipy too
        ref = stats.ttest_ind(x, y, equal_var=usevar == "pooled", alternative=alternative)
        close(r.p, ref.pvalue, rel=1e-8, abs_=1e-300)


def test_exact_means_of_whole_numbers():
    x, y = PAIRS[1]
    r = continuous.welch_t(x, y, margin=0, alternative="two-sided", level=0.95)
    assert r.exact["estimate"] == Fraction(42, 6) - Fraction(9, 4)
    r = continuous.one_sample_t([1, 2, 2], margin=0, alternative="greater", level=0.95)
    assert r.exact["estimate"] == Fraction(5, 3)
    r = continuous.paired_t([1, 2, 2], [0, 0, 1], margin=0, alternative="greater", level=0.95)
    assert r.exact["estimate"] == Fraction(4, 3)
    assert (
        "estimate"
        not in continuous.welch_t(
            [0.5, 1.0], [1.0, 2.0], margin=0, alternative="less", level=0.9
        ).exact
    )


def test_t_degenerate():
    r = continuous.welch_t([1.0], [2.0, 3.0], margin=0, alternative="two-sided", level=0.95)
    assert r.estimate == -1.5 and r.se is None and r.p is None
    r = continuous.welch_t([2.0, 2.0], [2.0, 2.0], margin=0, alternative="two-sided", level=0.95)
    assert r.se == 0 and r.statistic is None and r.p is None and r.lower is None
    r = continuous.student_t([], [2.0, 3.0], margin=0, alternative="less", level=0.95)
    assert r.estimate is None and r.p is None
    r = continuous.one_sample_t([], margin=0, alternative="less", level=0.95)
    assert r.estimate is None
    # Student's pooled t works with one value in an arm (its variance term has weight 0)
    r = continuous.student_t([1.0], [2.0, 3.0, 5.0], margin=0, alternative="two-sided", level=0.95)
    ref = stats.ttest_ind([1.0], [2.0, 3.0, 5.0])
    close(r.p, ref.pvalue, rel=1e-10)


# -- ratio of geometric means ---------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("margin", [1.0, 0.8, 1.25])
def test_ratio_of_geometric_means_against_statsmodels(margin, alternative):
    x, y = PAIRS[3]
    r = continuous.ratio_of_geometric_means(x, y, margin=margin, alternative=alternative, level=0.9)
    lx, ly = np.log(x), np.log(y)
    t, p, df = sm_ttest_ind(
        lx, ly, alternative=SM_ALT[alternative], usevar="unequal", value=math.log(margin)
    )
    close(r.statistic, t, rel=1e-9, abs_=1e-12)
    close(r.p, p, rel=1e-9)
    close(r.df, df, rel=1e-11)
    close(r.estimate, math.exp(lx.mean() - ly.mean()), rel=1e-13)
    lo, hi = CompareMeans.from_data(lx, ly).tconfint_diff(
        alpha=0.1, alternative=SM_ALT[alternative], usevar="unequal"
    )
    # a one-sided interval of the log ratio has an infinite end: no bound of the ratio there
    same_bound(r.lower, math.inf if math.isinf(lo) else math.exp(lo), 1e-12)
    same_bound(r.upper, math.inf if math.isinf(hi) else math.exp(hi), 1e-12)


def test_ratio_of_geometric_means_refuses_non_positive():
    with pytest.raises(MethodError, match="positive"):
        continuous.ratio_of_geometric_means(
            [1.0, 0.0], [1.0, 2.0], margin=1.0, alternative="greater", level=0.95
        )
    with pytest.raises(MethodError, match="ratio"):
        continuous.ratio_of_geometric_means(
            [1.0, 2.0], [1.0, 2.0], margin=-1.0, alternative="greater", level=0.95
        )


# -- Mann–Whitney ---------------------------------------------------------------------------------

# R's ?wilcox.test example (Hollander & Wolfe's permeability data): W = 35, exact one-sided
# P = 0.1272 (scipy's tests give R's 0.1272061272061)
PERM_X = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46]
PERM_Y = [1.15, 0.88, 0.90, 0.74, 1.21]


def test_mann_whitney_published():
    r = continuous.mann_whitney(
        PERM_X, PERM_Y, method="exact", correction=False, alternative="greater"
    )
    assert r.statistic == 35
    close(r.p, 0.1272061272061, rel=1e-12)
    assert r.exact["estimate"] == Fraction(35, 50)


MW_DATA = [
    (PERM_X, PERM_Y),
    (RNG.normal(0, 1, 9), RNG.normal(0.8, 1, 11)),
    (RNG.integers(0, 6, 25), RNG.integers(1, 7, 30)),  # ties
    (RNG.normal(0, 1, 3000), RNG.normal(0.05, 1, 4000)),
]


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("data", MW_DATA)
@pytest.mark.parametrize(
    ("method", "correction"), [("asymptotic", True), ("asymptotic", False), ("exact", False)]
)
def test_mann_whitney_against_scipy(data, alternative, method, correction):
    x, y = (np.asarray(v, dtype=float) for v in data)
    has_ties = len(np.unique(np.r_[x, y])) < len(x) + len(y)
    if method == "exact" and len(x) * len(y) > 20_000:
        with pytest.raises(MethodError, match="asymptotic"):
            continuous.mann_whitney(
                x, y, method=method, correction=correction, alternative=alternative
            )
        return
    r = continuous.mann_whitney(x, y, method=method, correction=correction, alternative=alternative)
    ref = stats.mannwhitneyu(
        x, y, method=method, use_continuity=correction, alternative=alternative
    )
    assert r.statistic == ref.statistic
    if method == "exact" and has_ties:
        assert r.p is None and r.extra["undefined"]  # scipy would ignore the ties
    else:
        close(r.p, ref.pvalue, rel=1e-11)


def test_mann_whitney_exact_against_enumeration():
    x, y = [1.2, 3.4, 0.5, 7.7], [2.2, 2.9, 8.1, 0.1, 5.0]
    values = x + y
    ranks = {v: i for i, v in enumerate(sorted(values))}
    u_obs = sum(a > b for a in x for b in y)
    us = []
    for chosen in itertools.combinations(range(9), 4):
        us.append(sum(chosen) - 4 * 3 / 2)  # Σ (rank − 1) − m(m − 1)/2 = U
    assert u_obs == sum(ranks[v] for v in x) - 6
    r = continuous.mann_whitney(x, y, method="exact", correction=False, alternative="less")
    assert r.exact["p"] == Fraction(sum(u <= u_obs for u in us), len(us))


# -- Hodges–Lehmann -------------------------------------------------------------------------------


def _u_null(m, n):
    """The null distribution of U by enumerating every split of the ranks 0..N-1."""
    us = [sum(c) - m * (m - 1) // 2 for c in itertools.combinations(range(m + n), m)]
    return us


@pytest.mark.parametrize("level", [0.95, 0.9, 0.8, 0.5])
@pytest.mark.parametrize(
    ("x", "y"),
    [(PERM_X, PERM_Y), ([5.1, 3.2, 8.8, 1.0, 4.4, 6.3], [2.5, 0.7, 3.9, 1.8, 2.2, 0.4, 5.5])],
)
def test_hodges_lehmann_exact_against_enumeration(x, y, level):
    m, n = len(x), len(y)
    diffs = sorted(a - b for a in x for b in y)
    mn = m * n
    median = diffs[mn // 2] if mn % 2 else (diffs[mn // 2 - 1] + diffs[mn // 2]) / 2
    us = _u_null(m, n)
    alpha = 1 - level
    c = max(
        cc
        for cc in range(0, mn + 1)
        if Fraction(sum(u <= cc - 1 for u in us), len(us)) <= Fraction(alpha) / 2
    )
    r = continuous.hodges_lehmann(x, y, level=level, method="exact")
    assert r.estimate == median
    assert r.extra["c"] == c
    assert (r.lower, r.upper) == (diffs[c - 1], diffs[mn - c])
    close(r.extra["confidence"], 1 - 2 * sum(u <= c - 1 for u in us) / len(us), rel=1e-14)
    assert r.extra["confidence"] >= level


def test_hodges_lehmann_asymptotic_and_unbounded():
    # Hollander & Wolfe's large-sample C_alpha = mn/2 - z sqrt(mn(m+n+1)/12), its whole part
    # (as SAS's Moses limits): permeability data, 95%: 25 - 1.96·sqrt(50·16/12) = 8.997 -> 8
    r = continuous.hodges_lehmann(PERM_X, PERM_Y, level=0.95, method="asymptotic")
    diffs = sorted(a - b for a in PERM_X for b in PERM_Y)
    assert r.extra["c"] == 8 and (r.lower, r.upper) == (diffs[7], diffs[42])
    # 2 against 2 values: P(U <= 0) = 1/6 > 0.025, no order statistic can bound a 95% interval
    r = continuous.hodges_lehmann([1.0, 2.0], [0.5, 3.0], level=0.95, method="exact")
    assert r.lower is None and r.upper is None and r.estimate == -0.25 and r.extra["c"] == 0


def test_hodges_lehmann_sas_published_example():
    # SAS PROC NPAR1WAY HL(refclass=B) on Hollander, Wolfe & Chicken's example, as published
    # by the CAMIS project (psiaims.github.io/CAMIS, "Non-parametric point estimation in
    # SAS"): location shift (A - B) 0.5600, asymptotic (Moses) 95% limits -0.3700, 1.1830.
    # The data have ties: the exact interval is not given (SAS's exact limits -0.22, 1.082
    # come from the permutation distribution with ties, which is not implemented).
    a = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    b = [0.878, 0.647, 0.598, 2.050, 1.060, 1.290, 1.060, 3.140, 1.290]
    r = continuous.hodges_lehmann(a, b, level=0.95, method="asymptotic")
    assert round(r.estimate, 4) == 0.56
    assert (round(r.lower, 4), round(r.upper, 4)) == (-0.37, 1.183)
    re = continuous.hodges_lehmann(a, b, level=0.95, method="exact")
    assert re.estimate == r.estimate and re.lower is None and re.extra["undefined"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(-50, 50), min_size=1, max_size=7),
    st.lists(st.integers(-50, 50), min_size=1, max_size=7),
)
def test_hodges_lehmann_median_property(x, y):
    r = continuous.hodges_lehmann(x, y, level=0.9, method="asymptotic")
    assert r.estimate == float(np.median(np.subtract.outer(x, y)))
    # the interval's bounds are the c-th smallest and c-th largest differences
    diffs = sorted(a - b for a in x for b in y)
    c = math.floor(
        len(diffs) / 2
        - stats.norm.ppf(0.95) * math.sqrt(len(x) * len(y) * (len(x) + len(y) + 1) / 12)
    )
    if c >= 1:
        assert (r.lower, r.upper) == (diffs[c - 1], diffs[-c])
        assert r.lower <= r.estimate <= r.upper
    else:
        assert r.lower is None and r.upper is None


def _exact_diffs(x, y) -> list[Fraction]:
    return sorted(Fraction(repr(a)) - Fraction(repr(b)) for a in x for b in y)


def test_hodges_lehmann_is_exact_on_the_decimals_the_data_write():
    """0.3 − 0.1 is 0.19999999999999998 in floats: the shift of these data is exactly 1/5 (it
    was compared as that float, so `estimate ge 0.2` failed on data exactly on it), and each
    bound is the exact difference of the decimals at its order statistic."""
    x, y = [0.3, 0.45, 0.6, 0.75, 0.9], [0.1, 0.25, 0.42, 0.55, 0.71]
    r = continuous.hodges_lehmann(x, y, level=0.9, method="exact")
    diffs = _exact_diffs(x, y)
    assert r.exact["estimate"] == diffs[12] == Fraction(1, 5)
    assert r.estimate == float(np.median(np.subtract.outer(x, y))) < 0.2  # the float as before
    c = r.extra["c"]
    assert (r.exact["lower"], r.exact["upper"]) == (diffs[c - 1], diffs[25 - c])
    # an even number of pairs: the mean of the middle two, exactly
    r = continuous.hodges_lehmann(x[:4], y[:4], level=0.9, method="asymptotic")
    diffs = _exact_diffs(x[:4], y[:4])
    assert r.exact["estimate"] == (diffs[7] + diffs[8]) / 2


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-300, 300), min_size=1, max_size=8),
    st.lists(st.integers(-300, 300), min_size=1, max_size=8),
    st.sampled_from([10, 100, 1000]),
)
def test_hodges_lehmann_exact_order_statistics_against_fractions(xs, ys, scale):
    """Decimals with near ties (0.29 − 0.09 and 0.3 − 0.1 are both 1/5, their floats differ):
    every exact figure is the order statistic of the exact differences."""
    x, y = [v / scale for v in xs], [v / scale for v in ys]
    r = continuous.hodges_lehmann(x, y, level=0.8, method="asymptotic")
    diffs = _exact_diffs(x, y)
    mn = len(diffs)
    median = diffs[mn // 2] if mn % 2 else (diffs[mn // 2 - 1] + diffs[mn // 2]) / 2
    assert r.exact["estimate"] == median
    c = r.extra["c"]
    if c >= 1:
        assert (r.exact["lower"], r.exact["upper"]) == (diffs[c - 1], diffs[mn - c])
    else:
        assert "lower" not in r.exact and "upper" not in r.exact


# -- bad input, the catalogue ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: continuous.one_sample_t([1, 2], margin=0, alternative="bigger", level=0.9),
            "alternative",
        ),
        (
            lambda: continuous.one_sample_t([1, 2], margin="0", alternative="less", level=0.9),
            "margin",
        ),
        (
            lambda: continuous.welch_t([1, 2], [3, 4], margin=0, alternative="less", level=1.0),
            "level",
        ),
        (
            lambda: continuous.welch_t([[1, 2]], [3, 4], margin=0, alternative="less", level=0.9),
            "1-d",
        ),
        (
            lambda: continuous.paired_t([1, 2], [3], margin=0, alternative="less", level=0.9),
            "pair up",
        ),
        (
            lambda: continuous.mann_whitney(
                [1], [2], method="exact", correction=True, alternative="less"
            ),
            "asymptotic",
        ),
        (
            lambda: continuous.mann_whitney(
                [1], [2], method="auto", correction=False, alternative="less"
            ),
            "method",
        ),
        (
            lambda: continuous.mann_whitney(
                [1], [2], method="exact", correction=None, alternative="less"
            ),
            "correction",
        ),
        (lambda: continuous.hodges_lehmann([1], [np.inf], level=0.9, method="exact"), "finite"),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_complete():
    # the paired t test is the paired family's entry (continuous.paired_t is its twin, tested
    # above against scipy)
    es = {n: e for n, e in entries().items() if e.family == "continuous"}
    assert set(es) == {
        "one-sample-t",
        "welch-t",
        "student-t",
        "mann-whitney",
        "hodges-lehmann",
        "ratio-of-geometric-means",
    }
    for e in es.values():
        assert e.shape in SHAPES and callable(e.load()) and e.reports
        for name in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, name).strip(), (e.name, name)


def test_descr_stats_interval_agrees():
    # the one-sample interval once more, through statsmodels (DescrStatsW with unit weights)
    x = PAIRS[0][0]
    r = continuous.one_sample_t(x, margin=0, alternative="two-sided", level=0.99)
    lo, hi = DescrStatsW(x).tconfint_mean(alpha=0.01)
    close(r.lower, lo, rel=1e-12)
    close(r.upper, hi, rel=1e-12)
