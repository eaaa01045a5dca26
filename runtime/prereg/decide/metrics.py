"""What each registered metric computes, per row: a numerator and a denominator.

- ``coverage``: numerator 1 for an observed row, denominator 1 for every registered row.
- ``units``: a cell's included units over its units (:func:`prereg.decide.units.share_metric`).
  With units registered, every other kind counts only the rows of included units.
- ``proportion``: denominator 1 for an observed row meeting ``among``; numerator 1 when it
  also meets ``where``.
- ``mean``: denominator 1 for an observed row meeting ``among`` whose ``field`` is a number;
  the numerator is that number (its natural log with ``transform: log``).
- ``geometric_mean``: as ``mean`` of the log of ``field``; the figure is exp of that mean.
- ``ece``: the rows of ``mean``; ``field`` is a confidence in the registered bins and ``where``
  says which rows are correct; the figure is the expected calibration error.
- ``auroc``: the rows of ``mean``; ``field`` is a score and ``where`` says which rows are
  positive; the figure is the area under the ROC curve (ties count one half).

A count or mean metric over a selection is the sum of its numerators over the selection's rows
divided by the sum of its denominators (a count k of n for the two proportions); ``ece`` and
``auroc`` are computed from the selection's counted rows as a whole (:meth:`RowMetric.figure`).
A log of a number that is not positive is refused (register ``among`` to leave such rows out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prereg.decide.fields import Columns, _as_numbers, _column, all_of
from prereg.errors import UserError

PROPORTION_KINDS = ("coverage", "proportion", "units")


@dataclass(frozen=True)
class RowMetric:
    id: str
    kind: str
    num: np.ndarray  # float per row
    den: np.ndarray  # float (0/1) per row
    value: np.ndarray | None = None  # the number of a counted row (log scale for logs), else NaN
    hit: np.ndarray | None = None  # ece: correct; auroc: positive (bool per row)
    back: str | None = None  # "exp": the figure is exp of the mean (a geometric mean)
    bins: tuple[float, ...] = ()
    closed: str = "left"
    raw: np.ndarray | None = None  # the number of a counted row as read (before a log), else NaN
    log: bool = False  # the figure averages logs (transform log, or a geometric mean)

    @property
    def is_proportion(self) -> bool:
        return self.kind in PROPORTION_KINDS

    @property
    def is_sample(self) -> bool:
        return self.kind in ("mean", "geometric_mean")

    def counted(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Which rows count (within ``mask``)."""
        c = self.den > 0
        return c if mask is None else c & mask

    def statistic(self, values: np.ndarray, hits: np.ndarray | None = None) -> float:
        """The metric's figure of counted rows given their values (and hits)."""
        if values.size == 0:
            return float("nan")
        if self.kind == "ece":
            from prereg.stats.calibration import ece_binned

            return ece_binned(values, hits, self.bins, self.closed)
        if self.kind == "auroc":
            from prereg.stats.roc import auroc

            return auroc(values, np.asarray(hits, dtype=np.int8))
        m = float(np.mean(values))
        return math.exp(m) if self.back == "exp" else m

    def figure(self, mask: np.ndarray) -> float:
        """The metric over the rows of ``mask`` (NaN when no row counts)."""
        if self.kind not in ("ece", "auroc"):
            den = float(self.den[mask].sum())
            if not den:
                return float("nan")
            m = float(self.num[mask].sum()) / den
            return math.exp(m) if self.back == "exp" else m
        c = self.counted(mask)
        return self.statistic(self.value[c], None if self.hit is None else self.hit[c])


def row_metric(
    metric: Mapping[str, Any],
    columns: Columns,
    observed: np.ndarray,
    *,
    kept: np.ndarray | None = None,
    unit_share=None,
) -> RowMetric:
    """The metric per row. ``kept`` (the rows of included units, see :mod:`prereg.decide.units`)
    restricts every kind but coverage to those rows; ``unit_share(unit id)`` gives a units
    metric's (numerator, denominator) per row."""
    compute = metric.get("compute")
    if compute is None:
        raise UserError(
            f"metric {metric['id']!r} has no compute block: the engine cannot compute it"
        )
    observed = np.asarray(observed, dtype=bool)
    n = observed.size
    kind = compute["kind"]
    if kind == "coverage":
        return RowMetric(metric["id"], kind, observed.astype(float), np.ones(n))
    if kind == "units":
        if unit_share is None:
            raise UserError(f"metric {metric['id']!r}: the study registers no units")
        num, den = unit_share(compute["unit"])
        return RowMetric(metric["id"], kind, num, den)
    if kept is not None:
        observed = observed & np.asarray(kept, dtype=bool)
    among = observed & all_of(compute.get("among"), columns, n)
    if kind == "proportion":
        hit = among & all_of(compute.get("where"), columns, n)
        return RowMetric(metric["id"], kind, hit.astype(float), among.astype(float))
    if kind in ("mean", "geometric_mean", "ece", "auroc"):
        x, ok = _as_numbers(_column(columns, compute["field"], f"{kind} of unknown field"))
        den = among & ok
        raw = np.where(den, x, np.nan)
        log = kind == "geometric_mean" or compute.get("transform") == "log"
        if log:
            bad = den & ~(x > 0)
            if bad.any():
                raise UserError(
                    f"metric {metric['id']!r} takes the log of {compute['field']!r}, which is not"
                    f" positive on {int(bad.sum())} counted row(s) (the first is row"
                    f" {int(np.flatnonzero(bad)[0]) + 1}); register among: [{{field:"
                    f" {compute['field']}, op: gt, value: 0}}] to leave such rows out"
                )
            with np.errstate(divide="ignore", invalid="ignore"):
                x = np.where(den, np.log(np.where(den, x, 1.0)), np.nan)
        value = np.where(den, x, np.nan)
        hit = None
        if kind in ("ece", "auroc"):
            hit = den & all_of(compute.get("where"), columns, n)
        if kind == "ece":
            lo, hi = float(compute["bins"][0]), float(compute["bins"][-1])
            outside = den & ~((x >= lo) & (x <= hi))
            if outside.any():
                raise UserError(
                    f"metric {metric['id']!r}: {compute['field']!r} is outside the registered"
                    f" bins [{lo:g}, {hi:g}] on {int(outside.sum())} counted row(s) (the first"
                    f" is row {int(np.flatnonzero(outside)[0]) + 1}, value"
                    f" {float(x[np.flatnonzero(outside)[0]])!r})"
                )
        if kind == "auroc":
            bad = den & ~np.isfinite(x)
            if bad.any():  # pragma: no cover - JSON numbers are finite
                raise UserError(f"metric {metric['id']!r}: a score is not finite")
        return RowMetric(
            metric["id"],
            kind,
            np.where(den, value, 0.0),
            den.astype(float),
            value=value,
            hit=hit,
            back="exp" if kind == "geometric_mean" else None,
            bins=tuple(float(b) for b in compute.get("bins") or ()),
            closed=str(compute.get("closed") or "left"),
            raw=raw,
            log=log,
        )
    raise UserError(f"metric {metric['id']!r}: unknown kind {kind!r}")  # pragma: no cover


def row_metrics(
    metrics: Sequence[Mapping[str, Any]],
    columns: Columns,
    observed: np.ndarray,
    *,
    kept: np.ndarray | None = None,
    unit_share=None,
) -> dict[str, RowMetric]:
    return {
        m["id"]: row_metric(m, columns, observed, kept=kept, unit_share=unit_share)
        for m in metrics
        if m.get("compute")
    }
