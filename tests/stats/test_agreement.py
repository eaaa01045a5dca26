"""Agreement family: each method against statsmodels / scikit-learn or a published example.

Oracles and what they return:
- statsmodels ``cohens_kappa(table, wt=...)``: ``std_kappa`` is the Fleiss–Cohen–Everitt
  non-null standard error (our ``se``, for the interval), ``std_kappa0`` the one under kappa = 0
  (our ``extra["se_null"]``, for the z test: its ``z_value`` is kappa / std_kappa0). Its
  ``wt="linear"``/``"quadratic"`` weights are disagreement weights (1 minus ours) over the
  positions 0..k-1 when ``weights`` is None: the same kappa.
- scikit-learn ``cohen_kappa_score(labels=..., weights=...)`` weights by position in
  ``labels``, as we do by position in ``categories``.
- statsmodels ``fleiss_kappa(table, method="fleiss")`` reads a units x categories count table.
- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability" (Annenberg School for
  Communication, University of Pennsylvania): the worked examples' data and published alphas.
- Shrout & Fleiss (1979), Psychol Bull 86:420-428, Table 2 (data) and Table 4 (ICCs); the
  mean squares also against statsmodels' ANOVA.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import f as f_dist
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from prereg.stats import agreement as ag
from prereg.stats.catalogue import entries
from prereg.stats.methods import MethodError

WT = {"none": None, "linear": "linear", "quadratic": "quadratic"}


def close(a, b, rel=1e-12, abs_=1e-14):
    assert a == pytest.approx(b, rel=rel, abs=abs_)


def table_of(a, b, k):
    t = np.zeros((k, k))
    np.add.at(t, (np.asarray(a), np.asarray(b)), 1)
    return t


def expand(table):
    """Rater codes (a, b) from a k x k table of counts."""
    t = np.asarray(table)
    k = t.shape[0]
    cells = np.repeat(np.arange(k * k), t.ravel())
    return cells // k, cells % k


# --------------------------------------------------------------------------------------------
# Cohen's kappa


def check_kappa_against_statsmodels(a, b, k, weights, level=0.95):
    t = table_of(a, b, k)
    sm = sm_cohens_kappa(t, wt=WT[weights]) if weights != "none" else sm_cohens_kappa(t)
    alpha = 1 - level
    sk = cohen_kappa_score(a, b, labels=list(range(k)), weights=WT[weights])
    for alternative in ("two-sided", "greater", "less"):
        r = ag.cohens_kappa(
            a, b, categories=list(range(k)), weights=weights, level=level, alternative=alternative
        )
        close(r.estimate, sm.kappa)
        close(r.se, sm.std_kappa)
        close(r.extra["se_null"], sm.std_kappa0)
        close(r.statistic, sm.z_value)
        z = sm.z_value
        expected_p = {
            "two-sided": 2 * norm.sf(abs(z)),
            "greater": norm.sf(z),
            "less": norm.cdf(z),
        }[alternative]
        close(r.p, expected_p, abs_=1e-300)
        zc = norm.isf(alpha / 2)
        close(r.lower, sm.kappa - zc * sm.std_kappa)
        close(r.upper, sm.kappa + zc * sm.std_kappa)
        close(r.estimate, sk)
        assert r.exact["estimate"] == Fraction(r.exact["estimate"])
        close(float(r.exact["estimate"]), sm.kappa)


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cohens_kappa_matches_statsmodels_and_sklearn(weights, seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed
    a = rng.integers(0, k, 150)
    b = np.where(rng.random(150) < 0.6, a, rng.integers(0, k, 150))
    check_kappa_against_statsmodels(a, b, k, weights, level=[0.9, 0.95, 0.99][seed - 1])


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_cohens_kappa_zero_cell_and_large_n(weights):
    # a 3 x 3 table with an empty cell, then the same table times 5000 (n ~ 1.2e6)
    table = np.array([[80, 0, 5], [10, 60, 9], [3, 12, 61]])
    check_kappa_against_statsmodels(*expand(table), 3, weights)
    a, b = expand(table * 5000)
    check_kappa_against_statsmodels(a, b, 3, weights)


def test_cohens_kappa_exact_by_hand():
    # table [[20, 5], [10, 15]], n = 50: p_o = 35/50 = 7/10; margins a (25, 25)/50, b (30, 20)/50;
    # p_e = (1/2)(3/5) + (1/2)(2/5) = 1/2; kappa = (7/10 - 1/2)/(1/2) = 2/5
    a, b = expand([[20, 5], [10, 15]])
    r = ag.cohens_kappa(
        a, b, categories=[0, 1], weights="none", level=0.95, alternative="two-sided"
    )
    # the variance under kappa = 0: (p_e + p_e² − Σ p_i. p_.i (p_i. + p_.i))/(n (1 − p_e)²)
    # = (3/4 − 51/100)/(50/4) = 12/625, so z² = (2/5)²/(12/625) = 25/3
    assert r.exact == {
        "observed_agreement": Fraction(7, 10),
        "expected_agreement": Fraction(1, 2),
        "estimate": Fraction(2, 5),
        "statistic_squared": Fraction(25, 3),
        # the large-sample variance of kappa (Fleiss, Cohen & Everitt), a fraction of the
        # table: statsmodels' var_kappa of it is 0.016127999999999997
        "se_squared": Fraction(252, 15625),
    }
    assert r.estimate == 0.4
    assert r.counts["n"] == 50 and r.counts["table"] == [[20, 5], [10, 15]]


def test_cohens_kappa_categories_order_sets_the_weights():
    # codes 10, 20, 30 registered in that order are positions 0, 1, 2
    rng = np.random.default_rng(7)
    a = rng.integers(0, 3, 80)
    b = np.where(rng.random(80) < 0.5, a, rng.integers(0, 3, 80))
    codes = np.array([10, 20, 30])
    r = ag.cohens_kappa(
        codes[a],
        codes[b],
        categories=[10, 20, 30],
        weights="linear",
        level=0.95,
        alternative="greater",
    )
    close(r.estimate, cohen_kappa_score(a, b, labels=[0, 1, 2], weights="linear"))
    # reversing the order of a linear scale does not change kappa; shuffling it does
    rev = ag.cohens_kappa(
        codes[a],
        codes[b],
        categories=[30, 20, 10],
        weights="linear",
        level=0.95,
        alternative="greater",
    )
    assert rev.exact["estimate"] == r.exact["estimate"]
    shuffled = ag.cohens_kappa(
        codes[a],
        codes[b],
        categories=[20, 10, 30],
        weights="linear",
        level=0.95,
        alternative="greater",
    )
    close(shuffled.estimate, cohen_kappa_score(a, b, labels=[1, 0, 2], weights="linear"))


def test_cohens_kappa_degenerate():
    # both raters always say 1: p_e = 1, kappa undefined
    r = ag.cohens_kappa(
        [1, 1, 1], [1, 1, 1], categories=[0, 1], weights="none", level=0.95, alternative="less"
    )
    assert r.estimate is None and r.se is None and r.p is None
    assert r.exact["expected_agreement"] == 1
    empty = ag.cohens_kappa(
        [], [], categories=[0, 1], weights="none", level=0.95, alternative="less"
    )
    assert empty.estimate is None and empty.counts["n"] == 0


@settings(max_examples=40, deadline=None)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=60),
    st.sampled_from(["none", "linear", "quadratic"]),
)
def test_cohens_kappa_property(pairs, weights):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    r = ag.cohens_kappa(
        a, b, categories=[0, 1, 2, 3], weights=weights, level=0.95, alternative="two-sided"
    )
    if r.estimate is None:
        assert r.exact["expected_agreement"] == 1
        return
    close(r.estimate, cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=WT[weights]))
    t = table_of(a, b, 4)
    sm = sm_cohens_kappa(t, wt=WT[weights]) if weights != "none" else sm_cohens_kappa(t)
    # compare variances: where the exact variance is 0, statsmodels' float one is a rounding
    # residue of either sign (its SE then NaN or ~1e-8); with three items and quadratic
    # weights that residue reached -8.1e-14 (a variance of order 1 summed from terms of order
    # 10), so the absolute tolerance is 1e-12
    close(r.extra["variance"], sm.var_kappa, rel=1e-10, abs_=1e-12)
    close(r.extra["variance_null"], sm.var_kappa0, rel=1e-10, abs_=1e-12)


# --------------------------------------------------------------------------------------------
# percent agreement and Gwet's AC1


def test_percent_agreement_exact():
    a = [0, 1, 2, 2, 1, 0, 0]
    b = [0, 1, 1, 2, 1, 2, 0]
    r = ag.percent_agreement(a, b, categories=[0, 1, 2])
    # equal at positions 0, 1, 3, 4, 6: 5 of 7
    assert r.exact["estimate"] == Fraction(5, 7)
    assert r.counts == {"agree": 5, "n": 7}
    assert ag.percent_agreement([], [], categories=[0]).estimate is None


def test_gwet_ac1_by_hand():
    # table [[40, 5], [10, 45]], n = 100: p_a = 85/100; pi_1 = (45/100 + 50/100)/2 = 19/40,
    # pi_2 = 21/40; p_e = 2 (19/40)(21/40)/(2 - 1) = 399/800; AC1 = (17/20 - 399/800)/(401/800)
    # = (680 - 399)/401 = 281/401
    a, b = expand([[40, 5], [10, 45]])
    r = ag.gwet_ac1(a, b, categories=[0, 1], level=0.95)
    assert r.exact["observed_agreement"] == Fraction(17, 20)
    assert r.exact["expected_agreement"] == Fraction(399, 800)
    assert r.exact["estimate"] == Fraction(281, 401)
    zc = norm.isf(0.025)
    close(r.lower, 281 / 401 - zc * r.se)
    # an unused third category changes q and so p_e: sum pi(1 - pi) / 2
    r3 = ag.gwet_ac1(a, b, categories=[0, 1, 2], level=0.95)
    assert r3.exact["expected_agreement"] == Fraction(399, 1600)


def _ac1(p, q):
    row = [sum(p[i]) for i in range(q)]
    col = [sum(p[i][j] for i in range(q)) for j in range(q)]
    pi = [(row[i] + col[i]) / 2 for i in range(q)]
    pa = sum(p[i][i] for i in range(q))
    pe = sum(x * (1 - x) for x in pi) / (q - 1)
    return (pa - pe) / (1 - pe)


def delta_method_variance(table):
    """Var(AC1) by the delta method for multinomial shares: (Σ p g² − (Σ p g)²)/n with g the
    gradient of AC1 in the shares, by central differences in exact rational arithmetic (step
    1e-30, error of order 1e-60: exact to far below float precision)."""
    t = np.asarray(table)
    q = t.shape[0]
    n = int(t.sum())
    p = [[Fraction(int(t[i, j]), n) for j in range(q)] for i in range(q)]
    h = Fraction(1, 10**30)
    m1 = m2 = Fraction(0)
    for i in range(q):
        for j in range(q):
            up = [r[:] for r in p]
            down = [r[:] for r in p]
            up[i][j] += h
            down[i][j] -= h
            g = (_ac1(up, q) - _ac1(down, q)) / (2 * h)
            m1 += p[i][j] * g
            m2 += p[i][j] * g * g
    return float((m2 - m1 * m1) / n)


@pytest.mark.parametrize(
    "table",
    [
        [[40, 5], [10, 45]],
        [[118, 5], [2, 0]],  # high agreement, a zero cell
        [[20, 3, 0], [4, 15, 6], [1, 2, 30]],
        [[1000, 3, 0, 1], [4, 1500, 6, 0], [1, 2, 30000, 9], [0, 0, 7, 400000]],
    ],
)
def test_gwet_ac1_variance_is_the_delta_method(table):
    a, b = expand(table)
    q = len(table)
    r = ag.gwet_ac1(a, b, categories=list(range(q)), level=0.9)
    close(r.extra["variance"], delta_method_variance(table), rel=1e-12)
    close(r.se, np.sqrt(delta_method_variance(table)), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Fleiss' kappa

# Published worked example of Fleiss' kappa (10 units, 14 raters, 5 categories; the example of
# the Wikipedia article "Fleiss' kappa", after Fleiss 1971): P-bar = 0.378, P-bar_e = 0.213,
# kappa = 0.210. Rows: counts of raters per category.
FLEISS_EXAMPLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def ratings_from_counts(counts):
    return np.array([sum(([j] * c for j, c in enumerate(row)), []) for row in counts])


def fleiss_null_se(counts):
    """Fleiss, Nee & Landis (1979), by hand: N units, m raters, p_j category shares."""
    c = np.asarray(counts, dtype=float)
    n_units, m = c.shape[0], c[0].sum()
    p = c.sum(axis=0) / (n_units * m)
    q = 1 - p
    s = (p * q).sum()
    var = 2 / (n_units * m * (m - 1)) * (s**2 - (p * q * (q - p)).sum()) / s**2
    return np.sqrt(var)


def test_fleiss_kappa_published_example():
    x = ratings_from_counts(FLEISS_EXAMPLE)
    r = ag.fleiss_kappa(x, categories=[0, 1, 2, 3, 4], alternative="greater")
    assert round(float(r.exact["observed_agreement"]), 3) == 0.378
    assert round(float(r.exact["expected_agreement"]), 3) == 0.213
    assert round(r.estimate, 3) == 0.210
    close(r.estimate, sm_fleiss_kappa(np.array(FLEISS_EXAMPLE), method="fleiss"))
    # P-bar by hand: Σ_i Σ_j n_ij² = 196+60+70+94+74+98+58+46+66+66 = 828,
    # (828 - 140)/(10·14·13) = 688/1820 = 172/455
    assert r.exact["observed_agreement"] == Fraction(172, 455)
    se0 = fleiss_null_se(FLEISS_EXAMPLE)
    close(r.extra["se_null"], se0)
    close(r.statistic, r.estimate / se0)
    close(r.p, norm.sf(r.estimate / se0))


@pytest.mark.parametrize("seed", [4, 5, 6])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_fleiss_kappa_matches_statsmodels(seed, alternative):
    rng = np.random.default_rng(seed)
    units, raters, q = 40, 3 + seed % 3, 4
    truth = rng.integers(0, q, units)
    x = np.where(
        rng.random((units, raters)) < 0.5, truth[:, None], rng.integers(0, q, (units, raters))
    )
    counts = np.stack([(x == j).sum(axis=1) for j in range(q)], axis=1)
    r = ag.fleiss_kappa(x.astype(float), categories=list(range(q)), alternative=alternative)
    close(r.estimate, sm_fleiss_kappa(counts, method="fleiss"))
    z = r.estimate / fleiss_null_se(counts)
    close(r.statistic, z)
    expected = {"two-sided": 2 * norm.sf(abs(z)), "greater": norm.sf(z), "less": norm.cdf(z)}
    close(r.p, expected[alternative], abs_=1e-300)


def test_fleiss_kappa_refuses_missing_and_unknown_codes():
    with pytest.raises(MethodError, match=r"x\[1\]\[0\] is missing"):
        ag.fleiss_kappa([[0, 1], [np.nan, 1]], categories=[0, 1], alternative="greater")
    with pytest.raises(MethodError, match=r"x\[0\]\[1\] is 2.0, not one of"):
        ag.fleiss_kappa([[0, 2], [0, 1]], categories=[0, 1], alternative="greater")
    # every rating in one category: kappa undefined, no crash
    r = ag.fleiss_kappa([[1, 1], [1, 1]], categories=[0, 1], alternative="greater")
    assert r.estimate is None and r.p is None


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha

nan = np.nan
# Krippendorff (2011), section "C. Nominal data, any number of observers, missing data" and the
# following sections: 4 observers (A, B, C, D; rows) x 12 units (columns), values 1..5, "."
# missing. Published: alpha nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)
# Krippendorff (2011), section "A. Binary or dichotomous data, two observers, no missing
# data": observers A and B over 10 units; published alpha = 0.095.
KRIPPENDORFF_2011_BINARY = np.array(
    [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]], dtype=float
)


@pytest.mark.parametrize(
    "level, published",
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_published_example(level, published):
    # our shape has one row per unit: the published matrix transposed
    r = ag.krippendorff_alpha(KRIPPENDORFF_2011.T, level_of_measurement=level)
    assert round(r.estimate, 3) == published
    # unit 12 has a single rating: not pairable; 11 units, 40 pairable values
    assert r.counts["pairable_units"] == 11 and r.counts["pairable_values"] == 40


def test_krippendorff_nominal_example_exact_by_hand():
    # Counted by hand from the data: pairable values n = 40 with n_1 = 9, n_2 = 13, n_3 = 10,
    # n_4 = 5, n_5 = 3 (Σ n_c² = 384); matching coincidences o_cc = Σ_u n_uc(n_uc − 1)/(m_u − 1):
    # o_11 = 3·2/2 + 3·2/3 + 2·1/1 = 7, o_22 = 2 + 4 + 4 = 10, o_33 = 4 + 4 = 8, o_44 = 4,
    # o_55 = 3 (sum 32). alpha = 1 − (n − 1)(n − 32)/(n² − Σ n_c²) = 1 − 39·8/1216 = 113/152
    # = 0.7434..., the published 0.743.
    r = ag.krippendorff_alpha(KRIPPENDORFF_2011.T, level_of_measurement="nominal")
    assert r.exact["estimate"] == Fraction(113, 152)


def test_krippendorff_binary_example():
    r = ag.krippendorff_alpha(KRIPPENDORFF_2011_BINARY.T, level_of_measurement="nominal")
    assert round(r.estimate, 3) == 0.095
    # by hand: n = 20, values 0 (14) and 1 (6); disagreeing pairs in units 1, 3, 6, 9 give
    # o_01 = o_10 = 4; alpha = 1 - (n - 1) · 8 / (2 · 14 · 6) = 1 - 152/168 = 2/21
    assert r.exact["estimate"] == Fraction(2, 21)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 4)), min_size=3, max_size=3),
        min_size=2,
        max_size=12,
    ),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
)
def test_krippendorff_single_ratings_do_not_count(rows, level):
    x = np.array([[nan if v is None else v for v in row] for row in rows], dtype=float)
    with_single = np.vstack([x, [[2.0, nan, nan]]])
    r = ag.krippendorff_alpha(x, level_of_measurement=level)
    s = ag.krippendorff_alpha(with_single, level_of_measurement=level)
    assert r.exact.get("estimate") == s.exact.get("estimate")
    assert s.counts["units"] == r.counts["units"] + 1
    assert s.counts["pairable_units"] == r.counts["pairable_units"]


def test_krippendorff_interval_matches_definition_on_complete_data():
    # interval alpha of complete data, from its definition: 1 - D_o / D_e with D_o the mean
    # squared difference over pairs within units and D_e over all pairs of values
    rng = np.random.default_rng(11)
    x = rng.integers(1, 8, (30, 3)).astype(float)
    values = x.ravel()
    n = values.size
    d_o = sum(((row[:, None] - row[None, :]) ** 2).sum() / (3 - 1) for row in x) / n
    d_e = ((values[:, None] - values[None, :]) ** 2).sum() / (n * (n - 1))
    r = ag.krippendorff_alpha(x, level_of_measurement="interval")
    close(r.estimate, 1 - d_o / d_e)


def alpha_by_pairs(x, delta2):
    """alpha = 1 − D_o/D_e from the pairs themselves: D_o averages δ² over the ordered pairs
    of ratings within each unit (weight 1/(m_u − 1) per unit), D_e over all ordered pairs of
    pairable ratings."""
    units = [[v for v in row if not np.isnan(v)] for row in x]
    units = [u for u in units if len(u) >= 2]
    pooled = [v for u in units for v in u]
    n = len(pooled)
    d_o = (
        sum(
            Fraction(
                sum(delta2(u[i], u[j]) for i in range(len(u)) for j in range(len(u)) if i != j)
            )
            / (len(u) - 1)
            for u in units
        )
        / n
    )
    d_e = Fraction(
        sum(delta2(pooled[i], pooled[j]) for i in range(n) for j in range(n) if i != j)
    ) / (n * (n - 1))
    return None if d_e == 0 else 1 - d_o / d_e


DELTA2 = {
    "nominal": lambda c, k: Fraction(int(c != k)),
    "interval": lambda c, k: (Fraction(c) - Fraction(k)) ** 2,
    "ratio": lambda c, k: (
        Fraction(0)
        if c + k == 0
        else ((Fraction(c) - Fraction(k)) / (Fraction(c) + Fraction(k))) ** 2
    ),
}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=4, max_size=4),
        min_size=2,
        max_size=10,
    ),
    st.sampled_from(sorted(DELTA2)),
)
def test_krippendorff_with_missing_matches_the_pairs(rows, level):
    x = np.array([[nan if v is None else v for v in row] for row in rows], dtype=float)
    r = ag.krippendorff_alpha(x, level_of_measurement=level)
    if r.counts["pairable_values"] < 2:
        assert r.estimate is None
        return
    assert r.exact.get("estimate") == alpha_by_pairs(x, DELTA2[level])


def test_krippendorff_degenerate():
    r = ag.krippendorff_alpha([[1, 1], [1, 1]], level_of_measurement="nominal")
    assert r.estimate is None  # no variation: expected disagreement 0
    r = ag.krippendorff_alpha([[1, nan], [nan, 2]], level_of_measurement="interval")
    assert r.estimate is None and r.counts["pairable_units"] == 0


# --------------------------------------------------------------------------------------------
# intraclass correlation

# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges; Table 4: the six ICCs to two places;
# the text gives BMS = 11.24, WMS = 6.26, JMS = 32.49, EMS = 1.02.
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)
SHROUT_FLEISS_ICC = {
    "icc-1-1": 0.17,
    "icc-2-1": 0.29,
    "icc-3-1": 0.71,
    "icc-1-k": 0.44,
    "icc-2-k": 0.62,
    "icc-3-k": 0.91,
}


def anova_mean_squares(x):
    """BMS, WMS, JMS, EMS from statsmodels' two-way and one-way OLS ANOVA tables."""
    import pandas as pd
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    n, k = x.shape
    df = pd.DataFrame(
        {
            "y": x.ravel(),
            "t": np.repeat(np.arange(n), k).astype(str),
            "j": np.tile(np.arange(k), n).astype(str),
        }
    )
    two = anova_lm(smf.ols("y ~ C(t) + C(j)", df).fit())
    one = anova_lm(smf.ols("y ~ C(t)", df).fit())
    return {
        "BMS": two.loc["C(t)", "mean_sq"],
        "JMS": two.loc["C(j)", "mean_sq"],
        "EMS": two.loc["Residual", "mean_sq"],
        "WMS": one.loc["Residual", "mean_sq"],
    }


