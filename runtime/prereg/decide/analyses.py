"""Registered analyses: a method of the catalogue run over the rows of its metric.

A spec's hypothesis lists ``analyses``: each names a method of :mod:`prereg.stats.catalogue`,
the metric whose counted rows feed it, the inputs the method's shape reads and every option of
the method.  :func:`analysis_results` builds the shape's inputs from the rows (the
:class:`~prereg.decide.evaluate.Selections` masks, the metric's counts and numbers, the row
fields), calls the method with the registered options, and gives both the method's
:class:`~prereg.stats.result.Result` (reported whole in SCORE.json) and a
:class:`~prereg.rules.ContrastResult` that rules read: ``estimate``, ``lower``, ``upper`` and
``p``, with ``se``, ``statistic`` and ``df`` reachable by quantity, and the exact fractions of
the Result (``Result.exact``) as the certified figures a comparison decides with.

What each shape reads (``rows``: the metric's counted rows of a selection):

- ``binomial``: k, n of ``of``; ``two-binomial``: of ``a`` and ``b``;
- ``paired-binary``: the table of pairs of ``a`` and ``b`` rows with the same ``pair_by`` value;
- ``binomial-groups``: k, n of each selection of ``groups``, in order;
- ``strata-2x2``: k, n of ``a`` and ``b`` at each level of the factor ``strata``;
- ``binary-blocks``: per value of ``unit`` present in every group, its 0/1 outcome per group;
- ``sample-blocks``: the same with the metric's number of the unit in each group;
- ``sample`` / ``two-samples`` / ``samples-groups``: the metric's numbers as read (before any
  log: a method on the log scale takes the logs itself);
- ``paired-samples``: the numbers of the pairs of ``a`` and ``b`` (``pair_by``);
- ``two-raters`` / ``ratings``: per ``unit``, the integer ``rating`` each ``rater`` gave;
- ``clustered-sample``: the numbers of ``of`` (or of ``a`` then ``b``, arm labels "a" and
  "b") with the ``cluster`` field of each row;
- ``samples-per-problem``: per ``unit``, its counted rows (n) and the ones that are hits (c);
- ``paired-samples-per-problem``: the same of ``a`` and of ``b`` for each ``unit`` both arms
  have (in arm a's order), the others counted as unpaired;
- ``answers-per-problem``: per ``unit``, the ``rating`` (answer) of each row in row order and
  the unit's ``truth``;
- ``labels``: ``truth`` and ``prediction`` of each row;
- ``probabilities``: the metric's positives (``where``) and its numbers (an ece or auroc
  metric: the predicted probability);
- ``paired-probabilities``: the same of the pairs of ``a`` and ``b`` rows (``pair_by``);
- ``p-values``: the P values of ``of_analyses`` (analyses or contrasts), in order; the
  analysis' estimate is the number of hypotheses the procedure rejects.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from prereg.decide.metrics import RowMetric
from prereg.errors import UserError
from prereg.rules import ContrastResult

_NAN = float("nan")


def _fail(item, message: str) -> UserError:
    return UserError(f"rules: analysis {item.id} ({item.method}): {message}")


def _field(columns, name: str, item):
    from prereg.decide.columns import as_column

    if columns is None or name not in columns:
        raise _fail(item, f"{name!r} is not a field of the rows")
    return as_column(columns[name])


def _key(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if not isinstance(v, (str, int, float, bool)):
        return json.dumps(v, sort_keys=True)
    return v


def _values_at(col, rows: np.ndarray, item, name: str, *, nullable: bool = False) -> list:
    out = []
    vals = col.values
    for i in rows.tolist():
        if col.null[i]:
            if nullable:
                out.append(None)
                continue
            raise _fail(
                item,
                f"field {name!r} is null or absent on a counted row (row {i + 1} of the scored"
                f" rows), and the method reads it on every row its metric counts; leave such"
                f" rows out with the metric's among ({{field: {name}, op: not_null}})",
            )
        out.append(_key(vals[i].item() if hasattr(vals[i], "item") else vals[i]))
    return out


def _rows(item, m: RowMetric, sel, selection) -> np.ndarray:
    return np.flatnonzero(m.counted(sel.mask(selection, f"analysis {item.id}")))


def _kn(m: RowMetric, rows: np.ndarray) -> tuple[int, int]:
    return int(round(float(m.num[rows].sum()))), int(round(float(m.den[rows].sum())))


def _numbers(m: RowMetric, rows: np.ndarray) -> np.ndarray:
    src = m.raw if m.raw is not None else m.value
    return np.asarray(src[rows], dtype=np.float64)


def _hits(m: RowMetric, rows: np.ndarray) -> np.ndarray:
    if m.hit is not None:
        return np.asarray(m.hit[rows], dtype=bool)
    return np.asarray(m.num[rows] > 0.5, dtype=bool)


def _code(v, item, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or float(v) != int(v):
        raise _fail(item, f"{name} {v!r} is not an integer category code")
    return int(v)


def _by_unit(item, rows, columns, extra: dict[str, Any]):
    """(unit -> rater -> rating) of the rows, units and raters in order of first appearance."""
    units = _values_at(_field(columns, item.unit, item), rows, item, item.unit)
    raters = _values_at(_field(columns, item.rater, item), rows, item, item.rater)
    ratings = _values_at(_field(columns, item.rating, item), rows, item, item.rating, nullable=True)
    table: dict[Any, dict[Any, Any]] = {}
    for u, r, x in zip(units, raters, ratings, strict=True):
        got = table.setdefault(u, {})
        if r in got:
            raise _fail(
                item, f"{item.unit} {u!r} has more than one counted rating by {item.rater} {r!r}"
            )
        got[r] = x
    order = sorted(set(raters), key=lambda v: (str(type(v)), v))
    extra.update(units=len(table), raters=len(order))
    return table, order


def _one_cell_per_unit(item, rows: np.ndarray, units: list, sel) -> None:
    """Refuse a problem whose samples lie in more than one cell: an ``of`` that selects two
    models (or any two levels) with the same problem ids would pool both models' samples into
    one problem, and pass@k or the vote would be of neither."""
    cell = np.asarray(sel.table.cell)[rows].tolist()
    first: dict = {}
    for u, c in zip(units, cell, strict=True):
        c0 = first.setdefault(u, c)
        if c0 != c:
            cells = sel.table.cells
            raise _fail(
                item,
                f"{item.unit} {u!r} has samples in cells {cells[c0]['id']} and {cells[c]['id']}:"
                f" a {item.unit}'s samples must all come from one cell, or they are pooled"
                " across the cells (say, two models' samples counted as one problem's);"
                " narrow `of` to one level of the factor that differs, and register one"
                " analysis per level",
            )


def _inputs(item, entry, m: RowMetric | None, sel, columns, earlier, extra: dict, mb=None) -> tuple:
    """(positional arguments, filled options) of the entry's function; ``mb``, the metric
    read on b's rows of a paired shape (``b_metric``: two fields of one row), else ``m``."""
    shape = entry.shape
    mb = m if mb is None else mb
    if shape == "binomial":
        return _kn(m, _rows(item, m, sel, item.of)), {}
    if shape == "two-binomial":
        return (*_kn(m, _rows(item, m, sel, item.a)), *_kn(m, _rows(item, m, sel, item.b))), {}
    if shape in ("paired-binary", "paired-samples", "paired-probabilities"):
        from prereg.decide.samples import _pairs, pair_means

        a = m.counted(sel.mask(item.a, f"analysis {item.id}"))
        b = mb.counted(sel.mask(item.b, f"analysis {item.id}"))
        if getattr(item, "pair_rows", "one") == "mean":
            if shape != "paired-samples" or entry.name not in AVERAGED:
                raise _fail(item, "pair_rows mean feeds " + _averaged_words())  # compiled
            src_a = m.raw if m.raw is not None else m.value
            src_b = mb.raw if mb.raw is not None else mb.value
            pm, counts = pair_means(
                item, src_a, src_b, a, b, columns, sel, f"analysis {item.id} ({item.method})"
            )
            extra.update(counts)
            extra[_SCALE] = (pm.scale, pm.difference())
            return pm.scaled(), {}
        ra, rb, ua, ub = _pairs(item, m, a, b, columns, sel)
        extra.update(pairs=int(ra.size), unpairedA=ua, unpairedB=ub)
        if shape == "paired-samples":
            return (_numbers(m, ra), _numbers(mb, rb)), {}
        if shape == "paired-probabilities":
            return (
                _hits(m, ra).astype(np.int64),
                _numbers(m, ra),
                _hits(mb, rb).astype(np.int64),
                _numbers(mb, rb),
            ), {}
        ya, yb = _hits(m, ra), _hits(mb, rb)
        return (
            int((ya & yb).sum()),
            int((ya & ~yb).sum()),
            int((~ya & yb).sum()),
            int((~ya & ~yb).sum()),
        ), {}
    if shape == "binomial-groups":
        kn = [_kn(m, _rows(item, m, sel, g)) for g in item.groups]
        return (np.array([k for k, _ in kn]), np.array([n for _, n in kn])), {}
    if shape == "strata-2x2":
        levels = list(
            dict.fromkeys(
                str(c[item.strata]) for c in sel.cell_attrs if c.get(item.strata) is not None
            )
        )
        cols: list[list[int]] = [[], [], [], []]
        for level in levels:
            for j, side in enumerate((item.a, item.b)):
                s = dict(side)
                if item.strata in s and level not in s[item.strata]:
                    k = n = 0
                else:
                    s[item.strata] = (level,)
                    k, n = _kn(m, _rows(item, m, sel, s))
                cols[2 * j].append(k)
                cols[2 * j + 1].append(n)
        extra["strata"] = levels
        return tuple(np.array(c) for c in cols), {}
    if shape in ("binary-blocks", "sample-blocks"):
        ucol = _field(columns, item.unit, item)
        numbers = shape == "sample-blocks"
        outcome: list[dict] = []
        for j, g in enumerate(item.groups):
            rows = _rows(item, m, sel, g)
            units = _values_at(ucol, rows, item, item.unit)
            got: dict = {}
            values = _numbers(m, rows) if numbers else _hits(m, rows)
            for u, h in zip(units, values.tolist(), strict=True):
                if u in got:
                    raise _fail(
                        item, f"{item.unit} {u!r} has more than one counted row in group {j + 1}"
                    )
                got[u] = h
            outcome.append(got)
        complete = [u for u in outcome[0] if all(u in o for o in outcome[1:])]
        every = set().union(*outcome)
        extra.update(units=len(complete), incompleteUnits=len(every) - len(complete))
        if numbers:
            x = np.array([[o[u] for o in outcome] for u in complete], dtype=np.float64)
        else:
            x = np.array([[int(o[u]) for o in outcome] for u in complete], dtype=np.int64)
        return (x.reshape(len(complete), len(outcome)),), {}
    if shape == "sample":
        return (_numbers(m, _rows(item, m, sel, item.of)),), {}
    if shape == "two-samples":
        return (
            _numbers(m, _rows(item, m, sel, item.a)),
            _numbers(m, _rows(item, m, sel, item.b)),
        ), {}
    if shape == "samples-groups":
        return ([_numbers(m, _rows(item, m, sel, g)) for g in item.groups],), {}
    if shape == "two-raters" and getattr(item, "b_rating", None) is not None:
        # a wide log: both ratings on one row (rating the first rater's, b_rating the second's)
        rows = _rows(item, m, sel, item.of)
        units = _values_at(_field(columns, item.unit, item), rows, item, item.unit)
        first = _values_at(
            _field(columns, item.rating, item), rows, item, item.rating, nullable=True
        )
        second = _values_at(
            _field(columns, item.b_rating, item), rows, item, item.b_rating, nullable=True
        )
        seen: set = set()
        for u in units:
            if u in seen:
                raise _fail(item, f"{item.unit} {u!r} has more than one counted row")
            seen.add(u)
        both = [i for i, (x, y) in enumerate(zip(first, second, strict=True)) if None not in (x, y)]
        extra.update(
            units=len(units),
            raters=2,
            raterA=item.rating,
            raterB=item.b_rating,
            incompleteUnits=len(units) - len(both),
        )
        a = np.array([_code(first[i], item, item.rating) for i in both], dtype=np.int64)
        b = np.array([_code(second[i], item, item.b_rating) for i in both], dtype=np.int64)
        return (a, b), {}
    if shape in ("two-raters", "ratings"):
        rows = _rows(item, m, sel, item.of)
        table, raters = _by_unit(item, rows, columns, extra)
        if shape == "two-raters":
            if len(raters) != 2:
                raise _fail(
                    item,
                    f"two-raters needs exactly two values of {item.rater!r} among the rows;"
                    f" found {len(raters)} ({', '.join(map(str, raters))})",
                )
            both = [u for u, r in table.items() if all(table[u].get(x) is not None for x in raters)]
            extra.update(raterA=raters[0], raterB=raters[1], incompleteUnits=len(table) - len(both))
            a = np.array([_code(table[u][raters[0]], item, item.rating) for u in both])
            b = np.array([_code(table[u][raters[1]], item, item.rating) for u in both])
            return (a, b), {}
        x = np.full((len(table), len(raters)), np.nan)
        # the unit and rater of each row and column, for a refusal that names them
        extra[_LABELS] = (list(table), raters)
        for i, row in enumerate(table.values()):
            for j, r in enumerate(raters):
                v = row.get(r)
                if v is None:
                    continue
                if entry.name in ("fleiss-kappa", "fleiss-kappa-bootstrap"):
                    x[i, j] = _code(v, item, item.rating)
                elif isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise _fail(item, f"{item.rating} {v!r} is not a number")
                else:
                    x[i, j] = float(v)
        return (x,), {}
    if shape == "clustered-sample":
        ccol = _field(columns, item.cluster, item)
        if item.of is not None:
            rows = _rows(item, m, sel, item.of)
            return (
                _numbers(m, rows),
                np.array(_values_at(ccol, rows, item, item.cluster), dtype=object),
                None,
            ), {"arms": None}
        ra, rb = _rows(item, m, sel, item.a), _rows(item, m, sel, item.b)
        rows = np.concatenate([ra, rb])
        group = np.array(["a"] * ra.size + ["b"] * rb.size, dtype=object)
        return (
            _numbers(m, rows),
            np.array(_values_at(ccol, rows, item, item.cluster), dtype=object),
            group,
        ), {"arms": ("a", "b")}
    if shape == "samples-per-problem":
        rows = _rows(item, m, sel, item.of)
        units = _values_at(_field(columns, item.unit, item), rows, item, item.unit)
        _one_cell_per_unit(item, rows, units, sel)
        n: dict = {}
        c: dict = {}
        for u, h in zip(units, _hits(m, rows).tolist(), strict=True):
            n[u] = n.get(u, 0) + 1
            c[u] = c.get(u, 0) + int(h)
        extra["units"] = len(n)
        extra[_PROBLEMS] = list(n)
        return (np.array(list(n.values())), np.array([c[u] for u in n])), {}
    if shape == "paired-samples-per-problem":
        per_arm = []
        for side in (item.a, item.b):
            rows = _rows(item, m, sel, side)
            units = _values_at(_field(columns, item.unit, item), rows, item, item.unit)
            _one_cell_per_unit(item, rows, units, sel)
            n: dict = {}
            c: dict = {}
            for u, h in zip(units, _hits(m, rows).tolist(), strict=True):
                n[u] = n.get(u, 0) + 1
                c[u] = c.get(u, 0) + int(h)
            per_arm.append((n, c))
        (na, ca), (nb, cb) = per_arm
        both = [u for u in na if u in nb]
        extra.update(units=len(both), unpairedA=len(na) - len(both), unpairedB=len(nb) - len(both))
        extra[_PROBLEMS] = both
        return (
            np.array([na[u] for u in both], dtype=np.int64),
            np.array([ca[u] for u in both], dtype=np.int64),
            np.array([nb[u] for u in both], dtype=np.int64),
            np.array([cb[u] for u in both], dtype=np.int64),
        ), {}
    if shape == "answers-per-problem":
        rows = _rows(item, m, sel, item.of)
        units = _values_at(_field(columns, item.unit, item), rows, item, item.unit)
        _one_cell_per_unit(item, rows, units, sel)
        answers = _values_at(_field(columns, item.rating, item), rows, item, item.rating)
        truth = _values_at(_field(columns, item.truth, item), rows, item, item.truth)
        per: dict = {}
        gold: dict = {}
        for u, x, t in zip(units, answers, truth, strict=True):
            per.setdefault(u, []).append(x)
            if gold.setdefault(u, t) != t:
                raise _fail(item, f"{item.unit} {u!r} has more than one {item.truth!r}")
        extra["units"] = len(per)
        extra[_PROBLEMS] = list(per)
        return (list(per.values()), [gold[u] for u in per]), {}
    if shape == "labels":
        rows = _rows(item, m, sel, item.of)
        y = _values_at(_field(columns, item.truth, item), rows, item, item.truth)
        p = _values_at(
            _field(columns, item.prediction, item), rows, item, item.prediction, nullable=True
        )
        return (np.array(y, dtype=object), np.array(p, dtype=object)), {}
    if shape == "probabilities":
        rows = _rows(item, m, sel, item.of)
        return (_hits(m, rows).astype(np.int64), _numbers(m, rows)), {}
    if shape == "p-values":
        ps: list = []
        for ref in item.of_analyses:
            r = earlier.get(ref)
            if r is None:
                raise _fail(item, f"{ref!r} has no result before this analysis")
            exact = (r.certified or {}).get("p")
            if isinstance(exact, Fraction):  # an exact test's P: adjusted exactly
                ps.append(exact)
            else:
                ps.append(_NAN if r.p is None else float(r.p))
        if any(isinstance(v, Fraction) for v in ps):
            return (np.array(ps, dtype=object),), {}
        return (np.array(ps, dtype=np.float64),), {}
    raise _fail(item, f"unknown shape {shape!r}")  # pragma: no cover - the compiler checks


