"""Semantic difference between two versions of a spec, for reviewers.

A text diff of YAML shows lines; a reviewer needs to know what changed in the registered study
and whether the change was declared.  :func:`diff_specs` compares two parsed specs and returns
one :class:`Change` per semantic difference, each found by a small named rule (modelled on
``buf breaking``) with a past-tense message, and classified as

* ``registered``: it changes what the study does or decides (cells, rows, words, rules,
  thresholds, metrics, constants, roles, seed policy, budget, contracts, commands, ...);
* ``editorial``: prose and record-keeping that do not change the study.

How specs are compared
----------------------
* Mappings are compared key by key.  Lists of mappings are matched by a key field (the first of
  :data:`LIST_KEYS` that every item carries with unique values: ``id``, ``name``, ``role``,
  ``version``, ``verdict``, ``scope``, ``factor``), never by position, so reordering them is not
  a change unless their order is registered: :data:`ORDERED` lists (cells are allocated in order;
  verdicts are tried in order) and every list inside a constant's ``value`` (whose meaning only
  the engine knows).  Other lists of mappings are compared position by position; lists of
  scalars are compared whole.
* A constant's ``value`` is walked like the rest of the spec, so a change inside it is reported
  where it happened (``/constants[audit]/value/folds``: "Previously 5, constant audit's folds
  is now 4.") by the ``constant_value_*`` rules, never as one opaque change of the constant.
* Numbers compare by value (``5`` equals ``5.0``, as in the canonical JSON the digests use);
  ``true`` never equals ``1``.
* Comments never reach the parsed spec, so they never diff.

Editorial keys
--------------
:data:`EDITORIAL_KEYS` (``title``, ``description``, ``statement``, ``summary``, ``help``,
``label``, ``rationale``, ``source_document``) are prose wherever the language uses them, except
inside a constant's ``value``, which is engine data and always registered.  The record-keeping
keys :data:`RECORD_KEYS` (``version``, ``status``, ``amendments``) describe the registration
rather than the study, so they are editorial too.  The ``registration`` block (authors, data
status, research question, rationale, sampling plan, stopping rule, exclusions, missing data,
confirmatory and exploratory analyses, blinding, deviations plan) is prose explaining the
executable plan, so it is editorial, except :data:`REGISTRATION_KEYS` (``registration_date``
and ``identifier``), which pin the registration act itself and are registered.
:func:`registered_content` is the spec without all editorial content: what a seal pins.

Declared changes
----------------
A registered change is declared when an amendment of the new spec whose version comes after the
old spec's names its path (:func:`new_amendments`, :func:`declare`; the same covering rule as a
seal's, :meth:`Change.covered_by`).  ``prereg diff`` exits 0 when every registered change is
declared, 1 when one is not.

Paths
-----
Each change names its place twice: ``path`` uses ids (``/cells[tst-a_h1_yes]/rows``,
``/pools[pool-a]/words[link]/text``) and ``pointer`` is the JSON pointer into the new spec
(``/cells/3/rows``), or into the old spec for something removed (``old_pointer`` always points
into the old one).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prereg.compiler.expand import with_expanded_cells
from prereg.compiler.load import load_yaml, load_yaml_text
from prereg.errors import UserError

REGISTERED = "registered"
EDITORIAL = "editorial"

EDITORIAL_KEYS = frozenset(
    {
        "title",
        "description",
        "statement",
        "summary",
        "help",
        "label",
        "rationale",
        "source_document",
    }
)
RECORD_KEYS = frozenset({"version", "status", "amendments"})
# The registration block is editorial except these slots (when and where it was registered).
REGISTRATION = "registration"
REGISTRATION_KEYS = frozenset({"registration_date", "identifier"})
LIST_KEYS = ("id", "name", "role", "version", "verdict", "scope", "factor")
# Lists of the language whose order is registered, as key-name patterns ("*" = any item).
ORDERED = frozenset({("cells",), ("hypotheses", "*", "verdicts")})

# Nouns for the top-level sections of the language, used in messages.
NOUNS = {
    "splits": "split",
    "factors": "factor",
    "pools": "pool",
    "pool_constraints": "pool constraint",
    "cells": "cell",
    "totals": "total",
    "budget": "budget item",
    "record_contracts": "record contract",
    "metrics": "metric",
    "row_attributes": "row attribute",
    "families": "family",
    "gates": "gate",
    "figures": "figure",
    "hypotheses": "hypothesis",
    "freeze_roles": "freeze role",
    "constants": "constant",
    "commands": "command",
    "amendments": "amendment",
}

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()


# ---------------------------------------------------------------------------------------------
# Segments, deltas and changes


@dataclass(frozen=True)
class Seg:
    """One step of a path: a mapping key, or a list item (matched by ``label`` or position)."""

    key: str | None = None
    label: Any = None
    old_index: int | None = None
    new_index: int | None = None

    @property
    def is_item(self) -> bool:
        return self.key is None


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def id_path(segs: tuple[Seg, ...]) -> str:
    out = []
    for s in segs:
        if not s.is_item:
            out.append("/" + _escape(s.key))
        elif s.label is not None:
            out.append(f"[{_escape(str(s.label))}]")
        else:
            out.append(f"/{s.new_index if s.new_index is not None else s.old_index}")
    return "".join(out)


def pointer(segs: tuple[Seg, ...], side: str) -> str | None:
    out = []
    for s in segs:
        if not s.is_item:
            out.append("/" + _escape(s.key))
            continue
        index = s.new_index if side == "new" else s.old_index
        if index is None:
            return None
        out.append(f"/{index}")
    return "".join(out)


@dataclass(frozen=True)
class Delta:
    """One raw difference found by the walk: ``op`` is added, removed, changed or moved."""

    op: str
    segs: tuple[Seg, ...]
    old: Any
    new: Any
    old_parent: Any = None
    new_parent: Any = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple("*" if s.is_item else s.key for s in self.segs)

    def match(self, *pattern: str) -> bool:
        """True when the path's shape is exactly ``pattern`` ("*" matches a list item)."""
        return self.names == pattern

    def under(self, *pattern: str) -> bool:
        """True when the path starts with ``pattern`` and goes deeper than it."""
        return len(self.names) > len(pattern) and self.names[: len(pattern)] == pattern

    def label(self, n: int = 1) -> str:
        """The id of the ``n``-th segment (an item), or its index when it has none."""
        s = self.segs[n]
        if s.label is not None:
            return str(s.label)
        return str(s.new_index if s.new_index is not None else s.old_index)

    @property
    def path(self) -> str:
        return id_path(self.segs)

    def rel(self, start: int) -> str:
        """The id path from segment ``start`` on, without its leading slash."""
        return id_path(self.segs[start:]).lstrip("/")


