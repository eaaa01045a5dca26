"""Rows reduced in buckets (:mod:`prereg.bucketed`): whatever the attempt policy and the log
(retries, failed attempts, nulls, records of unknown rows, repeated records, a field with no
value in some buckets), any number of buckets and partitions writes SCORE.json and SCORE.md
byte for byte as one process does, and wrong data is refused in one process's words. Each
case checks that the buckets did reduce the rows (the fast path was taken, not the fallback).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prereg import bucketed
from prereg.cli import main
from tests.conftest import ROOT

AP = "answer-position"
SPEC = ROOT / "examples" / "answer-position" / "spec" / "studies" / "answer-position.yaml"
POLICY = """attempts:
  contract: observation
  key: [rowId]
  order: attempt
  counts: last
  failed:
    - {field: correct, op: is_null}
"""
#: attempt policies, each compiled once: the example's own, and two that ignore and drop
VARIANTS = {
    "last": POLICY,
    "first-success": POLICY.replace("counts: last", "counts: first-success")
    + "  unknown_rows: ignore\n  duplicates: first\n",
    "last-any": POLICY.replace("counts: last", "counts: last-any")
    + "  duplicates: identical-once\n",
}


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """{variant: (project, manifest)}."""
    text = SPEC.read_text(encoding="utf-8")
    assert POLICY in text  # the example's policy, replaced below
    out = {}
    for name, policy in VARIANTS.items():
        root = tmp_path_factory.mktemp(name)
        (root / "spec" / "studies").mkdir(parents=True)
        (root / "spec" / "studies" / SPEC.name).write_text(text.replace(POLICY, policy))
        (root / "generated").mkdir()
        shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
        assert main(["--project", str(root), "compile"]) == 0
        items = root / "items.jsonl"
        assert main(["--project", str(root), AP, "items", "--out", str(items), "--quiet"]) == 0
        out[name] = (root, items)
    return out


def _log(items: Path, seed: int, retry: float, null: float, unknown: int, repeat: int) -> bytes:
    """An observation log of the manifest's rows: each row answered with probability 0.9, a
    retry with probability ``retry``, ``null`` of the answers failed; ``unknown`` records of
    rows the manifest does not list; ``repeat`` records written twice."""
    rng = np.random.default_rng(seed)
    ids = [json.loads(line)["rowId"] for line in items.read_text().splitlines()]
    out = []
    for rid in ids:
        if rng.random() > 0.9:
            continue
        for attempt in range(1, 2 + int(rng.random() < retry)):
            correct = None if rng.random() < null else bool(rng.random() < 0.7)
            out.append({"attempt": attempt, "correct": correct, "rowId": rid})
    for k in range(unknown):
        at = int(rng.integers(0, len(out) + 1))
        out.insert(at, {"attempt": 1, "correct": True, "rowId": f"stray-{k}"})
    for _ in range(repeat):
        at = int(rng.integers(0, len(out)))
        out.insert(at + 1, dict(out[at]))
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in out)


def _score(root: Path, items: Path, obs: Path, out: Path, *extra: str) -> int:
    return main(
        ["--project", str(root), AP, "score", "--items", str(items), "--observations", str(obs),
         "--out", str(out), "--quiet", *extra]
    )  # fmt: skip


class Spy:
    """Counts the reductions that gave rows (not None: the fast path)."""

    def __init__(self, monkeypatch):
        self.reduced = 0
        real = bucketed.reduce_rows

        def spy(*a, **k):
            got = real(*a, **k)
            self.reduced += got is not None
            return got

        monkeypatch.setattr(bucketed, "reduce_rows", spy)


def _both(projects, variant, log: bytes, tmp: Path, capsys, *extra: str):
    """(one process's (code, json, md, stderr), the buckets' (code, json, md, stderr))."""
    root, items = projects[variant]
    obs = tmp / "obs.jsonl"
    obs.write_bytes(log)
    got = []
    for name, args in (("one", ()), ("buckets", ("--partition-bytes", *extra))):
        out = tmp / name / "SCORE.json"
        out.parent.mkdir()
        code = _score(root, items, obs, out, *args)
        err = capsys.readouterr().err
        read = lambda p: p.read_bytes() if p.exists() else None  # noqa: E731
        got.append((code, read(out), read(out.with_suffix(".md")), err))
        # the spill folder is gone whatever happened
        assert not any(p.name.startswith(".prereg-score-") for p in out.parent.iterdir())
    return got


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 2**32 - 1),
    retry=st.sampled_from([0.0, 0.2, 1.0]),
    null=st.sampled_from([0.0, 0.1, 1.0]),
    bucket_bytes=st.sampled_from([4096, 1 << 16, 1 << 30]),
    partition=st.sampled_from(["8K", "64K", "16M"]),
)
def test_buckets_write_one_process_bytes(
    projects, tmp_path_factory, capsys, monkeypatch, variant, seed, retry, null, bucket_bytes,
    partition,
):  # fmt: skip
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", bucket_bytes)
    spy = Spy(monkeypatch)
    ignoring = variant == "first-success"  # ignores unknown rows and keeps a repeat's first
    log = _log(projects[variant][1], seed, retry, null, 3 * ignoring, 2 * ignoring)
    one, buckets = _both(projects, variant, log, tmp_path_factory.mktemp("c"), capsys, partition)
    assert one[0] == 0, one[3]
    assert buckets == one
    assert spy.reduced == 1  # the rows were reduced in buckets
    doc = json.loads(one[1])
    if ignoring:
        assert doc["rows"]["ignoredRecords"] == 3 and doc["rows"]["duplicateRecords"] == 2
    if null == 1.0 and variant != "last-any":
        assert doc["rows"]["observed"] == 0  # every attempt failed: no row observed


@pytest.mark.parametrize(
    "variant, break_it",
    [
        ("last", "unknown"),  # a record of an unregistered row is refused
        ("last", "repeat"),  # two records of one attempt are refused
        ("last", "manifest-repeat"),  # a manifest row listed twice, in far-apart partitions
        ("last", "manifest-count"),  # a cell one row short
        ("last", "bad-json"),
        ("last-any", "different-repeat"),  # identical-once refuses a different copy
    ],
)
def test_wrong_data_is_refused_in_one_process_words(
    projects, tmp_path, capsys, monkeypatch, variant, break_it
):
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", 16384)
    root, items = projects[variant]
    log = _log(items, 5, 0.2, 0.1, 0, 0)
    lines = log.splitlines(keepends=True)
    if break_it == "unknown":
        lines.insert(900, b'{"attempt":1,"correct":true,"rowId":"nobody"}\n')
    elif break_it == "repeat":
        lines.insert(40, lines[39])
        lines.insert(1500, lines[1800])
    elif break_it == "bad-json":
        lines[700] = b"not json\n"
    elif break_it == "different-repeat":
        first = json.loads(lines[10])
        first["correct"] = not first["correct"] if first["correct"] is not None else True
        lines.insert(2000, json.dumps(first, separators=(",", ":")).encode() + b"\n")
    if break_it.startswith("manifest"):
        rows = items.read_bytes().splitlines(keepends=True)
        if break_it == "manifest-repeat":
            rows[-1] = rows[3]
        else:
            del rows[-1]
        broken = tmp_path / "items.jsonl"
        broken.write_bytes(b"".join(rows))
        projects = {variant: (root, broken)}
    one, buckets = _both(projects, variant, b"".join(lines), tmp_path, capsys, "16K")
    assert one[0] == 2 and one[1] is None and one[2] is None
    assert buckets == one
    assert one[3].count("\n") >= 1 and "Traceback" not in one[3]


def test_large_inputs_are_reduced_in_buckets_without_being_asked(
    projects, tmp_path, capsys, monkeypatch
):
    """One process reduces inputs of at least ``LARGE_BYTES`` in buckets (its memory bounded
    by a bucket's rows), and writes what it writes without them."""
    root, items = projects["last"]
    obs = tmp_path / "obs.jsonl"
    obs.write_bytes(_log(items, 11, 0.3, 0.1, 0, 0))
    out = tmp_path / "one" / "SCORE.json"
    out.parent.mkdir()
    spy = Spy(monkeypatch)
    assert _score(root, items, obs, out) == 0
    assert spy.reduced == 0
    monkeypatch.setattr(bucketed, "LARGE_BYTES", 1)
    monkeypatch.setattr(bucketed, "BUCKET_BYTES", 8192)
    big = tmp_path / "big" / "SCORE.json"
    big.parent.mkdir()
    assert _score(root, items, obs, big) == 0
    assert spy.reduced == 1
    assert big.read_bytes() == out.read_bytes()
    assert big.with_suffix(".md").read_bytes() == out.with_suffix(".md").read_bytes()


def test_a_row_field_named_by_a_rule_is_gathered(tmp_path):
    """The ids are left behind only when nothing past the attempt policy names their field."""
    config = {"record_contracts": [{"fields": [{"name": "rowId"}]}], "attempts": {"key": ["rowId"]}}
    assert not bucketed.names_read(config, None, "rowId")
    assert bucketed.names_read({**config, "metrics": [{"field": "rowId"}]}, None, "rowId")
    rules = tmp_path / "rules.py"
    rules.write_text("PAIRED = Contrast(pair_by='rowId')\n")
    assert bucketed.names_read(config, str(rules), "rowId")
    rules.write_text("X = 'rowIdentity'\n")
    assert not bucketed.names_read(config, str(rules), "rowId")


def test_coded_values_read_as_their_list():
    words = np.array(["a", "b", None], dtype=object)
    col = bucketed.CodedValues(words, np.array([2, 0, 1, 0]))
    assert list(col) == [None, "a", "b", "a"] and len(col) == 4
    assert col[1] == "a" and col[1:3] == ["a", "b"] and col == [None, "a", "b", "a"]


def test_files_refused_before_any_bucket_are_refused_in_reading_order(projects, tmp_path, capsys):
    """An empty observations file beside a manifest one row short: one process refuses the
    manifest first (it reads it first), and so do the buckets; an output folder that does not
    exist yet is made, with no spill folder left in it."""
    root, items = projects["last"]
    short = tmp_path / "items.jsonl"
    short.write_bytes(b"".join(items.read_bytes().splitlines(keepends=True)[:-1]))
    empty = tmp_path / "obs.jsonl"
    empty.write_bytes(b"")
    errs = []
    for extra in ((), ("--workers", "2")):
        assert _score(root, short, empty, tmp_path / "S.json", *extra) == 2
        errs.append(capsys.readouterr().err)
    assert errs[0] == errs[1] and "do not match the registered cells" in errs[0]
    obs = tmp_path / "good.jsonl"
    obs.write_bytes(_log(items, 3, 0.2, 0.1, 0, 0))
    out = tmp_path / "new" / "dir" / "S.json"
    assert _score(root, items, obs, out, "--partition-bytes", "64K") == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["S.json", "S.md"]


scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
    st.sampled_from(["a", "b", "plain", ""]),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 3), scalar), min_size=1, max_size=12),
        min_size=1,
        max_size=4,
    ),
    st.booleans(),
)
def test_an_item_column_comes_back_as_its_values(parts, by_cell):
    """Whatever a manifest column holds (strings fixed by the cell or not, nulls, numbers,
    booleans, huge integers), its partitions' forms read back as its values, of their kinds."""
    if by_cell:  # every row of a cell holds the cell's string, as a factor's field does
        parts = [[(c, f"level-{c}") for c, _ in part] for part in parts]
    cells = [np.array([c for c, _ in part], dtype=np.int64) for part in parts]
    forms = [
        bucketed._item_column([v for _, v in part], cell)
        for part, cell in zip(parts, cells, strict=True)
    ]
    got = bucketed._item_values(forms, cells, np.concatenate(cells))
    want = [v for part in parts for _, v in part]
    assert list(got) == want
    assert [type(v) for v in got] == [type(v) for v in want]
    if by_cell:
        assert isinstance(got, bucketed.CodedValues)


