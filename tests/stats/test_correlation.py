"""The correlation family (prereg.stats.correlation) and Friedman's test (prereg.stats.paired)
against independent oracles.

Oracles: scipy.stats.pearsonr (r and its confidence_interval, which is Fisher's z),
scipy.stats.spearmanr (average ranks for ties), scipy.stats.kendalltau (variant b),
scipy.stats.friedmanchisquare (tie-corrected Q), hand Fractions (Spearman's 1 − 6Σd²/(n(n² − 1))
without ties, Kendall's pairs counted one by one, Friedman's Q from the rank sums, the exact
Friedman P by enumerating every arrangement of every block's ranks) and Steiger's (1980) eq. 7
for Williams' t written here from scipy's correlations. Data sit exactly on thresholds: a
Pearson r of exactly 1/2 whose floats (scipy's and numpy's) fall below 1/2, a Spearman rho of
exactly 1/2, two equal correlations with a shared reference.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.stats.catalogue import entries
from prereg.stats.correlation import (
    correlation_difference,
    kendall_tau_b,
    pearson_correlation,
    spearman_correlation,
)
from prereg.stats.methods import MethodError
from prereg.stats.paired import friedman

RNG = np.random.default_rng(20261204)
X = RNG.normal(size=25)
Y = 0.6 * X + RNG.normal(size=25)
# ordinal 1-5 ratings with many ties, and a metric with ties of its own
H = np.clip(np.round(3 + X), 1, 5)
M = np.round(2 * Y) / 2
# r exactly 1/2 as the decimals are written; scipy's float is 0.4999999999999998
ON_X = [1.1, 1.2, 1.3, 1.4, 1.5]
ON_Y = [0.7, 1.0, 0.8, 1.1, 0.9]


def _r_fraction(x, y) -> tuple[Fraction, Fraction]:
    """(numerator, r²) of Pearson's r from the decimals as written, by hand."""
    xs = [Fraction(repr(float(v))) for v in x]
    ys = [Fraction(repr(float(v))) for v in y]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    return sxy, sxy * sxy / (sxx * syy)


@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_pearson_matches_scipy_and_fisher_z(alt):
    got = pearson_correlation(X, Y, alternative=alt, null_value=0, level=0.9)
    ref = stats.pearsonr(X, Y, alternative=alt)
    assert got.estimate == pytest.approx(ref.statistic, rel=1e-13)
    ci = ref.confidence_interval(0.9)
    lo = None if alt == "less" else ci.low
    hi = None if alt == "greater" else ci.high
    for mine, theirs in ((got.lower, lo), (got.upper, hi)):
        assert (mine is None) == (theirs is None)
        if theirs is not None:
            assert mine == pytest.approx(theirs, rel=1e-12)
    # the test against a null value: (atanh r − atanh ρ0)·√(n − 3) on the standard normal
    got = pearson_correlation(X, Y, alternative=alt, null_value=0.3, level=0.9)
    z = (math.atanh(ref.statistic) - math.atanh(0.3)) * math.sqrt(25 - 3)
    p = {
        "greater": stats.norm.sf(z),
        "less": stats.norm.cdf(z),
        "two-sided": 2 * stats.norm.sf(abs(z)),
    }[alt]
    assert got.statistic == pytest.approx(z, rel=1e-12)
    assert got.p == pytest.approx(p, rel=1e-10)
    assert got.se == pytest.approx(1 / math.sqrt(22))


def test_pearson_exactly_on_one_half():
    num, r2 = _r_fraction(ON_X, ON_Y)
    assert num > 0 and r2 == Fraction(1, 4)  # r = 1/2 exactly, by hand
    assert stats.pearsonr(ON_X, ON_Y).statistic < 0.5  # the floats miss it
    got = pearson_correlation(ON_X, ON_Y, alternative="greater", null_value=0.5, level=0.95)
    assert got.exact["estimate"] == Fraction(1, 2)
    assert got.statistic == 0.0 and got.p == 0.5 and got.exact["p"] == Fraction(1, 2)
    two = pearson_correlation(ON_X, ON_Y, alternative="two-sided", null_value=0.5, level=0.95)
    assert two.p == 1.0 and two.exact["p"] == 1
    # a hair away from the null value the test is no longer on it
    off = pearson_correlation(ON_X, ON_Y, alternative="greater", null_value=0.49, level=0.95)
    assert off.statistic > 0 and off.p < 0.5 and "p" not in off.exact


