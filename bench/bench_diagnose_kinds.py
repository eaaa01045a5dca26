"""Benchmark: diagnose's simulated studies per CPU second for each scenario kind.

Each kind is a small study compiled into a scratch project from the test fixtures, diagnosed in
this process (one block after a warm-up block, CPU time of the process): the counts path on a
two-arm proportion design (answer-position's spec, 2,560 rows) and the row path on a two-arm
design with Fisher's exact test, Welch's test on log latencies and the catalogue's ratio of
geometric means (60 rows), a calibration design with ECE and AUROC rules (200 rows) and a
paired design with the exact McNemar test and a paired t test (80 rows, a pairing scenario),
and the structured scenarios of examples/units (clusters, samples per problem, raters per
item, with units), which every block draws and scores study by study.  The row path draws every row of every simulated study; it is measured both ways: a block
scored whole from arrays (prereg.diagnose.batch, the default) and study by study from records
(the path before it, still taken by rules the block path does not cover), so its figure is per
simulated study, not per row.  Each figure is the median of ``--runs`` timed blocks.

    python bench/bench_diagnose_kinds.py [--simulations 250] [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

KINDS = (
    # (label, spec file, study id, scenario)
    ("two-arm proportions (counts path)", "examples/answer-position/spec/studies/answer-position.yaml", "answer-position", "no-bias"),
    ("continuous + Fisher (row path)", "tests/fixtures/diagnose/latency-analyses.yaml", "latency-analyses", "better"),
    ("calibration ECE/AUROC (row path)", "tests/fixtures/diagnose/calibration.yaml", "calibration", "overconfident"),
    ("paired McNemar + paired t (row path)", "tests/fixtures/diagnose/paired.yaml", "paired", "correlated"),
    ("clustered paired proportions (units)", "examples/units/spec/studies/repo-pairs.yaml", "repo-pairs", "equal-arms"),
    ("clustered cluster-level t (units)", "examples/units/spec/studies/cluster-arms.yaml", "cluster-arms", "new-faster"),
    ("samples per problem pass@k (units)", "examples/units/spec/studies/samples-units.yaml", "samples-units", "nucleus-better"),
    ("raters per item Fleiss (units)", "examples/units/spec/studies/raters-units.yaml", "raters-units", "good-raters"),
)  # fmt: skip


def one(
    root: Path, spec: str, study: str, scenario: str, simulations: int, runs: int
) -> tuple[float, float | None, int]:
    """(median CPU seconds of a block, the same study by study on the row path, rows)."""
    from prereg.cli import main
    from prereg.compiler.project import Project
    from prereg.diagnose import rows as row_path
    from prereg.diagnose.command import build_plan
    from prereg.diagnose.design import Rules
    from prereg.diagnose.rows import needs_rows
    from prereg.diagnose.run import run_block
    from prereg.engines.factorial.commands import diagnose_design
    from prereg.study import study_context

    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(ROOT / spec, root / "spec" / "studies" / Path(spec).name)
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    module, ctx = study_context(Project(root), study)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    design = diagnose_design(ctx.config)
    path = "rows" if needs_rows(design, rules) else "counts"
    plan, _ = build_plan(ctx, design, rules, [scenario], simulations, 1, path)

    def timed(batched: bool) -> float:
        row_path.BATCHED = batched
        run_block(plan, 0, 0)  # warm-up: caches, imports
        got = []
        for _ in range(runs):
            t = time.process_time()
            run_block(plan, 0, 0)
            got.append(time.process_time() - t)
        return statistics.median(got)

    rows = int(design.group_rows.sum())
    if path != "rows":
        return timed(True), None, rows
    return timed(True), timed(False), rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=250)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    n = min(args.simulations, 250)  # one block
    load = os.getloadavg()[0]
    print(
        f"simulated studies per CPU second (one block of {n}, median of {args.runs} after a"
        f" warm-up block; load {load:.2f})"
    )
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, spec, study, scenario) in enumerate(KINDS):
            cpu, alone, rows = one(Path(tmp) / str(i), spec, study, scenario, n, args.runs)
            rate = n / cpu
            reference = reference or rate
            line = f"  {label:40s} {rows:6,} rows  {rate:10,.0f} studies/s  ({cpu:.3f} s CPU)"
            if alone is not None:
                line += (
                    f"  {reference / rate:5.1f}x the counts path's time;"
                    f" study by study {n / alone:,.0f}/s ({rate * alone / n:.0f}x slower)"
                )
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
