"""The clustered family against independent implementations.

Oracles: scipy.stats.ttest_1samp / ttest_ind (Student, pooled) of the cluster means; statsmodels
WLS of the cluster means with the cluster sizes as weights; statsmodels OLS with
cov_type="cluster" (use_correction True for CR1, False for CR0; use_t True for t with G − 1
degrees of freedom, False for the normal: statsmodels' defaults are CR1 and normal P values);
the ANOVA sums of squares as differences of residual sums of squares of statsmodels OLS fits on
dummy codes, statsmodels MixedLM (REML) on balanced data; scipy.stats.bootstrap over the
clusters' indices (the same draws) and a plain loop over resamples.
"""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from prereg.stats.clustered import (
    CATALOGUE,
    cluster_bootstrap,
    cluster_robust_mean,
    cluster_summary_t,
    design_effect,
)
from prereg.stats.methods import MethodError

ALTS = ("two-sided", "greater", "less")
RNG = np.random.default_rng(20261203)


def _dataset(sizes, arm_of_cluster, *, integer=False, shuffle=True, ids=None, seed=0):
    """Rows (x, cluster, group) of clusters of the given sizes, a random effect per cluster."""
    rng = np.random.default_rng(seed)
    ids = list(ids if ids is not None else range(len(sizes)))
    x, c, g = [], [], []
    for cid, m, arm in zip(ids, sizes, arm_of_cluster, strict=True):
        u = rng.normal(0, 0.7)
        if integer:
            vals = (rng.random(m) < 1 / (1 + math.exp(-u))).astype(float)
        else:
            vals = rng.normal(u + (0.4 if arm == "a" else 0.0), 1.0, m)
        x.extend(vals)
        c.extend([cid] * m)
        g.extend([arm] * m)
    x, c, g = np.array(x), np.array(c), np.array(g, dtype=object)
    if shuffle:
        p = rng.permutation(x.size)
        x, c, g = x[p], c[p], g[p]
    return x, c, g


SIZES_BAL = [5] * 8
SIZES_UNEQ = [1, 3, 7, 2, 12, 4, 9, 5, 6, 2, 8, 3]
ONE_ARM = [
    _dataset(SIZES_BAL, ["a"] * 8, seed=1),
    _dataset(SIZES_UNEQ, ["a"] * 12, seed=2),
    _dataset(SIZES_UNEQ, ["a"] * 12, integer=True, seed=3),
    _dataset([2, 2, 3], ["a"] * 3, seed=4),  # few clusters
]
TWO_ARMS = [
    _dataset(SIZES_BAL, ["a", "b"] * 4, seed=5),
    _dataset(SIZES_UNEQ, ["a", "b", "b", "a", "a", "b", "b", "a", "b", "a", "a", "b"], seed=6),
    _dataset(
        SIZES_UNEQ,
        ["a"] * 5 + ["b"] * 7,
        integer=True,
        seed=7,
        ids=[f"c{k:02d}" for k in range(12)],
    ),
    _dataset([4, 1, 6], ["a", "b", "b"], seed=8),  # one cluster in arm a
]


def _cluster_means(x, c, g=None):
    keys = sorted(set(c.tolist()))
    means, sizes, arms = [], [], []
    for k in keys:
        sel = c == k
        means.append(float(np.mean(x[sel])))
        sizes.append(int(sel.sum()))
        arms.append(g[sel][0] if g is not None else None)
    return np.array(means), np.array(sizes), np.array(arms, dtype=object)


def _close(a, b, rel=1e-12, abs_=1e-14):
    assert a is not None and b is not None
    assert a == pytest.approx(b, rel=rel, abs=abs_)


# -- cluster summaries ---------------------------------------------------------------------------


@pytest.mark.parametrize("data", ONE_ARM)
@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("margin", [0.0, 0.25])
def test_summary_equal_one_sample_is_ttest_of_cluster_means(data, alt, margin):
    x, c, _ = data
    ybar, _, _ = _cluster_means(x, c)
    r = cluster_summary_t(
        x, c, None, arms=None, weighting="equal", level=0.9, alternative=alt, margin=margin
    )
    ref = stats.ttest_1samp(ybar, popmean=margin, alternative=alt)
    _close(r.estimate, ybar.mean())
    _close(r.statistic, ref.statistic)
    _close(r.p, ref.pvalue)
    assert r.df == len(ybar) - 1
    # scipy's interval of the mean is two-sided only for alternative two-sided
    ci = stats.ttest_1samp(ybar, popmean=margin).confidence_interval(0.9)
    _close(r.lower, ci.low)
    _close(r.upper, ci.high)
    assert r.counts == {"n": x.size, "clusters": len(ybar)}


@pytest.mark.parametrize("data", TWO_ARMS[:3])
@pytest.mark.parametrize("alt", ALTS)
@pytest.mark.parametrize("margin", [0.0, -0.3])
def test_summary_equal_two_arms_is_pooled_ttest(data, alt, margin):
    x, c, g = data
    ybar, _, arms = _cluster_means(x, c, g)
    a, b = ybar[arms == "a"], ybar[arms == "b"]
    r = cluster_summary_t(
        x, c, g, arms=("a", "b"), weighting="equal", level=0.95, alternative=alt, margin=margin
    )
    # ttest_ind has no margin: shift arm a by it (equal_var=True is its default, said here)
    ref = stats.ttest_ind(a - margin, b, equal_var=True, alternative=alt)
    _close(r.estimate, a.mean() - b.mean())
    _close(r.statistic, ref.statistic)
    _close(r.p, ref.pvalue)
    assert r.df == len(ybar) - 2
    ci = stats.ttest_ind(a, b, equal_var=True).confidence_interval(0.95)
    _close(r.lower, ci.low)
    _close(r.upper, ci.high)


