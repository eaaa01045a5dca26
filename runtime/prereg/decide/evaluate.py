"""Registered estimates and contrasts over row metrics, families, gates and verdicts.

Every estimate and contrast names its metric, its selection(s), its interval method and (for
a contrast) its test, alternative and margin; the methods are looked up by name in
:mod:`prereg.stats.methods`, so a new method is one registered function. Verdicts come from
the study's compiled rules (``generated/<study>/rules.py``) through :mod:`prereg.rules`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from prereg.decide.metrics import RowMetric
from prereg.decide.table import SPLIT, RowTable, cell_attributes
from prereg.errors import UserError
from prereg.rules import (
    REPORTED_ONLY,
    ContrastResult,
    adjust_families,
    failed_gates,
    selection_matches,
)


class Selections:
    """Row masks of rule selections over a row table (cached per selection)."""

    def __init__(self, table: RowTable):
        self.table = table
        self.cell_attrs = [cell_attributes(c) for c in table.cells]
        self.known = {SPLIT, *(f for c in table.cells for f in c["levels"]), *table.attributes}
        self._cache: dict[tuple, np.ndarray] = {}

    def mask(self, selection: Mapping[str, Sequence[str]], what: str) -> np.ndarray:
        key = tuple(sorted((k, tuple(v)) for k, v in selection.items()))
        m = self._cache.get(key)
        if m is not None:
            return m
        unknown = sorted(set(selection) - self.known)
        if unknown:
            raise UserError(
                f"rules: {what} selects by {unknown}, which is neither the split, a factor nor a"
                " row attribute"
            )
        cell_sel = {k: v for k, v in selection.items() if k not in self.table.attributes}
        cells = np.array([selection_matches(cell_sel, a) for a in self.cell_attrs], dtype=bool)
        m = cells[self.table.cell] if len(self.table) else np.zeros(0, dtype=bool)
        for name, levels in selection.items():
            if name in self.table.attributes:
                m = m & np.isin(self.table.attributes[name], list(levels))
        self._cache[key] = m
        return m


def _sums(metric: RowMetric, mask: np.ndarray) -> tuple[float, float]:
    return float(metric.num[mask].sum()), float(metric.den[mask].sum())


def _nan_none(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _metric(metrics: Mapping[str, RowMetric], name: str, what: str, *, proportion: bool):
    m = metrics.get(name)
    if m is None:
        raise UserError(f"rules: {what} names metric {name!r}, which has no compute block")
    if proportion and not m.is_proportion:
        raise UserError(
            f"rules: {what} names metric {name!r} ({m.kind}); its methods are for proportions"
        )
    return m


@dataclass(frozen=True)
class Results:
    results: dict[str, ContrastResult]
    counts: dict[str, tuple[int, int, int, int]]


def registered_results(rules, metrics: Mapping[str, RowMetric], sel: Selections) -> Results:
    """Every registered estimate and contrast, with family-adjusted P values."""
    from prereg.stats.methods import MethodError, method

    results: dict[str, ContrastResult] = {}
    counts: dict[str, tuple[int, int, int, int]] = {}

    def get(kind: str, name: str, what: str):
        try:
            return method(kind, name)
        except MethodError as exc:
            raise UserError(f"rules: {what}: {exc}") from None

    for e in rules.ESTIMATES:
        what = f"estimate {e.id}"
        m = _metric(metrics, e.metric, what, proportion=True)
        k, n = (int(round(x)) for x in _sums(m, sel.mask(e.of, what)))
        lo, hi = get("proportion-interval", e.interval, what).fn(k, n, level=e.level)
        est = k / n if n else float("nan")
        results[e.id] = ContrastResult(e.id, est, float(lo), float(hi), extra={"k": k, "n": n})
        counts[e.id] = (k, n, 0, 0)
    cs = list(rules.CONTRASTS)
    if cs:
        kn = np.zeros((len(cs), 4), dtype=np.int64)
        for j, c in enumerate(cs):
            what = f"contrast {c.id}"
            m = _metric(metrics, c.metric, what, proportion=True)
            a = _sums(m, sel.mask(c.a, what))
            b = _sums(m, sel.mask(c.b, what))
            kn[j] = [round(a[0]), round(a[1]), round(b[0]), round(b[1])]
        groups: dict[tuple, list[int]] = {}
        for j, c in enumerate(cs):
            alt = getattr(c, "alternative", "two-sided")
            margin = getattr(c, "margin", 0.0)
            groups.setdefault((c.interval, c.level, c.test, alt, margin), []).append(j)
        d = np.full(len(cs), np.nan)
        lo = np.full(len(cs), np.nan)
        hi = np.full(len(cs), np.nan)
        ps = np.full(len(cs), np.nan)
        for (interval, level, test, alt, margin), js in groups.items():
            what = f"contrast {cs[js[0]].id}"
            idx = np.asarray(js)
            k1, n1, k2, n2 = (kn[idx, i] for i in range(4))
            d[idx], lo[idx], hi[idx] = get("difference-interval", interval, what).fn(
                k1, n1, k2, n2, level=level
            )
            if test != "none":
                tm = get("two-proportion-test", test, what)
                try:
                    _, p = tm.fn(k1, n1, k2, n2, alternative=alt, margin=margin)
                except MethodError as exc:
                    raise UserError(f"rules: {what}: {exc}") from None
                ps[idx] = p
        for j, c in enumerate(cs):
            k1, n1, k2, n2 = (int(x) for x in kn[j])
            results[c.id] = ContrastResult(
                c.id,
                float(d[j]),
                float(lo[j]),
                float(hi[j]),
                p=_nan_none(ps[j]) if c.test != "none" else None,
                extra={"k1": k1, "n1": n1, "k2": k2, "n2": n2},
            )
            counts[c.id] = (k1, n1, k2, n2)
    return Results(adjust_families(results, cs, rules.FAMILIES), counts)


def cell_figures(metrics: Mapping[str, RowMetric], table: RowTable) -> list[dict[str, float]]:
    """Per registered cell: each metric's figure (NaN when its denominator is 0)."""
    nc = len(table.cells)
    out: list[dict[str, float]] = [{} for _ in range(nc)]
    for mid, m in metrics.items():
        num = np.bincount(table.cell, weights=m.num, minlength=nc)
        den = np.bincount(table.cell, weights=m.den, minlength=nc)
        with np.errstate(invalid="ignore", divide="ignore"):
            fig = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
        for ci in range(nc):
            out[ci][mid] = float(fig[ci])
    return out


