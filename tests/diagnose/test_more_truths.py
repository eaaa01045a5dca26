"""The truths of the intraclass correlation, Krippendorff's alpha over ordered labels, majority
vote and the design effect, and the reason diagnose gives where a truth is not defined.

Oracles, none of them the code under test:

- each estimator written here from its published formula (the Shrout & Fleiss two-way ANOVA,
  checked on their Table 2 example; Krippendorff's coincidence matrix with δ², checked on the
  worked example of Krippendorff 2011), run on large numpy simulations of the registered data
  (20 batches: the batches give the Monte Carlo SE), |z| ≤ 2.6;
- majority vote: numpy draws of the samples, counted with collections.Counter; the ICC of a
  drawn number and the expected cluster size: numpy draws of the latent and of the missing rows;
- diagnose's bias, RMSE and interval coverage against an independent re-simulation of the
  registered study written here (numpy, scipy.stats.f for the ICC's interval).
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from prereg.diagnose.truths import (
    NoTruth,
    binary_vote,
    design_effect,
    expected_square_sizes,
    icc,
    krippendorff,
    majority_vote,
    pass_at_k_nested,
    thinned_square,
    value_icc,
)

from .test_structured_truths import accuracy_matrix, analysis, diagnose, draw_labels, rmse_and_se
from .test_units_dgp import project

Z = 2.6


def within(truth: float, values: list[float]) -> None:
    mean = float(np.mean(values))
    se = float(np.std(values, ddof=1)) / math.sqrt(len(values))
    assert abs(truth - mean) <= Z * se, (truth, mean, se)


# -- the intraclass correlation ----------------------------------------------------------------


def shrout_fleiss(x: np.ndarray, form: str) -> float:
    """ICC of an n × k table from the two-way ANOVA's mean squares (Shrout & Fleiss 1979)."""
    n, k = x.shape
    grand = x.mean()
    rows, cols = x.mean(axis=1), x.mean(axis=0)
    bms = k * ((rows - grand) ** 2).sum() / (n - 1)
    wms = ((x - rows[:, None]) ** 2).sum() / (n * (k - 1))
    jms = n * ((cols - grand) ** 2).sum() / (k - 1)
    ems = ((x - rows[:, None] - cols[None, :] + grand) ** 2).sum() / ((n - 1) * (k - 1))
    return {
        "icc-1-1": (bms - wms) / (bms + (k - 1) * wms),
        "icc-2-1": (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n),
        "icc-3-1": (bms - ems) / (bms + (k - 1) * ems),
        "icc-1-k": (bms - wms) / bms,
        "icc-2-k": (bms - ems) / (bms + (jms - ems) / n),
        "icc-3-k": (bms - ems) / bms,
    }[form]


FORMS = ("icc-1-1", "icc-2-1", "icc-3-1", "icc-1-k", "icc-2-k", "icc-3-k")


