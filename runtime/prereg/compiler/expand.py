"""Cells by crossing, expanded at compile time.

A crossing registers one cell per combination of its factors' levels (the first factor varies
slowest, levels in their registered order), each with the same split and row count. The
expanded cells follow the written ones, crossing by crossing, and are what every later stage
sees: the semantic checks, the engine configuration, PREREG.md, ``prereg diff`` and seals
(so a reviewer still sees a change per cell). An expanded cell points at its crossing in the
spec, which is where its problems are reported.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def _factor_levels(spec: dict) -> dict[str, list[dict]]:
    return {f["id"]: list(f.get("levels") or []) for f in spec.get("factors") or []}


def crossing_cells(spec: dict, crossing: dict) -> list[dict]:
    """The cells one crossing registers (unknown factors or splits give no cells; the semantic
    checks report them)."""
    levels = _factor_levels(spec)
    codes = {s["id"]: s.get("code") or s["id"] for s in spec.get("splits") or []}
    factors = list(crossing.get("factors") or [])
    if any(f not in levels for f in factors) or crossing.get("split") not in codes:
        return []
    fixed = [(str(r["factor"]), str(r["level"])) for r in crossing.get("fixed") or []]
    out = []
    for combo in itertools.product(*(levels[f] for f in factors)):
        names = {"split": str(codes[crossing["split"]])}
        refs = []
        for factor, level in zip(factors, combo, strict=True):
            names[factor] = str(level.get("code") or level["id"])
            refs.append({"factor": factor, "level": str(level["id"])})
        for factor, level in fixed:
            lv = next((x for x in levels.get(factor, []) if str(x["id"]) == level), None)
            names.setdefault(factor, str((lv or {}).get("code") or level))
            refs.append({"factor": factor, "level": level})
        cid = PLACEHOLDER.sub(lambda m, n=names: n.get(m.group(1), m.group(0)), crossing["id"])
        out.append(
            {"id": cid, "split": crossing["split"], "rows": crossing["rows"], "levels": refs}
        )
    return out


def cell_entries(spec: dict) -> Iterator[tuple[str, dict]]:
    """(pointer, cell) for every registered cell: the written ones, then each crossing's."""
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
