"""Bootstrap intervals and permutation tests of means, with draws anyone can recompute.

Bootstrap (shapes ``sample``, ``two-samples``, ``paired-samples``): the mean, the difference of
two independent means, or the mean of paired differences ``x − y``, with the percentile, basic,
BCa or studentized interval.

*Draws.*  ``rng = numpy.random.Generator(numpy.random.PCG64(seed))``.  One sample of n (or the
n pairs): ``I = rng.integers(0, n, size=(resamples, n))``, row r the indices of resample r.
Two samples: ``rng.integers(0, n_x, size=(resamples, n_x))`` for x, then
``rng.integers(0, n_y, size=(resamples, n_y))`` for y.  (numpy draws these the same in blocks of
rows as in one call; the code draws blocks to bound its memory.)  This is what
``scipy.stats.bootstrap(..., rng=Generator(PCG64(seed)), batch=None)`` draws.  The studentized
interval with an inner bootstrap then draws, for r = 0, 1, …, resamples − 1 in order and within
r sample by sample, ``rng.integers(0, n, size=(inner, n))``: indices into resample r.

*Intervals* (α = (1 − level)/2, rounded once from the level's shortest decimal form, so that
level 0.95 gives exactly the floats 0.025 and 0.975; θ̂ the estimate, θ*_r the resampled ones, q the registered
numpy quantile method over them):
percentile [q(α), q(1 − α)]; basic [2θ̂ − q(1 − α), 2θ̂ − q(α)];
BCa [q(α₁), q(α₂)], α₁,₂ = Φ(z₀ + (z₀ + z)/(1 − â(z₀ + z))) with z = Φ⁻¹(α), Φ⁻¹(1 − α),
z₀ = Φ⁻¹((#{θ* < θ̂} + #{θ* ≤ θ̂})/(2B)) (ties count half) and â from the delete-one jackknife
of each sample, â = Σ_j Σ_i U_ji³/n_j³ / (6 (Σ_j Σ_i U_ji²/n_j²)^{3/2}),
U_ji = (n_j − 1)(θ̄_(j·) − θ̂_(ji)) (Efron & Tibshirani 1993, 14.15 and 15.36);
studentized [θ̂ − q_t(1 − α)·SE, θ̂ − q_t(α)·SE] with t*_r = (θ*_r − θ̂)/SE*_r, where SE is the
closed form s/√n (√(s_x²/n_x + s_y²/n_y) for two samples) of the data and SE*_r of resample r,
or, with an inner bootstrap, SE*_r the SD of the inner resamples' means and SE the SD of the
θ*_r.  ``se`` is the SD (ddof 1) of the θ*_r.  BCa has no bounds (None) when every θ*
lies on one side of θ̂ (z₀ infinite) or the jackknife has no spread (â is 0/0).  A studentized interval with a resample of zero
spread (t* not finite) has no bounds (None; the count is in ``extra``).

Permutation tests (the difference of two means, by relabelling; the mean of paired differences
or of one sample, by sign flips), of H0 "no difference from the margin": x − margin against y
(the shift model), or d = x − y − margin flipped in sign.  T is the mean difference (mean of d).

*Draws.*  Relabelling: for each of the B permutations in turn ``rng.permutation(n_x + n_y)`` of
the pooled values (x then y); the first n_x are arm x's.  Sign flips: ``rng.permuted(
numpy.tile(numpy.arange(2), (B, n, 1)), axis=-1)[..., 0]``, 1 flipping the sign of d_i (drawn in
blocks of rows, which numpy draws the same).  These are ``scipy.stats.permutation_test``'s draws
with ``batch=None`` (permutation_type "independent"; "samples" with one sample).  Exact
enumeration takes every split into n_x and n_y values (each once) or every sign vector.

*P.*  Counting b, the permutations with T* ≥ T ("greater"), T* ≤ T ("less"), or |T*| ≥ |T|
(two-sided "absolute"), each T the decimals the data and the margin write as whole numbers over
one denominator (64-bit integers when their sums fit, else Python integers: ties are exact),
P = (b + 1)/(B + 1) ("plus-one") or b/B ("none"; exact enumeration counts the
observed arrangement itself and takes "none").  Two-sided "double-smaller" is
min(1, 2·min(P_less, P_greater)).  P is also given as an exact fraction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations, islice

import numpy as np

from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

QUANTILE_METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)
INTERVALS = ("percentile", "basic", "bca", "studentized")
CLUSTER_INTERVALS = ("percentile", "basic", "bca")
STUDENTIZED_SE = ("closed-form", "inner-bootstrap")
ALTERNATIVES = ("two-sided", "greater", "less")
ENUMERATIONS = ("random", "exact")
P_CORRECTIONS = ("plus-one", "none")
TWO_SIDED = ("double-smaller", "absolute")

MAX_ENUMERATION = 1 << 20  # the most arrangements an exact test enumerates
_BLOCK = 1 << 20  # index elements drawn at once (memory only: the draws do not depend on it)


# -- argument checks ----------------------------------------------------------------------------


def _choice(name: str, value, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise MethodError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def _level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float | np.floating | np.integer):
        raise MethodError(f"level must be a number strictly between 0 and 1; got {level!r}")
    lv = float(level)
    if not 0.0 < lv < 1.0:
        raise MethodError(f"level must lie strictly between 0 and 1; got {level!r}")
    return lv


def _margin(margin) -> float:
    if isinstance(margin, bool) or not isinstance(margin, int | float | np.floating | np.integer):
        raise MethodError(f"margin must be a finite number; got {margin!r}")
    m = float(margin)
    if not math.isfinite(m):
        raise MethodError(f"margin must be a finite number; got {margin!r}")
    return m


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise MethodError(f"{name} must be a whole number of at least {minimum}; got {value!r}")
    return int(value)


def _sample(name: str, x) -> np.ndarray:
    raw = np.asarray(x)
    if raw.size and raw.dtype.kind not in "biuf":
        raise MethodError(
            f"{name} must be a 1-d array of numbers; got non-numeric values "
            f"(e.g. {raw.reshape(-1)[0].tolist()!r})"
        )
    a = raw.astype(np.float64)
    if a.ndim != 1:
        raise MethodError(f"{name} must be a 1-d array of numbers; got {a.ndim} dimensions")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise MethodError(
            f"{name} must hold finite numbers; {name}[{int(bad[0])}] is {float(a[bad[0]])}"
        )
    return a


def _paired(x, y) -> np.ndarray:
    a, b = _sample("x", x), _sample("y", y)
    if a.shape != b.shape:
        raise MethodError(
            f"paired samples must be as long as each other; got {a.size} and {b.size}"
        )
    return a - b


def _exact_mean(a: np.ndarray) -> Fraction | None:
    if not a.size or not np.all(a == np.trunc(a)) or not np.all(np.abs(a) < 2.0**53):
        return None
    return Fraction(sum(int(v) for v in a.tolist()), a.size)


def _exact_estimate(*samples: np.ndarray) -> dict[str, Fraction]:
    means = [_exact_mean(s) for s in samples]
    if any(m is None for m in means):
        return {}
    return {"estimate": means[0] - means[1] if len(means) == 2 else means[0]}


# -- bootstrap ------------------------------------------------------------------------------------


def _tail(level: float) -> float:
    """(1 − level)/2 from the level's shortest decimal form: level 0.95 gives the float 0.025
    exactly rounded (the float sum (1 − 0.95)/2 is 0.025000000000000022, which moves a
    discontinuous quantile such as inverted_cdf to the next replicate when B·α is whole)."""
    return float((1 - Fraction(repr(float(level)))) / 2)


def _upper(a: float) -> float:
    """1 − a, rounded once from the exact difference."""
    return float(1 - Fraction(a))


def _ndtr(v):
    import scipy.special

    return scipy.special.ndtr(v)


def _ndtri(v):
    import scipy.special

    return scipy.special.ndtri(v)


def _rows(n: int) -> int:
    return max(1, _BLOCK // max(n, 1))


def _resampled_ratio(rng, units: np.ndarray, resamples: int, *, spread: bool):
    """Per resample Σ num / Σ den of ``units`` (n, 2) drawn with replacement; with ``spread``
    (den all 1) also the sample variance (ddof 1) of the resampled values."""
    n = units.shape[0]
    num, den = np.ascontiguousarray(units[:, 0]), np.ascontiguousarray(units[:, 1])
    ones = bool(np.all(den == 1.0))
    stat = np.empty(resamples)
    var = np.empty(resamples) if spread else None
    step = _rows(n)
    for lo in range(0, resamples, step):
        hi = min(lo + step, resamples)
        idx = rng.integers(0, n, size=(hi - lo, n))
        vals = num[idx]
        if ones:
            mean = vals.sum(axis=-1) / n
        else:
            mean = vals.sum(axis=-1) / den[idx].sum(axis=-1)
        stat[lo:hi] = mean
        if spread:
            dev = vals - mean[:, None]
            var[lo:hi] = (dev * dev).sum(axis=-1) / (n - 1) if n > 1 else np.nan
    return stat, var


def _ratio(units: np.ndarray) -> float:
    if bool(np.all(units[:, 1] == 1.0)):
        return float(units[:, 0].sum() / units.shape[0])
    return float(units[:, 0].sum() / units[:, 1].sum())


def _quantiles(reps: np.ndarray, probs, method: str) -> list[float]:
    return [float(v) for v in np.quantile(reps, np.asarray(probs, dtype=np.float64), method=method)]


def _acceleration(units: list[np.ndarray], thetas: list[float]) -> float | None:
    """â of the BCa interval from each sample's delete-one jackknife (scipy's multi-sample form)."""
    num = den = 0.0
    for j, u in enumerate(units):
        n = u.shape[0]
        if n < 2:
            return None
        rest_num = u[:, 0].sum() - u[:, 0]
        rest_den = u[:, 1].sum() - u[:, 1]
        if np.any(rest_den <= 0):
            return None
        loo = rest_num / rest_den
        if len(units) == 2:
            loo = loo - thetas[1] if j == 0 else thetas[0] - loo
        uji = (n - 1) * (loo.mean() - loo)
        num += float((uji**3).sum()) / n**3
        den += float((uji**2).sum()) / n**2
    if not den > 0:
        return None
    return num / (6.0 * den**1.5)


def _bootstrap_ratio(
    method: str,
    units: list[np.ndarray],
    *,
    interval: str,
    level: float,
    resamples: int,
    seed: int,
    quantile_method: str,
    exact: dict,
    counts: dict,
    studentized_se: str | None = None,
    inner_resamples: int | None = None,
) -> Result:
    """The bootstrap of θ = r_a (one sample) or r_a − r_b, r = Σ num / Σ den of an arm's
    units (rows (num, den)); the units of each arm resampled with replacement, arm by arm."""
    rng = np.random.Generator(np.random.PCG64(seed))
    thetas = [_ratio(u) for u in units]
    theta = thetas[0] - thetas[1] if len(units) == 2 else thetas[0]
    studentized = interval == "studentized"
    closed = studentized and studentized_se == "closed-form"
    states = []
    arm_stats, arm_vars = [], []
    for u in units:
        states.append(rng.bit_generator.state)
        s, v = _resampled_ratio(rng, u, resamples, spread=closed)
        arm_stats.append(s)
        arm_vars.append(v)
    reps = arm_stats[0] - arm_stats[1] if len(units) == 2 else arm_stats[0]
    se = float(reps.std(ddof=1)) if resamples > 1 else None
    extra: dict[str, object] = {
        "resamples": resamples,
        "seed": seed,
        "quantile_method": quantile_method,
        "interval": interval,
    }
    a = _tail(level)
    lower = upper = None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if interval == "percentile":
            lower, upper = _quantiles(reps, [a, _upper(a)], quantile_method)
        elif interval == "basic":
            lo_q, hi_q = _quantiles(reps, [a, _upper(a)], quantile_method)
            lower, upper = 2.0 * theta - hi_q, 2.0 * theta - lo_q
        elif interval == "bca":
            below = np.count_nonzero(reps < theta) + np.count_nonzero(reps <= theta)
            z0 = float(_ndtri(below / (2.0 * resamples)))
            acc = _acceleration(units, thetas)
            extra["z0"] = z0 if math.isfinite(z0) else None
            extra["acceleration"] = acc
            if acc is not None and math.isfinite(z0):
                probs = []
                for z in (float(_ndtri(a)), -float(_ndtri(a))):
                    probs.append(float(_ndtr(z0 + (z0 + z) / (1.0 - acc * (z0 + z)))))
                if all(math.isfinite(p) for p in probs):
                    lower, upper = _quantiles(reps, probs, quantile_method)
                    extra["probabilities"] = probs
        else:
            lower, upper = _studentized(
                units,
                thetas,
                theta,
                reps,
                arm_stats,
                arm_vars,
                states,
                rng,
                closed=closed,
                inner=inner_resamples,
                a=a,
                quantile_method=quantile_method,
                extra=extra,
            )
    return Result(
        method=method,
        estimate=theta,
        se=se,
        lower=lower,
        upper=upper,
        exact=exact,
        counts=counts,
        extra=extra,
    )


def _studentized(
    units,
    thetas,
    theta,
    reps,
    arm_stats,
    arm_vars,
    states,
    rng,
    *,
    closed,
    inner,
    a,
    quantile_method,
    extra,
):
    ns = [u.shape[0] for u in units]
    if any(n < 2 for n in ns):
        return None, None
    if closed:
        se_hat = math.sqrt(sum(float(u[:, 0].var(ddof=1)) / u.shape[0] for u in units))
        se_star = np.sqrt(sum(v / n for v, n in zip(arm_vars, ns, strict=True)))
    else:
        if len(reps) < 2:
            return None, None
        se_hat = float(reps.std(ddof=1))
        se_star = _inner_se(units, states, rng, len(reps), inner)
    extra["se_studentized"] = se_hat
    t_star = (reps - theta) / se_star
    bad = int(np.count_nonzero(~np.isfinite(t_star)))
    extra["nonfinite_resamples"] = bad
    if bad or not se_hat > 0:
        return None, None
    q_lo, q_hi = _quantiles(t_star, [a, _upper(a)], quantile_method)
    return theta - q_hi * se_hat, theta - q_lo * se_hat


def _inner_se(units, states, rng, resamples: int, inner: int) -> np.ndarray:
    """Per outer resample r, the SD (ddof 1) of ``inner`` resamples of resample r's statistic;
    the outer indices are drawn again from each sample's saved generator state."""
    replay = []
    for st in states:
        g = np.random.Generator(np.random.PCG64())
        g.bit_generator.state = st
        replay.append(g)
    vals = [np.ascontiguousarray(u[:, 0]) for u in units]
    ns = [u.shape[0] for u in units]
    out = np.empty(resamples)
    step = max(1, min(_rows(n) for n in ns))
    for lo in range(0, resamples, step):
        hi = min(lo + step, resamples)
        outer = [g.integers(0, n, size=(hi - lo, n)) for g, n in zip(replay, ns, strict=True)]
        for r in range(hi - lo):
            stat = None
            for j, (v, n) in enumerate(zip(vals, ns, strict=True)):
                resample = v[outer[j][r]]
                means = np.empty(inner)
                rows = _rows(n)
                for ilo in range(0, inner, rows):
                    ihi = min(ilo + rows, inner)
                    means[ilo:ihi] = (
                        resample[rng.integers(0, n, size=(ihi - ilo, n))].sum(axis=-1) / n
                    )
                stat = means if stat is None else stat - means
            out[lo + r] = stat.std(ddof=1)
    return out


