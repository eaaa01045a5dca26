"""The score command's two ECE figures in one pass (``ece_pair_of_arrays``) against the two
calls of ``ece_of_arrays`` (``prereg.stats.calibration.ece_ten_bin``) they replace: the same
floats bit for bit, the same None."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.engines.multicorrect.ece import ece_of_arrays, ece_pair_of_arrays

EDGES = [k / 10 for k in range(1, 10)]
# values on and next to every edge, the ends, and the float sums that land beside an edge
SPECIAL = sorted(
    {0.0, 1.0, 0.1 + 0.2, 0.7 + 0.1, 5e-324}
    | set(EDGES)
    | {float(np.nextafter(e, 0.0)) for e in EDGES}
    | {float(np.nextafter(e, 1.0)) for e in EDGES}
    | {float(np.nextafter(1.0, 0.0))}
)


def _bits(x):
    return None if x is None else struct.pack("<d", x)


def _same(q, y, d=None):
    q = np.asarray(q, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    got = ece_pair_of_arrays(q, y, d)
    want = (ece_of_arrays(q, y, False, d), ece_of_arrays(q, y, True, d))
    assert tuple(map(_bits, got)) == tuple(map(_bits, want)), (got, want)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from(SPECIAL), st.floats(0.0, 1.0)),
            st.integers(0, 1),
        ),
        max_size=200,
    ),
    st.one_of(st.none(), st.integers(0, 6)),
)
def test_the_pair_equals_the_two_calls(rows, d):
    _same([r[0] for r in rows], [r[1] for r in rows], d)


@pytest.mark.parametrize("seed", range(5))
def test_the_pair_equals_the_two_calls_on_large_arrays(seed):
    rng = np.random.default_rng(seed)
    n = 200_000
    q = rng.random(n)
    q = np.where(rng.random(n) < 0.2, np.round(q, 2), q)  # many values on the edges
    y = (rng.random(n) < q).astype(np.int64)
    _same(q, y)
    _same(q, y, 4)


def test_nothing_left_outside_the_first_bin_and_nothing_at_all():
    _same([0.0, 0.05, 0.1], [0, 1, 0])  # every sample in bin 0: the second figure is None
    _same([], [])
