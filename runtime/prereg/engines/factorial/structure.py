"""Simulated rows with a registered structure: clusters, samples per problem, raters per item.

A scenario with ``clusters`` or ``ratings`` (:func:`prereg.decide.scenarios.structured`) draws
a whole simulated study at once, for ``simulate`` and for diagnose's row path alike:

1. the layout (:class:`Layout`): every registered row of each cell, in registered order, gets
   the values of the fields its scenario lays out (a cluster level's field; a key field that no
   level, factor or split writes) and its row name, the key fields' values as real data carry
   them (item ids shared across arms, a repository per file, a sample index per problem);
2. the draws (:func:`draw_study`): the observed rows, failed first attempts, the outcome from
   the clustered latent (:func:`prereg.decide.scenarios.cluster_latent`; under a calibration
   entry, from its curve at a drawn confidence), ratings and numbers;
3. the records, written by the engine's :class:`~.commands.RecordWriter` as ``simulate``
   writes any row.

The study's row table (:class:`prereg.decide.table.RowTable`) has the registered rows in
registered order, named as the records name them, so ``row_data`` scores the records
(attempts, derived fields, units, metrics) exactly as ``score`` does: the only difference from
``score``'s table is the order of its rows.

Randomness (one generator of its own per study, which diagnose's row path gives a
structured scenario's study; unstructured studies read words of the condition's stream
instead, see :class:`prereg.diagnose.rows.Stream`): the sizes of each laid-out level (levels
in order; a shared level's once, else cell by cell), the observed rows of each cell, the
failed first attempts, the outcome's latents (a normal per cluster of each level, then one per
row; under a ``beta`` level a uniform per cluster, then one per row), each calibration entry's
confidences (rows in table order), the ratings (a uniform per item, then one per row), then
each numeric field's latents and values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prereg.decide import attempts as attempt_policy
from prereg.decide import scenarios as registered
from prereg.decide.table import RowTable, cell_attributes, level_value
from prereg.errors import UserError

from .draws import (
    RecordWriter,
    _contract,
    _has,
    fill_confidences,
    fill_values,
    structure_read,
)


def _codes(values: Sequence[Any]) -> tuple[np.ndarray, int]:
    order: dict[str, int] = {}
    codes = np.fromiter(
        (order.setdefault(repr(v), len(order)) for v in values), dtype=np.int64, count=len(values)
    )
    return codes, len(order)


def applies(config, scenario: Mapping[str, Any]) -> bool:
    """Whether rows under ``scenario`` are laid out here: it registers clusters or ratings, or
    the study has no item manifest and its key names a row by several fields (an item and
    its arm, a problem, decoding and sample): the row's name then comes from the layout."""
    if registered.structured(scenario):
        return True
    return not _has(config, "items") and len(attempt_policy.row_name(config["attempts"])) > 1


