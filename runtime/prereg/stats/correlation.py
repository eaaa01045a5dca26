"""Correlations of paired numbers: Pearson's r, Spearman's rho, Kendall's tau-b, each with a
Fisher-z interval and a test against a registered null value, and Williams' t comparing two
correlations that share a variable (a human rating against two automatic metrics).

Shapes (see :data:`prereg.stats.catalogue.SHAPES`):

- "paired-samples": ``x, y``, numbers with element i of both from unit i (the human rating of
  item i and the metric's score of item i).
- "sample-blocks": ``x``, a 2-d array of numbers, one row per unit, one column per group in
  registered order (``correlation-difference``: the reference first, then the two compared).

Every correlation is a ratio ``N/√D`` of whole numbers formed from the data read as the
decimals they write (:func:`prereg.stats.compare.decimal_fraction`) or from their mid-ranks
(doubled, so whole); ties get average ranks (Spearman) or the tau-b denominator (Kendall).
When ``N²/D`` is the square of a fraction the estimate is that fraction (``exact``), so a
correlation exactly on a threshold (a rho of exactly 1/2 against ``ge 0.5``) is decided
exactly; otherwise the estimate is irrational and never equals a threshold, and
:func:`estimate_ball` gives the decision its arb balls. A correlation exactly equal to the
null value gives z = 0 and a one-sided P of exactly 1/2 (a two-sided P of exactly 1).

Fisher's z: ``z(r) = atanh r``. Its standard error is ``1/√(n − 3)`` for Pearson's r,
``√((1 + r²/2)/(n − 3))`` (Bonett & Wright 2000) or ``√(1.06/(n − 3))`` (Fieller, Hartley &
Pearson 1957) for Spearman's rho, and ``√(0.437/(n − 4))`` (Fieller et al. 1957) for Kendall's
tau-b. The interval is ``tanh(z(r) ∓ c·se)`` (two-sided c = Φ⁻¹((1 + level)/2); one-sided
"greater" gives the lower bound at Φ⁻¹(level) and no upper, "less" the reverse); the test is
``(z(r) − z(ρ0))/se`` against the standard normal. A correlation of ±1 has an infinite z: its
interval is the point ±1 and its P is 0 or 1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats import checks
from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

# Largest number of pairs for Kendall's tau (its pair count is O(n²) in time).
KENDALL_MAX_N = 20_000


# -- exact pieces -----------------------------------------------------------------------------


def _whole(a: np.ndarray) -> list[int]:
    """The values read as the decimals they write, scaled by one common denominator to whole
    numbers (a correlation is unchanged by scaling a variable by a positive number)."""
    from prereg.stats.compare import decimal_fraction

    fs = [decimal_fraction(v) for v in a.tolist()]
    den = 1
    for f in fs:
        den = den * f.denominator // math.gcd(den, f.denominator)
    return [int(f * den) for f in fs]


def _moments(x: list[int], y: list[int]) -> tuple[int, int, int]:
    """(n·Σxy − Σx·Σy, n·Σx² − (Σx)², n·Σy² − (Σy)²): n² times the co-moments."""
    n = len(x)
    sx, sy = sum(x), sum(y)
    sxy = sum(a * b for a, b in zip(x, y, strict=True))
    sxx = sum(a * a for a in x)
    syy = sum(b * b for b in y)
    return n * sxy - sx * sy, n * sxx - sx * sx, n * syy - sy * sy


def _ratio(num: int, den: int) -> tuple[float, Fraction | None]:
    """(float of num/√den, the exact fraction when it is rational, else None); den > 0."""
    sq = Fraction(num * num, den)
    rn, rd = math.isqrt(sq.numerator), math.isqrt(sq.denominator)
    if rn * rn == sq.numerator and rd * rd == sq.denominator:
        exact = Fraction(rn, rd) * (1 if num >= 0 else -1)
        return float(exact), exact
    value = math.copysign(math.sqrt(float(sq)), num)
    return value, None


def _sign_diff(a_num, a_den, b_num, b_den) -> int:
    """The sign of a_num/√a_den − b_num/√b_den (dens positive), decided exactly."""
    sa = (a_num > 0) - (a_num < 0)
    sb = (b_num > 0) - (b_num < 0)
    if sa != sb:
        return 1 if sa > sb else -1
    if sa == 0:
        return 0
    lhs, rhs = Fraction(a_num) ** 2 * b_den, Fraction(b_num) ** 2 * a_den
    return ((lhs > rhs) - (lhs < rhs)) * sa


def _kendall_counts(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int]:
    """(S = concordant − discordant pairs, n0 − n1, n0 − n2): the pairs not tied in x, in y."""
    n = x.size
    s = 0
    for i in range(n - 1):
        s += int(np.sum(np.sign(x[i + 1 :] - x[i]) * np.sign(y[i + 1 :] - y[i])))
    n0 = n * (n - 1) // 2

    def tied(a):
        _, c = np.unique(a, return_counts=True)
        return sum(int(t) * (int(t) - 1) // 2 for t in c.tolist())

    return s, n0 - tied(x), n0 - tied(y)


def _scored(kind: str, x: np.ndarray) -> list[int]:
    """A column as the whole numbers its correlation is computed on: twice its mid-ranks
    (Spearman), else its values scaled to whole numbers (:func:`_whole`)."""
    from prereg.stats.ranks import doubled_ranks

    return doubled_ranks(x)[0].tolist() if kind == "spearman" else _whole(x)


def _pieces(kind: str, x: np.ndarray, y: np.ndarray) -> tuple[int, int, dict]:
    """(N, D, counts) of the correlation ``kind`` of x and y: r = N/√D."""

    if kind == "kendall":
        s, tx, ty = _kendall_counts(x, y)
        return (
            s,
            tx * ty,
            {"concordant_minus_discordant": s, "pairs_untied_a": tx, "pairs_untied_b": ty},
        )
    xs, ys = _scored(kind, x), _scored(kind, y)
    num, dx, dy = _moments(xs, ys)
    return num, dx * dy, {}


def estimate_ball(kind: str, x, y):
    """A function prec -> arb ball of the correlation ``kind`` of x and y: what a threshold is
    decided with when the correlation is irrational. Its whole numbers are formed on the first
    call (a rule that the float already decides never forms them)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.size != y.size or x.size < 2:
        return None
    formed: list = []

    def ball(prec):
        from flint import arb

        if not formed:
            num, den, _ = _pieces(kind, x, y)
            formed.append((num, den))
        num, den = formed[0]
        if den <= 0:
            return arb("nan")
        return arb(num) / arb(den).sqrt()

    return ball


