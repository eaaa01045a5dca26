"""A study's registered scenarios (``scenarios`` in the language): the true rate of each row.

A scenario's ``rates`` are tried in order and the first whose ``where`` filters all hold for a
row gives its rate (a rate without ``where`` holds for every row); filters name the split, a
factor or a row attribute. A scenario with ``effects`` is a family: at effect size ``d`` a
rate with coefficient ``effect`` is ``rate + effect·d``. ``coverage`` (default 1) is the share
of each cell's rows observed, rounded down; ``failed_attempt_rate`` (default 0) the chance that
a row's first attempt fails, after which a second one is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prereg.errors import UserError
from prereg.rules import selection_matches


def registered(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(s["id"]): s for s in config.get("scenarios") or ()}


def scenario(config: Mapping[str, Any], sid: str, what: str = "--scenario") -> Mapping[str, Any]:
    found = registered(config)
    if sid not in found:
        raise UserError(
            f"{what}: unknown scenario {sid!r} (registered: {', '.join(found) or 'none'})"
        )
    return found[sid]


def selection(filters: Sequence[Mapping[str, Any]] | None) -> dict[str, tuple[str, ...]]:
    """A rate's ``where`` (level filters) as a selection ``{name: levels}``."""
    return {str(f["factor"]): tuple(str(v) for v in f["levels"]) for f in filters or ()}


def compiled_rates(sc: Mapping[str, Any]) -> list[tuple[dict[str, tuple[str, ...]], float, float]]:
    """``(selection, rate, effect coefficient)`` per rate, in order."""
    return [
        (selection(r.get("where")), float(r["rate"]), float(r.get("effect") or 0.0))
        for r in sc["rates"]
    ]


def effects(sc: Mapping[str, Any]) -> tuple[float, ...]:
    """The effect sizes of a family, or ``()`` for a fixed scenario."""
    return tuple(float(e) for e in sc.get("effects") or ())


def rate_for(
    rates: Sequence[tuple[Mapping[str, tuple[str, ...]], float, float]],
    attributes: Mapping[str, str],
    effect: float = 0.0,
) -> float | None:
    """The true rate of a row with these attributes (None when no rate matches)."""
    for where, rate, coef in rates:
        if selection_matches(where, attributes):
            return rate + coef * effect if coef else rate
    return None


def coverage(sc: Mapping[str, Any]) -> float:
    return float(1.0 if sc.get("coverage") is None else sc["coverage"])


def failed_attempt_rate(sc: Mapping[str, Any]) -> float:
    return float(sc.get("failed_attempt_rate") or 0.0)


def kept_rows(rows: int, share: float) -> int:
    """Rows of a cell observed at coverage ``share``: rounded down (and exact for shares that
    are a whole number of rows, despite binary fractions)."""
    import math

    return min(int(rows), math.floor(share * int(rows) + 1e-9))


def fixed(sc: Mapping[str, Any], command: str) -> None:
    """Refuse a family where a command draws one fixed scenario."""
    if sc.get("effects"):
        raise UserError(
            f"{command}: scenario {sc['id']!r} is a family over effects ({', '.join(f'{e:g}' for e in effects(sc))}):"
            " diagnose runs it; simulate draws fixed scenarios only"
        )
