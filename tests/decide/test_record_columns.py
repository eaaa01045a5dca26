"""Records held as columns (``prereg.columnar.RecordColumns``) read as the same records held as
dicts: every field read, every selection, every manifest expansion and every attempt policy
gives what the dicts give."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.columnar import ABSENT, RecordColumns, field_values, subset
from prereg.decide import attempts

NAMES = ["id", "n", "note", "ok"]
RECORD = st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b", "c", "d"])},
    optional={
        "n": st.none() | st.integers(-3, 3) | st.floats(allow_nan=False),
        "note": st.none() | st.text(max_size=3),
        "ok": st.booleans(),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(RECORD, max_size=20), st.data())
def test_columns_read_as_the_dicts_they_hold(rows, data):
    cols = RecordColumns.from_dicts(NAMES, rows)
    assert len(cols) == len(rows)
    assert list(cols) == rows
    assert [cols[j] for j in range(len(rows))] == rows
    for name in [*NAMES, "other"]:
        assert field_values(cols, name) == field_values(rows, name)
        assert cols.has(name).tolist() == [name in r for r in rows]
    for name in NAMES:
        if all(name in r for r in rows):
            assert field_values(cols, name, True) == field_values(rows, name, True)
    index = data.draw(st.lists(st.integers(0, max(len(rows) - 1, 0)), max_size=8))
    if rows:
        assert list(subset(cols, index)) == subset(rows, index)
        assert list(cols[1::2]) == rows[1::2]
        assert cols[-1] == rows[-1]


def test_a_strict_read_of_a_field_no_record_can_have_raises_as_a_dict_would():
    cols = RecordColumns.from_dicts(["id"], [{"id": "a"}])
    with pytest.raises(KeyError):
        field_values(cols, "rater", True)
    with pytest.raises(KeyError):
        field_values([{"id": "a"}], "rater", True)
    with pytest.raises(IndexError):
        cols[1]
    with pytest.raises(IndexError):
        cols.take([1])


def test_absent_survives_a_pickle_as_itself():
    assert pickle.loads(pickle.dumps(ABSENT)) is ABSENT
    cols = RecordColumns.from_dicts(["id", "n"], [{"id": "a"}, {"id": "b", "n": 1}])
    back = pickle.loads(pickle.dumps(cols))
    assert list(back) == [{"id": "a"}, {"id": "b", "n": 1}]


@settings(max_examples=100, deadline=None)
@given(st.lists(RECORD, min_size=1, max_size=8), st.integers(1, 3))
def test_an_expanded_manifest_of_columns_is_the_expanded_dicts(rows, k):
    items = {"id": "items", "fields": [{"name": n} for n in NAMES]}
    observation = {"fields": [{"name": "rater", "type": "string", "factor": "rater"}]}
    policy = {"key": ["id", "rater"], "expand": [{"field": "rater", "values": list("xyz"[:k])}]}
    want = attempts.expanded_manifest(policy, observation, items, rows)
    got = attempts.expanded_manifest(
        policy, observation, items, RecordColumns.from_dicts(NAMES, rows)
    )
    assert got[0] == want[0] and got[2] == want[2]
    assert list(got[1]) == want[1]


POLICIES = [
    {"key": ["id"], "order": "n", "counts": "last"},
    {"key": ["id"], "order": "n", "counts": "first-success", "failed": [{"field": "ok", "op": "eq", "value": False}]},
    {"key": ["id"], "order": "n", "counts": "first", "duplicates": "first"},
    {"key": ["id", "note"], "order": "n", "counts": "last-any", "duplicates": "last"},
    {"key": ["id"], "counts": "last", "unknown_rows": "ignore", "duplicates": "last"},
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"id": st.sampled_from(["a", "b", "c", "z"]), "n": st.integers(1, 3)},
            optional={
                "ok": st.booleans() | st.just("yes"),  # a mixed column now and then
                "note": st.sampled_from(["p", "q"]),
            },
        ),
        max_size=12,
    ),
    st.sampled_from(POLICIES),
)
def test_an_attempt_policy_counts_columns_as_it_counts_dicts(rows, policy):
    index = {"a": 0, "b": 1, "c": 2}
    if len(policy["key"]) == 2:
        index = {(i, n): k for k, (i, n) in enumerate((i, n) for i in "abc" for n in "pq")}
    cols = RecordColumns.from_dicts(NAMES, rows)

    def outcome(records):
        tally: dict[str, int] = {}
        try:
            chosen, has = attempts.counted(policy, records, index, "obs.jsonl", tally=tally)
        except Exception as exc:  # noqa: BLE001 - the refusal itself is compared
            return type(exc).__name__, str(exc), getattr(exc, "problems", None)
        picked = attempts.record_columns(records, chosen, NAMES)
        return chosen, has.tolist(), tally, {k: (c.kind, c.tolist()) for k, c in picked.items()}

    assert outcome(cols) == outcome(rows)


PLACE = {
    "factors": [{"id": "arm", "levels": [{"id": "x"}, {"id": "y"}]}],
    "splits": [{"id": "s"}, {"id": "t"}],
    "cells": [
        {"id": "s-x", "split": "s", "rows": 4, "levels": {"arm": "x"}},
        {"id": "s-y", "split": "s", "rows": 4, "levels": {"arm": "y"}},
        {"id": "t-x", "split": "t", "rows": 4, "levels": {"arm": "x"}},
    ],
}
PLACE_FIELDS = [
    {"name": "id", "type": "string", "role": "row"},
    {"name": "split", "type": "string", "role": "split"},
    {"name": "arm", "type": "string", "factor": "arm"},
    {"name": "n", "type": "integer"},
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "id": st.sampled_from(["a", "b", "c", "d", "e"]),
                "split": st.sampled_from(["s", "s", "t"]),
                "arm": st.sampled_from(["x", "x", "y"]),
                "n": st.integers(0, 3),
            }
        ),
        max_size=14,
    ),
    st.booleans(),
    st.booleans(),
)
def test_rows_placed_from_observations_at_once_are_the_record_loops_rows(rows, ignore, cols):
    from prereg.decide import table as table_module

    contract = {"id": "obs", "fields": PLACE_FIELDS}
    records = RecordColumns.from_dicts([f["name"] for f in PLACE_FIELDS], rows) if cols else rows

    def place(at_once: bool):
        saved = table_module._observed_at_once
        if not at_once:
            table_module._observed_at_once = lambda *a: None
        try:
            t = table_module.from_items(
                PLACE, contract, records, "obs.jsonl", row_field="id", complete=False,
                ignore_unplaced=ignore,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - the refusal itself is compared
            return type(exc).__name__, str(exc), getattr(exc, "problems", None)
        finally:
            table_module._observed_at_once = saved
        return t.ids, t.cell.tolist(), {k: list(v) for k, v in t.columns.items()}

    assert place(True) == place(False)