@pytest.mark.parametrize("form", ag.ICC_FORMS)
def test_icc_shrout_fleiss_published(form):
    r = ag.intraclass_correlation(SHROUT_FLEISS, form=form, level=0.95)
    assert round(r.estimate, 2) == SHROUT_FLEISS_ICC[form]
    assert round(r.extra["BMS"], 2) == 11.24
    assert round(r.extra["WMS"], 2) == 6.26
    assert round(r.extra["JMS"], 2) == 32.49
    assert round(r.extra["EMS"], 2) == 1.02


def icc_by_hand(ms, n, k, form, level):
    """ICC, F, df, P and interval from the mean squares (Shrout & Fleiss 1979 eqs; McGraw &
    Wong 1996 Table 7 for the intervals), written out independently of the module."""
    b, w, j, e = ms["BMS"], ms["WMS"], ms["JMS"], ms["EMS"]
    tail = 1 - (1 - level) / 2
    icc = {
        "icc-1-1": (b - w) / (b + (k - 1) * w),
        "icc-2-1": (b - e) / (b + (k - 1) * e + k * (j - e) / n),
        "icc-3-1": (b - e) / (b + (k - 1) * e),
        "icc-1-k": (b - w) / b,
        "icc-2-k": (b - e) / (b + (j - e) / n),
        "icc-3-k": (b - e) / b,
    }[form]
    if form[4] == "1":
        fo, d2 = b / w, n * (k - 1)
    else:
        fo, d2 = b / e, (n - 1) * (k - 1)
    d1 = n - 1
    if form[4] in "13":
        fl = fo / f_dist.ppf(tail, d1, d2)
        fu = fo * f_dist.ppf(tail, d2, d1)
        if form.endswith("k"):
            lo, hi = 1 - 1 / fl, 1 - 1 / fu
        else:
            lo, hi = (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)
    else:
        rho = (b - e) / (b + (k - 1) * e + k * (j - e) / n)
        a_ = k * rho / (n * (1 - rho))
        b_ = 1 + k * rho * (n - 1) / (n * (1 - rho))
        # McGraw & Wong's form of the Satterthwaite df: v = (a·JMS + b·EMS)² /
        # ((a·JMS)²/(k−1) + (b·EMS)²/((n−1)(k−1)))
        v = (a_ * j + b_ * e) ** 2 / ((a_ * j) ** 2 / (k - 1) + (b_ * e) ** 2 / ((n - 1) * (k - 1)))
        fs = f_dist.ppf(tail, d1, v)
        fss = f_dist.ppf(tail, v, d1)
        if form.endswith("k"):
            lo = n * (b - fs * e) / (fs * (j - e) + n * b)
            hi = n * (fss * b - e) / (j - e + n * fss * b)
        else:
            lo = n * (b - fs * e) / (fs * (k * j + (k * n - k - n) * e) + n * b)
            hi = n * (fss * b - e) / (k * j + (k * n - k - n) * e + n * fss * b)
    return icc, fo, (d1, d2), f_dist.sf(fo, d1, d2), lo, hi


