"""The row path: simulated studies drawn row by row and scored as ``score`` scores them.

The counts path (:mod:`.model`, :mod:`.run`) simulates a study as the number of rows of each
kind per row group, which determines every proportion.  Rules that read more than counts (a
method of the catalogue, a statistic of the study's own, a mean or geometric mean of numbers a
scenario draws, an ECE or AUROC of drawn confidences, a paired contrast, a bootstrap interval)
need the rows themselves.  An engine that can draw them gives its :class:`~.design.Design` a
*row model* (``design.rows``), an object with

- ``table``: the registered rows (a :class:`prereg.decide.table.RowTable`, with the item
  fields the engine's manifest holds);
- ``records(condition, stream, study)``: the observation records of simulated study number
  ``study`` (from 0) under a condition (:class:`.model.Condition`), drawn from ``stream``
  (:class:`Stream`);
- ``score(records)``: ``(row metrics, row columns)`` of those records, computed by the
  engine's own scoring code.

Each simulated study is then scored by :func:`prereg.decide.evaluate.registered_results`
(estimates, contrasts, then every registered analysis through
:mod:`prereg.decide.analyses`, families adjusted), :func:`~prereg.decide.evaluate.decide_all`
and :func:`prereg.decide.decision.decide`, exactly as ``score`` does: there is no second
implementation of any rule.

A row model may also offer ``batch(condition, stream, first, size)`` (the same studies as
``records`` draws, as ``(observed, columns)`` of all their rows one after another, or None) and
``batch_metrics(observed, columns)`` (their row metrics, by the engine's own code), plus
``record_fields`` (the fields its records carry).  A block is then scored whole
(:mod:`.batch`): every figure and verdict equal to what the one-study scorer gives each
study — a study whose figure from sums lies near a threshold, or any study when the rules
need it, is scored by :class:`RowScorer` from its slice of the block's columns.

Randomness of condition ``c`` (:class:`Stream`): one PCG64 stream, ``PCG64(SeedSequence(seed,
spawn_key=(c.stream, ROW_STREAM)))``, of which simulated study ``s`` reads the 64-bit words
``s·W`` to ``(s + 1)·W − 1``, ``W`` fixed by the condition (the row model's layout of a study's
draws); a block jumps to its first study's words (``PCG64.advance``) and takes its studies'
words in one call.  A study whose draws take a varying number of words (a structured
scenario) draws from a generator of its own, ``Generator(PCG64(SeedSequence(seed,
spawn_key=(c.stream, ROW_STREAM, s))))``.  Either way a study's draws depend on the seed, the
condition and its number alone: not on the block size, the blocks beside it or the workers.
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
        return self.score_metrics(*self.model.score(records))

    def score_metrics(self, metrics, columns):
        """(results, decision, outcome) of one simulated study's row metrics and columns."""
        from prereg.decide.certify import gate_figures
        from prereg.decide.decision import decide
        from prereg.decide.evaluate import cell_figures, decide_all, registered_results

        rules = self.plan.rules
        self.sel.forget_metrics()
        res = registered_results(rules, metrics, self.sel, columns)
        # a gate's figure as score decides it: exact (an ECE of exactly 1/20 meets le 0.05)
        figures = gate_figures(rules, metrics, self.table, cell_figures(metrics, self.table))
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
    """The process's scorer of ``plan``: kept by the plan's key, and rebuilt when the plan's
    row model is another object (a redesign at the registered size has the registered plan's
    key but draws with a row model of its own, whose records the kept scorer would refuse)."""
    found = _SCORERS.get(plan.key) if plan.key else None
    if found is not None and found.model is not plan.design.rows:
        found = None
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


#: Whether blocks are scored whole (:mod:`.batch`) where the rules allow it.
BATCHED = True


def run_block(plan, condition: int, block: int):
    """The :class:`.run.BlockResult` of one block on the row path: drawn and scored whole
    (:func:`_run_batched`) where the row model and the rules allow it, else study by study
    from records (:func:`_run_records`), the same studies either way."""
    if BATCHED and hasattr(plan.design.rows, "batch"):
        got = _run_batched(plan, condition, block)
        if got is not None:
            return got
    return _run_records(plan, condition, block)


#: The second spawn key of the row path's streams (the counts path's is the block number).
ROW_STREAM = 0x726F7773


