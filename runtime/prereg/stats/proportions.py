"""Binomial proportions: Wilson and Clopper–Pearson intervals, Newcombe difference interval,
pooled two-proportion z, Farrington–Manning score test against a margin.

Conventions (d17-multifact, "Scoring" and "Decision rules"):

- Wilson score interval for ``p̂ = k/n``: centre ``(p̂ + z²/2n) / (1 + z²/n)``, half-width
  ``z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)``, bounds clipped to [0, 1].
- Newcombe hybrid score interval for ``d = p1 − p2`` (Newcombe 1998, method 10) built from the
  clipped Wilson bounds ``(l, u)``: lower ``d − √((p1−l1)² + (u2−p2)²)``, upper
  ``d + √((u1−p1)² + (p2−l2)²)``.
- Pooled two-proportion z test: ``p = (k1+k2)/(n1+n2)``, ``se = √(p(1−p)(1/n1 + 1/n2))``,
  ``z = (k1/n1 − k2/n2)/se``, two-sided ``P = 2·Φ(−|z|)``; when ``se = 0`` (both arms all-yes
  or all-no, so the difference is exactly 0) ``z = 0`` and ``P = 1``.

Beyond d17:

- Clopper–Pearson ("exact") interval: the ``(1 − level)/2`` quantile of Beta(k, n − k + 1) and
  the ``(1 + level)/2`` quantile of Beta(k + 1, n − k); the lower bound is 0 at ``k = 0``, the
  upper 1 at ``k = n``.
- Farrington–Manning score test of ``p1 − p2 = δ`` (Farrington & Manning 1990):
  ``z = (p̂1 − p̂2 − δ) / √(p̃1(1−p̃1)/n1 + p̃2(1−p̃2)/n2)`` where ``(p̃1, p̃2 = p̃1 − δ)`` maximise
  the binomial likelihood under the constraint; the maximiser is the root of the likelihood
  equation's cubic, started from its closed form (Miettinen & Nurminen 1985) and polished by
  a safeguarded Newton iteration on the score for the smallest of ``p̃1, p̃2, 1 − p̃1, 1 − p̃2``
  (taken exactly when it lies on an end of [0, 1]), without their ``n/(n − 1)`` variance
  factor; the numerator ``p̂1 − p̂2 − δ`` is formed from the integer counts and an exact split
  of ``δ·n1·n2``, so that z keeps full relative precision at any n and margin (a few ulps
  against 60-digit references at n = 3·10⁸, δ = 10⁻¹²).  At ``δ = 0`` the constrained
  estimate is the pooled proportion and the test is the pooled z test (``z = 0``, ``P = 1``
  when its SE is 0).
- One-sided P values from a z statistic: "greater" (H1: ``p1 − p2 > δ``) ``P = Φ(−z)``,
  "less" (H1: ``p1 − p2 < δ``) ``P = Φ(z)``, "two-sided" ``P = 2·Φ(−|z|)``; so ``z = 0`` gives
  ``P = 0.5`` one-sided and ``P = 1`` two-sided.

The critical value is given either as a two-sided ``level`` (``z = Φ⁻¹((1 + level)/2)``, the
exact normal quantile) or directly as ``z``; exactly one of them must be passed, there is no
default (Clopper–Pearson takes ``level`` only).  An arm with ``n = 0`` has no proportion: its
results are NaN (missing), computed without a division warning.

Every function accepts scalars or arrays (broadcast together); scalar inputs give Python
floats, array inputs give numpy arrays.
"""

from __future__ import annotations

import numpy as np


