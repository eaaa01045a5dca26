"""Hostile inputs, round 6: each refusal names its file and line (or row) and its rule, exits 2,
and leaves the folder as it was; what is accepted is scored as it was.

- an integer field holds a 64-bit integer in JSONL, a JSON array, CSV and Parquet alike (the
  strict JSONL reader took any size, the typed one stopped at -2^63 + 1, a JSON array refused
  beyond 2^53, CSV said ±(2^63 − 1));
- a CSV blank line is refused at its line, as a JSONL one is (pyarrow skipped it);
- a damaged Parquet page is refused on one line (pyarrow's words ran over several);
- a loop of links in spec/studies/ is refused naming the file (a RuntimeError traceback);
- ``score --partition-bytes`` alone reads the partitions in this process, as its help says.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from prereg import partitioned
from tests.conftest import FIXTURES, run_main, study_project

FIELD = "      - {name: score, type: number, nullable: true, minimum: 0, maximum: 10}\n"
RANGE = "(-9,223,372,036,854,775,808 to 9,223,372,036,854,775,807)"
ROWS = [json.loads(line) for line in (FIXTURES / "mean_threshold" / "grades.jsonl").open()]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The mean_threshold study with a nullable integer field ``n``, compiled."""
    text = (FIXTURES / "mean_threshold" / "grader-mean.yaml").read_text(encoding="utf-8")
    assert text.count(FIELD) == 1
    text = text.replace(FIELD, FIELD + "      - {name: n, type: integer, nullable: true}\n")
    root = study_project(tmp_path_factory.mktemp("h6") / "p", "grader-mean", text)
    assert run_main("--project", root, "compile").returncode == 0
    return root


def _rows(first_n) -> list[dict]:
    return [{**r, "n": first_n if i == 0 else 1} for i, r in enumerate(ROWS)]


def _csv(rows) -> str:
    cell = lambda v: "" if v is None else str(v)  # noqa: E731
    lines = [",".join(cell(r[k]) for k in ("task", "model", "score", "n")) for r in rows]
    return "task,model,score,n\n" + "".join(f"{line}\n" for line in lines)


def _score(project, name: str, data: bytes, *extra):
    """(exit code, stderr) of score on ``data`` written as ``name`` in a fresh folder; a
    refusal must leave the folder holding the input alone."""
    (project / "runs").mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=project / "runs"))
    (folder / name).write_bytes(data)
    out = folder / "S.json"
    got = run_main(
        "--project", project, "grader-mean", "score", "--observations", folder / name,
        "--out", out, *extra,
    )  # fmt: skip
    if got.returncode != 0:
        assert sorted(p.name for p in folder.iterdir()) == [name]
        assert (folder / name).read_bytes() == data
    return got.returncode, got.stderr, folder


@pytest.mark.parametrize(
    "name, write, where",
    [
        ("big.jsonl", lambda r: "".join(json.dumps(x) + "\n" for x in r), "big.jsonl:1: at /n:"),
        ("big.json", json.dumps, "big.json:1: at /n:"),
        ("big.csv", _csv, "big.csv:2: field n:"),
    ],
)
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30])
def test_an_integer_beyond_64_bits_is_refused_alike_in_every_format(project, name, write, where, value):  # fmt: skip
    code, err, _ = _score(project, name, write(_rows(value)).encode())
    shown = str(value) if len(str(value)) <= 24 else str(value)[:24] + "…"
    assert code == 2
    assert f"{where} integer {shown} is outside the range of a 64-bit integer {RANGE}" in err


@pytest.mark.parametrize("value", [2**63 - 1, -(2**63), 2**53 + 1])
@pytest.mark.parametrize("suffix", ["jsonl", "json", "csv"])
def test_an_integer_within_64_bits_is_read_in_every_format(project, suffix, value):
    rows = _rows(value)
    text = {"jsonl": "".join(json.dumps(x) + "\n" for x in rows), "json": json.dumps(rows)}
    code, err, folder = _score(project, f"ok.{suffix}", text.get(suffix, _csv(rows)).encode())
    assert code == 0, err
    assert (folder / "S.json").is_file()


