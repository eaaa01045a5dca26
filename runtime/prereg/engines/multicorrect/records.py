"""The records that cross the boundary between a prediction provider and the evaluator.

- :class:`PublicChoiceList` is all a provider may see: request id, question, candidate texts.
  It holds no reference to a correct set, so neither its attributes, its repr nor its JSON form
  can reveal one.  Candidate texts are kept exactly as given (near-duplicates are never merged
  or normalised); options are identified by index.
- :class:`EvaluatorRow` adds the private correct set and the split.  Its repr hides the set.
- :class:`Prediction` is a provider's answer for one list: probabilities aligned with the
  candidates, or a refusal.
- :func:`collect_public_predictions` hands a provider :class:`PublicChoiceList` objects only
  and refuses anything else (an :class:`EvaluatorRow` above all).  This is a contract on the
  evaluator's side; it cannot stop a provider from reading data through its own closure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig, engine_config


class LabelLeakError(TypeError):
    """Something other than a bare :class:`PublicChoiceList` was about to reach a provider."""


def _check_text(value: Any, what: str) -> str:
    """``value`` as an exact ``str``: a str subclass (which could carry extra attributes) is
    copied into a plain string."""
    if type(value) is str:
        return value
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return "".join([value])


def _as_tuple(value: Any, message: str) -> tuple:
    if type(value) is tuple:
        return value
    if value is None or isinstance(value, (str, bytes, Mapping)):
        raise TypeError(message)
    try:
        return tuple(value)
    except TypeError:
        raise TypeError(message) from None


@dataclass(frozen=True, slots=True)
class PublicChoiceList:
    """A choice list as a provider sees it: ``request_id``, ``question``, ``candidates``."""

    request_id: str
    question: str
    candidates: tuple[str, ...]

    def __post_init__(self) -> None:
        rid = _check_text(self.request_id, "request_id")
        if not rid:
            raise ValueError("request_id must not be empty")
        object.__setattr__(self, "request_id", rid)
        object.__setattr__(self, "question", _check_text(self.question, "question"))
        cands = _as_tuple(self.candidates, "candidates must be a sequence of strings")
        if not set(map(type, cands)) <= {str}:
            cands = tuple(_check_text(c, f"candidates[{i}]") for i, c in enumerate(cands))
        object.__setattr__(self, "candidates", cands)

    def to_json(self) -> dict[str, Any]:
        """The JSON form: exactly the three public fields."""
        return {
            "request_id": self.request_id,
            "question": self.question,
            "candidates": list(self.candidates),
        }


@dataclass(frozen=True, slots=True, repr=False)
class EvaluatorRow:
    """The evaluator's view: the public list, the private correct set and the split."""

    public: PublicChoiceList
    correct: frozenset[int]
    split: str

    def __post_init__(self) -> None:
        if type(self.public) is not PublicChoiceList:
            raise TypeError("public must be a PublicChoiceList")
        _check_text(self.split, "split")
        items = _as_tuple(self.correct, "correct must be a collection of candidate indices")
        m = len(self.public.candidates)
        if not set(map(type, items)) <= {int}:
            for j in items:
                if isinstance(j, bool) or not isinstance(j, (int, np.integer)):
                    raise TypeError("correct must hold integer candidate indices")
            items = [int(j) for j in items]
        if items and not (0 <= min(items) and max(items) < m):
            bad = next(j for j in items if not 0 <= j < m)
            raise ValueError(f"correct index {bad} is out of range for {m} candidates")
        frozen = frozenset(items)
        if len(frozen) != len(items):
            raise ValueError("correct lists an index twice")
        object.__setattr__(self, "correct", frozen)

    @property
    def request_id(self) -> str:
        return self.public.request_id

    def __repr__(self) -> str:
        return f"EvaluatorRow(request_id={self.public.request_id!r}, split={self.split!r}, correct=<hidden>)"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class Prediction:
    """A provider's answer: ``probabilities`` aligned with the candidates, or ``refused``."""

    request_id: str
    refused: bool
    probabilities: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        _check_text(self.request_id, "request_id")
        if not isinstance(self.refused, bool):
            raise TypeError("refused must be a boolean")
        if self.refused:
            if self.probabilities is not None:
                raise ValueError("a refusal carries no probabilities")
            return
        p = _as_tuple(self.probabilities, "an answer needs a sequence of probabilities")
        if not set(map(type, p)) <= {float}:
            for x in p:
                if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
                    raise TypeError("probabilities must be numbers")
            p = tuple(map(float, p))
        object.__setattr__(self, "probabilities", p)


@dataclass(frozen=True, slots=True)
class BinaryOutput:
    """An independent yes/no probability for one option, with its 0/1 label."""

    request_id: str
    candidate_index: int
    probability: float
    label: int

    def __post_init__(self) -> None:
        _check_text(self.request_id, "request_id")
        if isinstance(self.candidate_index, bool) or not isinstance(self.candidate_index, int):
            raise TypeError("candidate_index must be an integer")
        q = self.probability
        if isinstance(q, bool) or not isinstance(q, (int, float)):
            raise TypeError("probability must be a number")
        if not (math.isfinite(q) and 0.0 <= q <= 1.0):
            raise ValueError(f"probability {q!r} is not a finite number in [0, 1]")
        if isinstance(self.label, bool) or self.label not in (0, 1):
            raise ValueError("label must be 0 or 1")
        object.__setattr__(self, "probability", float(q))


