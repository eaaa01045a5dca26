"""The study's decision: the last step of a registration, after the gates and the verdicts.

A study registers its outcomes and rules tried in order (``decision:`` in the spec); each rule
is a condition tree of :mod:`prereg.rules` that may also read a hypothesis' verdict
(:class:`~prereg.rules.VerdictIs`) and whether a gate held (:class:`~prereg.rules.GateIs`).
:func:`decide` evaluates it once over the same results the verdicts were decided from and
returns the record every output shows first: the outcome, the rule that fired (its position
and its words, or ``otherwise``) and, for each condition of that rule, what it read.

This module imports nothing heavy: generated rules modules and every engine use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prereg.rules import (
    AllOf,
    AnyOf,
    AtLeast,
    Compare,
    ContrastResult,
    ForEach,
    GateIs,
    Not,
    State,
    VerdictIs,
    condition,
    evaluate,
    figure_of,
    fill,
    threshold_fields,
)


@dataclass(frozen=True)
class Outcome:
    id: str
    title: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class Rule:
    outcome: str
    when: object
    description: str | None = None


@dataclass(frozen=True)
class Registered:
    """A study's registered decision: its outcomes, its rules in order, and ``otherwise``."""

    outcomes: tuple[Outcome, ...]
    rules: tuple[Rule, ...]
    otherwise: str
    description: str | None = None

    def outcome(self, outcome_id: str) -> Outcome:
        for o in self.outcomes:
            if o.id == outcome_id:
                return o
        raise KeyError(outcome_id)


def from_spec(data: Mapping | None) -> Registered | None:
    """The registered decision of a spec's (or compiled configuration's) ``decision``."""
    if not data:
        return None
    return Registered(
        outcomes=tuple(
            Outcome(str(o["id"]), o.get("title"), o.get("description")) for o in data["outcomes"]
        ),
        rules=tuple(
            Rule(str(r["outcome"]), condition(r["when"]), r.get("description"))
            for r in data.get("rules") or ()
        ),
        otherwise=str(data["otherwise"]),
        description=data.get("description"),
    )


def _number(x, node: Compare | None = None) -> Any:
    """A figure as a decision's reading shows it: a fraction with its float, a float as is.
    A certified figure is shown by its float when the float reads on the side of ``node``'s
    threshold its true value lies on; otherwise by its exact value, the threshold it ties, or
    a decimal inside the balls that decided it (``certified``), so the reading never says a
    figure on one side held a comparison that only the other side holds."""
    from fractions import Fraction

    from prereg.stats.compare import Certified, decimal_text, representative, sign

    if isinstance(x, Fraction):
        return {"value": float(x), "exact": f"{x.numerator}/{x.denominator}"}
    if isinstance(x, Certified):
        if node is None:
            return x.value
        side = sign(x, node.value, decimals=node.decimals)
        if side == sign(x.value, node.value, decimals=node.decimals):
            return x.value
        if x.exact is not None:
            return _number(Fraction(x.exact()))
        near = representative(x)
        if near is None:  # pragma: no cover - balls decided it, so they were kept
            return x.value
        return {"value": x.value, "certified": decimal_text(near)}
    return x


def readings(node, results: Mapping[str, ContrastResult], state: State, binding=None) -> list[dict]:
    """What each leaf of a condition read and whether it held, in the order written (the
    explanation of a rule that fired)."""
    binding = binding or {}
    out: list[dict] = []
    if isinstance(node, Compare):
        target = fill(node.target, binding)
        res = results.get(target)
        figure = None if res is None else figure_of(res, node.quantity)
        entry = {
            "target": target,
            "quantity": node.quantity,
            "figure": _number(figure, node),
            "op": node.op,
            **threshold_fields(node.value),
        }
        if node.decimals is not None:
            entry["decimals"] = node.decimals
        entry["held"] = evaluate(node, results, binding, state)
        out.append(entry)
    elif isinstance(node, VerdictIs):
        out.append(
            {
                "hypothesis": node.hypothesis,
                "verdict": state.verdicts.get(node.hypothesis),
                "is": list(node.verdicts),
                "held": evaluate(node, results, binding, state),
            }
        )
    elif isinstance(node, GateIs):
        gates = state.gates if node.gate is None else {node.gate: state.gates[node.gate]}
        out.append(
            {
                "gate": node.gate,
                "held": {g: bool(h) for g, h in gates.items()},
                "is": node.state,
                "holds": evaluate(node, results, binding, state),
            }
        )
    elif isinstance(node, Not):
        inner = readings(node.condition, results, state, binding)
        out.append({"not": inner, "held": evaluate(node, results, binding, state)})
    elif isinstance(node, (AllOf, AnyOf, AtLeast)):
        for c in node.conditions:
            out.extend(readings(c, results, state, binding))
    elif isinstance(node, ForEach):
        for v in node.values:
            out.extend(readings(node.condition, results, state, {**binding, node.name: v}))
    return out


def decide(
    registered: Registered | None,
    verdicts: Mapping[str, str],
    gates: Mapping[str, bool],
    results: Mapping[str, ContrastResult],
) -> dict | None:
    """The evaluated decision (None when the study registers none): ``outcome``, its
    ``title``, ``rule`` (1-based position of the rule that fired, or ``"otherwise"``), the
    rule's ``description`` and ``read`` (what its conditions read)."""
    if registered is None:
        return None
    state = State(dict(verdicts), dict(gates))
    for i, rule in enumerate(registered.rules, start=1):
        if evaluate(rule.when, results, None, state):
            fired: dict[str, Any] = {"rule": i}
            if rule.description:
                fired["why"] = rule.description
            fired["read"] = readings(rule.when, results, state)
            return _record(registered, rule.outcome, fired)
    why = "no rule held" if registered.rules else "the registered decision reads no data"
    return _record(registered, registered.otherwise, {"rule": "otherwise", "why": why})


def _record(registered: Registered, outcome_id: str, fired: dict) -> dict:
    o = registered.outcome(outcome_id)
    out: dict[str, Any] = {"outcome": o.id}
    if o.title:
        out["title"] = o.title
    out.update(fired)
    return out


def in_words(record: Mapping | None) -> str:
    """One line: the outcome and the rule that fired."""
    if not record:
        return "no decision registered"
    rule = record.get("rule")
    why = record.get("why")
    if rule != "otherwise":
        fired = f"rule {rule}" + (f": {why}" if why else "")
    elif why == "no rule held":
        fired = "no rule held (otherwise)"
    else:
        fired = "registered whatever the data"
    title = f" ({record['title']})" if record.get("title") else ""
    return f"{record['outcome']}{title}: {fired}"
