"""prereg.decide.explain: compiled rules read back for the verdict explanations."""

from __future__ import annotations


def test_a_compiled_rule_reads_back_into_the_spec_form():
    """SCORE.md's explainer reads a compiled rule back into the spec's condition form: every
    comparison, quantifier and list survives (SCORE.md itself is read in tests/demo and in the
    answer-position tests)."""
    from prereg import rules as r
    from prereg.decide.explain import as_condition

    rule = r.ForEach(
        "pool",
        values=("a", "b"),
        quantifier="at_least",
        count=2,
        condition=r.AllOf(
            (
                r.Compare("x-{pool}", "upper", "lt", 0),
                r.AnyOf((r.Compare("y", "p", "le", 0.05, decimals=3),)),
                r.AtLeast(1, (r.Compare("z", "abs_estimate", "ge", 0.1),)),
            )
        ),
    )
    cond = as_condition(rule)
    inner = cond["for_each"]["condition"]["all_of"]
    assert inner[0] == {
        "compare": {"target": "x-{pool}", "quantity": "upper", "op": "lt", "value": 0}
    }
    assert inner[1]["any_of"][0]["compare"]["target"] == "y"
    assert inner[2]["at_least"]["count"] == 1
    assert inner[2]["at_least"]["of"][0]["compare"]["quantity"] == "abs_estimate"
    assert as_condition(None) is None
