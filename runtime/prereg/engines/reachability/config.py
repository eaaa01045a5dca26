"""Reading and checking the engine configuration (see the package docstring for its keys).

The configuration is plain JSON-like data compiled from a study's spec.  :func:`load_config`
checks the shape (naming the JSON path of each problem) and builds the frozen objects the
generator, oracle and audit use.  Nothing here knows a particular study's words.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prereg.errors import UserError

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
POOL_WORDS = ("link", "base", "contrastive", "nonConnective", "enabled", "disabled")


@dataclass(frozen=True)
class Pool:
    id: str
    letter: str
    framing: str
    words: Mapping[str, str]


@dataclass(frozen=True)
class Positions:
    """Failure positions cycled by the row index i: ``first + i mod (last - first + 1)``.

    ``first`` and ``last`` count like Python indexes over the chain's links (0..hops) or
    relays (0..hops-1): -1 is the last one.
    """

    first: int
    last: int

    def resolve(self, count: int) -> tuple[int, int]:
        lo = self.first if self.first >= 0 else count + self.first
        hi = self.last if self.last >= 0 else count + self.last
        return lo, hi


@dataclass(frozen=True)
class Failure:
    kind: str  # "link" or "relay"
    line_class: str | None  # cue class of the broken line; None: the line is absent
    positions: Positions


@dataclass(frozen=True)
class Outcome:
    word: str
    short: str
    failure: Failure | None


@dataclass(frozen=True)
class Layout:
    word: str
    short: str
    rule: str
    names: str  # "neutral" or "role-letters"
    equalize: bool
    audit_gated: bool
    position_overrides: Mapping[str, Positions]


@dataclass(frozen=True)
class Split:
    word: str
    short: str
    role: str


@dataclass(frozen=True)
class Cell:
    split: Split
    pool: Pool
    hops: int
    outcome: Outcome
    layout: Layout
    rows: int
    key: str  # the slice, e.g. pool-a_h1_yes_equalized

    @property
    def failure(self) -> Failure | None:
        f = self.outcome.failure
        if f is None:
            return None
        pos = self.layout.position_overrides.get(self.outcome.word)
        if pos is not None:
            return Failure(f.kind, f.line_class, pos)
        return f


@dataclass(frozen=True)
class CueClass:
    name: str
    kind: str  # "pair" or "state"
    template: str
    target_hops: int
    target_plus: int
    target_draw: int


@dataclass(frozen=True)
class Rule:
    id: str
    semantics: str
    template: str


@dataclass(frozen=True)
class EngineConfig:
    raw: Mapping[str, Any]
    generator_id: str
    schema_versions: Mapping[str, str]
    label_yes: str
    label_no: str
    seed_id_hex_chars: int
    row_draw_message: str
    dispatch_draw_message: str
    record_id_message: str
    family_id: str
    cell_key: str
    requests: tuple[Mapping[str, str], ...]
    provenance_seed: str
    pools: tuple[Pool, ...]
    splits: tuple[Split, ...]
    outcomes: tuple[Outcome, ...]
    layouts: tuple[Layout, ...]
    cells: tuple[Cell, ...]
    link_class: str
    relay_class: str
    cue_classes: tuple[CueClass, ...]
    decoy_entities: int
    decoy_pairs: tuple[tuple[int, int], ...]
    neutral_names: Mapping[str, Any]
    role_names: Mapping[str, Any]
    day: tuple[int, int]
    quantity: tuple[int, int]
    header_template: str
    facts_marker: str
    question_template: str
    rules: Mapping[str, Rule]
    first_splits: tuple[str, ...]
    permuted_splits: tuple[str, ...]
    audit: Mapping[str, Any]
    seed_policy: Mapping[str, Any]
    budget: Mapping[str, Any]
    calibration: Mapping[str, Any]
    dev_review: tuple[tuple[str, int], ...]
    cue_by_name: Mapping[str, CueClass] = field(default_factory=dict)

    def split(self, word: str) -> Split:
        for s in self.splits:
            if s.word == word:
                return s
        raise KeyError(word)


class _Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def get(self, obj: Any, key: str, path: str, kind: type | tuple[type, ...], *, optional=False):
        if not isinstance(obj, Mapping):
            self.problems.append(f"{path}: expected an object")
            return None
        if key not in obj:
            if not optional:
                self.problems.append(f"{path}.{key}: required key is missing")
            return None
        v = obj[key]
        if kind is int and isinstance(v, bool):
            self.problems.append(f"{path}.{key}: expected an integer, got a boolean")
            return None
        if kind is float:
            kind = (int, float)
        if not isinstance(v, kind):
            self.problems.append(
                f"{path}.{key}: expected {_kind_name(kind)}, got {type(v).__name__}"
            )
            return None
        return v


def _kind_name(kind) -> str:
    names = {str: "a string", int: "an integer", bool: "a boolean", list: "a list"}
    if isinstance(kind, tuple):
        if set(kind) == {int, float}:
            return "a number"
        return " or ".join(names.get(k, k.__name__) for k in kind)
    if kind in (dict, Mapping):
        return "an object"
    return names.get(kind, kind.__name__)


def placeholders(template: str) -> set[str]:
    """The named ``{placeholders}`` of a template string."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _check_template(c: _Checker, template: Any, path: str, allowed: set[str], required: set[str]):
    if not isinstance(template, str):
        return
    try:
        names = placeholders(template)
    except ValueError as exc:
        c.problems.append(f"{path}: malformed template ({exc})")
        return
    extra = names - allowed
    if extra:
        c.problems.append(
            f"{path}: unknown placeholder(s) {sorted(extra)}; allowed: {sorted(allowed)}"
        )
    missing = required - names
    if missing:
        c.problems.append(f"{path}: template must contain {sorted(missing)}")


