"""The s3-verifier-freeze study as the engine tests see it: compiled from the spec.

``SPEC_CONFIG`` is what a handler receives (``ctx.config`` of the compiled study, as plain
data); ``CONFIG`` is the engine's own shape made from it by ``config_from_spec``.  Tests that
change a fact edit ``CONFIG`` and hand :func:`spec_shaped` of it to the handlers.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from prereg.compiler.project import Project
from prereg.engines import StudyContext
from prereg.engines.clusterpower import config_from_spec
from prereg.engines.clusterpower.spec_config import plain
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
STUDY_ID = "s3-verifier-freeze"
MODULE, STUDY_CTX = study_context(Project(ROOT), STUDY_ID)
SPEC_CONFIG: dict[str, Any] = plain(STUDY_CTX.config)
CONFIG: dict[str, Any] = config_from_spec(SPEC_CONFIG)


def spec_shaped(engine_config: dict[str, Any]) -> dict[str, Any]:
    """The compiled-spec config that :func:`config_from_spec` maps onto ``engine_config``."""
    out = copy.deepcopy(SPEC_CONFIG)
    cfg = copy.deepcopy(engine_config)
    freeze = cfg["freeze"]
    plan_schema = freeze.pop("plan_schema")
    # the freeze's plan schema is the plan's own (stated once in the spec)
    assert plan_schema in (cfg["plan"]["schema"], CONFIG["freeze"]["plan_schema"])
    out["constants"].update(
        frozen=cfg["frozen"],
        power_plan=cfg["plan"],
        freeze_input=freeze.pop("input"),
        freeze_rules=None,
    )
    out["freeze_roles"] = freeze.pop("roles")
    out["constants"]["freeze_rules"] = freeze
    # the calibration input's names, stage and labels are the calibration contract's
    plan = out["constants"]["power_plan"]
    names = plan.pop("fields")
    stage = plan.pop("calibration_stage")
    labels = [plan.pop("pass_label"), plan.pop("fail_label")]
    (contract,) = (c for c in out["record_contracts"] if c.get("role") == "calibration")
    for field in contract["fields"]:
        field["name"] = names[field["role"]]
        if field["role"] == "stage":
            field["allowed"] = [stage]
        if field["role"] == "class":
            field["allowed"] = labels
    return out


def context(config: dict[str, Any] | None, spec_digest: str, version: str) -> StudyContext:
    """A context for the handlers with an engine-shaped config (the study's when None)."""
    return StudyContext(STUDY_ID, spec_digest, version, spec_shaped(config or CONFIG))
