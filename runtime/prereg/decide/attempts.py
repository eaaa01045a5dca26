"""Which observation record of a row counts: the study's attempt policy.

Records are attempts. The policy's ``key`` fields identify a series of attempts; the whole key
names the row (one item x model, item x rater, problem x sample), except the fields a ``where``
fixes to one value, which select the series scored (:func:`row_name`); ``order`` orders a series, ``where`` keeps the series that are scored (the
others are still checked), ``failed`` marks a failed attempt and ``counts`` picks the one that
counts: ``last`` (highest order; failed → unobserved), ``first`` (lowest order only, never a
fallback), ``first-success`` (lowest order that did not fail), ``last-any`` (highest order,
observed even when it failed) or ``first-match`` (lowest order meeting ``select``). Without
``order`` a series is one record. Records repeating a (key, order) follow ``duplicates``:
``refuse`` (the default), ``identical-once`` (an identical copy counts once), ``first`` or
``last`` (in line order; the others are counted in ``duplicateRecords``). Unknown rows,
refused repeats, a null or missing order and whatever an engine's own record check finds are
refused with their line numbers, all problems at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from prereg.columnar import HashIndex, RecordColumns, field_values, located, subset
from prereg.decide.columns import Column
from prereg.decide.fields import all_of
from prereg.decide.names import pinned_key_fields, row_name  # noqa: F401 (re-exported)
from prereg.errors import UserError, said

# An engine's own test of the records: (row index per record, None for an unknown row;
# the records) -> a problem or None per record.
RecordCheck = Callable[
    [Sequence["int | None"], Sequence[Mapping[str, Any]]], Sequence["str | None"]
]


def required_fields(contract: Mapping[str, Any] | None) -> frozenset[str]:
    """The fields a record of ``contract`` always has (read strictly: a record that lacks one
    was not validated against the contract)."""
    if contract is None:
        return frozenset()
    return frozenset(f["name"] for f in contract.get("fields") or () if f.get("required", True))


def _read(records: Sequence[Mapping[str, Any]], name: str, strict: bool) -> list[Any]:
    return field_values(records, name, strict)


def _column(records: Sequence[Mapping[str, Any]], name: str, strict: bool) -> Column:
    """The :class:`Column` of a field (built once per field of a :class:`RecordColumns`)."""
    if not isinstance(records, RecordColumns):
        return Column.of(_read(records, name, strict))
    key = ("column", name)
    col = records.cache.get(key)
    if col is None:
        col = records.cache[key] = Column.of(_read(records, name, strict))
    return col


def policy_fields(policy: Mapping[str, Any]) -> set[str]:
    """Every field the policy's ``failed``, ``where`` and ``select`` conditions name."""
    conds = [
        *(policy.get("failed") or ()),
        *(policy.get("failed_if_any") or ()),
        *(policy.get("where") or ()),
        *(policy.get("select") or ()),
    ]
    return {c["field"] for c in conds} | {c["other"] for c in conds if c.get("other")}


