"""Cells by crossing, expanded at compile time.

A crossing registers one cell per combination of its factors' levels (the first factor varies
slowest, levels in their registered order; ``subset`` keeps only some levels of a factor and
``exclude`` leaves combinations out), each in the crossing's split, with ``rows`` rows or the
rows ``rows_by`` gives for the level of one crossed factor (a study without splits: no split); ``fixed`` pins further factors to
one level. The expanded cells follow the written ones, crossing by crossing, and are what
every later stage sees: the semantic checks, the engine configuration, PREREG.md, ``prereg
diff`` and seals (so a reviewer still sees a change per cell). An expanded cell points at its
crossing in the spec, which is where its problems are reported. A cell's levels are listed in
the study's factor order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from prereg.errors import UserError

#: The most cells a study registers, written and crossed: each is listed in the study's
#: generated code and PREREG.md and checked at compile (a crossing of three factors of 1,000
#: levels each, a billion cells, ran until memory ran out).
MAX_CELLS = 10_000

#: The most rows a study registers, over all its cells: score lists every registered row, so
#: a count written by mistake (9007199254740991) is refused by compile instead of running
#: score without end. A billion: the scale issue (#34) registers 10^7 rows scored in buckets
#: within 1 GiB today and aims at 10^8 on a cluster, so the bound leaves both room.
MAX_ROWS = 1_000_000_000

#: ``{name}`` or ``{name.id}`` / ``{name.code}`` in a cell-id template.
PLACEHOLDER = re.compile(r"\{([A-Za-z][A-Za-z0-9_]*)(?:\.(?:id|code))?\}")
_TOKEN = re.compile(r"\{([A-Za-z][A-Za-z0-9_]*)(?:\.(id|code))?\}")


def _factor_levels(spec: dict) -> dict[str, list[dict]]:
    return {f["id"]: list(f.get("levels") or []) for f in spec.get("factors") or []}


def _rows(crossing: dict, levels: dict[str, str]) -> int | None:
    by = crossing.get("rows_by")
    if by is None:
        return crossing.get("rows")
    level = levels.get(by.get("factor"))
    return next((int(r["rows"]) for r in by.get("rows") or [] if str(r["level"]) == level), None)


def crossing_size(spec: dict, crossing: dict) -> int:
    """How many combinations of levels ``crossing`` crosses (before any ``exclude``), counted
    without listing them; 0 when it names an unknown factor."""
    levels = _factor_levels(spec)
    subset = {
        str(f.get("factor")): {str(v) for v in f.get("levels") or []}
        for f in crossing.get("subset") or []
        if isinstance(f, dict)
    }
    n = 1
    for f in crossing.get("factors") or []:
        if f not in levels:
            return 0
        n *= sum(1 for lv in levels[f] if f not in subset or str(lv.get("id")) in subset[f])
    return n


def size_problems(spec: dict) -> list[tuple[str, str]]:
    """``(pointer, rule)`` when the spec registers more than :data:`MAX_CELLS` cells: each
    crossing that alone crosses more, else the crossings whose cells bring the total past it."""
    written = len(spec.get("cells") or [])
    sizes = [
        (f"/crossings/{j}", crossing_size(spec, c))
        for j, c in enumerate(spec.get("crossings") or [])
        if isinstance(c, dict)
    ]
    too_big = [
        (
            ptr,
            f"the crossing crosses {n:,} combinations of levels; a study registers at most"
            f" {MAX_CELLS:,} cells",
        )
        for ptr, n in sizes
        if n > MAX_CELLS
    ]
    if too_big:
        return too_big
    total = written + sum(n for _, n in sizes)
    if total > MAX_CELLS:
        return [
            (
                "/crossings" if sizes else "/cells",
                f"the study registers {total:,} cells ({written:,} written, the rest crossed);"
                f" at most {MAX_CELLS:,}",
            )
        ]
    return []


def crossing_cells(spec: dict, crossing: dict) -> list[dict]:
    """The cells one crossing registers (unknown factors or splits give no cells; the semantic
    checks report them)."""
    levels = _factor_levels(spec)
    order = {f: i for i, f in enumerate(levels)}
    codes = {s["id"]: s.get("code") or s["id"] for s in spec.get("splits") or []}
    factors = list(crossing.get("factors") or [])
    split = crossing.get("split")
    if any(f not in levels for f in factors) or (split not in codes if codes else split):
        return []
    subset = {
        str(f["factor"]): [str(v) for v in f.get("levels") or []]
        for f in crossing.get("subset") or []
    }
    fixed = [(str(r["factor"]), str(r["level"])) for r in crossing.get("fixed") or []]
    excluded = [
        {str(r["factor"]): str(r["level"]) for r in x.get("levels") or []}
        for x in crossing.get("exclude") or []
    ]
    axes = [
        [lv for lv in levels[f] if f not in subset or str(lv["id"]) in subset[f]] for f in factors
    ]
    out = []
    for combo in itertools.product(*axes):
        ids = {} if split is None else {"split": (str(split), str(codes[split]))}
        chosen: dict[str, str] = {}
        for factor, level in zip(factors, combo, strict=True):
            ids[factor] = (str(level["id"]), str(level.get("code") or level["id"]))
            chosen[factor] = str(level["id"])
        for factor, level in fixed:
            lv = next((x for x in levels.get(factor, []) if str(x["id"]) == level), None)
            ids.setdefault(factor, (level, str((lv or {}).get("code") or level)))
            chosen.setdefault(factor, level)
        if any(all(chosen.get(f) == v for f, v in x.items()) for x in excluded):
            continue

        def name(m: re.Match, ids=ids) -> str:
            pair = ids.get(m.group(1))
            if pair is None:
                return m.group(0)
            return pair[0] if m.group(2) == "id" else pair[1]

        refs = [
            {"factor": f, "level": chosen[f]}
            for f in sorted(chosen, key=lambda f: order.get(f, len(order)))
        ]
        cell = {"id": _TOKEN.sub(name, crossing["id"])}
        if split is not None:  # a study without splits: its cells name none
            cell["split"] = split
        out.append({**cell, "rows": _rows(crossing, chosen), "levels": refs})
    return out


def cell_entries(spec: dict) -> Iterator[tuple[str, dict]]:
    """(pointer, cell) for every registered cell: the written ones, then each crossing's. A
    spec of more than :data:`MAX_CELLS` cells is refused before any crossing is listed (compile
    reports it at its line first, see :func:`size_problems`)."""
    if spec.get("crossings"):
        found = size_problems(spec)
        if found:
            ptr, rule = found[0]
            raise UserError(f"at {ptr}: {rule}")
    for i, cell in enumerate(spec.get("cells") or []):
        yield f"/cells/{i}", cell
    for j, crossing in enumerate(spec.get("crossings") or []):
        for cell in crossing_cells(spec, crossing):
            yield f"/crossings/{j}", cell


def all_cells(spec: dict) -> list[dict]:
    return [cell for _, cell in cell_entries(spec)]


def with_expanded_cells(spec: dict) -> dict:
    """The spec with its crossings replaced by the cells they register (for diff and seal)."""
    if not spec.get("crossings"):
        return spec
    out = {k: v for k, v in spec.items() if k != "crossings"}
    out["cells"] = all_cells(spec)
    return out
