"""The freeze manifest's configuration (:class:`FreezeConfig`, read by :func:`freeze_config`).

Part of :mod:`.config` (see there for where each value is stated in the spec), kept in a module
of its own so that the power plan, which reads only :func:`.config.plan_config`, does not build
these classes at start-up; :mod:`.config` hands them out on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .config import plain


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
