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
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prereg.errors import UserError
from prereg.records import _refuse_problems, read_jsonl_records, schema_problems

#: File extensions read as columns, and the name of their reader.
COLUMNAR = {".parquet": "Parquet", ".csv": "CSV"}


def read_contract_records(
    path, schema_path: Path, fields: Sequence[Mapping[str, Any]], *, max_problems: int = 50
) -> list[dict]:
    """Every record of ``path`` (by its extension: Parquet, CSV, else JSONL) valid against the
    contract schema, or one UserError listing the located problems."""
    path = Path(path)
    kind = COLUMNAR.get(path.suffix.lower())
    if kind is None:
        return read_jsonl_records(path, schema_path, max_problems=max_problems)
    try:
        import pyarrow  # noqa: F401
    except ImportError:  # pragma: no cover - pyarrow is a dependency of the runtime
        raise UserError(f"{path}: reading {kind} needs pyarrow; install it or give JSONL") from None
    if not _is_file(path):
        raise UserError(f"{path}: cannot read: not a regular file")
    if kind == "Parquet":
        parts = _parquet_parts(path)
    else:
        parts = _csv_parts(path, fields)
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
    if path.suffix.lower() not in COLUMNAR:
        if parallel:
            from prereg import partitioned

            return partitioned.read_jsonl_columns(
                path, schema_path, max_problems=max_problems, share=share, **parallel
            )
        from prereg.records import read_jsonl_columns

        return read_jsonl_columns(path, schema_path, max_problems=max_problems, share=share)
    from prereg.columnar import RecordColumns

    # a FIFO or a folder is refused by the record reader, never opened by pyarrow here
    fast = _columns_at_once(path, schema_path, fields) if _is_file(path) else None
    if fast is None:
        rows = read_contract_records(path, schema_path, fields, max_problems=max_problems)
        fast = RecordColumns.from_dicts([f["name"] for f in fields], rows)
    if path.suffix.lower() == ".csv":
        fast.lines = CsvLines(path, fast.n)  # the attempt policy's and placement's messages
    for name, (index, ids) in (share or {}).items():
        fast.share(name, index, ids)
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


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; a path the system cannot look up (a name past its
    length limit, a loop of links) is a UserError naming it (Path.is_file raised them)."""
    try:
        return path.is_file()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _columns_at_once(path: Path, schema_path: Path, fields: Sequence[Mapping[str, Any]]):
    """The records of a Parquet or CSV file as columns, each column converted by pyarrow and
    checked whole against its field's msgspec type (the typed JSONL reader's, see
    :mod:`prereg.records`), or None when that check cannot vouch for every record; then the
    record-by-record reader reads the file and words its problems."""
    import math

    import msgspec

    from prereg.columnar import ABSENT, RecordColumns
    from prereg.records import _scalar_type

    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or schema.get("additionalProperties", True) is not False:
        return None
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
    try:
        kind = COLUMNAR[path.suffix.lower()]
        parts = _parquet_parts(path) if kind == "Parquet" else _csv_parts(path, fields)
        tables = [table for _where, table in parts]
    except UserError:
        return None
    columns: dict[str, list] = {name: [] for name in names}
    absent = dict.fromkeys(names, 0)
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
                continue
            col = table.column(name).to_pylist()
            if name not in nullable and None in col:  # a null is the field left out
                if name in required:
                    return None
                gone = col.count(None)
                absent[name] += gone
                col = [ABSENT if v is None else v for v in col]
                values = [v for v in col if v is not ABSENT]
            else:
                values = col
            try:
                msgspec.convert(values, list[types[name]])
            except (msgspec.ValidationError, TypeError, ValueError):
                return None
            if any(type(v) is float and not math.isfinite(v) for v in values):
                return None
            rx = patterns.get(name)
            if rx is not None and not all(rx.search(v) for v in values if type(v) is str):
                return None
            columns[name].extend(col)
        n += k
    if n == 0:
        return None
    out = RecordColumns(names, columns, n, absent)
    return out


def _parquet_parts(path: Path):
    """(label of a record's location, table) for each row group of a Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a readable Parquet file: {exc}") from None
    _unique_columns(path, pf.schema_arrow.names)
    for g in range(pf.num_row_groups):
        try:
            table = pf.read_row_group(g)
        except (pa.ArrowException, OSError) as exc:
            raise UserError(f"{path}: row group {g}: cannot read: {exc}") from None
        yield (lambda i, g=g: f"{path}: row group {g}, row {i + 1}"), table


_CSV_TYPES = {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool_"}


def _csv_parts(path: Path, fields: Sequence[Mapping[str, Any]]):
    """(label of a record's location, table) for a CSV file, its cells converted by the
    contract's field types."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    types = {
        f["name"]: getattr(pa, _CSV_TYPES[f.get("type", "string")])()
        for f in fields
        if f.get("type", "string") in _CSV_TYPES
    }
    tokens = _null_tokens(fields)
    _refuse_bom(path)
    # a field with null_values is read as text, its tokens made null, then converted
    convert = pcsv.ConvertOptions(
        column_types={k: pa.string() if k in tokens else t for k, t in types.items()},
        strings_can_be_null=True,
        null_values=[""],
        true_values=["true"],
        false_values=["false"],
    )
    try:
        table = pcsv.read_csv(path, convert_options=convert)
    except pa.ArrowInvalid as exc:
        _refuse_cells(path, fields, exc)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a CSV file of this contract: {exc}") from None
    _unique_columns(path, table.column_names)
    _refuse_imprecise(path, [f["name"] for f in fields if f.get("type") == "number"], table)
    if tokens:
        table = _tokens_to_null(path, fields, table, tokens, types)
    yield _csv_where(path, table.num_rows), table


#: Bytes of a CSV file that may hold a number a double does not hold as written (18
#: significant digits, 300 zeros after a point, or an exponent of three digits): its number
#: cells are then checked.
_LONG_CELL = re.compile(rb"[1-9](?:\.?[0-9]){17}|\.0{300}|[eE][-+]?[0-9]{3}")


def _refuse_imprecise(path: Path, numbers: Sequence[str], table) -> None:
    """Refuse a CSV file with a number cell that a double does not hold as written (more than
    17 significant digits, or below the smallest normal double: see
    :func:`prereg.records.imprecise_number`), at its line and field; pyarrow would read it as
    the nearest double, decided as another decimal."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from prereg.records import imprecise_number

    numbers = [n for n in numbers if n in table.column_names]
    if not numbers or not _LONG_CELL.search(path.read_bytes()):
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


def _refuse_bom(path: Path) -> None:
    """Refuse a CSV file that starts with a byte-order mark, as every reader of the project
    does (pyarrow skips it)."""
    from prereg.records import BOM_WORDS

    try:
        with open(path, "rb") as fh:
            head = fh.read(3)
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if head == b"\xef\xbb\xbf":
        raise UserError(f"{path}:1: {BOM_WORDS}")


def _null_tokens(fields: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """{field: the CSV cells its ``null_values`` read as null}, for the fields that have
    them."""
    return {
        f["name"]: [str(t) for t in f["null_values"]]
        for f in fields
        if f.get("null_values") and f.get("type", "string") in _CSV_TYPES
    }


def _tokens_to_null(path: Path, fields, table, tokens: Mapping[str, list[str]], types):
    """``table`` with each cell of a field's ``null_values`` made null and the field's column
    converted to its type; a cell of another text that is not of the type is refused at its
    line, as pyarrow's conversion refuses one (:func:`_refuse_cells`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name, words in tokens.items():
        if name not in table.column_names:
            continue
        at = table.column_names.index(name)
        col = table.column(name)
        col = pc.if_else(pc.is_in(col, value_set=pa.array(words, pa.string())), None, col)
        kind = next(f.get("type", "string") for f in fields if f["name"] == name)
        if kind in _CSV_WORDS:
            rx = _CSV_WORDS[kind][1]
            if not all(v is None or rx.fullmatch(v) for v in col.to_pylist()):
                _refuse_cells(path, fields, None)
            if kind == "boolean":
                col = pc.equal(col, "true")
            else:
                try:
                    col = col.cast(types[name])
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    _refuse_cells(path, fields, exc)
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
    for row in reader:
        if row:  # pyarrow skips an empty line
            starts.append(start)
        start = reader.line_num + 1
    starts = starts[1:]  # the header
    if len(starts) < n:  # pyarrow and csv disagree on the file: count records as lines
        return range(2, n + 2)
    return starts[:n]


_CSV_WORDS = {
    "integer": ("a whole number (digits, a leading - for a negative one)", re.compile(r"-?[0-9]+")),
    "number": (
        "a number",
        re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)", re.I),
    ),
    "boolean": ("true or false (CSV booleans are written exactly so)", re.compile(r"true|false")),
}


def _refuse_cells(path: Path, fields: Sequence[Mapping[str, Any]], exc) -> None:
    """A CSV file whose cells pyarrow could not convert to the contract's types, refused at
    each bad cell's line and field (the file read again as text); pyarrow's own words when no
    cell is found (a malformed row)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    typed = {f["name"]: f.get("type", "string") for f in fields}
    typed = {k: v for k, v in typed.items() if v in _CSV_WORDS}
    tokens = _null_tokens(fields)
    try:
        text = pcsv.read_csv(
            path,
            convert_options=pcsv.ConvertOptions(
                column_types={k: pa.string() for k in typed}, strings_can_be_null=False
            ),
        )
    except (pa.ArrowException, OSError):
        raise UserError(f"{path}: not a CSV file of this contract: {exc}") from None
    problems: list[str] = []
    count = 0
    where = _csv_where(path, text.num_rows)
    for name, kind in typed.items():
        if name not in text.column_names:
            continue
        words, rx = _CSV_WORDS[kind]
        for i, v in enumerate(text.column(name).to_pylist()):
            if v is None or v == "" or rx.fullmatch(v) or v in tokens.get(name, ()):
                continue
            count += 1
            if len(problems) < 20:
                problems.append(f"{where(i)}: field {name}: {v!r} is not {words}")
    if not count:
        raise UserError(f"{path}: not a CSV file of this contract: {exc}") from None
    problems.sort(key=lambda p: int(p[len(str(path)) + 1 :].split(":", 1)[0]))
    more = [f"… and {count - len(problems)} more"] if count > len(problems) else []
    raise UserError(
        f"{path}: {count} cell(s) not of their field's type (an empty cell is null"
        f"{_tokens_words(tokens)})",
        problems=problems + more,
    )


def _tokens_words(tokens: Mapping[str, list[str]]) -> str:
    """How the refusal of a CSV cell names the cells read as null besides the empty one, or
    where to declare them."""
    if not tokens:
        return "; a field's null_values names cells such as NA that stand for null"
    return "".join(
        f"; in {name}, also {', '.join(map(repr, words))}" for name, words in tokens.items()
    )


def _checked(path: Path, schema_path: Path, fields, parts, max_problems: int) -> list[dict]:
    """The records of each (location, table) part, checked as JSONL records are."""
    from prereg.records import _accepts

    names = {f["name"] for f in fields}
    nullable = {f["name"] for f in fields if f.get("nullable")}
    accept = _accepts(str(schema_path))
    rows: list[dict] = []
    problems: list[str] = []
    for where, table in parts:
        unknown = [c for c in table.column_names if c not in names]
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
            )
        empty = "empty" if path.suffix.lower() == ".csv" else "null"
        for i, raw in enumerate(table.to_pylist()):
            rec = {k: v for k, v in raw.items() if v is not None or k in nullable}
            if accept is None or not accept(rec):
                for p in schema_problems(rec, schema_path):
                    name = p.rsplit("missing field ", 1)[-1].strip("'")
                    if "missing field " in p and name in raw and name not in rec:
                        p += f" (its cell is {empty}, and the field is not nullable)"
                    problems.append(f"{where(i)}: {p}")
            rows.append(rec)
    if not rows and not problems:
        raise UserError(f"{path}: the file holds no records")
    _refuse_problems(path, schema_path, problems, max_problems)
    return rows
