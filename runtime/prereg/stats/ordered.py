"""Several groups, in a registered order: homogeneity, trend, strata.

Binomial groups (``k``, ``n``: successes and trials per group, in the registered order):

- :func:`chi_square_homogeneity`: Pearson's chi-square test that the k proportions are equal.
- :func:`cochran_armitage`: the Cochran–Armitage test of a linear trend of the proportion in
  registered scores, its variance with N (Armitage 1955) or N − 1 (the permutation variance;
  Mantel 1963, Agresti's M²) as registered.

Strata of 2×2 tables (``k1, n1, k2, n2`` per stratum, arm a against arm b):

- :func:`cochran_mantel_haenszel`: the Cochran–Mantel–Haenszel test of a common odds ratio of 1,
  with or without the continuity correction, and the Mantel–Haenszel common odds ratio with the
  Robins–Breslow–Greenland interval.

Samples of numbers per group (``groups``, a list of 1-d arrays in the registered order):

- :func:`one_way_anova`: the F test of equal means (equal variances).
- :func:`kruskal_wallis`: the Kruskal–Wallis H test on mid-ranks, with or without the tie
  correction.
- :func:`jonckheere_terpstra`: the Jonckheere–Terpstra test of an ordered alternative, exact
  (small samples without ties) or by the normal approximation with the tie-corrected variance.

Statistics that are rational in the data (chi-square, the trend statistic's square, the
CMH statistic, the common odds ratio, H, J and an exact P) are computed in exact fractions and
reported in ``exact``; the floats are those fractions correctly rounded (square roots and
distribution tails are floating point).  A group or stratum without data, or data without
variation, give None figures, never NaN.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats import checks
from prereg.stats.catalogue import SE_ROOT, Entry
from prereg.stats.compare import EPS
from prereg.stats.methods import MethodError
from prereg.stats.ranks import EXACT_MAX_PAIRS
from prereg.stats.result import Result


def _binomial_groups(k, n) -> tuple[list[int], list[int]]:
    ks = checks.counts(k, "k")
    ns = checks.counts(n, "n")
    if len(ks) != len(ns):
        raise MethodError(f"k and n must have one entry per group, got {len(ks)} and {len(ns)}")
    if len(ks) < 2:
        raise MethodError(f"at least 2 groups are needed, got {len(ks)}")
    for i, (a, b) in enumerate(zip(ks, ns, strict=True)):
        if a > b:
            raise MethodError(f"k[{i}] ({a}) must not exceed n[{i}] ({b})")
    return ks, ns


def _sqrt(x: Fraction) -> float:
    """The square root of ``x`` (not negative) as a float; inf where it is beyond the largest
    double (a margin of 1e300 over a variance of 1/40 gives a statistic squared of 4e601:
    its float raised OverflowError, though its square root, 2e300, is a double)."""
    try:
        return math.sqrt(float(x))
    except OverflowError:
        from decimal import Context, Decimal

        ctx = Context(prec=40, Emax=10**9)
        root = ctx.divide(Decimal(x.numerator), Decimal(x.denominator)).sqrt(ctx)
        return float(root)  # inf beyond a double


def _float(x: Fraction) -> float:
    """``float(x)``, or an infinity of its sign where ``x`` is beyond the largest double."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


# -- binomial groups ----------------------------------------------------------------------------


def chi_square_homogeneity(k, n) -> Result:
    """Pearson's chi-square statistic of the k × 2 table (successes, failures) per group, k − 1
    degrees of freedom, without continuity correction:
    ``X² = Σ_i (k_i − n_i·p̄)² / (n_i·p̄·(1 − p̄))``, ``p̄ = Σk/Σn``."""
    ks, ns = _binomial_groups(k, n)
    g = len(ks)
    counts = {"k": ks, "n": ns}
    big_k, big_n = sum(ks), sum(ns)
    if min(ns) == 0 or big_k in (0, big_n):
        why = "a group has no trials" if min(ns) == 0 else "every outcome is the same"
        return Result(
            "chi-square-homogeneity",
            statistic_name="chi2",
            df=g - 1,
            counts=counts,
            extra={"undefined": why},
        )
    pbar = Fraction(big_k, big_n)
    x2 = sum(
        (Fraction(a) - b * pbar) ** 2 / (b * pbar * (1 - pbar)) for a, b in zip(ks, ns, strict=True)
    )
    return Result(
        "chi-square-homogeneity",
        statistic=x2,
        statistic_name="chi2",
        df=g - 1,
        p=checks.chi2_sf(float(x2), g - 1),
        exact={"statistic": x2},
        counts=counts,
        extra={"proportions": [a / b for a, b in zip(ks, ns, strict=True)]},
    )


def _scores(scores, g: int) -> list[Fraction]:
    if isinstance(scores, str) or not hasattr(scores, "__len__"):
        raise MethodError("scores must be a list of numbers, one per group")
    if len(scores) != g:
        raise MethodError(f"scores must have one number per group ({g}), got {len(scores)}")
    out = []
    for i, s in enumerate(scores):
        checks.number(s, f"scores[{i}]")
        # a score is the decimal it is written as (0.1 is 1/10); ints and fractions as they are
        out.append(s if isinstance(s, Fraction) else Fraction(repr(float(s))))
    return out


def cochran_armitage(k, n, *, scores, alternative, variance) -> Result:
    """Cochran–Armitage test of a linear trend in the proportion with the registered scores.

    ``T = Σ s_i (k_i − n_i p̄)``; ``S = Σ n_i (s_i − s̄)²`` with ``s̄ = Σ n_i s_i / N``;
    ``Var(T) = p̄(1 − p̄)·S`` (``variance="n"``) or that times ``N/(N − 1)``
    (``variance="n-1"``, the permutation variance); ``z = T/√Var(T)``.  The estimate is the
    least-squares slope ``b = T/S`` of the proportion on the score, its SE ``√Var(T)/S``.
    "greater" is H1: the proportion increases with the score.
    """
    ks, ns = _binomial_groups(k, n)
    s = _scores(scores, len(ks))
    checks.alternative(alternative)
    checks.choice(variance, "variance", ("n", "n-1"))
    counts = {"k": ks, "n": ns}
    big_k, big_n = sum(ks), sum(ns)
    empty = Result("cochran-armitage", statistic_name="z", counts=counts)
    if big_n == 0:
        return empty
    pbar = Fraction(big_k, big_n)
    sbar = sum(b * si for b, si in zip(ns, s, strict=True)) / big_n
    ss = sum(b * (si - sbar) ** 2 for b, si in zip(ns, s, strict=True))
    t = sum(si * (a - b * pbar) for a, b, si in zip(ks, ns, s, strict=True))
    if ss == 0:  # one score among the groups with data
        return empty
    slope = t / ss
    var = pbar * (1 - pbar) * ss
    if variance == "n-1":
        if big_n < 2:
            return Result(
                "cochran-armitage",
                estimate=slope,
                statistic_name="z",
                exact={"estimate": slope},
                counts=counts,
            )
        var = var * Fraction(big_n, big_n - 1)
    if var == 0:
        return Result(
            "cochran-armitage",
            estimate=slope,
            statistic_name="z",
            exact={"estimate": slope},
            counts=counts,
        )
    z2 = t * t / var
    z = math.copysign(_sqrt(z2), t)
    return Result(
        "cochran-armitage",
        estimate=slope,
        se=_sqrt(var) / float(ss),
        statistic=z,
        statistic_name="z",
        p=checks.normal_p(z, alternative),
        exact={"estimate": slope, "statistic_squared": z2, "se_squared": var / (ss * ss)},
        counts=counts,
        extra={"T": float(t), "variance_T": float(var)},
    )


