"""A compound attempt key is honoured or refused, never collapsed.

The attempt policy names a row by its first key field and counts one record per row. With a
key of several fields (item x rater, problem x model x sample) and no ``where`` fixing the
others, the old code kept one rater's (or one sample's) record per item and dropped the rest
without a word. Now compile refuses such a key at its line, and scoring refuses records that
give a row a second series; a key whose other fields a ``where`` fixes to one value is
honoured: exactly the records of that value count, one per row.
"""

from __future__ import annotations

import pytest

from prereg.cli import main
from prereg.decide.attempts import counted
from prereg.errors import UserError

INDEX = {"i1": 0, "i2": 1}
# three raters per item, one attempt each: nine labels, six of them on the two items here
LABELS = [
    {"itemId": "i1", "rater": "ann", "attempt": 1, "label": True},
    {"itemId": "i1", "rater": "bob", "attempt": 1, "label": False},
    {"itemId": "i1", "rater": "cat", "attempt": 1, "label": True},
    {"itemId": "i2", "rater": "ann", "attempt": 1, "label": False},
    {"itemId": "i2", "rater": "bob", "attempt": 1, "label": False},
    {"itemId": "i2", "rater": "cat", "attempt": 1, "label": True},
]


def rater_policy(**extra):
    return {
        "contract": "labels",
        "key": ["itemId", "rater"],
        "order": "attempt",
        "counts": "first",
        **extra,
    }


def test_three_raters_per_item_are_refused_not_collapsed_to_one_row_per_item():
    with pytest.raises(UserError) as exc:
        counted(rater_policy(), LABELS, INDEX, "labels.jsonl")
    text = "\n".join(exc.value.lines())
    # the second and third rater of each item: four problems, each at its line
    assert "4 problem(s)" in text
    for line, rater, item in ((2, "bob", "i1"), (3, "cat", "i1"), (5, "bob", "i2")):
        assert f"labels.jsonl:{line}: row itemId={item!r} has a second series (rater={rater!r}" in (
            text
        )
    assert "cannot be honoured" in text


def test_problem_model_sample_key_is_refused_when_samples_vary():
    records = [
        {"problemId": "i1", "model": "m", "sample": s, "attempt": 1, "ok": True} for s in range(3)
    ]
    policy = {
        "contract": "o",
        "key": ["problemId", "model", "sample"],
        "order": "attempt",
        "counts": "last",
        "where": [{"field": "model", "op": "eq", "value": "m"}],
    }
    with pytest.raises(UserError, match="2 problem"):
        counted(policy, records, INDEX, "runs.jsonl")


@pytest.mark.parametrize(
    "where",
    [
        [{"field": "rater", "op": "eq", "value": "bob"}],
        [{"field": "rater", "op": "in", "values": ["bob"]}],
    ],
)
def test_a_key_field_fixed_by_where_is_honoured_one_record_per_full_key(where):
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


def test_compile_refuses_a_key_field_it_cannot_honour_at_its_line(tmp_path, monkeypatch, capsys):
    text = _starter_with_rater(tmp_path, monkeypatch, "")
    line = text.splitlines().index("  key: [rowId, rater]") + 1
    capsys.readouterr()
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert f"raters.yaml:{line}" in err
    assert "key field 'rater' cannot be honoured" in err
    assert not (tmp_path / "generated" / "raters").exists()


def test_compile_accepts_a_key_field_a_where_fixes(tmp_path, monkeypatch, capsys):
    where = "  where:\n    - {field: rater, op: eq, value: ann}\n"
    _starter_with_rater(tmp_path, monkeypatch, where)
    assert main(["compile"]) == 0, capsys.readouterr().err
