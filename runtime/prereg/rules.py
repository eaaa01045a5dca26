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
from typing import Any

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")

SUPPORTED = "supported"
NOT_SUPPORTED = "not-supported"
REPORTED_ONLY = "reported-only"
NOT_TESTED = "not-tested"  # fixed-sequence testing: an earlier hypothesis was not supported
INCONCLUSIVE = "inconclusive"  # a gate failed (the default of a gate's otherwise)
# The fixed verdict words; a gate's otherwise may not be one of the first four, so that one word
# never means two things.
VERDICT_WORDS = (SUPPORTED, NOT_SUPPORTED, NOT_TESTED, REPORTED_ONLY, INCONCLUSIVE)


@dataclass(frozen=True)
class Family:
    id: str
    adjustment: str
    alpha: float
    missing: str = "exclude"  # a member without a P value: exclude, as-one or refuse


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
    # one: a pair holds one row per arm; mean: each arm's rows of the pair averaged first
    pair_rows: str = "one"
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
class Analysis:
    """A registered method of the catalogue (:mod:`prereg.stats.catalogue`) over the rows of
    its metric: the inputs its shape reads and the options it was registered with.

    ``of``, ``a`` and ``b`` are selections; ``groups`` an ordered tuple of selections; the
    other inputs name a factor (``strata``), a row field (``pair_by``, ``unit``, ``rater``,
    ``rating``, ``cluster``, ``prediction``, ``truth``) or earlier analyses and contrasts
    (``of_analyses``). ``options`` are the entry's keyword options, every one registered;
    ``statistic`` pins a statistic of the study's own that ``method`` names."""

    id: str
    hypothesis: str
    method: str
    metric: str | None
    options: Mapping[str, object]
    of: Mapping[str, tuple[str, ...]] | None = None
    a: Mapping[str, tuple[str, ...]] | None = None
    b: Mapping[str, tuple[str, ...]] | None = None
    groups: tuple[Mapping[str, tuple[str, ...]], ...] | None = None
    pair_by: str | None = None
    pair_rows: str = "one"  # one row per arm of a pair, or each arm's rows averaged ("mean")
    b_metric: str | None = None  # the metric read on b's rows (paired shapes), else metric's
    strata: str | None = None
    unit: str | None = None
    rater: str | None = None
    rating: str | None = None
    b_rating: str | None = None  # two-raters, a wide log: the second rating of the row
    cluster: str | None = None
    prediction: str | None = None
    truth: str | None = None
    of_analyses: tuple[str, ...] | None = None
    family: str | None = None
    # a statistic of the study's own (prereg.custom): id, path (relative to the project),
    # function, shape and the file's hex sha256 as compiled
    statistic: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Gate:
    """Every cell matching ``where`` must satisfy ``metric op value``, else all verdicts are ``otherwise``."""

    id: str
    metric: str
    where: Mapping[str, tuple[str, ...]]
    op: str
    value: float | Fraction
    otherwise: str

    def __post_init__(self):
        object.__setattr__(self, "value", registered_threshold(self.value))


@dataclass(frozen=True)
class ContrastResult:
    id: str
    estimate: float
    lower: float
    upper: float
    p: float | None = None
    adjusted_p: float | None = None
    extra: Mapping[str, float] = field(default_factory=dict)
    # quantity -> its exact (Fraction) or certified (prereg.stats.compare.Certified) form, for
    # figures a comparison must decide exactly that the counts in ``extra`` do not give
    certified: Mapping[str, object] | None = None

    def quantity(self, name: str) -> float | None:
        if name == "abs_estimate":
            return abs(self.estimate)
        if name in ("se", "statistic", "df"):  # an analysis' figures (None elsewhere)
            x = self.extra.get(name)
            return None if x is None or isinstance(x, (tuple, list)) else float(x)
        return getattr(self, name)


@dataclass(frozen=True)
class Compare:
    target: str
    quantity: str
    op: str
    value: float | Fraction
    decimals: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "value", registered_threshold(self.value))


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
class Not:
    condition: object


