"""Exact tests whose P is a fraction: Fisher's exact test, McNemar's exact and mid-P tests
report P in ``exact['p']`` (sums of binomial coefficients in integers) so that a P exactly on
a registered threshold is decided as exact arithmetic decides it: Fisher's one-sided P of the
table new 3/3 against base 0/3 is C(3,3)·C(3,0)/C(6,3) = 1/20 exactly, so ``p le 0.05`` holds
and ``p lt 0.05`` does not (the float scipy returns, 0.05000000000000001 in some versions of
the sum, could decide either). Oracles: scipy's hypergeometric and binomial distributions and
statsmodels' McNemar test, to 1e-12, and the hand sums written here."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.stats.paired import mcnemar_exact, mcnemar_mid_p
from prereg.stats.two_proportions import fisher_exact

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "exact_p"


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def test_fisher_one_sided_p_on_one_in_twenty_is_exact():
    r = fisher_exact(3, 3, 0, 3, alternative="greater")
    assert r.exact["p"] == Fraction(1, 20) and r.p == 0.05
    assert fisher_exact(0, 3, 3, 3, alternative="less").exact["p"] == Fraction(1, 20)
    # two-sided: the tables as extreme as (3, 0) are (3, 0) and (0, 3): 2/20
    assert fisher_exact(3, 3, 0, 3, alternative="two-sided").exact["p"] == Fraction(1, 10)


def test_fisher_p_matches_scipy_on_random_tables():
    from scipy.stats import fisher_exact as scipy_fisher
    from scipy.stats import hypergeom

    rng = np.random.default_rng(4)
    for _ in range(300):
        n1, n2 = (int(x) for x in rng.integers(1, 60, size=2))
        k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        for alt in ("greater", "less", "two-sided"):
            r = fisher_exact(k1, n1, k2, n2, alternative=alt)
            want = scipy_fisher([[k1, n1 - k1], [k2, n2 - k2]], alternative=alt).pvalue
            assert close(r.p, min(1.0, want)), (k1, n1, k2, n2, alt)
            assert r.p == float(r.exact["p"])
        # the one-sided tail straight from the hypergeometric law (X = first arm's successes)
        tail = hypergeom.sf(k1 - 1, n1 + n2, k1 + k2, n1)
        assert close(float(fisher_exact(k1, n1, k2, n2, alternative="greater").exact["p"]), tail)


def test_fisher_beyond_the_exact_limit_is_a_float():
    r = fisher_exact(2600, 3000, 2500, 3000, alternative="two-sided")
    assert "p" not in r.exact and 0 <= r.p <= 1


def test_mcnemar_exact_and_mid_p_fractions():
    from statsmodels.stats.contingency_tables import mcnemar

    # hand sums: b = 0, c = 3: two-sided exact 2·(1/8) = 1/4; mid-P 2·(½·1/8) = 1/8
    assert mcnemar_exact(5, 0, 3, 5, alternative="two-sided").exact["p"] == Fraction(1, 4)
    assert mcnemar_mid_p(5, 0, 3, 5, alternative="two-sided").exact["p"] == Fraction(1, 8)
    # greater, b = 4 of m = 4: P(X >= 4) = 1/16; mid-P ½·1/16
    assert mcnemar_exact(1, 4, 0, 1, alternative="greater").exact["p"] == Fraction(1, 16)
    assert mcnemar_mid_p(1, 4, 0, 1, alternative="greater").exact["p"] == Fraction(1, 32)
    assert mcnemar_mid_p(1, 0, 0, 1, alternative="less").exact["p"] == Fraction(1)
    rng = np.random.default_rng(9)
    for _ in range(200):
        b, c = (int(x) for x in rng.integers(0, 80, size=2))
        r = mcnemar_exact(3, b, c, 4, alternative="two-sided")
        want = mcnemar([[3, b], [c, 4]], exact=True).pvalue
        assert close(r.p, want) and r.p == float(r.exact["p"])
        m = b + c
        if m:
            from scipy.stats import binom

            for alt, tail in (
                ("greater", binom.sf(b, m, 0.5) + 0.5 * binom.pmf(b, m, 0.5)),
                ("less", binom.cdf(b - 1, m, 0.5) + 0.5 * binom.pmf(b, m, 0.5)),
            ):
                got = mcnemar_mid_p(3, b, c, 4, alternative=alt)
                assert close(float(got.exact["p"]), tail) and got.p == float(got.exact["p"])
            low = min(b, c)
            two = 2 * (binom.cdf(low - 1, m, 0.5) + 0.5 * binom.pmf(low, m, 0.5))
            assert close(mcnemar_mid_p(3, b, c, 4, alternative="two-sided").p, min(1.0, two))
    from scipy.stats import binom

    big = mcnemar_mid_p(0, 2100, 2000, 0, alternative="less")  # beyond 2,000 pairs: a float
    assert "p" not in big.exact
    assert close(big.p, binom.cdf(2099, 4100, 0.5) + 0.5 * binom.pmf(2100, 4100, 0.5))


def test_a_rule_on_fisher_p_exactly_on_its_threshold(tmp_path):
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(FIXTURES / "fisher-on-threshold.yaml", root / "spec" / "studies")
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "SCORE.json"
    obs = FIXTURES / "fisher-on-1-in-20.jsonl"
    rc = main(["--project", str(root), "fisher-on-threshold", "score", "--observations",
               str(obs), "--out", str(out), "--quiet"])  # fmt: skip
    assert rc == 0
    doc = json.loads(out.read_text())
    # P = 1/20: 'p lt 0.05' fails, 'p le 0.05' holds
    assert doc["verdicts"] == {"h-equiv": "not-supported", "h-le": "supported"}
    assert doc["decision"]["outcome"] == "keep"
    text = out.with_suffix(".md").read_text()
    assert "P ≤ 0.05: met by 1 of 1" in text and "P < 0.05: met by 0 of 1" in text


@pytest.mark.parametrize(
    "method, counts, margin",
    [
        ("tango_test", (10, 3, 5, 2), -0.1),  # (3 - 5)/20 = -1/10
        ("tango_test", (40, 9, 2, 49), 0.07),  # 7/100
        ("farrington_manning", (19, 20, 20, 20), -0.05),  # 19/20 - 1 = -1/20
        ("farrington_manning", (57, 60, 20, 20), -0.05),
        ("wald_difference_test", (33, 100, 30, 100), 0.03),
    ],
)
def test_a_difference_exactly_on_the_written_margin_has_z_zero(method, counts, margin):
    """The margin is the decimal written in the spec (-0.05 is -1/20), so a difference of counts
    exactly on it gives a numerator of exactly 0: z = 0, one-sided P = 1/2, two-sided 1 (with
    the margin's binary value, z was 7.9e-17 and P 0.49999999999999994, so 'p lt 0.5' held)."""
    from prereg.stats import paired, two_proportions

    fn = getattr(paired, method, None) or getattr(two_proportions, method)
    for alt, p in (("greater", 0.5), ("less", 0.5), ("two-sided", 1.0)):
        r = fn(*counts, alternative=alt, margin=margin)
        assert r.statistic == 0.0 and r.p == p, (alt, r.statistic, r.p)
        assert r.estimate == margin


def test_ece_and_brier_analyses_read_probabilities_as_written():
    """196 rows at confidence 0.8, 147 right: ECE |147 − 196·4/5|/196 = 1/20 exactly, as the
    ece metric gives it (over the floats' binary values it was 1/20 + 4.4e-17 and failed
    'le 0.05'); Brier (147·(1/5)² + 49·(4/5)²)/196 = 19/100. Hand sums; sklearn's float too."""
    from sklearn.metrics import brier_score_loss

    from prereg.stats.estimators import brier_score, expected_calibration_error

    y = np.array([1] * 147 + [0] * 49)
    q = np.full(196, 0.8)
    edges = [i / 10 for i in range(11)]
    r = expected_calibration_error(y, q, edges=edges, closed="left")
    assert r.exact["estimate"] == Fraction(1, 20)
    b = brier_score(y, q)
    assert b.exact["estimate"] == Fraction(19, 100)
    assert close(float(b.estimate), brier_score_loss(y, q))
    rng = np.random.default_rng(3)
    q = np.round(rng.random(500), 3)
    y = (rng.random(500) < q).astype(int)
    hand = sum((Fraction(repr(float(v))) - t) ** 2 for v, t in zip(q, y, strict=True)) / 500
    assert brier_score(y, q).exact["estimate"] == hand
    assert close(float(brier_score(y, q).estimate), brier_score_loss(y, q))
