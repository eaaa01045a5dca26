"""Three raters label ten items (tests/fixtures/raters, written from the docs alone: one row
per rating, the rater a factor, the item a field, rows keyed by [item, rater]); Fleiss' kappa
`estimate ge 0.6` and Krippendorff's alpha (nominal) `estimate ge 0.6`.

The labels (rows: items; columns: r1, r2, r3) give category totals 10, 10, 10, so by hand
P̄_e = 3·(1/3)² = 1/3; six items agree fully (Σ n² − m = 6) and four have two alike (2), so
P̄ = (6·6 + 4·2)/(10·3·2) = 11/15 and κ = (11/15 − 1/3)/(2/3) = 3/5 exactly, which meets 0.6;
statsmodels' fleiss_kappa gives the float 0.5999999999999999, which would not. The null
variance (Fleiss, Nee & Landis 1979) with every p_j = 1/3: Σpq = 2/3, Σpq(q − p) = 2/9,
Var₀ = 2/(10·3·2) · (4/9 − 2/9)/(4/9) = 1/60, z = 0.6·√60.
Krippendorff (nominal): each of the four split items adds 2 to the off-diagonal coincidences
(4 ordered unlike pairs over m_u − 1 = 2), so D_o ∝ 8; n_c = 10 each, Σ_{c≠k} n_c n_k = 600;
α = 1 − (n − 1)·8/600 = 1 − 29·8/600 = 46/75.
A rating left out (null) is refused with the item and the rater named (it said x[2][1])."""

from __future__ import annotations

import json
import math
from pathlib import Path

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "raters"
LABELS = [[1, 1, 1], [1, 2, 2], [1, 0, 1], [0, 0, 0], [2, 0, 2],
          [1, 1, 1], [0, 1, 0], [2, 2, 2], [2, 2, 2], [0, 0, 0]]  # fmt: skip


def score(tmp_path: Path, labels=LABELS, code: int = 0):
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "raters.yaml").write_text((FIXTURES / "raters.yaml").read_text())
    assert main(["--project", str(root), "compile"]) == 0
    obs = tmp_path / "obs.jsonl"
    with obs.open("w") as f:
        for i, row in enumerate(labels, 1):
            for rater, v in zip(("r1", "r2", "r3"), row, strict=True):
                f.write(json.dumps({"item": f"i{i:02d}", "rater": rater, "label": v}) + "\n")
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "raters", "score", *args]) == code
    return out


def test_fleiss_kappa_and_krippendorff_alpha_on_their_thresholds(tmp_path):
    import numpy as np
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    doc = json.loads(score(tmp_path).read_text())
    assert doc["verdicts"] == {"agree": "supported", "reliable": "supported"}
    fleiss, alpha = doc["analyses"]
    assert fleiss["exact"]["estimate"] == "3/5"
    assert fleiss["exact"]["observed_agreement"] == "11/15"
    assert fleiss["exact"]["expected_agreement"] == "1/3"
    table, _ = aggregate_raters(np.array(LABELS))
    assert fleiss_kappa(table, method="fleiss") < 0.6  # the float the exact fraction saves
    assert math.isclose(fleiss["extra"]["se_null"], math.sqrt(1 / 60), rel_tol=1e-12)
    assert math.isclose(fleiss["statistic"], 0.6 * math.sqrt(60), rel_tol=1e-12)
    from scipy.stats import norm

    assert math.isclose(fleiss["p"], norm.sf(0.6 * math.sqrt(60)), rel_tol=1e-10)
    assert alpha["exact"]["estimate"] == "46/75"
    assert fleiss["counts"]["units"] == alpha["counts"]["units"] == 10


def test_a_missing_rating_is_refused_with_its_item_and_rater(tmp_path, capsys):
    labels = [row[:] for row in LABELS]
    labels[2][1] = None
    out = score(tmp_path, labels, code=2)
    err = capsys.readouterr().err
    assert "analysis fleiss (fleiss-kappa)" in err
    assert "item 'i03' has no rating by rater 'r2'" in err
    assert not out.exists() and not out.with_suffix(".md").exists()
