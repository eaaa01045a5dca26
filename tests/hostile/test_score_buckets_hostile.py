"""Hostile input to ``score``'s partitioned and bucketed reading (``--workers``,
``--partition-bytes``, ``--scheduler``, :mod:`prereg.bucketed`): each refusal is a clear
error naming the option or file, within seconds, with no traceback, no output and no spill
folder left behind; data one process scores is scored to the same bytes."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from prereg import bucketed, partitioned, runner
from prereg.cli import main
from prereg.errors import UserError
from tests.diagnose.helpers import AP, compile_example


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(project, items, observations) of the answer-position example."""
    root = compile_example(tmp_path_factory.mktemp("ap"))
    items, obs = root / "items.jsonl", root / "obs.jsonl"
    assert main(["--project", str(root), AP, "items", "--out", str(items), "--quiet"]) == 0
    assert main(["--project", str(root), AP, "simulate", "--items", str(items), "--scenario",
                 "position-bias", "--seed", "7", "--out", str(obs), "--quiet"]) == 0  # fmt: skip
    return root, items, obs


def _score(study, out: Path, *extra: str, items: Path | None = None, obs: Path | None = None):
    root, items0, obs0 = study
    return main(
        ["--project", str(root), AP, "score", "--items", str(items or items0), "--observations",
         str(obs or obs0), "--out", str(out), "--quiet", *extra]
    )  # fmt: skip


def _no_spill(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".prereg-score-")]


@pytest.mark.parametrize("digits", ["9" * 5000, "1" * 4301 + "K", "0" * 4000 + "2" * 400])
def test_a_partition_size_of_thousands_of_digits_is_refused_in_words(digits):
    """Python refuses to turn more than 4,300 digits into an integer (ValueError): it was a
    traceback. The message shows the start of the text, not all of it."""
    with pytest.raises(UserError, match="--partition-bytes: .* is more than 1G") as e:
        partitioned.partition_bytes(digits)
    assert len(str(e.value)) < 200


@pytest.mark.parametrize(
    "text, size",
    [("0" * 5000 + "1", 1), ("0" * 5000, None), ("0001K", 1024), ("1G", 1 << 30),
     ("1024M", 1 << 30), ("1073741825", None), ("0K", None)],
)  # fmt: skip
def test_leading_zeros_and_the_largest_size(text, size):
    if size is None:
        with pytest.raises(UserError, match="--partition-bytes: "):
            partitioned.partition_bytes(text)
    else:
        assert partitioned.partition_bytes(text) == size


def test_a_partition_size_of_thousands_of_digits_is_refused_by_score(study, tmp_path, capsys):
    out = tmp_path / "S.json"
    assert _score(study, out, "--partition-bytes", "9" * 5000) == 2
    err = capsys.readouterr().err
    assert "--partition-bytes:" in err and "Traceback" not in err and len(err) < 600, err
    assert not out.exists()


def _with_id(study, tmp_path: Path, new_id: str) -> tuple[Path, Path]:
    """The manifest and observations with one row's id replaced by ``new_id`` (JSON-escaped)."""
    _root, items, obs = study
    old = json.loads(items.read_text().splitlines()[3])["rowId"]
    enc = json.dumps(new_id)[1:-1]
    out = []
    for p in (items, obs):
        q = tmp_path / p.name
        q.write_text(p.read_text().replace(f'"{old}"', f'"{enc}"'))
        out.append(q)
    return out[0], out[1]


@pytest.mark.parametrize("new_id", ["x\ud800y", "\udfff", "a\x00b\U0001f600"])
@pytest.mark.parametrize("extra", [("--partition-bytes", "8K"), ("--workers", "2")])
def test_row_ids_of_any_json_string_reduce_in_buckets_as_one_process_scores(
    study, tmp_path, capsys, new_id, extra
):
    """A lone surrogate (``"\\ud800"`` is a JSON string) has no UTF-8 bytes: bucketing its
    row by the CRC-32 of its UTF-8 bytes raised UnicodeEncodeError (a traceback), where one
    process scores the file."""
    items, obs = _with_id(study, tmp_path, new_id)
    got = []
    for name, args in (("one", ()), ("buckets", extra)):
        out = tmp_path / name / "SCORE.json"
        out.parent.mkdir()
        rc = _score(study, out, *args, items=items, obs=obs)
        err = capsys.readouterr().err
        assert "Traceback" not in err
        got.append((rc, out.read_bytes() if out.exists() else None, err))
        _no_spill(out.parent)
    assert got[0][0] == 0, got[0][2]
    assert got[1] == got[0]


