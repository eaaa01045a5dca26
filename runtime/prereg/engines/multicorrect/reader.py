"""Strict streaming readers for the score command's JSONL inputs, straight into packed arrays.

Each line is one JSON object (UTF-8, no blank lines except a final newline).  Refused, each
reported as ``FILE:LINE: FIELD: rule``: invalid JSON, duplicate keys, NaN/Infinity literals,
numbers too large to be finite, missing or unknown fields, wrong types, candidate counts out of
bounds, duplicate request ids, a request id in both splits, request ids unknown to the lists
file or missing from the labels or predictions file, label indices out of range or repeated,
predictions not aligned with their list, probabilities not finite, outside [0, 1] or not
summing to 1 within the tolerance, binary outputs for unknown options or whose label disagrees
with the correct set.  All problems are collected and raised together as one UserError.

The files are streamed (:class:`prereg.jsonl.TypedLines`): a line is decoded into a typed
record at C speed when it provably breaks none of the strict JSON rules, and a record that
breaks a rule of this module's is read again by the strict per-line reader (:func:`_strict`),
so every message is that reader's. What is kept per list is its line, candidate count, split,
correct set and probabilities (no texts), and the score command receives :class:`Packed`
arrays per split, the binary outputs as two arrays, and each file's SHA-256 (hashed while
read).
"""

from __future__ import annotations

import gc
import json
import math
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig
from prereg.engines.multicorrect.records import probability_problems
from prereg.engines.multicorrect.scoring import Packed, packed_from
from prereg.errors import UserError
from prereg.records import StrictJSONError, loads_strict


class _LineError(ValueError):
    pass


def _loads(text: str) -> Any:
    try:
        return loads_strict(text)
    except StrictJSONError as e:
        raise _LineError(str(e)) from None
    except json.JSONDecodeError as e:
        raise _LineError(f"invalid JSON: {e.msg} at column {e.colno}") from None
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
    def __init__(self) -> None:
        self.items: list[tuple[int, int, int, str]] = []
        self.order: dict[str, int] = {}
        # files that could not be read or hold no record: nothing is "not in" them (their one
        # problem says it all, instead of one follow-on problem per line of the other files)
        self.unusable: set[str] = set()

    def add(self, path: str, line: int | None, msg: str) -> None:
        fi = self.order.setdefault(path, len(self.order))
        where = f"{path}:{line}" if line is not None else path
        self.items.append((fi, line or 0, len(self.items), f"{where}: {msg}"))

    def __bool__(self) -> bool:
        return bool(self.items)

    def messages(self) -> list[str]:
        return [m for *_, m in sorted(self.items)]


def _strict(path: str, problems: _Problems):
    """The strict reader of one line: the parsed JSON object, or None with the problem
    reported."""

    def read(no: int, raw: bytes) -> dict | None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(path, no, f"not valid UTF-8 (byte {e.start + 1})")
            return None
        if no == 1 and text.startswith("\ufeff"):
            problems.add(path, no, "starts with a byte order mark; write UTF-8 without one")
            return None
        if not text.strip():
            problems.add(path, no, "empty line; every line must hold one JSON object")
            return None
        try:
            obj = _loads(text)
        except _LineError as e:
            problems.add(path, no, str(e))
            return None
        if not isinstance(obj, dict):
            problems.add(path, no, f"expected a JSON object, got {type(obj).__name__}")
            return None
        return obj

    return read


def _struct(name: str, names: dict[str, str], types: dict[str, Any]) -> type:
    """A msgspec Struct of the fields ``types`` (by role) named in JSON as ``names`` says."""
    import msgspec

    return msgspec.defstruct(
        name,
        [(role, types[role]) for role in names],
        rename={role: names[role] for role in names},
        forbid_unknown_fields=True,
        gc=False,
    )


