"""Figures that draw what decides a verdict (prereg.reports.decides) and the comparisons a rule
reads (prereg.reports.verdicts.comparisons): every expected value below is worked out by hand
from the rule and the counts written in the test."""

from __future__ import annotations

import html
import re

from prereg.reports import decides
from prereg.reports.verdicts import comparisons, deciding_figures


def cmp(target, quantity, op, value, **extra):
    return {"compare": {"target": target, "quantity": quantity, "op": op, "value": value, **extra}}


def contrast(cid, ak, an, bk, bn, lower, upper, hypothesis="h1", **extra):
    """A reported contrast of two proportions (estimate as its float, as SCORE.json has it)."""
    return {
        "id": cid, "hypothesis": hypothesis, "metric": "accuracy",
        "a": {"k": ak, "n": an, "estimate": ak / an}, "b": {"k": bk, "n": bn, "estimate": bk / bn},
        "estimate": ak / an - bk / bn, "lower": lower, "upper": upper,
        "interval": "newcombe-hybrid", "level": 0.95, "test": "none", **extra,
    }  # fmt: skip


# -- the comparisons a rule reads ---------------------------------------------------------------


def test_a_for_each_binds_the_targets_so_a_longer_id_with_the_same_start_is_not_read():
    """``h3-{pool}-{outcome}`` under for_each pool in (a, b) and outcome in (x) reads exactly
    h3-a-x and h3-b-x; h3-said-yes-a-x (an estimate of the same hypothesis whose id a
    wildcard pattern would match) is not read, so the count is "of 2", not "of 3"."""
    hyp = {
        "rule": {"for_each": {"name": "pool", "values": ["a", "b"], "quantifier": "all",
                 "condition": {"for_each": {"name": "outcome", "values": ["x"], "quantifier": "any",
                               "condition": cmp("h3-{pool}-{outcome}", "lower", "gt", 0.1)}}}}
    }  # fmt: skip
    (c,) = comparisons(hyp)
    assert c.targets == ["h3-a-x", "h3-b-x"] and not c.negated and c.verdict is None
    figures = [
        {"id": "h3-a-x", "lower": 0.2},
        {"id": "h3-b-x", "lower": 0.05},
        {"id": "h3-said-yes-a-x", "lower": 0.6},
    ]
    assert c.reads("h3-a-x") and not c.reads("h3-said-yes-a-x")
    assert deciding_figures(hyp, figures) == "lower bound > 0.1: met by 1 of 2: h3-a-x (0.2)"


def test_a_placeholder_no_for_each_binds_still_matches_as_a_pattern():
    hyp = {"rule": cmp("c-{k}", "p", "lt", 0.05)}
    (c,) = comparisons(hyp)
    assert c.targets == ["c-{k}"] and c.reads("c-1") and c.reads("c-long-id")
    assert not c.reads("d-1") and not c.reads("c-")


def test_a_negated_comparison_is_met_when_it_does_not_hold():
    hyp = {"rule": {"not": cmp("c1", "estimate", "gt", 0.0)}}
    (c,) = comparisons(hyp)
    assert c.negated
    # estimate -0.1 is not > 0, so the rule's "not (estimate > 0)" is met
    assert deciding_figures(hyp, [{"id": "c1", "estimate": -0.1}]) == (
        "not (estimate > 0.0): met by 1 of 1: c1 (-0.1)"
    )
    assert decides.meets({"id": "c1", "estimate": -0.1}, c)
    assert not decides.meets({"id": "c1", "estimate": 0.1}, c)


def test_comparisons_by_verdict_keep_each_verdicts_own_and_merge_them_otherwise():
    same = cmp("c1", "upper", "lt", 0.0)
    hyp = {"verdicts": [{"verdict": "up", "when": same}, {"verdict": "down", "when": same},
                        {"verdict": "neither"}]}  # fmt: skip
    assert [c.verdict for c in comparisons(hyp)] == [None]
    assert [c.verdict for c in comparisons(hyp, by_verdict=True)] == ["up", "down"]


# -- what a figure draws ------------------------------------------------------------------------


