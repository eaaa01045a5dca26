"""Decision rules as data: expansion, estimates, gates and evaluation (prereg.rules)."""

import math

from prereg.compiler.semantic import _expansions
from prereg.rules import (
    AllOf,
    AnyOf,
    AtLeast,
    Compare,
    Contrast,
    ContrastResult,
    Family,
    ForEach,
    Gate,
    Verdict,
    adjust_families,
    decide,
    evaluate,
    failed_gates,
)


def test_pairs_expansion_is_unordered_pairs_in_list_order():
    item = {
        "expand": [
            {"name": "hops", "values": ["1", "3"]},
            {"names": ["x", "y"], "pairs_of": ["a", "b", "c"]},
        ]
    }
    got = [(b["hops"], b["x"], b["y"]) for b in _expansions(item)]
    assert got == [
        ("1", "a", "b"),
        ("1", "a", "c"),
        ("1", "b", "c"),
        ("3", "a", "b"),
        ("3", "a", "c"),
        ("3", "b", "c"),
    ]


def _res(cid, est, lo, hi, p=None):
    return ContrastResult(cid, estimate=est, lower=lo, upper=hi, p=p)


def test_holm_family_and_threshold_flip_exactly():
    contrasts = [
        Contrast(f"c{i}", "h1", "acc", {}, {}, "newcombe-hybrid", 0.95, "pooled-z", "fam")
        for i in range(3)
    ]
    families = {"fam": Family("fam", "holm", 0.05)}
    results = {
        "c0": _res("c0", 0.2, 0.1, 0.3, 0.01),
        "c1": _res("c1", 0.1, 0.0, 0.2, 0.02),
        "c2": _res("c2", 0.0, -0.1, 0.1, 0.5),
    }
    adjusted = adjust_families(results, contrasts, families)
    assert math.isclose(adjusted["c0"].adjusted_p, 0.03)
    assert math.isclose(adjusted["c1"].adjusted_p, 0.04)
    assert adjusted["c2"].adjusted_p == 0.5
    meets = AllOf(
        (Compare("c{k}", "adjusted_p", "lt", 0.05), Compare("c{k}", "abs_estimate", "ge", 0.10))
    )
    assert evaluate(meets, adjusted, {"k": "0"}) is True
    assert evaluate(meets, adjusted, {"k": "1"}) is True  # |0.1| >= 0.10 holds at the threshold
    assert evaluate(meets, adjusted, {"k": "2"}) is False
    rule = ForEach("k", ("0", "1", "2"), "at_least", 2, meets)
    assert evaluate(rule, adjusted) is True
    assert evaluate(ForEach("k", ("0", "1", "2"), "all", None, meets), adjusted) is False


def test_missing_figures_never_meet_and_decimals_round_half_up():
    results = {
        "e": _res("e", 0.4, 0.3, 0.50004),
        "m": _res("m", float("nan"), float("nan"), float("nan")),
    }
    assert evaluate(Compare("e", "upper", "le", 0.5, decimals=4), results) is True
    assert evaluate(Compare("e", "upper", "le", 0.5), results) is False
    results["e"] = _res("e", 0.4, 0.3, 0.50005)
    assert evaluate(Compare("e", "upper", "le", 0.5, decimals=4), results) is False
    assert evaluate(Compare("m", "estimate", "lt", 1.0), results) is False


def test_verdicts_first_match_wins():
    results = {"a": _res("a", -0.2, -0.3, -0.1)}
    verdicts = (
        Verdict("specific", AtLeast(1, (Compare("a", "upper", "lt", 0),))),
        Verdict("mixed", None),
    )
    assert decide(None, verdicts, results) == "specific"
    results["a"] = _res("a", 0.2, 0.1, 0.3)
    assert decide(None, verdicts, results) == "mixed"
    assert decide(Compare("a", "estimate", "gt", 0), (), results) == "supported"
    assert decide(Compare("a", "estimate", "gt", 1), (), results) == "not-supported"


