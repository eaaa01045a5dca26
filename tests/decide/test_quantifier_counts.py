"""The counts behind a rule's quantifiers (prereg.rules.quantifier_counts): for each at_least and
for_each, how many of its conditions or values met it, which, and whether it held. The figures
below are set by hand, so each count is known before the code runs."""

from __future__ import annotations

import math

from prereg.rules import (
    AllOf,
    AtLeast,
    Compare,
    ContrastResult,
    ForEach,
    Not,
    Verdict,
    decide,
    hypothesis_quantifiers,
    quantifier_counts,
)


def result(rid: str, p: float, estimate: float = 0.0) -> ContrastResult:
    return ContrastResult(rid, estimate, math.nan, math.nan, p=p)


RESULTS = {
    "ni-m2": result("ni-m2", 0.001),
    "ni-m3": result("ni-m3", 0.2),
    "ni-m4": result("ni-m4", 0.024999),
    "ni-m5": result("ni-m5", 0.025),  # on the threshold: lt does not hold
}


def p_below(target: str) -> Compare:
    return Compare(target, "p", "lt", 0.025)


def test_for_each_at_least_counts_the_values_that_met_it():
    rule = ForEach("model", ("m2", "m3", "m4", "m5"), "at_least", 2, p_below("ni-{model}"))
    [row] = quantifier_counts(rule, RESULTS, path="rule")
    # by hand: 0.001 < 0.025 and 0.024999 < 0.025; 0.2 and 0.025 are not below 0.025
    assert row == {
        "path": "rule.for_each",
        "quantifier": "at_least",
        "required": 2,
        "met": 2,
        "of": 4,
        "metBy": ["m2", "m4"],
        "notMetBy": ["m3", "m5"],
        "held": True,
        "name": "model",
    }
    assert decide(rule, (), RESULTS) == "supported"


def test_a_count_one_short_does_not_hold():
    rule = ForEach("model", ("m2", "m3", "m4", "m5"), "at_least", 3, p_below("ni-{model}"))
    [row] = quantifier_counts(rule, RESULTS, path="rule")
    assert (row["met"], row["of"], row["required"], row["held"]) == (2, 4, 3, False)
    assert decide(rule, (), RESULTS) == "not-supported"


def test_all_and_any_require_every_value_and_one():
    every = ForEach("model", ("m2", "m4"), "all", None, p_below("ni-{model}"))
    some = ForEach("model", ("m3", "m5"), "any", None, p_below("ni-{model}"))
    [a] = quantifier_counts(every, RESULTS, path="rule")
    [b] = quantifier_counts(some, RESULTS, path="rule")
    assert (a["required"], a["met"], a["of"], a["held"]) == (2, 2, 2, True)
    assert (b["required"], b["met"], b["of"], b["held"]) == (1, 0, 2, False)
    assert b["notMetBy"] == ["m3", "m5"]


def test_at_least_names_comparisons_by_target_and_others_by_position():
    rule = AtLeast(
        2,
        (
            p_below("ni-m2"),
            AllOf((p_below("ni-m3"), p_below("ni-m4"))),
            Not(p_below("ni-m3")),
        ),
    )
    [row] = quantifier_counts(rule, RESULTS, path="rule")
    assert row["path"] == "rule.at_least"
    assert row["metBy"] == ["ni-m2", "of[2]"]  # of[1] fails: ni-m3's P is 0.2
    assert row["notMetBy"] == ["of[1]"]
    assert (row["met"], row["of"], row["held"]) == (2, 3, True)


def test_a_quantifier_nested_in_for_each_is_counted_per_value_with_its_binding():
    results = {
        f"{t}-{lang}": result(f"{t}-{lang}", p)
        for (t, lang), p in {
            ("a", "py"): 0.01,
            ("b", "py"): 0.01,
            ("a", "rs"): 0.01,
            ("b", "rs"): 0.5,
        }.items()
    }
    inner = ForEach("t", ("a", "b"), "all", None, p_below("{t}-{lang}"))
    rule = AllOf((ForEach("lang", ("py", "rs"), "any", None, inner),))
    rows = quantifier_counts(rule, results, path="rule")
    assert [r["path"] for r in rows] == [
        "rule.all_of[0].for_each",
        "rule.all_of[0].for_each.condition.for_each",
        "rule.all_of[0].for_each.condition.for_each",
    ]
    outer, py, rs = rows
    assert (outer["metBy"], outer["held"]) == (["py"], True)
    assert py["binding"] == {"lang": "py"} and (py["met"], py["held"]) == (2, True)
    assert rs["binding"] == {"lang": "rs"} and rs["notMetBy"] == ["b"]
    assert "binding" not in outer


def test_verdict_quantifiers_name_their_verdict_and_plain_rules_give_none():
    verdicts = (
        Verdict("gap", ForEach("model", ("m2", "m3"), "any", None, p_below("ni-{model}"))),
        Verdict("none", None),
    )
    [row] = hypothesis_quantifiers(None, verdicts, RESULTS)
    assert row["path"] == "verdicts[0].when.for_each" and row["verdict"] == "gap"
    assert (row["met"], row["metBy"]) == (1, ["m2"])
    assert hypothesis_quantifiers(p_below("ni-m2"), (), RESULTS) == []


def _tree(draw, depth: int):
    from hypothesis import strategies as st

    kind = draw(st.sampled_from(["leaf", "all", "any", "not", "at_least", "for_each"]))
    if depth == 0 or kind == "leaf":
        return p_below(f"c{draw(st.integers(0, 5))}")
    if kind == "for_each":
        return ForEach("i", ("0", "1", "2"), "at_least", draw(st.integers(1, 3)), p_below("c{i}"))
    if kind == "not":
        return Not(_tree(draw, depth - 1))
    kids = tuple(_tree(draw, depth - 1) for _ in range(draw(st.integers(1, 3))))
    if kind == "at_least":
        return AtLeast(draw(st.integers(1, len(kids))), kids)
    from prereg.rules import AnyOf

    return AllOf(kids) if kind == "all" else AnyOf(kids)


def test_every_count_agrees_with_evaluate_on_random_trees():
    # each quantifier's held equals evaluate() of the node it sits at, and met equals the number
    # of its parts evaluate() finds true: the counts describe the decision that was made
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from prereg.rules import evaluate

    @settings(max_examples=150, deadline=None)
    @given(st.data(), st.lists(st.sampled_from([0.001, 0.5]), min_size=6, max_size=6))
    def check(data, ps):
        results = {f"c{i}": result(f"c{i}", p) for i, p in enumerate(ps)}
        node = _tree(data.draw, 3)
        wrapped = AtLeast(1, (node,))  # a quantifier at the root, whatever the tree
        rows = quantifier_counts(wrapped, results, path="rule")
        assert rows[0]["held"] == evaluate(wrapped, results) == evaluate(node, results)
        for row in rows:
            assert row["met"] == len(row["metBy"]) and row["of"] == row["met"] + len(
                row["notMetBy"]
            )
            if row["quantifier"] == "at_least" and "binding" not in row:
                assert row["held"] == (row["met"] >= row["required"])
        fe = [r for r in rows if r["quantifier"] == "at_least" and r.get("name") == "i"]
        for r in fe:
            assert r["metBy"] == [v for v in ("0", "1", "2") if ps[int(v)] < 0.025]

    check()
