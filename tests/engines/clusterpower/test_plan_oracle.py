"""The power-plan simulation equals its former implementation bit for bit.

The simulation was made cheaper (gathers without the per-slot bounds test, the
presence counts from one running sum instead of two ``reduceat`` passes, uniforms drawn
straight into one array; later array methods instead of numpy's functions, the leftover
allocation's ranks by an argsort, the jackknives' NaN marks only when needed); the plan's bytes
must not move.  The former code (the allocation and both jackknives included) is kept here,
verbatim, as the oracle: per-cohort results are compared as raw float64 bytes (NaN positions
included) over many calibrations, task counts, cluster counts, seeds and batch shapes, and
whole plans as their canonical bytes with the former code swapped in.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from s3_study import CONFIG

from prereg.engines.clusterpower import plan as plan_module
from prereg.engines.clusterpower.calibration_input import parse_calibration, read_calibration
from prereg.engines.clusterpower.config import plan_config
from prereg.engines.clusterpower.plan import (
    CohortStats,
    Eligible,
    _RungStream,
    allocate,
    build_plan,
    centred_tables,
    evaluate_cohorts,
)
from prereg.files import canonical_bytes_nl
from prereg.stats.resampling import (
    cluster_jackknife_two_stratum,
    unit_jackknife_two_stratum_filled,
)

CFG = plan_config(CONFIG)
SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "s3" / "calibration-sample.jsonl"


def cfg_with(**frozen):
    c = copy.deepcopy(CONFIG)
    c["constants"]["frozen"].update(frozen)
    return plan_config(c)


# --------------------------------------------------------------------------------------------
# the former implementation (the oracle), as it was before the rewrite


def old_take(stream: _RungStream, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    cs, us = [], []
    pos = lo
    while pos < hi:
        block, row = divmod(pos, stream.block_size)
        if block != stream.block:
            stream._open(block)
        if row != stream.next_row:
            raise RuntimeError("cohort ranges must be requested in order")
        end = min(hi - pos, stream.block_size - row)
        cs.append(stream.clusters[row : row + end])
        us.append(stream.rng.random((end, stream.n)))
        stream.next_row = row + end
        pos += end
    if len(cs) == 1:
        return cs[0], us[0]
    return np.concatenate(cs), np.concatenate(us)


def old_allocate(m: np.ndarray, n: int) -> np.ndarray:
    """Task counts per cluster (B, G) for cluster profile sizes ``m`` (B, G), exact integers.

    a_g = 1 + ⌊(n − G)·m_g / M⌋; the leftover units go one each to the largest remainders
    (n − G)·m_g mod M, ties to the earlier draw.
    """
    bsz, g = m.shape
    extra = n - g
    total = m.sum(axis=1, keepdims=True)
    prod = extra * m
    q = prod // total
    r = prod - q * total
    alloc = q + 1
    left = extra - q.sum(axis=1)
    if np.any(left):
        order = np.argsort(-r, axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(g), (bsz, g)), axis=1)
        alloc += ranks < left[:, None]
    return alloc


def old_weights(w_pass: float, w_fail: float) -> tuple[float, float]:
    w_pass, w_fail = float(w_pass), float(w_fail)
    if not (np.isfinite(w_pass) and np.isfinite(w_fail)):
        raise ValueError("stratum weights must be finite")
    return w_pass, w_fail


def old_cluster_jackknife_two_stratum(
    sum_pass, count_pass, sum_fail, count_fail, w_pass: float, w_fail: float
) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂, cluster-level jackknife SE) per cohort from per-cluster stratum sums and counts.

    Each argument has shape (..., k): cohort axes then the k clusters (a cluster drawn twice is
    two clusters).  Deleting cluster g removes its sums and counts of both strata.  Returns two
    arrays of shape (...); NaN for degenerate cohorts (see the module docstring).
    """
    w_pass, w_fail = old_weights(w_pass, w_fail)
    sp = np.asarray(sum_pass, dtype=np.float64)
    sf = np.asarray(sum_fail, dtype=np.float64)
    cp = np.asarray(count_pass, dtype=np.float64)
    cf = np.asarray(count_fail, dtype=np.float64)
    k = sp.shape[-1]
    tot_sp = sp.sum(axis=-1)
    tot_sf = sf.sum(axis=-1)
    tot_cp = cp.sum(axis=-1)
    tot_cf = cf.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        theta = w_pass * (tot_sp / tot_cp) + w_fail * (tot_sf / tot_cf)
        rest_cp = tot_cp[..., None] - cp
        rest_cf = tot_cf[..., None] - cf
        loo = w_pass * ((tot_sp[..., None] - sp) / rest_cp) + w_fail * (
            (tot_sf[..., None] - sf) / rest_cf
        )
        if k >= 2:
            mean = loo.sum(axis=-1) / k
            dev = loo - mean[..., None]
            se = np.sqrt((k - 1) / k * (dev * dev).sum(axis=-1))
        else:
            se = np.full(theta.shape, np.nan)
    bad = (
        (tot_cp < 2)
        | (tot_cf < 2)
        | np.any(rest_cp <= 0, axis=-1)
        | np.any(rest_cf <= 0, axis=-1)
        | ~np.isfinite(theta)
        | ~np.isfinite(se)
    )
    theta = np.where(bad, np.nan, theta)
    se = np.where(bad, np.nan, se)
    return theta, se