class _Loaded:
    """A function of scipy.special's public API, imported at its first call (so that
    importing this module does not import scipy) and called as it is."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._fn = None

    def __call__(self, *args):
        fn = self._fn
        if fn is None:
            import scipy.special

            fn = self._fn = getattr(scipy.special, self.name)
        return fn(*args)


betainccinv = _Loaded("betainccinv")
betaincinv = _Loaded("betaincinv")
ndtr = _Loaded("ndtr")
ndtri = _Loaded("ndtri")

# Φ⁻¹((1 + level)/2) at the usual two-sided levels: scipy.special.ndtri's own values (the
# tests compare each with it bit for bit), so that a Wilson or Newcombe bound at one of these
# levels needs no quantile function at all.
_CRITICAL = {
    0.5: 0.6744897501960817,
    0.8: 1.2815515655446004,
    0.9: 1.6448536269514722,
    0.95: 1.959963984540054,
    0.98: 2.3263478740408408,
    0.99: 2.5758293035489004,
    0.995: 2.807033768343811,
    0.999: 3.2905267314919255,
}


def critical_z(level=None, z=None) -> float:
    """The two-sided critical value: ``z`` itself, or ``Φ⁻¹((1 + level)/2)`` for a ``level``.

    Exactly one of ``level`` (in (0, 1)) and ``z`` (finite, > 0) must be given.
    """
    if (level is None) == (z is None):
        raise TypeError("give exactly one of level= and z=")
    if z is not None:
        zf = float(z)
        if not (np.isfinite(zf) and zf > 0):
            raise ValueError(f"z must be a finite positive number, got {z!r}")
        return zf
    lv = float(level)
    if not (0.0 < lv < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    known = _CRITICAL.get(lv)
    return known if known is not None else float(ndtri((1.0 + lv) / 2.0))


def _counts(k, n, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    ka = np.asarray(k, dtype=np.float64)
    na = np.asarray(n, dtype=np.float64)
    kn, nn = names
    if not (np.all(np.isfinite(ka)) and np.all(np.isfinite(na))):
        raise ValueError(f"{kn} and {nn} must be finite counts")
    if np.any(na < 0) or np.any(ka < 0):
        raise ValueError(f"{kn} and {nn} must be non-negative")
    if np.any(ka > na):
        raise ValueError(f"{kn} must not exceed {nn}")
    return ka, na


def _out(x: np.ndarray, scalar: bool):
    return float(x) if scalar else x


def _is_scalar(*args) -> bool:
    return all(np.ndim(a) == 0 for a in args)


def _wilson(ka: np.ndarray, na: np.ndarray, zf: float):
    """(p̂, centre, lo, hi) as float arrays, NaN where n = 0."""
    ka, na = np.broadcast_arrays(ka, na)
    empty = na == 0
    n_safe = np.where(empty, 1.0, na)
    p = ka / n_safe
    z2 = zf * zf
    denom = 1.0 + z2 / n_safe
    centre = (p + z2 / (2.0 * n_safe)) / denom
    half = zf * np.sqrt(p * (1.0 - p) / n_safe + z2 / (4.0 * n_safe * n_safe)) / denom
    # at k = 0 the lower bound is 0 and at k = n the upper bound is 1, exactly (the formula
    # leaves a rounding error such as 0.9999999999999999, below the estimate 1)
    lo = np.where(ka == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    hi = np.where(ka == na, 1.0, np.clip(centre + half, 0.0, 1.0))
    nan = np.nan
    return (
        np.where(empty, nan, p),
        np.where(empty, nan, centre),
        np.where(empty, nan, lo),
        np.where(empty, nan, hi),
    )


def wilson_interval(k, n, level=None, z=None):
    """Wilson score interval ``(lo, hi)`` for ``k`` successes in ``n`` trials (d17 convention).

    Bounds are clipped to [0, 1]; ``n = 0`` gives ``(nan, nan)``.
    """
    zf = critical_z(level, z)
    ka, na = _counts(k, n, ("k", "n"))
    _, _, lo, hi = _wilson(ka, na, zf)
    s = _is_scalar(k, n)
    return _out(lo, s), _out(hi, s)


def wilson_centre(k, n, level=None, z=None):
    """Centre of the Wilson interval, ``(p̂ + z²/2n)/(1 + z²/n)`` (unclipped; NaN for n = 0)."""
    zf = critical_z(level, z)
    ka, na = _counts(k, n, ("k", "n"))
    _, centre, _, _ = _wilson(ka, na, zf)
    return _out(centre, _is_scalar(k, n))


def newcombe_difference(k1, n1, k2, n2, level=None, z=None):
    """Newcombe hybrid score interval for ``p1 − p2``: returns ``(diff, lo, hi)``.

    Built from the clipped Wilson bounds of each arm (d17 convention); all three are NaN when
    either ``n`` is 0.  The interval is not clipped further.
    """
    zf = critical_z(level, z)
    k1a, n1a = _counts(k1, n1, ("k1", "n1"))
    k2a, n2a = _counts(k2, n2, ("k2", "n2"))
    k1a, n1a, k2a, n2a = np.broadcast_arrays(k1a, n1a, k2a, n2a)
    p1, _, l1, u1 = _wilson(k1a, n1a, zf)
    p2, _, l2, u2 = _wilson(k2a, n2a, zf)
    d = p1 - p2
    # np.square, not ** 2: on 0-d arrays ``** 2`` goes through pow(), which can differ from
    # the array loop by an ulp; the scalar and the vectorized results must be identical.
    lo = d - np.sqrt(np.square(p1 - l1) + np.square(u2 - p2))
    hi = d + np.sqrt(np.square(u1 - p1) + np.square(p2 - l2))
    s = _is_scalar(k1, n1, k2, n2)
    return _out(d, s), _out(lo, s), _out(hi, s)


def _pooled_se(k1a, n1a, k2a, n2a):
    missing = (n1a == 0) | (n2a == 0)
    # Only an empty arm's n is replaced (its k is 0), so every intermediate stays a proportion.
    n1s = np.where(n1a == 0, 1.0, n1a)
    n2s = np.where(n2a == 0, 1.0, n2a)
    pooled = (k1a + k2a) / (n1s + n2s)
    se = np.sqrt(pooled * (1.0 - pooled) * (1.0 / n1s + 1.0 / n2s))
    return missing, n1s, n2s, se


def pooled_z_se(k1, n1, k2, n2):
    """The standard error the pooled z test divides by: ``√(p(1−p)(1/n1 + 1/n2))`` with ``p``
    the pooled proportion (0 when both arms are all-yes or all-no; NaN when an n is 0)."""
    k1a, n1a = _counts(k1, n1, ("k1", "n1"))
    k2a, n2a = _counts(k2, n2, ("k2", "n2"))
    k1a, n1a, k2a, n2a = np.broadcast_arrays(k1a, n1a, k2a, n2a)
    missing, _, _, se = _pooled_se(k1a, n1a, k2a, n2a)
    return _out(np.where(missing, np.nan, se), _is_scalar(k1, n1, k2, n2))


def pooled_z_test(k1, n1, k2, n2):
    """Pooled two-proportion z test of ``p1 = p2``: returns ``(z, p)`` with a two-sided P.

    ``z = 0, P = 1`` when the pooled SE is 0; ``(nan, nan)`` when either ``n`` is 0.
    """
    k1a, n1a = _counts(k1, n1, ("k1", "n1"))
    k2a, n2a = _counts(k2, n2, ("k2", "n2"))
    k1a, n1a, k2a, n2a = np.broadcast_arrays(k1a, n1a, k2a, n2a)
    missing, n1s, n2s, se = _pooled_se(k1a, n1a, k2a, n2a)
    flat = se == 0
    zs = np.where(flat, 0.0, (k1a / n1s - k2a / n2s) / np.where(flat, 1.0, se))
    ps = np.where(flat, 1.0, 2.0 * ndtr(-np.abs(zs)))
    zs = np.where(missing, np.nan, zs)
    ps = np.where(missing, np.nan, ps)
    s = _is_scalar(k1, n1, k2, n2)
    return _out(zs, s), _out(ps, s)


ALTERNATIVES = ("two-sided", "greater", "less")


def normal_p_value(z, alternative: str):
    """P value of a standard-normal statistic ``z`` for ``alternative`` (see the module notes).

    NaN stays NaN; scalar in, float out.
    """
    za = np.asarray(z, dtype=np.float64)
    if alternative == "two-sided":
        p = 2.0 * ndtr(-np.abs(za))
    elif alternative == "greater":
        p = ndtr(-za)
    elif alternative == "less":
        p = ndtr(za)
    else:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}"
        )
    return _out(p, np.ndim(z) == 0)


def _level(level) -> float:
    lv = float(level)
    if not (0.0 < lv < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def clopper_pearson_interval(k, n, *, level, alternative="two-sided"):
    """Clopper–Pearson interval ``(lo, hi)`` for ``k`` successes in ``n`` trials.

    Beta quantiles (see the module notes); ``lo = 0`` at ``k = 0``, ``hi = 1`` at ``k = n``,
    ``(nan, nan)`` when ``n = 0``. With ``alternative`` "greater" (or "less") only the lower
    (upper) bound is drawn, at one-sided coverage ``level``; the other is 1 (0), as scipy's
    ``binomtest(...).proportion_ci(method="exact")`` gives it.
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}"
        )
    tail = 1.0 - _level(level)
    if alternative == "two-sided":
        tail /= 2.0
    ka, na = _counts(k, n, ("k", "n"))
    ka, na = np.broadcast_arrays(ka, na)
    empty = na == 0
    # Valid Beta parameters (1, 1) stand in where a bound is fixed (k = 0, k = n, which covers
    # n = 0), so that no special function sees a zero shape parameter.
    at0 = (ka == 0) | (alternative == "less")
    atn = (ka == na) | (alternative == "greater")
    lo = np.where(
        at0, 0.0, betaincinv(np.where(at0, 1.0, ka), np.where(at0, 1.0, na - ka + 1.0), tail)
    )
    hi = np.where(
        atn, 1.0, betainccinv(np.where(atn, 1.0, ka + 1.0), np.where(atn, 1.0, na - ka), tail)
    )
    lo = np.where(empty, np.nan, lo)
    hi = np.where(empty, np.nan, hi)
    s = _is_scalar(k, n)
    return _out(lo, s), _out(hi, s)


