"""Strict streaming readers for the score command's JSONL inputs, straight into packed arrays.

Each line is one JSON object (UTF-8, LF line endings, no blank lines except a final newline).  Refused, each
reported as ``FILE:LINE: FIELD: rule``: a CRLF line ending, invalid JSON, duplicate keys, NaN/Infinity literals,
numbers too large to be finite, missing or unknown fields, wrong types, candidate counts out of
bounds, duplicate request ids, a request id in both splits, request ids unknown to the lists
file or missing from the labels or predictions file, label indices out of range or repeated,
predictions not aligned with their list, probabilities not finite, outside [0, 1] or not
summing to 1 within the tolerance, binary outputs for unknown options or whose label disagrees
with the correct set.  All problems are collected and raised together as one UserError
(the first 50 listed, then how many more).

The files are streamed (:class:`prereg.jsonl.TypedLines`): a line is decoded into a typed
record at C speed when it provably breaks none of the strict JSON rules, and a record that
breaks a rule of this module's is read again by the strict per-line reader (:func:`_strict`),
so every message is that reader's. What is kept per list is its line, candidate count, split,
correct set and probabilities (no texts), and the score command receives :class:`Packed`
arrays per split, the binary outputs as two arrays, and each file's SHA-256 (hashed while
read).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, compress
from operator import not_
from typing import Annotated, Any, Literal, NamedTuple

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig
from prereg.engines.multicorrect.records import probability_problems
from prereg.engines.multicorrect.scoring import Packed, packed_from
from prereg.errors import UserError
from prereg.gcpause import paused
from prereg.records import (
    BOM_WORDS,
    StrictJSONError,
    cr_problem,
    json_syntax_words,
    loads_strict,
    text_head_problem,
)

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
    def __init__(self) -> None:
        self.items: list[tuple[bool, int, int, int, str]] = []
        self.order: dict[str, int] = {}
        # files that could not be read or hold no record: nothing is "not in" them (their one
        # problem says it all, instead of one follow-on problem per line of the other files)
        self.unusable: set[str] = set()

    def add(self, path: str, line: int | None, msg: str, follow: bool = False) -> None:
        """A problem at ``path:line``; ``follow``: it follows from a problem of another file
        (a request id missing from one), so it is listed after every problem of the files'
        own lines, which say what to mend (and are within the first listed)."""
        fi = self.order.setdefault(path, len(self.order))
        where = f"{path}:{line}" if line is not None else path
        self.items.append((follow, fi, line or 0, len(self.items), f"{where}: {msg}"))

    def __bool__(self) -> bool:
        return bool(self.items)

    def messages(self) -> list[str]:
        return [m for *_, m in sorted(self.items)]


def _strict(path: str, problems: _Problems):
    """The strict reader of one line: the parsed JSON object, or None with the problem
    reported."""

    def read(no: int, raw: bytes, terminated: bool = True) -> dict | None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.add(path, no, f"not valid UTF-8 (byte {e.start + 1})")
            return None
        if no == 1 and text.startswith("\ufeff"):
            problems.add(path, no, BOM_WORDS)
            return None
        if not text.strip():
            problems.add(path, no, "empty line; every line must hold one JSON object")
            return None
        cr = cr_problem(text, terminated)  # reported as every reader of the project reports it
        if cr is not None:
            problems.add(path, no, cr)
            if not cr.startswith("CRLF"):
                return None
            text = text[:-1]
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
    """A msgspec Struct of the fields ``types`` (by role) named in JSON as ``names`` says;
    one class per name, field names and types (:func:`_made_struct`)."""
    fields = tuple((role, names[role], repr(types[role])) for role in names)
    return _made_struct(name, fields, tuple(types[role] for role in names))


@lru_cache(maxsize=64)
def _made_struct(name: str, fields: tuple[tuple[str, str, str], ...], types: tuple) -> type:
    # Keyed by each type's repr too: msgspec.Meta(lt=5) and Meta(lt=5.0) are equal keys.
    # Made once: building a struct and its decoders cost a few milliseconds a file read.
    import msgspec

    return msgspec.defstruct(
        name,
        [(role, t) for (role, _, _), t in zip(fields, types, strict=True)],
        rename={role: json_name for role, json_name, _ in fields},
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
        lines=None,
    ):
        from prereg.jsonl import TypedLines

        self.path = path
        self.lists_path = lists_path
        self.names = names
        self.P = P
        self.struct = _struct("Record", names, types)
        self.lines = (lines or TypedLines)(path, self.struct, _strict(path, P))
        self.read_ok = True

    def blocks(self):
        """The typed lines' blocks; a file that cannot be read or is empty is a problem, and
        so is one that is no UTF-8 text (UTF-16, compressed), once, not at each line."""
        why = text_head_problem(self.path)
        if why is not None:
            self.P.add(self.path, None, why)
            self.P.unusable.add(self.path)
            return
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
            self.P.add(self.path, no, f"{field}: {rid!r} is not in {self.lists_path}", True)

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
    row had a problem (its id is known, its list is not scored).

    While the lists are read the ids are kept in order (``rids``) and in a set (``ids``, for
    repeats); the dictionary from id to row (``index``) is built only when a file's block is
    not in the lists file's order (see :class:`_Rows`)."""

    def __init__(self, lists_path: str) -> None:
        self.lists_path = lists_path
        self.rids: list[str] = []
        self.ids: set[str] = set()
        self._index: dict[str, int] | None = None
        self._line: list[int] = []
        self._m: list[int] = []

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = dict(zip(self.rids, range(len(self.rids)), strict=True))
        return self._index

    def known(self, rid: str) -> bool:
        return rid in self.ids

    def add_list(self, rid: str, no: int, m: int) -> None:
        if self._index is not None:
            self._index[rid] = len(self.rids)
        self.ids.add(rid)
        self.rids.append(rid)
        self._line.append(no)
        self._m.append(m)

    def add_lists(self, first: int, rids: list[str], ms: list[int]) -> bool:
        """Add a block of usable rows (lines ``first`` on) when none of its ids is known or
        repeats; False, and nothing added, otherwise."""
        ids = self.ids
        base = len(self.rids)
        ids.update(rids)
        if len(ids) != base + len(rids):
            self.ids = set(self.rids)  # undo
            return False
        if self._index is not None:
            self._index.update(zip(rids, range(base, base + len(rids)), strict=True))
        self.rids.extend(rids)
        self._line.extend(range(first, first + len(rids)))
        self._m.extend(ms)
        return True

    def lists_read(self, splits: tuple[str, ...]) -> None:
        n = len(self._m)
        self.n = n
        self.line = np.array(self._line, dtype=np.int64)
        self.m = np.array(self._m, dtype=np.int64)
        self._line = self._m = []
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


