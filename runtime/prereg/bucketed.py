"""Score's rows reduced in hash partitions ("buckets"), so that no process holds every row's
id and records at once, and the work spreads over local worker processes or a Dask cluster.

A row and every attempt at it share one row id, so rows can be reduced apart: the id's
CRC-32 (of its UTF-8 bytes; the same in every process, unlike Python's ``hash``) picks its
bucket. Two rounds of tasks run through :func:`prereg.runner.run`:

1. **map** (one task per partition of the manifest and of the observations, cut by
   :func:`prereg.partitioned.cuts` without reading the files, which are hashed on a thread
   of the calling process meanwhile: JSONL and CSV files at line ends, Parquet files between
   row groups): the partition is decoded and checked against its contract as the one-process
   reader checks it; a manifest partition is expanded by the attempt policy's ``expand``, if
   any, and placed in cells (:func:`prereg.decide.table.from_items`, its cells and item
   columns kept in file order); the records' row names (and an observation's fields, packed)
   are written to a spill folder, one file a partition with its buckets one after another,
   each record with its line. A row named by several fields goes to its first field's bucket,
   which every record of the row holds;
2. **reduce** (one task per bucket): the bucket's rows are indexed by id, its observations'
   counted attempts chosen
   (:func:`prereg.decide.attempts.counted`) and taken as row columns
   (:func:`prereg.decide.attempts.record_columns`), with the very functions one process calls;
   the result (each row's manifest line, cell, observed flag and columns) goes back to the
   spill folder.

The calling process then puts every bucket's rows back in manifest order, checks the cells'
row counts and goes on exactly as one process does (derived fields, metrics, figures), so
SCORE.json does not depend on the number of buckets, workers or partitions.

Refusals keep one process's words: a bucket sees only some of the rows, so whenever any task
meets a problem (a record the contract refuses, a repeated row, an unknown row, a kind of
value one process would read differently), the whole score is run again in one process, which
names the problems, their lines and their count as it always does. The fast path is for data
that is right; wrong data costs a second read.

The spill folder (``.prereg-score-*`` beside the output; on a cluster every worker must see
it at the same path, as it must see the inputs) is removed when the command ends, whether it
wrote its outputs or refused, or was stopped by SIGTERM or an interrupt; a process killed
outright (SIGKILL) leaves it behind, and it may be deleted (no output is ever written into
it).
"""

from __future__ import annotations

import json
import operator
import os
import pickle
import shutil
import tempfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prereg.errors import UserError
from prereg.interrupts import terminate_as_interrupt

#: input bytes (manifest and observations together) per bucket: a bucket's rows, ids and
#: records are what a reduce task holds at once
BUCKET_BYTES = 48 << 20
#: one process reduces inputs at least this large in buckets, to bound its memory
LARGE_BYTES = 640 << 20


class Fallback(Exception):
    """A task met something one process must name in its own words (or read its own way)."""


@dataclass(frozen=True)
class Inputs:
    """What the tasks read: each file, its contract's schema and the field naming a row (and
    the contract's fields, with which a Parquet or CSV file is read)."""

    items: str
    items_schema: str
    items_field: str
    observations: str
    obs_schema: str
    obs_field: str
    items_fields: tuple = ()
    obs_fields: tuple = ()
    #: the manifest's fields naming a row, in the attempt policy's order (the first is
    #: ``items_field``); a row named by several is the tuple of their values
    items_name: tuple = ()


