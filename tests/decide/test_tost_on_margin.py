"""A TOST of two means whose difference is exactly on its lower margin, scored from a spec
(tests/fixtures/tost_margin): new grades 0.3, 0.5, 0.4 (mean 2/5), old 0.1, 0.3, 0.2 (mean
1/5), margins 0.2 and 0.5. By hand: d − 0.2 = 0, so t_L = 0 and P_L = 1/2 exactly; the
upper side t_U = (0.2 − 0.5)/se with se = √(0.01/3 + 0.01/3) (both sds 0.1), df 4 (Welch with
equal variances and sizes), P_U from scipy's t. p = max(P_L, P_U) = 1/2, so the rule
`p lt 0.5` is not supported and `p le 0.5` is (floats gave t = 3.4e-16, p = 0.4999999999999999:
`lt 0.5` was supported). The analyses table of `prereg tables` carries the same figures."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tost_margin"


def score(tmp_path: Path, op: str) -> dict:
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "tostm.yaml").read_text()
    spec = spec.replace("op: lt, value: 0.5", f"op: {op}, value: 0.5")
    (root / "spec" / "studies" / "tostm.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "SCORE.json"
    obs = FIXTURES / "grades.jsonl"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "tostm", "score", *args]) == 0
    return json.loads(out.read_text())


def test_tost_means_exactly_on_the_lower_margin(tmp_path):
    from scipy.stats import t

    doc = score(tmp_path, "lt")
    assert doc["verdicts"] == {"same": "not-supported"}
    (a,) = doc["analyses"]
    se = math.sqrt(0.01 / 3 + 0.01 / 3)
    assert a["extra"]["statistic_lower"] == 0.0 and a["extra"]["p_lower"] == 0.5
    assert a["p"] == 0.5 and a["statistic"] == 0.0
    assert math.isclose(a["se"], se, rel_tol=1e-12)
    assert math.isclose(a["extra"]["statistic_upper"], -0.3 / se, rel_tol=1e-12)
    assert math.isclose(a["extra"]["p_upper"], t.cdf(-0.3 / se, 4), rel_tol=1e-10)
    assert score(tmp_path / "le", "le")["verdicts"] == {"same": "supported"}


def test_the_analyses_table(tmp_path):
    doc = score(tmp_path, "lt")
    out = tmp_path / "tables"
    assert main(["tables", str(tmp_path / "SCORE.json"), "--csv", str(out)]) == 0
    with open(out / "analyses.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    (row,) = rows
    assert (row["id"], row["hypothesis"], row["method"]) == ("tost", "same", "tost-means")
    assert (row["options.lower"], row["options.upper"], row["options.variance"]) == (
        "0.2",
        "0.5",
        "welch",
    )
    (a,) = doc["analyses"]
    assert float(row["p"]) == 0.5 and float(row["se"]) == a["se"]
    assert row["extra.statistic_lower"] == "0.0" and row["counts.n1"] == "3"


CONTRAST = """    contrasts:
      - id: diff
        metric: grade
        a: {where: [{factor: grader, levels: [new]}]}
        b: {where: [{factor: grader, levels: [old]}]}
        interval: welch
        level: 0.9
        test: welch-t
        alternative: greater
        margin: 0.2
    rule:
      all_of:
        - compare: {target: diff, quantity: estimate, op: OP, value: 0.2}
        - compare: {target: diff, quantity: p, op: le, value: 0.5}
"""


def score_contrast(tmp_path: Path, op: str, rows: int, grades) -> tuple[dict, str]:
    """The fixture with a Welch contrast (margin 0.2) in place of the TOST analysis."""
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "tostm.yaml").read_text()
    start = spec.index("    analyses:\n")
    end = spec.index("constants:\n")
    spec = spec[:start] + CONTRAST.replace("OP", op) + spec[end:]
    spec = spec.replace("rows: 3,", f"rows: {rows},")
    (root / "spec" / "studies" / "tostm.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    obs = tmp_path / "obs.jsonl"
    with obs.open("w") as f:
        for grader, values in grades.items():
            for i, v in enumerate(values):
                f.write(json.dumps({"task": f"t{i}", "grader": grader, "score": v}) + "\n")
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "tostm", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


def test_a_difference_of_means_on_the_threshold_is_shown_as_decided(tmp_path):
    """Decimals: new 0.3, 0.5, 0.4 against old 0.1, 0.3, 0.2 differ by 1/5 exactly (the floats
    by 0.20000000000000004): `estimate gt 0.2` fails, and SCORE.md said it was met by 1 of 1
    beside the not-supported verdict; the contrast's Welch t against the margin 0.2 is 0, its
    one-sided P 1/2. Whole numbers: 1, 1, 1, 0, 0 against 1, 1, 0, 0, 0 differ by 1/5 (the
    floats by 0.19999999999999996): `estimate ge 0.2` holds and SCORE.md says so."""
    from prereg import outputs

    validator = outputs.validator(outputs.schema_for("factorial", "score"))
    grades = {"new": [0.3, 0.5, 0.4], "old": [0.1, 0.3, 0.2]}
    doc, md = score_contrast(tmp_path / "dec", "gt", 3, grades)
    assert doc["verdicts"] == {"same": "not-supported"}
    (c,) = doc["contrasts"]
    assert c["exact"] == "1/5" and c["statistic"] == 0.0 and c["p"] == 0.5
    assert "estimate > 0.2: met by 0 of 1" in md
    assert not list(validator.iter_errors(doc))
    grades = {"new": [1, 1, 1, 0, 0], "old": [1, 1, 0, 0, 0]}
    doc, md = score_contrast(tmp_path / "int", "ge", 5, grades)
    assert doc["verdicts"] == {"same": "supported"}
    (c,) = doc["contrasts"]
    assert c["estimate"] < 0.2 and c["exact"] == "1/5"
    assert "estimate ≥ 0.2: met by 1 of 1" in md
    assert not list(validator.iter_errors(doc))


def test_a_paired_t_contrast_on_its_margin(tmp_path, monkeypatch):
    """Paired by task: new 0.3, 0.5, 0.4 against old 0.1, 0.2, 0.3 differ by 0.2, 0.3, 0.1
    (mean 1/5 exactly, sd 0.1): the paired t against the margin 0.2 is 0 and its one-sided P
    1/2 (the floats' differences 0.19999999999999998, 0.3, 0.10000000000000003 gave t ≠ 0);
    se = 0.1/√3 by hand."""
    paired = CONTRAST.replace(
        "        interval: welch\n        level: 0.9\n        test: welch-t\n",
        "        pair_by: task\n        interval: t\n        level: 0.9\n        test: paired-t\n",
    )
    assert paired != CONTRAST
    monkeypatch.setitem(globals(), "CONTRAST", paired)
    grades = {"new": [0.3, 0.5, 0.4], "old": [0.1, 0.2, 0.3]}
    doc, md = score_contrast(tmp_path, "gt", 3, grades)
    assert doc["verdicts"] == {"same": "not-supported"}
    (c,) = doc["contrasts"]
    assert c["statistic"] == 0.0 and c["p"] == 0.5
    assert math.isclose(c["se"], 0.1 / math.sqrt(3), rel_tol=1e-12)
    assert c["pairs"]["n"] == 3
