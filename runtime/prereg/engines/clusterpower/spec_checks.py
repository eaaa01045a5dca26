"""Compile-time checks of a cluster-power-freeze spec (``Engine.checks``), run after the
constants matched the engine's configuration schema (constants.schema.json).

The roles constant ``freeze_rules`` names must be freeze roles of the spec (the plan and
calibration roles required metadata roles, each metadata extension with a format), every freeze
role must accept some file-name ending, the plan statuses a freeze accepts must be statuses
``power_plan`` names, the frozen ladder must rise and the target power must not exceed 1, and
the freeze input's contract must be a JSON Schema declaring the fields the freeze rules read
(and allowing only registered targets), and no forbidden key may be one the bound plan
or calibration statistics always hold.  The calibration input is the record contract
with role ``calibration``: a field for each role of
:data:`~prereg.engines.clusterpower.config.FIELD_ROLES` and no other, the ``stage`` field
allowing exactly one value (the calibration stage) and the ``class`` field exactly two (the pass
label, then the fail label).  The engine reads all of these at run time without checking them
again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prereg.compiler.predicate import plainly_valid_schema
from prereg.engines.base import Problem
from prereg.engines.checking import (
    DIAGNOSE_ARGUMENTS,
    Argument,
    SpecNames,
    command_problems,
    comparisons,
    units_unread,
)
from prereg.engines.clusterpower.config import FIELD_ROLES

#: The calibration fields whose allowed values the engine reads, and how many it needs.
_ALLOWED = {
    "stage": (1, "the calibration stage"),
    "class": (2, "the pass label, then the fail label"),
}


_TEXT = ("path", "string")

#: The arguments each handler reads (a command's spec must declare them as stated).
HANDLERS = {
    "power_plan": (
        Argument("calibration", _TEXT),
        Argument("--eligible-task-count", ("integer",)),
        Argument("--eligible-repository-count", ("integer",)),
        Argument("--eligible-pass-items", ("integer",)),
        Argument("--eligible-fail-items", ("integer",)),
        Argument("--out", _TEXT),
        Argument("--simulations", ("integer",), "optional"),
    ),
    "assemble": (
        Argument("input", _TEXT),
        Argument("--root", _TEXT, "declared"),
        Argument("--out", _TEXT),
        Argument("--leave-out", ("string",), "optional"),
    ),
    "freeze_manifest": (
        Argument("input", _TEXT),
        Argument("--root", _TEXT, "declared"),
        Argument("--out", _TEXT),
        Argument("--sign-key", _TEXT, "optional"),
    ),
    "validate": (
        Argument("manifest", _TEXT),
        Argument("--root", _TEXT, "declared"),
        Argument("--public-key", _TEXT, "optional"),
    ),
    "diagnose": (
        Argument("calibration", _TEXT),
        Argument("--eligible-task-count", ("integer",)),
        Argument("--eligible-repository-count", ("integer",)),
        Argument("--eligible-pass-items", ("integer",)),
        Argument("--eligible-fail-items", ("integer",)),
        *DIAGNOSE_ARGUMENTS,
    ),
}


def checks(spec: Mapping[str, Any]) -> list[Problem]:
    n = SpecNames(spec)
    k = n.constants

    fields = n.contract_fields("calibration", FIELD_ROLES) or {}
    for role, (count, what) in _ALLOWED.items():
        if role not in fields:
            continue
        allowed = fields[role].get("allowed")
        if (
            not isinstance(allowed, (list, tuple))
            or len(set(allowed)) != count
            or len(allowed) != count
        ):
            n.problems.append(
                (
                    n.field_pointer("calibration", role, *(["allowed"] if allowed else [])),
                    f"the calibration contract's field {fields[role].get('name')!r} must allow"
                    f" exactly {count} distinct value(s): {what}",
                )
            )

    frozen = k["frozen"]
    tp = frozen["target_power"]
    n.expect(
        tp["numerator"] <= tp["denominator"],
        "frozen",
        ["target_power"],
        "the target power must not exceed 1 (numerator <= denominator)",
    )
    ladder = frozen["ladder"]
    for j in range(1, len(ladder)):
        n.expect(
            ladder[j] > ladder[j - 1],
            "frozen",
            ["ladder", j],
            f"the ladder must rise strictly ({ladder[j - 1]} then {ladder[j]})",
        )

    statuses = k["power_plan"]["statuses"]
    n.expect(
        len(set(statuses.values())) == len(statuses),
        "power_plan",
        ["statuses"],
        "the status names must be distinct",
    )

    rules = k["freeze_rules"]
    formats = rules["formats"]
    for i, role in enumerate(spec.get("freeze_roles") or ()):
        if not role.get("extensions"):
            n.problems.append(
                (
                    f"/freeze_roles/{i}/extensions",
                    f"freeze role {role.get('id')!r} accepts no file-name ending, so no file could"
                    " be bound under it",
                )
            )
    for role_id, role in n.freeze_roles.items():
        if role.get("kind") != "metadata":
            continue
        for ext in role.get("extensions") or ():
            n.expect(
                ext in formats,
                "freeze_rules",
                ["formats"],
                f"gives no format for {ext!r}, an extension of metadata freeze role {role_id!r}",
            )
    for key in ("plan_role", "calibration_role"):
        name = rules[key]
        if n.freeze_role("freeze_rules", [key], name):
            role = n.freeze_roles[name]
            n.expect(
                role.get("kind") == "metadata" and role.get("required") is True,
                "freeze_rules",
                [key],
                f"names freeze role {name!r}, which must be a required metadata role",
            )
    plan_role = n.freeze_roles.get(rules["plan_role"])
    if plan_role is not None:
        n.expect(
            all(formats.get(e) == "json" for e in plan_role.get("extensions") or ()),
            "freeze_rules",
            ["plan_role"],
            f"names freeze role {rules['plan_role']!r}, whose files must all be single JSON"
            " documents (format json)",
        )
    for j, status in enumerate(rules["accepted_plan_statuses"]):
        n.expect(
            status in statuses.values(),
            "freeze_rules",
            ["accepted_plan_statuses", j],
            f"names plan status {status!r}, which constant power_plan does not"
            f" (statuses: {', '.join(statuses.values())})",
        )
    ids = [t["id"] for t in rules["targets"]]
    for j, target in enumerate(rules["targets"]):
        n.expect(
            ids.index(target["id"]) == j,
            "freeze_rules",
            ["targets", j, "id"],
            f"freeze target {target['id']!r} is defined twice",
        )
        for m, role in enumerate(target["required_roles"]):
            n.freeze_role("freeze_rules", ["targets", j, "required_roles", m], role)

    contract = k["freeze_input"]["contract"]
    if not plainly_valid_schema(contract):  # jsonschema decides (and words the problem)
        import jsonschema

        try:
            jsonschema.Draft202012Validator.check_schema(contract)
        except jsonschema.SchemaError as exc:
            n.report(
                "freeze_input",
                ["contract", *exc.absolute_path],
                f"not a valid JSON Schema: {exc.message}",
            )
    _forbidden_engine_keys(n, fields)
    _freeze_input_fields(n)
    _status_rule(n, statuses)
    n.problems.extend(command_problems(spec, "cluster-power-freeze", HANDLERS))
    return n.problems + units_unread(spec)


def _freeze_input_fields(n: SpecNames) -> None:
    """The names constant ``freeze_input`` gives the freeze rules are properties its contract
    declares where the rules read them (the schema field, the target, the artifacts and the
    models at the top, an artifact's role and path in an artifact, a model's keys in a model,
    the two execution claims along their paths), and every target the contract allows is a
    target of constant ``freeze_rules``: otherwise every freeze input would be refused.  Only
    an object schema that allows no other properties (``additionalProperties: false``) is
    held to its ``properties``."""
    k = n.constants
    inp = k["freeze_input"]
    contract = inp["contract"]
    f = inp["fields"]

    def closed(schema: Any) -> Mapping[str, Any] | None:
        """The properties of a schema that admits no others, else None (nothing to hold)."""
        if not isinstance(schema, Mapping) or schema.get("additionalProperties") is not False:
            return None
        props = schema.get("properties")
        return props if isinstance(props, Mapping) else {}

    def lacks(schema: Any, names, where: list, what: str) -> Any:
        """Follow ``names`` through ``schema``'s properties; report the first one missing."""
        for name in names:
            props = closed(schema)
            if props is None:
                return None
            if name not in props:
                n.report(
                    "freeze_input",
                    where,
                    f"names {name!r} as {what}, but the contract declares no such property"
                    f" there (it declares {', '.join(map(repr, props)) or 'none'}), so every"
                    " freeze input would be refused",
                )
                return None
            schema = props[name]
        return schema

    def path(value: Any) -> list[str]:
        return [value] if isinstance(value, str) else list(value)

    lacks(contract, [inp["schema_field"]], ["schema_field"], "the field holding the schema id")
    target = lacks(contract, [f["target"]], ["fields", "target"], "the freeze target")
    ids = [t["id"] for t in k["freeze_rules"]["targets"]]
    if isinstance(target, Mapping) and isinstance(target.get("enum"), list):
        for j, t in enumerate(target["enum"]):
            n.expect(
                t in ids,
                "freeze_input",
                ["contract", "properties", f["target"], "enum", j],
                f"allows freeze target {t!r}, which constant freeze_rules does not register"
                f" (targets: {', '.join(map(repr, ids))})",
            )
    for group, keys in (
        ("artifacts", ("artifact_role", "artifact_path")),
        ("models", ("model_id", "model_base_lineage", "model_benchmark_specific_finetune")),
    ):
        listed = lacks(contract, [f[group]], ["fields", group], f"the {group} list")
        item = listed.get("items") if isinstance(listed, Mapping) else None
        for key in keys:
            lacks(item, [f[key]], ["fields", key], f"the {key.replace('_', ' ')} of each item")
    for claim in ("executes_untrusted_code", "sandbox_required"):
        lacks(contract, path(f[claim]), ["fields", claim], f"the claim {claim}")


