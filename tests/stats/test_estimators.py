"""Estimators family against scikit-learn, scipy and hand or brute-force computation.

Library defaults that differ from what we register (see the entries' oracle text):
- sklearn ``log_loss`` always clips q to [eps, 1 − eps] with eps the float64 machine epsilon;
  we clip only with a registered ``clip`` (None: no clipping, a 0 on the true class is
  infinite). The comparisons keep q inside (eps, 1 − eps), or clip q before calling sklearn.
- sklearn ``precision_recall_fscore_support``'s ``zero_division="warn"`` acts as 0; we spell
  0, 1 or np.nan (our zero, one, undefined).
- sklearn ``brier_score_loss`` of binary outcomes is the plain mean squared error.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import comb
from sklearn.metrics import (
    brier_score_loss,
    precision_recall_fscore_support,
    roc_auc_score,
)
from sklearn.metrics import log_loss as sk_log_loss

from prereg.stats import estimators as es
from prereg.stats.catalogue import entries
from prereg.stats.methods import MethodError


def close(a, b, rel=1e-12, abs_=1e-15):
    assert a == pytest.approx(b, rel=rel, abs=abs_)


# --------------------------------------------------------------------------------------------
# pass@k


def pass_at_k_chen(n, c, k):
    """Chen et al. (2021), Figure 3: the numerically stable unbiased estimator."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_pass_at_k_matches_chen_and_exact_binomials(k):
    rng = np.random.default_rng(k)
    n = rng.integers(10, 200, 50)
    c = rng.binomial(n, 0.3)
    c[0], c[1] = 0, n[1]  # a problem never solved, one always solved
    r = es.pass_at_k(n, c, k=k)
    expected = np.mean([pass_at_k_chen(int(a), int(b), k) for a, b in zip(n, c, strict=True)])
    close(r.estimate, expected, rel=1e-12)
    exact = sum(
        Fraction(
            comb(int(a), k, exact=True) - comb(int(a - b), k, exact=True),
            comb(int(a), k, exact=True),
        )
        for a, b in zip(n, c, strict=True)
    ) / len(n)
    assert r.exact["estimate"] == exact
    assert r.counts == {"problems": 50, "samples": int(n.sum()), "correct": int(c.sum()), "k": k}


def test_pass_at_k_by_hand_and_k1_is_the_mean_share():
    # n = 4, c = 1, k = 2: 1 − C(3, 2)/C(4, 2) = 1 − 3/6 = 1/2; n = 5, c = 2, k = 2:
    # 1 − C(3, 2)/C(5, 2) = 1 − 3/10 = 7/10; mean 3/5
    assert es.pass_at_k([4, 5], [1, 2], k=2).exact["estimate"] == Fraction(3, 5)
    # k = 1 is the mean of c/n
    assert (
        es.pass_at_k([4, 5, 10], [1, 2, 7], k=1).exact["estimate"]
        == (Fraction(1, 4) + Fraction(2, 5) + Fraction(7, 10)) / 3
    )
    # large n: 1e6 samples on one problem, half correct, k = 3
    r = es.pass_at_k([10**6], [5 * 10**5], k=3)
    close(r.estimate, pass_at_k_chen(10**6, 5 * 10**5, 3))


def test_pass_at_k_refuses_k_above_n():
    with pytest.raises(MethodError, match=r"problem 1: k = 5 exceeds its n = 3 samples"):
        es.pass_at_k([10, 3], [1, 1], k=5)
    with pytest.raises(MethodError, match=r"problem 0: c = 4 correct samples exceed n = 3"):
        es.pass_at_k([3], [4], k=1)
    with pytest.raises(MethodError, match="k must be a positive whole number"):
        es.pass_at_k([3], [1], k=0)
    with pytest.raises(MethodError, match=r"n\[0\] is -3, a negative count"):
        es.pass_at_k([-3], [1], k=1)
    assert es.pass_at_k([], [], k=1).estimate is None


# --------------------------------------------------------------------------------------------
# majority vote


