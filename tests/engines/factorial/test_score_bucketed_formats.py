"""Parquet and CSV files reduced in buckets (:mod:`prereg.bucketed`): a Parquet file cut at its
row groups, a CSV file at its lines, give SCORE.json and SCORE.md byte for byte as one process
writes them, for any number of workers and partition sizes, and the figures of the same records
as JSONL; a file one process refuses is refused in its words (file, line or row group, field);
a CSV cut that may fall inside a quoted value sends the score to one process."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg import bucketed, partitioned, tabular
from tests.engines.factorial.test_score_bucketed import (
    Spy,
    _log,
    _score,
    projects,  # noqa: F401 (the fixture, shared)
)

OBS_SCHEMA = pa.schema([("attempt", pa.int64()), ("correct", pa.bool_()), ("rowId", pa.string())])


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _parquet(rows: list[dict], path: Path, group: int, schema=None) -> Path:
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, row_group_size=group)
    return path


def _csv(rows: list[dict], path: Path, quoting: int) -> Path:
    """Booleans written true/false, nulls as empty cells, as the CSV reader reads them."""
    out = io.StringIO()
    w = csv.writer(out, quoting=quoting, lineterminator="\n")
    names = list(rows[0])
    w.writerow(names)
    for r in rows:
        cells = [r[k] for k in names]
        w.writerow(["" if v is None else str(v).lower() if type(v) is bool else v for v in cells])
    text = out.getvalue()
    if quoting == csv.QUOTE_ALL:  # an empty quoted cell is an empty string, not a null
        text = text.replace('""', "")
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def inputs(projects, tmp_path_factory) -> dict[str, tuple[Path, Path]]:  # noqa: F811
    """{format: (manifest, observations)} of the same records (retries, failed attempts)."""
    root, items = projects["last"]
    folder = tmp_path_factory.mktemp("formats")
    obs = folder / "obs.jsonl"
    obs.write_bytes(_log(items, 17, 0.3, 0.1, 0, 0))
    rows, log = _records(items), _records(obs)
    return {
        "jsonl": (items, obs),
        "parquet": (
            _parquet(rows, folder / "items.parquet", 300),
            _parquet(log, folder / "obs.parquet", 400, OBS_SCHEMA),
        ),
        "csv": (
            _csv(rows, folder / "items.csv", csv.QUOTE_MINIMAL),
            _csv(log, folder / "obs.csv", csv.QUOTE_MINIMAL),
        ),
        "csv-quoted": (  # every text quoted, as pyarrow and spreadsheets write it
            _csv(rows, folder / "items-q.csv", csv.QUOTE_ALL),
            _csv(log, folder / "obs-q.csv", csv.QUOTE_NONNUMERIC),
        ),
    }


RUNS = [
    ("--workers", "2"),
    ("--partition-bytes", "8K"),
    ("--workers", "2", "--partition-bytes", "20K"),
    ("--partition-bytes", "16M"),
]


@pytest.mark.parametrize("fmt", ["parquet", "csv", "csv-quoted"])
def test_parquet_and_csv_in_buckets_write_one_process_bytes(
    projects,  # noqa: F811 (the fixture imported above)
    inputs,
    tmp_path,
    monkeypatch,
    capsys,
    fmt,  # noqa: F811
):
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", 16384)
    root, _ = projects["last"]
    items, obs = inputs[fmt]
    one = tmp_path / "one" / "SCORE.json"
    one.parent.mkdir()
    spy = Spy(monkeypatch)
    assert _score(root, items, obs, one) == 0, capsys.readouterr().err
    assert spy.reduced == 0
    want = one.read_bytes(), one.with_suffix(".md").read_bytes()
    for k, extra in enumerate(RUNS):
        out = tmp_path / str(k) / "SCORE.json"
        out.parent.mkdir()
        assert _score(root, items, obs, out, *extra) == 0, capsys.readouterr().err
        assert spy.reduced == k + 1  # the rows were reduced in buckets
        assert (out.read_bytes(), out.with_suffix(".md").read_bytes()) == want
        assert sorted(p.name for p in out.parent.iterdir()) == ["SCORE.json", "SCORE.md"]
    # the same records as JSONL: the same figures (the inputs named are the files' own)
    jsonl = tmp_path / "jsonl" / "SCORE.json"
    jsonl.parent.mkdir()
    assert _score(root, *inputs["jsonl"], jsonl, "--workers", "2") == 0
    a, b = json.loads(want[0]), json.loads(jsonl.read_bytes())
    assert a.pop("inputs") != b.pop("inputs")
    assert a == b and a["rows"]["observed"] > 0
    capsys.readouterr()


def test_the_parquet_file_spans_several_partitions(inputs):
    items, obs = inputs["parquet"]
    data = obs.read_bytes()
    meta = pq.read_metadata(obs)
    parts = partitioned.cuts(obs, 4096)
    assert len(parts) > 3 and meta.num_row_groups > len(parts) / 2
    # the partitions tile the file; their row groups are every row group, in order
    assert parts[0].offset == 0 and parts[-1].offset + parts[-1].length == len(data)
    assert all(p.offset + p.length == q.offset for p, q in zip(parts, parts[1:], strict=False))
    assert [g for p in parts for g in range(*p.groups)] == list(range(meta.num_row_groups))
    assert [p.lines for p in parts] == [
        sum(meta.row_group(g).num_rows for g in range(p.groups[0])) for p in parts
    ]
    whole, n, each = partitioned.digests(obs, parts)
    assert (whole, n) == (hashlib.sha256(data).hexdigest(), len(data))
    assert each == [hashlib.sha256(data[p.offset : p.offset + p.length]).hexdigest() for p in parts]
    # one partition of every row group when the size is larger than the file
    (only,) = partitioned.cuts(obs, 1 << 30)
    assert only.groups == (0, meta.num_row_groups) and only.length == len(data)


def _bad_parquet(inputs, folder: Path, fix) -> Path:
    log = _records(inputs["jsonl"][1])
    fix(log)
    return _parquet(log, folder / "bad.parquet", 400, OBS_SCHEMA)


def _bad_csv(inputs, folder: Path, fix) -> Path:
    text = inputs["csv"][1].read_text().splitlines(keepends=True)
    fix(text)
    path = folder / "bad.csv"
    path.write_text("".join(text))
    return path


@pytest.mark.parametrize(
    "fmt, fix, words",
    [
        # a null row id in row group 3 (rows 1,201 to 1,600): the field is missing there
        ("parquet", lambda log: log[1250].update(rowId=None), "row group 3, row 51"),
        ("parquet", lambda log: log[2000].update(rowId="nobody"), "nobody"),
        ("csv", lambda t: t.__setitem__(900, t[900].replace("true", "maybe", 1)), "bad.csv:"),
        ("csv", lambda t: t.insert(1500, "1,true,nobody\n"), "nobody"),
        ("csv", lambda t: t.insert(40, t[39]), "bad.csv"),  # a record given twice
    ],
)
def test_wrong_parquet_and_csv_are_refused_in_one_process_words(
    projects,  # noqa: F811 (the fixture imported above)
    inputs,
    tmp_path,
    capsys,
    monkeypatch,
    fmt,
    fix,
    words,  # noqa: F811
):
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", 16384)
    root, _ = projects["last"]
    items = inputs[fmt][0]
    bad = (_bad_parquet if fmt == "parquet" else _bad_csv)(inputs, tmp_path, fix)
    if fmt == "csv" and "maybe" in bad.read_text():
        words += str(bad.read_text().splitlines().index(next(
            line for line in bad.read_text().splitlines() if "maybe" in line
        )) + 1) + ": field correct"  # fmt: skip
    got = []
    for name, extra in (("one", ()), ("w2", ("--workers", "2", "--partition-bytes", "8K"))):
        out = tmp_path / name / "SCORE.json"
        out.parent.mkdir()
        code = _score(root, items, bad, out, *extra)
        got.append((code, capsys.readouterr().err, sorted(p.name for p in out.parent.iterdir())))
    assert got[0] == got[1]
    code, err, files = got[0]
    assert code == 2 and files == [] and words in err and "Traceback" not in err


# -- a CSV partition's cut ------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
FIELDS = ({"name": "a", "type": "string"}, {"name": "b", "type": "integer"})


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(alphabet='ab,"\n\r é', max_size=6), st.integers(-5, 5)),
        min_size=1,
        max_size=20,
    ),
    st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
    st.integers(1, 64),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_a_csv_partition_reads_as_the_whole_file_or_is_refused(
    tmp_path_factory, rows, quoting, size, newline, bom
):
    """Values holding commas, quotes and line breaks: the partitions' records, joined, are the
    whole file's, or some partition is refused (a line break in a value, which may lie across
    a cut, or a record the whole file's column check refuses too, an empty cell: a null); a
    file of records the check accepts and no line break in a value is always read in
    partitions. Lines may end in CR LF, and the file may begin with a byte-order mark (which
    every partition then reads before the header it is given)."""
    folder = tmp_path_factory.mktemp("csv")
    schema = folder / "c.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    out = io.StringIO()
    w = csv.writer(out, quoting=quoting, lineterminator=newline)
    w.writerow(["a", "b"])
    w.writerows(rows)
    path = folder / "f.csv"
    path.write_bytes(b"\xef\xbb\xbf" * bom + out.getvalue().encode())
    whole = tabular._columns_at_once(path, schema, FIELDS)
    parts = partitioned.cuts(path, size)
    got = []
    try:
        for p in parts:
            got.append(tabular.read_part_columns(p, schema, FIELDS)[0])
    except partitioned.Uncut:
        # a value that may lie across a cut, or one the whole file's check refuses too
        assert whole is None or any("\n" in a or "\r" in a for a, _ in rows)
        return
    assert whole is not None  # pyarrow read it: so did every partition
    assert sum(c.n for c in got) == whole.n
    for name in ("a", "b"):
        assert [v for c in got for v in c.columns[name]] == whole.columns[name]


def test_a_parquet_reader_wanting_other_bytes_is_refused(inputs):
    """A partition is read from its own bytes and the footer: any other read is an OSError
    (one process then reads the file), and a footer that changed is refused."""
    _, obs = inputs["parquet"]
    parts = partitioned.cuts(obs, 8192)
    spans = tabular._Spans(100, [(10, b"0123456789")])
    spans.seek(12)
    assert spans.read(3) == b"234" and spans.tell() == 15
    with pytest.raises(OSError, match="outside the partition"):
        spans.read(10)
    at, length, _ = parts[1].footer
    moved = partitioned.Part(**{**parts[1].__dict__, "footer": (at, length, "0" * 64)})
    with pytest.raises(partitioned.Uncut, match="footer changed"):
        tabular.read_part_columns(moved, Path("unused"), ())
    wide = partitioned.Part(**{**parts[1].__dict__, "groups": (0, parts[1].groups[1])})
    with pytest.raises(partitioned.Uncut, match="outside the partition"):
        tabular.read_part_columns(wide, Path("unused"), ())


def test_files_that_cannot_be_cut_are_scored_in_one_process(tmp_path):
    """Not Parquet, a CSV of a header alone: no cut, and one process refuses them."""
    fake = tmp_path / "f.parquet"
    fake.write_bytes(b"PAR1" + b"x" * 40)
    with pytest.raises(partitioned.Uncut):
        partitioned.cuts(fake, 1024)
    head = tmp_path / "f.csv"
    head.write_bytes(b"a,b")
    with pytest.raises(partitioned.Uncut):
        partitioned.cuts(head, 1024)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_float_that_is_not_finite_is_left_to_the_record_reader(tmp_path, bad):
    """The column check vouches for finite numbers only: NaN and infinities in a column of
    floats send the records to the reader that names them; an integer column is not a float's."""
    schema = tmp_path / "n.schema.json"
    schema.write_text(
        json.dumps({**SCHEMA, "properties": {"a": {"type": "string"}, "b": {"type": "number"}}})
    )
    fields = ({"name": "a", "type": "string"}, {"name": "b", "type": "number"})
    good = pa.table({"a": ["x", "y"], "b": [0.5, 2.0]})
    cols = tabular.tables_columns(schema, fields, [good, pa.table({"a": ["z"], "b": [3]})])
    assert cols.columns["b"] == [0.5, 2.0, 3] and cols.n == 3
    assert tabular.tables_columns(schema, fields, [pa.table({"a": ["x"], "b": [bad]})]) is None


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_file_changed_while_it_is_read_is_scored_as_it_ends(
    projects,  # noqa: F811 (the fixture imported above)
    inputs,
    tmp_path,
    capsys,
    monkeypatch,
    fmt,
):
    """Bytes changed after the cuts (an answer flipped: a CSV file of the same size, a Parquet
    file written again) send the score to one process, which reads the file as it ends."""
    root, _ = projects["last"]
    items, source = inputs[fmt]
    obs = tmp_path / source.name
    obs.write_bytes(source.read_bytes())
    real = partitioned.digests

    def changed(path, parts, stop=None):
        if str(path) == str(obs):
            if fmt == "csv":
                obs.write_text(obs.read_text().replace(",true,", ",false,", 1))
            else:
                log = _records(inputs["jsonl"][1])
                log[5]["correct"] = not log[5]["correct"] if log[5]["correct"] is not None else True
                _parquet(log, obs, 400, OBS_SCHEMA)
        return real(path, parts, stop)

    monkeypatch.setattr(partitioned, "digests", changed)
    spy = Spy(monkeypatch)
    got = tmp_path / "got" / "SCORE.json"
    got.parent.mkdir()
    assert _score(root, items, obs, got, "--workers", "2", "--partition-bytes", "8K") == 0
    assert spy.reduced == 0
    monkeypatch.setattr(partitioned, "digests", real)
    want = tmp_path / "want" / "SCORE.json"
    want.parent.mkdir()
    assert _score(root, items, obs, want) == 0  # the file as it ended
    assert got.read_bytes() == want.read_bytes()
    assert obs.read_bytes() != source.read_bytes()
    capsys.readouterr()


