"""``demo --force`` empties an earlier run's output folder, never a user's: ``--out .`` in a
project (or a folder above it, the current folder's, the home folder) emptied it, spec/ and
all; such a folder is refused and left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prereg.cli import main

STEP = {"title": "items", "study": "my-study", "args": ["items", "--out", "{out}/items.jsonl"]}


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize(
    "where, why",
    [
        ("project", "it holds a prereg project (spec/studies/)"),
        ("above", "it is the project or a folder above it"),
        ("cwd", "it is the current folder or a folder above it"),
    ],
)
def test_force_never_empties_a_project_or_a_folder_above_it(
    tmp_path, monkeypatch, capsys, where, why
):
    pytest.importorskip("matplotlib")
    top = tmp_path / "top"
    project = top / "p"
    project.mkdir(parents=True)
    assert main(["--project", str(project), "init", "my-study"]) == 0
    plan = top / "plan.json"
    plan.write_text(json.dumps({"steps": [STEP]}), encoding="utf-8")
    cwd = top / "here"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("mine")
    monkeypatch.chdir(cwd)
    out = {"project": project, "above": top, "cwd": cwd}[where]
    before = _tree(top)
    capsys.readouterr()
    code = main(
        ["--project", str(project), "demo", "--plan", str(plan), "--out", str(out), "--force"]
    )
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: {out}: {why}; --force empties only an earlier demo run's folder\n"
    )
    assert _tree(top) == before
