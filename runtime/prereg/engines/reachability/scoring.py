"""Scoring a prepared reachability study: what is specific to the engine, around prereg.decide.

The study registers what is decided in the vocabulary: which observation record counts
(``attempts``), the answers and whether they are right (``derived_fields``), what each metric
computes (``metrics[].compute``) and the rules (compiled into ``generated/<study>/rules.py``).
:mod:`prereg.decide` evaluates all of it; this module supplies the rows and the fields only the
engine knows, and the figures the vocabulary cannot state.

Rows.  Each corpus row belongs to the registered cell whose split and factor levels equal the
row's split and its gold world's values (the world carries each factor's level under the
factor's id; integers are compared as their decimal text).  The engine derives one row
attribute, the failure position, from the world's ``failurePosition``, ``failureKind``
(``link`` or ``relay``) and ``hops``: ``none`` without a failure; ``first`` at position 0;
``last`` at link ``hops`` or relay ``hops − 1``; else ``interior`` (the labels are the
study's).  Selections in rules may name the split (``split``), any factor and that attribute.

Observations.  The attempt policy picks each row's counted record; the engine adds its own
check that a record's request is one the row has (the corpus lists each row's requests).  The
scored request is the value the policy's ``where`` requires of the field with role
``request``.

Row fields the engine provides (registered with the engine, :mod:`.plugin`, so the compiler
accepts conditions naming them): ``gold`` (the row's gold label), ``calibratedPYes``
(the isotonic calibrator applied to the counted P(yes), null when unobserved) and
``calibratedConfidence`` (max(c, 1 − c)).

Metrics by role (``metrics[].role``): ``coverage``, ``accuracy``, ``saidYes``,
``calibratedAccuracy`` and ``meanConfidence`` are computed by prereg.decide from their compute
blocks; ``ece`` (decile ECE of the calibrated P(yes) per cell) and ``auroc`` (of raw P(yes) per
group) are computed here and must have none.  Per cell the engine also reports the
calibration-unreliable flag and raw accuracy by failure position.

The ``scoring`` constant (``config["constants"]["scoring"]``):

- ``schemaVersion``: the schema id written into SCORE.json.
- ``cellInterval``: ``{method, level}``: the proportion-interval method (by its registered
  name, :mod:`prereg.stats.methods`) of the per-cell accuracies.
- ``unreliableGap``: a cell's calibration is unreliable iff mean confidence − calibrated
  accuracy exceeds this and the calibrated accuracy's upper bound is below the mean confidence
  (both decided exactly, as every registered threshold: :func:`unreliable_calibration`).
- ``decimals``: report figures are rounded half-up to this many decimals; ``pValueDigits``:
  P values are reported with this many significant digits.  Verdicts use unrounded figures
  (unless a rule itself names ``decimals``).
- ``position``: ``{attribute, none, first, interior, last}``: the row attribute's id and labels.
- ``auroc``: ``{where: {attribute: [levels]}, groupBy: [factors], factor, positive: [levels],
  negative: [levels], interval: hanley-mcneil, z}``: per group of ``groupBy`` levels among the
  rows matching ``where``, the AUROC of raw P(yes) between rows whose ``factor`` is a positive
  level and rows whose ``factor`` is a negative level (pooled), and per negative level.

The study's registered decision is evaluated after the verdicts (:mod:`prereg.decide.decision`).

The two inputs are the record contracts (``config["record_contracts"]``) with ``role``
``observation`` and ``calibrator``; their fields' roles name what the engine reads:
``row``, ``request``, ``pYes``, ``attempt`` of an observation (:data:`OBSERVATION_ROLES`) and
``id``, ``effectiveAt``, ``validDays``, ``blocks``, ``digest`` of a calibrator artifact
(:data:`CALIBRATOR_ROLES`, see :mod:`.calibrator`).  Other fields may carry no role.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from operator import itemgetter
from typing import Any

import numpy as np

from prereg.decide import attempts as attempt_policy
from prereg.decide import table as decide_table
from prereg.decide.columns import Column
from prereg.decide.evaluate import Selections, cell_counts, decide_all, registered_results
from prereg.decide.fields import derive, engine_columns, referenced_fields
from prereg.decide.metrics import RowMetric, row_metrics
from prereg.decide.report import contrast_rows, estimate_rows, gate_rows
from prereg.decide.table import cell_attributes
from prereg.engines.contract_roles import contract_for, names_by_role
from prereg.errors import UserError
from prereg.rules import selection_matches
from prereg.stats.calibration import apply_isotonic, decile_ece

from .spec_checks import DECIDED_ROLES as DECIDED
from .spec_checks import ENGINE_ROLES as COMPUTED_HERE

SPLIT = decide_table.SPLIT
ROLES = (*DECIDED, *COMPUTED_HERE)
POSITION_KEYS = ("none", "first", "interior", "last")
OBSERVATION_ROLES = ("row", "request", "pYes", "attempt")
CALIBRATOR_ROLES = ("id", "effectiveAt", "validDays", "blocks", "digest")
_ENGINE = "reachability-probe"


# -- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoringSpec:
    schema_version: str
    request: str  # the scored request (from the attempt policy)
    policy: Mapping[str, Any]  # the attempt policy
    observation: Mapping[str, Any]  # the observation record contract
    read_fields: frozenset[str]  # the fields derived fields and metrics name
    contracts: Mapping[str, str]  # input role -> record contract id
    fields: Mapping[str, str]  # observation role -> field name
    calibrator_fields: Mapping[str, str]  # calibrator role -> field name
    metrics: Mapping[str, str]  # metric role -> metric id
    cell_interval: str
    cell_level: float
    unreliable_gap: float
    decimals: int
    p_digits: int
    position_attribute: str
    position_labels: tuple[str, ...]  # in POSITION_KEYS order
    auroc: Mapping[str, Any]
    label_yes: str
    label_no: str


def _need(obj: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(obj, Mapping) or key not in obj:
        raise UserError(f"study config: {where}/{key} is missing")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise UserError(f"study config: {where}/{key} has the wrong type ({type(value).__name__})")
    return value


def _metric_roles(config: Mapping[str, Any]) -> dict[str, str]:
    """``{role: metric id}`` for the engine's metric roles (see the module docstring)."""
    by_role: dict[str, Mapping[str, Any]] = {}
    for m in config.get("metrics") or ():
        if m.get("role") is not None:
            by_role[m["role"]] = m
    unknown = sorted(set(by_role) - set(ROLES))
    if unknown:
        raise UserError(
            f"engine configuration: metric role(s) {unknown} are not the {_ENGINE} engine's"
            f" (it reads roles {', '.join(ROLES)})"
        )
    missing = [r for r in ROLES if r not in by_role]
    if missing:
        raise UserError(
            f"engine configuration: no metric has role {', '.join(repr(r) for r in missing)}"
            f" (the {_ENGINE} engine reads roles {', '.join(ROLES)})"
        )
    for role in DECIDED:
        if not by_role[role].get("compute"):
            raise UserError(
                f"engine configuration: metric {by_role[role]['id']!r} (role {role}) has no"
                " compute block; the engine computes it from its registration"
            )
    for role in COMPUTED_HERE:
        if by_role[role].get("compute"):
            raise UserError(
                f"engine configuration: metric {by_role[role]['id']!r} (role {role}) is computed"
                " by the engine; remove its compute block"
            )
    return {r: str(by_role[r]["id"]) for r in ROLES}


