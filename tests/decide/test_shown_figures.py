"""A figure a report shows beside a comparison never reads on the other side of its threshold
than the figure the verdict was decided with (the digits widen until it does), and an analysis'
exact P value decides a report's comparison as it decides the verdict."""

from __future__ import annotations

from fractions import Fraction

import pytest

from prereg.reports.numbers import fmt_against, fmt_p
from prereg.reports.verdicts import deciding_figures, exact_figure
from prereg.stats.compare import decimal_text, shortest_between


@pytest.mark.parametrize(
    ("figure", "value", "shown"),
    [
        (0.9, 0.9, "0.9"),  # a tie reads as one
        (0.9000000000000001, 0.9, "0.9000000000000001"),  # not "0.9", which ties
        (0.8999999999999999, 0.9, "0.8999999999999999"),
        (0.91234, 0.9, "0.9123"),  # far: the usual 4 digits
        (Fraction(1, 3), 0.3333, "0.33333"),  # 1/3 > 0.3333; "0.3333" ties
        (Fraction(2, 3), 0.6667, "0.66667"),  # 2/3 < 0.6667; "0.6667" ties
        (Fraction(200001, 100000), 2, "2.00001"),
    ],
)
def test_enough_digits(figure, value, shown):
    assert fmt_against(figure, value) == shown


def test_decimals_registered_read_the_rounding():
    # 0.89996 rounds half-up to 0.9000 at 4 decimals, which ties 0.9: shown so, to 4 digits
    assert fmt_against(0.89996, 0.9, 4) == "0.9"
    # at 5 decimals it stays 0.89996 < 0.9; "0.9" would round onto it
    assert fmt_against(0.89996, 0.9, 5) == "0.89996"


def test_p_values():
    assert fmt_p(0.0004) == "< 0.001"
    assert fmt_p(0.0004, against=(0.0004, 0.0005, None)) == "0.0004"
    assert fmt_p(0.0004, against=(0.0004, 0.01, None)) == "< 0.001"
    # an exact P of 1/20 + 1/10^20 fails le 0.05; its float is 0.05
    p = Fraction(1, 20) + Fraction(1, 10**20)
    assert float(p) == 0.05
    assert fmt_p(0.05, against=(p, 0.05, None)) == "0.05000000000000000001"


def test_shortest_between():
    assert shortest_between(Fraction(89, 100), Fraction(91, 100)) == Fraction(9, 10)
    assert shortest_between(Fraction(9, 10), Fraction(91, 100)) == Fraction(905, 1000)
    assert shortest_between(Fraction(-3, 1), Fraction(-29, 10)) == Fraction(-295, 100)
    # tens strictly between: 1240 ... 1290; the middle is 1267
    assert shortest_between(Fraction(1234, 1), Fraction(1300, 1)) == Fraction(1270)
    assert decimal_text(Fraction(-8999, 10000)) == "-0.8999"
    assert decimal_text(Fraction(1250)) == "1250"
    assert decimal_text(Fraction(1, 3)) == "1/3"


def test_an_analysis_exact_p_decides_the_report():
    p = Fraction(1, 20) + Fraction(1, 10**20)  # by hand just above 0.05; its float is 0.05
    row = {"id": "binom", "p": float(p), "exact": {"p": f"{p.numerator}/{p.denominator}"}}
    assert exact_figure(row, "p", row["p"]) == p
    hypothesis = {
        "rule": {"compare": {"target": "binom", "quantity": "p", "op": "le", "value": 0.05}}
    }
    line = deciding_figures(hypothesis, [row])
    assert line.startswith("P ≤ 0.05: met by 0 of 1 (binom (0.05000000000000000001))"), line


def test_a_threshold_is_shown_as_written():
    from prereg.reports.numbers import written

    assert written(0.2890625) == "0.2890625"  # not 0.2891
    assert written(0.00005) == "0.00005"  # not 0 (nor 5e-05)
    assert written(90) == "90" and written(1.5) == "1.5" and written(-0.1) == "-0.1"
