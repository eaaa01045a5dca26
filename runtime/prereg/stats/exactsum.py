"""Exact rational arithmetic over float data, fast enough for a million values.

Every finite float is a dyadic rational ``m / 2**e``.  :func:`scaled` writes a whole array over
one power of two, so that sums, sums of squares and sums of products of the values are Python
integer sums (exact, and much faster than adding ``Fraction`` objects one by one).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def scaled(x) -> tuple[list[int], int]:
    """``(numerators, shift)`` with ``x[i] == numerators[i] / 2**shift`` exactly.

    ``x`` must be finite (the caller checks).
    """
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    ratios = [v.as_integer_ratio() for v in a.tolist()]
    shift = max((d.bit_length() - 1 for _, d in ratios), default=0)
    return [n << (shift - (d.bit_length() - 1)) for n, d in ratios], shift


def exact_sum(x) -> Fraction:
    """The exact sum of the floats ``x``."""
    nums, shift = scaled(x)
    return Fraction(sum(nums), 1 << shift)


def exact(v) -> Fraction:
    """A float or integer as the exact Fraction it is."""
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    return Fraction(float(v))