class _Rows:
    """The list rows of the request ids of one file's blocks, in order: the rows after the
    previous block's in the expected order are tried first (one comparison of the block's ids
    with theirs, in C), and the dictionary ``S.index`` only for a block that is not in that
    order. The expected order is the lists file's, or the rows ``rows`` in their order (the
    binary outputs: the answered lists)."""

    def __init__(self, S: _State, rows: np.ndarray | None = None) -> None:
        self.S = S
        self.next = 0
        self.rows = rows
        if rows is None:
            self.ids = S.rids
        else:
            self.ids = list(map(S.rids.__getitem__, rows.tolist()))
            self.place = np.full(len(S.rids), -1, dtype=np.int64)  # each row's place in rows
            self.place[rows] = np.arange(rows.size, dtype=np.int64)

    def of(self, rids: list[str]) -> np.ndarray | None:
        """The rows of ``rids`` (int64), or None when one is not in the lists file."""
        c, n = self.next, len(rids)
        if self.ids[c : c + n] == rids:
            self.next = c + n
            if self.rows is None:
                return np.arange(c, c + n, dtype=np.int64)
            return self.rows[c : c + n]
        idx = list(map(self.S.index.get, rids))
        if None in idx:
            return None
        if idx:
            self.next = idx[-1] + 1 if self.rows is None else int(self.place[idx[-1]]) + 1
        return np.array(idx, dtype=np.int64)

    def of_runs(self, rids: list[str]) -> np.ndarray | None:
        """:meth:`of` for ids that come in runs (a list's binary outputs one after another):
        each distinct id is looked up once."""
        u = dict.fromkeys(rids)
        keys = list(u)
        if keys and self.next and self.ids[self.next - 1] == keys[0]:
            self.next -= 1  # the previous block's last list goes on
        rows = self.of(keys)
        if rows is None:
            return None
        u.update(zip(keys, rows.tolist(), strict=True))
        return np.fromiter(map(u.__getitem__, rids), dtype=np.int64, count=len(rids))


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
    with paused():
        return _read(cfg, lists_path, labels_path, predictions_path, binary_path)


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
    lines = S.pred_line[answered]
    if lines.size > 1 and not (lines[1:] > lines[:-1]).all():
        answered = answered[np.argsort(lines, kind="stable")]
    m = S.m[answered]
    flat = S.prob_flat.array()
    offsets = np.zeros(answered.size + 1, dtype=np.int64)
    np.cumsum(m, out=offsets[1:])
    checked = _gather(flat, S.prob_start[answered], m, offsets)
    name = f_pred.names["probabilities"]
    for k, msg in probability_problems(checked, offsets, cfg.probability_sum_tolerance):
        i = int(answered[k])
        f_pred.add(int(S.pred_line[i]), f"{name}: {msg}")
        S.pred_ok[i] = False
    del checked

    # every list needs a label and a prediction
    scored = S.m >= 0
    rids = S.rids
    # (not when that file could not be read or is empty: its one problem says it all)
    lacking = np.zeros(S.n, dtype=bool)
    if labels_path not in P.unusable:
        lacking |= S.label_line == 0
    if predictions_path not in P.unusable:
        lacking |= S.pred_line == 0
    for i in np.flatnonzero(scored & lacking).tolist():
        for path, seen in ((labels_path, S.label_line), (predictions_path, S.pred_line)):
            if not seen[i] and path not in P.unusable:
                P.add(lists_path, int(S.line[i]), f"request {rids[i]!r}: no row in {path}", True)

    binary_q = binary_y = None
    if binary_path is not None:
        files["binary_outputs"], binary_q, binary_y = _read_binary(
            cfg, binary_path, P, S, labels_path, rids
        )

    if P:
        msgs = P.messages()
        shown = msgs[:MAX_PROBLEMS]
        if len(msgs) > MAX_PROBLEMS:
            shown.append(f"… and {len(msgs) - MAX_PROBLEMS} more")
        raise UserError(f"the score inputs have {len(msgs)} problem(s)", problems=shown)

    corr_np = S.corr_flat.array()
    parts = {}
    for code, split in enumerate(cfg.split_names):
        rows = np.flatnonzero(scored & (S.label_code == code))
        refused = S.pred_refused[rows]
        ans = rows[~refused]
        lens = S.m[ans]
        offs = np.zeros(ans.size + 1, dtype=np.int64)
        np.cumsum(lens, out=offs[1:])
        probs = _gather(flat, S.prob_start[ans], lens, offs)
        g = S.corr_len[ans]
        pos = np.repeat(offs[:-1], g) + corr_np[_segments(S.corr_start[ans], g)]
        if rows.size and int(rows[-1]) - int(rows[0]) == rows.size - 1:
            ids = rids[int(rows[0]) : int(rows[-1]) + 1]
        else:
            ids = list(map(rids.__getitem__, rows.tolist()))
        parts[split] = packed_from(split, ids, refused, S.corr_len[rows], probs, offs, g, pos)
    return PackedInputs(
        fit=parts[cfg.fit_split],
        evaluate=parts[cfg.evaluate_split],
        binary_q=binary_q,
        binary_y=binary_y,
        digests={k: f.digest for k, f in files.items()},
    )


