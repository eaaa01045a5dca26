"""Standard errors, z and t of count-based and clustered methods, and Welch's degrees of
freedom, placed exactly on their registered threshold (the study harness of
:mod:`tests.decide.test_exact_on_thresholds`: two hypotheses, `ge` and `gt` of the same
threshold, so the figure meets the one and fails the other). Each oracle is computed here in
fractions; each test shows the float the method reports on the wrong side of the threshold (or
a neighbour of it), so that a float comparison would decide otherwise."""

from __future__ import annotations

from fractions import Fraction

import pytest
from scipy import stats

from prereg.stats.equivalence import noninferiority_proportions, tost_proportions
from tests.decide.test_exact_on_thresholds import TWO, _verdicts


def _arm(k: int, n: int) -> list[bool]:
    return [True] * k + [False] * (n - k)


def _wald(k1, n1, k2, n2, margin: Fraction) -> tuple[Fraction, Fraction]:
    """(se², z²) of the Wald z of k1/n1 − k2/n2 against ``margin``, in fractions."""
    p1, p2 = Fraction(k1, n1), Fraction(k2, n2)
    var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
    return var, (p1 - p2 - margin) ** 2 / var


def test_noninferiority_proportions_wald_z_exactly_3(tmp_path):
    """6 of 10 against 2 of 10, margin −0.2: d − margin = 3/5 over a Wald se of √(24/1000 +
    16/1000) = 1/5, z = 3 exactly; the method's float is 2.9999999999999996 (`ge 3` would
    fail)."""
    var, z2 = _wald(6, 10, 2, 10, Fraction(-1, 5))
    assert var == Fraction(1, 25) and z2 == 9
    float_z = noninferiority_proportions(
        6, 10, 2, 10, margin=-0.2, alternative="greater", se="wald", level=0.975
    ).statistic
    assert float_z < 3
    closed, opened, row = _verdicts(
        tmp_path, _arm(6, 10), _arm(2, 10), method="noninferiority-proportions", inputs=TWO,
        options="{margin: -0.2, alternative: greater, se: wald, level: 0.975}",
        quantity="statistic", value=3, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["statistic_squared"] == "9/1" and row["exact"]["se_squared"] == "1/25"


def test_tost_proportions_wald_z_of_the_reported_side_exactly_3_halves(tmp_path):
    """6 of 10 against 2 of 10 between −0.1 and 0.1: d = 2/5, se = 1/5; the upper side's z,
    (2/5 − 1/10)/(1/5) = 3/2, has the larger P and is the reported statistic, exactly 3/2;
    its float is 1.4999999999999998 (`ge 1.5` would fail)."""
    _, z2 = _wald(6, 10, 2, 10, Fraction(1, 10))
    assert z2 == Fraction(9, 4)
    r = tost_proportions(6, 10, 2, 10, lower=-0.1, upper=0.1, se="wald")
    assert r.statistic < 1.5 and r.statistic == r.extra["statistic_upper"]
    closed, opened, row = _verdicts(
        tmp_path, _arm(6, 10), _arm(2, 10), method="tost-proportions", inputs=TWO,
        options="{lower: -0.1, upper: 0.1, se: wald}",
        quantity="statistic", value=1.5, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["statistic_squared"] == "9/4"


def test_tost_proportions_wald_se_exactly_a_fifth(tmp_path):
    """8 of 10 against 6 of 10: se² = 16/1000 + 24/1000 = 1/25, se = 1/5 exactly; the
    method's float is 0.19999999999999998 (`ge 0.2` would fail)."""
    var, _ = _wald(8, 10, 6, 10, Fraction(-1, 10))
    assert var == Fraction(1, 25)
    assert tost_proportions(8, 10, 6, 10, lower=-0.1, upper=0.1, se="wald").se < 0.2
    closed, opened, _ = _verdicts(
        tmp_path, _arm(8, 10), _arm(6, 10), method="tost-proportions", inputs=TWO,
        options="{lower: -0.1, upper: 0.1, se: wald}",
        quantity="se", value=0.2, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")


def _ss(xs: list[Fraction]) -> Fraction:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs)


def _welch_df(a, b) -> Fraction:
    """Welch–Satterthwaite df of two samples read as the decimals they write, in fractions."""
    xa, xb = [Fraction(str(v)) for v in a], [Fraction(str(v)) for v in b]
    va, vb = _ss(xa) / (len(xa) * (len(xa) - 1)), _ss(xb) / (len(xb) * (len(xb) - 1))
    return (va + vb) ** 2 / (va * va / (len(xa) - 1) + vb * vb / (len(xb) - 1))


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("welch-t", "{margin: 0, alternative: two-sided, level: 0.95}"),
        (
            "noninferiority-means",
            "{margin: -1, alternative: greater, variance: welch, level: 0.95}",
        ),
        ("tost-means", "{lower: -1, upper: 1, variance: welch}"),
    ],
)
def test_welch_df_of_tenths_exactly_4(tmp_path, method, options):
    """0.8, 0.3, 0.4 against 0.3, 0.2, 0.7: both arms' variances of the mean are 7/300, so
    Welch–Satterthwaite's df is 2·(3 − 1) = 4 exactly; scipy's ttest_ind(equal_var=False)
    gives 3.999999999999999 (`ge 4` would fail)."""
    a, b = [0.8, 0.3, 0.4], [0.3, 0.2, 0.7]
    assert _welch_df(a, b) == 4
    assert stats.ttest_ind(a, b, equal_var=False).df < 4
    closed, opened, row = _verdicts(
        tmp_path, a, b, method=method, inputs=TWO, options=options, quantity="df", value=4,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["df"] < 4 and row["exact"]["df"] == "4/1"
