"""The true value of a registered analysis' estimate under a scenario (its estimand).

An analysis' estimate is a figure of its method (:mod:`prereg.stats.catalogue`) over the rows
of its metric; its truth is what that figure estimates when the rows are drawn under the
scenario, worked out from the scenario's registered words rather than simulated:

- a proportion, a difference, ratio or odds ratio of two proportions (:data:`ESTIMANDS`): of
  the metric's truths over the analysis' selections (``of``, ``a``, ``b``), each the expected
  numerator over the expected denominator, as for an estimate;
- a mean or a difference of means (also over clusters: a cluster's mean estimates the same
  mean whatever its size); a ratio of geometric means: exp of the difference of the expected
  logs (:meth:`Truths.number`);
- pass@k (:func:`pass_at_k`): the mean over problems of 1 − (1 − p)^k, p a problem's chance
  that a sample passes, which the unbiased estimator estimates without bias given p: under
  the probit-normal problems of ``clusters`` (p = Φ((Φ⁻¹(r) − √R·v)/√(1 − R)), v standard
  normal, R the intraclass correlations of the problem's level and the levels around it) by
  quadrature over v; under ``beta`` problems (mean r, intraclass correlation ρ = 1/(a + b + 1))
  in closed form, 1 − Π_{i<k} (b + i)/(a + b + i); without clusters 1 − (1 − r)^k;
- agreement of raters (:func:`agreement`) under ``ratings``: each item's true category drawn
  from the prevalence π and rater r's label from its confusion matrix M_r, so two raters r, s
  agree with chance P_o = Σ_t π_t Σ_j M_r[t, j]·M_s[t, j] and give label j with chance
  p_rj = Σ_t π_t M_r[t, j]; percent agreement is P_o, Cohen's kappa (unweighted)
  (P_o − Σ_j p_rj p_sj)/(1 − Σ_j p_rj p_sj), Fleiss' kappa (P̄ − Σ_j p̄_j²)/(1 − Σ_j p̄_j²)
  with P̄ the mean of P_o over pairs of raters and p̄_j the mean of p_rj over raters: the
  values the estimators converge to as items grow (Fleiss 1971; Cohen 1960); Gwet's AC1 and
  Krippendorff's alpha (nominal) likewise (:func:`agreement`);
- the ECE, AUROC and Brier score of a confidence under a ``calibration`` curve
  (:func:`calibration_truth`): the values they converge to as rows grow, over each cell's
  confidence law (:class:`ConfidenceLaw`), by quadrature.

A method or a scenario this module cannot work out gives NaN (reported as a null truth, with
no bias or coverage).  The weights of several cells are their observed rows (a problem or item
per cell in proportion to its rows).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: The estimand of each method whose estimate is a function of its selections' proportions or
#: means: ``p`` (one proportion), ``p-diff`` (a − b), ``p-ratio`` (a / b), ``odds-ratio``,
#: ``mean``, ``mean-diff`` (a − b), ``gm-ratio`` (ratio of geometric means, a / b) and
#: ``cluster-mean`` (the mean of ``of``, or a − b with two arms).
ESTIMANDS: Mapping[str, str] = {
    "wilson": "p",
    **dict.fromkeys(
        (
            "wald-difference",
            "wald-difference-test",
            "pooled-z",
            "newcombe-hybrid",
            "agresti-caffo",
            "farrington-manning",
            "miettinen-nurminen-test",
            "miettinen-nurminen",
            "tost-proportions",
            "equivalence-interval-proportions",
            "noninferiority-proportions",
            "newcombe-paired",
            "tango",
            "tango-test",
        ),
        "p-diff",
    ),
    "risk-ratio-katz": "p-ratio",
    "noninferiority-ratio-proportions": "p-ratio",
    "odds-ratio-woolf": "odds-ratio",
    **dict.fromkeys(("one-sample-t", "bootstrap-mean", "permutation-mean"), "mean"),
    **dict.fromkeys(
        (
            "welch-t",
            "student-t",
            "tost-means",
            "equivalence-interval-means",
            "noninferiority-means",
            "bootstrap-mean-difference",
            "permutation-mean-difference",
            "paired-t",
            "tost-paired",
            "equivalence-interval-paired",
            "bootstrap-paired-mean-difference",
            "permutation-paired-mean-difference",
        ),
        "mean-diff",
    ),
    "ratio-of-geometric-means": "gm-ratio",
    "noninferiority-ratio-means": "gm-ratio",
    **dict.fromkeys(
        ("cluster-summary-t", "cluster-robust-mean", "cluster-bootstrap"), "cluster-mean"
    ),
}


def _nan() -> float:
    return math.nan


def from_selections(kind: str, of, a, b) -> float:
    """An estimand of :data:`ESTIMANDS` from its selections' truths (``of``, ``a``, ``b``:
    proportions or means, on the log scale for ``gm-ratio``; None where not registered)."""
    if kind in ("p", "mean") or (kind == "cluster-mean" and of is not None):
        return _nan() if of is None else float(of)
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return _nan()
    if kind in ("p-diff", "mean-diff", "cluster-mean"):
        return a - b
    if kind == "p-ratio":
        return a / b if b > 0 else _nan()
    if kind == "odds-ratio":
        if not (0 < a < 1 and 0 < b < 1):
            return _nan()
        return (a / (1 - a)) / (b / (1 - b))
    if kind == "gm-ratio":
        return math.exp(a - b)
    return _nan()


def pass_at_k(rate: float, k: int, *, icc: float = 0.0, beta: bool = False) -> float:
    """E[1 − (1 − p)^k] over problems whose chance p has mean ``rate``: constant (``icc`` 0),
    probit-normal with latent intraclass correlation ``icc``, or with ``beta`` Beta(a, b) of
    mean ``rate`` and intraclass correlation ``icc`` = 1/(a + b + 1)."""
    r, k = float(rate), int(k)
    if r <= 0.0 or r >= 1.0 or icc <= 0.0:
        return 1.0 - (1.0 - r) ** k
    if beta:
        s = 1.0 / icc - 1.0  # a + b
        b = (1.0 - r) * s  # a = r·s
        miss = 1.0
        for i in range(k):
            miss *= (b + i) / (s + i)
        return 1.0 - miss
    from scipy import integrate
    from scipy.special import ndtr, ndtri
    from scipy.stats import norm

    q = float(ndtri(r))
    root, rest = math.sqrt(icc), math.sqrt(1.0 - icc)

    def miss(v: float) -> float:
        return (1.0 - float(ndtr((q - root * v) / rest))) ** k * float(norm.pdf(v))

    got, _ = integrate.quad(miss, -math.inf, math.inf, epsabs=1e-13, epsrel=1e-12, limit=200)
    return 1.0 - got


def agreement(
    method: str,
    prevalence: Sequence[float],
    matrices: Sequence[Any],
) -> float:
    """The agreement estimand of ``method`` (percent-agreement, cohens-kappa, gwet-ac1: two
    matrices; fleiss-kappa, krippendorff-alpha: any number) for raters with these confusion
    matrices (k × k, rows the true category) over items with this prevalence.  Gwet's AC1
    (Gwet 2008): (P_o − P_e)/(1 − P_e), P_e = Σ_j π_j(1 − π_j)/(k − 1), π_j the two raters'
    mean chance of label j.  Krippendorff's alpha of nominal labels with every item rated by
    every rater: 1 − D_o/D_e, D_o the share of pairs of one item's labels that differ and D_e
    of pairs of any two labels; as items grow its small-sample factor nm/(nm − 1) goes to 1
    and it converges to the same value as Fleiss' kappa."""
    import numpy as np

    pi = np.asarray(prevalence, dtype=np.float64)
    ms = [np.asarray(m, dtype=np.float64) for m in matrices]
    labels = [pi @ m for m in ms]  # each rater's chance of each label

    def agree(x, y) -> float:
        return float(pi @ (x * y).sum(axis=1))

    if method in ("percent-agreement", "cohens-kappa"):
        if len(ms) != 2:
            return _nan()
        po = agree(ms[0], ms[1])
        if method == "percent-agreement":
            return po
        pe = float(labels[0] @ labels[1])
        return (po - pe) / (1.0 - pe) if pe < 1 else _nan()
    if method == "gwet-ac1":
        if len(ms) != 2 or len(pi) < 2:
            return _nan()
        po = agree(ms[0], ms[1])
        share = (labels[0] + labels[1]) / 2.0  # the two raters' mean chance of each label
        pe = float(share @ (1.0 - share)) / (len(pi) - 1)
        return (po - pe) / (1.0 - pe) if pe < 1 else _nan()
    if method in ("fleiss-kappa", "krippendorff-alpha"):
        if len(ms) < 2:
            return _nan()
        pairs = [agree(ms[i], ms[j]) for i in range(len(ms)) for j in range(i + 1, len(ms))]
        pbar = math.fsum(pairs) / len(pairs)
        pj = np.mean(labels, axis=0)
        pe = float(pj @ pj)
        return (pbar - pe) / (1.0 - pe) if pe < 1 else _nan()
    return _nan()