def _bootstrap_options(
    interval, level, resamples, seed, quantile_method, studentized_se, inner_resamples
):
    interval = _choice("interval", interval, INTERVALS)
    level = _level(level)
    resamples = _count("resamples", resamples, 1)
    seed = _count("seed", seed, 0)
    quantile_method = _choice("quantile_method", quantile_method, QUANTILE_METHODS)
    if interval == "studentized":
        studentized_se = _choice("studentized_se", studentized_se, STUDENTIZED_SE)
        if studentized_se == "inner-bootstrap":
            inner_resamples = _count("inner_resamples", inner_resamples, 2)
        elif inner_resamples is not None:
            raise MethodError(
                "inner_resamples is registered only with studentized_se "
                f"inner-bootstrap; got {inner_resamples!r}"
            )
    elif studentized_se is not None or inner_resamples is not None:
        raise MethodError(
            "studentized_se and inner_resamples are registered only with the studentized "
            f"interval; interval is {interval!r}"
        )
    return interval, level, resamples, seed, quantile_method, studentized_se, inner_resamples


def _units(a: np.ndarray) -> np.ndarray:
    return np.stack([a, np.ones(a.size)], axis=1)


def _run_bootstrap(
    method,
    samples,
    counts,
    interval,
    level,
    resamples,
    seed,
    quantile_method,
    studentized_se,
    inner_resamples,
):
    opts = _bootstrap_options(
        interval, level, resamples, seed, quantile_method, studentized_se, inner_resamples
    )
    interval, level, resamples, seed, quantile_method, studentized_se, inner_resamples = opts
    if any(s.size == 0 for s in samples):
        return Result(method=method, counts=counts)
    return _bootstrap_ratio(
        method,
        [_units(s) for s in samples],
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
        quantile_method=quantile_method,
        exact=_exact_estimate(*samples),
        counts=counts,
        studentized_se=studentized_se,
        inner_resamples=inner_resamples,
    )