def test_majority_vote_tie_rules_by_hand():
    answers = [
        ["a", "b", "a"],  # a wins (2 votes), gold a: right
        ["x", "y"],  # tie x, y (first sampled x); gold y
        ["1", "2", "2", "1", "3"],  # tie 1, 2 (first sampled 1); gold 1
        ["p"],  # p, gold q: wrong
    ]
    gold = ["a", "y", "1", "q"]
    wrong = es.majority_vote(answers, gold, tie_break="wrong")
    first = es.majority_vote(answers, gold, tie_break="first")
    split = es.majority_vote(answers, gold, tie_break="split")
    # wrong: only problem 0 right: 1/4; first: problems 0 and 2: 2/4; split: 1 + 1/2 + 1/2 = 2
    assert wrong.exact["estimate"] == Fraction(1, 4)
    assert first.exact["estimate"] == Fraction(1, 2)
    assert split.exact["estimate"] == Fraction(1, 2)
    assert split.exact["score"] == 2
    assert wrong.counts == {"problems": 4, "ties": 2}
    # split with gold outside the tie and a three-way tie
    r = es.majority_vote([[1, 2, 3], [1, 2, 3]], [3, 4], tie_break="split")
    assert r.exact["estimate"] == Fraction(1, 6)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=7), st.integers(0, 3)),
        min_size=1,
        max_size=20,
    )
)
def test_majority_vote_rules_bracket_each_other(problems):
    answers = [p[0] for p in problems]
    gold = [p[1] for p in problems]
    w = es.majority_vote(answers, gold, tie_break="wrong").exact["estimate"]
    f = es.majority_vote(answers, gold, tie_break="first").exact["estimate"]
    s = es.majority_vote(answers, gold, tie_break="split").exact["estimate"]
    assert w <= f and w <= s
    # by definition, problem by problem
    expected_split = Fraction(0)
    for sampled, truth in zip(answers, gold, strict=True):
        top = max(sampled.count(a) for a in set(sampled))
        tied = {a for a in set(sampled) if sampled.count(a) == top}
        expected_split += Fraction(int(truth in tied), len(tied))
    assert s == expected_split / len(gold)


def test_majority_vote_refusals():
    with pytest.raises(MethodError, match=r"answers\[1\] is empty"):
        es.majority_vote([["a"], []], ["a", "b"], tie_break="wrong")
    with pytest.raises(MethodError, match="tie_break must be one of wrong, first, split"):
        es.majority_vote([["a"]], ["a"], tie_break="random")
    with pytest.raises(MethodError, match="differ in length"):
        es.majority_vote([["a"]], ["a", "b"], tie_break="first")


# --------------------------------------------------------------------------------------------
# precision, recall, F1

SK_ZD = {"zero": 0.0, "one": 1.0, "undefined": np.nan}


def sklearn_prf(yt, yp, labels, average, positive, zd):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if average == "binary" and len(labels) > 2:
            # sklearn's average="binary" refuses more than two classes; one-vs-rest for the
            # positive class is its per-class figure (average=None) of that label
            out = precision_recall_fscore_support(
                yt, yp, labels=[positive], average=None, zero_division=SK_ZD[zd]
            )
            return tuple(v[0] for v in out[:3])
        kwargs = {"pos_label": positive} if average == "binary" else {}
        return precision_recall_fscore_support(
            yt, yp, labels=labels, average=average, zero_division=SK_ZD[zd], **kwargs
        )[:3]


def check_prf(yt, yp, labels, average, positive, zd):
    sk = sklearn_prf(yt, yp, labels, average, positive, zd)
    for fn, expected in zip((es.precision, es.recall, es.f1_score), sk, strict=True):
        r = fn(
            yt,
            yp,
            labels=labels,
            average=average,
            positive=positive,
            zero_division=zd,
            missing_prediction="refuse",
        )
        if np.isnan(expected):
            assert r.estimate is None and "estimate" not in r.exact
        else:
            close(r.estimate, expected)
            close(float(r.exact["estimate"]), expected)