# -- the correlation methods -------------------------------------------------------------------

_MIN_N = {"pearson": 4, "spearman": 4, "kendall": 5}
_NAMES = {
    "pearson": "pearson-correlation",
    "spearman": "spearman-correlation",
    "kendall": "kendall-tau-b",
}


def _null(value) -> Fraction:
    from prereg.stats.compare import threshold

    if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
        raise MethodError(f"null_value must be a number strictly between -1 and 1, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise MethodError(f"null_value must be a number strictly between -1 and 1, got {value!r}")
    v = threshold(value)
    if not -1 < v < 1:
        raise MethodError(f"null_value must lie strictly between -1 and 1, got {value!r}")
    return v


def _pair_arrays(x, y, need: int) -> tuple[np.ndarray, np.ndarray]:
    a = checks.sample(x, "x")
    b = checks.sample(y, "y")
    if a.size != b.size:
        raise MethodError(f"x and y must pair up: {a.size} and {b.size} values")
    if a.size < need:
        raise MethodError(
            f"a correlation with its Fisher-z interval needs at least {need} pairs, got {a.size}"
        )
    for name, v in (("x (arm a)", a), ("y (arm b)", b)):
        if np.all(v == v[0]):
            raise MethodError(
                f"{name} is constant ({float(v[0])!r} in all {v.size} pairs): it has no correlation"
            )
    return a, b


def _fisher(kind, x, y, *, alternative, null_value, level, variance) -> Result:
    alt = checks.alternative(alternative)
    lv = checks.level(level)
    rho0 = _null(null_value)
    a, b = _pair_arrays(x, y, _MIN_N[kind])
    n = int(a.size)
    num, den, counts = _pieces(kind, a, b)
    r, exact = _ratio(num, den)
    if kind == "pearson":
        var = 1.0 / (n - 3)
        var_q = Fraction(1, n - 3)
    elif kind == "kendall":
        var = 0.437 / (n - 4)
        var_q = Fraction(437, 1000) / (n - 4)
    elif variance == "bonett-wright":
        var = (1.0 + r * r / 2.0) / (n - 3)
        var_q = (1 + Fraction(num * num, 2 * den)) / (n - 3)  # r² = N²/D, a fraction
    else:
        var = 1.06 / (n - 3)
        var_q = Fraction(106, 100) / (n - 3)
    se = math.sqrt(var)
    t = rho0
    sgn = _sign_diff(num, den, t, 1)  # the sign of r − ρ0, decided exactly
    exact_out: dict = {"se_squared": var_q}  # se of the Fisher z: a threshold on it by its root
    if exact is not None:
        exact_out["estimate"] = exact
    if num * num == den:  # r = ±1: an infinite z, the interval the point r
        z = stat = math.copysign(math.inf, num)
        p = 0.0 if alt == "two-sided" or (alt == "greater") == (num > 0) else 1.0
        exact_out["p"] = Fraction(int(p))
        lower = upper = math.copysign(1.0, num)
        if alt == "greater":
            upper = None
        elif alt == "less":
            lower = None
    else:
        z = math.atanh(r)
        if sgn == 0:
            stat = 0.0
            p = 1.0 if alt == "two-sided" else 0.5
            exact_out["p"] = Fraction(p)
        else:
            stat = (z - math.atanh(float(t))) / se
            if (stat > 0) != (sgn > 0):  # the floats cannot tell it: the exact side decides
                stat = math.copysign(0.0, sgn)
            p = checks.normal_p(stat, alt)
        lower, upper = checks.bounds(z, se, alt, lv, to=math.tanh)
    return Result(
        _NAMES[kind],
        estimate=exact if exact is not None else r,
        se=se,
        statistic=stat,
        statistic_name="z",
        lower=lower,
        upper=upper,
        p=p,
        exact=exact_out,
        counts={"pairs": n, **counts},
        extra={"fisher_z": z, "null_value": float(t)},
    )


def pearson_correlation(x, y, *, alternative, null_value, level) -> Result:
    """Pearson's r with Fisher's z interval and test against ``null_value``."""
    return _fisher(
        "pearson", x, y, alternative=alternative, null_value=null_value, level=level, variance=None
    )


def spearman_correlation(x, y, *, alternative, null_value, level, variance) -> Result:
    """Spearman's rho (Pearson's r of the mid-ranks) with a Fisher-z interval and test."""
    checks.choice(variance, "variance", ("bonett-wright", "fieller"))
    return _fisher(
        "spearman",
        x,
        y,
        alternative=alternative,
        null_value=null_value,
        level=level,
        variance=variance,
    )


def kendall_tau_b(x, y, *, alternative, null_value, level) -> Result:
    """Kendall's tau-b with the Fieller–Hartley–Pearson Fisher-z interval and test."""
    a = checks.sample(x, "x")
    if a.size > KENDALL_MAX_N:
        raise MethodError(
            f"kendall-tau-b counts pairs of at most {KENDALL_MAX_N} units, got {a.size}"
        )
    return _fisher(
        "kendall", x, y, alternative=alternative, null_value=null_value, level=level, variance=None
    )


# -- Williams' t of two dependent overlapping correlations --------------------------------------


def correlation_difference(x, *, correlation, alternative) -> Result:
    """Williams' t (Steiger 1980, eq. 7) that r(ref, a) − r(ref, b) is 0, the columns of x being
    ref, a, b (one row per unit); ``correlation`` "pearson" or "spearman" (Pearson's r of the
    mid-ranks, the test applied to them)."""

    kind = checks.choice(correlation, "correlation", ("pearson", "spearman"))
    alt = checks.alternative(alternative)
    try:
        m = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise MethodError(f"x must be a 2-d array of numbers ({e})") from None
    if m.ndim != 2 or m.shape[1] != 3:
        raise MethodError(
            "correlation-difference reads three groups (the reference, then the two compared);"
            f" got {m.shape[1] if m.ndim == 2 else 0}"
        )
    if not np.all(np.isfinite(m)):
        raise MethodError("x must hold finite numbers only (no NaN or infinity)")
    n = int(m.shape[0])
    if n < 4:
        raise MethodError(f"Williams' t needs at least 4 units in all three groups, got {n}")
    names = ("the reference (group 1)", "group 2", "group 3")
    for j in range(3):
        if np.all(m[:, j] == m[0, j]):
            raise MethodError(
                f"{names[j]} is constant ({float(m[0, j])!r} in all {n} units): it has no correlation"
            )
    cols = [_scored(kind, m[:, j]) for j in range(3)]
    n12, d1, d2 = _moments(cols[0], cols[1])
    n13, _, d3 = _moments(cols[0], cols[2])
    n23, _, _ = _moments(cols[1], cols[2])
    r12, e12 = _ratio(n12, d1 * d2)
    r13, e13 = _ratio(n13, d1 * d3)
    r23, _ = _ratio(n23, d2 * d3)
    sign = _sign_diff(n12, d1 * d2, n13, d1 * d3)  # of r12 − r13, exactly
    det = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    denom = 2 * (n - 1) / (n - 3) * det + rbar * rbar * (1 - r23) ** 3
    exact: dict = {}
    if e12 is not None and e13 is not None:
        exact["estimate"] = e12 - e13
    counts = {"units": n}
    extra = {"r_ref_a": r12, "r_ref_b": r13, "r_a_b": r23, "determinant": det}
    if sign == 0:
        t, p = 0.0, (1.0 if alt == "two-sided" else 0.5)
        exact["p"] = Fraction(p)
    elif denom <= 0 or r23 >= 1.0:
        # the two compared columns are perfectly correlated (or the matrix is singular):
        # no standard error
        return Result(
            "correlation-difference",
            estimate=exact.get("estimate", r12 - r13),
            statistic_name="t",
            df=n - 3,
            exact=exact,
            counts=counts,
            extra=extra,
        )
    else:
        t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denom)
        if (t > 0) != (sign > 0):
            t = math.copysign(0.0, sign)
        p = checks.t_p(t, n - 3, alt)
    return Result(
        "correlation-difference",
        estimate=exact.get("estimate", r12 - r13),
        statistic=t,
        statistic_name="t",
        df=n - 3,
        p=p,
        exact=exact,
        counts=counts,
        extra=extra,
    )