class Unnamed(Sequence):
    """The ids of rows reduced in buckets, when nothing past the attempt policy reads them:
    only their number is kept."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        raise RuntimeError("internal: a row id was read after its rows were reduced in buckets")


def bucket_of(ids: Sequence[str], buckets: int) -> np.ndarray:
    """Each id's bucket: the CRC-32 of its UTF-8 bytes, modulo ``buckets`` (a lone surrogate,
    which a JSON string may hold as ``"\\ud800"``, taken as its three bytes)."""
    crc = np.fromiter(map(zlib.crc32, map(_utf8, ids)), dtype=np.int64, count=len(ids))
    return crc % buckets


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def names_read(config: Mapping[str, Any], rules_file: str | None, name: str) -> bool:
    """Whether anything past the attempt policy may read field ``name`` of a row: the name
    written as a string anywhere in the study's configuration but its record contracts and
    attempt policy, or quoted in its generated rules (a conservative test: reading a column
    it need not costs memory, never a byte of the output)."""
    rest = {k: v for k, v in config.items() if k not in ("record_contracts", "attempts")}
    if json.dumps(name) in json.dumps(rest, default=str):
        return True
    if rules_file is None:
        return False
    text = Path(rules_file).read_text(encoding="utf-8")
    return repr(name) in text or json.dumps(name) in text


# -- map: partitions into buckets ----------------------------------------------------------------


def _map(payload, task):
    """:func:`_mapped`, None when the spill cannot be written (a full disk: one process then
    scores without it)."""
    try:
        return _mapped(payload, task)
    except OSError:
        return None


def _mapped(payload, task):
    """Decode one partition and write it to the spill folder; (records, per-bucket counts),
    or None when one process must read it. A manifest partition is placed in cells here (its
    cells and item columns are kept in file order, its ids go to their buckets); an
    observation partition's records go to their buckets, their columns packed."""
    from prereg import partitioned, records

    config, contract, spill, buckets, max_problems, item_names, obs_contract, naming = payload
    role, number, part, schema_path, field, fields = task
    if part.kind == "jsonl":
        parts, problems, count, error, digest = partitioned.read_part_digest(
            (schema_path, max_problems), part
        )
        if error is not None or count:
            return None
        names = records._column_decoders(schema_path)[2]
        cols = records.joined_columns(names, parts)
        del parts
    else:  # a Parquet file's row groups, a CSV file's lines
        from prereg.tabular import read_part_columns

        try:
            cols, digest = read_part_columns(part, schema_path, fields)
        except partitioned.Uncut:
            return None
    ids = cols.columns.get(field)
    if ids is None or cols.absent.get(field) or set(map(type, ids)) - {str}:
        return None  # a row named by something else than a string: one process reads it
    # the records before this partition are not known here (the partitions are cut without
    # reading the file): lines and places are the partition's own, from 0; the reduce adds
    # the records of the partitions before it
    n = cols.n
    if role == "items":
        from prereg.decide import attempts as attempt_policy
        from prereg.decide.table import from_items

        try:  # each record made one row per combination of the policy's expansion, if any
            expanded, rows, lines = attempt_policy.expanded_manifest(
                config["attempts"], obs_contract, contract, cols
            )
            table = from_items(
                config, expanded, rows, part.path, row_field=list(naming), lines=lines,
                check_counts=False,
            )  # fmt: skip
        except UserError:
            return None
        del rows
        columns = {}
        for name in item_names:
            if name not in table.columns:
                return None
            columns[name] = _item_column(table.columns[name], table.cell)
            if columns[name] is None:
                return None
        _dump(Path(spill, f"items-{number}.pkl"), (table.cell, columns))
        ids, n = table.ids, len(table.ids)
        del table
        # a row named by several fields travels as one column a field; its bucket is its
        # first field's, which every record of the row holds
        parts = list(zip(*ids, strict=True)) if len(naming) > 1 else [ids]
        parts = parts or [[] for _ in naming]
        ids = parts[0]
        moved_ids = dict(zip(naming, parts, strict=True))
    where = bucket_of(ids, buckets)
    order = np.argsort(where, kind="stable")
    bounds = np.searchsorted(where[order], np.arange(buckets + 1)).tolist()
    if role == "items":
        moved = {name: _permuted(_packed(list(col)), order) for name, col in moved_ids.items()}
    else:
        moved = {name: _permuted(_packed(col), order) for name, col in cols.columns.items()}
    at = order  # each record's (a manifest's: row's) place in its partition (from 0)
    # one file a partition, its buckets one after another: a reduce task reads its own piece
    # of each at the offset given (files grow with partitions, not partitions x buckets)
    offsets = [0]
    with open(Path(spill, f"{role}-{number}.buckets"), "wb") as f:
        for b in range(buckets):
            lo, hi = bounds[b], bounds[b + 1]
            piece = {name: _sliced(col, lo, hi) for name, col in moved.items()}
            pickle.dump((piece, at[lo:hi]), f, protocol=pickle.HIGHEST_PROTOCOL)
            offsets.append(f.tell())
    return n, offsets, digest


