"""Scoring from the run lineage: ``score --config SCORE_CONFIG.json --out SCORE.json``.

The score config (``hand-off.schemaVersions.scoreConfig``), paths relative to the config::

    {"schemaVersion": ..., "bundle": {"file", "trustedDigest"},
     "runs": [{"dir", "trustedEvidenceDigest"}, ...],      # the lineage, oldest first
     "gold": {"file", "trustedDigest"},
     "calibrationContext": {"file", "trustedDigest"},
     "evaluatedAt": "2026-10-16T12:00:00Z"}

Checks, in order (each refusal led by the study's code): the bundle, gold and context files
against their trusted digests (``bundle-digest``, ``gold-digest``, ``context-digest``); the
bundle at the collector boundary (:func:`.handoff.validate_bundle`); the prepared folder it
binds regenerated from the seed (``prepared-mismatch``) under the same preregistration
(``changed-preregistration``); the gold file's content is the bundle's gold; each run:
integrity.json's hashes and evidence digest recomputed from its files and equal to the
trusted digest (``lineage-digest``), frozen.json under this bundle, corpus and preregistration
(``bundle-digest``, ``changed-preregistration``), with a ``collectionStartedAt``
(``session-unrecorded``) and naming exactly the runs before it with their evidence digests
(``lineage-digest``); then the clock (:func:`.score_commands.check_clock`: evaluatedAt at
least the latest session start plus the session limit, not in the future, the calibrator valid
at both).  The observations of every run, in lineage order, are scored together.
"""

from __future__ import annotations

import argparse
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from prereg.digest import PREFIX
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import output_file, refuse_existing, refuse_report_on_output

from .budget import iso_ms, parse_instant
from .canon import record_digest
from .handoff import (
    HandOff,
    _field,
    _object,
    _resolve,
    _schema,
    evidence,
    file_digest,
    load_context_calibrator,
    preregistration_digest,
    validate_bundle,
    verify_prepared,
)


def _trusted(h: HandOff, cfg_path: Path, cfg: dict, key: str, code: str) -> tuple[Path, bytes]:
    rel = _field(cfg, cfg_path, f"/{key}/file")
    trusted = _field(cfg, cfg_path, f"/{key}/trustedDigest")
    path = _resolve(cfg_path, rel)
    got, data = file_digest(path, f"the score config's {key}")
    if got != trusted:
        raise h.refuse(
            code,
            f"{cfg_path}: at /{key}/trustedDigest: {path} has digest {got}, not the trusted"
            f" {trusted}",
        )
    return path, data


def _every_recorded_run(h: HandOff, b, lineage: list[dict], cfg_path: Path) -> list[dict]:
    """The config's runs are exactly the sessions the ledger records for the bundled corpus,
    in order, each ended with the same evidence: a run left out (the last runs of a
    collection, say) is refused, never silently not scored.  A session the ledger records as
    aborted (``prereg ledger-abort``) has no evidence and is not scored; it is returned (run,
    start, abort instant, reason, spend) for the score to list.  The ledger is the one under
    the artifact root (the prepared folder's parent, where ``bundle`` and the ledger commands
    keep it)."""
    from prereg.ledger import open_existing

    ledger = h.ledger_path(argparse.Namespace(), b.corpus_path.parent.resolve().parent)
    led = open_existing(ledger)
    if led is None:
        raise h.refuse(
            "seedNotFrozen",
            f"{ledger}: no ledger beside the prepared folder; scoring from the lineage needs the"
            " ledger that recorded its sessions",
        )
    with led:
        sessions = led.sessions(b.doc["corpusDigest"])
        aborts = {a["run_id"]: a for a in led.aborted(b.doc["corpusDigest"])}
    recorded = [(s["run_id"], s["evidence_digest"]) for s in sessions if s["run_id"] not in aborts]
    given = [(r["runId"], r["evidenceDigest"]) for r in lineage]
    if recorded == given:
        return [
            {
                "runId": s["run_id"],
                "startedAt": s["started_at"],
                "abortedAt": aborts[s["run_id"]]["at"],
                "reason": aborts[s["run_id"]]["reason"],
                "usd": aborts[s["run_id"]]["usd"],
            }
            for s in sessions
            if s["run_id"] in aborts
        ]
    for run_id, ev in recorded:
        if ev is None:
            raise h.refuse(
                "sessionOpen",
                f"{ledger}: session {run_id!r} of the corpus has not ended; score once every"
                " session has ended",
            )
    missing = [r for r, _ in recorded if r not in {g for g, _ in given}]
    raise h.refuse(
        "lineageDigest",
        f"{cfg_path}: at /runs: runs {[g for g, _ in given]}, but the ledger {ledger} records"
        f" {[r for r, _ in recorded]} for corpus {b.doc['corpusDigest']}"
        + (f" (left out: {', '.join(missing)}; every recorded run is scored)" if missing else ""),
    )


