"""A scenario's pairing (a registered latent correlation between the rows of one item) through
diagnose and simulate, against independent computations of the same Gaussian copula:

- the exact McNemar test's power and the paired t test's power, by a numpy Monte Carlo of
  bivariate normal latents, the McNemar P by its binomial formula (scipy.stats.binom, as
  statsmodels' mcnemar(exact=True) computes it) and the paired t by scipy.stats.ttest_rel;
- simulate's records: the share of items right in both arms against the bivariate normal CDF
  (scipy.stats.multivariate_normal), and the latencies' correlation between arms.
Agreement within 4 Monte Carlo SEs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT

STUDY = "paired"
N = 300
REPS = 40_000


def project(root: Path, edits=()) -> Path:
    text = (FIXTURES / "diagnose" / f"{STUDY}.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{STUDY}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return root


def bivariate(rng, rho: float, shape) -> tuple[np.ndarray, np.ndarray]:
    cov = [[1.0, rho], [rho, 1.0]]
    z = rng.multivariate_normal([0.0, 0.0], cov, size=shape)
    return z[..., 0], z[..., 1]


def reference(rho: float, seed: int) -> tuple[float, float]:
    """(McNemar power, paired t power) over REPS studies of 40 items."""
    rng = np.random.default_rng(seed)
    zn, zo = bivariate(rng, rho, (REPS, 40))
    new, old = zn < stats.norm.ppf(0.75), zo < stats.norm.ppf(0.55)
    b = (new & ~old).sum(axis=1)
    c = (~new & old).sum(axis=1)
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
    p = np.where(b + c == 0, 1.0, p)
    ln, lo = bivariate(rng, rho, (REPS, 40))
    t = stats.ttest_rel(1.8 + 0.5 * ln, 2.0 + 0.5 * lo, alternative="less", axis=1).pvalue
    return float(np.mean(p < 0.05)), float(np.mean(t < 0.05))


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> dict:
    root = project(tmp_path_factory.mktemp("paired"))
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "DIAGNOSE.json"
    args = ["--simulations", str(N), "--seed", "3", "--out", str(out), "--quiet"]
    assert main(["--project", str(root), STUDY, "diagnose", *args]) == 0
    return json.loads(out.read_text())


def _z(share: float, ref: float) -> float:
    se = math.sqrt(ref * (1 - ref) / N + ref * (1 - ref) / REPS)
    return abs(share - ref) / se


@pytest.mark.parametrize(
    ("scenario", "rho", "seed"), [("correlated", 0.6, 1), ("independent", 0.0, 2)]
)
def test_paired_tests_match_an_independent_simulation(doc, scenario, rho, seed):
    mcnemar, paired_t = reference(rho, seed)
    cond = next(c for c in doc["conditions"] if c["scenario"] == scenario)
    got = {
        h["id"]: next(v["share"] for v in h["verdicts"] if v["verdict"] == "supported")
        for h in cond["hypotheses"]
    }
    assert _z(got["differs"], mcnemar) < 4, (got, mcnemar)
    assert _z(got["faster"], paired_t) < 4, (got, paired_t)
    row = next(a for a in cond["analyses"] if a["id"] == "accuracy-mcnemar")
    assert row["method"] == "mcnemar-exact" and row["withP"] == N


def test_the_registered_correlation_raises_paired_power(doc):
    """The same margins with and without the correlation: pairing helps both paired tests
    (the references differ by far more than the Monte Carlo error)."""
    shares = {
        c["scenario"]: {h["id"]: h["verdicts"][0]["share"] for h in c["hypotheses"]}
        for c in doc["conditions"]
    }
    assert shares["correlated"]["faster"] > shares["independent"]["faster"] + 0.15
    assert shares["correlated"]["differs"] > shares["independent"]["differs"]


def test_simulate_draws_the_arms_of_an_item_together(tmp_path):
    root = project(tmp_path)
    assert main(["--project", str(root), "compile"]) == 0
    items = tmp_path / "items.jsonl"
    assert main(["--project", str(root), STUDY, "items", "--out", str(items), "--quiet"]) == 0
    item_of = {
        r["rowId"]: (r["itemId"], r["system"])
        for r in map(json.loads, items.read_text().splitlines())
    }
    both, lat_new, lat_old = [], [], []
    for seed in range(30):
        out = tmp_path / f"obs-{seed}.jsonl"
        args = ["simulate", "--items", str(items), "--scenario", "correlated", "--seed", str(seed)]
        assert main(["--project", str(root), STUDY, *args, "--out", str(out), "--quiet"]) == 0
        by_item: dict[str, dict] = {}
        for r in map(json.loads, out.read_text().splitlines()):
            item, system = item_of[r["rowId"]]
            by_item.setdefault(item, {})[system] = r
        for pair in by_item.values():
            both.append(pair["new"]["ok"] and pair["old"]["ok"])
            lat_new.append(pair["new"]["latency"])
            lat_old.append(pair["old"]["latency"])
    n = len(both)
    assert n == 1200
    expected = stats.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]]).cdf(
        [stats.norm.ppf(0.75), stats.norm.ppf(0.55)]
    )
    assert abs(np.mean(both) - expected) < 4 * math.sqrt(expected * (1 - expected) / n)
    r = np.corrcoef(lat_new, lat_old)[0, 1]
    assert abs(r - 0.6) < 4 * (1 - 0.36) / math.sqrt(n)
    # nearer the copula's share than independence's, 0.75 * 0.55 (the midpoint is 2.8 binomial
    # SEs from each at n = 1,200)
    assert np.mean(both) > (expected + 0.75 * 0.55) / 2


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "pairing: {field: itemId, correlation: 0.6}",
            "pairing: {field: latency, correlation: 0.6}",
            "at /scenarios/0/pairing/field: scenario 'correlated' pairs rows by 'latency', which"
            " is not a field of the item manifest",
        ),
        (
            "pairing: {field: itemId, correlation: 0.6}",
            "pairing: {field: itemId, correlation: 1}",
            "at /scenarios/0/pairing/correlation: scenario 'correlated': correlation 1 is not in"
            " [0, 1)",
        ),
    ],
)
def test_compile_refuses_a_malformed_pairing(tmp_path, capsys, old, new, message):
    root = project(tmp_path, edits=[(old, new)])
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    assert message in err and "paired.yaml:" in err and "Traceback" not in err


def test_prereg_md_states_the_pairing(tmp_path):
    root = project(tmp_path)
    assert main(["--project", str(root), "compile"]) == 0
    md = (root / "generated" / STUDY / "PREREG.md").read_text()
    assert (
        "- `correlated`: the rows of one `itemId` are drawn together, latent correlation 0.6"
        " (outcome and each drawn number)."
    ) in md
    assert "`independent`: the rows" not in md
