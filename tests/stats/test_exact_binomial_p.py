"""P values that are sums of binomial probabilities, as exact fractions: the catalogue's
binomial test of one proportion against a null proportion (up to 2,000 trials; checked against
scipy.stats.binomtest and sums written out by hand, its Clopper–Pearson bounds against scipy's
proportion_ci(method="exact")), the sign test (over 2^m) and Wilcoxon's exact signed-rank test
(sign changes counted); a P exactly on a threshold is decided exactly."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy.stats import binomtest

from prereg.stats.catalogue import entries
from prereg.stats.compare import compare
from prereg.stats.methods import MethodError
from prereg.stats.two_proportions import binomial_test

NULLS = (0.5, 0.8, 0.05, 0.3, 0.123, 0.99)
ALTS = ("two-sided", "greater", "less")


def _by_hand(k: int, n: int, p0: Fraction, alternative: str) -> Fraction:
    pmf = [math.comb(n, j) * p0**j * (1 - p0) ** (n - j) for j in range(n + 1)]
    if alternative == "greater":
        return sum(pmf[k:], Fraction(0))
    if alternative == "less":
        return sum(pmf[: k + 1], Fraction(0))
    return min(Fraction(1), sum((q for q in pmf if q <= pmf[k]), Fraction(0)))


@pytest.mark.parametrize("p0", NULLS)
@pytest.mark.parametrize("alternative", ALTS)
def test_p_and_bounds_match_scipy(p0, alternative):
    for n in (1, 2, 7, 30, 61):
        for k in range(n + 1):
            for level in (0.9, 0.95):
                r = binomial_test(k, n, alternative=alternative, null_proportion=p0, level=level)
                ref = binomtest(k, n, p0, alternative=alternative)
                if ref.pvalue > 1e-200:  # scipy's own floats underflow far in a tail
                    assert r.p == pytest.approx(ref.pvalue, rel=1e-9), (k, n)
                ci = ref.proportion_ci(level, method="exact")
                assert r.lower == pytest.approx(ci.low, rel=1e-9, abs=1e-14), (k, n, level)
                assert r.upper == pytest.approx(ci.high, rel=1e-9, abs=1e-14), (k, n, level)
                assert r.exact["estimate"] == Fraction(k, n)
                assert r.statistic == k


@pytest.mark.parametrize("alternative", ALTS)
def test_exact_p_is_the_sum_of_binomial_probabilities(alternative):
    for p0 in ("0.5", "0.8", "0.05", "0.123"):
        for n, k in ((10, 3), (10, 5), (25, 20), (40, 2), (1, 1), (1, 0)):
            r = binomial_test(k, n, alternative=alternative, null_proportion=float(p0), level=0.95)
            assert r.exact["p"] == _by_hand(k, n, Fraction(p0), alternative), (p0, n, k)
            assert r.p == float(r.exact["p"])


def test_two_sided_counts_outcomes_exactly_as_likely():
    # under p0 = 1/2 the outcomes 3 and 7 of 10 are exactly as likely: both count
    r = binomial_test(3, 10, alternative="two-sided", null_proportion=0.5, level=0.95)
    tail = sum(math.comb(10, j) for j in (0, 1, 2, 3))
    assert r.exact["p"] == Fraction(2 * tail, 2**10)
    # at the mode every outcome is at most as likely: P = 1
    r = binomial_test(8, 10, alternative="two-sided", null_proportion=0.8, level=0.95)
    assert r.exact["p"] == 1


def test_a_p_value_on_its_threshold_is_decided_exactly():
    # one success in one trial against 0.05: P(X >= 1) = 1/20 exactly
    r = binomial_test(1, 1, alternative="greater", null_proportion=0.05, level=0.95)
    assert r.exact["p"] == Fraction(1, 20)
    assert compare(r.exact["p"], "le", 0.05)
    assert not compare(r.exact["p"], "lt", 0.05)
    # two of two against 0.05: 1/400, on the threshold 0.0025
    r = binomial_test(2, 2, alternative="greater", null_proportion=0.05, level=0.95)
    assert r.exact["p"] == Fraction(1, 400)
    assert compare(r.exact["p"], "le", 0.0025) and not compare(r.exact["p"], "lt", 0.0025)


def test_the_null_is_the_decimal_written():
    # 0.1 as written is 1/10, not the double nearest it
    r = binomial_test(1, 1, alternative="greater", null_proportion=0.1, level=0.95)
    assert r.exact["p"] == Fraction(1, 10)


def test_beyond_the_exact_limit_p_is_scipys_float():
    r = binomial_test(2600, 5000, alternative="greater", null_proportion=0.5, level=0.95)
    assert "p" not in r.exact
    assert r.p == pytest.approx(binomtest(2600, 5000, 0.5, alternative="greater").pvalue)


def test_no_trials_gives_no_figures():
    r = binomial_test(0, 0, alternative="greater", null_proportion=0.5, level=0.95)
    assert r.p is None and r.estimate is None


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.2, True, "half", float("nan"), None])
def test_a_null_outside_0_1_is_refused(bad):
    with pytest.raises(MethodError, match="null_proportion"):
        binomial_test(3, 10, alternative="greater", null_proportion=bad, level=0.95)


def test_catalogue_entry():
    e = entries()["binomial-test"]
    assert e.shape == "binomial"
    assert set(e.options) == {"alternative", "null_proportion", "level"}
    assert e.load() is binomial_test


def test_sign_test_p_is_the_exact_fraction():
    """The sign test is the binomial test against 1/2 on the differences not tied: its P is
    the fraction over 2^m (scipy's float is an ulp off it for 15 differences, 4 above)."""
    from prereg.stats.paired import sign_test

    x = [1.0] * 4 + [-1.0] * 11 + [0.0] * 3
    y = [0.0] * len(x)
    for alternative in ALTS:
        r = sign_test(x, y, alternative=alternative, margin=0, ties="drop")
        assert r.exact["p"] == _by_hand(4, 15, Fraction(1, 2), alternative)
        assert r.p == float(r.exact["p"])
    r = sign_test(x, y, alternative="less", margin=0, ties="drop")
    assert r.exact["p"] == Fraction(sum(math.comb(15, j) for j in range(5)), 2**15)
    assert compare(r.exact["p"], "le", 0.059234619140625)
    assert not compare(r.exact["p"], "lt", 0.059234619140625)


def test_signed_rank_exact_p_counts_every_sign_change():
    """Wilcoxon's exact signed-rank P (ties among |d| included) is the share of the 2^n sign
    changes whose W+ is as extreme, counted one by one here."""
    import itertools

    import numpy as np
    from scipy.stats import rankdata

    from prereg.stats.paired import wilcoxon_signed_rank

    d = np.array([0.5, -1.0, 1.0, 2.0, 2.0, -0.25, 3.0, 1.5])
    ranks = rankdata(np.abs(d))
    w = Fraction(int(round(2 * ranks[d > 0].sum())), 2)
    signs = list(itertools.product((0, 1), repeat=d.size))
    ws = [
        Fraction(int(round(2 * sum(r for r, s in zip(ranks, ss, strict=True) if s))), 2)
        for ss in signs
    ]
    total = len(signs)
    ge = Fraction(sum(v >= w for v in ws), total)
    le = Fraction(sum(v <= w for v in ws), total)
    for alternative, want in (
        ("greater", ge),
        ("less", le),
        ("two-sided", min(Fraction(1), 2 * min(ge, le))),
    ):
        r = wilcoxon_signed_rank(
            d, np.zeros(d.size), alternative=alternative, margin=0,
            zero_method="wilcox", method="exact", correction="none",
        )  # fmt: skip
        assert r.exact["p"] == want, alternative
        assert r.p == float(want)
    # five differences, all above: P = 1/32 exactly, on the threshold 0.03125
    r = wilcoxon_signed_rank(
        [1, 2, 3, 4, 5], [0] * 5, alternative="greater", margin=0,
        zero_method="wilcox", method="exact", correction="none",
    )  # fmt: skip
    assert r.exact["p"] == Fraction(1, 32)
    assert compare(r.exact["p"], "le", 0.03125) and not compare(r.exact["p"], "lt", 0.03125)


def test_sign_test_beyond_the_exact_limit_is_certified():
    """Past 2,000 differences the sign test's P is McNemar's certified figure: its float is
    scipy's binomial tail, and no fraction is claimed."""
    from prereg.stats.paired import sign_test

    x = [1.0] * 1300 + [-1.0] * 1200
    r = sign_test(x, [0.0] * len(x), alternative="greater", margin=0, ties="drop")
    assert "p" not in r.exact
    want = binomtest(1300, 2500, 0.5, alternative="greater").pvalue
    assert r.p == pytest.approx(want, rel=1e-9)
