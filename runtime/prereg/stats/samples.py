"""Figures of samples of numbers and of paired binary outcomes.

Continuous metrics (a mean, a mean of logs, a ratio of geometric means):

- :func:`t_interval`: the mean of a sample with its Student t interval
  ``mean ± t(1 − (1 − level)/2, n − 1) · s/√n``.
- :func:`welch`: the difference of two independent means with the Welch–Satterthwaite t
  interval, and :func:`welch_test`, its test of ``mean_a − mean_b`` against a margin.
- :func:`paired_t_test`: the one-sample t test of paired differences against a margin (its
  interval is :func:`t_interval` of the differences).
- :func:`bootstrap_interval`: a seeded percentile bootstrap of any statistic of one or two
  samples (paired samples are resampled by pair, independent ones each on its own).

Paired binary outcomes, as the four counts of a 2×2 table of pairs — ``n11`` (both arms met
the condition), ``n10`` (arm a only), ``n01`` (arm b only), ``n00`` (neither):

- :func:`mcnemar_exact`: the exact McNemar test on the discordant pairs (binomial with p = ½
  over ``n10 + n01``), two-sided or one-sided.
- :func:`newcombe_paired`: Newcombe's (1998) method 10 for the difference of paired
  proportions ``(n10 − n01)/n``: the Wilson score intervals of both margins combined through
  the correlation φ of the table, φ's numerator ``n11·n00 − n10·n01`` reduced by ``n/2``
  (and not below 0) when it is positive, φ = 0 when a margin is empty.

Every function takes plain numbers or 1-D arrays and gives floats; NaN (never a warning)
where a figure is undefined (an empty sample, one value for a variance, no pairs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

_NAN = float("nan")


def _sample(x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(a)):
        raise ValueError("a sample must hold finite numbers only")
    return a


def _level(level: float) -> float:
    lv = float(level)
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def _t_quantile(p: float, df: float) -> float:
    from prereg.stats.resampling import t_quantile

    return float(t_quantile(p, df))


def _t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(stdtr(df, -t))


def _p_value(t: float, df: float, alternative: str) -> float:
    if math.isnan(t) or math.isnan(df):
        return _NAN
    if alternative == "two-sided":
        return min(1.0, 2.0 * _t_sf(abs(t), df))
    if alternative == "greater":
        return _t_sf(t, df)
    if alternative == "less":
        return _t_sf(-t, df)
    raise ValueError(f"unknown alternative {alternative!r}")


def mean_sd(x) -> tuple[int, float, float]:
    """(n, mean, sample standard deviation); NaN where undefined."""
    a = _sample(x)
    n = int(a.size)
    if n == 0:
        return 0, _NAN, _NAN
    m = float(a.mean())
    sd = math.sqrt(_variance(a)) if n > 1 else _NAN
    return n, m, sd


def _variance(a, pairs=None) -> float:
    from prereg.stats.continuous import _variance as variance

    return variance(a, pairs)


def t_interval(x, *, level: float) -> tuple[float, float, float]:
    """(mean, lower, upper): the two-sided Student t interval of the mean of ``x``."""
    lv = _level(level)
    n, m, sd = mean_sd(x)
    if n < 2:
        return m, _NAN, _NAN
    half = _t_quantile(1.0 - (1.0 - lv) / 2.0, n - 1) * sd / math.sqrt(n)
    return m, m - half, m + half


def _welch_parts(x, y) -> tuple[float, float, float]:
    """(difference of means, its standard error, Welch–Satterthwaite degrees of freedom)."""
    nx, mx, sx = mean_sd(x)
    ny, my, sy = mean_sd(y)
    if nx < 2 or ny < 2:
        return (mx - my) if nx and ny else _NAN, _NAN, _NAN
    vx, vy = sx * sx / nx, sy * sy / ny
    se = math.sqrt(vx + vy)
    if se == 0:
        return mx - my, 0.0, _NAN
    df = (vx + vy) ** 2 / (vx * vx / (nx - 1) + vy * vy / (ny - 1))
    return mx - my, se, df


def welch(x, y, *, level: float) -> tuple[float, float, float]:
    """(mean(x) − mean(y), lower, upper): the Welch–Satterthwaite t interval."""
    lv = _level(level)
    d, se, df = _welch_parts(x, y)
    if math.isnan(se) or math.isnan(df):
        return d, _NAN, _NAN
    half = _t_quantile(1.0 - (1.0 - lv) / 2.0, df) * se
    return d, d - half, d + half


def welch_test(x, y, *, alternative: str, margin: float) -> tuple[float, float]:
    """(t, P) of Welch's t test of ``mean(x) − mean(y) − margin`` (unequal variances)."""
    d, se, df = _welch_parts(x, y)
    if math.isnan(se) or math.isnan(df) or se == 0:
        return _NAN, _NAN
    from prereg.stats.continuous import margin_deviation

    samples = ((_sample(x), 1), (_sample(y), -1))
    t = margin_deviation(d, float(margin), samples) / se
    return t, _p_value(t, df, alternative)


