"""Benchmark: scoring the 5,778-row d17-multifact study (target: score ≤ 1 s wall).

Prepares the public demo seed under the compiled study, simulates the d17-finding respondent
and fits a calibrator, then prints medians of:

- the stages of ``score`` in this process (prepared-folder verification, observation reading
  against the contract with the typed reader the command uses and with the strict per-line
  reader it falls back to, figures + rules, the whole handler including writing
  SCORE.json/.md);
- ``prereg d17-multifact score`` in a new Python process (interpreter start and imports
  included).

    python bench/bench_d17_score.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDY = "d17-multifact"
SEED = "d17mf-public-demo"
STARTS = "2026-10-15T09:00:00Z"
EVALUATED = "2026-10-20T00:00:00Z"
EFFECTIVE = "2026-10-02T10:02:34.263Z"


def cli(*args) -> int:
    from prereg.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        return main(["--project", str(ROOT), STUDY, *map(str, args)])


def prepare(out: Path) -> None:
    """The study's prepare command (public demo seed)."""
    if cli("prepare", SEED, out) != 0:
        raise SystemExit("prepare of the demo seed failed")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs

    from prereg.compiler.project import Project
    from prereg.engines.reachability import score_commands as sc
    from prereg.engines.reachability import scoring
    from prereg.records import read_jsonl_records, read_records
    from prereg.study import study_context

    module, ctx = study_context(Project(ROOT), STUDY)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        prep = d / "prepared"
        prepare(prep)
        obs, cal = d / "obs.jsonl", d / "cal.json"
        assert cli("simulate", prep, "--scenario", "d17-finding", "--seed", 1, "--out", obs) == 0
        assert cli("calibrator-fit", obs, prep / "gold.json", "--effective-at", EFFECTIVE, "--out", cal) == 0  # fmt: skip
        cal_digest = json.loads(cal.read_text())["digest"]
        spec = scoring.scoring_spec(ctx.config)
        rules = sc.rules_module(module)
        schema = sc.schema_path(module, spec.contracts["observation"])
        blocks = json.loads(cal.read_text())["blocks"]
        times: dict[str, list[float]] = {}

        def timed(name, fn, *args):
            t = time.perf_counter()
            out = fn(*args)
            times.setdefault(name, []).append(time.perf_counter() - t)
            return out

        argv = [
            "score", prep, obs, "--calibrator", cal, "--calibrator-digest", cal_digest,
            "--session-start", STARTS, "--evaluated-at", EVALUATED,
        ]  # fmt: skip
        for r in range(runs):
            _, table, _ = timed("verify prepared folder", sc.load_prepared, ctx, prep, spec)
            recs = timed("read observations (typed reader)", read_jsonl_records, obs, schema)
            timed("read observations (strict reader)", read_records, obs, schema, "jsonl")
            counted = timed("terminal attempts", scoring.counted_attempts, recs, table, spec, "o")
            args = (ctx.config, rules, table, counted.p_yes(spec), blocks, spec)
            score = functools.partial(scoring.score, counted=counted)
            timed("figures, contrasts, rules", score, *args)
            timed("score handler (in process)", cli, *argv, "--out", d / f"S{r}.json")
        for r in range(runs):
            out = d / f"C{r}.json"
            cmd = [sys.executable, "-m", "prereg.cli", "--project", str(ROOT), STUDY]
            cmd += [str(a) for a in argv] + ["--out", str(out)]
            t = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            times.setdefault("prereg d17-multifact score (new process)", []).append(
                time.perf_counter() - t
            )
            if proc.returncode != 0:
                print(proc.stderr)
                return 1
    print(f"d17-multifact score, 5,778 rows, d17-finding observations; median of {runs} runs:")
    for name, ts in times.items():
        print(f"  {name:<45} {statistics.median(ts):7.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
