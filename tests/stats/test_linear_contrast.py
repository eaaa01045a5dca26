"""Linear contrasts of groups' proportions and means (prereg.stats.ordered): an interaction of a
2x2 (coefficients 1, -1, -1, 1), a three-factor interaction (eight groups, signs of the
product of the factors' +/-1 codes), a trend of means with centred scores.

Oracles: statsmodels OLS of the outcomes on one indicator per group (no intercept). For 0/1
outcomes with cov_type='HC0' its params are the proportions and its covariance is
diag(p(1 - p)/n) exactly (the sandwich of a saturated model), so t_test(c) with a normal
reference is the Wald contrast; with the plain covariance, t_test(c) is the pooled-variance t
contrast at N - g df. Welch's separate-variance contrast by hand (sample variances in fractions,
Welch-Satterthwaite df), and for two groups with coefficients 1, -1 it is scipy's Welch t.
Figures on a threshold are checked against hand fractions."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from prereg.stats.methods import MethodError
from prereg.stats.ordered import linear_contrast_means, linear_contrast_proportions


def _design(sizes):
    x = np.zeros((sum(sizes), len(sizes)))
    row = 0
    for j, m in enumerate(sizes):
        x[row : row + m, j] = 1.0
        row += m
    return x


def _outcomes(k, n):
    return np.concatenate([np.r_[np.ones(a), np.zeros(b - a)] for a, b in zip(k, n, strict=True)])


@pytest.mark.parametrize(
    "k, n, c, alternative",
    [
        ([9, 7, 5, 4], [10, 10, 10, 10], [1, -1, -1, 1], "greater"),
        ([30, 22, 41, 20], [50, 40, 60, 45], [1, -1, -1, 1], "two-sided"),
        ([3, 9, 12], [20, 20, 20], [-1, 0, 1], "less"),
        (
            [14, 11, 9, 12, 17, 8, 10, 13],
            [20, 20, 20, 20, 20, 20, 20, 20],
            [1, -1, -1, 1, -1, 1, 1, -1],
            "two-sided",
        ),
    ],
)
def test_proportions_against_statsmodels_hc0(k, n, c, alternative):
    import statsmodels.api as sm

    r = linear_contrast_proportions(
        np.array(k), np.array(n), coefficients=c, alternative=alternative, level=0.9, margin=0
    )
    fit = sm.OLS(_outcomes(k, n), _design(n)).fit(cov_type="HC0")
    t = fit.t_test(np.array([c], dtype=float), use_t=False)
    assert math.isclose(r.estimate, float(t.effect[0]), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(r.se, float(t.sd[0, 0]), rel_tol=1e-12)
    assert math.isclose(r.statistic, float(t.tvalue[0, 0]), rel_tol=1e-10)
    two = float(t.pvalue)
    want = {
        "two-sided": two,
        "greater": two / 2 if r.statistic > 0 else 1 - two / 2,
        "less": two / 2 if r.statistic < 0 else 1 - two / 2,
    }[alternative]
    assert math.isclose(r.p, want, rel_tol=1e-9)
    want_l = sum(Fraction(ci) * Fraction(a, b) for ci, a, b in zip(c, k, n, strict=True))
    assert r.exact["estimate"] == want_l
    if alternative == "two-sided":  # the 90% interval, both bounds
        lo, hi = t.conf_int(alpha=0.1)[0]
        assert math.isclose(r.lower, lo, rel_tol=1e-10) and math.isclose(r.upper, hi, rel_tol=1e-10)


def test_an_interaction_exactly_on_its_margin():
    """(9/10 - 7/10) - (5/10 - 4/10) = 1/10 by hand: against a margin of 0.1 the statistic is
    0 and the one-sided P exactly 1/2; the float difference 0.9 - 0.7 - 0.5 + 0.4 is
    0.10000000000000003."""
    k, n = np.array([9, 7, 5, 4]), np.array([10, 10, 10, 10])
    assert 0.9 - 0.7 - 0.5 + 0.4 != 0.1
    r = linear_contrast_proportions(
        k, n, coefficients=[1, -1, -1, 1], alternative="greater", level=0.95, margin=0.1
    )
    assert r.exact["estimate"] == Fraction(1, 10)
    assert r.statistic == 0.0 and r.p == 0.5 and r.exact["statistic_squared"] == 0
    # coefficients are read as the decimals written: 0.1 * (7/10) is 7/100 exactly
    r = linear_contrast_proportions(
        np.array([7, 0]),
        np.array([10, 10]),
        coefficients=[0.1, 0],
        alternative="less",
        level=0.95,
        margin=0.07,
    )
    assert r.exact["estimate"] == Fraction(7, 100) and r.statistic == 0.0


def test_the_three_factor_interaction_is_the_product_of_the_codes():
    """Eight cells of a 2x2x2 with coefficients the product of the factors' +/-1 codes: the
    contrast is the difference, between the two languages, of the difference of differences;
    by hand from the cells' proportions."""
    cells = list(itertools.product((1, -1), repeat=3))
    k = [8, 6, 9, 4, 7, 7, 6, 5]
    n = [10] * 8
    c = [a * b * d for a, b, d in cells]
    r = linear_contrast_proportions(
        np.array(k), np.array(n), coefficients=c, alternative="two-sided", level=0.95, margin=0
    )
    p = {cell: Fraction(a, 10) for cell, a in zip(cells, k, strict=True)}
    ddiff = {
        lang: (p[(1, 1, lang)] - p[(1, -1, lang)]) - (p[(-1, 1, lang)] - p[(-1, -1, lang)])
        for lang in (1, -1)
    }
    assert r.exact["estimate"] == ddiff[1] - ddiff[-1]


