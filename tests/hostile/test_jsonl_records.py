"""``read_jsonl_records``, ``read_jsonl_columns`` and the partitioned reader of ``score
--workers`` against ``read_records(..., "jsonl")``, the strict reader they stand in for: on any
file, the same records (values and their types) or the same refusal (message and every
problem), whichever blocks the typed fast path takes and however the file is partitioned; and
the fast path is taken on ordinary records."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prereg.records as records
from prereg import partitioned
from prereg.columnar import RecordColumns
from prereg.errors import UserError
from prereg.records import read_jsonl_columns, read_jsonl_records, read_records

ROOT = Path(__file__).resolve().parents[2]
D17 = ROOT / "generated" / "d17_multifact" / "schemas" / "observation.schema.json"
SETTINGS = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

SCHEMAS = {
    "d17": json.loads(D17.read_text()),
    "kinds": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^r[0-9]+$", "maxLength": 4},
            "n": {"type": "integer", "minimum": 0.5, "exclusiveMaximum": 9.5},
            "x": {"type": ["number", "null"], "exclusiveMinimum": -1, "maximum": 2.5},
            "ok": {"type": "boolean"},
            "kind": {"enum": ["a", "bb", "ccc"], "minLength": 2},
            "note": {"type": ["string", "null"], "minLength": 1},
        },
        "required": ["id", "n"],
        "additionalProperties": False,
    },
    "open": {  # no typed path: additional properties allowed
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
    },
}


@pytest.fixture(scope="module")
def schema_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("schemas")
    out = {}
    for name, schema in SCHEMAS.items():
        out[name] = folder / f"{name}.schema.json"
        out[name].write_text(json.dumps(schema))
    return out


def _typed(value):
    """A value with the type of every number kept (1 and 1.0 differ, True and 1 differ)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _outcome(fn, *args, **kw):
    try:
        return "ok", [_typed(r) for r in fn(*args, **kw)]
    except UserError as exc:
        return "refused", exc.message, exc.problems


def _same(path: Path, schema: Path, block: int | None = None, size: int = 1) -> tuple:
    old = _outcome(read_records, path, schema, "jsonl")
    new = _outcome(read_jsonl_records, path, schema, block=block)
    assert new == old
    cols = _outcome(read_jsonl_columns, path, schema, block=block)
    assert cols == old
    # in partitions of ``size`` bytes of whole lines (1: a line each), each read alone and
    # joined: the same records, the same first problems with the file's line numbers and the
    # same count, also when each partition has more problems than are shown
    assert _outcome(partitioned.read_jsonl_columns, path, schema, size=size) == old
    few = _outcome(read_jsonl_columns, path, schema, max_problems=2)
    assert _outcome(partitioned.read_jsonl_columns, path, schema, size=size, max_problems=2) == few
    if old[0] == "ok" and records._column_decoders(str(schema)) is not None:
        one = read_jsonl_columns(path, schema)
        parts = partitioned.read_jsonl_columns(path, schema, size=size)
        assert (parts.digest, parts.absent, parts.n) == (one.digest, one.absent, one.n)
    return new


def test_the_d17_and_kinds_contracts_have_a_typed_path_and_the_open_one_not(schema_files):
    assert records._typed_decoders(str(schema_files["d17"])) is not None
    assert records._typed_decoders(str(schema_files["kinds"])) is not None
    assert records._typed_decoders(str(schema_files["open"])) is None


def test_ordinary_records_take_the_typed_path(schema_files, tmp_path, monkeypatch):
    path = tmp_path / "obs.jsonl"
    rows = [
        {
            "rowId": f"{i:064x}",
            "requestId": "champion",
            "pYes": [0.25, None, 1, 0][i % 4],
            "attempt": 1 + i % 3,
        }  # fmt: skip
        for i in range(500)
    ]
    rows[7]["error"] = "timeout"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(records, "schema_problems", None)  # the per-record check is not run
    assert read_jsonl_records(path, schema_files["d17"], block=4096) == rows
    cols = read_jsonl_columns(path, schema_files["d17"], block=4096)
    assert isinstance(cols, RecordColumns) and list(cols) == rows
    assert cols.values("error") == [None] * 7 + ["timeout"] + [None] * 492
    assert cols.has("error").tolist() == [i == 7 for i in range(500)]
    assert cols.values("pYes", strict=True) == [r["pYes"] for r in rows]
    assert list(cols.take([7, 0])) == [rows[7], rows[0]]


