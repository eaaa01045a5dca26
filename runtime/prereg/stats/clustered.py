"""Clustered samples: a mean, or a difference of two arms' means, when units come in clusters.

Every method reads the shape ``clustered-sample``: ``x`` (the values, one per unit),
``cluster`` (the cluster id of each unit, numbers or strings of one kind) and ``group`` (the
arm of each unit, or None for one sample).  With a group, ``arms=(a, b)`` names the two arms'
labels in the registered order: every figure is about arm a minus arm b.  Clusters are ordered
by sorted id wherever an order matters (the bootstrap's draws), so the order of the rows does
not change a figure.

- :func:`cluster_summary_t`: the analysis of cluster summaries.  Each cluster's mean, then a
  one-sample t (one arm) or a pooled two-sample t (two arms) of the cluster means, equal-weighted
  or weighted by cluster size (weighted least squares of the cluster means with weights m_g),
  df = G − 1 or G − 2.
- :func:`cluster_robust_mean`: the least-squares mean (or difference of the arms' means) with
  the cluster-robust sandwich variance, CR1 (small-sample factor G/(G − 1)·(N − 1)/(N − K)) or
  CR0, referred to t with G − 1 degrees of freedom or to the normal.
- :func:`design_effect`: 1 + (m − 1)·ICC with the one-way ANOVA estimator of the ICC (clusters
  nested in arms), m the mean cluster size or the size-weighted mean Σm²/N, and the effective
  sample size N / design effect.
- :func:`cluster_bootstrap`: a bootstrap of a mean or a difference that resamples whole clusters
  (within each arm), seeded, with the percentile, basic or BCa interval (see
  :mod:`prereg.stats.resampling_methods` for the intervals and the draw scheme).

Degenerate data (no cluster, too few clusters for a variance, a zero variance) give None
figures, never NaN.  The estimate of integer data is also given exactly (``exact``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.resampling_methods import _choice, _count, _level, _margin
from prereg.stats.result import Result

ALTERNATIVES = ("two-sided", "greater", "less")
WEIGHTINGS = ("equal", "size")
CORRECTIONS = ("CR1", "CR0")
REFERENCES = ("t", "normal")
CLUSTER_SIZES = ("mean", "size-weighted")
NEGATIVE_ICC = ("keep", "truncate")

# -- argument checks ----------------------------------------------------------------------------


# (the argument checks are the resampling family's: one definition)

# -- the data -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Clusters:
    """The values with their clusters, clusters in sorted-id order."""

    x: np.ndarray  # float64, one per unit
    inv: np.ndarray  # the cluster (0..G-1, sorted-id order) of each unit
    ids: np.ndarray  # the sorted cluster ids
    m: np.ndarray  # int64 cluster sizes
    s: np.ndarray  # float64 cluster sums
    in_a: np.ndarray | None  # per unit: arm a (True) or arm b (False); None for one sample
    cluster_in_a: np.ndarray | None  # per cluster, when clusters are nested in arms

    @property
    def n(self) -> int:
        return int(self.x.size)

    @property
    def g(self) -> int:
        return int(self.m.size)


def _values(x) -> np.ndarray:
    raw = np.asarray(x)
    if raw.size and raw.dtype.kind not in "biuf":
        raise MethodError(
            f"x must be a 1-d array of numbers; got non-numeric values "
            f"(e.g. {raw.reshape(-1)[0].tolist()!r})"
        )
    a = raw.astype(np.float64)
    if a.ndim != 1:
        raise MethodError(f"x must be a 1-d array of numbers; got {a.ndim} dimensions")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise MethodError(f"x must hold finite numbers; x[{int(bad[0])}] is {float(a[bad[0]])}")
    return a


def _labels(group, gr: np.ndarray) -> tuple[list, np.ndarray]:
    """The distinct labels of a group column (Python values) and each unit's index into them,
    so that the arms are compared once per label, not once per unit.  A list numpy would have
    turned into text (mixing strings and numbers) is read as the objects it holds."""
    if gr.dtype.kind in "US" and not isinstance(group, np.ndarray):
        if not all(isinstance(v, str | bytes) for v in group):
            gr = np.asarray(group, dtype=object)
    try:
        labels, where = np.unique(gr, return_inverse=True)
    except TypeError:  # labels that do not sort together: compare each
        return gr.tolist(), np.arange(gr.shape[0])
    return labels.tolist(), where.reshape(-1)


def _clusters(x, cluster, group, arms, *, nested: bool) -> _Clusters:
    """Check and index the data; ``nested``: every cluster must lie in one arm."""
    xv = _values(x)
    c = np.asarray(cluster)
    if c.ndim != 1 or c.shape[0] != xv.shape[0]:
        raise MethodError(f"cluster must be a 1-d array as long as x ({xv.shape[0]} values)")
    if c.dtype.kind in "US" and not isinstance(cluster, np.ndarray):
        if not all(isinstance(v, str | bytes) for v in cluster):
            raise MethodError("cluster ids must be all numbers or all strings")
    if c.dtype.kind == "f" and not np.all(np.isfinite(c)):
        raise MethodError("cluster ids must not be NaN or infinite")
    try:
        ids, inv = np.unique(c, return_inverse=True)
    except TypeError:
        raise MethodError("cluster ids must be all numbers or all strings") from None
    inv = inv.reshape(-1)
    g = ids.shape[0]
    m = np.bincount(inv, minlength=g).astype(np.int64)
    s = np.bincount(inv, weights=xv, minlength=g)
    in_a = cluster_in_a = None
    if group is None:
        if arms is not None:
            raise MethodError("arms names the two arms of a group column; without one it is None")
    else:
        if (
            not isinstance(arms, Sequence)
            or isinstance(arms, str)
            or len(arms) != 2
            or arms[0] == arms[1]
        ):
            raise MethodError(f"arms must name the two arms (a, b), distinct; got {arms!r}")
        gr = np.asarray(group)
        if gr.ndim != 1 or gr.shape[0] != xv.shape[0]:
            raise MethodError(f"group must be a 1-d array as long as x ({xv.shape[0]} values)")
        labels, where = _labels(group, gr)
        label_a = np.fromiter((v == arms[0] for v in labels), dtype=bool, count=len(labels))
        label_b = np.fromiter((v == arms[1] for v in labels), dtype=bool, count=len(labels))
        in_a, in_b = label_a[where], label_b[where]
        other = np.flatnonzero(~(in_a | in_b))
        if other.size:
            i = int(other[0])
            label = gr[i].item() if isinstance(gr[i], np.generic) else gr[i]
            raise MethodError(
                f"group[{i}] is {label!r}, which is neither arm ({arms[0]!r}, {arms[1]!r})"
            )
        if nested:
            a_count = np.bincount(inv, weights=in_a, minlength=g)
            mixed = np.flatnonzero((a_count > 0) & (a_count < m))
            if mixed.size:
                first = ids[mixed[0]]
                first = first.item() if isinstance(first, np.generic) else first
                raise MethodError(
                    f"cluster {first!r} holds units of both arms; this method needs every "
                    "cluster within one arm"
                )
            cluster_in_a = a_count > 0
    return _Clusters(xv, inv, ids, m, s, in_a, cluster_in_a)


def _integral(x: np.ndarray) -> bool:
    return bool(x.size) and bool(np.all(x == np.trunc(x))) and bool(np.all(np.abs(x) < 2.0**53))


def _int_sums(d: _Clusters) -> list[int]:
    """The cluster sums of integer data as Python integers."""
    order = np.argsort(d.inv, kind="stable")
    xi = d.x[order].astype(np.int64)
    if d.n and float(np.abs(d.x).max()) * d.n >= 2.0**62:
        sums = [0] * d.g
        for gi, v in zip(d.inv.tolist(), d.x.tolist(), strict=True):
            sums[gi] += int(v)
        return sums
    starts = np.concatenate(([0], np.cumsum(d.m)[:-1]))
    return [int(v) for v in np.add.reduceat(xi, starts)] if d.g else []


def _exact_mean(sums: list[int], m: np.ndarray, sel: np.ndarray, weighting: str) -> Fraction:
    """The exact mean over the selected clusters: pooled (size) or of cluster means (equal)."""
    idx = np.flatnonzero(sel).tolist()
    if weighting == "size":
        return Fraction(sum(sums[i] for i in idx), int(m[sel].sum()))
    by_size: dict[int, int] = {}
    for i in idx:
        by_size[int(m[i])] = by_size.get(int(m[i]), 0) + sums[i]
    total = sum((Fraction(v, k) for k, v in by_size.items()), Fraction(0))
    return total / len(idx)


def _exact_estimate(d: _Clusters, weighting: str) -> dict[str, Fraction]:
    if not _integral(d.x):
        return {}
    sums = _int_sums(d)
    if d.cluster_in_a is None and d.in_a is None:
        return {"estimate": _exact_mean(sums, d.m, np.ones(d.g, dtype=bool), weighting)}
    if d.cluster_in_a is not None:
        a, b = d.cluster_in_a, ~d.cluster_in_a
        if not a.any() or not b.any():
            return {}
        return {
            "estimate": _exact_mean(sums, d.m, a, weighting) - _exact_mean(sums, d.m, b, weighting)
        }
    # clusters crossing arms (the sandwich only): the arms' pooled means
    xa, xb = d.x[d.in_a], d.x[~d.in_a]
    if not xa.size or not xb.size:
        return {}
    sa = sum(int(v) for v in xa.tolist())
    sb = sum(int(v) for v in xb.tolist())
    return {"estimate": Fraction(sa, xa.size) - Fraction(sb, xb.size)}


# -- distributions ------------------------------------------------------------------------------


def _t_sf(t: float, df: float) -> float:
    import scipy.special

    return float(scipy.special.stdtr(df, -t))


def _norm_sf(z: float) -> float:
    import scipy.special

    return float(scipy.special.ndtr(-z))


def _p(stat: float, df: float | None, alternative: str) -> float:
    sf = (lambda v: _norm_sf(v)) if df is None else (lambda v: _t_sf(v, df))
    if alternative == "two-sided":
        return min(1.0, 2.0 * sf(abs(stat)))
    if alternative == "greater":
        return sf(stat)
    return sf(-stat)


def _quantile(q: float, df: float | None) -> float:
    if df is None:
        import scipy.special

        return float(scipy.special.ndtri(q))
    from prereg.stats.resampling import t_quantile

    return float(t_quantile(q, df))


def _deviation(estimate, margin, exact, samples) -> float:
    """``estimate − margin``, exactly near 0: the exact estimate (whole-number data) less the
    margin as written, else the means of the decimals the data write
    (:func:`prereg.stats.continuous.margin_deviation`); 0 for data on the margin."""
    from fractions import Fraction

    from prereg.stats.compare import threshold
    from prereg.stats.continuous import margin_deviation

    e = (exact or {}).get("estimate")
    if isinstance(e, Fraction):
        return float(e - threshold(margin))
    return margin_deviation(estimate, margin, samples)


def _inference(
    method, estimate, se, df, *, level, alternative, margin, name, samples=None, **parts
) -> Result:
    """The statistic, P and interval of ``estimate`` with standard error ``se`` (``samples``:
    the (array, sign) pairs whose means ``estimate`` is, when it is a plain mean)."""
    stat = p = lower = upper = None
    if se is not None and estimate is not None and se > 0 and math.isfinite(se):
        stat = _deviation(estimate, margin, parts.get("exact"), samples) / se
        p = _p(stat, df, alternative)
        half = _quantile(1.0 - (1.0 - level) / 2.0, df) * se
        lower, upper = estimate - half, estimate + half
    return Result(
        method=method,
        estimate=estimate,
        se=se,
        statistic=stat,
        statistic_name=name,
        df=df,
        lower=lower,
        upper=upper,
        p=p,
        **parts,
    )


def _check_test(level, alternative, margin) -> tuple[float, str, float]:
    return _level(level), _choice("alternative", alternative, ALTERNATIVES), _margin(margin)


def _arm_counts(d: _Clusters) -> dict[str, int]:
    if d.cluster_in_a is None:
        return {"n": d.n, "clusters": d.g}
    a = d.cluster_in_a
    return {
        "n_a": int(d.m[a].sum()),
        "n_b": int(d.m[~a].sum()),
        "clusters_a": int(a.sum()),
        "clusters_b": int((~a).sum()),
    }


#: A spread (an SE, a cluster mean's deviation) at most this times N·max|x| may be the rounding
#: of an exact 0 (sums of residuals are off by a few units in the last place of N·max|x|): such
#: data are decided exactly (:func:`_scores_vanish`, :func:`_means_alike`).
_ROUNDING = 64 * 2.0**-52


#: how the t (or z) and SE of the clustered tests are decided (:func:`exact_squares`)
_CLUSTER_ROOTS = (
    "t (or z) is ±√(t²) and SE is √(SE²), t² and SE² fractions of the decimals the data write "
    "and the margin as written, formed when a comparison needs them: a threshold on either is "
    "decided by balls of the root (teams' means 7/20, 11/20, 3/5 against 9/20, 1/2, 3/20 give "
    "t = 1 exactly, whose float is 0.9999999999999998)"
)

# -- analysis of cluster summaries --------------------------------------------------------------


def _summary_arm(ybar, w, d: _Clusters, sel):
    """(weighted mean, weighted sum of squared deviations, sum of weights) of cluster means;
    the sum of squares is exactly 0 when the cluster means are (:func:`_means_alike`), not the
    1e-33 or so their floats' rounding leaves."""
    sw = float(w.sum())
    mean = float((w * ybar).sum() / sw)
    dev = ybar - mean
    ss = float((w * dev * dev).sum())
    if 0.0 < ss and float(np.abs(dev).max()) <= _ROUNDING * d.n * float(np.abs(d.x).max()):
        if _means_alike(d, sel):
            ss = 0.0
    return mean, ss, sw


