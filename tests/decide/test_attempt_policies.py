"""Attempt policies beyond "the last one", and unknown rows ignored and counted, against a
plain reading of the records."""

from __future__ import annotations

import numpy as np
import pytest

from prereg.decide.attempts import counted
from prereg.errors import UserError

INDEX = {"r1": 0, "r2": 1, "r3": 2}
RECORDS = [
    {"rowId": "r1", "attempt": 1, "status": "error", "correct": None},
    {"rowId": "r1", "attempt": 2, "status": "ok", "correct": False},
    {"rowId": "r1", "attempt": 3, "status": "timeout", "correct": None},
    {"rowId": "r2", "attempt": 2, "status": "ok", "correct": True},
    {"rowId": "r2", "attempt": 1, "status": "ok", "correct": False},
    {"rowId": "r3", "attempt": 1, "status": "error", "correct": None},
]
FAILED = [{"field": "correct", "op": "is_null"}]


def policy(counts, **extra):
    return {
        "contract": "o",
        "key": ["rowId"],
        "order": "attempt",
        "counts": counts,
        "failed": FAILED,
        **extra,
    }


@pytest.mark.parametrize(
    "counts, extra, want",
    [
        ("last", {}, [None, 3, None]),  # r1's last failed: unobserved; r3 failed
        ("last-any", {}, [2, 3, 5]),  # the last attempt counts even when it failed
        ("first", {}, [None, 4, None]),  # only attempt 1, never a fallback
        ("first-success", {}, [1, 4, None]),
        ("first-match", {"select": [{"field": "status", "op": "eq", "value": "ok"}]}, [1, 4, None]),
        (
            "first-match",
            {"select": [{"field": "status", "op": "in", "values": ["timeout", "error"]}]},
            [0, None, 5],
        ),
    ],
)
def test_which_attempt_counts(counts, extra, want):
    chosen, observed = counted(policy(counts, **extra), RECORDS, INDEX, "obs.jsonl")
    assert chosen == want
    assert observed.tolist() == [w is not None for w in want]


def test_unknown_rows_are_refused_or_ignored_and_counted():
    records = [*RECORDS, {"rowId": "stray", "attempt": 1, "status": "ok", "correct": True}]
    with pytest.raises(UserError) as exc:
        counted(policy("last"), records, INDEX, "obs.jsonl")
    assert "obs.jsonl:7: unknown row id 'stray'" in "\n".join(exc.value.lines())
    tally: dict[str, int] = {}
    chosen, observed = counted(
        policy("last", unknown_rows="ignore"), records, INDEX, "obs.jsonl", tally=tally
    )
    assert chosen == [None, 3, None] and tally == {"ignoredRecords": 1}
    assert isinstance(observed, np.ndarray)
