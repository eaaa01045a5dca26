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


def test_without_prereg_md_a_rule_is_not_called_reported_only(tmp_path):
    """A compiled study whose PREREG.md is gone: the explanation says the words were not
    found, and still lists the deciding figures; a reported-only verdict stays so."""
    import types

    from prereg import rules as r
    from prereg.decide.explain import explanation_lines, verdict_explanations

    module = types.SimpleNamespace(__file__=str(tmp_path / "__init__.py"))
    rules = types.SimpleNamespace(
        RULES={"h1": (r.Compare("c1", "p", "lt", 0.05), ()), "h2": (None, ())}
    )
    doc = {
        "verdicts": {"h1": "supported", "h2": "reported-only"},
        "contrasts": [{"id": "c1", "p": 0.01}],
        "estimates": [],
    }
    lines = explanation_lines(verdict_explanations(module, rules, doc))
    text = "\n".join(lines)
    assert "- `h1`: (its rule's words were not found" in text
    assert "  - deciding figures: P < 0.05: met by 1 of 1: c1 (0.01)" in text
    assert "- `h2`: reported only" in text


def test_a_comparison_no_figure_met_names_the_figures_it_read():
    from prereg.reports.verdicts import deciding_figures

    hyp = {"rule": {"compare": {"target": "c-{k}", "quantity": "p", "op": "lt", "value": 0.05}}}
    figures = [{"id": f"c-{k}", "p": p} for k, p in enumerate([0.2, 0.06, None, 0.5])]
    # none met: the values read are listed, a figure without the quantity as missing
    assert (
        deciding_figures(hyp, figures)
        == "P < 0.05: met by 0 of 4 (c-0 (0.2), c-1 (0.06), c-2 (missing), c-3 (0.5))"
    )
    many = [{"id": f"c-{k}", "p": 0.5} for k in range(10)]
    assert deciding_figures(hyp, many).endswith("c-7 (0.5), …)")
    # some met: those are listed, as before
    figures[1]["p"] = 0.01
    assert deciding_figures(hyp, figures) == "P < 0.05: met by 1 of 4: c-1 (0.01)"


def test_a_missing_figure_is_named_with_the_reason_its_method_gives():
    """A method that cannot give a figure (the exact Jonckheere-Terpstra P of tied data) says
    why in ``extra.undefined``: the deciding figures name the figure and that reason, where
    they used to say "met by 0 of 1" and nothing else. Under `not` the missing comparison is
    false, so the negation holds and the figure is listed as meeting it."""
    from prereg.reports.verdicts import deciding_figures

    why = "the exact distribution is for data without ties"
    row = {"id": "jt", "p": None, "statistic": 65.5, "extra": {"undefined": why}}
    hyp = {"rule": {"compare": {"target": "jt", "quantity": "p", "op": "le", "value": 0.05}}}
    assert deciding_figures(hyp, [row]) == f"P ≤ 0.05: met by 0 of 1 (jt (missing: {why}))"
    negated = {"rule": {"not": hyp["rule"]}}
    assert deciding_figures(negated, [row]) == (
        f"not (P ≤ 0.05): met by 1 of 1: jt (missing: {why})"
    )
    # the figure the method did give is shown as before
    stat = {"rule": {"compare": {"target": "jt", "quantity": "statistic", "op": "ge", "value": 66}}}
    assert deciding_figures(stat, [row]) == "statistic ≥ 66: met by 0 of 1 (jt (65.5))"


def test_a_compiled_rule_read_back_is_the_same_rule():
    """as_condition writes a compiled rule back in the spec's form; the compiler's own reader
    (prereg.rules.condition) reads that form back to the same node tree, for_each values,
    `not` and decimals included (without the values no target of a for_each is known)."""
    from prereg import rules as r
    from prereg.decide.explain import as_condition

    node = r.ForEach(
        "m",
        ("m1", "m2"),
        "at_least",
        2,
        r.AllOf(
            (
                r.Compare("c-{m}", "estimate", "ge", 0.1, 3),
                r.Not(r.Compare("c-{m}", "adjusted_p", "gt", 0.05)),
                r.AnyOf((r.AtLeast(1, (r.Compare("d", "upper", "lt", 0.0),)),)),
            )
        ),
    )
    assert r.condition(as_condition(node)) == node