def difference_ball(kind: str, x):
    """A function prec -> arb ball of r(ref, a) − r(ref, b) of ``correlation-difference``."""

    m = np.asarray(x, dtype=np.float64)
    if m.ndim != 2 or m.shape[1] != 3 or m.shape[0] < 2:
        return None
    cols = [_scored(kind, m[:, j]) for j in range(3)]
    n12, d1, d2 = _moments(cols[0], cols[1])
    n13, _, d3 = _moments(cols[0], cols[2])
    if d1 <= 0 or d2 <= 0 or d3 <= 0:
        return None

    def ball(prec):
        from flint import arb

        return arb(n12) / (arb(d1) * arb(d2)).sqrt() - arb(n13) / (arb(d1) * arb(d3)).sqrt()

    return ball


# -- the catalogue ----------------------------------------------------------------------------

_F = "prereg.stats.correlation:"
_ALT = (
    'alternative: "two-sided", "greater" (H1: the correlation above null_value), "less" (H1: below)'
)
_NULL = "null_value: ρ0, the correlation of the null, strictly between −1 and 1 (0 tests no association)"
_LEVEL = (
    "level: the interval's coverage, in (0, 1) (two-sided with alternative two-sided; the one "
    "bound on the alternative's side otherwise)"
)
_EXACT = (
    "the correlation is N/√D of whole numbers (the data as the decimals they write, or doubled "
    "mid-ranks): when rational (N²/D a square) it is exact['estimate'], compared exactly, so a "
    "rho of exactly 1/2 meets `ge 0.5` and fails `gt 0.5`; otherwise it is irrational, never on "
    "a threshold, and decided by arb balls; a correlation exactly equal to null_value gives z "
    "= 0 and P exactly 1/2 (two-sided 1, exact['p']); se² is a fraction (exact['se_squared']: "
    "1/(n − 3), 0.437/(n − 4), 1.06/(n − 3), or (1 + r²/2)/(n − 3) with r² = N²/D), and z = "
    "(atanh r − atanh ρ0)/se is decided by balls of N/√D near a threshold, so is se by its "
    "root; bounds and other P values are floats, each compared as the shortest decimal of its "
    "float"
)

