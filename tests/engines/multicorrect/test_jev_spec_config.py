"""The engine's configuration comes from the spec file, and only from it: engine_config reads
the compiled study (ctx.config) by the spec's own names; checked here against the spec read
independently (plain PyYAML).  What the compile refuses is in test_jev_compile_checks."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json

import pytest
from jev_helpers import CONFIG, MODULE, ROOT, STUDY_CTX, VAL, config, context, pair, with_field

from prereg.engines.multicorrect import (
    COMMANDS,
    api,
    diagnostic,
    engine_config,
    fit_threshold,
)
from prereg.engines.multicorrect.reader import read_packed_inputs
from prereg.errors import UserError
from prereg.rules import Decision, condition
from tests.conftest import safe_yaml

SPEC = safe_yaml((ROOT / "spec" / "studies" / "jev-multicorrect.yaml").read_text("utf-8"))
CONSTANTS = {c["id"]: c["value"] for c in SPEC["constants"]}
CONTRACTS = {c["id"]: c for c in SPEC["record_contracts"]}
CFG = engine_config(CONFIG)


def _field(contract: str, name: str) -> dict:
    return next(f for f in CONTRACTS[contract]["fields"] if f["name"] == name)


def test_every_engine_value_comes_from_a_spec_constant_or_contract():
    c, cfg = CONSTANTS, CFG
    assert (cfg.report_schema, cfg.diagnostic_schema) == (
        c["output-schemas"]["report"],
        c["output-schemas"]["diagnostic"],
    )
    assert (cfg.fit_split, cfg.evaluate_split, cfg.threshold_ties) == (
        c["threshold-fit"]["fit"],
        c["threshold-fit"]["evaluate"],
        c["threshold-fit"]["ties"],
    )
    grid = c["threshold-grid"]
    assert (cfg.grid_denominator, cfg.grid_first, cfg.grid_last, cfg.grid_step) == (
        grid["denominator"],
        grid["first"],
        grid["last"],
        grid["step"],
    )
    assert cfg.probability_sum_tolerance == c["probability-sum-tolerance"]
    assert (cfg.candidates_min, cfg.candidates_max) == (
        _field("choice-list", "candidates")["min_items"],
        _field("choice-list", "candidates")["max_items"],
    )
    conventions = c["metric-conventions"]
    assert (cfg.multi_correct_min, cfg.gap_scale, cfg.ece_bins) == (
        conventions["multi_correct_min"],
        conventions["gap_scale"],
        conventions["ece_bins"],
    )
    assert {kind: dict(names) for kind, names in cfg.fields.items()} == {
        SPEC_ROLE[cid]: {f["role"]: f["name"] for f in contract["fields"]}
        for cid, contract in CONTRACTS.items()
    }
    d, dg = c["diagnostic"], cfg.diagnostic
    # the diagnostic's pass: the rule of the hypothesis the constant names, as registered
    (hyp,) = [h for h in SPEC["hypotheses"] if h["id"] == d["hypothesis"]]
    assert dg.decision == Decision(d["hypothesis"], condition(hyp["rule"]), ())
    assert dg.config is CONFIG  # the decision is read from the compiled study, on first use
    assert {k: v for k, v in dataclasses.asdict(dg).items() if k != "config"} == {
        "contracts": tuple(d["contracts"]),
        "fit_lists": d["lists"]["fit"],
        "evaluate_lists": d["lists"]["evaluate"],
        "candidates_min": d["candidates"]["min"],
        "candidates_max": d["candidates"]["max"],
        "correct_count_weights": tuple(d["correct_count_weights"]),
        "refusal_rate": d["refusal_rate"],
        "empty_refusals_min": d["empty_refusals_min"],
        "dominant_scale": d["weight_scale"]["dominant"],
        "other_correct_scale": d["weight_scale"]["other_correct"],
        "distractor_scale": d["weight_scale"]["distractor"],
        "positive_draws": d["binary_draws"]["positive"],
        "negative_draws": d["binary_draws"]["negative"],
        "request_id_format": d["text"]["request_id"],
        "question_format": d["text"]["question"],
        "candidate_format": d["text"]["candidate"],
        "five_copy": {k: tuple(v) if isinstance(v, list) else v for k, v in d["five_copy"].items()},
        "tolerance": d["tolerance"],
        "hypothesis": d["hypothesis"],
    }
    assert cfg.diagnostic_seeds == tuple(c["diagnostic-seeds"])
    # the study page's conventions, stated by hand
    assert cfg.split_names == ("validation", "test")
    assert (cfg.grid_denominator, cfg.grid_first, cfg.grid_last, cfg.grid_step) == (100, 0, 100, 1)
    assert cfg.threshold_ties == "smallest" and cfg.ece_bins == 10
    assert cfg.diagnostic_seeds == (42, 43, 44)
    assert (cfg.candidates_min, cfg.candidates_max) == (2, 255)
    assert dict(cfg.fields["lists"]) == {
        "request_id": "request_id",
        "question": "question",
        "candidates": "candidates",
    }
    assert cfg.fields["binary"]["candidate_index"] == "candidate_index"


#: The contract ids of the spec and the roles they play, written by hand.
SPEC_ROLE = {
    "choice-list": "lists",
    "label": "labels",
    "prediction": "predictions",
    "binary-output": "binary",
}


def test_the_spec_states_field_names_bounds_and_splits_once():
    """No constant repeats the contracts; the split names are declared under splits and given
    their parts in constant threshold-fit, and the label contract does not list them again."""
    assert {c["role"] for c in CONTRACTS.values()} == set(SPEC_ROLE.values())
    assert {cid: c["role"] for cid, c in CONTRACTS.items()} == SPEC_ROLE
    for value in CONSTANTS.values():
        text = json.dumps(value)
        assert "candidate_index" not in text and "probabilities" not in text
    assert [s["id"] for s in SPEC["splits"]] == [CFG.fit_split, CFG.evaluate_split]
    assert "allowed" not in _field("label", "split")


def test_a_field_renamed_in_the_contract_is_what_the_reader_expects(tmp_path):
    c = with_field(CONFIG, "lists", "question", name="prompt")
    cfg = engine_config(c)
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
    got = read_packed_inputs(cfg, str(lists), str(labels), str(preds), None)
    assert got.fit.request_ids == ("r1",) and got.fit.probs.tolist() == [0.6, 0.4]
    # the name the spec no longer states is refused, by the study's own reader
    lists.write_text(json.dumps({**row, "question": "q?"}) + "\n")
    with pytest.raises(UserError) as e:
        read_packed_inputs(cfg, str(lists), str(labels), str(preds), None)
    assert "prompt" in str(e.value.problems) and "question" in str(e.value.problems)
    # and the study as registered reads it
    got = read_packed_inputs(engine_config(CONFIG), str(lists), str(labels), str(preds), None)
    assert got.fit.request_ids == ("r1",)


def test_the_candidate_count_is_the_contracts_item_bounds():
    cfg = engine_config(with_field(CONFIG, "lists", "candidates", min_items=3, max_items=12))
    assert (cfg.candidates_min, cfg.candidates_max) == (3, 12)


def test_without_a_binary_contract_the_study_reads_no_binary_outputs(tmp_path):
    c = copy.deepcopy(CONFIG)
    c["record_contracts"] = [x for x in c["record_contracts"] if x.get("role") != "binary"]
    cfg = engine_config(c)
    assert "binary" not in cfg.fields and cfg.fields["lists"] == CFG.fields["lists"]
    with pytest.raises(UserError, match="no record contract with role 'binary'"):
        read_packed_inputs(cfg, "l.jsonl", "b.jsonl", "p.jsonl", str(tmp_path / "binary.jsonl"))


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
    largest = api(config({"threshold-fit": {"ties": "largest"}}))
    assert largest.fit_threshold(pairs).threshold == 0.3


def test_the_api_diagnostic_is_the_studys():
    bound = api(CONFIG)
    assert bound.diagnostic(43) == diagnostic(43, CONFIG)
    assert bound.config.diagnostic_seeds == (42, 43, 44)


def test_the_diagnostic_command_defaults_to_the_spec_seeds(capsys):
    cfg = config({"diagnostic-seeds": [7]})
    assert COMMANDS["diagnostic"](context(cfg), argparse.Namespace()) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["seed"] for s in doc["seeds"]] == [7]