def counted(
    policy: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    index: Mapping[str, int],
    source: str,
    *,
    contract: Mapping[str, Any] | None = None,
    check: RecordCheck | None = None,
    rows: str = "the registered rows",
    max_problems: int = 50,
    tally: dict[str, int] | None = None,
    lines: Sequence[int] | None = None,
) -> tuple[list[int | None], np.ndarray]:
    """(record index that counts per row or None, observed mask) for records in line order.

    ``contract`` (the observation contract) says which fields every record has; ``check`` is
    an engine's own test of the records of known rows (:data:`RecordCheck`; its problems are
    listed with the others); ``rows`` names the registered rows in the message for an unknown
    row id. With ``unknown_rows: ignore`` such records are left out and counted in ``tally``
    (``ignoredRecords``). ``lines`` gives each record's line in ``source`` (default: its
    position, from 1).
    """
    key_fields = list(policy["key"])
    order = policy.get("order")
    # without order, failed and select (the compiler requires counts with any of them) a row
    # has one record, never failed: every rule picks it
    rule = policy.get("counts") or "last"
    n_rows = len(index)
    n_rec = len(records)
    lines = range(1, n_rec + 1) if lines is None else lines
    required = required_fields(contract)
    rec_cols = {name: _column(records, name, name in required) for name in policy_fields(policy)}
    failed = (
        all_of(policy.get("failed"), rec_cols, n_rec)
        if policy.get("failed")
        else np.zeros(n_rec, bool)
    )
    for cond in policy.get("failed_if_any") or ():
        failed = failed | all_of([cond], rec_cols, n_rec)
    scored = all_of(policy.get("where"), rec_cols, n_rec)
    row_ids = row_names(policy, records, required)
    _named(row_ids, row_name(policy), records, source, max_problems, lines)
    orders = _orders(records, order, source, max_problems, lines)
    row_of, row_arr = _row_positions(records, row_name(policy), row_ids, index)
    unknown = row_arr is None
    order_arr = np.asarray(orders)
    by_row = None if unknown else _row_order(key_fields, row_name(policy), row_arr, order_arr)
    if by_row is not None:  # sorted by (row, order): a repeat is two neighbours alike
        by_row, ordered = by_row
        repeated = bool((ordered[1:] == ordered[:-1]).any())
    else:
        repeated = unknown or not _distinct_keys(
            records, key_fields, row_name(policy), required, row_arr, order_arr
        )
    keys = None
    if repeated:  # (key, order) as tuples: what the messages and the duplicates rule read
        keys = list(
            zip(*(_read(records, f, f in required) for f in key_fields), orders, strict=True)
        )
        repeated = len(set(keys)) < n_rec
    if policy.get("duplicates") not in (None, "refuse") and repeated:
        keep = _dedupe(policy["duplicates"], records, keys, source, max_problems, lines)
        if tally is not None:
            tally["duplicateRecords"] = n_rec - len(keep)
        sub = subset(records, keep)
        chosen, has = counted(
            {**policy, "duplicates": "refuse"}, sub, index, source,
            contract=contract, check=check, rows=rows, max_problems=max_problems, tally=tally,
            lines=[lines[j] for j in keep],
        )  # fmt: skip
        return [None if c is None else int(keep[c]) for c in chosen], has
    if policy.get("unknown_rows") == "ignore" and unknown:
        known = np.array([r is not None for r in row_of], dtype=bool)
        if tally is not None:
            tally["ignoredRecords"] = int((~known).sum())
        keep = np.flatnonzero(known)
        sub = subset(records, keep)
        chosen, has = counted(
            {**policy, "unknown_rows": "refuse"}, sub, index, source,
            contract=contract, check=check, rows=rows, max_problems=max_problems,
            lines=[lines[j] for j in keep],
        )  # fmt: skip
        return [None if c is None else int(keep[c]) for c in chosen], has
    if check is not None and isinstance(row_of, _Positions):
        row_of = row_of.at.tolist()
    found = [] if check is None else list(check(row_of, records))
    if unknown or found.count(None) < len(found) or repeated:
        if keys is None:
            keys = list(
                zip(*(_read(records, f, f in required) for f in key_fields), orders, strict=True)
            )
        _refuse(
            row_ids, row_of, found, keys, orders, key_fields, order, source, rows, max_problems,
            lines, row_name(policy),
        )  # fmt: skip
    # No problem: each row's attempt that counts, by sorting the scored attempts.
    if rule == "first-success":
        eligible = scored & ~failed
    elif rule == "first-match":
        eligible = scored & all_of(policy.get("select"), rec_cols, n_rec)
    else:
        eligible = scored
    if by_row is not None:
        # the records by row, then order (no two alike): the eligible ones keep that order;
        # the first of each row counts, or for last its last
        cand = by_row[eligible[by_row]]
        r = row_arr[cand]
        head = np.ones(cand.size, dtype=bool)
        if rule in ("last", "last-any"):
            head[:-1] = r[1:] != r[:-1]
        else:
            head[1:] = r[1:] != r[:-1]
    else:
        cand = np.flatnonzero(eligible)
        r = row_arr[cand]
        o = order_arr[cand]
        # by row, then order (descending for last), then line: the first of each row counts
        by = np.lexsort((-o if rule in ("last", "last-any") else o, r))
        cand, r = cand[by], r[by]
        head = np.ones(cand.size, dtype=bool)
        head[1:] = r[1:] != r[:-1]
    best = np.full(n_rows, -1, dtype=np.int64)
    best[r[head]] = cand[head]
    has = best >= 0
    if rule in ("first", "last") and n_rec:
        # The attempt that counts failed: the row is unobserved (never a fallback).
        has &= ~failed[np.maximum(best, 0)]
    return Chosen.of(best, has), has