def test_a_large_parquet_input_weighs_its_decompressed_bytes(
    projects,  # noqa: F811 (the fixture imported above)
    inputs,
    tmp_path,
    capsys,
    monkeypatch,
):
    """One process reduces large inputs in buckets without being asked: a Parquet file counts
    its row groups' bytes once decompressed (more than the file's), and is scored as it is
    without buckets."""
    root, _ = projects["last"]
    items, obs = inputs["parquet"]
    weight = partitioned.input_bytes(obs)
    meta = pq.read_metadata(obs)
    assert weight == sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    assert weight > obs.stat().st_size
    assert partitioned.input_bytes(inputs["csv"][1]) == inputs["csv"][1].stat().st_size
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", 8192)
    # just above the files' sizes, below their weights: reduced in buckets
    monkeypatch.setattr(bucketed, "LARGE_BYTES", items.stat().st_size + obs.stat().st_size + 1)
    spy = Spy(monkeypatch)
    big = tmp_path / "big" / "SCORE.json"
    big.parent.mkdir()
    assert _score(root, items, obs, big) == 0
    assert spy.reduced == 1
    monkeypatch.setattr(bucketed, "LARGE_BYTES", 1 << 40)
    one = tmp_path / "one" / "SCORE.json"
    one.parent.mkdir()
    assert _score(root, items, obs, one) == 0
    assert spy.reduced == 1
    assert big.read_bytes() == one.read_bytes()
    capsys.readouterr()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"write_page_index": True},
        {"write_statistics": False},
        {"use_dictionary": False, "compression": "zstd"},
        {"data_page_size": 512, "data_page_version": "2.0"},
        {"write_page_checksum": True},
        {"version": "1.0"},
    ],
)
def test_parquet_partitions_read_the_row_groups_of_any_writer(tmp_path, options):
    """Whatever the writer's options (page indexes, no statistics, other encodings and page
    versions), each partition's row groups, read from its own bytes and the footer, are the
    file's."""
    rng = np.random.default_rng(3)
    n = 3000
    table = pa.table(
        {
            "attempt": rng.integers(1, 4, n),
            "correct": pa.array([None if x < 0.1 else x < 0.6 for x in rng.random(n)]),
            "rowId": [f"row-{i % 997:04d}" for i in range(n)],
        }
    )
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, row_group_size=250, **options)
    parts = partitioned.cuts(path, 4096)
    assert len(parts) > 2
    raw = path.read_bytes()
    got = [
        t
        for p in parts
        for t in tabular._parquet_part_tables(
            p, raw[p.offset : p.offset + p.length], raw[p.footer[0] :]
        )
    ]
    assert pa.concat_tables(got).equals(pq.read_table(path))