@pytest.mark.parametrize("form", ag.ICC_FORMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_icc_against_anova_and_hand_formulas(form, seed):
    if seed == 0:
        x = SHROUT_FLEISS
    else:
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(25, 1)) + rng.normal(scale=0.7, size=(25, 3)) + [0.0, 0.3, -0.2]
    n, k = x.shape
    ms = anova_mean_squares(x)
    level = 0.95 if seed == 0 else 0.9
    r = ag.intraclass_correlation(x, form=form, level=level)
    for name in ms:
        close(r.extra[name], ms[name], rel=1e-10)
    icc, fo, df, p, lo, hi = icc_by_hand(
        {name: float(r.exact[name]) for name in ms}, n, k, form, level
    )
    close(r.estimate, icc)
    close(r.statistic, fo)
    assert r.df == df
    close(r.p, p, abs_=1e-300)
    close(r.lower, lo, rel=1e-9)
    close(r.upper, hi, rel=1e-9)


def test_icc_exact_mean_squares():
    # BMS of Table 2 by hand: target sums 24, 12, 26, 16, 30, 19 (grand 127, n·k = 24);
    # SS_targets = (24² + 12² + 26² + 16² + 30² + 19²)/4 − 127²/24 = 2913/4 − 16129/24
    # = (17478 − 16129)/24 = 1349/24; BMS = SS_targets/(n − 1) = 1349/120 (11.24 published)
    r = ag.intraclass_correlation(SHROUT_FLEISS, form="icc-3-1", level=0.95)
    assert r.exact["BMS"] == Fraction(1349, 120)
    # ICC(3,1) exactly (BMS − EMS)/(BMS + 3·EMS)
    b, e = r.exact["BMS"], r.exact["EMS"]
    assert r.exact["estimate"] == (b - e) / (b + 3 * e)


