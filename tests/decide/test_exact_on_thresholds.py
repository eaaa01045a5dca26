"""Figures of the analysis catalogue placed exactly on their registered threshold by decimal data.

Each study here is compiled and scored end to end: two arms `a` and `b` (three rows each,
unless said), a decimal `score` and a `correct` answer per row (the item `p0`, `p1` .. pairs
the arms), and one analysis read by two
hypotheses, one with `ge` (or `le`) and one with `gt` (or `lt`) against the same threshold. The
figure is exactly the threshold, so `ge` holds and `gt` fails; each test shows, from an
independent oracle (scipy, or fractions computed here), that the figure's float lands on the
wrong side or on a neighbour of the threshold, so a float comparison would decide otherwise.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import score_records, study_project

STUDY = "onthreshold"

SPEC = """id: onthreshold
version: "0.1"
title: Figures placed exactly on their thresholds
status: draft
engine: factorial
factors:
  - id: arm
    levels: [{{id: a}}, {{id: b}}]
crossings:
  - {{id: "{{arm}}", rows: {rows}, factors: [arm]}}
totals:
  - {{scope: all, rows: {total}}}
record_contracts:
  - id: answer
    format: jsonl
    role: observation
    fields:
      - {{name: item, type: string, min_length: 1}}
      - {{name: arm, factor: arm, type: string, allowed: [a, b]}}
      - {{name: score, type: number}}
      - {{name: correct, type: boolean}}
attempts:
  contract: answer
  key: [item, arm]
metrics:
  - {{id: score, title: Mean score, definition: The mean score., compute: {{kind: mean, field: score}}}}
  - id: right
    title: Accuracy
    definition: The share of correct answers.
    compute: {{kind: proportion, where: [{{field: correct, op: eq, value: true}}]}}
hypotheses:
  - id: closed
    title: The figure reaches the threshold
    analyses:
      - id: fig
        method: {method}
        metric: {metric}
{inputs}
        options: {options}
    rule:
      compare: {{target: fig, quantity: {quantity}, op: {closed}, value: {value}}}
  - id: open
    title: The figure passes the threshold
    rule:
      compare: {{target: fig, quantity: {quantity}, op: {open}, value: {value}}}
decision:
  outcomes:
    - {{id: reached, title: reached}}
    - {{id: short, title: short}}
  rules:
    - {{outcome: reached, when: {{verdict: {{hypothesis: closed, is: [supported]}}}}}}
  otherwise: short
constants:
  - id: reporting
    value: {{decimals: 4, p_value_digits: 4, cell_interval: {{method: wilson, level: 0.95}}}}
