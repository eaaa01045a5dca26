"""`--json` summaries of the CLI, progress on stderr (a bar on a terminal; nothing in a pipe
or a file, with --quiet or with --json), and the exit-code table."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys

import pytest

from prereg import exits
from prereg.console import Console, Progress
from tests.conftest import ROOT, run_main, run_prereg


def _json(p) -> dict:
    assert p.stdout.count("\n{") == 0, "one JSON object, nothing else on stdout"
    doc = json.loads(p.stdout)
    assert doc["exitCode"] == p.returncode
    return doc


def test_check_json():
    p = run_main("check", "--json")
    doc = _json(p)
    assert p.returncode == 0 and doc["command"] == "check" and doc["ok"] is True
    assert doc["files"] > 0 and doc["differences"] == [] and doc["sealProblems"] == []
    assert "d17-multifact" in doc["studies"]


def test_dry_run_json_gives_the_cells_budget_and_window():
    text = run_main("d17-multifact", "dry-run", "d17mf-public-demo")
    p = run_main(
        "d17-multifact", "dry-run", "d17mf-public-demo", "--now", "2026-10-20T00:00:00Z", "--json"
    )
    doc = _json(p)
    assert (doc["study"], doc["command"], doc["seed"]) == (
        "d17-multifact",
        "dry-run",
        "d17mf-public-demo",
    )
    assert doc["rows"]["all"] == sum(c["rows"] for c in doc["cells"])
    assert doc["rows"]["all"] == sum(doc["rows"]["bySplit"].values())
    # the same figures the text prints
    assert f"all {doc['rows']['all']:,} rows" in text.stdout
    assert f"= {doc['budget']['attempts']:,}" in text.stdout
    assert doc["calibration"]["sessionMayStart"] is True
    assert set(doc["budget"]["headroom"]) == {"calls", "tokens", "usd", "sharedUsd"}


def test_validate_json_reports_problems_and_errors(tmp_path):
    bad = tmp_path / "manifest.json"
    bad.write_text("{}", encoding="utf-8")
    p = run_main("s3-verifier-freeze", "validate", str(bad), "--json")
    doc = _json(p)
    assert p.returncode == exits.FAILED and doc["holds"] is False and doc["problems"]
    missing = run_main("s3-verifier-freeze", "validate", str(tmp_path / "none.json"), "--json")
    doc = _json(missing)
    assert missing.returncode == exits.USAGE and "cannot read" in doc["error"]
    assert "error:" in missing.stderr  # the message still reaches stderr


def test_jev_diagnostic_json_is_the_document_once():
    p = run_main("jev-multicorrect", "diagnostic", "--seeds", "42", "--json")
    doc = _json(p)
    assert doc["passed"] is True and [s["seed"] for s in doc["seeds"]] == [42]
    assert doc["schemaVersion"] == "prereg-jev-multicorrect-diagnostic/v2"


def test_items_answers_in_json_with_what_it_wrote(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    assert run_main("--project", project, "compile").returncode == 0
    out = tmp_path / "items.jsonl"
    p = run_main("--project", project, "answer-position", "items", "--out", out, "--json")
    assert _json(p) == {
        "study": "answer-position",
        "command": "items",
        "outputs": [str(out)],
        "rows": 2560,
        "exitCode": 0,
    }
    assert out.exists()


def _on_a_terminal(*argv: str) -> tuple[int, str, bytes]:
    """Run prereg with stderr on a pseudo-terminal; (exit status, stdout, terminal bytes)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prereg.cli", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=dict(os.environ, PREREG_PROGRESS_DELAY="0"),  # shown at once, however fast
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk and proc.poll() is not None:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read().decode()
    os.close(master)
    return proc.wait(), out, seen


