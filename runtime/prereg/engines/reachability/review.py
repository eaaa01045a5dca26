"""Development rows for blind review (``config.devReview``).

For each configured outcome in order, ``items`` rows are taken round-robin over that outcome's
development cells sorted by cell key: round 0 takes each cell's first row (allocation order),
round 1 each cell's second row, and so on, until the outcome's count is reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prereg.errors import UserError

from .config import EngineConfig


def select_dev_rows(ec: EngineConfig, records: list[Mapping[str, Any]], worlds: Mapping[str, Any]):
    """Pick the review rows from corpus records (allocation order among development rows).

    Returns a list of (outcome word, record) in review order.
    """
    dev_splits = {s.word for s in ec.splits if s.role == "development"}
    by_outcome: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for rec in records:
        if rec["split"] not in dev_splits:
            continue
        world = worlds.get(rec["id"])
        if world is None:
            raise UserError(f"gold.json: no latent world for row {rec['id']}")
        by_outcome.setdefault(world["outcome"], {}).setdefault(rec["slice"], []).append(rec)
    picked = []
    for outcome, want in ec.dev_review:
        cells = by_outcome.get(outcome, {})
        keys = sorted(cells)
        got = []
        r = 0
        while len(got) < want and any(r < len(cells[k]) for k in keys):
            for k in keys:
                if len(got) == want:
                    break
                if r < len(cells[k]):
                    got.append(cells[k][r])
            r += 1
        if len(got) < want:
            raise UserError(
                f"config.devReview: outcome {outcome!r} needs {want} development rows,"
                f" the prepared corpus has {len(got)}"
            )
        picked.extend((outcome, rec) for rec in got)
    return picked
