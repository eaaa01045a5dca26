"""The engine's configuration comes from the spec file, and only from it: plan_config and
freeze_config read the compiled study (ctx.config) by the spec's own names; checked here against
the spec read independently (plain PyYAML).  What the compile refuses is in
test_s3_compile_checks."""

from __future__ import annotations

import copy
import json

import pytest
from s3_study import CONFIG, MODULE, ROOT, STUDY_CTX

from prereg.engines.clusterpower import COMMANDS
from prereg.engines.clusterpower.calibration_input import parse_calibration
from prereg.engines.clusterpower.config import FreezeConfig, freeze_config, plan_config
from prereg.errors import UserError
from tests.conftest import safe_yaml

SPEC = safe_yaml((ROOT / "spec" / "studies" / "s3-verifier-freeze.yaml").read_text("utf-8"))
CONSTANTS = {c["id"]: c["value"] for c in SPEC["constants"]}
PLAN = plan_config(CONFIG)
FREEZE = freeze_config(CONFIG)


def _contract() -> dict:
    return next(c for c in SPEC["record_contracts"] if c["id"] == "calibration-record")


def test_the_plan_reads_the_spec_constants_and_contract() -> None:
    frozen, plan, fields = CONSTANTS["frozen"], CONSTANTS["power_plan"], _contract()["fields"]
    assert PLAN.frozen == frozen
    assert (PLAN.smallest_effect, PLAN.simulations, PLAN.seed, PLAN.block_size) == (
        frozen["smallest_effect"],
        frozen["simulations_per_rung"],
        frozen["seed"],
        frozen["block_size"],
    )
    assert (PLAN.target_numerator, PLAN.target_denominator) == (
        frozen["target_power"]["numerator"],
        frozen["target_power"]["denominator"],
    )
    assert PLAN.ladder == tuple(frozen["ladder"])
    assert (
        PLAN.schema,
        PLAN.min_calibration_repositories,
        PLAN.min_repositories_per_stratum,
        PLAN.min_eligible_repositories,
        PLAN.bound_level,
        PLAN.statuses,
    ) == (
        plan["schema"],
        plan["min_calibration_repositories"],
        plan["min_repositories_per_stratum"],
        plan["min_eligible_repositories"],
        plan["bound_two_sided_level"],
        plan["statuses"],
    )
    spec = PLAN.input
    assert spec.fields == {f["role"]: f["name"] for f in fields}
    assert spec.calibration_stage == fields[0]["allowed"][0]
    assert (spec.pass_label, spec.fail_label) == tuple(fields[3]["allowed"])
    assert (spec.confirmatory_stage, spec.error_cap) == (
        plan["confirmatory_stage"],
        plan["error_cap"],
    )


def test_the_freeze_reads_the_spec_constants_and_roles() -> None:
    fc, inp, rules = FREEZE, CONSTANTS["freeze_input"], CONSTANTS["freeze_rules"]
    assert fc.frozen == CONSTANTS["frozen"]
    assert (fc.schema_field, fc.input_schema, fc.contract) == (
        inp["schema_field"],
        inp["schema_id"],
        inp["contract"],
    )
    f = inp["fields"]
    assert (
        fc.f_target,
        fc.f_artifacts,
        fc.f_role,
        fc.f_path,
        fc.f_models,
        fc.f_model_id,
        fc.f_lineage,
        fc.f_finetune,
        list(fc.f_executes),
        list(fc.f_sandbox),
    ) == (
        f["target"],
        f["artifacts"],
        f["artifact_role"],
        f["artifact_path"],
        f["models"],
        f["model_id"],
        f["model_base_lineage"],
        f["model_benchmark_specific_finetune"],
        f["executes_untrusted_code"],
        f["sandbox_required"],
    )
    assert [(r.id, r.kind, r.required, list(r.extensions)) for r in fc.roles] == [
        (r["id"], r["kind"], r["required"], r["extensions"]) for r in SPEC["freeze_roles"]
    ]
    assert fc.plan_schema == CONSTANTS["power_plan"]["schema"]  # stated once, in power_plan
    assert (fc.manifest_schema, fc.formats, fc.plan_role, fc.calibration_role) == (
        rules["manifest_schema"],
        rules["formats"],
        rules["plan_role"],
        rules["calibration_role"],
    )
    assert list(fc.accepted_statuses) == rules["accepted_plan_statuses"]
    assert [
        [t.id, list(t.required_roles), t.min_distinct_base_lineages]
        + [t.refuse_benchmark_specific_finetune]
        for t in fc.targets.values()
    ] == [
        [t["id"], t["required_roles"], t["min_distinct_base_lineages"]]
        + [t["refuse_benchmark_specific_finetune"]]
        for t in rules["targets"]
    ]
    keys = rules["forbidden_keys"]
    assert (fc.forbidden, fc.lowercase, [list(p) for p in fc.replace]) == (
        set(keys["names"]),
        keys["lowercase"],
        keys["replace"],
    )
    assert (list(fc.false_claims), fc.sandbox_issue_id, fc.error_cap) == (
        rules["false_claims"],
        rules["sandbox_issue_id"],
        rules["error_cap"],
    )


