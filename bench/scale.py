"""The scale benchmark: items, simulate and score of a factorial study with N registered rows,
jev score and freeze-manifest, each as a whole ``prereg`` process beside its floor measured in
the same run. Not a pass/fail test; nothing asserts a time.

The study is the answer-position example (2 models x 4 positions x 2 formats, a tuning and a
test split: 32 cells) with its test cells' rows raised so that the study registers about N
rows (the 16 tuning cells keep their 10 rows each). Floors, each a whole process too:

- items, simulate: copying the bytes the command wrote (``shutil.copyfile`` of its output: a
  read from the page cache and a write of the same bytes, interpreter start included);
- score: ``pyarrow.json.read_json`` of the same two files (items and observations), pyarrow's
  import included;
- jev score (100k + 100k lists, the inputs of ``workloads.py``'s jev row): msgspec's
  ``decode_lines`` of the same three files into Python objects, msgspec's import included;
- freeze-manifest over a root whose analysis code is a 1 GiB file (``workloads.py``'s freeze
  row): ``openssl dgst -sha256`` of that file.

``--workers K`` adds a row of ``score --workers K`` (rows reduced in buckets on K local
processes, :mod:`prereg.bucketed`) beside the one-process score, against the same floor.
``--formats parquet csv`` adds rows of score (and of ``--workers K``) on the same inputs
converted to Parquet (row groups of 131,072 rows) or CSV, each against pyarrow's read of
those files.
``--ten-million`` adds one score of a 10,000,000-row study (about 1.6 GB of JSONL in a
temporary folder; building it takes a few minutes) and its pyarrow floor, one run each, for
their peak memory.

    python bench/scale.py                      # N = 200,000, median of 3
    python bench/scale.py --rows 1000000 --only score jev freeze
    python bench/scale.py --rows 1000000 --only score --ten-million
    python bench/scale.py --rows 1000000 --only score --workers 2   # plus score --workers 2
    git archive REV | tar -x -C /tmp/before     # an older commit, whole
    BENCH_BEFORE=/tmp/before/runtime python bench/scale.py   # alternate with older code

Each ratio is median over median, of wall time and of CPU seconds (pyarrow reads on both cores,
so its wall and CPU ratios differ). The load average is printed before and after. Peak RSS is
each process's own (``wait4``; the harness stays small and writes nothing large itself). With
BENCH_BEFORE every prereg workload also runs with the older runtime first on the path,
alternating run by run; its rows say ``[before]``.
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

from workloads import (  # noqa: E402
    BEFORE,
    ROOT,
    Result,
    freeze_pair,
    jev_pair,
    machine_speed,
    prereg_cmd,
    ratios,
    report,
    timed,
)

STUDY = "answer-position"
WORKLOADS = ("items", "simulate", "score", "jev", "freeze")
TEN_MILLION = 10_000_000
TUNING_ROWS = 16 * 10


def make_project(folder: Path, rows: int, runtime: Path | None = None) -> tuple[Path, int]:
    """The answer-position example with its test cells raised to about ``rows`` registered rows
    in all, compiled by the runtime in ``runtime`` (this checkout's by default: the study's
    generated code is of the runtime that runs it); returns (project root, registered rows)."""
    per_cell = max(1, (rows - TUNING_ROWS) // 16)
    test_rows = 16 * per_cell
    root = folder / "project"
    shutil.copytree(ROOT / "examples" / STUDY / "spec", root / "spec")
    (root / "generated").mkdir()
    runtime = Path(runtime or ROOT / "runtime")
    language = runtime.parent / "generated" / "prereg.schema.json"  # an exported commit's
    if not language.is_file():
        language = ROOT / "generated" / "prereg.schema.json"
    shutil.copy(language, root / "generated")
    spec = root / "spec" / "studies" / f"{STUDY}.yaml"
    text = spec.read_text()
    text, n = re.subn(r"(split: test, rows: )150\b", rf"\g<1>{per_cell}", text)
    assert n == 1, "the example's test crossing changed: update bench/scale.py"
    text, n = re.subn(r"(scope: test, rows: )2400\b", rf"\g<1>{test_rows}", text)
    assert n == 1, "the example's test total changed: update bench/scale.py"
    # the claims are about the 150-row design; at scale they only cost compile time
    text = re.sub(r"\nclaims:\n(?:  .*\n|    .*\n)+", "\n", text)
    spec.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(runtime)}
    subprocess.run(
        prereg_cmd("--project", root, "compile"), check=True, capture_output=True, env=env
    )
    return root, TUNING_ROWS + test_rows


#: {a project compiled by this checkout: the same project compiled by BENCH_BEFORE's runtime}
BEFORE_PROJECTS: dict[str, str] = {}


def on_before(make):
    """``make`` (a command of a fresh folder) with each project of this checkout in it swapped
    for the one BENCH_BEFORE's runtime compiled, or None without BENCH_BEFORE."""
    if not BEFORE:
        return None
    return lambda d: [BEFORE_PROJECTS.get(a, a) for a in make(d)]


