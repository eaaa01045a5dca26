"""Commands of the factorial engine: ``handler(ctx, args) -> int`` (see the package docstring)."""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from prereg import splits
from prereg.decide import attempts as attempt_policy
from prereg.decide import scenarios as registered
from prereg.decide.decision import in_words as decision_words
from prereg.decide.evaluate import (
    Selections,
    cell_counts,
    cell_figures,
    decide_all,
    registered_results,
)
from prereg.decide.explain import explanation_lines, verdict_explanations
from prereg.decide.fields import derive
from prereg.decide.metrics import row_metrics
from prereg.decide.report import (
    analysis_rows,
    arm_text,
    contrast_rows,
    decision_lines,
    estimate_rows,
    family_rows,
    full,
    gate_rows,
    pairs_text,
    size_text,
)
from prereg.decide.table import RowTable, cell_attributes, from_items, level_value
from prereg.digest import PREFIX, file_sha256
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import canonical_bytes_nl, refuse_existing, write_files_new, write_new
from prereg.records import read_records, rows_problems
from prereg.stats.rounding import round_half_up

SCORE_SCHEMA = "prereg-factorial-score/v1"
OBSERVATIONS_SCHEMA = "prereg-factorial-observations/v1"


def _out(text: str = "", args: argparse.Namespace | None = None) -> None:
    """A human line: through the command's console (none under --json), else to stdout."""
    from prereg.console import console_of

    if args is not None:
        console_of(args).line(text)
    else:
        sys.stdout.write(text + "\n")


# -- the compiled study -------------------------------------------------------------------------


def _module(ctx: StudyContext, args: argparse.Namespace) -> ModuleType:
    from prereg.compiler.project import find_project
    from prereg.study import load_generated

    project = find_project(str(args.project_root))
    return load_generated(project, ctx.study_id)


def _contract(config: Mapping[str, Any], role: str) -> Mapping[str, Any]:
    found = [c for c in config["record_contracts"] if c.get("role") == role]
    if not found:
        raise UserError(
            f"study {config['study_id']}: the factorial engine needs a record contract with"
            f" role {role!r}"
        )
    return found[0]


def _record_class(module: ModuleType, contract: Mapping[str, Any]):
    """The study's generated record class of the contract (its ``SCHEMA`` and ``FORMAT``)."""
    records = importlib.import_module(f"{module.__name__}.records")
    contracts = getattr(records, "CONTRACTS", None)
    if contracts is None or contract["id"] not in contracts:
        raise UserError(
            f"generated/{Path(module.__file__).parent.name}/records.py is older than this prereg:"
            " run prereg compile"
        )
    return contracts[contract["id"]]


def _read(module: ModuleType, contract: Mapping[str, Any], path: str) -> list[dict]:
    """Records validated against the study's generated schema of the contract: a JSONL
    contract's file is read by its extension (``.parquet`` and ``.csv`` as columns, anything
    else as JSONL, see :mod:`prereg.tabular`)."""
    cls = _record_class(module, contract)
    if cls.FORMAT != "jsonl":
        return read_records(path, cls.SCHEMA, cls.FORMAT)
    from prereg.tabular import read_contract_records

    return read_contract_records(path, cls.SCHEMA, contract["fields"])


def _reporting(config: Mapping[str, Any]) -> Mapping[str, Any]:
    return config["constants"]["reporting"]


def _has(config: Mapping[str, Any], role: str) -> bool:
    return any(c.get("role") == role for c in config["record_contracts"])


def _items_table(config, module, path: str | None) -> RowTable | None:
    """The registered rows from the item manifest; None when the study has no manifest (its
    observations name each row's levels)."""
    if not _has(config, "items"):
        if path is not None:
            raise UserError("--items: this study registers no item manifest (role items)")
        return None
    if path is None:
        raise UserError("this study's rows come from an item manifest: give --items")
    contract = _contract(config, "items")
    return from_items(config, contract, _read(module, contract, path), path)


def registered_rows(config) -> RowTable:
    """Every registered row, with ids ``<cell>-<n>``, for a study without a manifest."""
    ids, cell = [], []
    for ci, c in enumerate(config["cells"]):
        width = len(str(int(c["rows"])))
        for n in range(1, int(c["rows"]) + 1):
            ids.append(f"{c['id']}-{n:0{width}d}")
            cell.append(ci)
    return RowTable(
        ids=tuple(ids), cell=np.asarray(cell, dtype=np.int64), cells=tuple(config["cells"])
    )


