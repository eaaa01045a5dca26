"""``diagnose`` for the reachability-probe engine: its registered rows as row groups.

A row group is a registered cell crossed with the failure-position attribute.  The positions
of a cell's rows follow from the registration alone, as the generator assigns them (row i of a
cell breaks at ``first + i mod (last − first + 1)`` of its outcome's (or layout's override)
positions, :mod:`.config`), so no corpus is generated.  Gold is ``yes`` exactly in the cells
whose outcome has no failure.

A scenario draws whether a row's raw answer is right (a rate of the metric with role accuracy).
What each kind of row contributes to each metric is found by scoring prototype rows through
:func:`.scoring.row_metrics_of`, the scoring path itself: a right answer has P(yes) on the
gold side, a wrong one on the other, a retried row a failed first attempt (null P(yes)) before
it.  Metrics that change when the prototypes are realized differently (another P(yes) on the
same side, another calibrator) depend on more than whether the answer is right: they are
unmodelled, and rules reading them are refused (the calibrated metrics).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from prereg.diagnose.design import (
    KINDS,
    RETRIED_RIGHT,
    RETRIED_WRONG,
    RIGHT,
    WRONG,
    Design,
    contributions_of,
    differing,
    group_rows_of,
)
from prereg.errors import UserError

from .config import study_config
from .scoring import RowTable, counted_attempts, position_index, row_metrics_of, scoring_spec

# Two realizations of the same kinds of row: (P(yes) of a right yes answer, calibrator blocks).
REALIZATIONS = (
    (0.75, ({"lower": 0.0, "yes": 0, "n": 4}, {"lower": 0.5, "yes": 4, "n": 4})),
    (0.95, ({"lower": 0.0, "yes": 3, "n": 4},)),
)


def row_positions(config: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(cell index, failure-position index) of every registered row, in allocation order."""
    ec = study_config(config)
    cells = config["cells"]
    if len(ec.cells) != len(cells):
        raise UserError("internal: the engine's cells differ from the registered ones")
    cell_of, pos = [], []
    for ci, (cell, c) in enumerate(zip(ec.cells, cells, strict=True)):
        if int(cell.rows) != int(c["rows"]):
            raise UserError(f"internal: cell {c['id']}: the engine's rows differ")
        failure = cell.failure
        span = None
        if failure is not None:
            count = cell.hops + 1 if failure.kind == "link" else cell.hops
            span = failure.positions.resolve(count)
        for i in range(int(cell.rows)):
            world: dict[str, Any] = {"failurePosition": None, "hops": cell.hops}
            if failure is not None:
                lo, hi = span
                world = {
                    "failurePosition": lo + i % (hi - lo + 1),
                    "failureKind": failure.kind,
                    "hops": cell.hops,
                }
            cell_of.append(ci)
            pos.append(position_index(world))
    return np.asarray(cell_of, dtype=np.int64), np.asarray(pos, dtype=np.int64)


def diagnose_design(config: Mapping[str, Any]) -> Design:
    spec = scoring_spec(config)
    ec = study_config(config)
    cells = tuple(config["cells"])
    cell_of, pos = row_positions(config)
    labels = np.asarray(spec.position_labels, dtype=object)
    attr = spec.position_attribute
    group_cell, group_attrs, group_rows = group_rows_of(cells, cell_of, {attr: labels[pos]})
    g = group_cell.size
    gold = np.array([ec.cells[c].failure is None for c in group_cell.tolist()], dtype=bool)
    label_index = {str(lv): i for i, lv in enumerate(spec.position_labels)}
    k = len(KINDS)
    ids = tuple(f"{i:064x}" for i in range(g * k))
    proto = RowTable(
        ids=ids,
        index={r: i for i, r in enumerate(ids)},
        requests=((spec.request,),) * len(ids),
        cell=np.repeat(group_cell, k),
        position=np.repeat(
            np.array([label_index[str(x)] for x in group_attrs[attr]], dtype=np.int64), k
        ),
        gold_yes=np.repeat(gold, k),
        cells=cells,
        factors=tuple(str(f["id"]) for f in config["factors"]),
    )
    f = spec.fields
    found = []
    for p_right, blocks in REALIZATIONS:
        records = []
        for j, rid in enumerate(ids):
            kind = j % k
            if kind not in (RIGHT, WRONG, RETRIED_RIGHT, RETRIED_WRONG):
                continue  # dropped: no record at all
            right = kind in (RIGHT, RETRIED_RIGHT)
            says_yes = bool(proto.gold_yes[j]) == right
            p = p_right if says_yes else 1.0 - p_right
            base = {f["row"]: rid, f["request"]: spec.request}
            attempt = 1
            if kind in (RETRIED_RIGHT, RETRIED_WRONG):
                records.append({**base, f["pYes"]: None, f["attempt"]: 1})
                attempt = 2
            records.append({**base, f["pYes"]: p, f["attempt"]: attempt})
        counted = counted_attempts(records, proto, spec, "the prototype rows")
        metrics, _, _ = row_metrics_of(
            config, proto, counted.p_yes(spec), list(blocks), spec, counted=counted
        )
        found.append(contributions_of(metrics, g))
    return Design(
        cells=cells,
        group_cell=group_cell,
        group_attributes=group_attrs,
        group_rows=group_rows,
        contributions=found[0],
        unmodelled=differing(found[0], found[1]),
        notes=(
            "A row group is a registered cell at one failure position (positions as the"
            " generator assigns them); a scenario draws whether each raw answer is right.",
            "Metrics of the calibrated answers depend on the P(yes) drawn and the calibrator,"
            " which a scenario does not model: no rule may read them.",
        ),
    )


def diagnose(ctx, args) -> int:
    from prereg.diagnose.command import run

    return run(ctx, args, diagnose_design)