def test_audit_sweep_draws_a_bar_on_a_terminal_and_nothing_when_quiet_or_json():
    argv = ("d17-multifact", "audit-sweep", "d17mf-pty-", "1", "--workers", "1")
    code, out, term = _on_a_terminal(*argv)
    assert code == 0, term
    assert "d17mf-pty-0: equalizedMax" in out
    # the bar (rich's, or the plain one without rich) names the work and its count
    shown = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", term)
    assert b"audit-sweep d17mf-pty-" in shown and b"1/1" in shown
    assert shown.endswith(b"\r\n")  # the bar's line is ended
    for off in ("--quiet", "--json"):
        code, out, term = _on_a_terminal(*argv, off)
        assert code == 0 and term == b"", off
    assert json.loads(out)["exitCode"] == 0


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_nothing_off_a_terminal():
    """A pipe or a file (CI's log, `| tee`) gets no progress, however long the work."""
    clock, stream = _Clock(), io.StringIO()
    p = Progress("work", 20, unit="blocks", stream=stream, clock=clock)
    clock.now = 5.0
    for _ in range(20):
        p.step()
    p.close()
    assert stream.getvalue() == ""


def test_progress_waits_a_second_then_draws_a_plain_bar_without_rich(monkeypatch):
    import prereg.console

    monkeypatch.setattr(prereg.console, "_rich_bar", lambda *a: None)  # as without rich
    clock, term = _Clock(), _Terminal()
    p = Progress("work", 4, unit="blocks", stream=term, clock=clock)
    p.step()  # quick work: nothing
    assert term.getvalue() == ""
    clock.now = 1.5
    for _ in range(3):
        p.step()
    p.close()
    shown = term.getvalue()
    assert shown.startswith("\r\x1b[Kwork [" + "#" * 15 + "." * 15 + "] 2/4 blocks (2 s)")
    assert "[" + "#" * 30 + "] 4/4 blocks" in shown and shown.endswith("\n")


@pytest.mark.parametrize("how", ["quiet", "json"])
def test_no_progress_with_quiet_or_json_even_on_a_terminal(how):
    clock, term = _Clock(), _Terminal()
    q = Console(stderr=term, quiet=how == "quiet", json_mode=how == "json").progress("work", 4)
    q.clock, q.started = clock, 0.0
    clock.now = 5.0
    for _ in range(4):
        q.step()
    q.close()
    assert term.getvalue() == ""


def test_progress_is_drawn_by_rich_when_it_is_installed(monkeypatch):
    """With rich (the `progress` extra) the bar is rich's: first drawn as the work stands,
    redrawn in place, its line ended on close; stdout and stderr are left as they are (a
    pipe may take stdout while stderr is a terminal)."""
    pytest.importorskip("rich", reason="rich (the progress extra) is not installed")
    clock, term = _Clock(), _Terminal()
    before = (sys.stdout, sys.stderr)
    p = Progress("work", 4, unit="blocks", stream=term, clock=clock)
    p.step()
    assert term.getvalue() == ""
    clock.now = 1.5
    p.step(label="rung 2")
    assert (sys.stdout, sys.stderr) == before
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", term.getvalue())
    assert plain.startswith("work ") and "2/4" in plain and "blocks rung 2" in plain
    assert "0/4" not in plain and "1/4" not in plain  # nothing drawn before the first second
    p.step(2)
    p.close()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", term.getvalue())
    assert plain.rstrip("\n").split("\r")[-1].startswith("work ") and "4/4" in plain
    assert plain.endswith("\n") and (sys.stdout, sys.stderr) == before


