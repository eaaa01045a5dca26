"""The study figures the diagnostic reports, and its pass decided from them by the registered
rule (the shared evaluator of :mod:`prereg.rules`).

For each contract ``c`` of constant ``diagnostic``'s ``contracts`` the engine reports
``held-<c>``: the share of the seeds run on which the contract held (an exact share: k of n
seeds).  The hypothesis constant ``diagnostic``'s ``hypothesis`` names decides: the diagnostic
passes when that hypothesis is supported.  A seed's pass is the same rule over that seed's
figures alone (each share 0 or 1 of 1 seed); the diagnostic's over every seed run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

HELD = "held-{}"


def reported(spec: Mapping[str, Any]) -> list[str]:
    """The figures this engine can report for a spec (``Engine.figures``)."""
    for c in spec.get("constants") or ():
        if isinstance(c, Mapping) and c.get("id") == "diagnostic":
            value = c.get("value")
            if isinstance(value, Mapping):
                return [HELD.format(x) for x in value.get("contracts") or ()]
    return []


def held_figures(
    seeds: Sequence[Mapping[str, Any]], contracts: Iterable[str]
) -> dict[str, Fraction | None]:
    """``held-<c>`` over seed results ``{"contracts": [{"contract", "passed"}, ...]}``."""
    from prereg.rules import share  # lazily: prereg.rules brings numpy

    out = {}
    for c in contracts:
        held = sum(
            1
            for s in seeds
            for r in s.get("contracts") or ()
            if r.get("contract") == c and r.get("passed")
        )
        out[HELD.format(c)] = share(held, len(seeds))
    return out


def passes(decision, figures: Mapping[str, Fraction | None]) -> bool:
    """Whether the registered rule holds over the figures (the hypothesis is supported)."""
    from prereg.rules import SUPPORTED, figure_result  # lazily: prereg.rules brings numpy

    results = {k: figure_result(k, v) for k, v in figures.items()}
    return decision.decide(results) == SUPPORTED
