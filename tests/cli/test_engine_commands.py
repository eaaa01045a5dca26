"""Engine-owned commands, through the CLI: the factorial engine offers its standard commands
without a `commands:` block, a spec overrides (same id), renames (`renames`) or adds one, and
a command the engine cannot run is refused at compile with the line of the spec it is on.

The expected lines are found in the spec text by the test itself (the line the entry is
written on), never taken from prereg's output."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from prereg.cli import main
from tests.conftest import ROOT, run_main

STANDARD = ["items", "simulate", "score", "diagnose"]


def _help_commands(project: Path, study: str) -> dict[str, str]:
    """{command: summary} as `prereg <study> --help` lists them (argparse's layout)."""
    p = run_main("--project", project, study, "--help", env={"COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    block = p.stdout.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    found: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        m = re.match(r"^    (\S+)(?:\s+(.*))?$", line)
        if m:  # a long name has its summary on the next line
            name = m.group(1)
            found[name] = (m.group(2) or "").strip()
        elif name is not None:
            found[name] = (found[name] + " " + line.strip()).strip()
    return found


def _options(project: Path, study: str, command: str) -> list[str]:
    p = run_main("--project", project, study, command, "--help", env={"COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    return re.findall(r"^  (--[a-z-]+)", p.stdout.split("options:", 1)[1], re.M)


def _ok(*argv) -> None:
    """A step that must succeed, run by the CLI in this process (the help texts and the
    refusals are read from a subprocess, as a user sees them)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main([*map(str, argv)])
    assert code == 0, err.getvalue()


@pytest.fixture
def starter(tmp_path, monkeypatch) -> Path:
    project = tmp_path / "p"
    project.mkdir()
    monkeypatch.chdir(project)
    _ok("init", "My-Study")
    return project


def _spec(project: Path) -> Path:
    return project / "spec" / "studies" / "My-Study.yaml"


def _append(project: Path, text: str) -> None:
    spec = _spec(project)
    spec.write_text(spec.read_text() + text)


def _line_of(project: Path, needle: str) -> int:
    lines = _spec(project).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def test_the_starter_declares_no_commands_and_offers_the_engines_four(starter):
    data = yaml.safe_load(_spec(starter).read_text())
    assert "commands" not in data and "splits" not in data
    _ok("--project", starter, "compile")
    assert list(_help_commands(starter, "My-Study")) == STANDARD
    assert _options(starter, "My-Study", "score") == [
        "--json",
        "--quiet",
        "--items",
        "--observations",
        "--out",
        "--workers",
        "--scheduler",
        "--partition-bytes",
    ]
    prereg_md = (starter / "generated" / "my_study" / "PREREG.md").read_text()
    appendix = prereg_md.split("## Appendix B: operator commands", 1)[1]
    for command in STANDARD:
        assert f"`prereg My-Study {command}`" in appendix


def test_an_override_keeps_what_it_does_not_write(starter):
    _append(starter, "commands:\n  - id: score\n    summary: score the pilot's answers\n")
    _ok("--project", starter, "compile")
    listed = _help_commands(starter, "My-Study")
    assert list(listed) == STANDARD  # same place
    assert listed["score"] == "score the pilot's answers"
    assert _options(starter, "My-Study", "score")[2:] == [
        "--items", "--observations", "--out", "--workers", "--scheduler", "--partition-bytes"
    ]  # fmt: skip


def test_a_rename_replaces_the_name_and_runs_the_same_handler(starter, tmp_path):
    _append(starter, "commands:\n  - {id: run-score, renames: score}\n")
    _ok("--project", starter, "compile")
    assert list(_help_commands(starter, "My-Study")) == [
        "items",
        "simulate",
        "run-score",
        "diagnose",
    ]
    out = tmp_path / "out"
    steps = [
        ["items", "--out", out / "items.jsonl"],
        ["simulate", "--items", out / "items.jsonl", "--scenario", "effect", "--seed", "4"]
        + ["--out", out / "obs.jsonl"],
        ["run-score", "--items", out / "items.jsonl", "--observations", out / "obs.jsonl"]
        + ["--out", out / "SCORE.json"],
    ]
    for argv in steps:
        _ok("--project", starter, "My-Study", *argv)
    assert json.loads((out / "SCORE.json").read_text())["study"] == "My-Study"
    p = run_main("--project", starter, "My-Study", "score", "--help")
    assert p.returncode == 2  # the old name is no longer offered


def test_an_added_command_comes_after_the_engines(starter):
    _append(
        starter,
        "commands:\n  - id: pilot-items\n    handler: items\n    summary: the pilot's manifest\n"
        "    arguments:\n      - {name: --out, kind: option, type: path, required: true,"
        " help: where}\n",
    )
    _ok("--project", starter, "compile")
    assert list(_help_commands(starter, "My-Study")) == [*STANDARD, "pilot-items"]


@pytest.mark.parametrize(
    ("entry", "needle", "pointer", "rule"),
    [
        (
            "  - id: export-csv\n    handler: export_csv\n    summary: write a CSV\n",
            "handler: export_csv",
            "/commands/0/handler",
            "command 'export-csv': the factorial engine has no handler 'export_csv'"
            " (handlers: diagnose, items, score, simulate)",
        ),
        (
            "  - id: export-csv\n    summary: write a CSV\n",
            "id: export-csv",
            "/commands/0",
            "command 'export-csv' is not one the factorial engine provides (its commands:"
            " items, simulate, score, diagnose): an added command names the handler that runs it",
        ),
        (
            "  - id: check-it\n    renames: validate\n",
            "renames: validate",
            "/commands/0/renames",
            "command 'check-it' renames 'validate', which the factorial engine does not provide"
            " for this study (its commands: items, simulate, score, diagnose)",
        ),
        (
            "  - {id: items, renames: score}\n",
            "renames: score",
            "/commands/0/id",
            "command 'items' renames 'score' to the name of another of the engine's commands",
        ),
        (
            "  - id: score\n    handler: scoring\n",
            "handler: scoring",
            "/commands/0/handler",
            "command 'score': the factorial engine has no handler 'scoring'",
        ),
    ],
)
def test_a_command_the_engine_cannot_run_is_refused_at_its_line(
    starter, entry, needle, pointer, rule
):
    _append(starter, "commands:\n" + entry)
    line = _line_of(starter, needle)
    p = run_main("--project", starter, "compile")
    assert p.returncode == 2
    assert f"spec/studies/My-Study.yaml:{line}: at {pointer}: {rule}" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert not (starter / "generated" / "my_study").exists()  # nothing written


def test_a_study_without_a_manifest_gets_no_items_command(tmp_path):
    # calibration-cells registers no item contract: rows come from the observations
    project = tmp_path / "p"
    shutil.copytree(ROOT / "examples" / "calibration-cells" / "spec", project / "spec")
    assert "commands" not in yaml.safe_load(
        (project / "spec" / "studies" / "calibration-cells.yaml").read_text()
    )
    _ok("--project", project, "compile")
    assert list(_help_commands(project, "calibration-cells")) == ["simulate", "score", "diagnose"]
    assert "--items" not in _options(project, "calibration-cells", "score")


@pytest.mark.parametrize("study", ["d17-multifact", "s3-verifier-freeze", "jev-multicorrect"])
def test_the_registered_studies_keep_exactly_the_commands_they_declare(study):
    """The sealed studies write every command out: what takes effect is what they declare,
    in their order, field for field (read from the spec with PyYAML); the only other command
    is the engine's standard ``diagnose`` (s3 and jev, whose sealed specs declare none)."""
    declared = yaml.safe_load((ROOT / "spec" / "studies" / f"{study}.yaml").read_text())["commands"]
    text = (ROOT / "generated" / study.replace("-", "_") / "__init__.py").read_text()
    assignment = next(
        node
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMMANDS"
    )
    effective = ast.literal_eval(assignment.value)
    standard = [c for c in effective if c["id"] not in {d["id"] for d in declared}]
    assert [c["id"] for c in standard] == ([] if study == "d17-multifact" else ["diagnose"])
    effective = [c for c in effective if c not in standard]
    assert [c["id"] for c in effective] == [c["id"] for c in declared]
    for got, want in zip(effective, declared, strict=True):
        assert got["handler"] == want["handler"]
        assert got["summary"] == want["summary"]
        assert got["description"] == want.get("description")
        assert [a["name"] for a in got["arguments"]] == [a["name"] for a in want["arguments"]]
        for a, b in zip(got["arguments"], want["arguments"], strict=True):
            assert (a["kind"], a["type"], a["help"]) == (b["kind"], b.get("type"), b["help"])
            assert a["required"] == b.get("required", b["kind"] == "positional")