@dataclass(frozen=True)
class VerdictIs:
    """Decision rules only: the hypothesis' verdict is one of ``verdicts``."""

    hypothesis: str
    verdicts: tuple[str, ...]


@dataclass(frozen=True)
class GateIs:
    """Decision rules only: gate ``gate`` (None: the gates as a whole) ``held`` or ``failed``."""

    gate: str | None
    state: str


@dataclass(frozen=True)
class State:
    """What decision rules read beside the figures: each hypothesis' verdict and whether each
    gate held."""

    verdicts: Mapping[str, str]
    gates: Mapping[str, bool]


@dataclass(frozen=True)
class Verdict:
    verdict: str
    when: object | None


def fill(text: str, binding: Mapping[str, str]) -> str:
    if "{" not in text:  # no placeholder: most targets, decided for every simulated study
        return text
    return _PLACEHOLDER.sub(lambda m: binding[m.group(1)], text)


_OPS = {
    "lt": lambda x, v: x < v,
    "le": lambda x, v: x <= v,
    "gt": lambda x, v: x > v,
    "ge": lambda x, v: x >= v,
}


def registered_threshold(value):
    """A threshold as a rule keeps it: a number as the spec writes it, an exact fraction the
    spec writes as ``"p/q"`` (``"2/3"``) as its Fraction."""
    if isinstance(value, str):
        from prereg.stats.compare import exact_number

        return exact_number(value)
    return value


def threshold_fields(value) -> dict[str, Any]:
    """A threshold in an output: ``value`` its number, and ``valueExact`` (``"2/3"``) for an
    exact fraction no float holds."""
    if isinstance(value, Fraction):
        out: dict[str, Any] = {"value": float(value)}
        if Fraction(repr(float(value))) != value:
            out["valueExact"] = f"{value.numerator}/{value.denominator}"
        return out
    return {"value": value}


def meets_many(x, op: str, value):
    """``x op value`` element by element over floats (NaN fails): a threshold of floats as is;
    an exact fraction by its float, the figures equal to that float decided by their shortest
    decimal against the fraction (a figure 0.6666666666666666 is below 2/3)."""
    if not isinstance(value, Fraction):
        return _OPS[op](x, value)
    from prereg.stats.compare import compare

    f = float(value)
    out = _OPS[op](x, f)
    tie = x == f
    if tie.any():
        out[tie] = compare(f, op, value)
    return out


def family_members(contrasts) -> dict[str, list[str]]:
    """Family id -> its contrasts' (and analyses') ids, in registration order."""
    members: dict[str, list[str]] = {}
    for c in contrasts:
        if getattr(c, "family", None) is not None:
            members.setdefault(c.family, []).append(c.id)
    return members


