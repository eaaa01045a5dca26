"""SIGTERM during a one-process score (a timeout, a CI's cancel, ``kill``) ends it as an
interrupt does: exit 130 and ``interrupted``, with no SCORE.json or SCORE.md and no staged
file or journal left, wherever the signal lands. The signal's default had killed the process
where it stood (exit 143, nothing said); landing between the links of the two outputs, it
left a SCORE.json without its SCORE.md until a later write or check swept it. The bucketed
path already took SIGTERM so (tests/hostile/test_score_buckets_hostile.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from prereg.cli import main

# Runs `prereg score` in a fresh interpreter that sends itself SIGTERM at a chosen step: after
# the first output is linked into place (the window between the unit's links), or while the
# observations are being read.
RUNNER = textwrap.dedent(
    """
    import os, signal, sys
    import prereg.files, prereg.tabular
    where = sys.argv[1]
    if where == "between-links":
        link = os.link
        def killing_link(src, dst):
            link(src, dst)
            if str(dst).endswith("S.json"):
                os.kill(os.getpid(), signal.SIGTERM)
        prereg.files.os.link = killing_link
    else:
        read = prereg.tabular.read_contract_columns
        def killing_read(path, *a, **k):
            if str(path).endswith("obs.jsonl"):
                os.kill(os.getpid(), signal.SIGTERM)
            return read(path, *a, **k)
        prereg.tabular.read_contract_columns = killing_read
    from prereg.cli import main
    sys.exit(main(sys.argv[2:]))
    """
)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("p")
    assert main(["--project", str(root), "init", "my-study"]) == 0
    assert main(["--project", str(root), "compile"]) == 0
    run = ["--project", str(root), "my-study"]
    assert main([*run, "items", "--out", str(root / "items.jsonl")]) == 0
    args = ["simulate", "--items", str(root / "items.jsonl"), "--scenario", "effect"]
    assert main([*run, *args, "--seed", "1", "--out", str(root / "obs.jsonl")]) == 0
    return root


@pytest.mark.parametrize("where", ["between-links", "while-reading"])
def test_sigterm_leaves_no_score_and_exits_as_an_interrupt(study, tmp_path, where):
    out = tmp_path / "out"
    out.mkdir()
    args = ["--project", str(study), "my-study", "score", "--items", str(study / "items.jsonl")]
    args += ["--observations", str(study / "obs.jsonl"), "--out", str(out / "S.json")]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, where, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == "interrupted", done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in out.iterdir()) == []  # no output, temporary or journal
    # and the same command runs to its end afterwards
    assert main(args) == 0
    assert sorted(p.name for p in out.iterdir()) == ["S.json", "S.md"]


def test_the_handler_is_the_callers_again_after_main(study, tmp_path):
    """An in-process call leaves SIGTERM's handler as it found it."""
    before = signal.getsignal(signal.SIGTERM)
    args = ["--project", str(study), "my-study", "score", "--items", str(study / "items.jsonl")]
    args += ["--observations", str(study / "obs.jsonl"), "--out", str(tmp_path / "S.json")]
    assert main(args) == 0
    assert signal.getsignal(signal.SIGTERM) is before
    assert Path(tmp_path / "S.md").exists()
