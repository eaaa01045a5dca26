"""prereg.stats.paired against independent references.

Published worked example: Cavo et al. (2012), the complete response before and after
consolidation therapy, n11 = 59, n10 = 6, n01 = 16, n00 = 80, analysed in Fagerland MW,
Lydersen S, Laake P (2013), BMC Med Res Methodol 13:91 (McNemar exact conditional P = 0.052479,
mid-P 0.034690, asymptotic P = 0.033006 with Z = −2.132, with continuity correction P = 0.055009)
and (2014), Stat Med 33:2850–2875 (Tango's score interval −0.1240 to −0.0054, Newcombe's
square-and-add −0.1186 to −0.0046), the values printed by their book's software.
Libraries: statsmodels (mcnemar, cochrans_q, sign_test), scipy (binom, wilcoxon,
ttest_1samp); exact binomial sums written out here.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar
from statsmodels.stats.descriptivestats import sign_test as sm_sign_test

from prereg.stats import paired as pd
from prereg.stats.catalogue import entries
from prereg.stats.methods import MethodError

ALTS = ("two-sided", "greater", "less")
CAVO = (59, 6, 16, 80)


def close(a, b, rel=1e-12, abs_=1e-300):
    assert a is not None and b is not None
    assert math.isclose(a, float(b), rel_tol=rel, abs_tol=abs_), (a, b)


def binom_half(m):
    """Exact Binomial(m, ½) cdf and pmf as fractions."""
    w = [math.comb(m, j) for j in range(m + 1)]
    total = 2**m

    def cdf(k):
        return Fraction(sum(w[: k + 1]), total) if k >= 0 else Fraction(0)

    def pmf(k):
        return Fraction(w[k], total)

    return cdf, pmf


# -- McNemar -----------------------------------------------------------------------------------


def test_mcnemar_cavo_published():
    assert round(pd.mcnemar_exact(*CAVO, alternative="two-sided").p, 6) == 0.052479
    assert round(pd.mcnemar_mid_p(*CAVO, alternative="two-sided").p, 6) == 0.034690
    r = pd.mcnemar_asymptotic(*CAVO, alternative="two-sided", correction="none")
    assert round(r.p, 6) == 0.033006 and round(r.statistic, 3) == -2.132
    r = pd.mcnemar_asymptotic(*CAVO, alternative="two-sided", correction="edwards")
    assert round(r.p, 6) == 0.055009 and round(abs(r.statistic), 3) == 1.919
    assert r.exact["estimate"] == Fraction(-10, 161)


@pytest.mark.parametrize("b,c", [(6, 16), (0, 5), (7, 7), (1, 0), (520, 510), (40, 21)])
@pytest.mark.parametrize("alt", ALTS)
def test_mcnemar_exact_and_mid_p_against_exact_sums(b, c, alt):
    m = b + c
    cdf, pmf = binom_half(m)
    if alt == "greater":
        exact, mid = 1 - cdf(b - 1), 1 - cdf(b) + pmf(b) / 2
    elif alt == "less":
        exact, mid = cdf(b), cdf(b - 1) + pmf(b) / 2
    else:
        low = min(b, c)
        exact, mid = min(1, 2 * cdf(low)), min(1, 2 * (cdf(low - 1) + pmf(low) / 2))
    close(pd.mcnemar_exact(3, b, c, 4, alternative=alt).p, exact, rel=4e-15)
    close(pd.mcnemar_mid_p(3, b, c, 4, alternative=alt).p, mid, rel=4e-15)


def test_mcnemar_exact_many_discordant_pairs():
    # b = 520, c = 510: 2·P(X ≤ 510), X ~ Binomial(1030, ½), exactly 0.77916396857151(66)
    cdf, _ = binom_half(1030)
    r = pd.mcnemar_exact(0, 520, 510, 0, alternative="two-sided")
    close(r.p, 2 * cdf(510), rel=4e-15)
    assert round(r.p, 13) == 0.7791639685715
    # statsmodels' mcnemar(exact=True) is the same two-sided rule
    close(r.p, mcnemar([[0, 520], [510, 0]], exact=True).pvalue, rel=1e-13)
    # a million discordant pairs neither overflows nor loses the tail
    r = pd.mcnemar_exact(10, 500300, 499700, 10, alternative="greater")
    close(r.p, ss.binom.sf(500299, 10**6, 0.5), rel=1e-10)
    assert 0 < r.p < 1
    r = pd.mcnemar_mid_p(10, 500300, 499700, 10, alternative="two-sided")
    assert 0 < r.p < 1


@pytest.mark.parametrize("b,c", [(6, 16), (0, 5), (12, 3), (100, 131)])
@pytest.mark.parametrize("correction", ["none", "edwards"])
def test_mcnemar_asymptotic_matches_statsmodels(b, c, correction):
    r = pd.mcnemar_asymptotic(5, b, c, 7, alternative="two-sided", correction=correction)
    o = mcnemar([[5, b], [c, 7]], exact=False, correction=correction == "edwards")
    close(r.extra["chi2"], o.statistic, rel=1e-14)
    close(r.p, o.pvalue, rel=1e-12)
    for alt, tail in (("greater", ss.norm.sf), ("less", ss.norm.cdf)):
        one = pd.mcnemar_asymptotic(5, b, c, 7, alternative=alt, correction=correction)
        close(one.p, tail(one.statistic), rel=1e-12)


def test_mcnemar_asymptotic_equal_discordant_counts():
    # statsmodels gives (|0| − 1)²/(b + c) = 0.1 here; the correction stops at 0.
    r = pd.mcnemar_asymptotic(5, 5, 5, 7, alternative="two-sided", correction="edwards")
    assert r.statistic == 0.0 and r.p == 1.0
    r = pd.mcnemar_asymptotic(5, 0, 0, 7, alternative="two-sided", correction="none")
    assert r.statistic is None and r.p is None and r.estimate == 0.0


# -- Newcombe paired and Tango -----------------------------------------------------------------------


def test_intervals_cavo_published():
    r = pd.newcombe_paired(*CAVO, level=0.95)
    assert (round(r.lower, 4), round(r.upper, 4)) == (-0.1186, -0.0046)
    r = pd.tango(*CAVO, level=0.95)
    assert (round(r.lower, 4), round(r.upper, 4)) == (-0.1240, -0.0054)
    assert r.exact["estimate"] == Fraction(-10, 161)


@pytest.mark.parametrize("t", [CAVO, (1, 1, 7, 12), (10, 0, 0, 3), (20, 15, 4, 9), (0, 3, 0, 0)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_newcombe_paired_is_method_10_written_out(t, level):
    # Newcombe (1998) Stat Med 17:2635, method 10, over statsmodels' Wilson bounds
    from statsmodels.stats.proportion import proportion_confint

    a, b, c, d = t
    n = sum(t)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, alpha=1 - level, method="wilson")
    l2, u2 = proportion_confint(a + c, n, alpha=1 - level, method="wilson")
    den = (a + b) * (c + d) * (a + c) * (b + d)
    num = a * d - b * c
    if num > 0:
        num = max(num - n / 2, 0)
    phi = num / math.sqrt(den) if den else 0.0
    lo = (p1 - p2) - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    hi = (p1 - p2) + math.sqrt(
        max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    )
    r = pd.newcombe_paired(*t, level=level)
    close(r.lower, lo, abs_=1e-14)
    close(r.upper, hi, abs_=1e-14)


def tango_z_numeric(b, c, n, delta):
    """Tango's z with the constrained p01 found by maximising the multinomial likelihood of
    (n10, n01, rest) under p10 − p01 = δ numerically (scipy's bounded scalar search)."""
    from scipy.optimize import minimize_scalar

    lo, hi = max(0.0, -delta), (1.0 - delta) / 2.0
    rest = n - b - c

    def nll(q):
        p10, p01 = q + delta, q
        v = 0.0
        if b:
            v -= b * math.log(p10)
        if c:
            v -= c * math.log(p01)
        if rest:
            v -= rest * math.log(1.0 - p10 - p01)
        return v

    q = minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-14}).x
    return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))


