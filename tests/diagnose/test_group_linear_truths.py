"""diagnose's truth for the methods whose estimate is a linear function of the groups' figures
(tests/fixtures/analyses/interaction.yaml): a linear contrast of proportions is Σ c_i p_i over
the scenario's rates, by hand 0.8 − 0.6 − 0.5 + 0.5 = 0.2 for the Python interaction and
0.2 − 0.2 = 0 for the three-way one (the rates do not depend on the language); a contrast of
means is Σ c_i μ_i, each cell's mean grade 0.25 + 0.5 p (uniform on [0.5, 1] when right, on
[0, 0.5] when wrong), so 0.5 · 0.2 = 0.1. (Cochran–Armitage's slope is checked in
tests/decide/test_newcomer_designs.py.) Each mean estimate lies within 4 Monte Carlo SEs."""

from __future__ import annotations

import json

import pytest

from prereg.cli import main
from tests.conftest import FIXTURES


def test_linear_contrast_truths(tmp_path):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "analyses" / "interaction.yaml").read_text()
    (tmp_path / "spec" / "studies" / "interaction.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "interaction", "diagnose", "--quiet"]
    assert main([*args, "--simulations", "200", "--seed", "4", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    got = {a["id"]: a for a in cond["analyses"]}
    for aid, truth in (("ix", 0.2), ("ix3", 0.0), ("ixm", 0.1)):
        assert got[aid]["truth"] == pytest.approx(truth, abs=5e-7), aid
        assert abs(got[aid]["bias"]) <= 4 * got[aid]["biasMcSe"], aid
        assert got[aid]["coverage"] is not None, aid