def _row_positions(records, name: list[str], row_ids: list, index: Mapping[Any, int]):
    """(each record's row index or None, the same as an array, None when a row is unknown):
    from the positions the reader found while holding the row ids once
    (:func:`prereg.columnar.shared_positions`, ``index.get`` of each id), else by looking each
    id up."""
    held = getattr(records, "positions", {}).get(name[0]) if len(name) == 1 else None
    if held is not None and held[0] is index and held[1].shape == (len(row_ids),):
        at = held[1]
        if not (at < 0).any():
            return _Positions(at), at
    if isinstance(index, HashIndex) and len(name) == 1:
        try:
            at = index.positions(row_ids)
        except TypeError:
            at = None
        if at is not None:
            if not (at < 0).any():
                return _Positions(at), at
            return [None if p < 0 else p for p in at.tolist()], None
    row_of = list(map(index.get, row_ids))
    if None in row_of:
        return row_of, None
    return row_of, np.asarray(row_of, dtype=np.int64).reshape(len(row_of))


class _Positions(Sequence):
    """Each record's row index, read from an array as a list would be (every row known)."""

    def __init__(self, at: np.ndarray):
        self.at = at

    def __len__(self) -> int:
        return len(self.at)

    def __getitem__(self, j):
        return int(self.at[j])

    def __contains__(self, v) -> bool:
        return v is not None and bool((self.at == v).any())


class Chosen(Sequence):
    """The record that counts per row, None where none does, read as a list reads (indexing,
    iteration, ``==`` a list), with the same as arrays: ``at`` (-1 for none) and ``present``.
    The list of Python values is built only when something reads it that way."""

    __slots__ = ("at", "present", "_list")

    def __init__(self, at: np.ndarray, present: np.ndarray):
        self.at = at
        self.present = present
        self._list: list | None = None

    @classmethod
    def of(cls, best: np.ndarray, has: np.ndarray) -> Chosen:
        has = np.asarray(has, dtype=bool).copy()
        return cls(np.where(has, best, -1).astype(np.int64), has)

    def tolist(self) -> list[int | None]:
        if self._list is None:
            values = self.at.astype(object)
            values[~self.present] = None
            self._list = values.tolist()
        return self._list

    def __len__(self) -> int:
        return int(self.at.size)

    def __getitem__(self, j):
        return self.tolist()[j]

    def __iter__(self):
        return iter(self.tolist())

    def __eq__(self, other) -> bool:
        if isinstance(other, Chosen):
            other = other.tolist()
        return self.tolist() == other

    def __repr__(self) -> str:
        return f"Chosen({self.tolist()!r})"

    __hash__ = None  # type: ignore[assignment]


