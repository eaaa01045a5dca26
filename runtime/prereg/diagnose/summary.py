"""The operating characteristics of one condition (a scenario at one effect size).

Over the N simulated studies of a condition:

- per hypothesis, the count and share of each verdict (Monte Carlo SE ``√(s(1 − s)/N)``);
- per gate, the share of studies in which it failed, and the share in which any gate failed;
- per estimate and contrast, the truth (the scenario's expected metric over the selection:
  the expected numerator over the expected denominator, a − b for a contrast; on the row
  path, a proportion's at the chances of a right outcome its row model gives, a mean's from
  its cells' expected numbers, where they have a closed form), the mean
  estimate and its bias (SE: the sample SD over √n), and the share of intervals covering the
  truth, over the studies where the figure exists;
- per contrast, the share whose interval excludes the null (the test's margin, 0 without a
  test) and, for a tested contrast, the rejection rate: P below alpha (its family's alpha, else
  1 − its level) and, in a family, adjusted P below the family's alpha;
- per family, the share of studies with any adjusted P below alpha (under a null scenario: the
  family-wise error).

Sums over studies are :func:`math.fsum` (exact rounding, so no order of work can change them);
figures are rounded half-up to :data:`DECIMALS` decimals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from prereg.stats.rounding import round_half_up

from .model import expected_counts
from .run import Plan, scorer

DECIMALS = 6


def r(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else round_half_up(x, DECIMALS)


def share(k: int, n: int) -> dict:
    s = k / n if n else math.nan
    return {
        "count": int(k),
        "share": r(s),
        "mcSe": r(math.sqrt(s * (1 - s) / n)) if n else None,
    }


def _mean_se(x: np.ndarray) -> tuple[float | None, float | None, int]:
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return None, None, 0
    mean = math.fsum(x.tolist()) / n
    if n < 2:
        return mean, None, n
    var = math.fsum(((x - mean) ** 2).tolist()) / (n - 1)
    return mean, math.sqrt(var / n), n


def truths(plan: Plan, condition: int) -> tuple[dict[str, float], dict[str, float]]:
    """(estimate id -> truth, contrast id -> truth) of a condition."""
    design, rules = plan.design, plan.rules
    exp = expected_counts(design, plan.conditions[condition])
    sel = scorer(plan).sel  # the plan's selections, shared by its conditions
    group_sums = {}
    for mid, (_, num, den) in design.contributions.items():
        group_sums[mid] = ((exp * num).sum(axis=1), (exp * den).sum(axis=1))

    cond = plan.conditions[condition]
    numbers: dict[str, tuple[np.ndarray | None, bool]] = {}

    def number_truth(metric: str, selection, what: str) -> float:
        """The row path's truth of a mean (log-mean) over a selection: the cells' expected
        numbers weighted by their observed rows (NaN without a closed form)."""
        if metric not in numbers:
            per_cell = None
            model = getattr(design, "rows", None)
            if plan.path == "rows" and hasattr(model, "cell_truths"):
                per_cell = model.cell_truths(metric, cond)
            numbers[metric] = (per_cell, design.contributions[metric][0] == "geometric_mean")
        per_cell = numbers[metric][0]
        if per_cell is None:
            return math.nan
        m = sel.stacked([(selection, what)])[0]
        w = m * cond.kept[design.group_cell].astype(float)
        return float(w @ per_cell[design.group_cell] / w.sum()) if w.sum() > 0 else math.nan

    rated: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

    def row_sums(metric: str):
        """The row path's expected numerator and denominator of a proportion per group, at
        the chances of a right outcome the row model gives (None: no closed form)."""
        if metric not in rated:
            rates = None
            model = getattr(design, "rows", None)
            if plan.path == "rows" and hasattr(model, "cell_rates"):
                rates = model.cell_rates(metric, cond)
            if rates is None:
                rated[metric] = None
            else:
                at = replace(cond, rate=np.asarray(rates, dtype=np.float64)[design.group_cell])
                _, num, den = design.contributions[metric]
                e = expected_counts(design, at)
                rated[metric] = ((e * num).sum(axis=1), (e * den).sum(axis=1))
        return rated[metric]

    def truth(metric: str, selection, what: str) -> float:
        kind = design.contributions[metric][0] if metric in design.contributions else None
        if kind in ("mean", "geometric_mean") and metric in design.unmodelled:
            return number_truth(metric, selection, what)
        if kind not in ("coverage", "proportion"):
            return math.nan  # the row path: no closed form of the truth of this metric
        sums = row_sums(metric) if metric in design.unmodelled else group_sums[metric]
        if sums is None:
            return math.nan
        num, den = sums
        m = sel.stacked([(selection, what)])[0]
        n, d = float(m @ num), float(m @ den)
        return n / d if d > 0 else math.nan

    def geometric(metric: str) -> bool:
        return metric in design.contributions and design.contributions[metric][0] == (
            "geometric_mean"
        )

    est = {}
    for e in rules.ESTIMATES:
        t = truth(e.metric, e.of, f"estimate {e.id}")
        est[e.id] = math.exp(t) if geometric(e.metric) and not math.isnan(t) else t
    con = {}
    for c in rules.CONTRASTS:
        d = truth(c.metric, c.a, f"contrast {c.id}") - truth(c.metric, c.b, f"contrast {c.id}")
        con[c.id] = math.exp(d) if geometric(c.metric) and not math.isnan(d) else d
    return est, con


def _alpha(rules, c) -> tuple[float, str]:
    """The level at which diagnose counts a contrast's test as rejected, and where it comes
    from: its family's alpha; else the threshold its hypothesis' rule compares its P value
    with (``p lt/le value``); else, for a test no rule reads, 1 − its interval's level."""
    if c.family is not None:
        return float(rules.FAMILIES[c.family].alpha), "family"
    found = _rule_alphas(rules).get(c.id)
    if found is not None:
        return found, "rule"
    return 1.0 - float(c.level), "interval level"