def _b_metric(item, metrics: Mapping[str, RowMetric]) -> RowMetric | None:
    """The metric read on b's rows (``b_metric``), or None when b reads the analysis' own."""
    name = getattr(item, "b_metric", None)
    if name is None:
        return None
    mb = metrics.get(name)
    if mb is None:
        raise _fail(item, f"metric {name!r} has no compute block")
    return mb


def _own(item, m, sel, columns, earlier, root, mb=None):
    """(ContrastResult, Result) of an analysis of a statistic of the study's own: its file
    imported after its digest is checked, its function called with the shape's inputs and the
    registered options, and what it returns validated (prereg.custom)."""
    from prereg import custom
    from prereg.stats.catalogue import Entry

    stat = item.statistic
    label = f"rules: analysis {item.id} (statistic {stat['id']})"
    if root is None:
        raise _fail(item, "the project of the compiled rules is unknown")
    fn, path = custom.load_function(root, stat, label)
    entry = Entry(item.method, "custom", "", stat["shape"], "", dict.fromkeys(item.options, ""))
    extra: dict[str, Any] = {}
    args, _filled = _inputs(item, entry, m, sel, columns, earlier, extra, mb)
    extra.pop(_LABELS, None)
    extra.pop(_PROBLEMS, None)

    def fail(message: str):
        raise UserError(f"{label}: {stat['path']}: {message}")

    with np.errstate(all="ignore"):
        result = custom.call(fn, path, stat["path"], args, item.options, item.method, fail)
    pin = {"statistic": {"file": stat["path"], "sha256": stat["sha256"]}}
    result = replace(
        result, counts={**extra, **dict(result.counts)}, extra={**pin, **dict(result.extra)}
    )
    return _as_contrast(item, entry, result, args), result