def adjust_families(
    results: dict[str, ContrastResult], contrasts, families: Mapping[str, Family]
) -> dict[str, ContrastResult]:
    """Add adjusted P values: per family, over its members in registration order, by the
    family's adjustment and its convention for a member without a P value
    (:func:`prereg.stats.multiplicity.adjust_p_values`; ``refuse`` raises a
    :class:`prereg.errors.UserError` naming the member)."""
    import numpy as np  # here, not at import: `prereg check` reads rules without numpy

    from prereg.errors import UserError
    from prereg.stats.multiplicity import adjust_p_values, adjusted_fractions, holm_adjust

    out = dict(results)
    for fam_id, ids in family_members(contrasts).items():
        fam = families[fam_id]
        ps = np.array([np.nan if out[i].p is None else out[i].p for i in ids], dtype=float)
        missing = [i for i, p in zip(ids, ps.tolist(), strict=True) if math.isnan(p)]
        if missing and fam.missing == "refuse":
            raise UserError(
                f"family {fam_id}: {', '.join(missing)} has no P value, and the family"
                " registers missing: refuse"
            )
        exact = [(out[i].certified or {}).get("p") for i in ids]
        if fam.adjustment != "none" and any(isinstance(e, Fraction) for e in exact):
            # an exact test's P (a fraction) in the family: every adjusted P exactly, the
            # others' floats at their exact values (7 x 1/140 is 1/20, not 0.049999999999999996)
            given = np.array(
                [e if isinstance(e, Fraction) else p for e, p in zip(exact, ps, strict=True)],
                dtype=object,
            )
            fractions = adjusted_fractions(given, method=fam.adjustment, missing=fam.missing)
            for i, a in zip(ids, fractions, strict=True):
                certified = {**(out[i].certified or {}), "adjusted_p": a}
                if a is None:
                    certified.pop("adjusted_p")
                out[i] = replace(
                    out[i], adjusted_p=None if a is None else float(a), certified=certified
                )
            continue
        if fam.adjustment == "none":
            adj = ps
        elif fam.adjustment == "holm" and fam.missing == "exclude":
            adj = holm_adjust(ps)  # the d17 convention, kept bit for bit
        else:
            adj = adjust_p_values(ps, method=fam.adjustment, missing=fam.missing)
        for i, a in zip(ids, adj, strict=True):
            out[i] = replace(out[i], adjusted_p=None if math.isnan(a) else float(a))
    return out


def threshold(value: float) -> Fraction:
    """A registered threshold as the decimal written in the spec (0.1 is exactly 1/10)."""
    from prereg.stats.compare import threshold as exact_threshold

    return exact_threshold(value)


def exact_quantity(res: ContrastResult, quantity: str) -> Fraction | None:
    """The exact value of a proportion estimate (k/n) or difference (k1/n1 − k2/n2), from the
    counts the result carries; None when it has no counts (or an empty arm)."""
    if quantity not in ("estimate", "abs_estimate"):
        return None
    e = res.extra
    try:
        if "k1" in e:
            if not (e["n1"] and e["n2"]):
                return None
            k1, n1, k2, n2 = int(e["k1"]), int(e["n1"]), int(e["k2"]), int(e["n2"])
            x = Fraction(k1 * n2 - k2 * n1, n1 * n2)  # k1/n1 - k2/n2, one Fraction made
        elif "k" in e:
            if not e["n"]:
                return None
            x = Fraction(int(e["k"]), int(e["n"]))
        else:
            return None
    except (TypeError, ValueError):
        return None
    return abs(x) if quantity == "abs_estimate" else x


def figure_of(res: ContrastResult, quantity: str):
    """The figure a comparison decides with: the exact fraction of the result's counts, else
    the certified form the engine gave (``res.certified``), else the float (None: missing)."""
    exact = exact_quantity(res, quantity)
    if exact is not None:
        return exact
    certified = res.certified.get(quantity) if res.certified else None
    if certified is not None:
        if quantity == "abs_estimate":
            return None  # pragma: no cover - engines certify abs_estimate themselves
        return certified
    if quantity == "abs_estimate" and res.certified and "estimate" in res.certified:
        return _abs_figure(res.certified["estimate"])
    x = res.quantity(quantity)
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return x


def _abs_figure(figure):
    from prereg.stats.compare import Certified

    if isinstance(figure, Fraction):
        return abs(figure)
    if isinstance(figure, Certified):
        from prereg.stats.compare import abs_ball_decided

        exact = figure.exact
        ball = figure.ball
        last: list = []  # the ball of the figure itself behind the last ball of |figure|

        def abs_ball(prec):
            b = ball(prec)
            last[:] = [b]
            return abs(b)

        out = Certified(
            abs(figure.value),
            error=figure.error,
            exact=None if exact is None else (lambda: abs(Fraction(exact()))),
            ball=None if ball is None else abs_ball,
        )
        if ball is not None:  # what balls decide of |x| the figure x keeps, for its reports
            out.on_ball = lambda f: abs_ball_decided(figure, f, last[0] if last else None)
        return out
    return abs(figure)


