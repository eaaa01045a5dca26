"""The provider/evaluator boundary: what a provider can see, and what is refused."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest
from jev_helpers import CONFIG, VAL

from prereg.engines.multicorrect import (
    EvaluatorRow,
    LabelLeakError,
    Prediction,
    PublicChoiceList,
    collect_public_predictions,
)

COPIES = ("Paris", "Paris ", " Paris", "Pa ris", "Paris  ")
SECRET = frozenset({1, 3})


def _public():
    return PublicChoiceList("req-1", "Which options are right?", COPIES)


def _row():
    return EvaluatorRow(_public(), SECRET, VAL)


def test_public_list_carries_only_its_three_fields():
    pub = _public()
    assert [f.name for f in dataclasses.fields(pub)] == ["request_id", "question", "candidates"]
    assert not hasattr(pub, "__dict__")  # slots: nothing can be attached
    with pytest.raises((AttributeError, TypeError)):
        pub.correct = SECRET  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        pub.question = "x"  # type: ignore[misc]
    assert set(pub.to_json()) == {"request_id", "question", "candidates"}
    assert json.loads(json.dumps(pub.to_json())) == {
        "request_id": "req-1",
        "question": "Which options are right?",
        "candidates": list(COPIES),
    }
    assert repr(pub) == (
        f"PublicChoiceList(request_id='req-1', question='Which options are right?', "
        f"candidates={COPIES!r})"
    )
    assert dataclasses.asdict(pub) == {
        "request_id": "req-1",
        "question": "Which options are right?",
        "candidates": COPIES,
    }
    # pickling round-trips the same three fields and nothing else
    assert pickle.loads(pickle.dumps(pub)) == pub


def test_public_list_built_from_a_row_is_the_same_with_or_without_labels():
    # a provider given the public part of two rows differing only in G sees equal objects
    a = EvaluatorRow(_public(), {1, 3}, VAL).public
    b = EvaluatorRow(_public(), set(), VAL).public
    assert a == b and repr(a) == repr(b) and a.to_json() == b.to_json()
    assert pickle.dumps(a) == pickle.dumps(b)


def test_text_fields_are_plain_strings_even_from_a_str_subclass():
    class Tagged(str):
        pass

    text = Tagged("A")
    text.correct = SECRET  # a str subclass can carry attributes...
    pub = PublicChoiceList(Tagged("req-9"), Tagged("q"), (text, Tagged("B")))
    # ...which never reach the public list: every field is an exact str
    assert type(pub.request_id) is str and type(pub.question) is str
    assert [type(c) for c in pub.candidates] == [str, str]
    assert pub.candidates == ("A", "B")
    with pytest.raises(TypeError):
        PublicChoiceList("r", "q", ("a", 1))


def test_near_duplicate_candidates_are_kept_verbatim():
    pub = _public()
    assert pub.candidates == COPIES and len(set(pub.candidates)) == 5


def test_evaluator_row_repr_hides_the_correct_set():
    row = _row()
    for text in (repr(row), str(row), f"{row}"):
        assert "frozenset" not in text and "{1, 3}" not in text and "hidden" in text
    assert row.correct == SECRET


def test_evaluator_row_validates_its_correct_set():
    with pytest.raises(ValueError, match="out of range"):
        EvaluatorRow(_public(), {5}, VAL)
    with pytest.raises(ValueError, match="twice"):
        EvaluatorRow(_public(), [1, 1], VAL)
    with pytest.raises(TypeError):
        EvaluatorRow(_public(), [True], VAL)
    with pytest.raises(TypeError):
        EvaluatorRow(_row(), set(), VAL)  # type: ignore[arg-type]


def test_collect_with_an_evaluator_row_raises_before_calling_the_provider():
    calls = []

    def provider(item):
        calls.append(item)
        return [0.2] * 5

    for bad in ([_row()], [_public(), _row()], _row(), _public()):
        with pytest.raises(LabelLeakError):
            collect_public_predictions(provider, bad, CONFIG)
    assert calls == []


def test_collect_refuses_anything_but_a_bare_public_list():
    class Carrier(PublicChoiceList):
        __slots__ = ("correct",)

    sneaky = Carrier("req-2", "q", COPIES)
    object.__setattr__(sneaky, "correct", SECRET)
    for bad in (sneaky, {"request_id": "r"}, ("req-1", "q", COPIES)):
        with pytest.raises(LabelLeakError):
            collect_public_predictions(lambda x: None, [bad], CONFIG)


def test_provider_sees_public_lists_only_and_finds_no_correct_set():
    seen = []

    def provider(item):
        seen.append(item)
        # everything a provider could inspect
        state = (
            type(item),
            repr(item),
            json.dumps(item.to_json()),
            dir(item),
            [getattr(item, a) for a in item.__slots__],
        )
        assert state[0] is PublicChoiceList
        assert "correct" not in state[3]
        assert item.__slots__ == ("request_id", "question", "candidates")
        return [0.1, 0.3, 0.2, 0.3, 0.1]

    rows = [_row(), EvaluatorRow(PublicChoiceList("req-2", "q2", COPIES), set(), VAL)]
    preds = collect_public_predictions(provider, [r.public for r in rows], CONFIG)
    assert [type(x) for x in seen] == [PublicChoiceList, PublicChoiceList]
    assert preds["req-1"] == Prediction("req-1", False, (0.1, 0.3, 0.2, 0.3, 0.1))
    # the two lists differ in G, yet the provider's views of their public parts match exactly
    assert seen[0].candidates == seen[1].candidates


def test_collect_accepts_refusals_and_prediction_objects():
    answers = {"req-1": None, "req-2": Prediction("req-2", False, (0.5, 0.5, 0, 0, 0))}
    lists = [_public(), PublicChoiceList("req-2", "q", COPIES)]
    preds = collect_public_predictions(lambda x: answers[x.request_id], lists, CONFIG)
    assert preds["req-1"].refused and preds["req-1"].probabilities is None
    assert preds["req-2"].probabilities == (0.5, 0.5, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "answer, message",
    [
        ([0.5, 0.5], "2 probabilities for 5 candidates"),
        ([0.2, 0.2, 0.2, 0.2, 0.3], "sum to"),
        ([0.2, 0.2, 0.2, 0.2, float("nan")], "not finite"),
        ([1.2, -0.2, 0.0, 0.0, 0.0], "outside"),
        ([0.2, 0.2, 0.2, 0.2, 0.2 + 2e-6], "sum to"),
    ],
)
def test_collect_refuses_bad_answers(answer, message):
    with pytest.raises(ValueError, match=message):
        collect_public_predictions(lambda x: answer, [_public()], CONFIG)


@pytest.mark.parametrize(
    "answer, message",
    [
        ([1.25, -0.25, 0.0, 0.0, 0.0], "probabilities[0] = 1.25 is outside [0, 1]"),
        ([0.25, 0.75, -0.0625, 0.0625, 0.0], "probabilities[2] = -0.0625 is outside [0, 1]"),
        ([0.2, 0.2, 0.2, 0.2, float("inf")], "probabilities[4] is not finite (inf)"),
    ],
)
def test_bad_probability_is_quoted_as_a_plain_number(answer, message):
    # the value a user wrote, as a number: not numpy's repr (np.float64(-0.0625))
    with pytest.raises(ValueError) as caught:
        collect_public_predictions(lambda x: answer, [_public()], CONFIG)
    assert message in str(caught.value)
    assert "np." not in str(caught.value)


def test_sum_tolerance_is_inclusive_and_nothing_is_renormalised():
    ok = [0.2, 0.2, 0.2, 0.2, 0.2 + 5e-7]
    preds = collect_public_predictions(lambda x: ok, [_public()], CONFIG)
    assert preds["req-1"].probabilities == tuple(ok)


def test_prediction_shapes():
    with pytest.raises(ValueError):
        Prediction("r", True, (1.0,))
    with pytest.raises(TypeError):
        Prediction("r", False, None)
    with pytest.raises(TypeError):
        Prediction("r", False, (True, False))
    with pytest.raises(TypeError):
        Prediction("r", 0, None)  # type: ignore[arg-type]