@pytest.mark.parametrize("zd", ["zero", "one", "undefined"])
@pytest.mark.parametrize("average", ["binary", "micro", "macro"])
def test_prf_matches_sklearn(zd, average):
    rng = np.random.default_rng(3)
    labels = [0, 1, 2, 3]  # class 3 never appears: a zero division in macro
    yt = rng.integers(0, 3, 300)
    yp = np.where(rng.random(300) < 0.6, yt, rng.integers(0, 3, 300))
    positive = 1 if average == "binary" else None
    check_prf(yt, yp, labels, average, positive, zd)
    # degenerate: the positive class never predicted nor present
    check_prf(np.zeros(5, int), np.zeros(5, int), [0, 1], average, 1 if positive else None, zd)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1, max_size=40),
    st.sampled_from(["binary", "micro", "macro"]),
    st.sampled_from(["zero", "one", "undefined"]),
)
def test_prf_property(pairs, average, zd):
    yt = [p[0] for p in pairs]
    yp = [p[1] for p in pairs]
    check_prf(yt, yp, ["a", "b", "c"], average, "b" if average == "binary" else None, zd)


def test_prf_exact_by_hand():
    # tp = 3, fp = 1, fn = 2 for class 1: precision 3/4, recall 3/5, F1 6/9 = 2/3
    yt = [1, 1, 1, 1, 1, 0, 0]
    yp = [1, 1, 1, 0, 0, 1, 0]
    kw = {
        "labels": [0, 1],
        "average": "binary",
        "positive": 1,
        "zero_division": "zero",
        "missing_prediction": "refuse",
    }
    assert es.precision(yt, yp, **kw).exact["estimate"] == Fraction(3, 4)
    assert es.recall(yt, yp, **kw).exact["estimate"] == Fraction(3, 5)
    f = es.f1_score(yt, yp, **kw)
    assert f.exact["estimate"] == Fraction(2, 3)
    assert f.counts == {"tp": 3, "fp": 1, "fn": 2, "n": 7, "missingPredictions": 0}


def test_prf_refusals():
    with pytest.raises(MethodError, match=r"y_pred\[1\] is 7, not one of the registered labels"):
        es.precision(
            [0, 1],
            [0, 7],
            labels=[0, 1],
            average="micro",
            positive=None,
            zero_division="zero",
            missing_prediction="refuse",
        )
    with pytest.raises(MethodError, match="average binary needs positive"):
        es.recall(
            [0, 1],
            [0, 1],
            labels=[0, 1],
            average="binary",
            positive=2,
            zero_division="one",
            missing_prediction="refuse",
        )
    with pytest.raises(MethodError, match="positive applies to average binary only"):
        es.f1_score(
            [0, 1],
            [0, 1],
            labels=[0, 1],
            average="macro",
            positive=1,
            zero_division="one",
            missing_prediction="refuse",
        )
    with pytest.raises(MethodError, match="zero_division must be one of"):
        es.f1_score(
            [0],
            [0],
            labels=[0, 1],
            average="macro",
            positive=None,
            zero_division="warn",
            missing_prediction="refuse",
        )


# --------------------------------------------------------------------------------------------
# Brier score and log loss


def data(seed, n):
    rng = np.random.default_rng(seed)
    q = rng.random(n)
    y = (rng.random(n) < q).astype(int)
    return y, q


@pytest.mark.parametrize("seed, n", [(0, 10), (1, 1000), (2, 10**6)])
def test_brier_matches_sklearn_and_exact(seed, n):
    y, q = data(seed, n)
    r = es.brier_score(y, q)
    close(r.estimate, brier_score_loss(y, q), rel=1e-12)
    if n <= 1000:
        exact = sum((Fraction(repr(float(a))) - int(b)) ** 2 for a, b in zip(q, y, strict=True)) / n
        assert r.exact["estimate"] == exact


def test_brier_edges():
    r = es.brier_score([1, 0, 1], [1.0, 0.0, 0.5])
    assert r.exact["estimate"] == Fraction(1, 12)  # (0 + 0 + 1/4)/3
    assert es.brier_score([], []).estimate is None