def test_gates_name_each_failing_cell():
    gate = Gate("coverage", "coverage", {"split": ("test",)}, "ge", 0.95, "insufficient")
    cells = [
        ("t1", {"split": "test"}, {"coverage": 0.95}),
        ("t2", {"split": "test"}, {"coverage": 0.9499}),
        ("d1", {"split": "tuning"}, {"coverage": 0.0}),
        ("t3", {"split": "test"}, {"coverage": None}),
    ]
    failures = failed_gates([gate], cells)
    assert [(f[1], f[2]) for f in failures] == [("t2", 0.9499), ("t3", None)]


# -- study figures: values an engine reports, decided by the same evaluator -------------------


def test_a_figure_count_or_share_is_compared_exactly():
    from fractions import Fraction

    from prereg.rules import figure_result, share

    at = {"p": figure_result("p", Fraction(9, 10)), "c": figure_result("c", 4)}
    assert evaluate(Compare("p", "estimate", "ge", 0.9), at)  # 9/10 is 0.9 exactly
    below = {"p": figure_result("p", Fraction(8999, 10000))}
    assert not evaluate(Compare("p", "estimate", "ge", 0.9), below)
    assert evaluate(Compare("c", "estimate", "lt", 5), at)
    assert not evaluate(Compare("c", "estimate", "lt", 4), at)
    # a float figure is compared as computed; None and a share of nothing are missing
    assert evaluate(Compare("f", "estimate", "gt", 0.5), {"f": figure_result("f", 0.75)})
    for missing in ({"m": figure_result("m", None)}, {"m": figure_result("m", share(0, 0))}):
        assert not evaluate(Compare("m", "estimate", "ge", 0), missing)
        assert not evaluate(Compare("m", "estimate", "lt", 0), missing)


def test_a_figure_the_engine_did_not_report_meets_no_comparison():
    from prereg.rules import figure_result

    rule = AnyOf(
        (Compare("rung-50", "estimate", "ge", 0.9), Compare("full", "estimate", "ge", 0.9))
    )
    assert not evaluate(rule, {"full": figure_result("full", 0.5)})
    assert evaluate(rule, {"full": figure_result("full", 0.95)})
    assert decide(None, (Verdict("yes", rule), Verdict("no", None)), {}) == "no"


def test_a_condition_built_from_data_is_the_templates():
    """prereg.rules.condition builds from a spec's data the tree the rules.py template renders
    (checked on every study that has decisions in its compiled configuration)."""
    import importlib
    from pathlib import Path

    from prereg.compiler.project import Project
    from prereg.rules import condition, decision_of
    from prereg.study import study_context

    root = Path(__file__).resolve().parents[2]
    seen = 0
    for study in ("s3-verifier-freeze", "jev-multicorrect"):
        module, ctx = study_context(Project(root), study)
        rules = importlib.import_module(module.__name__ + ".rules")
        for h in ctx.config["decisions"]:
            name = h["id"].replace("-", "_").upper()
            d = decision_of(ctx.config, h["id"])
            if h.get("reported_only"):
                assert d.rule is None and d.verdicts == ()
                continue
            assert d.rule == getattr(rules, f"{name}_RULE"), h["id"]
            assert d.verdicts == getattr(rules, f"{name}_VERDICTS"), h["id"]
            seen += 1
    assert seen == 2
    fe = condition(
        {"for_each": {"name": "x", "values": [1, 2], "quantifier": "at_least", "count": 1,
                      "condition": {"compare": {"target": "t-{x}", "quantity": "estimate",
                                                "op": "ge", "value": 1, "decimals": 2}}}}
    )  # fmt: skip
    assert fe == ForEach(
        "x", ("1", "2"), "at_least", 1, Compare("t-{x}", "estimate", "ge", 1.0, decimals=2)
    )