def study_cmd(root: Path, *args) -> list[str]:
    return prereg_cmd("--project", root, STUDY, *args)


def copy_cmd(src: Path, dst: Path) -> list[str]:
    return [sys.executable, "-c", f"import shutil; shutil.copyfile({str(src)!r}, {str(dst)!r})"]


def pyarrow_cmd(*paths: Path) -> list[str]:
    """A process reading ``paths`` with pyarrow: JSON, or Parquet and CSV by extension."""
    readers = {".parquet": "pq.read_table", ".csv": "c.read_csv"}
    reads = "; ".join(f"{readers.get(p.suffix, 'j.read_json')}({str(p)!r})" for p in paths)
    imports = "import pyarrow.json as j, pyarrow.parquet as pq, pyarrow.csv as c"
    return [sys.executable, "-c", f"{imports}; {reads}"]


def converted(items: Path, obs: Path, fmt: str) -> tuple[Path, Path]:
    """The manifest and observations as ``fmt`` files beside them (not timed): Parquet of
    row groups of 131,072 rows (pyarrow's writer's default is one group of up to a million),
    or CSV as pyarrow writes it (every text quoted)."""
    import pyarrow.csv as pcsv
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    out = []
    for path in (items, obs):
        table = pj.read_json(path)
        target = path.with_suffix(f".{fmt}")
        if fmt == "parquet":
            pq.write_table(table, target, row_group_size=1 << 17)
        else:
            pcsv.write_csv(table, target)
        out.append(target)
    return out[0], out[1]


def ratio_line(ours: Result, floor: Result) -> None:
    for res in (ours.before, ours):
        if res is not None:
            print(f"  {res.name:<52} {ratios(res, floor)} its floor ({floor.name.strip()})")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} cores"


def make_inputs(tmp: Path, rows: int) -> tuple[Path, int, Path, Path]:
    """(project, registered rows, items.jsonl, observations) of the study at ``rows`` rows,
    made once and not timed."""
    if BEFORE:
        BEFORE_PROJECTS[str(tmp / "project")] = str(
            make_project(tmp / "before", rows, Path(BEFORE))[0]
        )
    root, rows = make_project(tmp, rows)
    items = tmp / "items.jsonl"
    obs = tmp / "obs.jsonl"
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
        ),  # fmt: skip
        check=True,
        capture_output=True,
    )
    return root, rows, items, obs


def describe(rows: int, items: Path, obs: Path) -> int:
    attempts = sum(1 for _ in obs.open("rb"))
    print(
        f"factorial study {STUDY}: {rows:,} registered rows, {attempts:,} attempts;"
        f" items.jsonl {items.stat().st_size / 2**20:.1f} MiB, observations"
        f" {obs.stat().st_size / 2**20:.1f} MiB",
        flush=True,
    )
    return attempts


def score_pair(root: Path, items: Path, obs: Path, runs: int, warm: bool = True, extra: tuple = ()):
    shown = ("score", *map(str, extra))
    if items.suffix != ".jsonl":  # a converted pair: its format named
        shown += (f"({items.suffix[1:]})",)

    def score(d: Path) -> list[str]:
        return study_cmd(
            root, "score", "--items", items, "--observations", obs, "--out", d / "S.json", *extra
        )

    sc = timed(" ".join(shown), score, runs, warm=warm, before_cmd=on_before(score))
    floor = timed(
        f"pyarrow's read of both ({items.suffix[1:]})",
        lambda d: pyarrow_cmd(items, obs),
        runs,
        warm=warm,
    )
    return sc, floor


