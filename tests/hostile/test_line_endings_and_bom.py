"""Lone CR line endings are named as what they are, and a UTF-8 byte-order mark is refused
alike by every reader of user files but CSV (JSONL, JSON documents, YAML specs), at line 1 and
in the same words; a CSV file's leading BOM (every spreadsheet "CSV UTF-8" export writes one) is
skipped, and the file scores as without it.

Lone CR: a file written with CR alone between lines (classic Mac OS, some exports) has no LF,
so its reader saw one line ending in CR and called it a "CRLF line ending", then added the
json module's "Extra data". A CR that is not the CR of a CRLF ending is now "a carriage
return (CR) not followed by LF", at its line and column.

BOM: JSONL readers refused it ("starts with a byte-order mark; save it as UTF-8 without
BOM"), JSON documents (a demo plan, a SCORE.json to tabulate) said the json module's
"Expecting value", and YAML specs took it silently. The project refuses it in all of them
(docs/vocabulary.md, "Files"): an invisible leading U+FEFF is, for other tools, part of the
first key. A CSV file is the exception, since a spreadsheet's UTF-8 export cannot be told to
leave it out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.records import read_jsonl_records, read_records

ROOT = Path(__file__).resolve().parents[2]
BOM = b"\xef\xbb\xbf"
LINES = (
    b'{"rowId":"a","correct":true}\n{"rowId":"b","correct":false}\n{"rowId":"c","correct":true}\n'
)


@pytest.fixture
def schema(tmp_path):
    path = tmp_path / "any.schema.json"
    path.write_text(json.dumps({"type": "object"}))
    return path


def _refusal(path, schema):
    """The problems of the strict and the typed record reader, which must agree."""
    got = []
    for read in (read_records, read_jsonl_records):
        args = (path, schema, "jsonl") if read is read_records else (path, schema)
        with pytest.raises(UserError) as exc:
            read(*args)
        got.append(exc.value.problems or [exc.value.message])
    assert got[0] == got[1]
    return got[0]


LONE = "carriage return (CR) not followed by LF"


@pytest.mark.parametrize(
    "raw, expected",
    [
        # every line ended by CR alone: one line, its first CR at column 29
        (LINES.replace(b"\n", b"\r"), [(1, 29)]),
        # one CR between two records on the first line
        (LINES.replace(b"\n", b"\r", 1), [(1, 29)]),
        # a single record ended by CR at the end of the file: not CRLF, there is no LF
        (b'{"rowId":"a","correct":true}\r', [(1, 29)]),
        # the last line unterminated and ending in CR, after LF lines
        (LINES + b'{"rowId":"d","correct":true}\r', [(4, 29)]),
    ],
)
def test_a_lone_cr_is_named_as_one_not_as_crlf(tmp_path, schema, raw, expected):
    path = tmp_path / "obs.jsonl"
    path.write_bytes(raw)
    problems = _refusal(path, schema)
    assert problems == [
        f"{path}:{no}: {LONE} at column {col}: lines end with LF alone (not CR, as classic"
        " Mac OS ended them)"
        for no, col in expected
    ]
    assert not any("CRLF" in p or "Extra data" in p for p in problems)


def test_crlf_is_still_called_crlf(tmp_path, schema):
    path = tmp_path / "obs.jsonl"
    path.write_bytes(LINES.replace(b"\n", b"\r\n"))
    assert _refusal(path, schema) == [f"{path}:{no}: CRLF line ending; use LF" for no in (1, 2, 3)]


def test_a_cr_inside_a_line_is_refused_even_where_json_takes_it_as_whitespace(tmp_path, schema):
    """JSON reads a CR between tokens as whitespace; a JSONL line holds none (it is the sign
    of lone-CR line endings, and no reader of the project would read the line as the next
    tool does)."""
    path = tmp_path / "obs.jsonl"
    path.write_bytes(b'{"rowId":\r"a"}\n')
    assert _refusal(path, schema) == [
        f"{path}:1: {LONE} at column 10: lines end with LF alone (not CR, as classic Mac OS"
        " ended them)"
    ]


def test_the_jev_and_s3_readers_name_a_lone_cr_alike(tmp_path):
    from prereg.compiler.project import Project
    from prereg.engines.clusterpower.calibration_input import read_calibration
    from prereg.engines.clusterpower.config import plan_config
    from prereg.engines.multicorrect import engine_config
    from prereg.engines.multicorrect.reader import read_packed_inputs
    from prereg.study import study_context

    jev = tmp_path / "jev"
    shutil.copytree(ROOT / "tests" / "fixtures" / "jev" / "small", jev)
    labels = jev / "labels.jsonl"
    labels.write_bytes(labels.read_bytes().replace(b"\n", b"\r"))
    cfg = engine_config(study_context(Project(ROOT), "jev-multicorrect")[1].config)
    names = ("lists", "labels", "predictions", "binary")
    with pytest.raises(UserError) as got:
        read_packed_inputs(cfg, *(str(jev / f"{k}.jsonl") for k in names))
    # then each request has no row of labels: that file had none to give
    mine = [p for p in got.value.problems if p.startswith(f"{labels}:1: ")]
    assert len(mine) == 1 and mine[0].startswith(f"{labels}:1: {LONE} at column ")
    assert not any("CRLF" in p or "Extra data" in p for p in got.value.problems)

    cal = tmp_path / "cal.jsonl"
    cal.write_bytes(
        (ROOT / "examples" / "s3" / "calibration-sample.jsonl").read_bytes().replace(b"\n", b"\r")
    )
    s3 = plan_config(study_context(Project(ROOT), "s3-verifier-freeze")[1].config)
    with pytest.raises(UserError) as got:
        read_calibration(str(cal), s3.input)
    assert len(got.value.problems) == 1
    assert got.value.problems[0].startswith(f"line 1, field -: {LONE} at column ")


# -- the byte-order mark ----------------------------------------------------------------------

BOM_WORDS = "starts with a byte-order mark (U+FEFF); save it as UTF-8 without BOM"


@pytest.fixture
def study(tmp_path):
    """A project of the `prereg init` starter, compiled, with its items and observations."""
    root = tmp_path / "p"
    root.mkdir()
    assert main(["--project", str(root), "init", "my-study"]) == 0
    assert main(["--project", str(root), "compile"]) == 0
    run = ["--project", str(root), "my-study"]
    assert main([*run, "items", "--out", str(root / "items.jsonl")]) == 0
    obs = root / "obs.jsonl"
    args = ["simulate", "--items", str(root / "items.jsonl"), "--scenario", "effect"]
    assert main([*run, *args, "--seed", "1", "--out", str(obs)]) == 0
    return root


def _score(root, observations, out):
    return main(
        [
            "--project",
            str(root),
            "my-study",
            "score",
            "--items",
            str(root / "items.jsonl"),
            "--observations",
            str(observations),
            "--out",
            str(out),
        ]
    )


def _csv(root) -> bytes:
    rows = [json.loads(line) for line in (root / "obs.jsonl").read_text().splitlines()]
    text = "rowId,correct,attempt\n" + "".join(
        f"{r['rowId']},{'' if r['correct'] is None else str(r['correct']).lower()},{r['attempt']}\n"
        for r in rows
    )
    return text.encode()


def test_csv_without_bom_is_scored(study, tmp_path):
    (tmp_path / "obs.csv").write_bytes(_csv(study))
    assert _score(study, tmp_path / "obs.csv", tmp_path / "S.json") == 0


def test_a_csv_file_with_a_leading_bom_scores_as_without_it(study, tmp_path):
    (tmp_path / "obs.csv").write_bytes(_csv(study))
    (tmp_path / "bom.csv").write_bytes(BOM + _csv(study))
    assert _score(study, tmp_path / "obs.csv", tmp_path / "S.json") == 0
    assert _score(study, tmp_path / "bom.csv", tmp_path / "B.json") == 0
    plain, bom = (json.loads((tmp_path / f).read_text()) for f in ("S.json", "B.json"))
    for key in ("verdicts", "cells", "contrasts", "estimates", "rows"):
        assert plain[key] == bom[key], key
    # the digest is of the file's bytes, the BOM included
    assert plain["inputs"] != bom["inputs"]


@pytest.mark.parametrize("kind", ["jsonl"])
def test_observations_with_a_bom_are_refused_at_line_1_in_one_wording(
    study, tmp_path, capsys, kind
):
    data = (study / "obs.jsonl").read_bytes()
    path = tmp_path / f"obs.{kind}"
    path.write_bytes(BOM + data)
    capsys.readouterr()
    assert _score(study, path, tmp_path / "S.json") == 2
    err = capsys.readouterr().err
    assert f"error: {path}:1: {BOM_WORDS}" in err, err
    assert "Traceback" not in err and not list(tmp_path.glob("S.*"))


def test_a_spec_with_a_bom_is_refused_by_compile(study, capsys):
    spec = study / "spec" / "studies" / "my-study.yaml"
    spec.write_bytes(BOM + spec.read_bytes())
    capsys.readouterr()
    assert main(["--project", str(study), "compile"]) != 0
    err = capsys.readouterr().err
    assert f"{spec.relative_to(study)}:1: {BOM_WORDS}" in err or f"{spec}:1: {BOM_WORDS}" in err, (
        err
    )


@pytest.mark.parametrize(
    "args",
    [
        lambda d: ["demo", "--plan", str(d / "doc.json"), "--out", str(d / "out")],
        lambda d: ["tables", str(d / "doc.json"), "--csv", str(d / "out")],
    ],
    ids=["demo-plan", "tables-score"],
)
def test_a_json_document_with_a_bom_is_refused_in_the_same_words(tmp_path, capsys, args):
    doc = tmp_path / "doc.json"
    doc.write_bytes(BOM + b'{"steps": []}')
    capsys.readouterr()
    assert main(args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert f"error: {doc}:1: {BOM_WORDS}" in err, err
    assert "Expecting value" not in err and not (tmp_path / "out").exists()


def test_a_bom_inside_a_jsonl_file_is_named_at_its_line(tmp_path, schema):
    """A second file appended to a first (each with its own BOM): the json module's words
    ("Unexpected UTF-8 BOM (decode using utf-8-sig)") are replaced by the project's."""
    path = tmp_path / "obs.jsonl"
    path.write_bytes(LINES + BOM + LINES)
    problems = _refusal(path, schema)
    assert problems == [f"{path}:4: not valid JSON: {BOM_WORDS}"]


# -- Unicode line separators in a spec --------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, column, code",
    [
        # in a quoted title: YAML folded NEL into a space, silently ("My study")
        ('id: x\ntitle: "My\x85study"\n', 2, 11, "0085"),
        # U+2028 kept in the value, but every line after it was numbered one too far
        ('id: x\ntitle: "My\u2028study"\nversion: "1"\n', 2, 11, "2028"),
        ("id: x\ntitle: My\u2029study\n", 2, 10, "2029"),
    ],
)
def test_a_spec_with_a_unicode_line_break_is_refused_at_its_line(
    tmp_path, text, line, column, code
):
    """YAML reads U+0085, U+2028 and U+2029 as line breaks; an editor, a diff and every
    message of the project count lines by LF. Such a spec is refused at the character."""
    from prereg.compiler.load import load_yaml_text

    with pytest.raises(UserError) as got:
        load_yaml_text(text, tmp_path / "s.yaml")
    assert str(got.value) == (
        f"{tmp_path / 's.yaml'}:{line}: character U+{code} at column {column} is a line break"
        " to YAML but not to an editor or a diff; not allowed in a spec (lines end with LF)"
    )
