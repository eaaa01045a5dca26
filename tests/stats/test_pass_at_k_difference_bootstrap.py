"""pass-at-k-difference-bootstrap: two arms' unbiased pass@k over the same problems with a
paired bootstrap interval over problems (prereg.stats.estimators).

Oracles: each problem's pass@k by the product form of Chen et al. (2021) written out here;
scipy.stats.bootstrap over the per-problem differences with the same generator (its draws are
the method's: rng.integers(0, P, size=(B, P))); the exact bounds by a loop of our own over the
same draws in fractions, with numpy's linear quantile written out (h = (B − 1)·p)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.stats.estimators import pass_at_k_difference_bootstrap as boot
from prereg.stats.methods import MethodError


def _stable(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def _arms(seed: int, problems: int = 30):
    rng = np.random.default_rng(seed)
    n_a, n_b = rng.integers(8, 11, problems), rng.integers(8, 11, problems)
    return n_a, rng.binomial(n_a, 0.5), n_b, rng.binomial(n_b, 0.4)


@pytest.mark.parametrize(
    "interval, scipy_method", [("percentile", "percentile"), ("basic", "basic"), ("bca", "BCa")]
)
@pytest.mark.parametrize("k", [1, 5])
def test_against_scipy_bootstrap(interval, scipy_method, k):
    n_a, c_a, n_b, c_b = _arms(k)
    r = boot(
        n_a,
        c_a,
        n_b,
        c_b,
        k=k,
        interval=interval,
        level=0.9,
        resamples=999,
        seed=7,
        quantile_method="linear",
    )
    d = np.array([_stable(int(n), int(c), k) for n, c in zip(n_a, c_a, strict=True)]) - np.array(
        [_stable(int(n), int(c), k) for n, c in zip(n_b, c_b, strict=True)]
    )
    want = stats.bootstrap(
        (d,),
        np.mean,
        method=scipy_method,
        n_resamples=999,
        confidence_level=0.9,
        rng=np.random.Generator(np.random.PCG64(7)),
        batch=None,
    )
    assert math.isclose(r.estimate, d.mean(), abs_tol=1e-14)
    assert math.isclose(r.lower, want.confidence_interval.low, abs_tol=1e-12)
    assert math.isclose(r.upper, want.confidence_interval.high, abs_tol=1e-12)
    assert math.isclose(r.se, want.standard_error, rel_tol=1e-9)
    assert r.counts["problems"] == len(d)
    assert ("lower" in r.exact) == (interval != "bca")


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint"])
def test_exact_bounds_are_the_quantiles_of_the_replicates_in_fractions(method):
    n_a, c_a, n_b, c_b = _arms(3, problems=12)
    r = boot(
        n_a,
        c_a,
        n_b,
        c_b,
        k=1,
        interval="percentile",
        level=0.95,
        resamples=401,
        seed=11,
        quantile_method=method,
    )
    d = [Fraction(int(c), int(n)) for n, c in zip(n_a, c_a, strict=True)]
    d = [x - Fraction(int(c), int(n)) for x, n, c in zip(d, n_b, c_b, strict=True)]
    idx = np.random.Generator(np.random.PCG64(11)).integers(0, 12, size=(401, 12))
    reps = sorted(sum((d[i] for i in row), Fraction(0)) / 12 for row in idx.tolist())

    def q(p: Fraction) -> Fraction:
        h = 400 * p
        lo = math.floor(h)
        hi = math.ceil(h)
        return {
            "linear": reps[lo] + (h - lo) * (reps[hi] - reps[lo]),
            "lower": reps[lo],
            "higher": reps[hi],
            "midpoint": (reps[lo] + reps[hi]) / 2,
        }[method]

    assert r.exact["estimate"] == sum(d, Fraction(0)) / 12
    assert r.exact["lower"] == q(Fraction(1, 40)) and r.exact["upper"] == q(Fraction(39, 40))
    assert r.lower == float(r.exact["lower"])
    # numpy's float quantile agrees to rounding
    floats = np.quantile([float(x) for x in reps], [0.025, 0.975], method=method)
    assert math.isclose(r.lower, floats[0], abs_tol=1e-15) and math.isclose(
        r.upper, floats[1], abs_tol=1e-15
    )


def test_other_quantile_methods_give_float_bounds_only():
    n_a, c_a, n_b, c_b = _arms(4)
    r = boot(
        n_a,
        c_a,
        n_b,
        c_b,
        k=1,
        interval="percentile",
        level=0.95,
        resamples=200,
        seed=1,
        quantile_method="hazen",
    )
    assert set(r.exact) == {"estimate"} and r.lower is not None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"interval": "studentized"}, "interval must be one of percentile, basic, bca"),
        ({"seed": -1}, "seed must be a whole number of at least 0"),
        ({"resamples": 0}, "resamples must be a whole number of at least 1"),
        ({"quantile_method": "cubic"}, "quantile_method must be one of"),
        ({"k": 11}, "k = 11 exceeds its n"),
        ({"level": 95}, "level"),
    ],
)
def test_refusals(change, message):
    n_a, c_a, n_b, c_b = _arms(5)
    opts = (
        dict(k=1, interval="percentile", level=0.95, resamples=10, seed=1, quantile_method="linear")
        | change
    )
    with pytest.raises(MethodError, match=message):
        boot(n_a, c_a, n_b, c_b, **opts)


def test_no_problems_gives_no_figures():
    r = boot(
        [],
        [],
        [],
        [],
        k=1,
        interval="percentile",
        level=0.95,
        resamples=10,
        seed=1,
        quantile_method="linear",
    )
    assert r.estimate is None and r.lower is None and r.counts["problems"] == 0
