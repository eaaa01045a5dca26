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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

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


#: The agreement analyses whose truth :func:`.truths.agreement` works out under ``ratings``.
_AGREEMENT = (
    "percent-agreement",
    "cohens-kappa",
    "gwet-ac1",
    "fleiss-kappa",
    "krippendorff-alpha",
    "intraclass-correlation",
    "fleiss-kappa-bootstrap",
    "krippendorff-alpha-bootstrap",
)
#: The label estimators whose truth :meth:`_Truths.labels` works out under ``ratings``.
_LABELS = ("precision", "recall", "f1-score")
#: Agreement over any number of raters (the others compare two).
_MANY_RATERS = ("fleiss-kappa", "krippendorff-alpha")
#: The agreement figures with a bootstrap interval: the truth of the figure they estimate.
_BOOTSTRAPPED = {
    "fleiss-kappa-bootstrap": "fleiss-kappa",
    "krippendorff-alpha-bootstrap": "krippendorff-alpha",
}

#: The analyses of a confidence metric whose truth :meth:`_Truths.confidence` works out.
#: Correlation methods and the correlation each estimates (correlation-difference: of its
#: ``correlation`` option).
_CORRELATIONS = {
    "pearson-correlation": "pearson",
    "spearman-correlation": "spearman",
    "kendall-tau-b": "kendall",
    "correlation-difference": None,
}

_CONFIDENCE_FIGURES = {
    "expected-calibration-error": "ece",
    "brier-score": "brier",
    "auroc": "auroc",
    "selective-accuracy": "selective",
}


