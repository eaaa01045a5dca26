"""The eight-contract diagnostic and the diagnostic command."""

from __future__ import annotations

import argparse
import copy
import json
from fractions import Fraction

import pytest
from jev_helpers import CONFIG, CONSTANTS, context

from prereg.digest import canonical_json
from prereg.engines.multicorrect import COMMANDS, diagnostic
from prereg.engines.multicorrect import contracts as contracts_module
from prereg.engines.multicorrect.scoring import FittedThreshold, fit_threshold
from prereg.errors import UserError

IDS = CONSTANTS["diagnostic"]["contracts"]


def _ctx(cfg=CONFIG):
    return context(cfg, digest="sha256:" + "cd" * 32)


@pytest.mark.parametrize("seed", [42, 43, 44])
def test_diagnostic_passes_for_the_study_seeds(seed):
    r = diagnostic(seed, CONFIG)
    assert r["seed"] == seed
    assert [c["contract"] for c in r["contracts"]] == IDS
    assert [c["number"] for c in r["contracts"]] == list(range(1, 9))
    failed = [c for c in r["contracts"] if not c["passed"]]
    assert failed == [] and r["passed"] is True
    figures = {c["contract"]: c["figures"] for c in r["contracts"]}
    assert figures["ranking_vs_set_recovery"]["ranked_but_not_recovered"] > 0
    assert figures["below_uniform_counted"]["below_uniform_count"] > 0
    assert figures["five_copy_gap"]["even_gap"] == 0.0
    assert figures["five_copy_gap"]["uneven_gap"] == pytest.approx(24.0, abs=1e-12)
    assert figures["public_callback_blind"]["types_received"] == ["PublicChoiceList"]
    fb = figures["first_bin_exclusion_renormalised"]
    assert fb["first_bin_samples"] > 0 and fb["remaining_samples"] > 0
    assert fb["ece_excluding_first_bin"] != fb["unrenormalised_partial_sum"]


def test_diagnostic_is_deterministic_and_json():
    a, b = diagnostic(42, CONFIG), diagnostic(42, CONFIG)
    assert canonical_json(a) == canonical_json(b)
    assert canonical_json(diagnostic(43, CONFIG)) != canonical_json(a)


def test_command_prints_results_and_exits_zero(capsys):
    assert COMMANDS["diagnostic"](_ctx(), argparse.Namespace(seeds=[42, 43, 44])) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert out.out.encode() == canonical_json(doc) + b"\n"
    assert doc["passed"] is True and [s["seed"] for s in doc["seeds"]] == [42, 43, 44]
    assert doc["specDigest"] == "sha256:" + "cd" * 32
    assert doc["schemaVersion"] == CONSTANTS["output-schemas"]["diagnostic"]
    assert out.err == ""


def test_a_wrong_reference_fails_contract_seven_and_the_command(capsys):
    cfg = copy.deepcopy(CONFIG)
    cfg["constants"]["diagnostic"]["five_copy"]["uneven_gap"] = 25
    r = diagnostic(42, cfg)
    assert [c["number"] for c in r["contracts"] if not c["passed"]] == [7]
    assert COMMANDS["diagnostic"](_ctx(cfg), argparse.Namespace(seeds=[42])) == 1
    err = capsys.readouterr().err
    assert "seed 42: contract 7 (five_copy_gap) failed" in err


def test_a_refitting_evaluator_fails_the_frozen_threshold_contract(monkeypatch):
    real = contracts_module.evaluate_test

    def refitting(fit, test, config, **kw):
        # a broken evaluator: refits on the test split it was given
        relabelled = [(type(r)(r.public, r.correct, fit.split), p) for r, p in test]
        own = fit_threshold(relabelled, config)
        frozen = FittedThreshold(
            own.numerator, own.denominator, own.threshold, fit.split, fit.request_ids,
            fit.curve, fit.validation,
        )  # fmt: skip
        return real(frozen, test, config, **kw)

    monkeypatch.setattr(contracts_module, "evaluate_test", refitting)
    r = diagnostic(42, CONFIG)
    failed = {c["contract"] for c in r["contracts"] if not c["passed"]}
    assert "threshold_frozen" in failed