class Layout:
    """The laid-out fields of a structured scenario over a study's registered rows (``base``:
    the manifest's table, or the registered rows of a study without one)."""

    def __init__(self, config, scenario: Mapping[str, Any], base: RowTable, manifest: bool):
        self.config, self.scenario, self.base, self.manifest = config, scenario, base, manifest
        obs = _contract(config, "observation")
        self.types = {f["name"]: f.get("type") for f in obs["fields"]}
        items = _contract(config, "items") if _has(config, "items") else None
        self.item_fields = {f["name"] for f in (items or {}).get("fields") or ()}
        self.allowed = {f["name"]: list(f["allowed"]) for f in obs["fields"] if f.get("allowed")}
        self.placed = {
            f["name"]: f for f in obs["fields"] if f.get("factor") or f.get("role") == "split"
        }
        self.levels = registered.cluster_levels(scenario)
        # a level on a factor's field (or the split) has the cell's level as its cluster: the
        # rows of one training run share its latent, whatever else their cells differ in
        self.laid = [
            lv
            for lv in self.levels
            if str(lv["field"]) not in base.columns and str(lv["field"]) not in self.placed
        ]
        self.name = attempt_policy.row_name(config["attempts"])
        self.cell_rows = [np.flatnonzero(base.cell == c) for c in range(len(base.cells))]
        self.order = np.concatenate(self.cell_rows) if self.cell_rows else np.zeros(0, int)
        mine = {str(lv["field"]) for lv in self.laid}
        self.leaves = (
            [] if manifest else [f for f in self.name if f not in self.placed and f not in mine]
        )
        # a leaf names the n-th row of every cell alike when the name also holds a level (the
        # same item under each arm, as the manifest ``items`` writes asks); else per cell
        self.crossed = any(f in self.placed for f in self.name)
        self._fixed: dict[str, np.ndarray] | None = None
        self._last: tuple[tuple, tuple[RowTable, dict[str, list]]] | None = None
        self._coded: tuple[Mapping[str, list], list[tuple]] | None = None

    def _value(self, lv: Mapping[str, Any], cell: Mapping[str, Any], n: int):
        field = str(lv["field"])
        if self.types.get(field) == "integer":
            return n
        return f"{field}-{n}" if lv.get("shared") else f"{cell['id']}-{field}-{n}"

    def _fixed_columns(self) -> dict[str, np.ndarray]:
        """The naming fields whose values do not depend on the draw: a factor's level or the
        split, and a string leaf (by its position in the cell)."""
        base = self.base
        out: dict[str, np.ndarray] = {}
        for f in self.name:
            if f in self.placed:
                per_cell = _placed_per_cell(self.placed[f], base.cells)
                col = np.empty(len(per_cell), dtype=object)
                col[:] = per_cell
                out[f] = col[base.cell]
            elif f in self.leaves and not self._counted(f):
                col = np.empty(len(base), dtype=object)
                apart = self._apart()
                # one width for every cell: the n-th row of a 25-row cell is the n-th of a
                # 200-row cell (a second rater's subset of the first rater's items)
                widest = max((int(r.size) for r in self.cell_rows), default=0)
                for c, rows in enumerate(self.cell_rows):
                    stem = f if self.crossed else base.cells[c]["id"]
                    if self.crossed and apart:
                        # the levels the name does not hold tell apart rows named alike
                        # (math's problem 1 from code's, under one run)
                        levels = base.cells[c]["levels"]
                        stem = "-".join([*(str(levels.get(x)) for x in apart), f])
                    width = len(str(widest if self.crossed else int(rows.size)))
                    col[rows] = [f"{stem}-{p + 1:0{width}d}" for p in range(rows.size)]
                out[f] = col
        return out

    def _apart(self) -> list[str]:
        """The factors the row's name does not hold whose levels differ between cells: a leaf
        numbered alike in every cell must carry them, or the rows of two such cells (two
        benchmarks of one run) would share a name."""
        named = {str(self.placed[f].get("factor")) for f in self.name if f in self.placed}
        out = []
        for c in self.base.cells:
            for factor in c["levels"]:
                if factor in named or factor in out:
                    continue
                if len({str(d["levels"].get(factor)) for d in self.base.cells}) > 1:
                    out.append(factor)
        return out

    def _counted(self, field: str) -> bool:
        """Whether a leaf's value is its position in its innermost cluster: an integer (1, 2,
        ...), or a field with allowed values taking them in turn (a rater per row of an
        item)."""
        return self.types.get(field) == "integer" or field in self.allowed

    def lay_out(self, rng: np.random.Generator) -> tuple[RowTable, dict[str, list]]:
        """(the study's row table, the laid-out fields' values per row in table order).

        The cluster sizes are drawn first (:meth:`_cut`), in the order the module describes;
        the table and fields follow from them alone, so a study drawing the sizes of the study
        before it (every layout of fixed sizes) is given that study's table and fields again
        (the same objects: callers copy what they change)."""
        cuts, runs_of = self._cut(rng)
        key = tuple(cuts)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        got = self._build(cuts, runs_of)
        self._last = (key, got)
        return got

    def _cut(self, rng: np.random.Generator):
        """The sizes drawn, call by call (a tuple each), and per cell each laid-out level's
        clusters as (level, start, stop, number) and the innermost runs."""
        draws: list[tuple[int, ...]] = []
        shared: dict[int, list[int]] = {}
        runs_of = []
        for rows in self.cell_rows:
            # the enclosing runs of the level before (the cell itself for the first)
            runs = [(0, int(rows.size))]
            clusters = []
            for k, lv in enumerate(self.laid):
                inner: list[tuple[int, int]] = []
                count = 0
                if lv.get("shared"):
                    cut = shared.get(k)
                    if cut is None:
                        longest = max(int(r.size) for r in self.cell_rows)
                        cut = shared[k] = registered.cluster_sizes(lv["size"], longest, rng)
                        draws.append(tuple(cut))
                    sizes = iter(cut)
                for start, stop in runs:
                    if not lv.get("shared"):
                        cut = registered.cluster_sizes(lv["size"], stop - start, rng)
                        draws.append(tuple(cut))
                        sizes = iter(cut)
                    at = start
                    while at < stop:
                        end = min(at + next(sizes, stop - at), stop)
                        count += 1
                        clusters.append((k, at, end, count))
                        inner.append((at, end))
                        at = end
                runs = inner
            runs_of.append((clusters, runs))
        return draws, runs_of

    def _build(self, cuts, runs_of) -> tuple[RowTable, dict[str, list]]:
        base = self.base
        n = len(base)
        fields = {str(lv["field"]): np.empty(n, dtype=object) for lv in self.laid}
        counted = [f for f in self.leaves if self._counted(f)]
        leaf_vals = {f: np.zeros(n, dtype=np.int64) for f in counted}
        for c, (clusters, runs) in enumerate(runs_of):
            rows, cell = self.cell_rows[c], base.cells[c]
            for k, at, end, count in clusters:
                lv = self.laid[k]
                fields[str(lv["field"])][rows[at:end]] = self._value(lv, cell, count)
            for field in counted:  # an integer leaf: the position in the innermost cluster
                col = leaf_vals[field]
                for start, stop in runs:
                    col[rows[start:stop]] = np.arange(1, stop - start + 1)
        out = {name: col.tolist() for name, col in fields.items()}
        if self.manifest:
            return base, out
        if self._fixed is None:
            self._fixed = self._fixed_columns()
        # the fields with allowed values counted in the innermost cluster take their
        # combinations in turn, the last in the key fastest (an answer's judges x seeds: j1 s1,
        # j1 s2, j2 s1, ...), so that a cluster of up to their product of rows names each once
        turns = [f for f in self.name if f in leaf_vals and f in self.allowed]
        period = {
            f: math.prod(len(self.allowed[g]) for g in turns[i + 1 :]) for i, f in enumerate(turns)
        }
        cols = []
        for f in self.name:
            if f in out:
                cols.append(out[f])
            elif f in leaf_vals and f in self.allowed:
                values, step = self.allowed[f], period[f]
                cols.append([values[((int(p) - 1) // step) % len(values)] for p in leaf_vals[f]])
            elif f in leaf_vals:
                cols.append(leaf_vals[f].tolist())
            else:
                cols.append(self._fixed[f].tolist())
        ids = list(zip(*cols, strict=True)) if len(cols) > 1 else cols[0]
        table = RowTable(ids=tuple(ids), cell=base.cell, cells=base.cells, columns=base.columns)
        return table, out

    def coded(self, table: RowTable, fields: Mapping[str, list]) -> list[tuple]:
        """Per level, (each row's cluster code, the number of clusters, the correlation): the
        levels :func:`prereg.decide.scenarios.cluster_latent` reads (worked out again only
        for another layout than the last)."""
        if self._coded is not None and self._coded[0] is fields:
            return self._coded[1]
        got = [
            (*_codes(self.cluster_of(table, fields, lv)), float(lv["correlation"]))
            for lv in self.levels
        ]
        self._coded = (fields, got)
        return got

    def cluster_of(self, table: RowTable, fields: Mapping[str, list], lv) -> list:
        """Each row's cluster of a level: its field's value, with the cell for a laid-out
        level of each cell's own (an integer field numbers the clusters of every cell alike)."""
        values = self.field_values(table, fields, str(lv["field"]))
        if any(lv is mine for mine in self.laid) and not lv.get("shared"):
            return list(zip(table.cell.tolist(), values, strict=True))
        return values

    def field_values(self, table: RowTable, fields: Mapping[str, list], name: str) -> list:
        """A field's value per row: laid out, a manifest column, or a naming field of the id."""
        if name in fields:
            return list(fields[name])
        if name in table.columns:
            return list(table.columns[name])
        if name in self.name:
            j = self.name.index(name)
            return [rid[j] if isinstance(rid, tuple) else rid for rid in table.ids]
        if name in self.placed:
            per_cell = _placed_per_cell(self.placed[name], table.cells)
            return [per_cell[c] for c in table.cell.tolist()]
        raise UserError(
            f"scenario {self.scenario['id']}: no value of {name!r} per row (not a laid-out"
            " field, a field of the item manifest or a key field)"
        )


def draw_study(
    config,
    layout: Layout,
    writer,
    rate: np.ndarray | None,
    kept: Sequence[int],
    fail_rate: float,
    rng: np.random.Generator,
) -> tuple[RowTable, list[dict]]:
    """(row table, observation records) of one simulated study under a structured scenario:
    ``rate`` the true chance of the outcome per registered cell (None: no outcome), ``kept``
    the observed rows per cell."""
    from scipy.special import ndtr

    table, fields = layout.lay_out(rng)
    n = len(table)
    observed = np.zeros(n, dtype=bool)
    for c, rows in enumerate(layout.cell_rows):
        keep = int(kept[c])
        if keep >= rows.size:
            observed[rows] = True
        else:
            observed[rng.choice(rows, size=keep, replace=False)] = True
    failed = rng.random(n) < fail_rate
    coded = layout.coded(table, fields)
    right = np.zeros(n, dtype=bool)
    numbers: dict[str, list] = {name: list(vals) for name, vals in fields.items()}
    if rate is not None:
        levels = layout.levels
        if levels and registered.level_distribution(levels[-1]) == "beta":
            codes, count, rho = coded[-1]
            at = rng.random(int(count))[codes]  # one uniform per cluster
            chance = registered.beta_chance(np.asarray(rate, dtype=np.float64)[table.cell], rho, at)
            fill_confidences(numbers, writer, table, chance, rng)  # none: compile refuses it
            right = rng.random(n) < chance
        else:
            u = ndtr(registered.cluster_latent(coded, rng, n))
            chance = np.asarray(rate, dtype=np.float64)[table.cell]
            fill_confidences(numbers, writer, table, chance, rng)  # as DrawnRows
            right = u < chance
    ratings = layout.scenario.get("ratings")
    # a manifest's cluster, item or rater field the observations also carry is written too
    for name in sorted(structure_read(layout.scenario) - set(numbers)):
        if name in layout.types and name in table.columns:
            numbers[name] = list(table.columns[name])
    if ratings is not None:
        codes, items = _codes(layout.field_values(table, fields, str(ratings["item"])))
        raters = (
            layout.field_values(table, fields, str(ratings["rater"]))
            if ratings.get("rater")
            else [None] * n
        )
        cats = list(ratings["categories"])
        given = _given_truth(layout, table, ratings, codes, items)
        prevalence = registered.item_prevalences(
            ratings, codes, items, table.cell, table.cells, str(layout.scenario["id"])
        )
        truth, label = registered.rating_draws(
            ratings, codes, items, raters, rng, given, prevalence
        )
        numbers[str(ratings["field"])] = [cats[int(j)] for j in label]
        if ratings.get("truth"):
            name = str(ratings["truth"])
            values = [cats[int(t)] for t in truth[codes]]
            if name in layout.types:
                numbers[name] = values
            if name in table.columns or name in layout.item_fields:
                table = dataclasses.replace(table, columns={**table.columns, name: values})
    fill_values(
        numbers, writer, table, right, rng,
        (lambda: registered.cluster_latent(coded, rng, n)) if coded else None,
        f"scenario {layout.scenario['id']}",
    )  # fmt: skip
    out: list[dict] = []
    names = list(numbers)
    for i in np.flatnonzero(observed[layout.order]).tolist():
        i = int(layout.order[i])
        cell = table.cells[int(table.cell[i])]
        mine = {k: numbers[k][i] for k in names if numbers[k][i] is not None}
        out.extend(writer.records(table.ids[i], cell, bool(failed[i]), bool(right[i]), 0, mine))
    return table, out


def _given_truth(layout, table: RowTable, ratings, codes: np.ndarray, items: int):
    """Each item's true category (an index of the categories) as the item manifest gives it
    in the ratings' ``truth`` field, or None where it gives none (the rows diagnose lays out,
    whose manifest ``items`` writes without it): every row holds a category, the rows of an
    item one and the same (refused otherwise)."""
    name = ratings.get("truth")
    column = table.columns.get(str(name)) if name else None
    if column is None or all(v is None for v in column):
        return None
    cats = list(ratings["categories"])
    index = {(type(c), c): j for j, c in enumerate(cats)}
    out = np.full(int(items), -1, dtype=np.int64)
    sid = layout.scenario["id"]
    for i, (code, v) in enumerate(zip(codes.tolist(), column, strict=True)):
        j = index.get((type(v), v))
        if j is None:
            raise UserError(
                f"scenario {sid}: row {table.ids[i]!r} has {name} {_json(v)} in the item"
                f" manifest, not one of the ratings' categories {_json(cats)}"
            )
        if out[code] >= 0 and out[code] != j:
            raise UserError(
                f"scenario {sid}: the rows of one item disagree on its {name} in the item"
                f" manifest ({_json(cats[int(out[code])])} and {_json(v)}, row"
                f" {table.ids[i]!r})"
            )
        out[code] = j
    return out


def _json(value: Any) -> str:
    """A value as the records write it (true, not True)."""
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def cell_rates(scenario: Mapping[str, Any], cells: Sequence[Mapping[str, Any]], writer=None):
    """The scenario's rate per cell (None for a scenario without an outcome; NaN for a cell
    whose rows a calibration entry of ``writer`` draws, its curve giving each row's chance)."""
    if scenario.get("outcome") is None:
        return None
    rates = registered.compiled_rates(scenario)
    out = []
    for cell in cells:
        r = registered.rate_for(rates, cell_attributes(cell))
        if r is None and writer is not None and writer.calibration_entry(cell) is not None:
            r = math.nan
        if r is None:
            raise UserError(
                f"simulate: scenario {scenario['id']} gives no rate for cell {cell['id']}"
                " (add a rate without where)"
            )
        out.append(r)
    return np.asarray(out, dtype=np.float64)


def simulate_structured(config, table: RowTable, scenario: Mapping[str, Any], seed: int):
    """The observation records ``simulate`` writes under a structured scenario: one study
    drawn by :func:`draw_study` from a generator seeded by SHA-256 of the scenario and seed."""
    import hashlib

    h = hashlib.sha256(f"{scenario['id']}:{seed}:structure".encode()).digest()
    rng = np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "big")))
    layout = Layout(config, scenario, table, _has(config, "items"))
    share = registered.coverage(scenario)
    kept = [registered.kept_rows(int(r.size), share) for r in layout.cell_rows]
    writer = RecordWriter(config, scenario)
    _, records = draw_study(
        config,
        layout,
        writer,
        cell_rates(scenario, table.cells, writer),
        kept,
        registered.failed_attempt_rate(scenario),
        rng,
    )
    return records


def _placed_per_cell(spec: Mapping[str, Any], cells) -> list:
    """A laid-out field's value in each cell: the cell's split, or its factor's level as the
    field writes it."""
    return [
        c["split"]
        if spec.get("role") == "split"
        else level_value(spec, c["levels"].get(spec["factor"]))
        for c in cells
    ]
