"""Bias, RMSE and interval coverage of registered estimates under structured scenarios
(clusters, paired arms, raters per item, samples per problem).

Oracles, none of them the code under test:

- each method's estimand (prereg.diagnose.truths.ESTIMANDS) against the plug-in figure worked
  out here from the method's inputs (k1/n1 − k2/n2, a mean difference, a ratio, ...);
- the truth of pass@k against a numpy Monte Carlo of the registered latent (k samples of a
  problem, z = √ρ·w + √(1 − ρ)·e, one passing when z < Φ⁻¹(rate)) and of numpy's beta draws,
  and 1 − (1 − r)^k by hand;
- the truth of Fleiss' and Cohen's kappa and percent agreement against statsmodels and
  scikit-learn on a large simulated set of items (batches give the Monte Carlo SE);
- diagnose's bias, RMSE and coverage against an independent numpy re-simulation of the
  registered design, within a few combined Monte Carlo SEs.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from prereg.cli import main
from prereg.diagnose.truths import ESTIMANDS, agreement, pass_at_k

from .test_units_dgp import project


def diagnose(root, study: str, scenario: str, n: int, seed: int = 7) -> dict:
    out = root / f"d-{scenario}" / "DIAGNOSE.json"
    args = ["--project", str(root), study, "diagnose", "--quiet", "--scenario", scenario]
    assert main([*args, "--simulations", str(n), "--seed", str(seed), "--out", str(out)]) == 0
    return json.loads(out.read_text())["conditions"][0]


def z(a: float, b: float, se_a: float, se_b: float) -> float:
    return abs(a - b) / math.hypot(se_a, se_b)


# -- the estimand of each method ----------------------------------------------------------------

OPTIONS = {
    "level": 0.95,
    "alternative": "two-sided",
    "margin": 0,
    "haldane": "never",
    "correction": "none",
    "weighting": "equal",
    "reference": "t",
    "interval": "percentile",
    "resamples": 200,
    "seed": 1,
    "quantile_method": "linear",
    "permutations": 200,
    "lower": -0.5,
    "upper": 0.5,
    "alpha": 0.05,
    "enumeration": "random",
    "p_correction": "none",
    "two_sided": "absolute",
    "variance": "welch",
    "se": "wald",
    "null_proportion": 0.5,
}
SPECIAL = {
    "noninferiority-proportions": {"alternative": "greater"},
    "noninferiority-ratio-proportions": {"alternative": "greater", "margin": 0.9},
    "noninferiority-means": {"alternative": "greater"},
    "noninferiority-ratio-means": {"alternative": "greater", "margin": 0.9},
    "ratio-of-geometric-means": {"margin": 1},
    "equivalence-interval-proportions": {"interval": "wald"},
    "cluster-robust-mean": {"correction": "CR1"},
}


@pytest.mark.parametrize("name", sorted(ESTIMANDS))
def test_each_methods_estimate_is_its_registered_estimand(name):
    """The method's estimate on fixed inputs equals the plug-in estimand written here by hand:
    30/50 − 20/60 for a difference, (30/50)/(20/60) for a ratio, (30/20)/(20/40) for an odds
    ratio, a paired table's (n11 + n10)/N − (n11 + n01)/N, sample means, exp of the mean log
    difference, cluster means of equal clusters."""
    from prereg.stats import catalogue

    entry = catalogue.entries()[name]
    kind = ESTIMANDS[name]
    options = {k: {**OPTIONS, **SPECIAL.get(name, {})}.get(k) for k in entry.options}
    f = entry.load()
    rng = np.random.default_rng(1)
    x, y = rng.normal(4.0, 1, 30), rng.normal(3.5, 1, 25)
    y30 = rng.normal(3.5, 1, 30)
    if entry.shape == "binomial":
        got, want = f(30, 50, **options), 30 / 50
    elif entry.shape == "two-binomial":
        got = f(30, 50, 20, 60, **options)
        want = {"p-diff": 30 / 50 - 20 / 60, "p-ratio": 1.8, "odds-ratio": 3.0}[kind]
    elif entry.shape == "paired-binary":
        got, want = f(20, 15, 5, 10, **options), 35 / 50 - 25 / 50
    elif entry.shape == "sample":
        got, want = f(x, **options), x.mean()
    elif entry.shape == "two-samples":
        got = f(x, y, **options)
        want = (
            math.exp(np.log(x).mean() - np.log(y).mean())
            if kind == "gm-ratio"
            else (x.mean() - y.mean())
        )
    elif entry.shape == "paired-samples":
        got, want = f(x, y30, **options), x.mean() - y30.mean()
    else:
        assert entry.shape == "clustered-sample"
        clusters = np.repeat(np.arange(11), 5).astype(object)
        arms = np.array(["a"] * 30 + ["b"] * 25, dtype=object)
        got = f(np.concatenate([x, y]), clusters, arms, **{**options, "arms": ("a", "b")})
        want = x.mean() - y.mean()
    assert float(got.estimate) == pytest.approx(want, rel=1e-12, abs=1e-12)


# -- pass@k under the registered per-problem distributions --------------------------------------


def test_pass_at_k_without_clusters_is_the_binomial_chance_by_hand():
    assert pass_at_k(0.3, 5) == pytest.approx(1 - 0.7**5, abs=1e-15)  # 0.83193
    assert pass_at_k(0.3, 1, icc=0.4) == pytest.approx(0.3, abs=1e-9)  # pass@1 is the rate


@pytest.mark.parametrize(("rate", "icc", "k"), [(0.24, 0.4, 5), (0.3, 0.1, 3), (0.7, 0.6, 10)])
def test_pass_at_k_truth_under_probit_normal_problems_matches_the_latent_drawn_here(rate, icc, k):
    """P(some of k samples passes) with one latent normal per problem: 400,000 problems."""
    from statistics import NormalDist

    rng = np.random.default_rng(17)
    q = NormalDist().inv_cdf(rate)
    hits = np.zeros(0)
    for _ in range(4):  # 4 batches of 100,000 problems
        w = rng.standard_normal((100_000, 1))
        zs = math.sqrt(icc) * w + math.sqrt(1 - icc) * rng.standard_normal((100_000, k))
        hits = np.concatenate([hits, (zs < q).any(axis=1).astype(float)])
    se = hits.std() / math.sqrt(hits.size)
    assert abs(pass_at_k(rate, k, icc=icc) - hits.mean()) <= 4 * se


@pytest.mark.parametrize(("rate", "icc", "k"), [(0.3, 0.2, 5), (0.6, 0.05, 2)])
def test_pass_at_k_truth_under_beta_problems_matches_numpy_beta_draws(rate, icc, k):
    """Beta(a, b) with a/(a + b) = rate and 1/(a + b + 1) = icc: a = rate·(1/icc − 1)."""
    rng = np.random.default_rng(3)
    s = 1 / icc - 1
    p = rng.beta(rate * s, (1 - rate) * s, 1_000_000)
    values = 1 - (1 - p) ** k
    se = values.std() / math.sqrt(values.size)
    assert abs(pass_at_k(rate, k, icc=icc, beta=True) - values.mean()) <= 4 * se


# -- agreement of raters under a confusion structure --------------------------------------------


def accuracy_matrix(a: float, k: int = 3) -> np.ndarray:
    m = np.full((k, k), (1 - a) / (k - 1))
    np.fill_diagonal(m, a)
    return m


def draw_labels(rng, prevalence, matrices, items: int) -> np.ndarray:
    truth = rng.choice(len(prevalence), size=items, p=prevalence)
    out = np.empty((items, len(matrices)), dtype=int)
    for r, m in enumerate(matrices):
        cum = np.cumsum(m[truth], axis=1)
        out[:, r] = (rng.random(items)[:, None] >= cum).sum(axis=1).clip(max=len(prevalence) - 1)
    return out


def test_fleiss_kappa_truth_matches_statsmodels_over_many_items():
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    prevalence = [0.3, 0.3, 0.4]
    cat = np.array([[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]])
    matrices = [accuracy_matrix(0.9), accuracy_matrix(0.9), cat]
    rng = np.random.default_rng(23)
    kappas = []
    for _ in range(20):  # 20 batches of 20,000 items
        table, _ = aggregate_raters(draw_labels(rng, prevalence, matrices, 20_000), n_cat=3)
        kappas.append(fleiss_kappa(table, method="fleiss"))
    se = np.std(kappas, ddof=1) / math.sqrt(len(kappas))
    truth = agreement("fleiss-kappa", prevalence, matrices)
    assert abs(truth - np.mean(kappas)) <= 4 * se
    assert 0.5 < truth < 0.9


def test_cohens_kappa_and_percent_agreement_truths_match_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    prevalence = [0.2, 0.5, 0.3]
    matrices = [accuracy_matrix(0.85), accuracy_matrix(0.7)]
    rng = np.random.default_rng(29)
    kappas, agreed = [], []
    for _ in range(20):
        labels = draw_labels(rng, prevalence, matrices, 20_000)
        kappas.append(cohen_kappa_score(labels[:, 0], labels[:, 1]))
        agreed.append(float((labels[:, 0] == labels[:, 1]).mean()))
    for method, got in (("cohens-kappa", kappas), ("percent-agreement", agreed)):
        se = np.std(got, ddof=1) / math.sqrt(len(got))
        assert abs(agreement(method, prevalence, matrices) - np.mean(got)) <= 4 * se
    # by hand: agreement 0.85·0.7 + 2·(0.075·0.15) = 0.6175 whatever the prevalence
    assert agreement("percent-agreement", prevalence, matrices) == pytest.approx(0.6175)


# -- diagnose's figures against independent re-simulations --------------------------------------


def analysis(cond: dict, aid: str) -> dict:
    return next(a for a in cond["analyses"] if a["id"] == aid)


def rmse_and_se(estimates: np.ndarray, truth: float) -> tuple[float, float]:
    """RMSE and its MC SE (Morris, White and Crowther 2019: the MSE's SE, by the delta
    method) of an independent simulation."""
    sq = (estimates - truth) ** 2
    mse = sq.mean()
    return math.sqrt(mse), sq.std(ddof=1) / math.sqrt(sq.size) / (2 * math.sqrt(mse))


def test_pass_at_k_bias_and_rmse_match_an_independent_simulation(tmp_path):
    """samples-units as registered (rates 0.3 nucleus, 0.2 greedy-temp; 20 problems × 12
    samples; latent ICC 0.4 shared by a problem's two decodings; 232 of 240 samples observed; a
    problem analysed with 10 valid samples).  The truth is the latent Monte Carlo's pass@5; the
    simulation's estimates come from math.comb's unbiased formula."""
    from statistics import NormalDist

    root = project(tmp_path, "samples-units")
    cond = diagnose(root, "samples-units", "nucleus-better", 400)
    rng = np.random.default_rng(41)
    reps, rho = 6000, 0.4
    table = np.full((13, 13), np.nan)
    for n_ in range(5, 13):
        for c_ in range(n_ + 1):
            table[n_, c_] = 1 - math.comb(n_ - c_, 5) / math.comb(n_, 5)
    problem = np.repeat(np.arange(20), 12)
    flat = 20 * np.arange(reps)[:, None] + problem[None, :]
    w = rng.standard_normal((reps, 20))
    for decoding, rate in (("greedy-temp", 0.2), ("nucleus", 0.3)):
        q = NormalDist().inv_cdf(rate)
        zs = math.sqrt(rho) * w[:, problem] + math.sqrt(1 - rho) * rng.standard_normal((reps, 240))
        seen = np.zeros((reps, 240), dtype=bool)
        np.put_along_axis(seen, rng.random((reps, 240)).argsort(axis=1)[:, :232], True, axis=1)
        n = np.bincount(flat[seen], minlength=20 * reps).reshape(reps, 20)
        c = np.bincount(flat[seen & (zs < q)], minlength=20 * reps).reshape(reps, 20)
        ok = n >= 10
        estimates = np.where(ok, table[n, np.minimum(c, n)], 0.0).sum(axis=1) / ok.sum(axis=1)
        # the truth by the latent itself: 5 samples of 400,000 problems
        w5 = rng.standard_normal((400_000, 1))
        z5 = math.sqrt(rho) * w5 + math.sqrt(1 - rho) * rng.standard_normal((400_000, 5))
        truth = float((z5 < q).any(axis=1).mean())
        truth_se = math.sqrt(truth * (1 - truth) / 400_000)
        got = analysis(cond, f"pass-at-5-{decoding}")
        assert abs(got["truth"] - truth) <= 4 * truth_se
        bias = estimates.mean() - truth
        bias_se = estimates.std(ddof=1) / math.sqrt(reps)
        assert z(got["bias"], bias, got["biasMcSe"], math.hypot(bias_se, truth_se)) <= 4
        rmse, rmse_se = rmse_and_se(estimates, got["truth"])
        assert z(got["rmse"], rmse, got["rmseMcSe"], rmse_se) <= 4
        assert got["coverage"] is None  # pass@k gives no interval


def test_fleiss_kappa_bias_and_rmse_match_an_independent_simulation(tmp_path):
    """raters-units as registered: 15 items per domain, ann and bob right 90%, cat 75%; 44 of
    each domain's 45 labels observed; kappa over the 28 complete items.  The truth: statsmodels'
    kappa of 400,000 items; the estimates: Fleiss' formula on each replicate."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    root = project(tmp_path, "raters-units")
    cond = diagnose(root, "raters-units", "good-raters", 400)
    prevalence = [0.3, 0.3, 0.4]
    matrices = [accuracy_matrix(0.9), accuracy_matrix(0.9), accuracy_matrix(0.75)]
    rng = np.random.default_rng(43)
    big = []
    for _ in range(20):
        table, _ = aggregate_raters(draw_labels(rng, prevalence, matrices, 20_000), n_cat=3)
        big.append(fleiss_kappa(table, method="fleiss"))
    truth, truth_se = float(np.mean(big)), np.std(big, ddof=1) / math.sqrt(20)
    got = analysis(cond, "fleiss")
    assert abs(got["truth"] - truth) <= 4 * truth_se
    reps = 6000
    labels = np.stack([draw_labels(rng, prevalence, matrices, 28) for _ in range(reps)])
    counts = (labels[..., None] == np.arange(3)).sum(axis=2)  # (reps, 28 items, 3)
    share_cat = counts.sum(axis=1) / (28 * 3)
    observed = ((counts * (counts - 1)).sum(axis=2) / 6).mean(axis=1)
    chance = (share_cat**2).sum(axis=1)
    kappas = (observed - chance) / (1 - chance)
    bias = kappas.mean() - truth
    assert (
        z(got["bias"], bias, got["biasMcSe"], math.hypot(kappas.std() / reps**0.5, truth_se)) <= 4
    )
    rmse, rmse_se = rmse_and_se(kappas, got["truth"])
    assert z(got["rmse"], rmse, got["rmseMcSe"], rmse_se) <= 4


