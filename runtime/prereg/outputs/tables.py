"""Flat tables of a SCORE.json for pandas, R or Arrow users: ``prereg tables``.

One table per list of rows: ``cells`` (per-cell figures), ``estimates`` and ``contrasts``,
``analyses`` (the registered analyses: method, options, every figure of the method's result)
and ``auroc`` where the engine writes it.  Nested objects become dotted column names
(``metrics.accuracy.estimate``, ``a.k``, ``levels.position``, ``options.lower``,
``exact.estimate``); lists become their JSON text;
columns follow the order of first appearance.  Written as CSV (RFC 4180, a header line,
empty cells for null) or, with the optional extra ``prereg[tables]`` (pyarrow), as Parquet.
A table without rows still has its columns: those every row of it must have, by the shipped
output schemas (:func:`empty_columns`), so a reader gets an empty frame, not a parse error.
Every table of one call is created or none (files are never overwritten).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prereg.errors import UserError
from prereg.files import make_parents, write_files_new

TABLES = ("cells", "estimates", "contrasts", "analyses", "auroc")
MAX_DEPTH = 64  # a score document's figures nest a few levels; deeper is not one


def _too_deep(doc: Any) -> str | None:
    """The JSON path of the first value nested deeper than :data:`MAX_DEPTH`, or None."""
    from prereg.records import json_path

    stack: list[tuple[tuple, Any]] = [((), doc)]
    while stack:
        where, v = stack.pop()
        if len(where) > MAX_DEPTH:
            return json_path(where[: MAX_DEPTH + 1])
        if isinstance(v, dict):
            stack.extend((where + (k,), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((where + (i,), x) for i, x in enumerate(v))
    return None


def flatten(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``row`` with nested objects as dotted columns; :class:`_Clash` (its column) when two
    keys give one column (``"a.b"`` beside ``{"a": {"b": ...}}``)."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            inner = flatten(v, name + ".")
            clash = next((c for c in inner if c in out), None)
            if clash is not None:
                raise _Clash(clash)
            out.update(inner)
            continue
        if name in out:
            raise _Clash(name)
        if isinstance(v, list | tuple):
            out[name] = json.dumps(v, ensure_ascii=False)
        else:
            out[name] = v
    return out


def table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, flattened rows) of ``rows``; :class:`_Clash` (row, column) when two keys of
    a row flatten to one column."""
    flat = []
    for i, r in enumerate(rows):
        try:
            flat.append(flatten(r))
        except _Clash as clash:
            raise _Clash(i, clash.args[0]) from None
    columns: dict[str, None] = {}
    for r in flat:
        columns.update(dict.fromkeys(r))
    return list(columns), flat


# where the shipped schemas define each table's row: (schema name, JSON pointer to the row)
_ROW_SCHEMAS = {
    "cells": ("factorial-score", ("$defs", "cell")),
    "estimates": ("decide-rows", ("$defs", "estimate")),
    "contrasts": ("decide-rows", ("$defs", "contrast")),
    "analyses": ("factorial-score", ("$defs", "analysis")),
    "auroc": ("reachability-score", ("$defs", "document", "properties", "auroc", "items")),
}


