"""kill -9 in the middle of a multi-file writer leaves the whole output or none of it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

OUTPUTS = {"corpus.jsonl", "gold.json", "audit.json", "analysis.json", "preregistration.json"}


@pytest.mark.parametrize("delay", [0.4, 0.8, 1.2, 1.6])
def test_prepare_killed_leaves_nothing_or_everything(tmp_path, delay):
    out = tmp_path / "prepared"
    cmd = [sys.executable, "-m", "prereg.cli", "--project", str(ROOT), "d17-multifact", "prepare",
           "d17mf-public-demo", str(out), "--workers", "1"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if out.exists():
        assert {p.name for p in out.iterdir()} == OUTPUTS
    # Whatever happened, a new run into a fresh name succeeds and finds no partial output.
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "prepared"]
    assert all(n.startswith(".prepared.") and n.endswith(".partial") for n in leftovers)
    if not out.exists():
        again = subprocess.run(cmd, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert {p.name for p in out.iterdir()} == OUTPUTS
        # the successful run cleared what the killed one left beside its output
        assert [p.name for p in tmp_path.iterdir()] == ["prepared"]
    assert os.stat(out / "gold.json").st_mode & 0o777 == 0o600