def _coefficients(coefficients, g: int) -> list[Fraction]:
    """A linear contrast's coefficients, one per group, as the decimals written or exact
    fractions written ``"1/3"`` (not all 0, none beyond 1e100 in magnitude)."""
    from prereg.stats.compare import exact_number, is_fraction_word

    if isinstance(coefficients, str) or not hasattr(coefficients, "__len__"):
        raise MethodError("coefficients must be a list of numbers, one per group")
    if len(coefficients) != g:
        raise MethodError(
            f"coefficients must have one number per group ({g}), got {len(coefficients)}"
        )
    out = []
    for i, c in enumerate(coefficients):
        if is_fraction_word(c):
            out.append(exact_number(c))
            continue
        if isinstance(c, str):
            shown = repr(c) if len(repr(c)) <= 40 else repr(c)[:40] + "…"
            raise MethodError(
                f"coefficients[{i}] must be a number or an exact fraction written as a string"
                f" 'p/q' of whole numbers (q not 0, at most about 1.8e308), got {shown}"
            )
        checks.number(c, f"coefficients[{i}]")
        out.append(c if isinstance(c, Fraction) else Fraction(repr(float(c))))
    if not any(out):
        raise MethodError("coefficients must not all be 0")
    for i, c in enumerate(out):
        if abs(c) > COEFFICIENT_MAX:
            raise MethodError(
                f"coefficients[{i}] is beyond 1e100 in magnitude (a contrast's test does not"
                " depend on its scale: write 1 and -1, not 1e200 and -1e200; its squares and"
                " sums must stay figures)"
            )
    return out


#: the largest magnitude of a contrast coefficient: its square, times a group's variance,
#: stays a double
COEFFICIENT_MAX = Fraction(10) ** 100


def linear_contrast_proportions(k, n, *, coefficients, alternative, level, margin) -> Result:
    """A linear contrast of the groups' proportions, ``L = Σ c_i k_i/n_i`` (an interaction:
    coefficients 1, −1, −1, 1 over the cells of a 2×2), with the Wald (unpooled) standard error
    ``√(Σ c_i² p_i(1 − p_i)/n_i)``, ``z = (L − margin)/se`` and its interval.  Groups whose
    coefficient is 0 are not read; a group read without trials leaves every figure undefined,
    and ``se = 0`` (every group read all right or all wrong) leaves the test undefined."""
    ks, ns = _binomial_groups(k, n)
    c = _coefficients(coefficients, len(ks))
    checks.alternative(alternative)
    level = checks.level(level)
    checks.number(margin, "margin")
    margin_q = margin if isinstance(margin, Fraction) else Fraction(repr(float(margin)))
    counts = {"k": ks, "n": ns}
    name = "linear-contrast-proportions"
    if any(ci and b == 0 for ci, b in zip(c, ns, strict=True)):
        return Result(name, statistic_name="z", counts=counts, extra={"undefined": "empty group"})
    read = [(ci, a, b) for ci, a, b in zip(c, ks, ns, strict=True) if ci]
    est = sum((ci * Fraction(a, b) for ci, a, b in read), Fraction(0))
    var = sum((ci * ci * Fraction(a * (b - a), b**3) for ci, a, b in read), Fraction(0))
    if var == 0:
        return Result(
            name, estimate=est, statistic_name="z", exact={"estimate": est}, counts=counts
        )
    dev = est - margin_q
    z2 = dev * dev / var
    z = math.copysign(_sqrt(z2), dev) if dev else 0.0
    se = _sqrt(var)
    lower, upper = checks.bounds(_float(est), se, alternative, level)
    return Result(
        name,
        estimate=est,
        se=se,
        statistic=z,
        statistic_name="z",
        lower=lower,
        upper=upper,
        p=checks.normal_p(z, alternative),
        exact={"estimate": est, "statistic_squared": z2, "se_squared": var},
        counts=counts,
        extra={"variance": _float(var)},
    )


