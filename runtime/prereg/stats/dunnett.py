"""Dunnett's many-to-one comparison of several groups' means with one control group.

The groups are read in registered order: the first is the control, each later one a
treatment. With the pooled within-group variance ``s²`` (``ν = N − g`` degrees of freedom),
treatment i's difference ``d_i = x̄_i − x̄_0`` has ``se_i = s √(1/n_i + 1/n_0)`` and
``t_i = d_i / se_i``. The vector of the t's is multivariate t with ``ν`` df and correlations
``ρ_ij = λ_i λ_j``, ``λ_i = √(n_i/(n_i + n_0))`` (the shared control), so its distribution
function is a two-dimensional integral (Dunnett 1955):

    P(max_j T_j ≤ c) = ∫ f_ν(w) ∫ φ(z) Π_j Φ((c w − λ_j z)/√(1 − λ_j²)) dz dw

over ``W = √(χ²_ν/ν)``; two-sided, each factor is ``Φ((cw − λz)/σ) − Φ((−cw − λz)/σ)``.
The single-step adjusted P of treatment i is ``1 − P(max |T_j| ≤ |t_i|)`` (two-sided),
``1 − P(max T_j ≤ t_i)`` (greater: treatment above control) or ``1 − P(max T_j ≤ −t_i)``
(less); the simultaneous interval is ``d_i ± c·se_i`` with ``P(max ≤ c) = level`` (one bound
one-sided). Both integrals are computed by composite Gauss–Legendre quadrature with panels
broken where a factor steps (deterministic: the same data give the same bits), to about 1e−10.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from prereg.stats import checks
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

EPS = 2.0**-52

_NODES = 12  # Gauss–Legendre nodes per panel
_Z_SPAN = 9.0  # the inner integral over z in [-9, 9]: φ outside is below 1e-17


@functools.lru_cache(maxsize=4)
def _gauss(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(n)


def _panels(breaks: np.ndarray, n: int = _NODES) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of composite Gauss–Legendre over the ``breaks`` of each row (sorted
    along the last axis; a panel of no width has weight 0)."""
    x, w = _gauss(n)
    b = np.sort(breaks, axis=-1)
    lo, hi = b[..., :-1], b[..., 1:]
    half = (hi - lo) / 2.0
    mid = (hi + lo) / 2.0
    shape = (*b.shape[:-1], -1)
    nodes = (mid[..., None] + half[..., None] * x).reshape(shape)
    weights = (half[..., None] * w).reshape(shape)
    return nodes, weights


# φ's own panels, so that a factor without a step in the span leaves an accurate integral
_Z_BREAKS = np.array([-9.0, -6.0, -4.5, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.5, 6.0, 9.0])
_STEPS = np.array([-5.0, -1.5, 0.0, 1.5, 5.0])


def _inner_tails(xs: np.ndarray, lam: np.ndarray, two_sided: bool) -> np.ndarray:
    """``1 − ∫ φ(z) Π_j F_j(x, z) dz`` for each x of ``xs``: the chance that some standardised
    normal comparison exceeds ``x`` (in absolute value when two-sided)."""
    import scipy.special as sp

    sigma = np.sqrt(1.0 - lam * lam)
    xs = np.asarray(xs, dtype=float)[:, None]
    # panels broken where each factor steps (z = ±x/λ), with its width σ/λ around it
    steps = [np.broadcast_to(_Z_BREAKS, (xs.shape[0], _Z_BREAKS.size))]
    for lj, sj in zip(lam, sigma, strict=True):
        if lj <= 0:
            continue
        for sign in (1.0, -1.0) if two_sided else (1.0,):
            steps.append(sign * xs / lj + _STEPS * (sj / lj))
    breaks = np.clip(np.concatenate(steps, axis=1), -_Z_SPAN, _Z_SPAN)
    z, wz = _panels(breaks)  # (n_x, n_z)
    lz = lam[:, None, None] * z[None, :, :]  # (m, n_x, n_z)
    s = sigma[:, None, None]
    x = xs[None, :, :]
    # 1 − Π F_j, formed as Σ_j (1 − F_j) Π_{k<j} F_k, so that small tails keep their digits
    if two_sided:
        f = sp.ndtr((x - lz) / s) - sp.ndtr((-x - lz) / s)
        tail = sp.ndtr((lz - x) / s) + sp.ndtr((-x - lz) / s)
    else:
        f = sp.ndtr((x - lz) / s)
        tail = sp.ndtr((lz - x) / s)
    before = np.concatenate([np.ones((1, *z.shape)), np.cumprod(f, axis=0)[:-1]], axis=0)
    miss = (tail * before).sum(axis=0)
    phi = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return (wz * phi * miss).sum(axis=1)