def bootstrap_mean(
    x,
    *,
    interval: str,
    level: float,
    resamples: int,
    seed: int,
    quantile_method: str,
    studentized_se: str | None,
    inner_resamples: int | None,
) -> Result:
    """Bootstrap interval of the mean of one sample (see the module docstring)."""
    a = _sample("x", x)
    return _run_bootstrap(
        "bootstrap-mean",
        [a],
        {"n": int(a.size)},
        interval,
        level,
        resamples,
        seed,
        quantile_method,
        studentized_se,
        inner_resamples,
    )


def bootstrap_mean_difference(
    x,
    y,
    *,
    interval: str,
    level: float,
    resamples: int,
    seed: int,
    quantile_method: str,
    studentized_se: str | None,
    inner_resamples: int | None,
) -> Result:
    """Bootstrap interval of mean(x) − mean(y), x and y resampled independently."""
    a, b = _sample("x", x), _sample("y", y)
    return _run_bootstrap(
        "bootstrap-mean-difference",
        [a, b],
        {"n_x": int(a.size), "n_y": int(b.size)},
        interval,
        level,
        resamples,
        seed,
        quantile_method,
        studentized_se,
        inner_resamples,
    )


def bootstrap_paired_mean_difference(
    x,
    y,
    *,
    interval: str,
    level: float,
    resamples: int,
    seed: int,
    quantile_method: str,
    studentized_se: str | None,
    inner_resamples: int | None,
) -> Result:
    """Bootstrap interval of the mean of the differences x − y, pairs resampled together."""
    d = _paired(x, y)
    return _run_bootstrap(
        "bootstrap-paired-mean-difference",
        [d],
        {"n": int(d.size)},
        interval,
        level,
        resamples,
        seed,
        quantile_method,
        studentized_se,
        inner_resamples,
    )