def test_the_study_values_stated_in_the_preregistration() -> None:
    """A few facts of the S3 study, written here by hand from the study page."""
    assert PLAN.ladder == (50, 75, 100, 150, 200, 300, 500)
    assert PLAN.seed == 20261011
    assert PLAN.statuses["underpowered"] == "underpowered_full_universe"
    assert FREEZE.targets["X7"].min_distinct_base_lineages == 3
    assert FREEZE.targets["X7"].required_roles == ("prompt_bundle",)
    assert FREEZE.sandbox_issue_id == "#804"
    assert len(FREEZE.roles) == 10


def test_the_calibration_input_is_read_from_the_contract() -> None:
    """Field names, stage and labels are stated once, in the contract; by hand from the spec."""
    assert _contract()["role"] == "calibration"
    assert PLAN.input.fields == {
        "stage": "stage",
        "repository": "repository_id",
        "task": "task_id",
        "class": "class_label",
        "statistic": "delta_logscore",
    }
    assert PLAN.input.calibration_stage == "calibration"
    assert (PLAN.input.pass_label, PLAN.input.fail_label) == ("official-pass", "official-fail")
    for key in ("fields", "calibration_stage", "pass_label", "fail_label"):
        assert key not in CONSTANTS["power_plan"]


def _calibration_contract(cfg: dict) -> dict:
    return next(c for c in cfg["record_contracts"] if c.get("role") == "calibration")


def test_a_renamed_field_and_label_in_the_contract_is_what_the_reader_expects() -> None:
    cfg = copy.deepcopy(CONFIG)
    fields = {f["role"]: f for f in _calibration_contract(cfg)["fields"]}
    fields["repository"]["name"] = "repo"
    fields["class"]["allowed"] = ["passes", "official-fail"]
    plan = plan_config(cfg)
    rows = [
        {
            "stage": "calibration",
            "repo": f"r{i}",
            "task_id": f"t{i}{c}",
            "class_label": c,
            "delta_logscore": 0.1 * i,
        }
        for i in range(3)
        for c in ("passes", "official-fail")
    ]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    cal = parse_calibration(data, "c.jsonl", plan.input)
    assert cal.records_pass == 3 and cal.records_fail == 3
    # the study as registered refuses the renamed field and the unknown label
    with pytest.raises(UserError) as ei:
        parse_calibration(data, "c.jsonl", PLAN.input)
    text = "\n".join(ei.value.lines())
    assert "repo" in text and "repository_id" in text


def test_freeze_authorizes_only_plan_statuses_that_exist_and_never_infeasible() -> None:
    statuses = CONSTANTS["power_plan"]["statuses"]
    accepted = CONSTANTS["freeze_rules"]["accepted_plan_statuses"]
    assert set(accepted) <= set(statuses.values())
    assert statuses["infeasible"] not in accepted


def test_every_declared_command_has_a_handler() -> None:
    declared = {c["id"]: c["handler"] for c in MODULE.COMMANDS}
    assert declared == {
        "diagnose": "diagnose",  # the engine's standard command, not declared by the spec
        "power-plan": "power_plan",
        "assemble": "assemble",
        "freeze-manifest": "freeze_manifest",
        "validate": "validate",
    }
    assert set(declared.values()) <= set(COMMANDS)


def test_the_generated_literal_is_read_as_json_data() -> None:
    # the generated module holds tuples; what reaches a plan, a manifest or a JSON Schema
    # check is JSON data (lists), and reading changes nothing in the compiled config
    assert isinstance(STUDY_CTX.config["constants"]["frozen"]["ladder"], tuple)
    before = repr(STUDY_CTX.config)
    plan, fc = plan_config(STUDY_CTX.config), freeze_config(STUDY_CTX.config)
    assert isinstance(plan.frozen["ladder"], list) and plan.frozen == PLAN.frozen
    assert isinstance(fc.contract["required"], list) and fc.contract == FREEZE.contract
    assert isinstance(fc.frozen["ladder"], list)
    assert repr(STUDY_CTX.config) == before
    # and a typed configuration passes through
    assert plan_config(plan) is plan and freeze_config(fc) is fc
    assert isinstance(fc, FreezeConfig)
