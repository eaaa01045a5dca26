"""diagnose against independent computations: a single contrast's power (normal approximation,
a plain-loop simulation with statsmodels' test), the replication rule's chance of "supported"
(an exact binomial sum with statsmodels' Wilson interval), the family-wise error of Holm
families under a null scenario, and the registered sizing claims of d17."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import binom, norm
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from prereg import runner
from prereg.diagnose import claims as claim_checks
from prereg.diagnose.run import run_task
from prereg.diagnose.summary import summarize
from tests.conftest import ROOT
from tests.diagnose.helpers import D17, condition_index, plan_for

KEY = "h1-missing-contrastive-h1-pool-a-pool-c"  # pool-a vs pool-c, 220 rows each


def summaries(plan) -> dict:
    blocks = runner.run(run_task, plan, plan.tasks())
    out = {}
    for ci, c in enumerate(plan.conditions):
        mine = sorted((b for b in blocks if b.condition == ci), key=lambda b: b.block)
        out[(c.scenario, c.effect)] = summarize(plan, ci, mine)
    return out


def subset(plan, keep, simulations: int):
    """The plan's conditions in ``keep`` only, with ``simulations`` studies each."""
    conds = tuple(c for c in plan.conditions if (c.scenario, c.effect) in keep)
    return replace(plan, conditions=conds, simulations=simulations, key="")


@pytest.fixture(scope="module")
def d17() -> dict:
    plan, found = plan_for(
        ROOT, D17, ["no-difference", "pool-c-contrastive-shift", "replication-accuracy"], 1
    )
    got = {}
    for keep, n in (
        ({("no-difference", None)}, 2000),
        ({("pool-c-contrastive-shift", 0.13)}, 1000),
        ({("replication-accuracy", 0.2), ("replication-accuracy", 0.4)}, 800),
    ):
        got.update(summaries(subset(plan, keep, n)))
    return {"plan": plan, "found": found, "summaries": got}


def normal_power(n1, p1, n2, p2, alpha) -> float:
    """Two-sided pooled z test's power, normal approximation (pooled SE under the null)."""
    d = p1 - p2
    pbar = (n1 * p1 + n2 * p2) / (n1 + n2)
    se0 = math.sqrt(pbar * (1 - pbar) * (1 / n1 + 1 / n2))
    se1 = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    z = norm.ppf(1 - alpha / 2)
    return norm.cdf((abs(d) - z * se0) / se1) + norm.cdf((-abs(d) - z * se0) / se1)


def loop_power(n1, p1, n2, p2, alpha, sims=4000, seed=11) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        k1, k2 = rng.binomial(n1, p1), rng.binomial(n2, p2)
        if k1 + k2 in (0, n1 + n2):
            continue  # the pooled SE is 0: P = 1
        _, p = proportions_ztest([k1, k2], [n1, n2])
        hits += p < alpha
    return hits / sims


def test_single_contrast_power_matches_normal_approximation_and_a_plain_loop(d17):
    plan = d17["plan"]
    power = claim_checks.check_power(
        plan, {"contrast": KEY, "base": 0.5, "difference": 0.13, "alpha": 0.05}
    )
    assert power["details"]["rowsA"] == power["details"]["rowsB"] == 220
    exact = power["figure"]
    assert exact == pytest.approx(normal_power(220, 0.63, 220, 0.5, 0.05), abs=0.01)
    loop = loop_power(220, 0.63, 220, 0.5, 0.05)
    assert abs(exact - loop) < 3 * math.sqrt(exact * (1 - exact) / 4000)
    # diagnose's own simulation: the raw rejection rate of the contrast when pool-c is shifted
    s = d17["summaries"][("pool-c-contrastive-shift", 0.13)]
    row = next(c for c in s["contrasts"] if c["id"] == KEY)
    assert row["truth"] == pytest.approx(-0.13)
    assert abs(row["rejected"]["share"] - exact) < 3 * row["rejected"]["mcSe"] + 1e-9
    # and the minimum detectable difference sits where the exact power crosses 0.8
    mdd = claim_checks.check_detectable(plan, {"contrast": KEY, "base": 0.5, "power": 0.8})
    assert 0.13 < mdd["figure"] < 0.136
    assert mdd["details"]["powerAtFigure"] >= 0.8


