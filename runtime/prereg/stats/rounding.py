"""Rounding conventions that studies register.

- :func:`round_half_up`: ``round(x·10^d)/10^d`` with halves rounded up (toward +∞), computed in
  binary floating point, as ECMAScript's ``Math.round`` does.  Used for report figures such as
  the d17-multifact audit scores (4 decimals).
- :func:`round_half_up_shortest`: half-up on the number's shortest round-trip decimal form, so
  ``0.175`` (stored just below 0.175) still rounds to ``0.18``.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext

import numpy as np


def round_half_up(x: float, decimals: int) -> float:
    """``floor(x·10^d + 0.5) / 10^d``; NaN and None pass through unchanged."""
    if x is None:
        return None
    if isinstance(x, float) and math.isnan(x):
        return x
    scale = 10.0**decimals
    return math.floor(x * scale + 0.5) / scale


def round_half_up_array(x: np.ndarray, decimals: int) -> np.ndarray:
    """Vectorized :func:`round_half_up`."""
    scale = 10.0**decimals
    return np.floor(np.asarray(x, dtype=np.float64) * scale + 0.5) / scale


def round_half_up_shortest(x: float | None, decimals: int) -> float | None:
    """Half-up rounding of the shortest decimal form of ``x`` (``repr``), returned as a float."""
    if x is None:
        return None
    if isinstance(x, bool):
        raise TypeError("booleans are not numbers")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"cannot round non-finite value {x!r}")
    shortest = Decimal(repr(float(x)))
    if shortest.as_tuple().exponent >= -decimals:
        return float(shortest)  # no more than ``decimals`` places: nothing to round
    # A double's shortest form has at most 309 digits before the point and 340 after it, so
    # this precision holds every quantized result exactly (the default 28 digits refuses
    # ``quantize`` beyond them: decimal.InvalidOperation).
    with localcontext() as context:
        context.prec = 700
        quantum = Decimal(1).scaleb(-decimals)
        return float(shortest.quantize(quantum, rounding=ROUND_HALF_UP))
