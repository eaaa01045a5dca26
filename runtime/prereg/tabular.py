"""Records of a JSONL contract read from a file chosen by its extension.

A record contract of format ``jsonl`` describes one JSON object per line; the same records can
come as columns: ``.parquet`` (Apache Parquet) and ``.csv`` (a header line naming the fields)
are read by pyarrow, ``.jsonl`` and every other name by the strict JSONL reader
(:func:`prereg.records.read_jsonl_records`). Columnar records are checked against the same
contract schema, record by record, and every problem is located in the file's own terms:

- Parquet: ``FILE: row group G, row R`` (R counts from 1 within the row group) and the field;
- CSV: ``FILE:LINE`` (the header is line 1; a record starts on the line after the one
  before it ended, as a quoted value may hold line breaks) and the field.

A column named twice is refused.

A column the contract does not name is refused (as an unknown key is), and so is a file that
pyarrow cannot read, naming it. A null in a column whose field is not nullable means the
field is absent from that record (a required field is then reported missing), so a table with
optional fields carries the same records as the JSONL file that leaves them out. CSV cells are
converted by the contract's field types (an empty cell is a null; ``true``/``false`` are
booleans), never guessed.

pyarrow is imported only when such a file is read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from prereg.errors import UserError
from prereg.records import (
    INT64_RANGE,
    _refuse_problems,
    integer_beyond_64_bits,
    not_utf8,
    read_jsonl_records,
    schema_problems,
    text_head_problem,
)

#: File extensions read as columns, and the name of their reader.
COLUMNAR = {".parquet": "Parquet", ".csv": "CSV"}

#: The extension of a JSON document that may hold an array of records (a ``.json`` file whose
#: first character is not ``[`` is read as JSONL, as any other name is).
JSON_ARRAY = ".json"


def is_json_array(path) -> bool:
    """Whether ``path`` is a ``.json`` file whose text starts (after blanks) with ``[``: one
    JSON document holding an array of records."""
    path = Path(path)
    if path.suffix.lower() != JSON_ARRAY or not _is_file(path):
        return False
    try:
        with path.open("rb") as f:
            head = f.read(4096)
            while head and not head.lstrip(b" \t\r\n"):
                head = f.read(4096)
    except OSError:
        return False  # the reader names it
    return head.lstrip(b" \t\r\n")[:1] == b"["


def read_contract_records(
    path, schema_path: Path, fields: Sequence[Mapping[str, Any]], *, max_problems: int = 50
) -> list[dict]:
    """Every record of ``path`` (by its extension: Parquet, CSV, else JSONL) valid against the
    contract schema, or one UserError listing the located problems."""
    path = Path(path)
    kind = COLUMNAR.get(path.suffix.lower())
    if is_json_array(path):
        from prereg.records import read_json_array_records

        return read_json_array_records(path, schema_path, max_problems=max_problems)[0]
    if kind is None:
        return read_jsonl_records(path, schema_path, max_problems=max_problems)
    try:
        import pyarrow  # noqa: F401
    except ImportError:  # pragma: no cover - pyarrow is a dependency of the runtime
        raise UserError(f"{path}: reading {kind} needs pyarrow; install it or give JSONL") from None
    if not _is_file(path):
        if path.is_dir():
            raise UserError(
                f"{path}: cannot read: a folder, not a regular file; a {kind} input is one file"
                + (
                    " (a folder of Parquet parts, as Spark or pandas' partition_cols write, is"
                    " not read: write the table as one file, with several row groups for"
                    " --workers)"
                    if kind == "Parquet"
                    else ""
                )
            )
        if not path.exists() and not path.is_symlink():  # said as the JSONL reader says it
            raise UserError(f"{path}: cannot read: No such file or directory")
        raise UserError(f"{path}: cannot read: not a regular file")
    if kind == "CSV":
        _refuse_nested_csv(path, schema_path, fields)
    if kind == "Parquet":
        parts = _parquet_parts(path, fields)
    else:
        parts = _csv_parts(path, _file_fields(fields))
    return _checked(path, schema_path, fields, parts, max_problems)


def read_contract_columns(
    path,
    schema_path: Path,
    fields: Sequence[Mapping[str, Any]],
    *,
    max_problems: int = 50,
    parallel: Mapping[str, Any] | None = None,
    share: Mapping[str, tuple[Mapping[Any, int], Sequence[Any]]] | None = None,
):
    """:func:`read_contract_records`'s records as :class:`prereg.columnar.RecordColumns`; a
    JSONL file in partitions on worker processes or a Dask cluster with ``parallel``
    (``{"workers", "scheduler", "size"}``, see :mod:`prereg.partitioned`); ``share``
    ({field: (index, ids)}) holds a field's strings once
    (:func:`prereg.columnar.shared_positions`)."""
    path = Path(path)
    if is_json_array(path):  # one document: read whole, in one process
        from prereg.columnar import RecordColumns
        from prereg.records import read_json_array_records

        rows, lines = read_json_array_records(path, schema_path, max_problems=max_problems)
        out = RecordColumns.from_dicts(
            [f["name"] for f in fields],
            rows,
        )
        out.lines = lines
        for name, (index, ids) in (share or {}).items():
            out.share(name, index, ids)
        return out
    if path.suffix.lower() not in COLUMNAR:
        if parallel:
            from prereg import partitioned

            return partitioned.read_jsonl_columns(
                path, schema_path, max_problems=max_problems, share=share, **parallel
            )
        from prereg.records import read_jsonl_columns

        return read_jsonl_columns(path, schema_path, max_problems=max_problems, share=share)
    from prereg.columnar import RecordColumns

    # a FIFO or a folder is refused by the record reader, never opened by pyarrow here; a
    # contract with paths is read record by record (its fields are not the file's columns)
    nested = any(f.get("path") for f in fields)
    fast = None
    if _is_file(path) and not nested:
        fast = _columns_at_once(path, schema_path, fields, share)
    if fast is None:
        rows = read_contract_records(path, schema_path, fields, max_problems=max_problems)
        fast = RecordColumns.from_dicts([f["name"] for f in fields], rows)
        for name, (index, ids) in (share or {}).items():
            fast.share(name, index, ids)
    if path.suffix.lower() == ".csv":
        fast.lines = CsvLines(path, fast.n)  # the attempt policy's and placement's messages
    return fast


class CsvLines(Sequence):
    """The line each record of a CSV file starts on, worked out at the first look (only a
    message needs it): see :func:`_csv_record_lines`."""

    def __init__(self, path: Path, n: int):
        self.path, self.n = path, n
        self._lines: Sequence[int] | None = None

    def _all(self) -> Sequence[int]:
        if self._lines is None:
            self._lines = _csv_record_lines(self.path, self.n)
        return self._lines

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return self._all()[i]


def _one_line(exc) -> str:
    """pyarrow's words for a file it cannot read, on one line (a damaged page's message runs
    over several, with blank lines)."""
    return " ".join(str(exc).split())


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; a path the system cannot look up (a name past its
    length limit, a loop of links) is a UserError naming it (Path.is_file raised them)."""
    try:
        return path.is_file()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _file_fields(fields: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The contract's fields as a file's columns name them: a field at a one-key ``path``
    under that key; a field deeper down has no column of its own (it lies in a struct column)
    and is left out."""
    out: list[Mapping[str, Any]] = []
    for f in fields:
        p = f.get("path")
        if not p:
            out.append(f)
        elif len(p) == 1:
            out.append({**f, "name": p[0]})
    return out


def _refuse_nested_csv(path: Path, schema_path: Path, fields: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a CSV file for a contract with a field below the top of a record (a path of
    more than one key): a CSV cell holds no object."""
    deep = next((f for f in fields if len(f.get("path") or ()) > 1), None)
    if deep is not None:
        raise UserError(
            f"{path}: field {deep['name']!r} of the record contract ({schema_path.name}) lies at"
            f" {'.'.join(deep['path'])} (path {json.dumps(deep['path'], ensure_ascii=False)}),"
            " inside an object, which a CSV file's cells cannot hold; give the records as JSONL,"
            " a JSON array or Parquet (struct columns)"
        )


def _columns_at_once(
    path: Path, schema_path: Path, fields: Sequence[Mapping[str, Any]], share=None
):
    """The records of a Parquet or CSV file as columns, each column converted by pyarrow and
    checked whole against its field's msgspec type (the typed JSONL reader's, see
    :mod:`prereg.records`), or None when that check cannot vouch for every record; then the
    record-by-record reader reads the file and words its problems. ``share`` as
    :func:`tables_columns`."""
    checks = _column_types(schema_path, fields)
    if checks is None:
        return None
    kind = COLUMNAR[path.suffix.lower()]
    # a field every record must write with a value: a blank line, read as a record of empty
    # cells, is refused by its column, so the CSV file needs no scan for blank lines first
    guarded = bool(checks[1] - checks[2])
    listed = _listed_strings(checks[0], fields)

    def tables():  # a row group (a block) at a time: its Arrow table dropped once converted
        try:
            if kind == "Parquet":
                for _where, table in _parquet_parts(path, fields, listed):
                    yield table
                    del table
                    _release_arrow_memory()
            else:
                for table in _csv_blocks(path, fields, guarded, listed):
                    yield table
                    del table
                    _release_arrow_memory()
        except UserError:
            raise _Unvouched from None

    try:
        out = tables_columns(schema_path, fields, tables(), share)
    except _Unvouched:
        return None
    finally:
        _release_arrow_memory()
    return None if out is None or out.n == 0 else out


def _listed_strings(props: Mapping[str, Any], fields: Sequence[Mapping[str, Any]]) -> frozenset:
    """The string fields whose schema lists their values (``enum``: a factor's levels, a
    split): the column check reads them as Arrow dictionaries, each distinct string decoded
    once instead of once a row (then encoded again by :func:`_column_values`)."""
    return frozenset(
        f["name"]
        for f in fields
        if f.get("type", "string") == "string" and "enum" in (props.get(f["name"]) or {})
    )


def _release_arrow_memory() -> None:
    """Give back to the system what Arrow's memory pool keeps of the blocks it has freed (a
    1M-row CSV manifest leaves about 130 MB mapped until then, which the next file's
    reading would add to)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


class _Unvouched(Exception):
    """A file the column check cannot read: the record-by-record reader words why."""


def _column_types(schema_path: Path, fields: Sequence[Mapping[str, Any]]):
    """(schema properties, required fields, nullable fields, msgspec type and pattern of each
    field) of a contract whose every field the column check can vouch for, else None."""
    from prereg.records import _scalar_type

    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or schema.get("additionalProperties", True) is not False:
        return None
    if schema.get("x-prereg-paths"):
        return None  # fields read from below the top, or renamed: record by record
    required = set(schema.get("required") or ())
    names = [f["name"] for f in fields]
    if set(names) != set(props):
        return None
    nullable = {f["name"] for f in fields if f.get("nullable")}
    types = {}
    patterns = {}
    for name in names:
        t = _scalar_type(props[name])
        if t is None:
            return None
        types[name] = t
        if "pattern" in props[name] and "enum" not in props[name]:
            try:
                patterns[name] = re.compile(props[name]["pattern"])
            except (re.error, TypeError):
                return None
    return props, required, nullable, types, patterns


def tables_columns(schema_path: Path, fields: Sequence[Mapping[str, Any]], tables, share=None):
    """The records of pyarrow ``tables`` (a file's row groups, or a partition's) as one
    :class:`prereg.columnar.RecordColumns`, each column checked whole as
    :func:`_columns_at_once` checks it, or None when that check cannot vouch for every
    record. ``share`` ({field: (index, ids)}) holds a field's strings once, table by table
    (:func:`prereg.columnar.shared_positions`), so that a file's copies are freed as it is
    read."""
    import math

    import msgspec
    import numpy as np
    import pyarrow as pa

    from prereg.columnar import ABSENT, RecordColumns, shared_positions

    checks = _column_types(schema_path, fields)
    if checks is None:
        return None
    props, required, nullable, types, patterns = checks
    names = [f["name"] for f in fields]
    columns: dict[str, list] = {name: [] for name in names}
    absent = dict.fromkeys(names, 0)
    share = {name: s for name, s in (share or {}).items() if name in columns}
    found: dict[str, list | None] = {name: [] for name in share}
    n = 0
    for table in tables:
        if any(c not in props for c in table.column_names):
            return None
        k = table.num_rows
        for name in names:
            if name not in table.column_names:  # no column: every record leaves it out
                if name in required and k:
                    return None
                columns[name].extend([ABSENT] * k)
                absent[name] += k
                if name in share:
                    found[name] = None  # no positions for the blocks without it
                continue
            arrow = table.column(name)
            kind = next(f.get("type", "string") for f in fields if f["name"] == name)
            if kind in _ARROW_WORDS and not _arrow_fits(kind, arrow.type):
                return None
            col, values = _column_values(arrow)
            if name not in nullable and arrow.null_count:  # a null is the field left out
                if name in required:
                    return None
                absent[name] += arrow.null_count
                col = [ABSENT if v is None else v for v in col]
                values = [v for v in values if v is not None]
            try:
                msgspec.convert(values, list[types[name]])
            except (msgspec.ValidationError, TypeError, ValueError):
                return None
            # an integer column's value of a number field is one a double holds as written
            # (records.integer_as_double): any other is worded record by record
            if (
                kind == "number"
                and pa.types.is_integer(arrow.type)
                and any(type(v) is int and not -(2**53) <= v <= 2**53 for v in values)
            ):
                return None
            # a float comes only from a column of floats (of which msgspec let NaN through)
            if pa.types.is_floating(arrow.type) and any(
                type(v) is float and not math.isfinite(v) for v in values
            ):
                return None
            rx = patterns.get(name)
            if rx is not None and not all(rx.search(v) for v in values if type(v) is str):
                return None
            if name in share and col:
                col, at = shared_positions(col, *share[name])
                if found[name] is not None:
                    found[name] = None if at is None else [*found[name], at]
            columns[name].extend(col)
        n += k
    out = RecordColumns(names, columns, n, absent)
    for name, ats in found.items():
        if ats and n:
            out.positions[name] = (share[name][0], np.concatenate(ats))
    return out


#: a string column's first rows looked at, and the least number of them per distinct value,
#: for its rows to share their strings (:func:`_column_values`)
_SAMPLE, _SHARED = 4096, 8


def _column_values(arrow) -> tuple[list, list]:
    """(each row's value of an Arrow column, as Python values; the values to check): a string
    column's rows share one Python string per distinct value (a million rows of four models
    hold four strings, not a million), and only its distinct values are checked, as only an
    integer or boolean column's are."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arrow.type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        col = arrow.to_pylist()
        if pa.types.is_integer(arrow.type) or pa.types.is_boolean(arrow.type):
            # a value's check does not depend on the others: its distinct values are checked
            return col, pc.unique(arrow).to_pylist()
        return col, col
    whole = arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow
    if not pa.types.is_dictionary(whole.type):
        # a column of ids (as many strings as rows) gains nothing from sharing and costs a
        # hash of every row: its first rows tell which kind of column it is
        head = whole.slice(0, _SAMPLE)
        if len(pc.unique(head)) * _SHARED > len(head):
            col = whole.to_pylist()
            return col, col
    coded = whole if pa.types.is_dictionary(whole.type) else pc.dictionary_encode(whole)
    distinct = coded.dictionary.to_pylist()
    at = coded.indices
    if coded.null_count:
        at = pc.fill_null(at, len(distinct))
        distinct.append(None)
    table = np.empty(len(distinct), dtype=object)
    table[:] = distinct
    return table[_indices(at)].tolist(), distinct


def _indices(at):
    """A dictionary's indices (an Arrow integer array without nulls) as a numpy view of its
    buffer: ``to_numpy`` would import pandas (about 0.3 s of a score's start)."""
    import numpy as np
    import pyarrow as pa

    kind = "i" if pa.types.is_signed_integer(at.type) else "u"
    width = at.type.byte_width
    return np.frombuffer(
        at.buffers()[1], dtype=f"<{kind}{width}", count=len(at), offset=at.offset * width
    )


def _parquet_parts(
    path: Path, fields: Sequence[Mapping[str, Any]] | None = None, dictionary=frozenset()
):
    """(label of a record's location, table) for each row group of a Parquet file; the string
    columns named in ``dictionary`` are read as Arrow dictionaries (the same values)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a readable Parquet file: {_one_line(exc)}") from None
    schema = pf.schema_arrow
    _unique_columns(path, schema.names)
    if fields is not None:
        problem = _column_types_problem(path, fields, schema)
        if problem is not None:
            raise UserError(problem)
    coded = [
        n for n in schema.names if n in dictionary and pa.types.is_string(schema.field(n).type)
    ]
    if coded:
        try:
            pf = pq.ParquetFile(path, read_dictionary=coded)
        except (pa.ArrowException, OSError) as exc:
            raise UserError(f"{path}: not a readable Parquet file: {_one_line(exc)}") from None
    for g in range(pf.num_row_groups):
        try:
            table = pf.read_row_group(g)
        except (pa.ArrowException, OSError) as exc:
            raise UserError(f"{path}: row group {g}: cannot read: {_one_line(exc)}") from None
        yield (lambda i, g=g: f"{path}: row group {g}, row {i + 1}"), as_written(table)


def as_written(table):
    """``table`` with each column of single- or half-precision floats read as the double of
    its shortest decimal (a float32 0.1 is the decimal 0.1, as the tool that wrote it meant,
    not 0.10000000149011612): Arrow writes a float32 as its shortest round-trip decimal, and a
    number in a CSV or JSONL file enters exact figures as the decimal written."""
    import pyarrow as pa

    for i, t in enumerate(table.schema.types):
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            # a profiler's or a pandas timestamp, read by a string field as its ISO 8601 text
            table = table.set_column(
                i, table.schema.field(i).with_type(pa.string()), _iso_text(table.column(i))
            )
        elif pa.types.is_float32(t) or pa.types.is_float16(t):
            col = table.column(i).cast(pa.string()).cast(pa.float64())
            table = table.set_column(i, table.schema.field(i).with_type(pa.float64()), col)
        elif pa.types.is_struct(t) and _short_floats(t, pa):  # a nested log's struct column
            col = table.column(i).cast(_widened(t, pa.string(), pa))
            col = col.cast(_widened(t, pa.float64(), pa))
            table = table.set_column(i, table.schema.field(i).with_type(col.type), col)
    return table


def _iso_text(column):
    """A timestamp or date column as ISO 8601 text: ``2026-12-01T09:00:00.250000`` (the
    fraction's digits those of the column's unit, none for seconds), a time zone's offset
    after it (``Z`` for UTC, ``+0100``), a date as ``2026-12-01``; nulls stay null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = column.cast(pa.string())
    if pa.types.is_timestamp(column.type):
        text = pc.replace_substring(text, " ", "T", max_replacements=1)
    return text


def _short_floats(t, pa) -> bool:
    """Whether a struct type holds a single- or half-precision float at any depth."""
    if pa.types.is_struct(t):
        return any(_short_floats(f.type, pa) for f in t)
    return pa.types.is_float32(t) or pa.types.is_float16(t)


def _widened(t, to, pa):
    """A struct type with each single- or half-precision float in it made ``to``."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _widened(f.type, to, pa), f.nullable) for f in t])
    return to if pa.types.is_float32(t) or pa.types.is_float16(t) else t


_CSV_TYPES = {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool_"}

#: How a Parquet file writes a field of each type, in words, and the Arrow types that hold it.
_ARROW_WORDS = {
    "string": "a string column (or a timestamp or date column, read as its ISO 8601 text)",
    "integer": "an integer column (int8 to int64, uint8 to uint64)",
    "number": "an integer or floating-point column (float32, float64)",
    "boolean": "a boolean column",
}


def _arrow_fits(kind: str, t) -> bool:
    """Whether an Arrow column type holds values of a contract field's ``kind``."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):
        return True
    if kind == "string":
        # a timestamp or date column is read as its ISO 8601 text (as_written)
        return (
            pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_timestamp(t)
            or pa.types.is_date(t)
        )
    if kind == "integer":
        return pa.types.is_integer(t)
    if kind == "number":
        return pa.types.is_integer(t) or pa.types.is_floating(t)
    if kind == "boolean":
        return pa.types.is_boolean(t)
    return True  # object and array fields: their values are checked one by one


def _column_types_problem(path: Path, fields: Sequence[Mapping[str, Any]], schema) -> str | None:
    """Why a Parquet file's columns cannot hold their fields (a column of doubles for an
    integer field, timestamps or decimals for a number, lists or structs for a string), or
    None: a refusal naming each column once, where every row would be refused alike."""
    import pyarrow as pa

    kinds = {f["name"]: f.get("type", "string") for f in _file_fields(fields)}
    wrong = []
    for name, t in zip(schema.names, schema.types, strict=True):
        kind = kinds.get(name)
        if kind in _ARROW_WORDS and not _arrow_fits(kind, t):
            hint = ""
            if kind == "integer" and pa.types.is_floating(t):
                hint = (
                    f" (a double need not hold the integer written; pandas writes an integer"
                    f" column with missing values as doubles: df[{name!r}].astype('Int64')"
                    " writes integers and nulls)"
                )
            elif pa.types.is_decimal(t):
                hint = (
                    " (write it as int64)"
                    if kind == "integer"
                    else " (write it as float64: a number is read as a double)"
                )
            wrong.append(
                f"column {name!r} is {t}; field {name} is {kind}, which needs {_ARROW_WORDS[kind]}{hint}"
            )
    wrong.extend(_struct_problems(fields, schema))
    if not wrong:
        return None
    return f"{path}: " + "; ".join(wrong)


def _struct_problems(fields: Sequence[Mapping[str, Any]], schema) -> list[str]:
    """Why a Parquet file's struct columns cannot hold the fields below the top of a record
    (a path through a column that is no struct, a value of the wrong type at its end), each
    once: every row would be refused alike. A key the struct lacks leaves the field absent
    (the rows say whether that is allowed)."""
    import pyarrow as pa

    wrong = []
    broken: dict[tuple, list[str]] = {}  # the fields below each object that is no struct
    for f in fields:
        p = f.get("path") or ()
        if len(p) < 2 or p[0] not in schema.names:
            continue
        t = schema.field(p[0]).type
        for n, key in enumerate(p[1:], start=1):
            if pa.types.is_null(t):
                break
            if not pa.types.is_struct(t):
                if p[:n] not in broken:
                    broken[p[:n]] = []
                    wrong.append((p[:n], t))
                broken[p[:n]].append(f["name"])
                break
            at = t.get_field_index(key)
            if at < 0:
                break
            t = t.field(at).type
        else:
            kind = f.get("type", "string")
            if kind in _ARROW_WORDS and not _arrow_fits(kind, t):
                wrong.append(
                    f"{'.'.join(p)} in column {p[0]!r} is {t}; field {f['name']} is {kind},"
                    f" which needs {_ARROW_WORDS[kind]}"
                )
    return [
        w
        if isinstance(w, str)
        else f"{'.'.join(w[0])} in column {w[0][0]!r} is {w[1]}; field(s)"
        f" {', '.join(broken[w[0]])} lie inside it, so it must be a struct (an object in each"
        " record)"
        for w in wrong
    ]


def _csv_parts(path: Path, fields: Sequence[Mapping[str, Any]]):
    """(label of a record's location, table) for a CSV file, its cells converted by the
    contract's field types."""
    import pyarrow as pa

    _refuse_blank_lines(path)
    convert, types, tokens = _csv_convert(fields)
    try:
        table = _read_csv(path, convert)
    except pa.ArrowInvalid as exc:
        _refuse_cells(path, fields, exc)
    except (pa.ArrowException, OSError) as exc:
        _refuse_unreadable(path, exc)
    _unique_columns(path, table.column_names)
    _refuse_imprecise(path, [f["name"] for f in fields if f.get("type") == "number"], table)
    if tokens:
        table = _tokens_to_null(path, fields, table, tokens, types)
    yield _csv_where(path, table.num_rows), table


def _read_csv(path: Path, convert):
    """pyarrow's table of a whole CSV file; a record longer than two of its blocks (a cell of
    tens of megabytes), which pyarrow refuses in words about its blocks, is read again in one
    block the size of the file."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        return pcsv.read_csv(
            path, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK), convert_options=convert
        )
    except pa.ArrowInvalid as exc:
        if "straddl" not in str(exc):
            raise
    size = min(path.stat().st_size + 1, (1 << 31) - 1)
    return pcsv.read_csv(
        path, read_options=pcsv.ReadOptions(block_size=size), convert_options=convert
    )


#: A blank line in a CSV file's bytes (or one that may be: inside a quoted cell it is text).
def _blank_in(data: bytes) -> bool:
    """Whether ``data`` holds an empty line: a line feed followed by another, alone or after a
    carriage return, or two carriage returns (lines ended by CR alone)."""
    return b"\n\n" in data or b"\n\r\n" in data or b"\r\r" in data


class _Marks(NamedTuple):
    """What one pass over a CSV file's bytes found (:func:`_csv_marks`): candidates, each then
    located (and decided) by its own reader."""

    mark: bool  # a NUL byte, or a byte-order mark past the file's start
    cr: bool  # a carriage return
    blank: bool  # a blank line, or one inside a quoted cell
    header: bool  # the header's bytes again as a whole line


def _csv_marks(path: Path, blank: bool = True) -> _Marks:
    """One pass over a CSV file's bytes, block by block, for every text rule's candidate (the
    rules' own scans each read the file again: 0.17 s of a 1M-row CSV score in four passes).
    Without ``blank`` no blank line is looked for (the dearest search: three two-byte
    patterns); ``blank`` is then reported as possible wherever a carriage return is, which
    makes a caller that skips the blank-line rule (:func:`_csv_tables`' ``guarded``) apply
    it."""
    bom, look_blank = b"\xef\xbb\xbf", blank
    try:
        with path.open("rb") as f:
            head = f.read(1 << 16).removeprefix(bom)
            header = head.split(b"\n", 1)[0].split(b"\r", 1)[0]
            lines = [a + header + z for a in (b"\n", b"\r") for z in (b"\n", b"\r")]
            keep = max(len(header) + 2, 3)
            f.seek(0)
            mark = cr = blank = again = False
            tail, start, offset = b"", True, 0
            while block := f.read(CSV_BLOCK):
                edge = tail[-keep:] + block[:keep]  # what spans the blocks' boundary
                mark = mark or b"\0" in block or block.find(bom, 1 if start else 0) >= 0
                # one spanning the boundary, unless it is the file's leading one (offset 0)
                spans = (tail[-2:] + block[:2]).find(bom)
                mark = mark or (spans >= 0 and offset - len(tail[-2:]) + spans > 0)
                if mark:
                    break  # refused before the other rules
                cr = cr or b"\r" in block
                if look_blank and not blank:
                    blank = _blank_in((b"\n" if start else tail[-2:]) + block[:2])
                    blank = blank or _blank_in(block)
                if header and not again:
                    again = any(x in block or x in edge for x in lines)
                tail, start, offset = (tail + block)[-keep:], False, offset + len(block)
            else:
                if header and not again:  # the header again as the file's last line
                    again = tail.endswith((b"\n" + header, b"\r" + header))
    except OSError:
        return _Marks(True, True, True, True)  # the readers name what they cannot read
    return _Marks(mark, cr, blank if look_blank else cr, again)


def _refuse_blank_lines(path: Path, blank: bool = True, marks: _Marks | None = None) -> None:
    """Refuse a CSV file with a blank line outside a quoted cell, at its line, as a JSONL
    file's blank line is refused: pyarrow skips one, so a record lost in an export (a row
    emptied by hand) would pass unseen; a record of empty cells is written with its commas.
    A NUL byte or a byte-order mark past the file's start is refused first, at its line and
    column (:func:`nul_problem`), and the header line written again after it (two files
    joined) is refused at its line, where its cells were read as a record's. Without
    ``blank`` the file is not scanned for blank lines (the caller has pyarrow read each as a
    record of nulls, which a required field refuses); the other rules hold as ever."""
    why = text_head_problem(path)  # UTF-16 or a compressed file: named before its NUL bytes
    if why is not None:
        raise UserError(f"{path}:1: {why}")
    marks = marks or _csv_marks(path)
    problem = nul_problem(path, bom=True) if marks.mark else None
    if problem is not None:
        raise UserError(f"{path}:{problem}")
    line = _blank_line(path) if blank and marks.blank else None
    if line is not None:
        raise UserError(
            f"{path}:{line}: blank line (a CSV file has none, as a JSONL file has none: remove"
            " it, or write a record of empty cells with its commas)"
        )
    line = _header_again(path) if marks.header else None
    if line is not None:
        raise UserError(
            f"{path}:{line}: the header line again (a CSV file has one header, on its first"
            " line: were two files joined? remove this line)"
        )


def _header_again(path: Path) -> int | None:
    """The line of the first record of a CSV file whose cells are its header's, or None (read
    as CSV: the caller's one pass, :func:`_csv_marks`, found a candidate)."""
    return _csv_line(path, "utf-8-sig", lambda row, names: row == names, header=True)


def _blank_line(path: Path) -> int | None:
    """The number of the first blank line of a CSV file outside a quoted cell, or None; the
    bytes are scanned in blocks, and only a file with a candidate is read as CSV (a caller
    that skipped the blank-line search sends every file with a carriage return here)."""
    try:
        with path.open("rb") as f:
            tail = b"\n"  # the file's start is a line's start
            while block := f.read(CSV_BLOCK):
                # bytes.find, not a regular expression: 80 MB in 0.02 s instead of 1.1 s
                if _blank_in(tail + block[:2]) or _blank_in(block):
                    break
                tail = (tail + block)[-2:] if len(block) < 2 else block[-2:]
            else:
                return None
    except OSError:
        return None  # the reader names what it cannot read
    return _csv_line(path, "utf-8", lambda row, names: not row, header=False)


def _csv_line(path: Path, encoding: str, found, header: bool) -> int | None:
    """The number of the first line starting a record of a CSV file that ``found(row,
    names)`` accepts (``names`` the header's cells when ``header``, whose own line is then not
    tried), or None; None too when the file cannot be read as CSV (its reader names that)."""
    import csv

    try:
        with path.open(encoding=encoding, errors="replace", newline="") as f:
            old = csv.field_size_limit()
            csv.field_size_limit(max(old, path.stat().st_size + 1))
            try:
                reader = csv.reader(f)
                names = next(reader, None) if header else None
                start = reader.line_num + 1
                for row in reader:
                    if found(row, names):
                        return start
                    start = reader.line_num + 1
            finally:
                csv.field_size_limit(old)
    except (OSError, csv.Error):
        return None  # the reader names what it cannot read
    return None


def nul_problem(path: Path, bom: bool = False) -> str | None:
    """``LINE: rule`` for the first NUL byte of a text file, or None. No text file of the
    project holds one, whatever its format: JSON writes a NUL in a string escaped
    (``\\u0000``) and refuses it raw, YAML refuses it, and in a CSV cell or a value list one
    is the mark of a damaged or binary file (pyarrow took it into the cell's text). With
    ``bom``, a UTF-8 byte-order mark past the file's first bytes too (a CSV file's leading
    one is skipped; one inside it, where two exports were joined, became part of a cell)."""
    marks = (b"\0", b"\xef\xbb\xbf") if bom else (b"\0",)
    try:
        with path.open("rb") as f:
            offset, tail = 0, b""
            while block := f.read(CSV_BLOCK):
                data = tail + block
                found = [
                    i
                    for m in marks
                    for i in [data.find(m, 1 if offset == 0 and m != b"\0" else 0)]
                    if i >= 0
                ]
                if found:
                    at = offset - len(tail) + min(found)
                    break
                tail = data[-2:]
                offset += len(block)
            else:
                return None
            f.seek(0)
            head = f.read(at)
            what = f.read(1)
    except OSError:
        return None  # the reader names what it cannot read
    return nul_words(head) if what == b"\0" else _bom_words(head)


def _line_column(head: bytes) -> tuple[int, int]:
    """(line, column) of the character after the bytes ``head`` of a UTF-8 text file."""
    line = head.count(b"\n") + 1
    return line, len(head[head.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1


def _bom_words(head: bytes) -> str:
    """``LINE: rule`` for a byte-order mark after the bytes ``head`` of a CSV file."""
    line, column = _line_column(head)
    return (
        f"{line}: a byte-order mark (U+FEFF) at column {column}, inside the file (only a"
        " leading one is skipped): were two files joined? remove it"
    )


def nul_words(head: bytes) -> str:
    """``LINE: rule`` for a NUL byte after the bytes ``head`` of a text file."""
    line, column = _line_column(head)
    return (
        f"{line}: a NUL byte (U+0000) at column {column}: a text file holds none (is the file"
        " damaged, or not text?)"
    )


#: the bytes of CSV text the column check converts at once (:func:`_csv_blocks`)
CSV_BLOCK = 1 << 24


def _csv_blocks(
    path: Path, fields: Sequence[Mapping[str, Any]], guarded: bool = False, dictionary=frozenset()
):
    """The tables of a CSV file's blocks (16 MiB of text each), its cells converted as
    :func:`_csv_parts` converts them, for the column check: a file this cannot read block by
    block (a cell pyarrow refuses, a number too long to be sure of, a null word that is not
    of the type) is a UserError, and the whole-file reader words the problem.

    ``guarded``: the contract has a required field that is not nullable, so a file without a
    carriage return is not scanned for blank lines: each is read as a record of empty cells
    (a null in every column), which that field's column refuses, and the whole-file reader
    then words the blank line. (A lone CR ends a line for pyarrow, not for the scan: a file
    holding one is scanned as before, and pyarrow skips what it reads as a blank line.) The
    string columns named in ``dictionary`` are read as Arrow dictionaries."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    marks = _csv_marks(path, blank=not guarded)
    if guarded and marks.cr:
        guarded = False
    _refuse_blank_lines(path, blank=not guarded, marks=marks)
    convert, types, tokens = _csv_convert(fields, dictionary)
    numbers = [f["name"] for f in fields if f.get("type") == "number"]
    if numbers and _long_cell(path.read_bytes()):
        raise UserError(f"{path}: a long number cell")
    try:
        reader = pcsv.open_csv(
            path,
            read_options=pcsv.ReadOptions(block_size=CSV_BLOCK),
            parse_options=pcsv.ParseOptions(ignore_empty_lines=not guarded),
            convert_options=convert,
        )
        _unique_columns(path, reader.schema.names)
        for batch in reader:
            table = pa.Table.from_batches([batch])
            if tokens:
                table = _tokens_to_null(path, fields, table, tokens, types)
            yield table
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: {exc}") from None


def _csv_convert(fields: Sequence[Mapping[str, Any]], dictionary=frozenset()):
    """(pyarrow's conversion options of a CSV file of the contract, the pyarrow type of each
    typed field, :func:`_null_tokens`); a string field named in ``dictionary`` is read as an
    Arrow dictionary of strings."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    types = {
        f["name"]: getattr(pa, _CSV_TYPES[f.get("type", "string")])()
        for f in fields
        if f.get("type", "string") in _CSV_TYPES
    }
    tokens = _null_tokens(fields)
    # a field with null_values is read as text, its tokens made null, then converted
    coded = pa.dictionary(pa.int32(), pa.string())
    convert = pcsv.ConvertOptions(
        column_types={
            k: pa.string() if k in tokens else coded if k in dictionary and t == pa.string() else t
            for k, t in types.items()
        },
        strings_can_be_null=True,
        null_values=[""],
        true_values=["true"],
        false_values=["false"],
    )
    return convert, types, tokens


#: Bytes of a CSV file that may hold a number a double does not hold as written (18
#: significant digits, 300 zeros after a point, or an exponent of three digits): its number
#: cells are then checked.
_LONG_CELL = re.compile(rb"[1-9](?:\.?[0-9]){17}|\.0{300}|[eE][-+]?[0-9]{3}")

#: the bytes :func:`_long_cell` looks at at once, and how far each look reaches past them
_LOOK, _REACH = 1 << 22, 64


def _long_cell(data: bytes) -> bool:
    """Whether :data:`_LONG_CELL` matches somewhere in ``data``. The expression tries every
    byte (over a second for 50 MB), so numpy first looks for what any match holds: a run of
    18 or more digits and points, or an ``e`` or ``E`` followed by three digits (after a sign
    or not); the expression searches only bytes that hold one."""
    import numpy as np

    a = np.frombuffer(data, dtype=np.uint8)
    for at in range(0, a.size, _LOOK):
        part = a[at : at + _LOOK + _REACH]  # a match that starts in this part ends in it
        digit = (part >= 48) & (part <= 57)
        run = digit | (part == 46)
        # a run of 18: a sliding window of 18 bytes all in the run
        sums = np.cumsum(run, dtype=np.int32)
        if sums.size >= 18 and (sums[17:] - np.concatenate(([0], sums[:-18])) == 18).any():
            return _LONG_CELL.search(data) is not None
        e = np.flatnonzero((part | 32) == 101)  # e or E
        e = e[e + 4 < part.size]
        if e.size:
            sign = (part[e + 1] == 43) | (part[e + 1] == 45)
            bare = digit[e + 1] & digit[e + 2] & digit[e + 3]
            signed = sign & digit[e + 2] & digit[e + 3] & digit[e + 4]
            if (bare | signed).any():
                return _LONG_CELL.search(data) is not None
    # an e in the last four bytes, left out above: the expression reads those few bytes
    return _LONG_CELL.search(data[-8:]) is not None


def _refuse_imprecise(path: Path, numbers: Sequence[str], table) -> None:
    """Refuse a CSV file with a number cell that a double does not hold as written (more than
    17 significant digits, or below the smallest normal double: see
    :func:`prereg.records.imprecise_number`), at its line and field; pyarrow would read it as
    the nearest double, decided as another decimal."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from prereg.records import imprecise_number

    numbers = [n for n in numbers if n in table.column_names]
    if not numbers or not _long_cell(path.read_bytes()):
        return
    text = pcsv.read_csv(
        path,
        convert_options=pcsv.ConvertOptions(
            column_types={n: pa.string() for n in numbers},
            include_columns=numbers,
            strings_can_be_null=False,
        ),
    )
    where = _csv_where(path, text.num_rows)
    rx = _CSV_WORDS["number"][1]
    problems = []
    for name in numbers:
        for i, v in enumerate(text.column(name).to_pylist()):
            if v and rx.fullmatch(v) and v.lower().lstrip("+-") not in ("inf", "nan"):
                problem = imprecise_number(v)
                if problem is not None:
                    problems.append((i, f"{where(i)}: field {name}: {problem}"))
    if problems:
        problems.sort()
        shown = [p for _, p in problems[:20]]
        if len(problems) > 20:
            shown.append(f"… and {len(problems) - 20} more")
        raise UserError(
            f"{path}: {len(problems)} number(s) that a double does not hold as written",
            problems=shown,
        )


def _null_tokens(fields: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """{field: the CSV cells its ``null_values`` read as null}, for the fields read as text
    first: those that have them, and the boolean fields whose ``true_values`` and
    ``false_values`` name their cells (with no null cell but the empty one, ``[]``)."""
    out = {
        f["name"]: [str(t) for t in f["null_values"]]
        for f in fields
        if f.get("null_values") and f.get("type", "string") in _CSV_TYPES
    }
    for name in _bool_words(fields):
        out.setdefault(name, [])
    # numbers are read as text and checked against the words of their type before pyarrow
    # converts them: its own conversion also takes 0x10, blanks around digits and inf
    for f in fields:
        if f.get("type") in ("integer", "number"):
            out.setdefault(f["name"], [])
    return out


def _bool_words(fields: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list[str], list[str]]]:
    """{field: (the cells read as true, the cells read as false)} of the boolean fields that
    name their cells (``true_values``, ``false_values``: an export's ``True``, ``TRUE``, ``1``)."""
    return {
        f["name"]: (
            [str(t) for t in f.get("true_values") or ["true"]],
            [str(t) for t in f.get("false_values") or ["false"]],
        )
        for f in fields
        if f.get("type") == "boolean" and (f.get("true_values") or f.get("false_values"))
    }


def _tokens_to_null(
    path: Path, fields, table, tokens: Mapping[str, list[str]], types, refuse=None
):  # fmt: skip
    """``table`` with each cell of a field's ``null_values`` made null and the field's column
    converted to its type; a cell of another text that is not of the type is refused at its
    line, as pyarrow's conversion refuses one (``refuse``: :func:`_refuse_cells`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    refuse = _refuse_cells if refuse is None else refuse
    bools = _bool_words(fields)
    for name, words in tokens.items():
        if name not in table.column_names:
            continue
        at = table.column_names.index(name)
        col = table.column(name)
        if words:
            col = pc.if_else(pc.is_in(col, value_set=pa.array(words, pa.string())), None, col)
        kind = next(f.get("type", "string") for f in fields if f["name"] == name)
        said = bools.get(name) if kind == "boolean" else None
        if said is not None:
            yes, no = said
            if not all(v is None or v in yes or v in no for v in col.to_pylist()):
                refuse(path, fields, None)
            truth = pc.is_in(col, value_set=pa.array(yes, pa.string()))
            col = pc.if_else(pc.is_valid(col), truth, pa.scalar(None, pa.bool_()))
        elif kind in _CSV_WORDS:
            words_rx = _CSV_RE2[kind]
            if pc.all(pc.match_substring_regex(col, words_rx)).as_py() is False:
                refuse(path, fields, None)
            if kind == "boolean":
                col = pc.equal(col, "true")
            else:
                try:
                    col = col.cast(types[name])
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    refuse(path, fields, exc)
                if kind == "number" and pc.any(pc.is_inf(col)).as_py():
                    refuse(path, fields, None)  # a number beyond the largest double (1e400)
        table = table.set_column(at, name, col)
    return table


def _csv_where(path: Path, n: int):
    """The location of record i of a CSV file of ``n`` records, ``FILE:LINE``; the lines are
    worked out when a problem is first located (:class:`CsvLines`)."""
    lines = CsvLines(path, n)
    return lambda i: f"{path}:{lines[i]}"


def _unique_columns(path: Path, names: Sequence[str]) -> None:
    """Refuse a file naming a column twice (which of the two would a record hold?)."""
    seen: set[str] = set()
    twice = [n for n in names if n in seen or seen.add(n)]
    if twice:
        raise UserError(
            f"{path}: column(s) {', '.join(map(repr, dict.fromkeys(twice)))} appear more than"
            " once; a record has one value of each field"
        )


def _refuse_unreadable(path: Path, exc) -> None:
    """A CSV file pyarrow cannot read (a row with more or fewer cells than the header, a quote
    never closed, bytes that are not UTF-8), refused at the line the problem starts on, or in
    pyarrow's words when it is not found."""
    problem = _unreadable_line(path)
    if problem is not None:
        raise UserError(f"{path}: not a CSV file of this contract", problems=[problem])
    raise UserError(f"{path}: not a CSV file of this contract: {_one_line(exc)}") from None


def _unreadable_line(path: Path) -> str | None:
    """``FILE:LINE: what`` for the first line of a CSV file that no CSV reader reads as the
    header says, or None."""
    import csv
    import io

    try:
        raw = path.read_bytes()
    except OSError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        said = not_utf8(raw, exc.start)
        if not said.startswith("not UTF-8 (byte"):  # another encoding, a compressed file
            return f"{path}:1: {said}"
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return (
            f"{path}:{line}: byte 0x{raw[exc.start]:02x} at column {column} is not UTF-8; save"
            " the file as UTF-8 (a spreadsheet's CSV UTF-8)"
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return f"{path}:1: the file is empty; a CSV file's first line names its columns"
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, len(text) + 1))
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        start, width = 1, None
        for row in reader:
            if row:
                if width is None:
                    width = len(row)
                elif len(row) != width:
                    cells = f"{len(row)} cell{'s' if len(row) != 1 else ''}"
                    if any("\n" in c or "\r" in c for c in row) and next(reader, None) is None:
                        return (  # a quote never closed takes in the rest of the file
                            f"{path}:{start}: a quoted cell starting on this line is never"
                            " closed (it runs to the end of the file): close its quote"
                            ' ("), and write a quote inside a cell as ""'
                        )
                    return f"{path}:{start}: {cells} where the header names {width} columns"
            start = reader.line_num + 1
    except csv.Error as exc:
        return f"{path}:{start}: {exc}"
    finally:
        csv.field_size_limit(old)
    return None


def _csv_record_lines(path: Path, n: int) -> Sequence[int]:
    """The line each of the ``n`` records of a CSV file starts on (the header is line 1): a
    quoted value may hold line breaks, so a record is not always one line further on."""
    raw = path.read_bytes()
    if b'"' not in raw:
        return range(2, n + 2)
    import csv
    import io

    reader = csv.reader(io.StringIO(raw.decode("utf-8", "replace"), newline=""))
    starts: list[int] = []
    start = 1
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, len(raw) + 1))  # a cell may be as long as the file
    try:
        for row in reader:
            if row:  # pyarrow skips an empty line
                starts.append(start)
            start = reader.line_num + 1
    except csv.Error:  # pyarrow read what csv does not: count records as lines
        return range(2, n + 2)
    finally:
        csv.field_size_limit(old)
    starts = starts[1:]  # the header
    if len(starts) < n:  # pyarrow and csv disagree on the file: count records as lines
        return range(2, n + 2)
    return starts[:n]


_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_CSV_WORDS = {
    "integer": ("a whole number (digits, a leading - for a negative one)", re.compile(r"-?[0-9]+")),
    "number": ("a number", re.compile(_NUMBER)),
    "boolean": ("true or false", re.compile(r"true|false")),
}
#: An integer cell as a float column writes it (pandas: 5.0), told how to write it instead.
_FLOATED = re.compile(r"-?[0-9]+\.0*")
#: The same words as whole-cell patterns for pyarrow's regular expressions (RE2).
_CSV_RE2 = {kind: f"^(?:{rx.pattern})$" for kind, (_, rx) in _CSV_WORDS.items()}
#: Cells a spreadsheet or R writes for a number that is not finite: JSON has none, and a
#: missing value is an empty cell (or a word of the field's null_values).
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.I)


