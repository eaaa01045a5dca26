"""Thresholds no decimal writes: a gate and a rule registered at two thirds, written as the
exact fraction "2/3" (tests/fixtures/thresholds/twothirds.yaml). 6 of 9 problems solved meets
`ge 2/3` and fails `gt 2/3`; 5 of 9 fails the gate; a mean of grades written in tenths that is
exactly 2/3 meets it though its float reads below. The decimal a threshold would otherwise need,
0.6667, puts 6 of 9 below it: the rounding trick the word removes. Oracles are Fractions of
the data computed here, and scipy's binomial for the diagnosed verdict."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "thresholds" / "twothirds.yaml"
RULE = 'compare: {target: rate-math, quantity: estimate, op: ge, value: "2/3"}'
GATE = 'op: ge, value: "2/3", description'
# nine math grades whose mean is exactly 2/3 as written (6.0 / 9), their float mean below it
GRADES = [0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.6, 0.6, 0.6]


def _project(root, text: str | None = None):
    (root / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "studies" / "twothirds.yaml").write_text(text or SPEC.read_text())
    return main(["--project", str(root), "compile", "--quiet"])


def _log(root, math_solved: int, code_solved: int):
    rows = []
    for domain, k in (("math", math_solved), ("code", code_solved)):
        for i in range(9):
            row = {"item": f"{domain}{i}", "domain": domain, "solved": i < k}
            if domain == "math":
                row["grade"] = GRADES[i]
            rows.append(row)
    path = root / f"obs-{math_solved}-{code_solved}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _score(root, log):
    out = root / f"{log.stem}.SCORE.json"
    args = ["--project", str(root), "twothirds", "score", "--observations", str(log)]
    assert main([*args, "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


def test_the_grades_sit_on_two_thirds():
    assert sum(Fraction(repr(g)) for g in GRADES) / 9 == Fraction(2, 3)
    assert float(np.mean(GRADES)) != Fraction(2, 3)


def test_six_of_nine_meets_two_thirds_exactly(tmp_path):
    assert _project(tmp_path) == 0
    doc, md = _score(tmp_path, _log(tmp_path, 6, 6))
    assert Fraction(6, 9) == Fraction(2, 3)
    assert doc["verdicts"] == {"math-two-thirds": "supported", "grade-two-thirds": "supported"}
    assert doc["decision"]["outcome"] == "ship"
    (gate,) = doc["gates"]
    assert gate["passed"] and gate["value"] == 2 / 3 and gate["valueExact"] == "2/3"
    (read,) = doc["decision"]["read"]
    assert read["held"] is True
    # the registered threshold as written, in the generated rule, PREREG.md and SCORE.md
    rules = (tmp_path / "generated" / "twothirds" / "rules.py").read_text()
    assert 'Compare("rate-math", "estimate", "ge", "2/3")' in rules
    prereg = (tmp_path / "generated" / "twothirds" / "PREREG.md").read_text()
    assert "`rate-math`: estimate ≥ 2/3" in prereg and "≥ 2/3 in every cell" in prereg
    assert "| `enough` | solve-rate | ge 2/3 | yes | – |" in md
    assert "estimate ≥ 2/3: met by 1 of 1: rate-math (2/3)" in md
    from prereg import outputs

    schema = outputs.validator(outputs.schema_for("factorial", "score"))
    assert [e.message for e in schema.iter_errors(doc)] == []


def test_five_of_nine_fails_the_gate(tmp_path):
    assert _project(tmp_path) == 0
    doc, md = _score(tmp_path, _log(tmp_path, 6, 5))
    (gate,) = doc["gates"]
    assert not gate["passed"]
    assert gate["failures"] == [{"cell": "code", "figure": 5 / 9}]
    assert doc["decision"]["outcome"] == "hold"


@pytest.mark.parametrize(
    ("op", "value", "verdict"),
    [
        ("ge", '"2/3"', "supported"),
        ("le", '"2/3"', "supported"),
        ("gt", '"2/3"', "not-supported"),
        ("lt", '"2/3"', "not-supported"),
        ("ge", "2/3", "supported"),  # unquoted, YAML reads the same text
        ("ge", "0.6667", "not-supported"),  # the rounding a decimal needs misses it
        ("ge", "0.6666", "supported"),
    ],
)
def test_a_proportion_and_a_mean_exactly_on_two_thirds(tmp_path, op, value, verdict):
    text = SPEC.read_text()
    assert text.count(RULE) == 1 and text.count("op: ge, value: 2/3}") == 1
    text = text.replace(RULE, RULE.replace('op: ge, value: "2/3"', f"op: {op}, value: {value}"))
    text = text.replace("op: ge, value: 2/3}", f"op: {op}, value: {value}}}")
    assert _project(tmp_path, text) == 0
    doc, _ = _score(tmp_path, _log(tmp_path, 6, 6))
    assert doc["verdicts"] == {"math-two-thirds": verdict, "grade-two-thirds": verdict}


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('"2/0"', "at /gates/0/value: threshold '2/0' is not an exact fraction"),
        ('"1/3 "', "at /gates/0/value"),
        ('"two thirds"', "at /gates/0/value"),
        ('"1' + "0" * 400 + '/1"', "at /gates/0/value: threshold"),
    ],
)
def test_compile_refuses_a_threshold_that_is_no_fraction(tmp_path, capsys, value, words):
    text = SPEC.read_text()
    assert text.count(GATE) == 1
    assert _project(tmp_path, text.replace(GATE, GATE.replace('"2/3"', value))) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert len([x for x in err.splitlines() if "/gates/0/value" in x]) == 1
    assert not (tmp_path / "generated").exists()


def test_meets_many_decides_the_fractions_float_by_its_decimal():
    from prereg.rules import meets_many

    t = Fraction(2, 3)
    x = np.array([float(t), 0.7, 0.5, np.nan])
    assert float(t) < t  # the double nearest 2/3 lies below it
    assert meets_many(x, "ge", t).tolist() == [False, True, False, False]
    assert meets_many(x, "lt", t).tolist() == [True, False, True, False]
    third = Fraction(1, 3)
    assert meets_many(np.array([float(third)]), "le", third).tolist() == [float(third) <= third]


def test_diagnose_reads_the_fraction(tmp_path):
    """The verdict's chance under a true solve rate of 0.6667: each domain must solve 6 of 9
    (the gate) and math 6 of 9 (the rule), so scipy's binomial gives it."""
    assert _project(tmp_path) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "twothirds", "diagnose", "--simulations", "1000"]
    assert main([*args, "--seed", "5", "--out", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    (claim,) = doc["claims"]
    exact = stats.binom.sf(5, 9, 0.6667) ** 2
    se = (exact * (1 - exact) / 1000) ** 0.5
    assert abs(claim["value"] - exact) < 4 * se
