"""ROC area and its Hanley–McNeil interval (d17-multifact, "Scoring").

- :func:`auroc`: the probability that a random positive scores above a random negative, ties
  counting one half (the Mann–Whitney statistic), computed from mid-ranks in O(n log n).
- :func:`hanley_mcneil`: ``SE = √((A(1−A) + (n_pos−1)(Q1−A²) + (n_neg−1)(Q2−A²)) / (n_pos·n_neg))``
  with ``Q1 = A/(2−A)`` and ``Q2 = 2A²/(1+A)`` (Hanley & McNeil 1982); interval ``A ± z·SE``
  clipped to [0, 1].  ``z`` has no default: d17 uses 1.96, not the exact quantile.
"""

from __future__ import annotations

import numpy as np


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given their average rank (scipy's ``rankdata`` "average").

    numpy only: importing scipy.stats costs about 0.4 s on this path.
    """
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)  # rank of the last member of each tie group
    return ((ends - (counts - 1) / 2.0)[inverse]).astype(np.float64)


def auroc(scores, labels) -> float:
    """AUROC of ``scores`` for ``labels`` (1/True = positive, 0/False = negative).

    Ties count half.  NaN when either class is empty.  Scores must be finite.
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels).reshape(-1)
    if s.size != y.size:
        raise ValueError(f"scores and labels differ in length ({s.size} vs {y.size})")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    if y.size and not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must be 0 or 1")
    pos = y == 1
    n_pos = int(pos.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = average_ranks(s)
    u = ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def hanley_mcneil(auc, n_pos, n_neg, *, z):
    """Hanley–McNeil standard error and interval: returns ``(se, lo, hi)``.

    Accepts scalars or arrays (broadcast); NaN where ``auc`` is NaN or a class count is 0.
    ``z`` is the critical value the spec chose (required).
    """
    zf = float(z)
    if not (np.isfinite(zf) and zf > 0):
        raise ValueError(f"z must be a finite positive number, got {z!r}")
    a = np.asarray(auc, dtype=np.float64)
    n1 = np.asarray(n_pos, dtype=np.float64)
    n2 = np.asarray(n_neg, dtype=np.float64)
    if np.any(n1 < 0) or np.any(n2 < 0):
        raise ValueError("class counts must be non-negative")
    given = np.atleast_1d(a)
    given = given[~np.isnan(given)]
    if np.any((given < 0) | (given > 1)):
        raise ValueError("auc must lie in [0, 1]")
    a, n1, n2 = np.broadcast_arrays(a, n1, n2)
    missing = np.isnan(a) | (n1 == 0) | (n2 == 0)
    a_s = np.where(missing, 0.5, a)
    n1s = np.where(missing, 1.0, n1)
    n2s = np.where(missing, 1.0, n2)
    q1 = a_s / (2.0 - a_s)
    q2 = 2.0 * a_s * a_s / (1.0 + a_s)
    a2 = a_s * a_s  # not a_s**2: 0-d pow() may differ by an ulp from the array loop
    var = (a_s * (1.0 - a_s) + (n1s - 1.0) * (q1 - a2) + (n2s - 1.0) * (q2 - a2)) / (n1s * n2s)
    se = np.sqrt(np.maximum(var, 0.0))
    lo = np.clip(a_s - zf * se, 0.0, 1.0)
    hi = np.clip(a_s + zf * se, 0.0, 1.0)
    se, lo, hi = (np.where(missing, np.nan, v) for v in (se, lo, hi))
    if np.ndim(auc) == 0 and np.ndim(n_pos) == 0 and np.ndim(n_neg) == 0:
        return float(se), float(lo), float(hi)
    return se, lo, hi
