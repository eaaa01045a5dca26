"""The score path's fast readers against the strict ones they stand in for.

On prepared folders (the demo seed and two other seeds) score writes the same SCORE.json and
SCORE.md bytes with the fast readers as with the strict readers alone, and the fast paths are
the ones taken (so the corpus shape they decode stays the generator's).  On hostile corpus and
gold files, each fast reader either returns exactly what the strict reader finds or declines
(None), and ``load_prepared`` then refuses with the strict reader's words, naming the file and
line.  The encoder the gold digest uses equals ``json.dumps`` (the digest prepare wrote) on
every code point and on arbitrary objects.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from d17_helpers import DEMO, demo, engine_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.digest import PREFIX, sha256_hex
from prereg.engines.reachability import prepared as fast
from prereg.engines.reachability import score_commands as sc
from prereg.engines.reachability.canon import canonical_record_json, record_digest
from prereg.engines.reachability.commands import prepared_files
from prereg.engines.reachability.pipeline import prepare_memory
from prereg.engines.reachability.scoring import scoring_spec
from prereg.errors import UserError
from prereg.files import write_files_new
from prereg.records import read_json_file
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
STUDY = "d17-multifact"
STARTS = "2026-10-15T09:00:00Z,2026-10-15T10:00:00.000Z"
EVALUATED = "2026-10-20T00:00:00Z"
EFFECTIVE = "2026-10-02T10:02:34.263Z"
SEEDS = ("d17mf-public-demo", "d17mf-sweep-7", "d17mf-sweep-23")
SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def cli(*args) -> int:
    return main(["--project", str(ROOT), STUDY, *map(str, args)])


@functools.cache
def context():
    return study_context(Project(ROOT), STUDY)[1]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """Each seed prepared (in memory, written as prepare writes it); the demo seed's preparation
    is the one the other d17 test files of this process share."""
    out = {}
    for seed in SEEDS:
        folder = tmp_path_factory.mktemp("fastread") / "prepared"
        folder.mkdir()
        prep = demo() if seed == DEMO else prepare_memory(engine_config(), seed)
        files, _ = prepared_files(context(), prep)
        write_files_new([(folder / n, data, mode) for n, data, mode in files])
        out[seed] = folder
    return out


def _strict_only(monkeypatch) -> None:
    """Every fast reader declines: the strict readers do all the reading."""
    import prereg.records as records

    monkeypatch.setattr(fast, "corpus_rows", lambda data: None)
    monkeypatch.setattr(fast, "corpus_records", lambda data: None)
    monkeypatch.setattr(fast, "gold_object", lambda raw: None)
    monkeypatch.setattr(records, "_typed_decoders", lambda schema_path: None)


def _score(folder: Path, tmp: Path, name: str) -> tuple[bytes, bytes]:
    obs, cal = tmp / "obs.jsonl", tmp / "cal.json"
    if not obs.exists():
        assert cli("simulate", folder, "--scenario", "d17-finding", "--seed", 3, "--out", obs) == 0
        assert cli("calibrator-fit", obs, folder / "gold.json", "--effective-at", EFFECTIVE, "--out", cal) == 0  # fmt: skip
    digest = json.loads(cal.read_text())["digest"]
    out = tmp / f"{name}.json"
    args = ["--calibrator", cal, "--calibrator-digest", digest, "--session-start", STARTS]
    assert cli("score", folder, obs, *args, "--evaluated-at", EVALUATED, "--out", out) == 0
    return out.read_bytes(), out.with_suffix(".md").read_bytes()


@pytest.mark.parametrize("seed", SEEDS)
def test_score_writes_the_same_bytes_with_and_without_the_fast_readers(
    folders, tmp_path, monkeypatch, seed
):
    folder = folders[seed]
    taken = []
    corpus_rows, gold_object = fast.corpus_rows, fast.gold_object

    def spy(fn, name):
        def wrapped(data):
            got = fn(data)
            taken.append((name, got is not None))
            return got

        return wrapped

    with monkeypatch.context() as m:
        m.setattr(fast, "corpus_rows", spy(corpus_rows, "corpus"))
        m.setattr(fast, "gold_object", spy(gold_object, "gold"))
        quick = _score(folder, tmp_path, "fast")
    assert ("corpus", True) in taken and ("gold", True) in taken and all(ok for _, ok in taken)
    _strict_only(monkeypatch)
    assert _score(folder, tmp_path, "strict") == quick


def test_the_fast_readers_equal_the_strict_readers_on_prepared_folders(folders):
    for folder in folders.values():
        data = (folder / "corpus.jsonl").read_bytes()
        assert fast.corpus_rows(data) == sc._corpus_records_strict(data, folder / "corpus.jsonl")
        raw = (folder / "gold.json").read_bytes()
        gold = {k: v for k, v in read_json_file(folder / "gold.json").items() if k != "specDigest"}
        assert fast.gold_object(raw) == (gold, record_digest(gold))


def test_the_corpus_records_as_builtins_are_the_strict_readers_records(folders):
    import msgspec

    from prereg.records import loads_strict

    for folder in folders.values():
        data = (folder / "corpus.jsonl").read_bytes()
        strict = [loads_strict(line) for line in data.decode("utf-8").splitlines()]
        got = msgspec.to_builtins(fast.corpus_records(data))
        assert got == strict
        assert [list(r) for r in got] == [list(r) for r in strict]  # key order too


def _as_private(monkeypatch) -> None:
    """These seeds are public; the readers, not the seed policy, are under test here."""
    from prereg.engines.reachability import commands
    from prereg.engines.reachability.seeds import SeedClass

    monkeypatch.setattr(
        commands, "classify_seed", lambda seed, policy, *a, **k: SeedClass(False, "t")
    )


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_dev_review_material_is_the_same_with_and_without_the_fast_readers(
    folders, tmp_path, monkeypatch, seed
):
    _as_private(monkeypatch)
    folder = tmp_path / "prepared"
    shutil.copytree(folders[seed], folder)
    assert cli("dev-review-material", folder, tmp_path / "fast.json") == 0
    _strict_only(monkeypatch)
    assert cli("dev-review-material", folder, tmp_path / "strict.json") == 0
    assert (tmp_path / "fast.json").read_bytes() == (tmp_path / "strict.json").read_bytes()


def test_dev_review_material_refuses_a_gold_file_that_is_no_object(
    folders, tmp_path, capsys, monkeypatch
):
    _as_private(monkeypatch)
    folder = tmp_path / "prepared"
    shutil.copytree(folders[SEEDS[0]], folder)
    (folder / "gold.json").write_text("[]\n")
    assert cli("dev-review-material", folder, tmp_path / "m.json") == 2
    assert f"{folder / 'gold.json'}: not a JSON object" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


# -- hostile corpus lines ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_lines(folders) -> list[bytes]:
    return (folders[SEEDS[0]] / "corpus.jsonl").read_bytes().splitlines(keepends=True)[:3]


def _strict_corpus(data: bytes):
    try:
        return sc._corpus_records_strict(data, Path("corpus.jsonl"))
    except UserError as exc:
        return exc


def _agrees(data: bytes) -> None:
    """The fast corpus reader declines, or finds exactly what the strict reader finds."""
    got = fast.corpus_rows(data)
    if got is not None:
        assert got == _strict_corpus(data)


CORPUS_EDITS = {
    "duplicate top key": (b'{"id":', b'{"split":"x","id":'),
    "duplicate nested key": (b'"provenance":{', b'"provenance":{"seed":"x",'),
    "spaced duplicate key": (b'"provenance":{', b'"provenance":{"seed" :"x",'),
    "NaN": (b'"localOutcome":null', b'"localOutcome":NaN'),
    "overflow": (b'"localOutcome":null', b'"localOutcome":1e400'),
    "huge integer": (b'"localOutcome":null', b'"localOutcome":' + b"9" * 5000),
    "number for a string": (b'"arm":"baseline"', b'"arm":1'),
    "extra field": (b'"localOutcome":null', b'"localOutcome":null,"x":1'),
    "missing field": (b'"localOutcome":null,', b""),
    "space after colon": (b'"localOutcome":null', b'"localOutcome": null'),
    "escaped letter": (b'"split":"', b'"split":"\\u0074'),
    "CR": (b"\n", b"\r\n"),
    "CR in a line": (b'"localOutcome":null', b'"localOutcome":\rnull'),
    "blank line": (b"\n", b"\n\n"),
    "U+2028 in a string": (b"Facts:", b"Facts:\xe2\x80\xa8"),
    "U+0085 in a string": (b"Facts:", b"Facts:\xc2\x85"),
    "invalid UTF-8": (b"Facts:", b"Facts:\xff"),
    "lone surrogate": (b"Facts:", b"Facts:\\ud800"),
    "BOM": (b'{"id":', b'\xef\xbb\xbf{"id":'),
}


@pytest.mark.parametrize("name", sorted(CORPUS_EDITS))
def test_a_hostile_corpus_line_is_declined_or_read_alike(corpus_lines, name):
    old, new = CORPUS_EDITS[name]
    first = corpus_lines[0].replace(old, new, 1)
    assert first != corpus_lines[0]
    data = first + b"".join(corpus_lines[1:])
    assert fast.corpus_rows(data) is None or name in ("escaped letter",)
    _agrees(data)


def test_a_record_split_over_two_lines_or_two_on_one_line_is_declined(corpus_lines):
    a, b = corpus_lines[0], corpus_lines[1]
    cut = a.index(b',"split"') + 1
    assert fast.corpus_rows(a[:cut] + b"\n" + a[cut:] + b) is None
    assert fast.corpus_rows(a[:-1] + b"," + b) is None
    assert fast.corpus_rows(a[:-1] + b" " + b) is None
    assert fast.corpus_rows(a[:-1]) is None  # no final LF
    assert fast.corpus_rows(b"") is None


@SETTINGS
@given(st.data())
def test_random_edits_of_corpus_lines_are_declined_or_read_alike(corpus_lines, data):
    raw = bytearray(b"".join(corpus_lines[:2]))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        span = data.draw(st.integers(0, 3))
        raw[at : at + span] = data.draw(st.binary(max_size=4))
    _agrees(bytes(raw))


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            (b'{"id":', b'{"split":"x","id":'),
            "corpus.jsonl:1: not a corpus record (duplicate key 'split')",
        ),  # fmt: skip
        (
            (b'"localOutcome":null', b'"localOutcome":NaN'),
            "corpus.jsonl:1: not a corpus record (NaN is not a JSON value)",
        ),  # fmt: skip
        (
            (b'"localOutcome":null', b'"localOutcome":1e400'),
            "corpus.jsonl:1: not a corpus record (number 1e400 overflows a double)",
        ),  # fmt: skip
    ],
)
def test_score_refuses_a_hostile_corpus_with_the_strict_message(
    folders, tmp_path, capsys, edit, message
):
    folder = tmp_path / "prepared"
    shutil.copytree(folders[SEEDS[0]], folder)
    corpus = folder / "corpus.jsonl"
    data = corpus.read_bytes().replace(*edit, 1)
    corpus.write_bytes(data)
    prereg = json.loads((folder / "preregistration.json").read_text())
    prereg["corpusDigest"] = PREFIX + sha256_hex(data)  # the digest check passes
    (folder / "preregistration.json").write_text(json.dumps(prereg))
    with pytest.raises(UserError) as exc:
        sc.load_prepared(context(), folder, scoring_spec(context().config))
    assert str(exc.value) == f"{corpus}{message[len('corpus.jsonl') :]}"


# -- hostile gold files --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gold_raw(folders) -> bytes:
    return (folders[SEEDS[0]] / "gold.json").read_bytes()


def _strict_gold(raw: bytes, tmp: Path):
    path = tmp / "gold.json"
    path.write_bytes(raw)
    try:
        gold = sc._without(read_json_file(path), "specDigest", path)
    except UserError as exc:
        return exc
    return gold, record_digest(gold)


GOLD_EDITS = {
    "duplicate top key": (b'{"labels":', b'{"schemaVersion":"x","labels":'),
    "duplicate world key": (b'"hops":', b'"hops":9,"hops":'),
    "duplicate target key": (b'"targets":{', b'"targets":{"negation":7,'),
    "space": (b'"labels":', b'"labels": '),
    "float": (b'"day":', b'"day":1.5,"dax":'),
    "boolean": (b'"day":', b'"day":true,"dax":'),
    "huge integer": (b'"day":', b'"day":' + b"9" * 30 + b',"dax":'),
    "NaN": (b'"day":', b'"day":NaN,"dax":'),
    "overflow": (b'"day":', b'"day":1e400,"dax":'),
    "escaped letter": (b'"labels":', b'"label\\u0073":'),
    "unsorted keys": (b'"labels":', b'"zz":"a","labels":'),
    "no final LF": (b"}\n", b"}"),
    "deep": (b'"labels":', b'"x":' + b"[" * 3000 + b"]" * 3000 + b',"labels":'),
}


@pytest.mark.parametrize("name", sorted(GOLD_EDITS))
def test_a_hostile_gold_file_is_declined_or_read_alike(gold_raw, tmp_path, name):
    old, new = GOLD_EDITS[name]
    if old == b"}\n":
        raw = gold_raw[:-2] + b"}"
    else:
        raw = gold_raw.replace(old, new, 1)
    assert raw != gold_raw
    assert fast.gold_object(raw) is None
    strict = _strict_gold(raw, tmp_path)
    if name in ("space", "escaped letter", "no final LF"):  # valid JSON: strict reads it
        assert not isinstance(strict, UserError)
    elif name in ("NaN", "overflow", "deep") or name.startswith("duplicate"):
        assert isinstance(strict, UserError)


@SETTINGS
@given(st.data())
def test_random_edits_of_a_gold_file_are_declined_or_read_alike(tmp_path_factory, data):
    base = (
        b'{"labels":{"a":"yes","b":"no"},"schemaVersion":"v1","specDigest":"sha256:00",'
        b'"worlds":{"a":{"chain":["X1","Y2"],"failureKind":null,"hops":1,"targets":{"n":2}},'
        b'"b":{"chain":[],"failureKind":"link","hops":3,"targets":{}}}}\n'
    )
    raw = bytearray(base)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        span = data.draw(st.integers(0, 3))
        raw[at : at + span] = data.draw(st.binary(max_size=3) | st.sampled_from([b'"', b":", b","]))
    got = fast.gold_object(bytes(raw))
    if got is not None:
        assert got == _strict_gold(bytes(raw), tmp_path_factory.mktemp("g"))


# -- the gold digest's encoder -------------------------------------------------------------------


def test_the_sorted_encoder_equals_json_dumps_on_every_code_point():
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(points), 512):
        text = "".join(map(chr, points[i : i + 512]))
        value = {text: text, text[::-1]: [text, text[:7]], "k" + text[:3]: {text[-5:]: 1}}
        assert fast._encode(value) == canonical_record_json(value)


KEYS = st.text(max_size=6)
VALUES = st.recursive(
    st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


@SETTINGS
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_the_sorted_encoder_equals_json_dumps_on_objects(value):
    assert fast._encode(value) == canonical_record_json(value)


def test_score_imports_no_scipy_stats_no_preparation_and_no_jsonschema(folders, tmp_path):
    """The score command reads typed records and takes its normal quantiles from a table and
    its special functions from scipy.special's public package: scipy.stats is not imported,
    and neither the preparation, the engine configuration, the seed policy nor jsonschema."""
    import subprocess
    import sys

    _score(folders[SEEDS[0]], tmp_path, "warm")
    cal = tmp_path / "cal.json"
    argv = [
        "--project", str(ROOT), STUDY, "score", str(folders[SEEDS[0]]), str(tmp_path / "obs.jsonl"),
        "--calibrator", str(cal), "--calibrator-digest", json.loads(cal.read_text())["digest"],
        "--session-start", STARTS, "--evaluated-at", EVALUATED, "--out", str(tmp_path / "S.json"),
    ]  # fmt: skip
    code = (
        "import json, sys\n"
        "from prereg.cli import main\n"
        "assert main(sys.argv[1:]) == 0\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema'"
        " or m.startswith('scipy.stats') or m.rsplit('.', 1)[-1] in"
        " ('commands', 'pipeline', 'generate', 'config', 'seeds', 'audit'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    assert (tmp_path / "S.json").read_bytes() == (tmp_path / "warm.json").read_bytes()


# -- the row table, field by field -------------------------------------------------------------


def _table_outcome(records, gold, by_column: bool):
    from prereg.engines.reachability import scoring

    config = context().config
    spec = scoring_spec(config)
    fn = scoring._rows_by_column
    try:
        if not by_column:
            scoring._rows_by_column = lambda *a: None
        t = scoring.row_table(config, spec, records, gold)
    except Exception as exc:  # the row loop's own failures, compared as they are
        return type(exc).__name__, str(exc)
    finally:
        scoring._rows_by_column = fn
    return (t.ids, t.requests, t.cell.tolist(), t.position.tolist(), t.gold_yes.tolist())


@pytest.fixture(scope="module")
def demo_rows(folders):
    folder = folders[SEEDS[0]]
    rows = fast.corpus_rows((folder / "corpus.jsonl").read_bytes())
    gold, _ = fast.gold_object((folder / "gold.json").read_bytes())
    return rows, gold


def test_the_row_table_by_column_is_the_row_loops_on_prepared_folders(demo_rows):
    rows, gold = demo_rows
    got = _table_outcome(rows, gold, True)
    assert isinstance(got[0], tuple) and len(got[0]) == len(rows)
    assert got == _table_outcome(rows, gold, False)


@SETTINGS
@given(st.data())
def test_the_row_table_by_column_equals_the_row_loop_on_hostile_rows(demo_rows, data):
    import copy

    rows, gold = demo_rows
    picked = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), min_size=1, max_size=6)))
    records = [rows[i] for i in picked]
    labels = {r[0]: gold["labels"][r[0]] for r in records}
    worlds = {r[0]: copy.deepcopy(gold["worlds"][r[0]]) for r in records}
    for _ in range(data.draw(st.integers(0, 4))):
        rid = data.draw(st.sampled_from([r[0] for r in records]))
        how = data.draw(st.sampled_from(["label", "no label", "no world", "world", "factor", "split", "twice"]))  # fmt: skip
        if how == "label":
            labels[rid] = data.draw(st.sampled_from(["yes", "no", "maybe", ["no"], 1]))
        elif how == "no label":
            labels.pop(rid, None)
        elif how == "no world":
            worlds.pop(rid, None)
        elif how == "world":
            worlds[rid] = data.draw(st.sampled_from(["w", [], None, 3]))
        elif how == "factor" and isinstance(worlds.get(rid), dict):
            key = data.draw(st.sampled_from(["hops", "pool", "outcome", "layout", "failurePosition", "failureKind"]))  # fmt: skip
            value = data.draw(st.sampled_from([None, 0, 1, 3, "1", "x", [1], True]))
            if data.draw(st.booleans()):
                worlds[rid].pop(key, None)
            else:
                worlds[rid][key] = value
        elif how == "split":
            at = [r[0] for r in records].index(rid)
            r = records[at]
            records[at] = (r[0], data.draw(st.sampled_from(["tuning", "test", "x", 1])), r[2])
        elif how == "twice":
            records.append(records[0])
    g = {"labels": labels, "worlds": worlds}
    assert _table_outcome(records, g, True) == _table_outcome(records, g, False)