class _File:
    """One input file being read: its typed lines, and their problems reported on ``P``."""

    def __init__(
        self,
        path: str,
        names: dict[str, str],
        types: dict[str, Any],
        P: _Problems,
        lists_path: str | None = None,
    ):
        from prereg.jsonl import TypedLines

        self.path = path
        self.lists_path = lists_path
        self.names = names
        self.P = P
        self.struct = _struct("Record", names, types)
        self.lines = TypedLines(path, self.struct, _strict(path, P))
        self.read_ok = True

    def blocks(self):
        """The typed lines' blocks; a file that cannot be read or is empty is a problem."""
        try:
            yield from self.lines.blocks()
        except OSError as e:
            self.P.add(self.path, None, f"cannot read the file: {e.strerror or e}")
            self.P.unusable.add(self.path)
            self.read_ok = False
            return
        if self.lines.size == 0:
            self.P.add(self.path, None, "the file holds no records")
            self.P.unusable.add(self.path)

    def add(self, no: int, msg: str) -> None:
        self.P.add(self.path, no, msg)

    def not_in_lists(self, no: int, rid: str, field: str) -> None:
        """A record whose request id the lists lack (unless the lists are unusable)."""
        if self.lists_path not in self.P.unusable:
            self.add(no, f"{field}: {rid!r} is not in {self.lists_path}")

    def fields_ok(self, obj: dict, no: int) -> bool:
        names = self.names
        ok = True
        for name in names.values():
            if name not in obj:
                self.add(no, f"{name}: missing field")
                ok = False
        expected = set(names.values())
        for key in obj:
            if key not in expected:
                self.add(no, f"{key}: unknown field (expected {', '.join(names.values())})")
                ok = False
        return ok

    def request_id(self, obj: dict, no: int) -> str | None:
        name = self.names["request_id"]
        rid = obj[name]
        if not isinstance(rid, str) or not rid:
            self.add(no, f"{name}: expected a non-empty string, got {rid!r}")
            return None
        return rid

    @property
    def digest(self) -> dict[str, Any]:
        return {"sha256": self.lines.sha256, "bytes": self.lines.size}


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


@dataclass(frozen=True, eq=False)
class PackedInputs:
    """The score inputs, checked: the fit and evaluate splits packed (lists in the lists file's
    order), the binary outputs kept (``binary_q``, ``binary_y`` in file order, or None when
    none were given), and each file's ``{"sha256", "bytes"}`` by input name."""

    fit: Packed
    evaluate: Packed
    binary_q: np.ndarray | None
    binary_y: np.ndarray | None
    digests: dict[str, dict[str, Any]]


