"""The factorial engine's ``simulate``: every row's draws in bulk, its records written in batches.

Each row's draws are a function of the scenario, the seed and the row's name alone (not of the
other rows, the order of the rows or the batch they are drawn in): uniform ``j`` comes from the
row's word ``j`` (:mod:`.rowhash`: the keyed words of the row's id, or of the canonical JSON of
the list of its key values, under the key of ``"<scenario>:<seed>:rows"``; a batch's words are
worked out by numpy at once):

- uniform 0 orders a cell's rows for coverage (the ``floor(coverage · rows)`` rows with the
  smallest, ties by the row's name, are observed);
- uniform 1: the row's first attempt fails when it is below ``failed_attempt_rate``;
- uniform 2: the row's outcome is right when it is below the row's chance (the scenario's rate
  for its cell, or the calibration curve at the row's drawn confidence);
- uniform 3: the row's confidence under a calibration entry;
- uniform 4 + f: the number of the scenario's f-th numeric field (in order of first mention).

A word ``w`` gives the uniform ``(w >> 11) · 2⁻⁵³`` in [0, 1) (compared with a chance) and the
standard normal ``Φ⁻¹((2·(w >> 12) + 1) · 2⁻⁵³)`` (never infinite), from which a number is
made as under a pairing: normal ``mean + sd·z``, lognormal its exponential, uniform
``low + (high − low)·Φ(z)``, then clipped and rounded (:func:`~.commands._finish`).  Under a
pairing the outcome's latent and each number's are ``√ρ·w + √(1 − ρ)·z``, ``w`` the item's
normal for the outcome or the field, from word 0 of the item's text under the key of
``"<scenario>:<seed>:pair:<what>"``.

The records of a batch are encoded by templates: a row's records (one, or a failed attempt and
the one that counts) are encoded canonically once per cell and kind with a marker in each
value that varies (the row's key values, its outcome, its numbers), and every row of that cell
and kind is the template with its own values' JSON in the markers' places (RFC 8785 writes each
value alone, whatever its neighbours), joined a column at a time by numpy over fixed-width
byte strings.  The first and the last row of each group in a batch are checked against
:func:`prereg.files.canonical_bytes_nl` of the records themselves, and a group that does not
match, holds a value the template cannot splice or would take more than ``_TEXT_BYTES`` at a
fixed width (a very long id) is encoded record by record.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from prereg.decide import scenarios as registered
from prereg.decide.table import RowTable, cell_attributes
from prereg.digest import canonical_json
from prereg.errors import UserError
from prereg.files import canonical_bytes_nl

from . import rowhash
from .draws import (
    FIXED_DRAWS,
    RecordWriter,
    _confidence_entry,
    chance_right,
    entry_table,
    item_normals,
    normals,
    numbers_of,
    row_words,
    uniforms,
)
from .lines import Template, float_texts, mark, plain, value_texts

#: Rows drawn and written at a time (the records of one batch are held at once).
BATCH_ROWS = 1 << 16
#: Bytes of a batch's fixed-width texts (names, lines) above which its rows are encoded
#: record by record instead (one very long id would make every row of its batch as wide).
_TEXT_BYTES = 1 << 26


# -- draws ---------------------------------------------------------------------------------------


class Draws:
    """What a batch of rows drew: whether each is observed, its first attempt failed, it is
    right, and its numbers (field → array, None where the row has no number)."""

    def __init__(self, rows: np.ndarray, names: list, observed, failed, right, numbers, ids=None):
        self.rows = rows
        self.names = names
        self.ids = ids  # the names' UTF-8 bytes (zero-padded ``S`` array), or None
        self.observed = observed
        self.failed = failed
        self.right = right
        self.numbers = numbers


class Simulation:
    """One simulated run of a scenario over a table's rows, drawn and encoded in batches."""

    def __init__(self, config, table: RowTable, scenario: Mapping[str, Any], seed: int):
        self.table = table
        self.scenario = scenario
        self.seed = seed
        self.writer = w = RecordWriter(config, scenario)
        self.sid = str(scenario["id"])
        self.key = rowhash.key(self.sid, seed, "rows")
        self.str_ids = set(map(type, table.ids)) <= {str}  # no row named by several fields
        self.coverage = registered.coverage(scenario)
        self.fail_rate = registered.failed_attempt_rate(scenario)
        rates = registered.compiled_rates(scenario)
        if not rates and not registered.draws_outcome(scenario):
            self.rate = np.zeros(len(table.cells))  # numbers only: no row is right
        else:
            self.rate = np.array(
                [
                    math.nan if (r := registered.rate_for(rates, cell_attributes(c))) is None else r
                    for c in table.cells
                ],
                dtype=np.float64,
            )
        self.calibration = np.array(
            [
                next((k for k, e in enumerate(w.calibration) if e is w.calibration_entry(c)), -1)
                for c in table.cells
            ],
            dtype=np.int64,
        )
        self.entries = {name: entry_table(table.cells, entries) for name, entries in w.values}
        self.k = FIXED_DRAWS + len(w.values)
        self._observed = None
        if self.coverage < 1.0:
            self._observed = self.covered()
        self._templates: dict[tuple[int, bool], _Template | None] = {}
        self.attempts = 0
        self.rows = 0

    # -- drawing --------------------------------------------------------------------------------

    def covered(self) -> np.ndarray:
        """The observed rows: in each cell the ``floor(coverage · rows)`` rows with the
        smallest uniform 0 (ties by the row's name)."""
        table = self.table
        n = len(table)
        first = np.empty(n, dtype=np.uint64)
        for s in range(0, n, BATCH_ROWS):
            names = table.ids[s : s + BATCH_ROWS]
            first[s : s + len(names)] = row_words(self.sid, self.seed, names, 1)[:, 0] >> 11
        observed = np.zeros(n, dtype=bool)
        for c in range(len(table.cells)):
            rows = np.flatnonzero(table.cell == c)
            keep = registered.kept_rows(rows.size, self.coverage)
            if keep >= rows.size:
                observed[rows] = True
                continue
            if keep == 0:
                continue
            u = first[rows]
            edge = np.sort(u)[keep - 1]
            observed[rows[u < edge]] = True
            tied = rows[u == edge].tolist()
            need = keep - int(np.count_nonzero(u < edge))
            tied.sort(key=lambda i: table.ids[i])
            observed[tied[:need]] = True
        return observed

    def draw(self, rows: np.ndarray) -> Draws:
        """The draws of the table's rows ``rows`` (indices, in order)."""
        table, w = self.table, self.writer
        if rows.size and rows[-1] - rows[0] + 1 == rows.size:  # a run of rows: sliced
            names = list(table.ids[int(rows[0]) : int(rows[-1]) + 1])
        else:
            names = [table.ids[i] for i in rows.tolist()]
        ids = None
        if self.str_ids:
            values, lens = rowhash.utf8(names)
            width = 8 * -(-int(lens.max()) // 8) if lens.size else 8
            if lens.size * width <= _TEXT_BYTES:  # the names' bytes, for the words and the lines
                ids = rowhash.padded(values, width)
                r = rowhash.keys_of(values, lens, *self.key, ids)
            else:
                r = rowhash.keys_of(values, lens, *self.key)
            words = rowhash.words(r, self.k)
        else:
            words = row_words(self.sid, self.seed, names, self.k)
        cell = table.cell[rows]
        if self._observed is None:
            observed = np.ones(rows.size, dtype=bool)
        else:
            observed = self._observed[rows]
        failed = uniforms(words[:, 1]) < self.fail_rate
        chance = self.rate[cell]
        # a row of a cell without a rate is refused unless a calibration curve draws it
        missing = observed & np.isnan(chance) & (self.calibration[cell] < 0)
        if missing.any():
            c = table.cells[int(cell[np.argmax(missing)])]
            raise UserError(
                f"simulate: scenario {self.sid} gives no rate for cell {c['id']} (add a rate"
                " without where)"
            )
        codes = None
        if w.pairing is None:
            u_out = uniforms(words[:, 2])
        else:
            from scipy.special import ndtr

            rho = float(w.pairing["correlation"])
            column = table.columns[w.pairing["field"]]
            keys = [column[i] for i in rows.tolist()]
            order = dict.fromkeys(keys)
            index = {k: j for j, k in enumerate(order)}
            codes = np.fromiter((index[k] for k in keys), dtype=np.int64, count=len(keys))
            items = list(order)

            def latent(what: str, z: np.ndarray) -> np.ndarray:
                shared = item_normals(self.sid, self.seed, items, what)[codes]
                return math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * z

            u_out = ndtr(latent("outcome", normals(words[:, 2])))
        numbers: dict[str, np.ndarray] = {}
        cal = self.calibration[cell]
        confidence = None
        if (cal >= 0).any():
            confidence = np.full(rows.size, np.nan)
            z = normals(words[:, 3])
            for k, entry in enumerate(w.calibration):
                at = np.flatnonzero(cal == k)
                if at.size:
                    conf = numbers_of(_confidence_entry(entry), z[at], False)
                    confidence[at] = conf
                    chance[at] = chance_right(entry, conf)
        right = u_out < chance
        for f, (name, entries) in enumerate(w.values):
            which = self.entries[name][cell, right.astype(np.int64)]
            lost = observed & (which < 0)
            if lost.any():
                c = table.cells[int(cell[np.argmax(lost)])]
                raise UserError(
                    f"simulate: scenario {self.sid} draws no value of {name!r} for a row of cell"
                    f" {c['id']} (end the field's entries with one without where)"
                )
            z = normals(words[:, FIXED_DRAWS + f])
            if codes is not None:
                z = latent(name, z)
            col = np.zeros(rows.size, dtype=np.int64 if w.integer[name] else np.float64)
            for j, v in enumerate(entries):
                at = np.flatnonzero(which == j)
                if at.size:
                    col[at] = numbers_of(v, z[at], w.integer[name])
            numbers[name] = col
        if confidence is not None:
            for k, entry in enumerate(w.calibration):
                field = str(entry["field"])
                col = numbers.get(field)
                col = np.full(rows.size, np.nan) if col is None else col.astype(np.float64)
                numbers[field] = col
                at = cal == k
                col[at] = confidence[at]
        return Draws(rows, names, observed, failed, right, numbers, ids)

    def row_numbers(self, draws: Draws, j: int) -> dict[str, Any]:
        """The numbers of the ``j``-th row of a batch as Python values."""
        out = {}
        for name, col in draws.numbers.items():
            x = col[j].item()
            if not (isinstance(x, float) and math.isnan(x)):
                out[name] = x
        return out

    def records(self, draws: Draws, j: int) -> list[dict]:
        """The observation records of the ``j``-th row of a batch (as dicts)."""
        i = int(draws.rows[j])
        table = self.table
        return self.writer.records(
            table.ids[i],
            table.cells[int(table.cell[i])],
            bool(draws.failed[j]),
            bool(draws.right[j]),
            self.seed,
            self.row_numbers(draws, j),
        )

    # -- writing --------------------------------------------------------------------------------

    def template(self, cell: int, failed: bool) -> _Template | None:
        key = (cell, failed)
        if key not in self._templates:
            self._templates[key] = _Template.of(self, cell, failed)
        return self._templates[key]

    def encode(self, draws: Draws) -> bytes:
        """The canonical JSON lines of a batch's observed rows, in row order."""
        at = np.flatnonzero(draws.observed)
        if at.size == 0:
            return b""
        table = self.table
        cell = table.cell[draws.rows[at]]
        failed = draws.failed[at] & (self.writer.order is not None)
        group = cell * 2 + failed
        texts = _Texts(self, draws, at)
        done: list[tuple[np.ndarray, Any]] = []
        for g in np.unique(group).tolist():
            sel = np.flatnonzero(group == g)
            tpl = self.template(g // 2, bool(g % 2))
            got = None if tpl is None else tpl.lines(texts, sel)
            if got is not None:
                for s in {0, sel.size - 1}:  # the first and the last row, as the encoder writes
                    if got[s] != self.encoded(draws, int(at[sel[s]])):
                        got = None
                        break
            if got is None:
                got = [self.encoded(draws, int(at[s])) for s in sel.tolist()]
            done.append((sel, got))
        self.attempts += int(at.size + np.count_nonzero(failed))
        self.rows += int(at.size)
        width = max(got.itemsize if isinstance(got, np.ndarray) else 0 for _, got in done)
        if all(isinstance(got, np.ndarray) for _, got in done) and at.size * width <= _TEXT_BYTES:
            # canonical JSON holds no NUL (RFC 8785 escapes it): the padding is all there is
            lines = np.empty(at.size, dtype=f"S{width}")
            for sel, got in done:
                lines[sel] = got
            return lines.tobytes().translate(None, b"\0")
        out = np.empty(at.size, dtype=object)
        for sel, got in done:
            out[sel] = got.tolist() if isinstance(got, np.ndarray) else got
        return b"".join(out.tolist())

    def encoded(self, draws: Draws, j: int) -> bytes:
        """The canonical lines of the ``j``-th row of a batch, record by record."""
        return b"".join(canonical_bytes_nl(r) for r in self.records(draws, j))

    def chunks(self, progress=None, batch: int = BATCH_ROWS) -> Iterator[bytes]:
        """The output's bytes, batch by batch (``progress`` counts the rows written)."""
        n = len(self.table)
        for s in range(0, n, batch):
            rows = np.arange(s, min(n, s + batch), dtype=np.int64)
            yield self.encode(self.draw(rows))
            if progress is not None and s + batch < n:
                progress.update(s + batch, label="drawn")
        if progress is not None:
            progress.update(n, label="written")


class _Texts:
    """The JSON texts of a batch's varying values, per slot, for the observed rows ``at``:
    each slot's texts as a zero-padded ``S`` array of UTF-8 bytes, with ``raw`` telling
    plain strings the template quotes from JSON texts."""

    def __init__(self, sim: Simulation, draws: Draws, at: np.ndarray):
        self.sim, self.draws, self.at = sim, draws, at
        self._cache: dict[Any, tuple[np.ndarray, bool] | None] = {}

    def of(self, slot: tuple) -> tuple[np.ndarray, bool] | None:
        """(texts, raw) of a slot's values, or None for a number the batch did not draw or a
        text that cannot be written (the rows are then encoded record by record)."""
        if slot not in self._cache:
            try:
                self._cache[slot] = self._texts(slot)
            except (TypeError, ValueError):  # e.g. a lone surrogate: the encoder words it
                self._cache[slot] = None
        return self._cache[slot]

    def _texts(self, slot: tuple) -> tuple[np.ndarray, bool] | None:
        draws, at = self.draws, self.at
        if slot[0] == "id":
            names = draws.names
            if at.size < len(names):
                names = [names[j] for j in at.tolist()]
            if slot[1] is None and draws.ids is not None and plain("".join(names)):
                ids = draws.ids
                return (ids if at.size == ids.size else ids[at]), True
            texts, raw = value_texts(names if slot[1] is None else [r[slot[1]] for r in names])
            return _bytes(texts), raw
        if slot[0] == "outcome":
            wrong, right = (canonical_json(v) for v in self.sim.writer.written)
            return np.where(draws.right[at], right, wrong), False
        col = draws.numbers.get(slot[1])
        if col is None:
            return None
        col = col[at]
        if col.dtype == np.int64:
            return col.astype("S"), False
        return _bytes(float_texts(col)), False


def _bytes(texts: list[str]) -> np.ndarray:
    """Texts as a zero-padded ``S`` array of their UTF-8 bytes (ValueError when a text is not
    UTF-8, a lone surrogate, or when the array would take more than its share of memory)."""
    values, lens = rowhash.utf8(texts, strict=True)
    width = int(lens.max()) if lens.size else 1
    if width * lens.size > _TEXT_BYTES:
        raise ValueError("texts too long to be held at a fixed width")
    return rowhash.padded(values, width)


class _Template:
    """The lines of one cell's rows of one kind (first attempt failed or not): a
    :class:`~.lines.Template` with a slot per varying value."""

    def __init__(self, template: Template, slots: list[tuple]):
        self.template = template
        self.slots = slots  # ("id", k | None), ("outcome",), ("number", field)

    @classmethod
    def of(cls, sim: Simulation, cell: int, failed: bool) -> _Template | None:
        w = sim.writer
        slots: list[tuple] = []

        def marked(slot: tuple) -> str:
            slots.append(slot)
            return mark(len(slots) - 1)

        sample = sim.table.ids[int(np.flatnonzero(sim.table.cell == cell)[0])]
        if isinstance(sample, tuple):
            rid: Any = tuple(marked(("id", k)) for k in range(len(sample)))
        else:
            rid = marked(("id", None))
        outcome = marked(("outcome",))
        numbers = {name: marked(("number", name)) for name, _ in w.values}
        if sim.calibration[cell] >= 0:
            field = str(w.calibration[int(sim.calibration[cell])]["field"])
            numbers.setdefault(field, marked(("number", field)))
        c = sim.table.cells[cell]
        blank_rid = tuple("" for _ in rid) if isinstance(rid, tuple) else ""
        tpl = Template.of(
            w.shaped(rid, c, failed, outcome, numbers),
            len(slots),
            w.shaped(blank_rid, c, failed, "", dict.fromkeys(numbers, "")),
        )
        return None if tpl is None else cls(tpl, slots)

    def lines(self, texts: _Texts, sel: np.ndarray) -> np.ndarray | None:
        """Each selected row's lines (an ``S`` array), or None where a value cannot be
        spliced or the lines would take more than their share of memory."""
        cols, raw = [], []
        for slot in self.slots:
            got = texts.of(slot)
            if got is None:
                return None
            cols.append(got[0])
            raw.append(got[1])
        width = self.template.width([c.itemsize for c in cols], raw)
        if width * sel.size > _TEXT_BYTES:
            return None
        return self.template.joined([c if c.size == sel.size else c[sel] for c in cols], raw)


def simulated_records(config, table: RowTable, scenario, seed: int) -> list[dict]:
    """The observation records of one simulated run, as dicts (the rows' records in row
    order; what :meth:`Simulation.chunks` writes, record by record)."""
    sim = Simulation(config, table, scenario, seed)
    out: list[dict] = []
    n = len(table)
    for s in range(0, n, BATCH_ROWS):
        d = sim.draw(np.arange(s, min(n, s + BATCH_ROWS), dtype=np.int64))
        for j in np.flatnonzero(d.observed).tolist():
            out.extend(sim.records(d, j))
    return out
