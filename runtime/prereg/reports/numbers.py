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


def fmt_p(p: Any, against: tuple | None = None) -> str:
    """A P value in one style: 3 significant digits, "< 0.001" below 0.001, a dash when
    missing. ``against`` (the figure the comparison decided with, the threshold, its
    ``decimals``): more digits when 3 would read on the other side of the threshold (or on
    it) than the figure does, as :func:`fmt_against`."""
    if p is None:
        return "–"
    p = float(p)
    if p < 0.001 and (against is None or _sides(0.001, *against[1:]) == _sides(*against)):
        return "< 0.001"
    if against is not None:
        return fmt_against(against[0], *against[1:], digits=3, style="g")
    return f"{p:.3g}" if p < 1 else "1"


def _sides(x, value, decimals=None) -> int | None:
    from prereg.stats.compare import sign

    return sign(x, value, decimals=None if decimals is None else int(decimals))


def fmt_against(x: Any, value: Any, decimals: Any = None, digits: int = 4, style: str = "g") -> str:
    """A figure a comparison with the threshold ``value`` decided with (an int, a Fraction, or
    a float read as its shortest decimal) to ``digits`` significant digits, or to as many more
    as it takes for the digits shown to fall on the same side of the threshold as the figure
    (0.9000000000000001 > 0.9 is not shown "0.9", nor an exact 1/3 > 0.3333 "0.3333"); a figure
    no decimal of 40 digits shows so as ``p/q``."""
    from fractions import Fraction

    from prereg.stats.compare import decimal_fraction

    if x is None:
        return "–"
    side = _sides(x, value, decimals)
    exact = decimal_fraction(x) if isinstance(x, float) else Fraction(x)
    first = f"{float(x):.{digits}{style}}"
    if side is None or _sides(Fraction(first), value, decimals) == side:
        return first
    for more in range(digits + 1, 41):
        text = _significant(exact, more)
        if _sides(Fraction(text), value, decimals) == side:
            return text
    return f"{exact.numerator}/{exact.denominator}"


def _significant(x, digits: int) -> str:
    """A fraction to ``digits`` significant digits (half-even), as a decimal without an
    exponent and without trailing zeros."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = digits
        q = Decimal(x.numerator) / Decimal(x.denominator)
    text = format(q, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def written(value: Any) -> str:
    """A registered threshold as the spec writes it (the shortest decimal of its float,
    without an exponent: 0.2890625, not 0.2891; 0.00005, not 0)."""
    from decimal import Decimal

    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):  # an exact fraction as written, "2/3"
        return value
    from fractions import Fraction

    if isinstance(value, Fraction) and Fraction(repr(float(value))) != value:
        return f"{value.numerator}/{value.denominator}"
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text