def test_no_variation_leaves_the_test_undefined_and_an_empty_group_every_figure():
    r = linear_contrast_proportions(
        np.array([10, 0, 10, 0]),
        np.array([10, 10, 10, 10]),
        coefficients=[1, -1, -1, 1],
        alternative="two-sided",
        level=0.95,
        margin=0,
    )
    assert r.estimate == 0 and r.se is None and r.p is None
    r = linear_contrast_proportions(
        np.array([1, 0, 3]),
        np.array([5, 0, 5]),
        coefficients=[1, -1, 0],
        alternative="two-sided",
        level=0.95,
        margin=0,
    )
    assert r.estimate is None and r.p is None
    # a group whose coefficient is 0 is not read, even empty
    r = linear_contrast_proportions(
        np.array([1, 0, 3]),
        np.array([5, 0, 5]),
        coefficients=[1, 0, -1],
        alternative="two-sided",
        level=0.95,
        margin=0,
    )
    assert r.exact["estimate"] == Fraction(-2, 5)


@pytest.mark.parametrize(
    "coefficients, message",
    [
        ([1, -1], "one number per group (3), got 2"),
        ([0, 0, 0], "must not all be 0"),
        ("1, -1, 0", "a list of numbers"),
        ([1, "a", 0], "coefficients[1]"),
    ],
)
def test_bad_coefficients_are_refused(coefficients, message):
    with pytest.raises(MethodError, match=re.escape(message)):
        linear_contrast_proportions(
            np.array([1, 2, 3]),
            np.array([5, 5, 5]),
            coefficients=coefficients,
            alternative="two-sided",
            level=0.95,
            margin=0,
        )


def _groups(seed, sizes):
    rng = np.random.default_rng(seed)
    return [np.round(rng.normal(j * 0.3, 1 + 0.5 * j, m), 2) for j, m in enumerate(sizes)]


@pytest.mark.parametrize("seed, sizes", [(1, (8, 12, 9, 15)), (2, (20, 20, 20, 20))])
def test_pooled_means_against_statsmodels(seed, sizes):
    import statsmodels.api as sm

    gs = _groups(seed, sizes)
    c = [1, -1, -1, 1]
    r = linear_contrast_means(
        gs, coefficients=c, variance="pooled", alternative="two-sided", level=0.95, margin=0.2
    )
    fit = sm.OLS(np.concatenate(gs), _design(sizes)).fit()
    t = fit.t_test((np.array([c], dtype=float), np.array([0.2])))
    assert math.isclose(r.estimate, float(t.effect[0]), rel_tol=1e-12)
    assert math.isclose(r.se, float(t.sd[0, 0]), rel_tol=1e-12)
    assert math.isclose(r.statistic, float(t.tvalue[0, 0]), rel_tol=1e-10)
    assert math.isclose(r.p, float(t.pvalue), rel_tol=1e-9)
    assert r.df == fit.df_resid == sum(sizes) - 4
    # its interval is the contrast's, at the same df (not about the margin)
    lo, hi = fit.t_test(np.array([c], dtype=float)).conf_int(alpha=0.05)[0]
    assert math.isclose(r.lower, lo, rel_tol=1e-10) and math.isclose(r.upper, hi, rel_tol=1e-10)