def test_irrational_correlations_carry_no_exact_estimate():
    got = pearson_correlation(X, Y, alternative="greater", null_value=0, level=0.95)
    _, r2 = _r_fraction(X, Y)
    n, d = r2.numerator, r2.denominator
    assert math.isqrt(n) ** 2 != n or math.isqrt(d) ** 2 != d  # r is irrational
    assert "estimate" not in got.exact


@pytest.mark.parametrize("variance", ["bonett-wright", "fieller"])
def test_spearman_with_ties_matches_scipy(variance):
    got = spearman_correlation(
        H, M, alternative="two-sided", null_value=0.2, level=0.95, variance=variance
    )
    rho = stats.spearmanr(H, M).statistic
    assert got.estimate == pytest.approx(rho, rel=1e-12)
    var = (1 + rho**2 / 2) / 22 if variance == "bonett-wright" else 1.06 / 22
    assert got.se == pytest.approx(math.sqrt(var), rel=1e-12)
    z = math.atanh(rho)
    c = stats.norm.ppf(0.975)
    assert got.lower == pytest.approx(math.tanh(z - c * math.sqrt(var)), rel=1e-12)
    assert got.upper == pytest.approx(math.tanh(z + c * math.sqrt(var)), rel=1e-12)
    stat = (z - math.atanh(0.2)) / math.sqrt(var)
    assert got.p == pytest.approx(2 * stats.norm.sf(abs(stat)), rel=1e-10)


def test_spearman_without_ties_is_the_hand_fraction_and_decides_one_half():
    x = [1, 2, 3, 4, 5]
    y = [1, 3, 5, 2, 4]  # Σd² = 10: rho = 1 − 60/120 = 1/2
    d2 = sum((a - b) ** 2 for a, b in zip(x, y, strict=True))
    hand = 1 - Fraction(6 * d2, 5 * 24)
    assert hand == Fraction(1, 2)
    got = spearman_correlation(
        x, y, alternative="greater", null_value=0.5, level=0.95, variance="fieller"
    )
    assert got.exact["estimate"] == hand and got.p == 0.5 and got.exact["p"] == Fraction(1, 2)
    # scipy's float is 0.49999999999999994, below the threshold the data sit on
    assert got.estimate == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-15)


def test_kendall_tau_b_matches_scipy_and_the_hand_count():
    got = kendall_tau_b(H, M, alternative="greater", null_value=0, level=0.95)
    assert got.estimate == pytest.approx(stats.kendalltau(H, M, variant="b").statistic, rel=1e-12)
    s = tx = ty = 0
    for i, j in itertools.combinations(range(H.size), 2):
        a, b = np.sign(H[i] - H[j]), np.sign(M[i] - M[j])
        s += int(a * b)
        tx += a != 0
        ty += b != 0
    assert got.counts["concordant_minus_discordant"] == s
    assert (got.counts["pairs_untied_a"], got.counts["pairs_untied_b"]) == (tx, ty)
    assert got.se == pytest.approx(math.sqrt(0.437 / 21))
    assert got.upper is None and got.lower < got.estimate
    # an exactly rational tau-b is carried exactly: 5 pairs, S = 6 of 10 untied pairs each
    x, y = [1, 2, 3, 4, 5], [2, 1, 3, 5, 4]
    exact = kendall_tau_b(x, y, alternative="greater", null_value=0.6, level=0.95)
    assert exact.exact["estimate"] == Fraction(3, 5) == Fraction(6, 10)
    assert exact.p == 0.5


