"""simulate's draws taken for every row at once are the draws taken one at a time."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.engines.reachability.simulate import uniforms


def one_at_a_time(message, scenario, seed, row_ids, count):
    """The draws as simulate took them before (kept here as the oracle)."""
    out = np.empty((len(row_ids), count))
    for i, row_id in enumerate(row_ids):
        for k in range(count):
            text = message.format(scenario=scenario, seed=seed, rowId=row_id, k=k)
            h = hashlib.sha256(text.encode("utf-8")).digest()
            out[i, k] = (int.from_bytes(h[:8], "big") >> 11) / 9007199254740992.0
    return out


MESSAGES = [
    "D17MF:simulate:v1:{scenario}:{seed}:{rowId}:{k}",
    "{k}{rowId}",
    "x{seed}|{scenario}|{k}|{rowId}|ünïcødé",
]


@settings(max_examples=150, deadline=None)
@given(
    message=st.sampled_from(MESSAGES),
    scenario=st.text(max_size=12),
    seed=st.integers(-(2**70), 2**70),
    row_ids=st.lists(st.text(max_size=20), max_size=30),
    count=st.integers(0, 6),
)
def test_the_batched_draws_are_the_scalar_draws_bit_for_bit(
    message, scenario, seed, row_ids, count
):
    got = uniforms(message, scenario, seed, row_ids, count)
    want = one_at_a_time(message, scenario, seed, row_ids, count)
    assert got.shape == want.shape == (len(row_ids), count)
    assert got.dtype == np.float64
    assert got.tobytes() == want.tobytes()