# -- permutation tests ----------------------------------------------------------------------------


def _permutation_options(
    alternative, margin, enumeration, permutations, seed, p_correction, two_sided
):
    alternative = _choice("alternative", alternative, ALTERNATIVES)
    margin = _margin(margin)
    enumeration = _choice("enumeration", enumeration, ENUMERATIONS)
    p_correction = _choice("p_correction", p_correction, P_CORRECTIONS)
    two_sided = _choice("two_sided", two_sided, TWO_SIDED)
    if enumeration == "random":
        permutations = _count("permutations", permutations, 1)
        seed = _count("seed", seed, 0)
    else:
        if permutations is not None or seed is not None:
            raise MethodError("exact enumeration takes no permutations and no seed (None)")
        if p_correction != "none":
            raise MethodError(
                "exact enumeration counts the observed arrangement itself: p_correction must "
                "be 'none'"
            )
    return alternative, margin, enumeration, permutations, seed, p_correction, two_sided


def _p_values(null: np.ndarray, observed: float, *, alternative, two_sided, plus_one):
    """(P as a float, P as a fraction, the count b behind it, the number of arrangements).
    ``null`` and ``observed`` are floats compared with a tolerance, or whole numbers (each
    arrangement's statistic over one positive factor, :func:`_whole`) compared exactly."""
    exact = null.dtype.kind in "iO"  # whole numbers: int64, or Python integers
    gamma = 0 if exact else abs(np.finfo(np.float64).eps * 100 * observed)
    total = int(null.size)
    add = 1 if plus_one else 0

    def frac(b: int) -> Fraction:
        return Fraction(b + add, total + add)

    le = int(np.count_nonzero(null <= observed + gamma))
    ge = int(np.count_nonzero(null >= observed - gamma))
    if alternative == "less":
        b, p = le, frac(le)
    elif alternative == "greater":
        b, p = ge, frac(ge)
    elif two_sided == "absolute":
        b = int(np.count_nonzero(np.abs(null) >= abs(observed) - gamma))
        p = frac(b)
    else:
        b = min(le, ge)
        p = min(Fraction(1), 2 * min(frac(le), frac(ge)))
    return float(p), p, b, total


