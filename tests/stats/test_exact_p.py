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
