"""prereg.stats.two_proportions against independent references.

Oracles: statsmodels and scipy (called with the options that match the textbook method; their
defaults are noted where they differ), published values (Newcombe 1998, Table II; R's
fisher.test example), exact integer arithmetic written out here, and a 60-digit decimal
solution of the Farrington–Manning score equation (with values from mpmath at n = 1e6).
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import example, given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)
from statsmodels.stats.proportion import (
    test_proportions_2indep as sm_test_2indep,
)

from prereg.stats import two_proportions as tp
from prereg.stats.catalogue import entries
from prereg.stats.methods import MethodError

ALTS = ("two-sided", "greater", "less")
SM_ALT = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}
TABLES = [
    (56, 70, 48, 80),
    (9, 10, 3, 10),
    (10, 10, 0, 20),
    (5, 56, 0, 29),
    (0, 10, 0, 20),
    (90, 100, 92, 100),
    (1, 1, 0, 1),
    (612345, 1000000, 598765, 1000000),
]


def close(a, b, rel=1e-12, abs_=1e-15):
    assert a is not None and b is not None
    assert math.isclose(a, float(b), rel_tol=rel, abs_tol=abs_), (a, b)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# -- one proportion, Wald, pooled, Newcombe, Agresti-Caffo ---------------------------------------


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (3, 17), (1, 1), (123456, 1000000)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, level):
    r = tp.wilson(k, n, level=level)
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")  # default is Wald
    close(r.lower, lo, abs_=1e-15)
    close(r.upper, hi, abs_=1e-15)
    assert r.exact["estimate"] == Fraction(k, n)


@pytest.mark.parametrize("t", TABLES)
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_wald_agresti_caffo_newcombe_intervals_match_statsmodels(t, level):
    a = 1 - level
    for fn, method in (
        (tp.wald_difference, "wald"),
        (tp.agresti_caffo, "agresti-caffo"),
        (tp.newcombe_hybrid, "newcomb"),
    ):
        r = fn(*t, level=level)
        lo, hi = quiet(confint_proportions_2indep, *t, method=method, compare="diff", alpha=a)
        close(r.lower, lo, abs_=1e-14)
        close(r.upper, hi, abs_=1e-14)
        assert r.exact["estimate"] == Fraction(t[0], t[1]) - Fraction(t[2], t[3])


@pytest.mark.parametrize("t", [t for t in TABLES if t[0] * (t[1] - t[0]) + t[2] * (t[3] - t[2])])
@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("margin", [0.0, -0.1, 0.05])
def test_wald_test_matches_statsmodels(t, alt, margin):
    r = tp.wald_difference_test(*t, alternative=alt, margin=margin)
    o = quiet(
        sm_test_2indep,
        *t,
        value=margin,
        method="wald",
        compare="diff",
        alternative=SM_ALT[alt],
    )
    close(r.statistic, o.statistic, rel=1e-11)
    close(r.p, o.pvalue, rel=1e-11, abs_=1e-300)


@pytest.mark.parametrize("t", [t for t in TABLES if 0 < t[0] + t[2] < t[1] + t[3]])
@pytest.mark.parametrize("alt", ALTS)
def test_pooled_z_matches_statsmodels(t, alt):
    r = tp.pooled_z_test(*t, alternative=alt, margin=0)
    z, p = proportions_ztest([t[0], t[2]], [t[1], t[3]], alternative=SM_ALT[alt])
    close(r.statistic, z, rel=1e-11)
    close(r.p, p, rel=1e-11, abs_=1e-300)


def test_pooled_z_refuses_a_margin_and_degenerates_to_none():
    with pytest.raises(MethodError, match="margin 0"):
        tp.pooled_z_test(5, 10, 3, 10, alternative="greater", margin=0.1)
    r = tp.pooled_z_test(0, 10, 0, 20, alternative="two-sided", margin=0)
    assert r.statistic is None and r.p is None and r.exact["estimate"] == 0


def test_a_difference_at_its_margin_is_exactly_zero():
    # 15/100 - 10/100 is 0.04999999999999999 in floats; formed exactly it equals 1/20.
    r = tp.wald_difference_test(15, 100, 10, 100, alternative="greater", margin=Fraction(1, 20))
    assert r.statistic == 0.0 and r.p == 0.5
    r = tp.farrington_manning(15, 100, 10, 100, alternative="greater", margin=Fraction(1, 20))
    assert r.statistic == 0.0


# -- Farrington–Manning and Miettinen–Nurminen --------------------------------------------------


def decimal_fm_z(k1, n1, k2, n2, margin, digits=60):
    """z of the Farrington–Manning test with p̃1 found by bisecting the score in 60 digits; the
    margin is the decimal written (``repr``), as the method reads it: 0.1 is 1/10, not the
    double's binary value (an arm of 488,011 against one of 162 successes in 162 put the two
    1.6e-14 apart in z)."""
    getcontext().prec = digits
    d = Decimal(repr(float(margin)))
    k1, n1, k2, n2 = map(Decimal, (k1, n1, k2, n2))
    lo, hi = max(Decimal(0), d), min(Decimal(1), 1 + d)

    def score(t):
        u = t - d
        v = Decimal(0)
        if k1:
            v += k1 / t
        if n1 - k1:
            v -= (n1 - k1) / (1 - t)
        if k2:
            v += k2 / u
        if n2 - k2:
            v -= (n2 - k2) / (1 - u)
        return v

    for _ in range(260):
        mid = (lo + hi) / 2
        if score(mid) > 0:
            lo = mid
        else:
            hi = mid
    t = (lo + hi) / 2
    u = t - d
    return float((k1 / n1 - k2 / n2 - d) / (t * (1 - t) / n1 + u * (1 - u) / n2).sqrt())


@pytest.mark.parametrize("t", [t for t in TABLES if 0 < t[0] + t[2] < t[1] + t[3]])
@pytest.mark.parametrize("alt", ALTS)
def test_score_tests_match_statsmodels_at_margin_zero(t, alt):
    for fn, corr in ((tp.farrington_manning, False), (tp.miettinen_nurminen_test, True)):
        r = fn(*t, alternative=alt, margin=0)
        o = quiet(
            sm_test_2indep,
            *t,
            value=0,
            method="score",
            compare="diff",
            correction=corr,
            alternative=SM_ALT[alt],
        )
        close(r.statistic, o.statistic, rel=1e-12)
        close(r.p, o.pvalue, rel=1e-11, abs_=1e-300)


@pytest.mark.parametrize("k1,n1,n2", [(5, 10, 20), (3, 40, 7), (599, 1000, 1000)])
@pytest.mark.parametrize("margin", [-0.3, -0.05, 0.01])
def test_farrington_manning_matches_statsmodels_where_its_cubic_is_right(k1, n1, n2, margin):
    # statsmodels' constrained estimate writes count2 for nobs2 in one coefficient (issue
    # #10269); with k2 = n2 the two coincide, so there its δ != 0 figures are right.
    r = tp.farrington_manning(k1, n1, n2, n2, alternative="two-sided", margin=margin)
    o = sm_test_2indep(
        k1, n1, n2, n2, value=margin, method="score", compare="diff", correction=False
    )
    close(r.statistic, o.statistic, rel=1e-11)
    close(r.extra["p1_null"], o.prop1_null, rel=1e-11)


def test_farrington_manning_reference_value_where_statsmodels_is_wrong():
    # 90/100 vs 92/100 at δ = −0.1: z = 1.8551 (statsmodels 0.15 gives 1.8297).
    r = tp.farrington_manning(90, 100, 92, 100, alternative="greater", margin=-0.1)
    assert round(r.statistic, 4) == 1.8551
    close(r.statistic, decimal_fm_z(90, 100, 92, 100, -0.1))


@pytest.mark.parametrize("t", TABLES)
@pytest.mark.parametrize("margin", [-0.9, -0.2, -1e-9, 1e-6, 0.3, 0.95])
def test_farrington_manning_matches_decimal_bisection(t, margin):
    r = tp.farrington_manning(*t, alternative="two-sided", margin=margin)
    close(r.statistic, decimal_fm_z(*t, margin), rel=1e-13)


def _count(n):
    return st.one_of(st.just(0), st.just(n), st.just(1 if n else 0), st.integers(0, n))


@settings(max_examples=80, deadline=None)
@example(arms=(159127, 488011, 162, 162), margin=-0.6708718636396303)
@given(
    arms=st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)).flatmap(
        lambda ns: st.tuples(_count(ns[0]), st.just(ns[0]), _count(ns[1]), st.just(ns[1]))
    ),
    margin=st.one_of(
        st.sampled_from([1e-9, -1e-9, 1e-6, -1e-6, 0.99, -0.99, 0.5]),
        st.floats(-0.999, 0.999).filter(lambda m: abs(m) >= 1e-12),
    ),
)
def test_farrington_manning_property_against_decimal(arms, margin):
    # every case: arms with no, one, all or any successes, n up to 1e6, margins from 1e-9 to
    # 0.999 (a sweep of 3000 such cases while writing this found at most 1.2e-15 relative)
    r = tp.farrington_manning(*arms, alternative="two-sided", margin=margin)
    close(r.statistic, decimal_fm_z(*arms, margin, digits=50), rel=2e-14, abs_=1e-14)


# mpmath at 50 digits (mp.dps = 50), bisecting the same score equation in [max(0, δ), min(1, 1 + δ)]
# 300 times, δ the float's exact binary value:
#   z = (k1/n1 − k2/n2 − δ)/sqrt(t(1 − t)/n1 + u(1 − u)/n2), u = t − δ
MPMATH_N1E6 = [
    ((500123, 10**6, 500000, 10**6, 1e-6), 0.1725340559147377345866934),
    ((123, 10**6, 100, 10**6, 1e-6), 1.473637182058879829456885),
    ((999900, 10**6, 999880, 10**6, -1e-6), 1.415590721939730352485387),
    ((7, 10**6, 3, 10**6, 1e-6), 0.9637204581962022284586914),
    ((400000, 10**6, 399000, 10**6, 1e-6), 1.442233545375231681996155),
]


@pytest.mark.parametrize("case,z", MPMATH_N1E6)
def test_farrington_manning_at_a_million_and_margin_1e_6(case, z):
    r = tp.farrington_manning(*case[:4], alternative="greater", margin=case[4])
    close(r.statistic, z, rel=4e-16)
    close(r.statistic, decimal_fm_z(*case), rel=4e-16)


def test_farrington_manning_constrained_estimate_is_the_likelihood_maximum():
    from scipy.optimize import minimize_scalar

    k1, n1, k2, n2, d = 56, 70, 48, 80, -0.1

    def nll(t):
        u = t - d
        return -(
            k1 * math.log(t)
            + (n1 - k1) * math.log(1 - t)
            + k2 * math.log(u)
            + (n2 - k2) * math.log(1 - u)
        )

    opt = minimize_scalar(
        nll, bounds=(1e-12, 0.9 - 1e-12), method="bounded", options={"xatol": 1e-13}
    )
    r = tp.farrington_manning(k1, n1, k2, n2, alternative="greater", margin=d)
    assert abs(r.extra["p1_null"] - opt.x) < 1e-8
    assert r.extra["p2_null"] == pytest.approx(opt.x - d, abs=1e-8)


@pytest.mark.parametrize("t", TABLES[:6])
@pytest.mark.parametrize("margin", [-0.2, 0.05])
def test_miettinen_nurminen_test_is_the_scaled_fm_test(t, margin):
    n = t[1] + t[3]
    r = tp.miettinen_nurminen_test(*t, alternative="less", margin=margin)
    close(r.statistic, decimal_fm_z(*t, margin) * math.sqrt((n - 1) / n), rel=1e-13)
    close(r.p, ss.norm.cdf(r.statistic), rel=1e-13)


# Newcombe RG (1998), Stat Med 17:873–890, Table II, method 6 (Miettinen–Nurminen), 95%.
NEWCOMBE_MN = [
    ((56, 70, 48, 80), (0.0528, 0.3382)),
    ((9, 10, 3, 10), (0.1700, 0.8406)),
    ((10, 10, 0, 20), (0.7156, 1.0000)),
]


@pytest.mark.parametrize("t,published", NEWCOMBE_MN)
def test_miettinen_nurminen_interval_published(t, published):
    r = tp.miettinen_nurminen(*t, level=0.95)
    assert (round(r.lower, 4), round(r.upper, 4)) == published
    # and each bound is where the (decimal) score statistic meets the critical value
    n = t[1] + t[3]
    zc = ss.norm.isf(0.025)
    for bound, target in ((r.lower, zc), (r.upper, -zc)):
        if abs(bound) == 1.0:
            continue
        z = decimal_fm_z(*t, bound) * math.sqrt((n - 1) / n)
        close(z, target, rel=1e-12)


def test_miettinen_nurminen_interval_at_large_n_brackets_the_estimate():
    r = tp.miettinen_nurminen(500123, 10**6, 500000, 10**6, level=0.95)
    n = 2 * 10**6
    zc = ss.norm.isf(0.025)
    assert r.lower < r.estimate < r.upper
    close(
        decimal_fm_z(500123, 10**6, 500000, 10**6, r.lower) * math.sqrt((n - 1) / n), zc, rel=1e-9
    )


# -- Fisher, Barnard, Boschloo -----------------------------------------------------------------------


def fisher_exact_integers(k1, n1, k2, n2, alternative):
    """Fisher's P as an exact fraction: hypergeometric weights C(n1, x)·C(n2, m − x)."""
    m = k1 + k2
    xs = range(max(0, m - n2), min(n1, m) + 1)
    w = {x: math.comb(n1, x) * math.comb(n2, m - x) for x in xs}
    total = sum(w.values())
    if alternative == "greater":
        return Fraction(sum(v for x, v in w.items() if x >= k1), total)
    if alternative == "less":
        return Fraction(sum(v for x, v in w.items() if x <= k1), total)
    # scipy's two-sided: tables no more probable than the observed, relative tolerance 1e-7
    obs = w[k1]
    return Fraction(sum(v for v in w.values() if v * 10**7 <= obs * (10**7 + 1)), total)


