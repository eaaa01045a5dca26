"""Verdicts that explain themselves: per hypothesis the registered rule in words (as PREREG.md
renders it), the deciding figures (each comparison the rule reads, over the reported contrasts
and estimates it targets, and where it held) and a link to the rule in the rendered PREREG.md.

The figures are re-read from the score as reported (rounded); the verdict itself is the
engine's, computed exactly as registered.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from prereg.reports import markdown
from prereg.reports.numbers import fmt_p

OPS = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥"}
QUANTITY = {
    "estimate": ("estimate", "estimate"),
    "abs_estimate": ("|estimate|", "estimate"),
    "lower": ("lower bound", "lower"),
    "upper": ("upper bound", "upper"),
    "p": ("P", "p"),
    "adjusted_p": ("adjusted P", "adjustedP"),
}
_CMP = {
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def anchor(hypothesis: Mapping[str, Any]) -> str:
    """The id of a hypothesis's heading in the rendered PREREG.md (see :mod:`markdown`)."""
    return markdown.PREFIX + markdown.slug(f"{hypothesis.get('id')}: {hypothesis.get('title')}")


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


def _leaves(cond: Mapping[str, Any] | None) -> Iterator[Mapping[str, Any]]:
    if not cond:
        return
    if "compare" in cond:
        yield cond["compare"]
    for key in ("all_of", "any_of"):
        for sub in cond.get(key) or []:
            yield from _leaves(sub)
    if "at_least" in cond:
        for sub in cond["at_least"].get("of") or []:
            yield from _leaves(sub)
    if "for_each" in cond:
        yield from _leaves(cond["for_each"].get("condition"))


def _pattern(target: str) -> re.Pattern:
    parts = re.split(r"\{[^}]*\}", target)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


def deciding_figures(
    hypothesis: Mapping[str, Any], figures: Sequence[Mapping[str, Any]], digits: int = 4
) -> str:
    """Each comparison the rule reads, with how many of its targets met it and which."""
    leaves = list(_leaves(hypothesis.get("rule")))
    for v in hypothesis.get("verdicts") or []:
        leaves += list(_leaves(v.get("when")))
    seen: set[tuple] = set()
    parts = []
    for leaf in leaves:
        key = (leaf.get("target"), leaf.get("quantity"), leaf.get("op"), leaf.get("value"))
        if key in seen:
            continue
        seen.add(key)
        words, field = QUANTITY.get(str(leaf.get("quantity")), (leaf.get("quantity"), None))
        pat = _pattern(str(leaf.get("target")))
        met, total = [], 0
        for f in figures:
            if not pat.match(str(f.get("id"))):
                continue
            total += 1
            x = f.get(field) if field else None
            if x is None:
                continue
            if leaf.get("quantity") == "abs_estimate":
                x = abs(x)
            if _CMP[str(leaf.get("op"))](x, leaf.get("value")):
                shown_x = fmt_p(x) if field in ("p", "adjustedP") else f"{x:.{digits}g}"
                met.append(f"{f.get('id')} ({shown_x})")
        cond = f"{words} {OPS.get(str(leaf.get('op')))} {leaf.get('value')}"
        shown = ", ".join(met[:6]) + (f", … {len(met) - 6} more" if len(met) > 6 else "")
        parts.append(f"{cond}: met by {len(met)} of {total}" + (f": {shown}" if met else ""))
    return "; ".join(parts)