@pytest.mark.parametrize("t", [CAVO, (1, 1, 7, 12), (20, 15, 4, 9)])
@pytest.mark.parametrize("margin", [-0.2, -0.05, 0.1])
@pytest.mark.parametrize("alt", ALTS)
def test_tango_test_against_numerical_likelihood(t, margin, alt):
    a, b, c, d = t
    r = pd.tango_test(*t, alternative=alt, margin=margin)
    z = tango_z_numeric(b, c, sum(t), margin)
    close(r.statistic, z, rel=1e-7)
    tail = {"greater": ss.norm.sf(z), "less": ss.norm.cdf(z), "two-sided": 2 * ss.norm.sf(abs(z))}
    close(r.p, tail[alt], rel=1e-6)


@pytest.mark.parametrize("t", [CAVO, (1, 1, 7, 12), (20, 15, 4, 9)])
def test_tango_at_margin_zero_is_mcnemar(t):
    r = pd.tango_test(*t, alternative="two-sided", margin=0)
    m = pd.mcnemar_asymptotic(*t, alternative="two-sided", correction="none")
    close(r.statistic, m.statistic, rel=1e-14)


@pytest.mark.parametrize("t", [CAVO, (1, 1, 7, 12), (20, 15, 4, 9), (0, 0, 5, 10)])
def test_tango_bounds_are_where_the_score_meets_z(t):
    a, b, c, d = t
    r = pd.tango(*t, level=0.95)
    zc = ss.norm.isf(0.025)
    if r.lower > -1:
        close(tango_z_numeric(b, c, sum(t), r.lower), zc, rel=1e-7)
    if r.upper < 1:
        close(tango_z_numeric(b, c, sum(t), r.upper), -zc, rel=1e-7)


