"""The diagnostic: a seeded synthetic data set and the scoring/isolation contracts checked on it.

``diagnostic(seed, config)`` builds fit and evaluate splits from ``seed`` and runs the contracts
listed in constant ``diagnostic``'s ``contracts`` (in that order).  Each returns whether it
passed and the figures behind it.  The synthetic data use only ``Generator.random`` draws
(bit-stable across numpy versions) from three streams spawned from ``SeedSequence(seed)``
(structure, answers, binary outputs), and only correctly rounded arithmetic (no logarithms or
powers, whose last bits vary between math libraries), so the figures are the same bytes on
every machine.

Synthetic lists: ``m`` candidates uniform in the configured range, ``|G|`` drawn with the
configured weights (capped at ``m``), G a uniform random subset, a refusal with the configured
rate (and at least ``empty_refusals_min`` refusals on lists with G empty, taken from the first
such lists of the fit split).  Answer probabilities are weights ``scale · u`` (u uniform) divided by their
``math.fsum``: the first option of G gets the dominant scale, the other correct options and the
distractors their own scales, so a correct option is often far below another.  Binary outputs
(one per option of every list): ``q`` is the largest of ``binary_draws.positive`` uniforms for
a correct option and the smallest of ``binary_draws.negative`` uniforms for a distractor.

Whether a seed passes is decided by the registered rule (constant ``diagnostic``'s
``hypothesis``) over the figures ``held-<contract>`` (:mod:`.figures`), by the shared
evaluator.

Contracts (ids as in the configuration):

1. ``ranking_vs_set_recovery``: on the evaluate split, some multi-correct lists rank every
   correct option first (top-|G| = G, no tie) yet are not recovered exactly at the frozen
   threshold; the engine's top-|G| count matches a plain-Python recount.
2. ``below_uniform_counted``: the engine's count of correct options below ``1/|G|`` (strictly
   separated lists) matches a plain-Python recount and is positive.
3. ``threshold_frozen``: the fitted threshold equals a plain-Python argmax over the grid on the
   fit split (ties to the configured end); ``evaluate_test`` reports that threshold even where the
   evaluate split's own best differs, and again after the evaluate data are altered; the fit is
   immutable; fitting on evaluate-split rows is refused.
4. ``overlap_refused``: an evaluate split sharing one request id with the fit split is refused;
   the clean one is accepted.
5. ``refusals_fail``: a refusal with G empty scores 0 while an answered empty-G list above its max
   is exact; a refusal adds |G| to FN; the data's exact counts match a plain-Python recount that
   counts every refusal as a failure.
6. ``public_callback_blind``: the provider receives only bare PublicChoiceList objects (three
   fields, no instance dict, JSON with exactly the three keys, a repr without the correct set);
   passing EvaluatorRows raises before the provider is called.
7. ``five_copy_gap``: five near-duplicate copies of one correct option, kept as five candidates,
   at the even allocation give the configured gap (0) and at the uneven one the configured gap
   (24), within the configured tolerance.
8. ``first_bin_exclusion_renormalised``: ECE excluding the first bin equals the ECE of the
   samples above the first bin's upper edge alone (weights over the remaining count), and
   differs from the unrenormalised partial sum.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from prereg.engines.multicorrect.config import EngineConfig, engine_config
from prereg.engines.multicorrect.ece import binary_ece
from prereg.engines.multicorrect.records import (
    BinaryOutput,
    EvaluatorRow,
    LabelLeakError,
    Prediction,
    PublicChoiceList,
    collect_public_predictions,
)
from prereg.engines.multicorrect.scoring import (
    evaluate_test,
    fit_threshold,
    list_gaps,
    pack,
    split_metrics,
    threshold_curve,
)
from prereg.errors import UserError


@dataclasses.dataclass
class Synthetic:
    fit_rows: list[EvaluatorRow]
    evaluate_rows: list[EvaluatorRow]
    answers: dict[str, tuple[float, ...] | None]  # request id -> probabilities, None = refusal
    binary: list[BinaryOutput]


def synthesize(seed: int, cfg: EngineConfig) -> Synthetic:
    """The diagnostic's synthetic data set for ``seed``."""
    d = cfg.diagnostic
    s_struct, s_answer, s_binary = (
        np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(seed).spawn(3)
    )
    weights = np.asarray(d.correct_count_weights, dtype=np.float64)
    cum = np.cumsum(weights) / weights.sum()
    rows: dict[str, list[EvaluatorRow]] = {cfg.fit_split: [], cfg.evaluate_split: []}
    answers: dict[str, tuple[float, ...] | None] = {}
    refused_flags: dict[str, bool] = {}
    for split, n in ((cfg.fit_split, d.fit_lists), (cfg.evaluate_split, d.evaluate_lists)):
        for i in range(n):
            u_m, u_g, u_r = s_struct.random(3)
            m = d.candidates_min + int(u_m * (d.candidates_max - d.candidates_min + 1))
            g = min(int(np.searchsorted(cum, u_g, side="right")), len(weights) - 1, m)
            order = np.argsort(s_struct.random(m), kind="stable")
            correct = [int(j) for j in order[:g]]
            rid = d.request_id_format.format(seed=seed, split=split, index=i)
            pub = PublicChoiceList(
                rid,
                d.question_format.format(index=i),
                tuple(d.candidate_format.format(index=j) for j in range(m)),
            )
            rows[split].append(EvaluatorRow(pub, frozenset(correct), split))
            refused_flags[rid] = bool(u_r < d.refusal_rate)
            scale = np.full(m, d.distractor_scale)
            if g:
                scale[order[1:g]] = d.other_correct_scale
                scale[order[0]] = d.dominant_scale
            w = (scale * s_answer.random(m)).tolist()
            total = math.fsum(w)
            answers[rid] = tuple(x / total for x in w)
    # at least empty_refusals_min refusals with G empty
    empty_refused = sum(
        1
        for r in rows[cfg.fit_split] + rows[cfg.evaluate_split]
        if refused_flags[r.request_id] and not r.correct
    )
    for r in rows[cfg.fit_split]:
        if empty_refused >= d.empty_refusals_min:
            break
        if not r.correct and not refused_flags[r.request_id]:
            refused_flags[r.request_id] = True
            empty_refused += 1
    for rid, refused in refused_flags.items():
        if refused:
            answers[rid] = None
    binary: list[BinaryOutput] = []
    for r in rows[cfg.fit_split] + rows[cfg.evaluate_split]:
        m = len(r.public.candidates)
        for j in range(m):
            if j in r.correct:  # the largest of k uniforms: Beta(k, 1)
                q = float(s_binary.random(d.positive_draws).max())
            else:  # the smallest of k uniforms: Beta(1, k)
                q = float(s_binary.random(d.negative_draws).min())
            binary.append(BinaryOutput(r.request_id, j, q, int(j in r.correct)))
    return Synthetic(rows[cfg.fit_split], rows[cfg.evaluate_split], answers, binary)