def _scored_request(policy: Mapping[str, Any], fields: Mapping[str, str]) -> str:
    """The request the policy scores: its ``where`` condition ``<request field> eq <value>``."""
    if (
        list(policy.get("key") or ())[:1] != [fields["row"]]
        or policy.get("order") != fields["attempt"]
    ):
        raise UserError(
            f"engine configuration: the attempt policy's first key and order must be the"
            f" observation fields with roles row and attempt ({fields['row']}, {fields['attempt']})"
        )
    if fields["request"] not in policy["key"]:
        raise UserError(
            f"engine configuration: the attempt policy's key must include the request field"
            f" {fields['request']!r} (attempts are numbered per request)"
        )
    found = [
        c.get("value")
        for c in policy.get("where") or ()
        if c.get("field") == fields["request"] and c.get("op") == "eq" and c.get("other") is None
    ]
    if len(found) != 1 or not isinstance(found[0], str):
        raise UserError(
            "engine configuration: the attempt policy must score one request:"
            f" where {fields['request']} eq <request id>"
        )
    return found[0]


def scoring_spec(config: Mapping[str, Any]) -> ScoringSpec:
    """The checked ``scoring`` constant, attempt policy, metric roles and contracts (plus
    ``labels`` and ``decision``) of a study config."""
    consts = _need(config, "constants", "", Mapping)
    s = _need(consts, "scoring", "/constants", Mapping)
    w = "/constants/scoring"
    labels = _need(consts, "labels", "/constants", Mapping)
    cell = _need(s, "cellInterval", w, Mapping)
    pos = _need(s, "position", w, Mapping)
    auc = dict(_need(s, "auroc", w, Mapping))
    for key, kind in (
        ("where", Mapping),
        ("groupBy", (list, tuple)),
        ("factor", str),
        ("positive", (list, tuple)),
        ("negative", (list, tuple)),
        ("interval", str),
        ("z", (int, float)),
    ):
        _need(auc, key, w + "/auroc", kind)
    if auc["interval"] != "hanley-mcneil":
        raise UserError(f"study config: {w}/auroc/interval: only hanley-mcneil is implemented")
    observation = contract_for(config, "observation", _ENGINE)
    calibrator = contract_for(config, "calibrator", _ENGINE)
    contracts = {"observation": observation["id"], "calibrator": calibrator["id"]}
    fields = names_by_role(observation, OBSERVATION_ROLES, _ENGINE)
    calibrator_fields = names_by_role(calibrator, CALIBRATOR_ROLES, _ENGINE)
    policy = config.get("attempts")
    if not isinstance(policy, Mapping):
        raise UserError("study config: the spec registers no attempt policy (section attempts)")
    if policy.get("contract") != observation["id"]:
        raise UserError(
            f"study config: the attempt policy reads contract {policy.get('contract')!r}, not the"
            f" observation contract {observation['id']!r}"
        )
    return ScoringSpec(
        schema_version=_need(s, "schemaVersion", w, str),
        request=_scored_request(policy, fields),
        policy=policy,
        observation=observation,
        read_fields=frozenset(referenced_fields(config)),
        contracts=contracts,
        fields=fields,
        calibrator_fields=calibrator_fields,
        metrics=_metric_roles(config),
        cell_interval=_need(cell, "method", w + "/cellInterval", str),
        cell_level=float(_need(cell, "level", w + "/cellInterval", (int, float))),
        unreliable_gap=float(_need(s, "unreliableGap", w, (int, float))),
        decimals=int(_need(s, "decimals", w, int)),
        p_digits=int(_need(s, "pValueDigits", w, int)),
        position_attribute=_need(pos, "attribute", w + "/position", str),
        position_labels=tuple(_need(pos, k, w + "/position", str) for k in POSITION_KEYS),
        auroc=auc,
        label_yes=_need(labels, "yes", "/constants/labels", str),
        label_no=_need(labels, "no", "/constants/labels", str),
    )