def linear_contrast_means(groups, *, coefficients, variance, alternative, level, margin) -> Result:
    """A linear contrast of the groups' means, ``L = Σ c_i x̄_i`` (an interaction, or a trend
    with centred scores), with its t test against ``margin`` and interval.  ``welch``:
    ``se² = Σ c_i² s_i²/n_i`` over the groups read (coefficient not 0), Welch–Satterthwaite
    df ``(Σ v_i)² / Σ v_i²/(n_i − 1)``; ``pooled``: ``se² = s_p² Σ c_i²/n_i`` with ``s_p²`` the
    within-group variance of every group (the ANOVA's mean square error), df ``N − g``.  ``L −
    margin`` is decided on the decimals the data and the spec write near 0 (on the margin,
    t = 0 and a one-sided P of 1/2)."""
    from prereg.stats.compare import _exact_mean as decimal_mean
    from prereg.stats.compare import threshold
    from prereg.stats.continuous import _variance

    gs = checks.groups(groups)
    c = _coefficients(coefficients, len(gs))
    checks.choice(variance, "variance", ("welch", "pooled"))
    checks.alternative(alternative)
    level = checks.level(level)
    checks.number(margin, "margin")
    sizes = [int(a.size) for a in gs]
    counts = {"n": sizes}
    name = "linear-contrast-means"
    if any(ci and m == 0 for ci, m in zip(c, sizes, strict=True)):
        return Result(name, statistic_name="t", counts=counts, extra={"undefined": "empty group"})
    read = [(ci, a) for ci, a in zip(c, gs, strict=True) if ci]
    exact = {}
    if all(checks.integral(a) for _, a in read):
        exact["estimate"] = sum(
            (ci * Fraction(checks.exact_sum(a), a.size) for ci, a in read), Fraction(0)
        )
        est = _float(exact["estimate"])
    else:
        est = math.fsum(float(ci) * float(a.mean()) for ci, a in read)
    if variance == "welch":
        if any(a.size < 2 for _, a in read):
            return Result(name, estimate=est, statistic_name="t", exact=exact, counts=counts)
        parts = [(float(ci) ** 2 * _variance(a) / a.size, a.size) for ci, a in read]
        var = math.fsum(v for v, _ in parts)
        den = math.fsum(v * v / (m - 1) for v, m in parts)
        df = var * var / den if den > 0 else None
    else:
        big_n, g = sum(sizes), len(gs)
        if big_n - g < 1:
            return Result(name, estimate=est, statistic_name="t", exact=exact, counts=counts)
        ssw = math.fsum(_variance(a) * (a.size - 1) for a in gs if a.size > 1)
        var = ssw / (big_n - g) * math.fsum(float(ci) ** 2 / a.size for ci, a in read)
        df = float(big_n - g)
    if not var > 0 or df is None:
        return Result(name, estimate=est, statistic_name="t", exact=exact, counts=counts)
    se = math.sqrt(var)
    bound = sum(
        abs(float(ci)) * 16.0 * (a.size + 4) * EPS * float(np.abs(a).mean()) for ci, a in read
    )

    def deviation(estimate: float, m: float) -> float:
        dev = estimate - m
        if abs(dev) > bound + 4.0 * EPS * (abs(m) + abs(estimate)):
            return dev
        exact_dev = sum((ci * decimal_mean(a) for ci, a in read), Fraction(0)) - threshold(m)
        return float(exact_dev)

    t = deviation(est, float(margin)) / se
    lower, upper = checks.bounds(est, se, alternative, level, lambda q: checks.t_quantile(q, df))
    return Result(
        name,
        estimate=est,
        se=se,
        statistic=t,
        statistic_name="t",
        df=df,
        lower=lower,
        upper=upper,
        p=checks.t_p(t, df, alternative),
        exact=exact,
        counts=counts,
    )


# -- strata of 2×2 tables -----------------------------------------------------------------------


def _strata_counts(k1, n1, k2, n2) -> tuple[list[int], list[int], list[int], list[int]]:
    """Each stratum's (k1, n1, k2, n2) as counts, one entry per stratum, at least one."""
    a1, b1, c1, d1 = (
        checks.counts(v, name) for v, name in ((k1, "k1"), (n1, "n1"), (k2, "k2"), (n2, "n2"))
    )
    if not (len(a1) == len(b1) == len(c1) == len(d1)):
        raise MethodError("k1, n1, k2 and n2 must have one entry per stratum")
    if not a1:
        raise MethodError("at least one stratum is needed")
    return a1, b1, c1, d1


def mantel_haenszel_risk_difference(k1, n1, k2, n2, *, alternative, level, margin) -> Result:
    """The Mantel–Haenszel common risk difference of arm a against arm b across strata, with
    the Greenland–Robins (1985) variance, its z test against ``margin`` and interval.

    Stratum i: ``a = k1, b = n1 − k1`` (arm a), ``c = k2, d = n2 − k2`` (arm b), ``N = n1 + n2``;
    weights ``w_i = n1 n2 / N``; ``RD = Σ (a n2 − c n1)/N / Σ w_i`` (an exact fraction);
    ``Var = Σ (a b n2³ + c d n1³)/(n1 n2 N²) / (Σ w_i)²``; ``z = (RD − margin)/se`` with the
    margin read as the decimal written (on it z = 0, a one-sided P of 1/2); the interval is
    ``RD ± z·se``, two-sided at ``level`` or the one bound of a one-sided alternative.
    Strata with an empty arm carry no weight and are left out."""
    checks.alternative(alternative)
    lv = checks.level(level)
    checks.number(margin, "margin")
    if not -1.0 < float(margin) < 1.0:
        raise MethodError(
            f"margin is a difference of proportions and must lie strictly between -1 and 1,"
            f" got {margin!r}"
        )
    m = margin if isinstance(margin, Fraction) else Fraction(repr(float(margin)))
    a1, b1, c1, d1 = _strata_counts(k1, n1, k2, n2)
    num = weight = var = Fraction(0)
    used = 0
    for i, (a, na, c, nb) in enumerate(zip(a1, b1, c1, d1, strict=True)):
        if a > na:
            raise MethodError(f"k1[{i}] ({a}) must not exceed n1[{i}] ({na})")
        if c > nb:
            raise MethodError(f"k2[{i}] ({c}) must not exceed n2[{i}] ({nb})")
        if na == 0 or nb == 0:
            continue
        used += 1
        nn = na + nb
        b, d = na - a, nb - c
        num += Fraction(a * nb - c * na, nn)
        weight += Fraction(na * nb, nn)
        var += Fraction(a * b * nb**3 + c * d * na**3, na * nb * nn * nn)
    counts = {"k1": a1, "n1": b1, "k2": c1, "n2": d1, "strataUsed": used}
    name = "mantel-haenszel-risk-difference"
    if weight == 0:
        return Result(name, statistic_name="z", counts=counts)
    rd = num / weight
    figures = {"estimate": rd, "exact": {"estimate": rd}, "counts": counts}
    variance = var / (weight * weight)
    if variance == 0:
        return Result(name, statistic_name="z", **figures)
    se = _sqrt(variance)
    dev = rd - m
    z = float(dev) / se if dev else 0.0
    figures["exact"]["statistic_squared"] = dev * dev / variance  # a threshold on z: its root
    figures["exact"]["se_squared"] = variance
    est = float(rd)
    lower, upper = checks.bounds(est, se, alternative, lv)
    return Result(
        name,
        se=se,
        statistic=z,
        statistic_name="z",
        lower=lower,
        upper=upper,
        p=checks.normal_p(z, alternative),
        **figures,
    )


