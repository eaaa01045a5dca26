"""Calibration: expected calibration error and the isotonic calibrator artifact.

Conventions implemented here (each function cites its own):

- :func:`ece_ten_bin` -- jev-multicorrect, "Calibration of independent binary outputs": ten
  equal-width bins ``[0, 0.1], (0.1, 0.2], ..., (0.9, 1.0]``, right-closed, first bin also
  closed on the left; optionally excluding the first bin.
"""

from __future__ import annotations

import numpy as np

# The decimal bin edges 0.1, 0.2, ..., 0.9 as Python floats.  ``k / 10`` is correctly rounded,
# so each edge is exactly the float literal ``0.k`` (e.g. ``3 / 10 == 0.3``).
_TEN_BIN_EDGES = np.arange(1, 10, dtype=np.float64) / 10.0


def _probabilities(q, name: str) -> np.ndarray:
    a = np.asarray(q, dtype=np.float64).reshape(-1)
    if a.size and not (np.all(np.isfinite(a)) and a.min() >= 0.0 and a.max() <= 1.0):
        raise ValueError(f"{name}: every value must be a finite number in [0, 1]")
    return a


def _binary(y, name: str, size: int) -> np.ndarray:
    a = np.asarray(y).reshape(-1)
    if a.size != size:
        raise ValueError(f"{name}: expected {size} labels, got {a.size}")
    if a.size and not np.all((a == 0) | (a == 1)):
        raise ValueError(f"{name}: every label must be 0 or 1")
    return a.astype(np.float64)


def ten_bin_index(q) -> np.ndarray:
    """Bin index 0..9 of each probability for the bins ``[0, 0.1], (0.1, 0.2], ..., (0.9, 1]``.

    The index is the number of edges ``k/10`` (k = 1..9, as Python floats) strictly below ``q``,
    i.e. membership is decided by the float comparisons ``q <= 0.1``, ``q <= 0.2``, ...  So the
    float ``0.2`` falls in ``(0.1, 0.2]`` and the float ``0.3`` (stored slightly above 3/10) in
    ``(0.2, 0.3]``: both are compared with the identical float edge.
    """
    a = np.asarray(q, dtype=np.float64)
    return np.searchsorted(_TEN_BIN_EDGES, a, side="left")


def ece_ten_bin(q, y, exclude_first_bin: bool = False) -> float | None:
    """Ten-bin expected calibration error (jev-multicorrect convention).

    ``ECE = sum_b (n_b / N) * |mean q_b - mean y_b|`` over the non-empty bins of
    :func:`ten_bin_index`.  With ``exclude_first_bin`` the samples with ``q <= 0.1`` are dropped
    and ``N`` is the remaining count.  Returns None when no sample is left (or none was given).
    ``q`` must be finite and in [0, 1]; ``y`` must be 0/1 (or booleans) of the same length.
    """
    qa = _probabilities(q, "q")
    ya = _binary(y, "y", qa.size)
    bins = ten_bin_index(qa)
    if exclude_first_bin:
        keep = bins > 0
        qa, ya, bins = qa[keep], ya[keep], bins[keep]
    total = qa.size
    if total == 0:
        return None
    n_b = np.bincount(bins, minlength=10)
    sum_q = np.bincount(bins, weights=qa, minlength=10)
    sum_y = np.bincount(bins, weights=ya, minlength=10)
    ece = 0.0
    for b in range(10):
        if n_b[b]:
            ece += (n_b[b] / total) * abs(sum_q[b] / n_b[b] - sum_y[b] / n_b[b])
    return float(ece)
