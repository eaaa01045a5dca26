"""Samples of numbers: means, shifts and ratios, tested against a margin.

- :func:`one_sample_t`: the mean of one sample against a margin (Student t).
- :func:`paired_t`: the mean of paired differences ``x − y`` against a margin.
- :func:`welch_t`, :func:`student_t`: the difference of two independent means against a margin,
  with unequal (Welch–Satterthwaite) or pooled variances.
- :func:`mann_whitney`: the Mann–Whitney U test (exact, or normal with the tie-corrected
  variance and a registered continuity correction); its estimate is U/(mn), the probability
  that a value of x exceeds one of y (ties counting half).
- :func:`hodges_lehmann`: the Hodges–Lehmann shift (the median of the mn differences
  ``x_i − y_j``) with its distribution-free interval from the null distribution of U.
- :func:`ratio_of_geometric_means`: Welch's test and interval on the logs, exponentiated: the
  ratio of geometric means against a ratio margin.

The alternative speaks of ``a − b`` (or ``a/b``) against the margin: "greater" is H1: the
difference exceeds the margin.  Each t method's interval is the one its test inverts at the
registered level: two-sided ``estimate ± t(1 − α/2)·se``; one-sided "greater"
``[estimate − t(1 − α)·se, ∞)``, "less" ``(−∞, estimate + t(1 − α)·se]`` (α = 1 − level), as
scipy's ``confidence_interval`` gives them; the unbounded side is reported as None (a bound
that does not exist; JSON has no infinity).  Means of whole-number data are exact fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats import checks
from prereg.stats.catalogue import Entry
from prereg.stats.compare import EPS
from prereg.stats.methods import MethodError
from prereg.stats.ranks import EXACT_MAX_PAIRS
from prereg.stats.result import Result

# Largest m·n for which the Hodges–Lehmann differences are formed (8 bytes each).
HODGES_LEHMANN_MAX_PAIRS = 25_000_000


def _error(samples) -> float:
    """A bound on the float error of Σ ± mean(x) over ``samples`` ((array, sign) pairs) against
    the means of the decimals the data write (each value's own rounding and the summation's)."""
    return sum(16.0 * (x.size + 4) * EPS * float(np.abs(x).mean()) for x, _ in samples)


def margin_deviation(estimate: float, margin: float, samples=None) -> float:
    """``estimate − margin``, where ``estimate`` is Σ ± mean(x) of ``samples`` ((array, sign)
    pairs).  Far from 0 the float difference; within its error bound of 0, the difference of the
    exact means of the decimals the data write and the margin as the decimal written in the spec
    (:func:`prereg.stats.compare.threshold`), rounded once: data whose mean (difference) is on
    the margin give exactly 0 (floats give ±1e-16 or so, and a t of ±1e-15 decides a rule on
    ``p le 0.5`` or ``statistic ge 0`` by rounding)."""
    dev = estimate - margin
    if not samples:
        return dev
    if abs(dev) > _error(samples) + 4.0 * EPS * (abs(margin) + abs(estimate)):
        return dev
    from prereg.stats.compare import _exact_mean, threshold

    exact = sum((sign * _exact_mean(x) for x, sign in samples), Fraction(0))
    return float(exact - threshold(margin))


def log_ratio_deviation(d: float, margin: float, a: np.ndarray, b: np.ndarray) -> float:
    """``mean(log a) − mean(log b) − log(margin)`` (``d``: the float of the first two), decided
    near 0 as the ratio of geometric means against the margin written: a ratio exactly on it
    gives 0 (floats give ±1e-16), by the certified comparison of
    :func:`prereg.stats.compare.sign` (balls of the logs of the decimals the data write)."""
    dev = d - math.log(margin)
    err = sum(16.0 * (x.size + 4) * EPS * float(np.abs(np.log(x)).mean()) for x in (a, b))
    if abs(dev) > err + 4.0 * EPS * (abs(d) + abs(math.log(margin))):
        return dev
    from prereg.stats.compare import (
        Certified,
        _mean_log_ball,
        difference_ball,
        exp_ball,
        sign,
    )

    ball = difference_ball(lambda prec: _mean_log_ball(a), lambda prec: _mean_log_ball(b))
    s = sign(Certified(math.exp(d), error=None, ball=exp_ball(ball)), margin)
    if s == 0:
        return 0.0
    return math.copysign(max(abs(dev), 2.0**-1074), s)


def _variance(x: np.ndarray, values=None) -> float:
    """The sample variance (ddof 1) of ``x``, 0 exactly when the decimals the data write are all
    equal (``values``: the differences' two samples (a, b), whose decimal differences are
    compared; floats of equal decimals give a variance of 1e-34 or so, and a t of 1e16)."""
    v = float(x.var(ddof=1))
    if v == 0 or v > (64.0 * EPS * float(np.abs(x).max())) ** 2:
        return v
    if values is None:
        return 0.0 if bool(np.all(x == x[0])) else v
    from decimal import Decimal, localcontext

    from prereg.stats.compare import exact_decimals

    a, b = values
    with localcontext(exact_decimals()):
        diffs = {
            Decimal(repr(float(p))) - Decimal(repr(float(q)))
            for p, q in zip(a.tolist(), b.tolist(), strict=True)
        }
    return 0.0 if len(diffs) == 1 else v


def t_figures(
    name,
    estimate,
    se,
    df,
    *,
    margin,
    alternative,
    level,
    scale=None,
    samples=None,
    deviation=None,
    **kw,
) -> Result:
    """A t test of ``estimate`` against ``margin`` and the interval it inverts.

    ``scale`` (exp for a log-scale method) maps the estimate and the bounds, not the se.
    ``samples`` ((array, sign) pairs whose means sum to ``estimate``) decide ``estimate −
    margin`` exactly near 0 (:func:`margin_deviation`); ``deviation``, a function of the
    estimate and margin, decides it instead.
    """
    figures = {"estimate": estimate, "se": se, "df": df}
    if se is None or df is None or se == 0 or estimate is None:
        if scale is not None and estimate is not None:
            figures["estimate"] = scale(estimate)
        return Result(name, statistic_name="t", **figures, **kw)
    if deviation is not None:
        t = deviation(estimate, margin) / se
    else:
        t = margin_deviation(estimate, margin, samples) / se
    a = 1.0 - level
    if alternative == "two-sided":
        half = checks.t_quantile(1.0 - a / 2.0, df) * se
        lower, upper = estimate - half, estimate + half
    elif alternative == "greater":
        lower, upper = estimate - checks.t_quantile(1.0 - a, df) * se, None
    else:
        lower, upper = None, estimate + checks.t_quantile(1.0 - a, df) * se
    if scale is not None:
        figures["estimate"] = scale(estimate)
        lower = None if lower is None else scale(lower)
        upper = None if upper is None else scale(upper)
    return Result(
        name,
        statistic=t,
        statistic_name="t",
        lower=lower,
        upper=upper,
        p=checks.t_p(t, df, alternative),
        **figures,
        **kw,
    )


def _options(margin, alternative, level) -> tuple[float, str, float]:
    return (
        checks.number(margin, "margin"),
        checks.alternative(alternative),
        checks.level(level),
    )


def _exact_mean(a: np.ndarray) -> Fraction | None:
    if a.size and checks.integral(a):
        return Fraction(checks.exact_sum(a), a.size)
    return None


def _one_sample(
    name, d: np.ndarray, margin, alternative, level, counts, exact_name="estimate", pairs=None
):
    """``pairs``: the two samples (a, b) whose differences ``d`` are, read for exactness."""
    n = int(d.size)
    exact = {}
    m = _exact_mean(d)
    if m is not None:
        exact[exact_name] = m
    if n == 0:
        return Result(name, statistic_name="t", counts=counts)
    mean = float(m) if m is not None else float(d.mean())
    if n < 2:
        return Result(name, estimate=mean, statistic_name="t", exact=exact, counts=counts)
    se = math.sqrt(_variance(d, pairs)) / math.sqrt(n)
    samples = ((d, 1),) if pairs is None else ((pairs[0], 1), (pairs[1], -1))
    return t_figures(
        name,
        mean,
        se,
        n - 1,
        margin=margin,
        alternative=alternative,
        level=level,
        samples=samples,
        exact=exact,
        counts=counts,
    )


def one_sample_t(x, *, margin, alternative, level) -> Result:
    """Student's one-sample t: ``t = (x̄ − margin)/(s/√n)``, n − 1 degrees of freedom."""
    margin, alternative, level = _options(margin, alternative, level)
    a = checks.sample(x, "x")
    return _one_sample("one-sample-t", a, margin, alternative, level, {"n": int(a.size)})