def old_centred(v: np.ndarray, has: np.ndarray | None, mean: np.ndarray) -> np.ndarray:
    """v − has·mean (a new array): the deviations of present values, 0 at absent slots."""
    if has is None:
        return np.subtract(v, mean[..., None])
    out = np.multiply(has, mean[..., None])
    np.subtract(v, out, out=out)
    return out


def old_unit_jackknife_two_stratum_filled(
    x, a, y, b, w_pass: float, w_fail: float, count_pass=None, count_fail=None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unit_jackknife_two_stratum` on zero-filled float64 slot arrays (no copies).

    ``x``/``y`` (..., n) hold 0.0 where a slot has no statistic of the stratum; ``a``/``b``
    are 0.0/1.0 float64 presence arrays of the same shape, or ``None`` when every slot holds a
    statistic of that stratum.  For hot loops that already hold arrays in this form.
    ``count_pass``/``count_fail`` (float64, shape (...)) may give the per-cohort counts the
    caller already has (the sums of ``a``/``b``; integers, so exactly the same whatever the
    order of summation); without them they are summed here.
    """
    n = x.shape[-1]
    sp = x.sum(axis=-1)
    sf = y.sum(axis=-1)
    if count_pass is not None:
        np_ = count_pass
    else:
        np_ = a.sum(axis=-1) if a is not None else np.full(sp.shape, float(n))
    if count_fail is not None:
        nf = count_fail
    else:
        nf = b.sum(axis=-1) if b is not None else np.full(sf.shape, float(n))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mp = sp / np_
        mf = sf / nf
        theta = w_pass * mp + w_fail * mf
        alpha = w_pass / (np_ - 1.0)
        beta = w_fail / (nf - 1.0)
        # d_i = α·a_i·(x_i − m_p) + β·b_i·(y_i − m_f)   (the sign of θ̂₍₋ᵢ₎ − θ̂ does not matter)
        d = old_centred(x, a, mp)
        d *= alpha[..., None]
        t = old_centred(y, b, mf)
        t *= beta[..., None]
        d += t
        ss = np.einsum("...i,...i->...", d, d)
        se = np.sqrt((n - 1) / n * ss) if n >= 2 else np.full(theta.shape, np.nan)
    bad = (np_ < 2) | (nf < 2) | ~np.isfinite(theta) | ~np.isfinite(se)
    theta = np.where(bad, np.nan, theta)
    se = np.where(bad, np.nan, se)
    return theta, se


def old_evaluate_cohorts(tab, clusters, u, n, w_pass, w_fail) -> CohortStats:
    bsz, g = clusters.shape
    m = np.take(tab.size, clusters)
    alloc = old_allocate(m, n)
    counts = alloc.reshape(-1)
    flat_c = clusters.reshape(-1)
    st = np.repeat(np.take(tab.start, flat_c), counts)
    sz = np.repeat(np.take(tab.size_f, flat_c), counts)
    sz *= u.reshape(-1)
    idx = st
    idx += sz.astype(np.int64)
    seg = np.empty(counts.shape[0], dtype=np.intp)
    seg[0] = 0
    np.cumsum(counts[:-1], out=seg[1:])

    x = np.take(tab.x, idx)
    y = np.take(tab.y, idx)
    sx = np.add.reduceat(x, seg).reshape(bsz, g)
    sy = np.add.reduceat(y, seg).reshape(bsz, g)
    if tab.a is not None:
        a = np.take(tab.a, idx)
        ca = np.add.reduceat(a, seg).reshape(bsz, g)
        a = a.reshape(bsz, n)
        na = ca.sum(axis=1)
    else:
        a, ca, na = None, alloc, None
    if tab.b is not None:
        b = np.take(tab.b, idx)
        cb = np.add.reduceat(b, seg).reshape(bsz, g)
        b = b.reshape(bsz, n)
        nb = cb.sum(axis=1)
    else:
        b, cb, nb = None, alloc, None
    theta0, se_r = old_cluster_jackknife_two_stratum(sx, ca, sy, cb, w_pass, w_fail)
    theta_t, se_t = old_unit_jackknife_two_stratum_filled(
        x.reshape(bsz, n), a, y.reshape(bsz, n), b, w_pass, w_fail, na, nb
    )
    bad = np.isnan(theta0) | np.isnan(theta_t) | np.isnan(se_r) | np.isnan(se_t)
    if bad.any():
        theta0 = np.where(bad, np.nan, theta0)
        se_r = np.where(bad, np.nan, se_r)
        se_t = np.where(bad, np.nan, se_t)
    return CohortStats(theta0, se_r, se_t)


def old_simulate_rung(
    tab,
    n: int,
    g: int,
    *,
    seed: int,
    simulations: int,
    block_size: int,
    w_pass: float,
    w_fail: float,
    effect: float,
    bound_level: float,
    batch_size: int | None = None,
    keep_cohorts: bool = False,
    progress: object = None,
) -> plan_module.RungResult:
    """Simulate one rung of n tasks in g clusters (see the module docstring)."""
    if n < g or g < 2:
        raise ValueError("a rung needs n ≥ G ≥ 2")
    if batch_size is not None:
        batch = max(1, min(batch_size, plan_module.MAX_BATCH_SLOTS // n))
    else:
        batch = max(1, min(block_size, plan_module.DEFAULT_BATCH_SLOTS // n))
    stream = _RungStream(seed, n, g, len(tab.size), block_size)
    theta0 = np.empty(simulations)
    se_r = np.empty(simulations)
    se_t = np.empty(simulations)
    for lo in range(0, simulations, batch):
        hi = min(lo + batch, simulations)
        clusters, u = stream.take(lo, hi)
        res = plan_module.evaluate_cohorts(tab, clusters, u, n, w_pass, w_fail)
        theta0[lo:hi] = res.theta0
        se_r[lo:hi] = res.se_repository
        se_t[lo:hi] = res.se_task
        if progress is not None:
            progress(hi, simulations)

    q = plan_module.two_sided_quantile(bound_level)
    t_r = plan_module.t_quantile(q, g - 1)
    t_t = plan_module.t_quantile(q, n - 1)
    ok = ~np.isnan(theta0)
    n_ok = int(ok.sum())
    if n_ok:
        mean0 = math.fsum(theta0[ok].tolist()) / n_ok
        centred = theta0 - mean0
        theta = centred + effect
        with np.errstate(invalid="ignore"):
            succ = ok & (theta - t_r * se_r > 0) & (theta - t_t * se_t > 0)
            null = ok & (centred - t_r * se_r > 0) & (centred - t_t * se_t > 0)
        successes, null_successes = int(succ.sum()), int(null.sum())
    else:
        mean0 = None
        successes = null_successes = 0
    return plan_module.RungResult(
        task_count=n,
        simulations=simulations,
        successes=successes,
        null_successes=null_successes,
        degenerate=simulations - n_ok,
        removed_null_mean=mean0,
        df_repository=g - 1,
        df_task=n - 1,
        cohorts=CohortStats(theta0, se_r, se_t) if keep_cohorts else None,
    )


# --------------------------------------------------------------------------------------------
# calibrations of many shapes


def calibration(seed: int, repos: int, max_tasks: int, p_pass: float, p_fail: float):
    """Random profiles (1..max_tasks tasks each); p_pass/p_fail 1.0 gives a stratum in every
    task (its presence column is then None), small values give degenerate cohorts."""
    rng = np.random.default_rng(seed)
    lines = []
    for r in range(repos):
        for t in range(int(rng.integers(1, max_tasks + 1))):
            has_p = rng.random() < p_pass
            has_f = (not has_p) or rng.random() < p_fail
            for has, label, mu in ((has_p, "official-pass", 0.2), (has_f, "official-fail", -0.1)):
                if has:
                    lines.append(
                        json.dumps(
                            {
                                "stage": "calibration",
                                "repository_id": f"r{r}",
                                "task_id": f"r{r}-t{t}",
                                "class_label": label,
                                # rounded and exactly representable values as well
                                "delta_logscore": float(rng.normal(mu, 1.0))
                                if rng.random() < 0.7
                                else round(float(rng.normal(mu, 1.0)), 2),
                            }
                        )
                    )
    return parse_calibration(("\n".join(lines) + "\n").encode(), "oracle.jsonl", CFG.input)


SHAPES = [
    # (seed, repositories, max tasks per repository, p_pass, p_fail)
    (1, 6, 6, 0.6, 0.8),
    (2, 12, 25, 0.5, 0.7),
    (3, 4, 3, 1.0, 0.5),  # every task has a pass statistic: a is None
    (4, 5, 8, 0.3, 1.0),  # every task has a fail statistic: b is None
    (5, 3, 60, 1.0, 1.0),  # both None; long profiles
    (6, 9, 2, 0.15, 0.9),  # rare pass statistics: many degenerate cohorts
    (7, 2, 40, 0.5, 0.5),
    (8, 20, 10, 0.7, 0.7),
]


def same_bits(got: CohortStats, ref: CohortStats) -> None:
    for name in ("theta0", "se_repository", "se_task"):
        a, b = getattr(got, name), getattr(ref, name)
        assert a.dtype == b.dtype == np.float64 and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("shape", SHAPES, ids=[f"cal{s[0]}" for s in SHAPES])
def test_evaluate_cohorts_is_the_former_computation_bit_for_bit(shape):
    cal = calibration(*shape)
    tab = centred_tables(cal)
    c = len(cal.repositories)
    rng = np.random.default_rng(100 + shape[0])
    cases = [(2, 2), (3, 3), (2, 9), (12, 50), (12, 500)]
    for _ in range(9):
        g = int(rng.integers(2, 14))
        cases.append((g, g + int(rng.integers(0, 700))))
    degenerate = finite = 0
    for g, n in cases:
        seed = int(rng.integers(0, 2**31))
        cohorts = int(rng.integers(1, 120))
        clusters, u = _RungStream(seed, n, g, c, 64).take(0, cohorts)
        w_pass = float(rng.random())
        got = evaluate_cohorts(tab, clusters, u, n, w_pass, 1.0 - w_pass)
        ref = old_evaluate_cohorts(tab, clusters, u, n, w_pass, 1.0 - w_pass)
        same_bits(got, ref)
        degenerate += int(np.isnan(ref.theta0).sum())
        finite += int((~np.isnan(ref.theta0)).sum())
    assert finite > 0  # the comparison covers real estimates, not only NaNs
    if shape[3] < 0.2:
        assert degenerate > 0  # and degenerate cohorts where a stratum is rare


def test_presence_counts_without_packing_are_the_same(monkeypatch):
    # a batch of PACK slots or more counts each stratum with its own running sum
    cal = calibration(2, 12, 25, 0.5, 0.7)
    tab = centred_tables(cal)
    clusters, u = _RungStream(9, 300, 12, len(cal.repositories), 100).take(0, 150)
    packed = evaluate_cohorts(tab, clusters, u, 300, 0.3, 0.7)
    monkeypatch.setattr(plan_module, "PACK", 1.0)
    separate = evaluate_cohorts(tab, clusters, u, 300, 0.3, 0.7)
    same_bits(separate, packed)
    same_bits(separate, old_evaluate_cohorts(tab, clusters, u, 300, 0.3, 0.7))


def test_allocation_is_the_former_allocation():
    # the leftover units' ranks are now the inverse permutation by an argsort instead of
    # put_along_axis: the same integers, ties (equal sizes) and no leftovers included
    rng = np.random.default_rng(5)
    for _ in range(400):
        g = int(rng.integers(2, 25))
        n = g + int(rng.integers(0, 1200))
        m = rng.integers(1, int(rng.integers(2, 60)), size=(int(rng.integers(1, 300)), g))
        if rng.random() < 0.3:
            m[:] = m[:, :1]
        got, want = allocate(m, n), old_allocate(m, n)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _same(got, want) -> None:
    for a, b in zip(got, want, strict=True):
        assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflowing inputs, in both versions
def test_the_jackknives_are_the_former_ones_bit_for_bit():
    # the NaN marks are set only when a cohort needs one, and the checks use array methods:
    # every result (NaN positions, 0-d results for one cohort) is the former one
    rng = np.random.default_rng(6)
    for trial in range(300):
        lead = [(), (1,), (int(rng.integers(1, 40)),), (3, int(rng.integers(1, 9)))][trial % 4]
        k = int(rng.integers(1, 15))
        sp, sf = rng.normal(size=(*lead, k)), rng.normal(size=(*lead, k))
        cp = rng.integers(0, 4, size=(*lead, k)).astype(float)
        cf = rng.integers(0, 4, size=(*lead, k)).astype(float)
        if trial % 7 == 0:
            sp[..., 0] = np.inf
        if trial % 11 == 0:
            sf[..., -1] = np.nan
        w = float(rng.random())
        _same(
            cluster_jackknife_two_stratum(sp, cp, sf, cf, w, 1 - w),
            old_cluster_jackknife_two_stratum(sp, cp, sf, cf, w, 1 - w),
        )
        n = int(rng.integers(1, 60))
        a = (rng.random((*lead, n)) < rng.random()).astype(float)
        b = (rng.random((*lead, n)) < rng.random()).astype(float)
        x, y = rng.normal(size=(*lead, n)) * a, rng.normal(size=(*lead, n)) * b
        if trial % 9 == 0:
            x = x * 1e308
        for args in (
            (x, a, y, b),
            (x, None, y, b),
            (x, a, y, None),
            (x, None, y, None),
        ):
            _same(
                unit_jackknife_two_stratum_filled(*args, w, 1 - w),
                old_unit_jackknife_two_stratum_filled(*args, w, 1 - w),
            )
        counts = (a.sum(axis=-1), b.sum(axis=-1))
        _same(
            unit_jackknife_two_stratum_filled(x, a, y, b, w, 1 - w, *counts),
            old_unit_jackknife_two_stratum_filled(x, a, y, b, w, 1 - w, *counts),
        )


@pytest.mark.parametrize(("lo_hi", "block"), [((0, 1000), 1000), ((0, 2500), 1000), ((0, 130), 7)])
def test_draws_are_the_former_draws(lo_hi, block):
    lo, hi = lo_hi
    for step in (1, 17, 333, hi):
        new, old = _RungStream(11, 37, 5, 8, block), _RungStream(11, 37, 5, 8, block)
        for a in range(lo, hi, step):
            b = min(a + step, hi)
            c1, u1 = new.take(a, b)
            c2, u2 = old_take(old, a, b)
            assert c1.tobytes() == c2.tobytes() and u1.tobytes() == u2.tobytes()
            assert u1.flags.c_contiguous and u1.shape == (b - a, 37)


# --------------------------------------------------------------------------------------------
# whole plans: the same bytes with the former simulation swapped in


def plan_bytes(cfg, cal, el, sims, batch=None) -> bytes:
    p = build_plan(
        cfg,
        cal,
        el,
        spec_digest="sha256:" + "0" * 64,
        amendment_version="v",
        simulations=sims,
        batch_size=batch,
    )
    return canonical_bytes_nl(p)


@pytest.mark.parametrize(
    ("which", "eligible", "sims", "batch", "frozen"),
    [
        ("sample", (500, 12, 210, 430), 600, None, {}),
        ("sample", (120, 12, 210, 430), 700, 333, {}),
        ("sample", (640, 12, 1, 639), 300, None, {"block_size": 64}),
        ("sample", (75, 3, 40, 35), 900, 100, {"seed": 7}),
        ("cal2", (300, 5, 100, 200), 400, None, {"seed": 123, "block_size": 250}),
        ("cal6", (60, 4, 20, 40), 500, None, {}),
        ("cal5", (200, 3, 50, 150), 400, 37, {}),
    ],
)
def test_plans_are_the_former_plans_byte_for_byte(
    monkeypatch, which, eligible, sims, batch, frozen
):
    cal = (
        read_calibration(SAMPLE, CFG.input)
        if which == "sample"
        else calibration(*next(s for s in SHAPES if f"cal{s[0]}" == which))
    )
    cfg = cfg_with(**frozen) if frozen else CFG
    el = Eligible(*eligible)
    new = plan_bytes(cfg, cal, el, sims, batch)
    monkeypatch.setattr(plan_module, "simulate_rung", old_simulate_rung)
    monkeypatch.setattr(plan_module, "evaluate_cohorts", old_evaluate_cohorts)
    monkeypatch.setattr(_RungStream, "take", old_take)
    assert plan_bytes(cfg, cal, el, sims, batch) == new


@pytest.mark.parametrize("span", [1, 7, 100, 333, 10**6])
def test_the_cluster_jackknife_span_does_not_change_a_rung(monkeypatch, span):
    # one cluster jackknife over many batches' cluster figures is the per-batch one, row for
    # row; spans smaller than a batch, spans that split a block and one span for all included
    cal = calibration(6, 9, 2, 0.15, 0.9)  # many degenerate cohorts
    tab = centred_tables(cal)
    kw = dict(
        seed=5, simulations=1234, block_size=100, w_pass=0.4, w_fail=0.6, effect=0.1,
        bound_level=0.95, batch_size=37, keep_cohorts=True,
    )  # fmt: skip
    want = old_simulate_rung(tab, 60, 4, **kw)
    monkeypatch.setattr(plan_module, "CLUSTER_SPAN", span)
    got = plan_module.simulate_rung(tab, 60, 4, **kw)
    same_bits(got.cohorts, want.cohorts)
    assert got.degenerate == want.degenerate > 0
    assert (got.successes, got.null_successes) == (want.successes, want.null_successes)
    assert repr(got.removed_null_mean) == repr(want.removed_null_mean)
