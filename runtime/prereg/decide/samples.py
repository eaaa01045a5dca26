"""Estimates and contrasts computed from the counted rows of their selections.

:func:`prereg.decide.evaluate.registered_results` computes proportions with closed-form
methods from counts; everything else comes here, one estimate or contrast at a time:

- an estimate of a ``mean`` or ``geometric_mean`` metric: the mean (on the log scale for a
  geometric mean, reported back with exp, interval bounds too) with a ``t`` or ``bootstrap``
  interval;
- an estimate of ``ece`` or ``auroc``: the figure of the selection's counted rows, with a
  ``hanley-mcneil`` (AUROC) or ``bootstrap`` interval;
- a contrast of two independent selections: the difference of the figures (their ratio for a
  geometric mean: exp of the difference of mean logs), with ``welch`` or ``bootstrap``
  intervals and a ``welch-t`` test (on the logs, against the log of a ratio margin);
- a paired contrast (``pair_by``): the rows of arm a and arm b with the same value of the
  pairing field form a pair; an item counts only when both arms counted it (observed, and
  meeting the metric's ``among``); the rows of one arm without a partner are counted in the
  result (``unpairedA``, ``unpairedB``) and otherwise ignored. Paired proportions get the
  table of pairs (``newcombe-paired``, ``mcnemar-exact``); paired numbers their differences
  (``t`` interval of the differences, ``paired-t``);
- interval ``none``: the figure alone; test ``none``: no P value.

A bootstrap resamples the counted rows (pairs, for a paired contrast; each arm on its own
otherwise) with the registered seed and number of resamples, and recomputes the registered
figure (the difference, or ratio, of the arms' figures).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from prereg.decide.designs import RATIO
from prereg.decide.metrics import RowMetric
from prereg.errors import UserError
from prereg.rules import ContrastResult

_NAN = float("nan")


def _nan_none(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _method(kind: str, name: str, what: str):
    from prereg.stats.methods import MethodError, method

    try:
        return method(kind, name)
    except MethodError as exc:
        raise UserError(f"rules: {what}: {exc}") from None


def _metric(metrics: Mapping[str, RowMetric], name: str, what: str) -> RowMetric:
    m = metrics.get(name)
    if m is None:
        raise UserError(f"rules: {what} names metric {name!r}, which has no compute block")
    return m


def _values(m: RowMetric, rows: np.ndarray) -> np.ndarray:
    """The numbers the metric reads on these rows: 0/1 for a proportion, else its values."""
    if m.value is None:
        return m.num[rows].astype(np.float64)
    return m.value[rows]


def _stat_of(m: RowMetric):
    """The metric's figure of a sample of rows given their values (and hits)."""
    if m.value is None:
        return lambda v: float(np.mean(v)) if v.size else _NAN
    if m.hit is None:
        return lambda v: m.statistic(v)
    return lambda v, h: m.statistic(v, h)


def _bootstrap(item, what: str):
    boot = getattr(item, "bootstrap", None)
    if not boot:
        raise UserError(
            f"rules: {what}: interval bootstrap needs a bootstrap block (resamples, seed)"
        )
    return int(boot[0]), int(boot[1])


def _exp3(t: tuple[float, float, float]) -> tuple[float, float, float]:
    return tuple(math.exp(x) if not math.isnan(x) else _NAN for x in t)  # type: ignore[return-value]


def ece_figures(m: RowMetric, rows: np.ndarray) -> dict[str, Any]:
    """An ECE's table of bins (:func:`prereg.stats.calibration.ece_bins`), each non-empty bin
    with its exact share ``|k_b − Σ q_i| / N`` over the decimal confidences as ``p/q``
    (``exactContribution``), and the exact ECE (``exact``: the sum of the shares, the value a
    threshold on it is decided with)."""
    from prereg.decide.certify import ece_exact_bins
    from prereg.stats.calibration import ece_bins

    v, hits = m.value[rows], m.hit[rows]
    bins = ece_bins(v, hits, m.bins, m.closed)
    if not v.size:
        return {"bins": bins}
    shares = ece_exact_bins(m.raw[rows], hits, m.bins, m.closed)
    for b, row in enumerate(bins):
        f = shares.get(b, Fraction(0))
        row["exactContribution"] = f"{f.numerator}/{f.denominator}"
    total = sum(shares.values(), Fraction(0))
    return {"bins": bins, "exact": f"{total.numerator}/{total.denominator}"}