def test_a_perfect_correlation_has_a_point_interval():
    got = pearson_correlation(
        [1, 2, 3, 4], [2, 4, 6, 8], alternative="greater", null_value=0.5, level=0.95
    )
    assert got.estimate == 1 and got.lower == 1 and got.upper is None and got.p == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: pearson_correlation(
                [1, 2, 3], [1, 2, 4], alternative="greater", null_value=0, level=0.95
            ),
            "at least 4 pairs, got 3",
        ),
        (
            lambda: kendall_tau_b(
                [1, 2, 3, 4], [1, 2, 4, 3], alternative="greater", null_value=0, level=0.95
            ),
            "at least 5 pairs, got 4",
        ),
        (
            lambda: pearson_correlation(
                [3, 3, 3, 3, 3], [1, 2, 4, 3, 5], alternative="greater", null_value=0, level=0.95
            ),
            r"x \(arm a\) is constant",
        ),
        (
            lambda: spearman_correlation(
                [1, 2, 4, 3, 5],
                [2, 2, 2, 2, 2],
                alternative="greater",
                null_value=0,
                level=0.95,
                variance="fieller",
            ),
            r"y \(arm b\) is constant",
        ),
        (
            lambda: pearson_correlation(
                [1, 2, 3, 4], [1, 2, 3], alternative="greater", null_value=0, level=0.95
            ),
            "must pair up",
        ),
        (
            lambda: pearson_correlation(X, Y, alternative="greater", null_value=1, level=0.95),
            "null_value must lie strictly between -1 and 1",
        ),
        (
            lambda: pearson_correlation(X, Y, alternative="up", null_value=0, level=0.95),
            "alternative must be one of",
        ),
        (
            lambda: spearman_correlation(
                X, Y, alternative="greater", null_value=0, level=0.95, variance="exact"
            ),
            "variance must be one of",
        ),
        (
            lambda: correlation_difference(
                np.c_[X, Y, X][:3], correlation="pearson", alternative="greater"
            ),
            "at least 4 units",
        ),
        (
            lambda: correlation_difference(
                np.c_[X, Y], correlation="pearson", alternative="greater"
            ),
            "reads three groups",
        ),
        (
            lambda: correlation_difference(
                np.c_[X, np.ones(25), Y], correlation="pearson", alternative="greater"
            ),
            "group 2 is constant",
        ),
        (
            lambda: correlation_difference(
                np.c_[X, Y, X], correlation="kendall", alternative="greater"
            ),
            "correlation must be one of",
        ),
    ],
)
def test_bad_input_is_refused_with_its_reason(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def _williams(r12, r13, r23, n):
    """Steiger (1980) eq. 7, written from the paper."""
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    return (r12 - r13) * math.sqrt(
        (n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3)
    )


@pytest.mark.parametrize("corr", ["pearson", "spearman"])
@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_williams_t_matches_steiger_eq_7(corr, alt):
    ref, a, b = X, Y, 0.3 * X + RNG.normal(size=25)
    f = stats.pearsonr if corr == "pearson" else stats.spearmanr
    r12, r13, r23 = f(ref, a).statistic, f(ref, b).statistic, f(a, b).statistic
    got = correlation_difference(np.c_[ref, a, b], correlation=corr, alternative=alt)
    t = _williams(r12, r13, r23, 25)
    assert got.estimate == pytest.approx(r12 - r13, rel=1e-12)
    assert got.statistic == pytest.approx(t, rel=1e-10) and got.df == 22
    p = {
        "greater": stats.t.sf(t, 22),
        "less": stats.t.cdf(t, 22),
        "two-sided": 2 * stats.t.sf(abs(t), 22),
    }[alt]
    assert got.p == pytest.approx(p, rel=1e-9)


def test_williams_t_on_equal_correlations_is_exactly_zero():
    ref = [1, 2, 3, 4, 5]
    a = [2, 1, 3, 4, 5]  # Σd² = 2 against ref
    b = [1, 2, 3, 5, 4]  # Σd² = 2 against ref: the same rho, another metric
    got = correlation_difference(np.c_[ref, a, b], correlation="spearman", alternative="greater")
    assert got.exact["estimate"] == 0 and got.statistic == 0 and got.p == 0.5
    assert got.exact["p"] == Fraction(1, 2)
    assert got.extra["r_a_b"] < 1


def _friedman_q(x, correct):
    """Q by hand from each block's mid-ranks (Fractions)."""
    n, k = x.shape
    sums = [Fraction(0)] * k
    ties = 0
    for row in x:
        ranks = stats.rankdata(row)
        for j in range(k):
            sums[j] += Fraction(ranks[j])
        _, c = np.unique(row, return_counts=True)
        ties += sum(int(t) ** 3 - int(t) for t in c)
    q = Fraction(12, n * k * (k + 1)) * sum(s * s for s in sums) - 3 * n * (k + 1)
    return q / (1 - Fraction(ties, n * (k**3 - k))) if correct else q


def test_friedman_chi_square_matches_scipy_with_ties():
    x = np.round(RNG.normal(size=(15, 4)) + [0, 0, 0.5, 1], 0)
    got = friedman(x, method="chi-square", tie_correction=True)
    ref = stats.friedmanchisquare(*x.T)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p == pytest.approx(ref.pvalue, rel=1e-10) and got.df == 3
    assert got.exact["statistic"] == _friedman_q(x, True)
    assert got.exact["estimate"] == _friedman_q(x, True) / (15 * 3)  # Kendall's W
    raw = friedman(x, method="chi-square", tie_correction=False)
    assert raw.exact["statistic"] == _friedman_q(x, False)
    assert raw.p == pytest.approx(stats.chi2.sf(float(_friedman_q(x, False)), 3), rel=1e-10)


@pytest.mark.parametrize(
    "x",
    [
        [[1, 2, 3], [1, 3, 2], [2, 3, 1], [1, 2, 3]],
        [[1.5, 1.5, 3], [1, 3, 2], [2, 2, 2.5], [0.1, 0.2, 0.3]],  # ties in blocks
        [[5, 1, 2, 3], [4, 1, 3, 2], [4, 2, 1, 3]],
    ],
)
def test_friedman_exact_p_is_the_enumerated_share(x):
    x = np.asarray(x, dtype=float)
    got = friedman(x, method="exact", tie_correction=True)
    observed = _friedman_q(x, True)
    perms = [list(itertools.permutations(row)) for row in x]
    hits = total = 0
    for choice in itertools.product(*perms):
        total += 1
        hits += _friedman_q(np.array(choice), True) >= observed
    assert got.exact["p"] == Fraction(hits, total)
    assert got.p == float(Fraction(hits, total))


def test_friedman_refuses_what_it_cannot_rank():
    with pytest.raises(MethodError, match="same value in all 3 groups: nothing ranks"):
        friedman(np.full((4, 3), 2.0), method="chi-square", tie_correction=True)
    with pytest.raises(MethodError, match="at least 2 units"):
        friedman(np.array([[1.0, 2.0, 3.0]]), method="exact", tie_correction=True)
    with pytest.raises(MethodError, match="at least 2 groups"):
        friedman(np.ones((5, 1)), method="exact", tie_correction=True)
    with pytest.raises(MethodError, match="method must be one of"):
        friedman(np.ones((5, 3)), method="permutation", tie_correction=True)
    with pytest.raises(MethodError, match="tie_correction must be true or false"):
        friedman(np.ones((5, 3)), method="exact", tie_correction="yes")
    big = RNG.normal(size=(40, 6))
    with pytest.raises(MethodError, match='too large to count.*register method "chi-square"'):
        friedman(big, method="exact", tie_correction=True)


def test_the_catalogue_entries_are_complete():
    mine = {n: e for n, e in entries().items() if e.family == "correlation"}
    assert sorted(mine) == [
        "correlation-difference",
        "kendall-tau-b",
        "pearson-correlation",
        "spearman-correlation",
    ]
    for e in [*mine.values(), entries()["friedman"]]:
        assert e.load() is not None
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)
        assert "alternative" in e.options or e.name == "friedman"