def _row_order(key_fields, name, row_of: np.ndarray, o: np.ndarray):
    """(the records sorted by (row, order), stably, so by line within equal ones; their keys
    in that order) when the row's name is the whole key and the orders are integers whose
    span times the rows fits in int64: one sort of one integer key (a log written row by row
    is already in that order, which the stable sort finds in one pass). None otherwise."""
    if any(f not in name for f in key_fields) or o.dtype.kind != "i" or not o.size:
        return None
    if o.shape != row_of.shape:
        return None
    lo, hi = int(o.min()), int(o.max())
    span = hi - lo + 1
    rows = int(row_of.max()) + 1
    if rows * span >= 2**62:
        return None
    keys = row_of * span  # built in place: ten million records' temporaries are 80 MB each
    keys += o
    if lo:
        keys -= lo
    by = np.argsort(keys, kind="stable")
    return by, keys.take(by, out=keys)


def _distinct_keys(records, key_fields, name, required, row_of: np.ndarray, o: np.ndarray) -> bool:
    """Whether no two records share their (key, order), decided on integer codes: each
    record's row index stands for the fields that name its row (``row_of`` has no None), and
    each other key field is coded by a dict (so 1, 1.0 and True are one value, as in a tuple).
    False also where the codes cannot decide (an unhashable value, an order that is no
    number): the caller then compares tuples."""
    cols = [row_of]
    for f in key_fields:
        if f in name:
            continue
        codes: dict[Any, int] = {}
        values = _read(records, f, f in required)
        try:
            cols.append(
                np.fromiter(
                    (codes.setdefault(v, len(codes)) for v in values), np.int64, len(values)
                )
            )
        except TypeError:
            return False
    if o.dtype.kind not in "iuf" or o.shape != (len(row_of),):
        return False
    cols.append(o)
    if len(row_of) < 2:
        return True
    by = np.lexsort(cols[::-1])
    same = np.ones(by.size - 1, dtype=bool)
    for c in cols:
        s = c[by]
        same &= s[1:] == s[:-1]
    return not same.any()


def _raise(source: str, problems: list[str], max_problems: int) -> None:
    shown = problems[:max_problems]
    if len(problems) > max_problems:
        shown.append(f"… and {len(problems) - max_problems} more")
    raise UserError(f"{source}: {len(problems)} problem(s) in the observations", problems=shown)


def _orders(records, order: str | None, source: str, max_problems: int, lines) -> list[Any]:
    """Each record's order (0 for all without an order field); a missing, null or non-numeric
    order is refused at its line."""
    if order is None:
        return [0] * len(records)
    values = _read(records, order, False)
    kinds = set(map(type, values))
    if kinds <= {int, float}:  # numbers (a JSON number is never NaN)
        if float not in kinds or not any(v != v for v in values if type(v) is float):
            return values
    bad = [
        j
        for j, v in enumerate(values)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v
    ]
    if bad:
        _raise(
            source,
            [
                f"{located(source, lines[j])}: {order} is "
                + (json.dumps(records[j][order]) if order in records[j] else "absent")
                + f": the attempt policy orders a row's attempts by {order}, so every record"
                " needs a number there"
                for j in bad
            ],
            max_problems,
        )
    return values


def _dedupe(rule: str, records, keys, source: str, max_problems: int, lines) -> list[int]:
    """The records kept under a duplicates policy (``identical-once``, ``first``, ``last``), in
    line order; an ``identical-once`` repeat that differs from its first record is refused."""
    first: dict[tuple, int] = {}
    last: dict[tuple, int] = {}
    problems: list[str] = []
    keep: list[int] = []
    for j, k in enumerate(keys):
        if k not in first:
            first[k] = j
            keep.append(j)
        elif rule == "identical-once":
            a = json.dumps(records[first[k]], sort_keys=True, ensure_ascii=False)
            if json.dumps(records[j], sort_keys=True, ensure_ascii=False) != a:
                problems.append(
                    f"{located(source, lines[j])}: repeats the key of line {lines[first[k]]} with other"
                    " values"
                    " (duplicates: identical-once counts an identical copy once and refuses a"
                    " different one)"
                )
        last[k] = j
    if problems:
        _raise(source, problems, max_problems)
    if rule == "last":
        return sorted(last.values())
    return keep