CATALOGUE = (
    Entry(
        name="pearson-correlation",
        family="correlation",
        function=_F + "pearson_correlation",
        shape="paired-samples",
        summary="Pearson's r of paired numbers, Fisher-z interval and test against a null value.",
        options={"alternative": _ALT, "null_value": _NULL, "level": _LEVEL},
        reports=("estimate", "se", "statistic", "lower", "upper", "p"),
        formula="r = Σ(x − x̄)(y − ȳ)/√(Σ(x − x̄)²·Σ(y − ȳ)²); z = (atanh r − atanh ρ0)·√(n − 3); "
        "interval tanh(atanh r ∓ c/√(n − 3)); at least 4 pairs; a constant arm is refused",
        reference="Fisher RA (1921). On the 'probable error' of a coefficient of correlation "
        "deduced from a small sample. Metron 1:3–32.",
        oracle="scipy.stats.pearsonr(x, y) (r) and its confidence_interval(level) (two-sided, "
        "null 0); the test against ρ0 by hand Fractions and math.atanh",
        exactness=_EXACT,
    ),
    Entry(
        name="spearman-correlation",
        family="correlation",
        function=_F + "spearman_correlation",
        shape="paired-samples",
        summary="Spearman's rho (average ranks for ties), Fisher-z interval and test against a "
        "null value.",
        options={
            "alternative": _ALT,
            "null_value": _NULL,
            "level": _LEVEL,
            "variance": '"bonett-wright" (var z = (1 + ρ²/2)/(n − 3)) or "fieller" (1.06/(n − 3))',
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p"),
        formula="rho = Pearson's r of the mid-ranks (ties share their average rank); z = "
        "(atanh rho − atanh ρ0)/se, se² as `variance`; interval tanh(atanh rho ∓ c·se); at "
        "least 4 pairs; a constant arm is refused",
        reference="Bonett DG, Wright TA (2000). Sample size requirements for estimating Pearson, "
        "Kendall and Spearman correlations. Psychometrika 65:23–28; Fieller EC, Hartley HO, "
        "Pearson ES (1957). Tests for rank correlation coefficients. I. Biometrika 44:470–481.",
        oracle="scipy.stats.spearmanr(x, y).statistic; hand Fractions of 1 − 6Σd²/(n(n² − 1)) "
        "without ties",
        exactness=_EXACT,
    ),
    Entry(
        name="kendall-tau-b",
        family="correlation",
        function=_F + "kendall_tau_b",
        shape="paired-samples",
        summary="Kendall's tau-b (ties in either arm), Fisher-z interval and test against a null "
        "value.",
        options={"alternative": _ALT, "null_value": _NULL, "level": _LEVEL},
        reports=("estimate", "se", "statistic", "lower", "upper", "p"),
        formula="tau-b = (C − D)/√((n0 − n1)(n0 − n2)), n0 = n(n − 1)/2, n1 and n2 the pairs "
        "tied in a and in b; z = (atanh tau − atanh ρ0)/√(0.437/(n − 4)); at least 5 pairs "
        "(at most 20,000); a constant arm is refused",
        reference="Kendall MG (1945). The treatment of ties in ranking problems. Biometrika "
        "33:239–251; Fieller EC, Hartley HO, Pearson ES (1957). Biometrika 44:470–481.",
        oracle="scipy.stats.kendalltau(x, y, variant='b').statistic; pairs counted by hand",
        exactness=_EXACT,
    ),
    Entry(
        name="correlation-difference",
        family="correlation",
        function=_F + "correlation_difference",
        shape="sample-blocks",
        summary="Williams' t that two correlations with a shared reference differ (a human "
        "rating against two metrics).",
        options={
            "correlation": '"pearson" (r of the numbers) or "spearman" (r of the mid-ranks, '
            "the test applied to them)",
            "alternative": 'alternative: "two-sided", "greater" (H1: r(ref, group 2) above '
            'r(ref, group 3)), "less"',
        },
        reports=("estimate", "statistic", "df", "p"),
        formula="groups: the reference, then a, then b; estimate r12 − r13; t = (r12 − r13)·"
        "√((n − 1)(1 + r23)/(2((n − 1)/(n − 3))|R| + r̄²(1 − r23)³)), |R| = 1 − r12² − r13² − "
        "r23² + 2r12r13r23, r̄ = (r12 + r13)/2, df n − 3; at least 4 units in all three groups",
        reference="Williams EJ (1959). The comparison of regression variables. JRSS B "
        "21:396–399; Steiger JH (1980). Tests for comparing elements of a correlation matrix. "
        "Psychol Bull 87:245–251 (eq. 7); Graham Y, Baldwin T (2014). Testing for significance "
        "of increased correlation with human judgment. EMNLP 2014:172–176.",
        oracle="Steiger's eq. 7 in hand Fractions of the three correlations (scipy.stats.pearsonr"
        " and spearmanr) and scipy.stats.t",
        exactness="the difference is exact['estimate'] when both correlations are rational, "
        "otherwise decided by arb balls; equal correlations (r12 = r13 exactly) give t = 0 "
        "and P exactly 1/2 (two-sided 1); t and other P values are floats, each compared as "
        "the shortest decimal of its float",
    ),
)