def _paired(x, y) -> np.ndarray:
    a, b = checks.sample(x, "x"), checks.sample(y, "y")
    if a.size != b.size:
        raise MethodError(f"x and y must pair up: {a.size} values against {b.size}")
    return a, b


def paired_t(x, y, *, margin, alternative, level) -> Result:
    """Paired t: the one-sample t of the differences ``x_i − y_i`` against ``margin``."""
    margin, alternative, level = _options(margin, alternative, level)
    a, b = _paired(x, y)
    return _one_sample(
        "paired-t", a - b, margin, alternative, level, {"n": int(a.size)}, pairs=(a, b)
    )


def _two_means(x, y):
    a, b = checks.sample(x, "x"), checks.sample(y, "y")
    exact = {}
    ma, mb = _exact_mean(a), _exact_mean(b)
    if ma is not None and mb is not None:
        exact["estimate"] = ma - mb
    counts = {"n1": int(a.size), "n2": int(b.size)}
    if a.size == 0 or b.size == 0:
        return a, b, None, exact, counts
    if "estimate" in exact:
        d = float(exact["estimate"])
    else:
        d = float(a.mean()) - float(b.mean())
    return a, b, d, exact, counts


def welch_parts(x, y):
    """(difference of means, Welch se, Welch–Satterthwaite df, exact, counts, samples); None
    where undefined (an arm with fewer than 2 values; df when the se is 0); ``samples`` the
    arms with their signs (:func:`margin_deviation`)."""
    a, b, d, exact, counts = _two_means(x, y)
    se = df = None
    if a.size >= 2 and b.size >= 2:
        va, vb = _variance(a) / a.size, _variance(b) / b.size
        se = math.sqrt(va + vb)
        if se > 0:
            df = (va + vb) ** 2 / (va * va / (a.size - 1) + vb * vb / (b.size - 1))
    return d, se, df, exact, counts, ((a, 1), (b, -1))


