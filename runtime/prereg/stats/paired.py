"""Paired comparisons: binary outcomes of the same units under two conditions (the table of
pairs), binary outcomes under several conditions (blocks), and paired numbers.

Shapes (see :data:`prereg.stats.catalogue.SHAPES`):

- "paired-binary": ``n11, n10, n01, n00``, the pairs by (a, b) outcome; ``n10`` pairs where a
  met the condition and b did not.  The difference of paired proportions is
  ``p_a − p_b = (n10 − n01)/n``, exactly.
- "binary-blocks": ``x``, a 0/1 array with one row per unit and one column per condition.
- "paired-samples": ``x, y``, numbers with element i of both from unit i; the methods read the
  differences ``d = x − y`` (minus a margin where the method takes one).

"greater" means H1: a above b (``p_a − p_b > margin``, or differences above the margin);
"less" the reverse.  Every statistical choice is a required keyword argument; bad arguments
raise :class:`prereg.stats.methods.MethodError`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats.catalogue import Entry
from prereg.stats.continuous import T_STATISTIC_EXACT
from prereg.stats.methods import MethodError
from prereg.stats.result import Result
from prereg.stats.two_proportions import (
    _EPS,
    _alternative,
    _choice,
    _int,
    _level,
    _margin,
    chi2_sf,
    critical,
    normal_p,
)


def _pairs(n11, n10, n01, n00) -> tuple[int, int, int, int]:
    return (_int("n11", n11), _int("n10", n10), _int("n01", n01), _int("n00", n00))


def _pair_counts(a, b, c, d) -> dict:
    return {"n11": a, "n10": b, "n01": c, "n00": d}


def _paired_diff(a, b, c, d) -> Fraction | None:
    n = a + b + c + d
    return Fraction(b - c, n) if n else None


def _with_diff(a, b, c, d) -> tuple[Fraction | None, dict]:
    diff = _paired_diff(a, b, c, d)
    return diff, ({"estimate": diff} if diff is not None else {})


# -- McNemar -------------------------------------------------------------------------------------


def mcnemar_exact(n11, n10, n01, n00, *, alternative) -> Result:
    """McNemar's exact (conditional) test: n10 ~ Binomial(n10 + n01, ½) under the null."""
    from prereg.stats.samples import mcnemar_exact_figure

    a, b, c, d = _pairs(n11, n10, n01, n00)
    alt = _alternative(alternative)
    diff, exact = _with_diff(a, b, c, d)
    # a fraction of integer sums up to 2,000 discordant pairs (1 with none), else certified
    pe = mcnemar_exact_figure(a, b, c, d, alternative=alt)
    if isinstance(pe, Fraction):
        exact = {**exact, "p": pe}
    return Result(
        "mcnemar-exact",
        estimate=diff,
        statistic=b,
        statistic_name="n10",
        statistic_count=True,
        p=min(1.0, float(pe)),
        exact=exact,
        counts=_pair_counts(a, b, c, d),
    )


def mcnemar_mid_p(n11, n10, n01, n00, *, alternative) -> Result:
    """McNemar's mid-P test: the exact tail less half the probability of the observed n10."""
    from scipy.stats import binom

    from prereg.stats.samples import EXACT_SUM_LIMIT

    a, b, c, d = _pairs(n11, n10, n01, n00)
    alt = _alternative(alternative)
    diff, exact = _with_diff(a, b, c, d)
    m = b + c
    if m == 0:
        p = 1.0
        exact = {**exact, "p": Fraction(1)}
    elif m <= EXACT_SUM_LIMIT:  # the same sums in integers: a fraction of 2^(m+1)
        at = min(b, c) if alt == "two-sided" else b
        if alt == "greater":  # 2^m P(X > n10)
            tail = sum(math.comb(m, j) for j in range(b + 1, m + 1))
        else:  # 2^m P(X < at)
            tail = sum(math.comb(m, j) for j in range(at))
        pe = Fraction(2 * tail + math.comb(m, at), 2 ** (m + 1))
        pe = min(Fraction(1), 2 * pe if alt == "two-sided" else pe)
        exact = {**exact, "p": pe}
        p = float(pe)
    else:
        half = 0.5 * float(binom.pmf(b, m, 0.5))
        if alt == "greater":
            p = float(binom.sf(b, m, 0.5)) + half  # P(X > b) + ½P(X = b)
        elif alt == "less":
            p = float(binom.cdf(b - 1, m, 0.5)) + half if b > 0 else half
        else:
            low = min(b, c)
            pm = 0.5 * float(binom.pmf(low, m, 0.5))
            below = float(binom.cdf(low - 1, m, 0.5)) if low > 0 else 0.0
            p = 2.0 * (below + pm)
        p = min(1.0, p)
    return Result(
        "mcnemar-mid-p",
        estimate=diff,
        statistic=b,
        statistic_name="n10",
        statistic_count=True,
        p=p,
        exact=exact,
        counts=_pair_counts(a, b, c, d),
    )