def _required_columns(row_schema: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The dotted columns every row holding to ``row_schema`` has: its required keys, a
    required object with fixed properties opened into its own required keys (an object keyed
    by the spec's ids, like ``metrics`` or ``levels``, has no fixed columns)."""
    props = row_schema.get("properties", {})
    out: list[str] = []
    for key in row_schema.get("required", []):
        sub = props.get(key, {})
        if sub.get("type") == "object":
            if sub.get("properties"):
                out += _required_columns(sub, f"{prefix}{key}.")
            continue
        out.append(prefix + key)
    return out


def empty_columns(name: str) -> list[str]:
    """The columns of table ``name`` when the score has no rows for it."""
    from prereg import outputs

    node: Any = outputs.schema(_ROW_SCHEMAS[name][0])
    for part in _ROW_SCHEMAS[name][1]:
        node = node[part]
    return _required_columns(node)


def tables_of(doc: Mapping[str, Any], where: str) -> dict[str, tuple[list[str], list[dict]]]:
    """The tables of a score document (a SCORE.json of any engine that writes cells)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("cells"), list):
        raise UserError(f"{where}: not a score document (no list of cells at /cells)")
    found = {}
    for name in TABLES:
        if name not in doc:
            continue
        rows = doc[name]
        if not isinstance(rows, list):
            raise UserError(
                f"{where}: at /{name}: expected a list of rows (objects), got {_kind(rows)}"
            )
        for i, r in enumerate(rows):
            if not isinstance(r, Mapping):
                raise UserError(
                    f"{where}: at /{name}/{i}: expected a row of the {name} table (an object),"
                    f" got {_kind(r)}"
                )
        try:
            found[name] = table(rows) if rows else (empty_columns(name), [])
        except _Clash as clash:
            i, column = clash.args
            raise UserError(
                f"{where}: at /{name}/{i}: two keys flatten to the column {column!r} (a key"
                " with a dot beside an object); a column holds one value"
            ) from None
    return found


def _kind(v: Any) -> str:
    """The JSON type of ``v`` in words."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return "a list" if isinstance(v, list) else "an object"


class _Clash(Exception):
    """Two keys of row i flatten to one column."""


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def csv_bytes(columns: list[str], rows: list[dict[str, Any]]) -> bytes:
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_text(r.get(c)) for c in columns])
    return buf.getvalue().encode("utf-8")


def parquet_bytes(columns: list[str], rows: list[dict[str, Any]]) -> bytes:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(
            "--parquet: writing Parquet needs the optional extra prereg[tables] (pyarrow)"
        ) from None
    data = {c: [r.get(c) for r in rows] for c in columns}
    try:
        # a table without rows keeps its columns (typed null: there is no value to type them by)
        t = pa.table(data) if rows else pa.table({c: pa.array([], pa.null()) for c in columns})
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in a column: keep them as text
        t = pa.table({c: [None if v is None else _text(v) for v in vs] for c, vs in data.items()})
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink)
    return sink.getvalue().to_pybytes()


def write_tables(score: str | Path, csv_dir: str | Path | None, parquet_dir: str | Path | None):
    """Write the tables of ``score``; returns the paths written.  The score is read as every
    JSON input is (:func:`prereg.records.read_json_file`: a regular file, strict JSON, no NaN,
    no duplicate key, no integer beyond 2^53)."""
    from prereg.records import read_json_file

    path = Path(score)
    doc = read_json_file(path, missing="the SCORE.json to tabulate")
    deep = _too_deep(doc)
    if deep is not None:
        raise UserError(f"{path}: at {deep}: nested more than {MAX_DEPTH} levels deep")
    found = tables_of(doc, str(path))
    files = []
    folders = []
    for folder, suffix, render in (
        (csv_dir, ".csv", csv_bytes),
        (parquet_dir, ".parquet", parquet_bytes),
    ):
        if folder is None:
            continue
        folder = Path(folder)
        try:
            if folder.exists() and not folder.is_dir():
                raise UserError(f"{folder}: exists and is not a folder")
        except OSError as exc:  # a name past the length limit, a loop of links
            raise UserError(f"{folder}: cannot write there: {exc.strerror or exc}") from None
        folders.append(folder)
        files += [(folder / f"{name}{suffix}", render(*t), 0o644) for name, t in found.items()]
    if not files:
        raise UserError("tables: give --csv DIR and/or --parquet DIR")
    made = []  # folders created here, removed again when the tables cannot all be written
    try:
        for folder in folders:
            made += make_parents(folder / "_")
        write_files_new(files)
    except BaseException:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return [p for p, _, _ in files]