def cochran_mantel_haenszel(k1, n1, k2, n2, *, correction, alternative, level) -> Result:
    """Cochran–Mantel–Haenszel test and the Mantel–Haenszel common odds ratio.

    Stratum i is the table ``a = k1, b = n1 − k1, c = k2, d = n2 − k2`` (N_i its total); strata
    with N_i < 2 carry no information and are left out of the test.
    ``Δ = Σ (a_i − (a_i + b_i)(a_i + c_i)/N_i)``,
    ``V = Σ (a+b)(c+d)(a+c)(b+d) / (N_i²(N_i − 1))``,
    ``χ² = Δ²/V`` or, with ``correction``, ``max(|Δ| − ½, 0)²/V`` (1 degree of freedom).
    Odds ratio ``OR = R/S``, ``R = Σ a d/N``, ``S = Σ b c/N``; the Robins–Breslow–Greenland
    (1986) variance of ``log OR`` is
    ``Σ P R_i/(2R²) + Σ (P S_i + Q R_i)/(2RS) + Σ Q S_i/(2S²)`` with ``P = (a + d)/N`` and
    ``Q = (b + c)/N``; the interval is ``exp(log OR ± z·se)``, ``z = Φ⁻¹((1 + level)/2)``.

    ``alternative``: ``two-sided`` refers χ² to chi-square with 1 df; ``greater`` (H1: the
    common odds ratio exceeds 1, arm a's odds the higher) and ``less`` refer the signed root
    ``z = sign(Δ)·√χ²`` (reported in ``extra['z']``) to the normal, one tail (χ² 0 gives
    P = 1/2), and give the one bound of a one-sided interval at ``level``.
    """
    lv = checks.level(level)
    checks.choice(correction, "correction", (True, False))
    checks.alternative(alternative)
    a1, b1, c1, d1 = _strata_counts(k1, n1, k2, n2)
    tables = []
    for i, (ka, na, kb, nb) in enumerate(zip(a1, b1, c1, d1, strict=True)):
        if ka > na:
            raise MethodError(f"k1[{i}] ({ka}) must not exceed n1[{i}] ({na})")
        if kb > nb:
            raise MethodError(f"k2[{i}] ({kb}) must not exceed n2[{i}] ({nb})")
        tables.append((ka, na - ka, kb, nb - kb))
    counts = {"k1": a1, "n1": b1, "k2": c1, "n2": d1}
    delta = Fraction(0)
    v = Fraction(0)
    r = s = Fraction(0)
    pr = psqr = qs = Fraction(0)
    for a, b, c, d in tables:
        nn = a + b + c + d
        if nn == 0:
            continue
        ri, si = Fraction(a * d, nn), Fraction(b * c, nn)
        pi, qi = Fraction(a + d, nn), Fraction(b + c, nn)
        r += ri
        s += si
        pr += pi * ri
        psqr += pi * si + qi * ri
        qs += qi * si
        if nn >= 2:
            delta += a - Fraction((a + b) * (a + c), nn)
            v += Fraction((a + b) * (c + d) * (a + c) * (b + d), nn * nn * (nn - 1))
    exact: dict[str, Fraction] = {}
    extra: dict[str, object] = {"delta": float(delta), "variance": float(v)}
    stat = p = None
    if v > 0:
        dev = abs(delta) - Fraction(1, 2) if correction else abs(delta)
        chi2 = max(dev, Fraction(0)) ** 2 / v
        exact["statistic"] = chi2
        stat = chi2
        if alternative == "two-sided":
            p = checks.chi2_sf(float(chi2), 1)
        else:
            z = math.copysign(_sqrt(chi2), delta) if chi2 else 0.0
            extra["z"] = z
            p = checks.normal_p(z, alternative)
    estimate = se = lower = upper = None
    if s > 0:
        odds = r / s
        exact["estimate"] = odds
        estimate = odds
        if r > 0:
            var = pr / (2 * r * r) + psqr / (2 * r * s) + qs / (2 * s * s)
            se = _sqrt(var)
            exact["se_squared"] = var  # of the log odds ratio
            log_or = _log_fraction(odds)
            lower, upper = checks.bounds(log_or, se, alternative, lv, to=math.exp)
            extra["log_estimate"] = log_or
    elif r > 0:
        estimate = math.inf
    return Result(
        "cochran-mantel-haenszel",
        estimate=estimate,
        se=se,
        statistic=stat,
        statistic_name="chi2",
        df=1,
        lower=lower,
        upper=upper,
        p=p,
        exact=exact,
        counts=counts,
        extra=extra,
    )


def _log_fraction(x: Fraction) -> float:
    """log of a positive fraction without overflow of its numerator or denominator."""
    return math.log(x.numerator) - math.log(x.denominator)


# -- samples per group ----------------------------------------------------------------------------


def one_way_anova(groups) -> Result:
    """One-way analysis of variance: ``F = (SSB/(k − 1)) / (SSW/(N − k))`` with the between-
    and within-group sums of squares; exact fractions of the decimals the data write (up to
    about 15 significant digits a value, :func:`prereg.stats.exactsum.decimal_whole`).
    ``F`` is infinite (P = 0) when the groups differ but each is constant."""
    gs = checks.groups(groups)
    g = len(gs)
    sizes = [int(a.size) for a in gs]
    big_n = sum(sizes)
    counts = {"n": sizes}
    df = (g - 1, big_n - g)
    if min(sizes) == 0 or big_n - g < 1:
        return Result("one-way-anova", statistic_name="F", df=df, counts=counts)
    exact: dict[str, Fraction] = {}
    from prereg.stats.exactsum import decimal_whole, whole_sums

    scaled = decimal_whole(gs)
    if scaled is not None:
        # the values as the decimals the data write, whole numbers over 10**d: F is free of
        # the scale, so the F of the whole numbers is the F of the decimals (0.1, 0.3 and 0.2
        # against 0.4, 0.6 and 0.5 give F = 13.5 exactly, though floats give 13.499999999999993)
        ws, places = scaled
        sums, squares = zip(*(whole_sums(w) for w in ws), strict=True)
        between_raw = sum(Fraction(t * t, m) for t, m in zip(sums, sizes, strict=True))
        ssw = sum(squares) - between_raw
        ssb = between_raw - Fraction(sum(sums) ** 2, big_n)
        if ssw > 0:
            f = (ssb / (g - 1)) / (ssw / (big_n - g))
            exact["statistic"] = f
            f_value = float(f)
        else:
            f_value = math.inf if ssb > 0 else None
        square = Fraction(1, 10 ** (2 * places))
        ssb_f, ssw_f = float(ssb * square), float(ssw * square)
        mean_list = [float(Fraction(t, m * 10**places)) for t, m in zip(sums, sizes, strict=True)]
    else:  # a value of more digits than a double's decimals keep: floating point
        mean_arr = [float(a.mean()) for a in gs]
        grand = float(np.concatenate(gs).mean())
        ssw_f = math.fsum(float(np.sum((a - m) ** 2)) for a, m in zip(gs, mean_arr, strict=True))
        ssb_f = math.fsum(m_n * (m - grand) ** 2 for m, m_n in zip(mean_arr, sizes, strict=True))
        if ssw_f > 0:
            f_value = (ssb_f / (g - 1)) / (ssw_f / (big_n - g))
        else:
            f_value = math.inf if ssb_f > 0 else None
        mean_list = mean_arr
    if f_value is None:
        p = None
    elif math.isinf(f_value):
        p = 0.0
    else:
        p = checks.f_sf(f_value, g - 1, big_n - g)
    return Result(
        "one-way-anova",
        statistic=f_value,
        statistic_name="F",
        df=df,
        p=p,
        exact=exact,
        counts=counts,
        extra={"means": mean_list, "ss_between": ssb_f, "ss_within": ssw_f},
    )


