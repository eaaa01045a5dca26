"""Standard errors, z and t of count-based and clustered methods, and Welch's degrees of
freedom, placed exactly on their registered threshold (the study harness of
:mod:`tests.decide.test_exact_on_thresholds`: two hypotheses, `ge` and `gt` of the same
threshold, so the figure meets the one and fails the other). Each oracle is computed here in
fractions; each test shows the float the method reports on the wrong side of the threshold (or
a neighbour of it), so that a float comparison would decide otherwise."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from prereg.stats.equivalence import noninferiority_proportions, tost_proportions
from tests.conftest import score_records, study_project
from tests.decide.test_exact_on_thresholds import PAIRED, SPEC, STUDY, TWO, _verdicts


def _arm(k: int, n: int) -> list[bool]:
    return [True] * k + [False] * (n - k)


def _wald(k1, n1, k2, n2, margin: Fraction) -> tuple[Fraction, Fraction]:
    """(se², z²) of the Wald z of k1/n1 − k2/n2 against ``margin``, in fractions."""
    p1, p2 = Fraction(k1, n1), Fraction(k2, n2)
    var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
    return var, (p1 - p2 - margin) ** 2 / var


def test_noninferiority_proportions_wald_z_exactly_3(tmp_path):
    """6 of 10 against 2 of 10, margin −0.2: d − margin = 3/5 over a Wald se of √(24/1000 +
    16/1000) = 1/5, z = 3 exactly; the method's float is 2.9999999999999996 (`ge 3` would
    fail)."""
    var, z2 = _wald(6, 10, 2, 10, Fraction(-1, 5))
    assert var == Fraction(1, 25) and z2 == 9
    float_z = noninferiority_proportions(
        6, 10, 2, 10, margin=-0.2, alternative="greater", se="wald", level=0.975
    ).statistic
    assert float_z < 3
    closed, opened, row = _verdicts(
        tmp_path, _arm(6, 10), _arm(2, 10), method="noninferiority-proportions", inputs=TWO,
        options="{margin: -0.2, alternative: greater, se: wald, level: 0.975}",
        quantity="statistic", value=3, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["statistic_squared"] == "9/1" and row["exact"]["se_squared"] == "1/25"


def test_tost_proportions_wald_z_of_the_reported_side_exactly_3_halves(tmp_path):
    """6 of 10 against 2 of 10 between −0.1 and 0.1: d = 2/5, se = 1/5; the upper side's z,
    (2/5 − 1/10)/(1/5) = 3/2, has the larger P and is the reported statistic, exactly 3/2;
    its float is 1.4999999999999998 (`ge 1.5` would fail)."""
    _, z2 = _wald(6, 10, 2, 10, Fraction(1, 10))
    assert z2 == Fraction(9, 4)
    r = tost_proportions(6, 10, 2, 10, lower=-0.1, upper=0.1, se="wald")
    assert r.statistic < 1.5 and r.statistic == r.extra["statistic_upper"]
    closed, opened, row = _verdicts(
        tmp_path, _arm(6, 10), _arm(2, 10), method="tost-proportions", inputs=TWO,
        options="{lower: -0.1, upper: 0.1, se: wald}",
        quantity="statistic", value=1.5, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["exact"]["statistic_squared"] == "9/4"


def test_tost_proportions_wald_se_exactly_a_fifth(tmp_path):
    """8 of 10 against 6 of 10: se² = 16/1000 + 24/1000 = 1/25, se = 1/5 exactly; the
    method's float is 0.19999999999999998 (`ge 0.2` would fail)."""
    var, _ = _wald(8, 10, 6, 10, Fraction(-1, 10))
    assert var == Fraction(1, 25)
    assert tost_proportions(8, 10, 6, 10, lower=-0.1, upper=0.1, se="wald").se < 0.2
    closed, opened, _ = _verdicts(
        tmp_path, _arm(8, 10), _arm(6, 10), method="tost-proportions", inputs=TWO,
        options="{lower: -0.1, upper: 0.1, se: wald}",
        quantity="se", value=0.2, metric="right",
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")


def _ss(xs: list[Fraction]) -> Fraction:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs)


