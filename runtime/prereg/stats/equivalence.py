"""Equivalence and non-inferiority: two one-sided tests, interval inclusion, one-sided tests
against a margin.

Two independent proportions (``k1, n1, k2, n2``, the difference ``p1 − p2``):

- :func:`tost_proportions`: two one-sided z tests of ``lower < p1 − p2 < upper``, with the
  registered standard error: ``wald`` (unpooled, the observed proportions) or
  ``farrington-manning`` (the proportions restricted to each margin by maximum likelihood,
  Farrington & Manning 1990; each side has its own).
- :func:`equivalence_interval_proportions`: the two-sided ``1 − 2α`` interval (Wald or
  Newcombe's hybrid score) whose bounds a rule compares with the margins.
- :func:`noninferiority_proportions`: the one-sided z test of ``p1 − p2`` against a margin
  (Wald or Farrington–Manning), and :func:`noninferiority_ratio_proportions`, of ``p1/p2``
  against a ratio margin on the log scale.

Two samples of numbers, independent (``x, y``) or paired:

- :func:`tost_means`: TOST of the difference of means (Welch or pooled variances);
  :func:`tost_paired`: of the mean paired difference.
- :func:`equivalence_interval_means`, :func:`equivalence_interval_paired`: the ``1 − 2α``
  t intervals.
- :func:`noninferiority_means`: the one-sided t test against a margin (Welch or pooled), and
  :func:`noninferiority_ratio_means`: of the ratio of geometric means against a ratio margin
  (Welch on the logs).

A TOST reports as ``p`` the larger of its two one-sided P values (equivalence is shown at
level α when it is at most α), as ``statistic`` and ``se`` the statistic and standard error
of that side, and both sides' statistics and P values in ``extra`` (``lower`` side: H1
``a − b > lower``; ``upper`` side: H1 ``a − b < upper``).  A non-inferiority test takes the alternative "greater" (higher is
better: H1 ``a − b > margin``) or "less" (lower is better) and reports the one-sided bound at
the registered level (the unbounded side None).

For proportions the deviation from a margin, ``k1/n1 − k2/n2 − margin``, is computed in exact
fractions with the margin read as the decimal it is written as (``repr`` of the float: 0.05 is
1/20) and rounded once, so that a difference exactly at its margin gives ``z = 0`` and a
one-sided P of ½ exactly (floats would give 15/100 − 10/100 − 0.05 = −1.4e-17).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from prereg.stats import checks, continuous
from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

ONE_SIDED = ("greater", "less")


def _two_binomial(k1, n1, k2, n2):
    k1, n1 = checks.binomial(k1, n1, ("k1", "n1"))
    k2, n2 = checks.binomial(k2, n2, ("k2", "n2"))
    return k1, n1, k2, n2


def _margins(lower, upper, *, proportion: bool) -> tuple[float, float]:
    lo, hi = checks.number(lower, "lower"), checks.number(upper, "upper")
    if not lo < hi:
        raise MethodError(f"lower ({lower!r}) must be below upper ({upper!r})")
    if proportion:
        for name, v in (("lower", lo), ("upper", hi)):
            if not -1.0 < v < 1.0:
                raise MethodError(
                    f"{name} is a difference of proportions and must lie "
                    f"strictly between -1 and 1, got {v!r}"
                )
    return lo, hi


def _alpha(alpha) -> float:
    a = checks.level(alpha, "alpha")
    if not a < 0.5:
        raise MethodError(
            f"alpha must lie strictly between 0 and 0.5 (the interval's level is "
            f"1 - 2 alpha), got {alpha!r}"
        )
    return a


def _decimal(v: float) -> Fraction:
    """A margin as the decimal it was written as: the shortest decimal that reads back as the
    float (0.05 is 1/20, not the binary float's 0.05000000000000000277...)."""
    return Fraction(repr(float(v)))


def _deviation(k1, n1, k2, n2, margin: float) -> float:
    """k1/n1 − k2/n2 − margin, computed exactly and rounded once (0 exactly at the margin)."""
    return float(Fraction(k1, n1) - Fraction(k2, n2) - _decimal(margin))


def _wald_se(k1, n1, k2, n2) -> float:
    p1, p2 = k1 / n1, k2 / n2
    return math.sqrt(p1 * (1.0 - p1) / n1 + p2 * (1.0 - p2) / n2)


def _wald_squares(k1, n1, k2, n2, margin: float) -> dict[str, Fraction]:
    """``{"se_squared": se², "statistic_squared": z²}`` of the Wald z against ``margin``,
    exactly: se² = p̂1(1 − p̂1)/n1 + p̂2(1 − p̂2)/n2 of the counts, z² = (d − margin)²/se² with
    the margin as written, so that a threshold on z or se is decided by balls of their roots
    (8 of 20 against 4 of 20 at margin 0 give se = 3/20 exactly, whose float is
    0.15000000000000002); {} when se is 0."""
    var = Fraction(k1 * (n1 - k1), n1**3) + Fraction(k2 * (n2 - k2), n2**3)
    if var == 0:
        return {}
    dev = Fraction(k1, n1) - Fraction(k2, n2) - _decimal(margin)
    return {"se_squared": var, "statistic_squared": dev * dev / var}


def _fm_side(k1, n1, k2, n2, margin: float) -> tuple[float | None, float | None]:
    """(z, se) of the Farrington–Manning statistic at ``margin``; z None when its se is 0."""
    from prereg.stats.proportions import farrington_manning_estimates

    t1, t2 = farrington_manning_estimates(k1, n1, k2, n2, margin=margin)
    se = math.sqrt(t1 * (1.0 - t1) / n1 + t2 * (1.0 - t2) / n2)
    if se == 0:
        return None, 0.0
    return _deviation(k1, n1, k2, n2, margin) / se, se


def _side_z(k1, n1, k2, n2, margin, se_kind) -> tuple[float | None, float | None]:
    if se_kind == "wald":
        se = _wald_se(k1, n1, k2, n2)
        return (_deviation(k1, n1, k2, n2, margin) / se if se > 0 else None), se
    return _fm_side(k1, n1, k2, n2, margin)


def _fm_limit(k1, n1, k2, n2, q: float, side: str) -> float:
    """The end of the Farrington–Manning score interval: the margin δ at which the test's z
    equals ``q`` (``side="lower"``) or ``−q`` (``"upper"``); z falls as δ rises, so the lower
    end is the δ below which "greater" is rejected at ``Φ(−q)``.  Found by Brent's method on
    (−1, 1) to 1e-15; −1 or 1 when z does not reach the target inside."""
    from scipy.optimize import brentq

    from prereg.stats.proportions import farrington_manning_estimates

    d = k1 / n1 - k2 / n2
    target = q if side == "lower" else -q

    def gap(delta: float) -> float:
        t1, t2 = farrington_manning_estimates(k1, n1, k2, n2, margin=delta)
        se = math.sqrt(t1 * (1.0 - t1) / n1 + t2 * (1.0 - t2) / n2)
        if se == 0:
            return math.copysign(math.inf, d - delta) - target if d != delta else -target
        return (d - delta) / se - target

    eps = 1e-12
    lo, hi = -1.0 + eps, 1.0 - eps
    if gap(lo) <= 0:
        return -1.0
    if gap(hi) >= 0:
        return 1.0
    return float(brentq(gap, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=200))


def _tost(
    name,
    estimate,
    lower_side,
    upper_side,
    *,
    statistic_name,
    se=None,
    df=None,
    exact=None,
    counts=None,
    extra=None,
    side_se=None,
) -> Result:
    """lower_side, upper_side: (statistic, p) each, None where undefined; ``side_se``: each
    side's se (lower, upper) when they differ, ``se`` then the deciding side's."""
    (s_lo, p_lo), (s_hi, p_hi) = lower_side, upper_side
    extra = dict(extra or {})
    extra.update(
        {"statistic_lower": s_lo, "p_lower": p_lo, "statistic_upper": s_hi, "p_upper": p_hi}
    )
    stat = p = None
    if p_lo is not None and p_hi is not None:
        stat, p = (s_lo, p_lo) if p_lo >= p_hi else (s_hi, p_hi)
        if side_se is not None:
            se = side_se[0] if p_lo >= p_hi else side_se[1]
    return Result(
        name,
        estimate=estimate,
        se=se,
        statistic=stat,
        statistic_name=statistic_name,
        df=df,
        p=p,
        exact=exact or {},
        counts=counts or {},
        extra=extra,
    )


# -- proportions ----------------------------------------------------------------------------------


def tost_proportions(k1, n1, k2, n2, *, lower, upper, se) -> Result:
    """TOST of ``lower < p1 − p2 < upper``: ``z_L = (d − lower)/se_L``, ``P_L = Φ(−z_L)``;
    ``z_U = (d − upper)/se_U``, ``P_U = Φ(z_U)``; ``p = max(P_L, P_U)``.  ``se="wald"``:
    ``se_L = se_U = √(p̂1(1 − p̂1)/n1 + p̂2(1 − p̂2)/n2)``; ``se="farrington-manning"``: the
    same with the proportions restricted by maximum likelihood to ``p1 − p2`` = the side's
    margin."""
    k1, n1, k2, n2 = _two_binomial(k1, n1, k2, n2)
    lo, hi = _margins(lower, upper, proportion=True)
    checks.choice(se, "se", ("wald", "farrington-manning"))
    counts = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
    if n1 == 0 or n2 == 0:
        return Result("tost-proportions", statistic_name="z", counts=counts)
    d = Fraction(k1, n1) - Fraction(k2, n2)
    z_lo, se_lo = _side_z(k1, n1, k2, n2, lo, se)
    z_hi, se_hi = _side_z(k1, n1, k2, n2, hi, se)
    lower_side = (z_lo, None if z_lo is None else checks.normal_p(z_lo, "greater"))
    upper_side = (z_hi, None if z_hi is None else checks.normal_p(z_hi, "less"))
    exact = {"estimate": d}
    if se == "wald" and lower_side[1] is not None and upper_side[1] is not None:
        # the side _tost reports (the larger P): its z² and the se both sides share
        exact |= _wald_squares(k1, n1, k2, n2, lo if lower_side[1] >= upper_side[1] else hi)
    return _tost(
        "tost-proportions",
        d,
        lower_side,
        upper_side,
        statistic_name="z",
        se=se_lo if se == "wald" else None,
        exact=exact,
        counts=counts,
        extra={"se_lower": se_lo, "se_upper": se_hi},
        side_se=(se_lo, se_hi),
    )


def equivalence_interval_proportions(k1, n1, k2, n2, *, alpha, interval) -> Result:
    """The two-sided ``1 − 2α`` interval of ``p1 − p2``: ``wald`` (``d ± z·se``, the unpooled
    se, z = Φ⁻¹(1 − α)), ``newcombe`` (Newcombe's hybrid score, method 10) or
    ``farrington-manning`` (the margins at which the Farrington–Manning z is ±z: its bounds
    lie inside the margins exactly when the TOST with that se rejects at α)."""
    k1, n1, k2, n2 = _two_binomial(k1, n1, k2, n2)
    a = _alpha(alpha)
    checks.choice(interval, "interval", ("wald", "newcombe", "farrington-manning"))
    counts = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
    extra = {"level": 1.0 - 2.0 * a}
    if n1 == 0 or n2 == 0:
        return Result("equivalence-interval-proportions", counts=counts, extra=extra)
    d = Fraction(k1, n1) - Fraction(k2, n2)
    se = None
    if interval == "wald":
        se = _wald_se(k1, n1, k2, n2)
        z = checks.normal_quantile(1.0 - a)
        lower, upper = float(d) - z * se, float(d) + z * se
    elif interval == "farrington-manning":
        z = checks.normal_quantile(1.0 - a)
        lower = _fm_limit(k1, n1, k2, n2, z, "lower")
        upper = _fm_limit(k1, n1, k2, n2, z, "upper")
    else:
        from prereg.stats.proportions import newcombe_difference

        _, lower, upper = newcombe_difference(k1, n1, k2, n2, level=1.0 - 2.0 * a)
    return Result(
        "equivalence-interval-proportions",
        estimate=d,
        se=se,
        lower=lower,
        upper=upper,
        exact={"estimate": d},
        counts=counts,
        extra=extra,
    )


def noninferiority_proportions(k1, n1, k2, n2, *, margin, alternative, se, level) -> Result:
    """One-sided z test of ``p1 − p2`` against ``margin``: ``z = (d − margin)/se``, "greater"
    ``P = Φ(−z)``, "less" ``P = Φ(z)``; se ``wald`` or ``farrington-manning`` (restricted to
    ``p1 − p2 = margin``).  The one-sided bound at ``level`` is the Wald one
    (``d − z_level·se`` for "greater", ``d + z_level·se`` for "less") or the
    Farrington–Manning score bound (the margin at which its z is ``±z_level``), so that the
    bound passes the margin exactly when P < 1 − level."""
    k1, n1, k2, n2 = _two_binomial(k1, n1, k2, n2)
    m = checks.number(margin, "margin")
    if not -1.0 < m < 1.0:
        raise MethodError(
            f"margin is a difference of proportions and must lie strictly "
            f"between -1 and 1, got {margin!r}"
        )
    checks.alternative(alternative, ONE_SIDED)
    checks.choice(se, "se", ("wald", "farrington-manning"))
    lv = checks.level(level)
    counts = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
    if n1 == 0 or n2 == 0:
        return Result("noninferiority-proportions", statistic_name="z", counts=counts)
    d = Fraction(k1, n1) - Fraction(k2, n2)
    z, se_value = _side_z(k1, n1, k2, n2, m, se)
    lower = upper = None
    q = checks.normal_quantile(lv)
    if se == "farrington-manning":
        if alternative == "greater":
            lower = _fm_limit(k1, n1, k2, n2, q, "lower")
        else:
            upper = _fm_limit(k1, n1, k2, n2, q, "upper")
    elif se_value > 0:
        if alternative == "greater":
            lower = float(d) - q * se_value
        else:
            upper = float(d) + q * se_value
    return Result(
        "noninferiority-proportions",
        estimate=d,
        se=se_value,
        statistic=z,
        statistic_name="z",
        lower=lower,
        upper=upper,
        p=None if z is None else checks.normal_p(z, alternative),
        exact={"estimate": d} | (_wald_squares(k1, n1, k2, n2, m) if se == "wald" else {}),
        counts=counts,
    )


def noninferiority_ratio_proportions(k1, n1, k2, n2, *, margin, alternative, level) -> Result:
    """One-sided test of ``p1/p2`` against a ratio margin on the log scale:
    ``z = (log(p̂1/p̂2) − log margin)/se``, ``se = √((1 − p̂1)/k1 + (1 − p̂2)/k2)`` (delta
    method); the one-sided bound ``exp(log(p̂1/p̂2) ∓ z_level·se)``.  Undefined (None) when
    ``k1`` or ``k2`` is 0."""
    k1, n1, k2, n2 = _two_binomial(k1, n1, k2, n2)
    m = checks.number(margin, "margin")
    if m <= 0:
        raise MethodError(f"margin is a ratio of proportions and must be positive, got {margin!r}")
    checks.alternative(alternative, ONE_SIDED)
    lv = checks.level(level)
    counts = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
    name = "noninferiority-ratio-proportions"
    if n1 == 0 or n2 == 0 or k2 == 0:
        return Result(name, statistic_name="z", counts=counts)
    ratio = Fraction(k1 * n2, n1 * k2)
    if k1 == 0:
        return Result(
            name, estimate=ratio, statistic_name="z", exact={"estimate": ratio}, counts=counts
        )
    log_ratio = math.log(k1 * n2) - math.log(n1 * k2)
    se = math.sqrt((n1 - k1) / (k1 * n1) + (n2 - k2) / (k2 * n2))
    z = p = lower = upper = None
    if se > 0:
        # log(ratio/margin) from the exact fraction (the margin as written): 0 on the margin
        margin_q = _decimal(m)
        z = math.log1p(float((ratio - margin_q) / margin_q)) / se
        p = checks.normal_p(z, alternative)
        q = checks.normal_quantile(lv)
        if alternative == "greater":
            lower = math.exp(log_ratio - q * se)
        else:
            upper = math.exp(log_ratio + q * se)
    return Result(
        name,
        estimate=ratio,
        se=se,
        statistic=z,
        statistic_name="z",
        lower=lower,
        upper=upper,
        p=p,
        exact={
            "estimate": ratio,
            "se_squared": Fraction(n1 - k1, k1 * n1) + Fraction(n2 - k2, k2 * n2),
        },
        counts=counts,
        extra={"log_estimate": log_ratio},
    )


# -- means ----------------------------------------------------------------------------------------


def _t_tost(name, parts, lo, hi) -> Result:
    d, se, df, exact, counts, samples = parts
    if d is None or se is None or df is None or se == 0:
        return Result(
            name, estimate=d, se=se, df=df, statistic_name="t", exact=exact, counts=counts
        )
    # d − margin exactly near 0, the margins as written (as the proportions' sides are)
    t_lo = continuous.margin_deviation(d, lo, samples) / se
    t_hi = continuous.margin_deviation(d, hi, samples) / se
    return _tost(
        name,
        d,
        (t_lo, checks.t_p(t_lo, df, "greater")),
        (t_hi, checks.t_p(t_hi, df, "less")),
        statistic_name="t",
        se=se,
        df=df,
        exact=exact,
        counts=counts,
    )


def tost_means(x, y, *, lower, upper, variance) -> Result:
    """TOST of ``lower < mean(x) − mean(y) < upper``: ``t_L = (d − lower)/se``,
    ``t_U = (d − upper)/se``, one-sided t P values with Welch's (``variance="welch"``) or the
    pooled (``"pooled"``) se and degrees of freedom."""
    lo, hi = _margins(lower, upper, proportion=False)
    checks.choice(variance, "variance", ("welch", "pooled"))
    parts = (continuous.welch_parts if variance == "welch" else continuous.pooled_parts)(x, y)
    return _t_tost("tost-means", parts, lo, hi)


def tost_paired(x, y, *, lower, upper) -> Result:
    """TOST of ``lower < mean(x − y) < upper`` with the paired differences' t."""
    lo, hi = _margins(lower, upper, proportion=False)
    return _t_tost("tost-paired", continuous.paired_parts(x, y), lo, hi)


def _t_interval(name, parts, a) -> Result:
    d, se, df, exact, counts, _ = parts
    extra = {"level": 1.0 - 2.0 * a}
    if d is None or se is None or df is None or se == 0:
        return Result(name, estimate=d, se=se, df=df, exact=exact, counts=counts, extra=extra)
    half = checks.t_quantile(1.0 - a, df) * se
    return Result(
        name,
        estimate=d,
        se=se,
        df=df,
        lower=d - half,
        upper=d + half,
        exact=exact,
        counts=counts,
        extra=extra,
    )


def equivalence_interval_means(x, y, *, alpha, variance) -> Result:
    """The two-sided ``1 − 2α`` t interval of ``mean(x) − mean(y)``:
    ``d ± t(1 − α, df)·se``, Welch's or the pooled se and df."""
    a = _alpha(alpha)
    checks.choice(variance, "variance", ("welch", "pooled"))
    parts = (continuous.welch_parts if variance == "welch" else continuous.pooled_parts)(x, y)
    return _t_interval("equivalence-interval-means", parts, a)


def equivalence_interval_paired(x, y, *, alpha) -> Result:
    """The two-sided ``1 − 2α`` t interval of the mean paired difference."""
    a = _alpha(alpha)
    return _t_interval("equivalence-interval-paired", continuous.paired_parts(x, y), a)


def noninferiority_means(x, y, *, margin, alternative, variance, level) -> Result:
    """One-sided t test of ``mean(x) − mean(y)`` against ``margin`` (Welch or pooled) with
    the one-sided bound at ``level``: :func:`prereg.stats.continuous.welch_t` /
    :func:`~prereg.stats.continuous.student_t` restricted to one-sided alternatives."""
    checks.alternative(alternative, ONE_SIDED)
    checks.choice(variance, "variance", ("welch", "pooled"))
    fn = continuous.welch_t if variance == "welch" else continuous.student_t
    r = fn(x, y, margin=margin, alternative=alternative, level=level)
    return dataclasses.replace(r, method="noninferiority-means")


def noninferiority_ratio_means(x, y, *, margin, alternative, level) -> Result:
    """One-sided test of the ratio of geometric means against a ratio margin (Welch's t on the
    logs): :func:`prereg.stats.continuous.ratio_of_geometric_means`, one-sided."""
    checks.alternative(alternative, ONE_SIDED)
    r = continuous.ratio_of_geometric_means(
        x, y, margin=margin, alternative=alternative, level=level
    )
    return dataclasses.replace(r, method="noninferiority-ratio-means")


_F = "prereg.stats.equivalence:"
_FM_REF = "Farrington CP, Manning G (1990), Statistics in Medicine 9:1447-1454"
_TOST_REF = "Schuirmann DJ (1987), J Pharmacokinet Biopharm 15:657-680"
_TOST_REPORTS = ("estimate", "se", "statistic", "p")
_MARGINS = {
    "lower": "the lower equivalence margin (a - b above it)",
    "upper": "the upper equivalence margin (a - b below it); lower < upper",
}
_SE = {
    "se": "wald (unpooled, the observed proportions) | farrington-manning (the proportions "
    "restricted to the margin by maximum likelihood)"
}
_FLOAT = "z or t and P are floating point, each compared as the shortest decimal of its float"
#: the z and se of a test of two proportions with the Wald or Farrington–Manning se
_WALD_ROOTS = (
    "with se wald, se² = p̂1(1 − p̂1)/n1 + p̂2(1 − p̂2)/n2 and z² are fractions of the counts "
    "and the margin as written (exact['se_squared'], exact['statistic_squared']; of a TOST, "
    "the reported side's), and a threshold on z or se is decided by balls of their roots (6 of "
    "10 against 2 of 10 at margin -0.2 give z = 3 exactly, whose float is 2.9999999999999996); "
    "with se farrington-manning the restricted proportions are the root of a cubic of such "
    "fractions, isolated by balls of rising precision, and a threshold on z or se is decided "
    "by balls enclosing them; P (and a bound) are floating point, each compared as the "
    "shortest decimal of its float"
)
_T_MARGIN = (
    continuous.MARGIN_EXACT
    + "; "
    + continuous.T_STATISTIC_EXACT
    + "; P is floating point, compared as the shortest decimal of its float"
)
_FM_ORACLE = (
    "Wald: statsmodels test_proportions_2indep(method='wald', correction=False, value=margin, "
    "alternative='larger'/'smaller'); Farrington-Manning: the restricted proportions by bounded "
    "1-d maximisation of the binomial likelihood (scipy.optimize.minimize_scalar) in the tests, "
    "since statsmodels' method='score' at a non-zero value is wrong in 0.15 (issue #10269) and "
    "its correction=True default is Miettinen-Nurminen"
)

CATALOGUE = (
    Entry(
        name="tost-proportions",
        family="equivalence",
        function=_F + "tost_proportions",
        shape="two-binomial",
        summary="Two one-sided z tests that a difference of two proportions lies between "
        "two margins.",
        options={**_MARGINS, **_SE},
        reports=_TOST_REPORTS,
        formula="$z_L = (d - \\delta_L)/se_L$, $P_L = \\Phi(-z_L)$; "
        "$z_U = (d - \\delta_U)/se_U$, $P_U = \\Phi(z_U)$; $p = \\max(P_L, P_U)$; both sides "
        "in extra; se Wald $\\sqrt{\\hat p_1\\hat q_1/n_1 + \\hat p_2\\hat q_2/n_2}$ or the "
        "Farrington-Manning restricted se at each margin (reported: the deciding side's, the "
        "side of the larger P; both in extra as se_lower, se_upper)",
        reference=_TOST_REF + "; " + _FM_REF,
        oracle="statsmodels tost_proportions_2indep(method='wald', correction=False) for "
        "Wald; " + _FM_ORACLE,
        exactness="the difference is the fraction k1/n1 - k2/n2 (exact['estimate']), compared "
        "exactly; " + _WALD_ROOTS,
    ),
    Entry(
        name="equivalence-interval-proportions",
        family="equivalence",
        function=_F + "equivalence_interval_proportions",
        shape="two-binomial",
        summary="The two-sided 1 - 2 alpha interval of a difference of two proportions, whose "
        "bounds a rule compares with the equivalence margins.",
        options={
            "alpha": "the one-sided alpha of each side, in (0, 0.5)",
            "interval": "wald | newcombe (Newcombe's hybrid score, method 10) | "
            "farrington-manning (the inverted Farrington-Manning score test)",
        },
        reports=("estimate", "lower", "upper"),
        formula="Wald $d \\pm \\Phi^{-1}(1-\\alpha)\\,se$; Newcombe "
        "$d - \\sqrt{(\\hat p_1 - l_1)^2 + (u_2 - \\hat p_2)^2}$, "
        "$d + \\sqrt{(u_1 - \\hat p_1)^2 + (\\hat p_2 - l_2)^2}$ from Wilson bounds at "
        "level $1 - 2\\alpha$; Farrington-Manning: the margins at which its z is "
        "$\\pm\\Phi^{-1}(1-\\alpha)$",
        reference="Westlake WJ (1976), Biometrics 32:741-744; Newcombe RG (1998), Statistics "
        "in Medicine 17:873-890; " + _FM_REF,
        oracle="statsmodels confint_proportions_2indep(method='wald' | 'newcomb', "
        "compare='diff', alpha=2 alpha); Farrington-Manning: the z of the likelihood's own "
        "restricted proportions at each bound (statsmodels' score interval shares the "
        "issue #10269 error)",
        exactness="the estimate is the fraction k1/n1 - k2/n2 (exact); the bounds are floating "
        "point, compared with a margin as the shortest decimals of their floats",
    ),
    Entry(
        name="noninferiority-proportions",
        family="equivalence",
        function=_F + "noninferiority_proportions",
        shape="two-binomial",
        summary="One-sided z test that a difference of two proportions is beyond a "
        "non-inferiority margin.",
        options={
            "margin": "the difference under the null, in (-1, 1) (e.g. -0.05)",
            "alternative": "greater (higher is better: H1 a - b > margin) | less",
            **_SE,
            "level": "the level of the one-sided bound, in (0, 1)",
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p"),
        formula="$z = (d - \\delta)/se$, greater $P = \\Phi(-z)$, less $P = \\Phi(z)$; "
        "bound: Wald $d \\mp \\Phi^{-1}(level)\\,se$, or the margin at which the "
        "Farrington-Manning z equals $\\pm\\Phi^{-1}(level)$ (Brent's method, to 1e-15)",
        reference=_FM_REF,
        oracle=_FM_ORACLE,
        exactness="the difference is an exact fraction; " + _WALD_ROOTS,
    ),
    Entry(
        name="noninferiority-ratio-proportions",
        family="equivalence",
        function=_F + "noninferiority_ratio_proportions",
        shape="two-binomial",
        summary="One-sided test of a ratio of two proportions against a ratio margin on the "
        "log scale.",
        options={
            "margin": "the ratio under the null (positive, e.g. 0.9)",
            "alternative": "greater (higher is better: H1 a/b > margin) | less",
            "level": "the level of the one-sided bound, in (0, 1)",
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p"),
        formula="$z = (\\log(\\hat p_1/\\hat p_2) - \\log\\rho)/se$, "
        "$se = \\sqrt{(1-\\hat p_1)/k_1 + (1-\\hat p_2)/k_2}$; bound "
        "$\\exp(\\log(\\hat p_1/\\hat p_2) \\mp \\Phi^{-1}(level)\\,se)$; undefined with a "
        "zero count",
        reference="Katz D et al. (1978), Biometrics 34:469-474",
        oracle="statsmodels test_proportions_2indep(compare='ratio', method='log', "
        "value=margin) and confint_proportions_2indep(compare='ratio', method='log')",
        exactness="the ratio is the fraction k1 n2/(n1 k2) (exact['estimate']); log(ratio / "
        "margin) is log1p of the exact fraction (ratio - margin)/margin, the margin as written "
        "(0 on it); se² = (1 − p̂1)/k1 + (1 − p̂2)/k2 is a fraction (exact['se_squared']) and "
        "z = log(ratio/margin)/se is decided by balls of rising precision near a threshold; P "
        "and the bound are floating point, each compared as the shortest decimal of its float",
    ),
    Entry(
        name="tost-means",
        family="equivalence",
        function=_F + "tost_means",
        shape="two-samples",
        summary="Two one-sided t tests that a difference of two means lies between two margins.",
        options={**_MARGINS, "variance": "welch | pooled"},
        reports=_TOST_REPORTS + ("df",),
        formula="$t_L = (d - \\delta_L)/se$, $t_U = (d - \\delta_U)/se$, one-sided t P values "
        "with Welch's or the pooled se and df; $p = \\max(P_L, P_U)$",
        reference=_TOST_REF,
        oracle="statsmodels ttost_ind(x, y, low, upp, usevar='unequal' | 'pooled') (its "
        "default is pooled)",
        exactness="with whole-number data the difference is an exact fraction; " + _T_MARGIN,
    ),
    Entry(
        name="tost-paired",
        family="equivalence",
        function=_F + "tost_paired",
        shape="paired-samples",
        summary="Two one-sided t tests that the mean paired difference lies between two margins.",
        options=dict(_MARGINS),
        reports=_TOST_REPORTS + ("df",),
        formula="$d_i = x_i - y_i$; $t_{L,U} = (\\bar d - \\delta_{L,U})/(s_d/\\sqrt n)$, "
        "$n - 1$ df; $p = \\max(P_L, P_U)$",
        reference=_TOST_REF,
        oracle="statsmodels ttost_paired(x, y, low, upp)",
        exactness="with whole-number data the mean difference is an exact fraction; " + _T_MARGIN,
    ),
    Entry(
        name="equivalence-interval-means",
        family="equivalence",
        function=_F + "equivalence_interval_means",
        shape="two-samples",
        summary="The two-sided 1 - 2 alpha t interval of a difference of two means, whose "
        "bounds a rule compares with the margins.",
        options={"alpha": "in (0, 0.5)", "variance": "welch | pooled"},
        reports=("estimate", "se", "df", "lower", "upper"),
        formula="$d \\pm t(1 - \\alpha, df)\\,se$",
        reference="Westlake WJ (1976), Biometrics 32:741-744",
        oracle="statsmodels CompareMeans.tconfint_diff(alpha=2 alpha, usevar=...)",
        exactness="se is √(se²), se² a fraction of the decimals the data write, decided by "
        "balls of its root near a threshold; df is a whole number (pooled) or the "
        "Welch–Satterthwaite df, a fraction of those decimals compared exactly; the bounds are "
        "floating point, each compared as the shortest decimal of its float",
    ),
    Entry(
        name="equivalence-interval-paired",
        family="equivalence",
        function=_F + "equivalence_interval_paired",
        shape="paired-samples",
        summary="The two-sided 1 - 2 alpha t interval of the mean paired difference.",
        options={"alpha": "in (0, 0.5)"},
        reports=("estimate", "se", "df", "lower", "upper"),
        formula="$\\bar d \\pm t(1 - \\alpha, n - 1)\\,s_d/\\sqrt n$",
        reference="Westlake WJ (1976), Biometrics 32:741-744",
        oracle="statsmodels DescrStatsW(x - y).tconfint_mean(alpha=2 alpha)",
        exactness="se is √(se²), se² a fraction of the decimals the data write, decided by "
        "balls of its root near a threshold (differences 0.1, 0.1, 0.4 give se = 1/10 "
        "exactly, whose float is 0.10000000000000002); df = n − 1; the bounds are floating "
        "point, each compared as the shortest decimal of its float",
    ),
    Entry(
        name="noninferiority-means",
        family="equivalence",
        function=_F + "noninferiority_means",
        shape="two-samples",
        summary="One-sided t test that a difference of two means is beyond a non-inferiority "
        "margin.",
        options={
            "margin": "the difference under the null (e.g. -0.5)",
            "alternative": "greater (higher is better) | less",
            "variance": "welch | pooled",
            "level": "the level of the one-sided bound, in (0, 1)",
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p"),
        formula="$t = (d - \\delta)/se$ (Welch or pooled), one-sided P; bound "
        "$d \\mp t(level, df)\\,se$",
        reference="Welch BL (1947); Student (1908)",
        oracle="statsmodels ttest_ind(usevar=..., value=margin, alternative='larger' | "
        "'smaller') and CompareMeans.tconfint_diff",
        exactness="with whole-number data the difference is an exact fraction; " + _T_MARGIN,
    ),
    Entry(
        name="noninferiority-ratio-means",
        family="equivalence",
        function=_F + "noninferiority_ratio_means",
        shape="two-samples",
        summary="One-sided test of a ratio of geometric means against a ratio margin "
        "(Welch's t on the logs).",
        options={
            "margin": "the ratio under the null (positive, e.g. 0.8)",
            "alternative": "greater (higher is better) | less",
            "level": "the level of the one-sided bound, in (0, 1)",
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p"),
        formula="$t = (\\overline{\\log x} - \\overline{\\log y} - \\log\\rho)/se$ (Welch on "
        "the logs); estimate and bound exponentiated",
        reference="Julious SA, Debarnot CA (2000), J Biopharm Stat 10:55-64",
        oracle="statsmodels ttest_ind on the logs (usevar='unequal', value=log margin)",
        exactness="the estimate (the ratio) is certified by balls of the logs of the decimals "
        "the data write, so a ratio exactly on a threshold meets le and ge (SCORE.json then "
        "carries it in exact['estimate']); a ratio exactly on the margin gives t = 0 (balls of "
        "the logs decide it); Welch's t, se and df on the logs are decided by balls of the logs "
        "near a threshold; P and the bound are floating point, each compared as the shortest "
        "decimal of its float",
    ),
)
