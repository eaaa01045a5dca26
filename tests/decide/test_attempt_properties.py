"""Property tests of the attempt policy over records as logs write them: an order field that
is absent, null or not a number, key fields that vary or are missing, duplicates under each
policy. Whatever the records, the policy either picks records that honour it or refuses with a
user's error naming lines; it never raises anything else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.decide.attempts import counted
from prereg.errors import UserError

ROWS = ["r1", "r2", "r3"]
INDEX = {r: i for i, r in enumerate(ROWS)}

value = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from(["x", "1"]))
record = st.fixed_dictionaries(
    {"rowId": st.sampled_from([*ROWS, "stray"])},
    optional={
        "attempt": st.one_of(st.integers(1, 3), value),
        "rater": st.sampled_from(["ann", "bob", None]),
        "ok": value,
    },
)
policy = st.fixed_dictionaries(
    {
        "contract": st.just("o"),
        "key": st.sampled_from([["rowId"], ["rowId", "rater"]]),
        "counts": st.sampled_from(["last", "first", "first-success", "last-any"]),
    },
    optional={
        "order": st.just("attempt"),
        "duplicates": st.sampled_from(["refuse", "identical-once", "first", "last"]),
        "unknown_rows": st.sampled_from(["refuse", "ignore"]),
        "failed": st.just([{"field": "ok", "op": "is_null"}]),
        "where": st.sampled_from(
            [
                [{"field": "rater", "op": "eq", "value": "ann"}],
                [{"field": "ok", "op": "not_in", "values": [False]}],
            ]
        ),
    },
)


# with key [rowId, rater] the rows are named by both fields (rater is not fixed by a where)
NAMED = {(r, rater): i for i, (r, rater) in enumerate((r, a) for r in ROWS for a in ("ann", "bob"))}


@settings(max_examples=400, deadline=None)
@given(policy, st.lists(record, max_size=8))
def test_a_policy_picks_honoured_records_or_refuses_with_lines(pol, records):
    pinned = pol.get("where") == [{"field": "rater", "op": "eq", "value": "ann"}]
    by_both = len(pol["key"]) > 1 and not pinned
    index = NAMED if by_both else INDEX
    try:
        chosen, observed = counted(pol, records, index, "log.jsonl")
    except UserError as exc:
        assert exc.problems, exc.message  # every refusal lists its problems
        assert all(p.startswith("log.jsonl:") or p.startswith("…") for p in exc.problems)
        return
    assert len(chosen) == len(index) and observed.tolist() == [c is not None for c in chosen]
    names = list(index)
    for row, c in enumerate(chosen):
        if c is not None:
            # the record counted is the row's own: its whole name when both fields name rows
            got = (records[c]["rowId"], records[c].get("rater")) if by_both else records[c]["rowId"]
            assert got == names[row]
    if "order" in pol:
        # every record had a number as its order, or the records were refused
        assert all(
            isinstance(r.get("attempt"), int) and not isinstance(r.get("attempt"), bool)
            for r in records
            if (((r["rowId"], r.get("rater")) in index) if by_both else (r["rowId"] in index))
            or pol.get("unknown_rows") != "ignore"
        )
    if pinned:
        # one series per row: only ann's records are scored
        for c in chosen:
            if c is not None:
                assert records[c].get("rater") == "ann"