# -- items --------------------------------------------------------------------------------------


def items(ctx: StudyContext, args: argparse.Namespace) -> int:
    """Write the item manifest of every registered row, in cell order."""
    config = ctx.config
    contract = _contract(config, "items")
    refuse_existing(args.out)
    fields = contract["fields"]
    row = next((f["name"] for f in fields if f.get("role") == "row"), None)
    if row is None:
        raise UserError(f"record contract {contract['id']}: no field has role row")
    split = next((f["name"] for f in fields if f.get("role") == "split"), None)
    item = next((f["name"] for f in fields if f.get("role") == "item"), None)
    item_width = len(str(max([int(c["rows"]) for c in config["cells"]] or [0])))
    rows: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    for cell in config["cells"]:
        width = len(str(int(cell["rows"])))
        first = len(rows)
        for n in range(1, int(cell["rows"]) + 1):
            rec: dict[str, Any] = {row: f"{cell['id']}-{n:0{width}d}"}
            if split:
                rec[split] = cell["split"]
            if item:
                # the n-th row of every cell asks the same item (a paired design pairs by it)
                rec[item] = f"item-{n:0{item_width}d}"
            for f in fields:
                if f.get("factor") and f["factor"] in cell["levels"]:
                    rec[f["name"]] = level_value(f, cell["levels"][f["factor"]])
            rows.append(rec)
        chunks.append(_cell_lines(rows[first:], [row, *([item] if item else [])]))
    _refuse_rows_breaking(_module(ctx, args), contract, rows, row)
    write_new(args.out, b"".join(chunks))
    _out(f"wrote {args.out}: {len(rows)} rows in {len(config['cells'])} cells", args)
    from prereg.console import console_of

    console_of(args).summary({"outputs": [str(args.out)], "rows": len(rows)})
    return 0


_MARKS = ("\ue000row\ue000", "\ue000item\ue000")


def _cell_lines(rows: list[dict[str, Any]], varying: list[str]) -> bytes:
    """The canonical JSON lines of one cell's manifest rows, which differ only in the string
    fields ``varying`` (the row id and the item): one row is encoded canonically with a marker
    in each varying field, and every row is that text with its own strings' JSON in the
    markers' places (canonical JSON writes a string alone, whatever its neighbours). The first
    and last rows are checked against the canonical encoder, and any row whose varying values
    are not plain strings is encoded on its own."""
    from prereg.digest import _ENCODE

    if not rows:
        return b""
    marks = dict(zip(varying, _MARKS, strict=False))
    text = canonical_bytes_nl({**rows[0], **marks}).decode("utf-8")
    encoded = [_ENCODE(m) for m in marks.values()]
    parts = re.split("(" + "|".join(map(re.escape, encoded)) + ")", text)
    slots = [i for i, p in enumerate(parts) if p in encoded]
    if len(slots) != len(marks) or any(parts.count(e) != 1 for e in encoded):
        return b"".join(map(canonical_bytes_nl, rows))
    field_at = {i: varying[encoded.index(parts[i])] for i in slots}

    def line(rec: dict[str, Any]) -> str:
        for i, name in field_at.items():
            value = rec[name]
            if type(value) is not str or "\x00" in value:
                return canonical_bytes_nl(rec).decode("utf-8")
            parts[i] = _ENCODE(value)
        return "".join(parts)

    lines = [line(r) for r in rows]
    for k in (0, -1):
        if lines[k].encode("utf-8") != canonical_bytes_nl(rows[k]):
            return b"".join(map(canonical_bytes_nl, rows))
    return "".join(lines).encode("utf-8")


def _refuse_rows_breaking(
    module: ModuleType, contract: Mapping[str, Any], rows: list[dict], row: str, *, shown: int = 10
) -> None:
    """Refuse, before anything is written, a manifest whose rows break the study's own item
    contract: the schema its generated reader validates against, so the one ``simulate`` and
    ``score`` would refuse the manifest by."""
    cls = _record_class(module, contract)
    problems = rows_problems(rows, cls.SCHEMA)
    if not problems:
        return
    project = module.__prereg_project__
    listed = [f"row {i + 1} ({row} {rows[i][row]!r}): {p}" for i, p in problems[:shown]]
    if len(problems) > shown:
        listed.append(f"… and {len(problems) - shown} more")
    raise UserError(
        f"items: {len({i for i, _ in problems})} of the {len(rows)} rows the engine writes break"
        f" record contract {contract['id']!r} of {module.SPEC_FILE} ({project.rel(cls.SCHEMA)}),"
        f" {len(problems)} problem(s); nothing was written (the contract must admit the study's"
        " own rows)",
        problems=listed,
    )