@pytest.mark.parametrize(
    "t", [(3, 4, 1, 4), (7, 12, 2, 15), (0, 10, 5, 12), (20, 40, 20, 40), (45, 60, 30, 70)]
)
@pytest.mark.parametrize("alt", ALTS)
def test_fisher_matches_exact_sums(t, alt):
    r = tp.fisher_exact(*t, alternative=alt)
    close(r.p, min(1, fisher_exact_integers(*t, alt)), rel=1e-12)


def test_fisher_tea_tasting_published_and_conditional_mle():
    # R's fisher.test(TeaTasting): p-value = 0.4857, odds ratio 6.408309; "greater": 0.2429
    r = tp.fisher_exact(3, 4, 1, 4, alternative="two-sided")
    assert round(r.p, 4) == 0.4857
    # R solves for the conditional MLE with uniroot's default tolerance (about 1e-4 on this
    # scale); the defining equation below pins it to 1e-6
    assert abs(r.estimate - 6.408309) < 2e-5
    assert round(tp.fisher_exact(3, 4, 1, 4, alternative="greater").p, 4) == 0.2429
    # the conditional MLE solves E[X1; ψ] = x1 under Fisher's noncentral hypergeometric
    for t in ((3, 4, 1, 4), (45, 60, 30, 70)):
        k1, n1, k2, n2 = t
        psi = tp.fisher_exact(*t, alternative="two-sided").estimate
        m = k1 + k2
        xs = range(max(0, m - n2), min(n1, m) + 1)
        w = [math.comb(n1, x) * math.comb(n2, m - x) * psi**x for x in xs]
        mean = sum(x * v for x, v in zip(xs, w, strict=True)) / sum(w)
        assert abs(mean - k1) < 1e-6


