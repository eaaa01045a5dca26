"""Formatting generated Python with the pinned ruff, in one process for all files."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from prereg.errors import UserError

RUFF_SETTINGS = ["--config", "line-length = 100", "--config", "target-version = 'py311'"]


def _ruff() -> str:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError as exc:  # pragma: no cover - ruff is a dependency
        raise UserError(
            "ruff is not installed (prereg formats generated code with it): install prereg"
            " with its dependencies"
        ) from exc
    return str(find_ruff_bin())


def format_python(sources: dict[str, str]) -> dict[str, str]:
    """Format every ``{relative path: source}`` with ruff; returns the formatted sources."""
    if not sources:
        return {}
    with tempfile.TemporaryDirectory(prefix="prereg-fmt-") as tmp:
        root = Path(tmp)
        for rel, text in sources.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        proc = subprocess.run(
            [_ruff(), "format", "--isolated", "--no-cache", *RUFF_SETTINGS, "--quiet", "."],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"ruff format failed on generated code:\n{proc.stderr}")
        return {rel: (root / rel).read_text(encoding="utf-8") for rel in sources}