ROW = st.fixed_dictionaries(
    {
        "rowId": st.sampled_from(["a" * 64, "0" * 64, "A" * 64, "a" * 63, "", "r1"]),
        "requestId": st.sampled_from(["champion", "", "x"]),
        "pYes": st.none()
        | st.sampled_from([0, 1, 2, -0.0, 0.5, 1.0, 1.5, True, "0.5"])
        | st.floats(-1, 2),
        "attempt": st.sampled_from([1, 2, 0, -1, 1.0, 2**70, True, None, "1"]),
    },
    optional={
        "error": st.sampled_from(["", "x", 'a":b', None, 3]),
        "extra": st.just(1),
        "id": st.sampled_from(["r1", "r12345", "x1"]),
        "n": st.sampled_from([0, 1, 9, 10, 1.0, False]),
        "x": st.sampled_from([-1, -0.5, 2.5, 2.6, None, 0]),
        "ok": st.sampled_from([True, False, 0, None]),
        "kind": st.sampled_from(["a", "bb", "ccc", "d", 1]),
        "note": st.sampled_from(["", "n", None]),
    },
)
RAW_LINES = [
    b"",
    b"   ",
    b"\r",
    b"{}",
    b"[]",
    b"null",
    b'{"rowId": NaN}',
    b'{"pYes": Infinity}',
    b'{"pYes": 1e400}',
    b'{"pYes": 1.7976931348623159e308}',
    b'{"attempt": ' + b"9" * 5000 + b"}",
    b'{"rowId": "\\ud800"}',
    b'{"rowId": "\xff"}',
    b"\xef\xbb\xbf{}",
    b'{"a": 1} {"b": 2}',
    b'{"a": 1},{"b": 2}',
    b'{"a": 1,',
    b'"b": 2}',
    b"[" * 3000 + b"]" * 3000,
    b'{"x": ' + b"[" * 3000 + b"]" * 3000 + b"}",
]


def _line(data, row) -> bytes:
    """One line: a record as JSON in one of several spellings, maybe with a key repeated."""
    style = data.draw(st.sampled_from(["compact", "spaced", "colon-spaced", "duplicate", "raw"]))
    if style == "raw":
        return data.draw(st.sampled_from(RAW_LINES))
    if style == "compact":
        return json.dumps(row, separators=(",", ":")).encode()
    if style == "spaced":
        return json.dumps(row).encode()
    if style == "colon-spaced":
        return json.dumps(row, separators=(", ", " : ")).encode()
    key = data.draw(st.sampled_from(sorted(row)))
    text = json.dumps(row)[:-1] + f", {json.dumps(key)}: {json.dumps(row[key])}}}"
    return text.encode()


@SETTINGS
@given(st.data())
def test_any_file_is_read_or_refused_alike(schema_files, tmp_path_factory, data):
    schema = schema_files[data.draw(st.sampled_from(sorted(schema_files)))]
    rows = data.draw(st.lists(ROW, max_size=12))
    lines = [_line(data, r) for r in rows]
    end = data.draw(st.sampled_from([b"\n", b"\r\n"]))
    raw = b"".join(line + (end if data.draw(st.integers(0, 9)) == 0 else b"\n") for line in lines)
    if data.draw(st.booleans()) and raw:
        raw = raw[:-1]  # no final LF
    path = tmp_path_factory.mktemp("obs") / "obs.jsonl"
    path.write_bytes(raw)
    block = data.draw(st.sampled_from([None, 64, 200]))
    _same(path, schema, block=block, size=data.draw(st.sampled_from([1, 64, 300, 1 << 24])))


@pytest.mark.parametrize(
    "raw, words",
    [
        (
            b'{"rowId":"'
            + b"a" * 64
            + b'","rowId":"'
            + b"b" * 64
            + b'","requestId":"c","pYes":0.5,"attempt":1}\n',
            "duplicate key 'rowId'",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":NaN,"attempt":1}\n',
            "NaN is not a JSON value",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":-Infinity,"attempt":1}\n',
            "-Infinity is not a JSON value",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":1e400,"attempt":1}\n',
            "overflows a double",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":0.5,"attempt":true}\n',
            "expected integer, got true",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":"0.5","attempt":1}\n',
            "expected ['number', 'null'], got \"0.5\"",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":0.5,"attempt":1}\n\n',
            "blank line",
        ),  # fmt: skip
        (
            b'{"rowId":"' + b"a" * 64 + b'","requestId":"c","pYes":0.5,"attempt":1}\r\n',
            "CRLF line ending",
        ),  # fmt: skip
        (b'\xef\xbb\xbf{"rowId":"a"}\n', "byte-order mark"),
        (b'{"rowId":"\xff"}\n', "not UTF-8"),
        (b"", "the file is empty"),
    ],
)
def test_each_refusal_of_the_strict_reader_is_kept(schema_files, tmp_path, raw, words):
    path = tmp_path / "obs.jsonl"
    path.write_bytes(raw)
    got = _same(path, schema_files["d17"])
    assert got[0] == "refused"
    assert words in got[1] + " ".join(got[2])
    assert str(path) in got[1]


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_file_that_is_not_regular_is_refused_alike(schema_files, tmp_path, kind):
    path = tmp_path / "obs.jsonl"
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    got = _same(path, schema_files["d17"])
    assert got[0] == "refused" and "not a regular file" in got[1]


def test_a_missing_file_is_refused_alike(schema_files, tmp_path):
    got = _same(tmp_path / "none.jsonl", schema_files["d17"])
    assert got[0] == "refused" and "cannot read" in got[1]
