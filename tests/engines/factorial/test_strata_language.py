"""Per-language strata, written from the docs by a newcomer (tests/fixtures/newcomer/
strata.yaml): two systems on 20 items of each of three languages. The tables (new right, new
wrong, old right, old wrong) are py 10/10/6/14, js 14/6/10/10, go 12/8/10/10, so by hand the
Mantel–Haenszel odds ratio is (140 + 140 + 120)/40 over (60 + 60 + 80)/40 = 2 exactly, which
meets `ge 2`, and the risk difference, with equal weights, is (0.2 + 0.2 + 0.1)/3 = 1/6. The
CMH figures are statsmodels' StratifiedTable; the risk difference's SE is the
Greenland–Robins formula by hand."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chi2, norm

from prereg.cli import main
from tests.conftest import FIXTURES

TABLES = {"py": (10, 10, 6, 14), "js": (14, 6, 10, 10), "go": (12, 8, 10, 10)}


@pytest.mark.parametrize("op, verdict", [("ge", "supported"), ("gt", "not-supported")])
def test_strata_by_language(tmp_path, op, verdict):
    from statsmodels.stats.contingency_tables import StratifiedTable

    text = (FIXTURES / "newcomer" / "strata.yaml").read_text()
    text = text.replace(
        "quantity: estimate, op: ge, value: 2", f"quantity: estimate, op: {op}, value: 2"
    )
    # the CMH P is about 0.067: read against 0.1, the odds ratio's threshold decides
    text = text.replace(
        "cmh, quantity: p, op: lt, value: 0.05", "cmh, quantity: p, op: lt, value: 0.1"
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "strata.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    rows = []
    for lang, (a, _b, c, _d) in TABLES.items():
        for i in range(20):
            rows.append({"item": f"{lang}{i}", "system": "new", "lang": lang, "correct": i < a})
            rows.append({"item": f"{lang}{i}", "system": "old", "lang": lang, "correct": i < c})
    log = tmp_path / "runs.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "strata", "score", *args]) == 0
    doc = json.loads(out.read_text())
    got = {a["id"]: a for a in doc["analyses"]}
    st = StratifiedTable([np.array([[a, b], [c, d]]) for a, b, c, d in TABLES.values()])
    cmh = got["cmh"]
    assert cmh["exact"]["estimate"] == "2/1"
    assert cmh["se"] == pytest.approx(st.logodds_pooled_se, rel=1e-12)
    low, high = st.oddsratio_pooled_confint(0.05)
    assert cmh["lower"] == pytest.approx(low, rel=1e-12)
    assert cmh["upper"] == pytest.approx(high, rel=1e-12)
    stat = st.test_null_odds(correction=False).statistic
    assert cmh["statistic"] == pytest.approx(stat, rel=1e-12)
    assert cmh["p"] == pytest.approx(chi2.sf(stat, 1), rel=1e-10)
    rd = got["mhrd"]
    assert Fraction(rd["exact"]["estimate"]) == Fraction(1, 6)
    # Greenland–Robins by hand: per stratum (a b n2^3 + c d n1^3)/(n1 n2 N^2), over (sum w)^2
    var = sum((a * b + c * d) * 20**3 / (20 * 20 * 40**2) for a, b, c, d in TABLES.values()) / 30**2
    assert rd["se"] == pytest.approx(math.sqrt(var), rel=1e-12)
    z = (1 / 6 - 0.1) / math.sqrt(var)
    assert rd["statistic"] == pytest.approx(z, rel=1e-10)
    assert rd["p"] == pytest.approx(norm.sf(z), rel=1e-10)
    assert rd["lower"] == pytest.approx(1 / 6 - norm.ppf(0.95) * math.sqrt(var), rel=1e-12)
    # the odds ratio of exactly 2 (its float 2.0 too) meets ge 2 and fails gt 2
    assert doc["verdicts"] == {"new-better": verdict, "rd": "not-supported"}


def test_a_cmh_analysis_written_before_its_alternative_is_told_what_it_meant(tmp_path, capsys):
    """`alternative` became an option of cochran-mantel-haenszel after specs were written
    without it (the test was two-sided): compile refuses the spec as every missing option is
    refused, and says which value gives the figures it gave."""
    text = (FIXTURES / "newcomer" / "strata.yaml").read_text()
    old = "alternative: two-sided, "
    assert old in text
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "strata.yaml").write_text(text.replace(old, "", 1))
    assert main(["--project", str(tmp_path), "compile"]) != 0
    err = capsys.readouterr().err
    assert "method cochran-mantel-haenszel needs option(s) alternative" in err
    assert "write alternative: two-sided for the figures it gave" in err
