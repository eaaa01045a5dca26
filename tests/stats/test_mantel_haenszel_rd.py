"""mantel-haenszel-risk-difference: the Mantel–Haenszel common risk difference across strata
with the Greenland–Robins (1985) variance (prereg.stats.ordered.mantel_haenszel_risk_difference).

Oracles: the published formula by hand in fractions (RevMan's statement of it) over several
strata; with one stratum it must be the Wald difference, variance and interval, which
statsmodels gives (confint_proportions_2indep(method='wald')); a difference exactly on the
margin gives z = 0 and P = 1/2."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from prereg.stats.methods import MethodError
from prereg.stats.ordered import mantel_haenszel_risk_difference as mhrd


def _by_hand(k1, n1, k2, n2):
    num = den = var = Fraction(0)
    for a, na, c, nb in zip(k1, n1, k2, n2, strict=True):
        if not na or not nb:
            continue
        N = na + nb
        b, d = na - a, nb - c
        num += Fraction(a, na) * Fraction(na * nb, N) - Fraction(c, nb) * Fraction(na * nb, N)
        den += Fraction(na * nb, N)
        var += Fraction(a * b * nb**3 + c * d * na**3, na * nb * N**2)
    return num / den, var / den**2


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_several_strata_against_the_formula_by_hand(seed):
    rng = np.random.default_rng(seed)
    n1 = rng.integers(5, 60, 5)
    n2 = rng.integers(5, 60, 5)
    k1 = rng.binomial(n1, 0.55)
    k2 = rng.binomial(n2, 0.4)
    r = mhrd(k1, n1, k2, n2, alternative="two-sided", level=0.9, margin=0.05)
    rd, var = _by_hand(k1.tolist(), n1.tolist(), k2.tolist(), n2.tolist())
    assert r.exact["estimate"] == rd
    se = math.sqrt(var)
    assert math.isclose(r.se, se, rel_tol=1e-12)
    z = (float(rd) - 0.05) / se
    assert math.isclose(r.statistic, z, rel_tol=1e-9)
    assert math.isclose(r.p, 2 * norm.sf(abs(z)), rel_tol=1e-9)
    q = norm.ppf(0.95)
    assert math.isclose(r.lower, float(rd) - q * se, rel_tol=1e-12)
    assert math.isclose(r.upper, float(rd) + q * se, rel_tol=1e-12)


def test_one_stratum_is_the_wald_difference():
    from statsmodels.stats.proportion import confint_proportions_2indep

    r = mhrd([31], [50], [22], [45], alternative="two-sided", level=0.95, margin=0)
    low, high = confint_proportions_2indep(31, 50, 22, 45, method="wald", compare="diff")
    assert r.exact["estimate"] == Fraction(31, 50) - Fraction(22, 45)
    assert math.isclose(r.lower, low, rel_tol=1e-12) and math.isclose(r.upper, high, rel_tol=1e-12)
    p1, p2 = 31 / 50, 22 / 45
    assert math.isclose(r.se, math.sqrt(p1 * (1 - p1) / 50 + p2 * (1 - p2) / 45), rel_tol=1e-12)


def test_a_common_difference_exactly_on_the_margin():
    """Strata of 20 against 20: differences 0.2, 0.2 and 0.1 with equal weights (10 each):
    RD = 0.5/3 = 1/6 by hand. Against a margin of 0.1 the difference of 1/10 in each of two
    other strata (12/20 − 10/20, 8/20 − 6/20) is exactly on it: z = 0, P = 1/2."""
    r = mhrd([10, 14, 12], [20] * 3, [6, 10, 10], [20] * 3, alternative="greater", level=0.95,
             margin=0.1)  # fmt: skip
    assert r.exact["estimate"] == Fraction(1, 6) and r.upper is None
    on = mhrd([12, 8], [20, 20], [10, 6], [20, 20], alternative="greater", level=0.95, margin=0.1)
    assert on.exact["estimate"] == Fraction(1, 10)
    assert on.statistic == 0.0 and on.p == 0.5


def test_empty_arms_are_left_out_and_no_spread_has_no_test():
    r = mhrd([3, 0], [10, 0], [1, 4], [10, 8], alternative="two-sided", level=0.95, margin=0)
    assert r.exact["estimate"] == Fraction(2, 10) and r.counts["strataUsed"] == 1
    flat = mhrd([10, 0], [10, 5], [0, 0], [10, 5], alternative="two-sided", level=0.95, margin=0)
    # weights 10·10/20 = 5 and 5·5/10 = 5/2: (5·1 + 5/2·0)/(15/2) = 2/3; every cell all or none
    assert flat.exact["estimate"] == Fraction(2, 3) and flat.se is None and flat.p is None


@pytest.mark.parametrize(
    "args, options, message",
    [
        (([5], [4], [1], [4]), {}, r"k1\[0\] \(5\) must not exceed n1\[0\]"),
        (([1, 2], [4], [1], [4]), {}, "one entry per stratum"),
        (([1], [4], [1], [4]), {"margin": 1.0}, "margin is a difference of proportions"),
        (([1], [4], [1], [4]), {"level": 95}, "level"),
    ],
)
def test_refusals(args, options, message):
    kw = {"alternative": "two-sided", "level": 0.95, "margin": 0} | options
    with pytest.raises(MethodError, match=message):
        mhrd(*args, **kw)