def run(item, metrics: Mapping[str, RowMetric], sel, columns, earlier, root=None):
    """(ContrastResult, Result) of one analysis (``root``: the project's folder, where a
    statistic of the study's own is found)."""
    from prereg.stats.catalogue import entries
    from prereg.stats.methods import MethodError

    if getattr(item, "statistic", None) is not None:
        m = None
        if item.metric is not None:
            m = metrics.get(item.metric)
            if m is None:
                raise _fail(item, f"metric {item.metric!r} has no compute block")
        return _own(item, m, sel, columns, earlier, root, _b_metric(item, metrics))
    entry = entries().get(item.method)
    if entry is None:
        raise _fail(item, "not a method of the catalogue")  # pragma: no cover - compiled
    m = None
    if item.metric is not None:
        m = metrics.get(item.metric)
        if m is None:
            raise _fail(item, f"metric {item.metric!r} has no compute block")
    extra: dict[str, Any] = {}
    args, filled = _inputs(item, entry, m, sel, columns, earlier, extra, _b_metric(item, metrics))
    labels = extra.pop(_LABELS, None)
    problems = extra.pop(_PROBLEMS, None)
    scale, difference = extra.pop(_SCALE, (None, None))
    options = {**dict(item.options), **filled}
    if scale is not None:  # the pairs' means times scale: the options in the data's units too
        options = _scaled_options(entry.name, options, scale)
        item = replace(item, options=options)
    try:
        result = _call(entry, args, options)
    except MethodError as exc:
        words = _problem_words(item, _rating_words(item, str(exc), labels), problems)
        raise _fail(item, f"the method refuses its input or options: {words}") from None
    if extra:
        result = replace(result, counts={**extra, **dict(result.counts)})
    if scale is not None:
        if entry.name in MEAN_ESTIMATES and result.estimate is not None and difference is not None:
            # the mean of the pairs' differences, exactly (their means' own fractions)
            exact = {**dict(result.exact), "estimate": difference * scale}
            result = replace(result, exact=exact)
        res = _as_contrast(item, entry, result, args, scale=scale)
        return res, _unscaled(entry.name, result, scale)
    if entry.shape == "p-values" and result.counts.get("rejected") is not None:
        # the figure a rule reads of a multiplicity procedure: how many it rejects
        rejected = int(result.counts["rejected"])
        exact = {**dict(result.exact), "estimate": Fraction(rejected)}
        result = replace(result, estimate=float(rejected), exact=exact)
    return _as_contrast(item, entry, result, args), result


#: The paired-samples methods ``pair_rows: mean`` feeds (the pairs' exact means times their
#: common scale, decimals each method reads exactly): per method, its options in the data's
#: units (scaled with the means) and the figures of its Result in them (scaled back). A t, a
#: rank, a sign, a P value are the same of the scaled means; an estimate, a bound, an se are
#: ``scale`` times theirs. Other methods (a permutation's or a correlation's own figures) are
#: refused by compile with ``pair_rows: mean``.
AVERAGED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "paired-t": (("margin",), ("estimate", "se", "lower", "upper")),
    "tost-paired": (("lower", "upper"), ("estimate", "se", "lower", "upper")),
    "equivalence-interval-paired": ((), ("estimate", "se", "lower", "upper")),
    "wilcoxon-signed-rank": (("margin",), ()),
    "sign-test": (("margin",), ()),
}


def _averaged_words() -> str:
    return ", ".join(AVERAGED) + " (the methods of a mean of paired differences, or of their signs)"


def _scaled_options(name: str, options: dict, scale: int) -> dict:
    """``options`` with those in the data's units (:data:`AVERAGED`) times ``scale``, exactly
    (a margin 0.1 times 3 is 0.3, not the float 0.30000000000000004)."""
    from prereg.stats.compare import threshold

    out = dict(options)
    for k in AVERAGED[name][0]:
        v = out.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(threshold(v) * scale)
    return out


def _unscaled(name: str, result, scale: int):
    """The Result of a method run on the pairs' means times ``scale``, its figures in the
    data's units scaled back (exact ones exactly)."""
    fields = AVERAGED[name][1]
    changes = {k: getattr(result, k) / scale for k in fields if getattr(result, k) is not None}
    exact = {k: (v / scale if k in fields else v) for k, v in dict(result.exact).items()}
    if isinstance(exact.get("estimate"), Fraction) and "estimate" in changes:
        # the float nearest the exact mean (25/72 is 0.3472222222222222; the scaled float
        # divided back gave 0.34722222222222227)
        changes["estimate"] = float(exact["estimate"])
    extra = dict(result.extra)
    extra["pairScale"] = scale
    return replace(result, exact=exact, extra=extra, **changes)


def _divided(figure, scale: int):
    """A certified figure of the scaled means divided by ``scale`` (its float, its error bound,
    its exact value or its balls)."""
    from prereg.stats.compare import EPS, Certified

    if figure is None or isinstance(figure, Fraction):
        return None if figure is None else figure / scale
    value = figure.value / scale
    error = None if figure.error is None else figure.error / scale + 4 * EPS * abs(value)
    inner, ball = figure.exact, figure.ball
    return Certified(
        value,
        error=error,
        exact=None if inner is None else (lambda: Fraction(inner()) / scale),
        ball=None if ball is None else (lambda prec: ball(prec) / scale),
    )


_SCALE = "_scale"  # extra's key of the scale of pairs' means (pair_rows mean; not reported)
_LABELS = "_labels"  # extra's key of a ratings table's units and raters (not reported)
_PROBLEMS = "_problems"  # extra's key of the units of a per-problem shape, in order (not reported)
_PROBLEM = re.compile(r"\bproblem (\d+)\b")
_CELL = re.compile(r"^x\[(\d+)\]\[(\d+)\] is (missing|infinite)(.*)$", re.S)


