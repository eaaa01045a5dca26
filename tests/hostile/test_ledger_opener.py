"""The ledger's one opener (prereg.ledger): anything at the ledger path that is not a sound
ledger is refused with its location, never adopted as a fresh ledger; a hand-edited ledger
(rows out of step with the event log, a negative or malformed spend) is refused at its table
and row; a fresh ledger appears whole or not at all."""

from __future__ import annotations

import os
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prereg.errors import UserError
from prereg.ledger import APPLICATION_ID, Ledger, open_existing


def _filled(path: Path) -> Path:
    with Ledger(path) as led:
        led.freeze(seed="s1", generator_id="g/v1", corpus_digest="sha256:c1",
                   preregistration_digest="sha256:p1", spec_digest="sha256:s",
                   bundle_digest="sha256:b", at="t0", at_ms=0)  # fmt: skip
        led.start_session(run_id="r1", seed="s1", corpus_digest="sha256:c1",
                          preregistration_digest="sha256:p1", bundle_digest="sha256:b",
                          started_at="t1", started_at_ms=1)  # fmt: skip
        led.end_session(run_id="r1", evidence_digest="sha256:e1", calls=5, tokens=7,
                        usd=Decimal("0.25"), at="t2")  # fmt: skip
    return path


def _edit(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()


def test_nothing_there_is_no_ledger_and_a_fresh_one_carries_the_application_id(tmp_path):
    path = tmp_path / "sub" / "ledger.sqlite3"
    assert open_existing(path) is None and not path.exists()
    with Ledger(path) as led:
        assert led.state()["seeds"] == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda p: p.write_bytes(b""), "an empty file (0 bytes)"),
        (lambda p: p.mkdir(), "a folder"),
        (lambda p: os.mkfifo(p), "a FIFO"),
        (lambda p: p.write_bytes(b"SQLite format 2\x00" + b"\x00" * 100), "not an SQLite"),
        (lambda p: p.symlink_to(p.parent / "nowhere"), "a link to nothing"),
    ],
    ids=["empty", "folder", "fifo", "foreign-bytes", "dangling-link"],
)
def test_what_is_not_a_ledger_is_refused_with_its_location(tmp_path, make, needle):
    path = tmp_path / "ledger.sqlite3"
    make(path)
    for opener in (lambda: Ledger(path), lambda: open_existing(path)):
        with pytest.raises(UserError) as e:
            opener()
        assert str(e.value).startswith(f"{path}: ") and needle in str(e.value)
    if needle.startswith("an empty"):
        assert path.stat().st_size == 0  # not turned into a ledger


def test_another_applications_database_is_refused(tmp_path):
    path = tmp_path / "foreign.sqlite3"
    _edit(path, "CREATE TABLE notes (body TEXT)")
    with pytest.raises(UserError, match="not a prereg ledger .*tables notes"):
        open_existing(path)
    with pytest.raises(UserError, match="not a prereg ledger"):
        Ledger(path)
    empty_db = tmp_path / "nothing.sqlite3"
    _edit(empty_db, "PRAGMA user_version = 3")  # a valid SQLite header and no tables
    with pytest.raises(UserError, match="not a prereg ledger"):
        open_existing(empty_db)


