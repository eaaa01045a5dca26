"""Field conditions and derived fields, evaluated over columns of rows.

A column is a sequence of JSON values, one per row (``None`` when the row has no value: an
unobserved row, a null field or a missing one). A condition gives a boolean array; a null or
missing value meets only ``is_null`` and ``ne`` (and is never less or greater than anything).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prereg.errors import UserError

Columns = Mapping[str, Sequence[Any]]

_ORDER_OPS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def _numbers(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(float array with NaN for non-numbers, mask of numeric entries)."""
    out = np.full(len(values), np.nan)
    ok = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = float(v)
            ok[i] = True
    return out, ok


def _same(a: Any, b: Any) -> bool:
    """JSON equality: true == 1 is false here (a boolean is not a number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def condition_mask(cond: Mapping[str, Any], columns: Columns, n: int) -> np.ndarray:
    """Boolean array: which rows meet one field condition."""
    name = cond["field"]
    if name not in columns:
        raise UserError(f"condition on unknown field {name!r}")
    col = columns[name]
    op = cond["op"]
    if op == "is_null":
        return np.array([v is None for v in col], dtype=bool)
    if op == "not_null":
        return np.array([v is not None for v in col], dtype=bool)
    if op == "in":
        allowed = list(cond.get("values") or [])
        return np.array(
            [v is not None and any(_same(v, a) for a in allowed) for v in col], dtype=bool
        )
    other = cond.get("other")
    if other is not None:
        if other not in columns:
            raise UserError(f"condition compares with unknown field {other!r}")
        rhs: Sequence[Any] = columns[other]
    else:
        rhs = [cond.get("value")] * n
    if op in ("eq", "ne"):
        eq = np.array(
            [
                a is not None and b is not None and _same(a, b)
                for a, b in zip(col, rhs, strict=True)
            ],
            dtype=bool,
        )
        return eq if op == "eq" else ~eq
    x, xok = _numbers(col)
    y, yok = _numbers(rhs)
    with np.errstate(invalid="ignore"):
        return _ORDER_OPS[op](x, y) & xok & yok


def all_of(conds: Sequence[Mapping[str, Any]] | None, columns: Columns, n: int) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    for c in conds or ():
        mask &= condition_mask(c, columns, n)
    return mask


def derive(derived: Sequence[Mapping[str, Any]], columns: Columns, n: int, observed: np.ndarray):
    """Add each derived field (in registration order) to a copy of ``columns``.

    Derived values exist for observed rows only (``None`` elsewhere).
    """
    out = dict(columns)
    for d in derived:
        values: list[Any] = [None] * n
        if d.get("test") is not None:
            mask = all_of(d["test"], out, n)
            for i in np.flatnonzero(observed):
                values[i] = bool(mask[i])
        else:
            left = observed.copy()
            for case in d.get("cases") or ():
                hit = left & all_of(case.get("when"), out, n)
                for i in np.flatnonzero(hit):
                    values[i] = case["value"]
                left &= ~hit
        out[d["id"]] = values
    return out
