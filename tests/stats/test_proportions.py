"""Wilson, Newcombe and pooled z: cross-checked with statsmodels and with hand-computed values.

Differences from statsmodels 0.15 that are on purpose (each is tested below):
- n = 0: statsmodels divides by zero (RuntimeWarnings, NaN); we return NaN without a warning.
- pooled SE = 0 (both arms all-yes or all-no): statsmodels gives z = P = NaN; d17 says P = 1
  (and we report z = 0, the difference being exactly 0).
- statsmodels' Wilson interval does clip to [0, 1] (in 0.15), like ours; the clip matters only
  for rounding residue (e.g. k = 0, n = 21 gives a raw lower bound of −1.4e-17).
- statsmodels takes alpha and computes z = Φ⁻¹(1 − alpha/2) with norm.isf; we take level or z,
  Φ⁻¹((1 + level)/2) with ndtri: equal to a few ulps.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)

from prereg.stats.proportions import (
    critical_z,
    newcombe_difference,
    pooled_z_test,
    wilson_centre,
    wilson_interval,
)

Z975 = 1.959963984540054  # the d17 page's exact quantile at 0.975
TOL = 1e-9
SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def count_pair(draw, max_n=400, min_n=1):
    n = draw(st.integers(min_value=min_n, max_value=max_n))
    k = draw(st.integers(min_value=0, max_value=n))
    return k, n


levels = st.sampled_from([0.8, 0.9, 0.95, 0.99, 0.999])


def test_critical_z_is_the_exact_quantile():
    assert critical_z(level=0.95) == pytest.approx(Z975, abs=1e-15)
    assert critical_z(z=1.96) == 1.96
    with pytest.raises(TypeError):
        critical_z()
    with pytest.raises(TypeError):
        critical_z(level=0.95, z=1.96)
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError):
            critical_z(level=bad)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            critical_z(z=bad)


def test_no_default_level():
    with pytest.raises(TypeError):
        wilson_interval(3, 10)
    with pytest.raises(TypeError):
        newcombe_difference(3, 10, 4, 10)


@SETTINGS
@given(count_pair(), levels)
def test_wilson_matches_statsmodels(kn, level):
    k, n = kn
    lo, hi = wilson_interval(k, n, level=level)
    slo, shi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert lo == pytest.approx(slo, abs=TOL)
    assert hi == pytest.approx(shi, abs=TOL)
    # The d17 formula is evaluated literally, so at k = 0 or k = n a bound may sit an ulp inside
    # p̂ (e.g. 5/5 at level 0.8 gives hi = 1 − 1.1e-16, as statsmodels does).
    assert 0.0 <= lo <= k / n + 1e-15 and k / n - 1e-15 <= hi <= 1.0


@SETTINGS
@given(count_pair(), st.floats(min_value=0.5, max_value=4.0))
def test_wilson_bounds_solve_the_score_equation(kn, z):
    # Independent characterisation: an interior Wilson bound b solves n(p̂ − b)² = z²·b(1 − b).
    k, n = kn
    lo, hi = wilson_interval(k, n, z=z)
    p = k / n
    for b in (lo, hi):
        if 0.0 < b < 1.0:
            assert n * (p - b) ** 2 == pytest.approx(z * z * b * (1 - b), abs=1e-9)
    centre = wilson_centre(k, n, z=z)
    assert centre == pytest.approx((k + z * z / 2) / (n + z * z), abs=1e-12)


def test_wilson_hand_values():
    # k = 0: [0, z²/(n + z²)]; k = n: [n/(n + z²), 1]; exactly 0 and 1 at the clipped ends.
    for n in range(1, 300):
        lo, hi = wilson_interval(0, n, z=Z975)
        assert lo == pytest.approx(0.0, abs=1e-15)
        assert hi == pytest.approx(Z975**2 / (n + Z975**2), abs=1e-12)
        lo, hi = wilson_interval(n, n, z=Z975)
        assert hi == pytest.approx(1.0, abs=1e-15)
        assert lo == pytest.approx(n / (n + Z975**2), abs=1e-12)
    # 3 of 10 at z = 1.96, the d17 formula written out again.
    z = 1.96
    centre = (0.3 + z * z / 20) / (1 + z * z / 10)
    half = z * math.sqrt(0.21 / 10 + z * z / 400) / (1 + z * z / 10)
    assert wilson_interval(3, 10, z=z) == pytest.approx((centre - half, centre + half), abs=1e-15)
    # The textbook 95% Wilson interval for 3/10 is 0.1078 to 0.6032.
    assert wilson_interval(3, 10, level=0.95) == pytest.approx((0.1078, 0.6032), abs=5e-5)


def test_wilson_clipping_of_rounding_residue():
    # Unclipped, k = 0 and n = 21 gives −1.4e-17; the d17 convention clips to [0, 1].
    z = Z975
    centre = (z * z / 42) / (1 + z * z / 21)
    half = z * math.sqrt(z * z / (4 * 21 * 21)) / (1 + z * z / 21)
    assert centre - half < 0
    assert wilson_interval(0, 21, z=z)[0] == 0.0
    assert wilson_interval(16, 16, z=z)[1] == 1.0


def test_wilson_n_zero_is_missing_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = wilson_interval(0, 0, level=0.95)
        assert math.isnan(lo) and math.isnan(hi)
        assert math.isnan(wilson_centre(0, 0, level=0.95))
        lo, hi = wilson_interval([0, 3, 0], [0, 10, 5], level=0.95)
    assert np.isnan(lo[0]) and np.isnan(hi[0])
    assert not np.isnan(lo[1:]).any()
    # statsmodels warns here (this is the difference documented above).
    with pytest.warns(RuntimeWarning):
        proportion_confint(0, 0, method="wilson")


def test_scalar_and_array_shapes():
    lo, hi = wilson_interval(3, 10, level=0.95)
    assert type(lo) is float and type(hi) is float
    lo, hi = wilson_interval(np.array([[1, 2], [3, 4]]), 10, level=0.95)
    assert lo.shape == (2, 2)
    d, lo, hi = newcombe_difference([1, 2, 3], 10, 4, [10, 11, 12], level=0.95)
    assert d.shape == lo.shape == hi.shape == (3,)
    z, p = pooled_z_test([1, 2], [10, 10], 3, 10)
    assert z.shape == p.shape == (2,)
    assert type(pooled_z_test(1, 10, 3, 10)[1]) is float


def test_invalid_counts_are_refused():
    for k, n in ((11, 10), (-1, 10), (1, -1), (math.nan, 10), (1, math.inf)):
        with pytest.raises(ValueError):
            wilson_interval(k, n, level=0.95)
    with pytest.raises(ValueError):
        pooled_z_test(3, 2, 1, 5)


@SETTINGS
@given(count_pair(), count_pair(), levels)
def test_newcombe_matches_statsmodels(a, b, level):
    (k1, n1), (k2, n2) = a, b
    d, lo, hi = newcombe_difference(k1, n1, k2, n2, level=level)
    slo, shi = confint_proportions_2indep(
        k1, n1, k2, n2, method="newcomb", compare="diff", alpha=1 - level
    )
    assert d == pytest.approx(k1 / n1 - k2 / n2, abs=1e-15)
    assert lo == pytest.approx(slo, abs=TOL)
    assert hi == pytest.approx(shi, abs=TOL)
    assert -1.0 - 1e-12 <= lo <= d <= hi <= 1.0 + 1e-12


def test_newcombe_hand_value():
    # 5/10 vs 3/12 at z = 1.96, from the two Wilson intervals by hand.
    z = 1.96

    def wil(k, n):
        p = k / n
        c = (p + z * z / (2 * n)) / (1 + z * z / n)
        h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return p, c - h, c + h

    p1, l1, u1 = wil(5, 10)
    p2, l2, u2 = wil(3, 12)
    expect = (
        0.25,
        0.25 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
        0.25 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2),
    )
    assert newcombe_difference(5, 10, 3, 12, z=z) == pytest.approx(expect, abs=1e-15)


def test_newcombe_edges():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in ((0, 0, 3, 10), (3, 10, 0, 0), (0, 0, 0, 0)):
            assert all(math.isnan(v) for v in newcombe_difference(*args, level=0.95))
    # all-yes vs all-no: d = 1, upper bound exactly 1 (both clipped bounds sit on p̂).
    d, lo, hi = newcombe_difference(20, 20, 0, 20, level=0.95)
    assert d == 1.0 and hi == 1.0 and 0.0 < lo < 1.0
    d, lo, hi = newcombe_difference(7, 7, 7, 7, level=0.95)
    assert d == 0.0 and lo < 0.0 < hi and lo == pytest.approx(-hi)


@SETTINGS
@given(count_pair(), count_pair())
def test_pooled_z_matches_statsmodels(a, b):
    (k1, n1), (k2, n2) = a, b
    z, p = pooled_z_test(k1, n1, k2, n2)
    if k1 + k2 in (0, n1 + n2):
        assert (z, p) == (0.0, 1.0)
        return
    sz, sp = proportions_ztest([k1, k2], [n1, n2])
    assert z == pytest.approx(sz, abs=TOL)
    assert p == pytest.approx(sp, abs=TOL)
    assert 0.0 <= p <= 1.0


def test_pooled_z_hand_value_and_edges():
    # 30/50 vs 20/50: pooled 0.5, se = sqrt(0.25·0.04) = 0.1, z = 2, P = 2·Φ(−2).
    z, p = pooled_z_test(30, 50, 20, 50)
    assert z == pytest.approx(2.0, abs=1e-12)
    assert p == pytest.approx(math.erfc(2 / math.sqrt(2)), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pooled_z_test(0, 10, 0, 5) == (0.0, 1.0)
        assert pooled_z_test(10, 10, 5, 5) == (0.0, 1.0)
        assert all(math.isnan(v) for v in pooled_z_test(0, 0, 3, 5))
        assert all(math.isnan(v) for v in pooled_z_test(3, 5, 0, 0))
    # statsmodels has no convention for se = 0 (the difference documented above).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(proportions_ztest([10, 5], [10, 5])[1])


def test_pooled_z_is_exact_against_fractions():
    # Independent rational computation of z² for a grid of small counts.
    for n1, n2 in ((3, 4), (7, 7), (10, 25)):
        for k1 in range(n1 + 1):
            for k2 in range(n2 + 1):
                z, _ = pooled_z_test(k1, n1, k2, n2)
                pool = Fraction(k1 + k2, n1 + n2)
                var = pool * (1 - pool) * (Fraction(1, n1) + Fraction(1, n2))
                if var == 0:
                    assert z == 0.0
                    continue
                diff = Fraction(k1, n1) - Fraction(k2, n2)
                assert z * z == pytest.approx(float(diff * diff / var), rel=1e-12)
                assert math.copysign(1, z) == math.copysign(1, diff) or diff == 0


@SETTINGS
@given(st.lists(st.tuples(count_pair(min_n=0), count_pair(min_n=0)), min_size=1, max_size=30))
@example(rows=[((18, 29), (61, 61))])  # once differed by an ulp: 0-d ``** 2`` goes through pow()
def test_vectorized_equals_scalar(rows):
    k1 = np.array([a[0] for a, _ in rows])
    n1 = np.array([a[1] for a, _ in rows])
    k2 = np.array([b[0] for _, b in rows])
    n2 = np.array([b[1] for _, b in rows])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = wilson_interval(k1, n1, level=0.95)
        d, dlo, dhi = newcombe_difference(k1, n1, k2, n2, level=0.95)
        z, p = pooled_z_test(k1, n1, k2, n2)
        for i in range(len(rows)):
            args = (int(k1[i]), int(n1[i]), int(k2[i]), int(n2[i]))
            np.testing.assert_array_equal(
                [lo[i], hi[i]], wilson_interval(args[0], args[1], level=0.95)
            )
            np.testing.assert_array_equal(
                [d[i], dlo[i], dhi[i]], newcombe_difference(*args, level=0.95)
            )
            np.testing.assert_array_equal([z[i], p[i]], pooled_z_test(*args))


def test_critical_values_at_the_usual_levels_are_scipys_ndtri_bit_for_bit():
    from scipy.special import ndtri

    from prereg.stats.proportions import _CRITICAL

    assert 0.95 in _CRITICAL
    for level, z in _CRITICAL.items():
        assert z.hex() == float(ndtri((1.0 + level) / 2.0)).hex()
        assert critical_z(level=level).hex() == z.hex()


@SETTINGS
@given(st.floats(1e-9, 1 - 1e-9) | st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999]))
def test_critical_z_is_ndtri_of_the_upper_tail_bit_for_bit(level):
    from scipy.special import ndtri

    assert critical_z(level=level).hex() == float(ndtri((1.0 + level) / 2.0)).hex()
