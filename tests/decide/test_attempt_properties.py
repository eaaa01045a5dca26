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


@settings(max_examples=400, deadline=None)
@given(policy, st.lists(record, max_size=8))
def test_a_policy_picks_honoured_records_or_refuses_with_lines(pol, records):
    try:
        chosen, observed = counted(pol, records, INDEX, "log.jsonl")
    except UserError as exc:
        assert exc.problems, exc.message  # every refusal lists its problems
        assert all(p.startswith("log.jsonl:") or p.startswith("…") for p in exc.problems)
        return
    assert len(chosen) == len(ROWS) and observed.tolist() == [c is not None for c in chosen]
    for row, c in enumerate(chosen):
        if c is not None:
            assert records[c]["rowId"] == ROWS[row]  # the record counted is the row's own
    if "order" in pol:
        # every record had a number as its order, or the records were refused
        assert all(
            isinstance(r.get("attempt"), int) and not isinstance(r.get("attempt"), bool)
            for r in records
            if r["rowId"] in INDEX or pol.get("unknown_rows") != "ignore"
        )
    if len(pol["key"]) > 1 and pol.get("where") != [{"field": "rater", "op": "eq", "value": "ann"}]:
        # no row was kept from several raters' series: one rater's records per row were read
        for row in ROWS:
            raters = {r.get("rater") for r in records if r["rowId"] == row}
            if len(raters) > 1:
                scored = _scored(pol, [r for r in records if r["rowId"] == row])
                assert len({r.get("rater") for r in scored}) <= 1


def _scored(pol, records):
    where = pol.get("where") or []
    out = []
    for r in records:
        ok = True
        for c in where:
            v = r.get(c["field"])
            if c["op"] == "eq":
                ok &= v == c["value"] and type(v) is type(c["value"])
            else:  # not_in [False]
                ok &= v is not False
        if ok:
            out.append(r)
    return out