def mcnemar_asymptotic(n11, n10, n01, n00, *, alternative, correction) -> Result:
    """McNemar's asymptotic test: z = (n10 − n01)/√(n10 + n01), or with Edwards' continuity
    correction z = sign·max(|n10 − n01| − 1, 0)/√(n10 + n01)."""
    a, b, c, d = _pairs(n11, n10, n01, n00)
    alt = _alternative(alternative)
    corr = _choice("correction", correction, ("none", "edwards"))
    diff, exact = _with_diff(a, b, c, d)
    counts = _pair_counts(a, b, c, d)
    m = b + c
    if m == 0:
        return Result("mcnemar-asymptotic", estimate=diff, exact=exact, counts=counts)
    dev = b - c
    if corr == "edwards":
        dev = int(math.copysign(max(abs(dev) - 1, 0), dev))
    chi2 = Fraction(dev * dev, m)
    z = dev / math.sqrt(m)
    return Result(
        "mcnemar-asymptotic",
        estimate=diff,
        statistic=z,
        statistic_name="z",
        p=normal_p(z, alt),
        exact={**exact, "chi2": chi2, "statistic_squared": chi2},  # z² is the chi-square
        counts=counts,
        extra={"chi2": float(chi2)},
    )


# -- intervals of the paired difference ------------------------------------------------------------


def newcombe_paired(n11, n10, n01, n00, *, level) -> Result:
    """Newcombe's method 10 interval of p_a − p_b for paired proportions."""
    from prereg.stats.samples import newcombe_paired as _newcombe

    a, b, c, d = _pairs(n11, n10, n01, n00)
    lv = _level(level)
    diff, exact = _with_diff(a, b, c, d)
    counts = _pair_counts(a, b, c, d)
    if diff is None:
        return Result("newcombe-paired", counts=counts)
    _, lo, hi = _newcombe(a, b, c, d, level=lv)
    return Result("newcombe-paired", estimate=diff, lower=lo, upper=hi, exact=exact, counts=counts)


def _tango_q(b: int, c: int, n: int, delta: float) -> float:
    """Tango's constrained estimate of p01 under p10 − p01 = δ: the root in [0, 1] of
    2n·q² + (−b − c + (2n − b + c)δ)·q − c·δ(1 − δ) = 0, taken in the form that does not
    cancel."""
    A = 2.0 * n
    B = -b - c + (2.0 * n - b + c) * delta
    C = -c * delta * (1.0 - delta)
    disc = math.sqrt(max(B * B - 4.0 * A * C, 0.0))
    if B <= 0:
        return (-B + disc) / (2.0 * A)
    denom = -B - disc
    return 2.0 * C / denom if denom != 0 else 0.0


def _tango_z(b: int, c: int, n: int, delta: Fraction) -> float:
    df = float(delta)
    q = _tango_q(b, c, n, df)
    var = n * (2.0 * q + df * (1.0 - df))
    num = float(Fraction(b - c) - n * delta)
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def tango_test(n11, n10, n01, n00, *, alternative, margin) -> Result:
    """Tango's score test of p_a − p_b = margin for paired proportions."""
    a, b, c, d = _pairs(n11, n10, n01, n00)
    alt = _alternative(alternative)
    m = _margin(margin)
    diff, exact = _with_diff(a, b, c, d)
    counts = _pair_counts(a, b, c, d)
    n = a + b + c + d
    if n == 0:
        return Result("tango-test", counts=counts)
    q = _tango_q(b, c, n, float(m))
    var = n * (2.0 * q + float(m) * (1.0 - float(m)))
    if var <= 0:  # margin 0 and no discordant pair
        return Result("tango-test", estimate=diff, exact=exact, counts=counts)
    z = _tango_z(b, c, n, m)
    return Result(
        "tango-test",
        estimate=diff,
        se=math.sqrt(var) / n,
        statistic=z,
        statistic_name="z",
        p=normal_p(z, alt),
        exact=exact,
        counts=counts,
        extra={"p01_null": q},
    )


def tango(n11, n10, n01, n00, *, level) -> Result:
    """Tango's score interval of p_a − p_b for paired proportions (the inverted score test)."""
    from scipy.optimize import brentq

    a, b, c, d = _pairs(n11, n10, n01, n00)
    lv = _level(level)
    diff, exact = _with_diff(a, b, c, d)
    counts = _pair_counts(a, b, c, d)
    n = a + b + c + d
    if n == 0:
        return Result("tango", counts=counts)
    zc = critical(lv)

    def f(delta: float, target: float) -> float:
        return _tango_z(b, c, n, Fraction(delta)) - target

    est = float(diff)
    if diff == -1 or f(-1.0, zc) <= 0:
        lower = -1.0
    else:
        lower = brentq(f, -1.0, est, args=(zc,), xtol=1e-300, rtol=4 * _EPS, maxiter=500)
    if diff == 1 or f(1.0, -zc) >= 0:
        upper = 1.0
    else:
        upper = brentq(f, est, 1.0, args=(-zc,), xtol=1e-300, rtol=4 * _EPS, maxiter=500)
    return Result("tango", estimate=diff, lower=lower, upper=upper, exact=exact, counts=counts)


# -- several conditions: Cochran's Q ----------------------------------------------------------------


