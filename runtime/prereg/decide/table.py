"""The registered rows of a study and the cell each belongs to.

Rows come from an engine that generates them (it knows each row's cell), from an item
manifest (a record contract with ``role: items`` whose fields name the row (``role: row``),
optionally the split (``role: split``) and each factor (``factor: <id>``)), or, without a
manifest, from the observations themselves when their contract names the factors the same
way. With a manifest every row must fall in exactly one registered cell and every cell must
have exactly its registered number of rows; from observations, a cell may not have more
distinct rows than it registers, and the rows never observed are counted as registered but
unobserved. Either way coverage is measured against the registration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from prereg.columnar import RecordColumns, field_values, located, row_index
from prereg.decide.names import level_text, level_value  # noqa: F401 (re-exported)
from prereg.errors import UserError, said

SPLIT = "split"  # the language's name for a row's split in selections


def cell_attributes(cell: Mapping[str, Any]) -> dict[str, str]:
    return {SPLIT: str(cell["split"]), **{k: str(v) for k, v in cell["levels"].items()}}


@dataclass(frozen=True)
class RowTable:
    """Rows in a fixed order: id, cell index, row attributes and item fields (columns)."""

    ids: Sequence[Any]  # a row's name: a string, or a tuple when several key fields name it
    cell: np.ndarray  # int index into cells
    cells: tuple[Mapping[str, Any], ...]  # engine-config cells (id, split, rows, levels)
    attributes: Mapping[str, np.ndarray] = field(default_factory=dict)  # name -> label per row
    columns: Mapping[str, Sequence[Any]] = field(default_factory=dict)  # item fields per row

    @cached_property
    def index(self) -> Mapping[Any, int]:
        """Each row's position by its name (built once)."""
        return row_index(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def check_cell_counts(cells: Sequence[Mapping[str, Any]], cell: np.ndarray, what: str) -> None:
    counts = np.bincount(cell, minlength=len(cells))
    problems = [
        f"cell {c['id']} has {int(n)} rows, the study registers {c['rows']}"
        for c, n in zip(cells, counts.tolist(), strict=True)
        if n != int(c["rows"])
    ]
    if problems:
        raise UserError(f"{what}: the rows do not match the registered cells", problems=problems)


def cell_lookup(config: Mapping[str, Any]) -> tuple[tuple[str, ...], dict[tuple[str, ...], int]]:
    """The factor ids and a map from (split, level per factor) to the cell index.

    A cell that leaves a factor out matches any level of it.
    """
    factors = tuple(str(f["id"]) for f in config["factors"])
    levels = {str(f["id"]): [str(lv["id"]) for lv in f["levels"]] for f in config["factors"]}
    by_key: dict[tuple[str, ...], int] = {}
    for i, c in enumerate(config["cells"]):
        keys: list[tuple[str, ...]] = [(str(c["split"]),)]
        for f in factors:
            options = [str(c["levels"][f])] if f in c["levels"] else levels[f]
            keys = [(*k, lv) for k in keys for lv in options]
        for k in keys:
            by_key[k] = i
    return factors, by_key


def _name_of(rec: Mapping[str, Any], row_field: str | tuple[str, ...]) -> Any:
    """A record's row name: its row field, or the tuple of its naming fields."""
    if isinstance(row_field, str):
        return rec[row_field]
    return tuple(rec.get(f) for f in row_field)


def name_words(row_field: str | tuple[str, ...], rid: Any) -> str:
    """A row name as messages show it: ``'q1'`` or ``(itemId='q1', rater='ann')``."""
    if isinstance(row_field, str):
        return said(rid)
    return "(" + ", ".join(f"{f}={said(v)}" for f, v in zip(row_field, rid, strict=True)) + ")"


class _LevelCells(dict):
    """Cell index by a record's tuple of level values, each distinct tuple worked out once
    (None for levels in no registered cell)."""

    def __init__(self, split_field, split, factors, factor_fields, by_key):
        super().__init__()
        self.args = split_field, split, factors, factor_fields, by_key

    def __missing__(self, v):
        split_field, split, factors, factor_fields, by_key = self.args
        it = iter(v)
        s = str(next(it)) if split_field is not None else split
        key = (s, *(level_text(next(it)) if f in factor_fields else "" for f in factors))
        self[v] = ci = by_key.get(key)
        return ci


def _placed_at_once(
    records, row_field, split_field, split, factors, factor_fields, by_key, strings=frozenset()
):
    """(row ids, cell index per record, row index by id) of manifest records, worked out a
    field at a time; None unless every row id is distinct and hashable, every level field
    holds values of one type (so that equal values are one level: True, 1 and 1.0 are one dict
    key but not one level) and every record's levels are a registered cell. The record loop
    of :func:`from_items` finds and words whatever this leaves. ``strings``: the fields the
    contract types as strings (validated: a string, null or absent; no value of another type
    equals a string, so their types are not scanned)."""
    try:
        if isinstance(row_field, str):
            rids = field_values(records, row_field, True)
        else:
            rids = list(zip(*(field_values(records, f) for f in row_field), strict=True))
        index = row_index(rids)
        if len(index) != len(rids) or None in index:
            return None
        if not isinstance(row_field, str) and any(None in r for r in index):
            return None
        cols, names = [], []
        if split_field is not None:
            cols.append(field_values(records, split_field, True))
            names.append(split_field)
        named = [f for f in factors if f in factor_fields]
        cols.extend(field_values(records, factor_fields[f]) for f in named)
        names.extend(factor_fields[f] for f in named)
        scanned = [col for col, name in zip(cols, names, strict=True) if name not in strings]
        if any(len(set(map(type, col))) > 1 for col in scanned):
            return None
        lookup = _LevelCells(split_field, split, factors, factor_fields, by_key)
        if cols:
            cell = np.fromiter(
                map(lookup.__getitem__, zip(*cols, strict=True)), np.int64, len(rids)
            )
        else:
            cell = np.full(len(rids), lookup[()], dtype=np.int64)
    except (KeyError, TypeError):  # a missing field, a value that cannot be a dict key
        return None
    if None in lookup.values():
        return None
    return rids, cell, index  # the column's own list: a manifest's ids are held once


def _taken(values: list, at: list[int]) -> list:
    return [values[k] for k in at]


def _observed_at_once(records, row_field, split_field, split, factors, factor_fields, by_key):
    """(each row's first record, row ids, cell per row) of observation records that name
    their rows' levels, worked out a field at a time; None unless every record names its row
    (no null or missing naming field), every record's levels are a registered cell and the
    records of a row agree on it. The record loop of :func:`from_items` finds and words
    whatever this leaves."""
    try:
        if isinstance(row_field, str):
            names = field_values(records, row_field)
            if None in names:
                return None
        else:
            names = list(zip(*(field_values(records, f) for f in row_field), strict=True))
            if any(None in r for r in set(names)):
                return None
        n = len(names)
        first = dict(zip(reversed(names), range(n - 1, -1, -1), strict=True))
        cols = []
        if split_field is not None:
            cols.append(field_values(records, split_field))
        named = [f for f in factors if f in factor_fields]
        cols.extend(field_values(records, factor_fields[f]) for f in named)
        if any(len(set(map(type, col))) > 1 for col in cols):
            return None
        lookup = _LevelCells(split_field, split, factors, factor_fields, by_key)
        if cols:
            cell = list(map(lookup.__getitem__, zip(*cols, strict=True)))
        else:
            cell = [lookup[()]] * n
    except (KeyError, TypeError):  # a value that cannot be a dict key
        return None
    if None in lookup.values():
        return None
    cells = np.asarray(cell, dtype=np.int64)
    at = np.fromiter(map(first.__getitem__, names), np.int64, n)
    if n and not np.array_equal(cells[at], cells):  # a row's records in two cells
        return None
    order = sorted(first.values())
    return order, [names[k] for k in order], [cell[k] for k in order]


def from_items(
    config: Mapping[str, Any],
    contract: Mapping[str, Any],
    records: Iterable[Mapping[str, Any]],
    source: str,
    *,
    row_field: str | Sequence[str] | None = None,
    complete: bool = True,
    ignore_unplaced: bool = False,
    lines: Sequence[int] | None = None,
    check_counts: bool = True,
) -> RowTable:
    """The row table of an item manifest (records validated against ``contract``).

    With the study's ``row_counts: manifest`` each cell has the rows the manifest lists in it
    (the returned cells carry those counts) and only the registered ``totals`` are checked;
    otherwise every cell must have exactly its registered rows.

    With ``complete=False`` (rows read from observations: ``row_field`` names the row, a row
    may repeat with the same levels), cells are filled up to their registered counts with
    rows that were never observed (ids ``<cell>#unobserved-<n>``). ``check_counts=False``
    leaves the cells' row counts unchecked (a manifest's rows reduced in buckets: see
    :mod:`prereg.bucketed`, which checks them on every bucket's rows). With ``ignore_unplaced``
    (observations under ``unknown_rows: ignore``) a record whose levels are in no registered
    cell is left out of the table, so the attempt policy ignores and counts it.
    """
    fields = contract["fields"]
    if row_field is not None and not isinstance(row_field, str):
        row_field = tuple(row_field) if len(row_field) > 1 else row_field[0]
    if row_field is None:
        row_field = next((f["name"] for f in fields if f.get("role") == "row"), None)
    if row_field is None:
        raise UserError(f"record contract {contract['id']}: no field has role row")
    split_field = next((f["name"] for f in fields if f.get("role") == "split"), None)
    factor_fields = {f["factor"]: f["name"] for f in fields if f.get("factor")}
    factors, by_key = cell_lookup(config)
    splits = [str(s["id"]) for s in config["splits"]]
    missing = [f for f in factors if f not in factor_fields]
    ids: list[str] = []
    cell: list[int] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    if not isinstance(records, RecordColumns):
        records = list(records)
    item_names = [f["name"] for f in fields]
    columns: dict[str, list[Any]] = {n: [] for n in item_names}
    placed: dict[str, int] = {}
    fast = None
    if complete and (split_field is not None or len(splits) == 1):
        split = splits[0] if splits else ""
        strings = frozenset(f["name"] for f in fields if f.get("type") == "string")
        fast = _placed_at_once(
            records, row_field, split_field, split, factors, factor_fields, by_key, strings
        )
    if fast:
        ids, cell, index = fast
        columns = {name: field_values(records, name) for name in item_names}
        records = []  # every record placed: the loop below has nothing to find
    elif not complete and (split_field is not None or len(splits) == 1):
        split = splits[0] if splits else ""
        seen_at = _observed_at_once(
            records, row_field, split_field, split, factors, factor_fields, by_key
        )
        if seen_at is not None:  # each row's first record, in line order
            first, ids, cell = seen_at
            columns = {name: _taken(field_values(records, name), first) for name in item_names}
            records = []
    if isinstance(row_field, str):
        names = field_values(records, row_field)
    else:  # read a field at a time: one pass per field, not one call per record
        names = list(zip(*(field_values(records, f) for f in row_field), strict=True))
        names = names or [() for _ in records]
    for k, rec in enumerate(records):
        n = k + 1 if lines is None else lines[k]
        rid = names[k]
        if rid is None:
            problems.append(
                f"{located(source, n)}: {row_field} is null or absent, and it names the row"
            )
            continue
        if isinstance(rid, tuple) and None in rid:
            gone = [f for f, v in zip(row_field, rid, strict=True) if v is None]
            problems.append(
                f"{located(source, n)}: {', '.join(gone)} is null or absent, and it names the row"
                f" with {', '.join(f for f in row_field if f not in gone)}"
            )
            continue
        if rid in seen and complete:
            problems.append(
                f"{located(source, n)}: row {name_words(row_field, rid)} repeats line {seen[rid]}"
            )
            continue
        first = rid in seen
        seen.setdefault(rid, n)
        if split_field is not None:
            split = str(rec[split_field])
        elif len(splits) == 1:
            split = splits[0]
        else:
            raise UserError(
                f"record contract {contract['id']}: the study has several splits, so one field"
                " needs role split"
            )
        key = (
            split,
            *(level_text(rec.get(factor_fields[f])) if f in factor_fields else "" for f in factors),
        )
        ci = by_key.get(key)
        if ci is None and missing:
            raise UserError(
                f"record contract {contract['id']}: no field names factor(s) {missing}, so rows"
                " cannot be placed in cells"
            )
        if ci is None and ignore_unplaced and not complete and rid not in placed:
            del seen[rid]  # a record of an unregistered row: the attempt policy counts it
            continue
        if ci is None:
            shown = zip(("split", *factors), key, strict=True)
            if split_field is None:  # a split the record does not carry is not shown
                next(shown)
            where = ", ".join(f"{k}={v}" for k, v in shown)
            problems.append(
                f"{located(source, n)}: row {name_words(row_field, rid)} ({where}) is in no registered cell"
            )
            continue
        if first:
            if placed.get(rid) != ci:
                problems.append(
                    f"{located(source, n)}: row {name_words(row_field, rid)} is in cell"
                    f" {config['cells'][ci]['id']} here but"
                    f" in another cell on line {seen[rid]}"
                )
            continue
        placed[rid] = ci
        ids.append(rid)  # as the data write it: an integer id is looked up as one
        cell.append(ci)
        for name in item_names:
            columns[name].append(rec.get(name))
    if problems:
        shown = problems[:50] + ([f"… and {len(problems) - 50} more"] if len(problems) > 50 else [])
        what = "items" if complete else "observations"  # rows read from observations
        raise UserError(f"{source}: {len(problems)} problem(s) in the {what}", problems=shown)
    cells = tuple(config["cells"])
    if not complete:
        counts = np.bincount(np.asarray(cell, dtype=np.int64), minlength=len(cells))
        over = [
            f"cell {c['id']} has {int(k)} distinct rows, the study registers {c['rows']}"
            for c, k in zip(cells, counts.tolist(), strict=True)
            if k > int(c["rows"])
        ]
        if over:
            if not isinstance(row_field, str):
                over.append(
                    f"a row is one value of ({', '.join(row_field)}), the attempt policy's key:"
                    " a cell's registered rows count every such combination (200 items rated"
                    " by 3 raters are 600 rows); register units to count the items"
                )
            raise UserError(f"{source}: more rows than registered", problems=over)
        for ci, (c, k) in enumerate(zip(cells, counts.tolist(), strict=True)):
            for j in range(int(c["rows"]) - k):
                ids.append(f"{c['id']}#unobserved-{j + 1}")
                cell.append(ci)
                for name in item_names:
                    columns[name].append(None)
    arr = np.asarray(cell, dtype=np.int64)
    if not check_counts:
        pass
    elif complete and config.get("row_counts") == "manifest":
        cells = manifest_counts(config, cells, arr, source)
    else:
        check_cell_counts(cells, arr, source)
    # the ids as placed at once are the manifest column's list (not copied: ten million ids
    # are 80 MB of pointers a copy)
    table = RowTable(ids=ids if fast else tuple(ids), cell=arr, cells=cells, columns=columns)
    if fast:  # the placement built the index already
        table.__dict__["index"] = index
    return table


def manifest_counts(
    config: Mapping[str, Any], cells: Sequence[Mapping[str, Any]], cell: np.ndarray, source: str
) -> tuple[Mapping[str, Any], ...]:
    """The cells with the rows the manifest lists in each (``row_counts: manifest``), after
    checking every registered total against the manifest's sum over its scope."""
    counts = np.bincount(cell, minlength=len(cells)).tolist()
    problems = []
    for t in config.get("totals") or ():
        got = sum(
            k for c, k in zip(cells, counts, strict=True)
            if t["scope"] == "all" or str(c["split"]) == str(t["scope"])
        )  # fmt: skip
        if got != int(t["rows"]):
            problems.append(
                f"the manifest lists {got} rows in {t['scope']!r}, the study registers a total"
                f" of {t['rows']} (row_counts: manifest takes each cell's rows from the manifest;"
                " its totals still hold)"
            )
    if problems:
        raise UserError(f"{source}: the rows do not match the registered totals", problems=problems)
    return tuple({**c, "rows": k} for c, k in zip(cells, counts, strict=True))