@pytest.mark.parametrize(
    "seed, n, alternative, level, margin",
    [(6, 12, "less", 0.95, 0.0), (7, 300, "two-sided", 0.9, 0.0), (8, 50, "greater", 0.95, -0.03)],
)
def test_brier_difference_matches_sklearn_and_ttest_rel(seed, n, alternative, level, margin):
    """The difference of two arms' Brier scores over the same units: each arm's score is
    sklearn's, the paired t is scipy's ttest_rel of the per-unit squared errors (shifted by the
    margin), its interval scipy's confidence_interval; the estimate is exact over decimals."""
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(seed)
    qa, qb = np.round(rng.random(n), 2), np.round(rng.random(n), 2)
    ya, yb = (rng.random(n) < qa).astype(int), (rng.random(n) < qb).astype(int)
    r = es.brier_score_difference(
        ya, qa, yb, qb, alternative=alternative, level=level, margin=margin
    )
    exact = sum((Fraction(repr(float(q))) - int(y)) ** 2 for q, y in zip(qa, ya, strict=True))
    exact -= sum((Fraction(repr(float(q))) - int(y)) ** 2 for q, y in zip(qb, yb, strict=True))
    assert r.exact["estimate"] == exact / n
    close(r.estimate, brier_score_loss(ya, qa) - brier_score_loss(yb, qb), rel=1e-12, abs_=1e-15)
    ref = ttest_rel((qa - ya) ** 2 - margin, (qb - yb) ** 2, alternative=alternative)
    close(r.statistic, float(ref.statistic), rel=1e-9)
    close(r.p, float(ref.pvalue), rel=1e-9)
    assert r.df == n - 1
    ci = ttest_rel((qa - ya) ** 2, (qb - yb) ** 2, alternative=alternative).confidence_interval(
        level
    )
    for ours, theirs in ((r.lower, ci.low), (r.upper, ci.high)):
        if math.isfinite(theirs):
            close(ours, float(theirs), rel=1e-9)
        else:
            assert ours is None


def test_brier_difference_on_its_margin_and_without_spread():
    # by hand: a's squared errors 0.01, 0.09, 0.25, 0.01 (Brier 0.09), b's 0.04 each (0.04);
    # the difference is exactly 1/20: against the margin 0.05, t = 0 and P = 1/2
    r = es.brier_score_difference(
        [1, 0, 1, 1], [0.9, 0.3, 0.5, 0.9], [1, 1, 0, 0], [0.8, 0.8, 0.2, 0.2],
        alternative="greater", level=0.95, margin=0.05,
    )  # fmt: skip
    assert r.exact["estimate"] == Fraction(1, 20)
    assert r.statistic == 0.0 and r.p == 0.5
    assert (r.extra["brier_a"], r.extra["brier_b"]) == (0.09, 0.04)
    same = es.brier_score_difference(
        [1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9], alternative="less", level=0.95, margin=0
    )
    assert same.exact["estimate"] == 0 and same.p is None  # every difference 0: no t
    with pytest.raises(MethodError, match="pair unit by unit: 2 against 1"):
        es.brier_score_difference(
            [1, 0], [0.5, 0.5], [1], [0.5], alternative="less", level=0.9, margin=0
        )


@pytest.mark.parametrize("seed, n", [(3, 10), (4, 1000), (5, 10**5)])
def test_log_loss_matches_sklearn(seed, n):
    y, q = data(seed, n)
    q = np.clip(q, 1e-6, 1 - 1e-6)  # inside sklearn's machine-epsilon clip
    r = es.log_loss(y, q, clip=None)
    close(r.estimate, sk_log_loss(y, q, labels=[0, 1]), rel=1e-12)
    # a registered clip: sklearn on q clipped beforehand
    r = es.log_loss(y, q, clip=0.01)
    close(r.estimate, sk_log_loss(y, np.clip(q, 0.01, 0.99), labels=[0, 1]), rel=1e-12)
    assert r.extra["clipped"] == int(((q < 0.01) | (q > 0.99)).sum())


def test_log_loss_without_clip_is_infinite_on_a_certain_miss():
    r = es.log_loss([1, 0], [0.0, 0.5], clip=None)
    assert r.estimate == math.inf
    # by hand: −(ln 0.5 + ln 0.5)/2 = ln 2
    close(es.log_loss([1, 0], [0.5, 0.5], clip=None).estimate, math.log(2))
    with pytest.raises(MethodError, match=r"clip must be None or a number in \(0, 0.5\)"):
        es.log_loss([1], [0.5], clip=0.7)


# --------------------------------------------------------------------------------------------
# expected calibration error


