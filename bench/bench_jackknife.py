"""Timing of the closed-form jackknife SEs on 10,000 cohorts × 500 task slots (prints medians).

Target: under 0.3 s for the task-level jackknife of 10,000 cohorts × 500 tasks.
Run: python bench/bench_jackknife.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from prereg.stats.resampling import (
    cluster_jackknife_two_stratum,
    segment_sums,
    unit_jackknife_two_stratum,
    unit_jackknife_two_stratum_filled,
)

REPEATS = 5
COHORTS, TASKS, CLUSTERS = 10_000, 500, 12


def timed(label: str, fn) -> None:
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    print(
        f"{label:<58} median {statistics.median(runs):7.3f} s  "
        f"(min {min(runs):.3f}, max {max(runs):.3f}, {REPEATS} runs)"
    )


def main() -> None:
    rng = np.random.default_rng(20261011)
    shape = (COHORTS, TASKS)
    x = rng.normal(size=shape)
    y = rng.normal(size=shape)
    kind = rng.random(shape)
    a = (kind < 0.38).astype(np.float64)  # pass statistic present
    b = (kind > 0.18).astype(np.float64)  # fail statistic present (every slot has one)
    x *= a
    y *= b
    wp, wf = 210 / 640, 430 / 640
    print(f"{COHORTS:,} cohorts × {TASKS} task slots; {CLUSTERS} clusters per cohort")
    timed(
        "task level, both strata in every slot (filled)",
        lambda: unit_jackknife_two_stratum_filled(x, None, y, None, wp, wf),
    )
    timed(
        "task level, strata missing in some slots (filled)",
        lambda: unit_jackknife_two_stratum_filled(x, a, y, b, wp, wf),
    )
    hp, hf = a.astype(bool), b.astype(bool)
    timed(
        "task level, public wrapper with boolean masks",
        lambda: unit_jackknife_two_stratum(x, hp, y, hf, wp, wf),
    )
    lengths = np.full((COHORTS, CLUSTERS), TASKS // CLUSTERS)
    lengths[:, : TASKS - lengths.sum(axis=1)[0]] += 1

    def cluster_level():
        sx = segment_sums(x, lengths)
        sy = segment_sums(y, lengths)
        ca = segment_sums(a, lengths)
        cb = segment_sums(b, lengths)
        return cluster_jackknife_two_stratum(sx, ca, sy, cb, wp, wf)

    timed("cluster level incl. 4 segment sums (reduceat)", cluster_level)


if __name__ == "__main__":
    main()
