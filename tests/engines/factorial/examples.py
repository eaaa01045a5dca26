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


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def by_id(rows) -> dict:
    return {r["id"]: r for r in rows}
