"""An integer field holds an integer as written, in JSONL, CSV and Parquet alike: ``1.0`` (a
double, which need not hold the integer written: ``9007199254740993.0`` is read as
``9007199254740992``) is refused at its line as CSV refused ``1.0``, and a Parquet column
whose type cannot hold its field (doubles for an integer, timestamps, decimals, lists, structs,
bytes) is refused once, naming the column, where JSONL and Parquet had taken 1.0 and every row
of a wrong column was refused alone. A NaN in a Parquet number column is refused at its row
(JSON has none)."""

from __future__ import annotations

import datetime
import decimal
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.tabular import read_contract_columns, read_contract_records

FIELDS = [
    {"name": "id", "type": "string"},
    {"name": "n", "type": "integer"},
    {"name": "x", "type": "number", "nullable": True},
]
SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "n": {"type": "integer"},
        "x": {"type": ["number", "null"]},
    },
    "required": ["id", "n"],
    "additionalProperties": False,
}


def _schema(tmp_path):
    schema = tmp_path / "rec.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    return schema


def _refused(path, schema):
    out = []
    for read in (read_contract_records, read_contract_columns):
        with pytest.raises(UserError) as e:
            read(path, schema, FIELDS)
        out.append((e.value.message, e.value.problems))
    assert out[0] == out[1]
    return out[0]


@pytest.mark.parametrize(
    "written, read", [("1.0", "1.0"), ("1e0", "1.0"), ("9007199254740993.0", "9007199254740992.0")]
)
def test_a_jsonl_integer_written_as_a_double_is_refused_at_its_line(tmp_path, written, read):
    path = tmp_path / "obs.jsonl"
    path.write_text(f'{{"id": "a", "n": 1, "x": 0.5}}\n{{"id": "b", "n": {written}, "x": 0.5}}\n')
    _, problems = _refused(path, _schema(tmp_path))
    assert problems == [
        f"{path}:2: at /n: expected integer, got {read} (an integer is written without a point"
        " or exponent: a number such as 1.0 is a double, which need not hold the integer"
        " written)"
    ]


def test_an_integer_as_written_is_read(tmp_path):
    path = tmp_path / "obs.jsonl"
    path.write_text('{"id": "a", "n": 9007199254740993, "x": 1.0}\n')
    for read in (read_contract_records, read_contract_columns):
        (rec,) = list(read(path, _schema(tmp_path), FIELDS))
        assert rec["n"] == 9007199254740993 and type(rec["n"]) is int


@pytest.mark.parametrize(
    "column, said",
    [
        (
            pa.array([1.0, 2.0], pa.float64()),
            "column 'n' is double; field n is integer, which needs an integer column (int8 to"
            " int64, uint8 to uint64) (a double need not hold the integer written; pandas writes"
            " an integer column with missing values as doubles: df['n'].astype('Int64') writes"
            " integers and nulls)",
        ),
        (
            pa.array([decimal.Decimal(1), decimal.Decimal(2)], pa.decimal128(5, 0)),
            "column 'n' is decimal128(5, 0); field n is integer, which needs an integer column"
            " (int8 to int64, uint8 to uint64) (write it as int64)",
        ),
        (
            pa.array([datetime.datetime(2020, 1, 1)] * 2, pa.timestamp("us")),
            "column 'n' is timestamp[us]; field n is integer, which needs an integer column"
            " (int8 to int64, uint8 to uint64)",
        ),
        (
            pa.array([[1], [2]]),
            "column 'n' is list<element: int64>; field n is integer, which needs an integer"
            " column (int8 to int64, uint8 to uint64)",
        ),
    ],
)
def test_a_parquet_column_that_cannot_hold_its_field_is_refused_once(tmp_path, column, said):
    path = tmp_path / "obs.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "n": column, "x": [0.5, None]}), path)
    message, problems = _refused(path, _schema(tmp_path))
    assert message == f"{path}: {said}"
    assert problems == []


@pytest.mark.parametrize(
    "column, t",
    [
        (pa.array([{"a": "x"}, {"a": "y"}]), "struct<a: string>"),
        (pa.array([b"a", b"b"], pa.binary()), "binary"),
    ],
)
def test_a_parquet_string_field_needs_a_string_column(tmp_path, column, t):
    path = tmp_path / "obs.parquet"
    pq.write_table(pa.table({"id": column, "n": [1, 2], "x": [0.5, None]}), path)
    message, _ = _refused(path, _schema(tmp_path))
    assert message == (
        f"{path}: column 'id' is {t}; field id is string, which needs a string column (or a"
        " timestamp or date column, read as its ISO 8601 text)"
    )


