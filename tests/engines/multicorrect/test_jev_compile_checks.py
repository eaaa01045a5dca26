"""What the engine does not check at run time, prereg compile refuses: a copy of the
jev-multicorrect spec with one fact broken fails to compile, naming the file, the line, the
JSON pointer and the rule, and writes nothing."""

from __future__ import annotations

import pytest

from tests.conftest import compile_edited, data_free_decision

SPEC = "spec/studies/jev-multicorrect.yaml"


E = " (engine multicorrect-scoring"

CASES = {
    # the schema of the engine's constants
    "ece-bins": (
        [("ece_bins: 10}", "ece_bins: 12}")],
        "/constants/4/value/ece_bins",
        "must be 10 (the engine computes ten-bin ECE only)" + E + ", constant metric-conventions)",
    ),
    "ties": (
        [("ties: smallest}", "ties: middle}")],
        "/constants/3/value/ties",
        '"middle" is not one of: smallest, largest' + E + ", constant threshold-fit)",
    ),
    "tolerance-text": (
        [("    value: 0.000001\n", '    value: "1e-6"\n')],
        "/constants/1/value",
        'expected number, got "1e-6"' + E + ", constant probability-sum-tolerance)",
    ),
    "gap-scale-fraction": (
        [("gap_scale: 100,", "gap_scale: 1.5,")],
        "/constants/4/value/gap_scale",
        "expected integer, got 1.5" + E + ", constant metric-conventions)",
    ),
    "missing-constant": (
        [("  - id: diagnostic\n    description", "  - id: diagnostics\n    description")],
        "/constants",
        "missing required constant 'diagnostic'" + E + ")",
    ),
    "missing-key": (
        [("evaluate: test, ties: smallest}", "evaluate: test}")],
        "/constants/3/value",
        "missing required key: 'ties' (one of: smallest, largest)"
        + E
        + ", constant threshold-fit)",
    ),
    "unknown-key": (
        [
            (
                "      diagnostic: prereg-jev-multicorrect-diagnostic/v2\n",
                "      diagnostic: prereg-jev-multicorrect-diagnostic/v2\n      extra: 1\n",
            )
        ],
        "/constants/5/value",
        "unknown key 'extra' (allowed here: diagnostic, report)" + E + ", constant output-schemas)",
        "/constants/5/value/extra",  # the line of the key that should not be there
    ),
    "not-a-mapping": (
        [("    value: {multi_correct_min: 2, gap_scale: 100, ece_bins: 10}", "    value: 3")],
        "/constants/4/value",
        "expected object, got 3" + E + ", constant metric-conventions)",
    ),
    "unknown-contract": (
        [("        - overlap_refused\n", "        - no_such_contract\n")],
        "/constants/6/value/contracts/3",
        '"no_such_contract" is not one of: ranking_vs_set_recovery, below_uniform_counted,',
    ),
    "no-lists": (
        [("lists: {fit: 300, evaluate: 300}", "lists: {fit: 0, evaluate: 300}")],
        "/constants/6/value/lists/fit",
        "0 breaks minimum 1" + E + ", constant diagnostic)",
    ),
    "repeated-seed": (
        [("    value: [42, 43, 44]", "    value: [1, 1]")],
        "/constants/2/value",
        "1 is listed more than once (items must be unique)" + E + ", constant diagnostic-seeds)",
    ),
    "negative-seed": (
        [("    value: [42, 43, 44]", "    value: [-3]")],
        "/constants/2/value/0",
        "-3 breaks minimum 0" + E + ", constant diagnostic-seeds)",
    ),
    # the engine's checks over the constants
    "same-splits": (
        [("{fit: validation, evaluate: test,", "{fit: validation, evaluate: validation,")],
        "/constants/3/value/evaluate",
        "fits and evaluates on the same split 'validation'; they must differ"
        + E
        + ", constant threshold-fit)",
    ),
    "undeclared-split": (
        [("{fit: validation, evaluate: test,", "{fit: dev, evaluate: test,")],
        "/constants/3/value/fit",
        "names split 'dev', which the spec does not declare (splits: validation, test)"
        + E
        + ", constant threshold-fit)",
    ),
    "grid-step": (
        [("last: 100, step: 1}", "last: 100, step: 3}")],
        "/constants/0/value/step",
        "last - first (100) must be a multiple of step 3" + E + ", constant threshold-grid)",
    ),
    "text-placeholder": (
        [('question: "Synthetic question {index}:', 'question: "Synthetic question {nope}:')],
        "/constants/6/value/text/question",
        "is not a format string whose placeholders are among {index}"
        + E
        + ", constant diagnostic)",
    ),
    "five-copy-length": (
        [("uneven: [0.34, 0.24, 0.18, 0.14, 0.1]", "uneven: [0.5, 0.5]")],
        "/constants/6/value/five_copy/uneven",
        "needs one probability per candidate (5)" + E + ", constant diagnostic)",
    ),
    "weights-sum": (
        [("correct_count_weights: [0.15, 0.15, 0.4, 0.3]", "correct_count_weights: [0, 0]")],
        "/constants/6/value/correct_count_weights",
        "the weights sum to 0" + E + ", constant diagnostic)",
    ),
    "diagnostic-candidates-outside-the-contract": (
        [("min_items: 2, max_items: 255}", "min_items: 2, max_items: 8}")],
        "/constants/6/value/candidates",
        "must lie within the 2..8 candidates the lists contract's field 'candidates' allows"
        + E
        + ", constant diagnostic)",
    ),
    # the record contracts the engine reads its inputs from
    "no-labels-contract": (
        [("    role: labels\n", "")],
        "/record_contracts",
        "the spec declares no record contract with role 'labels' (the engine reads one of its"
        " inputs from it)" + E + ")",
    ),
    "two-lists-contracts": (
        [("    role: predictions\n", "    role: lists\n")],
        "/record_contracts/2/role",
        "duplicate record contract role 'lists' (first at /record_contracts/0)",
    ),
    "missing-field-role": (
        [("{name: candidate_index, role: candidate_index,", "{name: candidate_index,")],
        "/record_contracts/3/fields",
        "record contract 'binary-output' has no field with role 'candidate_index' (the engine"
        " reads roles request_id, candidate_index, probability, label)" + E + ")",
    ),
    "unknown-field-role": (
        [("{name: question, role: question,", "{name: question, role: prompt,")],
        "/record_contracts/0/fields/1/role",
        "record contract 'choice-list' gives field 'question' the role 'prompt', which the"
        " engine does not read (roles: request_id, question, candidates)" + E + ")",
    ),
    "two-roles-one-name": (
        [("{name: split, role: split,", "{name: correct, role: split,")],
        "/record_contracts/1/fields/2/name",
        "duplicate field 'correct' (first at /record_contracts/1/fields/1)",
    ),
    "no-candidate-count": (
        [("min_items: 2, max_items: 255}", "min_items: 2}")],
        "/record_contracts/0/fields/2",
        "the candidates field 'candidates' must state max_items (the candidate count per list)"
        + E
        + ")",
    ),
    "candidate-count-upside-down": (
        [("min_items: 2, max_items: 255}", "min_items: 12, max_items: 3}")],
        "/record_contracts/0/fields/2",
        "the candidates field 'candidates' needs 1 <= min_items <= max_items (got 12, 3)" + E + ")",
    ),
    # a split field's allowed values are the study's splits (a language rule, before the
    # engine's), and a label's split is one threshold-fit fits or evaluates on (the engine's)
    "label-split-not-declared": (
        [
            (
                "{name: split, role: split, type: string,",
                "{name: split, role: split, type: string, allowed: [validation, dev],",
            )
        ],
        "/record_contracts/1/fields/1/allowed",
        "field 'split' allows ['dev'], which are not splits of the study (splits: validation,"
        " test)",
    ),
    "label-splits-disagree": (
        [
            (
                "  - {id: test, code: tst, description: Evaluated once with the frozen threshold.}\n",
                "  - {id: test, code: tst, description: Evaluated once with the frozen threshold.}\n"
                "  - {id: dev, code: dev}\n",
            ),
            (
                "{name: split, role: split, type: string,",
                "{name: split, role: split, type: string, allowed: [validation, test, dev],",
            ),
        ],
        "/record_contracts/1/fields/1/allowed",
        "allows validation, test, dev, but constant threshold-fit fits on 'validation' and"
        " evaluates 'test'; a label's split is one of those two (or state no allowed values)"
        + E
        + ")",
    ),
    # the types the engine reads each role's field as
    "request-id-integer": (
        [
            (
                "type: string, min_length: 1}\n      - {name: question",
                "type: integer}\n      - {name: question",
            )
        ],
        "/record_contracts/0/fields/0/type",
        "field 'request_id' (role request_id) is read as string, so it must be declared so"
        " (declared: integer)" + E + ")",
    ),
    "correct-of-numbers": (
        [("type: array, items: integer}", "type: array, items: number}")],
        "/record_contracts/1/fields/2/items",
        "field 'correct' (role correct) is read as array of integer, so it must be declared so"
        " (declared: array of number)" + E + ")",
    ),
    "probabilities-not-nullable": (
        [("items: number, nullable: true}", "items: number}")],
        "/record_contracts/2/fields/2/nullable",
        "field 'probabilities' (role probabilities) is null for a refusal, so it must be"
        " nullable: true" + E + ")",
        "/record_contracts/2/fields/2",
    ),
    # the diagnostic's registered rule and its figures
    "diagnostic-hypothesis-unknown": (
        [("      hypothesis: diagnostic-passes\n", "      hypothesis: diagnostic-holds\n")],
        "/constants/6/value/hypothesis",
        "names hypothesis 'diagnostic-holds', which the spec does not register (hypotheses:"
        " diagnostic-passes)" + E + ", constant diagnostic)",
    ),
    "diagnostic-hypothesis-reported-only": (
        [
            (
                "    title: The diagnostic passes\n",
                "    title: The diagnostic passes\n    reported_only: true\n",
            ),
            # the decision reads the hypothesis' verdict, which a reported-only one never gives
            data_free_decision(SPEC),
        ],
        "/hypotheses/0",
        "hypothesis 'diagnostic-passes' is the decision constant diagnostic names, so it must"
        " register a rule and not be reported only" + E + ")",
    ),
    "figure-not-reported": (
        [
            (
                "  - {id: held-five_copy_gap,",
                "  - {id: held-sixth_copy_gap, title: Another}\n  - {id: held-five_copy_gap,",
            )
        ],
        "/figures/6/id",
        "figure 'held-sixth_copy_gap' is not one engine 'multicorrect-scoring' reports",
    ),
    "figure-unknown-target": (
        [('compare: {target: "held-{contract}"', 'compare: {target: "holds-{contract}"')],
        "/hypotheses/0/rule/for_each/condition/compare/target",
        "comparison names unknown contrast, estimate, analysis or figure 'holds-ranking_vs_set_recovery'",
    ),
    # the commands: each declares every argument its handler reads, as the handler reads it
    "argument-renamed": (
        [("{name: --lists, kind: option", "{name: --choice-lists, kind: option")],
        "/commands/0/arguments",
        "command 'score': handler 'score' reads argument --lists (path or string), which the"
        " command does not declare" + E + ")",
    ),
    "argument-ignored": (
        [("{name: --lists, kind: option", "{name: --choice-lists, kind: option")],
        "/commands/0/arguments/0/name",
        "command 'score': handler 'score' reads no argument '--choice-lists', so it would be"
        " ignored (it reads --lists, --labels, --predictions, --binary-outputs,"
        " --rounding-decimals, --out)" + E + ")",
    ),
    "argument-not-required": (
        [
            (
                "{name: --out, kind: option, type: path, required: true,\n         help: the report",
                "{name: --out, kind: option, type: path, required: false,\n         help: the report",
            )
        ],
        "/commands/0/arguments/5/required",
        "command 'score': handler 'score' needs a value of --out, so the argument must be"
        " required" + E + ")",
    ),
    "argument-type": (
        [
            (
                "{name: --seeds, kind: option, type: integer_list,",
                "{name: --seeds, kind: option, type: string,",
            )
        ],
        "/commands/1/arguments/0/type",
        "command 'diagnostic': handler 'diagnostic' reads --seeds as integer_list, not string"
        + E
        + ")",
    ),
    "unknown-handler": (
        [("    handler: diagnostic\n", "    handler: diagnosis\n")],
        "/commands/1/handler",
        "command 'diagnostic': the multicorrect-scoring engine has no handler 'diagnosis'"
        " (handlers: diagnose, diagnostic, score)" + E + ")",
    ),
    # more seeds than the diagnostic command runs (--seeds: at most 1,000)
    "too-many-seeds": (
        [("    value: [42, 43, 44]\n", f"    value: {list(range(1001))}\n")],
        "/constants/2/value",
        "expected at most 1000 items, got 1001" + E + ", constant diagnostic-seeds)",
    ),
    # the diagnostic's synthetic lists: one request id each, and a gap for contract 7
    "request-id-without-index": (
        [('request_id: "diag-{seed}-{split}-{index}"', 'request_id: "diag-{seed}-{split}"')],
        "/constants/6/value/text/request_id",
        "must give every synthetic list of both splits its own request id (use {split} and"
        " {index})" + E + ", constant diagnostic)",
    ),
    "request-id-without-split": (
        [('request_id: "diag-{seed}-{split}-{index}"', 'request_id: "diag-{seed}-{index}"')],
        "/constants/6/value/text/request_id",
        "must give every synthetic list of both splits its own request id (use {split} and"
        " {index})" + E + ", constant diagnostic)",
    ),
    "five-copies-below-multi-correct": (
        [("multi_correct_min: 2,", "multi_correct_min: 6,")],
        "/constants/6/value/five_copy/candidates",
        "5 copies of the correct option are fewer than the 6 correct options from which constant"
        " metric-conventions computes the gap (multi_correct_min), so contract five_copy_gap"
        " would have no gap to compare" + E + ", constant diagnostic)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_fact_fails_compile_with_file_line_and_rule(tmp_path, case):
    edits, at, rule, *line_at = CASES[case]
    code, err, line_of = compile_edited(tmp_path, "jev-multicorrect", edits)
    assert code == 2, err
    assert err.startswith("error: the specs have problems; nothing was written\n")
    assert f"  {SPEC}:{line_of(*line_at or [at])}: at {at}: {rule}" in err, err
    assert "Traceback" not in err


def test_the_shipped_spec_compiles(tmp_path):
    code, err, _ = compile_edited(tmp_path, "jev-multicorrect", [])
    assert code == 0, err
    # ready to register: the readiness check (prereg compile's warnings) finds nothing
    assert "warning" not in err, err


def test_a_label_contract_may_still_list_the_two_splits(tmp_path):
    edit = (
        "{name: split, role: split, type: string,",
        "{name: split, role: split, type: string, allowed: [test, validation],",
    )
    code, err, _ = compile_edited(tmp_path, "jev-multicorrect", [edit])
    assert code == 0, err


def test_a_label_contract_lists_the_two_splits_of_a_study_with_a_third(tmp_path):
    # the labels are of the fit and the evaluate split only, so a third split of the study is
    # not among the label contract's allowed values (the rule that a split field lists every
    # split is the items contract's: the study's own rows are in all of them)
    edits = [
        (
            "  - {id: test, code: tst, description: Evaluated once with the frozen threshold.}\n",
            "  - {id: test, code: tst, description: Evaluated once with the frozen threshold.}\n"
            "  - {id: dev, code: dev}\n",
        ),
        (
            "{name: split, role: split, type: string,",
            "{name: split, role: split, type: string, allowed: [validation, test],",
        ),
    ]
    code, err, _ = compile_edited(tmp_path, "jev-multicorrect", edits)
    assert code == 0, err