def compare_node(node: Compare, res: ContrastResult | None) -> bool:
    """One comparison of a rule, decided by :func:`prereg.stats.compare.compare`."""
    from prereg.stats.compare import compare

    if res is None:  # a figure the engine did not report (the compiler checked the id)
        return False
    return compare(figure_of(res, node.quantity), node.op, node.value, decimals=node.decimals)


def evaluate(
    node,
    results: Mapping[str, ContrastResult],
    binding: Mapping[str, str] | None = None,
    state: State | None = None,
) -> bool:
    """Decide a condition tree; a missing figure makes its comparison false.

    Every comparison is decided exactly (:mod:`prereg.stats.compare`): a proportion or a
    difference of proportions as the fraction of its counts, a figure the engine certified by
    its exact value or by balls of rising precision, against the threshold as written (rounded
    half-up exactly when the rule registers decimals).
    """
    binding = binding or {}
    if isinstance(node, Compare):
        return compare_node(node, results.get(fill(node.target, binding)))
    if isinstance(node, AllOf):
        return all([evaluate(c, results, binding, state) for c in node.conditions])
    if isinstance(node, AnyOf):
        return any([evaluate(c, results, binding, state) for c in node.conditions])
    if isinstance(node, AtLeast):
        return sum(evaluate(c, results, binding, state) for c in node.conditions) >= node.count
    if isinstance(node, Not):
        return not evaluate(node.condition, results, binding, state)
    if isinstance(node, (VerdictIs, GateIs)):
        if state is None:
            raise ValueError(f"{node!r} is read by decision rules only")
        if isinstance(node, VerdictIs):
            return state.verdicts.get(node.hypothesis) in node.verdicts
        held = state.gates.values() if node.gate is None else [state.gates[node.gate]]
        return all(held) if node.state == "held" else not all(held)
    if isinstance(node, ForEach):
        hits = [
            evaluate(node.condition, results, {**binding, node.name: v}, state) for v in node.values
        ]
        if node.quantifier == "all":
            return all(hits)
        if node.quantifier == "any":
            return any(hits)
        return sum(hits) >= node.count
    raise TypeError(f"not a condition node: {node!r}")


def _label(node, binding: Mapping[str, str], index: int) -> str:
    """What one condition of an ``at_least`` is called in its count: a comparison by the
    target it reads, anything else by its position (``of[i]``)."""
    if isinstance(node, Compare):
        return fill(node.target, binding)
    return f"of[{index}]"


def quantifier_counts(
    node,
    results: Mapping[str, ContrastResult],
    *,
    path: str,
    binding: Mapping[str, str] | None = None,
    state: State | None = None,
) -> list[dict]:
    """The count behind every quantifier of a condition tree (``at_least``, ``for_each``), in
    the order written: how many of its conditions (or values) met it, which did and which did
    not, how many it requires and whether it held.

    ``path`` locates the tree (``"rule"``, ``"verdicts[0].when"``); each entry's ``path``
    locates its node in the spec's own form (``rule.all_of[1].for_each``). A quantifier inside
    a ``for_each`` is counted once per value of the outer name, with the ``binding`` it was
    evaluated under. Each comparison is decided once, by :func:`evaluate`, as the verdict
    was; a compound condition holds by the same logic as in :func:`evaluate`.
    """
    return _counted(node, results, path, dict(binding or {}), state)[1]