def _margin(margin) -> np.ndarray:
    m = np.asarray(margin, dtype=np.float64)
    if not np.all(np.isfinite(m)) or np.any(np.abs(m) >= 1.0):
        raise ValueError(f"margin must lie strictly between -1 and 1, got {margin!r}")
    return m


def farrington_manning_estimates(k1, n1, k2, n2, *, margin):
    """The maximum-likelihood ``(p̃1, p̃2)`` under ``p1 − p2 = margin`` (NaN when an n is 0).

    Started from the closed-form root of the cubic (:func:`_closed_form`) and solved to a few
    ulps, relative, for the smallest of the four figures (:func:`_fm_estimates`,
    :func:`solve_low`).  When the maximum lies on an end of the feasible set
    ``0 ≤ p̃1, p̃2 ≤ 1`` (an arm with all or no successes) the end is returned exactly.  At
    ``δ = 0`` both are the pooled proportion.  Against a 50-digit bisection of the score (1,500
    random cases, n up to 3·10⁸, |δ| from 1e-12 to 0.999) the test's z agreed to 4.2e-16,
    relative (tests/stats/test_fm_stable.py).
    """
    k1a, n1a = _counts(k1, n1, ("k1", "n1"))
    k2a, n2a = _counts(k2, n2, ("k2", "n2"))
    k1a, n1a, k2a, n2a, d = np.broadcast_arrays(k1a, n1a, k2a, n2a, _margin(margin))
    p1, p2, _, _ = _fm_estimates(k1a, n1a, k2a, n2a, d)
    s = _is_scalar(k1, n1, k2, n2, margin)
    return _out(p1, s), _out(p2, s)


