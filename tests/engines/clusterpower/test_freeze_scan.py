"""The freeze engine's building blocks: strict JSON, key scans, line lookup, paths, hashing."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from s3_study import CONFIG

from prereg.engines.clusterpower.config import freeze_config
from prereg.engines.clusterpower.freeze import (
    find_forbidden_keys,
    hash_beneath,
    json_key_lines,
    json_path,
    path_syntax_problem,
    sha256_fd,
    strict_loads,
)
from prereg.errors import UserError

FC = freeze_config(CONFIG)

KEYS = st.sampled_from(
    ["a", "id", "verdict", "Verdicts", "VOTE", "vote_count", "model-output", "Model_Outputs", "x y"]
)
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
JSON = st.recursive(
    SCALARS,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(KEYS, kids, max_size=4),
    max_leaves=25,
)


def reference_hits(value, forbidden, path=()):
    """Recursive reference: (path, key) of each forbidden key, in document order."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            if forbidden(k):
                out.append((path + (k,), k))
            out += reference_hits(v, forbidden, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += reference_hits(v, forbidden, path + (i,))
    return out


def all_key_paths(value, path=()):
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(path + (k,))
            out |= all_key_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out |= all_key_paths(v, path + (i,))
    return out


def is_forbidden(key: str) -> bool:
    # the study's rule written out by hand: lowercase, '-' to '_', then the six names
    names = {"verdict", "verdicts", "vote", "votes", "model_output", "model_outputs"}
    return key.lower().replace("-", "_") in names


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_forbidden_keys_match_a_recursive_reference(doc) -> None:
    found = list(find_forbidden_keys(doc, lambda k: FC.normalise_key(k) in FC.forbidden))
    assert found == reference_hits(doc, is_forbidden)


@settings(max_examples=200, deadline=None)
@given(JSON, st.sampled_from([None, 1, 2]))
def test_key_lines_cover_every_key_on_its_own_line(doc, indent) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    lines = json_key_lines(text)
    assert set(lines) == all_key_paths(doc)
    rows = text.split("\n")
    for path, line in lines.items():
        if indent is None:
            assert line == 1
        else:
            assert (
                rows[line - 1].lstrip().startswith(json.dumps(path[-1], ensure_ascii=False) + ":")
            )


def test_key_lines_with_escapes_and_punctuation_inside_strings() -> None:
    text = '{\n "a\\"b": "x,{[",\n "c": [\n  {"d": 1},\n  {"e\\u0041": {"f": "]"}}\n ]\n}'
    assert json_key_lines(text) == {
        ('a"b',): 2,
        ("c",): 3,
        ("c", 0, "d"): 4,
        ("c", 1, "eA"): 5,
        ("c", 1, "eA", "f"): 5,
    }


def test_a_very_deep_document_is_scanned_without_recursion() -> None:
    doc: dict = {"Model-Output": 1}
    for i in range(5000):
        doc = {f"k{i % 3}": doc}
    hits = list(find_forbidden_keys(doc, lambda k: FC.normalise_key(k) in FC.forbidden))
    assert len(hits) == 1 and len(hits[0][0]) == 5001 and hits[0][1] == "Model-Output"


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"a": 1, "b": {"c": 2, "c": 3}}', "duplicate key 'c'"),
        ('{"a": NaN}', "NaN is not a JSON value"),
        ("[Infinity]", "Infinity is not a JSON value"),
        ("[-Infinity]", "-Infinity is not a JSON value"),
        ("[1e400]", "number 1e400 overflows"),
        ("[" * 100_000 + "]" * 100_000, "nesting too deep to parse"),
    ],
)
def test_strict_loads_refuses(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        strict_loads(text)


def test_strict_loads_keeps_ordinary_json() -> None:
    assert strict_loads('{"a": [1, 2.5, -0.0, true, null, "é"]}') == {
        "a": [1, 2.5, -0.0, True, None, "é"]
    }


@pytest.mark.parametrize(
    "parts, text",
    [
        ((), "$"),
        (("a", 0, "b"), "$.a[0].b"),
        (("Model-Output",), '$["Model-Output"]'),
        (("x y", 3), '$["x y"][3]'),
        (("_ok9",), "$._ok9"),
    ],
)
def test_json_path(parts, text: str) -> None:
    assert json_path(parts) == text


@pytest.mark.parametrize(
    "path, problem",
    [
        ("src/a.py", None),
        ("a..b/c.json", None),
        ("/etc/passwd", "is absolute"),
        ("..", "contains '..'"),
        ("a/../b.py", "contains '..'"),
        ("a/..", "contains '..'"),
        ("./a.py", "empty or '.' component"),
        ("a//b.py", "empty or '.' component"),
        ("a/", "empty or '.' component"),
        ("a\x00b.py", "NUL"),
    ],
)
def test_path_syntax(path: str, problem: str | None) -> None:
    found = path_syntax_problem(path)
    assert (found is None) if problem is None else (problem in found)


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 3 * 4096 + 17])
def test_sha256_fd_streams_in_chunks(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    p = tmp_path / "f.bin"
    p.write_bytes(data)
    fd = os.open(p, os.O_RDONLY)
    try:
        assert sha256_fd(fd, chunk=4096) == (hashlib.sha256(data).hexdigest(), size)
    finally:
        os.close(fd)
    assert hash_beneath(tmp_path, "f.bin", chunk=1000) == (hashlib.sha256(data).hexdigest(), size)


def test_hash_beneath_refuses_symlinks_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "real.txt").write_bytes(b"x")
    (tmp_path / "root" / "link.txt").symlink_to("real.txt")
    (tmp_path / "out.txt").write_bytes(b"y")
    (tmp_path / "root" / "away.txt").symlink_to(tmp_path / "out.txt")
    with pytest.raises(UserError, match="passes through a symlink at 'link.txt'"):
        hash_beneath(tmp_path / "root", "link.txt")
    with pytest.raises(UserError, match="escapes the root after resolution"):
        hash_beneath(tmp_path / "root", "away.txt")
    with pytest.raises(UserError, match="contains '..'"):
        hash_beneath(tmp_path / "root", "../out.txt")


def test_the_root_itself_may_be_reached_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.json").write_bytes(b"{}")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert hash_beneath(tmp_path / "alias", "f.json")[1] == 2


def test_normalisation_follows_the_config() -> None:
    assert FC.normalise_key("Model-Outputs") == "model_outputs"
    cfg = copy.deepcopy(CONFIG)
    cfg["constants"]["freeze_rules"]["forbidden_keys"] = {
        "names": ["Score"],
        "lowercase": False,
        "replace": [],
    }
    fc = freeze_config(cfg)
    doc = {"Score": 1, "score": 2, "verdict": 3}
    assert [
        k for _, k in find_forbidden_keys(doc, lambda k: fc.normalise_key(k) in fc.forbidden)
    ] == ["Score"]


# An inconsistent freeze configuration (an unknown required role, an extension without a
# format, an optional plan role, an unknown role kind, a repeated role id) is refused when
# compiling: see test_s3_compile_checks.


def test_json_path_quotes_a_key_ending_in_a_newline() -> None:
    assert json_path(["abc\n"]) == '$["abc\\n"]'
