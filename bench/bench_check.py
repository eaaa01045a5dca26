"""Wall time of `prereg check` over all specs (target: under 1 s on 2 cores)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "prereg.cli", "check"], cwd=ROOT, capture_output=True
        )
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            sys.stdout.write(proc.stdout.decode())
            raise SystemExit("prereg check failed; fix generated/ before benchmarking")
    print(
        f"prereg check (all specs, new process): median {statistics.median(times):.3f} s over {len(times)} runs (target < 1 s)"
    )


if __name__ == "__main__":
    main()
