"""A misspelt study, command or option gets a suggestion; a study without commands says so."""

import shutil

import pytest

from tests.conftest import ROOT, run_prereg


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["d17-multifac"], "did you mean 'd17-multifact'?"),
        (["compil"], "did you mean 'compile'?"),
        (["d17-multifact", "dry-rn"], "did you mean 'dry-run'?"),
        (["d17-multifact", "dry-run", "d17mf-smoke", "--nw", "x"], "did you mean '--now'?"),
    ],
)
def test_suggestions(argv, hint):
    p = run_prereg(*argv)
    assert p.returncode == 2 and hint in p.stderr and "Traceback" not in p.stderr


def test_a_study_without_commands_says_so(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    spec = project / "spec" / "studies" / "answer-position.yaml"
    text = spec.read_text()
    spec.write_text(text[: text.index("commands:\n")])
    assert run_prereg("--project", project, "compile").returncode == 0
    p = run_prereg("--project", project, "answer-position", "score")
    assert p.returncode == 2
    assert "study 'answer-position' declares no commands" in p.stderr
