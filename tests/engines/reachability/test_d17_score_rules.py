"""d17 decision rules on hand-built respondents: each verdict flips exactly at its threshold.

The rules are the compiled ones (generated/d17_multifact/rules.py); the expected side of each
threshold is computed independently with statsmodels (Wilson, Newcombe, pooled z, Holm).
"""

from __future__ import annotations

import d17_score_helpers as h
import pytest
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)

from prereg.errors import UserError
from prereg.rules import Contrast
from tests.oracles import multipletests

TEST_EQ = {"split": "test", "layout": "equalized"}
HYPS = ("h1", "h2", "h3", "h3a", "h4", "replication")


@pytest.fixture(scope="module")
def config():
    return h.study()[1].config


@pytest.fixture
def resp(config):
    return h.Respondent(h.table(config))


def test_baseline_verdicts(resp):
    s = h.run(resp)
    assert not s.gated and all(g["passed"] for g in s.gates)
    assert s.verdicts == {
        "h1": "not-supported",
        "h2": "not-supported",
        "h3": "not-supported",
        "h3a": "mixed",  # encodings equal, but relay-off is not above them: not "general"
        "h4": "not-supported",
        "replication": "not-supported",
    }
    assert s.decision["outcome"] == "HOLD"


def test_coverage_gate_flips_at_095(resp):
    cell = {"split": "test", "pool": "pool-a", "hops": "1", "outcome": "relay-off"}
    resp.unobserve(2, **cell)  # 38 / 40 = 0.95
    s = h.run(resp)
    assert not s.gated
    assert s.verdicts["replication"] == "not-supported"
    resp.unobserve(3, **cell)  # 37 / 40 = 0.925
    s = h.run(resp)
    assert s.gated
    assert s.verdicts == {k: "insufficient" for k in HYPS}
    (gate,) = s.gates
    assert gate["failures"] == [{"cell": "tst-pool-a_h1_relay-off_equalized", "figure": 0.925}]


def test_coverage_gate_ignores_development_cells(resp):
    resp.unobserve(2, split="tuning")
    s = h.run(resp)
    assert not s.gated
    cell = next(c for c in s.cells if c["cell"] == "dev-pool-a_h1_yes_equalized")
    assert cell["observed"] == 0 and cell["metrics"]["coverage"] == 0.0


def test_replication_flips_at_wilson_upper_050(resp):
    faithful_c = {"split": "test", "layout": "d17-faithful", "pool": "pool-c"}
    seen = set()
    for k in range(0, 16):
        resp.set_correct(k, outcome="missing-contrastive", **faithful_c)
        upper = proportion_confint(k, 30, alpha=0.05, method="wilson")[1]
        expected = "supported" if round(upper, 4) <= 0.50 else "not-supported"
        assert h.run(resp).verdicts["replication"] == expected, k
        seen.add(expected)
    assert seen == {"supported", "not-supported"}
    resp.set_correct(9, outcome="missing-contrastive", **faithful_c)
    assert h.run(resp).verdicts["replication"] == "supported"  # upper 0.4788
    resp.set_correct(10, outcome="missing-contrastive", **faithful_c)
    assert h.run(resp).verdicts["replication"] == "not-supported"  # upper 0.5122


def test_h1_flips_at_difference_010(resp):
    mc = {**TEST_EQ, "outcome": "missing-contrastive"}
    resp.set_correct(0, pool=["pool-a", "pool-c"], **mc)
    for k, expected in ((22, "supported"), (21, "not-supported")):
        resp.set_correct(k, pool="pool-b", **mc)  # difference k/220 at both hop levels
        s = h.run(resp)
        assert s.verdicts["h1"] == expected, k
        row = next(c for c in s.contrasts if c["id"] == "h1-missing-contrastive-h1-pool-a-pool-b")
        # Holm over the 21 registered tests, recomputed independently: far below 0.05 here.
        ps = []
        for c in s.contrasts:
            if c["family"] == "h1-pool-pairs":
                a, b = c["a"], c["b"]
                if a["k"] + b["k"] in (0, a["n"] + b["n"]):
                    ps.append(1.0)
                else:
                    ps.append(proportions_ztest([a["k"], b["k"]], [a["n"], b["n"]])[1])
        assert len(ps) == 21
        adj = multipletests(ps, method="holm")[1]
        ids = [c["id"] for c in s.contrasts if c["family"] == "h1-pool-pairs"]
        assert row["adjustedP"] == pytest.approx(adj[ids.index(row["id"])], rel=1e-3)
        assert row["adjustedP"] < 0.05
        assert row["estimate"] == pytest.approx(-k / 220, abs=1e-4)


def test_h1_needs_every_hop_level(resp):
    mc = {**TEST_EQ, "outcome": "missing-contrastive"}
    resp.set_correct(0, pool=["pool-a", "pool-c"], **mc)
    resp.set_correct(30, pool="pool-b", hops="1", **mc)
    resp.set_correct(0, pool="pool-b", hops="3", **mc)
    assert h.run(resp).verdicts["h1"] == "not-supported"


