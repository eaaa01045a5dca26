"""The truths diagnose gives the correlation methods (runtime/prereg/diagnose/truths.py,
correlation) under a scenario whose rows of one item share a latent: the closed forms checked
against large numpy draws of the same Gaussian copula (scipy's spearmanr, kendalltau, pearsonr),
and the newcomer's study (tests/fixtures/newcomer/metriccorr.yaml) diagnosed: the mean estimate
within Monte Carlo error of its truth (Spearman's of its known finite-n expectation, Moran 1948),
Williams' difference 0 when the three sources correlate alike, and the reasons given where no
truth is worked out."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from prereg.diagnose.truths import NoTruth, correlation
from tests.conftest import FIXTURES

SPEC = FIXTURES / "newcomer" / "metriccorr.yaml"
NORMAL = {"distribution": "normal", "mean": 3, "sd": 1}
LOGNORMAL = {"distribution": "lognormal", "mean": 0, "sd": 0.8}
LOGNORMAL2 = {"distribution": "lognormal", "mean": 1, "sd": 0.5}
UNIFORM = {"distribution": "uniform", "low": 0, "high": 1}


def _copula(rho, n=400_000, seed=7):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=n)
    za = math.sqrt(rho) * w + math.sqrt(1 - rho) * rng.normal(size=n)
    zb = math.sqrt(rho) * w + math.sqrt(1 - rho) * rng.normal(size=n)
    return za, zb


def _draw(entry, z):
    if entry["distribution"] == "normal":
        return entry["mean"] + entry["sd"] * z
    if entry["distribution"] == "lognormal":
        return np.exp(entry["mean"] + entry["sd"] * z)
    return entry["low"] + (entry["high"] - entry["low"]) * stats.norm.cdf(z)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (NORMAL, NORMAL),
        (LOGNORMAL, LOGNORMAL2),
        (UNIFORM, UNIFORM),
        (NORMAL, UNIFORM),
        (UNIFORM, NORMAL),
    ],
)
def test_the_closed_forms_match_large_draws(a, b):
    rho = 0.6
    za, zb = _copula(rho)
    x, y = _draw(a, za), _draw(b, zb)
    assert correlation("pearson", a, b, rho) == pytest.approx(
        stats.pearsonr(x, y).statistic, abs=0.006
    )
    assert correlation("spearman", a, b, rho) == pytest.approx(
        stats.spearmanr(x, y).statistic, abs=0.005
    )
    assert correlation("kendall", a, b, rho) == pytest.approx(
        stats.kendalltau(x[:50_000], y[:50_000]).statistic, abs=0.01
    )


@pytest.mark.parametrize(
    ("a", "b", "kind", "words"),
    [
        (NORMAL, LOGNORMAL, "pearson", "of a normal and a lognormal number is not worked out"),
        ({**NORMAL, "decimals": 0}, NORMAL, "spearman", "rounded (decimals)"),
        ({**NORMAL, "low": 1, "high": 5}, NORMAL, "kendall", "clipped (low/high)"),
        ({**NORMAL, "sd": 0}, NORMAL, "pearson", "do not vary (sd 0)"),
    ],
)
def test_no_truth_where_the_law_is_not_modelled(a, b, kind, words):
    with pytest.raises(NoTruth, match=words.replace("(", r"\(").replace(")", r"\)")):
        correlation(kind, a, b, 0.5)


def _diagnose(tmp_path, text, sims=200):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "metriccorr.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "metriccorr", "diagnose", "--quiet"]
    assert main([*args, "--simulations", str(sims), "--seed", "11", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return cond, (tmp_path / "DIAGNOSE.md").read_text()


def test_diagnose_gives_each_correlation_its_truth(tmp_path):
    cond, _ = _diagnose(tmp_path, SPEC.read_text())
    got = {a["id"]: a for a in cond["analyses"]}
    rho, n = 0.7, 40
    assert got["r-comet"]["truth"] == pytest.approx(rho, abs=1e-6)
    assert got["rho-comet"]["truth"] == pytest.approx(6 / math.pi * math.asin(rho / 2), abs=1e-6)
    assert got["tau-comet"]["truth"] == pytest.approx(2 / math.pi * math.asin(rho), abs=1e-6)
    assert got["williams"]["truth"] == 0
    for aid in ("r-comet", "tau-comet", "williams"):
        a = got[aid]
        assert abs(a["bias"]) < 4 * a["biasMcSe"] + 0.01, aid
    # Spearman's rho is biased at n = 40: its expectation (Moran 1948) is
    # 6/(π(n + 1))·(arcsin ρ + (n − 2)·arcsin(ρ/2)), which the mean estimate sits near
    moran = 6 / (math.pi * (n + 1)) * (math.asin(rho) + (n - 2) * math.asin(rho / 2))
    a = got["rho-comet"]
    assert abs(a["meanEstimate"] - moran) < 4 * a["meanEstimateMcSe"]
    # the two-sided 95% intervals cover about 95% of the time (a wide band: 200 studies)
    for aid in ("r-comet", "tau-comet"):
        assert 0.88 <= got[aid]["coverage"]["share"] <= 1.0, aid


def test_diagnose_says_why_a_rounded_score_has_no_truth(tmp_path):
    text = SPEC.read_text().replace(
        "{field: score, distribution: normal, mean: 3, sd: 1}",
        "{field: score, distribution: normal, mean: 3, sd: 1, decimals: 0}",
    )
    assert text != SPEC.read_text()
    cond, md = _diagnose(tmp_path, text, sims=20)
    got = {a["id"]: a for a in cond["analyses"]}
    assert got["rho-comet"].get("truth") is None
    assert "rounded (decimals)" in " ".join(md.split())
