"""Synthetic observations from the respondent scenarios a study declares.

A scenario is a list of rules, first match wins: each rule has ``where`` (attribute →
levels, over the split, the factors and the position attribute; ``{}`` matches every row),
``correct`` (the probability that the answer equals gold) and ``confidence`` (``[low, high]``:
the answer's P is drawn uniformly in that range; P(yes) = P for a yes answer, 1 − P for a no).
``failedFirstAttempt`` is the share of rows whose first attempt fails (P(yes) null) and whose
second succeeds.  Every draw is a uniform from SHA-256 of ``drawMessage`` (placeholders
``{scenario}``, ``{seed}``, ``{rowId}``, ``{k}``: draw k of the row): the first 53 bits of the
hash over 2^53, so a row's observation does not depend on any other row or on order.

``--coverage q`` (optional) leaves ``round_half_up((1 − q)·rows)`` rows of each registered cell
unobserved (those with the smallest drop draw): they get one failed attempt.

Configuration: ``config["constants"]["scenarios"]`` = ``{drawMessage, decimals (P(yes) is
rounded half-up to this many decimals), scenarios: [{id, description, failedFirstAttempt,
rules: [{where, correct, confidence}]}]}``; the last rule of a scenario must match every row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from prereg.errors import UserError
from prereg.rules import selection_matches
from prereg.stats.rounding import round_half_up

from .scoring import RowTable, ScoringSpec, cell_attributes

DRAWS = 4  # correct?, confidence, failed first attempt, coverage drop


def scenario_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    consts = config.get("constants") or {}
    s = consts.get("scenarios")
    if not isinstance(s, Mapping) or not isinstance(s.get("scenarios"), (list, tuple)):
        raise UserError("study config: /constants/scenarios/scenarios is missing")
    for key in ("drawMessage", "decimals"):
        if key not in s:
            raise UserError(f"study config: /constants/scenarios/{key} is missing")
    for j, sc in enumerate(s["scenarios"]):
        where = f"/constants/scenarios/scenarios/{j}"
        rules = sc.get("rules") or ()
        if not rules or dict(rules[-1].get("where") or {}):
            raise UserError(f"study config: {where}/rules: the last rule must match every row")
        for k, r in enumerate(rules):
            lo, hi = r["confidence"]
            if not (0 <= r["correct"] <= 1 and 0 <= lo <= hi <= 1):
                raise UserError(f"study config: {where}/rules/{k}: probabilities outside [0, 1]")
    return s


def uniforms(message: str, scenario: str, seed: int, row_ids, count: int) -> np.ndarray:
    """(rows, count) uniforms in [0, 1) from SHA-256 (see the module docstring)."""
    out = np.empty((len(row_ids), count))
    for i, row_id in enumerate(row_ids):
        for k in range(count):
            text = message.format(scenario=scenario, seed=seed, rowId=row_id, k=k)
            h = hashlib.sha256(text.encode("utf-8")).digest()
            out[i, k] = (int.from_bytes(h[:8], "big") >> 11) / 9007199254740992.0
    return out


def simulate_observations(
    config: Mapping[str, Any],
    table: RowTable,
    spec: ScoringSpec,
    scenario: str,
    seed: int,
    coverage: float | None = None,
) -> list[dict[str, Any]]:
    """Observation records (one per attempt) in corpus order."""
    sconf = scenario_config(config)
    by_id = {sc["id"]: sc for sc in sconf["scenarios"]}
    if scenario not in by_id:
        raise UserError(f"--scenario: {scenario!r} is not declared; the study has {sorted(by_id)}")
    if coverage is not None and not 0 <= coverage <= 1:
        raise UserError(f"--coverage: {coverage} is not a share in [0, 1]")
    sc = by_id[scenario]
    u = uniforms(sconf["drawMessage"], scenario, seed, table.ids, DRAWS)
    attrs = [
        {**cell_attributes(c), spec.position_attribute: label}
        for c in table.cells
        for label in spec.position_labels
    ]
    k = len(spec.position_labels)
    rules = [
        ({a: tuple(str(v) for v in vs) for a, vs in dict(r.get("where") or {}).items()}, r)
        for r in sc["rules"]
    ]
    rule_of_group = [next(r for w, r in rules if selection_matches(w, a)) for a in attrs]
    dropped = np.zeros(len(table.ids), dtype=bool)
    if coverage is not None:
        for ci, c in enumerate(table.cells):
            idx = np.flatnonzero(table.cell == ci)
            drop = int(round_half_up((1.0 - coverage) * int(c["rows"]), 0))
            order = idx[np.argsort(u[idx, 3], kind="stable")]
            dropped[order[:drop]] = True
    f = spec.fields
    decimals = int(sconf["decimals"])
    fail_rate = float(sc.get("failedFirstAttempt", 0.0))
    out: list[dict[str, Any]] = []
    for i, row_id in enumerate(table.ids):
        base = {f["row"]: row_id, f["request"]: spec.request}
        if dropped[i]:
            out.append({**base, f["pYes"]: None, f["attempt"]: 1})
            continue
        r = rule_of_group[int(table.cell[i]) * k + int(table.position[i])]
        lo, hi = r["confidence"]
        conf = lo + u[i, 1] * (hi - lo)
        says_yes = bool(table.gold_yes[i]) == bool(u[i, 0] < r["correct"])
        p = round_half_up(conf if says_yes else 1.0 - conf, decimals)
        attempt = 1
        if u[i, 2] < fail_rate:
            out.append({**base, f["pYes"]: None, f["attempt"]: 1})
            attempt = 2
        out.append({**base, f["pYes"]: p, f["attempt"]: attempt})
    return out
