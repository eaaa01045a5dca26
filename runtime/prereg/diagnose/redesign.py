"""Redesign: the whole diagnosis again at each value of a registered size, and the smallest
value that meets every sizing claim.

``--vary rows=50,100,200,400`` sets every registered cell's row count to each value in turn
(the tuning split's cells too: they are never scored by a rule, so only the totals reported
change); ``--vary rows:CELL=...`` sets one registered cell's (its expanded id).  A half-width
claim that states its own ``rows`` is about one cell's size, so under ``rows`` it is checked at
the varied value (under ``rows:CELL``, when it names that cell).  Nothing else of the spec
changes: the scenarios, the rules, alpha and margins are the registered ones (they are compiled
into the study's rules, so varying them would need another compile; diagnose refuses).

Every value is run with the same ``--seed`` (common random numbers: the figures of
neighbouring values differ by the size, not by the draw).  ``--target`` picks the smallest
value of the list at which every claim holds and runs the diagnosis at it again with a fresh
seed, :func:`confirmation_seed`: the first 32-bit word of
``numpy.random.SeedSequence(seed, spawn_key=(CONFIRM_KEY,)).generate_state(1)``, a function of
the seed alone, so the bytes still do not depend on ``--workers``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from prereg.errors import UserError

#: The spawn key that derives the confirmation seed from ``--seed`` ("cf" in ASCII).
CONFIRM_KEY = 0x6366
MAX_VALUES = 64


@dataclass(frozen=True)
class Vary:
    parameter: str  # "rows"
    cell: str | None  # one cell's id, or None for every cell
    values: tuple[int, ...]

    @property
    def label(self) -> str:
        return self.parameter if self.cell is None else f"{self.parameter}:{self.cell}"


def parse_vary(text: str, config: Mapping[str, Any]) -> Vary:
    """``rows=V1,V2,...`` or ``rows:CELL=V1,...``: the values distinct positive integers."""
    where = f"--vary {text!r}"
    name, sep, values = str(text).partition("=")
    if not sep:
        raise UserError(f"{where}: expected NAME=V1,V2,... (for example rows=50,100,200)")
    param, _, cell = name.strip().partition(":")
    param, cell = param.strip(), cell.strip() or None
    if param != "rows":
        what = (
            "alpha and margins are compiled into the study's rules and cannot be varied by diagnose"
            if param in ("alpha", "margin")
            else "only rows (every cell) or rows:CELL (one registered cell) can be varied"
        )
        raise UserError(f"{where}: {param!r} cannot be varied: {what}")
    if cell is not None:
        ids = [str(c["id"]) for c in config.get("cells") or ()]
        if cell not in ids:
            near = ", ".join(ids[:6]) + (", …" if len(ids) > 6 else "")
            raise UserError(f"{where}: no registered cell {cell!r} (cells: {near})")
    out: list[int] = []
    for part in values.split(","):
        part = part.strip()
        try:
            v = int(part)
        except ValueError:
            raise UserError(f"{where}: {part!r} is not a whole number of rows") from None
        if v < 1:
            raise UserError(f"{where}: {v} rows: a cell needs at least one row")
        if v in out:
            raise UserError(f"{where}: {v} is listed twice")
        out.append(v)
    if len(out) > MAX_VALUES:
        raise UserError(f"{where}: {len(out)} values; at most {MAX_VALUES}")
    return Vary(param, cell, tuple(out))


def varied_config(config: Mapping[str, Any], vary: Vary, value: int) -> dict:
    """The study's config with the varied size set to ``value`` (a copy)."""
    out = copy.deepcopy(dict(config))
    for c in out.get("cells") or ():
        if vary.cell is None or c["id"] == vary.cell:
            c["rows"] = value
    for claim in out.get("claims") or ():
        body = claim.get("half_width")
        if not body or body.get("rows") is None:
            continue
        if vary.cell is None or body.get("cell") == vary.cell:
            body["rows"] = value
    return out


def confirmation_seed(seed: int) -> int:
    import numpy as np

    ss = np.random.SeedSequence(seed, spawn_key=(CONFIRM_KEY,))
    return int(ss.generate_state(1, dtype=np.uint32)[0])


def _claims(checked) -> list[dict]:
    keys = ("id", "method", "figure", "op", "value", "holds")
    out = []
    for c in checked:
        entry = {k: c[k] for k in keys}
        for k in ("mcSe", "withinMonteCarloError"):
            if k in c:
                entry[k] = c[k]
        out.append(entry)
    return out


def _decisions(summaries) -> list[dict]:
    return [
        {
            "scenario": s["scenario"],
            "effect": s["effect"],
            "decision": [dict(o) for o in s.get("decision") or ()],
        }
        for s in summaries
    ]


def _point(value: int, seed: int, got: Mapping[str, Any]) -> dict:
    claims = _claims(got["claims"])
    return {
        "value": value,
        "seed": seed,
        "rows": int(got["design"].group_rows.sum()),
        "claims": claims,
        "allHold": all(c["holds"] for c in claims),
        "conditions": _decisions(got["summaries"]),
    }


def redesign(
    ctx,
    vary: Vary,
    seed: int,
    find_target: bool,
    diagnosis: Callable[[Any, int, str], dict],
) -> dict:
    """The ``redesign`` section of DIAGNOSE.json."""
    points = []
    for v in vary.values:
        at = replace(ctx, config=varied_config(ctx.config, vary, v))
        got = diagnosis(at, seed, f"diagnose {ctx.study_id} at {vary.label}={v}")
        points.append(_point(v, seed, got))
    out: dict[str, Any] = {"parameter": vary.label, "values": list(vary.values), "points": points}
    if find_target:
        meeting = [p["value"] for p in points if p["allHold"]]
        target: dict[str, Any] = {"value": min(meeting) if meeting else None, "confirmation": None}
        if meeting:
            fresh = confirmation_seed(seed)
            at = replace(ctx, config=varied_config(ctx.config, vary, target["value"]))
            got = diagnosis(at, fresh, f"confirm {vary.label}={target['value']}")
            target["confirmation"] = _point(target["value"], fresh, got)
            target["confirmed"] = target["confirmation"]["allHold"]
        else:
            target["confirmed"] = False
        out["target"] = target
    return out
