"""McNemar's exact P of 2,001 discordant pairs (1,041 right by the new system only, 960 by the
old one only; 5 right by both, 4 by neither) is past the 2,000 pairs the engine sums in
integers, so it is a figure certified by balls. By hand (the binomial sum in integers):

    P = 2 · P(X ≤ 960), X ~ Binomial(2001, ½)  ≈ 0.0736839111053755

while the float SCORE.json writes for it reads as 0.07368391110537553, and the threshold
0.07368391110537552 lies strictly between the two. So ``p lt`` that threshold holds (the
verdict is supported) and ``p ge`` fails, though the float says the opposite: SCORE.json
carries the P as the verdict decided it (``decidedP``), and SCORE.md's deciding figures and
the report's figure of what decides decide and place the P with it, on the verdict's side."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcnemar_ball"
THRESHOLD = "0.07368391110537552"
N10, N01, N11, N00 = 1041, 960, 5, 4


def by_hand() -> Fraction:
    m, k = N10 + N01, min(N10, N01)
    return min(Fraction(1), 2 * Fraction(sum(math.comb(m, j) for j in range(k + 1)), 2**m))


def observations() -> str:
    rows = []
    kinds = [(True, False)] * N10 + [(False, True)] * N01 + [(True, True)] * N11
    kinds += [(False, False)] * N00
    for i, (new, old) in enumerate(kinds):
        rows.append({"item": f"q{i:04d}", "system": "new", "correct": new})
        rows.append({"item": f"q{i:04d}", "system": "old", "correct": old})
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_the_threshold_lies_between_the_p_value_and_its_float():
    from scipy.stats import binom

    p = by_hand()
    assert N10 + N01 == 2001 and N10 + N01 + N11 + N00 == 2010
    as_float = min(1.0, 2 * float(binom.cdf(min(N10, N01), N10 + N01, 0.5)))
    assert p < Fraction(THRESHOLD) < Fraction(repr(as_float))


def score(tmp_path: Path, op: str) -> tuple[dict, str]:
    root = tmp_path / op
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "ball.yaml").read_text().replace("op: OP", f"op: {op}")
    (root / "spec" / "studies" / "ball.yaml").write_text(spec.replace("VALUE", THRESHOLD))
    assert main(["--project", str(root), "compile"]) == 0
    obs = root / "runs.jsonl"
    obs.write_text(observations())
    out = root / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "ball", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


@pytest.mark.parametrize(("op", "verdict"), [("lt", "supported"), ("ge", "not-supported")])
def test_reports_decide_and_place_the_p_value_as_the_balls_do(tmp_path, op, verdict):
    from prereg.reports import decides

    doc, md = score(tmp_path, op)
    assert doc["verdicts"] == {"near": verdict}
    (c,) = doc["contrasts"]
    assert c["pairs"]["n10"] == N10 and c["pairs"]["n01"] == N01
    # its statistic is a difference of counts: an integer in SCORE.json (it was 81.0)
    assert c["statisticName"] == "n10 - n01" and type(c["statistic"]) is int
    assert c["statistic"] == N10 - N01
    # the float reads on the other side of the threshold; the decided P on the verdict's
    assert Fraction(repr(c["p"])) > Fraction(THRESHOLD)
    decided = Fraction(c["decidedP"]["p"])
    assert by_hand() <= decided < Fraction(THRESHOLD)
    assert set(c["decidedP"]) == {"p"}  # no family, no adjusted P
    # SCORE.md counts the comparison as the verdict does
    line = next(x for x in md.splitlines() if "deciding figures" in x)
    assert ("met by 1 of 1" if op == "lt" else "met by 0 of 1") in line, line
    # and shows the P on the verdict's side: the registered 4 digits (0.0737) would not be
    shown = re.search(r"paired \(([0-9.]+)\)", line).group(1)
    assert Fraction(shown) < Fraction(THRESHOLD) and len(shown) > len("0.0737"), line
    # the report's figure of what decides: the P column's cell on the verdict's side
    hypothesis = {"id": "near", "rule": {"compare": {
        "target": "paired", "quantity": "p", "op": op, "value": float(THRESHOLD)}}}  # fmt: skip
    ((_, panel),) = decides.panels([hypothesis], doc)
    (column,) = decides.plan(hypothesis, panel).columns
    ((shown, met),) = column.cells.values()
    assert met is (op == "lt")
    assert Fraction(shown) < Fraction(THRESHOLD), shown