def _segments(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[k] … starts[k] + lengths[k] - 1`` for every k, back to back."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


class _Chunks:
    """A growing 1-d array kept as the chunks added (``size`` elements so far)."""

    def __init__(self, dtype) -> None:
        self.dtype = dtype
        self.parts: list[np.ndarray] = []
        self.size = 0

    def add(self, a: np.ndarray) -> None:
        self.parts.append(a)
        self.size += a.size

    def array(self) -> np.ndarray:
        if len(self.parts) != 1:
            self.parts = [np.concatenate(self.parts) if self.parts else np.zeros(0, self.dtype)]
        return self.parts[0]


class _State:
    """What is known per list row with a usable request id (index ``i`` in the lists file's
    order), filled while the files are read. ``m[i]`` is the candidate count, or -1 when the
    row had a problem (its id is known, its list is not scored)."""

    def __init__(self, lists_path: str) -> None:
        self.lists_path = lists_path
        self.index: dict[str, int] = {}
        self._line: list[int] = []
        self._m: list[int] = []

    def add_list(self, rid: str, no: int, m: int) -> None:
        self.index[rid] = len(self._m)
        self._line.append(no)
        self._m.append(m)

    def lists_read(self, splits: tuple[str, ...]) -> None:
        n = len(self._m)
        self.n = n
        self.line = np.array(self._line, dtype=np.int64)
        self.m = np.array(self._m, dtype=np.int64)
        self.split_code = {s: k for k, s in enumerate(splits)}
        self.splits = splits
        # labels: the line of the first row seen (0: none), its split (code, or -1 with the
        # value kept in odd_split), whether it was usable, its correct indices in corr_flat
        self.label_line = np.zeros(n, dtype=np.int64)
        self.label_code = np.full(n, -1, dtype=np.int8)
        self.odd_split: dict[int, Any] = {}
        self.label_ok = np.zeros(n, dtype=bool)
        self.corr_start = np.zeros(n, dtype=np.int64)
        self.corr_len = np.zeros(n, dtype=np.int64)
        self.corr_flat = _Chunks(np.int64)
        # predictions: the line seen, usable, refused, and the probabilities in prob_flat
        self.pred_line = np.zeros(n, dtype=np.int64)
        self.pred_ok = np.zeros(n, dtype=bool)
        self.pred_refused = np.zeros(n, dtype=bool)
        self.prob_start = np.zeros(n, dtype=np.int64)
        self.prob_flat = _Chunks(np.float64)
        # each scored list's options, numbered back to back (for checks over index pairs)
        self.opt_start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.m.clip(min=0), out=self.opt_start[1:])
        self.scratch = np.zeros(int(self.opt_start[-1]), dtype=np.int64)

    def split_of(self, i: int) -> Any:
        code = int(self.label_code[i])
        return self.splits[code] if code >= 0 else self.odd_split.get(i)

    def set_label(self, i: int, no: int, split: Any) -> None:
        self.label_line[i] = no
        code = self.split_code.get(split) if isinstance(split, str) else None
        if code is None:
            self.odd_split[i] = split
        else:
            self.label_code[i] = code


def read_packed_inputs(
    cfg: EngineConfig,
    lists_path: str,
    labels_path: str,
    predictions_path: str,
    binary_path: str | None,
) -> PackedInputs:
    """Read and cross-check the four inputs; raise one UserError listing every problem.

    The cyclic garbage collector is paused while reading: the records hold no cycles, and
    its passes over hundreds of thousands of fresh containers would otherwise cost about a
    third of the reading time.
    """
    if binary_path is not None and "binary" not in cfg.fields:
        raise UserError(
            f"{binary_path}: the spec declares no record contract with role 'binary', so this"
            " study reads no binary outputs"
        )
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _read(cfg, lists_path, labels_path, predictions_path, binary_path)
    finally:
        if was_enabled:
            gc.enable()