def score_from_config(ctx: StudyContext, args: argparse.Namespace) -> int:
    from prereg.records import read_jsonl_records

    from .score_commands import (
        _markdown_path,
        check_clock,
        load_prepared,
        schema_path,
        study_module,
        write_score,
    )
    from .scoring import scoring_spec

    h = HandOff.of(ctx)
    spec = scoring_spec(ctx.config)
    out = output_file(args.out)
    refuse_report_on_output(out, _markdown_path(out))
    refuse_existing(out, _markdown_path(out))
    cfg_path = Path(args.config)
    cfg = _object(cfg_path, what="a score config")
    codes = {
        "evaluatedAt": "scoringClock",
        "runs": "lineageDigest",
        "gold": "goldDigest",
        "calibrationContext": "contextDigest",
    }
    _schema(h, cfg, cfg_path, "scoreConfig", "bundleDigest", codes)
    try:
        evaluated_at = parse_instant(
            _field(cfg, cfg_path, "/evaluatedAt"), f"{cfg_path}: at /evaluatedAt"
        )
    except UserError as exc:  # the clock's rule, not a digest's
        raise h.refuse("scoringClock", exc.message) from None
    module = study_module(ctx, args)

    bundle_path, _ = _trusted(h, cfg_path, cfg, "bundle", "bundleDigest")
    b = validate_bundle(ctx, bundle_path)
    doc = b.doc
    outdir = b.corpus_path.parent
    gold_path, gold_bytes = _trusted(h, cfg_path, cfg, "gold", "goldDigest")
    from .prepared import gold_object

    fast = gold_object(gold_bytes)  # a gold file as prepare writes it, or None
    if fast is not None:
        gold_digest = fast[1]
    else:
        gold = _object(gold_path, gold_bytes, "a gold file")
        gold_digest = record_digest({k: v for k, v in gold.items() if k != "specDigest"})
    if gold_digest != doc["goldDigest"]:
        raise h.refuse("goldDigest", f"{gold_path}: not the bundled gold {doc['goldDigest']}")
    context_path, _ = _trusted(h, cfg_path, cfg, "calibrationContext", "contextDigest")
    calibrator, trusted_cal = load_context_calibrator(ctx, h, context_path, module)
    if trusted_cal != doc["calibration"]["calibrationArtifactDigest"]:
        raise h.refuse(
            "calibrationScope",
            f"{context_path}: calibrator {trusted_cal} is not the bundled"
            f" {doc['calibration']['calibrationArtifactDigest']}",
        )

    runs = cfg.get("runs")
    if not isinstance(runs, list) or not runs:
        raise UserError(f"{cfg_path}: at /runs: expected a non-empty list of runs")
    files = h.raw["runFiles"]
    lineage = []
    starts: list[datetime] = []
    observation_files = []
    for k, _run in enumerate(runs):
        where = f"{cfg_path}: at /runs/{k}"
        run_dir = _resolve(cfg_path, _field(cfg, cfg_path, f"/runs/{k}/dir"))
        trusted = _field(cfg, cfg_path, f"/runs/{k}/trustedEvidenceDigest")
        ev = evidence(h, run_dir)
        frozen = ev.pop("frozen")
        integrity_path = run_dir / files["integrity"]
        recorded = _object(integrity_path, what="a run's integrity.json")
        if recorded != ev:
            raise h.refuse(
                "lineageDigest",
                f"{integrity_path}: does not match the run's files (recorded evidence"
                f" {recorded.get('evidenceDigest')}, recomputed {ev['evidenceDigest']})",
            )
        if ev["evidenceDigest"] != trusted:
            raise h.refuse(
                "lineageDigest",
                f"{where}/trustedEvidenceDigest: run {ev['runId']!r} has evidence"
                f" {ev['evidenceDigest']}, not the trusted {trusted}",
            )
        frozen_path = run_dir / files["frozen"]
        if frozen.get("bundleDigest") != b.digest:
            raise h.refuse(
                "bundleDigest",
                f"{frozen_path}: run started under bundle {frozen.get('bundleDigest')}, not"
                f" {b.digest}",
            )
        for key in ("corpusDigest", "preregistrationDigest"):
            if frozen.get(key) != doc[key]:
                raise h.refuse(
                    "changedPreregistration",
                    f"{frozen_path}: at /{key}: {frozen.get(key)}, not the bundled {doc[key]}",
                )
        started = frozen.get("collectionStartedAt")
        if not started:
            raise h.refuse(
                "sessionUnrecorded",
                f"{frozen_path}: run {ev['runId']!r} has no collectionStartedAt; a run recorded"
                " without a session start cannot be scored",
            )
        start = parse_instant(started, f"{frozen_path}: at /collectionStartedAt")
        want_prior = [{"runId": r["runId"], "evidenceDigest": r["evidenceDigest"]} for r in lineage]
        if frozen.get("priorRuns") != want_prior:
            raise h.refuse(
                "lineageDigest",
                f"{frozen_path}: at /priorRuns: {frozen.get('priorRuns')!r}; the config's runs"
                f" before it are {want_prior!r}",
            )
        lineage.append(
            {
                "runId": ev["runId"],
                "collectionStartedAt": iso_ms(start),
                "evidenceDigest": ev["evidenceDigest"],
            }
        )
        starts.append(start)
        observation_files.append(run_dir / files["observations"])

    aborted = _every_recorded_run(h, b, lineage, cfg_path)
    cal_cfg = ctx.config["constants"]["calibration"]
    bound = check_clock(
        starts,
        evaluated_at,
        datetime.now(UTC),
        timedelta(minutes=float(cal_cfg["sessionMinutes"])),
        calibrator,
        h.raw["refusals"],
        "evaluatedAt",
    )
    # last, the expensive check: the study regenerated from the seed under the current spec
    prereg = verify_prepared(ctx, h, outdir)
    if preregistration_digest(prereg) != doc["preregistrationDigest"]:
        raise h.refuse(
            "changedPreregistration",
            f"{outdir}: the regenerated preregistration {preregistration_digest(prereg)} is not"
            f" the bundled {doc['preregistrationDigest']}",
        )
    prereg_loaded, table, _ = load_prepared(ctx, outdir, spec)
    schema = schema_path(module, spec.contracts["observation"])
    records: list[dict] = []
    whole = hashlib.sha256()
    for path in observation_files:
        records += read_jsonl_records(path, schema)
        _, data = file_digest(path, "a run's observations")
        whole.update(data)
    return write_score(
        ctx,
        spec,
        module,
        prereg_loaded,
        table,
        records,
        ", ".join(str(p) for p in observation_files),
        PREFIX + whole.hexdigest(),
        calibrator=calibrator,
        starts=starts,
        bound=bound,
        evaluated_at=evaluated_at,
        out=out,
        extra={
            "lineage": {
                "bundleDigest": b.digest,
                "approvalDigest": doc["approvalDigest"],
                "preregistrationDigest": doc["preregistrationDigest"],
                "runs": lineage,
                # sessions the ledger records as aborted: not scored, listed (never hidden)
                **({"abortedRuns": aborted} if aborted else {}),
            },
            # a bundle of a development seed (a plan run's): a development score, labelled
            **(
                {"development": {"form": "development-seed", "reason": doc["development"]}}
                if doc.get("development")
                else {}
            ),
        },
    )