def _relabel_null(pooled: np.ndarray, nx: int, enumeration: str, permutations, seed):
    """mean(x*) − mean(y*) of each relabelling; of whole numbers (int64, :func:`_whole`)
    ``sum(x*)·n − sum·nx`` instead, the same times nx·ny, exactly."""
    n = pooled.size
    ny = n - nx
    whole = pooled.dtype.kind in "iO"
    total_sum = int(pooled.sum()) if whole else 0

    def stat(xs_sum, ys_sum):
        if whole:
            return xs_sum * n - total_sum * nx
        return xs_sum / nx - ys_sum / ny

    if enumeration == "exact":
        total = math.comb(n, nx)
        if total > MAX_ENUMERATION:
            raise MethodError(
                f"exact enumeration of {total} splits exceeds {MAX_ENUMERATION}; register "
                "random permutations instead"
            )
        out = np.empty(total, dtype=pooled.dtype)
        combos = combinations(range(n), nx)
        step = _rows(n)
        at = 0
        while at < total:
            chunk = list(islice(combos, step))
            idx = np.array(chunk, dtype=np.intp).reshape(len(chunk), nx)
            mask = np.zeros((len(chunk), n), dtype=bool)
            np.put_along_axis(mask, idx, True, axis=1)
            xs = np.where(mask, pooled, 0)
            ys = np.where(mask, 0, pooled)
            out[at : at + len(chunk)] = stat(xs.sum(axis=-1), ys.sum(axis=-1))
            at += len(chunk)
        return out
    rng = np.random.Generator(np.random.PCG64(seed))
    out = np.empty(permutations, dtype=pooled.dtype)
    step = _rows(n)
    for lo in range(0, permutations, step):
        hi = min(lo + step, permutations)
        perms = np.stack([rng.permutation(n) for _ in range(hi - lo)])
        vals = pooled[perms]
        out[lo:hi] = stat(vals[:, :nx].sum(axis=-1), vals[:, nx:].sum(axis=-1))
    return out


def _flip_null(d: np.ndarray, enumeration: str, permutations, seed):
    """mean(±d) of each sign vector; of whole numbers (int64, :func:`_whole`) the sum, the
    same times n, exactly."""
    n = d.size
    scale = 1 if d.dtype.kind in "iO" else n
    if enumeration == "exact":
        if n >= 63 or (1 << n) > MAX_ENUMERATION:
            raise MethodError(
                f"exact enumeration of 2^{n} sign vectors exceeds {MAX_ENUMERATION}; register "
                "random permutations instead"
            )
        total = 1 << n
        out = np.empty(total, dtype=d.dtype)
        step = _rows(n)
        bits = np.arange(n, dtype=np.int64)
        for lo in range(0, total, step):
            hi = min(lo + step, total)
            k = np.arange(lo, hi, dtype=np.int64)
            flip = ((k[:, None] >> bits) & 1).astype(bool)
            sums = np.where(flip, -d, d).sum(axis=-1)
            out[lo:hi] = sums if scale == 1 else sums / scale
        return out
    rng = np.random.Generator(np.random.PCG64(seed))
    out = np.empty(permutations, dtype=d.dtype)
    step = _rows(2 * n)
    for lo in range(0, permutations, step):
        hi = min(lo + step, permutations)
        flip = rng.permuted(np.tile(np.arange(2), (hi - lo, n, 1)), axis=-1)[..., 0] == 1
        sums = np.where(flip, -d, d).sum(axis=-1)
        out[lo:hi] = sums if scale == 1 else sums / scale
    return out