@pytest.mark.parametrize(
    "sql, needle",
    [
        ("UPDATE sessions SET usd = '-0.25'", "table sessions, run 'r1': usd '-0.25'"),
        ("UPDATE sessions SET usd = 'lots'", "table sessions, run 'r1': usd 'lots'"),
        ("UPDATE sessions SET usd = 'NaN'", "usd 'NaN' is not a non-negative amount"),
        ("UPDATE sessions SET calls = -5", "table sessions, run 'r1': calls -5"),
        ("UPDATE sessions SET tokens = 'x'", "tokens 'x' is not a non-negative integer"),
        ("UPDATE sessions SET evidence_digest = 'sha256:forged'", "session-end event"),
        ("UPDATE seeds SET corpus_digest = 'sha256:other'", "table seeds, seed 's1'"),
        ("UPDATE seeds SET frozen_at_ms = 'soon'", "frozen_at_ms 'soon' is not an integer"),
        ("DELETE FROM events WHERE kind = 'session-start'", "session-start event"),
        ("INSERT INTO events (kind, seed, at, detail) VALUES ('freeze', 's9', 'x', 'y')",
         "a freeze event of seed 's9' has no row"),
        ("INSERT INTO events (kind, seed, at, detail) VALUES ('erase', 's1', 'x', 'y')",
         "unknown kind 'erase'"),
        ("UPDATE sessions SET usd = NULL, calls = NULL, tokens = NULL, evidence_digest = NULL",
         "session-end event"),
    ],
)  # fmt: skip
def test_a_tampered_ledger_is_refused_at_its_table_and_row(tmp_path, sql, needle):
    path = _filled(tmp_path / "ledger.sqlite3")
    _edit(path, sql)
    with pytest.raises(UserError) as e:
        open_existing(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: tampered or damaged ledger: ") and needle in msg, msg


def test_a_negative_spend_is_not_recorded(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    with Ledger(path) as led:
        led.freeze(seed="s1", generator_id="g/v1", corpus_digest="sha256:c1",
                   preregistration_digest="sha256:p1", spec_digest="sha256:s",
                   bundle_digest="sha256:b", at="t0", at_ms=0)  # fmt: skip
        led.start_session(run_id="r1", seed="s1", corpus_digest="sha256:c1",
                          preregistration_digest="sha256:p1", bundle_digest="sha256:b",
                          started_at="t1", started_at_ms=1)  # fmt: skip
        for calls, usd in ((-1, Decimal(0)), (0, Decimal("-0.01")), (0, Decimal("NaN"))):
            with pytest.raises(ValueError):
                led.end_session(run_id="r1", evidence_digest="sha256:e", calls=calls, tokens=0,
                                usd=usd, at="t2")  # fmt: skip
        assert led.sessions()[0]["evidence_digest"] is None


def test_the_cli_reports_an_empty_ledger_file_and_writes_nothing(tmp_path, capsys):
    from prereg.cli import main

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "d17mf-ledger.sqlite3").write_bytes(b"")
    rc = main(["--project", str(root), "d17-multifact", "ledger-show", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "d17mf-ledger.sqlite3: an empty file (0 bytes)" in err, err
    assert "Traceback" not in err
    assert (tmp_path / "d17mf-ledger.sqlite3").stat().st_size == 0


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    head=st.sampled_from([b"", b"SQLite format 3\x00"]),
    body=st.binary(max_size=3000),
)
def test_any_bytes_at_the_ledger_path_are_a_ledger_or_a_located_refusal(tmp_path, head, body):
    path = tmp_path / "ledger.sqlite3"
    path.write_bytes(head + body)
    try:
        led = open_existing(path)
    except UserError as exc:
        assert str(exc).startswith(f"{path}: ")
    else:  # only a database that really is a ledger opens
        assert led is not None
        with led:
            assert led.integrity() == "ok"
    finally:
        for p in tmp_path.iterdir():
            p.unlink()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    column=st.sampled_from(["usd", "calls", "tokens", "evidence_digest", "started_at_ms"]),
    value=st.one_of(st.integers(-10**6, 10**6), st.text(max_size=12), st.none(),
                    st.floats(allow_nan=True)),
)  # fmt: skip
def test_any_edit_of_a_session_row_is_refused_or_still_sound(tmp_path, column, value):
    path = _filled(tmp_path / "ledger.sqlite3")
    db = sqlite3.connect(path)
    try:
        db.execute(f"UPDATE sessions SET {column} = ?", (value,))  # noqa: S608 (fixed names)
        db.commit()
        edited = True
    except sqlite3.IntegrityError:  # the table's own CHECK refuses the edit
        edited = False
    finally:
        db.close()
    try:
        if not edited:
            return
        led = open_existing(path)
    except UserError as exc:
        assert str(exc).startswith(f"{path}: tampered or damaged ledger: table sessions")
    else:
        with led:
            spend = led.spend()  # whatever opens has a sound, non-negative spend
            assert spend["calls"] >= 0 and spend["tokens"] >= 0 and spend["usd"] >= 0
    finally:
        for p in tmp_path.iterdir():
            p.unlink()