def _closed_form(k1a, n1a, k2a, n2a, d):
    """p̃1 by the closed-form root of Miettinen & Nurminen (1985), with ``δ = d`` and
    ``θ = n2/n1``: ``a = 1 + θ``, ``b = −(1 + θ + p̂1 + θp̂2 + δ(θ + 2))``,
    ``c = δ² + δ(2p̂1 + θ + 1) + p̂1 + θp̂2``, ``d = −p̂1δ(1 + δ)``;
    ``v = b³/27a³ − bc/6a² + d/2a``, ``u = sign(v)·√(b²/9a² − c/3a)``,
    ``w = (π + arccos(v/u³))/3``, ``p̃1 = 2u·cos(w) − b/3a``, then one Newton step on the score
    (and an end exactly where the maximum lies there): about an ulp of 1 absolute, the start
    of :func:`solve_low`.
    """
    missing = (n1a == 0) | (n2a == 0)
    n1s = np.where(n1a == 0, 1.0, n1a)
    n2s = np.where(n2a == 0, 1.0, n2a)
    p1h = k1a / n1s
    p2h = k2a / n2s
    th = n2s / n1s
    a = 1.0 + th
    b = -(1.0 + th + p1h + th * p2h + d * (th + 2.0))
    c = d * d + d * (2.0 * p1h + th + 1.0) + p1h + th * p2h
    e = -p1h * d * (1.0 + d)
    # Products, not ``**``: 0-d pow() may differ by an ulp from the array loop.
    v = b * b * b / (27.0 * a * a * a) - b * c / (6.0 * a * a) + e / (2.0 * a)
    u = np.where(v < 0, -1.0, 1.0) * np.sqrt(np.maximum(b * b / (9.0 * a * a) - c / (3.0 * a), 0.0))
    u3 = u * u * u
    with np.errstate(over="ignore"):  # a near-zero u: the ratio is clipped to [-1, 1] below
        ratio = np.where(u3 == 0, 0.0, v / np.where(u3 == 0, 1.0, u3))
    w = (np.pi + np.arccos(np.clip(ratio, -1.0, 1.0))) / 3.0
    t1 = 2.0 * u * np.cos(w) - b / (3.0 * a)
    lo1 = np.maximum(d, 0.0)
    hi1 = np.minimum(1.0 + d, 1.0)
    t1 = np.clip(t1, lo1, hi1)
    # One Newton step on the score (not on the cubic, whose extra roots near an end make it
    # ill-conditioned there): (k − n·p)/(p(1 − p)) summed over the arms, decreasing in p̃1.
    inside = (t1 > lo1) & (t1 < hi1)
    u1 = np.where(inside, t1, 0.5)
    u2 = np.where(inside, t1 - d, 0.5)
    v1 = u1 * (1.0 - u1)
    v2 = u2 * (1.0 - u2)
    # A step that over- or underflows (a p̃ within 1e-150 of an end) is not taken.
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        score = (k1a - n1s * u1) / v1 + (k2a - n2s * u2) / v2
        slope = (k1a * np.square(1.0 - u1) + (n1s - k1a) * np.square(u1)) / np.square(v1) + (
            k2a * np.square(1.0 - u2) + (n2s - k2a) * np.square(u2)
        ) / np.square(v2)
        stepped = t1 + score / slope
    ok = inside & np.isfinite(stepped) & (stepped > lo1) & (stepped < hi1)
    t1 = np.where(ok, stepped, t1)
    # The likelihood is concave in p̃1 on the feasible set [max(0, δ), min(1, 1 + δ)], so its
    # maximum is at an end exactly when the score there points outwards.  Only an arm with all
    # or no successes lets the score stay finite at an end; there the cubic has a root at the
    # end and another near it, the closed form loses about half its digits and the Newton step
    # cannot reach the end, so the end is taken exactly.  (Each test below is the score at the
    # end, multiplied by its positive denominator.)
    pos = d > 0
    neg = d < 0
    top_pos = pos & (k1a == n1a) & (n1s * d * (1.0 - d) + k2a - n2s * (1.0 - d) >= 0)
    top_neg = neg & (k2a == n2a) & (k1a - n1s * (1.0 + d) - n2s * d * (1.0 + d) >= 0)
    low_pos = pos & (k2a == 0) & (k1a - n1s * d - n2s * d * (1.0 - d) <= 0)
    low_neg = neg & (k1a == 0) & (n1s * d * (1.0 + d) + k2a + n2s * d <= 0)
    t1 = np.where(top_pos, 1.0, np.where(top_neg, 1.0 + d, t1))
    t1 = np.where(low_pos, d, np.where(low_neg, 0.0, t1))
    t2 = np.clip(t1 - d, 0.0, 1.0)
    t2 = np.where(top_neg, 1.0, np.where(low_pos, 0.0, t2))
    pooled = (k1a + k2a) / (n1s + n2s)
    t1 = np.where(d == 0, pooled, t1)
    t2 = np.where(d == 0, pooled, t2)
    # 1 − p̃ too: at the upper end it is 0 for one arm and |δ| for the other, which 1 − (1 − δ)
    # would give only to within an ulp of 1 (a relative error of 1e-8 in z at δ = 1e-9).
    c1 = np.where(top_pos, 0.0, np.where(top_neg, -d, 1.0 - t1))
    c2 = np.where(top_pos, d, np.where(top_neg, 0.0, 1.0 - t2))
    nan = np.nan
    return tuple(np.where(missing, nan, v) for v in (t1, t2, c1, c2))