def test_a_parquet_uint64_beyond_64_bits_is_refused_at_its_row(project, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(1)
    table = pa.table(
        {
            "task": [r["task"] for r in rows],
            "model": [r["model"] for r in rows],
            "score": [r["score"] for r in rows],
            "n": pa.array([2**64 - 1] + [1] * (len(rows) - 1), pa.uint64()),
        }
    )
    pq.write_table(table, tmp_path / "u.parquet")
    code, err, _ = _score(project, "u.parquet", (tmp_path / "u.parquet").read_bytes())
    assert code == 2
    assert (
        f"u.parquet: row group 0, row 1: at /n: integer {2**64 - 1} is outside the range of a"
        f" 64-bit integer {RANGE}"
    ) in err


@pytest.mark.parametrize(
    "edit, line",
    [
        (lambda t: "".join(t.splitlines(True)[:2]) + "\n" + "".join(t.splitlines(True)[2:]), 3),
        (lambda t: t + "\n", 11),  # a blank last line
        (lambda t: "\n" + t, 1),  # before the header
        (lambda t: t.replace("\n", "\r\n") + "\r\n", 11),  # CRLF
    ],
)
def test_a_csv_blank_line_is_refused_at_its_line_as_in_jsonl(project, edit, line):
    text = edit(_csv(_rows(1)))
    code, err, _ = _score(project, "blank.csv", text.encode())
    assert code == 2
    first = err.splitlines()[0]
    assert first.startswith("error: ") and f"/blank.csv:{line}: blank line" in first, err


def test_a_jsonl_blank_line_is_refused_at_its_line(project):
    text = "".join(json.dumps(x) + "\n" for x in _rows(1)) + "\n"
    code, err, _ = _score(project, "blank.jsonl", text.encode())
    assert code == 2 and "blank.jsonl:10: blank line" in err


def test_a_blank_line_inside_a_quoted_csv_cell_is_text(project):
    text = _csv(_rows(1)).replace("\nt1,", '\n"t\n\n1",', 1)
    code, err, _ = _score(project, "quoted.csv", text.encode())
    assert code == 0, err


def test_a_damaged_parquet_page_is_refused_on_one_line(project, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(1)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    data = (tmp_path / "d.parquet").read_bytes()
    data = data[:100] + b"\0" * 50 + data[150:]
    code, err, _ = _score(project, "d.parquet", data)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "d.parquet: " in lines[0]


def test_a_loop_of_links_in_the_studies_folder_is_refused_naming_it(tmp_path):
    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    (studies / "a.yaml").symlink_to("b.yaml")
    (studies / "b.yaml").symlink_to("a.yaml")
    got = run_main("--project", tmp_path, "compile")
    assert got.returncode == 2
    assert "spec/studies/a.yaml: cannot read: Too many levels of symbolic links" in got.stderr
    assert "spec/studies/b.yaml: cannot read: Too many levels of symbolic links" in got.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec"]


def test_partition_bytes_alone_reads_partitions_in_this_process(project, monkeypatch):
    sizes = []
    plan = partitioned.plan
    monkeypatch.setattr(partitioned, "plan", lambda path, size: sizes.append(size) or plan(path, size))  # fmt: skip
    text = "".join(json.dumps(x) + "\n" for x in _rows(1)).encode()
    code, err, one = _score(project, "one.jsonl", text)
    assert code == 0 and sizes == [], err
    code, err, parts = _score(project, "parts.jsonl", text, "--partition-bytes", "1K")
    assert code == 0 and sizes == [1024], err
    same = lambda f: json.loads(f.read_text())["decision"]  # noqa: E731
    assert same(parts / "S.json") == same(one / "S.json")


def test_a_spec_larger_than_the_bound_is_refused_unread(tmp_path, monkeypatch):
    from prereg import files
    from prereg.compiler import load

    assert load.MAX_SPEC_BYTES == 8 << 20
    monkeypatch.setattr(load, "MAX_SPEC_BYTES", 1 << 20)  # the same rule, a smaller file
    text = (FIXTURES / "mean_threshold" / "grader-mean.yaml").read_text(encoding="utf-8")
    text = text.replace("status: draft\n", "status: draft\n#" + "x" * (1 << 20) + "\n")
    root = study_project(tmp_path / "p", "grader-mean", text)
    reads = []
    read = files.os.read
    monkeypatch.setattr(files.os, "read", lambda fd, n: reads.append(n) or read(fd, n))
    got = run_main("--project", root, "compile")
    assert got.returncode == 2
    assert "spec/studies/grader-mean.yaml: more than 1 MiB; a spec is at most 1 MiB" in got.stderr
    assert sum(reads) <= (1 << 20) + 1  # the rest of the file is not read
    assert sorted(p.name for p in (root / "generated").iterdir()) == ["prereg.schema.json"]


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


@pytest.mark.parametrize(
    "encode, said",
    [
        (
            lambda t: t.encode("utf-16"),
            "not UTF-8: UTF-16 text (it starts with UTF-16's byte-order mark); save it as UTF-8",
        ),  # fmt: skip
        (
            lambda t: _gzip(t.encode()),
            "not UTF-8: a gzip-compressed file; decompress it (gunzip) first",
        ),  # fmt: skip
    ],
)
@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_file_in_another_encoding_or_compressed_is_named_as_such(project, encode, said, suffix):
    rows = _rows(1)
    text = "".join(json.dumps(x) + "\n" for x in rows) if suffix == "jsonl" else _csv(rows)
    code, err, _ = _score(project, f"in.{suffix}", encode(text))
    assert code == 2
    assert f"/in.{suffix}{':1' if suffix == 'csv' else ''}: {said}" in err, err


def test_a_utf16_spec_is_named_as_such(tmp_path):
    text = (FIXTURES / "mean_threshold" / "grader-mean.yaml").read_text(encoding="utf-8")
    root = study_project(tmp_path / "p", "grader-mean", "")
    (root / "spec" / "studies" / "grader-mean.yaml").write_bytes(text.encode("utf-16"))
    got = run_main("--project", root, "compile")
    assert got.returncode == 2
    assert (
        "spec/studies/grader-mean.yaml: not UTF-8: UTF-16 text (it starts with UTF-16's"
        " byte-order mark); save it as UTF-8"
    ) in got.stderr
    assert sorted(p.name for p in (root / "generated").iterdir()) == ["prereg.schema.json"]


def test_a_csv_cell_longer_than_two_blocks_is_read(project, monkeypatch):
    from prereg import tabular

    monkeypatch.setattr(tabular, "CSV_BLOCK", 1024)  # the same rule, a smaller file
    long = _csv(_rows(1)).replace("\nt1,", "\n" + "t" * (3 << 20) + ",", 1)  # > 2 MiB
    code, err, folder = _score(project, "long.csv", long.encode())
    assert code == 0, err  # pyarrow's 'straddling object straddles two block boundaries'
    assert (folder / "S.json").is_file()


@pytest.mark.parametrize(
    "offset, data",
    [(0, b"task,n\nt1,1\n\nt2,2\n"), (12, b"\nt2,2\n"), (12, b"t2,2\r\n\r\n")],
)
def test_a_csv_partition_holding_a_blank_line_is_left_to_one_process(tmp_path, offset, data):
    """A worker's partition with a blank line (or one at its start, after the cut) is not
    read there: the one process that reads the file again refuses it at its line."""
    from prereg.partitioned import Part, Uncut
    from prereg.tabular import _csv_part_table

    part = Part(str(tmp_path / "x.csv"), offset, len(data), 1, "", kind="csv", header=b"task,n\n")
    fields = [{"name": "task", "type": "string"}, {"name": "n", "type": "integer"}]
    with pytest.raises(Uncut, match="blank line"):
        _csv_part_table(part, data, fields)
    kept = data.replace(b"\r\n\r\n", b"\r\n").replace(b"\n\n", b"\n").lstrip(b"\n")
    assert _csv_part_table(part, kept, fields).num_rows >= 1  # without it, read there


@pytest.mark.parametrize(
    "old, new, at, want",
    [
        ("registered: 5", "registered: 1e20", "/units/0/registered", "integer or null, got 1e+20"),
        ("rows: 5,", "rows: 5.0,", "/crossings/0/rows", "integer or null, got 5.0"),
    ],
)
def test_a_spec_integer_written_as_a_double_is_refused_at_its_line(tmp_path, old, new, at, want):
    """1e20 registered units compiled, and SCORE.json then wrote 100000000000000000000 (beyond
    what JSON carries exactly); an engine's constants already refused 5.0."""
    from tests.conftest import compile_edited

    source = FIXTURES / "mean_threshold" / "grader-mean.yaml"
    code, err, line_of = compile_edited(tmp_path, "grader-mean", [(old, new)], source)
    assert code == 2
    assert (
        f"spec/studies/grader-mean.yaml:{line_of(at)}: at {at}: expected {want} (an integer is"
        " written without a point or exponent: a number such as 5.0 or 1e3 is a double)"
    ) in err


@pytest.mark.parametrize("block", [1, 2, 3, 5, 1 << 24])
@pytest.mark.parametrize(
    "data, line",
    [
        (b"a,b\n1,2\n\n3,4\n", 3),
        (b"a,b\r\n1,2\r\n\r\n3,4\r\n", 3),
        (b"\na,b\n1,2\n", 1),
        (b"\r\na,b\n1,2\n", 1),
        (b"a,b\n1,2\n3,4\n\n", 4),
        (b"a,b\n1,2\n3,4\n", None),
        (b"a,b\r\n1,2\r\n", None),
        (b'a,b\n"x\n\ny",2\n', None),  # inside a quoted cell: text
    ],
)
def test_a_blank_line_is_found_wherever_the_blocks_cut(tmp_path, monkeypatch, block, data, line):
    """The byte scan that decides whether to read a CSV file for a blank line finds one across
    any block boundary (a line feed ending one block, the next starting with another)."""
    from prereg import tabular

    monkeypatch.setattr(tabular, "CSV_BLOCK", block)
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    assert tabular._blank_line(path) == line