def estimate_result(item, m: RowMetric, rows: np.ndarray) -> tuple[ContrastResult, tuple | None]:
    what = f"estimate {item.id}"
    v = _values(m, rows)
    hits = None if m.hit is None else m.hit[rows]
    stat = _stat_of(m)
    samples = [v] if hits is None else [v, hits]
    n = int(v.size)
    lo = hi = _NAN
    extra: dict[str, Any]
    counts = None
    if m.is_proportion:
        k = int(round(float(v.sum())))
        est = k / n if n else _NAN
        extra = {"k": k, "n": n}
        counts = (k, n, 0, 0)
    elif m.is_sample:
        est = stat(v)
        sd = float(np.std(v, ddof=1)) if n > 1 else _NAN
        extra = {"n": n, ("sdLog" if m.back == "exp" else "sd"): sd}
        if m.back == "exp":  # the log scale the geometric mean and its interval come from
            mean_log = float(np.mean(v)) if n else _NAN
            extra.update(meanLog=mean_log, seLog=sd / math.sqrt(n) if n else _NAN)
    elif m.kind == "auroc":
        est = stat(v, hits)
        pos = int(hits.sum())
        extra = {"positives": pos, "negatives": n - pos}
    else:
        est = stat(v, hits)
        extra = {"n": n}
        if m.kind == "ece":
            extra.update(ece_figures(m, rows))
    interval = item.interval
    if interval == "bootstrap":
        resamples, seed = _bootstrap(item, what)
        fn = _method("resampling-interval", "bootstrap", what).fn
        lo, hi = fn(samples, stat, level=item.level, resamples=resamples, seed=seed, paired=True)
    elif interval == "none":
        pass
    elif m.is_proportion:
        lo, hi = _method("proportion-interval", interval, what).fn(k, n, level=item.level)
    elif m.is_sample:
        fn = _method("sample-interval", interval, what).fn
        mean, lo, hi = fn(v, level=item.level)
        if m.back == "exp":
            _, lo, hi = _exp3((mean, lo, hi))
    elif m.kind == "auroc":
        fn = _method("auroc-interval", interval, what).fn
        lo, hi = fn(est, extra["positives"], extra["negatives"], level=item.level)
    else:
        raise UserError(
            f"rules: {what}: interval {interval!r} does not fit metric {m.id!r} ({m.kind})"
        )
    from prereg.decide import certify

    certified = certify.estimate(m, rows, float(est)) or None
    if certified and "exact" in extra:  # the exact ECE just formed decides its comparisons
        total = Fraction(extra["exact"])
        certified["estimate"].exact = lambda: total
    elif m.is_sample and certified and _formable(certified.get("estimate")):
        _record_exact(certified["estimate"], extra)  # a mean of numbers, a geometric mean
    result = ContrastResult(
        item.id, float(est), float(lo), float(hi), extra=extra, certified=certified
    )
    return result, counts


def _formable(figure) -> bool:
    """Whether a certified figure has an exact value a comparison may form (a fraction, or the
    threshold a ball figure is found equal to)."""
    return getattr(figure, "exact", None) is not None or getattr(figure, "ball", None) is not None


def _record_exact(figure, extra: dict) -> None:
    """A mean's exact value is formed only when a comparison needs it (the float lies within
    its error bound of a threshold); once formed it is kept and written into the estimate's
    row (``extra["exact"]``, ``p/q``), so that every report of that comparison decides it on
    the figure the verdict used. A figure decided by balls (a ratio of geometric means) has no
    fraction to form; when a comparison finds it equal to its threshold, the threshold is its
    exact value, and is written so; when balls find it strictly on one side, a decimal inside
    every deciding ball is written (``extra["certified"]``), on the side the verdict took
    whichever side its float reads."""
    inner = figure.exact
    if inner is None:
        if figure.ball is not None:
            from prereg.stats.compare import decimal_text, representative, tie

            def on_ball(f) -> None:
                t = tie(f)
                if t is not None:
                    extra.setdefault("exact", f"{t.numerator}/{t.denominator}")
                    extra.pop("certified", None)
                elif "exact" not in extra:
                    extra["certified"] = decimal_text(representative(f))

            figure.on_ball = on_ball
        return
    kept: list[Fraction] = []

    def exact() -> Fraction:
        if not kept:
            kept.append(inner())
            extra["exact"] = f"{kept[0].numerator}/{kept[0].denominator}"
        return kept[0]

    figure.exact = exact