def _refuse(
    row_ids, row_of, found, keys, orders, key_fields, order, source, rows, max_problems, lines,
    name,
):  # fmt: skip
    """Raise the problems of the records in line order (unknown rows, the engine's check,
    repeated attempts)."""
    problems: list[str] = []
    seen: dict[tuple, int] = {}
    for j, rid in enumerate(row_ids):
        line = lines[j]
        if row_of[j] is None:
            problems.append(
                f"{located(source, line)}: unknown row {name_text(name, rid)} (not in {rows})"
            )
            continue
        if found and found[j] is not None:
            problems.append(f"{located(source, line)}: {found[j]}")
            continue
        k = keys[j]
        first = seen.get(k)
        if first is not None:
            what = f"duplicate attempt {orders[j]} of " if order else "duplicate record of "
            problems.append(
                f"{located(source, line)}: {what}"
                + ", ".join(f"{f}={said(v)}" for f, v in zip(key_fields, k, strict=False))
                + f" (first on line {first}): repeats line {first}'s "
                + ", ".join(key_fields)
                + (
                    f" and {order}"
                    if order
                    else " (the attempt policy's duplicates: refuse; identical-once, first or"
                    " last registers another policy)"
                )
            )
            continue
        seen[k] = line
    _raise(source, problems, max_problems)


def row_names(
    policy: Mapping[str, Any], records: Sequence[Mapping[str, Any]], required=frozenset()
) -> list[Any]:
    """Each record's row name: the value of the first key field, or the tuple of the naming
    fields' values when several fields name a row (:func:`row_name`)."""
    name = row_name(policy)
    if len(name) == 1:
        return _read(records, name[0], name[0] in required)
    cols = [_read(records, f, f in required) for f in name]
    return list(zip(*cols, strict=True))


def _named(row_ids, name, records, source: str, max_problems: int, lines) -> None:
    """Refuse records whose row name has a null or absent field, each at its line."""
    if len(name) == 1:
        if None not in row_ids:  # C speed for the usual case
            return
        bad = [j for j, r in enumerate(row_ids) if r is None]
    else:
        bad = [j for j, r in enumerate(row_ids) if None in r]
    if not bad:
        return
    problems = []
    for j in bad:
        gone = [f for f in name if records[j].get(f) is None]
        which = ", ".join(f"{f} is " + ("null" if f in records[j] else "absent") for f in gone)
        problems.append(
            f"{located(source, lines[j])}: {which}, and the attempt policy's key names each row by"
            f" {', '.join(name)}"
        )
    _raise(source, problems, max_problems)


def name_text(fields: Sequence[str], value: Any) -> str:
    """A row name as a message shows it: ``id 'q1'`` for one field, else
    ``itemId='q1', rater='ann'``."""
    if not isinstance(value, tuple):
        return f"id {said(value)}"
    return ", ".join(f"{f}={said(v)}" for f, v in zip(fields, value, strict=True))


def manifest_name(
    policy: Mapping[str, Any], observation: Mapping[str, Any], items: Mapping[str, Any]
) -> list[str]:
    """The item manifest's fields that name a row as the policy's :func:`row_name` does: its
    field with role ``row`` for the first, and for each other naming field the manifest field
    of the same name, else the one holding the same factor (or the split). A naming field the
    manifest lacks raises ValueError (compile refuses such a study)."""
    obs = {f["name"]: f for f in observation.get("fields") or ()}
    fields = list(items.get("fields") or ())
    by_name = {f["name"]: f for f in fields}
    row = next((f["name"] for f in fields if f.get("role") == "row"), None)
    out = [row]
    for name in row_name(policy)[1:]:
        spec = obs.get(name) or {}
        if name in by_name:
            out.append(name)
            continue
        same = [
            f["name"]
            for f in fields
            if (spec.get("factor") and f.get("factor") == spec.get("factor"))
            or (spec.get("role") == "split" and f.get("role") == "split")
        ]
        if not same:
            raise ValueError(name)
        out.append(same[0])
    return out


