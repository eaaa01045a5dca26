"""auroc-difference: two arms' AUROCs over the same units, DeLong et al.'s (1988) paired
variance and the z test of the difference against a margin.

Oracles, none of them the code under test:

- sklearn.metrics.roc_auc_score of each arm (the estimate is their difference);
- DeLong's structural components written out here from the paper's definitions in Fractions,
  ψ(x, y) over every (positive, negative) pair (1, ½ on a tie, 0), their sample variances and
  covariance, so the variance is compared exactly;
- a paired bootstrap of the units within each class (n₁ and n₀ fixed, as DeLong's variance
  conditions on them) on a large sample, for the variance;
- scipy.stats.norm for the P value and the bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from prereg.stats.estimators import auroc_difference, paired_delong
from prereg.stats.methods import MethodError


def _psi(x, y) -> Fraction:
    return Fraction(1) if x > y else Fraction(1, 2) if x == y else Fraction(0)


def delong_by_hand(y, qa, qb) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(A_a, A_b, Var(A_a − A_b), Cov(A_a, A_b)) from DeLong's formulas, every pair by hand."""
    pos = [i for i, v in enumerate(y) if v == 1]
    neg = [j for j, v in enumerate(y) if v == 0]
    n1, n0 = len(pos), len(neg)
    arms = []
    for q in (qa, qb):
        f = [Fraction(repr(float(v))) for v in q]
        v10 = [sum((_psi(f[i], f[j]) for j in neg), Fraction(0)) / n0 for i in pos]
        v01 = [sum((_psi(f[i], f[j]) for i in pos), Fraction(0)) / n1 for j in neg]
        arms.append((sum(v10, Fraction(0)) / n1, v10, v01))
    (a_a, v10a, v01a), (a_b, v10b, v01b) = arms

    def cov(u, v, mu, mv):
        return sum(((s - mu) * (t - mv) for s, t in zip(u, v, strict=True)), Fraction(0)) / (
            len(u) - 1
        )

    s10 = {
        (r, s): cov(u, v, mu, mv)
        for r, (u, mu) in enumerate(((v10a, a_a), (v10b, a_b)))
        for s, (v, mv) in enumerate(((v10a, a_a), (v10b, a_b)))
    }
    s01 = {
        (r, s): cov(u, v, mu, mv)
        for r, (u, mu) in enumerate(((v01a, a_a), (v01b, a_b)))
        for s, (v, mv) in enumerate(((v01a, a_a), (v01b, a_b)))
    }
    var = {k: s10[k] / n1 + s01[k] / n0 for k in s10}
    return a_a, a_b, var[0, 0] + var[1, 1] - 2 * var[0, 1], var[0, 1]


def _data(n: int, seed: int, decimals: int = 1):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.45).astype(int)
    shared = rng.normal(size=n)
    qa = 1 / (1 + np.exp(-(y * 1.0 - 0.5 + 0.6 * shared + 0.8 * rng.normal(size=n))))
    qb = 1 / (1 + np.exp(-(y * 2.0 - 1.0 + 0.6 * shared + 0.8 * rng.normal(size=n))))
    return y, np.round(qa, decimals), np.round(qb, decimals)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_variance_is_delongs_exactly_and_the_areas_are_sklearns(seed):
    y, qa, qb = _data(24, seed)  # one decimal: many ties within and across the classes
    assert len(set(qa.tolist())) < 24  # ties are present
    a_a, a_b, var, cov = delong_by_hand(y.tolist(), qa.tolist(), qb.tolist())
    d = paired_delong(y == 1, qa, qb)
    assert d["auroc_a"] == a_a and d["auroc_b"] == a_b
    assert d["var_diff"] == var and d["cov"] == cov
    assert float(a_a) == pytest.approx(roc_auc_score(y, qa), abs=1e-15)
    assert float(a_b) == pytest.approx(roc_auc_score(y, qb), abs=1e-15)
    r = auroc_difference(y, qa, y, qb, alternative="two-sided", level=0.95, margin=0)
    assert r.exact["estimate"] == a_a - a_b
    assert r.estimate == float(a_a - a_b)
    assert r.se == math.sqrt(var)
    z = float(a_a - a_b) / math.sqrt(var)
    assert r.statistic == pytest.approx(z, rel=1e-14)
    assert r.p == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-12)
    half = stats.norm.ppf(0.975) * math.sqrt(var)
    assert r.lower == pytest.approx(float(a_a - a_b) - half, abs=1e-14)
    assert r.upper == pytest.approx(float(a_a - a_b) + half, abs=1e-14)
    assert r.extra["auroc_a"] == pytest.approx(roc_auc_score(y, qa), abs=1e-15)
    assert r.counts == {"pairs": 24, "n_pos": int(y.sum()), "n_neg": int(24 - y.sum())}


