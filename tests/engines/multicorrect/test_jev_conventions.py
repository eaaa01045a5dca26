"""Each convention of the study page, on hand-computed cases."""

from __future__ import annotations

import dataclasses
import functools
from decimal import Decimal

import pytest
from jev_helpers import CONFIG, CONSTANTS, TEST, VAL, config, pair

from prereg.engines.multicorrect import (
    BinaryOutput,
    FittedThreshold,
    binary_ece,
    evaluate_test,
    fit_threshold,
    pack,
    threshold_curve,
)
from prereg.engines.multicorrect.config import engine_config
from prereg.engines.multicorrect.scoring import split_metrics
from prereg.errors import UserError

CFG = engine_config(CONFIG)


def metrics_at(pairs, t, split=VAL):
    return split_metrics(pack(pairs, CFG, split), t, CFG)


def curve_point(pairs, t):
    (pt,) = [p for p in threshold_curve(pairs, CFG) if p.threshold == t]
    return pt


# -- selection ----------------------------------------------------------------------------


def test_selection_is_inclusive_at_exactly_t():
    # G = {0, 1}; option 0 sits exactly on 0.29
    pairs = [pair("a", [0.29, 0.5, 0.21], {0, 1})]
    assert metrics_at(pairs, 0.29).exact_count == 1  # {0, 1} selected
    assert metrics_at(pairs, 0.30).exact_count == 0  # only {1}
    assert metrics_at(pairs, 0.21).exact_count == 0  # {0, 1, 2}
    assert curve_point(pairs, 0.29).exact_count == 1
    assert curve_point(pairs, 0.30).exact_count == 0
    assert curve_point(pairs, 0.29).tp == 2 and curve_point(pairs, 0.29).fp == 0


@pytest.mark.parametrize("k", range(101))
def test_every_grid_threshold_selects_the_decimal_it_names(k):
    # a probability written as the decimal k/100 is selected at threshold k/100, not above
    p = float(f"{k / 100:.2f}")
    pairs = [pair("a", [p, 1.0 - p], {0})]
    curve = threshold_curve(pairs, CFG)
    assert curve[k].threshold == p
    assert curve[k].tp == 1
    if k < 100:
        assert curve[k + 1].tp == 0


def test_refusal_scores_zero_even_with_empty_correct_set():
    pairs = [pair("r", None, set()), pair("a", [0.5, 0.5], set())]
    m = metrics_at(pairs, 0.51)
    assert m.lists == 2 and m.answered == 1
    assert m.exact_count == 1  # only the answered list
    assert m.exact_set_accuracy == 0.5
    assert m.refusals == 1 and m.refusals_empty_correct == 1 and m.refusals_nonempty_correct == 0
    assert [p.exact_count for p in threshold_curve(pairs[:1], CFG)] == [0] * 101


def test_answered_empty_correct_set_is_exact_only_above_max_p():
    pairs = [pair("a", [0.5, 0.3, 0.2], set())]
    assert metrics_at(pairs, 0.5).exact_count == 0
    assert metrics_at(pairs, 0.51).exact_count == 1
    curve = threshold_curve(pairs, CFG)
    assert [p.threshold for p in curve if p.exact_count] == [k / 100 for k in range(51, 101)]


def test_refusal_adds_its_correct_count_to_fn():
    pairs = [pair("r", None, {0, 2}), pair("a", [0.6, 0.4], {0})]
    m = metrics_at(pairs, 0.5)
    assert (m.tp, m.fp, m.fn) == (1, 0, 2)
    assert m.refusals_nonempty_correct == 1


def test_pooled_micro_counts_hand_computed():
    pairs = [
        pair("a", [0.6, 0.3, 0.1], {0, 1}),  # t=0.3: sel {0,1} -> tp 2
        pair("b", [0.5, 0.4, 0.1], {2}),  # sel {0,1} -> fp 2, fn 1
        pair("c", [0.2, 0.2, 0.2, 0.4], {3}),  # sel {3} -> tp 1
        pair("d", None, {0}),  # refusal: fn 1
    ]
    m = metrics_at(pairs, 0.3)
    assert (m.tp, m.fp, m.fn) == (3, 2, 2)
    assert m.micro_precision == 3 / 5
    assert m.micro_recall == 3 / 5
    assert m.micro_f1 == pytest.approx(0.6, abs=1e-15)
    assert m.exact_count == 2


