"""Benchmark: diagnose of d17-multifact (target: 10,000 simulated studies under one scenario on
2 cores in at most 20 s).

Prints medians of:

- 10,000 studies of the d17-finding scenario scored through the block runner with 2 worker
  processes (pool start-up included; the plan built once beforehand);
- the same in this one process (the cost per simulated study);
- ``prereg d17-multifact diagnose --scenario d17-finding --simulations 10000 --workers 2`` in a
  new Python process (imports, the claims' own scenario at 0.13, writing the document).

    python bench/bench_diagnose.py [--runs 3] [--simulations 10000]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDY = "d17-multifact"
SCENARIO = "d17-finding"


def plan(simulations: int):
    from prereg.compiler.project import Project
    from prereg.diagnose.command import build_plan
    from prereg.diagnose.design import Rules
    from prereg.engines.reachability.diagnose import diagnose_design
    from prereg.study import study_context

    module, ctx = study_context(Project(ROOT), STUDY)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    p, _ = build_plan(ctx, diagnose_design(ctx.config), rules, [SCENARIO], simulations, 1)
    return replace(p, conditions=p.conditions[:1])


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--simulations", type=int, default=10_000)
    args = ap.parse_args()
    from prereg import runner
    from prereg.diagnose.run import run_task

    n = args.simulations
    p = plan(n)
    two = [timed(lambda: runner.run(run_task, p, p.tasks(), workers=2)) for _ in range(args.runs)]
    print(
        f"{n:,} studies, 2 worker processes: median {statistics.median(two):.2f} s (target ≤ 20 s)"
    )
    small = plan(2_000)
    one = [timed(lambda: runner.run(run_task, small, small.tasks())) for _ in range(args.runs)]
    per = statistics.median(one) / 2_000 * 1000
    print(f"one process: median {per:.2f} ms per simulated study")
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            out = Path(tmp) / f"D{i}.json"
            cmd = [sys.executable, "-m", "prereg.cli", STUDY, "diagnose", "--scenario", SCENARIO]
            cmd += ["--simulations", str(n), "--seed", "1", "--workers", "2", "--out", str(out)]
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
            walls.append(time.perf_counter() - t0)
    print(
        f"prereg {STUDY} diagnose --simulations {n:,} --workers 2 (plus the claims' scenario):"
        f" median {statistics.median(walls):.2f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
