"""Checking a study's registered sizing claims (``claims`` in the language).

- ``half_width``: closed form.  The half-width, (upper − lower)/2, of the registered interval
  method at k = p·n of the cell's registered n rows (the methods take a real k); over a range
  ``p .. p_to`` the largest, at the point of the range nearest 0.5 (a Wilson half-width grows
  with p(1 − p)).
- ``power``: an exact sum.  Arm a has ``rows_a`` registered rows at rate ``base +
  difference``, arm b ``rows_b`` at ``base`` (every row observed); the power is the sum over
  both binomial counts (their support beyond 12 SD carries less than 1e-30 and is left out)
  of P(k1)·P(k2) where the contrast's registered test, called on the whole grid at once, gives
  P below alpha.
- ``detectable``: the smallest difference (in the direction of ``sign``) whose exact power
  reaches ``power``, by bisection to 1e-5; none when even the largest possible one does not.
- ``verdict``: exact when one binomial count decides the hypothesis (every comparison it reads
  is an estimate of one metric over one selection whose rows count one each and are right
  independently; every gate is decided by the rows observed alone, and those are the same in
  every simulated study): the sum over that count of its probability (a convolution of the
  groups' binomials) where the compiled rule gives the verdict.  Otherwise the share of the
  condition's simulated studies with that verdict, with its Monte Carlo SE; a figure within
  two SE of the threshold is flagged.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from prereg.decide.evaluate import Selections, cell_figures
from prereg.errors import UserError
from prereg.rules import ContrastResult, failed_gates
from prereg.stats.compare import compare

from .design import DROPPED, RETRIED_RIGHT, RETRIED_WRONG, RIGHT, WRONG, hypothesis_targets
from .model import Condition, condition, expected_counts, kept_is_fixed
from .run import Plan, scorer

_OPS = {
    "lt": lambda x, v: x < v,
    "le": lambda x, v: x <= v,
    "gt": lambda x, v: x > v,
    "ge": lambda x, v: x >= v,
}
SUPPORT_SD = 12.0
KEPT = [RIGHT, WRONG, RETRIED_RIGHT, RETRIED_WRONG]


def kind_of(claim: Mapping[str, Any]) -> str:
    return next(k for k in ("half_width", "power", "detectable", "verdict") if claim.get(k))


# -- closed form --------------------------------------------------------------------------------


def half_width(method: str, n: int, p: float, level: float) -> float:
    from prereg.stats.methods import method as find

    lo, hi = find("proportion-interval", method).fn(p * n, n, level=level)
    return (float(hi) - float(lo)) / 2.0


def check_half_width(plan: Plan, body: Mapping[str, Any]) -> dict:
    rows = body.get("rows")
    if rows is None:
        cell = next((c for c in plan.design.cells if c["id"] == body["cell"]), None)
        if cell is None:
            raise UserError(f"claims: cell {body['cell']!r} is not registered")
        rows = int(cell["rows"])
    lo = float(body["p"])
    hi = float(body["p"] if body.get("p_to") is None else body["p_to"])
    at = min(max(0.5, lo), hi)
    return {
        "method": "closed form",
        "figure": half_width(body["interval"], int(rows), at, float(body["level"])),
        "details": {"rows": int(rows), "at": at},
    }


# -- exact power ----------------------------------------------------------------------------------


def _binom_ufunc():
    """The compiled binomial pmf ``scipy.stats.binom.pmf`` evaluates, from the imported
    ``scipy.special`` package (None when this scipy has none by that name).  This is scipy's
    one private name prereg still reads: importing scipy.stats for ``binom.pmf`` takes the
    answer-position diagnose of 20 simulations from 0.59 s to 1.75 s (median of 6; README,
    "Start-up and libraries")."""
    import scipy.special

    return getattr(getattr(scipy.special, "_ufuncs", None), "_binom_pmf", None)


def binom_pmf(k, n: int, p: float) -> np.ndarray:
    """``scipy.stats.binom.pmf(k, n, p)`` for counts ``k`` in 0..n and p in [0, 1]: the same
    compiled function, clipped to [0, 1] as ``pmf`` clips it, without importing scipy.stats;
    scipy.stats' own ``binom.pmf`` when this scipy lacks it."""
    fn = _binom_ufunc()
    if fn is None:
        from scipy.stats import binom

        return binom.pmf(k, n, p)
    return np.clip(fn(np.asarray(k), n, p), 0, 1)