def test_empty_selection_has_precision_zero():
    pairs = [pair("a", [0.5, 0.5], {0}), pair("b", [0.6, 0.4], set())]
    m = metrics_at(pairs, 0.7)
    assert (m.tp, m.fp, m.fn) == (0, 0, 1)
    assert m.micro_precision == 0.0 and m.micro_recall == 0.0 and m.micro_f1 == 0.0
    # nothing correct anywhere: recall undefined -> 0
    m2 = metrics_at([pair("b", [0.6, 0.4], set())], 0.5)
    assert (m2.tp, m2.fp, m2.fn) == (0, 1, 0)
    assert m2.micro_precision == 0.0 and m2.micro_recall == 0.0 and m2.micro_f1 == 0.0


# -- gap, below-uniform, ranking ------------------------------------------------------------


FIVE = CONSTANTS["diagnostic"]["five_copy"]


def test_five_copies_at_one_fifth_give_gap_zero():
    pairs = [pair("five", FIVE["even"], range(5), candidates=FIVE["candidates"])]
    m = metrics_at(pairs, 0.2)
    assert m.gap_count == 1 and m.gap_mean == 0.0
    # the copies are five candidates, not merged: at 0.2 all five are selected
    assert m.tp == 5 and m.exact_count == 1
    # 0.2 is not below the uniform share 1/5
    assert m.below_uniform_count == 0 and m.below_uniform_options == 5


def test_uneven_allocation_gives_gap_24():
    pairs = [pair("five", FIVE["uneven"], range(5), candidates=FIVE["candidates"])]
    m = metrics_at(pairs, 0.1)
    assert m.gap_mean == pytest.approx(24.0, abs=1e-12)
    assert m.gap_mean == 100 * (0.34 - 0.1)  # float, unrounded
    assert m.rounded(2).gap_mean == 24.0
    # 0.18, 0.14, 0.10 are below 1/5
    assert m.below_uniform_count == 3 and m.below_uniform_share == 3 / 5


def test_gap_needs_two_correct_options_and_an_answer():
    pairs = [
        pair("a", [0.7, 0.3], {0}),
        pair("b", None, {0, 1}),
        pair("c", [0.5, 0.2, 0.3], {0, 2}),
    ]
    m = metrics_at(pairs, 0.5)
    assert m.gap_count == 1 and m.gap_mean == pytest.approx(20.0)


def test_below_uniform_share_ties_with_a_distractor_disqualify():
    pairs = [
        pair("tie", [0.4, 0.3, 0.3], {0, 1}),  # correct 1 ties distractor 2 -> excluded
        pair("sep", [0.5, 0.3, 0.2], {0, 1}),  # separated: 0.3 < 1/2 -> 1 of 2
        pair("all", [0.6, 0.25, 0.15], {0, 1, 2}),  # no distractor: 0.25, 0.15 < 1/3 -> 2 of 3
        pair("one", [0.9, 0.1], {1}),  # |G| = 1: not multi-correct
    ]
    m = metrics_at(pairs, 0.5)
    assert m.below_uniform_lists == 2
    assert (m.below_uniform_count, m.below_uniform_options) == (3, 5)
    assert m.below_uniform_share == 3 / 5
    # ranking vs set recovery: 2 of the 3 multi-correct lists have top-|G| == G without a tie
    assert m.multi_correct_lists == 3 and m.top_k_exact_count == 2
    assert m.top_k_exact_share == 2 / 3
    # ...but at 0.5 none of them is recovered exactly
    assert m.exact_count == 0


def test_top_k_requires_no_tie_at_place_k():
    pairs = [
        pair("tie-at-k", [0.35, 0.25, 0.25, 0.15], {0, 1}),  # place 2 ties place 3
        pair("tie-inside", [0.3, 0.3, 0.2, 0.2], {0, 1}),  # tie inside G is fine
    ]
    m = metrics_at(pairs, 0.5)
    assert m.multi_correct_lists == 2 and m.top_k_exact_count == 1