def _positions(c: _Checker, obj: Any, path: str) -> Positions | None:
    first = c.get(obj, "first", path, int)
    last = c.get(obj, "last", path, int)
    if first is None or last is None:
        return None
    return Positions(first, last)


def load_config(cfg: Mapping[str, Any]) -> EngineConfig:
    """Check ``cfg`` and build the :class:`EngineConfig`; raise one UserError listing problems."""
    c = _Checker()
    P = "config"
    gen_id = c.get(cfg, "generatorId", P, str)
    sv = c.get(cfg, "schemaVersions", P, Mapping) or {}
    for k in ("gold", "audit", "devReview"):
        c.get(sv, k, f"{P}.schemaVersions", str)
    labels = c.get(cfg, "labels", P, Mapping) or {}
    yes = c.get(labels, "yes", f"{P}.labels", str)
    no = c.get(labels, "no", f"{P}.labels", str)
    if yes is not None and yes == no:
        c.problems.append(f"{P}.labels: yes and no must be different words (both {yes!r})")

    h = c.get(cfg, "hashing", P, Mapping) or {}
    hp = f"{P}.hashing"
    seed_hex = c.get(h, "seedIdHexChars", hp, int)
    row_msg = c.get(h, "rowDrawMessage", hp, str)
    _check_template(
        c,
        row_msg,
        f"{hp}.rowDrawMessage",
        {"split", "familyId", "index", "counter"},
        {"familyId", "index", "counter"},
    )
    disp_msg = c.get(h, "dispatchDrawMessage", hp, str)
    _check_template(
        c, disp_msg, f"{hp}.dispatchDrawMessage", {"seedDigest", "counter"}, {"counter"}
    )
    rid_msg = c.get(h, "recordIdMessage", hp, str)
    _check_template(c, rid_msg, f"{hp}.recordIdMessage", {"seed", "rowIndex"}, {"seed", "rowIndex"})
    fam = c.get(h, "familyId", hp, str)
    _check_template(
        c,
        fam,
        f"{hp}.familyId",
        {"seedId", "splitShort", "poolLetter", "hops", "outcomeShort", "layoutShort"},
        set(),
    )
    ckey = c.get(h, "cellKey", hp, str)
    _check_template(c, ckey, f"{hp}.cellKey", {"pool", "hops", "outcome", "layout"}, set())

    rec = c.get(cfg, "record", P, Mapping) or {}
    reqs = c.get(rec, "requests", f"{P}.record", list) or []
    requests = []
    for j, r in enumerate(reqs):
        rp = f"{P}.record.requests[{j}]"
        vals = [c.get(r, k, rp, str) for k in ("id", "arm", "definitionId")]
        if None not in vals:
            requests.append({"id": vals[0], "arm": vals[1], "definitionId": vals[2]})
    prov_seed = c.get(rec, "provenanceSeed", f"{P}.record", str)
    _check_template(c, prov_seed, f"{P}.record.provenanceSeed", {"seed", "rowIndex"}, set())

    # pools
    pools: list[Pool] = []
    for j, p in enumerate(c.get(cfg, "pools", P, list) or []):
        pp = f"{P}.pools[{j}]"
        pid = c.get(p, "id", pp, str)
        letter = c.get(p, "letter", pp, str)
        framing = c.get(p, "framing", pp, str)
        words = c.get(p, "words", pp, Mapping) or {}
        wd = {}
        for w in POOL_WORDS:
            v = c.get(words, w, f"{pp}.words", str)
            if v is not None:
                if not v or any(ch.isspace() or ch in "{}" for ch in v):
                    c.problems.append(f"{pp}.words.{w}: must be one non-empty word without braces")
                wd[w] = v
        if None not in (pid, letter, framing) and len(wd) == len(POOL_WORDS):
            pools.append(Pool(pid, letter, framing, wd))
    _unique(c, [p.id for p in pools], f"{P}.pools", "id")
    framings = [p.framing for p in pools]
    for a in range(len(framings)):
        for b in range(len(framings)):
            if a != b and framings[b].startswith(framings[a]):
                c.problems.append(
                    f"{P}.pools: framing of {pools[a].id} is a prefix of {pools[b].id}'s;"
                    " the text oracle could not tell the pools apart"
                )

    splits = []
    for j, s in enumerate(c.get(cfg, "splits", P, list) or []):
        sp = f"{P}.splits[{j}]"
        vals = [c.get(s, k, sp, str) for k in ("word", "short", "role")]
        if None not in vals:
            splits.append(Split(*vals))
    _unique(c, [s.word for s in splits], f"{P}.splits", "word")

    cue_classes = []
    for j, q in enumerate(c.get(cfg, "cueClasses", P, list) or []):
        qp = f"{P}.cueClasses[{j}]"
        name = c.get(q, "name", qp, str)
        kind = c.get(q, "kind", qp, str)
        tmpl = c.get(q, "template", qp, str)
        if kind not in (None, "pair", "state"):
            c.problems.append(f"{qp}.kind: must be 'pair' or 'state', got {kind!r}")
        need = {"a", "b"} if kind == "pair" else {"a"}
        _check_template(c, tmpl, f"{qp}.template", need | set(POOL_WORDS), need)
        tg = c.get(q, "target", qp, Mapping) or {}
        th = c.get(tg, "hops", f"{qp}.target", int)
        tpl = c.get(tg, "plus", f"{qp}.target", int)
        td = c.get(tg, "draw", f"{qp}.target", int)
        if td is not None and td < 1:
            c.problems.append(f"{qp}.target.draw: must be at least 1")
        if name is not None and not _IDENT.match(name):
            c.problems.append(f"{qp}.name: must be an ASCII identifier ({_IDENT.pattern})")
        if None not in (name, kind, tmpl, th, tpl, td):
            cue_classes.append(CueClass(name, kind, tmpl, th, tpl, td))
    _unique(c, [q.name for q in cue_classes], f"{P}.cueClasses", "name")
    cue_by_name = {q.name: q for q in cue_classes}

    ch = c.get(cfg, "chain", P, Mapping) or {}
    link_class = c.get(ch, "linkClass", f"{P}.chain", str)
    relay_class = c.get(ch, "relayClass", f"{P}.chain", str)
    if link_class is not None and cue_by_name.get(link_class, None) is None:
        c.problems.append(f"{P}.chain.linkClass: unknown cue class {link_class!r}")
    elif link_class is not None and cue_by_name[link_class].kind != "pair":
        c.problems.append(f"{P}.chain.linkClass: must name a pair class")
    if relay_class is not None and cue_by_name.get(relay_class, None) is None:
        c.problems.append(f"{P}.chain.relayClass: unknown cue class {relay_class!r}")
    elif relay_class is not None and cue_by_name[relay_class].kind != "state":
        c.problems.append(f"{P}.chain.relayClass: must name a state class")

    outcomes = []
    for j, o in enumerate(c.get(cfg, "outcomes", P, list) or []):
        op = f"{P}.outcomes[{j}]"
        word = c.get(o, "word", op, str)
        short = c.get(o, "short", op, str)
        if isinstance(o, Mapping) and "failure" not in o:
            c.problems.append(f"{op}.failure: required key is missing (null for no failure)")
        f = o.get("failure") if isinstance(o, Mapping) else None
        failure = None
        if f is not None:
            fp = f"{op}.failure"
            kind = c.get(f, "kind", fp, str)
            if kind not in (None, "link", "relay"):
                c.problems.append(f"{fp}.kind: must be 'link' or 'relay', got {kind!r}")
            lc = f.get("lineClass") if isinstance(f, Mapping) else None
            if isinstance(f, Mapping) and "lineClass" not in f:
                c.problems.append(f"{fp}.lineClass: required key is missing (null: no line)")
            if lc is not None and lc not in cue_by_name:
                c.problems.append(f"{fp}.lineClass: unknown cue class {lc!r}")
            elif lc is not None and kind == "link" and cue_by_name[lc].kind != "pair":
                c.problems.append(f"{fp}.lineClass: a broken link needs a pair class")
            elif lc is not None and kind == "relay" and cue_by_name[lc].kind != "state":
                c.problems.append(f"{fp}.lineClass: a relay failure needs a state class")
            if lc is None and kind == "relay":
                c.problems.append(f"{fp}.lineClass: a relay failure needs a state line")
            pos = _positions(c, c.get(f, "positions", fp, Mapping), f"{fp}.positions")
            if kind is not None and pos is not None:
                failure = Failure(kind, lc, pos)
        if word is not None and short is not None:
            outcomes.append(Outcome(word, short, failure))
    _unique(c, [o.word for o in outcomes], f"{P}.outcomes", "word")

    rules = {}
    for j, r in enumerate(c.get(cfg, "rules", P, list) or []):
        rp = f"{P}.rules[{j}]"
        rid = c.get(r, "id", rp, str)
        sem = c.get(r, "semantics", rp, str)
        tmpl = c.get(r, "template", rp, str)
        if sem not in (None, "enabled-path", "one-enabled-relay"):
            c.problems.append(
                f"{rp}.semantics: must be 'enabled-path' or 'one-enabled-relay', got {sem!r}"
            )
        _check_template(c, tmpl, f"{rp}.template", set(POOL_WORDS), set())
        if None not in (rid, sem, tmpl):
            rules[rid] = Rule(rid, sem, tmpl)

    layouts = []
    for j, lo in enumerate(c.get(cfg, "layouts", P, list) or []):
        lp = f"{P}.layouts[{j}]"
        word = c.get(lo, "word", lp, str)
        short = c.get(lo, "short", lp, str)
        rule = c.get(lo, "rule", lp, str)
        if rule is not None and rule not in rules:
            c.problems.append(f"{lp}.rule: unknown rule {rule!r}")
        names = c.get(lo, "names", lp, str)
        if names not in (None, "neutral", "role-letters"):
            c.problems.append(f"{lp}.names: must be 'neutral' or 'role-letters', got {names!r}")
        eq = c.get(lo, "equalize", lp, bool)
        gated = c.get(lo, "auditGated", lp, bool)
        overrides = {}
        for k, ov in enumerate(c.get(lo, "positionOverrides", lp, list) or []):
            op = f"{lp}.positionOverrides[{k}]"
            ow = c.get(ov, "outcome", op, str)
            pos = _positions(c, c.get(ov, "positions", op, Mapping), f"{op}.positions")
            if ow is not None and pos is not None:
                overrides[ow] = pos
        if None not in (word, short, rule, names, eq, gated):
            layouts.append(Layout(word, short, rule, names, eq, gated, overrides))
    _unique(c, [lo.word for lo in layouts], f"{P}.layouts", "word")

    pool_by = {p.id: p for p in pools}
    split_by = {s.word: s for s in splits}
    out_by = {o.word: o for o in outcomes}
    lay_by = {lo.word: lo for lo in layouts}
    for lo in layouts:
        for ow in lo.position_overrides:
            if ow not in out_by:
                c.problems.append(f"{P}.layouts ({lo.word}): override for unknown outcome {ow!r}")

    nn = c.get(cfg, "names", P, Mapping) or {}
    neutral = c.get(nn, "neutral", f"{P}.names", Mapping) or {}
    for k, kind in (
        ("consonants", str),
        ("vowels", str),
        ("digits", int),
        ("distinctPrefixLength", int),
    ):
        c.get(neutral, k, f"{P}.names.neutral", kind)
    role = c.get(nn, "roleLetters", f"{P}.names", Mapping) or {}
    for k, kind in (("letters", list), ("bound", int), ("base", int), ("width", int), ("pad", str)):
        c.get(role, k, f"{P}.names.roleLetters", kind)
    if isinstance(role.get("base"), int) and not 2 <= role["base"] <= 36:
        c.problems.append(f"{P}.names.roleLetters.base: must be between 2 and 36")

    dec = c.get(cfg, "decoys", P, Mapping) or {}
    n_decoys = c.get(dec, "entities", f"{P}.decoys", int)
    pairs = []
    for j, pr in enumerate(c.get(dec, "pairs", f"{P}.decoys", list) or []):
        if (
            not isinstance(pr, list)
            or len(pr) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in pr)
        ):
            c.problems.append(f"{P}.decoys.pairs[{j}]: expected a pair of integers")
            continue
        if n_decoys is not None and not all(0 <= x < n_decoys for x in pr):
            c.problems.append(f"{P}.decoys.pairs[{j}]: index outside 0..{n_decoys - 1}")
        if pr[0] == pr[1]:
            c.problems.append(f"{P}.decoys.pairs[{j}]: a decoy line needs two different entities")
        pairs.append((pr[0], pr[1]))
    if len(set(pairs)) != len(pairs):
        c.problems.append(f"{P}.decoys.pairs: pairs must be distinct")

    hd = c.get(cfg, "header", P, Mapping) or {}
    day = c.get(hd, "day", f"{P}.header", Mapping) or {}
    qty = c.get(hd, "quantity", f"{P}.header", Mapping) or {}
    day_t = (
        c.get(day, "bound", f"{P}.header.day", int),
        c.get(day, "plus", f"{P}.header.day", int),
    )
    qty_t = (
        c.get(qty, "bound", f"{P}.header.quantity", int),
        c.get(qty, "plus", f"{P}.header.quantity", int),
    )

    tp = c.get(cfg, "templates", P, Mapping) or {}
    header_t = c.get(tp, "header", f"{P}.templates", str)
    _check_template(
        c, header_t, f"{P}.templates.header", {"framing", "day", "quantity"}, {"framing"}
    )
    if isinstance(header_t, str) and not header_t.startswith("{framing}"):
        c.problems.append(f"{P}.templates.header: must start with {{framing}}")
    facts_marker = c.get(tp, "factsMarker", f"{P}.templates", str)
    question_t = c.get(tp, "question", f"{P}.templates", str)
    _check_template(
        c,
        question_t,
        f"{P}.templates.question",
        {"subject", "destination"},
        {"subject", "destination"},
    )

    cells = []
    for j, ce in enumerate(c.get(cfg, "cells", P, list) or []):
        cp = f"{P}.cells[{j}]"
        sw = c.get(ce, "split", cp, str)
        ss = c.get(ce, "splitShort", cp, str)
        pw = c.get(ce, "pool", cp, str)
        pl = c.get(ce, "poolLetter", cp, str)
        hops = c.get(ce, "hops", cp, int)
        ow = c.get(ce, "outcome", cp, str)
        osh = c.get(ce, "outcomeShort", cp, str)
        lw = c.get(ce, "layout", cp, str)
        lsh = c.get(ce, "layoutShort", cp, str)
        rows = c.get(ce, "rows", cp, int)
        ok = True
        for val, table, what in (
            (sw, split_by, "split"),
            (pw, pool_by, "pool"),
            (ow, out_by, "outcome"),
            (lw, lay_by, "layout"),
        ):
            if val is not None and val not in table:
                c.problems.append(f"{cp}.{what}: unknown {what} {val!r}")
                ok = False
        if not ok or None in (sw, ss, pw, pl, hops, ow, osh, lw, lsh, rows):
            continue
        for given, want, what in (
            (ss, split_by[sw].short, "splitShort"),
            (pl, pool_by[pw].letter, "poolLetter"),
            (osh, out_by[ow].short, "outcomeShort"),
            (lsh, lay_by[lw].short, "layoutShort"),
        ):
            if given != want:
                c.problems.append(
                    f"{cp}.{what}: {given!r} disagrees with the definition ({want!r})"
                )
        if hops < 1:
            c.problems.append(f"{cp}.hops: must be at least 1")
            continue
        if rows < 0:
            c.problems.append(f"{cp}.rows: must not be negative")
        layout = lay_by[lw]
        cell = Cell(
            split_by[sw],
            pool_by[pw],
            hops,
            out_by[ow],
            layout,
            rows,
            ckey.format(pool=pw, hops=hops, outcome=ow, layout=lw) if ckey else "",
        )
        f = cell.failure
        if f is not None:
            count = hops + 1 if f.kind == "link" else hops
            lo_, hi_ = f.positions.resolve(count)
            if not (0 <= lo_ <= hi_ < count):
                c.problems.append(
                    f"{cp}: failure positions {f.positions.first}..{f.positions.last} are empty"
                    f" or outside the {count} {f.kind}s at hops {hops}"
                )
        if layout.names == "role-letters":
            letters = role.get("letters") or []
            if len(letters) != hops + 2:
                c.problems.append(
                    f"{cp}: layout {lw} names the chain with {len(letters)} role letters,"
                    f" which needs hops = {len(letters) - 2}"
                )
        if rules.get(layout.rule) and rules[layout.rule].semantics == "one-enabled-relay":
            if hops != 1:
                c.problems.append(f"{cp}: rule {layout.rule!r} is defined for one relay only")
        cells.append(cell)
    _unique(c, [(ce.split.word, ce.key) for ce in cells], f"{P}.cells", "split and cell key")
    _distinct_streams(c, cells, fam, row_msg, P)

    dp = c.get(cfg, "dispatch", P, Mapping) or {}
    first_splits = tuple(c.get(dp, "firstSplits", f"{P}.dispatch", list) or ())
    permuted = tuple(c.get(dp, "permutedSplits", f"{P}.dispatch", list) or ())
    for s in first_splits + permuted:
        if s not in split_by:
            c.problems.append(f"{P}.dispatch: unknown split {s!r}")
    if sorted(first_splits + permuted) != sorted(split_by):
        c.problems.append(f"{P}.dispatch: every split must appear exactly once")

    audit = c.get(cfg, "audit", P, Mapping) or {}
    ap = f"{P}.audit"
    for k, kind in (
        ("split", str),
        ("groupKey", str),
        ("limit", float),
        ("folds", int),
        ("decimals", int),
        ("entityPattern", str),
        ("entityToken", str),
        ("mentionSeparators", str),
        ("lineClasses", list),
        ("otherLineClassCode", int),
        ("lineClassRules", list),
        ("logistic", Mapping),
        ("positiveControl", Mapping),
    ):
        c.get(audit, k, ap, kind)
    if isinstance(audit.get("entityPattern"), str):
        try:
            re.compile(audit["entityPattern"])
        except re.error as exc:
            c.problems.append(f"{ap}.entityPattern: not a valid regular expression ({exc})")
    if audit.get("mentionSeparators") == "":
        c.problems.append(f"{ap}.mentionSeparators: needs at least one character")
    if isinstance(audit.get("split"), str) and audit["split"] not in split_by:
        c.problems.append(f"{ap}.split: unknown split {audit['split']!r}")
    _check_template(c, audit.get("groupKey"), f"{ap}.groupKey", {"layout", "pool", "hops"}, set())
    lc_names = []
    for j, lc in enumerate(audit.get("lineClasses") or []):
        c.get(lc, "name", f"{ap}.lineClasses[{j}]", str)
        c.get(lc, "code", f"{ap}.lineClasses[{j}]", int)
        if isinstance(lc, Mapping):
            lc_names.append(lc.get("name"))
    for j, r in enumerate(audit.get("lineClassRules") or []):
        rp = f"{ap}.lineClassRules[{j}]"
        cls = c.get(r, "class", rp, str)
        if cls is not None and cls not in lc_names:
            c.problems.append(f"{rp}.class: unknown line class {cls!r}")
        if isinstance(r, Mapping):
            keys = [k for k in ("contains", "endsWith") if k in r]
            if len(keys) != 1:
                c.problems.append(f"{rp}: needs exactly one of 'contains' or 'endsWith'")
            else:
                c.get(r, keys[0], rp, str)
                _check_template(c, r[keys[0]], f"{rp}.{keys[0]}", set(POOL_WORDS), set())
    lg = audit.get("logistic") or {}
    for k, kind in (("steps", int), ("learningRate", float), ("l2", float)):
        c.get(lg, k, f"{ap}.logistic", kind)
    pc = audit.get("positiveControl") or {}
    pcm = c.get(pc, "hashMessage", f"{ap}.positiveControl", str)
    _check_template(c, pcm, f"{ap}.positiveControl.hashMessage", {"rowId", "k"}, {"rowId", "k"})

    sp = c.get(cfg, "seedPolicy", P, Mapping) or {}
    for k, kind in (
        ("pattern", str),
        ("publicSeeds", list),
        ("publicPrefixes", list),
        ("privateMinHexRun", int),
        ("maxLength", int),
        ("minDistinctHex", int),
        ("maxCountingRun", int),
    ):
        c.get(sp, k, f"{P}.seedPolicy", kind)
    if isinstance(sp.get("pattern"), str):
        try:
            re.compile(sp["pattern"])
        except re.error as exc:
            c.problems.append(f"{P}.seedPolicy.pattern: not a valid regular expression ({exc})")

    bd = c.get(cfg, "budget", P, Mapping) or {}
    bp = f"{P}.budget"
    st = c.get(bd, "study", bp, Mapping) or {}
    for k in ("calls", "tokens", "usd"):
        c.get(st, k, f"{bp}.study", float)
    fl = c.get(bd, "floorsUsd", bp, Mapping) or {}
    for k in ("study", "portfolio"):
        c.get(fl, k, f"{bp}.floorsUsd", float)
    for k in (
        "sharedCapUsd",
        "retriesPerRequest",
        "perRequestTokenBound",
        "reservationFloorUsdPerMillionTokens",
    ):
        c.get(bd, k, bp, float)
    cal = c.get(cfg, "calibration", P, Mapping) or {}
    c.get(cal, "effectiveAt", f"{P}.calibration", str)
    c.get(cal, "validDays", f"{P}.calibration", float)
    c.get(cal, "sessionMinutes", f"{P}.calibration", float)

    dr = c.get(cfg, "devReview", P, Mapping) or {}
    dev_review = []
    for j, item in enumerate(c.get(dr, "perOutcome", f"{P}.devReview", list) or []):
        ip = f"{P}.devReview.perOutcome[{j}]"
        ow = c.get(item, "outcome", ip, str)
        n = c.get(item, "items", ip, int)
        if ow is not None and ow not in out_by:
            c.problems.append(f"{ip}.outcome: unknown outcome {ow!r}")
        if ow is not None and n is not None:
            dev_review.append((ow, n))

    if c.problems:
        raise UserError(
            f"engine configuration is invalid ({len(c.problems)} problem(s))",
            problems=c.problems,
        )
    return EngineConfig(
        raw=cfg,
        generator_id=gen_id,
        schema_versions=dict(sv),
        label_yes=yes,
        label_no=no,
        seed_id_hex_chars=seed_hex,
        row_draw_message=row_msg,
        dispatch_draw_message=disp_msg,
        record_id_message=rid_msg,
        family_id=fam,
        cell_key=ckey,
        requests=tuple(requests),
        provenance_seed=prov_seed,
        pools=tuple(pools),
        splits=tuple(splits),
        outcomes=tuple(outcomes),
        layouts=tuple(layouts),
        cells=tuple(cells),
        link_class=link_class,
        relay_class=relay_class,
        cue_classes=tuple(cue_classes),
        decoy_entities=n_decoys,
        decoy_pairs=tuple(pairs),
        neutral_names=dict(neutral),
        role_names=dict(role),
        day=day_t,
        quantity=qty_t,
        header_template=header_t,
        facts_marker=facts_marker,
        question_template=question_t,
        rules=rules,
        first_splits=first_splits,
        permuted_splits=permuted,
        audit=audit,
        seed_policy=sp,
        budget=bd,
        calibration=cal,
        dev_review=tuple(dev_review),
        cue_by_name=cue_by_name,
    )


