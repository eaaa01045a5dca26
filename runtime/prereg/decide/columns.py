"""Columns of rows: one typed numpy array per field, with a null mask.

A column holds one JSON value per row. Its ``kind`` is the JSON type its non-null values share
(``number``, ``boolean`` or ``string``; ``mixed`` otherwise), ``values`` is a float64, bool or
object array accordingly, and ``null`` marks the rows without a value (an unobserved row, a
null field or a missing one). Conditions over columns are numpy operations, so a study of any
size is decided in a few array passes; only ``mixed`` columns fall back to per-value Python.

Engines may hand numpy arrays directly: a float array is a number column whose NaN entries are
null, a bool array a boolean column without nulls (:func:`as_column`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

KINDS = ("number", "boolean", "string", "mixed")


_TYPE_KINDS = {bool: "boolean", int: "number", float: "number", str: "string"}

#: a boolean column's values as codes (:meth:`Column.of`)
_BOOLEAN_CODES = {False: 0, True: 1, None: 2}


def json_kind(value: Any) -> str:
    """The column kind of one non-null JSON value (a boolean is not a number)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "mixed"


@dataclass(frozen=True)
class Column:
    kind: str
    values: np.ndarray  # float64 (number), bool (boolean) or object (string, mixed)
    null: np.ndarray  # bool: the row has no value

    def __len__(self) -> int:
        return int(self.null.size)

    @classmethod
    def numbers(cls, x: Any, null: np.ndarray | None = None) -> Column:
        """A number column from floats; NaN is null (and so is ``null`` where given)."""
        x = np.asarray(x, dtype=np.float64)
        isnan = np.isnan(x)
        if null is not None:
            isnan = isnan | np.asarray(null, dtype=bool)
        return cls("number", x, isnan)

    @classmethod
    def booleans(cls, x: Any, null: np.ndarray | None = None) -> Column:
        x = np.asarray(x, dtype=bool)
        return cls("boolean", x, np.zeros(x.size, bool) if null is None else np.asarray(null, bool))

    @classmethod
    def strings(cls, x: Any, null: np.ndarray | None = None) -> Column:
        values = np.asarray(x, dtype=object)
        if null is None:
            null = np.array([v is None for v in values], dtype=bool)
        return cls("string", values, np.asarray(null, dtype=bool))

    @classmethod
    def of(cls, values: Sequence[Any]) -> Column:
        """The column of a list of JSON values (``None`` is null)."""
        values = list(values)
        n = len(values)
        types = set(map(type, values))
        kinds = {_TYPE_KINDS.get(t, "mixed") for t in types if t is not type(None)}
        kind = kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "number")
        if kind == "number":  # None becomes NaN (JSON has no NaN of its own)
            if type(None) in types:
                x = np.array(values, dtype=np.float64).reshape(n)
            else:  # ints and floats only: one pass, each converted as np.array converts it
                x = np.fromiter(values, dtype=np.float64, count=n)
            return cls("number", x, np.isnan(x))
        if kind == "boolean":  # only True, False and None: one code each, in one pass
            code = np.fromiter(map(_BOOLEAN_CODES.__getitem__, values), dtype=np.int8, count=n)
            return cls("boolean", code == 1, code == 2)
        obj = np.empty(n, dtype=object)
        if kind == "string":
            obj[:] = values
        else:
            for i, v in enumerate(values):  # element by element: a value may itself be a list
                obj[i] = v
        null = np.equal(obj, None) if type(None) in types else np.zeros(n, dtype=bool)
        return cls(kind, obj, np.asarray(null, dtype=bool))

    @classmethod
    def constant(cls, value: Any, mask: np.ndarray) -> Column:
        """``value`` where ``mask`` holds, null elsewhere."""
        mask = np.asarray(mask, dtype=bool)
        kind = json_kind(value)
        if kind == "number":
            return cls("number", np.where(mask, float(value), np.nan), ~mask)
        if kind == "boolean":
            return cls("boolean", np.where(mask, bool(value), False), ~mask)
        obj = np.full(mask.size, None, dtype=object)
        obj[mask] = value
        return cls(kind, obj, ~mask)

    def tolist(self) -> list[Any]:
        """The JSON values, ``None`` for null."""
        out = self.values.tolist()
        for i in np.flatnonzero(self.null):
            out[i] = None
        return out

    def take(self, index: np.ndarray, present: np.ndarray) -> Column:
        """Row i gets value ``index[i]`` of this column where ``present[i]``, else null."""
        safe = np.where(present, index, 0)
        if len(self) == 0:
            values = np.full(present.size, np.nan if self.kind == "number" else None)
            if self.kind == "boolean":
                values = np.zeros(present.size, bool)
            return Column(self.kind, values, np.ones(present.size, bool))
        return Column(self.kind, self.values[safe], self.null[safe] | ~present)


def as_column(values: Any) -> Column:
    """A column from a :class:`Column`, a float or bool numpy array, or a list of JSON values."""
    if isinstance(values, Column):
        return values
    if isinstance(values, np.ndarray):
        if values.dtype == bool:
            return Column.booleans(values)
        if np.issubdtype(values.dtype, np.floating) or np.issubdtype(values.dtype, np.integer):
            return Column.numbers(values)
        return Column.of(values.tolist())
    return Column.of(list(values))
