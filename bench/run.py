"""Run every benchmark in bench/ and print its figures (medians). Not a pass/fail test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
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
