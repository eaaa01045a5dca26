"""docs/tutorial.md, run as a reader would: every ```sh block in order, in one fresh folder
(each block starts where the previous one ended), with this project's ``prereg`` first on PATH;
what each prints must be the ```text block shown after it (a spec digest compared as a
pattern), and each exits as the page says (0 unless an ``exit: N`` comment precedes it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
BLOCK = re.compile(
    r"(?:<!-- exit: (?P<exit>\d+) -->\n)?```sh\n(?P<code>.*?)```\n\n```text\n(?P<out>.*?)```\n",
    re.S,
)


def blocks(text: str) -> list[tuple[str, str, int]]:
    found = [(m["code"], m["out"], int(m["exit"] or 0)) for m in BLOCK.finditer(text)]
    # every sh block is followed by its output: none may escape the pattern above
    assert len(found) == text.count("```sh\n"), "a ```sh block without a ```text block after it"
    return found


def matches(shown: str, printed: str) -> bool:
    """Line by line; a digest in the shown text matches any digest at that place."""
    a, b = shown.splitlines(), printed.splitlines()
    if len(a) != len(b):
        return False
    for s, p in zip(a, b, strict=True):
        pattern = "".join(
            "sha256:[0-9a-f]{64}" if DIGEST.fullmatch(part) else re.escape(part)
            for part in re.split(f"({DIGEST.pattern})", s)
        )
        if not re.fullmatch(pattern, p):
            return False
    return True


def test_matching_treats_digests_as_a_pattern_and_nothing_else():
    d1, d2 = "sha256:" + "a" * 64, "sha256:" + "0" * 64
    assert matches(f"sealed x ({d1})\n", f"sealed x ({d2})\n")
    assert not matches(f"sealed x ({d1})\n", f"sealed y ({d2})\n")
    assert not matches("a\nb\n", "a\n")
    assert not matches("rows: 1.5\n", "rows: 105\n")  # '.' is literal


@pytest.mark.skipif(shutil.which("bash") is None, reason="the tutorial's blocks are bash")
def test_the_tutorial_runs_as_written(tmp_path):
    found = blocks(TUTORIAL.read_text(encoding="utf-8"))
    assert len(found) >= 12
    shown_commands = "".join(code for code, _, _ in found)
    for step in ("init", "compile", "items", "simulate", "score", "diagnose", "diff", "seal"):
        assert re.search(rf"\bprereg (my-study )?{step}\b", shown_commands), step
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "prereg"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m prereg.cli "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREREG_")}
    env.update(
        PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=str(ROOT / "runtime"),
        COLUMNS="80",
    )
    cwd = tmp_path / "reader"
    cwd.mkdir()
    where = tmp_path / "cwd"
    for n, (code, shown, status) in enumerate(found, 1):
        script = f'{code}\nstatus=$?\npwd > "{where}"\n'
        # -e: a failing command ends the block with its status; the trap still records the folder
        result = subprocess.run(
            ["bash", "-e", "-c", f'trap \'pwd > "{where}"\' EXIT\n{script}'],
            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=600, check=False,
        )  # fmt: skip
        assert result.returncode == status, f"block {n}:\n{code}\n{result.stdout}"
        assert matches(shown, result.stdout), f"block {n}:\n{code}\nprinted:\n{result.stdout}"
        cwd = Path(where.read_text().strip())
