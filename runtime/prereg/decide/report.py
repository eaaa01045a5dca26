"""The registered results as SCORE.json rows, shared by every engine that scores.

``figure(x)`` rounds a reported figure (None when missing) and ``p_value(x)`` a P value, by
the study's registered reporting rules; verdicts never read these rounded values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Round = Callable[[Any], Any]


def estimate_rows(rules, res, figure: Round) -> list[dict[str, Any]]:
    rows = []
    for e in rules.ESTIMATES:
        r = res.results[e.id]
        k, n, _, _ = res.counts[e.id]
        rows.append(
            {
                "id": e.id,
                "hypothesis": e.hypothesis,
                "metric": e.metric,
                "k": k,
                "n": n,
                "estimate": figure(r.estimate),
                "lower": figure(r.lower),
                "upper": figure(r.upper),
                "interval": e.interval,
                "level": e.level,
            }
        )
    return rows


def contrast_rows(
    rules, res, figure: Round, p_value: Round, *, test_options: bool = True
) -> list[dict[str, Any]]:
    """One row per registered contrast; ``test_options`` adds its alternative and margin."""
    rows = []
    for c in rules.CONTRASTS:
        r = res.results[c.id]
        k1, n1, k2, n2 = res.counts[c.id]
        row = {
            "id": c.id,
            "hypothesis": c.hypothesis,
            "metric": c.metric,
            "a": {"k": k1, "n": n1, "estimate": figure(k1 / n1 if n1 else None)},
            "b": {"k": k2, "n": n2, "estimate": figure(k2 / n2 if n2 else None)},
            "estimate": figure(r.estimate),
            "lower": figure(r.lower),
            "upper": figure(r.upper),
            "interval": c.interval,
            "level": c.level,
            "test": c.test,
        }
        if test_options:
            row.update(alternative=c.alternative, margin=c.margin)
        row.update(p=p_value(r.p), family=c.family, adjustedP=p_value(r.adjusted_p))
        rows.append(row)
    return rows


def gate_rows(rules, decision, figure: Round) -> list[dict[str, Any]]:
    rows = []
    for g in rules.GATES:
        fails = [(cid, x) for gate, cid, x in decision.failures if gate is g]
        rows.append(
            {
                "id": g.id,
                "metric": g.metric,
                "where": {k: list(v) for k, v in g.where.items()},
                "op": g.op,
                "value": g.value,
                "passed": not fails,
                "failures": [{"cell": cid, "figure": figure(x)} for cid, x in fails],
            }
        )
    return rows
