"""Dunnett's many-to-one comparison (prereg.stats.dunnett) against independent oracles:
scipy.stats.dunnett (randomised quasi-Monte Carlo, so its P values and bounds agree to its own
error, about 1e-3), Student's t where the family has one treatment (the multivariate t is then
the t: P and the bound to 1e-7), Dunnett's published critical values, and the pooled t
statistics by hand."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.stats.dunnett import critical, dunnett, exceedance
from prereg.stats.methods import MethodError

RNG = np.random.default_rng(11)
LAYOUTS = [(8, 8, 8, 8), (5, 9, 12), (30, 4), (3, 50, 50, 7), (12, 6, 6, 6, 6, 6)]


def _groups(sizes, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(0.35 * j, 1.0, m).round(3) for j, m in enumerate(sizes)]


@pytest.mark.parametrize("sizes", LAYOUTS)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_against_scipy_dunnett(sizes, alternative):
    gs = _groups(sizes, sum(sizes))
    ref = stats.dunnett(
        *gs[1:], control=gs[0], alternative=alternative, random_state=np.random.default_rng(0)
    )
    ci = ref.confidence_interval(0.95)
    for i in range(2, len(gs) + 1):
        r = dunnett(gs, treatment=i, alternative=alternative, level=0.95)
        assert r.statistic == pytest.approx(ref.statistic[i - 2], rel=1e-12)
        assert r.p == pytest.approx(ref.pvalue[i - 2], abs=2e-3)
        assert r.estimate == pytest.approx(gs[i - 1].mean() - gs[0].mean(), rel=1e-12)
        assert r.df == sum(sizes) - len(sizes)
        if alternative == "less":
            assert r.lower is None
        else:
            assert r.lower == pytest.approx(ci.low[i - 2], abs=5e-3)
        if alternative == "greater":
            assert r.upper is None
        else:
            assert r.upper == pytest.approx(ci.high[i - 2], abs=5e-3)


@pytest.mark.parametrize("sizes", [(3, 50, 50, 7), (10, 4, 25)])
@pytest.mark.parametrize("two_sided", [True, False])
def test_critical_value_against_multivariate_t(sizes, two_sided):
    """The critical value leaves 0.05 above it under scipy's multivariate t (Genz's
    quasi-Monte Carlo with 5 million points: to about 1e-6), where scipy.stats.dunnett's own
    interval is off by about 3e-3 (sizes 3, 50, 50, 7)."""
    n0 = sizes[0]
    lam = np.array([math.sqrt(m / (m + n0)) for m in sizes[1:]])
    df = sum(sizes) - len(sizes)
    c = critical(0.95, lam, df, two_sided)
    shape = np.outer(lam, lam)
    np.fill_diagonal(shape, 1.0)
    mvt = stats.multivariate_t(shape=shape, df=df)
    upper = np.full(lam.size, c)
    if two_sided:  # P(-c < T <= c) by inclusion-exclusion over the 2^m corners
        inside = 0.0
        for corner in itertools.product((1.0, -1.0), repeat=lam.size):
            sign = (-1) ** sum(v < 0 for v in corner)
            inside += sign * mvt.cdf(c * np.array(corner), maxpts=5_000_000, random_state=1)
    else:
        inside = mvt.cdf(upper, maxpts=5_000_000, random_state=1)
    assert 1.0 - inside == pytest.approx(0.05, abs=1e-5)
    assert exceedance(c, lam, df, two_sided) == pytest.approx(0.05, abs=1e-10)


def test_the_pooled_t_by_hand():
    gs = [np.array([3.0, 5.0, 4.0]), np.array([6.0, 7.0, 8.0, 7.0]), np.array([1.0, 2.0])]
    # s² = (2 + 2 + 1/2)/(9 − 3) = 3/4; ft at position 2: d = 7 − 4 = 3, se² = 3/4 (1/4 + 1/3)
    r = dunnett(gs, treatment=2, alternative="two-sided", level=0.95)
    assert r.exact["estimate"] == Fraction(3)
    assert r.se == pytest.approx(math.sqrt(0.75 * (1 / 4 + 1 / 3)), rel=1e-14)
    assert r.statistic == pytest.approx(3 / math.sqrt(0.75 * (1 / 4 + 1 / 3)), rel=1e-14)
    assert r.extra["pooled_variance"] == pytest.approx(0.75, rel=1e-14)
    assert r.counts == {"n": [3, 4, 2], "control": 1, "treatment": 2}


@pytest.mark.parametrize("df", [1, 3, 10, 100, 5000])
@pytest.mark.parametrize("lam", [0.2, 0.7071067811865476, 0.98])
@pytest.mark.parametrize("c", [0.3, 1.7, 3.9])
def test_one_treatment_is_students_t(df, lam, c):
    """With one treatment the family is one t: P(|T| > c) and P(T > c) to 1e-7 relative."""
    assert exceedance(c, [lam], df, True) == pytest.approx(2 * stats.t.sf(c, df), rel=1e-7)
    assert exceedance(c, [lam], df, False) == pytest.approx(stats.t.sf(c, df), rel=1e-7)


def test_one_treatment_against_ttest():
    gs = _groups((9, 13), 5)
    for alternative in ("two-sided", "greater", "less"):
        r = dunnett(gs, treatment=2, alternative=alternative, level=0.9)
        ref = stats.ttest_ind(gs[1], gs[0], alternative=alternative)
        assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert r.p == pytest.approx(ref.pvalue, rel=1e-7)
        ci = ref.confidence_interval(0.9)
        if alternative != "less":
            assert r.lower == pytest.approx(ci.low, rel=1e-7)
        if alternative != "greater":
            assert r.upper == pytest.approx(ci.high, rel=1e-7)


@pytest.mark.parametrize(
    ("m", "df", "two_sided", "table"),
    [
        # Dunnett (1955) tables, equal groups (correlation 1/2), alpha 0.05
        (3, 20, True, 2.54),
        (3, 20, False, 2.19),
        (4, 30, True, 2.58),
        (5, 30, True, 2.66),
        (2, 10, False, 2.15),
        (9, 60, True, 2.77),
    ],
)
def test_published_critical_values(m, df, two_sided, table):
    c = critical(0.95, [math.sqrt(0.5)] * m, df, two_sided)
    assert round(c, 2) == table


def test_equal_means_give_t_zero():
    """Decimal data whose control and treatment means are equal as written give t = 0, even
    where the floats' means differ by an ulp."""
    base = [0.1, 0.2, 0.7, 0.4]
    same = [0.7, 0.1, 0.2, 0.4]  # the same decimals summed in another order
    other = [0.9, 1.1, 1.0, 1.3]
    r = dunnett([base, same, other], treatment=2, alternative="greater", level=0.95)
    assert r.statistic == 0.0
    # P(max of two correlated t's > 0) is above 1/2: the family, not one t
    assert 0.5 < r.p < 1.0