def test_one_sided_bounds_and_p_against_a_margin():
    y, qa, qb = _data(40, 5, decimals=2)
    a_a, a_b, var, _ = delong_by_hand(y.tolist(), qb.tolist(), qa.tolist())
    se = math.sqrt(var)
    d = float(a_a - a_b)
    for alt, p, bound in (
        ("greater", stats.norm.sf((d + 0.05) / se), ("lower", d - stats.norm.ppf(0.9) * se)),
        ("less", stats.norm.cdf((d + 0.05) / se), ("upper", d + stats.norm.ppf(0.9) * se)),
    ):
        r = auroc_difference(y, qb, y, qa, alternative=alt, level=0.9, margin=-0.05)
        assert r.p == pytest.approx(p, rel=1e-11)
        assert getattr(r, bound[0]) == pytest.approx(bound[1], abs=1e-14)
        other = "upper" if bound[0] == "lower" else "lower"
        assert getattr(r, other) is None  # the one bound the alternative claims


def test_variance_agrees_with_a_paired_bootstrap_of_the_units():
    """A large sample: DeLong's variance against the variance of A_a − A_b over 4,000
    bootstrap resamples of the units within each class (both arms resampled together)."""
    y, qa, qb = _data(600, 11, decimals=3)
    d = paired_delong(y == 1, qa, qb)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    rng = np.random.default_rng(12)
    reps = 4000
    idx = np.concatenate(
        [rng.choice(pos, (reps, pos.size)), rng.choice(neg, (reps, neg.size))], axis=1
    )
    n1, n0 = pos.size, neg.size

    def areas(q):  # Mann–Whitney from mid-ranks, each resample's positives first
        ranks = stats.rankdata(q[idx], axis=1)
        return (ranks[:, :n1].sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)

    diffs = areas(qa) - areas(qb)
    first = idx[0]
    assert diffs[0] == pytest.approx(
        roc_auc_score(y[first], qa[first]) - roc_auc_score(y[first], qb[first]), abs=1e-12
    )
    boot = float(np.var(diffs, ddof=1))
    # the bootstrap variance has a relative SE of about √(2/reps) ≈ 0.022
    assert float(d["var_diff"]) == pytest.approx(boot, rel=0.1)
    # pairing matters: the arms' covariance is positive and far from nothing here
    assert d["cov"] > 0 and d["var_diff"] < d["var_a"] + d["var_b"]


def test_on_the_margin_z_is_zero_and_one_sided_p_is_one_half():
    # 4 positives, 5 negatives: A_a = 15/20, A_b = 16/20, so A_a − A_b = −1/20 = −0.05
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0])
    qa = np.array([0.9, 0.7, 0.4, 0.3, 0.8, 0.5, 0.2, 0.1, 0.05])
    qb = np.array([0.9, 0.7, 0.55, 0.35, 0.6, 0.5, 0.2, 0.1, 0.4])
    assert roc_auc_score(y, qa) - roc_auc_score(y, qb) == pytest.approx(-0.05)
    r = auroc_difference(y, qa, y, qb, alternative="greater", level=0.95, margin=-0.05)
    assert r.exact["estimate"] == Fraction(-1, 20)
    assert r.se > 0
    assert r.statistic == 0.0 and r.p == 0.5
    two = auroc_difference(y, qa, y, qb, alternative="two-sided", level=0.95, margin=-0.05)
    assert two.p == 1.0
    # a hair off the margin, the float z is not 0
    off = auroc_difference(y, qa, y, qb, alternative="greater", level=0.95, margin=-0.0500001)
    assert off.statistic > 0 and off.p < 0.5


