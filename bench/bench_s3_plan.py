"""Timing of the canonical s3 power plan on the bundled calibration sample (prints medians).

The canonical plan: 10,000 cohorts per rung, eligible task count 500, repository count 12,
pass items 210, fail items 430 (rungs 50, 75, 100, 150, 200, 300, 500).  Goal: at most
0.6 s wall for the whole command (the performance issue's; bench/workloads.py times it next
to that goal).  Two figures: the simulation in a warm process (build_plan), and the whole command
in a fresh interpreter (start-up, imports, reading, simulation, writing), with
OPENBLAS_NUM_THREADS=1 and with the default environment.
Run: python bench/bench_s3_plan.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "s3" / "calibration-sample.jsonl"
REPEATS = 5
ELIGIBLE = (500, 12, 210, 430)

COMMAND = [
    "-m",
    "prereg.cli",
    "s3-verifier-freeze",
    "power-plan",
    str(SAMPLE),
    "--eligible-task-count",
    "500",
    "--eligible-repository-count",
    "12",
    "--eligible-pass-items",
    "210",
    "--eligible-fail-items",
    "430",
    "--out",
]


def _config():
    from prereg.compiler.project import Project
    from prereg.study import study_context

    _, ctx = study_context(Project(ROOT), "s3-verifier-freeze")
    return ctx.config


def in_process() -> dict:
    from prereg.engines.clusterpower.calibration_input import read_calibration
    from prereg.engines.clusterpower.config import plan_config
    from prereg.engines.clusterpower.plan import Eligible, build_plan

    cfg = plan_config(_config())
    cal = read_calibration(SAMPLE, cfg.input)
    el = Eligible(*ELIGIBLE)
    runs, plan = [], None
    for _ in range(REPEATS + 1):
        start = time.perf_counter()
        plan = build_plan(cfg, cal, el, spec_digest="sha256:" + "0" * 64, amendment_version="bench")
        runs.append(time.perf_counter() - start)
    print(
        f"build_plan, warm process (first run {runs[0]:.3f} s, incl. its first-use imports): "
        f"median {statistics.median(runs[1:]):.3f} s (min {min(runs[1:]):.3f}, "
        f"max {max(runs[1:]):.3f}, {REPEATS} runs)"
    )
    return plan


def whole_command(env_label: str, env: dict) -> None:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(REPEATS):
            out = Path(tmp) / f"plan{i}.json"
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, *COMMAND, str(out)],
                check=True,
                env=env,
                stdout=subprocess.DEVNULL,
                cwd=ROOT,
            )
            runs.append(time.perf_counter() - start)
    print(
        f"whole command, fresh interpreter, {env_label}: median {statistics.median(runs):.3f} s "
        f"(min {min(runs):.3f}, max {max(runs):.3f}, {REPEATS} runs)"
    )


def main() -> None:
    plan = in_process()
    print(
        f"  status {plan['status']}, selected {plan['selectedTaskCount']}, powers "
        + ", ".join(f"{r['taskCount']}:{r['power']:.4f}" for r in plan["rungs"])
    )
    print(f"  selfSha256 {plan['selfSha256']}")
    one = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    whole_command("OPENBLAS_NUM_THREADS=1", one)
    default = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    whole_command("default threads", default)


if __name__ == "__main__":
    main()
