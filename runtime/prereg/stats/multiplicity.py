"""Multiplicity adjustments.

- :func:`holm_adjust` -- Holm step-down (d17-multifact, "Scoring"): sort the P values
  ascending, ``adjusted_k = running max of min(1, (m − k)·p_(k))`` for k = 0, 1, …, where ``m``
  counts only the non-missing P values; a missing P value (None or NaN) stays missing at its
  position.
"""

from __future__ import annotations

import numpy as np


def _p_values(p) -> np.ndarray:
    if isinstance(p, np.ndarray) and p.dtype.kind == "f":
        out = p.astype(np.float64).reshape(-1)
    else:
        raw = np.asarray(p, dtype=object).reshape(-1)
        out = np.empty(raw.size, dtype=np.float64)
        for i, v in enumerate(raw):
            if v is None:
                out[i] = np.nan
                continue
            if isinstance(v, (bool, np.bool_)):
                raise ValueError(f"P value at position {i} is a boolean, not a number")
            out[i] = float(v)
    present = ~np.isnan(out)
    if np.any((out[present] < 0) | (out[present] > 1)):
        raise ValueError("every P value must be missing or lie in [0, 1]")
    return out


def holm_adjust(p) -> np.ndarray:
    """Holm-adjusted P values, aligned with ``p`` (a 1-d sequence; None or NaN = missing).

    Ties are ordered stably (by position); tied P values receive the same adjusted value in any
    order, because the running maximum carries the first one's value forward.
    """
    values = _p_values(p)
    adjusted = np.full(values.size, np.nan)
    present = np.flatnonzero(~np.isnan(values))
    m = present.size
    if m == 0:
        return adjusted
    order = present[np.argsort(values[present], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * values[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def holm_adjust_rows(p) -> np.ndarray:
    """:func:`holm_adjust` of each row of a 2-d float array (NaN = missing), at once.

    Row by row the same operations on the same values: the present P values sorted stably
    (NaN sorts last, so the present ones keep their order), scaled by ``m − k`` with ``m`` the
    row's count of present values, and carried forward by the running maximum.
    """
    values = np.array(p, dtype=np.float64, ndmin=2)
    if values.ndim != 2:
        raise ValueError("P values must be a 2-d array, one row per set")
    present = ~np.isnan(values)
    if np.any((values[present] < 0) | (values[present] > 1)):
        raise ValueError("every P value must be missing or lie in [0, 1]")
    rows, width = values.shape
    adjusted = np.full(values.shape, np.nan)
    if values.size == 0:
        return adjusted
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    m = present.sum(axis=1, dtype=np.int64)[:, None]
    rank = np.arange(width, dtype=np.int64)[None, :]
    scaled = np.minimum(1.0, (m - rank) * ordered)
    carried = np.maximum.accumulate(scaled, axis=1)
    np.put_along_axis(adjusted, order, np.where(rank < m, carried, np.nan), axis=1)
    return adjusted
