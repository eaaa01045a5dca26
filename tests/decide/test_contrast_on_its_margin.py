"""A three-arm design written from the docs by a newcomer (tests/fixtures/newcomer/
threearm.yaml): t1 and t2 against a control, each a Farrington–Manning non-inferiority
contrast at margin −0.1 (one-sided, greater), Holm-adjusted together. t2's accuracy is 25/50
against the control's 30/50: a difference of exactly −1/10, on the margin as written, so
(docs/vocabulary.md, "Exactness at thresholds") z = 0 and the one-sided P is exactly 1/2 (the
float −0.1 lies below −1/10 and used to leave z ≈ 6e-17). t1 (40/50) is checked against the
Farrington–Manning statistic by hand (the restricted MLE by scipy's bounded minimiser of the
negative log-likelihood) and the adjusted P values against statsmodels' Holm."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "newcomer" / "threearm.yaml"
K = {"control": 30, "t1": 40, "t2": 25}


def _fm_by_hand(x1, n1, x2, n2, d):
    def nll(p2):
        p1 = p2 + d
        return -(
            x1 * np.log(p1)
            + (n1 - x1) * np.log(1 - p1)
            + x2 * np.log(p2)
            + (n2 - x2) * np.log(1 - p2)
        )

    lo, hi = max(0.0, -d) + 1e-12, min(1.0, 1 - d) - 1e-12
    p2 = minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-14}).x
    p1 = p2 + d
    z = (x1 / n1 - x2 / n2 - d) / math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    return z, norm.sf(z)


def _score(root: Path, rule: str | None = None) -> dict:
    text = SPEC.read_text()
    if rule is not None:
        old = 'compare: {target: "ni-{t}", quantity: adjusted_p, op: lt, value: 0.05}'
        assert text.count(old) == 1
        text = text.replace(old, rule)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "threearm.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    log = root / "runs.jsonl"
    rows = [
        {"item": f"i{i}", "arm": arm, "correct": i < k} for arm, k in K.items() for i in range(50)
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "threearm", "score", *args]) == 0
    return json.loads(out.read_text())


def test_a_contrast_on_its_margin_has_z_0_and_p_one_half(tmp_path):
    from statsmodels.stats.multitest import multipletests

    doc = _score(tmp_path)
    got = {c["id"]: c for c in doc["contrasts"]}
    assert got["ni-t2"]["statistic"] == 0.0 and got["ni-t2"]["p"] == 0.5
    z1, p1 = _fm_by_hand(40, 50, 30, 50, -0.1)
    assert got["ni-t1"]["statistic"] == pytest.approx(z1, rel=1e-8)
    assert got["ni-t1"]["p"] == pytest.approx(p1, rel=1e-6)
    holm = multipletests([got["ni-t1"]["p"], 0.5], method="holm")[1]
    assert got["ni-t1"]["adjustedP"] == pytest.approx(holm[0], rel=1e-12)
    assert got["ni-t2"]["adjustedP"] == 0.5 == holm[1]
    assert doc["verdicts"] == {"both-not-worse": "not-supported"}


@pytest.mark.parametrize("op, verdict", [("le", "supported"), ("lt", "not-supported")])
def test_p_one_half_on_the_margin_meets_le_and_fails_lt(tmp_path, op, verdict):
    rule = f'compare: {{target: "ni-{{t}}", quantity: p, op: {op}, value: 0.5}}'
    doc = _score(tmp_path, rule)
    assert doc["verdicts"] == {"both-not-worse": verdict}


def test_a_block_of_studies_gives_one_studys_p_on_the_margin():
    """diagnose's block gives P = 1/2 (one-sided) or 1 where the difference is exactly the
    margin as written, as one study's score does; elsewhere it keeps the method's P."""
    import numpy as np

    from prereg.decide.evaluate import _on_the_margin_many

    k1, n1 = np.array([9, 45, 7, 0]), np.array([10, 50, 10, 10])
    k2, n2 = np.array([10, 50, 7, 0]), np.array([10, 50, 10, 0])
    p = np.array([0.49999999999999994, 0.5000000000000001, 0.3, 0.2])
    got = _on_the_margin_many(p.copy(), (k1, n1, k2, n2), -0.1, "greater")
    assert got.tolist() == [0.5, 0.5, 0.3, 0.2]
    got = _on_the_margin_many(p.copy(), (k1, n1, k2, n2), -0.1, "two-sided")
    assert got.tolist() == [1.0, 1.0, 0.3, 0.2]
    assert _on_the_margin_many(p.copy(), (k1, n1, k2, n2), 0, "greater").tolist() == p.tolist()
