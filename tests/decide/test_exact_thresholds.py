"""Rule thresholds on proportions are compared exactly (issue: 132/220 − 110/220 is
0.09999999999999998 in floating point, which failed |d| ≥ 0.10)."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from prereg.rules import Compare, ContrastResult, evaluate


def contrast(k1, n1, k2, n2) -> ContrastResult:
    d = k1 / n1 - k2 / n2
    return ContrastResult("c", d, d - 0.1, d + 0.1, extra={"k1": k1, "n1": n1, "k2": k2, "n2": n2})


def test_a_difference_exactly_at_the_threshold_meets_it():
    r = {"c": contrast(132, 220, 110, 220)}
    assert r["c"].estimate < 0.10  # the float is just below
    assert evaluate(Compare("c", "abs_estimate", "ge", 0.10), r)
    assert evaluate(Compare("c", "estimate", "ge", 0.10), r)
    assert not evaluate(Compare("c", "estimate", "gt", 0.10), r)
    r = {"c": contrast(110, 220, 132, 220)}
    assert evaluate(Compare("c", "abs_estimate", "ge", 0.10), r)
    assert evaluate(Compare("c", "estimate", "le", -0.10), r)


def test_an_estimate_exactly_at_the_threshold_and_rounded_rules():
    r = {"e": ContrastResult("e", 7 / 10, 0.5, 0.9, extra={"k": 7, "n": 10})}
    assert evaluate(Compare("e", "estimate", "ge", 0.7), r)
    # 1/8 = 0.125 rounds half up to 0.13 (exactly, not via the float 12.5 → 13).
    r = {"e": ContrastResult("e", 1 / 8, 0.0, 0.5, extra={"k": 1, "n": 8})}
    assert evaluate(Compare("e", "estimate", "ge", 0.13, decimals=2), r)
    assert not evaluate(Compare("e", "estimate", "gt", 0.13, decimals=2), r)


def test_interval_bounds_and_empty_arms_stay_floats_or_missing():
    r = {
        "c": ContrastResult(
            "c",
            float("nan"),
            float("nan"),
            float("nan"),
            extra={"k1": 0, "n1": 0, "k2": 1, "n2": 2},
        )
    }
    assert not evaluate(Compare("c", "estimate", "le", 1.0), r)
    r = {"c": contrast(132, 220, 110, 220)}
    assert evaluate(Compare("c", "upper", "gt", 0.1), r) == (r["c"].upper > 0.1)


@given(
    st.integers(1, 300),
    st.integers(1, 300),
    st.data(),
    st.sampled_from(["0.05", "0.1", "0.15", "0.2", "0.25"]),
)
def test_exact_comparison_agrees_with_fractions(n1, n2, data, text):
    k1 = data.draw(st.integers(0, n1))
    k2 = data.draw(st.integers(0, n2))
    r = {"c": contrast(k1, n1, k2, n2)}
    want = abs(Fraction(k1, n1) - Fraction(k2, n2)) >= Fraction(text)
    assert evaluate(Compare("c", "abs_estimate", "ge", float(text)), r) == want
