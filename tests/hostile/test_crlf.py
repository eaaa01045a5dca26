"""A CRLF line ending in a JSONL input is refused by every reader, at its line, in the same
words: the language's ``jsonl`` format is "one JSON object per LF-terminated line" (and the
records' reader has always said ``CRLF line ending; use LF``). The jev score reader had taken
such files, its typed decode reading the CR as JSON whitespace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import prereg.jsonl
from prereg.engines.multicorrect import engine_config
from prereg.engines.multicorrect.reader import read_packed_inputs
from prereg.errors import UserError
from prereg.records import read_jsonl_records, read_records

ROOT = Path(__file__).resolve().parents[2]
JEV = ROOT / "tests" / "fixtures" / "jev" / "small"
NAMES = ("lists", "labels", "predictions", "binary")


def _jev_config():
    from prereg.compiler.project import Project
    from prereg.study import study_context

    return engine_config(study_context(Project(ROOT), "jev-multicorrect")[1].config)


def _crlf(path: Path, lines: list[int]) -> None:
    """``path`` with the given lines (from 1) ending in CR LF."""
    text = path.read_bytes().split(b"\n")
    for no in lines:
        text[no - 1] += b"\r"
    path.write_bytes(b"\n".join(text))


@pytest.mark.parametrize("block", [None, 64])  # the whole-block decode, and lines across blocks
@pytest.mark.parametrize("lines", [[1], [2, 3], "all"])
@pytest.mark.parametrize("name", NAMES)
def test_jev_refuses_crlf_at_each_line_as_the_records_reader_does(
    tmp_path, monkeypatch, block, lines, name
):
    if block is not None:
        monkeypatch.setattr(prereg.jsonl, "BLOCK", block)
    d = tmp_path / "jev"
    shutil.copytree(JEV, d)
    n = len((d / f"{name}.jsonl").read_bytes().splitlines())
    at = list(range(1, n + 1)) if lines == "all" else lines
    _crlf(d / f"{name}.jsonl", at)
    with pytest.raises(UserError) as got:
        read_packed_inputs(_jev_config(), *(str(d / f"{k}.jsonl") for k in NAMES))
    path = d / f"{name}.jsonl"
    # the line is still read without its CR: nothing else is wrong, so nothing else is said
    assert got.value.problems == [f"{path}:{no}: CRLF line ending; use LF" for no in at]

    # the records' reader, strict and typed, on the same bytes
    schema = tmp_path / "any.schema.json"
    schema.write_text(json.dumps({"type": "object"}))
    for read in (read_records, read_jsonl_records):
        args = (path, schema, "jsonl") if read is read_records else (path, schema)
        with pytest.raises(UserError) as same:
            read(*args)
        assert same.value.problems == got.value.problems


def test_a_whole_file_of_crlf_lines_lists_fifty_problems_and_counts_the_rest(tmp_path):
    """The examples' 320 lists, labels and predictions written on Windows: 960 problems, the
    first 50 listed by file and line, then how many more (as the records reader lists them)."""
    for name in ("lists", "labels", "predictions"):
        data = (ROOT / "examples" / "jev" / f"{name}.jsonl").read_bytes()
        (tmp_path / f"{name}.jsonl").write_bytes(data.replace(b"\n", b"\r\n"))
    with pytest.raises(UserError) as got:
        read_packed_inputs(_jev_config(), *(str(tmp_path / f"{k}.jsonl") for k in NAMES[:3]), None)
    assert got.value.message == "the score inputs have 960 problem(s)"
    lists = tmp_path / "lists.jsonl"
    assert got.value.problems == [
        *(f"{lists}:{no}: CRLF line ending; use LF" for no in range(1, 51)),
        "… and 910 more",
    ]


@pytest.mark.parametrize("lines", [[1], [2, 3]])
def test_the_s3_calibration_reader_refuses_crlf_at_its_lines(tmp_path, lines):
    """It took CRLF lines (its JSON whitespace held CR); now in the same words, in its own
    ``line N, field -`` form, the line read on without its CR."""
    from prereg.compiler.project import Project
    from prereg.engines.clusterpower.calibration_input import read_calibration
    from prereg.engines.clusterpower.config import plan_config
    from prereg.study import study_context

    cfg = plan_config(study_context(Project(ROOT), "s3-verifier-freeze")[1].config)
    path = tmp_path / "cal.jsonl"
    shutil.copy(ROOT / "examples" / "s3" / "calibration-sample.jsonl", path)
    _crlf(path, lines)
    with pytest.raises(UserError) as got:
        read_calibration(str(path), cfg.input)
    noun = "problem" if len(lines) == 1 else "problems"
    assert got.value.message == f"{path}: calibration input refused ({len(lines)} {noun})"
    assert got.value.problems == [f"line {no}, field -: CRLF line ending; use LF" for no in lines]
