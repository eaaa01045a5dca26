"""Commands of the factorial engine: ``handler(ctx, args) -> int`` (see the package docstring)."""

from __future__ import annotations

import argparse
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
from prereg.decide import units as unit_levels
from prereg.decide.columns import Column, as_column
from prereg.decide.decision import in_words as decision_words
from prereg.decide.evaluate import (
    Selections,
    cell_counts,
    cell_figures,
    decide_all,
    registered_results,
)
from prereg.decide.explain import explanation_lines, verdict_explanations
from prereg.decide.fields import conditions_read, derive, derived_reads, fields_read
from prereg.decide.metrics import row_metrics
from prereg.decide.report import (
    analysis_rows,
    arm_text,
    averaged_pairs_text,
    contrast_rows,
    decision_lines,
    estimate_rows,
    family_rows,
    full,
    gate_rows,
    pairs_text,
    quantifier_rows,
    size_text,
    whole_statistic,
)
from prereg.decide.table import (
    RowTable,
    check_cell_counts,
    from_items,
    level_value,
    manifest_counts,
)
from prereg.digest import PREFIX, file_sha256
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import (
    output_file,
    refuse_existing,
    refuse_report_on_output,
    write_files_new,
    write_new,
)
from prereg.records import read_records, rows_problems
from prereg.stats.rounding import round_half_up

from .draws import (
    RecordWriter,
    WordLayout,
    _confidence_entry,
    _contract,
    _entries_of,
    _has,
    calibration_rows,
    chance_right,
    latent_values,
    normals,
    structure_read,
    uniforms,
    word_values,
)

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


#: (SHA-256 hex, bytes) of each input file as its reader read it, by path: SCORE.json's
#: ``inputs`` name the bytes that were scored without hashing the file a second time.
_READ_DIGESTS: dict[str, tuple[str, int]] = {}


def _read(
    module: ModuleType,
    contract: Mapping[str, Any],
    path: str,
    parallel: Mapping[str, Any] | None = None,
    share=None,
):
    """Records validated against the study's generated schema of the contract: a JSONL
    contract's file is read by its extension (``.parquet`` and ``.csv`` as columns, anything
    else as JSONL, see :mod:`prereg.tabular`), into :class:`prereg.columnar.RecordColumns`;
    ``parallel`` reads a JSONL file in partitions (see :mod:`prereg.partitioned`); ``share``:
    {field: (index, ids)} whose strings are held once."""
    cls = _record_class(module, contract)
    if cls.FORMAT != "jsonl":
        return read_records(path, cls.SCHEMA, cls.FORMAT)
    from prereg.tabular import read_contract_columns

    records = read_contract_columns(
        path, cls.SCHEMA, contract["fields"], parallel=parallel, share=share
    )
    if records.digest is not None:
        _READ_DIGESTS[str(path)] = records.digest
    return records


def _jsonl_out(out: str) -> None:
    """Refuse an output name that a later reader would take for another format: ``items``
    and ``simulate`` write JSONL, and ``score`` reads ``.csv`` and ``.parquet`` files as
    tables by their names."""
    from prereg.tabular import COLUMNAR

    suffix = Path(out).suffix.lower()
    if suffix in COLUMNAR:
        raise UserError(
            f"--out {out}: this command writes JSONL, and a {suffix} file is read as"
            f" {COLUMNAR[suffix]}; name it .jsonl"
        )


def _reporting(config: Mapping[str, Any]) -> Mapping[str, Any]:
    return config["constants"]["reporting"]