# -- plain-Python references (deliberately loop-based, independent of the vectorized scorer) --


def _py_exact(probs, correct, t) -> bool:
    return {j for j, p in enumerate(probs) if p >= t} == set(correct)


def _py_separated(probs, correct) -> bool:
    """Top-|G| options are G with no tie at place |G| (sorting, not min/max)."""
    g = len(correct)
    ranked = sorted(range(len(probs)), key=lambda j: -probs[j])
    if set(ranked[:g]) != set(correct):
        return False
    return g == len(probs) or probs[ranked[g - 1]] != probs[ranked[g]]


def _pairs(rows: list[EvaluatorRow], preds: Mapping[str, Prediction]):
    return [(r, preds[r.request_id]) for r in rows]


def _provider(answers: Mapping[str, tuple[float, ...] | None], seen: list):
    def provider(item):
        seen.append(item)
        return answers[item.request_id]

    return provider


def _result(passed: bool, **figures: Any) -> dict[str, Any]:
    return {"passed": bool(passed), "figures": figures}


def _c_ranking(ctx) -> dict[str, Any]:
    cfg, fit, preds, rows = ctx["cfg"], ctx["fit"], ctx["preds"], ctx["syn"].evaluate_rows
    metrics = evaluate_test(fit, _pairs(rows, preds), cfg)
    ranked = recovered = ranked_not_recovered = 0
    for r in rows:
        p = preds[r.request_id]
        if p.refused or len(r.correct) < cfg.multi_correct_min:
            continue
        sep = _py_separated(p.probabilities, r.correct)
        exact = _py_exact(p.probabilities, r.correct, fit.threshold)
        ranked += sep
        recovered += exact
        ranked_not_recovered += sep and not exact
    return _result(
        ranked_not_recovered > 0 and ranked == metrics.top_k_exact_count,
        threshold=fit.threshold,
        multi_correct_lists=metrics.multi_correct_lists,
        top_k_exact_count=metrics.top_k_exact_count,
        top_k_exact_share=metrics.top_k_exact_share,
        top_k_exact_recount=ranked,
        exact_among_multi_correct=recovered,
        ranked_but_not_recovered=ranked_not_recovered,
        exact_set_accuracy=metrics.exact_set_accuracy,
    )