def _rating_words(item, message: str, labels) -> str:
    """A method's refusal of a ratings table's cell ``x[i][j]``, said with the unit and rater
    it is (``item 'i03' has no rating by rater 'r2'``)."""
    found = _CELL.match(message)
    if labels is None or found is None:
        return message
    units, raters = labels
    i, j = int(found.group(1)), int(found.group(2))
    if i >= len(units) or j >= len(raters):  # pragma: no cover - the table is units x raters
        return message
    u, r = units[i], raters[j]
    if found.group(3) == "missing":
        return (
            f"{item.unit} {u!r} has no rating by {item.rater} {r!r}{found.group(4)} (to analyse"
            f" the {item.unit}s every {item.rater} rated, register a `units` level by"
            f" [{item.unit}] that includes them: docs/vocabulary.md, Units)"
        )
    return f"{item.unit} {u!r}: the rating by {item.rater} {r!r} is infinite"


def _problem_words(item, message: str, problems) -> str:
    """A method's refusal of a per-problem shape's problem ``i`` (its position), said with the
    unit it is (``problem 'p01': k = 10 exceeds its n = 9 samples``)."""
    if not problems:
        return message

    def name(found: re.Match) -> str:
        i = int(found.group(1))
        if i >= len(problems):  # pragma: no cover - the positions are the units'
            return found.group(0)
        return f"{item.unit} {problems[i]!r}"

    return _PROBLEM.sub(name, message)


#: Results of methods over counts (every input an integer), per process: a method is a pure
#: function of its counts and options, and diagnose calls it with the same counts many times.
_COUNT_RESULTS: dict[tuple, Any] = {}
_COUNT_RESULTS_MAX = 1 << 16


def _call(entry, args: tuple, options: Mapping[str, Any]):
    """``entry``'s function over ``args`` with ``options`` (its Result), remembered when every
    input is an integer and every option a plain scalar."""
    key = None
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args) and all(
        isinstance(v, (str, int, float, bool, type(None))) for v in options.values()
    ):
        key = (entry.name, args, tuple(sorted(options.items())))
        found = _COUNT_RESULTS.get(key)
        if found is not None:
            return found
    with np.errstate(all="ignore"):
        result = entry.load()(*args, **options)
    if key is not None:
        if len(_COUNT_RESULTS) >= _COUNT_RESULTS_MAX:
            _COUNT_RESULTS.clear()
        _COUNT_RESULTS[key] = result
    return result


#: Methods whose estimate is the mean of a sample, or the difference of two samples' means (of
#: the pairs' differences): their estimate is certified by the exact mean of the decimal data.
MEAN_ESTIMATES = frozenset(
    {
        "one-sample-t",
        "welch-t",
        "student-t",
        "paired-t",
        "tost-means",
        "tost-paired",
        "equivalence-interval-means",
        "equivalence-interval-paired",
        "noninferiority-means",
        "bootstrap-mean",
        "bootstrap-mean-difference",
        "bootstrap-paired-mean-difference",
        "permutation-mean",
        "permutation-mean-difference",
        "permutation-paired-mean-difference",
    }
)


def _mean_certified(entry, args, estimate):
    """The certified mean (difference) of a sample method's inputs, when the method's estimate
    is that mean (a check that the float agrees guards the list)."""
    from prereg.stats.compare import EPS, Certified, _exact_mean

    if entry.name not in MEAN_ESTIMATES or estimate is None:
        return None
    xs = [np.asarray(a, dtype=np.float64) for a in args[:2] if a is not None]
    if not xs or any(x.size == 0 for x in xs):
        return None
    value = float(sum(float(x.mean()) * (1 if i == 0 else -1) for i, x in enumerate(xs)))
    scale = sum(float(np.abs(x).mean()) * (x.size + 4) for x in xs) * EPS * 4
    if abs(value - estimate) > scale + 4 * EPS * abs(estimate):
        return None  # pragma: no cover - the method's estimate is not the plain mean

    def exact():
        out = _exact_mean(xs[0])
        if len(xs) > 1:
            out -= _exact_mean(xs[1])
        return out

    return Certified(estimate, error=scale + 4 * EPS * abs(estimate), exact=exact)


#: Methods whose estimate is the ratio of two samples' geometric means (Welch's t on the logs):
#: their estimate is certified by balls of the logs of the decimal data, as a geometric-mean
#: contrast is, so a ratio exactly on a threshold meets ``le`` and ``ge`` (its float is
#: 0.9000000000000001 or 0.8999999999999999 as the logs round).
GEOMETRIC_RATIOS = frozenset({"ratio-of-geometric-means", "noninferiority-ratio-means"})


def _ratio_certified(entry, args, estimate):
    """The certified ratio of geometric means of a ratio method's two samples (None when the
    method is not one, a sample is empty or not positive, or the float disagrees)."""
    from prereg.decide.certify import _exp, _log_mean, _minus

    if entry.name not in GEOMETRIC_RATIOS or estimate is None or len(args) < 2:
        return None
    xs = [np.asarray(a, dtype=np.float64) for a in args[:2]]
    if any(x.size == 0 or not bool(np.all(x > 0)) for x in xs):
        return None
    figure = _exp(_minus(_log_mean(xs[0]), _log_mean(xs[1])))
    if figure is None or abs(figure.value - float(estimate)) > 4 * figure.error:
        return None  # pragma: no cover - the method's estimate is not this ratio
    return figure


def _linear_contrast_certified(item, entry, args, estimate):
    """The certified Σ c_i x̄_i of ``linear-contrast-means`` (the coefficients as written, the
    means of the decimals the data write)."""
    from prereg.stats.compare import EPS, Certified, _exact_mean, exact_number

    if entry.name != "linear-contrast-means" or estimate is None or not args:
        return None
    coefficients = [exact_number(c) for c in dict(item.options)["coefficients"]]
    read = [
        (c, np.asarray(x, dtype=np.float64))
        for c, x in zip(coefficients, args[0], strict=True)
        if c
    ]
    if any(x.size == 0 for _, x in read):
        return None
    scale = sum(abs(float(c)) * float(np.abs(x).mean()) * (x.size + 4) for c, x in read) * EPS * 4
    error = scale + 4 * EPS * abs(estimate)
    return Certified(
        estimate,
        error=error,
        exact=lambda: sum((c * _exact_mean(x) for c, x in read), Fraction(0)),
    )


def _dunnett_certified(item, entry, args, estimate):
    """The certified difference of ``dunnett``'s treatment mean and control mean (the means of
    the decimals the data write), so a difference exactly on a threshold meets ``ge``/``le``."""
    from prereg.stats.compare import EPS, Certified, _exact_mean

    if entry.name != "dunnett" or estimate is None or not args:
        return None
    groups = list(args[0])
    position = dict(item.options).get("treatment")
    if not isinstance(position, int) or not 2 <= position <= len(groups):
        return None  # pragma: no cover - the method refused it first
    x0 = np.asarray(groups[0], dtype=np.float64)
    xi = np.asarray(groups[position - 1], dtype=np.float64)
    if x0.size == 0 or xi.size == 0:
        return None
    scale = sum(float(np.abs(x).mean()) * (x.size + 4) for x in (x0, xi)) * EPS * 4
    error = scale + 4 * EPS * abs(estimate)
    if abs(float(xi.mean()) - float(x0.mean()) - estimate) > error:
        return None  # pragma: no cover - the method's estimate is not this difference
    return Certified(estimate, error=error, exact=lambda: _exact_mean(xi) - _exact_mean(x0))


#: Correlations whose estimate N/√D is irrational (a rational one is in ``exact``): certified
#: by arb balls of N/√D, so a threshold is decided on the true value, not its float.
CORRELATIONS = {
    "pearson-correlation": "pearson",
    "spearman-correlation": "spearman",
    "kendall-tau-b": "kendall",
}


def _correlation_certified(item, entry, args, estimate):
    """The certified correlation (or difference of two) of a correlation method's inputs."""
    from prereg.stats import correlation
    from prereg.stats.compare import EPS, Certified

    if estimate is None or not args:
        return None
    if entry.name in CORRELATIONS and len(args) >= 2:
        ball = correlation.estimate_ball(CORRELATIONS[entry.name], args[0], args[1])
    elif entry.name == "correlation-difference":
        ball = correlation.difference_ball(dict(item.options).get("correlation"), args[0])
    else:
        return None
    if ball is None:
        return None
    # the float is √ of a correctly rounded N²/D, correctly rounded (a relative error below
    # 2·2⁻⁵³ for each correlation, |r| ≤ 1): far from a threshold it decides without a ball
    return Certified(estimate, error=8 * EPS, ball=ball)


