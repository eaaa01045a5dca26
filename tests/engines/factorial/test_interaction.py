"""An interaction of a three-factor factorial, registered from YAML alone
(tests/fixtures/analyses/interaction.yaml: system x hints x language, 10 items a cell) with
the catalogue's linear contrasts: four hints help the new system at least 0.1 more than the
old one in Python (coefficients 1, -1, -1, 1 over new-k4, old-k4, new-k0, old-k0), the
three-factor interaction (eight cells), and the same contrast of mean grades.

The data put each decided figure exactly on its threshold: right answers 9, 7, 5, 4 of 10
give (9/10 - 7/10) - (5/10 - 4/10) = 1/10 by hand (the floats give 0.10000000000000003), and
the grades below give a contrast of means of exactly 1/20 (their floats 0.04999999999999988).
Each figure is checked against statsmodels (OLS on one indicator per cell: HC0 covariance
for the proportions, the Welch contrast by hand), `ge` holds and `gt` fails, and SCORE.md and
`prereg tables` report the figures the verdict read."""

from __future__ import annotations

import csv
import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "analyses" / "interaction.yaml"
CELLS = list(itertools.product(("new", "old"), ("k4", "k0"), ("py", "js")))
RIGHT = {
    ("new", "k4", "py"): 9,
    ("old", "k4", "py"): 7,
    ("new", "k0", "py"): 5,
    ("old", "k0", "py"): 4,
    ("new", "k4", "js"): 8,
    ("old", "k4", "js"): 6,
    ("new", "k0", "js"): 6,
    ("old", "k0", "js"): 6,
}
GRADES = {
    ("new", "k4", "py"): [0.94, 0.43, 0.8, 0.34, 0.55, 0.39, 0.94, 0.38, 0.38, 0.67],
    ("old", "k4", "py"): [0.13, 0.21, 0.1, 0.16, 0.66, 0.23, 0.37, 0.27, 0.79, 0.39],
    ("new", "k0", "py"): [0.51, 0.86, 0.51, 0.93, 0.85, 0.26, 0.04, 0.07, 0.67, 0.75],
    ("old", "k0", "py"): [0.61, 0.62, 0.13, 0.45, 0.24, 0.02, 0.0, 0.77, 0.06, 0.54],
}
PY = [("new", "k4", "py"), ("old", "k4", "py"), ("new", "k0", "py"), ("old", "k0", "py")]
C4 = [1, -1, -1, 1]


def _records() -> list[dict]:
    out = []
    for cell in CELLS:
        system, hints, lang = cell
        for i in range(10):
            grade = GRADES[cell][i] if cell in GRADES else 0.5
            out.append(
                {
                    "item": f"q{i}",
                    "system": system,
                    "hints": hints,
                    "lang": lang,
                    "correct": i < RIGHT[cell],
                    "grade": grade,
                }
            )
    return out