# -- rows ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowTable:
    """The registered rows in corpus order, with their cell, position and gold label."""

    ids: tuple[str, ...]
    index: Mapping[str, int]
    requests: tuple[tuple[str, ...], ...]
    cell: np.ndarray  # int: index into cells
    position: np.ndarray  # int: index into POSITION_KEYS
    gold_yes: np.ndarray  # bool
    cells: tuple[Mapping[str, Any], ...]  # config cells
    factors: tuple[str, ...]

    def decided(self, spec: ScoringSpec) -> decide_table.RowTable:
        """The rows as prereg.decide sees them: cell and the failure-position attribute."""
        labels = np.asarray(spec.position_labels, dtype=object)
        return decide_table.RowTable(
            ids=self.ids,
            cell=self.cell,
            cells=self.cells,
            attributes={spec.position_attribute: labels[self.position]},
        )

    def gold(self, spec: ScoringSpec) -> Column:
        """The gold label of every row (the engine field ``gold``)."""
        words = np.asarray([spec.label_no, spec.label_yes], dtype=object)
        return Column.strings(words[self.gold_yes.astype(np.int64)], np.zeros(len(self.ids), bool))


def position_index(world: Mapping[str, Any]) -> int:
    """Index into POSITION_KEYS of a world's failure position (see the module docstring)."""
    pos = world.get("failurePosition")
    if pos is None:
        return 0
    if pos == 0:
        return 1
    hops = int(world["hops"])
    kind = world.get("failureKind")
    if (kind == "link" and pos == hops) or (kind == "relay" and pos == hops - 1):
        return 3
    return 2


