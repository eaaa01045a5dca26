"""Bootstrap intervals and permutation tests against scipy fed the same draws.

The documented draws (``rng.integers(0, n, size=(B, n))`` sample by sample; ``rng.permutation``
per relabelling; ``rng.permuted`` of a tile of (0, 1) per sign flip) are the ones
``scipy.stats.bootstrap`` and ``scipy.stats.permutation_test`` make with ``batch=None`` and
``rng=Generator(PCG64(seed))``, so their intervals and P values are compared directly (scipy's
bootstrap default method is BCa, its quantile the linear one; its random-permutation P is
always (b + 1)/(B + 1) and its two-sided P doubles the smaller one-sided P).  Other quantile
methods are compared over scipy's own bootstrap distribution, the studentized intervals and
the BCa constants with a plain loop written here, exact enumeration with scipy's
(``n_resamples=inf``) and Fisher's (1935) analysis of Darwin's Zea mays pairs.
"""

from __future__ import annotations

import inspect
from fractions import Fraction
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from prereg.stats import resampling_methods as rm
from prereg.stats.methods import MethodError
from prereg.stats.resampling_methods import (
    CATALOGUE,
    bootstrap_mean,
    bootstrap_mean_difference,
    bootstrap_paired_mean_difference,
    permutation_mean,
    permutation_mean_difference,
    permutation_paired_mean_difference,
)

RNG = np.random.default_rng(20261203)
SAMPLES = [
    RNG.normal(1.0, 2.0, 25),
    RNG.lognormal(0.0, 1.0, 60),
    RNG.poisson(3.0, 15).astype(float),  # integers with ties
    np.array([0.5, 2.0, 7.0]),
]
PAIRS = [(s, s * 0.5 + RNG.normal(0.3, 1.0, s.size)) for s in SAMPLES[:3]]


def _gen(seed):
    return np.random.Generator(np.random.PCG64(seed))


def _mean(*a, axis=-1):
    return np.mean(a[0], axis=axis)


