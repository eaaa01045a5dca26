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
    if a.size == 0:
        return [], 0
    # x = m · 2**e with 0.5 <= |m| < 1 (frexp), so x = M · 2**(e − 53) with M = m · 2**53 an
    # exact integer (every float's significand has 53 bits; subnormals have fewer)
    mantissa, exponent = np.frexp(a)
    big = (mantissa * 2.0**53).astype(np.int64)
    power = exponent.astype(np.int64) - 53  # x = big · 2**power
    nonzero = big != 0
    shift = int(max(0, -int(power[nonzero].min()))) if nonzero.any() else 0
    ups = power + shift  # every entry >= 0 where big != 0
    if shift and nonzero.any():
        # drop the factors of 2 every numerator shares (integer data get shift 0)
        low = np.abs(big[nonzero]) & -np.abs(big[nonzero])
        common = int((np.log2(low.astype(np.float64)).astype(np.int64) + ups[nonzero]).min())
        drop = min(shift, common)
        shift -= drop
        ups = ups - drop
    ups = ups.tolist()
    # a negative u shifts right by bits that are all zero (u >= -trailing zeros): exact
    return [
        (m << u if u >= 0 else m >> -u) if m else 0 for m, u in zip(big.tolist(), ups, strict=True)
    ], shift


def exact_sum(x) -> Fraction:
    """The exact sum of the floats ``x``."""
    nums, shift = scaled(x)
    return Fraction(sum(nums), 1 << shift)


def exact(v) -> Fraction:
    """A float or integer as the exact Fraction it is."""
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    return Fraction(float(v))