def test_h4_flips_at_holm_p_005(resp):
    eq_last = {**TEST_EQ, "hops": "1", "outcome": "missing-contrastive", "position": "last"}
    resp.set_correct(99, **eq_last)  # 99 / 110 = 0.9 in every pool
    faithful = {"split": "test", "layout": "d17-faithful", "outcome": "missing-contrastive"}
    resp.set_correct(27, **faithful)  # 27 / 30 = 0.9: P = 1 in every pool
    seen = set()
    for k in range(10, 28):
        resp.set_correct(k, pool="pool-a", **faithful)
        p = proportions_ztest([k, 99], [30, 110])[1] if k != 27 else 1.0
        adj = multipletests([p, 1.0, 1.0], method="holm")[1][0]
        expected = "supported" if adj < 0.05 else "not-supported"
        s = h.run(resp)
        assert s.verdicts["h4"] == expected, k
        seen.add(expected)
        row = next(c for c in s.contrasts if c["id"] == "h4-pool-a")
        assert (row["a"]["n"], row["b"]["n"]) == (30, 110)
    assert seen == {"supported", "not-supported"}


def test_h2_flips_at_newcombe_upper_minus_005_in_two_of_three_pools(resp):
    yes = {**TEST_EQ, "outcome": "yes"}
    resp.set_correct(99, hops="1", **yes)
    resp.set_correct(70, pool="pool-a", hops="3", **yes)  # clearly below -0.05
    seen = set()
    for k in range(80, 100):
        resp.set_correct(k, pool="pool-b", hops="3", **yes)
        upper = confint_proportions_2indep(k, 110, 99, 110, method="newcomb", compare="diff")[1]
        expected = "supported" if upper < -0.05 else "not-supported"
        assert h.run(resp).verdicts["h2"] == expected, k
        seen.add(expected)
    assert seen == {"supported", "not-supported"}
    # one pool is not enough; three are
    resp.set_correct(99, pool="pool-b", hops="3", **yes)
    assert h.run(resp).verdicts["h2"] == "not-supported"
    resp.set_correct(70, pool=["pool-b", "pool-c"], hops="3", **yes)
    assert h.run(resp).verdicts["h2"] == "supported"


def test_h2_counts_only_first_and_last_failures(resp):
    mn = {**TEST_EQ, "outcome": "missing-negation"}
    resp.set_correct(220, **mn)
    # every interior three-hop row wrong: the restricted arms are unaffected
    for idx in resp.cells("interior", hops="3", pool=["pool-a", "pool-b"], **mn):
        resp.correct[idx] = False
    s = h.run(resp)
    assert s.verdicts["h2"] == "not-supported"
    row = next(c for c in s.contrasts if c["id"] == "h2-missing-negation-pool-a")
    assert (row["a"]["k"], row["a"]["n"]) == (110, 110)  # h3: first and last only
    assert (row["b"]["k"], row["b"]["n"]) == (220, 220)


def test_h3_flips_at_said_yes_050(resp):
    resp.set_correct(40, outcome="relay-off", **TEST_EQ)
    mc = {**TEST_EQ, "outcome": "missing-contrastive"}
    resp.set_correct(100, **mc)  # 200 / 440 correct: said yes 0.545, lower bound far above 0.10
    assert h.run(resp).verdicts["h3"] == "supported"
    resp.set_correct(110, pool="pool-c", hops="1", **mc)
    resp.set_correct(110, pool="pool-c", hops="3", **mc)  # said yes 220 / 440 = 0.5: not above
    assert h.run(resp).verdicts["h3"] == "not-supported"
    resp.set_correct(109, pool="pool-c", hops="3", **mc)  # 221 / 440
    s = h.run(resp)
    assert s.verdicts["h3"] == "supported"
    est = next(e for e in s.estimates if e["id"] == "h3-said-yes-pool-c-missing-contrastive")
    assert (est["k"], est["n"]) == (221, 440)


def test_h3a_verdicts_and_the_015_threshold(resp):
    resp.set_correct(40, outcome="relay-off", **TEST_EQ)
    assert h.run(resp).verdicts["h3a"] == "general"
    mc = {**TEST_EQ, "outcome": "missing-contrastive"}
    # mn, mu at 198 / 220 = 0.9; mc at 165 / 220 = 0.75 in two pools: difference exactly -0.15
    resp.set_correct(165, pool=["pool-a", "pool-b"], **mc)
    assert h.run(resp).verdicts["h3a"] == "contrastive-specific"
    resp.set_correct(166, pool="pool-b", **mc)  # -0.1455 in pool-b: one specific pool
    assert h.run(resp).verdicts["h3a"] == "mixed"