def _means_alike(d: _Clusters, sel) -> bool:
    """Whether the selected clusters' means are all equal, the data read as decimals."""
    from prereg.stats.compare import decimal_fraction

    values, where = np.unique(d.x, return_inverse=True)
    exact = [decimal_fraction(v) for v in values.tolist()]
    sums: dict[int, Fraction] = {}
    for g, v in zip(d.inv.tolist(), where.reshape(-1).tolist(), strict=True):
        sums[g] = sums.get(g, Fraction(0)) + exact[v]
    means = {sums[g] / int(d.m[g]) for g in np.flatnonzero(sel).tolist()}
    return len(means) <= 1


def cluster_summary_t(
    x, cluster, group, *, arms, weighting: str, level: float, alternative: str, margin: float
) -> Result:
    """t test and interval of the mean of cluster means (or of arm a's minus arm b's).

    One sample: ȳ = Σ w_g ȳ_g / Σ w_g, s² = Σ w_g (ȳ_g − ȳ)² / (G − 1), SE = s·√(1/Σ w_g)
    (equal weighting: w_g = 1, the one-sample t of the G cluster means; size weighting:
    w_g = m_g, weighted least squares of the cluster means on 1).  Two arms: the difference
    of the arms' weighted means, s² pooled over both arms with G − 2 degrees of freedom and
    SE = s·√(1/W_a + 1/W_b) (W the sum of an arm's weights); equal weighting is Student's pooled
    two-sample t of the cluster means.
    """
    weighting = _choice("weighting", weighting, WEIGHTINGS)
    level, alternative, margin = _check_test(level, alternative, margin)
    d = _clusters(x, cluster, group, arms, nested=True)
    name = "cluster-summary-t"
    exact = _exact_estimate(d, weighting)
    counts = _arm_counts(d)
    if d.g == 0:
        return Result(method=name, statistic_name="t", counts=counts)
    ybar = d.s / d.m
    w = np.ones(d.g) if weighting == "equal" else d.m.astype(np.float64)
    if d.cluster_in_a is None:
        est, ss, sw = _summary_arm(ybar, w, d, np.ones(d.g, dtype=bool))
        df = d.g - 1
        se = math.sqrt(ss / df / sw) if df > 0 else None
        return _inference(
            name,
            est,
            se,
            df if df > 0 else None,
            level=level,
            alternative=alternative,
            margin=margin,
            name="t",
            exact=exact,
            counts=counts,
        )
    a = d.cluster_in_a
    if not a.any() or a.all():
        return Result(method=name, statistic_name="t", counts=counts)
    ma, ssa, wa = _summary_arm(ybar[a], w[a], d, a)
    mb, ssb, wb = _summary_arm(ybar[~a], w[~a], d, ~a)
    est = ma - mb
    df = d.g - 2
    se = math.sqrt((ssa + ssb) / df * (1.0 / wa + 1.0 / wb)) if df > 0 else None
    return _inference(
        name,
        est,
        se,
        df if df > 0 else None,
        level=level,
        alternative=alternative,
        margin=margin,
        name="t",
        exact=exact,
        counts=counts,
        extra={"mean_a": ma, "mean_b": mb},
    )