@dataclass(frozen=True)
class Change:
    """A semantic change between two specs, as reported to a reviewer."""

    rule: str
    kind: str
    path: str
    pointer: str | None
    old_pointer: str | None
    message: str
    old: Any = None
    new: Any = None
    op: str = "changed"
    anchor: str = ""  # the new spec's pointer of the change, or of its nearest existing parent
    amendment: str | None = None  # the version of the new amendment declaring a registered change

    def covered_by(self, declared: str) -> bool:
        """True when ``declared`` (a JSON pointer or id path) equals or is a prefix of this change.
        A condition's ``values_file`` declared covers what it is read into: the condition's
        ``values`` and ``values_sha256`` (:mod:`prereg.valuelists`)."""
        paths = [declared]
        if declared.rstrip("/").endswith("/values_file"):
            base = declared.rstrip("/")[: -len("values_file")]
            paths += [base + "values", base + "values_sha256"]
        for mine in (self.pointer, self.old_pointer, self.path):
            if mine is not None and any(_is_prefix(d, mine) for d in paths):
                return True
        return False

    def as_json(self) -> dict[str, Any]:
        """The change as ``--format json`` writes it: prereg's own keys camelCase like every
        other output (the ``old`` and ``new`` values are spec content, spelt as the spec is)."""
        return {
            "rule": self.rule,
            "kind": self.kind,
            "op": self.op,
            "path": self.path,
            "pointer": self.pointer,
            "oldPointer": self.old_pointer,
            "message": self.message,
            "old": None if self.old is MISSING else self.old,
            "new": None if self.new is MISSING else self.new,
            "amendment": self.amendment,
        }


def _is_prefix(declared: str, path: str) -> bool:
    if declared in ("", "/"):
        return False  # the whole spec is never a declared path
    declared = declared.rstrip("/")
    if path == declared:
        return True
    return path.startswith(declared) and path[len(declared)] in "/["


# ---------------------------------------------------------------------------------------------
# Comparing values


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _inside_value(segs: tuple[Seg, ...]) -> bool:
    """True inside a constant's ``value`` (engine data: every key registered, order registered)."""
    return (
        len(segs) >= 3 and segs[0].key == "constants" and segs[1].is_item and segs[2].key == "value"
    )


def is_editorial(segs: tuple[Seg, ...]) -> bool:
    """True for prose and record-keeping paths (see the module docstring)."""
    if segs and segs[0].key in RECORD_KEYS:
        return True
    if segs and segs[0].key == REGISTRATION:
        return not (len(segs) >= 2 and segs[1].key in REGISTRATION_KEYS)
    if _inside_value(segs):
        return False
    return any(s.key in EDITORIAL_KEYS for s in segs)


def _ordered(segs: tuple[Seg, ...]) -> bool:
    if _inside_value(segs):
        return True
    names = tuple("*" if s.is_item else s.key for s in segs)
    return names in ORDERED


def _scalar(v: Any) -> bool:
    return not isinstance(v, (dict, list))


def _list_key(old: list, new: list) -> str | None:
    items = old + new
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    for key in LIST_KEYS:
        ok = True
        for side in (old, new):
            seen = set()
            for x in side:
                v = x.get(key, MISSING)
                if v is MISSING or not isinstance(v, (str, int)) or isinstance(v, bool):
                    ok = False
                    break
                if v in seen:
                    ok = False
                    break
                seen.add(v)
            if not ok:
                break
        if ok:
            return key
    return None


def _stable_subsequence(seq: list[int]) -> set[int]:
    """Positions (in ``seq``) of one longest increasing subsequence (deterministic)."""
    tails: list[int] = []  # index into seq of the smallest tail of each length
    prev: list[int] = [-1] * len(seq)
    for i, v in enumerate(seq):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if seq[tails[mid]] < v:
                lo = mid + 1
            else:
                hi = mid
        prev[i] = tails[lo - 1] if lo else -1
        if lo == len(tails):
            tails.append(i)
        else:
            tails[lo] = i
    keep: set[int] = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def walk(old: Any, new: Any) -> list[Delta]:
    """Every raw difference between two parsed specs, in a stable order."""
    out: list[Delta] = []
    _walk(old, new, (), None, None, out)
    return out


def _walk(old, new, segs, old_parent, new_parent, out: list[Delta]) -> None:
    if _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            s = segs + (Seg(key=k),)
            if k not in new:
                out.append(Delta("removed", s, old[k], MISSING, old, new))
            elif k not in old:
                out.append(Delta("added", s, MISSING, new[k], old, new))
            else:
                _walk(old[k], new[k], s, old, new, out)
        return
    if isinstance(old, list) and isinstance(new, list):
        key = _list_key(old, new)
        if key is not None:
            _walk_keyed(old, new, key, segs, out)
        elif all(_scalar(x) for x in old + new):
            out.append(Delta("changed", segs, old, new, old_parent, new_parent))
        else:
            for i in range(max(len(old), len(new))):
                if i >= len(new):
                    s = segs + (Seg(old_index=i),)
                    out.append(Delta("removed", s, old[i], MISSING, old, new))
                elif i >= len(old):
                    s = segs + (Seg(new_index=i),)
                    out.append(Delta("added", s, MISSING, new[i], old, new))
                else:
                    s = segs + (Seg(old_index=i, new_index=i),)
                    _walk(old[i], new[i], s, old, new, out)
        return
    out.append(Delta("changed", segs, old, new, old_parent, new_parent))