def _support(n: int, p: float) -> np.ndarray:
    if p <= 0.0:
        return np.array([0])
    if p >= 1.0:
        return np.array([n])
    sd = math.sqrt(n * p * (1 - p))
    lo = max(0, math.floor(n * p - SUPPORT_SD * sd - 1))
    hi = min(n, math.ceil(n * p + SUPPORT_SD * sd + 1))
    return np.arange(lo, hi + 1)


#: The most test P values kept for one pair of arm sizes (every count of both: 32 MiB).
GRID_LIMIT = 2**22


def grid_p_values(
    test: str, n1: int, n2: int, alternative: str, margin: float, k1: np.ndarray, k2: np.ndarray
) -> np.ndarray:
    """The test's P value at every (k1[i], k2[j]), k1 and k2 consecutive counts."""
    from prereg.stats.methods import method as find

    g1, g2 = np.meshgrid(k1, k2, indexing="ij")
    _, p = find("two-proportion-test", test).fn(
        g1.astype(float), n1, g2.astype(float), n2, alternative=alternative, margin=margin
    )
    return np.asarray(p)


@functools.lru_cache(maxsize=8)
def _all_p_values(test: str, n1: int, n2: int, alternative: str, margin: float) -> np.ndarray:
    p = grid_p_values(test, n1, n2, alternative, margin, np.arange(n1 + 1), np.arange(n2 + 1))
    p.flags.writeable = False
    return p


def _p_values(
    test: str, n1: int, n2: int, alternative: str, margin: float, k1: np.ndarray, k2: np.ndarray
) -> np.ndarray:
    """:func:`grid_p_values`, taken from the P values of every pair of counts, computed once
    per test and arm sizes (a detectable difference's bisection asks for ~20 overlapping
    supports); the methods compute each element alike in arrays of any shape."""
    if (n1 + 1) * (n2 + 1) > GRID_LIMIT:
        return grid_p_values(test, n1, n2, alternative, margin, k1, k2)
    every = _all_p_values(test, n1, n2, alternative, margin)
    return every[int(k1[0]) : int(k1[-1]) + 1, int(k2[0]) : int(k2[-1]) + 1]


def exact_power(
    test: str, n1: int, p1: float, n2: int, p2: float, alpha: float, alternative: str, margin: float
) -> float:
    """P(test's P < alpha) for k1 ~ Bin(n1, p1), k2 ~ Bin(n2, p2), by summing over both."""
    k1, k2 = _support(n1, p1), _support(n2, p2)
    w = np.outer(binom_pmf(k1, n1, p1), binom_pmf(k2, n2, p2))
    p = _p_values(test, n1, n2, alternative, margin, k1, k2)
    with np.errstate(invalid="ignore"):
        reject = np.asarray(p) < alpha
    return math.fsum(w[reject].tolist())


def _contrast(plan: Plan, cid: str):
    c = next((c for c in plan.rules.CONTRASTS if c.id == cid), None)
    if c is None:
        raise UserError(f"claims: contrast {cid!r} is not registered")
    return c


def arm_rows(plan: Plan, selection, what: str) -> int:
    sel = scorer(plan).sel
    return int(round(float(sel.stacked([(selection, what)])[0] @ plan.design.group_rows)))


def _power_setup(plan: Plan, body: Mapping[str, Any]):
    c = _contrast(plan, body["contrast"])
    alpha = body.get("alpha")
    if alpha is None:
        alpha = plan.rules.FAMILIES[c.family].alpha if c.family else 1.0 - c.level
    n1 = arm_rows(plan, c.a, f"contrast {c.id}")
    n2 = arm_rows(plan, c.b, f"contrast {c.id}")

    def power(difference: float) -> float:
        base = float(body["base"])
        return exact_power(
            c.test,
            n1,
            min(1.0, max(0.0, base + difference)),
            n2,
            base,
            float(alpha),
            c.alternative,
            float(c.margin or 0.0),
        )

    return c, float(alpha), n1, n2, power