def _wls(ybar, sizes, arms, margin, alt, level):
    X = (
        np.ones((len(ybar), 1))
        if arms is None
        else np.column_stack([np.ones(len(ybar)), (arms == "a").astype(float)])
    )
    res = sm.WLS(ybar, X, weights=sizes.astype(float)).fit()
    j = X.shape[1] - 1
    t = (res.params[j] - margin) / res.bse[j]
    df = res.df_resid
    p = {
        "two-sided": 2 * stats.t.sf(abs(t), df),
        "greater": stats.t.sf(t, df),
        "less": stats.t.cdf(t, df),
    }[alt]
    lo, hi = res.conf_int(alpha=1 - level)[j]
    return res.params[j], res.bse[j], t, p, df, lo, hi


@pytest.mark.parametrize("data", ONE_ARM[:3] + TWO_ARMS[:3])
@pytest.mark.parametrize("alt", ALTS)
def test_summary_size_weighted_is_wls_of_cluster_means(data, alt):
    x, c, g = data
    two = len(set(g.tolist())) == 2
    ybar, sizes, arms = _cluster_means(x, c, g)
    r = cluster_summary_t(
        x,
        c,
        g if two else None,
        arms=("a", "b") if two else None,
        weighting="size",
        level=0.8,
        alternative=alt,
        margin=0.1,
    )
    est, se, t, p, df, lo, hi = _wls(ybar, sizes, arms if two else None, 0.1, alt, 0.8)
    _close(r.estimate, est)
    _close(r.se, se)
    _close(r.statistic, t)
    _close(r.p, p)
    assert r.df == df
    _close(r.lower, lo)
    _close(r.upper, hi)


def test_summary_exact_estimate_of_integer_data():
    # clusters {1, 0, 1}, {0, 0}, {1}: means 2/3, 0, 1; equal: (2/3 + 0 + 1)/3 = 5/9;
    # size: 3/6 = 1/2 (by hand)
    x = [1, 0, 1, 0, 0, 1]
    c = ["p", "p", "p", "q", "q", "r"]
    eq = cluster_summary_t(
        x, c, None, arms=None, weighting="equal", level=0.95, alternative="two-sided", margin=0
    )
    sz = cluster_summary_t(
        x, c, None, arms=None, weighting="size", level=0.95, alternative="two-sided", margin=0
    )
    assert eq.exact["estimate"] == Fraction(5, 9)
    assert sz.exact["estimate"] == Fraction(1, 2)
    x, c, g = TWO_ARMS[2]
    ybar, sizes, arms = _cluster_means(x, c, g)
    r = cluster_summary_t(
        x, c, g, arms=("a", "b"), weighting="equal", level=0.95, alternative="two-sided", margin=0
    )
    want = sum(
        Fraction(int(round(m * s)), int(s))
        for m, s, a in zip(ybar, sizes, arms, strict=True)
        if a == "a"
    )
    want = want / int((arms == "a").sum()) - sum(
        Fraction(int(round(m * s)), int(s))
        for m, s, a in zip(ybar, sizes, arms, strict=True)
        if a == "b"
    ) / int((arms == "b").sum())
    assert r.exact["estimate"] == want
    assert float(want) == pytest.approx(r.estimate, rel=1e-15)


