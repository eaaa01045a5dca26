"""Shell completion: the candidates come from the project's specs; the bash script uses them."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from prereg.completion import candidates, script
from tests.conftest import ROOT


@pytest.mark.parametrize(
    "words, expected",
    [
        (["d17-mul"], ["d17-multifact"]),
        (["com"], ["compile", "completion"]),
        (["d17-multifact", "dry"], ["dry-run", "dry-run-ledger"]),
        (["d17-multifact", "ledger-"], ["ledger-freeze", "ledger-show"]),
        (["d17-multifact", "audit-sweep", "--w"], ["--workers"]),
        (["d17-multifact", "audit-sweep", "--q"], ["--quiet"]),
        (["s3-verifier-freeze", "validate", "--r"], ["--root"]),
        (["check", "--j"], ["--json"]),
        (["completion", ""], ["bash", "zsh"]),
        (["--pro"], ["--project"]),
        (["d17-multifact", "prepare", "d17mf-x", ""], []),  # a folder: left to the shell
    ],
)
def test_candidates(words, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert candidates(words) == expected


def test_every_study_and_core_command_is_offered(monkeypatch):
    monkeypatch.chdir(ROOT)
    got = candidates([""])
    for word in ("check", "tables", "d17-multifact", "jev-multicorrect", "s3-verifier-freeze"):
        assert word in got


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_bash_script_completes_through_prereg(tmp_path):
    shim = tmp_path / "prereg"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prereg.cli "$@"\n')
    shim.chmod(0o755)
    run = (
        f'export PATH="{tmp_path}:$PATH"; eval "$(prereg completion bash)";'
        " COMP_WORDS=(prereg s3-verifier-freeze v); COMP_CWORD=2; _prereg_complete;"
        ' printf "%s\\n" "${COMPREPLY[@]}"'
    )
    p = subprocess.run(["bash", "-c", run], cwd=ROOT, capture_output=True, text=True)
    assert p.stdout.split() == ["validate"], p.stderr
    assert "complete -o default -F _prereg_complete prereg" in script("bash")
    assert script("zsh").startswith("# prereg completion for zsh")