def test_the_plan_draws_the_rule_threshold_over_the_rows_it_reads_and_decides_exactly():
    """h1: for model in (m1, m2), estimate >= 0.1 and adjusted P < 0.05.  m1 has 7/10 against
    6/10: the difference is exactly 1/10, which meets >= 0.1 (the float 0.7 - 0.6 is
    0.09999999999999998 and would not); m2 has 5/10 against 5/10 (0, misses).  c-other is
    h1's own contrast the rule does not read."""
    hyp = {
        "id": "h1",
        "rule": {"for_each": {"name": "m", "values": ["m1", "m2"], "quantifier": "any",
                 "condition": {"all_of": [cmp("c-{m}", "estimate", "ge", 0.1),
                                          cmp("c-{m}", "adjusted_p", "lt", 0.05)]}}},
    }  # fmt: skip
    rows = [
        contrast("c-m1", 7, 10, 6, 10, -0.3, 0.45, adjustedP=0.01),
        contrast("c-other", 9, 10, 1, 10, 0.5, 0.95),
        contrast("c-m2", 5, 10, 5, 10, -0.4, 0.4, adjustedP=0.5),
    ]
    assert rows[0]["estimate"] < 0.1  # the float alone would call c-m1 a miss
    ((h, panel),) = decides.panels([hyp], {"contrasts": rows})
    assert h is hyp and [r["id"] for r in panel.rows] == ["c-m1", "c-other", "c-m2"]
    drawn = decides.plan(hyp, panel)
    # c-m1 meets both comparisons, c-other is not read, c-m2 misses both
    assert drawn.state == ["met", "unread", "missed"]
    # positions count from the bottom: c-m1 at 2, c-other at 1, c-m2 at 0
    ((t,),) = [drawn.thresholds]
    assert t.label == "rule: estimate ≥ 0.1" and t.xs == [0.1] and t.runs == [(0, 0), (2, 2)]
    assert drawn.margins == []
    (column,) = drawn.columns
    assert column.heading == "adjusted P\n< 0.05?"
    assert column.cells == {0: ("0.01", True), 2: ("0.5", False)}


def test_an_absolute_threshold_is_drawn_on_both_sides_and_a_tests_margin_beside_it():
    hyp = {"id": "h2", "rule": {"all_of": [cmp("c1", "abs_estimate", "le", 0.15),
                                           cmp("c2", "p", "lt", 0.025)]}}  # fmt: skip
    rows = [
        contrast("c1", 5, 10, 4, 10, -0.3, 0.5, hypothesis="h2"),
        contrast("c2", 8, 10, 9, 10, -0.4, 0.2, hypothesis="h2", test="farrington-manning",
                 alternative="greater", margin=-0.05, p=0.01),
        contrast("c3", 8, 10, 9, 10, -0.4, 0.2, hypothesis="h2", margin=-0.05),  # test none
    ]  # fmt: skip
    ((_, panel),) = decides.panels([hyp], {"contrasts": rows})
    drawn = decides.plan(hyp, panel)
    (t,) = drawn.thresholds
    assert t.label == "rule: |estimate| ≤ 0.15" and t.xs == [-0.15, 0.15] and t.runs == [(2, 2)]
    # |5/10 - 4/10| = 1/10 <= 0.15: met; c2's P 0.01 < 0.025: met; c3 is not read
    assert drawn.state == ["met", "met", "unread"]
    # the margin of the test that has one; c3 registers no test, so its margin is not drawn
    (m,) = drawn.margins
    assert m.label == "test's margin -0.05 (greater)" and m.xs == [-0.05] and m.runs == [(1, 1)]


def test_a_list_of_verdicts_labels_each_threshold_with_its_verdict_and_judges_no_row():
    hyp = {
        "id": "h3a",
        "verdicts": [
            {"verdict": "specific", "when": cmp("c1", "upper", "lt", 0.0)},
            {"verdict": "general", "when": cmp("c1", "abs_estimate", "le", 0.1)},
            {"verdict": "mixed"},
        ],
    }
    ((_, panel),) = decides.panels([hyp], {"contrasts": [contrast("c1", 1, 10, 5, 10, -0.7, -0.1, hypothesis="h3a")]})  # fmt: skip
    drawn = decides.plan(hyp, panel)
    assert [t.label for t in drawn.thresholds] == [
        "specific: upper bound < 0",
        "general: |estimate| ≤ 0.1",
    ]
    assert drawn.state == ["read"]