@pytest.mark.parametrize("form", ["icc-1-1", "icc-2-1", "icc-3-1", "icc-2-k"])
def test_icc_of_decimal_ratings_is_that_of_the_decimals(form):
    """Ratings in tenths (0.5, 0.3, ...) are the decimals the data write: the ICC is scale
    free, so it is exactly the ICC of the whole numbers (it was of the binary floats, a
    fraction a hair off, and an ICC of exactly 3/4 failed `ge 0.75`), and each mean square is
    the whole numbers' over 100."""
    whole = np.array(SHROUT_FLEISS, dtype=float)
    tenths = np.array([[v / 10 for v in row] for row in SHROUT_FLEISS])
    a = ag.intraclass_correlation(whole, form=form, level=0.95)
    b = ag.intraclass_correlation(tenths, form=form, level=0.95)
    assert b.exact["estimate"] == a.exact["estimate"]
    for name in ("BMS", "WMS", "JMS", "EMS"):
        assert b.exact[name] == a.exact[name] / 100
    assert b.exact["statistic"] == a.exact["statistic"]


@pytest.mark.parametrize("level", ["interval", "ratio", "ordinal", "nominal"])
def test_krippendorff_alpha_of_decimal_ratings_is_that_of_the_decimals(level):
    """Interval and ratio alpha read the values: in tenths they are the decimals the data
    write, so alpha is exactly that of the whole numbers (it was of the binary floats)."""
    whole = np.array(SHROUT_FLEISS, dtype=float)
    a = ag.krippendorff_alpha(whole, level_of_measurement=level)
    b = ag.krippendorff_alpha(whole / 10, level_of_measurement=level)
    assert b.exact["estimate"] == a.exact["estimate"]