def test_a_constant_verifier_has_area_one_half():
    y, qa, _ = _data(30, 4)
    const = np.full(30, 0.5)
    r = auroc_difference(y, qa, y, const, alternative="greater", level=0.95, margin=0)
    assert r.extra["auroc_b"] == 0.5 == roc_auc_score(y, const)
    a_a, a_b, var, cov = delong_by_hand(y.tolist(), qa.tolist(), const.tolist())
    assert a_b == Fraction(1, 2) and cov == 0  # a constant's components do not vary
    assert r.se == math.sqrt(var)
    # both constant: the arms place every unit alike, no spread and no test
    both = auroc_difference(y, const, y, const, alternative="greater", level=0.95, margin=0)
    assert both.exact["estimate"] == 0 and both.se == 0.0
    assert both.statistic is None and both.p is None and both.lower is None


def test_a_class_missing_gives_no_figure_and_one_unit_of_a_class_no_se():
    y = np.ones(6, dtype=int)  # every program correct: no negative
    q = np.linspace(0.1, 0.6, 6)
    r = auroc_difference(y, q, y, q[::-1], alternative="greater", level=0.95, margin=0)
    assert r.estimate is None and r.p is None and r.counts["n_neg"] == 0
    y1 = np.array([1, 0, 0, 0])
    r = auroc_difference(y1, [0.9, 0.1, 0.2, 0.95], y1, [0.5, 0.1, 0.2, 0.3], alternative="greater", level=0.95, margin=0)  # fmt: skip
    assert r.exact["estimate"] == Fraction(2, 3) - 1
    assert r.estimate == pytest.approx(roc_auc_score(y1, [0.9, 0.1, 0.2, 0.95]) - 1)
    assert r.se is None and r.p is None


def test_refusals():
    y, qa, qb = _data(10, 1)
    other = y.copy()
    other[3] = 1 - other[3]
    with pytest.raises(MethodError, match="pair 3 is a positive in one arm"):
        auroc_difference(y, qa, other, qb, alternative="greater", level=0.95, margin=0)
    with pytest.raises(MethodError, match="pair unit by unit"):
        auroc_difference(y, qa, y[:9], qb[:9], alternative="greater", level=0.95, margin=0)
    with pytest.raises(MethodError, match="alternative"):
        auroc_difference(y, qa, y, qb, alternative="higher", level=0.95, margin=0)
    with pytest.raises(MethodError, match="level"):
        auroc_difference(y, qa, y, qb, alternative="greater", level=95, margin=0)
    with pytest.raises(MethodError, match="margin"):
        auroc_difference(y, qa, y, qb, alternative="greater", level=0.95, margin="0.05")
    with pytest.raises(MethodError, match="probability"):
        auroc_difference(y, qa + 1, y, qb, alternative="greater", level=0.95, margin=0)


def test_a_perfect_verifier_against_a_constant_one_has_no_spread():
    """Every positive above every negative in arm a, every score tied in arm b: each unit's
    components differ by exactly 1/2, so Var(D) = 0 while D = 1/2; as a t test without spread,
    no z and no P (a rule on the estimate still reads D)."""
    y = np.array([1, 1, 1, 0, 0, 0, 0])
    perfect = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1, 0.05])
    const = np.full(7, 0.4)
    a_a, a_b, var, _ = delong_by_hand(y.tolist(), perfect.tolist(), const.tolist())
    assert (a_a, a_b, var) == (1, Fraction(1, 2), 0)
    r = auroc_difference(y, perfect, y, const, alternative="greater", level=0.95, margin=0)
    assert r.exact["estimate"] == Fraction(1, 2) and r.se == 0.0
    assert r.statistic is None and r.p is None and r.lower is None