# -- Cochran's Q -------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 40).flatmap(
        lambda rows: st.integers(2, 6).flatmap(
            lambda k: st.lists(
                st.lists(st.integers(0, 1), min_size=k, max_size=k), min_size=rows, max_size=rows
            )
        )
    )
)
def test_cochran_q_matches_statsmodels(rows):
    x = np.array(rows)
    r = pd.cochran_q(x)
    rs = x.sum(axis=1)
    if ((rs == 0) | (rs == x.shape[1])).all():
        assert r.statistic is None and r.p is None
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = cochrans_q(x)
    close(r.statistic, o.statistic, rel=1e-12, abs_=1e-13)
    close(r.p, o.pvalue, rel=1e-11)
    assert r.df == x.shape[1] - 1


# -- sign, signed-rank, paired t -----------------------------------------------------------------------


RNG = np.random.default_rng(20261203)
X20 = RNG.normal(size=20)
Y20 = X20 + RNG.normal(0.3, 1.0, size=20)
XI = np.array([3, 5, 2, 7, 4, 4, 6, 1, 5, 5, 8, 2])
YI = np.array([2, 5, 3, 4, 4, 2, 6, 1, 3, 7, 4, 0])


@pytest.mark.parametrize("alt", ALTS)
def test_sign_test_against_exact_sums_and_statsmodels(alt):
    d = XI - YI
    pos, neg = int((d > 0).sum()), int((d < 0).sum())
    r = pd.sign_test(XI, YI, alternative=alt, margin=0, ties="drop")
    cdf, _ = binom_half(pos + neg)
    want = {
        "greater": 1 - cdf(pos - 1),
        "less": cdf(pos),
        "two-sided": min(1, 2 * cdf(min(pos, neg))),
    }[alt]
    close(r.p, want, rel=4e-15)
    if alt == "two-sided":
        close(r.p, sm_sign_test(d, 0)[1], rel=1e-13)  # drops ties, two-sided only
    assert r.counts["tied"] == int((d == 0).sum())


def test_sign_test_split_ties_and_margin():
    d = XI - YI  # 1 0 -1 3 0 2 0 0 2 -2 4 2: 6 above, 2 below, 4 tied
    r = pd.sign_test(XI, YI, alternative="greater", margin=0, ties="split")
    assert (r.counts["above"], r.counts["below"], r.counts["tied"]) == (8, 4, 4)
    close(r.p, ss.binom.sf(7, 12, 0.5), rel=1e-13)
    r = pd.sign_test(XI, YI, alternative="greater", margin=1, ties="drop")
    assert r.counts["above"] == int((d > 1).sum())


@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
@pytest.mark.parametrize("correction", ["none", "continuity"])
@pytest.mark.parametrize("data", ["continuous", "ties"])
def test_wilcoxon_normal_matches_scipy(alt, zero_method, correction, data):
    x, y = (X20, Y20) if data == "continuous" else (XI, YI)
    r = pd.wilcoxon_signed_rank(
        x,
        y,
        alternative=alt,
        margin=0,
        zero_method=zero_method,
        method="normal",
        correction=correction,
    )
    o = ss.wilcoxon(
        x,
        y,
        alternative=alt,
        zero_method=zero_method,
        correction=correction == "continuity",
        method="asymptotic",
    )
    close(r.p, o.pvalue, rel=1e-12)
    d = (x - y).astype(float)
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = ss.rankdata(np.abs(d))
    assert r.statistic == ranks[d > 0].sum()  # W+ (scipy reports min(W+, W−) two-sided)


@pytest.mark.parametrize("alt", ALTS)
def test_wilcoxon_exact_without_ties_matches_scipy(alt):
    r = pd.wilcoxon_signed_rank(
        X20, Y20, alternative=alt, margin=0, zero_method="wilcox", method="exact", correction="none"
    )
    o = ss.wilcoxon(X20, Y20, alternative=alt, method="exact")
    close(r.p, o.pvalue, rel=1e-12)