def test_welch_means_by_hand_in_fractions():
    gs = _groups(3, (6, 9, 7))
    c = [Fraction(-1), Fraction(0), Fraction(1)]
    r = linear_contrast_means(
        gs, coefficients=[-1, 0, 1], variance="welch", alternative="greater", level=0.95, margin=0
    )
    fr = [[Fraction(repr(float(v))) for v in g] for g in gs]
    means = [sum(g) / len(g) for g in fr]
    var = [sum((v - m) ** 2 for v in g) / (len(g) - 1) for g, m in zip(fr, means, strict=True)]
    v = [ci * ci * s / len(g) for ci, s, g in zip(c, var, fr, strict=True)]
    est = sum(ci * m for ci, m in zip(c, means, strict=True))
    df = sum(v) ** 2 / sum(vi * vi / (len(g) - 1) for vi, g in zip(v, fr, strict=True) if vi)
    assert math.isclose(r.estimate, float(est), rel_tol=1e-12)
    assert math.isclose(r.se, math.sqrt(float(sum(v))), rel_tol=1e-12)
    assert math.isclose(r.df, float(df), rel_tol=1e-10)


def test_welch_two_groups_is_scipys_welch_t():
    from scipy.stats import ttest_ind

    gs = _groups(4, (11, 7))
    r = linear_contrast_means(
        gs, coefficients=[1, -1], variance="welch", alternative="less", level=0.95, margin=0
    )
    want = ttest_ind(gs[0], gs[1], equal_var=False, alternative="less")
    assert math.isclose(r.statistic, want.statistic, rel_tol=1e-10)
    assert math.isclose(r.p, want.pvalue, rel_tol=1e-9)
    assert math.isclose(r.df, want.df, rel_tol=1e-10)


def test_a_mean_contrast_on_its_margin_gives_t_zero():
    """Means 0.3, 0.1 | 0.6, 0.3 (by hand from the decimals): (0.3 - 0.1) - (0.6 - 0.3) =
    -0.1, so against a margin of -0.1 t is 0 and the one-sided P exactly 1/2."""
    gs = [
        np.array([0.2, 0.4]),
        np.array([0.1, 0.1, 0.1]),
        np.array([0.5, 0.7]),
        np.array([0.3, 0.2, 0.4]),
    ]
    r = linear_contrast_means(
        gs,
        coefficients=[1, -1, -1, 1],
        variance="welch",
        alternative="greater",
        level=0.95,
        margin=-0.1,
    )
    assert r.statistic == 0.0 and r.p == 0.5
    r = linear_contrast_means(
        [np.array([1, 3]), np.array([0, 1]), np.array([2, 2, 5]), np.array([4, 2])],
        coefficients=[1, -1, -1, 1],
        variance="pooled",
        alternative="two-sided",
        level=0.95,
        margin=0,
    )
    assert r.exact["estimate"] == Fraction(2) - Fraction(1, 2) - Fraction(3) + Fraction(3)


def test_a_ratio_margin_on_arithmetic_means_is_the_contrast_1_minus_rho():
    """Non-inferiority of a mean with a ratio margin (mean a at least 0.9 of mean b) is the
    contrast x̄_a − 0.9 x̄_b against 0 (Welch: se² = s_a²/n_a + 0.81 s_b²/n_b), the
    Sasabuchi-Fieller test of a ratio of means. Grades with mean 0.495 against 0.55: 0.495 − 0.9 ·
    0.55 = 0 by hand, so t = 0 and P = 1/2 (the floats give -5.6e-17)."""
    a = np.array([0.38, 0.12, 0.6, 0.88])
    b = np.array([0.75, 0.36, 0.87, 0.65, 0.12])
    mean_a = sum(Fraction(repr(float(v))) for v in a) / 4
    mean_b = sum(Fraction(repr(float(v))) for v in b) / 5
    assert mean_a == Fraction(9, 10) * mean_b == Fraction(99, 200)
    assert math.fsum([float(a.mean()), -0.9 * float(b.mean())]) != 0  # what the floats give
    r = linear_contrast_means(
        [a, b],
        coefficients=[1, -0.9],
        variance="welch",
        alternative="greater",
        level=0.95,
        margin=0,
    )
    assert r.statistic == 0.0 and r.p == 0.5
    se = math.sqrt(a.var(ddof=1) / 4 + 0.81 * b.var(ddof=1) / 5)
    assert math.isclose(r.se, se, rel_tol=1e-12)
