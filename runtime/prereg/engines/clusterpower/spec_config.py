"""From the compiled spec to this engine's configuration.

A study's generated package hands every handler ``ctx.config``: the generic shape compiled from
the spec (``prereg.compiler.build.spec_config``: ``study_id``, ``version``, ``constants``
keyed by id, ``freeze_roles`` and the sections other engines use).  :func:`config_from_spec`
maps it onto the shape :mod:`.plan` and :mod:`.freeze` read (``frozen``, ``plan``, ``freeze``;
see their docstrings for every key).  Mechanism only: every value comes from the spec.

Where the values come from
--------------------------
``constants.frozen``
    ``config["frozen"]``: the frozen planning constants (the plan records them, a freeze
    compares a bound plan's against them).
``constants.power_plan``
    ``config["plan"]``: the confirmatory stage value, the plan schema id, the feasibility
    floors, the bound level, the status names, the error cap.
``record_contracts``
    The calibration input is the contract with ``role: calibration``.  Its fields' roles
    ``stage``, ``repository``, ``task``, ``class``, ``statistic`` give ``config["plan"]
    ["fields"]`` (role -> field name); the ``stage`` field's one allowed value is
    ``calibration_stage``; the ``class`` field's two allowed values are, in this order,
    ``pass_label`` and ``fail_label``.
``constants.freeze_input``
    ``config["freeze"]["input"]``: the freeze input's schema field and id, its JSON Schema
    contract and the field names the rules read.
``constants.freeze_rules``
    The rest of ``config["freeze"]``: ``manifest_schema``, ``formats``, ``plan_role``,
    ``calibration_role``, ``accepted_plan_statuses``, ``targets``, ``forbidden_keys``,
    ``false_claims``, ``sandbox_issue_id``, ``error_cap``.
``freeze_roles``
    ``config["freeze"]["roles"]`` (``id``, ``kind``, ``required``, ``extensions``).
``constants.power_plan.schema``
    Also ``config["freeze"]["plan_schema"]``: a freeze accepts only the plans this study's
    plan command writes, so the id is stated once.

Generated constants are Python literals (tuples for lists); the result is plain JSON data
(lists and dicts), a fresh copy the caller may keep or change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prereg.engines.clusterpower.calibration_input import FIELD_ROLES
from prereg.engines.contract_roles import contract_for, fields_by_role
from prereg.errors import UserError

#: The spec constants this engine reads, and the engine config key each one fills.
CONSTANTS = {
    "frozen": "frozen",
    "power_plan": "plan",
    "freeze_input": "freeze.input",
    "freeze_rules": "freeze",
}

#: What the calibration contract states, and constant 'power_plan' must not repeat.
FROM_CONTRACT = ("fields", "calibration_stage", "pass_label", "fail_label")

_ENGINE = "cluster-power-freeze"


def plain(value: Any) -> Any:
    """A deep copy with mappings as dicts and sequences (lists, tuples) as lists."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _constant(constants: Mapping[str, Any], cid: str, want_mapping: bool = True) -> Any:
    if cid not in constants:
        raise UserError(
            f"engine configuration: the spec declares no constant {cid!r} "
            f"(the {_ENGINE} engine reads constants {', '.join(CONSTANTS)})"
        )
    value = constants[cid]
    if want_mapping and not isinstance(value, Mapping):
        raise UserError(f"engine configuration: constant {cid!r} must be a mapping")
    return plain(value)


def config_from_spec(config: Mapping[str, Any]) -> dict[str, Any]:
    """Map the generic compiled config (``ctx.config``) onto this engine's config shape."""
    if not isinstance(config, Mapping) or not isinstance(config.get("constants"), Mapping):
        raise UserError("engine configuration: expected the compiled spec config with constants")
    constants = config["constants"]
    frozen = _constant(constants, "frozen")
    plan = _constant(constants, "power_plan")
    freeze_input = _constant(constants, "freeze_input")
    freeze = _constant(constants, "freeze_rules")
    for key in FROM_CONTRACT:
        if key in plan:
            raise UserError(
                f"engine configuration: constant 'power_plan' must not set {key!r} (it comes"
                " from the record contract with role 'calibration')"
            )
    plan.update(_calibration_input(config))
    for reserved in ("input", "roles", "plan_schema"):
        if reserved in freeze:
            raise UserError(
                f"engine configuration: constant 'freeze_rules' must not set {reserved!r} "
                "(it comes from constant 'freeze_input', the freeze_roles section and "
                "constant 'power_plan' respectively)"
            )
    roles = plain(config.get("freeze_roles") or [])
    freeze.update(
        input=freeze_input,
        roles=[
            {k: r[k] for k in ("id", "kind", "required", "extensions") if k in r} for r in roles
        ],
        plan_schema=plan.get("schema"),
    )
    return {"frozen": frozen, "plan": plan, "freeze": freeze}


def _allowed(field: Mapping[str, Any], count: int, what: str) -> list[str]:
    allowed = field.get("allowed")
    if not isinstance(allowed, (list, tuple)) or len(allowed) != count:
        raise UserError(
            f"engine configuration: the calibration contract's field {field['name']!r} must"
            f" allow exactly {count} value(s): {what}"
        )
    return list(allowed)


def _calibration_input(config: Mapping[str, Any]) -> dict[str, Any]:
    """The plan keys the calibration record contract states (see the module docstring)."""
    fields = fields_by_role(contract_for(config, "calibration", _ENGINE), FIELD_ROLES, _ENGINE)
    (stage,) = _allowed(fields["stage"], 1, "the calibration stage")
    pass_label, fail_label = _allowed(fields["class"], 2, "the pass label, then the fail label")
    return {
        "fields": {role: f["name"] for role, f in fields.items()},
        "calibration_stage": stage,
        "pass_label": pass_label,
        "fail_label": fail_label,
    }