def pair_key(item, values: list, sel):
    """``key(i)``: what pairs row ``i`` of ``sel``'s table with a row of the other arm — its
    value of the ``pair_by`` field (``values``, one per row; an array or object by its JSON
    text) and its level of every factor (and the split, and every row attribute) the two arms
    do not contrast (a factor is contrasted when the arms select different levels of it)."""
    names = set(item.a) | set(item.b)
    contrasted = {
        n for n in names if n not in item.a or n not in item.b or set(item.a[n]) != set(item.b[n])
    }
    table = sel.table
    shared = sorted(set(sel.known) - contrasted)
    cell_attrs = sel.cell_attrs
    attrs = {k: np.asarray(v).tolist() for k, v in table.attributes.items()}

    def key(i: int):
        c = cell_attrs[int(table.cell[i])]
        v = values[i]
        if not isinstance(v, (str, int, float, bool)):
            v = json.dumps(v, sort_keys=True)  # an array or object pairs by its JSON text
        return (
            v,
            *(attrs[n][i] if n in attrs else c.get(n) for n in shared),
        )

    return key


def _pair_groups(item, a: np.ndarray, b: np.ndarray, columns, sel):
    """``(keys, rows of arm a by key, rows of arm b by key)``: each arm's counted rows grouped
    by what pairs them (:func:`pair_key`), keys in arm a's row order; with ``pair_rows`` one
    (the default) a key with two rows in one arm is refused."""
    what = f"{'analysis' if hasattr(item, 'method') else 'contrast'} {item.id}"
    if columns is None or item.pair_by not in columns:
        raise UserError(
            f"rules: {what} pairs rows by {item.pair_by!r}, which is not a field of the rows"
        )
    from prereg.decide.columns import as_column

    col = as_column(columns[item.pair_by])
    values = col.values.tolist()
    null = col.null
    key = pair_key(item, values, sel)
    several = getattr(item, "pair_rows", "one") == "mean"

    def index(rows: np.ndarray, arm: str) -> dict[Any, list[int]]:
        out: dict[Any, list[int]] = {}
        for i in np.flatnonzero(rows).tolist():
            if null[i]:
                continue
            k = key(i)
            got = out.get(k)
            if got is None:
                out[k] = [i]
            elif several:
                got.append(i)
            else:
                raise UserError(
                    f"rules: {what} pairs rows by {item.pair_by!r}, and {item.pair_by}"
                    f" {values[i]!r} has more than one counted row in arm {arm} with the same"
                    " levels (a paired arm holds one row per item and level of the factors it"
                    " does not contrast; to average each side's rows of a pair first, register"
                    " pair_rows: mean)"
                )
        return out

    ia, ib = index(a, "a"), index(b, "b")
    return [k for k in ia if k in ib], ia, ib