def _w_nodes(df: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (the density of ``W = √(χ²_ν/ν)`` folded in) over W's range."""
    import scipy.special as sp

    probs = [1e-16, 1e-12, 1e-8, 1e-5, 1e-3, 0.02, 0.15, 0.4, 0.6, 0.85, 0.98, 0.999]
    probs += [1 - 1e-5, 1 - 1e-8, 1 - 1e-12, 1 - 1e-16]
    # chdtri(ν, q) is the χ² quantile with upper tail q
    qs = np.array([sp.chdtri(df, 1.0 - p) for p in probs], dtype=float)
    w_breaks = np.sqrt(qs[np.isfinite(qs)] / df)
    w, ww = _panels(w_breaks[None, :])
    w, ww = w[0], ww[0]
    # log density of W: ν^{ν/2} w^{ν−1} e^{−ν w²/2} / (2^{ν/2 − 1} Γ(ν/2))
    with np.errstate(divide="ignore"):
        logf = (
            (df / 2.0) * math.log(df)
            + (df - 1.0) * np.log(w)
            - df * w * w / 2.0
            - (df / 2.0 - 1.0) * math.log(2.0)
            - float(sp.gammaln(df / 2.0))
        )
    return w, ww * np.exp(logf)


def exceedance(c: float, lam, df: float, two_sided: bool) -> float:
    """``P(max_j T_j > c)`` (two-sided: ``max |T_j|``) of the many-to-one multivariate t with
    ``df`` degrees of freedom and correlations ``λ_i λ_j``."""
    lam = np.asarray(lam, dtype=float)
    w, ww = _w_nodes(df)
    tails = _inner_tails(c * w, lam, two_sided)
    return float(min(1.0, max(0.0, np.dot(ww, tails))))


def critical(level: float, lam, df: float, two_sided: bool) -> float:
    """``c`` with ``P(max T_j ≤ c) = level`` (two-sided: ``max |T_j|``): found between the
    quantile of one comparison and Bonferroni's, which bracket it for positive correlations
    (remembered: diagnose's simulated studies of one layout share it)."""
    return _critical(float(level), tuple(float(v) for v in lam), float(df), bool(two_sided))


@functools.lru_cache(maxsize=256)
def _critical(level: float, lam_t: tuple, df: float, two_sided: bool) -> float:
    from scipy.optimize import brentq

    alpha = 1.0 - level
    lam = np.asarray(lam_t, dtype=float)
    m = lam.size
    side = 2.0 if two_sided else 1.0
    lo = checks.t_quantile(1.0 - alpha / side, df)
    if m == 1:
        return lo
    hi = checks.t_quantile(1.0 - alpha / (side * m), df)
    f_lo = exceedance(lo, lam, df, two_sided) - alpha
    f_hi = exceedance(hi, lam, df, two_sided) - alpha
    if f_lo <= 0:  # pragma: no cover - quadrature at the edge of the bracket
        return lo
    if f_hi >= 0:  # pragma: no cover
        return hi
    return float(
        brentq(lambda c: exceedance(c, lam, df, two_sided) - alpha, lo, hi, xtol=1e-11, rtol=1e-13)
    )


def _treatment(value, g: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MethodError(
            f"treatment must be a whole number, the position in groups (counted from 1) of the"
            f" group compared with the control (the first), 2 to {g}; got {value!r}"
        )
    if not 2 <= int(value) <= g:
        raise MethodError(
            f"treatment must lie from 2 to {g}, the number of groups (group 1 is the control),"
            f" got {value!r}"
        )
    return int(value)


def dunnett(groups, *, treatment, alternative, level) -> Result:
    """Dunnett's single-step comparison of the group at position ``treatment`` (from 2; the
    first group is the control) with the control, adjusted over every treatment of ``groups``
    (the family-wise P and the simultaneous interval; see the module's docstring)."""
    from prereg.stats.compare import _exact_mean as decimal_mean
    from prereg.stats.continuous import _variance

    gs = checks.groups(groups)
    g = len(gs)
    i = _treatment(treatment, g) - 1
    checks.alternative(alternative)
    lv = checks.level(level)
    sizes = [int(a.size) for a in gs]
    counts = {"n": sizes, "control": 1, "treatment": i + 1}
    name = "dunnett"
    if any(m == 0 for m in sizes):
        empty = [j + 1 for j, m in enumerate(sizes) if m == 0]
        return Result(
            name, statistic_name="t", counts=counts, extra={"undefined": f"empty group {empty}"}
        )
    x0, xi = gs[0], gs[i]
    exact = {}
    if checks.integral(x0) and checks.integral(xi):
        exact["estimate"] = Fraction(checks.exact_sum(xi), xi.size) - Fraction(
            checks.exact_sum(x0), x0.size
        )
        est = float(exact["estimate"])
    else:
        est = float(xi.mean()) - float(x0.mean())
    big_n = sum(sizes)
    df = big_n - g
    if df < 1:
        return Result(name, estimate=est, statistic_name="t", exact=exact, counts=counts)
    ssw = math.fsum(_variance(a) * (a.size - 1) for a in gs if a.size > 1)
    s2 = ssw / df
    if not s2 > 0:
        return Result(name, estimate=est, statistic_name="t", exact=exact, counts=counts)
    n0 = sizes[0]
    se_of = [math.sqrt(s2 * (1.0 / m + 1.0 / n0)) for m in sizes]
    lam = np.array([math.sqrt(m / (m + n0)) for m in sizes[1:]])
    two = alternative == "two-sided"

    def difference(a: np.ndarray) -> float:
        d = float(a.mean()) - float(x0.mean())
        bound = 16.0 * EPS * ((a.size + 4) * float(np.abs(a).mean()))
        bound += 16.0 * EPS * ((x0.size + 4) * float(np.abs(x0).mean()))
        if abs(d) > bound:
            return d
        return float(decimal_mean(a) - decimal_mean(x0))  # 0 exactly when the means are equal

    ts = [difference(gs[j]) / se_of[j] for j in range(1, g)]
    t = ts[i - 1]
    se = se_of[i]
    if two:
        p = exceedance(abs(t), lam, df, True)
    elif alternative == "greater":
        p = exceedance(t, lam, df, False)
    else:
        p = exceedance(-t, lam, df, False)
    c = critical(lv, lam, df, two)
    lower = upper = None
    if two:
        lower, upper = est - c * se, est + c * se
    elif alternative == "greater":
        lower = est - c * se
    else:
        upper = est + c * se
    return Result(
        name,
        estimate=est,
        se=se,
        statistic=t,
        statistic_name="t",
        df=float(df),
        lower=lower,
        upper=upper,
        p=p,
        exact=exact,
        counts=counts,
        extra={"critical": c, "statistics": ts, "pooled_variance": s2},
    )