def cluster_summary_welch_t(
    x, cluster, group, *, arms, level: float, alternative: str, margin: float
) -> Result:
    """Welch's t test and interval of arm a's mean of cluster means minus arm b's: each
    cluster (a training seed, a school) is one unit of replication, summarised by its mean, and
    the two arms' cluster means are compared with unequal variances (Welch-Satterthwaite df).
    SE = √(s_a²/G_a + s_b²/G_b) with s² each arm's sample variance of its cluster means."""
    level, alternative, margin = _check_test(level, alternative, margin)
    name = "cluster-summary-welch-t"
    if arms is None:
        raise MethodError("arms: Welch's t compares two arms; register a and b (not of)")
    d = _clusters(x, cluster, group, arms, nested=True)
    exact = _exact_estimate(d, "equal")
    counts = _arm_counts(d)
    a = d.cluster_in_a
    if d.g == 0 or not a.any() or a.all():
        return Result(method=name, statistic_name="t", counts=counts)
    ybar = d.s / d.m
    w = np.ones(d.g)
    ma, ssa, _ = _summary_arm(ybar[a], w[a], d, a)
    mb, ssb, _ = _summary_arm(ybar[~a], w[~a], d, ~a)
    ga, gb = int(a.sum()), int((~a).sum())
    se = df = None
    if ga > 1 and gb > 1:
        va, vb = ssa / (ga - 1) / ga, ssb / (gb - 1) / gb
        se = math.sqrt(va + vb)
        if se > 0:
            df = (va + vb) ** 2 / (va * va / (ga - 1) + vb * vb / (gb - 1))
    return _inference(
        name,
        ma - mb,
        se,
        df,
        level=level,
        alternative=alternative,
        margin=margin,
        name="t",
        exact=exact,
        counts=counts,
        extra={"mean_a": ma, "mean_b": mb},
    )


