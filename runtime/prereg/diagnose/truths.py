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
  values the estimators converge to as items grow (Fleiss 1971; Cohen 1960).

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
    """The agreement estimand of ``method`` (percent-agreement, cohens-kappa: two matrices;
    fleiss-kappa: any number) for raters with these confusion matrices (k × k, rows the true
    category) over items with this prevalence."""
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
    if method == "fleiss-kappa":
        if len(ms) < 2:
            return _nan()
        pairs = [agree(ms[i], ms[j]) for i in range(len(ms)) for j in range(i + 1, len(ms))]
        pbar = math.fsum(pairs) / len(pairs)
        pj = np.mean(labels, axis=0)
        pe = float(pj @ pj)
        return (pbar - pe) / (1.0 - pe) if pe < 1 else _nan()
    return _nan()
