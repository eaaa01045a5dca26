"""Writing outputs safely: exclusive creation, atomic replacement of nothing.

Every output the runtime writes goes through :func:`write_new`: the bytes are written to a
temporary file in the destination folder and linked into place only if the destination does
not exist, so a failed run leaves no partial file and an existing file is never overwritten.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
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


def open_regular(path: str | os.PathLike) -> int:
    """A file descriptor open for reading on a regular file; anything else (a folder, a FIFO,
    a device) raises OSError.

    The file is opened without blocking, so a FIFO with no writer is refused at once instead
    of hanging; callers' ``except OSError as e`` handlers report ``e.strerror``. The caller
    closes the descriptor.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder, not a regular file", str(path))
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise OSError(errno.EINVAL, f"{kind}, not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file; anything else (a folder, a FIFO, a device) raises OSError
    (see :func:`open_regular`)."""
    fd = open_regular(path)
    try:
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


def make_parents(path: str | Path) -> list[Path]:
    """Create the folders above ``path`` that do not exist yet (an output may go into a new
    folder, ``--out results/run1/SCORE.json``); the folders created, outermost first, for
    :func:`remove_folders` when the write fails. A file where a folder should be is refused."""
    path = Path(path)
    missing: list[Path] = []
    p = path.parent if str(path.parent) else Path(".")
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    if os.path.lexists(p) and not p.is_dir():
        raise UserError(f"{path}: {p} is not a folder")
    created: list[Path] = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to remove
        except OSError as exc:
            remove_folders(created)
            raise UserError(f"{path}: cannot create folder {d}: {exc.strerror}") from None
        created.append(d)
    return created


def remove_folders(created: list[Path]) -> None:
    """Remove the folders :func:`make_parents` created, innermost first, if they are empty."""
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            pass


def write_new(path: str | Path, data: bytes | str, *, mode: int = 0o644) -> Path:
    """Create ``path`` exclusively and atomically with ``data`` and file ``mode`` (and the
    folders above it that do not exist yet, removed again if the write fails)."""
    shown = str(path)
    if shown.endswith(("/", os.sep)) or os.path.isdir(path):
        raise UserError(f"{shown}: is a folder; name the file to create")
    path = Path(path)
    if os.path.lexists(path):
        raise UserError(f"{path}: output file already exists; refusing to overwrite it")
    created = make_parents(path)
    try:
        tmp = _staged(path, data, mode)
        try:
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
    except BaseException:
        remove_folders(created)
        raise
    return path


def _staged(path: Path, data: bytes | str, mode: int) -> str:
    """A complete, synced temporary file beside ``path`` holding ``data`` (its name)."""
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
    except BaseException:
        os.unlink(tmp)  # a failed write (disk full, interrupted) leaves no temporary file
        raise
    return tmp


def write_files_new(files: list[tuple[str | Path, bytes | str, int]]) -> None:
    """Write several files exclusively, all or none.

    Every file is written and synced to a temporary sibling first; only then are they linked
    into place one after the other (so the window in which a crash leaves some of them is the
    few microseconds of the links, not the writing). If any step fails, the files this call
    linked are removed again and no temporary file is left.
    """
    refuse_existing(*(p for p, _, _ in files))
    staged: list[tuple[Path, str]] = []
    created: list[Path] = []
    folders: list[Path] = []
    try:
        for p, data, mode in files:
            path = Path(p)
            if str(p).endswith(("/", os.sep)):
                raise UserError(f"{p}: is a folder; name the file to create")
            folders += make_parents(path)
            staged.append((path, _staged(path, data, mode)))
        for path, tmp in staged:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UserError(
                    f"{path}: output file already exists; refusing to overwrite it"
                ) from None
            created.append(path)
    except BaseException:
        for path in created:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        for _, tmp in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        remove_folders(folders)
        raise
    finally:
        for _, tmp in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def write_folder_new(folder: str | Path, files: list[tuple[str, bytes | str, int]]) -> Path:
    """Create ``folder`` holding ``files`` (name, data, mode) atomically: whole or not at all.

    The files are written into a hidden temporary sibling folder, synced, and the folder is
    renamed into place in one step, so no reader (and no crash, kill -9 included) ever sees a
    partial folder. ``folder`` may not exist yet, or be an empty folder (which the rename
    replaces); anything else is refused. A crashed run leaves at most the hidden temporary
    folder (``.<name>.*.partial``), never a partial output.
    """
    folder = Path(folder)
    parent = folder.parent if str(folder.parent) else Path(".")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"{folder}: exists and is not an empty folder; refusing to write into it")
    made = make_parents(folder)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=parent))
    except OSError as exc:
        remove_folders(made)
        raise UserError(f"{folder}: cannot write in {parent}: {exc.strerror}") from None
    try:
        for name, data, mode in files:
            if isinstance(data, str):
                data = data.encode("utf-8")
            fd = os.open(tmp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp / name, mode)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        dfd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        try:
            os.rename(tmp, folder)
        except OSError as exc:
            raise UserError(f"{folder}: cannot create it: {exc.strerror}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        remove_folders(made)
        raise
    return folder


def canonical_bytes_nl(value: Any) -> bytes:
    """Canonical JSON plus a final newline: the byte form of every JSON output."""
    return canonical_json(value) + b"\n"


def pretty_json(value: Any) -> str:
    """Indented, key-sorted JSON for human-facing files (non-ASCII kept)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
