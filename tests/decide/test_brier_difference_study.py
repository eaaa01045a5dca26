"""A calibration study of two models (tests/fixtures/calib_brier, written from the docs by a
newcomer, data as a Parquet file): the new model's ECE against 0.1 and the difference of the two
models' Brier scores on the same items (`brier-score-difference`, paired by item), then a
decision naming three outcomes. The Brier comparison had no word: a derived field cannot square
a confidence, and a rule compares a figure with a number, not with another figure.

The data are on both thresholds by construction: the new model states 0.9 on 20 items (16
right) and 0.3 on 20 (4 right), so each bin's gap is 0.1 and the ECE is exactly 1/10; its Brier
score is (16·0.01 + 4·0.81 + 4·0.49 + 16·0.09)/40 = 6.8/40 = 0.17. The old model's absolute
errors are 0.2 (6 items), 0.3 (14), 0.5 (10) and 0.6 (10): squares summing to 7.6, a Brier score
of 0.19, so the difference is exactly -1/50 and meets `le -0.02`. The oracles are sklearn's
brier_score_loss and scipy's ttest_rel of the per-item squared errors.

Under the scenario (confidence uniform on [0.3, 1]; the new model calibrated, the old one
overconfident by 0.15) diagnose reports the difference's truth by hand: E[q(1 − q)] = 0.65 −
0.973/2.1 for the new model and E[q² − 2q(q − 0.15) + (q − 0.15)] = 0.973/2.1 − 2(0.973/2.1 −
0.0975) + 0.5 for the old one, a difference of -0.045."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np

from prereg.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "calib_brier" / "calib-two.yaml"


def _data():
    new = [(0.9, i < 16) if i < 20 else (0.3, i < 24) for i in range(40)]
    errors = [0.2] * 6 + [0.3] * 14 + [0.5] * 10 + [0.6] * 10
    rnd = random.Random(4)
    rnd.shuffle(errors)
    old = []
    for e in errors:
        right = rnd.random() < 0.6
        old.append((round(1 - e, 2) if right else e, right))
    return new, old


def test_calibration_and_brier_difference_on_their_thresholds(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from scipy.stats import ttest_rel
    from sklearn.metrics import brier_score_loss

    new, old = _data()
    assert sum((Fraction(repr(q)) - y) ** 2 for q, y in old) == Fraction(76, 10)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "calib-two.yaml").write_text(FIXTURE.read_text())
    assert main(["--project", str(root), "compile"]) == 0
    cols: dict[str, list] = {"item": [], "model": [], "correct": [], "confidence": []}
    for model, rows in (("new", new), ("old", old)):
        for i, (q, y) in enumerate(rows):
            for k, v in zip(cols, (f"q{i:02d}", model, y, q), strict=True):
                cols[k].append(v)
    obs = tmp_path / "preds.parquet"
    pq.write_table(pa.table(cols), obs)
    out = tmp_path / "S.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "calib-two", "score", *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == {"calibrated": "supported", "sharper": "not-supported"}
    assert doc["decision"]["outcome"] == "hold"
    (ece,) = doc["estimates"]
    assert Fraction(ece["exact"]) == Fraction(1, 10)
    rows = {a["id"]: a for a in doc["analyses"]}
    ya, qa = np.array([y for _, y in new], dtype=int), np.array([q for q, _ in new])
    yb, qb = np.array([y for _, y in old], dtype=int), np.array([q for q, _ in old])
    assert math.isclose(rows["brier-new"]["estimate"], brier_score_loss(ya, qa), rel_tol=1e-12)
    assert math.isclose(rows["brier-old"]["estimate"], brier_score_loss(yb, qb), rel_tol=1e-12)
    diff = rows["brier-diff"]
    assert Fraction(diff["exact"]["estimate"]) == Fraction(-1, 50)
    assert diff["counts"]["pairs"] == 40
    ref = ttest_rel((qa - ya) ** 2, (qb - yb) ** 2, alternative="less")
    assert math.isclose(diff["statistic"], float(ref.statistic), rel_tol=1e-9)
    assert math.isclose(diff["p"], float(ref.pvalue), rel_tol=1e-9)
    assert math.isclose(diff["upper"], float(ref.confidence_interval(0.95).high), rel_tol=1e-9)
    md = out.with_suffix(".md").read_text()
    assert "estimate ≤ -0.02: met by 1 of 1: brier-diff (-0.02)" in md
    assert "estimate ≤ 0.1: met by 1 of 1: ece-new (0.1)" in md

    dg = tmp_path / "D.json"
    dargs = ["--scenario", "new-calibrated", "--simulations", "20", "--seed", "1", "--out", str(dg)]
    assert main(["--project", str(root), "calib-two", "diagnose", *dargs, "--quiet"]) == 0
    truths = {a["id"]: a["truth"] for a in json.loads(dg.read_text())["conditions"][0]["analyses"]}
    e_q2 = 0.973 / 2.1  # E[q²] over U(0.3, 1)
    brier_new = 0.65 - e_q2
    brier_old = e_q2 - 2 * (e_q2 - 0.15 * 0.65) + 0.5
    assert math.isclose(truths["brier-diff"], brier_new - brier_old, rel_tol=1e-6)
    assert math.isclose(brier_new - brier_old, -0.045, rel_tol=1e-12)