#: strings built from the characters that join a column of strings, so that some columns hold
#: one separator, some several and some all of them
_TEXT = st.text(alphabet=st.sampled_from(["a", "é", *bucketed._SEPARATORS]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(_TEXT, st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats()),
        max_size=30,
    )
    | st.lists(_TEXT, max_size=30),
    st.randoms(use_true_random=False),
    st.lists(st.integers(0, 30), max_size=4),
)
def test_a_record_column_travels_as_its_values(col, rng, cuts):
    """A column packed, permuted, cut into buckets and pickled reads back as its values in the
    permuted order, of their kinds: strings holding the separators included (each joined by a
    character none of them holds, or sent as a list when they hold every one)."""
    import pickle

    order = np.array(rng.sample(range(len(col)), len(col)), dtype=np.int64)
    packed = bucketed._permuted(bucketed._packed(col), order)
    bounds = sorted({0, len(col), *(min(c, len(col)) for c in cuts)})
    pieces = [
        pickle.loads(pickle.dumps(bucketed._sliced(packed, lo, hi)))
        for lo, hi in zip(bounds, bounds[1:], strict=False)
    ]
    got = bucketed._unpacked(pieces)
    want = [col[j] for j in order.tolist()]
    assert [type(v) for v in got] == [type(v) for v in want]
    assert [repr(v) for v in got] == [repr(v) for v in want]  # NaN, -0.0 and all


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x")), max_size=25),
    st.booleans(),
    st.integers(1, 120),
)
def test_cuts_tile_the_file_in_whole_lines(tmp_path_factory, lines, last_lf, size):
    """The partitions cut without reading the file tile it, each ends just after the first LF
    at or past its target (a longer line kept whole), and their digests are hashlib's."""
    import hashlib

    from prereg import partitioned

    data = b"\n".join(lines) + (b"\n" if last_lf and lines else b"")
    path = tmp_path_factory.mktemp("cuts") / "f.jsonl"
    path.write_bytes(data)
    parts = partitioned.cuts(path, size)
    assert b"".join(data[p.offset : p.offset + p.length] for p in parts) == data
    assert all(p.length > 0 for p in parts)
    for p, q in zip(parts, parts[1:], strict=False):
        end = p.offset + p.length
        assert q.offset == end and data[end - 1 : end] == b"\n"
        assert b"\n" not in data[max(p.offset + size - 1, p.offset) : end - 1]
    whole, n, each = partitioned.digests(path, parts)
    assert (whole, n) == (hashlib.sha256(data).hexdigest(), len(data))
    assert each == [hashlib.sha256(data[p.offset : p.offset + p.length]).hexdigest() for p in parts]


