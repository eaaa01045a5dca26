"""Strict readers for the score command's JSONL inputs.

Each line is one JSON object (UTF-8, LF line endings, no blank lines except a final newline).  Refused, each
reported as ``FILE:LINE: FIELD: rule``: invalid JSON, duplicate keys, NaN/Infinity literals,
numbers too large to be finite, missing or unknown fields, wrong types, candidate counts out of
bounds, duplicate request ids, a request id in both splits, request ids unknown to the lists
file or missing from the labels or predictions file, label indices out of range or repeated,
predictions not aligned with their list, probabilities not finite, outside [0, 1] or not
summing to 1 within the tolerance, binary outputs for unknown options or whose label disagrees
with the correct set.  All problems are collected and raised together as one UserError
(the first 50 listed, then how many more).
"""

from __future__ import annotations

import gc
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig
from prereg.engines.multicorrect.records import (
    BinaryOutput,
    EvaluatorRow,
    Prediction,
    PublicChoiceList,
    probability_problems,
)
from prereg.errors import UserError
from prereg.files import read_regular
from prereg.records import StrictJSONError, json_syntax_words, loads_strict, not_text

# the problems listed (the first, by file and line), then how many more: as the records'
# reader lists them (a file of CRLF lines would otherwise print one line per line)
MAX_PROBLEMS = 50


class _LineError(ValueError):
    pass


def _loads(text: str) -> Any:
    try:
        return loads_strict(text, record=True)
    except StrictJSONError as e:
        raise _LineError(str(e)) from None
    except json.JSONDecodeError as e:
        raise _LineError(f"invalid JSON: {json_syntax_words(e, text)}") from None
    except ValueError as e:  # e.g. an integer literal longer than Python converts
        raise _LineError(f"invalid JSON: {e}") from None


def _floats(values: list) -> list[float]:
    try:
        return list(map(float, values))
    except OverflowError:
        return [_as_float(v) for v in values]


def _as_float(v: Any) -> float:
    """A JSON number as a float; integers too large for a float become infinity."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


class _Problems:
    """Problems by file and line; those that follow from another file's problem (a request id
    it lacks) after all the others; none naming a file that cannot be read or is empty."""

    def __init__(self) -> None:
        self.items: list[tuple[bool, int, int, int, str]] = []
        self.order: dict[str, int] = {}
        self.unusable: set[str] = set()

    def add(self, path: str, line: int | None, msg: str, follow: bool = False) -> None:
        fi = self.order.setdefault(path, len(self.order))
        where = f"{path}:{line}" if line is not None else path
        self.items.append((follow, fi, line or 0, len(self.items), f"{where}: {msg}"))

    def lacks(self, path: str, line: int, msg: str, other: str) -> None:
        """A request id missing from ``other``, unless ``other`` is unusable."""
        if other not in self.unusable:
            self.add(path, line, msg, follow=True)

    def __bool__(self) -> bool:
        return bool(self.items)

    def messages(self) -> list[str]:
        return [m for *_, m in sorted(self.items)]


def _read_lines(path: str, problems: _Problems, allow_empty: bool) -> list[tuple[int, Any]]:
    try:
        data = read_regular(path)
    except OSError as e:
        problems.add(path, None, f"cannot read the file: {e.strerror or e}")
        problems.unusable.add(path)
        return []
    records: list[tuple[int, Any]] = []
    why = not_text(data[:4])
    if why is not None:
        problems.add(path, None, why)
        problems.unusable.add(path)
        return []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for no, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(path, no, f"not valid UTF-8 (byte {e.start + 1})")
            continue
        if no == 1 and text.startswith("\ufeff"):
            problems.add(
                path, no, "starts with a byte-order mark (U+FEFF); save it as UTF-8 without BOM"
            )
            continue
        if not text.strip():
            problems.add(path, no, "empty line; every line must hold one JSON object")
            continue
        cr = text.find("\r")
        if cr == len(text) - 1 and (no < len(lines) or data.endswith(b"\n")):
            problems.add(path, no, "CRLF line ending; use LF")
            text = text[:-1]
        elif cr >= 0:
            problems.add(
                path,
                no,
                f"carriage return (CR) not followed by LF at column {cr + 1}: lines end with"
                " LF alone (not CR, as classic Mac OS ended them)",
            )
            continue
        try:
            obj = _loads(text)
        except _LineError as e:
            problems.add(path, no, str(e))
            continue
        if not isinstance(obj, dict):
            problems.add(path, no, f"expected a JSON object, got {type(obj).__name__}")
            continue
        records.append((no, obj))
    if not lines and not allow_empty:
        problems.add(path, None, "the file holds no records")
        problems.unusable.add(path)
    return records


def _fields_ok(obj: dict, names: dict[str, str], path: str, no: int, problems: _Problems) -> bool:
    ok = True
    for name in names.values():
        if name not in obj:
            problems.add(path, no, f"{name}: missing field")
            ok = False
    expected = set(names.values())
    for key in obj:
        if key not in expected:
            problems.add(path, no, f"{key}: unknown field (expected {', '.join(names.values())})")
            ok = False
    return ok


_STR = frozenset({str})
_INT = frozenset({int})
_NUM = frozenset({int, float})


def _types_within(values: list, allowed: frozenset) -> bool:
    """Every value's exact type is in ``allowed`` (so ``bool`` is never an ``int`` here)."""
    return set(map(type, values)) <= allowed


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _request_id(obj, name, path, no, problems) -> str | None:
    rid = obj[name]
    if not isinstance(rid, str) or not rid:
        problems.add(path, no, f"{name}: expected a non-empty string, got {rid!r}")
        return None
    return rid


