"""Observations as logs write them: no attempt numbers, identical duplicate lines, a null
attempt number, a ``not_in`` condition. Expected values are read off the records by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from prereg.cli import main
from prereg.decide.attempts import counted
from prereg.decide.fields import condition_mask
from prereg.errors import UserError

INDEX = {"r1": 0, "r2": 1, "r3": 2}


def no_order(**extra):
    return {"contract": "o", "key": ["rowId"], "counts": "first", **extra}


def lines(exc) -> str:
    return "\n".join(exc.value.lines())


def test_without_order_each_row_has_one_record():
    records = [{"rowId": "r2", "ok": True}, {"rowId": "r1", "ok": False}]
    chosen, observed = counted(no_order(), records, INDEX, "log.jsonl")
    assert chosen == [1, 0, None]
    assert observed.tolist() == [True, True, False]


def test_without_order_a_second_record_of_a_row_is_a_refused_duplicate():
    records = [
        {"rowId": "r1", "ok": True},
        {"rowId": "r2", "ok": True},
        {"rowId": "r1", "ok": True},
    ]
    with pytest.raises(UserError) as exc:
        counted(no_order(), records, INDEX, "log.jsonl")
    text = lines(exc)
    assert "log.jsonl:3: duplicate record of rowId='r1' (first on line 1)" in text
    assert "identical-once, first or last" in text


RECORDS = [
    {"rowId": "r1", "ok": True, "ms": 10},
    {"rowId": "r2", "ok": False, "ms": 20},
    {"rowId": "r1", "ok": True, "ms": 10},  # an identical copy of line 1
    {"rowId": "r2", "ok": True, "ms": 25},  # r2 again, with other values
]


@pytest.mark.parametrize(
    "rule, want, dropped",
    [
        ("first", [0, 1, None], 2),  # lines 1 and 2 are the first of their keys
        ("last", [2, 3, None], 2),  # lines 3 and 4 are the last of theirs
    ],
)
def test_duplicates_first_or_last_keep_one_record_per_key_in_line_order(rule, want, dropped):
    tally: dict[str, int] = {}
    chosen, _ = counted(no_order(duplicates=rule), RECORDS, INDEX, "log.jsonl", tally=tally)
    assert chosen == want
    assert tally == {"duplicateRecords": dropped}


def test_duplicates_identical_once_counts_a_copy_once_and_refuses_a_different_one():
    tally: dict[str, int] = {}
    chosen, _ = counted(
        no_order(duplicates="identical-once"), RECORDS[:3], INDEX, "log.jsonl", tally=tally
    )
    assert chosen == [0, 1, None] and tally == {"duplicateRecords": 1}
    with pytest.raises(UserError) as exc:
        counted(no_order(duplicates="identical-once"), RECORDS, INDEX, "log.jsonl")
    assert "log.jsonl:4: repeats the key of line 2 with other values" in lines(exc)


def test_identical_once_tells_true_from_one():
    # JSON equality: true is not 1, so these two lines are not copies of each other
    records = [{"rowId": "r1", "ok": True}, {"rowId": "r1", "ok": 1}]
    with pytest.raises(UserError) as exc:
        counted(no_order(duplicates="identical-once"), records, INDEX, "log.jsonl")
    assert "log.jsonl:2: repeats the key of line 1" in lines(exc)


def test_duplicates_apply_to_a_repeated_key_and_order():
    policy = {**no_order(duplicates="last"), "order": "attempt", "counts": "last"}
    records = [
        {"rowId": "r1", "attempt": 1, "ok": True},
        {"rowId": "r1", "attempt": 2, "ok": False},
        {"rowId": "r1", "attempt": 1, "ok": False},  # attempt 1 again: the later line stays
    ]
    chosen, _ = counted(policy, records, INDEX, "log.jsonl")
    assert chosen == [1, None, None]  # attempt 2 is the highest order; it counts


@pytest.mark.parametrize("bad", [None, "2", True])
def test_a_null_or_non_numeric_order_is_refused_at_its_line(bad):
    policy = {"contract": "o", "key": ["rowId"], "order": "attempt", "counts": "last"}
    records = [{"rowId": "r1", "attempt": 1}, {"rowId": "r2", "attempt": bad}, {"rowId": "r3"}]
    with pytest.raises(UserError) as exc:
        counted(policy, records, INDEX, "log.jsonl")
    text = lines(exc)
    assert f"log.jsonl:2: attempt is {json.dumps(bad)}" in text
    assert "log.jsonl:3: attempt is absent" in text


def test_not_in_is_the_complement_of_in_and_a_null_is_in_none_of_the_values():
    columns = {"status": ["ok", "error", None, "timeout", "ok"]}
    values = ["error", "timeout"]
    got = condition_mask({"field": "status", "op": "not_in", "values": values}, columns, 5)
    assert got.tolist() == [True, False, True, False, True]
    inside = condition_mask({"field": "status", "op": "in", "values": values}, columns, 5)
    assert inside.tolist() == [False, True, False, True, False]
    # a number is not the string of its digits
    nums = condition_mask({"field": "n", "op": "not_in", "values": ["1"]}, {"n": [1, 2]}, 2)
    assert np.all(nums)


def _starter(tmp_path, monkeypatch, edits) -> str:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "logs"]) == 0
    spec = tmp_path / "spec" / "studies" / "logs.yaml"
    text = spec.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec.write_text(text)
    return text


def test_a_study_without_attempt_numbers_runs_and_counts_identical_copies_once(
    tmp_path, monkeypatch, capsys
):
    _starter(
        tmp_path,
        monkeypatch,
        [
            ("      - {name: attempt, type: integer, minimum: 1}\n", ""),
            (
                "  order: attempt\n  counts: last\n",
                "  counts: first\n  duplicates: identical-once\n",
            ),
            (
                "    - {field: correct, op: is_null}\n",
                "    - {field: correct, op: is_null}\n  where:\n"
                "    - {field: rowId, op: not_in, values: [no-such-row]}\n",
            ),
        ],
    )
    assert main(["compile"]) == 0, capsys.readouterr().err
    items, obs, out = (tmp_path / n for n in ("i.jsonl", "o.jsonl", "S.json"))
    assert main(["logs", "items", "--out", str(items)]) == 0
    argv = ["logs", "simulate", "--items", str(items), "--scenario", "effect", "--seed", "1"]
    assert main([*argv, "--out", str(obs)]) == 0
    records = [json.loads(x) for x in obs.read_text().splitlines()]
    assert records and all("attempt" not in r for r in records)
    # the log repeats its first three lines verbatim
    obs.write_text(obs.read_text() + "".join(json.dumps(r) + "\n" for r in records[:3]))
    argv = ["logs", "score", "--items", str(items), "--observations", str(obs)]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    rows = json.loads(out.read_text())["rows"]
    assert rows["observed"] == len({r["rowId"] for r in records})
    assert rows["duplicateRecords"] == 3
    # a copy that differs is refused at its line, and nothing is written
    changed = {**records[0], "correct": not records[0]["correct"]}
    obs.write_text(obs.read_text() + json.dumps(changed) + "\n")
    out2 = tmp_path / "S2.json"
    capsys.readouterr()
    assert main([*argv, "--out", str(out2)]) == 2
    n = len(records) + 4
    assert f"o.jsonl:{n}: repeats the key of line 1 with other values" in capsys.readouterr().err
    assert not out2.exists()


def test_compile_refuses_a_nullable_order_field_at_its_line(tmp_path, monkeypatch, capsys):
    text = _starter(
        tmp_path,
        monkeypatch,
        [
            (
                "{name: attempt, type: integer, minimum: 1}",
                "{name: attempt, type: integer, minimum: 1, nullable: true}",
            )
        ],
    )
    line = text.splitlines().index("  order: attempt") + 1
    capsys.readouterr()
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert f"logs.yaml:{line}" in err and "order field 'attempt'" in err and "null" in err


def test_problems_after_records_set_aside_name_their_own_lines():
    # line 2 repeats line 1 and is set aside (duplicates: first); line 3 is a stray row
    records = [{"rowId": "r1", "ok": True}, {"rowId": "r1", "ok": True}, {"rowId": "zz"}]
    with pytest.raises(UserError) as exc:
        counted(no_order(duplicates="first"), records, INDEX, "log.jsonl")
    assert exc.value.problems == ["log.jsonl:3: unknown row id 'zz' (not in the registered rows)"]
    # unknown rows ignored (line 1), then a repeated attempt on line 4 of line 2
    policy = {"contract": "o", "key": ["rowId"], "order": "attempt", "counts": "last"}
    records = [
        {"rowId": "zz", "attempt": 1},
        {"rowId": "r1", "attempt": 1},
        {"rowId": "r2", "attempt": 1},
        {"rowId": "r1", "attempt": 1},
    ]
    with pytest.raises(UserError) as exc:
        counted({**policy, "unknown_rows": "ignore"}, records, INDEX, "log.jsonl")
    assert exc.value.problems == [
        "log.jsonl:4: duplicate attempt 1 of rowId='r1' (first on line 2): repeats line 2's"
        " rowId and attempt"
    ]