def pooled_parts(x, y):
    """(difference of means, pooled se, n_x + n_y − 2, exact, counts, samples); None where
    undefined."""
    a, b, d, exact, counts = _two_means(x, y)
    se = df = None
    if a.size >= 1 and b.size >= 1 and a.size + b.size >= 3:
        ssq = sum(_variance(v) * (v.size - 1) for v in (a, b) if v.size >= 2)
        df = a.size + b.size - 2
        se = math.sqrt(ssq / df * (1.0 / a.size + 1.0 / b.size))
    return d, se, df, exact, counts, ((a, 1), (b, -1))


def paired_parts(x, y):
    """(mean difference, se, n − 1, exact, counts, samples) of the differences x − y."""
    a, b = _paired(x, y)
    d = a - b
    n = int(d.size)
    counts = {"n": n}
    exact = {}
    m = _exact_mean(d)
    if m is not None:
        exact["estimate"] = m
    samples = ((a, 1), (b, -1))
    if n == 0:
        return None, None, None, exact, counts, samples
    mean = float(m) if m is not None else float(d.mean())
    if n < 2:
        return mean, None, None, exact, counts, samples
    se = math.sqrt(_variance(d, (a, b))) / math.sqrt(n)
    return mean, se, n - 1, exact, counts, samples


def welch_t(x, y, *, margin, alternative, level) -> Result:
    """Welch's t: ``t = (x̄ − ȳ − margin)/√(s_x²/n_x + s_y²/n_y)`` with the
    Welch–Satterthwaite degrees of freedom."""
    margin, alternative, level = _options(margin, alternative, level)
    d, se, df, exact, counts, samples = welch_parts(x, y)
    return t_figures(
        "welch-t",
        d,
        se,
        df,
        margin=margin,
        alternative=alternative,
        level=level,
        samples=samples,
        exact=exact,
        counts=counts,
    )