@dataclass(frozen=True)
class ScoreInputs:
    fit_pairs: list[tuple[EvaluatorRow, Prediction]]
    evaluate_pairs: list[tuple[EvaluatorRow, Prediction]]
    binary: list[BinaryOutput] | None


def read_score_inputs(
    cfg: EngineConfig,
    lists_path: str,
    labels_path: str,
    predictions_path: str,
    binary_path: str | None,
) -> ScoreInputs:
    """Read and cross-check the four inputs; raise one UserError listing every problem.

    The cyclic garbage collector is paused while reading: the records hold no cycles, and
    its passes over hundreds of thousands of fresh containers would otherwise cost about a
    third of the reading time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_score_inputs(cfg, lists_path, labels_path, predictions_path, binary_path)
    finally:
        if was_enabled:
            gc.enable()


def _read_score_inputs(
    cfg: EngineConfig,
    lists_path: str,
    labels_path: str,
    predictions_path: str,
    binary_path: str | None,
) -> ScoreInputs:
    if binary_path is not None and "binary" not in cfg.fields:
        raise UserError(
            f"{binary_path}: the spec declares no record contract with role 'binary', so this"
            " study reads no binary outputs"
        )
    P = _Problems()
    for p in (lists_path, labels_path, predictions_path, binary_path):
        if p is not None:
            P.order.setdefault(p, len(P.order))

    # -- lists ------------------------------------------------------------------------------
    f = dict(cfg.fields["lists"])
    lists: dict[str, tuple[int, PublicChoiceList]] = {}
    seen_list: set[str] = set()  # includes rows with problems, already reported
    for no, obj in _read_lines(lists_path, P, allow_empty=False):
        if not _fields_ok(obj, f, lists_path, no, P):
            continue
        rid = _request_id(obj, f["request_id"], lists_path, no, P)
        q = obj[f["question"]]
        cands = obj[f["candidates"]]
        ok = rid is not None
        if not isinstance(q, str):
            P.add(lists_path, no, f"{f['question']}: expected a string")
            ok = False
        if not isinstance(cands, list) or not _types_within(cands, _STR):
            P.add(lists_path, no, f"{f['candidates']}: expected a list of strings")
            ok = False
        elif not cfg.candidates_min <= len(cands) <= cfg.candidates_max:
            P.add(
                lists_path,
                no,
                f"{f['candidates']}: {len(cands)} candidates, outside "
                f"[{cfg.candidates_min}, {cfg.candidates_max}]",
            )
            ok = False
        if rid is not None and rid in seen_list:
            P.add(lists_path, no, f"{f['request_id']}: {rid!r} appears more than once")
            continue
        if rid is not None:
            seen_list.add(rid)
        if ok:
            lists[rid] = (no, PublicChoiceList(rid, q, tuple(cands)))

    # -- labels -----------------------------------------------------------------------------
    f = dict(cfg.fields["labels"])
    labels: dict[str, tuple[int, str, list[int]]] = {}
    seen_label: dict[str, tuple[int, object]] = {}  # every row with a usable request id
    for no, obj in _read_lines(labels_path, P, allow_empty=False):
        if not _fields_ok(obj, f, labels_path, no, P):
            continue
        rid = _request_id(obj, f["request_id"], labels_path, no, P)
        split = obj[f["split"]]
        corr = obj[f["correct"]]
        ok = rid is not None
        if split not in cfg.split_names:
            P.add(
                labels_path,
                no,
                f"{f['split']}: {split!r} is not a split (expected "
                f"{' or '.join(repr(s) for s in cfg.split_names)})",
            )
            ok = False
        if not isinstance(corr, list) or not _types_within(corr, _INT):
            P.add(labels_path, no, f"{f['correct']}: expected a list of integer indices")
            ok = False
        elif len(set(corr)) != len(corr):
            P.add(labels_path, no, f"{f['correct']}: an index is listed twice")
            ok = False
        if rid is None:
            continue
        if rid in seen_label:
            first, first_split = seen_label[rid]
            if split in cfg.split_names and first_split in cfg.split_names and first_split != split:
                P.add(
                    labels_path,
                    no,
                    f"{f['request_id']}: {rid!r} is in split {split!r} here and in split "
                    f"{first_split!r} at line {first}; the splits must not overlap",
                )
            else:
                P.add(labels_path, no, f"{f['request_id']}: {rid!r} repeats line {first}")
            continue
        seen_label[rid] = (no, split)
        if rid not in seen_list:
            P.lacks(
                labels_path, no, f"{f['request_id']}: {rid!r} is not in {lists_path}", lists_path
            )
            continue
        if rid not in lists:
            continue
        if ok:
            m = len(lists[rid][1].candidates)
            bad = [j for j in corr if not 0 <= j < m]
            if bad:
                P.add(
                    labels_path,
                    no,
                    f"{f['correct']}: index {bad[0]} is out of range for {m} candidates "
                    f"({lists_path}:{lists[rid][0]})",
                )
                ok = False
        if ok:
            labels[rid] = (no, split, corr)

    # -- predictions ------------------------------------------------------------------------
    f = dict(cfg.fields["predictions"])
    preds: dict[str, tuple[int, bool, list[float] | None]] = {}
    seen_pred: dict[str, int] = {}
    for no, obj in _read_lines(predictions_path, P, allow_empty=False):
        if not _fields_ok(obj, f, predictions_path, no, P):
            continue
        rid = _request_id(obj, f["request_id"], predictions_path, no, P)
        refused = obj[f["refused"]]
        probs = obj[f["probabilities"]]
        ok = rid is not None
        if not isinstance(refused, bool):
            P.add(predictions_path, no, f"{f['refused']}: expected true or false")
            ok = False
        elif refused and probs is not None:
            P.add(predictions_path, no, f"{f['probabilities']}: a refusal must have null here")
            ok = False
        elif not refused:
            if not isinstance(probs, list) or not _types_within(probs, _NUM):
                P.add(predictions_path, no, f"{f['probabilities']}: expected a list of numbers")
                ok = False
        if rid is None:
            continue
        if rid in seen_pred:
            P.add(predictions_path, no, f"{f['request_id']}: {rid!r} repeats line {seen_pred[rid]}")
            continue
        seen_pred[rid] = no
        if rid not in seen_list:
            P.lacks(
                predictions_path,
                no,
                f"{f['request_id']}: {rid!r} is not in {lists_path}",
                lists_path,
            )
            continue
        if rid not in lists:
            continue
        if ok and not refused:
            m = len(lists[rid][1].candidates)
            if len(probs) != m:
                P.add(
                    predictions_path,
                    no,
                    f"{f['probabilities']}: {len(probs)} probabilities, not aligned with the "
                    f"{m} candidates of {lists_path}:{lists[rid][0]}",
                )
                ok = False
        if ok:
            preds[rid] = (no, refused, None if refused else _floats(probs))
    answered = [(rid, no, p) for rid, (no, r, p) in preds.items() if not r]
    flat = np.array([x for _, _, p in answered for x in p], dtype=np.float64)
    offsets = np.zeros(len(answered) + 1, dtype=np.int64)
    np.cumsum([len(p) for _, _, p in answered], out=offsets[1:])
    for i, msg in probability_problems(flat, offsets, cfg.probability_sum_tolerance):
        rid, no, _ = answered[i]
        P.add(predictions_path, no, f"{f['probabilities']}: {msg}")
        del preds[rid]

    # -- every list needs a label and a prediction --------------------------------------------
    for rid, (no, _) in lists.items():
        if rid not in seen_label:
            P.lacks(lists_path, no, f"request {rid!r}: no row in {labels_path}", labels_path)
        if rid not in seen_pred:
            P.lacks(
                lists_path, no, f"request {rid!r}: no row in {predictions_path}", predictions_path
            )

    # -- binary outputs ------------------------------------------------------------------------
    binary: list[BinaryOutput] | None = None
    if binary_path is not None:
        binary = []
        f = dict(cfg.fields["binary"])
        seen_opt: dict[tuple[str, int], int] = {}
        for no, obj in _read_lines(binary_path, P, allow_empty=False):
            if not _fields_ok(obj, f, binary_path, no, P):
                continue
            rid = _request_id(obj, f["request_id"], binary_path, no, P)
            j = obj[f["candidate_index"]]
            q = obj[f["probability"]]
            y = obj[f["label"]]
            ok = rid is not None
            if not _is_int(j):
                P.add(binary_path, no, f"{f['candidate_index']}: expected an integer")
                ok = False
            if not _is_num(q) or not math.isfinite(_as_float(q)) or not 0.0 <= q <= 1.0:
                P.add(
                    binary_path,
                    no,
                    f"{f['probability']}: {_shown_value(q)} is not a finite number in [0, 1]",
                )
                ok = False
            if not _is_int(y) or y not in (0, 1):
                P.add(binary_path, no, f"{f['label']}: expected 0 or 1, got {y!r}")
                ok = False
            if not ok:
                continue
            if rid not in seen_list:
                P.lacks(
                    binary_path,
                    no,
                    f"{f['request_id']}: {rid!r} is not in {lists_path}",
                    lists_path,
                )
                continue
            if rid not in lists:
                continue
            lno, pub = lists[rid]
            if not 0 <= j < len(pub.candidates):
                P.add(
                    binary_path,
                    no,
                    f"{f['candidate_index']}: {j} is out of range for the "
                    f"{len(pub.candidates)} candidates of {lists_path}:{lno}",
                )
                continue
            if (rid, j) in seen_opt:
                P.add(
                    binary_path,
                    no,
                    f"{f['candidate_index']}: option {j} of {rid!r} repeats line {seen_opt[rid, j]}",
                )
                continue
            seen_opt[rid, j] = no
            if rid in labels:
                truth = int(j in labels[rid][2])
                if y != truth:
                    P.add(
                        binary_path,
                        no,
                        f"{f['label']}: {y} disagrees with the correct set of {rid!r} "
                        f"({labels_path}:{labels[rid][0]}), which gives {truth}",
                    )
                    continue
            binary.append(BinaryOutput(rid, j, float(q), y))

    if P:
        msgs = P.messages()
        shown = msgs[:MAX_PROBLEMS]
        if len(msgs) > MAX_PROBLEMS:
            shown.append(f"… and {len(msgs) - MAX_PROBLEMS} more")
        raise UserError(f"the score inputs have {len(msgs)} problem(s)", problems=shown)

    fit_pairs: list[tuple[EvaluatorRow, Prediction]] = []
    evaluate_pairs: list[tuple[EvaluatorRow, Prediction]] = []
    for rid, (_, pub) in lists.items():
        _, split, corr = labels[rid]
        _, refused, probs = preds[rid]
        row = EvaluatorRow(pub, frozenset(corr), split)
        pred = Prediction(rid, refused, None if refused else tuple(probs))
        (fit_pairs if split == cfg.fit_split else evaluate_pairs).append((row, pred))
    return ScoreInputs(fit_pairs, evaluate_pairs, binary)


def _shown_value(q) -> str:
    """A value in a message, cut to 30 characters (a 400-digit integer was shown whole)."""
    text = repr(q)
    return text if len(text) <= 30 else text[:30] + "…"
