"""Preparation in memory: generate, check with the text oracle, order, audit, digest.

The work is cut into units, one per audit group key (layout × pool × hops, all splits): a
unit generates its cells' rows (each row from its own seeded stream, so a row never depends
on another), checks them with the text oracle, builds their records and scores its audit
group.  Units run in this process (``workers=1``) or in forked worker processes; the results
are merged in allocation order, so the outputs are the same bytes for any number of workers.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from prereg.digest import PREFIX
from prereg.errors import UserError
from prereg.gcpause import paused

from .audit import LEARNERS, Group, ShortcutAudit, audit_digest
from .canon import canonical_members, join_members
from .config import EngineConfig, load_config
from .dispatch import dispatch_order, dispatch_order_digest
from .draws import Stream, fill, fisher_yates
from .generate import Corpus, Generator, Row, gold_object, seed_digest
from .oracle import OracleError, TextOracle
from .seeds import check_seed_syntax

MAX_LISTED = 20

# the canonical JSON of a row's world: the encoder of .canon (sorted keys, compact, no ASCII
# escapes), which writes a nested object as it writes the object alone
_world_json = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
).encode
_str_json = json.encoder.encode_basestring


def gold_members_of(ec: EngineConfig, rows: list[Row]) -> dict[str, str]:
    """``canonical_members(gold_object(ec, rows))`` with the worlds' member joined from each
    row's ``world_json`` (computed where the row was made, in a worker; here if it was not):
    the encoder writes an object's members sorted by key, each value as it writes that value
    alone."""
    members = canonical_members(
        {"schemaVersion": ec.schema_versions["gold"], "labels": {r.id: r.label for r in rows}}
    )
    worlds = {r.id: r.world_json or _world_json(r.world) for r in rows}
    members["worlds"] = (
        '"worlds":{' + ",".join([_str_json(i) + ":" + w for i, w in sorted(worlds.items())]) + "}"
    )
    return members


def dispatch_positions(ec: EngineConfig, sd: str) -> list[int]:
    """The allocation positions of the rows in dispatch order (:func:`.dispatch.dispatch_order`
    of a corpus in allocation order, drawn from the configuration and the seed digest alone)."""
    first: list[int] = []
    rest: list[int] = []
    at = 0
    for c in ec.cells:
        word = c.split.word
        span = range(at, at + c.rows)
        if word in ec.first_splits:
            first.extend(span)
        elif word in ec.permuted_splits:
            rest.extend(span)
        at += c.rows
    fisher_yates(rest, Stream.from_message(fill(ec.dispatch_draw_message, seedDigest=sd)))
    return first + rest


@dataclass
class Prepared:
    ec: EngineConfig
    corpus: Corpus
    order: list[Row]  # dispatch order
    dispatch_digest: str | None
    gold: dict[str, Any] | None
    gold_digest: str | None
    audit: dict[str, Any]
    audit_digest: str
    positive_control_result: dict[str, Any] | None = None
    # the gold object's members as canonical JSON text (the digest's and the file's)
    gold_members: dict[str, str] | None = None
    # in-process preparations keep the audit groups, so the positive control can run later
    groups: list[Group] = field(default_factory=list)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    auditor: ShortcutAudit | None = None

    @property
    def seed(self) -> str:
        return self.corpus.seed

    def positive_control(self) -> dict[str, Any]:
        if self.positive_control_result is None:
            if self.auditor is None:
                raise RuntimeError("prepare with positive_control=True to run it in workers")
            self.positive_control_result = self.auditor.positive_control(self.groups, self.scores)
        return self.positive_control_result


def oracle_problems(ec: EngineConfig, rows: list[Row], oracle: TextOracle | None = None):
    """(number of rows where the text oracle fails or disagrees with gold, first messages)."""
    oracle = oracle or TextOracle(ec)
    problems = []
    count = 0
    for r in rows:
        try:
            got = oracle.label(r.payload)
        except OracleError as exc:
            got = None
            why = f"the oracle cannot read the payload ({exc})"
        else:
            why = f"text oracle says {got!r}, gold says {r.label!r}"
        if got != r.label:
            count += 1
            if len(problems) < MAX_LISTED:
                problems.append(
                    (r.index, f"row {r.id} (index {r.index}, cell {r.cell.key}): {why}")
                )
    return count, problems


def _oracle_refusal(count: int, problems: list[tuple[int, str]]) -> UserError:
    listed = [msg for _, msg in sorted(problems)[:MAX_LISTED]]
    if count > len(listed):
        listed.append(f"... and {count - len(listed)} more")
    return UserError(
        f"text oracle disagrees with gold on {count} row(s); refusing to prepare",
        problems=listed,
    )


def check_oracle(ec: EngineConfig, rows: list[Row], oracle: TextOracle | None = None) -> None:
    """Refuse (UserError) when the text oracle cannot read a row or disagrees with gold."""
    count, problems = oracle_problems(ec, rows, oracle)
    if count:
        raise _oracle_refusal(count, problems)


def audit_refusal(audit: dict[str, Any], seed: str) -> UserError:
    problems = []
    for g in audit["groups"]:
        sc = ", ".join(f"{k} {g['scores'][k]}" for k in LEARNERS)
        if g["passes"] is None:
            verdict = "reported only"
        else:
            verdict = "passes" if g["passes"] else f"FAILS (> {audit['limit']})"
        problems.append(f"{g['group']}: n {g['n']}, yes {g['yes']}: {sc}; max {g['max']} {verdict}")
    return UserError(
        f"shortcut audit failed for seed {seed!r}: equalizedMax {audit['equalizedMax']} exceeds"
        f" the limit {audit['limit']}; refusing to prepare (draw another fresh seed)",
        problems=problems,
    )


# -- work units --------------------------------------------------------------------------------


def work_units(ec: EngineConfig) -> list[list[int]]:
    """Cell indexes grouped by audit group key, largest unit first."""
    units: dict[tuple, list[int]] = {}
    for k, c in enumerate(ec.cells):
        units.setdefault((c.layout.word, c.pool.id, c.hops), []).append(k)
    out = list(units.values())
    cost = {id(u): sum(ec.cells[k].rows * (ec.cells[k].hops + 4) for k in u) for u in out}
    out.sort(key=lambda u: -cost[id(u)])
    return out


@dataclass
class UnitResult:
    rows: list[Row]
    oracle_count: int
    oracle_problems: list[tuple[int, str]]
    summaries: list[dict[str, Any]]
    positive_control: list[dict[str, Any]] | None
    groups: list[Group]
    scores: dict[str, dict[str, float]]


def run_unit(
    gen: Generator,
    auditor: ShortcutAudit,
    seed: str,
    seed_id: str,
    cells: list[int],
    *,
    records: bool,
    positive_control: bool,
) -> UnitResult:
    """A unit's rows, oracle verdicts and audit scores, with the garbage collector paused (the
    rows hold no cycles; see :mod:`prereg.gcpause`)."""
    with paused():
        return _run_unit(
            gen, auditor, seed, seed_id, cells, records=records, positive_control=positive_control
        )


def _run_unit(gen, auditor, seed, seed_id, cells, *, records, positive_control) -> UnitResult:
    ec = gen.ec
    offsets = [0]
    for c in ec.cells:
        offsets.append(offsets[-1] + c.rows)
    rows = []
    for k in cells:
        cell = ec.cells[k]
        plan = gen._plan(cell, seed_id)
        for i in range(cell.rows):
            row = gen._row(plan, i, offsets[k] + i, seed)
            if records:
                gen.record(row, seed)
                row.world_json = _world_json(row.world)
            rows.append(row)
    count, problems = oracle_problems(ec, rows)
    if count:
        return UnitResult(rows, count, problems, [], None, [], {})
    groups = auditor.groups(rows)
    scores = auditor.scores(groups)
    pc = auditor.positive_control_groups(groups, scores) if positive_control else None
    return UnitResult(rows, 0, [], auditor.summaries(groups, scores), pc, groups, scores)


_WORKER: dict[str, tuple[Generator, ShortcutAudit]] = {}


def worker_tools(config_json: str) -> tuple[Generator, ShortcutAudit]:
    tools = _WORKER.get(config_json)
    if tools is None:
        ec = load_config(json.loads(config_json))
        tools = (Generator(ec), ShortcutAudit(ec))
        _WORKER.clear()
        _WORKER[config_json] = tools
    return tools


def _slim(row: Row) -> Row:
    """What the parent needs of a row produced in a worker (its audit already ran there)."""
    row.fact_lines = row.chain_lines = row.fact_order = []
    row.record = {}
    return row


def _unit_in_worker(config_json, seed, seed_id, cells, records, positive_control):
    gen, auditor = worker_tools(config_json)
    res = run_unit(
        gen, auditor, seed, seed_id, cells, records=records, positive_control=positive_control
    )
    res.rows = [_slim(r) for r in res.rows]
    res.groups, res.scores = [], {}
    return res


def default_workers() -> int:
    return min(2, os.cpu_count() or 1)


def prepare_memory(
    ec: EngineConfig,
    seed: str,
    *,
    records: bool = True,
    refuse_failing_audit: bool = True,
    positive_control: bool = False,
    workers: int = 1,
    generator: Generator | None = None,
    auditor: ShortcutAudit | None = None,
    dispatch: bool = True,
) -> Prepared:
    """Everything ``prepare`` computes, without writing; raises UserError on any refusal.

    ``workers`` > 1 runs the work units in forked processes (where fork is available); rows
    coming back from workers keep their payload, world, label and record line only. With
    ``dispatch`` false (the audit sweep), the dispatch order is not drawn: ``order`` is
    empty and ``dispatch_digest`` None. The garbage collector is paused throughout (the rows
    and their records hold no cycles; its passes over them cost about a tenth of the work).
    """
    with paused():
        return _prepare_memory(
            ec,
            seed,
            records=records,
            refuse_failing_audit=refuse_failing_audit,
            positive_control=positive_control,
            workers=workers,
            generator=generator,
            auditor=auditor,
            dispatch=dispatch,
        )


def _prepare_memory(
    ec,
    seed,
    *,
    records,
    refuse_failing_audit,
    positive_control,
    workers,
    generator,
    auditor,
    dispatch,
) -> Prepared:
    check_seed_syntax(seed, ec.seed_policy)
    sd = seed_digest(seed)
    seed_id = sd.split(":", 1)[1][: ec.seed_id_hex_chars]
    units = work_units(ec)
    forkable = "fork" in multiprocessing.get_all_start_methods()
    positions = None
    if workers > 1 and len(units) > 1 and forkable:
        config_json = json.dumps(ec.raw, sort_keys=True)
        with ProcessPoolExecutor(
            max_workers=min(workers, len(units)), mp_context=multiprocessing.get_context("fork")
        ) as pool:
            done = pool.map(
                _unit_in_worker,
                [config_json] * len(units),
                [seed] * len(units),
                [seed_id] * len(units),
                units,
                [records] * len(units),
                [positive_control] * len(units),
            )
            # drawn here while the workers run (this process would wait for them)
            positions = dispatch_positions(ec, sd) if dispatch else None
            results = list(done)
        auditor = None
    else:
        gen = generator or Generator(ec)
        auditor = auditor or ShortcutAudit(ec)
        results = [
            run_unit(
                gen,
                auditor,
                seed,
                seed_id,
                u,
                records=records,
                positive_control=positive_control,
            )
            for u in units
        ]
    count = sum(r.oracle_count for r in results)
    if count:
        raise _oracle_refusal(count, [p for r in results for p in r.oracle_problems])
    rows = sorted((row for r in results for row in r.rows), key=lambda row: row.index)
    corpus = Corpus(seed=seed, seed_digest=sd, seed_id=seed_id, rows=rows)
    if not dispatch:
        order = []
    elif positions is not None and [r.index for r in rows] == list(range(len(positions))):
        order = [rows[k] for k in positions]
    else:
        order = dispatch_order(ec, corpus)
    gold = gold_digest = gold_members = None
    if records:
        gold = gold_object(ec, rows)
        gold_members = gold_members_of(ec, rows)
        gold_digest = PREFIX + hashlib.sha256(join_members(gold_members)).hexdigest()
    judge = ShortcutAudit(ec) if auditor is None else auditor
    audit = judge.audit_object([s for r in results for s in r.summaries])
    if refuse_failing_audit and not audit["equalizedPasses"]:
        raise audit_refusal(audit, seed)
    pc = None
    if positive_control:
        pc = judge.positive_control_object([g for r in results for g in r.positive_control])
    groups = sorted((g for r in results for g in r.groups), key=lambda g: g.key)
    scores = {k: v for r in results for k, v in r.scores.items()}
    return Prepared(
        ec=ec,
        corpus=corpus,
        order=order,
        dispatch_digest=dispatch_order_digest(order) if dispatch else None,
        gold=gold,
        gold_digest=gold_digest,
        gold_members=gold_members,
        audit=audit,
        audit_digest=audit_digest(audit),
        positive_control_result=pc,
        groups=groups,
        scores=scores,
        auditor=auditor,
    )