def _rule_alphas(rules) -> dict[str, float]:
    """Contrast id -> the one threshold a rule compares its unadjusted P value with."""
    from prereg.rules import AllOf, AnyOf, AtLeast, Compare, ForEach, Not, fill

    found: dict[str, set[float]] = {}

    def walk(node, binding):
        if node is None:
            return
        if isinstance(node, Compare):
            if node.quantity == "p" and node.op in ("lt", "le"):
                found.setdefault(fill(node.target, binding), set()).add(float(node.value))
        elif isinstance(node, (AllOf, AnyOf, AtLeast)):
            for c in node.conditions:
                walk(c, binding)
        elif isinstance(node, Not):
            walk(node.condition, binding)
        elif isinstance(node, ForEach):
            for v in node.values:
                walk(node.condition, {**binding, node.name: v})

    for rule, verdicts in getattr(rules, "RULES", {}).values():
        walk(rule, {})
        for v in verdicts:
            walk(v.when, {})
    return {k: next(iter(v)) for k, v in found.items() if len(v) == 1}


def summarize(plan: Plan, condition: int, blocks: Sequence) -> dict:
    rules = plan.rules
    cond = plan.conditions[condition]
    verdicts = [v for b in blocks for v in b.verdicts]
    n = len(verdicts)
    gates = np.concatenate([b.gates for b in blocks]) if blocks else np.zeros((0, 0), bool)
    est = np.concatenate([b.estimates for b in blocks])
    con = np.concatenate([b.contrasts for b in blocks])
    t_est, t_con = truths(plan, condition)

    hyps = []
    for j, h in enumerate(rules.HYPOTHESES):
        got: dict[str, int] = {}
        for v in verdicts:
            got[v[j]] = got.get(v[j], 0) + 1
        names = rules.verdicts(h)
        names += sorted(v for v in got if v not in names)
        hyps.append(
            {"id": h, "verdicts": [{"verdict": v, **share(got.get(v, 0), n)} for v in names]}
        )
    any_gate = gates.any(axis=1) if gates.size else np.zeros(n, dtype=bool)
    gate_rows = [
        {"id": g.id, "failed": share(int(gates[:, j].sum()), n)} for j, g in enumerate(rules.GATES)
    ]

    def figures(values: np.ndarray, truth: float) -> dict:
        x, lo, hi = values[:, 0], values[:, 1], values[:, 2]
        mean, se, defined = _mean_se(x)
        ok = ~(np.isnan(lo) | np.isnan(hi))
        covered = int((ok & (lo <= truth) & (truth <= hi)).sum()) if not math.isnan(truth) else 0
        return {
            "truth": r(truth),
            "defined": defined,
            "meanEstimate": r(mean),
            "bias": r(None if mean is None or math.isnan(truth) else mean - truth),
            "biasMcSe": r(se),
            "coverage": share(covered, int(ok.sum())) if not math.isnan(truth) else None,
        }

    estimates = [
        {"id": e.id, "hypothesis": e.hypothesis, **figures(est[:, j, :3], t_est[e.id])}
        for j, e in enumerate(rules.ESTIMATES)
    ]
    contrasts = []
    fam_hits: dict[str, np.ndarray] = {}
    for j, c in enumerate(rules.CONTRASTS):
        row = {"id": c.id, "hypothesis": c.hypothesis, **figures(con[:, j, :3], t_con[c.id])}
        lo, hi, p, adj = con[:, j, 1], con[:, j, 2], con[:, j, 3], con[:, j, 4]
        null = float(getattr(c, "margin", 0.0) or 0.0)
        with np.errstate(invalid="ignore"):
            excl = (lo > null) | (hi < null)
        row["excludesNull"] = share(int(excl.sum()), n)
        if c.test != "none":
            alpha, source = _alpha(rules, c)
            with np.errstate(invalid="ignore"):
                raw = p < alpha
            row["alpha"] = alpha
            row["alphaFrom"] = source
            row["rejected"] = share(int(raw.sum()), n)
            if c.family is not None:
                fam_alpha = float(rules.FAMILIES[c.family].alpha)
                with np.errstate(invalid="ignore"):
                    hit = adj < fam_alpha
                row["rejectedAdjusted"] = share(int(hit.sum()), n)
                prev = fam_hits.get(c.family)
                fam_hits[c.family] = hit if prev is None else (prev | hit)
        contrasts.append(row)
    analyses = []
    found_analyses = tuple(getattr(rules, "ANALYSES", ()))
    if found_analyses:
        ana = np.concatenate([b.analyses for b in blocks])
        for j, a in enumerate(found_analyses):
            x = ana[:, j]
            # an infinite estimate (an odds ratio over a zero cell) is not averaged
            mean, se, defined = _mean_se(np.where(np.isinf(x[:, 0]), np.nan, x[:, 0]))
            row = {
                "id": a.id,
                "hypothesis": a.hypothesis,
                "method": a.method,
                "defined": defined,
                "meanEstimate": r(mean),
                "meanEstimateMcSe": r(se),
                "withP": int((~np.isnan(x[:, 3])).sum()),
            }
            alpha, source = _analysis_alpha(rules, a)
            if alpha is not None:
                with np.errstate(invalid="ignore"):
                    raw = x[:, 3] < alpha
                row.update(alpha=alpha, alphaFrom=source, rejected=share(int(raw.sum()), n))
            if a.family is not None:
                fam_alpha = float(rules.FAMILIES[a.family].alpha)
                with np.errstate(invalid="ignore"):
                    hit = x[:, 4] < fam_alpha
                row["rejectedAdjusted"] = share(int(hit.sum()), n)
                prev = fam_hits.get(a.family)
                fam_hits[a.family] = hit if prev is None else (prev | hit)
            analyses.append(row)
    families = [
        {
            "id": f,
            "adjustment": rules.FAMILIES[f].adjustment,
            "alpha": float(rules.FAMILIES[f].alpha),
            "anyRejected": share(int(hits.sum()), n),
        }
        for f, hits in fam_hits.items()
    ]
    registered = getattr(rules, "DECISION", None)
    decision = None
    if registered is not None:
        outcomes = [o for b in blocks for o in (b.outcomes or [])]
        counted: dict[str, int] = {}
        for o in outcomes:
            counted[o] = counted.get(o, 0) + 1
        decision = [
            {"outcome": o.id, **share(counted.get(o.id, 0), n)} for o in registered.outcomes
        ]
    out = {
        "scenario": cond.scenario,
        "effect": cond.effect,
        "simulations": n,
        "decision": decision,
        "gates": {"anyFailed": share(int(any_gate.sum()), n), "byGate": gate_rows},
        "hypotheses": hyps,
        "families": families,
        "estimates": estimates,
        "contrasts": contrasts,
    }
    if found_analyses:
        out["analyses"] = analyses
    return out