def _distinct_streams(c: _Checker, cells: list[Cell], fam: Any, row_msg: Any, P: str) -> None:
    """Every cell draws its rows from its own stream: the row draw message (with its family id)
    must tell every two cells apart, whatever the seed."""
    if not isinstance(fam, str) or not isinstance(row_msg, str):
        return
    seen: dict[str, Cell] = {}
    for j, ce in enumerate(cells):
        try:
            family = fam.format(
                seedId="{seedId}",
                splitShort=ce.split.short,
                poolLetter=ce.pool.letter,
                hops=ce.hops,
                outcomeShort=ce.outcome.short,
                layoutShort=ce.layout.short,
            )
            stream = row_msg.format(
                split=ce.split.word, familyId=family, index="{index}", counter="{counter}"
            )
        except (KeyError, IndexError, ValueError):
            return  # a malformed template, reported where it is checked
        if stream in seen:
            c.problems.append(
                f"{P}.cells[{j}]: draws the same rows as the {seen[stream].split.word} cell"
                f" {seen[stream].key} (stream {stream!r}): hashing.familyId and"
                " hashing.rowDrawMessage must tell every two cells apart"
            )
        else:
            seen[stream] = ce


def _unique(c: _Checker, values: list, path: str, what: str) -> None:
    seen = set()
    for v in values:
        if v in seen:
            c.problems.append(f"{path}: duplicate {what} {v!r}")
        seen.add(v)