class Stream:
    """The random words of one condition's simulated studies on the row path: study ``s``
    reads words ``s·width`` to ``(s + 1)·width − 1`` of one PCG64 stream."""

    def __init__(self, seed: int, stream: int):
        self.seed = int(seed)
        self.stream = int(stream)

    def words(self, first: int, size: int, width: int) -> np.ndarray:
        """The words of studies ``first`` to ``first + size − 1``: uint64, (size, width)."""
        ss = np.random.SeedSequence(self.seed, spawn_key=(self.stream, ROW_STREAM))
        bits = np.random.PCG64(ss)
        if first:
            bits.advance(int(first) * int(width))
        return bits.random_raw(int(size) * int(width)).reshape(int(size), int(width))

    def generator(self, study: int) -> np.random.Generator:
        """Study ``study``'s own generator (for draws of a varying number of words)."""
        ss = np.random.SeedSequence(self.seed, spawn_key=(self.stream, ROW_STREAM, int(study)))
        return np.random.Generator(np.random.PCG64(ss))


def stream(plan, condition: int) -> Stream:
    """The row path's stream of condition ``condition`` of ``plan``."""
    return Stream(plan.seed, plan.conditions[condition].stream)


class _Block:
    """What a block keeps of each simulated study (see :class:`.run.BlockResult`)."""

    def __init__(self, plan, n: int):
        from .run import CONTRAST_FIELDS, ESTIMATE_FIELDS

        rules = plan.rules
        self.rules = rules
        self.hyps = list(rules.HYPOTHESES)
        self.gates = [g.id for g in rules.GATES]
        self.es, self.cs = list(rules.ESTIMATES), list(rules.CONTRASTS)
        self.an = list(getattr(rules, "ANALYSES", ()))
        self.verdicts: list = [None] * n
        self.outcomes: list = [None] * n
        self.failed = np.zeros((n, len(self.gates)), dtype=bool)
        self.est = np.full((n, len(self.es), len(ESTIMATE_FIELDS)), np.nan)
        self.con = np.full((n, len(self.cs), len(CONTRAST_FIELDS)), np.nan)
        self.ana = np.full((n, len(self.an), len(ANALYSIS_FIELDS)), np.nan)

    def put(self, i: int, res, decision, outcome) -> None:
        """Study ``i`` as the one-study scorer scored it."""
        self.verdicts[i] = tuple(decision.verdicts[h] for h in self.hyps)
        self.outcomes[i] = outcome
        self.failed[i] = False
        for gate, _, _ in decision.failures:
            self.failed[i, self.gates.index(gate.id)] = True
        r = res.results
        for j, e in enumerate(self.es):
            x = r[e.id]
            self.est[i, j] = (x.estimate, x.lower, x.upper)
        for j, c in enumerate(self.cs):
            x = r[c.id]
            self.con[i, j] = (x.estimate, x.lower, x.upper, _num(x.p), _num(x.adjusted_p))
        for j, a in enumerate(self.an):
            x = r[a.id]
            self.ana[i, j] = (x.estimate, x.lower, x.upper, _num(x.p), _num(x.adjusted_p))

    def result(self, condition: int, block: int):
        from .run import BlockResult

        registered = getattr(self.rules, "DECISION", None)
        return BlockResult(
            condition,
            block,
            self.verdicts,
            self.failed,
            self.est,
            self.con,
            self.outcomes if registered is not None else None,
            self.ana,
        )


def _failure(plan, cond, block: int, i: int, exc: UserError) -> UserError:
    return UserError(
        f"diagnose: simulated study {block * plan.block_size + i + 1} under"
        f" {cond.label}: {exc.message}",
        problems=exc.problems,
    )


def _run_records(plan, condition: int, block: int):
    """One study at a time: its records drawn, then scored as score scores them."""
    cond = plan.conditions[condition]
    n = plan.size(block)
    first = block * plan.block_size
    draws = stream(plan, condition)
    sc = scorer(plan)
    out = _Block(plan, n)
    for i in range(n):
        records = plan.design.rows.records(cond, draws, first + i)
        try:
            out.put(i, *sc.score(records))
        except UserError as exc:
            raise _failure(plan, cond, block, i, exc) from None
    return out.result(condition, block)


def _run_batched(plan, condition: int, block: int):
    """The whole block drawn as columns (the row model's ``batch``) and scored at once
    (:class:`.batch.BlockScorer`); a study whose figure from sums is not clear of a threshold
    is scored alone by :class:`RowScorer` from the same columns, and so is every study when
    the rules need it.  None when the row model cannot draw the block as columns or a study's
    rows are refused (the record path then says which study, as score would)."""
    cond = plan.conditions[condition]
    n = plan.size(block)
    model = plan.design.rows
    drawn = model.batch(cond, stream(plan, condition), block * plan.block_size, n)
    if drawn is None:
        return None
    seen, columns = drawn
    try:
        metrics = model.batch_metrics(seen, columns)
    except UserError:
        return None
    return score_columns(plan, condition, block, n, metrics, columns)