def welch_se_df(x, y) -> tuple[float, float]:
    """(standard error, degrees of freedom) of Welch's t test of ``mean(x) − mean(y)``: the
    unpooled ``√(s²x/nx + s²y/ny)`` and the Welch–Satterthwaite df (NaN where the test gives
    no statistic: an arm of fewer than 2, or both arms without spread)."""
    _, se, df = _welch_parts(x, y)
    if math.isnan(se) or math.isnan(df) or se == 0:
        return _NAN, _NAN
    return se, df


def _paired_mean_sd(d, pairs) -> tuple[int, float, float]:
    """mean_sd of the differences ``d``, their spread 0 when ``pairs`` (the two samples whose
    differences ``d`` are) differ by one decimal throughout."""
    n, m, sd = mean_sd(d)
    if pairs is not None and n > 1 and sd > 0:
        a = _sample(d)
        sd = math.sqrt(_variance(a, (_sample(pairs[0]), _sample(pairs[1]))))
    return n, m, sd


def paired_se_df(d, pairs=None) -> tuple[float, float]:
    """(standard error, degrees of freedom) of the one-sample t test of the paired differences
    ``d``: ``sd/√n`` and ``n − 1`` (NaN where the test gives no statistic; ``pairs`` as in
    :func:`paired_t_test`)."""
    n, _, sd = _paired_mean_sd(d, pairs)
    if n < 2 or math.isnan(sd) or sd == 0:
        return _NAN, _NAN
    return sd / math.sqrt(n), float(n - 1)


def paired_t_test(d, *, alternative: str, margin: float, pairs=None) -> tuple[float, float]:
    """(t, P) of the one-sample t test of the mean of the paired differences ``d`` against
    ``margin``; with ``pairs`` (the samples a, b whose differences ``d`` are), the mean less the
    margin is decided on the decimals the data write near 0 and equal decimal differences
    have no spread (:func:`prereg.stats.continuous.margin_deviation`)."""
    from prereg.stats.continuous import margin_deviation

    n, m, sd = _paired_mean_sd(d, pairs)
    if n < 2 or math.isnan(sd) or sd == 0:
        return _NAN, _NAN
    samples = None
    if pairs is not None:
        samples = ((_sample(pairs[0]), 1), (_sample(pairs[1]), -1))
    t = margin_deviation(m, float(margin), samples) / (sd / math.sqrt(n))
    return t, _p_value(t, n - 1, alternative)


def bootstrap_interval(
    samples: Sequence,
    statistic: Callable[..., float],
    *,
    level: float,
    resamples: int,
    seed: int,
    paired: bool = False,
    arms: Sequence[int] | None = None,
) -> tuple[float, float]:
    """(lower, upper): the percentile bootstrap interval of ``statistic(*samples)``.

    The samples form ``arms``: consecutive groups of samples of one length, resampled together
    (the default: every sample on its own; with ``paired``, all of them as one arm). The
    generator is numpy's PCG64 seeded with ``seed``; each resample draws, arm by arm in order,
    ``n`` indexes with replacement (``Generator.integers(0, n, n)``, n the arm's length). The
    bounds are numpy's default (linear) quantiles ``(1 − level)/2`` and ``(1 + level)/2`` of
    the resampled statistics; resamples whose statistic is not finite are left out, and the
    interval is NaN when fewer than half remain.
    """
    lv = _level(level)
    arrays = [np.asarray(s) for s in samples]
    if arms is None:
        arms = (len(arrays),) if paired else (1,) * len(arrays)
    if sum(arms) != len(arrays):
        raise ValueError("the arms must cover the samples")
    groups, at = [], 0
    for k in arms:
        group = arrays[at : at + k]
        at += k
        if len({a.shape[0] for a in group}) != 1:
            raise ValueError("the samples of one arm must have equal lengths")
        groups.append(group)
    if any(g[0].shape[0] == 0 for g in groups):
        return _NAN, _NAN
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    stats = np.empty(int(resamples))
    for r in range(int(resamples)):
        drawn = []
        for group in groups:
            n = group[0].shape[0]
            idx = rng.integers(0, n, n)
            drawn.extend(a[idx] for a in group)
        stats[r] = statistic(*drawn)
    ok = np.isfinite(stats)
    if ok.sum() * 2 < stats.size or not ok.any():
        return _NAN, _NAN
    lo, hi = np.quantile(stats[ok], [(1.0 - lv) / 2.0, (1.0 + lv) / 2.0])
    return float(lo), float(hi)


