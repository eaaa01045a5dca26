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


#: the most places :func:`decimal_whole` tries (10**22 is the largest power of ten a double holds)
_PLACES = 22
#: the largest whole number a scaled value may be: below it a double's spacing is under 1/10**d,
#: so at most one decimal of d places reads back as each float
_WHOLE = 2.0**51


def decimal_whole(arrays) -> tuple[list[np.ndarray], int] | None:
    """The values of ``arrays`` as the decimals their floats read as (a JSON 0.1 is 1/10, the
    shortest decimal that reads back as it), written as whole numbers over one power of ten:
    ``(ws, d)`` with ``arrays[i][j] == ws[i][j] / 10**d`` as decimals (``ws`` int64 arrays, ``d``
    the fewest places that write every value). None when some value needs more than about 15
    significant digits (then no decimal of d places is the only one that reads back as it).

    Vectorised: ``w = rint(x · 10**d)`` is such a decimal exactly when ``w / 10**d`` (a
    correctly rounded division of two exact doubles) reads back as ``x``, and below ``2**51``
    no other decimal of d places does."""
    xs = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays]
    every = np.concatenate(xs) if xs else np.zeros(0)
    if every.size == 0:
        return [np.zeros(0, dtype=np.int64) for _ in xs], 0
    if not np.all(np.isfinite(every)):
        return None
    for d in range(_PLACES + 1):
        p = 10.0**d
        w = np.rint(every * p)
        # whole numbers below 2**53 are exactly their floats (and their shortest decimals)
        if float(np.max(np.abs(w))) >= (2.0**53 if d == 0 else _WHOLE):
            return None
        if np.array_equal(w / p, every):
            cuts = np.cumsum([a.size for a in xs])[:-1]
            return [part.astype(np.int64) for part in np.split(w, cuts)], d
    return None  # a value below 10**-22 in magnitude, or of more digits than 22 places write


def whole_sums(w: np.ndarray) -> tuple[int, int]:
    """``(Σ w, Σ w²)`` of int64 values as Python integers (exact however large)."""
    if w.size == 0:
        return 0, 0
    values, counts = np.unique(w, return_counts=True)
    vs, cs = values.tolist(), counts.tolist()
    return (
        sum(v * c for v, c in zip(vs, cs, strict=True)),
        sum(v * v * c for v, c in zip(vs, cs, strict=True)),
    )
