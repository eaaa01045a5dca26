"""The row path over a whole block of simulated studies at once.

:meth:`DrawnRows.batch <prereg.engines.factorial.commands.DrawnRows.batch>` gives the columns
``row_data`` gives each study's records, every study's rows one after another, and
:func:`prereg.decide.metrics.row_metrics` (the engine's own code, row by row) makes the row
metrics of all of them in one call.  This module scores the block from those arrays:

- proportion estimates and contrasts with closed-form methods by
  :func:`prereg.decide.evaluate._count_results_many` (exact counts, the batched form score's
  own tests compare);
- analyses over counts (``binomial``, ``two-binomial``, ``paired-binary``) by the catalogue
  method itself (:func:`prereg.decide.analyses._call`), once per distinct table of counts;
- means, geometric means, their Welch, t and paired t figures, the ratio of geometric means,
  ECE and AUROC from per-study sums over (studies × rows) arrays (:func:`_sample_stats`), the
  same formulas as :mod:`prereg.stats.samples` and :mod:`prereg.stats.continuous`.

Verdicts and gates come from :func:`prereg.decide.evaluate.decide_all_many`.  A figure from
sums may differ from the one-study float in its last bits, so every comparison a rule makes
of such a figure is screened: a study where the figure, moved by a relative :data:`TOL`
either way, could fall on the other side of the threshold (or where a figure is undefined:
an arm of fewer than two, no spread, a tie in an AUROC) is scored again, alone, by
:class:`prereg.diagnose.rows.RowScorer` — score's code and its certified comparisons — and
that study's figures and verdicts are those.  Rules this module does not cover (a bootstrap,
another analysis, a gate on a figure not from counts, a statistic of the study's own) leave
the whole block to the one-study path.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from prereg.decide.metrics import RowMetric

#: Relative distance from a threshold within which a figure from sums is decided again by the
#: one-study scorer (the sums agree with it to a few units in the last place).
TOL = 1e-9


class Unsupported(Exception):
    """These rules need the one-study path."""


def _reshaped(m: RowMetric, size: int) -> RowMetric:
    def r(x):
        return None if x is None else np.asarray(x).reshape(size, -1)

    return replace(m, num=r(m.num), den=r(m.den), value=r(m.value), hit=r(m.hit), raw=r(m.raw))


def _study(metrics, columns, i: int, n: int):
    """Study ``i``'s row metrics and columns, sliced from the block's."""
    from prereg.decide.columns import Column

    sl = slice(i * n, (i + 1) * n)

    def cut(x):
        return None if x is None else x[sl]

    ms = {
        k: replace(
            m, num=m.num[sl], den=m.den[sl], value=cut(m.value), hit=cut(m.hit), raw=cut(m.raw)
        )
        for k, m in metrics.items()
    }
    cs = {k: Column(c.kind, c.values[sl], c.null[sl]) for k, c in columns.items()}
    return ms, cs


# -- per-study sums ------------------------------------------------------------------------------


def _sample_stats(v: np.ndarray, mask: np.ndarray):
    """(n, mean, sd, variance, both with ddof 1) of each row's values where ``mask`` holds
    (NaN where undefined), as :func:`prereg.stats.samples.mean_sd` computes one sample's: the values
    packed in row order and the rows of one count reduced together, which numpy sums as it
    sums each alone (the same pairwise order)."""
    n = mask.sum(axis=1)
    size = v.shape[0]
    mean = np.full(size, np.nan)
    var = np.full(size, np.nan)
    order = np.argsort(~mask, axis=1, kind="stable")
    packed = np.take_along_axis(np.where(mask, v, 0.0), order, axis=1)
    for k in np.unique(n).tolist():
        if k == 0:
            continue
        rows = np.flatnonzero(n == k)
        x = np.ascontiguousarray(packed[rows, :k])
        mean[rows] = x.mean(axis=1)
        if k > 1:
            v2 = x.var(axis=1, ddof=1)
            # a variance at rounding level may be decimals all alike (no spread, as the one-study
            # code decides exactly): undefined here, so the study goes to the one-study scorer
            tiny = (v2 > 0) & (v2 <= np.square(64.0 * 2.0**-52 * np.abs(x).max(axis=1)))
            var[rows] = np.where(tiny, np.nan, v2)
    return n, mean, np.sqrt(var), var


def _exp(x) -> np.ndarray:
    """``math.exp`` of each element (NaN stays NaN), as the one-study code exponentiates."""
    exp = math.exp
    return np.array([exp(t) for t in np.asarray(x, dtype=np.float64).tolist()])


def _square(x) -> np.ndarray:
    """``t ** 2`` of each element as a Python float (C ``pow``), as the one-study code
    squares."""
    return np.array([t**2 for t in np.asarray(x, dtype=np.float64).tolist()])


def _t_sf(t, df):
    from scipy.special import stdtr

    return stdtr(df, -t)


def _p_value(t, df, alternative: str):
    if alternative == "two-sided":
        return np.minimum(1.0, 2.0 * _t_sf(np.abs(t), df))
    if alternative == "greater":
        return _t_sf(t, df)
    return _t_sf(-t, df)


def _t_quantile(p: float, df):
    from scipy.special import stdtrit

    with np.errstate(invalid="ignore"):
        return stdtrit(np.where(df > 0, df, 1.0), p)


def _welch(na, ma, sa, nb, mb, sb):
    """(difference, se, df, undefined) as :func:`prereg.stats.samples._welch_parts`."""
    with np.errstate(invalid="ignore", divide="ignore"):
        vx, vy = sa * sa / na, sb * sb / nb
        se = np.sqrt(vx + vy)
        df = _square(vx + vy) / (vx * vx / (na - 1) + vy * vy / (nb - 1))
    bad = (na < 2) | (nb < 2) | ~(se > 0) | ~np.isfinite(df)
    return ma - mb, se, df, bad


def _largest(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each row's largest |value| where ``mask`` holds (0 where none)."""
    return np.where(mask, np.abs(np.nan_to_num(v)), 0.0).max(axis=1, initial=0.0)


