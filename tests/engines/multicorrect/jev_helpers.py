"""Shared helpers for the jev-multicorrect engine tests.

The study as the tests see it is compiled from the spec: ``CONFIG`` is what a handler receives
(``ctx.config`` of the compiled study, as plain data: ``constants`` keyed by the spec's
constant ids, ``record_contracts``, ...), and what the engine's functions take.  Tests that
change a fact edit a copy with :func:`config` (a constant) or :func:`with_field` (a field of a
record contract) and hand it to the functions, or :func:`context` of it to the handlers.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from prereg.compiler.project import Project
from prereg.engines import StudyContext
from prereg.engines.multicorrect import EvaluatorRow, Prediction, PublicChoiceList
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "jev"
EXAMPLES = ROOT / "examples" / "jev"
STUDY_ID = "jev-multicorrect"
MODULE, STUDY_CTX = study_context(Project(ROOT), STUDY_ID)
CONFIG: dict[str, Any] = json.loads(json.dumps(STUDY_CTX.config))
CONSTANTS: dict[str, Any] = CONFIG["constants"]
VAL, TEST = CONSTANTS["threshold-fit"]["fit"], CONSTANTS["threshold-fit"]["evaluate"]


def config(constants: Mapping[str, Any] | None = None) -> dict:
    """A deep copy of the study's compiled config with constants changed: a mapping is merged
    into the constant's value, anything else replaces it (``config({"threshold-fit": {"ties":
    "largest"}})``)."""
    c = copy.deepcopy(CONFIG)
    for cid, value in (constants or {}).items():
        if isinstance(value, Mapping):
            c["constants"][cid].update(copy.deepcopy(dict(value)))
        else:
            c["constants"][cid] = copy.deepcopy(value)
    return c


def with_field(cfg: dict, contract_role: str, field_role: str, **attributes) -> dict:
    """``cfg`` (a copy is changed) with attributes of one field of a record contract set, say
    ``with_field(CONFIG, "lists", "candidates", name="options")``."""
    c = copy.deepcopy(cfg)
    contract = next(x for x in c["record_contracts"] if x.get("role") == contract_role)
    next(f for f in contract["fields"] if f.get("role") == field_role).update(attributes)
    return c


def context(cfg: dict | None = None, digest: str = "sha256:" + "ab" * 32) -> StudyContext:
    """A handler context with compiled config ``cfg`` (the study's when None)."""
    return StudyContext(STUDY_ID, digest, "1", CONFIG if cfg is None else cfg)


def pair(rid: str, probs, correct, split: str = VAL, candidates=None, m=None):
    """An (EvaluatorRow, Prediction) pair; ``probs`` None means a refusal (``m`` candidates,
    3 by default)."""
    if m is None:
        m = len(candidates) if candidates is not None else len(probs) if probs is not None else 3
    cands = tuple(candidates) if candidates is not None else tuple(f"c{j}" for j in range(m))
    row = EvaluatorRow(PublicChoiceList(rid, f"question {rid}", cands), frozenset(correct), split)
    pred = Prediction(rid, probs is None, None if probs is None else tuple(probs))
    return row, pred


# -- a plain-Python reference scorer, written from the study page, used as an oracle --------


def ref_metrics(pairs, t: float, multi_min: int = 2, scale: int = 100) -> dict:
    """Every split figure at threshold ``t`` by direct loops over the definitions."""
    n = len(pairs)
    exact = tp = fp = fn = 0
    gaps = []
    below = options = sep_lists = multi = 0
    no_corr = []
    refusals = refusals_empty = 0
    for row, pred in pairs:
        g = set(row.correct)
        if pred.refused:
            refusals += 1
            refusals_empty += not g
            fn += len(g)
            continue
        p = pred.probabilities
        sel = {j for j in range(len(p)) if p[j] >= t}
        exact += sel == g
        tp += len(sel & g)
        fp += len(sel - g)
        fn += len(g - sel)
        if not g:
            no_corr.append(max(p))
        if len(g) >= multi_min:
            multi += 1
            gaps.append(scale * (max(p[j] for j in g) - min(p[j] for j in g)))
            distractors = [p[j] for j in range(len(p)) if j not in g]
            if all(p[j] > d for j in g for d in distractors):
                sep_lists += 1
                options += len(g)
                below += sum(1 for j in g if p[j] < 1 / len(g))
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {
        "lists": n,
        "exact_count": exact,
        "exact_set_accuracy": exact / n if n else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "micro_precision": prec,
        "micro_recall": rec,
        "micro_f1": f1,
        "gap_count": len(gaps),
        "gap_mean": sum(gaps) / len(gaps) if gaps else None,
        "below_uniform_count": below,
        "below_uniform_options": options,
        "below_uniform_share": below / options if options else None,
        "top_k_exact_count": sep_lists,
        "top_k_exact_share": sep_lists / multi if multi else None,
        "no_correct_count": len(no_corr),
        "no_correct_max": max(no_corr) if no_corr else None,
        "no_correct_mean_max": sum(no_corr) / len(no_corr) if no_corr else None,
        "refusals": refusals,
        "refusals_empty_correct": refusals_empty,
        "refusals_nonempty_correct": refusals - refusals_empty,
    }


def exact_ece(q, y, exclude_first=False):
    """Ten-bin ECE with exact rational arithmetic and decimal edges k/10 (oracle)."""
    rows = [(Fraction(a), Fraction(b)) for a, b in zip(q, y, strict=True)]
    # decimal edges as the floats 0.1 .. 0.9 (the float comparison the convention uses)
    edges = [Fraction(k / 10) for k in range(1, 10)]

    def bin_of(v):
        return sum(1 for e in edges if v > e)

    if exclude_first:
        rows = [r for r in rows if bin_of(r[0]) > 0]
    if not rows:
        return None
    total = Fraction(0)
    for b in range(10):
        members = [r for r in rows if bin_of(r[0]) == b]
        if members:
            mq = sum(r[0] for r in members) / len(members)
            my = sum(r[1] for r in members) / len(members)
            total += Fraction(len(members), len(rows)) * abs(mq - my)
    return total
