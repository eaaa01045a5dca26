"""Writing outputs safely: exclusive creation, atomic replacement of nothing.

Every output the runtime writes goes through :func:`write_new`: the bytes are written to a
temporary file in the destination folder and linked into place only if the destination does
not exist, so a failed run leaves no partial file and an existing file is never overwritten.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from prereg.digest import canonical_json
from prereg.errors import UserError

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file; anything else (a folder, a FIFO, a device) raises OSError.

    The file is opened without blocking, so a FIFO with no writer is refused at once instead
    of hanging; callers' ``except OSError as e`` handlers report ``e.strerror``.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder, not a regular file", str(path))
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise OSError(errno.EINVAL, f"{kind}, not a regular file", str(path))
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def refuse_existing(*paths: str | Path) -> None:
    """Refuse before any work when an output already exists."""
    for p in paths:
        if os.path.isdir(p):
            raise UserError(f"{p}: already exists (a folder); refusing to overwrite it")
        if os.path.lexists(p):
            raise UserError(f"{p}: output file already exists; refusing to overwrite it")


def write_new(path: str | Path, data: bytes | str, *, mode: int = 0o644) -> Path:
    """Create ``path`` exclusively and atomically with ``data`` and file ``mode``."""
    shown = str(path)
    if shown.endswith(("/", os.sep)) or os.path.isdir(path):
        raise UserError(f"{shown}: is a folder; name the file to create")
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{path}: folder {parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise UserError(f"{path}: cannot write in {parent}: {exc.strerror}") from None
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