def _pairs(
    item, m: RowMetric, a: np.ndarray, b: np.ndarray, columns, sel
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Row indexes of arm a and arm b, pair by pair (in arm a's row order), and the numbers of
    counted rows of each arm without a partner.

    Two rows pair when they have the same value of the ``pair_by`` field and the same level of
    every factor (and the split, and every row attribute) the two arms do not contrast: a
    factor is contrasted when the arms select different levels of it."""
    both, ia, ib = _pair_groups(item, a, b, columns, sel)
    ra = np.asarray([ia[k][0] for k in both], dtype=np.intp)
    rb = np.asarray([ib[k][0] for k in both], dtype=np.intp)
    return ra, rb, int(a.sum()) - len(both), int(b.sum()) - len(both)


def _tested(test, what: str, args, alternative: str, margin, pairs) -> tuple[float, float | None]:
    """(statistic, P or None) of a contrast's registered test: a method's refusal is the
    user's, named with the contrast."""
    from prereg.stats.methods import MethodError

    try:
        statistic, p = test.fn(*args, alternative=alternative, margin=margin, **pairs)
    except MethodError as exc:
        raise UserError(f"rules: {what}: {exc}") from None
    p = float(p)
    return float(statistic), None if math.isnan(p) else p


class PairMeans:
    """The pairs of a paired design registered with ``pair_rows: mean``: each side of a pair is
    the mean of its counted rows, kept exact (the rows read as the decimals the data write,
    their sum over their number: 10/3 for 3, 3 and 4).

    ``a``, ``b``: each pair's exact means (Fractions); ``scale``: the least common multiple of
    the sides' numbers of rows, so that ``scale`` times every mean is a decimal again
    (``scaled``), which the methods read exactly as they read data (a t, a rank, a sign is the
    same of the scaled means, an estimate, a bound and an se ``scale`` times theirs)."""

    def __init__(self, a: list[Fraction], b: list[Fraction], counts: list[int]):
        self.a, self.b = a, b
        self.n = len(a)
        self.scale = math.lcm(*counts) if counts else 1
        self._scaled: tuple[np.ndarray, np.ndarray] | None = None

    def floats(self) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.asarray([float(f) for f in self.a], dtype=np.float64),
            np.asarray([float(f) for f in self.b], dtype=np.float64),
        )

    def scaled(self) -> tuple[np.ndarray, np.ndarray]:
        """Each pair's means times ``scale``: decimals, as the floats that read back as them. A
        decimal of more digits than a double writes (data of 16 or 17 significant digits, such
        as a computed 0.30000000000000004) is its nearest float, as such data are elsewhere:
        the estimate stays exact (:meth:`difference`), a t or a rank reads the float."""
        if self._scaled is None:
            self._scaled = (
                np.asarray([float(f * self.scale) for f in self.a], dtype=np.float64),
                np.asarray([float(f * self.scale) for f in self.b], dtype=np.float64),
            )
        return self._scaled

    def difference(self) -> Fraction | None:
        """The exact mean of the pairs' differences (None without a pair)."""
        if not self.n:
            return None
        return (sum(self.a, Fraction(0)) - sum(self.b, Fraction(0))) / self.n

    def mean(self, side: str) -> float:
        values = self.a if side == "a" else self.b
        return float(sum(values, Fraction(0)) / len(values)) if values else _NAN


def _side_means(groups: list[list[int]], src: np.ndarray, what: str) -> list[Fraction]:
    """The exact mean of each group of rows of ``src``, its values read as the decimals the
    data write: over one power of ten as whole numbers (summed as Python integers) when a
    double's decimals write them all, else value by value as fractions."""
    from prereg.stats.compare import decimal_fraction
    from prereg.stats.exactsum import decimal_whole

    if not groups:
        return []
    flat = np.fromiter((i for g in groups for i in g), dtype=np.intp)
    values = np.asarray(src[flat], dtype=np.float64)
    if not bool(np.all(np.isfinite(values))):
        raise UserError(f"rules: {what}: a counted row's number is not finite")
    found = decimal_whole([values])
    if found is not None:
        (whole,), places = found
        sums = [0] * len(groups)
        owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups]).tolist()
        for o, w in zip(owner, whole.tolist(), strict=True):
            sums[o] += w
        unit = 10**places
        return [Fraction(t, len(g) * unit) for t, g in zip(sums, groups, strict=True)]
    read: dict[float, Fraction] = {}
    out = []
    for g in groups:
        total = Fraction(0)
        for v in src[g].tolist():
            f = read.get(v)
            if f is None:
                f = read[v] = decimal_fraction(v)
            total += f
        out.append(total / len(g))
    return out