# -- simulate -----------------------------------------------------------------------------------


def _uniforms(*parts: object, k: int) -> np.ndarray:
    """k uniforms on [0, 1) seeded by the SHA-256 of the parts (one stream per row)."""
    h = hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "big"))).random(k)


def _failed_record(policy: Mapping[str, Any], outcome: str) -> dict[str, Any]:
    """Field values that make an attempt meet the policy's ``failed`` conditions (or, without
    them, the first of its ``failed_if_any`` conditions)."""
    out: dict[str, Any] = {}
    conds = policy.get("failed") or (policy.get("failed_if_any") or ())[:1]
    for c in conds:
        if c["op"] == "is_null":
            out[c["field"]] = None
        elif c["op"] == "eq" and c.get("other") is None:
            out[c["field"]] = c.get("value")
        elif c["op"] == "in" and c.get("values"):
            out[c["field"]] = c["values"][0]
        else:
            raise UserError(
                f"simulate: cannot write a failed attempt meeting {c['field']} {c['op']}"
                " (only is_null, eq with a value, and in)"
            )
    if not out:
        raise UserError("simulate: the attempt policy registers no failed condition")
    return out


def _fixed_fields(policy: Mapping[str, Any]) -> dict[str, Any]:
    """Fields the scored attempts must carry (``where`` conditions eq a value, and for
    ``first-match`` the ``select`` conditions the attempt that counts meets)."""
    out = {}
    conds = list(policy.get("where") or ())
    if policy.get("counts") == "first-match":
        conds += list(policy.get("select") or ())
    for c in conds:
        if c["op"] == "eq" and c.get("other") is None:
            out[c["field"]] = c.get("value")
        elif c["op"] == "in" and c.get("values"):
            out[c["field"]] = c["values"][0]
    return out