def enumerated_signed_rank_p(d, alternative, zero_method):
    """P of W+ over all 2^n sign changes of the non-zero differences, enumerated."""
    d = np.asarray(d, dtype=float)
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = ss.rankdata(np.abs(d))[d != 0]
    obs = ranks[d[d != 0] > 0].sum()
    n = ranks.size
    signs = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
    w = signs @ ranks
    ge, le = np.mean(w >= obs - 1e-9), np.mean(w <= obs + 1e-9)
    return {"greater": ge, "less": le, "two-sided": min(1.0, 2 * min(ge, le))}[alternative]


@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_wilcoxon_exact_with_ties_and_zeros_is_the_sign_change_distribution(alt, zero_method):
    # scipy's method="exact" assumes no ties: the oracle enumerates every sign change
    r = pd.wilcoxon_signed_rank(
        XI,
        YI,
        alternative=alt,
        margin=0,
        zero_method=zero_method,
        method="exact",
        correction="none",
    )
    close(r.p, enumerated_signed_rank_p(XI - YI, alt, zero_method), rel=1e-12)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_wilcoxon_exact_with_ties_matches_scipy_permutations(zero_method):
    d = np.array([1.0, 0.0, -1.0, 3.0, 2.0, 0.0, 2.0, -2.0])
    r = pd.wilcoxon_signed_rank(
        d,
        np.zeros(8),
        alternative="two-sided",
        margin=0,
        zero_method=zero_method,
        method="exact",
        correction="none",
    )
    # 2^8 sign changes < n_resamples: scipy enumerates them all
    o = ss.wilcoxon(d, zero_method=zero_method, method=ss.PermutationMethod(n_resamples=9999))
    close(r.p, o.pvalue, rel=1e-12)


def test_wilcoxon_margin_shifts_the_differences():
    r = pd.wilcoxon_signed_rank(
        X20,
        Y20,
        alternative="less",
        margin=-0.25,
        zero_method="wilcox",
        method="exact",
        correction="none",
    )
    o = ss.wilcoxon((X20 - Y20) - (-0.25), alternative="less", method="exact")
    close(r.p, o.pvalue, rel=1e-12)


# 0.3 − 0.1 is 0.19999999999999998 in floats, 0.7 − 0.4 is 0.29999999999999993 and 0.9 − 0.6
# 0.30000000000000004: as decimals, against a margin of 0.2, one difference is exactly on it and
# the other four are ties at 0.1
ON_X, ON_Y = [0.3, 0.5, 0.7, 0.9, 1.1], [0.1, 0.2, 0.4, 0.6, 0.8]


def test_sign_test_a_difference_on_the_margin_is_a_tie():
    """It was counted below the margin (from its float), so above 4 of 5 gave P = 3/16."""
    r = pd.sign_test(ON_X, ON_Y, alternative="greater", margin=0.2, ties="drop")
    assert r.counts == {"above": 4, "below": 0, "tied": 1, "n": 5}
    assert r.exact == {"estimate": Fraction(1), "p": Fraction(1, 16)}


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_wilcoxon_ranks_and_zeros_of_the_decimal_differences(zero_method):
    """The zero and the ties come from the decimals (scipy on the exact differences agrees);
    from the floats there was no zero and no tie."""
    d = np.array([0.0, 0.1, 0.1, 0.1, 0.1])
    for method in ("exact", "normal"):
        r = pd.wilcoxon_signed_rank(
            ON_X,
            ON_Y,
            alternative="greater",
            margin=0.2,
            zero_method=zero_method,
            method=method,
            correction="none",
        )
        assert r.counts["zeros"] == 1 and r.counts["nonzero"] == 4
        if method == "normal":
            o = ss.wilcoxon(
                d,
                zero_method=zero_method,
                alternative="greater",
                correction=False,
                method="asymptotic",
            )
            assert r.statistic == o.statistic
            close(r.p, o.pvalue, rel=1e-12)
        elif zero_method == "wilcox":  # four tied ranks, all positive: 1 of 16 sign changes
            assert r.exact == {"statistic": Fraction(10), "p": Fraction(1, 16)}


@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("margin", [0.0, -0.3, 1])
def test_paired_t_matches_scipy(alt, margin):
    r = pd.paired_t(X20, Y20, alternative=alt, margin=margin, level=0.9)
    o = ss.ttest_1samp(X20 - Y20, popmean=margin, alternative=alt)
    close(r.statistic, o.statistic, rel=1e-12)
    close(r.p, o.pvalue, rel=1e-12)
    ci = ss.ttest_1samp(X20 - Y20, popmean=margin).confidence_interval(0.9)
    close(r.lower, ci.low, rel=1e-12)
    close(r.upper, ci.high, rel=1e-12)
    assert r.df == 19


