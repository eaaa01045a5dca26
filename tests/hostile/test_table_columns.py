"""``read_contract_columns`` on Parquet and CSV files against ``read_contract_records``, the
record-by-record reader it stands in for: on any table, the same records (values and their
types) or the same refusal, whether the whole-column check vouches for the file or not."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from prereg.columnar import RecordColumns
from prereg.errors import UserError
from prereg.tabular import _columns_at_once, read_contract_columns, read_contract_records

FIELDS = [
    {"name": "id", "type": "string"},
    {"name": "n", "type": "integer"},
    {"name": "x", "type": "number", "nullable": True},
    {"name": "ok", "type": "boolean"},
    {"name": "kind", "type": "string"},
]
SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^r[0-9]+$"},
        "n": {"type": "integer", "minimum": 0, "maximum": 9},
        "x": {"type": ["number", "null"], "maximum": 2.5},
        "ok": {"type": "boolean"},
        "kind": {"type": "string", "enum": ["a", "bb"]},
    },
    "required": ["id", "n"],
    "additionalProperties": False,
}
ARROW = {
    "id": pa.string(),
    "n": pa.int64(),
    "x": pa.float64(),
    "ok": pa.bool_(),
    "kind": pa.string(),
}
VALID = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["r1", "r22"]),
        "n": st.sampled_from([0, 3, 9]),
        "x": st.none() | st.sampled_from([0.5, 2.5, -1e300]),
        "ok": st.none() | st.booleans(),
        "kind": st.none() | st.sampled_from(["a", "bb"]),
    }
)
ANY = st.fixed_dictionaries(
    {
        "id": st.none() | st.sampled_from(["r1", "r22", "x1", ""]),
        "n": st.none() | st.sampled_from([0, 3, 9, 10, -1]),
        "x": st.none() | st.sampled_from([0.5, 2.5, 3.0, -1e300, math.nan, math.inf]),
        "ok": st.none() | st.booleans(),
        "kind": st.none() | st.sampled_from(["a", "bb", "c"]),
    }
)


def _typed(value):
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _outcome(fn, *args):
    try:
        return "ok", [_typed(r) for r in fn(*args)]
    except UserError as exc:
        return "refused", exc.message, exc.problems


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(VALID, max_size=9), st.sampled_from(["parquet", "csv"]), st.data())
def test_any_table_is_read_or_refused_alike(tmp_path_factory, rows, kind, data):
    if rows and data.draw(st.booleans()):  # now and then a row that may break the contract
        rows[data.draw(st.integers(0, len(rows) - 1))] = data.draw(ANY)
    folder = tmp_path_factory.mktemp("tables")
    schema_path = folder / "rec.schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    drop = data.draw(st.sets(st.sampled_from(["x", "ok", "kind"])))
    names = [f["name"] for f in FIELDS if f["name"] not in drop]
    table = pa.table({n: pa.array([r[n] for r in rows], type=ARROW[n]) for n in names})
    path = folder / f"obs.{kind}"
    if kind == "parquet":
        pq.write_table(table, path, row_group_size=data.draw(st.sampled_from([2, 4, 64])))
    else:
        pcsv.write_csv(table, path)
    old = _outcome(read_contract_records, path, schema_path, FIELDS)
    new = _outcome(read_contract_columns, path, schema_path, FIELDS)
    assert new == old
    fast = _columns_at_once(path, schema_path, FIELDS)
    if fast is not None:  # the column check vouches only for files the reader accepts
        assert old[0] == "ok" and isinstance(fast, RecordColumns)
        assert [_typed(r) for r in fast] == old[1]


def test_ordinary_tables_take_the_column_path(tmp_path):
    schema_path = tmp_path / "rec.schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    rows = [
        {"id": f"r{i}", "n": i % 10, "x": None, "ok": i % 2 == 0, "kind": "a"} for i in range(50)
    ]
    table = pa.table({n: pa.array([r[n] for r in rows], type=ARROW[n]) for n in ARROW})
    pq.write_table(table, tmp_path / "obs.parquet", row_group_size=16)
    got = _columns_at_once(tmp_path / "obs.parquet", schema_path, FIELDS)
    assert got is not None and list(got) == rows


def test_a_fifo_named_like_a_table_is_refused_not_opened(tmp_path):
    import os

    import pytest

    schema_path = tmp_path / "rec.schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    for name in ("obs.parquet", "obs.csv"):
        os.mkfifo(tmp_path / name)  # opening it for reading would wait for a writer
        with pytest.raises(UserError, match="not a regular file"):
            read_contract_columns(tmp_path / name, schema_path, FIELDS)


def _schema(tmp_path):
    schema_path = tmp_path / "rec.schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    return schema_path


def _write_twice(path, kind: str) -> None:
    if kind == "csv":
        path.write_text("id,n,n\nr1,1,2\n")
        return
    table = pa.table({"id": ["r1"], "n": [1], "m": [2]}).rename_columns(["id", "n", "n"])
    pq.write_table(table, path)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("reader", [read_contract_columns, read_contract_records])
def test_a_column_named_twice_is_refused_naming_it(tmp_path, kind, reader):
    """Which of the two would the record hold? (pyarrow's KeyError was a traceback.)"""
    path = tmp_path / f"obs.{kind}"
    _write_twice(path, kind)
    with pytest.raises(UserError, match=r"obs\.\w+: column\(s\) 'n' appear more than once"):
        reader(path, _schema(tmp_path), FIELDS)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # the bad cell's record starts on the line given (the header is line 1)
        ("id,n\nr1,1\nr2,x\n", 3),
        ('id,n\n"r\n1",1\nr2,x\n', 4),  # a quoted value over two lines
        ('id,n\n"r\n\n1",1\nr2,x\n', 5),  # a blank line inside quotes (one between: refused)
        ('id,n\nr1,1\n"a ""quoted"" id",x\n', 3),  # doubled quotes, no line break
        ('id,n\r\n"r\r\n1",1\r\nr2,x\r\n', 4),  # CRLF
    ],
)
@pytest.mark.parametrize("broken", ["type", "contract"])
def test_a_csv_problem_is_located_at_the_line_its_record_starts_on(tmp_path, text, line, broken):
    """Record i is not line i + 2 once a quoted value holds a line break (it was)."""
    if broken == "contract":  # a whole number pyarrow converts, outside the schema's 0..9
        text = text.replace(",x", ",12")
    path = tmp_path / "obs.csv"
    path.write_bytes(text.encode())
    with pytest.raises(UserError) as info:
        read_contract_columns(path, _schema(tmp_path), FIELDS)
    lines = [p for p in info.value.problems if "/n" in p or "field n" in p]
    assert lines and all(p.startswith(f"{path}:{line}: ") for p in lines), info.value.problems


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # no header: every "column" is a value of the first record
        ("r1,1\nr2,2\n", "column(s) 'r1', '1' are not fields of the record contract"
         " (rec.schema.json); a CSV file's first line names its columns (id, kind, n, ok, x)"),
        # one unknown column beside known ones: no word about the header
        ("id,n,zz\nr1,1,2\n", "column(s) 'zz' are not fields of the record contract (rec.schema.json)"),
        # thousands of columns: twenty named
        (",".join(f"c{i}" for i in range(5000)) + "\n" + ",".join("1" * 5000) + "\n",
         "column(s) 'c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10', 'c11',"
         " 'c12', 'c13', 'c14', 'c15', 'c16', 'c17', 'c18', 'c19', … are not fields"),
    ],
)  # fmt: skip
def test_columns_not_of_the_contract_are_named(tmp_path, text, words):
    path = tmp_path / "obs.csv"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        read_contract_columns(path, _schema(tmp_path), FIELDS)
    assert info.value.message.startswith(f"{path}: {words}")
    assert len(info.value.message) < 600


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("id,n\nr1,1\n\nr2,2\n", 3),  # between records
        ("id,n\nr1,1\nr2,2\n\n", 4),  # the last line
        ("\nid,n\nr1,1\n", 1),  # before the header
        ("id,n\r\nr1,1\r\n\r\nr2,2\r\n", 3),  # CRLF
        ("id,n,x\nr1,1,\n\nr2,2,\n", 3),  # beside a nullable column's empty cells
    ],
)
@pytest.mark.parametrize("required", [["id", "n"], []])
def test_a_csv_blank_line_is_refused_at_its_line_by_either_reader(tmp_path, text, line, required):
    """A blank line is refused at its line whether or not the contract has a required field
    (with one, the column check reads the blank line as a record of nulls, which that field
    refuses, instead of scanning the file for blank lines first)."""
    schema_path = tmp_path / "rec.schema.json"
    schema_path.write_text(json.dumps({**SCHEMA, "required": required}))
    path = tmp_path / "obs.csv"
    path.write_bytes(text.encode())
    assert _columns_at_once(path, schema_path, FIELDS) is None
    for reader in (read_contract_columns, read_contract_records):
        with pytest.raises(UserError, match=rf"^{path}:{line}: blank line"):
            reader(path, schema_path, FIELDS)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"0", b"1", b"9", b".", b"e", b"E", b"+", b"-", b",", b"\n", b"a"]),
        max_size=90,
    ),
    st.sampled_from([b"", b"12345678901234567", b"123456789.123456789", b"." + b"0" * 300]),
    st.integers(0, 90),
    st.sampled_from([16, 1 << 22]),
)
@example([b"1", b",", b"e", b"1", b"2", b"3"], b"", 0, 1 << 22)  # an exponent at the very end
@example([b"a", b"E", b"-", b"1", b"2", b"3"], b"", 0, 16)
def test_the_long_number_look_finds_what_the_expression_finds(parts, run, at, look):
    """The numpy look before the long-number expression (a long cell: 18 significant digits,
    300 zeros after a point, a three-digit exponent) says yes exactly where the expression
    matches, across the slices it looks at."""
    import prereg.tabular as tabular

    data = b"".join(parts)
    data = data[:at] + run + data[at:]
    old = tabular._LOOK
    tabular._LOOK = look
    try:
        assert tabular._long_cell(data) == (tabular._LONG_CELL.search(data) is not None)
    finally:
        tabular._LOOK = old


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_an_integer_or_boolean_out_of_its_contract_is_found_after_valid_rows(tmp_path, kind):
    """The column check reads an integer or boolean column's distinct values: a bad one in a
    later row (after rows of valid values) is still found, and the record reader locates it."""
    rows = [{"id": f"r{i}", "n": i % 3, "ok": True} for i in range(40)]
    rows[30]["n"] = 12  # outside 0..9
    table = pa.table({k: pa.array([r[k] for r in rows], type=ARROW[k]) for k in ("id", "n", "ok")})
    path = tmp_path / f"obs.{kind}"
    if kind == "parquet":
        pq.write_table(table, path, row_group_size=16)
    else:
        pcsv.write_csv(table, path)
    schema_path = _schema(tmp_path)
    assert _columns_at_once(path, schema_path, FIELDS) is None
    with pytest.raises(UserError) as info:
        read_contract_columns(path, schema_path, FIELDS)
    where = "row group 1, row 15" if kind == "parquet" else f"{path}:32"
    assert any(where in p and "/n" in p for p in info.value.problems), info.value.problems
