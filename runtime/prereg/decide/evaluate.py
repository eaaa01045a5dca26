"""Registered estimates and contrasts over row metrics, families, gates and verdicts.

Every estimate and contrast names its metric, its selection(s), its interval method and (for
a contrast) its test, alternative and margin; the methods are looked up by name in
:mod:`prereg.stats.methods`, so a new method is one registered function. Verdicts come from
the study's compiled rules (``generated/<study>/rules.py``) through :mod:`prereg.rules`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from prereg.decide.metrics import RowMetric
from prereg.decide.table import SPLIT, RowTable, cell_attributes
from prereg.errors import UserError
from prereg.rules import (
    NOT_TESTED,
    REPORTED_ONLY,
    SUPPORTED,
    ContrastResult,
    adjust_families,
    failed_gates,
)


def _level_masks(attrs: Sequence[Mapping[str, str]]) -> dict[str, dict[str, np.ndarray]]:
    """name -> level -> bool array: which of ``attrs`` have that level (missing: none)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for i, a in enumerate(attrs):
        for name, level in a.items():
            out.setdefault(name, {}).setdefault(level, np.zeros(len(attrs), dtype=bool))[i] = True
    return out


def _any_level(masks: Mapping[str, np.ndarray], levels: Sequence[str], n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    for level in levels:
        hit = masks.get(str(level))
        if hit is not None:
            m = m | hit
    return m


class Selections:
    """Rule selections over a row table: row masks, and sums of row metrics per selection.

    Rows are grouped once by their cell and row attributes (a selection names only those), so
    a selection is a mask over the few groups and a metric's sum over it adds a few group
    sums, whatever the number of rows.
    """

    def __init__(self, table: RowTable):
        self.table = table
        self.cell_attrs = [cell_attributes(c) for c in table.cells]
        self.known = {SPLIT, *(f for c in table.cells for f in c["levels"]), *table.attributes}
        key = np.asarray(table.cell, dtype=np.int64)
        if not table.attributes and (
            not key.size or 0 <= key.min() <= key.max() < len(table.cells)
        ):
            # the groups are the cells that have rows, in cell order (what np.unique finds,
            # by counting instead of sorting a million keys)
            present = np.flatnonzero(np.bincount(key, minlength=len(table.cells)))
            renumber = np.zeros(len(table.cells), dtype=np.int64)
            renumber[present] = np.arange(present.size)
            self.group = renumber[key]
            self.n_groups = present.size
            self.group_cell = present.astype(np.int64)
            self.group_attrs = {}
        else:
            for name in table.attributes:
                values, inverse = np.unique(np.asarray(table.attributes[name]), return_inverse=True)
                key = key * max(len(values), 1) + inverse.reshape(-1)
            _, first, group = np.unique(key, return_index=True, return_inverse=True)
            self.group = group.reshape(-1)  # group index per row
            self.n_groups = first.size
            self.group_cell = np.asarray(table.cell, dtype=np.int64)[first]
            self.group_attrs = {k: np.asarray(v)[first] for k, v in table.attributes.items()}
        self._rows: dict[tuple, np.ndarray] = {}
        self._groups: dict[tuple, np.ndarray] = {}
        self._sums: dict[int, tuple[np.ndarray, np.ndarray, RowMetric]] = {}
        self._stacked: dict[tuple, np.ndarray] = {}
        self._plans: dict[int, tuple[object, _Plan]] = {}
        self._splits: dict[int, tuple[object, _Split]] = {}
        # name -> level -> which cells (or row groups) have it, for vectorized selections
        self._cell_levels = _level_masks(self.cell_attrs)
        # (return_index: np.unique without it asks np.ma.is_masked, importing numpy.ma)
        self._group_levels = {
            name: {str(v): values == v for v in np.unique(values, return_index=True)[0]}
            for name, values in self.group_attrs.items()
        }

    @staticmethod
    def _key(selection: Mapping[str, Sequence[str]]) -> tuple:
        return tuple(sorted((k, tuple(v)) for k, v in selection.items()))

    def _cells(self, selection: Mapping[str, Sequence[str]], what: str) -> np.ndarray:
        unknown = sorted(set(selection) - self.known)
        if unknown:
            raise UserError(
                f"rules: {what} selects by {unknown}, which is neither the split, a factor nor a"
                " row attribute"
            )
        m = np.ones(len(self.cell_attrs), dtype=bool)
        for name, levels in selection.items():
            if name not in self.table.attributes:
                m = m & _any_level(self._cell_levels.get(name, {}), levels, m.size)
        return m

    def mask(self, selection: Mapping[str, Sequence[str]], what: str) -> np.ndarray:
        """Which rows a selection takes."""
        key = self._key(selection)
        m = self._rows.get(key)
        if m is None:
            groups = self.group_mask(selection, what)
            m = groups[self.group] if len(self.table) else np.zeros(0, dtype=bool)
            self._rows[key] = m
        return m

    def group_mask(self, selection: Mapping[str, Sequence[str]], what: str) -> np.ndarray:
        """Which row groups a selection takes."""
        key = self._key(selection)
        m = self._groups.get(key)
        if m is None:
            cells = self._cells(selection, what)
            m = cells[self.group_cell] if self.n_groups else np.zeros(0, dtype=bool)
            for name, levels in selection.items():
                if name in self.table.attributes:
                    m = m & _any_level(self._group_levels[name], levels, m.size)
            self._groups[key] = m
        return m

    def _group_sums(self, metric: RowMetric) -> tuple[np.ndarray, np.ndarray]:
        g = self._sums.get(id(metric))
        if g is None or g[2] is not metric:
            num = np.bincount(self.group, weights=metric.num, minlength=self.n_groups)
            den = np.bincount(self.group, weights=metric.den, minlength=self.n_groups)
            g = self._sums[id(metric)] = (num, den, metric)
        return g[0], g[1]

    def sums(
        self, metric: RowMetric, selection: Mapping[str, Sequence[str]], what: str
    ) -> tuple[float, float]:
        """(sum of numerators, sum of denominators) of a row metric over a selection."""
        num, den = self._group_sums(metric)
        m = self.group_mask(selection, what)
        return float(num[m].sum()), float(den[m].sum())

    def count_sums(
        self, metric: RowMetric, selections: Sequence[tuple[Mapping[str, Sequence[str]], str]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(numerator sums, denominator sums) of a count metric (integer numerators and
        denominators per row, as a proportion's are) over many ``(selection, what)`` at once:
        one product with the stacked group masks, exact for integer counts below 2**53."""
        return self.stacked(selections) @ np.stack(self._group_sums(metric), axis=1)

    def stacked(self, selections: Sequence[tuple[Mapping[str, Sequence[str]], str]]) -> np.ndarray:
        """The group masks of ``selections`` as rows of a 0/1 matrix (cached)."""
        key = tuple(self._key(s) for s, _ in selections)
        stacked = self._stacked.get(key)
        if stacked is None:
            stacked = np.zeros((len(selections), self.n_groups))
            for i, (s, what) in enumerate(selections):
                stacked[i, self.group_mask(s, what)] = 1.0
            self._stacked[key] = stacked
        return stacked

    def plan(self, rules) -> _Plan:
        """How ``rules``' estimates and contrasts are summed and computed (cached per rules)."""
        got = self._plans.get(id(rules))
        if got is None or got[0] is not rules:
            got = self._plans[id(rules)] = (rules, _Plan.of(rules, self))
        return got[1]

    def forget_metrics(self) -> None:
        """Drop the cached group sums of the metrics seen so far (a caller that scores many
        simulated studies over one table calls it between them)."""
        self._sums.clear()


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
    # analysis id -> the method's Result (prereg.stats.result), reported whole
    analyses: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class _Sums:
    """Items (estimates, or contrast sides) summed metric by metric: per metric, the item
    indexes, the first item's description (for errors) and the stacked selection masks."""

    size: int
    by_metric: tuple[tuple[str, np.ndarray, str, np.ndarray], ...]

    @classmethod
    def of(cls, items, sel: Selections) -> _Sums:
        by: dict[str, list[int]] = {}
        for j, (name, _, _) in enumerate(items):
            by.setdefault(name, []).append(j)
        return cls(
            len(items),
            tuple(
                (
                    name,
                    np.asarray(js, dtype=np.intp),
                    items[js[0]][2],
                    sel.stacked([(items[j][1], items[j][2]) for j in js]),
                )
                for name, js in by.items()
            ),
        )

    def counts(self, metrics, sel: Selections) -> tuple[np.ndarray, np.ndarray]:
        """Integer (k, n) per item."""
        k = np.zeros(self.size, dtype=np.int64)
        n = np.zeros(self.size, dtype=np.int64)
        for name, js, what, stacked in self.by_metric:
            m = _metric(metrics, name, what, proportion=True)
            sums = stacked @ np.stack(sel._group_sums(m), axis=1)
            k[js] = np.rint(sums[:, 0])
            n[js] = np.rint(sums[:, 1])
        return k, n


@dataclass(frozen=True)
class _Plan:
    """A rules module's estimates and contrasts, prepared once for a :class:`Selections`:
    their sums, and the items sharing a method (and its options) grouped together."""

    estimates: _Sums
    estimate_groups: tuple[tuple[tuple, np.ndarray], ...]
    sides: _Sums
    contrast_groups: tuple[tuple[tuple, np.ndarray], ...]

    @classmethod
    def of(cls, rules, sel: Selections) -> _Plan:
        es, cs = list(rules.ESTIMATES), list(rules.CONTRASTS)
        egroups: dict[tuple, list[int]] = {}
        for j, e in enumerate(es):
            egroups.setdefault((e.interval, e.level), []).append(j)
        cgroups: dict[tuple, list[int]] = {}
        for j, c in enumerate(cs):
            alt = getattr(c, "alternative", "two-sided")
            margin = getattr(c, "margin", 0.0)
            cgroups.setdefault((c.interval, c.level, c.test, alt, margin), []).append(j)
        return cls(
            _Sums.of([(e.metric, e.of, f"estimate {e.id}") for e in es], sel),
            tuple((key, np.asarray(js, dtype=np.intp)) for key, js in egroups.items()),
            _Sums.of([(c.metric, s, f"contrast {c.id}") for c in cs for s in (c.a, c.b)], sel),
            tuple((key, np.asarray(js, dtype=np.intp)) for key, js in cgroups.items()),
        )


def _count_results(rules, metrics: Mapping[str, RowMetric], sel: Selections) -> Results:
    """Every registered estimate and contrast, with family-adjusted P values.

    Selections are summed metric by metric in one product each, and each method is called
    once over every estimate or contrast that uses it (the methods broadcast, and give the
    same figures for arrays as for scalars), so a study with many rules is decided in a few
    array operations.
    """
    from prereg.decide.samples import STATISTIC_NAMES
    from prereg.stats.methods import MethodError, method

    results: dict[str, ContrastResult] = {}
    counts: dict[str, tuple[int, int, int, int]] = {}

    def get(kind: str, name: str, what: str):
        try:
            return method(kind, name)
        except MethodError as exc:
            raise UserError(f"rules: {what}: {exc}") from None

    plan = sel.plan(rules)
    es = list(rules.ESTIMATES)
    if es:
        ek, en = plan.estimates.counts(metrics, sel)
        for e in es:
            get("proportion-interval", e.interval, f"estimate {e.id}")
        elo = np.full(len(es), np.nan)
        ehi = np.full(len(es), np.nan)
        for (interval, level), js in plan.estimate_groups:
            fn = get("proportion-interval", interval, f"estimate {es[js[0]].id}").fn
            elo[js], ehi[js] = fn(ek[js], en[js], level=level)
        rows = zip(es, ek.tolist(), en.tolist(), elo.tolist(), ehi.tolist(), strict=True)
        for e, k, n, loj, hij in rows:
            est = k / n if n else float("nan")
            results[e.id] = ContrastResult(e.id, est, loj, hij, extra={"k": k, "n": n})
            counts[e.id] = (k, n, 0, 0)
    cs = list(rules.CONTRASTS)
    if cs:
        sk, sn = plan.sides.counts(metrics, sel)
        kn = np.stack([sk[0::2], sn[0::2], sk[1::2], sn[1::2]], axis=1)
        d = np.full(len(cs), np.nan)
        lo = np.full(len(cs), np.nan)
        hi = np.full(len(cs), np.nan)
        ps = np.full(len(cs), np.nan)
        zs = np.full(len(cs), np.nan)
        ses = np.full(len(cs), np.nan)
        dfs = np.full(len(cs), np.nan)
        for (interval, level, test, alt, margin), idx in plan.contrast_groups:
            what = f"contrast {cs[idx[0]].id}"
            k1, n1, k2, n2 = (kn[idx, i] for i in range(4))
            d[idx], lo[idx], hi[idx] = get("difference-interval", interval, what).fn(
                k1, n1, k2, n2, level=level
            )
            if test != "none":
                tm = get("two-proportion-test", test, what)
                try:
                    zs[idx], ps[idx] = tm.fn(k1, n1, k2, n2, alternative=alt, margin=margin)
                except MethodError as exc:
                    raise UserError(f"rules: {what}: {exc}") from None
                _on_the_margin(zs, ps, idx, kn, margin, alt)
                if tm.se_df is not None:
                    ses[idx], dfs[idx] = tm.se_df(k1, n1, k2, n2, margin=margin)
        rows = zip(
            cs,
            kn.tolist(),
            d.tolist(),
            lo.tolist(),
            hi.tolist(),
            ps.tolist(),
            zip(zs.tolist(), ses.tolist(), dfs.tolist(), strict=True),
            strict=True,
        )
        for c, (k1, n1, k2, n2), dj, loj, hij, pj, (zj, sej, dfj) in rows:
            extra: dict = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
            if c.test != "none" and not math.isnan(zj):
                extra.update(
                    statistic=zj,
                    statisticName=STATISTIC_NAMES.get(c.test, c.test),
                    se=_nan_none(sej),
                    df=_nan_none(dfj),
                )
            results[c.id] = ContrastResult(
                c.id,
                dj,
                loj,
                hij,
                p=_nan_none(pj) if c.test != "none" else None,
                extra=extra,
            )
            counts[c.id] = (k1, n1, k2, n2)
    return Results(results, counts)


def _on_the_margin(zs, ps, idx, kn, margin, alternative) -> None:
    """A test's difference exactly on its margin, read as the decimal the spec writes (k1/n1 −
    k2/n2 = −0.1, not the float below −0.1), has z = 0 and P = 1/2 one-sided (1 two-sided), as
    docs/vocabulary.md says; the float margin would leave a z of about 1e-16."""
    from fractions import Fraction

    if not margin or isinstance(margin, bool):
        return
    m = Fraction(repr(float(margin)))
    for j in np.atleast_1d(idx).tolist():
        k1, n1, k2, n2 = (int(v) for v in kn[j])
        if n1 and n2 and not math.isnan(zs[j]) and Fraction(k1, n1) - Fraction(k2, n2) == m:
            zs[j] = 0.0
            ps[j] = 1.0 if alternative == "two-sided" else 0.5


def _on_the_margin_many(p: np.ndarray, args, margin, alternative) -> np.ndarray:
    """:func:`_on_the_margin` over a block of studies (``args``: k1, n1, k2, n2 arrays): P is
    1/2 one-sided (1 two-sided) where the difference is exactly the margin as written, so the
    block gives the very P one study's score gives. Only differences within rounding of the
    margin are checked in fractions."""
    from fractions import Fraction

    if not margin or isinstance(margin, bool):
        return p
    k1, n1, k2, n2 = (np.asarray(a) for a in args)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = np.abs(k1 / n1 - k2 / n2 - float(margin)) < 1e-9
    near &= (n1 > 0) & (n2 > 0) & ~np.isnan(p)
    if not near.any():
        return p
    m = Fraction(repr(float(margin)))
    for j in np.flatnonzero(near).tolist():
        if Fraction(int(k1[j]), int(n1[j])) - Fraction(int(k2[j]), int(n2[j])) == m:
            p[j] = 1.0 if alternative == "two-sided" else 0.5
    return p


def _is_counted(item, metrics: Mapping[str, RowMetric]) -> bool:
    """Whether an estimate or contrast is a proportion figure of counts with a closed-form
    method (the vectorized path); every other one is computed from its rows."""
    m = metrics.get(item.metric)
    return (
        m is not None
        and m.is_proportion
        and getattr(item, "pair_by", None) is None
        and item.interval not in ("bootstrap", "none")
    )


class _Split:
    """The counted estimates and contrasts of a rules module (the vectorized plan's input)."""

    def __init__(self, rules, metrics: Mapping[str, RowMetric]):
        self.ESTIMATES = tuple(e for e in rules.ESTIMATES if _is_counted(e, metrics))
        self.CONTRASTS = tuple(c for c in rules.CONTRASTS if _is_counted(c, metrics))
        self.FAMILIES = rules.FAMILIES
        self.complete = len(self.ESTIMATES) == len(rules.ESTIMATES) and len(self.CONTRASTS) == len(
            rules.CONTRASTS
        )


def registered_results(
    rules,
    metrics: Mapping[str, RowMetric],
    sel: Selections,
    columns: Mapping[str, object] | None = None,
) -> Results:
    """Every registered estimate and contrast, with family-adjusted P values.

    Proportions with closed-form methods are computed in a few array operations over every
    estimate and contrast at once (:func:`_count_results`); every other figure (means,
    geometric means, ECE, AUROC, paired contrasts, bootstrap intervals) is computed from the
    counted rows of its selections (:mod:`prereg.decide.samples`). Then each registered
    analysis runs its method of the catalogue (:mod:`prereg.decide.analyses`), its Result kept
    in ``Results.analyses``; families adjust contrasts' and analyses' P values together.
    ``columns`` are the rows' fields, needed by paired contrasts (their ``pair_by`` field) and
    by analyses that read fields.
    """
    split = sel._splits.get(id(rules))
    if split is None or split[0] is not rules:
        split = sel._splits[id(rules)] = (rules, _Split(rules, metrics))
    part = split[1]
    if part.complete:
        counted = _count_results(rules, metrics, sel)
        results, counts = counted.results, counted.counts
    else:
        counted = _count_results(part, metrics, sel)
        from prereg.decide.samples import row_results

        results = dict(counted.results)
        counts = dict(counted.counts)
        done = set(results)
        for item in (*rules.ESTIMATES, *rules.CONTRASTS):
            if item.id in done:
                continue
            r, cnt = row_results(item, metrics, sel, columns)
            results[item.id] = r
            if cnt is not None:
                counts[item.id] = cnt
        results = {
            i.id: results[i.id] for i in (*rules.ESTIMATES, *rules.CONTRASTS) if i.id in results
        }
    analyses = getattr(rules, "ANALYSES", ())
    reports: dict[str, object] = {}
    if analyses:
        from prereg.decide.analyses import analysis_results

        for aid, (r, result) in analysis_results(rules, metrics, sel, columns, results).items():
            results[aid] = r
            reports[aid] = result
    tested = (*rules.CONTRASTS, *analyses)
    return Results(adjust_families(results, tested, rules.FAMILIES), counts, reports)


def cell_figures(metrics: Mapping[str, RowMetric], table: RowTable) -> list[dict[str, float]]:
    """Per registered cell: each metric's figure (NaN when its denominator is 0)."""
    nc = len(table.cells)
    out: list[dict[str, float]] = [{} for _ in range(nc)]
    for mid, m in metrics.items():
        if m.kind in ("ece", "auroc", "geometric_mean"):
            for ci in range(nc):
                out[ci][mid] = m.figure(table.cell == ci)
            continue
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
    else:
        # Fixed-sequence testing, in registration order: a hypothesis whose predecessors are
        # not all supported is not tested.
        for h, before in getattr(rules, "SEQUENCE", {}).items():
            if any(verdicts.get(b) != SUPPORTED for b in before):
                verdicts[h] = NOT_TESTED
    return Decision(failures, verdicts)


# -- many simulated studies at once -------------------------------------------------------------
#
# ``diagnose`` scores blocks of simulated studies over one table.  These are the functions above
# over a leading axis of studies: a metric's ``num`` and ``den`` are (studies, rows) arrays, and
# every estimate and contrast is a :class:`prereg.rules.ResultArrays`.  Each gives, study by
# study, the figures, gates and verdicts its one-study counterpart gives (the tests compare
# them): sums of whole counts are exact in any order, the methods are called once per block on
# the block's counts (element by element the same arithmetic), and the rules are decided by
# :func:`prereg.rules.evaluate_many`.


def _bincount_columns(index: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """``np.bincount(index, weights=w, minlength=length)`` of every row ``w`` of ``weights``
    (studies, len(index)), adding in the same order."""
    weights = np.asarray(weights, dtype=np.float64)
    out = np.zeros((weights.shape[0], length))
    index = np.asarray(index, dtype=np.intp)
    if index.size == 0 or np.bincount(index, minlength=length).max() <= 1:  # each at most once
        out[:, index] += weights
        return out
    for j, target in enumerate(index.tolist()):
        out[:, target] += weights[:, j]
    return out


def _selected_sums(values: np.ndarray, stacked: np.ndarray) -> np.ndarray:
    """``values @ stacked.T`` for whole-number ``values`` (studies, groups) and a 0/1 matrix of
    selections (selections, groups): each selection's groups added (exact in any order, as
    the sums are whole numbers below 2**53), without BLAS, whose threads cost more to wake on a
    busy machine than these few additions."""
    if not np.all((stacked == 0) | (stacked == 1)):
        return values @ stacked.T
    rows, cols = np.nonzero(stacked)
    out = np.zeros((values.shape[0], stacked.shape[0]))
    if cols.size == 0:
        return out
    per = np.bincount(rows, minlength=stacked.shape[0])
    starts = np.concatenate(([0], np.cumsum(per)[:-1]))
    taken = per > 0
    out[:, taken] = np.add.reduceat(values[:, cols], starts[taken], axis=1)
    return out


def _whole(x: np.ndarray) -> bool:
    """Whether every sum of ``x``'s entries along a row is an exact integer in float64."""
    return bool(
        np.all(np.isfinite(x))
        and np.array_equal(x, np.rint(x))
        and (x.size == 0 or float(np.abs(x).sum(axis=1).max()) < 2.0**53)
    )


def _count_results_many(
    rules, metrics: Mapping[str, RowMetric], sel: Selections, size: int
) -> dict | None:
    """:func:`_count_results` of ``size`` studies at once (None when a metric's sums are not
    whole numbers, which only the one-study path sums in its own order)."""
    from prereg.rules import ResultArrays
    from prereg.stats.methods import MethodError, method

    def get(kind: str, name: str, what: str):
        try:
            return method(kind, name)
        except MethodError as exc:
            raise UserError(f"rules: {what}: {exc}") from None

    plan = sel.plan(rules)
    sums: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

    def group_sums(m: RowMetric):
        if m.id not in sums:
            num = _bincount_columns(sel.group, m.num, sel.n_groups)
            den = _bincount_columns(sel.group, m.den, sel.n_groups)
            sums[m.id] = (num, den) if _whole(num) and _whole(den) else None
        return sums[m.id]

    def counts(items: _Sums):
        k = np.zeros((size, items.size), dtype=np.int64)
        n = np.zeros((size, items.size), dtype=np.int64)
        for name, js, what, stacked in items.by_metric:
            got = group_sums(_metric(metrics, name, what, proportion=True))
            if got is None:
                return None
            k[:, js] = np.rint(_selected_sums(got[0], stacked))
            n[:, js] = np.rint(_selected_sums(got[1], stacked))
        return k, n

    nan = np.full(size, np.nan)
    results: dict = {}
    es = list(rules.ESTIMATES)
    if es:
        got = counts(plan.estimates)
        if got is None:
            return None
        ek, en = got
        for e in es:
            get("proportion-interval", e.interval, f"estimate {e.id}")
        elo = np.full((size, len(es)), np.nan)
        ehi = np.full((size, len(es)), np.nan)
        for (interval, level), js in plan.estimate_groups:
            fn = get("proportion-interval", interval, f"estimate {es[js[0]].id}").fn
            lo, hi = fn(ek[:, js].ravel(), en[:, js].ravel(), level=level)
            elo[:, js] = np.reshape(lo, (size, js.size))
            ehi[:, js] = np.reshape(hi, (size, js.size))
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(en != 0, ek / np.where(en != 0, en, 1), np.nan)
        for j, e in enumerate(es):
            results[e.id] = ResultArrays(
                e.id,
                est[:, j].copy(),
                elo[:, j].copy(),
                ehi[:, j].copy(),
                p=nan,
                adjusted_p=nan,
                extra={"k": ek[:, j].copy(), "n": en[:, j].copy()},
            )
    cs = list(rules.CONTRASTS)
    if cs:
        got = counts(plan.sides)
        if got is None:
            return None
        sk, sn = got
        arms = (sk[:, 0::2], sn[:, 0::2], sk[:, 1::2], sn[:, 1::2])
        d = np.full((size, len(cs)), np.nan)
        lo = np.full((size, len(cs)), np.nan)
        hi = np.full((size, len(cs)), np.nan)
        ps = np.full((size, len(cs)), np.nan)
        for (interval, level, test, alt, margin), idx in plan.contrast_groups:
            what = f"contrast {cs[idx[0]].id}"
            args = [a[:, idx].ravel() for a in arms]
            shape = (size, idx.size)
            dj, loj, hij = get("difference-interval", interval, what).fn(*args, level=level)
            d[:, idx], lo[:, idx], hi[:, idx] = (np.reshape(v, shape) for v in (dj, loj, hij))
            if test != "none":
                tm = get("two-proportion-test", test, what)
                try:
                    _, p = tm.fn(*args, alternative=alt, margin=margin)
                except MethodError as exc:
                    raise UserError(f"rules: {what}: {exc}") from None
                p = _on_the_margin_many(np.array(p, dtype=float), args, margin, alt)
                ps[:, idx] = np.reshape(p, shape)
        for j, c in enumerate(cs):
            results[c.id] = ResultArrays(
                c.id,
                d[:, j].copy(),
                lo[:, j].copy(),
                hi[:, j].copy(),
                p=ps[:, j].copy() if c.test != "none" else nan,
                adjusted_p=nan,
                extra={
                    x: a[:, j].copy() for x, a in zip(("k1", "n1", "k2", "n2"), arms, strict=True)
                },
            )
    return results


def registered_results_many(
    rules, metrics: Mapping[str, RowMetric], sel: Selections, size: int
) -> dict | None:
    """:func:`registered_results` of ``size`` studies at once, each metric's ``num`` and
    ``den`` a (studies, rows) array: ``{id: ResultArrays}`` with family-adjusted P values, or
    None when a figure needs the one-study path (one computed from rows, or sums of numbers
    that are not whole)."""
    from prereg.rules import adjust_families_many

    split = sel._splits.get(id(rules))
    if split is None or split[0] is not rules:
        split = sel._splits[id(rules)] = (rules, _Split(rules, metrics))
    if not split[1].complete or getattr(rules, "ANALYSES", ()):
        return None
    counted = _count_results_many(rules, metrics, sel, size)
    if counted is None:
        return None
    return adjust_families_many(counted, rules.CONTRASTS, rules.FAMILIES)


@dataclass(frozen=True)
class Decisions:
    """:class:`Decision` of many studies: which gates failed (studies, gates) and each
    hypothesis' verdict per study; ``unclear`` marks the studies a gate's float figure leaves
    within rounding of its threshold (their gates are decided again, one study at a time, as
    score decides them: :func:`prereg.decide.certify.gate_figures`)."""

    failed: np.ndarray
    verdicts: dict[str, list]
    unclear: np.ndarray | None = None


#: Relative band about a gate's threshold within which a figure from floats (a mean, an ECE,
#: an AUROC, a geometric mean) is decided again exactly: the band is this times the figure,
#: the threshold and the scale of the numbers it is made of (a sum of decimals exactly on the
#: threshold lands a few units in the last place of that scale away from it).
GATE_TOL = 1e-9


def _gate_near(fig: np.ndarray, value, scale: np.ndarray | float) -> np.ndarray:
    """Where a float figure (studies, cells) is within :data:`GATE_TOL` of the threshold."""
    from prereg.stats.compare import threshold

    t = float(threshold(value))
    with np.errstate(invalid="ignore"):
        band = GATE_TOL * (np.abs(fig) + abs(t) + scale)
        return np.abs(fig - t) <= band


def _counts_meet(num: np.ndarray, den: np.ndarray, op: str, value) -> np.ndarray:
    """``num / den op value`` exactly, element by element, for integer counts (as floats
    below 2**53); a zero denominator is a missing figure, which fails."""
    from prereg.rules import _OPS
    from prereg.stats.compare import threshold

    t = threshold(value)
    p, q = t.numerator, t.denominator
    num_i = num.astype(np.int64)
    den_i = den.astype(np.int64)
    if max(int(np.abs(num_i).max(initial=0)), int(den_i.max(initial=0))) * max(abs(p), q) >= 2**62:
        num_i, den_i = num_i.astype(object), den_i.astype(object)
    return (den_i > 0) & _OPS[op](num_i * q, den_i * p)


def decide_all_many(
    rules,
    results: Mapping,
    table: RowTable,
    metrics: Mapping[str, RowMetric],
    size: int,
    cell_figure=None,
) -> Decisions | None:
    """:func:`decide_all` of ``size`` studies at once, the cells' figures computed from the
    metrics as :func:`cell_figures` computes them.  A proportion's gate is decided exactly on
    its counts; any other figure in floats, and a study where it is within rounding of the
    threshold (:func:`_gate_near`) is marked ``unclear``, for the caller to decide alone.
    ``cell_figure(metric, rows)`` gives (figure, scale), each (studies,), of a figure not
    computed from sums (ECE, AUROC, a geometric mean) over a cell's rows; None when a gate
    reads such a figure without it, or the rules do not expose their decisions (``RULES``)."""
    from prereg.rules import decide_many, meets_many, selection_matches

    decisions = getattr(rules, "RULES", None)
    if decisions is None or any(h not in decisions for h in rules.HYPOTHESES):
        return None
    gates = list(rules.GATES)
    nc = len(table.cells)
    attrs = [cell_attributes(c) for c in table.cells]
    failed = np.zeros((size, len(gates)), dtype=bool)
    unclear = np.zeros(size, dtype=bool)
    figures: dict[str, object] = {}
    for j, gate in enumerate(gates):
        cells = [ci for ci, a in enumerate(attrs) if selection_matches(gate.where, a)]
        if not cells:
            continue
        m = metrics.get(gate.metric)
        if m is None:
            failed[:, j] = True
            continue
        fig = figures.get(gate.metric)
        if fig is None:
            fig = figures[gate.metric] = _gate_figures(m, table, nc, size, cell_figure)
            if fig is None:
                return None
        if fig[0] == "counts":  # integer counts: decided exactly, as decide_all does
            _, num, den = fig
            held = _counts_meet(num[:, cells], den[:, cells], gate.op, gate.value)
        else:
            _, x, scale = fig
            with np.errstate(invalid="ignore"):
                held = meets_many(x[:, cells], gate.op, gate.value)
            unclear |= np.any(_gate_near(x[:, cells], gate.value, scale[:, cells]), axis=1)
        failed[:, j] = ~np.all(held, axis=1)
    verdicts: dict[str, list] = {}
    for h in rules.HYPOTHESES:
        rule, registered = decisions[h]
        verdicts[h] = decide_many(rule, registered, results, size)
    gated = failed.any(axis=1)
    if gated.any():
        first = failed.argmax(axis=1)
        for i in np.flatnonzero(gated).tolist():
            otherwise = gates[int(first[i])].otherwise
            for v in verdicts.values():
                if v[i] != REPORTED_ONLY:
                    v[i] = otherwise
    sequence = getattr(rules, "SEQUENCE", {})
    if sequence:
        for i in np.flatnonzero(~gated).tolist():
            for h, before in sequence.items():
                if any(verdicts[b][i] != SUPPORTED if b in verdicts else True for b in before):
                    verdicts.setdefault(h, [None] * size)[i] = NOT_TESTED
    return Decisions(failed, verdicts, unclear)


def _gate_figures(m: RowMetric, table: RowTable, nc: int, size: int, cell_figure):
    """("counts", num, den) of a proportion's cells, or ("floats", figure, scale), each
    (studies, cells): the figure as :func:`cell_figures` computes it and the scale of the
    numbers it is made of (:func:`_gate_near`); None when it cannot be computed here."""
    if m.kind in ("ece", "auroc", "geometric_mean"):
        if cell_figure is None:
            return None
        x = np.full((size, nc), np.nan)
        scale = np.zeros((size, nc))
        for ci in range(nc):
            got = cell_figure(m, table.cell == ci)
            if got is None:
                return None
            x[:, ci], scale[:, ci] = got
        return "floats", x, scale
    num = _bincount_columns(table.cell, m.num, nc)
    den = _bincount_columns(table.cell, m.den, nc)
    if m.is_proportion:
        return "counts", np.rint(num), np.rint(den)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    num_rows = np.asarray(m.num, dtype=np.float64)
    if num_rows.ndim == 2:  # rows of studies: the largest number (or log) a cell's figure adds
        big = np.where(np.asarray(m.den) > 0, np.abs(np.nan_to_num(num_rows)), 0.0)
        scale = np.zeros((size, nc))
        for ci in range(nc):
            scale[:, ci] = big[:, table.cell == ci].max(axis=1, initial=0.0)
    else:  # per-group sums (the counts path): the figure's own scale
        scale = np.abs(np.nan_to_num(x))
    return "floats", x, scale