def score_columns(plan, condition: int, block: int, n: int, metrics, columns):
    """The :class:`.run.BlockResult` of ``n`` studies whose rows lie one study after another
    in ``metrics`` and ``columns`` (the engine's row metrics and columns of them all), scored
    whole (:class:`.batch.BlockScorer`, :func:`prereg.decide.evaluate.decide_all_many`),
    with each study not clear of a threshold scored alone by :class:`RowScorer`."""
    from prereg.decide.evaluate import decide_all_many

    from .batch import BlockScorer, Unsupported, _study

    cond = plan.conditions[condition]
    model = plan.design.rows
    sc = scorer(plan)
    rows = len(sc.table)
    out = _Block(plan, n)
    rules = plan.rules
    block_scorer = BlockScorer(rules, sc.sel, n, metrics, columns, model.record_fields)
    try:
        results = block_scorer.results()
        decisions = getattr(rules, "RULES", None)
        if decisions is None:
            raise Unsupported("RULES")
        for h in rules.HYPOTHESES:
            rule, verdicts = decisions[h]
            block_scorer.screen(rule, results)
            for v in verdicts:
                block_scorer.screen(v.when, results)
        registered = getattr(rules, "DECISION", None)
        reads = registered is not None and any(_reads_figures(r.when) for r in registered.rules)
        if reads:
            for r in registered.rules:
                block_scorer.screen(r.when, results)
        got = decide_all_many(
            rules, results, sc.table, block_scorer.metrics, n, block_scorer.cell_figure
        )
        if got is None:
            raise Unsupported("gates")
        block_scorer.unclear |= got.unclear  # a gate's figure within rounding of its threshold
    except (Unsupported, UserError):  # the one-study scorer refuses with the study's number
        again = range(n)
    else:
        clear = np.flatnonzero(~block_scorer.unclear)
        again = np.flatnonzero(block_scorer.unclear).tolist()
        _put_clear(plan, out, clear, results, got, reads)
    for i in again:
        try:
            out.put(i, *sc.score_metrics(*_study(metrics, columns, i, rows)))
        except UserError as exc:
            raise _failure(plan, cond, block, i, exc) from None
    return out.result(condition, block)


def _reads_figures(node) -> bool:
    from .run import _reads_figures as reads

    return reads(node)


def _put_clear(plan, out: _Block, clear: np.ndarray, results, decisions, reads: bool) -> None:
    """The studies decided from the block's arrays."""
    from prereg.decide.decision import decide
    from prereg.rules import ContrastResult

    rules = plan.rules
    columns = [decisions.verdicts[h] for h in out.hyps]
    out.failed[clear] = decisions.failed[clear]
    for j, e in enumerate(out.es):
        x = results[e.id]
        out.est[clear, j] = np.stack([x.estimate, x.lower, x.upper], axis=1)[clear]
    for j, c in enumerate(out.cs):
        x = results[c.id]
        figs = np.stack([x.estimate, x.lower, x.upper, x.p, x.adjusted_p], axis=1)
        out.con[clear, j] = figs[clear]
    for j, a in enumerate(out.an):
        x = results[a.id]
        figs = np.stack([x.estimate, x.lower, x.upper, x.p, x.adjusted_p], axis=1)
        out.ana[clear, j] = figs[clear]
    registered = getattr(rules, "DECISION", None)
    items = (*out.es, *out.cs, *out.an)
    known: dict[tuple, str | None] = {}  # a decision that reads no figure, by its inputs
    for i in clear.tolist():
        out.verdicts[i] = tuple(v[i] for v in columns)
        if registered is None:
            continue
        key = (out.verdicts[i], tuple(out.failed[i].tolist()))
        if not reads and key in known:
            out.outcomes[i] = known[key]
            continue
        held = {g: not bool(out.failed[i, k]) for k, g in enumerate(out.gates)}
        figures = {}
        if reads:
            for item in items:
                x = results[item.id]
                figures[item.id] = ContrastResult(
                    item.id,
                    float(x.estimate[i]),
                    float(x.lower[i]),
                    float(x.upper[i]),
                    p=_none(x.p[i]),
                    adjusted_p=_none(x.adjusted_p[i]),
                    extra={k: int(v[i]) for k, v in x.extra.items()},  # counts: exact figures
                )
        record = decide(
            registered, dict(zip(out.hyps, out.verdicts[i], strict=True)), held, figures
        )
        out.outcomes[i] = known[key] = None if record is None else record["outcome"]


def _none(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x
