"""The factorial engine at scale: items, simulate and score of a study with N registered rows,
each as a whole ``prereg`` process beside its floor measured in the same run. Not a pass/fail
test; nothing asserts a time.

The study is the answer-position example (2 models x 4 positions x 2 formats, a tuning and a
test split: 32 cells) with its test cells' rows raised so that the study registers about N
rows (the 16 tuning cells keep their 10 rows each). Floors, each a whole process too:

- items, simulate: copying the bytes the command wrote (``shutil.copyfile`` of its output: a
  read from the page cache and a write of the same bytes, interpreter start included);
- score: ``pyarrow.json.read_json`` of the same two files (items and observations), pyarrow's
  import included.

    python bench/scale.py                      # N = 200,000, median of 3
    python bench/scale.py --rows 1000000 --runs 1
    python bench/scale.py --only items score  # simulate left out
    BENCH_BEFORE=/tmp/before/runtime python bench/scale.py   # alternate with older code

Peak RSS is each process's own (``wait4``; the harness stays small and writes nothing large
itself). With BENCH_BEFORE every prereg workload also runs with the older runtime first on the
path, alternating run by run; its rows say ``[before]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import BEFORE, ROOT, Result, prereg_cmd, report, timed  # noqa: E402

STUDY = "answer-position"
WORKLOADS = ("items", "simulate", "score")
TUNING_ROWS = 16 * 10


def make_project(folder: Path, rows: int) -> tuple[Path, int]:
    """The answer-position example with its test cells raised to about ``rows`` registered rows
    in all; returns (project root, registered rows)."""
    per_cell = max(1, (rows - TUNING_ROWS) // 16)
    test_rows = 16 * per_cell
    root = folder / "project"
    shutil.copytree(ROOT / "examples" / STUDY / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    spec = root / "spec" / "studies" / f"{STUDY}.yaml"
    text = spec.read_text()
    text, n = re.subn(r"(split: test, rows: )150\b", rf"\g<1>{per_cell}", text)
    assert n == 1, "the example's test crossing changed: update bench/scale.py"
    text, n = re.subn(r"(scope: test, rows: )2400\b", rf"\g<1>{test_rows}", text)
    assert n == 1, "the example's test total changed: update bench/scale.py"
    # the claims are about the 150-row design; at scale they only cost compile time
    text = re.sub(r"\nclaims:\n(?:  .*\n|    .*\n)+", "\n", text)
    spec.write_text(text)
    # compiled by this checkout (an exported runtime has no language schema beside it)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "runtime")}
    subprocess.run(
        prereg_cmd("--project", root, "compile"), check=True, capture_output=True, env=env
    )
    return root, TUNING_ROWS + test_rows


def study_cmd(root: Path, *args) -> list[str]:
    return prereg_cmd("--project", root, STUDY, *args)


def copy_cmd(src: Path, dst: Path) -> list[str]:
    return [sys.executable, "-c", f"import shutil; shutil.copyfile({str(src)!r}, {str(dst)!r})"]


def pyarrow_cmd(*paths: Path) -> list[str]:
    reads = "; ".join(f"j.read_json({str(p)!r})" for p in paths)
    return [sys.executable, "-c", f"import pyarrow.json as j; {reads}"]


def ratio_line(name: str, ours: Result, floor: Result) -> None:
    for res in (ours.before, ours):
        if res is None:
            continue
        r = statistics.median(res.walls) / statistics.median(floor.walls)
        print(f"  {res.name:<52} {r:6.2f}× its floor ({floor.name})", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="registered rows (about)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each workload")
    ap.add_argument(
        "--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="these workloads"
    )
    args = ap.parse_args()
    if BEFORE:
        print(f"[before]: the runtime in BENCH_BEFORE={BEFORE}, alternating with this checkout's")
    with tempfile.TemporaryDirectory(prefix="prereg-scale-") as tmp:
        tmp = Path(tmp)
        root, rows = make_project(tmp, args.rows)
        items = tmp / "items.jsonl"
        obs = tmp / "obs.jsonl"
        # inputs for score and the floors, made once and not timed
        subprocess.run(study_cmd(root, "items", "--out", items), check=True, capture_output=True)
        subprocess.run(
            study_cmd(
                root,
                "simulate",
                "--items",
                items,
                "--scenario",
                "position-bias",
                "--seed",
                1,
                "--out",
                obs,
            ),
            check=True,
            capture_output=True,
        )
        attempts = sum(1 for _ in obs.open("rb"))
        print(
            f"factorial study {STUDY} at scale: {rows:,} registered rows, {attempts:,} attempts;"
            f" items.jsonl {items.stat().st_size / 2**20:.1f} MiB, observations"
            f" {obs.stat().st_size / 2**20:.1f} MiB; median of {args.runs}",
            flush=True,
        )
        r = args.runs
        shown: list[tuple[str, Result, Result]] = []
        if "items" in args.only:
            it = timed("items", lambda d: study_cmd(root, "items", "--out", d / "i.jsonl"), r)
            floor = timed("copy items.jsonl", lambda d: copy_cmd(items, d / "i.jsonl"), r)
            shown.append(("items", it, floor))
        if "simulate" in args.only:
            sim = timed(
                "simulate",
                lambda d: study_cmd(
                    root,
                    "simulate",
                    "--items",
                    items,
                    "--scenario",
                    "position-bias",
                    "--seed",
                    1,
                    "--out",
                    d / "o.jsonl",
                ),
                r,
            )
            floor = timed("copy observations", lambda d: copy_cmd(obs, d / "o.jsonl"), r)
            shown.append(("simulate", sim, floor))
        if "score" in args.only:
            sc = timed(
                "score",
                lambda d: study_cmd(
                    root, "score", "--items", items, "--observations", obs, "--out", d / "S.json"
                ),
                r,
            )
            floor = timed("pyarrow.json.read_json of both", lambda d: pyarrow_cmd(items, obs), r)
            shown.append(("score", sc, floor))
        for _, ours, floor in shown:
            report(ours, None)
            report(floor, None)
        print("ratios (median wall / median wall of the floor, same run):")
        for name, ours, floor in shown:
            ratio_line(name, ours, floor)
        per_m = 1e6 / rows
        for name, ours, _ in shown:
            if name == "score":
                continue
            for res in (ours.before, ours):
                if res is not None:
                    med = statistics.median(res.walls) * per_m
                    print(f"  {res.name:<52} {med:7.2f} s per 1M rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