def cochran_q(x) -> Result:
    """Cochran's Q test that k paired binary outcomes have one success probability."""
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise MethodError(f"x must be a 2-d 0/1 array (units by conditions), got {arr.ndim} dims")
    if arr.size and not np.isin(arr, (0, 1)).all():
        raise MethodError("x must hold only 0 and 1")
    units, k = arr.shape
    if k < 2:
        raise MethodError(f"Cochran's Q needs at least 2 conditions, got {k}")
    xi = arr.astype(np.int64)
    cols = [int(v) for v in xi.sum(axis=0)]
    rows = [int(v) for v in xi.sum(axis=1)]
    total = sum(cols)
    counts = {"units": units, "conditions": k, "column_totals": cols}
    denom = k * total - sum(r * r for r in rows)
    if denom == 0:  # every unit all-0 or all-1
        return Result("cochran-q", df=k - 1, counts=counts)
    q = Fraction((k - 1) * (k * sum(cc * cc for cc in cols) - total * total), denom)
    return Result(
        "cochran-q",
        statistic=q,
        statistic_name="Q",
        df=k - 1,
        p=chi2_sf(float(q), k - 1),
        exact={"statistic": q},
        counts=counts,
    )


# -- paired numbers ---------------------------------------------------------------------------------


def _paired_samples(x, y) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x)
    ya = np.asarray(y)
    if xa.ndim != 1 or ya.ndim != 1:
        raise MethodError("x and y must be 1-d arrays of numbers")
    if xa.shape != ya.shape:
        raise MethodError(f"x and y must have one value per unit: {xa.size} and {ya.size} values")
    if xa.dtype.kind not in "biuf" or ya.dtype.kind not in "biuf":
        raise MethodError("x and y must hold numbers")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(ya))):
        raise MethodError("x and y must hold finite numbers only")
    return xa, ya