def kruskal_wallis(groups, *, tie_correction) -> Result:
    """Kruskal–Wallis H on mid-ranks: ``H = 12/(N(N + 1))·Σ R_i²/n_i − 3(N + 1)``, divided,
    with ``tie_correction``, by ``1 − Σ(t³ − t)/(N³ − N)`` over the groups of t tied values;
    chi-square with k − 1 degrees of freedom."""
    from prereg.stats.ranks import doubled_ranks

    gs = checks.groups(groups)
    checks.choice(tie_correction, "tie_correction", (True, False))
    g = len(gs)
    sizes = [int(a.size) for a in gs]
    counts = {"n": sizes}
    big_n = sum(sizes)
    if min(sizes) == 0:
        return Result("kruskal-wallis", statistic_name="H", df=g - 1, counts=counts)
    doubled, ties = doubled_ranks(np.concatenate(gs))
    bounds = np.cumsum([0, *sizes])
    rank_sums = [int(doubled[bounds[i] : bounds[i + 1]].sum()) for i in range(g)]  # 2 R_i
    h = Fraction(12, big_n * (big_n + 1)) * sum(
        Fraction(r * r, 4 * m) for r, m in zip(rank_sums, sizes, strict=True)
    ) - 3 * (big_n + 1)
    factor = 1 - Fraction(sum(t**3 - t for t in ties), big_n**3 - big_n)
    extra = {
        "mean_ranks": [r / (2 * m) for r, m in zip(rank_sums, sizes, strict=True)],
        "tie_factor": float(factor),
    }
    if factor == 0:  # every value the same
        return Result("kruskal-wallis", statistic_name="H", df=g - 1, counts=counts, extra=extra)
    if tie_correction:
        h = h / factor
    return Result(
        "kruskal-wallis",
        statistic=h,
        statistic_name="H",
        df=g - 1,
        p=checks.chi2_sf(float(h), g - 1),
        exact={"statistic": h},
        counts=counts,
        extra=extra,
    )


def _pair_count(x: np.ndarray, y: np.ndarray) -> int:
    """2 × (#(x < y) + ½·#(x = y)) over all pairs (x from the first sample, y the second)."""
    xs = np.sort(x)
    left = np.searchsorted(xs, y, side="left")
    right = np.searchsorted(xs, y, side="right")
    return int(left.sum()) + int(right.sum())


def jonckheere_terpstra(groups, *, alternative, method) -> Result:
    """Jonckheere–Terpstra test: ``J = Σ_{i<j} U_ij``, ``U_ij`` = #(x from group i < y from
    group j) + ½·#(ties); "greater" is H1: values increase along the registered order.

    ``method="asymptotic"``: ``z = (J − E J)/√Var J`` with ``E J = (N² − Σ n_i²)/4`` and the
    tie-corrected variance of Hollander, Wolfe & Chicken (2014, eq. 6.19):
    ``[N(N−1)(2N+5) − Σ n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/72
    + [Σ n(n−1)(n−2)][Σ t(t−1)(t−2)]/(36N(N−1)(N−2))
    + [Σ n(n−1)][Σ t(t−1)]/(8N(N−1))`` (t over the groups of tied values).
    ``method="exact"``: P from the exact null distribution of J (data without ties only),
    counted in whole numbers (:func:`prereg.stats.ranks.inversion_counts`).
    """
    from prereg.stats.ranks import doubled_ranks, exact_tail, inversion_counts

    gs = checks.groups(groups)
    checks.alternative(alternative)
    checks.choice(method, "method", ("exact", "asymptotic"))
    sizes = [int(a.size) for a in gs]
    counts = {"n": sizes}
    big_n = sum(sizes)
    pairs = sum(sizes[i] * sizes[j] for i in range(len(gs)) for j in range(i + 1, len(gs)))
    if method == "exact" and pairs > EXACT_MAX_PAIRS:
        raise MethodError(
            f"jonckheere-terpstra: method 'exact' is for small samples (at most "
            f"{EXACT_MAX_PAIRS} between-group pairs, here {pairs}); register 'asymptotic'"
        )
    if pairs == 0:
        return Result("jonckheere-terpstra", statistic_name="J", counts=counts)
    j2 = sum(_pair_count(gs[i], gs[j]) for i in range(len(gs)) for j in range(i + 1, len(gs)))
    jstat = Fraction(j2, 2)
    mean = Fraction(big_n * big_n - sum(m * m for m in sizes), 4)
    _, ties = doubled_ranks(np.concatenate(gs))
    nn = big_n
    var = Fraction(
        nn * (nn - 1) * (2 * nn + 5)
        - sum(m * (m - 1) * (2 * m + 5) for m in sizes)
        - sum(t * (t - 1) * (2 * t + 5) for t in ties),
        72,
    )
    if nn > 2:
        var += Fraction(
            sum(m * (m - 1) * (m - 2) for m in sizes) * sum(t * (t - 1) * (t - 2) for t in ties),
            36 * nn * (nn - 1) * (nn - 2),
        )
    if nn > 1:
        var += Fraction(
            sum(m * (m - 1) for m in sizes) * sum(t * (t - 1) for t in ties), 8 * nn * (nn - 1)
        )
    exact = {"statistic": jstat}
    extra: dict[str, object] = {"mean": float(mean), "variance": float(var), "pairs": pairs}
    z = p = None
    if var > 0:
        dev = jstat - mean
        z = math.copysign(_sqrt(dev * dev / var), dev)
        extra["z"] = z
    if method == "exact":
        if ties:
            extra["undefined"] = "the exact distribution is for data without ties"
        else:
            pe = exact_tail(inversion_counts(sizes), int(jstat), alternative)
            exact["p"] = pe
            p = pe
    elif z is not None:
        p = checks.normal_p(z, alternative)
    return Result(
        "jonckheere-terpstra",
        statistic=jstat,
        statistic_name="J",
        p=p,
        exact=exact,
        counts=counts,
        extra=extra,
    )


