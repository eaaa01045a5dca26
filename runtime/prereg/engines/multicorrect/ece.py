"""Calibration of independent binary outputs (one yes/no probability per option)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig, engine_config
from prereg.engines.multicorrect.records import BinaryOutput
from prereg.engines.multicorrect.scoring import _round, check_rounding
from prereg.stats.calibration import _TEN_BIN_EDGES, ece_ten_bin


def binary_arrays(outputs: Iterable[BinaryOutput]) -> tuple[np.ndarray, np.ndarray]:
    """``(q, y)`` arrays of :class:`BinaryOutput` records (anything else raises TypeError)."""
    q: list[float] = []
    y: list[int] = []
    for i, o in enumerate(outputs):
        if not isinstance(o, BinaryOutput):
            raise TypeError(f"outputs[{i}]: expected a BinaryOutput, got {type(o).__name__}")
        q.append(o.probability)
        y.append(o.label)
    return np.array(q, dtype=np.float64), np.array(y, dtype=np.int64)


def binary_ece(
    outputs: Iterable[BinaryOutput],
    exclude_first_bin: bool = False,
    *,
    config: Mapping[str, Any] | EngineConfig,
    rounding_decimals: int | None = None,
) -> float | None:
    """Ten-bin ECE of binary outputs (``prereg.stats.calibration.ece_ten_bin``).

    Bins ``[0, 0.1], (0.1, 0.2], …, (0.9, 1]``.  With ``exclude_first_bin`` the samples with
    ``q <= 0.1`` are dropped and the weights are renormalised over the remaining count; None
    when nothing remains (or nothing was given).  Rounded half-up on the shortest decimal form
    only when ``rounding_decimals`` is given.
    """
    engine_config(config)  # checks the configured binning is the ten-bin one
    d = check_rounding(rounding_decimals)
    if not isinstance(exclude_first_bin, bool):
        raise TypeError("exclude_first_bin must be a boolean")
    q, y = binary_arrays(outputs)
    return ece_of_arrays(q, y, exclude_first_bin, d)


def ece_of_arrays(
    q: np.ndarray, y: np.ndarray, exclude_first_bin: bool, rounding_decimals: int | None
) -> float | None:
    """:func:`binary_ece` of checked ``(q, y)`` arrays (the score command's reader's)."""
    return _round(ece_ten_bin(q, y, exclude_first_bin=exclude_first_bin), rounding_decimals)


def ece_pair_of_arrays(
    q: np.ndarray, y: np.ndarray, rounding_decimals: int | None
) -> tuple[float | None, float | None]:
    """``(ece_of_arrays(q, y, False, d), ece_of_arrays(q, y, True, d))`` in one pass over
    checked arrays (``q`` finite in [0, 1], ``y`` 0 or 1, as the score command's reader gives
    them), bit for bit.

    :func:`prereg.stats.calibration.ece_ten_bin` sums each bin with ``np.bincount`` in the
    samples' order; dropping the first bin's samples leaves every other bin's sequence of
    additions as it was, so both figures come from one set of per-bin sums, the second over
    bins 1 … 9 and the count outside bin 0, term by term as ``ece_ten_bin`` adds them. The bin
    of ``q`` is its count of edges strictly below it, which is what ``ten_bin_index``'s
    ``searchsorted(edges, q, side="left")`` counts, added up here from nine comparisons."""
    bins = np.zeros(q.size, dtype=np.int8)
    for edge in _TEN_BIN_EDGES.tolist():
        bins += q > edge
    n_b = np.bincount(bins, minlength=10)
    sum_q = np.bincount(bins, weights=q, minlength=10)
    sum_y = np.bincount(bins, weights=y.astype(np.float64), minlength=10)

    def ece(first: int) -> float | None:
        total = int(q.size) - int(n_b[:first].sum())
        if total == 0:
            return None
        e = 0.0
        for b in range(first, 10):
            if n_b[b]:
                e += (n_b[b] / total) * abs(sum_q[b] / n_b[b] - sum_y[b] / n_b[b])
        return _round(float(e), rounding_decimals)

    return ece(0), ece(1)