def expansion_values(e: Mapping[str, Any]) -> list[Any]:
    """A row expansion's values: ``values`` as written, or 1 to ``count``."""
    if e.get("count") is not None:
        return list(range(1, int(e["count"]) + 1))
    return list(e.get("values") or ())


def expanded_manifest(
    policy: Mapping[str, Any],
    observation: Mapping[str, Any],
    items: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
) -> tuple[Mapping[str, Any], list[Mapping[str, Any]], Sequence[int]]:
    """(contract, records, manifest line of each record) of a manifest under the policy's
    ``expand``: each record becomes one row per combination of the expansion values (records
    in order, the last expansion varying fastest); the contract gains the expanded fields,
    with their factor, so that the rows are placed in cells by them."""
    import itertools

    exp = list(policy.get("expand") or ())
    columnar = isinstance(records, RecordColumns)
    if not exp:
        # a reader that knows each record's line says it (a CSV value may hold line breaks)
        known = getattr(records, "lines", None) if columnar else None
        lines = known if known is not None else range(1, len(records) + 1)
        return items, records if columnar else list(records), lines
    obs = {f["name"]: f for f in observation.get("fields") or ()}
    names = [e["field"] for e in exp]
    extra = [
        {k: v for k, v in obs[n].items() if k in ("name", "type", "factor", "role", "allowed")}
        for n in names
    ]
    contract = {**items, "fields": [*items["fields"], *extra]}
    combos = list(itertools.product(*(expansion_values(e) for e in exp)))
    if columnar:  # each column repeated per combination, the expanded fields cycling
        k = len(combos)
        columns = {n: [v for v in col for _ in combos] for n, col in records.columns.items()}
        for i, n in enumerate(names):
            columns[n] = [c[i] for c in combos] * len(records)
        absent = {n: c * k for n, c in records.absent.items() if n not in names}
        lines = [n for n in range(1, len(records) + 1) for _ in combos]
        out_names = [*records.names, *(n for n in names if n not in records.names)]
        return contract, RecordColumns(out_names, columns, k * len(records), absent), lines
    out: list[Mapping[str, Any]] = []
    lines: list[int] = []
    for n, rec in enumerate(records, start=1):
        for combo in combos:
            out.append({**rec, **dict(zip(names, combo, strict=True))})
            lines.append(n)
    return contract, out, lines


def record_columns(
    records: Sequence[Mapping[str, Any]],
    chosen: Sequence[int | None],
    names: Sequence[str],
    *,
    contract: Mapping[str, Any] | None = None,
) -> dict[str, Column]:
    """One column per observation field: the counted record's value per row (null if none)."""
    required = required_fields(contract)
    if isinstance(chosen, Chosen):
        present, at = chosen.present, chosen.at
    else:
        present = np.array([c is not None for c in chosen], dtype=bool)
        at = np.fromiter((-1 if c is None else c for c in chosen), np.int64, len(chosen))
    if isinstance(records, RecordColumns):  # each field's column, taken at the counted records
        out = {}
        for name in names:
            col = _column(records, name, name in required)
            if col.kind == "mixed":  # the counted records' own kind, as for dicts
                col = Column.of(_read(records.take(at[present]), name, name in required))
                out[name] = col.take(np.cumsum(present) - 1, present)
            else:
                col = col.take(at, present)
                if col.kind != "number" and col.null.all():  # no value: as Column.of([None...])
                    col = Column.numbers(np.full(len(chosen), np.nan))
                out[name] = col
        return out
    counted_records = subset(records, [c for c in chosen if c is not None])
    pos = np.cumsum(present) - 1  # row -> its position among the counted records
    return {
        name: Column.of(_read(counted_records, name, name in required)).take(pos, present)
        for name in names
    }
