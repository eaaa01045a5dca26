"""prereg.decide on columns of JSON values: the vectorized conditions, derived fields, attempt
policy and selection sums agree with plain per-value loops written here (property tests)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.decide import attempts
from prereg.decide.columns import Column
from prereg.decide.evaluate import Selections
from prereg.decide.fields import condition_mask, derive, engine_columns
from prereg.decide.metrics import RowMetric
from prereg.decide.table import RowTable
from prereg.errors import UserError

JSON = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, -0.25]),
    st.sampled_from(["yes", "no", "1"]),
)


def same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def reference(op: str, a, b=None, values=()) -> bool:
    """One value against a condition, as the vocabulary defines it."""
    if op == "is_null":
        return a is None
    if op == "not_null":
        return a is not None
    if op == "in":
        return a is not None and any(same(a, v) for v in values)
    eq = a is not None and b is not None and same(a, b)
    if op == "eq":
        return eq
    if op == "ne":
        return not eq
    if not (number(a) and number(b)):
        return False
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


OPS = ("eq", "ne", "lt", "le", "gt", "ge")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(JSON, JSON), max_size=25),
    st.sampled_from(OPS),
    JSON,
    st.booleans(),
)
def test_conditions_match_the_per_value_definition(pairs, op, value, against_field):
    xs = [a for a, _ in pairs]
    ys = [b for _, b in pairs]
    cols = {"x": Column.of(xs), "y": Column.of(ys)}
    n = len(xs)
    cond = {"field": "x", "op": op, **({"other": "y"} if against_field else {"value": value})}
    got = condition_mask(cond, cols, n).tolist()
    want = [reference(op, a, b if against_field else value) for a, b in pairs]
    assert got == want
    for op in ("is_null", "not_null"):
        assert condition_mask({"field": "x", "op": op}, cols, n).tolist() == [
            reference(op, a) for a in xs
        ]
    allowed = [value, "no"]
    assert condition_mask({"field": "x", "op": "in", "values": allowed}, cols, n).tolist() == [
        reference("in", a, values=allowed) for a in xs
    ]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=30))
def test_cases_and_tests_give_values_for_observed_rows_only(ps):
    n = len(ps)
    observed = np.array([p is not None for p in ps], dtype=bool)
    gold = ["yes" if i % 2 else "no" for i in range(n)]
    derived = [
        {
            "id": "answer",
            "cases": [
                {"when": [{"field": "p", "op": "gt", "value": 0.5}], "value": "yes"},
                {"when": [{"field": "p", "op": "lt", "value": 0.5}], "value": "no"},
                {"value": "deferred"},
            ],
        },
        {"id": "correct", "test": [{"field": "answer", "op": "eq", "other": "gold"}]},
    ]
    out = derive(derived, {"p": Column.of(ps), "gold": Column.of(gold)}, n, observed)
    answers = ["yes" if p > 0.5 else "no" if p < 0.5 else "deferred" for p in ps if p is not None]
    assert [a for a in out["answer"].tolist() if a is not None] == answers
    assert out["correct"].tolist() == [
        None if p is None else (a == g)
        for p, a, g in zip(ps, out["answer"].tolist(), gold, strict=True)
    ]


def naive_counted(policy, records, index):
    """The attempt that counts, by a loop over the records (rule last, first or first-success)."""
    rule = policy["counts"]
    best: dict[int, int] = {}
    for j, r in enumerate(records):
        if r["req"] != "a":
            continue
        failed = r["p"] is None
        if rule == "first-success" and failed:
            continue
        i = index[r["row"]]
        cur = best.get(i)
        if cur is None:
            best[i] = j
        elif rule == "last" and r["n"] > records[cur]["n"]:
            best[i] = j
        elif rule != "last" and r["n"] < records[cur]["n"]:
            best[i] = j
    out = []
    for i in range(len(index)):
        b = best.get(i)
        if b is not None and rule != "first-success" and records[b]["p"] is None:
            b = None
        out.append(b)
    return out


attempt_lists = st.lists(
    st.tuples(st.integers(0, 5), st.sampled_from("ab"), st.integers(1, 3), st.booleans()),
    max_size=30,
    unique_by=lambda t: t[:3],
)


@settings(max_examples=120, deadline=None)
@given(attempt_lists, st.sampled_from(["last", "first", "first-success"]), st.randoms())
def test_the_counted_attempt_matches_a_loop(attempts_, rule, rnd):
    index = {f"r{i}": i for i in range(6)}
    records = [
        {"row": f"r{row}", "req": req, "n": n, "p": 0.3 if ok else None}
        for row, req, n, ok in attempts_
    ]
    rnd.shuffle(records)
    policy = {
        "key": ["row", "req"],
        "order": "n",
        "counts": rule,
        "failed": [{"field": "p", "op": "is_null"}],
        "where": [{"field": "req", "op": "eq", "value": "a"}],
    }
    chosen, observed = attempts.counted(policy, records, index, "o.jsonl")
    assert chosen == naive_counted(policy, records, index)
    assert observed.tolist() == [c is not None for c in chosen]
    cols = attempts.record_columns(records, chosen, ["p", "n"])
    assert cols["n"].tolist() == [None if c is None else records[c]["n"] for c in chosen]


def test_problems_are_listed_in_line_order():
    index = {"r0": 0, "r1": 1}
    records = [
        {"row": "r0", "n": 1, "p": 0.1},
        {"row": "rx", "n": 1, "p": 0.1},
        {"row": "r1", "n": 1, "p": 0.1},
        {"row": "r0", "n": 1, "p": 0.2},
    ]
    policy = {"key": ["row"], "order": "n", "counts": "last"}

    def check(rows, recs):
        return [None if i != 1 else "row r1 is not asked" for i in rows]

    with pytest.raises(UserError) as err:
        attempts.counted(policy, records, index, "o.jsonl", check=check, rows="the corpus")
    assert err.value.problems == [
        "o.jsonl:2: unknown row id 'rx' (not in the corpus)",
        "o.jsonl:3: row r1 is not asked",
        "o.jsonl:4: duplicate attempt 1 of row='r0' (first on line 1): repeats line 1's row and n",
    ]


def test_a_required_field_is_read_strictly():
    contract = {"fields": [{"name": "row"}, {"name": "n"}, {"name": "p", "nullable": True}]}
    policy = {
        "key": ["row"],
        "order": "n",
        "counts": "last",
        "failed": [{"field": "p", "op": "is_null"}],
    }
    with pytest.raises(KeyError):
        attempts.counted(policy, [{"row": "r0", "n": 1}], {"r0": 0}, "o", contract=contract)
    chosen, _ = attempts.counted(policy, [{"row": "r0", "n": 1}], {"r0": 0}, "o")
    assert chosen == [None]  # without a contract a missing field is null


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from("xy"), st.booleans()), max_size=40))
def test_selection_sums_equal_row_mask_sums(rows):
    cells = tuple(
        {"id": f"c{i}", "split": "test", "rows": 0, "levels": {"f": lv}}
        for i, lv in enumerate(["a", "b", "c"])
    )
    table = RowTable(
        ids=tuple(f"r{i}" for i in range(len(rows))),
        cell=np.array([c for c, _, _ in rows], dtype=np.int64),
        cells=cells,
        attributes={"pos": np.array([p for _, p, _ in rows], dtype=object)},
    )
    hit = np.array([h for _, _, h in rows], dtype=float)
    metric = RowMetric("m", "proportion", hit, np.ones(len(rows)))
    sel = Selections(table)
    for selection in ({}, {"f": ("a", "c")}, {"pos": ("x",)}, {"f": ("b",), "pos": ("y", "x")}):
        mask = sel.mask(selection, "test")
        want = [
            all((cells[c]["levels"]["f"] if k == "f" else p) in v for k, v in selection.items())
            for c, p, _ in rows
        ]
        assert mask.tolist() == want
        assert sel.sums(metric, selection, "test") == (float(hit[mask].sum()), float(mask.sum()))


def test_engine_row_fields_are_the_registered_ones():
    offered = {
        "gold": Column.of(["yes", "no"]),
        "calibratedPYes": Column.of([0.2, None]),
        "calibratedConfidence": Column.of([0.8, None]),
        "extra": Column.of([1, 2]),
    }
    got = engine_columns("reachability-probe", offered)
    assert list(got) == ["gold", "calibratedPYes", "calibratedConfidence"]
    with pytest.raises(UserError, match="does not provide"):
        engine_columns("reachability-probe", {"gold": offered["gold"]})
    assert engine_columns("factorial", offered) == {}


def test_numbers_from_numpy_keep_nan_as_null():
    col = Column.numbers(np.array([0.2, math.nan]))
    assert col.tolist() == [0.2, None]
    assert condition_mask({"field": "p", "op": "is_null"}, {"p": col}, 2).tolist() == [False, True]
    assert random  # the module is imported for hypothesis' st.randoms


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([True, False, None]), max_size=30))
def test_a_boolean_column_holds_each_value_and_its_nulls(values):
    col = Column.of(values)
    if any(v is not None for v in values):
        assert col.kind == "boolean" and col.values.dtype == bool
        assert col.values.tolist() == [v is True for v in values]
    assert col.null.tolist() == [v is None for v in values]
    assert col.tolist() == values