def _cell_problem(kind: str, v: str, rx, words: str) -> str | None:
    """Why a CSV cell of a field of ``kind`` is not of its type, or None."""
    if not rx.fullmatch(v):
        if kind == "number" and _NOT_FINITE.fullmatch(v):
            return (
                f"{v!r} is not a finite number (JSON has no NaN or infinity; a missing value"
                " is an empty cell, or a word the field's null_values lists)"
            )
        return f"{v!r} is not {words}"
    # (more than 19 digits is beyond 64 bits: Python turns no more than 4,300 into an int)
    digits = v.lstrip("-").lstrip("0")
    if (
        kind == "integer"
        and len(digits) > 18
        and (len(digits) > 19 or not INT64_RANGE[0] <= int(v) <= INT64_RANGE[1])
    ):
        return integer_beyond_64_bits(v)  # the range of an integer field in every format
    if kind == "number" and not math.isfinite(float(v)):
        shown = v if len(v) <= 24 else v[:24] + "…"
        return f"{shown} is beyond the largest double (about 1.8e308)"
    return None


def _refuse_cells(path: Path, fields: Sequence[Mapping[str, Any]], exc) -> None:
    """A CSV file whose cells pyarrow could not convert to the contract's types, refused at
    each bad cell's line and field (the file read again as text); pyarrow's own words when no
    cell is found (a malformed row)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    typed = {f["name"]: f.get("type", "string") for f in fields}
    typed = {k: v for k, v in typed.items() if v in _CSV_WORDS}
    tokens = _null_tokens(fields)
    bools = _bool_words(fields)
    try:
        text = pcsv.read_csv(
            path,
            convert_options=pcsv.ConvertOptions(
                column_types={k: pa.string() for k in typed}, strings_can_be_null=False
            ),
        )
    except (pa.ArrowException, OSError):
        _refuse_unreadable(path, exc)
    problems: list[str] = []
    count = 0
    floated: list[str] = []  # integer fields with a cell such as 5.0 (pandas' floats)
    where = _csv_where(path, text.num_rows)
    for name, kind in typed.items():
        if name not in text.column_names:
            continue
        words, rx = _CSV_WORDS[kind]
        said = bools.get(name)
        if said is not None:  # the cells the field names, and no others
            yes, no = said
            words = (
                f"one of its true_values ({', '.join(map(repr, yes))}) or false_values"
                f" ({', '.join(map(repr, no))})"
            )
            rx = re.compile("|".join(map(re.escape, yes + no)))
        for i, v in enumerate(text.column(name).to_pylist()):
            if v is None or v == "" or v in tokens.get(name, ()):
                continue
            problem = _cell_problem(kind if said is None else "words", v, rx, words)
            if problem is None:
                continue
            count += 1
            if len(problems) < 20:
                problems.append(f"{where(i)}: field {name}: {problem}")
            if kind == "integer" and name not in floated and _FLOATED.fullmatch(v):
                floated.append(name)
    if not count:
        _refuse_unreadable(path, exc)
    plain = [
        name
        for name, kind in typed.items()
        if kind == "boolean" and name not in bools and f"field {name}: " in "".join(problems)
    ]
    problems.sort(key=lambda p: int(p[len(str(path)) + 1 :].split(":", 1)[0]))
    more = [f"… and {count - len(problems)} more"] if count > len(problems) else []
    if plain:  # a boolean as an export writes it (True, TRUE, 1): the words that read it
        more.append(
            "a boolean cell is written true or false unless the field lists the cells its"
            f' export writes: {{name: {plain[0]}, type: boolean, true_values: ["True"],'
            ' false_values: ["False"]} for pandas, ["TRUE"] and ["FALSE"] for R'
        )
    if floated:  # pandas writes an integer column with a missing value as floats (5.0)
        more.append(
            f"an integer cell is written without a decimal point; pandas writes an integer"
            f" column with missing values as floats (5.0): df[{floated[0]!r}].astype('Int64')"
            " before to_csv writes 5, and an empty cell for a missing one"
        )
    raise UserError(
        f"{path}: {count} cell(s) not of their field's type (an empty cell is null"
        f"{_tokens_words(tokens)})",
        problems=problems + more,
    )


def _tokens_words(tokens: Mapping[str, list[str]]) -> str:
    """How the refusal of a CSV cell names the cells read as null besides the empty one, or
    where to declare them."""
    tokens = {name: words for name, words in tokens.items() if words}
    if not tokens:
        return "; a field's null_values names cells such as NA that stand for null"
    return "".join(
        f"; in {name}, also {', '.join(map(repr, words))}" for name, words in tokens.items()
    )


def _others_ignored(schema_path: Path) -> bool:
    """Whether the contract's schema lets a record carry keys that are not its fields
    (``other_fields: ignore``)."""
    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(schema, dict) and schema.get("additionalProperties") is True


def _checked(path: Path, schema_path: Path, fields, parts, max_problems: int) -> list[dict]:
    """The records of each (location, table) part, checked as JSONL records are."""
    from prereg.records import _accepts, lifted

    names = {(f.get("path") or [f["name"]])[0] for f in fields}
    nullable = {f["name"] for f in _file_fields(fields) if f.get("nullable")}
    # the struct columns of fields below the top: {path of an object: nullable keys in it}
    inner: dict[tuple, set] = {}
    for f in fields:
        p = tuple(f.get("path") or ())
        for n in range(1, len(p)):
            inner.setdefault(p[:n], set())
        if len(p) > 1 and f.get("nullable"):
            inner[p[:-1]].add(p[-1])
    accept = _accepts(str(schema_path))
    rows: list[dict] = []
    problems: list[str] = []
    ignored = _others_ignored(schema_path)
    for where, table in parts:
        unknown = [c for c in table.column_names if c not in names]
        if unknown and ignored:  # other_fields: ignore: columns the contract does not name
            table = table.drop_columns(unknown)
            unknown = []
        if unknown:
            shown = ", ".join(map(repr, unknown[:20])) + (", …" if len(unknown) > 20 else "")
            headless = path.suffix.lower() == ".csv" and len(unknown) == len(
                table.column_names
            )  # no column is a field: the first line is a record, not the header
            raise UserError(
                f"{path}: column(s) {shown} are not fields of the record contract"
                f" ({schema_path.name})"
                + (
                    f"; a CSV file's first line names its columns ({', '.join(sorted(names))})"
                    if headless
                    else ""
                )
                + (
                    "; a column without a name is often the row numbers an export adds (R's"
                    " write.csv without row.names = FALSE, pandas' to_csv without index=False):"
                    " leave them out"
                    if "" in unknown or any(c.startswith("Unnamed: ") for c in unknown)
                    else ""
                )
                + (
                    "; a column __index_level_0__ is the index pandas' to_parquet writes (a"
                    " data frame's row labels): write the file with index=False"
                    if any(c.startswith("__index_level_") for c in unknown)
                    else ""
                )
            )
        empty = "empty" if path.suffix.lower() == ".csv" else "null"
        for i, raw in enumerate(table.to_pylist()):
            rec = {k: v for k, v in raw.items() if v is not None or k in nullable}
            if inner:
                rec = _without_nulls(rec, (), inner)
            for k, v in _leaves(rec, (), inner):
                if type(v) is float and not math.isfinite(v):
                    problems.append(
                        f"{where(i)}: at /{'/'.join(k)}: {v} is not a finite number (JSON has"
                        " no NaN or infinity; a missing value is null)"
                    )
            if accept is None or not accept(rec):
                for p in schema_problems(rec, schema_path):
                    m = re.search(r"missing field '([^']*)'", p)
                    name = m.group(1) if m else None
                    if m and name in raw and name not in rec:
                        p += f" (its cell is {empty}, and the field is not nullable)"
                    problems.append(f"{where(i)}: {p}")
            rows.append(rec)
    if not rows and not problems:
        raise UserError(f"{path}: the file holds no records")
    _refuse_problems(path, schema_path, problems, max_problems)
    return lifted(rows, schema_path)


def _without_nulls(rec: dict, at: tuple, inner: Mapping[tuple, set]) -> dict:
    """A record of a table with its struct columns' nulls left out, as the top-level columns'
    are: a null struct is the object missing, a null inside one the key missing (unless its
    field is nullable)."""
    out = {}
    for k, v in rec.items():
        here = (*at, k)
        if here in inner:
            if v is None:
                continue
            if type(v) is dict:
                v = {j: w for j, w in v.items() if w is not None or j in inner[here]}
                v = _without_nulls(v, here, inner)
        out[k] = v
    return out


def _leaves(rec: dict, at: tuple, inner: Mapping[tuple, set]):
    """(JSON path, value) of each value of a record, inside its struct columns too."""
    for k, v in rec.items():
        here = (*at, k)
        if here in inner and type(v) is dict:
            yield from _leaves(v, here, inner)
        else:
            yield here, v


# -- partitions (prereg.partitioned, prereg.bucketed) ---------------------------------------------


def read_part_columns(part, schema_path: Path, fields: Sequence[Mapping[str, Any]]):
    """(records, SHA-256 of the bytes read) of one partition of a Parquet or CSV file
    (:func:`prereg.partitioned.cuts`), as :func:`_columns_at_once` reads the same records of
    the whole file; raises :class:`prereg.partitioned.Uncut` where that cannot be vouched for
    (a record the column check refuses, a value holding a line break in a CSV file, bytes
    other than were planned), and OSError when the file cannot be read: one process then reads
    the file and names its problems."""
    import hashlib
    import os

    import pyarrow as pa

    from prereg.files import open_regular
    from prereg.partitioned import Uncut

    fd = open_regular(Path(part.path))
    try:
        data = os.pread(fd, part.length, part.offset)
        foot = b""
        if part.kind == "parquet":
            at, length, _ = part.footer
            end = part.offset + part.length
            foot = data[at - part.offset :] if end == at + length else os.pread(fd, length, at)
    finally:
        os.close(fd)
    if len(data) != part.length:
        raise Uncut("the file changed")
    digest = hashlib.sha256(data).hexdigest()
    try:
        if part.kind == "csv":
            tables = [_csv_part_table(part, data, fields)]
        elif part.kind == "parquet":
            if hashlib.sha256(foot).hexdigest() != part.footer[2]:
                raise Uncut("the footer changed")
            tables = _parquet_part_tables(part, data, foot)
        else:
            raise Uncut(f"no columnar reader of {part.kind}")
    except (pa.ArrowException, UserError, OSError, ValueError) as exc:
        raise Uncut(str(exc)) from None
    cols = tables_columns(schema_path, fields, tables)
    if cols is None:
        raise Uncut("a record the column check cannot vouch for")
    return cols, digest


def _csv_part_table(part, data: bytes, fields: Sequence[Mapping[str, Any]]):
    """The table of a CSV partition's bytes (after the file's header line, which the first
    partition holds itself), converted as :func:`_csv_parts` converts the whole file; Uncut
    when a column name or a value holds a line break (a record that may span a cut)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    from prereg.partitioned import Uncut

    if any(f.get("type", "string") not in _CSV_TYPES for f in fields):
        raise Uncut("a field whose cells pyarrow would type by guessing, block by block")
    if part.offset == 0:
        if not data.startswith(part.header):
            raise Uncut("the header changed")
    else:
        data = part.header + data
    if b"\0" in data or data.find(b"\xef\xbb\xbf", 1) >= 0:
        raise Uncut("a NUL byte or a byte-order mark inside the file (one process says where)")
    names = part.header.removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n")
    if names and (b"\n" + names in data or b"\r" + names in data):
        raise Uncut("the header line again, or a cell holding it (one process tells which)")
    if data.startswith((b"\n", b"\r\n")) or _blank_in(data):
        raise Uncut("a blank line, or one inside a quoted cell (one process tells which)")
    if any(f.get("type") == "number" for f in fields) and _long_cell(data):
        raise Uncut("a number a double may not hold as written (one process checks it)")
    convert, types, tokens = _csv_convert(fields)
    table = pcsv.read_csv(pa.BufferReader(data), convert_options=convert)
    path = Path(part.path)
    _unique_columns(path, table.column_names)
    if any("\n" in c or "\r" in c for c in table.column_names):
        raise Uncut("a column name holding a line break")
    for col in table.columns:
        if pa.types.is_string(col.type) and pc.any(pc.match_substring_regex(col, "[\r\n]")).as_py():
            raise Uncut("a value holding a line break")
    if tokens:

        def refuse(path, fields, exc):
            raise Uncut("a cell not of its field's type")

        table = _tokens_to_null(path, fields, table, tokens, types, refuse=refuse)
    return table