def cell_counts(metrics: Mapping[str, RowMetric], table: RowTable) -> list[dict[str, tuple]]:
    nc = len(table.cells)
    out: list[dict[str, tuple]] = [{} for _ in range(nc)]
    for mid, m in metrics.items():
        num = np.bincount(table.cell, weights=m.num, minlength=nc)
        den = np.bincount(table.cell, weights=m.den, minlength=nc)
        for ci in range(nc):
            out[ci][mid] = (float(num[ci]), float(den[ci]))
    return out


@dataclass(frozen=True)
class Decision:
    failures: list  # (gate, cell id, figure)
    verdicts: dict[str, str]

    @property
    def gated(self) -> bool:
        return bool(self.failures)


def decide_all(rules, results: Mapping[str, ContrastResult], table: RowTable, figures) -> Decision:
    """Gates over every cell, then each hypothesis' verdict (all ``otherwise`` when gated)."""
    gate_input = [(c["id"], cell_attributes(c), figures[i]) for i, c in enumerate(table.cells)]
    failures = failed_gates(rules.GATES, gate_input)
    verdicts = {h: fn(results) for h, fn in rules.HYPOTHESES.items()}
    if failures:
        # A failed gate decides every tested hypothesis; reported-only ones stay reported.
        otherwise = failures[0][0].otherwise
        verdicts = {h: v if v == REPORTED_ONLY else otherwise for h, v in verdicts.items()}
    return Decision(failures, verdicts)