def _value_specs(scenario: Mapping[str, Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """The scenario's numeric fields in order of first mention, each with its entries."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for v in scenario.get("values") or ():
        out.setdefault(str(v["field"]), []).append(v)
    return list(out.items())


def _draw(v: Mapping[str, Any], rng: np.random.Generator, integer: bool):
    dist = v["distribution"]
    if dist == "normal":
        x = float(rng.normal(float(v.get("mean") or 0.0), float(v.get("sd") or 0.0)))
    elif dist == "lognormal":
        x = float(np.exp(rng.normal(float(v.get("mean") or 0.0), float(v.get("sd") or 0.0))))
    else:
        x = float(rng.uniform(float(v["low"]), float(v["high"])))
    if v.get("low") is not None:
        x = max(x, float(v["low"]))
    if v.get("high") is not None:
        x = min(x, float(v["high"]))
    if integer:
        return int(round(x))
    if v.get("decimals") is not None:
        return round_half_up(x, int(v["decimals"]))
    return x


class RecordWriter:
    """Writes the observation records of one row the way ``simulate`` does: its scored
    attempts carry the fields the policy's ``where`` fixes and the row's split and levels when
    the observations place their rows; a failed attempt meets the policy's ``failed``."""

    def __init__(self, config, scenario: Mapping[str, Any]):
        policy = config["attempts"]
        obs = _contract(config, "observation")
        names = {f["name"] for f in obs["fields"]}
        self.row_field, self.order = policy["key"][0], policy.get("order")
        self.outcome = scenario["outcome"]
        self.fixed = _fixed_fields(policy)
        self.placing = {
            f["name"]: ("split", None) for f in obs["fields"] if f.get("role") == "split"
        }
        self.placing.update({f["name"]: ("factor", f) for f in obs["fields"] if f.get("factor")})
        self.failed = _failed_record(policy, self.outcome)
        types = {f["name"]: f.get("type") for f in obs["fields"]}
        # a required field with allowed values that nothing else draws takes, on a successful
        # attempt, the first allowed value that does not make the attempt failed
        failing = {}
        for c in (*(policy.get("failed") or ()), *(policy.get("failed_if_any") or ())):
            if c["op"] == "eq":
                failing.setdefault(c["field"], set()).add(c.get("value"))
            elif c["op"] == "in":
                failing.setdefault(c["field"], set()).update(c.get("values") or ())
        self.defaults: dict[str, Any] = {}
        for f in obs["fields"]:
            if f.get("allowed") and f.get("required", True):
                ok = [v for v in f["allowed"] if v not in failing.get(f["name"], set())]
                if ok:
                    self.defaults[f["name"]] = ok[0]
        self.values = _value_specs(scenario)
        self.integer = {name: types.get(name) == "integer" for name, _ in self.values}
        self.scenario_id = scenario["id"]
        required = {f["name"] for f in obs["fields"] if f.get("required", True)}
        drawn = {
            self.row_field,
            *([self.order] if self.order else []),
            self.outcome,
            *self.fixed,
            *self.failed,
            *(name for name, _ in self.values),
        }
        success = {self.row_field, self.outcome, *self.fixed, *self.placing}
        success |= {self.order} if self.order else set()
        success |= {name for name, _ in self.values}
        self.defaults = {k: v for k, v in self.defaults.items() if k not in success}
        drawn |= set(self.defaults)
        missing = sorted(required - drawn - set(self.placing))
        if missing:
            raise UserError(
                f"simulate: the observation contract requires field(s) {missing}, which a"
                " scenario does not draw"
            )
        unknown = sorted(drawn - names)
        if unknown:
            raise UserError(f"simulate: the observation contract has no field(s) {unknown}")

    def numbers(self, rid: str, cell: Mapping[str, Any], right: bool, seed) -> dict[str, Any]:
        """The numeric fields of a row's attempts: for each field the first entry whose
        ``where`` and ``outcome`` hold, drawn from a generator seeded by the scenario, the
        seed and the row (one stream per row, fields in order of first mention)."""
        if not self.values:
            return {}
        from prereg.rules import selection_matches

        h = hashlib.sha256(f"{self.scenario_id}:{seed}:{rid}:values".encode()).digest()
        rng = np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "big")))
        attrs = cell_attributes(cell)
        out: dict[str, Any] = {}
        for name, entries in self.values:
            for v in entries:
                if not selection_matches(registered.selection(v.get("where")), attrs):
                    continue
                if v.get("outcome") is not None and bool(v["outcome"]) != bool(right):
                    continue
                out[name] = _draw(v, rng, self.integer[name])
                break
            else:
                raise UserError(
                    f"simulate: scenario {self.scenario_id} draws no value of {name!r} for a row"
                    f" of cell {cell['id']} (end the field's entries with one without where)"
                )
        return out

    def records(self, rid: str, cell: Mapping[str, Any], failed_first: bool, right: bool, seed=0):
        levels = {
            name: cell["split"]
            if kind == "split"
            else level_value(field, cell["levels"].get(field["factor"]))
            for name, (kind, field) in self.placing.items()
        }
        base = {self.row_field: rid, **self.defaults, **levels, **self.fixed}
        numbers = self.numbers(rid, cell, right, seed)
        if self.order is None:  # a series of one record: no failed attempt before it
            return [{**base, self.outcome: bool(right), **numbers}]
        out = []
        attempt = 1
        if failed_first:
            out.append({**base, self.order: attempt, self.outcome: None, **numbers, **self.failed})
            attempt += 1
        out.append({**base, self.order: attempt, self.outcome: bool(right), **numbers})
        return out


def simulate_records(config, table: RowTable, scenario: Mapping[str, Any], seed: int) -> list[dict]:
    writer = RecordWriter(config, scenario)
    coverage = registered.coverage(scenario)
    fail_rate = registered.failed_attempt_rate(scenario)
    rates = registered.compiled_rates(scenario)
    draws = {rid: _uniforms(scenario["id"], seed, rid, k=3) for rid in table.ids}
    # Coverage: in each cell, the floor(coverage * rows) rows with the smallest first draw.
    observed: set[str] = set()
    for ci in range(len(table.cells)):
        rows = [table.ids[i] for i in np.flatnonzero(table.cell == ci)]
        keep = registered.kept_rows(len(rows), coverage)
        observed.update(sorted(rows, key=lambda r: (draws[r][0], r))[:keep])
    out = []
    for i, rid in enumerate(table.ids):
        if rid not in observed:
            continue
        cell = table.cells[table.cell[i]]
        rate = registered.rate_for(rates, cell_attributes(cell))
        if rate is None:
            raise UserError(
                f"simulate: scenario {scenario['id']} gives no rate for cell"
                f" {cell['id']} (add a rate without where)"
            )
        _, u_fail, u_out = draws[rid]
        out.extend(writer.records(rid, cell, u_fail < fail_rate, u_out < rate, seed))
    return out