"""

GROUPS = """        groups:
          - {where: [{factor: arm, levels: [a]}]}
          - {where: [{factor: arm, levels: [b]}]}"""
TWO = """        a: {where: [{factor: arm, levels: [a]}]}
        b: {where: [{factor: arm, levels: [b]}]}"""
PAIRED = TWO + "\n        pair_by: item"
ONE = """        of: {where: [{factor: arm, levels: [a]}]}"""


def _verdicts(
    tmp_path: Path, a, b, *, method, inputs, options, quantity, value, ops=("ge", "gt"),
    metric="score",
):  # fmt: skip
    """Compile the study with ``method`` over ``metric`` read at ``quantity`` against ``value``
    by the two ``ops``, score arms ``a`` and ``b`` (the metric's field of each row: a score, or
    a correct answer for ``right``); (verdict of ops[0], verdict of ops[1], analysis row)."""
    field = "correct" if metric == "right" else "score"
    rows = max(len(a), len(b))
    text = SPEC.format(
        rows=rows,
        total=2 * rows,
        metric=metric,
        method=method,
        inputs=inputs,
        options=options,
        quantity=quantity,
        value=value,
        closed=ops[0],
        open=ops[1],
    )
    root = study_project(tmp_path / "p", STUDY, text)
    assert main(["--project", str(root), "compile"]) == 0
    records = [
        {"item": f"p{i}", "arm": arm, "score": 0.5, "correct": True, field: v}
        for arm, values in (("a", a), ("b", b))
        for i, v in enumerate(values)
    ]
    doc = score_records(root, STUDY, records)
    (row,) = doc["analyses"]
    return doc["verdicts"]["closed"], doc["verdicts"]["open"], row


def _decimals(values) -> list[Fraction]:
    return [Fraction(str(v)) for v in values]


def _ss(xs: list[Fraction]) -> Fraction:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs)


def test_one_way_anova_f_of_tenths_exactly_4(tmp_path):
    """0.1, 0.1, 0.1 against 0.3, 0.3, 0.9: SSB = SSW = 6/25 over 1 and 4 degrees of freedom,
    F = 4 exactly; scipy's f_oneway gives 3.999999999999999 (and a float F would fail
    `ge 4`)."""
    a, b = [0.1, 0.1, 0.1], [0.3, 0.3, 0.9]
    xa, xb = _decimals(a), _decimals(b)
    grand = (sum(xa) + sum(xb)) / 6
    ssb = sum(3 * (sum(x) / 3 - grand) ** 2 for x in (xa, xb))
    f = (ssb / 1) / ((_ss(xa) + _ss(xb)) / 4)
    assert f == 4
    assert stats.f_oneway(a, b).statistic < 4
    closed, opened, row = _verdicts(
        tmp_path, a, b, method="one-way-anova", inputs=GROUPS, options="{}",
        quantity="statistic", value=4,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["statistic"] == "4/1" and row["statistic"] == 4.0


def _t_one(xs: list[Fraction], margin: Fraction) -> Fraction:
    """t² of the one-sample t, exactly."""
    n = len(xs)
    m = sum(xs) / n
    return (m - margin) ** 2 / (_ss(xs) / (n - 1) / n)


T_OPTIONS = "{margin: 0, alternative: two-sided, level: 0.95}"


def test_one_sample_t_of_tenths_exactly_2(tmp_path):
    """0.1, 0.4, 0.1: mean 1/5, s² = 3/100, t = (1/5)/√(1/100) = 2 exactly; scipy's
    ttest_1samp gives 1.9999999999999998 (a float t fails `ge 2`)."""
    a = [0.1, 0.4, 0.1]
    assert _t_one(_decimals(a), Fraction(0)) == 4
    assert stats.ttest_1samp(a, 0).statistic < 2
    closed, opened, row = _verdicts(
        tmp_path, a, [0.5, 0.5, 0.5], method="one-sample-t", inputs=ONE, options=T_OPTIONS,
        quantity="statistic", value=2,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["statistic"] == pytest.approx(2, rel=1e-14)
    # the tie the balls found is written as the statistic's exact value, for the reports
    assert row["exact"]["statistic"] == "2/1"


@pytest.mark.parametrize("method", ["welch-t", "student-t"])
def test_two_sample_t_of_tenths_exactly_1(tmp_path, method):
    """0.1, 0.4, 0.5 against 0.1, 0.2, 0.3: a difference of 2/15, sums of squares 78/900 and
    18/900, so Welch's and the pooled variance of the difference are both 96/5400 = (2/15)²:
    t = 1 exactly; scipy's ttest_ind gives 0.9999999999999996 (a float t fails `ge 1`)."""
    a, b = [0.1, 0.4, 0.5], [0.1, 0.2, 0.3]
    xa, xb = _decimals(a), _decimals(b)
    diff = sum(xa) / 3 - sum(xb) / 3
    welch = diff**2 / (_ss(xa) / 6 + _ss(xb) / 6)
    pooled = diff**2 / ((_ss(xa) + _ss(xb)) / 4 * Fraction(2, 3))
    assert welch == pooled == 1
    assert stats.ttest_ind(a, b, equal_var=method == "student-t").statistic < 1
    closed, opened, _ = _verdicts(
        tmp_path, a, b, method=method, inputs=TWO, options=T_OPTIONS,
        quantity="statistic", value=1,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")


def test_paired_t_of_tenths_exactly_2(tmp_path):
    """Pairs (0.1, 0.1), (0.4, 0.1), (0.5, 0.2): differences 0, 3/10, 3/10, t = 2 exactly;
    scipy's ttest_rel gives 2.0000000000000004 (a float t meets `gt 2`)."""
    a, b = [0.1, 0.4, 0.5], [0.1, 0.1, 0.2]
    d = [x - y for x, y in zip(_decimals(a), _decimals(b), strict=True)]
    assert _t_one(d, Fraction(0)) == 4
    assert stats.ttest_rel(a, b).statistic > 2
    closed, opened, _ = _verdicts(
        tmp_path, a, b, method="paired-t", inputs=PAIRED, options=T_OPTIONS,
        quantity="statistic", value=2,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")


def test_one_sample_t_of_root_3_decided_by_balls(tmp_path):
    """0.3, 0.5, 0.4 against a margin of 0.5: mean 2/5, s² = 1/100, t = −√3 (t² = 3 exactly,
    irrational, so never on a decimal threshold: balls decide). −√3 = −1.7320508075688772...
    is below −1.732050807568876, so `le` holds and `gt` fails; scipy's ttest_1samp gives
    −1.7320508075688759, above it (a float t would decide the opposite)."""
    a = [0.3, 0.5, 0.4]
    assert _t_one(_decimals(a), Fraction(1, 2)) == 3
    value = Fraction("1.732050807568876")
    assert value**2 < 3  # −√3 < −1.732050807568876
    assert stats.ttest_1samp(a, 0.5).statistic > -float(value)
    closed, opened, row = _verdicts(
        tmp_path, a, [0.5, 0.5, 0.5], method="one-sample-t", inputs=ONE,
        options="{margin: 0.5, alternative: two-sided, level: 0.95}",
        quantity="statistic", value="-1.732050807568876", ops=("le", "gt"),
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    # a decimal inside the deciding balls, on the side the verdict took, for the reports
    shown = Fraction(row["certified"]["statistic"])
    assert shown < Fraction("-1.732050807568876") and shown**2 == pytest.approx(3, rel=1e-9)


def test_permutation_beyond_64_bits_counts_ties_exactly(tmp_path):
    """1e20, 0.3, 0.2 against 1e20, 0.1, 0.1 with a margin of 0.1: the mean difference is on
    the margin (T = 0), and as decimals over one denominator (tenths) 1e21 leaves 64-bit sums.
    Of the 20 splits, 13 have T* ≥ 0 (counted here in fractions): P = 13/20 exactly, so
    `le 0.65` holds and `lt 0.65` fails. Floats lose the tenths beside 1e20 (every split of
    the two 1e20 across the arms reads as a tie), which counted 16 of 20."""
    from itertools import combinations

    a, b = [1e20, 0.3, 0.2], [1e20, 0.1, 0.1]
    pooled = [x - Fraction(1, 10) for x in _decimals(a)] + _decimals(b)
    observed = sum(pooled[:3]) / 3 - sum(pooled[3:]) / 3
    assert observed == 0
    splits = list(combinations(range(6), 3))
    above = sum(
        sum(pooled[i] for i in c) / 3 - sum(pooled[i] for i in range(6) if i not in c) / 3 >= 0
        for c in splits
    )
    assert Fraction(above, len(splits)) == Fraction(13, 20)
    closed, opened, row = _verdicts(
        tmp_path, a, b, method="permutation-mean-difference", inputs=TWO,
        options="{alternative: greater, margin: 0.1, enumeration: exact, permutations: null,"
        " seed: null, p_correction: none, two_sided: absolute}",
        quantity="p", value=0.65, ops=("le", "lt"),
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["p"] == "13/20" and row["exact"]["statistic"] == "0/1"


def test_wald_difference_z_of_counts_exactly_7_halves(tmp_path):
    """8 of 13 against 1 of 13: a difference of 7/13 over a Wald variance of (8·5 + 1·12)/13³
    = 4/169, z = (7/13)/(2/13) = 7/2 exactly; statsmodels' test_proportions_2indep (Wald
    variance) gives 3.5000000000000004, which meets `gt 3.5`, and the float of the difference
    over the float root is 3.4999999999999996, which fails `ge 3.5`."""
    from statsmodels.stats.proportion import test_proportions_2indep

    d = Fraction(8, 13) - Fraction(1, 13)
    var = Fraction(8 * 5, 13**3) + Fraction(1 * 12, 13**3)
    assert d * d / var == Fraction(49, 4)
    oracle = test_proportions_2indep(8, 13, 1, 13, method="wald", compare="diff")
    assert oracle.statistic > 3.5 and float(d) / math.sqrt(float(var)) < 3.5
    closed, opened, row = _verdicts(
        tmp_path, [True] * 8 + [False] * 5, [True] + [False] * 12, method="wald-difference-test",
        inputs=TWO, options="{alternative: greater, margin: 0}", quantity="statistic",
        value=3.5, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["statistic_squared"] == "49/4"


def _two_t(a, b, margin: Fraction, *, pooled: bool) -> Fraction:
    """t of two samples' mean difference against ``margin``, exactly, when it is rational
    (t² a square of fractions: the sign of the difference with the root)."""
    xa, xb = _decimals(a), _decimals(b)
    na, nb = len(xa), len(xb)
    dev = sum(xa) / na - sum(xb) / nb - margin
    if pooled:
        var = (_ss(xa) + _ss(xb)) / (na + nb - 2) * Fraction(na + nb, na * nb)
    else:
        var = _ss(xa) / (na * (na - 1)) + _ss(xb) / (nb * (nb - 1))
    t2 = dev * dev / var
    root = Fraction(math.isqrt(t2.numerator), math.isqrt(t2.denominator))
    assert root * root == t2
    return root if dev > 0 else -root


A, B = [0.1, 0.4, 0.5], [0.1, 0.2, 0.3]


def _ttost_upper(a, b, low, high) -> float:
    """statsmodels' Welch TOST: the t of the upper margin."""
    from statsmodels.stats.weightstats import ttost_ind

    return ttost_ind(a, b, low, high, usevar="unequal")[2][0]


@pytest.mark.parametrize(
    ("method", "inputs", "options", "a", "b", "value", "ops", "oracle"),
    [
        # Dunnett with one treatment is the pooled t of treatment (arm b) against control (a)
        ("dunnett", GROUPS, "{treatment: 2, alternative: two-sided, level: 0.95}", B, A, 1,
         ("ge", "gt"), lambda: stats.dunnett(A, control=B).statistic[0]),
        ("linear-contrast-means", GROUPS, "{coefficients: [1, -1], variance: pooled,"
         " alternative: two-sided, level: 0.95, margin: 0}", A, B, 1, ("ge", "gt"),
         lambda: stats.ttest_ind(A, B).statistic),
        ("linear-contrast-means", GROUPS, "{coefficients: [1, -1], variance: welch,"
         " alternative: two-sided, level: 0.95, margin: 0}", A, B, 1, ("ge", "gt"),
         lambda: stats.ttest_ind(A, B, equal_var=False).statistic),
        ("noninferiority-means", TWO, "{margin: 0, alternative: greater, variance: welch,"
         " level: 0.975}", A, B, 1, ("ge", "gt"),
         lambda: stats.ttest_ind(A, B, equal_var=False).statistic),
        # TOST reports the t of the upper margin here: (2/15 − 2/5)/(2/15) = −2
        ("tost-means", TWO, "{lower: -0.2, upper: 0.4, variance: welch}", A, B, -2,
         ("le", "lt"), lambda: _ttost_upper(A, B, -0.2, 0.4)),
    ],
    ids=["dunnett", "contrast-pooled", "contrast-welch", "noninferiority", "tost"],
)  # fmt: skip
def test_t_of_group_means_exactly_on_threshold(
    tmp_path, method, inputs, options, a, b, value, ops, oracle
):
    """0.1, 0.4, 0.5 against 0.1, 0.2, 0.3 (sums of squares 78/900 and 18/900): the pooled
    and Welch variances of the difference of means are both (2/15)², so the t of the
    difference 2/15 is exactly 1 (against the margin 0.4, exactly −2). The oracles' floats
    (scipy's dunnett and ttest_ind, statsmodels' ttost_ind) land off it, 0.9999999999999996 or
    −2.0000000000000004: below 1 fails `ge 1`, below −2 meets `lt −2`."""
    margin = Fraction(2, 5) if method == "tost-means" else Fraction(0)
    assert _two_t(A, B, margin, pooled=True) == _two_t(A, B, margin, pooled=False) == value
    assert oracle() != value  # off the threshold: one of the two comparisons decides wrongly
    closed, opened, _ = _verdicts(
        tmp_path, a, b, method=method, inputs=inputs, options=options,
        quantity="statistic", value=value, ops=ops,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")


def _decided(method: str, args, options: dict, value, ops) -> tuple[bool, bool]:
    """(ops[0] holds, ops[1] holds) for the statistic of ``method`` over ``args`` against
    ``value``, as a registered rule decides it (the analysis' certified figure)."""
    from types import SimpleNamespace

    from prereg.decide.analyses import _as_contrast
    from prereg.stats.catalogue import entries
    from prereg.stats.compare import compare

    entry = entries()[method]
    result = entry.load()(*args, **options)
    res = _as_contrast(SimpleNamespace(id="fig", options=options), entry, result, args)
    figure = res.certified["statistic"]
    return compare(figure, ops[0], value), compare(figure, ops[1], value)


def test_pass_at_k_t_exactly_7_tenths():
    """Three problems of 10 samples with 0, 0 and 10 correct: pass@1 per problem 0, 0, 1, mean
    1/3, s² = 1/3, se = 1/3, and against a margin of 0.1 t = (1/3 − 1/10)/(1/3) = 7/10
    exactly; scipy's ttest_1samp of 0, 0, 1 against 0.1 gives 0.6999999999999998 (failing
    `ge 0.7`), the float of (1/3 − 1/10)/√(1/9) 0.7000000000000001 (meeting `gt 0.7`)."""
    import numpy as np

    per = [Fraction(0), Fraction(0), Fraction(1)]
    assert _t_one(per, Fraction(1, 10)) == Fraction(49, 100)
    assert stats.ttest_1samp([0, 0, 1], 0.1).statistic < 0.7
    assert float(Fraction(1, 3) - Fraction(1, 10)) / math.sqrt(float(Fraction(1, 9))) > 0.7
    options = {"k": 1, "alternative": "greater", "level": 0.95, "margin": 0.1}
    args = (np.full(3, 10), np.array([0, 0, 10]))
    assert _decided("pass-at-k-t", args, options, 0.7, ("ge", "gt")) == (True, False)


def _delong_z2(y, qa, qb) -> Fraction:
    """z² of DeLong's paired test of AUROC a − AUROC b = 0, in fractions: the placement values
    V10 (each positive against the negatives) and V01, the sample variances of their
    differences over n1 and n0."""

    def psi(p, q):
        return Fraction(1) if p > q else Fraction(1, 2) if p == q else Fraction(0)

    pos = [i for i, v in enumerate(y) if v]
    neg = [i for i, v in enumerate(y) if not v]

    def placements(q):
        q = _decimals(q)
        v10 = [sum(psi(q[i], q[j]) for j in neg) / len(neg) for i in pos]
        v01 = [sum(psi(q[i], q[j]) for i in pos) / len(pos) for j in neg]
        return v10, v01

    (a10, a01), (b10, b01) = placements(qa), placements(qb)
    d10 = [x - z for x, z in zip(a10, b10, strict=True)]
    d01 = [x - z for x, z in zip(a01, b01, strict=True)]
    d = sum(a10) / len(pos) - sum(b10) / len(pos)
    var = _ss(d10) / (len(d10) - 1) / len(pos) + _ss(d01) / (len(d01) - 1) / len(neg)
    return d * d / var


def test_auroc_difference_z_exactly_5():
    """Three negatives and three positives scored by a (0.2, 0.5, 0.2 | 0.8, 0.7, 0.7) and b
    (0.6, 0.1, 0.3 | 0.1, 0.1, 0.1): DeLong's z of AUROC a − AUROC b is exactly 5 (z² = 25
    from the placement values, in fractions here); its float is 5.000000000000001, which
    meets `gt 5`."""
    import numpy as np

    y = [0, 0, 0, 1, 1, 1]
    qa, qb = [0.2, 0.5, 0.2, 0.8, 0.7, 0.7], [0.6, 0.1, 0.3, 0.1, 0.1, 0.1]
    assert _delong_z2(y, qa, qb) == 25
    options = {"alternative": "two-sided", "level": 0.95, "margin": 0}
    args = (np.array(y), np.array(qa), np.array(y), np.array(qb))
    assert _decided("auroc-difference", args, options, 5, ("ge", "gt")) == (True, False)


def test_cohens_kappa_z_exactly_2():
    """Two raters of four units, (1, 1), (2, 3), (1, 1), (1, 1) over categories 1, 2, 3: p_o =
    3/4, p_e = 9/16, κ = 3/7, and the variance under κ = 0, (p_e + p_e² − Σ p_i. p_.i (p_i. +
    p_.i))/(n(1 − p_e)²) = 9/196, so z = (3/7)/(3/14) = 2 exactly; statsmodels' cohens_kappa
    gives a z_value of 1.9999999999999998 (a float z fails `ge 2`)."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    row, col = [Fraction(3, 4), Fraction(1, 4), 0], [Fraction(3, 4), 0, Fraction(1, 4)]
    pe = sum(r * c for r, c in zip(row, col, strict=True))
    kappa = (Fraction(3, 4) - pe) / (1 - pe)
    spread = sum(r * c * (r + c) for r, c in zip(row, col, strict=True))
    var0 = (pe + pe * pe - spread) / (4 * (1 - pe) ** 2)
    assert kappa == Fraction(3, 7) and kappa * kappa / var0 == 4
    assert cohens_kappa([[3, 0, 0], [0, 0, 1], [0, 0, 0]]).z_value < 2
    options = {"categories": [1, 2, 3], "weights": "none", "level": 0.95, "alternative": "greater"}
    args = (np.array([1, 2, 1, 1]), np.array([1, 3, 1, 1]))
    assert _decided("cohens-kappa", args, options, 2, ("ge", "gt")) == (True, False)


def test_mantel_haenszel_risk_difference_z_exactly_13_thirds():
    """Two strata, 4 of 6 against 1 of 3 and 5 of 5 against 0 of 4: with weights n1 n2/N,
    RD = Σ (a n2 − c n1)/N / Σ w and the Greenland–Robins variance Σ (a b n2³ + c d n1³)/(n1 n2
    N²)/(Σ w)², computed here in fractions, z² = 169/9, so z = 13/3 exactly; the float of z is
    4.333333333333334, one step above the double nearest 13/3, so a float z meets `gt "13/3"`
    (the threshold written as an exact fraction)."""
    import numpy as np

    strata = [(4, 6, 1, 3), (5, 5, 0, 4)]
    num = weight = var = Fraction(0)
    for a, n1, c, n2 in strata:
        b, d, n = n1 - a, n2 - c, n1 + n2
        num += Fraction(a * n2 - c * n1, n)
        weight += Fraction(n1 * n2, n)
        var += Fraction(a * b * n2**3 + c * d * n1**3, n1 * n2 * n * n)
    rd, variance = num / weight, var / (weight * weight)
    assert rd * rd / variance == Fraction(169, 9)
    assert float(rd) / math.sqrt(float(variance)) > float(Fraction(13, 3))
    options = {"alternative": "greater", "level": 0.95, "margin": 0}
    args = tuple(np.array(v) for v in ([4, 5], [6, 5], [1, 0], [3, 4]))
    assert _decided(
        "mantel-haenszel-risk-difference", args, options, Fraction(13, 3), ("ge", "gt")
    ) == (
        True,
        False,
    )


def test_one_sample_se_of_tenths_exactly_a_tenth(tmp_path):
    """0.1, 0.1, 0.4: s² = 3/100, so the standard error of the mean is √(3/100/3) = 1/10
    exactly; scipy's sem gives 0.10000000000000002 (a float se fails `le 0.1`)."""
    a = [0.1, 0.1, 0.4]
    xs = _decimals(a)
    assert _ss(xs) / 2 / 3 == Fraction(1, 100)
    assert stats.sem(a) > 0.1
    closed, opened, row = _verdicts(
        tmp_path, a, [0.5, 0.5, 0.5], method="one-sample-t", inputs=ONE, options=T_OPTIONS,
        quantity="se", value=0.1, ops=("le", "lt"),
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["se"] == "1/10"


def test_brier_score_difference_t_exactly_19_quarters():
    """Outcomes 0, 0, 1 predicted 0.4, 1.0, 0.2 by a and 0.1, 0.9, 0.3 by b: the differences of
    squared errors are 0.15, 0.19 and 0.15 exactly (in decimals), their mean less the margin 0.1
    is 19/300 and its standard error 4/300, so t = 19/4 = 4.75 exactly; scipy's ttest_1samp of
    the float differences gives 4.7500000000000195 (a float t meets `gt 4.75`)."""
    import numpy as np

    y, qa, qb = [0, 0, 1], [0.4, 1.0, 0.2], [0.1, 0.9, 0.3]
    d = [
        (q - t) ** 2 - (r - t) ** 2 for t, q, r in zip(y, _decimals(qa), _decimals(qb), strict=True)
    ]
    assert d == [Fraction(15, 100), Fraction(19, 100), Fraction(15, 100)]
    assert _t_one(d, Fraction(1, 10)) == Fraction(19, 4) ** 2
    floats = [(q - t) ** 2 - (r - t) ** 2 for t, q, r in zip(y, qa, qb, strict=True)]
    assert stats.ttest_1samp(floats, 0.1).statistic > 4.75
    options = {"alternative": "greater", "level": 0.95, "margin": 0.1}
    args = (np.array(y), np.array(qa), np.array(y), np.array(qb))
    assert _decided("brier-score-difference", args, options, 4.75, ("ge", "gt")) == (True, False)
