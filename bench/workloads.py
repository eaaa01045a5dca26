"""The workloads of the performance issue, each timed as a user runs it: a whole `prereg …`
process (interpreter start, imports, reading, work, writing), median of N runs with min–max,
its CPU seconds and the peak resident memory of the process (its worker processes included),
next to the goal and the ratio to the goal.

    python bench/workloads.py [--runs 5] [--only NAME ...] [--scaling] [--list]

Inputs are made once before timing (not timed): the d17 prepared folder, observations and
calibrator for `score`; 100,000 + 100,000 jev lists written by a seeded generator; a freeze
root whose analysis code is a 1 GiB file. `--scaling` adds rows at several sizes (jev at
10k/100k/1M lists per split, the sweep at 8/16/32/64 seeds, power-plan at 1k/10k/100k
simulations) and prints the exponent fitted to each (log time against log size).
Figures, not pass/fail: nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PREREG = str(BIN / "prereg") if (BIN / "prereg").exists() else None
D17_SEED = "d17mf-public-demo"
CAL_EFFECTIVE = "2026-10-02T10:02:34.263Z"


def prereg_cmd(*args: str) -> list[str]:
    base = [PREREG] if PREREG else [sys.executable, "-m", "prereg.cli"]
    return [*base, *map(str, args)]


@dataclass
class Result:
    name: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kib: int = 0
    before: Result | None = None


def run_once(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, children included) and peak RSS (KiB) of one
    process; raises when it exits non-zero."""
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            text = err.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{text}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


#: The environment of the timed processes: the caller's, less PYTHONDONTWRITEBYTECODE (an
#: installed package has its bytecode cached; a source checkout writes it on the first, untimed,
#: run). With BENCH_BEFORE=DIR (the ``runtime`` folder of an older commit exported whole:
#: ``git archive REV | tar -x -C /tmp/before``, then DIR=/tmp/before/runtime), every workload
#: also runs with DIR first on the path, alternating run by run with this checkout's code, so
#: both meet the same machine load; its rows say "before". A study's project is compiled by
#: each runtime (its generated code is of the runtime that runs it).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
BEFORE = os.environ.get("BENCH_BEFORE")


def timed(
    name: str,
    make_cmd: Callable[[Path], list[str]],
    runs: int,
    env: dict | None = None,
    warm: bool = True,
    before_cmd: Callable[[Path], list[str]] | None = None,
) -> Result:
    """Run ``make_cmd(fresh folder)`` ``runs`` times, each writing into a fresh folder, after
    one untimed run when ``warm`` (bytecode and page cache as a user's second run finds them).
    With BENCH_BEFORE, the former code's runs alternate with these (``before_cmd`` when the
    former code needs another command: a project compiled by it); its result is ``.before``."""
    variants = {"after": {**ENV, **(env or {})}}
    if BEFORE:
        variants["before"] = {**variants["after"], "PYTHONPATH": BEFORE}
    results = {k: Result(name if k == "after" else f"{name} [before]") for k in variants}
    for k in range(runs + warm):
        for key, venv in variants.items():
            with tempfile.TemporaryDirectory(prefix="prereg-bench-") as tmp:
                make = before_cmd if key == "before" and before_cmd else make_cmd
                wall, cpu, rss = run_once(make(Path(tmp)), ROOT, venv)
            if warm and k == 0:
                continue
            res = results[key]
            res.walls.append(wall)
            res.cpus.append(cpu)
            res.rss_kib = max(res.rss_kib, rss)
    out = results["after"]
    out.before = results.get("before")
    return out


def report(res: Result, goal: float | None, note: str = "") -> None:
    if getattr(res, "before", None) is not None:
        report(res.before, goal, note)
    med = statistics.median(res.walls)
    ratio = f"{med / goal:5.2f}× goal" if goal else "          "
    goal_s = f"goal ≤ {goal:g} s" if goal else "no goal"
    print(
        f"  {res.name:<52} median {med:7.3f} s (min {min(res.walls):.3f}, max "
        f"{max(res.walls):.3f}; {statistics.median(res.cpus):.2f} CPU-s) peak RSS "
        f"{res.rss_kib / 1024:5.0f} MiB  {goal_s:<13} {ratio} {note}",
        flush=True,
    )


