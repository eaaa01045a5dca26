"""The demo run the tests of tests/demo/ share: ``runs`` runs ``prereg demo`` twice, once per
test run, for every pytest-xdist worker (it takes most of the demo tests' time)."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import built_once

ROOT = Path(__file__).resolve().parents[2]


def run_demo(out: Path, *extra: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["--project", str(ROOT), "demo", "--out", str(out), *extra])
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="package")
def runs(tmp_path_factory) -> tuple[Path, Path, str]:
    """Two demo runs (the second over an existing folder with --force) and the first's output;
    once per test run, whichever pytest-xdist worker asks first (the tests only read them)."""

    def build(base: Path) -> None:
        a, b = base / "a", base / "b"
        # As a user's shell runs it (PYTHONDONTWRITEBYTECODE unset), so that a test can show
        # that the demo writes no bytecode into its output.
        before, sys.dont_write_bytecode = sys.dont_write_bytecode, False
        try:
            code, stdout, stderr = run_demo(a)
        finally:
            sys.dont_write_bytecode = before
        assert code == 0, stderr
        b.mkdir()
        (b / "left-over.txt").write_text("from an earlier run")
        code_b, _, stderr_b = run_demo(b, "--force")
        assert code_b == 0, stderr_b
        (base / "stdout.txt").write_text(stdout, encoding="utf-8")

    base = built_once(tmp_path_factory, "demo", build)
    return base / "a", base / "b", (base / "stdout.txt").read_text(encoding="utf-8")
