"""A linear contrast's coefficients written as exact fractions ("1/3"): carried exactly into the
estimate and its comparison (tests/fixtures/thirds). By hand, models a, b and c answer 10, 5 and
15 of 20 right and the baseline 8 of 20, so the contrast (a + b + c)/3 − base is
(1/2 + 1/4 + 3/4)/3 − 2/5 = 1/10 exactly, for the accuracies and for the mean grades (1 right,
0 wrong) alike: on the threshold 0.1 and on the margin 0.1 (z and t are 0, the one-sided P is
1/2). Coefficients written 0.3333 would give 0.09995, below it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "thirds"


def test_the_contrast_is_on_the_threshold_by_hand():
    rows = [json.loads(x) for x in (FIXTURES / "runs.jsonl").read_text().splitlines()]
    p = {m: Fraction(sum(r["correct"] for r in rows if r["model"] == m), 20) for m in "abc"}
    base = Fraction(sum(r["correct"] for r in rows if r["model"] == "base"), 20)
    assert (p["a"], p["b"], p["c"], base) == (
        Fraction(1, 2),
        Fraction(1, 4),
        Fraction(3, 4),
        Fraction(2, 5),
    )
    assert sum(p.values()) / 3 - base == Fraction(1, 10)
    assert Fraction("0.3333") * sum(p.values()) - base < Fraction(1, 10)


def score(tmp_path: Path, op: str) -> dict:
    root = tmp_path / op
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "thirds.yaml").read_text().replace("op: OP", f"op: {op}")
    (root / "spec" / "studies" / "thirds.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "SCORE.json"
    args = ["--observations", str(FIXTURES / "runs.jsonl"), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "thirds", "score", *args]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    ("op", "verdict"),
    [("ge", "supported"), ("le", "supported"), ("gt", "not-supported"), ("lt", "not-supported")],
)
def test_one_third_is_carried_exactly(tmp_path, op, verdict):
    doc = score(tmp_path, op)
    assert doc["verdicts"] == {"new-beat-base": verdict}
    rows = {a["id"]: a for a in doc["analyses"]}
    assert rows["lp"]["exact"]["estimate"] == "1/10"
    assert rows["lp"]["options"]["coefficients"] == ["1/3", "1/3", "1/3", -1]
    for a in ("lp", "lm"):
        assert rows[a]["statistic"] == 0.0 and rows[a]["p"] == 0.5, rows[a]
    if verdict == "supported":  # the mean's exact value, formed by the comparison
        assert Fraction(rows["lm"]["exact"]["estimate"]) == Fraction(1, 10)
