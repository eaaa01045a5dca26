"""config_from_spec: the engine's configuration comes from the spec file, and only from it."""

from __future__ import annotations

import argparse
import copy
import json

import pytest
import yaml
from jev_helpers import (
    CONFIG,
    MODULE,
    ROOT,
    SPEC_CONFIG,
    STUDY_CTX,
    VAL,
    config,
    context,
    pair,
    spec_shaped,
)

from prereg.engines.multicorrect import (
    COMMANDS,
    api,
    config_from_spec,
    diagnostic,
    fit_threshold,
    study_config,
)
from prereg.engines.multicorrect.reader import read_score_inputs
from prereg.errors import UserError

SPEC = yaml.safe_load((ROOT / "spec" / "studies" / "jev-multicorrect.yaml").read_text("utf-8"))
CONSTANTS = {c["id"]: c["value"] for c in SPEC["constants"]}
CONTRACTS = {c["id"]: c for c in SPEC["record_contracts"]}


def _field(contract: str, name: str) -> dict:
    return next(f for f in CONTRACTS[contract]["fields"] if f["name"] == name)


def test_every_engine_key_comes_from_a_spec_constant_or_contract():
    c = CONSTANTS
    assert CONFIG == {
        "report_schema": c["output-schemas"]["report"],
        "diagnostic_schema": c["output-schemas"]["diagnostic"],
        "splits": {"fit": c["threshold-fit"]["fit"], "evaluate": c["threshold-fit"]["evaluate"]},
        "threshold_grid": c["threshold-grid"],
        "threshold_ties": c["threshold-fit"]["ties"],
        "probability_sum_tolerance": c["probability-sum-tolerance"],
        "candidate_count": {
            "min": _field("choice-list", "candidates")["min_items"],
            "max": _field("choice-list", "candidates")["max_items"],
        },
        "multi_correct_min": c["metric-conventions"]["multi_correct_min"],
        "gap_scale": c["metric-conventions"]["gap_scale"],
        "ece_bins": c["metric-conventions"]["ece_bins"],
        "fields": {
            SPEC_ROLE[cid]: {f["role"]: f["name"] for f in contract["fields"]}
            for cid, contract in CONTRACTS.items()
        },
        "diagnostic": c["diagnostic"],
        "diagnostic_seeds": c["diagnostic-seeds"],
    }
    # the study page's conventions, stated by hand
    assert CONFIG["splits"] == {"fit": "validation", "evaluate": "test"}
    assert CONFIG["threshold_grid"] == {"denominator": 100, "first": 0, "last": 100, "step": 1}
    assert CONFIG["threshold_ties"] == "smallest" and CONFIG["ece_bins"] == 10
    assert CONFIG["diagnostic_seeds"] == [42, 43, 44]
    assert CONFIG["candidate_count"] == {"min": 2, "max": 255}
    assert CONFIG["fields"]["lists"] == {
        "request_id": "request_id",
        "question": "question",
        "candidates": "candidates",
    }
    assert CONFIG["fields"]["binary"]["candidate_index"] == "candidate_index"
    # the result is plain JSON data (no tuples from the generated literals)
    assert json.loads(json.dumps(CONFIG)) == CONFIG


#: The contract ids of the spec and the roles they play, written by hand.
SPEC_ROLE = {
    "choice-list": "lists",
    "label": "labels",
    "prediction": "predictions",
    "binary-output": "binary",
}


def test_the_spec_states_field_names_and_bounds_once():
    """No constant repeats the contracts; the splits agree with the label contract."""
    assert {c["role"] for c in CONTRACTS.values()} == set(SPEC_ROLE.values())
    assert {cid: c["role"] for cid, c in CONTRACTS.items()} == SPEC_ROLE
    for value in CONSTANTS.values():
        text = json.dumps(value)
        assert "candidate_index" not in text and "probabilities" not in text
    assert _field("label", "split")["allowed"] == [
        CONFIG["splits"]["fit"],
        CONFIG["splits"]["evaluate"],
    ]
    assert [s["id"] for s in SPEC["splits"]] == _field("label", "split")["allowed"]


