"""The seed ledger: an embedded SQLite database of frozen seeds, collection sessions and spend.

A study that collects observations on a generated corpus keeps one ledger under its artifact
root.  It records

- **seeds**: a seed frozen with the corpus it generated and the preregistration that corpus was
  prepared under (and the bundle that carried it);
- **sessions**: each collection session's run id, start instant and, once ended, the digest of
  its evidence and the spend it attested;
- **aborts**: a session that can never end as recorded (its run folder lost, the collector
  gone) closed by an explicit, attested abort with its reason and spend (schema version 2);
  the session's row stays as it was, so the history is never rewritten;
- **events**: an append-only log of every change, written in the same transaction as the
  change itself.

Every change runs in one ``BEGIN IMMEDIATE`` transaction (the write lock is taken before the
checks read anything, so two writers never both pass a check that only one may pass), in WAL
mode with ``synchronous=FULL``: a process killed in the middle of a write leaves the database
as it was before that write.  The schema carries its version (table ``schema_version``); the
migrations in :data:`MIGRATIONS` bring an older database up to :data:`SCHEMA_VERSION`, and a
database written by a newer schema is refused.

The ledger knows no study: the conflicts it refuses are raised as :class:`LedgerConflict` with
a ``kind`` (one of :data:`CONFLICTS`), which the engine turns into the study's refusal code.
Instants are stored as integer milliseconds since the epoch (UTC) beside their ISO text.
"""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

from prereg.errors import UserError

SCHEMA_VERSION = 2
# PRAGMA application_id of every ledger ("preg"): an SQLite file without it is not a ledger
APPLICATION_ID = 0x70726567
# the tables of a ledger at each schema version (one written before the application id was
# set is known by them)
_TABLES = (
    frozenset({"schema_version", "seeds", "sessions", "events"}),
    frozenset({"schema_version", "seeds", "sessions", "events", "aborts"}),
)
_SQLITE_HEADER = b"SQLite format 3\x00"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# the version id of the document :meth:`Ledger.state` returns (prereg.outputs conventions)
STATE_VERSION = "prereg-ledger-state/v2"