def student_t(x, y, *, margin, alternative, level) -> Result:
    """Student's pooled t: ``s_p² = ((n_x − 1)s_x² + (n_y − 1)s_y²)/(n_x + n_y − 2)``,
    ``se = s_p·√(1/n_x + 1/n_y)``, ``n_x + n_y − 2`` degrees of freedom."""
    margin, alternative, level = _options(margin, alternative, level)
    d, se, df, exact, counts, samples = pooled_parts(x, y)
    return t_figures(
        "student-t",
        d,
        se,
        df,
        margin=margin,
        alternative=alternative,
        level=level,
        samples=samples,
        exact=exact,
        counts=counts,
    )


def _positive(a: np.ndarray, name: str) -> np.ndarray:
    if np.any(a <= 0):
        raise MethodError(
            f"{name} must hold positive numbers only: a ratio of geometric means "
            "is taken on the log scale"
        )
    return a


def ratio_of_geometric_means(x, y, *, margin, alternative, level) -> Result:
    """Welch's t on ``log x`` and ``log y`` against ``log(margin)``; the estimate
    ``exp(mean log x − mean log y)`` and the bounds are exponentiated, the se is that of the
    difference of the logs."""
    m = checks.number(margin, "margin")
    if m <= 0:
        raise MethodError(f"margin is a ratio and must be positive, got {margin!r}")
    alternative, level = checks.alternative(alternative), checks.level(level)
    a = _positive(checks.sample(x, "x"), "x")
    b = _positive(checks.sample(y, "y"), "y")
    la, lb = np.log(a), np.log(b)
    counts = {"n1": int(a.size), "n2": int(b.size)}
    d = float(la.mean()) - float(lb.mean()) if a.size and b.size else None
    se = df = None
    if a.size >= 2 and b.size >= 2:
        va, vb = _variance(la) / a.size, _variance(lb) / b.size
        se = math.sqrt(va + vb)
        if se > 0:
            df = (va + vb) ** 2 / (va * va / (a.size - 1) + vb * vb / (b.size - 1))
    return t_figures(
        "ratio-of-geometric-means",
        d,
        se,
        df,
        margin=math.log(m),
        alternative=alternative,
        level=level,
        scale=math.exp,
        deviation=lambda est, _: log_ratio_deviation(est, m, a, b),
        counts=counts,
        extra={"log_estimate": d} if d is not None else {},
    )


# -- rank methods ---------------------------------------------------------------------------------


def _u_statistic(a: np.ndarray, b: np.ndarray) -> tuple[int, list[int]]:
    """(2U, tie group sizes), U = #(x > y) + ½·#(x = y) over all pairs."""
    from prereg.stats.ranks import doubled_ranks

    doubled, ties = doubled_ranks(np.concatenate([a, b]))
    m = int(a.size)
    return int(doubled[:m].sum()) - m * (m + 1), ties