class _Truths:
    """The truths of one condition: a metric's over a selection (the scenario's expected
    metric: expected numerator over expected denominator for a proportion, the cells' expected
    numbers weighted by their observed rows for a mean), and an analysis' (:mod:`.truths`)."""

    def __init__(self, plan: Plan, condition: int):
        design = plan.design
        self.plan, self.design = plan, design
        self.cond = plan.conditions[condition]
        exp = expected_counts(design, self.cond)
        self.sel = scorer(plan).sel  # the plan's selections, shared by its conditions
        marginal = getattr(design, "marginal", None) or {}
        self.group_sums = {
            mid: ((exp * num).sum(axis=1), (exp * den).sum(axis=1))
            for mid, (_, num, den) in {**design.contributions, **marginal}.items()
        }
        model = getattr(design, "rows", None)
        scenarios = getattr(model, "scenarios", None) or {}
        self.scenario = scenarios.get(self.cond.scenario)
        self.numbers: dict[tuple[str, bool | None], np.ndarray | None] = {}
        self.rated: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

    def kind(self, metric: str) -> str | None:
        found = self.design.contributions.get(metric)
        return None if found is None else found[0]

    def mask(self, selection, what: str) -> np.ndarray:
        return self.sel.stacked([(selection, what)])[0]

    def weights(self, selection, what: str) -> np.ndarray:
        """Per group: its observed rows where the selection holds, else 0."""
        kept = self.cond.kept[self.design.group_cell].astype(float)
        return self.mask(selection, what) * kept

    def proportions(self, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Per group, the expected numerator and denominator of a proportion or coverage
        metric (None without a closed form)."""
        design = self.design
        if self.kind(metric) not in ("coverage", "proportion"):
            return None
        if metric in design.unmodelled:
            rated = self.row_sums(metric)
            if rated is not None:
                return rated
            if metric not in (getattr(design, "marginal", None) or {}):
                return None
            if self.scenario is not None and self.scenario.get("calibration"):
                return None  # the chance of a right row follows a drawn confidence
        return self.group_sums[metric]

    def row_sums(self, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The row path's expected numerator and denominator of a proportion per group, at
        the chances of a right outcome the row model gives (None: no closed form)."""
        if metric not in self.rated:
            design, cond = self.design, self.cond
            rates = None
            model = getattr(design, "rows", None)
            if self.plan.path == "rows" and hasattr(model, "cell_rates"):
                rates = model.cell_rates(metric, cond)
            if rates is None:
                self.rated[metric] = None
            else:
                at = replace(cond, rate=np.asarray(rates, dtype=np.float64)[design.group_cell])
                _, num, den = design.contributions[metric]
                e = expected_counts(design, at)
                self.rated[metric] = ((e * num).sum(axis=1), (e * den).sum(axis=1))
        return self.rated[metric]

    def proportion(self, metric: str, selection, what: str) -> float:
        sums = self.proportions(metric)
        if sums is None:
            return math.nan
        m = self.mask(selection, what)
        n, d = float(m @ sums[0]), float(m @ sums[1])
        return n / d if d > 0 else math.nan

    def cell_numbers(self, metric: str, log: bool | None) -> np.ndarray | None:
        """Per cell, the row path's expected number (or log) of a mean metric."""
        key = (metric, log)
        if key not in self.numbers:
            per_cell = None
            model = getattr(self.design, "rows", None)
            if self.plan.path == "rows" and hasattr(model, "cell_truths"):
                per_cell = (
                    model.cell_truths(metric, self.cond)
                    if log is None
                    else model.cell_truths(metric, self.cond, log=log)
                )
            self.numbers[key] = per_cell
        return self.numbers[key]

    def number(self, metric: str, selection, what: str, log: bool | None = None) -> float:
        """The truth of a mean (log-mean) over a selection: the cells' expected numbers
        weighted by their observed rows (NaN without a closed form)."""
        per_cell = self.cell_numbers(metric, log)
        if per_cell is None:
            return math.nan
        w = self.weights(selection, what)
        return float(w @ per_cell[self.design.group_cell] / w.sum()) if w.sum() > 0 else math.nan

    def metric(self, metric: str, selection, what: str) -> float:
        kind = self.kind(metric)
        if kind in ("mean", "geometric_mean") and metric in self.design.unmodelled:
            return self.number(metric, selection, what)
        if kind in ("coverage", "proportion"):
            return self.proportion(metric, selection, what)
        if kind in ("ece", "auroc"):
            return self.confidence(kind, metric, selection, what)
        return math.nan  # the row path: no closed form of the truth of this metric

    def confidence(
        self, figure: str, metric: str, selection, what: str, bins=None, closed=None, **more
    ) -> float:
        """The truth of a figure of confidences (``ece``, ``auroc``, ``brier``) over the rows
        of a selection, under a calibration scenario on the row path
        (:func:`.truths.calibration_truth`): each cell's rows weighted by its observed rows,
        their confidence from the cell's calibration entry (a cell without one draws none, so
        its rows are not counted).  NaN where the figure's rows are not simply the observed
        rows with a confidence and its positives not simply the right (or the wrong) rows: a
        metric with an ``among`` other than its field being there, positives other than the
        outcome eq true or false, a field or outcome the attempt policy's ``where`` or
        ``select`` reads, the field also drawn by ``values``, units, a structured scenario, a
        rounded confidence."""
        from prereg.decide import scenarios as registered
        from prereg.decide.table import cell_attributes
        from prereg.rules import selection_matches

        from .truths import ConfidenceLaw, calibration_truth

        sc, model = self.scenario, getattr(self.design, "rows", None)
        config = getattr(model, "config", None)
        if self.plan.path != "rows" or sc is None or config is None or not sc.get("calibration"):
            return math.nan
        if config.get("units") or registered.structured(sc):
            return math.nan
        found = next((m for m in config.get("metrics") or () if m.get("id") == metric), None)
        comp = (found or {}).get("compute") or {}
        field, outcome = comp.get("field"), sc.get("outcome")
        if comp.get("kind") not in ("ece", "auroc") or field is None or outcome is None:
            return math.nan
        if any(
            c.get("field") != field or c.get("op") != "not_null" for c in comp.get("among") or ()
        ):
            return math.nan
        where = list(comp.get("where") or ())
        if len(where) != 1 or where[0].get("field") != outcome:
            return math.nan
        op, value = where[0].get("op"), where[0].get("value")
        wrong, right = registered.outcome_values(sc)  # what the outcome field holds
        if op not in ("eq", "ne") or not any(
            type(value) is type(v) and value == v for v in (wrong, right)
        ):
            return math.nan
        value = type(value) is type(right) and value == right  # the condition reads right
        policy = config.get("attempts") or {}
        read = {c.get("field") for part in ("where", "select") for c in policy.get(part) or ()} | {
            c.get("other") for part in ("where", "select") for c in policy.get(part) or ()
        }
        if field in read or outcome in read:
            return math.nan
        if any(str(v.get("field")) == field for v in sc.get("values") or ()):
            return math.nan
        weights = self.weights(selection, what)
        parts = []
        for g in np.flatnonzero(weights > 0).tolist():
            attrs = cell_attributes(self.design.cells[int(self.design.group_cell[g])])
            entry = next(
                (
                    c
                    for c in sc["calibration"]
                    if selection_matches(registered.selection(c.get("where")), attrs)
                ),
                None,
            )
            if entry is None or str(entry["field"]) != field:
                continue  # the cell's rows draw no confidence in this field: not counted
            law = ConfidenceLaw.of(entry)
            if law is None:
                return math.nan
            parts.append((float(weights[g]), law))
        return calibration_truth(
            figure,
            parts,
            positive_right=(op == "eq") == value,
            bins=comp.get("bins") if bins is None else bins,
            closed=str(comp.get("closed") or "left") if closed is None else closed,
            **more,
        )

    def geometric(self, metric: str) -> bool:
        return self.kind(metric) == "geometric_mean"

    def analysis(self, a) -> float:
        """The truth of analysis ``a``'s estimate (NaN where :mod:`.truths` cannot say)."""
        from .truths import ESTIMANDS, from_selections

        what = f"analysis {a.id}"
        kind = ESTIMANDS.get(a.method)
        if getattr(a, "b_metric", None) is not None:
            if kind in ("mean-diff", "gm-ratio"):
                # two numbers of one row (a wide log): each field's (log) mean over its
                # selection's rows, a's metric less b's
                log = kind == "gm-ratio"
                return from_selections(
                    kind,
                    None,
                    self.number(a.metric, a.a, what, log=log),
                    self.number(a.b_metric, a.b, what, log=log),
                )
            from .truths import NoTruth

            raise NoTruth(
                f"b's rows read metric {a.b_metric!r} and a's {a.metric!r}: the truth of two"
                f" fields of one row compared is worked out for a difference (or ratio) of"
                f" means, not for {a.method}"
            )
        metric = getattr(a, "metric", None)
        if kind is not None and metric is not None:
            if kind.startswith("p") or kind == "odds-ratio":
                value = self.proportion
                log = None
            else:
                value = self.number
                log = kind == "gm-ratio"

            def at(side):
                if side is None:
                    return None
                return (
                    value(metric, side, what) if log is None else value(metric, side, what, log=log)
                )

            return from_selections(
                kind,
                at(getattr(a, "of", None)),
                at(getattr(a, "a", None)),
                at(getattr(a, "b", None)),
            )
        if a.method == "dunnett" and metric is not None:
            # the treatment's mean less the control's (groups' first)
            groups = list(getattr(a, "groups", None) or ())
            position = (getattr(a, "options", None) or {}).get("treatment")
            if isinstance(position, int) and 2 <= position <= len(groups):
                return self.number(metric, groups[position - 1], what) - self.number(
                    metric, groups[0], what
                )
            return math.nan
        if a.method == "mantel-haenszel-risk-difference" and metric is not None:
            return self.mh_risk_difference(a, metric, what)
        if a.method == "cochran-mantel-haenszel" and metric is not None:
            return self.mh_risk_difference(a, metric, what, odds=True)
        if a.method in _GROUP_LINEAR and metric is not None:
            return self.group_linear(a, metric, what)
        if a.method in ("pass-at-k", "pass-at-k-t") and metric is not None:
            return self.pass_at_k(a)
        if a.method in _PASS_DIFFERENCES and metric is not None:
            # the mean over problems of a difference is the difference of the arms' means:
            # each arm's pass@k truth as pass-at-k's over its own selection
            from types import SimpleNamespace

            def arm(side: str) -> float:
                shim = {k: getattr(a, k, None) for k in ("id", "metric", "unit", "options")}
                return self.pass_at_k(SimpleNamespace(**shim, of=getattr(a, side)))

            return arm("a") - arm("b")
        if a.method == "majority-vote" and getattr(a, "of", None) is not None:
            return self.majority_vote(a)
        if a.method == "design-effect" and metric is not None:
            return self.design_effect(a)
        if a.method in _CORRELATIONS and metric is not None:
            return self.correlation(a, metric)
        if a.method in _AGREEMENT:
            return self.agreement(a)
        if a.method in _LABELS:
            return self.labels(a, metric)
        if a.method == "brier-score-difference" and metric is not None:
            # pairing moves no row's expectation: the difference of the arms' Brier truths
            what = f"analysis {a.id}"
            return self.confidence("brier", metric, a.a, what) - self.confidence(
                "brier", metric, a.b, what
            )
        if a.method in _CONFIDENCE_FIGURES and metric is not None and getattr(a, "of", None):
            options = getattr(a, "options", {}) or {}
            return self.confidence(
                _CONFIDENCE_FIGURES[a.method],
                metric,
                a.of,
                f"analysis {a.id}",
                bins=options.get("edges"),
                closed=options.get("closed"),
                **(
                    {"coverage": options.get("coverage"), "ties": options.get("ties")}
                    if a.method == "selective-accuracy"
                    else {}
                ),
            )
        return math.nan

    def group_linear(self, a, metric: str, what: str) -> float:
        """The truth of a linear function of the groups' proportions or means: a linear
        contrast ``Σ c_i θ_i`` (the coefficients as written, "1/3" exactly), or the
        Cochran–Armitage slope ``Σ n_i (s_i − s̄) p_i / Σ n_i (s_i − s̄)²`` with ``s̄`` the
        n-weighted mean score, ``n_i`` each group's expected counted rows (the registered rows
        when none is missing, the sizes the method weighs by) and ``p_i`` its proportion."""
        from prereg.stats.compare import exact_number

        groups = list(getattr(a, "groups", None) or ())
        options = getattr(a, "options", None) or {}
        if a.method == "cochran-armitage":
            sums = self.proportions(metric)
            if sums is None:
                return math.nan
            n, p = [], []
            for g in groups:
                m = self.mask(g, what)
                k, d = float(m @ sums[0]), float(m @ sums[1])
                n.append(d)
                p.append(k / d if d > 0 else math.nan)
            scores = [float(exact_number(v)) for v in options.get("scores") or ()]
            used = [(ni, si, pi) for ni, si, pi in zip(n, scores, p, strict=True) if ni > 0]
            total = math.fsum(ni for ni, _, _ in used)
            if not used or total <= 0:
                return math.nan
            mean = math.fsum(ni * si for ni, si, _ in used) / total
            ss = math.fsum(ni * (si - mean) ** 2 for ni, si, _ in used)
            if ss <= 0:
                return math.nan
            return math.fsum(ni * (si - mean) * pi for ni, si, pi in used) / ss
        coefficients = [float(exact_number(v)) for v in options.get("coefficients") or ()]
        value = self.proportion if a.method == "linear-contrast-proportions" else self.number
        parts = [c * value(metric, g, what) for c, g in zip(coefficients, groups, strict=True) if c]
        return math.fsum(parts) if parts else math.nan

    def mh_risk_difference(self, a, metric: str, what: str, odds: bool = False) -> float:
        """The Mantel–Haenszel risk difference's truth: ``Σ w_s (p_as − p_bs) / Σ w_s`` over
        the levels of ``strata``, each arm's proportion in a stratum its expected numerator
        over its expected denominator, ``w_s = n_as n_bs / (n_as + n_bs)`` with the expected
        counted rows (the registered rows when none is missing, so the weights are the ones
        the method uses); a stratum with an empty arm carries no weight, as in the method.
        With ``odds``, the Mantel–Haenszel common odds ratio's: ``Σ w_s p_as (1 − p_bs) /
        Σ w_s p_bs (1 − p_as)`` (the expectations of R and S of the method's ``R/S``)."""
        sums = self.proportions(metric)
        if sums is None:
            return math.nan
        levels = list(
            dict.fromkeys(
                str(c[a.strata]) for c in self.sel.cell_attrs if c.get(a.strata) is not None
            )
        )
        num = den = 0.0
        for level in levels:
            parts = []
            for side in (a.a, a.b):
                sel = dict(side)
                if a.strata in sel and level not in sel[a.strata]:
                    parts.append((0.0, 0.0))
                    continue
                sel[a.strata] = (level,)
                m = self.mask(sel, what)
                parts.append((float(m @ sums[0]), float(m @ sums[1])))
            (ka, na), (kb, nb) = parts
            if na <= 0 or nb <= 0:
                continue
            w = na * nb / (na + nb)
            pa, pb = ka / na, kb / nb
            if odds:
                num += w * pa * (1.0 - pb)
                den += w * pb * (1.0 - pa)
            else:
                num += w * (pa - pb)
                den += w
        return num / den if den > 0 else math.nan

    def pass_at_k(self, a) -> float:
        """pass@k's truth over the cells of ``a.of``, weighted by their observed rows: per cell
        E[1 − (1 − p)^k] for the problems of the level named by ``a.unit`` (the innermost
        cluster level; without levels each sample on its own), p's mean the cell's rate; with a
        level inside the problems, :meth:`_pass_at_k_nested`."""
        from prereg.decide import scenarios as registered

        from .truths import NoTruth, pass_at_k

        what = f"analysis {a.id}"
        sums = self.proportions(a.metric)
        if sums is None or getattr(a, "of", None) is None:
            raise NoTruth("the metric's chance of a hit has no closed form under this scenario")
        levels = registered.cluster_levels(self.scenario) if self.scenario is not None else []
        icc, beta = 0.0, False
        fields = [str(lv["field"]) for lv in levels]
        if str(a.unit) in fields[:-1]:
            return self._pass_at_k_nested(a, sums, levels, fields.index(str(a.unit)))
        if levels:
            icc, beta = self._problem_chance(str(a.unit), levels)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = sums[0] / sums[1]
        k = int(a.options["k"])
        w = self.weights(a.of, what)
        total = 0.0
        for g in np.flatnonzero(w > 0).tolist():
            r = float(rate[g])
            if math.isnan(r) or (icc > 0 and abs(r - float(self.cond.rate[g])) > 1e-12):
                raise NoTruth(
                    "a sample's chance of a hit is not the scenario's rate (the metric reads more"
                    " than the outcome), so the problems' law of it is not registered"
                )
            total += float(w[g]) * pass_at_k(r, k, icc=icc, beta=beta)
        return total / float(w.sum()) if w.sum() > 0 else math.nan

    def _pass_at_k_nested(self, a, sums, levels, at: int) -> float:
        """pass@k's truth when one cluster level lies inside the problems (level ``at``): the
        mean over the problems of ``a.of`` of :func:`.truths.pass_at_k_nested`, each problem's
        samples split into its inner clusters as the registered layout splits them (fixed
        sizes), at its cell's rate."""
        from prereg.decide import scenarios as registered

        from .truths import NoTruth, pass_at_k_nested

        inside = levels[at + 1 :]
        if len(inside) > 1:
            raise NoTruth(
                f"more than one cluster level lies inside the problems ({a.unit}): not worked out"
            )
        if any(registered.level_distribution(lv) == "beta" for lv in levels):
            raise NoTruth("a beta level beside other levels has no registered joint law")
        outer = math.fsum(float(lv["correlation"]) for lv in levels[: at + 1])
        inner = float(inside[0]["correlation"])
        problem_of = self.row_values(str(a.unit))
        cluster_of = self.row_values(str(inside[0]["field"]))
        cells = np.asarray(self.design.rows.table.cell)
        chosen = self.mask(a.of, f"analysis {a.id}")  # groups are cells here
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = sums[0] / sums[1]
        problems: dict[Any, dict[Any, int]] = {}
        cell_of: dict[Any, int] = {}
        owner: dict[Any, Any] = {}
        for i in np.flatnonzero(chosen[cells] > 0).tolist():
            u, c = problem_of[i], (int(cells[i]), cluster_of[i])
            if owner.setdefault(c, u) != u:
                raise NoTruth(f"an inner cluster of {inside[0]['field']!r} spans two problems")
            per = problems.setdefault(u, {})
            per[c] = per.get(c, 0) + 1
            cell_of[u] = int(cells[i])
        if not problems:
            raise NoTruth("the selection has no rows")
        k = int(a.options["k"])
        done: dict[tuple, float] = {}
        total = 0.0
        for u, per in problems.items():
            g = cell_of[u]
            r = float(rate[g])
            if math.isnan(r) or abs(r - float(self.cond.rate[g])) > 1e-12:
                raise NoTruth(
                    "a sample's chance of a hit is not the scenario's rate (the metric reads more"
                    " than the outcome), so the problems' law of it is not registered"
                )
            key = (r, tuple(sorted(per.values())))
            if key not in done:
                done[key] = pass_at_k_nested(r, k, outer, inner, key[1])
            total += done[key]
        return total / len(problems)

    def _problem_chance(self, unit: str, levels) -> tuple[float, bool]:
        """(latent intraclass correlation, beta) of a problem's chance of a right sample, the
        problems being the clusters of ``unit``: the innermost cluster level, whose chance
        every level around it moves too (NoTruth otherwise, with the reason)."""
        from prereg.decide import scenarios as registered

        from .truths import NoTruth

        fields = [str(lv["field"]) for lv in levels]
        if unit not in fields:
            raise NoTruth(
                f"the problems ({unit}) are not a cluster level of the scenario"
                f" ({', '.join(fields)}), so their chance of a right sample is not registered"
            )
        if fields[-1] != unit:
            raise NoTruth(
                f"the problems ({unit}) are not the innermost cluster level (inside them:"
                f" {', '.join(fields[fields.index(unit) + 1 :])}): a problem's samples are not"
                " alike given its chance, so the estimator's expectation depends on how its"
                " samples fall into the inner clusters and is no property of the problems"
            )
        beta = registered.level_distribution(levels[-1]) == "beta"
        if beta and len(levels) > 1:
            raise NoTruth("a beta level beside other levels has no registered joint law")
        return math.fsum(float(lv["correlation"]) for lv in levels), beta

    def row_values(self, field: str) -> list:
        """Each registered row's value of ``field`` (the drawn rows' table, in order): a column
        of the item manifest, or a field the scenario lays out with fixed cluster sizes
        (NoTruth when the sizes are drawn at random or the field has no value per row)."""
        from prereg.engines.factorial.draws import _has
        from prereg.engines.factorial.structure import Layout, applies

        from .truths import NoTruth

        model = getattr(self.design, "rows", None)
        table = getattr(model, "table", None)
        if table is None:
            raise NoTruth("the study's rows are not drawn one by one (no row table)")
        if field in table.columns:
            return list(table.columns[field])
        sc = self.scenario
        if sc is None or not applies(model.config, sc):
            raise NoTruth(f"{field!r} is not a column of the item manifest")
        layout = Layout(model.config, sc, table, _has(model.config, "items"))
        for lv in layout.laid:
            size = lv["size"]
            if size.get("mean") is not None or int(size["low"]) != int(size["high"]):
                raise NoTruth(
                    f"the clusters of {lv['field']!r} have sizes drawn at random, so how many rows"
                    " share one varies from study to study"
                )
        import numpy as np

        laid, fields = layout.lay_out(np.random.default_rng(0))
        try:
            return layout.field_values(laid, fields, field)
        except Exception as e:  # UserError: no value per row
            raise NoTruth(str(e)) from None

    def fixed_values(self, field: str) -> list:
        """Each registered row's value of a field the scenario does not vary: a number every
        row's value entry draws without spread (a uniform entry of no width, sd 0), the same
        whatever the outcome, as the engine draws it (:func:`latent_values` at any latent);
        else :meth:`row_values`."""
        from prereg.engines.factorial.draws import _entries_of, latent_values

        from .truths import NoTruth

        model = self.design.rows
        entries = dict(model.writer(self.cond.scenario).values).get(field)
        if entries is None:
            return self.row_values(field)
        integer = model.writer(self.cond.scenario).integer.get(field, False)
        which = _entries_of(model.table.cells, field, entries)
        per_cell = []
        for c in range(len(model.table.cells)):
            got = set()
            for j in {int(x) for x in which[c]}:
                v = entries[j] if j >= 0 else None
                if v is None:
                    got.add(None)
                    continue
                flat = (v["distribution"] == "uniform" and float(v["low"]) == float(v["high"])) or (
                    v["distribution"] != "uniform" and float(v.get("sd") or 0.0) == 0.0
                )
                if not flat:
                    raise NoTruth(f"the scenario draws {field!r} at random, not as a fixed value")
                got.add(float(latent_values(v, np.zeros(1), integer)[0]))
            if len(got) != 1:
                raise NoTruth(f"{field!r} differs between right and wrong rows of a cell")
            per_cell.append(got.pop())
        return [per_cell[int(c)] for c in np.asarray(model.table.cell).tolist()]

    def majority_vote(self, a) -> float:
        """The accuracy of a majority vote over each problem's registered samples, averaged
        over the problems of ``a.of`` (each problem's samples all observed: missing samples
        change the vote, which shows as bias).  The answers are the outcome (``rating`` the
        scenario's outcome field: a sample's answer is right with the problem's chance, under
        the clusters of :meth:`_problem_chance`; :func:`.truths.binary_vote`) or a ``ratings``
        entry's labels (the problem's true category from the prevalence, its samples' answers
        drawn alike from the confusion row: :func:`.truths.majority_vote`); the correct answer
        ``truth`` a column of the item manifest."""
        from prereg.decide import scenarios as registered

        from .truths import NoTruth, binary_vote, majority_vote

        sc, cond = self.scenario, self.cond
        if sc is None:
            raise NoTruth("the scenario is not drawn row by row")
        if float(cond.failed_attempt_rate) > 0:
            raise NoTruth("failed first attempts change which samples count")
        tie = str((getattr(a, "options", {}) or {}).get("tie_break"))
        gold_of = self.fixed_values(str(a.truth))
        units = self.row_values(str(a.unit))
        cells = np.asarray(self.design.rows.table.cell)
        chosen = self.mask(a.of, f"analysis {a.id}")
        problems: dict[Any, list] = {}  # unit -> [cell, samples, gold]
        for i in np.flatnonzero(chosen[cells] > 0).tolist():
            got = problems.setdefault(units[i], [int(cells[i]), 0, gold_of[i]])
            got[1] += 1
        if not problems:
            raise NoTruth("the selection has no rows")
        outcome = sc.get("outcome")
        ratings = sc.get("ratings")
        credit = []
        if outcome is not None and str(a.rating) == str(outcome):
            if sc.get("calibration"):
                raise NoTruth("the outcome follows drawn confidences (calibration)")
            levels = registered.cluster_levels(sc)
            icc, beta = self._problem_chance(str(a.unit), levels) if levels else (0.0, False)
            wrong, right = registered.outcome_values(
                sc
            )  # what a sample writes when wrong, when right
            for cell, n, gold in problems.values():
                if gold is None or not (gold == right or gold == wrong):
                    credit.append(0.0)  # no answer a sample gives is the correct one
                    continue
                rate = float(cond.rate[cell])
                credit.append(binary_vote(n, rate, gold == right, tie, icc=icc, beta=beta))
        elif ratings is not None:
            ratings, cats, base, own = self._ratings(a)
            if own or base is None:
                raise NoTruth(
                    "the samples' answers follow raters of their own, not one confusion matrix"
                )
            prevalence = [float(x) for x in ratings["prevalence"]]
            for _, n, gold in problems.values():
                at = next((j for j, c in enumerate(cats) if c == gold), None)
                credit.append(
                    math.fsum(
                        pt * majority_vote(n, base[t], at, tie)
                        for t, pt in enumerate(prevalence)
                        if pt > 0
                    )
                )
        else:
            raise NoTruth(
                f"the scenario draws neither its outcome nor ratings into {a.rating!r}, the"
                " samples' answers"
            )
        return math.fsum(credit) / len(credit)

    def _drawn_number(self, metric: str, dropped: str):
        """(field, the scenario's writer, its value entries for the field) of a metric that
        is the mean of a number the scenario draws row by row, or NoTruth saying why not
        (``dropped``: what a study's units' include rules may drop, for the words)."""
        from .truths import NoTruth

        sc, cond, model = self.scenario, self.cond, getattr(self.design, "rows", None)
        config = getattr(model, "config", None)
        if sc is None or config is None:
            raise NoTruth("the scenario is not drawn row by row")
        if config.get("units"):
            raise NoTruth(f"the study registers units, whose include rules may drop {dropped}")
        if float(cond.failed_attempt_rate) > 0:
            raise NoTruth("failed first attempts change which rows count")
        if sc.get("calibration"):
            raise NoTruth("the number follows drawn confidences (calibration)")
        found = next((m for m in config.get("metrics") or () if m.get("id") == metric), None)
        comp = (found or {}).get("compute") or {}
        field = comp.get("field")
        if comp.get("kind") not in ("mean", "geometric_mean") or field is None:
            raise NoTruth("the metric is not a mean of a drawn number")
        if comp.get("where") or any(
            c.get("field") != field or c.get("op") != "not_null" for c in comp.get("among") or ()
        ):
            raise NoTruth("the metric keeps rows by conditions other than its number being there")
        writer = model.writer(cond.scenario)
        entries = dict(writer.values).get(str(field))
        if entries is None:
            raise NoTruth(f"the scenario draws no {field!r}")
        return field, writer, entries

    def design_effect(self, a) -> float:
        """1 + (m − 1)·ICC (:func:`.truths.design_effect`): the ICC of the metric's number
        within the clusters of ``a.cluster`` (:func:`.truths.value_icc` at the latent
        correlation of the scenario's cluster levels, the cluster field the innermost level; no
        levels: 0) and m the expected cluster size the method uses, from the clusters' rows
        in the registered layout and each cell's observed rows."""
        from prereg.decide import scenarios as registered
        from prereg.engines.factorial.draws import _entries_of

        from .truths import NoTruth, design_effect

        sc, cond, model = self.scenario, self.cond, getattr(self.design, "rows", None)
        field, writer, entries = self._drawn_number(a.metric, "clusters")
        if writer.integer.get(str(field)):
            raise NoTruth(f"{field!r} is whole-numbered: the drawn numbers are rounded")
        which = _entries_of(model.table.cells, str(field), entries)
        levels = registered.cluster_levels(sc)
        fields = [str(lv["field"]) for lv in levels]
        if levels and fields[-1] != str(a.cluster):
            raise NoTruth(
                f"the clusters ({a.cluster}) are not the scenario's innermost cluster level"
                f" ({', '.join(fields)}): rows of one cluster are correlated unequally"
            )
        rho = math.fsum(float(lv["correlation"]) for lv in levels)
        table = model.table
        options = getattr(a, "options", {}) or {}
        drawn = self._drawn_sizes(a, levels, entries, which, rho, options)
        if drawn is not None:
            return drawn
        clusters_of = self.row_values(str(a.cluster))
        cells = np.asarray(table.cell)
        registered_rows = np.bincount(cells, minlength=len(table.cells))
        arms, icc_value = self._arm_entries(a, entries, which, rho)
        clusters: dict[tuple, dict[int, int]] = {}
        for arm, arm_cells in enumerate(arms):
            for i in np.flatnonzero(np.isin(cells, arm_cells)).tolist():
                per = clusters.setdefault((arm, clusters_of[i]), {})
                per[int(cells[i])] = per.get(int(cells[i]), 0) + 1
        own = levels and not levels[-1].get("shared") and str(a.cluster) not in table.columns
        if own and any(len(per) > 1 for per in clusters.values()):
            raise NoTruth(
                f"clusters of different cells share a name of {a.cluster!r} (numbered alike in"
                " each cell) but draw their own latents, so the analysis pools unrelated rows"
            )
        parts = [
            [(c, size, int(registered_rows[c]), int(cond.kept[c])) for c, size in per.items()]
            for per in clusters.values()
        ]
        return design_effect(
            icc_value, parts, str(options.get("cluster_size")), str(options.get("negative_icc"))
        )

    def correlation(self, a, metric: str) -> float:
        """The correlation a correlation method converges to (:func:`.truths.correlation`), or
        for ``correlation-difference`` the difference of the reference's two: the rows of one
        item (``pair_by`` or ``unit``) share the latent of the scenario's one cluster level on
        that field (``pairing``, a manifest field, or a shared laid-out level of one row a
        cluster), so a row of each arm is a pair of latents with its correlation, and each arm
        draws its number from one value entry."""
        from prereg.decide import scenarios as registered
        from prereg.engines.factorial.draws import _entries_of

        from .truths import NoTruth, correlation

        sc, model = self.scenario, getattr(self.design, "rows", None)
        field, writer, entries = self._drawn_number(metric, "items")
        if writer.integer.get(str(field)):
            raise NoTruth(f"{field!r} is whole-numbered: the drawn numbers are rounded (ties)")
        key = str(getattr(a, "pair_by", None) or getattr(a, "unit", None))
        levels = registered.cluster_levels(sc)
        if len(levels) != 1 or str(levels[0].get("field")) != key:
            raise NoTruth(
                f"the rows of one {key} are not paired by the scenario's one cluster level on"
                f" {key!r} (pairing, or clusters with that one level): their correlation is"
                " not worked out"
            )
        lv = levels[0]
        size = lv.get("size") or {}
        laid_one = (
            lv.get("shared")
            and size.get("mean") is None
            and (int(size.get("low", 0)) == int(size.get("high", 0)) == 1)
        )
        if sc.get("pairing") is None and key not in model.table.columns and not laid_one:
            raise NoTruth(
                f"the scenario's clusters of {key!r} are not the items themselves (a shared level"
                " of one row a cluster, or a field of the item manifest)"
            )
        rho = float(lv["correlation"])
        which = _entries_of(model.table.cells, str(field), entries)
        what = f"analysis {a.id}"

        def entry(side):
            chosen = self.mask(side, what)  # groups are cells here
            cells = np.flatnonzero(chosen > 0).tolist()
            used = {int(which[c, 0]) for c in cells}
            if sc.get("outcome") is not None:
                used |= {int(which[c, 1]) for c in cells}
            if len(used) != 1 or -1 in used:
                raise NoTruth(
                    "the rows of one arm draw the number from more than one entry (by cell or"
                    " outcome): not one law per arm"
                )
            return entries[used.pop()]

        if a.method == "correlation-difference":
            groups = list(getattr(a, "groups", None) or ())
            kind = str((getattr(a, "options", None) or {}).get("correlation"))
            if len(groups) != 3:
                return math.nan
            ref, first, second = (entry(g) for g in groups)
            return correlation(kind, ref, first, rho) - correlation(kind, ref, second, rho)
        return correlation(_CORRELATIONS[a.method], entry(a.a), entry(a.b), rho)

    def _arm_entries(self, a, entries, which, rho: float) -> tuple[list[list[int]], float]:
        """(each arm's cells, the ICC of their number): one value entry per arm, the arms'
        ICCs alike (NoTruth otherwise)."""
        from .truths import NoTruth, value_icc

        sides = [s for s in (getattr(a, "of", None), getattr(a, "a", None), a_b(a)) if s]
        arms, iccs = [], set()
        for side in sides:
            chosen = self.mask(side, f"analysis {a.id}")  # groups are cells here
            arm_cells = np.flatnonzero(chosen > 0).tolist()
            used = {int(which[c, 0]) for c in arm_cells}
            if self.scenario.get("outcome") is not None:
                used |= {int(which[c, 1]) for c in arm_cells}
            if len(used) != 1 or -1 in used:
                raise NoTruth(
                    "the rows of one arm draw the number from more than one entry (by cell or"
                    " outcome), so its clusters' means differ by more than the clusters"
                )
            iccs.add(round(value_icc(entries[used.pop()], rho), 12))
            arms.append(arm_cells)
        if len(iccs) != 1:
            raise NoTruth("the arms' numbers have different ICCs, which the pooled ANOVA mixes")
        return arms, iccs.pop()

    def _drawn_sizes(self, a, levels, entries, which, rho: float, options) -> float | None:
        """The design effect when the clusters are the one laid-out level and their sizes are
        drawn at random (uniform or Poisson, not shared): ``size-weighted`` m = Σ over the arms'
        cells of E[Σ m_g²] (:func:`.truths.expected_square_sizes` thinned by the observed rows,
        :func:`.truths.thinned_square`) over N; None where the sizes are fixed or the field is
        not laid out (the layout then gives the clusters)."""
        from prereg.engines.factorial.draws import _has
        from prereg.engines.factorial.structure import Layout

        from .truths import NoTruth, expected_square_sizes, thinned_square

        model, cond = self.design.rows, self.cond
        if not levels or str(a.cluster) in model.table.columns:
            return None
        layout = Layout(model.config, self.scenario, model.table, _has(model.config, "items"))
        lv = levels[-1]
        size = lv.get("size") or {}
        if size.get("mean") is None and int(size.get("low", 0)) == int(size.get("high", 0)):
            return None
        if len(layout.laid) != 1 or layout.laid[0] is not lv:
            raise NoTruth(
                f"the clusters of {lv['field']!r} have sizes drawn at random inside other"
                " laid-out clusters: their expected size is not worked out"
            )
        if lv.get("shared"):
            raise NoTruth(
                f"the clusters of {lv['field']!r} have sizes drawn at random and shared by the"
                " cells: their expected size is not worked out"
            )
        if str(options.get("cluster_size")) == "mean":
            raise NoTruth(
                f"the clusters of {lv['field']!r} have sizes drawn at random, so the number of"
                " clusters G, and N/G, varies from study to study"
            )
        arms, icc_value = self._arm_entries(a, entries, which, rho)
        if layout.types.get(str(a.cluster)) == "integer" and any(len(c) > 1 for c in arms):
            raise NoTruth(
                f"clusters of different cells share a name of {a.cluster!r} (numbered alike in"
                " each cell) but draw their own latents, so the analysis pools unrelated rows"
            )
        rows = np.bincount(np.asarray(model.table.cell), minlength=len(model.table.cells))
        square = n = 0.0
        for c in sorted({c for cells in arms for c in cells}):
            total, kept = int(rows[c]), int(cond.kept[c])
            square += thinned_square(total, kept, expected_square_sizes(total, size))
            n += kept
        if n <= 0:
            raise NoTruth("the selection observes no rows")
        if str(options.get("negative_icc")) == "truncate":
            icc_value = max(icc_value, 0.0)
        return 1.0 + (square / n - 1.0) * icc_value

    def _ratings(self, a) -> tuple[Mapping[str, Any], list, np.ndarray, dict]:
        """(the scenario's ratings entry, its categories, the base confusion matrix, each
        rater's own matrix) for an analysis of its labels (NoTruth when it draws none)."""
        from prereg.decide import scenarios as registered

        from .truths import NoTruth

        sc = self.scenario
        ratings = None if sc is None else sc.get("ratings")
        if ratings is None:
            raise NoTruth("the scenario draws no ratings (no `ratings` entry)")
        if ratings.get("prevalence_by"):
            raise NoTruth("the items' prevalence varies by cell (prevalence_by)")
        wide = getattr(a, "b_rating", None) is not None  # resolved by _wide
        if not wide and str(a.rating) != str(ratings["field"]):
            raise NoTruth(
                f"the scenario's ratings are written into {ratings['field']!r}, not into the"
                f" analysis' rating field {a.rating!r}"
            )
        if str(a.unit) != str(ratings["item"]):
            raise NoTruth(
                f"the scenario's rated item is {ratings['item']!r}, not the analysis' unit"
                f" {a.unit!r}"
            )
        cats = list(ratings["categories"])
        k = len(cats)
        base = registered.confusion_matrix(ratings, k)
        own = {
            str(r["value"]): registered.confusion_matrix(r, k) for r in ratings.get("raters") or ()
        }
        return ratings, cats, base, own

    def _wide(self, a, ratings, cats, base, own, options) -> list:
        """The two raters of a row holding both ratings, in the order rating, b_rating: the
        scenario's labels (its confusion matrix) and the true category it writes (the
        identity), each read as the analysis reads it (the field itself, or a derived field
        coding it), as matrices from the true category to the positions of the analysis'
        categories."""
        from .truths import NoTruth

        if own:
            raise NoTruth("raters with matrices of their own: whose labels the row holds")
        if base is None:
            raise NoTruth("the scenario's ratings give neither an accuracy nor a confusion matrix")
        positions = list(options.get("categories") or ())
        sources = {str(ratings["field"]): "label", str(ratings.get("truth")): "truth"}
        read = [self._coding(str(f), sources, cats) for f in (a.rating, a.b_rating)]
        if sorted(src for src, _ in read) != ["label", "truth"]:
            raise NoTruth(
                f"the scenario writes its labels into {ratings['field']!r} and the true category"
                f" into {ratings.get('truth')!r}; rating {a.rating!r} and b_rating"
                f" {a.b_rating!r} do not read one each"
            )
        k = len(cats)
        out = []
        for src, codes in read:
            at = []
            for code in codes:
                match = [i for i, c in enumerate(positions) if _same_code(c, code)]
                if not match:
                    raise NoTruth(f"code {code!r} is not one of the analysis' categories")
                at.append(match[0])
            m = np.zeros((k, len(positions)))
            for t in range(k):
                if src == "truth":
                    m[t, at[t]] = 1.0
                else:
                    for s_ in range(k):
                        m[t, at[s_]] += base[t, s_]
            out.append(m)
        return out

    def _coding(self, name: str, sources: Mapping[str, str], cats) -> tuple[str, list]:
        """(label or truth, each scenario category's code) of a field an analysis reads: the
        scenario's field itself, or a derived field whose cases code it (``eq`` one value
        each, a last case without ``when`` for the rest)."""
        from .truths import NoTruth

        if name in sources:
            return sources[name], list(cats)
        config = getattr(getattr(self.design, "rows", None), "config", None) or {}
        d = next((d for d in config.get("derived_fields") or () if str(d.get("id")) == name), None)
        cases = (d or {}).get("cases")
        if not cases:
            raise NoTruth(f"{name!r} is neither a field the scenario writes nor a coding of one")
        source = None
        codes = []
        for cat in cats:
            for case in cases:
                when = case.get("when") or []
                if len(when) > 1 or any(
                    set(c) != {"field", "op", "value"} or c["op"] != "eq" for c in when
                ):
                    raise NoTruth(f"derived field {name!r} is not a coding of one field by eq")
                if when:
                    field = str(when[0]["field"])
                    if source not in (None, field) or field not in sources:
                        raise NoTruth(f"derived field {name!r} does not code one scenario field")
                    source = field
                    if str(when[0]["value"]) != str(cat):
                        continue
                codes.append(case.get("value"))
                break
            else:
                codes.append(None)
        if source is None:
            raise NoTruth(f"derived field {name!r} codes no scenario field")
        return sources[source], codes

    def _matrices(self, a, base, own, many: bool, k_matters: bool) -> list:
        """The confusion matrix of each rater of an item: the rater field's allowed values,
        each with its own matrix or the scenario's; raters alike and no list of them: two
        (enough where the number of raters does not change the figure, ``k_matters`` False)."""
        from .truths import NoTruth

        raters = self._raters(str(a.rater)) if own or not many or k_matters else None
        if raters is None and own:
            raise NoTruth(
                f"raters have their own confusion matrices but the rater field {a.rater!r} lists"
                " no allowed values, so the raters of an item are not known"
            )
        if raters is None and k_matters:
            raise NoTruth(
                f"the number of raters per item is not registered (the rater field {a.rater!r}"
                " lists no allowed values)"
            )
        matrices = [base, base] if raters is None else [own.get(str(r), base) for r in raters]
        if any(m is None for m in matrices):
            raise NoTruth("a rater has neither an accuracy nor a confusion matrix")
        return matrices

    def agreement(self, a) -> float:
        """The agreement of the raters of a ``ratings`` scenario: its raters are the
        observation field's allowed values (each item rated by each), or, with no rater of
        its own, any raters alike; the intraclass correlation and Krippendorff's alpha over
        ordered labels read the categories as numbers (:func:`.truths.icc`,
        :func:`.truths.krippendorff`)."""
        from .truths import NoTruth, agreement, icc, krippendorff

        ratings, cats, base, own = self._ratings(a)
        method = _BOOTSTRAPPED.get(a.method, a.method)
        options = getattr(a, "options", {}) or {}
        if getattr(a, "b_rating", None) is not None:
            # both ratings of one row: the scenario's label and the true category it writes
            matrices = self._wide(a, ratings, cats, base, own, options)
            got = agreement(method, ratings["prevalence"], matrices, options.get("weights"))
            if math.isnan(got):
                raise NoTruth(f"{method} has no value under this scenario")
            return got
        level = options.get("level_of_measurement")
        numeric = method == "intraclass-correlation" or level not in (None, "nominal")
        if numeric:
            if any(isinstance(c, bool) or not isinstance(c, (int, float)) for c in cats):
                raise NoTruth("the scenario's categories are not numbers")
        elif [int(c) for c in options.get("categories") or cats] != [int(c) for c in cats]:
            raise NoTruth("the analysis' categories differ from the scenario's")
        form = str(options.get("form") or "")
        matrices = self._matrices(
            a,
            base,
            own,
            method in (*_MANY_RATERS, "intraclass-correlation"),
            method == "intraclass-correlation" and form.endswith("k"),
        )
        if method == "intraclass-correlation":
            return icc(form, ratings["prevalence"], matrices, cats)
        if method == "krippendorff-alpha" and numeric:
            return krippendorff(str(level), ratings["prevalence"], matrices, cats)
        got = agreement(method, ratings["prevalence"], matrices, weights=options.get("weights"))
        if math.isnan(got):
            raise NoTruth(f"{method} needs two raters per item under this scenario")
        return got

    def labels(self, a, metric) -> float:
        """Precision, recall or F1 of a ``ratings`` scenario's labels (the prediction) against
        the true category it writes (``truth``): over the joint law p_ij = prevalence_i ·
        confusion_ij, per class precision p_cc/p_.c, recall p_cc/p_c. and F1
        2p_cc/(p_c. + p_.c); micro pools them (each the share right), macro averages."""
        from .truths import NoTruth

        ratings = None if self.scenario is None else self.scenario.get("ratings")
        if ratings is None or ratings.get("truth") is None:
            raise NoTruth("the scenario draws no ratings with their true category (`truth`)")
        if ratings.get("prevalence_by"):
            raise NoTruth("the items' prevalence varies by cell (prevalence_by)")
        if (str(a.prediction), str(a.truth)) != (str(ratings["field"]), str(ratings["truth"])):
            raise NoTruth(
                f"the scenario writes its labels into {ratings['field']!r} and the true"
                f" category into {ratings['truth']!r}, not into the analysis' prediction"
                f" {a.prediction!r} and truth {a.truth!r}"
            )
        if ratings.get("raters"):
            raise NoTruth("raters with matrices of their own: whose labels are predicted")
        if metric is not None and self._among(metric):
            raise NoTruth(f"metric {metric!r} counts only some rows (its among)")
        options = getattr(a, "options", {}) or {}
        cats = [str(c) for c in ratings["categories"]]
        labels = [str(c) for c in options.get("labels") or ()]
        if sorted(labels) != sorted(cats):
            raise NoTruth("the analysis' labels are not the scenario's categories")
        base = _confusion(ratings, len(cats))
        prev = np.asarray([float(x) for x in ratings["prevalence"]])
        joint = prev[:, None] * base
        row, col, hit = joint.sum(axis=1), joint.sum(axis=0), np.diag(joint)
        figure = {"precision": 0, "recall": 1, "f1-score": 2}[a.method]
        average = str(options.get("average"))
        if average == "micro":
            return float(hit.sum())
        per = []
        for c in range(len(cats)):
            den = (col[c], row[c], row[c] + col[c])[figure]
            if den <= 0:
                raise NoTruth(f"class {cats[c]!r} is never drawn or predicted")
            per.append((1.0 if figure < 2 else 2.0) * hit[c] / den)
        if average == "binary":
            return float(per[cats.index(str(options.get("positive")))])
        return float(np.mean(per))

    def _among(self, metric: str) -> bool:
        """Whether a metric counts only the rows meeting its ``among``."""
        config = getattr(getattr(self.design, "rows", None), "config", None) or {}
        for m in config.get("metrics") or ():
            if m.get("id") == metric:
                return bool((m.get("compute") or {}).get("among"))
        return False

    def _raters(self, field: str) -> list | None:
        """The rater values of ``field``: the observation contract's allowed values."""
        config = getattr(getattr(self.design, "rows", None), "config", None) or {}
        for c in config.get("record_contracts") or ():
            if c.get("role") != "observation":
                continue
            for f in c.get("fields") or ():
                if f.get("name") == field and f.get("allowed"):
                    return sorted(f["allowed"], key=lambda v: (str(type(v)), v))
        return None


def _same_code(a, b) -> bool:
    """Whether two category codes are one (1 and 1.0 are; True and 1 are not)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _confusion(ratings, k: int):
    from prereg.decide import scenarios as registered

    from .truths import NoTruth

    m = registered.confusion_matrix(ratings, k)
    if m is None:
        raise NoTruth("the scenario's ratings give neither an accuracy nor a confusion matrix")
    return m


def a_b(a):
    """An analysis' second arm (None for one sample)."""
    return getattr(a, "b", None) if getattr(a, "a", None) is not None else None


def truths(plan: Plan, condition: int) -> tuple[dict[str, float], dict[str, float]]:
    """(estimate id -> truth, contrast id -> truth) of a condition."""
    rules = plan.rules
    t = _Truths(plan, condition)
    est = {}
    for e in rules.ESTIMATES:
        x = t.metric(e.metric, e.of, f"estimate {e.id}")
        est[e.id] = math.exp(x) if t.geometric(e.metric) and not math.isnan(x) else x
    con = {}
    for c in rules.CONTRASTS:
        w = f"contrast {c.id}"
        d = t.metric(c.metric, c.a, w) - t.metric(c.metric, c.b, w)
        con[c.id] = math.exp(d) if t.geometric(c.metric) and not math.isnan(d) else d
    return est, con


def metric_why(plan: Plan, metric: str, condition: int | None = None) -> str:
    """Why a metric's truth over a selection is not worked out under a scenario (the figure's
    ``truthUndefined``): the row model's own reason where it gives one (``truth_problem``)."""
    found = plan.design.contributions.get(metric)
    kind = None if found is None else found[0]
    model = getattr(plan.design, "rows", None)
    if condition is not None and plan.path == "rows" and hasattr(model, "truth_problem"):
        said = model.truth_problem(metric, plan.conditions[condition])
        if said is not None:
            return f"the expected value of mean metric {metric} has no closed form: {said}"
    if kind in ("mean", "geometric_mean"):
        return (
            f"the expected value of mean metric {metric} has no closed form under this scenario"
            " (its number is clipped by an `among` other than being there, read by the attempt"
            " policy or a derived field, whole-numbered, drawn under a calibration curve or by"
            " an entry without a closed-form expectation)"
        )
    if kind in ("coverage", "proportion"):
        return (
            f"the chance of a hit of metric {metric} follows more than the scenario's rate (a"
            " drawn number or confidence, or the value of a cluster, item or rater field), which"
            " has no closed form here"
        )
    if kind in ("ece", "auroc"):
        return (
            f"metric {metric}'s rows or positives are not simply the observed rows with a"
            " confidence and their outcome, or its confidences are rounded or follow no"
            " calibration entry"
        )
    return f"no truth is worked out for a metric of kind {kind}"


def analysis_truths(plan: Plan, condition: int) -> tuple[dict[str, float], dict[str, str]]:
    """(analysis id -> the truth of its estimate under a condition, NaN where none is worked
    out; analysis id -> why not, for each NaN)."""
    from .truths import NoTruth

    t = _Truths(plan, condition)
    got, why = {}, {}
    for a in getattr(plan.rules, "ANALYSES", ()):
        try:
            got[a.id] = t.analysis(a)
        except NoTruth as e:
            got[a.id], why[a.id] = math.nan, str(e)
        if math.isnan(got[a.id]) and a.id not in why:
            why[a.id] = _no_truth(plan, a)
    return got, why


def _no_truth(plan: Plan, a) -> str:
    """Why an analysis has no truth when nothing more specific was said."""
    from .truths import ESTIMANDS

    known = (
        set(ESTIMANDS)
        | set(_AGREEMENT)
        | set(_LABELS)
        | set(_CONFIDENCE_FIGURES)
        | {"pass-at-k", "pass-at-k-t", "majority-vote", "design-effect"}
        | set(_PASS_DIFFERENCES)
        | {"mantel-haenszel-risk-difference", "cochran-mantel-haenszel", "dunnett"}
        | set(_GROUP_LINEAR)
        | set(_CORRELATIONS)
    )
    if a.method not in known:
        return f"no estimand is worked out for method {a.method}"
    if plan.path != "rows":
        return "the truth is worked out on the row path only"
    return (
        f"the estimand of {a.method} has no closed form under this scenario (a drawn number or"
        " rate it depends on is not modelled in closed form)"
    )


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
        rmse, rmse_se = _rmse(x, truth)
        return {
            "truth": r(truth),
            "defined": defined,
            "meanEstimate": r(mean),
            "bias": r(None if mean is None or math.isnan(truth) else mean - truth),
            "biasMcSe": r(se),
            "rmse": r(rmse),
            "rmseMcSe": r(rmse_se),
            "coverage": share(covered, int(ok.sum())) if not math.isnan(truth) else None,
        }

    estimates = [
        {"id": e.id, "hypothesis": e.hypothesis, **figures(est[:, j, :3], t_est[e.id])}
        for j, e in enumerate(rules.ESTIMATES)
    ]
    for e, row in zip(rules.ESTIMATES, estimates, strict=True):
        if row["truth"] is None:
            row["truthUndefined"] = metric_why(plan, e.metric, condition)
    contrasts = []
    fam_hits: dict[str, np.ndarray] = {}
    for j, c in enumerate(rules.CONTRASTS):
        row = {"id": c.id, "hypothesis": c.hypothesis, **figures(con[:, j, :3], t_con[c.id])}
        if row["truth"] is None:
            row["truthUndefined"] = metric_why(plan, c.metric, condition)
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
        t_ana, why_ana = analysis_truths(plan, condition)
        for j, a in enumerate(found_analyses):
            x = ana[:, j]
            # an infinite estimate (an odds ratio over a zero cell) is not averaged
            finite = np.where(np.isinf(x[:, 0]), np.nan, x[:, 0])
            mean, se, defined = _mean_se(finite)
            row = {
                "id": a.id,
                "hypothesis": a.hypothesis,
                "method": a.method,
                "defined": defined,
                "meanEstimate": r(mean),
                "meanEstimateMcSe": r(se),
                "withP": int((~np.isnan(x[:, 3])).sum()),
            }
            truth = t_ana.get(a.id, math.nan)
            if not math.isnan(truth):
                lo, hi = _one_sided(a, x[:, 1], x[:, 2])
                got = figures(np.column_stack([finite, lo, hi]), truth)
                row.update({k: got[k] for k in ("truth", "bias", "biasMcSe", "rmse", "rmseMcSe")})
                with_interval = ~(np.isnan(lo) | np.isnan(hi))
                row["coverage"] = got["coverage"] if with_interval.any() else None
            else:
                row["truthUndefined"] = why_ana.get(a.id) or "not worked out"
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


#: Methods whose estimate is a linear function of the groups' proportions or means.
_GROUP_LINEAR = ("cochran-armitage", "linear-contrast-proportions", "linear-contrast-means")
_PASS_DIFFERENCES = ("pass-at-k-difference", "pass-at-k-difference-bootstrap")


def _one_sided(a, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An analysis' bounds with the open side of a one-sided interval made infinite: under
    ``alternative: greater`` a study with a lower bound and no upper one has the interval
    [lower, ∞), which covers the truth when the lower bound is at most the truth (``less``:
    (−∞, upper]); a study with neither bound still has no interval."""
    alternative = (getattr(a, "options", None) or {}).get("alternative")
    if alternative == "greater":
        hi = np.where(np.isnan(hi) & ~np.isnan(lo), math.inf, hi)
    elif alternative == "less":
        lo = np.where(np.isnan(lo) & ~np.isnan(hi), -math.inf, lo)
    return lo, hi


def _rmse(x: np.ndarray, truth: float) -> tuple[float | None, float | None]:
    """The root mean squared error of the defined estimates about the truth and its Monte
    Carlo SE: the MSE's, √(Σ((x − θ)² − MSE)²/(n(n − 1))) (Morris, White and Crowther 2019,
    Table 6), carried to the root by the delta method (÷ 2·RMSE)."""
    if math.isnan(truth):
        return None, None
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return None, None
    sq = ((x - truth) ** 2).tolist()
    mse = math.fsum(sq) / n
    rmse = math.sqrt(mse)
    if n < 2 or rmse == 0.0:
        return rmse, None if n < 2 else 0.0
    se_mse = math.sqrt(math.fsum((q - mse) ** 2 for q in sq) / (n * (n - 1)))
    return rmse, se_mse / (2.0 * rmse)


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
