"""Run every benchmark in bench/ and print its figures (medians). Not a pass/fail test.

First the workloads of the performance issue as users run them (bench/workloads.py: whole
`prereg` processes, median of 5, peak RSS, goal and ratio), then the finer benchmarks
(bench_*.py: stages in process). Arguments are passed to workloads.py (``--runs 3``,
``--only jev check``, ``--scaling``); see bench/README.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    print("== workloads.py", flush=True)
    if subprocess.run(
        [sys.executable, str(HERE / "workloads.py"), *sys.argv[1:]], cwd=HERE.parent
    ).returncode:
        failed.append("workloads.py")
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        proc = subprocess.run([sys.executable, str(script)], cwd=HERE.parent)
        if proc.returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
