"""A scenario's calibration curve (confidence drawn, outcome from a calibrated or over-confident
curve), through simulate and diagnose, and the compiler's refusals of scenarios that cannot
drive a registered rule.

Oracle: an independent Monte Carlo of the same data-generating process in numpy, the AUROC by
scikit-learn's roc_auc_score and the ECE by hand (ten bins closed on the right: a bin's share of
rows times |accuracy - mean confidence|, summed). Agreement within 4 Monte Carlo SEs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT

STUDY = "calibration"
N = 300
REPS = 20_000


def project(root: Path, name: str = STUDY, edits=()) -> Path:
    text = (FIXTURES / "diagnose" / f"{name}.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return root


def ece(conf: np.ndarray, right: np.ndarray) -> np.ndarray:
    """ECE of each row of (reps, n) arrays: ten bins closed on the right ((0.9, 1] last)."""
    b = np.clip(np.ceil(conf * 10).astype(int) - 1, 0, 9)
    n = conf.shape[1]
    total = np.zeros(conf.shape[0])
    for k in range(10):
        m = b == k
        cnt = m.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs((right * m).sum(axis=1) - (conf * m).sum(axis=1)) / cnt
        total += np.where(cnt > 0, cnt / n * gap, 0.0)
    return total


def auroc(conf: np.ndarray, right: np.ndarray) -> np.ndarray:
    """AUROC of each row by the Mann-Whitney identity (mid-ranks: ties count one half);
    checked against scikit-learn's roc_auc_score on the first rows."""
    ranks = stats.rankdata(conf, axis=1)
    pos = right.sum(axis=1)
    neg = right.shape[1] - pos
    out = ((ranks * right).sum(axis=1) - pos * (pos + 1) / 2) / (pos * neg)
    for i in range(3):
        assert abs(out[i] - roc_auc_score(right[i], conf[i])) < 1e-12
    return out


