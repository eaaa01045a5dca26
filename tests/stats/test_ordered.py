"""The ordered family (prereg.stats.ordered) against independent oracles.

Oracles: scipy.stats.chi2_contingency (correction=False: scipy applies Yates' correction to a
2×2 by default), scipy.stats.f_oneway, scipy.stats.kruskal (always tie-corrected; the
uncorrected H is computed here from scipy's ranks), statsmodels' StratifiedTable (its
continuity-corrected statistic subtracts ½ without truncation, and its P is 1 − cdf, so P is
recomputed here from its statistic with chi2.sf), statsmodels' Table.test_ordinal_association
(the linear-by-linear statistic, variance with N − 1) and the correlation form of the trend
statistic on the table expanded to one row per subject; published examples: Agresti (2002),
Hollander & Wolfe (1999); the exact Jonckheere–Terpstra distribution by enumerating every
assignment of the values to the groups.
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
from statsmodels.stats.contingency_tables import StratifiedTable, Table

from prereg.stats import ordered
from prereg.stats.catalogue import SHAPES, entries
from prereg.stats.methods import MethodError


def close(a, b, rel=1e-12, abs_=1e-15):
    assert a is not None and b is not None
    assert math.isclose(a, b, rel_tol=rel, abs_tol=abs_), (a, b)


# -- chi-square test of homogeneity ---------------------------------------------------------------

TABLES = [
    ([3, 5, 9], [10, 12, 15]),
    ([0, 5, 9, 2], [10, 12, 15, 7]),  # a group without success
    ([7, 3], [20, 25]),  # 2×2: scipy would apply Yates' correction by default
    ([412_345, 410_000, 415_555], [1_000_000, 1_000_000, 1_000_000]),
    ([1, 1, 1, 2], [2, 2, 2, 2]),
]


@pytest.mark.parametrize(("k", "n"), TABLES)
def test_chi_square_against_scipy(k, n):
    table = np.array([k, [b - a for a, b in zip(k, n, strict=True)]]).T
    chi2, p, dof, _ = stats.chi2_contingency(table, correction=False)
    r = ordered.chi_square_homogeneity(k, n)
    close(r.statistic, chi2, rel=1e-11)
    close(r.p, p, rel=1e-10)
    assert r.df == dof == len(k) - 1
    assert float(r.exact["statistic"]) == r.statistic


def test_chi_square_exact_by_hand():
    # 2×2 table (7, 13 / 3, 22), N = 45, p̄ = 10/45: X² = N(ad − bc)²/(row and column totals)
    r = ordered.chi_square_homogeneity([7, 3], [20, 25])
    assert r.exact["statistic"] == Fraction(45 * (7 * 22 - 13 * 3) ** 2, 20 * 25 * 10 * 35)


def test_chi_square_degenerate():
    assert ordered.chi_square_homogeneity([0, 0], [5, 7]).statistic is None
    assert ordered.chi_square_homogeneity([5, 7], [5, 7]).p is None
    r = ordered.chi_square_homogeneity([1, 0], [5, 0])
    assert r.statistic is None and r.p is None and r.extra["undefined"]


# -- Cochran–Armitage -----------------------------------------------------------------------------

# Agresti (2002), Categorical Data Analysis, 2nd ed., Table 3.7: infant malformation by the
# mother's alcohol consumption (0, <1, 1-2, 3-5, >=6 drinks a day), scores 0, 0.5, 1.5, 4, 7.
# Agresti reports r = 0.0142, M² = (N − 1)r² = 6.57 and P = 0.0104 (section 3.4.4); the
# Cochran–Armitage statistic (variance with N) is nearly the same at this N (section 5.3.5).
MALFORMED = [48, 38, 5, 1, 1]
ABSENT = [17066, 14464, 788, 126, 37]
ALCOHOL = [0, 0.5, 1.5, 4.0, 7.0]


def test_cochran_armitage_agresti_example():
    n = [a + b for a, b in zip(MALFORMED, ABSENT, strict=True)]
    r = ordered.cochran_armitage(
        MALFORMED, n, scores=ALCOHOL, alternative="two-sided", variance="n-1"
    )
    assert round(r.statistic**2, 2) == 6.57
    assert round(r.p, 4) == 0.0104
    assert round(r.statistic / math.sqrt(sum(n) - 1), 4) == 0.0142


def _expanded_correlation(k, n, scores):
    """Pearson r between score and outcome over the table expanded to one row per subject."""
    x = np.repeat(np.asarray(scores, dtype=float), n)
    y = np.concatenate([np.r_[np.ones(a), np.zeros(b - a)] for a, b in zip(k, n, strict=True)])
    return float(np.corrcoef(x, y)[0, 1]), len(x)


TRENDS = [
    (MALFORMED, [a + b for a, b in zip(MALFORMED, ABSENT, strict=True)], ALCOHOL),
    ([2, 4, 9, 15], [20, 20, 22, 25], [1, 2, 3, 4]),
    ([0, 0, 9, 1], [20, 0, 22, 25], [0, 1, 5, 6]),  # an empty group, a zero cell
    ([12, 9, 3], [30, 31, 33], [-1, 0, 2.5]),  # decreasing
    ([30_000, 30_500, 31_000], [300_000, 300_000, 300_000], [1, 2, 3]),
]


@pytest.mark.parametrize(("k", "n", "scores"), TRENDS)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_cochran_armitage_against_correlation_and_statsmodels(k, n, scores, alternative):
    r_corr, big_n = _expanded_correlation(k, n, scores)
    # variance N: z = √N·r; variance N − 1: z = √(N − 1)·r (Agresti's M)
    r_n = ordered.cochran_armitage(k, n, scores=scores, alternative=alternative, variance="n")
    r_m = ordered.cochran_armitage(k, n, scores=scores, alternative=alternative, variance="n-1")
    close(r_n.statistic, math.sqrt(big_n) * r_corr, rel=1e-9)
    close(r_m.statistic, math.sqrt(big_n - 1) * r_corr, rel=1e-9)
    # statsmodels' linear-by-linear test (N − 1 in the variance); zero cells left as they are
    rows = [[a, b - a] for a, b in zip(k, n, strict=True) if b > 0]
    used = [s for s, b in zip(scores, n, strict=True) if b > 0]
    sm = Table(np.array(rows), shift_zeros=False).test_ordinal_association(
        row_scores=np.array(used, dtype=float), col_scores=np.array([1.0, 0.0])
    )
    close(r_m.statistic, sm.zscore, rel=1e-11)
    expected_p = {
        "two-sided": 2 * stats.norm.sf(abs(sm.zscore)),
        "greater": stats.norm.sf(sm.zscore),
        "less": stats.norm.cdf(sm.zscore),
    }[alternative]
    close(r_m.p, expected_p, rel=1e-10)
    # the slope of the proportion on the score, by least squares over the expanded table
    x = np.repeat(np.asarray(scores, dtype=float), n)
    y = np.concatenate([np.r_[np.ones(a), np.zeros(b - a)] for a, b in zip(k, n, strict=True)])
    close(r_n.estimate, np.polyfit(x, y, 1)[0], rel=1e-9)
    close(r_n.estimate / r_n.se, r_n.statistic, rel=1e-12)


def test_cochran_armitage_exact_slope_with_decimal_scores():
    # scores 0.1, 0.2, 0.3 are read as the decimals 1/10, 2/10, 3/10: with k = (1, 2, 3) of
    # n = (10, 10, 10) the proportions rise by exactly 1/10 per 1/10 of score, slope 1
    r = ordered.cochran_armitage(
        [1, 2, 3], [10, 10, 10], scores=[0.1, 0.2, 0.3], alternative="greater", variance="n"
    )
    assert r.exact["estimate"] == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(1, 30), st.integers(0, 30), st.integers(1, 30)),
        min_size=1,
        max_size=6,
    )
)
def test_cmh_property_against_statsmodels(strata):
    strata = [(min(a, b), b, min(c, d), d) for a, b, c, d in strata]
    k1, n1, k2, n2 = (list(v) for v in zip(*strata, strict=True))
    r = ordered.cochran_mantel_haenszel(
        k1, n1, k2, n2, correction=False, alternative="two-sided", level=0.95
    )
    tables = np.array([[[a, b - a], [c, d - c]] for a, b, c, d in strata], dtype=float).transpose(
        1, 2, 0
    )
    st_ = StratifiedTable(tables, shift_zeros=False)
    if r.statistic is not None:
        close(r.statistic, st_.test_null_odds(correction=False).statistic, rel=1e-10)
    if r.se is not None:
        close(r.estimate, st_.oddsratio_pooled, rel=1e-12)
        close(r.se, st_.logodds_pooled_se, rel=1e-10)


def test_cochran_armitage_degenerate():
    r = ordered.cochran_armitage(
        [0, 0, 0], [5, 6, 7], scores=[1, 2, 3], alternative="greater", variance="n"
    )
    assert r.statistic is None and r.p is None and r.estimate == 0
    r = ordered.cochran_armitage(
        [1, 2, 0], [5, 6, 0], scores=[1, 1, 3], alternative="greater", variance="n"
    )
    assert r.statistic is None and r.estimate is None


# -- Cochran–Mantel–Haenszel ----------------------------------------------------------------------

STRATA = [
    # (k1, n1, k2, n2) per stratum
    ([10, 15, 4], [30, 40, 12], [5, 9, 3], [28, 35, 15]),
    ([0, 15, 4, 6], [30, 40, 12, 6], [5, 9, 0, 2], [28, 35, 15, 9]),  # zero cells
    ([120_000, 95_000], [500_000, 400_000], [110_000, 90_000], [500_000, 410_000]),
    ([3, 1], [4, 2], [1, 1], [5, 1]),  # small strata
]


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), STRATA)
@pytest.mark.parametrize("correction", [True, False])
def test_cmh_against_statsmodels(k1, n1, k2, n2, correction):
    tables = np.array(
        [[[a, b - a], [c, d - c]] for a, b, c, d in zip(k1, n1, k2, n2, strict=True)], dtype=float
    ).transpose(1, 2, 0)
    st = StratifiedTable(tables, shift_zeros=False)
    r = ordered.cochran_mantel_haenszel(
        k1, n1, k2, n2, correction=correction, alternative="two-sided", level=0.9
    )
    test = st.test_null_odds(correction=correction)
    close(r.statistic, test.statistic, rel=1e-11)
    close(r.p, stats.chi2.sf(test.statistic, 1), rel=1e-9)
    close(r.estimate, st.oddsratio_pooled, rel=1e-12)
    close(r.se, st.logodds_pooled_se, rel=1e-11)
    lo, hi = st.oddsratio_pooled_confint(alpha=0.1)
    close(r.lower, lo, rel=1e-11)
    close(r.upper, hi, rel=1e-11)


def test_cmh_hand_computed_single_table():
    # One 2×2 table a=10, b=20, c=5, d=23 (N=58): OR = (10·23/58)/(20·5/58) = 2.3 exactly;
    # Δ = 10 − 30·15/58, V = 30·28·15·43/(58²·57); the uncorrected CMH is Δ²/V.
    r = ordered.cochran_mantel_haenszel(
        [10], [30], [5], [28], correction=False, alternative="two-sided", level=0.95
    )
    assert r.exact["estimate"] == Fraction(23, 10)
    delta = 10 - Fraction(30 * 15, 58)
    v = Fraction(30 * 28 * 15 * 43, 58 * 58 * 57)
    assert r.exact["statistic"] == delta**2 / v
    rc = ordered.cochran_mantel_haenszel(
        [10], [30], [5], [28], correction=True, alternative="two-sided", level=0.95
    )
    assert rc.exact["statistic"] == (abs(delta) - Fraction(1, 2)) ** 2 / v


def test_cmh_drops_single_subject_strata_and_truncates_correction():
    base = ordered.cochran_mantel_haenszel(
        [10, 3], [30, 8], [5, 2], [28, 9], correction=True, alternative="two-sided", level=0.95
    )
    more = ordered.cochran_mantel_haenszel(
        [10, 3, 1],
        [30, 8, 1],
        [5, 2, 0],
        [28, 9, 0],
        correction=True,
        alternative="two-sided",
        level=0.95,
    )
    assert base.statistic == more.statistic
    # |Δ| < ½: the corrected statistic is 0 (statsmodels would give (½ − |Δ|)²/V > 0)
    r = ordered.cochran_mantel_haenszel(
        [5], [10], [5], [10], correction=True, alternative="two-sided", level=0.95
    )
    assert r.statistic == 0.0 and r.p == 1.0


def test_cmh_degenerate():
    r = ordered.cochran_mantel_haenszel(
        [0, 0], [5, 6], [0, 0], [7, 8], correction=False, alternative="two-sided", level=0.95
    )
    assert r.statistic is None and r.estimate is None and r.lower is None
    r = ordered.cochran_mantel_haenszel(
        [5], [5], [2], [4], correction=False, alternative="two-sided", level=0.95
    )
    assert r.estimate == math.inf and r.se is None


# -- one-way ANOVA, Kruskal–Wallis ------------------------------------------------------------------

# Hollander & Wolfe (1999), Example 6.2 (Hundal's knowledge-of-performance data), with ties
MOTIVATION = [[40, 35, 38, 43, 44, 41], [38, 40, 47, 44, 40, 42], [48, 40, 45, 43, 46, 44]]
RNG = np.random.default_rng(20261203)
SAMPLES = [
    MOTIVATION,
    [RNG.normal(0, 1, 7), RNG.normal(0.5, 2, 11), RNG.normal(1, 1, 4), RNG.normal(0, 3, 9)],
    [RNG.integers(0, 5, 40), RNG.integers(0, 6, 35)],  # many ties, two groups
    [RNG.normal(10, 1, 200_000), RNG.normal(10.001, 1, 300_000), RNG.normal(10, 1, 500_000)],
]


@pytest.mark.parametrize("groups", SAMPLES[:3])
def test_anova_against_scipy(groups):
    f, p = stats.f_oneway(*groups)
    r = ordered.one_way_anova(groups)
    close(r.statistic, f, rel=1e-11)
    close(r.p, p, rel=1e-9)
    assert r.df == (len(groups) - 1, sum(len(g) for g in groups) - len(groups))


def test_anova_large_and_exact():
    groups = SAMPLES[3]
    f, p = stats.f_oneway(*groups)
    r = ordered.one_way_anova(groups)
    close(r.statistic, f, rel=1e-9)
    close(r.p, p, rel=1e-8)
    # integer data: F exactly, by the textbook sums of squares in fractions
    g = [[1, 2, 2, 5], [3, 3, 4], [7, 6, 6, 8, 9]]
    allv = [v for a in g for v in a]
    grand = Fraction(sum(allv), len(allv))
    ssb = sum(len(a) * (Fraction(sum(a), len(a)) - grand) ** 2 for a in g)
    ssw = sum((v - Fraction(sum(a), len(a))) ** 2 for a in g for v in a)
    assert ordered.one_way_anova(g).exact["statistic"] == (ssb / 2) / (ssw / (len(allv) - 3))


def test_anova_degenerate():
    r = ordered.one_way_anova([[1, 1, 1], [2, 2]])
    assert r.statistic == math.inf and r.p == 0.0
    r = ordered.one_way_anova([[1, 1], [1, 1]])
    assert r.statistic is None and r.p is None
    assert ordered.one_way_anova([[1, 2], []]).statistic is None


@pytest.mark.parametrize("groups", SAMPLES)
def test_kruskal_wallis_against_scipy(groups):
    h, p = stats.kruskal(*groups)
    r = ordered.kruskal_wallis(groups, tie_correction=True)
    # scipy forms 12/(N(N+1))·Σ R²/n − 3(N+1) in floats: at N = 10⁶ the terms are 3·10⁶ and H
    # about 2, so its H carries a relative error near 1e-10 (prereg's is an exact fraction)
    big = sum(len(g) for g in groups) > 10_000
    close(r.statistic, h, rel=1e-9 if big else 1e-12)
    close(r.p, p, rel=1e-9)
    # the general form (N − 1)·Σ n_i (R̄_i − R̄)² / Σ (r − R̄)², which is the tie-corrected H,
    # from scipy's mid-ranks, centred (no cancellation)
    ranks = stats.rankdata(np.concatenate(groups))
    at = np.cumsum([0] + [len(g) for g in groups])
    rbar = ranks.mean()
    general = (
        (len(ranks) - 1)
        * sum(len(g) * (ranks[at[i] : at[i + 1]].mean() - rbar) ** 2 for i, g in enumerate(groups))
        / float(np.sum((ranks - rbar) ** 2))
    )
    close(r.statistic, general, rel=1e-11)
    # uncorrected: 12/(N(N+1))·Σ n_i (mean rank_i − (N+1)/2)², from scipy's mid-ranks
    big_n = len(ranks)
    h0 = (
        12
        / (big_n * (big_n + 1))
        * sum(
            len(g) * (ranks[at[i] : at[i + 1]].mean() - (big_n + 1) / 2) ** 2
            for i, g in enumerate(groups)
        )
    )
    ru = ordered.kruskal_wallis(groups, tie_correction=False)
    close(ru.statistic, h0, rel=1e-9)
    close(ru.p, stats.chi2.sf(h0, len(groups) - 1), rel=1e-8)


def test_kruskal_wallis_degenerate():
    assert ordered.kruskal_wallis([[3, 3], [3, 3, 3]], tie_correction=True).statistic is None
    assert ordered.kruskal_wallis([[3, 3], []], tie_correction=False).p is None


# -- Jonckheere–Terpstra --------------------------------------------------------------------------


def test_jonckheere_hollander_wolfe_example():
    # Hollander & Wolfe (1999), Example 6.2: J = 79, E J = 54, Var J = 150.29 (tie-corrected),
    # J* = 2.04, one-sided P ≈ 0.0207 by the normal approximation
    r = ordered.jonckheere_terpstra(MOTIVATION, alternative="greater", method="asymptotic")
    assert r.statistic == 79 and r.extra["mean"] == 54
    assert round(r.extra["variance"], 2) == 150.29
    assert round(r.extra["z"], 2) == 2.04
    assert round(r.p, 4) == 0.0207


def test_jonckheere_exact_published():
    # PMCMRplus' jonckheereTerpstraTest documentation (coffee data, no ties): JT = 59, exact
    # two-sided P = 0.01973
    coffee = [[447, 396, 383, 410], [438, 521, 468, 391, 504, 472], [513, 543, 506, 489, 407]]
    r = ordered.jonckheere_terpstra(coffee, alternative="two-sided", method="exact")
    assert r.statistic == 59 and round(r.p, 5) == 0.01973


def _enumerate_j(values, sizes):
    """Every assignment of the values to groups of the given sizes: the J of each."""
    out = []
    idx = range(len(values))

    def assign(rest, k):
        if k == len(sizes) - 1:
            yield [list(rest)]
            return
        for chosen in itertools.combinations(rest, sizes[k]):
            left = [i for i in rest if i not in chosen]
            for tail in assign(left, k + 1):
                yield [list(chosen), *tail]

    for parts in assign(list(idx), 0):
        j = Fraction(0)
        for a in range(len(parts)):
            for b in range(a + 1, len(parts)):
                for i in parts[a]:
                    for m in parts[b]:
                        xi, ym = values[i], values[m]
                        j += 1 if xi < ym else Fraction(1, 2) if xi == ym else 0
        out.append(j)
    return out


@pytest.mark.parametrize(
    "groups",
    [
        [[1.5, 3.2], [2.0, 4.1, 5.5], [0.3, 6.0, 7.2]],
        [[5, 1, 9], [2, 8], [3, 4, 7, 6]],
        [[1, 2, 2], [2, 3], [1, 3, 3]],  # ties
        [[4, 1], [3, 2]],
    ],
)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_jonckheere_against_enumeration(groups, alternative):
    values = [v for g in groups for v in g]
    sizes = [len(g) for g in groups]
    js = _enumerate_j(values, sizes)
    observed = js[0]  # the first assignment is the data's own
    ra = ordered.jonckheere_terpstra(groups, alternative=alternative, method="asymptotic")
    assert ra.exact["statistic"] == observed
    mean = sum(js) / len(js)
    var = sum((j - mean) ** 2 for j in js) / len(js)
    # the tie-corrected variance is the exact permutation variance
    assert Fraction(ra.extra["mean"]) == mean
    close(ra.extra["variance"], float(var), rel=1e-14)
    z = float(observed - mean) / math.sqrt(var)
    close(ra.extra["z"], z, rel=1e-14, abs_=1e-15)
    if len(set(values)) == len(values):
        re = ordered.jonckheere_terpstra(groups, alternative=alternative, method="exact")
        upper = Fraction(sum(j >= observed for j in js), len(js))
        lower = Fraction(sum(j <= observed for j in js), len(js))
        expected = {
            "greater": upper,
            "less": lower,
            "two-sided": min(Fraction(1), 2 * min(upper, lower)),
        }[alternative]
        assert re.exact["p"] == expected
    else:
        re = ordered.jonckheere_terpstra(groups, alternative=alternative, method="exact")
        assert re.p is None and re.extra["undefined"]


def test_jonckheere_large_sample_without_ties():
    # without ties the variance is Hollander & Wolfe's eq. 6.14:
    # [N²(2N + 3) − Σ n_i²(2n_i + 3)]/72, the mean (N² − Σ n_i²)/4
    rng = np.random.default_rng(5)
    groups = [rng.normal(0, 1, 40_000), rng.normal(0.004, 1, 30_000), rng.normal(0.01, 1, 50_000)]
    r = ordered.jonckheere_terpstra(groups, alternative="greater", method="asymptotic")
    sizes = [len(g) for g in groups]
    big_n = sum(sizes)
    mean = (big_n**2 - sum(m * m for m in sizes)) / 4
    var = (big_n**2 * (2 * big_n + 3) - sum(m * m * (2 * m + 3) for m in sizes)) / 72
    # J is the sum over ordered pairs of groups of Mann–Whitney's U of the later group
    j = sum(
        stats.mannwhitneyu(groups[b], groups[a], method="asymptotic").statistic
        for a in range(3)
        for b in range(a + 1, 3)
    )
    assert r.statistic == j
    close(r.extra["mean"], mean, rel=1e-15)
    close(r.extra["variance"], var, rel=1e-14)
    close(r.extra["z"], (r.statistic - mean) / math.sqrt(var), rel=1e-12)
    close(r.p, stats.norm.sf(r.extra["z"]), rel=1e-12)


def test_jonckheere_exact_size_limit():
    big = [list(range(i, 500, 2)) for i in range(2)]
    with pytest.raises(MethodError, match="asymptotic"):
        ordered.jonckheere_terpstra(big, alternative="greater", method="exact")


# -- bad input, the catalogue ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ordered.chi_square_homogeneity([3, -1], [5, 5]), "non-negative"),
        (lambda: ordered.chi_square_homogeneity([6, 1], [5, 5]), "must not exceed"),
        (lambda: ordered.chi_square_homogeneity([1], [5]), "at least 2 groups"),
        (lambda: ordered.chi_square_homogeneity([1, 2], [5]), "one entry per group"),
        (
            lambda: ordered.cochran_armitage(
                [1, 2], [5, 5], scores=[1], alternative="greater", variance="n"
            ),
            "one number per group",
        ),
        (
            lambda: ordered.cochran_armitage(
                [1, 2], [5, 5], scores=[1, 2], alternative="up", variance="n"
            ),
            "alternative",
        ),
        (
            lambda: ordered.cochran_armitage(
                [1, 2], [5, 5], scores=[1, 2], alternative="greater", variance="N"
            ),
            "variance",
        ),
        (
            lambda: ordered.cochran_mantel_haenszel(
                [1], [5], [1], [5], correction="yes", alternative="two-sided", level=0.95
            ),
            "correction",
        ),
        (
            lambda: ordered.cochran_mantel_haenszel(
                [1], [5], [1], [5], correction=False, alternative="two-sided", level=95
            ),
            "level",
        ),
        (
            lambda: ordered.kruskal_wallis([[1, 2], [3, float("nan")]], tie_correction=True),
            "finite",
        ),
        (
            lambda: ordered.jonckheere_terpstra(
                [[1, 2], [3]], alternative="greater", method="permutation"
            ),
            "method",
        ),
        (lambda: ordered.one_way_anova([[1, 2, 3]]), "at least 2 groups"),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_complete():
    es = {n: e for n, e in entries().items() if e.family == "ordered"}
    assert set(es) == {
        "chi-square-homogeneity",
        "cochran-armitage",
        "cochran-mantel-haenszel",
        "mantel-haenszel-risk-difference",
        "dunnett",
        "one-way-anova",
        "kruskal-wallis",
        "jonckheere-terpstra",
        "linear-contrast-proportions",
        "linear-contrast-means",
    }
    for e in es.values():
        assert e.shape in SHAPES
        assert callable(e.load())
        for name in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, name).strip(), (e.name, name)
        assert e.reports


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), STRATA)
@pytest.mark.parametrize("correction", [True, False])
@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_cmh_one_sided_against_statsmodels(k1, n1, k2, n2, correction, alternative):
    """One-sided: the signed root of statsmodels' statistic (its sign that of Δ, the observed
    count of a's successes less its expectation) referred to one normal tail; the interval is
    the one bound of exp(log OR ∓ z_level se)."""
    tables = np.array(
        [[[a, b - a], [c, d - c]] for a, b, c, d in zip(k1, n1, k2, n2, strict=True)], dtype=float
    ).transpose(1, 2, 0)
    st = StratifiedTable(tables, shift_zeros=False)
    r = ordered.cochran_mantel_haenszel(
        k1, n1, k2, n2, correction=correction, alternative=alternative, level=0.9
    )
    two = ordered.cochran_mantel_haenszel(
        k1, n1, k2, n2, correction=correction, alternative="two-sided", level=0.9
    )
    assert r.statistic == two.statistic and r.exact == two.exact
    delta = sum(a - b * (a + c) / (b + d) for a, b, c, d in zip(k1, n1, k2, n2, strict=True))
    chi2 = st.test_null_odds(correction=correction).statistic
    z = math.copysign(math.sqrt(chi2), delta)
    close(r.extra["z"], z, rel=1e-10)
    close(r.p, stats.norm.sf(z if alternative == "greater" else -z), rel=1e-9)
    q = stats.norm.ppf(0.9)
    log_or, se = math.log(st.oddsratio_pooled), st.logodds_pooled_se
    if alternative == "greater":
        close(r.lower, math.exp(log_or - q * se), rel=1e-11)
        assert r.upper is None
    else:
        close(r.upper, math.exp(log_or + q * se), rel=1e-11)
        assert r.lower is None


def test_cmh_one_sided_on_no_association_is_one_half():
    """Δ exactly 0 (each stratum's a equal to its expectation): χ² = 0, z = 0, one-sided P of
    exactly 1/2 either way; with the correction, |Δ| ≤ 1/2 also gives 1/2."""
    for alternative in ("greater", "less"):
        r = ordered.cochran_mantel_haenszel(
            [5, 3], [10, 6], [5, 3], [10, 6], correction=False, alternative=alternative,
            level=0.95,
        )  # fmt: skip
        assert r.exact["statistic"] == 0 and r.extra["z"] == 0.0 and r.p == 0.5
        # Δ = 6 − 11·10/20 = 1/2: corrected to 0
        r = ordered.cochran_mantel_haenszel(
            [6], [10], [5], [10], correction=True, alternative=alternative, level=0.95
        )
        assert r.exact["statistic"] == 0 and r.p == 0.5


def test_cmh_alternative_is_checked():
    with pytest.raises(MethodError, match="alternative"):
        ordered.cochran_mantel_haenszel(
            [1], [5], [1], [5], correction=False, alternative="above", level=0.95
        )