def _gather(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, offsets: np.ndarray):
    """``flat``'s segments ``starts[k]`` … of ``lengths[k]`` elements, back to back (their
    places given by ``offsets``, the cumulative lengths): a copy, or a slice of ``flat`` when
    they already lie there back to back."""
    if not starts.size:
        return flat[:0].copy()
    s0 = int(starts[0])
    if np.array_equal(starts, offsets[:-1] + s0):
        return flat[s0 : s0 + int(offsets[-1])]
    return flat[_segments(starts, lengths)]


# -- lists ----------------------------------------------------------------------------------


def _read_lists(cfg: EngineConfig, path: str, P: _Problems, S: _State) -> _File:
    names = dict(cfg.fields["lists"])
    f = _File(path, names, _list_types(cfg), P, lines=_list_lines(cfg, names))
    cmin, cmax = cfg.candidates_min, cfg.candidates_max
    for first, recs, typed in f.blocks():
        # typed: every id non-empty and every candidate count in bounds (the struct's rules,
        # or the counts of _ListLines, which has checked them)
        counts = f.lines.counts
        if counts is None and typed:
            counts = [len(r.candidates) for r in recs]
        if typed and S.add_lists(first, [r.request_id for r in recs], counts):
            continue
        for k, (no, rec) in enumerate(enumerate(recs, start=first)):
            if typed:
                rid, m = rec.request_id, counts[k]
                if rid and cmin <= m <= cmax and not S.known(rid):
                    S.add_list(rid, no, m)
                    continue
                rec = f.lines.strict_at(no)
            elif type(rec) is f.struct:
                rid, m = rec.request_id, len(rec.candidates)
                if rid and cmin <= m <= cmax and not S.known(rid):
                    S.add_list(rid, no, m)
                    continue
                rec = f.lines.strict_at(no)
            if rec is not None:
                _list_row(f, cfg, S, no, rec)
    return f


