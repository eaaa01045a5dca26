"""With --json, stdout holds exactly one JSON object whatever happens: usage errors and
refusals before the command could answer included (it printed nothing)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from prereg.cli import main
from tests.conftest import ROOT


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # pragma: no cover - a failure of the rule under test
            code = f"SystemExit({exc.code})"
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["d17-multifact", "dry-run", "--json"], "the following arguments are required: SEED"),
        (["d17-multifact", "nosuch", "--json"], "invalid choice: 'nosuch'"),
        (["d17-multifact", "dry-run", "x", "--json", "--now", "soon"], "--now"),
        (["check", "--json", "--bogus"], "unrecognized arguments: --bogus"),
        (["tables", "/nonexistent/S.json", "--csv", "x", "--json"], "/nonexistent/S.json: missing"),
        (["d17-multifact", "ledger-show", "/nonexistent", "--json"], "no ledger there"),
        (["d17-multifact", "prepare", "bad seed!", "/nonexistent/o", "--json"], ""),
    ],
)
def test_a_refusal_under_json_is_one_json_object(argv, needle):
    code, out, err = _run("--project", ROOT, *argv)
    assert code == 2, (code, err)
    doc = json.loads(out)  # exactly one JSON document on stdout
    assert doc["exitCode"] == 2 and needle in doc["error"], doc
    assert "Traceback" not in err


def test_help_under_json_is_still_help():
    with pytest.raises(SystemExit) as e:
        main(["--project", str(ROOT), "d17-multifact", "dry-run", "--help", "--json"])
    assert e.value.code == 0


def test_a_command_that_answers_is_not_answered_twice():
    code, out, _ = _run("--project", ROOT, "d17-multifact", "dry-run", "bad", "--json")
    doc = json.loads(out)  # a second object would make this fail to parse
    assert doc["seed"] == "bad" and doc["exitCode"] == code
