"""How reports write numbers: one style for figures and one for P values. A module of its own,
importing nothing heavy, so a score's Markdown can use it without the report pages' plotting."""

from __future__ import annotations

from typing import Any


def fmt(x: Any, digits: int = 4) -> str:
    """A figure for a table: integers with separators, floats to ``digits`` significant
    decimals (trailing zeros dropped), None as a dash."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        s = f"{x:.{digits}f}".rstrip("0").rstrip(".")
        return "0" if s in ("-0", "") else s
    return str(x)


def fmt_p(p: Any) -> str:
    """A P value in one style: 3 significant digits, "< 0.001" below 0.001, a dash when
    missing."""
    if p is None:
        return "–"
    p = float(p)
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3g}" if p < 1 else "1"