def test_no_correct_confidence():
    pairs = [
        pair("a", [0.7, 0.3], set()),
        pair("b", [0.4, 0.35, 0.25], set()),
        pair("c", None, set()),
        pair("d", [0.9, 0.1], {0}),
    ]
    m = metrics_at(pairs, 0.5)
    assert m.no_correct_count == 2
    assert m.no_correct_max == 0.7
    assert m.no_correct_mean_max == pytest.approx(0.55, abs=1e-15)
    assert m.refusals_empty_correct == 1


def test_figures_without_lists_to_average_are_none():
    m = metrics_at([pair("a", [0.7, 0.3], {0})], 0.5)
    assert m.gap_mean is None and m.below_uniform_share is None and m.top_k_exact_share is None
    assert m.no_correct_mean_max is None and m.no_correct_max is None


# -- threshold protocol -------------------------------------------------------------------


def _validation():
    # exact at t in (0.3, 0.6] for a, (0.2, 0.6] for b: accuracy peaks over 0.31 .. 0.60
    return [
        pair("a", [0.6, 0.3, 0.1], {0}, VAL),
        pair("b", [0.7, 0.2, 0.1], {0}, VAL),
        pair("c", None, set(), VAL),
    ]


def test_fit_maximises_exact_accuracy_ties_to_smallest():
    fit = fit_threshold(_validation(), CONFIG)
    assert fit.threshold == 0.31 and fit.numerator == 31 and fit.denominator == 100
    assert fit.validation.exact_count == 2
    assert len(fit.curve) == 101
    assert [p.threshold for p in fit.curve if p.exact_count == 2] == [
        k / 100 for k in range(31, 61)
    ]


def test_fit_ties_to_largest_when_configured():
    fit = fit_threshold(_validation(), config({"threshold-fit": {"ties": "largest"}}))
    assert fit.threshold == 0.6


def test_fit_with_nothing_exact_takes_the_smallest_threshold():
    fit = fit_threshold([pair("a", [0.5, 0.5], {0}, VAL)], CONFIG)
    assert fit.threshold == 0.0 and fit.validation.exact_count == 0


def test_evaluate_uses_the_frozen_threshold_and_never_refits():
    fit = fit_threshold(_validation(), CONFIG)
    # on this test split the best threshold would be 0.2 (exact only when t <= 0.2)
    test = [pair("x", [0.8, 0.2], {0, 1}, TEST), pair("y", [0.75, 0.25], {0, 1}, TEST)]
    m = evaluate_test(fit, test, CONFIG)
    assert m.threshold == 0.31 and m.exact_count == 0
    own = max(threshold_curve(test, CONFIG), key=lambda p: (p.exact_count, -p.threshold))
    assert own.threshold == 0.0 and own.exact_count == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.threshold = 0.2  # type: ignore[misc]


def test_evaluate_refuses_overlapping_request_ids():
    fit = fit_threshold(_validation(), CONFIG)
    test = [pair("a", [0.6, 0.3, 0.1], {0}, TEST), pair("z", [0.6, 0.4], {0}, TEST)]
    with pytest.raises(UserError) as e:
        evaluate_test(fit, test, CONFIG)
    assert "overlap" in e.value.message
    assert e.value.problems == ["request 'a': in both splits"]


def test_splits_are_enforced():
    with pytest.raises(UserError, match="split 'test', expected validation"):
        fit_threshold([pair("a", [0.6, 0.4], {0}, TEST)], CONFIG)
    fit = fit_threshold(_validation(), CONFIG)
    with pytest.raises(UserError, match="expected test"):
        evaluate_test(fit, [pair("q", [0.6, 0.4], {0}, VAL)], CONFIG)
    with pytest.raises(UserError, match="FittedThreshold"):
        evaluate_test(0.31, [pair("q", [0.6, 0.4], {0}, TEST)], CONFIG)
    with pytest.raises(UserError, match="no lists"):
        fit_threshold([], CONFIG)
    assert isinstance(fit, FittedThreshold)