def ten_million(tmp: Path) -> tuple[Result, Result]:
    """One score of a 10,000,000-row study and one pyarrow read of its files (no warm run:
    the files were just written, so they are in the page cache)."""
    print(f"building the {TEN_MILLION:,}-row study (not timed) ...", flush=True)
    root, rows, items, obs = make_inputs(tmp / "ten-million", TEN_MILLION)
    describe(rows, items, obs)
    return score_pair(root, items, obs, 1, warm=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="registered rows (about)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each workload")
    ap.add_argument(
        "--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="these workloads"
    )
    ap.add_argument(
        "--ten-million",
        action="store_true",
        help="also one score of a 10M-row study, for its peak memory (minutes, ~2 GB of disk)",
    )
    ap.add_argument(
        "--workers", type=int, default=None, help="also score --workers K (rows in buckets)"
    )
    ap.add_argument(
        "--formats",
        nargs="+",
        choices=("parquet", "csv"),
        default=[],
        help="also score the same inputs as Parquet or CSV files (and --workers K of them)",
    )
    ap.add_argument("--freeze-mib", type=int, default=1024, help="freeze's analysis code, MiB")
    args = ap.parse_args()
    if BEFORE:
        print(f"[before]: the runtime in BENCH_BEFORE={BEFORE}, alternating with this checkout's")
    print(f"start: {load()}", flush=True)
    loop, sha = machine_speed()
    print(
        f"machine speed now: pure-Python loop {loop:.3f} s, SHA-256 of 64 MiB {sha:.3f} s",
        flush=True,
    )
    r = args.runs
    shown: list[tuple[str, Result, Result]] = []
    with tempfile.TemporaryDirectory(prefix="prereg-scale-") as tmp:
        tmp = Path(tmp)
        rows = 0
        if {"items", "simulate", "score"} & set(args.only):
            root, rows, items, obs = make_inputs(tmp, args.rows)
            describe(rows, items, obs)
        print(f"whole processes, median of {r}", flush=True)
        if "items" in args.only:
            make = lambda d: study_cmd(root, "items", "--out", d / "i.jsonl")  # noqa: E731
            it = timed("items", make, r, before_cmd=on_before(make))
            floor = timed("copy items.jsonl", lambda d: copy_cmd(items, d / "i.jsonl"), r)
            shown.append(("items", it, floor))
        if "simulate" in args.only:
            make = lambda d: study_cmd(  # noqa: E731
                root, "simulate", "--items", items, "--scenario", "position-bias",
                "--seed", 1, "--out", d / "o.jsonl",
            )  # fmt: skip
            sim = timed("simulate", make, r, before_cmd=on_before(make))
            floor = timed("copy observations", lambda d: copy_cmd(obs, d / "o.jsonl"), r)
            shown.append(("simulate", sim, floor))
        if "score" in args.only:
            shown.append(("score", *score_pair(root, items, obs, r)))
            if args.workers:
                extra = ("--workers", args.workers)
                shown.append(("score-workers", *score_pair(root, items, obs, r, extra=extra)))
            for fmt in args.formats:
                pair = converted(items, obs, fmt)
                shown.append((f"score-{fmt}", *score_pair(root, *pair, r)))
                if args.workers:
                    extra = ("--workers", args.workers)
                    shown.append((f"score-{fmt}-workers", *score_pair(root, *pair, r, extra=extra)))
        if "jev" in args.only:
            res, floor, _ = jev_pair(tmp, r)
            shown.append(("jev", res, floor))
        if "freeze" in args.only:
            ours, theirs = freeze_pair(tmp, args.freeze_mib, r)
            if theirs is None:
                print("  openssl not found: freeze-manifest has no floor here")
            else:
                shown.append(("freeze", ours, theirs))
        for f in tmp.iterdir():  # the million-row inputs are not needed any more
            if f.is_file():
                f.unlink()
        big = ten_million(tmp) if args.ten_million else None
    for _, ours, floor in shown:
        report(ours, None)
        report(floor, None)
    print("ratios (median over median of the floor, same run):")
    for _, ours, floor in shown:
        ratio_line(ours, floor)
    per_m = 1e6 / rows if rows else 0
    for name, ours, _ in shown:
        if name not in ("items", "simulate", "score"):
            continue
        for res in (ours.before, ours):
            if res is not None:
                med = statistics.median(res.walls) * per_m
                cpu = statistics.median(res.cpus) * per_m
                print(f"  {res.name:<52} {med:7.2f} s ({cpu:.2f} CPU-s) per 1M rows")
    if big is not None:
        sc, floor = big
        print(f"{TEN_MILLION:,} rows, one run each:")
        report(sc, None)
        report(floor, None)
        ratio_line(sc, floor)
        for res in (sc.before, sc):
            if res is not None:
                print(f"  {res.name:<52} peak RSS {res.rss_kib / 2**20:.2f} GiB (goal ≤ 1 GiB)")
    print(f"end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