# -- the compiled spec's generic config → this engine's config ---------------------------------

# Spec constants copied unchanged into the engine config: engine key → constant id.
CONSTANT_KEYS = {
    "generatorId": "generator-id",
    "schemaVersions": "schema-versions",
    "labels": "labels",
    "hashing": "hashing",
    "record": "record",
    "chain": "chain",
    "cueClasses": "cue-classes",
    "decoys": "decoys",
    "names": "names",
    "header": "header",
    "templates": "templates",
    "rules": "rules",
    "dispatch": "dispatch",
    "audit": "audit",
    "calibration": "calibration",
    "devReview": "dev-review",
}
# Budget items (spec section ``budget``) read by the engine: engine path → budget item id.
BUDGET_KEYS = {
    ("study", "calls"): "calls",
    ("study", "tokens"): "tokens",
    ("study", "usd"): "usd",
    ("sharedCapUsd",): "shared-cap-usd",
    ("floorsUsd", "study"): "floor-study-usd",
    ("floorsUsd", "portfolio"): "floor-portfolio-usd",
    ("retriesPerRequest",): "retries-per-request",
    ("perRequestTokenBound",): "per-request-token-bound",
    ("outputAllowanceTokens",): "output-allowance",
    ("providerOverheadTokens",): "provider-overhead",
    ("timeoutSeconds",): "timeout",
    ("dispatchIntervalSeconds",): "dispatch-interval",
}
FACTOR_ROLES = ("pool", "hops", "outcome", "layout")
# The pool word role (kebab-case in the spec) that is not a connective or state word.  Any role
# beyond it and the engine's words (POOL_WORDS, camelCase) is the study's own note on the pool:
# it is carried in the pool's words and read by nothing.
FRAMING_ROLE = "framing"


def _camel(role: str) -> str:
    head, *rest = role.split("-")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _int_or_keep(v: Any) -> Any:
    """A budget value as the spec's YAML gave it, integral floats as integers (16000.0 → 16000)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _plain(v: Any) -> Any:
    """Plain JSON data: mappings become dicts, tuples (generated constants) lists."""
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def config_from_spec(config: Mapping[str, Any]) -> dict[str, Any]:
    """Map the compiled spec's generic config (``ctx.config``, ENGINE_CONFIG) onto this engine's
    config shape (the package docstring lists both).

    Sources: constants (see ``CONSTANT_KEYS``; ``factor-roles``, ``split-roles``,
    ``seed-syntax``, ``outcomes``, ``layouts``, ``reservation-floor-usd-per-million-tokens``),
    the spec sections ``splits`` (word = id, short = code), ``factors`` (level codes are the short
    codes of pools, outcomes and layouts), ``pools`` (the framing role; the other word roles
    become camelCase engine words), ``cells``, ``seed_policy`` and ``budget``.  A
    missing source raises one :class:`UserError` listing every problem; the shape of the values
    is then checked by :func:`load_config`.
    """
    problems: list[str] = []
    if not isinstance(config, Mapping) or not isinstance(config.get("constants"), Mapping):
        raise UserError("engine configuration: expected the compiled spec config with constants")
    config = _plain(config)
    consts = config["constants"]

    def const(cid: str, kind: type | tuple[type, ...] = object) -> Any:
        if cid not in consts:
            problems.append(f"spec constants: constant {cid!r} is missing")
            return None
        v = consts[cid]
        if not isinstance(v, kind):
            problems.append(f"spec constant {cid!r}: expected {_kind_name(kind)}")
            return None
        return v

    out: dict[str, Any] = {key: const(cid) for key, cid in CONSTANT_KEYS.items()}

    roles = const("factor-roles", Mapping) or {}
    factors = {f.get("id"): f for f in config.get("factors") or () if isinstance(f, Mapping)}
    codes: dict[str, dict[str, str]] = {}
    for role in FACTOR_ROLES:
        fid = roles.get(role)
        if fid not in factors:
            problems.append(
                f"spec constant 'factor-roles': {role!r} must name a declared factor, got {fid!r}"
            )
            continue
        codes[role] = {str(lv["id"]): lv.get("code") for lv in factors[fid].get("levels") or ()}

    split_roles = const("split-roles", Mapping) or {}
    splits = []
    for s in config.get("splits") or ():
        if s["id"] not in split_roles:
            problems.append(f"spec constant 'split-roles': split {s['id']!r} has no role")
        splits.append({"word": s["id"], "short": s["code"], "role": split_roles.get(s["id"])})
    out["splits"] = splits

    pool_codes = codes.get("pool", {})
    pools = []
    for p in config.get("pools") or ():
        words = dict(p.get("words") or {})
        level = str(p.get("level") or "")
        fid, _, lid = level.partition(":")
        if fid != roles.get("pool") or lid not in pool_codes:
            problems.append(
                f"spec pools: pool {p['id']!r} must name a level of factor"
                f" {roles.get('pool')!r} (got {level!r})"
            )
        if FRAMING_ROLE not in words:
            problems.append(f"spec pools: pool {p['id']!r} has no word of role {FRAMING_ROLE!r}")
        pools.append(
            {
                "id": p["id"],
                "letter": pool_codes.get(lid),
                "framing": words.pop(FRAMING_ROLE, None),
                "words": {_camel(role): text for role, text in words.items()},
            }
        )
    out["pools"] = pools

    for key, role in (("outcomes", "outcome"), ("layouts", "layout")):
        items = []
        for j, item in enumerate(const(key, list) or ()):
            item = dict(item) if isinstance(item, Mapping) else {}
            word = item.get("word")
            if word not in codes.get(role, {}):
                problems.append(
                    f"spec constant {key!r}[{j}]: {word!r} is not a level of factor"
                    f" {roles.get(role)!r}"
                )
            item["short"] = codes.get(role, {}).get(word)
            items.append(item)
        out[key] = items

    split_codes = {s["id"]: s["code"] for s in config.get("splits") or ()}
    cells = []
    for ce in config.get("cells") or ():
        lv = ce.get("levels") or {}
        got = {role: lv.get(roles.get(role)) for role in FACTOR_ROLES}
        if None in got.values():
            problems.append(f"spec cells: cell {ce['id']!r} lacks a level of {FACTOR_ROLES}")
            continue
        try:
            hops = int(got["hops"])
        except ValueError:
            problems.append(f"spec cells: cell {ce['id']!r}: hops level {got['hops']!r}")
            continue
        cells.append(
            {
                "split": ce["split"],
                "splitShort": split_codes.get(ce["split"]),
                "pool": got["pool"],
                "poolLetter": pool_codes.get(got["pool"]),
                "hops": hops,
                "outcome": got["outcome"],
                "outcomeShort": codes.get("outcome", {}).get(got["outcome"]),
                "layout": got["layout"],
                "layoutShort": codes.get("layout", {}).get(got["layout"]),
                "rows": ce["rows"],
            }
        )
    out["cells"] = cells

    sp = config.get("seed_policy") or {}
    syntax = const("seed-syntax", Mapping) or {}
    out["seedPolicy"] = {
        "pattern": sp.get("pattern"),
        "syntax": syntax.get("wording"),
        "publicSeeds": list(sp.get("public_seeds") or ()),
        "publicPrefixes": list(sp.get("public_prefixes") or ()),
        "privateMinHexRun": sp.get("private_min_hex_run"),
        "maxLength": syntax.get("maxLength"),
        "minDistinctHex": syntax.get("minDistinctHex"),
        "maxCountingRun": syntax.get("maxCountingRun"),
    }

    budget_items = config.get("budget") or {}
    budget: dict[str, Any] = {}
    for path, bid in BUDGET_KEYS.items():
        if bid not in budget_items:
            problems.append(f"spec budget: item {bid!r} is missing")
            continue
        node = budget
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = _int_or_keep(budget_items[bid])
    budget["reservationFloorUsdPerMillionTokens"] = const(
        "reservation-floor-usd-per-million-tokens", (int, float)
    )
    out["budget"] = budget

    if problems:
        raise UserError(
            f"engine configuration: the compiled spec lacks what the reachability engine reads"
            f" ({len(problems)} problem(s)); fix the spec and recompile",
            problems=problems,
        )
    return out


_CACHE: list[tuple[Any, EngineConfig]] = []


def study_config(config: Mapping[str, Any] | EngineConfig) -> EngineConfig:
    """The checked :class:`EngineConfig` of a compiled spec config (an EngineConfig passes).

    The last result is cached per config object, so every handler may call it cheaply.
    """
    if isinstance(config, EngineConfig):
        return config
    if _CACHE and _CACHE[0][0] is config:
        return _CACHE[0][1]
    ec = load_config(config_from_spec(config))
    _CACHE[:] = [(config, ec)]
    return ec