def test_paired_t_integer_data_has_an_exact_mean():
    r = pd.paired_t(XI, YI, alternative="greater", margin=0, level=0.95)
    assert r.exact["estimate"] == Fraction(int((XI - YI).sum()), 12)
    close(r.statistic, ss.ttest_rel(XI, YI, alternative="greater").statistic, rel=1e-12)
    flat = pd.paired_t([1, 2, 3], [0, 1, 2], alternative="greater", margin=0, level=0.95)
    assert flat.statistic is None and flat.p is None and flat.estimate == 1.0


# -- argument checks and the catalogue ---------------------------------------------------------------


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pd.mcnemar_exact(1, -2, 3, 4, alternative="less"), "n10 must be a count"),
        (lambda: pd.mcnemar_exact(1, 2, 3, 4, alternative="up"), "alternative"),
        (
            lambda: pd.mcnemar_asymptotic(1, 2, 3, 4, alternative="less", correction="yates"),
            "correction must be",
        ),
        (lambda: pd.tango(1, 2, 3, 4, level=0), "level must lie"),
        (lambda: pd.cochran_q([[0, 1, 2]]), "only 0 and 1"),
        (lambda: pd.cochran_q([0, 1]), "2-d"),
        (
            lambda: pd.sign_test([1, 2], [1], alternative="less", margin=0, ties="drop"),
            "one value per unit",
        ),
        (
            lambda: pd.sign_test([1, 2], [1, 3], alternative="less", margin=0, ties="keep"),
            "ties must be",
        ),
        (
            lambda: pd.wilcoxon_signed_rank(
                [1, 2],
                [0, 0],
                alternative="less",
                margin=0,
                zero_method="wilcox",
                method="exact",
                correction="continuity",
            ),
            "correction",
        ),
        (
            lambda: pd.paired_t([1, np.nan], [0, 0], alternative="less", margin=0, level=0.9),
            "finite",
        ),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_are_complete():
    mine = [e for e in entries().values() if e.family == "paired"]
    assert len(mine) == 11
    for e in mine:
        assert e.load() is not None
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)


def test_importing_the_families_does_not_import_scipy():
    import subprocess
    import sys

    code = (
        "import sys, prereg.stats.paired, prereg.stats.two_proportions;"
        "print(any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_p_values_lie_in_unit_interval_and_mid_p_is_below_exact(b, c):
    for alt in ALTS:
        e = pd.mcnemar_exact(1, b, c, 1, alternative=alt).p
        m = pd.mcnemar_mid_p(1, b, c, 1, alternative=alt).p
        assert 0 < m <= e <= 1


def test_count_statistics_are_whole_numbers_in_the_results_figures():
    """The sign test's ``above``, McNemar's ``n10`` and the binomial test's ``k`` are counts:
    each Result marks its statistic so, and ``as_dict`` (SCORE.json) writes it as an integer
    (reports then print it without decimals); a statistic that is not a count stays a float,
    and a count that is not whole is refused."""
    from prereg.stats.result import Result
    from prereg.stats.two_proportions import binomial_test

    x = np.array([3.0, 5.0, 1.0, 7.0, 2.0, 9.0])
    y = np.array([1.0, 6.0, 1.0, 2.0, 0.0, 4.0])
    sign = pd.sign_test(x, y, alternative="greater", margin=0, ties="drop")
    empty = pd.sign_test(x, x, alternative="greater", margin=0, ties="drop")
    mc = pd.mcnemar_exact(10, 7, 3, 20, alternative="two-sided")
    mid = pd.mcnemar_mid_p(10, 7, 3, 20, alternative="two-sided")
    binom = binomial_test(60, 100, alternative="greater", null_proportion=0.5, level=0.95)
    for r, want in ((sign, 4), (empty, 0), (mc, 7), (mid, 7), (binom, 60)):
        assert r.statistic_count and r.statistic == want
        figure = r.as_dict()["statistic"]
        assert type(figure) is int and figure == want, r.method
    z = pd.mcnemar_asymptotic(10, 7, 3, 20, alternative="two-sided", correction="none")
    assert not z.statistic_count and type(z.as_dict()["statistic"]) is float
    with pytest.raises(ValueError, match="not whole"):
        Result("made-up", statistic=2.5, statistic_name="k", statistic_count=True)