def test_the_icc_oracle_reproduces_shrout_and_fleiss_table_4():
    """Shrout & Fleiss (1979), Table 2 (6 targets × 4 judges) and Table 4's values."""
    x = np.array(
        [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
        dtype=float,
    )
    published = dict(zip(FORMS, (0.17, 0.29, 0.71, 0.44, 0.62, 0.91), strict=True))
    for form in FORMS:
        assert round(shrout_fleiss(x, form), 2) == published[form]


# three raters of a 0..3 scale: one lenient (labels shifted up), so the raters' means differ
LENIENT = np.array(
    [[0.5, 0.4, 0.1, 0.0], [0.0, 0.5, 0.4, 0.1], [0.0, 0.0, 0.6, 0.4], [0.0, 0.0, 0.1, 0.9]]
)
PREVALENCE = [0.25, 0.35, 0.25, 0.15]
MATRICES = [accuracy_matrix(0.8, 4), accuracy_matrix(0.6, 4), LENIENT]


@pytest.mark.parametrize("form", FORMS)
def test_icc_truth_matches_the_anova_over_many_items(form):
    rng = np.random.default_rng(3)
    got = [
        shrout_fleiss(draw_labels(rng, PREVALENCE, MATRICES, 20_000).astype(float), form)
        for _ in range(20)
    ]
    within(icc(form, PREVALENCE, MATRICES, [0, 1, 2, 3]), got)


def test_icc_truth_by_hand_for_two_alike_raters():
    """Two raters right 80% of the time over two categories 0, 1 of equal prevalence: each
    label is 1 with chance ½ (variance ¼); both say 1 with chance ½·(0.8² + 0.2²) = 0.34, so
    the covariance is 0.34 − ¼ = 0.09 and every single-rater form is 0.09/0.25 = 0.36, the
    two-rater average 2·0.36/1.36 (Spearman–Brown)."""
    m = accuracy_matrix(0.8, 2)
    for form in ("icc-1-1", "icc-2-1", "icc-3-1"):
        assert icc(form, [0.5, 0.5], [m, m], [0, 1]) == pytest.approx(0.36, abs=1e-12)
    assert icc("icc-3-k", [0.5, 0.5], [m, m], [0, 1]) == pytest.approx(0.72 / 1.36, abs=1e-12)


# -- Krippendorff's alpha over ordered labels --------------------------------------------------


def alpha(x: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of a units × raters table (NaN missing) from the coincidence matrix
    (Krippendorff 2011): o_ck = Σ_u pairs(c, k)/(m_u − 1), n_c its margins; δ² nominal,
    ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)², interval (c − k)², ratio ((c − k)/(c + k))²;
    alpha = 1 − (n − 1)·Σ o·δ² / Σ n_c n_k δ²."""
    values = np.unique(x[~np.isnan(x)])
    counts = (x[..., None] == values).sum(axis=1).astype(float)  # units × values
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]  # units with one rating are not pairable
    o = (counts / (m - 1)[:, None]).T @ counts - np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    nc = o.sum(axis=1)
    n = nc.sum()
    c, k = np.meshgrid(values, values, indexing="ij")
    if level == "nominal":
        d2 = (c != k).astype(float)
    elif level == "interval":
        d2 = (c - k) ** 2
    elif level == "ratio":
        d2 = ((c - k) / (c + k)) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(nc)])
        i, j = np.meshgrid(np.arange(values.size), np.arange(values.size), indexing="ij")
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        d2 = (cum[hi + 1] - cum[lo] - (nc[i] + nc[j]) / 2) ** 2
    return 1 - (n - 1) * (o * d2).sum() / (np.outer(nc, nc) * d2).sum()


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_the_alpha_oracle_reproduces_krippendorffs_worked_example(level, published):
    """Krippendorff (2011), 4 observers × 12 units with missing values (rows: units)."""
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    ).T
    assert round(alpha(data, level), 3) == published


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_truth_matches_its_formula_over_many_items(level):
    """Values 1, 2, 4, 7 (unequal steps: the interval and ratio distances differ from the
    ordinal ranks) and 10% of ratings missing at random."""
    rng = np.random.default_rng(5)
    values = np.array([1.0, 2.0, 4.0, 7.0])
    got = []
    for _ in range(20):
        x = values[draw_labels(rng, PREVALENCE, MATRICES, 10_000)]
        x[rng.random(x.shape) < 0.1] = np.nan
        got.append(alpha(x, level))
    within(krippendorff(level, PREVALENCE, MATRICES, values), got)


def test_krippendorff_refuses_ratio_of_negative_values():
    with pytest.raises(NoTruth, match="non-negative"):
        krippendorff("ratio", [0.5, 0.5], [np.eye(2), np.eye(2)], [-1, 1])


# -- majority vote -----------------------------------------------------------------------------


def vote(samples: list, gold, tie_break: str) -> float:
    """One problem's credit, counted by hand: the top answers by collections.Counter, ties by
    the registered rule (``first``: the tied answer appearing first)."""
    tally = Counter(samples)
    top = max(tally.values())
    tied = [a for a in tally if tally[a] == top]
    if len(tied) == 1 or tie_break == "first":
        return float(tied[0] == gold)
    return 0.0 if tie_break == "wrong" else float(gold in tied) / len(tied)


@pytest.mark.parametrize("tie_break", ["wrong", "first", "split"])
@pytest.mark.parametrize("n", [4, 5])
def test_majority_vote_over_categorical_answers_matches_drawn_samples(tie_break, n):
    probs = [0.4, 0.3, 0.2, 0.1]
    rng = np.random.default_rng(11)
    got = []
    for _ in range(20):
        draws = rng.choice(4, size=(1500, n), p=probs)
        got.append(np.mean([vote(list(d), 1, tie_break) for d in draws]))
    within(majority_vote(n, probs, 1, tie_break), got)


def test_majority_vote_by_hand():
    """Three samples, right with chance 0.6 (answers 0 right, 1 wrong): the majority is right
    with 0.6³ + 3·0.6²·0.4 = 0.648. Two samples: right only when both are, 0.36, and a tie
    (0.48) adds half of it under split and first."""
    assert majority_vote(3, [0.6, 0.4], 0, "wrong") == pytest.approx(0.648, abs=1e-12)
    assert majority_vote(2, [0.6, 0.4], 0, "wrong") == pytest.approx(0.36, abs=1e-12)
    assert majority_vote(2, [0.6, 0.4], 0, "split") == pytest.approx(0.6, abs=1e-12)
    assert majority_vote(2, [0.6, 0.4], None, "split") == 0.0


@pytest.mark.parametrize(
    ("rate", "icc_", "beta", "gold", "tie_break"),
    [
        (0.45, 0.3, False, True, "split"),
        (0.6, 0.5, False, False, "wrong"),
        (0.3, 0.2, True, True, "first"),
        (0.45, 0.0, False, True, "wrong"),
    ],
)
def test_binary_vote_matches_the_registered_problems(rate, icc_, beta, gold, tie_break):
    """Problems of 6 samples: each problem's chance of a right sample from the latent
    Φ((Φ⁻¹(r) − √ρ·v)/√(1 − ρ)) or from Beta(r·s, (1 − r)·s), s = 1/ρ − 1, drawn with numpy."""
    from scipy.special import ndtr, ndtri

    rng = np.random.default_rng(13)
    got = []
    for _ in range(20):
        if beta:
            s = 1 / icc_ - 1
            p = rng.beta(rate * s, (1 - rate) * s, 20_000)
        else:
            v = rng.standard_normal(20_000)
            p = ndtr((ndtri(rate) - math.sqrt(icc_) * v) / math.sqrt(1 - icc_))
        right = (rng.random((20_000, 6)) < p[:, None]).sum(axis=1)
        mine = right if gold else 6 - right
        credit = np.where(
            mine > 3, 1.0, np.where(mine == 3, 0.0 if tie_break == "wrong" else 0.5, 0)
        )
        got.append(float(credit.mean()))
    within(binary_vote(6, rate, gold, tie_break, icc=icc_, beta=beta), got)


# -- pass@k with clusters inside the problems ----------------------------------------------------


@pytest.mark.parametrize(
    ("sizes", "k", "outer", "inner", "rate"),
    [((4, 4, 4), 5, 0.3, 0.3, 0.3), ((5, 3), 2, 0.2, 0.5, 0.6), ((1, 1, 1, 1), 3, 0.4, 0.2, 0.25)],
)
def test_pass_at_k_with_inner_clusters_matches_drawn_problems(sizes, k, outer, inner, rate):
    """A problem's samples in inner clusters of ``sizes``: z = √R·v + √ρ·u + √(1 − R − ρ)·e
    drawn with numpy, k of the samples taken without replacement, the problem passing when
    one of them has z < Φ⁻¹(rate). Inner clusters of one sample each are independent samples
    given the problem: the plain probit-normal pass@k at R (the quadrature by hand)."""
    from statistics import NormalDist

    rng = np.random.default_rng(37)
    q, n = NormalDist().inv_cdf(rate), sum(sizes)
    label = np.repeat(np.arange(len(sizes)), sizes)
    got = []
    for _ in range(20):
        v = rng.standard_normal((20_000, 1))
        u = rng.standard_normal((20_000, len(sizes)))[:, label]
        z = math.sqrt(outer) * v + math.sqrt(inner) * u
        z = z + math.sqrt(1 - outer - inner) * rng.standard_normal((20_000, n))
        pick = np.argsort(rng.random((20_000, n)), axis=1)[:, :k]
        got.append(float((np.take_along_axis(z, pick, axis=1) < q).any(axis=1).mean()))
    truth = pass_at_k_nested(rate, k, outer, inner, sizes)
    within(truth, got)
    if max(sizes) == 1:
        from scipy import integrate
        from scipy.stats import norm

        s, t = math.sqrt(outer), math.sqrt(1 - outer)
        miss, _ = integrate.quad(
            lambda x: norm.sf((q - s * x) / t) ** k * norm.pdf(x), -np.inf, np.inf
        )
        assert truth == pytest.approx(1 - miss, abs=1e-9)


def test_pass_at_k_with_inner_clusters_end_to_end(tmp_path):
    """samples-units with a batch level of 4 samples inside each problem (latent ICC 0.3 per
    problem, 0.3 more per batch; 3% of samples missing at random): diagnose's truth against
    the latent drawn here, its bias and RMSE against 3,000 re-simulated studies (the unbiased
    pass@5 by math.comb over the problems with at least 10 samples)."""
    from statistics import NormalDist

    def edit(spec):
        spec["scenarios"][0]["clusters"] = [
            {
                "field": "problem",
                "correlation": 0.3,
                "shared": True,
                "size": {"low": 12, "high": 12},
            },
            {"field": "batch", "correlation": 0.3, "size": {"low": 4, "high": 4}},
        ]
        spec["record_contracts"][0]["fields"].append({"name": "batch", "type": "string"})
        spec["attempts"]["key"] = ["problem", "decoding", "batch", "sample"]

    root = project(tmp_path, "samples-units", edit)
    cond = diagnose(root, "samples-units", "nucleus-better", 200)
    rng = np.random.default_rng(41)
    reps, q = 3000, NormalDist().inv_cdf(0.3)
    table = np.full((13, 13), np.nan)
    for n_ in range(5, 13):
        for c_ in range(n_ + 1):
            table[n_, c_] = 1 - math.comb(n_ - c_, 5) / math.comb(n_, 5)
    problem, batch = np.repeat(np.arange(20), 12), np.repeat(np.arange(60), 4)
    z = math.sqrt(0.3) * rng.standard_normal((reps, 20))[:, problem]
    z += math.sqrt(0.3) * rng.standard_normal((reps, 60))[:, batch]
    z += math.sqrt(0.4) * rng.standard_normal((reps, 240))
    seen = np.zeros((reps, 240), dtype=bool)
    np.put_along_axis(seen, rng.random((reps, 240)).argsort(axis=1)[:, :232], True, axis=1)
    flat = 20 * np.arange(reps)[:, None] + problem[None, :]
    n = np.bincount(flat[seen], minlength=20 * reps).reshape(reps, 20)
    c = np.bincount(flat[seen & (z < q)], minlength=20 * reps).reshape(reps, 20)
    ok = n >= 10
    est = np.where(ok, table[n, np.minimum(c, n)], 0.0).sum(axis=1) / ok.sum(axis=1)
    # the truth: 5 of a problem's 12 samples without replacement, 100,000 problems
    big = 100_000
    v = rng.standard_normal((big, 1))
    u = rng.standard_normal((big, 3))[:, np.repeat(np.arange(3), 4)]
    zz = math.sqrt(0.3) * v + math.sqrt(0.3) * u + math.sqrt(0.4) * rng.standard_normal((big, 12))
    pick = np.argsort(rng.random((big, 12)), axis=1)[:, :5]
    hit = (np.take_along_axis(zz, pick, axis=1) < q).any(axis=1)
    truth, truth_se = hit.mean(), hit.std() / math.sqrt(hit.size)
    got = analysis(cond, "pass-at-5-nucleus")
    assert abs(got["truth"] - truth) <= Z * truth_se
    bias = est.mean() - got["truth"]
    se = math.hypot(est.std(ddof=1) / math.sqrt(reps), got["biasMcSe"])
    assert abs(got["bias"] - bias) <= 4 * se
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]
    rmse, rmse_se = rmse_and_se(est, got["truth"])
    assert abs(got["rmse"] - rmse) <= 4 * math.hypot(rmse_se, got["rmseMcSe"])


# -- the design effect -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        {"distribution": "normal", "mean": 3.0, "sd": 2.0},
        {"distribution": "lognormal", "mean": 0.5, "sd": 0.8},
        {"distribution": "uniform", "low": 1.0, "high": 4.0},
    ],
)
def test_the_icc_of_a_drawn_number_matches_numpy_draws(entry):
    """Clusters of 2 rows sharing √ρ·w of their latents (ρ = 0.35): the ICC is the correlation
    of the pair's numbers."""
    from scipy.special import ndtr

    rng = np.random.default_rng(17)
    rho, got = 0.35, []
    for _ in range(20):
        w = rng.standard_normal((50_000, 1))
        z = math.sqrt(rho) * w + math.sqrt(1 - rho) * rng.standard_normal((50_000, 2))
        if entry["distribution"] == "normal":
            x = entry["mean"] + entry["sd"] * z
        elif entry["distribution"] == "lognormal":
            x = np.exp(entry["mean"] + entry["sd"] * z)
        else:
            x = entry["low"] + (entry["high"] - entry["low"]) * ndtr(z)
        got.append(float(np.corrcoef(x[:, 0], x[:, 1])[0, 1]))
    within(value_icc(entry, rho), got)


def test_the_icc_of_a_clipped_or_rounded_number_is_not_worked_out():
    with pytest.raises(NoTruth, match="clipped"):
        value_icc({"distribution": "normal", "mean": 0, "sd": 1, "low": 0}, 0.2)
    with pytest.raises(NoTruth, match="rounded"):
        value_icc({"distribution": "normal", "mean": 0, "sd": 1, "decimals": 1}, 0.2)


def test_the_expected_cluster_size_matches_drawn_missing_rows():
    """Two cells of 40 rows in clusters of 8, 8, 8, 10, 6; 30 rows of each observed at random:
    the size-weighted m is E[Σ m_g²]/N (N = 60) and the mean m is E[N/G] (a cluster may be
    left empty: it is not counted)."""
    sizes = [8, 8, 8, 10, 6]
    parts = [[(c, s, 40, 30)] for c in range(2) for s in sizes]
    rng = np.random.default_rng(19)
    label = np.repeat(np.arange(5), sizes)
    weighted = []
    for _ in range(20):
        kept = np.argsort(rng.random((2, 2000, 40)), axis=2)[..., :30]  # per cell and study
        m = (label[kept][..., None] == np.arange(5)).sum(axis=2)  # (cell, study, cluster)
        weighted.append(float(((m**2).sum(axis=(0, 2)) / 60).mean()))
    # with ICC 1 the design effect is m itself
    within(design_effect(1.0, parts, "size-weighted", "keep"), weighted)
    # here a cluster is left empty too often for N/G to be one number
    with pytest.raises(NoTruth, match="empty"):
        design_effect(0.2, parts, "mean", "keep")


def cut(rng, size: dict, total: int) -> np.ndarray:
    """Cluster sizes covering ``total`` rows as the registration words them: whole numbers
    uniform from low to high (or 1 + Poisson(mean − 1)) one after another, the last cut short."""
    out, left = [], total
    while left > 0:
        s = (
            1 + rng.poisson(size["mean"] - 1)
            if "mean" in size
            else rng.integers(size["low"], size["high"] + 1)
        )
        out.append(min(int(s), left))
        left -= out[-1]
    return np.array(out)


@pytest.mark.parametrize("size", [{"low": 4, "high": 16}, {"mean": 3.5}])
@pytest.mark.parametrize(("total", "kept"), [(7, 7), (60, 45)])
def test_the_expected_square_of_drawn_cluster_sizes_matches_numpy_draws(size, total, kept):
    """E[Σ m_g²] of clusters of drawn sizes, ``kept`` of ``total`` rows observed at random."""
    rng = np.random.default_rng(43)
    got = []
    for _ in range(20):
        squares = []
        for _ in range(500):
            label = np.repeat(np.arange(len(sizes := cut(rng, size, total))), sizes)
            m = np.bincount(label[rng.permutation(total)[:kept]], minlength=sizes.size)
            squares.append(float((m**2).sum()))
        got.append(np.mean(squares))
    within(thinned_square(total, kept, expected_square_sizes(total, size)), got)


def test_the_expected_mean_cluster_size_by_inclusion_exclusion():
    """Two cells of 40 rows in 5 clusters of 8, 30 rows of each observed: a cluster is left
    empty with chance C(32, 30)/C(40, 30) ≈ 6·10⁻⁷. E[N/G] summed exactly over the number of
    empty clusters j of each cell, P(j) by inclusion–exclusion with math.comb."""

    def empty(j: int) -> float:  # exactly j of a cell's 5 clusters empty
        return (
            math.comb(5, j)
            * sum(
                (-1) ** i * math.comb(5 - j, i) * math.comb(40 - 8 * (j + i), 30)
                for i in range(5 - j + 1)
            )
            / math.comb(40, 30)
        )

    exact = sum(
        empty(a) * empty(b) * 60 / (10 - a - b) for a in range(6) for b in range(6) if a + b < 10
    )
    parts = [[(c, 8, 40, 30)] for c in range(2) for _ in range(5)]
    assert design_effect(1.0, parts, "mean", "keep") == pytest.approx(exact, abs=1e-9)
    assert exact != pytest.approx(6.0, abs=1e-7)  # the empty clusters do count
    assert design_effect(0.25, parts, "mean", "keep") == pytest.approx(1 + (exact - 1) / 4)


# -- end to end ---------------------------------------------------------------------------------

RATERS_OF = {"where": [{"factor": "domain", "levels": ["code", "prose"]}]}


def test_icc_and_alpha_end_to_end_against_an_independent_simulation(tmp_path):
    """raters-units with ICC(2,1) and interval Krippendorff analyses: 28 complete items of three
    raters (ann and bob right 90%, cat 75%; grades 0, 1, 2). The truths against the
    formulas over 400,000 items; diagnose's bias, RMSE and the ICC's F-interval coverage (scipy's
    F quantiles, McGraw & Wong's case 2A) against 2,500 re-simulated sets of 28 items."""
    from scipy.stats import f as fdist

    def edit(spec):
        common = {"metric": "graded", "of": RATERS_OF, "unit": "itemId", "rater": "rater"}
        spec["hypotheses"][0]["analyses"] += [
            {"id": "icc", "method": "intraclass-correlation", **common, "rating": "grade",
             "options": {"form": "icc-3-1", "level": 0.95}},
            {"id": "alpha-interval", "method": "krippendorff-alpha", **common,
             "rating": "grade", "options": {"level_of_measurement": "interval"}},
        ]  # fmt: skip

    root = project(tmp_path, "raters-units", edit)
    cond = diagnose(root, "raters-units", "good-raters", 300)
    prevalence = [0.3, 0.3, 0.4]
    matrices = [accuracy_matrix(0.9), accuracy_matrix(0.9), accuracy_matrix(0.75)]
    rng = np.random.default_rng(23)
    big_icc, big_alpha = [], []
    for _ in range(20):
        x = draw_labels(rng, prevalence, matrices, 20_000).astype(float)
        big_icc.append(shrout_fleiss(x, "icc-3-1"))
        big_alpha.append(alpha(x, "interval"))
    reps = 2500
    sets = [draw_labels(rng, prevalence, matrices, 28).astype(float) for _ in range(reps)]
    for aid, big, fn in (
        ("icc", big_icc, lambda x: shrout_fleiss(x, "icc-3-1")),
        ("alpha-interval", big_alpha, lambda x: alpha(x, "interval")),
    ):
        got = analysis(cond, aid)
        truth_se = np.std(big, ddof=1) / math.sqrt(len(big))
        assert abs(got["truth"] - np.mean(big)) <= Z * truth_se
        est = np.array([fn(x) for x in sets])
        bias_se = math.hypot(est.std(ddof=1) / math.sqrt(reps), truth_se, got["biasMcSe"])
        assert abs(got["bias"] - (est.mean() - got["truth"])) <= 4 * bias_se
        assert abs(got["bias"]) < 0.05  # small beside the spread of the estimate (≈ 0.14)
        rmse, rmse_se = rmse_and_se(est, got["truth"])
        assert abs(got["rmse"] - rmse) <= 4 * math.hypot(rmse_se, got["rmseMcSe"])
    # the ICC(3,1) interval of Shrout & Fleiss: F0 = BMS/EMS, FL = F0/F(.975), FU = F0·F(.975')
    covered = 0
    truth = analysis(cond, "icc")["truth"]
    n, k = 28, 3
    f_lo = fdist.ppf(0.975, n - 1, (n - 1) * (k - 1))
    f_hi = fdist.ppf(0.975, (n - 1) * (k - 1), n - 1)
    for x in sets:
        grand, rows, cols = x.mean(), x.mean(axis=1), x.mean(axis=0)
        bms = k * ((rows - grand) ** 2).sum() / (n - 1)
        ems = ((x - rows[:, None] - cols[None, :] + grand) ** 2).sum() / ((n - 1) * (k - 1))
        f0 = bms / ems
        fl, fu = f0 / f_lo, f0 * f_hi
        covered += (fl - 1) / (fl + k - 1) <= truth <= (fu - 1) / (fu + k - 1)
    share, diag = covered / reps, analysis(cond, "icc")["coverage"]
    se = math.hypot(math.sqrt(share * (1 - share) / reps), diag["mcSe"])
    assert abs(diag["share"] - share) <= 4 * se
    assert 0.85 <= diag["share"] <= 0.99  # F intervals on three-point labels: near 0.95


def test_majority_vote_end_to_end_against_an_independent_simulation(tmp_path):
    """samples-units with every sample observed, nucleus' rate 0.45, and majority votes over the
    12 samples of each of 20 problems (latent ICC 0.4 per problem); the correct answer is
    `gold` = 1, which the scenario writes into every row (sd 0), so a problem is right when most
    of its samples pass. The re-simulation draws the latent and counts the passing samples."""
    from statistics import NormalDist

    def edit(spec):
        spec["record_contracts"][0]["fields"].append(
            {"name": "gold", "type": "integer", "nullable": True}
        )
        for tie in ("wrong", "split"):
            spec["hypotheses"][0]["analyses"].append(
                {"id": f"vote-{tie}", "method": "majority-vote", "metric": "solved",
                 "of": {"where": [{"factor": "decoding", "levels": ["nucleus"]}]},
                 "unit": "problem", "rating": "passed", "truth": "gold",
                 "options": {"tie_break": tie}}
            )  # fmt: skip
        sc = spec["scenarios"][0]
        sc.update(
            coverage=1.0, values=[{"field": "gold", "distribution": "normal", "mean": 1, "sd": 0}]
        )
        sc["rates"][0]["rate"] = 0.45

    root = project(tmp_path, "samples-units", edit)
    cond = diagnose(root, "samples-units", "nucleus-better", 120)
    rng = np.random.default_rng(29)
    q, rho, reps = NormalDist().inv_cdf(0.45), 0.4, 4000
    w = rng.standard_normal((reps, 20, 1))
    z = math.sqrt(rho) * w + math.sqrt(1 - rho) * rng.standard_normal((reps, 20, 12))
    passes = (z < q).sum(axis=2)  # per study and problem, of 12 samples
    for tie in ("wrong", "split"):
        # the vote is right when more than 6 of the 12 pass; a 6-6 tie per the rule
        est = np.where(passes > 6, 1.0, np.where(passes == 6, 0.0 if tie == "wrong" else 0.5, 0))
        est = est.mean(axis=1)
        # the truth: 12 samples of 200,000 problems
        w1 = rng.standard_normal((200_000, 1))
        big = (math.sqrt(rho) * w1 + math.sqrt(1 - rho) * rng.standard_normal((200_000, 12))) < q
        wins = big.sum(axis=1)
        credit = np.where(wins > 6, 1.0, np.where(wins == 6, 0.0 if tie == "wrong" else 0.5, 0))
        truth, truth_se = credit.mean(), credit.std() / math.sqrt(credit.size)
        got = analysis(cond, f"vote-{tie}")
        assert abs(got["truth"] - truth) <= Z * truth_se
        bias = est.mean() - got["truth"]
        se = math.hypot(est.std(ddof=1) / math.sqrt(reps), got["biasMcSe"])
        assert abs(got["bias"] - bias) <= 4 * se
        assert abs(got["bias"]) <= 4 * got["biasMcSe"]  # the vote over all samples: unbiased
        rmse, rmse_se = rmse_and_se(est, got["truth"])
        assert abs(got["rmse"] - rmse) <= 4 * math.hypot(rmse_se, got["rmseMcSe"])


def cluster_arms(spec, coverage: float, distribution: dict, size=None) -> None:
    """cluster-arms without units (50 repositories of 8 files per linter, latent ICC 0.3), the
    seconds drawn without rounding, with design-effect analyses of each cluster size."""
    spec.pop("units")
    spec.pop("decision")
    spec["metrics"] = [m for m in spec["metrics"] if m["id"] != "analysable"]
    spec["gates"] = [{"id": "some", "metric": "coverage", "op": "ge", "value": 0.5}]
    for m in ("mean", "size-weighted"):
        spec["hypotheses"][0]["analyses"].append(
            {"id": f"de-{m}", "method": "design-effect", "metric": "latency",
             "a": {"where": [{"factor": "linter", "levels": ["new"]}]},
             "b": {"where": [{"factor": "linter", "levels": ["old"]}]},
             "cluster": "repo", "options": {"cluster_size": m, "negative_icc": "keep"}}
        )  # fmt: skip
    sc = spec["scenarios"][0]
    sc["values"] = [{"field": "seconds", **distribution}]
    sc["clusters"][0]["size"] = size or {"low": 8, "high": 8}
    sc["coverage"] = coverage


def test_design_effect_end_to_end_against_an_independent_simulation(tmp_path):
    """Seconds normal(5, 1) per file, 25 repositories of 8 per linter, 90% of files observed:
    the truth is 1 + (m − 1)·0.3 with m the expected size-weighted cluster size; the
    re-simulation draws the latent, the missing files and the one-way ANOVA ICC by hand."""
    root = project(
        tmp_path,
        "cluster-arms",
        lambda s: cluster_arms(s, 0.9, {"distribution": "normal", "mean": 5, "sd": 1}),
    )
    cond = diagnose(root, "cluster-arms", "new-faster", 200)
    rng = np.random.default_rng(31)
    reps, rho = 2000, 0.3
    repo = np.repeat(np.arange(25), 8)
    est, sizes = [], []
    for _ in range(reps):
        ssb = ssw = sum_m2 = 0.0
        n_all = g_all = 0
        per_arm_m2_over_n = 0.0
        for _arm in range(2):
            z = math.sqrt(rho) * rng.standard_normal(25)[repo] + math.sqrt(1 - rho) * (
                rng.standard_normal(200)
            )
            keep = rng.permutation(200)[:180]
            x, g = 5 + z[keep], repo[keep]
            m = np.bincount(g, minlength=25)
            s = np.bincount(g, weights=x, minlength=25)
            ok = m > 0
            ybar = s[ok] / m[ok]
            ssb += (m[ok] * (ybar - x.mean()) ** 2).sum()
            ssw += ((x - (s / np.maximum(m, 1))[g]) ** 2).sum()
            sum_m2 += (m**2).sum()
            per_arm_m2_over_n += (m**2).sum() / 180
            n_all, g_all = n_all + 180, g_all + int(ok.sum())
        msb, msw = ssb / (g_all - 2), ssw / (n_all - g_all)
        m0 = (n_all - per_arm_m2_over_n) / (g_all - 2)
        icc_hat = (msb - msw) / (msb + (m0 - 1) * msw)
        sizes.append(sum_m2 / n_all)
        est.append(1 + (sum_m2 / n_all - 1) * icc_hat)
    est = np.array(est)
    got = analysis(cond, "de-size-weighted")
    assert got["truth"] == pytest.approx(1 + (np.mean(sizes) - 1) * rho, abs=0.01)
    bias = est.mean() - got["truth"]
    assert abs(got["bias"] - bias) <= 4 * math.hypot(
        est.std(ddof=1) / math.sqrt(reps), got["biasMcSe"]
    )
    rmse, rmse_se = rmse_and_se(est, got["truth"])
    assert abs(got["rmse"] - rmse) <= 4 * math.hypot(rmse_se, got["rmseMcSe"])
    # a file left out of 8 can empty a repository (0.1⁸·25 ≈ 2.5·10⁻⁷): N/G is still worked out
    assert analysis(cond, "de-mean")["truth"] == pytest.approx(180 / 25 * 0.3 + 0.7, abs=1e-4)


def test_an_analysis_without_a_truth_says_why(tmp_path):
    """pass@k whose problems hold batches of 3 to 5 samples (sizes drawn at random): the
    estimator's expectation varies with the draw of the sizes; and an estimate of a share that
    reads a cluster's name. DIAGNOSE.json gives neither a truth and says why, and DIAGNOSE.md
    repeats it."""

    def edit(spec):
        spec["scenarios"][0]["clusters"] = [
            {
                "field": "problem",
                "correlation": 0.3,
                "shared": True,
                "size": {"low": 12, "high": 12},
            },
            {"field": "batch", "correlation": 0.2, "size": {"low": 3, "high": 5}},
        ]
        spec["record_contracts"][0]["fields"].append({"name": "batch", "type": "string"})
        spec["attempts"]["key"] = ["problem", "decoding", "batch", "sample"]
        # a share that reads a cluster's name: its chance follows the layout, not the rate
        spec["metrics"].append(
            {"id": "solved-but-one", "title": "Solved, but problem-1",
             "definition": "passing samples of the problems other than problem-1",
             "compute": {"kind": "proportion", "among": [{"field": "passed", "op": "not_null"}],
                         "where": [{"field": "passed", "op": "eq", "value": True},
                                   {"field": "problem", "op": "ne", "value": "problem-1"}]}}
        )  # fmt: skip
        spec["hypotheses"][0]["estimates"] = [
            {"id": "share", "metric": "solved-but-one", "interval": "wilson", "level": 0.95,
             "of": {"where": [{"factor": "decoding", "levels": ["nucleus"]}]}}
        ]  # fmt: skip

    root = project(tmp_path, "samples-units", edit)
    cond = diagnose(root, "samples-units", "nucleus-better", 10)
    share = next(e for e in cond["estimates"] if e["id"] == "share")
    assert share["truth"] is None and share["bias"] is None
    assert "solved-but-one follows more than the scenario's rate" in share["truthUndefined"]
    got = analysis(cond, "pass-at-5-nucleus")
    assert "truth" not in got and "bias" not in got
    assert "'batch' have sizes drawn at random" in got["truthUndefined"]
    md = (root / "d-nucleus-better" / "DIAGNOSE.md").read_text()
    assert "`pass-at-5-nucleus` has no truth here: the clusters of 'batch' have sizes" in md
    assert "- `share` has no truth here: the chance of a hit of metric solved-but-one" in md
    doc = json.loads((root / "d-nucleus-better" / "DIAGNOSE.json").read_text())
    assert doc["conditions"][0]["analyses"] == cond["analyses"]


def test_majority_vote_over_ratings_end_to_end_by_hand(tmp_path):
    """raters-units as a vote: the three labels of an item (grades 0, 1, 2; each right with
    chance 0.9, a wrong one either other grade alike) voted, the correct answer grade 2 (written
    into every row, sd 0), ties split. By hand: an item whose true grade is 2 (chance 0.4) wins
    with 0.9³ + 3·0.9²·0.1 = 0.972 and splits a three-way tie (6·0.9·0.05·0.05 = 0.0135) for
    0.0045 more; an item of another grade votes 2 with 3·0.05²·0.95 + 0.05³ = 0.00725 and
    splits the three-way tie for 0.0045: 0.4·0.9765 + 0.6·0.01175 = 0.39765."""

    def edit(spec):
        spec["record_contracts"][1]["fields"].append(
            {"name": "gold", "type": "integer", "nullable": True}
        )
        spec["hypotheses"][0]["analyses"].append(
            {"id": "vote", "method": "majority-vote", "metric": "graded",
             "of": {"where": [{"factor": "domain", "levels": ["code"]}]},
             "unit": "itemId", "rating": "grade", "truth": "gold",
             "options": {"tie_break": "split"}}
        )  # fmt: skip
        sc = spec["scenarios"][0]
        sc["values"] = [{"field": "gold", "distribution": "normal", "mean": 2, "sd": 0}]
        sc["ratings"].pop("raters")
        sc["coverage"] = 1.0

    root = project(tmp_path, "raters-units", edit)
    got = analysis(diagnose(root, "raters-units", "good-raters", 100), "vote")
    assert got["truth"] == pytest.approx(0.39765, abs=1e-6)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]


