"""Make the bundled jev-multicorrect sample: lists, labels, predictions and binary outputs.

    python examples/jev/make_sample.py [OUTDIR]     (default: this script's folder)

Deterministic: one seeded PCG64 stream, using only uniform draws (bit-stable across numpy
versions) and correctly rounded arithmetic (no logarithms or powers, whose last bits vary
between math libraries).  Probabilities are integer thousandths that sum to 1000, so they are readable, sum to
1 within float error, and often sit exactly on a threshold of the 0.01 grid.  The sample holds
some refusals (also on lists with no correct option), lists with no correct option, lists where
every option is correct, ties between a correct option and a distractor, and lists whose
candidates are near-duplicate copies of one text differing only in spaces.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

SEED = 20261021
N_VALIDATION = 160
N_TEST = 160
SPLITS = (("validation", N_VALIDATION), ("test", N_TEST))
WORDS = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
    "juliett", "kilo", "lima", "mike", "november", "oscar", "papa",
]  # fmt: skip
SPACE_VARIANTS = ["{t}", "{t} ", " {t}", "{t}  ", " {t} "]


def thousandths(weights: np.ndarray) -> list[int]:
    """Integers summing to 1000, proportional to ``weights`` (largest remainder, index order)."""
    raw = weights / weights.sum() * 1000
    base = np.floor(raw).astype(int)
    short = 1000 - int(base.sum())
    order = np.argsort(-(raw - base), kind="stable")
    base[order[:short]] += 1
    return base.tolist()


def make(outdir: Path) -> None:
    rng = np.random.Generator(np.random.PCG64(SEED))
    lists, labels, preds, binary = [], [], [], []
    for split, n in SPLITS:
        for i in range(n):
            rid = f"{split[:3]}-{i:04d}"
            u = rng.random(8)
            m = 5 + int(u[0] * 6)  # 5..10 candidates
            kind = u[1]
            if kind < 0.05:  # near-duplicate copies of one correct option
                text = WORDS[int(u[2] * len(WORDS))]
                cands = [v.format(t=text) for v in SPACE_VARIANTS]
                m = len(cands)
                correct = list(range(m))
            else:
                picks = np.argsort(rng.random(len(WORDS)), kind="stable")[:m]
                cands = [WORDS[j] for j in picks]
                g = int(np.searchsorted([0.15, 0.4, 0.75, 0.97], u[2], side="right"))
                g = m if g == 4 else g  # a few lists where every option is correct
                order = np.argsort(rng.random(m), kind="stable")
                correct = sorted(int(j) for j in order[:g])
            lists.append(
                {
                    "request_id": rid,
                    "question": f"Sample question {i} ({split}): which of these options are correct?",
                    "candidates": cands,
                }
            )
            labels.append({"request_id": rid, "split": split, "correct": correct})
            refused = bool(u[4] < 0.06)
            if refused:
                preds.append({"request_id": rid, "refused": True, "probabilities": None})
            else:
                scale = np.full(m, 0.6)
                if correct:
                    scale[correct] = 2.0
                    scale[correct[int(u[5] * len(correct))]] = 7.0
                w = scale * rng.random(m)
                counts = thousandths(w)
                if u[6] < 0.08 and correct and len(correct) < m:
                    # tie the weakest correct option with the strongest distractor
                    lo = min(correct, key=lambda j: counts[j])
                    hi = max((j for j in range(m) if j not in correct), key=lambda j: counts[j])
                    total = counts[lo] + counts[hi]
                    counts[lo] = counts[hi] = total // 2
                    counts[int(np.argmax(counts))] += total % 2  # keep the sum at 1000
                preds.append(
                    {
                        "request_id": rid,
                        "refused": False,
                        "probabilities": [c / 1000 for c in counts],
                    }
                )
            for j in range(m):
                y = int(j in correct)
                # the largest of 3 uniforms for a correct option, the smallest of 4 otherwise
                p = rng.random(3).max() if y else rng.random(4).min()
                binary.append(
                    {
                        "request_id": rid,
                        "candidate_index": j,
                        "probability": round(float(p), 4),
                        "label": y,
                    }
                )
    outdir.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("lists.jsonl", lists),
        ("labels.jsonl", labels),
        ("predictions.jsonl", preds),
        ("binary.jsonl", binary),
    ):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (outdir / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    make(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
