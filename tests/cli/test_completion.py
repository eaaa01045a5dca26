"""Shell completion: shtab's scripts from prereg's own parsers, the project's studies and their
commands included; the bash script is run in bash to see what it completes."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("shtab", reason="shtab (a dependency of prereg) is not installed")

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _script(shell: str, cwd=ROOT) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "prereg.cli", "completion", shell],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


# what bash offers for the words typed so far (the last one being completed), as a user's
# Tab would: COMP_WORDS and COMP_CWORD set, then the function `complete` names
COMPLETE = r"""
eval "$(cat "$1")"
shift
COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
fn=$(complete -p prereg | sed -E 's/.* -F ([^ ]+) .*/\1/')
"$fn" prereg "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"""


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("completion") / "prereg.bash"
    path.write_text(_script("bash"))
    return path


@needs_bash
@pytest.mark.parametrize(
    "words, expected",
    [
        (["d17-mul"], ["d17-multifact"]),
        (["com"], ["compile", "completion"]),
        (["d17-multifact", "dry"], ["dry-run", "dry-run-ledger"]),
        (["d17-multifact", "ledger-"], ["ledger-freeze", "ledger-show"]),
        (["d17-multifact", "audit-sweep", "--w"], ["--workers"]),
        (["d17-multifact", "audit-sweep", "--q"], ["--quiet"]),
        (["s3-verifier-freeze", "v"], ["validate"]),
        (["s3-verifier-freeze", "validate", "--r"], ["--root"]),
        (["check", "--j"], ["--json"]),
        (["completion", ""], ["bash", "fish", "zsh"]),
        (["--pro"], ["--project"]),
    ],
)
def test_the_bash_script_completes_commands_studies_and_options(bash_script, words, expected):
    p = subprocess.run(
        ["bash", "-c", COMPLETE, "complete", str(bash_script), "prereg", *words],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert sorted(w for w in p.stdout.split("\n") if w) == expected, p.stderr


@needs_bash
def test_every_core_command_and_study_is_offered(bash_script):
    p = subprocess.run(
        ["bash", "-c", COMPLETE, "complete", str(bash_script), "prereg", ""],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    got = p.stdout.split()
    for word in (
        "check",
        "tables",
        "seal",
        "d17-multifact",
        "jev-multicorrect",
        "s3-verifier-freeze",
    ):
        assert word in got


def test_zsh_and_fish_scripts_name_the_studies_and_their_commands():
    zsh, fish = _script("zsh"), _script("fish")
    assert zsh.startswith("#compdef prereg")
    for text in (zsh, fish):
        for word in ("d17-multifact", "dry-run", "audit-sweep", "--workers", "power-plan"):
            assert word in text, word


def test_outside_a_project_only_prereg_s_own_commands(tmp_path):
    text = _script("bash", cwd=tmp_path)
    assert "compile" in text and "completion" in text
    assert "d17-multifact" not in text


def test_an_unknown_shell_is_refused(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "prereg.cli", "completion", "tcsh"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "invalid choice: 'tcsh'" in p.stderr
