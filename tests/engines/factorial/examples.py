"""Helpers for the example studies' tests: a project holding one example, the CLI, JSONL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from prereg.cli import main
from tests.conftest import ROOT


def example_project(root: Path, name: str) -> Path:
    shutil.copytree(ROOT / "examples" / name / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    return root


def run(project: Path, study: str, *args) -> int:
    return main(["--project", str(project), study, *map(str, args)])


def scored(project: Path, study: str, obs: Path, tag: str, *, items: bool = True) -> dict:
    """SCORE.json of ``obs`` (with the project's items.jsonl unless ``items`` is False)."""
    out = project / f"{tag}.SCORE.json"
    manifest = ["--items", project / "items.jsonl"] if items else []
    assert run(project, study, "score", *manifest, "--observations", obs, "--out", out) == 0
    return json.loads(out.read_text())


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def by_id(rows) -> dict:
    return {r["id"]: r for r in rows}