#: Clustered methods whose estimate is a mean, or a difference of two arms' means: pooled over
#: the units (``size``; the sandwich always) or the mean of the cluster means (``equal``).
CLUSTER_MEANS = frozenset(
    {"cluster-robust-mean", "cluster-summary-t", "cluster-summary-welch-t", "cluster-bootstrap"}
)


def _cluster_certified(item, entry, args, estimate):
    """The certified estimate of a clustered method over decimal data (whole-number data have
    it in ``exact`` already): the arms' pooled means, or their means of cluster means, of the
    decimals the data write, so a difference exactly on a threshold meets ``ge`` and ``le``."""
    from prereg.stats.compare import EPS, Certified, _exact_mean

    if entry.name not in CLUSTER_MEANS or estimate is None or len(args) < 3:
        return None
    x = np.asarray(args[0], dtype=np.float64)
    cluster, group = args[1], args[2]
    # Welch's t of cluster means counts each cluster's mean once (it has no weighting option)
    default = "equal" if entry.name == "cluster-summary-welch-t" else "size"
    weighting = dict(item.options).get("weighting", default)
    if group is None:
        arms = [(np.ones(x.size, dtype=bool), 1)]
    else:
        g = np.asarray(group, dtype=object)
        arms = [(g == "a", 1), (g == "b", -1)]

    def parts(sel):
        if weighting == "size":
            return [x[sel]]
        ids = np.asarray(cluster, dtype=object)[sel]
        xs = x[sel]
        _, inv = np.unique(ids.astype(str), return_inverse=True)
        return [xs[inv.reshape(-1) == k] for k in range(int(inv.max()) + 1)] if xs.size else []

    split = [(parts(sel), sign) for sel, sign in arms]
    if any(not ps for ps, _ in split):
        return None
    value = 0.0
    scale = 0.0
    for ps, sign in split:
        value += sign * float(np.mean([float(p.mean()) for p in ps]))
        scale += sum(float(np.abs(p).mean()) * (p.size + 4) for p in ps) / len(ps) + float(
            np.mean([abs(float(p.mean())) for p in ps])
        ) * (len(ps) + 4)
    scale *= 4 * EPS
    error = scale + 4 * EPS * abs(estimate)
    if abs(value - estimate) > error:
        return None  # pragma: no cover - the method's estimate is not this mean

    def exact():
        total = Fraction(0)
        for ps, sign in split:
            total += sign * sum((_exact_mean(p) for p in ps), Fraction(0)) / len(ps)
        return total

    return Certified(estimate, error=error, exact=exact)


#: t tests whose t is ±√(t²) with t² a fraction of the decimals the data write and the margin
#: as written (the data's sums and sums of squares): their statistic is certified by a ball of
#: that square root, so a t exactly on a threshold meets ``ge`` and fails ``gt`` (0.1, 0.4 and
#: 0.1 against 0 give t = 2 exactly, whose float is 1.9999999999999998). The value: the form
#: of its t (a one-sample t of a sample or of pairs' differences, Welch's or the pooled
#: difference of two means, a contrast of group means, Dunnett's treatment against control,
#: the paired t of two arms' squared errors, ``(q_a − y_a)² − (q_b − y_b)²``).
T_TESTS = {
    "one-sample-t": "one",
    "paired-t": "paired",
    "welch-t": "welch",
    "student-t": "pooled",
    "noninferiority-means": "two",
    "tost-means": "two",
    "tost-paired": "paired",
    "dunnett": "dunnett",
    "linear-contrast-means": "contrast",
    "brier-score-difference": "brier",
    # intervals without a test: their se (and Welch's df) only
    "equivalence-interval-means": "two",
    "equivalence-interval-paired": "paired",
}
INTERVALS_T = frozenset({"equivalence-interval-means", "equivalence-interval-paired"})


def _t_form(item, entry, result):
    """``(form, margin, coefficients)`` of a t test of :data:`T_TESTS` (None when its
    registration does not say): the margin its t is against (of a TOST's two, the one whose t
    the method reports), a contrast's coefficients as written, Dunnett's treatment position."""
    from prereg.stats.compare import exact_number

    form = T_TESTS.get(entry.name)
    options = dict(item.options)
    if form is None:
        return None
    if form == "two":
        form = "welch" if options.get("variance") == "welch" else "pooled"
    if entry.name.startswith("tost-"):
        lo, hi = options.get("lower"), options.get("upper")
        if result.estimate is None or not result.se or lo is None or hi is None:
            return None
        t_lo = (result.estimate - float(lo)) / result.se
        t_hi = (result.estimate - float(hi)) / result.se
        margin = lo if abs(t_lo - result.statistic) <= abs(t_hi - result.statistic) else hi
    elif entry.name == "dunnett" or entry.name in INTERVALS_T:
        margin = 0  # an interval's se and df do not depend on a margin
    else:
        margin = options.get("margin")
    if margin is None or isinstance(margin, bool):
        return None
    coefficients = None
    if form == "contrast":
        coefficients = [exact_number(c) for c in options.get("coefficients") or ()]
    elif form == "dunnett":  # the treatment's mean less the control's, the pooled variance
        position = options.get("treatment")
        if not isinstance(position, int) or isinstance(position, bool) or position < 2:
            return None  # pragma: no cover - the method refused it first
        coefficients = position
    return form, margin, coefficients


def _moments(w) -> tuple[int, Fraction, Fraction]:
    """(n, mean, sum of squared deviations) of whole numbers, exactly."""
    from prereg.stats.exactsum import whole_sums

    n = int(w.size)
    total, squares = whole_sums(w)
    return n, Fraction(total, n), squares - Fraction(total * total, n)


def _t_squared(form: str, arrays, margin: Fraction, coefficients=None):
    """``(sign, t², se², df)`` of a t test of form ``form`` (:data:`T_TESTS`) over the decimals
    the data write and ``margin``, or None (no spread, too few values, a value of more digits
    than the decimals a double keeps); ``df`` the Welch–Satterthwaite degrees of freedom
    ``(Σ v_i)² / Σ v_i²/(n_i − 1)`` of a Welch form (a fraction too), None for the others
    (whole numbers, exact as floats)."""
    from prereg.stats.exactsum import decimal_whole

    xs = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays]
    if form == "brier":  # the outcomes are 0/1; the probabilities' decimals are scaled
        scaled = decimal_whole([xs[1], xs[3]])
        if scaled is None or xs[1].size < 2 or xs[1].size != xs[3].size:
            return None
        (wa, wb), places = scaled
        one = 10**places
        ya, yb = (np.asarray(y, dtype=np.int64).astype(object) * one for y in (xs[0], xs[2]))
        d = (wa.astype(object) - ya) ** 2 - (wb.astype(object) - yb) ** 2  # Python integers
        values = d.tolist()
        n = len(values)
        total = sum(values)
        ss = sum(v * v for v in values) - Fraction(total * total, n)
        var = ss / (n * (n - 1))
        dev = Fraction(total, n) - margin * one * one
        if var <= 0:
            return None
        return (dev > 0) - (dev < 0), dev * dev / var, var / one**4, None
    scaled = decimal_whole(xs)
    if scaled is None or any(x.size == 0 for x in xs):
        return None
    ws, places = scaled
    delta = margin * 10**places  # the margin in the same units as the whole numbers
    parts: list[tuple[Fraction, int]] = []  # a Welch form's (v_i, n_i): its df
    if form in ("one", "paired"):
        if form == "paired" and ws[0].size != ws[1].size:
            return None
        n, mean, ss = _moments(ws[0] if form == "one" else ws[0] - ws[1])
        if n < 2:
            return None
        dev, var = mean - delta, ss / (n * (n - 1))
    elif form in ("welch", "pooled"):
        (na, ma, sa), (nb, mb, sb) = _moments(ws[0]), _moments(ws[1])
        dev = ma - mb - delta
        if form == "welch":
            if na < 2 or nb < 2:
                return None
            parts = [(sa / (na * (na - 1)), na), (sb / (nb * (nb - 1)), nb)]
            var = parts[0][0] + parts[1][0]
        else:
            if na + nb < 3:
                return None
            var = (sa + sb) / (na + nb - 2) * Fraction(na + nb, na * nb)
    else:  # a contrast of group means: Σ c_i x̄_i − margin, the pooled or Welch variance
        moments = [_moments(w) for w in ws]
        cs = list(coefficients or ())[: len(moments)]
        if len(cs) != len(moments):
            return None
        dev = sum((c * m for c, (_, m, _) in zip(cs, moments, strict=True)), Fraction(0))
        dev -= delta
        big_n, g = sum(n for n, _, _ in moments), len(moments)
        read = [(c, n, ss) for c, (n, _, ss) in zip(cs, moments, strict=True) if c]
        if form == "welch-contrast":
            if any(n < 2 for _, n, _ in read):
                return None
            parts = [(c * c * ss / (n * (n - 1)), n) for c, n, ss in read]
            var = sum((v for v, _ in parts), Fraction(0))
        else:
            if big_n - g < 1:
                return None
            mse = sum((ss for _, _, ss in moments), Fraction(0)) / (big_n - g)
            var = mse * sum((c * c / n for c, n, _ in read), Fraction(0))
    if var <= 0:
        return None
    df = None
    if parts:  # the scale 10**places cancels: df of the whole numbers is the data's
        df = var * var / sum((v * v / (n - 1) for v, n in parts), Fraction(0))
    return (dev > 0) - (dev < 0), dev * dev / var, var / 10 ** (2 * places), df