def reference(margin: float, seed: int):
    """(ECE values, AUROC values) of REPS independent studies of 200 rows."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.5, 1.0, (REPS, 200))
    y = (rng.random((REPS, 200)) < np.maximum(c - margin, 0.0)).astype(float)
    return ece(c, y), auroc(c, y)


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> dict:
    root = project(tmp_path_factory.mktemp("cal"))
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "DIAGNOSE.json"
    args = ["--simulations", str(N), "--seed", "5", "--out", str(out), "--quiet"]
    assert main(["--project", str(root), STUDY, "diagnose", *args]) == 0
    return json.loads(out.read_text())


def _z_share(share: float, ref: np.ndarray) -> float:
    p = float(ref.mean())
    se = math.sqrt(p * (1 - p) / N + p * (1 - p) / ref.size)
    return abs(share - p) / max(se, 1e-9)


@pytest.mark.parametrize(
    ("scenario", "margin", "seed"), [("calibrated", 0.0, 1), ("overconfident", 0.12, 2)]
)
def test_ece_and_auroc_rules_match_an_independent_simulation(doc, scenario, margin, seed):
    eces, aurocs = reference(margin, seed)
    cond = next(c for c in doc["conditions"] if c["scenario"] == scenario)
    shares = {
        h["id"]: next(v["share"] for v in h["verdicts"] if v["verdict"] == "supported")
        for h in cond["hypotheses"]
    }
    assert _z_share(shares["calibrated"], eces <= 0.1) < 4, (shares, (eces <= 0.1).mean())
    assert _z_share(shares["discriminates"], aurocs >= 0.7) < 4, (shares, (aurocs >= 0.7).mean())
    for est, ref in (("ece-all", eces), ("auroc-all", aurocs)):
        row = next(e for e in cond["estimates"] if e["id"] == est)
        se = math.hypot(row["biasMcSe"] or 0.0, ref.std(ddof=1) / math.sqrt(ref.size))
        assert abs(row["meanEstimate"] - ref.mean()) < 4 * se, (est, row, ref.mean())
    assert any(n.startswith("Simulated row by row") for n in doc["notes"])


def test_simulate_draws_the_outcome_from_the_curve(tmp_path):
    """Under the over-confident curve a row is right with chance confidence - 0.12 (the
    scenario's rate, 0.3, is not used): over 10 seeds of 200 rows, the share right agrees with
    the mean of confidence - 0.12 within 4 SEs and is far from 0.3."""
    root = project(tmp_path)
    assert main(["--project", str(root), "compile"]) == 0
    right, chance = [], []
    for seed in range(10):
        out = tmp_path / f"obs-{seed}.jsonl"
        args = ["simulate", "--scenario", "overconfident", "--seed", str(seed), "--out", str(out)]
        assert main(["--project", str(root), STUDY, *args, "--quiet"]) == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == 200 and all(0.5 <= r["confidence"] <= 1 for r in rows)
        right += [r["correct"] for r in rows]
        chance += [r["confidence"] - 0.12 for r in rows]
    right, chance = np.array(right, dtype=float), np.array(chance)
    se = math.sqrt(float(np.mean(chance * (1 - chance))) / right.size)
    assert abs(right.mean() - chance.mean()) < 4 * se
    assert right.mean() > 0.5


REFUSALS = [
    (
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: overconfident, margin: 0.12}\n",
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: overconfident}\n",
        "at /scenarios/1/calibration/0: scenario 'overconfident': an overconfident curve needs its margin",
    ),
    (
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: calibrated}\n",
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: calibrated, margin: 0.1}\n",
        "at /scenarios/0/calibration/0/margin: scenario 'calibrated': a calibrated curve has no margin",
    ),
    (
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: calibrated}\n",
        "      - {field: correct, distribution: uniform, low: 0.5, high: 1, curve: calibrated}\n",
        "at /scenarios/0/calibration/0/field: scenario 'calibrated' draws confidence 'correct',"
        " which is not a number field of the observation contract",
    ),
    (
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: calibrated}\n",
        "      - {field: confidence, distribution: normal, curve: calibrated}\n",
        "at /scenarios/0/calibration/0: scenario 'calibrated': a normal draw needs mean and sd",
    ),
]


@pytest.mark.parametrize(("old", "new", "message"), REFUSALS)
def test_compile_refuses_a_malformed_calibration(tmp_path, capsys, old, new, message):
    root = project(tmp_path, edits=[(old, new)])
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "calibration.yaml:" in err and "Traceback" not in err
    assert not (root / "generated" / STUDY).exists()


def test_compile_refuses_a_scenario_that_cannot_drive_a_rule(tmp_path, capsys):
    """The latency study's `same` scenario without its values draws no latency, which the
    Welch contrast and the catalogue's ratio of geometric means read: refused at its line."""
    text = (FIXTURES / "diagnose" / "latency-analyses.yaml").read_text()
    values = "      - {field: latency_ms, distribution: lognormal, mean: 6.0, sd: 0.5}\ndecision:"
    assert text.count(values) == 1
    line = text[: text.index("  - id: same\n")].count("\n") + 1
    root = project(
        tmp_path,
        "latency-analyses",
        edits=[("    values:\n" + values, "decision:")],
    )
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    assert (
        f"latency-analyses.yaml:{line}: at /scenarios/1: scenario 'same' cannot drive the"
        " registered rules: contrast 'latency-ratio' (metric 'latency') reads the numbers of"
        " 'latency_ms', which the scenario does not draw (add values or calibration for it)"
    ) in err, err
    assert "scenarios/0" not in err and "Traceback" not in err


def test_prereg_md_states_the_curves(tmp_path):
    """The registered curves are part of the readable preregistration."""
    root = project(tmp_path)
    assert main(["--project", str(root), "compile"]) == 0
    md = (root / "generated" / STUDY / "PREREG.md").read_text()
    assert (
        "- `overconfident`: confidence `confidence` drawn uniform on [0.5, 1]; the outcome holds"
        " with the confidence less 0.12 (over-confident), not the rate."
    ) in md
    assert "- `calibrated`: confidence `confidence` drawn uniform on [0.5, 1]; the outcome" in md
