"""A session that can never end as recorded (its run folder lost, the collector gone, a start
interrupted under an older prereg that wrote the ledger first) is closed by an explicit abort:
a row of its own with the reason and the attested spend, an event in the append-only log, the
session's row untouched.  Later sessions of the corpus may then start; the abort is refused for
a run that is unknown, ended or aborted, before the session's start, or without a reason; a
hand-edited abort is refused like any tampered row; an older ledger is migrated."""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.ledger import MIGRATIONS, SCHEMA_VERSION, Ledger, LedgerConflict
from prereg.ledger import _amount as ledger_amount


def _stuck(path: Path) -> Path:
    """A ledger whose session r1 started and never ended."""
    with Ledger(path) as led:
        led.freeze(seed="s1", generator_id="g/v1", corpus_digest="sha256:c1",
                   preregistration_digest="sha256:p1", spec_digest="sha256:s",
                   bundle_digest="sha256:b", at="t0", at_ms=0)  # fmt: skip
        led.start_session(run_id="r1", seed="s1", corpus_digest="sha256:c1",
                          preregistration_digest="sha256:p1", bundle_digest="sha256:b",
                          started_at="t10", started_at_ms=10)  # fmt: skip
    return path


def _start(led: Ledger, run: str, at_ms: int):
    return led.start_session(run_id=run, seed="s1", corpus_digest="sha256:c1",
                             preregistration_digest="sha256:p1", bundle_digest="sha256:b",
                             started_at=f"t{at_ms}", started_at_ms=at_ms)  # fmt: skip


def _abort(led: Ledger, run: str = "r1", at_ms: int = 20, reason: str = "run folder lost", **kw):
    spend = {"calls": 3, "tokens": 40, "usd": Decimal("0.02"), **kw}
    return led.abort_session(run_id=run, reason=reason, at=f"t{at_ms}", at_ms=at_ms, **spend)


def test_an_aborted_session_no_longer_blocks_the_corpus_and_its_spend_counts(tmp_path):
    path = _stuck(tmp_path / "l.sqlite3")
    with Ledger(path) as led:
        with pytest.raises(LedgerConflict) as e:
            _start(led, "r2", 30)
        assert e.value.kind == "session-open"  # the defect: stuck for ever without an abort
        row = _abort(led)
        assert (row["run_id"], row["reason"], row["usd"]) == ("r1", "run folder lost", "0.02")
        # a later session starts; the aborted run is not a prior run of its lineage
        assert _start(led, "r2", 30) == []
        state = led.state()
        # the session's row is as it was: no evidence, no spend written into it
        r1 = next(s for s in state["sessions"] if s["runId"] == "r1")
        assert r1["evidenceDigest"] is None and r1["calls"] is None
        assert state["aborts"] == [
            {"runId": "r1", "reason": "run folder lost", "calls": 3, "tokens": 40,
             "usd": "0.02", "at": "t20", "atMs": 20},
        ]  # fmt: skip
        # the spend of the aborted session is recorded spend (3 calls, 40 tokens, USD 0.02)
        assert state["spend"] == {"calls": 3, "tokens": 40, "usd": "0.02"}
        assert [(e["kind"], e["runId"], e["detail"]) for e in state["events"]] == [
            ("freeze", None, "sha256:c1"),
            ("session-start", "r1", "sha256:b"),
            ("session-abort", "r1", "run folder lost"),
            ("session-start", "r2", "sha256:b"),
        ]