def fitted_exponent(sizes: list[float], times: list[float]) -> float:
    """Least-squares slope of log(time) against log(size)."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


# -- inputs (made once, not timed) ------------------------------------------------------------


def write_jev_inputs(folder: Path, n: int, seed: int = 12345, binary: bool = True) -> dict:
    """Seeded jev inputs: n validation + n test lists of 5-10 candidates, labels, predictions
    (5% refusals) and, with ``binary``, one binary output per option of every answered list."""
    import numpy as np

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {k: folder / f"{k}.jsonl" for k in ("lists", "labels", "predictions", "binary")}
    cands = {k: ", ".join(f'"option {j}"' for j in range(k)) for k in range(5, 11)}
    with (
        open(paths["lists"], "w") as fl,
        open(paths["labels"], "w") as fb,
        open(paths["predictions"], "w") as fp,
        open(paths["binary"], "w") as fo,
    ):
        for split, prefix in (("validation", "v"), ("test", "t")):
            m = rng.integers(5, 11, size=n)
            g = rng.integers(0, 4, size=n)
            refused = rng.random(n) < 0.05
            for i in range(n):
                k = int(m[i])
                w = rng.exponential(size=k)
                gi = min(int(g[i]), k)
                correct = sorted(rng.choice(k, size=gi, replace=False).tolist())
                for j in correct:
                    w[j] *= 4.0
                rid = f"{prefix}{i}"
                fl.write(
                    f'{{"request_id": "{rid}", "question": "q {i}", "candidates": [{cands[k]}]}}\n'
                )
                fb.write(f'{{"request_id": "{rid}", "split": "{split}", "correct": {correct}}}\n')
                if refused[i]:
                    fp.write(f'{{"request_id": "{rid}", "refused": true, "probabilities": null}}\n')
                    continue
                p = (w / w.sum()).tolist()
                fp.write(f'{{"request_id": "{rid}", "refused": false, "probabilities": {p}}}\n')
                if binary:
                    cs = set(correct)
                    for j in range(k):
                        q = round(p[j], 4)
                        fo.write(
                            f'{{"request_id": "{rid}", "candidate_index": {j}, '
                            f'"probability": {q}, "label": {int(j in cs)}}}\n'
                        )
    return paths


def prepare_d17(folder: Path) -> dict:
    """A prepared d17 folder, simulated observations and a fitted calibrator (for score)."""
    prep, obs, cal = folder / "prepared", folder / "obs.jsonl", folder / "cal.json"
    study = ["--project", str(ROOT), "d17-multifact"]
    subprocess.run(prereg_cmd(*study, "prepare", D17_SEED, prep), check=True, capture_output=True)
    subprocess.run(
        prereg_cmd(
            *study, "simulate", prep, "--scenario", "d17-finding", "--seed", 1, "--out", obs
        ),
        check=True,
        capture_output=True,
    )
    subprocess.run(
        prereg_cmd(
            *study,
            "calibrator-fit",
            obs,
            prep / "gold.json",
            "--effective-at",
            CAL_EFFECTIVE,
            "--out",
            cal,
        ),  # fmt: skip
        check=True,
        capture_output=True,
    )
    import json

    return {"prep": prep, "obs": obs, "cal": cal, "digest": json.loads(cal.read_text())["digest"]}


def prepare_freeze_root(folder: Path, size_mib: int) -> Path:
    """The demo freeze root with the analysis code replaced by a ``size_mib`` MiB file."""
    root = folder / "frozen"
    folder.mkdir(parents=True, exist_ok=True)
    s3 = ROOT / "examples" / "s3"
    study = ["--project", str(ROOT), "s3-verifier-freeze"]
    subprocess.run(
        prereg_cmd(
            *study,
            "assemble",
            s3 / "freeze-demo" / "freeze-input.json",
            "--root",
            s3,
            "--out",
            root,
            "--leave-out",
            "power_plan",
        ),  # fmt: skip
        check=True,
        capture_output=True,
    )
    subprocess.run(
        prereg_cmd(
            *study,
            "power-plan",
            root / "calibration-sample.jsonl",
            *POWER_PLAN,
            "--out",
            root / "freeze-demo" / "power_plan.json",
        ),  # fmt: skip
        check=True,
        capture_output=True,
    )
    big = root / "freeze-demo" / "analysis.py"
    big.chmod(0o644)
    # small blocks: a child's peak RSS as wait4 reports it starts from the harness's own peak
    block = b"# " + os.urandom(1 << 19).hex().encode()[: (1 << 20) - 3] + b"\n"
    with open(big, "wb") as fh:
        left = size_mib << 20
        while left:
            fh.write(block[: min(left, len(block))])
            left -= min(left, len(block))
    return root


# -- the workloads ------------------------------------------------------------------------------

POWER_PLAN = [
    "--eligible-task-count", "500", "--eligible-repository-count", "12",
    "--eligible-pass-items", "210", "--eligible-fail-items", "430",
]  # fmt: skip


def w_check(a, tmp: Path) -> None:
    report(timed("prereg check (3 specs)", lambda d: prereg_cmd("check"), a.runs), 0.5)


def w_prepare(a, tmp: Path) -> None:
    res = timed(
        f"d17-multifact prepare {D17_SEED}",
        lambda d: prereg_cmd("d17-multifact", "prepare", D17_SEED, d / "out"),
        a.runs,
    )
    report(res, 1.0)


def w_sweep(a, tmp: Path) -> None:
    def sweep(n: int) -> Callable[[Path], list[str]]:
        return lambda d: prereg_cmd("d17-multifact", "audit-sweep", "d17mf-sweep-", n)

    report(
        timed("d17-multifact audit-sweep d17mf-sweep- 64", sweep(64), a.sweep_runs, warm=False),
        30.0,
    )
    if a.scaling:
        sizes, meds = [], []
        for n in (8, 16, 32, 64):
            res = timed(f"  scaling: audit-sweep {n} seeds", sweep(n), a.sweep_runs, warm=False)
            report(res, None)
            sizes.append(n)
            meds.append(statistics.median(res.walls))
        print(f"  fitted exponent, sweep time ~ seeds^{fitted_exponent(sizes, meds):.2f}")


def w_power_plan(a, tmp: Path) -> None:
    sample = ROOT / "examples" / "s3" / "calibration-sample.jsonl"

    def plan(*extra: str) -> Callable[[Path], list[str]]:
        return lambda d: prereg_cmd(
            "s3-verifier-freeze", "power-plan", sample, *POWER_PLAN, *extra, "--out", d / "p.json"
        )

    report(timed("s3-verifier-freeze power-plan (canonical)", plan(), a.runs), 0.6)
    if a.scaling:
        sizes, meds = [], []
        for n in (1_000, 10_000, 100_000):
            res = timed(
                f"  scaling: power-plan --simulations {n}", plan("--simulations", str(n)), a.runs
            )
            report(res, None)
            sizes.append(n)
            meds.append(statistics.median(res.walls))
        print(
            f"  fitted exponent, power-plan time ~ simulations^{fitted_exponent(sizes, meds):.2f}"
        )


def w_d17_score(a, tmp: Path) -> None:
    f = prepare_d17(tmp / "d17")
    res = timed(
        "d17-multifact score (demo)",
        lambda d: prereg_cmd(
            "d17-multifact",
            "score",
            f["prep"],
            f["obs"],
            "--calibrator",
            f["cal"],
            "--calibrator-digest",
            f["digest"],
            "--session-start",
            "2026-10-15T09:00:00Z",
            "--evaluated-at",
            "2026-10-20T00:00:00Z",
            "--out",
            d / "SCORE.json",
        ),  # fmt: skip
        a.runs,
    )
    report(res, 0.5)


def _jev(paths: dict, binary: bool) -> Callable[[Path], list[str]]:
    extra = ["--binary-outputs", paths["binary"]] if binary else []
    return lambda d: prereg_cmd(
        "jev-multicorrect", "score", "--lists", paths["lists"], "--labels", paths["labels"],
        "--predictions", paths["predictions"], *extra, "--out", d / "REPORT.json",
    )  # fmt: skip


def _mb(paths: dict, binary: bool) -> float:
    keys = ("lists", "labels", "predictions") + (("binary",) if binary else ())
    return sum(paths[k].stat().st_size for k in keys) / 1e6


def jev_inputs(folder: Path, n: int, binary: bool = True) -> dict:
    """:func:`write_jev_inputs` in a child process: the harness itself stays small (a child's
    peak RSS as wait4 reports it includes the harness's memory at the moment of spawning)."""
    subprocess.run(
        [sys.executable, __file__, "--write-jev", str(folder), str(n), str(int(binary))],
        check=True,
    )
    return {k: folder / f"{k}.jsonl" for k in ("lists", "labels", "predictions", "binary")}


def msgspec_decode_cmd(*paths: Path) -> list[str]:
    """A process that decodes each JSONL file with msgspec into Python objects (every value
    made, no types checked): jev score's floor, interpreter start and msgspec's import
    included."""
    reads = "; ".join(f"d.decode_lines(open({str(p)!r}, 'rb').read())" for p in paths)
    return [sys.executable, "-c", f"import msgspec; d = msgspec.json.Decoder(); {reads}"]


def jev_pair(tmp: Path, runs: int, n: int = 100_000) -> tuple[Result, Result, dict]:
    """(jev score, its floor: msgspec decoding the same three files, the inputs), n + n lists."""
    paths = jev_inputs(tmp / "jev", n)
    k = f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"
    res = timed(f"jev-multicorrect score, {k} + {k} lists", _jev(paths, False), runs)
    files = (paths["lists"], paths["labels"], paths["predictions"])
    floor = timed(
        "  msgspec decode_lines of the same 3 files", lambda d: msgspec_decode_cmd(*files), runs
    )
    return res, floor, paths


def ratios(ours: Result, floor: Result) -> str:
    """Median wall over the floor's median wall, and the same of CPU seconds."""
    wall = statistics.median(ours.walls) / statistics.median(floor.walls)
    cpu = statistics.median(ours.cpus) / statistics.median(floor.cpus)
    return f"wall {wall:.2f}×, CPU {cpu:.2f}×"


def w_jev(a, tmp: Path) -> None:
    res, floor, paths = jev_pair(tmp, a.runs)
    report(res, 1.5, f"({_mb(paths, False):.0f} MB; RSS goal ≤ 200 MiB)")
    report(floor, None)
    print(f"  ratio to msgspec's decoding: {ratios(res, floor)} (goal ≤ 1.5×)")
    res = timed("  the same with --binary-outputs", _jev(paths, True), a.runs)
    report(res, None, f"({_mb(paths, True):.0f} MB)")
    if a.scaling:
        sizes, meds = [], []
        for n in (10_000, 100_000, 1_000_000):
            p = paths if n == 100_000 else jev_inputs(tmp / f"jev{n}", n, binary=False)
            res = timed(f"  scaling: jev score, {n:,} + {n:,} lists", _jev(p, False), a.runs)
            report(res, None, f"({_mb(p, False):.0f} MB)")
            sizes.append(n)
            meds.append(statistics.median(res.walls))
            if p is not paths:
                shutil.rmtree(p["lists"].parent)
        print(f"  fitted exponent, jev score time ~ lists^{fitted_exponent(sizes, meds):.2f}")


def freeze_pair(tmp: Path, mib: int, runs: int) -> tuple[Result, Result | None]:
    """(freeze-manifest of a root whose analysis code is ``mib`` MiB, ``openssl dgst -sha256``
    of that file: its floor, or None without openssl); the root is removed afterwards."""
    root = prepare_freeze_root(tmp / "freeze", mib)
    big = root / "freeze-demo" / "analysis.py"
    inp = ROOT / "examples" / "s3" / "freeze-demo" / "freeze-input.json"
    openssl = shutil.which("openssl")
    subprocess.run(["cat", str(big)], stdout=subprocess.DEVNULL, check=True)  # page cache
    try:
        ours = timed(
            f"s3 freeze-manifest, {mib} MiB analysis code",
            lambda d: prereg_cmd(
                "s3-verifier-freeze", "freeze-manifest", inp, "--root", root, "--out", d / "m.json"
            ),
            runs,
        )
        theirs = None
        if openssl is not None:
            theirs = timed(
                "  openssl dgst -sha256 on the same file",
                lambda d: [openssl, "dgst", "-sha256", big],
                runs,
            )
    finally:
        shutil.rmtree(root)
    return ours, theirs


def w_freeze(a, tmp: Path) -> None:
    ours, theirs = freeze_pair(tmp, a.freeze_mib, a.runs)
    if theirs is None:
        report(ours, None, "(openssl not found: no ratio)")
        return
    goal = 1.2 * statistics.median(theirs.walls)
    report(ours, goal, "(goal: 1.2× openssl's wall)")
    report(theirs, None)
    print(f"  ratio to openssl: {ratios(ours, theirs)}")


def prepare_answer_position(folder: Path) -> Path:
    """The answer-position example compiled into a project folder of its own."""
    root = folder / "answer-position"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    subprocess.run(prereg_cmd("--project", root, "compile"), check=True, capture_output=True)
    return root


def w_diagnose(a, tmp: Path) -> None:
    """The demo's two diagnose steps, as it runs them (2 worker processes each)."""
    ap = prepare_answer_position(tmp / "ap")
    runs = [
        (
            "answer-position diagnose (300 x 10 conditions)",
            ["--project", ap, "answer-position", "diagnose", "--simulations", 300],
        ),
        (
            "d17-multifact diagnose (200 x 9 conditions)",
            ["d17-multifact", "diagnose", "--scenario", "no-difference", "--scenario"]
            + ["pool-c-contrastive-shift", "--simulations", 200],
        ),
    ]
    common = ["--seed", 1, "--workers", 2]
    for name, args in runs:
        res = timed(
            name, lambda d, args=args: prereg_cmd(*args, *common, "--out", d / "D.json"), a.runs
        )
        report(res, None)


def w_demo(a, tmp: Path) -> None:
    res = timed(
        "prereg demo (after install)",
        lambda d: prereg_cmd("demo", "--out", d / "demo"),
        a.runs,
        warm=False,
    )
    report(res, 5.0)


WORKLOADS = {
    "check": w_check,
    "prepare": w_prepare,
    "sweep": w_sweep,
    "power-plan": w_power_plan,
    "d17-score": w_d17_score,
    "jev": w_jev,
    "freeze": w_freeze,
    "diagnose": w_diagnose,
    "demo": w_demo,
}


_SPEED = """
import hashlib, statistics, sys, time
block = bytes(range(256)) * 4096  # 1 MiB
def loop():
    total = 0
    for k in range(2_000_000):
        total += k * k
    table = {}
    for k in range(200_000):
        table[k] = str(k)
def sha():
    h = hashlib.sha256()
    for _ in range(64):
        h.update(block)
    h.digest()
out = []
for fn in (loop, sha):
    times = []
    for _ in range(int(sys.argv[1])):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    out.append(statistics.median(times))
print(*out)
"""


def machine_speed(runs: int = 5) -> tuple[float, float]:
    """The machine's speed at this moment, so that figures taken on different days compare:
    the median seconds of a fixed pure-Python loop and of SHA-256 over 64 MiB, in a child
    process (the harness keeps its own peak memory small: Linux counts it in a child's).
    This machine's speed has moved by 3x between sessions with no load of its own (the same
    code's prepare took 2.2 s one day and 0.74 s another), so a figure says little without
    these two beside it."""
    out = subprocess.run(
        [sys.executable, "-c", _SPEED, str(runs)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def main() -> int:
    if sys.argv[1:2] == ["--write-jev"]:
        write_jev_inputs(Path(sys.argv[2]), int(sys.argv[3]), binary=bool(int(sys.argv[4])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per workload (median of these)")
    ap.add_argument(
        "--sweep-runs", type=int, default=None, help="runs of the sweep (default --runs)"
    )
    ap.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), default=None)
    ap.add_argument("--scaling", action="store_true", help="add the scaling rows")
    ap.add_argument("--freeze-mib", type=int, default=1024)
    a = ap.parse_args()
    a.sweep_runs = a.sweep_runs or a.runs
    if BEFORE:
        print(f"[before]: the runtime in BENCH_BEFORE={BEFORE}, alternating with this checkout's")
    print(
        f"whole processes, median of {a.runs} (min–max); cores {os.cpu_count()}, load average "
        f"{os.getloadavg()[0]:.2f}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}",
        flush=True,
    )
    loop, sha = machine_speed()
    print(
        f"machine speed now: pure-Python loop {loop:.3f} s, SHA-256 of 64 MiB {sha:.3f} s"
        " (medians of 5; compare figures of different days only with these beside them)",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="prereg-bench-inputs-") as tmp:
        for name in a.only or WORKLOADS:
            WORKLOADS[name](a, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