def _counted(node, results, path: str, binding: dict, state) -> tuple[bool, list[dict]]:
    """(whether ``node`` holds, the quantifier entries under it), every leaf decided once."""

    def entry(kind, required, labels, hits, held, here) -> dict:
        row: dict = {"path": here, "quantifier": kind, "required": required}
        if binding:
            row["binding"] = dict(binding)
        row.update(
            met=sum(hits),
            of=len(labels),
            metBy=[lab for lab, h in zip(labels, hits, strict=True) if h],
            notMetBy=[lab for lab, h in zip(labels, hits, strict=True) if not h],
            held=held,
        )
        return row

    if isinstance(node, (AllOf, AnyOf)):
        key = "all_of" if isinstance(node, AllOf) else "any_of"
        parts = [
            _counted(c, results, f"{path}.{key}[{i}]", binding, state)
            for i, c in enumerate(node.conditions)
        ]
        hits = [h for h, _ in parts]
        held = all(hits) if isinstance(node, AllOf) else any(hits)
        return held, [r for _, rows in parts for r in rows]
    if isinstance(node, Not):
        held, rows = _counted(node.condition, results, f"{path}.not", binding, state)
        return not held, rows
    if isinstance(node, AtLeast):
        here = f"{path}.at_least"
        parts = [
            _counted(c, results, f"{here}.of[{i}]", binding, state)
            for i, c in enumerate(node.conditions)
        ]
        hits = [h for h, _ in parts]
        labels = [_label(c, binding, i) for i, c in enumerate(node.conditions)]
        held = sum(hits) >= node.count
        rows = [entry("at_least", node.count, labels, hits, held, here)]
        return held, rows + [r for _, sub in parts for r in sub]
    if isinstance(node, ForEach):
        here = f"{path}.for_each"
        parts = [
            _counted(node.condition, results, f"{here}.condition", {**binding, node.name: v}, state)
            for v in node.values
        ]
        hits = [h for h, _ in parts]
        if node.quantifier == "all":
            required, held = len(node.values), all(hits)
        elif node.quantifier == "any":
            required, held = 1, any(hits)
        else:
            required, held = node.count, sum(hits) >= node.count
        row = entry(node.quantifier, required, list(node.values), hits, held, here)
        row["name"] = node.name
        return held, [row] + [r for _, sub in parts for r in sub]
    return evaluate(node, results, binding, state), []