_F = "prereg.stats.ordered:"
_FLOAT_P = (
    "P is computed in floating point from the statistic (scipy.special's {dist}); a threshold "
    "on P is compared as the shortest decimal of its float"
)

CATALOGUE = (
    Entry(
        name="chi-square-homogeneity",
        family="ordered",
        function=_F + "chi_square_homogeneity",
        shape="binomial-groups",
        summary="Pearson's chi-square test that the proportions of k groups are equal.",
        options={},
        reports=("statistic", "df", "p"),
        formula=(
            "$X^2 = \\sum_i (k_i - n_i\\bar p)^2 / (n_i \\bar p (1 - \\bar p))$, "
            "$\\bar p = \\sum k / \\sum n$, $k - 1$ degrees of freedom, no continuity correction"
        ),
        reference="Pearson K (1900), Philosophical Magazine 50:157-175; Agresti A (2002), "
        "Categorical Data Analysis, 2nd ed., section 3.2",
        oracle="scipy.stats.chi2_contingency(table, correction=False) (its default applies "
        "Yates' correction to a 2x2 table)",
        exactness="the statistic is a fraction of the counts, reported in exact['statistic'] "
        "and compared exactly; " + _FLOAT_P.format(dist="chdtrc"),
    ),
    Entry(
        name="cochran-armitage",
        family="ordered",
        function=_F + "cochran_armitage",
        shape="binomial-groups",
        summary="Cochran-Armitage test of a linear trend of the proportion in registered scores.",
        options={
            "scores": "one number per group, in the registered order",
            "alternative": "two-sided | greater (the proportion increases with the score) | less",
            "variance": "n (Armitage's binomial variance) | n-1 (the permutation variance, "
            "Agresti's M^2 = (N - 1) r^2)",
        },
        reports=("estimate", "se", "statistic", "p"),
        formula=(
            "$T = \\sum s_i (k_i - n_i \\bar p)$, $S = \\sum n_i (s_i - \\bar s)^2$, "
            "$\\mathrm{Var}\\,T = \\bar p (1 - \\bar p) S$ (times $N/(N-1)$ for n-1), "
            "$z = T/\\sqrt{\\mathrm{Var}\\,T}$; estimate the slope $b = T/S$, "
            "se $\\sqrt{\\mathrm{Var}\\,T}/S$"
        ),
        reference="Cochran WG (1954), Biometrics 10:417-451; Armitage P (1955), Biometrics "
        "11:375-386; Agresti A (2002), Categorical Data Analysis, 2nd ed., sections 3.4.4 "
        "and 5.3.5 (the infant malformation example)",
        oracle="statsmodels Table(table, shift_zeros=False).test_ordinal_association (N - 1 "
        "variance; its default shift_zeros adds 0.5 to zero cells); the correlation form "
        "z = sqrt(N) r (or sqrt(N - 1) r) over the expanded table; Agresti's published "
        "M^2 = 6.57, P = 0.0104",
        exactness="the slope and z^2 are fractions of the counts and scores, in "
        "exact['estimate'] and exact['statistic_squared']; a threshold on z is decided by "
        "balls of sign(T) sqrt(z^2) (its float is that root correctly rounded); "
        + SE_ROOT
        + " (of the slope); a threshold on P as the shortest decimal of its float",
    ),
    Entry(
        name="cochran-mantel-haenszel",
        family="ordered",
        function=_F + "cochran_mantel_haenszel",
        shape="strata-2x2",
        summary="Cochran-Mantel-Haenszel test of a common odds ratio of 1 across strata, with "
        "the Mantel-Haenszel common odds ratio and its Robins-Breslow-Greenland interval.",
        options={
            "correction": "true | false (continuity correction: |Delta| - 1/2, not below 0)",
            "alternative": "two-sided (chi-square, 1 df) | greater (H1: the common odds ratio "
            "exceeds 1: arm a's odds are the higher) | less (the signed root z = "
            "sign(Delta) sqrt(chi2), one normal tail)",
            "level": "the odds ratio's interval's level, in (0, 1); one-sided with a "
            "one-sided alternative",
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p"),
        formula=(
            "$\\Delta = \\sum (a_i - (a_i+b_i)(a_i+c_i)/N_i)$, "
            "$V = \\sum (a+b)(c+d)(a+c)(b+d)/(N_i^2(N_i-1))$, $\\chi^2 = \\Delta^2/V$ "
            "(1 df; one-sided: $z = \\mathrm{sign}(\\Delta)\\sqrt{\\chi^2}$, one normal tail); "
            "$OR = \\sum a d/N / \\sum b c/N$; "
            "$\\mathrm{Var}\\log OR = \\sum P R/(2R_+^2) + \\sum (P S + Q R)/(2R_+S_+) + "
            "\\sum Q S/(2S_+^2)$; interval $\\exp(\\log OR \\pm z\\,se)$. "
            "a = k1, b = n1 - k1, c = k2, d = n2 - k2; strata with N < 2 leave the test"
        ),
        reference="Mantel N, Haenszel W (1959), J Natl Cancer Inst 22:719-748; Robins J, "
        "Breslow N, Greenland S (1986), Biometrics 42:311-323",
        oracle="statsmodels StratifiedTable(tables, shift_zeros=False): test_null_odds("
        "correction=...), oddsratio_pooled, logodds_pooled_se, oddsratio_pooled_confint "
        "(statsmodels does not truncate the corrected deviation at 0 and gives P as "
        "1 - cdf; the tests recompute P with chi2.sf); one-sided: norm.sf of the signed root",
        exactness="the statistic and the odds ratio are fractions of the counts, in "
        "exact['statistic'] and exact['estimate'], compared exactly; "
        + SE_ROOT
        + " (of the log odds ratio, Robins–Breslow–Greenland); the interval and "
        + _FLOAT_P.format(dist="chdtrc"),
    ),
    Entry(
        name="mantel-haenszel-risk-difference",
        family="ordered",
        function=_F + "mantel_haenszel_risk_difference",
        shape="strata-2x2",
        summary="Mantel-Haenszel common risk difference of arm a against arm b across strata "
        "(a stratified difference of proportions), with the Greenland-Robins variance, its z "
        "test against a margin and interval.",
        options={
            "alternative": "two-sided | greater (H1: a's risk exceeds b's by more than the "
            "margin) | less",
            "level": "the interval's level, in (0, 1); one-sided with a one-sided alternative",
            "margin": "the common difference under the null, in (-1, 1) (0 for none)",
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p", "exact", "counts"),
        formula=(
            "$w_i = n_{1i} n_{2i}/N_i$, $RD = \\sum (a_i n_{2i} - c_i n_{1i})/N_i \\,/\\, "
            "\\sum w_i$; $\\mathrm{Var} = \\sum (a_i b_i n_{2i}^3 + c_i d_i n_{1i}^3)/"
            "(n_{1i} n_{2i} N_i^2) \\,/\\, (\\sum w_i)^2$; $z = (RD - margin)/se$; interval "
            "$RD \\pm z_{level}\\,se$. a = k1, b = n1 - k1, c = k2, d = n2 - k2; strata with "
            "an empty arm are left out; one stratum gives the Wald difference and variance"
        ),
        reference="Greenland S, Robins JM (1985), Estimation of a common effect parameter from "
        "sparse follow-up data, Biometrics 41:55-68; Cochrane Handbook / RevMan 5 statistical "
        "methods (Mantel-Haenszel risk difference)",
        oracle="the formula by hand in fractions over several strata; with one stratum "
        "statsmodels confint_proportions_2indep(method='wald') and the Wald z, the "
        "reduction the formula must meet",
        exactness="RD and RD - margin are fractions of the counts and the margin as written, "
        "compared exactly (on the margin z = 0, a one-sided P of 1/2); z² is a fraction "
        "(exact['statistic_squared']) and a threshold on z is decided by balls of its root; "
        + SE_ROOT
        + "; P and the bounds are floating point, each compared as the shortest decimal of "
        "its float",
    ),
    Entry(
        name="dunnett",
        family="ordered",
        function="prereg.stats.dunnett:dunnett",
        shape="samples-groups",
        summary="Dunnett's many-to-one comparison: each of several groups' means against one "
        "control's (the first group), with the family-wise (single-step) adjusted P and "
        "simultaneous interval over every treatment; one analysis reports one treatment "
        "(register one per treatment with expand).",
        options={
            "treatment": "the group this analysis compares with the control: its id (a group "
            "registered as {id: ft1, where: [...]}) or its position in groups, 2 to the number "
            "of groups (groups' first is the control; every later group is a treatment of the "
            "family)",
            "alternative": "two-sided | greater (H1: the treatment's mean exceeds the "
            "control's) | less",
            "level": "the simultaneous interval's level, in (0, 1) (family-wise over every "
            "treatment); one-sided with a one-sided alternative",
        },
        group_options=("treatment",),
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p"),
        formula="$d_i = \\bar x_i - \\bar x_0$, $s^2 = \\sum_j (n_j - 1) s_j^2/(N - g)$, "
        "$se_i = s\\sqrt{1/n_i + 1/n_0}$, $t_i = d_i/se_i$ ($N - g$ df); adjusted "
        "$P_i = 1 - \\Pr(\\max_j |T_j| \\le |t_i|)$ (one-sided $\\max_j T_j$) under the "
        "multivariate t with correlations $\\lambda_i\\lambda_j$, "
        "$\\lambda_i = \\sqrt{n_i/(n_i + n_0)}$; interval $d_i \\pm c\\,se_i$ with "
        "$\\Pr(\\max \\le c) = level$; extra: the critical value, every treatment's t",
        reference="Dunnett CW (1955), A multiple comparison procedure for comparing several "
        "treatments with a control, JASA 50:1096-1121; Hochberg Y, Tamhane AC (1987), "
        "Multiple Comparison Procedures, ch. 3",
        oracle="scipy.stats.dunnett (randomised quasi-Monte Carlo: P and bounds to about "
        "1e-3); with one treatment Student's t (scipy.stats.ttest_ind) to 1e-7; Dunnett's "
        "published critical value 2.54 (three treatments, 20 df, two-sided 0.05)",
        exactness="with whole-number data the difference is an exact fraction "
        "(exact['estimate']); with decimals it is certified by the exact means of the "
        "decimals written, so a difference exactly on a threshold meets ge and le, and equal "
        "means give t = 0; t is ±√(t²), t² a fraction of the decimals the data write, decided "
        "by balls of that root near a threshold (a t of exactly 1 meets `ge 1`); P and the "
        "bounds are Gauss-Legendre quadratures of Dunnett's "
        "integral, deterministic and accurate to about 1e-10 relative, compared as their "
        "floats as their shortest decimals",
    ),
    Entry(
        name="one-way-anova",
        family="ordered",
        function=_F + "one_way_anova",
        shape="samples-groups",
        summary="One-way analysis of variance: the F test that k group means are equal.",
        options={},
        reports=("statistic", "df", "p"),
        formula="$F = (SS_B/(k-1)) / (SS_W/(N-k))$, F with $(k - 1, N - k)$ df; "
        "infinite (P = 0) when each group is constant and the groups differ",
        reference="Fisher RA (1925), Statistical Methods for Research Workers",
        oracle="scipy.stats.f_oneway",
        exactness="F is a fraction of the values read as the decimals the data write "
        "(exact['statistic']), compared exactly: 0.1, 0.3, 0.2 against 0.4, 0.6, 0.5 give F = "
        "27/2 (scipy.stats.f_oneway: 13.499999999999995); a value of more than about 15 "
        "significant digits leaves F floating point; " + _FLOAT_P.format(dist="fdtrc"),
    ),
    Entry(
        name="kruskal-wallis",
        family="ordered",
        function=_F + "kruskal_wallis",
        shape="samples-groups",
        summary="Kruskal-Wallis H test on mid-ranks that k groups come from one distribution.",
        options={"tie_correction": "true | false"},
        reports=("statistic", "df", "p"),
        formula="$H = \\frac{12}{N(N+1)} \\sum R_i^2/n_i - 3(N+1)$, divided (tie_correction) "
        "by $1 - \\sum (t^3 - t)/(N^3 - N)$; chi-square with $k - 1$ df",
        reference="Kruskal WH, Wallis WA (1952), JASA 47:583-621",
        oracle="scipy.stats.kruskal (always tie-corrected); the uncorrected H from "
        "scipy.stats.rankdata's mid-ranks",
        exactness="H is a fraction of the ranks (exact['statistic']), compared exactly; "
        + _FLOAT_P.format(dist="chdtrc"),
    ),
    Entry(
        name="jonckheere-terpstra",
        family="ordered",
        function=_F + "jonckheere_terpstra",
        shape="samples-groups",
        summary="Jonckheere-Terpstra test of values increasing (or decreasing) along the "
        "registered order of the groups.",
        options={
            "alternative": "two-sided | greater (values increase along the order) | less",
            "method": f"exact (no ties, at most {EXACT_MAX_PAIRS} between-group pairs) | "
            "asymptotic (normal, tie-corrected variance)",
        },
        reports=("statistic", "p"),
        formula="$J = \\sum_{i<j} \\#(x_i < x_j) + \\tfrac12 \\#(x_i = x_j)$; "
        "$E J = (N^2 - \\sum n_i^2)/4$; Var J of Hollander & Wolfe eq. 6.19 with ties; "
        "$z = (J - E J)/\\sqrt{\\mathrm{Var} J}$ in extra; exact: the q-multinomial null "
        "distribution of J, two-sided P = min(1, 2 min tail)",
        reference="Jonckheere AR (1954), Biometrika 41:133-145; Terpstra TJ (1952), "
        "Indagationes Mathematicae 14:327-333; Hollander M, Wolfe DA (1999), Nonparametric "
        "Statistical Methods, 2nd ed., section 6.2",
        oracle="Hollander & Wolfe Example 6.2 (J = 79, Var 150.29, z = 2.04, P = 0.0207); "
        "PMCMRplus' coffee example (exact two-sided P 0.01973); enumeration of every "
        "assignment of the values to the groups (exact P, mean and variance with ties)",
        exactness="J is a multiple of 1/2 (exact['statistic']) and the exact P a fraction "
        "(exact['p']), compared exactly; the asymptotic P is floating point, compared as the shortest decimal of its float",
    ),
    Entry(
        name="linear-contrast-proportions",
        family="ordered",
        function=_F + "linear_contrast_proportions",
        shape="binomial-groups",
        summary="A linear contrast of the groups' proportions (an interaction, a difference of "
        "differences) with its Wald z test against a margin.",
        options={
            "coefficients": "one number per group, in the registered order, not all 0 (an "
            "interaction of a 2x2: 1, -1, -1, 1); a decimal, or an exact fraction written as a "
            "string ('1/3': the mean of three groups against a fourth is '1/3', '1/3', '1/3', -1)",
            "alternative": "two-sided | greater (H1: the contrast exceeds the margin) | less",
            "level": "the interval's level, in (0, 1); one-sided with a one-sided alternative",
            "margin": "the contrast's value under the null (a finite number; 0 for none)",
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p"),
        formula="$L = \\sum c_i k_i/n_i$; $se = \\sqrt{\\sum c_i^2 \\hat p_i (1 - \\hat "
        "p_i)/n_i}$ (Wald, unpooled, over the groups whose coefficient is not 0); "
        "$z = (L - \\delta)/se$; interval $L \\pm z_{1-\\alpha/2}\\,se$ (one-sided: "
        "$z_{1-\\alpha}$)",
        reference="Agresti A (2002), Categorical Data Analysis, 2nd ed., section 3.1.7 "
        "(delta-method standard errors of functions of independent proportions); Fleiss JL, "
        "Levin B, Paik MC (2003), Statistical Methods for Rates and Proportions, 3rd ed.",
        oracle="statsmodels OLS of the 0/1 outcomes on one indicator per group (no intercept) "
        "with cov_type='HC0': params are the proportions, cov is diag(p(1 - p)/n), and "
        "t_test(c) (normal reference) gives L, se, z and P",
        exactness="L and z^2 are fractions of the counts and the coefficients as written "
        "(exact['estimate'], exact['statistic_squared']); L on the margin gives z = 0 and a "
        "one-sided P of 1/2; a threshold on z is decided by balls of the root of z^2; "
        + SE_ROOT
        + "; P and the bounds are floating point, each compared as the shortest decimal of "
        "its float",
    ),
    Entry(
        name="linear-contrast-means",
        family="ordered",
        function=_F + "linear_contrast_means",
        shape="samples-groups",
        summary="A linear contrast of the groups' means (an interaction, a trend with centred "
        "scores) with its t test against a margin.",
        options={
            "coefficients": "one number per group, in the registered order, not all 0; a "
            "decimal, or an exact fraction written as a string ('1/3')",
            "variance": "welch (each group's own variance, Welch-Satterthwaite df) | pooled "
            "(the within-group mean square of every group, N - g df)",
            "alternative": "two-sided | greater (H1: the contrast exceeds the margin) | less",
            "level": "the interval's level, in (0, 1); one-sided with a one-sided alternative",
            "margin": "the contrast's value under the null (a finite number; 0 for none)",
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p"),
        formula="$L = \\sum c_i \\bar x_i$; welch: $se^2 = \\sum v_i$, $v_i = c_i^2 s_i^2/n_i$ "
        "over the groups whose coefficient is not 0, df $= (\\sum v_i)^2 / \\sum v_i^2/(n_i - "
        "1)$; pooled: $se^2 = s_p^2 \\sum c_i^2/n_i$, $s_p^2 = \\sum_i (n_i - 1) s_i^2/(N - g)$ "
        "over every group, df $= N - g$; $t = (L - \\delta)/se$",
        reference="Maxwell SE, Delaney HD (2004), Designing Experiments and Analyzing Data, 2nd "
        "ed., ch. 4 and 5 (individual comparisons of means, the separate-variance test)",
        oracle="pooled: statsmodels OLS on one indicator per group (no intercept), "
        "t_test(c, value=margin); welch: the formula by hand in fractions, and "
        "scipy.stats.ttest_ind(equal_var=False) for two groups with coefficients 1, -1",
        exactness="with whole-number data L is an exact fraction (exact['estimate']); L less the "
        "margin is decided on the decimals the data and the spec write near 0 (on the margin "
        "t = 0, a one-sided P of 1/2); t is ±√(t²), t² a fraction of the decimals the data, "
        "the coefficients and the margin write, decided by balls of that root near a threshold "
        "(a t of exactly 1 meets `ge 1`), and se, √(se²), the same way; df is a whole number "
        "(pooled) or the Welch–Satterthwaite df, a fraction of those decimals compared exactly; "
        "P and the bounds are floating point, each compared as the shortest decimal of its float",
    ),
)