# Each migration brings the schema from version i to version i + 1 (index i).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE seeds (
            seed TEXT PRIMARY KEY,
            generator_id TEXT NOT NULL,
            corpus_digest TEXT NOT NULL,
            preregistration_digest TEXT NOT NULL,
            spec_digest TEXT NOT NULL,
            bundle_digest TEXT NOT NULL,
            frozen_at TEXT NOT NULL,
            frozen_at_ms INTEGER NOT NULL
        )""",
        "CREATE INDEX seeds_corpus ON seeds (corpus_digest)",
        """CREATE TABLE sessions (
            run_id TEXT PRIMARY KEY,
            seed TEXT NOT NULL REFERENCES seeds (seed),
            corpus_digest TEXT NOT NULL,
            preregistration_digest TEXT NOT NULL,
            bundle_digest TEXT NOT NULL,
            started_at TEXT NOT NULL,
            started_at_ms INTEGER NOT NULL,
            evidence_digest TEXT,
            calls INTEGER,
            tokens INTEGER,
            usd TEXT,
            CHECK ((evidence_digest IS NULL) = (calls IS NULL)
                   AND (calls IS NULL) = (tokens IS NULL) AND (tokens IS NULL) = (usd IS NULL))
        )""",
        "CREATE INDEX sessions_corpus ON sessions (corpus_digest)",
        """CREATE TABLE events (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            seed TEXT NOT NULL,
            run_id TEXT,
            at TEXT NOT NULL,
            detail TEXT NOT NULL
        )""",
    ),
    (
        """CREATE TABLE aborts (
            run_id TEXT PRIMARY KEY REFERENCES sessions (run_id),
            reason TEXT NOT NULL,
            calls INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            usd TEXT NOT NULL,
            at TEXT NOT NULL,
            at_ms INTEGER NOT NULL
        )""",
        # the instant a session ended (NULL for one ended under schema version 1)
        "ALTER TABLE sessions ADD COLUMN ended_at_ms INTEGER",
    ),
)

CONFLICTS = (
    "seed-corpus",  # the seed is frozen under another corpus
    "corpus-preregistration",  # the corpus is frozen or observed under another preregistration
    "seed-not-frozen",  # a session of a seed that was never frozen
    "run-reused",  # a run id already recorded
    "session-open",  # an earlier session of the corpus has not ended
    "run-unknown",  # ending a session that never started
    "run-ended",  # ending a session twice, or ending or aborting one that was aborted
    "instant-order",  # a session start before the seed's freeze
)


class LedgerConflict(Exception):
    """A change the ledger refuses; ``kind`` is one of :data:`CONFLICTS`."""

    def __init__(self, kind: str, message: str, existing: dict[str, Any] | None = None):
        assert kind in CONFLICTS, kind
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.existing = existing or {}


@dataclass(frozen=True)
class Freeze:
    """The result of :meth:`Ledger.freeze`: ``recorded`` is False when the same seed, corpus and
    preregistration were frozen before (nothing new is written then)."""

    recorded: bool
    seed: dict[str, Any]


def _rows(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


class Ledger:
    """One open ledger.  ``Ledger(path)`` creates or migrates the database; use it as a context
    manager (or call :meth:`close`).

    ``before_commit`` (for tests) is called inside every write transaction after its changes
    and before ``COMMIT``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float = 30.0,
        before_commit: Callable[[str], None] | None = None,
        create: bool = True,
    ):
        self.path = Path(path)
        self._before_commit = before_commit
        if not os.path.lexists(self.path):
            if not create:
                raise UserError(f"{self.path}: no ledger there")
            _create(self.path, timeout)
        _check_file(self.path)
        try:
            self._db = sqlite3.connect(
                f"file:{quote(str(self.path.absolute()))}?mode=rw",
                uri=True,
                timeout=timeout,
                isolation_level=None,
            )
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"{self.path}: cannot open the ledger: {exc}") from None
        try:
            self._setup(timeout)
            self._audit()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise UserError(f"{self.path}: not a usable ledger database: {exc}") from None
        except BaseException:
            self._db.close()
            raise

    # -- connection and schema ------------------------------------------------------------------

    def _setup(self, timeout: float) -> None:
        db = self._db
        db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        app = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        } - {"sqlite_sequence"}
        # a ledger carries the application id; one written before it was set is known by its
        # tables (exactly the ledger's)
        if app != APPLICATION_ID and not (app == 0 and tables in _TABLES):
            raise UserError(
                f"{self.path}: not a prereg ledger (an SQLite database of another application:"
                f" application id {app}, tables {', '.join(sorted(tables)) or 'none'});"
                " refusing to use it"
            )
        deadline = time.monotonic() + timeout
        while True:  # switching to WAL needs a moment alone with the file
            try:
                mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        if str(mode).lower() != "wal":
            raise sqlite3.DatabaseError(f"journal mode {mode!r}, not WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        with self._write("migrate") as cur:
            _migrate(cur, self.path)

    def _audit(self) -> None:
        """Refuse a damaged or hand-edited ledger, naming the table and row: the integrity
        check, every column's type and range (no negative spend), and every row matched by its
        event in the append-only log (and every event by its row)."""
        db = self._db
        where = f"{self.path}: tampered or damaged ledger"
        check = self.integrity()
        if check != "ok":
            raise UserError(f"{where}: integrity check: {check[:300]}")
        bad_fk = db.execute("PRAGMA foreign_key_check").fetchall()
        if bad_fk:
            raise UserError(f"{where}: table {bad_fk[0][0]}: row {bad_fk[0][1]} names no seed")
        events: dict[tuple[Any, Any, Any], list[Any]] = {}
        for e in _rows(db.execute("SELECT * FROM events ORDER BY n")):
            at = f"{where}: table events, row {e['n']}"
            if e["kind"] not in ("freeze", "session-start", "session-end", "session-abort"):
                raise UserError(f"{at}: unknown kind {e['kind']!r}")
            for col in ("seed", "at", "detail"):
                if not isinstance(e[col], str):
                    raise UserError(f"{at}: {col} {e[col]!r} is not text")
            events.setdefault((e["kind"], e["seed"], e["run_id"]), []).append(e["detail"])

        def logged(kind: str, seed: Any, run_id: Any, detail: Any, at: str) -> None:
            details = events.pop((kind, seed, run_id), None)
            if details != [detail]:
                found = "none" if details is None else ", ".join(map(repr, details))
                raise UserError(
                    f"{at}: its {kind} event in table events does not match (event detail"
                    f" {found}; the row says {detail!r})"
                )

        for r in _rows(db.execute("SELECT * FROM seeds ORDER BY seed")):
            at = f"{where}: table seeds, seed {r['seed']!r}"
            for col, value in r.items():
                want = int if col == "frozen_at_ms" else str
                if type(value) is not want or value == "":
                    raise UserError(f"{at}: {col} {value!r} is not {_KIND[want]}")
            logged("freeze", r["seed"], None, r["corpus_digest"], at)
        text_columns = (
            "run_id",
            "seed",
            "corpus_digest",
            "preregistration_digest",
            "bundle_digest",
            "started_at",
        )
        for r in _rows(db.execute("SELECT * FROM sessions ORDER BY run_id")):
            at = f"{where}: table sessions, run {r['run_id']!r}"
            for col in text_columns:
                if type(r[col]) is not str or r[col] == "":
                    raise UserError(f"{at}: {col} {r[col]!r} is not {_KIND[str]}")
            if type(r["started_at_ms"]) is not int:
                raise UserError(f"{at}: started_at_ms {r['started_at_ms']!r} is not an integer")
            if r["ended_at_ms"] is not None and (
                type(r["ended_at_ms"]) is not int
                or r["evidence_digest"] is None
                or r["ended_at_ms"] < r["started_at_ms"]
            ):
                raise UserError(
                    f"{at}: ended_at_ms {r['ended_at_ms']!r} is not the instant of its end"
                )
            logged("session-start", r["seed"], r["run_id"], r["bundle_digest"], at)
            if r["evidence_digest"] is None:
                if any(r[c] is not None for c in ("calls", "tokens", "usd")):
                    raise UserError(f"{at}: a spend recorded without an evidence digest")
                continue
            if type(r["evidence_digest"]) is not str or r["evidence_digest"] == "":
                raise UserError(f"{at}: evidence_digest {r['evidence_digest']!r} is not text")
            for col in ("calls", "tokens"):
                if type(r[col]) is not int or r[col] < 0:
                    raise UserError(f"{at}: {col} {r[col]!r} is not a non-negative integer")
            if _amount(r["usd"]) is None:
                raise UserError(f"{at}: usd {r['usd']!r} is not a non-negative amount")
            logged("session-end", r["seed"], r["run_id"], r["evidence_digest"], at)
        sessions = {r["run_id"]: r for r in _rows(db.execute("SELECT * FROM sessions"))}
        for r in _rows(db.execute("SELECT * FROM aborts ORDER BY run_id")):
            at = f"{where}: table aborts, run {r['run_id']!r}"
            session = sessions.get(r["run_id"])
            if session is None:
                raise UserError(f"{at}: no session of that run")
            if session["evidence_digest"] is not None:
                raise UserError(f"{at}: the session also ended (evidence recorded)")
            for col in ("reason", "at"):
                if type(r[col]) is not str or r[col] == "":
                    raise UserError(f"{at}: {col} {r[col]!r} is not {_KIND[str]}")
            for col in ("calls", "tokens"):
                if type(r[col]) is not int or r[col] < 0:
                    raise UserError(f"{at}: {col} {r[col]!r} is not a non-negative integer")
            if _amount(r["usd"]) is None:
                raise UserError(f"{at}: usd {r['usd']!r} is not a non-negative amount")
            if type(r["at_ms"]) is not int or r["at_ms"] < session["started_at_ms"]:
                raise UserError(f"{at}: at_ms {r['at_ms']!r} is not an instant after its start")
            logged("session-abort", session["seed"], r["run_id"], r["reason"], at)
        if events:
            kind, seed, run_id = next(iter(events))
            raise UserError(
                f"{where}: table events: a {kind} event of seed {seed!r}"
                + (f", run {run_id!r}" if run_id else "")
                + " has no row it records (or more than one event records its row)"
            )

    @contextmanager
    def _write(self, what: str) -> Iterator[sqlite3.Cursor]:
        cur = self._db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
            if self._before_commit is not None:
                self._before_commit(what)
            cur.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                cur.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def version(self) -> int:
        return int(self._db.execute("SELECT version FROM schema_version").fetchone()[0])

    def integrity(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when the database is sound)."""
        return "; ".join(str(r[0]) for r in self._db.execute("PRAGMA integrity_check"))

    # -- reads ----------------------------------------------------------------------------------

    def seed(self, seed: str) -> dict[str, Any] | None:
        rows = _rows(self._db.execute("SELECT * FROM seeds WHERE seed = ?", (seed,)))
        return rows[0] if rows else None

    def other_preregistration(self, corpus_digest: str, preregistration_digest: str):
        """A freeze or session of ``corpus_digest`` under another preregistration, or None."""
        for table, what in (("sessions", "observed"), ("seeds", "frozen")):
            rows = _rows(
                self._db.execute(
                    f"SELECT * FROM {table} WHERE corpus_digest = ?"  # noqa: S608 (fixed names)
                    " AND preregistration_digest != ? LIMIT 1",
                    (corpus_digest, preregistration_digest),
                )
            )
            if rows:
                return what, rows[0]
        return None

    def sessions(self, corpus_digest: str | None = None) -> list[dict[str, Any]]:
        if corpus_digest is None:
            cur = self._db.execute("SELECT * FROM sessions ORDER BY started_at_ms, run_id")
        else:
            cur = self._db.execute(
                "SELECT * FROM sessions WHERE corpus_digest = ? ORDER BY started_at_ms, run_id",
                (corpus_digest,),
            )
        return _rows(cur)

    def aborted(self, corpus_digest: str | None = None) -> list[dict[str, Any]]:
        """The aborts (of the sessions of ``corpus_digest``, or all), in the order they were
        recorded."""
        if corpus_digest is None:
            return _rows(self._db.execute("SELECT * FROM aborts ORDER BY at_ms, run_id"))
        return _rows(
            self._db.execute(
                "SELECT a.* FROM aborts a JOIN sessions s USING (run_id)"
                " WHERE s.corpus_digest = ? ORDER BY a.at_ms, a.run_id",
                (corpus_digest,),
            )
        )

    def spend(self) -> dict[str, Any]:
        """The attested spend of every ended or aborted session: calls, tokens (integers), usd
        (Decimal)."""
        from decimal import Inexact, localcontext

        calls = tokens = 0
        usd = Decimal(0)
        with localcontext(prec=60, traps=[Inexact]):  # exact, or a traceback, never rounded
            for c, t, u in self._db.execute(
                "SELECT calls, tokens, usd FROM sessions WHERE evidence_digest IS NOT NULL"
                " UNION ALL SELECT calls, tokens, usd FROM aborts"
            ):
                calls += int(c)
                tokens += int(t)
                usd += Decimal(u)
        return {"calls": calls, "tokens": tokens, "usd": usd}

    def state(self) -> dict[str, Any]:
        """Everything in the ledger as one document (the ``ledger-show --json`` view, schema
        ``ledger-state`` of :mod:`prereg.outputs`): ``schemaVersion`` (:data:`STATE_VERSION`),
        ``ledgerSchemaVersion`` (the database's), the seeds, sessions, aborts, spend and events with
        their columns as camelCase keys."""
        from prereg.outputs import camel_keys

        spend = self.spend()
        return {
            "schemaVersion": STATE_VERSION,
            "ledgerSchemaVersion": self.version,
            **camel_keys(
                {
                    "seeds": _rows(
                        self._db.execute("SELECT * FROM seeds ORDER BY frozen_at_ms, seed")
                    ),
                    "sessions": self.sessions(),
                    "aborts": self.aborted(),
                    "spend": {**spend, "usd": str(spend["usd"])},
                    "events": _rows(self._db.execute("SELECT * FROM events ORDER BY n")),
                }
            ),
        }

    # -- writes ---------------------------------------------------------------------------------

    def _event(self, cur, kind: str, seed: str, run_id: str | None, at: str, detail: str) -> None:
        cur.execute(
            "INSERT INTO events (kind, seed, run_id, at, detail) VALUES (?, ?, ?, ?, ?)",
            (kind, seed, run_id, at, detail),
        )

    def freeze(
        self,
        *,
        seed: str,
        generator_id: str,
        corpus_digest: str,
        preregistration_digest: str,
        spec_digest: str,
        bundle_digest: str,
        at: str,
        at_ms: int,
    ) -> Freeze:
        """Freeze ``seed`` with its corpus and preregistration, or refuse: the seed frozen under
        another corpus (``seed-corpus``), the corpus frozen or observed under another
        preregistration (``corpus-preregistration``)."""
        with self._write("freeze") as cur:
            old = _rows(cur.execute("SELECT * FROM seeds WHERE seed = ?", (seed,)))
            if old:
                row = old[0]
                if row["corpus_digest"] != corpus_digest:
                    raise LedgerConflict(
                        "seed-corpus",
                        f"seed {seed!r} was frozen at {row['frozen_at']} with corpus"
                        f" {row['corpus_digest']}, not {corpus_digest}",
                        row,
                    )
            other = _rows(
                cur.execute(
                    "SELECT 'observed' AS what, run_id AS ref, preregistration_digest"
                    " FROM sessions WHERE corpus_digest = ? AND preregistration_digest != ?"
                    " UNION ALL SELECT 'frozen', seed, preregistration_digest FROM seeds"
                    " WHERE corpus_digest = ? AND preregistration_digest != ? LIMIT 1",
                    (corpus_digest, preregistration_digest) * 2,
                )
            )
            if other:
                o = other[0]
                raise LedgerConflict(
                    "corpus-preregistration",
                    f"corpus {corpus_digest} was already {o['what']} ({o['ref']}) under"
                    f" preregistration {o['preregistration_digest']}, not"
                    f" {preregistration_digest}",
                    o,
                )
            if old:
                return Freeze(False, old[0])
            cur.execute(
                "INSERT INTO seeds VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    seed,
                    generator_id,
                    corpus_digest,
                    preregistration_digest,
                    spec_digest,
                    bundle_digest,
                    at,
                    at_ms,
                ),
            )
            self._event(cur, "freeze", seed, None, at, corpus_digest)
            row = _rows(cur.execute("SELECT * FROM seeds WHERE seed = ?", (seed,)))[0]
        return Freeze(True, row)

    def start_session(
        self,
        *,
        run_id: str,
        seed: str,
        corpus_digest: str,
        preregistration_digest: str,
        bundle_digest: str,
        started_at: str,
        started_at_ms: int,
        record: bool = True,
        expect_prior: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Record a session start; returns the corpus's earlier sessions (all ended; an aborted
        one is not among them), oldest first.  Refused: an unfrozen seed or one frozen with another corpus, another
        preregistration, a run id already recorded, an earlier session not yet ended, a start
        before the seed's freeze or an earlier session's start.

        ``record=False`` runs the checks only; ``expect_prior`` (the run ids of the earlier
        sessions a run file written beforehand lists) refuses the start when they changed."""
        with self._write("session-start") as cur:
            rows = _rows(cur.execute("SELECT * FROM seeds WHERE seed = ?", (seed,)))
            if not rows:
                raise LedgerConflict("seed-not-frozen", f"seed {seed!r} is not frozen")
            row = rows[0]
            if row["corpus_digest"] != corpus_digest:
                raise LedgerConflict(
                    "seed-corpus",
                    f"seed {seed!r} was frozen with corpus {row['corpus_digest']}, not"
                    f" {corpus_digest}",
                    row,
                )
            if started_at_ms < row["frozen_at_ms"]:
                raise LedgerConflict(
                    "instant-order",
                    f"a session start {started_at} is before the seed's freeze at"
                    f" {row['frozen_at']} (the ledger's events run forwards)",
                    row,
                )
            if row["preregistration_digest"] != preregistration_digest:
                raise LedgerConflict(
                    "corpus-preregistration",
                    f"corpus {corpus_digest} was frozen under preregistration"
                    f" {row['preregistration_digest']}, not {preregistration_digest}",
                    row,
                )
            dup = _rows(cur.execute("SELECT * FROM sessions WHERE run_id = ?", (run_id,)))
            if dup:
                raise LedgerConflict(
                    "run-reused",
                    f"run {run_id!r} was already recorded (started {dup[0]['started_at']})",
                    dup[0],
                )
            last = _last_event(cur)
            if last is not None and started_at_ms < last[0]:
                raise LedgerConflict(
                    "instant-order",
                    f"a session start {started_at} is before the ledger's last event, {last[1]}"
                    " (the ledger's events run forwards)",
                )
            prior = _rows(
                cur.execute(
                    "SELECT * FROM sessions WHERE corpus_digest = ? AND run_id NOT IN"
                    " (SELECT run_id FROM aborts) ORDER BY started_at_ms, run_id",
                    (corpus_digest,),
                )
            )
            # an aborted session is closed, and no prior run of the lineage (it has no
            # evidence); a later start is after its abort (the last-event rule above)
            for p in prior:
                if p["evidence_digest"] is None:
                    raise LedgerConflict(
                        "session-open",
                        f"session {p['run_id']!r} (started {p['started_at']}) has not ended",
                        p,
                    )
                if p["started_at_ms"] >= started_at_ms:
                    raise LedgerConflict(
                        "session-open",
                        f"session {p['run_id']!r} started at {p['started_at']}, not before"
                        f" {started_at}",
                        p,
                    )
            if expect_prior is not None and [p["run_id"] for p in prior] != expect_prior:
                raise LedgerConflict(
                    "session-open",
                    f"the corpus's sessions changed while the run file was written (now"
                    f" {[p['run_id'] for p in prior]}, the run file lists {expect_prior})",
                )
            if not record:
                return prior
            cur.execute(
                "INSERT INTO sessions (run_id, seed, corpus_digest, preregistration_digest,"
                " bundle_digest, started_at, started_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    seed,
                    corpus_digest,
                    preregistration_digest,
                    bundle_digest,
                    started_at,
                    started_at_ms,
                ),
            )
            self._event(cur, "session-start", seed, run_id, started_at, bundle_digest)
        return prior

    def end_session(
        self,
        *,
        run_id: str,
        evidence_digest: str,
        calls: int,
        tokens: int,
        usd: Decimal,
        at: str,
        at_ms: int | None = None,
        record: bool = True,
    ) -> dict[str, Any]:
        """Record a session's evidence digest and attested spend (once; ``record=False`` runs
        the checks only), and with ``at_ms`` the instant it ended (not before its start:
        ``instant-order``).  A negative or non-finite spend is refused (ValueError)."""
        if int(calls) < 0 or int(tokens) < 0 or not Decimal(usd).is_finite() or usd < 0:
            raise ValueError(f"a negative or non-finite spend ({calls}, {tokens}, {usd})")
        with self._write("session-end") as cur:
            rows = _rows(cur.execute("SELECT * FROM sessions WHERE run_id = ?", (run_id,)))
            if not rows:
                raise LedgerConflict("run-unknown", f"run {run_id!r} has no recorded start")
            if rows[0]["evidence_digest"] is not None:
                raise LedgerConflict(
                    "run-ended",
                    f"run {run_id!r} already ended with evidence {rows[0]['evidence_digest']}",
                    rows[0],
                )
            _refuse_aborted(cur, run_id)
            if at_ms is not None and at_ms < rows[0]["started_at_ms"]:
                raise LedgerConflict(
                    "instant-order",
                    f"an end at {at} is before the session's start at {rows[0]['started_at']}"
                    " (the ledger's events run forwards)",
                    rows[0],
                )
            if not record:
                return rows[0]
            cur.execute(
                "UPDATE sessions SET evidence_digest = ?, calls = ?, tokens = ?, usd = ?,"
                " ended_at_ms = ? WHERE run_id = ?",
                (evidence_digest, int(calls), int(tokens), str(usd), at_ms, run_id),
            )
            self._event(cur, "session-end", rows[0]["seed"], run_id, at, evidence_digest)
            return _rows(cur.execute("SELECT * FROM sessions WHERE run_id = ?", (run_id,)))[0]

    def abort_session(
        self,
        *,
        run_id: str,
        reason: str,
        calls: int,
        tokens: int,
        usd: Decimal,
        at: str,
        at_ms: int,
    ) -> dict[str, Any]:
        """Close a started session that can never end as recorded, with its reason and the
        spend it attested (the money is spent whether or not its evidence survived).  The
        session's row is left as it was; the abort is a row of its own and an event.  Refused:
        no such run (``run-unknown``), a run that ended or was aborted (``run-ended``), an
        instant before the session's start (``instant-order``); an empty reason or a negative
        or non-finite spend (ValueError)."""
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError("an abort needs its reason (non-empty text)")
        if int(calls) < 0 or int(tokens) < 0 or not Decimal(usd).is_finite() or usd < 0:
            raise ValueError(f"a negative or non-finite spend ({calls}, {tokens}, {usd})")
        with self._write("session-abort") as cur:
            rows = _rows(cur.execute("SELECT * FROM sessions WHERE run_id = ?", (run_id,)))
            if not rows:
                raise LedgerConflict("run-unknown", f"run {run_id!r} has no recorded start")
            row = rows[0]
            if row["evidence_digest"] is not None:
                raise LedgerConflict(
                    "run-ended",
                    f"run {run_id!r} ended with evidence {row['evidence_digest']}: an ended"
                    " session is never aborted",
                    row,
                )
            _refuse_aborted(cur, run_id)
            if at_ms < row["started_at_ms"]:
                raise LedgerConflict(
                    "instant-order",
                    f"an abort at {at} is before the session's start at {row['started_at']}"
                    " (the ledger's events run forwards)",
                    row,
                )
            cur.execute(
                "INSERT INTO aborts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, reason, int(calls), int(tokens), str(usd), at, at_ms),
            )
            self._event(cur, "session-abort", row["seed"], run_id, at, reason)
            return _rows(cur.execute("SELECT * FROM aborts WHERE run_id = ?", (run_id,)))[0]


def _last_event(cur: sqlite3.Cursor) -> tuple[int, str] | None:
    """(milliseconds, what and when) of the latest instant the ledger records: a freeze, a
    session's start or end, an abort."""
    from datetime import UTC, datetime, timedelta

    row = cur.execute(
        "SELECT ms, what FROM ("
        " SELECT frozen_at_ms AS ms, 'the freeze of seed ' || seed AS what FROM seeds"
        " UNION ALL SELECT started_at_ms, 'the start of session ' || run_id FROM sessions"
        " UNION ALL SELECT ended_at_ms, 'the end of session ' || run_id FROM sessions"
        " WHERE ended_at_ms IS NOT NULL"
        " UNION ALL SELECT at_ms, 'the abort of session ' || run_id FROM aborts"
        ") ORDER BY ms DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    ms = int(row[0])
    try:
        when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
        shown = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    except OverflowError:
        shown = f"{ms} ms after the epoch"
    return ms, f"{row[1]} at {shown}"


def _refuse_aborted(cur: sqlite3.Cursor, run_id: str) -> None:
    done = _rows(cur.execute("SELECT * FROM aborts WHERE run_id = ?", (run_id,)))
    if done:
        raise LedgerConflict(
            "run-ended",
            f"run {run_id!r} was aborted at {done[0]['at']} ({done[0]['reason']})",
            done[0],
        )


def open_existing(path: str | Path) -> Ledger | None:
    """The ledger at ``path``, or None when nothing is there (a fresh ledger is not created).

    Anything at the path that is not a sound ledger (an empty or foreign file, a folder, a
    FIFO, a tampered database) is refused with its location, never taken for a fresh ledger."""
    return Ledger(path, create=False) if os.path.lexists(path) else None


_KIND = {int: "an integer", str: "non-empty text"}


#: the largest USD amount one session may attest (exclusive) and its finest fraction
#: (decimal places): a sum of a billion of them has at most 33 significant digits, so the
#: ledger's sums (60 digits) are exact
USD_BELOW = Decimal(10) ** 12
USD_PLACES = 12


def _amount(text: Any) -> Decimal | None:
    """A stored USD amount (text of a finite, non-negative decimal below :data:`USD_BELOW`,
    of at most :data:`USD_PLACES` decimal places), or None."""
    if type(text) is not str or not text.isascii():  # Decimal takes any script's digits
        return None
    try:
        d = Decimal(text)
    except ArithmeticError:
        return None
    if not d.is_finite() or d < 0 or d >= USD_BELOW or d.as_tuple().exponent < -USD_PLACES:
        return None
    return d


def usd_amount(text: Any, where: str) -> Decimal:
    """A USD amount given on the command line (``where`` names the option), refused in words
    unless :func:`_amount` takes it."""
    d = _amount(text.strip() if isinstance(text, str) else text)
    if d is None or "_" in str(text):
        raise UserError(
            f"{where}: {text!r} is not an amount in USD (a non-negative decimal below"
            f" {USD_BELOW:,}, at most {USD_PLACES} decimal places: 12.50)"
        )
    return d


def _check_file(path: Path) -> None:
    """Refuse, before SQLite sees it, anything at ``path`` that cannot be a ledger."""
    from prereg.files import open_regular

    try:
        fd = open_regular(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no ledger there (a link to nothing)") from None
    except OSError as exc:
        raise UserError(
            f"{path}: not a ledger ({exc.strerror or exc}); refusing to use it"
        ) from None
    try:
        size = os.fstat(fd).st_size
        head = os.read(fd, len(_SQLITE_HEADER))
    finally:
        os.close(fd)
    if size == 0:
        raise UserError(
            f"{path}: an empty file (0 bytes), not a ledger; refusing to take it for a fresh one"
            " (remove it if no ledger was ever written there)"
        )
    if head != _SQLITE_HEADER:
        raise UserError(f"{path}: not a ledger (not an SQLite database); refusing to use it")


def _migrate(cur: sqlite3.Cursor, path: Path) -> None:
    cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = cur.execute("SELECT version FROM schema_version").fetchall()
    if len(row) > 1:
        raise sqlite3.DatabaseError("schema_version holds more than one row")
    version = row[0][0] if row else 0
    if type(version) is not int or version < 0:
        raise sqlite3.DatabaseError(f"schema_version holds {version!r}, not a version")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"{path}: ledger schema version {version} is newer than this prereg"
            f" knows ({SCHEMA_VERSION}); use the prereg that wrote it"
        )
    for v in range(version, SCHEMA_VERSION):
        for statement in MIGRATIONS[v]:
            cur.execute(statement)
    if not row:
        cur.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    elif version != SCHEMA_VERSION:
        cur.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))


def _create(path: Path, timeout: float) -> None:
    """A fresh ledger at ``path``, whole or not at all: built in a temporary sibling and linked
    into place (when another process created one first, theirs is kept)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise UserError(f"{path}: cannot create the ledger: {exc.strerror or exc}") from None
    try:
        db = sqlite3.connect(tmp, timeout=timeout, isolation_level=None)
        try:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute("PRAGMA synchronous = FULL")
            cur = db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            _migrate(cur, path)
            cur.execute("COMMIT")
        finally:
            db.close()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError as exc:
            raise UserError(f"{path}: cannot create the ledger: {exc.strerror or exc}") from None
    except sqlite3.Error as exc:
        raise UserError(f"{path}: cannot create the ledger: {exc}") from None
    finally:
        for leftover in (tmp, tmp + "-journal"):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass
