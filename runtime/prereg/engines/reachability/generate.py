"""Corpus generation: names, targets, cue-class equalization, shuffle, rendering, gold, records.

:func:`generate` turns (configuration, seed) into a :class:`Corpus`: every row in allocation
order with its payload, latent world, gold label and row record.  All randomness comes from
per-row streams (:mod:`.draws`) keyed by split, family id and the row's index in its cell, so
a row does not depend on any other row.

Draw order inside a row: (1) entity names; (2) equalized layouts only: one target per cue
class, in the configured class order; (3) day; (4) quantity; (5) equalized layouts only: the
Fisher–Yates shuffle of the fact lines.
"""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from prereg.digest import PREFIX, digest
from prereg.errors import UserError

from .canon import canonical_record_json
from .config import Cell, EngineConfig
from .draws import Stream, fill, fisher_yates

_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# a string's JSON text as json.dumps(ensure_ascii=False) writes it, which is also its RFC 8785
# text (see .canon)
_str_json = json.encoder.encode_basestring


@dataclass(slots=True)
class Row:
    """One generated row (allocation order ``index``; ``i`` = index within its cell)."""

    index: int
    i: int
    cell: Cell
    id: str
    family_id: str
    payload: str
    label: str
    world: dict[str, Any]
    fact_lines: list[str]  # in payload order, without the rule line
    chain_lines: list[str]  # the chain's own lines: links in chain order, then relay states
    fact_order: list[int]  # fact_lines[p] is line fact_order[p] of chain lines + decoy lines
    rule_line: str
    subject: str
    destination: str
    record: dict[str, Any] = field(default_factory=dict)
    record_line: str = ""
    world_json: str = ""  # the world's canonical JSON (see pipeline.gold_members_of)


@dataclass
class Corpus:
    seed: str
    seed_digest: str
    seed_id: str
    rows: list[Row]  # allocation order


def seed_digest(seed: str) -> str:
    return digest(seed)


def _to_base(n: int, base: int) -> str:
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, base)
        out.append(_B36[r])
    return "".join(reversed(out))


class _ZeroPadded:
    """``d -> str(d).zfill(width)`` as a sequence (for digit counts too large to tabulate)."""

    def __init__(self, width: int):
        self.width = width

    def __getitem__(self, d: int) -> str:
        return str(d).zfill(self.width)


class _FormatCall:
    """``template.format(a=..., b=...)`` behind the ``%`` operator of a line plan (for a
    template the fast form of :func:`_line_format` cannot express)."""

    __slots__ = ("template", "keys")

    def __init__(self, template: str, keys: tuple[str, ...]):
        self.template = template
        self.keys = keys

    def __mod__(self, values):
        if len(self.keys) == 1:
            values = (values,)
        return self.template.format(**dict(zip(self.keys, values, strict=True)))


def _line_format(template: str, keys: tuple[str, ...]):
    """(format, fields): ``format % values`` equals ``template.format(**{key: value})`` for
    ``values`` the names of ``fields`` in order (a tuple, or the one name alone).

    ``format`` is a printf-style string when every replacement field of ``template`` is one
    of ``keys`` with no conversion or format spec (``{a}`` and ``format(s, "")`` are ``s`` for
    a string); otherwise a :class:`_FormatCall` of ``template`` with ``keys`` (fields ``keys``).
    """
    parts = []
    fields = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        parsed = None
    plain = parsed is not None
    for literal, name, spec, conversion in parsed or ():
        parts.append(literal.replace("%", "%%"))
        if name is None:
            continue
        if name not in keys or spec or conversion:
            plain = False
            break
        parts.append("%s")
        fields.append(name)
    if not plain or not fields:
        return _FormatCall(template, keys), keys
    return "".join(parts), tuple(fields)


@dataclass
class _CellPlan:
    """What every row of a cell shares (computed once per cell)."""

    cell: Cell
    family_id: str
    message: str  # row draw message with {index} and {counter} left open
    rend: _Renderer
    failure: Any
    span: tuple[int, int] | None
    rule_line: str
    target_bounds: list[int]
    target_base: list[int]
    # the draw message's head around {index} (None: build it per row from ``message``)
    head_parts: tuple[bytes, bytes] | None = None
    tail: bytes = b""


class _Renderer:
    """Pool-specific line renderers, built once per pool."""

    def __init__(self, ec: EngineConfig, pool):
        w = dict(pool.words)
        self.words = w
        self.cue = {}
        for q in ec.cue_classes:
            # Fill the pool words now; keep {a} and {b} for the entities.
            self.cue[q.name] = q.template.format(a="{a}", b="{b}", **w)
        self.rules = {rid: r.template.format(**w) for rid, r in ec.rules.items()}
        self.framing = pool.framing
        # per cue class: (format, fields) for a pair line (a, b) and for a state line (a)
        self.pair_fmt = {n: _line_format(t, ("a", "b")) for n, t in self.cue.items()}
        self.state_fmt = {n: _line_format(t, ("a",)) for n, t in self.cue.items()}


class Generator:
    """Generates the rows of one configuration (reusable across seeds)."""

    def __init__(self, ec: EngineConfig):
        self.ec = ec
        self.renderers = {p.id: _Renderer(ec, p) for p in ec.pools}
        nn = ec.neutral_names
        self.consonants = nn["consonants"]
        self.vowels = nn["vowels"]
        self.n_digits = nn["digits"]
        self.digit_bound = 10**self.n_digits
        self.digit_strings = (
            [str(d).zfill(self.n_digits) for d in range(self.digit_bound)]
            if self.digit_bound <= 100_000
            else _ZeroPadded(self.n_digits)
        )
        self.prefix_len = nn["distinctPrefixLength"]
        rn = ec.role_names
        self.role_letters = list(rn["letters"])
        self.role_bound = rn["bound"]
        self.role_base = rn["base"]
        self.role_width = rn["width"]
        self.role_pad = rn["pad"]
        self.cue_index = {q.name: k for k, q in enumerate(ec.cue_classes)}
        self.requests = [dict(r) for r in ec.requests]
        # the JSON texts of the parts of every row record that do not depend on the row
        self._requests_canon = canonical_record_json(self.requests).decode("utf-8")
        self._requests_line = json.dumps(self.requests, ensure_ascii=False, separators=(",", ":"))
        self._generator_json = _str_json(ec.generator_id)
        # line plans (see _chain_plan and _decoy_plan), kept across rows and seeds
        self._chain_plans: dict = {}
        self._decoy_plans: dict = {}

    # -- names ---------------------------------------------------------------------------
    def _neutral_names(self, s: Stream, count: int) -> list[str]:
        cons, vow, digits, pl = self.consonants, self.vowels, self.digit_strings, self.prefix_len
        bounds = (len(cons), len(vow), self.digit_bound)
        names: list[str] = []
        seen: set[str] = set()
        need = count
        while need:
            # the draws of ``need`` names at once (the same draws, in the same order, as one
            # name at a time); a name whose prefix is taken is drawn again afterwards
            vals = s.draws(bounds * need)
            for k in range(0, len(vals), 3):
                name = cons[vals[k]] + vow[vals[k + 1]] + digits[vals[k + 2]]
                prefix = name[:pl]
                if prefix in seen:
                    continue
                seen.add(prefix)
                names.append(name)
            need = count - len(names)
        return names

    def _role_names(self, s: Stream) -> list[str]:
        out = []
        for letter, v in zip(
            self.role_letters, s.draws([self.role_bound] * len(self.role_letters)), strict=True
        ):
            out.append(letter + _to_base(v, self.role_base).rjust(self.role_width, self.role_pad))
        return out

    # -- one row -------------------------------------------------------------------------
    def _plan(self, cell: Cell, seed_id: str) -> _CellPlan:
        ec = self.ec
        family_id = ec.family_id.format(
            seedId=seed_id,
            splitShort=cell.split.short,
            poolLetter=cell.pool.letter,
            hops=cell.hops,
            outcomeShort=cell.outcome.short,
            layoutShort=cell.layout.short,
        )
        failure = cell.failure
        span = None
        if failure is not None:
            count = cell.hops + 1 if failure.kind == "link" else cell.hops
            span = failure.positions.resolve(count)
        rend = self.renderers[cell.pool.id]
        message = fill(
            ec.row_draw_message, split=cell.split.word, familyId=family_id, index="{index}"
        )
        head_parts = None
        tail = b""
        pieces = message.split("{index}")
        if len(pieces) == 2 and "{counter}" not in pieces[0]:
            mid, sep, rest = pieces[1].partition("{counter}")
            if sep and "{counter}" not in rest:
                head_parts = (pieces[0].encode("utf-8"), mid.encode("utf-8"))
                tail = rest.encode("utf-8")
        return _CellPlan(
            cell=cell,
            family_id=family_id,
            message=message,
            head_parts=head_parts,
            tail=tail,
            rend=rend,
            failure=failure,
            span=span,
            rule_line=rend.rules[cell.layout.rule],
            target_bounds=[q.target_draw for q in ec.cue_classes],
            target_base=[q.target_hops * cell.hops + q.target_plus for q in ec.cue_classes],
        )

    def row(self, cell: Cell, i: int, index: int, seed: str, seed_id: str) -> Row:
        return self._row(self._plan(cell, seed_id), i, index, seed)

    def _pair_entry(self, rend: _Renderer, cls: str, x: int, y: int):
        fmt, fields = rend.pair_fmt[cls]
        idx = {"a": x, "b": y}
        return fmt, itemgetter(*(idx[f] for f in fields))

    def _state_entry(self, rend: _Renderer, cls: str, x: int):
        fmt, fields = rend.state_fmt[cls]
        return fmt, itemgetter(*(x for _ in fields))

    def _chain_steps(self, plan: _CellPlan, fpos) -> list[tuple[str, tuple[int, ...]]]:
        """The chain's own lines of a row in order, as (cue class, chain positions): a pair
        line ``(j, j + 1)`` per link, then a state line ``(r + 1,)`` per relay, the failure's
        class (or no line, for an absence) at its position."""
        ec = self.ec
        hops = plan.cell.hops
        failure = plan.failure
        link_fail = failure is not None and failure.kind == "link"
        relay_fail = failure is not None and failure.kind == "relay"
        steps: list[tuple[str, tuple[int, ...]]] = []
        for j in range(hops + 1):
            cls = ec.link_class
            if link_fail and j == fpos:
                cls = failure.line_class
                if cls is None:
                    continue  # absence: no line
            steps.append((cls, (j, j + 1)))
        for r in range(hops):
            cls = ec.relay_class
            if relay_fail and r == fpos:
                cls = failure.line_class
            steps.append((cls, (r + 1,)))
        return steps

    @staticmethod
    def _class_counts(steps) -> dict[str, int]:
        counts: dict[str, int] = {}
        for cls, _ in steps:
            counts[cls] = counts.get(cls, 0) + 1
        return counts

    def _chain_plan(self, plan: _CellPlan, fpos):
        """The chain's own lines of a row as ``(format, get)`` pairs (the line is ``format %
        get(names)``) and their count per cue class: a function of the pool, the hops, the
        failure and its position, so kept across rows and seeds."""
        key = (id(plan.rend), plan.cell.hops, plan.failure, fpos)
        got = self._chain_plans.get(key)
        if got is not None:
            return got
        rend = plan.rend
        steps = self._chain_steps(plan, fpos)
        entries = [
            self._pair_entry(rend, cls, *at) if len(at) == 2 else self._state_entry(rend, cls, *at)
            for cls, at in steps
        ]
        got = (entries, self._class_counts(steps))
        self._chain_plans[key] = got
        return got

    def _decoy_plan(self, plan: _CellPlan, counts: dict[str, int], targets, n_names: int):
        """The decoy lines of an equalized row as ``(format, get)`` pairs (names = chain, then
        decoys): a function of the pool, the chain length, the decoy count and each cue
        class's need (target less the chain's own lines), so kept across rows and seeds;
        None when a decoy pair lies outside the decoys (then rendered row by row)."""
        ec = self.ec
        cell = plan.cell
        needs = []
        for q in ec.cue_classes:
            need = targets[q.name] - counts.get(q.name, 0)
            if need < 0:
                raise UserError(
                    f"config.cueClasses ({q.name}): target {targets[q.name]} is below the"
                    f" chain's own {counts[q.name]} line(s) in cell {cell.key}"
                )
            needs.append(need)
        n_chain = cell.hops + 2
        key = (id(plan.rend), n_chain, n_names, tuple(needs))
        if key in self._decoy_plans:
            return self._decoy_plans[key]
        rend = plan.rend
        pairs = ec.decoy_pairs
        nd = n_names - n_chain
        pc = sc = 0
        entries = []
        for q, need in zip(ec.cue_classes, needs, strict=True):
            for _ in range(need):
                if q.kind == "pair":
                    if pc >= len(pairs):
                        raise UserError(
                            f"config.decoys.pairs: {len(pairs)} pairs are too few for cell"
                            f" {cell.key}"
                        )
                    x, y = pairs[pc]
                    pc += 1
                    if not (0 <= x < nd and 0 <= y < nd):
                        entries = None  # a pair outside the decoys: rendered row by row
                        break
                    entries.append(self._pair_entry(rend, q.name, n_chain + x, n_chain + y))
                else:
                    entries.append(self._state_entry(rend, q.name, n_chain + sc % nd))
                    sc += 1
            if entries is None:
                break
        self._decoy_plans[key] = entries
        return entries

    def _row(self, plan: _CellPlan, i: int, index: int, seed: str) -> Row:
        ec = self.ec
        cell = plan.cell
        hops = cell.hops
        layout = cell.layout
        rend = plan.rend
        if plan.head_parts is not None:
            s = Stream(plan.head_parts[0] + b"%d" % i + plan.head_parts[1], plan.tail)
        else:
            head, _, tail = plan.message.replace("{index}", str(i)).partition("{counter}")
            s = Stream(head.encode("utf-8"), tail.encode("utf-8"))
        n_chain = hops + 2
        # (1) names
        if layout.names == "neutral":
            names = self._neutral_names(s, n_chain + ec.decoy_entities)
        else:
            names = self._role_names(s)
        chain = names[:n_chain]
        decoys = names[n_chain:] if layout.equalize else []
        # (2) targets, (3) day, (4) quantity
        targets: dict[str, int] = {}
        if layout.equalize:
            *vals, day, quantity = s.draws(plan.target_bounds + [ec.day[0], ec.quantity[0]])
            for q, base, v in zip(ec.cue_classes, plan.target_base, vals, strict=True):
                targets[q.name] = base + v
        else:
            day, quantity = s.draws((ec.day[0], ec.quantity[0]))
        day += ec.day[1]
        quantity += ec.quantity[1]

        failure = plan.failure
        fpos = None
        if failure is not None:
            lo, hi = plan.span
            fpos = lo + i % (hi - lo + 1)
        entries, counts = self._chain_plan(plan, fpos)
        chain_lines = [fmt % get(names) for fmt, get in entries]
        if not layout.equalize:
            lines = list(chain_lines)
        else:
            decoy = self._decoy_plan(plan, counts, targets, len(names))
            if decoy is not None:
                lines = chain_lines + [fmt % get(names) for fmt, get in decoy]
            else:
                chain_lines, lines = self._lines(plan, chain, decoys, fpos, targets)
        order = list(range(len(lines)))
        if layout.equalize:
            fisher_yates(order, s)  # (5) shuffle
            lines = [lines[k] for k in order]

        header = ec.header_template.format(framing=rend.framing, day=day, quantity=quantity)
        question = ec.question_template.format(subject=chain[0], destination=chain[-1])
        payload = "\n".join([header, ec.facts_marker, *lines, plan.rule_line, question])

        world = {
            "pool": cell.pool.id,
            "hops": hops,
            "outcome": cell.outcome.word,
            "layout": layout.word,
            "rule": layout.rule,
            "chain": chain,
            "decoys": decoys,
            "failurePosition": fpos,
            "failureKind": failure.kind if failure is not None else None,
            "targets": targets,
            "day": day,
            "quantity": quantity,
        }
        label = ec.label_no if failure is not None else ec.label_yes
        row_id = hashlib.sha256(
            ec.record_id_message.format(seed=seed, rowIndex=index).encode("utf-8")
        ).hexdigest()
        return Row(
            index=index,
            i=i,
            cell=cell,
            id=row_id,
            family_id=plan.family_id,
            payload=payload,
            label=label,
            world=world,
            fact_lines=lines,
            chain_lines=chain_lines,
            fact_order=order,
            rule_line=plan.rule_line,
            subject=chain[0],
            destination=chain[-1],
        )

    def _lines(self, plan: _CellPlan, chain, decoys, fpos, targets):
        """(chain lines, fact lines before the shuffle), rendered line by line (the form of
        the line plans, for a row whose decoy pairs the plan cannot index)."""
        ec = self.ec
        cell = plan.cell
        cue = plan.rend.cue
        steps = self._chain_steps(plan, fpos)
        chain_lines = [
            cue[cls].format(a=chain[at[0]], b=chain[at[1]])
            if len(at) == 2
            else cue[cls].format(a=chain[at[0]])
            for cls, at in steps
        ]
        chain_counts = self._class_counts(steps)
        lines = list(chain_lines)
        if cell.layout.equalize:
            pairs = ec.decoy_pairs
            nd = len(decoys)
            pc = sc = 0
            for q in ec.cue_classes:
                need = targets[q.name] - chain_counts.get(q.name, 0)
                if need < 0:
                    raise UserError(
                        f"config.cueClasses ({q.name}): target {targets[q.name]} is below the"
                        f" chain's own {chain_counts[q.name]} line(s) in cell {cell.key}"
                    )
                t = cue[q.name]
                for _ in range(need):
                    if q.kind == "pair":
                        if pc >= len(pairs):
                            raise UserError(
                                f"config.decoys.pairs: {len(pairs)} pairs are too few for cell"
                                f" {cell.key}"
                            )
                        x, y = pairs[pc]
                        pc += 1
                        lines.append(t.format(a=decoys[x], b=decoys[y]))
                    else:
                        lines.append(t.format(a=decoys[sc % nd]))
                        sc += 1
        return chain_lines, lines

    def record(self, row: Row, seed: str) -> None:
        """Fill ``row.record`` and ``row.record_line`` (the corpus.jsonl line, with newline).

        The line is ``json.dumps`` of the record (insertion order, compact, ``ensure_ascii``
        off) and ``outputDigest`` the canonical digest of the record without its provenance;
        both are joined from the values' JSON texts, each value encoded once (the tests
        compare them with both encoders on whole corpora)."""
        ec = self.ec
        cell = row.cell
        prov_seed = ec.provenance_seed.format(seed=seed, rowIndex=row.index)
        rec = {
            "id": row.id,
            "familyId": row.family_id,
            "split": cell.split.word,
            "slice": cell.key,
            "input": {"payload": row.payload},
            "requests": [dict(r) for r in self.requests],
            "localOutcome": None,
        }
        enc = _str_json
        j_id, j_family, j_payload = enc(row.id), enc(row.family_id), enc(row.payload)
        j_split, j_slice = enc(cell.split.word), enc(cell.key)
        # the canonical members in key order: familyId, id, input, localOutcome, requests,
        # slice, split
        canon = (
            f'{{"familyId":{j_family},"id":{j_id},"input":{{"payload":{j_payload}}},'
            f'"localOutcome":null,"requests":{self._requests_canon},"slice":{j_slice},'
            f'"split":{j_split}}}'
        )
        out_digest = PREFIX + hashlib.sha256(canon.encode("utf-8")).hexdigest()
        rec["provenance"] = {
            "generatorId": ec.generator_id,
            "seed": prov_seed,
            "outputDigest": out_digest,
        }
        row.record = rec
        row.record_line = (
            f'{{"id":{j_id},"familyId":{j_family},"split":{j_split},"slice":{j_slice},'
            f'"input":{{"payload":{j_payload}}},"requests":{self._requests_line},'
            f'"localOutcome":null,"provenance":{{"generatorId":{self._generator_json},'
            f'"seed":{enc(prov_seed)},"outputDigest":{enc(out_digest)}}}}}\n'
        )

    def corpus(self, seed: str, *, records: bool = True) -> Corpus:
        ec = self.ec
        sd = seed_digest(seed)
        seed_id = sd.split(":", 1)[1][: ec.seed_id_hex_chars]
        rows: list[Row] = []
        index = 0
        for cell in ec.cells:
            plan = self._plan(cell, seed_id)
            for i in range(cell.rows):
                row = self._row(plan, i, index, seed)
                if records:
                    self.record(row, seed)
                rows.append(row)
                index += 1
        return Corpus(seed=seed, seed_digest=sd, seed_id=seed_id, rows=rows)


def gold_object(ec: EngineConfig, rows: list[Row]) -> dict[str, Any]:
    """The gold object ``{schemaVersion, labels, worlds}`` (rows in allocation order)."""
    return {
        "schemaVersion": ec.schema_versions["gold"],
        "labels": {r.id: r.label for r in rows},
        "worlds": {r.id: r.world for r in rows},
    }


def generate(ec: EngineConfig, seed: str, *, records: bool = True) -> Corpus:
    return Generator(ec).corpus(seed, records=records)
