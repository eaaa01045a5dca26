"""Resampling primitives: delete-one jackknife standard errors, t quantiles, percentile bootstrap.

Everything here is vectorized over many cohorts at once: the last axis of an array holds the
units of one cohort (clusters or unit slots) and every leading axis indexes cohorts.  Per-cohort
results depend only on that cohort's values (row reductions, no products across cohorts), so
they are bit-identical whatever the number of cohorts evaluated together.

The weighted two-stratum mean estimator
    θ̂ = w_pass · mean(pass statistics) + w_fail · mean(fail statistics)
has closed-form delete-one jackknife standard errors:

* cluster level (:func:`cluster_jackknife_two_stratum`): the units are clusters, each deleting
  all of its statistics; from per-cluster sums and counts of each stratum.
* unit level (:func:`unit_jackknife_two_stratum`): the units are slots holding at most one
  statistic of each stratum, deleted together.  With N_p, N_f the stratum counts and m_p, m_f
  the stratum means, θ̂₍₋ᵢ₎ − θ̂ = α·a_i·(m_p − x_i) + β·b_i·(m_f − y_i), α = w_pass/(N_p − 1),
  β = w_fail/(N_f − 1).  These differences sum to 0, so the mean of the leave-one-out
  estimates equals θ̂ and SE² = (k − 1)/k · Σ (θ̂₍₋ᵢ₎ − θ̂)².

A cohort is *degenerate* (θ̂ and SE are NaN) when a stratum holds fewer than 2 statistics, when
a leave-one-out estimate is undefined (a deleted cluster held all of a stratum's statistics),
when there are fewer than 2 units, or when the arithmetic is not finite.

No function here has a statistical default a study did not choose: levels, weights, replicate
counts and seeds are arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BootstrapInterval",
    "cluster_jackknife_two_stratum",
    "cluster_t_critical",
    "jackknife_se",
    "percentile_bootstrap_interval",
    "segment_sums",
    "t_quantile",
    "two_sided_quantile",
    "unit_jackknife_two_stratum",
    "unit_jackknife_two_stratum_filled",
]


# --------------------------------------------------------------------------------------------
# jackknife


def jackknife_se(leave_one_out_estimates, axis: int = -1) -> np.ndarray | float:
    """Delete-one jackknife SE from the k leave-one-out estimates along ``axis``.

    SE = √((k − 1)/k · Σ (θ̂₍₋ⱼ₎ − θ̄)²), θ̄ the mean of the k estimates.  NaN when k < 2 or any
    estimate of the cohort is not finite.
    """
    loo = np.asarray(leave_one_out_estimates, dtype=np.float64)
    loo = np.moveaxis(loo, axis, -1)
    k = loo.shape[-1]
    if k < 2:
        out = np.full(loo.shape[:-1], np.nan)
        return out if out.ndim else float(out)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = loo.sum(axis=-1) / k
        dev = loo - mean[..., None]
        se = np.sqrt((k - 1) / k * (dev * dev).sum(axis=-1))
    se = np.where(np.isfinite(se), se, np.nan)
    return se if se.ndim else float(se)


def segment_sums(values, lengths) -> np.ndarray:
    """Sums of consecutive segments of the last axis of ``values``.

    ``values`` has shape (..., n); ``lengths`` has shape (..., k) of positive integers summing
    to n in each cohort.  Returns shape (..., k).  Uses ``np.add.reduceat`` on the flattened
    array, so each segment's sum depends only on that segment.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = values.shape[-1]
    if lengths.shape[:-1] != values.shape[:-1]:
        raise ValueError("values and lengths must share their leading (cohort) axes")
    if np.any(lengths < 1):
        raise ValueError("segment lengths must be positive")
    if np.any(lengths.sum(axis=-1) != n):
        raise ValueError("segment lengths must sum to the length of the last axis")
    flat_len = lengths.reshape(-1)
    starts = np.empty(flat_len.shape[0], dtype=np.intp)
    if starts.size:
        starts[0] = 0
        np.cumsum(flat_len[:-1], out=starts[1:])
    out = np.add.reduceat(values.reshape(-1), starts) if starts.size else np.zeros(0)
    return out.reshape(lengths.shape)


