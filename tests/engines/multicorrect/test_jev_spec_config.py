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
from prereg.errors import UserError

SPEC = yaml.safe_load((ROOT / "spec" / "studies" / "jev-multicorrect.yaml").read_text("utf-8"))
CONSTANTS = {c["id"]: c["value"] for c in SPEC["constants"]}
CONTRACTS = {c["id"]: c for c in SPEC["record_contracts"]}


def test_every_engine_key_comes_from_a_spec_constant():
    c = CONSTANTS
    assert CONFIG == {
        "report_schema": c["output-schemas"]["report"],
        "diagnostic_schema": c["output-schemas"]["diagnostic"],
        "splits": {"fit": c["threshold-fit"]["fit"], "evaluate": c["threshold-fit"]["evaluate"]},
        "threshold_grid": c["threshold-grid"],
        "threshold_ties": c["threshold-fit"]["ties"],
        "probability_sum_tolerance": c["probability-sum-tolerance"],
        "candidate_count": c["candidate-count"],
        "multi_correct_min": c["metric-conventions"]["multi_correct_min"],
        "gap_scale": c["metric-conventions"]["gap_scale"],
        "ece_bins": c["metric-conventions"]["ece_bins"],
        "fields": c["input-fields"],
        "diagnostic": c["diagnostic"],
        "diagnostic_seeds": c["diagnostic-seeds"],
    }
    # the study page's conventions, stated by hand
    assert CONFIG["splits"] == {"fit": "validation", "evaluate": "test"}
    assert CONFIG["threshold_grid"] == {"denominator": 100, "first": 0, "last": 100, "step": 1}
    assert CONFIG["threshold_ties"] == "smallest" and CONFIG["ece_bins"] == 10
    assert CONFIG["diagnostic_seeds"] == [42, 43, 44]
    # the result is plain JSON data (no tuples from the generated literals)
    assert json.loads(json.dumps(CONFIG)) == CONFIG


def test_the_spec_states_each_fact_once_consistently():
    """The input field names and bounds agree with the record contracts, the splits with the
    splits section and the label contract."""
    kinds = {"lists": "choice-list", "labels": "label", "predictions": "prediction"}
    kinds["binary"] = "binary-output"
    for kind, contract in kinds.items():
        names = {f["name"] for f in CONTRACTS[contract]["fields"]}
        assert set(CONFIG["fields"][kind].values()) == names, kind
    cands = next(f for f in CONTRACTS["choice-list"]["fields"] if f["name"] == "candidates")
    assert (cands["min_items"], cands["max_items"]) == (
        CONFIG["candidate_count"]["min"],
        CONFIG["candidate_count"]["max"],
    )
    split_field = next(f for f in CONTRACTS["label"]["fields"] if f["name"] == "split")
    assert split_field["allowed"] == [CONFIG["splits"]["fit"], CONFIG["splits"]["evaluate"]]
    assert [s["id"] for s in SPEC["splits"]] == split_field["allowed"]


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
        (lambda c: c["constants"].pop("input-fields"), "no constant 'input-fields'"),
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
        (lambda c: c["input-fields"]["labels"].update(split="correct"), "input-fields"),
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
