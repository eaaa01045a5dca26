"""Property tests over key and attempt policies: optional, nullable and absent fields.

Whatever the contract allows (a key field that may be absent or null, an order that may be
missing, repeated records, unregistered rows) and whatever policy is registered over it, reading
the rows and choosing the counted records either succeeds, with exactly one counted record per
row at most and every counted record's full key its row's, or refuses with a located
UserError: never a traceback.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.decide.attempts import counted, row_name
from prereg.decide.table import from_items
from prereg.errors import UserError

CONFIG = {
    "factors": [{"id": "arm", "levels": [{"id": "x"}, {"id": "y"}]}],
    "splits": [{"id": "s"}],
    "cells": [
        {"id": "s-x", "split": "s", "rows": 12, "levels": {"arm": "x"}},
        {"id": "s-y", "split": "s", "rows": 12, "levels": {"arm": "y"}},
    ],
}


@st.composite
def cases(draw):
    flags = {
        name: (draw(st.booleans()), draw(st.booleans()))  # (required, nullable)
        for name in ("itemId", "rater", "attempt")
    }
    fields = [
        {"name": "itemId", "type": "string", "required": flags["itemId"][0],
         "nullable": flags["itemId"][1]},
        {"name": "rater", "type": "string", "required": flags["rater"][0],
         "nullable": flags["rater"][1]},
        {"name": "attempt", "type": "integer", "required": flags["attempt"][0],
         "nullable": flags["attempt"][1]},
        {"name": "arm", "type": "string", "factor": "arm", "allowed": ["x", "y"]},
        {"name": "ok", "type": "boolean", "nullable": True},
    ]  # fmt: skip
    contract = {"id": "obs", "fields": fields}
    policy = {
        "contract": "obs",
        "key": draw(st.sampled_from([["itemId"], ["itemId", "rater"], ["itemId", "arm"],
                                     ["itemId", "rater", "arm"]])),
        "counts": draw(st.sampled_from(["first", "last", "first-success", "last-any"])),
        "duplicates": draw(st.sampled_from(["refuse", "identical-once", "first", "last"])),
        "unknown_rows": draw(st.sampled_from(["refuse", "ignore"])),
        "failed": [{"field": "ok", "op": "is_null"}],
    }  # fmt: skip
    if draw(st.booleans()):
        policy["order"] = "attempt"
    if "rater" in policy["key"] and draw(st.booleans()):
        policy["where"] = [{"field": "rater", "op": "eq", "value": "a"}]

    def value(name: str, values):
        required, nullable = flags[name]
        options = [st.sampled_from(values)]
        if nullable:
            options.append(st.none())
        if not required:
            options.append(st.just(...))  # absent
        return st.one_of(*options)

    record = st.fixed_dictionaries(
        {
            "itemId": value("itemId", ["i1", "i2", "i3"]),
            "rater": value("rater", ["a", "b"]),
            "attempt": value("attempt", [1, 2]),
            "arm": st.sampled_from(["x", "y"]),
            "ok": st.one_of(st.none(), st.booleans()),
        }
    )
    records = [
        {k: v for k, v in r.items() if v is not ...}
        for r in draw(st.lists(record, min_size=0, max_size=12))
    ]
    return contract, policy, records


@settings(max_examples=300, deadline=None)
@given(cases())
def test_any_policy_over_any_allowed_records_scores_or_refuses_with_a_location(case):
    contract, policy, records = case
    name = row_name(policy)
    try:
        table = from_items(
            CONFIG, contract, records, "obs.jsonl", row_field=name, complete=False,
            ignore_unplaced=policy["unknown_rows"] == "ignore",
        )  # fmt: skip
        chosen, observed = counted(policy, records, table.index, "obs.jsonl", contract=contract)
    except UserError as exc:
        text = "\n".join(exc.lines())
        assert "obs.jsonl" in text
        return
    assert len(chosen) == len(table) == len(observed)
    picked = [c for c in chosen if c is not None]
    assert len(picked) == len(set(picked))  # a record counts for one row at most
    for i, c in enumerate(chosen):
        if c is None:
            continue
        rec = records[c]
        want = tuple(rec.get(f) for f in name) if len(name) > 1 else rec.get(name[0])
        assert table.ids[i] == want


def test_integer_row_ids_are_looked_up_as_the_data_write_them():
    """A log whose item ids are numbers (no manifest): each number names its row; they were
    once turned into text for the table and then not found ("unknown row id 37")."""
    contract = {"id": "obs", "fields": [
        {"name": "itemId", "type": "integer"},
        {"name": "arm", "type": "string", "factor": "arm", "allowed": ["x", "y"]},
        {"name": "ok", "type": "boolean", "nullable": True},
    ]}  # fmt: skip
    policy = {"contract": "obs", "key": ["itemId"], "counts": "first"}
    records = [{"itemId": i, "arm": "xy"[i % 2], "ok": True} for i in range(20)]
    table = from_items(CONFIG, contract, records, "obs.jsonl", row_field=["itemId"],
                       complete=False)  # fmt: skip
    chosen, observed = counted(policy, records, table.index, "obs.jsonl", contract=contract)
    assert observed.sum() == 20
    assert sorted(c for c in chosen if c is not None) == list(range(20))