def ece_loop(y, q, edges, closed):
    """The registered bins written out as a plain loop (exact arithmetic)."""
    k = len(edges) - 1
    members = [[] for _ in range(k)]
    for yi, qi in zip(y, q, strict=True):
        for b in range(k):
            lo, hi = edges[b], edges[b + 1]
            if closed == "left":
                inside = lo <= qi < hi or (b == k - 1 and qi == hi)
            else:
                inside = lo < qi <= hi or (b == 0 and qi == lo)
            if inside:
                members[b].append((int(yi), Fraction(repr(float(qi)))))
                break
    total = Fraction(0)
    for m in members:
        if m:
            total += abs(sum(a for a, _ in m) - sum(c for _, c in m))
    return total / len(y), [len(m) for m in members]


@pytest.mark.parametrize("closed", ["left", "right"])
@pytest.mark.parametrize(
    "edges", [[0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1], [0, 0.5, 0.9, 1]]
)
def test_ece_against_a_loop(closed, edges):
    y, q = data(6, 500)
    q[:6] = [0.0, 0.1, 0.5, 0.9, 1.0, 0.3]  # values on the edges
    r = es.expected_calibration_error(y, q, edges=edges, closed=closed)
    exact, sizes = ece_loop(y, q, edges, closed)
    assert r.exact["estimate"] == exact
    close(r.estimate, float(exact), rel=1e-12)
    assert [b["n"] for b in r.extra["bins"]] == sizes
    for b in r.extra["bins"]:
        if b["n"]:
            inside = [
                (yi, qi)
                for yi, qi in zip(y, q, strict=True)
                if (
                    b["lower"] <= qi < b["upper"]
                    if closed == "left"
                    else b["lower"] < qi <= b["upper"]
                )
                or (closed == "left" and b["upper"] == edges[-1] and qi == b["upper"])
                or (closed == "right" and b["lower"] == edges[0] and qi == b["lower"])
            ]
            close(b["accuracy"], np.mean([a for a, _ in inside]))
            close(b["mean_confidence"], np.mean([c for _, c in inside]))


def test_ece_refusals():
    with pytest.raises(MethodError, match="q: value 0.95 lies outside the bin edges"):
        es.expected_calibration_error([1], [0.95], edges=[0, 0.5, 0.9], closed="left")
    with pytest.raises(MethodError, match="strictly increasing"):
        es.expected_calibration_error([1], [0.5], edges=[0, 0.5, 0.5, 1], closed="left")
    with pytest.raises(MethodError, match="closed must be one of left, right"):
        es.expected_calibration_error([1], [0.5], edges=[0, 1], closed="both")
    with pytest.raises(MethodError, match=r"y\[0\] is 2; every outcome must be 0 or 1"):
        es.expected_calibration_error([2], [0.5], edges=[0, 1], closed="left")


# --------------------------------------------------------------------------------------------
# AUROC


def delong_brute_force(y, q):
    """DeLong et al. (1988): placements over all pairs, sample variances (n − 1)."""
    x = q[y == 1]
    z = q[y == 0]
    psi = (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])
    a = psi.mean()
    v10 = psi.mean(axis=1)
    v01 = psi.mean(axis=0)
    s10 = ((v10 - a) ** 2).sum() / (len(x) - 1)
    s01 = ((v01 - a) ** 2).sum() / (len(z) - 1)
    return a, math.sqrt(s10 / len(x) + s01 / len(z))


def hanley_mcneil_by_hand(a, n1, n0):
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    return math.sqrt((a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0))


@pytest.mark.parametrize("seed, n, ties", [(7, 60, False), (8, 400, True), (9, 3000, True)])
@pytest.mark.parametrize("se_method", ["hanley-mcneil", "delong"])
def test_auroc_against_sklearn_and_brute_force(seed, n, ties, se_method):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    q = np.clip(0.3 * y + rng.random(n) * 0.8, 0, 1)
    if ties:
        q = np.round(q, 1)
    r = es.auroc(y, q, se_method=se_method, level=0.9)
    close(r.estimate, roc_auc_score(y, q))
    a, se_dl = delong_brute_force(y, q)
    close(r.extra["se_delong"], se_dl, rel=1e-10)
    se_hm = hanley_mcneil_by_hand(a, int(y.sum()), int(n - y.sum()))
    close(r.extra["se_hanley_mcneil"], se_hm, rel=1e-10)
    se = se_dl if se_method == "delong" else se_hm
    close(r.se, se, rel=1e-10)
    z = 1.6448536269514722
    close(r.lower, max(0.0, a - z * se), rel=1e-10)
    close(r.upper, min(1.0, a + z * se), rel=1e-10)
    # exact: count the pairs
    x, w = q[y == 1], q[y == 0]
    twice_u = int(2 * (x[:, None] > w[None, :]).sum() + (x[:, None] == w[None, :]).sum())
    assert r.exact["estimate"] == Fraction(twice_u, 2 * len(x) * len(w))


