"""Two independent proportions (and one): intervals, tests against a margin, exact tests of a
2×2 table, effect measures.

Every function reads counts (``k, n`` for one proportion; ``k1, n1, k2, n2`` for arms a and b,
compared as ``a − b``) and returns a :class:`prereg.stats.result.Result`.  Every statistical
choice is a required keyword argument: ``level`` (two-sided coverage of an interval, in (0, 1)),
``alternative`` ("two-sided", "greater": H1 ``p1 − p2 > margin``, "less": H1
``p1 − p2 < margin``), ``margin`` (in (−1, 1)), and the method's own options.  The 2×2 table is
``[[k1, n1 − k1], [k2, n2 − k2]]`` (arms as rows, success first).

The estimate ``k1/n1 − k2/n2`` (and ``k/n``, a risk ratio, a sample odds ratio, a chi-square
statistic of counts) is also given exactly in ``Result.exact``; a numerator ``p̂1 − p̂2 − δ`` is
formed in exact rational arithmetic before it is divided by a standard error, so that a
difference of 15/100 − 10/100 against a margin of 0.05 is 0 (the float margin's own binary
value is what is compared), not 1e−17.

The score tests against a margin (Farrington–Manning, Miettinen–Nurminen) solve for the
constrained maximum-likelihood proportions by a safeguarded Newton iteration on the score, in
the unknown that is the smallest of ``p̃1, p̃2, 1 − p̃1, 1 − p̃2``, so that each keeps its
relative precision at n ≈ 1e6 and margins of 1e−6 or 1e−9; see
:func:`constrained_proportions`, which is the registry's vectorised solver
(:func:`prereg.stats.proportions.solve_low`, started from the closed-form root of the cubic):
one implementation for both.

Importing this module imports numpy only; scipy is imported inside the functions that need it.
"""

from __future__ import annotations

import math
from fractions import Fraction

from prereg.stats.catalogue import SE_ROOT, Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

ALTERNATIVES = ("two-sided", "greater", "less")
_EPS = 2.220446049250313e-16


# -- argument checks ---------------------------------------------------------------------------


def _int(name: str, value) -> int:
    """A count: a non-negative integer (an integral float such as 3.0 is accepted)."""
    if isinstance(value, bool):
        raise MethodError(f"{name} must be a count (a non-negative integer), got {value!r}")
    try:
        f = Fraction(value)
    except (TypeError, ValueError):
        raise MethodError(
            f"{name} must be a count (a non-negative integer), got {value!r}"
        ) from None
    if f.denominator != 1 or f < 0:
        raise MethodError(f"{name} must be a count (a non-negative integer), got {value!r}")
    return int(f)


def _arm(k, n, names=("k", "n")) -> tuple[int, int]:
    ki, ni = _int(names[0], k), _int(names[1], n)
    if ki > ni:
        raise MethodError(f"{names[0]} ({ki}) must not exceed {names[1]} ({ni})")
    return ki, ni


def _arms(k1, n1, k2, n2) -> tuple[int, int, int, int]:
    a = _arm(k1, n1, ("k1", "n1"))
    b = _arm(k2, n2, ("k2", "n2"))
    return a[0], a[1], b[0], b[1]


def _level(level) -> float:
    try:
        lv = float(level)
    except (TypeError, ValueError):
        raise MethodError(f"level must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < lv < 1.0:
        raise MethodError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def _alternative(alternative) -> str:
    if alternative not in ALTERNATIVES:
        raise MethodError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}"
        )
    return alternative


def _margin(margin) -> Fraction:
    """The margin as the decimal written in the spec (a float as the shortest decimal that
    reads back as it: -0.05 is exactly -1/20, as every registered threshold is), so that a
    difference of counts exactly on the margin gives a numerator of exactly 0."""
    from prereg.stats.compare import threshold

    if isinstance(margin, bool):
        raise MethodError(f"margin must be a number in (-1, 1), got {margin!r}")
    try:
        m = threshold(margin)
    except (TypeError, ValueError, OverflowError):
        raise MethodError(f"margin must be a number in (-1, 1), got {margin!r}") from None
    if not -1 < m < 1:
        raise MethodError(f"margin must lie strictly between -1 and 1, got {margin!r}")
    return m