_EPS = 2.220446049250313e-16


def solve_low(kl, nl, kh, nh, a, start=None):
    """The constrained maximum-likelihood proportion s of the low arm L, given that the high
    arm H has ``s + a`` (``a ≥ 0``): the root in ``[0, 1 − a]`` of the score

        g(s) = kl/s − (nl − kl)/(1 − s) + kh/(s + a) − (nh − kh)/(1 − s − a),

    strictly decreasing, or the end of ``[0, 1 − a]`` where the maximum lies (only an arm with
    no or all successes lets the score stay finite at an end; the end is the maximum exactly
    when the score there points outwards).

    Inside, a safeguarded Newton iteration, element by element, started at the closed-form
    root of the cubic (:func:`_closed_form`, Miettinen & Nurminen 1985): a Newton step that
    leaves the bracket of sign changes is replaced by a bisection (geometric when the bracket
    spans orders of magnitude near 0), and an element stops when its step is within 2 ulps.
    The closed form alone loses digits where the root is small (its absolute error is about an
    ulp of 1); the iteration gives s to a few ulps, relative.  Arrays broadcast; ``nl, nh > 0``;
    ``start`` is the closed-form root when the caller has it.
    """
    kl, nl, kh, nh, a = (np.asarray(v, dtype=np.float64) for v in (kl, nl, kh, nh, a))
    kl, nl, kh, nh, a = np.broadcast_arrays(kl, nl, kh, nh, a)
    top = 1.0 - a
    fl, fh = nl - kl, nh - kh
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g0 = -nl + np.where(kh > 0, kh / a, 0.0) - np.where(fh > 0, fh / top, 0.0)
        gt = np.where(kl > 0, kl / top, 0.0) - np.where(fl > 0, fl / a, 0.0) + nh
    at0 = (kl == 0) & (g0 <= 0)
    attop = ~at0 & (kh == nh) & (gt >= 0)
    if start is None:
        with np.errstate(all="ignore"):
            start = _closed_form(kl, nl, kh, nh, -a)[0]
    s = np.where((start > 0) & (start < top), start, (kl + kh - nh * a) / (nl + nh))
    s = np.where((s > 0) & (s < top), s, top / 2.0)
    lo = np.zeros_like(s)
    hi = top.copy()
    out = np.where(at0, 0.0, np.where(attop, top, np.nan))
    active = ~(at0 | attop)
    for _ in range(400):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        x = s[idx]
        k_l, f_l, k_h, f_h, aa, tt = kl[idx], fl[idx], kh[idx], fh[idx], a[idx], top[idx]
        t = x + aa
        c = tt - x
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            # x lies strictly inside (0, 1 − a), so every term is finite (0 for a zero count)
            u, w = 1.0 - x, 1.0 / t
            v = k_l / x - f_l / u + k_h * w - f_h / c
            dv = -(k_l / (x * x) + f_l / (u * u) + k_h * (w * w) + f_h / (c * c))
            root = v == 0
            lo_i = np.where(v > 0, x, lo[idx])
            hi_i = np.where(v < 0, x, hi[idx])
            newton = x + np.where(dv < 0, -v / dv, np.nan)
            # a Newton step within 2 ulps is the root (x itself may be an end of the bracket)
            close = np.abs(newton - x) <= 2.0 * _EPS * np.abs(newton)
            bad = ~((lo_i < newton) & (newton < hi_i))  # NaN included
            geo = (lo_i > 0) & (hi_i > 4.0 * lo_i)
            bis = np.where(geo, np.sqrt(lo_i * hi_i), (lo_i + hi_i) / 2.0)
            bis = np.where((lo_i == 0) & (hi_i < 1e-3), hi_i / 16.0, bis)
            new = np.where(bad & ~close, bis, newton)
        done = root | close | (np.abs(new - x) <= 2.0 * _EPS * np.abs(new))
        value = np.where(root, x, new)
        out[idx[done]] = value[done]
        s[idx] = new
        lo[idx], hi[idx] = lo_i, hi_i
        active[idx[done]] = False
    out = np.where(active, s, out)
    return _polished(out, kl, fl, kh, fh, a, top)