@pytest.mark.parametrize("delay", [None, 0.0])
def test_rich_is_imported_only_when_a_bar_is_drawn(tmp_path, delay):
    """A stand-in ``rich`` that notes its import and then fails to import: starting a command
    and work done within its first second do not import it; the first bar drawn does, and
    without a working rich the plain bar is drawn instead."""
    stub = tmp_path / "stub" / "rich"
    stub.mkdir(parents=True)
    mark = tmp_path / "imported"
    (stub / "__init__.py").write_text(
        f"open({str(mark)!r}, 'w').close()\nraise ImportError('a stand-in')\n"
    )
    code = (
        "import io\n"
        "import prereg.cli\n"
        "from prereg.console import Progress\n"
        "class T(io.StringIO):\n"
        "    def isatty(self): return True\n"
        f"t = T(); p = Progress('w', 3, stream=t, delay={delay!r})\n"
        "for _ in range(3): p.step()\n"
        "p.close()\n"
        "print(repr(t.getvalue()))\n"
    )
    path = os.pathsep.join([str(tmp_path / "stub"), str(ROOT / "runtime")])
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    if delay is None:  # the default second: the work ended before it, nothing drawn
        assert not mark.exists() and done.stdout.strip() == "''"
    else:
        assert mark.exists() and done.stdout.startswith("'\\r\\x1b[Kw [")


def test_the_readme_exit_code_table_is_the_one_the_code_uses():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Exit codes") :]
    section = section[: section.index("\n## ", 3)]
    codes = [int(c) for c in re.findall(r"^\| `(\d+)` \|", section, flags=re.M)]
    named = [exits.OK, exits.FAILED, exits.USAGE, exits.INFEASIBLE, exits.INTERRUPTED]
    assert codes == [*named, exits.BROKEN_PIPE]
    assert run_main("compil").returncode == exits.USAGE


def test_running_out_of_memory_is_a_refusal_not_a_traceback(monkeypatch, capsys):
    from prereg import cli

    def greedy(project, args):
        raise MemoryError("Unable to allocate 64.0 PiB for an array")

    monkeypatch.setattr(cli, "_cmd_check", greedy)
    assert cli.main(["check"]) == exits.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory: the inputs ask for more than this machine has")
    assert "64.0 PiB" in err and "nothing was written" in err and "Traceback" not in err


def test_a_study_command_out_of_memory_answers_in_json(tmp_path):
    # a task count of 2^53 - 1 makes the power plan ask numpy for 64 PiB at once
    p = run_prereg(
        "s3-verifier-freeze", "power-plan", ROOT / "examples" / "s3" / "calibration-sample.jsonl",
        "--eligible-task-count", 2**53 - 1, "--eligible-repository-count", 12,
        "--eligible-pass-items", 210, "--eligible-fail-items", 430,
        "--out", tmp_path / "plan.json", "--json",
    )  # fmt: skip
    assert p.returncode == exits.USAGE and "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert doc["error"].startswith("out of memory: the inputs ask for more than this machine has")
    assert doc["exitCode"] == 2 and not (tmp_path / "plan.json").exists()


def test_audit_sweep_prints_each_seed_before_the_next_is_audited(monkeypatch):
    """The sweep's lines stream: seed k's line is out before seed k+1's audit starts."""
    import argparse

    from prereg.compiler.project import Project
    from prereg.engines.reachability import commands
    from prereg.study import study_context

    _, ctx = study_context(Project(ROOT), "d17-multifact")
    out = io.StringIO()
    audited = []

    def one(config_json, seed, positive_control):
        audited.append((seed, out.getvalue().count("equalizedMax")))
        return {"seed": seed, "equalizedMax": 0.5, "passes": True, "groups": {}}

    monkeypatch.setattr(commands, "_sweep_one", one)
    con = Console(stdout=out, quiet=True)
    args = argparse.Namespace(prefix="d17mf-stream-", count=3, workers=1, console=con)
    assert commands.audit_sweep(ctx, args) == 0
    # when seed k was audited, the lines of seeds 0 .. k-1 had been printed
    assert audited == [("d17mf-stream-0", 0), ("d17mf-stream-1", 1), ("d17mf-stream-2", 2)]
    assert "passing: 3 of 3 seed(s)" in out.getvalue()


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_progress_delay_is_refused_by_name(value):
    p = run_main(
        "d17-multifact", "audit-sweep", "d17mf-pty-", "1", env={"PREREG_PROGRESS_DELAY": value}
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert f"PREREG_PROGRESS_DELAY is {value!r}" in p.stderr
