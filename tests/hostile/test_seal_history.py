"""The seal is tied to git history: deleting spec/studies/<id>.seal.json, changing a registered
value and committing does not get past `prereg check` or any study command, because the last
sealed content is found in the history (git log --all over the seal's path); a seal moved back
to an older version or rewritten is refused the same way; a registered study must be sealed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.compiler import seal as seal_mod
from tests.conftest import ROOT

SPEC = "spec/studies/answer-position.yaml"
SEAL = "spec/studies/answer-position.seal.json"


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(project), *args], capture_output=True, text=True, check=True,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
             "HOME": str(project), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    return done.stdout


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def run(project: Path, *args) -> int:
    return main(["--project", str(project), *map(str, args)])


@pytest.fixture
def sealed(tmp_path) -> Path:
    """A git project with one registered study, compiled, sealed and committed."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = tmp_path / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    edit(project / SPEC, "status: draft", "status: registered")
    assert run(project, "compile") == 0
    assert run(project, "seal", "answer-position") == 0
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "register and seal")
    return project


def _tamper_and_commit(project: Path) -> None:
    from prereg.compiler import build
    from prereg.compiler.project import find_project

    (project / SEAL).unlink()
    edit(project / SPEC, "margin: -0.05", "margin: -0.10")
    assert run(project, "compile") == 2  # compile refuses the change and the deleted seal
    # generated/ written past compile's refusal (another tool, an older prereg), and committed
    found = find_project(project)
    build.write_generated(found, build.compile_project(found))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "quietly")


def test_a_deleted_seal_and_a_registered_change_committed_fail_check(sealed, capsys):
    _tamper_and_commit(sealed)
    commit = git(sealed, "log", "--format=%H", "--diff-filter=A", "--", SEAL).strip()
    capsys.readouterr()
    assert run(sealed, "check") == 1
    out = capsys.readouterr().out
    assert f"{SEAL}: the seal of version 1.0 was deleted (committed in {commit[:12]})" in out
    assert f"{SPEC}:" in out and "at /hypotheses/2/contrasts/0/margin: registered content" in out


def test_a_deleted_seal_and_a_registered_change_make_study_commands_refuse(
    sealed, tmp_path, capsys
):
    _tamper_and_commit(sealed)
    out = tmp_path / "items.jsonl"
    capsys.readouterr()
    assert run(sealed, "answer-position", "items", "--out", out) == 2
    err = capsys.readouterr().err
    assert "is sealed (spec/studies/answer-position.seal.json as committed in" in err, err
    assert "at /hypotheses/2/contrasts/0/margin" in err and "was deleted" in err
    assert not out.exists()


def test_the_same_holds_on_another_branch_and_uncommitted(sealed, capsys):
    git(sealed, "checkout", "-q", "-b", "elsewhere")
    git(sealed, "rm", "-q", SEAL)
    git(sealed, "commit", "-q", "-m", "no seal on this branch")
    git(sealed, "checkout", "-q", "--orphan", "fresh")  # a history without the seal commit
    edit(sealed / SPEC, "margin: -0.05", "margin: -0.10")
    assert not (sealed / SEAL).exists()  # removed on the branch this one started from
    capsys.readouterr()
    assert run(sealed, "compile") == 2  # the seal is still on the other branches (--all)
    assert "at /hypotheses/2/contrasts/0/margin" in capsys.readouterr().err
    assert run(sealed, "check") == 1
    assert "at /hypotheses/2/contrasts/0/margin" in capsys.readouterr().out


def test_an_amendment_after_the_committed_seal_passes(sealed, capsys):
    (sealed / SEAL).unlink()
    edit(sealed / SPEC, "margin: -0.05", "margin: -0.10")
    text = (sealed / SPEC).read_text()
    text = text.replace('version: "1.0"', 'version: "1.1"', 1).replace(
        "status: registered", "status: amended", 1
    )
    text += (
        '\namendments:\n  - {version: "1.1", date: "2026-12-01", rationale: "A wider margin.",'
        " paths: [/hypotheses/2/contrasts/0/margin]}\n"
    )
    (sealed / SPEC).write_text(text)
    capsys.readouterr()
    assert run(sealed, "compile") == 2  # the committed seal's file is gone: restore or seal anew
    assert "the seal of version 1.0 was deleted" in capsys.readouterr().err
    assert run(sealed, "seal", "answer-position") == 0  # the amended version, sealed
    assert run(sealed, "compile") == 0
    capsys.readouterr()
    assert run(sealed, "check") == 0, capsys.readouterr().out


def test_a_seal_moved_back_or_rewritten_is_refused(sealed, capsys):
    # rewritten: the same version with other content (the seal made again after an edit)
    (sealed / SEAL).unlink()
    edit(sealed / SPEC, "margin: -0.05", "margin: -0.10")
    assert run(sealed, "compile") == 2
    assert run(sealed, "seal", "answer-position") == 0
    capsys.readouterr()
    assert run(sealed, "compile") == 2  # held to the committed seal, as check is
    assert "never rewritten" in capsys.readouterr().err
    assert run(sealed, "check") == 1
    out = capsys.readouterr().out
    assert f"{SEAL}: at /digest: version 1.0 was sealed with" in out and "never rewritten" in out
    assert "at /hypotheses/2/contrasts/0/margin" in out  # held to the committed seal


def test_a_registered_study_that_was_never_sealed_fails_check(tmp_path, capsys):
    project = tmp_path / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    edit(project / SPEC, "status: draft", "status: registered")
    assert run(project, "compile") == 0
    capsys.readouterr()
    assert run(project, "check") == 1
    out = capsys.readouterr().out
    assert "at /status: the study is registered but was never sealed" in out


def test_git_is_asked_without_a_shell_and_with_a_bound(monkeypatch, tmp_path):
    calls = []

    def fake_run(argv, **kw):
        calls.append((argv, kw))
        raise subprocess.TimeoutExpired(argv, kw.get("timeout"))

    monkeypatch.setattr(subprocess, "run", fake_run)
    assert seal_mod.committed_seals(tmp_path, "x") == []  # a hung git is no history, no hang
    ((argv, kw),) = calls
    assert isinstance(argv, list) and argv[1:3] == ["-C", str(tmp_path)]
    assert kw["timeout"] == seal_mod.GIT_SECONDS and not kw.get("shell")
