"""config_from_spec: the compiled spec config mapped onto the engine's shape, checked against
the spec file read independently (plain PyYAML), and its refusals."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from s3_study import CONFIG, MODULE, ROOT, SPEC_CONFIG, STUDY_CTX, spec_shaped

from prereg.engines.clusterpower import COMMANDS, config_from_spec
from prereg.engines.clusterpower.calibration_input import parse_calibration
from prereg.engines.clusterpower.freeze import FreezeConfig
from prereg.engines.clusterpower.plan import load_config
from prereg.errors import UserError

SPEC = yaml.safe_load((ROOT / "spec" / "studies" / "s3-verifier-freeze.yaml").read_text("utf-8"))
CONSTANTS = {c["id"]: c["value"] for c in SPEC["constants"]}


def _contract() -> dict:
    return next(c for c in SPEC["record_contracts"] if c["id"] == "calibration-record")


def test_engine_sections_are_the_spec_constants_and_contract() -> None:
    assert CONFIG["frozen"] == CONSTANTS["frozen"]
    fields = _contract()["fields"]
    assert CONFIG["plan"] == {
        **CONSTANTS["power_plan"],
        "fields": {f["role"]: f["name"] for f in fields},
        "calibration_stage": fields[0]["allowed"][0],
        "pass_label": fields[3]["allowed"][0],
        "fail_label": fields[3]["allowed"][1],
    }
    fz = dict(CONFIG["freeze"])
    assert fz.pop("input") == CONSTANTS["freeze_input"]
    assert fz.pop("plan_schema") == CONSTANTS["power_plan"]["schema"]
    assert fz.pop("roles") == [
        {k: r[k] for k in ("id", "kind", "required", "extensions")} for r in SPEC["freeze_roles"]
    ]
    assert fz == CONSTANTS["freeze_rules"]


def test_the_study_values_stated_in_the_preregistration() -> None:
    """A few facts of the S3 study, written here by hand from the study page."""
    assert CONFIG["frozen"]["ladder"] == [50, 75, 100, 150, 200, 300, 500]
    assert CONFIG["frozen"]["seed"] == 20261011
    assert CONFIG["plan"]["statuses"]["underpowered"] == "underpowered_full_universe"
    targets = {t["id"]: t for t in CONFIG["freeze"]["targets"]}
    assert targets["X7"]["min_distinct_base_lineages"] == 3
    assert targets["X7"]["required_roles"] == ["prompt_bundle"]
    assert CONFIG["freeze"]["sandbox_issue_id"] == "#804"
    assert len(CONFIG["freeze"]["roles"]) == 10


def test_the_calibration_input_is_read_from_the_contract() -> None:
    """Field names, stage and labels are stated once, in the contract; by hand from the spec."""
    assert _contract()["role"] == "calibration"
    assert CONFIG["plan"]["fields"] == {
        "stage": "stage",
        "repository": "repository_id",
        "task": "task_id",
        "class": "class_label",
        "statistic": "delta_logscore",
    }
    assert CONFIG["plan"]["calibration_stage"] == "calibration"
    assert (CONFIG["plan"]["pass_label"], CONFIG["plan"]["fail_label"]) == (
        "official-pass",
        "official-fail",
    )
    for key in ("fields", "calibration_stage", "pass_label", "fail_label"):
        assert key not in CONSTANTS["power_plan"]


def _calibration_contract(cfg: dict) -> dict:
    return next(c for c in cfg["record_contracts"] if c.get("role") == "calibration")


def test_a_renamed_field_and_label_in_the_contract_is_what_the_reader_expects() -> None:
    cfg = copy.deepcopy(SPEC_CONFIG)
    fields = {f["role"]: f for f in _calibration_contract(cfg)["fields"]}
    fields["repository"]["name"] = "repo"
    fields["class"]["allowed"] = ["passes", "official-fail"]
    plan = load_config(config_from_spec(cfg))
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
        parse_calibration(data, "c.jsonl", load_config(CONFIG).input)
    text = "\n".join(ei.value.lines())
    assert "repo" in text and "repository_id" in text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.pop("role"), "no record contract with role 'calibration'"),
        (lambda c: c["fields"][2].pop("role"), "no field with role 'task'"),
        (lambda c: c["fields"][0].update(allowed=["calibration", "x"]), "exactly 1 value"),
        (lambda c: c["fields"][3].pop("allowed"), "exactly 2 value"),
    ],
)
def test_a_contract_without_what_the_engine_reads_is_refused(edit, message) -> None:
    cfg = copy.deepcopy(SPEC_CONFIG)
    edit(_calibration_contract(cfg))
    with pytest.raises(UserError, match=message):
        config_from_spec(cfg)


def test_the_plan_constant_may_not_restate_the_contract() -> None:
    cfg = copy.deepcopy(SPEC_CONFIG)
    cfg["constants"]["power_plan"]["pass_label"] = "official-pass"
    with pytest.raises(UserError, match="must not set 'pass_label'"):
        config_from_spec(cfg)


def test_freeze_authorizes_only_plan_statuses_that_exist_and_never_infeasible() -> None:
    statuses = CONSTANTS["power_plan"]["statuses"]
    accepted = CONSTANTS["freeze_rules"]["accepted_plan_statuses"]
    assert set(accepted) <= set(statuses.values())
    assert statuses["infeasible"] not in accepted


def test_every_declared_command_has_a_handler() -> None:
    declared = {c["id"]: c["handler"] for c in MODULE.COMMANDS}
    assert declared == {
        "power-plan": "power_plan",
        "assemble": "assemble",
        "freeze-manifest": "freeze_manifest",
        "validate": "validate",
    }
    assert set(declared.values()) <= set(COMMANDS)


def test_result_is_plain_data_and_a_fresh_copy() -> None:
    # the generated module holds tuples; the engine gets lists (its checks and JSON need them)
    assert isinstance(STUDY_CTX.config["constants"]["frozen"]["ladder"], tuple)
    a = config_from_spec(STUDY_CTX.config)
    assert a == CONFIG and isinstance(a["frozen"]["ladder"], list)
    a["frozen"]["ladder"].append(1000)
    a["freeze"]["roles"][0]["id"] = "changed"
    b = config_from_spec(STUDY_CTX.config)
    assert b == CONFIG
    load_config(b)  # the plan engine accepts it
    FreezeConfig(b)  # and so does the freeze


def test_test_helper_round_trips() -> None:
    assert spec_shaped(CONFIG) == SPEC_CONFIG
    assert config_from_spec(spec_shaped(CONFIG)) == CONFIG


@pytest.mark.parametrize("missing", ["frozen", "power_plan", "freeze_input", "freeze_rules"])
def test_a_missing_constant_is_named(missing: str) -> None:
    cfg = copy.deepcopy(SPEC_CONFIG)
    del cfg["constants"][missing]
    with pytest.raises(UserError) as ei:
        config_from_spec(cfg)
    assert f"declares no constant {missing!r}" in ei.value.message


def test_a_constant_that_is_not_a_mapping() -> None:
    cfg = copy.deepcopy(SPEC_CONFIG)
    cfg["constants"]["power_plan"] = [1, 2]
    with pytest.raises(UserError, match="constant 'power_plan' must be a mapping"):
        config_from_spec(cfg)


@pytest.mark.parametrize("key", ["input", "roles", "plan_schema"])
def test_freeze_rules_may_not_restate_what_comes_from_elsewhere(key: str) -> None:
    cfg = copy.deepcopy(SPEC_CONFIG)
    cfg["constants"]["freeze_rules"][key] = "x"
    with pytest.raises(UserError, match=f"must not set {key!r}"):
        config_from_spec(cfg)


@pytest.mark.parametrize("config", [None, [], {"constants": []}, {"study_id": "x"}])
def test_not_a_compiled_config(config) -> None:
    with pytest.raises(UserError, match="expected the compiled spec config"):
        config_from_spec(config)