def test_paired_contrast_under_clusters_truth_bias_rmse_and_coverage(tmp_path):
    """repo-pairs: 40 repositories of 6 items, the same items under both arms (latent ICC 0.1
    per repository, 0.4 per item); 235 of each arm's 240 rows observed; a repository counts with
    5 complete pairs.  The truth is the difference of the registered rates (0 and −0.08 by
    hand); the estimates and Newcombe's paired intervals are re-simulated here (pairs of
    included repositories; the interval written below from the paper)."""
    from statistics import NormalDist

    root = project(tmp_path, "repo-pairs")
    for scenario, tuned in (("equal-arms", 0.7), ("tuned-worse", 0.62)):
        cond = diagnose(root, "repo-pairs", scenario, 400)
        got = cond["contrasts"][0]
        assert got["truth"] == pytest.approx(tuned - 0.7, abs=5e-7)
        rng = np.random.default_rng(47)
        reps = 6000
        repo = np.repeat(np.arange(40), 6)
        shared = math.sqrt(0.1) * rng.standard_normal((reps, 40))[:, repo] + math.sqrt(
            0.4
        ) * rng.standard_normal((reps, 240))
        right, seen = {}, {}
        for arm, rate in (("tuned", tuned), ("base", 0.7)):
            zs = shared + math.sqrt(0.5) * rng.standard_normal((reps, 240))
            right[arm] = zs < NormalDist().inv_cdf(rate)
            s = np.zeros((reps, 240), dtype=bool)
            np.put_along_axis(s, rng.random((reps, 240)).argsort(axis=1)[:, :235], True, axis=1)
            seen[arm] = s
        pair = seen["tuned"] & seen["base"]
        per_repo = pair.reshape(reps, 40, 6).sum(axis=2)
        kept = np.repeat(per_repo >= 5, 6, axis=1) & pair
        n = kept.sum(axis=1)
        est = ((right["tuned"] & kept).sum(axis=1) - (right["base"] & kept).sum(axis=1)) / n
        truth = tuned - 0.7
        bias_se = est.std(ddof=1) / math.sqrt(reps)
        assert z(got["bias"], est.mean() - truth, got["biasMcSe"], bias_se) <= 4
        rmse, rmse_se = rmse_and_se(est, truth)
        assert z(got["rmse"], rmse, got["rmseMcSe"], rmse_se) <= 4
        t, b = right["tuned"] & kept, right["base"] & kept
        table = [(t & b).sum(1), (t & ~b).sum(1), (~t & b & kept).sum(1), (~t & ~b & kept).sum(1)]
        lo, hi = newcombe_paired(*table)
        p = float(((lo <= truth) & (truth <= hi)).mean())
        cov = got["coverage"]
        assert z(cov["share"], p, cov["mcSe"], math.sqrt(p * (1 - p) / reps)) <= 4