def barnard_region_float(n1, n2, k1, k2, alternative, pooled):
    """scipy's own rule: Wald statistics compared in floats."""
    x1 = np.arange(n1 + 1).reshape(-1, 1)
    x2 = np.arange(n2 + 1).reshape(1, -1)
    p1, p2 = x1 / n1, x2 / n2
    if pooled:
        p = (x1 + x2) / (n1 + n2)
        var = p * (1 - p) * (1 / n1 + 1 / n2)
    else:
        var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
    with np.errstate(all="ignore"):
        w = (p1 - p2) / np.sqrt(var)
    w[p1 == p2] = 0
    o = w[k1, k2]
    return {"greater": w >= o, "less": w <= o}.get(alternative, np.abs(w) >= abs(o))


def region_max(region, n1, n2):
    pis = np.linspace(0, 1, 4001)
    a = ss.binom.pmf(np.arange(n1 + 1)[None, :], n1, pis[:, None])
    b = ss.binom.pmf(np.arange(n2 + 1)[None, :], n2, pis[:, None])
    return float(np.max(np.einsum("pi,ij,pj->p", a, region.astype(float), b)))


@pytest.mark.parametrize("t", [(7, 12, 2, 15), (4, 9, 1, 8), (10, 14, 5, 16), (0, 6, 4, 9)])
@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("variance", ["pooled", "unpooled"])
def test_barnard_against_scipy_and_the_exact_region(t, alt, variance):
    k1, n1, k2, n2 = t
    pooled = variance == "pooled"
    r = tp.barnard_exact(*t, alternative=alt, variance=variance, grid=64)
    flt = barnard_region_float(n1, n2, k1, k2, alt, pooled)
    # scipy's samples are the table's columns
    o = ss.barnard_exact([[k1, k2], [n1 - k1, n2 - k2]], alternative=alt, pooled=pooled, n=64)

    # The exact region: |T| compared by cross-multiplying integers (T² = num/den).
    def key(x1, x2):
        num = (x1 * n2 - x2 * n1) ** 2
        if pooled:
            k, n = x1 + x2, n1 + n2
            den = Fraction(k * (n - k) * (n1 + n2), n * n * n1 * n2)
        else:
            den = Fraction(x1 * (n1 - x1), n1**3) + Fraction(x2 * (n2 - x2), n2**3)
        sign = (x1 * n2 > x2 * n1) - (x1 * n2 < x2 * n1)
        if sign == 0:
            return Fraction(0)
        if den == 0:
            return sign * math.inf
        return sign * Fraction(num, n1 * n1 * n2 * n2) / den

    keys = [[key(a, b) for b in range(n2 + 1)] for a in range(n1 + 1)]
    obs = keys[k1][k2]
    exact = np.array(
        [
            [{"greater": v >= obs, "less": v <= obs}.get(alt, abs(v) >= abs(obs)) for v in row]
            for row in keys
        ]
    )
    close(r.p, region_max(exact, n1, n2), rel=1e-6)
    close(abs(r.statistic), abs(o.statistic), rel=1e-12)
    assert r.p >= region_max(exact, n1, n2) * (1 - 1e-12)
    if (exact == flt).all():
        close(r.p, o.pvalue, rel=1e-6)
    else:
        # scipy drops tables that tie with the observed one in exact arithmetic (#18798)
        assert (exact & ~flt).any() and not (flt & ~exact).any()
        assert r.p > o.pvalue