def simulate(ctx: StudyContext, args: argparse.Namespace) -> int:
    config = ctx.config
    sc = registered.scenario(config, args.scenario)
    registered.fixed(sc, "--scenario")
    if sc.get("outcome") is None:
        raise UserError(
            f"--scenario: scenario {args.scenario!r} names a metric, not an outcome field: the"
            " factorial engine writes observations, so its scenarios draw an outcome field"
        )
    refuse_existing(args.out)
    module = _module(ctx, args)
    table = _items_table(config, module, getattr(args, "items", None)) or registered_rows(config)
    records = simulate_records(config, table, sc, int(args.seed))
    write_new(args.out, b"".join(canonical_bytes_nl(r) for r in records))
    _out(
        f"wrote {args.out}: {len(records)} attempts of {len({r[config['attempts']['key'][0]] for r in records})}"
        f" rows (scenario {args.scenario}, seed {args.seed})",
        args,
    )
    from prereg.console import console_of

    console_of(args).summary({"outputs": [str(args.out)], "attempts": len(records)})
    return 0


# -- score --------------------------------------------------------------------------------------


def _r(x, decimals: int):
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else round_half_up(x, decimals)


def _rp(x, digits: int):
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else float(f"{x:.{digits}g}")


def row_metrics_of(
    config,
    table: RowTable,
    records: Sequence[Mapping[str, Any]],
    source: str,
    *,
    tally: dict[str, int] | None = None,
) -> tuple[dict, np.ndarray]:
    """(row metrics, observed mask) of validated observation records: the counted attempts,
    the item and record fields, the derived fields, then each metric's compute block
    (``tally`` counts what the attempt policy ignored, see :func:`attempt_policy.counted`)."""
    metrics, observed, _ = row_data(config, table, records, source, tally=tally)
    return metrics, observed


def row_data(
    config,
    table: RowTable,
    records: Sequence[Mapping[str, Any]],
    source: str,
    *,
    tally: dict[str, int] | None = None,
) -> tuple[dict, np.ndarray, dict]:
    """(row metrics, observed mask, row columns) as :func:`row_metrics_of` computes them."""
    chosen, observed = attempt_policy.counted(
        config["attempts"], records, table.index, source, tally=tally
    )
    obs = _contract(config, "observation")
    columns = dict(table.columns)
    columns.update(
        attempt_policy.record_columns(records, chosen, [f["name"] for f in obs["fields"]])
    )
    columns = derive(config.get("derived_fields") or [], columns, len(table), observed)
    return row_metrics(config["metrics"], columns, observed), observed, columns


def score_document(
    config, rules, table: RowTable, records: Sequence[Mapping[str, Any]], source: str
):
    """Every figure, contrast, gate and verdict of validated observation records."""
    from prereg.decide.decision import decide as decide_outcome
    from prereg.stats.methods import MethodError, method

    rep = _reporting(config)
    one_population = splits.implicit(config)
    tally: dict[str, int] = {}
    metrics, observed, columns = row_data(config, table, records, source, tally=tally)
    sel = Selections(table)
    res = registered_results(rules, metrics, sel, columns)
    figures = cell_figures(metrics, table)
    decision = decide_all(rules, res.results, table, figures)
    ci = rep["cell_interval"]
    try:
        interval = method("proportion-interval", ci["method"])
    except MethodError as exc:
        raise UserError(f"constant reporting: cell_interval: {exc}") from None
    counts = cell_counts(metrics, table)
    rows = np.bincount(table.cell, minlength=len(table.cells))
    n_obs = np.bincount(table.cell, weights=observed.astype(float), minlength=len(table.cells))
    cells = []
    for i, c in enumerate(table.cells):
        figs: dict[str, Any] = {}
        for mid, m in metrics.items():
            num, den = counts[i][mid]
            if m.is_proportion:
                k, n = int(round(num)), int(round(den))
                lo, hi = interval.fn(k, n, level=float(ci["level"]))
                figs[mid] = {
                    "k": k,
                    "n": n,
                    "estimate": full(k / n if n else None),
                    "lower": full(lo),
                    "upper": full(hi),
                }
            elif m.kind in ("mean",):
                figs[mid] = {"n": int(round(den)), "estimate": full(num / den if den else None)}
            else:
                figs[mid] = {"n": int(round(den)), "estimate": full(m.figure(table.cell == i))}
        cells.append(
            {
                "cell": c["id"],
                # a study without splits: its one implicit split is not shown
                **({} if one_population else {"split": str(c["split"])}),
                "levels": {k: str(v) for k, v in c["levels"].items()},
                "rows": int(rows[i]),
                "observed": int(round(n_obs[i])),
                "metrics": figs,
            }
        )

    estimates = estimate_rows(rules, res, full)
    contrasts = contrast_rows(rules, res, full, full)
    analyses = analysis_rows(rules, res)
    gates = gate_rows(rules, decision, full)
    held = {g["id"]: g["passed"] for g in gates}
    outcome = decide_outcome(getattr(rules, "DECISION", None), decision.verdicts, held, res.results)
    return {
        "decision": outcome,
        "schemaVersion": SCORE_SCHEMA,
        "rows": {
            "registered": len(table),
            "observed": int(observed.sum()),
            **({"ignoredRecords": tally["ignoredRecords"]} if "ignoredRecords" in tally else {}),
            **(
                {"duplicateRecords": tally["duplicateRecords"]}
                if "duplicateRecords" in tally
                else {}
            ),
        },
        "cells": cells,
        "estimates": estimates,
        "contrasts": contrasts,
        "analyses": analyses,
        "families": family_rows(rules, res),
        "gates": gates,
        "gated": decision.gated,
        "verdicts": decision.verdicts,
    }