def test_bucket_of_is_defined_for_every_python_string():
    ids = ["a", "x\ud800y", "\udfff", "é", ""]
    b = bucketed.bucket_of(ids, 7)
    assert b.tolist() == bucketed.bucket_of(list(ids), 7).tolist()
    assert all(0 <= x < 7 for x in b.tolist())


# -- --scheduler: something at the address that is not a scheduler ------------------------------


def _answering(reply: bytes):
    """A local server that accepts every connection, writes ``reply`` and keeps it open."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)
            if reply:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return srv, held


@pytest.mark.parametrize(
    "reply, needle",
    [
        # a plausible size, then fewer bytes than it announced: the client waited for the rest
        # of its handshake with no timeout (a hang)
        (struct.pack("<Q", 16) + b"garbage", "sent 7 of the 16 bytes"),
        # a whole message of the announced size that is not a Dask handshake
        (struct.pack("<Q", 16) + b"\xff" * 16, "not a Dask handshake"),
        # frames announced past the message's end
        (struct.pack("<Q", 16) + struct.pack("<QQ", 1, 1 << 40), "not a Dask handshake"),
    ],
)
def test_a_server_sending_a_broken_handshake_is_refused_within_seconds(
    study, tmp_path, capsys, monkeypatch, reply, needle
):
    monkeypatch.setattr(runner, "CONNECT_SECONDS", 1.0)
    srv, held = _answering(reply)
    port = srv.getsockname()[1]
    out = tmp_path / "S.json"
    t0 = time.monotonic()
    try:
        rc = _score(study, out, "--scheduler", f"127.0.0.1:{port}")
    finally:
        took = time.monotonic() - t0
        srv.close()
        for c in held:
            c.close()
    err = capsys.readouterr().err
    assert rc == 2 and f"--scheduler: 127.0.0.1:{port} " in err and needle in err, err
    assert "Traceback" not in err and took < 20
    assert not out.exists()
    _no_spill(tmp_path)


def test_a_tls_address_without_dask_tls_settings_is_refused_at_once(
    study, tmp_path, capsys, monkeypatch
):
    """tls:// needs Dask's TLS settings: without them the client failed with a TypeError and
    its half-built client printed a traceback ("Exception ignored") 40 s later."""
    monkeypatch.setattr(runner, "CONNECT_SECONDS", 1.0)
    srv, held = _answering(b"")
    port = srv.getsockname()[1]
    out = tmp_path / "S.json"
    t0 = time.monotonic()
    try:
        rc = _score(study, out, "--scheduler", f"tls://127.0.0.1:{port}")
    finally:
        took = time.monotonic() - t0
        srv.close()
        for c in held:
            c.close()
    err = capsys.readouterr().err
    assert rc == 2 and "--scheduler: tls://" in err and "TLS" in err, err
    assert "Traceback" not in err and took < 10, (took, err)
    assert not out.exists()
    _no_spill(tmp_path)


def _dask_handshake() -> bytes:
    from distributed.protocol.core import dumps
    from distributed.protocol.utils import pack_frames

    body = pack_frames(dumps({"compression": None, "python": (3, 11, 7), "pickle-protocol": 5}))
    return struct.pack("<Q", len(body)) + body


def test_a_server_that_sends_a_handshake_then_nothing_is_refused_within_seconds(
    study, tmp_path, capsys, monkeypatch
):
    """The probe's check passes (a real handshake); the client then waits for the scheduler's
    reply to its own handshake, with no timeout of its own."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "CONNECT_SECONDS", 1.0)
    srv, held = _answering(_dask_handshake())
    port = srv.getsockname()[1]
    out = tmp_path / "S.json"
    t0 = time.monotonic()
    try:
        rc = _score(study, out, "--scheduler", f"127.0.0.1:{port}")
    finally:
        took = time.monotonic() - t0
        srv.close()
        for c in held:
            c.close()
    err = capsys.readouterr().err
    assert rc == 2 and "--scheduler: " in err and f"127.0.0.1:{port} " in err, err
    assert "Traceback" not in err and took < 20, (took, err)
    assert not out.exists()
    _no_spill(tmp_path)


