"""Writing outputs safely: exclusive creation, atomic replacement of nothing.

Every output the runtime writes goes through :func:`write_new`: the bytes are written to a
temporary file in the destination folder and linked into place only if the destination does
not exist, so a failed run leaves no partial file and an existing file is never overwritten.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable
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


def spec_path_problem(text: str, relative_to: str, lives: str) -> str | None:
    """Why a file a spec names by a relative path is refused as written, or None: written with
    a backslash, absolute, or climbing out with '..' (``relative_to`` and ``lives`` say, in the
    message, where such a file is found)."""
    from pathlib import PurePosixPath

    if "\\" in text:
        return "is written with a backslash; write a path with /"
    pure = PurePosixPath(text)
    if pure.is_absolute() or text.startswith("~"):
        return f"is an absolute path; write it relative to {relative_to}"
    if ".." in pure.parts:
        return f"climbs out with '..'; the file lives {lives}"
    return None


def find_in_project(root: str | Path, bases: Iterable[str | Path], file: str) -> Path | None:
    """The regular file ``file`` under the first of ``bases`` that holds it inside the project
    ``root`` (resolved: a symbolic link out of the project is not followed), or None."""
    top = Path(root).resolve()
    for base in bases:
        candidate = (Path(base) / file).resolve()
        try:
            candidate.relative_to(top)
        except ValueError:
            continue  # a symbolic link out of the project
        if candidate.is_file():
            return candidate
    return None


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


def read_regular(path: str | os.PathLike, most: int | None = None) -> bytes:
    """The bytes of a regular file; anything else (a folder, a FIFO, a device) raises OSError
    (see :func:`open_regular`). With ``most``, no more than ``most`` + 1 bytes are read (a
    caller refusing a larger file need not hold it)."""
    fd = open_regular(path)
    try:
        chunks = []
        left = most + 1 if most is not None else None
        while left is None or left > 0:
            chunk = os.read(fd, 1 << 20 if left is None else min(1 << 20, left))
            if not chunk:
                break
            chunks.append(chunk)
            if left is not None:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def output_file(path: str | os.PathLike) -> Path:
    """The file a command is to create, as the user named it: a name ending in ``/`` names a
    folder (``Path`` would drop the ``/`` and a file of the folder's name be written)."""
    shown = str(path)
    if not shown:
        raise UserError("an empty path names no file to create")
    if shown.endswith(("/", os.sep)):
        raise UserError(f"{shown}: is a folder; name the file to create")
    return Path(path)


def refuse_report_on_output(out: str | Path, md: str | Path) -> None:
    """Refuse an output named as the Markdown report written beside it (``--out S.md``):
    refuse_existing then said the report 'already exists', of a file that did not."""
    if os.path.normcase(os.path.abspath(out)) == os.path.normcase(os.path.abspath(md)):
        raise UserError(
            f"{out}: the output and its Markdown report (written beside it as NAME.md) would be"
            " this one file; name the output NAME.json"
        )


def refuse_existing(*paths: str | Path) -> None:
    """Refuse before any work when an output already exists (what a killed run left of an
    output is cleared first: :func:`sweep_stale`)."""
    sweep_stale(*paths)
    for p in paths:
        if os.path.isdir(p):
            raise UserError(
                f"{p}: already exists (a folder); refusing to overwrite it; move it away or name another output"
            )
        if os.path.lexists(p):
            raise UserError(
                f"{p}: output file already exists; refusing to overwrite it; move it away or name another output"
            )


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


def write_new(path: str | Path, data: bytes | str | Iterable[bytes], *, mode: int = 0o644) -> Path:
    """Create ``path`` exclusively and atomically with ``data`` and file ``mode`` (and the
    folders above it that do not exist yet, removed again if the write fails).  ``data`` may
    be an iterable of byte chunks, written one by one into the temporary file as they come (an
    error while producing them leaves nothing, as any failed write does)."""
    shown = str(path)
    if shown.endswith(("/", os.sep)) or os.path.isdir(path):
        raise UserError(f"{shown}: is a folder; name the file to create")
    path = Path(path)
    sweep_stale(path)
    if os.path.lexists(path):
        raise UserError(
            f"{path}: output file already exists; refusing to overwrite it; move it away or name another output"
        )
    created = make_parents(path)
    try:
        tmp = _staged(path, data, mode)
        try:
            try:
                os.link(tmp, path)  # fails if path exists: exclusive, and atomic
            except FileExistsError:
                raise UserError(
                    f"{path}: output file already exists; refusing to overwrite it; move it away or name another output"
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


def _staged(path: Path, data: bytes | str | Iterable[bytes], mode: int) -> str:
    """A complete, synced temporary file beside ``path`` holding ``data`` (its name)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    chunks = (data,) if isinstance(data, bytes | bytearray | memoryview) else data
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{path}: folder {parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=_prefix(path.name), suffix=".tmp", dir=parent)
    except OSError as exc:
        raise UserError(f"{path}: cannot write in {parent}: {exc.strerror}") from None
    try:
        fh = os.fdopen(fd, "wb")
        try:
            for chunk in chunks:  # an error making the data is the maker's to word
                _written(path, fh.write, chunk)
            _written(path, fh.flush)
            _written(path, os.fsync, fh.fileno())
        finally:
            _written(path, fh.close)
        os.chmod(tmp, mode)
    except BaseException:
        os.unlink(tmp)  # a failed write (disk full, interrupted) leaves no temporary file
        raise
    return tmp


def _written(path: Path, fn, *args) -> None:
    """``fn(*args)``, a step of writing ``path``: the system's refusal (a full disk, a quota)
    is the user's to mend, said with the file (it carries no file name of its own, and was a
    traceback)."""
    try:
        fn(*args)
    except OSError as exc:
        raise UserError(
            f"{path}: cannot write: {exc.strerror or exc}; nothing was written"
        ) from None


def write_files_new(files: list[tuple[str | Path, bytes | str, int]]) -> None:
    """Write several files exclusively, as one unit: all or none, kill -9 included.

    Every file is written and synced to a temporary sibling first; then a journal naming each
    file and its temporary is written beside them (``.<first name>.<pid>.*.unit``), the files
    are linked into place one after the other, and the journal is removed.  A failure removes
    the files this call linked; a process killed among the links leaves its journal, and the
    next write or check of any of those files (:func:`sweep_stale`) removes what the dead
    process linked, so no reader is left with one file of the unit without the others.
    """
    sweep_stale(*(p for p, _, _ in files))
    refuse_existing(*(p for p, _, _ in files))
    staged: list[tuple[Path, str]] = []
    created: list[Path] = []
    folders: list[Path] = []
    journals: list[str] = []
    try:
        for p, data, mode in files:
            path = Path(p)
            if str(p).endswith(("/", os.sep)):
                raise UserError(f"{p}: is a folder; name the file to create")
            folders += make_parents(path)
            staged.append((path, _staged(path, data, mode)))
        if len(staged) > 1:
            journals = _journals(staged)
        for path, tmp in staged:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UserError(
                    f"{path}: output file already exists; refusing to overwrite it; move it away or name another output"
                ) from None
            created.append(path)
    except BaseException:
        failed = True
        # and a file linked just before an interrupt (SIGTERM) landed, before it was counted
        created += [p for p, tmp in staged if p not in created and _same_file(p, tmp)]
        for path in created:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        raise
    else:
        failed = False
    finally:
        for name in journals:  # first: from here on the unit is whole (or removed above)
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
        for _, tmp in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if failed:  # last: the folders this call created are empty again
            remove_folders(folders)


def _same_file(path: Path, tmp: str) -> bool:
    """Whether ``path`` is a link to the staged file ``tmp`` (this call linked it)."""
    try:
        return os.path.samefile(path, tmp)
    except OSError:
        return False


def _prefix(name: str) -> str:
    """The prefix of a temporary beside the output ``name``: it carries this process's id, so
    that what a dead process left can be told from what a live one is writing."""
    return f".{name}.{os.getpid()}."


def _journals(staged: list[tuple[Path, str]]) -> list[str]:
    """Write the journal of a unit of files into every folder it writes to (synced)."""
    body = json.dumps([[str(p), tmp] for p, tmp in staged]).encode("utf-8")
    names: list[str] = []
    try:
        for folder in dict.fromkeys(p.parent if str(p.parent) else Path(".") for p, _ in staged):
            first = next(
                p for p, _ in staged if (p.parent if str(p.parent) else Path(".")) == folder
            )
            fd, name = tempfile.mkstemp(prefix=_prefix(first.name), suffix=".unit", dir=folder)
            names.append(name)
            with os.fdopen(fd, "wb") as fh:
                _written(first, fh.write, body)
                _written(first, fh.flush)
                _written(first, os.fsync, fh.fileno())
    except BaseException:
        for name in names:
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
        raise
    return names


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process (or not a pid we can ask about): leave it
    return True


_LEFTOVER = re.compile(r"\.(?P<pid>[0-9]{1,10})\.[A-Za-z0-9_]+\.(?P<kind>tmp|partial|unit)")


_UNIT = re.compile(r"\..+\.(?P<pid>[0-9]{1,10})\.[A-Za-z0-9_]+\.unit")


def sweep_stale(*paths: str | Path) -> None:
    """Remove what a killed writer left beside these outputs: for a unit of files it was
    linking (its journal ``.<name>.<pid>.*.unit`` in the folder), the files it had linked;
    its temporaries (``.<name>.<pid>.*.tmp``) and partial folders (``.<name>.<pid>.*.partial``).
    Only what a process that is no longer running left is touched."""
    listed: dict[Path, list[str]] = {}
    for p in paths:
        path = Path(p)
        parent = path.parent if str(path.parent) else Path(".")
        if parent not in listed:
            try:
                listed[parent] = [e for e in os.listdir(parent) if e.startswith(".")]
            except OSError:
                listed[parent] = []
            for entry in listed[parent]:  # units first: they need their temporaries
                m = _UNIT.fullmatch(entry)
                if m is not None and not _alive(int(m["pid"])):
                    try:
                        _undo_unit(parent / entry)
                    except OSError:
                        pass
    for p in paths:
        path = Path(p)
        parent = path.parent if str(path.parent) else Path(".")
        head = f".{path.name}"
        for entry in listed[parent]:
            if not entry.startswith(head + "."):
                continue
            m = _LEFTOVER.fullmatch(entry[len(head) :])
            if m is None or m["kind"] == "unit" or _alive(int(m["pid"])):
                continue
            where = parent / entry
            try:
                if m["kind"] == "partial":
                    if where.is_dir() and not where.is_symlink():
                        shutil.rmtree(where, ignore_errors=True)
                else:
                    os.unlink(where)
            except OSError:
                pass


def _undo_unit(journal: Path) -> None:
    """Remove the files a dead writer linked from its unit's temporaries (each still the
    same file as its temporary), the temporaries, and the journal."""
    from prereg.records import loads_strict

    try:
        pairs = loads_strict(read_regular(journal).decode("utf-8"))
    except (OSError, ValueError):
        pairs = []
    if isinstance(pairs, list):
        for pair in pairs:
            if not (
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
            ):
                continue
            dest, tmp = pair
            try:
                if os.path.samefile(dest, tmp):
                    os.unlink(dest)
            except OSError:
                pass
            try:
                os.unlink(tmp)
            except OSError:
                pass
    os.unlink(journal)


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
    sweep_stale(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"{folder}: exists and is not an empty folder; refusing to write into it")
    made = make_parents(folder)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_prefix(folder.name), suffix=".partial", dir=parent))
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
