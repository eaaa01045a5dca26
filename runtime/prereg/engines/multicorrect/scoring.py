"""Vectorized multi-correct scoring: threshold curve, fitted threshold, split metrics.

Scored lists are packed into flat numpy arrays (:class:`Packed`): the probabilities of all
answered lists back to back, a parallel boolean "is correct" array, and per-list summaries

- ``max_distractor`` (−inf when every option is correct),
- ``min_correct`` (+inf when G is empty), ``max_correct`` (−inf when G is empty),
- ``max_prob``.

Conventions (study page "Metrics at threshold t"):

- Selection is inclusive, ``Ĝ(t) = {j : p_j >= t}``, compared in float with ``t = k / den``
  (see :meth:`EngineConfig.thresholds`).  An answered list is exact at t iff
  ``max_distractor < t <= min_correct``; so with G empty it is exact only when ``t > max p``.
  A refusal is never exact, even with G empty.
- Micro counts are pooled over all lists of a split; a refusal adds ``|G|`` to FN.
  Precision ``TP/(TP+FP)`` (0 when nothing is selected), recall ``TP/(TP+FN)`` (0 when
  undefined), F1 ``2TP/(2TP+FP+FN)``, which equals ``2PR/(P+R)`` and is 0 when ``P+R = 0``.
  Ratios of integers are Python true divisions (correctly rounded).
- Gap ``Δ = scale·(max_{G} p − min_{G} p)`` in float on answered lists with
  ``|G| >= multi_correct_min``; the mean is ``math.fsum(Δ)/n`` (order-independent).
- Below-uniform share: over answered lists with ``|G| >= multi_correct_min`` whose correct
  options are all strictly above every distractor (``min_correct > max_distractor``; a tie
  disqualifies, no distractor qualifies), the pooled fraction of their correct options with
  ``p_j < 1/|G|`` (``1/|G|`` a correctly rounded float division, like the thresholds).
- Top-|G| exact share: among answered lists with ``|G| >= multi_correct_min``, the share whose
  ``|G|`` highest options are exactly G with no tie at place ``|G|``, which is the same
  condition ``min_correct > max_distractor``.
- No-correct confidence: mean (``fsum/n``) and max of ``max_j p_j`` over answered lists with
  G empty.  Refusals are counted in total and split by empty / non-empty G.
- Figures with no list to average over are ``None``.

Threshold fit: exact-set accuracy on the fit split over the grid, ties to the configured end
(``smallest``: the first maximum).  Counts, not float shares, are compared.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from itertools import chain
from typing import Any

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig, engine_config
from prereg.engines.multicorrect.records import (
    EvaluatorRow,
    Prediction,
    probability_problems,
)
from prereg.errors import UserError
from prereg.stats.rounding import round_half_up_shortest


def scaled_gap(high, low, scale: int) -> np.ndarray:
    """``scale · (high − low)`` in float, exactly as written (no compensation, no rounding).

    For the reference allocation 0.34 … 0.10 this is ``24.000000000000004``: the doubles
    nearest 0.34 and 0.10 differ by slightly more than 0.24, and that is also the double nearest
    the exact ``100·(0.34 − 0.10)`` of those doubles.  Reports show 24 when rounding is asked.
    """
    a = np.asarray(high, dtype=np.float64)
    b = np.asarray(low, dtype=np.float64)
    return float(scale) * (a - b)


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def _round(x: float | None, decimals: int | None) -> float | None:
    if x is None or decimals is None:
        return x
    return round_half_up_shortest(x, decimals)


def check_rounding(decimals: Any) -> int | None:
    """None, or a non-negative integer number of decimals."""
    if decimals is None:
        return None
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise UserError(
            f"rounding_decimals: expected a non-negative integer or nothing, got {decimals!r}"
        )
    return decimals


class _Rounded:
    """Mixin: ``FIGURES`` names the float fields that rounding applies to."""

    FIGURES: tuple[str, ...] = ()

    def rounded(self, decimals: int | None):
        if decimals is None:
            return self
        changes = {f: _round(getattr(self, f), decimals) for f in self.FIGURES}
        return type(self)(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class CurvePoint(_Rounded):
    threshold: float
    exact_count: int
    exact_set_accuracy: float | None
    tp: int
    fp: int
    fn: int
    micro_precision: float
    micro_recall: float
    micro_f1: float

    FIGURES = ("exact_set_accuracy", "micro_precision", "micro_recall", "micro_f1")


@dataclass(frozen=True)
class SplitMetrics(_Rounded):
    """Every figure the study reports for one split at one threshold."""

    threshold: float
    lists: int
    answered: int
    exact_count: int
    exact_set_accuracy: float | None
    tp: int
    fp: int
    fn: int
    micro_precision: float
    micro_recall: float
    micro_f1: float
    gap_mean: float | None
    gap_count: int
    below_uniform_share: float | None
    below_uniform_count: int
    below_uniform_options: int
    below_uniform_lists: int
    no_correct_mean_max: float | None
    no_correct_max: float | None
    no_correct_count: int
    refusals: int
    refusals_empty_correct: int
    refusals_nonempty_correct: int
    top_k_exact_share: float | None
    top_k_exact_count: int
    multi_correct_lists: int

    FIGURES = (
        "exact_set_accuracy",
        "micro_precision",
        "micro_recall",
        "micro_f1",
        "gap_mean",
        "below_uniform_share",
        "no_correct_mean_max",
        "no_correct_max",
        "top_k_exact_share",
    )


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Packed:
    """Scored lists of one split (or of several, for the retrospective curve) as flat arrays."""

    split: str | None
    request_ids: tuple[str, ...]
    refused: np.ndarray  # bool, per list
    n_correct: np.ndarray  # int64, per list
    offsets: np.ndarray  # int64, answered lists' segments in probs (n_answered + 1)
    probs: np.ndarray  # float64, answered lists back to back
    correct: np.ndarray  # bool, parallel to probs
    seg_correct: np.ndarray  # int64, |G| per answered list
    max_distractor: np.ndarray  # float64, per answered list
    min_correct: np.ndarray
    max_correct: np.ndarray
    max_prob: np.ndarray

    @property
    def n(self) -> int:
        return len(self.request_ids)

    @staticmethod
    def concat(parts: list[Packed]) -> Packed:
        """The lists of several packs, in order (split None); request ids must not repeat."""
        ids = tuple(chain.from_iterable(p.request_ids for p in parts))
        if len(set(ids)) != len(ids):
            raise UserError("cannot combine splits that share request ids")
        offsets = [np.zeros(1, dtype=np.int64)]
        base = 0
        for p in parts:
            offsets.append(p.offsets[1:] + base)
            base += int(p.probs.size)

        def cat(name: str) -> np.ndarray:
            return _frozen(np.concatenate([getattr(p, name) for p in parts]))

        return Packed(
            split=None,
            request_ids=ids,
            refused=cat("refused"),
            n_correct=cat("n_correct"),
            offsets=_frozen(np.concatenate(offsets)),
            probs=cat("probs"),
            correct=cat("correct"),
            seg_correct=cat("seg_correct"),
            max_distractor=cat("max_distractor"),
            min_correct=cat("min_correct"),
            max_correct=cat("max_correct"),
            max_prob=cat("max_prob"),
        )


def pack(
    pairs: Iterable[tuple[EvaluatorRow, Prediction]],
    config: Mapping[str, Any] | EngineConfig,
    split: str | None,
) -> Packed:
    """Pack ``(EvaluatorRow, Prediction)`` pairs, refusing (UserError) any inconsistency.

    ``split`` is the split every row must carry (None accepts the configured splits).
    Problems: wrong types, a prediction for another request id, a duplicate request id, a
    candidate count outside the configured bounds, probabilities not aligned with the list,
    not finite, outside [0, 1] or not summing to 1 within the tolerance.
    """
    cfg = engine_config(config)
    allowed = (split,) if split is not None else cfg.split_names
    ids: list[str] = []
    refused: list[bool] = []
    n_correct: list[int] = []
    flat: list[float] = []
    lens: list[int] = []
    seg_correct: list[int] = []
    corr_pos: list[int] = []
    answered_ids: list[str] = []
    problems: list[str] = []
    pos = 0
    for k, pair in enumerate(pairs):
        try:
            row, pred = pair
        except (TypeError, ValueError):
            problems.append(f"item {k}: expected an (EvaluatorRow, Prediction) pair")
            continue
        if not isinstance(row, EvaluatorRow) or not isinstance(pred, Prediction):
            problems.append(f"item {k}: expected an (EvaluatorRow, Prediction) pair")
            continue
        rid = row.public.request_id
        where = f"request {rid!r}"
        if row.split not in allowed:
            problems.append(f"{where}: split {row.split!r}, expected {' or '.join(allowed)}")
            continue
        if pred.request_id != rid:
            problems.append(f"{where}: paired with the prediction for {pred.request_id!r}")
            continue
        m = len(row.public.candidates)
        if not cfg.candidates_min <= m <= cfg.candidates_max:
            problems.append(
                f"{where}: {m} candidates, outside [{cfg.candidates_min}, {cfg.candidates_max}]"
            )
            continue
        ids.append(rid)
        g = row.correct
        n_correct.append(len(g))
        if pred.refused:
            refused.append(True)
            continue
        refused.append(False)
        p = pred.probabilities
        if len(p) != m:
            problems.append(f"{where}: {len(p)} probabilities for {m} candidates")
            continue
        flat.extend(p)
        lens.append(m)
        seg_correct.append(len(g))
        corr_pos.extend(pos + j for j in g)
        answered_ids.append(rid)
        pos += m
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for rid in ids:
            if rid in seen:
                problems.append(f"request {rid!r}: appears more than once")
            seen.add(rid)
    probs = np.array(flat, dtype=np.float64)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    for i, msg in probability_problems(probs, offsets, cfg.probability_sum_tolerance):
        problems.append(f"request {answered_ids[i]!r}: {msg}")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UserError(f"cannot score: {problems[0]}{more}", problems=problems)
    return packed_from(split, ids, refused, n_correct, probs, offsets, seg_correct, corr_pos)


def packed_from(split, ids, refused, n_correct, probs, offsets, seg_correct, corr_pos) -> Packed:
    """The :class:`Packed` of checked lists: ``ids``, ``refused`` and ``n_correct`` per list;
    the answered lists' ``probs`` back to back at ``offsets``, ``seg_correct`` (their |G|) and
    ``corr_pos`` (the positions in ``probs`` of their correct options)."""
    lens = np.diff(offsets)
    correct = np.zeros(probs.size, dtype=bool)
    correct[np.array(corr_pos, dtype=np.int64)] = True
    if lens.size:
        starts = offsets[:-1]
        max_d = np.maximum.reduceat(np.where(correct, -np.inf, probs), starts)
        min_c = np.minimum.reduceat(np.where(correct, probs, np.inf), starts)
        max_c = np.maximum.reduceat(np.where(correct, probs, -np.inf), starts)
        max_p = np.maximum(max_d, max_c)  # the larger of the two maxima is every option's
    else:
        max_d = min_c = max_c = max_p = np.zeros(0, dtype=np.float64)
    return Packed(
        split=split,
        request_ids=tuple(ids),
        refused=_frozen(np.array(refused, dtype=bool)),
        n_correct=_frozen(np.array(n_correct, dtype=np.int64)),
        offsets=_frozen(offsets),
        probs=_frozen(probs),
        correct=_frozen(correct),
        seg_correct=_frozen(np.array(seg_correct, dtype=np.int64)),
        max_distractor=_frozen(max_d),
        min_correct=_frozen(min_c),
        max_correct=_frozen(max_c),
        max_prob=_frozen(max_p),
    )


def _packed(scored, cfg: EngineConfig, split: str | None) -> Packed:
    if isinstance(scored, Packed):
        if split is not None and scored.split != split:
            raise UserError(f"expected lists of split {split!r}, got {scored.split!r}")
        return scored
    if isinstance(scored, (EvaluatorRow, Prediction, str, bytes)):
        raise UserError("expected an iterable of (EvaluatorRow, Prediction) pairs")
    return pack(scored, cfg, split)


def grid_rank(values: np.ndarray, cfg: EngineConfig) -> np.ndarray:
    """How many of the grid's thresholds (:meth:`EngineConfig.thresholds`) are ``<=`` each
    value: ``np.searchsorted(cfg.thresholds(), values, side="right")``, exactly.

    The threshold ``(first + k·step) / denominator`` is the k-th, so the float quotient
    ``(v·denominator − first) / step`` guesses the count to within one near a threshold; the
    guess is then moved until every value lies between its neighbouring thresholds, compared
    in float with the thresholds themselves, which is the binary search's answer. About half
    the time of the binary search over a million values. NaN (which no caller passes) and a
    guess that does not settle in a few steps take the binary search."""
    ts = cfg.thresholds()
    k = ts.size
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # huge values guess +-inf: clipped
        g = v * float(cfg.grid_denominator)
        g -= cfg.grid_first
        g /= cfg.grid_step
    np.floor(g, out=g)
    g += 1
    np.clip(g, 0, k, out=g)  # NaN stays NaN
    if np.isnan(g).any():
        return np.searchsorted(ts, v, side="right")
    c = g.astype(np.int64)
    # padded[c] is threshold c - 1 (-inf for c = 0), padded[c + 1] threshold c (+inf for k)
    padded = np.concatenate(([-np.inf], ts, [np.inf]))
    for _ in range(4):
        high = padded[c] > v  # threshold c - 1 is above v: fewer
        low = padded[c + 1] <= v  # threshold c is at most v: more
        low &= c < k
        if not (high.any() or low.any()):
            return c
        c -= high
        c += low
    return np.searchsorted(ts, v, side="right")


def _selected_counts(values: np.ndarray, cfg: EngineConfig) -> np.ndarray:
    """For each threshold t_k, how many values are ``>= t_k`` (float comparison)."""
    c = grid_rank(values, cfg)  # number of t_k <= value
    k = cfg.thresholds().size
    hist = np.bincount(c, minlength=k + 1)
    # values with c > k are selected at k
    return values.size - np.cumsum(hist)[:k]


def _curve_arrays(pk: Packed, cfg: EngineConfig) -> tuple[np.ndarray, ...]:
    k = cfg.thresholds().size
    a = grid_rank(pk.max_distractor, cfg)  # first t > max_d
    b = grid_rank(pk.min_correct, cfg)  # first t > min_c
    ok = a < b
    diff = np.bincount(a[ok], minlength=k + 1) - np.bincount(b[ok], minlength=k + 1)
    exact = np.cumsum(diff)[:k]
    tp = _selected_counts(pk.probs[pk.correct], cfg)
    fp = _selected_counts(pk.probs[~pk.correct], cfg)
    fn = int(pk.n_correct.sum()) - tp
    return exact, tp, fp, fn


def _point(t: float, n: int, exact: int, tp: int, fp: int, fn: int) -> CurvePoint:
    return CurvePoint(
        threshold=t,
        exact_count=exact,
        exact_set_accuracy=_share(exact, n),
        tp=tp,
        fp=fp,
        fn=fn,
        micro_precision=_ratio(tp, tp + fp),
        micro_recall=_ratio(tp, tp + fn),
        micro_f1=_ratio(2 * tp, 2 * tp + fp + fn),
    )


def threshold_curve(
    scored, config: Mapping[str, Any] | EngineConfig, *, rounding_decimals: int | None = None
) -> tuple[CurvePoint, ...]:
    """Exact-set accuracy and micro counts at every grid threshold, for any configured split(s).

    Over lists of both splits this is the retrospective curve: a diagnostic only, never used
    to choose the threshold.
    """
    cfg = engine_config(config)
    d = check_rounding(rounding_decimals)
    return _curve(_packed(scored, cfg, None), cfg, d)


def _curve(pk: Packed, cfg: EngineConfig, d: int | None) -> tuple[CurvePoint, ...]:
    ts = cfg.thresholds()
    exact, tp, fp, fn = _curve_arrays(pk, cfg)
    return tuple(
        _point(float(t), pk.n, int(e), int(a), int(b), int(c)).rounded(d)
        for t, e, a, b, c in zip(ts.tolist(), exact, tp, fp, fn, strict=True)
    )


def split_metrics(pk: Packed, threshold: float, cfg: EngineConfig) -> SplitMetrics:
    """All figures of one packed split at ``threshold`` (unrounded)."""
    t = float(threshold)
    answered = ~pk.refused
    n_ans = int(answered.sum())
    exact = int(np.count_nonzero((pk.max_distractor < t) & (t <= pk.min_correct)))
    sel = pk.probs >= t
    tp = int(np.count_nonzero(sel & pk.correct))
    fp = int(np.count_nonzero(sel & ~pk.correct))
    fn = int(pk.n_correct.sum()) - tp

    multi = pk.seg_correct >= cfg.multi_correct_min
    n_multi = int(multi.sum())
    gaps = scaled_gap(pk.max_correct[multi], pk.min_correct[multi], cfg.gap_scale)
    separated = multi & (pk.min_correct > pk.max_distractor)
    n_sep = int(separated.sum())

    lengths = np.diff(pk.offsets)
    entry_list = np.repeat(np.arange(lengths.size), lengths)
    uniform = np.ones(pk.seg_correct.size, dtype=np.float64)
    np.divide(1.0, pk.seg_correct, out=uniform, where=pk.seg_correct > 0)
    in_sep = pk.correct & separated[entry_list]
    below = int(np.count_nonzero(in_sep & (pk.probs < uniform[entry_list])))
    options = int(np.count_nonzero(in_sep))

    empty = pk.seg_correct == 0
    no_corr = pk.max_prob[empty]
    ref_empty = int(np.count_nonzero(pk.refused & (pk.n_correct == 0)))
    refusals = int(pk.refused.sum())
    return SplitMetrics(
        threshold=t,
        lists=pk.n,
        answered=n_ans,
        exact_count=exact,
        exact_set_accuracy=_share(exact, pk.n),
        tp=tp,
        fp=fp,
        fn=fn,
        micro_precision=_ratio(tp, tp + fp),
        micro_recall=_ratio(tp, tp + fn),
        micro_f1=_ratio(2 * tp, 2 * tp + fp + fn),
        gap_mean=math.fsum(gaps.tolist()) / n_multi if n_multi else None,
        gap_count=n_multi,
        below_uniform_share=_share(below, options),
        below_uniform_count=below,
        below_uniform_options=options,
        below_uniform_lists=n_sep,
        no_correct_mean_max=math.fsum(no_corr.tolist()) / no_corr.size if no_corr.size else None,
        no_correct_max=float(no_corr.max()) if no_corr.size else None,
        no_correct_count=int(no_corr.size),
        refusals=refusals,
        refusals_empty_correct=ref_empty,
        refusals_nonempty_correct=refusals - ref_empty,
        top_k_exact_share=_share(n_sep, n_multi),
        top_k_exact_count=n_sep,
        multi_correct_lists=n_multi,
    )


def list_gaps(pk: Packed, cfg: EngineConfig) -> np.ndarray:
    """Δ of each answered list with ``|G| >= multi_correct_min`` (order of the packed lists)."""
    multi = pk.seg_correct >= cfg.multi_correct_min
    return scaled_gap(pk.max_correct[multi], pk.min_correct[multi], cfg.gap_scale)


@dataclass(frozen=True, eq=False)
class FittedThreshold:
    """The frozen threshold ``numerator / denominator`` fitted on the fit split only."""

    numerator: int
    denominator: int
    threshold: float
    split: str
    request_ids: frozenset[str]
    curve: tuple[CurvePoint, ...]
    validation: SplitMetrics

    def to_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "threshold_numerator": self.numerator,
            "threshold_denominator": self.denominator,
            "curve": [p.to_json() for p in self.curve],
            self.split: self.validation.to_json(),
        }


def fit_threshold(
    validation, config: Mapping[str, Any] | EngineConfig, *, rounding_decimals: int | None = None
) -> FittedThreshold:
    """Fit the threshold on the fit split (``validation``) only.

    ``validation``: ``(EvaluatorRow, Prediction)`` pairs (every row of the fit split) or a
    :class:`Packed` of that split.  Maximises exact-set accuracy over the configured grid, ties
    to the configured end.  ``rounding_decimals`` rounds the reported figures (curve, metrics),
    never the threshold.
    """
    cfg = engine_config(config)
    d = check_rounding(rounding_decimals)
    pk = _packed(validation, cfg, cfg.fit_split)
    if pk.n == 0:
        raise UserError(f"cannot fit a threshold: no lists of split {cfg.fit_split!r}")
    ts = cfg.thresholds()
    nums = cfg.numerators()
    exact, tp, fp, fn = _curve_arrays(pk, cfg)
    best = exact.max()
    hits = np.flatnonzero(exact == best)
    i = int(hits[0] if cfg.threshold_ties == "smallest" else hits[-1])
    t = float(ts[i])
    curve = tuple(
        _point(float(tt), pk.n, int(e), int(a), int(b), int(c)).rounded(d)
        for tt, e, a, b, c in zip(ts.tolist(), exact, tp, fp, fn, strict=True)
    )
    return FittedThreshold(
        numerator=int(nums[i]),
        denominator=cfg.grid_denominator,
        threshold=t,
        split=cfg.fit_split,
        request_ids=frozenset(pk.request_ids),
        curve=curve,
        validation=split_metrics(pk, t, cfg).rounded(d),
    )


def evaluate_test(
    fit: FittedThreshold,
    test,
    config: Mapping[str, Any] | EngineConfig,
    *,
    rounding_decimals: int | None = None,
) -> SplitMetrics:
    """Score the evaluate split (``test``) at the frozen threshold of ``fit``; never refits.

    Refuses (UserError) a ``fit`` that is not a :class:`FittedThreshold`, an empty test split,
    and any request id shared with the lists the threshold was fitted on.
    """
    cfg = engine_config(config)
    d = check_rounding(rounding_decimals)
    if not isinstance(fit, FittedThreshold):
        raise UserError("evaluate_test needs the FittedThreshold returned by fit_threshold")
    pk = _packed(test, cfg, cfg.evaluate_split)
    if pk.n == 0:
        raise UserError(f"cannot evaluate: no lists of split {cfg.evaluate_split!r}")
    if not fit.request_ids.isdisjoint(pk.request_ids):
        shared = sorted(fit.request_ids.intersection(pk.request_ids))
        raise UserError(
            f"{len(shared)} request id(s) appear in both the {fit.split!r} and the "
            f"{cfg.evaluate_split!r} split; the splits must not overlap",
            problems=[f"request {rid!r}: in both splits" for rid in shared],
        )
    return split_metrics(pk, fit.threshold, cfg).rounded(d)


def retrospective_curve(
    fit: FittedThreshold,
    test,
    config: Mapping[str, Any] | EngineConfig,
    *,
    rounding_decimals: int | None = None,
) -> tuple[CurvePoint, ...]:
    """:func:`threshold_curve` over the lists ``fit`` was fitted on and ``test`` together (the
    retrospective curve) without packing them again.

    Every figure of a curve point is a count over lists, or a ratio of such counts, so the
    pooled lists' counts are the fit curve's (``fit.curve``) plus the evaluate split's, as
    integers: the points equal ``threshold_curve(Packed.concat([fit split, test]))``. Refuses
    (UserError) what :func:`evaluate_test` refuses: ``fit`` not a :class:`FittedThreshold`, an
    empty test split, a request id in both.
    """
    cfg = engine_config(config)
    d = check_rounding(rounding_decimals)
    if not isinstance(fit, FittedThreshold):
        raise UserError("retrospective_curve needs the FittedThreshold returned by fit_threshold")
    pk = _packed(test, cfg, cfg.evaluate_split)
    if pk.n == 0:
        raise UserError(f"cannot evaluate: no lists of split {cfg.evaluate_split!r}")
    if not fit.request_ids.isdisjoint(pk.request_ids):
        raise UserError("cannot combine splits that share request ids")
    exact, tp, fp, fn = _curve_arrays(pk, cfg)
    n = len(fit.request_ids) + pk.n
    return tuple(
        _point(p.threshold, n, p.exact_count + e, p.tp + a, p.fp + b, p.fn + c).rounded(d)
        for p, e, a, b, c in zip(
            fit.curve, exact.tolist(), tp.tolist(), fp.tolist(), fn.tolist(), strict=True
        )
    )