def _c_below_uniform(ctx) -> dict[str, Any]:
    cfg, fit, preds, rows = ctx["cfg"], ctx["fit"], ctx["preds"], ctx["syn"].evaluate_rows
    metrics = evaluate_test(fit, _pairs(rows, preds), cfg)
    below = options = lists = 0
    for r in rows:
        p = preds[r.request_id]
        g = len(r.correct)
        if p.refused or g < cfg.multi_correct_min or not _py_separated(p.probabilities, r.correct):
            continue
        lists += 1
        options += g
        below += sum(1 for j in r.correct if p.probabilities[j] < 1.0 / g)
    return _result(
        below > 0
        and (below, options, lists)
        == (
            metrics.below_uniform_count,
            metrics.below_uniform_options,
            metrics.below_uniform_lists,
        ),
        below_uniform_count=metrics.below_uniform_count,
        below_uniform_options=metrics.below_uniform_options,
        below_uniform_lists=metrics.below_uniform_lists,
        below_uniform_share=metrics.below_uniform_share,
        recount=below,
        recount_options=options,
    )


def _c_threshold_frozen(ctx) -> dict[str, Any]:
    cfg, fit, preds, syn = ctx["cfg"], ctx["fit"], ctx["preds"], ctx["syn"]
    ts = cfg.thresholds().tolist()
    counts = []
    for t in ts:
        n = 0
        for r in syn.fit_rows:
            p = preds[r.request_id]
            n += (not p.refused) and _py_exact(p.probabilities, r.correct, t)
        counts.append(n)
    best = max(counts)
    hits = [i for i, c in enumerate(counts) if c == best]
    ref_i = hits[0] if cfg.threshold_ties == "smallest" else hits[-1]
    evaluate_pairs = _pairs(syn.evaluate_rows, preds)
    own = threshold_curve(evaluate_pairs, cfg)
    own_best = max(own, key=lambda pt: (pt.exact_count, -pt.threshold)).threshold
    first = evaluate_test(fit, evaluate_pairs, cfg)
    # alter the evaluate split: every answered list's probabilities reversed
    altered = []
    for r, p in evaluate_pairs:
        q = p if p.refused else Prediction(p.request_id, False, tuple(reversed(p.probabilities)))
        altered.append((r, q))
    second = evaluate_test(fit, altered, cfg)
    try:
        fit.threshold = 0.0  # type: ignore[misc]
        immutable = False
    except dataclasses.FrozenInstanceError:
        immutable = True
    try:
        fit_threshold(evaluate_pairs, cfg)
        refused_wrong_split = False
    except UserError:
        refused_wrong_split = True
    passed = (
        ts[ref_i] == fit.threshold
        and first.threshold == fit.threshold
        and second.threshold == fit.threshold
        and immutable
        and refused_wrong_split
    )
    return _result(
        passed,
        fitted_threshold=fit.threshold,
        reference_threshold=ts[ref_i],
        fit_exact_count=best,
        evaluate_own_best_threshold=own_best,
        evaluate_threshold_used=first.threshold,
        altered_evaluate_threshold_used=second.threshold,
        fit_immutable=immutable,
        fit_on_evaluate_split_refused=refused_wrong_split,
    )


def _c_overlap(ctx) -> dict[str, Any]:
    cfg, fit, preds, syn = ctx["cfg"], ctx["fit"], ctx["preds"], ctx["syn"]
    clean = _pairs(syn.evaluate_rows, preds)
    try:
        evaluate_test(fit, clean, cfg)
        clean_ok = True
    except UserError:
        clean_ok = False
    leaked = syn.fit_rows[0]
    moved = EvaluatorRow(leaked.public, leaked.correct, cfg.evaluate_split)
    try:
        evaluate_test(fit, clean + [(moved, preds[leaked.request_id])], cfg)
        refused, message = False, None
    except UserError as e:
        refused, message = True, e.message
    return _result(
        clean_ok and refused,
        shared_request_id=leaked.request_id,
        clean_split_accepted=clean_ok,
        overlap_refused=refused,
        message=message,
    )


