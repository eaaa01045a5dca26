"""Benchmark: d17-multifact preparation and audit sweep (targets: prepare ≤ 2 s, sweep ≤ 60 s).

Uses the compiled study (generated/d17_multifact, spec/studies/d17-multifact.yaml) and prints medians:

- ``prepare`` of the public demo seed (5,778 rows: generation, text oracle, dispatch order,
  shortcut audit, digests, the five files) in this process, per stage and in total;
- the same in a new Python process (interpreter start and imports included);
- ``audit-sweep`` of seeds d17mf-sweep-0 … d17mf-sweep-63 (default worker processes).

    python bench/bench_d17.py [--runs 5] [--sweep-count 64] [--no-sweep]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = "d17mf-public-demo"

CHILD = """
import argparse, json, sys, tempfile, time, contextlib, io
t0 = time.perf_counter()
from prereg.engines.reachability import COMMANDS
from prereg.compiler.project import Project
from prereg.study import study_context
_, ctx = study_context(Project(sys.argv[1]), "d17-multifact")
with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()):
    COMMANDS["prepare"](ctx, argparse.Namespace(seed=sys.argv[2], outdir=d + "/out"))
print(time.perf_counter() - t0)
"""


def stages(ec, seed: str) -> dict[str, float]:
    from prereg.engines.reachability.audit import ShortcutAudit
    from prereg.engines.reachability.canon import record_digest
    from prereg.engines.reachability.dispatch import dispatch_order, dispatch_order_digest
    from prereg.engines.reachability.generate import Generator, gold_object
    from prereg.engines.reachability.pipeline import check_oracle

    out = {}
    t = time.perf_counter()
    corpus = Generator(ec).corpus(seed)
    out["generate + records"] = time.perf_counter() - t
    t = time.perf_counter()
    check_oracle(ec, corpus.rows)
    out["text oracle"] = time.perf_counter() - t
    t = time.perf_counter()
    dispatch_order_digest(dispatch_order(ec, corpus))
    record_digest(gold_object(ec, corpus.rows))
    out["dispatch + gold digest"] = time.perf_counter() - t
    auditor = ShortcutAudit(ec)
    t = time.perf_counter()
    groups = auditor.groups(corpus.rows)
    out["audit features"] = time.perf_counter() - t
    t = time.perf_counter()
    auditor.scores(groups)
    out["audit learners"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sweep-count", type=int, default=64)
    ap.add_argument("--no-sweep", action="store_true")
    a = ap.parse_args()

    from prereg.compiler.project import Project
    from prereg.engines.reachability import COMMANDS
    from prereg.engines.reachability.config import study_config
    from prereg.study import study_context

    _, ctx = study_context(Project(ROOT), "d17-multifact")
    ec = study_config(ctx.config)
    print(f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")

    per: dict[str, list[float]] = {}
    for _ in range(a.runs):
        for k, v in stages(ec, SEED).items():
            per.setdefault(k, []).append(v)
    for k, v in per.items():
        print(f"  stage {k:<24} median {statistics.median(v):.3f} s")

    times = []
    for _ in range(a.runs):
        with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()):
            t = time.perf_counter()
            COMMANDS["prepare"](ctx, argparse.Namespace(seed=SEED, outdir=d + "/out"))
            times.append(time.perf_counter() - t)
    print(
        f"prepare {SEED} (5,778 rows, in process): median {statistics.median(times):.3f} s"
        f" over {len(times)} runs (min {min(times):.3f}, max {max(times):.3f}; target ≤ 2 s)"
    )

    times = []
    for _ in range(max(1, a.runs // 2 + 1)):
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(ROOT), SEED],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            sys.stdout.write(proc.stdout + proc.stderr)
            raise SystemExit("prepare failed in a new process")
    print(
        f"prepare {SEED} (new process, imports included): median {statistics.median(times):.3f} s"
        f" over {len(times)} runs"
    )

    if not a.no_sweep:
        buf = io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stdout(buf):
            rc = COMMANDS["audit_sweep"](
                ctx,
                argparse.Namespace(
                    prefix="d17mf-sweep-", count=a.sweep_count, positive_control=False
                ),
            )
        dt = time.perf_counter() - t
        summary = [
            ln for ln in buf.getvalue().splitlines() if ln.startswith(("equalizedMax", "passing"))
        ]
        print(
            f"audit-sweep d17mf-sweep-0..{a.sweep_count - 1}: {dt:.1f} s (one run; target ≤ 60 s"
            f" for 64 seeds), exit {rc}; " + "; ".join(summary)
        )


if __name__ == "__main__":
    main()