def _polished(s, kl, fl, kh, fh, a, top):
    """One more Newton step from each inner root ``s`` of :func:`solve_low`, its score summed
    in extended precision (``numpy.longdouble``, 64 significant bits on x86): the score's terms
    can be five orders of magnitude above their sum (a large arm against an arm with no
    failures), so a root found in doubles can be off by 1e-14 relative where its figures are
    small; the step brings it to within an ulp or two. Where ``longdouble`` is a double the
    step changes nothing."""
    inner = (s > 0) & (s < top) & np.isfinite(s)
    if not inner.any():
        return s
    ld = np.longdouble
    x = s[inner].astype(ld)
    k_l, f_l, k_h, f_h = (v[inner].astype(ld) for v in (kl, fl, kh, fh))
    aa, tt = a[inner].astype(ld), top[inner].astype(ld)
    with np.errstate(all="ignore"):
        t, u, c = x + aa, 1 - x, tt - x
        v = k_l / x - f_l / u + k_h / t - f_h / c
        dv = -(k_l / (x * x) + f_l / (u * u) + k_h / (t * t) + f_h / (c * c))
        step = np.where(dv < 0, v / dv, 0)
        new = (x - step).astype(np.float64)
    ok = np.isfinite(new) & (new > 0) & (new < top[inner])
    out = s.copy()
    out[inner] = np.where(ok, new, s[inner])
    return out


