"""A compound attempt key names rows by every field of it, never collapsing them.

The attempt policy's whole key names a row (item x rater, problem x model x sample), except the
fields a ``where`` fixes to one value. The old code named a row by the first key field only and
kept one rater's (or one sample's) record per item, dropping the rest without a word; then it
refused such keys. Now every full key is its own row: exactly one record counts per full key,
a record whose full key is not registered is refused at its line, and compile refuses a key
that an item manifest cannot list.
"""

from __future__ import annotations

import pytest

from prereg.cli import main
from prereg.decide.attempts import counted, row_name
from prereg.errors import UserError

# three raters per item, one attempt each: six labels of two items
LABELS = [
    {"itemId": "i1", "rater": "ann", "attempt": 1, "label": True},
    {"itemId": "i1", "rater": "bob", "attempt": 1, "label": False},
    {"itemId": "i1", "rater": "cat", "attempt": 1, "label": True},
    {"itemId": "i2", "rater": "ann", "attempt": 1, "label": False},
    {"itemId": "i2", "rater": "bob", "attempt": 1, "label": False},
    {"itemId": "i2", "rater": "cat", "attempt": 1, "label": True},
]
INDEX = {"i1": 0, "i2": 1}  # rows named by the item alone
FULL = {(r["itemId"], r["rater"]): i for i, r in enumerate(LABELS)}  # rows named by item x rater


def rater_policy(**extra):
    return {
        "contract": "labels",
        "key": ["itemId", "rater"],
        "order": "attempt",
        "counts": "first",
        **extra,
    }


def test_three_raters_per_item_are_three_rows_each_with_its_own_record():
    chosen, observed = counted(rater_policy(), LABELS, FULL, "labels.jsonl")
    assert row_name(rater_policy()) == ["itemId", "rater"]
    assert chosen == [0, 1, 2, 3, 4, 5]  # one record per full key, none dropped
    assert observed.tolist() == [True] * 6


def test_rows_named_by_the_item_alone_refuse_every_rater_record_rather_than_choose_one():
    with pytest.raises(UserError) as exc:
        counted(rater_policy(), LABELS, INDEX, "labels.jsonl")
    text = "\n".join(exc.value.lines())
    assert "6 problem(s)" in text
    assert "labels.jsonl:2: unknown row itemId='i1', rater='bob'" in text


def test_a_repeated_full_key_is_refused_at_its_line():
    records = [*LABELS, dict(LABELS[1])]
    with pytest.raises(UserError) as exc:
        counted(rater_policy(), records, FULL, "labels.jsonl")
    text = "\n".join(exc.value.lines())
    assert "labels.jsonl:7: duplicate attempt 1 of itemId='i1', rater='bob'" in text


def test_problem_model_sample_key_names_each_sample_its_own_row():
    records = [
        {"problemId": "p1", "model": "m", "sample": s, "attempt": a, "ok": a == 2}
        for s in range(3)
        for a in (1, 2)
    ]
    policy = {
        "contract": "o",
        "key": ["problemId", "model", "sample"],
        "order": "attempt",
        "counts": "last",
        "where": [{"field": "model", "op": "eq", "value": "m"}],
    }
    # model is fixed by where: the row is problem x sample
    assert row_name(policy) == ["problemId", "sample"]
    index = {("p1", s): s for s in range(3)}
    chosen, observed = counted(policy, records, index, "runs.jsonl")
    assert chosen == [1, 3, 5]  # each sample's last attempt
    assert observed.all()


@pytest.mark.parametrize(
    "where",
    [
        [{"field": "rater", "op": "eq", "value": "bob"}],
        [{"field": "rater", "op": "in", "values": ["bob"]}],
    ],
)
def test_a_key_field_fixed_by_where_is_honoured_one_record_per_full_key(where):
    assert row_name(rater_policy(where=where)) == ["itemId"]
    chosen, observed = counted(rater_policy(where=where), LABELS, INDEX, "labels.jsonl")
    # bob's label of i1 is line 2 (index 1), of i2 line 5 (index 4): one record per full key
    assert chosen == [1, 4]
    assert observed.tolist() == [True, True]


def test_records_outside_where_are_not_a_second_series():
    # the rows the where drops are read and checked only: ann's and cat's labels do not clash
    policy = rater_policy(where=[{"field": "rater", "op": "eq", "value": "ann"}])
    chosen, _ = counted(policy, LABELS, INDEX, "labels.jsonl")
    assert chosen == [0, 3]


def _starter_with_rater(tmp_path, monkeypatch, where: str) -> str:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "raters"]) == 0
    spec = tmp_path / "spec" / "studies" / "raters.yaml"
    text = spec.read_text()
    text = text.replace(
        "      - {name: attempt, type: integer, minimum: 1}\n",
        "      - {name: attempt, type: integer, minimum: 1}\n"
        "      - {name: rater, type: string, min_length: 1}\n",
        1,
    )
    text = text.replace("  key: [rowId]\n", "  key: [rowId, rater]\n" + where, 1)
    spec.write_text(text)
    return text


def test_compile_refuses_a_naming_key_field_the_manifest_lacks_at_its_line(
    tmp_path, monkeypatch, capsys
):
    text = _starter_with_rater(tmp_path, monkeypatch, "")
    line = text.splitlines().index("  key: [rowId, rater]") + 1
    capsys.readouterr()
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert f"raters.yaml:{line}" in err
    assert "key field 'rater' names the row together with 'rowId'" in err
    assert "has no field 'rater'" in err
    assert not (tmp_path / "generated" / "raters").exists()


def test_compile_accepts_a_key_field_a_where_fixes(tmp_path, monkeypatch, capsys):
    where = "  where:\n    - {field: rater, op: eq, value: ann}\n"
    _starter_with_rater(tmp_path, monkeypatch, where)
    assert main(["compile"]) == 0, capsys.readouterr().err