def test_barnard_keeps_the_mirror_table_scipy_drops():
    # 7/12 vs 2/15 and its mirror 5/12 vs 13/15 have equal |T|; scipy's float comparison
    # drops the mirror and two more tables and gives 0.015558.
    r = tp.barnard_exact(7, 12, 2, 15, alternative="two-sided", variance="pooled", grid=32)
    assert r.p == pytest.approx(0.0177716, abs=2e-7)


@pytest.mark.parametrize("t", [(7, 12, 2, 15), (4, 9, 1, 8), (10, 14, 5, 16), (0, 6, 4, 9)])
@pytest.mark.parametrize("alt", ALTS)
def test_boschloo_matches_scipy(t, alt):
    k1, n1, k2, n2 = t
    r = tp.boschloo_exact(*t, alternative=alt, grid=64)
    o = ss.boschloo_exact([[k1, k2], [n1 - k1, n2 - k2]], alternative=alt, n=64)
    close(r.p, o.pvalue, rel=1e-6)
    if alt != "two-sided":
        close(r.statistic, o.statistic, rel=1e-12)


# -- chi-square, G, risk ratio, odds ratio ----------------------------------------------------------


CHI_TABLES = [
    (56, 70, 48, 80),
    (9, 10, 3, 10),
    (5, 56, 0, 29),
    (10, 20, 11, 20),
    (612345, 1000000, 598765, 1000000),
    (1, 2, 0, 2),
]


