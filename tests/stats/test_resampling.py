"""Resampling primitives against slow references (explicit leave-one-out loops), scipy and
closed forms.

The references below recompute the estimator from scratch for every deletion, in pure Python
with math.fsum, so they share no algebra with the closed forms under test.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from prereg.stats.resampling import (
    cluster_jackknife_two_stratum,
    cluster_t_critical,
    jackknife_se,
    percentile_bootstrap_interval,
    segment_sums,
    t_quantile,
    two_sided_quantile,
    unit_jackknife_two_stratum,
    unit_jackknife_two_stratum_filled,
)

# ---------------------------------------------------------------------------------------------
# slow references


def ref_estimate(pass_vals, fail_vals, wp, wf):
    if not pass_vals or not fail_vals:
        return None
    return wp * math.fsum(pass_vals) / len(pass_vals) + wf * math.fsum(fail_vals) / len(fail_vals)


def ref_se(loo):
    k = len(loo)
    mean = math.fsum(loo) / k
    return math.sqrt((k - 1) / k * math.fsum((v - mean) ** 2 for v in loo))


def ref_cluster(clusters, wp, wf):
    """clusters: list of (pass list, fail list).  Returns (theta, se) or (None, None)."""
    all_p = [v for p, _ in clusters for v in p]
    all_f = [v for _, f in clusters for v in f]
    if len(all_p) < 2 or len(all_f) < 2 or len(clusters) < 2:
        return None, None
    loo = []
    for g in range(len(clusters)):
        rest = clusters[:g] + clusters[g + 1 :]
        est = ref_estimate([v for p, _ in rest for v in p], [v for _, f in rest for v in f], wp, wf)
        if est is None:
            return None, None
        loo.append(est)
    return ref_estimate(all_p, all_f, wp, wf), ref_se(loo)


def ref_unit(slots, wp, wf):
    """slots: list of (pass value or None, fail value or None)."""
    all_p = [p for p, _ in slots if p is not None]
    all_f = [f for _, f in slots if f is not None]
    if len(all_p) < 2 or len(all_f) < 2:
        return None, None
    loo = []
    for i in range(len(slots)):
        rest = slots[:i] + slots[i + 1 :]
        loo.append(
            ref_estimate(
                [p for p, _ in rest if p is not None], [f for _, f in rest if f is not None], wp, wf
            )
        )
    return ref_estimate(all_p, all_f, wp, wf), ref_se(loo)


def close(a, b, rel=1e-9, abs_=1e-12):
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


# ---------------------------------------------------------------------------------------------
# generic jackknife and segment sums


def test_jackknife_se_matches_formula_and_hand_value():
    # k = 3 estimates 1, 2, 3: mean 2, Σ dev² = 2, SE = √(2/3 · 2)
    assert jackknife_se([1.0, 2.0, 3.0]) == pytest.approx(math.sqrt(4 / 3), rel=1e-15)
    rng = np.random.default_rng(5)
    loo = rng.normal(size=(40, 9))
    got = jackknife_se(loo)
    for row, se in zip(loo, got, strict=True):
        assert close(se, ref_se(list(row)), rel=1e-12)
    # axis argument
    np.testing.assert_array_equal(jackknife_se(loo.T, axis=0), got)


def test_jackknife_se_nan_cases():
    assert math.isnan(jackknife_se([1.0]))
    out = jackknife_se([[1.0, np.nan, 2.0], [1.0, 2.0, 4.0]])
    assert math.isnan(out[0]) and math.isfinite(out[1])
    assert math.isnan(jackknife_se([1.0, np.inf]))


def test_segment_sums_against_loop():
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, 6, size=(7, 4))
    n = int(lengths.sum(axis=1).max())
    lengths[:, -1] += n - lengths.sum(axis=1)
    values = rng.normal(size=(7, n))
    got = segment_sums(values, lengths)
    for b in range(7):
        pos = 0
        for g in range(4):
            seg = values[b, pos : pos + lengths[b, g]]
            assert close(got[b, g], math.fsum(seg), rel=1e-13)
            pos += lengths[b, g]
    with pytest.raises(ValueError):
        segment_sums(values, np.ones((7, 4), dtype=int))
    with pytest.raises(ValueError):
        segment_sums(values[:, :4], np.array([[0, 2, 1, 1]] * 7))


# ---------------------------------------------------------------------------------------------
# two-stratum jackknife, cluster level


def random_clusters(rng, k, p_empty=0.2):
    clusters = []
    for _ in range(k):
        p = list(rng.normal(0.1, 1.0, size=rng.integers(0, 5)) if rng.random() > p_empty else [])
        f = list(rng.normal(-0.2, 2.0, size=rng.integers(0, 5)) if rng.random() > p_empty else [])
        clusters.append((p, f))
    return clusters


def cluster_arrays(cohorts):
    sums_p = np.array([[math.fsum(p) for p, _ in c] for c in cohorts])
    cnt_p = np.array([[len(p) for p, _ in c] for c in cohorts])
    sums_f = np.array([[math.fsum(f) for _, f in c] for c in cohorts])
    cnt_f = np.array([[len(f) for _, f in c] for c in cohorts])
    return sums_p, cnt_p, sums_f, cnt_f


@pytest.mark.parametrize("k", [2, 3, 5, 12])
def test_cluster_jackknife_equals_leave_one_out_loop(k):
    rng = np.random.default_rng(100 + k)
    wp, wf = 210 / 640, 430 / 640
    cohorts = [random_clusters(rng, k) for _ in range(60)]
    theta, se = cluster_jackknife_two_stratum(*cluster_arrays(cohorts), wp, wf)
    n_def = n_deg = 0
    for c, th, s in zip(cohorts, theta, se, strict=True):
        r_th, r_se = ref_cluster(c, wp, wf)
        if r_th is None:
            assert math.isnan(th) and math.isnan(s)
            n_deg += 1
        else:
            assert close(th, r_th) and close(s, r_se)
            n_def += 1
    assert n_def > 10  # both branches exercised
    assert n_deg > 0 or k > 3


def test_cluster_jackknife_degenerate_hand_cases():
    wp = wf = 0.5
    # the only cluster with pass statistics is deleted: its leave-one-out estimate is undefined
    c = [([1.0, 2.0], [0.0]), ([], [1.0, 3.0])]
    th, se = cluster_jackknife_two_stratum(*cluster_arrays([c]), wp, wf)
    assert math.isnan(th[0]) and math.isnan(se[0])
    # a stratum with a single statistic
    c = [([1.0], [0.0, 1.0]), ([], [1.0, 3.0]), ([], [2.0])]
    th, se = cluster_jackknife_two_stratum(*cluster_arrays([c]), wp, wf)
    assert math.isnan(th[0])
    # hand value: 2 clusters, pass {1},{3}, fail {0},{2}: θ̂ = .5·2 + .5·1 = 1.5;
    # leave-one-out 0.5·3+0.5·2 = 2.5 and 0.5·1+0.5·0 = 0.5; SE = √(1/2·(1+1)) = 1
    c = [([1.0], [0.0]), ([3.0], [2.0])]
    th, se = cluster_jackknife_two_stratum(*cluster_arrays([c]), wp, wf)
    assert th[0] == 1.5 and se[0] == pytest.approx(1.0, rel=1e-15)


# ---------------------------------------------------------------------------------------------
# two-stratum jackknife, unit level


def random_slots(rng, n, p_pass=0.6, p_fail=0.8):
    slots = []
    for _ in range(n):
        kind = rng.random()
        has_p = kind < p_pass
        has_f = (not has_p) or rng.random() < p_fail
        slots.append(
            (
                float(rng.normal(0.3, 1.0)) if has_p else None,
                float(rng.normal(-0.1, 0.5)) if has_f else None,
            )
        )
    return slots


def slot_arrays(cohorts):
    xp = np.array([[np.nan if p is None else p for p, _ in c] for c in cohorts])
    xf = np.array([[np.nan if f is None else f for _, f in c] for c in cohorts])
    return xp, ~np.isnan(xp), xf, ~np.isnan(xf)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 25])
def test_unit_jackknife_closed_form_equals_leave_one_out_loop(n):
    rng = np.random.default_rng(n)
    wp, wf = 0.3, 0.7
    cohorts = [random_slots(rng, n) for _ in range(80)]
    xp, hp, xf, hf = slot_arrays(cohorts)
    theta, se = unit_jackknife_two_stratum(xp, hp, xf, hf, wp, wf)
    seen_def = 0
    for c, th, s in zip(cohorts, theta, se, strict=True):
        r_th, r_se = ref_unit(c, wp, wf)
        if r_th is None:
            assert math.isnan(th) and math.isnan(s)
        else:
            seen_def += 1
            assert close(th, r_th) and close(s, r_se)
    assert seen_def > 0


def test_unit_jackknife_all_present_path_equals_masked_path():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 11))
    y = rng.normal(size=(30, 11))
    ones = np.ones_like(x, dtype=bool)
    a = unit_jackknife_two_stratum(x, None, y, None, 0.4, 0.6)
    b = unit_jackknife_two_stratum(x, ones, y, ones, 0.4, 0.6)
    np.testing.assert_allclose(a, b, rtol=1e-14)
    for c_x, c_y, th, s in zip(x, y, *a, strict=True):
        r_th, r_se = ref_unit(list(zip(c_x.tolist(), c_y.tolist(), strict=True)), 0.4, 0.6)
        assert close(th, r_th) and close(s, r_se)


def test_unit_jackknife_ignores_values_at_absent_slots():
    x = np.array([[1.0, 5.0, np.nan, 2.0]])
    y = np.array([[0.5, np.inf, 1.0, 1.5]])
    hp = np.array([[True, True, False, True]])
    hf = np.array([[True, False, True, True]])
    th, se = unit_jackknife_two_stratum(x, hp, y, hf, 0.5, 0.5)
    r_th, r_se = ref_unit([(1.0, 0.5), (5.0, None), (None, 1.0), (2.0, 1.5)], 0.5, 0.5)
    assert close(th[0], r_th) and close(se[0], r_se)


def test_rows_are_bit_identical_whatever_the_batch():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(50, 37))
    y = rng.normal(size=(50, 37))
    a = (rng.random((50, 37)) < 0.7).astype(float)
    b = np.maximum(1.0 - a, (rng.random((50, 37)) < 0.5).astype(float))
    x *= a
    y *= b
    whole = unit_jackknife_two_stratum_filled(x, a, y, b, 0.25, 0.75)
    for i in (0, 17, 49):
        one = unit_jackknife_two_stratum_filled(
            x[i : i + 1], a[i : i + 1], y[i : i + 1], b[i : i + 1], 0.25, 0.75
        )
        assert one[0][0] == whole[0][i] and one[1][0] == whole[1][i]
    sp, cp = rng.normal(size=(50, 6)), rng.integers(1, 4, size=(50, 6))
    sf, cf = rng.normal(size=(50, 6)), rng.integers(1, 4, size=(50, 6))
    whole = cluster_jackknife_two_stratum(sp, cp, sf, cf, 0.25, 0.75)
    for i in (0, 31):
        one = cluster_jackknife_two_stratum(
            sp[i : i + 1], cp[i : i + 1], sf[i : i + 1], cf[i : i + 1], 0.25, 0.75
        )
        assert one[0][0] == whole[0][i] and one[1][0] == whole[1][i]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.floats(-1e3, 1e3)), st.one_of(st.none(), st.floats(-1e3, 1e3))
        ).filter(lambda t: t != (None, None)),
        min_size=1,
        max_size=12,
    )
)
def test_unit_jackknife_property(slots):
    xp, hp, xf, hf = slot_arrays([slots])
    th, se = unit_jackknife_two_stratum(xp, hp, xf, hf, 0.5, 0.5)
    r_th, r_se = ref_unit(slots, 0.5, 0.5)
    if r_th is None:
        assert math.isnan(th[0])
    else:
        assert close(th[0], r_th, rel=1e-9, abs_=1e-9) and close(se[0], r_se, rel=1e-7, abs_=1e-9)


# ---------------------------------------------------------------------------------------------
# t quantiles


def test_t_quantile_matches_scipy_stats():
    ps = np.array([1e-10, 0.001, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.975, 0.995, 0.999999])
    dfs = np.array([1, 2, 3, 4, 5, 7, 11, 19, 30, 49, 99, 149, 499, 5000, 1e6])
    got = t_quantile(ps[:, None], dfs[None, :])
    want = stats.t.ppf(ps[:, None], dfs[None, :])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert isinstance(t_quantile(0.975, 11), float)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.95, 0.975, 0.995, 0.01])
def test_t_quantile_closed_forms(p):
    # ν = 1 (Cauchy), ν = 2, ν = 4: exact inverses of the t CDF
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12)
    a = 4 * p * (1 - p)
    q = math.cos(math.acos(math.sqrt(a)) / 3) / math.sqrt(a)
    assert t_quantile(p, 4) == pytest.approx(
        math.copysign(2 * math.sqrt(q - 1), p - 0.5), rel=1e-12
    )


def test_t_table_is_scipys_stdtrit_bit_for_bit():
    from scipy.special import stdtrit

    from prereg.stats import t_table

    assert t_table.Q == two_sided_quantile(0.95)
    assert len(t_table.T_0975) == t_table.DF_MAX >= 1000
    dfs = np.arange(1, t_table.DF_MAX + 1, dtype=np.float64)
    want = stdtrit(dfs, t_table.Q)
    assert np.array(t_table.T_0975).tobytes() == want.tobytes()
    # the module's text is what its generator writes from the installed scipy
    assert t_table.render() == Path(t_table.__file__).read_text(encoding="utf-8")


def test_tabled_t_quantiles_are_stdtrits_and_others_still_reach_scipy(monkeypatch):
    from scipy.special import stdtrit

    from prereg.stats import t_table

    # every form a caller passes: Python and numpy ints and whole floats
    for df in (1, 11, 49, 499, t_table.DF_MAX, np.int64(75), 99.0, np.float64(299)):
        got = t_quantile(0.975, df)
        assert type(got) is float
        assert got.hex() == float(stdtrit(float(df), 0.975)).hex()
    assert t_quantile(np.float64(0.975), 11) == t_table.T_0975[10]
    # outside the table (other p, df past the table, fractional df, arrays): scipy, the same
    # bits as before
    calls = []
    import scipy.special

    real = scipy.special.stdtrit
    monkeypatch.setattr(scipy.special, "stdtrit", lambda *a: calls.append("stdtrit") or real(*a))
    for p, df in ((0.95, 11), (0.975, t_table.DF_MAX + 1), (0.975, 11.5), (0.975, 1e6)):
        assert t_quantile(p, df).hex() == float(stdtrit(float(df), p)).hex()
    vec = t_quantile(0.975, np.array([11, 49]))
    assert vec.tobytes() == stdtrit(np.array([11.0, 49.0]), 0.975).tobytes()
    assert calls == ["stdtrit"] * 5
    # the table does not bypass the argument checks: df 0 or a bad p still raise
    with pytest.raises(ValueError):
        t_quantile(0.975, 0)
    with pytest.raises(ValueError):
        t_quantile(1.0, 11)


def test_t_quantile_large_df_tends_to_normal():
    assert t_quantile(0.975, 1e12) == pytest.approx(1.959963984540054, rel=1e-9)


def test_cluster_t_critical_and_validation():
    assert two_sided_quantile(0.95) == 0.975
    assert cluster_t_critical(0.95, 12) == pytest.approx(stats.t.ppf(0.975, 11), rel=1e-12)
    assert cluster_t_critical(0.95, 12) == pytest.approx(2.2010, rel=1e-4)  # printed tables
    np.testing.assert_allclose(
        cluster_t_critical(0.9, np.array([2, 5])), stats.t.ppf(0.95, [1, 4]), rtol=1e-12
    )
    with pytest.raises(ValueError):
        cluster_t_critical(0.95, 1)
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError):
            t_quantile(bad, 3)
    with pytest.raises(ValueError):
        t_quantile(0.5, 0)
    with pytest.raises(ValueError):
        two_sided_quantile(1.0)


# ---------------------------------------------------------------------------------------------
# percentile bootstrap


def mean_stat(samples):
    return samples.mean(axis=1)


def test_bootstrap_deterministic_for_a_seed_and_records_it():
    values = np.random.default_rng(0).normal(1.0, 2.0, size=40)
    a = percentile_bootstrap_interval(
        values, mean_stat, 2000, 0.95, 20261011, quantile_method="linear"
    )
    b = percentile_bootstrap_interval(
        values, mean_stat, 2000, 0.95, 20261011, quantile_method="linear", chunk=7
    )
    assert a == b
    c = percentile_bootstrap_interval(values, mean_stat, 2000, 0.95, 1, quantile_method="linear")
    assert (c.lower, c.upper) != (a.lower, a.upper)
    assert a.seed == 20261011 and a.replicates == 2000 and a.level == 0.95
    d = a.as_dict()
    assert d["seed"] == 20261011 and d["replicates"] == 2000 and d["quantile_method"] == "linear"
    assert a.estimate == pytest.approx(values.mean(), rel=1e-15)
    assert a.lower < a.estimate < a.upper


def test_bootstrap_equals_explicit_loop():
    values = np.random.default_rng(2).exponential(size=15)
    res = percentile_bootstrap_interval(
        values, mean_stat, 500, 0.9, 77, spawn_key=(3, 1), quantile_method="linear"
    )
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(77, spawn_key=(3, 1))))
    idx = rng.integers(0, 15, size=(500, 15))
    reps = sorted(math.fsum(values[row]) / 15 for row in idx)

    # Hyndman-Fan type 7 by hand
    def q7(p):
        h = (len(reps) - 1) * p
        lo = math.floor(h)
        return reps[lo] + (h - lo) * (reps[min(lo + 1, len(reps) - 1)] - reps[lo])

    assert res.lower == pytest.approx(q7(0.05), rel=1e-12)
    assert res.upper == pytest.approx(q7(0.95), rel=1e-12)
    assert res.spawn_key == (3, 1)


def test_bootstrap_cluster_rows_and_coverage_sanity():
    # resampling rows of (sum, count) pairs: a cluster bootstrap of a ratio mean
    rng = np.random.default_rng(4)
    counts = rng.integers(1, 9, size=30)
    sums = np.array([rng.normal(0.5, 1.0, size=c).sum() for c in counts])
    rows = np.stack([sums, counts], axis=1)

    def ratio(samples):
        return samples[..., 0].sum(axis=1) / samples[..., 1].sum(axis=1)

    res = percentile_bootstrap_interval(rows, ratio, 3000, 0.95, 11, quantile_method="linear")
    assert res.estimate == pytest.approx(sums.sum() / counts.sum())
    assert res.lower < res.estimate < res.upper
    assert 0.1 < res.upper - res.lower < 1.0


def test_bootstrap_nonfinite_and_validation():
    res = percentile_bootstrap_interval(
        np.array([0.0, 1.0, 2.0]),
        lambda s: np.where(s.min(axis=1) == 0, np.nan, 1.0),
        200,
        0.95,
        0,
        quantile_method="linear",
    )
    assert math.isnan(res.lower) and res.nonfinite_replicates > 0
    for kwargs in ({"replicates": 0}, {"replicates": True}, {"seed": -1}, {"level": 1.0}):
        args = {"replicates": 10, "level": 0.95, "seed": 1} | kwargs
        with pytest.raises(ValueError):
            percentile_bootstrap_interval(
                np.ones(3),
                mean_stat,
                args["replicates"],
                args["level"],
                args["seed"],
                quantile_method="linear",
            )
    with pytest.raises(ValueError):
        percentile_bootstrap_interval(
            np.ones(3), lambda s: s.mean(), 10, 0.95, 1, quantile_method="linear"
        )