def world_keys(config: Mapping[str, Any], factors: Sequence[str]) -> tuple[str, ...]:
    """The key of each factor's level in a gold world: a world names the part a factor plays in
    the design (``pool``, ``hops``, ``outcome``, ``layout``), constant ``factor-roles`` gives
    the factor playing it."""
    roles = (config.get("constants") or {}).get("factor-roles") or {}
    part = {str(fid): str(role) for role, fid in roles.items()}
    return tuple(part.get(f, f) for f in factors)


def row_table(
    config: Mapping[str, Any],
    spec: ScoringSpec,
    records: Iterable[tuple[str, str, Sequence[str]]],
    gold: Mapping[str, Any],
) -> RowTable:
    """Rows from ``(row id, split, request ids)`` in corpus order and the gold object."""
    cells = tuple(config["cells"])
    factors = tuple(str(f["id"]) for f in config["factors"])
    by_key = {
        (str(c["split"]), *(str(c["levels"][f]) for f in factors)): i for i, c in enumerate(cells)
    }
    keys = world_keys(config, factors)
    labels = gold["labels"]
    worlds = gold["worlds"]
    records = list(records)
    fast = _rows_by_column(records, keys, by_key, spec, labels, worlds)
    if fast is not None:
        ids, reqs, cell, position, gold_yes = fast
    else:  # some row is not right: the loop below names the first
        ids, reqs, cell, position, gold_yes = _rows_one_by_one(
            records, keys, by_key, spec, labels, worlds
        )
    index = {r: i for i, r in enumerate(ids)}
    if len(index) != len(ids):
        raise UserError("corpus: a row id occurs twice")
    counts = np.bincount(np.asarray(cell, dtype=np.int64), minlength=len(cells))
    for c, n in zip(cells, counts.tolist(), strict=True):
        if n != int(c["rows"]):
            raise UserError(f"corpus: cell {c['id']} has {n} rows, the study registers {c['rows']}")
    return RowTable(
        ids=tuple(ids),
        index=index,
        requests=tuple(reqs),
        cell=np.asarray(cell, dtype=np.int64),
        position=np.asarray(position, dtype=np.int64),
        gold_yes=np.asarray(gold_yes, dtype=bool),
        cells=cells,
        factors=factors,
    )


def _rows_by_column(records, factors, by_key, spec, labels, worlds):
    """(ids, requests, cell, position, gold yes) of the rows, one field at a time over all
    rows (the look-ups run as C loops), or None when some row is not right or anything is
    unusual (then :func:`_rows_one_by_one` says so, or fails, exactly as it always did)."""
    yes, no = spec.label_yes, spec.label_no
    try:
        ids = [r[0] for r in records]
        world_of = list(map(worlds.get, ids))
        label_of = list(map(labels.get, ids))
        if None in world_of or label_of.count(yes) + label_of.count(no) != len(ids):
            return None
        if not all(type(w) is dict for w in world_of):
            return None
        columns = [_as_text([w.get(f) for w in world_of]) for f in factors]
        splits = _as_text([r[1] for r in records])
        cell = list(map(by_key.get, zip(splits, *columns, strict=True)))
        if None in cell:
            return None
        reqs = [tuple(r[2]) for r in records]
    except Exception:
        return None
    # position_index's first two cases inline; its failures are the row loop's too
    failure = [w.get("failurePosition") for w in world_of]
    position = [
        0 if f is None else 1 if f == 0 else position_index(w)
        for w, f in zip(world_of, failure, strict=True)
    ]
    return ids, reqs, cell, position, [label == yes for label in label_of]