# -- a calibration scenario's confidences ----------------------------------------------------


class ConfidenceLaw:
    """The law of the confidence a ``calibration`` entry draws, C = X clipped to [lo, hi]
    (:func:`prereg.decide.scenarios.confidence_entry`: the entry's bounds within [0, 1]; a
    uniform X on those bounds, a normal or lognormal X of the entry's mean and sd), and the
    chance g(C) that a row with confidence C is right: C on the calibrated curve, max(C − m, 0)
    over-confident by the margin m.  C has an atom at lo of mass P(X ≤ lo), one at hi of mass
    P(X ≥ hi), and X's density between them.  Rounded confidences (``decimals``) are not
    modelled (:meth:`of` gives None)."""

    def __init__(self, entry: Mapping[str, Any]):
        from prereg.decide.scenarios import confidence_entry

        v = confidence_entry(entry)
        self.lo, self.hi = float(v["low"]), float(v["high"])
        self.margin = 0.0 if entry["curve"] == "calibrated" else float(entry.get("margin") or 0.0)
        dist = v["distribution"]
        mean, sd = float(v.get("mean") or 0.0), float(v.get("sd") or 0.0)
        self.point = None  # X without spread: C is one point
        if dist == "uniform":
            self.cdf = lambda x: min(1.0, max(0.0, (x - self.lo) / (self.hi - self.lo)))
            self.pdf = lambda x: 1.0 / (self.hi - self.lo)
            if self.hi <= self.lo:
                self.point = self.lo
        elif sd <= 0.0:
            self.point = min(self.hi, max(self.lo, math.exp(mean) if dist == "lognormal" else mean))
        elif dist == "normal":
            self.cdf = lambda x: _phi((x - mean) / sd)
            self.pdf = lambda x: math.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * _ROOT_2PI)
        else:  # lognormal

            def cdf(x: float) -> float:
                return 0.0 if x <= 0.0 else _phi((math.log(x) - mean) / sd)

            def pdf(x: float) -> float:
                if x <= 0.0:
                    return 0.0
                z = (math.log(x) - mean) / sd
                return math.exp(-0.5 * z * z) / (x * sd * _ROOT_2PI)

            self.cdf, self.pdf = cdf, pdf

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> ConfidenceLaw | None:
        if entry.get("decimals") is not None:
            return None
        return cls(entry)

    def right(self, c: float) -> float:
        """g(c): the chance that a row of confidence c is right."""
        return max(c - self.margin, 0.0)

    def atoms(self) -> list[tuple[float, float]]:
        """(point, mass) of C's atoms."""
        if self.point is not None:
            return [(self.point, 1.0)]
        return [
            (x, p)
            for x, p in ((self.lo, self.cdf(self.lo)), (self.hi, 1 - self.cdf(self.hi)))
            if p > 0
        ]

    def integral(self, h, a: float, b: float) -> float:
        """∫ h(x) f(x) dx over (a, b) ∩ (lo, hi), f the density of X (C's continuous part),
        split at the margin (where g bends)."""
        if self.point is not None:
            return 0.0
        from scipy import integrate

        a, b = max(a, self.lo), min(b, self.hi)
        cuts = [a] + [x for x in (self.margin,) if a < x < b] + [b]
        total = 0.0
        for u, w in zip(cuts, cuts[1:], strict=False):
            if w > u:
                got, _ = integrate.quad(
                    lambda x: h(x) * self.pdf(x), u, w, epsabs=1e-14, epsrel=1e-11, limit=200
                )
                total += got
        return total

    def expect(self, h) -> float:
        """E[h(C)]."""
        return self.integral(h, self.lo, self.hi) + math.fsum(p * h(x) for x, p in self.atoms())