def probability_problems(
    flat: np.ndarray, offsets: np.ndarray, tolerance: float
) -> list[tuple[int, str]]:
    """Problems with aligned probability vectors stored back to back.

    Vector ``i`` is ``flat[offsets[i]:offsets[i+1]]`` (each non-empty).  Each must be finite,
    every value in [0, 1], and sum (left to right, in float) to within ``tolerance`` of 1,
    inclusive.  Returns ``(i, message)`` for each bad vector, in order.
    """
    n = offsets.size - 1
    if n <= 0:
        return []
    lengths = np.diff(offsets)
    idx = np.repeat(np.arange(n), lengths)
    finite = np.isfinite(flat)
    bad_finite = np.zeros(n, dtype=bool)
    np.logical_or.at(bad_finite, idx[~finite], True)
    safe = np.where(finite, flat, 0.5)
    out_range = (safe < 0.0) | (safe > 1.0)
    bad_range = np.zeros(n, dtype=bool)
    np.logical_or.at(bad_range, idx[out_range], True)
    sums = np.add.reduceat(safe, offsets[:-1]) if flat.size else np.zeros(n)
    bad_sum = np.abs(sums - 1.0) > tolerance
    problems: list[tuple[int, str]] = []
    for i in np.flatnonzero(bad_finite | bad_range | bad_sum).tolist():
        seg = flat[offsets[i] : offsets[i + 1]]
        if bad_finite[i]:
            j = int(np.flatnonzero(~np.isfinite(seg))[0])
            problems.append((i, f"probabilities[{j}] is not finite ({float(seg[j])!r})"))
        elif bad_range[i]:
            j = int(np.flatnonzero((seg < 0.0) | (seg > 1.0))[0])
            problems.append((i, f"probabilities[{j}] = {float(seg[j])!r} is outside [0, 1]"))
        else:
            problems.append(
                (i, f"probabilities sum to {float(sums[i])!r}, not 1 within {tolerance!r}")
            )
    return problems


def _provider_answer(answer: Any, pub: PublicChoiceList) -> Prediction:
    if answer is None:
        return Prediction(pub.request_id, True, None)
    if isinstance(answer, Prediction):
        if answer.request_id != pub.request_id:
            raise ValueError(
                f"provider answered request {answer.request_id!r} for list {pub.request_id!r}"
            )
        return answer
    return Prediction(pub.request_id, False, tuple(answer))


def collect_public_predictions(
    provider: Callable[[PublicChoiceList], Any],
    lists: Iterable[PublicChoiceList],
    config: Mapping[str, Any] | EngineConfig,
) -> dict[str, Prediction]:
    """Ask ``provider`` for each list and return ``{request_id: Prediction}``.

    ``provider(public_list)`` returns a sequence of probabilities aligned with the candidates,
    a :class:`Prediction` for that request id, or None to refuse.  Every item of ``lists`` must
    be exactly a :class:`PublicChoiceList` (not a subclass): an :class:`EvaluatorRow` or any
    other object raises :class:`LabelLeakError` before the provider is called at all.  Answers
    are checked (alignment, finite, in [0, 1], sum within the configured tolerance of 1); a bad
    answer raises ValueError naming the request id.  Nothing is renormalised.
    """
    cfg = engine_config(config)
    if isinstance(lists, (EvaluatorRow, PublicChoiceList, str, bytes, Mapping)):
        raise LabelLeakError(
            "lists must be an iterable of PublicChoiceList objects, "
            f"got a single {type(lists).__name__}"
        )
    items = list(lists)
    for i, item in enumerate(items):
        if type(item) is not PublicChoiceList:
            what = (
                "an EvaluatorRow, which carries the correct set"
                if isinstance(item, EvaluatorRow)
                else f"a {type(item).__name__}"
            )
            raise LabelLeakError(
                f"lists[{i}] is {what}; only PublicChoiceList objects may reach the provider"
            )
    seen: set[str] = set()
    for item in items:
        if item.request_id in seen:
            raise ValueError(f"request_id {item.request_id!r} appears twice")
        seen.add(item.request_id)
    for item in items:
        m = len(item.candidates)
        if not cfg.candidates_min <= m <= cfg.candidates_max:
            raise ValueError(
                f"request {item.request_id!r}: {m} candidates, outside "
                f"[{cfg.candidates_min}, {cfg.candidates_max}]"
            )
    out: dict[str, Prediction] = {}
    for item in items:
        pred = _provider_answer(provider(item), item)
        if not pred.refused:
            m = len(item.candidates)
            if len(pred.probabilities) != m:
                raise ValueError(
                    f"request {item.request_id!r}: {len(pred.probabilities)} probabilities "
                    f"for {m} candidates"
                )
            arr = np.asarray(pred.probabilities, dtype=np.float64)
            bad = probability_problems(
                arr, np.array([0, arr.size], dtype=np.int64), cfg.probability_sum_tolerance
            )
            if bad:
                raise ValueError(f"request {item.request_id!r}: {bad[0][1]}")
        out[item.request_id] = pred
    return out