def _welch_df(a, b) -> Fraction:
    """Welch–Satterthwaite df of two samples read as the decimals they write, in fractions."""
    xa, xb = [Fraction(str(v)) for v in a], [Fraction(str(v)) for v in b]
    va, vb = _ss(xa) / (len(xa) * (len(xa) - 1)), _ss(xb) / (len(xb) * (len(xb) - 1))
    return (va + vb) ** 2 / (va * va / (len(xa) - 1) + vb * vb / (len(xb) - 1))


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("welch-t", "{margin: 0, alternative: two-sided, level: 0.95}"),
        (
            "noninferiority-means",
            "{margin: -1, alternative: greater, variance: welch, level: 0.95}",
        ),
        ("tost-means", "{lower: -1, upper: 1, variance: welch}"),
        ("equivalence-interval-means", "{alpha: 0.05, variance: welch}"),
    ],
)
def test_welch_df_of_tenths_exactly_4(tmp_path, method, options):
    """0.8, 0.3, 0.4 against 0.3, 0.2, 0.7: both arms' variances of the mean are 7/300, so
    Welch–Satterthwaite's df is 2·(3 − 1) = 4 exactly; scipy's ttest_ind(equal_var=False)
    gives 3.999999999999999 (`ge 4` would fail)."""
    a, b = [0.8, 0.3, 0.4], [0.3, 0.2, 0.7]
    assert _welch_df(a, b) == 4
    assert stats.ttest_ind(a, b, equal_var=False).df < 4
    closed, opened, row = _verdicts(
        tmp_path, a, b, method=method, inputs=TWO, options=options, quantity="df", value=4,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["df"] < 4 and row["exact"]["df"] == "4/1"


def _cluster_verdicts(tmp_path: Path, a, b, *, method, options, quantity, value):
    """The study of :mod:`tests.decide.test_exact_on_thresholds` with a `team` field, the
    cluster of each row: arm a's rows in teams a1, a1, a2, a2, a3, a3 and arm b's in b1 .. b3;
    (verdict of `ge`, verdict of `gt`, analysis row)."""
    text = SPEC.replace(
        "      - {{name: correct, type: boolean}}",
        "      - {{name: correct, type: boolean}}\n      - {{name: team, type: string}}",
    ).format(
        rows=len(a), total=2 * len(a), metric="score", method=method,
        inputs=TWO + "\n        cluster: team", options=options, quantity=quantity,
        value=value, closed="ge", open="gt",
    )  # fmt: skip
    root = study_project(tmp_path / "p", STUDY, text)
    assert main(["--project", str(root), "compile"]) == 0
    records = [
        {"item": f"p{i}", "arm": arm, "score": v, "correct": True, "team": f"{arm}{i // 2 + 1}"}
        for arm, values in (("a", a), ("b", b))
        for i, v in enumerate(values)
    ]
    doc = score_records(root, STUDY, records)
    (row,) = doc["analyses"]
    return doc["verdicts"]["closed"], doc["verdicts"]["open"], row


def _team_means(values) -> list[Fraction]:
    xs = [Fraction(str(v)) for v in values]
    return [(xs[i] + xs[i + 1]) / 2 for i in range(0, len(xs), 2)]


CLUSTER_T = "{level: 0.95, alternative: two-sided, margin: 0}"


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("cluster-summary-t", "{weighting: equal, level: 0.95, alternative: two-sided, margin: 0}"),
        ("cluster-summary-welch-t", CLUSTER_T),
    ],
)
def test_cluster_summary_t_of_tenths_exactly_1(tmp_path, method, options):
    """Teams' means 7/20, 11/20, 3/5 against 9/20, 1/2, 3/20: a difference of 2/15 and team
    variances of 7/300 and 7/100, so the pooled and Welch's variance of the difference are
    both (7/300 + 7/100)/3 = 4/225 = (2/15)²: t = 1 exactly; scipy's t tests of the team
    means' floats give 1.0000000000000002 and the method's float is 0.9999999999999998
    (`ge 1` would fail on it)."""
    a = [0.4, 0.3, 0.2, 0.9, 0.7, 0.5]
    b = [0.3, 0.6, 0.4, 0.6, 0.1, 0.2]
    ma, mb = _team_means(a), _team_means(b)
    diff = sum(ma) / 3 - sum(mb) / 3
    var = _ss(ma) / 6 + _ss(mb) / 6  # pooled (equal counts) and Welch's alike
    assert diff == Fraction(2, 15) and diff * diff / var == 1
    equal = method == "cluster-summary-t"
    fa, fb = ([float(m) for m in ms] for ms in (ma, mb))
    assert stats.ttest_ind(fa, fb, equal_var=equal).statistic != 1
    closed, opened, row = _cluster_verdicts(
        tmp_path, a, b, method=method, options=options, quantity="statistic", value=1
    )
    assert (closed, opened) == ("supported", "not-supported")
    assert row["statistic"] < 1 and row["exact"]["statistic"] == "1/1"


