"""Benchmark: jev-multicorrect scoring of 100,000 validation + 100,000 test lists.

    python bench/bench_jev.py [--lists 100000] [--repeats 5]

Lists have 5-10 candidates; the threshold is fitted over the 101-point grid on validation and
applied to test.  Prints the median wall time of several runs for: packing the (EvaluatorRow,
Prediction) pairs, fit + evaluate from pairs (what the API does), fit + evaluate from packed
arrays, the retrospective curve from pairs and as the score command computes it (the fit's
counts plus the test pack's).  Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from prereg.engines.multicorrect import (
    COMMANDS,
    EvaluatorRow,
    Prediction,
    PublicChoiceList,
    evaluate_test,
    fit_threshold,
    pack,
    threshold_curve,
)
from prereg.engines.multicorrect.scoring import retrospective_curve

ROOT = Path(__file__).resolve().parents[1]


def study_engine_config():
    """The engine configuration compiled from spec/studies/jev-multicorrect.yaml."""
    from prereg.compiler.project import Project
    from prereg.engines.multicorrect import engine_config
    from prereg.study import study_context

    _, ctx = study_context(Project(ROOT), "jev-multicorrect")
    return engine_config(ctx.config)


def make_pairs(n: int, split: str, rng: np.random.Generator, prefix: str):
    m = rng.integers(5, 11, size=n)
    g = rng.integers(0, 4, size=n)
    refused = rng.random(n) < 0.05
    out = []
    cands = {k: tuple(f"option {j}" for j in range(k)) for k in range(5, 11)}
    for i in range(n):
        k = int(m[i])
        w = rng.exponential(size=k)
        gi = min(int(g[i]), k)
        correct = frozenset(rng.choice(k, size=gi, replace=False).tolist())
        for j in correct:
            w[j] *= 4.0
        rid = f"{prefix}{i}"
        row = EvaluatorRow(PublicChoiceList(rid, "q", cands[k]), correct, split)
        pred = (
            Prediction(rid, True, None)
            if refused[i]
            else Prediction(rid, False, tuple((w / w.sum()).tolist()))
        )
        out.append((row, pred))
    return out


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lists", type=int, default=100_000, help="lists per split")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    cfg = study_engine_config()
    rng = np.random.default_rng(12345)
    t0 = time.perf_counter()
    val = make_pairs(a.lists, cfg.fit_split, rng, "v")
    test = make_pairs(a.lists, cfg.evaluate_split, rng, "t")
    print(
        f"built {2 * a.lists} lists of objects in {time.perf_counter() - t0:.2f} s (not timed below)"
    )
    n_cands = sum(len(r.public.candidates) for r, _ in val + test)
    print(f"candidates in total: {n_cands}; thresholds: {cfg.thresholds().size}")

    def api():
        fit = fit_threshold(val, cfg)
        return evaluate_test(fit, test, cfg)

    pv = pack(val, cfg, cfg.fit_split)
    pt = pack(test, cfg, cfg.evaluate_split)

    def packed():
        fit = fit_threshold(pv, cfg)
        return evaluate_test(fit, pt, cfg)

    r = a.repeats
    print(
        f"pack both splits:                median {median_time(lambda: (pack(val, cfg, cfg.fit_split), pack(test, cfg, cfg.evaluate_split)), r):.3f} s"
    )
    print(f"fit + evaluate from pairs:       median {median_time(api, r):.3f} s")
    print(f"fit + evaluate from packed:      median {median_time(packed, r):.3f} s")
    print(
        f"retrospective curve (pairs):     median {median_time(lambda: threshold_curve(val + test, cfg), r):.3f} s"
    )
    fit_pv = fit_threshold(pv, cfg)
    print(
        f"retrospective curve (fit + test pack): median {median_time(lambda: retrospective_curve(fit_pv, pt, cfg), r):.3f} s"
    )
    m = api()
    print(f"test threshold {m.threshold}, exact-set accuracy {m.exact_set_accuracy:.4f}")

    # the score command end to end: JSONL files in, REPORT.json out
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_jsonl(d, val + test)
        from prereg.compiler.project import Project
        from prereg.study import study_context

        _, ctx = study_context(Project(ROOT), "jev-multicorrect")
        runs = []
        for i in range(r):
            args = argparse.Namespace(
                lists=str(d / "lists.jsonl"),
                labels=str(d / "labels.jsonl"),
                predictions=str(d / "predictions.jsonl"),
                binary_outputs=None,
                rounding_decimals=None,
                out=str(d / f"REPORT{i}.json"),
            )
            t0 = time.perf_counter()
            COMMANDS["score"](ctx, args)
            runs.append(time.perf_counter() - t0)
        size = sum(f.stat().st_size for f in d.glob("*.jsonl")) / 1e6
        print(f"score command ({size:.0f} MB of JSONL): median {statistics.median(runs):.3f} s")
        read_files(d, cfg, r)


def read_files(d: Path, cfg, repeats: int) -> None:
    """Each input file's reading on its own (main-thread CPU seconds, median), and how many of
    the lists file's blocks the light decode took (a block it declines costs the typed
    decode of every candidate string: a drop here is a slowdown nobody else reports)."""
    import gc

    from prereg.engines.multicorrect import reader

    light = []
    decide = reader._light_lists

    def counted(*args):
        got = decide(*args)
        light.append(got is not None)
        return got

    reader._light_lists = counted
    times: dict[str, list[float]] = {"lists": [], "labels": [], "predictions": []}
    gc.disable()
    try:
        for _ in range(repeats):
            light.clear()
            P = reader._Problems()
            S = reader._State(str(d / "lists.jsonl"))
            for name, step in (
                ("lists", reader._read_lists),
                ("labels", reader._read_labels),
                ("predictions", reader._read_predictions),
            ):
                t0 = time.thread_time()
                step(cfg, str(d / f"{name}.jsonl"), P, S)
                if name == "lists":
                    S.lists_read(cfg.split_names)
                times[name].append(time.thread_time() - t0)
    finally:
        gc.enable()
        reader._light_lists = decide
    for name, ts in times.items():
        print(f"  reading {name + ':':13s} median {statistics.median(ts):.3f} CPU-s (main thread)")
    print(f"  lists blocks taken by the light decode: {sum(light)} of {len(light)}")


def write_jsonl(d: Path, pairs) -> None:
    with (
        open(d / "lists.jsonl", "w") as fl,
        open(d / "labels.jsonl", "w") as fb,
        open(d / "predictions.jsonl", "w") as fp,
    ):
        for row, pred in pairs:
            fl.write(json.dumps(row.public.to_json()) + "\n")
            lab = {"request_id": row.request_id, "split": row.split, "correct": sorted(row.correct)}
            fb.write(json.dumps(lab) + "\n")
            probs = None if pred.refused else list(pred.probabilities)
            p = {"request_id": pred.request_id, "refused": pred.refused, "probabilities": probs}
            fp.write(json.dumps(p) + "\n")


if __name__ == "__main__":
    main()