def mann_whitney(x, y, *, method, correction, alternative) -> Result:
    """Mann–Whitney U of x against y (``U = #(x > y) + ½·#(x = y)``); "greater" is H1: x tends
    to exceed y.

    ``method="asymptotic"``: ``z = (U − mn/2 − c)/σ`` with
    ``σ² = mn/12·((N + 1) − Σ(t³ − t)/(N(N − 1)))``; with ``correction``, ``c = ½`` towards the
    null ("greater": +½, "less": −½, two-sided: ``|U − mn/2| − ½``), else 0.
    ``method="exact"``: P from the exact null distribution of U (data without ties; the
    continuity correction does not apply and must be false).
    """
    from prereg.stats.ranks import exact_tail, inversion_counts

    checks.choice(method, "method", ("exact", "asymptotic"))
    checks.choice(correction, "correction", (True, False))
    checks.alternative(alternative)
    if method == "exact" and correction:
        raise MethodError(
            "correction (the continuity correction) applies to method "
            "'asymptotic' only; register false with 'exact'"
        )
    a, b = checks.sample(x, "x"), checks.sample(y, "y")
    m, n = int(a.size), int(b.size)
    counts = {"n1": m, "n2": n}
    if m * n > EXACT_MAX_PAIRS and method == "exact":
        raise MethodError(
            f"mann-whitney: method 'exact' is for small samples (m·n at most "
            f"{EXACT_MAX_PAIRS}, here {m * n}); register 'asymptotic'"
        )
    if m == 0 or n == 0:
        return Result("mann-whitney", statistic_name="U", counts=counts)
    u2, ties = _u_statistic(a, b)
    u = Fraction(u2, 2)
    big_n = m + n
    var = Fraction(m * n, 12) * (
        (big_n + 1) - Fraction(sum(t**3 - t for t in ties), big_n * (big_n - 1))
    )
    exact = {"statistic": u, "estimate": u / (m * n)}
    extra: dict[str, object] = {"variance": float(var)}
    p = None
    if method == "exact":
        if ties:
            extra["undefined"] = "the exact distribution is for data without ties"
        else:
            pe = exact_tail(inversion_counts([m, n]), int(u), alternative)
            exact["p"] = pe
            p = pe
    elif var > 0:
        dev = u - Fraction(m * n, 2)
        half = Fraction(1, 2) if correction else Fraction(0)
        if alternative == "greater":
            num = dev - half
        elif alternative == "less":
            num = dev + half
        else:
            num = abs(dev) - half
        z = math.copysign(math.sqrt(float(num * num / var)), num)
        extra["z"] = z
        if alternative == "two-sided":
            p = min(1.0, 2.0 * checks.normal_sf(z))
        else:
            p = checks.normal_p(z, alternative)
    return Result(
        "mann-whitney",
        estimate=u / (m * n),
        statistic=u,
        statistic_name="U",
        p=p,
        exact=exact,
        counts=counts,
        extra=extra,
    )


