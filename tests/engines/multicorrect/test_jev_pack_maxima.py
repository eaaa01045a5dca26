"""A pack's per-list largest probability (``max_prob``, now the larger of the largest
distractor and the largest correct option) against the reduction over every option it
replaced: the same floats bit for bit, on random packs whose probabilities lie on, next to and
between the grid's thresholds, with lists whose options are all correct or all distractors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jev_helpers import CONFIG

from prereg.engines.multicorrect import engine_config
from prereg.engines.multicorrect.scoring import packed_from

CFG = engine_config(CONFIG)
TS = CFG.thresholds().tolist()


def _pack(lists):
    """A Packed of ``lists``: each (probabilities, correct indices, refused)."""
    ids, refused, n_correct, flat, lens, seg, pos = [], [], [], [], [], [], []
    at = 0
    for i, (probs, correct, is_refused) in enumerate(lists):
        ids.append(f"r{i}")
        refused.append(is_refused)
        n_correct.append(len(correct))
        if is_refused:
            continue
        flat.extend(probs)
        lens.append(len(probs))
        seg.append(len(correct))
        pos.extend(at + j for j in correct)
        at += len(probs)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    probs = np.array(flat, dtype=np.float64)
    return packed_from(None, ids, refused, n_correct, probs, offsets, seg, pos)


_value = st.one_of(
    st.sampled_from(TS),
    st.sampled_from(TS).map(lambda t: float(np.nextafter(t, 0.0))),
    st.sampled_from(TS).map(lambda t: float(np.nextafter(t, 2.0))),
    st.sampled_from([0.0, 1.0]),
    st.floats(0.0, 1.0),
)


@st.composite
def _list(draw):
    probs = draw(st.lists(_value, min_size=1, max_size=8))
    correct = draw(st.sets(st.integers(0, len(probs) - 1), max_size=len(probs)))
    return probs, sorted(correct), draw(st.booleans())


def _check(pk) -> None:
    if np.diff(pk.offsets).size:
        want = np.maximum.reduceat(pk.probs, pk.offsets[:-1])
        assert pk.max_prob.dtype == want.dtype
        assert pk.max_prob.tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.lists(_list(), min_size=1, max_size=30))
def test_the_maxima_equal_the_reduction_over_every_option(lists):
    _check(_pack(lists))


@pytest.mark.parametrize("seed", range(3))
def test_on_large_packs(seed):
    rng = np.random.default_rng(seed)
    lists = []
    for _ in range(5000):
        m = int(rng.integers(2, 11))
        p = rng.random(m)
        p = np.where(rng.random(m) < 0.3, np.round(p, 2), p / p.sum())
        g = sorted(rng.choice(m, size=int(rng.integers(0, m + 1)), replace=False).tolist())
        lists.append((p.tolist(), g, bool(rng.random() < 0.05)))
    _check(_pack(lists))
