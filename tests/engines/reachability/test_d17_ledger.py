"""The seed ledger (prereg.ledger): conflicts, many concurrent writers, a writer killed with
SIGKILL in the middle of a transaction, the schema version and its migrations."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import time
from decimal import Decimal
from pathlib import Path

import pytest

from prereg.errors import UserError
from prereg.ledger import MIGRATIONS, SCHEMA_VERSION, Ledger, LedgerConflict

CTX = mp.get_context("spawn")  # fresh interpreters: nothing shared but the database file


def _freeze(led: Ledger, seed: str, corpus: str, prereg: str = "sha256:p1", at_ms: int = 0):
    return led.freeze(
        seed=seed,
        generator_id="gen/v1",
        corpus_digest=corpus,
        preregistration_digest=prereg,
        spec_digest="sha256:s",
        bundle_digest="sha256:b-" + corpus,
        at=f"t{at_ms}",
        at_ms=at_ms,
    )


def _start(led: Ledger, run: str, seed: str, corpus: str, at_ms: int, prereg: str = "sha256:p1"):
    return led.start_session(
        run_id=run,
        seed=seed,
        corpus_digest=corpus,
        preregistration_digest=prereg,
        bundle_digest="sha256:b",
        started_at=f"t{at_ms}",
        started_at_ms=at_ms,
    )


def test_freeze_conflicts_and_idempotence(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as led:
        assert _freeze(led, "s1", "sha256:c1").recorded
        again = _freeze(led, "s1", "sha256:c1")
        assert not again.recorded and again.seed["corpus_digest"] == "sha256:c1"
        with pytest.raises(LedgerConflict) as e:
            _freeze(led, "s1", "sha256:c2")
        assert e.value.kind == "seed-corpus"
        with pytest.raises(LedgerConflict) as e:
            _freeze(led, "s2", "sha256:c1", prereg="sha256:p2")  # same corpus, other prereg
        assert e.value.kind == "corpus-preregistration"
        state = led.state()
    assert [s["seed"] for s in state["seeds"]] == ["s1"]
    assert [e["kind"] for e in state["events"]] == ["freeze"]


def test_sessions_follow_one_another(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as led:
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r1", "s1", "sha256:c1", 10)
        assert e.value.kind == "seed-not-frozen"
        _freeze(led, "s1", "sha256:c1")
        assert _start(led, "r1", "s1", "sha256:c1", 10) == []
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r2", "s1", "sha256:c1", 20)
        assert e.value.kind == "session-open"
        led.end_session(
            run_id="r1", evidence_digest="sha256:e1", calls=5, tokens=7, usd=Decimal("0.25"), at="x"
        )
        with pytest.raises(LedgerConflict) as e:
            led.end_session(
                run_id="r1", evidence_digest="sha256:e", calls=1, tokens=1, usd=Decimal(0), at="x"
            )
        assert e.value.kind == "run-ended"
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r1", "s1", "sha256:c1", 30)
        assert e.value.kind == "run-reused"
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r2", "s1", "sha256:c1", 10)  # not after the earlier start
        assert e.value.kind == "session-open"
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r2", "s1", "sha256:c1", 30, prereg="sha256:p2")
        assert e.value.kind == "corpus-preregistration"
        prior = _start(led, "r2", "s1", "sha256:c1", 30)
        assert [p["run_id"] for p in prior] == ["r1"] and prior[0]["evidence_digest"] == "sha256:e1"
        # the corpus is now observed under p1: another seed's freeze of it under p2 is refused
        with pytest.raises(LedgerConflict) as e:
            _freeze(led, "s9", "sha256:c1", prereg="sha256:p2")
        assert e.value.kind == "corpus-preregistration"
        assert led.spend() == {"calls": 5, "tokens": 7, "usd": Decimal("0.25")}


def _writer(path: str, seed: str, corpus: str, go, results) -> None:
    go.wait()
    try:
        with Ledger(path) as led:
            r = _freeze(led, seed, corpus)
        results.put((corpus, "recorded" if r.recorded else "same"))
    except LedgerConflict as exc:
        results.put((corpus, exc.kind))
    except Exception as exc:  # reported to the test, which fails on it
        results.put((corpus, f"error {type(exc).__name__}: {exc}"))


def test_concurrent_writers_exactly_one_freeze_per_seed_wins(tmp_path):
    path = str(tmp_path / "ledger.sqlite3")
    go = CTX.Event()
    results = CTX.Queue()
    jobs = []
    # 12 processes, 3 seeds, each seed claimed with 4 different corpora at once
    for k in range(12):
        seed = f"seed-{k % 3}"
        jobs.append(CTX.Process(target=_writer, args=(path, seed, f"sha256:c{k}", go, results)))
    for j in jobs:
        j.start()
    time.sleep(0.5)  # let the interpreters start, then release them together
    go.set()
    got = [results.get(timeout=60) for _ in jobs]
    for j in jobs:
        j.join(timeout=60)
        assert j.exitcode == 0
    outcomes = dict(got)
    assert not [v for v in outcomes.values() if v.startswith("error")], outcomes
    with Ledger(path) as led:
        assert led.integrity() == "ok"
        state = led.state()
    winners = {c for c, v in outcomes.items() if v == "recorded"}
    assert len(winners) == 3  # one per seed
    assert sorted(outcomes.values()).count("seed-corpus") == 9
    frozen = {s["seed"]: s["corpusDigest"] for s in state["seeds"]}
    assert set(frozen) == {"seed-0", "seed-1", "seed-2"} and set(frozen.values()) == winners
    assert len(state["events"]) == 3


def _killed_writer(path: str, marker: str) -> None:
    def pause(what: str) -> None:
        if what == "freeze":
            Path(marker).write_text("inside")
            time.sleep(60)

    with Ledger(path, before_commit=pause) as led:
        _freeze(led, "victim", "sha256:half")


def test_kill_9_in_the_middle_of_a_write_records_nothing(tmp_path):
    path = str(tmp_path / "ledger.sqlite3")
    with Ledger(path) as led:
        _freeze(led, "before", "sha256:c0")
    for round_ in range(3):
        marker = tmp_path / f"inside-{round_}"
        p = CTX.Process(target=_killed_writer, args=(path, str(marker)))
        p.start()
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline and p.is_alive()
            time.sleep(0.01)
        os.kill(p.pid, signal.SIGKILL)  # the insert and its event are written, not committed
        p.join()
        assert p.exitcode == -signal.SIGKILL
        with Ledger(path) as led:
            assert led.integrity() == "ok"
            assert led.seed("victim") is None
            state = led.state()
            assert [s["seed"] for s in state["seeds"]] == ["before"]
            assert [e["seed"] for e in state["events"]] == ["before"]
    with Ledger(path) as led:  # the lock died with the process: a later writer proceeds
        assert _freeze(led, "victim", "sha256:half").recorded


def test_schema_version_and_refusal_of_a_newer_one(tmp_path):
    path = tmp_path / "l.sqlite3"
    with Ledger(path) as led:
        assert led.version == SCHEMA_VERSION
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    db.commit()
    db.close()
    with pytest.raises(UserError, match="newer than this prereg knows"):
        Ledger(path)


def test_a_legacy_ledger_without_application_id_is_still_opened_and_a_foreign_file_refused(
    tmp_path,
):
    path = tmp_path / "legacy.sqlite3"
    db = sqlite3.connect(path)  # a ledger written before the application id: its tables only
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (1)")
    db.commit()
    db.close()
    db = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        db.execute(statement)
    db.commit()
    db.close()
    with Ledger(path) as led:
        assert led.version == SCHEMA_VERSION and led.state()["seeds"] == []
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(UserError, match="not an SQLite database"):
        Ledger(junk)


def _busy_writer(path: str, start: int, started) -> None:
    with Ledger(path) as led:
        for k in range(start, start + 100_000):
            _freeze(led, f"s{k}", f"sha256:c{k}", at_ms=k)
            if k == start:
                started.set()  # one seed committed: from here on a kill lands mid-stream


def test_kill_9_at_random_moments_leaves_whole_records(tmp_path):
    """A writer freezing seed after seed, killed at an arbitrary moment: every seed recorded has
    its event and no event lacks its seed; the next writer carries on."""
    import random

    path = str(tmp_path / "ledger.sqlite3")
    rng = random.Random(20261201)
    start = 0
    for _ in range(4):
        started = CTX.Event()
        p = CTX.Process(target=_busy_writer, args=(path, start, started))
        p.start()
        # Kill at a random moment after the writer's first commit (however loaded the machine
        # is, so the kill cannot land before anything was written).
        assert started.wait(timeout=120), "the writer never committed its first seed"
        time.sleep(rng.random() * 0.3)
        os.kill(p.pid, signal.SIGKILL)
        p.join()
        with Ledger(path) as led:
            assert led.integrity() == "ok"
            state = led.state()
        seeds = {s["seed"] for s in state["seeds"]}
        events = [e["seed"] for e in state["events"]]
        assert len(events) == len(set(events)) and set(events) == seeds
        assert f"s{start}" in seeds  # this writer's first commit survived the kill
        start = 1 + max((int(s[1:]) for s in seeds), default=-1)
    assert start > 0  # the writers did write


def test_a_session_starts_no_earlier_than_the_ledgers_last_event(tmp_path):
    """Events run forwards: a start before the latest instant the ledger records (here the end
    of the previous session at 50 ms, after its start at 10) is refused, as is an end before
    its own start; a start at that instant or later is recorded."""
    with Ledger(tmp_path / "l.sqlite3") as led:
        _freeze(led, "s1", "sha256:c1", at_ms=5)
        _start(led, "r1", "s1", "sha256:c1", 10)
        with pytest.raises(LedgerConflict, match="before the session's start") as e:
            led.end_session(run_id="r1", evidence_digest="sha256:e1", calls=0, tokens=0,
                            usd=Decimal(0), at="t9", at_ms=9)  # fmt: skip
        assert e.value.kind == "instant-order"
        led.end_session(run_id="r1", evidence_digest="sha256:e1", calls=0, tokens=0,
                        usd=Decimal(0), at="t50", at_ms=50)  # fmt: skip
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r2", "s1", "sha256:c1", 30)  # after r1's start, before its end
        assert e.value.kind == "instant-order"
        assert "before the ledger's last event, the end of session r1 at" in e.value.message
        assert "1970-01-01T00:00:00.050Z" in e.value.message
        assert [p["run_id"] for p in _start(led, "r2", "s1", "sha256:c1", 50)] == ["r1"]
        assert [s["ended_at_ms"] for s in led.sessions()] == [50, None]