def _c_refusals(ctx) -> dict[str, Any]:
    cfg, fit, preds, syn = ctx["cfg"], ctx["fit"], ctx["preds"], ctx["syn"]
    d = cfg.diagnostic
    cands = tuple(d.candidate_format.format(index=j) for j in range(cfg.candidates_min))
    m = len(cands)
    uniform = tuple([1.0 / m] * m)
    t = fit.threshold

    def one(correct, pred_probs, threshold):
        rid = d.request_id_format.format(seed=0, split=cfg.fit_split, index=0)
        pub = PublicChoiceList(rid, d.question_format.format(index=0), cands)
        row = EvaluatorRow(pub, frozenset(correct), cfg.fit_split)
        pred = Prediction(rid, pred_probs is None, pred_probs)
        return split_metrics(pack([(row, pred)], cfg, cfg.fit_split), threshold, cfg)

    # a grid threshold strictly above max p of the uniform answer, when the grid has one
    above = [x for x in cfg.thresholds().tolist() if x > max(uniform)]
    refused_empty = one((), None, t)
    answered_empty = one((), uniform, above[0]) if above else None
    refused_two = one((0, 1), None, t)
    data_ok = True
    totals = {"refusals": 0, "refusals_empty_correct": 0}
    for rows, metrics in (
        (syn.fit_rows, fit.validation),
        (syn.evaluate_rows, evaluate_test(fit, _pairs(syn.evaluate_rows, preds), cfg)),
    ):
        recount = sum(
            1
            for r in rows
            if not preds[r.request_id].refused
            and _py_exact(preds[r.request_id].probabilities, r.correct, t)
        )
        data_ok &= recount == metrics.exact_count
        totals["refusals"] += metrics.refusals
        totals["refusals_empty_correct"] += metrics.refusals_empty_correct
    passed = (
        refused_empty.exact_count == 0
        and refused_empty.refusals_empty_correct == 1
        and answered_empty is not None
        and answered_empty.exact_count == 1
        and refused_two.fn == 2
        and refused_two.exact_count == 0
        and data_ok
        and totals["refusals_empty_correct"] >= 1
    )
    return _result(
        passed,
        refusal_empty_correct_exact=refused_empty.exact_count,
        answered_empty_correct_exact_above_max=None
        if answered_empty is None
        else answered_empty.exact_count,
        refusal_two_correct_fn=refused_two.fn,
        data_exact_counts_match_recount=data_ok,
        **totals,
    )


def _c_public_blind(ctx) -> dict[str, Any]:
    cfg, syn = ctx["cfg"], ctx["syn"]
    seen: list = ctx["seen"]
    public_keys = {f.name for f in dataclasses.fields(PublicChoiceList)}
    kinds = sorted({type(x).__name__ for x in seen})
    bare = all(type(x) is PublicChoiceList and not hasattr(x, "__dict__") for x in seen)
    json_ok = all(set(json.loads(json.dumps(x.to_json()))) == public_keys for x in seen)
    # the repr is made of the three public fields and nothing else
    repr_ok = all(
        repr(x) == f"PublicChoiceList(request_id={x.request_id!r}, question={x.question!r}, "
        f"candidates={x.candidates!r})"
        for x in seen
    )
    n_lists = len(syn.fit_rows) + len(syn.evaluate_rows)
    calls: list = []
    try:
        collect_public_predictions(_provider(syn.answers, calls), syn.fit_rows[:3], cfg)
        leak_refused = False
    except LabelLeakError:
        leak_refused = True
    row_repr_ok = all(
        str(sorted(r.correct)) not in repr(r) and "frozenset" not in repr(r)
        for r in syn.fit_rows
        if r.correct
    )
    return _result(
        bare
        and json_ok
        and repr_ok
        and len(seen) == n_lists
        and leak_refused
        and not calls
        and row_repr_ok,
        lists=n_lists,
        provider_calls=len(seen),
        types_received=kinds,
        public_fields=sorted(public_keys),
        evaluator_rows_refused=leak_refused,
        provider_calls_when_refused=len(calls),
        evaluator_row_repr_hides_correct=row_repr_ok,
    )