def _diff(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def _opts(interval, level=0.95, resamples=999, seed=11, q="linear", se=None, inner=None):
    return dict(
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
        quantile_method=q,
        studentized_se=se,
        inner_resamples=inner,
    )


def _close(a, b, rel=1e-12, abs_=1e-13):
    assert a is not None and b is not None
    assert a == pytest.approx(b, rel=rel, abs=abs_)


SCIPY = {"percentile": "percentile", "basic": "basic", "bca": "BCa"}


# -- bootstrap against scipy ---------------------------------------------------------------------


@pytest.mark.parametrize("x", SAMPLES)
@pytest.mark.parametrize("interval", ["percentile", "basic", "bca"])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_bootstrap_mean_matches_scipy(x, interval, level):
    r = bootstrap_mean(x, **_opts(interval, level=level))
    ref = stats.bootstrap(
        (x,),
        _mean,
        method=SCIPY[interval],
        confidence_level=level,
        n_resamples=999,
        batch=None,
        rng=_gen(11),
    )
    _close(r.estimate, x.mean())
    _close(r.lower, ref.confidence_interval.low)
    _close(r.upper, ref.confidence_interval.high)
    _close(r.se, ref.standard_error)


@pytest.mark.parametrize("i", range(3))
@pytest.mark.parametrize("interval", ["percentile", "basic", "bca"])
def test_bootstrap_difference_matches_scipy(i, interval):
    x, y = SAMPLES[i], SAMPLES[(i + 1) % 4]
    r = bootstrap_mean_difference(x, y, **_opts(interval, level=0.9, seed=5))
    ref = stats.bootstrap(
        (x, y),
        _diff,
        method=SCIPY[interval],
        confidence_level=0.9,
        n_resamples=999,
        batch=None,
        rng=_gen(5),
    )
    _close(r.estimate, x.mean() - y.mean())
    _close(r.lower, ref.confidence_interval.low)
    _close(r.upper, ref.confidence_interval.high)
    _close(r.se, ref.standard_error)
    assert r.counts == {"n_x": x.size, "n_y": y.size}


@pytest.mark.parametrize("x, y", PAIRS)
@pytest.mark.parametrize("interval", ["percentile", "basic", "bca"])
def test_bootstrap_paired_matches_scipy(x, y, interval):
    r = bootstrap_paired_mean_difference(x, y, **_opts(interval, seed=8))
    # paired=True resamples the pairs by one row of indices each: the same draws; scipy's
    # statistic mean(x) − mean(y) differs from mean(x − y) in the last bits only
    ref = stats.bootstrap(
        (x, y), _diff, paired=True, method=SCIPY[interval], n_resamples=999, batch=None, rng=_gen(8)
    )
    _close(r.lower, ref.confidence_interval.low, rel=1e-11)
    _close(r.upper, ref.confidence_interval.high, rel=1e-11)
    ref = stats.bootstrap(
        (x - y,), _mean, method=SCIPY[interval], n_resamples=999, batch=None, rng=_gen(8)
    )
    _close(r.lower, ref.confidence_interval.low)
    _close(r.upper, ref.confidence_interval.high)


@pytest.mark.parametrize("interval", ["percentile", "basic"])
def test_bootstrap_large_sample(interval):
    # (scipy's BCa jackknife builds an n × n index array: not at this n)
    x = RNG.exponential(1.0, 100_000)
    r = bootstrap_mean(x, **_opts(interval, resamples=40, seed=3))
    ref = stats.bootstrap((x,), _mean, method=interval, n_resamples=40, batch=None, rng=_gen(3))
    _close(r.lower, ref.confidence_interval.low)
    _close(r.upper, ref.confidence_interval.high)


def test_inverted_cdf_takes_the_whole_rank_at_a_decimal_level():
    # B·α = 400 · 0.025 = 10 exactly: inverted_cdf takes the 10th smallest replicate (Hyndman &
    # Fan type 1: the smallest value whose empirical CDF reaches α), and the 390th for 0.975
    x = SAMPLES[1]
    r = bootstrap_mean(x, **_opts("percentile", resamples=400, seed=2, q="inverted_cdf"))
    reps = np.sort(x[_gen(2).integers(0, x.size, size=(400, x.size))].mean(axis=1))
    assert (r.lower, r.upper) == (reps[9], reps[389])


def _bca_probabilities(theta_hat, reps, samples, level):
    """z0 and the jackknife acceleration written out for a mean (or difference of means)."""
    below = np.mean(reps < theta_hat) / 2 + np.mean(reps <= theta_hat) / 2
    z0 = stats.norm.ppf(below)
    num = den = 0.0
    for j, s in enumerate(samples):
        n = s.size
        loo = np.array([np.delete(s, i).mean() for i in range(n)])
        if len(samples) == 2:
            loo = loo - samples[1].mean() if j == 0 else samples[0].mean() - loo
        u = (n - 1) * (loo.mean() - loo)
        num += np.sum(u**3) / n**3
        den += np.sum(u**2) / n**2
    a = num / (6 * den**1.5)
    out = []
    for z in stats.norm.ppf([(1 - level) / 2, (1 + level) / 2]):
        out.append(stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    return out


@pytest.mark.parametrize("q", ["inverted_cdf", "hazen", "weibull", "median_unbiased", "nearest"])
@pytest.mark.parametrize("interval", ["percentile", "basic", "bca"])
def test_quantile_methods_over_scipys_replicates(q, interval):
    x, y = SAMPLES[0], SAMPLES[2]
    r = bootstrap_mean_difference(x, y, **_opts(interval, resamples=400, seed=2, q=q))
    reps = stats.bootstrap(
        (x, y), _diff, method="percentile", n_resamples=400, batch=None, rng=_gen(2)
    ).bootstrap_distribution
    theta = x.mean() - y.mean()
    if interval == "bca":
        probs = _bca_probabilities(theta, reps, [x, y], 0.95)
        want = np.quantile(reps, probs, method=q)
    else:
        lo, hi = np.quantile(reps, [0.025, 0.975], method=q)
        want = (lo, hi) if interval == "percentile" else (2 * theta - hi, 2 * theta - lo)
    _close(r.lower, want[0])
    _close(r.upper, want[1])


# -- studentized ---------------------------------------------------------------------------------


def _studentized_loop(samples, B, seed, level, q, inner=None):
    """The bootstrap-t interval written as a loop over the documented draws."""
    rng = _gen(seed)
    idx = [rng.integers(0, s.size, size=(B, s.size)) for s in samples]
    theta = samples[0].mean() - (samples[1].mean() if len(samples) == 2 else 0.0)

    def closed_se(parts):
        return np.sqrt(sum(np.var(p, ddof=1) / p.size for p in parts))

    reps, ses = [], []
    for r in range(B):
        parts = [s[i[r]] for s, i in zip(samples, idx, strict=True)]
        reps.append(parts[0].mean() - (parts[1].mean() if len(parts) == 2 else 0.0))
        if inner is None:
            ses.append(closed_se(parts))
    reps = np.array(reps)
    if inner is None:
        se_hat = closed_se(samples)
    else:
        se_hat = reps.std(ddof=1)
        for r in range(B):
            parts = [s[i[r]] for s, i in zip(samples, idx, strict=True)]
            inner_stats = np.zeros(inner)
            for j, p in enumerate(parts):
                m = p[rng.integers(0, p.size, size=(inner, p.size))].mean(axis=1)
                inner_stats = inner_stats + (m if j == 0 else -m)
            ses.append(inner_stats.std(ddof=1))
    t = (reps - theta) / np.array(ses)
    lo_q, hi_q = np.quantile(t, [(1 - level) / 2, (1 + level) / 2], method=q)
    return theta - hi_q * se_hat, theta - lo_q * se_hat


@pytest.mark.parametrize("which", ["one", "two", "paired"])
@pytest.mark.parametrize("se", ["closed-form", "inner-bootstrap"])
def test_studentized_against_a_plain_loop(which, se):
    x, y = SAMPLES[0], SAMPLES[1][:20]
    inner = 30 if se == "inner-bootstrap" else None
    B = 300 if inner else 999
    opts = _opts("studentized", level=0.9, resamples=B, seed=4, q="hazen", se=se, inner=inner)
    if which == "one":
        r, samples = bootstrap_mean(x, **opts), [x]
    elif which == "two":
        r, samples = bootstrap_mean_difference(x, y, **opts), [x, y]
    else:
        r, samples = bootstrap_paired_mean_difference(x[:20], y, **opts), [x[:20] - y]
    lo, hi = _studentized_loop(samples, B, 4, 0.9, "hazen", inner)
    _close(r.lower, lo)
    _close(r.upper, hi)


def test_draws_do_not_depend_on_the_block_size(monkeypatch):
    x, y = SAMPLES[1], SAMPLES[0]
    opts = _opts("studentized", resamples=60, seed=6, se="inner-bootstrap", inner=20)
    before = bootstrap_mean_difference(x, y, **opts).as_dict()
    monkeypatch.setattr(rm, "_BLOCK", 7)
    assert bootstrap_mean_difference(x, y, **opts).as_dict() == before


def test_bootstrap_exact_estimate_and_degenerate_data():
    r = bootstrap_mean_difference([1, 2, 2], [0, 1], **_opts("percentile", resamples=20))
    assert r.exact["estimate"] == Fraction(5, 3) - Fraction(1, 2)
    assert bootstrap_mean([], **_opts("basic")).estimate is None
    r = bootstrap_mean_difference([1.0, 2.0], [], **_opts("basic"))
    assert r.estimate is None and r.lower is None
    # a constant sample: the percentile interval is the constant; BCa's acceleration is 0/0
    r = bootstrap_mean([3.0] * 5, **_opts("percentile", resamples=50))
    assert (r.lower, r.upper, r.se) == (3.0, 3.0, 0.0)
    assert bootstrap_mean([3.0] * 5, **_opts("bca", resamples=50)).lower is None
    # tiny sample: some resamples have no spread, so the bootstrap-t has no bounds
    r = bootstrap_mean([0.0, 1.0, 1.0], **_opts("studentized", resamples=200, se="closed-form"))
    assert r.lower is None and r.upper is None and r.extra["nonfinite_resamples"] > 0


# -- permutation tests ---------------------------------------------------------------------------


def _scipy_perm(data, statistic, alt, B, seed=None, kind="independent"):
    return stats.permutation_test(
        data,
        statistic,
        permutation_type=kind,
        alternative=alt,
        n_resamples=B,
        batch=None,
        vectorized=True,
        rng=None if seed is None else _gen(seed),
    )


def _perm_opts(
    alt, margin=0.0, enum="random", B=999, seed=7, corr="plus-one", two="double-smaller"
):
    return dict(
        alternative=alt,
        margin=margin,
        enumeration=enum,
        permutations=B,
        seed=seed,
        p_correction=corr,
        two_sided=two,
    )


TWO = [
    (SAMPLES[0], SAMPLES[1][:30]),
    (SAMPLES[2], RNG.poisson(4.0, 11).astype(float)),  # integer ties
    (RNG.normal(0, 1, 8), RNG.normal(0.8, 1, 6)),
]


@pytest.mark.parametrize("x, y", TWO)
@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_relabelling_matches_scipy_with_the_same_permutations(x, y, alt, margin):
    r = permutation_mean_difference(x, y, **_perm_opts(alt, margin, B=999, seed=7))
    ref = _scipy_perm((x - margin, y), _diff, alt, 999, 7)
    _close(r.p, ref.pvalue)
    _close(r.statistic, ref.statistic)
    _close(r.estimate, x.mean() - y.mean())
    assert r.exact["p"] == Fraction(r.p).limit_denominator(1000)
    # without the +1: scipy's P is (b + 1)/(B + 1); recover b and compare b/B
    r = permutation_mean_difference(x, y, **_perm_opts(alt, margin, B=999, seed=7, corr="none"))
    if alt == "two-sided":
        less = _scipy_perm((x - margin, y), _diff, "less", 999, 7).pvalue * 1000 - 1
        more = _scipy_perm((x - margin, y), _diff, "greater", 999, 7).pvalue * 1000 - 1
        want = min(1.0, 2 * min(less, more) / 999)
    else:
        want = (ref.pvalue * 1000 - 1) / 999
    _close(r.p, want)


@pytest.mark.parametrize("x, y", TWO[1:])
def test_relabelling_absolute_two_sided(x, y):
    r = permutation_mean_difference(x, y, **_perm_opts("two-sided", B=500, seed=3, two="absolute"))
    ref = _scipy_perm((x, y), lambda a, b, axis=-1: np.abs(_diff(a, b, axis)), "greater", 500, 3)
    _close(r.p, ref.pvalue)


@pytest.mark.parametrize("x, y", TWO[1:])
@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_relabelling_exact_matches_scipys_enumeration(x, y, alt):
    x, y = x[:7], y[:7]  # C(14, 7) = 3432 splits (scipy enumerates them in Python)
    r = permutation_mean_difference(x, y, **_perm_opts(alt, 0.25, "exact", None, None, "none"))
    ref = _scipy_perm((x - 0.25, y), _diff, alt, np.inf)
    _close(r.p, ref.pvalue)
    total = len(ref.null_distribution)
    assert r.counts["permutations"] == total
    # P is a count over the number of splits (twice a count for two-sided)
    assert (r.exact["p"] * total).denominator == 1 and float(r.exact["p"]) == r.p


def test_relabelling_exact_ties_at_zero_by_hand():
    # x = y = (1, 2, 3): T = 0. Splits of the pooled (1, 1, 2, 2, 3, 3) into 3 + 3 by
    # position: 20; T* = (2S − 12)/3 with S the sum of x's three values; S = 6 for the 8
    # splits taking one of each value, S > 6 for 6 and S < 6 for 6. P(greater) = 14/20.
    x = [1, 2, 3]
    g = permutation_mean_difference(x, x, **_perm_opts("greater", 0, "exact", None, None, "none"))
    assert g.exact["p"] == Fraction(14, 20) and g.counts["extreme"] == 14
    d = permutation_mean_difference(x, x, **_perm_opts("two-sided", 0, "exact", None, None, "none"))
    assert d.exact["p"] == 1
    a = permutation_mean_difference(
        x, x, **_perm_opts("two-sided", 0, "exact", None, None, "none", "absolute")
    )
    assert a.exact["p"] == 1 and a.counts["extreme"] == 20


D = [RNG.normal(0.3, 1, 12), RNG.integers(-3, 4, 9).astype(float), RNG.standard_t(3, 40)]


@pytest.mark.parametrize("d", D)
@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_sign_flip_matches_scipy(d, alt):
    y = RNG.normal(0, 1, d.size)
    x = d + y
    # (scipy enumerates every sign vector when n_resamples ≥ 2^n: stay below)
    B = min(999, 2**d.size // 2)
    r = permutation_paired_mean_difference(x, y, **_perm_opts(alt, 0.2, B=B, seed=9))
    ref = _scipy_perm((x - y - 0.2,), _mean, alt, B, 9, kind="samples")
    _close(r.p, ref.pvalue)
    r1 = permutation_mean(d, **_perm_opts(alt, 0.2, B=B, seed=9))
    ref = _scipy_perm((d - 0.2,), _mean, alt, B, 9, kind="samples")
    _close(r1.p, ref.pvalue)
    if d.size <= 12:
        e = permutation_mean(d, **_perm_opts(alt, 0.2, "exact", None, None, "none"))
        ref = _scipy_perm((d - 0.2,), _mean, alt, np.inf, kind="samples")
        _close(e.p, ref.pvalue)
        assert e.counts["permutations"] == 2**d.size


def test_sign_flip_darwin_zea_mays_fisher_1935():
    # Fisher (1935), The Design of Experiments, §21: Darwin's 15 pairs of Zea mays, the
    # differences in eighths of an inch; of the 2^15 = 32768 sign vectors, 863 give a sum at
    # least the observed 314 ("greater"), and 1726 give |sum| ≥ 314.
    d = [49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48]
    g = permutation_mean(d, **_perm_opts("greater", 0, "exact", None, None, "none"))
    assert g.exact["p"] == Fraction(863, 32768)
    assert g.exact["estimate"] == Fraction(314, 15)
    t = permutation_mean(d, **_perm_opts("two-sided", 0, "exact", None, None, "none", "absolute"))
    assert t.exact["p"] == Fraction(1726, 32768)


def _dec(values) -> list[Fraction]:
    return [Fraction(repr(float(v))) for v in values]


@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("two", ["double-smaller", "absolute"])
def test_sign_flip_on_the_margin_counts_the_decimals(alt, two):
    """0.1, 0.2, 0.3, 0.4 have mean exactly 0.25, the margin: T = 0, and the sign vectors whose
    sum is 0 as decimals meet T* >= T (their floats straddle 0, and the tolerance 100·ε·|T|
    of a float T of 7e-18 did not reach them: P(greater) was 1/2, not 5/8)."""
    x = [0.1, 0.2, 0.3, 0.4]
    r = permutation_mean(x, **_perm_opts(alt, 0.25, "exact", None, None, "none", two))
    d = [v - Fraction(1, 4) for v in _dec(x)]
    sums = [sum(s * v for s, v in zip(signs, d, strict=True)) for signs in product((1, -1), repeat=4)]  # fmt: skip
    ge, le = sum(t >= 0 for t in sums), sum(t <= 0 for t in sums)
    want = {
        "greater": Fraction(ge, 16),
        "less": Fraction(le, 16),
        "two-sided": Fraction(16, 16)
        if two == "absolute"
        else min(Fraction(1), 2 * Fraction(min(ge, le), 16)),
    }[alt]
    assert r.exact["p"] == want and r.exact["statistic"] == 0 and r.statistic == 0.0
    if alt == "greater":
        assert want == Fraction(5, 8)
    # paired: x − y − 0.25 are the same differences as decimals (not as floats)
    xp, yp = [0.15, 0.3, 0.5, 0.7], [0.05, 0.1, 0.2, 0.3]
    paired = permutation_paired_mean_difference(
        xp, yp, **_perm_opts(alt, 0.25, "exact", None, None, "none", two)
    )
    assert paired.exact["p"] == want and paired.exact["statistic"] == 0


@pytest.mark.parametrize("alt", ["greater", "less"])
def test_relabelling_on_the_margin_counts_the_decimals(alt):
    """mean(0.3, 0.5, 0.4) − 0.2 − mean(0.1, 0.2, 0.3) is exactly 0: every split whose
    difference is 0 as decimals meets both tails."""
    x, y = [0.3, 0.5, 0.4], [0.1, 0.2, 0.3]
    r = permutation_mean_difference(x, y, **_perm_opts(alt, 0.2, "exact", None, None, "none"))
    pooled = [v - Fraction(1, 5) for v in _dec(x)] + _dec(y)
    stats_ = []
    for c in combinations(range(6), 3):
        xs = [pooled[i] for i in c]
        ys = [pooled[i] for i in range(6) if i not in c]
        stats_.append(sum(xs) / 3 - sum(ys) / 3)
    b = sum(t >= 0 for t in stats_) if alt == "greater" else sum(t <= 0 for t in stats_)
    assert r.exact["p"] == Fraction(b, 20) and r.exact["statistic"] == 0


def test_permutation_large_sample():
    x, y = RNG.normal(0, 1, 20_000), RNG.normal(0.01, 1, 15_000)
    r = permutation_mean_difference(x, y, **_perm_opts("less", B=60, seed=1))
    ref = _scipy_perm((x, y), _diff, "less", 60, 1)
    _close(r.p, ref.pvalue)


def test_permutation_degenerate_and_too_large():
    r = permutation_mean_difference([], [1.0], **_perm_opts("less"))
    assert r.p is None and r.estimate is None
    assert permutation_mean([], **_perm_opts("less")).p is None
    with pytest.raises(MethodError, match="exceeds"):
        permutation_mean_difference(
            np.arange(20.0), np.arange(20.0), **_perm_opts("less", 0, "exact", None, None, "none")
        )
    with pytest.raises(MethodError, match="exceeds"):
        permutation_mean(np.arange(30.0), **_perm_opts("less", 0, "exact", None, None, "none"))


# -- bad input and the catalogue -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bootstrap_mean([1, 2], **_opts("bootstrap-t")), "interval"),
        (lambda: bootstrap_mean([1, 2], **_opts("basic", level=0)), "level"),
        (lambda: bootstrap_mean([1, 2], **_opts("basic", resamples=2.5)), "resamples"),
        (lambda: bootstrap_mean([1, 2], **_opts("basic", seed=True)), "seed"),
        (lambda: bootstrap_mean([1, 2], **_opts("basic", q="type7")), "quantile_method"),
        (lambda: bootstrap_mean([1, 2], **_opts("basic", se="closed-form")), "studentized"),
        (lambda: bootstrap_mean([1, 2], **_opts("studentized")), "studentized_se"),
        (
            lambda: bootstrap_mean([1, 2], **_opts("studentized", se="inner-bootstrap")),
            "inner_resamples",
        ),
        (
            lambda: bootstrap_mean([1, 2], **_opts("studentized", se="closed-form", inner=5)),
            "inner_resamples",
        ),
        (lambda: bootstrap_mean([[1, 2]], **_opts("basic")), "1-d"),
        (lambda: bootstrap_mean(["a"], **_opts("basic")), "numbers"),
        (lambda: bootstrap_mean([1, np.inf], **_opts("basic")), r"x\[1\]"),
        (lambda: bootstrap_paired_mean_difference([1, 2], [1], **_opts("basic")), "as long"),
        (lambda: permutation_mean([1, 2], **_perm_opts("both")), "alternative"),
        (lambda: permutation_mean([1, 2], **_perm_opts("less", B=0)), "permutations"),
        (lambda: permutation_mean([1, 2], **_perm_opts("less", seed=None)), "seed"),
        (lambda: permutation_mean([1, 2], **_perm_opts("less", corr="half")), "p_correction"),
        (lambda: permutation_mean([1, 2], **_perm_opts("less", two="max")), "two_sided"),
        (lambda: permutation_mean([1, 2], **_perm_opts("less", enum="exact")), "no permutations"),
        (
            lambda: permutation_mean([1, 2], **_perm_opts("less", 0, "exact", None, None)),
            "p_correction must be 'none'",
        ),
        (lambda: permutation_mean([1, 2], **_perm_opts("less", margin="0")), "margin"),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


POSITIONAL = {"sample": ["x"], "two-samples": ["x", "y"], "paired-samples": ["x", "y"]}


def test_catalogue_entries_document_every_option():
    from prereg.stats.catalogue import entries

    assert {e.name for e in CATALOGUE} <= set(entries())
    for e in CATALOGUE:
        assert e.family == "resampling_methods"
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)
        params = inspect.signature(e.load()).parameters
        keyword = {k for k, p in params.items() if p.kind is p.KEYWORD_ONLY}
        assert keyword == set(e.options), e.name
        positional = [k for k, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert positional == POSITIONAL[e.shape], e.name


# -- properties: exact enumeration against a brute force in rationals -----------------------------

SMALL = st.lists(st.integers(-5, 5), min_size=1, max_size=6)
ALT = st.sampled_from(["two-sided", "greater", "less"])
TWO_SIDED = st.sampled_from(["double-smaller", "absolute"])


def _brute_p(null, observed, alt, two_sided):
    """P of an exact test by counting rational statistics (no floating point, no tolerance)."""
    total = len(null)
    ge = Fraction(sum(t >= observed for t in null), total)
    le = Fraction(sum(t <= observed for t in null), total)
    if alt == "greater":
        return ge
    if alt == "less":
        return le
    if two_sided == "absolute":
        return Fraction(sum(abs(t) >= abs(observed) for t in null), total)
    return min(Fraction(1), 2 * min(ge, le))


@settings(max_examples=60, deadline=None)
@given(x=SMALL, y=SMALL, alt=ALT, two=TWO_SIDED)
def test_exact_relabelling_equals_rational_brute_force(x, y, alt, two):
    pooled = x + y
    n, nx = len(pooled), len(x)

    def t(sel):
        a = [pooled[i] for i in sel]
        b = [pooled[i] for i in range(n) if i not in sel]
        return Fraction(sum(a), len(a)) - Fraction(sum(b), len(b))

    null = [t(set(c)) for c in combinations(range(n), nx)]
    want = _brute_p(null, t(set(range(nx))), alt, two)
    r = permutation_mean_difference(x, y, **_perm_opts(alt, 0, "exact", None, None, "none", two))
    assert r.exact["p"] == want
    assert r.exact["estimate"] == Fraction(sum(x), len(x)) - Fraction(sum(y), len(y))


@settings(max_examples=60, deadline=None)
@given(d=st.lists(st.integers(-4, 4), min_size=1, max_size=9), alt=ALT, two=TWO_SIDED)
def test_exact_sign_flip_equals_rational_brute_force(d, alt, two):
    null = [
        Fraction(sum(s * v for s, v in zip(signs, d, strict=True)), len(d))
        for signs in product((1, -1), repeat=len(d))
    ]
    want = _brute_p(null, Fraction(sum(d), len(d)), alt, two)
    r = permutation_mean(d, **_perm_opts(alt, 0, "exact", None, None, "none", two))
    assert r.exact["p"] == want
