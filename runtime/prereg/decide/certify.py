"""The exact or certified form of each registered figure that a rule may compare.

A proportion carries its counts (``k``, ``n``), which :mod:`prereg.rules` turns into a fraction.
Every other figure of the scoring vocabulary gets here the form
:func:`prereg.stats.compare.compare` decides exactly with:

- a mean of numbers from the data: its exact value (the data read as decimals), behind a float
  filter;
- a mean of logs, a geometric mean, a ratio of geometric means: balls of rising precision of
  the logs of the decimal data (python-flint's arb);
- an ECE: ``Σ_b |k_b − Σ_{i∈b} q_i| / N`` over the decimal confidences, exactly;
- an AUROC: ``U / (n_pos · n_neg)`` from mid-ranks, a fraction;
- a difference of any two of these, or of a paired sample's arms: the difference of their
  exact (or certified) values.

Each function returns a mapping ``quantity -> figure`` for ``ContrastResult.certified``; P
values and interval bounds are not certified here (they are compared as the shortest decimal of
their float, which SCORE.json shows).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats.compare import (
    EPS,
    Certified,
    _exact_mean,
    _grouped,
    _mean_log_ball,
    decimal_sum,
)


def _once(fn):
    """``fn`` computed at its first call and kept (a rule, its quantifier counts and the
    decision may compare the same figure several times)."""
    kept: list = []

    def get():
        if not kept:
            kept.append(fn())
        return kept[0]

    return get


def _error_of_mean(x: np.ndarray) -> float:
    return (x.size + 4) * EPS * float(np.abs(x).mean()) if x.size else 0.0


def _mean(raw: np.ndarray) -> Certified | None:
    if raw.size == 0:
        return None
    return Certified(float(raw.mean()), error=_error_of_mean(raw), exact=lambda: _exact_mean(raw))


def _log_mean(raw: np.ndarray) -> Certified | None:
    if raw.size == 0:
        return None
    logs = np.log(raw)
    m = float(logs.mean())
    err = _error_of_mean(logs) + 4 * EPS * (abs(m) + 1)
    return Certified(m, error=err, ball=lambda prec: _mean_log_ball(raw))


def _exp(c: Certified | None) -> Certified | None:
    if c is None:
        return None
    v = math.exp(c.value)
    err = v * (math.expm1(c.error) + 4 * EPS) if c.error is not None else None
    ball = c.ball
    return Certified(v, error=err, ball=lambda prec: ball(prec).exp())


def ece_exact_bins(raw: np.ndarray, hits: np.ndarray, edges, closed: str) -> dict[int, Fraction]:
    """Each non-empty bin's exact share of the ECE, ``|k_b − Σ_{i∈b} q_i| / N``, over the
    decimal confidences (bin index -> fraction)."""
    from prereg.stats.calibration import bin_index

    idx = bin_index(raw, edges, closed)
    out: dict[int, Fraction] = {}
    for b in np.unique(idx).tolist():
        inside = idx == b
        conf = decimal_sum(*_grouped(raw[inside]))
        out[int(b)] = abs(int(np.count_nonzero(hits[inside])) - conf) / raw.size
    return out


def _ece_exact(raw: np.ndarray, hits: np.ndarray, edges, closed: str) -> Fraction:
    return sum(ece_exact_bins(raw, hits, edges, closed).values(), Fraction(0))


def _ece(raw: np.ndarray, hits: np.ndarray, edges, closed: str, value: float):
    if raw.size == 0 or not math.isfinite(value):
        return None
    err = (raw.size + 4 * (len(edges) + 1)) * EPS * 2
    return Certified(
        value, error=err, exact=_once(lambda: _ece_exact(raw, hits, tuple(edges), closed))
    )


def _auroc(raw: np.ndarray, hits: np.ndarray) -> Fraction | None:
    from prereg.stats.roc import average_ranks

    pos = np.asarray(hits, dtype=bool)
    n_pos = int(pos.sum())
    n_neg = int(raw.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return None
    twice = np.rint(2 * average_ranks(raw)).astype(np.int64)  # mid-ranks are halves
    u2 = int(twice[pos].sum()) - n_pos * (n_pos + 1)
    return Fraction(u2, 2 * n_pos * n_neg)


def one(m, rows: np.ndarray, value: float):
    """The certified form of a metric's figure over ``rows`` (counted row indexes or mask),
    or None (a proportion: its counts decide; a figure that cannot be formed)."""
    if m.is_proportion or m.raw is None:
        return None
    raw = m.raw[rows]
    if m.kind == "mean":
        return _log_mean(raw) if m.log else _mean(raw)
    if m.kind == "geometric_mean":
        return _exp(_log_mean(raw))
    if m.kind == "ece":
        return _ece(raw, m.hit[rows], m.bins, m.closed, value)
    if m.kind == "auroc":
        return _auroc(raw, m.hit[rows])
    return None


def minus(a, b):
    """a − b of two figures (Fractions or Certified), certified (None when either is)."""
    if a is None or b is None:
        return None
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a - b

    def parts(x):
        if isinstance(x, Fraction):
            return float(x), 0.0, (lambda: x), None
        return x.value, x.error, x.exact, x.ball

    va, ea, xa, ba = parts(a)
    vb, eb, xb, bb = parts(b)
    v = va - vb
    err = None if ea is None or eb is None else ea + eb + 2 * EPS * abs(v)
    if xa is not None and xb is not None:
        return Certified(v, error=err, exact=lambda: Fraction(xa()) - Fraction(xb()))

    def ball_of(x, exact, ball):
        if ball is not None:
            return ball

        def fixed(prec):
            from flint import arb, fmpq

            f = Fraction(exact())
            return arb(fmpq(f.numerator, f.denominator))

        return fixed

    fa, fb = ball_of(a, xa, ba), ball_of(b, xb, bb)
    return Certified(v, error=err, ball=lambda prec: fa(prec) - fb(prec))


_minus = minus


def estimate(m, rows: np.ndarray, value: float) -> dict:
    """``{"estimate": figure}`` of an estimate, or {} when its counts decide."""
    fig = one(m, rows, value)
    return {} if fig is None else {"estimate": fig}


def contrast(m, ra: np.ndarray, rb: np.ndarray, value: float, *, ratio: bool) -> dict:
    """``{"estimate": figure}`` of a contrast a − b (a / b for a ratio of geometric means)."""
    if m.is_proportion or m.raw is None:
        return {}
    if ratio:  # exp(mean log a − mean log b)
        d = minus(_log_mean(m.raw[ra]), _log_mean(m.raw[rb]))
        return {} if d is None else {"estimate": _exp(d)}
    if m.kind == "ece":
        fa, fb = (
            _ece(m.raw[r], m.hit[r], m.bins, m.closed, m.statistic(m.value[r], m.hit[r]))
            for r in (ra, rb)
        )
    else:
        fa, fb = one(m, ra, math.nan), one(m, rb, math.nan)
    d = minus(fa, fb)
    return {} if d is None else {"estimate": d}


def gate_figures(rules, metrics, table, figures: list[dict]) -> list[dict]:
    """``figures`` (per registered cell, metric id -> float; :func:`prereg.decide.evaluate.
    cell_figures`) with the figure of every cell a gate reads in its certified form when the
    metric is not a proportion (a mean, a geometric mean, an ECE, an AUROC), so that a gate
    decides it exactly as a rule would: an ECE of exactly 1/20 meets ``le 0.05`` though its
    float is 0.050000000000000176."""
    from prereg.decide.table import cell_attributes
    from prereg.rules import selection_matches

    out = figures
    for gate in getattr(rules, "GATES", ()):
        m = metrics.get(gate.metric)
        if m is not None and m.is_proportion:
            out = _proportions_exact(out, figures, gate, m, table)
            continue
        if m is None or m.raw is None:
            continue
        for ci, c in enumerate(table.cells):
            if not selection_matches(gate.where, cell_attributes(c)):
                continue
            value = figures[ci].get(gate.metric)
            if value is None or isinstance(value, (Fraction, Certified)):
                continue
            if isinstance(value, float) and math.isnan(value):
                continue
            fig = one(m, m.counted(table.cell == ci), float(value))
            if fig is not None:
                if out is figures:
                    out = [dict(f) for f in figures]
                out[ci][gate.metric] = fig
    return out


def _proportions_exact(out: list[dict], figures: list[dict], gate, m, table) -> list[dict]:
    """``out`` with a proportion's figure k/n as its Fraction in every cell the gate reads:
    its float decides a decimal threshold as the fraction does, not a threshold written as an
    exact fraction (6 of 9 against "2/3")."""
    import numpy as np

    from prereg.decide.table import cell_attributes
    from prereg.rules import selection_matches

    nc = len(table.cells)
    num = np.bincount(table.cell, weights=m.num, minlength=nc)
    den = np.bincount(table.cell, weights=m.den, minlength=nc)
    for ci, c in enumerate(table.cells):
        if not selection_matches(gate.where, cell_attributes(c)) or den[ci] <= 0:
            continue
        k, n = float(num[ci]), float(den[ci])
        if not (k.is_integer() and n.is_integer()):
            continue
        if out is figures:
            out = [dict(f) for f in figures]
        out[ci][gate.metric] = Fraction(int(k), int(n))
    return out
