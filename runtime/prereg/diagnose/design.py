"""A study's registered rows as row groups, and what each kind of row contributes.

A *row group* is a registered cell, crossed with the row attributes an engine derives (d17's
failure position); its rows are exchangeable under a scenario, whose rates select by split,
factors and row attributes only.  Each row of a simulated study is of one kind
(:data:`KINDS`): dropped by coverage (never observed), or observed with its outcome right or
wrong, either at the first attempt or after a failed first attempt.  For each metric with a
compute block and each group, :class:`Design` holds the numerator and the denominator one row
of each kind contributes; a simulated study's metric over a group is the number of rows of
each kind times those contributions.  An engine finds the contributions by scoring prototype
rows (one per group and kind) through its own scoring code.

A metric whose contributions depend on more than the kind of row (a calibrated accuracy
depends on the P(yes) drawn and the calibrator, not only on whether the raw answer is right)
is *unmodelled*: an engine lists it, and diagnose refuses a study whose rules or gates read
one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from prereg.decide.metrics import RowMetric
from prereg.decide.table import RowTable
from prereg.errors import UserError

#: The kinds of row, in the order of the last axis of every count and contribution array.
KINDS = ("dropped", "right", "wrong", "retried-right", "retried-wrong")
DROPPED, RIGHT, WRONG, RETRIED_RIGHT, RETRIED_WRONG = range(len(KINDS))


@dataclass(frozen=True)
class Design:
    """Row groups (one per cell × row attributes present) and per-kind metric contributions.

    ``contributions[m] = (kind, num, den)`` with ``num`` and ``den`` float arrays of shape
    (groups, kinds).
    """

    cells: tuple[Mapping[str, Any], ...]
    group_cell: np.ndarray  # int (G,)
    group_attributes: Mapping[str, np.ndarray]  # name -> label per group
    group_rows: np.ndarray  # int (G,): registered rows of the group
    contributions: Mapping[str, tuple[str, np.ndarray, np.ndarray]]
    unmodelled: frozenset[str] = frozenset()
    notes: tuple[str, ...] = field(default_factory=tuple)
    unmodelled_why: Mapping[str, str] = field(default_factory=dict)  # metric -> the reason
    # the engine's whole-row simulation (prereg.diagnose.rows.RowModel), or None: diagnose
    # takes it for rules the counts cannot give (analyses, numbers drawn by a scenario)
    rows: Any = None
    # per proportion metric, what a row of each kind contributes in expectation under any
    # registered structure, as ``contributions`` (an unmodelled metric's: the counts path
    # never reads them, diagnose's truths do)
    marginal: Mapping[str, tuple[str, np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def groups(self) -> int:
        return int(self.group_cell.size)

    def attributes(self, g: int) -> dict[str, str]:
        from prereg.decide.table import cell_attributes

        out = cell_attributes(self.cells[int(self.group_cell[g])])
        out.update({k: str(v[g]) for k, v in self.group_attributes.items()})
        return out

    def table(self) -> RowTable:
        """One row per group: the table prereg.decide scores a simulated study over."""
        return RowTable(
            ids=tuple(f"group-{g}" for g in range(self.groups)),
            cell=np.asarray(self.group_cell, dtype=np.int64),
            cells=self.cells,
            attributes={k: np.asarray(v) for k, v in self.group_attributes.items()},
        )

    def metrics(self, counts: np.ndarray) -> dict[str, RowMetric]:
        """The row metrics of one simulated study, ``counts`` (groups, kinds) rows of each kind
        per group: one row per group, its numerator and denominator summed over its rows."""
        c = np.asarray(counts, dtype=np.float64)
        return {
            mid: RowMetric(mid, kind, (c * num).sum(axis=1), (c * den).sum(axis=1))
            for mid, (kind, num, den) in self.contributions.items()
        }


def group_rows_of(
    cells: Sequence[Mapping[str, Any]], cell: np.ndarray, attributes: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """(group cell, group attributes, rows per group) of registered rows given per row (their
    cell index and each row attribute's label), groups in order of cell then attribute labels."""
    cell = np.asarray(cell, dtype=np.int64)
    names = sorted(attributes)
    keys = list(
        zip(cell.tolist(), *(np.asarray(attributes[n]).tolist() for n in names), strict=True)
    )
    counts: dict[tuple, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    ordered = sorted(counts, key=lambda k: (k[0], *map(str, k[1:])))
    group_cell = np.array([k[0] for k in ordered], dtype=np.int64)
    group_attrs = {
        n: np.array([str(k[1 + i]) for k in ordered], dtype=object) for i, n in enumerate(names)
    }
    rows = np.array([counts[k] for k in ordered], dtype=np.int64)
    del cells
    return group_cell, group_attrs, rows


def contributions_of(
    metrics: Mapping[str, RowMetric], groups: int
) -> dict[str, tuple[str, np.ndarray, np.ndarray]]:
    """Per-kind contributions from the row metrics of prototype rows laid out group by group,
    one row per kind (row ``g * len(KINDS) + kind``)."""
    k = len(KINDS)
    return {
        mid: (m.kind, m.num.reshape(groups, k).copy(), m.den.reshape(groups, k).copy())
        for mid, m in metrics.items()
    }


def differing(
    a: Mapping[str, tuple[str, np.ndarray, np.ndarray]],
    b: Mapping[str, tuple[str, np.ndarray, np.ndarray]],
) -> frozenset[str]:
    """Metrics whose contributions differ between two realizations of the same kinds of row
    (they depend on more than the kind: unmodelled)."""
    out = set()
    for mid, (_, num, den) in a.items():
        _, num2, den2 = b[mid]
        if not (np.array_equal(num, num2) and np.array_equal(den, den2)):
            out.add(mid)
    return frozenset(out)


# -- the rules ------------------------------------------------------------------------------


class Rules:
    """A study's compiled rules as plain data (``ESTIMATES``, ``CONTRASTS``, ``FAMILIES``,
    ``GATES``, ``SEQUENCE`` and ``HYPOTHESES``), so that they travel to worker processes and cluster workers
    by value.  Each hypothesis is :func:`prereg.rules.decide` bound to the rule and verdicts the
    generated module registers, which is exactly what the generated function calls."""

    def __init__(self, module):
        from prereg.compiler.render import const
        from prereg.rules import decide

        # where the generated rules live: a statistic of the study's own is found from it
        self.__file__ = getattr(module, "__file__", None)
        self.ESTIMATES = tuple(module.ESTIMATES)
        self.CONTRASTS = tuple(module.CONTRASTS)
        self.ANALYSES = tuple(getattr(module, "ANALYSES", ()))
        self.FAMILIES = dict(module.FAMILIES)
        self.GATES = tuple(module.GATES)
        self.DECISION = getattr(module, "DECISION", None)  # the study's registered decision
        # Fixed-sequence testing: a hypothesis is tested only when these earlier ones are
        # supported (read by prereg.decide.evaluate as the generated module's SEQUENCE).
        self.SEQUENCE = {h: tuple(b) for h, b in getattr(module, "SEQUENCE", {}).items()}
        self.RULES: dict[str, tuple[Any, tuple]] = {}
        for h in module.HYPOTHESES:
            try:
                rule = getattr(module, const(h) + "_RULE")
                verdicts = tuple(getattr(module, const(h) + "_VERDICTS"))
            except AttributeError:
                raise UserError(
                    f"{module.__name__}: hypothesis {h!r} has no {const(h)}_RULE and"
                    f" {const(h)}_VERDICTS: the generated rules are older than this prereg; run"
                    " prereg compile"
                ) from None
            self.RULES[h] = (rule, verdicts)
        self.HYPOTHESES = {h: partial(decide, r, v) for h, (r, v) in self.RULES.items()}

    def verdicts(self, hypothesis: str) -> list[str]:
        """The verdicts a hypothesis can get, in registered order (then the gates')."""
        from prereg.rules import NOT_SUPPORTED, NOT_TESTED, REPORTED_ONLY, SUPPORTED

        rule, verdicts = self.RULES[hypothesis]
        if verdicts:
            out = [v.verdict for v in verdicts]
        elif rule is not None:
            out = [SUPPORTED, NOT_SUPPORTED]
        else:
            return [REPORTED_ONLY]
        if hypothesis in self.SEQUENCE and NOT_TESTED not in out:
            out.append(NOT_TESTED)
        for g in self.GATES:
            if g.otherwise not in out:
                out.append(g.otherwise)
        return out

    def first_verdict(self, hypothesis: str) -> str:
        """The verdict whose share is a hypothesis' power (supported, or its first verdict)."""
        return self.verdicts(hypothesis)[0]


def targets(node, binding: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(target id, quantity) of every comparison a condition tree reads, placeholders filled."""
    from prereg.rules import AllOf, AnyOf, AtLeast, Compare, ForEach, fill

    binding = binding or {}
    if node is None:
        return []
    if isinstance(node, Compare):
        return [(fill(node.target, binding), node.quantity)]
    if isinstance(node, (AllOf, AnyOf, AtLeast)):
        return [t for c in node.conditions for t in targets(c, binding)]
    if isinstance(node, ForEach):
        return [t for v in node.values for t in targets(node.condition, {**binding, node.name: v})]
    return []


def hypothesis_targets(rules: Rules, hypothesis: str) -> list[tuple[str, str]]:
    rule, verdicts = rules.RULES[hypothesis]
    out = targets(rule)
    for v in verdicts:
        out += targets(v.when)
    return list(dict.fromkeys(out))


def _strings(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, Mapping):
        return {s for v in value.values() for s in _strings(v)}
    if isinstance(value, (list, tuple)):
        return {s for v in value for s in _strings(v)}
    return set()


def _why_not_simulated(design: Design, item) -> str | None:
    """Why diagnose cannot simulate an estimate or a contrast (None when it can)."""
    if getattr(item, "pair_by", None) is not None:
        return f"it is paired (pair_by {item.pair_by})"
    if item.interval in ("bootstrap", "none"):
        return f"it has a {item.interval} interval"
    m = item.metric
    if m in design.contributions and design.contributions[m][0] not in ("coverage", "proportion"):
        return f"it reads metric {m!r}, a {design.contributions[m][0]}"
    if m in design.unmodelled:
        why = design.unmodelled_why.get(m)
        return f"it reads metric {m!r}, which a scenario does not determine" + (
            f" ({why})" if why else ""
        )
    return None


def leave_out_unread(design: Design, rules: Rules, claims=()) -> list[str]:
    """Leave out of ``rules`` (in place) the reported figures diagnose cannot simulate, and say
    so: an estimate, or a contrast in no multiplicity family, that no hypothesis' rule or
    verdict and no claim reads.  What a rule, a family or a claim reads is kept, and refused
    by :func:`refuse_unmodelled` when it cannot be simulated; a study whose only such figures
    are reported (a mean latency, say) is diagnosed without them."""
    read = {t for h in rules.RULES for t, _ in hypothesis_targets(rules, h)}
    named = _strings(list(claims))
    notes = []

    def keep(item, kind: str) -> bool:
        if item.id in read or item.id in named or getattr(item, "family", None):
            return True
        why = _why_not_simulated(design, item)
        if why is None:
            return True
        notes.append(f"{kind} {item.id} is not simulated: {why}, and no rule reads it")
        return False

    rules.ESTIMATES = tuple(e for e in rules.ESTIMATES if keep(e, "estimate"))
    rules.CONTRASTS = tuple(c for c in rules.CONTRASTS if keep(c, "contrast"))
    analyses = []
    for a in getattr(rules, "ANALYSES", ()):
        if a.id in read or a.id in named or a.family:
            analyses.append(a)
        else:
            notes.append(
                f"analysis {a.id} is not simulated: the other rules are diagnosed from counts"
                f" of rows, which do not give a method's inputs ({a.method}), and no rule reads it"
            )
    rules.ANALYSES = tuple(analyses)
    return notes


def refuse_unmodelled(design: Design, rules: Rules) -> None:
    """Diagnose only rules whose metrics the scenarios determine."""
    analyses = getattr(rules, "ANALYSES", ())
    if analyses:
        raise UserError(
            "diagnose: this engine simulates counts of rows, not the rows an analysis (a"
            " method of the catalogue) reads, and these are read by a rule, a family or a claim",
            problems=[
                f"analysis {a.id} ({a.method})"
                if getattr(a, "statistic", None) is None
                else f"analysis {a.id} ({a.method}: a statistic of the study's own, in"
                f" {a.statistic['path']})"
                for a in analyses
            ],
        )
    used = {e.metric: f"estimate {e.id}" for e in rules.ESTIMATES}
    used.update({c.metric: f"contrast {c.id}" for c in rules.CONTRASTS})
    used.update({g.metric: f"gate {g.id}" for g in rules.GATES})
    designed = [
        f"{c.id} is paired (pair_by {c.pair_by})"
        for c in rules.CONTRASTS
        if getattr(c, "pair_by", None) is not None
    ]
    designed += [
        f"{i.id} has a {i.interval} interval"
        for i in (*rules.ESTIMATES, *rules.CONTRASTS)
        if i.interval in ("bootstrap", "none")
    ]
    sampled = {
        m
        for m in used
        if m in design.contributions
        and design.contributions[m][0] not in ("coverage", "proportion")
    }
    designed += [
        f"{what} reads metric {m!r}, a {design.contributions[m][0]}"
        for m, what in used.items()
        if m in sampled
    ]
    bad = sorted(m for m in used if m in design.unmodelled and m not in sampled)
    undetermined = [
        f"{used[m]} reads metric {m!r}, which depends on more than whether a row's"
        " outcome is right (a scenario gives no model of it"
        + (f": {design.unmodelled_why[m]})" if m in design.unmodelled_why else ")")
        for m in bad
    ]
    if designed:
        raise UserError(
            "diagnose: it simulates counts of independent rows, and these rules need more",
            problems=designed + undetermined,
        )
    if undetermined:
        raise UserError(
            "diagnose: the rules read metric(s) a scenario does not determine",
            problems=undetermined,
        )