def hypothesis_quantifiers(rule, verdicts, results: Mapping[str, ContrastResult]) -> list[dict]:
    """:func:`quantifier_counts` of a hypothesis' rule and of each verdict's ``when``."""
    out = quantifier_counts(rule, results, path="rule") if rule is not None else []
    for i, v in enumerate(verdicts or ()):
        if v.when is not None:
            for row in quantifier_counts(v.when, results, path=f"verdicts[{i}].when"):
                out.append({**row, "verdict": v.verdict})
    return out


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
    metric id to the cell's figure (None or NaN when it could not be computed, which fails): a
    Fraction or a certified figure is compared exactly (:mod:`prereg.stats.compare`).
    """
    from prereg.stats.compare import compare

    failures = []
    for gate in gates:
        for cell_id, levels, figures in cells:
            if not selection_matches(gate.where, levels):
                continue
            x = figures.get(gate.metric)
            if not compare(x, gate.op, gate.value):
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
            c["value"] if isinstance(c["value"], str) else float(c["value"]),
            None if c.get("decimals") is None else int(c["decimals"]),
        )
    if data.get("all_of") is not None:
        return AllOf(tuple(condition(x) for x in data["all_of"]))
    if data.get("any_of") is not None:
        return AnyOf(tuple(condition(x) for x in data["any_of"]))
    if data.get("at_least") is not None:
        a = data["at_least"]
        return AtLeast(int(a["count"]), tuple(condition(x) for x in a["of"]))
    if data.get("not") is not None:
        return Not(condition(data["not"]))
    if data.get("verdict") is not None:
        v = data["verdict"]
        return VerdictIs(str(v["hypothesis"]), tuple(str(x) for x in v["is"]))
    if data.get("gate") is not None:
        g = data["gate"]
        return GateIs(None if g.get("id") is None else str(g["id"]), str(g["is"]))
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


# -- many simulated studies at once -------------------------------------------------------------
#
# The same decisions over arrays: one result per estimate or contrast holds its figures for many
# studies (one per element), and a condition tree is decided for all of them in a few array
# operations.  Every function gives, element by element, what its one-study counterpart gives
# (tests compare them over every compiled study's rules and many random results).


@dataclass(frozen=True)
class ResultArrays:
    """An estimate's or contrast's figures in many studies: float arrays of one length, NaN
    where a figure is missing (a P value that is None, an empty arm); ``extra`` holds the
    integer counts (``k``, ``n``, or ``k1``, ``n1``, ``k2``, ``n2``) the exact comparisons read."""

    id: str
    estimate: object  # numpy arrays, shape (studies,)
    lower: object
    upper: object
    p: object
    adjusted_p: object
    extra: Mapping[str, object] = field(default_factory=dict)

    def quantity(self, name: str):
        import numpy as np

        if name == "abs_estimate":
            return np.abs(self.estimate)
        return getattr(self, name)


_INT64_SAFE = 2**62


def _exact_many(res: ResultArrays, quantity: str):
    """(numerator, denominator, defined) of the exact value in each study, as
    :func:`exact_quantity` gives it (``defined`` False where it gives None), or None when the
    result carries no counts or the quantity is never exact."""
    import numpy as np

    if quantity not in ("estimate", "abs_estimate"):
        return None
    e = res.extra
    if "k1" in e:
        k1, n1, k2, n2 = (np.asarray(e[x]) for x in ("k1", "n1", "k2", "n2"))
        big = max(int(np.abs(v).max(initial=0)) for v in (k1, n1, k2, n2))
        if big >= 2**31:  # the products below would leave int64
            k1, n1, k2, n2 = (v.astype(object) for v in (k1, n1, k2, n2))
        defined = (n1 != 0) & (n2 != 0)
        num = k1 * n2 - k2 * n1
        den = n1 * n2
    elif "k" in e:
        num, den = np.asarray(e["k"]), np.asarray(e["n"])
        defined = den != 0
    else:
        return None
    if quantity == "abs_estimate":
        num = abs(num)
    one = 1 if den.dtype == object else np.int64(1)
    return num, np.where(defined, den, one), np.asarray(defined, dtype=bool)


def _exact_compare_many(num, den, node: Compare):
    """``Fraction(num, den)`` (rounded half-up exactly to the node's decimals) ``op`` the
    threshold, element by element, in integers: int64 where every product fits, else Python
    integers."""
    t = threshold(node.value)
    p, q = t.numerator, t.denominator
    top = max(int(abs(num).max(initial=0)), 1)
    bottom = max(int(den.max(initial=0)), 1)
    if node.decimals is None:
        fits = top * q < _INT64_SAFE and abs(p) * bottom < _INT64_SAFE
        if not fits and num.dtype != object:
            num, den = num.astype(object), den.astype(object)
        return _OPS[node.op](num * q, p * den)
    scale = 10**node.decimals
    # floor(num/den · scale + 1/2) = floor((2·num·scale + den) / (2·den)), den > 0
    fits = (2 * top * scale + bottom) * max(q, 1) < _INT64_SAFE and abs(p) * scale < _INT64_SAFE
    if not fits and num.dtype != object:
        num, den = num.astype(object), den.astype(object)
    rounded = (2 * num * scale + den) // (2 * den)
    return _OPS[node.op](rounded * q, p * scale)


def _float_compare_many(x, node: Compare):
    """``x op value`` where x is not missing (NaN), element by element as
    :func:`prereg.stats.compare.compare` decides a plain float (its shortest decimal, which is
    what comparing the float with the threshold's float gives); rounded half-up exactly to the
    node's decimals first."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    missing = np.isnan(x)
    if node.decimals is not None:
        from prereg.stats.compare import compare

        return np.array(
            [
                not m and compare(v, node.op, node.value, decimals=node.decimals)
                for v, m in zip(x.tolist(), missing.tolist(), strict=True)
            ],
            dtype=bool,
        )
    with np.errstate(invalid="ignore"):
        return ~missing & meets_many(x, node.op, node.value)


def evaluate_many(
    node,
    results: Mapping[str, ResultArrays],
    size: int,
    binding: Mapping[str, str] | None = None,
):
    """:func:`evaluate` in each of ``size`` studies at once: a bool array, element i the
    decision over the results' element i."""
    import numpy as np

    binding = binding or {}
    if isinstance(node, Compare):
        res = results.get(fill(node.target, binding))
        if res is None:
            return np.zeros(size, dtype=bool)
        x = res.quantity(node.quantity)
        if x is None:
            return np.zeros(size, dtype=bool)
        out = _float_compare_many(x, node)
        exact = _exact_many(res, node.quantity)
        if exact is not None:
            num, den, defined = exact
            if defined.any():
                hit = np.asarray(_exact_compare_many(num, den, node), dtype=bool)
                out = np.where(defined, hit, out)
        return out
    if isinstance(node, Not):
        return ~np.asarray(evaluate_many(node.condition, results, size, binding), dtype=bool)
    if isinstance(node, (AllOf, AnyOf, AtLeast)):
        hits = [evaluate_many(c, results, size, binding) for c in node.conditions]
    elif isinstance(node, ForEach):
        hits = [
            evaluate_many(node.condition, results, size, {**binding, node.name: v})
            for v in node.values
        ]
    else:
        raise TypeError(f"not a condition node: {node!r}")
    stacked = np.asarray(hits, dtype=bool).reshape(len(hits), size)
    if isinstance(node, AllOf) or (isinstance(node, ForEach) and node.quantifier == "all"):
        return stacked.all(axis=0)
    if isinstance(node, AnyOf) or (isinstance(node, ForEach) and node.quantifier == "any"):
        return stacked.any(axis=0)
    count = node.count
    return stacked.sum(axis=0, dtype=np.int64) >= count


def decide_many(rule, verdicts, results: Mapping[str, ResultArrays], size: int) -> list[str]:
    """:func:`decide` in each of ``size`` studies at once: the verdict of each."""
    import numpy as np

    if rule is None and not verdicts:
        return [REPORTED_ONLY] * size
    if verdicts:
        out = np.empty(size, dtype=object)
        open_ = np.ones(size, dtype=bool)
        for v in verdicts:
            holds = open_ if v.when is None else open_ & evaluate_many(v.when, results, size)
            out[holds] = v.verdict
            open_ = open_ & ~holds
            if not open_.any():
                break
        if open_.any():
            raise ValueError("no verdict applies and no default verdict is registered")
        return out.tolist()
    holds = evaluate_many(rule, results, size)
    return [SUPPORTED if h else NOT_SUPPORTED for h in holds.tolist()]


def adjust_families_many(
    results: dict[str, ResultArrays], contrasts, families: Mapping[str, Family]
) -> dict[str, ResultArrays]:
    """:func:`adjust_families` in each study at once (adjusted P NaN where missing)."""
    import numpy as np

    from prereg.stats.multiplicity import holm_adjust_rows

    out = dict(results)
    for fam_id, ids in family_members(contrasts).items():
        fam = families[fam_id]
        ps = np.stack([np.asarray(out[i].p, dtype=np.float64) for i in ids], axis=1)
        if fam.adjustment == "holm" and fam.missing == "exclude":
            adj = holm_adjust_rows(ps)
        elif fam.adjustment == "none":
            adj = ps
        else:  # study by study, as adjust_families adjusts one (refuse: a study with a
            # missing P value gets no adjusted P, as scoring it would stop)
            from prereg.stats.multiplicity import adjust_p_values

            adj = np.full(ps.shape, np.nan)
            for r in range(ps.shape[0]):
                row = ps[r]
                if fam.missing == "refuse" and np.isnan(row).any():
                    continue
                adj[r] = adjust_p_values(row, method=fam.adjustment, missing=fam.missing)
        for j, i in enumerate(ids):
            out[i] = replace(out[i], adjusted_p=np.array(adj[:, j]))
    return out