def test_panels_follow_the_rule_to_other_hypotheses_and_skip_the_reported_only():
    """h2's rule reads h1's contrasts (it registers none of its own); a reported-only
    hypothesis and one whose rule reads only study figures get no panel; estimates and
    contrasts, and contrasts of two metrics, are separate panels (separate scales)."""
    hyps = [
        {"id": "h1", "rule": cmp("c-{x}", "p", "lt", 0.05)},
        {"id": "h2", "rule": cmp("c-b", "upper", "lt", 0.15)},
        {"id": "acc", "reported_only": True},
        {"id": "power", "rule": cmp("power-figure", "estimate", "ge", 0.8)},
    ]
    doc = {
        "contrasts": [
            contrast("c-a", 5, 10, 4, 10, -0.3, 0.5),
            contrast("c-b", 5, 10, 4, 10, -0.3, 0.5),
            {**contrast("c-t", 5, 10, 4, 10, -0.3, 0.5), "metric": "latency"},
        ],
        "estimates": [{"id": "e-a", "hypothesis": "h1", "metric": "accuracy", "estimate": 0.5,
                       "k": 5, "n": 10, "lower": 0.2, "upper": 0.8},
                      {"id": "acc-1", "hypothesis": "acc", "metric": "accuracy", "estimate": 0.5}],
    }  # fmt: skip
    got = [(h["id"], p.kind, p.scale, [r["id"] for r in p.rows]) for h, p in decides.panels(hyps, doc)]  # fmt: skip
    assert got == [
        ("h1", "contrast", "accuracy", ["c-a", "c-b"]),
        ("h1", "contrast", "latency", ["c-t"]),
        ("h1", "estimate", "accuracy", ["e-a"]),
        ("h2", "contrast", "accuracy", ["c-b"]),
    ]
    figures = decides.blocks(hyps, doc, {"h1": "supported", "h2": "supported"})
    assert [f.name for f in figures] == ["decides-h1", "decides-h1-2", "decides-h1-3", "decides-h2"]
    # the SVG says what is drawn, in text a reader (and a screen reader) gets
    text = html.unescape(figures[3].svg)
    assert "rule: upper bound < 0.15" in text and "no difference" in text
    assert 'aria-label="h2: contrasts of accuracy (verdict supported)"' in figures[3].svg
    assert "Vermilion lines: the thresholds the rule compares them with" in figures[3].caption
    # h1 compares the unadjusted P: its column is headed "P", and a contrast without a P
    # (none was reported here) shows a dash and "no": a missing figure meets no comparison
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)<", figures[0].svg)]
    assert "P" in texts and "< 0.05?" in texts and "adjusted P" not in texts
    assert texts.count("– no") == 2


def test_a_long_id_is_wrapped_at_separators_only():
    label = "h1-missing-contrastive-h1-pool-a-pool-b"
    lines = decides.wrap(label).split("\n")
    assert "".join(lines) == label
    assert len(lines) == 2 and all(len(x) <= 24 for x in lines)
    assert all(x.endswith("-") for x in lines[:-1])  # a break follows a separator
    assert decides.wrap("short-id") == "short-id"
    # a part longer than the width stays whole rather than being cut inside a word
    assert decides.wrap("a-" + "x" * 30) == "a-\n" + "x" * 30


def test_a_p_column_writes_p_as_the_study_registers_it_unless_that_crosses_the_threshold():
    """d17 registers P values to 4 significant digits; its tables show 0.0002593 and 7.961e-08,
    so its figure's P column does too (not "< 0.001" or 3 digits). Where 4 digits would read
    on the threshold (0.049996 as "0.05", which is not < 0.05, though the P is) the cell takes
    as many digits as it needs to stay on the P's side."""
    hyp = {"id": "h1", "rule": cmp("c-{m}", "adjusted_p", "lt", 0.05)}
    rows = [
        contrast("c-a", 7, 10, 6, 10, -0.3, 0.45, adjustedP=0.00025926),
        contrast("c-b", 7, 10, 6, 10, -0.3, 0.45, adjustedP=7.9613e-08),
        contrast("c-c", 7, 10, 6, 10, -0.3, 0.45, adjustedP=0.049996),
        contrast("c-d", 7, 10, 6, 10, -0.3, 0.45, adjustedP=0.76171),
    ]
    ((_, panel),) = decides.panels([hyp], {"contrasts": rows})

    def four(p):  # as d17's tables write a P value: 4 significant digits, as a float prints
        return f"{float(f'{float(p):.4g}')}"

    (column,) = decides.plan(hyp, panel, p_value=four).columns
    assert column.cells == {
        0: ("0.0002593", True),
        1: ("7.961e-08", True),
        2: ("0.049996", True),
        3: ("0.7617", False),
    }
    # without the study's rounding: the reports' usual 3 digits and "< 0.001"
    (column,) = decides.plan(hyp, panel).columns
    assert column.cells == {
        0: ("< 0.001", True),
        1: ("< 0.001", True),
        2: ("0.049996", True),
        3: ("0.762", False),
    }