def hodges_lehmann(x, y, *, level, method) -> Result:
    """The Hodges–Lehmann shift ``median(x_i − y_j)`` and its distribution-free interval
    ``[D_(c), D_(mn + 1 − c)]`` (D the sorted mn differences), c the largest whole number with
    ``P(U ≤ c − 1) ≤ α/2`` under the null, α = 1 − level: by the exact distribution of U
    (``method="exact"``; data without ties, else the bounds are None) or, as Hollander & Wolfe's
    large-sample approximation and SAS's Moses limits have it,
    ``c = ⌊mn/2 − z(1 − α/2)·√(mn(N + 1)/12)⌋`` (``method="asymptotic"``).  With c < 1 the
    interval is unbounded (both bounds None).  ``extra`` holds c and, with the exact method, the
    interval's
    confidence ``1 − 2·P(U ≤ c − 1)``."""
    from prereg.stats.ranks import inversion_counts

    lv = checks.level(level)
    checks.choice(method, "method", ("exact", "asymptotic"))
    a, b = checks.sample(x, "x"), checks.sample(y, "y")
    m, n = int(a.size), int(b.size)
    counts = {"n1": m, "n2": n}
    mn = m * n
    if method == "exact" and mn > EXACT_MAX_PAIRS:
        raise MethodError(
            f"hodges-lehmann: method 'exact' is for small samples (m·n at most "
            f"{EXACT_MAX_PAIRS}, here {mn}); register 'asymptotic'"
        )
    if mn > HODGES_LEHMANN_MAX_PAIRS:
        raise MethodError(
            f"hodges-lehmann: at most {HODGES_LEHMANN_MAX_PAIRS} pairs of values (m·n), here {mn}"
        )
    if mn == 0:
        return Result("hodges-lehmann", counts=counts)
    outer = np.subtract.outer(a, b)
    diffs = np.sort(outer.reshape(-1))
    half = mn // 2
    estimate = float(diffs[half]) if mn % 2 else (float(diffs[half - 1]) + float(diffs[half])) / 2
    order = _ExactDifferences(a, b, outer, diffs)
    exact = {"estimate": order.at(half) if mn % 2 else (order.at(half - 1) + order.at(half)) / 2}
    alpha = 1.0 - lv
    extra: dict[str, object] = {}
    if method == "exact":
        if len(np.unique(np.concatenate([a, b]))) < m + n:
            extra["undefined"] = "the exact interval is for data without ties"
            return Result(
                "hodges-lehmann", estimate=estimate, exact=exact, counts=counts, extra=extra
            )
        dist = inversion_counts([m, n])
        total = sum(dist)
        c, below = 0, 0  # below = #(U <= c - 1)
        while c < len(dist) and Fraction(below + dist[c], total) <= Fraction(alpha) / 2:
            below += dist[c]
            c += 1
        extra["confidence"] = float(1 - 2 * Fraction(below, total))
    else:
        sigma = math.sqrt(mn * (m + n + 1) / 12.0)
        z = checks.normal_quantile(1.0 - alpha / 2.0)
        c = math.floor(mn / 2.0 - z * sigma)
    c = min(c, (mn + 1) // 2)
    extra["c"] = c
    if c < 1:
        lower = upper = None
    else:
        lower, upper = float(diffs[c - 1]), float(diffs[mn - c])
        exact.update(lower=order.at(c - 1), upper=order.at(mn - c))
    return Result(
        "hodges-lehmann",
        estimate=estimate,
        lower=lower,
        upper=upper,
        exact=exact,
        counts=counts,
        extra=extra,
    )


class _ExactDifferences:
    """Order statistics of the differences x_i − y_j of the decimals the data write
    (:func:`prereg.stats.compare.decimal_fraction`), exactly: the float differences ``diffs``
    (sorted) are each within ``tol`` of their exact value (the subtraction's rounding and each
    float's distance from its decimal, at most 2 ulp of max|x| + max|y| together), so the
    exact r-th smallest lies within ``tol`` of the float r-th smallest, and the differences
    whose floats lie more than 2·tol below (above) it are exactly below (above) it. Only the
    pairs in that window are subtracted exactly, once per distinct pair of values."""

    def __init__(self, a: np.ndarray, b: np.ndarray, outer: np.ndarray, diffs: np.ndarray):
        self.a, self.b, self.outer, self.diffs = a, b, outer, diffs
        scale = float(np.max(np.abs(a))) + float(np.max(np.abs(b)))
        self.tol = 4.0 * float(np.spacing(scale)) if scale else 0.0

    def at(self, r: int) -> Fraction:
        from prereg.stats.compare import decimal_fraction

        d = float(self.diffs[r])
        lo, hi = d - 2 * self.tol, d + 2 * self.tol
        below = int(np.searchsorted(self.diffs, lo, side="left"))
        i, j = np.nonzero((self.outer >= lo) & (self.outer <= hi))
        pairs: dict[tuple[float, float], int] = {}
        for x, y in zip(self.a[i].tolist(), self.b[j].tolist(), strict=True):
            pairs[(x, y)] = pairs.get((x, y), 0) + 1
        window = sorted(
            (decimal_fraction(x) - decimal_fraction(y), k) for (x, y), k in pairs.items()
        )
        seen = below
        for value, k in window:
            seen += k
            if seen > r:
                return value
        raise AssertionError("the exact order statistic lies in its window")  # pragma: no cover


_F = "prereg.stats.continuous:"
_T_OPTIONS = {
    "margin": "the difference under the null (a number; 0 for a plain test)",
    "alternative": "two-sided | greater (H1: a - b > margin) | less (H1: a - b < margin)",
    "level": "the level of the interval, in (0, 1); one-sided with a one-sided alternative",
}
_T_REPORTS = ("estimate", "se", "statistic", "df", "lower", "upper", "p")
_T_INTERVAL = (
    "; interval estimate +- t(1 - alpha/2, df) se (two-sided) or the one-sided bound "
    "estimate -+ t(1 - alpha, df) se, alpha = 1 - level"
)
#: how a threshold on a t test's t is decided (paired-t's entry says it too)
T_STATISTIC_EXACT = (
    "t is ±√(t²) and se is √(se²), t² and se² fractions of the decimals the data and the "
    "margin write: within its error bound of a threshold, balls of the root decide (0.1, 0.4, "
    "0.1 against 0 give t = 2 exactly, which meets `ge 2`, though its float is "
    "1.9999999999999998; 0.1, 0.1, 0.4 give se = 1/10 exactly, which meets `le 0.1`); df is "
    "a whole number, or with Welch's variances the Welch–Satterthwaite df, a fraction of those "
    "decimals compared exactly (0.8, 0.3, 0.4 against 0.3, 0.2, 0.7 give df = 4 exactly, whose "
    "float is 3.999999999999999)"
)
_T_EXACT = (
    "with whole-number data the estimate is an exact fraction (exact['estimate']), compared "
    "exactly; the estimate less the margin is decided on the decimals the data and the spec "
    "write when the float cannot tell it from 0 (on the margin t = 0 and a one-sided P = 1/2 "
    "exactly), and decimals all equal have no spread (no t); " + T_STATISTIC_EXACT + "; the "
    "bounds and P are floating point (scipy.special's stdtr and stdtrit), compared as the shortest decimals of their floats"
)
#: the t methods of a margin: what their entries say of it (equivalence's entries too)
MARGIN_EXACT = (
    "the mean (difference) less each margin is decided on the decimals the data and the spec "
    "write when the float cannot tell it from 0 (on a margin t = 0 and its P = 1/2 exactly)"
)

CATALOGUE = (
    Entry(
        name="one-sample-t",
        family="continuous",
        function=_F + "one_sample_t",
        shape="sample",
        summary="Student's one-sample t test of a mean against a margin, with its interval.",
        options=dict(_T_OPTIONS),
        reports=_T_REPORTS,
        formula="$t = (\\bar x - \\delta)/(s/\\sqrt n)$, $n - 1$ df" + _T_INTERVAL,
        reference="Student (1908), Biometrika 6:1-25",
        oracle="scipy.stats.ttest_1samp(x, popmean=margin, alternative=...) and its "
        "confidence_interval(confidence_level)",
        exactness=_T_EXACT,
    ),
    Entry(
        name="welch-t",
        family="continuous",
        function=_F + "welch_t",
        shape="two-samples",
        summary="Welch's t test of a difference of two means against a margin (unequal "
        "variances), with its interval.",
        options=dict(_T_OPTIONS),
        reports=_T_REPORTS,
        formula="$t = (\\bar x - \\bar y - \\delta)/\\sqrt{s_x^2/n_x + s_y^2/n_y}$, "
        "Welch-Satterthwaite df" + _T_INTERVAL,
        reference="Welch BL (1947), Biometrika 34:28-35",
        oracle="scipy.stats.ttest_ind(x, y, equal_var=False) (its default is the pooled test); "
        "statsmodels ttest_ind(..., usevar='unequal', value=margin) and "
        "CompareMeans.tconfint_diff(usevar='unequal')",
        exactness=_T_EXACT,
    ),
    Entry(
        name="student-t",
        family="continuous",
        function=_F + "student_t",
        shape="two-samples",
        summary="Student's pooled t test of a difference of two means against a margin, with "
        "its interval.",
        options=dict(_T_OPTIONS),
        reports=_T_REPORTS,
        formula="$s_p^2 = ((n_x-1)s_x^2 + (n_y-1)s_y^2)/(n_x+n_y-2)$, "
        "$t = (\\bar x - \\bar y - \\delta)/(s_p\\sqrt{1/n_x + 1/n_y})$, $n_x + n_y - 2$ df"
        + _T_INTERVAL,
        reference="Student (1908), Biometrika 6:1-25; Fisher RA (1925)",
        oracle="scipy.stats.ttest_ind(x, y, equal_var=True); statsmodels ttest_ind(..., "
        "usevar='pooled', value=margin) and CompareMeans.tconfint_diff(usevar='pooled')",
        exactness=_T_EXACT,
    ),
    Entry(
        name="mann-whitney",
        family="continuous",
        function=_F + "mann_whitney",
        shape="two-samples",
        summary="Mann-Whitney U test of x tending to exceed y; estimate U/(mn).",
        options={
            "method": f"exact (no ties, m n at most {EXACT_MAX_PAIRS}) | asymptotic (normal, "
            "tie-corrected variance)",
            "correction": "true | false: continuity correction of 1/2 (asymptotic only; false "
            "with exact)",
            "alternative": "two-sided | greater (x tends to exceed y) | less",
        },
        reports=("estimate", "statistic", "p"),
        formula="$U = \\#(x > y) + \\tfrac12\\#(x = y)$; "
        "$\\sigma^2 = \\frac{mn}{12}((N+1) - \\sum(t^3-t)/(N(N-1)))$, "
        "$z = (U - mn/2 \\mp \\tfrac12)/\\sigma$ (z in extra); exact: the null distribution "
        "of U (Mann & Whitney's recursion, as a q-binomial coefficient)",
        reference="Mann HB, Whitney DR (1947), Annals of Mathematical Statistics 18:50-60",
        oracle="scipy.stats.mannwhitneyu(x, y, method='exact' | 'asymptotic', "
        "use_continuity=..., alternative=...) (its defaults are method='auto' and "
        "use_continuity=True)",
        exactness="U is a multiple of 1/2 and U/(mn) a fraction (exact['statistic'], "
        "exact['estimate']); the exact P is a fraction (exact['p']); all compared exactly; "
        "the asymptotic P is floating point, compared as the shortest decimal of its float",
    ),
    Entry(
        name="hodges-lehmann",
        family="continuous",
        function=_F + "hodges_lehmann",
        shape="two-samples",
        summary="Hodges-Lehmann shift estimate (median of the differences x - y) with its "
        "distribution-free interval.",
        options={
            "level": "the two-sided level, in (0, 1)",
            "method": "exact (the null distribution of U; data without ties) | asymptotic "
            "(normal, Moses) for the interval's order statistic",
        },
        reports=("estimate", "lower", "upper"),
        formula="$\\hat\\Delta = \\mathrm{median}(x_i - y_j)$; interval "
        "$[D_{(c)}, D_{(mn+1-c)}]$, c the largest with $P_0(U \\le c - 1) \\le \\alpha/2$; "
        "asymptotic $c = \\lfloor mn/2 - z_{1-\\alpha/2}\\sqrt{mn(N+1)/12}\\rfloor$; "
        "unbounded (bounds None) when c < 1",
        reference="Hodges JL, Lehmann EL (1963), Annals of Mathematical Statistics 34:598-611; "
        "Lehmann EL (1975), Nonparametrics; Hollander M, Wolfe DA (1999), section 4.3",
        oracle="SAS PROC NPAR1WAY HL's published output for Hollander, Wolfe & Chicken's "
        "example (estimate 0.56, asymptotic Moses limits -0.37, 1.183); the sorted differences "
        "and the null distribution of U by enumerating every split of the ranks (in the "
        "tests); R's wilcox.test(conf.int=TRUE, exact=TRUE) differs only when "
        "P(U <= c - 1) equals alpha/2 exactly (it takes the wider interval) and never returns "
        "an unbounded one",
        exactness="the estimate and the bounds are differences of the decimals the data write "
        "(the estimate the mean of two with an even number of pairs), exact fractions "
        "(exact['estimate'], exact['lower'], exact['upper']) compared exactly: a shift of "
        "0.3 − 0.1 is 0.2, though its float is 0.19999999999999998; c is a whole number in "
        "extra",
    ),
    Entry(
        name="ratio-of-geometric-means",
        family="continuous",
        function=_F + "ratio_of_geometric_means",
        shape="two-samples",
        summary="Ratio of geometric means of two positive samples (Welch's t on the logs, "
        "exponentiated) against a ratio margin.",
        options={
            "margin": "the ratio under the null (positive; 1 for a plain test)",
            "alternative": "two-sided | greater (H1: a/b > margin) | less",
            "level": _T_OPTIONS["level"],
        },
        reports=_T_REPORTS,
        formula="$t = (\\overline{\\log x} - \\overline{\\log y} - \\log\\rho)/se$ with Welch's "
        "se and df on the logs; estimate and bounds $\\exp(\\cdot)$; se is the log scale's",
        reference="Welch BL (1947); Julious SA, Debarnot CA (2000), J Biopharm Stat 10:55-64",
        oracle="statsmodels ttest_ind(log x, log y, usevar='unequal', value=log margin) and "
        "CompareMeans.tconfint_diff on the logs, exponentiated",
        exactness="the estimate (the ratio) is certified by balls of the logs of the decimals "
        "the data write, so a ratio exactly on a threshold meets le and ge (SCORE.json then "
        "carries it in exact['estimate']); the log ratio less the log margin is decided "
        "near 0 the same way (a ratio on the margin gives t = 0, a one-sided P of 1/2); Welch's "
        "t, se and df on the logs are decided by balls of the logs near a threshold; P and the "
        "bounds are floating point, each compared as the shortest decimal of its float",
    ),
)