def _packed(col: list):
    """A column of JSON values as it travels: booleans and nulls as int8 codes, whole numbers
    as int64, other numbers as float64 (each reads back as the very value), strings as one
    string joined by a character none of them holds (``("text", separator)``: pickled as
    one string, split back in C), anything else as it is."""
    kinds = set(map(type, col))
    if kinds <= {bool, type(None)}:
        codes = np.fromiter(map(_FLAG.__getitem__, col), dtype=np.int8, count=len(col))
        return "flags", codes
    if kinds == {int}:
        try:
            return "ints", np.array(col, dtype=np.int64)
        except OverflowError:
            return "list", col
    if kinds == {float}:
        return "floats", np.array(col, dtype=np.float64)
    if kinds == {str}:
        for sep in _SEPARATORS:
            if sep.join(col).count(sep) == len(col) - 1:  # no string holds it
                return ("text", sep), col
    return "list", col


_FLAG = {False: 0, True: 1, None: 2}
_FLAGS = np.array([False, True, None], dtype=object)
#: characters tried in turn to join a column of strings (a column holding all of them travels
#: as a list)
_SEPARATORS = ("\x00", "\x1f", "\n", "\ufffe")


def _permuted(col, order: np.ndarray):
    """A packed column's values in ``order``."""
    how, values = col
    if isinstance(values, np.ndarray):
        return how, values[order]
    if len(values) < 2:
        return how, list(values)
    return how, operator.itemgetter(*order.tolist())(values)  # a tuple, taken in C


def _sliced(col, lo: int, hi: int):
    """Rows ``lo`` to ``hi`` of a packed column, as they are pickled."""
    how, values = col
    if isinstance(how, tuple):  # strings: one joined string and their number
        return how, (how[1].join(values[lo:hi]), hi - lo)
    return how, values[lo:hi]


def _unpacked(pieces: list) -> list:
    """The values of a column's pieces (as :func:`_sliced` wrote them), joined."""
    out: list = []
    for how, values in pieces:
        if how == "flags":
            out.extend(_FLAGS[values].tolist())
        elif isinstance(how, tuple):
            text, n = values
            if n:
                out.extend(text.split(how[1]))
        elif how == "list":
            out.extend(values)
        else:
            out.extend(values.tolist())
    return out


def _piece(spill: str, role: str, number: int, offsets: Sequence[int], b: int):
    """Bucket ``b``'s piece of a partition's file (:func:`_map`)."""
    with open(Path(spill, f"{role}-{number}.buckets"), "rb") as f:
        f.seek(offsets[b])
        return pickle.loads(f.read(offsets[b + 1] - offsets[b]))


def _dump(path: Path, obj) -> None:
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


def _load(path: Path):
    with open(path, "rb") as f:
        return pickle.load(f)


# -- reduce: buckets into row columns ------------------------------------------------------------


def _reduce(payload, b: int):
    """:func:`_reduced`, None when the spill cannot be read or written."""
    try:
        return _reduced(payload, b)
    except OSError:
        return None


def _reduced(payload, b: int):
    """One bucket's rows: (rows, tally) after writing their observed flags and counted
    attempts' columns to the spill folder, or None when one process must score the data."""
    from prereg.columnar import ABSENT, RecordColumns, row_index
    from prereg.decide import attempts as attempt_policy
    from prereg.records import share_columns

    config, inputs, spill, counts, firsts, obs_names = payload
    naming = inputs.items_name or (inputs.items_field,)
    named: dict[str, list] = {name: [] for name in naming}
    ordinals = []
    for i, offsets in enumerate(counts["items"]):
        piece, at = _piece(spill, "items", i, offsets, b)
        for name in naming:
            named[name].append(piece[name])
        ordinals.append(at + firsts["items"][i])
    if len(naming) == 1:
        ids = _unpacked(named[naming[0]])
    else:  # a row named by several fields: the tuple of their values, as one process names it
        ids = list(zip(*(_unpacked(named[name]) for name in naming), strict=True))
    del named
    index = row_index(ids)
    if len(index) != len(ids):
        return None  # a row id repeated across partitions: one process names it
    pieces, lines = [], []
    for i, offsets in enumerate(counts["observations"]):
        piece, at = _piece(spill, "observations", i, offsets, b)
        pieces.append(piece)
        lines.append(at + firsts["observations"][i])
    line = (np.concatenate(lines) + 1).tolist() if lines else []
    columns = {name: _unpacked([p[name] for p in pieces]) for name in pieces[0]} if pieces else {}
    del pieces
    absent = {name: col.count(ABSENT) for name, col in columns.items()}
    obs = RecordColumns(list(columns), columns, len(line), absent, line)
    try:
        if len(naming) == 1:  # as one process shares a row's one naming field
            obs.positions = share_columns(obs.columns, {inputs.obs_field: (index, ids)})
        tally: dict[str, int] = {}
        chosen, observed = attempt_policy.counted(
            config["attempts"], obs, index, inputs.observations, tally=tally, lines=obs.lines
        )
        taken = attempt_policy.record_columns(obs, chosen, obs_names)
        kinds = {}
        for name in obs_names:
            col = obs.cache.get(("column", name))
            if col is None:
                col = attempt_policy._column(obs, name, False)
            kinds[name] = None if col.null.all() else col.kind
    except UserError:
        return None
    if "mixed" in kinds.values():
        return None
    order = np.concatenate(ordinals) if ordinals else np.empty(0, np.int64)
    _dump(Path(spill, f"rows-{b}.pkl"), (order, observed, taken, kinds))
    return len(ids), tally


