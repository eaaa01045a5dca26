"""An output named with a trailing ``/`` names a folder, and an empty path names nothing: each
command refuses them before any work and writes nothing. Commands that took the name through
``Path`` (which drops the ``/``) wrote a file named after the folder; an empty ``--out`` was
the current folder (a ValueError traceback from score and diagnose)."""

from __future__ import annotations

import pytest

from prereg.cli import main
from tests.conftest import ROOT
from tests.diagnose.helpers import AP, compile_example

MISSING = "/nonexistent/in.jsonl"
D17 = ["d17-multifact"]
COMMANDS = {
    "factorial score": [AP, "score", "--items", MISSING, "--observations", MISSING, "--out"],
    "factorial diagnose": [AP, "diagnose", "--simulations", "2", "--seed", "1", "--out"],
    "jev diagnose": ["jev-multicorrect", "diagnose", "--simulations", "2", "--seed", "1", "--out"],
    "s3 diagnose": [
        "s3-verifier-freeze", "diagnose", MISSING, "--eligible-task-count", "500",
        "--eligible-repository-count", "12", "--eligible-pass-items", "210",
        "--eligible-fail-items", "430", "--simulations", "2", "--seed", "1", "--out",
    ],
    "d17 diagnose": [*D17, "diagnose", "--simulations", "2", "--seed", "1", "--out"],
    "d17 simulate": [*D17, "simulate", "/nonexistent", "--scenario", "x", "--seed", "1", "--out"],
    "d17 calibrator-fit": [*D17, "calibrator-fit", MISSING, MISSING, "--effective-at",
                           "2026-01-01T00:00:00Z", "--out"],
    "d17 score": [*D17, "score", "--config", MISSING, "--out"],
    "d17 approval-template": [*D17, "approval-template", "/nonexistent"],
}  # fmt: skip


@pytest.fixture(scope="module")
def ap_project(tmp_path_factory):
    return compile_example(tmp_path_factory.mktemp("ap"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_ending_in_a_slash_is_refused_as_a_folder(command, ap_project, tmp_path, capsys):
    argv = COMMANDS[command]
    project = ap_project if argv[0] == AP else ROOT
    out = f"{tmp_path}/folder/"
    code = main(["--project", str(project), *argv, out])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err == f"error: {out}: is a folder; name the file to create\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "jev-multicorrect", "--format", "osf", "--out", ""],
        ["tables", "SCORE.json", "--csv", ""],
        ["jev-multicorrect", "diagnostic", "--out", ""],
        ["d17-multifact", "score", "--config", MISSING, "--out", ""],
    ],
)
def test_an_empty_path_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(["--project", str(ROOT), *argv])
    assert done.value.code == 2
    assert capsys.readouterr().err.endswith(": an empty path; name a file or folder\n")
