"""Field conditions and derived fields, evaluated over columns of rows.

Columns are :class:`prereg.decide.columns.Column` objects (lists of JSON values and numpy
arrays are turned into columns on the way in). A condition gives a boolean array; a null or
missing value meets only ``is_null``, ``ne``
and ``not_in`` (and is never less or greater than anything).
Values compare as JSON: ``true`` equals neither ``1`` nor ``"true"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prereg.decide.columns import Column, as_column, json_kind
from prereg.errors import UserError

Columns = Mapping[str, Any]  # name -> Column (or anything as_column accepts)

_ORDER_OPS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def _same(a: Any, b: Any) -> bool:
    """JSON equality: true == 1 is false here (a boolean is not a number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _column(columns: Columns, name: str, what: str) -> Column:
    if name not in columns:
        raise UserError(f"{what} {name!r}")
    return as_column(columns[name])


def _eq_value(col: Column, value: Any) -> np.ndarray:
    n = len(col)
    if value is None:
        return np.zeros(n, dtype=bool)
    if col.kind == "mixed":
        vals = col.values.tolist()
        return np.fromiter(
            (not col.null[i] and _same(vals[i], value) for i in range(n)), bool, count=n
        )
    if col.kind != json_kind(value):
        return np.zeros(n, dtype=bool)
    return np.asarray(col.values == value, dtype=bool) & ~col.null


def _eq_other(a: Column, b: Column) -> np.ndarray:
    n = len(a)
    both = ~a.null & ~b.null
    if "mixed" in (a.kind, b.kind):
        av, bv = a.values.tolist(), b.values.tolist()  # Python values: np.bool_ is no bool
        return np.fromiter((both[i] and _same(av[i], bv[i]) for i in range(n)), bool, count=n)
    if a.kind != b.kind:
        return np.zeros(n, dtype=bool)
    return np.asarray(a.values == b.values, dtype=bool) & both


def _as_numbers(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """(float array, mask of numeric entries)."""
    if col.kind == "number":
        return col.values, ~col.null
    if col.kind != "mixed":
        return np.full(len(col), np.nan), np.zeros(len(col), dtype=bool)
    ok = np.fromiter(
        (not col.null[i] and _is_number(v) for i, v in enumerate(col.values)), bool, count=len(col)
    )
    x = np.full(len(col), np.nan)
    x[ok] = [float(v) for v in col.values[ok]]
    return x, ok


def condition_mask(cond: Mapping[str, Any], columns: Columns, n: int) -> np.ndarray:
    """Boolean array: which rows meet one field condition."""
    col = _column(columns, cond["field"], "condition on unknown field")
    op = cond["op"]
    if op == "is_null":
        return col.null.copy()
    if op == "not_null":
        return ~col.null
    if op in ("in", "not_in"):
        mask = np.zeros(n, dtype=bool)
        for v in cond.get("values") or []:
            mask |= _eq_value(col, v)
        return mask if op == "in" else ~mask
    other = cond.get("other")
    rhs = (
        None if other is None else _column(columns, other, "condition compares with unknown field")
    )
    if op in ("eq", "ne"):
        eq = _eq_value(col, cond.get("value")) if rhs is None else _eq_other(col, rhs)
        return eq if op == "eq" else ~eq
    x, xok = _as_numbers(col)
    if rhs is None:
        value = cond.get("value")
        if not _is_number(value):
            return np.zeros(n, dtype=bool)
        y, yok = float(value), True
    else:
        y, yok = _as_numbers(rhs)
    with np.errstate(invalid="ignore"):
        return _ORDER_OPS[op](x, y) & xok & yok


def all_of(conds: Sequence[Mapping[str, Any]] | None, columns: Columns, n: int) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    for c in conds or ():
        mask &= condition_mask(c, columns, n)
    return mask


def _cases_column(hits: list[tuple[np.ndarray, Any]], n: int) -> Column:
    """The column holding each case's value where its mask holds (null elsewhere)."""
    assigned = np.zeros(n, dtype=bool)
    for hit, value in hits:
        if value is not None:
            assigned |= hit
    kinds = {json_kind(v) for _, v in hits if v is not None}
    kind = kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "number")
    if kind == "number":
        values = np.full(n, np.nan)
    elif kind == "boolean":
        values = np.zeros(n, dtype=bool)
    else:
        values = np.full(n, None, dtype=object)
    for hit, value in hits:
        if value is None:
            continue
        if kind == "mixed" and not isinstance(value, (str, int, float, bool)):
            for i in np.flatnonzero(hit):
                values[i] = value
        else:
            values[hit] = value
    return Column(kind, values, ~assigned)


def derive(derived: Sequence[Mapping[str, Any]], columns: Columns, n: int, observed: np.ndarray):
    """Add each derived field (in registration order) to a copy of ``columns``.

    Derived values exist for observed rows only (null elsewhere).
    """
    out = dict(columns)
    observed = np.asarray(observed, dtype=bool)
    for d in derived:
        if d.get("test") is not None:
            out[d["id"]] = Column.booleans(all_of(d["test"], out, n) & observed, null=~observed)
            continue
        left = observed.copy()
        hits = []
        for case in d.get("cases") or ():
            hit = left & all_of(case.get("when"), out, n)
            hits.append((hit, case["value"]))
            left &= ~hit
        out[d["id"]] = _cases_column(hits, n)
    return out


def engine_columns(engine: str, offered: Mapping[str, Any]) -> dict[str, Column]:
    """The row fields ``engine`` registers (:func:`prereg.engines.row_fields`, the names a
    spec's conditions may use), from the columns it offers; one it does not offer is refused."""
    from prereg.engines import row_fields

    names = row_fields(engine)
    missing = [name for name in names if name not in offered]
    if missing:
        raise UserError(
            f"internal: the {engine} engine registers row field(s) {missing} but does not provide"
            " them"
        )
    return {name: as_column(offered[name]) for name in names}


def conditions_read(conds) -> set[str]:
    """The fields a list of field conditions reads (``field``, and ``other`` when a condition
    compares two fields)."""
    return {
        str(x)
        for c in conds or ()
        if isinstance(c, Mapping)
        for x in (c.get("field"), c.get("other"))
        if x
    }


def derived_reads(derived: Mapping[str, Any]) -> set[str]:
    """The fields a derived field reads: its ``test`` and its cases' ``when``."""
    used = conditions_read(derived.get("test"))
    for case in derived.get("cases") or ():
        if isinstance(case, Mapping):
            used |= conditions_read(case.get("when"))
    return used


def fields_read(derived_fields, conds, also=()) -> set[str]:
    """The fields conditions (and the fields ``also`` names) read, through the derived fields
    among them (``derived_fields``: the spec's list), and theirs in turn."""
    derived = {str(d.get("id")): d for d in derived_fields or () if isinstance(d, Mapping)}
    out: set[str] = set()
    todo = [*conditions_read(conds), *map(str, also)]
    while todo:
        f = todo.pop()
        if f in out:
            continue
        out.add(f)
        if f in derived:
            todo.extend(derived_reads(derived[f]))
    return out


def referenced_fields(config: Mapping[str, Any]) -> set[str]:
    """Every field the derived fields and the metrics' compute blocks name (the observation
    fields a scorer must read)."""
    conds: list[Mapping[str, Any]] = []
    names: set[str] = set()
    for d in config.get("derived_fields") or ():
        conds += list(d.get("test") or ())
        for case in d.get("cases") or ():
            conds += list(case.get("when") or ())
    for m in config.get("metrics") or ():
        compute = m.get("compute") or {}
        conds += [*(compute.get("where") or ()), *(compute.get("among") or ())]
        if compute.get("field"):
            names.add(compute["field"])
    names |= {c["field"] for c in conds} | {c["other"] for c in conds if c.get("other")}
    return names
