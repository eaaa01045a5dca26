"""Gates on figures that are not proportions, each exactly on its threshold (the fixture of
test_threshold_fixture.py): arm a's mean latency is 3/10 (0.1 ... 0.5 twice), its ECE
|9 − 10·0.85|/10 = 1/20 (its float is 0.050000000000000176) and its geometric mean of tokens
90 (every row 90). A gate decides its cells as a rule does, exactly: at `le`/`ge` every gate
holds, at `lt`/`gt` every one fails (the ECE's gate failed at `le` on its float)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from prereg.cli import main
from tests.decide.test_threshold_fixture import FIXTURE, rows

GATES = """gates:
  - {id: latency-a, metric: latency, where: [{factor: arm, levels: [a]}], op: OPL, value: 0.3}
  - {id: ece-a, metric: ece, where: [{factor: arm, levels: [a]}], op: OPL, value: 0.05}
  - {id: tokens-a, metric: tokens, where: [{factor: arm, levels: [a]}], op: OPG, value: 90}
"""


def test_the_figures_by_hand():
    a = [r for r in rows() if r["arm"] == "a"]
    assert sum(Fraction(repr(r["latency"])) for r in a) / len(a) == Fraction(3, 10)
    right = sum(r["correct"] for r in a)
    assert abs(right - sum(Fraction(repr(r["confidence"])) for r in a)) / len(a) == Fraction(1, 20)
    assert {r["tokens"] for r in a} == {90}


@pytest.mark.parametrize(("low", "high", "held"), [("le", "ge", True), ("lt", "gt", False)])
def test_gates_decide_exactly(tmp_path: Path, capsys, low, high, held):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = FIXTURE.read_text()
    gates = GATES.replace("OPL", low).replace("OPG", high)
    assert text.count("\nhypotheses:") == 1
    spec = tmp_path / "spec" / "studies" / "thresholds.yaml"
    spec.write_text(text.replace("\nhypotheses:", "\n" + gates + "hypotheses:"))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs = tmp_path / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in rows()))
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "thresholds", "score", *args]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert {g["id"]: g["passed"] for g in doc["gates"]} == dict.fromkeys(
        ("latency-a", "ece-a", "tokens-a"), held
    )
    if held:
        assert doc["verdicts"] == {"at-the-tie": "supported", "past-the-tie": "not-supported"}
    else:
        assert set(doc["verdicts"].values()) == {"inconclusive"}
        (fail,) = next(g for g in doc["gates"] if g["id"] == "ece-a")["failures"]
        assert fail["cell"] == "tst-a" and abs(fail["figure"] - 0.05) < 1e-15