# -- a polite stop (SIGTERM: timeout, a CI's cancel, kill) while rows are reduced in buckets ------

_TERMINATED = """
import os, signal, sys
from prereg import bucketed
from prereg.cli import main
real = bucketed._mapped
def mapped(payload, task):
    if task[1] == 1:  # the second partition: the spill folder holds the first's
        os.kill(os.getpid(), signal.SIGTERM)
    return real(payload, task)
bucketed._mapped = mapped
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_while_reducing_in_buckets_leaves_no_spill_folder(study, tmp_path):
    """SIGTERM ended the process where it stood and left the spill folder (a copy of the
    inputs' row ids and records) beside the output; it now ends the command as an interrupt
    does: the folder removed, nothing written."""
    import subprocess
    import sys

    from prereg import exits

    root, items, obs = study
    out = tmp_path / "S.json"
    argv = ["--project", str(root), AP, "score", "--items", str(items), "--observations",
            str(obs), "--out", str(out), "--quiet", "--partition-bytes", "8K"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _TERMINATED, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == exits.INTERRUPTED, (done.returncode, done.stderr[-2000:])
    assert "interrupted" in done.stderr and "Traceback" not in done.stderr
    _no_spill(tmp_path)
    assert not out.exists() and not out.with_suffix(".md").exists()


def test_the_sigterm_handler_is_put_back_after_the_buckets(study, tmp_path):
    import signal

    before = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "S.json"
    assert _score(study, out, "--partition-bytes", "8K") == 0
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("extra", [(), ("--workers", "2", "--partition-bytes", "8K")])
@pytest.mark.parametrize("kind", ["unknown", "duplicate"])
def test_a_row_id_of_megabytes_is_not_echoed_whole(study, tmp_path, capsys, extra, kind):
    """An unknown row's id (or a repeated record's key) of 3 MB was printed whole: a 3 MB
    error message. It is cut, as a bad value of the contract is."""
    _root, items, obs = study
    huge = "x" * 3_000_000
    rec = json.dumps({"attempt": 1, "correct": True, "rowId": huge}) + "\n"
    bad = tmp_path / "obs.jsonl"
    bad.write_text(obs.read_text() + rec + (rec if kind == "duplicate" else ""))
    if kind == "duplicate":  # the id registered, so that its second record is the problem
        its = tmp_path / "items.jsonl"
        lines = items.read_text().splitlines(keepends=True)
        first = json.loads(lines[0])["rowId"]
        its.write_text("".join(lines).replace(f'"{first}"', json.dumps(huge)))
        bad.write_text(bad.read_text().replace(f'"{first}"', '"nobody-now"'))
        bad.write_text(
            "".join(x for x in bad.read_text().splitlines(True) if "nobody-now" not in x)
        )
    out = tmp_path / "S.json"
    rc = _score(study, out, *extra, obs=bad, items=its if kind == "duplicate" else None)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert ("unknown row id" if kind == "unknown" else "duplicate attempt") in err, err[:500]
    assert len(err) < 2000, len(err)
    assert not out.exists()


def test_a_manifest_row_of_megabytes_listed_twice_is_not_echoed_whole(study, tmp_path, capsys):
    _root, items, _obs = study
    lines = items.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])["rowId"]
    huge = json.dumps("y" * 3_000_000)
    its = tmp_path / "items.jsonl"
    its.write_text(lines[0].replace(f'"{first}"', huge) * 2 + "".join(lines[1:]))
    out = tmp_path / "S.json"
    rc = _score(study, out, items=its)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "repeats line 1" in err, err[:500]
    assert len(err) < 2000, len(err)