def _property_names(node: Any):
    """Every key a JSON Schema's ``properties`` name, at any depth."""
    if isinstance(node, Mapping):
        props = node.get("properties")
        if isinstance(props, Mapping):
            yield from props
        for v in node.values():
            yield from _property_names(v)
    elif isinstance(node, list):
        for v in node:
            yield from _property_names(v)


def _keys(value: Any):
    if isinstance(value, Mapping):
        for key, v in value.items():
            yield key
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def _forbidden_engine_keys(n: SpecNames, fields: Mapping[str, Mapping[str, Any]]) -> None:
    """A forbidden key may not be one the bound power plan or calibration statistics always
    hold (the plan's own keys, constant frozen's keys and the class labels, which the plan
    records; the calibration contract's field names): no freeze could ever hold."""
    from prereg.outputs import schema_for

    k = n.constants
    rules = k["freeze_rules"]
    held: dict[str, str] = {}
    for key in _property_names(schema_for("cluster-power-freeze", "power-plan")):
        held.setdefault(key, f"a key the power plan (role {rules['plan_role']}) holds")
    for key in _keys(k["frozen"]):
        held.setdefault(key, "a key of constant frozen, which every power plan records")
    for label in (fields.get("class") or {}).get("allowed") or ():
        held.setdefault(str(label), "a class label, which the power plan records per stratum")
    for f in fields.values():
        held.setdefault(
            str(f.get("name")),
            f"a field of the calibration contract, in every line of the role"
            f" {rules['calibration_role']} file",
        )
    forbidden = rules["forbidden_keys"]
    names = set(forbidden["names"])

    def normalise(key: str) -> str:
        if forbidden["lowercase"]:
            key = key.lower()
        for a, b in forbidden["replace"]:
            key = key.replace(a, b)
        return key

    for key, what in held.items():
        norm = normalise(key)
        if norm in names:
            n.report(
                "freeze_rules",
                ["forbidden_keys", "names", forbidden["names"].index(norm)],
                f"forbids key {norm!r}, but {key!r} is {what}, so every freeze would be refused",
            )