def _whole(samples: list[np.ndarray], margin: float) -> tuple[list[np.ndarray], int, int] | None:
    """The samples and the margin as whole numbers over one denominator: each value the
    decimal the data (or the spec) write, times the least common denominator, so that sums
    and comparisons of arrangements are exact (a mean on the margin is a statistic of 0, and
    arrangements equal as decimals are equal), the margin, and the denominator: int64 arrays,
    or, when a sum of them could leave int64, arrays of Python integers (object arrays: the same
    sums, exact, some tens of times slower)."""
    from math import lcm

    decimal: dict[float, Fraction] = {}
    for a in samples:
        for v in a.tolist():
            if v not in decimal:
                decimal[v] = Fraction(repr(float(v)))
    m = Fraction(repr(float(margin)))
    den = lcm(m.denominator, *(f.denominator for f in decimal.values()))
    size = sum(int(a.size) for a in samples)
    largest = max([abs(f) for f in decimal.values()] + [abs(m)]) * den
    # a difference, summed, times n, must fit int64; else Python integers
    kind = np.int64 if 2 * largest * size * (size + 1) < 2**62 else object
    whole = {v: int(f * den) for v, f in decimal.items()}
    out = [np.array([whole[v] for v in a.tolist()], dtype=kind) for a in samples]
    return out, int(m * den), den


def _permutation_result(
    method,
    null,
    observed,
    estimate,
    margin,
    *,
    key,
    alternative,
    two_sided,
    plus_one,
    exact,
    counts,
    enumeration,
    seed,
):
    p, p_exact, b, total = _p_values(
        null, key, alternative=alternative, two_sided=two_sided, plus_one=plus_one
    )
    return Result(
        method=method,
        estimate=estimate,
        statistic=observed,
        statistic_name="mean difference − margin",
        p=p,
        exact={**exact, "p": p_exact},
        counts={**counts, "permutations": total, "extreme": b},
        extra={"enumeration": enumeration, "seed": seed, "margin": margin},
    )


def permutation_mean_difference(
    x,
    y,
    *,
    alternative: str,
    margin: float,
    enumeration: str,
    permutations: int | None,
    seed: int | None,
    p_correction: str,
    two_sided: str,
) -> Result:
    """Permutation (relabelling) test of mean(x) − mean(y) against ``margin`` (shift model:
    x − margin and y exchangeable under H0)."""
    opts = _permutation_options(
        alternative, margin, enumeration, permutations, seed, p_correction, two_sided
    )
    alternative, margin, enumeration, permutations, seed, p_correction, two_sided = opts
    a, b = _sample("x", x), _sample("y", y)
    name = "permutation-mean-difference"
    counts = {"n_x": int(a.size), "n_y": int(b.size)}
    if a.size == 0 or b.size == 0:
        return Result(method=name, statistic_name="mean difference − margin", counts=counts)
    shifted = a - margin
    observed = float(shifted.sum() / a.size - b.sum() / b.size)
    estimate = float(a.sum() / a.size - b.sum() / b.size)
    pooled = np.concatenate([shifted, b])
    key, statistic = observed, None
    whole = _whole([a, b], margin)
    if whole is not None:  # the arrangements compared exactly on the decimals
        (wa, wb), wm, den = whole
        pooled = np.concatenate([wa - wm, wb])
        n = int(pooled.size)
        key = int((wa - wm).sum()) * n - int(pooled.sum()) * int(a.size)
        statistic = Fraction(key, den * int(a.size) * int(b.size))
        observed = float(statistic)
    null = _relabel_null(pooled, a.size, enumeration, permutations, seed)
    return _permutation_result(
        name,
        null,
        observed,
        estimate,
        margin,
        key=key,
        alternative=alternative,
        two_sided=two_sided,
        plus_one=p_correction == "plus-one",
        exact={**_exact_estimate(a, b), **({} if statistic is None else {"statistic": statistic})},
        counts=counts,
        enumeration=enumeration,
        seed=seed,
    )


def _sign_flip(name, d, margin, opts, counts, samples):
    """The sign-flip test of d (x, or x − y: ``samples``) less the margin."""
    alternative, margin, enumeration, permutations, seed, p_correction, two_sided = opts
    if d.size == 0:
        return Result(method=name, statistic_name="mean difference − margin", counts=counts)
    shifted = d - margin
    observed = float(shifted.sum() / d.size)
    key, statistic = observed, None
    whole = _whole(samples, margin)
    if whole is not None:  # the arrangements compared exactly on the decimals
        parts, wm, den = whole
        shifted = (parts[0] - parts[1] if len(parts) == 2 else parts[0]) - wm
        key = int(shifted.sum())
        statistic = Fraction(key, den * int(d.size))
        observed = float(statistic)
    null = _flip_null(shifted, enumeration, permutations, seed)
    return _permutation_result(
        name,
        null,
        observed,
        float(d.sum() / d.size),
        margin,
        key=key,
        alternative=alternative,
        two_sided=two_sided,
        plus_one=p_correction == "plus-one",
        exact={**_exact_estimate(d), **({} if statistic is None else {"statistic": statistic})},
        counts=counts,
        enumeration=enumeration,
        seed=seed,
    )