def _score(tmp_path: Path, op: str) -> tuple[dict, Path]:
    root = tmp_path / op
    (root / "spec" / "studies").mkdir(parents=True)
    text = SPEC.read_text()
    for value in ("0.1", "0.05"):
        old = f"quantity: estimate, op: ge, value: {value}}}"
        assert text.count(old) == 1
        text = text.replace(old, f"quantity: estimate, op: {op}, value: {value}}}")
    (root / "spec" / "studies" / "interaction.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    out = root / "SCORE.json"
    args = ["--project", str(root), "interaction", "score", "--observations", str(obs)]
    assert main([*args, "--out", str(out)]) == 0
    return json.loads(out.read_text()), out


def test_the_data_are_on_the_thresholds_by_hand():
    p = {c: Fraction(RIGHT[c], 10) for c in PY}
    assert sum(ci * p[c] for ci, c in zip(C4, PY, strict=True)) == Fraction(1, 10)
    means = {c: sum(Fraction(repr(v)) for v in GRADES[c]) / 10 for c in PY}
    assert sum(ci * means[c] for ci, c in zip(C4, PY, strict=True)) == Fraction(1, 20)
    floats = sum(ci * float(np.mean(GRADES[c])) for ci, c in zip(C4, PY, strict=True))
    assert floats != 0.05 and 0.9 - 0.7 - 0.5 + 0.4 != 0.1


@pytest.mark.parametrize("op, verdict", [("ge", "supported"), ("gt", "not-supported")])
def test_each_interaction_is_decided_exactly_on_its_threshold(tmp_path, op, verdict):
    doc, out = _score(tmp_path, op)
    assert doc["verdicts"]["hints-help-new-more"] == verdict
    assert doc["verdicts"]["grades"] == verdict
    rows = {a["id"]: a for a in doc["analyses"]}
    assert rows["ix"]["exact"]["estimate"] == "1/10"
    md = out.with_suffix(".md").read_text()
    met = "met by 1 of 1" if verdict == "supported" else "met by 0 of 1"
    assert f"estimate {'≥' if op == 'ge' else '>'} 0.1: {met}" in md
    assert f"estimate {'≥' if op == 'ge' else '>'} 0.05: {met}" in md
    if verdict == "supported":  # the comparison formed the exact mean contrast, and says so
        assert rows["ixm"]["exact"]["estimate"] == "1/20"


def _design(n_cells: int) -> np.ndarray:
    return np.kron(np.eye(n_cells), np.ones((10, 1)))


def test_the_figures_against_statsmodels(tmp_path):
    import statsmodels.api as sm

    doc, out = _score(tmp_path, "ge")
    rows = {a["id"]: a for a in doc["analyses"]}
    # the 2x2 interaction of proportions: OLS with HC0 on one indicator per cell
    y = np.concatenate([np.r_[np.ones(RIGHT[c]), np.zeros(10 - RIGHT[c])] for c in PY])
    t = sm.OLS(y, _design(4)).fit(cov_type="HC0").t_test(np.array([C4], float), use_t=False)
    ix = rows["ix"]
    assert math.isclose(ix["se"], float(t.sd[0, 0]), rel_tol=1e-12)
    assert math.isclose(ix["statistic"], float(t.tvalue[0, 0]), rel_tol=1e-10)
    assert math.isclose(ix["p"], float(t.pvalue) / 2, rel_tol=1e-9)  # greater, z > 0
    assert ix["upper"] is None and math.isclose(
        ix["lower"], 0.1 - 1.6448536269514722 * ix["se"], rel_tol=1e-12
    )
    # the three-factor interaction: the signs of new, k4 and py multiplied, in the order the
    # fixture lists the groups (python cells, then javascript)
    order = [*PY, *[(s, h, "js") for s, h, _ in PY]]
    c8 = [
        (1 if s == "new" else -1) * (1 if h == "k4" else -1) * (1 if g == "py" else -1)
        for s, h, g in order
    ]
    assert rows["ix3"]["options"]["coefficients"] == c8
    y8 = np.concatenate([np.r_[np.ones(RIGHT[c]), np.zeros(10 - RIGHT[c])] for c in order])
    t8 = sm.OLS(y8, _design(8)).fit(cov_type="HC0").t_test(np.array([c8], float), use_t=False)
    assert math.isclose(rows["ix3"]["estimate"], float(t8.effect[0]), rel_tol=1e-12)
    assert math.isclose(rows["ix3"]["p"], float(t8.pvalue), rel_tol=1e-9)
    # the contrast of mean grades, Welch: se^2 = sum of s_i^2/n_i by hand
    var = sum(np.var(GRADES[c], ddof=1) / 10 for c in PY)
    assert math.isclose(rows["ixm"]["se"], math.sqrt(var), rel_tol=1e-12)
    df = var**2 / sum((np.var(GRADES[c], ddof=1) / 10) ** 2 / 9 for c in PY)
    assert math.isclose(rows["ixm"]["df"], df, rel_tol=1e-10)
    # the tables carry every figure the verdicts read
    tables = tmp_path / "tables"
    assert main(["tables", str(out), "--csv", str(tables)]) == 0
    with open(tables / "analyses.csv", newline="", encoding="utf-8") as f:
        got = {r["id"]: r for r in csv.DictReader(f)}
    assert got["ix"]["exact.estimate"] == "1/10" and got["ixm"]["exact.estimate"] == "1/20"
    assert float(got["ix3"]["p"]) == rows["ix3"]["p"]
