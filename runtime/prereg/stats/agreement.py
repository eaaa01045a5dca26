"""Agreement between raters: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha, Gwet's AC1,
intraclass correlation and raw agreement.

Two input shapes (:data:`prereg.stats.catalogue.SHAPES`):

- ``two-raters``: ``a, b``, the integer category codes two raters gave each unit; the
  registered ``categories`` list every code a rating may take, in order (weighted kappa weights
  by position in that list; Gwet's AC1 counts the categories it lists, used or not).
- ``ratings``: ``x``, a 2-d array, one row per unit, one column per rater, NaN where a rating is
  missing (Krippendorff's alpha allows missing ratings; Fleiss' kappa and the intraclass
  correlation refuse them).

Every agreement figure of counts is a rational number; it is computed in exact arithmetic
(``fractions.Fraction``), reported in ``exact`` and as the float nearest to it. Standard errors
are square roots and are floats; a kappa's z is the root of an exact z² (``statistic_squared``).

Importing this module does not import scipy (the F quantiles of the intraclass correlation's
interval import it when called).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

ALTERNATIVES = ("two-sided", "greater", "less")
KAPPA_WEIGHTS = ("none", "linear", "quadratic")
KRIPPENDORFF_LEVELS = ("nominal", "ordinal", "interval", "ratio")
ICC_FORMS = ("icc-1-1", "icc-2-1", "icc-3-1", "icc-1-k", "icc-2-k", "icc-3-k")


# ---------------------------------------------------------------------------------------------
# argument checks


def _choice(value, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise MethodError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)):
        raise MethodError(f"level must be a number strictly between 0 and 1, got {level!r}")
    lv = float(level)
    if not (0.0 < lv < 1.0):
        raise MethodError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def _critical(level: float) -> float:
    from prereg.stats.proportions import critical_z

    return critical_z(level=level)


def _p_normal(z: float, alternative: str) -> float:
    from prereg.stats.proportions import normal_p_value

    return normal_p_value(z, alternative)


def _categories(categories) -> list[int]:
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
        raise MethodError(f"categories must be a list of integer codes, got {categories!r}")
    out = []
    for i, c in enumerate(categories):
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
            raise MethodError(f"categories[{i}] must be an integer code, got {c!r}")
        out.append(int(c))
    if len(set(out)) != len(out):
        raise MethodError("categories must be distinct")
    if not out:
        raise MethodError("categories must list at least one code")
    return out


def _codes(values, name: str) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1:
        raise MethodError(f"{name} must be a 1-d array of category codes")
    if a.dtype.kind == "b":
        raise MethodError(f"{name} must hold integer category codes, not booleans")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.round(a))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise MethodError(f"{name}[{i}] is {a[i].item()!r}, not an integer category code")
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iu" and a.size:
        raise MethodError(f"{name} must hold integer category codes")
    return a.astype(np.int64)


def _two_raters(a, b, categories) -> tuple[list[int], np.ndarray]:
    """(categories, k x k table of counts, rows rater a, columns rater b)."""
    cats = _categories(categories)
    aa, bb = _codes(a, "a"), _codes(b, "b")
    if aa.size != bb.size:
        raise MethodError(f"a and b differ in length ({aa.size} vs {bb.size})")
    k = len(cats)
    order = np.argsort(np.array(cats, dtype=np.int64), kind="stable")
    sorted_cats = np.array(cats, dtype=np.int64)[order]
    positions = []
    for name, arr in (("a", aa), ("b", bb)):
        at = np.clip(np.searchsorted(sorted_cats, arr), 0, k - 1)
        unknown = sorted_cats[at] != arr
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise MethodError(
                f"{name}[{i}] is {int(arr[i])}, not one of the registered categories {cats}"
            )
        positions.append(order[at])
    ia, ib = positions
    table = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k)
    return cats, table


def _ratings(x, *, complete: bool, name: str = "x") -> np.ndarray:
    try:
        a = np.array(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise MethodError(f"{name} must be a 2-d array of numbers (NaN = missing): {e}") from None
    if a.ndim != 2:
        raise MethodError(f"{name} must be a 2-d array, one row per unit, one column per rater")
    if np.isinf(a).any():
        i, j = np.argwhere(np.isinf(a))[0]
        raise MethodError(f"{name}[{i}][{j}] is infinite")
    if complete and np.isnan(a).any():
        i, j = np.argwhere(np.isnan(a))[0]
        raise MethodError(
            f"{name}[{i}][{j}] is missing; this method needs every unit rated by every rater"
        )
    return a


def _sqrt(v: Fraction | float) -> float | None:
    return math.sqrt(v) if v >= 0 else None


# ---------------------------------------------------------------------------------------------
# Cohen's kappa


def _agreement_weights(k: int, weights: str) -> list[list[Fraction]]:
    if weights == "none":
        return [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    if k < 2:
        raise MethodError("weighted kappa needs at least two registered categories")
    if weights == "linear":
        return [[1 - Fraction(abs(i - j), k - 1) for j in range(k)] for i in range(k)]
    return [[1 - Fraction((i - j) ** 2, (k - 1) ** 2) for j in range(k)] for i in range(k)]


def cohens_kappa(a, b, *, categories, weights, level, alternative) -> Result:
    """Cohen's kappa (unweighted, or weighted by category position) of two raters.

    ``se`` is the Fleiss–Cohen–Everitt (1969) large-sample standard error, used for the Wald
    interval ``kappa ± z·se``; ``extra["se_null"]`` is their standard error under kappa = 0,
    used for the z test against 0 (``statistic = kappa / se_null``).
    """
    _choice(weights, KAPPA_WEIGHTS, "weights")
    _choice(alternative, ALTERNATIVES, "alternative")
    lv = _level(level)
    cats, table = _two_raters(a, b, categories)
    k = len(cats)
    n = int(table.sum())
    w = _agreement_weights(k, weights)
    counts = {"n": n, "table": table.tolist()}
    if n == 0:
        return Result(method="cohens-kappa", counts=counts)
    p = [[Fraction(int(table[i, j]), n) for j in range(k)] for i in range(k)]
    row = [sum(p[i]) for i in range(k)]
    col = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(w[i][j] * p[i][j] for i in range(k) for j in range(k))
    pe = sum(w[i][j] * row[i] * col[j] for i in range(k) for j in range(k))
    exact = {"observed_agreement": po, "expected_agreement": pe}
    if pe == 1:
        return Result(method="cohens-kappa", exact=exact, counts=counts)
    kappa = (po - pe) / (1 - pe)
    exact["estimate"] = kappa
    w_row = [sum(col[j] * w[i][j] for j in range(k)) for i in range(k)]  # w̄_i.
    w_col = [sum(row[i] * w[i][j] for i in range(k)) for j in range(k)]  # w̄_.j
    denom = n * (1 - pe) ** 2
    var = (
        sum(
            p[i][j] * (w[i][j] - (w_row[i] + w_col[j]) * (1 - kappa)) ** 2
            for i in range(k)
            for j in range(k)
        )
        - (kappa - pe * (1 - kappa)) ** 2
    ) / denom
    var0 = (
        sum(
            row[i] * col[j] * (w[i][j] - (w_row[i] + w_col[j])) ** 2
            for i in range(k)
            for j in range(k)
        )
        - pe**2
    ) / denom
    se = _sqrt(var)
    se0 = _sqrt(var0) if var0 > 0 else None
    z = float(kappa) / se0 if se0 else None
    if z is not None and isinstance(var0, Fraction):  # z² exactly: a threshold on z by its root
        exact["statistic_squared"] = kappa * kappa / var0
    if se is not None and isinstance(var, Fraction):  # se² exactly: a threshold on se by its root
        exact["se_squared"] = var
    lower = upper = None
    if se is not None:
        zc = _critical(lv)
        lower, upper = float(kappa) - zc * se, float(kappa) + zc * se
    return Result(
        method="cohens-kappa",
        estimate=kappa,
        se=se,
        statistic=z,
        statistic_name="z" if z is not None else None,
        lower=lower,
        upper=upper,
        p=_p_normal(z, alternative) if z is not None else None,
        exact=exact,
        counts=counts,
        extra={"se_null": se0, "variance": float(var), "variance_null": float(var0)},
    )


# ---------------------------------------------------------------------------------------------
# raw agreement


def percent_agreement(a, b, *, categories) -> Result:
    """The share of units on which the two raters gave the same code (an exact fraction)."""
    cats, table = _two_raters(a, b, categories)
    n = int(table.sum())
    agree = int(np.trace(table))
    counts = {"agree": agree, "n": n}
    if n == 0:
        return Result(method="percent-agreement", counts=counts)
    share = Fraction(agree, n)
    return Result(
        method="percent-agreement", estimate=share, exact={"estimate": share}, counts=counts
    )


# ---------------------------------------------------------------------------------------------
# Gwet's AC1


def gwet_ac1(a, b, *, categories, level) -> Result:
    """Gwet's first-order agreement coefficient AC1 of two raters, with Gwet's (2008)
    large-sample standard error and the Wald interval ``AC1 ± z·se``."""
    lv = _level(level)
    cats, table = _two_raters(a, b, categories)
    q = len(cats)
    if q < 2:
        raise MethodError("Gwet's AC1 needs at least two registered categories")
    n = int(table.sum())
    counts = {"n": n, "categories": q, "table": table.tolist()}
    if n == 0:
        return Result(method="gwet-ac1", counts=counts)
    p = [[Fraction(int(table[i, j]), n) for j in range(q)] for i in range(q)]
    row = [sum(p[i]) for i in range(q)]
    col = [sum(p[i][j] for i in range(q)) for j in range(q)]
    pi = [(row[i] + col[i]) / 2 for i in range(q)]
    pa = sum(p[i][i] for i in range(q))
    pe = sum(x * (1 - x) for x in pi) / (q - 1)
    exact = {"observed_agreement": pa, "expected_agreement": pe}
    if pe == 1:  # impossible for q >= 2 (pe <= 1/q · ... < 1), kept for safety
        return Result(method="gwet-ac1", exact=exact, counts=counts)
    g = (pa - pe) / (1 - pe)
    exact["estimate"] = g
    cross = sum(p[i][i] * (1 - pi[i]) for i in range(q)) / (q - 1)
    square = (
        sum(p[i][j] * (1 - (pi[i] + pi[j]) / 2) ** 2 for i in range(q) for j in range(q))
        / (q - 1) ** 2
    )
    var = (
        pa * (1 - pa) - 4 * (1 - g) * (cross - pa * pe) + 4 * (1 - g) ** 2 * (square - pe**2)
    ) / (n * (1 - pe) ** 2)
    se = _sqrt(var)
    if se is not None and isinstance(var, Fraction):  # se² exactly: a threshold on se by its root
        exact["se_squared"] = var
    lower = upper = None
    if se is not None:
        zc = _critical(lv)
        lower, upper = float(g) - zc * se, float(g) + zc * se
    return Result(
        method="gwet-ac1",
        estimate=g,
        se=se,
        lower=lower,
        upper=upper,
        exact=exact,
        counts=counts,
        extra={"variance": float(var)},
    )


# ---------------------------------------------------------------------------------------------
# Fleiss' kappa


def fleiss_kappa(x, *, categories, alternative) -> Result:
    """Fleiss' (1971) kappa of units each rated by the same number of raters, with the
    standard error under kappa = 0 of Fleiss, Nee & Landis (1979) for the z test against 0."""
    _choice(alternative, ALTERNATIVES, "alternative")
    cats = _categories(categories)
    a = _ratings(x, complete=True)
    units, raters = a.shape
    q = len(cats)
    order = np.argsort(np.array(cats, dtype=np.float64), kind="stable")
    sorted_cats = np.array(cats, dtype=np.float64)[order]
    at = np.clip(np.searchsorted(sorted_cats, a), 0, q - 1)
    unknown = sorted_cats[at] != a
    if unknown.any():
        i, j = np.argwhere(unknown)[0]
        raise MethodError(
            f"x[{i}][{j}] is {float(a[i, j])!r}, not one of the registered categories {cats}"
        )
    position = order[at]
    nij = np.zeros((units, q), dtype=np.int64)
    np.add.at(nij, (np.repeat(np.arange(units), raters), position.ravel()), 1)
    counts = {"units": units, "raters": raters, "category_totals": nij.sum(axis=0).tolist()}
    if units == 0 or raters < 2:
        if raters < 2 and units:
            raise MethodError("Fleiss' kappa needs at least two ratings per unit")
        return Result(method="fleiss-kappa", counts=counts)
    m = raters
    total = units * m
    pj = [Fraction(int(t), total) for t in nij.sum(axis=0).tolist()]
    agree_sum = int((nij * nij).sum()) - total  # Σ_i (Σ_j n_ij² − m)
    p_bar = Fraction(agree_sum, units * m * (m - 1))
    pe = sum(v * v for v in pj)
    exact = {"observed_agreement": p_bar, "expected_agreement": pe}
    if pe == 1:
        return Result(method="fleiss-kappa", exact=exact, counts=counts)
    kappa = (p_bar - pe) / (1 - pe)
    exact["estimate"] = kappa
    pq = sum(v * (1 - v) for v in pj)
    var0 = (
        Fraction(2, units * m * (m - 1))
        * (pq**2 - sum(v * (1 - v) * ((1 - v) - v) for v in pj))
        / pq**2
    )
    se0 = _sqrt(var0) if var0 > 0 else None
    z = float(kappa) / se0 if se0 else None
    if z is not None and isinstance(var0, Fraction):  # z² exactly: a threshold on z by its root
        exact["statistic_squared"] = kappa * kappa / var0
    return Result(
        method="fleiss-kappa",
        estimate=kappa,
        statistic=z,
        statistic_name="z" if z is not None else None,
        p=_p_normal(z, alternative) if z is not None else None,
        exact=exact,
        counts=counts,
        extra={"se_null": se0},
    )


# ---------------------------------------------------------------------------------------------
# Krippendorff's alpha


def _delta2(level: str, values: list[Fraction], totals: list[Fraction]):
    """The squared difference function δ²(c, k) over the sorted distinct values."""
    v = len(values)
    if level == "nominal":
        return [[Fraction(int(i != j)) for j in range(v)] for i in range(v)]
    if level == "interval":
        return [[(values[i] - values[j]) ** 2 for j in range(v)] for i in range(v)]
    if level == "ratio":
        out = []
        for i in range(v):
            r = []
            for j in range(v):
                s = values[i] + values[j]
                r.append(Fraction(0) if s == 0 else ((values[i] - values[j]) / s) ** 2)
            out.append(r)
        return out
    # ordinal: (Σ_{g=c}^{k} n_g − (n_c + n_k)/2)², the values ranked by their order
    cum = [Fraction(0)]
    for t in totals:
        cum.append(cum[-1] + t)
    out = []
    for i in range(v):
        r = []
        for j in range(v):
            lo, hi = min(i, j), max(i, j)
            r.append((cum[hi + 1] - cum[lo] - (totals[i] + totals[j]) / 2) ** 2)
        out.append(r)
    return out


def krippendorff_alpha(x, *, level_of_measurement) -> Result:
    """Krippendorff's alpha of a units-by-raters table with missing ratings (NaN).

    Units with fewer than two ratings are not pairable and are left out, as Krippendorff
    prescribes; ``counts`` says how many.
    """
    level = _choice(level_of_measurement, KRIPPENDORFF_LEVELS, "level_of_measurement")
    a = _ratings(x, complete=False)
    if level == "ratio" and (a[~np.isnan(a)] < 0).any():
        raise MethodError("ratio-level alpha needs non-negative values")
    present = ~np.isnan(a)
    m_u = present.sum(axis=1)
    pairable = m_u >= 2
    values_sorted = sorted(set(a[present & pairable[:, None]].tolist()))
    values = [Fraction(repr(float(v))) for v in values_sorted]  # the decimals the data write
    nv = len(values)
    # coincidences: per number of ratings m, the integer pair counts Σ_u n_uc·n_uk (minus n_uc
    # on the diagonal: ordered pairs of distinct ratings), then divided by m − 1
    o = [[Fraction(0)] * nv for _ in range(nv)]
    codes = np.searchsorted(
        np.array(values_sorted), np.where(present, a, values_sorted[0] if nv else 0)
    )
    for m in sorted(set(m_u[pairable].tolist())):
        units = np.flatnonzero(m_u == m)
        counts_um = np.zeros((units.size, nv), dtype=np.int64)
        for j in range(a.shape[1]):
            rated = present[units, j]
            np.add.at(counts_um, (np.flatnonzero(rated), codes[units[rated], j]), 1)
        pairs = counts_um.T @ counts_um - np.diag(counts_um.sum(axis=0))
        for c in range(nv):
            for k_ in range(nv):
                if pairs[c, k_]:
                    o[c][k_] += Fraction(int(pairs[c, k_]), m - 1)
    totals = [sum(r) for r in o]
    n = int(m_u[pairable].sum())
    counts = {
        "units": int(a.shape[0]),
        "pairable_units": int(pairable.sum()),
        "pairable_values": n,
        "values": nv,
    }
    if n < 2:
        return Result(method="krippendorff-alpha", counts=counts)
    d2 = _delta2(level, values, totals)
    observed = sum(o[c][k_] * d2[c][k_] for c in range(nv) for k_ in range(nv)) / n
    expected = sum(totals[c] * totals[k_] * d2[c][k_] for c in range(nv) for k_ in range(nv)) / (
        n * (n - 1)
    )
    extra = {"observed_disagreement": float(observed), "expected_disagreement": float(expected)}
    if expected == 0:
        return Result(method="krippendorff-alpha", counts=counts, extra=extra)
    alpha = 1 - observed / expected
    return Result(
        method="krippendorff-alpha",
        estimate=alpha,
        exact={
            "estimate": alpha,
            "observed_disagreement": observed,
            "expected_disagreement": expected,
        },
        counts=counts,
        extra=extra,
    )


# ---------------------------------------------------------------------------------------------
# bootstrap intervals of Fleiss' kappa and Krippendorff's alpha, resampling units

BOOTSTRAP_INTERVALS = ("percentile", "basic")


def _fleiss_table(x, categories) -> tuple[np.ndarray, int]:
    """(n_ij, m): the units-by-categories counts of a complete ratings table."""
    cats = _categories(categories)
    a = _ratings(x, complete=True)
    units, raters = a.shape
    order = np.argsort(np.array(cats, dtype=np.float64), kind="stable")
    sorted_cats = np.array(cats, dtype=np.float64)[order]
    at = np.clip(np.searchsorted(sorted_cats, a), 0, len(cats) - 1)
    nij = np.zeros((units, len(cats)), dtype=np.int64)
    np.add.at(nij, (np.repeat(np.arange(units), raters), order[at].ravel()), 1)
    return nij, raters


def _kappa_of_sums(sums: np.ndarray, units: int, m: int) -> np.ndarray:
    """Fleiss' kappa of each resample from its sums of the units' (n_i1..n_iq, Σ_j n_ij² − m)."""
    pj = sums[:, :-1] / (units * m)
    p_bar = sums[:, -1] / (units * m * (m - 1))
    pe = (pj * pj).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (p_bar - pe) / (1.0 - pe)
    out[pe >= 1.0] = np.nan
    return out


def _alpha_of_sums(sums: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha of each resample from its summed coincidence matrix (flattened)."""
    v = values.size
    o = sums.reshape(-1, v, v)
    nc = o.sum(axis=2)  # (B, v)
    n = nc.sum(axis=1)
    if level == "nominal":
        d2 = np.broadcast_to(1.0 - np.eye(v), o.shape)
    elif level == "interval":
        d2 = np.broadcast_to((values[:, None] - values[None, :]) ** 2, o.shape)
    elif level == "ratio":
        s = values[:, None] + values[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(s == 0, 0.0, ((values[:, None] - values[None, :]) / s) ** 2)
        d2 = np.broadcast_to(r, o.shape)
    else:  # ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)² from each resample's totals
        cum = np.concatenate([np.zeros((nc.shape[0], 1)), np.cumsum(nc, axis=1)], axis=1)
        i, j = np.meshgrid(np.arange(v), np.arange(v), indexing="ij")
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        d2 = (cum[:, hi + 1] - cum[:, lo] - (nc[:, i] + nc[:, j]) / 2.0) ** 2
    observed = (o * d2).sum(axis=(1, 2))
    expected = np.einsum("bc,bk,bck->b", nc, nc, d2) / np.maximum(n - 1.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - observed / expected
    out[(expected <= 0) | (n < 2)] = np.nan
    return out


def _unit_bootstrap(
    name, base: Result, per_unit, statistic, *, interval, level, resamples, seed, quantile_method
) -> Result:
    """``base`` (the statistic of the data) with a bootstrap interval over its units: the
    units resampled with replacement, ``rng.integers(0, N, size=(B, N))`` from
    Generator(PCG64(seed)) (the draws of scipy.stats.bootstrap with that generator), each
    resample's statistic from the sums of its units' sufficient statistics; resamples whose
    statistic is undefined are left out, and the interval is missing when fewer than half
    remain."""
    from prereg.stats.resampling_methods import QUANTILE_METHODS, _count

    interval = _choice(interval, BOOTSTRAP_INTERVALS, "interval")
    level = _level(level)
    resamples = _count("resamples", resamples, 1)
    seed = _count("seed", seed, 0)
    quantile_method = _choice(quantile_method, QUANTILE_METHODS, "quantile_method")
    counts = dict(base.counts or {})
    units = per_unit.shape[0]
    estimate = base.estimate
    fields = {k: getattr(base, k) for k in ("exact", "extra")}
    if estimate is None or units == 0:
        return Result(method=name, estimate=estimate, counts=counts, **fields)
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = rng.integers(0, units, size=(resamples, units))
    reps = np.empty(resamples)
    step = max(1, 2**20 // units)
    for start in range(0, resamples, step):
        block = draws[start : start + step]
        flat = (block + units * np.arange(block.shape[0])[:, None]).ravel()
        weights = np.bincount(flat, minlength=block.shape[0] * units).reshape(-1, units)
        reps[start : start + block.shape[0]] = statistic(weights.astype(np.float64) @ per_unit)
    kept = reps[np.isfinite(reps)]
    extra = dict(base.extra or {})
    extra.update(resamples_used=int(kept.size), resamples_undefined=int(resamples - kept.size))
    lower = upper = se = None
    if kept.size >= max(1, (resamples + 1) // 2):
        a = 1.0 - level
        lo_q, hi_q = (
            float(v) for v in np.quantile(kept, [a / 2.0, 1.0 - a / 2.0], method=quantile_method)
        )
        theta = float(estimate)
        lower, upper = (
            (lo_q, hi_q) if interval == "percentile" else (2 * theta - hi_q, 2 * theta - lo_q)
        )
        se = float(np.std(kept, ddof=1)) if kept.size > 1 else None
    return Result(
        method=name,
        estimate=estimate,
        se=se,
        lower=lower,
        upper=upper,
        exact=base.exact,
        counts=counts,
        extra=extra,
    )


def fleiss_kappa_bootstrap(
    x, *, categories, interval, level, resamples, seed, quantile_method
) -> Result:
    """Fleiss' kappa (exact, as :func:`fleiss_kappa`) with a bootstrap interval resampling
    units (Zapf et al. 2016): each resample's kappa from its units' category counts."""
    base = fleiss_kappa(x, categories=categories, alternative="two-sided")
    base = Result(
        method="fleiss-kappa-bootstrap",
        estimate=base.estimate,
        exact=base.exact,
        counts=base.counts,
    )
    if base.estimate is None:
        return base
    nij, m = _fleiss_table(x, categories)
    per_unit = np.concatenate([nij, ((nij * nij).sum(axis=1) - m)[:, None]], axis=1).astype(
        np.float64
    )
    units = nij.shape[0]
    return _unit_bootstrap(
        "fleiss-kappa-bootstrap",
        base,
        per_unit,
        lambda s: _kappa_of_sums(s, units, m),
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
        quantile_method=quantile_method,
    )


def krippendorff_alpha_bootstrap(
    x, *, level_of_measurement, interval, level, resamples, seed, quantile_method
) -> Result:
    """Krippendorff's alpha (exact, as :func:`krippendorff_alpha`) with a bootstrap interval
    resampling units (every unit, the unpairable ones adding nothing): each resample's alpha
    from the sum of its units' coincidence matrices."""
    base = krippendorff_alpha(x, level_of_measurement=level_of_measurement)
    base = Result(
        method="krippendorff-alpha-bootstrap",
        estimate=base.estimate,
        exact=base.exact,
        counts=base.counts,
        extra=base.extra,
    )
    if base.estimate is None:
        return base
    a = _ratings(x, complete=False)
    present = ~np.isnan(a)
    m_u = present.sum(axis=1)
    values = np.array(sorted(set(a[present].tolist())), dtype=np.float64)
    v = values.size
    codes = np.searchsorted(values, np.where(present, a, values[0]))
    counts_u = np.zeros((a.shape[0], v))
    for j in range(a.shape[1]):
        rated = np.flatnonzero(present[:, j])
        np.add.at(counts_u, (rated, codes[rated, j]), 1.0)
    pairs = counts_u[:, :, None] * counts_u[:, None, :]
    pairs[:, np.arange(v), np.arange(v)] -= counts_u
    scale = np.where(m_u >= 2, 1.0 / np.maximum(m_u - 1, 1), 0.0)
    per_unit = (pairs * scale[:, None, None]).reshape(a.shape[0], v * v)
    level_name = _choice(level_of_measurement, KRIPPENDORFF_LEVELS, "level_of_measurement")
    return _unit_bootstrap(
        "krippendorff-alpha-bootstrap",
        base,
        per_unit,
        lambda s: _alpha_of_sums(s, values, level_name),
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
        quantile_method=quantile_method,
    )


# ---------------------------------------------------------------------------------------------
# intraclass correlation


def _decimal_scaled(a: np.ndarray) -> tuple[list[int], Fraction]:
    """``(numerators, scale)`` with each rating the decimal the data write (its shortest
    repr: 0.1 is 1/10, not the binary float's value) equal to its numerator times ``scale``."""
    from math import lcm

    values = a.reshape(-1).tolist()
    decimal = {v: Fraction(repr(float(v))) for v in set(values)}
    den = lcm(*(f.denominator for f in decimal.values())) if decimal else 1
    whole = {v: f.numerator * (den // f.denominator) for v, f in decimal.items()}
    return [whole[v] for v in values], Fraction(1, den)


def _mean_squares(a: np.ndarray) -> dict[str, Fraction]:
    """BMS, WMS, JMS and EMS of a complete n x k table, in exact arithmetic over the decimals
    the ratings write (ratings of 0.5 and 0.3 are 5 and 3 tenths: the ICC is scale-free, so
    it is the same fraction as of 5 and 3)."""
    n, k = a.shape
    nums, scale = _decimal_scaled(a)
    grid = [nums[i * k : (i + 1) * k] for i in range(n)]
    total = sum(nums)
    row_sums = [sum(r) for r in grid]
    col_sums = [sum(grid[i][j] for i in range(n)) for j in range(k)]
    correction = Fraction(total * total, n * k)
    ss_total = (sum(v * v for v in nums) - correction) * scale**2
    ss_rows = (Fraction(sum(s * s for s in row_sums), k) - correction) * scale**2
    ss_cols = (Fraction(sum(s * s for s in col_sums), n) - correction) * scale**2
    return {
        "BMS": ss_rows / (n - 1),
        "WMS": (ss_total - ss_rows) / (n * (k - 1)),
        "JMS": ss_cols / (k - 1),
        "EMS": (ss_total - ss_rows - ss_cols) / ((n - 1) * (k - 1)),
    }


def _f_quantile(prob: float, d1: float, d2: float) -> float:
    from scipy.stats import f

    return float(f.ppf(prob, d1, d2))


def _f_sf(x: float, d1: float, d2: float) -> float:
    from scipy.stats import f

    return float(f.sf(x, d1, d2))


def intraclass_correlation(x, *, form, level) -> Result:
    """An intraclass correlation of Shrout & Fleiss (1979) with its F test of ICC = 0
    (one-sided, ICC > 0) and its F-based interval at ``level``."""
    form = _choice(form, ICC_FORMS, "form")
    lv = _level(level)
    a = _ratings(x, complete=True)
    n, k = a.shape
    counts = {"targets": n, "raters": k}
    if n < 2 or k < 2:
        raise MethodError(
            f"an intraclass correlation needs at least 2 targets and 2 raters, got {n} x {k}"
        )
    ms = _mean_squares(a)
    bms, wms, jms, ems = ms["BMS"], ms["WMS"], ms["JMS"], ms["EMS"]
    model, average = form[4], form.endswith("k")
    if model == "1":
        num, err, df_err = bms - wms, wms, n * (k - 1)
        den = bms if average else bms + (k - 1) * wms
    elif model == "2":
        num, err, df_err = bms - ems, ems, (n - 1) * (k - 1)
        den = bms + (jms - ems) / n if average else bms + (k - 1) * ems + k * (jms - ems) / n
    else:
        num, err, df_err = bms - ems, ems, (n - 1) * (k - 1)
        den = bms if average else bms + (k - 1) * ems
    exact = {name: value for name, value in ms.items()}
    extra = {name: float(value) for name, value in ms.items()}
    if den == 0:
        return Result(method="intraclass-correlation", exact=exact, counts=counts, extra=extra)
    icc = num / den
    exact["estimate"] = icc
    df1 = n - 1
    if err == 0:
        return Result(
            method="intraclass-correlation",
            estimate=icc,
            exact=exact,
            counts=counts,
            extra=extra,
        )
    f_obs = bms / err
    exact["statistic"] = f_obs
    ff = float(f_obs)
    p = _f_sf(ff, df1, df_err)
    tail = (1 + lv) / 2
    if model in "13":
        f_lo = ff / _f_quantile(tail, df1, df_err)
        f_hi = ff * _f_quantile(tail, df_err, df1)
        if average:
            lower, upper = 1 - 1 / f_lo, 1 - 1 / f_hi
        else:
            lower, upper = (f_lo - 1) / (f_lo + k - 1), (f_hi - 1) / (f_hi + k - 1)
    else:
        # Satterthwaite degrees of freedom of Shrout & Fleiss (1979), eq. for ICC(2,1), used
        # for ICC(2,k) as McGraw & Wong (1996) do.
        r = float((bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n))
        fj = float(jms / ems)
        bf, ef, jf = float(bms), float(ems), float(jms)
        v = ((k - 1) * (n - 1) * (k * r * fj + n * (1 + (k - 1) * r) - k * r) ** 2) / (
            (n - 1) * k * k * r * r * fj * fj + (n * (1 + (k - 1) * r) - k * r) ** 2
        )
        f_star = _f_quantile(tail, df1, v)
        f_2star = _f_quantile(tail, v, df1)
        extra["satterthwaite_df"] = v
        if average:
            lower = n * (bf - f_star * ef) / (f_star * (jf - ef) + n * bf)
            upper = n * (f_2star * bf - ef) / (jf - ef + n * f_2star * bf)
        else:
            c = k * jf + (k * n - k - n) * ef
            lower = n * (bf - f_star * ef) / (f_star * c + n * bf)
            upper = n * (f_2star * bf - ef) / (c + n * f_2star * bf)
    return Result(
        method="intraclass-correlation",
        estimate=icc,
        statistic=ff,
        statistic_name="F",
        df=(float(df1), float(df_err)),
        lower=lower,
        upper=upper,
        p=p,
        exact=exact,
        counts=counts,
        extra=extra,
    )


# ---------------------------------------------------------------------------------------------

_FAMILY = "agreement"
_MOD = "prereg.stats.agreement"

_UNIT_BOOTSTRAP_OPTIONS = {
    "interval": "percentile | basic",
    "level": "the interval's level, in (0, 1) (a one-sided bound at 1 − α: level 1 − 2α)",
    "resamples": "the number of bootstrap resamples B (at least 1)",
    "seed": "the PCG64 seed (a whole number, at least 0)",
    "quantile_method": "numpy.quantile's method (linear, inverted_cdf, hazen, weibull, "
    "median_unbiased, normal_unbiased, ...)",
}

CATALOGUE = (
    Entry(
        name="cohens-kappa",
        family=_FAMILY,
        function=f"{_MOD}:cohens_kappa",
        shape="two-raters",
        summary="Cohen's kappa of two raters, unweighted or weighted, with its z test and interval",
        options={
            "categories": "the list of integer category codes, in order (weights go by position)",
            "weights": "none | linear (1 - |i-j|/(k-1)) | quadratic (1 - (i-j)^2/(k-1)^2)",
            "level": "the interval's confidence level, in (0, 1)",
            "alternative": "two-sided | greater | less (kappa against 0)",
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p", "exact", "counts", "extra"),
        formula=(
            "With agreement weights w_ij (identity when unweighted), p_ij the table's shares, "
            "p_i. and p_.j its margins: p_o = Σ w_ij p_ij, p_e = Σ w_ij p_i. p_.j, "
            "κ = (p_o − p_e)/(1 − p_e). Fleiss, Cohen & Everitt (1969), with "
            "w̄_i. = Σ_j p_.j w_ij and w̄_.j = Σ_i p_i. w_ij: "
            "Var(κ) = [Σ p_ij (w_ij − (w̄_i. + w̄_.j)(1 − κ))² − (κ − p_e(1 − κ))²] / (n(1 − p_e)²) "
            "(`se`, for the interval κ ± z·se); "
            "Var₀(κ) = [Σ p_i. p_.j (w_ij − (w̄_i. + w̄_.j))² − p_e²] / (n(1 − p_e)²) "
            "(`extra.se_null`, for the test z = κ/se₀)."
        ),
        reference=(
            "Cohen J (1960), Educ Psychol Meas 20:37-46; Cohen J (1968), Psychol Bull 70:213-220; "
            "Fleiss JL, Cohen J, Everitt BS (1969), Large sample standard errors of kappa and "
            "weighted kappa, Psychol Bull 72:323-327"
        ),
        oracle=(
            "statsmodels.stats.inter_rater.cohens_kappa(table, wt=None|'linear'|'quadratic') "
            "with weights=None (positions 0..k-1): kappa, std_kappa (the non-null SE, for the "
            "interval), std_kappa0 (the null SE, for its z_value); its 'linear'/'quadratic' "
            "weights are disagreement weights, 1 - ours. sklearn.metrics.cohen_kappa_score("
            "labels=categories, weights=None|'linear'|'quadratic') for the estimate."
        ),
        exactness=(
            "κ, p_o and p_e are fractions of the counts, compared exactly; so is z² = κ²/Var₀(κ) "
            "(exact['statistic_squared']), and a threshold on z is decided by balls of its root; "
            "se² is a fraction too (exact['se_squared']), and a threshold on se is decided by "
            "balls of its root; P and the bounds are floats, each compared as the shortest "
            "decimal of its float"
        ),
    ),
    Entry(
        name="percent-agreement",
        family=_FAMILY,
        function=f"{_MOD}:percent_agreement",
        shape="two-raters",
        summary="The share of units on which two raters gave the same category",
        options={"categories": "the list of integer category codes a rating may take"},
        reports=("estimate", "exact", "counts"),
        formula="agree / n, with agree the number of units rated alike.",
        reference="e.g. Gwet KL (2014), Handbook of Inter-Rater Reliability, 4th ed., ch. 2",
        oracle="hand computation (counting equal pairs) in the tests",
        exactness="the estimate is the fraction agree/n, compared exactly",
    ),
    Entry(
        name="gwet-ac1",
        family=_FAMILY,
        function=f"{_MOD}:gwet_ac1",
        shape="two-raters",
        summary="Gwet's AC1 agreement coefficient of two raters with its large-sample interval",
        options={
            "categories": "the list of integer category codes (q = their number, used or not)",
            "level": "the interval's confidence level, in (0, 1)",
        },
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula=(
            "π_k = (p_k. + p_.k)/2, p_a = Σ p_kk, p_e = Σ π_k(1 − π_k)/(q − 1), "
            "γ = (p_a − p_e)/(1 − p_e). Var(γ) = [p_a(1 − p_a) − 4(1 − γ)(Σ p_kk(1 − π_k)/(q − 1) "
            "− p_a p_e) + 4(1 − γ)²(Σ_kl p_kl(1 − (π_k + π_l)/2)²/(q − 1)² − p_e²)] / "
            "(n(1 − p_e)²) (Gwet 2008, sampling fraction 0); interval γ ± z·se."
        ),
        reference=(
            "Gwet KL (2008), Computing inter-rater reliability and its variance in the presence "
            "of high agreement, Br J Math Stat Psychol 61:29-48"
        ),
        oracle=(
            "hand computation of the estimate; the variance against the delta-method variance "
            "of the multinomial shares, differentiated in exact rational arithmetic in the test"
        ),
        exactness="γ, p_a and p_e are fractions of the counts, compared exactly; se² is a "
        "fraction too (exact['se_squared']), and a threshold on se is decided by balls of its "
        "root; the bounds are floats, each compared as the shortest decimal of its float",
    ),
    Entry(
        name="fleiss-kappa",
        family=_FAMILY,
        function=f"{_MOD}:fleiss_kappa",
        shape="ratings",
        summary="Fleiss' kappa of units each rated by the same number of raters, tested against 0",
        options={
            "categories": "the list of integer category codes a rating may take",
            "alternative": "two-sided | greater | less (kappa against 0)",
        },
        reports=("estimate", "statistic", "p", "exact", "counts", "extra"),
        formula=(
            "n_ij: ratings of unit i in category j (m per unit, N units); "
            "P̄ = Σ_i (Σ_j n_ij² − m) / (N m (m − 1)), p_j = Σ_i n_ij/(N m), P̄_e = Σ p_j², "
            "κ = (P̄ − P̄_e)/(1 − P̄_e). Under κ = 0 (Fleiss, Nee & Landis 1979): "
            "Var₀ = 2/(N m (m − 1)) · [(Σ p_j q_j)² − Σ p_j q_j (q_j − p_j)] / (Σ p_j q_j)², "
            "q_j = 1 − p_j; z = κ/√Var₀."
        ),
        reference=(
            "Fleiss JL (1971), Measuring nominal scale agreement among many raters, Psychol "
            "Bull 76:378-382; Fleiss JL, Nee JCM, Landis JR (1979), Psychol Bull 86:974-977"
        ),
        oracle=(
            "statsmodels.stats.inter_rater.fleiss_kappa(table, method='fleiss') for the "
            "estimate (it needs the units-by-categories count table, from aggregate_raters); "
            "the null variance by hand in the tests; the published 10-unit, 14-rater example "
            "(κ = 0.210)"
        ),
        exactness="κ, P̄ and P̄_e are fractions of the counts, compared exactly; z² is a "
        "fraction too (exact['statistic_squared']) and a threshold on z is decided by balls of "
        "its root; P is a float",
    ),
    Entry(
        name="krippendorff-alpha",
        family=_FAMILY,
        function=f"{_MOD}:krippendorff_alpha",
        shape="ratings",
        summary="Krippendorff's alpha for any number of raters with missing ratings",
        options={"level_of_measurement": "nominal | ordinal | interval | ratio"},
        reports=("estimate", "exact", "counts", "extra"),
        formula=(
            "Coincidences o_ck = Σ_u (number of ordered pairs (c, k) of ratings in unit u) / "
            "(m_u − 1) over units with m_u ≥ 2 ratings; n_c = Σ_k o_ck, n = Σ n_c; "
            "α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck with δ² nominal [c ≠ k], "
            "ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)², interval (c − k)², "
            "ratio ((c − k)/(c + k))²."
        ),
        reference=(
            "Krippendorff K (2011), Computing Krippendorff's Alpha-Reliability, Annenberg "
            "School for Communication, University of Pennsylvania; Krippendorff K (2004), "
            "Content Analysis, 2nd ed., ch. 11"
        ),
        oracle=(
            "the published worked examples of Krippendorff (2011): the 4-observer, 12-unit "
            "reliability data with missing values (α nominal 0.743, ordinal 0.815, interval "
            "0.849, ratio 0.797) and the 2-observer binary data (α 0.095); no library oracle"
        ),
        exactness=(
            "α is a fraction of the ratings read as the decimals the data write (interval or "
            "ratio ratings in tenths give the α of the whole numbers they scale), compared "
            "exactly"
        ),
    ),
    Entry(
        name="fleiss-kappa-bootstrap",
        family=_FAMILY,
        function=f"{_MOD}:fleiss_kappa_bootstrap",
        shape="ratings",
        summary="Fleiss' kappa with a bootstrap interval resampling units (a lower bound to decide on)",
        options={
            "categories": "the list of integer category codes a rating may take",
            **_UNIT_BOOTSTRAP_OPTIONS,
        },
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula=(
            "κ as fleiss-kappa; rng = Generator(PCG64(seed)), I = rng.integers(0, N, size=(B, N)) "
            "over the units in row order; κ*_r the kappa of the units I_r (from the sums of their "
            "n_ij and Σ_j n_ij² − m); SE = sd(κ*) (ddof 1); percentile [q(α/2), q(1 − α/2)], "
            "basic [2κ − q(1 − α/2), 2κ − q(α/2)], α = 1 − level, q numpy.quantile with "
            "quantile_method; a resample whose κ* is undefined (every rating alike) is left out "
            "(extra.resamples_undefined), and the interval is missing when fewer than half remain"
        ),
        reference=(
            "Fleiss JL (1971), Psychol Bull 76:378-382; Zapf A, Castell S, Morawietz L, Karch A "
            "(2016), Measuring inter-rater reliability for nominal data - which coefficients and "
            "confidence intervals are appropriate? BMC Med Res Methodol 16:93 (the bootstrap "
            "over subjects); Efron B, Tibshirani RJ (1993), An Introduction to the Bootstrap"
        ),
        oracle=(
            "scipy.stats.bootstrap((arange(N),), statistic, method='percentile' | 'basic', "
            "n_resamples=B, rng=Generator(PCG64(seed)), vectorized=False), which draws the same "
            "units, with the statistic statsmodels' fleiss_kappa(aggregate_raters(x[units]))"
        ),
        exactness=(
            "κ is a fraction of the counts, compared exactly; the bounds and SE are floating "
            "point quantiles of the replicates, compared as the shortest decimal of its float"
        ),
    ),
    Entry(
        name="krippendorff-alpha-bootstrap",
        family=_FAMILY,
        function=f"{_MOD}:krippendorff_alpha_bootstrap",
        shape="ratings",
        summary="Krippendorff's alpha with a bootstrap interval resampling units (a lower bound to decide on)",
        options={
            "level_of_measurement": "nominal | ordinal | interval | ratio",
            **_UNIT_BOOTSTRAP_OPTIONS,
        },
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula=(
            "α as krippendorff-alpha; rng = Generator(PCG64(seed)), I = rng.integers(0, N, "
            "size=(B, N)) over every unit in row order (a unit with fewer than two ratings adds "
            "nothing); α*_r from the sum of the units' coincidence matrices (ordinal δ² from the "
            "resample's own totals); SE = sd(α*) (ddof 1); percentile or basic as "
            "fleiss-kappa-bootstrap; undefined resamples (no disagreement expected) left out"
        ),
        reference=(
            "Krippendorff K (2011), Computing Krippendorff's Alpha-Reliability; Zapf A et al. "
            "(2016), BMC Med Res Methodol 16:93 (the bootstrap over subjects)"
        ),
        oracle=(
            "scipy.stats.bootstrap((arange(N),), statistic, method='percentile' | 'basic', "
            "n_resamples=B, rng=Generator(PCG64(seed)), vectorized=False) with the statistic "
            "krippendorff-alpha of the resampled rows (itself checked on Krippendorff's "
            "published examples)"
        ),
        exactness=(
            "α is a fraction of the ratings, compared exactly; the bounds and SE are floating "
            "point quantiles of the replicates, compared as the shortest decimal of its float"
        ),
    ),
    Entry(
        name="intraclass-correlation",
        family=_FAMILY,
        function=f"{_MOD}:intraclass_correlation",
        shape="ratings",
        summary="Shrout-Fleiss intraclass correlation (single or k-rater average), F test, interval",
        options={
            "form": "icc-1-1 | icc-2-1 | icc-3-1 | icc-1-k | icc-2-k | icc-3-k (Shrout & Fleiss)",
            "level": "the interval's confidence level, in (0, 1)",
        },
        reports=("estimate", "statistic", "df", "lower", "upper", "p", "exact", "counts", "extra"),
        formula=(
            "From the two-way ANOVA of n targets by k raters (BMS between targets, WMS within, "
            "JMS between raters, EMS residual): ICC(1,1) = (BMS − WMS)/(BMS + (k − 1)WMS); "
            "ICC(2,1) = (BMS − EMS)/(BMS + (k − 1)EMS + k(JMS − EMS)/n); "
            "ICC(3,1) = (BMS − EMS)/(BMS + (k − 1)EMS); ICC(1,k) = (BMS − WMS)/BMS; "
            "ICC(2,k) = (BMS − EMS)/(BMS + (JMS − EMS)/n); ICC(3,k) = (BMS − EMS)/BMS. "
            "Test of ICC = 0 (one-sided): F = BMS/WMS on (n − 1, n(k − 1)) df for form 1, "
            "BMS/EMS on (n − 1, (n − 1)(k − 1)) for forms 2 and 3. Intervals: the F intervals "
            "of Shrout & Fleiss (1979) and McGraw & Wong (1996) (form 2 with Satterthwaite df)."
        ),
        reference=(
            "Shrout PE, Fleiss JL (1979), Intraclass correlations: uses in assessing rater "
            "reliability, Psychol Bull 86:420-428; McGraw KO, Wong SP (1996), Psychol Methods "
            "1:30-46"
        ),
        oracle=(
            "the published example of Shrout & Fleiss (1979, Table 2: 6 targets x 4 judges; "
            "Table 4: ICC(1,1) .17, (2,1) .29, (3,1) .71, (1,4) .44, (2,4) .62, (3,4) .91); the "
            "mean squares against statsmodels' ANOVA (anova_lm of an OLS fit); scipy.stats.f "
            "for the test and interval figures"
        ),
        exactness=(
            "the ICC and the mean squares are fractions of the ratings read as the decimals "
            "the data write (ratings of 0.1 steps give the ICC of the whole numbers they "
            "scale), compared exactly; P and the interval are floats"
        ),
    ),
)