# -- cluster-robust standard error --------------------------------------------------------------


def _scores_vanish(d: _Clusters) -> bool:
    """Whether every cluster's score is exactly 0, the data read as decimals
    (:func:`prereg.stats.compare.decimal_fraction`): one sample, each cluster's residuals sum
    to 0 (S_g·N = m_g·S); two arms, the score of the arm indicator's coefficient,
    u_a,g/N_a − u_b,g/N_b with u an arm's residuals in cluster g, is 0 in every cluster."""
    from prereg.stats.compare import decimal_fraction

    values, where = np.unique(d.x, return_inverse=True)
    exact = [decimal_fraction(v) for v in values.tolist()]
    arm = np.zeros(d.n, dtype=np.int64) if d.in_a is None else np.where(d.in_a, 0, 1)
    sums: dict[tuple[int, int], Fraction] = {}
    sizes: dict[tuple[int, int], int] = {}
    for g, a, v in zip(d.inv.tolist(), arm.tolist(), where.reshape(-1).tolist(), strict=True):
        sums[g, a] = sums.get((g, a), Fraction(0)) + exact[v]
        sizes[g, a] = sizes.get((g, a), 0) + 1
    arms = (0,) if d.in_a is None else (0, 1)
    total = {a: sum((v for (_, b), v in sums.items() if b == a), Fraction(0)) for a in arms}
    count = {a: sum(m for (_, b), m in sizes.items() if b == a) for a in arms}

    def residual(g: int, a: int) -> Fraction:  # an arm's residuals in cluster g, summed
        return sums.get((g, a), Fraction(0)) - sizes.get((g, a), 0) * total[a] / count[a]

    if d.in_a is None:
        return all(residual(g, 0) == 0 for g in range(d.g))
    return all(residual(g, 0) / count[0] == residual(g, 1) / count[1] for g in range(d.g))


def cluster_robust_mean(
    x,
    cluster,
    group,
    *,
    arms,
    correction: str,
    reference: str,
    level: float,
    alternative: str,
    margin: float,
) -> Result:
    """Least-squares mean (or arm a's mean minus arm b's) with a cluster-robust SE.

    The regression of x on 1 (one sample) or on (1, [unit in arm a]) (two arms; clusters may hold
    units of both arms); V = c·(X'X)⁻¹ (Σ_g X_g'e_g e_g'X_g) (X'X)⁻¹ with e the residuals,
    c = G/(G − 1)·(N − 1)/(N − K) for CR1 (K = 1 or 2 coefficients) and c = 1 for CR0.  The
    statistic (estimate − margin)/SE is referred to t with G − 1 degrees of freedom
    (reference "t") or to the standard normal ("normal").
    """
    correction = _choice("correction", correction, CORRECTIONS)
    reference = _choice("reference", reference, REFERENCES)
    level, alternative, margin = _check_test(level, alternative, margin)
    d = _clusters(x, cluster, group, arms, nested=False)
    name = "cluster-robust-mean"
    stat_name = "t" if reference == "t" else "z"
    exact = _exact_estimate(d, "size")
    if d.in_a is None:
        counts = {"n": d.n, "clusters": d.g}
        if d.n == 0:
            return Result(method=name, statistic_name=stat_name, counts=counts)
        est = float(d.x.mean())
        e = d.x - est
        u = np.bincount(d.inv, weights=e, minlength=d.g)
        var = float((u * u).sum()) / (d.n * d.n)
        k = 1
        samples = ((d.x, 1),)
    else:
        na, nb = int(d.in_a.sum()), int((~d.in_a).sum())
        counts = {"n_a": na, "n_b": nb, "clusters": d.g}
        if na == 0 or nb == 0:
            return Result(method=name, statistic_name=stat_name, counts=counts)
        mean_a = float(d.x[d.in_a].mean())
        mean_b = float(d.x[~d.in_a].mean())
        est = mean_a - mean_b
        e = d.x - np.where(d.in_a, mean_a, mean_b)
        # scores of (intercept, indicator of a) per cluster; (X'X)^-1 row of the indicator's
        # coefficient is (-1/nb, 1/nb + 1/na), so its variance is a quadratic form in them.
        u0 = np.bincount(d.inv, weights=e, minlength=d.g)
        u1 = np.bincount(d.inv, weights=np.where(d.in_a, e, 0.0), minlength=d.g)
        h = -u0 / nb + u1 * (1.0 / nb + 1.0 / na)
        var = float((h * h).sum())
        k = 2
        samples = ((d.x[d.in_a], 1), (d.x[~d.in_a], -1))
    if d.g < 2 or d.n - k <= 0:
        return Result(
            method=name, estimate=est, statistic_name=stat_name, exact=exact, counts=counts
        )
    if 0.0 < var and math.sqrt(var) <= _ROUNDING * d.n * float(np.abs(d.x).max()):
        if _scores_vanish(d):  # rounding of an exact 0 (all clusters alike): no spread
            var = 0.0
    if correction == "CR1":
        var *= d.g / (d.g - 1) * (d.n - 1) / (d.n - k)
    se = math.sqrt(var)
    df = d.g - 1 if reference == "t" else None
    return _inference(
        name,
        est,
        se,
        df,
        level=level,
        alternative=alternative,
        margin=margin,
        name=stat_name,
        samples=samples,
        exact=exact,
        counts=counts,
    )