def _t_certified(item, entry, args, result):
    """The certified t and se of a t test of :data:`T_TESTS` (``{"statistic": .., "se": ..}``,
    {} for another method or a missing t): each float decides when it is farther from a
    threshold than a bound on its error (the rounding of the means and of the two-pass
    variances, which grows with the values' size against their spread); otherwise ``sign ·
    √(t²)`` and ``√(se²)`` in balls, t² and se² exact."""
    from prereg.stats.compare import EPS, Certified, threshold

    statistic, se = result.statistic, result.se
    if entry.name in INTERVALS_T and se:
        statistic = 1.0  # no t: a stand-in for the bounds below, never reported
    if entry.name not in T_TESTS or statistic is None or not math.isfinite(statistic):
        return {}
    found = _t_form(item, entry, result)
    if found is None or not args or not se:
        return {}
    form, margin, coefficients = found
    if form in ("contrast", "dunnett"):
        arrays = list(args[0])
        if form == "dunnett":
            if coefficients > len(arrays):
                return {}  # pragma: no cover - the method refused it first
            coefficients = [Fraction(-1)] + [
                Fraction(int(j == coefficients)) for j in range(2, len(arrays) + 1)
            ]
            form = "contrast"
        elif dict(item.options).get("variance") == "welch":
            form = "welch-contrast"
    elif form == "brier":
        arrays = list(args[:4])
    else:
        arrays = [a for a in args[:2] if a is not None]
    xs = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays]
    if not xs or any(x.size < 1 for x in xs):
        return {}
    if form == "brier":
        if len(xs) < 4 or len({x.size for x in xs}) != 1:
            return {}
        ya, qa, yb, qb = xs
        # each squared error's float against its decimal: of the size of (|q| + 1)²
        parts = [((qa - ya) ** 2 - (qb - yb) ** 2, (np.abs(qa) + 1) ** 2 + (np.abs(qb) + 1) ** 2)]
    elif form == "paired":
        if len(xs) < 2 or xs[0].size != xs[1].size:
            return {}
        parts = [(xs[0] - xs[1], np.abs(xs[0]) + np.abs(xs[1]))]
    else:
        parts = [(x, np.abs(x)) for x in xs]
    # the relative error of each float variance: the values' rounding against their spread
    rho = 0.0
    numerator = 4 * EPS * abs(float(margin))
    weight = max([abs(float(c)) for c in coefficients or ()] + [1.0])
    for d, size in parts:
        spread = float(((d - d.mean()) ** 2).sum())
        if spread > 0:
            rho = max(rho, 16.0 * (d.size + 4) * EPS * float((size * size).sum()) / spread)
        elif form in ("one", "paired"):
            return {}
        numerator += 16.0 * (d.size + 4) * EPS * float(size.mean()) * weight
    if rho >= 0.25:
        error = se_error = None  # the float may be far off: balls decide every comparison
    else:
        # t = (estimate − margin)/se: the numerator's error over se, and se's relative error
        # (half the variance's, and the square roots' roundings)
        error = abs(statistic) * (rho + 16 * EPS) + numerator / se
        se_error = se * (rho + 16 * EPS)
    exact_margin = threshold(margin)
    kept: list = []

    def squared():
        if not kept:
            kept.append(_t_squared(form, arrays, exact_margin, coefficients))
        return kept[0]

    ball, se_ball = _root_balls(squared, statistic, se)

    out = {
        "statistic": Certified(statistic, error=error, ball=ball),
        "se": Certified(se, error=se_error, ball=se_ball),
    }
    if entry.name in INTERVALS_T:
        del out["statistic"]
    df = result.df
    if form in ("welch", "welch-contrast") and isinstance(df, float) and math.isfinite(df):

        def df_exact():
            found = squared()
            if found is None or found[3] is None:  # as above: the float
                return Fraction(df)
            return found[3]

        # Welch's df is a fraction of the decimals the data write: no float filter (a rule
        # rarely reads it), the fraction decides every comparison
        out["df"] = Certified(df, error=None, exact=df_exact)
    return out


#: Clustered methods whose t (or z), SE and, for Welch's, df are rational functions of the
#: decimals the data write (:func:`prereg.stats.clustered.exact_squares`).
CLUSTER_TESTS = frozenset({"cluster-summary-t", "cluster-summary-welch-t", "cluster-robust-mean"})


def _cluster_t_certified(item, entry, args, result):
    """The certified t (or z), SE and Welch df of a clustered method of :data:`CLUSTER_TESTS`
    ({} for another method or a missing t): ``sign · √(t²)`` and ``√(se²)`` in balls, df the
    fraction, t², se² and df formed from the data once a comparison needs them.  Their floats
    carry no error bound here (sums over clusters of residuals, whose rounding is not bounded
    against their spread), so every comparison of them is decided this way."""
    from prereg.stats.clustered import exact_squares
    from prereg.stats.compare import Certified

    statistic, se = result.statistic, result.se
    if entry.name not in CLUSTER_TESTS or statistic is None or not math.isfinite(statistic):
        return {}
    if not se or len(args) < 3:
        return {}
    options = dict(item.options)
    x, cluster, group = args[:3]
    kept: list = []

    def squared():
        if not kept:
            kept.append(
                exact_squares(
                    x,
                    cluster,
                    group,
                    arms=None if group is None else ("a", "b"),
                    method=entry.name,
                    weighting=options.get("weighting", "equal"),
                    correction=options.get("correction", "CR1"),
                    margin=options.get("margin", 0),
                )
            )
        return kept[0]

    ball, se_ball = _root_balls(squared, statistic, se)

    out = {
        "statistic": Certified(statistic, error=None, ball=ball),
        "se": Certified(se, error=None, ball=se_ball),
    }
    df = result.df
    if entry.name == "cluster-summary-welch-t" and isinstance(df, float) and math.isfinite(df):

        def df_exact():
            found = squared()
            return Fraction(df) if found is None or found[3] is None else found[3]

        out["df"] = Certified(df, error=None, exact=df_exact)
    return out


def _root_balls(squared, statistic: float, se: float):
    """(ball of t, ball of se) for a method whose ``squared()`` gives ``(sign, t², se², df)``
    as fractions once a comparison needs them (None when a value has more digits than a
    double's decimals: the floats then): ``sign · √(t²)`` and ``√(se²)``."""

    def ball(prec):
        from flint import arb

        found = squared()
        if found is None:  # a value of more digits than a double's decimals: the float
            return arb(statistic)
        sign, t2, _, _ = found
        return _arb_of(t2).sqrt() * sign

    def se_ball(prec):
        from flint import arb

        found = squared()
        if found is None:  # as above: the float
            return arb(se)
        return _arb_of(found[2]).sqrt()

    return ball, se_ball


def _fmpq(x: Fraction):
    from flint import fmpq

    return fmpq(x.numerator, x.denominator)


def _arb_of(x: Fraction):
    from flint import arb

    return arb(_fmpq(x))


def _log_sample_ball(x):
    """(n, ball of the mean of logs, ball of the variance of logs) of positive decimals."""
    from flint import arb

    from prereg.stats.compare import _grouped, decimal_fraction

    values, counts = _grouped(np.asarray(x, dtype=np.float64))
    logs = [(arb(_fmpq(decimal_fraction(v))).log(), c) for v, c in zip(values, counts, strict=True)]
    n = sum(counts)
    mean = sum((lg * c for lg, c in logs), arb(0)) / n
    var = sum(((lg - mean) ** 2 * c for lg, c in logs), arb(0)) / (n - 1)
    return n, mean, var