def test_a_design_effect_over_clusters_numbered_alike_in_each_cell_has_no_truth(tmp_path):
    """Repositories numbered 1, 2, ... in each linter's cell: a design effect over both cells
    (one sample) pools repository 1 of each, two clusters of independent latents, so its ICC
    is not the scenario's; over one cell it is."""

    def edit(spec):
        cluster_arms(spec, 1.0, {"distribution": "normal", "mean": 5, "sd": 1})
        for f in spec["record_contracts"][0]["fields"]:
            if f["name"] == "repo":
                f["type"] = "integer"
        hyp = spec["hypotheses"][0]
        hyp["analyses"] = []  # the cluster t refuses a repository number in both arms
        hyp["rule"] = {
            "compare": {"target": "de-new-only", "quantity": "estimate", "op": "ge", "value": 1}
        }
        for name, levels in (("both", ["new", "old"]), ("new-only", ["new"])):
            hyp["analyses"].append(
                {"id": f"de-{name}", "method": "design-effect", "metric": "latency",
                 "of": {"where": [{"factor": "linter", "levels": levels}]},
                 "cluster": "repo", "options": {"cluster_size": "mean", "negative_icc": "keep"}}
            )  # fmt: skip

    root = project(tmp_path, "cluster-arms", edit)
    cond = diagnose(root, "cluster-arms", "new-faster", 5)
    assert "share a name of 'repo'" in analysis(cond, "de-both")["truthUndefined"]
    assert analysis(cond, "de-new-only")["truth"] == pytest.approx(1 + 7 * 0.3, abs=1e-9)