def _walk_keyed(old: list, new: list, key: str, segs, out: list[Delta]) -> None:
    new_at = {x[key]: i for i, x in enumerate(new)}
    old_at = {x[key]: i for i, x in enumerate(old)}
    for i, item in enumerate(old):
        label = item[key]
        j = new_at.get(label)
        s = segs + (Seg(label=label, old_index=i, new_index=j),)
        if j is None:
            out.append(Delta("removed", s, item, MISSING, old, new))
        else:
            _walk(item, new[j], s, item, new[j], out)
    for j, item in enumerate(new):
        label = item[key]
        if label not in old_at:
            s = segs + (Seg(label=label, new_index=j),)
            out.append(Delta("added", s, MISSING, item, old, new))
    if _ordered(segs):
        common = [x[key] for x in old if x[key] in new_at]
        order = [new_at[label] for label in common]
        keep = _stable_subsequence(order)
        for n, label in enumerate(common):
            if n not in keep:
                s = segs + (Seg(label=label, old_index=old_at[label], new_index=new_at[label]),)
                out.append(Delta("moved", s, old_at[label], new_at[label], old, new))


# ---------------------------------------------------------------------------------------------
# Rules


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    fn: Callable[[Delta], str | None]
    doc: str = field(default="")


RULES: list[Rule] = []


def rule(name: str, kind: str = REGISTERED) -> Callable:
    def register(fn: Callable[[Delta], str | None]) -> Callable[[Delta], str | None]:
        RULES.append(Rule(name, kind, fn, (fn.__doc__ or "").strip()))
        return fn

    return register


