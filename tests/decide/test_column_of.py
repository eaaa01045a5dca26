"""``Column.of`` on lists of JSON values: the kind, values and nulls a value-by-value reading
gives (booleans by code, numbers by one conversion pass)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from prereg.decide.columns import Column

BOOLS = st.lists(st.none() | st.booleans(), max_size=40)
NUMBERS = st.lists(
    st.none() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False),
    max_size=40,
)


@given(BOOLS)
def test_a_list_of_booleans_and_nulls(values):
    col = Column.of(values)
    if all(v is None for v in values):  # no value: a column of numbers, every one missing
        assert col.kind == "number" and np.isnan(col.values).all() and col.null.all()
        return
    assert col.kind == "boolean" and col.values.dtype == bool and col.null.dtype == bool
    assert col.values.tolist() == [v is True for v in values]
    assert col.null.tolist() == [v is None for v in values]


@given(NUMBERS)
def test_a_list_of_numbers_and_nulls(values):
    col = Column.of(values)
    assert col.kind == "number" and col.values.dtype == np.float64
    want = [math.nan if v is None else float(v) for v in values]
    got = col.values.tolist()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (
            (math.isnan(g) and math.isnan(w))
            or g == w
            and math.copysign(1, g) == math.copysign(1, w)
        )
    assert col.null.tolist() == [v is None for v in values]