def _fm_estimates(k1a, n1a, k2a, n2a, d):
    """``(p̃1, p̃2, 1 − p̃1, 1 − p̃2)`` under ``p1 − p2 = d``, each to a few ulps, relative.

    Solved for the smallest of the four figures, so that every other one is a sum, or a
    difference at least as large as the unknown, whose rounding is small against its own size
    (the closed form alone solves for p̃1 and subtracts, which loses digits whenever a figure
    is small).  With the arms ordered so that arm L has the lower constrained proportion s
    (``p̃H = s + |δ|``), :func:`solve_low` gives s; when the high arm's complement
    ``1 − |δ| − s`` is smaller than s, the problem is solved again with successes and failures
    exchanged, where that complement is the low arm's proportion.  At ``δ = 0`` both are the
    pooled proportion (and its complement from the integer counts).  The same computation, to
    the bit, as :func:`prereg.stats.two_proportions.constrained_proportions` (which calls it).
    """
    k1a, n1a, k2a, n2a, d = (np.asarray(v, dtype=np.float64) for v in (k1a, n1a, k2a, n2a, d))
    k1a, n1a, k2a, n2a, d = np.broadcast_arrays(k1a, n1a, k2a, n2a, d)
    missing = (n1a == 0) | (n2a == 0)
    n1s = np.where(n1a == 0, 1.0, n1a)
    n2s = np.where(n2a == 0, 1.0, n2a)
    a = np.abs(d)
    rest = 1.0 - a  # exact for |δ| in [0.5, 1] (Sterbenz), correctly rounded below
    low1 = d <= 0  # p̃1 = p̃2 + δ: arm 1 is the low arm when δ ≤ 0
    kl, nl = np.where(low1, k1a, k2a), np.where(low1, n1s, n2s)
    kh, nh = np.where(low1, k2a, k1a), np.where(low1, n2s, n1s)
    solve = ~missing & (d != 0)
    # Which figure is the smallest, from the closed form (where the two are close, either
    # orientation is well conditioned): s itself, or the high arm's complement 1 − |δ| − s.
    guess = np.full(d.shape, 0.5)
    with np.errstate(all="ignore"):
        if solve.all():
            guess = _closed_form(kl, nl, kh, nh, -a)[0]
        elif solve.any():
            guess[solve] = _closed_form(kl[solve], nl[solve], kh[solve], nh[solve], -a[solve])[0]
    swap = solve & (rest - guess < guess)
    keep = solve & ~swap
    s = np.full(d.shape, 0.5)
    if keep.any():
        s[keep] = solve_low(kl[keep], nl[keep], kh[keep], nh[keep], a[keep], guess[keep])
    # failures: arm H's failure share 1 − p̃H is then the low one, arm L's is it plus |δ|
    f = np.full(d.shape, 0.5)
    if swap.any():
        f[swap] = solve_low(
            nh[swap] - kh[swap],
            nh[swap],
            nl[swap] - kl[swap],
            nl[swap],
            a[swap],
            rest[swap] - guess[swap],  # the closed form's 1 − p̃H, a start to polish
        )
    low = np.where(swap, rest - f, s)
    high = np.where(swap, 1.0 - f, s + a)
    c_low = np.where(swap, f + a, 1.0 - s)
    c_high = np.where(swap, f, rest - s)
    t1, t2 = np.where(low1, low, high), np.where(low1, high, low)
    c1, c2 = np.where(low1, c_low, c_high), np.where(low1, c_high, c_low)
    pooled = (k1a + k2a) / (n1s + n2s)
    pooled_c = ((n1s + n2s) - (k1a + k2a)) / (n1s + n2s)
    zero = d == 0
    t1, t2 = np.where(zero, pooled, t1), np.where(zero, pooled, t2)
    c1, c2 = np.where(zero, pooled_c, c1), np.where(zero, pooled_c, c2)
    return tuple(np.where(missing, np.nan, v) for v in (t1, t2, c1, c2))


_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitting constant for float64


def _two_product(x, y):
    """``(p, e)`` with ``p = fl(x·y)`` and ``x·y = p + e`` exactly (Dekker 1971)."""
    p = x * y
    cx = _SPLIT * x
    xh = cx - (cx - x)
    xl = x - xh
    cy = _SPLIT * y
    yh = cy - (cy - y)
    yl = y - yh
    e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    return p, e