@pytest.mark.parametrize("t", CHI_TABLES)
@pytest.mark.parametrize("correction", ["none", "yates"])
def test_chi_square_matches_scipy(t, correction):
    k1, n1, k2, n2 = t
    r = tp.pearson_chi_square(*t, correction=correction)
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    o = ss.chi2_contingency(table, correction=correction == "yates")  # Yates is its default
    close(r.statistic, o.statistic, rel=1e-11, abs_=1e-14)
    close(r.p, o.pvalue, rel=1e-11)
    a, b, c, d = k1, n1 - k1, k2, n2 - k2
    n = n1 + n2
    cc = Fraction(n, 2) if correction == "yates" else 0
    dev = max(abs(a * d - b * c) - cc, 0)
    assert r.exact["statistic"] == n * Fraction(dev) ** 2 / (n1 * n2 * (a + c) * (b + d))


@pytest.mark.parametrize("t", CHI_TABLES)
def test_g_test_matches_scipy(t):
    k1, n1, k2, n2 = t
    r = tp.g_test(*t)
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    o = ss.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    # scipy sums 2·O·log(O/E), which cancels at large n: compare to 1e-9 there
    close(r.statistic, o.statistic, rel=1e-12 if n1 < 10**5 else 1e-7)
    close(r.p, o.pvalue, rel=1e-11 if n1 < 10**5 else 1e-7)