def test_abort_refusals(tmp_path):
    path = _stuck(tmp_path / "l.sqlite3")
    with Ledger(path) as led:
        with pytest.raises(LedgerConflict) as e:
            _abort(led, run="nope")
        assert e.value.kind == "run-unknown"
        with pytest.raises(LedgerConflict) as e:
            _abort(led, at_ms=5)  # before the session's start at 10
        assert e.value.kind == "instant-order"
        with pytest.raises(ValueError, match="reason"):
            _abort(led, reason="  ")
        with pytest.raises(ValueError, match="negative"):
            _abort(led, usd=Decimal("-0.01"))
        with pytest.raises(ValueError, match="negative"):
            _abort(led, calls=-1)
        _abort(led)
        with pytest.raises(LedgerConflict, match="was aborted at t20") as e:
            _abort(led, at_ms=25)
        assert e.value.kind == "run-ended"
        with pytest.raises(LedgerConflict, match="was aborted") as e:
            led.end_session(run_id="r1", evidence_digest="sha256:e", calls=0, tokens=0,
                            usd=Decimal(0), at="t30")  # fmt: skip
        assert e.value.kind == "run-ended"
        # an ended session is never aborted
        _start(led, "r2", 30)
        led.end_session(run_id="r2", evidence_digest="sha256:e2", calls=0, tokens=0,
                        usd=Decimal(0), at="t40")  # fmt: skip
        with pytest.raises(LedgerConflict, match="never aborted") as e:
            _abort(led, run="r2", at_ms=50)
        assert e.value.kind == "run-ended"
        # nor may a session start before the ledger's last event
        with pytest.raises(LedgerConflict, match="before the ledger's last event") as e:
            _start(led, "r0", 25)
        assert e.value.kind == "instant-order"
        assert [a["run_id"] for a in led.aborted()] == ["r1"]


@pytest.mark.parametrize(
    "sql, needle",
    [
        ("UPDATE aborts SET reason = 'nothing happened'", "table aborts, run 'r1': its session-abort event"),
        ("DELETE FROM events WHERE kind = 'session-abort'", "table aborts, run 'r1': its session-abort event"),
        ("DELETE FROM aborts", "a session-abort event of seed 's1', run 'r1' has no row"),
        ("UPDATE aborts SET usd = '-5'", "table aborts, run 'r1': usd '-5' is not a non-negative amount"),
        ("UPDATE aborts SET calls = -1", "table aborts, run 'r1': calls -1 is not a non-negative"),
        ("UPDATE aborts SET at_ms = 1", "table aborts, run 'r1': at_ms 1 is not an instant after its start"),
    ],
)  # fmt: skip
def test_a_hand_edited_abort_is_refused_at_its_row(tmp_path, sql, needle):
    path = _stuck(tmp_path / "l.sqlite3")
    with Ledger(path) as led:
        _abort(led)
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()
    with pytest.raises(UserError) as e:
        Ledger(path)
    assert f"{path}: tampered or damaged ledger: " in e.value.message
    assert needle in e.value.message, e.value.message


def test_a_version_1_ledger_is_migrated_and_keeps_its_rows(tmp_path):
    path = tmp_path / "v1.sqlite3"
    db = sqlite3.connect(path)  # as prereg wrote it at schema version 1 (no application id)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (1)")
    for statement in MIGRATIONS[0]:
        db.execute(statement)
    db.execute("INSERT INTO seeds VALUES ('s1', 'g/v1', 'sha256:c1', 'sha256:p1', 'sha256:s',"
               " 'sha256:b', 't0', 0)")  # fmt: skip
    db.execute("INSERT INTO events (kind, seed, run_id, at, detail) VALUES"
               " ('freeze', 's1', NULL, 't0', 'sha256:c1')")  # fmt: skip
    db.commit()
    db.close()
    assert SCHEMA_VERSION == 2
    with Ledger(path) as led:
        assert led.version == 2 and led.aborted() == []
        assert [s["seed"] for s in led.state()["seeds"]] == ["s1"]
        _start(led, "r1", 10)
        _abort(led)
        assert [a["run_id"] for a in led.aborted("sha256:c1")] == ["r1"]