def check_power(plan: Plan, body: Mapping[str, Any]) -> dict:
    c, alpha, n1, n2, power = _power_setup(plan, body)
    return {
        "method": "exact",
        "figure": power(float(body["difference"])),
        "details": {"rowsA": n1, "rowsB": n2, "alpha": alpha, "test": c.test},
    }


def check_detectable(plan: Plan, body: Mapping[str, Any]) -> dict:
    c, alpha, n1, n2, power = _power_setup(plan, body)
    sign = -1.0 if body.get("sign") == -1 else 1.0
    base = float(body["base"])
    top = (1.0 - base) if sign > 0 else base
    target = float(body["power"])
    details = {"rowsA": n1, "rowsB": n2, "alpha": alpha, "test": c.test, "power": target}
    if power(sign * top) < target:
        return {"method": "exact", "figure": None, "details": details}
    lo, hi = 0.0, top
    while hi - lo > 1e-5:
        mid = (lo + hi) / 2
        if power(sign * mid) >= target:
            hi = mid
        else:
            lo = mid
    details["powerAtFigure"] = power(sign * hi)
    return {"method": "exact", "figure": hi, "details": details}


# -- verdict probabilities ------------------------------------------------------------------------


def _binomial_count(plan: Plan, cond: Condition, metric: str, selection, what: str):
    """(n, probability of each k = 0..n) when the metric over the selection is one binomial
    count of fixed n, else None."""
    design = plan.design
    _, num, den = design.contributions[metric]
    sel = scorer(plan).sel
    groups = np.flatnonzero(sel.stacked([(selection, what)])[0] > 0)
    fixed = kept_is_fixed(design, cond)
    exp = expected_counts(design, cond)
    pmf = np.array([1.0])
    n = 0
    for g in groups:
        kept = exp[g, KEPT].sum()
        if kept == 0:
            continue
        if not fixed[g] or den[g, DROPPED] != 0 or not np.all(den[g, KEPT] == 1.0):
            return None
        a, b = num[g, RIGHT], num[g, WRONG]
        if num[g, RETRIED_RIGHT] != a or num[g, RETRIED_WRONG] != b or {a, b} != {0.0, 1.0}:
            return None
        m = int(round(kept))
        q = float(cond.rate[g]) if a == 1.0 else 1.0 - float(cond.rate[g])
        pmf = np.convolve(pmf, binom_pmf(np.arange(m + 1), m, q))
        n += m
    return n, pmf


def _gated(plan: Plan, cond: Condition) -> str | None:
    """The gates' verdict when they are decided by the observed rows alone and fail, None when
    they hold; raises LookupError when they may vary between simulated studies."""
    design, rules = plan.design, plan.rules
    fixed = kept_is_fixed(design, cond)
    for g in rules.GATES:
        _, num, den = design.contributions[g.metric]
        if not den.any():  # no count model of the metric (a study drawn row by row)
            raise LookupError(g.id)
        same = np.all(num[:, KEPT] == num[:, [RIGHT]], axis=1) & np.all(
            den[:, KEPT] == den[:, [RIGHT]], axis=1
        )
        if not np.all(same & fixed):
            raise LookupError(g.id)
    if not rules.GATES:
        return None
    exp = expected_counts(design, cond)
    metrics = design.metrics(exp)
    table = design.table()
    figures = cell_figures(metrics, table)
    from prereg.decide.table import cell_attributes

    cells = [(c["id"], cell_attributes(c), figures[i]) for i, c in enumerate(table.cells)]
    failures = failed_gates(rules.GATES, cells)
    return failures[0][0].otherwise if failures else None


