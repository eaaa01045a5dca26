"""The engine configuration: read once from the compiled study, then used by attribute name.

Handlers receive ``ctx.config``, the configuration compiled from the study's spec (the
generated ``ENGINE_CONFIG``: ``constants`` keyed by the spec's constant ids, with the spec's
own keys, ``freeze_roles``, ``record_contracts``, ...).  This module is the one place that
reads it: :func:`plan_config` gives the power plan's :class:`PlanConfig`, :func:`freeze_config`
the freeze manifest's :class:`FreezeConfig`.  Each public function of :mod:`.plan` and
:mod:`.freeze` takes the typed object; the freeze's also take the compiled mapping.

Where each value is stated in the spec:

- constant ``frozen``: the frozen planning constants, kept whole (a plan records them, a
  freeze compares a bound plan's against them) and read for the simulation;
- constant ``power_plan``: the plan's schema id (also the only plan schema a freeze accepts),
  the confirmatory stage value, the feasibility floors, the bound level, the status names,
  the hypothesis whose registered verdicts decide the status (its rule tree from the
  configuration's ``decisions``) and the most problems listed per refused calibration file;
- the record contract with role ``calibration``: its fields' names by role
  (:data:`FIELD_ROLES`), the calibration stage (the ``stage`` field's one allowed value) and
  the pass and fail labels (the ``class`` field's two allowed values, in that order);
- constant ``freeze_input``: the freeze input's schema field and id, its contract (a JSON
  Schema) and the names of the fields the freeze rules read;
- constant ``freeze_rules``: the manifest's schema id, the metadata formats, the plan and
  calibration roles, the plan statuses that authorize a freeze, the targets, the forbidden
  keys, the false claims, the sandbox issue and the most problems listed per bound file;
- the ``freeze_roles`` section: each role's ``id``, ``kind``, ``required``, ``extensions``.

Nothing is checked again here: ``prereg compile`` refused every spec whose constants break the
engine's schema (``constants.schema.json``) or its checks (:mod:`.spec_checks`), and a study's
commands run only on the spec they were compiled from.  The exception is a cheap check of the
two frozen values a plan could otherwise be computed and recorded against without failing:
the planning method and the rising ladder.  Generated constants are Python literals (tuples for
lists); what reaches a plan, a manifest or a JSON Schema check is converted to JSON lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from prereg.errors import UserError

if TYPE_CHECKING:  # prereg.rules brings numpy: loaded when a decision is built, not by check
    from prereg.rules import Decision

#: The roles of the calibration input's fields (the record contract with role ``calibration``).
FIELD_ROLES = ("stage", "repository", "task", "class", "statistic")

#: The only planning method this engine implements (constant ``frozen``'s ``planning_method``).
PLANNING_METHOD = "cluster-t-jackknife"


def plain(value: Any) -> Any:
    """A deep copy with mappings as dicts and sequences (lists, tuples) as lists."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------
# the power plan


@dataclass(frozen=True)
class InputSpec:
    """What the calibration reader needs: the calibration contract's field names by role,
    stage and class labels, with constant ``power_plan``'s ``confirmatory_stage`` and
    ``error_cap``."""

    fields: dict[str, str]  # role -> JSON field name
    calibration_stage: str
    confirmatory_stage: str
    pass_label: str
    fail_label: str
    error_cap: int

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(self.fields[r] for r in FIELD_ROLES)


@dataclass(frozen=True)
class PlanConfig:
    """The power plan's configuration: ``frozen`` is constant ``frozen`` as JSON data, and
    ``smallest_effect``, ``target_numerator``/``target_denominator`` (``target_power``),
    ``simulations`` (``simulations_per_rung``), ``seed``, ``ladder`` and ``block_size`` are
    read from it; ``schema``, the three ``min_*`` floors, ``bound_level``
    (``bound_two_sided_level``), ``statuses`` and ``status_decision`` (``status_hypothesis``,
    decided by the shared evaluator) come from constant ``power_plan``; ``input``
    is the calibration reader's :class:`InputSpec`."""

    frozen: dict
    smallest_effect: float
    target_numerator: int
    target_denominator: int
    simulations: int
    seed: int
    ladder: tuple[int, ...]
    block_size: int
    schema: str
    input: InputSpec
    min_calibration_repositories: int
    min_repositories_per_stratum: int
    min_eligible_repositories: int
    bound_level: float
    statuses: dict[str, str]
    #: the registered decision of the plan's status (constant power_plan's status_hypothesis)
    status_decision: Decision