def _g_ball(counts):
    """G = 2 Σ O·log(O·N/(row·col)) of a 2×2 table's counts, as a ball."""
    from flint import arb

    k1, n1, k2, n2 = (int(counts[k]) for k in ("k1", "n1", "k2", "n2"))
    n = n1 + n2
    cols = (k1 + k2, n - k1 - k2)
    cells = ((k1, n1, cols[0]), (n1 - k1, n1, cols[1]), (k2, n2, cols[0]), (n2 - k2, n2, cols[1]))
    total = arb(0)
    for o, row, col in cells:
        if o:
            total += arb(o) * arb(_fmpq(Fraction(o * n, row * col))).log()
    return 2 * total


def _log_loss_ball(y, q, clip):
    """−mean(y·log q + (1 − y)·log(1 − q)) over the probabilities read as the decimals the
    data write (clipped first, as the method does), as a ball; None for an infinite loss."""
    from flint import arb

    from prereg.stats.compare import decimal_fraction

    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    qa = np.asarray(q, dtype=np.float64).reshape(-1)
    if clip is not None:
        qa = np.clip(qa, float(clip), 1.0 - float(clip))
    pairs, counts = np.unique(np.stack([ya, qa], axis=1), axis=0, return_counts=True)
    total = arb(0)
    for (yi, qi), c in zip(pairs.tolist(), counts.tolist(), strict=True):
        p = decimal_fraction(qi)
        p = p if yi == 1 else 1 - p
        if p <= 0:
            return None
        total += arb(_fmpq(p)).log() * int(c)
    return -total / int(ya.size)


#: Figures that are irrational functions of the counts or of the decimals the data write
#: (logs, roots), decided by balls of rising precision near a threshold: a method's name ->
#: the quantities so certified.
BALL_FIGURES = {
    "g-test-2x2": ("statistic",),
    "log-loss": ("estimate",),
    "noninferiority-ratio-proportions": ("statistic",),
    "ratio-of-geometric-means": ("statistic", "se", "df"),
    "noninferiority-ratio-means": ("statistic", "se", "df"),
    "farrington-manning": ("statistic", "se"),
    "miettinen-nurminen-test": ("statistic", "se"),
    "tost-proportions": ("statistic", "se"),
    "noninferiority-proportions": ("statistic", "se"),
    "tango-test": ("statistic", "se"),
    "fisher-exact": ("estimate",),
    "pearson-correlation": ("statistic",),
    "spearman-correlation": ("statistic",),
    "kendall-tau-b": ("statistic",),
}


def _fisher_z_balls(entry, options, args, result) -> dict:
    """A ball of a correlation's Fisher z statistic, (atanh r − atanh ρ0)/se, with r = N/√D of
    whole numbers (:func:`prereg.stats.correlation.estimate_ball`), ρ0 as written and se² the
    fraction the method gives; 0 exactly where the method found r = ρ0 exactly."""
    from prereg.stats import correlation
    from prereg.stats.compare import threshold

    stat, v = result.statistic, result.exact.get("se_squared")
    if stat is None or not math.isfinite(stat) or not isinstance(v, Fraction) or len(args) < 2:
        return {}
    if stat == 0 and isinstance(result.exact.get("p"), Fraction):
        return {"statistic": Fraction(0)}  # r = ρ0 exactly: z = 0, an exact P
    r_ball = correlation.estimate_ball(CORRELATIONS[entry.name], args[0], args[1])
    if r_ball is None:
        return {}
    rho0 = threshold(options["null_value"])

    def ball(prec):
        return (r_ball(prec).atanh() - _arb_of(rho0).atanh()) / _arb_of(v).sqrt()

    return {"statistic": ball}


def _tango_balls(options, result) -> dict:
    """Balls of Tango's z and se: the constrained p̃01 is the larger root of 2n·q² + B·q + C,
    B = −b − c + (2n − b + c)δ, C = −c·δ(1 − δ), fractions of the counts and the margin as
    written, so q = (−B + √(B² − 4·2n·C))/(4n) and z = (b − c − nδ)/√(n(2q + δ(1 − δ)))."""
    from prereg.stats.compare import decimal_fraction

    if result.statistic is None or not result.se:
        return {}
    b, c = int(result.counts["n10"]), int(result.counts["n01"])
    n = sum(int(result.counts[k]) for k in ("n11", "n10", "n01", "n00"))
    delta = decimal_fraction(float(options["margin"]))
    big_b = -b - c + (2 * n - b + c) * delta
    disc = max(big_b * big_b + 8 * n * c * delta * (1 - delta), Fraction(0))

    def var(prec):
        from flint import arb

        q = (arb(_fmpq(-big_b)) + arb(_fmpq(disc)).sqrt()) / (4 * n)
        return n * (2 * q + arb(_fmpq(delta * (1 - delta))))

    num = b - c - n * delta
    return {
        "statistic": lambda prec: _arb_of(num) / var(prec).sqrt(),
        "se": lambda prec: var(prec).sqrt() / n,
    }


def _restricted_balls(entry, options, result) -> dict:
    """Balls of the z and se of a score test with the proportions restricted to the margin
    (Farrington–Manning, Miettinen–Nurminen; a TOST's reported side), from the counts and the
    margin as written ({} for the Wald se, whose squares are fractions)."""
    from prereg.stats.compare import decimal_fraction
    from prereg.stats.two_proportions import restricted_balls

    name = entry.name
    if name in ("tost-proportions", "noninferiority-proportions"):
        if options.get("se") != "farrington-manning":
            return {}
    if result.statistic is None or not result.se:
        return {}
    if name == "tost-proportions":
        side = "lower" if result.statistic == result.extra.get("statistic_lower") else "upper"
        margin = options[side]
    else:
        margin = options["margin"]
    k1, n1, k2, n2 = (int(result.counts[k]) for k in ("k1", "n1", "k2", "n2"))
    delta = decimal_fraction(float(margin))
    kept: list = []
    by_prec: dict = {}

    def parts(prec):
        if not kept:
            from prereg.stats.proportions import farrington_manning_estimates

            hint = float(farrington_manning_estimates(k1, n1, k2, n2, margin=float(margin))[0])
            kept.append(
                restricted_balls(
                    k1, n1, k2, n2, delta, mn=name == "miettinen-nurminen-test", hint=hint
                )
            )
        found = kept[0]
        if found is None:  # pragma: no cover - the method had no z either
            from flint import arb

            return arb(result.statistic), arb(result.se)
        if prec not in by_prec:  # z and se from one isolation of the root at each precision
            out = found(prec)
            by_prec[prec] = out if isinstance(out, tuple) else (out, out)
        return by_prec[prec]

    return {"statistic": lambda prec: parts(prec)[0], "se": lambda prec: parts(prec)[1]}


def _ball_certified(item, entry, args, result) -> dict:
    """The figures of :data:`BALL_FIGURES` of a method, each a Certified figure whose balls
    are formed (from the counts or the data, as the method formed the float) only when a
    comparison needs them: G of the 2×2 table; the mean log loss; the z of log(p̂1/p̂2) against
    the log margin over the root of the exact se²; Welch's t, se and df on the logs.  Their
    floats carry no error bound here, so each comparison of them is decided by balls."""
    from prereg.stats.compare import Certified, decimal_fraction, threshold

    quantities = BALL_FIGURES.get(entry.name)
    if not quantities:
        return {}
    options = dict(item.options)
    balls: dict = {}
    if entry.name == "g-test-2x2":
        if result.statistic is not None:
            balls["statistic"] = lambda prec: _g_ball(result.counts)
    elif entry.name == "log-loss":
        if result.estimate is not None and math.isfinite(result.estimate) and len(args) >= 2:
            # a finite loss has no probability 0 on an outcome that happened: a finite ball
            y, q, clip = args[0], args[1], options.get("clip")
            balls["estimate"] = lambda prec: _log_loss_ball(y, q, clip)
    elif entry.name in ("farrington-manning", "miettinen-nurminen-test", "tost-proportions",
                        "noninferiority-proportions"):  # fmt: skip
        balls = _restricted_balls(entry, options, result)
    elif entry.name == "fisher-exact":
        if result.estimate is not None and result.estimate > 0:
            from prereg.stats.two_proportions import conditional_or_ball

            k1, n1, k2, n2 = (int(result.counts[k]) for k in ("k1", "n1", "k2", "n2"))
            found = conditional_or_ball(k1, n1, k2, n2)
            if found is not None:
                balls["estimate"] = found
    elif entry.name == "tango-test":
        balls = _tango_balls(options, result)
    elif entry.name in CORRELATIONS:
        balls = _fisher_z_balls(entry, options, args, result)
    elif entry.name == "noninferiority-ratio-proportions":
        ratio, v = result.exact.get("estimate"), result.exact.get("se_squared")
        if result.statistic is not None and isinstance(ratio, Fraction) and v:
            q = ratio / decimal_fraction(float(options["margin"]))

            def z_ball(prec):
                from flint import arb

                return arb(_fmpq(q)).log() / arb(_fmpq(v)).sqrt()

            balls["statistic"] = z_ball
    elif result.statistic is not None and result.se and len(args) >= 2:  # Welch on the logs
        x, y = args[0], args[1]
        log_margin = threshold(options["margin"])

        def parts(prec):
            from flint import arb

            na, ma, va = _log_sample_ball(x)
            nb, mb, vb = _log_sample_ball(y)
            wa, wb = va / na, vb / nb
            dev = ma - mb - arb(_fmpq(log_margin)).log()
            return dev, wa, wb, na, nb

        def t_ball(prec):
            dev, wa, wb, _, _ = parts(prec)
            return dev / (wa + wb).sqrt()

        def se_ball(prec):
            _, wa, wb, _, _ = parts(prec)
            return (wa + wb).sqrt()

        def df_ball(prec):
            _, wa, wb, na, nb = parts(prec)
            return (wa + wb) ** 2 / (wa * wa / (na - 1) + wb * wb / (nb - 1))

        balls = {"statistic": t_ball, "se": se_ball}
        if result.df is not None:
            balls["df"] = df_ball
    out = {}
    for name, ball in balls.items():
        value = getattr(result, name)
        if isinstance(ball, Fraction):
            out[name] = ball
        elif isinstance(value, float) and math.isfinite(value):
            out[name] = Certified(value, error=None, ball=ball)
    return out


