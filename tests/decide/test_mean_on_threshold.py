"""A mean exactly on its threshold, data as logs come (rows keyed by [task, model], no attempt
numbers, tasks as units built from the rows): the new model's grades over the tasks both
models graded are 0.1, 0.1 and 1.0, whose mean is exactly 2/5 as decimals while the float
mean is 0.39999999999999997. The rule `estimate ge 0.4` holds (exact arithmetic decides it),
and SCORE.json carries the exact mean it was decided on, so SCORE.md's deciding figures say
"met by 1 of 1" beside the supported verdict (they said "met by 0" from the float).
Hand figures: t4 (old model ungraded) and t5 (old model missing) are excluded, 6 rows
counted of 10 registered, 9 observed; the t interval by scipy."""

from __future__ import annotations

import json
import math
from pathlib import Path

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mean_threshold"


def score(tmp_path: Path, threshold: str | None = None) -> tuple[dict, str]:
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "grader-mean.yaml").read_text()
    if threshold is not None:
        spec = spec.replace("value: 0.4}", f"value: {threshold}}}")
    (root / "spec" / "studies" / "grader-mean.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "SCORE.json"
    obs = FIXTURES / "grades.jsonl"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "grader-mean", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


def test_a_mean_exactly_on_its_threshold_is_decided_and_reported_alike(tmp_path):
    from scipy.stats import t

    doc, md = score(tmp_path)
    assert doc["verdicts"] == {"new-good": "supported"}
    (est,) = doc["estimates"]
    assert est["n"] == 3 and est["estimate"] == 0.39999999999999997
    assert est["exact"] == "2/5"
    from prereg import outputs

    assert not list(outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc))
    assert "estimate ≥ 0.4: met by 1 of 1" in md
    sd = math.sqrt(((0.1 - 0.4) ** 2 * 2 + 0.6**2) / 2)
    half = t.ppf(0.975, 2) * sd / math.sqrt(3)
    assert math.isclose(est["lower"], 0.4 - half, rel_tol=1e-12)
    assert math.isclose(est["upper"], 0.4 + half, rel_tol=1e-12)
    assert doc["rows"] == {"registered": 10, "observed": 9, "counted": 6}
    (level,) = doc["units"]
    assert (level["included"], level["excluded"]) == (3, 2)
    assert [u["unit"]["task"] for u in level["excludedUnits"]] == ["t4", "t5"]


def test_a_mean_far_from_its_threshold_carries_no_exact_value(tmp_path):
    """The exact mean is formed only when the float cannot decide: 0.39999… against 0.3."""
    doc, md = score(tmp_path, "0.3")
    (est,) = doc["estimates"]
    assert doc["verdicts"] == {"new-good": "supported"} and "exact" not in est
    assert "met by 1 of 1" in md


def test_a_negative_mean_on_its_threshold_is_a_valid_score(tmp_path):
    """The same grades negated (−0.1, −0.1, −1.0: exactly −2/5, the float −0.39999999999999997)
    against `estimate le -0.4`: supported, and the exact mean written as "-2/5" holds to the
    published score schema (its pattern had no sign)."""
    from prereg import outputs

    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "grader-mean.yaml").read_text()
    spec = spec.replace("minimum: 0, maximum: 10", "minimum: -10, maximum: 10")
    spec = spec.replace("op: ge, value: 0.4}", "op: le, value: -0.4}")
    (root / "spec" / "studies" / "grader-mean.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    obs = tmp_path / "g.jsonl"
    lines = (FIXTURES / "grades.jsonl").read_text().splitlines()
    negated = [
        line.replace('"score": 0.1', '"score": -0.1').replace('"score": 1.0', '"score": -1.0')
        for line in lines
    ]
    obs.write_text("\n".join(negated) + "\n")
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "grader-mean", "score", *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == {"new-good": "supported"}
    (est,) = doc["estimates"]
    assert est["exact"] == "-2/5" and est["estimate"] == -0.39999999999999997
    assert not list(outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc))