def _calibration_fields(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``{field role: field}`` of the record contract with role ``calibration``."""
    for contract in config.get("record_contracts") or ():
        if contract.get("role") == "calibration":
            return {f["role"]: f for f in contract["fields"] if f.get("role") in FIELD_ROLES}
    raise UserError(
        "engine configuration: no record contract with role 'calibration'; prereg compile"
        " refuses such a spec, so compile it (make generate)"
    )


def plan_config(config: Mapping[str, Any] | PlanConfig) -> PlanConfig:
    """The :class:`PlanConfig` of a compiled study configuration (``ctx.config``); a
    :class:`PlanConfig` is returned as it is."""
    if isinstance(config, PlanConfig):
        return config
    k = config["constants"]
    frozen, plan = plain(k["frozen"]), k["power_plan"]
    fields = _calibration_fields(config)
    (stage,) = fields["stage"]["allowed"]
    pass_label, fail_label = fields["class"]["allowed"]
    if frozen["planning_method"] != PLANNING_METHOD:
        raise UserError(
            f"engine configuration: constant 'frozen' has planning_method"
            f" {frozen['planning_method']!r}; this engine implements only {PLANNING_METHOD!r}"
        )
    ladder = tuple(frozen["ladder"])
    if any(b <= a for a, b in zip(ladder, ladder[1:], strict=False)):
        raise UserError("engine configuration: constant 'frozen' has a ladder that does not rise")
    return PlanConfig(
        frozen=frozen,
        smallest_effect=float(frozen["smallest_effect"]),
        target_numerator=frozen["target_power"]["numerator"],
        target_denominator=frozen["target_power"]["denominator"],
        simulations=frozen["simulations_per_rung"],
        seed=frozen["seed"],
        ladder=ladder,
        block_size=frozen["block_size"],
        schema=plan["schema"],
        input=InputSpec(
            fields={r: fields[r]["name"] for r in FIELD_ROLES},
            calibration_stage=stage,
            confirmatory_stage=plan["confirmatory_stage"],
            pass_label=pass_label,
            fail_label=fail_label,
            error_cap=plan["error_cap"],
        ),
        min_calibration_repositories=plan["min_calibration_repositories"],
        min_repositories_per_stratum=plan["min_repositories_per_stratum"],
        min_eligible_repositories=plan["min_eligible_repositories"],
        bound_level=float(plan["bound_two_sided_level"]),
        statuses=dict(plan["statuses"]),
        status_decision=_status_decision(config, plan["status_hypothesis"]),
    )


def _status_decision(config: Mapping[str, Any], hypothesis: str) -> Decision:
    from prereg.rules import decision_of

    try:
        return decision_of(config, hypothesis)
    except KeyError:
        raise UserError(
            f"engine configuration: hypothesis {hypothesis!r} (constant power_plan's"
            " status_hypothesis) is not among the compiled decisions; prereg compile refuses"
            " such a spec, so compile it (make generate)"
        ) from None


# --------------------------------------------------------------------------------------------
# the freeze manifest


@dataclass(frozen=True)
class Role:
    """A freeze role (the ``freeze_roles`` section)."""

    id: str
    kind: str  # "source" | "metadata"
    required: bool
    extensions: tuple[str, ...]


@dataclass(frozen=True)
class Target:
    """A freeze target (constant ``freeze_rules``'s ``targets``)."""

    id: str
    required_roles: tuple[str, ...]
    min_distinct_base_lineages: int
    refuse_benchmark_specific_finetune: bool


@dataclass(frozen=True, eq=False)
class FreezeConfig:
    """The freeze's configuration.  ``frozen``: constant ``frozen``.  From constant
    ``freeze_input``: ``schema_field``, ``input_schema`` (``schema_id``), ``contract`` and, from
    its ``fields``, ``f_target``, ``f_artifacts``, ``f_role`` (``artifact_role``), ``f_path``
    (``artifact_path``), ``f_models``, ``f_model_id``, ``f_lineage`` (``model_base_lineage``),
    ``f_finetune`` (``model_benchmark_specific_finetune``), ``f_executes``
    (``executes_untrusted_code``) and ``f_sandbox`` (``sandbox_required``), the last two paths
    from the input's top level.  From constant ``freeze_rules``: ``manifest_schema``,
    ``formats``, ``plan_role``, ``calibration_role``, ``accepted_statuses``
    (``accepted_plan_statuses``), ``targets`` by id, ``forbidden``/``lowercase``/``replace``
    (``forbidden_keys``), ``false_claims``, ``sandbox_issue_id``, ``error_cap``.  ``roles``:
    the ``freeze_roles`` section, in order.  ``plan_schema``: constant ``power_plan``'s
    ``schema``, the only plan a freeze accepts."""

    frozen: dict[str, Any]
    schema_field: str
    input_schema: str
    contract: dict[str, Any]
    f_target: str
    f_artifacts: str
    f_role: str
    f_path: str
    f_models: str
    f_model_id: str
    f_lineage: str
    f_finetune: str
    f_executes: tuple[str, ...]
    f_sandbox: tuple[str, ...]
    manifest_schema: str
    roles: tuple[Role, ...]
    formats: dict[str, str]
    plan_role: str
    calibration_role: str
    plan_schema: str
    accepted_statuses: tuple[str, ...]
    targets: dict[str, Target]
    forbidden: frozenset[str]
    lowercase: bool
    replace: tuple[tuple[str, str], ...]
    false_claims: tuple[str, ...]
    sandbox_issue_id: str
    error_cap: int

    @cached_property
    def role_by_id(self) -> dict[str, Role]:
        return {r.id: r for r in self.roles}

    @cached_property
    def engine_contract(self) -> dict[str, Any]:
        """The shape the rules rely on, whatever the spec's contract says."""

        def obj(required: dict[str, Any]) -> dict[str, Any]:
            return {"type": "object", "required": list(required), "properties": required}

        top: dict[str, Any] = obj(
            {
                self.f_target: {"type": "string"},
                self.f_artifacts: {
                    "type": "array",
                    "items": obj(
                        {
                            self.f_role: {"type": "string"},
                            self.f_path: {"type": "string", "minLength": 1},
                        }
                    ),
                },
                self.f_models: {
                    "type": "array",
                    "items": obj(
                        {
                            self.f_model_id: {"type": "string"},
                            self.f_lineage: {"type": "string"},
                            self.f_finetune: {"type": "boolean"},
                        }
                    ),
                },
            }
        )
        for path in (self.f_executes, self.f_sandbox):
            node = top
            for i, name in enumerate(path):
                if name not in node["properties"]:
                    node["required"].append(name)
                    last = i == len(path) - 1
                    node["properties"][name] = {"type": "boolean"} if last else obj({})
                node = node["properties"][name]
        return top

    def normalise_key(self, key: str) -> str:
        if self.lowercase:
            key = key.lower()
        for a, b in self.replace:
            key = key.replace(a, b)
        return key

    def claims(self) -> dict[str, bool]:
        return {name: False for name in self.false_claims}

    def sandbox_issue(self) -> dict[str, Any]:
        return {"id": self.sandbox_issue_id, "canonical": True, "resolved": False}


def freeze_config(config: Mapping[str, Any] | FreezeConfig) -> FreezeConfig:
    """The :class:`FreezeConfig` of a compiled study configuration (``ctx.config``); a
    :class:`FreezeConfig` is returned as it is."""
    if isinstance(config, FreezeConfig):
        return config
    k = config["constants"]
    inp, rules = k["freeze_input"], k["freeze_rules"]
    f = inp["fields"]
    forbidden = rules["forbidden_keys"]
    return FreezeConfig(
        frozen=plain(k["frozen"]),
        schema_field=inp["schema_field"],
        input_schema=inp["schema_id"],
        contract=plain(inp["contract"]),
        f_target=f["target"],
        f_artifacts=f["artifacts"],
        f_role=f["artifact_role"],
        f_path=f["artifact_path"],
        f_models=f["models"],
        f_model_id=f["model_id"],
        f_lineage=f["model_base_lineage"],
        f_finetune=f["model_benchmark_specific_finetune"],
        f_executes=tuple(f["executes_untrusted_code"]),
        f_sandbox=tuple(f["sandbox_required"]),
        manifest_schema=rules["manifest_schema"],
        roles=tuple(
            Role(r["id"], r["kind"], bool(r["required"]), tuple(r["extensions"]))
            for r in config.get("freeze_roles") or ()
        ),
        formats=dict(rules["formats"]),
        plan_role=rules["plan_role"],
        calibration_role=rules["calibration_role"],
        plan_schema=k["power_plan"]["schema"],
        accepted_statuses=tuple(rules["accepted_plan_statuses"]),
        targets={
            t["id"]: Target(
                t["id"],
                tuple(t["required_roles"]),
                t["min_distinct_base_lineages"],
                t["refuse_benchmark_specific_finetune"],
            )
            for t in rules["targets"]
        },
        forbidden=frozenset(forbidden["names"]),
        lowercase=forbidden["lowercase"],
        replace=tuple((a, b) for a, b in forbidden["replace"]),
        false_claims=tuple(rules["false_claims"]),
        sandbox_issue_id=rules["sandbox_issue_id"],
        error_cap=rules["error_cap"],
    )