def permutation_paired_mean_difference(
    x,
    y,
    *,
    alternative: str,
    margin: float,
    enumeration: str,
    permutations: int | None,
    seed: int | None,
    p_correction: str,
    two_sided: str,
) -> Result:
    """Sign-flip test of the mean of d = x − y against ``margin`` (d − margin symmetric about 0
    under H0)."""
    opts = _permutation_options(
        alternative, margin, enumeration, permutations, seed, p_correction, two_sided
    )
    d = _paired(x, y)
    samples = [_sample("x", x), _sample("y", y)]
    name = "permutation-paired-mean-difference"
    return _sign_flip(name, d, opts[1], opts, {"n": int(d.size)}, samples)


def permutation_mean(
    x,
    *,
    alternative: str,
    margin: float,
    enumeration: str,
    permutations: int | None,
    seed: int | None,
    p_correction: str,
    two_sided: str,
) -> Result:
    """Sign-flip test of the mean of one sample against ``margin`` (x − margin symmetric about
    0 under H0)."""
    opts = _permutation_options(
        alternative, margin, enumeration, permutations, seed, p_correction, two_sided
    )
    a = _sample("x", x)
    return _sign_flip("permutation-mean", a, opts[1], opts, {"n": int(a.size)}, [a])


# -- the catalogue ------------------------------------------------------------------------------

_BOOT_OPTIONS = {
    "interval": "percentile | basic | bca | studentized",
    "level": "the interval's level, strictly between 0 and 1",
    "resamples": "the number of bootstrap resamples B (at least 1)",
    "seed": "the PCG64 seed (a whole number, at least 0)",
    "quantile_method": "numpy.quantile's method: " + ", ".join(QUANTILE_METHODS),
    "studentized_se": "with the studentized interval only: closed-form (s/√n) | "
    "inner-bootstrap; None otherwise",
    "inner_resamples": "with studentized_se inner-bootstrap only: inner resamples per "
    "resample (at least 2); None otherwise",
}
_BOOT_FORMULA = (
    "α = (1 − level)/2; percentile [q(α), q(1 − α)]; basic [2θ̂ − q(1 − α), 2θ̂ − q(α)]; "
    "BCa [q(α₁), q(α₂)], α₁,₂ = Φ(z₀ + (z₀ ± z_α)/(1 − â(z₀ ± z_α))), z₀ = Φ⁻¹((#{θ* < θ̂} + "
    "#{θ* ≤ θ̂})/2B), â = Σ_j Σ_i U³/n_j³ / (6(Σ_j Σ_i U²/n_j²)^{3/2}), U_ji = (n_j − 1)"
    "(θ̄_(j·) − θ̂_(ji)) (delete-one jackknife of each sample); studentized "
    "[θ̂ − q_t(1 − α)·SE, θ̂ − q_t(α)·SE], t* = (θ* − θ̂)/SE*; q the registered quantile "
    "method over the B replicates; SE reported = sd(θ*), ddof 1"
)
_BOOT_REFERENCE = (
    "Efron B, Tibshirani RJ (1993). An Introduction to the Bootstrap, ch. 12-14 (bootstrap-t, "
    "percentile, BCa; eq. 14.15, 15.36); Davison AC, Hinkley DV (1997). Bootstrap Methods and "
    "their Application, ch. 5 (basic and studentized intervals)"
)
_BOOT_ORACLE = (
    "scipy.stats.bootstrap(method='percentile' | 'basic' | 'BCa', batch=None, "
    "rng=Generator(PCG64(seed))), which draws the same indices (its default method is BCa and "
    "its quantile is the linear one); other quantile methods: numpy.quantile over scipy's "
    "bootstrap_distribution; studentized: a plain loop over the documented draws in the test"
)
_BOOT_EXACT = (
    "estimate: exact fraction for integer data; bounds are floating point quantiles of the "
    "replicates, compared as the shortest decimal of its float"
)
_PERM_OPTIONS = {
    "alternative": "two-sided | greater | less (H1 about the mean difference against the margin)",
    "margin": "the value tested against (a finite number; 0 for no difference)",
    "enumeration": f"random | exact (at most {MAX_ENUMERATION} arrangements)",
    "permutations": "random: the number of permutations B (at least 1); exact: None",
    "seed": "random: the PCG64 seed (a whole number, at least 0); exact: None",
    "p_correction": "plus-one ((b + 1)/(B + 1)) | none (b/B; the only one with exact)",
    "two_sided": "double-smaller (min(1, 2·min(P_less, P_greater))) | absolute "
    "(|T*| ≥ |T|); used by two-sided only",
}
_PERM_EXACT = (
    "P is the fraction (b + 1)/(B + 1) or b/B of integer counts (exact['p']); the count b "
    "compares each arrangement's statistic with the observed one exactly, on the decimals the "
    "data and the margin write put over one denominator (a mean on the margin is T = 0 "
    "exactly, exact['statistic'], and arrangements equal as decimals are equal): in 64-bit "
    "integers when their sums fit (data of up to about 15 significant digits), otherwise in "
    "Python integers (exact, slower)"
)
_PERM_REFERENCE = (
    "Good P (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed.; "
    "Phipson B, Smyth GK (2010). Permutation P-values should never be zero. Stat Appl Genet "
    "Mol Biol 9:39"
)

