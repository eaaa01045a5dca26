"""Calibration: expected calibration error and the isotonic calibrator artifact.

Conventions implemented here (each function cites its own):

- :func:`ece_ten_bin` -- jev-multicorrect, "Calibration of independent binary outputs": ten
  equal-width bins ``[0, 0.1], (0.1, 0.2], ..., (0.9, 1.0]``, right-closed, first bin also
  closed on the left; optionally excluding the first bin.
- :func:`decile_ece` -- d17-multifact, "Scoring": ``bin = min(9, floor(c·10))`` (left-closed
  bins, computed with the float product ``c·10``), ``sum_b (n_b/n)·|mean c_b − mean y_b|``.
- :func:`apply_isotonic` -- d17-multifact, "Scoring": blocks sorted by lower bound; a score maps
  to the last block whose lower bound ≤ score, else to the first block; the block's probability
  is ``(yes + 1)/(n + 2)``.
- :func:`fit_isotonic_blocks` -- builds such blocks by pool-adjacent-violators with a minimum
  block size (the fitting rule is ours; d17 treats the calibrator as an input artifact).
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
    i.e. membership is decided by the float comparisons ``q <= 0.1``, ``q <= 0.2``, ...  So each
    decimal edge closes its own bin whichever way its float rounds: the float ``0.1`` (stored just
    above 1/10) is in ``[0, 0.1]``, the float ``0.3`` (just below 3/10) in ``(0.2, 0.3]``, and
    ``0.1 + 0.2`` (the float after ``0.3``) in ``(0.3, 0.4]``.  An exact rational comparison
    would put the float ``0.1`` into ``(0.1, 0.2]``; we do not do that.
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


def decile_ece(c, y) -> float:
    """Decile expected calibration error (d17 convention); NaN when there are no samples.

    ``bin = min(9, floor(c·10))`` with ``c·10`` a float product (so the float ``0.3``, stored
    just below 3/10, is in bin 3 because ``0.3·10`` rounds to ``3.0``, while the float before it
    is in bin 2; ``c = 1`` is in bin 9); the error is
    ``sum_b (n_b/n)·|mean c_b − mean y_b|`` over non-empty bins.  ``c`` must be finite and in
    [0, 1]; ``y`` 0/1 of the same length.
    """
    ca = _probabilities(c, "c")
    ya = _binary(y, "y", ca.size)
    total = ca.size
    if total == 0:
        return float("nan")
    bins = np.minimum(9, np.floor(ca * 10.0)).astype(np.intp)
    n_b = np.bincount(bins, minlength=10)
    sum_c = np.bincount(bins, weights=ca, minlength=10)
    sum_y = np.bincount(bins, weights=ya, minlength=10)
    ece = 0.0
    for b in range(10):
        if n_b[b]:
            ece += (n_b[b] / total) * abs(sum_c[b] / n_b[b] - sum_y[b] / n_b[b])
    return float(ece)


def fit_isotonic_blocks(scores, labels, min_block_size: int) -> list[dict]:
    """Fit an isotonic calibrator: blocks ``{"lower": float, "yes": int, "n": int}``.

    Rows are sorted by score and rows with equal scores start in one block (ties are never
    split).  The blocks are then scanned left to right with a stack (pool-adjacent-violators);
    after each push, the top two blocks are merged while

    - the lower of the two has a yes-rate strictly above the upper one's (a violation; rates are
      compared exactly as ``yes_a·n_b > yes_b·n_a``), or
    - the lower of the two has fewer than ``min_block_size`` rows (a small block absorbs the
      next block up).

    At the end, while the last block has fewer than ``min_block_size`` rows and is not the only
    block, it is merged into the block below (re-checking violations).  The result has
    non-decreasing yes-rates and every block has at least ``min_block_size`` rows, unless there
    are fewer rows than that in total (then one block holds them all).  Equal-rate neighbours
    are not merged.  With ``min_block_size = 1`` the block rates are the isotonic (least
    squares) regression of the labels on the scores.  ``lower`` is the smallest score in the
    block.  Raises ValueError for no rows, non-finite scores, labels other than 0/1, or
    ``min_block_size < 1``.
    """
    if isinstance(min_block_size, bool) or int(min_block_size) != min_block_size:
        raise ValueError(f"min_block_size must be an integer, got {min_block_size!r}")
    min_n = int(min_block_size)
    if min_n < 1:
        raise ValueError(f"min_block_size must be at least 1, got {min_block_size!r}")
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if s.size == 0:
        raise ValueError("cannot fit a calibrator on no rows")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    y = _binary(labels, "labels", s.size).astype(np.int64)
    uniq, inverse = np.unique(s, return_inverse=True)
    tie_n = np.bincount(inverse, minlength=uniq.size)
    tie_yes = np.bincount(inverse, weights=y, minlength=uniq.size).astype(np.int64)

    lower: list[float] = []
    yes: list[int] = []
    n: list[int] = []

    def merge_top() -> None:
        top_yes, top_n = yes.pop(), n.pop()
        lower.pop()
        yes[-1] += top_yes
        n[-1] += top_n

    def must_merge() -> bool:
        if len(n) < 2:
            return False
        return n[-2] < min_n or yes[-2] * n[-1] > yes[-1] * n[-2]

    for value, k, m in zip(uniq.tolist(), tie_yes.tolist(), tie_n.tolist(), strict=True):
        lower.append(value)
        yes.append(k)
        n.append(m)
        while must_merge():
            merge_top()
    while len(n) >= 2 and (n[-1] < min_n or must_merge()):
        merge_top()
    return [
        {"lower": lo, "yes": int(k), "n": int(m)} for lo, k, m in zip(lower, yes, n, strict=True)
    ]


def _blocks(blocks) -> tuple[np.ndarray, np.ndarray]:
    if len(blocks) == 0:
        raise ValueError("a calibrator needs at least one block")
    lowers = np.empty(len(blocks), dtype=np.float64)
    probs = np.empty(len(blocks), dtype=np.float64)
    for i, b in enumerate(blocks):
        lo, k, m = b["lower"], b["yes"], b["n"]
        if isinstance(lo, bool) or not np.isfinite(float(lo)):
            raise ValueError(f"block {i}: lower must be a finite number")
        for name, v in (("yes", k), ("n", m)):
            if isinstance(v, bool) or int(v) != v or v < 0:
                raise ValueError(f"block {i}: {name} must be a non-negative integer")
        if k > m:
            raise ValueError(f"block {i}: yes ({k}) exceeds n ({m})")
        lowers[i] = float(lo)
        probs[i] = (int(k) + 1) / (int(m) + 2)
    order = np.argsort(lowers, kind="stable")
    return lowers[order], probs[order]


def apply_isotonic(blocks, scores):
    """Calibrated probabilities for ``scores`` (d17 convention); scalar in, float out.

    ``blocks`` is a sequence of mappings with ``lower``, ``yes`` and ``n``; they are sorted by
    ``lower`` (stably, so among equal lower bounds the later one listed wins).  A score maps to
    the last block whose ``lower <= score``, or to the first block when it lies below every lower
    bound; the probability is ``(yes + 1)/(n + 2)``.  Scores must not be NaN.
    """
    lowers, probs = _blocks(blocks)
    s = np.asarray(scores, dtype=np.float64)
    if np.any(np.isnan(s)):
        raise ValueError("scores must not be NaN")
    idx = np.maximum(np.searchsorted(lowers, s, side="right") - 1, 0)
    out = probs[idx]
    return float(out) if np.ndim(scores) == 0 else out


def bin_index(q, edges, closed: str) -> np.ndarray:
    """The bin of each value of ``q`` by registered ``edges`` (strictly increasing).

    ``closed="left"``: bins [e0, e1), [e1, e2), …, the last one [e_{k−1}, e_k] closed at both
    ends; ``closed="right"``: (e_{k−1}, e_k], …, the first one [e0, e1] closed at both ends.
    A value outside [e0, e_k] raises ValueError.
    """
    e = np.asarray(edges, dtype=np.float64).reshape(-1)
    if e.size < 2 or not np.all(np.diff(e) > 0) or not np.all(np.isfinite(e)):
        raise ValueError("bin edges must be at least two strictly increasing finite numbers")
    x = np.asarray(q, dtype=np.float64).reshape(-1)
    outside = ~((x >= e[0]) & (x <= e[-1]))
    if outside.any():
        bad = float(x[np.flatnonzero(outside)[0]])
        raise ValueError(f"value {bad!r} lies outside the bin edges [{e[0]:g}, {e[-1]:g}]")
    k = e.size - 1
    if closed == "left":
        idx = np.searchsorted(e, x, side="right") - 1
    elif closed == "right":
        idx = np.searchsorted(e, x, side="left") - 1
    else:
        raise ValueError(f"closed must be left or right, got {closed!r}")
    return np.clip(idx, 0, k - 1)


def ece_binned(q, y, edges, closed: str) -> float:
    """Expected calibration error over registered bins: Σ_b (n_b / N) · |mean(y_b) − mean(q_b)|.

    ``q`` are confidences, ``y`` outcomes (1/True = correct); empty bins add nothing. NaN
    when there is no row.
    """
    x = np.asarray(q, dtype=np.float64).reshape(-1)
    t = np.asarray(y, dtype=np.float64).reshape(-1)
    if x.size != t.size:
        raise ValueError(f"confidences and outcomes differ in length ({x.size} vs {t.size})")
    if x.size == 0:
        return float("nan")
    idx = bin_index(x, edges, closed)
    k = len(edges) - 1
    conf = np.bincount(idx, weights=x, minlength=k)
    acc = np.bincount(idx, weights=t, minlength=k)
    return float(np.abs(acc - conf).sum() / x.size)


def ece_bins(q, y, edges, closed: str) -> list[dict]:
    """The table behind :func:`ece_binned`, one entry per registered bin (empty ones too):
    ``lower``, ``upper``, ``n`` (confidences in the bin), ``correct`` (their outcomes that are
    1), ``meanConfidence`` and ``accuracy`` (None in an empty bin), ``gap``
    ``|accuracy − meanConfidence|``, ``weight`` ``n/N`` and ``contribution`` ``weight·gap``
    (0 in an empty bin), whose sum over the bins is the ECE. Floats at full precision; the
    bins are those of :func:`bin_index`."""
    x = np.asarray(q, dtype=np.float64).reshape(-1)
    t = np.asarray(y, dtype=np.float64).reshape(-1)
    if x.size != t.size:
        raise ValueError(f"confidences and outcomes differ in length ({x.size} vs {t.size})")
    e = [float(v) for v in edges]
    k = len(e) - 1
    idx = bin_index(x, e, closed) if x.size else np.zeros(0, dtype=np.intp)
    n = np.bincount(idx, minlength=k)
    conf = np.bincount(idx, weights=x, minlength=k)
    acc = np.bincount(idx, weights=t, minlength=k)
    out = []
    for b in range(k):
        nb = int(n[b])
        row = {"lower": e[b], "upper": e[b + 1], "n": nb, "correct": int(round(float(acc[b])))}
        if nb:
            mc, ac = float(conf[b]) / nb, float(acc[b]) / nb
            row.update(
                meanConfidence=mc,
                accuracy=ac,
                gap=abs(ac - mc),
                weight=nb / x.size,
                contribution=float(abs(acc[b] - conf[b]) / x.size),
            )
        else:
            row.update(meanConfidence=None, accuracy=None, gap=None, weight=0.0, contribution=0.0)
        out.append(row)
    return out