def _parquet_part_tables(part, data: bytes, foot: bytes) -> list:
    """The row groups of a Parquet partition, read as :func:`_parquet_parts` reads them, from
    the partition's bytes and the file's footer alone."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = pq.read_metadata(pa.BufferReader(foot))
    at, length, _ = part.footer
    source = _Spans(at + length, [(part.offset, data), (at, foot)])
    pf = pq.ParquetFile(pa.PythonFile(source, mode="r"), metadata=meta)
    _unique_columns(Path(part.path), pf.schema_arrow.names)
    # on one thread: the Python file is read by a seek and a read, which threads reading
    # column chunks at once must not interleave (the values do not depend on the threads)
    return [as_written(pf.read_row_group(g, use_threads=False)) for g in range(*part.groups)]


class _Spans:
    """A read-only file of ``size`` bytes of which only some spans are known ((offset,
    bytes) pairs): reading any other byte raises OSError (a Parquet reader that wants more
    than its partition's row groups and the footer: one process reads the file)."""

    closed = False

    def __init__(self, size: int, spans: Sequence[tuple[int, bytes]]):
        self.size, self.spans, self.at = size, list(spans), 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        return self.at

    def seek(self, offset: int, whence: int = 0) -> int:
        self.at = (0, self.at, self.size)[whence] + offset
        return self.at

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.at + n, self.size)
        if end <= self.at:
            return b""
        for lo, data in self.spans:
            if lo <= self.at and end <= lo + len(data):
                out = data[self.at - lo : end - lo]
                self.at = end
                return out
        raise OSError(f"bytes {self.at} to {end} are outside the partition")

    def close(self) -> None:
        self.closed = True
