"""What each registered metric computes, per row: a numerator and a denominator.

- ``coverage``: numerator 1 for an observed row, denominator 1 for every registered row.
- ``proportion``: denominator 1 for an observed row meeting ``among``; numerator 1 when it
  also meets ``where``.
- ``mean``: denominator 1 for an observed row meeting ``among`` whose ``field`` is a number;
  the numerator is that number.

A metric over a selection is the sum of its numerators over the selection's rows divided by
the sum of its denominators (a count k of n for the two proportions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prereg.decide.fields import Columns, _as_numbers, _column, all_of
from prereg.errors import UserError

PROPORTION_KINDS = ("coverage", "proportion")


@dataclass(frozen=True)
class RowMetric:
    id: str
    kind: str
    num: np.ndarray  # float per row
    den: np.ndarray  # float (0/1) per row

    @property
    def is_proportion(self) -> bool:
        return self.kind in PROPORTION_KINDS


def row_metric(metric: Mapping[str, Any], columns: Columns, observed: np.ndarray) -> RowMetric:
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
    among = observed & all_of(compute.get("among"), columns, n)
    if kind == "proportion":
        hit = among & all_of(compute.get("where"), columns, n)
        return RowMetric(metric["id"], kind, hit.astype(float), among.astype(float))
    if kind == "mean":
        x, ok = _as_numbers(_column(columns, compute["field"], "mean of unknown field"))
        den = among & ok
        return RowMetric(metric["id"], kind, np.where(den, x, 0.0), den.astype(float))
    raise UserError(f"metric {metric['id']!r}: unknown kind {kind!r}")  # pragma: no cover


def row_metrics(
    metrics: Sequence[Mapping[str, Any]], columns: Columns, observed: np.ndarray
) -> dict[str, RowMetric]:
    return {m["id"]: row_metric(m, columns, observed) for m in metrics if m.get("compute")}