def _as_text(values: list) -> list[str]:
    """``str`` of each value: strings as they are, integers through one ``str`` per distinct
    value (a column of levels holds a few)."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return values
    if kinds == {int}:
        text = {v: str(v) for v in set(values)}
        return list(map(text.__getitem__, values))
    return list(map(str, values))


def _rows_one_by_one(records, factors, by_key, spec, labels, worlds):
    """The same as :func:`_rows_by_column`, row by row, refusing the first row that is not
    right (no gold label or world, in no registered cell, an unknown label)."""
    ids: list[str] = []
    reqs: list[tuple[str, ...]] = []
    cell = []
    position = []
    gold_yes = []
    for row_id, split, requests in records:
        world = worlds.get(row_id)
        label = labels.get(row_id)
        if world is None or label is None:
            raise UserError(f"gold: row {row_id} of the corpus has no gold label or world")
        key = (str(split), *(str(world.get(f)) for f in factors))
        ci = by_key.get(key)
        if ci is None:
            raise UserError(f"corpus: row {row_id} ({', '.join(key)}) is in no registered cell")
        if label not in (spec.label_yes, spec.label_no):
            raise UserError(f"gold: row {row_id} has the label {label!r}")
        ids.append(row_id)
        reqs.append(tuple(requests))
        cell.append(ci)
        position.append(position_index(world))
        gold_yes.append(label == spec.label_yes)
    return ids, reqs, cell, position, gold_yes


# -- observations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counted:
    """Each row's counted observation: observed or not, and the observation fields the
    registration reads (and pYes)."""

    observed: np.ndarray  # bool per row
    columns: Mapping[str, Column]  # observation field name -> column over rows

    def p_yes(self, spec: ScoringSpec) -> np.ndarray:
        """Raw P(yes) per row, NaN when unobserved."""
        col = self.columns[spec.fields["pYes"]]
        return np.where(self.observed & ~col.null, col.values, np.nan)


def counted_attempts(
    records: Sequence[Mapping[str, Any]], table: RowTable, spec: ScoringSpec, source: str
) -> Counted:
    """The counted attempt of each row under the registered attempt policy.

    Besides the policy's refusals (unknown rows, a repeated attempt), a record whose request
    the row does not have is refused; every problem is listed with its line number (records are
    one per line, line = index + 1).
    """
    row_field, request_field = spec.fields["row"], spec.fields["request"]
    requests = table.requests

    def has_request(row_of, recs) -> list[str | None]:
        reqs = list(map(itemgetter(request_field), recs))
        return [
            None
            if i is None or req in requests[i]
            else f"row {rec[row_field]} has no request {req!r}"
            for i, req, rec in zip(row_of, reqs, recs, strict=True)
        ]

    chosen, observed = attempt_policy.counted(
        spec.policy,
        records,
        table.index,
        source,
        contract=spec.observation,
        check=has_request,
        rows="the corpus",
    )
    # the fields the registration reads (and pYes, which the engine calibrates)
    wanted = spec.read_fields | {spec.fields["pYes"]}
    names = [f["name"] for f in spec.observation["fields"] if f["name"] in wanted]
    columns = attempt_policy.record_columns(records, chosen, names, contract=spec.observation)
    return Counted(observed, columns)


def terminal_p_yes(
    records: Sequence[Mapping[str, Any]], table: RowTable, spec: ScoringSpec, source: str
) -> np.ndarray:
    """Raw P(yes) per row (NaN when unobserved) from validated observation records: the
    counted attempt's (see :func:`counted_attempts`)."""
    return counted_attempts(records, table, spec, source).p_yes(spec)


# -- figures ------------------------------------------------------------------------------------


def exact_confidences(blocks) -> dict[float, Fraction]:
    """The confidence max(c, 1 − c) of each block's calibrated P(yes) c = (yes + 1)/(n + 2), as
    :func:`calibrated` computes it in floats, mapped to its exact fraction."""
    out: dict[float, Fraction] = {}
    for b in blocks:
        yes, n = int(b["yes"]), int(b["n"])
        c, cf = Fraction(yes + 1, n + 2), (yes + 1) / (n + 2)
        out[max(cf, 1.0 - cf)] = max(c, 1 - c)
    return out


