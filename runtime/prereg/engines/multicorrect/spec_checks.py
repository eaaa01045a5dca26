"""Compile-time checks of a multicorrect-scoring spec (``Engine.checks``), run after the
constants matched the engine's configuration schema (constants.schema.json).

Constant ``threshold-fit`` must name two different splits the spec declares; the threshold
grid must step from ``first`` to ``last`` within its denominator; the diagnostic's sizes must
agree with one another and with the candidate counts the choice-list contract states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prereg.engines.base import Problem
from prereg.engines.checking import SpecNames


def checks(spec: Mapping[str, Any]) -> list[Problem]:
    n = SpecNames(spec)
    k = n.constants

    fit = k["threshold-fit"]
    for role in ("fit", "evaluate"):
        n.split("threshold-fit", [role], fit[role])
    n.expect(
        fit["fit"] != fit["evaluate"],
        "threshold-fit",
        ["evaluate"],
        f"fits and evaluates on the same split {fit['fit']!r}; they must differ",
    )

    g = k["threshold-grid"]
    n.expect(
        g["first"] <= g["last"] <= g["denominator"],
        "threshold-grid",
        [],
        f"needs first <= last <= denominator (got {g['first']}, {g['last']}, {g['denominator']})",
    )
    n.expect(
        (g["last"] - g["first"]) % g["step"] == 0,
        "threshold-grid",
        ["step"],
        f"last - first ({g['last'] - g['first']}) must be a multiple of step {g['step']}",
    )

    d = k["diagnostic"]
    lo, hi = d["candidates"]["min"], d["candidates"]["max"]
    n.expect(lo <= hi, "diagnostic", ["candidates"], f"min {lo} is above max {hi}")
    weights = d["correct_count_weights"]
    n.expect(sum(weights) > 0, "diagnostic", ["correct_count_weights"], "the weights sum to 0")
    n.expect(
        len(weights) <= hi + 1,
        "diagnostic",
        ["correct_count_weights"],
        f"{len(weights)} correct-set sizes are more than {hi} candidates allow",
    )
    five = d["five_copy"]
    for key in ("even", "uneven"):
        n.expect(
            len(five[key]) == len(five["candidates"]),
            "diagnostic",
            ["five_copy", key],
            f"needs one probability per candidate ({len(five['candidates'])})",
        )

    lists = n.contracts.get("lists")
    candidates = next(
        (f for f in (lists or {}).get("fields") or () if f.get("role") == "candidates"), None
    )
    if candidates is not None and "min_items" in candidates and "max_items" in candidates:
        cmin, cmax = candidates["min_items"], candidates["max_items"]
        n.expect(
            cmin <= lo and hi <= cmax,
            "diagnostic",
            ["candidates"],
            f"must lie within the {cmin}..{cmax} candidates the lists contract's field"
            f" {candidates.get('name')!r} allows",
        )
        n.expect(
            cmin <= len(five["candidates"]) <= cmax,
            "diagnostic",
            ["five_copy", "candidates"],
            f"{len(five['candidates'])} candidates are outside the {cmin}..{cmax} the lists"
            " contract allows",
        )
    return n.problems
