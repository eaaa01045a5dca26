"""Output survives any stdout encoding: with PYTHONIOENCODING=ascii or LANG=C, commands whose
text holds non-ASCII characters (−, ≥, ×, a file name with é) print them escaped instead of
crashing with UnicodeEncodeError (dry-run, dry-run-ledger and diagnose crashed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = "d17mf-0b8e6f2a4c9d13e75a06b2f4c8"


def _run(env_extra: dict, *argv, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO"))}
    env.update(PYTHONPATH=str(ROOT / "runtime"), PYTHONUTF8="0", **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "prereg.cli", *map(str, argv)],
        env=env, cwd=cwd, capture_output=True, timeout=300, check=False,
    )  # fmt: skip


ENCODINGS = [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C"}]


@pytest.mark.parametrize("env", ENCODINGS, ids=["ascii", "C"])
def test_dry_run_prints_its_non_ascii_text_escaped(tmp_path, env):
    p = _run(env, "--project", ROOT, "d17-multifact", "dry-run", SEED,
             "--now", "2026-10-15T00:00:00Z", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr.decode("ascii", "replace")
    assert b"Traceback" not in p.stderr
    out = p.stdout.decode("ascii")  # nothing but ASCII reached the stream
    assert "cap USD 8 \\u2212 " in out  # the minus sign of the budget line, escaped


@pytest.mark.parametrize("env", ENCODINGS, ids=["ascii", "C"])
def test_an_error_naming_a_non_ascii_file_is_printed_escaped(tmp_path, env):
    score = tmp_path / "r\u00e9sultat.json"
    score.write_text('{"cells": [{"x": NaN}]}', encoding="utf-8")
    p = _run(env, "tables", score.name, "--csv", "t", cwd=tmp_path)
    assert p.returncode == 2 and b"Traceback" not in p.stderr, p.stderr
    err = p.stderr.decode("ascii")
    # the name escaped: its character (ascii) or, decoded under LANG=C, its two UTF-8 bytes
    assert ("error: r\\xe9sultat.json: not valid JSON" in err
            or "error: r\\udcc3\\udca9sultat.json: not valid JSON" in err), err  # fmt: skip