def pair_means(
    item, numbers: np.ndarray, nb: np.ndarray, a: np.ndarray, b: np.ndarray, columns, sel, what
) -> tuple[PairMeans, dict[str, Any]]:
    """The exact means of each pair's sides (``numbers``: a number per row read on arm a's
    rows, ``nb`` on arm b's; their decimals are summed exactly) and the counts SCORE.json
    shows of them: ``pairs``, ``unpairedA``/``unpairedB`` (counted rows without a partner),
    ``rowsA``/``rowsB`` (the rows averaged into the pairs)."""
    both, ia, ib = _pair_groups(item, a, b, columns, sel)
    fa = _side_means([ia[k] for k in both], numbers, what)
    fb = _side_means([ib[k] for k in both], nb, what)
    counts = sorted({len(ia[k]) for k in both} | {len(ib[k]) for k in both})
    rows_a = sum(len(ia[k]) for k in both)
    rows_b = sum(len(ib[k]) for k in both)
    extra = {
        "pairs": len(both),
        "unpairedA": int(a.sum()) - rows_a,
        "unpairedB": int(b.sum()) - rows_b,
        "rowsA": rows_a,
        "rowsB": rows_b,
    }
    return PairMeans(fa, fb, counts), extra


# what each test's statistic is, as SCORE.json names it
STATISTIC_NAMES = {
    "pooled-z": "z",
    "farrington-manning": "z",
    "welch-t": "t",
    "paired-t": "t",
    "mcnemar-exact": "n10 - n01",
}
# the tests whose statistic is a count (or a difference of counts): SCORE.json writes it as an
# integer, so that every report prints it without decimals
COUNT_STATISTICS = frozenset({"mcnemar-exact"})


def _averaged_contrast(item, m: RowMetric, a: np.ndarray, b: np.ndarray, columns, sel):
    """A paired contrast of a mean whose pairs average each side's rows (``pair_rows: mean``):
    the differences of the pairs' exact means, their ``t`` interval and ``paired-t`` test (run
    on the means times their common scale, decimals the methods read exactly, the interval and
    se scaled back), or a bootstrap of the pairs; the estimate is the exact mean difference."""
    what = f"contrast {item.id}"
    if not m.is_sample or m.kind != "mean" or m.back == "exp" or getattr(m, "log", False):
        raise UserError(  # compile refuses it first
            f"rules: {what}: pair_rows mean averages numbers; metric {m.id!r} ({m.kind}) is"
            " not a mean of numbers"
        )
    src = m.raw if m.raw is not None else m.value
    pm, extra = pair_means(item, src, src, a, b, columns, sel, what)
    n = pm.n
    extra.update(na=n, nb=n, a=pm.mean("a"), b=pm.mean("b"))
    exact = pm.difference()
    est = _NAN if exact is None else float(exact)
    lo = hi = _NAN
    p = None
    va, vb = pm.floats()
    scale = pm.scale
    interval = item.interval
    if n and interval == "bootstrap":
        resamples, seed = _bootstrap(item, what)
        fn = _method("resampling-interval", "bootstrap", what).fn
        lo, hi = fn(
            [va, vb],
            lambda x, y: float(np.mean(x) - np.mean(y)),
            level=item.level,
            resamples=resamples,
            seed=seed,
            paired=True,
        )
    elif n and interval != "none":
        sa, sb = pm.scaled()
        fn = _method("sample-interval", interval, what).fn
        _, lo, hi = fn(sa - sb, level=item.level)
        lo, hi = float(lo) / scale, float(hi) / scale
    if n and item.test != "none":
        from prereg.stats.compare import threshold

        sa, sb = pm.scaled()
        alternative = getattr(item, "alternative", "two-sided") or "two-sided"
        margin = getattr(item, "margin", None)
        margin = float(threshold(0 if margin is None else margin) * scale)
        test = _method("paired-sample-test", item.test, what)
        pairs = {"pairs": (sa, sb)}
        statistic, p = _tested(test, what, (sa - sb,), alternative, margin, pairs)
        if not math.isnan(statistic):
            extra["statistic"] = statistic
            extra["statisticName"] = STATISTIC_NAMES.get(item.test, item.test)
            se, df = test.se_df(sa - sb, margin=margin, **pairs) if test.se_df else (None, None)
            se = _nan_none(se)
            extra["se"], extra["df"] = (None if se is None else se / scale), _nan_none(df)
    certified = None
    if exact is not None:
        from prereg.stats.compare import EPS, Certified

        figure = Certified(est, error=4 * EPS * abs(est), exact=lambda: exact)
        _record_exact(figure, extra)
        certified = {"estimate": figure}
    result = ContrastResult(
        item.id, est, float(lo), float(hi), p=p, extra=extra, certified=certified
    )
    return result, None


