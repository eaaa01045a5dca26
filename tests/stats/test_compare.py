"""The certified comparison: every kind of figure decided exactly when it sits on its threshold.

Each case builds data whose true figure equals the registered threshold exactly (by hand: the
arithmetic is in the comments), then checks all four comparisons: a tie meets le and ge and
fails lt and gt. The float that numpy computes lands on the wrong side in most of these cases
(asserted where it does, so the test shows what exactness buys).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from prereg.decide import certify
from prereg.decide.metrics import row_metric
from prereg.stats.compare import Certified, compare, mean_certified, sign, threshold


def tie(figure, value, decimals=None):
    got = {op: compare(figure, op, value, decimals=decimals) for op in ("lt", "le", "gt", "ge")}
    assert got == {"lt": False, "le": True, "gt": False, "ge": True}, got


def test_threshold_is_the_decimal_as_written():
    assert threshold(0.1) == Fraction(1, 10)
    assert threshold(0.9) == Fraction(9, 10)
    assert threshold(3) == 3
    with pytest.raises(TypeError):
        threshold(True)


def test_proportion_and_difference_of_proportions():
    tie(Fraction(19, 20), 0.95)  # 19 of 20
    tie(Fraction(57, 100) - Fraction(27, 50), 0.03)  # 0.57 - 0.54
    assert 57 / 100 - 27 / 50 != 0.03  # the float lands off the tie


def test_count_figure():
    tie(190, 190)
    assert compare(189, "ge", 190) is False


def test_mean_of_decimal_data():
    # (0.1 + 0.2 + 0.3 + 0.4) / 4 = 0.25 exactly; numpy's float mean is 0.25 here too, but
    # 0.1 + 0.2 is not 0.3: the mean of (0.1, 0.2) is 0.15 exactly, the float is 0.15000000000000002
    tie(mean_certified(np.array([0.1, 0.2])), 0.15)
    assert float(np.mean([0.1, 0.2])) > 0.15


def test_mean_far_from_threshold_is_decided_by_the_float_filter():
    called = []

    def exact():
        called.append(1)
        return Fraction(1, 2)

    assert compare(Certified(0.5, error=1e-15, exact=exact), "lt", 0.6)
    assert not called


def test_geometric_mean_ratio_on_its_threshold():
    # a: 90 ms x 3 and 81 ms x 0; b: 100 ms: exp(mean log a - mean log b) = 90/100 = 0.9
    raw_a = np.array([90.0, 90.0, 90.0])
    raw_b = np.array([100.0, 100.0])
    ga = mean_certified(raw_a, log=True)
    gb = mean_certified(raw_b, log=True)
    diff = ga.ball
    ratio = Certified(math.exp(ga.value - gb.value), ball=lambda p: (diff(p) - gb.ball(p)).exp())
    tie(ratio, 0.9)
    # a geometric mean of 8 and 2 is 4 exactly (sqrt 16)
    g = Certified(
        math.exp(np.log([8.0, 2.0]).mean()),
        ball=lambda p: mean_certified(np.array([8.0, 2.0]), log=True).ball(p).exp(),
    )
    tie(g, 4)


def _metric(kind, values, hits=None, bins=None):
    cols = {"x": np.asarray(values, dtype=object).tolist()}
    compute = {"kind": kind, "field": "x"}
    if hits is not None:
        cols["ok"] = list(hits)
        compute["where"] = [{"field": "ok", "op": "eq", "value": True}]
    if bins is not None:
        compute["bins"] = bins
    return row_metric({"id": "m", "compute": compute}, cols, np.ones(len(values), dtype=bool))


def test_geometric_mean_contrast_through_the_scoring_metric():
    m = _metric("geometric_mean", [90.0, 90.0, 100.0, 100.0])
    ra, rb = np.array([0, 1]), np.array([2, 3])
    fig = certify.contrast(m, ra, rb, 0.9, ratio=True)["estimate"]
    tie(fig, 0.9)


def test_mean_contrast_through_the_scoring_metric():
    m = _metric("mean", [0.3, 0.1, 0.1, 0.1])
    fig = certify.contrast(m, np.array([0, 1]), np.array([2, 3]), 0.1, ratio=False)["estimate"]
    tie(fig, 0.1)  # (0.3 + 0.1)/2 - 0.1 = 0.1


def test_ece_on_its_threshold():
    # bins [0, 0.5), [0.5, 1]: bin 2 holds 0.7, 0.8 (one right): |1 - 1.5| = 0.5;
    # bin 1 holds 0.3 (right): |1 - 0.3| = 0.7; ECE = 1.2 / 3 = 0.4
    m = _metric("ece", [0.7, 0.8, 0.3], hits=[True, False, True], bins=[0, 0.5, 1])
    rows = np.ones(3, dtype=bool)
    value = m.statistic(m.value[rows], m.hit[rows])
    fig = certify.estimate(m, rows, value)["estimate"]
    tie(fig, 0.4)


def test_auroc_is_a_fraction():
    # positives 0.9, 0.5; negatives 0.5, 0.1: pairs (0.9>0.5, 0.9>0.1, 0.5=0.5, 0.5>0.1) = 3.5/4
    m = _metric("auroc", [0.9, 0.5, 0.5, 0.1], hits=[True, True, False, False])
    rows = np.ones(4, dtype=bool)
    fig = certify.estimate(m, rows, 0.875)["estimate"]
    assert fig == Fraction(7, 8)
    tie(fig, 0.875)


def test_decimals_round_the_exact_value_half_up():
    # 2.675 as data is the decimal 2.675, which rounds half-up to 2.68 (the float 2.675 is
    # 2.67499999..., which float rounding takes to 2.67)
    assert round(2.675, 2) == 2.67
    tie(2.675, 2.68, decimals=2)
    tie(mean_certified(np.array([2.675])), 2.68, decimals=2)
    tie(Fraction(2675, 1000), 2.68, decimals=2)


def test_decimals_on_a_ball():
    # sqrt(2) = 1.41421...: to 2 decimals 1.41
    root2 = Certified(math.sqrt(2), ball=lambda p: __import__("flint").arb(2).sqrt())
    tie(root2, 1.41, decimals=2)


def test_irrational_figure_next_to_its_threshold_is_separated():
    # log(0.9) = -0.105360515657826301227...; a threshold 1e-17 above it is not a tie
    lg = Certified(math.log(0.9), ball=lambda p: __import__("flint").arb("0.9").log())
    assert sign(lg, -0.10536051565782629) == -1
    assert sign(lg, -0.10536051565782631) == 1


def test_missing_figure_fails_every_comparison():
    for missing in (None, float("nan")):
        assert not any(compare(missing, op, 0.5) for op in ("lt", "le", "gt", "ge"))


def test_unknown_operator_is_refused():
    with pytest.raises(ValueError, match="unknown comparison"):
        compare(Fraction(1, 2), "approx", 0.5)


def test_a_float_figure_is_compared_as_the_decimal_it_reads_as():
    """A plain float figure is the shortest decimal that reads back as it (what SCORE.json
    shows), whether the float alone decides or the decimal must: checked against Python's
    decimal module on floats at, next to and far from thresholds written as decimals, and
    against a threshold that is no decimal (1/3, by exact Fraction arithmetic)."""
    import random
    from decimal import Decimal

    rng = random.Random(7)
    written = ["0.05", "0.1", "0.3", "0.95", "1e-300", "2.675", "123456.789", "-0.2", "0"]
    written += [repr(rng.uniform(-2, 2)) for _ in range(20)]
    written += [f"{rng.randrange(10**6)}e-{rng.randrange(1, 12)}" for _ in range(20)]
    for text in written:
        value = float(text)
        near = [value, math.nextafter(value, math.inf), math.nextafter(value, -math.inf)]
        near += [value + d for d in (1e-17, -1e-17, 1e-9, -1e-9, 0.5, -0.5)]
        # decimals that read as the threshold's own float: 0.1 + 1e-18 is the float 0.1
        near += [float(Decimal(text) + Decimal("1e-30")), float(Decimal(text) * 3) / 3]
        for x in near:
            d, t = Decimal(repr(x)), Decimal(repr(value))
            expected = (d > t) - (d < t)
            assert sign(x, value) == expected, (x, value)
    third = Fraction(1, 3)
    for x in (1 / 3, math.nextafter(1 / 3, 1), math.nextafter(1 / 3, 0), 0.3333333333333333):
        exact = Fraction(Decimal(repr(x)))
        assert sign(x, third) == (exact > third) - (exact < third), x


def test_a_threshold_read_once_is_still_refused_as_a_boolean():
    assert threshold(1.0) == 1 and threshold(1) == 1
    with pytest.raises(TypeError):
        threshold(True)
    assert threshold(-0.0) == 0 and threshold(0.0) == 0


def test_decimals_round_every_kind_of_figure_half_toward_plus_infinity():
    """``decimals`` rounds floor(x·10^d + 1/2) of the figure's exact value (a float's shortest
    decimal, a Fraction, an int) before comparing: checked against the decimal module's floor
    of x·10^d + 0.5 on halves, their neighbours and negative figures (-2.5 rounds to -2)."""
    import random
    from decimal import ROUND_FLOOR, Decimal, localcontext

    def expected(exact: Decimal, value: float, d: int) -> int:
        with localcontext() as ctx:
            ctx.prec = 200
            scaled = (exact * 10**d + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR)
            r, t = scaled / Decimal(10) ** d, Decimal(repr(value))
        return (r > t) - (r < t)

    rng = random.Random(11)
    cases = [(2.675, 2.68, 2), (-2.5, -2.0, 0), (-2.5, -3.0, 0), (0.125, 0.13, 2), (1.005, 1.01, 2)]
    for _ in range(300):
        d = rng.randrange(0, 5)
        base = rng.randrange(-(10**6), 10**6)
        half = (Decimal(base) + Decimal("0.5")) / Decimal(10) ** d
        value = float(round(half, d)) if rng.random() < 0.5 else float(half)
        for x in (float(half), math.nextafter(float(half), math.inf), rng.uniform(-50, 50)):
            cases.append((x, value, d))
    for x, value, d in cases:
        assert sign(x, value, decimals=d) == expected(Decimal(repr(x)), value, d), (x, value, d)
        q = Fraction(Decimal(repr(x))) + Fraction(rng.choice([0, 1, -1]), 10 ** (d + 3))
        exact = Decimal(q.numerator) / Decimal(q.denominator)  # q's denominator is 2^a 5^b
        assert sign(q, value, decimals=d) == expected(exact, value, d), (q, value, d)
    for n in range(-30, 31):
        assert sign(n, n / 10, decimals=0) == expected(Decimal(n), n / 10, 0)
