"""Validated records held as columns.

A record file of a million lines held as a million dicts costs hundreds of MiB and a Python
call per record wherever a field is read. :class:`RecordColumns` holds the same records as one
list of values per contract field (``None`` for a JSON null, :data:`ABSENT` where a record
leaves the field out), so code that reads a field reads one list (:func:`field_values`), and
code written for dicts still works: indexing, iterating and slicing give the records as dicts
(the present fields, in the contract's order), built on demand, which is what error messages
and rare paths need.

The readers build it (:func:`prereg.records.read_jsonl_columns` and
:func:`prereg.tabular.read_contract_columns`); engines and ``prereg.decide`` read fields with
:func:`field_values` and select records with :func:`subset`, which accept either shape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter, methodcaller
from typing import Any

import numpy as np


class _Absent:
    """The value of a field a record leaves out (never a JSON value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self):
        return "ABSENT"


ABSENT = _Absent()


class RecordColumns(Sequence):
    """Records as columns: ``columns[name][j]`` is record j's value of field ``name``.

    ``absent[name]`` counts the records that leave ``name`` out (only those fields hold
    :data:`ABSENT`); ``lines[j]``, when given, is record j's line in its file; ``digest``, when
    a reader sets it, is the SHA-256 and size of the bytes the records were read from."""

    __slots__ = ("names", "columns", "absent", "n", "lines", "cache", "digest", "positions")

    def __init__(
        self,
        names: Sequence[str],
        columns: Mapping[str, list],
        n: int,
        absent: Mapping[str, int] | None = None,
        lines: Sequence[int] | None = None,
    ):
        self.names = tuple(names)
        self.columns = dict(columns)
        self.n = int(n)
        self.absent = {k: int(v) for k, v in (absent or {}).items() if v}
        self.lines = lines
        self.cache: dict[Any, Any] = {}  # what readers build once from a column (by name)
        self.digest: tuple[str, int] | None = None  # (SHA-256 hex, bytes) of the file read
        #: {field: (index, positions)}: each record's ``index.get(value)`` of a field whose
        #: strings are shared (:meth:`share`), -1 where the index has no such value
        self.positions: dict[str, tuple[Mapping[Any, int], np.ndarray]] = {}

    @classmethod
    def from_dicts(cls, names: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> RecordColumns:
        """The columns of records given as dicts (fields outside ``names`` are dropped)."""
        columns = {}
        absent = {}
        for name in names:
            col = [r.get(name, ABSENT) for r in rows]
            columns[name] = col
            absent[name] = sum(1 for v in col if v is ABSENT) if col else 0
        return cls(names, columns, len(rows), absent)

    def __len__(self) -> int:
        return self.n

    def record(self, j: int) -> dict[str, Any]:
        """Record ``j`` as a dict of the fields it has."""
        out = {}
        for name in self.names:
            v = self.columns[name][j]
            if v is not ABSENT:
                out[name] = v
        return out

    def __getitem__(self, j):
        if isinstance(j, slice):
            return self.take(range(*j.indices(self.n)))
        if j < 0:
            j += self.n
        if not 0 <= j < self.n:
            raise IndexError(j)
        return self.record(j)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for j in range(self.n):
            yield self.record(j)

    def values(self, name: str, strict: bool = False) -> list[Any]:
        """Each record's value of ``name``, ``None`` where it is null or absent (``strict``:
        the field must be one of the contract's, as ``record[name]`` would demand)."""
        col = self.columns.get(name)
        if col is None:
            if strict and self.n:
                raise KeyError(name)
            return [None] * self.n
        if not self.absent.get(name):
            return col
        return [None if v is ABSENT else v for v in col]

    def has(self, name: str) -> np.ndarray:
        """Whether each record has field ``name`` (null counts as having it)."""
        col = self.columns.get(name)
        if col is None:
            return np.zeros(self.n, dtype=bool)
        if not self.absent.get(name):
            return np.ones(self.n, dtype=bool)
        return np.fromiter((v is not ABSENT for v in col), dtype=bool, count=self.n)

    def share(self, name: str, index: Mapping[Any, int], ids: Sequence[Any]) -> None:
        """Column ``name`` with its strings held once: see :func:`shared_strings`."""
        col = self.columns.get(name)
        if not col:
            return
        self.columns[name], at = shared_positions(col, index, ids)
        self.positions.pop(name, None)
        if at is not None:
            self.positions[name] = (index, at)
        for key in [k for k in self.cache if k == name or (type(k) is tuple and name in k)]:
            del self.cache[key]

    def __getstate__(self):
        return (self.names, self.columns, self.n, self.absent, self.lines)

    def __setstate__(self, state):
        names, columns, n, absent, lines = state
        self.names, self.columns, self.n, self.absent, self.lines = names, columns, n, absent, lines
        self.cache = {}
        self.digest = None
        self.positions = {}

    def take(self, index) -> RecordColumns:
        """The records at ``index`` (positions, in that order)."""
        idx = np.asarray(index, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n):
            raise IndexError("record index out of range")
        get = idx.tolist()
        columns = {}
        absent = {}
        for name, col in self.columns.items():
            sub = [col[j] for j in get] if get else []
            columns[name] = sub
            if self.absent.get(name):
                absent[name] = sum(1 for v in sub if v is ABSENT)
        lines = None if self.lines is None else [self.lines[j] for j in get]
        out = RecordColumns(self.names, columns, len(get), absent, lines)
        out.positions = {k: (index, at[idx]) for k, (index, at) in self.positions.items()}
        return out


def shared_strings(col: list, index: Mapping[Any, int], ids: Sequence[Any]) -> list:
    """``col`` with its strings held once: the column of :func:`shared_positions`."""
    return shared_positions(col, index, ids)[0]


def shared_positions(
    col: list, index: Mapping[Any, int], ids: Sequence[Any]
) -> tuple[list, np.ndarray | None]:
    """``col`` with each string that equals a string of ``ids`` replaced by that object
    (``index`` gives a value's position in ``ids``), so that strings the records repeat from
    another table are held once: an observation's row id names a manifest row, whose string
    the row table holds already (a million rows' ids are about 70 MiB). Only a ``str`` is
    replaced, and only by an equal ``str``: the column reads back the same values of the same
    kinds. A reader calls it on each block it decodes, so the copies are freed as it goes.

    Also each value's position, ``index.get(value)`` (-1 where it has none), as an array
    (None where a value cannot be a dict key): the attempt policy reads the rows from it
    instead of looking every id up again."""
    get = index.get
    try:
        pos = list(map(get, col))
    except TypeError:  # a value that cannot be a dict key: nothing to share
        return col, None
    if None not in pos:
        at = np.array(pos, dtype=np.int64).reshape(len(pos))
        # every value found: each equals its id (dict keys), so only the kinds are checked
        same = list(map(ids.__getitem__, pos))
        if set(map(type, col)) <= {str} and set(map(type, same)) <= {str}:
            return same, at
    else:
        at = np.fromiter((-1 if p is None else p for p in pos), np.int64, len(pos))
    shared = [
        w if p is not None and type(v) is str and type(w := ids[p]) is str and v == w else v
        for v, p in zip(col, pos, strict=True)
    ]
    return shared, at


def field_values(records: Sequence[Mapping[str, Any]], name: str, strict: bool = False) -> list:
    """Each record's value of ``name``: ``record[name]`` (``strict``: a record without it
    raises KeyError) or ``record.get(name)``, for dicts or :class:`RecordColumns`."""
    if isinstance(records, RecordColumns):
        return records.values(name, strict)
    if strict:
        return list(map(itemgetter(name), records))
    return list(map(methodcaller("get", name), records))


def subset(records: Sequence[Mapping[str, Any]], index) -> Sequence[Mapping[str, Any]]:
    """The records at positions ``index``, in the same shape as ``records``."""
    if isinstance(records, RecordColumns):
        return records.take(index)
    return [records[int(j)] for j in index]