def test_icc_degenerate():
    # all ratings equal: every mean square 0, ICC undefined
    r = ag.intraclass_correlation(np.ones((4, 3)), form="icc-2-1", level=0.95)
    assert r.estimate is None and r.p is None
    # raters agree perfectly, targets differ: EMS = WMS = 0, ICC = 1, no F
    x = np.array([[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]])
    r = ag.intraclass_correlation(x, form="icc-1-1", level=0.95)
    assert r.estimate == 1.0 and r.statistic is None


# --------------------------------------------------------------------------------------------
# refusals, catalogue, imports


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: ag.cohens_kappa(
                [0, 1], [0, 1, 1], categories=[0, 1], weights="none", level=0.95, alternative="less"
            ),
            "a and b differ in length",
        ),
        (
            lambda: ag.cohens_kappa(
                [0, 3], [0, 1], categories=[0, 1], weights="none", level=0.95, alternative="less"
            ),
            r"a\[1\] is 3, not one of the registered categories",
        ),
        (
            lambda: ag.cohens_kappa(
                [0, 1], [0, 1], categories=[0, 1], weights="cubic", level=0.95, alternative="less"
            ),
            "weights must be one of none, linear, quadratic",
        ),
        (
            lambda: ag.cohens_kappa(
                [0, 1], [0, 1], categories=[0, 1], weights="none", level=95, alternative="less"
            ),
            "level must lie strictly between 0 and 1",
        ),
        (
            lambda: ag.cohens_kappa(
                [0, 1], [0, 1], categories=[0, 1], weights="none", level=0.9, alternative="up"
            ),
            "alternative must be one of",
        ),
        (
            lambda: ag.cohens_kappa(
                [0.5, 1], [0, 1], categories=[0, 1], weights="none", level=0.9, alternative="less"
            ),
            r"a\[0\] is 0.5, not an integer category code",
        ),
        (
            lambda: ag.gwet_ac1([0], [0], categories=[0, 0], level=0.9),
            "categories must be distinct",
        ),
        (
            lambda: ag.krippendorff_alpha([[1, 2]], level_of_measurement="cardinal"),
            "level_of_measurement must be one of nominal, ordinal, interval, ratio",
        ),
        (
            lambda: ag.krippendorff_alpha([[-1, 2]], level_of_measurement="ratio"),
            "ratio-level alpha needs non-negative values",
        ),
        (
            lambda: ag.intraclass_correlation([[1, 2]], form="icc-2-1", level=0.95),
            "at least 2 targets and 2 raters",
        ),
        (
            lambda: ag.intraclass_correlation([[1, 2], [1, 3]], form="icc(2,1)", level=0.95),
            "form must be one of icc-1-1",
        ),
        (
            lambda: ag.intraclass_correlation([[1, nan], [1, 3]], form="icc-2-1", level=0.95),
            r"x\[0\]\[1\] is missing",
        ),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_are_complete():
    mine = {name: e for name, e in entries().items() if e.family == "agreement"}
    assert set(mine) == {
        "cohens-kappa",
        "percent-agreement",
        "gwet-ac1",
        "fleiss-kappa",
        "krippendorff-alpha",
        "fleiss-kappa-bootstrap",
        "krippendorff-alpha-bootstrap",
        "intraclass-correlation",
    }
    for e in mine.values():
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)
        assert "\n" not in e.summary
        fn = e.load()
        import inspect

        keyword_only = {
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        assert keyword_only == set(e.options), e.name
        assert all(
            p.default is inspect.Parameter.empty for p in inspect.signature(fn).parameters.values()
        )


def test_importing_the_module_does_not_import_scipy():
    code = "import sys, prereg.stats.agreement; print('scipy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


# -- bootstrap intervals resampling units ------------------------------------------------------


@pytest.mark.parametrize("interval", ["percentile", "basic"])
def test_fleiss_kappa_bootstrap_matches_scipy_bootstrap(interval):
    """scipy.stats.bootstrap over the units' indices with the same PCG64 generator draws the
    same units (rng.integers(0, N, (B, N))); its statistic is statsmodels' Fleiss kappa of the
    resampled units, its interval the same quantiles (linear)."""
    from scipy.stats import bootstrap
    from statsmodels.stats.inter_rater import aggregate_raters

    rng = np.random.default_rng(12)
    truth = rng.integers(0, 3, 25)
    x = np.where(rng.random((25, 3)) < 0.75, truth[:, None], rng.integers(0, 3, (25, 3)))
    x = x.astype(float)
    r = ag.fleiss_kappa_bootstrap(
        x, categories=[0, 1, 2], interval=interval, level=0.9, resamples=999, seed=3,
        quantile_method="linear",
    )  # fmt: skip
    assert (
        r.exact["estimate"]
        == ag.fleiss_kappa(x, categories=[0, 1, 2], alternative="greater").exact["estimate"]
    )
    ref = bootstrap(
        (np.arange(25),),
        lambda i: sm_fleiss_kappa(aggregate_raters(x[i.astype(int)])[0]),
        n_resamples=999, method=interval, confidence_level=0.9,
        rng=np.random.Generator(np.random.PCG64(3)), vectorized=False,
    )  # fmt: skip
    assert r.lower == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert r.upper == pytest.approx(ref.confidence_interval.high, rel=1e-12)
    assert r.se == pytest.approx(ref.standard_error, rel=1e-12)
    assert r.extra["resamples_used"] == 999


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_bootstrap_matches_scipy_bootstrap(level):
    """Krippendorff's published 12-unit example with its missing ratings: scipy's bootstrap
    over the units with the same generator, the statistic krippendorff_alpha of the resampled
    rows (itself checked on the published values above); resamples with no expected
    disagreement are left out by both (NaN for scipy is kept, so they are counted here)."""
    from scipy.stats import bootstrap

    x = KRIPPENDORFF_2011.T
    r = ag.krippendorff_alpha_bootstrap(
        x, level_of_measurement=level, interval="percentile", level=0.9, resamples=150,
        seed=8, quantile_method="linear",
    )  # fmt: skip

    def alpha(i):
        v = ag.krippendorff_alpha(x[i.astype(int)], level_of_measurement=level).estimate
        return np.nan if v is None else float(v)

    reps = []
    ref = bootstrap(
        (np.arange(12),), lambda i: reps.append(alpha(i)) or reps[-1], n_resamples=150,
        method="percentile", confidence_level=0.9, rng=np.random.Generator(np.random.PCG64(8)),
        vectorized=False,
    )  # fmt: skip
    kept = np.array([v for v in reps[:150] if np.isfinite(v)])
    assert r.extra["resamples_used"] == kept.size
    lo, hi = np.quantile(kept, [0.05, 0.95])
    assert (r.lower, r.upper) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
    if kept.size == 150:
        assert r.lower == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert float(r.estimate) == pytest.approx(
        float(ag.krippendorff_alpha(x, level_of_measurement=level).estimate)
    )


def test_agreement_bootstrap_refusals_and_undefined_resamples():
    # two units, both rated alike by everyone: kappa is undefined (P_e = 1), no interval
    flat = np.array([[1.0, 1.0], [1.0, 1.0]])
    r = ag.fleiss_kappa_bootstrap(
        flat, categories=[0, 1], interval="percentile", level=0.9, resamples=10, seed=1,
        quantile_method="linear",
    )  # fmt: skip
    assert r.estimate is None and r.lower is None
    with pytest.raises(MethodError, match="interval"):
        ag.fleiss_kappa_bootstrap(
            np.array([[0.0, 1.0], [1.0, 1.0]]), categories=[0, 1], interval="bca", level=0.9,
            resamples=10, seed=1, quantile_method="linear",
        )  # fmt: skip
    with pytest.raises(MethodError, match="resamples"):
        ag.krippendorff_alpha_bootstrap(
            np.array([[0.0, 1.0], [1.0, 1.0]]), level_of_measurement="nominal",
            interval="basic", level=0.9, resamples=0, seed=1, quantile_method="linear",
        )  # fmt: skip
