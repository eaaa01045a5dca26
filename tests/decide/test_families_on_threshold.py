"""Paired proportions, a ratio of proportions, a TOST of proportions, two raters' agreement and
calibration, every figure exactly on its threshold, scored from a spec written from
docs/analyses.md (tests/fixtures/paired_sweep): twenty items answered by both systems, 8 right
by both, 6 by the new one only, 2 by the old one only, 4 by neither; every stated confidence
0.8. By hand (fractions below):

- paired difference (n10 − n01)/n = 4/20 = 1/5 (the floats 0.7 − 0.5 give 0.19999999999999996);
- McNemar's exact two-sided P = 2·(C(8,0) + C(8,1) + C(8,2))/2^8 = 37/128 = 0.2890625;
- the risk ratio (14/20)/(10/20) = 7/5, and against a non-inferiority margin of 1.4 the log
  ratio less the log margin is 0: z = 0, the one-sided P 1/2;
- TOST with margins −0.1 and 0.2: the difference 1/5 sits on the upper margin, so P = 1/2;
- Cohen's kappa with the systems as raters of right (1) or wrong (0): p_o = 12/20,
  p_e = (14·10 + 6·10)/400 = 1/2, κ = (3/5 − 1/2)/(1/2) = 1/5;
- Brier score of the new system: (14·0.2² + 6·0.8²)/20 = 11/50 = 0.22;
- its ECE over one bin: |14 − 20·0.8|/20 = 1/10 (the float is 0.10000000000000017).

So `ge` and `le` at every threshold hold and `gt` and `lt` fail, each one (SCORE.md's deciding
figures count them one by one), and SCORE.json carries the exact values it was decided on."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "paired_sweep"


def _pairs():
    rows = [json.loads(x) for x in (FIXTURES / "runs.jsonl").read_text().splitlines()]
    by = {}
    for r in rows:
        by.setdefault(r["item"], {})[r["system"]] = r
    return [(p["new"]["right"], p["old"]["right"], p["new"]["conf"]) for p in by.values()]


def hand() -> dict[str, Fraction]:
    pairs = _pairs()
    n = len(pairs)
    n10 = sum(a and not b for a, b, _ in pairs)
    n01 = sum(b and not a for a, b, _ in pairs)
    ka, kb = sum(a for a, _, _ in pairs), sum(b for _, b, _ in pairs)
    low = min(n10, n01)
    p_mcn = 2 * Fraction(sum(math.comb(n10 + n01, i) for i in range(low + 1)), 2 ** (n10 + n01))
    po = Fraction(sum(a == b for a, b, _ in pairs), n)
    pe = Fraction(ka * kb + (n - ka) * (n - kb), n * n)
    conf = [Fraction(repr(c)) for _, _, c in pairs]
    return {
        "difference": Fraction(n10 - n01, n),
        "mcnemar": p_mcn,
        "ratio": Fraction(ka, n) / Fraction(kb, n),
        "kappa": (po - pe) / (1 - pe),
        "brier": sum((q - a) ** 2 for q, (a, _, _) in zip(conf, pairs, strict=True)) / n,
        "ece": abs(ka - sum(conf)) / n,
    }


def test_the_figures_by_hand():
    h = hand()
    assert h == {
        "difference": Fraction(1, 5),
        "mcnemar": Fraction(37, 128),
        "ratio": Fraction(7, 5),
        "kappa": Fraction(1, 5),
        "brier": Fraction(11, 50),
        "ece": Fraction(1, 10),
    }
    assert 14 / 20 - 10 / 20 != 0.2  # the floats miss the paired difference
    # the libraries agree, as floats
    from sklearn.metrics import brier_score_loss, cohen_kappa_score
    from statsmodels.stats.contingency_tables import mcnemar

    pairs = _pairs()
    new, old = [a for a, _, _ in pairs], [b for _, b, _ in pairs]
    assert math.isclose(cohen_kappa_score(new, old), 0.2, rel_tol=1e-12)
    assert math.isclose(brier_score_loss(new, [c for _, _, c in pairs]), 0.22, rel_tol=1e-12)
    assert mcnemar([[8, 6], [2, 4]], exact=True).pvalue == 0.2890625


@pytest.mark.parametrize("op", ["ge", "le", "gt", "lt"])
def test_every_family_on_its_threshold(tmp_path, op):
    root = tmp_path / op
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "sweep.yaml").read_text().replace("op: OP", f"op: {op}")
    (root / "spec" / "studies" / "sweep.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "SCORE.json"
    args = ["--observations", str(FIXTURES / "runs.jsonl"), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "sweep", "score", *args]) == 0
    doc = json.loads(out.read_text())
    holds = op in ("ge", "le")
    assert doc["verdicts"] == {"on-threshold": "supported" if holds else "not-supported"}
    line = next(x for x in out.with_suffix(".md").read_text().splitlines() if "deciding" in x)
    assert line.count("met by 1 of 1" if holds else "met by 0 of 1") == 10, line
    h = hand()
    rows = {a["id"]: a for a in doc["analyses"]}
    exact = {k: Fraction(v) for k, v in rows["mcn"]["exact"].items()}
    assert exact == {"estimate": h["difference"], "p": h["mcnemar"]}
    assert Fraction(rows["rr"]["exact"]["estimate"]) == h["ratio"]
    assert rows["nir"]["statistic"] == 0.0 and rows["nir"]["p"] == 0.5
    assert rows["tost"]["p"] == 0.5
    assert Fraction(rows["kappa"]["exact"]["estimate"]) == h["kappa"]
    assert Fraction(rows["brier"]["exact"]["estimate"]) == h["brier"]
    assert Fraction(rows["ece"]["exact"]["estimate"]) == h["ece"]
    assert rows["ece"]["estimate"] != 0.1  # the float, which the exact value overrules
    (c,) = doc["contrasts"]
    assert c["pairs"]["n10"] == 6 and c["pairs"]["n01"] == 2
    assert c["p"] == float(h["mcnemar"])
    assert c["decidedP"] == {"p": "0.2890625"}  # the exact test's P, as decided
