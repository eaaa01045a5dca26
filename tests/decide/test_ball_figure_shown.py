"""A figure decided by balls (a ratio of geometric means, a geometric mean) strictly on one side
of its threshold while its float reads on the other: SCORE.json, SCORE.md and the report must
decide it (and show it) on the side the verdict took.

The data are tests/fixtures/geo_ratio's with the first new grade one float below 3.6
(3.5999999999999996): by hand, the product of the new grades falls below 1.8^8 and the ratio of
geometric means below 9/10, strictly, yet numpy's exp(mean log new − mean log old) is still
0.9000000000000001 and exp(mean log new) still 1.8. So ``ge`` fails and ``lt`` holds for every
figure, though their floats say the opposite."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg import outputs
from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "geo_ratio"
LOW = 3.5999999999999996
NEW = [LOW, 0.9, 3.6, 0.9, 1.8, 1.8, 7.2, 0.45]
OLD = [1, 4, 1, 4, 2, 2, 0.5, 8]


DECISION = """
decision:
  outcomes: [{id: keep}, {id: drop}]
  rules:
    - outcome: keep
      when: {compare: {target: ratio, quantity: estimate, op: OP, value: 0.9}}
  otherwise: drop
"""


def test_the_data_are_below_the_thresholds_by_hand():
    assert LOW == float(np.nextafter(3.6, 0))
    new = [Fraction(repr(x)) for x in NEW]
    old = [Fraction(x) for x in OLD]
    # strictly below: (ratio)^8 < (9/10)^8 and (geometric mean)^8 < (9/5)^8
    assert math.prod(new) / math.prod(old) < Fraction(9, 10) ** 8
    assert math.prod(new) < Fraction(9, 5) ** 8
    # the floats read the other way
    assert float(np.exp(np.log(NEW).mean() - np.log(OLD).mean())) > 0.9
    assert float(np.exp(np.log(NEW).mean())) == 1.8


def score(tmp_path: Path, op: str, quantity: str = "estimate") -> tuple[dict, str]:
    root = tmp_path / op / quantity
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "georatio.yaml").read_text().replace("op: OP", f"op: {op}")
    spec = spec.replace(
        "{target: ratio, quantity: estimate", f"{{target: ratio, quantity: {quantity}"
    )
    spec += DECISION.replace("OP", op)
    (root / "spec" / "studies" / "georatio.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    rows = [json.loads(x) for x in (FIXTURES / "grades.jsonl").read_text().splitlines()]
    assert rows[0] == {"item": "q0", "system": "new", "grade": 3.6}
    rows[0]["grade"] = LOW
    obs = root / "grades.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = root / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "georatio", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


def _shown(line: str) -> list[Fraction]:
    """The figures a deciding-figures line shows, in parentheses, as decimals."""
    return [Fraction(x) for x in re.findall(r"\((-?[0-9.]+(?:e-?[0-9]+)?)\)", line)]


@pytest.mark.parametrize(("op", "verdict"), [("ge", "not-supported"), ("lt", "supported")])
def test_reports_decide_as_the_balls_do(tmp_path, op, verdict):
    doc, md = score(tmp_path, op)
    assert doc["verdicts"] == {"keeps": verdict}
    met = "met by 1 of 1" if verdict == "supported" else "met by 0 of 1"
    line = next(x for x in md.splitlines() if "deciding figures" in x)
    assert line.count(met) == 4, line
    # every figure shown lies strictly below its threshold, as the true value does
    shown = _shown(line)
    assert len(shown) == 4, line
    below = [x < Fraction(9, 10) for x in shown[:3]] + [shown[3] < Fraction(9, 5)]
    assert all(below), line
    # the decision reads the ratio as the verdict does, and shows it below 0.9
    if verdict == "supported":
        assert doc["decision"]["outcome"] == "keep"
        (reading,) = doc["decision"]["read"]
        assert reading["held"] is True
        assert Fraction(reading["figure"]["certified"]) < Fraction(9, 10)
        assert reading["figure"]["value"] > 0.9  # the float, which reads the other way
        fired = next(x for x in md.splitlines() if x.startswith("- `ratio` estimate = "))
        assert Fraction(fired.split(" = ")[1].split()[0]) < Fraction(9, 10), fired
    else:
        assert doc["decision"]["outcome"] == "drop"
    schema = outputs.schema_for("factorial", "score")
    assert list(outputs.validator(schema).iter_errors(doc)) == []
    # SCORE.json carries, for each, a decimal inside the ball that decided it
    rows = {a["id"]: a for a in doc["analyses"]}
    for figure in (rows["ni"]["certified"]["estimate"], rows["rgm"]["certified"]["estimate"]):
        assert Fraction(figure) < Fraction(9, 10)
    (c,) = doc["contrasts"]
    (e,) = doc["estimates"]
    assert Fraction(c["certified"]) < Fraction(9, 10) and Fraction(e["certified"]) < Fraction(9, 5)
    assert "exact" not in c and "exact" not in e  # not exact values: decimals of the balls


@pytest.mark.parametrize(("op", "verdict"), [("ge", "not-supported"), ("lt", "supported")])
def test_an_absolute_value_decided_by_balls_is_shown_on_its_side(tmp_path, op, verdict):
    """The ratio contrast read as |estimate|: balls decide |ratio| (not the ratio), and the
    contrast's row still carries a decimal on the verdict's side of 0.9."""
    doc, md = score(tmp_path, op, "abs_estimate")
    assert doc["verdicts"] == {"keeps": verdict}
    met = "met by 1 of 1" if verdict == "supported" else "met by 0 of 1"
    line = next(x for x in md.splitlines() if "deciding figures" in x)
    assert line.count(met) == 4, line
    (c,) = doc["contrasts"]
    assert Fraction(c["certified"]) < Fraction(9, 10)