def test_a_file_changed_while_it_is_read_is_scored_as_it_ends(
    projects, tmp_path, capsys, monkeypatch
):
    """The files are hashed while their partitions are read: bytes written in between (a line
    appended after the cuts, or one changed in place) send the score to one process, which
    reads the file as it is then; SCORE.json names that file's digest."""
    from prereg import partitioned

    root, items = projects["last"]
    obs = tmp_path / "obs.jsonl"
    log = _log(items, 3, 0.2, 0.1, 0, 0)
    real = partitioned.digests
    for change in ("append", "in-place"):
        obs.write_bytes(log)

        def changed(path, parts, change=change):
            if str(path) == str(obs):
                text = obs.read_bytes()
                if change == "append":
                    text += b'{"attempt":9,"correct":false,"rowId":"dev-a-pa-plain-01"}\n'
                else:
                    text = text.replace(b'"correct":true', b'"correct":false', 1)
                obs.write_bytes(text)
            return real(path, parts)

        monkeypatch.setattr(partitioned, "digests", changed)
        spy = Spy(monkeypatch)
        got = tmp_path / change / "SCORE.json"
        got.parent.mkdir()
        assert _score(root, items, obs, got, "--partition-bytes", "16K") == 0
        assert spy.reduced == 0
        monkeypatch.setattr(partitioned, "digests", real)
        want = tmp_path / f"{change}-one" / "SCORE.json"
        want.parent.mkdir()
        assert _score(root, items, obs, want) == 0  # the file as it ended
        assert got.read_bytes() == want.read_bytes()
        assert obs.read_bytes() != log
    capsys.readouterr()


def test_digests_stop_when_no_one_waits(tmp_path):
    """The hashing thread stops at its next chunk once the score is over (an interrupt or a
    fallback): a stopped hash is an OSError, which reads as no digests."""
    import threading

    from prereg import partitioned

    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n' * 1000)
    parts = partitioned.cuts(path, 1024)
    stop = threading.Event()
    assert partitioned.digests(path, parts, stop)[1] == 8000
    stop.set()
    with pytest.raises(OSError, match="stopped"):
        partitioned.digests(path, parts, stop)