CATALOGUE = (
    Entry(
        name="bootstrap-mean",
        family="resampling_methods",
        function="prereg.stats.resampling_methods:bootstrap_mean",
        shape="sample",
        summary="Bootstrap interval of a mean: percentile, basic, BCa or studentized",
        options=_BOOT_OPTIONS,
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula="θ̂ = mean(x); I = rng.integers(0, n, size=(B, n)); θ*_r = mean(x[I_r]); "
        + _BOOT_FORMULA,
        reference=_BOOT_REFERENCE,
        oracle=_BOOT_ORACLE,
        exactness=_BOOT_EXACT,
    ),
    Entry(
        name="bootstrap-mean-difference",
        family="resampling_methods",
        function="prereg.stats.resampling_methods:bootstrap_mean_difference",
        shape="two-samples",
        summary="Bootstrap interval of mean(x) − mean(y) of two independent samples",
        options=_BOOT_OPTIONS,
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula="θ̂ = mean(x) − mean(y); x's B rows of indices drawn first, then y's; "
        + _BOOT_FORMULA,
        reference=_BOOT_REFERENCE,
        oracle=_BOOT_ORACLE,
        exactness=_BOOT_EXACT,
    ),
    Entry(
        name="bootstrap-paired-mean-difference",
        family="resampling_methods",
        function="prereg.stats.resampling_methods:bootstrap_paired_mean_difference",
        shape="paired-samples",
        summary="Bootstrap interval of the mean of paired differences x − y (pairs resampled)",
        options=_BOOT_OPTIONS,
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula="d = x − y; θ̂ = mean(d); I = rng.integers(0, n, size=(B, n)) over the pairs; "
        + _BOOT_FORMULA,
        reference=_BOOT_REFERENCE,
        oracle=_BOOT_ORACLE + " (paired=True, or the one sample of differences)",
        exactness=_BOOT_EXACT,
    ),
    Entry(
        name="permutation-mean-difference",
        family="resampling_methods",
        function="prereg.stats.resampling_methods:permutation_mean_difference",
        shape="two-samples",
        summary="Permutation test of a difference of two means (relabelling), random or exact",
        options=_PERM_OPTIONS,
        reports=("estimate", "statistic", "p", "exact", "counts", "extra"),
        formula=(
            "T = mean(x − margin) − mean(y); T*: the same of a relabelling of the pooled values "
            "(rng.permutation(n_x + n_y) per permutation, or every split); b = #{T* ≥ T − γ} "
            "(greater), #{T* ≤ T + γ} (less), #{|T*| ≥ |T| − γ} (absolute), γ = 100ε|T|; "
            "P = (b + 1)/(B + 1) or b/B; double-smaller: min(1, 2·min(P_less, P_greater))"
        ),
        reference=_PERM_REFERENCE,
        oracle=(
            "scipy.stats.permutation_test(permutation_type='independent', batch=None, "
            "rng=Generator(PCG64(seed))): the same permutations, and exactly its P for exact "
            "enumeration (n_resamples=inf); its random P is always plus-one and its two-sided "
            "doubles the smaller one-sided P"
        ),
        exactness=_PERM_EXACT,
    ),
    Entry(
        name="permutation-paired-mean-difference",
        family="resampling_methods",
        function="prereg.stats.resampling_methods:permutation_paired_mean_difference",
        shape="paired-samples",
        summary="Sign-flip permutation test of the mean of paired differences, random or exact",
        options=_PERM_OPTIONS,
        reports=("estimate", "statistic", "p", "exact", "counts", "extra"),
        formula=(
            "d = x − y − margin; T = mean(d); T* = mean(±d) with signs from rng.permuted(tile("
            "arange(2), (B, n, 1)), axis=-1)[..., 0] (1 flips) or every sign vector; P as for "
            "the two-sample test"
        ),
        reference=_PERM_REFERENCE,
        oracle=(
            "scipy.stats.permutation_test((d,), permutation_type='samples', batch=None, "
            "rng=Generator(PCG64(seed))): sign flips of one sample, the same draws"
        ),
        exactness=_PERM_EXACT,
    ),
    Entry(
        name="permutation-mean",
        family="resampling_methods",
        function="prereg.stats.resampling_methods:permutation_mean",
        shape="sample",
        summary="Sign-flip permutation test of one mean against a margin, random or exact",
        options=_PERM_OPTIONS,
        reports=("estimate", "statistic", "p", "exact", "counts", "extra"),
        formula="d = x − margin; T = mean(d); sign flips and P as for the paired test",
        reference=_PERM_REFERENCE,
        oracle=(
            "scipy.stats.permutation_test((x − margin,), permutation_type='samples', "
            "batch=None, rng=Generator(PCG64(seed)))"
        ),
        exactness=_PERM_EXACT,
    ),
)
