"""The engine configuration: read once from the compiled study, then used by attribute name.

Handlers receive ``ctx.config``, the configuration compiled from the study's spec (the
generated ``ENGINE_CONFIG``: ``constants`` keyed by the spec's constant ids, with the spec's
own keys, ``freeze_roles``, ``record_contracts``, ...).  This module is the one place that
reads it: :func:`plan_config` gives the power plan's :class:`PlanConfig`, :func:`freeze_config`
the freeze manifest's :class:`FreezeConfig` (the freeze's classes are defined in
:mod:`.config_freeze`, imported from here on first use, so that the power plan never builds
them).  Each public function of :mod:`.plan` and :mod:`.freeze` takes the typed object; the
freeze's also take the compiled mapping.

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
from typing import TYPE_CHECKING, Any

from prereg.errors import UserError

if TYPE_CHECKING:  # prereg.rules brings numpy: loaded when a decision is built, not by check
    from prereg.rules import Decision

    from .config_freeze import FreezeConfig, Role, Target, freeze_config  # noqa: F401

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
        " refuses such a spec, so compile it (prereg compile)"
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
            " such a spec, so compile it (prereg compile)"
        ) from None


# --------------------------------------------------------------------------------------------
# the freeze manifest: its configuration lives in .config_freeze, loaded on first use


_FREEZE_NAMES = frozenset({"FreezeConfig", "Role", "Target", "freeze_config"})


def __getattr__(name: str):
    if name in _FREEZE_NAMES:
        from . import config_freeze

        return getattr(config_freeze, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
