"""An analysis whose estimate is a mean, exactly on its threshold (tests/fixtures/boot_mean,
written from the docs: a percentile bootstrap of a mean grade): the twelve grades sum to 4.8 as
decimals, so the mean is exactly 2/5 while the float is 0.39999999999999997. The rule
`estimate ge 0.4` holds (the exact mean decides it), and SCORE.json now carries that exact mean
in the analysis' row (`exact.estimate`), so SCORE.md's deciding figures say "met by 1 of 1"
(they said "met by 0 of 1" beside the supported verdict). The interval is scipy's
bootstrap(method='percentile') with the same PCG64 seed (the docs say it draws the same
indices)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "boot_mean"
GRADES = [0.1, 0.1, 1.0, 0.3, 0.5, 0.4, 0.2, 0.6, 0.7, 0.3, 0.1, 0.5]


def test_a_bootstrap_mean_exactly_on_its_threshold(tmp_path):
    from fractions import Fraction

    from scipy.stats import bootstrap

    assert sum(Fraction(str(g)) for g in GRADES) / 12 == Fraction(2, 5)
    assert float(np.mean(GRADES)) < 0.4
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "boot.yaml").write_text((FIXTURES / "boot.yaml").read_text())
    assert main(["--project", str(root), "compile"]) == 0
    obs = tmp_path / "obs.jsonl"
    with obs.open("w") as f:
        for i, g in enumerate(GRADES):
            f.write(json.dumps({"task": f"t{i}", "model": "m1", "score": g}) + "\n")
    out = tmp_path / "S.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "boot", "score", *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == {"good": "supported"}
    (a,) = doc["analyses"]
    assert a["exact"] == {"estimate": "2/5"}
    ref = bootstrap(
        (np.array(GRADES),), np.mean, n_resamples=2000, method="percentile",
        confidence_level=0.9, rng=np.random.Generator(np.random.PCG64(7)), vectorized=False,
    )  # fmt: skip
    assert math.isclose(a["lower"], ref.confidence_interval.low, rel_tol=1e-12)
    assert math.isclose(a["upper"], ref.confidence_interval.high, rel_tol=1e-12)
    md = out.with_suffix(".md").read_text()
    assert "estimate ≥ 0.4: met by 1 of 1: boot (0.4)" in md
    from prereg import outputs

    assert not list(outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc))
