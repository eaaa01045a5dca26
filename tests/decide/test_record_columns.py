"""Records held as columns (``prereg.columnar.RecordColumns``) read as the same records held as
dicts: every field read, every selection, every manifest expansion and every attempt policy
gives what the dicts give."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.columnar import (
    ABSENT,
    RecordColumns,
    field_values,
    shared_positions,
    subset,
)
from prereg.decide import attempts
from prereg.errors import UserError
from prereg.records import read_jsonl_columns

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
    if len(policy["key"]) == 1:
        # the reader's positions of the shared row ids stand for looking each id up again
        shared = RecordColumns.from_dicts(NAMES, rows)
        shared.share("id", index, ["a", "b", "c"])
        assert ("id" in shared.positions) == bool(rows)
        assert outcome(shared) == outcome(rows)
        # positions of another index are not read (the table they name is another)
        other = RecordColumns.from_dicts(NAMES, rows)
        other.share("id", dict(index), ["a", "b", "c"])
        assert outcome(other) == outcome(rows)


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


# -- strings held once (shared_positions, RecordColumns.share, the readers' ``share``) ----------

IDS = st.lists(
    st.text(max_size=3) | st.integers(-2, 2) | st.booleans() | st.floats(allow_nan=False),
    max_size=8,
    unique_by=lambda v: (type(v), v),
)
CELL = (
    st.text(max_size=3)
    | st.integers(-2, 2)
    | st.booleans()
    | st.floats(allow_nan=False)
    | st.none()
    | st.just(ABSENT)
)


def _kinds(col) -> list:
    """Each value with its type (1, 1.0 and True differ; ABSENT is itself)."""
    return [(type(v).__name__, v) for v in col]


@settings(max_examples=300, deadline=None)
@given(IDS, st.lists(CELL, max_size=20))
def test_shared_positions_hold_the_tables_objects_and_nothing_else_changes(ids, drawn):
    ids = [v for v in ids if not (type(v) is float and v != v)]
    index = {}
    for p, v in enumerate(ids):
        index.setdefault(v, p)  # 1, 1.0 and True are one key, as in a row table's dict
    # fresh copies of the table's strings, as a reader decodes them
    col = ["".join(list(v)) if type(v) is str else v for v in drawn + ids]
    before = list(col)
    out = shared_positions(col, index, ids)[0]
    assert _kinds(out) == _kinds(before)  # same values, same kinds
    assert [v is ABSENT for v in out] == [v is ABSENT for v in before]
    for v, w in zip(out, before, strict=True):
        if type(w) is str and w in index and type(ids[index[w]]) is str:
            assert v is ids[index[w]]  # held once: the table's object
        elif type(w) is not str:
            assert v is w  # never replaced
    assert col == before  # the input list is left as it was
    shared, at = shared_positions(col, index, ids)
    assert shared == out and _kinds(shared) == _kinds(out)
    assert at.tolist() == [index.get(v, -1) for v in before]


def test_a_column_that_cannot_be_looked_up_is_kept_as_it_is():
    col = [["a"], "a"]  # a list value (an array field) is no dict key
    kept, at = shared_positions(col, {"a": 0}, ["a"])
    assert kept is col and at is None


def test_share_replaces_a_column_and_forgets_what_was_built_from_it():
    ids = ["r1", "r2"]
    rows = [{"id": "".join(["r", "1"]), "ok": True}, {"ok": False}, {"id": "r3", "ok": True}]
    cols = RecordColumns.from_dicts(["id", "ok"], rows)
    cols.cache[("column", "id")] = "built"
    cols.cache[("column", "ok")] = "kept"
    cols.share("id", {"r1": 0, "r2": 1}, ids)
    assert list(cols) == rows
    assert cols.columns["id"][0] is ids[0] and cols.columns["id"][1] is ABSENT
    assert cols.absent == {"id": 1}
    assert cols.cache == {("column", "ok"): "kept"}


@pytest.mark.parametrize("batch", [1, 2, 1 << 16])  # the blocks' ids looked up together
@pytest.mark.parametrize("typed", [True, False])  # additional properties: no typed decode
@pytest.mark.parametrize("block", [None, 64])
def test_a_reader_sharing_row_ids_reads_the_same_columns(
    tmp_path, block, typed, batch, monkeypatch
):
    import prereg.records

    monkeypatch.setattr(prereg.records, "SHARE_BATCH", batch)
    schema = tmp_path / "obs.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "rowId": {"type": "string"},
                    "attempt": {"type": "integer"},
                    "correct": {"type": ["boolean", "null"]},
                },
                "required": ["rowId", "attempt"],
                "additionalProperties": not typed,
            }
        )
    )
    lines = [
        '{"rowId": "r1", "attempt": 1, "correct": true}',
        '{"rowId": "r2", "attempt": 2}',
        '{"rowId": "r9", "attempt": 1, "correct": null}',  # a row the table lacks
        '{"rowId": "r1", "attempt": 2, "correct": false}',
        '{"rowId": "r2", "rowId": "r2", "attempt": 3}',  # a repeated key: the strict reader
    ]
    path = tmp_path / "obs.jsonl"
    path.write_text("\n".join(lines[:4]) + "\n")
    ids = ["r1", "r2"]
    index = {"r1": 0, "r2": 1}
    plain = read_jsonl_columns(path, schema, block=block)
    shared = read_jsonl_columns(path, schema, block=block, share={"rowId": (index, ids)})
    for name in plain.names:
        assert _kinds(shared.columns[name]) == _kinds(plain.columns[name])
    assert shared.absent == plain.absent == {"correct": 1}
    got = shared.columns["rowId"]
    assert [got[j] is ids[k] for j, k in ((0, 0), (1, 1), (3, 0))] == [True] * 3
    assert got[2] == "r9"
    assert shared.positions["rowId"][0] is index
    assert shared.positions["rowId"][1].tolist() == [0, 1, -1, 0]
    assert shared.take([3, 2]).positions["rowId"][1].tolist() == [0, -1]
    # the same refusal, word for word, with or without sharing
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as a:
        read_jsonl_columns(path, schema, block=block)
    with pytest.raises(UserError) as b:
        read_jsonl_columns(path, schema, block=block, share={"rowId": (index, ids)})
    assert (a.value.message, a.value.problems) == (b.value.message, b.value.problems)


def _obs_schema(tmp_path):
    """An observation contract of a row id and an attempt number, as a schema file."""
    schema = tmp_path / "obs.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"rowId": {"type": "string"}, "attempt": {"type": "integer"}},
                "required": ["rowId", "attempt"],
                "additionalProperties": False,
            }
        )
    )
    return schema


def test_a_parquet_file_read_sharing_row_ids_reads_the_same_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from prereg.tabular import read_contract_columns

    schema = _obs_schema(tmp_path)
    path = tmp_path / "obs.parquet"
    pq.write_table(pa.table({"rowId": ["r1", "r9", "r1"], "attempt": [1, 1, 2]}), path)
    fields = [{"name": "rowId", "type": "string"}, {"name": "attempt", "type": "integer"}]
    ids = ["r1"]
    plain = read_contract_columns(path, schema, fields)
    shared = read_contract_columns(path, schema, fields, share={"rowId": ({"r1": 0}, ids)})
    for name in ("rowId", "attempt"):
        assert _kinds(shared.columns[name]) == _kinds(plain.columns[name])
    got = shared.columns["rowId"]
    assert got[0] is ids[0] and got[2] is ids[0] and got[1] == "r9"


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_a_file_read_in_pieces_shares_row_ids_piece_by_piece(tmp_path, monkeypatch, kind):
    """Parquet row groups and CSV blocks share their ids as they are read: the same strings
    (the manifest's objects) and the same positions as sharing the whole column afterwards,
    -1 for an id the manifest lacks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from prereg import tabular
    from prereg.columnar import shared_positions
    from prereg.tabular import read_contract_columns

    schema = _obs_schema(tmp_path)
    rows = [f"r{i % 37}" for i in range(400)]  # r30-r36 are not in the manifest
    path = tmp_path / f"obs.{kind}"
    if kind == "parquet":
        table = pa.table({"rowId": rows, "attempt": [1 + i // 37 for i in range(400)]})
        pq.write_table(table, path, row_group_size=64)
        assert pq.ParquetFile(path).num_row_groups > 5
    else:
        lines = [f"{r},{1 + i // 37}" for i, r in enumerate(rows)]
        path.write_text("rowId,attempt\n" + "\n".join(lines) + "\n")
        monkeypatch.setattr(tabular, "CSV_BLOCK", 512)  # several blocks
    fields = [{"name": "rowId", "type": "string"}, {"name": "attempt", "type": "integer"}]
    ids = [f"r{i}" for i in range(30)]
    index = {v: i for i, v in enumerate(ids)}
    plain = read_contract_columns(path, schema, fields)
    shared = read_contract_columns(path, schema, fields, share={"rowId": (index, ids)})
    assert shared.columns == plain.columns
    want_col, want_at = shared_positions(list(plain.columns["rowId"]), index, ids)
    got = shared.columns["rowId"]
    assert got == want_col
    assert all(got[i] is ids[int(rows[i][1:])] for i in range(400) if int(rows[i][1:]) < 30)
    got_index, got_at = shared.positions["rowId"]
    assert got_index is index and got_at.tolist() == want_at.tolist()
    assert got_at.tolist() == [index.get(r, -1) for r in rows]


KEYS = st.lists(st.text(max_size=4), max_size=40, unique=True)
PROBES = st.lists(
    st.text(max_size=4) | st.integers() | st.none() | st.booleans() | st.floats(), max_size=30
)


@settings(max_examples=300, deadline=None)
@given(KEYS, PROBES)
def test_a_hash_index_finds_what_the_dict_finds(keys, probes):
    from prereg.columnar import HashIndex, index_positions, row_index

    want = dict(zip(keys, range(len(keys)), strict=True))
    index = row_index(keys, least=0)
    assert isinstance(index, HashIndex) or not keys  # distinct strings: no dict
    probes = probes + keys[::2] + ["".join(list(k)) for k in keys[1::3]]  # equal, not identical
    # a number with a key's hash is no key: the hash is found, the comparison refuses it
    probes += [hash(k) for k in keys[:5]]
    assert [index.get(v) for v in probes] == [want.get(v) for v in probes]
    assert [v in index for v in probes] == [v in want for v in probes]
    assert index_positions(index, probes).tolist() == [want.get(v, -1) for v in probes]
    assert len(index) == len(want) and list(index) == list(want)
    for k in keys[:3]:
        assert index[k] == want[k]
    with pytest.raises(KeyError):
        index[object()]
    with pytest.raises(TypeError):  # as a dict raises for a value that cannot be a key
        index_positions(index, [["a"]])


def test_row_index_keeps_a_dict_where_a_hash_index_cannot_stand_for_one():
    from prereg.columnar import HashIndex, row_index

    assert type(row_index(["a", "b"])) is dict  # few keys
    assert isinstance(row_index([f"r{i}" for i in range(2000)]), HashIndex)
    repeated = [f"r{i}" for i in range(2000)] + ["r7"]
    got = row_index(repeated)
    assert type(got) is dict and len(got) == 2000  # the placement's own check sees the repeat
    assert type(row_index([*(f"r{i}" for i in range(2000)), 5])) is dict  # another kind


HASHES = st.integers(-(2**63), 2**63 - 1)
# hashes that crowd a few slots: equal low bits (long probe runs), and the table's last slots
# (runs that wrap round to the first)
CROWDED = st.builds(
    lambda high, low: (high << 3 | low) - 2**63 if high << 3 | low < 2**64 else low,
    st.integers(0, 2**61 - 1),
    st.sampled_from([0, 1, 7]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(HASHES | CROWDED, max_size=300, unique=True), st.data())
def test_a_hash_index_finds_each_hash_as_a_dict_of_hashes_does(hashes, data):
    from prereg.columnar import HashIndex

    h = np.array(hashes, dtype=np.int64)
    index = HashIndex.build([str(i) for i in range(h.size)], h)
    assert index is not None and (index.slots >= 0).sum() == h.size
    want = {v: i for i, v in enumerate(hashes)}
    probes = data.draw(st.lists(HASHES | CROWDED, max_size=50)) + hashes[::3]
    got = index._find(np.array(probes, dtype=np.int64)).tolist()
    assert got == [want.get(v, -1) for v in probes]


def test_a_hash_index_refuses_two_keys_of_one_hash():
    from prereg.columnar import HashIndex

    # the same hash twice, claiming one empty slot in the same round or a later one
    for hashes in ([5, 5], [5, 13, 5], [1, 2, 3, 4, 5, 6, 7, 8, 5]):
        keys = [str(i) for i in range(len(hashes))]
        assert HashIndex.build(keys, np.array(hashes, dtype=np.int64)) is None