def replication_exact(p: float) -> float:
    """P(Wilson 95% upper bound of k/30, rounded half-up to 4 decimals, <= 0.50)."""
    total = 0.0
    for k in range(31):
        _, upper = proportion_confint(k, 30, alpha=0.05, method="wilson")
        if math.floor(upper * 1e4 + 0.5) / 1e4 <= 0.5:
            total += binom.pmf(k, 30, p)
    return total


@pytest.mark.parametrize("accuracy", [0.2, 0.3, 0.4, 0.5])
def test_replication_rule_against_the_exact_binomial_sum(d17, accuracy):
    plan, found = d17["plan"], d17["found"]
    body = {"hypothesis": "replication", "scenario": "replication-accuracy", "effect": accuracy}
    cond = claim_checks.verdict_condition(plan, body, found)
    exact = claim_checks.exact_verdict(plan, cond, "replication", "supported")
    want = replication_exact(accuracy)
    assert exact == pytest.approx(want, abs=1e-12)
    s = d17["summaries"].get(("replication-accuracy", accuracy))
    if s is None:
        return  # simulated at 0.2 and 0.4 only (the exact sums are cheap)
    h = next(h for h in s["hypotheses"] if h["id"] == "replication")
    share = next(v for v in h["verdicts"] if v["verdict"] == "supported")
    se = math.sqrt(want * (1 - want) / s["simulations"])
    assert abs(share["share"] - want) <= 3 * se + 1e-9
    if accuracy == 0.4:
        assert want == pytest.approx(0.18, abs=0.01)  # the measured figure


def test_null_scenario_family_wise_error_is_at_most_alpha(d17):
    s = d17["summaries"][("no-difference", None)]
    n = s["simulations"]
    for fam in s["families"]:
        assert fam["alpha"] == 0.05
        got = fam["anyRejected"]["share"]
        assert got <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n), fam
    assert {f["id"] for f in s["families"]} == {"h1-pool-pairs", "h4-pools"}
    # every contrast's interval covers the null truth about 95% of the time
    for c in s["contrasts"]:
        assert c["truth"] == 0.0
        assert c["coverage"]["share"] > 0.9


def test_h1_as_registered_is_underpowered_at_013(d17):
    s = d17["summaries"][("pool-c-contrastive-shift", 0.13)]
    h1 = next(h for h in s["hypotheses"] if h["id"] == "h1")
    share = next(v for v in h1["verdicts"] if v["verdict"] == "supported")["share"]
    assert 0.25 < share < 0.36  # the issue measured about 0.31


def test_d17_sizing_claims(d17):
    plan, found = d17["plan"], d17["found"]
    checked = {
        c["id"]: c
        for c in claim_checks.check(plan, plan.study and _claims(), found, d17["summaries"])
    }
    assert checked["key-cell-half-width"]["figure"] == pytest.approx(0.0655, abs=1e-4)
    assert checked["key-cell-half-width"]["holds"]
    for side in ("low", "high"):
        c = checked[f"key-cell-half-width-{side}"]
        assert c["method"] == "closed form" and c["holds"]
        assert c["figure"] == pytest.approx(0.0495, abs=1e-4)
    power = checked["key-contrast-power"]
    assert power["method"] == "exact" and not power["holds"]  # 0.785 < 0.80: reported failing
    assert checked["key-contrast-detectable"]["holds"]
    h1 = checked["h1-power-at-013"]
    assert h1["method"] == "simulation" and not h1["holds"] and "mcSe" in h1
    rep = checked["replication-power-at-040"]
    assert rep["method"] == "exact" and not rep["holds"]


def _claims():
    from prereg.compiler.project import Project
    from prereg.study import study_context

    _, ctx = study_context(Project(ROOT), D17)
    return ctx.config["claims"]


def test_half_width_closed_form():
    z = norm.ppf(0.975)
    n, p = 220, 0.5
    want = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert claim_checks.half_width("wilson", n, p, 0.95) == pytest.approx(want, rel=1e-12)


def test_a_condition_does_not_depend_on_the_others():
    a, _ = plan_for(ROOT, D17, ["no-difference"], 300, seed=4)
    b, _ = plan_for(ROOT, D17, ["d17-finding", "no-difference"], 300, seed=4)
    sa, sb = summaries(a), summaries(b)
    assert sa[("no-difference", None)] == sb[("no-difference", None)]
    ia = condition_index(a, "no-difference")
    ib = condition_index(b, "no-difference")
    assert a.conditions[ia].stream == b.conditions[ib].stream
