"""The streaming score reader against the per-line reader it replaced (``reference_reader``,
kept here as the oracle): on hostile inputs both refuse with the same messages, and on inputs
both accept they give the same packed lists, binary outputs and file digests.

The streaming reader decodes whole blocks at C speed only when every strict rule provably
holds; these tests shrink the block to a few bytes and to a few lines as well, so that lines
cross block boundaries and every fallback path runs.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import reference_reader
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jev_helpers import CONFIG, FIXTURES, with_field

import prereg.jsonl
from prereg.digest import file_sha256
from prereg.engines.multicorrect import engine_config, pack
from prereg.engines.multicorrect.reader import read_packed_inputs
from prereg.errors import UserError

CFG = engine_config(CONFIG)
SMALL = FIXTURES / "small"
NAMES = ("lists", "labels", "predictions", "binary")

# Lines a user might hand in, good and bad; each file draws from the pool of its own kind and
# from the others' (a line of the wrong kind is a line with unknown and missing fields).
HOSTILE = {
    "lists": [
        '{"request_id": "v1", "question": "q", "candidates": ["a", "b"], "request_id": "v9"}',
        '{"request_id" : "v9", "question": "q", "candidates": ["a", "b"]}',
        '{"request_id": "v9", "question": "time: 10:30", "candidates": ["a\\": 1", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", "b"], "question" : "q"}',
        '{"request_id": "v9", "question": "caf\\u00e9 \\ud800", "candidates": ["a", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", 1]}',
        '{"request_id": "", "question": "q", "candidates": ["a", "b"]}',
        '{"request_id": 7, "question": "q", "candidates": ["a", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a"]}',
        '{"request_id": "v9", "question": null, "candidates": ["a", "b"]}',
        '{"request_id": "v9", "question": "q"}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", "b"]}',
        '{"request_id": "t9", "question": "q", "candidates": ["x", "y", "z"]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", "b"], "extra": 1}',
        ' {"request_id": "v8", "question": "q", "candidates": ["a", "b"]} ',
        '{"request_id": "v8", "question": "q", "candidates": ["a", "b"]}\r',
        '{"request_id": "v8", "question": "q",\t"candidates": ["a", "b"]}',
        '{"request_id": "v1", "question": "q", "candidates": ["a", "b"]}',
        '{"request_id": "v1", "question": "q", "candidates": ["a", "b"]}{"a": 1}',
        '{"request_id": "v9", "question": "q", "candidates": {"a": "b"}}',
        # against the lists' light decode (candidates kept raw, proven strings by the bytes)
        '{"request_id": "v9", "question": "q", "candidates": "[a, b]"}',
        '{"request_id": "v9", "question": "[", "candidates": "x"}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", ["b"]]}',
        '{"request_id": "v9", "question": "q", "candidates": [["a", "b"]]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a,b", "c"]}',
        '{"request_id": "v9", "question": "q,", "candidates": ["a", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", null]}',
        '{"request_id": "v9", "question": "q", "candidates": ["a", 1, "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": [true, "a", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": []}',
        '{"request_id": "v9", "question": "q", "candidates": [{"a": "b"}, "c"]}',
        '{"request_id": "v9", "question": "q", "candidates": [ "a" , "b" ]}',
        '{"request_id": "v9", "question": "q", "candidates":["a","b","c"]}',
        '{"request_id": "v9", "question": "q", "candidates":  ["a", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates" : ["a", "b"]}',
        '{"request_id": "v9", "candidates": ["a", "b"], "question": "q"}',
        '{"request_id": "v9", "question": "q", "candidates": ["\u00e9", "b"]}',
        '{"request_id": "v9", "question": "q", "candidates": ["é", "b", "c"]}',
        '{"request_id": "v9", "question": "q", "candidates": [' + ", ".join(['"x"'] * 256) + "]}",
        '{"request_id": "v9", "question": "q", "candidates": ["a", "b"]}  ',
        "[1, 2]",
        '"text"',
        "",
        "   ",
        '{"request_id": "v9", ',
    ],
    "labels": [
        '{"request_id": "v1", "split": "validation", "correct": [0], "split": "test"}',
        '{"request_id": "v1", "split": "test", "correct": [0]}',
        '{"request_id": "v2", "split": "train", "correct": [0]}',
        '{"request_id": "v2", "split": "validation", "correct": [0, 0]}',
        '{"request_id": "v2", "split": "validation", "correct": [true]}',
        '{"request_id": "v2", "split": "validation", "correct": [1.0]}',
        '{"request_id": "v2", "split": "validation", "correct": [-1]}',
        '{"request_id": "v2", "split": "validation", "correct": [3]}',
        '{"request_id": "v2", "split": "validation", "correct": [123456789012345678901234567890]}',
        '{"request_id": "v2", "split": "validation", "correct": [1' + "0" * 4400 + "]}",
        '{"request_id": "v2", "split": 5, "correct": [0]}',
        '{"request_id": "zz", "split": "validation", "correct": [0]}',
        '{"request_id": "zz", "split": "test", "correct": [0]}',
        '{"request_id": "v9", "split": "validation", "correct": [1]}',
        '{"request_id": "t9", "split": "test", "correct": [0, 2]}',
        '{"request_id": "v8", "split": "validation", "correct": []}',
        '{"request_id": "v2", "split": "validation", "correct": [0]}',
        '{"request_id": "v2", "split" : "validation", "correct": [0]}',
        '{"request_id": "v2", "split": "validation", "correct": [0], "note": "x"}',
    ],
    "predictions": [
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.3, NaN]}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.3, Infinity]}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.3, 1e400]}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.3, -1e400]}',
        '{"request_id": "v1", "refused": false, "probabilities": [1' + "0" * 400 + ", 0, 0]}",
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.4, 0]}',
        '{"request_id": "v1", "refused": false, "probabilities": [1, 0, 0]}',
        '{"request_id": "v1", "refused": false, "probabilities": [1.5, -0.5, 0]}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.5, 0.3, 0.1]}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.4]}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.4, true]}',
        '{"request_id": "v1", "refused": false, "probabilities": null}',
        '{"request_id": "v1", "refused": true, "probabilities": [0.5, 0.5, 0]}',
        '{"request_id": "v1", "refused": true, "probabilities": null}',
        '{"request_id": "v1", "refused": 0, "probabilities": null}',
        '{"request_id": "v1", "refused": false, "probabilities": [0.6, 0.3, 0.1], "refused": true}',
        '{"request_id": "v9", "refused": false, "probabilities": [0.5, 0.5]}',
        '{"request_id": "t9", "refused": false, "probabilities": [0.2, 0.3, 0.5]}',
        '{"request_id": "v8", "refused": true, "probabilities": null}',
        '{"request_id": "zz", "refused": true, "probabilities": null}',
        '{"request_id": "v2", "refused": false, "probabilities": [0.7, 0.2, 0.1]}',
        '{"request_id": "v2", "refused": false, "probabilities": [7e-1, 2E-1, 0.1]}',
        '{"request_id": "v2", "refused": false, "probabilities": [0.7, 0.2, 0.1]} ',
    ],
    "binary": [
        '{"request_id": "v1", "candidate_index": 0, "probability": 0.1, "label": 1}',
        '{"request_id": "v1", "candidate_index": 0, "probability": 0.1, "label": 0}',
        '{"request_id": "v1", "candidate_index": 7, "probability": 0.1, "label": 1}',
        '{"request_id": "v1", "candidate_index": -1, "probability": 0.1, "label": 1}',
        '{"request_id": "v1", "candidate_index": 1.0, "probability": 0.1, "label": 0}',
        '{"request_id": "v1", "candidate_index": 1, "probability": 1.01, "label": 0}',
        '{"request_id": "v1", "candidate_index": 1, "probability": 1, "label": 0}',
        '{"request_id": "v1", "candidate_index": 1, "probability": 1' + "0" * 40 + ', "label": 0}',
        '{"request_id": "v1", "candidate_index": 1, "probability": true, "label": 0}',
        '{"request_id": "v1", "candidate_index": 1, "probability": 0.5, "label": true}',
        '{"request_id": "v1", "candidate_index": 1, "probability": 0.5, "label": 2}',
        '{"request_id": "v1", "candidate_index": 2, "probability": 0.5, "label": 0, "label": 1}',
        '{"request_id": "nope", "candidate_index": 0, "probability": 0.1, "label": 1}',
        '{"request_id": "v9", "candidate_index": 1, "probability": 0.25, "label": 1}',
        '{"request_id": "t1", "candidate_index": 1, "probability": 0.95, "label": 1}',
        '{"request_id": "t3", "candidate_index": 2, "probability": 0.5, "label": 1}',
        '{"request_id": "v4", "candidate_index": 3, "probability": 0.0, "label": 0}',
    ],
}
RAW = [b"\xff\xfe", b"\xef\xbb\xbf", b'{"request_id": "v\xc3", "x": 1}', b"\xed\xa0\x80"]


def _base(name: str) -> list[bytes]:
    return (SMALL / f"{name}.jsonl").read_bytes().splitlines()


def _line(name: str):
    own = [s.encode() for s in HOSTILE[name]] + _base(name)
    other = [s.encode() for n in NAMES if n != name for s in HOSTILE[n][:3]]
    raw = st.sampled_from(RAW).flatmap(
        lambda junk: st.sampled_from(own).map(lambda line: junk + line)
    )
    return st.one_of(st.sampled_from(own), st.sampled_from(other), raw)


def _file(name: str):
    base = _base(name)
    edits = st.lists(st.tuples(st.integers(0, len(base)), st.booleans(), _line(name)), max_size=4)

    def apply(changes, ending) -> bytes:
        lines = list(base)
        for at, replace, text in changes:
            if replace and at < len(lines):
                lines[at] = text
            else:
                lines.insert(at, text)
        return b"\n".join(lines) + ending

    return st.builds(apply, edits, st.sampled_from([b"\n", b"", b"\n\n"]))


def _old(d: Path, binary: bool, cfg=CFG):
    args = [str(d / f"{n}.jsonl") for n in NAMES[:3]] + [
        str(d / "binary.jsonl") if binary else None
    ]
    inputs = reference_reader.read_score_inputs(cfg, *args)
    return (
        pack(inputs.fit_pairs, cfg, cfg.fit_split),
        pack(inputs.evaluate_pairs, cfg, cfg.evaluate_split),
        inputs.binary,
    )


def _same_pack(a, b) -> None:
    assert a.split == b.split and a.request_ids == b.request_ids
    for name in (
        "refused", "n_correct", "offsets", "probs", "correct", "seg_correct",
        "max_distractor", "min_correct", "max_correct", "max_prob",
    ):  # fmt: skip
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


def _compare(d: Path, binary: bool, cfg=CFG) -> str:
    args = [str(d / f"{n}.jsonl") for n in NAMES[:3]] + [
        str(d / "binary.jsonl") if binary else None
    ]
    try:
        old = _old(d, binary, cfg)
    except UserError as e:
        with pytest.raises(UserError) as new:
            read_packed_inputs(cfg, *args)
        assert new.value.message == e.message
        assert new.value.problems == e.problems
        return "refused"
    new = read_packed_inputs(cfg, *args)
    _same_pack(old[0], new.fit)
    _same_pack(old[1], new.evaluate)
    if binary:
        assert new.binary_q.tolist() == [o.probability for o in old[2]]
        assert new.binary_y.tolist() == [o.label for o in old[2]]
        assert new.binary_q.dtype == np.float64 and new.binary_y.dtype == np.int64
    else:
        assert new.binary_q is None and new.binary_y is None
    for key, path in zip(("lists", "labels", "predictions"), args, strict=False):
        sha, size = file_sha256(path)
        assert new.digests[key] == {"sha256": sha, "bytes": size}
    return "accepted"


@pytest.fixture(
    params=[(None, None), (7, None), (200, None), (7, 16), (200, 64), (64, 200)],
    ids=["block-default", "block-7B", "block-200B", "block-7B-read-16B", "block-200B-read-64B",
         "block-64B-read-200B"],
)  # fmt: skip
def block(request, monkeypatch):
    """The block size, and the read size: a file at least a read long is hashed on a thread
    of its own while its blocks are decoded."""
    size, read = request.param
    if size is not None:
        monkeypatch.setattr(prereg.jsonl, "BLOCK", size)
    if read is not None:
        monkeypatch.setattr(prereg.jsonl, "READ", read)
    return size


@pytest.fixture(scope="module")
def _scratch_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("scratch")


@pytest.fixture
def scratch(_scratch_root) -> Path:
    """An empty folder for one test: the module's one folder, emptied (pytest's tmp_path makes
    a numbered folder and moves a symlink for each of this module's ~1,600 tests and examples,
    which cost as much as the reading they test)."""
    d = _scratch_root / "t"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    return d


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lists=_file("lists"),
    labels=_file("labels"),
    predictions=_file("predictions"),
    binary=st.one_of(st.none(), _file("binary")),
)
def test_the_streaming_reader_agrees_with_the_per_line_reader(
    scratch, block, lists, labels, predictions, binary
):
    d = scratch  # each example writes all four files
    for name, data in zip(NAMES, (lists, labels, predictions, binary), strict=True):
        (d / f"{name}.jsonl").write_bytes(data if data is not None else b"")
    _compare(d, binary is not None)


@pytest.mark.parametrize("mode", ["append", "replace"])
@pytest.mark.parametrize("name, index", [(n, i) for n in NAMES for i in range(len(HOSTILE[n]))])
def test_each_hostile_line_alone(scratch, block, name, index, mode):
    """Each hostile line appended to the clean fixture, or in place of the line of its request
    id (line 2 when it names none there): the same refusal or the same packs."""
    text = HOSTILE[name][index]
    d = scratch / "in"
    shutil.copytree(SMALL, d)
    path = d / f"{name}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    if mode == "append":
        lines.append(text)
    else:
        rid = re.search(r'"request_id": "(\w+)"', text)
        at = next((k for k, line in enumerate(lines) if rid and f'"{rid[1]}"' in line), 1)
        lines[at] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    _compare(d, True)


def test_the_clean_fixture_takes_the_fast_path_and_agrees(tmp_path, monkeypatch):
    calls = []
    strict = prereg.jsonl.TypedLines.strict_at
    monkeypatch.setattr(
        prereg.jsonl.TypedLines, "strict_at", lambda self, no: calls.append(no) or strict(self, no)
    )
    assert _compare(SMALL, True) == "accepted"
    assert calls == []  # no clean record was read twice


def test_a_fifo_is_refused_with_the_path(tmp_path):
    d = tmp_path / "in"
    shutil.copytree(SMALL, d)
    (d / "labels.jsonl").unlink()
    import os

    os.mkfifo(d / "labels.jsonl")
    args = [str(d / f"{n}.jsonl") for n in NAMES]
    with pytest.raises(UserError) as e:
        read_packed_inputs(CFG, *args)
    assert (
        f"{d / 'labels.jsonl'}: cannot read the file: a FIFO, not a regular file"
        in e.value.problems
    )


def _generated(n: int, seed: int) -> dict[str, list[str]]:
    """n lists of 2-5 candidates with a label, a prediction (some refused) and one binary
    output per option of each labelled list, as lines, in the lists' order."""
    import json

    rng = np.random.default_rng(seed)
    out: dict[str, list[str]] = {k: [] for k in NAMES}
    for i in range(n):
        rid = f"r{i}"
        m = int(rng.integers(2, 6))
        correct = sorted(rng.choice(m, size=int(rng.integers(0, m + 1)), replace=False).tolist())
        split = CFG.fit_split if i % 2 else CFG.evaluate_split
        cands = [f"c{j}" for j in range(m)]
        out["lists"].append(json.dumps({"request_id": rid, "question": "q", "candidates": cands}))
        out["labels"].append(json.dumps({"request_id": rid, "split": split, "correct": correct}))
        refused = bool(rng.random() < 0.1)
        probs = None if refused else [1 / m] * m
        pred = {"request_id": rid, "refused": refused, "probabilities": probs}
        out["predictions"].append(json.dumps(pred))
        for j in range(m):
            b = {"request_id": rid, "candidate_index": j, "probability": float(rng.random())}
            out["binary"].append(json.dumps({**b, "label": int(j in correct)}))
    return out


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(
    "order", ["aligned", "reversed", "shuffled", "lists-shuffled", "one-moved", "repeat-far"]
)
def test_files_in_another_order_than_the_lists_agree(scratch, block, seed, order):
    """The other files' blocks are matched to the lists' rows in the lists' order first and
    looked up by id otherwise: any order gives the per-line reader's packs or refusals."""
    rng = np.random.default_rng(seed)
    lines = _generated(120, seed)
    for name in ("labels", "predictions", "binary"):
        rows = lines[name]
        if order == "reversed":
            rows.reverse()
        elif order == "shuffled":
            rng.shuffle(rows)
        elif order == "lists-shuffled" and name == "binary":  # each list's outputs together
            runs: dict[str, list[str]] = {}
            for r in rows:
                runs.setdefault(r.split('"')[3], []).append(r)
            keys = list(runs)
            rng.shuffle(keys)
            rows[:] = [r for k in keys for r in runs[k]]
        elif order == "lists-shuffled":
            rng.shuffle(rows)
        elif order == "one-moved":
            rows.insert(len(rows) // 3, rows.pop(-2))
        elif order == "repeat-far":
            rows.append(rows[1])
    for name in NAMES:
        (scratch / f"{name}.jsonl").write_text("\n".join(lines[name]) + "\n", encoding="utf-8")
    outcome = _compare(scratch, True)
    assert outcome == ("refused" if order == "repeat-far" else "accepted")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("at", [0, 1, 3])
def test_an_object_split_over_two_lines_is_refused(scratch, block, name, at):
    """Line ``at`` followed on the same line by the head of the next line's object, whose tail
    is the next line: joined into one array with a comma at each line break, the two lines make
    two valid objects (the inserted comma separates the second one's members), as many as there
    are lines. The strict reader refuses both lines; so must the streaming reader, with the
    same message."""
    d = scratch / "in"
    shutil.copytree(SMALL, d)
    path = d / f"{name}.jsonl"
    lines = path.read_bytes().splitlines()
    nxt = lines[at + 1]
    cut = nxt.index(b', "')
    lines[at : at + 2] = [lines[at] + b"," + nxt[:cut], nxt[cut + 2 :]]
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert _compare(d, True) == "refused"


# The lists' light decode proves candidates to be strings from the block's bytes; with one
# candidate allowed, a string (not an array) would pass every count but the key's.
ONE_CANDIDATE = engine_config(with_field(CONFIG, "lists", "candidates", min_items=1))
RENAMED = engine_config(with_field(CONFIG, "lists", "candidates", name="options"))
LIGHT = [
    '{"request_id": "v9", "question": "q", "candidates": ["a"]}',
    '{"request_id": "v9", "question": "q", "candidates": "a"}',
    '{"request_id": "v9", "question": "[", "candidates": "a"}',
    '{"request_id": "v9", "question": "q", "candidates": "[a"}',
    '{"request_id": "v9", "question": "q", "candidates": "a", "x": ["b"]}',
    '{"request_id": "v9", "question": "q", "candidates": [{}]}',
    '{"request_id": "v9", "question": "q", "candidates": [{}, "a"]}',
    '{"request_id": "v9", "question": "q", "candidates": []}',
    '{"request_id": "v9", "question": ["q"], "candidates": "a"}',
    '{"request_id": "v9", "question": "q", "candidates": ["a", "b"]}',
]


@pytest.mark.parametrize("variant", ["one-candidate", "renamed"])
@pytest.mark.parametrize("mode", ["append", "replace"])
@pytest.mark.parametrize("index", range(len(LIGHT)))
def test_lists_lines_against_the_light_decode(scratch, block, variant, mode, index):
    cfg = ONE_CANDIDATE if variant == "one-candidate" else RENAMED
    d = scratch / "in"
    shutil.copytree(SMALL, d)
    path = d / "lists.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    text = LIGHT[index]
    if mode == "append":
        lines.append(text)
    else:
        lines[1] = text.replace('"v9"', '"v2"')
    if variant == "renamed":
        lines = [line.replace('"candidates"', '"options"') for line in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    _compare(d, True, cfg)


@pytest.mark.parametrize(
    "pair",
    [
        # a key twice (one string and one comma too many) and a number among the candidates
        (
            '{"request_id": "v8", "question": "q", "candidates": ["a", "b"], "request_id": "v7"}',
            '{"request_id": "v9", "question": "q", "candidates": ["a", 1, "b"]}',
        ),
        # escaped quotes (two quotes more than strings) and a number among the candidates
        (
            '{"request_id": "v8", "question": "x\\"\\"y", "candidates": ["a", "b"]}',
            '{"request_id": "v9", "question": "q", "candidates": ["a", 1, "b"]}',
        ),
    ],
    ids=["repeated-key", "escaped-quotes"],
)
def test_lists_lines_whose_counts_would_cancel_in_one_block(scratch, pair):
    """Two lines whose counts of quotes and commas, off in opposite directions, add up to a
    block of records that each look right: the light decode must not take the block."""
    d = scratch / "in"
    shutil.copytree(SMALL, d)
    path = d / "lists.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, *pair]) + "\n", encoding="utf-8", newline="")
    assert _compare(d, True) == "refused"
