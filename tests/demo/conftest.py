"""The demo run the tests of tests/demo/ share: ``runs`` runs ``prereg demo`` twice, once per
test run, for every pytest-xdist worker (it takes most of the demo tests' time)."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import built_once_each

ROOT = Path(__file__).resolve().parents[2]


def run_demo(out: Path, *extra: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["--project", str(ROOT), "demo", "--out", str(out), *extra])
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="package")
def runs(tmp_path_factory) -> tuple[Path, Path, str]:
    """Two demo runs (the second over an existing folder with --force) and the first's output;
    once per test run (the tests only read them): under pytest-xdist, two workers asking at
    once make one run each, else the first to ask makes both."""

    def first(base: Path) -> None:
        # As a user's shell runs it (PYTHONDONTWRITEBYTECODE unset), so that a test can show
        # that the demo writes no bytecode into its output.
        before, sys.dont_write_bytecode = sys.dont_write_bytecode, False
        try:
            code, stdout, stderr = run_demo(base / "a")
        finally:
            sys.dont_write_bytecode = before
        assert code == 0, stderr
        (base / "stdout.txt").write_text(stdout, encoding="utf-8")

    def second(base: Path) -> None:
        (base / "b").mkdir()
        (base / "b" / "left-over.txt").write_text("from an earlier run")
        code, _, stderr = run_demo(base / "b", "--force")
        assert code == 0, stderr

    built = built_once_each(tmp_path_factory, {"demo-a": first, "demo-b": second})
    a, b = built["demo-a"], built["demo-b"]
    return a / "a", b / "b", (a / "stdout.txt").read_text(encoding="utf-8")
