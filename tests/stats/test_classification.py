"""balanced_accuracy against scikit-learn, with the house convention for a missing class."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score

from prereg.stats.classification import balanced_accuracy


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_matches_sklearn_when_both_classes_present(pairs):
    y = [a for a, _ in pairs]
    p = [b for _, b in pairs]
    got = balanced_accuracy(y, p)
    if len(set(y)) < 2:
        # Difference on purpose: sklearn warns and scores the one class's recall; we return 0.5.
        assert got == 0.5
        return
    assert got == pytest.approx(balanced_accuracy_score(y, p), abs=1e-12)


def test_hand_values():
    assert balanced_accuracy([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.75)
    assert balanced_accuracy([1, 0], [1, 0]) == 1.0
    assert balanced_accuracy([1, 0], [0, 1]) == 0.0
    assert balanced_accuracy([1, 1, 1], [1, 0, 0]) == 0.5
    assert balanced_accuracy([], []) == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert balanced_accuracy_score([1, 1, 1], [1, 0, 0]) == pytest.approx(1 / 3)
