"""AUROC (against scikit-learn's roc_auc_score and a pairwise count) and Hanley-McNeil."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from prereg.stats.roc import auroc, hanley_mcneil

SETTINGS = settings(max_examples=150, deadline=None)


def auroc_pairwise(scores, labels):
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(Fraction(1) if a > b else Fraction(1, 2) if a == b else 0 for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


score_values = st.one_of(
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),  # many ties
)


@st.composite
def scored_rows(draw):
    n = draw(st.integers(min_value=2, max_value=60))
    scores = draw(st.lists(score_values, min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return scores, labels


@SETTINGS
@given(scored_rows())
def test_matches_sklearn_and_pairwise_count(rows):
    scores, labels = rows
    a = auroc(scores, labels)
    if len(set(labels)) < 2:
        assert math.isnan(a)
        return
    assert a == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert a == pytest.approx(float(auroc_pairwise(scores, labels)), abs=1e-12)


def test_hand_values():
    assert auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert auroc([0.5] * 6, [0, 1, 0, 1, 1, 0]) == 0.5  # ties everywhere count half
    assert auroc([0.9, 0.8, 0.1], [1, 1, 0]) == 1.0
    assert auroc([0.1, 0.2, 0.9], [True, True, False]) == 0.0
    assert auroc([0.2, 0.2, 0.9, 0.2], [1, 0, 1, 0]) == 0.75
    # large input with a known answer: positives strictly above negatives
    n = 100_000
    scores = np.concatenate([np.linspace(0, 0.4, n), np.linspace(0.6, 1, n)])
    labels = np.concatenate([np.zeros(n), np.ones(n)])
    assert auroc(scores, labels) == 1.0


def test_empty_class_and_bad_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(auroc([0.3, 0.4], [1, 1]))
        assert math.isnan(auroc([0.3, 0.4], [0, 0]))
        assert math.isnan(auroc([], []))
    with pytest.raises(ValueError):
        auroc([0.1, math.nan], [0, 1])
    with pytest.raises(ValueError):
        auroc([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError):
        auroc([0.1, 0.2], [0])


def hm_by_hand(a, n1, n2, z):
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    se = math.sqrt((a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n2 - 1) * (q2 - a * a)) / (n1 * n2))
    return se, max(0.0, a - z * se), min(1.0, a + z * se)


def test_hanley_mcneil_hand_values():
    # A = 0.75, 2 and 2: Q1 = 0.6, Q2 = 9/14; var = (3/16 + 3/80 + 9/112)/4
    var = (Fraction(3, 16) + Fraction(3, 80) + (Fraction(9, 14) - Fraction(9, 16))) / 4
    se, lo, hi = hanley_mcneil(0.75, 2, 2, z=1.96)
    assert se == pytest.approx(math.sqrt(var), abs=1e-15)
    assert lo == pytest.approx(0.75 - 1.96 * math.sqrt(var), abs=1e-15)
    assert hi == 1.0  # clipped
    # A = 0.9 with 50 and 50, worked on paper: Q1 = 0.81818, Q2 = 0.85263,
    # var = (0.09 + 49·0.0081818 + 49·0.042632)/2500 = 0.0010319, SE = 0.03212
    assert hanley_mcneil(0.9, 50, 50, z=1.96)[0] == pytest.approx(0.03212, abs=1e-5)
    # degenerate areas have SE 0
    assert hanley_mcneil(1.0, 10, 10, z=1.96) == (0.0, 1.0, 1.0)
    assert hanley_mcneil(0.0, 10, 10, z=1.96) == (0.0, 0.0, 0.0)


@SETTINGS
@given(
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(1, 500),
    st.integers(1, 500),
    st.sampled_from([1.96, 1.959963984540054, 2.576]),
)
def test_hanley_mcneil_matches_formula(a, n1, n2, z):
    se, lo, hi = hanley_mcneil(a, n1, n2, z=z)
    e_se, e_lo, e_hi = hm_by_hand(a, n1, n2, z)
    assert se == pytest.approx(e_se, abs=1e-12)
    assert lo == pytest.approx(e_lo, abs=1e-12)
    assert hi == pytest.approx(e_hi, abs=1e-12)
    assert 0.0 <= lo <= a <= hi <= 1.0


def test_hanley_mcneil_missing_arrays_and_z_required():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all(math.isnan(v) for v in hanley_mcneil(math.nan, 5, 5, z=1.96))
        assert all(math.isnan(v) for v in hanley_mcneil(0.7, 0, 5, z=1.96))
        se, lo, hi = hanley_mcneil([0.75, math.nan, 0.6], [2, 3, 40], [2, 3, 0], z=1.96)
    assert se.shape == (3,)
    assert se[0] == hanley_mcneil(0.75, 2, 2, z=1.96)[0]
    assert np.isnan(se[1:]).all() and np.isnan(lo[1:]).all() and np.isnan(hi[1:]).all()
    with pytest.raises(TypeError):
        hanley_mcneil(0.7, 5, 5)  # z has no default
    with pytest.raises(ValueError):
        hanley_mcneil(1.2, 5, 5, z=1.96)
    with pytest.raises(ValueError):
        hanley_mcneil(0.7, -1, 5, z=1.96)


@given(st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=60))
@settings(max_examples=150, deadline=None)
def test_average_ranks_equal_scipy_rankdata(values):
    from scipy.stats import rankdata

    from prereg.stats.roc import average_ranks

    arr = np.asarray(values, dtype=np.float64)
    np.testing.assert_array_equal(average_ranks(arr), rankdata(arr, method="average"))