def _scale_of(x, logs, ratio: bool) -> np.ndarray:
    """The scale of a mean (the largest |value| it adds, ``logs``) or of exp of one (the
    figure times 1 + that)."""
    if not ratio:
        return logs
    return np.abs(np.nan_to_num(np.asarray(x, dtype=np.float64))) * (1.0 + logs)


class _Arrays:
    """An item's figures in every study of the block (NaN: missing)."""

    def __init__(self, size: int):
        self.estimate = np.full(size, np.nan)
        self.lower = np.full(size, np.nan)
        self.upper = np.full(size, np.nan)
        self.p = np.full(size, np.nan)

    def result(self, item_id: str, extra=None):
        from prereg.rules import ResultArrays

        nan = np.full(self.estimate.size, np.nan)
        return ResultArrays(
            item_id, self.estimate, self.lower, self.upper, self.p, nan, extra=extra or {}
        )


class BlockScorer:
    """Scores a block's row metrics (studies × rows) with one rules module over one table."""

    def __init__(
        self, rules, sel, size: int, metrics: dict[str, RowMetric], columns, record_fields=()
    ):
        self.rules = rules
        self.sel = sel
        self.size = size
        self.flat = metrics
        self.metrics = {k: _reshaped(m, size) for k, m in metrics.items()}
        self.columns = columns
        self.columns_from_records = frozenset(record_fields)
        self.n = len(sel.table)
        self.unclear = np.zeros(size, dtype=bool)  # studies scored again, alone
        # per item, per study: the scale of the numbers a figure from sums is made of (a
        # mean of decimals exactly on 0 lands a few units in the last place of that scale
        # away from it, not of the figure): the screen's band about a threshold grows by it
        self.scale: dict[str, np.ndarray] = {}

    # selections ----------------------------------------------------------------------------
    def _metric(self, name: str) -> RowMetric:
        m = self.metrics.get(name)
        if m is None:
            raise Unsupported(name)
        return m

    def _arm(self, m: RowMetric, selection, what: str) -> np.ndarray:
        return (m.den > 0) & self.sel.mask(selection, what)[None, :]

    def _pairs(self, item, what: str):
        """(rows of arm a, their partners in arm b) of the table, pair by pair in arm a's row
        order, as :func:`prereg.decide.samples._pairs` pairs a study's counted rows: a study's
        pairs are those whose two rows it counts."""
        table = self.sel.table
        if getattr(item, "pair_rows", "one") != "one":  # pairs of averaged rows: row by row
            raise Unsupported("pair_rows")
        if item.pair_by not in table.columns or item.pair_by in self.columns_from_records:
            raise Unsupported("pair_by")
        from prereg.decide.columns import as_column
        from prereg.decide.samples import pair_key

        col = as_column(table.columns[item.pair_by])
        key = pair_key(item, col.values.tolist(), self.sel)

        def index(rows):
            out = {}
            for i in np.flatnonzero(rows).tolist():
                if col.null[i]:
                    continue
                k = key(i)
                if k in out:  # a study counting both would be refused: leave it to score
                    raise Unsupported("repeated pair key")
                out[k] = i
            return out

        ia = index(self.sel.mask(item.a, what))
        ib = index(self.sel.mask(item.b, what))
        both = [k for k in ia if k in ib]
        return (
            np.asarray([ia[k] for k in both], dtype=np.intp),
            np.asarray([ib[k] for k in both], dtype=np.intp),
        )

    # items ---------------------------------------------------------------------------------
    def estimate(self, item):
        what = f"estimate {item.id}"
        m = self._metric(item.metric)
        arm = self._arm(m, item.of, what)
        out = _Arrays(self.size)
        if m.is_sample:
            if item.interval not in ("t", "none"):
                raise Unsupported(item.interval)
            n, mean, sd, _ = _sample_stats(m.value, arm)
            out.estimate = _exp(mean) if m.back == "exp" else mean
            self.scale[item.id] = _scale_of(out.estimate, _largest(m.value, arm), m.back == "exp")
            self.unclear |= (n < 2) | np.isnan(sd)  # NaN sd: also decimals all alike
            if item.interval == "t":
                with np.errstate(invalid="ignore", divide="ignore"):
                    half = _t_quantile(1.0 - (1.0 - item.level) / 2.0, n - 1) * sd / np.sqrt(n)
                lo, hi = mean - half, mean + half
                out.lower, out.upper = (_exp(lo), _exp(hi)) if m.back == "exp" else (lo, hi)
            return out.result(item.id)
        self.scale[item.id] = np.ones(self.size)  # an ECE or AUROC: numbers in [0, 1]
        if m.kind == "ece" and item.interval == "none":
            out.estimate = self._ece(m, arm)
        elif m.kind == "auroc" and item.interval != "bootstrap":
            out.estimate = self._auroc(m, arm)
            if item.interval != "none":  # the registered method, over the block's arrays
                from prereg.decide.samples import _method

                pos = (arm & m.hit).sum(axis=1)
                neg = arm.sum(axis=1) - pos
                fn = _method("auroc-interval", item.interval, what).fn
                lo, hi = fn(out.estimate, pos, neg, level=item.level)
                out.lower = np.asarray(lo, dtype=np.float64).reshape(self.size)
                out.upper = np.asarray(hi, dtype=np.float64).reshape(self.size)
        else:
            raise Unsupported(m.kind)
        return out.result(item.id)

    def _ece(self, m: RowMetric, arm: np.ndarray) -> np.ndarray:
        """Each study's :func:`prereg.stats.calibration.ece_binned` of its counted rows: the
        per-bin sums added in row order, as ``np.bincount`` adds them."""
        from prereg.stats.calibration import bin_index

        k = len(m.bins) - 1
        x = m.value[arm]
        t = np.asarray(m.hit[arm], dtype=np.float64)
        study = np.nonzero(arm)[0]
        idx = study * k + bin_index(x, m.bins, m.closed)
        conf = np.bincount(idx, weights=x, minlength=self.size * k).reshape(self.size, k)
        acc = np.bincount(idx, weights=t, minlength=self.size * k).reshape(self.size, k)
        total = arm.sum(axis=1)
        self.unclear |= total == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.abs(acc - conf).sum(axis=1) / total

    def cell_figure(self, m: RowMetric, rows: np.ndarray):
        """(figure, scale) of each study over a cell's rows ``rows`` of a metric not computed
        from sums, for :func:`prereg.decide.evaluate.decide_all_many`'s gates: the ECE or
        AUROC (made of numbers in [0, 1]: scale 1), or the geometric mean (scale: the figure
        times the largest log it averages); None for another kind."""
        arm = (m.den > 0) & rows[None, :]
        if m.kind == "ece":
            return self._ece(m, arm), 1.0
        if m.kind == "auroc":
            return self._auroc(m, arm), 1.0
        if m.kind == "geometric_mean":
            _, mean, _, _ = _sample_stats(m.value, arm)
            x = _exp(mean)
            logs = np.where(arm, np.abs(np.nan_to_num(m.value)), 0.0).max(axis=1, initial=0.0)
            return x, np.abs(np.nan_to_num(x)) * (1.0 + logs)
        return None

    def _auroc(self, m: RowMetric, arm: np.ndarray) -> np.ndarray:
        """Each study's :func:`prereg.stats.roc.auroc` of its counted rows: the positives'
        sum of mid-ranks (tied values share the mean of their ranks), half-integers whose sums
        are exact in any order."""
        v = np.where(arm, m.value, np.inf)
        # the order within a run of equal values is immaterial: they share their mid-rank
        order = np.argsort(v, axis=1)
        sv = np.take_along_axis(v, order, axis=1)
        hits = np.take_along_axis(arm & m.hit, order, axis=1)
        size, width = v.shape
        at = np.broadcast_to(np.arange(width), (size, width))
        new = np.ones((size, width), dtype=bool)
        new[:, 1:] = sv[:, 1:] != sv[:, :-1]
        last = np.ones((size, width), dtype=bool)
        last[:, :-1] = new[:, 1:]
        first = np.maximum.accumulate(np.where(new, at, 0), axis=1)
        end = np.minimum.accumulate(np.where(last, at, width)[:, ::-1], axis=1)[:, ::-1]
        ranks = (first + end) / 2.0 + 1.0
        total = arm.sum(axis=1)
        pos = hits.sum(axis=1)
        neg = total - pos
        u = np.where(hits, ranks, 0.0).sum(axis=1) - pos * (pos + 1) / 2.0
        self.unclear |= (pos == 0) | (neg == 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return u / (pos * neg)

    def contrast(self, item):
        what = f"contrast {item.id}"
        m = self._metric(item.metric)
        if not m.is_sample:
            raise Unsupported(m.kind)
        ratio = m.back == "exp"
        out = _Arrays(self.size)
        alternative = getattr(item, "alternative", "two-sided") or "two-sided"
        margin = getattr(item, "margin", None)
        if ratio:
            margin = math.log(1.0 if margin is None else float(margin))
        else:
            margin = 0.0 if margin is None else float(margin)
        if getattr(item, "pair_by", None) is not None:
            if item.interval not in ("t", "none") or item.test not in ("paired-t", "none"):
                raise Unsupported(item.interval)
            ra, rb = self._pairs(item, what)
            both = (m.den[:, ra] > 0) & (m.den[:, rb] > 0)
            d = m.value[:, ra] - m.value[:, rb]
            n, mean, sd, _ = _sample_stats(np.where(both, d, 0.0), both)
            big = np.maximum(_largest(m.value[:, ra], both), _largest(m.value[:, rb], both))
            self.unclear |= (n < 2) | ~(sd > 0)
            out.estimate = _exp(mean) if ratio else mean
            if item.interval == "none":  # the arms' figures over the pairs, as score takes them
                _, ma, _, _ = _sample_stats(m.value[:, ra], both)
                _, mb, _, _ = _sample_stats(m.value[:, rb], both)
                out.estimate = _exp(ma) / _exp(mb) if ratio else ma - mb
            with np.errstate(invalid="ignore", divide="ignore"):
                if item.interval == "t":
                    half = _t_quantile(1.0 - (1.0 - item.level) / 2.0, n - 1) * sd / np.sqrt(n)
                    lo, hi = mean - half, mean + half
                    out.lower, out.upper = (_exp(lo), _exp(hi)) if ratio else (lo, hi)
                if item.test == "paired-t":
                    t = (mean - margin) / (sd / np.sqrt(n))
                    out.p = _p_value(t, n - 1, alternative)
            self.scale[item.id] = _scale_of(out.estimate, 2.0 * big, ratio)
            return out.result(item.id)
        if item.interval not in ("welch", "none") or item.test not in ("welch-t", "none"):
            raise Unsupported(item.interval)
        arm_a, arm_b = self._arm(m, item.a, what), self._arm(m, item.b, what)
        na, ma, sa, _ = _sample_stats(m.value, arm_a)
        nb, mb, sb, _ = _sample_stats(m.value, arm_b)
        d, se, df, bad = _welch(na, ma, sa, nb, mb, sb)
        big = np.maximum(_largest(m.value, arm_a), _largest(m.value, arm_b))
        self.unclear |= bad
        with np.errstate(invalid="ignore", over="ignore"):
            if item.interval == "welch":
                half = _t_quantile(1.0 - (1.0 - item.level) / 2.0, df) * se
                lo, hi = d - half, d + half
                out.lower, out.upper = (_exp(lo), _exp(hi)) if ratio else (lo, hi)
                out.estimate = _exp(d) if ratio else d
            else:
                out.estimate = _exp(ma) / _exp(mb) if ratio else ma - mb
            if item.test == "welch-t":
                out.p = _p_value((d - margin) / se, df, alternative)
        self.scale[item.id] = _scale_of(out.estimate, 2.0 * big, ratio)
        return out.result(item.id)

    def analysis(self, item):
        from prereg.stats.catalogue import entries

        if getattr(item, "statistic", None) is not None or item.metric is None:
            raise Unsupported("analysis")
        if getattr(item, "b_metric", None) is not None:  # b's rows read another metric
            raise Unsupported("b_metric")
        if getattr(item, "b_rating", None) is not None:  # two ratings of one row
            raise Unsupported("b_rating")
        entry = entries().get(item.method)
        m = self._metric(item.metric)
        what = f"analysis {item.id}"
        if entry is None:
            raise Unsupported(item.method)
        if entry.shape in ("binomial", "two-binomial", "paired-binary"):
            return self._counted_analysis(item, entry, m, what)
        if entry.shape == "two-samples" and entry.name == "ratio-of-geometric-means":
            return self._rgm(item, m, what)
        raise Unsupported(entry.shape)

    def _counted_analysis(self, item, entry, m: RowMetric, what: str):
        """The method itself, once per distinct table of counts among the block's studies."""
        from prereg.decide.analyses import _as_contrast, _call
        from prereg.stats.methods import MethodError

        def kn(selection):
            arm = self._arm(m, selection, what)
            k = np.rint(np.where(arm, m.num, 0.0).sum(axis=1)).astype(np.int64)
            return k, arm.sum(axis=1).astype(np.int64)

        if entry.shape == "binomial":
            args = np.stack(kn(item.of), axis=1)
        elif entry.shape == "two-binomial":
            args = np.stack([*kn(item.a), *kn(item.b)], axis=1)
        else:
            ra, rb = self._pairs(item, what)
            both = (m.den[:, ra] > 0) & (m.den[:, rb] > 0)
            ya = (m.hit[:, ra] if m.hit is not None else m.num[:, ra] > 0.5) & both
            yb = (m.hit[:, rb] if m.hit is not None else m.num[:, rb] > 0.5) & both
            args = np.stack(
                [
                    (ya & yb).sum(axis=1),
                    (ya & ~yb & both).sum(axis=1),
                    (~ya & yb & both).sum(axis=1),
                    (~ya & ~yb & both).sum(axis=1),
                ],
                axis=1,
            )
        tables, inverse = np.unique(args, axis=0, return_inverse=True)
        out = _Arrays(len(tables))
        for j, t in enumerate(tables.tolist()):
            try:
                result = _call(entry, tuple(int(x) for x in t), dict(item.options))
            except MethodError:
                raise Unsupported("refused") from None  # the one-study path says why
            r = _as_contrast(item, entry, result)
            out.estimate[j], out.lower[j], out.upper[j] = r.estimate, r.lower, r.upper
            out.p[j] = math.nan if r.p is None else float(r.p)
        inverse = inverse.reshape(-1)
        got = _Arrays(self.size)
        for name in ("estimate", "lower", "upper", "p"):
            setattr(got, name, getattr(out, name)[inverse])
        return got.result(item.id)

    def _rgm(self, item, m: RowMetric, what: str):
        """:func:`prereg.stats.continuous.ratio_of_geometric_means` of each study's arms."""
        from prereg.stats import checks

        opts = dict(item.options)
        if not {"margin", "alternative", "level"} <= set(opts):
            raise Unsupported("options")  # the method's own defaults: the one-study path
        margin = float(opts["margin"])
        alternative = checks.alternative(opts["alternative"])
        level = checks.level(opts["level"])
        if not margin > 0:
            raise Unsupported("margin")
        raw = m.raw if m.raw is not None else m.value
        arms = [self._arm(m, s, what) for s in (item.a, item.b)]
        if any((arm & ~(raw > 0)).any() for arm in arms):
            raise Unsupported("not positive")  # the method refuses: the one-study path says so
        logs = np.log(np.where(arms[0] | arms[1], raw, 1.0))
        (na, ma, _, wa), (nb, mb, _, wb) = (_sample_stats(logs, arm) for arm in arms)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            va, vb = wa / na, wb / nb
            se = np.sqrt(va + vb)
            df = _square(va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1))
            d = ma - mb
            self.unclear |= (na < 2) | (nb < 2) | ~(se > 0) | ~np.isfinite(df)
            out = _Arrays(self.size)
            out.estimate = _exp(d)
            a = 1.0 - level
            if alternative == "two-sided":
                half = _t_quantile(1.0 - a / 2.0, df) * se
                out.lower, out.upper = _exp(d - half), _exp(d + half)
            elif alternative == "greater":
                out.lower = _exp(d - _t_quantile(1.0 - a, df) * se)
            else:
                out.upper = _exp(d + _t_quantile(1.0 - a, df) * se)
            out.p = _p_value((d - math.log(margin)) / se, df, alternative)
        big = np.maximum(*(_largest(logs, arm) for arm in arms))
        self.scale[item.id] = _scale_of(out.estimate, 2.0 * big, True)
        return out.result(item.id)

    # the block -------------------------------------------------------------------------------
    def results(self) -> dict:
        """Every estimate, contrast and analysis as :class:`prereg.rules.ResultArrays`, family
        adjusted; kernel figures screened later."""
        from prereg.decide.evaluate import _count_results_many, _is_counted, _Split
        from prereg.rules import adjust_families_many

        rules = self.rules
        one = {k: replace(m, num=m.num[0], den=m.den[0]) for k, m in self.metrics.items()}
        for item in (*rules.ESTIMATES, *rules.CONTRASTS):
            if item.metric not in one:
                raise Unsupported(item.metric)
        part = _Split(rules, one)
        counted = {}
        if part.ESTIMATES or part.CONTRASTS:
            counted = _count_results_many(part, self.metrics, self.sel, self.size)
            if counted is None:
                raise Unsupported("sums")
        results: dict = {}
        slow = []
        for item in (*rules.ESTIMATES, *rules.CONTRASTS):
            if _is_counted(item, one):
                results[item.id] = counted[item.id]
                continue
            try:
                is_contrast = hasattr(item, "a")
                results[item.id] = self.contrast(item) if is_contrast else self.estimate(item)
            except Unsupported:
                slow.append(item)
        for a in getattr(rules, "ANALYSES", ()):
            results[a.id] = self.analysis(a)
        if slow:
            results.update(self.one_by_one(slow))
        tested = (*rules.CONTRASTS, *getattr(rules, "ANALYSES", ()))
        from prereg.rules import family_members

        for fam_id, ids in family_members(tested).items():
            if rules.FAMILIES[fam_id].missing == "refuse":  # score stops on such a study
                for i in ids:
                    self.unclear |= np.isnan(np.asarray(results[i].p, dtype=np.float64))
        adjusted = adjust_families_many(results, tested, rules.FAMILIES)
        # Each member's adjusted P is counted against its family's alpha (rejectedAdjusted),
        # whether or not a rule reads it: the block adjusts in floats, the one-study scorer an
        # exact test's P in fractions (11 x 1/220 is 1/20 there, 0.049999999999999996 here),
        # so a study with an adjusted P within TOL of the alpha is scored alone.
        for fam_id, ids in family_members(tested).items():
            alpha = float(rules.FAMILIES[fam_id].alpha)
            for i in ids:
                x = np.asarray(adjusted[i].adjusted_p, dtype=np.float64)
                with np.errstate(invalid="ignore"):
                    self.unclear |= np.abs(x - alpha) <= TOL * alpha
        return adjusted

    def one_by_one(self, items) -> dict:
        """Items the block does not cover (a bootstrap interval, a paired proportion, ...),
        each study's figures from score's own code (:func:`prereg.decide.samples.
        row_results`) over that study's rows; a paired proportion (not bootstrapped), whose
        figures are those of its table of pairs, once per distinct table."""
        from prereg.decide.samples import row_results

        out = {item.id: _Arrays(self.size) for item in items}
        tables = {}
        for item in items:
            table = self._pair_table(item)
            if table is not None:
                tables[item.id] = np.unique(table, axis=0, return_index=True, return_inverse=True)
        clear = np.flatnonzero(~self.unclear).tolist()  # the others are scored alone anyway
        studies = {i: None for i in clear}
        for _, first, _ in tables.values():
            studies.update((int(i), None) for i in first.tolist())
        for i in sorted(studies):
            metrics, columns = _study(self.flat, self.columns, i, self.n)
            for item in items:
                got = tables.get(item.id)
                if got is not None and i not in got[1]:
                    continue
                r, _ = row_results(item, metrics, self.sel, columns)
                a = out[item.id]
                a.estimate[i], a.lower[i], a.upper[i] = r.estimate, r.lower, r.upper
                a.p[i] = math.nan if r.p is None else float(r.p)
        for item_id, (_, first, inverse) in tables.items():
            a = out[item_id]
            at = first[inverse.reshape(-1)]
            a.estimate, a.lower, a.upper, a.p = (x[at] for x in (a.estimate, a.lower, a.upper, a.p))
        return {k: v.result(k) for k, v in out.items()}

    def _pair_table(self, item) -> np.ndarray | None:
        """(studies, 4) tables of pairs (n11, n10, n01, n00) of a paired proportion contrast
        that is not bootstrapped, or None."""
        m = self.metrics.get(item.metric)
        if (
            m is None
            or getattr(item, "b_metric", None) is not None
            or not m.is_proportion
            or getattr(item, "pair_by", None) is None
            or not hasattr(item, "a")
            or item.interval == "bootstrap"
        ):
            return None
        try:
            ra, rb = self._pairs(item, f"contrast {item.id}")
        except Unsupported:
            return None
        both = (m.den[:, ra] > 0) & (m.den[:, rb] > 0)
        ya = (m.num[:, ra] > 0.5) & both
        yb = (m.num[:, rb] > 0.5) & both
        return np.stack(
            [
                (ya & yb).sum(axis=1),
                (ya & ~yb).sum(axis=1),
                (~ya & yb & both).sum(axis=1),
                (~ya & ~yb & both).sum(axis=1),
            ],
            axis=1,
        )

    def screen(self, node, results, binding=None) -> None:
        """Mark the studies where a comparison of a figure from sums is not clear of its
        threshold by :data:`TOL` (exact counts are decided exactly and need no screen)."""
        from prereg.rules import (
            AllOf,
            AnyOf,
            AtLeast,
            Compare,
            ForEach,
            Not,
            _exact_many,
            _float_compare_many,
            fill,
        )

        binding = binding or {}
        if node is None:
            return
        if isinstance(node, Compare):
            res = results.get(fill(node.target, binding))
            if res is None:
                return
            if node.quantity not in (
                "estimate",
                "abs_estimate",
                "lower",
                "upper",
                "p",
                "adjusted_p",
            ):
                raise Unsupported(node.quantity)
            x = res.quantity(node.quantity)
            if x is None:
                return
            x = np.asarray(x, dtype=np.float64)
            exact = _exact_many(res, node.quantity)
            counted = np.zeros(self.size, dtype=bool) if exact is None else exact[2]
            scale = 0.0
            if node.quantity not in ("p", "adjusted_p"):
                scale = self.scale.get(fill(node.target, binding), 0.0)
            step = TOL * (np.abs(x) + scale)
            lo, hi = x - step, x + step
            a, b, c = (_float_compare_many(v, node) for v in (lo, x, hi))
            near = (a != b) | (b != c)
            if node.op in ("eq", "ne"):
                t = float(node.value)
                near |= (lo <= t) & (t <= hi)
            self.unclear |= (near | np.isnan(x)) & ~counted
            return
        if isinstance(node, Not):
            self.screen(node.condition, results, binding)
        elif isinstance(node, (AllOf, AnyOf, AtLeast)):
            for c in node.conditions:
                self.screen(c, results, binding)
        elif isinstance(node, ForEach):
            for v in node.values:
                self.screen(node.condition, results, {**binding, node.name: v})
