"""`prereg compile` of the shipped studies checks and renders them without the array stack:
numpy (and scipy, pandas) is imported by the commands that compute, not by compile (a user's
`prereg compile` starts without it)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.conftest import copy_project

HEAVY = ("numpy", "scipy", "pandas")


def test_compile_of_the_shipped_studies_imports_no_numpy(tmp_path):
    project = copy_project(tmp_path / "project")
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from prereg.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["--project", {str(project)!r}, "compile"])
        print(json.dumps([code, out.getvalue(), [m for m in {HEAVY!r} if m in sys.modules]]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    code, said, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0
    # all three studies were checked and rendered (not refused before the engines' checks)
    assert "compiled 3 studies: d17-multifact, jev-multicorrect, s3-verifier-freeze" in said
    assert imported == []
