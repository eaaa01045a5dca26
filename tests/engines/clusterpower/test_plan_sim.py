"""The power-plan simulation: draws, allocation, estimators, rungs, ladder, feasibility.

Vectorized results are checked against slow pure-Python references that work cohort by
cohort from the same draws (the draws themselves are checked against an independent
re-derivation of the PCG64/SeedSequence scheme).
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from s3_study import CONFIG, CONSTANTS
from scipy import stats

from prereg.engines.clusterpower.calibration_input import parse_calibration, read_calibration
from prereg.engines.clusterpower.config import plan_config
from prereg.engines.clusterpower.plan import (
    Eligible,
    _RungStream,
    allocate,
    build_plan,
    centred_tables,
    composition_warnings,
    evaluate_cohorts,
    infeasibility_reasons,
    ladder_for,
    simulate_rung,
)
from prereg.errors import UserError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "s3"
SAMPLE = FIX / "calibration-sample.jsonl"
DELTA = float(CONSTANTS["frozen"]["smallest_effect"])


def _power_thresholds(cond, value):
    """Set every power comparison of a status rule to ``value`` (as a spec with another target
    power must register it; prereg compile refuses a rule that differs from target_power)."""
    if isinstance(cond, dict):
        c = cond.get("compare")
        if isinstance(c, dict) and str(c.get("target")).startswith("power-"):
            c["value"] = value
        for v in cond.values():
            _power_thresholds(v, value)
    elif isinstance(cond, (list, tuple)):
        for v in cond:
            _power_thresholds(v, value)


def cfg_with(**frozen):
    c = copy.deepcopy(CONFIG)
    c["constants"]["frozen"].update(frozen)
    if "target_power" in frozen:
        tp = frozen["target_power"]
        _power_thresholds(c["decisions"], tp["numerator"] / tp["denominator"])
    return plan_config(c)


CFG = plan_config(CONFIG)


def jsonl(records) -> bytes:
    out = []
    for repo, task, label, v in records:
        out.append(
            json.dumps(
                {
                    "stage": "calibration",
                    "repository_id": repo,
                    "task_id": task,
                    "class_label": label,
                    "delta_logscore": v,
                }
            )
        )
    return ("\n".join(out) + "\n").encode()


def small_calibration(seed=0, repos=6, p_pass=0.6, p_fail=0.8):
    """A small calibration with unequal profiles and tasks missing a stratum."""
    rng = np.random.default_rng(seed)
    recs = []
    for r in range(repos):
        for t in range(int(rng.integers(1, 7))):
            has_p = rng.random() < p_pass
            has_f = (not has_p) or rng.random() < p_fail
            if has_p:
                recs.append((f"r{r}", f"r{r}-t{t}", "official-pass", round(rng.normal(0.2, 1), 4)))
            if has_f:
                recs.append((f"r{r}", f"r{r}-t{t}", "official-fail", round(rng.normal(-0.1, 1), 4)))
    return parse_calibration(jsonl(recs), "small.jsonl", CFG.input)


# ---------------------------------------------------------------------------------------------
# randomness


def test_draws_follow_the_seedsequence_spawn_key_scheme():
    s = _RungStream(20261011, 75, 12, 9, 1000)
    c, u = s.take(0, 1000)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(20261011, spawn_key=(75, 0))))
    np.testing.assert_array_equal(c, rng.integers(0, 9, size=(1000, 12)))
    np.testing.assert_array_equal(u, rng.random((1000, 75)))
    c2, u2 = s.take(1000, 1500)  # block 1, a partial block uses its first rows
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(20261011, spawn_key=(75, 1))))
    np.testing.assert_array_equal(c2, rng.integers(0, 9, size=(1000, 12))[:500])
    np.testing.assert_array_equal(u2, rng.random((500, 75)))


def test_draws_do_not_depend_on_the_chunking():
    whole = _RungStream(7, 20, 3, 4, 50).take(0, 130)
    s = _RungStream(7, 20, 3, 4, 50)
    parts = [s.take(lo, min(lo + 17, 130)) for lo in range(0, 130, 17)]
    np.testing.assert_array_equal(whole[0], np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(whole[1], np.concatenate([p[1] for p in parts]))
    with pytest.raises(RuntimeError):
        s2 = _RungStream(7, 20, 3, 4, 50)
        s2.take(0, 10)
        s2.take(20, 30)


# ---------------------------------------------------------------------------------------------
# allocation


def ref_allocate(m, n):
    g = len(m)
    big_m = sum(m)
    q = [(n - g) * mg // big_m for mg in m]
    r = [(n - g) * mg % big_m for mg in m]
    left = (n - g) - sum(q)
    order = sorted(range(g), key=lambda i: (-r[i], i))
    a = [1 + qi for qi in q]
    for i in order[:left]:
        a[i] += 1
    # the allocation is the floor of the exact proportional share plus at most one
    for i in range(g):
        share = 1 + Fraction((n - g) * m[i], big_m)
        assert math.floor(share) <= a[i] <= math.floor(share) + 1
    return a


def test_allocation_exact_integers_and_ties_to_earlier_draw():
    rng = np.random.default_rng(0)
    for _ in range(30):
        g = int(rng.integers(2, 13))
        n = g + int(rng.integers(0, 400))
        m = rng.integers(1, 40, size=(25, g))
        m[:5] = m[:5, :1]  # equal sizes: ties everywhere
        got = allocate(m, n)
        assert (got.sum(axis=1) == n).all()
        for row, arow in zip(m, got, strict=True):
            assert list(arow) == ref_allocate(list(map(int, row)), n)
    # hand case: n − G = 1, sizes 1, 1, 1: the unit goes to the first draw
    assert allocate(np.array([[1, 1, 1]]), 4).tolist() == [[2, 1, 1]]
    # hand case: n − G = 5, sizes 1, 2: shares 5/3, 10/3 → 1+1, 1+3, remainders 2, 1 → first
    assert allocate(np.array([[1, 2]]), 7).tolist() == [[3, 4]]


# ---------------------------------------------------------------------------------------------
# the estimators against a cohort-by-cohort reference


def ref_cohort(cal, clusters, u, n, wp, wf):
    """θ̂₀, SE_repository, SE_task of one cohort, or None when degenerate (pure Python)."""

    def centred(vals, has):
        present = [v for v, h in zip(vals, has, strict=True) if h]
        mean = math.fsum(present) / len(present)
        return [v - mean if h else None for v, h in zip(vals, has, strict=True)]

    xs = centred(cal.pass_value.tolist(), cal.has_pass.tolist())
    ys = centred(cal.fail_value.tolist(), cal.has_fail.tolist())
    starts, sizes = cal.profile_start.tolist(), cal.profile_size.tolist()
    m = [sizes[c] for c in clusters]
    alloc = ref_allocate(m, n)
    slots, per_cluster = [], []
    pos = 0
    for c, a in zip(clusters, alloc, strict=True):
        chosen = []
        for k in range(a):
            t = starts[c] + int(u[pos + k] * sizes[c])
            assert starts[c] <= t < starts[c] + sizes[c]
            chosen.append((xs[t], ys[t]))
        pos += a
        slots += chosen
        per_cluster.append(chosen)

    def est(ss):
        p = [x for x, _ in ss if x is not None]
        f = [y for _, y in ss if y is not None]
        if not p or not f:
            return None
        return wp * math.fsum(p) / len(p) + wf * math.fsum(f) / len(f), len(p), len(f)

    full = est(slots)
    if full is None or full[1] < 2 or full[2] < 2:
        return None
    loo_r = []
    for g in range(len(per_cluster)):
        e = est([s for h, cl in enumerate(per_cluster) if h != g for s in cl])
        if e is None:
            return None
        loo_r.append(e[0])
    loo_t = [est(slots[:i] + slots[i + 1 :])[0] for i in range(len(slots))]

    def se(loo):
        k = len(loo)
        mu = math.fsum(loo) / k
        return math.sqrt((k - 1) / k * math.fsum((v - mu) ** 2 for v in loo))

    return full[0], se(loo_r), se(loo_t)


@pytest.mark.parametrize(("seed", "n", "g"), [(1, 12, 4), (2, 30, 5), (3, 9, 9), (4, 40, 3)])
def test_evaluate_cohorts_equals_reference(seed, n, g):
    cal = small_calibration(seed)
    tab = centred_tables(cal)
    clusters, u = _RungStream(seed, n, g, len(cal.repositories), 100).take(0, 60)
    res = evaluate_cohorts(tab, clusters, u, n, 0.3, 0.7)
    degenerate = 0
    for i in range(60):
        ref = ref_cohort(cal, clusters[i].tolist(), u[i].tolist(), n, 0.3, 0.7)
        got = (res.theta0[i], res.se_repository[i], res.se_task[i])
        if ref is None:
            degenerate += 1
            assert all(math.isnan(v) for v in got)
        else:
            for a, b in zip(got, ref, strict=True):
                assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    assert degenerate < 60


def test_degenerate_cohorts_are_counted_failures():
    # pass statistics in only two tasks of two repositories: many cohorts lack 2 of them
    recs = [("r0", "a", "official-pass", 0.5), ("r1", "b", "official-pass", -0.5)]
    for r in range(6):
        for t in range(4):
            recs.append((f"r{r}", f"r{r}-{t}", "official-fail", 0.1 * t - 0.05 * r))
    cal = parse_calibration(jsonl(recs), "rare.jsonl", CFG.input)
    tab = centred_tables(cal)
    res = simulate_rung(
        tab,
        12,
        4,
        seed=5,
        simulations=400,
        block_size=100,
        w_pass=0.5,
        w_fail=0.5,
        effect=DELTA,
        bound_level=0.95,
        keep_cohorts=True,
    )
    clusters, u = _RungStream(5, 12, 4, len(cal.repositories), 100).take(0, 400)
    ref_deg = sum(
        ref_cohort(cal, clusters[i].tolist(), u[i].tolist(), 12, 0.5, 0.5) is None
        for i in range(400)
    )
    assert res.degenerate == ref_deg > 0
    assert res.successes <= 400 - res.degenerate


def test_rung_counts_against_scipy_t_bounds():
    cal = read_calibration(SAMPLE, CFG.input)
    tab = centred_tables(cal)
    res = simulate_rung(
        tab,
        75,
        12,
        seed=CFG.seed,
        simulations=1500,
        block_size=1000,
        w_pass=210 / 640,
        w_fail=430 / 640,
        effect=DELTA,
        bound_level=0.95,
        keep_cohorts=True,
    )
    th0 = res.cohorts.theta0
    ok = ~np.isnan(th0)
    mean0 = math.fsum(sorted(th0[ok].tolist(), key=abs)) / ok.sum()
    assert res.removed_null_mean == mean0
    t_r, t_t = stats.t.ppf(0.975, 11), stats.t.ppf(0.975, 74)
    succ = null = 0
    for th, sr, stt in zip(
        th0[ok], res.cohorts.se_repository[ok], res.cohorts.se_task[ok], strict=True
    ):
        theta = th - mean0 + DELTA
        succ += theta - t_r * sr > 0 and theta - t_t * stt > 0
        null += th - mean0 - t_r * sr > 0 and th - mean0 - t_t * stt > 0
    assert (res.successes, res.null_successes) == (succ, null)
    assert res.df_repository == 11 and res.df_task == 74
    d = res.as_dict()
    assert d["power"] == succ / 1500
    assert d["mc_se"] == pytest.approx(math.sqrt(d["power"] * (1 - d["power"]) / 1500))


def test_centring_removes_each_stratum_mean():
    cal = read_calibration(SAMPLE, CFG.input)
    tab = centred_tables(cal)
    assert abs(math.fsum(tab.x[cal.has_pass].tolist())) < 1e-12
    assert abs(math.fsum(tab.y[cal.has_fail].tolist())) < 1e-12
    assert (tab.x[~cal.has_pass] == 0).all() and (tab.y[~cal.has_fail] == 0).all()


# ---------------------------------------------------------------------------------------------
# whole plans


def plan(cal, el, cfg=CFG, **kw):
    return build_plan(
        cfg, cal, el, spec_digest="sha256:" + "0" * 64, amendment_version="v1.2", **kw
    )


def test_batch_size_does_not_change_the_plan():
    cal = read_calibration(SAMPLE, CFG.input)
    el = Eligible(500, 12, 210, 430)
    a = plan(cal, el, simulations=1300)
    for batch in (333, 1, 5000):
        sims = 1300 if batch != 1 else 30
        ref = a if batch != 1 else plan(cal, el, simulations=30, batch_size=1000)
        assert plan(cal, el, simulations=sims, batch_size=batch) == ref
    # small blocks: batches straddle many block boundaries
    cfg = cfg_with(block_size=64)
    b = plan(cal, el, cfg, simulations=400, batch_size=100)
    assert b == plan(cal, el, cfg, simulations=400, batch_size=47)
    assert b != plan(cal, el, simulations=400)  # the block size changes the streams


def test_line_order_does_not_change_the_plan():
    data = SAMPLE.read_bytes()
    lines = data.splitlines(keepends=True)
    shuffled = b"".join(lines[i] for i in np.random.default_rng(3).permutation(len(lines)))
    a = plan(parse_calibration(data, "a", CFG.input), Eligible(120, 12, 210, 430), simulations=500)
    b = plan(
        parse_calibration(shuffled, "a", CFG.input), Eligible(120, 12, 210, 430), simulations=500
    )
    for key in ("rungs", "status", "selectedTaskCount", "warnings"):
        assert a[key] == b[key]
    assert a["calibration"]["calibrationSha256"] != b["calibration"]["calibrationSha256"]


def test_zero_effect_keeps_the_success_rate_near_or_below_nominal():
    cal = read_calibration(SAMPLE, CFG.input)
    p = plan(cal, Eligible(500, 12, 210, 430), cfg_with(smallest_effect=0.0), simulations=2000)
    nominal = 0.025
    for r in p["rungs"]:
        assert r["successes"] == r["nullSuccesses"]
        # near or below nominal: within 3 Monte Carlo SEs of a rate 1.5 × nominal
        bound = 1.5 * nominal + 3 * math.sqrt(1.5 * nominal * (1 - 1.5 * nominal) / 2000)
        assert r["power"] <= bound, r
    assert p["status"] == "underpowered_full_universe"


def test_power_does_not_fall_as_the_task_count_grows():
    cal = read_calibration(SAMPLE, CFG.input)
    p = plan(cal, Eligible(500, 12, 210, 430), simulations=2000)
    rungs = p["rungs"]
    assert [r["taskCount"] for r in rungs] == [50, 75, 100, 150, 200, 300, 500]
    for lo, hi in zip(rungs, rungs[1:], strict=False):
        assert hi["power"] >= lo["power"] - 3 * math.hypot(lo["mcSe"], hi["mcSe"])
    assert rungs[-1]["power"] > rungs[0]["power"] + 0.2
    # each rung's null successes stay a small share (the planning approximation's size)
    assert all(r["nullSuccesses"] <= 0.06 * r["simulations"] for r in rungs)


def test_selected_is_the_first_rung_reaching_the_target_in_exact_integers():
    cal = read_calibration(SAMPLE, CFG.input)
    p = plan(cal, Eligible(500, 12, 210, 430), simulations=2000)
    first = next(
        (r["taskCount"] for r in p["rungs"] if Fraction(r["successes"], 2000) >= Fraction(9, 10)),
        None,
    )
    assert first is not None and p["selectedTaskCount"] == first
    assert p["status"] == "powered"
    # target power 1: only a rung where every cohort succeeds qualifies
    cfg = cfg_with(target_power={"numerator": 1, "denominator": 1})
    q = plan(cal, Eligible(500, 12, 210, 430), cfg, simulations=200)
    assert q["selectedTaskCount"] == next(
        (r["taskCount"] for r in q["rungs"] if r["successes"] == 200), None
    )


# ---------------------------------------------------------------------------------------------
# ladder, feasibility, warnings


@pytest.mark.parametrize(
    ("n", "g", "rungs", "skipped"),
    [
        (500, 12, [50, 75, 100, 150, 200, 300, 500], []),
        (640, 12, [50, 75, 100, 150, 200, 300, 500, 640], []),
        (120, 12, [50, 75, 100, 120], []),
        (40, 12, [40], []),
        (120, 60, [75, 100, 120], [50]),
        (300, 160, [200, 300], [50, 75, 100, 150]),
        (12, 12, [12], []),
    ],
)
def test_ladder(n, g, rungs, skipped):
    assert ladder_for(CFG, Eligible(n, g, 1, 1)) == (rungs, skipped)


def codes(reasons):
    return sorted(r.split(":")[0] for r in reasons)


def test_every_infeasibility_reason_is_listed():
    cal = read_calibration(SAMPLE, CFG.input)
    assert infeasibility_reasons(CFG, cal, Eligible(500, 12, 210, 430)) == []
    assert codes(infeasibility_reasons(CFG, cal, Eligible(5, 1, 0, 0))) == [
        "no_eligible_items",
        "no_eligible_items",
        "too_few_eligible_repositories",
    ]
    assert codes(infeasibility_reasons(CFG, cal, Eligible(11, 12, 3, 0))) == [
        "fewer_eligible_tasks_than_repositories",
        "no_eligible_items",
    ]
    recs = [("r0", "a", "official-pass", 0.5), ("r0", "b", "official-pass", -0.5)]
    recs += [(f"r{r}", f"t{r}", "official-fail", 0.1 * r) for r in range(4)]
    few = parse_calibration(jsonl(recs), "few.jsonl", CFG.input)
    reasons = infeasibility_reasons(CFG, few, Eligible(100, 12, 10, 10))
    assert codes(reasons) == [
        "stratum_in_too_few_calibration_repositories",
        "too_few_calibration_repositories",
    ]
    assert (
        "official-pass" in reasons[1] and "min(eligible repository count 12, 5) = 5" in reasons[0]
    )
    # min(G, 5): with G = 4 the 4 calibration repositories suffice
    assert codes(infeasibility_reasons(CFG, few, Eligible(100, 4, 10, 10))) == [
        "stratum_in_too_few_calibration_repositories"
    ]


def test_composition_warning_is_an_exact_integer_comparison():
    recs = []
    for r in range(5):
        for t in range(2):  # 10 tasks: 4 with a pass statistic, all with a fail statistic
            if t == 0 and r < 4:
                recs.append((f"r{r}", f"r{r}t{t}", "official-pass", 0.1 * r))
            recs.append((f"r{r}", f"r{r}t{t}", "official-fail", 0.2 * t))
    cal = parse_calibration(jsonl(recs), "c.jsonl", CFG.input)
    assert composition_warnings(CFG, cal, Eligible(100, 5, 40, 100)) == []  # 4/10 = 40/100
    w = composition_warnings(CFG, cal, Eligible(100, 5, 39, 99))
    assert codes(w) == ["stratum_share_exceeds_universe"] * 2
    assert "official-pass" in w[0] and "official-fail" in w[1]


# ---------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("planning_method", "bootstrap", "implements only 'cluster-t-jackknife'"),
        ("ladder", [50, 50], "ladder that does not rise"),
    ],
)
def test_frozen_values_a_plan_would_be_recorded_against_are_refused_at_run_time_too(
    key, value, needle
):
    # prereg compile refuses both (and every other malformed value: test_s3_compile_checks);
    # a configuration made by hand is refused before anything is simulated
    with pytest.raises(UserError, match="engine configuration") as e:
        cfg_with(**{key: value})
    assert needle in e.value.message


def test_fixture_constants_are_the_studys():
    # ln 1.10 correctly rounded to a double (math.log(1.1) is 5 ulps off: log of the double 1.1)
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    assert DELTA == float(Decimal("1.10").ln())
    assert DELTA != math.log(1.1) and abs(DELTA - math.log(1.1)) < 1e-16
    assert CONSTANTS["frozen"]["target_power"] == {"numerator": 9, "denominator": 10}
    assert CFG.ladder == (50, 75, 100, 150, 200, 300, 500) and CFG.block_size == 1000
