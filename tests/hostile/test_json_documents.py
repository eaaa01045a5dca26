"""The JSON documents a user hands a command outside the record readers: a seal beside its
spec, a statement to sign, an envelope to verify, a DIAGNOSE.json in the project. Each is read
by the strict reader (prereg.records.loads_strict): nesting too deep for Python's parser, NaN
and a repeated key are refused naming the file, exit 2 (a seal: a failed check), never a
RecursionError traceback (each was one through plain json.loads), and nothing is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from tests.cli.test_sign_statement import STATEMENT, write_key
from tests.conftest import ROOT

DEEP = "[" * 100_000 + "]" * 100_000
BAD = {
    "deep": (DEEP, "nesting too deep to parse"),
    "nan": ('{"a": NaN}', "NaN is not a JSON value"),
    "repeated key": ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    # more digits than Python converts: its own message named sys.set_int_max_str_digits()
    "huge integer": (
        '{"a": 1' + "0" * 5000 + "}",
        "at /a: integer 1"
        + "0" * 23
        + "… is outside ±(2^53 − 1), which JSON does not carry exactly",
    ),
}


def _run(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.out + cap.err
    return code, cap.out + cap.err  # check lists its problems on stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("p")
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    return root


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_seal_that_is_not_strict_json_fails_check_naming_it(project, capsys, kind):
    text, words = BAD[kind]
    seal = project / "spec" / "studies" / "answer-position.seal.json"
    seal.write_text(text)
    try:
        code, err = _run(capsys, "--project", project, "check")
    finally:
        seal.unlink()
    assert code == 1, err
    assert f"spec/studies/answer-position.seal.json: not a readable seal: {words}" in err


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_diagnosis_that_is_not_strict_json_is_not_read_as_one(project, capsys, kind):
    text, words = BAD[kind]
    doc = project / "DIAGNOSE.json"
    doc.write_text(text)
    try:
        code, err = _run(capsys, "--project", project, "check", "--diagnosis", doc)
    finally:
        doc.unlink()
    # the reason, not the name of Python's exception (it read "(StrictJSONError)")
    assert f"DIAGNOSE.json: not a diagnose document: not valid JSON ({words})" in err, err


def test_a_diagnosis_that_is_not_a_regular_file_is_refused_or_passed_over(project, capsys):
    """Named, a folder is refused as one (it read "no such file"); found in the project, a FIFO
    named like a diagnosis is passed over (check blocked on reading it, forever)."""
    import os

    folder = project / "d-diagnose.json"
    folder.mkdir()
    try:
        code, err = _run(capsys, "--project", project, "check", "--diagnosis", folder)
    finally:
        folder.rmdir()
    assert code == 2
    assert (
        "d-diagnose.json: not a diagnose document: cannot read: a folder, not a regular file" in err
    )
    fifo = project / "f-diagnose.json"
    os.mkfifo(fifo)
    try:
        code, err = _run(capsys, "--project", project, "check")
    finally:
        fifo.unlink()
    assert code == 0, err


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_statement_that_is_not_strict_json_is_not_signed(tmp_path, capsys, kind):
    text, words = BAD[kind]
    statement = tmp_path / "m.intoto.json"
    statement.write_text(text)
    private, _, _ = write_key(tmp_path, "k")
    code, err = _run(capsys, "sign-statement", statement, "--key", private)
    assert code == 2 and f"{statement}: not an in-toto Statement v1: not JSON ({words})" in err
    assert not (tmp_path / "m.intoto.dsse.json").exists()


@pytest.mark.parametrize("kind", sorted(BAD))
def test_an_envelope_that_is_not_strict_json_is_refused(tmp_path, capsys, kind):
    text, words = BAD[kind]
    (tmp_path / "m.intoto.json").write_bytes(STATEMENT)
    envelope = tmp_path / "m.intoto.dsse.json"
    envelope.write_text(text)
    _, public, _ = write_key(tmp_path, "k")
    code, err = _run(capsys, "verify-statement", envelope, "--public-key", public)
    assert code == 2 and f"{envelope}: the envelope is not JSON ({words})" in err


def test_a_record_with_more_digits_than_python_converts_is_refused_at_its_line(tmp_path):
    from prereg.errors import UserError
    from prereg.records import read_jsonl_columns

    schema = tmp_path / "obs.schema.json"
    schema.write_text('{"type": "object", "properties": {"n": {"type": "integer"}}}')
    path = tmp_path / "obs.jsonl"
    path.write_text('{"n": 1}\n{"n": ' + "9" * 5000 + "}\n")
    with pytest.raises(UserError) as got:
        read_jsonl_columns(path, schema)
    (problem,) = got.value.problems
    assert problem.startswith(f"{path}:2: at /n: integer 999") and "set_int_max_str_digits" not in problem  # fmt: skip
    assert "is outside the range of a 64-bit integer" in problem  # as any integer out of range
