"""Holm adjustment: cross-checked with statsmodels' multipletests(method="holm") and by hand.

Difference from statsmodels on purpose: with NaN among the P values statsmodels counts them in
m (so [0.01, nan, 0.3] gives 0.03 for the first); d17 counts only the present P values (0.02).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.stats.multiplicity import holm_adjust
from tests.oracles import multipletests

SETTINGS = settings(max_examples=200, deadline=None)

p_value = st.one_of(
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.0, 0.01, 0.02, 0.05, 0.5, 1.0]),  # ties
)


def holm_by_definition(p):
    """Holm from its textbook definition: adjusted p_i = max over j with p_j <= p_i (ranked at or
    before i) of min(1, (m - rank_j) p_j), on the present values only."""
    present = [(v, i) for i, v in enumerate(p) if v is not None and not math.isnan(v)]
    ranked = sorted(present)  # ties: any order gives the same values
    m = len(ranked)
    out = [math.nan] * len(p)
    for r, (_v, i) in enumerate(ranked):
        out[i] = max(min(1.0, (m - j) * ranked[j][0]) for j in range(r + 1))
    return out


@settings(max_examples=100, deadline=None)  # multipletests costs ~15 ms a call
@given(st.lists(p_value, min_size=1, max_size=40))
def test_matches_statsmodels(p):
    ours = holm_adjust(p)
    theirs = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


@SETTINGS
@given(st.lists(st.one_of(p_value, st.none(), st.just(math.nan)), max_size=40))
def test_missing_values_stay_missing_and_do_not_count(p):
    ours = holm_adjust(p)
    assert ours.shape == (len(p),)
    as_array = np.array([math.nan if v is None else v for v in p], dtype=np.float64)
    np.testing.assert_array_equal(holm_adjust(as_array), ours)
    missing = np.array([v is None or math.isnan(v) for v in p], dtype=bool)
    assert np.array_equal(np.isnan(ours), missing)
    np.testing.assert_allclose(ours, holm_by_definition(p), rtol=0, atol=1e-12)
    present = [v for v in p if v is not None and not math.isnan(v)]
    # adjusted values are at least the raw ones and at most 1
    assert np.all(ours[~missing] >= np.array(present) - 1e-15)
    assert np.all(ours[~missing] <= 1.0)


def test_hand_values():
    # m = 4: sorted 0.01, 0.02, 0.03, 0.5 -> 0.04, max(0.04, 0.06), max(0.06, 0.06), max(0.06, 0.5)
    np.testing.assert_allclose(holm_adjust([0.03, 0.5, 0.01, 0.02]), [0.06, 0.5, 0.04, 0.06])
    # the d17 rule with one missing P among three: m = 2
    out = holm_adjust([0.01, None, 0.3])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.3)
    # statsmodels counts the NaN (documented difference)
    assert multipletests([0.01, math.nan, 0.3], method="holm")[1][0] == pytest.approx(0.03)
    # capping at 1 and ties
    np.testing.assert_allclose(holm_adjust([0.4, 0.4, 0.4]), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(holm_adjust([0.02, 0.02, 0.9]), [0.06, 0.06, 0.9])
    assert holm_adjust([0.05]).tolist() == [0.05]


def test_edges():
    assert holm_adjust([]).shape == (0,)
    assert np.isnan(holm_adjust([None, math.nan])).all()
    for bad in ([1.5], [-0.1], [True]):
        with pytest.raises(ValueError):
            holm_adjust(bad)
