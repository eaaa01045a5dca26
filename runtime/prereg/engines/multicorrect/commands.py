"""Command handlers: ``score`` and ``diagnostic`` (``handler(ctx, args) -> int``).

``ctx.config`` is the compiled spec config, read by :func:`.config.engine_config` (an
:class:`EngineConfig` is taken as it is).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from prereg.console import console_of
from prereg.engines import StudyContext
from prereg.engines.multicorrect.config import engine_config
from prereg.engines.multicorrect.ece import ece_pair_of_arrays
from prereg.engines.multicorrect.reader import read_packed_inputs
from prereg.engines.multicorrect.scoring import (
    check_rounding,
    evaluate_test,
    fit_threshold,
    retrospective_curve,
)
from prereg.errors import UserError
from prereg.files import canonical_bytes_nl, refuse_existing, write_new
from prereg.gcpause import paused
from prereg.outputs import camel_keys

#: The most seeds one diagnostic runs (each runs the whole diagnostic, about 0.2 CPU-s and 2 KB
#: of the document; the registered run has three); constant diagnostic-seeds has the same bound.
MAX_SEEDS = 1000


def _check_out(path: str) -> None:
    refuse_existing(path)
    parent = Path(path).parent
    if parent.exists() and not parent.is_dir():
        raise UserError(f"{path}: {parent} is not a folder")


def build_report(ctx: StudyContext, args) -> dict[str, Any]:
    """The REPORT.json document for ``args`` (lists, labels, predictions, binary_outputs,
    rounding_decimals), its keys camelCase (:mod:`prereg.outputs`); raises UserError for every
    input problem."""
    cfg = engine_config(ctx.config)
    d = check_rounding(getattr(args, "rounding_decimals", None))
    binary_path = getattr(args, "binary_outputs", None)
    inputs = read_packed_inputs(cfg, args.lists, args.labels, args.predictions, binary_path)
    fit_pk, evaluate_pk = inputs.fit, inputs.evaluate
    for split, pk in ((cfg.fit_split, fit_pk), (cfg.evaluate_split, evaluate_pk)):
        if not pk.n:
            raise UserError(f"{args.labels}: no row has split {split!r}; both splits are needed")
    fit = fit_threshold(fit_pk, cfg, rounding_decimals=d)
    test = evaluate_test(fit, evaluate_pk, cfg, rounding_decimals=d)
    retro = retrospective_curve(fit, evaluate_pk, cfg, rounding_decimals=d)
    report: dict[str, Any] = {
        "schemaVersion": cfg.report_schema,
        "study_id": ctx.study_id,
        "spec_digest": ctx.spec_digest,
        "inputs": inputs.digests,
        "rounding_decimals": d,
        "threshold": fit.threshold,
        "threshold_numerator": fit.numerator,
        "threshold_denominator": fit.denominator,
        "fit_split": cfg.fit_split,
        "evaluate_split": cfg.evaluate_split,
        "fit_curve": [p.to_json() for p in fit.curve],
        "retrospective_curve": {
            "diagnostic_only": True,
            "splits": [cfg.fit_split, cfg.evaluate_split],
            "points": [p.to_json() for p in retro],
        },
    }
    if inputs.binary_q is not None:
        q, y = inputs.binary_q, inputs.binary_y
        report["binary_outputs"] = int(q.size)
        report["ece"], report["ece_excluding_first_bin"] = ece_pair_of_arrays(q, y, d)
    report = camel_keys(report)
    # keyed by the spec's split ids, which keep their spelling
    report["splits"] = {
        cfg.fit_split: camel_keys(fit.validation.to_json()),
        cfg.evaluate_split: camel_keys(test.to_json()),
    }
    return report


def score(ctx: StudyContext, args) -> int:
    """Score LISTS/LABELS/PREDICTIONS (and optional BINARY) into a new REPORT.json.

    The cyclic garbage collector is paused while the report is built (the reader pauses it
    while reading, see :func:`.reader.read_packed_inputs`; nothing here makes a cycle): its
    passes over the hundreds of thousands of containers the reading leaves young cost about
    30 ms otherwise."""
    _check_out(args.out)
    with paused():
        report = build_report(ctx, args)
        data = canonical_bytes_nl(report)
    write_new(args.out, data)
    cfg = engine_config(ctx.config)
    evaluated = report["splits"][cfg.evaluate_split]
    con = console_of(args)
    con.line(
        f"{args.out}: threshold {report['threshold']} fitted on {cfg.fit_split}; "
        f"{cfg.evaluate_split} exact-set accuracy {evaluated['exactSetAccuracy']}, "
        f"micro F1 {evaluated['microF1']}"
    )
    con.summary(
        {
            "outputs": [str(args.out)],
            "threshold": report["threshold"],
            "fitSplit": cfg.fit_split,
            "evaluateSplit": cfg.evaluate_split,
            "exactSetAccuracy": evaluated["exactSetAccuracy"],
            "microF1": evaluated["microF1"],
        }
    )
    return 0


def diagnostic_passes(cfg, results: list[dict[str, Any]]) -> bool:
    """The diagnostic's pass: the registered rule over the held-<contract> shares of every seed
    run, decided by the shared evaluator."""
    from prereg.engines.multicorrect.figures import held_figures, passes

    return passes(cfg.diagnostic.decision, held_figures(results, cfg.diagnostic.contracts))


def diagnostic(ctx: StudyContext, args) -> int:
    """Run the diagnostic for each seed; print canonical JSON (or, given ``args.out``, write it
    to that new file and print one line per seed); exit 1 if a contract fails."""
    out = getattr(args, "out", None)
    if out is not None:
        _check_out(out)
    from prereg.engines.multicorrect.contracts import diagnostic as run_diagnostic

    cfg = engine_config(ctx.config)
    given = getattr(args, "seeds", None)
    seeds = list(cfg.diagnostic_seeds if given is None else given)
    if not seeds:
        raise UserError("--seeds: give at least one seed")
    if len(seeds) > MAX_SEEDS:
        raise UserError(
            f"--seeds: {len(seeds):,} seeds; at most {MAX_SEEDS:,} (each runs the whole"
            " diagnostic; for the rules' behaviour over many runs, use diagnose --simulations)"
        )
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise UserError(f"--seeds: {s!r} is not a non-negative integer")
    if len(set(seeds)) != len(seeds):
        raise UserError("--seeds: a seed is listed twice")
    results = [run_diagnostic(s, cfg) for s in seeds]
    passed = diagnostic_passes(cfg, results)
    doc = {
        "schemaVersion": cfg.diagnostic_schema,
        "study_id": ctx.study_id,
        "spec_digest": ctx.spec_digest,
        "passed": passed,
        "seeds": results,
    }
    doc = camel_keys(doc)
    data = canonical_bytes_nl(doc)
    con = console_of(args)
    if out is None:
        if con.json_mode:
            con.summary(doc)  # the document itself is the summary
        else:
            sys.stdout.write(data.decode("utf-8"))
    else:
        write_new(out, data)
        for r in results:
            held = sum(c["passed"] for c in r["contracts"])
            con.line(f"seed {r['seed']}: {held} of {len(r['contracts'])} contracts hold")
        con.line(f"{out}: {'passed' if passed else 'FAILED'}")
        con.summary(
            {
                "outputs": [str(out)],
                "passed": passed,
                "seeds": [
                    {
                        "seed": r["seed"],
                        "passed": r["passed"],
                        "failed": [c["contract"] for c in r["contracts"] if not c["passed"]],
                    }
                    for r in results
                ],
            }
        )
    for r in results:
        for c in r["contracts"]:
            if not c["passed"]:
                print(
                    f"seed {r['seed']}: contract {c['number']} ({c['contract']}) failed",
                    file=sys.stderr,
                )
    return 0 if passed else 1
