"""Decision rules as data: expansion, estimates, gates and evaluation (prereg.rules)."""

import math

from prereg.compiler.semantic import _expansions
from prereg.rules import (
    AllOf,
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