# -- exact squares --------------------------------------------------------------------------------


def exact_squares(
    x, cluster, group, *, arms, method: str, weighting: str, correction: str, margin
) -> tuple[int, Fraction, Fraction, Fraction | None] | None:
    """``(sign, t², se², df)`` of ``cluster-summary-t``, ``cluster-summary-welch-t`` or
    ``cluster-robust-mean`` over the decimals the data write and the margin as written, in
    fractions: the sign of the estimate less the margin, the square of its t (or z), of its
    SE, and Welch–Satterthwaite's df of ``cluster-summary-welch-t`` (None for the others,
    whose df is a whole number).  Each is a rational function of the data, so a threshold on
    t, z or SE is decided by balls of the root of a fraction and one on Welch's df by the
    fraction.  None when the method has no such figure (too few clusters, no spread) or a
    value has more digits than the decimals a double keeps."""
    from prereg.stats.compare import threshold
    from prereg.stats.exactsum import decimal_whole

    robust = method == "cluster-robust-mean"
    d = _clusters(x, cluster, group, arms, nested=not robust)
    scaled = decimal_whole([d.x])
    if scaled is None or d.n == 0:
        return None
    (w,), places = scaled
    values, inv = w.tolist(), d.inv.tolist()
    in_a = [True] * d.n if d.in_a is None else d.in_a.tolist()
    sums = {True: [0] * d.g, False: [0] * d.g}  # per arm, per cluster: sum of whole numbers
    sizes = {True: [0] * d.g, False: [0] * d.g}
    for v, g, a in zip(values, inv, in_a, strict=True):
        sums[a][g] += v
        sizes[a][g] += 1
    df = None
    if robust:
        k = 1 if d.in_a is None else 2
        if d.g < 2 or d.n - k <= 0:
            return None
        n = {a: sum(sizes[a]) for a in (True, False)}
        if d.in_a is not None and (n[True] == 0 or n[False] == 0):
            return None
        mean = {a: Fraction(sum(sums[a]), n[a]) for a in (True, False) if n[a]}
        resid = {a: [sums[a][g] - sizes[a][g] * mean[a] for g in range(d.g)] for a in mean}
        if d.in_a is None:
            est = mean[True]
            var = sum((u * u for u in resid[True]), Fraction(0)) / (d.n * d.n)
        else:
            est = mean[True] - mean[False]
            # the arm indicator's row of (X'X)^-1 times cluster g's scores: u_a/n_a − u_b/n_b
            var = sum(
                (
                    (ua / n[True] - ub / n[False]) ** 2
                    for ua, ub in zip(*resid.values(), strict=True)
                ),
                Fraction(0),
            )
        if correction == "CR1":
            var *= Fraction(d.g * (d.n - 1), (d.g - 1) * (d.n - k))
    else:
        size_weights = method == "cluster-summary-t" and weighting == "size"

        def arm(a: bool) -> tuple[Fraction, Fraction, Fraction, int]:
            """(weighted mean, weighted sum of squares, sum of weights, clusters) of the
            cluster means of arm ``a``."""
            gs = [g for g in range(d.g) if sizes[a][g]]
            ms = [
                (Fraction(sums[a][g], sizes[a][g]), sizes[a][g] if size_weights else 1) for g in gs
            ]
            total = sum(wt for _, wt in ms)
            m = sum((y * wt for y, wt in ms), Fraction(0)) / total if ms else Fraction(0)
            return (
                m,
                sum(((y - m) ** 2 * wt for y, wt in ms), Fraction(0)),
                Fraction(total),
                len(gs),
            )

        if d.cluster_in_a is None:
            est, ss, total, g = arm(True)
            if g < 2:
                return None
            var = ss / (g - 1) / total
        else:
            (ma, ssa, wa, ga), (mb, ssb, wb, gb) = arm(True), arm(False)
            if ga == 0 or gb == 0:
                return None
            est = ma - mb
            if method == "cluster-summary-welch-t":
                if ga < 2 or gb < 2:
                    return None
                va, vb = ssa / (ga - 1) / ga, ssb / (gb - 1) / gb
                var = va + vb
                if var > 0:
                    df = var * var / (va * va / (ga - 1) + vb * vb / (gb - 1))
            else:
                if ga + gb < 3:
                    return None
                var = (ssa + ssb) / (ga + gb - 2) * (1 / wa + 1 / wb)
    if var <= 0:
        return None
    dev = est - threshold(margin) * 10**places
    return (dev > 0) - (dev < 0), dev * dev / var, var / 10 ** (2 * places), df


# -- design effect ------------------------------------------------------------------------------