@pytest.mark.parametrize("kind", ["pearson", "spearman", "kendall"])
def test_an_irrational_correlation_is_decided_by_its_ball_next_to_its_float(kind):
    """A threshold at the shortest decimal of the float itself: the float cannot tell which
    side the irrational value lies on, the ball can; the side is checked by hand Fractions
    (r > t iff N² > t²·D for positive r and t)."""
    from prereg.decide.analyses import _correlation_certified
    from prereg.stats.catalogue import entries as all_entries
    from prereg.stats.compare import sign
    from prereg.stats.correlation import _pieces

    name = {"pearson": "pearson-correlation", "spearman": "spearman-correlation"}.get(
        kind, "kendall-tau-b"
    )
    options = {"alternative": "greater", "null_value": 0, "level": 0.95}
    if kind == "spearman":
        options["variance"] = "fieller"
    result = all_entries()[name].load()(H, M, **options)
    assert "estimate" not in result.exact  # irrational
    figure = _correlation_certified(None, all_entries()[name], (H, M), result.estimate)
    t = Fraction(repr(result.estimate))
    num, den, _ = _pieces(kind, H, M)
    assert num > 0 and t > 0
    lhs, rhs = Fraction(num) ** 2, t * t * den
    assert lhs != rhs
    assert sign(figure, t) == (1 if lhs > rhs else -1)
    assert figure.decided  # the ball decided it