def contrast_result(
    item, m: RowMetric, a: np.ndarray, b: np.ndarray, columns, sel
) -> tuple[ContrastResult, tuple | None]:
    what = f"contrast {item.id}"
    paired = getattr(item, "pair_by", None) is not None
    if paired and getattr(item, "pair_rows", "one") == "mean":
        return _averaged_contrast(item, m, a, b, columns, sel)
    ratio = m.kind in RATIO
    stat = _stat_of(m)
    whole = m.hit is not None
    extra: dict[str, Any] = {}
    counts = None
    if paired:
        ra, rb, ua, ub = _pairs(item, m, a, b, columns, sel)
        extra.update(pairs=int(ra.size), unpairedA=ua, unpairedB=ub)
    else:
        ra, rb = np.flatnonzero(a), np.flatnonzero(b)
    va, vb = _values(m, ra), _values(m, rb)
    ha = hb = None
    if whole:
        ha, hb = m.hit[ra], m.hit[rb]

    def figure_of(v, h):
        return stat(v, h) if whole else stat(v)

    def contrast_stat(*s):
        if whole:
            fa, fb = stat(s[0], s[1]), stat(s[2], s[3])
        else:
            fa, fb = stat(s[0]), stat(s[1])
        return fa / fb if ratio else fa - fb

    fa, fb = figure_of(va, ha), figure_of(vb, hb)
    est = (fa / fb if fb else _NAN) if ratio else fa - fb
    lo = hi = _NAN
    p = None
    table = None
    if m.is_proportion:
        if paired:
            ya, yb = va > 0.5, vb > 0.5
            table = (
                int((ya & yb).sum()),
                int((ya & ~yb).sum()),
                int((~ya & yb).sum()),
                int((~ya & ~yb).sum()),
            )
            n = int(ra.size)
            extra.update(n11=table[0], n10=table[1], n01=table[2], n00=table[3])
            k1, k2 = table[0] + table[1], table[0] + table[2]
            extra.update(k1=k1, n1=n, k2=k2, n2=n)
            counts = (k1, n, k2, n)
            est = (table[1] - table[2]) / n if n else _NAN
        else:
            k1, n1 = int(round(float(va.sum()))), int(va.size)
            k2, n2 = int(round(float(vb.sum()))), int(vb.size)
            extra.update(k1=k1, n1=n1, k2=k2, n2=n2)
            counts = (k1, n1, k2, n2)
    else:
        extra.update(na=int(va.size), nb=int(vb.size), a=fa, b=fb)
        if ratio:
            extra["ratio"] = True
    samples = [va, ha, vb, hb] if whole else [va, vb]
    interval = item.interval
    if interval == "bootstrap":
        resamples, seed = _bootstrap(item, what)
        fn = _method("resampling-interval", "bootstrap", what).fn
        if paired:
            lo, hi = fn(
                samples,
                contrast_stat,
                level=item.level,
                resamples=resamples,
                seed=seed,
                paired=True,
            )
        else:  # each arm on its own (a's rows first), its samples resampled together
            lo, hi = fn(
                samples,
                contrast_stat,
                level=item.level,
                resamples=resamples,
                seed=seed,
                paired=False,
                arms=(2, 2) if whole else (1, 1),
            )
    elif interval == "none":
        pass
    elif m.is_proportion and paired:
        fn = _method("paired-difference-interval", interval, what).fn
        est, lo, hi = fn(*table, level=item.level)
    elif m.is_proportion:
        fn = _method("difference-interval", interval, what).fn
        est, lo, hi = fn(k1, n1, k2, n2, level=item.level)
    elif m.is_sample and paired:
        fn = _method("sample-interval", interval, what).fn
        d, lo, hi = fn(va - vb, level=item.level)
        if ratio:
            est, lo, hi = _exp3((d, lo, hi))
        else:
            est = d
    elif m.is_sample:
        fn = _method("sample-difference-interval", interval, what).fn
        d, lo, hi = fn(va, vb, level=item.level)
        if ratio:
            _, lo, hi = _exp3((d, lo, hi))
            est = math.exp(d) if not math.isnan(d) else _NAN
        else:
            est = d
    else:
        raise UserError(
            f"rules: {what}: interval {interval!r} does not fit metric {m.id!r} ({m.kind})"
        )
    if item.test != "none":
        alternative = getattr(item, "alternative", "two-sided") or "two-sided"
        margin = getattr(item, "margin", None)
        if ratio:
            margin = 1.0 if margin is None else float(margin)
            log_margin = math.log(margin)
        else:
            margin = 0.0 if margin is None else float(margin)

        if m.is_proportion and paired:
            kind, args, test_margin = "paired-proportion-test", table, margin
        elif m.is_proportion:
            kind, args, test_margin = "two-proportion-test", (k1, n1, k2, n2), margin
        elif m.is_sample and paired:
            kind, args = "paired-sample-test", (va - vb,)
            test_margin = log_margin if ratio else margin
        elif m.is_sample:
            kind, args, test_margin = "sample-test", (va, vb), log_margin if ratio else margin
        else:
            raise UserError(f"rules: {what}: metric {m.id!r} ({m.kind}) has no test")
        test = _method(kind, item.test, what)
        # the paired t reads the pairs' decimals (a mean difference on its margin gives t = 0)
        pairs = {"pairs": (va, vb)} if kind == "paired-sample-test" and not ratio else {}
        statistic, p = _tested(test, what, args, alternative, test_margin, pairs)
        if not math.isnan(statistic):
            whole = item.test in COUNT_STATISTICS and statistic.is_integer()
            extra["statistic"] = int(statistic) if whole else statistic
            extra["statisticName"] = STATISTIC_NAMES.get(item.test, item.test)
            se, df = test.se_df(*args, margin=test_margin, **pairs) if test.se_df else (None, None)
            extra["se"], extra["df"] = _nan_none(se), _nan_none(df)
    from prereg.decide import certify

    certified = None
    if not m.is_proportion and not math.isnan(float(est)):
        certified = certify.contrast(m, ra, rb, float(est), ratio=ratio) or None
        figure = (certified or {}).get("estimate")
        if isinstance(figure, Fraction):  # whole numbers: decided on the fraction, shown as it
            from prereg.stats.compare import EPS, Certified

            exact = figure
            figure = Certified(float(exact), error=4 * EPS * abs(float(exact)), exact=lambda: exact)
            certified["estimate"] = figure
        if _formable(figure):
            _record_exact(figure, extra)  # the contrast's row carries it once a rule formed it
    if m.is_proportion and paired and item.test == "mcnemar-exact" and p is not None:
        # an exact test's P value is a fraction (or a certified ball for very many pairs)
        from prereg.stats.samples import mcnemar_exact_figure

        alternative = getattr(item, "alternative", "two-sided") or "two-sided"
        certified = {"p": mcnemar_exact_figure(*table, alternative=alternative)}
    result = ContrastResult(
        item.id, float(est), float(lo), float(hi), p=p, extra=extra, certified=certified
    )
    return result, counts


def row_results(item, metrics: Mapping[str, RowMetric], sel, columns):
    """(result, counts or None) of one estimate or contrast from its rows."""
    from prereg.rules import Contrast

    if isinstance(item, Contrast) or hasattr(item, "a"):
        what = f"contrast {item.id}"
        m = _metric(metrics, item.metric, what)
        a = m.counted(sel.mask(item.a, what))
        b = m.counted(sel.mask(item.b, what))
        return contrast_result(item, m, a, b, columns, sel)
    what = f"estimate {item.id}"
    m = _metric(metrics, item.metric, what)
    return estimate_result(item, m, m.counted(sel.mask(item.of, what)))
