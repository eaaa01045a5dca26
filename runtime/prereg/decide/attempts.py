"""Which observation record of a row counts: the study's attempt policy.

Records are attempts. The policy's ``key`` fields identify a series of attempts (the first
names the row), ``order`` orders a series, ``where`` keeps the series that are scored (the
others are still checked), ``failed`` marks a failed attempt and ``counts`` picks the one that
counts: ``last`` (highest order; failed → unobserved), ``first`` (lowest order only, never a
fallback) or ``first-success`` (lowest order that did not fail). Unknown rows and a repeated
(key, order) are refused with their line numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prereg.decide.fields import all_of
from prereg.errors import UserError


def counted(
    policy: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    index: Mapping[str, int],
    source: str,
    *,
    max_problems: int = 50,
) -> tuple[list[int | None], np.ndarray]:
    """(record index that counts per row or None, observed mask) for records in line order."""
    key_fields = list(policy["key"])
    order = policy["order"]
    rule = policy["counts"]
    n_rows = len(index)
    n_rec = len(records)
    rec_cols = {
        name: [r.get(name) for r in records]
        for name in {
            *(c["field"] for c in policy.get("failed") or ()),
            *(c["field"] for c in policy.get("where") or ()),
            *(
                c["other"]
                for c in [*(policy.get("failed") or ()), *(policy.get("where") or ())]
                if c.get("other")
            ),
        }
    }
    failed = (
        all_of(policy.get("failed"), rec_cols, n_rec)
        if policy.get("failed")
        else np.zeros(n_rec, bool)
    )
    scored = all_of(policy.get("where"), rec_cols, n_rec)
    problems: list[str] = []
    seen: dict[tuple, int] = {}
    best: list[int | None] = [None] * n_rows  # the chosen attempt's record index so far
    for j, rec in enumerate(records):
        line = j + 1
        rid = rec[key_fields[0]]
        i = index.get(rid)
        if i is None:
            problems.append(f"{source}:{line}: unknown row id {rid!r} (not a registered row)")
            continue
        k = (*(rec.get(f) for f in key_fields), rec[order])
        first = seen.get(k)
        if first is not None:
            problems.append(
                f"{source}:{line}: attempt {rec[order]} of "
                + ", ".join(f"{f}={rec.get(f)!r}" for f in key_fields)
                + f" repeats line {first}"
            )
            continue
        seen[k] = line
        if not scored[j]:
            continue
        cur = best[i]
        if rule == "first-success" and failed[j]:
            continue
        if cur is None:
            best[i] = j
        elif rule == "last":
            if rec[order] > records[cur][order]:
                best[i] = j
        elif rec[order] < records[cur][order]:  # first, first-success
            best[i] = j
    if problems:
        shown = problems[:max_problems]
        if len(problems) > max_problems:
            shown.append(f"… and {len(problems) - max_problems} more")
        raise UserError(f"{source}: {len(problems)} problem(s) in the observations", problems=shown)
    if rule == "first":
        # Only the lowest-order attempt of a row counts, and only if it succeeded.
        chosen = [None if b is None or failed[b] else b for b in best]
    elif rule == "last":
        chosen = [None if b is None or failed[b] else b for b in best]
    else:
        chosen = best
    observed = np.array([c is not None for c in chosen], dtype=bool)
    return chosen, observed


def record_columns(
    records: Sequence[Mapping[str, Any]], chosen: Sequence[int | None], names: Sequence[str]
) -> dict[str, list[Any]]:
    """One column per observation field: the counted record's value per row (None if none)."""
    return {name: [None if c is None else records[c].get(name) for c in chosen] for name in names}