def _analysis_alpha(rules, a) -> tuple[float | None, str | None]:
    """The level at which diagnose counts an analysis' P as rejected: its family's alpha, else
    the one threshold its hypothesis' rule compares its P with; else none (no rate)."""
    if a.family is not None:
        return float(rules.FAMILIES[a.family].alpha), "family"
    found = _rule_alphas(rules).get(a.id)
    if found is not None:
        return found, "rule"
    return None, None


def power_share(summary: dict, hypothesis: str, verdict: str) -> dict | None:
    for h in summary["hypotheses"]:
        if h["id"] == hypothesis:
            for v in h["verdicts"]:
                if v["verdict"] == verdict:
                    return v
            return {"count": 0, "share": 0.0, "mcSe": 0.0}
    return None


def detectable(effects: Sequence[float], shares: Sequence[float], target: float) -> float | None:
    """The smallest effect size reaching ``target`` by linear interpolation between the
    registered sizes (effects ascending); None when none reaches it."""
    pairs = sorted(zip(effects, shares, strict=True))
    prev = None
    for e, s in pairs:
        if s >= target:
            if prev is None or prev[1] >= target:
                return e
            e0, s0 = prev
            return e0 + (target - s0) * (e - e0) / (s - s0)
        prev = (e, s)
    return None
