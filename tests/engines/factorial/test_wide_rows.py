"""Two fields of one row compared, as a wide export writes them (tests/fixtures/wide/
wide.yaml): an analysis of a paired method reads its metric on a's rows and `b_metric` on b's,
the same rows paired with themselves by item. The figures are scipy's on the two columns
(Spearman's rho, the paired t) and McNemar's on the two verdict columns counted by hand; a
mean difference of decimals exactly on its threshold is decided exactly."""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "wide" / "wide.yaml"


def _rows(n=30, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h = float(rng.integers(1, 6))
        old = round(float(rng.normal(500, 40)), 1)
        right_old = bool(rng.random() < 0.6)
        out.append(
            {
                "item": f"i{i}",
                "set": "test",
                "human": h,
                "comet": round(0.1 * h + float(rng.normal(0, 0.15)), 3),
                "lat_old": old,
                "lat_new": round(old - float(rng.normal(15, 20)), 1),
                "right_old": right_old,
                "right_new": bool(rng.random() < (0.95 if right_old else 0.8)),
            }
        )
    return out


def _score(root, text, rows, code=0):
    (root / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "studies" / "wide.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    log = root / "rows.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = root / "SCORE.json"
    args = ["--project", str(root), "wide", "score", "--observations", str(log)]
    assert main([*args, "--out", str(out), "--quiet"]) == code
    return json.loads(out.read_text()) if code == 0 else None


def test_two_fields_of_one_row_against_scipy(tmp_path):
    rows = _rows()
    doc = _score(tmp_path, SPEC.read_text(), rows)
    got = {a["id"]: a for a in doc["analyses"]}
    col = {k: np.array([r[k] for r in rows], dtype=float) for k in ("human", "comet")}
    rho = stats.spearmanr(col["human"], col["comet"]).statistic
    assert got["rho"]["estimate"] == pytest.approx(rho, abs=1e-12)
    new = np.array([r["lat_new"] for r in rows])
    old = np.array([r["lat_old"] for r in rows])
    t = stats.ttest_rel(new, old, alternative="less")
    assert got["lat"]["estimate"] == pytest.approx(float(np.mean(new - old)), abs=1e-9)
    assert got["lat"]["statistic"] == pytest.approx(t.statistic, rel=1e-9)
    assert got["lat"]["p"] == pytest.approx(t.pvalue, rel=1e-9)
    # McNemar on the two verdict columns: the discordant rows counted by hand
    up = sum(r["right_new"] and not r["right_old"] for r in rows)
    down = sum(r["right_old"] and not r["right_new"] for r in rows)
    p = stats.binomtest(up, up + down, 0.5, alternative="greater").pvalue
    assert got["mcn"]["p"] == pytest.approx(p, rel=1e-12)
    assert got["mcn"]["estimate"] == pytest.approx((up - down) / len(rows), abs=1e-15)
    # PREREG.md says which metric each arm reads
    prereg = (tmp_path / "generated" / "wide" / "PREREG.md").read_text()
    assert "b_metric: lat-old" in prereg


@pytest.mark.parametrize(("op", "verdict"), [("le", "supported"), ("lt", "not-supported")])
def test_a_difference_of_decimals_on_its_threshold(tmp_path, op, verdict):
    """New latencies 14.9, 15.1, 15.0 ... below the old as written: the mean difference is
    exactly -15 (the floats' is not), so `estimate le -15` holds and `lt` fails."""
    rows = _rows()
    steps = [Decimal("14.9"), Decimal("15.1"), Decimal("15.0")]
    for i, r in enumerate(rows):
        r["lat_new"] = float(Decimal(repr(r["lat_old"])) - steps[i % 3])
    exact = sum(Decimal(repr(r["lat_new"])) - Decimal(repr(r["lat_old"])) for r in rows)
    assert exact / len(rows) == Decimal(-15)
    floats = float(np.mean([r["lat_new"] - r["lat_old"] for r in rows]))
    assert floats != -15  # the floats alone would decide it the other way
    text = SPEC.read_text()
    old = "compare: {target: lat, quantity: p, op: lt, value: 0.05}"
    assert text.count(old) == 1
    text = text.replace(old, f"compare: {{target: lat, quantity: estimate, op: {op}, value: -15}}")
    doc = _score(tmp_path, text, rows)
    assert doc["verdicts"]["faster"] == verdict, floats


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda t: t.replace("        b_metric: comet\n", "        b_metric: cometx\n"),
            "b_metric names unknown metric 'cometx'",
        ),
        (
            lambda t: t.replace("        b_metric: lat-old\n", "        b_metric: acc-old\n"),
            "b_metric 'acc-old' is a proportion and metric 'lat-new' a mean",
        ),
        (
            lambda t: t.replace("        method: paired-t\n", "        method: welch-t\n").replace(
                "        pair_by: item\n        options: {alternative: less",
                "        options: {alternative: less",
            ),
            "b_metric is read on b's rows of a paired method",
        ),
    ],
)
def test_compile_refuses_a_b_metric_it_cannot_read(tmp_path, capsys, edit, words):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "wide.yaml").write_text(edit(SPEC.read_text()))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert words in err
    assert not (tmp_path / "generated").exists()


def test_diagnose_gives_the_truth_of_two_fields_of_one_row(tmp_path):
    """Diagnose runs such an analysis on every simulated study (the general path: b reads its
    own field); a difference of two fields' means has as truth the difference of the means the
    scenario draws them with (480 - 500)."""
    text = SPEC.read_text().replace(
        "{name: right_old, type: boolean}", "{name: right_old, type: boolean, required: false}"
    ) + (
        "scenarios:\n"
        "  - id: drawn\n"
        "    description: Independent draws of every field.\n"
        "    values:\n"
        "      - {field: human, distribution: normal, mean: 3, sd: 1}\n"
        "      - {field: comet, distribution: normal, mean: 0.3, sd: 0.1}\n"
        "      - {field: lat_old, distribution: normal, mean: 500, sd: 40}\n"
        "      - {field: lat_new, distribution: normal, mean: 480, sd: 40}\n"
        "    outcome: right_new\n"
        "    rates:\n"
        "      - {rate: 0.7}\n"
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "wide.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "wide", "diagnose", "--simulations", "40"]
    assert main([*args, "--seed", "2", "--out", str(out), "--quiet"]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    lat = next(a for a in cond["analyses"] if a["id"] == "lat")
    assert "truthUndefined" not in lat
    assert lat["truth"] == pytest.approx(-20, abs=1e-9)
    assert lat["bias"] == pytest.approx(lat["meanEstimate"] + 20, abs=1e-9)
    # the simulated studies' mean difference is near the drawn one (480 - 500), not 0
    assert lat["meanEstimate"] == pytest.approx(-20, abs=4 * 40 * np.sqrt(2 / 30) / np.sqrt(40) + 1)