def _differences(x, y, margin) -> tuple[np.ndarray, np.ndarray]:
    """The differences x − y − margin of the decimals the data and the spec write, exactly:
    ``(sign, size)``, each difference's sign (−1, 0, 1) and the rank of its absolute value
    among the distinct absolute values (0 for the smallest), so that a difference exactly on
    the margin is a zero and differences equal as decimals are ties (0.3 − 0.1 and 0.5 − 0.3
    are both 0.2, though their floats differ).  Every value is read as its shortest decimal
    (:func:`prereg.stats.compare.decimal_fraction`) and all are put over one denominator, so
    the differences are whole numbers."""
    from math import lcm

    xa, ya = _paired_samples(x, y)
    m = _margin_any(margin)
    decimal: dict[float, Fraction] = {}
    for v in (*xa.tolist(), *ya.tolist()):
        if v not in decimal:
            decimal[v] = Fraction(repr(float(v)))
    den = lcm(m.denominator, *(f.denominator for f in decimal.values()))
    whole = {v: f.numerator * (den // f.denominator) for v, f in decimal.items()}
    shift = m.numerator * (den // m.denominator)
    d = [whole[a] - whole[b] - shift for a, b in zip(xa.tolist(), ya.tolist(), strict=True)]
    sign = np.array([(v > 0) - (v < 0) for v in d], dtype=np.int64)
    sizes = sorted({abs(v) for v in d})
    rank = {v: i for i, v in enumerate(sizes)}
    return sign, np.array([rank[abs(v)] for v in d], dtype=np.int64)


def _margin_any(margin) -> Fraction:
    """A margin for differences of numbers: any finite number, as the decimal written in the
    spec (see :func:`prereg.stats.two_proportions._margin`)."""
    from prereg.stats.compare import threshold

    if isinstance(margin, bool):
        raise MethodError(f"margin must be a finite number, got {margin!r}")
    try:
        m = threshold(margin)
        if not math.isfinite(float(margin)):
            raise ValueError
        return m
    except (TypeError, ValueError, OverflowError):
        raise MethodError(f"margin must be a finite number, got {margin!r}") from None


def sign_test(x, y, *, alternative, margin, ties) -> Result:
    """Exact sign test of the differences x − y − margin: the number above 0 is
    Binomial(number not tied, ½) under the null.  ``ties`` (differences equal to 0): "drop"
    (left out), or "split" (half counted above and half below, an odd one left out)."""
    from prereg.stats.samples import mcnemar_exact_figure

    alt = _alternative(alternative)
    how = _choice("ties", ties, ("drop", "split"))
    sign, _ = _differences(x, y, margin)
    pos = int(np.count_nonzero(sign > 0))
    neg = int(np.count_nonzero(sign < 0))
    tied = int(sign.size) - pos - neg
    if how == "split":
        pos += tied // 2
        neg += tied // 2
    m = pos + neg
    counts = {"above": pos, "below": neg, "tied": tied, "n": int(sign.size)}
    if m == 0:
        return Result(
            "sign-test",
            statistic=0,
            statistic_name="above",
            statistic_count=True,
            p=1.0,
            counts=counts,
        )
    est = Fraction(pos, m)
    exact = {"estimate": est}
    # above ~ Binomial(m, 1/2): McNemar's exact test on (above, below) discordant pairs, a
    # fraction of 2^m up to its limit (scipy's float may be an ulp off it), else certified
    pe = mcnemar_exact_figure(0, pos, neg, 0, alternative=alt)
    if isinstance(pe, Fraction):
        exact["p"] = pe
    p = float(pe)
    return Result(
        "sign-test",
        estimate=est,
        statistic=pos,
        statistic_name="above",
        statistic_count=True,
        p=min(1.0, p),
        exact=exact,
        counts=counts,
    )


_EXACT_LIMIT = 1000


def _signed_rank_cdf(ranks2: np.ndarray, bound: int) -> np.ndarray:
    """P(W ≤ w) for w = 0 … bound, where W = Σ ranks2[i]·[sign i positive], each sign ± with
    chance ½ independently (ranks2: the ranks doubled, so integers).  The distribution is
    built one rank at a time and kept only up to ``bound``."""
    dist = np.zeros(bound + 1)
    dist[0] = 1.0
    for r in ranks2.tolist():
        r = int(r)
        if r <= bound:
            shifted = dist[: bound + 1 - r].copy()
            dist *= 0.5
            dist[r:] += 0.5 * shifted
        else:
            dist *= 0.5
    return np.cumsum(dist)


#: non-zero differences up to which the exact signed-rank P is counted in integers (2^62 sign
#: changes fit an int64), so that it is a fraction; beyond, the distribution is built in floats
_COUNTED_LIMIT = 62


def _signed_rank_counts(ranks2: np.ndarray, bound: int) -> np.ndarray:
    """The number of sign changes with W ≤ w, w = 0 … bound (as :func:`_signed_rank_cdf`,
    counted rather than weighted by ½ each: exact while 2^len(ranks2) fits an int64)."""
    dist = np.zeros(bound + 1, dtype=np.int64)
    dist[0] = 1
    for r in ranks2.tolist():
        r = int(r)
        if r <= bound:
            dist[r:] += dist[: bound + 1 - r].copy()
    return np.cumsum(dist)


def wilcoxon_signed_rank(x, y, *, alternative, margin, zero_method, method, correction) -> Result:
    """Wilcoxon's signed-rank test of the differences x − y − margin.

    ``zero_method``: "wilcox" (zero differences left out before ranking) or "pratt" (ranked
    with the others, then left out of the sum).  ``method``: "exact" (the distribution of W+
    over all 2^n sign changes given the observed ranks, ties and Pratt's zeros included;
    at most 1000 non-zero differences) or "normal" (the mean and variance of W+ with the tie
    correction and, for Pratt, Cureton's zero adjustment).  ``correction``: "none" or
    "continuity" (½ toward the mean, normal only; with "exact" it must be "none").
    """
    from scipy.stats import rankdata

    alt = _alternative(alternative)
    zm = _choice("zero_method", zero_method, ("wilcox", "pratt"))
    how = _choice("method", method, ("exact", "normal"))
    corr = _choice("correction", correction, ("none", "continuity"))
    if how == "exact" and corr != "none":
        raise MethodError('correction must be "none" with method "exact" (it is exact)')
    sign, size = _differences(x, y, margin)  # exact: a zero is a difference on the margin
    zeros = int(np.count_nonzero(sign == 0))
    if zm == "wilcox":
        size = size[sign != 0]
        sign = sign[sign != 0]
    n = int(sign.size)
    nonzero = int(np.count_nonzero(sign))
    counts = {"n": n, "zeros": zeros, "nonzero": nonzero}
    if nonzero == 0:
        return Result("wilcoxon-signed-rank", statistic_name="W+", counts=counts)
    ranks = rankdata(size)  # average ranks of |d| (ties exact): multiples of ½
    ranks2 = np.rint(2.0 * ranks).astype(np.int64)
    pos2 = int(ranks2[sign > 0].sum())
    w_plus = Fraction(pos2, 2)
    if how == "exact":
        if nonzero > _EXACT_LIMIT:
            raise MethodError(
                f"the exact signed-rank distribution is computed for at most {_EXACT_LIMIT} "
                f"non-zero differences, got {nonzero}; register method normal"
            )
        # W+ and its mirror total − W+ have one distribution: only the lower half is built.
        nz = ranks2[sign != 0]
        total = int(nz.sum())
        low_side = pos2 <= total - pos2
        near = pos2 if low_side else total - pos2  # the observed value or its mirror
        exact = {"statistic": w_plus}
        if nonzero <= _COUNTED_LIMIT:  # the sign changes counted in integers: P over 2^n
            cum = _signed_rank_counts(nz, near)
            whole = 1 << nonzero
            at_most = Fraction(int(cum[near]), whole)  # P(W ≤ near)
            below = Fraction(int(cum[near - 1]), whole) if near > 0 else Fraction(0)
            one = Fraction(1)
        else:
            cum = _signed_rank_cdf(nz, near)
            at_most = float(cum[near])  # P(W ≤ near)
            below = float(cum[near - 1]) if near > 0 else 0.0  # P(W < near)
            one = 1.0
        # low side: P(W ≤ pos2) = at_most, P(W ≥ pos2) = 1 − P(W < pos2) = 1 − below;
        # mirrored: P(W ≥ pos2) = P(W ≤ total − pos2) = at_most, P(W ≤ pos2) = 1 − below.
        cdf, sf = (at_most, one - below) if low_side else (one - below, at_most)
        if alt == "greater":
            p = sf
        elif alt == "less":
            p = cdf
        else:
            p = 2 * min(cdf, sf)
        p = min(one, p)
        if isinstance(p, Fraction):
            exact["p"] = p
        return Result(
            "wilcoxon-signed-rank",
            statistic=w_plus,
            statistic_name="W+",
            p=float(p),
            exact=exact,
            counts=counts,
        )
    # Normal approximation.  Mean and variance of W+ over the non-zero ranks: for "wilcox" the
    # ranks 1..n, for "pratt" n(n+1)/4 − z0(z0+1)/4 and the variance likewise (Cureton 1967),
    # each reduced by Σ(t³ − t)/48 over ties among the non-zero |d|.
    mean = (
        Fraction(n * (n + 1) - zeros * (zeros + 1), 4)
        if zm == "pratt"
        else Fraction(n * (n + 1), 4)
    )
    var24 = n * (n + 1) * (2 * n + 1)
    if zm == "pratt":
        var24 -= zeros * (zeros + 1) * (2 * zeros + 1)
    _, tcounts = np.unique(size[sign != 0], return_counts=True)
    tie = int(sum(int(t) ** 3 - int(t) for t in tcounts))
    var = Fraction(2 * var24 - tie, 48)
    se = math.sqrt(float(var))
    dev = float(w_plus - mean)
    if corr == "continuity":
        if alt == "greater":
            dev -= 0.5
        elif alt == "less":
            dev += 0.5
        else:
            dev -= math.copysign(0.5, dev) if dev != 0 else 0.0
    z = dev / se
    return Result(
        "wilcoxon-signed-rank",
        se=se,
        statistic=w_plus,
        statistic_name="W+",
        p=normal_p(z, alt),
        exact={"statistic": w_plus, "se_squared": var},
        counts=counts,
        extra={"z": z, "mean": float(mean)},
    )


def paired_t(x, y, *, alternative, margin, level) -> Result:
    """Paired t test of mean(x − y) against a margin, with the t interval of the mean
    difference at ``level``."""
    import scipy.special

    alt = _alternative(alternative)
    lv = _level(level)
    xa, ya = _paired_samples(x, y)
    m = _margin_any(margin)
    n = int(xa.size)
    counts = {"n": n}
    exact = {}
    if xa.dtype.kind in "biu" and ya.dtype.kind in "biu" and n:
        total = sum(int(a) - int(b) for a, b in zip(xa.tolist(), ya.tolist(), strict=True))
        exact["estimate"] = Fraction(total, n)
    if n == 0:
        return Result("paired-t", counts=counts)
    d = xa.astype(np.float64) - ya.astype(np.float64)
    mean = float(exact["estimate"]) if exact else float(math.fsum(d.tolist()) / n)
    if n < 2:
        return Result("paired-t", estimate=mean, exact=exact, counts=counts)
    sd = float(np.std(d, ddof=1))
    if sd == 0:
        return Result("paired-t", estimate=mean, se=0.0, df=n - 1, exact=exact, counts=counts)
    se = sd / math.sqrt(n)
    df = n - 1
    if exact:
        t = float(exact["estimate"] - m) / se
    else:
        t = (mean - float(m)) / se
    stdtr = scipy.special.stdtr
    if alt == "greater":
        p = float(stdtr(df, -t))
    elif alt == "less":
        p = float(stdtr(df, t))
    else:
        p = min(1.0, 2.0 * float(stdtr(df, -abs(t))))
    q = float(scipy.special.stdtrit(df, (1.0 + lv) / 2.0))
    return Result(
        "paired-t",
        estimate=mean,
        se=se,
        statistic=t,
        statistic_name="t",
        df=df,
        lower=mean - q * se,
        upper=mean + q * se,
        p=p,
        exact=exact,
        counts=counts,
    )


# -- the catalogue ---------------------------------------------------------------------------------

_F = "prereg.stats.paired:"

# -- Friedman ------------------------------------------------------------------------------------

# Largest (states × arrangements) of one block for which the exact Friedman distribution is
# built (a state is a sorted vector of partial rank sums; about a second at this size).
FRIEDMAN_EXACT_MAX_WORK = 3_000_000


def _friedman_exact(blocks: list[list[int]], observed: int) -> tuple[Fraction, int]:
    """(P(Σ R_j² ≥ observed), the number of distinct arrangements) over every arrangement of
    each block's (doubled) mid-ranks, equally likely under the null.  The state is the sorted
    vector of the columns' partial rank sums: every block's arrangements are closed under
    permuting the columns, so the count of sequences reaching a sorted state is the sum over
    the sorted states before it of their counts times the arrangements that sort to it."""
    from itertools import permutations

    states: dict[tuple[int, ...], int] = {tuple([0] * len(blocks[0])): 1}
    total = 1
    for ranks in blocks:
        arrangements = sorted(set(permutations(ranks)))
        if len(states) * len(arrangements) > FRIEDMAN_EXACT_MAX_WORK:
            raise MethodError(
                "the exact Friedman distribution of these blocks is too large to count "
                f"(more than {FRIEDMAN_EXACT_MAX_WORK:,} steps in one block); register method "
                '"chi-square"'
            )
        total *= len(arrangements)
        nxt: dict[tuple[int, ...], int] = {}
        for state, count in states.items():
            for arr in arrangements:
                key = tuple(sorted(a + b for a, b in zip(state, arr, strict=True)))
                nxt[key] = nxt.get(key, 0) + count
        states = nxt
    hits = sum(c for state, c in states.items() if sum(v * v for v in state) >= observed)
    return Fraction(hits, total), total


def friedman(x, *, method, tie_correction) -> Result:
    """Friedman's test that k conditions rank alike within blocks: the values of each unit
    (row) ranked across the k conditions (columns), ties given their average rank;
    ``Q = 12/(nk(k + 1))·Σ R_j² − 3n(k + 1)``, divided, with ``tie_correction``, by
    ``1 − Σ(t³ − t)/(n(k³ − k))``; ``method`` "chi-square" (χ², k − 1 df) or "exact" (the
    share of the arrangements of each block's ranks with Σ R_j² at least the observed one);
    the estimate is Kendall's W = Q/(n(k − 1))."""
    from prereg.stats.ranks import doubled_ranks

    how = _choice("method", method, ("exact", "chi-square"))
    if not isinstance(tie_correction, bool):
        raise MethodError(f"tie_correction must be true or false, got {tie_correction!r}")
    try:
        m = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise MethodError(f"x must be a 2-d array of numbers ({e})") from None
    if m.ndim != 2:
        raise MethodError("x must be a 2-d array, one row per unit, one column per condition")
    if not np.all(np.isfinite(m)):
        raise MethodError("x must hold finite numbers only (no NaN or infinity)")
    n, k = int(m.shape[0]), int(m.shape[1])
    if k < 2:
        raise MethodError(f"Friedman's test compares at least 2 groups, got {k}")
    if n < 2:
        raise MethodError(f"Friedman's test needs at least 2 units present in every group, got {n}")
    blocks = []
    ties = 0
    for row in m:
        d, t = doubled_ranks(row)
        blocks.append(d.tolist())
        ties += sum(s**3 - s for s in t)
    sums = [sum(b[j] for b in blocks) for j in range(k)]  # 2 R_j
    ss = sum(v * v for v in sums)  # 4 Σ R_j²
    q = Fraction(12 * ss, 4 * n * k * (k + 1)) - 3 * n * (k + 1)
    factor = 1 - Fraction(ties, n * (k**3 - k))
    counts = {"units": n, "groups": k}
    extra = {"mean_ranks": [s / (2 * n) for s in sums], "tie_factor": float(factor)}
    if factor == 0:
        raise MethodError(
            f"every one of the {n} units has the same value in all {k} groups: nothing ranks"
        )
    if tie_correction:
        q = q / factor
    w = q / (n * (k - 1))
    exact = {"statistic": q, "estimate": w}
    if how == "exact":
        p_exact, total = _friedman_exact(blocks, ss)
        exact["p"] = p_exact
        p = float(p_exact)
        extra["arrangements"] = total
    else:
        p = chi2_sf(float(q), k - 1)
    return Result(
        "friedman",
        estimate=w,
        statistic=q,
        statistic_name="chi2",
        df=k - 1,
        p=p,
        exact=exact,
        counts=counts,
        extra=extra,
    )


_LEVEL = "level: two-sided coverage, a number in (0, 1)"
_ALT = 'alternative: "two-sided", "greater" (H1: a above b), "less" (H1: a below b)'
_FLL = (
    "Fagerland MW, Lydersen S, Laake P (2013). The McNemar test for binary matched-pairs data: "
    "mid-p and asymptotic are better than exact conditional. BMC Med Res Methodol 13:91"
)
_CAVO = (
    "the worked example of Cavo et al. (2012) in Fagerland, Lydersen & Laake (2013, 2014) "
    "(n11 = 59, n10 = 6, n01 = 16, n00 = 80)"
)
_DIFF_EXACT = "estimate is the fraction (n10 − n01)/n, compared exactly"

CATALOGUE = (
    Entry(
        name="mcnemar-exact",
        family="paired",
        function=_F + "mcnemar_exact",
        shape="paired-binary",
        summary="McNemar's exact conditional test: n10 ~ Binomial(n10 + n01, ½).",
        options={"alternative": _ALT},
        reports=("estimate", "statistic", "p"),
        formula="two-sided min(1, 2·P(X ≤ min(n10, n01))); greater P(X ≥ n10); less P(X ≤ n10); "
        "P = 1 with no discordant pair (scipy.stats.binomtest, log-space, any n)",
        reference="McNemar Q (1947). Psychometrika 12:153–157; " + _FLL + ".",
        oracle="statsmodels mcnemar(table, exact=True); exact sums of binomial coefficients; "
        + _CAVO,
        exactness=_DIFF_EXACT + "; up to 2,000 discordant pairs P is the fraction of integer "
        "sums (exact['p']), compared exactly; beyond, certified (regularised incomplete beta)",
    ),
    Entry(
        name="mcnemar-mid-p",
        family="paired",
        function=_F + "mcnemar_mid_p",
        shape="paired-binary",
        summary="McNemar's mid-P test: the exact tail less half the observed point probability.",
        options={"alternative": _ALT},
        reports=("estimate", "statistic", "p"),
        formula="two-sided 2·(P(X < m) + ½P(X = m)), m = min(n10, n01), at most 1; greater "
        "P(X > n10) + ½P(X = n10); less P(X < n10) + ½P(X = n10)",
        reference=_FLL + ".",
        oracle="exact sums of binomial coefficients; " + _CAVO + " (P = 0.034690)",
        exactness=_DIFF_EXACT + "; up to 2,000 discordant pairs P is the fraction of integer "
        "sums (exact['p']), compared exactly; beyond, a float (compared as the shortest decimal of the float)",
    ),
    Entry(
        name="mcnemar-asymptotic",
        family="paired",
        function=_F + "mcnemar_asymptotic",
        shape="paired-binary",
        summary="McNemar's asymptotic test, with or without Edwards' continuity correction.",
        options={"alternative": _ALT, "correction": '"none" or "edwards"'},
        reports=("estimate", "statistic", "p"),
        formula="z = (n10 − n01)/√(n10 + n01); Edwards: sign·max(|n10 − n01| − 1, 0)/√(n10 + n01); "
        "χ² = z² in extra; no statistic without discordant pairs",
        reference="McNemar Q (1947); Edwards AL (1948). Psychometrika 13:185–187.",
        oracle="statsmodels mcnemar(table, exact=False, correction=...) (which does not "
        "truncate |n10 − n01| − 1 at 0: statistic 1/(n10 + n01) when n10 = n01); " + _CAVO,
        exactness=_DIFF_EXACT
        + "; χ² = z² is an exact fraction (exact['chi2'], exact['statistic_squared']), and a "
        "threshold on z is decided by balls of its root; P a float, compared as the shortest "
        "decimal of its float",
    ),
    Entry(
        name="newcombe-paired",
        family="paired",
        function=_F + "newcombe_paired",
        shape="paired-binary",
        summary="Newcombe's method 10 interval of the difference of paired proportions.",
        options={"level": _LEVEL},
        reports=("estimate", "lower", "upper"),
        formula="Wilson bounds of both margins combined through the table's φ "
        "(numerator reduced by n/2 when positive, not below 0)",
        reference="Newcombe RG (1998). Improved confidence intervals for the difference "
        "between binomial proportions based on paired data. Stat Med 17:2635–2650.",
        oracle=_CAVO + " (−0.1186, −0.0046); the formula written out over statsmodels' Wilson "
        "bounds",
        exactness=_DIFF_EXACT + "; the bounds are floats",
    ),
    Entry(
        name="tango",
        family="paired",
        function=_F + "tango",
        shape="paired-binary",
        summary="Tango's score interval of the difference of paired proportions.",
        options={"level": _LEVEL},
        reports=("estimate", "lower", "upper"),
        formula="δ with (n10 − n01 − nδ)/√(n(2p̃01 + δ(1 − δ))) = ±z, p̃01 the root of "
        "2n·q² + (−n10 − n01 + (2n − n10 + n01)δ)·q − n01·δ(1 − δ) = 0",
        reference="Tango T (1998). Equivalence test and confidence interval for the difference "
        "in proportions for the paired-sample design. Stat Med 17:891–908; Fagerland MW, "
        "Lydersen S, Laake P (2014). Recommended tests and confidence intervals for paired "
        "binomial proportions. Stat Med 33:2850–2875.",
        oracle=_CAVO + " (−0.1240, −0.0054); the constrained estimate checked by numerical "
        "maximisation of the multinomial likelihood",
        exactness=_DIFF_EXACT + "; the bounds are floats",
    ),
    Entry(
        name="tango-test",
        family="paired",
        function=_F + "tango_test",
        shape="paired-binary",
        summary="Tango's score test of the difference of paired proportions against a margin.",
        options={
            "alternative": _ALT,
            "margin": "margin: the null difference p_a − p_b, in (−1, 1)",
        },
        reports=("estimate", "se", "statistic", "p"),
        formula="z = (n10 − n01 − nδ)/√(n(2p̃01 + δ(1 − δ))); at δ = 0 McNemar's z",
        reference="Tango T (1998). Stat Med 17:891–908.",
        oracle="McNemar's asymptotic z at δ = 0; the numerically maximised constrained "
        "likelihood elsewhere",
        exactness=_DIFF_EXACT
        + "; n10 − n01 − nδ formed exactly; the constrained p̃01 is the root of a quadratic "
        "whose coefficients are fractions of the counts and the margin as written, so a "
        "threshold on z or se is decided by balls of its square root; P a float, compared as "
        "the shortest decimal of its float",
    ),
    Entry(
        name="cochran-q",
        family="paired",
        function=_F + "cochran_q",
        shape="binary-blocks",
        summary="Cochran's Q test that k paired binary outcomes share one success probability.",
        options={},
        reports=("statistic", "df", "p"),
        formula="Q = (k − 1)(k Σ C_j² − T²)/(kT − Σ R_i²), df k − 1; none when every unit is "
        "all-0 or all-1",
        reference="Cochran WG (1950). The comparison of percentages in matched samples. "
        "Biometrika 37:256–266.",
        oracle="statsmodels.stats.contingency_tables.cochrans_q(x)",
        exactness="Q is an exact fraction; P a float",
    ),
    Entry(
        name="sign-test",
        family="paired",
        function=_F + "sign_test",
        shape="paired-samples",
        summary="Exact sign test of the paired differences against a margin.",
        options={
            "alternative": _ALT,
            "margin": "margin: the null median difference (any finite number)",
            "ties": '"drop" (differences equal to the margin left out) or "split" (half '
            "above, half below, an odd one left out)",
        },
        reports=("estimate", "statistic", "p"),
        formula="above ~ Binomial(above + below, ½) (as mcnemar-exact: sums of binomial coefficients); estimate "
        "above/(above + below)",
        reference="Dixon WJ, Mood AM (1946). The statistical sign test. JASA 41:557–566.",
        oracle="exact sums of binomial coefficients; statsmodels sign_test (ties dropped, "
        "two-sided)",
        exactness="each difference less the margin is signed exactly on the decimals the data "
        "and the spec write (0.3 − 0.1 against a margin of 0.2 is a tie, though its float is "
        "below 0.2); estimate is an exact fraction; up to 2,000 differences not tied P is the "
        "fraction of integer sums over 2^m (exact['p']), compared exactly; beyond, certified "
        "(regularised incomplete beta), as mcnemar-exact's",
    ),
    Entry(
        name="wilcoxon-signed-rank",
        family="paired",
        function=_F + "wilcoxon_signed_rank",
        shape="paired-samples",
        summary="Wilcoxon's signed-rank test of the paired differences against a margin.",
        options={
            "alternative": _ALT,
            "margin": "margin: the null location of the differences (any finite number)",
            "zero_method": '"wilcox" (zeros dropped) or "pratt" (zeros ranked, then dropped)',
            "method": '"exact" (all sign changes given the observed ranks, ≤ 1000 non-zero) or '
            '"normal"',
            "correction": '"none" or "continuity" (normal only)',
        },
        reports=("se", "statistic", "p"),
        formula="W+ = Σ ranks of positive differences (average ranks of |d|); normal: mean "
        "n(n+1)/4, variance n(n+1)(2n+1)/24 − Σ(t³ − t)/48 (Pratt: less z0's share), "
        "continuity ½ toward the mean; exact two-sided 2·min(tails), at most 1",
        reference="Wilcoxon F (1945). Biometrics Bull 1:80–83; Pratt JW (1959). JASA "
        "54:655–667; Cureton EE (1967). JASA 62:1068–1069.",
        oracle="scipy.stats.wilcoxon(d, zero_method=..., correction=..., method='asymptotic' "
        "or 'exact') (its two-sided statistic is min(W+, W−); 'auto' may switch method; its "
        "'exact' assumes no ties, so with ties or zeros the oracle is "
        "method=PermutationMethod over all 2^n sign changes)",
        exactness="the differences less the margin are signed and ranked exactly on the "
        "decimals the data and the spec write (a difference on the margin is a zero, and "
        "differences equal as decimals are ties, whatever their floats); W+ is an exact "
        "fraction (a multiple of ½); with method exact and at most 62 non-zero differences P "
        "is the count of sign changes over 2^n (exact['p']), compared exactly; otherwise P a "
        "float, compared as the shortest decimal of its float; the se of W+ under the null is "
        "the root of a fraction of the counts and ties (exact['se_squared']), decided by balls "
        "of its root",
    ),
    Entry(
        name="paired-t",
        family="paired",
        function=_F + "paired_t",
        shape="paired-samples",
        summary="Paired t test of the mean difference against a margin, with its t interval.",
        options={
            "alternative": _ALT,
            "margin": "margin: the null mean difference (any finite number)",
            "level": _LEVEL,
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p"),
        formula="t = (mean(d) − δ)/(s_d/√n), n − 1 df; mean ± t_{(1+level)/2, n−1}·s_d/√n",
        reference="Student (1908). The probable error of a mean. Biometrika 6:1–25.",
        oracle="scipy.stats.ttest_1samp(x − y, popmean=δ, alternative=...) and its "
        "confidence_interval(level)",
        exactness="the mean difference of integer data is an exact fraction, of decimal data "
        "certified by the exact means of the decimals the data write; "
        + T_STATISTIC_EXACT
        + "; P and the bounds are floats",
    ),
    Entry(
        name="friedman",
        family="paired",
        function=_F + "friedman",
        shape="sample-blocks",
        summary="Friedman's rank test that k conditions measured on the same units differ.",
        options={
            "method": '"exact" (every arrangement of each unit\'s ranks, counted) or '
            '"chi-square" (χ², k − 1 df)',
            "tie_correction": "true (Q divided by 1 − Σ(t³ − t)/(n(k³ − k))) or false",
        },
        reports=("estimate", "statistic", "df", "p"),
        formula="each unit's k values ranked (ties: average ranks); Q = 12/(nk(k + 1))·Σ R_j² − "
        "3n(k + 1) (over the tie factor with tie_correction); estimate Kendall's W = "
        "Q/(n(k − 1)); exact P = share of the arrangements of every unit's ranks with Σ R_j² at "
        "least the observed; units missing a group are counted (`incompleteUnits`) and left out",
        reference="Friedman M (1937). The use of ranks to avoid the assumption of normality "
        "implicit in the analysis of variance. JASA 32:675–701; Hollander M, Wolfe DA, Chicken "
        "E (2014). Nonparametric Statistical Methods, 3rd ed., §7.1.",
        oracle="scipy.stats.friedmanchisquare(*columns) (tie-corrected Q and its χ² P); the "
        "exact P by enumerating every arrangement of small blocks with Fractions",
        exactness="Q and W are exact fractions (exact['statistic'], exact['estimate']); with "
        "method exact P is a fraction of whole counts (exact['p']), compared exactly (at most "
        "3,000,000 steps a block, else refused); chi-square P a float",
    ),
)