def test_summary_degenerate_cases_give_none():
    # one cluster: no variance
    r = cluster_summary_t(
        [1.0, 2.0],
        [7, 7],
        None,
        arms=None,
        weighting="equal",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    assert r.estimate == 1.5 and r.se is None and r.p is None and r.lower is None
    # zero variance between cluster means
    r = cluster_summary_t(
        [1.0, 3.0, 2.0, 2.0],
        [1, 1, 2, 2],
        None,
        arms=None,
        weighting="equal",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    assert r.estimate == 2.0 and r.se == 0.0 and r.statistic is None and r.p is None
    # an empty arm
    r = cluster_summary_t(
        [1.0, 2.0],
        [1, 2],
        ["a", "a"],
        arms=("a", "b"),
        weighting="equal",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    assert r.estimate is None and r.p is None
    # no data
    r = cluster_summary_t(
        [], [], None, arms=None, weighting="size", level=0.95, alternative="two-sided", margin=0
    )
    assert r.estimate is None
    # two arms of one cluster each: df 0
    x, c, g = TWO_ARMS[3]
    keep = np.isin(c, [0, 1])
    r = cluster_summary_t(
        x[keep],
        c[keep],
        g[keep],
        arms=("a", "b"),
        weighting="equal",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    assert r.estimate is not None and r.se is None and r.df is None


# -- cluster-robust ------------------------------------------------------------------------------


def _ols_cluster(x, c, g, correction, reference):
    X = (
        np.ones((x.size, 1))
        if g is None
        else np.column_stack([np.ones(x.size), (g == "a").astype(float)])
    )
    _, codes = np.unique(c, return_inverse=True)
    return sm.OLS(x, X).fit(
        cov_type="cluster",
        cov_kwds={"groups": codes, "use_correction": correction == "CR1", "df_correction": True},
        use_t=reference == "t",
    ), X.shape[1] - 1


CROSSED = _dataset(SIZES_UNEQ, ["a"] * 12, seed=9)
CROSSED = (CROSSED[0], CROSSED[1], np.where(RNG.random(CROSSED[0].size) < 0.5, "a", "b"))


@pytest.mark.parametrize("data", ONE_ARM + TWO_ARMS[:3] + [CROSSED])
@pytest.mark.parametrize("correction", ["CR1", "CR0"])
@pytest.mark.parametrize("reference", ["t", "normal"])
def test_cluster_robust_matches_statsmodels(data, correction, reference):
    x, c, g = data
    two = len(set(g.tolist())) == 2
    gg = g if two else None
    res, j = _ols_cluster(x, c, gg, correction, reference)
    G = len(set(c.tolist()))
    for alt in ALTS:
        for margin in (0.0, 0.2):
            r = cluster_robust_mean(
                x,
                c,
                gg,
                arms=("a", "b") if two else None,
                correction=correction,
                reference=reference,
                level=0.9,
                alternative=alt,
                margin=margin,
            )
            _close(r.estimate, res.params[j])
            _close(r.se, res.bse[j])
            R = np.zeros((1, j + 1))
            R[0, j] = 1.0
            tt = res.t_test((R, margin))
            stat = float(np.squeeze(tt.tvalue if reference == "t" else tt.statistic))
            _close(r.statistic, stat)
            if alt == "two-sided":
                _close(r.p, float(np.squeeze(tt.pvalue)))
            else:
                dist = stats.t(G - 1) if reference == "t" else stats.norm()
                want = dist.sf(stat) if alt == "greater" else dist.cdf(stat)
                _close(r.p, want)
    lo, hi = res.conf_int(alpha=0.1)[j]
    _close(r.lower, lo)
    _close(r.upper, hi)
    assert r.df == (G - 1 if reference == "t" else None)


def test_cluster_robust_large_n():
    # 1e6 units in 2000 clusters, integer (0/1) data: the exact estimate and statsmodels' SE
    rng = np.random.default_rng(11)
    c = rng.integers(0, 2000, 1_000_000)
    p = rng.beta(2, 5, 2000)
    x = (rng.random(c.size) < p[c]).astype(float)
    r = cluster_robust_mean(
        x,
        c,
        None,
        arms=None,
        correction="CR1",
        reference="t",
        level=0.95,
        alternative="two-sided",
        margin=0.3,
    )
    res, _ = _ols_cluster(x, c, None, "CR1", "t")
    assert r.exact["estimate"] == Fraction(int(x.sum()), x.size)
    _close(r.se, res.bse[0], rel=1e-10)
    _close(r.p, float(res.t_test((np.array([[1.0]]), 0.3)).pvalue), rel=1e-9)


def test_cluster_robust_hand_computation():
    # x = (1, 3 | 2, 6, 7): mean 19/5; cluster residual sums (1 + 3 − 2·3.8) = −3.6 and
    # (15 − 3·3.8) = 3.6; CR0 variance (3.6² + 3.6²)/5² = 1.0368; CR1 × 2/1 · 4/4 = 2.0736
    x, c = [1, 3, 2, 6, 7], [0, 0, 1, 1, 1]
    r0 = cluster_robust_mean(
        x,
        c,
        None,
        arms=None,
        correction="CR0",
        reference="normal",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    r1 = cluster_robust_mean(
        x,
        c,
        None,
        arms=None,
        correction="CR1",
        reference="t",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    assert r0.exact["estimate"] == Fraction(19, 5)
    _close(r0.se, math.sqrt(1.0368))
    _close(r1.se, math.sqrt(2.0736))
    assert r1.df == 1


# -- design effect -------------------------------------------------------------------------------


def _dummies(labels):
    keys = sorted(set(labels.tolist()))
    return np.column_stack([(labels == k).astype(float) for k in keys])


def _anova_icc(x, c, g):
    """ICC by the one-way ANOVA (clusters within arms) written from the textbook formulas, the
    sums of squares as differences of residual sums of squares of OLS fits."""
    full = sm.OLS(x, _dummies(c)).fit()
    arm = sm.OLS(x, _dummies(g)).fit()
    ssw, df_w = full.ssr, full.df_resid
    ssb, df_b = arm.ssr - full.ssr, arm.df_resid - full.df_resid
    msb, msw = ssb / df_b, ssw / df_w
    n = x.size
    adj = 0.0
    for a in set(g.tolist()):
        sizes = np.array([np.sum((c == k) & (g == a)) for k in set(c[g == a].tolist())])
        adj += (sizes**2).sum() / sizes.sum()
    m0 = (n - adj) / df_b
    return (msb - msw) / (msb + (m0 - 1) * msw), msb, msw, m0


@pytest.mark.parametrize("data", ONE_ARM[:3] + TWO_ARMS[:3])
@pytest.mark.parametrize("size", ["mean", "size-weighted"])
@pytest.mark.parametrize("neg", ["keep", "truncate"])
def test_design_effect_anova(data, size, neg):
    x, c, g = data
    two = len(set(g.tolist())) == 2
    r = design_effect(
        x,
        c,
        g if two else None,
        arms=("a", "b") if two else None,
        cluster_size=size,
        negative_icc=neg,
    )
    icc, msb, msw, m0 = _anova_icc(x, c, g)
    _close(r.extra["msb"], msb)
    _close(r.extra["msw"], msw)
    _close(r.extra["m0"], m0)
    _close(r.extra["icc_anova"], icc)
    used = max(icc, 0.0) if neg == "truncate" else icc
    _, sizes, _ = _cluster_means(x, c)
    mbar = sizes.mean()
    # the size-weighted mean size: m̄(1 + cv²), cv with the population SD (Eldridge et al. 2006)
    m = mbar if size == "mean" else mbar * (1 + (sizes.std(ddof=0) / mbar) ** 2)
    _close(r.estimate, 1 + (m - 1) * used, abs_=1e-13)
    _close(r.extra["effective_n"], x.size / (1 + (m - 1) * used))


def test_design_effect_balanced_matches_reml():
    # balanced clusters: REML variance components equal the ANOVA ones when positive
    rng = np.random.default_rng(12)
    c = np.repeat(np.arange(15), 6)
    x = rng.normal(0, 1, 15)[c] + rng.normal(0, 1, c.size)
    r = design_effect(x, c, None, arms=None, cluster_size="mean", negative_icc="keep")
    # (BFGS to a gradient of 1e-12: statsmodels' default stops at about 1e-5 relative here)
    model = sm.MixedLM(x, np.ones((x.size, 1)), groups=c)
    fit = model.fit(reml=True, method="bfgs", gtol=1e-12, maxiter=1000)
    sb, sw = float(np.asarray(fit.cov_re)[0, 0]), float(fit.scale)
    assert sb > 0
    assert r.extra["icc"] == pytest.approx(sb / (sb + sw), rel=1e-9)
    assert r.estimate == pytest.approx(1 + 5 * sb / (sb + sw), rel=1e-9)


def test_design_effect_hand_example_and_negative():
    # clusters {1, 2, 3} and {5, 6, 7}: means 2 and 6, grand 4; SSB = 3·4 + 3·4 = 24 (df 1),
    # SSW = 2 + 2 = 4 (df 4): MSB 24, MSW 1, m0 = 3; ICC = 23/(24 + 2) = 23/26; DE = 1 + 2·23/26
    r = design_effect(
        [1, 2, 3, 5, 6, 7],
        [0, 0, 0, 1, 1, 1],
        None,
        arms=None,
        cluster_size="mean",
        negative_icc="keep",
    )
    _close(r.extra["icc"], 23 / 26)
    _close(r.estimate, 1 + 2 * 23 / 26)
    _close(r.extra["effective_n"], 6 / (1 + 2 * 23 / 26))
    # clusters {1, 9} and {1, 9}: MSB 0, MSW 32, m0 2: ICC = −32/32 = −1
    keep = design_effect(
        [1, 9, 1, 9], [0, 0, 1, 1], None, arms=None, cluster_size="mean", negative_icc="keep"
    )
    trunc = design_effect(
        [1, 9, 1, 9], [0, 0, 1, 1], None, arms=None, cluster_size="mean", negative_icc="truncate"
    )
    assert keep.extra["icc"] == -1.0 and keep.estimate == 0.0 and keep.extra["effective_n"] is None
    assert trunc.extra["icc"] == 0.0 and trunc.estimate == 1.0 and trunc.extra["effective_n"] == 4
    # constant data: no ICC; one unit per cluster: no within-cluster variance
    assert (
        design_effect(
            [2, 2, 2, 2], [0, 0, 1, 1], None, arms=None, cluster_size="mean", negative_icc="keep"
        ).estimate
        is None
    )
    assert (
        design_effect(
            [1, 2, 3], [0, 1, 2], None, arms=None, cluster_size="mean", negative_icc="keep"
        ).estimate
        is None
    )


def test_design_effect_of_decimals_exactly_on_two():
    """Tenths in four clusters of three with MSB exactly 4·MSW: ICC 1/2 and a design effect of
    exactly 2 (its float 1.9999999999999998 failed `ge 2`); exact['estimate'] decides."""
    x = [0.3, 0.5, 0.2, 0.4, 0.6, 0.4, 0.6, 0.8, 0.6, 0.2, 0.5, 0.1]
    c = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    r = design_effect(x, c, None, arms=None, cluster_size="mean", negative_icc="keep")
    # by hand over the decimals: cluster sums 1.0, 1.4, 2.0, 0.8 (grand 5.2)
    dec = [Fraction(repr(v)) for v in x]
    sums = [sum(dec[3 * g : 3 * g + 3]) for g in range(4)]
    ssb = sum(s * s / 3 for s in sums) - sum(dec) ** 2 / 12
    ssw = sum(v * v for v in dec) - sum(s * s / 3 for s in sums)
    msb, msw = ssb / 3, ssw / 8
    assert msb == 4 * msw
    assert r.exact == {"estimate": Fraction(2), "icc": Fraction(1, 2)}
    assert r.estimate != 2.0  # the float a hair below


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 99), min_size=4, max_size=14),
    st.sampled_from(["mean", "size-weighted"]),
    st.sampled_from(["keep", "truncate"]),
    st.booleans(),
)
def test_design_effect_exact_is_the_float_design_effect(values, size, negative, two_arms):
    x = [v / 100 for v in values]
    c = [i % 3 + 3 * (i % 2 if two_arms else 0) for i in range(len(x))]
    group = ["a" if k < 3 else "b" for k in c] if two_arms else None
    arms = ("a", "b") if two_arms else None
    try:
        r = design_effect(x, c, group, arms=arms, cluster_size=size, negative_icc=negative)
    except MethodError:
        return
    if r.estimate is None:
        return
    assert math.isclose(float(r.exact["estimate"]), r.estimate, rel_tol=1e-9, abs_tol=1e-12)


# -- cluster bootstrap ---------------------------------------------------------------------------


def _scipy_cluster_bootstrap(x, c, g, weighting, method, level, B, seed):
    """scipy.stats.bootstrap over the indices of the clusters (sorted ids, arm by arm)."""
    keys = sorted(set(c.tolist()))
    s = np.array([x[c == k].sum() for k in keys])
    m = np.array([float(np.sum(c == k)) for k in keys])
    arm = np.array([g[c == k][0] for k in keys], dtype=object) if g is not None else None
    num, den = (s, m) if weighting == "size" else (s / m, np.ones_like(m))

    def arm_stat(i):
        return num[i].sum(axis=-1) / den[i].sum(axis=-1)

    if g is None:
        data = (np.arange(len(keys)),)

        def statistic(i, axis=-1):
            return arm_stat(i)
    else:
        data = (np.flatnonzero(arm == "a"), np.flatnonzero(arm == "b"))

        def statistic(i, j, axis=-1):
            return arm_stat(i) - arm_stat(j)

    return stats.bootstrap(
        data,
        statistic,
        n_resamples=B,
        batch=None,
        method=method,
        confidence_level=level,
        rng=np.random.Generator(np.random.PCG64(seed)),
        vectorized=True,
    )


@pytest.mark.parametrize("data", ONE_ARM[:3] + TWO_ARMS[:3])
@pytest.mark.parametrize("weighting", ["size", "equal"])
@pytest.mark.parametrize("interval", ["percentile", "basic", "bca"])
def test_cluster_bootstrap_matches_scipy_with_the_same_draws(data, weighting, interval):
    x, c, g = data
    two = len(set(g.tolist())) == 2
    r = cluster_bootstrap(
        x,
        c,
        g if two else None,
        arms=("a", "b") if two else None,
        weighting=weighting,
        interval=interval,
        level=0.9,
        resamples=999,
        seed=42,
        quantile_method="linear",
    )
    ref = _scipy_cluster_bootstrap(
        x, c, g if two else None, weighting, "BCa" if interval == "bca" else interval, 0.9, 999, 42
    )
    _close(r.lower, ref.confidence_interval.low)
    _close(r.upper, ref.confidence_interval.high)
    _close(r.se, ref.standard_error)


@pytest.mark.parametrize("method", ["inverted_cdf", "hazen", "median_unbiased"])
def test_cluster_bootstrap_quantile_methods_on_scipys_replicates(method):
    x, c, g = TWO_ARMS[1]
    r = cluster_bootstrap(
        x,
        c,
        g,
        arms=("a", "b"),
        weighting="size",
        interval="percentile",
        level=0.95,
        resamples=500,
        seed=3,
        quantile_method=method,
    )
    ref = _scipy_cluster_bootstrap(x, c, g, "size", "percentile", 0.95, 500, 3)
    lo, hi = np.quantile(ref.bootstrap_distribution, [0.025, 0.975], method=method)
    _close(r.lower, lo)
    _close(r.upper, hi)


def test_cluster_bootstrap_plain_loop_and_row_order():
    # a loop over resamples that concatenates the drawn clusters' rows, by the documented draws
    x, c, g = TWO_ARMS[2]
    r = cluster_bootstrap(
        x,
        c,
        g,
        arms=("a", "b"),
        weighting="size",
        interval="percentile",
        level=0.8,
        resamples=300,
        seed=9,
        quantile_method="linear",
    )
    keys_a = sorted({k for k, a in zip(c.tolist(), g.tolist(), strict=True) if a == "a"})
    keys_b = sorted({k for k, a in zip(c.tolist(), g.tolist(), strict=True) if a == "b"})
    rng = np.random.Generator(np.random.PCG64(9))
    ia = rng.integers(0, len(keys_a), size=(300, len(keys_a)))
    ib = rng.integers(0, len(keys_b), size=(300, len(keys_b)))
    reps = []
    for r_ in range(300):
        rows_a = np.concatenate([x[c == keys_a[i]] for i in ia[r_]])
        rows_b = np.concatenate([x[c == keys_b[i]] for i in ib[r_]])
        reps.append(rows_a.mean() - rows_b.mean())
    lo, hi = np.percentile(reps, [10, 90])
    _close(r.lower, lo)
    _close(r.upper, hi)
    p = np.random.default_rng(1).permutation(x.size)
    again = cluster_bootstrap(
        x[p],
        c[p],
        g[p],
        arms=("a", "b"),
        weighting="size",
        interval="percentile",
        level=0.8,
        resamples=300,
        seed=9,
        quantile_method="linear",
    )
    assert again.as_dict() == r.as_dict()


def test_cluster_bootstrap_degenerate():
    r = cluster_bootstrap(
        [1.0, 2.0],
        [1, 1],
        ["a", "a"],
        arms=("a", "b"),
        weighting="size",
        interval="percentile",
        level=0.9,
        resamples=10,
        seed=1,
        quantile_method="linear",
    )
    assert r.estimate is None and r.lower is None
    # a constant: the BCa acceleration is 0/0, so no bounds; percentile is the constant
    r = cluster_bootstrap(
        [2.0] * 6,
        [1, 1, 2, 2, 3, 3],
        None,
        arms=None,
        weighting="size",
        interval="bca",
        level=0.9,
        resamples=50,
        seed=1,
        quantile_method="linear",
    )
    assert r.estimate == 2.0 and r.lower is None and r.upper is None
    r = cluster_bootstrap(
        [2.0] * 6,
        [1, 1, 2, 2, 3, 3],
        None,
        arms=None,
        weighting="size",
        interval="percentile",
        level=0.9,
        resamples=50,
        seed=1,
        quantile_method="linear",
    )
    assert (r.lower, r.upper, r.se) == (2.0, 2.0, 0.0)


# -- bad input and the catalogue -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="median",
                level=0.95,
                alternative="two-sided",
                margin=0,
            ),
            "weighting",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="equal",
                level=1.5,
                alternative="two-sided",
                margin=0,
            ),
            "level",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="equal",
                level=0.9,
                alternative="bigger",
                margin=0,
            ),
            "alternative",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1],
                None,
                arms=None,
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            "as long as x",
        ),
        (
            lambda: cluster_summary_t(
                [1, float("nan")],
                [1, 2],
                None,
                arms=None,
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            r"x\[1\]",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1, 2],
                ["a", "c"],
                arms=("a", "b"),
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            r"group\[1\] is 'c'",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1, 1],
                ["a", "b"],
                arms=("a", "b"),
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            "both arms",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                [1, 1],
                ["a", "b"],
                arms=None,
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            "arms must name",
        ),
        (
            lambda: cluster_robust_mean(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                correction="CR2",
                reference="t",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            "correction",
        ),
        (
            lambda: cluster_robust_mean(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                correction="CR1",
                reference="t",
                level=0.9,
                alternative="less",
                margin=float("inf"),
            ),
            "margin",
        ),
        (
            lambda: design_effect(
                [1, 2], [1, 2], None, arms=None, cluster_size="median", negative_icc="keep"
            ),
            "cluster_size",
        ),
        (
            lambda: cluster_bootstrap(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="size",
                interval="studentized",
                level=0.9,
                resamples=10,
                seed=1,
                quantile_method="linear",
            ),
            "interval",
        ),
        (
            lambda: cluster_bootstrap(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="size",
                interval="basic",
                level=0.9,
                resamples=0,
                seed=1,
                quantile_method="linear",
            ),
            "resamples",
        ),
        (
            lambda: cluster_bootstrap(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="size",
                interval="basic",
                level=0.9,
                resamples=10,
                seed=-1,
                quantile_method="linear",
            ),
            "seed",
        ),
        (
            lambda: cluster_bootstrap(
                [1, 2],
                [1, 2],
                None,
                arms=None,
                weighting="size",
                interval="basic",
                level=0.9,
                resamples=10,
                seed=1,
                quantile_method="type7",
            ),
            "quantile_method",
        ),
        (
            lambda: cluster_summary_t(
                ["1", "2"],
                [1, 2],
                None,
                arms=None,
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            "non-numeric values",
        ),
        (
            lambda: cluster_summary_t(
                [1, 2],
                ["a", 1],
                None,
                arms=None,
                weighting="equal",
                level=0.9,
                alternative="less",
                margin=0,
            ),
            "all numbers or all strings",
        ),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_document_every_option():
    import inspect

    from prereg.stats.catalogue import SHAPES, entries

    names = {e.name for e in CATALOGUE}
    assert names <= set(entries())
    for e in CATALOGUE:
        assert e.family == "clustered" and e.shape in SHAPES
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)
        params = inspect.signature(e.load()).parameters
        keyword = {k for k, p in params.items() if p.kind is p.KEYWORD_ONLY}
        assert keyword == set(e.options), e.name
        assert [k for k, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD] == [
            "x",
            "cluster",
            "group",
        ]


def test_importing_the_families_does_not_import_scipy():
    code = (
        "import sys, prereg.stats.clustered, prereg.stats.resampling_methods; "
        "assert not any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules), "
        "sorted(m for m in sys.modules if m.startswith('scipy'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- properties ----------------------------------------------------------------------------------

CLUSTERED = st.lists(
    st.tuples(st.integers(-3, 3), st.integers(0, 5), st.booleans()), min_size=3, max_size=30
)


@settings(max_examples=60, deadline=None)
@given(rows=CLUSTERED, correction=st.sampled_from(["CR1", "CR0"]))
@example(
    rows=[(0, 1, True), (1, 1, False), (-3, 0, False), (-3, 0, False), (-3, 0, False)]
    + [(-3, 0, True)],
    correction="CR1",
)
@example(
    rows=[(-1, 0, False), (2, 1, True), (-2, 0, True), (3, 1, False), (-3, 0, True)],
    correction="CR1",
)
def test_cluster_robust_property(rows, correction):
    x = np.array([r[0] for r in rows], dtype=float)
    c = np.array([r[1] for r in rows])
    g = np.array(["a" if r[2] else "b" for r in rows], dtype=object)
    r = cluster_robust_mean(
        x,
        c,
        g,
        arms=("a", "b"),
        correction=correction,
        reference="t",
        level=0.95,
        alternative="two-sided",
        margin=0,
    )
    xa, xb = [int(v) for v in x[g == "a"]], [int(v) for v in x[g == "b"]]
    if not xa or not xb:
        assert r.estimate is None
        return
    assert r.exact["estimate"] == Fraction(sum(xa), len(xa)) - Fraction(sum(xb), len(xb))
    G = len(set(c.tolist()))
    if G < 2 or x.size <= 2:
        assert r.se is None
        return
    with np.errstate(invalid="ignore"):  # (the intercept's variance may round below 0)
        res, j = _ols_cluster(x, c, g, correction, "t")
        bse = res.bse[j]
    # each cluster's score of the difference, in fractions: row i adds (1/n_a or -1/n_b) times
    # its residual from its arm's mean
    ma, mb = Fraction(sum(xa), len(xa)), Fraction(sum(xb), len(xb))
    score: dict = {}
    for v, k, arm in zip(x.tolist(), c.tolist(), g.tolist(), strict=True):
        w = Fraction(1, len(xa)) * (int(v) - ma) if arm == "a" else -(int(v) - mb) / len(xb)
        score[k] = score.get(k, 0) + w
    if all(v == 0 for v in score.values()):
        # the SE is exactly 0; statsmodels' float sandwich leaves the square root of rounding
        # (2.4e-8 for a = [0, -3], b = [1, -3, -3, -3] in two clusters), or NaN where the
        # rounding falls below 0 (-8e-15 for the second example)
        assert r.se == 0
        assert np.isnan(bse) or bse < 1e-6
        return
    assert r.se == pytest.approx(bse, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(rows=CLUSTERED, weighting=st.sampled_from(["equal", "size"]))
def test_summary_exact_estimate_property(rows, weighting):
    x = [r[0] for r in rows]
    c = [r[1] for r in rows]
    r = cluster_summary_t(
        x, c, None, arms=None, weighting=weighting, level=0.95, alternative="two-sided", margin=0
    )
    clusters = {k: [v for v, kk in zip(x, c, strict=True) if kk == k] for k in set(c)}
    if weighting == "size":
        want = Fraction(sum(x), len(x))
    else:
        want = sum(Fraction(sum(v), len(v)) for v in clusters.values()) / len(clusters)
    assert r.exact["estimate"] == want
    assert r.estimate == pytest.approx(float(want), rel=1e-14, abs=1e-15)


def test_arm_labels_of_any_kind():
    # numeric labels, and a list mixing a string and a number, name the same arms as text does
    x, c, g = TWO_ARMS[1]
    kw = dict(correction="CR1", reference="t", level=0.9, alternative="less", margin=0)
    want = cluster_robust_mean(x, c, g, arms=("a", "b"), **kw).as_dict()
    numeric = np.where(g == "a", 1, 0)
    assert cluster_robust_mean(x, c, numeric, arms=(1, 0), **kw).as_dict() == want
    mixed = ["a" if v == "a" else 7 for v in g]
    assert cluster_robust_mean(x, c, mixed, arms=("a", 7), **kw).as_dict() == want
    with pytest.raises(MethodError, match=r"is '7', which is neither arm"):
        cluster_robust_mean(x, c, [str(v) for v in mixed], arms=("a", 7), **kw)


def _sandwich_exact(x, cluster, group) -> Fraction:
    """The sandwich variance (before the small-sample factor) in fractions, the data read as
    the decimals they write: Σ_g u_g² / N² for one sample, Σ_g (u_a,g/N_a − u_b,g/N_b)² for
    two arms, u an arm's residuals about its exact mean summed over cluster g."""
    q = [Fraction(repr(float(v))) for v in x]
    arm = [0] * len(q) if group is None else [0 if a == "a" else 1 for a in group]
    arms = sorted(set(arm))
    mean = {a: sum(v for v, b in zip(q, arm, strict=True) if b == a) / arm.count(a) for a in arms}
    score: dict = {}
    for v, c, a in zip(q, cluster, arm, strict=True):
        score[c, a] = score.get((c, a), Fraction(0)) + v - mean[a]
    ids = sorted(set(cluster))
    if group is None:
        return sum(score.get((c, 0), 0) ** 2 for c in ids) / len(q) ** 2
    na, nb = arm.count(0), arm.count(1)
    return sum((score.get((c, 0), 0) / na - score.get((c, 1), 0) / nb) ** 2 for c in ids)


DECIMALS = st.decimals(min_value=-50, max_value=50, places=3, allow_nan=False).map(float)


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(DECIMALS, min_size=1, max_size=5),
    clusters=st.integers(2, 6),
    two=st.booleans(),
    nudge=st.sampled_from([None, 1e-13, 0.001]),
    data=st.data(),
)
def test_robust_se_is_zero_exactly_when_the_sandwich_is(values, clusters, two, nudge, data):
    """Clusters that each hold the same decimals (in any order): the sandwich is exactly 0
    (every cluster's residuals sum to 0), so the SE is 0.0, with no statistic, P or interval,
    where the floats' sums left 1e-17 or so; a value of one cluster nudged makes it positive,
    and the SE is then the Fraction oracle's (statsmodels' where it is not at rounding level)."""
    x, c, g = [], [], []
    for k in range(clusters):
        order = data.draw(st.permutations(values))
        x += order
        c += [k] * len(order)
        g += ["a" if (i + k) % 2 == 0 else "b" for i in range(len(order))]
    if two and ("a" not in g or "b" not in g):
        g[0] = "b" if g[0] == "a" else "a"
    if nudge is not None:
        x[0] = float(repr(x[0] + nudge))
    group = g if two else None
    exact = _sandwich_exact(x, c, group)
    for correction in ("CR1", "CR0"):
        r = cluster_robust_mean(
            x, c, group, arms=("a", "b") if two else None, correction=correction,
            reference="t", level=0.95, alternative="two-sided", margin=0,
        )  # fmt: skip
        n, k = len(x), 2 if two else 1
        if n - k <= 0:
            continue
        if exact == 0:
            assert r.se == 0.0 and r.statistic is None and r.p is None and r.lower is None
        else:
            factor = Fraction(clusters, clusters - 1) * Fraction(n - 1, n - k)
            want = math.sqrt(exact * (factor if correction == "CR1" else 1))
            assert r.se > 0
            if want > 1e-9:
                assert r.se == pytest.approx(want, rel=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(DECIMALS, min_size=1, max_size=5),
    clusters=st.integers(3, 6),
    two=st.booleans(),
    weighting=st.sampled_from(WEIGHTS := ("equal", "size")),
    nudge=st.sampled_from([None, 1e-13]),
    data=st.data(),
)
def test_summary_se_is_zero_exactly_when_the_cluster_means_are_alike(
    values, clusters, two, weighting, nudge, data
):
    """Clusters holding the same decimals in any order have equal means (in fractions), so
    the analysis of cluster summaries has no spread: SE 0.0 and no statistic (their floats'
    means differ in the last bit); a nudged value leaves a positive SE."""
    x, c = [], []
    for k in range(clusters):
        order = data.draw(st.permutations(values))
        x += order
        c += [k] * len(order)
    if nudge is not None:
        x[0] = float(repr(x[0] + nudge))
    g = ["a" if k < 2 else "b" for k in c] if two else None
    means = {}
    for v, k in zip(x, c, strict=True):
        means.setdefault(k, []).append(Fraction(repr(v)))
    exact_means = {k: sum(v) / len(v) for k, v in means.items()}
    arms = [[0, 1], list(range(2, clusters))] if two else [list(range(clusters))]
    alike = all(len({exact_means[k] for k in arm}) == 1 for arm in arms)
    r = cluster_summary_t(
        x, c, g, arms=("a", "b") if two else None, weighting=weighting, level=0.95,
        alternative="two-sided", margin=0,
    )  # fmt: skip
    if alike:
        assert r.se == 0.0 and r.statistic is None and r.p is None
    else:
        assert r.se > 0


def test_cluster_summary_welch_t_is_welch_of_the_cluster_means():
    """Welch's t of two arms' cluster means (seeds as units): scipy's ttest_ind(equal_var=False)
    of the per-cluster means, for every alternative; the interval is statsmodels' unequal-
    variance interval of the difference; one arm only is refused; on the margin t = 0."""
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    from prereg.stats.clustered import cluster_summary_welch_t

    rng = np.random.default_rng(5)
    x, cl, gr = [], [], []
    for arm, g, sd in (("a", 5, 0.4), ("b", 7, 0.1)):
        for s in range(g):
            m = rng.normal(5, sd)
            size = int(rng.integers(10, 30))
            x += (np.round(rng.normal(m, 2, size) * 2) / 2).tolist()
            cl += [f"{arm}{s}"] * size
            gr += [arm] * size
    x, cl, gr = np.array(x), np.array(cl, dtype=object), np.array(gr, dtype=object)
    ma = [x[cl == f"a{s}"].mean() for s in range(5)]
    mb = [x[cl == f"b{s}"].mean() for s in range(7)]
    for alt in ("two-sided", "greater", "less"):
        r = cluster_summary_welch_t(
            x, cl, gr, arms=("a", "b"), level=0.9, alternative=alt, margin=0
        )
        t = stats.ttest_ind(ma, mb, equal_var=False, alternative=alt)
        assert r.statistic == pytest.approx(t.statistic, rel=1e-12)
        assert r.df == pytest.approx(t.df, rel=1e-12)
        assert r.p == pytest.approx(t.pvalue, rel=1e-10)
    lo, hi = CompareMeans(DescrStatsW(ma), DescrStatsW(mb)).tconfint_diff(0.1, usevar="unequal")
    assert (r.lower, r.upper) == pytest.approx((lo, hi), rel=1e-12)
    assert r.estimate == pytest.approx(np.mean(ma) - np.mean(mb), abs=1e-12)
    on = cluster_summary_welch_t(
        x, cl, gr, arms=("a", "b"), level=0.9, alternative="greater", margin=r.estimate
    )
    assert on.statistic == pytest.approx(0, abs=1e-12)
    with pytest.raises(MethodError, match="Welch's t compares two arms"):
        cluster_summary_welch_t(x, cl, None, arms=None, level=0.9, alternative="greater", margin=0)


def test_exact_squares_agree_with_the_floats():
    """clustered.exact_squares (the fractions a threshold on t, z, SE or Welch's df is decided
    with) gives the figures each method computes in floats, to 1e-9, over random tenths in
    random clusters: pooled and size-weighted cluster summaries, Welch's, the sandwich (CR1
    and CR0, one sample and two arms crossing clusters), margins 0, 0.1 and -0.25."""
    from prereg.stats import clustered as cl

    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(80):
        g = int(rng.integers(3, 8))
        n = int(rng.integers(g + 2, 25))
        x = rng.integers(-30, 60, n) / 10
        ids = np.concatenate([np.arange(g), rng.integers(0, g, n - g)])
        margin = float(rng.choice([0, 0.1, -0.25]))
        common = {"level": 0.95, "alternative": "two-sided", "margin": margin}
        if trial % 2:
            cases = [
                ("cluster-summary-t", None, {"weighting": "equal"}),
                ("cluster-summary-t", None, {"weighting": "size"}),
                ("cluster-robust-mean", None, {"correction": "CR1", "reference": "normal"}),
            ]
        else:
            in_a = rng.random(g) < 0.5
            in_a[:2] = [True, False]
            nested = np.where(in_a[ids], "a", "b").astype(object)
            crossing = np.where(rng.random(n) < 0.5, "a", "b").astype(object)
            crossing[:2] = ["a", "b"]
            cases = [
                ("cluster-summary-t", nested, {"weighting": "equal"}),
                ("cluster-summary-t", nested, {"weighting": "size"}),
                ("cluster-summary-welch-t", nested, {}),
                ("cluster-robust-mean", crossing, {"correction": "CR1", "reference": "t"}),
                ("cluster-robust-mean", crossing, {"correction": "CR0", "reference": "t"}),
            ]
        for name, group, options in cases:
            arms = None if group is None else ("a", "b")
            fn = {
                "cluster-summary-t": cl.cluster_summary_t,
                "cluster-summary-welch-t": cl.cluster_summary_welch_t,
                "cluster-robust-mean": cl.cluster_robust_mean,
            }[name]
            r = fn(x, ids, group, arms=arms, **options, **common)
            found = cl.exact_squares(
                x, ids, group, arms=arms, method=name,
                weighting=options.get("weighting", "equal"),
                correction=options.get("correction", "CR1"), margin=margin,
            )  # fmt: skip
            if r.statistic is None:
                assert found is None, (name, trial)
                continue
            sign, t2, se2, df = found
            assert math.isclose(sign * math.sqrt(t2), r.statistic, rel_tol=1e-9, abs_tol=1e-12)
            assert math.isclose(math.sqrt(se2), r.se, rel_tol=1e-9)
            if name == "cluster-summary-welch-t":
                assert math.isclose(float(df), r.df, rel_tol=1e-9)
            else:
                assert df is None
            checked += 1
    assert checked > 200
