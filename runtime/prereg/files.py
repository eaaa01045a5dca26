"""Writing outputs safely: exclusive creation, atomic replacement of nothing.

Every output the runtime writes goes through :func:`write_new`: the bytes are written to a
temporary file in the destination folder and linked into place only if the destination does
not exist, so a failed run leaves no partial file and an existing file is never overwritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from prereg.digest import canonical_json
from prereg.errors import UserError


def refuse_existing(*paths: str | Path) -> None:
    """Refuse before any work when an output already exists."""
    for p in paths:
        if os.path.lexists(p):
            raise UserError(f"{p}: output file already exists; refusing to overwrite it")


def write_new(path: str | Path, data: bytes | str, *, mode: int = 0o644) -> Path:
    """Create ``path`` exclusively and atomically with ``data`` and file ``mode``."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{path}: folder {parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        try:
            os.link(tmp, path)  # fails if path exists: exclusive, and atomic
        except FileExistsError:
            raise UserError(
                f"{path}: output file already exists; refusing to overwrite it"
            ) from None
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return path


def write_files_new(files: list[tuple[str | Path, bytes | str, int]]) -> None:
    """Write several files exclusively; if any fails, remove the ones this call created."""
    refuse_existing(*(p for p, _, _ in files))
    created: list[Path] = []
    try:
        for p, data, mode in files:
            created.append(write_new(p, data, mode=mode))
    except BaseException:
        for p in created:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
        raise


def canonical_bytes_nl(value: Any) -> bytes:
    """Canonical JSON plus a final newline: the byte form of every JSON output."""
    return canonical_json(value) + b"\n"


def pretty_json(value: Any) -> str:
    """Indented, key-sorted JSON for human-facing files (non-ASCII kept)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
