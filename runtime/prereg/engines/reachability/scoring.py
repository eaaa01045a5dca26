"""Scoring a prepared reachability study: observations → per-cell figures → registered rules.

Everything a study registers (metric ids, the scored request, the answer threshold, interval
levels, the position labels, the AUROC populations, the decision) comes from the study's
``scoring`` constant and its compiled rules module (``GATES``, ``ESTIMATES``, ``CONTRASTS``,
``FAMILIES``, ``HYPOTHESES``); this module only knows how to count.

Rows.  Each corpus row belongs to the registered cell whose split and factor levels equal the
row's split and its gold world's values (the world carries each factor's level under the
factor's id; integers are compared as their decimal text).  The engine derives one row
attribute, the failure position, from the world's ``failurePosition``, ``failureKind``
(``link`` or ``relay``) and ``hops``: ``none`` without a failure; ``first`` at position 0;
``last`` at link ``hops`` or relay ``hops − 1``; else ``interior`` (the labels are the
study's).  Selections in rules may name the split (``split``), any factor and that attribute.

Answers.  With threshold t, a P(yes) above t answers yes, below t no, and exactly t defers
(never correct).  The calibrated P(yes) c is the isotonic calibrator applied to the raw one;
its answer follows the same rule, its confidence is max(c, 1 − c).

The ``scoring`` constant (``config["constants"]["scoring"]``):

- ``schemaVersion``: the schema id written into SCORE.json.
- ``request``: the request id whose observations are scored.
- ``answerThreshold``: t above.
- ``metrics``: engine quantity → the study's metric id, for the quantities ``coverage``
  (observed / registered rows), ``accuracy`` (correct / observed), ``saidYes`` (answered yes /
  observed), ``calibratedAccuracy`` (calibrated answer correct / observed) — the proportions a
  gate, estimate or contrast may name — and ``meanConfidence``, ``ece`` (decile ECE) and
  ``auroc``, reported per cell or group.
- ``cellInterval``: ``{method: wilson, level}``: the interval of per-cell proportions.
- ``unreliableGap``: a cell's calibration is unreliable iff mean confidence − calibrated
  accuracy exceeds this and the calibrated Wilson upper bound is below the mean confidence.
- ``decimals``: report figures are rounded half-up to this many decimals; ``pValueDigits``:
  P values are reported with this many significant digits.  Verdicts use unrounded figures
  (unless a rule itself names ``decimals``).
- ``position``: ``{attribute, none, first, interior, last}``: the row attribute's id and labels.
- ``auroc``: ``{where: {attribute: [levels]}, groupBy: [factors], factor, positive: [levels],
  negative: [levels], interval: hanley-mcneil, z}``: per group of ``groupBy`` levels among the
  rows matching ``where``, the AUROC of raw P(yes) between rows whose ``factor`` is a positive
  level and rows whose ``factor`` is a negative level (pooled), and per negative level.

The study's ``decision`` constant is copied into the result.

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
from typing import Any

import numpy as np

from prereg.engines.contract_roles import contract_for, names_by_role
from prereg.errors import UserError
from prereg.rules import ContrastResult, adjust_families, failed_gates, selection_matches
from prereg.stats.calibration import apply_isotonic, decile_ece
from prereg.stats.proportions import newcombe_difference, pooled_z_test, wilson_interval
from prereg.stats.rounding import round_half_up

SPLIT = "split"  # the language's name for a row's split in selections
PROPORTIONS = ("coverage", "accuracy", "saidYes", "calibratedAccuracy")
QUANTITIES = (*PROPORTIONS, "meanConfidence", "ece", "auroc")
POSITION_KEYS = ("none", "first", "interior", "last")
OBSERVATION_ROLES = ("row", "request", "pYes", "attempt")
CALIBRATOR_ROLES = ("id", "effectiveAt", "validDays", "blocks", "digest")
_ENGINE = "reachability-probe"


# -- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoringSpec:
    schema_version: str
    request: str
    contracts: Mapping[str, str]  # input role -> record contract id
    fields: Mapping[str, str]  # observation role -> field name
    calibrator_fields: Mapping[str, str]  # calibrator role -> field name
    threshold: float
    metrics: Mapping[str, str]  # quantity -> metric id
    cell_level: float
    unreliable_gap: float
    decimals: int
    p_digits: int
    position_attribute: str
    position_labels: tuple[str, ...]  # in POSITION_KEYS order
    auroc: Mapping[str, Any]
    decision: Any
    label_yes: str
    label_no: str

    @property
    def metric_kind(self) -> dict[str, str]:
        return {m: q for q, m in self.metrics.items()}


def _need(obj: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(obj, Mapping) or key not in obj:
        raise UserError(f"study config: {where}/{key} is missing")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise UserError(f"study config: {where}/{key} has the wrong type ({type(value).__name__})")
    return value


def scoring_spec(config: Mapping[str, Any]) -> ScoringSpec:
    """The checked ``scoring`` constant (plus ``labels`` and ``decision``) of a study config."""
    consts = _need(config, "constants", "", Mapping)
    s = _need(consts, "scoring", "/constants", Mapping)
    w = "/constants/scoring"
    labels = _need(consts, "labels", "/constants", Mapping)
    metrics = dict(_need(s, "metrics", w, Mapping))
    for q in QUANTITIES:
        _need(metrics, q, w + "/metrics", str)
    unknown = sorted(set(metrics) - set(QUANTITIES))
    if unknown:
        raise UserError(f"study config: {w}/metrics: unknown quantities {unknown}")
    if len(set(metrics.values())) != len(metrics):
        raise UserError(f"study config: {w}/metrics: a metric id is bound to two quantities")
    cell = _need(s, "cellInterval", w, Mapping)
    if _need(cell, "method", w + "/cellInterval", str) != "wilson":
        raise UserError(f"study config: {w}/cellInterval/method: only wilson is implemented")
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
    if "decision" not in consts:
        raise UserError("study config: /constants/decision is missing")
    return ScoringSpec(
        schema_version=_need(s, "schemaVersion", w, str),
        request=_need(s, "request", w, str),
        contracts=contracts,
        fields=fields,
        calibrator_fields=calibrator_fields,
        threshold=float(_need(s, "answerThreshold", w, (int, float))),
        metrics=metrics,
        cell_level=float(_need(cell, "level", w + "/cellInterval", (int, float))),
        unreliable_gap=float(_need(s, "unreliableGap", w, (int, float))),
        decimals=int(_need(s, "decimals", w, int)),
        p_digits=int(_need(s, "pValueDigits", w, int)),
        position_attribute=_need(pos, "attribute", w + "/position", str),
        position_labels=tuple(_need(pos, k, w + "/position", str) for k in POSITION_KEYS),
        auroc=auc,
        decision=consts["decision"],
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


def cell_attributes(cell: Mapping[str, Any]) -> dict[str, str]:
    return {SPLIT: str(cell["split"]), **{k: str(v) for k, v in cell["levels"].items()}}


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
    labels = gold["labels"]
    worlds = gold["worlds"]
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


# -- observations -------------------------------------------------------------------------------


def terminal_p_yes(
    records: Sequence[Mapping[str, Any]], table: RowTable, spec: ScoringSpec, source: str
) -> np.ndarray:
    """Raw P(yes) per row (NaN when unobserved) from validated observation records.

    A row's answer is its scored request's highest-ordinal attempt, when that attempt has a
    P(yes); unknown rows, requests the row does not have and duplicate (row, request, attempt)
    triples are refused with their line numbers (records are one per line, line = index + 1).
    """
    f = spec.fields
    problems: list[str] = []
    seen: dict[tuple[str, str, int], int] = {}
    best_attempt = np.zeros(len(table.ids), dtype=np.int64)
    p = np.full(len(table.ids), np.nan)
    for n, rec in enumerate(records, start=1):
        row_id, req, attempt = rec[f["row"]], rec[f["request"]], rec[f["attempt"]]
        i = table.index.get(row_id)
        if i is None:
            problems.append(f"{source}:{n}: unknown row id {row_id!r} (not in the corpus)")
            continue
        if req not in table.requests[i]:
            problems.append(f"{source}:{n}: row {row_id} has no request {req!r}")
            continue
        key = (row_id, req, attempt)
        first = seen.get(key)
        if first is not None:
            problems.append(
                f"{source}:{n}: duplicate attempt {attempt} of request {req!r} for row {row_id}"
                f" (first on line {first})"
            )
            continue
        seen[key] = n
        if req != spec.request or attempt < best_attempt[i]:
            continue
        best_attempt[i] = attempt
        value = rec[f["pYes"]]
        p[i] = np.nan if value is None else float(value)
    if problems:
        shown = problems[:50]
        if len(problems) > 50:
            shown.append(f"… and {len(problems) - 50} more")
        raise UserError(f"{source}: {len(problems)} problem(s) in the observations", problems=shown)
    return p


# -- figures ------------------------------------------------------------------------------------


def answers(p: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(said yes, said no) per row; NaN (unobserved) and exactly ``threshold`` are neither."""
    with np.errstate(invalid="ignore"):
        return p > threshold, p < threshold