_ROOT_2PI = math.sqrt(2.0 * math.pi)


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _chance(law: ConfidenceLaw, positive_right: bool):
    """The chance that a row of confidence c is positive (right, or wrong)."""
    if positive_right:
        return law.right
    return lambda c: 1.0 - law.right(c)


def calibration_truth(
    figure: str,
    parts: Sequence[tuple[float, ConfidenceLaw]],
    *,
    positive_right: bool = True,
    bins: Sequence[float] = (),
    closed: str = "right",
) -> float:
    """The value a confidence figure converges to over rows drawn from ``parts`` (weight,
    law): each row's confidence C from its law, positive (right, or with ``positive_right``
    False wrong) with chance p(C).  With W the weights' sum and E the weighted mixture:

    - ``ece`` over ``bins`` (closed as registered): Σ_b |E[(p(C) − C)·1{C ∈ b}]| — each bin's
      share of rows times the gap between its accuracy and its mean confidence;
    - ``brier``: E[C² − 2·C·p(C) + p(C)] = E[(C − Y)²];
    - ``auroc``: P(C₁ > C₀) + ½·P(C₁ = C₀), C₁ a positive row's confidence and C₀ a negative
      one's (the Mann–Whitney form of the area): the continuous part ∫ G₀(x) dμ₁(x), G₀(x)
      the negative measure below x, by nested quadrature; the atoms exactly.

    NaN when the weights are all zero (or, for the AUROC, no row can be positive or none
    negative)."""
    parts = [(float(w), law) for w, law in parts if w > 0]
    total = math.fsum(w for w, _ in parts)
    if not parts or total <= 0:
        return math.nan
    if figure == "brier":

        def squared(law: ConfidenceLaw) -> float:
            p = _chance(law, positive_right)
            return law.expect(lambda c: c * c - 2 * c * p(c) + p(c))

        return math.fsum(w * squared(law) for w, law in parts) / total
    if figure == "ece":
        from prereg.stats.calibration import bin_index

        edges = [float(e) for e in bins]
        if len(edges) < 2:
            return math.nan
        gaps = [0.0] * (len(edges) - 1)
        for w, law in parts:
            p = _chance(law, positive_right)
            for b in range(len(gaps)):
                gaps[b] += w * law.integral(lambda c, p=p: p(c) - c, edges[b], edges[b + 1])
            for x, mass in law.atoms():
                b = int(bin_index([x], edges, closed)[0])
                gaps[b] += w * mass * (p(x) - x)
        return math.fsum(abs(g) for g in gaps) / total
    if figure == "auroc":
        return _auroc(parts, positive_right)
    return math.nan


