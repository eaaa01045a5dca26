"""Reading observations: the terminal attempt counts, whatever the line order (property tests)."""

from __future__ import annotations

import math

import d17_score_helpers as h
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.engines.reachability import scoring
from prereg.errors import UserError

CTX = h.study()[1]
SPEC = scoring.scoring_spec(CTX.config)
TABLE = h.table(CTX.config)

attempts = st.lists(
    st.tuples(
        st.integers(0, 40),  # row
        st.integers(1, 3),  # attempt
        st.one_of(st.none(), st.floats(0, 1)),  # P(yes) or a failed attempt
    ),
    max_size=60,
    unique_by=lambda t: (t[0], t[1]),
)


def record(row, attempt, p):
    return {"rowId": TABLE.ids[row], "requestId": SPEC.request, "pYes": p, "attempt": attempt}


@settings(max_examples=60, deadline=None)
@given(attempts, st.randoms(use_true_random=False))
def test_terminal_attempt_in_any_order(obs, rnd):
    expected: dict[int, tuple[int, float | None]] = {}
    for row, attempt, p in obs:
        if row not in expected or attempt > expected[row][0]:
            expected[row] = (attempt, p)
    shuffled = list(obs)
    rnd.shuffle(shuffled)
    got = scoring.terminal_p_yes([record(*o) for o in shuffled], TABLE, SPEC, "obs.jsonl")
    for i, x in enumerate(got.tolist()):
        want = expected.get(i, (0, None))[1]
        assert (math.isnan(x) and want is None) or x == want


@settings(max_examples=30, deadline=None)
@given(attempts.filter(bool), st.integers(0, 59))
def test_a_repeated_attempt_is_refused_with_both_lines(obs, k):
    k %= len(obs)
    recs = [record(*o) for o in obs] + [record(*obs[k])]
    with pytest.raises(UserError) as err:
        scoring.terminal_p_yes(recs, TABLE, SPEC, "obs.jsonl")
    line = f"obs.jsonl:{len(recs)}: duplicate attempt {obs[k][1]}"
    assert any(p.startswith(line) and f"first on line {k + 1}" in p for p in err.value.problems)


def test_other_requests_and_unknown_rows():
    good = record(0, 1, 0.7)
    other = {**good, "requestId": "challenger"}
    unknown = {**good, "rowId": "e" * 64}
    with pytest.raises(UserError) as err:
        scoring.terminal_p_yes([good, other, unknown], TABLE, SPEC, "o.jsonl")
    assert err.value.problems == [
        f"o.jsonl:2: row {TABLE.ids[0]} has no request 'challenger'",
        f"o.jsonl:3: unknown row id {'e' * 64!r} (not in the corpus)",
    ]