def test_a_leaking_collector_fails_the_public_callback_contract(monkeypatch):
    real = contracts_module.collect_public_predictions

    def leaky(provider, lists, config):
        if lists and not hasattr(lists[0], "candidates"):  # given EvaluatorRows: pass them on
            return {r.request_id: provider(r) for r in lists}
        return real(provider, lists, config)

    monkeypatch.setattr(contracts_module, "collect_public_predictions", leaky)
    r = diagnostic(42, CONFIG)
    failed = {c["contract"] for c in r["contracts"] if not c["passed"]}
    assert failed == {"public_callback_blind"}


def test_the_configured_contracts_run_in_order():
    cfg = copy.deepcopy(CONFIG)
    cfg["constants"]["diagnostic"]["contracts"] = ["five_copy_gap", "overlap_refused"]
    r = diagnostic(44, cfg)
    assert [(c["number"], c["contract"]) for c in r["contracts"]] == [
        (1, "five_copy_gap"),
        (2, "overlap_refused"),
    ]


@pytest.mark.parametrize("seeds", [[], [42, 42], [-1], [True]])
def test_bad_seeds_are_refused(seeds):
    with pytest.raises(UserError, match="--seeds"):
        COMMANDS["diagnostic"](_ctx(), argparse.Namespace(seeds=seeds))


# -- the diagnostic's pass: the registered rule (hypothesis diagnostic-passes) ---------------


def _one_contract_fails(monkeypatch, contract: str, seeds: set[int] | None = None):
    """Contract ``contract`` reports failure (on ``seeds`` only, when given)."""
    real = contracts_module.CONTRACTS[contract]

    def failing(ctx):
        res = real(ctx)
        seed = int(ctx["syn"].fit_rows[0].public.request_id.split("-")[1])
        return {**res, "passed": False} if seeds is None or seed in seeds else res

    monkeypatch.setitem(contracts_module.CONTRACTS, contract, failing)


def test_the_pass_is_the_registered_rule_over_the_held_figures():
    from prereg.engines.multicorrect.config import engine_config

    d = engine_config(CONFIG).diagnostic.decision
    assert d.hypothesis == CONSTANTS["diagnostic"]["hypothesis"] == "diagnostic-passes"
    assert d.verdicts == () and d.rule.quantifier == "all"
    assert d.rule.values == tuple(IDS)
    assert (d.rule.condition.target, d.rule.condition.op, d.rule.condition.value) == (
        "held-{contract}",
        "ge",
        1.0,
    )


@pytest.mark.parametrize("contract", ["threshold_frozen", "first_bin_exclusion_renormalised"])
def test_one_failing_contract_fails_the_seed_and_the_diagnostic(monkeypatch, capsys, contract):
    _one_contract_fails(monkeypatch, contract)
    r = diagnostic(42, CONFIG)
    held = [c["contract"] for c in r["contracts"] if c["passed"]]
    assert len(held) == 7 and contract not in held
    assert r["passed"] is False
    assert COMMANDS["diagnostic"](_ctx(), argparse.Namespace(seeds=[42, 43])) == 1
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["passed"] is False and [s["passed"] for s in doc["seeds"]] == [False, False]
    assert f"contract {IDS.index(contract) + 1} ({contract}) failed" in out.err


def test_a_contract_failing_on_one_seed_fails_only_that_seed(monkeypatch, capsys):
    from prereg.engines.multicorrect.figures import held_figures

    _one_contract_fails(monkeypatch, "overlap_refused", seeds={43})
    assert COMMANDS["diagnostic"](_ctx(), argparse.Namespace(seeds=[42, 43, 44])) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [s["passed"] for s in doc["seeds"]] == [True, False, True]
    assert doc["passed"] is False
    # the figure the rule read: the contract held on 2 of the 3 seeds
    figures = held_figures(doc["seeds"], IDS)
    assert figures["held-overlap_refused"] == Fraction(2, 3)
    assert all(v == 1 for k, v in figures.items() if k != "held-overlap_refused")
