"""The engine configuration: read from the compiled study, and every study constant really
comes from it (what the compile refuses is in test_jev_compile_checks)."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest
from jev_helpers import CONFIG, FIXTURES, VAL, config, context, pair, with_field

from prereg.engines.multicorrect import (
    COMMANDS,
    EngineConfig,
    collect_public_predictions,
    engine_config,
    fit_threshold,
    threshold_curve,
)
from prereg.engines.multicorrect.records import PublicChoiceList
from prereg.errors import UserError


def test_study_config_is_valid():
    cfg = engine_config(CONFIG)
    assert cfg.split_names == ("validation", "test")
    assert cfg.thresholds().size == 101 and cfg.thresholds()[-1] == 1.0
    assert engine_config(cfg) is cfg


def test_the_typed_config_is_immutable_and_leaves_the_compiled_one_alone():
    before = json.dumps(CONFIG, sort_keys=True)
    cfg = engine_config(CONFIG)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.gap_scale = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        cfg.fields["lists"]["question"] = "prompt"  # type: ignore[index]
    assert isinstance(cfg, EngineConfig) and json.dumps(CONFIG, sort_keys=True) == before


@pytest.mark.parametrize(
    "change, message",
    [
        ({"metric-conventions": {"ece_bins": 12}}, "10-bin ECE only"),
        ({"threshold-grid": {"denominator": 100, "first": 0, "last": 100, "step": 3}}, "step"),
    ],
)
def test_values_that_would_change_the_figures_are_refused_at_run_time_too(change, message):
    # prereg compile refuses both; a configuration made by hand is refused before scoring
    with pytest.raises(UserError, match=message):
        engine_config(config(change))
    with pytest.raises(UserError, match=message):
        COMMANDS["diagnostic"](context(config(change)), argparse.Namespace(seeds=[42]))


def test_the_threshold_grid_comes_from_the_config():
    cfg = config({"threshold-grid": {"denominator": 20, "first": 1, "last": 19, "step": 1}})
    pairs = [pair("a", [0.6, 0.3, 0.1], {0})]
    curve = threshold_curve(pairs, cfg)
    assert [p.threshold for p in curve] == [k / 20 for k in range(1, 20)]
    fit = fit_threshold(pairs, cfg)
    assert (fit.threshold, fit.numerator, fit.denominator) == (0.35, 7, 20)


def test_the_tolerance_and_candidate_bounds_come_from_the_config():
    pub = PublicChoiceList("r", "q", ("a", "b", "c"))
    loose = config({"probability-sum-tolerance": 0.01})
    preds = collect_public_predictions(lambda x: [0.5, 0.3, 0.195], [pub], loose)
    assert preds["r"].probabilities == (0.5, 0.3, 0.195)
    with pytest.raises(ValueError, match="sum to"):
        collect_public_predictions(lambda x: [0.5, 0.3, 0.195], [pub], CONFIG)
    with pytest.raises(ValueError, match="outside"):
        collect_public_predictions(
            lambda x: [0.5, 0.3, 0.2],
            [pub],
            with_field(CONFIG, "lists", "candidates", min_items=4, max_items=10),
        )


def test_the_gap_scale_and_multi_correct_minimum_come_from_the_config():
    pairs = [pair("a", [0.5, 0.3, 0.2], {0, 1})]
    fit = fit_threshold(pairs, config({"metric-conventions": {"gap_scale": 1}}))
    assert fit.validation.gap_mean == pytest.approx(0.2)
    fit3 = fit_threshold(pairs, config({"metric-conventions": {"multi_correct_min": 3}}))
    assert fit3.validation.gap_count == 0 and fit3.validation.multi_correct_lists == 0


def test_field_names_and_split_names_come_from_the_config(tmp_path):
    cfg = config({"threshold-fit": {"fit": "dev", "evaluate": "heldout"}})
    cfg = with_field(cfg, "lists", "candidates", name="options")
    cfg = with_field(cfg, "labels", "correct", name="gold")
    rename = {
        "lists.jsonl": ('"candidates"', '"options"'),
        "labels.jsonl": ('"correct"', '"gold"'),
    }
    for name in ("lists.jsonl", "labels.jsonl", "predictions.jsonl", "binary.jsonl"):
        text = (FIXTURES / "small" / name).read_text()
        if name in rename:
            text = text.replace(*rename[name])
        text = text.replace('"validation"', '"dev"').replace('"test"', '"heldout"')
        (tmp_path / name).write_text(text)
    ctx = context(cfg)
    args = argparse.Namespace(
        lists=str(tmp_path / "lists.jsonl"),
        labels=str(tmp_path / "labels.jsonl"),
        predictions=str(tmp_path / "predictions.jsonl"),
        binary_outputs=None,
        rounding_decimals=None,
        out=str(tmp_path / "R.json"),
    )
    assert COMMANDS["score"](ctx, args) == 0
    doc = json.loads((tmp_path / "R.json").read_text())
    assert doc["splits"]["dev"]["exactCount"] == 2 and doc["splits"]["heldout"]["tp"] == 1
    assert len(doc["fitCurve"]) == 101
    # the study's own field names are now unknown fields
    ctx2 = context()
    args.out = str(tmp_path / "R2.json")
    with pytest.raises(UserError) as e:
        COMMANDS["score"](ctx2, args)
    assert any("options: unknown field" in p for p in e.value.problems)
    assert VAL == "validation"