def test_g_test_at_large_n_against_decimal():
    k1, n1, k2, n2 = 612345, 10**6, 598765, 10**6
    getcontext().prec = 50
    n = n1 + n2
    cells = (
        (k1, n1, k1 + k2),
        (n1 - k1, n1, n - k1 - k2),
        (k2, n2, k1 + k2),
        (n2 - k2, n2, n - k1 - k2),
    )
    g = 2 * sum(Decimal(o) * (Decimal(o) * n / (Decimal(r) * c)).ln() for o, r, c in cells)
    close(tp.g_test(k1, n1, k2, n2).statistic, float(g), rel=1e-14)


@pytest.mark.parametrize("t", [(56, 70, 48, 80), (9, 10, 3, 10), (5, 56, 2, 29), (1, 1, 1, 3)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_risk_ratio_katz_matches_scipy_and_statsmodels(t, level):
    r = tp.risk_ratio(*t, level=level)
    ci = ss.contingency.relative_risk(*t).confidence_interval(level)
    close(r.lower, ci.low, rel=1e-12)
    close(r.upper, ci.high, rel=1e-12)
    lo, hi = confint_proportions_2indep(*t, compare="ratio", method="log", alpha=1 - level)
    close(r.lower, lo, rel=1e-12)
    assert r.exact["estimate"] == Fraction(t[0] * t[3], t[1] * t[2])


def test_risk_ratio_zero_counts():
    assert tp.risk_ratio(0, 10, 3, 10, level=0.95).estimate == 0.0
    r = tp.risk_ratio(3, 10, 0, 10, level=0.95)
    assert r.estimate == math.inf and r.lower is None
    assert tp.risk_ratio(0, 10, 0, 10, level=0.95).estimate is None


@pytest.mark.parametrize("t", [(56, 70, 48, 80), (9, 10, 3, 10), (5, 56, 2, 29)])
@pytest.mark.parametrize("haldane", ["never", "if-zero", "always"])
def test_odds_ratio_woolf_matches_statsmodels(t, haldane):
    r = tp.odds_ratio(*t, level=0.95, haldane=haldane)
    method = "logit-adjusted" if haldane == "always" else "logit"
    lo, hi = confint_proportions_2indep(*t, compare="odds-ratio", method=method, alpha=0.05)
    close(r.lower, lo, rel=1e-12)
    close(r.upper, hi, rel=1e-12)
    if haldane != "always":
        res = ss.contingency.odds_ratio([[t[0], t[1] - t[0]], [t[2], t[3] - t[2]]], kind="sample")
        close(r.estimate, res.statistic, rel=1e-14)
        ci = res.confidence_interval(0.95)
        close(r.lower, ci.low, rel=1e-12)


def test_odds_ratio_haldane_when_a_cell_is_zero():
    t = (5, 56, 0, 29)
    assert tp.odds_ratio(*t, level=0.95, haldane="never").estimate == math.inf
    r = tp.odds_ratio(*t, level=0.95, haldane="if-zero")
    lo, hi = confint_proportions_2indep(*t, compare="odds-ratio", method="logit-adjusted")
    close(r.lower, lo, rel=1e-12)
    close(r.upper, hi, rel=1e-12)
    assert r.exact["estimate"] == Fraction(11 * 59, 103 * 1)  # (5.5·29.5)/(51.5·0.5)
    assert r.extra["haldane_added"] is True


# -- argument checks, degenerate data, the catalogue --------------------------------------------------


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: tp.wald_difference(-1, 10, 3, 10, level=0.95), "k1 must be a count"),
        (lambda: tp.wald_difference(11, 10, 3, 10, level=0.95), "must not exceed n1"),
        (lambda: tp.wilson(2.5, 10, level=0.95), "k must be a count"),
        (lambda: tp.newcombe_hybrid(1, 10, 3, 10, level=1.5), "level must lie"),
        (
            lambda: tp.farrington_manning(1, 10, 3, 10, alternative="bigger", margin=0),
            "alternative",
        ),
        (lambda: tp.farrington_manning(1, 10, 3, 10, alternative="less", margin=1.0), "margin"),
        (lambda: tp.pearson_chi_square(1, 10, 3, 10, correction=True), "correction must be"),
        (lambda: tp.odds_ratio(1, 10, 3, 10, level=0.9, haldane="yes"), "haldane must be"),
        (
            lambda: tp.barnard_exact(1, 10, 3, 10, alternative="less", variance="x", grid=9),
            "variance",
        ),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_an_empty_arm_gives_none_figures():
    for fn, kw in (
        (tp.wald_difference, {"level": 0.95}),
        (tp.miettinen_nurminen, {"level": 0.95}),
        (tp.farrington_manning, {"alternative": "less", "margin": 0.1}),
        (tp.g_test, {}),
        (tp.pearson_chi_square, {"correction": "none"}),
        (tp.risk_ratio, {"level": 0.95}),
    ):
        r = fn(3, 10, 0, 0, **kw)
        assert r.estimate is None and r.p is None and r.lower is None, fn


def test_catalogue_entries_are_complete():
    mine = [e for e in entries().values() if e.family == "two_proportions"]
    assert len(mine) == 17
    for e in mine:
        assert e.load() is not None
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)