def _choice(name: str, value, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise MethodError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


# -- normal and chi-square tails -----------------------------------------------------------------


def _ndtr(x: float) -> float:
    import scipy.special

    return float(scipy.special.ndtr(x))


def critical(level: float) -> float:
    """``Φ⁻¹((1 + level)/2)``, the two-sided critical value of a standard normal."""
    import scipy.special

    return float(scipy.special.ndtri((1.0 + level) / 2.0))


def normal_p(z: float | None, alternative: str) -> float | None:
    """P of a standard-normal statistic: "greater" ``Φ(−z)``, "less" ``Φ(z)``, "two-sided"
    ``2Φ(−|z|)`` (at most 1)."""
    if z is None or math.isnan(z):
        return None
    if alternative == "greater":
        return _ndtr(-z)
    if alternative == "less":
        return _ndtr(z)
    return min(1.0, 2.0 * _ndtr(-abs(z)))


def chi2_sf(x: float | None, df: int) -> float | None:
    """P(χ²_df ≥ x)."""
    if x is None:
        return None
    import scipy.special

    return float(scipy.special.chdtrc(df, x))


def _diff(k1, n1, k2, n2) -> Fraction:
    return Fraction(k1, n1) - Fraction(k2, n2)


def _sqrt_fraction(x: Fraction) -> float:
    """√x of a non-negative rational, correctly rounded to within an ulp (the float of x
    first, which is correctly rounded, then its square root)."""
    return math.sqrt(float(x))


def _counts2(k1, n1, k2, n2) -> dict:
    return {"k1": k1, "n1": n1, "k2": k2, "n2": n2}


# -- one proportion ------------------------------------------------------------------------------


def wilson(k, n, *, level) -> Result:
    """Wilson score interval of ``k/n`` (bounds clipped to [0, 1])."""
    from prereg.stats.proportions import wilson_interval

    ki, ni = _arm(k, n)
    lv = _level(level)
    if ni == 0:
        return Result("wilson", counts={"k": ki, "n": ni})
    lo, hi = wilson_interval(ki, ni, level=lv)
    est = Fraction(ki, ni)
    return Result(
        "wilson",
        estimate=est,
        lower=lo,
        upper=hi,
        exact={"estimate": est},
        counts={"k": ki, "n": ni},
    )


def binomial_test(k, n, *, alternative, null_proportion, level) -> Result:
    """The exact binomial test of ``k`` successes in ``n`` trials against the null proportion
    ``null_proportion`` (the decimal as written: 0.8 is exactly 4/5), with the Clopper–Pearson
    interval at ``level`` (one-sided with a one-sided alternative, as scipy's ``binomtest``
    gives it).

    Up to :data:`prereg.stats.samples.EXACT_SUM_LIMIT` trials P is the fraction of integer
    sums (``exact['p']``): with p0 = a/b each outcome j has probability
    C(n, j) a^j (b − a)^(n − j) / b^n; "greater" sums j ≥ k, "less" j ≤ k, "two-sided" every j no more likely than k (compared
    exactly; scipy admits outcomes up to 1e-7 relatively more likely, a tolerance for its
    floats). Beyond, P is scipy's float."""
    from prereg.stats.samples import EXACT_SUM_LIMIT

    ki, ni = _arm(k, n)
    alt = _alternative(alternative)
    p0 = _null_proportion(null_proportion)
    lv = _level(level)
    counts = {"k": ki, "n": ni}
    if ni == 0:
        return Result("binomial-test", counts=counts)
    est = Fraction(ki, ni)
    exact = {"estimate": est}
    if ni <= EXACT_SUM_LIMIT:
        pe = _binomial_p(ki, ni, p0, alt)
        exact["p"] = pe
        p = float(pe)
    else:
        from scipy.stats import binomtest

        p = min(1.0, float(binomtest(ki, ni, float(p0), alternative=alt).pvalue))
    from prereg.stats.proportions import clopper_pearson_interval

    lo, hi = clopper_pearson_interval(ki, ni, level=lv, alternative=alt)
    return Result(
        "binomial-test",
        estimate=est,
        statistic=ki,
        statistic_name="k",
        statistic_count=True,
        lower=lo,
        upper=hi,
        p=p,
        exact=exact,
        counts=counts,
    )


def _null_proportion(value) -> Fraction:
    """The null proportion as the decimal written in the spec, strictly between 0 and 1."""
    from prereg.stats.compare import threshold

    said = f"null_proportion must be a proportion in (0, 1), got {value!r}"
    if isinstance(value, bool):
        raise MethodError(said)
    try:
        p0 = threshold(value)
    except (TypeError, ValueError, OverflowError):
        raise MethodError(said) from None
    if not 0 < p0 < 1:
        raise MethodError(f"null_proportion must lie strictly between 0 and 1, got {value!r}")
    if p0.denominator > 10**30:
        raise MethodError(f"null_proportion must be a decimal of at most 30 places, got {value!r}")
    return p0


def _binomial_p(k: int, n: int, p0: Fraction, alternative: str) -> Fraction:
    """P of the exact binomial test as a fraction (see :func:`binomial_test`)."""
    a, b = p0.numerator, p0.denominator
    c = b - a
    # each outcome's probability times b^n: C(n, j) a^j c^(n - j), from j = 0 upwards
    terms = [c**n]
    for j in range(n):
        terms.append(terms[-1] * (n - j) * a // ((j + 1) * c))
    if alternative == "greater":
        top = sum(terms[k:])
    elif alternative == "less":
        top = sum(terms[: k + 1])
    else:
        at = terms[k]
        top = sum(t for t in terms if t <= at)
    return min(Fraction(1), Fraction(top, b**n))


def _wald_var(k1, n1, k2, n2) -> Fraction:
    return Fraction(k1 * (n1 - k1), n1**3) + Fraction(k2 * (n2 - k2), n2**3)


def wald_difference(k1, n1, k2, n2, *, level) -> Result:
    """The risk difference ``p̂1 − p̂2`` with its Wald (unpooled) interval."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    lv = _level(level)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("wald-difference", counts=counts)
    d = _diff(k1, n1, k2, n2)
    se = _sqrt_fraction(_wald_var(k1, n1, k2, n2))
    half = critical(lv) * se
    return Result(
        "wald-difference",
        estimate=d,
        se=se,
        lower=float(d) - half,
        upper=float(d) + half,
        exact={"estimate": d, "se_squared": _wald_var(k1, n1, k2, n2)},
        counts=counts,
    )


def wald_difference_test(k1, n1, k2, n2, *, alternative, margin) -> Result:
    """Wald z test of ``p1 − p2 = margin`` with the unpooled standard error."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    alt = _alternative(alternative)
    m = _margin(margin)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("wald-difference-test", counts=counts)
    d = _diff(k1, n1, k2, n2)
    var = _wald_var(k1, n1, k2, n2)
    if var == 0:  # every arm all-yes or all-no: no standard error
        return Result(
            "wald-difference-test", estimate=d, se=0.0, exact={"estimate": d}, counts=counts
        )
    se = _sqrt_fraction(var)
    z = float(d - m) / se
    return Result(
        "wald-difference-test",
        estimate=d,
        se=se,
        statistic=z,
        statistic_name="z",
        p=normal_p(z, alt),
        # z² a fraction of the counts and the margin: a z on a threshold is decided by √ of it
        exact={"estimate": d, "statistic_squared": (d - m) ** 2 / var, "se_squared": var},
        counts=counts,
    )


def pooled_z_test(k1, n1, k2, n2, *, alternative, margin) -> Result:
    """Pooled z test of ``p1 = p2`` (margin must be 0: against another margin the pooled
    proportion is not the null's estimate; use ``farrington-manning``)."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    alt = _alternative(alternative)
    if _margin(margin) != 0:
        raise MethodError(
            f"pooled-z tests p1 - p2 = 0 only (margin 0), got margin {margin!r}; "
            "farrington-manning and miettinen-nurminen-test take a margin"
        )
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("pooled-z", counts=counts)
    d = _diff(k1, n1, k2, n2)
    k, n = k1 + k2, n1 + n2
    var = Fraction(k * (n - k), n * n) * (Fraction(1, n1) + Fraction(1, n2))
    if var == 0:
        return Result("pooled-z", estimate=d, se=0.0, exact={"estimate": d}, counts=counts)
    se = _sqrt_fraction(var)
    z = float(d) / se
    return Result(
        "pooled-z",
        estimate=d,
        se=se,
        statistic=z,
        statistic_name="z",
        p=normal_p(z, alt),
        exact={"estimate": d, "statistic_squared": d * d / var, "se_squared": var},
        counts=counts,
    )


def newcombe_hybrid(k1, n1, k2, n2, *, level) -> Result:
    """Newcombe's hybrid score interval of ``p1 − p2`` (method 10), from Wilson bounds."""
    from prereg.stats.proportions import newcombe_difference

    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    lv = _level(level)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("newcombe-hybrid", counts=counts)
    _, lo, hi = newcombe_difference(k1, n1, k2, n2, level=lv)
    d = _diff(k1, n1, k2, n2)
    return Result(
        "newcombe-hybrid", estimate=d, lower=lo, upper=hi, exact={"estimate": d}, counts=counts
    )


def agresti_caffo(k1, n1, k2, n2, *, level) -> Result:
    """Agresti–Caffo interval: the Wald interval after adding one success and one failure to
    each arm."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    lv = _level(level)
    counts = _counts2(k1, n1, k2, n2)
    a1, m1, a2, m2 = k1 + 1, n1 + 2, k2 + 1, n2 + 2
    centre = _diff(a1, m1, a2, m2)
    se = _sqrt_fraction(_wald_var(a1, m1, a2, m2))
    half = critical(lv) * se
    d = _diff(k1, n1, k2, n2) if n1 and n2 else None
    return Result(
        "agresti-caffo",
        estimate=d,
        se=se,
        lower=float(centre) - half,
        upper=float(centre) + half,
        exact=({"estimate": d} if d is not None else {})
        | {"se_squared": _wald_var(a1, m1, a2, m2)},
        counts=counts,
        extra={"adjusted_difference": float(centre)},
    )


# -- score tests against a margin: the constrained maximum-likelihood proportions ---------------


def constrained_proportions(k1, n1, k2, n2, margin) -> tuple[float, float, float, float]:
    """``(p̃1, p̃2, 1 − p̃1, 1 − p̃2)``: the maximum-likelihood proportions under
    ``p1 − p2 = margin`` (Farrington & Manning 1990), each to within a few ulps.

    One implementation with the registry's vectorised test
    (:func:`prereg.stats.proportions.solve_low` and ``_fm_estimates``): at margin 0 the pooled
    proportion; otherwise the score equation solved by a safeguarded Newton iteration from the
    closed-form root for the smallest of the four figures, which is either the lower
    constrained proportion s (the other arm's being ``s + |margin|``, an addition) or the
    complement ``1 − |margin| − s`` of the higher one (then solved with successes and failures
    exchanged).  Arms with ``n = 0`` are refused by the callers.
    """
    from prereg.stats.proportions import _fm_estimates

    t1, t2, c1, c2 = _fm_estimates(k1, n1, k2, n2, float(margin))
    return float(t1), float(t2), float(c1), float(c2)


def _score_parts(k1, n1, k2, n2, m: Fraction):
    t1, t2, c1, c2 = constrained_proportions(k1, n1, k2, n2, m)
    var = t1 * c1 / n1 + t2 * c2 / n2
    num = _diff(k1, n1, k2, n2) - m
    return num, var, t1, t2


def restricted_balls(
    k1: int, n1: int, k2: int, n2: int, margin: Fraction, *, mn: bool, hint: float
):
    """A function ``prec -> (z, se)`` of arb balls holding the Farrington–Manning score z of
    ``p1 − p2 = margin`` and its se (``mn``: Miettinen–Nurminen's, the variance times
    N/(N − 1)), at the working precision; None where it cannot be formed so (an arm empty, no
    feasible set).

    The restricted p̃1 is the root in ``(max(0, δ), min(1, 1 + δ))`` of Miettinen & Nurminen's
    cubic (``a = 1 + θ``, ``b = −(1 + θ + p̂1 + θp̂2 + δ(θ + 2))``, ``c = δ² + δ(2p̂1 + θ + 1) +
    p̂1 + θp̂2``, ``d = −p̂1δ(1 + δ)``, θ = n2/n1), its coefficients fractions of the counts and
    the margin as written: flint isolates its roots in balls of the working precision, so z is
    enclosed however close to a threshold it lies.  Where no root lies inside, the maximum is
    on an end (an arm with all or no successes): the end, a fraction, nearest ``hint`` (the
    method's p̃1).  At δ = 0 p̃1 = p̃2 is the pooled proportion, a fraction."""
    from flint import arb, fmpq, fmpz_poly

    if n1 <= 0 or n2 <= 0:
        return None
    d = margin
    p1, p2, theta = Fraction(k1, n1), Fraction(k2, n2), Fraction(n2, n1)
    lo, hi = max(Fraction(0), d), min(Fraction(1), 1 + d)
    if not lo < hi:
        return None
    factor = Fraction(n1 + n2, n1 + n2 - 1) if mn else Fraction(1)
    dev = p1 - p2 - d

    def q(x: Fraction):
        return arb(fmpq(x.numerator, x.denominator))

    def finish(t1, t2):
        var = (t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2) * q(factor)
        se = var.sqrt()
        return q(dev) / se, se

    if d == 0:
        pooled = Fraction(k1 + k2, n1 + n2)
        if pooled in (0, 1):
            return None
        return lambda prec: finish(q(pooled), q(pooled))
    a = 1 + theta
    b = -(1 + theta + p1 + theta * p2 + d * (theta + 2))
    c = d * d + d * (2 * p1 + theta + 1) + p1 + theta * p2
    e = -p1 * d * (1 + d)
    coefficients = [e, c, b, a]
    scale = 1
    for x in coefficients:
        scale = scale * x.denominator // math.gcd(scale, x.denominator)
    poly = fmpz_poly([int(x * scale) for x in coefficients])
    # an end of the feasible set that is itself a root (an arm with all or no successes): a
    # root ball holding it is that root, not the one inside
    ends = [x for x in (lo, hi) if sum(c * x**i for i, c in enumerate(coefficients)) == 0]

    def balls(prec):
        inside = []
        for root, _ in poly.complex_roots():
            if not root.imag.contains(0):
                continue
            r = root.real
            if r > q(lo) and r < q(hi):
                inside.append(r)
            elif any(r.overlaps(q(x)) for x in (lo, hi) if x not in ends):
                inside.append(None)  # a root that may lie inside: not isolated yet
            # otherwise outside, or the end that is a root itself (its ball holds the end)
        if not inside:  # the maximum lies on an end
            end = lo if abs(hint - float(lo)) <= abs(hint - float(hi)) else hi
            return finish(q(end), q(end - d))
        if len(inside) != 1 or inside[0] is None:
            return arb("nan")  # not isolated at this precision: undecided, a finer one next
        t1 = inside[0]
        return finish(t1, t1 - q(d))

    return balls


def _score_test(name, k1, n1, k2, n2, alternative, margin, mn: bool) -> Result:
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    alt = _alternative(alternative)
    m = _margin(margin)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result(name, counts=counts)
    d = _diff(k1, n1, k2, n2)
    num, var, t1, t2 = _score_parts(k1, n1, k2, n2, m)
    if mn:
        n = n1 + n2
        var *= n / (n - 1)
    extra = {"p1_null": t1, "p2_null": t2}
    if var <= 0:  # margin 0 and both arms all-yes or all-no: the difference is exactly 0
        return Result(name, estimate=d, se=0.0, exact={"estimate": d}, counts=counts, extra=extra)
    se = math.sqrt(var)
    z = float(num) / se
    return Result(
        name,
        estimate=d,
        se=se,
        statistic=z,
        statistic_name="z",
        p=normal_p(z, alt),
        exact={"estimate": d},
        counts=counts,
        extra=extra,
    )


def farrington_manning(k1, n1, k2, n2, *, alternative, margin) -> Result:
    """Farrington–Manning score test of ``p1 − p2 = margin``."""
    return _score_test("farrington-manning", k1, n1, k2, n2, alternative, margin, mn=False)


def miettinen_nurminen_test(k1, n1, k2, n2, *, alternative, margin) -> Result:
    """Miettinen–Nurminen score test of ``p1 − p2 = margin`` (the Farrington–Manning variance
    times ``N/(N − 1)``)."""
    return _score_test("miettinen-nurminen-test", k1, n1, k2, n2, alternative, margin, mn=True)


def _mn_z(k1, n1, k2, n2, delta: float) -> float:
    num, var, _, _ = _score_parts(k1, n1, k2, n2, Fraction(delta))
    n = n1 + n2
    var *= n / (n - 1)
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return float(num) / math.sqrt(var)


def miettinen_nurminen(k1, n1, k2, n2, *, level) -> Result:
    """Miettinen–Nurminen score interval of ``p1 − p2``: the margins δ whose two-sided score
    test (with the ``N/(N − 1)`` variance factor) is not rejected at ``1 − level``."""
    from scipy.optimize import brentq

    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    lv = _level(level)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0 or n1 + n2 < 2:
        return Result("miettinen-nurminen", counts=counts)
    d = _diff(k1, n1, k2, n2)
    df = float(d)
    zc = critical(lv)
    lo_end = math.nextafter(-1.0, 0.0)
    hi_end = math.nextafter(1.0, 0.0)

    def f(delta: float, target: float) -> float:
        return _mn_z(k1, n1, k2, n2, delta) - target

    # z(δ) decreases in δ from +∞ near −1 to −∞ near 1, and is 0 at δ = d.
    if d == -1:
        lower = -1.0
    elif f(lo_end, zc) <= 0:
        lower = lo_end
    else:
        lower = brentq(f, lo_end, df, args=(zc,), xtol=1e-300, rtol=4 * _EPS, maxiter=500)
    if d == 1:
        upper = 1.0
    elif f(hi_end, -zc) >= 0:
        upper = hi_end
    else:
        upper = brentq(f, df, hi_end, args=(-zc,), xtol=1e-300, rtol=4 * _EPS, maxiter=500)
    return Result(
        "miettinen-nurminen",
        estimate=d,
        lower=lower,
        upper=upper,
        exact={"estimate": d},
        counts=counts,
    )


# -- exact tests of the 2x2 table --------------------------------------------------------------------


def _table(k1, n1, k2, n2) -> list[list[int]]:
    return [[k1, n1 - k1], [k2, n2 - k2]]


#: Tables of up to this many observations have Fisher's P summed in integers (a fraction).
EXACT_TABLE_LIMIT = 5000
#: scipy's relative tolerance for "no more probable than the observed table" (two-sided).
FISHER_TOLERANCE = Fraction(1, 10**7)


def fisher_p_fraction(k1: int, n1: int, k2: int, n2: int, alternative: str) -> Fraction | None:
    """Fisher's P as a fraction of integer sums of binomial coefficients (X, the first arm's
    successes given both margins, is hypergeometric: P(X = x) = C(n1, x)·C(n2, k − x)/C(N, k)):
    "greater" P(X ≥ k1), "less" P(X ≤ k1), "two-sided" the sum over tables no more probable
    than the observed one times (1 + 1e−7), scipy's definition, decided here in integers; None
    beyond :data:`EXACT_TABLE_LIMIT` observations."""
    n, k = n1 + n2, k1 + k2
    if n > EXACT_TABLE_LIMIT:
        return None
    lo, hi = max(0, k - n2), min(k, n1)
    weight = {x: math.comb(n1, x) * math.comb(n2, k - x) for x in range(lo, hi + 1)}
    if alternative == "greater":
        num = sum(weight[x] for x in range(k1, hi + 1))
    elif alternative == "less":
        num = sum(weight[x] for x in range(lo, k1 + 1))
    else:
        bound = weight[k1] * (1 + FISHER_TOLERANCE)
        num = sum(w for w in weight.values() if w <= bound)
    return min(Fraction(1), Fraction(num, math.comb(n, k)))


def fisher_exact(k1, n1, k2, n2, *, alternative) -> Result:
    """Fisher's exact test of the 2×2 table (conditional on both margins), with the
    conditional maximum-likelihood odds ratio as the estimate; P a fraction (``exact['p']``)
    up to :data:`EXACT_TABLE_LIMIT` observations."""
    from scipy.stats import fisher_exact as _fisher
    from scipy.stats.contingency import odds_ratio

    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    alt = _alternative(alternative)
    counts = _counts2(k1, n1, k2, n2)
    table = _table(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("fisher-exact", p=1.0, counts=counts, exact={"p": Fraction(1)})
    pe = fisher_p_fraction(k1, n1, k2, n2, alt)
    p = float(pe) if pe is not None else min(1.0, float(_fisher(table, alternative=alt).pvalue))
    cond = float(odds_ratio(table, kind="conditional").statistic)
    return Result(
        "fisher-exact",
        estimate=cond,
        p=p,
        exact={} if pe is None else {"p": pe},
        counts=counts,
        extra={"odds_ratio": "conditional maximum likelihood"},
    )


#: the widest support of X | margins whose conditional odds ratio is enclosed by balls (the
#: root of a polynomial of that degree; wider tables keep scipy's float)
CONDITIONAL_OR_DEGREE = 200


def conditional_or_ball(k1: int, n1: int, k2: int, n2: int):
    """A function ``prec -> arb ball`` of the conditional maximum-likelihood odds ratio ψ of
    the 2×2 table, or None (ψ 0 or infinite: k1 at an end of its support; a support wider
    than :data:`CONDITIONAL_OR_DEGREE`).  ψ is the one positive root of Σ_k (k − k1)·C(n1, k)·
    C(n2, t − k)·ψ^k over the support of k (t = k1 + k2: the noncentral hypergeometric mean
    equals k1); its coefficients change sign once, so the root is unique (Descartes), and flint
    isolates it at the working precision."""
    t = k1 + k2
    low, high = max(0, t - n2), min(n1, t)
    if not low < k1 < high or high - low > CONDITIONAL_OR_DEGREE:
        return None
    from flint import arb, fmpz_poly

    poly = fmpz_poly(
        [(k - k1) * math.comb(n1, k) * math.comb(n2, t - k) for k in range(low, high + 1)]
    )

    def ball(prec):
        found = [r.real for r, _ in poly.complex_roots() if r.imag.contains(0) and r.real > 0]
        return found[0] if len(found) == 1 else arb("nan")

    return ball


def _wald_keys(n1: int, n2: int, pooled: bool) -> list[list]:
    """Barnard's Wald statistic of every table, as an exact sortable key: sign(d)·d²/var (a
    rational; ±inf where the variance is 0 and d is not, 0 where d is 0)."""
    n = n1 + n2
    inv = Fraction(1, n1) + Fraction(1, n2)
    out = []
    for x1 in range(n1 + 1):
        row = []
        for x2 in range(n2 + 1):
            d = Fraction(x1, n1) - Fraction(x2, n2)
            if d == 0:
                row.append(Fraction(0))
                continue
            if pooled:
                k = x1 + x2
                var = Fraction(k * (n - k), n * n) * inv
            else:
                var = Fraction(x1 * (n1 - x1), n1**3) + Fraction(x2 * (n2 - x2), n2**3)
            sign = 1 if d > 0 else -1
            row.append(sign * math.inf if var == 0 else sign * d * d / var)
        out.append(row)
    return out


def _fisher_tails(n1: int, n2: int, upper: bool) -> list[list[Fraction]]:
    """Fisher's one-sided P of every table, exactly: P(X1 ≥ x1) (``upper``) or P(X1 ≤ x1)
    given the column total x1 + x2 (hypergeometric, as a ratio of sums of binomial
    coefficients)."""
    out = [[Fraction(0)] * (n2 + 1) for _ in range(n1 + 1)]
    c1 = [math.comb(n1, x) for x in range(n1 + 1)]
    c2 = [math.comb(n2, x) for x in range(n2 + 1)]
    for m in range(n1 + n2 + 1):
        lo_x, hi_x = max(0, m - n2), min(n1, m)
        w = [c1[x] * c2[m - x] for x in range(lo_x, hi_x + 1)]
        total = sum(w)
        run = 0
        order = range(len(w) - 1, -1, -1) if upper else range(len(w))
        for i in order:
            run += w[i]
            x1 = lo_x + i
            out[x1][m - x1] = Fraction(run, total)
    return out


def _max_over_pi(region, n1: int, n2: int, grid: int) -> float:
    """max over π in [0, 1] of P(region) for independent Binomial(n1, π) and Binomial(n2, π):
    the grid's best points, each refined by a bounded scalar maximisation between its
    neighbours."""
    import numpy as np
    from scipy.optimize import minimize_scalar
    from scipy.stats import binom

    x1s = np.arange(n1 + 1)
    x2s = np.arange(n2 + 1)
    mask = np.asarray(region, dtype=float)

    def prob(pi: float) -> float:
        return float(binom.pmf(x1s, n1, pi) @ mask @ binom.pmf(x2s, n2, pi))

    pis = np.linspace(0.0, 1.0, grid)
    vals = np.array([prob(pi) for pi in pis])
    best = float(vals.max())
    # Refine around every local maximum of the grid (the region's probability may have more
    # than one mode), largest first.
    peaks = [
        i
        for i in range(grid)
        if (i == 0 or vals[i] >= vals[i - 1]) and (i == grid - 1 or vals[i] >= vals[i + 1])
    ]
    peaks.sort(key=lambda i: -vals[i])
    for i in peaks[:4]:
        lo, hi = pis[max(i - 1, 0)], pis[min(i + 1, grid - 1)]
        res = minimize_scalar(
            lambda pi: -prob(pi), bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}
        )
        best = max(best, -float(res.fun))
    return min(1.0, best)


def _grid(grid) -> int:
    g = _int("grid", grid)
    if g < 3:
        raise MethodError(f"grid must be at least 3 points, got {grid!r}")
    return g


def barnard_exact(k1, n1, k2, n2, *, alternative, variance, grid) -> Result:
    """Barnard's unconditional exact test: the tables whose Wald statistic (``variance``
    "pooled" or "unpooled") is at least as extreme as the observed one, their probability
    maximised over the common proportion π."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    alt = _alternative(alternative)
    pooled = _choice("variance", variance, ("pooled", "unpooled")) == "pooled"
    g = _grid(grid)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("barnard-exact", counts=counts)
    keys = _wald_keys(n1, n2, pooled)
    obs = keys[k1][k2]
    if alt == "greater":
        region = [[v >= obs for v in row] for row in keys]
    elif alt == "less":
        region = [[v <= obs for v in row] for row in keys]
    else:
        region = [[abs(v) >= abs(obs) for v in row] for row in keys]
    if obs in (math.inf, -math.inf):
        stat = obs
    else:
        stat = math.copysign(_sqrt_fraction(abs(obs)), obs) if obs else 0.0
    return Result(
        "barnard-exact",
        statistic=stat,
        statistic_name="z",
        p=_max_over_pi(region, n1, n2, g),
        # z² exactly (the observed table's key): a threshold on z is decided by its root
        exact={} if obs in (math.inf, -math.inf) else {"statistic_squared": abs(obs)},
        counts=counts,
    )


def boschloo_exact(k1, n1, k2, n2, *, alternative, grid) -> Result:
    """Boschloo's unconditional exact test: Fisher's one-sided P as the statistic, the
    probability of the tables with a P at most the observed one maximised over π; two-sided
    is twice the smaller one-sided P (at most 1), as scipy defines it."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    alt = _alternative(alternative)
    g = _grid(grid)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0:
        return Result("boschloo-exact", counts=counts)

    def one_sided(upper: bool) -> tuple[float, Fraction]:
        tails = _fisher_tails(n1, n2, upper)
        obs = tails[k1][k2]
        region = [[v <= obs for v in row] for row in tails]
        return _max_over_pi(region, n1, n2, g), obs

    if alt == "greater":
        p, stat = one_sided(True)
    elif alt == "less":
        p, stat = one_sided(False)
    else:
        (pg, sg), (pl, sl) = one_sided(True), one_sided(False)
        p, stat = (2.0 * pl, sl) if pl < pg else (2.0 * pg, sg)
        p = min(1.0, p)
    return Result(
        "boschloo-exact",
        statistic=stat,
        statistic_name="Fisher P",
        p=p,
        exact={"statistic": stat},
        counts=counts,
    )


# -- chi-square and G tests of the 2x2 table --------------------------------------------------------


def pearson_chi_square(k1, n1, k2, n2, *, correction) -> Result:
    """Pearson's chi-square test of independence of the 2×2 table, with or without Yates'
    continuity correction."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    corr = _choice("correction", correction, ("none", "yates"))
    counts = _counts2(k1, n1, k2, n2)
    n = n1 + n2
    m1 = k1 + k2
    m2 = n - m1
    denom = n1 * n2 * m1 * m2
    if denom == 0:
        return Result("pearson-chi-square-2x2", df=1, counts=counts)
    a, b, c, d = k1, n1 - k1, k2, n2 - k2
    dev = abs(a * d - b * c)
    if corr == "yates":
        dev2 = Fraction(max(Fraction(dev) - Fraction(n, 2), Fraction(0))) ** 2
    else:
        dev2 = Fraction(dev * dev)
    stat = n * dev2 / denom
    return Result(
        "pearson-chi-square-2x2",
        statistic=stat,
        statistic_name="chi2",
        df=1,
        p=chi2_sf(float(stat), 1),
        exact={"statistic": stat},
        counts=counts,
    )


def _xlog_term(x: float) -> float:
    """(1 + x)·log(1 + x) − x for x ≥ −1, without cancellation near 0."""
    if x == -1.0:
        return 1.0
    if abs(x) < 0.25:
        # Σ_{j≥2} (−1)^j x^j / (j(j − 1))
        total = 0.0
        power = x * x
        j = 2
        while True:
            term = power / (j * (j - 1))
            total += term if j % 2 == 0 else -term
            if abs(term) <= 1e-17 * abs(total):
                break
            power *= x
            j += 1
        return total
    return (1.0 + x) * math.log1p(x) - x


def g_test(k1, n1, k2, n2) -> Result:
    """The likelihood-ratio (G) test of independence of the 2×2 table, on one degree of
    freedom, without correction."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    counts = _counts2(k1, n1, k2, n2)
    n = n1 + n2
    cols = (k1 + k2, n - k1 - k2)
    if n1 == 0 or n2 == 0 or 0 in cols:
        return Result("g-test-2x2", df=1, counts=counts)
    cells = ((k1, n1, cols[0]), (n1 - k1, n1, cols[1]), (k2, n2, cols[0]), (n2 - k2, n2, cols[1]))
    # G = 2 Σ O·log(O/E) = 2 Σ E·((1 + x)log(1 + x) − x) with x = O/E − 1, since Σ (O − E) = 0:
    # every term is non-negative, so nothing cancels.
    terms = []
    for o, row, col in cells:
        e = Fraction(row * col, n)
        x = float(Fraction(o * n - row * col, row * col))
        terms.append(float(e) * _xlog_term(x))
    g = 2.0 * math.fsum(terms)
    return Result(
        "g-test-2x2", statistic=g, statistic_name="G", df=1, p=chi2_sf(g, 1), counts=counts
    )


# -- effect measures: risk ratio and odds ratio --------------------------------------------------


def risk_ratio(k1, n1, k2, n2, *, level) -> Result:
    """The risk ratio ``p̂1/p̂2`` with Katz's log-scale interval."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    lv = _level(level)
    counts = _counts2(k1, n1, k2, n2)
    if n1 == 0 or n2 == 0 or (k1 == 0 and k2 == 0):
        return Result("risk-ratio-katz", counts=counts)
    if k2 == 0:
        return Result("risk-ratio-katz", estimate=math.inf, counts=counts)
    rr = Fraction(k1 * n2, n1 * k2)
    if k1 == 0:
        return Result("risk-ratio-katz", estimate=0.0, exact={"estimate": rr}, counts=counts)
    se = _sqrt_fraction(Fraction(1, k1) - Fraction(1, n1) + Fraction(1, k2) - Fraction(1, n2))
    log_rr = math.log(k1 * n2) - math.log(n1 * k2)
    half = critical(lv) * se
    return Result(
        "risk-ratio-katz",
        estimate=rr,
        se=se,
        lower=math.exp(log_rr - half),
        upper=math.exp(log_rr + half),
        exact={
            "estimate": rr,
            "se_squared": Fraction(1, k1) - Fraction(1, n1) + Fraction(1, k2) - Fraction(1, n2),
        },
        counts=counts,
        extra={"se_of": "log risk ratio"},
    )


def odds_ratio(k1, n1, k2, n2, *, level, haldane) -> Result:
    """The sample odds ratio with Woolf's logit interval; ``haldane`` says when 0.5 is added to
    every cell: "never", "if-zero" (when a cell is 0), "always"."""
    k1, n1, k2, n2 = _arms(k1, n1, k2, n2)
    lv = _level(level)
    hal = _choice("haldane", haldane, ("never", "if-zero", "always"))
    counts = _counts2(k1, n1, k2, n2)
    cells = [Fraction(k1), Fraction(n1 - k1), Fraction(k2), Fraction(n2 - k2)]
    add = hal == "always" or (hal == "if-zero" and 0 in cells)
    if add:
        cells = [c + Fraction(1, 2) for c in cells]
    a, b, c, d = cells
    extra = {"haldane_added": add}
    if a * d == 0 and b * c == 0:
        return Result("odds-ratio-woolf", counts=counts, extra=extra)
    if b * c == 0:
        return Result("odds-ratio-woolf", estimate=math.inf, counts=counts, extra=extra)
    orr = a * d / (b * c)
    if a * d == 0:
        return Result(
            "odds-ratio-woolf", estimate=0.0, exact={"estimate": orr}, counts=counts, extra=extra
        )
    se = _sqrt_fraction(1 / a + 1 / b + 1 / c + 1 / d)
    log_or = math.log(a.numerator * d.numerator * b.denominator * c.denominator) - math.log(
        b.numerator * c.numerator * a.denominator * d.denominator
    )
    half = critical(lv) * se
    return Result(
        "odds-ratio-woolf",
        estimate=orr,
        se=se,
        lower=math.exp(log_or - half),
        upper=math.exp(log_or + half),
        exact={"estimate": orr, "se_squared": 1 / a + 1 / b + 1 / c + 1 / d},
        counts=counts,
        extra=extra,
    )


# -- the catalogue ---------------------------------------------------------------------------------

_F = "prereg.stats.two_proportions:"
_LEVEL = "level: two-sided coverage, a number in (0, 1)"
_ALT = 'alternative: "two-sided", "greater" (H1: p1 − p2 > margin), "less" (H1: p1 − p2 < margin)'
_MARGIN = "margin: the null difference p1 − p2, in (−1, 1) (its exact binary value is used)"
_EXACT_D = "estimate is the fraction k1/n1 − k2/n2, compared exactly"
_Z_EXACT = (
    "estimate is the fraction k1/n1 − k2/n2, compared exactly; the numerator p̂1 − p̂2 − δ is "
    "formed exactly; the restricted proportions are the root of a cubic whose coefficients are "
    "fractions of the counts and the margin as written, isolated by balls of rising precision "
    "(python-flint), so a threshold on z or se is decided by balls enclosing them; P is a "
    "float, compared as the shortest decimal of its float"
)
#: a z test whose z² is a fraction of the counts and the margin (exact['statistic_squared'])
_ROOT_Z_EXACT = (
    "estimate is the fraction k1/n1 − k2/n2, compared exactly; z² is a fraction of the counts "
    "and the margin as written (exact['statistic_squared']) and a threshold on z is decided by "
    "balls of its root (8 of 13 against 1 of 13 give z = 7/2 exactly, which meets `ge 3.5` "
    "though the float of the difference over the float root is 3.4999999999999996); se² is "
    "a fraction of the counts too (exact['se_squared']), and a threshold on se is decided by "
    "balls of its root; P is a float, compared as the shortest decimal of its float"
)

CATALOGUE = (
    Entry(
        name="wilson",
        family="two_proportions",
        function=_F + "wilson",
        shape="binomial",
        summary="One proportion k/n with the Wilson score interval.",
        options={"level": _LEVEL},
        reports=("estimate", "lower", "upper"),
        formula=(
            "centre (p̂ + z²/2n)/(1 + z²/n), half-width z·√(p̂(1−p̂)/n + z²/4n²)/(1 + z²/n), "
            "z = Φ⁻¹((1 + level)/2); bounds clipped to [0, 1]"
        ),
        reference="Wilson EB (1927). Probable inference, the law of succession, and statistical "
        "inference. JASA 22:209–212.",
        oracle='statsmodels proportion_confint(k, n, alpha, method="wilson") (its default '
        'method is "normal", the Wald interval)',
        exactness="estimate is the fraction k/n, compared exactly; the bounds are floats "
        "(compared as the shortest decimal of the float)",
    ),
    Entry(
        name="binomial-test",
        family="two_proportions",
        function=_F + "binomial_test",
        shape="binomial",
        summary="Exact binomial test of one proportion k/n against a null proportion, with the "
        "Clopper–Pearson interval.",
        options={
            "alternative": 'alternative: "two-sided", "greater" (H1: p > null_proportion), '
            '"less" (H1: p < null_proportion)',
            "null_proportion": "null_proportion: the proportion under the null hypothesis, in "
            "(0, 1), as the decimal written (0.8 is exactly 4/5)",
            "level": "level: the interval's coverage, in (0, 1); one-sided with a one-sided "
            "alternative",
        },
        reports=("estimate", "statistic", "lower", "upper", "p"),
        formula=(
            "k ~ Binomial(n, p0) under the null; greater P(X ≥ k), less P(X ≤ k), two-sided the "
            "sum of P(X = j) over every j with P(X = j) ≤ P(X = k); interval Clopper–Pearson "
            "(beta quantiles), the one bound of a one-sided alternative"
        ),
        reference="Clopper CJ, Pearson ES (1934). The use of confidence or fiducial limits "
        "illustrated in the case of the binomial. Biometrika 26:404–413.",
        oracle="scipy.stats.binomtest(k, n, p, alternative).pvalue and its proportion_ci("
        'confidence_level, method="exact"); exact sums of binomial probabilities',
        exactness="estimate is the fraction k/n, compared exactly; up to 2,000 trials P is the "
        "fraction of integer sums (exact['p']), compared exactly (two-sided: outcomes exactly as "
        "likely as k count, where scipy admits a relative tolerance of 1e-7); beyond, scipy's "
        "float; the bounds are floats (each compared as the shortest decimal of its float)",
    ),
    Entry(
        name="wald-difference",
        family="two_proportions",
        function=_F + "wald_difference",
        shape="two-binomial",
        summary="Risk difference p1 − p2 with the Wald (unpooled) interval.",
        options={"level": _LEVEL},
        reports=("estimate", "se", "lower", "upper"),
        formula="d = k1/n1 − k2/n2 ± z·√(p̂1(1−p̂1)/n1 + p̂2(1−p̂2)/n2) (variance summed exactly)",
        reference="Agresti A (2013). Categorical Data Analysis, 3rd ed., §3.1.",
        oracle='statsmodels confint_proportions_2indep(method="wald", compare="diff") (its '
        'default method is "newcomb")',
        exactness=_EXACT_D
        + "; "
        + SE_ROOT
        + "; the bounds are floats (each compared as the shortest decimal of its float)",
    ),
    Entry(
        name="wald-difference-test",
        family="two_proportions",
        function=_F + "wald_difference_test",
        shape="two-binomial",
        summary="Wald z test of p1 − p2 against a margin, unpooled standard error.",
        options={"alternative": _ALT, "margin": _MARGIN},
        reports=("estimate", "se", "statistic", "p"),
        formula="z = (p̂1 − p̂2 − δ)/√(p̂1(1−p̂1)/n1 + p̂2(1−p̂2)/n2); no statistic when the SE is 0",
        reference="Agresti A (2013). Categorical Data Analysis, 3rd ed., §3.1.",
        oracle='statsmodels test_proportions_2indep(method="wald", compare="diff", value=δ)',
        exactness=_ROOT_Z_EXACT,
    ),
    Entry(
        name="pooled-z",
        family="two_proportions",
        function=_F + "pooled_z_test",
        shape="two-binomial",
        summary="Pooled two-proportion z test of p1 = p2 (margin must be 0).",
        options={"alternative": _ALT, "margin": "margin: 0 (any other margin is refused)"},
        reports=("estimate", "se", "statistic", "p"),
        formula="p̄ = (k1 + k2)/(n1 + n2), z = (p̂1 − p̂2)/√(p̄(1 − p̄)(1/n1 + 1/n2))",
        reference="Agresti A (2013). Categorical Data Analysis, 3rd ed., §3.1.",
        oracle="statsmodels proportions_ztest([k1, k2], [n1, n2], alternative=...) (pooled "
        "by default, prop_var=False; 'larger'/'smaller' for greater/less)",
        exactness=_ROOT_Z_EXACT,
    ),
    Entry(
        name="newcombe-hybrid",
        family="two_proportions",
        function=_F + "newcombe_hybrid",
        shape="two-binomial",
        summary="Newcombe's hybrid score interval of p1 − p2 (method 10), from Wilson bounds.",
        options={"level": _LEVEL},
        reports=("estimate", "lower", "upper"),
        formula="lower d − √((p̂1 − l1)² + (u2 − p̂2)²), upper d + √((u1 − p̂1)² + (p̂2 − l2)²), "
        "(l, u) the Wilson bounds of each arm",
        reference="Newcombe RG (1998). Interval estimation for the difference between "
        "independent proportions: comparison of eleven methods. Stat Med 17:873–890.",
        oracle='statsmodels confint_proportions_2indep(method="newcomb", compare="diff")',
        exactness=_EXACT_D
        + "; the bounds are floats (each compared as the shortest decimal of its float)",
    ),
    Entry(
        name="agresti-caffo",
        family="two_proportions",
        function=_F + "agresti_caffo",
        shape="two-binomial",
        summary="Agresti–Caffo interval of p1 − p2: Wald after one success and one failure "
        "added to each arm.",
        options={"level": _LEVEL},
        reports=("estimate", "se", "lower", "upper"),
        formula="p̃i = (ki + 1)/(ni + 2): p̃1 − p̃2 ± z·√(p̃1(1−p̃1)/(n1+2) + p̃2(1−p̃2)/(n2+2)); "
        "the estimate is the unadjusted k1/n1 − k2/n2",
        reference="Agresti A, Caffo B (2000). Simple and effective confidence intervals for "
        "proportions and differences of proportions result from adding two successes and two "
        "failures. Am Stat 54:280–288.",
        oracle='statsmodels confint_proportions_2indep(method="agresti-caffo", compare="diff")',
        exactness=_EXACT_D
        + "; "
        + SE_ROOT
        + " (of the adjusted counts); the bounds are floats (each compared as the shortest "
        "decimal of its float)",
    ),
    Entry(
        name="farrington-manning",
        family="two_proportions",
        function=_F + "farrington_manning",
        shape="two-binomial",
        summary="Farrington–Manning score test of p1 − p2 against a margin (constrained "
        "maximum-likelihood variance), stable at n ≈ 1e6 and margins ≈ 1e−6.",
        options={"alternative": _ALT, "margin": _MARGIN},
        reports=("estimate", "se", "statistic", "p"),
        formula="z = (p̂1 − p̂2 − δ)/√(p̃1(1−p̃1)/n1 + p̃2(1−p̃2)/n2), (p̃1, p̃2 = p̃1 − δ) "
        "maximising the binomial likelihood (safeguarded Newton on the score of the smaller "
        "constrained proportion); at δ = 0 the pooled proportion",
        reference="Farrington CP, Manning G (1990). Test statistics and sample size formulae "
        "for comparative binomial trials with null hypothesis of non-zero risk difference or "
        "non-unity relative risk. Stat Med 9:1447–1454.",
        oracle="a 60-digit decimal bisection of the score equation in the tests, and mpmath "
        "values at n = 1e6, margin 1e−6; statsmodels test_proportions_2indep(method='score', "
        "compare='diff', correction=False) only at δ = 0 or k2 = n2 (elsewhere its constrained "
        "estimate uses k2 for n2 in one coefficient, statsmodels issue #10269)",
        exactness=_Z_EXACT,
    ),
    Entry(
        name="miettinen-nurminen-test",
        family="two_proportions",
        function=_F + "miettinen_nurminen_test",
        shape="two-binomial",
        summary="Miettinen–Nurminen score test of p1 − p2 against a margin (Farrington–Manning "
        "variance times N/(N − 1)).",
        options={"alternative": _ALT, "margin": _MARGIN},
        reports=("estimate", "se", "statistic", "p"),
        formula="z = (p̂1 − p̂2 − δ)/√((p̃1(1−p̃1)/n1 + p̃2(1−p̃2)/n2)·N/(N − 1)), N = n1 + n2",
        reference="Miettinen O, Nurminen M (1985). Comparative analysis of two rates. Stat Med "
        "4:213–226.",
        oracle="the Farrington–Manning oracles times √((N − 1)/N); statsmodels "
        "test_proportions_2indep(method='score', correction=True) at δ = 0 or k2 = n2",
        exactness=_Z_EXACT,
    ),
    Entry(
        name="miettinen-nurminen",
        family="two_proportions",
        function=_F + "miettinen_nurminen",
        shape="two-binomial",
        summary="Miettinen–Nurminen score interval of p1 − p2 (the inverted score test).",
        options={"level": _LEVEL},
        reports=("estimate", "lower", "upper"),
        formula="the δ with z_MN(δ) = ±Φ⁻¹((1 + level)/2), found by Brent's method to 4 ulps",
        reference="Miettinen O, Nurminen M (1985). Comparative analysis of two rates. Stat Med "
        "4:213–226; values in Newcombe RG (1998) Stat Med 17:873–890, Table II.",
        oracle="Newcombe (1998) Table II (4 decimals); the bound's z checked against the "
        "decimal score oracle (statsmodels' score interval inherits issue #10269 and differs)",
        exactness=_EXACT_D
        + "; the bounds are floats (each compared as the shortest decimal of its float)",
    ),
    Entry(
        name="fisher-exact",
        family="two_proportions",
        function=_F + "fisher_exact",
        shape="two-binomial",
        summary="Fisher's exact test of the 2×2 table, with the conditional maximum-likelihood "
        "odds ratio.",
        options={
            "alternative": 'alternative: "two-sided" (tables no more probable than the '
            'observed, relative tolerance 1e−7, as scipy), "greater" (p1 > p2), "less"'
        },
        reports=("estimate", "p"),
        formula="hypergeometric P(X1 = x | margins); one-sided tails; two-sided Σ P(x) over "
        "P(x) ≤ P(observed)·(1 + 1e−7)",
        reference="Fisher RA (1935). The logic of inductive inference. JRSS 98:39–82.",
        oracle="exact integer sums of binomial coefficients in the tests; R fisher.test's "
        "printed example (tea tasting); scipy.stats.contingency.odds_ratio(kind='conditional') "
        "is the estimate's implementation, checked against its defining equation",
        exactness="up to 5,000 observations P is the fraction of integer sums of binomial "
        "coefficients (exact['p']), compared exactly (a P of exactly 1/20 meets 'le 0.05'); "
        "beyond, a float (scipy.stats.fisher_exact) compared as the shortest decimal of its "
        "float; the conditional odds ratio (the estimate) is the one positive root of a "
        "polynomial with whole coefficients, isolated by balls of rising precision near a "
        "threshold while the support of the table's first cell spans at most 200 values "
        "(scipy's float of it, which SCORE.json shows, can be off by about 1e-12, relative), "
        "beyond that scipy's float",
    ),
    Entry(
        name="barnard-exact",
        family="two_proportions",
        function=_F + "barnard_exact",
        shape="two-binomial",
        summary="Barnard's unconditional exact test, rejection region built in exact arithmetic.",
        options={
            "alternative": '"two-sided" (|T| at least the observed), "greater" (p1 > p2), '
            '"less" (p1 < p2)',
            "variance": '"pooled" or "unpooled" Wald statistic',
            "grid": "number of equally spaced π in [0, 1] searched before refining (≥ 3)",
        },
        reports=("statistic", "p"),
        formula="P = max over π of Σ over tables with T at least as extreme as observed of "
        "Bin(x1; n1, π)·Bin(x2; n2, π); T compared as the exact rational sign(d)·d²/var",
        reference="Barnard GA (1945). A new test for 2×2 tables. Nature 156:177; Mehta CR, "
        "Senchaudhuri P (2003). Conditional versus unconditional exact tests for comparing two "
        "binomials.",
        oracle="scipy.stats.barnard_exact on the table transposed (scipy's samples are "
        "columns; pooled=True is its default) where no tables tie; where they tie scipy drops "
        "some in float comparisons (scipy issue #18798) and the tests check the exact region",
        exactness="z² is a fraction of the counts (exact['statistic_squared']) and a threshold "
        "on z is decided by balls of its root; P is a float maximised numerically, compared as the shortest decimal of its float",
    ),
    Entry(
        name="boschloo-exact",
        family="two_proportions",
        function=_F + "boschloo_exact",
        shape="two-binomial",
        summary="Boschloo's unconditional exact test (Fisher's one-sided P as statistic), "
        "rejection region in exact arithmetic.",
        options={
            "alternative": '"two-sided" (twice the smaller one-sided P, as scipy), "greater", '
            '"less"',
            "grid": "number of equally spaced π in [0, 1] searched before refining (≥ 3)",
        },
        reports=("statistic", "p"),
        formula="P = max over π of the probability of the tables whose one-sided Fisher P is at "
        "most the observed one (exact rationals)",
        reference="Boschloo RD (1970). Raised conditional level of significance for the 2×2 "
        "table when testing the equality of two probabilities. Stat Neerl 24:1–35.",
        oracle="scipy.stats.boschloo_exact on the transposed table",
        exactness="the statistic is an exact fraction; P a float maximised numerically",
    ),
    Entry(
        name="pearson-chi-square-2x2",
        family="two_proportions",
        function=_F + "pearson_chi_square",
        shape="two-binomial",
        summary="Pearson's chi-square test of the 2×2 table, with or without Yates' correction.",
        options={"correction": '"none" or "yates"'},
        reports=("statistic", "df", "p"),
        formula="χ² = N·(|ad − bc| − c)²/(n1·n2·m1·m2), c = 0 or N/2 (Yates; 0 when |ad − bc| < "
        "N/2), 1 df",
        reference="Pearson K (1900); Yates F (1934). Contingency tables involving small numbers "
        "and the χ² test. JRSS Suppl 1:217–235.",
        oracle="scipy.stats.chi2_contingency(table, correction=...) (Yates is its default)",
        exactness="the statistic is an exact fraction; P a float (compared as the shortest decimal of the float)",
    ),
    Entry(
        name="g-test-2x2",
        family="two_proportions",
        function=_F + "g_test",
        shape="two-binomial",
        summary="Likelihood-ratio (G) test of independence of the 2×2 table, no correction.",
        options={},
        reports=("statistic", "df", "p"),
        formula="G = 2 Σ O·log(O/E) = 2 Σ E·((1 + x)log(1 + x) − x), x = O/E − 1, 1 df",
        reference="Woolf B (1957). The log likelihood ratio test (the G-test). Ann Hum Genet "
        "21:397–409.",
        oracle='scipy.stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")',
        exactness="G = 2 Σ O·log(O/E) of the counts is decided by balls of rising precision "
        "near a threshold; P is a float, compared as the shortest decimal of its float",
    ),
    Entry(
        name="risk-ratio-katz",
        family="two_proportions",
        function=_F + "risk_ratio",
        shape="two-binomial",
        summary="Risk ratio p1/p2 with Katz's log-scale interval.",
        options={"level": _LEVEL},
        reports=("estimate", "se", "lower", "upper"),
        formula="RR = (k1/n1)/(k2/n2), exp(log RR ± z·√(1/k1 − 1/n1 + 1/k2 − 1/n2)); no interval "
        "with a zero count",
        reference="Katz D, Baptista J, Azen SP, Pike MC (1978). Obtaining confidence intervals "
        "for the risk ratio in cohort studies. Biometrics 34:469–474.",
        oracle="scipy.stats.contingency.relative_risk(...).confidence_interval(level) and "
        "statsmodels confint_proportions_2indep(compare='ratio', method='log') (its default "
        "'log-adjusted' adds 0.5)",
        exactness="estimate is the fraction k1·n2/(n1·k2), compared exactly; "
        + SE_ROOT
        + " (of the log risk ratio); the bounds are floats (each compared as the shortest "
        "decimal of its float)",
    ),
    Entry(
        name="odds-ratio-woolf",
        family="two_proportions",
        function=_F + "odds_ratio",
        shape="two-binomial",
        summary="Sample odds ratio with Woolf's logit interval, Haldane's 0.5 as registered.",
        options={
            "level": _LEVEL,
            "haldane": '"never", "if-zero" (0.5 added to every cell when a cell is 0), "always"',
        },
        reports=("estimate", "se", "lower", "upper"),
        formula="OR = ad/(bc), exp(log OR ± z·√(1/a + 1/b + 1/c + 1/d))",
        reference="Woolf B (1955). On estimating the relation between blood group and disease. "
        "Ann Hum Genet 19:251–253; Haldane JBS (1956) Ann Hum Genet 20:309–311.",
        oracle="statsmodels confint_proportions_2indep(compare='odds-ratio', method='logit' / "
        "'logit-adjusted'); scipy.stats.contingency.odds_ratio(kind='sample') (its default is "
        "the conditional MLE)",
        exactness="estimate is the fraction ad/(bc) (of the corrected cells when 0.5 is added), "
        "compared exactly; "
        + SE_ROOT
        + " (of the log odds ratio); the bounds are floats (each compared as the shortest "
        "decimal of its float)",
    ),
)
