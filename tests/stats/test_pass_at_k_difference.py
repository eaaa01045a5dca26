"""pass-at-k-difference: two arms' unbiased pass@k over the same problems, with the paired t
over problems (prereg.stats.estimators.pass_at_k_difference).

Oracles: each problem's pass@k by the numerically stable product of Chen et al. (2021),
1 − Π_{i=n−c+1..n} (1 − k/i), written out here; scipy.stats.ttest_rel of the two arms'
per-problem values (statistic, P, the confidence interval) and ttest_1samp of their
differences against a margin; the mean difference by hand in fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.stats.estimators import pass_at_k_difference
from prereg.stats.methods import MethodError


def _stable(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@pytest.mark.parametrize("seed, k", [(1, 1), (2, 5), (3, 10)])
def test_against_scipy_paired_t(seed, k):
    rng = np.random.default_rng(seed)
    n_a = rng.integers(10, 16, 25)
    n_b = rng.integers(10, 16, 25)
    c_a = rng.binomial(n_a, 0.4)
    c_b = rng.binomial(n_b, 0.3)
    r = pass_at_k_difference(n_a, c_a, n_b, c_b, k=k, alternative="two-sided", level=0.9, margin=0)
    pa = [_stable(int(n), int(c), k) for n, c in zip(n_a, c_a, strict=True)]
    pb = [_stable(int(n), int(c), k) for n, c in zip(n_b, c_b, strict=True)]
    want = stats.ttest_rel(pa, pb)
    assert math.isclose(r.estimate, np.mean(np.subtract(pa, pb)), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(r.statistic, want.statistic, rel_tol=1e-9)
    assert math.isclose(r.p, want.pvalue, rel_tol=1e-8)
    assert r.df == 24
    ci = want.confidence_interval(0.9)
    assert math.isclose(r.lower, ci.low, rel_tol=1e-9) and math.isclose(
        r.upper, ci.high, rel_tol=1e-9
    )
    # one-sided against a margin: the one-sample t of the differences
    r = pass_at_k_difference(
        n_a, c_a, n_b, c_b, k=k, alternative="greater", level=0.95, margin=-0.05
    )
    want = stats.ttest_1samp(np.subtract(pa, pb), -0.05, alternative="greater")
    assert math.isclose(r.p, want.pvalue, rel_tol=1e-8) and r.upper is None


def test_a_difference_exactly_on_the_margin():
    """n = 5, k = 2: pass@2 of c = 0, 1, 3, 5 right is 0, 4/10, 9/10, 1 and of 0, 1, 2, 4 is
    0, 4/10, 7/10, 1 (1 − C(5 − c, 2)/10, by hand): the mean difference is (2/10)/4 = 1/20, so
    against a margin of 0.05 t = 0 and the one-sided P is exactly 1/2."""
    n = [5, 5, 5, 5]
    r = pass_at_k_difference(
        n, [0, 1, 3, 5], n, [0, 1, 2, 4], k=2, alternative="greater", level=0.95, margin=0.05
    )
    assert r.exact["estimate"] == Fraction(1, 20)
    assert r.statistic == 0.0 and r.p == 0.5
    assert r.extra == {"pass_at_k_a": 0.575, "pass_at_k_b": 0.525}


def test_no_spread_leaves_the_test_undefined():
    r = pass_at_k_difference(
        [4, 4], [1, 2], [4, 4], [0, 1], k=1, alternative="two-sided", level=0.95, margin=0
    )
    assert r.exact["estimate"] == Fraction(1, 4) and r.se is None and r.p is None


@pytest.mark.parametrize(
    "args, message",
    [
        (([5, 5], [1, 2], [5], [1]), "pair problem by problem: 2 against 1"),
        (([5, 3], [1, 2], [5, 5], [1, 1]), "arm a, problem 1: k = 4 exceeds its n = 3"),
        (([5, 5], [1, 2], [5, 5], [6, 1]), "arm b, problem 0: c = 6 correct samples exceed"),
    ],
)
def test_refusals_name_the_arm_and_problem(args, message):
    with pytest.raises(MethodError, match=message):
        pass_at_k_difference(*args, k=4, alternative="two-sided", level=0.95, margin=0)
