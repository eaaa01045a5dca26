"""A stratified comparison across benchmarks (tests/fixtures/cmh_strata, written from the docs
alone): two systems, three benchmarks as strata of 10, 12 and 15 items a system, and the
Mantel-Haenszel common odds ratio (new against old) registered as `estimate ge 1.5`.

Right answers (by hand): b1 new 1/10, old 1/10; b2 new 2/12, old 5/12; b3 new 8/15, old 2/15.
OR_MH = Σ a·d/N / Σ b·c/N = (9/20 + 14/24 + 104/30) / (9/20 + 50/24 + 14/30) = 3/2 exactly,
while statsmodels' StratifiedTable (the oracle of the other figures) gives the float
1.4999999999999998, which would fail the rule. And when the old system is never right the odds
ratio is infinite: SCORE.json writes it as null named in `infinite`; the rule holds (∞ ≥ 1.5)
and SCORE.md says so (it said "met by 0 of 1" beside the supported verdict)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cmh_strata"
RIGHT = {("new", "b1"): 1, ("old", "b1"): 1, ("new", "b2"): 2, ("old", "b2"): 5}
RIGHT |= {("new", "b3"): 8, ("old", "b3"): 2}
SIZES = {"b1": 10, "b2": 12, "b3": 15}


def score(tmp_path: Path, right: dict) -> tuple[dict, str]:
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "cmh.yaml").write_text((FIXTURES / "cmh.yaml").read_text())
    assert main(["--project", str(root), "compile"]) == 0
    items, obs = tmp_path / "items.jsonl", tmp_path / "obs.jsonl"
    assert main(["--project", str(root), "cmh", "items", "--out", str(items), "--quiet"]) == 0
    with obs.open("w") as f:
        for line in items.read_text().splitlines():
            it = json.loads(line)
            i = int(it["rowId"].rsplit("-", 1)[1])
            correct = i <= right[(it["system"], it["bench"])]
            f.write(json.dumps({"rowId": it["rowId"], "correct": correct, "attempt": 1}) + "\n")
    out = tmp_path / "SCORE.json"
    args = ["--items", str(items), "--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "cmh", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


def test_a_common_odds_ratio_exactly_on_its_threshold(tmp_path):
    from scipy.stats import chi2
    from statsmodels.stats.contingency_tables import StratifiedTable

    doc, md = score(tmp_path, RIGHT)
    assert doc["verdicts"] == {"better": "supported"}
    (a,) = doc["analyses"]
    num = sum(Fraction(RIGHT["new", b] * (n - RIGHT["old", b]), 2 * n) for b, n in SIZES.items())
    den = sum(Fraction((n - RIGHT["new", b]) * RIGHT["old", b], 2 * n) for b, n in SIZES.items())
    assert num / den == Fraction(3, 2) and a["exact"]["estimate"] == "3/2"
    tables = [
        np.array([[RIGHT["new", b], n - RIGHT["new", b]], [RIGHT["old", b], n - RIGHT["old", b]]])
        for b, n in SIZES.items()
    ]
    st = StratifiedTable(tables, shift_zeros=False)
    assert st.oddsratio_pooled < 1.5  # the float the exact fraction saves the verdict from
    lo, hi = st.oddsratio_pooled_confint(0.05)
    assert math.isclose(a["lower"], lo, rel_tol=1e-12)
    assert math.isclose(a["upper"], hi, rel_tol=1e-12)
    assert math.isclose(a["se"], st.logodds_pooled_se, rel_tol=1e-12)
    stat = st.test_null_odds(correction=False).statistic
    assert math.isclose(a["statistic"], stat, rel_tol=1e-12)
    assert math.isclose(a["p"], chi2.sf(stat, 1), rel_tol=1e-12)
    assert a["counts"]["strata"] == ["b1", "b2", "b3"]
    assert "estimate ≥ 1.5: met by 1 of 1: cmh (1.5)" in md


def test_an_infinite_odds_ratio_meets_its_threshold_and_says_so(tmp_path):
    right = {k: (0 if k[0] == "old" else v) for k, v in RIGHT.items()}
    doc, md = score(tmp_path, right)
    assert doc["verdicts"] == {"better": "supported"}
    (a,) = doc["analyses"]
    assert a["estimate"] is None and a["infinite"] == ["+estimate"]
    assert "estimate ≥ 1.5: met by 1 of 1: cmh (∞)" in md
    assert "| `cmh` | cochran-mantel-haenszel | ∞ [" in md