def _weights(w_pass: float, w_fail: float) -> tuple[float, float]:
    w_pass, w_fail = float(w_pass), float(w_fail)
    if not (math.isfinite(w_pass) and math.isfinite(w_fail)):
        raise ValueError("stratum weights must be finite")
    return w_pass, w_fail


def cluster_jackknife_two_stratum(
    sum_pass, count_pass, sum_fail, count_fail, w_pass: float, w_fail: float
) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂, cluster-level jackknife SE) per cohort from per-cluster stratum sums and counts.

    Each argument has shape (..., k): cohort axes then the k clusters (a cluster drawn twice is
    two clusters).  Deleting cluster g removes its sums and counts of both strata.  Returns two
    arrays of shape (...); NaN for degenerate cohorts (see the module docstring).
    """
    w_pass, w_fail = _weights(w_pass, w_fail)
    sp = np.asarray(sum_pass, dtype=np.float64)
    sf = np.asarray(sum_fail, dtype=np.float64)
    cp = np.asarray(count_pass, dtype=np.float64)
    cf = np.asarray(count_fail, dtype=np.float64)
    k = sp.shape[-1]
    tot_sp = sp.sum(axis=-1)
    tot_sf = sf.sum(axis=-1)
    tot_cp = cp.sum(axis=-1)
    tot_cf = cf.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        theta = w_pass * (tot_sp / tot_cp) + w_fail * (tot_sf / tot_cf)
        rest_cp = tot_cp[..., None] - cp
        rest_cf = tot_cf[..., None] - cf
        loo = w_pass * ((tot_sp[..., None] - sp) / rest_cp) + w_fail * (
            (tot_sf[..., None] - sf) / rest_cf
        )
        if k >= 2:
            mean = loo.sum(axis=-1) / k
            dev = loo - mean[..., None]
            se = np.sqrt((k - 1) / k * (dev * dev).sum(axis=-1))
        else:
            se = np.full(theta.shape, np.nan)
    # (array methods, and the NaN marks only when a cohort needs one: a simulation calls this
    # once per small batch, where numpy's Python-level dispatch is most of the time)
    bad = (tot_cp < 2) | (tot_cf < 2) | (rest_cp <= 0).any(axis=-1) | (rest_cf <= 0).any(axis=-1)
    bad |= ~np.isfinite(theta)
    bad |= ~np.isfinite(se)
    if bad.any():
        return np.where(bad, np.nan, theta), np.where(bad, np.nan, se)
    return np.asarray(theta), np.asarray(se)


def _centred(v: np.ndarray, has: np.ndarray | None, mean: np.ndarray) -> np.ndarray:
    """v − has·mean (a new array): the deviations of present values, 0 at absent slots."""
    if has is None:
        return np.subtract(v, mean[..., None])
    out = np.multiply(has, mean[..., None])
    np.subtract(v, out, out=out)
    return out


def unit_jackknife_two_stratum_filled(
    x, a, y, b, w_pass: float, w_fail: float, count_pass=None, count_fail=None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unit_jackknife_two_stratum` on zero-filled float64 slot arrays (no copies).

    ``x``/``y`` (..., n) hold 0.0 where a slot has no statistic of the stratum; ``a``/``b``
    are 0.0/1.0 float64 presence arrays of the same shape, or ``None`` when every slot holds a
    statistic of that stratum.  For hot loops that already hold arrays in this form.
    ``count_pass``/``count_fail`` (float64, shape (...)) may give the per-cohort counts the
    caller already has (the sums of ``a``/``b``; integers, so exactly the same whatever the
    order of summation); without them they are summed here.
    """
    n = x.shape[-1]
    sp = x.sum(axis=-1)
    sf = y.sum(axis=-1)
    if count_pass is not None:
        np_ = count_pass
    else:
        np_ = a.sum(axis=-1) if a is not None else np.full(sp.shape, float(n))
    if count_fail is not None:
        nf = count_fail
    else:
        nf = b.sum(axis=-1) if b is not None else np.full(sf.shape, float(n))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mp = sp / np_
        mf = sf / nf
        theta = w_pass * mp + w_fail * mf
        alpha = w_pass / (np_ - 1.0)
        beta = w_fail / (nf - 1.0)
        # d_i = α·a_i·(x_i − m_p) + β·b_i·(y_i − m_f)   (the sign of θ̂₍₋ᵢ₎ − θ̂ does not matter)
        d = _centred(x, a, mp)
        d *= alpha[..., None]
        t = _centred(y, b, mf)
        t *= beta[..., None]
        d += t
        ss = np.einsum("...i,...i->...", d, d)
        se = np.sqrt((n - 1) / n * ss) if n >= 2 else np.full(theta.shape, np.nan)
    bad = (np_ < 2) | (nf < 2)
    bad |= ~np.isfinite(theta)
    bad |= ~np.isfinite(se)
    if bad.any():
        return np.where(bad, np.nan, theta), np.where(bad, np.nan, se)
    return np.asarray(theta), np.asarray(se)