@pytest.mark.parametrize(
    "column, read",
    [
        (
            pa.array(
                [
                    datetime.datetime(2026, 12, 1, 9),
                    datetime.datetime(2026, 12, 1, 9, 0, 3, 250000),
                ],
                pa.timestamp("us"),
            ),
            ["2026-12-01T09:00:00.000000", "2026-12-01T09:00:03.250000"],
        ),
        (
            pa.array([datetime.datetime(2026, 12, 1, 9), None], pa.timestamp("s", tz="UTC")),
            ["2026-12-01T09:00:00.000Z", None],  # Parquet keeps seconds as milliseconds
        ),
        (
            pa.array([datetime.datetime(2026, 12, 1, 9)] * 2, pa.timestamp("ms")).cast(
                pa.timestamp("ms", tz="Europe/Paris")
            ),
            ["2026-12-01T10:00:00.000+0100"] * 2,
        ),
        (pa.array([datetime.date(2026, 12, 1)] * 2, pa.date32()), ["2026-12-01"] * 2),
    ],
)
def test_a_parquet_timestamp_column_is_read_by_a_string_field_as_iso_text(tmp_path, column, read):
    # a profiler's (or pandas') timestamp column, as it comes: its ISO 8601 text
    path = tmp_path / "obs.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "n": [1, 2], "x": [0.5, None], "at": column}), path)
    fields = [*FIELDS, {"name": "at", "type": "string", "nullable": True}]
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "at": {"type": ["string", "null"]}}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    for reader in (read_contract_records, read_contract_columns):
        assert [dict(r)["at"] for r in reader(path, tmp_path / "s.json", fields)] == read


def test_parquet_columns_that_hold_their_fields_are_read(tmp_path):
    path = tmp_path / "obs.parquet"
    table = pa.table(
        {
            "id": pa.array(["a", "b"], pa.large_string()).dictionary_encode(),
            "n": pa.array([1, 2], pa.int8()),
            "x": pa.array([1, None], pa.int32()),
        }
    )
    pq.write_table(table, path)
    for read in (read_contract_records, read_contract_columns):
        assert [dict(r) for r in read(path, _schema(tmp_path), FIELDS)] == [
            {"id": "a", "n": 1, "x": 1},
            {"id": "b", "n": 2, "x": None},
        ]


def test_a_nan_in_a_parquet_number_column_is_refused_at_its_row(tmp_path):
    path = tmp_path / "obs.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "n": [1, 2], "x": [0.5, float("nan")]}), path)
    _, problems = _refused(path, _schema(tmp_path))
    assert problems == [
        f"{path}: row group 0, row 2: at /x: nan is not a finite number (JSON has no NaN or"
        " infinity; a missing value is null)"
    ]


# -- through score, in one process and in partitions ------------------------------------------


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    root = tmp_path_factory.mktemp("intstudy")
    assert main(["--project", str(root), "init", "ia"]) == 0
    assert main(["--project", str(root), "compile"]) == 0
    items = root / "items.jsonl"
    assert main(["--project", str(root), "ia", "items", "--out", str(items), "--quiet"]) == 0
    obs = root / "obs.jsonl"
    assert main(["--project", str(root), "ia", "simulate", "--items", str(items), "--scenario",
                 "effect", "--seed", "1", "--out", str(obs), "--quiet"]) == 0  # fmt: skip
    return root, items, [json.loads(x) for x in obs.read_text().splitlines()]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("extra", [(), ("--workers", "2", "--partition-bytes", "1K")])
def test_score_refuses_an_attempt_written_as_a_double(starter, tmp_path, capsys, kind, extra):
    root, items, rows = starter
    path = tmp_path / f"obs.{kind}"
    if kind == "jsonl":
        lines = [json.dumps(r) for r in rows]
        lines[5] = lines[5].replace('"attempt": 1', '"attempt": 1.0')
        path.write_text("\n".join(lines) + "\n")
        want = f"{path}:6: at /attempt: expected integer, got 1.0"
    else:
        table = pa.Table.from_pylist(rows)
        table = table.set_column(
            table.column_names.index("attempt"), "attempt", table["attempt"].cast(pa.float64())
        )
        pq.write_table(table, path, row_group_size=40)
        want = f"{path}: column 'attempt' is double; field attempt is integer"
    out = tmp_path / "out" / "SCORE.json"
    argv = ["--project", str(root), "ia", "score", "--items", str(items), "--observations"]
    assert main([*argv, str(path), "--out", str(out), "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert want in err and "Traceback" not in err
    assert not out.exists()


def test_pandas_index_column_in_parquet_is_named_with_a_hint(tmp_path):
    import pandas as pd

    path = tmp_path / "obs.parquet"
    frame = pd.DataFrame({"id": ["a", "b"], "n": [1, 2], "x": [0.5, None]}, index=[3, 7])
    frame.to_parquet(path)  # a non-range index is written as the column __index_level_0__
    message, _ = _refused(path, _schema(tmp_path))
    assert message.endswith(
        "column(s) '__index_level_0__' are not fields of the record contract (rec.schema.json);"
        " a column __index_level_0__ is the index pandas' to_parquet writes (a data frame's row"
        " labels): write the file with index=False"
    )


def test_a_folder_of_parquet_parts_is_refused_naming_what_it_is(tmp_path):
    folder = tmp_path / "obs.parquet"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["a"], "n": [1], "x": [0.5]}), folder / "part-0.parquet")
    message, _ = _refused(folder, _schema(tmp_path))
    assert message == (
        f"{folder}: cannot read: a folder, not a regular file; a Parquet input is one file (a"
        " folder of Parquet parts, as Spark or pandas' partition_cols write, is not read: write"
        " the table as one file, with several row groups for --workers)"
    )
