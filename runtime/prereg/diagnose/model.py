"""A scenario at one effect size, and drawing simulated studies under it.

Per registered cell, ``floor(coverage · rows)`` rows are observed (:func:`prereg.decide.
scenarios.kept_rows`), a uniformly random subset: with several row groups in the cell, the
observed rows per group are a multivariate hypergeometric draw.  Of a group's observed rows
each first attempt fails with the scenario's failed-attempt rate (binomial), and each row's
outcome is right with the group's true rate, independently of the failure (two binomials:
among the rows answered at the first attempt, and among the retried ones).

Randomness of block ``b`` of condition ``c``: ``Generator(PCG64(SeedSequence(seed,
spawn_key=(c.stream, b))))``, drawn in this order for the whole block of ``block_size``
studies (a partial last block uses its first studies, so a smaller run is a prefix of a
larger one): the hypergeometric draws cell by cell (cells with one group or every row observed
draw nothing), the failed first attempts, the right outcomes at the first attempt, the right
outcomes after a failed one (each a (block, groups) array).  ``c.stream`` comes from SHA-256 of
the scenario id and the effect size, so a condition draws the same numbers whichever other
conditions run beside it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from prereg.decide import scenarios as registered
from prereg.errors import UserError

from .design import DROPPED, KINDS, RETRIED_RIGHT, RETRIED_WRONG, RIGHT, WRONG, Design


@dataclass(frozen=True)
class Condition:
    """One scenario at one effect size (``effect`` None for a fixed scenario)."""

    scenario: str
    effect: float | None
    stream: int
    rate: np.ndarray  # float (G,): the true chance that a row's outcome is right
    kept: np.ndarray  # int (C,): observed rows per cell
    failed_attempt_rate: float

    @property
    def label(self) -> str:
        return (
            self.scenario if self.effect is None else f"{self.scenario} at effect {self.effect:g}"
        )


def stream_of(scenario: str, effect: float | None) -> int:
    text = f"prereg-diagnose:{scenario}:{'fixed' if effect is None else repr(float(effect))}"
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def condition(design: Design, sc: Mapping[str, Any], effect: float | None) -> Condition:
    """The scenario ``sc`` (a registered scenario) at ``effect``."""
    effects = registered.effects(sc)
    if effects and effect is None:
        raise UserError(f"scenario {sc['id']!r} is a family: name an effect size")
    rates = registered.compiled_rates(sc)
    rate = np.empty(design.groups)
    for g in range(design.groups):
        r = registered.rate_for(rates, design.attributes(g), 0.0 if effect is None else effect)
        if r is None and not rates and not registered.draws_outcome(sc):
            r = 0.0  # a scenario that draws only numbers or ratings: no outcome holds
        if r is None:
            r = _curve_rate(sc, design.attributes(g))
        if r is None:
            cell = design.cells[int(design.group_cell[g])]["id"]
            raise UserError(f"scenario {sc['id']!r} gives no rate for the rows of cell {cell}")
        if not 0.0 <= r <= 1.0:
            raise UserError(f"scenario {sc['id']!r} at effect {effect:g}: rate {r:g} is no chance")
        rate[g] = r
    share = registered.coverage(sc)
    kept = np.array(
        [registered.kept_rows(int(c["rows"]), share) for c in design.cells], dtype=np.int64
    )
    return Condition(
        scenario=str(sc["id"]),
        effect=None if effect is None else float(effect),
        stream=stream_of(str(sc["id"]), effect),
        rate=rate,
        kept=kept,
        failed_attempt_rate=registered.failed_attempt_rate(sc),
    )


def _curve_rate(sc: Mapping[str, Any], attributes) -> float | None:
    """A cell without a rate whose rows' outcome a calibration entry draws (the scenario has
    an outcome): the chance of a right row averaged over the entry's confidences, E[g(C)]
    (its rounding to ``decimals`` aside).  The rows are drawn by the curve, not at this
    rate; it stands for the cell's accuracy where a figure asks for one.  None otherwise."""
    from prereg.rules import selection_matches

    if sc.get("outcome") is None:
        return None
    for entry in sc.get("calibration") or ():
        if selection_matches(registered.selection(entry.get("where")), attributes):
            from .truths import ConfidenceLaw, _chance, _expect

            law = ConfidenceLaw(entry)
            return min(1.0, max(0.0, _expect(law, *_chance(law, True))))
    return None


def conditions(design: Design, sc: Mapping[str, Any]) -> list[Condition]:
    """A fixed scenario, or a family at each of its effect sizes."""
    effects = registered.effects(sc)
    if not effects:
        return [condition(design, sc, None)]
    return [condition(design, sc, e) for e in effects]


def _cell_groups(design: Design) -> list[np.ndarray]:
    order = np.argsort(design.group_cell, kind="stable")
    bounds = np.searchsorted(design.group_cell[order], np.arange(len(design.cells) + 1))
    return [order[bounds[c] : bounds[c + 1]] for c in range(len(design.cells))]


def draw_block(
    design: Design, cond: Condition, seed: int, block: int, block_size: int
) -> np.ndarray:
    """Rows of each kind per group, (block_size, groups, kinds), for block ``block``."""
    ss = np.random.SeedSequence(seed, spawn_key=(cond.stream, block))
    rng = np.random.Generator(np.random.PCG64(ss))
    g_rows = design.group_rows
    kept = np.broadcast_to(g_rows, (block_size, design.groups)).copy()
    for c, groups in enumerate(_cell_groups(design)):
        if groups.size == 0:
            continue
        total = int(g_rows[groups].sum())
        keep = int(cond.kept[c])
        if keep >= total:
            continue
        if groups.size == 1:
            kept[:, groups[0]] = keep
            continue
        kept[:, groups] = rng.multivariate_hypergeometric(g_rows[groups], keep, size=block_size)
    f = cond.failed_attempt_rate
    retried = rng.binomial(kept, f) if f > 0 else np.zeros_like(kept)
    first = kept - retried
    right = rng.binomial(first, cond.rate)
    retried_right = rng.binomial(retried, cond.rate)
    out = np.empty((block_size, design.groups, len(KINDS)), dtype=np.int64)
    out[..., DROPPED] = g_rows - kept
    out[..., RIGHT] = right
    out[..., WRONG] = first - right
    out[..., RETRIED_RIGHT] = retried_right
    out[..., RETRIED_WRONG] = retried - retried_right
    return out


def expected_counts(design: Design, cond: Condition) -> np.ndarray:
    """Expected rows of each kind per group, (groups, kinds) floats."""
    rows = design.group_rows.astype(float)
    kept = np.empty(design.groups)
    for c, groups in enumerate(_cell_groups(design)):
        total = rows[groups].sum()
        keep = min(float(cond.kept[c]), total)
        kept[groups] = rows[groups] * (keep / total if total else 0.0)
    f, r = cond.failed_attempt_rate, cond.rate
    out = np.empty((design.groups, len(KINDS)))
    out[:, DROPPED] = rows - kept
    out[:, RIGHT] = kept * (1 - f) * r
    out[:, WRONG] = kept * (1 - f) * (1 - r)
    out[:, RETRIED_RIGHT] = kept * f * r
    out[:, RETRIED_WRONG] = kept * f * (1 - r)
    return out


def kept_is_fixed(design: Design, cond: Condition) -> np.ndarray:
    """Per group: whether its observed rows are the same in every simulated study."""
    fixed = np.ones(design.groups, dtype=bool)
    for c, groups in enumerate(_cell_groups(design)):
        total = int(design.group_rows[groups].sum())
        if groups.size > 1 and int(cond.kept[c]) < total:
            fixed[groups] = False
    return fixed
