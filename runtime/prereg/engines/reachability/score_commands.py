"""Scoring commands of the reachability-probe engine: ``handler(ctx, args) -> int``.

- ``score``: ``args.outdir`` (a prepared folder), ``args.observations`` (JSONL),
  ``args.calibrator`` (JSON artifact), ``args.calibrator_digest``, ``args.session_start``
  (comma-separated ISO 8601 instants), ``args.evaluated_at``, ``args.out`` (SCORE.json; the
  report SCORE.md is written beside it, same name with ``.md``).
- ``simulate``: ``args.outdir``, ``args.scenario``, ``args.seed`` (integer), ``args.out``,
  optional ``args.coverage``, ``args.part`` (``K/N``: only the rows of the K-th of N stretches
  of the dispatch order, as the K-th of N collection sessions would record them).
- ``score`` with ``args.config`` instead: scoring from the run lineage (:mod:`.lineage`).
- ``calibrator_fit``: ``args.observations``, ``args.gold`` (a prepared gold.json),
  ``args.effective_at``, ``args.out``.

Every handler needs ``args.project_root`` (set by the CLI) to find the study's compiled rules
(``generated/<study>/rules.py``) and record-contract schemas (``generated/<study>/schemas/``).
The prepared folder is verified against its preregistration.json (spec digest, corpus, gold,
audit and dispatch-order digests) before anything is read from it.  Every refusal is a
:class:`prereg.errors.UserError`, raised before any output is written.

See :mod:`.scoring` for the ``scoring`` constant, :mod:`.calibrator` for ``calibration`` and
``calibrator-fit``, :mod:`.simulate` for ``respondents``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from prereg.compiler.project import Project
from prereg.decide.decision import in_words as decision_words
from prereg.decide.report import decision_lines
from prereg.digest import PREFIX, digest, file_sha256, sha256_hex
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import (
    canonical_bytes_nl,
    output_file,
    read_regular,
    refuse_existing,
    refuse_report_on_output,
    write_files_new,
    write_new,
)
from prereg.records import loads_strict, read_json_file
from prereg.rules import REPORTED_ONLY

from .budget import iso_ms, parse_instant
from .canon import canonical_record_json, record_digest
from .layout import AUDIT, CORPUS, GOLD, PREREGISTRATION

if TYPE_CHECKING:  # the scoring modules import scipy and jsonschema: loaded by the handlers
    from .scoring import RowTable, Score, ScoringSpec


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


# -- the compiled study -------------------------------------------------------------------------


def study_module(ctx: StudyContext, args: argparse.Namespace) -> ModuleType:
    from prereg.study import load_generated

    root = getattr(args, "project_root", None)
    if root is None:
        raise UserError("internal: the command needs the project root (args.project_root)")
    return load_generated(Project(Path(root)), ctx.study_id)


def rules_module(module: ModuleType) -> ModuleType:
    return importlib.import_module(module.__name__ + ".rules")


def schema_path(module: ModuleType, contract: str) -> Path:
    path = Path(module.__file__).parent / "schemas" / f"{contract}.schema.json"
    if not path.exists():
        raise UserError(
            f"the study has no compiled record contract {contract!r} ({path.name} is missing)"
        )
    return path


# -- the prepared folder ------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    """A prepared-folder JSON object, read strictly (regular file, no duplicate keys or NaN)."""
    return read_json_file(path, missing="is this a prepared folder?")


def _without(obj: Any, key: str, path: Path) -> dict:
    if not isinstance(obj, dict):
        raise UserError(f"{path}: not a JSON object")
    return {k: v for k, v in obj.items() if k != key}


def gold_file(path: Path) -> tuple[dict, str]:
    """(gold object without specDigest, the digest of its canonical JSON) of a gold file:
    the fast path of :mod:`.prepared` for a file as prepare wrote it, else the strict reader."""
    from .prepared import gold_object

    try:
        fast = gold_object(read_regular(path))
    except OSError:
        fast = None  # the strict reader names the problem
    if fast is not None:
        return fast
    gold = _without(_read_json(path), "specDigest", path)
    return gold, record_digest(gold)


def _corpus_records_strict(
    corpus_bytes: bytes, corpus_path: Path
) -> list[tuple[str, str, tuple[str, ...]]]:
    """(row id, split, request ids) per corpus line, each line parsed by the strict reader."""
    records = []
    for n, line in enumerate(corpus_bytes.decode("utf-8", "replace").splitlines(), start=1):
        try:
            rec = loads_strict(line)
            records.append((rec["id"], rec["split"], tuple(r["id"] for r in rec["requests"])))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UserError(f"{corpus_path}:{n}: not a corpus record ({str(exc)[:120]})") from None
    return records


def load_prepared(
    ctx: StudyContext, outdir: Path, spec: ScoringSpec
) -> tuple[dict, RowTable, dict]:
    """(preregistration, row table, gold) of a prepared folder, every digest verified."""
    from .scoring import row_table

    outdir = Path(outdir)
    prereg_path = outdir / PREREGISTRATION
    prereg = _read_json(prereg_path)
    if not isinstance(prereg, dict):
        raise UserError(f"{prereg_path}: not a JSON object")
    if prereg.get("specDigest") != ctx.spec_digest:
        raise UserError(
            f"{prereg_path}: prepared under spec {prereg.get('specDigest')}, not the current"
            f" spec {ctx.spec_digest}; prepare again"
        )
    corpus_path = outdir / CORPUS
    try:
        corpus_bytes = read_regular(corpus_path)
    except FileNotFoundError:
        raise UserError(f"{corpus_path}: missing (is this a prepared folder?)") from None
    except OSError as exc:
        raise UserError(f"{corpus_path}: cannot read: {exc.strerror or exc}") from None
    if PREFIX + sha256_hex(corpus_bytes) != prereg.get("corpusDigest"):
        raise UserError(
            f"{corpus_path}: digest differs from corpusDigest in {prereg_path}; the corpus was"
            " altered after preparation"
        )
    gold_path = outdir / GOLD
    gold, gold_digest = gold_file(gold_path)
    if gold_digest != prereg.get("goldDigest"):
        raise UserError(
            f"{gold_path}: digest differs from goldDigest in {prereg_path}; the gold file was"
            " altered after preparation"
        )
    audit_path = outdir / AUDIT
    audit = _without(_read_json(audit_path), "specDigest", audit_path)
    if digest(audit) != prereg.get("auditDigest"):
        raise UserError(f"{audit_path}: digest differs from auditDigest in {prereg_path}")
    from .prepared import corpus_rows

    records = corpus_rows(corpus_bytes)
    if records is None:  # not as prepare writes it: the strict reader says what is wrong
        records = _corpus_records_strict(corpus_bytes, corpus_path)
    if record_digest([r[0] for r in records]) != prereg.get("dispatchOrderDigest"):
        raise UserError(f"{corpus_path}: row order differs from dispatchOrderDigest")
    table = row_table(ctx.config, spec, records, gold)
    return prereg, table, gold


# -- score --------------------------------------------------------------------------------------


def _session_starts(text: str) -> list[datetime]:
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise UserError("--session-start: give at least one ISO 8601 instant")
    return [parse_instant(p, "--session-start") for p in parts]


def check_clock(
    starts: list[datetime],
    evaluated_at: datetime,
    now: datetime,
    session: timedelta,
    calibrator,
    codes: Mapping[str, str] | None = None,
    evaluated_name: str = "--evaluated-at",
) -> datetime:
    """The collection-end bound (latest session start + session length), after checking that
    ``evaluated_at`` is at or after it and not after ``now``, and that the calibrator is valid at
    both the bound and ``evaluated_at``.  ``codes`` (the ``refusal-codes`` constant) lead
    each refusal with the study's code (``scoring-clock``, ``calibration-expired``,
    ``calibration-scope``)."""

    def refuse(name: str, message: str) -> UserError:
        return UserError(f"{codes[name]}: {message}" if codes else message)

    bound = max(starts) + session
    if evaluated_at < bound:
        raise refuse(
            "scoringClock",
            f"{evaluated_name} {iso_ms(evaluated_at)} is before the collection-end bound"
            f" {iso_ms(bound)} (the latest session start {iso_ms(max(starts))} + the session"
            " length); the collection may still be running",
        )
    if evaluated_at > now:
        raise refuse(
            "scoringClock",
            f"{evaluated_name} {iso_ms(evaluated_at)} is in the future (now {iso_ms(now)})",
        )
    for what, t in (("the collection-end bound", bound), (evaluated_name, evaluated_at)):
        if not calibrator.valid_at(t):
            expired = t > calibrator.expires_at
            raise refuse(
                "calibrationExpired" if expired else "calibrationScope",
                f"calibrator {calibrator.id} is {'expired' if expired else 'not yet effective'}"
                f" at {what} {iso_ms(t)} (valid {calibrator.window()})",
            )
    return bound


def _display(x, decimals: int | None = None) -> str:
    """A figure as SCORE.md displays it: rounded half-up to the registered decimals (SCORE.json
    keeps it at full precision)."""
    if x is None:
        return "–"
    if decimals is not None and isinstance(x, float):
        from prereg.stats.rounding import round_half_up_shortest

        return f"{round_half_up_shortest(x, decimals)}"
    return f"{x}"


def incomplete_line(doc: Mapping[str, Any]) -> str | None:
    """What marks a score incomplete (the source: when the coverage gate fails "the report is
    marked incomplete and every verdict is 'insufficient'"): the failed gates, the cells each
    failed in (up to three named) and the verdict they gave; None when every gate held."""
    failed = [g for g in doc.get("gates") or () if not g.get("passed")]
    if not failed and doc.get("complete", True):
        return None
    parts = []
    for g in failed:
        cells = [str(f.get("cell")) for f in g.get("failures") or ()]
        shown = ", ".join(cells[:3]) + (f", … {len(cells) - 3} more" if len(cells) > 3 else "")
        parts.append(
            f"the {g.get('id')} gate failed in {len(cells)} cell{'' if len(cells) == 1 else 's'}"
            + (f" ({shown})" if cells else "")
        )
    verdicts = set((doc.get("verdicts") or {}).values())
    said = (
        f"every verdict is {next(iter(verdicts))}"
        if len(verdicts) == 1
        else "verdicts are the gate's"
    )
    return f"{'; '.join(parts) or 'a gate failed'}, so {said}"


def render_markdown(
    doc: Mapping[str, Any], spec: ScoringSpec, module: ModuleType | None = None
) -> str:
    m = spec.metrics

    def _num(x) -> str:  # the display rounding of this score's spec
        return _display(x, spec.decimals)

    def _p(x) -> str:  # P values to the registered significant digits
        return "–" if x is None else f"{float(f'{x:.{spec.p_digits}g}')}"

    incomplete = incomplete_line(doc)

    lines = [
        f"# Score of {doc['studyId']} {doc['version']}",
        "",
        *(
            [f"**Development score**: {doc['development']['reason']}.", ""]
            if doc.get("development")
            else []
        ),
        *(
            [
                "**Aborted sessions** (recorded in the ledger, not scored): "
                + "; ".join(
                    f"{a['runId']} (started {a['startedAt']}, aborted {a['abortedAt']}:"
                    f" {a['reason']}; USD {a['usd']})"
                    for a in doc["lineage"]["abortedRuns"]
                )
                + ".",
                "",
            ]
            if doc.get("lineage", {}).get("abortedRuns")
            else []
        ),
        *([f"**Incomplete**: {incomplete}.", ""] if incomplete else []),
        f"- spec digest: `{doc['specDigest']}`",
        f"- seed: `{doc['seed']}`; corpus `{doc['corpusDigest']}`; gold `{doc['goldDigest']}`",
        f"- observations: `{doc['observations']['sha256']}`, {doc['observations']['records']}"
        f" records, {doc['observations']['observedRows']} of {doc['observations']['rows']}"
        " rows observed",
        f"- calibrator: `{doc['calibrator']['id']}` (`{doc['calibrator']['digest']}`), valid"
        f" {doc['calibrator']['effectiveAt']} to {doc['calibrator']['expiresAt']}",
        f"- collection-end bound {doc['clock']['collectionEndBound']}; evaluated at"
        f" {doc['clock']['evaluatedAt']}",
        "",
        *decision_lines(doc["decision"]),
        "## Gates",
        "",
    ]
    for g in doc["gates"]:
        state = "passed" if g["passed"] else f"FAILED in {len(g['failures'])} cell(s)"
        lines.append(f"- {g['id']}: {g['metric']} {g['op']} {g['value']}: {state}")
        for f in g["failures"]:
            lines.append(f"  - {f['cell']}: {_num(f['figure'])}")
    lines += ["", "## Verdicts", "", "| hypothesis | verdict |", "|---|---|"]
    lines += [f"| {h} | {v} |" for h, v in doc["verdicts"].items()]
    if module is not None:
        from prereg.decide.explain import explanation_lines, verdict_explanations

        explained = verdict_explanations(module, rules_module(module), doc, number=_num, p_value=_p)
        lines += explanation_lines(explained)
    lines += [
        "",
        "## Cells",
        "",
        f"| cell | rows | observed | {m['coverage']} | {m['accuracy']} (Wilson) |"
        f" {m['saidYes']} | {m['calibratedAccuracy']} (Wilson) | {m['meanConfidence']} |"
        f" confidence − accuracy | {m['ece']} | unreliable | by position |",
        "|---|---:|---:|---:|---|---:|---|---:|---:|---:|---|---|",
    ]
    for c in doc["cells"]:
        f = c["metrics"]
        acc, cal = f[m["accuracy"]], f[m["calibratedAccuracy"]]
        pos = "; ".join(
            f"{k} {_num(v['accuracy'])} ({v['observed']})" for k, v in c["byPosition"].items()
        )
        lines.append(
            f"| {c['cell']} | {c['rows']} | {c['observed']} | {_num(f[m['coverage']])} |"
            f" {_num(acc['estimate'])} [{_num(acc['lower'])}, {_num(acc['upper'])}] |"
            f" {_num(f[m['saidYes']])} |"
            f" {_num(cal['estimate'])} [{_num(cal['lower'])}, {_num(cal['upper'])}] |"
            f" {_num(f[m['meanConfidence']])} | {_num(c['confidenceMinusAccuracy'])} |"
            f" {_num(f[m['ece']])} | {'yes' if c['calibrationUnreliable'] else 'no'} | {pos} |"
        )
    lines += [
        "",
        f"## {m['auroc']} (Hanley–McNeil interval, report only)",
        "",
        "| group | negatives | positives / negatives | estimate | interval |",
        "|---|---|---:|---:|---|",
    ]
    for a in doc["auroc"]:
        g = ", ".join(f"{k} {v}" for k, v in a["group"].items())
        lines.append(
            f"| {g} | {a['negative']} | {a['positives']} / {a['negatives']} |"
            f" {_num(a['estimate'])} | [{_num(a['lower'])}, {_num(a['upper'])}] |"
        )
    hyps = list(doc["verdicts"])
    for h in hyps:
        es = [e for e in doc["estimates"] if e["hypothesis"] == h]
        cs = [c for c in doc["contrasts"] if c["hypothesis"] == h]
        lines += ["", f"## {h}: {doc['verdicts'][h]}", ""]
        if es:
            lines += ["| estimate | k / n | estimate | interval |", "|---|---:|---:|---|"]
            for e in es:
                lines.append(
                    f"| {e['id']} | {e['k']} / {e['n']} | {_num(e['estimate'])} |"
                    f" [{_num(e['lower'])}, {_num(e['upper'])}] |"
                )
            lines.append("")
        if cs:
            lines += [
                "| contrast | a k/n | b k/n | a − b | interval | P | adjusted P |",
                "|---|---:|---:|---:|---|---:|---:|",
            ]
            for c in cs:
                lines.append(
                    f"| {c['id']} | {c['a']['k']}/{c['a']['n']} | {c['b']['k']}/{c['b']['n']} |"
                    f" {_num(c['estimate'])} | [{_num(c['lower'])}, {_num(c['upper'])}] |"
                    f" {_p(c['p'])} | {_p(c['adjustedP'])} |"
                )
    return "\n".join(lines) + "\n"


def score_document(
    ctx: StudyContext,
    spec: ScoringSpec,
    prereg: Mapping[str, Any],
    result: Score,
    *,
    observations: Mapping[str, Any],
    calibrator,
    starts: list[datetime],
    bound: datetime,
    evaluated_at: datetime,
) -> dict[str, Any]:
    return {
        "schemaVersion": spec.schema_version,
        "studyId": ctx.study_id,
        "version": ctx.version,
        "specDigest": ctx.spec_digest,
        "seed": prereg.get("seed"),
        "corpusDigest": prereg.get("corpusDigest"),
        "goldDigest": prereg.get("goldDigest"),
        "observations": dict(observations),
        "calibrator": {
            "id": calibrator.id,
            "digest": calibrator.digest,
            "effectiveAt": iso_ms(calibrator.effective_at),
            "expiresAt": iso_ms(calibrator.expires_at),
        },
        "clock": {
            "sessionStarts": [iso_ms(t) for t in sorted(starts)],
            "collectionEndBound": iso_ms(bound),
            "evaluatedAt": iso_ms(evaluated_at),
        },
        "complete": not result.gated,
        "gates": result.gates,
        "verdicts": result.verdicts,
        "decision": result.decision,
        "cells": result.cells,
        "auroc": result.auroc,
        "estimates": result.estimates,
        "contrasts": result.contrasts,
    }


def _markdown_path(out: Path) -> Path:
    return out.with_suffix(".md") if out.suffix else out.with_name(out.name + ".md")


FLAG_FORM = (
    "outdir",
    "observations",
    "calibrator",
    "calibrator_digest",
    "session_start",
    "evaluated_at",
)


def score(ctx: StudyContext, args: argparse.Namespace) -> int:
    """``score --config SCORE_CONFIG.json`` (from the run lineage, :mod:`.lineage`) or the flag
    form (OUTDIR OBSERVATIONS --calibrator --calibrator-digest --session-start --evaluated-at):
    the same prepared-folder, calibrator and clock checks, then the same scoring."""
    given = [n for n in FLAG_FORM if getattr(args, n, None)]
    if getattr(args, "config", None):
        if given:
            raise UserError(
                "score: give either --config or the flag form (OUTDIR OBSERVATIONS"
                " --calibrator ...), not both; also given: "
                + ", ".join(
                    n if n in ("outdir", "observations") else "--" + n.replace("_", "-")
                    for n in given
                )
            )
        from .lineage import score_from_config

        return score_from_config(ctx, args)
    missing = [n for n in FLAG_FORM if n not in given]
    if missing:
        raise UserError(
            "score: give --config SCORE_CONFIG.json, or all of OUTDIR OBSERVATIONS --calibrator"
            " --calibrator-digest --session-start --evaluated-at (missing: "
            + ", ".join(
                n.upper() if n in ("outdir", "observations") else "--" + n.replace("_", "-")
                for n in missing
            )
            + ")"
        )
    from prereg.records import read_jsonl_records

    from .calibrator import load_calibrator
    from .scoring import scoring_spec

    spec = scoring_spec(ctx.config)
    out = output_file(args.out)
    refuse_report_on_output(out, _markdown_path(out))
    refuse_existing(out, _markdown_path(out))
    module = study_module(ctx, args)
    cal_cfg = ctx.config["constants"]["calibration"]
    starts = _session_starts(args.session_start)
    evaluated_at = parse_instant(args.evaluated_at, "--evaluated-at")
    calibrator = load_calibrator(
        args.calibrator,
        schema_path(module, spec.contracts["calibrator"]),
        args.calibrator_digest,
        float(cal_cfg["validDays"]),
        spec.calibrator_fields,
    )
    bound = check_clock(
        starts,
        evaluated_at,
        datetime.now(UTC),
        timedelta(minutes=float(cal_cfg["sessionMinutes"])),
        calibrator,
        ctx.config["constants"]["refusal-codes"],
    )
    prereg, table, _ = load_prepared(ctx, Path(args.outdir), spec)
    obs_path = Path(args.observations)
    records = read_jsonl_records(obs_path, schema_path(module, spec.contracts["observation"]))
    sha, _ = file_sha256(obs_path)
    return write_score(
        ctx,
        spec,
        module,
        prereg,
        table,
        records,
        str(obs_path),
        PREFIX + sha,
        calibrator=calibrator,
        starts=starts,
        bound=bound,
        evaluated_at=evaluated_at,
        out=out,
        extra={"development": DEVELOPMENT},
    )


# the label of a flag-form score (SCORE.json /development, and SCORE.md's first line)
DEVELOPMENT = {
    "form": "flags",
    "reason": "scored from the flag form: no bundle, approval, ledger or trusted run digest"
    " binds these observations, so this is a development score, not the confirmatory one"
    " (score --config SCORE_CONFIG.json scores the run lineage)",
}


def write_score(
    ctx: StudyContext,
    spec: ScoringSpec,
    module: ModuleType,
    prereg: Mapping[str, Any],
    table: RowTable,
    records: list[dict],
    source: str,
    observations_sha256: str,
    *,
    calibrator,
    starts: list[datetime],
    bound: datetime,
    evaluated_at: datetime,
    out: Path,
    extra: Mapping[str, Any] | None = None,
) -> int:
    """Score the counted attempts of ``records`` and write SCORE.json and SCORE.md (``extra``
    keys are added to the document)."""
    from .scoring import counted_attempts
    from .scoring import score as score_rows

    md = _markdown_path(out)
    rules = rules_module(module)
    counted = counted_attempts(records, table, spec, source)
    result = score_rows(
        ctx.config, rules, table, counted.p_yes(spec), calibrator.blocks, spec, counted=counted
    )
    doc = score_document(
        ctx,
        spec,
        prereg,
        result,
        observations={
            "sha256": observations_sha256,
            "records": len(records),
            "rows": len(table.ids),
            "observedRows": result.observed_rows,
        },
        calibrator=calibrator,
        starts=starts,
        bound=bound,
        evaluated_at=evaluated_at,
    )
    if extra:
        doc.update(extra)
    data = canonical_bytes_nl(doc)
    write_files_new([(out, data, 0o644), (md, render_markdown(doc, spec, module), 0o644)])
    _out(f"scored {result.observed_rows:,} of {len(table.ids):,} rows into {out} and {md}")
    _out(f"  decision: {decision_words(result.decision)}")
    if result.gated:
        failed = [g["id"] for g in doc["gates"] if not g["passed"]]
        words = sorted({v for v in result.verdicts.values() if v != REPORTED_ONLY})
        _out(f"  gate(s) failed: {', '.join(failed)}; every tested verdict is {', '.join(words)}")
    for h, v in result.verdicts.items():
        _out(f"  {h}: {v}")
    _out(f"  {out.name}: {PREFIX}{sha256_hex(data)}")
    return 0


# -- simulate -----------------------------------------------------------------------------------


def simulate(ctx: StudyContext, args: argparse.Namespace) -> int:
    from .scoring import scoring_spec
    from .simulate import simulate_observations

    spec = scoring_spec(ctx.config)
    out = output_file(args.out)
    refuse_existing(out)
    _, table, _ = load_prepared(ctx, Path(args.outdir), spec)
    coverage = getattr(args, "coverage", None)
    recs = simulate_observations(
        ctx.config,
        table,
        spec,
        args.scenario,
        int(args.seed),
        None if coverage is None else float(coverage),
    )
    part = getattr(args, "part", None)
    if part:
        recs = _part(recs, table, spec, part)
    data = b"".join(canonical_record_json(r) + b"\n" for r in recs)
    write_new(out, data)
    observed = len({r[spec.fields["row"]] for r in recs if r[spec.fields["pYes"]] is not None})
    _out(
        f"wrote {len(recs):,} attempts ({observed:,} of {len(table.ids):,} rows answered) of"
        f" scenario {args.scenario!r}, seed {args.seed}, to {out}"
    )
    return 0


def _part(recs: list[dict], table: RowTable, spec: ScoringSpec, part: str) -> list[dict]:
    """The attempts of part K of N (``"K/N"``): the rows of the K-th of N runs of the dispatch
    order as even as whole rows allow, as checkpointed collection sessions would record them."""
    k_text, _, n_text = str(part).partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise UserError(f"--part: {part!r} is not K/N (two whole numbers)") from None
    if not 1 <= k <= n:
        raise UserError(f"--part: {part!r} needs 1 <= K <= N")
    rows = len(table.ids)
    field = spec.fields["row"]
    return [r for r in recs if table.index[r[field]] * n // rows == k - 1]


# -- calibrator-fit -----------------------------------------------------------------------------


def calibrator_fit(ctx: StudyContext, args: argparse.Namespace) -> int:
    from prereg.records import read_jsonl_records

    from .calibrator import fit_artifact
    from .scoring import RowTable, scoring_spec, terminal_p_yes

    spec = scoring_spec(ctx.config)
    out = output_file(args.out)
    refuse_existing(out)
    module = study_module(ctx, args)
    consts = ctx.config["constants"]
    fit_cfg = consts["calibrator-fit"]
    gold_path = Path(args.gold)
    gold = _read_json(gold_path)
    labels = gold.get("labels") if isinstance(gold, dict) else None
    if not isinstance(labels, dict):
        raise UserError(f"{gold_path}: not a gold file (no labels object)")
    ids = tuple(sorted(labels))
    light = RowTable(
        ids=ids,
        index={r: i for i, r in enumerate(ids)},
        requests=((spec.request,),) * len(ids),
        cell=np.zeros(len(ids), dtype=np.int64),
        position=np.zeros(len(ids), dtype=np.int64),
        gold_yes=np.array([labels[r] == spec.label_yes for r in ids], dtype=bool),
        cells=(),
        factors=(),
    )
    obs_path = Path(args.observations)
    records = read_jsonl_records(obs_path, schema_path(module, spec.contracts["observation"]))
    p = terminal_p_yes(records, light, spec, str(obs_path))
    observed = ~np.isnan(p)
    artifact = fit_artifact(
        p[observed],
        light.gold_yes[observed].astype(int),
        effective_at=args.effective_at,
        valid_days=float(consts["calibration"]["validDays"]),
        min_block_size=int(fit_cfg["minBlockSize"]),
        id_prefix=str(fit_cfg["idPrefix"]),
        names=spec.calibrator_fields,
    )
    write_new(out, canonical_bytes_nl(artifact))
    n = spec.calibrator_fields
    _out(
        f"fitted calibrator {artifact[n['id']]} on {int(observed.sum()):,} observed rows:"
        f" {len(artifact[n['blocks']])} blocks, effective {artifact[n['effectiveAt']]} for"
        f" {artifact[n['validDays']]} days, written to {out}"
    )
    _out(artifact[n["digest"]])
    return 0


def diagnose(ctx: StudyContext, args: argparse.Namespace) -> int:
    from .diagnose import diagnose as run

    return run(ctx, args)


SCORE_COMMANDS = {
    "diagnose": diagnose,
    "score": score,
    "simulate": simulate,
    "calibrator_fit": calibrator_fit,
}
