"""Compile-time checks of a multicorrect-scoring spec (``Engine.checks``), run after the
constants matched the engine's configuration schema (constants.schema.json).

Constant ``threshold-fit`` must name two different splits the spec declares; the threshold
grid must step from ``first`` to ``last`` within its denominator; the diagnostic's sizes must
agree with one another and with the candidate counts the choice-list contract states, and its
text formats may use only their placeholders (the request id format must give
every synthetic list of both splits its own id), and contract ``five_copy_gap``'s copies must be
at least ``multi_correct_min``, so that the list has a gap.  The inputs are the record contracts with roles
``lists``, ``labels``, ``predictions`` and (optional) ``binary``, each with a field for every
role of :data:`~prereg.engines.multicorrect.config.FIELD_ROLES` and no other, each declared
with the type the engine reads it as (``FIELD_TYPES``); the ``candidates``
field states the candidate count per list (``min_items`` and ``max_items``); the labels'
``split`` field, when it states ``allowed`` values, allows exactly the two splits of
``threshold-fit``.  The hypothesis constant ``diagnostic``'s ``hypothesis`` names decides the
diagnostic's pass: it must register a rule and not be reported only.  Each command declares the arguments its handler reads (:data:`HANDLERS`).  The engine reads
all of these at run time without checking them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prereg.engines.base import Problem
from prereg.engines.checking import (
    DIAGNOSE_ARGUMENTS,
    Argument,
    SpecNames,
    command_problems,
    units_unread,
)
from prereg.engines.multicorrect.config import (
    FIELD_ROLES,
    FIELD_TYPES,
    OPTIONAL_INPUTS,
    TEXT_PLACEHOLDERS,
)

_TEXT = ("path", "string")

#: The arguments each handler reads (a command's spec must declare them as stated).
HANDLERS = {
    "score": (
        Argument("--lists", _TEXT),
        Argument("--labels", _TEXT),
        Argument("--predictions", _TEXT),
        Argument("--binary-outputs", _TEXT, "optional"),
        Argument("--rounding-decimals", ("integer",), "optional"),
        Argument("--out", _TEXT),
    ),
    "diagnostic": (
        Argument("--seeds", ("integer_list",), "optional"),
        Argument("--out", _TEXT, "optional"),
    ),
    "diagnose": DIAGNOSE_ARGUMENTS,
}


def _formats(text: str, placeholders: tuple[str, ...]) -> bool:
    """``text`` is a format string that formats with integer values of ``placeholders`` only,
    each field a plain name (no ``{p.attr}``, ``{p[0]}``, conversion or nested field)."""
    import string

    try:
        for _, name, spec, conversion in string.Formatter().parse(text):
            if name is None:
                continue
            if name not in placeholders or conversion or "{" in (spec or ""):
                return False
        text.format(**{p: 0 for p in placeholders})
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):
        return False
    return True


def _check_type(n: SpecNames, kind: str, role: str, f: Mapping[str, Any]) -> None:
    """The field of ``role`` declares the type the engine reads it as (:data:`FIELD_TYPES`)."""
    typ, items, nullable = FIELD_TYPES[role]
    want = f"{typ} of {items}" if items else typ
    got = f"{f.get('type')} of {f.get('items')}" if f.get("type") == "array" else f.get("type")
    name = f.get("name")
    if f.get("type") != typ or (items is not None and f.get("items") != items):
        where = "type" if f.get("type") != typ else "items"
        n.problems.append(
            (
                n.field_pointer(kind, role, where),
                f"field {name!r} (role {role}) is read as {want}, so it must be declared so"
                f" (declared: {got})",
            )
        )
    if bool(f.get("nullable")) != nullable:
        n.problems.append(
            (
                n.field_pointer(kind, role, "nullable"),
                f"field {name!r} (role {role}) "
                + (
                    "is null for a refusal, so it must be nullable: true"
                    if nullable
                    else "is never null for the engine, so it may not be nullable"
                ),
            )
        )


def checks(spec: Mapping[str, Any]) -> list[Problem]:
    n = SpecNames(spec)
    k = n.constants

    n.decision("diagnostic", ["hypothesis"], k["diagnostic"]["hypothesis"], verdicts=False)

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

    for key, allowed in TEXT_PLACEHOLDERS.items():
        n.expect(
            _formats(d["text"][key], allowed),
            "diagnostic",
            ["text", key],
            "is not a format string whose placeholders are among"
            f" {', '.join('{' + a + '}' for a in allowed)}",
        )

    if _formats(d["text"]["request_id"], TEXT_PLACEHOLDERS["request_id"]):
        ids = {
            d["text"]["request_id"].format(seed=0, split=split, index=i)
            for split in (fit["fit"], fit["evaluate"])
            for i in range(3)
        }
        n.expect(
            len(ids) == 6,
            "diagnostic",
            ["text", "request_id"],
            "must give every synthetic list of both splits its own request id (use {split} and"
            " {index})",
        )
    if "five_copy_gap" in d["contracts"]:
        multi = k["metric-conventions"]["multi_correct_min"]
        n.expect(
            len(five["candidates"]) >= multi,
            "diagnostic",
            ["five_copy", "candidates"],
            f"{len(five['candidates'])} copies of the correct option are fewer than the"
            f" {multi} correct options from which constant metric-conventions computes the gap"
            " (multi_correct_min), so contract five_copy_gap would have no gap to compare",
        )

    inputs = {
        kind: n.contract_fields(kind, roles)
        for kind, roles in FIELD_ROLES.items()
        if kind not in OPTIONAL_INPUTS or kind in n.contracts
    }
    for kind, fields in inputs.items():
        for role, f in (fields or {}).items():
            _check_type(n, kind, role, f)
    candidates = (inputs["lists"] or {}).get("candidates")
    if candidates is not None:
        for bound in ("min_items", "max_items"):
            if bound not in candidates:
                n.problems.append(
                    (
                        n.field_pointer("lists", "candidates"),
                        f"the candidates field {candidates.get('name')!r} must state {bound}"
                        " (the candidate count per list)",
                    )
                )
    if candidates is not None and "min_items" in candidates and "max_items" in candidates:
        cmin, cmax = candidates["min_items"], candidates["max_items"]
        if not 1 <= cmin <= cmax:
            n.problems.append(
                (
                    n.field_pointer("lists", "candidates"),
                    f"the candidates field {candidates.get('name')!r} needs"
                    f" 1 <= min_items <= max_items (got {cmin}, {cmax})",
                )
            )
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
    split = (inputs["labels"] or {}).get("split")
    if split is not None and split.get("allowed") is not None:
        allowed = [str(a) for a in split["allowed"]]
        if sorted(allowed) != sorted((fit["fit"], fit["evaluate"])):
            n.problems.append(
                (
                    n.field_pointer("labels", "split", "allowed"),
                    f"allows {', '.join(allowed)}, but constant threshold-fit fits on"
                    f" {fit['fit']!r} and evaluates {fit['evaluate']!r}; a label's split is one"
                    " of those two (or state no allowed values)",
                )
            )
    n.problems.extend(command_problems(spec, "multicorrect-scoring", HANDLERS))
    return n.problems + units_unread(spec)
