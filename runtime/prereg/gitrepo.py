"""Asking git about the repository a project lives in: one bounded call, no shell.

Used where a rule depends on what is committed (a sealed study's history, a private seed that
must not appear in any committed file).  Every answer is None when git is not installed, the
folder is not in a work tree, or the call fails or outlasts its bound: callers treat that as
"no history known", never as an error of the user's files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

GIT_SECONDS = 10.0  # each git call's bound


def run_git(root: Path, *args: str, timeout: float = GIT_SECONDS) -> bytes | None:
    """The output of ``git -C root ARGS`` (no shell, a bounded wait), or None."""
    code, out = git_status(root, *args, timeout=timeout)
    return out if code == 0 else None


def git_status(root: Path, *args: str, timeout: float = GIT_SECONDS) -> tuple[int | None, bytes]:
    """(exit code, output) of ``git -C root ARGS``; the code is None when git is not installed,
    cannot be started or outlasts ``timeout``."""
    exe = shutil.which("git")
    if exe is None:
        return None, b""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(  # noqa: S603 (a fixed program, arguments as a list)
            [exe, "-C", str(root), "-c", "core.fsmonitor=false", *args],
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None, b""
    return done.returncode, done.stdout


def committed_text(root: Path, text: str, *, history: bool = False) -> str | None:
    """Why ``text`` is public in the git repository holding ``root``, or None.

    Searched: every tracked file as it is in the work tree (the whole repository, not only
    ``root``'s folder); with ``history``, also every commit of every branch (the newest commit
    that added or removed it: text committed once stays public after it is deleted).  The
    answer names the file (``it appears in the committed file examples/demo.json``) or the
    commit and file.  Outside a work tree (or without git) nothing can be searched: None.  In
    a work tree whose search fails or outlasts its bound, the answer says so: a rule that
    cannot be checked is not taken to hold."""
    if not text or "\n" in text or "\x00" in text:
        return None
    if run_git(root, "rev-parse", "--is-inside-work-tree") != b"true\n":
        return None
    unsearched = (
        "the repository could not be searched for it (git {} failed or took longer than"
        f" {GIT_SECONDS:g} s), so it cannot be shown to be in no committed file"
    )
    code, found = git_status(
        root, "grep", "-l", "-z", "-F", "-I", "--full-name", "-e", text, "--", ":/"
    )
    if code == 0 and found:
        first = found.split(b"\x00", 1)[0].decode("utf-8", "replace")
        return f"it appears in the committed file {first}"
    if code != 1:  # 1: no match
        return unsearched.format("grep")
    if not history:
        return None
    code, found = git_status(
        root, "log", "--all", "-S", text, "--format=%h", "--name-only", "-n", "1"
    )
    if code != 0:
        return unsearched.format("log")
    lines = [ln for ln in found.decode("utf-8", "replace").splitlines() if ln.strip()]
    if lines:
        where = f" (file {lines[1]})" if len(lines) > 1 else ""
        return f"it appears in commit {lines[0]} of the repository's history{where}"
    return None
