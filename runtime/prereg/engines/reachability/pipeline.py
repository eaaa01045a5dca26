"""Preparation in memory: generate, check with the text oracle, order, audit, digest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prereg.errors import UserError

from .audit import LEARNERS, Group, ShortcutAudit, audit_digest
from .canon import record_digest
from .config import EngineConfig
from .dispatch import dispatch_order, dispatch_order_digest
from .generate import Corpus, Generator, Row, gold_object
from .oracle import OracleError, TextOracle
from .seeds import check_seed_syntax

MAX_LISTED = 20


@dataclass
class Prepared:
    ec: EngineConfig
    corpus: Corpus
    order: list[Row]  # dispatch order
    dispatch_digest: str
    gold: dict[str, Any] | None
    gold_digest: str | None
    audit: dict[str, Any]
    audit_digest: str
    groups: list[Group]
    scores: dict[str, dict[str, float]]
    auditor: ShortcutAudit

    @property
    def seed(self) -> str:
        return self.corpus.seed

    def positive_control(self) -> dict[str, Any]:
        return self.auditor.positive_control(self.groups, self.scores)


def check_oracle(ec: EngineConfig, rows: list[Row], oracle: TextOracle | None = None) -> None:
    """Refuse (UserError) when the text oracle cannot read a row or disagrees with gold."""
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
                problems.append(f"row {r.id} (index {r.index}, cell {r.cell.key}): {why}")
    if count:
        if count > len(problems):
            problems.append(f"... and {count - len(problems)} more")
        raise UserError(
            f"text oracle disagrees with gold on {count} row(s); refusing to prepare",
            problems=problems,
        )


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


def prepare_memory(
    ec: EngineConfig,
    seed: str,
    *,
    records: bool = True,
    refuse_failing_audit: bool = True,
    generator: Generator | None = None,
    auditor: ShortcutAudit | None = None,
) -> Prepared:
    """Everything ``prepare`` computes, without writing; raises UserError on any refusal."""
    check_seed_syntax(seed, ec.seed_policy)
    gen = generator or Generator(ec)
    corpus = gen.corpus(seed, records=records)
    check_oracle(ec, corpus.rows)
    order = dispatch_order(ec, corpus)
    gold = gold_digest = None
    if records:
        gold = gold_object(ec, corpus.rows)
        gold_digest = record_digest(gold)
    auditor = auditor or ShortcutAudit(ec)
    audit, groups, scores = auditor.run(corpus.rows)
    if refuse_failing_audit and not audit["equalizedPasses"]:
        raise audit_refusal(audit, seed)
    return Prepared(
        ec=ec,
        corpus=corpus,
        order=order,
        dispatch_digest=dispatch_order_digest(order),
        gold=gold,
        gold_digest=gold_digest,
        audit=audit,
        audit_digest=audit_digest(audit),
        groups=groups,
        scores=scores,
        auditor=auditor,
    )