def test_the_command_records_the_abort_and_refuses_with_the_ledgers_path(tmp_path, capsys):
    path = _stuck(tmp_path / "l.sqlite3")

    def run(*args) -> int:
        return main(["ledger-abort", str(path), *map(str, args)])

    base = ["--calls", 3, "--tokens", 40, "--usd", "0.02"]
    cases = [
        (["nope", "--reason", "x", *base], "error: run-unknown: " + f"{path}: run 'nope'"),
        (["r1", "--reason", "x", *base, "--now", "1970-01-01T00:00:00.005Z"], "instant-order"),
        (["r1", "--reason", " ", *base], "--reason: say why"),
        (["r1", "--reason", "x", "--calls", 3, "--tokens", 40, "--usd", "-1"], "--usd: '-1'"),
        (["r1", "--reason", "x", "--calls", -3, "--tokens", 40, "--usd", "1"], "--calls: must not"),
    ]
    for args, needle in cases:
        assert run(*args) == 2
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err, err
    with Ledger(path) as led:
        assert led.aborted() == []  # nothing recorded by a refusal
    assert run("r1", "--reason", "collector crashed", *base, "--now", "2026-10-15T09:35:00Z") == 0
    out = capsys.readouterr().out
    assert f"aborted session 'r1' at 2026-10-15T09:35:00.000Z in {path}: collector crashed" in out
    with Ledger(path) as led:
        assert [(a["run_id"], a["reason"], a["usd"]) for a in led.aborted()] == [
            ("r1", "collector crashed", "0.02")
        ]
    missing = tmp_path / "none.sqlite3"
    assert main(["ledger-abort", str(missing), "r1", "--reason", "x", *map(str, base)]) == 2
    assert f"{missing}: no ledger there" in capsys.readouterr().err and not missing.exists()


@pytest.mark.parametrize(
    "value, words",
    [
        ("99999999999999999999999", "is outside ±(2^53 − 1)"),  # an OverflowError traceback
        ("9223372036854775808", "is outside ±(2^53 − 1)"),  # one past SQLite's integers
        ("1_000", "invalid int value: '1_000'"),  # Python's int() took these
        ("١٢", "invalid int value: '١٢'"),
    ],
)
def test_a_spend_count_is_an_integer_as_every_command_takes_it(tmp_path, capsys, value, words):
    path = _stuck(tmp_path / "l.sqlite3")
    before = path.read_bytes()
    argv = ["ledger-abort", str(path), "r1", "--reason", "lost", "--tokens", "1", "--usd", "1"]
    with pytest.raises(SystemExit) as done:
        main([*argv, "--calls", value])
    assert done.value.code == 2
    assert words in capsys.readouterr().err
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "value",
    ["1e999999", "9e999999", "1000000000000", "1E+12", "0.0000000000001", "1_0", "NaN", "inf",
     "-0.01", "", "٣"],
)  # fmt: skip
def test_a_usd_amount_is_bounded_so_that_sums_are_exact(tmp_path, capsys, value):
    """An attested USD amount is a decimal below 10^12 of at most 12 places: 1e999999 was
    taken, two of 9e999999 made the spend's sum overflow (a traceback), and amounts of more
    than 28 digits were summed rounded (the sums now carry 60 digits, and any sum that would
    round raises instead)."""
    path = _stuck(tmp_path / "l.sqlite3")
    before = path.read_bytes()
    rc = main(["ledger-abort", str(path), "r1", "--reason", "lost", "--calls", "1", "--tokens",
               "1", "--usd", value])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and f"--usd: {value!r} is not an amount in USD" in err, err
    assert "Traceback" not in err and path.read_bytes() == before


def test_the_largest_amounts_sum_exactly(tmp_path):
    most = Decimal("999999999999.999999999999")  # below 10^12, 12 places: 24 digits
    assert ledger_amount(str(most)) == most and ledger_amount(str(most + 1)) is None
    path = _stuck(tmp_path / "l.sqlite3")
    with Ledger(path) as led:
        _abort(led, usd=most)
        _start(led, "r2", 30)
        _abort(led, run="r2", at_ms=40, usd=Decimal("0.000000000001"))
        assert str(led.spend()["usd"]) == "1000000000000.000000000000"
