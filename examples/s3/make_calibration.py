#!/usr/bin/env python3
"""Write a seeded synthetic calibration input for the s3-verifier-freeze power plan.

Synthetic, not real data: repositories of unequal size, tasks holding a pass statistic, a fail
statistic or both, each statistic (nats/item) made of a stratum mean, a repository effect shared
by the repository's tasks, a task effect shared by the task's two strata, and noise.

    python examples/s3/make_calibration.py --out examples/s3/calibration-sample.jsonl

The bundled calibration-sample.jsonl was made with the defaults (seed 1080).  The output is
JSON Lines in the calibration contract's field order, one LF after every line; the same
seed gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

REPOSITORIES = (
    ("django", 38),
    ("sympy", 24),
    ("scikit-learn", 18),
    ("sphinx", 14),
    ("matplotlib", 11),
    ("pytest", 10),
    ("xarray", 8),
    ("astropy", 7),
    ("pylint", 6),
    ("requests", 5),
    ("seaborn", 5),
    ("flask", 4),
)
# share of tasks holding (both strata, pass only, fail only)
COMPOSITION = (0.20, 0.18, 0.62)
STRATUM_MEAN = {"official-pass": 0.06, "official-fail": 0.12}
REPOSITORY_SD = 0.03
TASK_SD = 0.20
NOISE_SD = 0.20


def records(seed: int) -> list[dict]:
    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    for repo, size in REPOSITORIES:
        repo_effect = rng.normal(0.0, REPOSITORY_SD)
        kinds = rng.choice(3, size=size, p=COMPOSITION)
        numbers = np.sort(rng.choice(np.arange(1000, 30000), size=size, replace=False))
        for kind, number in zip(kinds, numbers, strict=True):
            task_effect = rng.normal(0.0, TASK_SD)
            noise = rng.normal(0.0, NOISE_SD, size=2)
            labels = {0: ("official-pass", "official-fail"), 1: ("official-pass",)}.get(
                int(kind), ("official-fail",)
            )
            for label in labels:
                value = STRATUM_MEAN[label] + repo_effect + task_effect
                value += noise[0 if label == "official-pass" else 1]
                out.append(
                    {
                        "stage": "calibration",
                        "repository_id": repo,
                        "task_id": f"{repo}__{repo}-{int(number)}",
                        "class_label": label,
                        "delta_logscore": round(float(value), 6),
                    }
                )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1080)
    ap.add_argument("--out", help="output file (default: standard output); never overwritten")
    a = ap.parse_args(argv)
    text = "".join(
        json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n" for rec in records(a.seed)
    )
    if a.out:
        with open(a.out, "x", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