def _auroc(parts, positive_right: bool) -> float:
    from scipy import integrate

    chances = [(w, law, _chance(law, positive_right)) for w, law in parts]
    pos = math.fsum(w * law.expect(p) for w, law, p in chances)
    neg = math.fsum(w * law.expect(lambda c, p=p: 1.0 - p(c)) for w, law, p in chances)
    if pos <= 0 or neg <= 0:
        return math.nan

    def below(x: float, strict: bool = True) -> float:
        """The negative measure of confidences below x (atoms at x left out when strict)."""
        out = 0.0
        for w, law, p in chances:
            out += w * law.integral(lambda c, p=p: 1.0 - p(c), -math.inf, x)
            for a, mass in law.atoms():
                if a < x or (a == x and not strict):
                    out += w * mass * (1.0 - p(a))
        return out

    area = 0.0
    for w, law, p in chances:
        if law.point is None:
            cuts = sorted(
                {law.lo, law.hi, *(lw.lo for _, lw in parts), *(lw.hi for _, lw in parts)}
            )
            cuts = [c for c in cuts if law.lo <= c <= law.hi]
            if law.lo < law.margin < law.hi:
                cuts = sorted({*cuts, law.margin})
            for u, v in zip(cuts, cuts[1:], strict=False):
                got, _ = integrate.quad(
                    lambda x, p=p, law=law: below(x) * p(x) * law.pdf(x),
                    u,
                    v,
                    epsabs=1e-13,
                    epsrel=1e-10,
                    limit=100,
                )
                area += w * got
        for a, mass in law.atoms():
            tie = below(a, strict=False) - below(a)
            area += w * mass * p(a) * (below(a) + 0.5 * tie)
    return area / (pos * neg)
