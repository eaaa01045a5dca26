"""The row path: simulated studies drawn row by row and scored as ``score`` scores them.

The counts path (:mod:`.model`, :mod:`.run`) simulates a study as the number of rows of each
kind per row group, which determines every proportion.  Rules that read more than counts (a
method of the catalogue, a statistic of the study's own, a mean or geometric mean of numbers a
scenario draws, an ECE or AUROC of drawn confidences, a paired contrast, a bootstrap interval)
need the rows themselves.  An engine that can draw them gives its :class:`~.design.Design` a
*row model* (``design.rows``), an object with

- ``table``: the registered rows (a :class:`prereg.decide.table.RowTable`, with the item
  fields the engine's manifest holds);
- ``records(condition, rng)``: the observation records of one simulated study under a
  condition (:class:`.model.Condition`), drawn from ``rng``;
- ``score(records)``: ``(row metrics, row columns)`` of those records, computed by the
  engine's own scoring code.

Each simulated study is then scored by :func:`prereg.decide.evaluate.registered_results`
(estimates, contrasts, then every registered analysis through
:mod:`prereg.decide.analyses`, families adjusted), :func:`~prereg.decide.evaluate.decide_all`
and :func:`prereg.decide.decision.decide`, exactly as ``score`` does: there is no second
implementation of any rule.

Randomness of block ``b`` of condition ``c``: ``Generator(PCG64(SeedSequence(seed,
spawn_key=(c.stream, b))))``, the block's studies drawn one after another from it (so a
partial last block is a prefix of a full one), as on the counts path.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from prereg.errors import UserError

#: The figures kept per analysis and simulated study (NaN for a missing one).
ANALYSIS_FIELDS = ("estimate", "lower", "upper", "p", "adjusted_p")


def needs_rows(design, rules, claims=()) -> bool:
    """Whether the counts path cannot diagnose these rules (after leaving out the unread
    figures it cannot simulate): they read an analysis, or a figure the counts do not give."""
    from .design import leave_out_unread, refuse_unmodelled

    trial = copy.copy(rules)
    leave_out_unread(design, trial, claims)
    if getattr(trial, "ANALYSES", ()):
        return True
    try:
        refuse_unmodelled(design, trial)
    except UserError:
        return True
    return False


class RowScorer:
    """prereg.decide over a row model's registered rows (built once per process)."""

    def __init__(self, plan):
        from prereg.decide.evaluate import Selections

        self.plan = plan
        self.model = plan.design.rows
        self.table = self.model.table
        self.sel = Selections(self.table)

    def score(self, records):
        """(results, decision, outcome) of one simulated study's records."""
        from prereg.decide.decision import decide
        from prereg.decide.evaluate import cell_figures, decide_all, registered_results

        rules = self.plan.rules
        metrics, columns = self.model.score(records)
        self.sel.forget_metrics()
        res = registered_results(rules, metrics, self.sel, columns)
        figures = cell_figures(metrics, self.table)
        decision = decide_all(rules, res.results, self.table, figures)
        registered = getattr(rules, "DECISION", None)
        outcome = None
        if registered is not None:
            failed = {g.id for g, _, _ in decision.failures}
            held = {g.id: g.id not in failed for g in rules.GATES}
            record = decide(registered, decision.verdicts, held, res.results)
            outcome = None if record is None else record["outcome"]
        return res, decision, outcome


_SCORERS: dict[str, RowScorer] = {}


def scorer(plan) -> RowScorer:
    found = _SCORERS.get(plan.key) if plan.key else None
    if found is None:
        found = RowScorer(plan)
        if plan.key:
            _SCORERS.clear()
            _SCORERS[plan.key] = found
    return found


def _num(x) -> float:
    if x is None:
        return math.nan
    return float(x)


def run_block(plan, condition: int, block: int):
    """The :class:`.run.BlockResult` of one block on the row path."""
    from .run import CONTRAST_FIELDS, ESTIMATE_FIELDS, BlockResult

    cond = plan.conditions[condition]
    n = plan.size(block)
    rules = plan.rules
    ss = np.random.SeedSequence(plan.seed, spawn_key=(cond.stream, block))
    rng = np.random.Generator(np.random.PCG64(ss))
    sc = scorer(plan)
    hyps = list(rules.HYPOTHESES)
    gates = [g.id for g in rules.GATES]
    es, cs = list(rules.ESTIMATES), list(rules.CONTRASTS)
    an = list(getattr(rules, "ANALYSES", ()))
    verdicts: list[tuple[str, ...]] = []
    outcomes: list[str | None] = []
    failed = np.zeros((n, len(gates)), dtype=bool)
    est = np.full((n, len(es), len(ESTIMATE_FIELDS)), np.nan)
    con = np.full((n, len(cs), len(CONTRAST_FIELDS)), np.nan)
    ana = np.full((n, len(an), len(ANALYSIS_FIELDS)), np.nan)
    for i in range(n):
        records = plan.design.rows.records(cond, rng)
        try:
            res, decision, outcome = sc.score(records)
        except UserError as exc:
            raise UserError(
                f"diagnose: simulated study {block * plan.block_size + i + 1} under"
                f" {cond.label}: {exc.message}",
                problems=exc.problems,
            ) from None
        verdicts.append(tuple(decision.verdicts[h] for h in hyps))
        outcomes.append(outcome)
        for gate, _, _ in decision.failures:
            failed[i, gates.index(gate.id)] = True
        r = res.results
        for j, e in enumerate(es):
            x = r[e.id]
            est[i, j] = (x.estimate, x.lower, x.upper)
        for j, c in enumerate(cs):
            x = r[c.id]
            con[i, j] = (x.estimate, x.lower, x.upper, _num(x.p), _num(x.adjusted_p))
        for j, a in enumerate(an):
            x = r[a.id]
            ana[i, j] = (x.estimate, x.lower, x.upper, _num(x.p), _num(x.adjusted_p))
    registered = getattr(rules, "DECISION", None)
    return BlockResult(
        condition,
        block,
        verdicts,
        failed,
        est,
        con,
        outcomes if registered is not None else None,
        ana,
    )
