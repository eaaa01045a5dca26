"""What the engine does not check at run time, prereg compile refuses: a copy of the
s3-verifier-freeze spec with one fact broken fails to compile, naming the file, the line, the
JSON pointer and the rule, and writes nothing."""

from __future__ import annotations

import pytest

from tests.conftest import compile_edited, data_free_decision

SPEC = "spec/studies/s3-verifier-freeze.yaml"


E = " (engine cluster-power-freeze"
FROZEN = E + ", constant frozen)"
PLAN = E + ", constant power_plan)"
RULES = E + ", constant freeze_rules)"
INPUT = E + ", constant freeze_input)"
UNDECLARED = "but the contract declares no such property there (it declares "

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
    # study figures and the registered status rule
    "figure-unknown-target": (
        [
            (
                "{target: power-full-universe, quantity: estimate, op: ge, value: 0.9}",
                "{target: power-full-universes, quantity: estimate, op: ge, value: 0.9}",
            )
        ],
        "/hypotheses/0/verdicts/1/when/any_of/1/compare/target",
        "comparison names unknown contrast, estimate, analysis or figure 'power-full-universes'",
    ),
    "figure-not-reported": (
        [
            (
                "  - {id: eligible-repositories, title:",
                "  - {id: eligible-repository-share, title: A share}\n"
                "  - {id: eligible-repositories, title:",
            )
        ],
        "/figures/4/id",
        "figure 'eligible-repository-share' is not one engine 'cluster-power-freeze' reports"
        " (it reports: calibration-repositories, calibration-repositories-beyond-eligible,",
    ),
    "figure-quantity": (
        [
            (
                "{target: eligible-repositories, quantity: estimate, op: lt, value: 2}",
                "{target: eligible-repositories, quantity: lower, op: lt, value: 2}",
            )
        ],
        "/hypotheses/0/verdicts/0/when/any_of/3/compare/quantity",
        "figure 'eligible-repositories' is compared with quantity estimate only (not 'lower')",
    ),
    "external-figure-decided": (
        [("    reported_only: true\n", "")],
        "/hypotheses/1/rule/all_of/0/compare/target",
        "figure 'confirmatory-lower-bound-repository' is external (the engine never reports"
        " it): only a reported-only hypothesis may read it",
    ),
    "figure-duplicate": (
        [
            (
                "  - {id: eligible-repositories, title:",
                "  - {id: eligible-fail-items, title: Again}\n"
                "  - {id: eligible-repositories, title:",
            )
        ],
        "/figures/7/id",
        "duplicate figure id 'eligible-fail-items' (first at /figures/4)",
    ),
    "status-power-threshold": (
        [
            (
                "{target: power-full-universe, quantity: estimate, op: ge, value: 0.9}",
                "{target: power-full-universe, quantity: estimate, op: ge, value: 0.95}",
            )
        ],
        "/hypotheses/0/verdicts/1/when/any_of/1/compare",
        "compares figure 'power-full-universe' ≥ 0.95, but the plan's constants fix ≥ 0.9"
        " (exactly 9/10)",
    ),
    "status-power-strict": (
        [
            (
                'target: "power-rung-{rung}", quantity: estimate, op: ge',
                'target: "power-rung-{rung}", quantity: estimate, op: gt',
            )
        ],
        "/hypotheses/0/verdicts/1/when/any_of/0/for_each/condition/compare",
        "compares figure 'power-rung-50' > 0.9, but the plan's constants fix ≥ 0.9",
    ),
    "status-floor": (
        [
            (
                "{target: eligible-repositories, quantity: estimate, op: lt, value: 2}",
                "{target: eligible-repositories, quantity: estimate, op: le, value: 2}",
            )
        ],
        "/hypotheses/0/verdicts/0/when/any_of/3/compare",
        "compares figure 'eligible-repositories' ≤ 2, but the plan's constants fix < 2",
    ),
    "status-verdict-names": (
        [
            ("      - verdict: powered\n", "      - verdict: adequate\n"),
            data_free_decision(SPEC),
        ],
        "/hypotheses/0/verdicts",
        "hypothesis 'power-plan-status' decides the plan's status, so its verdicts must be the"
        " status names of constant power_plan, each once",
    ),
    "status-hypothesis-unknown": (
        [("status_hypothesis: power-plan-status", "status_hypothesis: plan-status")],
        "/constants/1/value/status_hypothesis",
        "names hypothesis 'plan-status', which the spec does not register (hypotheses:"
        " power-plan-status, positive-at-both-levels)" + PLAN,
    ),
    "status-hypothesis-reported-only": (
        [
            (
                "  - id: power-plan-status\n    title: The power plan's status\n",
                "  - id: power-plan-status\n    title: The power plan's status\n"
                "    reported_only: true\n",
            ),
            # the decision reads its verdicts, which a reported-only hypothesis never gives
            data_free_decision(SPEC),
        ],
        "/hypotheses/0",
        "hypothesis 'power-plan-status' is the decision constant power_plan names, so it must"
        " register verdicts and not be reported only" + E + ")",
    ),
    # the commands: each declares every argument its handler reads, as the handler reads it
    "argument-renamed": (
        [("{name: --eligible-task-count, kind: option", "{name: --tasks, kind: option")],
        "/commands/0/arguments",
        "command 'power-plan': handler 'power_plan' reads argument --eligible-task-count"
        " (integer), which the command does not declare" + E + ")",
    ),
    "positional-optional": (
        [
            (
                "{name: manifest, kind: positional, type: path, required: true,",
                "{name: manifest, kind: positional, type: path, required: false,",
            )
        ],
        "/commands/3/arguments/0/required",
        "command 'validate': handler 'validate' needs a value of manifest, so the argument must"
        " be required" + E + ")",
    ),
    "root-undeclared": (
        [
            (
                "      - {name: --root, kind: option, type: path, required: false,\n"
                "         help: the folder the bound paths are relative to (re-hash every file)}\n",
                "",
            )
        ],
        "/commands/3/arguments",
        "command 'validate': handler 'validate' reads argument --root (path or string), which"
        " the command does not declare" + E + ")",
    ),
    "argument-repeated": (
        [
            (
                "{name: --leave-out, kind: option, type: string, required: false,",
                "{name: --leave-out, kind: option, type: string, required: false, repeated: true,",
            )
        ],
        "/commands/1/arguments/3/repeated",
        "command 'assemble': handler 'assemble' reads one value of --leave-out, so it may not be"
        " repeated" + E + ")",
    ),
    # a forbidden key the bound plan or calibration statistics always hold
    "forbidden-calibration-field": (
        [("names: [verdict, verdicts,", "names: [delta_logscore, verdict, verdicts,")],
        "/constants/3/value/forbidden_keys/names/0",
        "forbids key 'delta_logscore', but 'delta_logscore' is a field of the calibration"
        " contract, in every line of the role calibration_statistics file, so every freeze"
        " would be refused" + RULES,
    ),
    "forbidden-class-label": (
        [("names: [verdict, verdicts,", "names: [official_fail, verdict, verdicts,")],
        "/constants/3/value/forbidden_keys/names/0",
        "forbids key 'official_fail', but 'official-fail' is a class label, which the power"
        " plan records per stratum, so every freeze would be refused" + RULES,
    ),
    "forbidden-plan-key": (
        [("names: [verdict, verdicts,", "names: [status, verdict, verdicts,")],
        "/constants/3/value/forbidden_keys/names/0",
        "forbids key 'status', but 'status' is a key the power plan (role power_plan) holds,"
        " so every freeze would be refused" + RULES,
    ),
    # the freeze input's contract declares what the freeze rules read
    "input-target-undeclared": (
        [("        target: freeze_target\n", "        target: stage_target\n")],
        "/constants/2/value/fields/target",
        f"names 'stage_target' as the freeze target, {UNDECLARED}'schema', 'freeze_target',",
    ),
    "input-model-key-undeclared": (
        [("        model_id: id\n", "        model_id: name\n")],
        "/constants/2/value/fields/model_id",
        f"names 'name' as the model id of each item, {UNDECLARED}'id', 'checkpoint',"
        " 'base_lineage', 'benchmark_specific_finetune'), so every freeze input would be"
        " refused" + INPUT,
    ),
    "input-claim-path-undeclared": (
        [("[execution_boundary, executes_untrusted_code]", "[execution_boundary, runs_code]")],
        "/constants/2/value/fields/executes_untrusted_code",
        f"names 'runs_code' as the claim executes_untrusted_code, {UNDECLARED}",
    ),
    "input-target-unregistered": (
        [("freeze_target: {enum: [X6, X7]}", "freeze_target: {enum: [X6, X7, X9]}")],
        "/constants/2/value/contract/properties/freeze_target/enum/2",
        "allows freeze target 'X9', which constant freeze_rules does not register (targets:"
        " 'X6', 'X7')" + INPUT,
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
    # ready to register: the readiness check (prereg compile's warnings) finds nothing
    assert "warning" not in err, err
