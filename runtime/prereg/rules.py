"""Decision rules as data, and their evaluation.

A study's rules are compiled (templates/rules.py.j2) into trees of the node types below; no
spec text is ever evaluated as code.  Contrast results come from the study's engine, which
computes each registered contrast (estimate, interval, test) with :mod:`prereg.stats`;
:func:`adjust_families` then adds multiplicity-adjusted P values per family, and
:func:`evaluate` decides a condition tree over those results.

A study figure (the spec's ``figures:``) is a value an engine computes by its own mechanism
(a simulated power, a feasibility count, whether a diagnostic contract held); the engine gives
it as :func:`figure_result` and the same :func:`decide` decides.  An engine that receives only
its compiled configuration (``ctx.config``) builds the rule trees with :func:`condition` from
the configuration's ``decisions`` (:func:`decision_of`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")

SUPPORTED = "supported"
NOT_SUPPORTED = "not-supported"
REPORTED_ONLY = "reported-only"
NOT_TESTED = "not-tested"  # fixed-sequence testing: an earlier hypothesis was not supported


@dataclass(frozen=True)
class Family:
    id: str
    adjustment: str
    alpha: float


@dataclass(frozen=True)
class Contrast:
    """A registered difference of a metric between selections ``a`` and ``b`` (a − b)."""

    id: str
    hypothesis: str
    metric: str
    a: Mapping[str, tuple[str, ...]]
    b: Mapping[str, tuple[str, ...]]
    interval: str
    level: float
    test: str
    family: str | None = None
    alternative: str = "two-sided"
    margin: float = 0.0
    pair_by: str | None = None  # the field pairing a row of a with the row of b (a paired design)
    bootstrap: tuple[int, int] | None = None  # (resamples, seed) of a bootstrap interval


@dataclass(frozen=True)
class Estimate:
    """A registered metric over one selection, with its interval."""

    id: str
    hypothesis: str
    metric: str
    of: Mapping[str, tuple[str, ...]]
    interval: str
    level: float
    bootstrap: tuple[int, int] | None = None  # (resamples, seed) of a bootstrap interval


@dataclass(frozen=True)
class Gate:
    """Every cell matching ``where`` must satisfy ``metric op value``, else all verdicts are ``otherwise``."""

    id: str
    metric: str
    where: Mapping[str, tuple[str, ...]]
    op: str
    value: float
    otherwise: str


@dataclass(frozen=True)
class ContrastResult:
    id: str
    estimate: float
    lower: float
    upper: float
    p: float | None = None
    adjusted_p: float | None = None
    extra: Mapping[str, float] = field(default_factory=dict)

    def quantity(self, name: str) -> float | None:
        if name == "abs_estimate":
            return abs(self.estimate)
        return getattr(self, name)


@dataclass(frozen=True)
class Compare:
    target: str
    quantity: str
    op: str
    value: float
    decimals: int | None = None


@dataclass(frozen=True)
class AllOf:
    conditions: tuple


@dataclass(frozen=True)
class AnyOf:
    conditions: tuple


@dataclass(frozen=True)
class AtLeast:
    count: int
    conditions: tuple


@dataclass(frozen=True)
class ForEach:
    name: str
    values: tuple[str, ...]
    quantifier: str
    count: int | None
    condition: object


@dataclass(frozen=True)
class Verdict:
    verdict: str
    when: object | None


def fill(text: str, binding: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: binding[m.group(1)], text)


_OPS = {
    "lt": lambda x, v: x < v,
    "le": lambda x, v: x <= v,
    "gt": lambda x, v: x > v,
    "ge": lambda x, v: x >= v,
}


def adjust_families(
    results: dict[str, ContrastResult], contrasts, families: Mapping[str, Family]
) -> dict[str, ContrastResult]:
    """Add adjusted P values: per family, over its members in registration order."""
    import numpy as np  # here, not at import: `prereg check` reads rules without numpy

    from prereg.stats.multiplicity import holm_adjust

    out = dict(results)
    members: dict[str, list[str]] = {}
    for c in contrasts:
        if c.family is not None:
            members.setdefault(c.family, []).append(c.id)
    for fam_id, ids in members.items():
        fam = families[fam_id]
        ps = np.array([np.nan if out[i].p is None else out[i].p for i in ids], dtype=float)
        if fam.adjustment == "holm":
            adj = holm_adjust(ps)
        elif fam.adjustment == "none":
            adj = ps
        else:  # pragma: no cover - the language admits no other value
            raise ValueError(f"unknown adjustment {fam.adjustment!r}")
        for i, a in zip(ids, adj, strict=True):
            out[i] = replace(out[i], adjusted_p=None if math.isnan(a) else float(a))
    return out


def threshold(value: float) -> Fraction:
    """A registered threshold as the decimal written in the spec (0.1 is exactly 1/10)."""
    return Fraction(repr(float(value)))


def exact_quantity(res: ContrastResult, quantity: str) -> Fraction | None:
    """The exact value of a proportion estimate (k/n) or difference (k1/n1 − k2/n2), from the
    counts the result carries; None when it has no counts (or an empty arm), so the float is
    compared instead. Interval bounds and P values are never exact."""
    if quantity not in ("estimate", "abs_estimate"):
        return None
    e = res.extra
    try:
        if "k1" in e:
            if not (e["n1"] and e["n2"]):
                return None
            x = Fraction(int(e["k1"]), int(e["n1"])) - Fraction(int(e["k2"]), int(e["n2"]))
        elif "k" in e:
            if not e["n"]:
                return None
            x = Fraction(int(e["k"]), int(e["n"]))
        else:
            return None
    except (TypeError, ValueError):
        return None
    return abs(x) if quantity == "abs_estimate" else x


def _round_half_up_exact(x: Fraction, decimals: int) -> Fraction:
    scale = 10**decimals
    return Fraction(math.floor(x * scale + Fraction(1, 2)), scale)


def evaluate(
    node, results: Mapping[str, ContrastResult], binding: Mapping[str, str] | None = None
) -> bool:
    """Decide a condition tree; a missing figure makes its comparison false.

    A proportion estimate or a difference of proportions is compared exactly (the fraction of
    its counts against the threshold as written, rounded half-up exactly when the rule
    registers decimals); interval bounds and P values are compared in floating point.
    """
    binding = binding or {}
    if isinstance(node, Compare):
        res = results.get(fill(node.target, binding))
        if res is None:  # a figure the engine did not report (the compiler checked the id)
            return False
        exact = exact_quantity(res, node.quantity)
        if exact is not None:
            if node.decimals is not None:
                exact = _round_half_up_exact(exact, node.decimals)
            return _OPS[node.op](exact, threshold(node.value))
        x = res.quantity(node.quantity)
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return False
        if node.decimals is not None:
            from prereg.stats.rounding import round_half_up

            x = round_half_up(x, node.decimals)
        return _OPS[node.op](x, node.value)
    if isinstance(node, AllOf):
        return all([evaluate(c, results, binding) for c in node.conditions])
    if isinstance(node, AnyOf):
        return any([evaluate(c, results, binding) for c in node.conditions])
    if isinstance(node, AtLeast):
        return sum(evaluate(c, results, binding) for c in node.conditions) >= node.count
    if isinstance(node, ForEach):
        hits = [evaluate(node.condition, results, {**binding, node.name: v}) for v in node.values]
        if node.quantifier == "all":
            return all(hits)
        if node.quantifier == "any":
            return any(hits)
        return sum(hits) >= node.count
    raise TypeError(f"not a condition node: {node!r}")


def decide(rule, verdicts, results: Mapping[str, ContrastResult]) -> str:
    """A hypothesis' verdict: the first verdict whose condition holds, else supported/not-supported.

    A hypothesis with neither a rule nor verdicts is reported only (its figures, no verdict).
    """
    if rule is None and not verdicts:
        return REPORTED_ONLY
    if verdicts:
        for v in verdicts:
            if v.when is None or evaluate(v.when, results):
                return v.verdict
        raise ValueError("no verdict applies and no default verdict is registered")
    return SUPPORTED if evaluate(rule, results) else NOT_SUPPORTED


def selection_matches(
    selection: Mapping[str, tuple[str, ...]], attributes: Mapping[str, str]
) -> bool:
    """Whether a row or cell with these factor levels / attributes falls in the selection."""
    return all(attributes.get(factor) in levels for factor, levels in selection.items())


def failed_gates(gates, cells) -> list[tuple[Gate, str, float | None]]:
    """(gate, cell id, figure) for every cell that breaks a gate.

    ``cells`` is an iterable of ``(cell_id, levels, figures)`` with ``figures`` a mapping from
    metric id to the cell's figure (None or NaN when it could not be computed, which fails).
    """
    failures = []
    for gate in gates:
        for cell_id, levels, figures in cells:
            if not selection_matches(gate.where, levels):
                continue
            x = figures.get(gate.metric)
            if (
                x is None
                or (isinstance(x, float) and math.isnan(x))
                or not _OPS[gate.op](x, gate.value)
            ):
                failures.append((gate, cell_id, x))
    return failures


def figure_result(figure_id: str, value: int | Fraction | float | None) -> ContrastResult:
    """A study figure as a result a comparison reads with quantity ``estimate``.

    A count (int) or a share of counts (a Fraction k/n) is compared exactly with the
    threshold as written, like a proportion estimate; a float as computed; None is missing (a
    comparison of it is false)."""
    nan = float("nan")
    if value is None:
        return ContrastResult(figure_id, nan, nan, nan)
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, float)):
        raise TypeError(f"figure {figure_id!r}: not a number: {value!r}")
    if isinstance(value, int):
        return ContrastResult(figure_id, float(value), nan, nan, extra={"k": value, "n": 1})
    if isinstance(value, Fraction):
        extra = {"k": value.numerator, "n": value.denominator}
        return ContrastResult(figure_id, float(value), nan, nan, extra=extra)
    return ContrastResult(figure_id, float(value), nan, nan)


def share(k: int, n: int) -> Fraction | None:
    """k of n as an exact share for :func:`figure_result` (None, missing, when n is 0)."""
    return Fraction(k, n) if n else None


def condition(data: Mapping | None):
    """The node tree of a condition written as the spec writes it (``compare``, ``all_of``,
    ``any_of``, ``at_least``, ``for_each``): what templates/rules.py.j2 renders, built from
    data (the compiler checked its shape)."""
    if data is None:
        return None
    if data.get("compare") is not None:
        c = data["compare"]
        return Compare(
            str(c["target"]),
            str(c["quantity"]),
            str(c["op"]),
            float(c["value"]),
            None if c.get("decimals") is None else int(c["decimals"]),
        )
    if data.get("all_of") is not None:
        return AllOf(tuple(condition(x) for x in data["all_of"]))
    if data.get("any_of") is not None:
        return AnyOf(tuple(condition(x) for x in data["any_of"]))
    if data.get("at_least") is not None:
        a = data["at_least"]
        return AtLeast(int(a["count"]), tuple(condition(x) for x in a["of"]))
    if data.get("for_each") is not None:
        fe = data["for_each"]
        return ForEach(
            str(fe["name"]),
            values=tuple(str(v) for v in fe["values"]),
            quantifier=str(fe["quantifier"]),
            count=None if fe.get("count") is None else int(fe["count"]),
            condition=condition(fe["condition"]),
        )
    raise ValueError(f"not a condition: {data!r}")


@dataclass(frozen=True)
class Decision:
    """One hypothesis's registered rule (or verdicts), as :func:`decide` takes them."""

    hypothesis: str
    rule: object | None
    verdicts: tuple[Verdict, ...]

    def decide(self, results: Mapping[str, ContrastResult]) -> str:
        return decide(self.rule, self.verdicts, results)

    def verdict_names(self) -> tuple[str, ...]:
        return tuple(v.verdict for v in self.verdicts)


def decision_of(config: Mapping, hypothesis: str) -> Decision:
    """The registered decision of ``hypothesis`` from a compiled configuration's
    ``decisions`` (the hypotheses whose rules read study figures)."""
    for h in config.get("decisions") or ():
        if h.get("id") == hypothesis:
            if h.get("reported_only"):
                return Decision(hypothesis, None, ())
            verdicts = tuple(
                Verdict(str(v["verdict"]), condition(v.get("when")))
                for v in h.get("verdicts") or ()
            )
            return Decision(hypothesis, condition(h.get("rule")), verdicts)
    raise KeyError(hypothesis)
