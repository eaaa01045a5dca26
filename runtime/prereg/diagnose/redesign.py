"""Redesign: the whole diagnosis again at each value of a registered size, and the smallest
value that meets every sizing claim.

``--vary rows=50,100,200,400`` sets every registered cell's row count to each value in turn
(the tuning split's cells too: they are never scored by a rule, so only the totals reported
change); ``--vary rows:CELL=...`` sets one registered cell's (its expanded id).  A half-width
claim that states its own ``rows`` is about one cell's size, so under ``rows`` it is checked at
the varied value (under ``rows:CELL``, when it names that cell).

``--vary units:LEVEL=10,20,40`` sets the number of units a unit level registers per cell (the
problems, repositories or items a study samples) and every cell's rows with it, in the
registered ratio of rows to units (240 rows for 20 problems: 12 rows a problem; a ratio that
is not whole is refused); ``units=...`` when one level registers a number.  Under ``rows``,
each unit level's registered number moves with the rows (times the largest ratio of a cell's
new rows to its registered rows, rounded up), so that a scenario's clusters of registered
sizes fill the cells and a share of registered units means what it means at the registered
size.

``--vary alpha=0.01,0.05`` varies the significance level: every family's alpha and every
threshold a rule (a hypothesis' rule or verdicts, or the decision) compares a P value or an
adjusted P value with (``p``/``adjusted_p`` ``lt``/``le``); a power claim without its own alpha
follows its family's.  ``--vary margin:ID=...`` varies the margin of one registered contrast
or analysis (``margin=...`` when exactly one registers a margin): its test's margin (an
analysis' ``margin`` option) and every threshold a rule compares its ``estimate``, ``lower`` or
``upper`` with that equals the registered margin (a non-inferiority rule's bound moves with the
margin).  An equivalence analysis registers two margins, its ``lower`` and ``upper`` options
(``tost-means``, ``tost-paired``, ``tost-proportions``): ``--vary lower:ID=...`` and
``--vary upper:ID=...`` vary one of them (the id may be left out when one analysis registers
both; each value must stay on its side of the other margin), and ``--vary margin:ID=M1,...``
varies a symmetric pair (registered as ``-m`` and ``m``) to ``-M1`` and ``M1``; an asymmetric
pair is refused there with the words to vary each side.  Thresholds a rule compares the
analysis' ``estimate``, ``lower`` or ``upper`` with move with the margin they equal.  The rules
are varied as compiled (:func:`varied_rules`); nothing is compiled again.

Every value is run with the same ``--seed`` (common random numbers: the figures of
neighbouring values differ by the size, not by the draw).  ``--target`` picks the smallest
value of the list at which every claim holds and runs the diagnosis at it again with a fresh
seed, :func:`confirmation_seed`: the first 32-bit word of
``numpy.random.SeedSequence(seed, spawn_key=(CONFIRM_KEY,)).generate_state(1)``, a function of
the seed alone, so the bytes still do not depend on ``--workers``.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from prereg.errors import UserError

#: The spawn key that derives the confirmation seed from ``--seed`` ("cf" in ASCII).
CONFIRM_KEY = 0x6366
MAX_VALUES = 64


PARAMETERS = ("rows", "units", "alpha", "margin", "lower", "upper")


@dataclass(frozen=True)
class Vary:
    parameter: str  # "rows", "units", "alpha", "margin", "lower" or "upper"
    cell: str | None  # rows: one cell's id; units: the level; margin, lower, upper: the
    # contrast's or analysis' id; or None
    values: tuple[int | float, ...]

    @property
    def label(self) -> str:
        return self.parameter if self.cell is None else f"{self.parameter}:{self.cell}"


def parse_vary(text: str, config: Mapping[str, Any], rules=None) -> Vary:
    """``rows=V1,V2,...`` or ``rows:CELL=V1,...`` (distinct positive integers), ``alpha=...``
    (distinct levels strictly between 0 and 1) or ``margin[:ID]=...``, ``lower[:ID]=...``,
    ``upper[:ID]=...`` (distinct numbers)."""
    where = f"--vary {text!r}"
    name, sep, values = str(text).partition("=")
    if not sep:
        raise UserError(f"{where}: expected NAME=V1,V2,... (for example rows=50,100,200)")
    param, _, cell = name.strip().partition(":")
    param, cell = param.strip(), cell.strip() or None
    if param not in PARAMETERS:
        raise UserError(
            f"{where}: {param!r} cannot be varied: rows (every cell), rows:CELL (one registered"
            " cell), units[:LEVEL] (the units a level registers per cell), alpha, or"
            " margin[:ID] (a registered contrast's or analysis' margin), lower[:ID] or upper[:ID]"
            " (an equivalence analysis' lower or upper margin)"
        )
    if param in ("alpha", "margin", "lower", "upper"):
        return _parse_level(where, param, cell, values, rules)
    if param == "units":
        cell = _unit_level(where, cell, config)
    elif cell is not None:
        ids = [str(c["id"]) for c in config.get("cells") or ()]
        if cell not in ids:
            near = ", ".join(ids[:6]) + (", …" if len(ids) > 6 else "")
            raise UserError(f"{where}: no registered cell {cell!r} (cells: {near})")

    def at_least_one(v: int) -> str | None:
        if v >= 1:
            return None
        if param == "units":
            return f"{v} units: a cell needs at least one unit"
        return f"{v} rows: a cell needs at least one row"

    out = whole_values(where, values, f" of {param}", at_least_one)
    per_unit = rows_per_unit(config, cell, where) if param == "units" else None
    # refused before any run when not whole (units), or when the largest design's rows
    # would not fit in memory
    _refuse_beyond_memory(where, param, cell, out, config, per_unit)
    return Vary(param, cell, tuple(out))


#: Peak bytes a diagnosis holds per registered row of the redesigned study (the manifest it
#: builds, its row table and the drawn columns): measured 630 B a row at 3.2 million rows
#: (answer-position at rows=100000), with room to spare.
ROW_BYTES = 1024


def refuse_registered_beyond_memory(config: Mapping[str, Any], memory: int | None = None) -> None:
    """Refuse, before any run, a diagnosis of a registered study whose rows would not fit in
    half the available memory (the diagnosis starts at the registered size)."""
    from .command import available_memory

    memory = available_memory() if memory is None else memory
    rows = sum(int(c["rows"]) for c in config.get("cells") or ())
    need = rows * ROW_BYTES
    if need > memory // 2:
        raise UserError(
            f"the study registers {rows:,} rows, which a diagnosis needs about"
            f" {need / 2**30:,.1f} GiB to hold, more than half the {memory / 2**30:,.1f} GiB"
            " available (nothing was run)"
        )


def _refuse_beyond_memory(where, param, cell, values, config, per_unit, memory=None) -> None:
    """Refuse a varied size whose study's rows (every registered cell at that size) would
    not fit in half the available memory, naming the most that fits (rows=99999999999 ran
    for minutes and out of memory)."""
    from .command import available_memory

    memory = available_memory() if memory is None else memory
    cells = {str(c["id"]): int(c["rows"]) for c in config.get("cells") or ()}
    if not cells:
        return
    if param == "units":
        unit_rows = sum(per_unit.values())  # one more unit adds these rows to the study

        def total(v: int) -> int:
            return unit_rows * v

        fixed, slope = 0, max(unit_rows, 1)
    elif cell is None:

        def total(v: int) -> int:
            return len(cells) * v

        fixed, slope = 0, len(cells)
    else:
        fixed, slope = sum(cells.values()) - cells[cell], 1

        def total(v: int) -> int:
            return fixed + v

    budget = memory // 2
    biggest = max(values)
    need = total(biggest) * ROW_BYTES
    if need > budget:
        most = max(0, (budget // ROW_BYTES - fixed) // slope)
        raise UserError(
            f"{where}: at {biggest:,} the study has {total(biggest):,} rows, which need about"
            f" {need / 2**30:,.1f} GiB, more than half the {memory / 2**30:,.1f} GiB available;"
            f" at most {most:,} here (nothing was run)"
        )


_WHOLE = re.compile(r"[+-]?[0-9]+", re.ASCII)


def whole_values(where: str, values: str, noun: str, check) -> list[int]:
    """``V1,V2,...``: distinct whole numbers, at most :data:`MAX_VALUES`, each passing
    ``check`` (None, or the words of its refusal); ``noun`` ends "is not a whole number"."""
    out: list[int] = []
    for part in values.split(","):
        part = part.strip()
        # ASCII digits only: int() also reads '١٢', '1_000' and digits of any length
        if not _WHOLE.fullmatch(part):
            raise UserError(f"{where}: {part!r} is not a whole number{noun}")
        if len(part.lstrip("+-")) > 20:
            raise UserError(f"{where}: {part[:24]}… is too large (more than 20 digits)")
        v = int(part)
        bad = check(v)
        if bad:
            raise UserError(f"{where}: {bad}")
        if v in out:
            raise UserError(f"{where}: {v} is listed twice")
        out.append(v)
    if len(out) > MAX_VALUES:
        raise UserError(f"{where}: {len(out)} values; at most {MAX_VALUES}")
    return out


def _unit_level(where: str, level: str | None, config: Mapping[str, Any]) -> str:
    """The unit level ``units[:LEVEL]`` varies: one that registers a number per cell."""
    counted = [str(u["id"]) for u in config.get("units") or () if u.get("registered")]
    if level is None:
        if len(counted) != 1:
            raise UserError(
                f"{where}: name the unit level (units:LEVEL=...): {len(counted)} levels"
                " register a number of units per cell"
                + (f" ({', '.join(counted)})" if counted else "")
            )
        return counted[0]
    if level not in counted:
        every = [str(u["id"]) for u in config.get("units") or ()]
        raise UserError(
            f"{where}: no unit level {level!r} registering a number of units per cell"
            f" (levels: {', '.join(every) or 'none'}; with a number: {', '.join(counted) or 'none'})"
        )
    return level


def rows_per_unit(config: Mapping[str, Any], level: str, where: str) -> dict[str, int]:
    """Each cell's registered rows per registered unit of ``level`` (whole numbers, else
    refused: the rows of a varied number of units would not be whole)."""
    unit = next(u for u in config.get("units") or () if str(u["id"]) == level)
    n = int(unit["registered"])
    out = {}
    for c in config.get("cells") or ():
        rows = int(c["rows"])
        if rows % n:
            raise UserError(
                f"{where}: cell {c['id']} registers {rows} rows for {n} units of {level}, not a"
                " whole number of rows a unit; vary rows instead"
            )
        out[str(c["id"])] = rows // n
    return out


def _parse_level(where: str, param: str, target: str | None, values: str, rules) -> Vary:
    if param == "alpha" and target is not None:
        raise UserError(f"{where}: alpha takes no id (it varies every P threshold and family)")
    out: list[float] = []
    for part in values.split(","):
        part = part.strip()
        try:
            v = float(part)
        except ValueError:
            raise UserError(f"{where}: {part!r} is not a number") from None
        if v != v or v in (float("inf"), float("-inf")):
            raise UserError(f"{where}: {part!r} is not a finite number")
        if param == "alpha" and not 0 < v < 1:
            raise UserError(f"{where}: alpha {v:g} is not strictly between 0 and 1")
        if v in out:
            raise UserError(f"{where}: {v:g} is listed twice")
        out.append(v)
    if len(out) > MAX_VALUES:
        raise UserError(f"{where}: {len(out)} values; at most {MAX_VALUES}")
    if param == "margin" and rules is not None:
        target = _margin_target(where, target, rules)
        if target in _bounds(rules) and "margin" not in _options_of(rules, target):
            for v in out:
                if not v > 0:
                    raise UserError(
                        f"{where}: {target}'s margins are -m and m: m must be positive, got {v:g}"
                    )
    if param in ("lower", "upper") and rules is not None:
        target = _bound_target(where, param, target, rules, out)
    return Vary(param, target, tuple(out))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bounds(rules) -> dict[str, tuple[float, float]]:
    """Id -> (lower, upper) of every analysis registering both margins as options (TOST)."""
    return {
        a.id: (float(a.options["lower"]), float(a.options["upper"]))
        for a in getattr(rules, "ANALYSES", ())
        if _number(a.options.get("lower")) and _number(a.options.get("upper"))
    }


def _bound_target(where: str, side: str, target: str | None, rules, values) -> str:
    found = _bounds(rules)
    if target is None:
        if len(found) != 1:
            raise UserError(
                f"{where}: name the analysis ({side}:ID=...): {len(found)} register lower and"
                " upper margins" + (f" ({', '.join(list(found)[:8])})" if found else "")
            )
        target = next(iter(found))
    if target not in found:
        margins = ", ".join(_margins(rules)) or "none"
        raise UserError(
            f"{where}: no registered analysis with lower and upper margins {target!r} (those"
            f" that have them: {', '.join(found) or 'none'}; a single margin is varied with"
            f" margin:ID, and has: {margins})"
        )
    lo, hi = found[target]
    for v in values:
        if side == "lower" and not v < hi:
            raise UserError(f"{where}: lower {v:g} is not below {target}'s upper margin {hi:g}")
        if side == "upper" and not v > lo:
            raise UserError(f"{where}: upper {v:g} is not above {target}'s lower margin {lo:g}")
    return target


def _margins(rules) -> dict[str, float]:
    """Id -> registered margin of every contrast with a test, every analysis with a
    ``margin`` option and every analysis with symmetric ``lower`` and ``upper`` margins
    (``-m`` and ``m``: its margin is ``m``)."""
    out = {c.id: float(c.margin or 0.0) for c in rules.CONTRASTS if c.test != "none"}
    for a in getattr(rules, "ANALYSES", ()):
        if "margin" in a.options and isinstance(a.options["margin"], (int, float)):
            out[a.id] = float(a.options["margin"])
    for k, (lo, hi) in _bounds(rules).items():
        if lo == -hi:
            out[k] = hi
    return out


def _margin_target(where: str, target: str | None, rules) -> str:
    found = _margins(rules)
    bounds = _bounds(rules)
    if target is not None and target not in found and target in bounds:
        lo, hi = bounds[target]
        raise UserError(
            f"{where}: analysis {target!r} registers the margins lower {lo:g} and upper {hi:g},"
            f" not a symmetric pair (-m and m): vary one side, --vary lower:{target}=... or"
            f" --vary upper:{target}=..."
        )
    if target is None:
        nonzero = [k for k, v in found.items() if v != 0.0]
        if len(nonzero) != 1:
            raise UserError(
                f"{where}: name the contrast or analysis (margin:ID=...):"
                f" {len(nonzero)} register a non-zero margin"
                + (f" ({', '.join(nonzero[:8])})" if nonzero else "")
            )
        return nonzero[0]
    if target not in found:
        near = ", ".join(list(found)[:8]) or "none"
        raise UserError(
            f"{where}: no registered contrast with a test or analysis with a margin option"
            f" {target!r} (those that have one: {near})"
        )
    return target


def varied_rules(rules, vary: Vary, value: float):
    """A copy of the compiled ``rules`` (:class:`.design.Rules`) at ``alpha`` or ``margin``
    ``value`` (see the module's docstring); the registered rules are left as they are."""
    from functools import partial

    from prereg.rules import AllOf, AnyOf, AtLeast, Compare, ForEach, Not, decide, fill

    out = copy.copy(rules)
    # the registered value(s) a threshold moves from, with the value each moves to
    moves: dict[float, float] = {}
    bounds = _bounds(rules).get(vary.cell)
    if vary.parameter in ("lower", "upper"):
        moves[bounds[0 if vary.parameter == "lower" else 1]] = value
    elif vary.parameter == "margin":
        moves[_margins(rules)[vary.cell]] = value
        if bounds is not None and "margin" not in _options_of(rules, vary.cell):
            moves = {bounds[0]: -value, bounds[1]: value}

    def targets_it(node: Compare, binding) -> bool:
        if "{" not in node.target:
            return node.target == vary.cell
        names = [n for n in binding if "{" + n + "}" in node.target]
        hits = {
            fill(node.target, {**dict(zip(names, combo, strict=True))}) == vary.cell
            for combo in itertools.product(*(binding[n] for n in names))
        }
        if hits == {True, False}:
            raise UserError(
                f"--vary {vary.label}: a rule compares {node.target!r} inside for_each,"
                " for this and other ids at once; it cannot move for one of them alone"
            )
        return hits == {True}

    def walk(node, binding):
        if node is None:
            return None
        if isinstance(node, Compare):
            if vary.parameter == "alpha":
                if node.quantity in ("p", "adjusted_p") and node.op in ("lt", "le"):
                    return replace(node, value=value)
                return node
            if (
                node.quantity in ("estimate", "lower", "upper")
                and float(node.value) in moves
                and targets_it(node, binding)
            ):
                return replace(node, value=moves[float(node.value)])
            return node
        if isinstance(node, (AllOf, AnyOf, AtLeast)):
            return replace(node, conditions=tuple(walk(c, binding) for c in node.conditions))
        if isinstance(node, Not):
            return replace(node, condition=walk(node.condition, binding))
        if isinstance(node, ForEach):
            inner = {**binding, node.name: tuple(node.values)}
            return replace(node, condition=walk(node.condition, inner))
        return node

    out.RULES = {
        h: (walk(rule, {}), tuple(replace(v, when=walk(v.when, {})) for v in verdicts))
        for h, (rule, verdicts) in rules.RULES.items()
    }
    out.HYPOTHESES = {h: partial(decide, r, v) for h, (r, v) in out.RULES.items()}
    if getattr(rules, "DECISION", None) is not None:
        out.DECISION = replace(
            rules.DECISION,
            rules=tuple(replace(r, when=walk(r.when, {})) for r in rules.DECISION.rules),
        )
    if vary.parameter == "alpha":
        out.FAMILIES = {k: replace(f, alpha=value) for k, f in rules.FAMILIES.items()}
    else:
        out.CONTRASTS = tuple(
            replace(c, margin=value) if c.id == vary.cell else c for c in rules.CONTRASTS
        )
        if vary.parameter in ("lower", "upper"):
            options = {vary.parameter: value}
        elif bounds is not None and "margin" not in _options_of(rules, vary.cell):
            options = {"lower": -value, "upper": value}
        else:
            options = {"margin": value}
        out.ANALYSES = tuple(
            replace(a, options={**a.options, **options}) if a.id == vary.cell else a
            for a in getattr(rules, "ANALYSES", ())
        )
    return out


def _options_of(rules, analysis_id: str) -> Mapping[str, Any]:
    for a in getattr(rules, "ANALYSES", ()):
        if a.id == analysis_id:
            return a.options
    return {}


def varied_config(config: Mapping[str, Any], vary: Vary, value: int) -> dict:
    """The study's config with the varied size set to ``value`` (a copy)."""
    if vary.parameter not in ("rows", "units"):
        return copy.deepcopy(dict(config))
    out = copy.deepcopy(dict(config))
    if vary.parameter == "units":
        per = rows_per_unit(config, vary.cell, f"--vary {vary.label}")
        for c in out.get("cells") or ():
            c["rows"] = per[str(c["id"])] * value
        for u in out.get("units") or ():
            if str(u["id"]) == vary.cell:
                u["registered"] = value
    else:
        grow = 0.0
        for c in out.get("cells") or ():
            if vary.cell is None or c["id"] == vary.cell:
                grow = max(grow, value / int(c["rows"]))
                c["rows"] = value
            else:
                grow = max(grow, 1.0)
        for u in out.get("units") or ():
            if u.get("registered"):
                u["registered"] = max(1, math.ceil(int(u["registered"]) * grow))
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
            "hypotheses": [
                {"id": h["id"], **{k: h["verdicts"][0][k] for k in ("verdict", "share", "mcSe")}}
                for h in s["hypotheses"]
            ],
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
        got = diagnosis(at, seed, f"diagnose {ctx.study_id} at {vary.label}={v}", v)
        points.append(_point(v, seed, got))
    out: dict[str, Any] = {"parameter": vary.label, "values": list(vary.values), "points": points}
    if find_target:
        meeting = [p["value"] for p in points if p["allHold"]]
        target: dict[str, Any] = {"value": min(meeting) if meeting else None, "confirmation": None}
        if meeting:
            fresh = confirmation_seed(seed)
            at = replace(ctx, config=varied_config(ctx.config, vary, target["value"]))
            got = diagnosis(at, fresh, f"confirm {vary.label}={target['value']}", target["value"])
            target["confirmation"] = _point(target["value"], fresh, got)
            target["confirmed"] = target["confirmation"]["allHold"]
        else:
            target["confirmed"] = False
        out["target"] = target
    return out