def test_constrained_proportions_to_a_few_ulps_where_the_score_cancels():
    """An arm of 488,011 (159,127 successes) against one of 162 with no failure, margin
    -0.6709: the score's terms are 3,000 times its size, and the high arm's failure share
    (0.003) found in doubles was 1.7e-14 off (77 ulps); the last Newton step summed in
    extended precision brings every figure to within a few ulps of the root bisected in 60
    digits (where longdouble is a double, the doubles' own bound)."""
    getcontext().prec = 60
    arms = (159127, 488011, 162, 162)
    m = -0.6708718636396303
    k1, n1, k2, n2 = map(Decimal, arms)
    d = Decimal(m)

    def score(t):
        u = t - d
        return k1 / t - (n1 - k1) / (1 - t) + k2 / u - (n2 - k2) / (1 - u)

    lo, hi = Decimal(10) ** -40, 1 + d - Decimal(10) ** -40
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if score(mid) > 0 else (lo, mid)
    t1 = lo
    want = (t1, t1 - d, 1 - t1, 1 - (t1 - d))
    got = tp.constrained_proportions(*arms, m)
    extended = np.finfo(np.longdouble).nmant > 52
    for g, w in zip(got, want, strict=True):
        assert abs(g - float(w)) <= (4 * 2.0**-52 if extended else 1e-13) * float(w), (g, w)


def test_restricted_balls_enclose_the_score_tests_figures():
    """two_proportions.restricted_balls (the balls a threshold on a Farrington–Manning or
    Miettinen–Nurminen z or se is decided by) holds the method's float z and se to 1e-9, over
    random counts and margins, maxima inside the feasible set and on its ends alike."""
    from flint import ctx

    rng = np.random.default_rng(3)
    checked = 0
    saved = ctx.prec
    try:
        ctx.prec = 64
        for i in range(300):
            n1, n2 = int(rng.integers(2, 60)), int(rng.integers(2, 60))
            k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
            m = float(rng.choice([-0.2, -0.1, -0.05, 0, 0.05, 0.1, 0.15]))
            mn = bool(i % 2)
            test = tp.miettinen_nurminen_test if mn else tp.farrington_manning
            r = test(k1, n1, k2, n2, alternative="greater", margin=m)
            if r.statistic is None:
                continue
            balls = tp.restricted_balls(
                k1, n1, k2, n2, Fraction(repr(m)), mn=mn, hint=r.extra["p1_null"]
            )
            z, se = balls(64)
            assert abs(float(z.mid()) - r.statistic) <= 1e-9 * max(1.0, abs(r.statistic))
            assert abs(float(se.mid()) - r.se) <= 1e-9 * r.se
            checked += 1
    finally:
        ctx.prec = saved
    assert checked > 250
