"""Synthetic observations of the study's registered scenarios.

A scenario (``scenarios`` in the language, :mod:`prereg.decide.scenarios`) gives each row the
chance that its raw answer is right (a rate of the metric with role accuracy, first matching
rate by split, factors and the position attribute) and the chance that its first attempt fails
(``failed_attempt_rate``; the second attempt then succeeds). The constant ``respondents`` says
how an answer's P is drawn: per scenario, ``ranges`` (first match wins: ``where`` is
attribute → levels, ``{}`` matches every row) give ``[low, high]``, the answer's P is drawn
uniformly in that range, and P(yes) = P for a yes answer, 1 − P for a no.  Every draw is a
uniform from SHA-256 of ``drawMessage`` (placeholders ``{scenario}``, ``{seed}``, ``{rowId}``,
``{k}``: draw k of the row): the first 53 bits of the hash over 2^53, so a row's observation
does not depend on any other row or on order.  P(yes) is rounded half-up to ``decimals``.

Coverage: ``--coverage q`` leaves ``round_half_up((1 − q)·rows)`` rows of each registered cell
unobserved (those with the smallest drop draw): they get one failed attempt.  Without it, a
scenario's own ``coverage`` keeps ``floor(coverage·rows)`` rows of each cell (the language's
rule), the others unobserved the same way.

A scenario registered without a respondent (one for diagnose only) or a family over effects is
refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from prereg.decide import scenarios as registered
from prereg.errors import UserError
from prereg.rules import selection_matches
from prereg.stats.rounding import round_half_up

from .scoring import RowTable, ScoringSpec, cell_attributes

DRAWS = 4  # correct?, confidence, failed first attempt, coverage drop


def respondent(config: Mapping[str, Any], scenario: str) -> tuple[Mapping, Mapping, Mapping]:
    """(the constant respondents, the scenario, its respondent) of a scenario to simulate."""
    consts = config.get("constants") or {}
    r = consts.get("respondents")
    if not isinstance(r, Mapping) or not isinstance(r.get("confidence"), (list, tuple)):
        raise UserError("study config: /constants/respondents/confidence is missing")
    for key in ("drawMessage", "decimals"):
        if key not in r:
            raise UserError(f"study config: /constants/respondents/{key} is missing")
    by_id = {str(x["scenario"]): x for x in r["confidence"]}
    sc = registered.scenario(config, scenario)
    registered.fixed(sc, "--scenario")
    if scenario not in by_id:
        raise UserError(
            f"--scenario: scenario {scenario!r} has no respondent in the constant respondents"
            f" (it is registered for diagnose); simulate draws {', '.join(by_id) or 'none'}"
        )
    ranges = by_id[scenario]["ranges"]
    if not ranges or dict(ranges[-1].get("where") or {}):
        raise UserError(
            f"study config: respondent {scenario!r}: the last range must match every row"
        )
    return r, sc, by_id[scenario]


def uniforms(message: str, scenario: str, seed: int, row_ids, count: int) -> np.ndarray:
    """(rows, count) uniforms in [0, 1) from SHA-256 (see the module docstring).

    Each draw is ``(first 8 bytes of the hash as a big-endian integer >> 11) / 2**53``: the
    integer is below 2**53, so its conversion to float and the division by a power of two are
    exact, and taking the whole array at once gives the same bits as one draw at a time."""
    fmt, sha256 = message.format, hashlib.sha256
    heads = b"".join(
        [
            sha256(fmt(scenario=scenario, seed=seed, rowId=row_id, k=k).encode("utf-8")).digest()[
                :8
            ]
            for row_id in row_ids
            for k in range(count)
        ]
    )
    words = np.frombuffer(heads, dtype=">u8") >> np.uint64(11)
    return (words.astype(np.float64) / 9007199254740992.0).reshape(len(row_ids), count)


def simulate_observations(
    config: Mapping[str, Any],
    table: RowTable,
    spec: ScoringSpec,
    scenario: str,
    seed: int,
    coverage: float | None = None,
) -> list[dict[str, Any]]:
    """Observation records (one per attempt) in corpus order."""
    resp, sc, mine = respondent(config, scenario)
    if coverage is not None and not 0 <= coverage <= 1:
        raise UserError(f"--coverage: {coverage} is not a share in [0, 1]")
    u = uniforms(resp["drawMessage"], scenario, seed, table.ids, DRAWS)
    attrs = [
        {**cell_attributes(c), spec.position_attribute: label}
        for c in table.cells
        for label in spec.position_labels
    ]
    k = len(spec.position_labels)
    rates = registered.compiled_rates(sc)
    ranges = [
        ({a: tuple(str(v) for v in vs) for a, vs in dict(r.get("where") or {}).items()}, r)
        for r in mine["ranges"]
    ]
    rate_of_group = [registered.rate_for(rates, a) for a in attrs]
    range_of_group = [next(r["range"] for w, r in ranges if selection_matches(w, a)) for a in attrs]
    dropped = np.zeros(len(table.ids), dtype=bool)
    share = registered.coverage(sc)
    if coverage is not None or share < 1:
        for ci, c in enumerate(table.cells):
            idx = np.flatnonzero(table.cell == ci)
            rows = int(c["rows"])
            if coverage is not None:
                drop = int(round_half_up((1.0 - coverage) * rows, 0))
            else:
                drop = rows - registered.kept_rows(rows, share)
            order = idx[np.argsort(u[idx, 3], kind="stable")]
            dropped[order[:drop]] = True
    f = spec.fields
    decimals = int(resp["decimals"])
    fail_rate = registered.failed_attempt_rate(sc)
    out: list[dict[str, Any]] = []
    for i, row_id in enumerate(table.ids):
        base = {f["row"]: row_id, f["request"]: spec.request}
        if dropped[i]:
            out.append({**base, f["pYes"]: None, f["attempt"]: 1})
            continue
        group = int(table.cell[i]) * k + int(table.position[i])
        correct = rate_of_group[group]
        if correct is None:
            raise UserError(
                f"simulate: scenario {scenario!r} gives no rate for row {row_id} (cell"
                f" {table.cells[table.cell[i]]['id']})"
            )
        lo, hi = range_of_group[group]
        conf = lo + u[i, 1] * (hi - lo)
        says_yes = bool(table.gold_yes[i]) == bool(u[i, 0] < correct)
        p = round_half_up(conf if says_yes else 1.0 - conf, decimals)
        attempt = 1
        if u[i, 2] < fail_rate:
            out.append({**base, f["pYes"]: None, f["attempt"]: 1})
            attempt = 2
        out.append({**base, f["pYes"]: p, f["attempt"]: attempt})
    return out