def test_config_binds_with_functools_partial():
    fit_v = functools.partial(fit_threshold, config=CONFIG)
    evaluate = functools.partial(evaluate_test, config=CONFIG)
    fit = fit_v(_validation())
    assert evaluate(fit, [pair("x", [0.8, 0.2], {0}, TEST)]).exact_count == 1


# -- calibration --------------------------------------------------------------------------


def _outs(qs, ys):
    return [BinaryOutput("r", j, q, y) for j, (q, y) in enumerate(zip(qs, ys, strict=True))]


def test_ece_bin_edges_at_exactly_point_one_and_point_two():
    # 0.1 is in the first bin [0, 0.1]; 0.15 and 0.2 share (0.1, 0.2]
    outs = _outs([0.1, 0.15, 0.2], [0, 0, 1])
    # (1/3)|0.1 - 0| + (2/3)|0.175 - 0.5| = 0.1/3 + 0.65/3 = 0.25
    assert binary_ece(outs, config=CONFIG) == pytest.approx(0.25, abs=1e-15)
    # if 0.2 fell in the next bin: (1/3)0.1 + (1/3)0.15 + (1/3)0.8 = 0.35
    assert binary_ece(_outs([0.1, 0.15, 0.2000001], [0, 0, 1]), config=CONFIG) == pytest.approx(
        (0.1 + 0.15 + (1 - 0.2000001)) / 3, abs=1e-15
    )


def test_first_bin_exclusion_renormalises_over_the_remaining_samples():
    outs = _outs([0.1, 0.15, 0.2], [0, 0, 1])
    # q <= 0.1 dropped; the two remaining share one bin: |0.175 - 0.5| = 0.325, not (2/3)0.325
    assert binary_ece(outs, True, config=CONFIG) == pytest.approx(0.325, abs=1e-15)
    assert binary_ece(_outs([0.05, 0.1], [0, 1]), True, config=CONFIG) is None
    assert binary_ece([], config=CONFIG) is None


def test_rounding_half_up_on_shortest_decimal_only_when_asked():
    # ECE of one sample with y = 0 is q itself
    for q, rounded in ((0.625, 0.63), (0.175, 0.18), (0.345, 0.35), (0.1251, 0.13)):
        outs = _outs([q], [0])
        assert binary_ece(outs, config=CONFIG) == q
        assert binary_ece(outs, config=CONFIG, rounding_decimals=2) == rounded
    # the float 0.175 lies just below 0.175 (and 0.345 below 0.345): rounding its exact binary
    # value half-up would give 0.17 (0.34); the shortest decimal form gives 0.18 (0.35)
    assert Decimal(0.175) < Decimal("0.175") and Decimal(0.345) < Decimal("0.345")
    assert round(0.175, 2) == 0.17


def test_rounding_applies_to_figures_not_to_threshold_or_counts():
    pairs = [pair(f"l{i}", [0.7, 0.3], {0} if i < 5 else {1}) for i in range(8)]
    fit = fit_threshold(pairs, CONFIG, rounding_decimals=2)
    raw = fit_threshold(pairs, CONFIG)
    assert raw.validation.exact_set_accuracy == 0.625
    assert fit.validation.exact_set_accuracy == 0.63
    assert fit.threshold == raw.threshold and fit.validation.exact_count == 5
    assert fit.curve[0].exact_set_accuracy == 0.0
    fit1 = fit_threshold(pairs, CONFIG, rounding_decimals=1)
    assert fit1.threshold == raw.threshold  # 0.31 stays 0.31 with one decimal
    assert raw.threshold == 0.31
    with pytest.raises(UserError, match="rounding_decimals"):
        fit_threshold(pairs, CONFIG, rounding_decimals=-1)


def test_a_split_of_refusals_only_scores_zero_everywhere():
    fit = fit_threshold([pair("a", None, {0}), pair("b", None, set())], CONFIG)
    assert fit.threshold == 0.0 and all(p.exact_count == 0 for p in fit.curve)
    v = fit.validation
    assert (v.lists, v.answered, v.exact_set_accuracy, v.tp, v.fp, v.fn) == (2, 0, 0.0, 0, 0, 1)
    assert (v.refusals, v.refusals_empty_correct, v.refusals_nonempty_correct) == (2, 1, 1)
    assert v.gap_mean is None and v.no_correct_max is None