def unreliable_calibration(
    confidences: np.ndarray, exact: Mapping[float, Fraction], correct: int, upper, gap
) -> bool:
    """The calibration-unreliable flag of one cell: mean confidence − calibrated accuracy above
    ``gap`` and the calibrated accuracy's upper bound ``upper`` below the mean confidence,
    decided as every registered threshold is (:func:`prereg.stats.compare.compare`): the mean
    of the observed rows' ``confidences`` as a fraction (each value from ``exact``, or, when no
    block gives it, its shortest decimal), the accuracy as ``correct``/n, the bound as the
    shortest decimal of its float.  In floats a gap of exactly 1/10 (8/10 − 7/10) reads
    0.10000000000000009 and was flagged."""
    from prereg.stats.compare import compare, decimal_fraction

    n = int(confidences.size)
    if n == 0:
        return False
    values, counts = np.unique(confidences, return_counts=True)
    total = Fraction(0)
    for v, k in zip(values.tolist(), counts.tolist(), strict=True):
        x = exact.get(v)
        total += int(k) * (decimal_fraction(v) if x is None else x)
    mean = total / n
    return compare(mean - Fraction(correct, n), "gt", gap) and compare(upper, "lt", mean)


def calibrated(p: np.ndarray, blocks) -> tuple[np.ndarray, np.ndarray]:
    """(calibrated P(yes) c, confidence max(c, 1 − c)) per row, NaN when unobserved."""
    observed = ~np.isnan(p)
    c = np.full(p.shape, np.nan)
    if observed.any():
        c[observed] = apply_isotonic(blocks, p[observed])
    return c, np.maximum(c, 1.0 - c)


@dataclass(frozen=True)
class Score:
    cells: list[dict]
    auroc: list[dict]
    estimates: list[dict]
    contrasts: list[dict]
    gates: list[dict]
    verdicts: dict[str, str]
    gated: bool
    decision: dict | None  # the evaluated decision (prereg.decide.decision.decide)
    observed_rows: int


def _nan_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _r(spec: ScoringSpec, x) -> float | None:
    """A figure as SCORE.json writes it: at full precision (the registered decimals and P-value
    digits round only what SCORE.md displays)."""
    return _nan_none(x)


def _rp(spec: ScoringSpec, x) -> float | None:
    return _nan_none(x)


def _ratio(num: float, den: float) -> float:
    return num / den if den else float("nan")


