"""Verdicts that explain themselves: per hypothesis the registered rule in words (as PREREG.md
renders it), the deciding figures (each comparison the rule reads, over the reported contrasts
and estimates it targets, and where it held) and a link to the rule in the rendered PREREG.md.

The figures are re-read from the score as reported (rounded); the verdict itself is the
engine's, computed exactly as registered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prereg.reports import markdown
from prereg.reports.numbers import fmt_against, fmt_p

OPS = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥"}
QUANTITY = {
    "estimate": ("estimate", "estimate"),
    "abs_estimate": ("|estimate|", "estimate"),
    "lower": ("lower bound", "lower"),
    "upper": ("upper bound", "upper"),
    "p": ("P", "p"),
    "adjusted_p": ("adjusted P", "adjustedP"),
    "se": ("standard error", "se"),
    "statistic": ("statistic", "statistic"),
    "df": ("degrees of freedom", "df"),
}


def anchor(hypothesis: Mapping[str, Any]) -> str:
    """The id of a hypothesis's heading in the rendered PREREG.md (see :mod:`markdown`); the
    heading of a reported-only hypothesis ends "(reported only)"."""
    heading = f"{hypothesis.get('id')}: {hypothesis.get('title')}"
    if hypothesis.get("reported_only"):
        heading += " (reported only)"
    return markdown.PREFIX + markdown.slug(heading)


def rule_text(prereg_md: str | None, hypothesis_id: str) -> str:
    """The decision rule (or verdict list) of one hypothesis as PREREG.md renders it, on one
    line: nested list items joined with "; "."""
    if not prereg_md:
        return ""
    lines = prereg_md.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"### {hypothesis_id}: ")), None)
    if start is None:
        return ""
    out: list[str] = []
    for ln in lines[start + 1 :]:
        if ln.startswith("#") or ln.startswith("|") or ln.startswith("Contrasts as registered"):
            break
        s = ln.strip()
        if s.startswith("- "):
            out.append(s[2:])
        elif s.startswith("Verdicts (") or s.startswith("Decision rule ("):
            out.append(s.rstrip(":") + ":")
    return " ".join((x if x.endswith(":") else x + ";") for x in out).rstrip(";")


@dataclass
class Comparison:
    """One comparison a rule makes, as written (``leaf``: its ``compare`` mapping), with the
    targets it reads under every binding of the ``for_each`` above it, whether a ``not``
    above it negates it (an odd number of them) and, in a list of verdicts, the verdict whose
    condition makes it (None: the hypothesis's rule, or every verdict that makes it)."""

    leaf: Mapping[str, Any]
    negated: bool = False
    targets: list[str] = field(default_factory=list)
    verdict: str | None = None

    def reads(self, figure_id: str) -> bool:
        """Whether the comparison reads the figure ``figure_id``: one of its filled-in
        targets, or a target matching it where a placeholder no ``for_each`` binds stands."""
        return any(
            t == figure_id or ("{" in t and _pattern(t).match(figure_id)) for t in self.targets
        )


def comparisons(hypothesis: Mapping[str, Any], by_verdict: bool = False) -> list[Comparison]:
    """Every comparison of a hypothesis's rule and verdict conditions, once each (the same
    comparison written twice is merged; with ``by_verdict``, only within one verdict's
    condition), in the order written."""
    found: dict[tuple, Comparison] = {}
    verdict: str | None = None

    def walk(cond, binding: Mapping[str, str], negated: bool) -> None:
        if not isinstance(cond, Mapping):
            return
        if "compare" in cond:
            leaf = cond["compare"]
            key = (
                leaf.get("target"),
                leaf.get("quantity"),
                leaf.get("op"),
                leaf.get("value"),
                leaf.get("decimals"),
                negated,
                verdict,
            )
            c = found.setdefault(key, Comparison(leaf, negated, verdict=verdict))
            target = _PLACEHOLDER.sub(
                lambda m: binding.get(m.group(1), m.group(0)), str(leaf.get("target"))
            )
            if target not in c.targets:
                c.targets.append(target)
        for key in ("all_of", "any_of"):
            for sub in cond.get(key) or []:
                walk(sub, binding, negated)
        if "at_least" in cond:
            for sub in cond["at_least"].get("of") or []:
                walk(sub, binding, negated)
        if "not" in cond:
            walk(cond["not"], binding, not negated)
        if "for_each" in cond:
            fe = cond["for_each"]
            for v in fe.get("values") or []:
                walk(fe.get("condition"), {**binding, str(fe.get("name")): str(v)}, negated)

    walk(hypothesis.get("rule"), {}, False)
    for v in hypothesis.get("verdicts") or []:
        verdict = str(v.get("verdict")) if by_verdict else None
        walk(v.get("when"), {}, False)
    return list(found.values())


_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def _pattern(target: str) -> re.Pattern:
    parts = re.split(r"\{[^}]*\}", target)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


#: The key of ``decidedP`` (a contrast row's P values as decided) of each P quantity.
DECIDED_P = {"p": "p", "adjusted_p": "adjustedP"}


def exact_figure(row: Mapping[str, Any], quantity, x):
    """The figure a comparison of ``quantity`` is decided with, as SCORE.json carries it: for
    an estimate, its exact fraction (``exact``, a string or an analysis' ``exact.estimate``),
    k/n of a proportion, or the difference of its arms' k/n, else the decimal inside the balls
    that decided it (``certified``); an analysis' other figure its exact fraction
    (``exact.p`` ...), a contrast's P value as its verdict decided it (``decidedP``: an exact
    test's fraction, a decimal inside the balls that decided it); otherwise the float ``x``."""
    exact = row.get("exact")
    if quantity not in ("estimate", "abs_estimate"):
        named = exact.get(quantity) if isinstance(exact, Mapping) else None
        near = row.get("certified")  # a t, z or se balls decided: a decimal inside them
        if named is None and isinstance(near, Mapping):
            named = near.get(quantity)
        decided = row.get("decidedP")  # a contrast's P as its verdict decided it
        if named is None and isinstance(decided, Mapping):
            named = decided.get(DECIDED_P.get(str(quantity), ""))
        try:
            return x if not isinstance(named, str) else Fraction(named)
        except (ValueError, ZeroDivisionError):
            return x
    if isinstance(exact, Mapping):
        exact = exact.get("estimate")
    if not isinstance(exact, str):
        exact = row.get("certified")
        if isinstance(exact, Mapping):
            exact = exact.get("estimate")
    value = None
    try:
        if isinstance(exact, str):
            value = Fraction(exact)
        elif isinstance(row.get("k"), int) and row.get("n"):
            value = Fraction(row["k"], row["n"])
        else:
            a, b = row.get("a"), row.get("b")
            if (
                isinstance(a, Mapping)
                and isinstance(b, Mapping)
                and isinstance(a.get("k"), int)
                and isinstance(b.get("k"), int)
                and a.get("n")
                and b.get("n")
            ):
                value = Fraction(a["k"], a["n"]) - Fraction(b["k"], b["n"])
    except (TypeError, ValueError, ZeroDivisionError):
        value = None
    if value is None:
        return x
    return abs(value) if quantity == "abs_estimate" else value


def _infinite(row: Mapping[str, Any], field: str | None) -> float | None:
    """An infinite figure a score document writes as null and names in ``infinite`` with its
    sign (an odds ratio whose arms never fail), as the float it was decided with."""
    named = row.get("infinite")
    if not field or not isinstance(named, list):
        return None
    if f"+{field}" in named:
        return math.inf
    if f"-{field}" in named:
        return -math.inf
    return None


def _p_shown(x, against: tuple, p_value: Callable[[float], str] | None) -> str:
    """A P value of a deciding-figures line: as the study's tables write it (``p_value``)
    unless those digits read on the other side of the threshold (or on it) than the figure
    the comparison decided with (``against``: that figure, the threshold, its decimals)
    does; then, and without ``p_value``, with the digits it takes (:func:`fmt_p`)."""
    from prereg.reports.numbers import _sides

    if p_value is not None:
        text = p_value(x)
        try:
            if _sides(Fraction(text), *against[1:]) == _sides(*against):
                return text
        except (ValueError, ZeroDivisionError):
            pass
    return fmt_p(x, against=against)


def _holds(leaf: Mapping[str, Any], figure) -> bool:
    """Whether ``figure op value`` holds, decided as the verdict is (the threshold as the
    decimal written, the figure rounded half-up first when the rule registers ``decimals``)."""
    from prereg.stats.compare import compare

    return compare(figure, str(leaf.get("op")), leaf.get("value"), decimals=leaf.get("decimals"))


def deciding_figures(
    hypothesis: Mapping[str, Any],
    figures: Sequence[Mapping[str, Any]],
    digits: int = 4,
    study_figures: frozenset[str] = frozenset(),
    number: Callable[[float], str] | None = None,
    p_value: Callable[[float], str] | None = None,
) -> str:
    """Each comparison the rule reads, with how many of its targets met it and which.

    A comparison of study figures (ids in ``study_figures``) says "value".  When none of a
    comparison's figures met it, their values are listed (up to 8), so that the line still
    names what the rule read.  ``number`` and ``p_value`` write a figure and a P value as the
    study's tables do (a study that registers its report rounding); by default a figure is
    written to ``digits`` significant digits and a P value in the reports' usual style."""
    parts = []
    for comparison in comparisons(hypothesis):
        leaf = comparison.leaf
        words, field = QUANTITY.get(str(leaf.get("quantity")), (leaf.get("quantity"), None))
        is_study = any(comparison.reads(f) for f in study_figures)
        met, unmet, total = [], [], 0
        for f in figures:
            if not comparison.reads(str(f.get("id"))):
                continue
            total += 1
            x = f.get(field) if field else None
            if x is None:
                x = _infinite(f, field)
            if isinstance(x, list):  # a pair of df: no single figure
                continue
            if x is None:  # missing: its comparison is false (so `not` of it holds); say why
                extra = f.get("extra")
                why = extra.get("undefined") if isinstance(extra, Mapping) else None
                missing = f"{f.get('id')} (missing" + (f": {why})" if why else ")")
                (met if comparison.negated else unmet).append(missing)
                continue
            if leaf.get("quantity") == "abs_estimate":
                x = abs(x)
            decided = exact_figure(f, leaf.get("quantity"), x)
            if math.isinf(x):
                shown_x = "∞" if x > 0 else "−∞"
            elif field in ("p", "adjustedP"):
                shown_x = _p_shown(x, (decided, leaf.get("value"), leaf.get("decimals")), p_value)
            else:
                shown_x = (
                    fmt_against(decided, leaf.get("value"), leaf.get("decimals"), digits)
                    if number is None
                    else number(x)
                )
            if _holds(leaf, decided) != comparison.negated:
                met.append(f"{f.get('id')} ({shown_x})")
            else:
                unmet.append(f"{f.get('id')} ({shown_x})")
        if is_study:
            words = "value"
        cond = f"{words} {OPS.get(str(leaf.get('op')))} {leaf.get('value')}"
        if comparison.negated:
            cond = f"not ({cond})"
        shown = ", ".join(met[:6]) + (f", … {len(met) - 6} more" if len(met) > 6 else "")
        text = f"{cond}: met by {len(met)} of {total}" + (f": {shown}" if met else "")
        if not met and unmet:  # what the rule read instead, so the line names the figures
            text += " (" + ", ".join(unmet[:8]) + (", …" if len(unmet) > 8 else "") + ")"
        parts.append(text)
    return "; ".join(parts)


def figure_verdicts(
    info, verdicts: Mapping[str, str], figures: Mapping[str, Any], note: str, report=None
) -> list:
    """The verdicts of hypotheses decided over study figures, as d17's verdict table shows
    them: each hypothesis linked to its registered rule in PREREG.md, its verdict, the rule in
    words and the deciding figures (``figures``: study figure id -> value, None when the
    engine did not report it).  Every registered hypothesis gets a row; one without a
    verdict in ``verdicts`` is reported only."""
    from prereg.reports.page import Heading, Para, Table
    from prereg.rules import REPORTED_ONLY

    declared = {
        str(f.get("id")): f for f in info.spec.get("figures") or [] if isinstance(f, Mapping)
    }
    shown = [
        {"id": k, "estimate": None if v is None else float(v)}
        for k, v in figures.items()
        if v is not None
    ]
    rows = []
    for h in info.spec.get("hypotheses") or []:
        hid = str(h.get("id"))
        verdict = verdicts.get(hid, REPORTED_ONLY)
        external = [t for t in declared if declared[t].get("external") and _reads(h, t)]
        if verdict == REPORTED_ONLY and external and not any(_reads(h, t) for t in figures):
            deciding = (
                "none: its figures (" + ", ".join(external) + ") are computed by another analysis"
            )
        else:
            deciding = deciding_figures(h, shown, study_figures=frozenset(declared))
        rows.append(
            (
                f"[{hid}](#{anchor(h)})",
                str(h.get("title") or ""),
                verdict,
                rule_text(info.prereg_md, hid),
                deciding,
            )
        )
    if not rows:
        return []
    if report is not None and info.spec.get("decision"):
        from prereg.decide.decision import in_words

        report.decision = "decision " + in_words(figure_decision(info, verdicts, figures))
    return [
        *figure_decision_blocks(info, verdicts, figures),
        Heading("Verdicts"),
        Para(note, note=True),
        Table(
            ("hypothesis", "title", "verdict", "registered rule", "deciding figures"),
            rows,
            markdown=frozenset({0, 3}),
            stack=True,
        ),
        *study_figures_blocks(declared, figures),
    ]


def figure_text(x: Any) -> str:
    """A study figure's value for its table: an integer with separators, an exact fraction
    to 4 significant digits with the fraction itself beside it when that decimal is not
    exact (``0.9159 (9159/10000)``), any other number to 4 significant digits."""
    from fractions import Fraction

    from prereg.reports.numbers import _significant, fmt

    if x is None or isinstance(x, bool | int):
        return fmt(x)
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return fmt(int(x))
        text = _significant(x, 4)
        return text if Fraction(text) == x else f"{text} ({x.numerator}/{x.denominator})"
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{float(x):.4g}"


def study_figures_blocks(declared: Mapping[str, Mapping[str, Any]], figures: Mapping[str, Any]):
    """Every registered study figure, in registered order, with its title, value and unit:
    the deciding figures line names only those that met a comparison (and six of them at
    most), so this table is where each registered figure is reported."""
    from prereg.reports.page import Heading, Para, Table

    if not declared:
        return []
    rows = []
    for fid, f in declared.items():
        value = figures.get(fid)
        if value is None:
            shown = "– (another analysis computes it)" if f.get("external") else "–"
        else:
            shown = figure_text(value)
        rows.append((fid, str(f.get("title") or ""), shown, str(f.get("unit") or "")))
    return [
        Heading("Study figures", 3),
        Para(
            "Every figure the study registers, as the engine reported it (a share is written"
            " to 4 significant digits, with its exact fraction when that decimal is not exact;"
            " a dash where the engine reported none, as the figure's description in PREREG.md"
            " says it may).",
            note=True,
        ),
        Table(
            ("figure", "title", "value", "unit"),
            rows,
            numeric=frozenset({2}),
            code=frozenset({0}),
            stack=True,  # a title and a unit in words: a card on a phone
        ),
    ]


def figure_decision(info, verdicts: Mapping[str, str], figures: Mapping[str, Any]) -> dict | None:
    """The study's decision evaluated over the verdicts and study figures of an engine that
    decides on figures (no gates), as :func:`prereg.decide.decision.decide` records it."""
    from prereg.decide.decision import decide, from_spec
    from prereg.rules import REPORTED_ONLY, figure_result

    registered = from_spec(info.spec.get("decision"))
    if registered is None:
        return None
    every = {
        str(h.get("id")): verdicts.get(str(h.get("id")), REPORTED_ONLY)
        for h in info.spec.get("hypotheses") or []
    }
    results = {k: figure_result(k, v) for k, v in figures.items() if not isinstance(v, bool)}
    return decide(registered, every, {}, results)


def figure_decision_blocks(info, verdicts, figures) -> list:
    from prereg.reports.common import decision_blocks

    if not info.spec.get("decision"):
        return []
    return decision_blocks(figure_decision(info, verdicts, figures))


def _reads(hypothesis: Mapping[str, Any], figure: str) -> bool:
    return any(c.reads(figure) for c in comparisons(hypothesis))