def _read(
    cfg: EngineConfig,
    lists_path: str,
    labels_path: str,
    predictions_path: str,
    binary_path: str | None,
) -> PackedInputs:
    P = _Problems()
    for p in (lists_path, labels_path, predictions_path, binary_path):
        if p is not None:
            P.order.setdefault(p, len(P.order))
    S = _State(lists_path)
    files = {"lists": _read_lists(cfg, lists_path, P, S)}
    S.lists_read(cfg.split_names)
    files["labels"] = _read_labels(cfg, labels_path, P, S)
    files["predictions"] = f_pred = _read_predictions(cfg, predictions_path, P, S)

    # the probabilities of every usable answer, checked together (in the file's order)
    answered = np.flatnonzero(S.pred_ok & ~S.pred_refused)
    order = answered[np.argsort(S.pred_line[answered], kind="stable")]
    m = S.m[order]
    flat = S.prob_flat.array()
    offsets = np.zeros(order.size + 1, dtype=np.int64)
    np.cumsum(m, out=offsets[1:])
    checked = flat[_segments(S.prob_start[order], m)]
    name = f_pred.names["probabilities"]
    for k, msg in probability_problems(checked, offsets, cfg.probability_sum_tolerance):
        i = int(order[k])
        f_pred.add(int(S.pred_line[i]), f"{name}: {msg}")
        S.pred_ok[i] = False

    # every list needs a label and a prediction
    scored = S.m >= 0
    rids = list(S.index)
    for i in np.flatnonzero(scored & ((S.label_line == 0) | (S.pred_line == 0))).tolist():
        if not S.label_line[i]:
            P.add(lists_path, int(S.line[i]), f"request {rids[i]!r}: no row in {labels_path}")
        if not S.pred_line[i]:
            P.add(lists_path, int(S.line[i]), f"request {rids[i]!r}: no row in {predictions_path}")

    binary_q = binary_y = None
    if binary_path is not None:
        files["binary_outputs"], binary_q, binary_y = _read_binary(
            cfg, binary_path, P, S, labels_path, rids
        )

    if P:
        msgs = P.messages()
        raise UserError(f"the score inputs have {len(msgs)} problem(s)", problems=msgs)

    corr_np = S.corr_flat.array()
    parts = {}
    for code, split in enumerate(cfg.split_names):
        rows = np.flatnonzero(scored & (S.label_code == code))
        refused = S.pred_refused[rows]
        ans = rows[~refused]
        lens = S.m[ans]
        offs = np.zeros(ans.size + 1, dtype=np.int64)
        np.cumsum(lens, out=offs[1:])
        probs = flat[_segments(S.prob_start[ans], lens)]
        g = S.corr_len[ans]
        pos = np.repeat(offs[:-1], g) + corr_np[_segments(S.corr_start[ans], g)]
        parts[split] = packed_from(
            split,
            [rids[i] for i in rows.tolist()],
            refused,
            S.corr_len[rows],
            probs,
            offs,
            g,
            pos,
        )
    return PackedInputs(
        fit=parts[cfg.fit_split],
        evaluate=parts[cfg.evaluate_split],
        binary_q=binary_q,
        binary_y=binary_y,
        digests={k: f.digest for k, f in files.items()},
    )


# -- lists ----------------------------------------------------------------------------------


def _read_lists(cfg: EngineConfig, path: str, P: _Problems, S: _State) -> _File:
    f = _File(path, dict(cfg.fields["lists"]), LIST_TYPES, P)
    cmin, cmax = cfg.candidates_min, cfg.candidates_max
    index = S.index
    for first, recs, typed in f.blocks():
        if typed:
            rids = [r.request_id for r in recs]
            ms = [len(r.candidates) for r in recs]
            base = len(S._m)
            if all(rids) and cmin <= min(ms) and max(ms) <= cmax:
                index.update(zip(rids, range(base, base + len(rids)), strict=True))
                if len(index) == base + len(rids):  # every id new, none twice
                    S._line.extend(range(first, first + len(rids)))
                    S._m.extend(ms)
                    continue
                # undo: the ids before the block are the first ``base`` keys, each numbered
                # by its place (an id of the block that was known kept its place)
                S.index = index = {rid: k for k, rid in zip(range(base), index, strict=False)}
        for no, rec in enumerate(recs, start=first):
            if type(rec) is f.struct:
                rid, m = rec.request_id, len(rec.candidates)
                if rid and cmin <= m <= cmax and rid not in index:
                    S.add_list(rid, no, m)
                    continue
                rec = f.lines.strict_at(no)
            if rec is not None:
                _list_row(f, cfg, S, no, rec)
    return f


def _list_row(f: _File, cfg: EngineConfig, S: _State, no: int, obj: dict) -> None:
    if not f.fields_ok(obj, no):
        return
    n = f.names
    rid = f.request_id(obj, no)
    q = obj[n["question"]]
    cands = obj[n["candidates"]]
    ok = rid is not None
    if not isinstance(q, str):
        f.add(no, f"{n['question']}: expected a string")
        ok = False
    if not isinstance(cands, list) or not _types_within(cands, _STR):
        f.add(no, f"{n['candidates']}: expected a list of strings")
        ok = False
    elif not cfg.candidates_min <= len(cands) <= cfg.candidates_max:
        f.add(
            no,
            f"{n['candidates']}: {len(cands)} candidates, outside "
            f"[{cfg.candidates_min}, {cfg.candidates_max}]",
        )
        ok = False
    if rid is not None and rid in S.index:
        f.add(no, f"{n['request_id']}: {rid!r} appears more than once")
        return
    if rid is not None:
        S.add_list(rid, no, len(cands) if ok else -1)