class _Bounds(NamedTuple):
    """What :func:`_light_lists` reads of the configuration."""

    candidates_min: int
    candidates_max: int


def _list_lines(cfg: EngineConfig, names: dict[str, str]):
    """A :class:`prereg.jsonl.TypedLines` for the lists file that takes a block without
    making a Python string of any candidate (:class:`_ListLines`), the typed struct's decode
    kept for every block it cannot vouch for; one class per field names and bounds."""
    bounds = _Bounds(cfg.candidates_min, cfg.candidates_max)
    return _list_lines_of(tuple(names.items()), bounds, repr(bounds))


@lru_cache(maxsize=16)
def _list_lines_of(named: tuple[tuple[str, str], ...], cfg: _Bounds, _shown: str):
    import msgspec

    from prereg.jsonl import TypedLines

    names = dict(named)
    light = _struct(
        "ListHead",
        names,
        {"request_id": _id(), "question": str, "candidates": msgspec.Raw},
    )
    light_decoder = msgspec.json.Decoder(light)
    key = json.dumps(names["candidates"]).encode("utf-8") + b":"
    fields = len(names)

    class _ListLines(TypedLines):
        """The lists' typed lines; ``counts`` is the candidate count of each record of the
        block just yielded when it was taken by the light decode (None otherwise).

        The light decode (:func:`_light_lists`) keeps each record's candidates as the raw
        JSON text and proves from the block's bytes that every one of them is an array of
        strings of a count within the bounds; a block it cannot vouch for is taken by the
        typed decode or line by line, as before."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self._light = light_decoder
            self.counts: list[int] | None = None

        def _whole_block(self, first: int, block: bytes):
            self.counts = None
            got = _light_lists(self._light, key, fields, cfg, first, block, self._errors)
            if got is not None:
                records, self.counts = got
                return records, len(records)
            return super()._whole_block(first, block)

    return _ListLines


def _light_lists(decoder, key: bytes, fields: int, cfg: EngineConfig, first: int, block, errors):
    """``(records, candidate counts)`` of a block of list lines decoded by ``decoder`` (request
    id and question typed, the candidates raw JSON), or None when the block's bytes do not
    prove each line to be one record whose candidates are an array of strings, as many as the
    bounds allow.

    Proof, for a block of n LF-terminated lines without a backslash (so every ``"`` opens or
    closes a string, and no string holds one) and without a byte-order mark, which
    ``decode_lines`` reads as n records with only whitespace around them:

    - keys: the typed decode proves the 3 fields present and no other; 3n colons in all leave
      each record exactly its 3 key colons (no key twice, no colon in a string or a value);
    - candidates an array: each of the block's n ``[`` is preceded by the candidates key and
      ``:`` (one space allowed), a key there (its first ``"`` cannot close a string: the
      name would then stand bare, which the decode refuses); a record holds that key once, so
      each record holds one of the n ``[``, which starts its candidates: an array, holding no
      array (no other ``[`` in the record), so e elements, none an array;
    - strings only: a record holds Q quotes, so Q/2 strings: 3 keys, the request id and the
      question (strings, by type) and the k strings among its candidates; and C commas: the 2
      between the members, e - 1 between the candidates (e >= 1) and any inside strings or
      inner objects. So C - Q/2 + 4 = (e - k) + (the other commas) >= 0 for e >= 1, and >= 1
      for e = 0 (then k = 0); the block's sum of these is 0 exactly when every record has
      e = k >= 1 and no other comma: every candidate a string, C - 1 of them;
    - lines: no record then holds an object below its top, so every ``{`` outside a string
      starts a record; every line starts with ``{`` (outside a string: it follows an LF,
      which no JSON string holds), so the n lines start n records, and record k lies within
      line k (as in :meth:`prereg.jsonl.TypedLines._flat_block`).
    """
    import numpy as np

    from prereg.jsonl import BOM, _utf8

    if not block.endswith(b"\n") or b"\\" in block or (first == 1 and block.startswith(BOM)):
        return None
    a = np.frombuffer(block, dtype=np.uint8)
    # the places of every LF, "[" and "," in one pass
    mask = a == 10
    mask |= a == 91
    mask |= a == 44
    at = np.flatnonzero(mask)
    what = a[at]
    is_end = what == 10
    ends = at[is_end]
    opens = at[what == 91]
    n = int(ends.size)
    if a[0] != 123 or not (a[ends[:-1] + 1] == 123).all() or opens.size != n:
        return None
    if int(np.count_nonzero(a == 58)) != fields * n:
        return None
    start = opens - (a[opens - 1] == 32) - len(key)  # where the key's first quote must be
    if n and int(start[0]) < 0:
        return None
    if not (a[start[:, None] + np.arange(len(key))] == np.frombuffer(key, dtype=np.uint8)).all():
        return None
    quotes = int(np.count_nonzero(a == 34))
    commas = at.size - 2 * n
    if quotes % 2 or commas - quotes // 2 + 4 * n != 0:
        return None
    # the commas before line k's LF: its place among the places less the k earlier LFs and
    # the k + 1 "[" of lines 0 … k (one a line, once the counts below hold)
    before = np.flatnonzero(is_end) - 2 * np.arange(n) - 1
    counts = np.diff(before, prepend=0) - 1
    if n and (int(counts.min()) < cfg.candidates_min or int(counts.max()) > cfg.candidates_max):
        return None
    if not _utf8(block):
        return None
    try:
        records = decoder.decode_lines(block)
    except errors:
        return None
    if len(records) != n:
        return None
    return records, counts.tolist()


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
    if rid is not None and S.known(rid):
        f.add(no, f"{n['request_id']}: {rid!r} appears more than once")
        return
    if rid is not None:
        S.add_list(rid, no, len(cands) if ok else -1)


# -- labels ---------------------------------------------------------------------------------


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


def _labels_block(S: _State, rows: _Rows, first: int, recs: list) -> bool:
    """Take a block of typed label rows in one go when every row is a first, usable label of a
    scored list; False (nothing taken) otherwise. The struct has checked each split to be a
    split name and each index to lie in [0, candidates max)."""
    ia = rows.of([r.request_id for r in recs])
    if ia is None:
        return False
    m = S.m[ia]
    if (m < 0).any():
        return False
    corrs = [r.correct for r in recs]
    lens = np.fromiter(map(len, corrs), dtype=np.int64, count=len(corrs))
    fa = np.fromiter(chain.from_iterable(corrs), dtype=np.int64, count=int(lens.sum()))
    if fa.size:
        seg = np.repeat(np.arange(ia.size, dtype=np.int64), lens)
        if (fa >= m[seg]).any():
            return False
        pos = S.opt_start[ia[seg]] + fa  # distinct per (list, index) pair
        scratch = S.scratch
        order = np.arange(pos.size, dtype=np.int64)
        scratch[pos] = order
        if not np.array_equal(scratch[pos], order):
            return False  # an index listed twice
    if not _first_rows(S.label_line, ia, np.arange(first, first + ia.size, dtype=np.int64)):
        return False
    S.label_code[ia] = list(map(S.split_code.__getitem__, [r.split for r in recs]))
    S.label_ok[ia] = True
    starts = np.zeros(ia.size, dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    S.corr_start[ia] = S.corr_flat.size + starts
    S.corr_len[ia] = lens
    S.corr_flat.add(fa)
    return True


def _read_labels(cfg: EngineConfig, path: str, P: _Problems, S: _State) -> _File:
    f = _File(path, dict(cfg.fields["labels"]), _label_types(cfg), P, S.lists_path)
    rows = _Rows(S)
    seen_elsewhere: dict[str, tuple[int, Any]] = {}  # rows whose id is not in the lists file
    for first, recs, typed in f.blocks():
        if typed and _labels_block(S, rows, first, recs):
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


def _predictions_block(S: _State, rows: _Rows, first: int, recs: list) -> bool:
    """Take a block of typed predictions in one go when each is the first, usable prediction
    of a scored list; False (nothing taken) otherwise."""
    ia = rows.of([r.request_id for r in recs])
    if ia is None:
        return False
    flags = [r.refused for r in recs]
    probs = [r.probabilities for r in recs]
    answers = list(compress(probs, map(not_, flags)))  # each must be a list, each refusal None
    refused = np.array(flags, dtype=bool)
    if None in answers or probs.count(None) != ia.size - len(answers):
        return False
    m = S.m[ia]
    lens = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
    if (m < 0).any() or not np.array_equal(lens, m[~refused]):
        return False
    if not _first_rows(S.pred_line, ia, np.arange(first, first + ia.size, dtype=np.int64)):
        return False
    S.pred_ok[ia] = True
    S.pred_refused[ia] = refused
    starts = np.zeros(lens.size, dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    S.prob_start[ia[~refused]] = S.prob_flat.size + starts
    total = int(lens.sum())
    S.prob_flat.add(np.fromiter(chain.from_iterable(answers), np.float64, total))
    return True


def _read_predictions(cfg: EngineConfig, path: str, P: _Problems, S: _State) -> _File:
    f = _File(path, dict(cfg.fields["predictions"]), _prediction_types(), P, S.lists_path)
    rows = _Rows(S)
    seen_elsewhere: dict[str, int] = {}
    for first, recs, typed in f.blocks():
        if typed and _predictions_block(S, rows, first, recs):
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


def _binary_block(S: _State, rows: _Rows, seen: np.ndarray, correct: np.ndarray, first: int, recs):
    """``(q, y)`` of a block of typed binary outputs when every one is the first output for an
    option of a scored list and agrees with its list's correct set (when that is known); None,
    and nothing marked, otherwise. The struct has checked each probability to lie in [0, 1],
    each label to be 0 or 1 and each option index to lie in [0, candidates max)."""
    ia = rows.of_runs([r.request_id for r in recs])
    if ia is None:
        return None
    ja = np.array([r.candidate_index for r in recs], dtype=np.int64)
    if not (ja < S.m[ia]).all():
        return None
    key = S.opt_start[ia] + ja
    if not _first_rows(seen, key, np.arange(first, first + ia.size, dtype=np.int64)):
        return None
    ya = np.array([r.label for r in recs], dtype=np.int64)
    if (S.label_ok[ia] & (correct[key] != (ya == 1))).any():
        seen[key] = 0
        return None
    return np.array([r.probability for r in recs], dtype=np.float64), ya


def _read_binary(cfg: EngineConfig, path: str, P: _Problems, S: _State, labels_path, rids):
    """The binary outputs: (file, q, y) with q and y in file order, checked block by block as
    they are read. An output for an option that had one before repeats it (the first, on its
    line, is kept); the label of an option of a list with a usable label must be its correct
    set's."""
    f = _File(path, dict(cfg.fields["binary"]), _binary_types(cfg), P, S.lists_path)
    n = f.names
    start = S.opt_start
    lab = np.flatnonzero(S.label_ok)
    g = S.corr_len[lab]
    correct = np.zeros(int(start[-1]), dtype=bool)  # per option of every scored list
    correct[np.repeat(start[lab], g) + S.corr_flat.array()[_segments(S.corr_start[lab], g)]] = True
    seen = np.zeros(int(start[-1]), dtype=np.int64)  # the line of each option's first output
    rows = _Rows(S, np.flatnonzero(S.pred_ok & ~S.pred_refused))  # the lists with outputs
    qs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    for first, recs, typed in f.blocks():
        got = _binary_block(S, rows, seen, correct, first, recs) if typed else None
        if got is not None:
            qs.append(got[0])
            ys.append(got[1])
            continue
        kept_q: list[float] = []
        kept_y: list[int] = []
        for no, rec in enumerate(recs, start=first):
            row = None
            if type(rec) is f.struct:
                i = S.index.get(rec.request_id)
                if i is not None and rec.candidate_index < S.m[i]:
                    row = (i, rec.candidate_index, rec.probability, rec.label)
                else:
                    rec = f.lines.strict_at(no)
            if row is None and rec is not None:
                row = _binary_row(f, S, no, rec)
            if row is None:
                continue
            i, j, q, y = row
            k = int(start[i]) + j
            if seen[k]:
                f.add(
                    no,
                    f"{n['candidate_index']}: option {j} of {rids[i]!r} repeats line "
                    f"{int(seen[k])}",
                )
                continue
            seen[k] = no
            if S.label_ok[i] and int(correct[k]) != y:
                f.add(
                    no,
                    f"{n['label']}: {y} disagrees with the correct set of {rids[i]!r} "
                    f"({labels_path}:{int(S.label_line[i])}), which gives {int(correct[k])}",
                )
                continue
            kept_q.append(q)
            kept_y.append(y)
        qs.append(np.array(kept_q, dtype=np.float64))
        ys.append(np.array(kept_y, dtype=np.int64))
    q_a = np.concatenate(qs) if qs else np.zeros(0, dtype=np.float64)
    y_a = np.concatenate(ys) if ys else np.zeros(0, dtype=np.int64)
    return f, q_a, y_a


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
        f.add(no, f"{n['probability']}: {_shown_value(q)} is not a finite number in [0, 1]")
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


def _id() -> Any:
    import msgspec

    return Annotated[str, msgspec.Meta(min_length=1)]


def _index(cfg: EngineConfig) -> Any:
    import msgspec

    return Annotated[int, msgspec.Meta(ge=0, lt=cfg.candidates_max)]


# The records' types on the fast path: a value the type refuses sends its line to the strict
# reader (which gives the message), so each constraint here is one that line's checks make too.


def _list_types(cfg: EngineConfig) -> dict[str, Any]:
    import msgspec

    bounds = msgspec.Meta(min_length=cfg.candidates_min, max_length=cfg.candidates_max)
    return {"request_id": _id(), "question": str, "candidates": Annotated[list[str], bounds]}


def _label_types(cfg: EngineConfig) -> dict[str, Any]:
    return {
        "request_id": _id(),
        "split": Literal[cfg.split_names],
        "correct": list[_index(cfg)],
    }


def _prediction_types() -> dict[str, Any]:
    return {"request_id": _id(), "refused": bool, "probabilities": list[float] | None}


def _binary_types(cfg: EngineConfig) -> dict[str, Any]:
    import msgspec

    return {
        "request_id": _id(),
        "candidate_index": _index(cfg),
        "probability": Annotated[float, msgspec.Meta(ge=0.0, le=1.0)],
        "label": Literal[0, 1],
    }


def _shown_value(q) -> str:
    """A value in a message, cut to 30 characters (a 400-digit integer was shown whole)."""
    text = repr(q)
    return text if len(text) <= 30 else text[:30] + "…"