def _numerator(k1a, n1a, k2a, n2a, d):
    """``k1/n1 − k2/n2 − δ`` with a relative error of a few ulps, however close the observed
    difference is to δ: ``(k1·n2 − k2·n1 − δ·n1·n2) / (n1·n2)``, the integers exact and
    ``δ·n1·n2`` an exact sum of two floats (:func:`_two_product`); where ``n1·n2`` is not an
    exact float (≥ 2⁵³), by exact rational arithmetic element by element."""
    n1s = np.where(n1a == 0, 1.0, n1a)
    n2s = np.where(n2a == 0, 1.0, n2a)
    big = n1s * n2s >= 2.0**53
    if np.any(big):
        k1a, n1s, k2a, n2s, d = np.broadcast_arrays(k1a, n1s, k2a, n2s, d)
        k1a, n1s, k2a, n2s, d = (np.array(v, dtype=np.float64) for v in (k1a, n1s, k2a, n2s, d))
    den = n1s * n2s
    with np.errstate(invalid="ignore", over="ignore"):
        diff = k1a * n2s - k2a * n1s  # exact: each product and their difference below 2^53
        p, e = _two_product(d, den)
        num = ((diff - p) - e) / den
    if np.any(big):
        from fractions import Fraction

        num = np.array(num, dtype=np.float64)
        for i in map(tuple, np.argwhere(big)):
            exact = (
                Fraction(int(k1a[i]), int(n1s[i]))
                - Fraction(int(k2a[i]), int(n2s[i]))
                - Fraction(float(d[i]))
            )
            num[i] = float(exact)
    return num


def farrington_manning_se(k1, n1, k2, n2, *, margin):
    """The standard error the Farrington–Manning test divides by:
    ``√(p̃1(1−p̃1)/n1 + p̃2(1−p̃2)/n2)`` at the constrained estimates (NaN when an n is 0)."""
    k1a, n1a = _counts(k1, n1, ("k1", "n1"))
    k2a, n2a = _counts(k2, n2, ("k2", "n2"))
    k1a, n1a, k2a, n2a, d = np.broadcast_arrays(k1a, n1a, k2a, n2a, _margin(margin))
    _, se, _ = _fm_parts(k1a, n1a, k2a, n2a, d)
    return _out(se, _is_scalar(k1, n1, k2, n2, margin))


def _fm_parts(k1a, n1a, k2a, n2a, d):
    """(z, se, missing) of the Farrington–Manning test over broadcast arrays."""
    t1, t2, c1, c2 = _fm_estimates(k1a, n1a, k2a, n2a, d)
    missing = np.isnan(t1)
    n1s = np.where(n1a == 0, 1.0, n1a)
    n2s = np.where(n2a == 0, 1.0, n2a)
    t1, t2, c1, c2 = (np.where(missing, 0.5, v) for v in (t1, t2, c1, c2))
    se = np.sqrt(t1 * c1 / n1s + t2 * c2 / n2s)
    flat = se == 0
    num = _numerator(k1a, n1a, k2a, n2a, d)
    zs = np.where(flat, 0.0, num / np.where(flat, 1.0, se))
    zs = np.where(missing, np.nan, zs)
    return zs, np.where(missing, np.nan, se), missing


def farrington_manning_test(k1, n1, k2, n2, *, alternative, margin):
    """Farrington–Manning score test of ``p1 − p2 = margin``: returns ``(z, p)``.

    ``alternative`` is "two-sided", "greater" (H1: ``p1 − p2 > margin``) or "less"
    (H1: ``p1 − p2 < margin``); ``margin`` lies in (−1, 1).  ``z = 0`` when the constrained SE is
    0 (only possible at margin 0, both arms all-yes or all-no); ``(nan, nan)`` when an n is 0.
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}"
        )
    k1a, n1a = _counts(k1, n1, ("k1", "n1"))
    k2a, n2a = _counts(k2, n2, ("k2", "n2"))
    k1a, n1a, k2a, n2a, d = np.broadcast_arrays(k1a, n1a, k2a, n2a, _margin(margin))
    zs, _, _ = _fm_parts(k1a, n1a, k2a, n2a, d)
    ps = normal_p_value(zs, alternative)
    s = _is_scalar(k1, n1, k2, n2, margin)
    return _out(zs, s), _out(ps, s)