def test_degenerate():
    r = dunnett([[1.0, 1.0], [2.0, 2.0], [3.0]], treatment=3, alternative="two-sided", level=0.9)
    assert r.exact["estimate"] == 2 and r.p is None and r.se is None
    r = dunnett([[1.0], [2.0]], treatment=2, alternative="two-sided", level=0.9)
    assert r.p is None  # no degrees of freedom
    r = dunnett([[1.0, 2.0], []], treatment=2, alternative="two-sided", level=0.9)
    assert r.estimate is None and "empty" in r.extra["undefined"]


@pytest.mark.parametrize(
    ("options", "word"),
    [
        ({"treatment": 1, "alternative": "greater", "level": 0.95}, "treatment must lie"),
        ({"treatment": 4, "alternative": "greater", "level": 0.95}, "treatment must lie"),
        ({"treatment": "2", "alternative": "greater", "level": 0.95}, "whole number"),
        ({"treatment": True, "alternative": "greater", "level": 0.95}, "whole number"),
        ({"treatment": 2, "alternative": "above", "level": 0.95}, "alternative"),
        ({"treatment": 2, "alternative": "greater", "level": 95}, "level"),
    ],
)
def test_refusals(options, word):
    with pytest.raises(MethodError, match=word):
        dunnett([[1.0, 2.0], [2.0, 3.0], [3.0, 5.0]], **options)


def test_deterministic():
    gs = _groups((7, 7, 9), 2)
    a = dunnett(gs, treatment=3, alternative="two-sided", level=0.95)
    b = dunnett([g.copy() for g in gs], treatment=3, alternative="two-sided", level=0.95)
    assert (a.p, a.lower, a.upper) == (b.p, b.lower, b.upper)
