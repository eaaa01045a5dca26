"""The freeze binds no content that may never have existed: a file whose size or times move
while it is hashed is refused; an unreadable artifact is reported as unreadable."""

from __future__ import annotations

import os

import pytest

from prereg.engines.clusterpower import freeze
from prereg.engines.clusterpower.freeze import ChangedWhileRead, sha256_fd


def test_a_file_rewritten_while_hashed_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "artifact.py"
    path.write_bytes(b"x" * 100_000)
    real = freeze._stamp
    calls = []

    def stamp(fd):
        calls.append(fd)
        size, mtime, ctime = real(fd)
        return (size, mtime + (len(calls) > 1), ctime)  # the second look sees a new mtime

    monkeypatch.setattr(freeze, "_stamp", stamp)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(ChangedWhileRead, match="changed while it was read"):
            sha256_fd(fd)
    finally:
        os.close(fd)


def test_a_file_that_grows_while_hashed_is_refused(tmp_path):
    path = tmp_path / "artifact.py"
    path.write_bytes(b"x" * 10)
    fd = os.open(path, os.O_RDONLY)
    try:
        before = freeze._stamp(fd)
        with open(path, "ab") as fh:
            fh.write(b"more")
        with pytest.raises(ChangedWhileRead):
            freeze._check_unchanged(fd, before, 10)
    finally:
        os.close(fd)


def test_an_unchanged_file_hashes_as_before(tmp_path):
    import hashlib

    path = tmp_path / "artifact.py"
    path.write_bytes(b"abc" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert sha256_fd(fd) == (hashlib.sha256(b"abc" * 1000).hexdigest(), 3000)
    finally:
        os.close(fd)


def test_an_unreadable_artifact_is_reported_as_unreadable(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text("x")
    real_open = os.open

    def denying(p, flags, *args, **kwargs):
        if p == "a.py":
            raise PermissionError(13, "Permission denied")
        return real_open(p, flags, *args, **kwargs)

    root_fd, real = freeze.open_root(tmp_path)
    monkeypatch.setattr(freeze.os, "open", denying)
    try:
        fd, problem = freeze.open_beneath(root_fd, real, "a.py")
        assert fd is None and problem == "cannot read 'a.py': Permission denied"
    finally:
        os.close(root_fd)