def _items_table(
    config, module, path: str | None, parallel: Mapping[str, Any] | None = None
) -> RowTable | None:
    """The registered rows from the item manifest; None when the study has no manifest (its
    observations name each row's levels)."""
    if not _has(config, "items"):
        if path is not None:
            raise UserError("--items: this study registers no item manifest (role items)")
        return None
    if path is None:
        raise UserError("this study's rows come from an item manifest: give --items")
    contract = _contract(config, "items")
    records = _read(module, contract, path, parallel)
    obs = _contract(config, "observation")
    contract, records, lines = attempt_policy.expanded_manifest(
        config["attempts"], obs, contract, records
    )
    name = attempt_policy.manifest_name(config["attempts"], obs, contract)
    return from_items(config, contract, records, path, row_field=name, lines=lines)


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
    _jsonl_out(args.out)
    refuse_existing(args.out)
    fields = contract["fields"]
    row = next((f["name"] for f in fields if f.get("role") == "row"), None)
    if row is None:
        raise UserError(f"record contract {contract['id']}: no field has role row")
    split = next((f["name"] for f in fields if f.get("role") == "split"), None)
    item = next((f["name"] for f in fields if f.get("role") == "item"), None)
    per = _expansion_size(config)
    module = _module(ctx, args)
    shape = (config, fields, row, split, item, per)
    if any(f.get("path") for f in fields):  # records written nested, checked as written
        _write_nested_manifest(args.out, module, contract, shape)
    else:
        _write_manifest(args.out, module, contract, shape)
    count = sum(int(c["rows"]) // per for c in config["cells"])
    what = f"{count} rows" if per == 1 else f"{count} records ({count * per} rows)"
    _out(f"wrote {args.out}: {what} in {len(config['cells'])} cells", args)
    from prereg.console import console_of

    console_of(args).summary({"outputs": [str(args.out)], "rows": count})
    return 0


def _write_manifest(out, module, contract, shape) -> None:
    """The manifest, batch by batch, each batch checked against the item contract by its
    compiled predicate (a batch it does not accept: every record checked and worded)."""
    row, item = shape[2], shape[4]
    checks = _manifest_checks(_record_class(module, contract).SCHEMA, row, item)
    _refuse_no_room(out, _manifest_size(*shape))
    try:
        write_new(out, _manifest_chunks(*shape, checks=checks))
    except _Breaks:
        # a row the contract's predicate does not accept: the rows as records, worded
        recs = [r for cell_rows in manifest_rows(*shape) for r in cell_rows]
        _refuse_rows_breaking(module, contract, recs, row)
        write_new(out, _manifest_chunks(*shape, checks=None))  # the predicate was stricter


def _write_nested_manifest(out, module, contract, shape) -> None:
    """The manifest of a contract with fields below the top of a record: each record placed
    as its contract places its fields (:func:`prereg.records.nested_record`), the records
    checked as written, one by one."""
    from prereg.files import canonical_bytes_nl
    from prereg.records import nested_record

    fields, row = shape[1], shape[2]
    flat = [r for cell_rows in manifest_rows(*shape) for r in cell_rows]
    recs = [nested_record(r, fields) for r in flat]
    cls = _record_class(module, contract)
    if rows_problems(recs, cls.SCHEMA):
        _refuse_rows_breaking(module, contract, flat, row, written=recs)
    write_new(out, b"".join(map(canonical_bytes_nl, recs)))


def _manifest_size(config, fields, row: str, split: str | None, item: str | None, per: int) -> int:
    """The manifest's size in bytes, exactly: a cell's lines differ only in their zero-padded
    row and item numbers, so each is as long as its first."""
    from prereg.files import canonical_bytes_nl

    widths, iw = _widths(config, per)
    return sum(
        (int(cell["rows"]) // per)
        * len(canonical_bytes_nl(_manifest_record(cell, fields, row, split, item, 1, width, iw)))
        for cell, width in zip(config["cells"], widths, strict=True)
        if int(cell["rows"]) // per
    )


def _refuse_no_room(out, size: int) -> None:
    """Refuse, before writing a byte, a file of ``size`` bytes that the file system holding
    ``out`` has no room for (a registration of billions of rows would otherwise write until
    the disk is full)."""
    import shutil

    where = Path(out).absolute().parent
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return  # no figure to go by: the write itself finds out
    if size > free:
        raise UserError(
            f"{out}: the manifest of the registered rows is {size:,} bytes"
            f" ({size / 2**30:,.1f} GiB) and the file system holding {where} has"
            f" {free:,} bytes free; nothing was written"
        )


#: Manifest records encoded at a time by ``items``.
MANIFEST_BATCH = 1 << 16


def _manifest_record(
    cell, fields, row: str, split: str | None, item: str | None, n: int, width: int, iw: int
) -> dict[str, Any]:
    """The n-th manifest record of ``cell`` (ids ``<cell>-<n>`` zero-padded to ``width``,
    items ``item-<n>`` to ``iw``)."""
    rec: dict[str, Any] = {row: f"{cell['id']}-{n:0{width}d}"}
    if split:
        rec[split] = cell["split"]
    if item:
        # the n-th row of every cell asks the same item (a paired design pairs by it)
        rec[item] = f"item-{n:0{iw}d}"
    for f in fields:
        if f.get("factor") and f["factor"] in cell["levels"]:
            rec[f["name"]] = level_value(f, cell["levels"][f["factor"]])
    return rec


def _widths(config, per: int) -> tuple[list[int], int]:
    """The digits of each cell's row numbers and of the item numbers."""
    counts = [int(c["rows"]) // per for c in config["cells"]]
    return [len(str(k)) for k in counts], len(str(max(counts or [0])))


def manifest_rows(
    config, fields, row: str, split: str | None, item: str | None, per: int = 1
) -> list[list[dict[str, Any]]]:
    """The manifest rows ``items`` writes, cell by cell (a list of records per cell); with an
    expansion each record stands for ``per`` rows, so a cell has rows / per records."""
    widths, iw = _widths(config, per)
    return [
        [
            _manifest_record(cell, fields, row, split, item, n, width, iw)
            for n in range(1, int(cell["rows"]) // per + 1)
        ]
        for cell, width in zip(config["cells"], widths, strict=True)
    ]


def _constant_meets(c: Mapping[str, Any], value: Any) -> bool:
    """Whether a field condition holds of a field every row writes as ``value`` (a
    comparison with another field, or an order, is not decided here: False)."""
    op = c.get("op")
    if c.get("other") is not None:
        return False
    if op == "eq":
        return value == c.get("value") and type(value) is type(c.get("value"))
    if op == "ne":
        return not (value == c.get("value") and type(value) is type(c.get("value")))
    if op == "in":
        return any(value == v and type(value) is type(v) for v in c.get("values") or ())
    if op == "not_in":
        return not any(value == v and type(value) is type(v) for v in c.get("values") or ())
    return op == "not_null" and value is not None


class _Breaks(Exception):
    """A manifest record the item contract's predicate does not accept."""


_ANNOTATIONS = frozenset({"$comment", "$schema", "$id", "title", "description", "examples"})


def _manifest_checks(schema_path, row: str, item: str | None):
    """(record check, {field: value check}) proving that every manifest record meets the item
    contract without a dict per record, or None when the contract is not that simple.

    A contract made only of type object, properties, required and additionalProperties
    (besides annotations) holds for a record when its keys do and each value meets its
    property's schema.  A cell's records share their keys and every value but the row id and
    the item, so they all hold when the cell's first record does and every id and item meets
    its property's schema.  The checks are the contract's compiled predicates
    (:func:`prereg.records.schema_predicate`), which accept only what the schema accepts."""
    from prereg.records import schema_predicate

    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    simple = {"type", "properties", "required", "additionalProperties"}
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    if any(k not in simple and k not in _ANNOTATIONS and not k.startswith("x-") for k in schema):
        return None
    props = schema.get("properties")
    record = schema_predicate(schema)
    if record is None or not isinstance(props, dict):
        return None
    values = {}
    for name in (row, *([item] if item else [])):
        sub = props.get(name)
        check = schema_predicate(sub) if sub is not None else None
        if check is None:
            return None
        # a string schema with length bounds at most: the verdict on a string is its length's
        keys = {k for k in sub if k not in _ANNOTATIONS and not k.startswith("x-")}
        by_length = sub.get("type") == "string" and keys <= {"type", "minLength", "maxLength"}
        values[name] = (check, by_length)
    return record, values


def _values_hold(check, by_length: bool, values: list[str]) -> bool:
    """Whether every value (a string) meets ``check``; with ``by_length``, one value of each
    length stands for the others."""
    if by_length:
        values = list(dict(zip(map(len, values), values, strict=True)).values())
    return all(map(check, values))


def _manifest_chunks(
    config, fields, row: str, split: str | None, item: str | None, per: int, *, checks
):
    """The manifest's bytes, batch by batch: each batch's records spliced into its first
    record's canonical line (:func:`.lines.spliced`).  With ``checks`` (from
    :func:`_manifest_checks`, or None: no contract check) a batch whose first record or one
    of whose ids or items the contract does not accept raises :class:`_Breaks`."""
    from .lines import spliced

    widths, iw = _widths(config, per)
    items: dict[tuple[int, int], list[str]] = {}
    for cell, width in zip(config["cells"], widths, strict=True):
        count = int(cell["rows"]) // per
        # the ids and items as _manifest_record writes them
        ids = str(cell["id"]).replace("{", "{{").replace("}", "}}") + f"-{{:0{width}d}}"
        for lo in range(1, count + 1, MANIFEST_BATCH):
            hi = min(count, lo + MANIFEST_BATCH - 1)
            first = _manifest_record(cell, fields, row, split, item, lo, width, iw)
            columns = {row: list(map(ids.format, range(lo, hi + 1)))}
            if item:  # the same items in every cell
                if (lo, hi) not in items:
                    items.clear()
                    items[lo, hi] = list(map(f"item-{{:0{iw}d}}".format, range(lo, hi + 1)))
                columns[item] = items[lo, hi]
            if checks is not None:
                record, values = checks
                if not record(first) or not all(
                    _values_hold(*values[name], col) for name, col in columns.items()
                ):
                    raise _Breaks
            yield spliced(first, columns)


def _expansion_size(config) -> int:
    """How many rows one manifest record stands for under the attempt policy's ``expand``
    (1 without one). An expansion over a factor spreads a record's rows over several cells,
    which the manifest template cannot show: refused (write the manifest of the items)."""
    policy = config.get("attempts") or {}
    exp = policy.get("expand") or []
    obs = _contract(config, "observation")
    factors = {f["name"] for f in obs["fields"] if f.get("factor") or f.get("role") == "split"}
    if any(e["field"] in factors for e in exp):
        raise UserError(
            "items: the attempt policy expands each manifest record over a factor"
            f" ({', '.join(e['field'] for e in exp if e['field'] in factors)}), so its rows lie"
            " in several cells; write the manifest of the items themselves (one record per"
            " item, without that field)"
        )
    size = 1
    for e in exp:
        size *= len(attempt_policy.expansion_values(e))
    return size


def _refuse_rows_breaking(
    module: ModuleType,
    contract: Mapping[str, Any],
    rows: list[dict],
    row: str,
    *,
    shown: int = 10,
    written: list[dict] | None = None,
) -> None:
    """Refuse, before anything is written, a manifest whose rows break the study's own item
    contract: the schema its generated reader validates against, so the one ``simulate`` and
    ``score`` would refuse the manifest by (``written``: the records as the file would hold
    them, when not ``rows``)."""
    cls = _record_class(module, contract)
    problems = rows_problems(rows if written is None else written, cls.SCHEMA)
    if not problems:
        return
    project = module.__prereg_project__
    listed = [f"row {i + 1} ({row} {rows[i][row]!r}): {p}" for i, p in problems[:shown]]
    if len(problems) > shown:
        listed.append(f"… and {len(problems) - shown} more")
    missing = sorted({m for _, p in problems for m in re.findall(r"missing field '([^']+)'", p)})
    hint = ""
    if missing:
        hint = (
            "; items fills the row id, the split, the factor fields and a string field with role:"
            " item (item-<n> for the n-th row of every cell, so equal cells pair): mark"
            f" {', '.join(repr(m) for m in missing)} required: false, or the item's field role:"
            " item"
        )
    raise UserError(
        f"items: {len({i for i, _ in problems})} of the {len(rows)} rows the engine writes break"
        f" record contract {contract['id']!r} of {module.SPEC_FILE} ({project.rel(cls.SCHEMA)}),"
        f" {len(problems)} problem(s); nothing was written (the contract must admit the study's"
        f" own rows{hint})",
        problems=listed,
    )


# -- simulate -----------------------------------------------------------------------------------


def simulate(ctx: StudyContext, args: argparse.Namespace) -> int:
    config = ctx.config
    sc = registered.scenario(config, args.scenario)
    registered.fixed(sc, "--scenario")
    if sc.get("metric") is not None:
        raise UserError(
            f"--scenario: scenario {args.scenario!r} names a metric, not an outcome field: the"
            " factorial engine writes observations, so its scenarios draw an outcome field"
        )
    _jsonl_out(args.out)
    refuse_existing(args.out)
    module = _module(ctx, args)
    table = _items_table(config, module, getattr(args, "items", None)) or registered_rows(config)
    from prereg.console import console_of

    from .structure import applies, simulate_structured

    if applies(config, sc):  # clusters, raters, samples, rows named by several fields
        records = simulate_structured(config, table, sc, int(args.seed))
        from prereg.files import canonical_bytes_nl
        from prereg.records import nested_lines

        obs_fields = _contract(config, "observation")["fields"]
        lines = [b"".join(canonical_bytes_nl(r) for r in records)]
        write_new(args.out, b"".join(nested_lines(lines, obs_fields)))
        rows = len(set(attempt_policy.row_names(config["attempts"], records)))
        _out(
            f"wrote {args.out}: {len(records)} attempts of {rows} rows (scenario"
            f" {args.scenario}, seed {args.seed})",
            args,
        )
        console_of(args).summary({"outputs": [str(args.out)], "attempts": len(records)})
        return 0
    from .simulation import Simulation

    sim = Simulation(config, table, sc, int(args.seed))
    progress = console_of(args).progress("simulate", len(table.ids), unit="rows")
    try:
        # batch by batch into a temporary file, linked into place when every batch is written
        from prereg.records import nested_lines

        obs_fields = _contract(config, "observation")["fields"]
        write_new(args.out, nested_lines(sim.chunks(progress), obs_fields))
    finally:
        progress.close()
    _out(
        f"wrote {args.out}: {sim.attempts} attempts of {sim.rows} rows (scenario"
        f" {args.scenario}, seed {args.seed})",
        args,
    )
    console_of(args).summary({"outputs": [str(args.out)], "attempts": sim.attempts})
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
    metrics, observed, _, _ = row_data(config, table, records, source, tally=tally)
    return metrics, observed


def row_data(
    config,
    table: RowTable,
    records: Sequence[Mapping[str, Any]],
    source: str,
    *,
    tally: dict[str, int] | None = None,
    reduced=None,
) -> tuple[dict, np.ndarray, dict]:
    """(row metrics, observed mask, row columns, unit levels or None) as
    :func:`row_metrics_of` computes them: with units registered, every metric but coverage
    counts only the rows of included units. ``reduced`` (:class:`prereg.bucketed.Reduced`)
    gives the counted attempts' columns already taken, bucket by bucket."""
    columns = dict(table.columns)
    if reduced is not None:
        observed = reduced.observed
        columns.update(reduced.record_columns)
        if tally is not None:
            tally.update(reduced.tally)
    else:
        chosen, observed = attempt_policy.counted(
            config["attempts"], records, table.index, source, tally=tally,
            lines=getattr(records, "lines", None),
        )  # fmt: skip
        obs = _contract(config, "observation")
        columns.update(
            attempt_policy.record_columns(records, chosen, [f["name"] for f in obs["fields"]])
        )
    columns = derive(config.get("derived_fields") or [], columns, len(table), observed)
    units = unit_levels.build(
        config.get("units"), columns, observed, row_words=lambda i: _row_words(config, table, i)
    )
    if units is None:
        return row_metrics(config["metrics"], columns, observed), observed, columns, None
    for lv in units.levels:
        unit_levels.check_registered(lv, table.cells, table.cell, source)

    def share(uid: str):
        return unit_levels.share_metric(units.level(uid), table.cell, len(table.cells))

    metrics = row_metrics(config["metrics"], columns, observed, kept=units.kept, unit_share=share)
    return metrics, observed, columns, units


def _row_words(config, table: RowTable, i: int) -> str:
    """Row ``i`` as a message names it: by its key fields' values."""
    rid = table.ids[i]
    name = attempt_policy.row_name(config["attempts"])
    return "row " + attempt_policy.name_text(name, rid)


def cell_spread(m, mask: np.ndarray) -> dict[str, Any]:
    """What a cell's figure of a geometric mean or an ECE is made of: the log scale (mean,
    sd and SE of the logs) of a geometric mean; the table of bins of an ECE
    (:func:`prereg.stats.calibration.ece_bins`, floats)."""
    if m.kind == "geometric_mean":
        logs = m.value[m.counted(mask)]
        n = logs.size
        sd = float(np.std(logs, ddof=1)) if n > 1 else None
        return {
            "meanLog": full(float(np.mean(logs)) if n else None),
            "sdLog": full(sd),
            "seLog": full(None if sd is None else sd / math.sqrt(n)),
        }
    if m.kind == "ece":
        from prereg.stats.calibration import ece_bins

        c = m.counted(mask)
        return {"bins": ece_bins(m.value[c], m.hit[c], m.bins, m.closed)}
    return {}


def score_document(
    config, rules, table: RowTable, records: Sequence[Mapping[str, Any]], source: str,
    reduced=None,
):  # fmt: skip
    """Every figure, contrast, gate and verdict of validated observation records (or of the
    rows ``reduced`` in buckets, see :mod:`prereg.bucketed`)."""
    from prereg.decide.decision import decide as decide_outcome
    from prereg.stats.methods import MethodError, method

    rep = _reporting(config)
    one_population = splits.implicit(config)
    tally: dict[str, int] = {}
    metrics, observed, columns, units = row_data(
        config, table, records, source, tally=tally, reduced=reduced
    )
    sel = Selections(table)
    res = registered_results(rules, metrics, sel, columns)
    from prereg.decide.certify import gate_figures

    figures = gate_figures(rules, metrics, table, cell_figures(metrics, table))
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
                figs[mid].update(cell_spread(m, table.cell == i))
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
            **({"counted": int((observed & units.kept).sum())} if units is not None else {}),
        },
        **(
            {"units": unit_levels.score_rows(units, table.cells, table.cell)}
            if units is not None
            else {}
        ),
        "cells": cells,
        "estimates": estimates,
        "contrasts": contrasts,
        "analyses": analyses,
        "families": family_rows(rules, res),
        "gates": gates,
        "gated": decision.gated,
        "verdicts": decision.verdicts,
        "quantifiers": quantifier_rows(rules, res.results),
    }


def _input(path: str) -> dict[str, Any]:
    hexdigest, size = _READ_DIGESTS.pop(str(path), None) or file_sha256(path)
    return {"file": Path(path).name, "sha256": PREFIX + hexdigest, "bytes": size}


def _per_file_fields(contract: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The observation contract's fields given per file (``per_file``), in its order."""
    return [f for f in contract["fields"] if f.get("per_file")]


def _observation_files(config, contract, given: Sequence[str]) -> list[tuple[tuple | None, str]]:
    """(the values of the fields given per file, or None; path) of each ``--observations``, in
    the order given: ``VALUE=PATH`` when the contract has a field given per file (``V1,V2=PATH``
    for two, in the contract's order), else a path."""
    fields = _per_file_fields(contract)
    if not fields:
        if len(given) > 1:
            keys = [_file_key(g) for g in given]
            dup = next((i for i, k in enumerate(keys) if k in keys[:i]), None)
            if dup is not None:
                first = given[keys.index(keys[dup])]
                same = "" if given[dup] == first else f" (the file {first} is)"
                raise UserError(
                    f"--observations {given[dup]}: given twice{same}; each file is read once"
                )
        return [(None, g) for g in given]
    names = [f["name"] for f in fields]
    listed = []
    for field in fields:
        if field.get("allowed"):
            listed.append([str(v) for v in field["allowed"]])
        else:
            factor = next(f for f in config["factors"] if str(f["id"]) == field["factor"])
            listed.append([str(lv["id"]) for lv in factor["levels"]])
    first = ",".join(values[0] for values in listed)
    example = f"{first}=logs/{first.replace(',', '-')}.jsonl"
    what = names[0] if len(names) == 1 else ",".join(names)
    choices = "; ".join(f"{n}'s values: {', '.join(v)}" for n, v in zip(names, listed, strict=True))
    out: list[tuple[tuple | None, str]] = []
    for g in given:
        value, eq, path = str(g).partition("=")
        parts = value.split(",") if len(names) > 1 else [value]
        fits = len(parts) == len(names) and all(
            v in values for v, values in zip(parts, listed, strict=True)
        )
        if not eq or (not fits and Path(g).is_file()):
            value, path = None, str(g)  # a file whose records write the fields themselves
        elif not path:
            raise UserError(
                f"--observations {g}: write the file as {what}'s value"
                f"{'s' if len(names) > 1 else ''}, =, and its path (--observations {example});"
                f" {choices}"
            )
        elif len(parts) != len(names):
            raise UserError(
                f"--observations {g}: {value!r} gives {len(parts)} value(s) for the"
                f" {len(names)} fields given per file ({what}, in that order, joined by commas:"
                f" --observations {example})"
            )
        elif not fits:
            name, v = next(
                (n, v) for n, v, values in zip(names, parts, listed, strict=True) if v not in values
            )
            values = listed[names.index(name)]
            raise UserError(
                f"--observations {g}: {v!r} is not a value of {name} (per file): its"
                f" values are {', '.join(values)}"
            )
        first = next((p for _, p in out if _file_key(p) == _file_key(path)), None)
        if first is not None:
            same = "" if first == path else f" (the file {first} is)"
            raise UserError(
                f"--observations {g}: {path} is given twice{same}; each file is read once"
            )
        out.append((None if value is None else tuple(parts), path))
    return out


def _file_key(path: str):
    """What tells a file from another however its path is written (``a.jsonl``,
    ``./a.jsonl``, a link to it): its device and inode, else its resolved path."""
    import os

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path) if "\0" not in str(path) else str(path)
    return (st.st_dev, st.st_ino)


def _read_observation_files(module, contract, files) -> tuple[Any, str]:
    """(the records of several observations files read as one log, file after file, each
    record located at its file's line; the files named for a message). Each file is read
    and checked as a log of its own. A file named with the values of the fields given per file
    gives them to every record that leaves a field out (a record that writes another value is
    refused at its line); a file named without them writes the fields in every record."""
    from prereg.columnar import ABSENT, RecordColumns, concatenated

    fields = [f["name"] for f in _per_file_fields(contract)]
    # how a file is named with its values: VALUE=PATH, or MODEL,SEED=PATH for several fields
    spelled = "VALUE" if len(fields) == 1 else ",".join(n.upper() for n in fields)
    parts, problems = [], []
    for values, path in files:
        records = _read(module, contract, path)
        if not isinstance(records, RecordColumns):
            records = RecordColumns.from_dicts([f["name"] for f in contract["fields"]], records)
        if values is None and len(records):
            unwritten = [
                n
                for n in fields
                if records.columns.get(n) is None or records.absent.get(n) == len(records)
            ]
            if unwritten:  # a harness's log named without its values: once for the file
                problems.append(
                    f"{path}: no record writes {' or '.join(unwritten)}; name the file with"
                    f" {'its value' if len(fields) == 1 else 'their values'}"
                    f" (--observations {spelled}={path}"
                    f"{'' if len(fields) == 1 else ', the values in that order'})"
                )
                continue
        for k, name in enumerate(fields):
            value = None if values is None else values[k]
            named = "" if values is None else ",".join(values) + "="
            col = records.columns.get(name)
            if col is not None and records.absent.get(name) == len(records):
                col = None  # every record leaves it out
            if value is not None and col is None:
                records.columns[name] = [value] * len(records)  # no record writes it: the file's
                records.absent.pop(name, None)
                continue
            col = col if col is not None else [ABSENT] * len(records)
            lines = records.lines if records.lines is not None else range(1, len(col) + 1)
            for j, v in enumerate(col):
                if len(problems) >= 20:
                    break
                if value is None and v is ABSENT:
                    problems.append(
                        f"{path}:{lines[j]}: {name} is absent; write it in every record, or"
                        f" name the file with {'its value' if len(fields) == 1 else 'their values'}"
                        f" (--observations {spelled}={path})"
                    )
                elif value is not None and v is not ABSENT and v != value:
                    problems.append(
                        f"{path}:{lines[j]}: {name} is {v!r}, and the file is given as"
                        f" {name} {value!r} (--observations {named}{path})"
                    )
            if value is not None and records.absent.get(name):
                records.columns[name] = [value if v is ABSENT else v for v in col]
                records.absent.pop(name, None)
        parts.append((path, records))
    if problems:
        raise UserError(
            f"{len(problems)} problem(s) with {', '.join(fields)} (given per file)",
            problems=problems,
        )
    names = [f["name"] for f in contract["fields"]]
    return concatenated(names, parts), ", ".join(p for _, p in files)


def _parallel(args: argparse.Namespace) -> dict[str, Any] | None:
    """``score``'s reading in partitions (``--workers``, ``--scheduler``,
    ``--partition-bytes``), checked before any file is read; None for one process."""
    from prereg import partitioned, runner

    workers = getattr(args, "workers", None)
    scheduler = getattr(args, "scheduler", None)
    size = getattr(args, "partition_bytes", None)
    if workers is not None and workers < 1:
        raise UserError(f"--workers: must be at least 1 (got {workers})")
    if scheduler is not None:
        runner.scheduler_address(scheduler)
    size = partitioned.DEFAULT_BYTES if size is None else partitioned.partition_bytes(size)
    if scheduler is None and (workers or 1) == 1 and getattr(args, "partition_bytes", None) is None:
        return None
    return {"workers": workers or 1, "scheduler": scheduler, "size": size}


def score(ctx: StudyContext, args: argparse.Namespace) -> int:
    out = output_file(args.out)
    md = out.with_suffix(".md")
    refuse_report_on_output(out, md)
    refuse_existing(out, md)
    module = _module(ctx, args)
    from prereg.console import console_of

    # a big input's stages, on a terminal: the observations read, the figures, the files
    progress = console_of(args).progress("score", 3, unit="steps")
    try:
        return _score(ctx, args, module, out, md, progress)
    finally:
        progress.close()


def _score(ctx: StudyContext, args: argparse.Namespace, module, out: Path, md: Path, progress):
    config = ctx.config
    items_path = getattr(args, "items", None)
    _READ_DIGESTS.clear()  # only what this command reads names its inputs
    parallel = _parallel(args)
    obs_contract = _contract(config, "observation")
    given = args.observations if isinstance(args.observations, list) else [args.observations]
    files = _observation_files(config, obs_contract, given)
    # several files, or a field given per file: the files are read and checked one by one
    several = len(files) > 1 or bool(_per_file_fields(obs_contract))
    if several and parallel is not None:
        raise UserError(
            "--workers, --scheduler and --partition-bytes read one observations file in"
            " partitions; several files (or a file with a value given per file) are scored in"
            " one process: leave them out"
        )
    source = files[0][1]
    row_field = attempt_policy.row_name(config["attempts"])
    reduced = None if several else _bucketed(config, module, args, source, out, parallel)
    if reduced is not None:
        table, reduced = reduced
        records = None
    else:
        table = _items_table(config, module, items_path, parallel)
        if several:
            records, source = _read_observation_files(module, obs_contract, files)
        else:
            # one field names a manifest row: each observation's row id held once, the table's
            named = table is not None and len(row_field) == 1
            share = {row_field[0]: (table.index, table.ids)} if named else None
            records = _read(module, obs_contract, source, parallel, share=share)
    progress.update(1, label="observations read")
    if table is None:
        table = from_items(
            config,
            obs_contract,
            records,
            source,
            row_field=row_field,
            complete=False,
            ignore_unplaced=config["attempts"].get("unknown_rows") == "ignore",
            lines=records.lines if several else None,
        )
    rules = importlib.import_module(f"{module.__name__}.rules")
    doc = score_document(config, rules, table, records, source, reduced=reduced)
    progress.update(2, label="figures and verdicts")
    fields = [f["name"] for f in _per_file_fields(obs_contract)]
    if several:
        observations: Any = [
            {
                **_input(path),
                **({"perFile": dict(zip(fields, values, strict=True))} if values else {}),
            }
            for values, path in files
        ]
    else:
        observations = _input(source)
    doc = {
        "decision": doc.pop("decision"),
        "study": ctx.study_id,
        "version": ctx.version,
        "specDigest": ctx.spec_digest,
        "inputs": {
            **({"items": _input(items_path)} if items_path else {}),
            "observations": observations,
        },
        **doc,
    }
    write_files_new(
        [
            (out, json.dumps(doc, indent=2, ensure_ascii=False) + "\n", 0o644),
            (md, score_markdown(config, module, doc), 0o644),
        ]
    )
    progress.update(3, label="written")
    progress.close()  # the bar's line ends before the command's own lines
    verdicts = ", ".join(f"{h} {v}" for h, v in doc["verdicts"].items())
    if not doc["gates"]:
        gate = "no gate registered"
        rows = doc.get("rows") or {}
        seen, registered = rows.get("observed"), rows.get("registered")
        if isinstance(seen, int) and isinstance(registered, int) and seen < registered:
            # nothing stops a decision on part of the data: say how much of it there was
            gate += f" and {seen:,} of {registered:,} registered rows observed"
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


def _bucketed(config, module, args: argparse.Namespace, obs_path: str, out: Path, parallel):
    """(row table, :class:`prereg.bucketed.Reduced`) of a manifest and its observations
    reduced in buckets (:mod:`prereg.bucketed`): when score runs in partitions, or its
    inputs are large, and the study has a manifest (JSONL, Parquet or CSV files; a row named
    by one field or several, the manifest's rows expanded or not, units or not: a row's
    records are all in the bucket of its first naming field); None to score in one process."""
    from prereg import bucketed
    from prereg.records import _column_decoders
    from prereg.tabular import COLUMNAR

    items_path = getattr(args, "items", None)
    if items_path is None or not _has(config, "items"):
        return None
    policy = config["attempts"]
    paths = [Path(items_path), Path(obs_path)]
    if not all(p.is_file() for p in paths):
        return None
    from prereg.partitioned import input_bytes

    if parallel is None and sum(map(input_bytes, paths)) < bucketed.LARGE_BYTES:
        return None
    from prereg.tabular import is_json_array

    if any(map(is_json_array, paths)):
        return None  # one JSON document is read whole, in one process
    items, obs = _contract(config, "items"), _contract(config, "observation")
    classes = [_record_class(module, items), _record_class(module, obs)]
    if any(c.FORMAT != "jsonl" for c in classes):
        return None
    # a JSONL file is read by the typed decoder; Parquet and CSV files by pyarrow, checked
    # on columns (a contract neither can vouch for is read record by record, in one process)
    if any(
        p.suffix.lower() not in COLUMNAR and _column_decoders(str(c.SCHEMA)) is None
        for p, c in zip(paths, classes, strict=True)
    ):
        return None
    # the manifest's fields once expanded (each task expands its own records), which name a
    # row as one process names it
    expanded = attempt_policy.expanded_manifest(policy, obs, items, [])[0]
    try:
        name = attempt_policy.manifest_name(policy, obs, expanded)
    except ValueError:
        return None
    inputs = bucketed.Inputs(
        str(items_path), str(classes[0].SCHEMA), name[0],
        str(obs_path), str(classes[1].SCHEMA), attempt_policy.row_name(policy)[0],
        tuple(items["fields"]), tuple(obs["fields"]), tuple(name),
    )  # fmt: skip
    # a row's id is read past the attempt policy only if something names its field: else
    # it is not gathered (ten million ids are about 700 MiB); a row named by several fields,
    # or one a unit's message may name, is always gathered
    rules_file = str(Path(module.__file__).parent / "rules.py")
    item_names = [f["name"] for f in expanded["fields"]]
    obs_names = [f["name"] for f in obs["fields"]]
    gather = len(name) > 1 or bool(config.get("units"))
    if not gather and not bucketed.names_read(config, rules_file, name[0]):
        item_names.remove(name[0])
    if not bucketed.names_read(config, rules_file, inputs.obs_field):
        obs_names.remove(inputs.obs_field)
    parallel = parallel or {}
    reduced = bucketed.reduce_rows(
        config, items, inputs, item_names, obs_names,
        workers=parallel.get("workers", 1), scheduler=parallel.get("scheduler"),
        size=parallel.get("size"), spill_dir=out.parent if out.parent.is_dir() else None,
        obs_contract=obs,
    )  # fmt: skip
    if reduced is None:
        return None
    cells = tuple(config["cells"])
    if config.get("row_counts") == "manifest":
        cells = manifest_counts(config, cells, reduced.cell, str(items_path))
    else:
        check_cell_counts(cells, reduced.cell, str(items_path))
    if len(name) > 1:  # each row's name: the tuple of its naming fields' values
        ids = list(zip(*(reduced.item_columns[f] for f in name), strict=True))
    else:
        ids = reduced.item_columns.get(name[0], bucketed.Unnamed(reduced.rows))
    _READ_DIGESTS.update(reduced.digests)
    table = RowTable(ids=ids, cell=reduced.cell, cells=cells, columns=reduced.item_columns)
    return table, reduced


def unit_lines(units: Sequence[Mapping[str, Any]], shown: int = 20) -> list[str]:
    """SCORE.md's Units section: each level's counts and its first excluded units with the
    rules they failed (SCORE.json lists every one)."""
    if not units:
        return []
    lines = ["", "## Units", "", "| unit | units | included | excluded |", "|---|---|---|---|"]
    for u in units:
        lines.append(f"| `{u['id']}` | {u['units']} | {u['included']} | {u['excluded']} |")
    for u in units:
        if not u["excludedUnits"]:
            continue
        lines += ["", f"Excluded `{u['id']}` units ({u['excluded']}):", ""]
        for x in u["excludedUnits"][:shown]:
            name = ", ".join(f"{k}={v}" for k, v in x["unit"].items())
            lines.append(f"- {name}: {'; '.join(x['reasons'])}")
        if len(u["excludedUnits"]) > shown:
            lines.append(f"- … and {len(u['excludedUnits']) - shown} more (SCORE.json lists all)")
    return lines


def _fmt(x) -> str:
    return "–" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def _displays(config):
    """(figure, P value) formatters of SCORE.md as the constant ``reporting`` registers them:
    a figure to ``decimals`` places, a P value to ``p_value_digits`` significant digits (a
    registered threshold is shown as written; SCORE.json keeps every figure whole)."""
    rep = _reporting(config)
    places, digits = int(rep["decimals"]), int(rep["p_value_digits"])

    def figure(x) -> str:
        if not isinstance(x, float):
            return _fmt(x)
        if not math.isfinite(x):
            return _fmt(x)
        text = f"{x:.{places}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    def p_value(x) -> str:
        if not isinstance(x, float) or not math.isfinite(x):
            return _fmt(x)
        return f"{x:.{digits}g}"

    return figure, p_value


def score_markdown(config, module: ModuleType, doc: Mapping[str, Any]) -> str:
    """SCORE.md: the verdicts, gates, cells, estimates and contrasts of a score document,
    figures shown as the constant ``reporting`` registers (:func:`_displays`)."""
    fig, pval = _displays(config)
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
        failing = ", ".join(f"`{f['cell']}` ({fig(f['figure'])})" for f in g["failures"]) or "–"
        lines.append(
            f"| `{g['id']}` | {g['metric']} | {g['op']} {g.get('valueExact') or _fmt(g['value'])} | {'yes' if g['passed'] else 'no'} | {failing} |"
        )
    metric_ids = list(doc["cells"][0]["metrics"]) if doc["cells"] else []
    lines += unit_lines(doc.get("units") or [])
    lines += ["", "## Cells", "", "| cell | rows | observed | " + " | ".join(metric_ids) + " |"]
    lines.append("|---|---|---|" + "---|" * len(metric_ids))
    for c in doc["cells"]:
        figs = []
        for mid in metric_ids:
            f = c["metrics"][mid]
            if "lower" in f:
                figs.append(f"{fig(f['estimate'])} [{fig(f['lower'])}, {fig(f['upper'])}]")
            else:
                figs.append(fig(f["estimate"]))
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
                f"| `{e['id']}` | {size_text(e)} | {fig(e['estimate'])} [{fig(e['lower'])}, {fig(e['upper'])}] ({e['interval']}, {e['level']:g}) |"
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
                f"{fig(c['estimate'])} [{fig(c['lower'])}, {fig(c['upper'])}] | {test} | "
                f"{pval(c['p'])} | {pval(c['adjustedP'])} |"
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
            # an infinite figure is null in SCORE.json and named in "infinite" with its sign
            infinite = a.get("infinite") or ()

            def show(name, a=a, infinite=infinite):
                if f"+{name}" in infinite:
                    return "∞"
                if f"-{name}" in infinite:
                    return "−∞"
                return (pval if name == "p" else fig)(a[name])

            stat = show("statistic")
            stat = whole_statistic(a) or stat
            if a["statistic"] is not None and a.get("statisticName"):
                stat = f"{a['statisticName']} = {stat}"
            df = a["df"]

            def dfs(d):  # a whole number of degrees of freedom as a whole number
                return _fmt(int(d)) if isinstance(d, float) and d.is_integer() else fig(d)

            df = ", ".join(dfs(d) for d in df) if isinstance(df, list) else dfs(df)
            lines.append(
                f"| `{a['id']}` | {a['method']} | {show('estimate')} [{show('lower')},"
                f" {show('upper')}] | {show('se')} | {stat} | {df} | {show('p')} |"
                f" {pval(a['adjustedP'])} |"
            )
        lines += ["", "Options as registered:", ""]
        lines += [
            f"- `{a['id']}`: "
            + (", ".join(f"{k} {json.dumps(v)}" for k, v in a["options"].items()) or "none")
            for a in doc["analyses"]
        ]
        averaged = [a for a in doc["analyses"] if "rowsA" in (a.get("counts") or {})]
        if averaged:  # pair_rows mean: each side of a pair the mean of its rows
            lines += ["", "Analyses of averaged pairs (pair_rows mean):", ""]
            lines += [f"- `{a['id']}`: {averaged_pairs_text(a['counts'])}" for a in averaged]
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


def _condition_text(c: Mapping[str, Any]) -> str:
    """A condition in words: ``latency_ms gt 100``."""
    rhs = c.get("other") if c.get("other") is not None else c.get("value", c.get("values"))
    return f"{c.get('field')} {c.get('op')}" + ("" if rhs is None else f" {rhs}")


def _outcome_indicator(
    config, field: str, scenario: Mapping[str, Any]
) -> tuple[float, float] | None:
    """``(value when right, value when wrong)`` when ``field`` is a derived field that codes
    the scenario's outcome as two numbers, `cases: [{when: [{field: <outcome>, op: eq, value:
    true}], value: 1}, {value: 0}]` (or the outcome eq false first; for an outcome written as
    ``outcome_values``, eq one of those): a mean of it then has as truth the cell's rate of
    each (None for any other derived field)."""
    outcome = scenario.get("outcome")
    if not outcome:
        return None
    wrong, right = registered.outcome_values(scenario)
    d = next((d for d in config.get("derived_fields") or () if str(d.get("id")) == field), None)
    cases = (d or {}).get("cases")
    if not isinstance(cases, (list, tuple)) or len(cases) != 2 or d.get("test") is not None:
        return None
    first, rest = cases
    when = first.get("when") or []
    values = (first.get("value"), rest.get("value"))
    if rest.get("when") or len(when) != 1 or any(isinstance(v, bool) for v in values):
        return None
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return None
    c = when[0]
    if set(c) != {"field", "op", "value"} or str(c["field"]) != outcome or c["op"] != "eq":
        return None
    v = c["value"]
    hit, other = float(values[0]), float(values[1])
    if type(v) is type(right) and v == right:
        return (hit, other)
    if type(v) is type(wrong) and v == wrong:
        return (other, hit)
    return None


def _policy_picks_by(policy: Mapping[str, Any], fields: set[str]) -> bool:
    """Whether the attempt policy picks the counted attempt by the value of one of ``fields``:
    a ``where`` or ``select`` condition on it, or a failed condition other than ``is_null`` (an
    attempt without the number failed, so the counted one carries the number drawn for it:
    that reads the field but picks no attempt by its value)."""
    for part in ("failed", "failed_if_any", "where", "select"):
        for c in policy.get(part) or ():
            if not conditions_read([c]) & fields:
                continue
            if part in ("failed", "failed_if_any") and c.get("op") == "is_null":
                continue
            return True
    return False


def _reads_any(config, comp: Mapping[str, Any], fields: set[str]) -> bool:
    """Whether a metric's ``compute`` reads one of ``fields``: itself, through a derived field,
    or because the attempt policy (which picks the counted attempt) picks it by one
    (:func:`_policy_picks_by`)."""
    policy = config.get("attempts") or {}
    if _policy_picks_by(policy, fields):
        return True
    reads = set(fields)
    for d in config.get("derived_fields") or ():
        used = derived_reads(d)
        if used & reads:
            reads.add(str(d["id"]))
    used = conditions_read(comp.get("where")) | conditions_read(comp.get("among"))
    if comp.get("field"):
        used.add(str(comp["field"]))
    return bool(used & reads)


def drawn_metrics(config) -> dict[str, str]:
    """Metrics that read a number a scenario draws by ``values`` (through derived fields, or
    every metric when the attempt policy reads one), each with the reason: their figures
    depend on more than whether each row's outcome is right, which is all diagnose draws."""
    every = [m["id"] for m in config.get("metrics") or () if m.get("compute")]
    if config.get("units"):
        # rows of excluded units count in no metric but coverage: counts per cell cannot say
        why = "the study registers units (rows of excluded units count in no metric)"
        return dict.fromkeys(every, why)
    for sc in config.get("scenarios") or ():
        if registered.structured(sc):
            why = f"scenario {sc['id']} draws clustered rows or ratings"
            return dict.fromkeys(every, why)
    if not _has(config, "items") and len(attempt_policy.row_name(config["attempts"])) > 1:
        why = "rows are named by several key fields (an item under each arm): drawn whole"
        return dict.fromkeys(every, why)
    drawn: dict[str, str] = {}
    for sc in config.get("scenarios") or ():
        for v in sc.get("values") or ():
            drawn.setdefault(str(v["field"]), f"scenario {sc['id']} draws {v['field']!r}")
    for sc in config.get("scenarios") or ():
        if sc.get("pairing"):
            # the arms of an item are drawn together: counts of separate cells are dependent
            why = f"scenario {sc['id']} pairs rows by {sc['pairing']['field']!r}"
            return {m["id"]: why for m in config.get("metrics") or () if m.get("compute")}
        if sc.get("calibration"):
            # the chance of a right outcome follows a drawn confidence: no metric is a count
            # of rows of each kind at the scenario's rates
            why = (
                f"scenario {sc['id']} draws its outcome from a calibration curve of"
                f" {sc['calibration'][0]['field']!r}"
            )
            return {m["id"]: why for m in config.get("metrics") or () if m.get("compute")}
    if not drawn:
        return {}
    policy = config.get("attempts") or {}
    read = set()
    for part in ("failed", "failed_if_any", "where", "select"):
        read |= conditions_read(policy.get(part))
    policy_reads = sorted(read & set(drawn))
    reads = dict(drawn)
    for d in config.get("derived_fields") or ():
        used = derived_reads(d)
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
        used = conditions_read(c.get("where")) | conditions_read(c.get("among"))
        if c.get("field"):
            used.add(str(c["field"]))
        via = sorted(used & set(reads))
        if via:
            out[m["id"]] = reads[via[0]] if via[0] not in drawn else drawn[via[0]]
    return out


def expected_number(v: Mapping[str, Any], log: bool) -> float | None:
    """The expectation of a value entry's number (of its natural log with ``log``), where a
    closed form exists: normal, its mean (clipped to low/high: the expectation of the clipped
    normal); lognormal without clipping, exp(mean + sd²/2) (log: mean); uniform, (low +
    high)/2 (log: (h ln h − l ln l)/(h − l) − 1 for 0 < l < h).  None otherwise."""
    dist = v["distribution"]
    low, high = v.get("low"), v.get("high")
    if dist == "uniform":
        lo, hi = float(low), float(high)
        if not log:
            return (lo + hi) / 2
        if lo <= 0:
            return None
        return math.log(lo) if hi == lo else (hi * math.log(hi) - lo * math.log(lo)) / (hi - lo) - 1
    mu, sd = float(v.get("mean") or 0.0), float(v.get("sd") or 0.0)
    if dist == "lognormal":
        if low is not None or high is not None:
            return None
        return mu if log else math.exp(mu + sd * sd / 2)
    if log:
        return None
    if sd == 0:
        return min(
            max(mu, float("-inf") if low is None else float(low)),
            float("inf") if high is None else float(high),
        )
    from statistics import NormalDist

    nd = NormalDist()
    a = -math.inf if low is None else (float(low) - mu) / sd
    b = math.inf if high is None else (float(high) - mu) / sd
    cdf = lambda t: 0.0 if t == -math.inf else 1.0 if t == math.inf else nd.cdf(t)  # noqa: E731
    pdf = lambda t: 0.0 if math.isinf(t) else nd.pdf(t)  # noqa: E731
    out = mu * (cdf(b) - cdf(a)) + sd * (pdf(a) - pdf(b))
    if low is not None:
        out += float(low) * cdf(a)
    if high is not None:
        out += float(high) * (1.0 - cdf(b))
    return out


def expected_chance(entry: Mapping[str, Any]) -> float | None:
    """The chance that a row is right under calibration entry ``entry``, over its drawn
    confidence C (clipped into [0, 1]): E[C] on the calibrated curve, E[max(C − m, 0)] when
    over-confident by the margin m.  Closed forms: a uniform C on [l, h], (l + h)/2 − m when
    m ≤ l, (h − m)²/(2(h − l)) when l < m < h, 0 when m ≥ h; a normal C clipped to [l, h], the
    clipped normal's expectation with its lower clip raised to m, less m (C − m is positive
    exactly where C is clipped below at m instead).  None for a lognormal or rounded
    confidence."""
    v = _confidence_entry(entry)
    if v.get("decimals") is not None or v["distribution"] not in ("uniform", "normal"):
        return None
    m = 0.0 if entry["curve"] == "calibrated" else float(entry.get("margin") or 0.0)
    lo, hi = float(v["low"]), float(v["high"])
    if m <= 0.0:
        return expected_number(v, False)
    if v["distribution"] == "uniform":
        if m >= hi:
            return 0.0
        if m <= lo:
            return (lo + hi) / 2 - m
        return (hi - m) ** 2 / (2 * (hi - lo))
    if m >= hi:
        return 0.0
    return expected_number({**v, "low": max(lo, m)}, False) - m


def registered_manifest(config) -> RowTable:
    """The registered rows of a study with an item manifest: the manifest ``items`` writes,
    expanded by the attempt policy's ``expand`` as ``score`` expands a real one."""
    contract = _contract(config, "items")
    fields = contract["fields"]
    row = next(f["name"] for f in fields if f.get("role") == "row")
    split = next((f["name"] for f in fields if f.get("role") == "split"), None)
    item = next((f["name"] for f in fields if f.get("role") == "item"), None)
    per = _expansion_size(config)
    recs = [r for rows in manifest_rows(config, fields, row, split, item, per) for r in rows]
    if per == 1:
        return from_items(config, contract, recs, "the registered rows")
    obs = _contract(config, "observation")
    contract, recs, lines = attempt_policy.expanded_manifest(
        config["attempts"], obs, contract, recs
    )
    name = attempt_policy.manifest_name(config["attempts"], obs, contract)
    return from_items(config, contract, recs, "the registered rows", row_field=name, lines=lines)


class DrawnRows:
    """The registered rows of a factorial study drawn whole for diagnose's row path
    (:mod:`prereg.diagnose.rows`): every simulated study is a set of observation records, as
    ``simulate`` writes them (:class:`RecordWriter`), scored by :func:`row_data` as ``score``
    scores observations.

    A simulated study under a condition (a scenario at one effect size) is a function of its
    64-bit words (:class:`~prereg.diagnose.rows.Stream`, laid out by :class:`WordLayout`), so
    a block of studies is drawn at once (:meth:`draw_words`): the observed rows of each cell
    are the ``floor(coverage · rows)`` rows of the cell with the smallest words (a uniformly
    random subset); a row's first attempt failed when the uniform of its word is below the
    scenario's rate; a row is right when the uniform of its outcome word (under a pairing:
    Φ of the latent √ρ·w + √(1 − ρ)·e, w the normal of its item's word, e of its own) is
    below its chance: the scenario's rate for its cell, or the registered calibration curve at
    its drawn confidence.  A confidence or number comes from its row's word for the field
    (:func:`word_values`: a uniform entry's bounds at the word's uniform, another
    distribution at the word's normal, Φ⁻¹ at the midpoint of the top 52 bits, as
    ``simulate`` draws normals); under a pairing, from the field's paired latent
    (:func:`latent_values`).  A structured scenario's study draws from a generator of its
    own."""

    def __init__(self, config):
        self.config = config
        self.scenarios = registered.registered(config)
        if _has(config, "items"):
            self.table = registered_manifest(config)
        else:
            self.table = registered_rows(config)
        self.cell_rows = [
            np.flatnonzero(self.table.cell == c) for c in range(len(self.table.cells))
        ]
        self._writers: dict[str, RecordWriter] = {}
        self._items: dict[str, tuple[np.ndarray, int]] = {}
        self._layouts: dict[str, Any] = {}
        self._drawn: tuple[int, RowTable] | None = None  # the last structured study's table
        self._models: dict[str, Any] = {}  # scenario -> column_model
        self._entry_tables: dict[tuple[str, str], np.ndarray] = {}
        self._calibrated: dict[str, list[np.ndarray]] = {}
        self._word_layouts: dict[str, WordLayout] = {}
        self._tiles: tuple[int, dict[str, Column], np.ndarray] | None = None

    def prepare(self, scenario_ids) -> None:
        """Refuse, before any simulation, a scenario whose records cannot be written."""
        for sid in scenario_ids:
            self.writer(sid)

    def writer(self, sid: str) -> RecordWriter:
        w = self._writers.get(sid)
        if w is None:
            w = self._writers[sid] = RecordWriter(self.config, self.scenarios[sid], "diagnose")
        return w

    def items(self, field: str) -> tuple[np.ndarray, int]:
        """(item code per row, number of items) of the manifest field naming the item."""
        got = self._items.get(field)
        if got is None:
            values = [str(x) for x in self.table.columns[field]]
            order = {v: k for k, v in enumerate(dict.fromkeys(values))}
            got = self._items[field] = (
                np.array([order[v] for v in values], dtype=np.int64),
                len(order),
            )
        return got

    def _entries(self, w: RecordWriter, name: str, entries) -> np.ndarray:
        """The entry table of ``name`` under ``w``'s scenario (worked out once)."""
        key = (str(w.scenario_id), name)
        got = self._entry_tables.get(key)
        if got is None:
            got = self._entry_tables[key] = _entries_of(self.table.cells, name, entries)
        return got

    def _calibration_rows(self, w: RecordWriter) -> list[np.ndarray]:
        """The rows each calibration entry of ``w``'s scenario draws (worked out once)."""
        key = str(w.scenario_id)
        got = self._calibrated.get(key)
        if got is None:
            got = self._calibrated[key] = calibration_rows(w, self.table)
        return got

    def word_layout(self, sid: str) -> WordLayout:
        """Where a study under scenario ``sid`` reads its draws (worked out once)."""
        got = self._word_layouts.get(sid)
        if got is None:
            w = self.writer(sid)
            items = 0 if w.pairing is None else self.items(str(w.pairing["field"]))[1]
            got = self._word_layouts[sid] = WordLayout(w, len(self.table), items)
        return got

    def records(self, cond, stream, study: int) -> list[dict]:
        """The observation records of simulated study ``study`` under ``cond``."""
        from .structure import applies

        w = self.writer(cond.scenario)
        if applies(self.config, self.scenarios[cond.scenario]):
            return self._structured(cond, w, stream.generator(study))
        observed, failed, right, numbers = self.draw(cond, stream, study)
        table = self.table
        out: list[dict] = []
        values = [(k, x, w.integer.get(k, False)) for k, x in numbers.items()]
        for i in np.flatnonzero(observed).tolist():
            cell = table.cells[int(table.cell[i])]
            mine = {}
            for k, x, integer in values:
                got = float(x[i])
                if not math.isnan(got):
                    mine[k] = int(got) if integer else got
            out.extend(w.records(table.ids[i], cell, bool(failed[i]), bool(right[i]), 0, mine))
        return out

    def draw(self, cond, stream, study: int):
        """(observed, failed first attempt, right, numbers) of the rows of simulated study
        ``study`` (not a structured scenario's): :meth:`draw_words` of its words, the numbers
        float arrays with NaN where nothing is drawn."""
        width = self.word_layout(cond.scenario).width
        observed, failed, right, numbers = self.draw_words(cond, stream.words(study, 1, width))
        return observed[0], failed[0], right[0], {k: x[0] for k, x in numbers.items()}

    def draw_words(self, cond, words: np.ndarray):
        """(observed, failed first attempt, right, numbers) of the rows of the studies whose
        words are ``words`` ((studies, width) uint64, :class:`WordLayout`), each a
        (studies, rows) array (numbers: per field, floats with NaN where nothing is drawn), as
        the class describes."""
        from scipy.special import ndtr

        table = self.table
        w = self.writer(cond.scenario)
        lay = self.word_layout(cond.scenario)
        size, n = words.shape[0], len(table)
        observed = np.ones((size, n), dtype=bool)
        for c, rows in enumerate(self.cell_rows):
            keep = int(cond.kept[c])
            if keep >= rows.size:
                continue
            observed[:, rows] = False
            if keep:  # the rows with the smallest words (ranked as their uniforms are)
                ranks = np.argsort(lay.part(words, "observed")[:, rows], axis=1, kind="stable")
                observed[np.arange(size)[:, None], rows[ranks[:, :keep]]] = True
        failed = uniforms(lay.part(words, "failed")) < cond.failed_attempt_rate
        pairing = w.pairing
        if pairing is not None:
            codes, _ = self.items(str(pairing["field"]))
            rho = float(pairing["correlation"])

            def latent(what: str) -> np.ndarray:
                shared = normals(lay.part(words, f"items:{what}"))[:, codes]
                own = normals(lay.part(words, what if what == "outcome" else f"value:{what}"))
                return math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * own

            u = ndtr(latent("outcome"))
        else:
            u = uniforms(lay.part(words, "outcome"))
        chance = np.broadcast_to(np.asarray(cond.rate, dtype=np.float64)[table.cell], (size, n))
        numbers: dict[str, np.ndarray] = {}
        if w.calibration:
            chance = chance.copy()
            held = lay.part(words, "confidence")
            for entry, rows in zip(w.calibration, self._calibration_rows(w), strict=True):
                if rows.size == 0:
                    continue
                conf = word_values(_confidence_entry(entry), held[:, rows], False)
                chance[:, rows] = chance_right(entry, conf)
                col = numbers.setdefault(str(entry["field"]), np.full((size, n), np.nan))
                col[:, rows] = conf
        right = u < chance
        for name, entries in w.values:
            which = self._entries(w, name, entries)[table.cell, right.astype(np.int64)]
            missing = np.flatnonzero((which < 0).any(axis=0))
            if missing.size:
                cell = table.cells[int(table.cell[missing[0]])]
                raise UserError(
                    f"diagnose: scenario {cond.scenario} draws no value of {name!r} for a row of"
                    f" cell {cell['id']} (end the field's entries with one without where)"
                )
            z = latent(name) if pairing is not None else None
            held = lay.part(words, f"value:{name}")
            col = numbers.setdefault(name, np.full((size, n), np.nan))
            for j, v in enumerate(entries):
                hit = which == j
                if not hit.any():
                    continue
                if z is None:
                    col[hit] = word_values(v, held[hit], w.integer[name])
                else:
                    col[hit] = latent_values(v, z[hit], w.integer[name])
        return observed, failed, right, numbers

    def batch(self, cond, stream, first: int, size: int):
        """Simulated studies ``first`` to ``first + size − 1`` drawn at once, the same rows as
        :meth:`records` draws each, as the columns :func:`row_data` would give each study's
        records, all studies' rows one after another: ``(observed, columns)``, the observed
        mask and the columns of ``size · len(table)`` rows; None where the records cannot be
        bypassed this way (a structured scenario, units, derived fields, a row named by
        several fields, or an attempt policy whose counted attempt is not fixed by the row's
        cell, first attempt and outcome: :meth:`column_model`)."""
        from .structure import applies

        if applies(self.config, self.scenarios[cond.scenario]):
            return None
        model = self.column_model(cond.scenario)
        if model is None:
            return None
        counted, fields, model_read = model
        table = self.table
        n = len(table)
        width = self.word_layout(cond.scenario).width
        observed, failed, right, numbers = self.draw_words(cond, stream.words(first, size, width))
        kind = (table.cell * 4)[None, :] + failed * 2 + right
        for name in model_read:  # whether each number the policy reads is there
            x = numbers.get(name)
            kind = kind * 2 + (~np.isnan(x) if x is not None else 0)
        kind = kind.reshape(-1)
        seen = observed.reshape(-1) & counted[kind]
        tiled, ids = self._tiled(size)
        columns: dict[str, Any] = dict(tiled)
        for name, how in fields.items():
            if how[0] == "id":
                columns[name] = Column.strings(ids, ~seen)
            elif how[0] == "constant":
                columns[name] = how[1].take(kind, seen)
            else:  # a drawn number where the kind of row writes it, else a constant or null
                _, src, writes, const = how
                x = numbers[src].reshape(-1) if src in numbers else np.full(size * n, np.nan)
                x = np.where(writes[kind], x, const[kind])
                columns[name] = Column.numbers(np.where(seen, x, np.nan))
        return seen.reshape(size, n), columns

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_tiles"] = None  # a block's tiled columns are not worth shipping to a worker
        return state

    def _tiled(self, size: int) -> tuple[dict[str, Column], np.ndarray]:
        """The item columns of ``size`` studies' rows one after another, and their row names
        (the same for every block of that size: kept for the last size asked)."""
        got = self._tiles
        if got is None or got[0] != size:
            table = self.table
            rows = np.tile(np.arange(len(table)), size)
            present = np.ones(rows.size, dtype=bool)
            columns = {
                name: as_column(values).take(rows, present)
                for name, values in table.columns.items()
            }
            got = self._tiles = (size, columns, np.asarray(table.ids, dtype=object)[rows])
        return got[1], got[2]

    @property
    def record_fields(self) -> frozenset[str]:
        """The observation fields (their columns come from the records)."""
        return frozenset(f["name"] for f in _contract(self.config, "observation")["fields"])

    def batch_metrics(self, seen: np.ndarray, columns):
        """The row metrics of a block's columns (:meth:`batch`), as :func:`row_data` computes
        each study's (a study without units): every row on its own, so all at once."""
        return row_metrics(self.config["metrics"], columns, seen.reshape(-1))

    def column_model(self, sid: str):
        """How the counted attempt of a row reads under scenario ``sid``, worked out by the
        engine's own code (:func:`attempt_policy.counted`, :func:`attempt_policy.record_columns`)
        on prototype rows: one per cell, first attempt failed or not and outcome right or not,
        written by :class:`RecordWriter` twice with different marker numbers (and, for each drawn
        number the policy reads as null or not, with it and without it).  ``(counted, fields,
        read)``: whether each kind of row ((cell · 4 + failed · 2 + right) · 2^len(read) + one
        bit per number of ``read``, set when it is drawn) is observed, and
        per observation field ``("id",)`` (the row's name), ``("constant", Column per kind)``
        or ``("number", field drawn, kind writes it, constant per kind otherwise)``; None
        when a field is neither (a derived value, a marker changed) or the study registers
        units or derived fields."""
        if sid in self._models:
            return self._models[sid]
        self._models[sid] = model = self._column_model(sid)
        return model

    def _column_model(self, sid: str):
        config = self.config
        table = self.table
        if config.get("units") or config.get("derived_fields"):
            return None
        if any(not isinstance(rid, str) for rid in table.ids):
            return None
        w = self.writer(sid)
        drawn = list(
            dict.fromkeys([str(c["field"]) for c in w.calibration] + [name for name, _ in w.values])
        )
        read = _policy_reads(config["attempts"], drawn)
        if read is None:
            return None
        obs = [f["name"] for f in _contract(config, "observation")["fields"]]
        cells = table.cells
        shapes = [
            (c, k, tuple(bool(p >> (len(read) - 1 - j) & 1) for j in range(len(read))))
            for c in range(len(cells))
            for k in range(4)
            for p in range(2 ** len(read))
        ]
        ids = [f"prototype-{i}" for i in range(len(shapes))]
        index = {rid: i for i, rid in enumerate(ids)}
        runs = []
        for base in (1234.5, 5678.25):
            marks = {name: base + j for j, name in enumerate(drawn)}
            records: list[dict] = []
            for rid, (c, k, present) in zip(ids, shapes, strict=True):
                gone = {name for name, there in zip(read, present, strict=True) if not there}
                mine = {name: x for name, x in marks.items() if name not in gone}
                records.extend(w.records(rid, cells[c], bool(k >> 1), bool(k & 1), 0, mine))
            try:
                chosen, seen = attempt_policy.counted(
                    config["attempts"], records, index, "the prototype rows"
                )
            except UserError:
                return None
            cols = attempt_policy.record_columns(records, chosen, obs)
            runs.append(
                (marks, np.asarray(seen, dtype=bool), {k: v.tolist() for k, v in cols.items()})
            )
        (ma, sa, ca), (mb, sb, cb) = runs
        if not np.array_equal(sa, sb):
            return None
        fields: dict[str, Any] = {}
        for name in obs:
            if name == w.row_field:
                if [v for v, s in zip(ca[name], sa, strict=True) if s] != [
                    r for r, s in zip(ids, sa, strict=True) if s
                ]:
                    return None
                fields[name] = ("id",)
                continue
            src = None
            writes = np.zeros(len(ids), dtype=bool)
            for i, (a, b) in enumerate(zip(ca[name], cb[name], strict=True)):
                hit = [d for d in drawn if a == ma[d] and b == mb[d] and type(a) is float]
                if hit and (src is None or src == hit[0]):
                    src, writes[i] = hit[0], True
                elif hit or not (a == b and type(a) is type(b)):
                    return None
            if src is None:
                col = Column.of(ca[name])
                if col.kind == "mixed":
                    return None
                fields[name] = ("constant", col)
                continue
            const = np.full(len(ids), np.nan)
            for i, a in enumerate(ca[name]):
                if writes[i] or a is None:
                    continue
                if type(a) not in (int, float):
                    return None
                const[i] = float(a)
            fields[name] = ("number", src, writes, const)
        return sa, fields, read

    def cell_rates(self, metric_id: str, cond) -> np.ndarray | None:
        """Per registered cell, the chance that a row's outcome is right, where a proportion or
        coverage metric's truth follows from it as on the counts path (expected rows of each
        kind, :func:`prereg.diagnose.model.expected_counts`, at these chances): the metric
        reads no number a scenario draws (itself, through a derived field or through the
        attempt policy), and each row is right with a chance its cell fixes: the cell's rate
        (under a pairing too: each row's latent is a standard normal), or the expectation of
        the registered calibration curve over the cell's confidences
        (:func:`expected_chance`).  None otherwise: units, a structured scenario, rows named
        by several fields, a curve without a closed-form expectation."""
        from .structure import applies

        config = self.config
        metric = next((m for m in config["metrics"] if m["id"] == metric_id), None)
        comp = (metric or {}).get("compute") or {}
        if comp.get("kind") not in ("proportion", "coverage"):
            return None
        sc = self.scenarios[cond.scenario]
        if config.get("units") or applies(config, sc):
            return None
        if not _has(config, "items") and len(attempt_policy.row_name(config["attempts"])) > 1:
            return None
        w = self.writer(cond.scenario)
        drawn = {name for name, _ in w.values} | {str(c["field"]) for c in w.calibration}
        if _reads_any(config, comp, drawn):
            return None
        rate = np.array(cond.rate, dtype=np.float64)  # per cell (a cell is a row group)
        for c, cell in enumerate(self.table.cells):
            entry = w.calibration_entry(cell)
            if entry is not None:
                got = expected_chance(entry)
                if got is None:
                    return None
                rate[c] = got
        return rate

    def cell_truths(self, metric_id: str, cond, log: bool | None = None) -> np.ndarray | None:
        """Per registered cell, the expected number a ``mean`` or ``geometric_mean`` metric
        averages (on the log scale for a log), over the rows the scenario observes: a row is
        right with its cell's rate and its number comes from the entry its cell and outcome
        select.  None where there is no closed form: a metric with an ``among`` other than its
        field being there, a field the attempt policy or a derived field reads or that is an
        integer, a calibration curve, or an entry without a closed-form expectation (see :func:`expected_number`).  Rounding to
        ``decimals`` is not taken into account.  ``log`` True or False asks for the expected
        log or number whatever the metric averages (a method on the log scale)."""
        if self.truth_problem(metric_id, cond) is not None:
            return None
        metric = next(m for m in self.config["metrics"] if m["id"] == metric_id)
        comp = metric["compute"]
        if log is None:
            log = comp["kind"] == "geometric_mean" or comp.get("transform") == "log"
        field = str(comp["field"])
        w = self.writer(cond.scenario)
        coded = _outcome_indicator(self.config, field, self.scenarios[cond.scenario])
        if coded is not None and field not in dict(w.values):
            if log:
                if min(coded) <= 0:
                    return None
                coded = (math.log(coded[0]), math.log(coded[1]))
            rate = np.asarray(cond.rate, dtype=float)
            return rate * coded[0] + (1.0 - rate) * coded[1]
        entries = dict(w.values)[field]
        which = self._entries(w, field, entries)
        out = np.empty(len(self.table.cells))
        for c in range(len(self.table.cells)):
            got = [expected_number(entries[j], log) if j >= 0 else None for j in which[c]]
            if got[0] is None or got[1] is None:
                return None
            r = float(cond.rate[c])
            out[c] = r * got[1] + (1.0 - r) * got[0]
        return out

    def truth_problem(self, metric_id: str, cond) -> str | None:
        """Why :meth:`cell_truths` has no closed form for a ``mean`` or ``geometric_mean``
        metric under a condition (None: it has one, or the metric is of another kind).

        The attempt policy may read the metric's field to say an attempt failed when the
        number is missing (``failed: [{field: score, op: is_null}]``, the common policy): a
        counted attempt is not failed and carries the number the scenario drew, so the
        expectation stands.  A policy that picks attempts by the number's value (``where``,
        ``select``, or a failed condition other than ``is_null``) truncates its law, which has
        no closed form here."""
        metric = next((m for m in self.config["metrics"] if m["id"] == metric_id), None)
        comp = (metric or {}).get("compute") or {}
        kind = comp.get("kind")
        if kind not in ("mean", "geometric_mean"):
            return None
        among = comp.get("among") or ()
        odd = [c for c in among if c.get("field") != comp.get("field") or c.get("op") != "not_null"]
        if odd:
            # a condition on a field the scenario writes as one value on every successful
            # attempt (a status no entry draws: its first allowed value) holds on every row or
            # on none: it cuts nothing when that value meets it
            defaults = self.writer(cond.scenario).defaults
            odd = [
                c
                for c in odd
                if not (c.get("field") in defaults and _constant_meets(c, defaults[c["field"]]))
            ]
        if odd:
            return (
                f"metric {metric_id} counts only rows where {_condition_text(odd[0])} (its"
                " `among`), which cuts the drawn numbers' law"
            )
        sc = self.scenarios[cond.scenario]
        field = str(comp["field"])
        if sc.get("calibration"):
            return f"scenario {cond.scenario} draws its outcomes by a calibration curve"
        w = self.writer(cond.scenario)
        entries = dict(w.values).get(field)
        outcome = sc.get("outcome")
        if entries is None and _outcome_indicator(self.config, field, sc) is not None:
            # the outcome coded as numbers: each row's number is one value with the row's
            # chance of being right, unless the attempt policy picks attempts by the outcome
            policy = self.config.get("attempts") or {}
            if _policy_picks_by(policy, {field, str(outcome)}):
                return (
                    f"the attempt policy picks attempts by the outcome {outcome!r}, which"
                    f" {field!r} codes"
                )
            return None
        if entries is None:
            return f"scenario {cond.scenario} draws no number for field {field!r} (`values`)"
        if w.integer.get(field):
            return f"field {field!r} is whole-numbered: its drawn numbers are rounded to integers"
        policy = self.config.get("attempts") or {}
        for part in ("failed", "failed_if_any", "where", "select"):
            for k, c in enumerate(policy.get(part) or ()):
                if field not in conditions_read([c]):
                    continue
                if part in ("failed", "failed_if_any") and c.get("op") == "is_null":
                    continue  # an attempt without the number failed: the counted one has it
                return (
                    f"the attempt policy picks attempts by the number itself"
                    f" (attempts.{part}[{k}]: {_condition_text(c)}), which truncates its law"
                )
        log = kind == "geometric_mean" or comp.get("transform") == "log"
        which = self._entries(w, field, entries)
        for c in range(len(self.table.cells)):
            for j in which[c]:
                if j < 0:
                    cell = self.table.cells[c]["id"]
                    return f"some rows of cell {cell} draw no number for field {field!r}"
                if expected_number(entries[j], log) is None:
                    scale = "log " if log else ""
                    return (
                        f"an entry of field {field!r} ({entries[j].get('distribution')}) has no"
                        f" closed-form expected {scale}value"
                    )
        return None

    def _structured(self, cond, w: RecordWriter, rng: np.random.Generator) -> list[dict]:
        """A structured scenario's study (:mod:`.structure`); its row table is kept for
        :meth:`score`, which scores these records next."""
        from .structure import Layout, draw_study

        sc = self.scenarios[cond.scenario]
        layout = self._layouts.get(cond.scenario)
        if layout is None:
            layout = Layout(self.config, sc, self.table, _has(self.config, "items"))
            self._layouts[cond.scenario] = layout
        rate = None if sc.get("outcome") is None else np.asarray(cond.rate, dtype=np.float64)
        table, records = draw_study(
            self.config, layout, w, rate, cond.kept, cond.failed_attempt_rate, rng
        )
        self._drawn = (id(records), table)
        return records

    def score(self, records: Sequence[Mapping[str, Any]]):
        """(row metrics, row columns) of a simulated study's records, as score computes them
        (a structured study's over its own row table: its rows named as its records name
        them, in registered order)."""
        table = self.table
        if self._drawn is not None and self._drawn[0] == id(records):
            table = self._drawn[1]
        metrics, _, columns, _ = row_data(self.config, table, records, "a simulated study")
        return metrics, columns


def _policy_reads(policy, drawn) -> list[str] | None:
    """The drawn number fields the attempt policy reads, each only as present or null (None
    when it reads one otherwise, or more than three)."""
    conds = [
        *(policy.get("failed") or ()),
        *(policy.get("failed_if_any") or ()),
        *(policy.get("where") or ()),
        *(policy.get("select") or ()),
    ]
    read = []
    for c in conds:
        names = {c.get("field"), c.get("other")} & set(drawn)
        if not names:
            continue
        if c.get("op") not in ("is_null", "not_null") or c.get("other"):
            return None
        read.extend(n for n in names if n not in read)
    return [n for n in drawn if n in read] if len(read) <= 3 else None


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
    outcomes = sorted({str(s.get("outcome")) for s in found if s.get("outcome") is not None})
    if len(outcomes) > 1 or (not outcomes and all(s.get("metric") for s in found)):
        raise UserError(
            f"diagnose: the scenarios draw different outcome fields ({', '.join(outcomes)}); a"
            " study is diagnosed over one outcome field"
        )
    cells = tuple(config["cells"])
    why = drawn_metrics(config)
    from .structure import applies

    if config.get("units") or any(applies(config, sc) for sc in found):
        # every figure needs the rows (units roll them up; clustered rows or ratings are
        # drawn together): no prototype row stands for a kind of row
        return _rows_only_design(config, cells, why)
    writer = RecordWriter(config, found[0], "diagnose")
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
    return Design(
        cells=cells,
        group_cell=np.arange(n, dtype=np.int64),
        group_attributes={},
        group_rows=np.array([int(c["rows"]) for c in cells], dtype=np.int64),
        contributions=contributions_of(metrics, n),
        unmodelled=frozenset(why),
        unmodelled_why=why,
        rows=DrawnRows(config),
        marginal={
            m: c
            for m, c in contributions_of(metrics, n).items()
            if m in _marginal_metrics(config, {m: c})
        },
        notes=(
            "Rows carry the item fields the items command writes and the records simulate"
            " writes; a row group is a registered cell.",
        ),
    )


def _marginal_metrics(config, contributions) -> list[str]:
    """The proportion and coverage metrics whose expected figure under a scenario is the one
    a row of each kind contributes, weighted by the chance of the kind (the cell's rate and
    failed-attempt rate), whatever structure ties rows together: their conditions read no
    number a scenario draws, nor a structure field (cluster, item, rater, label) except for
    being null or not, and the attempt policy reads no drawn number."""
    drawn: set[str] = set()
    structure: set[str] = set()
    for sc in config.get("scenarios") or ():
        drawn |= {str(v["field"]) for v in sc.get("values") or ()}
        drawn |= {str(c["field"]) for c in sc.get("calibration") or ()}
        structure |= structure_read(sc)
    policy = config.get("attempts") or {}
    for part in ("failed", "failed_if_any", "where", "select"):
        if fields_read(config.get("derived_fields"), policy.get(part)) & drawn:
            return []
    out = []
    for m in config.get("metrics") or ():
        c = m.get("compute") or {}
        if c.get("kind") not in ("proportion", "coverage") or str(m["id"]) not in contributions:
            continue
        conds = [*(c.get("where") or ()), *(c.get("among") or ())]
        if fields_read(config.get("derived_fields"), conds) & drawn:
            continue
        valued = [x for x in conds if x.get("op") not in ("is_null", "not_null")]
        if fields_read(config.get("derived_fields"), valued) & structure:
            continue
        out.append(str(m["id"]))
    return out


def marginal_contributions(config, cells) -> dict[str, tuple[str, np.ndarray, np.ndarray]]:
    """What a row of each kind contributes to each proportion metric of :func:`_marginal_metrics`
    of a study drawn row by row (structured scenarios, units, rows named by several fields):
    prototype rows scored as :func:`diagnose_design` scores them, named as the records name
    rows, with a placeholder for each structure field (a cluster's or rater's name, a rating:
    none of them read), and the units left out (the truth of a proportion is the scenario's,
    whichever units an analysis would exclude). Empty when prototype rows cannot be written."""
    import copy

    from prereg.diagnose.design import (
        KINDS,
        RETRIED_RIGHT,
        RETRIED_WRONG,
        RIGHT,
        WRONG,
        contributions_of,
    )

    found = list(registered.registered(config).values())
    if not found:
        return {}
    sc = next((s for s in found if s.get("outcome") is not None), found[0])
    try:
        writer = RecordWriter(config, sc, "diagnose")
    except UserError:
        return {}
    obs = _contract(config, "observation")
    types = {f["name"]: f for f in obs["fields"]}
    placed = {f["name"]: f for f in obs["fields"] if f.get("factor") or f.get("role") == "split"}
    name = attempt_policy.row_name(config["attempts"])
    manifest = _has(config, "items")
    free = [f for f in name if f not in placed]
    unique = next((f for f in free if not (types.get(f) or {}).get("allowed")), None)
    if not manifest and len(name) > 1 and unique is None:
        return {}

    def placeholder(field: str, ordinal: int):
        spec = types.get(field) or {}
        if field == unique:
            return ordinal + 1 if spec.get("type") == "integer" else f"prototype-{ordinal}"
        if spec.get("allowed"):
            return spec["allowed"][0]
        return 1 if spec.get("type") in ("integer", "number") else "prototype"

    fill: dict[str, Any] = {}
    for other in found:  # every scenario's structure fields: the contributions serve them all
        ratings = other.get("ratings")
        for f in structure_read(other) - set(name):
            if f in types and f not in fill:
                fill[f] = (
                    list(ratings["categories"])[0]
                    if ratings is not None and f == str(ratings["field"])
                    else placeholder(f, 0)
                )
    draws = {
        RIGHT: (False, True),
        WRONG: (False, False),
        RETRIED_RIGHT: (True, True),
        RETRIED_WRONG: (True, False),
    }
    ids: list[Any] = []
    cell_of, records = [], []
    for ci, cell in enumerate(cells):
        for kind, word in enumerate(KINDS):
            ordinal = ci * len(KINDS) + kind
            if manifest or len(name) == 1:
                rid: Any = f"{cell['id']}#{word}"
            else:
                rid = tuple(
                    level_value(placed[f], cell["levels"].get(placed[f].get("factor")))
                    if f in placed and placed[f].get("factor")
                    else cell["split"]
                    if f in placed
                    else placeholder(f, ordinal)
                    for f in name
                )
            ids.append(rid)
            cell_of.append(ci)
            if kind in draws:
                try:
                    numbers = writer.numbers(rid, cell, draws[kind][1], 0)
                except UserError:
                    return {}
                records.extend(writer.records(rid, cell, *draws[kind], 0, {**numbers, **fill}))
    table = RowTable(
        ids=tuple(ids),
        cell=np.asarray(cell_of, dtype=np.int64),
        cells=tuple(cells),
        columns=_item_columns(config, ids, [cells[c] for c in cell_of]),
    )
    plain = copy.deepcopy(dict(config))
    plain.pop("units", None)
    plain["metrics"] = [
        m for m in plain.get("metrics") or () if (m.get("compute") or {}).get("kind") != "units"
    ]
    try:
        metrics, _ = row_metrics_of(plain, table, records, "the prototype rows")
    except (UserError, KeyError, ValueError, TypeError):
        return {}
    got = contributions_of(metrics, len(cells))
    return {m: got[m] for m in _marginal_metrics(config, got)}


def _rows_only_design(config, cells, why: Mapping[str, str]):
    """The design of a study diagnosed on the row path alone: every metric is unmodelled by
    counts (its per-kind contributions are zero and never read); the marginal contributions of
    its proportions (:func:`marginal_contributions`) give diagnose's truths."""
    from prereg.diagnose.design import KINDS, Design

    n, k = len(cells), len(KINDS)
    contributions = {
        str(m["id"]): (str(m["compute"]["kind"]), np.zeros((n, k)), np.zeros((n, k)))
        for m in config.get("metrics") or ()
        if m.get("compute")
    }
    found = marginal_contributions(config, cells)
    return Design(
        cells=cells,
        group_cell=np.arange(n, dtype=np.int64),
        group_attributes={},
        group_rows=np.array([int(c["rows"]) for c in cells], dtype=np.int64),
        contributions=contributions,
        unmodelled=frozenset(why),
        unmodelled_why=dict(why),
        rows=DrawnRows(config),
        marginal=found,
        notes=(
            "Every simulated study is drawn row by row (its units, clusters or ratings) and"
            " scored as score scores observations; a row group is a registered cell.",
        ),
    )


def diagnose(ctx: StudyContext, args: argparse.Namespace) -> int:
    from prereg.diagnose.command import run

    return run(ctx, args, diagnose_design)
