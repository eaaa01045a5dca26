"""pass-at-k-t: the unbiased pass@k averaged over problems with the t interval and test over
problems (prereg.stats.estimators.pass_at_k_t).

Oracles: each problem's pass@k by the numerically stable product of Chen et al. (2021),
1 − Π_{i=n−c+1..n} (1 − k/i), written out here; scipy.stats.ttest_1samp of the per-problem
values against the margin (statistic, P, confidence_interval); the mean by hand in fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.stats.estimators import pass_at_k, pass_at_k_t
from prereg.stats.methods import MethodError


def _stable(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@pytest.mark.parametrize(
    "seed, k, alternative, level, margin",
    [
        (1, 1, "two-sided", 0.95, 0),
        (2, 5, "greater", 0.95, 0.5),
        (3, 10, "less", 0.9, 0.8),
        (4, 3, "two-sided", 0.99, 0.25),
    ],
)
def test_against_scipy_one_sample_t(seed, k, alternative, level, margin):
    rng = np.random.default_rng(seed)
    n = rng.integers(10, 16, 30)
    c = rng.binomial(n, 0.35)
    r = pass_at_k_t(n, c, k=k, alternative=alternative, level=level, margin=margin)
    x = [_stable(int(ni), int(ci), k) for ni, ci in zip(n, c, strict=True)]
    want = stats.ttest_1samp(x, margin, alternative=alternative)
    ci = want.confidence_interval(level)
    assert math.isclose(r.estimate, np.mean(x), rel_tol=1e-12)
    assert r.exact["estimate"] == pass_at_k(n, c, k=k).exact["estimate"]
    assert math.isclose(r.se, stats.sem(x), rel_tol=1e-10)
    assert math.isclose(r.statistic, want.statistic, rel_tol=1e-9)
    assert math.isclose(r.p, want.pvalue, rel_tol=1e-8)
    assert r.df == 29 and r.statistic_name == "t"
    if alternative in ("two-sided", "greater"):
        assert math.isclose(r.lower, ci.low, rel_tol=1e-10)
    else:
        assert r.lower is None and ci.low == -np.inf
    if alternative in ("two-sided", "less"):
        assert math.isclose(r.upper, ci.high, rel_tol=1e-10)
    else:
        assert r.upper is None and ci.high == np.inf
    assert r.counts == {"problems": 30, "samples": int(n.sum()), "correct": int(c.sum()), "k": k}


def test_pass_at_k_exactly_on_the_margin():
    """n = 10, k = 5: a problem with no right sample has pass@5 = 0, one with 10 right has 1,
    one with 1 right has 1 − C(9,5)/C(10,5) = 1 − 126/252 = 1/2 (by hand). Nine of each and
    two halves: (9 + 1)/20 = 1/2, so against a margin of 0.5 t = 0 and P is exactly 1/2."""
    n = [10] * 20
    c = [0] * 9 + [10] * 9 + [1, 1]
    r = pass_at_k_t(n, c, k=5, alternative="greater", level=0.95, margin=0.5)
    assert r.exact["estimate"] == Fraction(1, 2)
    assert r.statistic == 0.0 and r.p == 0.5
    x = [0.0] * 9 + [1.0] * 9 + [0.5, 0.5]
    assert math.isclose(r.lower, stats.ttest_1samp(x, 0.5).confidence_interval(0.9).low)


def test_no_spread_leaves_the_test_undefined():
    r = pass_at_k_t([4, 4, 4], [4, 4, 4], k=2, alternative="greater", level=0.95, margin=0.5)
    assert r.exact["estimate"] == 1 and r.se is None and r.p is None and r.lower is None
    one = pass_at_k_t([4], [1], k=1, alternative="two-sided", level=0.95, margin=0)
    assert one.exact["estimate"] == Fraction(1, 4) and one.se is None
    empty = pass_at_k_t([], [], k=1, alternative="two-sided", level=0.95, margin=0)
    assert empty.estimate is None and empty.counts["problems"] == 0


@pytest.mark.parametrize(
    "args, options, message",
    [
        (([5, 3], [1, 2]), {}, "problem 1: k = 4 exceeds its n = 3"),
        (([5, 5], [6, 1]), {}, "problem 0: c = 6 correct samples exceed"),
        (([5, 5], [1]), {}, "n and c differ in length"),
        (([5, 5], [1, 2]), {"k": 0}, "k must be a positive whole number"),
        (([5, 5], [1, 2]), {"level": 95}, "level"),
        (([5, 5], [1, 2]), {"alternative": "bigger"}, "alternative"),
    ],
)
def test_refusals(args, options, message):
    kw = {"k": 4, "alternative": "two-sided", "level": 0.95, "margin": 0} | options
    with pytest.raises(MethodError, match=message):
        pass_at_k_t(*args, **kw)
