"""prereg.stats.exactsum: floats written over one power of two, checked against Fraction."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.stats.exactsum import exact_sum, scaled

finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, max_size=30))
def test_scaled_is_exact(xs):
    nums, shift = scaled(xs)
    assert [Fraction(n, 1 << shift) for n in nums] == [Fraction(x) for x in xs]
    assert exact_sum(xs) == sum((Fraction(x) for x in xs), Fraction(0))


def test_scaled_small_cases():
    # integers need no shift; common factors of two are dropped
    assert scaled([3.0, 4.0]) == ([3, 4], 0)
    assert scaled([0.5, -0.25, 6.0]) == ([2, -1, 24], 2)
    assert scaled([]) == ([], 0)
    assert scaled([0.0, -0.0]) == ([0, 0], 0)
    nums, shift = scaled([5e-324, 1e300])  # the smallest subnormal and a huge value together
    assert shift == 1074 and Fraction(nums[0], 1 << shift) == Fraction(5e-324)
