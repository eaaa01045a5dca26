"""Command handlers of the reachability-probe engine: ``handler(ctx, args) -> int``.

``ctx.config`` is the compiled spec's generic config; each handler reads the engine
configuration from it with :func:`.config.study_config` (mapped once, then cached).

- ``dry_run``: ``args.seed``, optional ``args.now`` (ISO 8601 with a time zone).
- ``prepare``: ``args.seed``, ``args.outdir``, optional ``args.workers`` (processes; default
  min(2, CPUs); the bytes written do not depend on it).
- ``dev_review_material``: ``args.outdir``, ``args.out``, optional ``args.artifact_root``.
- ``audit_sweep``: ``args.prefix``, ``args.count``, ``args.positive_control`` (bool), optional
  ``args.workers`` (processes; default min(2, CPUs)).

Every refusal is a :class:`prereg.errors.UserError`; nothing is written unless everything
succeeded.

Outputs of ``prepare`` (in OUTDIR, each created exclusively):

- ``corpus.jsonl``: the row records in dispatch order, exactly the study's record shape (so it
  cannot carry the spec digest; preregistration.json binds it by ``corpusDigest``, the
  SHA-256 of the file's bytes);
- ``gold.json`` (mode 600): canonical JSON of the gold object ``{schemaVersion, labels,
  worlds}`` plus ``specDigest``; ``goldDigest`` is the digest of the gold object without
  ``specDigest``;
- ``audit.json``: canonical JSON of the audit object plus ``specDigest``; ``auditDigest`` is
  the digest of the audit object without ``specDigest``;
- ``analysis.json``: specDigest, generatorId, seed, dispatchOrderDigest, auditDigest and the
  cell table (rows and labels per cell, allocation order);
- ``preregistration.json``: studyId, specDigest, generatorId, seed, seedClass, rows and the
  corpus, gold, audit and dispatch-order digests.

``audit_sweep`` exits 0 when every seed passes the audit (with ``--positive-control``: when
the chain-first order makes every seed's audit fail), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from prereg.console import console_of
from prereg.digest import PREFIX, sha256_hex
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import (
    canonical_bytes_nl,
    output_file,
    read_regular,
    refuse_existing,
    write_folder_new,
    write_new,
)
from prereg.kept import kept
from prereg.records import loads_strict, read_json_file
from prereg.stats.rounding import round_half_up

from .audit import LEARNERS
from .budget import budget_plan, calibration_window, iso_ms, parse_instant
from .canon import canonical_members, join_members
from .config import EngineConfig, study_config
from .layout import ANALYSIS, AUDIT, CORPUS, GOLD, PREREGISTRATION
from .oracle import OracleError, TextOracle
from .pipeline import Prepared, default_workers, prepare_memory, worker_tools
from .review import select_dev_rows
from .seeds import check_seed_syntax, classify_seed

OUTPUTS = (CORPUS, GOLD, AUDIT, ANALYSIS, PREREGISTRATION)


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _fmt(d) -> str:
    """A Decimal in plain notation, trailing fraction zeros dropped, thousands separated."""
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    whole, dot, frac = s.partition(".")
    sign = "-" if whole.startswith("-") else ""
    return sign + f"{int(whole.lstrip('-')):,}" + (dot + frac if frac else "")


def cell_table(ec: EngineConfig, label_counts: Mapping[str, Mapping[str, int]] | None = None):
    table = []
    for c in ec.cells:
        entry = {
            "split": c.split.word,
            "cell": c.key,
            "pool": c.pool.id,
            "hops": c.hops,
            "outcome": c.outcome.word,
            "layout": c.layout.word,
            "rows": c.rows,
        }
        if label_counts is not None:
            entry["labels"] = dict(label_counts[f"{c.split.word}:{c.key}"])
        table.append(entry)
    return table


# -- dry-run ------------------------------------------------------------------------------------


def _json_number(d):
    """A Decimal as a JSON number: an integer when whole."""
    return int(d) if d == d.to_integral_value() else float(d)


def dry_run(ctx: StudyContext, args: argparse.Namespace) -> int:
    con = console_of(args)
    _out = con.line
    ec = study_config(ctx.config)
    seed = args.seed
    check_seed_syntax(seed, ec.seed_policy)
    sc = classify_seed(seed, ec.seed_policy, ctx.extras.get("projectRoot"))
    now = getattr(args, "now", None)
    now_t = parse_instant(now, "--now") if now else None
    _out(f"study {ctx.study_id} (spec {ctx.spec_digest}), generator {ec.generator_id}")
    _out(f"seed {seed!r}: syntax ok; {sc.word}: {sc.reason}")
    if sc.public:
        _out("  a public seed regenerates gold from source: it may be prepared, never bundled live")
    else:
        _out("  a private seed may be bundled for live collection")
    _out()
    _out("cells (allocation order):")
    w = max(len(c.key) for c in ec.cells) if ec.cells else 4
    _out(f"  {'split':<12} {'cell':<{w}} {'rows':>6}")
    totals: dict[str, int] = {}
    for c in ec.cells:
        _out(f"  {c.split.word:<12} {c.key:<{w}} {c.rows:>6}")
        totals[c.split.word] = totals.get(c.split.word, 0) + c.rows
    rows = sum(totals.values())
    per_split = ", ".join(f"{k} {v:,}" for k, v in totals.items())
    _out(f"totals: {len(ec.cells)} cells; {per_split}; all {rows:,} rows")
    _out()
    b = ec.budget
    plan = budget_plan(b, rows)
    _out("worst-case budget plan:")
    _out(f"  attempts = {rows:,} rows × (1 + {b['retriesPerRequest']} retries) = {plan.attempts:,}")
    _out(
        f"  reserved tokens = {plan.attempts:,} attempts × {b['perRequestTokenBound']:,} tokens"
        f" per request = {_fmt(plan.reserved_tokens)}"
    )
    _out(
        f"  reserved USD = {_fmt(plan.reserved_tokens)} / 1,000,000 ×"
        f" {b['reservationFloorUsdPerMillionTokens']} (reservation floor per 1M tokens)"
        f" = {_fmt(plan.reserved_usd)}"
    )

    def line(name, budget, used, head):
        flag = "ok" if head >= 0 else "EXCEEDED"
        return f"  {name}: budget {_fmt(budget)}, worst case {_fmt(used)}, headroom {_fmt(head)} ({flag})"

    _out("headroom against the study budget:")
    _out(line("calls", plan.study_calls, plan.attempts, plan.headroom_calls))
    _out(line("tokens", plan.study_tokens, plan.reserved_tokens, plan.headroom_tokens))
    _out(line("USD", plan.study_usd, plan.reserved_usd, plan.headroom_usd))
    _out(
        f"headroom against the shared cap: cap USD {_fmt(plan.shared_cap_usd)} − attested study"
        f" floor {_fmt(plan.study_floor_usd)} − reserved {_fmt(plan.reserved_usd)}"
        f" = {_fmt(plan.headroom_shared_usd)}"
        f" ({'ok' if plan.headroom_shared_usd >= 0 else 'EXCEEDED'})"
    )
    _out(f"  attested portfolio floor: USD {_fmt(plan.portfolio_floor_usd)}")
    _out(f"per-request bound within every limit: {'yes' if plan.within else 'no'}")
    from .handoff import registered_plan

    within, plan_lines, registered = registered_plan(ctx, rows)
    _out(
        "registered worst-case reservation (constant hand-off-budget, the figures the plan is"
        " decided on):"
    )
    for ln in plan_lines:
        _out(ln)
    _out(f"plan within the allowance and the shared cap: {'yes' if within else 'no (refused)'}")
    _out()
    win = calibration_window(ec.calibration)
    minutes = ec.calibration["sessionMinutes"]
    _out(
        f"calibration artifact: effective {iso_ms(win.effective_at)}, valid"
        f" {ec.calibration['validDays']} days, expires {iso_ms(win.expires_at)}"
    )
    _out(f"  latest start of a {minutes}-minute session: {iso_ms(win.latest_start)}")
    window_ok = True
    if now_t is not None:
        ok = win.may_start(now_t) and now_t >= win.effective_at
        window_ok = ok
        if now_t < win.effective_at:
            _out(
                f"  now {iso_ms(now_t)}: a session may not start yet (the calibrator is"
                f" effective from {iso_ms(win.effective_at)})"
            )
        else:
            _out(
                f"  now {iso_ms(now_t)}: a {minutes}-minute session may"
                f" {'still' if ok else 'no longer'} start ({'ends' if ok else 'would end'}"
                f" {iso_ms(now_t + win.session)}, expiry {iso_ms(win.expires_at)})"
            )
    n = _json_number
    con.summary(
        {
            "specDigest": ctx.spec_digest,
            "generatorId": ec.generator_id,
            "seed": seed,
            "seedClass": sc.word,
            "public": bool(sc.public),
            "cells": [{"split": c.split.word, "cell": c.key, "rows": c.rows} for c in ec.cells],
            "rows": {"bySplit": totals, "all": rows},
            "budget": {
                "attempts": plan.attempts,
                "reservedTokens": n(plan.reserved_tokens),
                "reservedUsd": n(plan.reserved_usd),
                "headroom": {
                    "calls": n(plan.headroom_calls),
                    "tokens": n(plan.headroom_tokens),
                    "usd": n(plan.headroom_usd),
                    "sharedUsd": n(plan.headroom_shared_usd),
                },
                "withinEveryLimit": bool(plan.within),
            },
            "registeredPlan": registered,
            "calibration": {
                "effectiveAt": iso_ms(win.effective_at),
                "expiresAt": iso_ms(win.expires_at),
                "latestSessionStart": iso_ms(win.latest_start),
                **(
                    {"now": iso_ms(now_t), "sessionMayStart": bool(window_ok)}
                    if now_t is not None
                    else {}
                ),
            },
        }
    )
    # exit 1 when a bound is exceeded: the registered plan's, or, with --now, the window's
    return 0 if within and window_ok else 1


# -- prepare ------------------------------------------------------------------------------------


def prepared_files(ctx: StudyContext, p: Prepared) -> tuple[list[tuple[str, bytes, int]], dict]:
    """The five output files (name, bytes, mode) and the preregistration object."""
    ec = p.ec
    corpus_bytes = "".join(r.record_line for r in p.order).encode("utf-8")
    corpus_digest = PREFIX + sha256_hex(corpus_bytes)
    gold_members = dict(p.gold_members or canonical_members(p.gold))
    gold_members.update(canonical_members({"specDigest": ctx.spec_digest}))
    audit_file = dict(p.audit)
    audit_file["specDigest"] = ctx.spec_digest
    counts: dict[str, dict[str, int]] = {}
    for c in ec.cells:
        counts[f"{c.split.word}:{c.key}"] = {ec.label_yes: 0, ec.label_no: 0}
    for r in p.corpus.rows:
        counts[f"{r.cell.split.word}:{r.cell.key}"][r.label] += 1
    sc = classify_seed(p.seed, ec.seed_policy)
    analysis = {
        "specDigest": ctx.spec_digest,
        "generatorId": ec.generator_id,
        "seed": p.seed,
        "dispatchOrderDigest": p.dispatch_digest,
        "auditDigest": p.audit_digest,
        "cells": cell_table(ec, counts),
    }
    prereg = {
        "studyId": ctx.study_id,
        "specDigest": ctx.spec_digest,
        "generatorId": ec.generator_id,
        "seed": p.seed,
        "seedClass": sc.word,
        "rows": len(p.order),
        "corpusDigest": corpus_digest,
        "goldDigest": p.gold_digest,
        "auditDigest": p.audit_digest,
        "dispatchOrderDigest": p.dispatch_digest,
    }
    files = [
        (CORPUS, corpus_bytes, 0o644),
        (GOLD, join_members(gold_members) + b"\n", 0o600),
        (AUDIT, canonical_bytes_nl(audit_file), 0o644),
        (ANALYSIS, canonical_bytes_nl(analysis), 0o644),
        (PREREGISTRATION, canonical_bytes_nl(prereg), 0o644),
    ]
    return files, prereg


# Regenerated prepared folders, kept in the process: (study id, spec digest, the engine
# configuration's JSON, seed) -> (each file's name and digest, the preregistration object).
# Preparation is a function of these alone (the tests regenerate every folder byte for byte,
# with any number of workers), so a process that prepared or checked a seed once need not
# generate the study again to check a folder against it: the demo runs prepare,
# approval-template, bundle and the lineage score of the same two seeds in one process (and
# carries what a lane's process kept into its study's process: prereg.kept).
# Only the regenerated side is kept, never a folder's bytes: a folder changed after it was
# written is found out as before.
_REGENERATED: dict[tuple[str, str, str, str], tuple[tuple[tuple[str, str], ...], dict]] = kept(
    "reachability.regenerated"
)
_REGENERATED_KEPT = 8


def _regenerated_key(ctx: StudyContext, ec, seed: str) -> tuple[str, str, str, str]:
    return (ctx.study_id, ctx.spec_digest, json.dumps(ec.raw, sort_keys=True), seed)


def _remember(key, files, prereg: dict) -> None:
    digests = tuple(
        (name, PREFIX + sha256_hex(data if isinstance(data, bytes) else data.encode("utf-8")))
        for name, data, _mode in files
    )
    _REGENERATED.pop(key, None)
    _REGENERATED[key] = (digests, json.loads(json.dumps(prereg)))
    while len(_REGENERATED) > _REGENERATED_KEPT:
        del _REGENERATED[next(iter(_REGENERATED))]


def regenerated_digests(
    ctx: StudyContext, ec, seed: str
) -> tuple[tuple[tuple[str, str], ...], dict[str, Any]]:
    """Each prepared file's (name, ``sha256:`` digest) and the preregistration object of the
    study regenerated from ``seed``, as ``prepare`` would write them (generated once per
    process and seed; see ``_REGENERATED``)."""
    key = _regenerated_key(ctx, ec, seed)
    if key not in _REGENERATED:
        p = prepare_memory(ec, seed, workers=default_workers())
        files, prereg = prepared_files(ctx, p)
        _remember(key, files, prereg)
    digests, prereg = _REGENERATED[key]
    return digests, json.loads(json.dumps(prereg))


def prepare(ctx: StudyContext, args: argparse.Namespace) -> int:
    ec = study_config(ctx.config)
    seed = args.seed
    check_seed_syntax(seed, ec.seed_policy)
    outdir = Path(args.outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UserError(f"{outdir}: exists and is not a folder")
    refuse_existing(*(outdir / n for n in OUTPUTS))
    from .handoff import refuse_over_budget

    refuse_over_budget(ctx, sum(c.rows for c in ec.cells))
    workers = int(getattr(args, "workers", None) or default_workers())
    p = prepare_memory(ec, seed, workers=workers)
    files, prereg = prepared_files(ctx, p)
    # All five files appear at once (a folder renamed into place), or none does.
    write_folder_new(outdir, files)
    _remember(_regenerated_key(ctx, ec, seed), files, prereg)
    a = p.audit
    _out(f"prepared {len(p.order):,} rows for seed {seed!r} into {outdir}")
    for k in ("corpusDigest", "goldDigest", "dispatchOrderDigest", "auditDigest"):
        _out(f"  {k}: {prereg[k]}")
    _out(
        f"  shortcut audit: equalizedMax {a['equalizedMax']} (limit {a['limit']}),"
        f" controlMax {a['controlMax']}"
    )
    return 0


# -- dev-review-material ------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    """A prepared-folder JSON object, read strictly (regular file, no duplicate keys or NaN)."""
    return read_json_file(path, missing="is this a prepared folder?")


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return path != root


def dev_review_material(ctx: StudyContext, args: argparse.Namespace) -> int:
    ec = study_config(ctx.config)
    outdir = Path(args.outdir)
    out = output_file(args.out)
    root_arg = getattr(args, "artifact_root", None)
    root = Path(root_arg) if root_arg else outdir.resolve().parent
    root_r = root.resolve()
    out_r = out.resolve()
    if not _under(out_r, root_r):
        raise UserError(
            f"{out}: the review material holds gold and must lie under the artifact root"
            f" {root_r} (--artifact-root, default: the prepared folder's parent)"
        )
    refuse_existing(out)
    prereg = _read_json(outdir / PREREGISTRATION)
    if prereg.get("specDigest") != ctx.spec_digest:
        raise UserError(
            f"{outdir / PREREGISTRATION}: prepared under spec {prereg.get('specDigest')},"
            f" not the current spec {ctx.spec_digest}; prepare again"
        )
    seed = prereg.get("seed")
    check_seed_syntax(seed, ec.seed_policy)
    # a seed committed anywhere in the project's repository (or its history) is public too
    sc = classify_seed(seed, ec.seed_policy, ctx.extras.get("projectRoot"), history=True)
    if sc.public:  # review material holds gold: only for a seed whose gold is not public
        code = ctx.config["constants"]["refusal-codes"]["publicSeed"]
        raise UserError(
            f"{code}: {outdir / PREREGISTRATION}: seed {seed!r} is public ({sc.reason}); its"
            " development review material would hold gold anyone can regenerate from source,"
            " so none is written; prepare a fresh private seed"
        )
    corpus_path = outdir / CORPUS
    try:
        corpus_bytes = read_regular(corpus_path)
    except FileNotFoundError:
        raise UserError(f"{corpus_path}: missing (is this a prepared folder?)") from None
    except OSError as exc:
        raise UserError(f"{corpus_path}: cannot read: {exc.strerror or exc}") from None
    if PREFIX + sha256_hex(corpus_bytes) != prereg.get("corpusDigest"):
        raise UserError(f"{corpus_path}: digest differs from corpusDigest in {PREREGISTRATION}")
    from .prepared import corpus_records
    from .score_commands import gold_file

    gold_obj, gold_digest = gold_file(outdir / GOLD)
    if gold_digest != prereg.get("goldDigest"):
        raise UserError(f"{outdir / GOLD}: digest differs from goldDigest in {PREREGISTRATION}")
    fast = corpus_records(corpus_bytes)
    if fast is not None:  # a corpus as prepare writes it: the same records as the strict reader's
        import msgspec

        records = msgspec.to_builtins(fast)
    else:
        records = []
        for n, line in enumerate(corpus_bytes.decode("utf-8", "replace").splitlines(), start=1):
            try:
                records.append(loads_strict(line))
            except ValueError as exc:
                from prereg.records import json_line_problem

                raise UserError(
                    f"{corpus_path}:{n}: {json_line_problem(exc, line)[:220]}"
                ) from None
    oracle = TextOracle(ec)
    items = []
    for _, rec in select_dev_rows(ec, records, gold_obj["worlds"]):
        payload = rec["input"]["payload"]
        try:
            oracle_label = oracle.label(payload)
        except OracleError as exc:
            oracle_label = f"unreadable: {exc}"
        world = gold_obj["worlds"][rec["id"]]
        items.append(
            {
                "blind": {"payload": payload},
                "unblind": {
                    "rowId": rec["id"],
                    "goldLabel": gold_obj["labels"][rec["id"]],
                    "textOracleLabel": oracle_label,
                    "cell": rec["slice"],
                    "factors": {
                        "split": rec["split"],
                        "pool": world["pool"],
                        "hops": world["hops"],
                        "outcome": world["outcome"],
                        "layout": world["layout"],
                    },
                    "latentWorld": world,
                },
            }
        )
    material = {
        "schemaVersion": ec.schema_versions["devReview"],
        "specDigest": ctx.spec_digest,
        "generatorId": ec.generator_id,
        "seed": prereg.get("seed"),
        "corpusDigest": prereg.get("corpusDigest"),
        "goldDigest": prereg.get("goldDigest"),
        **({"development": sc.development} if sc.development else {}),
        "items": items,
    }
    text = json.dumps(material, indent=2, ensure_ascii=False) + "\n"
    write_new(out, text, mode=0o600)
    per = ", ".join(f"{o} {n}" for o, n in ec.dev_review)
    _out(f"wrote {len(items)} development rows for blind review to {out} (mode 600): {per}")
    if sc.development:
        _out(f"  development material: {sc.development}")
    return 0


# -- audit-sweep --------------------------------------------------------------------------------


def _sweep_one(config_json: str, seed: str, positive_control: bool) -> dict[str, Any]:
    """One seed of a sweep (runs in a worker process or in-process)."""
    gen, auditor = worker_tools(config_json)
    try:
        p = prepare_memory(
            gen.ec,
            seed,
            records=False,
            refuse_failing_audit=False,
            positive_control=positive_control,
            generator=gen,
            auditor=auditor,
            dispatch=False,
        )
    except UserError as exc:
        return {"seed": seed, "error": "; ".join(exc.lines())}
    out = {
        "seed": seed,
        "equalizedMax": p.audit["equalizedMax"],
        "passes": p.audit["equalizedPasses"],
        "groups": {g["group"]: g["max"] for g in p.audit["groups"]},
    }
    if positive_control:
        pc = p.positive_control()
        out["control"] = {
            "equalizedMax": pc["equalizedMax"],
            "passes": pc["passes"],
            "groups": {g["group"]: max(g["scores"][k] for k in LEARNERS) for g in pc["groups"]},
        }
    return out


#: The most seeds one audit-sweep takes: about two CPU-days; a count of 2^53 was listed before
#: anything ran, until memory ran out.
MAX_SWEEP = 100_000


def sweep(config: Mapping[str, Any], seeds: list[str], positive_control: bool, workers: int):
    """Results of :func:`_sweep_one` for each seed, yielded in seed order as each is ready
    (with workers, a seed's result comes as soon as it and every earlier seed are done)."""
    config_json = json.dumps(config, sort_keys=True)
    if workers <= 1 or len(seeds) <= 1:
        for s in seeds:
            yield _sweep_one(config_json, s, positive_control)
        return
    with ProcessPoolExecutor(max_workers=min(workers, len(seeds))) as pool:
        yield from pool.map(
            _sweep_one,
            [config_json] * len(seeds),
            seeds,
            [positive_control] * len(seeds),
        )


def audit_sweep(ctx: StudyContext, args: argparse.Namespace) -> int:
    con = console_of(args)
    _out = con.line
    ec = study_config(ctx.config)
    prefix = args.prefix
    try:
        count = int(args.count)
    except (TypeError, ValueError):
        raise UserError(f"COUNT: {args.count!r} is not a whole number") from None
    if count < 1:
        raise UserError(f"COUNT: must be at least 1, got {count}")
    if count > MAX_SWEEP:
        raise UserError(
            f"COUNT: {count:,} seeds; at most {MAX_SWEEP:,} (each prepares and audits a corpus,"
            " about 2 CPU-s; the seeds are listed and held until the summary)"
        )
    for s in (f"{prefix}0", f"{prefix}{count - 1}"):
        check_seed_syntax(s, ec.seed_policy)
    seeds = [f"{prefix}{k}" for k in range(count)]
    pc = bool(getattr(args, "positive_control", False))
    workers = getattr(args, "workers", None) or default_workers()
    mode = "positive control (chain-first order)" if pc else "shortcut audit"
    _out(f"{mode} sweep of {count} seed(s) {seeds[0]} … {seeds[-1]} (limit {ec.audit['limit']})")
    values = []
    errors = 0
    good = 0
    rows = []
    progress = con.progress(f"audit-sweep {prefix}", count, unit="seeds")
    try:
        for r in sweep(ec.raw, seeds, pc, int(workers)):
            progress.step()
            if "error" in r:
                errors += 1
                rows.append({"seed": r["seed"], "refused": r["error"]})
                _out(f"  {r['seed']}: refused: {r['error']}")
                continue
            row = {"seed": r["seed"], "equalizedMax": r["equalizedMax"], "passes": r["passes"]}
            if pc:
                c = r["control"]
                values.append(c["equalizedMax"])
                ok = not c["passes"]
                good += ok
                row["chainFirst"] = {"equalizedMax": c["equalizedMax"], "passes": c["passes"]}
                _out(
                    f"  {r['seed']}: equalizedMax {r['equalizedMax']}; chain-first order"
                    f" {c['equalizedMax']} ({'audit fails, as it must' if ok else 'AUDIT PASSES'})"
                )
            else:
                values.append(r["equalizedMax"])
                good += r["passes"]
                _out(
                    f"  {r['seed']}: equalizedMax {r['equalizedMax']}"
                    f" ({'pass' if r['passes'] else 'FAIL'})"
                )
            rows.append(row)
    finally:
        progress.close()
    med = None
    if values:
        med = round_half_up(statistics.median(values), ec.audit["decimals"])
        label = "chain-first equalizedMax" if pc else "equalizedMax"
        _out(
            f"{label}: max {max(values)}, median {med}, min {min(values)}"
            f" over {len(values)} seed(s)"
        )
    if pc:
        _out(f"positive control: the audit fails on {good} of {count} seed(s)")
    else:
        _out(f"passing: {good} of {count} seed(s)")
    if errors:
        _out(f"refused: {errors} seed(s)")
    con.summary(
        {
            "prefix": prefix,
            "count": count,
            "positiveControl": pc,
            "limit": ec.audit["limit"],
            "seeds": rows,
            "max": max(values) if values else None,
            "median": med,
            "min": min(values) if values else None,
            "good": good,
            "refused": errors,
            "passed": good == count,
        }
    )
    return 0 if good == count else 1


COMMANDS = {
    "dry_run": dry_run,
    "prepare": prepare,
    "dev_review_material": dev_review_material,
    "audit_sweep": audit_sweep,
}