@pytest.mark.parametrize(
    "fmt, spoil",
    [
        ("parquet", lambda b: b[: len(b) // 2]),  # cut short: no footer
        (
            "parquet",
            lambda b: b[:-8] + (10**9).to_bytes(4, "little") + b"PAR1",
        ),  # a footer too long
        ("parquet", lambda b: b[:4000] + b"\xff" * 64 + b[4064:]),  # a row group's bytes spoilt
        ("csv", lambda b: b[:3000] + b"\xff\xfe" + b[3002:]),  # not UTF-8
        ("csv", lambda b: b[:3000] + b'"' + b[3001:]),  # a quote left open
        ("csv", lambda b: b[: b.index(b"\n")] + b",extra" + b[b.index(b"\n") :]),  # a column more
    ],
)
def test_a_broken_file_is_refused_as_one_process_refuses_it(
    projects,  # noqa: F811 (the fixture imported above)
    inputs,
    tmp_path,
    capsys,
    fmt,
    spoil,
):
    root, _ = projects["last"]
    items, source = inputs[fmt]
    bad = tmp_path / source.name
    bad.write_bytes(spoil(source.read_bytes()))
    got = []
    for name, extra in (("one", ()), ("w2", ("--workers", "2", "--partition-bytes", "4K"))):
        out = tmp_path / name / "SCORE.json"
        out.parent.mkdir()
        code = _score(root, items, bad, out, *extra)
        got.append((code, capsys.readouterr().err, sorted(p.name for p in out.parent.iterdir())))
    assert got[0] == got[1]
    code, err, files = got[0]
    assert code == 2 and files == [] and str(bad) in err and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("which", ["items", "observations"])
def test_a_file_of_no_records_is_refused_as_one_process_refuses_it(
    projects,  # noqa: F811 (the fixture imported above)
    inputs,
    tmp_path,
    capsys,
    fmt,
    which,
):
    """A CSV file of its header alone, a Parquet file of no rows: cut into partitions of no
    record, yet refused in one process's words (the file holds no records), not as a manifest
    whose cells are short."""
    root, _ = projects["last"]
    pair = dict(zip(("items", "observations"), inputs[fmt], strict=True))
    source = pair[which]
    empty = tmp_path / source.name
    if fmt == "csv":
        empty.write_bytes(source.read_bytes().splitlines(keepends=True)[0])
    else:
        pq.write_table(pq.read_table(source).slice(0, 0), empty)
    pair[which] = empty
    got = []
    for name, extra in (("one", ()), ("w2", ("--workers", "2"))):
        out = tmp_path / name / "SCORE.json"
        out.parent.mkdir()
        code = _score(root, pair["items"], pair["observations"], out, *extra)
        got.append((code, capsys.readouterr().err, sorted(p.name for p in out.parent.iterdir())))
    assert got[0] == got[1]
    code, err, files = got[0]
    assert code == 2 and files == [] and str(empty) in err and "Traceback" not in err