def _c_five_copy(ctx) -> dict[str, Any]:
    cfg = ctx["cfg"]
    ref = cfg.diagnostic.five_copy
    d = cfg.diagnostic
    rid = d.request_id_format.format(seed=0, split=cfg.fit_split, index=0)
    pub = PublicChoiceList(rid, d.question_format.format(index=0), ref.candidates)
    row = EvaluatorRow(pub, frozenset(range(len(ref.candidates))), cfg.fit_split)
    gaps = []
    for probs in (ref.even, ref.uneven):
        pk = pack([(row, Prediction(rid, False, probs))], cfg, cfg.fit_split)
        gaps.append(float(list_gaps(pk, cfg)[0]))
    tol = d.tolerance
    kept = pub.candidates == ref.candidates and len(set(pub.candidates)) == len(ref.candidates)
    return _result(
        kept and abs(gaps[0] - ref.even_gap) <= tol and abs(gaps[1] - ref.uneven_gap) <= tol,
        candidates_kept=len(pub.candidates),
        distinct_texts=len(set(pub.candidates)),
        even_gap=gaps[0],
        even_gap_expected=ref.even_gap,
        uneven_gap=gaps[1],
        uneven_gap_expected=ref.uneven_gap,
    )


def _c_first_bin(ctx) -> dict[str, Any]:
    cfg, syn = ctx["cfg"], ctx["syn"]
    tol = cfg.diagnostic.tolerance
    edge = 1 / cfg.ece_bins
    outs = syn.binary
    rest = [o for o in outs if o.probability > edge]
    full = binary_ece(outs, config=cfg)
    excluded = binary_ece(outs, True, config=cfg)
    rest_only = binary_ece(rest, config=cfg)
    n, n_rest = len(outs), len(rest)
    unrenormalised = None if rest_only is None else rest_only * n_rest / n
    passed = (
        n_rest < n
        and n_rest > 0
        and excluded is not None
        and abs(excluded - rest_only) <= tol
        and abs(excluded - unrenormalised) > tol
    )
    return _result(
        passed,
        samples=n,
        first_bin_samples=n - n_rest,
        remaining_samples=n_rest,
        ece=full,
        ece_excluding_first_bin=excluded,
        ece_of_remaining_samples=rest_only,
        unrenormalised_partial_sum=unrenormalised,
    )


CONTRACTS = {
    "ranking_vs_set_recovery": _c_ranking,
    "below_uniform_counted": _c_below_uniform,
    "threshold_frozen": _c_threshold_frozen,
    "overlap_refused": _c_overlap,
    "refusals_fail": _c_refusals,
    "public_callback_blind": _c_public_blind,
    "five_copy_gap": _c_five_copy,
    "first_bin_exclusion_renormalised": _c_first_bin,
}


def diagnostic(seed: int, config: Mapping[str, Any] | EngineConfig) -> dict[str, Any]:
    """Run the configured contracts on the synthetic data of ``seed``.

    Returns ``{"seed", "passed", "contracts": [{"number", "contract", "passed", "figures"}]}``
    (JSON data; figures are unrounded).
    """
    return diagnostic_run(seed, config)[0]


def diagnostic_run(
    seed: int, config: Mapping[str, Any] | EngineConfig
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`diagnostic`'s result, and what it was computed from: ``cfg``, ``syn`` (the
    synthetic data), ``preds`` (the predictions collected) and ``fit`` (the fitted threshold)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UserError(f"seed: expected a non-negative integer, got {seed!r}")
    cfg = engine_config(config)
    syn = synthesize(seed, cfg)
    seen: list = []
    publics = [r.public for r in syn.fit_rows + syn.evaluate_rows]
    preds = collect_public_predictions(_provider(syn.answers, seen), publics, cfg)
    fit = fit_threshold(_pairs(syn.fit_rows, preds), cfg)
    ctx = {"cfg": cfg, "syn": syn, "preds": preds, "fit": fit, "seen": seen}
    results = []
    for number, cid in enumerate(cfg.diagnostic.contracts, start=1):
        res = CONTRACTS[cid](ctx)
        results.append({"number": number, "contract": cid, **res})
    return {"seed": seed, "passed": seed_passes(cfg, results), "contracts": results}, ctx


def seed_passes(cfg: EngineConfig, contracts: list[dict[str, Any]]) -> bool:
    """A seed's pass: the registered rule over this seed's held-<contract> figures (every
    contract holds, as jev registers it), decided by the shared evaluator."""
    from prereg.engines.multicorrect.figures import held_figures, passes

    figures = held_figures([{"contracts": contracts}], cfg.diagnostic.contracts)
    return passes(cfg.diagnostic.decision, figures)


__all__ = ["CONTRACTS", "diagnostic", "diagnostic_run", "synthesize"]