def _renamed(contract_role: str, field_role: str, name: str) -> dict:
    c = copy.deepcopy(SPEC_CONFIG)
    contract = next(x for x in c["record_contracts"] if x["role"] == contract_role)
    next(f for f in contract["fields"] if f["role"] == field_role)["name"] = name
    return c


def test_a_field_renamed_in_the_contract_is_what_the_reader_expects(tmp_path):
    c = _renamed("lists", "question", "prompt")
    cfg = study_config(c)
    assert cfg.fields["lists"]["question"] == "prompt"
    lists = tmp_path / "lists.jsonl"
    labels = tmp_path / "labels.jsonl"
    preds = tmp_path / "predictions.jsonl"
    row = {"request_id": "r1", "candidates": ["a", "b"]}
    labels.write_text(json.dumps({"request_id": "r1", "split": VAL, "correct": [0]}) + "\n")
    preds.write_text(
        json.dumps({"request_id": "r1", "refused": False, "probabilities": [0.6, 0.4]}) + "\n"
    )
    lists.write_text(json.dumps({**row, "prompt": "q?"}) + "\n")
    got = read_score_inputs(cfg, str(lists), str(labels), str(preds), None)
    assert got.fit_pairs[0][0].public.question == "q?"
    # the name the spec no longer states is refused, by the study's own reader
    lists.write_text(json.dumps({**row, "question": "q?"}) + "\n")
    with pytest.raises(UserError) as e:
        read_score_inputs(cfg, str(lists), str(labels), str(preds), None)
    assert "prompt" in str(e.value.problems) and "question" in str(e.value.problems)
    # and the study as registered reads it
    got = read_score_inputs(study_config(SPEC_CONFIG), str(lists), str(labels), str(preds), None)
    assert got.fit_pairs[0][0].public.question == "q?"


def test_two_roles_on_one_name_name_the_contracts_section():
    c = _renamed("labels", "split", "correct")
    with pytest.raises(UserError, match="section 'record_contracts' is malformed"):
        study_config(c)


def test_the_candidate_count_is_the_contracts_item_bounds():
    c = copy.deepcopy(SPEC_CONFIG)
    lists = next(x for x in c["record_contracts"] if x["role"] == "lists")
    cands = next(f for f in lists["fields"] if f["role"] == "candidates")
    cands.update(min_items=3, max_items=12)
    cfg = study_config(c)
    assert (cfg.candidates_min, cfg.candidates_max) == (3, 12)
    del cands["max_items"]
    with pytest.raises(UserError, match="must state max_items"):
        config_from_spec(c)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["record_contracts"][1].pop("role"), "no record contract with role 'labels'"),
        (
            lambda c: c["record_contracts"][2].update(role="lists"),
            "more than one record contract with role 'lists'",
        ),
        (
            lambda c: c["record_contracts"][3]["fields"][1].pop("role"),
            "no field with role 'candidate_index'",
        ),
        (
            lambda c: c["record_contracts"][0]["fields"][1].update(role="prompt"),
            "unknown role 'prompt'",
        ),
        (
            lambda c: c["record_contracts"][1]["fields"][1].update(allowed=["validation", "dev"]),
            "split field allows",
        ),
    ],
)
def test_a_contract_without_the_engines_roles_is_refused(edit, message):
    c = copy.deepcopy(SPEC_CONFIG)
    edit(c)
    with pytest.raises(UserError, match=message):
        config_from_spec(c)


def test_the_test_helper_inverts_the_mapping():
    assert config_from_spec(spec_shaped(CONFIG)) == CONFIG
    assert spec_shaped(CONFIG) == SPEC_CONFIG
    changed = config(threshold_ties="largest", splits={"fit": "dev", "evaluate": "test"})
    assert config_from_spec(spec_shaped(changed)) == changed


