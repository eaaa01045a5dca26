"""Rounding conventions: binary half-up (ECMAScript Math.round style) and shortest-decimal half-up."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.stats.rounding import round_half_up, round_half_up_array, round_half_up_shortest

SETTINGS = settings(max_examples=200, deadline=None)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


def test_round_half_up_hand_values():
    assert round_half_up(2.5, 0) == 3.0
    assert round_half_up(-2.5, 0) == -2.0  # halves go toward +inf, like Math.round
    # Expected values below were printed by node: Math.round(x * 10 ** d) / 10 ** d
    js = {
        (0.15, 1): 0.2,
        (0.12345, 4): 0.1235,
        (1.005, 2): 1.0,
        (-2.5, 0): -2.0,
        (0.125, 2): 0.13,
        (-0.125, 2): -0.12,
        (0.59945, 4): 0.5995,
    }
    for (x, d), want in js.items():
        assert round_half_up(x, d) == want, (x, d)
    # binary, not decimal: 1.005·100 = 100.49999999999999, so 1.005 -> 1.0 (JS: same)
    assert 1.005 * 100 < 100.5
    assert round_half_up(1.005, 2) == 1.0
    assert round_half_up(0.65685, 4) == math.floor(0.65685 * 1e4 + 0.5) / 1e4
    assert round_half_up(None, 4) is None
    assert math.isnan(round_half_up(math.nan, 4))


def test_round_half_up_shortest_hand_values():
    assert round_half_up_shortest(0.625, 2) == 0.63
    assert round_half_up_shortest(0.175, 2) == 0.18  # the float is just below 0.175
    assert Decimal(0.175) < Decimal("0.175")
    assert round_half_up_shortest(1.005, 2) == 1.01
    assert round_half_up_shortest(-0.125, 2) == -0.13  # decimal half-up rounds away from 0
    assert round_half_up_shortest(3, 2) == 3.0
    assert round_half_up_shortest(None, 2) is None
    with pytest.raises(TypeError):
        round_half_up_shortest(True, 2)
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError):
            round_half_up_shortest(bad, 2)


@SETTINGS
@given(finite, st.integers(0, 6))
def test_array_matches_scalar(x, d):
    assert round_half_up_array(np.array([x]), d)[0] == round_half_up(x, d)


@SETTINGS
@given(finite, st.integers(0, 6))
def test_shortest_matches_decimal_of_repr(x, d):
    want = float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP))
    assert round_half_up_shortest(x, d) == want
    # at most half a unit in the last place away (plus float representation error)
    assert abs(round_half_up_shortest(x, d) - x) <= 0.5 * 10**-d + 1e-9 * max(1.0, abs(x))
