"""diagnose on hostile sizes and addresses: a simulation count that cannot fit in memory is
refused before any work (it ran out of memory), a malformed scheduler address is refused at
once (a traceback after 40 s), and an address where nothing answers is refused within the
connect timeout (it hung for more than ten minutes)."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import pytest

from prereg import runner
from prereg.cli import main
from prereg.diagnose.command import refuse_beyond_memory, study_bytes
from prereg.errors import UserError
from tests.conftest import ROOT
from tests.diagnose.helpers import AP, compile_example


@pytest.fixture(scope="module")
def ap(tmp_path_factory):
    return compile_example(tmp_path_factory.mktemp("ap"))


def _plan(simulations: int, conditions: int = 3):
    rules = SimpleNamespace(
        HYPOTHESES={"h1": 0, "h2": 0}, GATES=("g",) * 4, ESTIMATES=("e",) * 10,
        CONTRASTS=("c",) * 2,
    )  # fmt: skip
    return SimpleNamespace(rules=rules, simulations=simulations, conditions=(None,) * conditions)


def test_the_memory_bound_by_hand():
    # one study: 120 + 8·2 hypotheses + 4 gates + 24·10 estimates + 40·2 contrasts = 460 bytes
    assert study_bytes(_plan(1).rules) == 460
    # 3 conditions × 1,000 studies × 460 bytes, held twice = 2,760,000 bytes: fits in half of
    # 5,520,000 bytes, not in half of 5,519,998
    refuse_beyond_memory(_plan(1000), memory=5_520_000)
    with pytest.raises(UserError, match=r"--simulations: 1,000 simulated studies .* at most 999"):
        refuse_beyond_memory(_plan(1000), memory=5_519_998)


def test_the_plain_engines_memory_bound_by_hand():
    from prereg.diagnose.plain import refuse_beyond_memory as plain_bound

    # 2 conditions x 1,000 studies x 2,048 bytes = 4,096,000 bytes: fits in half of
    # 8,192,000 bytes, not in half of 8,191,998; at most 8,191,998 // 2 // 4,096 = 999
    plain_bound(1000, 2, 2048, memory=8_192_000)
    with pytest.raises(UserError, match=r"--simulations: 1,000 simulated studies .* at most 999"):
        plain_bound(1000, 2, 2048, memory=8_191_998)


STUDIES = {
    "factorial": [AP, "diagnose"],
    # jev built a list of simulations / 8 tasks first: it grew until the OOM killer came
    "multicorrect": ["jev-multicorrect", "diagnose"],
    # s3 reserved three float64 arrays of --simulations untouched (np.empty) and filled them
    "clusterpower": ["s3-verifier-freeze", "diagnose", str(ROOT / "examples/s3/calibration-sample.jsonl"),
                     "--eligible-task-count", "500", "--eligible-repository-count", "12",
                     "--eligible-pass-items", "210", "--eligible-fail-items", "430"],
}  # fmt: skip


@pytest.mark.parametrize("engine", sorted(STUDIES))
@pytest.mark.parametrize("count", ["9007199254740991", "100000000000"])
def test_a_simulation_count_beyond_memory_is_refused_before_work(
    ap, tmp_path, capsys, count, engine
):
    out = tmp_path / "D.json"
    t0 = time.monotonic()
    project = ap if engine == "factorial" else ROOT
    rc = main(["--project", str(project), *STUDIES[engine], "--simulations", count, "--seed", "1",
               "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "--simulations:" in err and "GiB" in err and "nothing was run" in err, err
    assert time.monotonic() - t0 < 60
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "address",
    ["garbage", "tcp://", "tcp://host", "tcp://h:0", "tcp://h:99999", "http://h:80", "h:80/x",
     "\x00:1", "x" * 5000, "tcp://[zz]:1"],
)  # fmt: skip
def test_a_malformed_scheduler_address_is_refused_at_once(ap, tmp_path, capsys, address):
    out = tmp_path / "D.json"
    t0 = time.monotonic()
    rc = main(["--project", str(ap), AP, "diagnose", "--simulations", "10", "--seed", "1",
               "--out", str(out), "--scheduler", address])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "--scheduler:" in err and "is not a scheduler address" in err, err
    assert "Traceback" not in err and time.monotonic() - t0 < 30
    assert not out.exists()


def test_an_address_where_nothing_answers_is_refused_within_the_connect_timeout(
    ap, tmp_path, capsys, monkeypatch
):
    # a listening socket that never accepts (backlog full): a connection neither succeeds nor
    # is refused, as with a host that drops packets
    monkeypatch.setattr(runner, "CONNECT_SECONDS", 2.0)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)
    port = silent.getsockname()[1]
    fillers = []
    for _ in range(8):  # fill the backlog so the next connection waits
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        fillers.append(s)
    try:
        out = tmp_path / "D.json"
        t0 = time.monotonic()
        rc = main(["--project", str(ap), AP, "diagnose", "--simulations", "10", "--seed", "1",
                   "--out", str(out), "--scheduler", f"tcp://127.0.0.1:{port}"])  # fmt: skip
        took = time.monotonic() - t0
    finally:
        for s in fillers:
            s.close()
        silent.close()
    err = capsys.readouterr().err
    assert rc == 2 and "--scheduler: cannot reach a Dask scheduler" in err, err
    assert took < 60 and not out.exists()


def test_a_closed_port_is_refused_with_its_reason(ap, tmp_path, capsys):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    rc = main(["--project", str(ap), AP, "diagnose", "--simulations", "10", "--seed", "1",
               "--out", str(tmp_path / "D.json"), "--scheduler", f"127.0.0.1:{port}"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and f"cannot reach a Dask scheduler at 127.0.0.1:{port}" in err, err


def _answering(reply: bytes):
    """A local server that accepts every connection and writes ``reply`` (then keeps it open)."""
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []

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
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "is not a Dask scheduler (it answered b'HTTP/1.1'"),
        (b"", "accepted a connection but is not a Dask scheduler (it sent nothing"),
        (b"\x05\x00", "is not a Dask scheduler (it sent b'\\x05\\x00' and stopped"),
    ],
)
def test_an_address_where_something_else_answers_is_refused_without_a_traceback(
    ap, tmp_path, capsys, monkeypatch, reply, needle
):
    """Something that is not a scheduler (an HTTP proxy, a silent service) is refused by the
    probe within the connect timeout; before, the client read b"HTTP/1.1" as a 3.5e18-byte
    message (MemoryError), and its half-built client printed a traceback 40 s later."""
    monkeypatch.setattr(runner, "CONNECT_SECONDS", 2.0)
    srv, held = _answering(reply)
    port = srv.getsockname()[1]
    try:
        out = tmp_path / "D.json"
        t0 = time.monotonic()
        rc = main(["--project", str(ap), AP, "diagnose", "--simulations", "10", "--seed", "1",
                   "--out", str(out), "--scheduler", f"tcp://127.0.0.1:{port}"])  # fmt: skip
        took = time.monotonic() - t0
    finally:
        srv.close()
        for c in held:
            c.close()
    err = capsys.readouterr().err
    assert rc == 2 and f"--scheduler: tcp://127.0.0.1:{port} " in err and needle in err, err
    assert "Traceback" not in err and took < 30 and not out.exists()


@pytest.mark.parametrize("seeds, per_study", [(3, 2048), (1, 2048), (30, 20480), (1000, 682667)])
def test_jev_memory_bound_grows_with_its_seeds(tmp_path, capsys, monkeypatch, seeds, per_study):
    """jev's studies hold figures per seed: the memory bound is taken per seed (its 2,048 bytes
    were measured at the registered 3), so 1,000 seeds are not allowed 3 seeds' memory."""
    import dataclasses

    from prereg.diagnose import plain
    from prereg.engines.multicorrect import diagnose as jev

    real = jev.engine_config

    def more_seeds(config):
        cfg = real(config)
        return dataclasses.replace(cfg, diagnostic_seeds=tuple(range(1, seeds + 1)))

    seen = []

    def bound(sims, conditions, study_bytes, memory=None):
        seen.append(study_bytes)
        raise UserError("stop here")

    monkeypatch.setattr(jev, "engine_config", more_seeds)
    monkeypatch.setattr(plain, "refuse_beyond_memory", bound)
    rc = main(["--project", str(ROOT), "jev-multicorrect", "diagnose", "--simulations", "10",
               "--seed", "1", "--out", str(tmp_path / "D.json")])  # fmt: skip
    assert rc == 2 and "stop here" in capsys.readouterr().err
    assert seen == [per_study]
