"""What jev's score reader lists when an input is unusable or mostly junk: the file's own
problem, not one follow-on per list ("request ...: no row in FILE", 320 of them for the
examples, listed before the cause and, with at most 50 listed, hiding it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prereg.engines.multicorrect import engine_config
from prereg.engines.multicorrect.reader import read_packed_inputs
from prereg.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "jev"
NAMES = ("lists", "labels", "predictions", "binary")


def _config():
    from prereg.compiler.project import Project
    from prereg.study import study_context

    return engine_config(study_context(Project(ROOT), "jev-multicorrect")[1].config)


def _refusal(d: Path) -> UserError:
    with pytest.raises(UserError) as got:
        read_packed_inputs(_config(), *(str(d / f"{n}.jsonl") for n in NAMES))
    return got.value


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["empty", "folder", "missing"])
def test_an_unusable_input_is_its_one_problem(tmp_path, name, kind):
    d = tmp_path / "in"
    shutil.copytree(EXAMPLES, d, ignore=shutil.ignore_patterns("*.py"))
    path = d / f"{name}.jsonl"
    path.unlink()
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "folder":
        path.mkdir()
    why = {
        "empty": "the file holds no records",
        "folder": "cannot read the file: a folder, not a regular file",
        "missing": "cannot read the file: No such file or directory",
    }[kind]
    got = _refusal(d)
    assert (got.message, got.problems) == ("the score inputs have 1 problem(s)", [f"{path}: {why}"])


def test_a_file_of_junk_lines_lists_its_own_lines_before_what_follows_from_them(tmp_path):
    # 60 of the 320 labels made junk: 60 lines of the labels file, and 60 lists without a
    # label; the first 50 listed are the labels' own, the 60 lists' after them (uncounted)
    d = tmp_path / "in"
    shutil.copytree(EXAMPLES, d, ignore=shutil.ignore_patterns("*.py"))
    labels = d / "labels.jsonl"
    lines = labels.read_bytes().split(b"\n")
    lines[:60] = [b"\xff"] * 60
    labels.write_bytes(b"\n".join(lines))
    got = _refusal(d)
    assert got.message == "the score inputs have 120 problem(s)"
    assert got.problems == [
        *(f"{labels}:{no}: not valid UTF-8 (byte 1)" for no in range(1, 51)),
        "… and 70 more",
    ]
