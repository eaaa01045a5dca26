"""Verdicts that explain themselves in a score's Markdown: per hypothesis the registered rule
in the words of the study's generated PREREG.md and the deciding figures (each comparison the
rule reads, over the contrasts and estimates the score reports, and which of them met it).

The verdict itself is computed exactly by the compiled rules; the figures shown are the
reported (rounded) ones. The compiled rule objects (:mod:`prereg.rules`) are read back into
the spec's own condition form, which :func:`prereg.reports.verdicts.deciding_figures` reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any


def as_condition(rule) -> dict[str, Any] | None:
    """A compiled rule (:mod:`prereg.rules` objects) in the spec's own form, as the report's
    deciding-figures reader takes it."""
    from prereg import rules as r

    if rule is None:
        return None
    if isinstance(rule, r.Compare):
        return {
            "compare": {
                "target": rule.target,
                "quantity": rule.quantity,
                "op": rule.op,
                "value": _written(rule.value),
                **({} if rule.decimals is None else {"decimals": rule.decimals}),
            }
        }
    if isinstance(rule, r.AllOf):
        return {"all_of": [as_condition(c) for c in rule.conditions]}
    if isinstance(rule, r.AnyOf):
        return {"any_of": [as_condition(c) for c in rule.conditions]}
    if isinstance(rule, r.AtLeast):
        return {"at_least": {"count": rule.count, "of": [as_condition(c) for c in rule.conditions]}}
    if isinstance(rule, r.ForEach):
        return {
            "for_each": {
                "name": rule.name,
                "values": list(rule.values),
                "quantifier": rule.quantifier,
                **({} if rule.count is None else {"count": rule.count}),
                "condition": as_condition(rule.condition),
            }
        }
    if isinstance(rule, r.Not):
        return {"not": as_condition(rule.condition)}
    return None


def verdict_explanations(
    module: ModuleType,
    rules: ModuleType,
    doc: Mapping[str, Any],
    *,
    number: Callable[[float], str] | None = None,
    p_value: Callable[[float], str] | None = None,
) -> list[tuple[str, str, str]]:
    """Per hypothesis: its rule in words (from the generated PREREG.md) and the deciding
    figures (each comparison the rule reads, over the reported contrasts, estimates and analyses),
    each written by ``number`` or ``p_value`` when given (as the score's tables write it)."""
    from prereg.reports.verdicts import deciding_figures, rule_text

    prereg_md = None
    if getattr(module, "__file__", None):
        path = Path(module.__file__).parent / "PREREG.md"
        if path.is_file():
            prereg_md = path.read_text(encoding="utf-8")
    figures = [
        *(doc.get("contrasts") or []),
        *(doc.get("estimates") or []),
        *(doc.get("analyses") or []),
    ]
    out = []
    for h, verdict in doc["verdicts"].items():
        rule, verdicts = getattr(rules, "RULES", {}).get(h, (None, ()))
        spec_form = {
            "rule": as_condition(rule),
            "verdicts": [{"when": as_condition(v.when)} for v in verdicts],
        }
        read = (
            ""
            if verdict == "reported-only"
            else deciding_figures(spec_form, figures, number=number, p_value=p_value)
        )
        text = rule_text(prereg_md, h)
        if not text:
            text = (
                "reported only"
                if verdict == "reported-only"
                else "(its rule's words were not found: no PREREG.md beside the compiled study,"
                " or no heading for this hypothesis in it)"
            )
        out.append((h, text, read))
    return out


def explanation_lines(explained: list[tuple[str, str, str]]) -> list[str]:
    """Markdown lines: one bullet per hypothesis, its deciding figures nested under it."""
    if not explained:
        return []
    lines = [
        "",
        "Each verdict with its registered rule (as PREREG.md states it) and the figures the"
        " rule read (as the tables below report them, rounded; the verdict is computed exactly):",
        "",
    ]
    for h, rule, figures in explained:
        lines.append(f"- `{h}`: {rule}")
        if figures:
            lines.append(f"  - deciding figures: {figures}")
    return lines


def _written(value):
    """A threshold as the spec writes it: a number, or an exact fraction as ``"p/q"``."""
    from fractions import Fraction

    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    return value