def exact_verdict(plan: Plan, cond: Condition, hypothesis: str, verdict: str) -> float | None:
    """The exact probability of a verdict, or None when no single binomial count decides it."""
    from prereg.stats.methods import method as find

    rules = plan.rules
    estimates = {e.id: e for e in rules.ESTIMATES}
    reads = [t for t, _ in hypothesis_targets(rules, hypothesis)]
    if not reads or any(t not in estimates for t in reads):
        return None
    es = [estimates[t] for t in reads]
    arms = {(e.metric, Selections._key(e.of)) for e in es}
    if len(arms) != 1:
        return None
    try:
        gated = _gated(plan, cond)
    except LookupError:
        return None
    if gated is not None:
        return 1.0 if verdict == gated else 0.0
    found = _binomial_count(plan, cond, es[0].metric, es[0].of, f"estimate {es[0].id}")
    if found is None:
        return None
    n, pmf = found
    k = np.arange(n + 1, dtype=float)
    bounds = {}
    for e in es:
        lo, hi = find("proportion-interval", e.interval).fn(k, np.full_like(k, n), level=e.level)
        bounds[e.id] = (np.asarray(lo).tolist(), np.asarray(hi).tolist())
    fn = rules.HYPOTHESES[hypothesis]
    hits = []
    for i in range(n + 1):
        results = {
            e.id: ContrastResult(
                e.id,
                i / n if n else math.nan,
                bounds[e.id][0][i],
                bounds[e.id][1][i],
                extra={"k": i, "n": n},
            )
            for e in es
        }
        if fn(results) == verdict:
            hits.append(float(pmf[i]))
    return math.fsum(hits)


def verdict_condition(plan: Plan, body: Mapping[str, Any], scenarios) -> Condition:
    return condition(plan.design, scenarios[body["scenario"]], body.get("effect"))


def needs_simulation(plan: Plan, body: Mapping[str, Any], scenarios) -> bool:
    cond = verdict_condition(plan, body, scenarios)
    verdict = body.get("verdict") or plan.rules.first_verdict(body["hypothesis"])
    return exact_verdict(plan, cond, body["hypothesis"], verdict) is None


def check(
    plan: Plan, claims, scenarios, summaries: Mapping[tuple[str, float | None], dict]
) -> list[dict]:
    """Every registered claim, checked: its figure, how it was found, and whether it holds."""
    from prereg.compiler.render import claim as in_words

    from .summary import power_share, r

    out = []
    for c in claims:
        kind = kind_of(c)
        body = c[kind]
        if kind == "half_width":
            got = check_half_width(plan, body)
        elif kind == "power":
            got = check_power(plan, body)
        elif kind == "detectable":
            got = check_detectable(plan, body)
        else:
            cond = verdict_condition(plan, body, scenarios)
            verdict = body.get("verdict") or plan.rules.first_verdict(body["hypothesis"])
            exact = exact_verdict(plan, cond, body["hypothesis"], verdict)
            if exact is not None:
                got = {"method": "exact", "figure": exact, "details": {}}
            else:
                summary = summaries[(cond.scenario, cond.effect)]
                s = power_share(summary, body["hypothesis"], verdict)
                got = {
                    "method": "simulation",
                    "figure": s["share"],
                    "mcSe": s["mcSe"],
                    "details": {"simulations": summary["simulations"]},
                }
            got["details"].update(
                {"scenario": cond.scenario, "effect": cond.effect, "verdict": verdict}
            )
        figure = got["figure"]
        holds = compare(figure, c["op"], c["value"])
        entry = {
            "id": c["id"],
            "kind": kind,
            "claim": in_words(c),
            "statement": c.get("statement"),
            "method": got["method"],
            "figure": r(figure),
            "op": c["op"],
            "value": float(c["value"]),
            "holds": bool(holds),
            "details": {
                k: (r(v) if isinstance(v, float) else v) for k, v in got["details"].items()
            },
        }
        if "mcSe" in got:
            entry["mcSe"] = got["mcSe"]
            se = got["mcSe"] or 0.0
            entry["withinMonteCarloError"] = (
                figure is not None and abs(float(figure) - float(c["value"])) <= 2 * se
            )
        out.append(entry)
    return out
