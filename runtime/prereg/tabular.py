"""Records of a JSONL contract read from a file chosen by its extension.

A record contract of format ``jsonl`` describes one JSON object per line; the same records can
come as columns: ``.parquet`` (Apache Parquet) and ``.csv`` (a header line naming the fields)
are read by pyarrow, ``.jsonl`` and every other name by the strict JSONL reader
(:func:`prereg.records.read_jsonl_records`). Columnar records are checked against the same
contract schema, record by record, and every problem is located in the file's own terms:

- Parquet: ``FILE: row group G, row R`` (R counts from 1 within the row group) and the field;
- CSV: ``FILE:LINE`` (the header is line 1, so the first record is line 2) and the field.

A column the contract does not name is refused (as an unknown key is), and so is a file that
pyarrow cannot read, naming it. A null in a column whose field is not nullable means the
field is absent from that record (a required field is then reported missing), so a table with
optional fields carries the same records as the JSONL file that leaves them out. CSV cells are
converted by the contract's field types (an empty cell is a null; ``true``/``false`` are
booleans), never guessed.

pyarrow is imported only when such a file is read.
"""

from __future__ import annotations

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
    if not path.is_file():
        raise UserError(f"{path}: cannot read: not a regular file")
    if kind == "Parquet":
        parts = _parquet_parts(path)
    else:
        parts = _csv_parts(path, fields)
    return _checked(path, schema_path, fields, parts, max_problems)


def read_contract_columns(
    path, schema_path: Path, fields: Sequence[Mapping[str, Any]], *, max_problems: int = 50
):
    """:func:`read_contract_records`'s records as :class:`prereg.columnar.RecordColumns`."""
    path = Path(path)
    if path.suffix.lower() not in COLUMNAR:
        from prereg.records import read_jsonl_columns

        return read_jsonl_columns(path, schema_path, max_problems=max_problems)
    from prereg.columnar import RecordColumns

    rows = read_contract_records(path, schema_path, fields, max_problems=max_problems)
    return RecordColumns.from_dicts([f["name"] for f in fields], rows)


def _parquet_parts(path: Path):
    """(label of a record's location, table) for each row group of a Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a readable Parquet file: {exc}") from None
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
    convert = pcsv.ConvertOptions(
        column_types=types,
        strings_can_be_null=True,
        null_values=[""],
        true_values=["true"],
        false_values=["false"],
    )
    try:
        table = pcsv.read_csv(path, convert_options=convert)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a CSV file of this contract: {exc}") from None
    yield (lambda i: f"{path}:{i + 2}"), table


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
            raise UserError(
                f"{path}: column(s) {', '.join(map(repr, unknown))} are not fields of the"
                f" record contract ({schema_path.name})"
            )
        for i, rec in enumerate(table.to_pylist()):
            rec = {k: v for k, v in rec.items() if v is not None or k in nullable}
            if accept is None or not accept(rec):
                problems.extend(f"{where(i)}: {p}" for p in schema_problems(rec, schema_path))
            rows.append(rec)
    if not rows and not problems:
        raise UserError(f"{path}: the file holds no records")
    _refuse_problems(path, schema_path, problems, max_problems)
    return rows