def test_cluster_summary_welch_df_of_tenths_exactly_16_fifths(tmp_path):
    """Teams' means 1/2, 7/20, 4/5 against 1/2, 11/20, 3/4: Welch–Satterthwaite's df of the
    team means is 16/5 exactly; scipy's ttest_ind(equal_var=False) of the team means gives
    3.1999999999999993 (`ge 3.2` would fail)."""
    a = [0.8, 0.2, 0.6, 0.1, 0.7, 0.9]
    b = [0.7, 0.3, 0.8, 0.3, 0.7, 0.8]
    ma, mb = _team_means(a), _team_means(b)
    va, vb = _ss(ma) / 6, _ss(mb) / 6
    assert (va + vb) ** 2 / (va * va / 2 + vb * vb / 2) == Fraction(16, 5)
    fa, fb = ([float(m) for m in ms] for ms in (ma, mb))
    assert stats.ttest_ind(fa, fb, equal_var=False).df < 3.2
    closed, opened, row = _cluster_verdicts(
        tmp_path, a, b, method="cluster-summary-welch-t", options=CLUSTER_T,
        quantity="df", value=3.2,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["df"] < 3.2 and row["exact"]["df"] == "16/5"


def test_cluster_robust_t_of_tenths_exactly_5_halves(tmp_path):
    """0.8, 0.6 | 0.6, 0.7 | 0.9, 0.5 against 0.4, 0.8 | 0.6, 0.5 | 0.2, 0.5 (teams of two):
    the difference of means is 11/60; each team's residuals sum to u_g, and the sandwich
    variance Σ_g (u_a,g/6 − u_b,g/6)² with CR1's factor 6/5 · 11/10 is 121/22500 =
    (11/150)²: t = 5/2 exactly; statsmodels' cluster-robust OLS gives 2.5000000000000018 and
    the method's float is 2.4999999999999973 (`ge 2.5` would fail on it)."""
    import statsmodels.api as sm

    a = [0.8, 0.6, 0.6, 0.7, 0.9, 0.5]
    b = [0.4, 0.8, 0.6, 0.5, 0.2, 0.5]
    xa, xb = [Fraction(str(v)) for v in a], [Fraction(str(v)) for v in b]
    mean_a, mean_b = sum(xa) / 6, sum(xb) / 6
    u = [
        (xa[i] + xa[i + 1] - 2 * mean_a) / 6 if arm == "a" else -(xb[i] + xb[i + 1] - 2 * mean_b) / 6
        for arm in ("a", "b")
        for i in range(0, 6, 2)
    ]  # fmt: skip
    var = sum(v * v for v in u) * Fraction(6, 5) * Fraction(11, 10)
    assert mean_a - mean_b == Fraction(11, 60) and var == Fraction(121, 22500)
    x = np.array(a + b)
    fit = sm.OLS(x, sm.add_constant(np.r_[np.ones(6), np.zeros(6)])).fit(
        cov_type="cluster", cov_kwds={"groups": np.repeat(np.arange(6), 2)}, use_t=True
    )
    assert float(fit.tvalues[1]) != 2.5
    closed, opened, row = _cluster_verdicts(
        tmp_path, a, b, method="cluster-robust-mean",
        options="{correction: CR1, reference: t, level: 0.95, alternative: two-sided, margin: 0}",
        quantity="statistic", value=2.5,
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["statistic"] < 2.5 and row["exact"]["statistic"] == "5/2"


# Methods whose SE (or z) is the root of a fraction of the counts: (method, args, options,
# quantity, the fraction's key in Result.exact).
ROOTS = [
    ("risk-ratio-katz", (1, 3, 1, 3), {"level": 0.95}, "se", "se_squared"),
    ("odds-ratio-woolf", (2, 7, 3, 5), {"level": 0.95, "haldane": "never"}, "se", "se_squared"),
    ("wald-difference", (8, 13, 1, 12), {"level": 0.95}, "se", "se_squared"),
    ("agresti-caffo", (8, 13, 1, 12), {"level": 0.95}, "se", "se_squared"),
    (
        "noninferiority-ratio-proportions",
        (8, 13, 5, 12),
        {"margin": 0.8, "alternative": "greater", "level": 0.975},
        "se",
        "se_squared",
    ),
    (
        "mcnemar-asymptotic",
        (5, 8, 2, 6),
        {"alternative": "two-sided", "correction": "none"},
        "statistic",
        "statistic_squared",
    ),
    (
        "linear-contrast-proportions",
        ([5, 9, 14], [20, 21, 22]),
        {"coefficients": [1, -2, 1], "alternative": "two-sided", "level": 0.95, "margin": 0},
        "se",
        "se_squared",
    ),
    (
        "cochran-armitage",
        ([5, 9, 14], [20, 21, 22]),
        {"scores": [0, 1, 2], "alternative": "greater", "variance": "n"},
        "se",
        "se_squared",
    ),
    (
        "mantel-haenszel-risk-difference",
        ([10, 12], [30, 31], [6, 7], [29, 33]),
        {"alternative": "two-sided", "level": 0.95, "margin": 0},
        "se",
        "se_squared",
    ),
    (
        "cochran-mantel-haenszel",
        ([10, 12], [30, 31], [6, 7], [29, 33]),
        {"correction": False, "alternative": "two-sided", "level": 0.95},
        "se",
        "se_squared",
    ),
    (
        "cohens-kappa",
        (np.array([1, 2, 2, 1, 3, 2, 1]), np.array([1, 2, 1, 1, 3, 3, 1])),
        {"categories": [1, 2, 3], "weights": "none", "level": 0.95, "alternative": "two-sided"},
        "se",
        "se_squared",
    ),
    (
        "gwet-ac1",
        (np.array([1, 2, 2, 1, 3, 2, 1]), np.array([1, 2, 1, 1, 3, 3, 1])),
        {"categories": [1, 2, 3], "level": 0.95},
        "se",
        "se_squared",
    ),
    (
        "pass-at-k-t",
        (np.array([4, 4, 4, 4]), np.array([1, 3, 0, 2])),
        {"k": 2, "alternative": "two-sided", "level": 0.95, "margin": 0},
        "se",
        "se_squared",
    ),
    (
        "auroc",
        (np.array([1, 0, 1, 1, 0, 0, 1]), np.array([0.9, 0.2, 0.7, 0.6, 0.3, 0.8, 0.4])),
        {"se_method": "delong", "level": 0.95},
        "se",
        "se_squared",
    ),
    (
        "auroc",
        (np.array([1, 0, 1, 1, 0, 0, 1]), np.array([0.9, 0.2, 0.7, 0.6, 0.3, 0.8, 0.4])),
        {"se_method": "hanley-mcneil", "level": 0.95},
        "se",
        "se_squared",
    ),
    (
        "wilcoxon-signed-rank",
        (np.array([0.1, 0.4, 0.1, 0.7, 0.3, 0.5]), np.array([0.2, 0.2, 0.6, 0.3, 0.9, 0.1])),
        {
            "alternative": "two-sided",
            "margin": 0,
            "zero_method": "wilcox",
            "method": "normal",
            "correction": "none",
        },
        "se",
        "se_squared",
    ),
]


@pytest.mark.parametrize(("method", "args", "options", "quantity", "key"), ROOTS)
def test_a_root_of_counts_is_decided_against_its_own_float(method, args, options, quantity, key):
    """Each figure here is the root of a fraction that is not a square: irrational, so never
    equal to a decimal. Registered at the shortest decimal of its float, a float comparison
    finds it equal (`ge` and `le` both hold); decided exactly, it lies on one side, the side
    the fraction says (v > t² or v < t², t the threshold), and exactly one of them holds."""
    from types import SimpleNamespace

    from prereg.decide.analyses import _as_contrast
    from prereg.stats.catalogue import entries
    from prereg.stats.compare import compare

    entry = entries()[method]
    result = entry.load()(*args, **options)
    v = result.exact[key]
    assert math.isqrt(v.numerator) ** 2 != v.numerator or math.isqrt(v.denominator) ** 2 != (
        v.denominator
    )  # not a square of fractions
    value = getattr(result, quantity)
    t = Fraction(repr(value))
    item = SimpleNamespace(id="fig", method=method, options=options)
    figure = (_as_contrast(item, entry, result, args).certified or {}).get(quantity, value)
    above = v > t * t if value > 0 else v < t * t
    assert (compare(figure, "ge", value), compare(figure, "le", value)) == (above, not above)


def _ln(x: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        return (Decimal(x.numerator) / Decimal(x.denominator)).ln()


def _g_oracle(k1, n1, k2, n2) -> Decimal:
    n, cols = n1 + n2, (k1 + k2, n1 + n2 - k1 - k2)
    cells = ((k1, n1, cols[0]), (n1 - k1, n1, cols[1]), (k2, n2, cols[0]), (n2 - k2, n2, cols[1]))
    with localcontext() as ctx:
        ctx.prec = 60
        return 2 * sum(o * _ln(Fraction(o * n, r * c)) for o, r, c in cells if o)


def _log_loss_oracle(y, q) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        total = sum(
            _ln(Fraction(str(p)) if t else 1 - Fraction(str(p))) for t, p in zip(y, q, strict=True)
        )
        return -total / len(y)


def _ratio_z_oracle(k1, n1, k2, n2, margin: str) -> Decimal:
    ratio = Fraction(k1 * n2, n1 * k2) / Fraction(margin)
    v = Fraction(n1 - k1, k1 * n1) + Fraction(n2 - k2, k2 * n2)
    with localcontext() as ctx:
        ctx.prec = 60
        return _ln(ratio) / (Decimal(v.numerator) / Decimal(v.denominator)).sqrt()


def _log_welch_t_oracle(x, y, margin: str) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        parts = []
        for sample in (x, y):
            logs = [_ln(Fraction(str(v))) for v in sample]
            m = sum(logs) / len(logs)
            parts.append((m, sum((lg - m) ** 2 for lg in logs) / (len(logs) - 1) / len(logs)))
        (ma, va), (mb, vb) = parts
        return (ma - mb - _ln(Fraction(margin))) / (va + vb).sqrt()


def _tango_z_oracle(n11, n10, n01, n00, margin: str) -> Decimal:
    """Tango's z to 60 digits: p̃01 the larger root of 2n·q² + B·q + C (Tango 1998)."""
    n, d = n11 + n10 + n01 + n00, Decimal(margin)
    with localcontext() as ctx:
        ctx.prec = 60
        big_b = -n10 - n01 + (2 * n - n10 + n01) * d
        q = (-big_b + (big_b * big_b + 8 * n * n01 * d * (1 - d)).sqrt()) / (4 * n)
        return (n10 - n01 - n * d) / (n * (2 * q + d * (1 - d))).sqrt()


def _fisher_z_oracle(x, y, null: str) -> Decimal:
    """Pearson's r of the decimals, its Fisher z against ``null`` over se = 1/√(n − 3), to 60
    digits (atanh r = ln((1 + r)/(1 − r))/2)."""
    xs, ys = [Fraction(str(v)) for v in x], [Fraction(str(v)) for v in y]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    sxx, syy = sum((a - mx) ** 2 for a in xs), sum((b - my) ** 2 for b in ys)
    with localcontext() as ctx:
        ctx.prec = 60
        r2 = sxy * sxy / (sxx * syy)
        r = (Decimal(r2.numerator) / Decimal(r2.denominator)).sqrt() * (1 if sxy > 0 else -1)
        rho = Decimal(null)
        z = ((1 + r) / (1 - r)).ln() / 2 - ((1 + rho) / (1 - rho)).ln() / 2
        return z * Decimal(n - 3).sqrt()


def _conditional_or_oracle(k1, n1, k2, n2) -> Decimal:
    """The conditional maximum-likelihood odds ratio to 60 digits: the positive root of
    Σ (k − k1)·C(n1, k)·C(n2, t − k)·ψ^k, by bisection on a log scale."""
    t = k1 + k2
    ks = range(max(0, t - n2), min(n1, t) + 1)
    with localcontext() as ctx:
        ctx.prec = 60

        def f(psi: Decimal) -> Decimal:
            return sum((k - k1) * math.comb(n1, k) * math.comb(n2, t - k) * psi**k for k in ks)

        lo, hi = Decimal("1e-30"), Decimal("1e30")
        for _ in range(400):
            mid = (lo * hi).sqrt()
            lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        return (lo * hi).sqrt()


Q = [0.9, 0.2, 0.7, 0.6, 0.3, 0.8]
Y01 = [1, 0, 1, 1, 0, 0]
GX, GY = [1.2, 0.8, 2.5, 1.1], [0.9, 1.4, 0.7]
BALLS = [
    ("g-test-2x2", (8, 13, 1, 13), {}, "statistic", _g_oracle(8, 13, 1, 13)),
    ("g-test-2x2", (3, 17, 9, 14), {}, "statistic", _g_oracle(3, 17, 9, 14)),
    (
        "log-loss",
        (np.array(Y01), np.array(Q)),
        {"clip": None},
        "estimate",
        _log_loss_oracle(Y01, Q),
    ),
    (
        "noninferiority-ratio-proportions",
        (8, 13, 5, 12),
        {"margin": 0.8, "alternative": "greater", "level": 0.975},
        "statistic",
        _ratio_z_oracle(8, 13, 5, 12, "0.8"),
    ),
    (
        "tango-test",
        (5, 8, 2, 6),
        {"alternative": "greater", "margin": -0.1},
        "statistic",
        _tango_z_oracle(5, 8, 2, 6, "-0.1"),
    ),
    (
        "pearson-correlation",
        (np.array(Q), np.array([0.8, 0.1, 0.9, 0.4, 0.4, 0.6])),
        {"alternative": "greater", "null_value": 0.3, "level": 0.95},
        "statistic",
        _fisher_z_oracle(Q, [0.8, 0.1, 0.9, 0.4, 0.4, 0.6], "0.3"),
    ),
    (
        "fisher-exact",
        (23, 61, 9, 47),
        {"alternative": "two-sided"},
        "estimate",
        _conditional_or_oracle(23, 61, 9, 47),
    ),
    (
        "ratio-of-geometric-means",
        (np.array(GX), np.array(GY)),
        {"margin": 1.1, "alternative": "two-sided", "level": 0.95},
        "statistic",
        _log_welch_t_oracle(GX, GY, "1.1"),
    ),
]


@pytest.mark.parametrize(("method", "args", "options", "quantity", "oracle"), BALLS)
def test_a_log_figure_is_decided_against_its_own_float(method, args, options, quantity, oracle):
    """G, a mean log loss, the z of a log ratio of proportions, Tango's z, a correlation's
    Fisher z, a conditional odds ratio (scipy's float is off by up to about 1e-12, relative)
    and Welch's t on logs are irrational: registered at the shortest decimal of their float, a float comparison finds
    the figure equal to it (`ge` and `le` both hold); decided by balls, it lies on the side a
    60-digit decimal oracle (the decimal module's ln) puts it, and exactly one holds."""
    from types import SimpleNamespace

    from prereg.decide.analyses import _as_contrast
    from prereg.stats.catalogue import entries
    from prereg.stats.compare import compare

    entry = entries()[method]
    result = entry.load()(*args, **options)
    value = getattr(result, quantity)
    t = Decimal(repr(value))
    assert oracle != t
    item = SimpleNamespace(id="fig", method=method, options=options)
    figure = (_as_contrast(item, entry, result, args).certified or {}).get(quantity, value)
    above = oracle > t
    assert (compare(figure, "ge", value), compare(figure, "le", value)) == (above, not above)


def _restricted_z_oracle(k1, n1, k2, n2, margin: str, *, mn: bool = False) -> Decimal:
    """The Farrington–Manning (or Miettinen–Nurminen) z, to 60 digits: the restricted p̃1 by
    bisection of the score of the likelihood under p1 − p2 = margin, on the decimals."""
    d = Decimal(margin)
    with localcontext() as ctx:
        ctx.prec = 60

        def score(t1: Decimal) -> Decimal:  # d/dp̃1 of the log likelihood, p̃2 = p̃1 − d
            t2 = t1 - d
            return k1 / t1 - (n1 - k1) / (1 - t1) + k2 / t2 - (n2 - k2) / (1 - t2)

        lo, hi = max(Decimal(0), d), min(Decimal(1), 1 + d)
        for _ in range(220):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if score(mid) > 0 else (lo, mid)
        t1 = (lo + hi) / 2
        t2 = t1 - d
        var = t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2
        if mn:
            var *= Decimal(n1 + n2) / (n1 + n2 - 1)
        return (Decimal(k1) / n1 - Decimal(k2) / n2 - d) / var.sqrt()


RESTRICTED = [
    ("farrington-manning", {"alternative": "greater", "margin": -0.1}, False, "-0.1"),
    ("miettinen-nurminen-test", {"alternative": "greater", "margin": -0.1}, True, "-0.1"),
    (
        "noninferiority-proportions",
        {"margin": -0.1, "alternative": "greater", "se": "farrington-manning", "level": 0.975},
        False,
        "-0.1",
    ),
    # the TOST reports the side of the larger P, here the upper margin's (d = 17/40 − 19/45)
    (
        "tost-proportions",
        {"lower": -0.1, "upper": 0.1, "se": "farrington-manning"},
        False,
        "0.1",
    ),
]


@pytest.mark.parametrize(("method", "options", "mn", "margin"), RESTRICTED)
def test_a_restricted_score_z_is_decided_against_its_own_float(method, options, mn, margin):
    """17 of 40 against 19 of 45 at a margin of ±0.1: the restricted proportions are a root of a
    cubic and z is irrational; registered at the shortest decimal of its float, a float
    comparison finds z equal to it; decided by balls of the isolated root, it lies on the
    side a 60-digit bisection of the score puts it, and exactly one of `ge` and `le` holds."""
    from types import SimpleNamespace

    from prereg.decide.analyses import _as_contrast
    from prereg.stats.catalogue import entries
    from prereg.stats.compare import compare

    args = (17, 40, 19, 45)
    entry = entries()[method]
    result = entry.load()(*args, **options)
    oracle = _restricted_z_oracle(*args, margin, mn=mn)
    value = result.statistic
    assert abs(Decimal(repr(value)) - oracle) < Decimal("1e-14") and oracle != Decimal(repr(value))
    item = SimpleNamespace(id="fig", method=method, options=options)
    figure = (_as_contrast(item, entry, result, args).certified or {}).get("statistic", value)
    above = oracle > Decimal(repr(value))
    assert (compare(figure, "ge", value), compare(figure, "le", value)) == (above, not above)


def test_equivalence_interval_paired_se_exactly_a_tenth(tmp_path):
    """Pairs 0.2 − 0.1, 0.3 − 0.2, 0.5 − 0.1: differences 1/10, 1/10, 2/5 as decimals, whose
    variance of the mean is (3/50)/(3·2) = 1/100: se = 1/10 exactly; the method's float is
    0.10000000000000002 (`le 0.1` would fail)."""
    d = [Fraction(1, 10), Fraction(1, 10), Fraction(2, 5)]
    assert _ss(d) / (3 * 2) == Fraction(1, 100)
    closed, opened, row = _verdicts(
        tmp_path, [0.2, 0.3, 0.5], [0.1, 0.2, 0.1], method="equivalence-interval-paired",
        inputs=PAIRED, options="{alpha: 0.05}", quantity="se", value=0.1, ops=("le", "lt"),
    )  # fmt: skip
    assert (closed, opened) == ("supported", "not-supported")
    assert row["se"] > 0.1 and row["exact"]["se"] == "1/10"