def unit_jackknife_two_stratum(
    x_pass, has_pass, x_fail, has_fail, w_pass: float, w_fail: float
) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂, unit-level jackknife SE) per cohort from slot arrays of shape (..., n).

    Slot i holds pass statistic ``x_pass[..., i]`` when ``has_pass[..., i]`` is true and fail
    statistic ``x_fail[..., i]`` when ``has_fail[..., i]`` is true (values at absent slots are
    ignored); deleting slot i deletes both.  ``has_pass``/``has_fail`` may be ``None``: every
    slot holds that stratum.  Returns two arrays of shape (...); NaN for degenerate cohorts.
    """
    w_pass, w_fail = _weights(w_pass, w_fail)
    x = np.asarray(x_pass, dtype=np.float64)
    y = np.asarray(x_fail, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError("x_pass and x_fail must have the same shape")
    a = b = None
    if has_pass is not None:
        hp = np.asarray(has_pass, dtype=bool)
        x = np.where(hp, x, 0.0)
        a = hp.astype(np.float64)
    if has_fail is not None:
        hf = np.asarray(has_fail, dtype=bool)
        y = np.where(hf, y, 0.0)
        b = hf.astype(np.float64)
    return unit_jackknife_two_stratum_filled(x, a, y, b, w_pass, w_fail)


# --------------------------------------------------------------------------------------------
# t quantiles


def t_quantile(p, df):
    """Quantile of Student's t with ``df`` degrees of freedom (``scipy.special.stdtrit``).

    Accurate to about 1e-12 relative or better.  ``p`` in (0, 1), ``df`` > 0 (arrays
    broadcast).  A scalar ``p`` of 0.975 (a two-sided 0.95 level) with a whole ``df`` up to
    :data:`prereg.stats.t_table.DF_MAX` is read from the table of stdtrit's own values
    (:mod:`prereg.stats.t_table`, the same float: importing scipy.special, whose package
    imports numpy's array-API namespace, would more than double the start-up of the d17
    ``score`` and add half to the s3 ``power-plan``'s: README, "Start-up"); anything else is
    computed by scipy.special's public ``stdtrit``, imported at the first such call.
    """
    tabled = _tabled_t_quantile(p, df)
    if tabled is not None:
        return tabled
    from scipy.special import stdtrit

    p_arr = np.asarray(p, dtype=np.float64)
    df_arr = np.asarray(df, dtype=np.float64)
    if np.any(~(p_arr > 0) | ~(p_arr < 1)):
        raise ValueError("t_quantile: p must lie strictly between 0 and 1")
    if np.any(~(df_arr > 0)):
        raise ValueError("t_quantile: df must be positive")
    out = stdtrit(df_arr, p_arr)
    return float(out) if np.ndim(out) == 0 else out


def _tabled_t_quantile(p, df) -> float | None:
    """stdtrit(df, p) from :mod:`prereg.stats.t_table` for a scalar p == 0.975 and a whole
    df in 1..DF_MAX (Python or numpy numbers), else None."""
    if not isinstance(p, float | np.floating) or p != 0.975:
        return None
    if isinstance(df, int | np.integer) and not isinstance(df, bool):
        k = int(df)
    elif isinstance(df, float | np.floating) and float(df).is_integer():
        k = int(df)
    else:
        return None
    from prereg.stats import t_table

    if not 1 <= k <= t_table.DF_MAX or p != t_table.Q:
        return None
    return t_table.T_0975[k - 1]


def two_sided_quantile(level: float) -> float:
    """The upper quantile 1 − (1 − level)/2 that a two-sided ``level`` interval uses."""
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError("two-sided level must lie strictly between 0 and 1")
    return 1.0 - (1.0 - level) / 2.0


def cluster_t_critical(level: float, clusters):
    """Two-sided ``level`` cluster-t critical value: t(1 − (1 − level)/2, clusters − 1)."""
    g = np.asarray(clusters)
    if np.any(g < 2):
        raise ValueError("cluster-t needs at least 2 clusters")
    return t_quantile(two_sided_quantile(level), g - 1)


# --------------------------------------------------------------------------------------------
# percentile bootstrap


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval with everything needed to reproduce it."""

    estimate: float
    lower: float
    upper: float
    level: float
    replicates: int
    seed: int
    spawn_key: tuple[int, ...]
    quantile_method: str
    nonfinite_replicates: int

    def as_dict(self) -> dict:
        return {
            "estimate": self.estimate,
            "lower": self.lower,
            "upper": self.upper,
            "level": self.level,
            "replicates": self.replicates,
            "seed": self.seed,
            "spawn_key": list(self.spawn_key),
            "quantile_method": self.quantile_method,
            "nonfinite_replicates": self.nonfinite_replicates,
        }


def percentile_bootstrap_interval(
    values,
    statistic: Callable[[np.ndarray], np.ndarray],
    replicates: int,
    level: float,
    seed: int,
    *,
    quantile_method: str,
    spawn_key: tuple[int, ...] = (),
    chunk: int = 1000,
) -> BootstrapInterval:
    """Two-sided percentile bootstrap interval of ``statistic`` over resamples of ``values``.

    ``values`` has shape (k, ...): its first axis holds the resampling units (clusters for a
    cluster bootstrap, tasks for a task bootstrap).  Each replicate draws k units with
    replacement from ``numpy.random.Generator(PCG64(SeedSequence(seed, spawn_key)))``: all
    indices at once, ``integers(0, k, size=(replicates, k))``.  ``statistic`` is vectorized: it
    receives an array of shape (r, k, ...) of r resamples and returns shape (r,); it is also
    called once on ``values[None]`` for the point estimate.  Replicates are evaluated ``chunk``
    at a time, which does not change any draw.

    The interval is the (1 − level)/2 and 1 − (1 − level)/2 quantiles of the replicate
    statistics, by ``numpy.quantile(method=quantile_method)``; the method has no default (the
    study names it; ``"linear"`` is Hyndman & Fan type 7).  When a replicate statistic is not finite the bounds are NaN and the count is
    recorded.  The seed, spawn key, replicate count and method are recorded in the result.
    """
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ValueError("replicates must be a positive integer")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError("seed must be a non-negative integer")
    if chunk < 1:
        raise ValueError("chunk must be positive")
    q_hi = two_sided_quantile(level)
    q_lo = (1.0 - float(level)) / 2.0
    data = np.asarray(values)
    if data.ndim < 1 or data.shape[0] < 1:
        raise ValueError("values must have at least one unit along the first axis")
    k = data.shape[0]
    key = tuple(int(s) for s in spawn_key)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))
    idx = rng.integers(0, k, size=(replicates, k))
    stats = np.empty(replicates, dtype=np.float64)
    for lo in range(0, replicates, chunk):
        hi = min(lo + chunk, replicates)
        res = np.asarray(statistic(np.take(data, idx[lo:hi], axis=0)), dtype=np.float64)
        if res.shape != (hi - lo,):
            raise ValueError("statistic must return one value per resample")
        stats[lo:hi] = res
    estimate = float(np.asarray(statistic(data[None]), dtype=np.float64).reshape(-1)[0])
    finite = np.isfinite(stats)
    nonfinite = int((~finite).sum())
    if nonfinite:
        lower = upper = float("nan")
    else:
        lower, upper = (float(v) for v in np.quantile(stats, [q_lo, q_hi], method=quantile_method))
    return BootstrapInterval(
        estimate=estimate,
        lower=lower,
        upper=upper,
        level=float(level),
        replicates=replicates,
        seed=seed,
        spawn_key=key,
        quantile_method=quantile_method,
        nonfinite_replicates=nonfinite,
    )