@dataclass(frozen=True)
class Counts:
    """Per (cell, position) group: registered rows and the numerators of each proportion."""

    groups: tuple[tuple[int, int], ...]
    attrs: tuple[Mapping[str, str], ...]
    rows: np.ndarray
    observed: np.ndarray
    correct: np.ndarray
    said_yes: np.ndarray
    cal_correct: np.ndarray

    def fraction(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """(numerator, denominator) arrays over groups for a proportion quantity."""
        if kind == "coverage":
            return self.observed, self.rows
        num = {"accuracy": self.correct, "saidYes": self.said_yes}
        num["calibratedAccuracy"] = self.cal_correct
        return num[kind], self.observed


@dataclass(frozen=True)
class RowFigures:
    observed: np.ndarray
    correct: np.ndarray
    said_yes: np.ndarray
    calibrated: np.ndarray  # c, NaN when unobserved
    cal_correct: np.ndarray
    confidence: np.ndarray


def row_figures(table: RowTable, p: np.ndarray, blocks, threshold: float) -> RowFigures:
    observed = ~np.isnan(p)
    yes, no = answers(p, threshold)
    correct = (yes & table.gold_yes) | (no & ~table.gold_yes)
    c = np.full(p.shape, np.nan)
    if observed.any():
        c[observed] = apply_isotonic(blocks, p[observed])
    cyes, cno = answers(c, threshold)
    cal_correct = (cyes & table.gold_yes) | (cno & ~table.gold_yes)
    conf = np.maximum(c, 1.0 - c)
    return RowFigures(observed, correct, yes, c, cal_correct, conf)


def group_counts(table: RowTable, rf: RowFigures, spec: ScoringSpec) -> Counts:
    k = len(POSITION_KEYS)
    key = table.cell * k + table.position
    size = len(table.cells) * k

    def count(mask=None):
        return np.bincount(key, weights=None if mask is None else mask, minlength=size)

    rows = count()
    present = np.flatnonzero(rows)
    groups = tuple((int(g) // k, int(g) % k) for g in present)
    attrs = tuple(
        {
            **cell_attributes(table.cells[ci]),
            spec.position_attribute: spec.position_labels[pi],
        }
        for ci, pi in groups
    )

    def pick(a):
        return np.rint(a[present]).astype(np.int64)

    return Counts(
        groups=groups,
        attrs=attrs,
        rows=pick(rows),
        observed=pick(count(rf.observed.astype(float))),
        correct=pick(count(rf.correct.astype(float))),
        said_yes=pick(count(rf.said_yes.astype(float))),
        cal_correct=pick(count(rf.cal_correct.astype(float))),
    )


class Selector:
    """Sums of group counts over rule selections (masks cached per selection)."""

    def __init__(self, counts: Counts, spec: ScoringSpec, factors: Sequence[str]):
        self.counts = counts
        self.spec = spec
        self.known = {SPLIT, spec.position_attribute, *factors}
        self._masks: dict[tuple, np.ndarray] = {}

    def mask(self, selection: Mapping[str, Sequence[str]], what: str) -> np.ndarray:
        key = tuple(sorted((k, tuple(v)) for k, v in selection.items()))
        m = self._masks.get(key)
        if m is None:
            unknown = sorted(set(selection) - self.known)
            if unknown:
                raise UserError(
                    f"rules: {what} selects by {unknown}, which is neither the split, a factor"
                    f" nor the row attribute {self.spec.position_attribute!r}"
                )
            m = np.array([selection_matches(selection, a) for a in self.counts.attrs], dtype=bool)
            self._masks[key] = m
        return m

    def kn(self, metric: str, selection, what: str) -> tuple[int, int]:
        kind = self.spec.metric_kind.get(metric)
        if kind not in PROPORTIONS:
            raise UserError(
                f"rules: {what} names metric {metric!r}, which the engine does not compute as a"
                f" proportion (proportions: {[self.spec.metrics[q] for q in PROPORTIONS]})"
            )
        num, den = self.counts.fraction(kind)
        m = self.mask(selection, what)
        return int(num[m].sum()), int(den[m].sum())


def _nan_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def registered_results(
    rules, selector: Selector
) -> tuple[dict[str, ContrastResult], dict[str, tuple[int, int, int, int]]]:
    """ContrastResults of every registered estimate and contrast (families adjusted)."""
    results: dict[str, ContrastResult] = {}
    counts: dict[str, tuple[int, int, int, int]] = {}
    for e in rules.ESTIMATES:
        if e.interval != "wilson":
            raise UserError(f"rules: estimate {e.id}: interval {e.interval!r} is not implemented")
        k, n = selector.kn(e.metric, e.of, f"estimate {e.id}")
        lo, hi = wilson_interval(k, n, level=e.level)
        est = k / n if n else float("nan")
        results[e.id] = ContrastResult(e.id, est, lo, hi, extra={"k": k, "n": n})
        counts[e.id] = (k, n, 0, 0)
    cs = list(rules.CONTRASTS)
    if cs:
        kn = np.array(
            [
                (
                    *selector.kn(c.metric, c.a, f"contrast {c.id}"),
                    *selector.kn(c.metric, c.b, f"contrast {c.id}"),
                )
                for c in cs
            ],
            dtype=np.int64,
        ).reshape(len(cs), 4)
        for c in cs:
            if c.interval != "newcombe-hybrid":
                raise UserError(
                    f"rules: contrast {c.id}: interval {c.interval!r} is not implemented"
                )
            if c.test not in ("pooled-z", "none"):
                raise UserError(f"rules: contrast {c.id}: test {c.test!r} is not implemented")
        levels = {c.level for c in cs}
        d = np.full(len(cs), np.nan)
        lo = np.full(len(cs), np.nan)
        hi = np.full(len(cs), np.nan)
        for level in sorted(levels):
            sel = np.array([c.level == level for c in cs])
            d[sel], lo[sel], hi[sel] = newcombe_difference(
                kn[sel, 0], kn[sel, 1], kn[sel, 2], kn[sel, 3], level=level
            )
        _, ps = pooled_z_test(kn[:, 0], kn[:, 1], kn[:, 2], kn[:, 3])
        for j, c in enumerate(cs):
            k1, n1, k2, n2 = (int(x) for x in kn[j])
            results[c.id] = ContrastResult(
                c.id,
                float(d[j]),
                float(lo[j]),
                float(hi[j]),
                p=_nan_none(ps[j]) if c.test == "pooled-z" else None,
                extra={"k1": k1, "n1": n1, "k2": k2, "n2": n2},
            )
            counts[c.id] = (k1, n1, k2, n2)
    results = adjust_families(results, cs, rules.FAMILIES)
    return results, counts


# -- the whole score ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    cells: list[dict]
    auroc: list[dict]
    estimates: list[dict]
    contrasts: list[dict]
    gates: list[dict]
    verdicts: dict[str, str]
    gated: bool
    decision: Any
    observed_rows: int


def _r(spec: ScoringSpec, x) -> float | None:
    x = _nan_none(x)
    return None if x is None else round_half_up(x, spec.decimals)


def _rp(spec: ScoringSpec, x) -> float | None:
    x = _nan_none(x)
    return None if x is None else float(f"{x:.{spec.p_digits}g}")


def cell_figures(table: RowTable, rf: RowFigures, spec: ScoringSpec) -> list[dict]:
    """Per registered cell: coverage, raw and calibrated accuracy, confidence, ECE, flag,
    accuracy by failure position (report figures rounded)."""
    nc = len(table.cells)
    cell = table.cell

    def per_cell(mask):
        return np.rint(np.bincount(cell, weights=mask.astype(float), minlength=nc)).astype(int)

    rows = np.bincount(cell, minlength=nc)
    obs = per_cell(rf.observed)
    correct = per_cell(rf.correct)
    said = per_cell(rf.said_yes)
    cal = per_cell(rf.cal_correct)
    conf_sum = np.bincount(cell, weights=np.where(rf.observed, rf.confidence, 0.0), minlength=nc)
    lvl = spec.cell_level
    acc_lo, acc_hi = wilson_interval(correct, obs, level=lvl)
    cal_lo, cal_hi = wilson_interval(cal, obs, level=lvl)
    order = np.argsort(cell, kind="stable")
    bounds = np.searchsorted(cell[order], np.arange(nc + 1))
    out = []
    m = spec.metrics
    for ci, c in enumerate(table.cells):
        idx = order[bounds[ci] : bounds[ci + 1]]
        idx_obs = idx[rf.observed[idx]]
        n = int(obs[ci])
        acc = correct[ci] / n if n else float("nan")
        cal_acc = cal[ci] / n if n else float("nan")
        mean_conf = conf_sum[ci] / n if n else float("nan")
        ece = decile_ece(rf.calibrated[idx_obs], table.gold_yes[idx_obs].astype(int))
        gap = mean_conf - cal_acc
        unreliable = bool(n) and bool(gap > spec.unreliable_gap and cal_hi[ci] < mean_conf)
        by_pos = {}
        for pi, label in enumerate(spec.position_labels):
            sel = idx[table.position[idx] == pi]
            if sel.size == 0:
                continue
            sel_obs = sel[rf.observed[sel]]
            k = int(rf.correct[sel_obs].sum())
            by_pos[label] = {
                "rows": int(sel.size),
                "observed": int(sel_obs.size),
                "correct": k,
                "accuracy": _r(spec, k / sel_obs.size if sel_obs.size else None),
            }
        out.append(
            {
                "cell": c["id"],
                "split": str(c["split"]),
                "levels": {k: str(v) for k, v in c["levels"].items()},
                "rows": int(rows[ci]),
                "observed": n,
                m["coverage"]: _r(spec, n / rows[ci] if rows[ci] else None),
                m["accuracy"]: {
                    "correct": int(correct[ci]),
                    "estimate": _r(spec, acc),
                    "lower": _r(spec, acc_lo[ci]),
                    "upper": _r(spec, acc_hi[ci]),
                },
                m["saidYes"]: _r(spec, said[ci] / n if n else None),
                m["calibratedAccuracy"]: {
                    "correct": int(cal[ci]),
                    "estimate": _r(spec, cal_acc),
                    "lower": _r(spec, cal_lo[ci]),
                    "upper": _r(spec, cal_hi[ci]),
                },
                m["meanConfidence"]: _r(spec, mean_conf),
                "confidenceMinusAccuracy": _r(spec, gap),
                m["ece"]: _r(spec, ece),
                "calibrationUnreliable": unreliable,
                "byPosition": by_pos,
                "_figures": {
                    m["coverage"]: n / rows[ci] if rows[ci] else float("nan"),
                    m["accuracy"]: acc,
                    m["saidYes"]: said[ci] / n if n else float("nan"),
                    m["calibratedAccuracy"]: cal_acc,
                    m["meanConfidence"]: mean_conf,
                    m["ece"]: ece,
                },
            }
        )
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


def score(
    config: Mapping[str, Any],
    rules,
    table: RowTable,
    p: np.ndarray,
    blocks,
    spec: ScoringSpec | None = None,
) -> Score:
    """Every figure, contrast, gate and verdict for raw P(yes) ``p`` (NaN = unobserved)."""
    spec = spec or scoring_spec(config)
    rf = row_figures(table, p, blocks, spec.threshold)
    cells = cell_figures(table, rf, spec)
    counts = group_counts(table, rf, spec)
    selector = Selector(counts, spec, table.factors)
    results, kn = registered_results(rules, selector)

    gate_input = [
        (c["cell"], cell_attributes(table.cells[i]), c["_figures"]) for i, c in enumerate(cells)
    ]
    failures = failed_gates(rules.GATES, gate_input)
    gates = []
    for g in rules.GATES:
        fails = [(cid, x) for gate, cid, x in failures if gate is g]
        gates.append(
            {
                "id": g.id,
                "metric": g.metric,
                "where": {k: list(v) for k, v in g.where.items()},
                "op": g.op,
                "value": g.value,
                "passed": not fails,
                "failures": [{"cell": cid, "figure": _r(spec, x)} for cid, x in fails],
            }
        )
    gated = bool(failures)
    if gated:
        otherwise = failures[0][0].otherwise
        verdicts = {h: otherwise for h in rules.HYPOTHESES}
    else:
        verdicts = {h: fn(results) for h, fn in rules.HYPOTHESES.items()}

    estimates = []
    for e in rules.ESTIMATES:
        r = results[e.id]
        k, n, _, _ = kn[e.id]
        estimates.append(
            {
                "id": e.id,
                "hypothesis": e.hypothesis,
                "metric": e.metric,
                "k": k,
                "n": n,
                "estimate": _r(spec, r.estimate),
                "lower": _r(spec, r.lower),
                "upper": _r(spec, r.upper),
                "interval": e.interval,
                "level": e.level,
            }
        )
    contrasts = []
    for c in rules.CONTRASTS:
        r = results[c.id]
        k1, n1, k2, n2 = kn[c.id]
        contrasts.append(
            {
                "id": c.id,
                "hypothesis": c.hypothesis,
                "metric": c.metric,
                "a": {"k": k1, "n": n1, "estimate": _r(spec, k1 / n1 if n1 else None)},
                "b": {"k": k2, "n": n2, "estimate": _r(spec, k2 / n2 if n2 else None)},
                "estimate": _r(spec, r.estimate),
                "lower": _r(spec, r.lower),
                "upper": _r(spec, r.upper),
                "interval": c.interval,
                "level": c.level,
                "test": c.test,
                "p": _rp(spec, r.p),
                "family": c.family,
                "adjustedP": _rp(spec, r.adjusted_p),
            }
        )
    for c in cells:
        del c["_figures"]
    return Score(
        cells=cells,
        auroc=auroc_groups(table, p, spec),
        estimates=estimates,
        contrasts=contrasts,
        gates=gates,
        verdicts=verdicts,
        gated=gated,
        decision=spec.decision,
        observed_rows=int(rf.observed.sum()),
    )
