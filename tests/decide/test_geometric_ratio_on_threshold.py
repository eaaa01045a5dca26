"""A ratio of geometric means exactly on its threshold (tests/fixtures/geo_ratio): every new
grade is 9/10 of an old one (a permutation of 0.9 x the old grades, as the log writes them), so
by hand the ratio of geometric means is (Π new / Π old)^(1/8) = 9/10 exactly, and the new
grades' geometric mean is (256 · 0.9^8)^(1/8) = 2 · 0.9 = 1.8 (the old grades' product is 256).
numpy's exp(mean log new − mean log old) is 0.9000000000000001.

The analyses `noninferiority-ratio-means` and `ratio-of-geometric-means` decided their
estimate on that float (so `estimate le 0.9` failed while `ge` held), and SCORE.md decided the
geometric-mean contrast's tie on its float too (saying "met by 0 of 1" under a supported
verdict). Now every one is certified by balls of the logs: on the threshold, `le` and `ge`
hold, `lt` and `gt` fail, and SCORE.json carries the threshold it equals as `exact`, which
SCORE.md decides on."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg import outputs
from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "geo_ratio"
NEW = [3.6, 0.9, 3.6, 0.9, 1.8, 1.8, 7.2, 0.45]
OLD = [1, 4, 1, 4, 2, 2, 0.5, 8]


def test_the_data_are_on_the_threshold_by_hand():
    new = [Fraction(str(x)) for x in NEW]
    old = [Fraction(x) for x in OLD]
    assert math.prod(old) == 256 and sorted(new) == sorted(Fraction(9, 10) * x for x in old)
    assert math.prod(new) / math.prod(old) == Fraction(9, 10) ** 8
    assert math.prod(new) == Fraction(18, 10) ** 8
    # the floats miss it: what the figures were decided on before
    assert float(np.exp(np.log(NEW).mean() - np.log(OLD).mean())) != 0.9


def score(tmp_path: Path, op: str) -> tuple[dict, str]:
    root = tmp_path / op
    (root / "spec" / "studies").mkdir(parents=True)
    spec = (FIXTURES / "georatio.yaml").read_text().replace("op: OP", f"op: {op}")
    (root / "spec" / "studies" / "georatio.yaml").write_text(spec)
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "SCORE.json"
    obs = FIXTURES / "grades.jsonl"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "georatio", "score", *args]) == 0
    doc = json.loads(out.read_text())
    schema = outputs.schema_for("factorial", "score")
    assert list(outputs.validator(schema).iter_errors(doc)) == []
    return doc, out.with_suffix(".md").read_text()


@pytest.mark.parametrize(
    ("op", "verdict"),
    [("le", "supported"), ("ge", "supported"), ("lt", "not-supported"), ("gt", "not-supported")],
)
def test_every_ratio_figure_ties_its_threshold(tmp_path, op, verdict):
    doc, md = score(tmp_path, op)
    assert doc["verdicts"] == {"keeps": verdict}
    met = "met by 1 of 1" if verdict == "supported" else "met by 0 of 1"
    line = next(x for x in md.splitlines() if "deciding figures" in x)
    assert line.count(met) == 4, line
    if verdict == "supported":  # a comparison found each equal to its threshold, and says so
        rows = {a["id"]: a for a in doc["analyses"]}
        assert rows["ni"]["exact"] == {"estimate": "9/10"}
        assert rows["rgm"]["exact"] == {"estimate": "9/10"}
        (c,) = doc["contrasts"]
        assert c["exact"] == "9/10"
        (e,) = doc["estimates"]
        assert e["exact"] == "9/5"


def test_the_ratio_analysis_against_statsmodels(tmp_path):
    from statsmodels.stats.weightstats import ttest_ind

    doc, _ = score(tmp_path, "ge")
    rows = {a["id"]: a for a in doc["analyses"]}
    t, p, df = ttest_ind(
        np.log(NEW), np.log(OLD), usevar="unequal", value=math.log(0.9), alternative="larger"
    )
    assert abs(t) < 1e-12 and rows["ni"]["statistic"] == 0.0 and rows["ni"]["p"] == 0.5
    assert math.isclose(p, 0.5, abs_tol=1e-12)
    assert math.isclose(rows["ni"]["df"], df, rel_tol=1e-12)
    assert math.isclose(rows["rgm"]["estimate"], 0.9, rel_tol=1e-15)
