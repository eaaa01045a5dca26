"""Scoring blocks of simulated studies through :mod:`prereg.decide`.

A :class:`Plan` is everything a worker needs, as plain data (the design, the rules, the
conditions, the seed and the block size), so that it travels to another process or a cluster
worker by value.  :func:`run_block` draws one block (:func:`.model.draw_block`) and scores
its simulated studies over one row per group, as ``score`` scores observed rows: all at once
(:func:`score_block`: ``registered_results_many`` and ``decide_all_many``, the batched forms of
``registered_results``, ``cell_figures`` and ``decide_all``, which give every study the same
figures and verdicts bit for bit), or, for rules the batched forms do not cover, one study at
a time through those functions themselves (:func:`score_block_per_study`).  It keeps, per
study, every verdict, whether each gate failed, and each estimate's and contrast's figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from prereg.decide.evaluate import (
    Selections,
    cell_figures,
    decide_all,
    decide_all_many,
    registered_results,
    registered_results_many,
)
from prereg.decide.metrics import RowMetric

from .design import Design, Rules
from .model import Condition, draw_block

#: Simulated studies per block: the unit of seeding and of work (recorded in the output).
BLOCK_SIZE = 250
ESTIMATE_FIELDS = ("estimate", "lower", "upper")
CONTRAST_FIELDS = ("estimate", "lower", "upper", "p", "adjusted_p")


@dataclass(frozen=True)
class Plan:
    study: str
    design: Design
    rules: Rules
    conditions: tuple[Condition, ...]
    seed: int
    simulations: int
    block_size: int = BLOCK_SIZE
    key: str = ""  # identifies the plan for per-process caches
    path: str = "counts"  # "counts" (counts of rows per group) or "rows" (prereg.diagnose.rows)

    @property
    def blocks(self) -> int:
        return math.ceil(self.simulations / self.block_size)

    def tasks(self) -> list[tuple[int, int]]:
        """(condition, block) of every block, in output order."""
        return [(c, b) for c in range(len(self.conditions)) for b in range(self.blocks)]

    def size(self, block: int) -> int:
        return min(self.block_size, self.simulations - block * self.block_size)


@dataclass
class BlockResult:
    condition: int
    block: int
    verdicts: list[tuple[str, ...]]  # per study, per hypothesis (rules.HYPOTHESES order)
    gates: np.ndarray  # bool (n, gates): the gate failed
    estimates: np.ndarray  # float (n, estimates, 3); NaN for a missing figure
    contrasts: np.ndarray  # float (n, contrasts, 5)
    outcomes: list[str | None] | None = None  # per study, the decision's outcome
    analyses: np.ndarray | None = None  # float (n, analyses, 5), on the row path


def decision_outcomes(plan: Plan, verdicts, failed, est, con) -> list[str | None] | None:
    """The registered decision of each simulated study (None when the study registers none),
    evaluated by :func:`prereg.decide.decision.decide` over the study's verdicts, gates and
    figures, as score evaluates it."""
    from prereg.decide.decision import decide
    from prereg.rules import ContrastResult

    rules = plan.rules
    registered = getattr(rules, "DECISION", None)
    if registered is None:
        return None
    hyps = list(rules.HYPOTHESES)
    gates = [g.id for g in rules.GATES]
    es, cs = list(rules.ESTIMATES), list(rules.CONTRASTS)
    reads_figures = any(_reads_figures(r.when) for r in registered.rules)
    out: list[str | None] = []
    for i, v in enumerate(verdicts):
        results = {}
        if reads_figures:
            for j, e in enumerate(es):
                x = est[i, j]
                results[e.id] = ContrastResult(e.id, *map(float, x[:3]))
            for j, c in enumerate(cs):
                x = con[i, j]
                p = None if math.isnan(x[3]) else float(x[3])
                adj = None if math.isnan(x[4]) else float(x[4])
                results[c.id] = ContrastResult(c.id, *map(float, x[:3]), p=p, adjusted_p=adj)
        held = {g: not bool(failed[i, k]) for k, g in enumerate(gates)}
        record = decide(registered, dict(zip(hyps, v, strict=True)), held, results)
        out.append(None if record is None else record["outcome"])
    return out


def _reads_figures(node) -> bool:
    from prereg.rules import AllOf, AnyOf, AtLeast, Compare, ForEach, Not

    if isinstance(node, Compare):
        return True
    if isinstance(node, (AllOf, AnyOf, AtLeast)):
        return any(_reads_figures(c) for c in node.conditions)
    if isinstance(node, Not):
        return _reads_figures(node.condition)
    if isinstance(node, ForEach):
        return _reads_figures(node.condition)
    return False


class Scorer:
    """prereg.decide over one row per group of a plan's design (built once per process)."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.table = plan.design.table()
        self.sel = Selections(self.table)

    def score(self, metrics: dict[str, RowMetric]):
        rules = self.plan.rules
        self.sel.forget_metrics()
        from prereg.decide.certify import gate_figures

        res = registered_results(rules, metrics, self.sel)
        figures = gate_figures(rules, metrics, self.table, cell_figures(metrics, self.table))
        return res, decide_all(rules, res.results, self.table, figures)

    def score_many(self, metrics: dict[str, RowMetric], size: int):
        """(results, decisions) of ``size`` studies at once (``metrics`` over (studies, rows)),
        or None when these rules need the one-study path."""
        rules = self.plan.rules
        res = registered_results_many(rules, metrics, self.sel, size)
        if res is None:
            return None
        decisions = decide_all_many(rules, res, self.table, metrics, size)
        if decisions is None:
            return None
        return res, decisions