def _item_column(values: list, cell: np.ndarray):
    """A manifest column as it travels back: ``("cell", {cell: value})`` when each cell's rows
    hold one string (a factor's or the split's field, mostly), else ``("codes", distinct
    values, each row's code)`` for strings and nulls, else ``("packed", column)`` as
    :func:`_packed` writes it (numbers, booleans, anything else)."""
    if not values:
        return "cell", {}
    cells, first = np.unique(cell, return_index=True)
    held = [values[i] for i in first.tolist()]
    if set(map(type, held)) == {str}:
        same = np.empty(len(held), dtype=object)
        same[:] = held
        at = np.searchsorted(cells, cell)
        if same[at].tolist() == values:  # compared in C, value by value
            return "cell", dict(zip(cells.tolist(), held, strict=True))
    coded = _coded(values)
    if coded is None:
        return "packed", _sliced(_packed(values), 0, len(values))
    return ("codes", *coded)


def _coded(values: Sequence[Any]):
    """A column of strings (or nulls) as (distinct values, each value's code); None for any
    other kind of value (one process then reads it)."""
    if set(map(type, values)) - {str, type(None)}:
        return None
    distinct: dict[str, int] = {}
    codes = np.fromiter(
        (distinct.setdefault(v, len(distinct)) for v in values), dtype=np.int32, count=len(values)
    )
    return list(distinct), codes


# -- the calling process ---------------------------------------------------------------------------


@dataclass
class Reduced:
    """Rows put back in manifest order: what one process's placement and attempt policy give."""

    cell: np.ndarray
    observed: np.ndarray
    item_columns: dict[str, CodedValues | list]
    record_columns: dict[str, Any]
    tally: dict[str, int]
    digests: dict[str, tuple[str, int]]
    rows: int


def reduce_rows(
    config,
    items_contract: Mapping[str, Any],
    inputs: Inputs,
    item_names: Sequence[str],
    obs_names: Sequence[str],
    *,
    workers: int = 1,
    scheduler: str | None = None,
    size: int | None = None,
    spill_dir: str | os.PathLike | None = None,
    max_problems: int = 50,
    obs_contract: Mapping[str, Any] | None = None,
) -> Reduced | None:
    """The rows of a manifest and its observations reduced in buckets, or None when one
    process must score them (a problem to name, or data it reads its own way).
    ``obs_contract`` (the observations' contract) gives the fields of a row expansion."""
    from concurrent.futures import ThreadPoolExecutor

    from prereg import partitioned

    size = partitioned.DEFAULT_BYTES if size is None else size
    try:  # a file one process would refuse (unreadable, empty): refused there, in its order
        items_parts = partitioned.cuts(inputs.items, size)
        obs_parts = partitioned.cuts(inputs.observations, size)
    except (OSError, partitioned.Uncut):
        return None
    if not items_parts or not obs_parts:
        return None
    # the files' digests (which SCORE.json names) on a thread of this process while the
    # partitions are read: their hashing does not hold the workers back
    import threading

    stop = threading.Event()  # set on the way out: a hash no one will read stops at its chunk
    with terminate_as_interrupt(), ThreadPoolExecutor(1) as hashing:
        hashed = hashing.submit(_digests, inputs, items_parts, obs_parts, stop)
        try:
            return _reduce_rows(
                config, (items_contract, obs_contract or {}), inputs, item_names, obs_names,
                items_parts, obs_parts, hashed, workers, scheduler, size, spill_dir,
                max_problems,
            )  # fmt: skip
        finally:
            stop.set()


def _digests(inputs: Inputs, items_parts, obs_parts, stop=None):
    """Each file's (SHA-256, size, its partitions' SHA-256), or None when one cannot be read
    (or ``stop`` was set)."""
    from prereg import partitioned

    try:
        return (
            partitioned.digests(inputs.items, items_parts, stop),
            partitioned.digests(inputs.observations, obs_parts, stop),
        )
    except OSError:
        return None