def test_design_effect_with_drawn_cluster_sizes_end_to_end(tmp_path):
    """cluster-arms with repositories of 4 to 16 files drawn at random (as registered), seconds
    normal(5, 1), 90% of files observed: the size-weighted design effect's truth is
    1 + (E[Σ m_g²]/N − 1)·0.3 (E by numpy draws of the sizes and the missing files here), its
    bias against 1,500 re-simulated studies (the one-way ANOVA by hand); the mean cluster size
    N/G then varies with G, and diagnose says so."""
    size = {"low": 4, "high": 16}
    root = project(
        tmp_path,
        "cluster-arms",
        lambda s: cluster_arms(s, 0.9, {"distribution": "normal", "mean": 5, "sd": 1}, size),
    )
    cond = diagnose(root, "cluster-arms", "new-faster", 150)
    assert "N/G, varies" in analysis(cond, "de-mean")["truthUndefined"]
    rng = np.random.default_rng(47)
    est, sizes = [], []
    for _ in range(1500):
        ssb = ssw = sum_m2 = m2_over_n = 0.0
        n_all = g_all = 0
        for _arm in range(2):
            label = np.repeat(np.arange(len(c := cut(rng, size, 200))), c)
            g_n = c.size
            z = math.sqrt(0.3) * rng.standard_normal(g_n)[label]
            z = z + math.sqrt(0.7) * rng.standard_normal(200)
            keep = rng.permutation(200)[:180]
            x, g = 5 + z[keep], label[keep]
            m = np.bincount(g, minlength=g_n)
            total = np.bincount(g, weights=x, minlength=g_n)
            ok = m > 0
            ssb += (m[ok] * (total[ok] / m[ok] - x.mean()) ** 2).sum()
            ssw += ((x - (total / np.maximum(m, 1))[g]) ** 2).sum()
            sum_m2 += (m**2).sum()
            m2_over_n += (m**2).sum() / 180
            n_all, g_all = n_all + 180, g_all + int(ok.sum())
        msb, msw = ssb / (g_all - 2), ssw / (n_all - g_all)
        m0 = (n_all - m2_over_n) / (g_all - 2)
        icc_hat = (msb - msw) / (msb + (m0 - 1) * msw)
        sizes.append(sum_m2 / n_all)
        est.append(1 + (sum_m2 / n_all - 1) * icc_hat)
    est, sizes = np.array(est), np.array(sizes)
    got = analysis(cond, "de-size-weighted")
    size_se = sizes.std(ddof=1) / math.sqrt(sizes.size)
    assert abs(got["truth"] - (1 + (sizes.mean() - 1) * 0.3)) <= Z * 0.3 * size_se
    bias = est.mean() - got["truth"]
    se = math.hypot(est.std(ddof=1) / math.sqrt(est.size), got["biasMcSe"])
    assert abs(got["bias"] - bias) <= 4 * se