def design_effect(x, cluster, group, *, arms, cluster_size: str, negative_icc: str) -> Result:
    """Design effect 1 + (m − 1)·ICC with the one-way ANOVA ICC; effective sample size N/DE.

    Clusters nested in A arms (A = 1 without a group): MSB = Σ_g m_g (ȳ_g − ȳ_arm(g))² / (G − A),
    MSW = Σ_i (x_i − ȳ_g(i))² / (N − G), m₀ = (N − Σ_arms Σ_g m_g² / N_arm) / (G − A),
    ICC = (MSB − MSW) / (MSB + (m₀ − 1)·MSW) (kept when negative, or truncated at 0).
    m is N/G (cluster_size "mean") or Σ m_g² / N ("size-weighted", the mean cluster size seen
    by a unit: m̄·(1 + cv²) with cv the coefficient of variation of the sizes, population SD).
    """
    cluster_size = _choice("cluster_size", cluster_size, CLUSTER_SIZES)
    negative_icc = _choice("negative_icc", negative_icc, NEGATIVE_ICC)
    d = _clusters(x, cluster, group, arms, nested=True)
    name = "design-effect"
    counts = {"n": d.n, "clusters": d.g}
    if d.cluster_in_a is None:
        arm_sets = [np.ones(d.g, dtype=bool)]
    else:
        arm_sets = [s for s in (d.cluster_in_a, ~d.cluster_in_a) if s.any()]
    n_arms = len(arm_sets)
    df_b, df_w = d.g - n_arms, d.n - d.g
    if d.g == 0:
        return Result(method=name, counts=counts)
    ybar = d.s / d.m
    m_used = d.n / d.g if cluster_size == "mean" else float((d.m * d.m).sum()) / d.n
    extra: dict[str, object] = {"cluster_size": m_used}
    if df_b < 1 or df_w < 1:
        return Result(method=name, counts=counts, extra=extra)
    ssb = 0.0
    sum_m2_over_n = 0.0
    for sel in arm_sets:
        arm_mean = float(d.s[sel].sum() / d.m[sel].sum())
        dev = ybar[sel] - arm_mean
        ssb += float((d.m[sel] * dev * dev).sum())
        sum_m2_over_n += float((d.m[sel] ** 2).sum()) / float(d.m[sel].sum())
    resid = d.x - ybar[d.inv]
    ssw = float((resid * resid).sum())
    msb, msw = ssb / df_b, ssw / df_w
    m0 = (d.n - sum_m2_over_n) / df_b
    extra.update({"msb": msb, "msw": msw, "m0": m0, "df_between": df_b, "df_within": df_w})
    denom = msb + (m0 - 1.0) * msw
    if not denom > 0:
        return Result(method=name, counts=counts, extra=extra)
    icc = (msb - msw) / denom
    extra["icc_anova"] = icc
    if negative_icc == "truncate":
        icc = max(icc, 0.0)
    deff = 1.0 + (m_used - 1.0) * icc
    extra["icc"] = icc
    extra["effective_n"] = d.n / deff if deff > 0 else None
    exact = _design_effect_exact(d, arm_sets, cluster_size, negative_icc)
    return Result(method=name, estimate=deff, exact=exact, counts=counts, extra=extra)