def test_the_mapping_returns_a_fresh_copy():
    a = config_from_spec(STUDY_CTX.config)
    a["diagnostic"]["lists"]["fit"] = 1
    assert config_from_spec(STUDY_CTX.config)["diagnostic"]["lists"]["fit"] == 300


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["constants"].pop("diagnostic"), "no constant 'diagnostic'"),
        (lambda c: c["constants"]["threshold-fit"].pop("ties"), "missing ties"),
        (lambda c: c["constants"]["output-schemas"].update(extra=1), "unknown extra"),
        (lambda c: c["constants"].update({"metric-conventions": 3}), "must be a mapping"),
        (lambda c: c["constants"]["threshold-fit"].update(fit="dev"), "split 'dev' as 'fit'"),
        (lambda c: c.pop("constants"), "compiled spec config"),
    ],
)
def test_a_missing_or_misshapen_constant_is_refused(edit, message):
    c = copy.deepcopy(SPEC_CONFIG)
    edit(c)
    with pytest.raises(UserError, match=message):
        config_from_spec(c)


@pytest.mark.parametrize(
    "edit, constant",
    [
        (lambda c: c["metric-conventions"].update(ece_bins=12), "metric-conventions"),
        (lambda c: c["diagnostic"]["lists"].update(fit=0), "diagnostic"),
        (lambda c: c.update({"diagnostic-seeds": [1, 1]}), "diagnostic-seeds"),
        (lambda c: c.update({"diagnostic-seeds": [-3]}), "diagnostic-seeds"),
        (lambda c: c["threshold-grid"].update(step=3), "threshold-grid"),
    ],
)
def test_a_malformed_value_names_the_spec_constant(edit, constant):
    c = copy.deepcopy(SPEC_CONFIG)
    edit(c["constants"])
    with pytest.raises(UserError, match=f"constant '{constant}' is malformed"):
        study_config(c)
    # and a handler refuses the same way (a user error, not a traceback)
    ctx = context()
    ctx = type(ctx)(ctx.study_id, ctx.spec_digest, ctx.version, c)
    with pytest.raises(UserError, match=constant):
        COMMANDS["diagnostic"](ctx, argparse.Namespace(seeds=[42]))


def test_the_api_is_bound_to_the_study():
    assert STUDY_CTX.config is MODULE.constants.ENGINE_CONFIG  # the generated literal
    bound = api(STUDY_CTX.config)
    for name in (
        "PublicChoiceList",
        "EvaluatorRow",
        "collect_public_predictions",
        "fit_threshold",
        "evaluate_test",
        "binary_ece",
        "diagnostic",
    ):
        assert name in bound._fields
    pairs = [pair("a", [0.5, 0.3, 0.2], {0, 1}), pair("b", [0.7, 0.2, 0.1], {0})]
    got, want = bound.fit_threshold(pairs), fit_threshold(pairs, CONFIG)
    assert (got.numerator, got.denominator) == (want.numerator, want.denominator)
    assert got.validation.to_json() == want.validation.to_json()
    assert bound.fit_threshold(pairs).threshold == 0.21  # smallest of the best: 0.21 .. 0.30
    pub = bound.PublicChoiceList("r", "q", ("a", "b"))
    preds = bound.collect_public_predictions(lambda x: [0.25, 0.75], [pub])
    assert preds["r"].probabilities == (0.25, 0.75)
    row = bound.EvaluatorRow(pub, frozenset({1}), VAL)
    assert row.correct == frozenset({1})
    # a changed fact in the config changes the bound functions
    largest = api(spec_shaped(config(threshold_ties="largest")))
    assert largest.fit_threshold(pairs).threshold == 0.3


def test_the_api_diagnostic_is_the_studys():
    bound = api(SPEC_CONFIG)
    assert bound.diagnostic(43) == diagnostic(43, CONFIG)
    assert bound.config.diagnostic_seeds == (42, 43, 44)


def test_the_diagnostic_command_defaults_to_the_spec_seeds(capsys):
    assert COMMANDS["diagnostic"](context(config(diagnostic_seeds=[7])), argparse.Namespace()) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["seed"] for s in doc["seeds"]] == [7]
