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
from operator import eq, itemgetter, methodcaller
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
        """Column ``name`` with its strings held once: see :func:`shared_positions`."""
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


class FileLine(str):
    """A record's place as ``file:line``, for records read from several files as one log
    (:func:`concatenated`): a message locates it by this text alone (:func:`located`)."""

    __slots__ = ()


def located(source: object, line: object) -> str:
    """Where a record is, for a message: ``source:line``, or the :class:`FileLine` alone when
    the line names its own file."""
    return str(line) if isinstance(line, FileLine) else f"{source}:{line}"


def concatenated(names: Sequence[str], parts: Sequence[tuple[str, RecordColumns]]) -> RecordColumns:
    """One :class:`RecordColumns` of several files' records, file after file (``parts``: each
    file and its records); each record's line becomes a :class:`FileLine` naming its file."""
    columns: dict[str, list] = {name: [] for name in names}
    absent = dict.fromkeys(names, 0)
    lines: list[FileLine] = []
    n = 0
    for path, records in parts:
        k = len(records)
        for name in names:
            col = records.columns.get(name)
            columns[name].extend([ABSENT] * k if col is None else col)
            absent[name] += k if col is None else records.absent.get(name, 0)
        numbers = records.lines if records.lines is not None else range(1, k + 1)
        lines.extend(FileLine(f"{path}:{line}") for line in numbers)
        n += k
    return RecordColumns(names, columns, n, absent, lines)


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
    try:
        if isinstance(index, HashIndex):  # found by hash, then compared as whole lists below
            at = index.positions(col, confirm=False)
        else:
            at = index_positions(index, col)
    except TypeError:  # a value that cannot be a dict key: nothing to share
        return col, None
    if (at >= 0).all():
        same = list(map(ids.__getitem__, at.tolist()))
        # every value equals its id (one comparison of the lists, in C) and is a string: a
        # JSON value equal to a string is that string, a HashIndex holds only strings
        if same == col and (isinstance(index, HashIndex) or set(map(type, col)) <= {str}):
            if isinstance(index, HashIndex) or set(map(type, same)) <= {str}:
                return same, at
    if isinstance(index, HashIndex):
        at = index.positions(col)  # confirmed value by value
    shared = [
        w if p >= 0 and type(v) is str and type(w := ids[p]) is str and v == w else v
        for v, p in zip(col, at.tolist(), strict=True)
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


class HashIndex(Mapping):
    """Each string's position in ``keys`` (distinct strings), as ``dict(zip(keys, range(n)))``
    reads, held in numpy arrays instead of a dict: an open-addressing table of key positions
    (linear probing, at most two thirds full) and the keys' hashes. A million rows' dict costs
    about 60 MiB and half a second to build; this costs about 16 MiB and a few array passes,
    and :meth:`positions` looks a whole column up in about two rounds of array gathers. Every
    lookup is confirmed by comparing the value with the key found (``==``, as a dict does), so
    it finds exactly what the dict finds. Built by :func:`row_index`, which keeps a dict where
    this cannot stand for one."""

    __slots__ = ("keys", "hashes", "slots", "mask")

    def __init__(self, keys: Sequence[str], hashes: np.ndarray, slots: np.ndarray):
        self.keys = keys
        self.hashes = hashes  # each key's hash, in key order
        self.slots = slots  # a key's position, or -1 for an empty slot
        self.mask = slots.size - 1

    @classmethod
    def build(cls, keys: Sequence[str], hashes: np.ndarray) -> HashIndex | None:
        """The table of ``keys`` with their ``hashes``; None when two keys share a hash (a
        repeated key, or a collision: the caller keeps a dict)."""
        n = hashes.size
        size = 1 << max(3, int(n + n // 2).bit_length())  # over 1.5 slots a key
        dtype = np.int32 if n < 2**31 - 1 else np.int64
        slots = np.full(size, -1, dtype=dtype)
        mask = size - 1
        pend = np.arange(n, dtype=dtype)
        s = hashes & mask
        while pend.size:
            free = slots[s] < 0
            slots[s[free]] = pend[free]  # where several claim one slot, one of them gets it
            held = slots[s]
            won = held == pend
            lost = ~won
            if (hashes[held[lost]] == hashes[pend[lost]]).any():
                return None  # a slot holds a key of this hash
            pend, s = pend[lost], (s[lost] + 1) & mask
        return cls(keys, hashes, slots)

    def _find(self, h: np.ndarray) -> np.ndarray:
        """The position of the key of each hash of ``h``, -1 where no key has it."""
        out = np.full(h.size, -1, dtype=np.int64)
        slots, hashes, mask = self.slots, self.hashes, self.mask
        if not hashes.size:
            return out
        idx = np.arange(h.size)
        s = h & mask
        while idx.size:
            p = slots[s]
            filled = p >= 0
            hit = filled & (hashes[np.where(filled, p, 0)] == h)
            out[idx[hit]] = p[hit]
            go = filled & ~hit
            idx, h, s = idx[go], h[go], (s[go] + 1) & mask
        return out

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys)

    def __getitem__(self, value) -> int:
        p = self.get(value)
        if p is None:
            raise KeyError(value)
        return p

    def __contains__(self, value) -> bool:
        return self.get(value) is not None

    def get(self, value, default=None):
        h = hash(value)
        slots, mask = self.slots, self.mask
        s = h & mask
        while (p := int(slots[s])) >= 0:
            if int(self.hashes[p]) == h:
                return p if self.keys[p] == value else default
            s = (s + 1) & mask
        return default

    def positions(self, values: Sequence[Any], confirm: bool = True) -> np.ndarray:
        """Each value's position (-1 where it is no key), as ``[get(v, -1) for v in values]``;
        TypeError for a value that cannot be a dict key, as a dict raises. ``confirm=False``
        leaves out the comparison of each value with its key (a caller that compares them
        itself): a value is then found by its hash alone."""
        n = len(values)
        h = np.fromiter(map(hash, values), dtype=np.int64, count=n)
        at = self._find(h)
        if confirm:
            hit = np.flatnonzero(at >= 0)
            if hit.size:
                keys = self.keys
                same = np.fromiter(
                    map(
                        eq,
                        map(values.__getitem__, hit.tolist()),
                        map(keys.__getitem__, at[hit].tolist()),
                    ),
                    dtype=bool,
                    count=hit.size,
                )
                at[hit[~same]] = -1
        return at


def row_index(keys: Sequence[Any], least: int = 1024) -> Mapping[Any, int]:
    """Each key's position, as ``dict(zip(keys, range(len(keys))))`` gives it: a
    :class:`HashIndex` when there are at least ``least`` keys and every key is a distinct
    string with a hash of its own among them, else that dict (repeated keys, other kinds: the
    dict's own rules decide)."""
    n = len(keys)
    if n < least or set(map(type, keys)) != {str}:
        return dict(zip(keys, range(n), strict=True))
    h = np.fromiter(map(hash, keys), dtype=np.int64, count=n)
    index = HashIndex.build(keys, h)
    if index is None:  # a repeated key, or two keys of one hash
        return dict(zip(keys, range(n), strict=True))
    return index


def index_positions(index: Mapping[Any, int], values: Sequence[Any]) -> np.ndarray:
    """Each value's ``index.get(value)`` as an int64 array, -1 where it has none (TypeError
    for a value that cannot be a key)."""
    if isinstance(index, HashIndex):
        return index.positions(values)
    get = index.get
    return np.fromiter((-1 if p is None else p for p in map(get, values)), np.int64, len(values))
