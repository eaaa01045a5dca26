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
  in closed form, 1 − Π_{i<k} (b + i)/(a + b + i); without clusters 1 − (1 − r)^k; with one
  cluster level inside the problems, over how k samples fall into its clusters
  (:func:`pass_at_k_nested`);
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
  confidence law (:class:`ConfidenceLaw`), by quadrature;
- the intraclass correlation (:func:`icc`) and Krippendorff's alpha over ordinal, interval
  or ratio labels (:func:`krippendorff`) under ``ratings``: their large-sample values from
  the labels' joint law;
- majority vote (:func:`majority_vote` over categorical answers, :func:`binary_vote` over
  right/wrong samples of probit-normal or beta problems): the accuracy of a vote over a
  problem's registered samples;
- the design effect (:func:`design_effect`): 1 + (m − 1)·ICC, the ICC of a drawn number
  (:func:`value_icc`) and m the expected cluster size the method uses.

A truth that is not defined or not worked out under a scenario raises :class:`NoTruth` with
the reason (or gives NaN): the report gives no truth, bias or coverage and says why.  The weights of several cells are their observed rows (a problem or item
per cell in proportion to its rows).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: The estimand of each method whose estimate is a function of its selections' proportions or
#: means: ``p`` (one proportion), ``p-diff`` (a − b), ``p-ratio`` (a / b), ``odds-ratio``,
#: ``mean``, ``mean-diff`` (a − b), ``gm-ratio`` (ratio of geometric means, a / b) and
#: ``cluster-mean`` (the mean of ``of``, or a − b with two arms).
ESTIMANDS: Mapping[str, str] = {
    "wilson": "p",
    "binomial-test": "p",
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
        (
            "cluster-summary-t",
            "cluster-summary-welch-t",
            "cluster-robust-mean",
            "cluster-bootstrap",
        ),
        "cluster-mean",
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


def pass_at_k_nested(
    rate: float, k: int, outer: float, inner: float, sizes: Sequence[int], nodes: int = 96
) -> float:
    """E[1 − C(n − c, k)/C(n, k)] of one problem whose n samples fall into inner clusters of
    ``sizes``: z = √R·v + √ρ·u_j + √(1 − R − ρ)·e, v the problem's normal (R = ``outer``, the
    correlations of its level and the levels around it), u_j its inner cluster's (ρ =
    ``inner``), a sample passing when z < Φ⁻¹(rate).  The unbiased estimator's expectation is
    the chance that k of the samples drawn without replacement include a pass (missing
    samples at random leave it unchanged); the k fall into the inner clusters as counts
    c_j with the multivariate hypergeometric chance Π_j C(s_j, c_j)/C(n, k), and given v the
    clusters fail independently, each with chance g(v, c_j) = E_u[(1 − Φ((q − √R·v −
    √ρ·u)/√(1 − R − ρ)))^c_j]: so 1 − ∫ φ(v) Σ_c Π_j C(s_j, c_j)/C(n, k)·g(v, c_j) dv, both
    integrals by Gauss–Hermite quadrature (``nodes`` points)."""
    from scipy.special import ndtr, ndtri

    r, k = float(rate), int(k)
    n = int(sum(sizes))
    if k > n:
        raise NoTruth(f"a problem has {n} samples, fewer than k = {k}")
    if r <= 0.0 or r >= 1.0:
        return 1.0 - (1.0 - r) ** k
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    q = float(ndtri(r))
    rest = math.sqrt(max(1.0 - outer - inner, 0.0))
    if rest <= 0.0:
        raise NoTruth("the cluster levels' correlations add up to 1: no sample of its own")
    fail = 1.0 - ndtr((q - math.sqrt(outer) * x[:, None] - math.sqrt(inner) * x[None, :]) / rest)
    g = np.stack([(fail**c) @ w for c in range(k + 1)])  # (c, v)
    total = math.comb(n, k)
    miss = np.zeros(x.size)
    for counts in _compositions(k, len(sizes)):
        chance = 1
        for s, c in zip(sizes, counts, strict=True):
            chance *= math.comb(int(s), c)
        if chance:
            miss += chance / total * np.prod([g[c] for c in counts], axis=0)
    return 1.0 - float(w @ miss)


def agreement(
    method: str,
    prevalence: Sequence[float],
    matrices: Sequence[Any],
    weights: str | None = None,
) -> float:
    """The agreement estimand of ``method`` (percent-agreement, cohens-kappa, gwet-ac1: two
    matrices; fleiss-kappa, krippendorff-alpha: any number) for raters with these confusion
    matrices (k × k, rows the true category) over items with this prevalence.  Gwet's AC1
    (Gwet 2008): (P_o − P_e)/(1 − P_e), P_e = Σ_j π_j(1 − π_j)/(k − 1), π_j the two raters'
    mean chance of label j.  Krippendorff's alpha of nominal labels with every item rated by
    every rater: 1 − D_o/D_e, D_o the share of pairs of one item's labels that differ and D_e
    of pairs of any two labels; as items grow its small-sample factor nm/(nm − 1) goes to 1
    and it converges to the same value as Fleiss' kappa.  Cohen's kappa with ``weights``
    (linear or quadratic, by the categories' positions) is (Σ w_ij J_ij − Σ w_ij a_i b_j)/(1 −
    Σ w_ij a_i b_j), J the two raters' joint law Σ_t π_t m1[t, i] m2[t, j] and a, b their
    labels' laws."""
    import numpy as np

    pi = np.asarray(prevalence, dtype=np.float64)
    ms = [np.asarray(m, dtype=np.float64) for m in matrices]
    labels = [pi @ m for m in ms]  # each rater's chance of each label

    def agree(x, y) -> float:
        return float(pi @ (x * y).sum(axis=1))

    if method in ("percent-agreement", "cohens-kappa"):
        if len(ms) != 2:
            return _nan()
        if method == "cohens-kappa" and weights not in (None, "none"):
            k = ms[0].shape[1]  # the categories' positions
            i, j = np.indices((k, k))
            d = np.abs(i - j) / (k - 1) if k > 1 else np.zeros((k, k))
            w = 1.0 - (d if weights == "linear" else d * d)
            joint = np.einsum("t,ti,tj->ij", pi, ms[0], ms[1])
            po = float((w * joint).sum())
            pe = float((w * np.outer(labels[0], labels[1])).sum())
            return (po - pe) / (1.0 - pe) if pe < 1 else _nan()
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
    P(X ≥ hi), and X's density between them, whose partial moments ∫ x^k f(x) dx (k = 0, 1, 2)
    over an interval have closed forms (:meth:`moment`).  Rounded confidences (``decimals``)
    are not modelled (:meth:`of` gives None)."""

    def __init__(self, entry: Mapping[str, Any]):
        from prereg.decide.scenarios import confidence_entry

        v = confidence_entry(entry)
        self.lo, self.hi = float(v["low"]), float(v["high"])
        self.margin = 0.0 if entry["curve"] == "calibrated" else float(entry.get("margin") or 0.0)
        self.dist = str(v["distribution"])
        self.mean, self.sd = float(v.get("mean") or 0.0), float(v.get("sd") or 0.0)
        self.point = None  # X without spread: C is one point
        if self.dist == "uniform" and self.hi <= self.lo:
            self.point = self.lo
        elif self.dist != "uniform" and self.sd <= 0.0:
            x = math.exp(self.mean) if self.dist == "lognormal" else self.mean
            self.point = min(self.hi, max(self.lo, x))

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> ConfidenceLaw | None:
        if entry.get("decimals") is not None:
            return None
        return cls(entry)

    def right(self, c: float) -> float:
        """g(c): the chance that a row of confidence c is right."""
        return max(c - self.margin, 0.0)

    def _z(self, x, shift: float = 0.0):
        """The standard normal point of x (lognormal: of log x, less ``shift``·sd)."""
        x = np.asarray(x, dtype=np.float64)
        if self.dist == "normal":
            return (x - self.mean) / self.sd
        with np.errstate(divide="ignore"):
            return (np.log(x) - self.mean) / self.sd - shift * self.sd

    def cdf(self, x):
        """P(X ≤ x)."""
        if self.dist == "uniform":
            return np.clip((np.asarray(x, dtype=np.float64) - self.lo) / (self.hi - self.lo), 0, 1)
        return _ndtr(self._z(x))

    def moment(self, k: int, a, b):
        """∫ x^k f(x) dx over (a, b) (arrays alike, a ≤ b), f the density of X: closed forms
        for k = 0, 1, 2 — uniform (b^(k+1) − a^(k+1))/((k + 1)(hi − lo)); normal
        μ^k-weighted sums of ΔΦ, Δφ and Δ(zφ) at the standardised ends; lognormal
        e^(kμ + k²σ²/2)·ΔΦ(z − kσ)."""
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if self.dist == "uniform":
            return (b ** (k + 1) - a ** (k + 1)) / ((k + 1) * (self.hi - self.lo))
        if self.dist == "lognormal":
            scale = math.exp(k * self.mean + k * k * self.sd * self.sd / 2.0)
            return scale * (_ndtr(self._z(b, k)) - _ndtr(self._z(a, k)))
        za, zb = self._z(a), self._z(b)
        d0 = _ndtr(zb) - _ndtr(za)
        if k == 0:
            return d0
        pa, pb = _pdf(za), _pdf(zb)
        d1 = pa - pb  # ∫ z φ(z) dz
        if k == 1:
            return self.mean * d0 + self.sd * d1
        with np.errstate(invalid="ignore"):
            d2 = d0 - (
                np.where(np.isfinite(zb), zb * pb, 0.0) - np.where(np.isfinite(za), za * pa, 0.0)
            )
        return self.mean**2 * d0 + 2 * self.mean * self.sd * d1 + self.sd**2 * d2

    def atoms(self) -> list[tuple[float, float]]:
        """(point, mass) of C's atoms."""
        if self.point is not None:
            return [(self.point, 1.0)]
        low, high = float(self.cdf(self.lo)), 1.0 - float(self.cdf(self.hi))
        return [(x, p) for x, p in ((self.lo, low), (self.hi, high)) if p > 0]

    def poly(self, below: Sequence[float], above: Sequence[float], a, b):
        """∫ h(x) f(x) dx over (a, b) ∩ (lo, hi) (``b`` may be an array), h the polynomial
        with coefficients ``below`` (of 1, x, x², ...) under the margin and ``above`` over it
        (where g bends)."""
        b = np.asarray(b, dtype=np.float64)
        if self.point is not None:
            return np.zeros_like(b)
        a = max(float(a), self.lo)
        b = np.minimum(b, self.hi)
        m = self.margin
        total = np.zeros_like(b)
        for coefs, u, w in ((below, a, np.minimum(b, m)), (above, max(a, m), b)):
            w = np.maximum(w, u)
            for k, c in enumerate(coefs):
                if c:
                    total = total + c * self.moment(k, u, w)
        return total


def _ndtr(z):
    from scipy.special import ndtr

    return ndtr(z)


def _pdf(z):
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return np.where(np.isfinite(z), out, 0.0)


def _chance(law: ConfidenceLaw, positive_right: bool):
    """(p(c), the polynomial coefficients of p below and above the margin): the chance that a
    row of confidence c is positive, right (g) or wrong (1 − g)."""
    m = law.margin
    if positive_right:
        return law.right, (0.0,), (-m, 1.0)
    return (lambda c: 1.0 - law.right(c)), (1.0,), (1.0 + m, -1.0)


def _plus(*polys):
    """The sum of polynomials given by coefficients."""
    out = [0.0] * max(len(q) for q in polys)
    for q in polys:
        for k, c in enumerate(q):
            out[k] += c
    return tuple(out)


def _times_x(q):
    return (0.0, *q)


def _expect(law: ConfidenceLaw, h, below, above) -> float:
    """E[h(C)], h the polynomial ``below``/``above`` the margin (and h itself at the atoms)."""
    return float(law.poly(below, above, -math.inf, math.inf)) + math.fsum(
        mass * h(x) for x, mass in law.atoms()
    )


def calibration_truth(
    figure: str,
    parts: Sequence[tuple[float, ConfidenceLaw]],
    *,
    positive_right: bool = True,
    bins: Sequence[float] = (),
    closed: str = "right",
    coverage: float | None = None,
    ties: str | None = None,
) -> float:
    """The value a confidence figure converges to over rows drawn from ``parts`` (weight,
    law): each row's confidence C from its law, positive (right, or with ``positive_right``
    False wrong) with chance p(C).  With W the weights' sum and E the weighted mixture:

    - ``ece`` over ``bins`` (closed as registered): Σ_b |E[(p(C) − C)·1{C ∈ b}]| — each bin's
      share of rows times the gap between its accuracy and its mean confidence (closed form);
    - ``brier``: E[C² − 2·C·p(C) + p(C)] = E[(C − Y)²] (closed form);
    - ``selective``: the share positive among the rows whose confidence lies in the top
      ``coverage`` share c: with t the point where P(C > t) ≤ c ≤ P(C ≥ t),
      (E[p(C)·1{C > t}] + (c − P(C > t))·p(t))/c, the rows at an atom t sharing the places
      left (ties ``expected``; ``include`` keeps the atom whole, ``exclude`` none of it);
      P(C > t) in closed form, t by bisection (closed form);
    - ``auroc``: P(C₁ > C₀) + ½·P(C₁ = C₀), C₁ a positive row's confidence and C₀ a negative
      one's (the Mann–Whitney form of the area): ∫ G₀(x) dμ₁(x), G₀(x) the negative measure
      below x in closed form, the integral over x by Gauss–Legendre quadrature (64 points on
      each stretch between the laws' bounds, margins and quantiles at 0, ±1, ±2, ±4 sd), the
      atoms exactly.

    NaN when the weights are all zero (or, for the AUROC, no row can be positive or none
    negative)."""
    parts = [(float(w), law) for w, law in parts if w > 0]
    total = math.fsum(w for w, _ in parts)
    if not parts or total <= 0:
        return math.nan
    if figure == "brier":

        def squared(law: ConfidenceLaw) -> float:
            p, lo, hi = _chance(law, positive_right)

            def h(q):  # c² − 2c·p(c) + p(c), p = q₀ + q₁c: q₀ + (q₁ − 2q₀)c + (1 − 2q₁)c²
                q = _plus(q, (0.0, 0.0))
                return (q[0], q[1] - 2 * q[0], 1 - 2 * q[1])

            return _expect(law, lambda c: c * c - 2 * c * p(c) + p(c), h(lo), h(hi))

        return math.fsum(w * squared(law) for w, law in parts) / total
    if figure == "ece":
        from prereg.stats.calibration import bin_index

        edges = [float(e) for e in bins]
        if len(edges) < 2:
            return math.nan
        gaps = [0.0] * (len(edges) - 1)
        for w, law in parts:
            p, lo, hi = _chance(law, positive_right)
            gap_lo, gap_hi = _plus(lo, (0.0, -1.0)), _plus(hi, (0.0, -1.0))  # p(c) − c
            for b in range(len(gaps)):
                gaps[b] += w * float(law.poly(gap_lo, gap_hi, edges[b], edges[b + 1]))
            for x, mass in law.atoms():
                b = int(bin_index([x], edges, closed)[0])
                gaps[b] += w * mass * (p(x) - x)
        return math.fsum(abs(g) for g in gaps) / total
    if figure == "auroc":
        return _auroc(parts, positive_right)
    if figure == "selective" and coverage is not None:
        return _selective(parts, total, positive_right, float(coverage), str(ties))
    return math.nan


def _selective(parts, total: float, positive_right: bool, c: float, ties: str) -> float:
    """The selective accuracy's limit (:func:`calibration_truth`, ``selective``)."""
    if not 0.0 < c <= 1.0:
        return math.nan
    chances = [(w / total, law, *_chance(law, positive_right)) for w, law in parts]

    def tail(t: float, strict: bool = True) -> tuple[float, float]:
        """(P(C > t), E[p(C)·1{C > t}]) over the mixture (≥ t when not strict)."""
        share = right = 0.0
        for w, law, p, lo, hi in chances:
            if law.point is None:
                share += w * float(law.poly((1.0,), (1.0,), t, math.inf))
                right += w * float(law.poly(lo, hi, t, math.inf))
            for x, mass in law.atoms():
                if x > t or (x == t and not strict):
                    share += w * mass
                    right += w * mass * p(x)
        return share, right

    lo_t, hi_t = 0.0, 1.0  # P(C > lo_t) ≥ c > P(C > hi_t) once c < 1
    if c >= 1.0:
        return tail(-1.0)[1]
    for _ in range(200):
        mid = (lo_t + hi_t) / 2.0
        if tail(mid)[0] >= c:
            lo_t = mid
        else:
            hi_t = mid
        if hi_t - lo_t < 1e-15:
            break
    atoms = [x for _, law, *_ in chances for x, _m in law.atoms() if lo_t <= x <= hi_t]
    t = atoms[0] if atoms else hi_t
    above, right_above = tail(t)
    at, right_at = tail(t, strict=False)
    if at - above <= 0.0:  # no atom at the cut: the tail holds c exactly
        return right_above / above if above > 0 else math.nan
    if ties == "include":
        return right_at / at
    if ties == "exclude":
        return right_above / above if above > 0 else math.nan
    if ties != "expected":
        return math.nan  # refuse: a cut on an atom stops score in most studies
    p_t = (right_at - right_above) / (at - above)
    return (right_above + (c - above) * p_t) / c


_NODES = 64


def _stretches(law: ConfidenceLaw, others) -> list[float]:
    """Where the integrand of the AUROC may bend or change fast: the bounds and margins of
    every law, and this law's quantiles at 0, ±1, ±2, ±4 sd, within its range."""
    cuts = {law.lo, law.hi}
    for _, other in others:
        cuts |= {other.lo, other.hi, other.margin}
    if law.dist != "uniform":
        for s in (0.0, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0):
            x = law.mean + s * law.sd
            cuts.add(math.exp(x) if law.dist == "lognormal" else x)
    return sorted(c for c in cuts if law.lo <= c <= law.hi)


def _auroc(parts, positive_right: bool) -> float:
    chances = [(w, law, *_chance(law, positive_right)) for w, law in parts]
    pos = math.fsum(w * _expect(law, p, lo, hi) for w, law, p, lo, hi in chances)
    neg = math.fsum(
        w * _expect(law, lambda c, p=p: 1.0 - p(c), _plus((1.0,), [-c for c in lo]),
                    _plus((1.0,), [-c for c in hi]))
        for w, law, p, lo, hi in chances
    )  # fmt: skip
    if pos <= 0 or neg <= 0:
        return math.nan

    def below(x, strict: bool = True):
        """The negative measure of confidences below x (an array; atoms at x left out when
        strict)."""
        x = np.asarray(x, dtype=np.float64)
        out = np.zeros_like(x)
        for w, law, p, lo, hi in chances:
            one_lo, one_hi = _plus((1.0,), [-c for c in lo]), _plus((1.0,), [-c for c in hi])
            out = out + w * law.poly(one_lo, one_hi, -math.inf, x)
            for a, mass in law.atoms():
                hit = (a < x) | ((a == x) & (not strict))
                out = out + np.where(hit, w * mass * (1.0 - p(a)), 0.0)
        return out

    nodes, weights = np.polynomial.legendre.leggauss(_NODES)
    area = 0.0
    for w, law, p, _, _ in chances:
        if law.point is None:
            cuts = _stretches(law, parts)
            for u, v in zip(cuts, cuts[1:], strict=False):
                if v <= u:
                    continue
                x = (v - u) / 2 * nodes + (v + u) / 2
                # the density of X at x times p(x): p's polynomial times the 0th moment's rate
                px = np.array([p(t) for t in x.tolist()])
                f = _density(law, x)
                area += w * (v - u) / 2 * float(weights @ (below(x) * px * f))
        for a, mass in law.atoms():
            strict = float(below([a])[0])
            tie = float(below([a], strict=False)[0]) - strict
            area += w * mass * p(a) * (strict + 0.5 * tie)
    return area / (pos * neg)


def _density(law: ConfidenceLaw, x: np.ndarray) -> np.ndarray:
    """f(x), the density of X."""
    if law.dist == "uniform":
        return np.full(x.shape, 1.0 / (law.hi - law.lo))
    if law.dist == "normal":
        return _pdf((x - law.mean) / law.sd) / law.sd
    with np.errstate(divide="ignore"):
        return np.where(x > 0, _pdf((np.log(x) - law.mean) / law.sd) / (x * law.sd), 0.0)


# -- why a truth is not worked out --------------------------------------------------------------


class NoTruth(Exception):
    """A truth that is not worked out under a scenario, with the reason the report gives."""


# -- ratings: the intraclass correlation and Krippendorff's alpha over ordered labels ---------


def _label_moments(prevalence, matrices, values):
    """(mean vector m, covariance Σ) of the k raters' numeric labels of one item: each item's
    true category t from the prevalence π, rater r's label from row t of M_r independently
    given t, so E[Y_r | t] = M_r[t]·c, Var(Y_r) = Σ_t π_t M_r[t]·c² − m_r² and, r ≠ s,
    Cov(Y_r, Y_s) = Σ_t π_t E[Y_r | t]·E[Y_s | t] − m_r·m_s (c the category values)."""
    pi = np.asarray(prevalence, dtype=np.float64)
    c = np.asarray(values, dtype=np.float64)
    ms = [np.asarray(x, dtype=np.float64) for x in matrices]
    given = np.stack([mat @ c for mat in ms])  # (raters, categories): E[Y_r | t]
    m = given @ pi
    cov = (given * pi) @ given.T - np.outer(m, m)
    second = np.array([pi @ (mat @ (c * c)) for mat in ms])
    np.fill_diagonal(cov, second - m * m)
    return m, cov


def icc(form: str, prevalence, matrices, values) -> float:
    """The value a Shrout–Fleiss intraclass correlation (``form`` icc-1-1 ... icc-3-k)
    converges to as items grow, k raters (one confusion matrix each, in any order) rating each
    item with labels ``values``: the mean squares' limits from the labels' mean m and
    covariance Σ (:func:`_label_moments`), C = I − J/k centring over raters:
    BMS → 1ᵀΣ1/k, EMS → tr(CΣ)/(k − 1), WMS → EMS + S, JMS/n → S with S = mᵀCm/(k − 1)
    (the raters' spread of means), put into the form's ratio (Shrout & Fleiss 1979, Table 1;
    McGraw & Wong 1996): ICC(1,1) (BMS − WMS)/(BMS + (k − 1)WMS), ICC(2,1)
    (BMS − EMS)/(BMS + (k − 1)EMS + k·S), ICC(3,1) (BMS − EMS)/(BMS + (k − 1)EMS),
    ICC(1,k) (BMS − WMS)/BMS, ICC(2,k) (BMS − EMS)/(BMS + S), ICC(3,k) (BMS − EMS)/BMS.
    NoTruth when the items' labels do not vary (BMS 0)."""
    k = len(matrices)
    if k < 2:
        raise NoTruth("an intraclass correlation needs at least two raters per item")
    m, cov = _label_moments(prevalence, matrices, values)
    centre = np.eye(k) - np.full((k, k), 1.0 / k)
    bms = float(cov.sum()) / k
    ems = float(np.trace(centre @ cov)) / (k - 1)
    spread = float(m @ centre @ m) / (k - 1)
    wms = ems + spread
    model, average = form[4], form.endswith("k")
    if model == "1":
        num, den = bms - wms, bms if average else bms + (k - 1) * wms
    elif model == "2":
        num = bms - ems
        den = bms + spread if average else bms + (k - 1) * ems + k * spread
    else:
        num, den = bms - ems, bms if average else bms + (k - 1) * ems
    if not den > 0:
        raise NoTruth("the items' labels do not vary under the scenario (no between-item variance)")
    return num / den


def krippendorff(level: str, prevalence, matrices, values) -> float:
    """The value Krippendorff's alpha converges to as items grow, every item rated by the
    raters of ``matrices`` (missing ratings at random leave it unchanged: every rater and pair
    of raters keeps its share): 1 − D_o/D_e with D_o = Σ_ck P̄(c, k)·δ²(c, k), P̄ the chance
    of labels (c, k) from an ordered pair of two different raters of one item, averaged over
    pairs (Σ_t π_t M_r[t, c]·M_s[t, k]), and D_e = Σ_ck p̄_c·p̄_k·δ²(c, k), p̄ the raters'
    mean chance of each label; δ² as the estimator has it (Krippendorff 2011): nominal
    [c ≠ k], ordinal (Σ_{g=c..k} p̄_g − (p̄_c + p̄_k)/2)² over the values in order (the
    counts n_g of the estimator scaled by n, which cancels), interval (c − k)², ratio
    ((c − k)/(c + k))²."""
    pi = np.asarray(prevalence, dtype=np.float64)
    ms = [np.asarray(x, dtype=np.float64) for x in matrices]
    if len(ms) < 2:
        raise NoTruth("Krippendorff's alpha needs at least two raters per item")
    order = np.argsort(np.asarray(values, dtype=np.float64), kind="stable")
    vals = np.asarray(values, dtype=np.float64)[order]
    if level == "ratio" and (vals < 0).any():
        raise NoTruth("ratio-level alpha needs non-negative values")
    ms = [x[:, order] for x in ms]
    pairs = np.zeros((len(vals), len(vals)))
    count = 0
    for r in range(len(ms)):
        for s in range(len(ms)):
            if r != s:
                pairs += (ms[r].T * pi) @ ms[s]
                count += 1
    pairs /= count
    pbar = np.mean([pi @ x for x in ms], axis=0)
    if level == "nominal":
        d2 = 1.0 - np.eye(len(vals))
    elif level == "interval":
        d2 = (vals[:, None] - vals[None, :]) ** 2
    elif level == "ratio":
        s = vals[:, None] + vals[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            d2 = np.where(s == 0, 0.0, ((vals[:, None] - vals[None, :]) / s) ** 2)
    else:
        cum = np.concatenate([[0.0], np.cumsum(pbar)])
        lo = np.minimum.outer(np.arange(len(vals)), np.arange(len(vals)))
        hi = np.maximum.outer(np.arange(len(vals)), np.arange(len(vals)))
        d2 = (cum[hi + 1] - cum[lo] - (pbar[:, None] + pbar[None, :]) / 2) ** 2
    observed = float((pairs * d2).sum())
    expected = float((np.outer(pbar, pbar) * d2).sum())
    if not expected > 0:
        raise NoTruth("the labels do not vary under the scenario (no expected disagreement)")
    return 1.0 - observed / expected


# -- majority vote ------------------------------------------------------------------------------


def _compositions(n: int, k: int):
    """Every vector of k non-negative whole numbers summing to n."""
    if k == 1:
        yield (n,)
        return
    for first in range(n, -1, -1):
        for rest in _compositions(n - first, k - 1):
            yield (first, *rest)


def vote_credit(counts: Sequence[int], gold: int, tie_break: str) -> float:
    """The expected credit of a problem whose samples' answers have these ``counts`` (one per
    answer) and whose correct answer is answer ``gold``: 1 when it alone has the most votes;
    under a tie of t answers including it 0 (``wrong``), 1/t (``split``) or 1/t (``first``:
    the samples in random order, each tied answer is equally likely to come first)."""
    top = max(counts)
    if counts[gold] != top:
        return 0.0
    tied = sum(1 for c in counts if c == top)
    if tied == 1:
        return 1.0
    return 0.0 if tie_break == "wrong" else 1.0 / tied


def majority_vote(n: int, probs: Sequence[float], gold: int | None, tie_break: str) -> float:
    """The chance-weighted credit of a majority vote over ``n`` samples whose answers are drawn
    independently with chances ``probs`` (one per answer), the correct answer being answer
    ``gold`` (None: none of them, credit 0): Σ over the multinomial counts of their chance
    times :func:`vote_credit`."""
    p = [float(x) for x in probs]
    if gold is None or n < 1:
        return 0.0
    total = 0.0
    lg = math.lgamma(n + 1)
    for counts in _compositions(n, len(p)):
        if any(c and q <= 0 for c, q in zip(counts, p, strict=True)):
            continue
        log = lg + math.fsum(
            c * math.log(q) - math.lgamma(c + 1) for c, q in zip(counts, p, strict=True) if c
        )
        total += math.exp(log) * vote_credit(counts, gold, tie_break)
    return total


def binary_vote(
    n: int, rate: float, gold: bool, tie_break: str, *, icc: float = 0.0, beta: bool = False
) -> float:
    """E[credit] of a majority vote over ``n`` right/wrong samples of a problem whose chance p
    of a right sample has mean ``rate``: constant, probit-normal with latent intraclass
    correlation ``icc`` (quadrature over the problem's normal), or Beta of mean ``rate`` and
    intraclass correlation ``icc`` (E[p^c(1 − p)^(n−c)] = B(a + c, b + n − c)/B(a, b)); the
    correct answer is ``gold`` (True: a right sample's answer)."""
    from scipy.special import betaln

    credit = []
    for c in range(n + 1):
        counts = (c, n - c) if gold else (n - c, c)
        credit.append(vote_credit(counts, 0, tie_break))
    r = float(rate)
    logc = [math.lgamma(n + 1) - math.lgamma(c + 1) - math.lgamma(n - c + 1) for c in range(n + 1)]

    def given(p: float) -> float:
        if p <= 0.0 or p >= 1.0:
            c = n if p >= 1.0 else 0
            return credit[c]
        lp, lq = math.log(p), math.log1p(-p)
        return math.fsum(
            credit[c] * math.exp(logc[c] + c * lp + (n - c) * lq) for c in range(n + 1)
        )

    if r <= 0.0 or r >= 1.0 or icc <= 0.0:
        return given(r)
    if beta:
        s = 1.0 / icc - 1.0
        a, b = r * s, (1.0 - r) * s
        return math.fsum(
            credit[c] * math.exp(logc[c] + betaln(a + c, b + n - c) - betaln(a, b))
            for c in range(n + 1)
        )
    from scipy import integrate
    from scipy.special import ndtr, ndtri
    from scipy.stats import norm

    q = float(ndtri(r))
    root, rest = math.sqrt(icc), math.sqrt(1.0 - icc)
    got, _ = integrate.quad(
        lambda v: given(float(ndtr((q - root * v) / rest))) * float(norm.pdf(v)),
        -math.inf,
        math.inf,
        epsabs=1e-13,
        epsrel=1e-12,
        limit=200,
    )
    return got


# -- correlations ------------------------------------------------------------------------------


def _continuous(entry: Mapping[str, Any]) -> str:
    """The entry's distribution, refusing one whose numbers tie or do not vary."""
    dist = str(entry.get("distribution"))
    if entry.get("decimals") is not None:
        raise NoTruth("the drawn numbers are rounded (decimals): ties the correlation's law omits")
    if dist in ("normal", "lognormal") and (
        entry.get("low") is not None or entry.get("high") is not None
    ):
        raise NoTruth("the drawn numbers are clipped (low/high): ties the correlation's law omits")
    if dist == "uniform":
        if not float(entry["high"]) > float(entry["low"]):
            raise NoTruth("the drawn numbers do not vary (a uniform entry of no width)")
    elif dist in ("normal", "lognormal"):
        if not float(entry.get("sd") or 0.0) > 0:
            raise NoTruth("the drawn numbers do not vary (sd 0)")
    else:
        raise NoTruth(f"no correlation is worked out for a {dist} entry")
    return dist


def correlation(kind: str, a: Mapping[str, Any], b: Mapping[str, Any], rho: float) -> float:
    """The correlation ``kind`` of two numbers drawn by value entries ``a`` and ``b`` from
    standard normal latents of correlation ``rho`` (a Gaussian copula): Spearman's
    (6/π)·arcsin(ρ/2) and Kendall's (2/π)·arcsin(ρ) whatever the margins (Kruskal 1958);
    Pearson's ρ for two normal numbers, (e^(σ_aσ_bρ) − 1)/√((e^(σ_a²) − 1)(e^(σ_b²) − 1)) for
    two lognormal ones, (6/π)·arcsin(ρ/2) for two uniform ones and ρ·√(3/π) for a normal and a
    uniform one (Stein's lemma); NoTruth otherwise."""
    da, db = _continuous(a), _continuous(b)
    if kind == "spearman":
        return 6.0 / math.pi * math.asin(rho / 2.0)
    if kind == "kendall":
        return 2.0 / math.pi * math.asin(rho)
    if kind != "pearson":
        raise NoTruth(f"no correlation {kind!r} is worked out")
    pair = {da, db}
    if pair == {"normal"}:
        return float(rho)
    if pair == {"uniform"}:
        return 6.0 / math.pi * math.asin(rho / 2.0)
    if pair == {"normal", "uniform"}:
        return rho * math.sqrt(3.0 / math.pi)
    if pair == {"lognormal"}:
        sa, sb = float(a["sd"]), float(b["sd"])
        return math.expm1(sa * sb * rho) / math.sqrt(math.expm1(sa * sa) * math.expm1(sb * sb))
    raise NoTruth(f"Pearson's correlation of a {da} and a {db} number is not worked out")


# -- the design effect ------------------------------------------------------------------------


def value_icc(entry: Mapping[str, Any], rho: float) -> float:
    """The intraclass correlation on the drawn scale of a number X of value entry ``entry``
    drawn from a latent z whose two rows of one cluster have correlation ``rho``: normal
    X = μ + σz, ρ; lognormal X = exp(μ + σz), (e^(σ²ρ) − 1)/(e^(σ²) − 1) (the lognormal's
    covariance); uniform X = low + (high − low)·Φ(z), (6/π)·arcsin(ρ/2) (Pearson's correlation
    of Φ of a bivariate normal pair).  NoTruth for an entry that clips, rounds or has no
    spread."""
    dist = str(entry.get("distribution"))
    if entry.get("decimals") is not None:
        raise NoTruth("the drawn numbers are rounded (decimals), which the ICC does not model")
    if dist in ("normal", "lognormal") and (
        entry.get("low") is not None or entry.get("high") is not None
    ):
        raise NoTruth("the drawn numbers are clipped (low/high), which the ICC does not model")
    if dist == "uniform":
        if not float(entry["high"]) > float(entry["low"]):
            raise NoTruth("the drawn numbers do not vary (a uniform entry of no width)")
        return 6.0 / math.pi * math.asin(rho / 2.0)
    sd = float(entry.get("sd") or 0.0)
    if sd <= 0:
        raise NoTruth("the drawn numbers do not vary (sd 0)")
    if dist == "normal":
        return float(rho)
    if dist == "lognormal":
        return math.expm1(sd * sd * rho) / math.expm1(sd * sd)
    raise NoTruth(f"no ICC is worked out for a {dist} entry")


def hypergeometric_moments(total: int, size: int, kept: int) -> tuple[float, float]:
    """(mean, variance) of how many of a cluster's ``size`` rows are among ``kept`` rows drawn
    without replacement from ``total``."""
    if total <= 0:
        return 0.0, 0.0
    mean = size * kept / total
    if total == 1:
        return mean, 0.0
    var = mean * (total - size) / total * (total - kept) / (total - 1)
    return mean, var


def design_effect(
    icc_value: float,
    clusters: Sequence[Sequence[tuple[int, int, int, int]]],
    cluster_size: str,
    negative_icc: str,
) -> float:
    """1 + (m − 1)·ICC with m the expected cluster size the estimator uses: each cluster a list
    of (cell, its rows in the cell, the cell's registered rows, its observed rows); its observed
    size m_g is a sum of hypergeometric counts, so E[Σ m_g²] is exact and N = Σ kept fixed;
    ``size-weighted`` m = E[Σ m_g²]/N; ``mean`` m = E[N/G], to first order in the chance s
    that a cluster is left empty (NoTruth when s exceeds 10⁻⁵: N/G then varies with the empty
    clusters)."""
    icc_value = max(icc_value, 0.0) if negative_icc == "truncate" else icc_value
    cells: dict[int, tuple[int, int]] = {}
    square, empty = 0.0, 0.0
    for parts in clusters:
        mean = var = 0.0
        none = 1.0
        for cell, size, total, kept in parts:
            cells[cell] = (total, kept)
            mu, v = hypergeometric_moments(total, size, kept)
            mean, var = mean + mu, var + v
            none *= _none_kept(total, size, kept)
        square += var + mean * mean
        empty += none
    n = float(sum(kept for _, kept in cells.values()))
    if n <= 0 or not clusters:
        raise NoTruth("the selection observes no rows")
    if cluster_size == "mean":
        g = len(clusters)
        if empty > 1e-5 or (empty > 0 and g < 2):
            raise NoTruth(
                "missing rows can leave a cluster empty, so the mean cluster size N/G varies"
                " from study to study"
            )
        # E[N/G] to first order in the chance s of an empty cluster (the error is of order
        # s²·N/G, below 10⁻⁹ here)
        m = n / g * (1.0 - empty) + (n / (g - 1) * empty if empty > 0 else 0.0)
    else:
        m = square / n
    return 1.0 + (m - 1.0) * icc_value


def _none_kept(total: int, size: int, kept: int) -> float:
    """The chance that none of a cluster's ``size`` rows is among ``kept`` of ``total``."""
    if size <= 0:
        return 1.0
    if total - size < kept:
        return 0.0
    return math.exp(
        math.lgamma(total - size + 1)
        - math.lgamma(total - size - kept + 1)
        - math.lgamma(total + 1)
        + math.lgamma(total - kept + 1)
    )


def size_chances(size: Mapping[str, Any]) -> tuple[np.ndarray, float]:
    """(P(s) for s = 0, 1, ..., the chance left beyond the last) of a laid-out cluster's
    registered size: uniform whole numbers from low to high, or 1 + Poisson(mean − 1) (its
    support cut where less than 10⁻¹⁶ is left)."""
    if size.get("mean") is None:
        low, high = int(size["low"]), int(size["high"])
        p = np.zeros(high + 1)
        p[low:] = 1.0 / (high - low + 1)
        return p, 0.0
    from scipy.stats import poisson

    lam = float(size["mean"]) - 1.0
    top = int(poisson.isf(1e-16, lam)) + 2 if lam > 0 else 1
    p = np.zeros(top + 2)
    p[1 : top + 2] = poisson.pmf(np.arange(top + 1), lam)
    return p, float(poisson.sf(top, lam))


def expected_square_sizes(total: int, size: Mapping[str, Any]) -> float:
    """E[Σ s_g²] over the clusters cutting ``total`` rows as the layout cuts them
    (:func:`prereg.decide.scenarios.cluster_sizes`: sizes drawn one after another, the last
    cut short where the rows end): f(0) = 0, f(R) = Σ_{s<R} P(s)·(s² + f(R − s)) + P(s ≥ R)·R²."""
    p, _ = size_chances(size)  # the chance beyond the support is in ``rest`` below
    f = np.zeros(int(total) + 1)
    sizes = np.arange(p.size, dtype=np.float64)
    for r in range(1, int(total) + 1):
        short = p[1:r]  # sizes 1 .. r − 1 (and none of size 0: sizes are at least 1)
        s = sizes[1:r]
        rest = 1.0 - float(short.sum())
        f[r] = float(short @ (s * s + f[r - s.astype(np.int64)])) + rest * r * r
    return float(f[int(total)])


def thinned_square(total: int, kept: int, squares: float) -> float:
    """E[Σ m_g²] when ``kept`` of a cell's ``total`` rows are observed (drawn without
    replacement) and its clusters' sizes s_g have E[Σ s_g²] = ``squares`` (Σ s_g = total):
    E[m_g² | s_g] = s_g·p(1 − p)·R/(R − 1) + s_g²·(p² − p(1 − p)/(R − 1)), p = K/R."""
    r, k = int(total), int(kept)
    if r <= 1:
        return float(k * k)
    p = k / r
    return r * p * (1 - p) * r / (r - 1) + squares * (p * p - p * (1 - p) / (r - 1))