def test_auroc_hanley_mcneil_published_example():
    # Hanley & McNeil (1982), Table 1: CT ratings 1-5 of 58 normal and 51 abnormal patients;
    # the paper gives A = 0.893 with SE 0.032.
    normal = [33, 6, 6, 11, 2]
    abnormal = [3, 2, 2, 11, 33]
    y = np.r_[np.zeros(58, int), np.ones(51, int)]
    q = np.r_[np.repeat(np.arange(1, 6), normal), np.repeat(np.arange(1, 6), abnormal)] / 5
    r = es.auroc(y, q, se_method="hanley-mcneil", level=0.95)
    assert round(r.estimate, 3) == 0.893
    assert round(r.se, 3) == 0.032


def test_auroc_degenerate():
    r = es.auroc([1, 1], [0.2, 0.3], se_method="delong", level=0.95)
    assert r.estimate is None and r.se is None
    # one negative: DeLong's sample variance of the negatives' placements is undefined
    r = es.auroc([1, 1, 0], [0.2, 0.9, 0.5], se_method="delong", level=0.95)
    assert r.exact["estimate"] == Fraction(1, 2) and r.se is None and r.lower is None
    with pytest.raises(MethodError, match="se_method must be one of hanley-mcneil, delong"):
        es.auroc([1, 0], [0.2, 0.3], se_method="bootstrap", level=0.95)


# --------------------------------------------------------------------------------------------


def test_catalogue_entries_are_complete():
    import inspect

    mine = {name: e for name, e in entries().items() if e.family == "estimators"}
    assert set(mine) == {
        "pass-at-k",
        "pass-at-k-t",
        "pass-at-k-difference",
        "pass-at-k-difference-bootstrap",
        "majority-vote",
        "precision",
        "recall",
        "f1-score",
        "brier-score",
        "brier-score-difference",
        "selective-accuracy",
        "log-loss",
        "expected-calibration-error",
        "auroc",
        "auroc-difference",
    }
    for e in mine.values():
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)
        params = inspect.signature(e.load()).parameters.values()
        keyword_only = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
        assert keyword_only == set(e.options), e.name
        assert all(p.default is inspect.Parameter.empty for p in params)


def test_importing_the_module_does_not_import_scipy():
    code = "import sys, prereg.stats.estimators; print('scipy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("average", ["micro", "macro"])
@pytest.mark.parametrize("fn", [es.precision, es.recall, es.f1_score])
def test_prf_missing_prediction_wrong_is_sklearn_with_a_label_outside(fn, average):
    """A missing prediction (a refusal) under missing_prediction wrong is a miss of its true
    class: sklearn with the refusal replaced by a label outside ``labels`` gives the same."""
    from sklearn.metrics import precision_recall_fscore_support

    rng = np.random.default_rng(8)
    labels = ["safe", "borderline", "unsafe"]
    yt = rng.choice(labels, 200).tolist()
    yp = [
        None if rng.random() < 0.1 else (t if rng.random() < 0.7 else str(rng.choice(labels)))
        for t in yt
    ]
    r = fn(
        yt,
        yp,
        labels=labels,
        average=average,
        positive=None,
        zero_division="zero",
        missing_prediction="wrong",
    )
    sk = precision_recall_fscore_support(
        yt,
        ["refused" if p is None else p for p in yp],
        labels=labels,
        average=average,
        zero_division=0,
    )
    want = {es.precision: sk[0], es.recall: sk[1], es.f1_score: sk[2]}[fn]
    assert float(r.exact["estimate"]) == pytest.approx(want, abs=1e-12)
    assert r.counts["missingPredictions"] == sum(p is None for p in yp)
    with pytest.raises(MethodError, match=r"y_pred\[\d+\] is missing .* missing_prediction: wrong"):
        fn(
            yt,
            yp,
            labels=labels,
            average=average,
            positive=None,
            zero_division="zero",
            missing_prediction="refuse",
        )