def newcombe_paired(a, b, c, d, level: float = 0.95):
    """Newcombe (1998, Stat Med 17:2635), method 10, over arrays of paired tables: Wilson
    bounds of each margin combined with φ, whose ad − bc is first reduced by n/2 when
    positive (the paper's correction)."""
    from statistics import NormalDist

    zq = NormalDist().inv_cdf(0.5 + level / 2)
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d

    def wilson(k):
        centre = (k + zq**2 / 2) / (n + zq**2)
        half = zq * np.sqrt(k * (n - k) / n + zq**2 / 4) / (n + zq**2)
        return centre - half, centre + half

    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b), wilson(a + c)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    num = a * d - b * c
    num = np.where(num > 0, np.maximum(num - n / 2, 0.0), num)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(margins > 0, num / np.sqrt(margins), 0.0)
    diff = p1 - p2
    low = diff - np.sqrt(
        np.maximum(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    high = diff + np.sqrt(
        np.maximum(0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    )
    return low, high


def test_cluster_t_coverage_matches_scipy_intervals_on_an_independent_simulation(tmp_path):
    """cluster-arms (new-faster): repositories of 4..16 files, log seconds with ICC 0.3; a
    repository counts with 5 timed files; the estimate is the difference of the arms' means of
    repository means (equal weighting).  Truth: e^(0.3 + 0.125) − e^(0.5 + 0.125) by hand;
    coverage: scipy's Student t interval of each replicate's repository means."""
    from scipy.stats import ttest_ind

    root = project(tmp_path, "cluster-arms")
    cond = diagnose(root, "cluster-arms", "new-faster", 400)
    got = analysis(cond, "new-vs-old")
    truth = math.exp(0.3 + 0.125) - math.exp(0.5 + 0.125)
    assert got["truth"] == pytest.approx(truth, abs=5e-7)  # 6 decimals
    rng = np.random.default_rng(53)
    reps = 2000
    means = {}
    for arm, mu in (("new", 0.3), ("old", 0.5)):
        means[arm] = []
        for _ in range(reps):
            sizes = rng.integers(4, 17, 60)
            ends = np.cumsum(sizes)
            k = int(np.searchsorted(ends, 200)) + 1
            sizes = sizes[:k].copy()
            sizes[-1] -= int(ends[k - 1]) - 200
            code = np.repeat(np.arange(k), sizes)
            zs = math.sqrt(0.3) * rng.standard_normal(k)[code] + math.sqrt(
                0.7
            ) * rng.standard_normal(200)
            x = np.round(np.exp(mu + 0.5 * zs), 3)
            m = np.bincount(code, weights=x) / sizes
            means[arm].append(m[sizes >= 5])
    est = np.array([n.mean() - o.mean() for n, o in zip(means["new"], means["old"], strict=True)])
    # scipy's interval of every replicate, one call per pair of arm sizes (rows of a 2-d array:
    # a call per replicate cost 1.6 ms, three quarters of this test)
    by_sizes: dict[tuple[int, int], list[int]] = {}
    for i, (new, old) in enumerate(zip(means["new"], means["old"], strict=True)):
        by_sizes.setdefault((new.size, old.size), []).append(i)
    covered = 0
    for idx in by_sizes.values():
        new = np.stack([means["new"][i] for i in idx])
        old = np.stack([means["old"][i] for i in idx])
        ci = ttest_ind(new, old, axis=1, equal_var=True).confidence_interval(0.95)
        covered += int(np.sum((ci.low <= truth) & (truth <= ci.high)))
    assert z(got["bias"], est.mean() - truth, got["biasMcSe"], est.std() / reps**0.5) <= 4
    rmse, rmse_se = rmse_and_se(est, truth)
    assert z(got["rmse"], rmse, got["rmseMcSe"], rmse_se) <= 4
    p = covered / reps
    cov = got["coverage"]
    assert z(cov["share"], p, cov["mcSe"], math.sqrt(p * (1 - p) / reps)) <= 4


def test_a_proportion_estimate_on_the_row_path_has_the_scenarios_truth(tmp_path):
    """A plain proportion over a clustered scenario reports the cell rate as its truth (it
    was null on the row path)."""

    def estimate(spec):
        spec["hypotheses"][0]["estimates"] = [
            {
                "id": "base-accuracy",
                "metric": "accuracy",
                "of": {"where": [{"factor": "arm", "levels": ["base"]}]},
                "interval": "wilson",
                "level": 0.95,
            }
        ]

    root = project(tmp_path, "repo-pairs", estimate)
    cond = diagnose(root, "repo-pairs", "tuned-worse", 100)
    got = cond["estimates"][0]
    assert got["truth"] == pytest.approx(0.7, abs=5e-7)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]


def test_pass_at_k_t_has_pass_at_k_truth_and_the_t_intervals_coverage(tmp_path):
    """samples-units with its pass@5 registered as pass-at-k-t (two-sided 95%): the truth is
    pass@k's (the latent Monte Carlo's pass@5 of nucleus, 400,000 problems), and the coverage
    diagnose reports is the share of re-simulated studies (numpy, as above) whose t interval
    over the problems (scipy's one-sample t of the per-problem values) holds that truth."""
    from statistics import NormalDist

    from scipy import stats

    def edit(spec):
        (a,) = spec["hypotheses"][0]["analyses"]
        a["method"] = "pass-at-k-t"
        a["options"] = {"k": 5, "alternative": "two-sided", "level": 0.95, "margin": 0}

    root = project(tmp_path, "samples-units", edit)
    cond = diagnose(root, "samples-units", "nucleus-better", 400)
    rng = np.random.default_rng(47)
    reps, rho, q = 3000, 0.4, NormalDist().inv_cdf(0.3)
    w5 = rng.standard_normal((400_000, 1))
    z5 = math.sqrt(rho) * w5 + math.sqrt(1 - rho) * rng.standard_normal((400_000, 5))
    truth = float((z5 < q).any(axis=1).mean())
    truth_se = math.sqrt(truth * (1 - truth) / 400_000)
    got = analysis(cond, "pass-at-5-nucleus")
    assert abs(got["truth"] - truth) <= 4 * truth_se
    table = np.full((13, 13), np.nan)
    for n_ in range(5, 13):
        for c_ in range(n_ + 1):
            table[n_, c_] = 1 - math.comb(n_ - c_, 5) / math.comb(n_, 5)
    problem = np.repeat(np.arange(20), 12)
    flat = 20 * np.arange(reps)[:, None] + problem[None, :]
    zs = math.sqrt(rho) * rng.standard_normal((reps, 20))[:, problem]
    zs += math.sqrt(1 - rho) * rng.standard_normal((reps, 240))
    seen = np.zeros((reps, 240), dtype=bool)
    np.put_along_axis(seen, rng.random((reps, 240)).argsort(axis=1)[:, :232], True, axis=1)
    n = np.bincount(flat[seen], minlength=20 * reps).reshape(reps, 20)
    c = np.bincount(flat[seen & (zs < q)], minlength=20 * reps).reshape(reps, 20)
    held = []
    for i in range(reps):
        ok = n[i] >= 10  # as above: a problem is analysed with 10 valid samples
        x = table[n[i][ok], c[i][ok]]
        if x.std() == 0:
            continue  # no spread: no interval (diagnose leaves such studies out as well)
        ci = stats.ttest_1samp(x, 0).confidence_interval(0.95)
        held.append(ci.low <= got["truth"] <= ci.high)
    cover = float(np.mean(held))
    cover_se = math.sqrt(cover * (1 - cover) / len(held))
    assert got["coverage"]["count"] <= got["defined"] == 400
    assert z(got["coverage"]["share"], cover, got["coverage"]["mcSe"], cover_se) <= 4


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_pass_at_k_t_one_sided_coverage(tmp_path, alternative):
    """As above with a one-sided 95% interval (one bound: the other side is open): the
    coverage is the share of re-simulated studies whose one bound (scipy's one-sided t
    interval over the problems) lies on the truth's side of it. Diagnose used to report no
    coverage, the open bound being missing."""
    from statistics import NormalDist

    from scipy import stats

    def edit(spec):
        (a,) = spec["hypotheses"][0]["analyses"]
        a["method"] = "pass-at-k-t"
        a["options"] = {"k": 5, "alternative": alternative, "level": 0.95, "margin": 0}

    root = project(tmp_path, "samples-units", edit)
    cond = diagnose(root, "samples-units", "nucleus-better", 400)
    rng = np.random.default_rng(47)
    reps, rho, q = 3000, 0.4, NormalDist().inv_cdf(0.3)
    w5 = rng.standard_normal((400_000, 1))
    z5 = math.sqrt(rho) * w5 + math.sqrt(1 - rho) * rng.standard_normal((400_000, 5))
    truth = float((z5 < q).any(axis=1).mean())
    truth_se = math.sqrt(truth * (1 - truth) / 400_000)
    got = analysis(cond, "pass-at-5-nucleus")
    assert abs(got["truth"] - truth) <= 4 * truth_se
    table = np.full((13, 13), np.nan)
    for n_ in range(5, 13):
        for c_ in range(n_ + 1):
            table[n_, c_] = 1 - math.comb(n_ - c_, 5) / math.comb(n_, 5)
    problem = np.repeat(np.arange(20), 12)
    flat = 20 * np.arange(reps)[:, None] + problem[None, :]
    zs = math.sqrt(rho) * rng.standard_normal((reps, 20))[:, problem]
    zs += math.sqrt(1 - rho) * rng.standard_normal((reps, 240))
    seen = np.zeros((reps, 240), dtype=bool)
    np.put_along_axis(seen, rng.random((reps, 240)).argsort(axis=1)[:, :232], True, axis=1)
    n = np.bincount(flat[seen], minlength=20 * reps).reshape(reps, 20)
    c = np.bincount(flat[seen & (zs < q)], minlength=20 * reps).reshape(reps, 20)
    held = []
    for i in range(reps):
        ok = n[i] >= 10  # as above: a problem is analysed with 10 valid samples
        x = table[n[i][ok], c[i][ok]]
        if x.std() == 0:
            continue  # no spread: no interval (diagnose leaves such studies out as well)
        ci = stats.ttest_1samp(x, 0, alternative=alternative).confidence_interval(0.95)
        held.append(ci.low <= got["truth"] <= ci.high)  # one of them infinite
    cover = float(np.mean(held))
    cover_se = math.sqrt(cover * (1 - cover) / len(held))
    assert got["coverage"]["count"] <= got["defined"] == 400
    assert z(got["coverage"]["share"], cover, got["coverage"]["mcSe"], cover_se) <= 4
