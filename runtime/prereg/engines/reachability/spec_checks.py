"""Compile-time checks of a reachability-probe spec (``Engine.checks``), run after the
constants matched the engine's configuration schema (constants.schema.json).

Every split, factor, level, metric and row attribute a constant names must be declared by the
spec, and the constants must agree with one another where the engine relies on it (a layout's
rule is one of the ``rules``, the chain's classes are cue classes, ...).  Last, the engine's
own configuration check (:func:`.config.load_config`) runs on what the spec compiles to, so a
spec that compiles is one the engine accepts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from prereg.engines.base import Problem, constant_pointer
from prereg.engines.checking import SpecNames, units_unread

FACTOR_ROLES = ("pool", "hops", "outcome", "layout")


def checks(spec: Mapping[str, Any]) -> list[Problem]:
    n = SpecNames(spec)
    k = n.constants

    roles = k["factor-roles"]
    factor = {}
    for role in FACTOR_ROLES:
        if n.factor("factor-roles", [role], roles[role]):
            factor[role] = roles[role]

    split_roles = k["split-roles"]
    for sid in split_roles:
        n.split("split-roles", [sid], sid)
    for sid in n.splits:
        n.expect(
            sid in split_roles,
            "split-roles",
            [],
            f"gives split {sid!r} no role (the engine needs one for every split)",
        )

    listed = []
    for key in ("firstSplits", "permutedSplits"):
        for j, sid in enumerate(k["dispatch"][key]):
            n.split("dispatch", [key, j], sid)
            listed.append(sid)
    n.expect(
        sorted(listed) == sorted(n.splits),
        "dispatch",
        [],
        f"must list every split exactly once between firstSplits and permutedSplits"
        f" (splits: {', '.join(n.splits)})",
    )

    audit = k["audit"]
    n.split("audit", ["split"], audit["split"])
    try:
        re.compile(audit["entityPattern"])
    except re.error as exc:
        n.report("audit", ["entityPattern"], f"not a valid regular expression ({exc})")
    line_classes = [lc["name"] for lc in audit["lineClasses"]]
    for j, rule in enumerate(audit["lineClassRules"]):
        n.expect(
            rule["class"] in line_classes,
            "audit",
            ["lineClassRules", j, "class"],
            f"names line class {rule['class']!r}, which lineClasses does not list",
        )

    cue = {q["name"]: q["kind"] for q in k["cue-classes"]}
    for key, kind in (("linkClass", "pair"), ("relayClass", "state")):
        name = k["chain"][key]
        n.expect(
            cue.get(name) == kind,
            "chain",
            [key],
            f"must name a {kind} class of constant cue-classes, got {name!r}",
        )

    for j, o in enumerate(k["outcomes"]):
        n.level("outcomes", [j, "word"], factor.get("outcome"), o["word"])
        failure = o["failure"]
        if failure is not None and failure["lineClass"] is not None:
            n.expect(
                failure["lineClass"] in cue,
                "outcomes",
                [j, "failure", "lineClass"],
                f"names cue class {failure['lineClass']!r}, which constant cue-classes does not"
                " define",
            )
    rule_ids = [r["id"] for r in k["rules"]]
    for j, lo in enumerate(k["layouts"]):
        n.level("layouts", [j, "word"], factor.get("layout"), lo["word"])
        n.expect(
            lo["rule"] in rule_ids,
            "layouts",
            [j, "rule"],
            f"names rule {lo['rule']!r}, which constant rules does not define"
            f" (rules: {', '.join(rule_ids)})",
        )
        for m, ov in enumerate(lo["positionOverrides"]):
            n.level(
                "layouts",
                [j, "positionOverrides", m, "outcome"],
                factor.get("outcome"),
                ov["outcome"],
            )
    for j, item in enumerate(k["dev-review"]["perOutcome"]):
        n.level("dev-review", ["perOutcome", j, "outcome"], factor.get("outcome"), item["outcome"])
    _dev_review_rows(n, spec, k, factor)

    _scoring(n, k, factor)
    _gold_comparisons(n, spec, k)
    _scenarios(n, spec, k)
    _worst_case(n, spec, k)

    if not n.problems:
        n.problems.extend(_engine_check(spec))
    return n.problems + units_unread(spec)


def _dev_review_rows(
    n: SpecNames, spec: Mapping[str, Any], k: Mapping[str, Any], factor: Mapping[str, str]
) -> None:
    """dev-review-material draws each outcome's review items from the development rows: the
    development splits must register at least that many rows of the outcome."""
    from prereg.compiler.expand import all_cells

    outcome = factor.get("outcome")
    if outcome is None:
        return
    development = {sid for sid, role in k["split-roles"].items() if role == "development"}
    rows: dict[str, int] = {}
    for cell in all_cells(dict(spec)):
        if cell.get("split") in development:
            levels = {lv.get("factor"): str(lv.get("level")) for lv in cell.get("levels") or ()}
            if outcome in levels:
                rows[levels[outcome]] = rows.get(levels[outcome], 0) + int(cell.get("rows") or 0)
    for j, item in enumerate(k["dev-review"]["perOutcome"]):
        have = rows.get(str(item["outcome"]), 0)
        n.expect(
            item["items"] <= have,
            "dev-review",
            ["perOutcome", j, "items"],
            f"asks for {item['items']} review items of outcome {item['outcome']!r}, but the"
            f" development splits ({', '.join(sorted(development)) or 'none'}) register {have}"
            f" rows of it",
        )


def _gold_comparisons(n: SpecNames, spec: Mapping[str, Any], k: Mapping[str, Any]) -> None:
    """A derived field compared with the engine field ``gold`` (a row's gold label word, from
    constant labels) must be able to equal it: its values must include both label words."""
    words = [k["labels"]["yes"], k["labels"]["no"]]
    fields = {d.get("id"): (i, d) for i, d in enumerate(spec.get("derived_fields") or ())}
    for d in spec.get("derived_fields") or ():
        for cond in d.get("test") or ():
            pair = (cond.get("field"), cond.get("other"))
            if "gold" not in pair or cond.get("op") not in ("eq", "ne"):
                continue
            other = pair[1] if pair[0] == "gold" else pair[0]
            if other not in fields or not fields[other][1].get("cases"):
                continue
            i, source = fields[other]
            values = [c.get("value") for c in source["cases"]]
            missing = [w for w in words if w not in values]
            if missing:
                n.problems.append(
                    (
                        f"/derived_fields/{i}/cases",
                        f"derived field {other!r} is compared with gold (in {d.get('id')!r}), but"
                        f" it never takes the gold label word(s) {', '.join(map(repr, missing))}"
                        f" of constant labels (its values: {', '.join(map(repr, values))})",
                    )
                )


# Metric roles the engine reads: computed by prereg.decide from their compute blocks, or by
# the engine itself (the vocabulary has no binning and no rank statistic); see .scoring.
DECIDED_ROLES = ("coverage", "accuracy", "saidYes", "calibratedAccuracy", "meanConfidence")
ENGINE_ROLES = ("ece", "auroc")


def _metric_roles(n: SpecNames) -> None:
    roles = (*DECIDED_ROLES, *ENGINE_ROLES)
    found: dict[str, int] = {}
    for i, m in enumerate(n.spec.get("metrics") or ()):
        role = m.get("role")
        if role is None:
            continue
        if role not in roles:
            n.problems.append(
                (
                    f"/metrics/{i}/role",
                    f"unknown metric role {role!r} (the engine reads {', '.join(roles)})",
                )
            )
            continue
        found.setdefault(role, i)
        if role in DECIDED_ROLES and not m.get("compute"):
            n.problems.append(
                (f"/metrics/{i}", f"metric {m.get('id')!r} (role {role}) needs a compute block")
            )
        if role in ENGINE_ROLES and m.get("compute"):
            n.problems.append(
                (
                    f"/metrics/{i}/compute",
                    f"metric {m.get('id')!r} (role {role}) is computed by the engine; it takes no"
                    " compute block",
                )
            )
    missing = [r for r in roles if r not in found]
    if missing:
        n.problems.append(
            (
                "/metrics",
                f"no metric has role {', '.join(repr(r) for r in missing)} (the engine reads {', '.join(roles)})",
            )
        )


def _scored_request(n: SpecNames, k: dict[str, Any]) -> None:
    """The attempt policy scores one request of constant record, on the request-role field."""
    contract = n.contracts.get("observation") or {}
    field = next(
        (f.get("name") for f in contract.get("fields") or () if f.get("role") == "request"), None
    )
    policy = n.spec.get("attempts") or {}
    where = [
        (j, c)
        for j, c in enumerate(policy.get("where") or ())
        if c.get("field") == field and c.get("op") == "eq" and "value" in c
    ]
    if len(where) != 1:
        n.problems.append(
            (
                "/attempts",
                f"the attempt policy must score one request: where {field} eq <request id>",
            )
        )
        return
    j, cond = where[0]
    requests = [r["id"] for r in k["record"]["requests"]]
    if cond["value"] not in requests:
        n.problems.append(
            (
                f"/attempts/where/{j}/value",
                f"scores request {cond['value']!r}, which constant record does not define"
                f" (requests: {', '.join(requests)})",
            )
        )


def _scoring(n: SpecNames, k: dict[str, Any], factor: dict[str, str]) -> None:
    s = k["scoring"]
    _metric_roles(n)
    _scored_request(n, k)
    from prereg.stats.methods import methods

    intervals = methods("proportion-interval")
    n.expect(
        s["cellInterval"]["method"] in intervals,
        "scoring",
        ["cellInterval", "method"],
        f"names {s['cellInterval']['method']!r}, which is no proportion-interval method"
        f" (registered: {', '.join(intervals)})",
    )
    pos = s["position"]
    attribute = pos["attribute"]
    if n.expect(
        attribute in n.row_attributes,
        "scoring",
        ["position", "attribute"],
        f"names row attribute {attribute!r}, which the spec does not declare"
        f" (row attributes: {', '.join(n.row_attributes) or 'none'})",
    ):
        values = n.row_attributes[attribute]
        for key in ("none", "first", "interior", "last"):
            n.expect(
                pos[key] in values,
                "scoring",
                ["position", key],
                f"names {pos[key]!r}, which row attribute {attribute!r} does not have"
                f" (values: {', '.join(values)})",
            )
    auc = s["auroc"]
    n.selection("scoring", ["auroc", "where"], auc["where"])
    for j, f in enumerate(auc["groupBy"]):
        n.factor("scoring", ["auroc", "groupBy", j], f)
    if n.factor("scoring", ["auroc", "factor"], auc["factor"]):
        for key in ("positive", "negative"):
            for j, level in enumerate(auc[key]):
                n.level("scoring", ["auroc", key, j], auc["factor"], level)


# Where the engine's own configuration keys come from in the spec (see .config): a constant id,
# or a JSON pointer of a spec section.
_SOURCES = {
    "pools": "/pools",
    "cells": "/cells",
    "splits": "/splits",
    "seedPolicy": "/seed_policy",
    "budget": "/budget",
}
_KEY = re.compile(r"^config\.([A-Za-z]+)((?:\.[A-Za-z0-9_]+|\[[0-9]+\])*)")


def _engine_check(spec: Mapping[str, Any]) -> list[Problem]:
    """The engine's own configuration check on what the spec compiles to, each problem placed
    at the constant (or the spec section) it comes from."""
    from prereg.compiler.build import engine_config
    from prereg.compiler.expand import cell_entries
    from prereg.errors import UserError

    from .config import CONSTANT_KEYS, config_from_spec, load_config

    sources = {**_SOURCES, **CONSTANT_KEYS, "outcomes": "outcomes", "layouts": "layouts"}
    # the engine's cells in allocation order, each at the written cell or crossing registering it
    cells = list(cell_entries(dict(spec)))
    try:
        load_config(config_from_spec(engine_config(dict(spec))))
    except UserError as exc:
        out = []
        for text in exc.problems or [exc.message]:
            ptr, message = "/engine", text
            m = _KEY.match(text)
            if m and m.group(1) in sources:
                source = sources[m.group(1)]
                steps = re.findall(r"\.([A-Za-z0-9_]+)|\[([0-9]+)\]", m.group(2))
                path = [a or int(b) for a, b in steps]
                message = text[m.end() :].lstrip(": ") or text
                if m.group(1) == "cells" and path and isinstance(path[0], int):
                    if path[0] < len(cells):  # a crossing's cell: the crossing, naming the cell
                        ptr, cell = cells[path[0]]
                        message = f"cell {cell.get('id')!r}: {message}"
                    else:
                        ptr = "/cells"
                elif source.startswith("/"):  # a section: the item, when the path starts with one
                    ptr = source + (f"/{path[0]}" if path and isinstance(path[0], int) else "")
                else:
                    ptr = constant_pointer(spec, source, *path) or "/constants"
            out.append((ptr, f"{message} (the engine's configuration check)"))
        return out
    return []


def _scenarios(n: SpecNames, spec: Mapping[str, Any], k: Mapping[str, Any]) -> None:
    """The registered scenarios draw correctness (a rate of the accuracy-role metric), and each
    respondent gives P(yes) ranges to a registered scenario, ending with one for every row."""
    accuracy = next(
        (m.get("id") for m in spec.get("metrics") or [] if m.get("role") == "accuracy"), None
    )
    scenarios = {s.get("id"): s for s in spec.get("scenarios") or []}
    for i, s in enumerate(spec.get("scenarios") or []):
        if s.get("metric") != accuracy:
            n.problems.append(
                (
                    f"/scenarios/{i}",
                    f"scenario {s.get('id')!r}: the reachability-probe engine draws whether a row's"
                    f" raw answer is right, so a scenario names the metric with role accuracy"
                    f" (metric: {accuracy})",
                )
            )
    seen: set[str] = set()
    for j, resp in enumerate(k["respondents"]["confidence"]):
        sid = resp["scenario"]
        n.expect(
            sid in scenarios,
            "respondents",
            ["confidence", j, "scenario"],
            f"names scenario {sid!r}, which the spec does not register"
            f" (scenarios: {', '.join(map(str, scenarios)) or 'none'})",
        )
        n.expect(
            sid not in seen,
            "respondents",
            ["confidence", j, "scenario"],
            f"repeats scenario {sid!r}",
        )
        seen.add(sid)
        n.expect(
            not (scenarios.get(sid) or {}).get("effects"),
            "respondents",
            ["confidence", j, "scenario"],
            f"scenario {sid!r} is a family over effects (for diagnose): simulate draws fixed"
            " scenarios only",
        )
        ranges = resp["ranges"]
        for m, r in enumerate(ranges):
            n.selection("respondents", ["confidence", j, "ranges", m, "where"], r["where"])
            lo, hi = r["range"]
            n.expect(
                lo <= hi,
                "respondents",
                ["confidence", j, "ranges", m, "range"],
                "the confidence range must not be empty (low <= high)",
            )
        n.expect(
            not ranges[-1]["where"],
            "respondents",
            ["confidence", j, "ranges", len(ranges) - 1, "where"],
            "the last range of a respondent must match every row (where: {})",
        )


def _worst_case(n: SpecNames, spec: Mapping[str, Any], k: Mapping[str, Any]) -> None:
    """The registered worst case counts every registered row retried the registered number of
    times (the plan is decided on it: a change of rows restates it)."""
    from prereg.compiler.expand import all_cells

    hb = k.get("hand-off-budget")
    if not isinstance(hb, Mapping) or not isinstance(hb.get("worstCase"), Mapping):
        return
    retries = next(
        (b.get("value") for b in spec.get("budget") or [] if b.get("id") == "retries-per-request"),
        0,
    )
    rows = sum(int(c.get("rows") or 0) for c in all_cells(spec) if isinstance(c, Mapping))
    attempts = rows * (1 + int(retries or 0))
    calls = hb["worstCase"].get("calls")
    n.expect(
        calls == attempts,
        "hand-off-budget",
        ["worstCase", "calls"],
        f"is {calls}, but the {rows:,} registered rows × (1 + {retries} retries) make"
        f" {attempts:,} attempts: restate the worst case when the rows change",
    )