def cell_figures(
    table: RowTable,
    decided: decide_table.RowTable,
    metrics: Mapping[str, RowMetric],
    observed: np.ndarray,
    c: np.ndarray,
    spec: ScoringSpec,
    exact: Mapping[float, Fraction] | None = None,
) -> list[dict]:
    """Per registered cell: the registered metrics (by role), the per-cell intervals, ECE, the
    calibration-unreliable flag and raw accuracy by failure position (report figures rounded);
    ``_figures`` holds the unrounded figure of every metric, for the gates."""
    from prereg.stats.methods import MethodError, method

    try:
        interval = method("proportion-interval", spec.cell_interval).fn
    except MethodError as exc:
        raise UserError(f"study config: /constants/scoring/cellInterval/method: {exc}") from None
    m = spec.metrics
    nc = len(table.cells)
    cell = table.cell
    counts = cell_counts(metrics, decided)
    rows = np.bincount(cell, minlength=nc)

    def kn(role: str) -> tuple[np.ndarray, np.ndarray]:
        k = np.array([counts[ci][m[role]][0] for ci in range(nc)])
        n = np.array([counts[ci][m[role]][1] for ci in range(nc)])
        return np.rint(k).astype(np.int64), np.rint(n).astype(np.int64)

    acc_k, acc_n = kn("accuracy")
    cal_k, cal_n = kn("calibratedAccuracy")
    acc_lo, acc_hi = interval(acc_k, acc_n, level=spec.cell_level)
    cal_lo, cal_hi = interval(cal_k, cal_n, level=spec.cell_level)
    n_obs = np.rint(np.bincount(cell, weights=observed.astype(float), minlength=nc)).astype(int)
    # raw accuracy by failure position: one bincount over (cell, position)
    k_pos = len(POSITION_KEYS)
    group = cell * k_pos + table.position
    acc = metrics[m["accuracy"]]
    size = nc * k_pos
    pos_rows = np.bincount(group, minlength=size).reshape(nc, k_pos)
    pos_obs = np.rint(np.bincount(group, weights=acc.den, minlength=size)).astype(int)
    pos_k = np.rint(np.bincount(group, weights=acc.num, minlength=size)).astype(int)
    pos_obs, pos_k = pos_obs.reshape(nc, k_pos), pos_k.reshape(nc, k_pos)
    order = np.argsort(cell, kind="stable")
    bounds = np.searchsorted(cell[order], np.arange(nc + 1))
    gold = table.gold_yes.astype(int)
    others = [mid for mid in metrics if mid not in m.values()]
    out = []
    for ci, cdef in enumerate(table.cells):
        idx = order[bounds[ci] : bounds[ci + 1]]
        idx_obs = idx[observed[idx]]
        figs = {mid: _ratio(*counts[ci][mid]) for mid in metrics}
        ece = decile_ece(c[idx_obs], gold[idx_obs])
        figs[m["ece"]] = ece
        mean_conf, cal_acc = figs[m["meanConfidence"]], figs[m["calibratedAccuracy"]]
        gap = mean_conf - cal_acc
        n = int(n_obs[ci])
        # the confidences as calibrated() computes them; exact: each as its block's fraction
        conf_obs = np.maximum(c[idx_obs], 1.0 - c[idx_obs])
        unreliable = unreliable_calibration(
            conf_obs, exact or {}, int(cal_k[ci]), float(cal_hi[ci]), spec.unreliable_gap
        )
        by_pos = {}
        for pi, label in enumerate(spec.position_labels):
            if pos_rows[ci, pi] == 0:
                continue
            obs_pi, k = int(pos_obs[ci, pi]), int(pos_k[ci, pi])
            by_pos[label] = {
                "rows": int(pos_rows[ci, pi]),
                "observed": obs_pi,
                "correct": k,
                "accuracy": _r(spec, k / obs_pi if obs_pi else None),
            }
        entry = {
            "cell": cdef["id"],
            "split": str(cdef["split"]),
            "levels": {k: str(v) for k, v in cdef["levels"].items()},
            "rows": int(rows[ci]),
            "observed": n,
            "metrics": {
                m["coverage"]: _r(spec, figs[m["coverage"]]),
                m["accuracy"]: {
                    "correct": int(acc_k[ci]),
                    "estimate": _r(spec, figs[m["accuracy"]]),
                    "lower": _r(spec, acc_lo[ci]),
                    "upper": _r(spec, acc_hi[ci]),
                },
                m["saidYes"]: _r(spec, figs[m["saidYes"]]),
                m["calibratedAccuracy"]: {
                    "correct": int(cal_k[ci]),
                    "estimate": _r(spec, cal_acc),
                    "lower": _r(spec, cal_lo[ci]),
                    "upper": _r(spec, cal_hi[ci]),
                },
                m["meanConfidence"]: _r(spec, mean_conf),
                m["ece"]: _r(spec, ece),
                **{mid: _r(spec, figs[mid]) for mid in others},
            },
            "confidenceMinusAccuracy": _r(spec, gap),
            "calibrationUnreliable": unreliable,
            "byPosition": by_pos,
            "_figures": figs,
        }
        out.append(entry)
    return out