_SCORERS: dict[str, Scorer] = {}


def scorer(plan: Plan) -> Scorer:
    found = _SCORERS.get(plan.key) if plan.key else None
    if found is None:
        found = Scorer(plan)
        if plan.key:
            _SCORERS.clear()
            _SCORERS[plan.key] = found
    return found


def _num(x) -> float:
    return math.nan if x is None else float(x)


def _sums(plan: Plan, counts: np.ndarray) -> dict[str, tuple[str, np.ndarray, np.ndarray]]:
    c = np.asarray(counts, dtype=np.float64)
    return {
        mid: (kind, np.einsum("bgk,gk->bg", c, num), np.einsum("bgk,gk->bg", c, den))
        for mid, (kind, num, den) in plan.design.contributions.items()
    }


def score_counts(plan: Plan, counts: np.ndarray) -> list:
    """(results, decision) of each simulated study, ``counts`` (studies, groups, kinds)."""
    sc = scorer(plan)
    c = np.asarray(counts, dtype=np.float64)
    sums = _sums(plan, c)
    out = []
    for i in range(c.shape[0]):
        metrics = {mid: RowMetric(mid, kind, n[i], d[i]) for mid, (kind, n, d) in sums.items()}
        out.append(sc.score(metrics))
    return out


def score_block(plan: Plan, counts: np.ndarray):
    """(verdicts, failed gates, estimates, contrasts) of a block of simulated studies, scored
    all at once (:func:`prereg.decide.evaluate.registered_results_many` and
    :func:`~prereg.decide.evaluate.decide_all_many`), as :func:`run_block` lays them out; None
    when the rules need the one-study path."""
    rules = plan.rules
    n = int(counts.shape[0])
    sums = _sums(plan, counts)
    metrics = {mid: RowMetric(mid, kind, num, den) for mid, (kind, num, den) in sums.items()}
    got = scorer(plan).score_many(metrics, n)
    if got is None:
        return None
    res, decisions = got
    if decisions.unclear is not None and decisions.unclear.any():
        return None  # a gate's float figure within rounding of its threshold: one by one
    columns = [decisions.verdicts[h] for h in rules.HYPOTHESES]
    verdicts = [tuple(v[i] for v in columns) for i in range(n)]
    es, cs = list(rules.ESTIMATES), list(rules.CONTRASTS)
    est = np.full((n, len(es), len(ESTIMATE_FIELDS)), np.nan)
    con = np.full((n, len(cs), len(CONTRAST_FIELDS)), np.nan)
    for j, e in enumerate(es):
        x = res[e.id]
        est[:, j] = np.stack([x.estimate, x.lower, x.upper], axis=1)
    for j, c in enumerate(cs):
        x = res[c.id]
        con[:, j] = np.stack([x.estimate, x.lower, x.upper, x.p, x.adjusted_p], axis=1)
    return verdicts, decisions.failed, est, con


def score_block_per_study(plan: Plan, counts: np.ndarray):
    """What :func:`score_block` gives, one simulated study at a time (:func:`score_counts`)."""
    rules = plan.rules
    n = int(counts.shape[0])
    hyps = list(rules.HYPOTHESES)
    gates = list(rules.GATES)
    es, cs = list(rules.ESTIMATES), list(rules.CONTRASTS)
    verdicts: list[tuple[str, ...]] = []
    failed = np.zeros((n, len(gates)), dtype=bool)
    est = np.full((n, len(es), len(ESTIMATE_FIELDS)), np.nan)
    con = np.full((n, len(cs), len(CONTRAST_FIELDS)), np.nan)
    for i, (res, decision) in enumerate(score_counts(plan, counts)):
        verdicts.append(tuple(decision.verdicts[h] for h in hyps))
        for gate, _, _ in decision.failures:
            failed[i, gates.index(gate)] = True
        r = res.results
        for j, e in enumerate(es):
            x = r[e.id]
            est[i, j] = (x.estimate, x.lower, x.upper)
        for j, ct in enumerate(cs):
            x = r[ct.id]
            con[i, j] = (x.estimate, x.lower, x.upper, _num(x.p), _num(x.adjusted_p))
    return verdicts, failed, est, con


def run_block(plan: Plan, condition: int, block: int) -> BlockResult:
    if plan.path == "rows":
        from .rows import run_block as run_rows

        return run_rows(plan, condition, block)
    cond = plan.conditions[condition]
    n = plan.size(block)
    counts = draw_block(plan.design, cond, plan.seed, block, plan.block_size)[:n]
    scored = score_block(plan, counts)
    if scored is None:
        scored = score_block_per_study(plan, counts)
    return BlockResult(condition, block, *scored, decision_outcomes(plan, *scored))


def run_task(plan: Plan, task: tuple[int, int]) -> BlockResult:
    return run_block(plan, *task)