def _status_rule(n: SpecNames, statuses: Mapping[str, str]) -> None:
    """The hypothesis deciding the plan's status: verdicts named as the statuses (each once),
    and every comparison of an engine figure stating what the constants fix (the floors, the
    target power), so that the registered rule and the constants cannot disagree."""
    from fractions import Fraction

    from prereg.engines.clusterpower.figures import expected_comparison
    from prereg.rules import threshold

    k = n.constants
    found = n.decision(
        "power_plan", ["status_hypothesis"], k["power_plan"]["status_hypothesis"], verdicts=True
    )
    if found is None:
        return
    i, hyp = found
    names = [str(v.get("verdict")) for v in hyp["verdicts"]]
    if sorted(names) != sorted(statuses.values()):
        n.problems.append(
            (
                f"/hypotheses/{i}/verdicts",
                f"hypothesis {hyp['id']!r} decides the plan's status, so its verdicts must be"
                f" the status names of constant power_plan, each once"
                f" ({', '.join(statuses.values())}; found {', '.join(names)})",
            )
        )
    ops = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥"}
    for j, v in enumerate(hyp["verdicts"]):
        for ptr, target, c in comparisons(v.get("when"), f"/hypotheses/{i}/verdicts/{j}/when"):
            want = expected_comparison(target, k)
            if want is None:
                continue
            op, value = want
            if c.get("op") != op or threshold(c.get("value")) != value:
                shown = value.numerator if value.denominator == 1 else float(value)
                n.problems.append(
                    (
                        ptr,
                        f"compares figure {target!r} {ops.get(c.get('op'), c.get('op'))}"
                        f" {c.get('value')}, but the plan's constants fix {ops[op]} {shown}"
                        f" (exactly {Fraction(value)}): the rule must say what the engine's"
                        " floors and target power say",
                    )
                )