def _root_certified(result):
    """The certified z of a method that gives z² exactly (``exact['statistic_squared']``:
    cochran-armitage, linear-contrast-proportions, pooled-z, wald-difference-test): the sign of
    its float, and balls of √(z²), so that a z exactly on a threshold meets ``ge`` and ``le``
    whatever its float's last bit (None without one)."""
    from prereg.stats.compare import Certified

    z2 = result.exact.get("statistic_squared")
    z = result.statistic
    if not isinstance(z2, Fraction) or z is None or not math.isfinite(z):
        return None
    if z2 == 0:
        return Fraction(0)
    if z == 0:
        return None  # pragma: no cover - a z of 0 has z² of 0
    sign = 1 if z > 0 else -1

    def ball(prec):
        from flint import arb, fmpq

        return arb(fmpq(z2.numerator, z2.denominator)).sqrt() * sign

    return Certified(z, error=None, ball=ball)


def _se_root_certified(result):
    """The certified se of a method that gives se² exactly (``exact['se_squared']``: a Wald
    standard error of counts, √(p̂1(1 − p̂1)/n1 + p̂2(1 − p̂2)/n2)): balls of √(se²), so that
    an se exactly on a threshold meets ``le`` and one a hair above it fails (None without)."""
    from prereg.stats.compare import Certified

    v = result.exact.get("se_squared")
    se = result.se
    if not isinstance(v, Fraction) or se is None or not math.isfinite(se) or v < 0:
        return None
    if v == 0:
        return Fraction(0) if se == 0 else None
    try:
        root = math.sqrt(float(v))
    except OverflowError:  # pragma: no cover - an se beyond a double is infinite
        return None
    if abs(root - se) > 1e-9 * root:
        return None  # pragma: no cover - se² is not the square of the reported se

    def ball(prec):
        from flint import arb, fmpq

        return arb(fmpq(v.numerator, v.denominator)).sqrt()

    return Certified(se, error=None, ball=ball)


def _record_ball(figure, quantity: str, extra: dict) -> None:
    """Once balls decide ``quantity`` (a t, a z, an se) against a threshold, what they found
    is written into the analysis' row, as for an estimate (:func:`prereg.decide.samples.
    _record_exact`): the threshold it ties (``extra["exact_figures"]``, ``p/q``) or a decimal
    inside every deciding ball (``extra["certified_figures"]``), so that the reports decide
    the comparison on the figure the verdict used, not on a float on the other side. A
    figure with an exact value (Welch's df) has that fraction written once a comparison forms
    it (``extra["exact_figures"]``)."""
    from prereg.stats.compare import Certified, decimal_text, representative, tie

    if not isinstance(figure, Certified):
        return
    if figure.exact is not None:  # a fraction (Welch's df): written once a comparison forms it
        inner, kept = figure.exact, []

        def formed() -> Fraction:
            if not kept:
                kept.append(Fraction(inner()))
                x = kept[0]
                extra.setdefault("exact_figures", {})[quantity] = f"{x.numerator}/{x.denominator}"
            return kept[0]

        figure.exact = formed
        return
    if figure.ball is None:
        return

    def on_ball(f) -> None:
        exact = extra.setdefault("exact_figures", {})
        near = extra.setdefault("certified_figures", {})
        t = tie(f)
        if t is not None:
            exact.setdefault(quantity, f"{t.numerator}/{t.denominator}")
            near.pop(quantity, None)
        elif quantity not in exact:
            near[quantity] = decimal_text(representative(f))

    figure.on_ball = on_ball


def _as_contrast(item, entry, result, args=(), scale=None) -> ContrastResult:
    """The figures rules read of an analysis' Result; with ``scale`` (``pair_rows: mean``)
    the method ran on the pairs' means times it: what is certified of the scaled means is
    divided back, as the reported figures are."""
    scaled = () if scale is None else AVERAGED[entry.name][1]
    shown = result if scale is None else _unscaled(entry.name, result, scale)
    estimate = result.estimate
    certified: dict[str, object] = {k: v for k, v in shown.exact.items() if isinstance(v, Fraction)}
    extra: dict[str, Any] = {}
    if "estimate" not in certified:
        mean = _mean_certified(entry, args, estimate)
        if mean is None:
            mean = _ratio_certified(entry, args, estimate)
        if mean is None:
            mean = _linear_contrast_certified(item, entry, args, estimate)
        if mean is None:
            mean = _cluster_certified(item, entry, args, estimate)
        if mean is None:
            mean = _dunnett_certified(item, entry, args, estimate)
        if mean is None:
            mean = _correlation_certified(item, entry, args, estimate)
        if mean is not None and "estimate" in scaled:
            mean = _divided(mean, scale)
        if mean is not None:
            from prereg.decide.samples import _record_exact

            # once a comparison forms the exact mean, extra["exact"] carries it to the
            # analysis' row, so SCORE.md decides on the figure the verdict used
            _record_exact(mean, extra)
            certified["estimate"] = mean
    if "statistic" not in certified:
        t = _t_certified(item, entry, args, result) or _cluster_t_certified(
            item, entry, args, result
        )
        if not t:
            root = _root_certified(result)
            t = {} if root is None else {"statistic": root}
        for name, figure in t.items():
            if name in scaled:
                figure = _divided(figure, scale)
            if name not in certified:
                certified[name] = figure
                _record_ball(figure, name, extra)
    for name, figure in _ball_certified(item, entry, args, result).items():
        if name not in certified:
            certified[name] = figure
            if name == "estimate":
                from prereg.decide.samples import _record_exact

                _record_exact(figure, extra)
            else:
                _record_ball(figure, name, extra)
    if "se" not in certified:
        se_root = _se_root_certified(result)
        if se_root is not None:
            certified["se"] = se_root
            _record_ball(se_root, "se", extra)
    for name in ("se", "statistic", "df"):
        v = getattr(shown, name)
        if v is not None and not isinstance(v, tuple):
            extra[name] = v
    estimate = shown.estimate
    return ContrastResult(
        item.id,
        _NAN if estimate is None else float(estimate),
        _NAN if shown.lower is None else float(shown.lower),
        _NAN if shown.upper is None else float(shown.upper),
        p=shown.p,
        extra=extra,
        certified=certified or None,
    )


def analysis_results(rules, metrics, sel, columns, earlier: Mapping[str, ContrastResult]):
    """{id: (ContrastResult, Result)} of every registered analysis, in registration order
    (an analysis of P values reads the contrasts' and earlier analyses' results)."""
    from pathlib import Path

    out: dict[str, tuple[ContrastResult, Any]] = {}
    known = dict(earlier)
    here = getattr(rules, "__file__", None)
    root = Path(here).resolve().parents[2] if here else None  # generated/<pkg>/rules.py
    for item in getattr(rules, "ANALYSES", ()):
        res, result = run(item, metrics, sel, columns, known, root)
        out[item.id] = (res, result)
        known[item.id] = res
    return out
