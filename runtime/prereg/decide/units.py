"""Units of analysis built from rows: the study's ``units`` levels, in order.

Rows whose ``by`` fields are equal form one unit (a problem from its samples, a pair from its
two arms, an item from its raters' labels, a repository from its pairs). Each unit's figures
count its counted rows meeting conditions (``rows``) or the included units of an earlier level
with a counted row in it (``units``). A unit is included when it has a counted row and meets
every ``include`` rule; the rows of an excluded unit are not counted by any later level nor by
any metric but coverage. Levels apply in order, each reading the rows the earlier ones kept.

Everything is integer counts over numpy arrays: a unit's inclusion is decided exactly.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prereg.decide.fields import _column, all_of
from prereg.errors import UserError

_OPS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
_SIGNS = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥"}
_FAILS = {"lt": "≥", "le": ">", "gt": "≤", "ge": "<"}


@dataclass(frozen=True)
class UnitLevel:
    """One unit level over the rows of a table."""

    id: str
    title: str
    by: tuple[str, ...]
    code: np.ndarray  # unit index per row; -1 for a row in no unit (a null by field)
    keys: tuple[tuple, ...]  # each unit's by values
    figures: Mapping[str, np.ndarray]  # figure id -> int count per unit
    included: np.ndarray  # bool per unit
    reasons: tuple[tuple[str, ...], ...]  # per unit: the rules it failed, in words
    registered: int | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def unit_words(self, u: int) -> dict[str, Any]:
        return dict(zip(self.by, self.keys[u], strict=True))


@dataclass(frozen=True)
class Units:
    levels: tuple[UnitLevel, ...]
    kept: np.ndarray  # bool per row: every unit of the row is included (rows in no unit: kept)

    def level(self, uid: str) -> UnitLevel:
        for lv in self.levels:
            if lv.id == uid:
                return lv
        raise UserError(f"unknown unit {uid!r}")  # compile refuses it first


def _key_of(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)  # a number column holds 3 as 3.0: the unit is named 3
    if isinstance(v, (list, dict)):  # a derived field's case may give any JSON value
        import json

        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return v


def _codes(col) -> tuple[np.ndarray, list[Any]] | None:
    """(code per row, -1 where null; the distinct values) of one column, by sorting; None when
    its values cannot be sorted together (a mixed column)."""
    ok = ~col.null
    if col.kind not in ("number", "boolean", "string"):
        return None
    try:
        distinct, inverse = np.unique(col.values[ok], return_inverse=True)
    except TypeError:
        return None
    code = np.full(col.null.size, -1, dtype=np.int64)
    code[ok] = inverse.reshape(-1)
    return code, distinct.tolist()


def _unit_codes(
    by: Sequence[str], columns, n: int, what: str
) -> tuple[np.ndarray, list[tuple], np.ndarray]:
    """(unit index per row or -1, each unit's by values, which rows have a null by field);
    units are numbered in the order of their first row."""
    cols = [_column(columns, f, f"{what}: unknown field") for f in by]
    null = np.zeros(n, dtype=bool)
    for c in cols:
        null |= c.null
    coded = [_codes(c) for c in cols]
    if all(c is not None for c in coded):
        key = np.zeros(n, dtype=np.int64)
        for code, distinct in coded:
            key = key * max(len(distinct), 1) + np.maximum(code, 0)
        rows = np.flatnonzero(~null)
        _, first, inverse = np.unique(key[rows], return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # units in the order of their first row
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        code = np.full(n, -1, dtype=np.int64)
        code[rows] = rank[inverse.reshape(-1)]
        firsts = rows[first[order]]
        keys = [tuple(_key_of(distinct[c[i]]) for c, distinct in coded) for i in firsts.tolist()]
        return code, keys, null
    values = [c.values.tolist() for c in cols]
    seen: dict[tuple, int] = {}
    keys = []
    code = np.full(n, -1, dtype=np.int64)
    for i in np.flatnonzero(~null).tolist():
        k = tuple(_key_of(v[i]) for v in values)
        u = seen.get(k)
        if u is None:
            u = seen[k] = len(keys)
            keys.append(k)
        code[i] = u
    return code, keys, null


def _pairs(a: np.ndarray, b: np.ndarray, size_b: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (a, b) pairs of two integer codes (b below ``size_b``), as two arrays."""
    key = np.unique(a.astype(np.int64) * max(size_b, 1) + b)
    return key // max(size_b, 1), key % max(size_b, 1)


def build(
    spec: Sequence[Mapping[str, Any]] | None,
    columns,
    observed: np.ndarray,
    *,
    row_words=None,
) -> Units | None:
    """The unit levels of ``spec`` (the study's ``units``) over rows with ``columns``;
    ``observed`` says which rows have a counted record. ``row_words(i)`` names row ``i`` in a
    message (default: its position). None when the study registers no units."""
    if not spec:
        return None
    observed = np.asarray(observed, dtype=bool)
    n = observed.size
    kept = observed.copy()
    levels: list[UnitLevel] = []
    words = row_words or (lambda i: f"row {i + 1}")
    for u in spec:
        what = f"unit {u['id']}"
        code, keys, null = _unit_codes(u["by"], columns, n, what)
        bad = np.flatnonzero(null & kept)
        if bad.size:
            shown = [
                f"{words(int(i))}: "
                + ", ".join(f for f in u["by"] if _column(columns, f, what).null[i])
                + f" is null, and it names the {u['id']} the row belongs to"
                for i in bad[:20].tolist()
            ]
            if bad.size > 20:
                shown.append(f"… and {bad.size - 20} more")
            raise UserError(
                f"{what}: {bad.size} counted row(s) belong to no {u['id']}", problems=shown
            )
        n_units = len(keys)
        counted = kept & (code >= 0)
        figures: dict[str, np.ndarray] = {}
        for f in u.get("figures") or ():
            if f.get("units"):
                lower = next(lv for lv in levels if lv.id == f["units"])
                ok = counted & (lower.code >= 0)
                ok &= lower.included[np.maximum(lower.code, 0)]
                mine, _ = _pairs(code[ok], lower.code[ok], len(lower))
                figures[f["id"]] = np.bincount(mine, minlength=n_units).astype(np.int64)
            else:
                hit = counted & all_of(f.get("rows"), columns, n)
                figures[f["id"]] = np.bincount(code[hit], minlength=n_units).astype(np.int64)
        has_row = np.bincount(code[counted], minlength=n_units) > 0
        included = has_row.copy()
        reasons: list[list[str]] = [[] if h else ["no counted row"] for h in has_row.tolist()]
        for rule in u.get("include") or ():
            fig = figures[rule["figure"]]
            op, value = rule["op"], int(rule["value"])
            ok = _OPS[op](fig, value)
            for j in np.flatnonzero(~ok & has_row).tolist():
                why = f"{rule['figure']} {int(fig[j])} {_FAILS[op]} {value}"
                if rule.get("reason"):
                    why += f" ({rule['reason']})"
                reasons[j].append(why)
            included &= ok
        lv = UnitLevel(
            id=str(u["id"]),
            title=str(u.get("title") or u["id"]),
            by=tuple(u["by"]),
            code=code,
            keys=tuple(keys),
            figures=figures,
            included=included,
            reasons=tuple(tuple(r) for r in reasons),
            registered=None if u.get("registered") is None else int(u["registered"]),
        )
        levels.append(lv)
        kept &= (code < 0) | included[np.maximum(code, 0)]
    return Units(tuple(levels), kept | ~observed)


def rule_words(rule: Mapping[str, Any]) -> str:
    """An inclusion rule as PREREG.md and SCORE.md show it: ``valid ≥ 10``."""
    return f"{rule['figure']} {_SIGNS[rule['op']]} {rule['value']}"


def cell_counts(level: UnitLevel, cell: np.ndarray, n_cells: int) -> list[tuple[int, int]]:
    """(units with a row in the cell, included ones) per cell; a unit with rows in two cells
    is a unit of each."""
    ok = level.code >= 0
    cells, units = _pairs(np.asarray(cell)[ok], level.code[ok], len(level))
    found = np.bincount(cells, minlength=n_cells)
    inc = np.bincount(cells[level.included[units]], minlength=n_cells)
    return list(zip(found.tolist(), inc.tolist(), strict=True))


def check_registered(level: UnitLevel, cells: Sequence[Mapping[str, Any]], cell, source: str):
    """Refuse a cell with more units than the level registers."""
    if level.registered is None:
        return
    over = [
        f"cell {c['id']} has {found} units of {level.id}, the study registers {level.registered}"
        for c, (found, _) in zip(cells, cell_counts(level, cell, len(cells)), strict=True)
        if found > level.registered
    ]
    if over:
        raise UserError(f"{source}: more units than registered", problems=over)


def share_metric(level: UnitLevel, cell: np.ndarray, n_cells: int) -> tuple[np.ndarray, ...]:
    """(numerator, denominator) per row of a units metric: the first row of each unit in each
    cell carries 1 (included: 1 over 1), so a cell's sums are its included units over its
    units; a registered count adds the units never seen to the denominator of the cell's first
    row."""
    n = cell.size
    num = np.zeros(n)
    den = np.zeros(n)
    ok = np.flatnonzero(level.code >= 0)
    if ok.size:
        pair = cell[ok].astype(np.int64) * max(len(level), 1) + level.code[ok]
        _, first = np.unique(pair, return_index=True)
        anchor = ok[first]
        den[anchor] = 1.0
        num[anchor] = level.included[level.code[anchor]].astype(float)
    if level.registered is not None:
        found = cell_counts(level, cell, n_cells)
        for ci, (k, _) in enumerate(found):
            rows = np.flatnonzero(cell == ci)
            if rows.size and level.registered > k:
                den[rows[0]] += level.registered - k
    return num, den


def score_rows(units: Units | None, cells: Sequence[Mapping[str, Any]], cell) -> list[dict]:
    """SCORE.json's ``units``: per level its counts, per cell and the excluded units with
    their figures and the rules they failed."""
    if units is None:
        return []
    out = []
    for lv in units.levels:
        per_cell = cell_counts(lv, cell, len(cells))
        excluded = np.flatnonzero(~lv.included).tolist()
        out.append(
            {
                "id": lv.id,
                "by": list(lv.by),
                "units": len(lv),
                "included": int(lv.included.sum()),
                "excluded": len(excluded),
                **({"registeredPerCell": lv.registered} if lv.registered is not None else {}),
                "cells": [
                    {
                        "cell": c["id"],
                        "units": found,
                        "included": inc,
                        **({"registered": lv.registered} if lv.registered is not None else {}),
                    }
                    for c, (found, inc) in zip(cells, per_cell, strict=True)
                ],
                "excludedUnits": [
                    {
                        "unit": lv.unit_words(u),
                        "figures": {k: int(v[u]) for k, v in lv.figures.items()},
                        "reasons": list(lv.reasons[u]),
                    }
                    for u in excluded
                ],
            }
        )
    return out