def test_contrast_figures_match_statsmodels(resp):
    resp.set_correct(60, **TEST_EQ, outcome="missing-contrastive", pool="pool-c")
    s = h.run(resp)
    row = next(c for c in s.contrasts if c["id"] == "h1-missing-contrastive-h1-pool-a-pool-c")
    lo, hi = confint_proportions_2indep(198, 220, 60, 220, method="newcomb", compare="diff")
    assert row["lower"] == pytest.approx(lo, abs=5e-5)
    assert row["upper"] == pytest.approx(hi, abs=5e-5)
    assert row["p"] == pytest.approx(proportions_ztest([198, 60], [220, 220])[1], rel=1e-3)
    cell = next(c for c in s.cells if c["cell"] == "tst-pool-c_h1_missing-contrastive_equalized")
    wl, wu = proportion_confint(60, 220, alpha=0.05, method="wilson")
    acc = cell["metrics"]["raw-accuracy"]
    # SCORE.json keeps full precision
    assert acc["correct"] == 60
    assert (acc["lower"], acc["upper"]) == pytest.approx((wl, wu), rel=1e-12)
    assert cell["metrics"]["said-yes-rate"] == pytest.approx(160 / 220, rel=1e-12)
    assert cell["byPosition"]["first"]["rows"] == 110


def test_unknown_selection_attribute_is_refused(resp):
    rules = h.study()[2]
    bad = Contrast(
        "x", "h1", "raw-accuracy", {"colour": ("red",)}, {}, "newcombe-hybrid", 0.95, "none"
    )

    class Rules:
        ESTIMATES = ()
        CONTRASTS = (bad,)
        FAMILIES = rules.FAMILIES
        GATES = rules.GATES
        HYPOTHESES = {}

    with pytest.raises(UserError, match="colour"):
        h.run(resp, rules=Rules)


def test_calibrated_figures_and_unreliable_flag(resp, config):
    # Calibrator maps everything to 5/6: calibrated answers all yes, confidence 5/6.
    from prereg.engines.reachability import scoring

    blocks = [{"lower": 0.0, "yes": 4, "n": 4}]
    s = scoring.score(config, h.study()[2], resp.t, resp.p_yes(), blocks)
    mc = next(c for c in s.cells if c["cell"] == "tst-pool-a_h1_missing-contrastive_equalized")
    assert mc["metrics"]["calibrated-accuracy"]["correct"] == 0
    assert mc["metrics"]["mean-confidence"] == pytest.approx(5 / 6, rel=1e-12)
    assert mc["metrics"]["decile-ece"] == pytest.approx(5 / 6, rel=1e-12)  # one bin: |5/6 - 0|
    assert mc["calibrationUnreliable"] is True
    yes = next(c for c in s.cells if c["cell"] == "tst-pool-a_h1_yes_equalized")
    assert yes["metrics"]["calibrated-accuracy"]["correct"] == 110
    assert yes["calibrationUnreliable"] is False
    assert yes["metrics"]["decile-ece"] == pytest.approx(1 - 5 / 6, rel=1e-12)


@pytest.mark.parametrize(("correct", "unreliable"), [(154, False), (153, True)])
def test_unreliable_flag_at_a_gap_of_exactly_the_registered_tenth(
    resp, config, correct, unreliable
):
    """The study page: calibration-unreliable iff mean confidence − calibrated accuracy > 0.10
    and the calibrated Wilson upper bound < mean confidence. Every calibrated P(yes) here is
    8/10 or 2/10 (blocks yes 7 of 8 and 1 of 8), so every confidence is 8/10; with 154 of 220
    rows right the gap is 8/10 − 154/220 = 8/10 − 7/10, exactly 1/10: not above it, so not
    flagged (in floats 0.8 − 0.7 is 0.10000000000000009). With 153 right the gap is
    8/10 − 153/220 = 23/220 > 1/10, and the Wilson upper bound of 153/220 (statsmodels) is below
    8/10: flagged."""
    from prereg.engines.reachability import scoring

    blocks = [{"lower": 0.0, "yes": 1, "n": 8}, {"lower": 0.5, "yes": 7, "n": 8}]
    resp.set_correct(correct, pool="pool-a", hops="1", outcome="missing-contrastive", layout="equalized", split="test")  # fmt: skip
    s = scoring.score(config, h.study()[2], resp.t, resp.p_yes(), blocks)
    mc = next(c for c in s.cells if c["cell"] == "tst-pool-a_h1_missing-contrastive_equalized")
    assert mc["metrics"]["calibrated-accuracy"]["correct"] == correct
    assert mc["metrics"]["mean-confidence"] == pytest.approx(0.8, rel=1e-12)
    _, upper = proportion_confint(correct, 220, alpha=0.05, method="wilson")
    assert upper < 0.8  # the second condition holds in both cases: the gap decides
    assert mc["calibrationUnreliable"] is unreliable
