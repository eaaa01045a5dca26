"""Every kind of figure on its threshold, scored end to end through the CLI.

The data (written below) make each registered figure equal its threshold exactly, by
construction:

- arm a answers 9 of 10 correctly, arm b 6 of 10: accuracy 0.9, difference 0.3 (the float
  0.9 - 0.6 is 0.30000000000000004);
- arm a's latencies 0.1, 0.2, 0.3, 0.4, 0.5 twice: mean 0.3; arm b's all 0.2: difference 0.1;
- tokens 90 in arm a and 100 in arm b: the ratio of geometric means is 0.9;
- arm a states confidence 0.85 on every row, 9 of them right, all in the bin [0.5, 1]:
  ECE = |9 - 8.5| / 10 = 0.05; every confidence ties, so the AUROC is 0.5;
- arm b's score is 2.675 on every row: rounded half-up to 2 decimals it is 2.68 (the float
  2.675 lies below 2.675, and float rounding gives 2.67).

So the hypothesis registering ``ge``/``le`` at each threshold is supported, the one registering
``gt``/``lt`` is not, and the decision reads both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from prereg.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "factorial" / "thresholds.yaml"


def rows() -> list[dict]:
    out = []
    latencies = [0.1, 0.2, 0.3, 0.4, 0.5] * 2
    for i in range(10):
        out.append(
            {"rowId": f"a{i}", "arm": "a", "correct": i < 9, "latency": latencies[i],
             "tokens": 90, "confidence": 0.85, "score": 1.0}
        )  # fmt: skip
    for i in range(10):
        out.append(
            {"rowId": f"b{i}", "arm": "b", "correct": i < 6, "latency": 0.2, "tokens": 100,
             "confidence": 0.5, "score": 2.675}
        )  # fmt: skip
    return out


def test_the_floats_alone_land_off_the_ties():
    """What this fixture guards against: the float figures are not the true ones."""
    assert 9 / 10 - 6 / 10 != 0.3
    assert round(2.675, 2) == 2.67
    assert float(np.exp(np.log(90.0) - np.log(100.0))) != 0.9


def test_every_figure_is_decided_exactly_at_its_threshold(tmp_path, capsys):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(FIXTURE, tmp_path / "spec" / "studies" / "thresholds.yaml")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs = tmp_path / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in rows()))
    out = tmp_path / "SCORE.json"
    assert main(["--project", str(tmp_path), "thresholds", "score", "--observations",
                 str(obs), "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == {"at-the-tie": "supported", "past-the-tie": "not-supported"}
    assert doc["decision"]["outcome"] == "exact"
    est = {e["id"]: e for e in doc["estimates"]}
    con = {c["id"]: c for c in doc["contrasts"]}
    # the figures at full precision, as the data make them (a float each, shortest decimal)
    assert (est["acc-a"]["k"], est["acc-a"]["n"]) == (9, 10)
    assert est["acc-a"]["estimate"] == 0.9
    assert con["acc-a-vs-b"]["estimate"] == 0.9 - 0.6  # the float of k1/n1 - k2/n2
    assert abs(est["ece-a"]["estimate"] - 0.05) < 1e-15
    assert est["auroc-a"]["estimate"] == 0.5
    assert abs(con["tokens-a-over-b"]["estimate"] - 0.9) < 1e-15
    # the decision rule that fired read each verdict
    read = doc["decision"]["read"]
    assert [r["verdict"] for r in read] == ["supported", "not-supported"]


def test_a_rounding_beyond_100_decimals_is_refused_at_compile(tmp_path, capsys):
    """Rounding a figure to 10^15 decimals would build a number of 10^15 digits at score time:
    the language bounds decimals to 100 and compile refuses more, with the line."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = FIXTURE.read_text()
    old = "op: ge, value: 2.68, decimals: 2}"
    assert text.count(old) == 1
    spec = tmp_path / "spec" / "studies" / "thresholds.yaml"
    spec.write_text(text.replace(old, "op: ge, value: 2.68, decimals: 1000000000000000}"))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    line = 1 + text[: text.index(old)].count("\n")
    assert f"thresholds.yaml:{line}:" in err and "decimals" in err and "100" in err
    assert not (tmp_path / "generated").exists()
