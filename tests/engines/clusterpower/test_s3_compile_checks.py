"""What the engine does not check at run time, prereg compile refuses: a copy of the
s3-verifier-freeze spec with one fact broken fails to compile, naming the file, the line, the
JSON pointer and the rule, and writes nothing."""

from __future__ import annotations

import pytest

from tests.conftest import compile_edited

SPEC = "spec/studies/s3-verifier-freeze.yaml"
E = " (engine cluster-power-freeze"
FROZEN = E + ", constant frozen)"
PLAN = E + ", constant power_plan)"
RULES = E + ", constant freeze_rules)"

CASES = {
    # the frozen planning constants
    "planning-method": (
        [("planning_method: cluster-t-jackknife", "planning_method: bootstrap")],
        "/constants/0/value/planning_method",
        "must be cluster-t-jackknife (the only method this engine implements)" + FROZEN,
    ),
    "negative-seed": (
        [("seed: 20261011", "seed: -1")],
        "/constants/0/value/seed",
        "-1 breaks minimum 0" + FROZEN,
    ),
    "boolean-seed": (
        [("seed: 20261011", "seed: true")],
        "/constants/0/value/seed",
        "expected integer, got true" + FROZEN,
    ),
    "flat-ladder": (
        [("ladder: [50, 75, 100,", "ladder: [50, 50, 100,")],
        "/constants/0/value/ladder/1",
        "the ladder must rise strictly (50 then 50)" + FROZEN,
    ),
    "target-power-above-one": (
        [("target_power: {numerator: 9,", "target_power: {numerator: 11,")],
        "/constants/0/value/target_power",
        "the target power must not exceed 1 (numerator <= denominator)" + FROZEN,
    ),
    "effect-text": (
        [("smallest_effect: 0.09531017980432487", 'smallest_effect: "0.1"')],
        "/constants/0/value/smallest_effect",
        'expected number, got "0.1"' + FROZEN,
    ),
    "frozen-extra-key": (
        [("      block_size: 1000\n", "      block_size: 1000\n      extra: 1\n")],
        "/constants/0/value",
        "unknown key 'extra' (allowed here:",
        "/constants/0/value/extra",
    ),
    "frozen-missing-key": (
        [("      block_size: 1000\n", "")],
        "/constants/0/value",
        "missing required key: 'block_size'" + FROZEN,
    ),
    # the power plan
    "bound-level": (
        [("bound_two_sided_level: 0.95", "bound_two_sided_level: 1.0")],
        "/constants/1/value/bound_two_sided_level",
        "1.0 breaks exclusiveMaximum 1" + PLAN,
    ),
    "error-cap": (
        [
            (
                "      error_cap: 50\n      min_calibration",
                "      error_cap: 0\n      min_calibration",
            )
        ],
        "/constants/1/value/error_cap",
        "0 breaks minimum 1" + PLAN,
    ),
    "statuses-repeat": (
        [("infeasible: infeasible", "infeasible: powered")],
        "/constants/1/value/statuses",
        "the status names must be distinct" + PLAN,
    ),
    "plan-restates-the-contract": (
        [
            (
                "      confirmatory_stage: confirmatory\n",
                "      confirmatory_stage: confirmatory\n      pass_label: official-pass\n",
            )
        ],
        "/constants/1/value",
        "unknown key 'pass_label' (allowed here:",
        "/constants/1/value/pass_label",
    ),
    "missing-constant": (
        [("  - id: power_plan\n", "  - id: power-plan\n")],
        "/constants",
        "missing required constant 'power_plan'" + E + ")",
    ),
    "not-a-mapping": (
        [("target_power: {numerator: 9, denominator: 10}", "target_power: 0.9")],
        "/constants/0/value/target_power",
        "expected object, got 0.9" + FROZEN,
    ),
    # the freeze rules and roles
    "rules-restate-the-roles": (
        [("      error_cap: 50\ncommands:", "      error_cap: 50\n      roles: []\ncommands:")],
        "/constants/3/value",
        "unknown key 'roles' (allowed here:",
        "/constants/3/value/roles",
    ),
    "unknown-required-role": (
        [("required_roles: [prompt_bundle]", "required_roles: [prompt_bundle, slides]")],
        "/constants/3/value/targets/1/required_roles/1",
        "names freeze role 'slides', which the spec does not declare",
    ),
    "no-format": (
        [("formats: {.json: json, .jsonl: jsonl}", "formats: {.json: json}")],
        "/constants/3/value/formats",
        "gives no format for '.jsonl', an extension of metadata freeze role"
        " 'calibration_statistics'" + RULES,
    ),
    "plan-role-optional": (
        [
            (
                "{id: power_plan, kind: metadata, required: true,",
                "{id: power_plan, kind: metadata, required: false,",
            )
        ],
        "/constants/3/value/plan_role",
        "names freeze role 'power_plan', which must be a required metadata role" + RULES,
    ),
    "role-kind": (
        [("{id: analysis_code, kind: source,", "{id: analysis_code, kind: binary,")],
        "/freeze_roles/0/kind",
        '"binary" is not one of: source, metadata',
    ),
    "role-ids-repeat": (
        [("{id: power_planning_code, kind: source,", "{id: analysis_code, kind: source,")],
        "/freeze_roles/1/id",
        "duplicate freeze role id 'analysis_code' (first at /freeze_roles/0)",
    ),
    "role-without-extensions": (
        [
            (
                "required: false, extensions: [.json, .jsonl]}\n  - {id: sandbox",
                "required: false, extensions: []}\n  - {id: sandbox",
            )
        ],
        "/freeze_roles/8/extensions",
        "freeze role 'prompt_bundle' accepts no file-name ending, so no file could be bound under"
        " it" + E + ")",
    ),
    "status-not-in-the-plan": (
        [
            (
                "accepted_plan_statuses: [powered, underpowered_full_universe]",
                "accepted_plan_statuses: [powered, underpowered]",
            )
        ],
        "/constants/3/value/accepted_plan_statuses/1",
        "names plan status 'underpowered', which constant power_plan does not",
    ),
    # the calibration input's record contract
    "no-calibration-contract": (
        [("    role: calibration\n", "")],
        "/record_contracts",
        "the spec declares no record contract with role 'calibration' (the engine reads one of"
        " its inputs from it)" + E + ")",
    ),
    "missing-field-role": (
        [("{name: task_id, role: task,", "{name: task_id,")],
        "/record_contracts/0/fields",
        "record contract 'calibration-record' has no field with role 'task' (the engine reads"
        " roles stage, repository, task, class, statistic)" + E + ")",
    ),
    "two-stages": (
        [("allowed: [calibration]", "allowed: [calibration, x]")],
        "/record_contracts/0/fields/0/allowed",
        "the calibration contract's field 'stage' must allow exactly 1 distinct value(s): the"
        " calibration stage" + E + ")",
    ),
    "no-class-labels": (
        [("type: string, allowed: [official-pass, official-fail],", "type: string,")],
        "/record_contracts/0/fields/3",
        "the calibration contract's field 'class_label' must allow exactly 2 distinct"
        " value(s): the pass label, then the fail label" + E + ")",
    ),
    "one-label-twice": (
        [("allowed: [official-pass, official-fail]", "allowed: [official-pass, official-pass]")],
        "/record_contracts/0/fields/3/allowed",
        "the calibration contract's field 'class_label' must allow exactly 2 distinct"
        " value(s): the pass label, then the fail label" + E + ")",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_fact_fails_compile_with_file_line_and_rule(tmp_path, case):
    edits, at, rule, *line_at = CASES[case]
    code, err, line_of = compile_edited(tmp_path, "s3-verifier-freeze", edits)
    assert code == 2, err
    assert err.startswith("error: the specs have problems; nothing was written\n")
    assert f"  {SPEC}:{line_of(*line_at or [at])}: at {at}: {rule}" in err, err
    assert "Traceback" not in err


def test_the_shipped_spec_compiles(tmp_path):
    code, err, _ = compile_edited(tmp_path, "s3-verifier-freeze", [])
    assert code == 0, err