def _design_effect_exact(d, arm_sets, cluster_size: str, negative_icc: str) -> dict:
    """The design effect and its ICC as fractions of the decimals the data write (a design
    effect of exactly 2 meets `le 2`), by the formulas of :func:`design_effect`; {} when the
    denominator is not positive there."""
    from math import lcm

    values = d.x.tolist()
    decimal = {v: Fraction(repr(float(v))) for v in set(values)}
    den = lcm(*(f.denominator for f in decimal.values()))
    whole = {v: f.numerator * (den // f.denominator) for v, f in decimal.items()}
    sums = [0] * d.g
    squares = 0
    for v, g in zip(values, d.inv.tolist(), strict=True):
        w = whole[v]
        sums[g] += w
        squares += w * w
    sizes = d.m.tolist()
    n, g_count = d.n, d.g
    df_b, df_w = g_count - len(arm_sets), n - g_count
    ssb = Fraction(0)
    m2_over_n = Fraction(0)
    for sel in arm_sets:
        clusters = np.flatnonzero(sel).tolist()
        arm_sum = sum(sums[c] for c in clusters)
        arm_n = sum(sizes[c] for c in clusters)
        ssb += sum(Fraction(sums[c] * sums[c], sizes[c]) for c in clusters) - Fraction(
            arm_sum * arm_sum, arm_n
        )
        m2_over_n += Fraction(sum(sizes[c] ** 2 for c in clusters), arm_n)
    ssw = squares - sum(Fraction(sums[c] * sums[c], sizes[c]) for c in range(g_count))
    scale = Fraction(1, den * den)
    msb, msw = ssb * scale / df_b, ssw * scale / df_w
    m0 = (n - m2_over_n) / df_b
    denom = msb + (m0 - 1) * msw
    if denom <= 0:
        return {}
    icc = (msb - msw) / denom
    if negative_icc == "truncate":
        icc = max(icc, Fraction(0))
    m_used = (
        Fraction(n, g_count) if cluster_size == "mean" else Fraction(sum(m * m for m in sizes), n)
    )
    return {"estimate": 1 + (m_used - 1) * icc, "icc": icc}


# -- cluster bootstrap --------------------------------------------------------------------------


def cluster_bootstrap(
    x,
    cluster,
    group,
    *,
    arms,
    weighting: str,
    interval: str,
    level: float,
    resamples: int,
    seed: int,
    quantile_method: str,
) -> Result:
    """Bootstrap interval of a mean (or a difference a − b) resampling whole clusters.

    The statistic of a resample of clusters is the pooled mean Σ S_g / Σ m_g (weighting "size")
    or the mean of the cluster means (weighting "equal"); with two arms, arm a's minus arm b's,
    each arm's clusters resampled within the arm.  Draws: ``rng = numpy.random.Generator(
    numpy.random.PCG64(seed))``, clusters in sorted-id order (within each arm), one sample:
    ``rng.integers(0, G, size=(resamples, G))``; two arms: ``rng.integers(0, G_a,
    size=(resamples, G_a))`` for arm a, then the same for arm b (row r of each is resample r).
    Intervals as in :mod:`prereg.stats.resampling_methods` (BCa's acceleration from the
    delete-one-cluster jackknife).
    """
    from prereg.stats import resampling_methods as rm

    weighting = _choice("weighting", weighting, WEIGHTINGS)
    interval = _choice("interval", interval, rm.CLUSTER_INTERVALS)
    level = _level(level)
    resamples = _count("resamples", resamples, 1)
    seed = _count("seed", seed, 0)
    quantile_method = _choice("quantile_method", quantile_method, rm.QUANTILE_METHODS)
    d = _clusters(x, cluster, group, arms, nested=True)
    name = "cluster-bootstrap"
    exact = _exact_estimate(d, weighting)
    counts = _arm_counts(d)
    if d.cluster_in_a is None:
        arm_sets = [np.ones(d.g, dtype=bool)]
    else:
        arm_sets = [d.cluster_in_a, ~d.cluster_in_a]
    if any(not s.any() for s in arm_sets):
        return Result(method=name, counts=counts)
    ybar = d.s / d.m
    if weighting == "size":
        units = [np.stack([d.s[s], d.m[s].astype(np.float64)], axis=1) for s in arm_sets]
    else:
        units = [np.stack([ybar[s], np.ones(int(s.sum()))], axis=1) for s in arm_sets]
    return rm._bootstrap_ratio(
        name,
        units,
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
        quantile_method=quantile_method,
        exact=exact,
        counts=counts,
    )


# -- the catalogue ------------------------------------------------------------------------------

_ARMS = (
    "arms: None for one sample; with a group column, the pair (a, b) of its labels "
    "(figures are about a − b)"
)
_TEST_OPTIONS = {
    "level": "the two-sided interval's level, strictly between 0 and 1",
    "alternative": "two-sided | greater | less (H1 about a − b, or the mean, against the margin)",
    "margin": "the value tested against (a finite number; 0 for no difference)",
}

CATALOGUE = (
    Entry(
        name="cluster-summary-t",
        family="clustered",
        function="prereg.stats.clustered:cluster_summary_t",
        shape="clustered-sample",
        summary="t test of cluster means (one sample, or two arms pooled), equal- or size-weighted",
        options={
            "arms": _ARMS + " (clusters nested in arms: with two arms every cluster lies within "
            "one, else the data are refused; cluster-robust-mean takes clusters holding both)",
            "weighting": "equal (each cluster's mean counts once) | size (weighted by cluster "
            "size: weighted least squares of the cluster means)",
            **_TEST_OPTIONS,
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p", "exact", "counts"),
        formula=(
            "ȳ_g = S_g/m_g; ȳ = Σ w_g ȳ_g / Σ w_g (w_g = 1 or m_g); one sample: "
            "s² = Σ w_g (ȳ_g − ȳ)²/(G − 1), SE = √(s²/Σ w_g), df = G − 1; two arms: "
            "estimate ȳ_a − ȳ_b, s² = [Σ_a w(ȳ_g − ȳ_a)² + Σ_b w(ȳ_g − ȳ_b)²]/(G − 2), "
            "SE = √(s²(1/W_a + 1/W_b)), df = G − 2; t = (estimate − margin)/SE; interval "
            "estimate ± t(1 − (1 − level)/2, df)·SE"
        ),
        reference=(
            "Donner A, Klar N (2000). Design and Analysis of Cluster Randomization Trials in "
            "Health Research, ch. 6 (cluster-level analysis; weighted t test)"
        ),
        oracle=(
            "equal: scipy.stats.ttest_1samp / ttest_ind(equal_var=True) of the cluster means "
            "(ttest_ind's default is already Student's pooled t); size: statsmodels "
            "WLS(cluster means, [1, arm], weights=sizes) params, bse, t and P at df_resid"
        ),
        exactness=(
            "estimate: exact fraction for integer data (exact['estimate']), and for decimal data "
            "the exact means of the decimals the data write (exact['estimate'] once a comparison "
            "needs it); the estimate less the margin is that fraction less the margin as written "
            "(0 on it: t = 0, P = 1/2); " + _CLUSTER_ROOTS + "; P and the bounds are floating "
            "point, each compared as the shortest decimal of its float"
        ),
    ),
    Entry(
        name="cluster-summary-welch-t",
        family="clustered",
        function="prereg.stats.clustered:cluster_summary_welch_t",
        shape="clustered-sample",
        summary=(
            "Welch's t test of two arms' cluster means (the cluster, a training seed, is the "
            "unit of replication), each cluster's mean counting once"
        ),
        options={
            "arms": "the pair (a, b) of the group column's labels (figures are about a − b); "
            "two arms only (a and b), every cluster within one arm, else the data are refused",
            **_TEST_OPTIONS,
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p", "exact", "counts"),
        formula=(
            "ȳ_g = S_g/m_g; estimate ȳ_a − ȳ_b, each arm's plain mean of its cluster means; "
            "s_a², s_b² the arms' sample variances of their cluster means; SE = √(s_a²/G_a + "
            "s_b²/G_b); df = SE⁴/[(s_a²/G_a)²/(G_a − 1) + (s_b²/G_b)²/(G_b − 1)] "
            "(Welch–Satterthwaite); t = (estimate − margin)/SE; interval estimate ± "
            "t(1 − (1 − level)/2, df)·SE"
        ),
        reference=(
            "Welch BL (1947), Biometrika 34:28-35; Donner A, Klar N (2000), Design and Analysis "
            "of Cluster Randomization Trials in Health Research, ch. 6 (cluster-level analysis)"
        ),
        oracle=(
            "scipy.stats.ttest_ind(cluster means of a, cluster means of b, equal_var=False) "
            "(statistic, P with its alternative, df); statsmodels CompareMeans.tconfint_diff("
            "usevar='unequal') for the interval"
        ),
        exactness=(
            "estimate: the exact mean of cluster means over the decimals the data write "
            "(exact['estimate'] once a comparison needs it), compared exactly; the estimate less "
            "the margin is that fraction less the margin as written (0 on it: t = 0, P = 1/2); "
            + _CLUSTER_ROOTS
            + "; Welch–Satterthwaite's df of the cluster means is a fraction of them, compared "
            "exactly; P and the bounds are floating point, each compared as the shortest "
            "decimal of its float"
        ),
    ),
    Entry(
        name="cluster-robust-mean",
        family="clustered",
        function="prereg.stats.clustered:cluster_robust_mean",
        shape="clustered-sample",
        summary="Mean or difference of arm means with a cluster-robust (sandwich) standard error",
        options={
            "arms": _ARMS + "; a cluster may hold units of both arms",
            "correction": "CR1 (factor G/(G − 1)·(N − 1)/(N − K)) | CR0 (no factor)",
            "reference": "t (df = G − 1) | normal",
            **_TEST_OPTIONS,
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p", "exact", "counts"),
        formula=(
            "OLS of x on X = 1 or (1, 1[arm a]); V = c·(X'X)⁻¹ Σ_g (X_g'e_g)(X_g'e_g)' (X'X)⁻¹, "
            "c = G/(G − 1)·(N − 1)/(N − K) (CR1) or 1 (CR0); SE = √V of the mean or of the "
            "arm coefficient (ȳ_a − ȳ_b); statistic (estimate − margin)/SE against t(G − 1) or "
            "N(0, 1); interval estimate ± quantile·SE"
        ),
        reference=(
            "Liang K-Y, Zeger SL (1986). Longitudinal data analysis using generalized linear "
            "models. Biometrika 73:13-22; Cameron AC, Miller DL (2015). A practitioner's guide "
            "to cluster-robust inference. J Human Resources 50:317-372"
        ),
        oracle=(
            "statsmodels OLS(x, X).fit(cov_type='cluster', cov_kwds={'groups': cluster, "
            "'use_correction': True for CR1 / False for CR0, 'df_correction': True}, use_t=True "
            "for t / False for normal): its default reports normal P values and applies CR1"
        ),
        exactness=(
            "estimate: exact fraction for integer data, and for decimal data the exact means of "
            "the decimals the data write (exact['estimate'] once a comparison needs it); the "
            "estimate less the margin is decided exactly near 0 (integer data, or the means of "
            "the decimals the data write): on the "
            "margin the statistic is 0 and P = 1/2; "
            + _CLUSTER_ROOTS
            + "; P and the bounds are floating point, each compared as the shortest decimal of "
            "its float"
        ),
    ),
    Entry(
        name="design-effect",
        family="clustered",
        function="prereg.stats.clustered:design_effect",
        shape="clustered-sample",
        summary="Design effect 1 + (m − 1)·ICC (one-way ANOVA ICC) and effective sample size",
        options={
            "arms": _ARMS + " (clusters nested in arms; ICC pooled within arms)",
            "cluster_size": "mean (m = N/G) | size-weighted (m = Σ m_g²/N, unequal sizes)",
            "negative_icc": "keep | truncate (a negative ANOVA ICC is set to 0)",
        },
        reports=("estimate", "counts", "extra"),
        formula=(
            "MSB = Σ_g m_g (ȳ_g − ȳ_arm)²/(G − A), MSW = Σ_i (x_i − ȳ_g)²/(N − G), "
            "m₀ = (N − Σ_arm Σ_g m_g²/N_arm)/(G − A), ICC = (MSB − MSW)/(MSB + (m₀ − 1)MSW); "
            "DE = 1 + (m − 1)·ICC, m = N/G or Σ m_g²/N; effective n = N/DE "
            "(extra: icc, icc_anova, msb, msw, m0, cluster_size, effective_n)"
        ),
        reference=(
            "Donner A, Koval JJ (1980). The estimation of intraclass correlation in the "
            "analysis of family data. Biometrics 36:19-25; Kish L (1965). Survey Sampling; "
            "Eldridge SM, Ashby D, Kerry S (2006). Sample size for cluster randomized trials: "
            "effect of coefficient of variation of cluster size. Int J Epidemiol 35:1292-1300"
        ),
        oracle=(
            "statsmodels anova_lm (type I) of OLS x ~ C(arm) + C(cluster): the sums of squares "
            "and degrees of freedom behind MSB and MSW; statsmodels MixedLM (REML) on balanced "
            "data, whose variance components equal the ANOVA ones when positive"
        ),
        exactness=(
            "the design effect and the ICC are fractions of the decimals the data write "
            "(exact['estimate'], exact['icc']), compared exactly: tenths with MSB exactly 4·MSW "
            "in clusters of 3 give a design effect of exactly 2, though its float is "
            "1.9999999999999998"
        ),
    ),
    Entry(
        name="cluster-bootstrap",
        family="clustered",
        function="prereg.stats.clustered:cluster_bootstrap",
        shape="clustered-sample",
        summary="Bootstrap interval of a mean or a difference of arm means resampling clusters",
        options={
            "arms": _ARMS + " (clusters nested in arms, resampled within their arm)",
            "weighting": "size (pooled mean of the resampled units) | equal (mean of cluster "
            "means)",
            "interval": "percentile | basic | bca",
            "level": "the interval's level, strictly between 0 and 1",
            "resamples": "the number of bootstrap resamples B (at least 1)",
            "seed": "the PCG64 seed (a whole number, at least 0)",
            "quantile_method": "numpy.quantile's method (linear, inverted_cdf, hazen, weibull, "
            "median_unbiased, normal_unbiased, ...)",
        },
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula=(
            "rng = Generator(PCG64(seed)); per arm in order (a, then b) "
            "I = rng.integers(0, G_arm, size=(B, G_arm)) over the arm's clusters in sorted-id "
            "order; θ*_r = Σ S_I / Σ m_I (size) or mean ȳ_I (equal), a − b; SE = sd(θ*) "
            "(ddof 1); percentile [q(α/2), q(1 − α/2)], basic [2θ̂ − q(1 − α/2), 2θ̂ − q(α/2)], "
            "BCa as in resampling-methods with the delete-one-cluster jackknife; α = 1 − level"
        ),
        reference=(
            "Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, §3.8 "
            "(resampling clusters); Field CA, Welsh AH (2007). Bootstrapping clustered data. "
            "JRSS B 69:369-390"
        ),
        oracle=(
            "scipy.stats.bootstrap on the clusters' indices (data=(arange(G_a), arange(G_b)), "
            "batch=None, rng=Generator(PCG64(seed)), which draws the same indices), with the "
            "statistic mapping indices to the cluster statistic; a plain loop over resamples"
        ),
        exactness=(
            "estimate: exact fraction for integer data, and for decimal data the exact means of "
            "the decimals the data write (once a comparison needs it); bounds are floating point "
            "quantiles of "
            "the replicates, compared as the shortest decimal of its float"
        ),
    ),
)
