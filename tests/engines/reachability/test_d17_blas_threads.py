"""prepare's bytes do not depend on OpenBLAS's thread count, and the command line asks for one
thread unless the user set a number (OpenBLAS reads it once, when numpy loads it, so the
prepare below runs in a process of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from d17_helpers import DEMO, ROOT, summary

from prereg import cli


def test_the_command_line_asks_for_one_thread_unless_told(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    cli._one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    cli._one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"


def test_prepare_with_four_blas_threads_writes_the_same_digests(tmp_path):
    out = tmp_path / "prepared"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="4")
    code = "import sys; from prereg.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["--project", str(ROOT), "d17-multifact", "prepare", DEMO, str(out), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    reg = json.loads((out / "preregistration.json").read_text())
    s = summary()
    assert reg["auditDigest"] == s["auditDigest"]
    assert reg["goldDigest"] == s["goldDigest"]
    assert reg["dispatchOrderDigest"] == s["dispatchOrderDigest"]