def auroc_groups(table: RowTable, p: np.ndarray, spec: ScoringSpec) -> list[dict]:
    """AUROC of raw P(yes) per group (pooled and per negative level), Hanley–McNeil interval."""
    from prereg.stats.roc import auroc, hanley_mcneil  # scipy.stats: only when scoring

    a = spec.auroc
    attrs = [cell_attributes(c) for c in table.cells]
    where = {k: tuple(str(v) for v in vs) for k, vs in a["where"].items()}
    in_where = np.array([selection_matches(where, x) for x in attrs], dtype=bool)
    factor = a["factor"]
    positive = {str(v) for v in a["positive"]}
    negative = [str(v) for v in a["negative"]]
    cell_level = [x.get(factor) for x in attrs]
    nc = len(attrs)

    def rows_of(cell_mask) -> np.ndarray:
        return np.asarray(cell_mask, dtype=bool)[table.cell]

    group_of: dict[tuple[str, ...], list[int]] = {}
    for ci, x in enumerate(attrs):
        if in_where[ci]:
            group_of.setdefault(tuple(x[g] for g in a["groupBy"]), []).append(ci)
    observed = ~np.isnan(p)
    is_pos = rows_of([lv in positive for lv in cell_level])
    out = []
    for gkey, cis in group_of.items():
        in_group = np.zeros(nc, dtype=bool)
        in_group[cis] = True
        rows = rows_of(in_group) & observed
        pos = rows & is_pos
        present = {cell_level[ci] for ci in cis}
        per_level = [(n, [n]) for n in negative if n in present]
        for label, negs in [("pooled", negative), *per_level]:
            neg = rows & rows_of([lv in negs for lv in cell_level])
            sel = pos | neg
            scores = p[sel]
            labels = pos[sel].astype(int)
            area = auroc(scores, labels)
            n_pos, n_neg = int(pos.sum()), int(neg.sum())
            _, lo, hi = hanley_mcneil(area, n_pos, n_neg, z=float(a["z"]))
            out.append(
                {
                    "group": dict(zip(a["groupBy"], gkey, strict=True)),
                    "negative": label,
                    "positives": n_pos,
                    "negatives": n_neg,
                    "estimate": _r(spec, area),
                    "lower": _r(spec, lo),
                    "upper": _r(spec, hi),
                }
            )
    return out


def row_metrics_of(
    config: Mapping[str, Any],
    table: RowTable,
    p: np.ndarray,
    blocks,
    spec: ScoringSpec,
    *,
    counted: Counted | None = None,
) -> tuple[dict[str, RowMetric], np.ndarray, np.ndarray]:
    """(row metrics, observed mask, calibrated P(yes)) of raw P(yes) ``p`` (NaN = unobserved):
    the engine's fields (gold, the calibrated P(yes) and confidence), the derived fields, then
    each metric's compute block."""
    observed = ~np.isnan(p) if counted is None else np.asarray(counted.observed, dtype=bool)
    n = len(table.ids)
    if counted is None:
        columns: dict[str, Any] = {spec.fields["pYes"]: Column.numbers(p)}
    else:
        columns = dict(counted.columns)
    c, conf = calibrated(p, blocks)
    offered = {
        "gold": table.gold(spec),
        "calibratedPYes": Column.numbers(c),
        "calibratedConfidence": Column.numbers(conf),
    }
    columns.update(engine_columns(_ENGINE, offered))
    columns = derive(config.get("derived_fields") or (), columns, n, observed)
    return row_metrics(config["metrics"], columns, observed), observed, c


def score(
    config: Mapping[str, Any],
    rules,
    table: RowTable,
    p: np.ndarray,
    blocks,
    spec: ScoringSpec | None = None,
    *,
    counted: Counted | None = None,
) -> Score:
    """Every figure, contrast, gate and verdict for raw P(yes) ``p`` (NaN = unobserved).

    ``counted`` (the counted attempts, when scoring observation records) gives the derived
    fields and metrics every observation field; without it they see ``pYes`` alone.
    """
    spec = spec or scoring_spec(config)
    p = np.asarray(p, dtype=np.float64)
    metrics, observed, c = row_metrics_of(config, table, p, blocks, spec, counted=counted)
    decided = table.decided(spec)
    res = registered_results(rules, metrics, Selections(decided))
    cells = cell_figures(
        table, decided, metrics, observed, c, spec, exact=exact_confidences(blocks)
    )
    decision = decide_all(rules, res.results, decided, [x.pop("_figures") for x in cells])
    from prereg.decide.decision import decide as decide_outcome

    def figure(x):
        return _r(spec, x)

    gates = gate_rows(rules, decision, figure)
    estimates = estimate_rows(rules, res, figure)
    contrasts = contrast_rows(
        rules, res, figure, lambda x: _rp(spec, x), test_options=False
    )  # d17's SCORE.json shape has no alternative or margin
    return Score(
        cells=cells,
        auroc=auroc_groups(table, p, spec),
        estimates=estimates,
        contrasts=contrasts,
        gates=gates,
        verdicts=decision.verdicts,
        gated=decision.gated,
        decision=decide_outcome(
            getattr(rules, "DECISION", None),
            decision.verdicts,
            {g["id"]: g["passed"] for g in gates},
            res.results,
        ),
        observed_rows=int(observed.sum()),
    )