def _input(path: str) -> dict[str, Any]:
    hexdigest, size = file_sha256(path)
    return {"file": Path(path).name, "sha256": PREFIX + hexdigest, "bytes": size}


def score(ctx: StudyContext, args: argparse.Namespace) -> int:
    config = ctx.config
    out = Path(args.out)
    md = out.with_suffix(".md")
    refuse_existing(out, md)
    module = _module(ctx, args)
    items_path = getattr(args, "items", None)
    table = _items_table(config, module, items_path)
    obs_contract = _contract(config, "observation")
    records = _read(module, obs_contract, args.observations)
    if table is None:
        row_field = config["attempts"]["key"][0]
        table = from_items(
            config,
            obs_contract,
            records,
            args.observations,
            row_field=row_field,
            complete=False,
            ignore_unplaced=config["attempts"].get("unknown_rows") == "ignore",
        )
    rules = importlib.import_module(f"{module.__name__}.rules")
    doc = score_document(config, rules, table, records, args.observations)
    doc = {
        "decision": doc.pop("decision"),
        "study": ctx.study_id,
        "version": ctx.version,
        "specDigest": ctx.spec_digest,
        "inputs": {
            **({"items": _input(items_path)} if items_path else {}),
            "observations": _input(args.observations),
        },
        **doc,
    }
    write_files_new(
        [
            (out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n", 0o644),
            (md, score_markdown(config, module, doc), 0o644),
        ]
    )
    verdicts = ", ".join(f"{h} {v}" for h, v in doc["verdicts"].items())
    if not doc["gates"]:
        gate = "no gate registered"
    else:
        gate = "gates held" if not doc["gated"] else "a gate failed"
    _out(f"decision: {decision_words(doc['decision'])}", args)
    _out(f"wrote {out} and {md.name}: {gate}; {verdicts}", args)
    from prereg.console import console_of

    console_of(args).summary(
        {
            "decision": doc["decision"],
            "verdicts": doc["verdicts"],
            "gated": doc["gated"],
            "outputs": [str(out), str(md)],
        }
    )
    return 0


def _fmt(x) -> str:
    return "–" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def score_markdown(config, module: ModuleType, doc: Mapping[str, Any]) -> str:
    """SCORE.md: the verdicts, gates, cells, estimates and contrasts of a score document."""
    lines = [
        f"# {doc['study']} {doc['version']}: score",
        "",
        f"Spec digest `{doc['specDigest']}`; observed {doc['rows']['observed']} of"
        f" {doc['rows']['registered']} registered rows.",
        "",
        *decision_lines(doc["decision"]),
        "## Verdicts",
        "",
        "| hypothesis | verdict |",
        "|---|---|",
    ]
    rules = importlib.import_module(f"{module.__name__}.rules")
    for h, v in doc["verdicts"].items():
        lines.append(f"| `{h}` | {v} |")
    lines += explanation_lines(verdict_explanations(module, rules, doc))
    lines += [
        "",
        "## Gates",
        "",
        "| gate | metric | rule | held | failing cells |",
        "|---|---|---|---|---|",
    ]
    for g in doc["gates"]:
        failing = ", ".join(f"`{f['cell']}` ({_fmt(f['figure'])})" for f in g["failures"]) or "–"
        lines.append(
            f"| `{g['id']}` | {g['metric']} | {g['op']} {_fmt(g['value'])} | {'yes' if g['passed'] else 'no'} | {failing} |"
        )
    metric_ids = list(doc["cells"][0]["metrics"]) if doc["cells"] else []
    lines += ["", "## Cells", "", "| cell | rows | observed | " + " | ".join(metric_ids) + " |"]
    lines.append("|---|---|---|" + "---|" * len(metric_ids))
    for c in doc["cells"]:
        figs = []
        for mid in metric_ids:
            f = c["metrics"][mid]
            if "lower" in f:
                figs.append(f"{_fmt(f['estimate'])} [{_fmt(f['lower'])}, {_fmt(f['upper'])}]")
            else:
                figs.append(_fmt(f["estimate"]))
        lines.append(
            f"| `{c['cell']}` | {c['rows']} | {c['observed']} | " + " | ".join(figs) + " |"
        )
    if doc["estimates"]:
        lines += [
            "",
            "## Estimates",
            "",
            "| estimate | "
            + ("k/n" if all("k" in e for e in doc["estimates"]) else "size")
            + " | estimate [interval] |",
            "|---|---|---|",
        ]
        for e in doc["estimates"]:
            lines.append(
                f"| `{e['id']}` | {size_text(e)} | {_fmt(e['estimate'])} [{_fmt(e['lower'])}, {_fmt(e['upper'])}] ({e['interval']}, {e['level']:g}) |"
            )
    if doc["contrasts"]:
        lines += [
            "",
            "## Contrasts",
            "",
            "| contrast | a | b | "
            + ("a − b" if all("measure" not in c for c in doc["contrasts"]) else "a − b (a / b)")
            + " [interval] | test | P | adjusted P |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in doc["contrasts"]:
            test = c["test"]
            if test != "none":
                test += f", {c['alternative']}" + (
                    f", margin {c['margin']:g}" if c["margin"] else ""
                )
            lines.append(
                f"| `{c['id']}` | {arm_text(c['a'])} | {arm_text(c['b'])} | "
                f"{_fmt(c['estimate'])} [{_fmt(c['lower'])}, {_fmt(c['upper'])}] | {test} | "
                f"{_fmt(c['p'])} | {_fmt(c['adjustedP'])} |"
            )
        paired = [c for c in doc["contrasts"] if c.get("pairs")]
        if paired:
            lines += ["", "Paired contrasts:", ""]
            lines += [f"- `{c['id']}`: {pairs_text(c)}" for c in paired]
    if doc.get("analyses"):
        lines += [
            "",
            "## Analyses",
            "",
            "| analysis | method | estimate [interval] | se | statistic | df | P | adjusted P |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for a in doc["analyses"]:
            stat = _fmt(a["statistic"])
            if a["statistic"] is not None and a.get("statisticName"):
                stat = f"{a['statisticName']} = {stat}"
            df = a["df"]
            df = ", ".join(_fmt(d) for d in df) if isinstance(df, list) else _fmt(df)
            lines.append(
                f"| `{a['id']}` | {a['method']} | {_fmt(a['estimate'])} [{_fmt(a['lower'])},"
                f" {_fmt(a['upper'])}] | {_fmt(a['se'])} | {stat} | {df} | {_fmt(a['p'])} |"
                f" {_fmt(a['adjustedP'])} |"
            )
        lines += ["", "Options as registered:", ""]
        lines += [
            f"- `{a['id']}`: "
            + (", ".join(f"{k} {json.dumps(v)}" for k, v in a["options"].items()) or "none")
            for a in doc["analyses"]
        ]
    return "\n".join(lines) + "\n"


# -- diagnose -----------------------------------------------------------------------------------


def _item_columns(config, ids: Sequence[str], cells: Sequence[Mapping[str, Any]]) -> dict:
    """The item fields of rows as ``items`` writes them (row id, split, each cell's levels)."""
    if not _has(config, "items"):
        return {}
    fields = _contract(config, "items")["fields"]
    cols: dict[str, list[Any]] = {}
    for f in fields:
        if f.get("role") == "row":
            cols[f["name"]] = list(ids)
        elif f.get("role") == "split":
            cols[f["name"]] = [c["split"] for c in cells]
        elif f.get("factor"):
            cols[f["name"]] = [level_value(f, c["levels"].get(f["factor"])) for c in cells]
        else:
            cols[f["name"]] = [None] * len(ids)
    return cols


def _conditions_read(conds) -> set[str]:
    return {str(x) for c in conds or () for x in (c.get("field"), c.get("other")) if x}


def drawn_metrics(config) -> dict[str, str]:
    """Metrics that read a number a scenario draws by ``values`` (through derived fields, or
    every metric when the attempt policy reads one), each with the reason: their figures
    depend on more than whether each row's outcome is right, which is all diagnose draws."""
    drawn: dict[str, str] = {}
    for sc in config.get("scenarios") or ():
        for v in sc.get("values") or ():
            drawn.setdefault(str(v["field"]), f"scenario {sc['id']} draws {v['field']!r}")
    if not drawn:
        return {}
    policy = config.get("attempts") or {}
    read = set()
    for part in ("failed", "failed_if_any", "where", "select"):
        read |= _conditions_read(policy.get(part))
    policy_reads = sorted(read & set(drawn))
    reads = dict(drawn)
    for d in config.get("derived_fields") or ():
        used = _conditions_read(d.get("test"))
        for case in d.get("cases") or ():
            used |= _conditions_read(case.get("when"))
        via = sorted(used & set(reads))
        if via:
            reads[str(d["id"])] = f"derived field {d['id']!r} reads {via[0]!r}: {reads[via[0]]}"
    out = {}
    for m in config.get("metrics") or ():
        c = m.get("compute")
        if c is None:
            continue
        if policy_reads:
            out[m["id"]] = f"the attempt policy reads {policy_reads[0]!r}: {drawn[policy_reads[0]]}"
            continue
        used = _conditions_read(c.get("where")) | _conditions_read(c.get("among"))
        if c.get("field"):
            used.add(str(c["field"]))
        via = sorted(used & set(reads))
        if via:
            out[m["id"]] = reads[via[0]] if via[0] not in drawn else drawn[via[0]]
    return out


def diagnose_design(config):
    """The study's rows as row groups (one per registered cell: the factorial engine derives
    no row attribute) and what each kind of row contributes to each metric: prototype rows,
    their item fields as ``items`` writes them and their records as ``simulate`` writes them,
    scored by :func:`row_metrics_of`."""
    from prereg.diagnose.design import (
        KINDS,
        RETRIED_RIGHT,
        RETRIED_WRONG,
        RIGHT,
        WRONG,
        Design,
        contributions_of,
    )

    found = list(registered.registered(config).values())
    if not found:
        raise UserError(f"study {config['study_id']}: diagnose needs a registered scenario")
    outcomes = sorted({str(s.get("outcome")) for s in found})
    if len(outcomes) != 1:
        raise UserError(
            f"diagnose: the scenarios draw different outcome fields ({', '.join(outcomes)}); a"
            " study is diagnosed over one outcome field"
        )
    writer = RecordWriter(config, found[0])
    cells = tuple(config["cells"])
    draws = {
        RIGHT: (False, True),
        WRONG: (False, False),
        RETRIED_RIGHT: (True, True),
        RETRIED_WRONG: (True, False),
    }
    ids, cell_of, records = [], [], []
    for ci, cell in enumerate(cells):
        for kind, name in enumerate(KINDS):
            rid = f"{cell['id']}#{name}"
            ids.append(rid)
            cell_of.append(ci)
            if kind in draws:
                records.extend(writer.records(rid, cell, *draws[kind]))
    table = RowTable(
        ids=tuple(ids),
        cell=np.asarray(cell_of, dtype=np.int64),
        cells=cells,
        columns=_item_columns(config, ids, [cells[c] for c in cell_of]),
    )
    metrics, _ = row_metrics_of(config, table, records, "the prototype rows")
    n = len(cells)
    why = drawn_metrics(config)
    return Design(
        cells=cells,
        group_cell=np.arange(n, dtype=np.int64),
        group_attributes={},
        group_rows=np.array([int(c["rows"]) for c in cells], dtype=np.int64),
        contributions=contributions_of(metrics, n),
        unmodelled=frozenset(why),
        unmodelled_why=why,
        notes=(
            "Rows carry the item fields the items command writes and the records simulate"
            " writes; a row group is a registered cell.",
        ),
    )


def diagnose(ctx: StudyContext, args: argparse.Namespace) -> int:
    from prereg.diagnose.command import run

    return run(ctx, args, diagnose_design)