def _reduce_rows(
    config, contracts, inputs, item_names, obs_names, items_parts, obs_parts, hashed,
    workers, scheduler, size, spill_dir, max_problems,
) -> Reduced | None:  # fmt: skip
    from prereg import runner

    items_bytes = sum(p.length for p in items_parts)
    obs_bytes = sum(p.length for p in obs_parts)
    weight = sum(p.size for p in (*items_parts, *obs_parts))  # a Parquet file's decompressed
    buckets = max(2 * workers, -(-weight // BUCKET_BYTES), 1)
    try:  # beside the output where it can (a cluster's workers see it there), else the temp
        spill = tempfile.mkdtemp(prefix=".prereg-score-", dir=spill_dir)
    except OSError:
        try:
            spill = tempfile.mkdtemp(prefix=".prereg-score-")
        except OSError:
            return None
    try:
        tasks = [
            ("items", i, p, inputs.items_schema, inputs.items_field, inputs.items_fields)
            for i, p in enumerate(items_parts)
        ] + [
            ("observations", i, p, inputs.obs_schema, inputs.obs_field, inputs.obs_fields)
            for i, p in enumerate(obs_parts)
        ]
        payload = (
            config, contracts[0], spill, buckets, max_problems, list(item_names),
            contracts[1], list(inputs.items_name or (inputs.items_field,)),
        )  # fmt: skip
        mapped = runner.run(_map, payload, tasks, workers=workers, scheduler=scheduler)
        if any(m is None for m in mapped):
            return None
        files = hashed.result()
        if files is None:
            return None
        (items_sha, items_size, items_each), (obs_sha, obs_size, obs_each) = files
        if (items_size, obs_size) != (items_bytes, obs_bytes) or [
            m[2] for m in mapped
        ] != items_each + obs_each:
            return None  # a file changed while it was read: one process reads it again
        # the records (a manifest's: rows) before each partition, in file order
        firsts = {}
        for role in ("items", "observations"):
            n = [m[0] for m, t in zip(mapped, tasks, strict=True) if t[0] == role]
            if not sum(n):  # a file of no record (a CSV header alone): one process refuses it
                return None
            firsts[role] = [0, *np.cumsum(n).tolist()][:-1]
        # each partition's file offsets of its buckets, by role
        counts = {
            role: [m[1] for m, t in zip(mapped, tasks, strict=True) if t[0] == role]
            for role in ("items", "observations")
        }
        rows = sum(m[0] for m, t in zip(mapped, tasks, strict=True) if t[0] == "items")
        del mapped
        payload = (config, inputs, spill, counts, firsts, list(obs_names))
        reduced = runner.run(
            _reduce, payload, list(range(buckets)), workers=workers, scheduler=scheduler
        )
        if any(r is None for r in reduced):
            return None
        tally: dict[str, int] = {}
        for _, t in reduced:
            for k, v in t.items():
                tally[k] = tally.get(k, 0) + v
        out = _gathered(spill, len(items_parts), buckets, rows, item_names, obs_names)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    if out is None:
        return None
    cell, observed, item_columns, record_columns = out
    digests = {inputs.items: (items_sha, items_bytes), inputs.observations: (obs_sha, obs_bytes)}
    return Reduced(cell, observed, item_columns, record_columns, tally, digests, rows)


def _gathered(spill: str, parts: int, buckets: int, rows: int, item_names, obs_names):
    """Every row in manifest order: (cell, observed, item columns, record columns), or None
    when the parts or buckets read a column differently (one process then reads it)."""
    from prereg.decide.columns import Column

    cells, items = [], []
    for i in range(parts):
        c, columns = _load(Path(spill, f"items-{i}.pkl"))
        cells.append(c)
        items.append(columns)
    cell = np.concatenate(cells) if cells else np.empty(0, np.int64)
    if cell.size != rows:
        return None
    item_columns = {
        name: _item_values([p[name] for p in items], cells, cell) for name in item_names
    }
    del items, cells
    observed = np.zeros(rows, dtype=bool)
    pieces: dict[str, list] = {name: [] for name in obs_names}
    kinds: dict[str, set] = {name: set() for name in obs_names}
    order: list[np.ndarray] = []
    for b in range(buckets):
        at, obs, taken, bucket_kinds = _load(Path(spill, f"rows-{b}.pkl"))
        observed[at] = obs
        for name in obs_names:
            pieces[name].append(taken[name])
            if bucket_kinds[name] is not None:
                kinds[name].add(bucket_kinds[name])
        order.append(at)
    where = np.concatenate(order) if order else np.empty(0, np.int64)
    if where.size != rows:
        return None
    back = np.empty(rows, dtype=np.int64)
    back[where] = np.arange(rows)
    record_columns = {}
    for name in obs_names:
        if len(kinds[name]) > 1:
            return None
        kind = kinds[name].pop() if kinds[name] else "number"
        record_columns[name] = _merged(Column, kind, pieces[name], back)
    return cell, observed, item_columns, record_columns


class CodedValues(Sequence):
    """A column of a few distinct values held as codes: value ``i`` is ``words[codes[i]]``.
    An item column reduced in buckets is one of these (a factor's field is coded by the
    rows' cells, which the table holds already); reading it builds the list."""

    def __init__(self, words: np.ndarray, codes: np.ndarray):
        self.words = words
        self.codes = codes

    def __len__(self) -> int:
        return int(self.codes.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.words[self.codes[i]].tolist()
        return self.words[self.codes[i]]

    def __iter__(self):
        return iter(self.words[self.codes].tolist())

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    __hash__ = None  # a column, like the list it stands for


def _item_values(forms: list, cells: list[np.ndarray], cell: np.ndarray) -> CodedValues | list:
    """An item column in manifest order from each partition's form (:func:`_item_column`)
    and cells (``cell``: all of them joined): by the rows' cells when every partition says
    each cell holds one value, the same in every partition; else every value coded in one
    table of distinct values (equal strings are one object either way); a column with values
    of other kinds (numbers, booleans) as a plain list."""
    if any(form[0] == "packed" for form in forms):  # values of other kinds: as a list
        out: list = []
        for form, part in zip(forms, cells, strict=True):
            if form[0] == "packed":
                out.extend(_unpacked([form[1]]))
            elif form[0] == "codes":
                words = np.empty(len(form[1]), dtype=object)
                words[:] = form[1]
                out.extend(words[form[2]].tolist())
            else:
                held = form[1]
                words = np.empty(max(held, default=-1) + 1, dtype=object)
                for c, value in held.items():
                    words[c] = value
                out.extend(words[part].tolist())
        return out
    by_cell: dict[int, Any] = {}
    if all(form[0] == "cell" for form in forms):
        for _, held in forms:
            for c, value in held.items():
                if by_cell.setdefault(c, value) != value:
                    break
            else:
                continue
            break
        else:
            words = np.empty(max(by_cell, default=-1) + 1, dtype=object)
            for c, value in by_cell.items():
                words[c] = value
            return CodedValues(words, cell)
    distinct: dict[Any, int] = {}
    codes = []
    for form, part in zip(forms, cells, strict=True):
        if form[0] == "cell":
            held = form[1]
            where = np.zeros(max(held, default=-1) + 1, dtype=np.int32)
            for c, value in held.items():
                where[c] = distinct.setdefault(value, len(distinct))
            codes.append(where[part] if part.size else np.empty(0, np.int32))
        else:
            _, words, code = form
            remap = np.fromiter(
                (distinct.setdefault(w, len(distinct)) for w in words), np.int32, len(words)
            )
            codes.append(remap[code] if code.size else code)
    words = np.empty(len(distinct), dtype=object)
    words[:] = list(distinct)
    return CodedValues(words, np.concatenate(codes) if codes else np.empty(0, np.int32))


def _merged(Column, kind: str, pieces: list, back: np.ndarray):
    """One column of ``kind`` from the buckets' columns, in manifest order (``back``: each
    row's position among the buckets' rows). A bucket whose rows have no value gives nulls of
    that kind; a column of no value at all is a number column of NaN, as one process makes
    it."""
    null = np.concatenate([p.null for p in pieces])[back] if pieces else np.ones(0, bool)
    if kind != "number" and null.all():
        return Column.numbers(np.full(null.size, np.nan))
    parts = []
    for p in pieces:
        if p.kind == kind:
            parts.append(p.values)
        elif kind == "boolean":
            parts.append(np.zeros(len(p), dtype=bool))
        elif kind == "number":
            parts.append(np.full(len(p), np.nan))
        else:
            parts.append(np.full(len(p), None, dtype=object))
    values = np.concatenate(parts)[back] if parts else np.empty(0)
    return Column(kind, values, null)
