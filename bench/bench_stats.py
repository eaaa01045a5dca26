"""Timing figures for the statistics primitives (median of several runs; prints, never asserts).

Run: python bench/bench_stats.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from prereg.stats.calibration import apply_isotonic, decile_ece, ece_ten_bin, fit_isotonic_blocks
from prereg.stats.multiplicity import holm_adjust
from prereg.stats.proportions import newcombe_difference, pooled_z_test, wilson_interval
from prereg.stats.roc import auroc, hanley_mcneil

REPEATS = 7


def timed(label: str, fn, size: int) -> None:
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    med = statistics.median(runs)
    print(f"{label:<44} n={size:>9,}  median {med * 1e3:9.3f} ms  ({size / med:,.0f} items/s)")


def main() -> None:
    rng = np.random.default_rng(20261011)
    n = 1_000_000
    n1 = rng.integers(0, 500, n)
    k1 = rng.integers(0, n1 + 1)
    n2 = rng.integers(0, 500, n)
    k2 = rng.integers(0, n2 + 1)
    timed("wilson_interval (arrays)", lambda: wilson_interval(k1, n1, level=0.95), n)
    timed("newcombe_difference (arrays)", lambda: newcombe_difference(k1, n1, k2, n2, z=1.96), n)
    timed("pooled_z_test (arrays)", lambda: pooled_z_test(k1, n1, k2, n2), n)
    timed("wilson_interval (scalar call)", lambda: wilson_interval(3, 10, level=0.95), 1)

    p = rng.random(100_000)
    p[::10] = np.nan
    timed("holm_adjust", lambda: holm_adjust(p), p.size)

    scores = rng.random(n)
    labels = (rng.random(n) < scores).astype(np.int8)
    timed("auroc", lambda: auroc(scores, labels), n)
    auc = rng.random(n)
    timed("hanley_mcneil (arrays)", lambda: hanley_mcneil(auc, n1, n2, z=1.96), n)

    timed("ece_ten_bin", lambda: ece_ten_bin(scores, labels), n)
    timed("decile_ece", lambda: decile_ece(scores, labels), n)
    coarse = np.round(scores, 3)
    timed(
        "fit_isotonic_blocks (1,001 distinct scores)",
        lambda: fit_isotonic_blocks(coarse, labels, 30),
        n,
    )
    timed(
        "fit_isotonic_blocks (distinct scores)",
        lambda: fit_isotonic_blocks(scores[:200_000], labels[:200_000], 30),
        200_000,
    )
    blocks = fit_isotonic_blocks(coarse, labels, 30)
    timed(f"apply_isotonic ({len(blocks)} blocks)", lambda: apply_isotonic(blocks, scores), n)


if __name__ == "__main__":
    main()