# -- labels ---------------------------------------------------------------------------------


def _int_array(values: list) -> np.ndarray | None:
    """``values`` as int64, or None when one does not fit."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return None


def _first_rows(seen: np.ndarray, ia: np.ndarray, lines: np.ndarray) -> bool:
    """Mark ``seen[ia] = lines`` when no list of ``ia`` was seen before and none repeats in
    ``ia`` (each index then keeps its own line); leave ``seen`` as it was otherwise."""
    if seen[ia].any():
        return False
    seen[ia] = lines
    if np.array_equal(seen[ia], lines):
        return True
    seen[ia] = 0
    return False


def _labels_block(S: _State, cfg: EngineConfig, first: int, recs: list) -> bool:
    """Take a block of typed label rows in one go when every row is a first, usable label of a
    scored list; False (nothing taken) otherwise."""
    idx = list(map(S.index.get, [r.request_id for r in recs]))
    codes = list(map(S.split_code.get, [r.split for r in recs]))
    if None in idx or None in codes:
        return False
    ia = np.array(idx, dtype=np.int64)
    m = S.m[ia]
    if (m < 0).any():
        return False
    corrs = [r.correct for r in recs]
    lens = np.fromiter(map(len, corrs), dtype=np.int64, count=len(corrs))
    try:
        fa = np.fromiter(chain.from_iterable(corrs), dtype=np.int64, count=int(lens.sum()))
    except OverflowError:
        return False
    seg = np.repeat(np.arange(ia.size, dtype=np.int64), lens)
    if fa.size:
        if (fa < 0).any() or (fa >= m[seg]).any():
            return False
        pos = S.opt_start[ia[seg]] + fa  # distinct per (list, index) pair
        scratch = S.scratch
        scratch[pos] = np.arange(pos.size, dtype=np.int64)
        if not np.array_equal(scratch[pos], np.arange(pos.size, dtype=np.int64)):
            return False  # an index listed twice
    if not _first_rows(S.label_line, ia, np.arange(first, first + ia.size, dtype=np.int64)):
        return False
    S.label_code[ia] = codes
    S.label_ok[ia] = True
    starts = np.zeros(ia.size, dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    S.corr_start[ia] = S.corr_flat.size + starts
    S.corr_len[ia] = lens
    S.corr_flat.add(fa)
    return True


def _read_labels(cfg: EngineConfig, path: str, P: _Problems, S: _State) -> _File:
    f = _File(path, dict(cfg.fields["labels"]), LABEL_TYPES, P, S.lists_path)
    seen_elsewhere: dict[str, tuple[int, Any]] = {}  # rows whose id is not in the lists file
    for first, recs, typed in f.blocks():
        if typed and _labels_block(S, cfg, first, recs):
            continue
        for no, rec in enumerate(recs, start=first):
            if type(rec) is f.struct:
                rec = f.lines.strict_at(no)
            if rec is not None:
                _label_row(f, cfg, S, no, rec, seen_elsewhere)
    return f


def _label_row(f: _File, cfg: EngineConfig, S: _State, no: int, obj: dict, seen_elsewhere) -> None:
    if not f.fields_ok(obj, no):
        return
    n = f.names
    rid = f.request_id(obj, no)
    split = obj[n["split"]]
    corr = obj[n["correct"]]
    ok = rid is not None
    if split not in cfg.split_names:
        f.add(
            no,
            f"{n['split']}: {split!r} is not a split (expected "
            f"{' or '.join(repr(s) for s in cfg.split_names)})",
        )
        ok = False
    if not isinstance(corr, list) or not _types_within(corr, _INT):
        f.add(no, f"{n['correct']}: expected a list of integer indices")
        ok = False
    elif len(set(corr)) != len(corr):
        f.add(no, f"{n['correct']}: an index is listed twice")
        ok = False
    if rid is None:
        return
    i = S.index.get(rid)
    if i is not None and S.label_line[i]:
        first, first_split = int(S.label_line[i]), S.split_of(i)
    else:
        first, first_split = seen_elsewhere.get(rid, (0, None))
    if first:
        if split in cfg.split_names and first_split in cfg.split_names and first_split != split:
            f.add(
                no,
                f"{n['request_id']}: {rid!r} is in split {split!r} here and in split "
                f"{first_split!r} at line {first}; the splits must not overlap",
            )
        else:
            f.add(no, f"{n['request_id']}: {rid!r} repeats line {first}")
        return
    if i is None:
        seen_elsewhere[rid] = (no, split)
        f.not_in_lists(no, rid, n["request_id"])
        return
    S.set_label(i, no, split)
    m = int(S.m[i])
    if m < 0:
        return
    if ok:
        bad = [j for j in corr if not 0 <= j < m]
        if bad:
            f.add(
                no,
                f"{n['correct']}: index {bad[0]} is out of range for {m} candidates "
                f"({f.lists_path}:{int(S.line[i])})",
            )
            ok = False
    if ok:
        S.label_ok[i] = True
        S.corr_start[i] = S.corr_flat.size
        S.corr_len[i] = len(corr)
        S.corr_flat.add(np.array(corr, dtype=np.int64))


# -- predictions ----------------------------------------------------------------------------


def _predictions_block(S: _State, first: int, recs: list) -> bool:
    """Take a block of typed predictions in one go when each is the first, usable prediction
    of a scored list; False (nothing taken) otherwise."""
    idx = list(map(S.index.get, [r.request_id for r in recs]))
    if None in idx:
        return False
    ia = np.array(idx, dtype=np.int64)
    probs = [r.probabilities for r in recs]
    refused = np.fromiter((r.refused for r in recs), dtype=bool, count=len(recs))
    lens = np.fromiter((-1 if p is None else len(p) for p in probs), np.int64, len(probs))
    m = S.m[ia]
    if (m < 0).any() or not np.array_equal(lens, np.where(refused, -1, m)):
        return False
    if not _first_rows(S.pred_line, ia, np.arange(first, first + ia.size, dtype=np.int64)):
        return False
    S.pred_ok[ia] = True
    S.pred_refused[ia] = refused
    ans = ~refused
    starts = np.zeros(ia.size, dtype=np.int64)
    np.cumsum(np.where(ans, lens, 0)[:-1], out=starts[1:])
    S.prob_start[ia[ans]] = S.prob_flat.size + starts[ans]
    total = int(lens[ans].sum())
    S.prob_flat.add(np.fromiter(chain.from_iterable(filter(None, probs)), np.float64, total))
    return True


def _read_predictions(cfg: EngineConfig, path: str, P: _Problems, S: _State) -> _File:
    f = _File(path, dict(cfg.fields["predictions"]), PREDICTION_TYPES, P, S.lists_path)
    seen_elsewhere: dict[str, int] = {}
    for first, recs, typed in f.blocks():
        if typed and _predictions_block(S, first, recs):
            continue
        for no, rec in enumerate(recs, start=first):
            if type(rec) is f.struct:
                rec = f.lines.strict_at(no)
            if rec is not None:
                _prediction_row(f, S, no, rec, seen_elsewhere)
    return f


def _prediction_row(f: _File, S: _State, no: int, obj: dict, seen_elsewhere) -> None:
    if not f.fields_ok(obj, no):
        return
    n = f.names
    rid = f.request_id(obj, no)
    refused = obj[n["refused"]]
    probs = obj[n["probabilities"]]
    ok = rid is not None
    if not isinstance(refused, bool):
        f.add(no, f"{n['refused']}: expected true or false")
        ok = False
    elif refused and probs is not None:
        f.add(no, f"{n['probabilities']}: a refusal must have null here")
        ok = False
    elif not refused:
        if not isinstance(probs, list) or not _types_within(probs, _NUM):
            f.add(no, f"{n['probabilities']}: expected a list of numbers")
            ok = False
    if rid is None:
        return
    i = S.index.get(rid)
    first = int(S.pred_line[i]) if i is not None else seen_elsewhere.get(rid, 0)
    if first:
        f.add(no, f"{n['request_id']}: {rid!r} repeats line {first}")
        return
    if i is None:
        seen_elsewhere[rid] = no
        f.not_in_lists(no, rid, n["request_id"])
        return
    S.pred_line[i] = no
    m = int(S.m[i])
    if m < 0:
        return
    if ok and not refused and len(probs) != m:
        f.add(
            no,
            f"{n['probabilities']}: {len(probs)} probabilities, not aligned with the "
            f"{m} candidates of {f.lists_path}:{int(S.line[i])}",
        )
        ok = False
    if ok:
        S.pred_ok[i] = True
        S.pred_refused[i] = refused
        if not refused:
            S.prob_start[i] = S.prob_flat.size
            S.prob_flat.add(np.array(_floats(probs), dtype=np.float64))


# -- binary outputs -------------------------------------------------------------------------


def _binary_block(S: _State, recs: list) -> tuple | None:
    """(list index, option, q, y) arrays of a block of typed binary outputs when every one
    names an option of a scored list with a probability in [0, 1] and a 0/1 label."""
    idx = list(map(S.index.get, [r.request_id for r in recs]))
    if None in idx:
        return None
    ia = np.array(idx, dtype=np.int64)
    ja = _int_array([r.candidate_index for r in recs])
    ya = _int_array([r.label for r in recs])
    if ja is None or ya is None:
        return None
    qa = np.array([r.probability for r in recs], dtype=np.float64)
    m = S.m[ia]
    if not ((ja >= 0) & (ja < m) & (qa >= 0.0) & (qa <= 1.0) & ((ya == 0) | (ya == 1))).all():
        return None
    return ia, ja, qa, ya


def _read_binary(cfg: EngineConfig, path: str, P: _Problems, S: _State, labels_path, rids):
    """The binary outputs: (file, q, y) with q and y in file order. Repeated options and
    labels that disagree with the correct set are found after reading, over arrays."""
    f = _File(path, dict(cfg.fields["binary"]), BINARY_TYPES, P, S.lists_path)
    chunks: list[tuple[np.ndarray, ...]] = []
    for first, recs, typed in f.blocks():
        got = _binary_block(S, recs) if typed else None
        if got is not None:
            chunks.append((*got, np.arange(first, first + len(recs), dtype=np.int64)))
            continue
        kept: list[tuple[int, int, float, int, int]] = []
        for no, rec in enumerate(recs, start=first):
            if type(rec) is f.struct:
                i = S.index.get(rec.request_id)
                j, q, y = rec.candidate_index, rec.probability, rec.label
                m = -1 if i is None else int(S.m[i])
                if 0 <= j < m and 0.0 <= q <= 1.0 and (y == 0 or y == 1):
                    kept.append((i, j, q, y, no))
                    continue
                rec = f.lines.strict_at(no)
            if rec is not None:
                row = _binary_row(f, S, no, rec)
                if row is not None:
                    kept.append((*row, no))
        cols = list(zip(*kept, strict=True)) if kept else [[], [], [], [], []]
        chunks.append(
            tuple(
                np.array(c, dtype=t)
                for c, t in zip(
                    cols, (np.int64, np.int64, np.float64, np.int64, np.int64), strict=True
                )
            )
        )
    row_a, opt_a, q_a, y_a, line_a = (
        np.concatenate([c[k] for c in chunks]) if chunks else np.zeros(0, dtype=t)
        for k, t in enumerate((np.int64, np.int64, np.float64, np.int64, np.int64))
    )
    n = f.names
    keep = np.ones(row_a.size, dtype=bool)
    # a repeated (list, option) pair: every occurrence after the first, in file order
    key = row_a * (cfg.candidates_max + 1) + opt_a
    order = np.argsort(key, kind="stable")
    ks = key[order]
    repeat = np.zeros(ks.size, dtype=bool)
    repeat[1:] = ks[1:] == ks[:-1]
    if repeat.any():
        starts = np.where(~repeat, np.arange(ks.size), 0)
        first_at = order[np.maximum.accumulate(starts)]
        for k in np.flatnonzero(repeat).tolist():
            at = int(order[k])
            keep[at] = False
            f.add(
                int(line_a[at]),
                f"{n['candidate_index']}: option {int(opt_a[at])} of {rids[int(row_a[at])]!r}"
                f" repeats line {int(line_a[first_at[k]])}",
            )
    # the label of an option of a labelled list must be the correct set's
    if row_a.size and S.label_ok.any():
        start = S.opt_start
        lab = np.flatnonzero(S.label_ok)
        corr_np = S.corr_flat.array()
        g = S.corr_len[lab]
        is_correct = np.zeros(int(start[-1]), dtype=bool)
        is_correct[np.repeat(start[lab], g) + corr_np[_segments(S.corr_start[lab], g)]] = True
        truth = is_correct[start[row_a] + opt_a].astype(np.int64)
        wrong = keep & S.label_ok[row_a] & (truth != y_a)
        for at in np.flatnonzero(wrong).tolist():
            i = int(row_a[at])
            f.add(
                int(line_a[at]),
                f"{n['label']}: {int(y_a[at])} disagrees with the correct set of "
                f"{rids[i]!r} ({labels_path}:{int(S.label_line[i])}), which gives {int(truth[at])}",
            )
        keep &= ~wrong
    return f, q_a[keep], y_a[keep]


def _binary_row(f: _File, S: _State, no: int, obj: dict) -> tuple[int, int, float, int] | None:
    if not f.fields_ok(obj, no):
        return None
    n = f.names
    rid = f.request_id(obj, no)
    j = obj[n["candidate_index"]]
    q = obj[n["probability"]]
    y = obj[n["label"]]
    ok = rid is not None
    if not _is_int(j):
        f.add(no, f"{n['candidate_index']}: expected an integer")
        ok = False
    if not _is_num(q) or not math.isfinite(_as_float(q)) or not 0.0 <= q <= 1.0:
        f.add(no, f"{n['probability']}: {q!r} is not a finite number in [0, 1]")
        ok = False
    if not _is_int(y) or y not in (0, 1):
        f.add(no, f"{n['label']}: expected 0 or 1, got {y!r}")
        ok = False
    if not ok:
        return None
    i = S.index.get(rid)
    if i is None:
        f.not_in_lists(no, rid, n["request_id"])
        return None
    m = int(S.m[i])
    if m < 0:
        return None
    if not 0 <= j < m:
        f.add(
            no,
            f"{n['candidate_index']}: {j} is out of range for the "
            f"{m} candidates of {f.lists_path}:{int(S.line[i])}",
        )
        return None
    return i, j, float(q), y


LIST_TYPES = {"request_id": str, "question": str, "candidates": list[str]}
LABEL_TYPES = {"request_id": str, "split": str, "correct": list[int]}
PREDICTION_TYPES = {"request_id": str, "refused": bool, "probabilities": list[float] | None}
BINARY_TYPES = {"request_id": str, "candidate_index": int, "probability": float, "label": int}