def fmt(v: Any, limit: int = 160) -> str:
    """A value as it appears in messages: JSON, shortened when long."""
    if v is MISSING:
        return "(absent)"
    text = json.dumps(v, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def q(label: Any) -> str:
    return json.dumps(str(label), ensure_ascii=False)


def _rows(n: Any) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def fmt_pair(old: Any, new: Any, limit: int = 160) -> tuple[str, str]:
    """Two values for a "previously ... now ..." message; long strings show where they differ."""
    if not (isinstance(old, str) and isinstance(new, str)) or max(len(old), len(new)) <= limit:
        return fmt(old, limit), fmt(new, limit)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    context = 24

    def cut(text: str) -> str:
        lo = max(0, start - context)
        hi = min(len(text), len(text) - end + context)
        piece = json.dumps(text[lo:hi], ensure_ascii=False)[1:-1]
        if len(piece) > limit:
            piece = piece[: limit - 1] + "…"
        return '"' + ("…" if lo else "") + piece + ("…" if hi < len(text) else "") + '"'

    return cut(old), cut(new)


def _items(v: Any) -> str:
    """``fmt(v)``, or the ids of a list of keyed items."""
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        key = _list_key(v, [])
        if key is not None:
            return "items " + ", ".join(q(x[key]) for x in v)
    return fmt(v)


def _generic(d: Delta, subject: str) -> str:
    """A past-tense message for any delta, naming ``subject``."""
    if d.op == "added":
        return f"{subject} was added: {_items(d.new)}."
    if d.op == "removed":
        return f"Previously present {subject} was removed (it was {_items(d.old)})."
    if d.op == "moved":
        return f"{subject} moved from index {d.old} to index {d.new}."
    old, new = fmt_pair(d.old, d.new)
    return f"Previously {subject} was {old}; it is now {new}{_membership(d)}."


def _membership(d: Delta) -> str:
    """`` (added: ...; removed: ...)`` for two lists of scalars, when members differ."""
    if not (isinstance(d.old, list) and isinstance(d.new, list)):
        return ""
    try:
        gone = [x for x in d.old if x not in d.new]
        came = [x for x in d.new if x not in d.old]
    except TypeError:  # pragma: no cover - unhashable items never reach here
        return ""
    parts = []
    if came:
        parts.append("added " + ", ".join(fmt(x) for x in came))
    if gone:
        parts.append("removed " + ", ".join(fmt(x) for x in gone))
    return f" ({'; '.join(parts)})" if parts else ""


def _in_item(d: Delta, start: int = 2) -> str:
    """``<rel path> of <noun> "<id>"`` for a delta below a section's item."""
    what = f"{NOUNS.get(d.segs[0].key, d.segs[0].key)} {q(d.label(1))}"
    rel = d.rel(start)
    return f"{rel} of {what}" if rel else what


# -- the registration record -------------------------------------------------------------------


def _registration_keys(v: Any) -> dict:
    return {k: v[k] for k in sorted(REGISTRATION_KEYS) if isinstance(v, dict) and k in v}


@rule("registration_record_changed")
def registration_record_changed(d: Delta) -> str | None:
    """The registration date or identifier changed (the registration act itself)."""
    if not d.segs or d.segs[0].key != REGISTRATION:
        return None
    if len(d.segs) == 1:  # the whole block added or removed: registered if it carries a key
        old = _registration_keys(d.old if d.old is not MISSING else None)
        new = _registration_keys(d.new if d.new is not MISSING else None)
        if _same(old, new):
            return None
        return f"The registration record changed: {fmt(old or MISSING)} → {fmt(new or MISSING)}."
    if d.segs[1].key not in REGISTRATION_KEYS:
        return None
    return _generic(d, f"/registration/{d.segs[1].key}")


@rule("registration_prose_changed", EDITORIAL)
def registration_prose_changed(d: Delta) -> str | None:
    """Prose of the registration record (authors, question, plan in words) changed."""
    if not d.segs or d.segs[0].key != REGISTRATION:
        return None
    return _generic(d, d.path)


# -- editorial ----------------------------------------------------------------------------------


@rule("prose_changed", EDITORIAL)
def prose_changed(d: Delta) -> str | None:
    """Prose (a title, description, statement, summary, help, label or rationale) changed."""
    if d.segs[0].key in RECORD_KEYS or not is_editorial(d.segs):
        return None
    where = d.path
    if d.op == "added":
        return f"Prose {where} was added: {fmt(d.new)}."
    if d.op == "removed":
        return f"Previously present prose {where} was removed."
    old, new = fmt_pair(d.old, d.new)
    return f"Previously {where} read {old}; it now reads {new}."


@rule("version_changed", EDITORIAL)
def version_changed(d: Delta) -> str | None:
    """The study's version changed (record-keeping)."""
    if d.match("version"):
        return f"Previously version {fmt(d.old)}; the spec is now version {fmt(d.new)}."
    return None


@rule("status_changed", EDITORIAL)
def status_changed(d: Delta) -> str | None:
    """The registration status changed (record-keeping)."""
    if d.match("status"):
        return f"Previously status {fmt(d.old)}; the study is now {fmt(d.new)}."
    return None


@rule("amendment_added", EDITORIAL)
def amendment_added(d: Delta) -> str | None:
    """An amendment was declared."""
    if d.match("amendments", "*") and d.op == "added":
        paths = ", ".join((d.new or {}).get("paths") or []) or "no paths"
        return f"Amendment {q(d.label())} was declared, changing {paths}."
    if d.match("amendments") and d.op == "added":
        versions = ", ".join(str(a.get("version")) for a in d.new or [])
        return f"Amendments were declared: {versions}."
    return None


@rule("amendment_changed", EDITORIAL)
def amendment_changed(d: Delta) -> str | None:
    """An earlier amendment was edited or removed."""
    if d.segs[0].key != "amendments":
        return None
    if d.match("amendments", "*") and d.op == "removed":
        return f"Previously declared amendment {q(d.label())} was removed."
    if d.under("amendments", "*"):
        return _generic(d, _in_item(d))
    return _generic(d, "/amendments")


# -- factors and levels ---------------------------------------------------------------------


@rule("factor_added")
def factor_added(d: Delta) -> str | None:
    """A design factor was added."""
    if d.match("factors", "*") and d.op == "added":
        levels = ", ".join(str(lv.get("id")) for lv in d.new.get("levels") or [])
        return f"Factor {q(d.label())} was added with levels {levels}."
    return None


@rule("factor_removed")
def factor_removed(d: Delta) -> str | None:
    """A design factor was removed."""
    if d.match("factors", "*") and d.op == "removed":
        return f"Previously present factor {q(d.label())} was removed."
    return None


@rule("level_added")
def level_added(d: Delta) -> str | None:
    """A level was added to a factor."""
    if d.match("factors", "*", "levels", "*") and d.op == "added":
        return f"Level {q(d.label(3))} was added to factor {q(d.label())}."
    return None


@rule("level_removed")
def level_removed(d: Delta) -> str | None:
    """A level was removed from a factor."""
    if d.match("factors", "*", "levels", "*") and d.op == "removed":
        return f"Previously present level {q(d.label(3))} of factor {q(d.label())} was removed."
    return None


@rule("factor_changed")
def factor_changed(d: Delta) -> str | None:
    """Anything else about a factor changed (a level's code, say)."""
    if d.under("factors") or d.match("factors"):
        return _generic(d, _in_item(d) if d.under("factors") else "/factors")
    return None


# -- cells ----------------------------------------------------------------------------------


@rule("cell_added")
def cell_added(d: Delta) -> str | None:
    """A cell was added (at its allocation index)."""
    if d.match("cells", "*") and d.op == "added":
        index = d.segs[1].new_index
        return (
            f"Cell {q(d.label())} was added at index {index} with "
            f"{_rows(d.new.get('rows'))} (split {d.new.get('split')})."
        )
    return None


@rule("cell_removed")
def cell_removed(d: Delta) -> str | None:
    """A cell was removed."""
    if d.match("cells", "*") and d.op == "removed":
        return f"Previously present cell {q(d.label())} ({_rows(d.old.get('rows'))}) was removed."
    return None


@rule("cell_rows_changed")
def cell_rows_changed(d: Delta) -> str | None:
    """A cell's row count changed."""
    if d.match("cells", "*", "rows") and d.op == "changed":
        return f"Previously {_rows(d.old)}, cell {q(d.label())} now has {d.new}."
    return None


@rule("cell_moved")
def cell_moved(d: Delta) -> str | None:
    """A cell moved in the list (cells are allocated in order)."""
    if d.match("cells", "*") and d.op == "moved":
        return (
            f"Cell {q(d.label())} moved from index {d.old} to index {d.new}; "
            "cells are allocated in order."
        )
    return None


@rule("cell_changed")
def cell_changed(d: Delta) -> str | None:
    """Anything else about a cell changed (its split or levels)."""
    if d.under("cells", "*"):
        return _generic(d, _in_item(d))
    if d.match("cells"):
        return _generic(d, "/cells")
    return None


# -- wording pools --------------------------------------------------------------------------


@rule("pool_word_changed")
def pool_word_changed(d: Delta) -> str | None:
    """The word a pool gives a role changed."""
    if d.match("pools", "*", "words", "*", "text") and d.op == "changed":
        return (
            f"Previously pool {q(d.label())} used {fmt(d.old)} as {d.label(3)}; "
            f"it now uses {fmt(d.new)}."
        )
    return None


@rule("pool_word_added")
def pool_word_added(d: Delta) -> str | None:
    """A pool gained a word role."""
    if d.match("pools", "*", "words", "*") and d.op == "added":
        return f"Pool {q(d.label())} gained role {d.label(3)} with {fmt(d.new.get('text'))}."
    return None


@rule("pool_word_removed")
def pool_word_removed(d: Delta) -> str | None:
    """A pool lost a word role."""
    if d.match("pools", "*", "words", "*") and d.op == "removed":
        return (
            f"Previously pool {q(d.label())} had role {d.label(3)} "
            f"({fmt(d.old.get('text'))}); it was removed."
        )
    return None


@rule("pool_changed")
def pool_changed(d: Delta) -> str | None:
    """A pool was added or removed, or its level changed; or a pool constraint changed."""
    if d.segs[0].key not in ("pools", "pool_constraints"):
        return None
    if d.match("pools", "*") and d.op == "added":
        return f"Pool {q(d.label())} was added."
    if d.match("pools", "*") and d.op == "removed":
        return f"Previously present pool {q(d.label())} was removed."
    if d.under("pools", "*") or d.under("pool_constraints", "*"):
        return _generic(d, _in_item(d))
    return _generic(d, d.path)


# -- families and decision rules ------------------------------------------------------------


@rule("family_alpha_changed")
def family_alpha_changed(d: Delta) -> str | None:
    """A multiplicity family's alpha (its threshold) changed."""
    if d.match("families", "*", "alpha") and d.op == "changed":
        adj = (d.new_parent or {}).get("adjustment", "?")
        return (
            f"Previously family {q(d.label())} ({adj}) tested at alpha {fmt(d.old)}; "
            f"it now tests at {fmt(d.new)}."
        )
    return None


@rule("family_adjustment_changed")
def family_adjustment_changed(d: Delta) -> str | None:
    """A multiplicity family's adjustment changed."""
    if d.match("families", "*", "adjustment") and d.op == "changed":
        return (
            f"Previously family {q(d.label())} adjusted with {d.old}; it now adjusts with {d.new}."
        )
    return None


@rule("family_changed")
def family_changed(d: Delta) -> str | None:
    """A multiplicity family was added or removed."""
    if d.match("families", "*") and d.op == "added":
        return (
            f"Family {q(d.label())} was added ({d.new.get('adjustment')}, "
            f"alpha {fmt(d.new.get('alpha'))})."
        )
    if d.match("families", "*") and d.op == "removed":
        return f"Previously present family {q(d.label())} was removed."
    if d.segs[0].key == "families":
        return _generic(d, _in_item(d) if d.under("families", "*") else "/families")
    return None


def _threshold(v: Any) -> str:
    """A threshold as the spec writes it: a number, or an exact fraction without quotes."""
    return v if isinstance(v, str) and "/" in v else fmt(v)


def _comparison(c: dict) -> str:
    return f"{c.get('quantity')} of {c.get('target')} {c.get('op')}"


@rule("rule_threshold_changed")
def rule_threshold_changed(d: Delta) -> str | None:
    """A decision rule's comparison value (or a gate's) changed."""
    if d.match("gates", "*", "value") and d.op == "changed":
        g = d.new_parent or {}
        return (
            f"Previously gate {q(d.label())} required {g.get('metric')} {g.get('op')} "
            f"{_threshold(d.old)}; the threshold is now {_threshold(d.new)}."
        )
    if d.under("hypotheses", "*") and d.names[-2:] == ("compare", "value") and d.op == "changed":
        c = d.new_parent or {}
        return (
            f"Previously hypothesis {q(d.label())} required {_comparison(c)} {_threshold(d.old)}; "
            f"the threshold is now {_threshold(d.new)} (at {d.rel(2)})."
        )
    return None


@rule("rule_quantifier_changed")
def rule_quantifier_changed(d: Delta) -> str | None:
    """A decision rule's quantifier (all, any, at_least) or its count changed."""
    if not d.under("hypotheses", "*") or d.op != "changed":
        return None
    tail = d.names[-2:]
    if tail in (("for_each", "quantifier"), ("for_each", "count"), ("at_least", "count")):
        what = "quantifier" if tail[1] == "quantifier" else "count"
        return (
            f"Previously hypothesis {q(d.label())} used {what} {fmt(d.old)}; "
            f"it now uses {fmt(d.new)} (at {d.rel(2)})."
        )
    return None


@rule("rule_family_changed")
def rule_family_changed(d: Delta) -> str | None:
    """A contrast moved to another multiplicity family."""
    if d.match("hypotheses", "*", "contrasts", "*", "family"):
        return (
            f"Previously contrast {q(d.label(3))} of hypothesis {q(d.label())} was in family "
            f"{fmt(d.old)}; it is now in {fmt(d.new)}."
        )
    return None


@rule("hypothesis_changed")
def hypothesis_changed(d: Delta) -> str | None:
    """Anything else about a hypothesis, its contrasts, rule or verdicts changed."""
    if d.match("hypotheses", "*") and d.op == "added":
        return f"Hypothesis {q(d.label())} was added."
    if d.match("hypotheses", "*") and d.op == "removed":
        return f"Previously present hypothesis {q(d.label())} was removed."
    if d.under("hypotheses", "*"):
        return _generic(d, _in_item(d))
    if d.match("hypotheses"):
        return _generic(d, "/hypotheses")
    return None


# -- metrics, constants, roles, seeds, budget, contracts ------------------------------------


@rule("metric_changed")
def metric_changed(d: Delta) -> str | None:
    """A metric was added, removed or redefined."""
    if d.match("metrics", "*") and d.op == "added":
        return f"Metric {q(d.label())} was added: {fmt(d.new.get('definition'))}."
    if d.match("metrics", "*") and d.op == "removed":
        return f"Previously present metric {q(d.label())} was removed."
    if d.segs[0].key == "metrics":
        return _generic(d, _in_item(d) if d.under("metrics", "*") else "/metrics")
    return None


@rule("constant_added")
def constant_added(d: Delta) -> str | None:
    """A frozen constant was added."""
    if d.match("constants", "*") and d.op == "added":
        return f"Constant {q(d.label())} was added with value {fmt(d.new.get('value'))}."
    return None


@rule("constant_removed")
def constant_removed(d: Delta) -> str | None:
    """A frozen constant was removed."""
    if d.match("constants", "*") and d.op == "removed":
        return f"Previously present constant {q(d.label())} was removed."
    return None


def _setting(d: Delta, capital: bool = False) -> str:
    """``constant audit's folds``: a place inside a constant's value, named by its id path
    (``constant rules's item [exhaustive]/template``); ``constant audit`` for the whole value."""
    head = f"{'C' if capital else 'c'}onstant {d.label(1)}"
    rest = d.segs[3:]
    if not rest:
        return head
    where = id_path(rest).lstrip("/")
    return f"{head}'s {'item ' if rest[0].is_item else ''}{where}"


@rule("constant_value_changed")
def constant_value_changed(d: Delta) -> str | None:
    """A setting inside a frozen constant's value (or the whole value) changed."""
    if _inside_value(d.segs) and d.op == "changed":
        old, new = fmt_pair(d.old, d.new)
        return f"Previously {old}, {_setting(d)} is now {new}{_membership(d)}."
    return None


@rule("constant_value_added")
def constant_value_added(d: Delta) -> str | None:
    """A setting was added inside a frozen constant's value."""
    if _inside_value(d.segs) and len(d.segs) > 3 and d.op == "added":
        return f"{_setting(d, capital=True)} was added: {_items(d.new)}."
    return None


@rule("constant_value_removed")
def constant_value_removed(d: Delta) -> str | None:
    """A setting was removed from a frozen constant's value."""
    if _inside_value(d.segs) and len(d.segs) > 3 and d.op == "removed":
        return f"Previously {_setting(d)} was {_items(d.old)}; it was removed."
    return None


@rule("constant_value_moved")
def constant_value_moved(d: Delta) -> str | None:
    """An item moved inside a list of a frozen constant's value (their order is registered)."""
    if _inside_value(d.segs) and d.op == "moved":
        return (
            f"{_setting(d, capital=True)} moved from index {d.old} to index {d.new}; order"
            " inside a constant's value is registered."
        )
    return None


@rule("constant_changed")
def constant_changed(d: Delta) -> str | None:
    """Anything else about a frozen constant changed (its unit, say)."""
    if d.under("constants", "*"):
        return _generic(d, _in_item(d))
    if d.match("constants"):
        return _generic(d, "/constants")
    return None


@rule("role_added")
def role_added(d: Delta) -> str | None:
    """A freeze role was added."""
    if d.match("freeze_roles", "*") and d.op == "added":
        req = "required" if d.new.get("required") else "optional"
        return f"Freeze role {q(d.label())} was added ({d.new.get('kind')}, {req})."
    return None


@rule("role_removed")
def role_removed(d: Delta) -> str | None:
    """A freeze role was removed."""
    if d.match("freeze_roles", "*") and d.op == "removed":
        return f"Previously present freeze role {q(d.label())} was removed."
    return None


@rule("role_changed")
def role_changed(d: Delta) -> str | None:
    """A freeze role's kind, requirement or extensions changed."""
    if d.under("freeze_roles", "*"):
        return _generic(d, _in_item(d))
    if d.match("freeze_roles"):
        return _generic(d, "/freeze_roles")
    return None


@rule("seed_policy_changed")
def seed_policy_changed(d: Delta) -> str | None:
    """The seed policy changed."""
    if d.segs[0].key != "seed_policy":
        return None
    if len(d.segs) == 1:
        return _generic(d, "the seed policy")
    return _generic(d, f"{d.rel(1)} of the seed policy")


@rule("budget_changed")
def budget_changed(d: Delta) -> str | None:
    """A budget item was added, removed or changed."""
    if d.match("budget", "*", "value") and d.op == "changed":
        unit = (d.new_parent or {}).get("unit", "")
        return (
            (
                f"Previously budget item {q(d.label())} was {fmt(d.old)} {unit}; "
                f"it is now {fmt(d.new)} {unit}."
            )
            .replace(" ;", ";")
            .replace(" .", ".")
        )
    if d.segs[0].key == "budget":
        return _generic(d, _in_item(d) if len(d.segs) > 1 else "/budget")
    return None


@rule("record_contract_changed")
def record_contract_changed(d: Delta) -> str | None:
    """An input or output record contract changed."""
    if d.segs[0].key != "record_contracts":
        return None
    return _generic(d, _in_item(d) if len(d.segs) > 1 else "/record_contracts")


@rule("registered_changed")
def registered_changed(d: Delta) -> str | None:
    """Any other registered content changed (splits, totals, commands, engine, id, ...)."""
    if len(d.segs) >= 2 and d.segs[1].is_item and d.segs[0].key in NOUNS:
        return _generic(d, _in_item(d))
    return _generic(d, d.path or "the spec")


# ---------------------------------------------------------------------------------------------
# Entry points


def classify(d: Delta) -> Change:
    for r in RULES:
        message = r.fn(d)
        if message is not None:
            return Change(
                rule=r.name,
                kind=r.kind,
                path=d.path,
                pointer=pointer(d.segs, "old" if d.op == "removed" else "new"),
                old_pointer=pointer(d.segs, "old"),
                message=message,
                old=d.old,
                new=d.new,
                op=d.op,
                anchor=_anchor(d),
            )
    raise AssertionError("registered_changed matches every delta")  # pragma: no cover


def _anchor(d: Delta) -> str:
    segs = d.segs[:-1] if d.op == "removed" else d.segs
    while segs:
        p = pointer(segs, "new")
        if p is not None:
            return p
        segs = segs[:-1]
    return ""


def diff_specs(old: Any, new: Any) -> list[Change]:
    """Every semantic change from ``old`` to ``new`` (two parsed specs)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        raise TypeError("diff_specs compares two parsed specs (mappings)")
    # Crossings are compared as the cells they register, so a reviewer sees each cell change.
    return [classify(d) for d in walk(with_expanded_cells(old), with_expanded_cells(new))]


def registered(changes: list[Change]) -> list[Change]:
    return [c for c in changes if c.kind == REGISTERED]


def registered_content(spec: dict) -> dict:
    """The spec without prose, record-keeping keys or amendments: what a seal pins.

    Agrees with :func:`is_editorial` (a constant's ``value`` is kept whole).
    """
    out = {}
    for k, v in with_expanded_cells(spec).items():
        if k in RECORD_KEYS or k in EDITORIAL_KEYS:
            continue
        if k == REGISTRATION:
            if _registration_keys(v):
                out[k] = _registration_keys(v)
            continue
        if k == "constants" and isinstance(v, list):
            out[k] = [_strip_constant(c) for c in v]
        else:
            out[k] = _strip(v)
    return out


def _strip_constant(c: Any) -> Any:
    if not isinstance(c, dict):
        return _strip(c)
    return {
        k: (v if k == "value" else _strip(v))
        for k, v in c.items()
        if k == "value" or k not in EDITORIAL_KEYS
    }


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in EDITORIAL_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def rule_names() -> list[str]:
    return [r.name for r in RULES]


# ---------------------------------------------------------------------------------------------
# Reading specs (files and git revisions) and reporting


@dataclass
class Comparison:
    """The changes of one study between two versions of its spec."""

    study: str
    old_label: str
    new_label: str
    changes: list[Change]

    @property
    def registered(self) -> int:
        return sum(c.kind == REGISTERED for c in self.changes)

    @property
    def editorial(self) -> int:
        return sum(c.kind == EDITORIAL for c in self.changes)

    @property
    def undeclared(self) -> int:
        """Registered changes no new amendment declares."""
        return sum(c.kind == REGISTERED and c.amendment is None for c in self.changes)


def parse_spec_text(text: str, label: str) -> dict:
    loaded = load_yaml_text(text, Path(label))
    if not isinstance(loaded.data, dict):
        raise UserError(f"{label}:1: a spec must be a mapping (a Study)")
    return loaded.data


def read_spec_file(path, label: str | None = None) -> dict:
    path = Path(path)
    loaded = load_yaml(path, display=Path(label) if label else None)
    if not isinstance(loaded.data, dict):
        raise UserError(f"{label or path}:1: a spec must be a mapping (a Study)")
    return loaded.data


def _home(path: Path, project=None) -> Path:
    """The project folder that holds the spec file ``path``: ``project``'s when it does, else
    the nearest folder above it with a spec/studies/ folder, else the file's own folder."""
    from prereg.compiler.project import STUDIES

    folder = path.resolve().parent
    roots = [project.root.resolve()] if project is not None else []
    roots += [d for d in (folder, *folder.parents) if (d / STUDIES).is_dir()]
    return next((r for r in roots if folder.is_relative_to(r)), folder)


def read_pinned_spec_file(path, project=None, label: str | None = None) -> dict:
    """:func:`read_spec_file` with the files it names read in as ``prereg compile`` reads
    them (:func:`prereg.custom.pinned`: a value list's values and digest, a statistic's file
    digest), from the project holding the file: ``diff OLD NEW`` then sees a changed value
    list or statistic as ``diff --against`` does."""
    from prereg.custom import pinned

    spec = read_spec_file(path, label)
    path = Path(path)
    return pinned(spec, _home(path, project), path.resolve().parent)


def compile_problems(path, project=None, label: str | None = None) -> list[str]:
    """What ``prereg compile`` finds wrong with the spec file ``path`` (shown as ``label``), each
    problem located (``FILE:LINE: at /pointer: rule``); [] when it compiles. Checked in the
    project that holds the file (``project`` when it does): its language, its statistics'
    folder, and the id its name asks for when it lies in the project's spec/studies/."""
    from prereg.compiler import build
    from prereg.compiler.project import Project

    path = Path(path)
    loaded = load_yaml(path, display=Path(label) if label else None)
    if not isinstance(loaded.data, dict):
        return [f"{loaded.path}:1: a spec must be a mapping (a Study)"]
    folder = path.resolve().parent
    home = Project(_home(path, project))
    expected = path.stem if folder == home.studies_dir.resolve() else None
    return build.spec_problems(home, loaded, folder, expected)


def new_amendments(old: dict, new: dict) -> list[tuple[str, list[str]]]:
    """(version, paths) of each amendment of ``new`` after ``old``'s version: the amendments
    made since ``old``, as a seal counts them (:func:`prereg.compiler.seal.undeclared`)."""
    from prereg.compiler.seal import version_key

    after = version_key(old.get("version"))
    out = []
    for a in new.get("amendments") or []:
        if isinstance(a, dict) and version_key(a.get("version")) > after:
            out.append((str(a.get("version")), [str(p) for p in a.get("paths") or []]))
    return out


def declare(changes: list[Change], amendments: list[tuple[str, list[str]]]) -> list[Change]:
    """``changes`` with each registered one that an amendment's path covers marked with the
    first such amendment's version."""
    out = []
    for c in changes:
        if c.kind == REGISTERED:
            by = next((v for v, paths in amendments if any(c.covered_by(p) for p in paths)), None)
            if by is not None:
                c = replace(c, amendment=by)
        out.append(c)
    return out


def compare(old: dict, new: dict, study: str, old_label: str, new_label: str) -> Comparison:
    from prereg.compiler.expand import size_problems

    for spec, label in ((old, old_label), (new, new_label)):  # before listing their cells
        for ptr, rule in size_problems(spec)[:1]:
            raise UserError(f"{label}: at {ptr}: {rule}")
    changes = declare(diff_specs(old, new), new_amendments(old, new))
    return Comparison(study, old_label, new_label, changes)


def exit_code(comparisons: list[Comparison]) -> int:
    """1 when a registered change is not declared by an amendment, else 0 (a registered
    change is fine when a new amendment declares it, as `prereg check` holds a sealed study)."""
    from prereg import exits

    return exits.FAILED if any(c.undeclared for c in comparisons) else exits.OK


class Git:
    """Read files as committed at a revision (``git`` run without a shell)."""

    def __init__(self, cwd, ref: str):
        self.cwd = cwd
        self.ref = ref
        if not ref or ref.startswith("-") or any(ch in ref for ch in "\0\n:"):
            raise UserError(f"--against: not a git revision: {ref!r}")
        top = self._run("rev-parse", "--show-toplevel")
        if top.returncode != 0:
            raise UserError(
                f"--against {ref}: {cwd} is not inside a git repository "
                f"({_first_line(top.stderr) or 'git rev-parse failed'})"
            )
        found = self._run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if found.returncode != 0:
            raise UserError(f"--against {ref}: unknown git revision {ref!r}")
        self.commit = found.stdout.decode().strip()

    def _run(self, *args: str):
        try:
            return subprocess.run(
                ["git", *args], cwd=self.cwd, capture_output=True, check=False, timeout=60
            )
        except FileNotFoundError:
            raise UserError("--against needs git, which is not installed") from None
        except subprocess.TimeoutExpired:
            raise UserError(f"git {args[0]} took too long") from None

    def names(self, folder: str) -> list[str]:
        """File names in ``folder`` (relative to cwd) at the revision; [] when absent."""
        # (run in a subfolder, ls-tree takes and prints paths relative to it)
        out = self._run("ls-tree", "-z", "--name-only", self.commit, "--", f"{folder}/")
        if out.returncode != 0:
            return []
        names = out.stdout.decode("utf-8", "replace").split("\0")
        return sorted(n.rsplit("/", 1)[-1] for n in names if n)

    def read_bytes(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` (relative to cwd) at the revision, or None when absent."""
        if self._run("cat-file", "-e", f"{self.commit}:./{rel}").returncode != 0:
            return None
        out = self._run("show", f"{self.commit}:./{rel}")
        return out.stdout if out.returncode == 0 else None

    def read(self, rel: str) -> str | None:
        """The text of ``rel`` (relative to cwd) at the revision, or None when absent."""
        exists = self._run("cat-file", "-e", f"{self.commit}:./{rel}")
        if exists.returncode != 0:
            return None
        out = self._run("show", f"{self.commit}:./{rel}")
        if out.returncode != 0:
            raise UserError(f"{rel}@{self.ref}: {_first_line(out.stderr)}")
        try:
            return out.stdout.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{rel}@{self.ref}: not UTF-8 (byte {exc.start})") from None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else ""


def _pinned_at(git: Git, spec: dict, spec_folder: str) -> dict:
    """``spec`` (as committed at the revision) with each statistic's file digest at the
    revision, as :func:`prereg.custom.pinned` pins the working tree's."""
    from posixpath import normpath

    from prereg import custom, valuelists
    from prereg.digest import sha256_hex

    def listed(file: str) -> bytes | None:
        for rel in (normpath(f"{spec_folder}/{file}"), normpath(file)):
            data = git.read_bytes(rel)
            if data is not None:
                return data
        return None

    spec = valuelists.pinned_from(spec, listed)
    if not isinstance(spec.get("statistics"), list):
        return spec
    out = []
    for st in spec["statistics"]:
        if not isinstance(st, dict):
            out.append(st)
            continue
        st = {k: v for k, v in st.items() if k not in ("sha256", "path")}
        found = data = None
        if custom.path_problem(str(st.get("file"))) is None:
            for base in (spec_folder, custom.FOLDER):
                rel = normpath(f"{base}/{st['file']}")
                data = git.read_bytes(rel)
                if data is not None:
                    found = rel
                    break
        st["path"] = found
        st["sha256"] = sha256_hex(data) if data is not None else None
        out.append(st)
    return {**spec, "statistics": out}


def compare_against(project, ref: str, study: str | None = None) -> list[Comparison]:
    """Compare the project's specs (or one study's) with the same files at git revision ``ref``."""
    git = Git(project.root, ref)
    folder = project.rel(project.studies_dir)
    current = {p.stem: p for p in project.spec_files()}
    if study is not None:
        if study not in current:
            raise UserError(f"no spec for study {study!r} under {folder}/")
        ids = [study]
    else:
        then = {n[: -len(".yaml")] for n in git.names(folder) if n.endswith(".yaml")}
        ids = sorted(set(current) | then)
    out = []
    for sid in ids:
        rel = f"{folder}/{sid}.yaml"
        old_label = f"{rel}@{ref}"
        text = git.read(rel)
        if text is None and study is not None:
            raise UserError(f"{old_label}: {rel} does not exist at revision {ref}")
        old = parse_spec_text(text, old_label) if text is not None else None
        new = read_spec_file(current[sid], rel) if sid in current else None
        # a statistic's file is registered content: its digest then and now
        if old is not None:
            old = _pinned_at(git, old, folder)
        if new is not None:
            from prereg.custom import pinned

            new = pinned(new, project.root, current[sid].parent)
        if old is None:
            out.append(Comparison(sid, old_label, rel, [_whole(sid, new, "added")]))
        elif new is None:
            out.append(Comparison(sid, old_label, f"{rel} (absent)", [_whole(sid, old, "removed")]))
        else:
            out.append(compare(old, new, sid, old_label, rel))
    return out


def _whole(study: str, spec: dict, op: str) -> Change:
    if op == "added":
        message = f"Study {q(study)} was added (version {fmt(spec.get('version'))})."
    else:
        message = f"Previously present study {q(study)} was removed."
    return Change(
        rule=f"study_{op}",
        kind=REGISTERED,
        path="",
        pointer="",
        old_pointer=None if op == "added" else "",
        message=message,
        old=spec if op == "removed" else None,
        new=spec if op == "added" else None,
        op=op,
    )


def _counts(comparisons: list[Comparison]) -> tuple[int, int]:
    return (
        sum(c.registered for c in comparisons),
        sum(c.editorial for c in comparisons),
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word} change" + ("" if n == 1 else "s")


def render_text(comparisons: list[Comparison]) -> str:
    lines = []
    for comp in comparisons:
        lines.append(f"{comp.study}: {comp.old_label} -> {comp.new_label}")
        if not comp.changes:
            lines.append("  no semantic changes")
        for c in comp.changes:
            where = c.path or "/"
            if c.pointer and c.pointer != c.path:
                where += f"  ({c.pointer})"
            lines.append(f"  {c.kind:<10}  {where}  [{c.rule}]")
            lines.append(f"      {c.message}{_declared(c)}")
    lines.append(_summary(comparisons))
    return "\n".join(lines) + "\n"


def _declared(c: Change) -> str:
    if c.kind != REGISTERED:
        return ""
    if c.amendment is None:
        return " Not declared by an amendment."
    return f" Declared by amendment {c.amendment}."


def _summary(comparisons: list[Comparison]) -> str:
    reg, edit = _counts(comparisons)
    undeclared = sum(c.undeclared for c in comparisons)
    declared = f" ({reg - undeclared} declared by an amendment, {undeclared} not)" if reg else ""
    return f"{_plural(reg, 'registered')}{declared}, {_plural(edit, 'editorial')}"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """A code span for a table cell (pipes escaped, as GFM tables need even in code)."""
    return "`" + (text or "/").replace("`", "'").replace("|", "\\|") + "`"


def render_markdown(comparisons: list[Comparison]) -> str:
    reg, edit = _counts(comparisons)
    undeclared = sum(c.undeclared for c in comparisons)
    verdict = (
        f"**{_plural(reg, 'registered')}** (changes what the study does or decides; "
        f"{reg - undeclared} declared by an amendment, {undeclared} not), "
        if reg
        else "No registered change, "
    )
    lines = ["## prereg diff", "", f"{verdict}{_plural(edit, 'editorial')}.", ""]
    for comp in comparisons:
        lines.append(f"### {_md(comp.study)}: {_code(comp.old_label)} → {_code(comp.new_label)}")
        lines.append("")
        if not comp.changes:
            lines.extend(["No semantic changes.", ""])
            continue
        lines.extend(["| kind | path | change | rule |", "|---|---|---|---|"])
        for c in comp.changes:
            kind = f"**{c.kind}**" if c.kind == REGISTERED else c.kind
            if c.kind == REGISTERED:
                kind += " (undeclared)" if c.amendment is None else f" (amendment {c.amendment})"
            path = _code(c.path)
            if c.pointer and c.pointer != c.path:
                path += f"<br>{_code(c.pointer)}"
            lines.append(f"| {kind} | {path} | {_md(c.message)} | `{c.rule}` |")
        lines.append("")
    return "\n".join(lines)


def render_json(comparisons: list[Comparison]) -> str:
    reg, edit = _counts(comparisons)
    doc = {
        "registered": reg,
        "undeclared": sum(c.undeclared for c in comparisons),
        "editorial": edit,
        "studies": [
            {
                "study": comp.study,
                "old": comp.old_label,
                "new": comp.new_label,
                "undeclared": comp.undeclared,
                "changes": [c.as_json() for c in comp.changes],
            }
            for comp in comparisons
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