# -- paired binary outcomes --------------------------------------------------------------------


def _table(n11, n10, n01, n00) -> tuple[int, int, int, int]:
    t = tuple(int(v) for v in (n11, n10, n01, n00))
    if min(t) < 0:
        raise ValueError(f"a table of pairs has counts of at least 0, got {t}")
    return t  # type: ignore[return-value]


EXACT_SUM_LIMIT = 2000  # discordant pairs up to which the P value is summed in integers


def mcnemar_exact_figure(n11, n10, n01, n00, *, alternative: str):
    """P of McNemar's exact test as a figure the certified comparison decides exactly: under
    the null a discordant pair is (1, 0) with chance ½, X ~ Binomial(n10 + n01, ½);
    "two-sided": min(1, 2 · P(X ≤ min(n10, n01))); "greater" (arm a above arm b): P(X ≥ n10);
    "less": P(X ≤ n10); 1 with no discordant pair.

    Up to :data:`EXACT_SUM_LIMIT` discordant pairs the P value is the fraction summed in
    integers; beyond, a :class:`prereg.stats.compare.Certified` figure: its float from the
    binomial CDF in log space (scipy) and its balls from the regularized incomplete beta
    function, P(X ≤ k) = I_{1/2}(m − k, k + 1) (python-flint), so any number of pairs works."""
    from fractions import Fraction

    _, b, c, _ = _table(n11, n10, n01, n00)
    m = b + c
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"unknown alternative {alternative!r}")
    if m == 0:
        return Fraction(1)
    # the tail as P(X <= k), times a factor (2 for two-sided), or its complement
    if alternative == "two-sided":
        k, factor, upper = min(b, c), 2, False
    elif alternative == "greater":  # P(X >= b) = P(X <= m - b) by symmetry
        k, factor, upper = m - b, 1, False
    else:
        k, factor, upper = b, 1, False
    del upper
    if m <= EXACT_SUM_LIMIT:
        tail = Fraction(sum(math.comb(m, j) for j in range(k + 1)), 2**m)
        return min(Fraction(1), factor * tail)
    from scipy.stats import binom

    from prereg.stats.compare import Certified

    value = min(1.0, factor * float(binom.cdf(k, m, 0.5)))

    def ball(prec):
        from flint import arb

        p = arb(0.5).beta_lower(m - k, k + 1, regularized=True) * factor
        return p if not p > 1 else arb(1)

    return Certified(value, ball=ball)


def mcnemar_exact(n11, n10, n01, n00, *, alternative: str) -> float:
    """P of McNemar's exact test as a float (see :func:`mcnemar_exact_figure`)."""
    return float(mcnemar_exact_figure(n11, n10, n01, n00, alternative=alternative))


def newcombe_paired(n11, n10, n01, n00, *, level: float) -> tuple[float, float, float]:
    """(difference, lower, upper) for p_a − p_b = (n10 − n01)/n by Newcombe's method 10."""
    from prereg.stats.proportions import wilson_interval

    lv = _level(level)
    a, b, c, d = _table(n11, n10, n01, n00)
    n = a + b + c + d
    if n == 0:
        return _NAN, _NAN, _NAN
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = (float(v) for v in wilson_interval(a + b, n, level=lv))
    l2, u2 = (float(v) for v in wilson_interval(a + c, n, level=lv))
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        num = a * d - b * c
        if num > 0:
            num = max(num - n / 2.0, 0.0)
        phi = num / math.sqrt(margins)
    diff = p1 - p2
    lower = diff - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2.0 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    upper = diff + math.sqrt(
        max(0.0, (p2 - l2) ** 2 - 2.0 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    )
    return (b - c) / n, lower, upper
