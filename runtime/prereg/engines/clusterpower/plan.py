"""The power plan: a cluster power simulation over resampled calibration repository profiles.

Given accepted calibration records (:mod:`.calibration_input`) and the eligible confirmatory
universe (N tasks in G repositories, P pass and F fail items), the plan estimates, for each rung
n of a task-count ladder, the share of simulated cohorts whose two planning lower bounds both
exceed 0, and selects the first rung reaching the target power.

The simulation (every constant comes from the config, none from this module):

1. Centre the records: within each stratum subtract the stratum's mean over all records
   (``math.fsum``).
2. A cohort of n tasks: G uniform draws with replacement from the C calibration profiles (a
   profile drawn twice is two clusters).  Cluster g with m_g profile tasks gets
   a_g = 1 + ⌊(n − G)·m_g / M⌋ tasks (M = Σ m_g); the units left over go one each to the
   largest integer remainders (n − G)·m_g mod M, ties to the earlier draw.  Inside a cluster
   a_g tasks are drawn with replacement (task = profile start + ⌊u·m_g⌋), each keeping its two
   statistics together.  Rungs with n < G are skipped.
3. θ̂₀ = w_pass·mean(pass) + w_fail·mean(fail), w_pass = P/(P + F), w_fail = F/(P + F).
4. θ̂ = θ̂₀ − mean(θ̂₀) + δ: the rung's Monte Carlo mean of θ̂₀ (``math.fsum`` over the
   non-degenerate cohorts of the rung, so the order of cohorts does not matter) is removed and
   recorded, and the smallest effect δ is added.
5. Delete-one jackknife SEs at the repository level (units: the G draws) and at the task level
   (units: the n task slots), closed forms from :mod:`prereg.stats.resampling`.
6. Success: θ̂ − t(q, G − 1)·SE_repository > 0 and θ̂ − t(q, n − 1)·SE_task > 0, with q the
   upper quantile of the configured two-sided level.  A degenerate cohort (a stratum with
   fewer than 2 statistics, an undefined estimate or leave-one-out estimate) is a failure and
   is counted.  ``null_successes`` counts the same test with δ = 0 on the same draws.
7. Ladder: the configured rungs below N, then N itself.  The selected task count is the first
   rung with den·successes ≥ num·simulations (target power num/den, exact integers).
8. Randomness: ``Generator(PCG64(SeedSequence(seed, spawn_key=(n, block))))`` per (rung task
   count, block of ``block_size`` cohorts): ``integers(0, C, size=(block_size, G))`` then
   ``random((block_size, n))`` drawn row by row as needed (a partial last block uses its first
   rows, so a smaller run is a prefix of a larger one).  Per-cohort reductions are row
   reductions (``reduceat``, row sums), so results do not depend on the evaluation batch.

Statuses (names from the config): *powered*, *underpowered* (no rung reached the target, the
full universe included), *infeasible* with every failing reason.  The status written is the
verdict of the registered rule (constant ``power_plan``'s ``status_hypothesis``) over the
plan's figures (:mod:`.figures`), decided by the shared evaluator; the engine's own test below
must agree, or nothing is written.  Reasons are strings
``"<code>: <detail>"`` with these codes:

- ``too_few_calibration_repositories``: fewer than min(G, min_calibration_repositories);
- ``stratum_in_too_few_calibration_repositories``: a stratum's statistics come from fewer than
  ``min_repositories_per_stratum`` repositories (one reason per stratum);
- ``too_few_eligible_repositories``: G < ``min_eligible_repositories``;
- ``no_eligible_items``: P = 0 or F = 0 (one reason per stratum);
- ``fewer_eligible_tasks_than_repositories``: N < G.

An infeasible plan simulates nothing: ``rungs`` and ``skippedRungs`` are empty and
``selectedTaskCount`` is null (the plan's keys are camelCase, see :mod:`prereg.outputs`).

Warnings (strings ``"<code>: <detail>"``): ``stratum_share_exceeds_universe`` when the
calibration share of tasks holding a stratum's statistic exceeds P/N (F/N) of the universe
(exact integer comparison): the planning assumption makes power optimistic then.

Configuration (:class:`~.config.PlanConfig`, read by :func:`~.config.plan_config` from the
compiled study, by the spec's names):

constant ``frozen`` (recorded whole in the plan):
    smallest_effect                        δ in the statistic's unit (number)
    target_power                           {"numerator": int, "denominator": int}
    simulations_per_rung                   cohorts per rung (int)
    seed                                   SeedSequence entropy (int)
    planning_method                        "cluster-t-jackknife" (this engine's method)
    final_bootstrap_replicates_per_level   recorded only, never used here (int)
    ladder                                 increasing task counts (list of int)
    block_size                             cohorts per random stream (int)
constant ``power_plan``:
    schema                                 plan schema id (string)
    confirmatory_stage                     the stage value a calibration row must not have
    error_cap                              problems listed before "… and K more" (int)
    min_calibration_repositories           floor of the calibration repository requirement
    min_repositories_per_stratum           repositories each stratum must come from
    min_eligible_repositories              smallest eligible repository count
    bound_two_sided_level                  level of both t lower bounds (e.g. 0.95)
    statuses                               {"powered", "underpowered", "infeasible"} -> names
the record contract with role ``calibration``:
    its fields by role (stage, repository, task, class, statistic) name the JSON fields read;
    the stage field's one allowed value is the calibration stage; the class field's two
    allowed values are the pass label and the fail label, in that order.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from prereg.digest import digest_hex
from prereg.outputs import camel_keys
from prereg.stats.resampling import (
    cluster_jackknife_two_stratum,
    t_quantile,
    two_sided_quantile,
    unit_jackknife_two_stratum_filled,
)

from .calibration_input import Calibration
from .config import PlanConfig

# Slots evaluated together at most (memory bound); results do not depend on it.
MAX_BATCH_SLOTS = 1 << 20
# Slots per batch when no batch size is given: a batch's float64 slot arrays (512 KiB each)
# stay in the core's cache between the dozen passes over them, which takes about a third off
# the simulation against whole blocks of 1,000 cohorts; results do not depend on it either.
DEFAULT_BATCH_SLOTS = 1 << 16
# Cohorts whose cluster figures one cluster-jackknife call takes at most (memory bound: four
# float64 values per cluster and cohort); results do not depend on it.
CLUSTER_SPAN = 4096


# --------------------------------------------------------------------------------------------
# the eligible universe and feasibility


@dataclass(frozen=True)
class Eligible:
    task_count: int
    repository_count: int
    pass_items: int
    fail_items: int

    def as_dict(self) -> dict:
        return {
            "task_count": self.task_count,
            "repository_count": self.repository_count,
            "pass_items": self.pass_items,
            "fail_items": self.fail_items,
        }


def infeasibility_reasons(cfg: PlanConfig, cal: Calibration, el: Eligible) -> list[str]:
    """Every reason the frozen requirements cannot be met (empty when feasible)."""
    reasons = []
    g = el.repository_count
    c = len(cal.repositories)
    need = min(g, cfg.min_calibration_repositories)
    if c < need:
        reasons.append(
            f"too_few_calibration_repositories: {c} calibration repositories, fewer than "
            f"min(eligible repository count {g}, {cfg.min_calibration_repositories}) = {need}"
        )
    for stratum, label in (("pass", cfg.input.pass_label), ("fail", cfg.input.fail_label)):
        k = cal.repositories_with(stratum)
        if k < cfg.min_repositories_per_stratum:
            reasons.append(
                f"stratum_in_too_few_calibration_repositories: {label} statistics come from "
                f"{k} calibration repositories, fewer than {cfg.min_repositories_per_stratum}"
            )
    if g < cfg.min_eligible_repositories:
        reasons.append(
            f"too_few_eligible_repositories: eligible repository count {g} is below "
            f"{cfg.min_eligible_repositories}"
        )
    for label, items in (
        (cfg.input.pass_label, el.pass_items),
        (cfg.input.fail_label, el.fail_items),
    ):
        if items == 0:
            reasons.append(f"no_eligible_items: 0 eligible {label} items")
    if el.task_count < g:
        reasons.append(
            f"fewer_eligible_tasks_than_repositories: eligible task count {el.task_count} is "
            f"below the eligible repository count {g}"
        )
    return reasons


def composition_warnings(cfg: PlanConfig, cal: Calibration, el: Eligible) -> list[str]:
    """Warn when the calibration share of tasks with a stratum exceeds the universe's bound."""
    out = []
    t = len(cal.task_ids)
    n = el.task_count
    if t == 0 or n == 0:
        return out
    for label, with_stratum, items in (
        (cfg.input.pass_label, cal.records_pass, el.pass_items),
        (cfg.input.fail_label, cal.records_fail, el.fail_items),
    ):
        if with_stratum * n > items * t:  # with_stratum / t > items / n, exactly
            out.append(
                f"stratum_share_exceeds_universe: {with_stratum}/{t} calibration tasks hold a "
                f"statistic of class {label}, more than the eligible universe can have "
                f"({items} {label} items / {n} tasks); the planning assumption that a cohort's "
                f"stratum composition follows the calibration tasks makes power optimistic"
            )
    return out


def ladder_for(cfg: PlanConfig, el: Eligible) -> tuple[list[int], list[int]]:
    """(evaluated rungs, skipped rungs): rungs below N then N; those below G are skipped."""
    rungs = [r for r in cfg.ladder if r < el.task_count] + [el.task_count]
    skipped = [r for r in rungs if r < el.repository_count]
    return [r for r in rungs if r >= el.repository_count], skipped


# --------------------------------------------------------------------------------------------
# the simulation


@dataclass(frozen=True)
class Tables:
    """Centred calibration profiles, laid out for np.take."""

    start: np.ndarray  # int64 (C,)
    size: np.ndarray  # int64 (C,)
    size_f: np.ndarray  # float64 (C,)
    x: np.ndarray  # float64 (T,) centred pass statistic, 0 where absent
    y: np.ndarray  # float64 (T,) centred fail statistic, 0 where absent
    a: np.ndarray | None  # float64 (T,) pass presence, None when every task has one
    b: np.ndarray | None  # float64 (T,) fail presence, None when every task has one


def centred_tables(cal: Calibration) -> Tables:
    def centre(values: np.ndarray, has: np.ndarray) -> np.ndarray:
        present = values[has]
        out = np.zeros(values.shape, dtype=np.float64)
        if present.size:
            mean = math.fsum(present.tolist()) / present.size
            out[has] = present - mean
        return out

    a = None if cal.has_pass.all() else cal.has_pass.astype(np.float64)
    b = None if cal.has_fail.all() else cal.has_fail.astype(np.float64)
    return Tables(
        start=cal.profile_start.astype(np.int64),
        size=cal.profile_size.astype(np.int64),
        size_f=cal.profile_size.astype(np.float64),
        x=centre(cal.pass_value, cal.has_pass),
        y=centre(cal.fail_value, cal.has_fail),
        a=a,
        b=b,
    )


class _RungStream:
    """The draws of one rung, served in increasing cohort ranges, block by block."""

    def __init__(self, seed: int, n: int, g: int, c: int, block_size: int):
        self.seed, self.n, self.g, self.c, self.block_size = seed, n, g, c, block_size
        self.block = -1
        self.rng: np.random.Generator | None = None
        self.clusters: np.ndarray | None = None
        self.next_row = 0  # rows of u already drawn in the current block

    def _open(self, block: int) -> None:
        ss = np.random.SeedSequence(self.seed, spawn_key=(self.n, block))
        self.rng = np.random.Generator(np.random.PCG64(ss))
        self.clusters = self.rng.integers(0, self.c, size=(self.block_size, self.g))
        self.block = block
        self.next_row = 0

    def take(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Cluster draws (hi−lo, G) and uniforms (hi−lo, n) of cohorts lo..hi−1 (in order).

        The uniforms are drawn straight into one array (``Generator.random(out=…)`` fills it
        row-major from the same stream, the same doubles as ``random((rows, n))``), so a
        range that crosses a block boundary is not drawn into pieces and joined."""
        u = np.empty((hi - lo, self.n))
        cs = []
        pos = lo
        while pos < hi:
            block, row = divmod(pos, self.block_size)
            if block != self.block:
                self._open(block)
            if row != self.next_row:
                raise RuntimeError("cohort ranges must be requested in order")
            end = min(hi - pos, self.block_size - row)
            cs.append(self.clusters[row : row + end])
            self.rng.random(out=u[pos - lo : pos - lo + end])
            self.next_row = row + end
            pos += end
        return (cs[0] if len(cs) == 1 else np.concatenate(cs)), u


def allocate(m: np.ndarray, n: int) -> np.ndarray:
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
    if left.any():
        order = (-r).argsort(axis=1, kind="stable")
        # each draw's rank in that order: the inverse permutation, itself an argsort (the
        # ranks are distinct, so any sort gives it)
        ranks = order.argsort(axis=1)
        alloc += ranks < left[:, None]
    return alloc


@dataclass
class CohortStats:
    """Per-cohort results of one rung (NaN θ̂₀ and SEs for degenerate cohorts)."""

    theta0: np.ndarray
    se_repository: np.ndarray
    se_task: np.ndarray


# Presence counts of both strata share one segment sum: pass presence + PACK · fail presence,
# exact in float64 while a batch holds fewer than PACK slots (every partial sum an integer
# below PACK² ≤ 2⁵³, so no rounding whatever the order of summation).
PACK_BITS = 26
PACK = float(1 << PACK_BITS)


def _presence_counts(
    a: np.ndarray | None, b: np.ndarray | None, seg: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per-segment sums of the 0.0/1.0 slot arrays ``a`` and ``b`` (None stays None): the
    float64 values of ``np.add.reduceat`` of each, from one ``reduceat`` when both are given.

    ``reduceat`` pays per segment (a dozen instructions a slot here), so one pass over the
    packed sum instead of two saves about a third of it.  (A running sum read at the segment
    ends takes fewer instructions still but more time: ``cumsum``'s chain of dependent
    additions through memory runs at a fraction of ``reduceat``'s speed.)"""
    if a is not None and b is not None and a.shape[0] < PACK:
        both = np.multiply(b, PACK)
        both += a
        packed = np.add.reduceat(both, seg).astype(np.int64)
        fail = packed >> PACK_BITS
        return (packed - (fail << PACK_BITS)).astype(np.float64), fail.astype(np.float64)
    return (
        None if a is None else np.add.reduceat(a, seg),
        None if b is None else np.add.reduceat(b, seg),
    )


def evaluate_cohorts(
    tab: Tables, clusters: np.ndarray, u: np.ndarray, n: int, w_pass: float, w_fail: float
) -> CohortStats:
    """θ̂₀ and both jackknife SEs for cohorts given by their draws."""
    part = _slot_figures(tab, clusters, u, n, w_pass, w_fail)
    theta0, se_r = cluster_jackknife_two_stratum(part.sx, part.ca, part.sy, part.cb, w_pass, w_fail)
    return _marked(theta0, se_r, part.theta_t, part.se_t)


@dataclass
class _SlotFigures:
    """What a batch's task slots give: the per-cluster sums and presence counts (B, G) the
    cluster jackknife needs, and the unit jackknife's θ̂ and SE per cohort (B,)."""

    sx: np.ndarray
    ca: np.ndarray
    sy: np.ndarray
    cb: np.ndarray
    theta_t: np.ndarray
    se_t: np.ndarray


def _slot_figures(
    tab: Tables, clusters: np.ndarray, u: np.ndarray, n: int, w_pass: float, w_fail: float
) -> _SlotFigures:
    """The slot-level part of :func:`evaluate_cohorts` (everything but the cluster jackknife,
    which :func:`simulate_rung` runs once over many batches' cluster figures)."""
    # (array methods rather than the np.* functions: the same C calls without the Python
    # dispatch layer, which is most of a small batch's time)
    bsz, g = clusters.shape
    alloc = allocate(tab.size.take(clusters), n)
    counts = alloc.reshape(-1)
    flat_c = clusters.reshape(-1)
    st = tab.start.take(flat_c).repeat(counts)
    sz = tab.size_f.take(flat_c).repeat(counts)
    sz *= u.reshape(-1)
    idx = st
    idx += sz.astype(np.int64)  # task = profile start + ⌊u·m_g⌋
    seg = np.empty(counts.shape[0], dtype=np.intp)
    seg[0] = 0
    np.cumsum(counts[:-1], out=seg[1:])

    # Every index lies inside its profile (u < 1 and m_g < 2⁵³ give fl(u·m_g) < m_g), so
    # mode="clip" never clips: it only spares the per-slot bounds test of mode="raise".
    x = tab.x.take(idx, mode="clip")
    y = tab.y.take(idx, mode="clip")
    a = None if tab.a is None else tab.a.take(idx, mode="clip")
    b = None if tab.b is None else tab.b.take(idx, mode="clip")
    sx = np.add.reduceat(x, seg).reshape(bsz, g)
    sy = np.add.reduceat(y, seg).reshape(bsz, g)
    # presence counts per cluster, and per cohort as their row sums (exact integers)
    ca, cb = _presence_counts(a, b, seg)
    if a is not None:
        ca = ca.reshape(bsz, g)
        a = a.reshape(bsz, n)
        na = ca.sum(axis=1)
    else:
        ca, na = alloc, None
    if b is not None:
        cb = cb.reshape(bsz, g)
        b = b.reshape(bsz, n)
        nb = cb.sum(axis=1)
    else:
        cb, nb = alloc, None
    theta_t, se_t = unit_jackknife_two_stratum_filled(
        x.reshape(bsz, n), a, y.reshape(bsz, n), b, w_pass, w_fail, na, nb
    )
    return _SlotFigures(sx, ca, sy, cb, theta_t, se_t)


def _marked(theta0, se_r, theta_t, se_t) -> CohortStats:
    """The cohort figures with every figure of a degenerate cohort NaN."""
    # the estimators mark a degenerate cohort NaN in both of their results; the combined
    # mark is needed only when one of them has any
    if not (np.isnan(theta0).any() or np.isnan(theta_t).any()):
        return CohortStats(theta0, se_r, se_t)
    bad = np.isnan(theta0) | np.isnan(theta_t) | np.isnan(se_r) | np.isnan(se_t)
    if bad.any():
        theta0 = np.where(bad, np.nan, theta0)
        se_r = np.where(bad, np.nan, se_r)
        se_t = np.where(bad, np.nan, se_t)
    return CohortStats(theta0, se_r, se_t)


def keep_freed_memory() -> None:
    """Let glibc's malloc keep the memory a batch frees for the next batch.

    Each batch allocates and frees a few dozen slot arrays of 256–512 KiB.  glibc serves those
    from fresh ``mmap`` regions or trims its heap top once more than its trim threshold is free,
    so every batch faults its pages in from the kernel again: about 100,000 page faults and
    0.2 CPU-s of system time in the canonical plan, a sixth of the whole command.  Raising the
    mmap threshold to 32 MiB (glibc's own ceiling for its dynamic threshold on 64-bit) and the
    trim threshold to 64 MiB keeps those pages in the process (its peak memory is unchanged:
    the freed blocks are reused by the next batch).  Process-wide and idempotent; a no-op where
    the C library has no ``mallopt`` (not glibc).  Memory reuse changes no computed value."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except Exception:  # no C library to ask, or not glibc's
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h> parameter numbers
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 64 << 20)


@dataclass(frozen=True)
class RungResult:
    task_count: int
    simulations: int
    successes: int
    null_successes: int
    degenerate: int
    removed_null_mean: float | None
    df_repository: int
    df_task: int
    cohorts: CohortStats | None = None

    def as_dict(self) -> dict:
        p = self.successes / self.simulations
        return {
            "task_count": self.task_count,
            "simulations": self.simulations,
            "successes": self.successes,
            "power": p,
            "mc_se": math.sqrt(p * (1.0 - p) / self.simulations),
            "degenerate": self.degenerate,
            "null_successes": self.null_successes,
            "removed_null_mean": self.removed_null_mean,
            "df_repository": self.df_repository,
            "df_task": self.df_task,
        }


def simulate_rung(
    tab: Tables,
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
    progress: Callable[[int, int], None] | None = None,
) -> RungResult:
    """Simulate one rung of n tasks in g clusters (see the module docstring)."""
    if n < g or g < 2:
        raise ValueError("a rung needs n ≥ G ≥ 2")
    if batch_size is not None:
        batch = max(1, min(batch_size, MAX_BATCH_SLOTS // n))
    else:
        batch = max(1, min(block_size, DEFAULT_BATCH_SLOTS // n))
    stream = _RungStream(seed, n, g, len(tab.size), block_size)
    theta0 = np.empty(simulations)
    se_r = np.empty(simulations)
    se_t = np.empty(simulations)
    # The cluster jackknife works on (cohorts, G) figures: it runs once per span of whole
    # batches (up to CLUSTER_SPAN cohorts) instead of once per batch, which spares its fixed
    # cost per call; it is a row-wise computation, so the figures are the same.
    span = batch * max(1, CLUSTER_SPAN // batch)
    for s in range(0, simulations, span):
        e = min(s + span, simulations)
        sx, ca, sy, cb = (np.empty((e - s, g)) for _ in range(4))
        theta_t = np.empty(e - s)
        for lo in range(s, e, batch):
            hi = min(lo + batch, e)
            clusters, u = stream.take(lo, hi)
            part = _slot_figures(tab, clusters, u, n, w_pass, w_fail)
            rows = slice(lo - s, hi - s)
            sx[rows], ca[rows], sy[rows], cb[rows] = part.sx, part.ca, part.sy, part.cb
            theta_t[rows] = part.theta_t
            se_t[lo:hi] = part.se_t
            if progress is not None:
                progress(hi, simulations)
        t0, sr = cluster_jackknife_two_stratum(sx, ca, sy, cb, w_pass, w_fail)
        res = _marked(t0, sr, theta_t, se_t[s:e])
        theta0[s:e] = res.theta0
        se_r[s:e] = res.se_repository
        se_t[s:e] = res.se_task

    q = two_sided_quantile(bound_level)
    t_r = t_quantile(q, g - 1)
    t_t = t_quantile(q, n - 1)
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
    return RungResult(
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
# the plan


def _registered_status(cfg: PlanConfig, cal: Calibration, el: Eligible, rungs, engine_status):
    """The status the registered rule gives over the plan's figures (:mod:`.figures`); it must
    be the engine's own (the floors, the first rung reaching the target)."""
    from .figures import decided_status, plan_figures

    figures = plan_figures(
        calibration_repositories=len(cal.repositories),
        pass_repositories=cal.repositories_with("pass"),
        fail_repositories=cal.repositories_with("fail"),
        eligible=el.as_dict(),
        rungs=rungs,
    )
    return decided_status(cfg, figures, engine_status)


def build_plan(
    cfg: PlanConfig,
    cal: Calibration,
    el: Eligible,
    *,
    spec_digest: str,
    amendment_version: str,
    simulations: int | None = None,
    batch_size: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """The plan object (with ``selfSha256``), its keys camelCase.  ``simulations`` is the development knob."""
    canonical = simulations is None
    sims = cfg.simulations if simulations is None else simulations
    frozen = copy.deepcopy(cfg.frozen)
    if not canonical:
        frozen["simulations_per_rung"] = sims
    reasons = infeasibility_reasons(cfg, cal, el)
    warnings = composition_warnings(cfg, cal, el)
    rungs: list[dict] = []
    skipped: list[int] = []
    selected = None
    if reasons:
        status = cfg.statuses["infeasible"]
    else:
        keep_freed_memory()
        tab = centred_tables(cal)
        total_items = el.pass_items + el.fail_items
        w_pass = el.pass_items / total_items
        w_fail = el.fail_items / total_items
        evaluated, skipped = ladder_for(cfg, el)
        for i, n in enumerate(evaluated):
            cb = None
            if progress is not None:

                def cb(done, total, n=n, i=i):
                    progress(
                        f"rung {i + 1}/{len(evaluated)} (n = {n})",
                        i * total + done,
                        len(evaluated) * total,
                    )

            res = simulate_rung(
                tab,
                n,
                el.repository_count,
                seed=cfg.seed,
                simulations=sims,
                block_size=cfg.block_size,
                w_pass=w_pass,
                w_fail=w_fail,
                effect=cfg.smallest_effect,
                bound_level=cfg.bound_level,
                batch_size=batch_size,
                progress=cb,
            )
            rungs.append(res.as_dict())
            if (
                selected is None
                and cfg.target_denominator * res.successes >= cfg.target_numerator * sims
            ):
                selected = n
        status = cfg.statuses["powered" if selected is not None else "underpowered"]
    status = _registered_status(cfg, cal, el, rungs, status)
    plan = {
        "schemaVersion": cfg.schema,
        "canonical": canonical,
        "status": status,
        "reasons": reasons,
        "spec_digest": spec_digest,
        "amendment_version": amendment_version,
        "frozen": frozen,
        "eligible": el.as_dict(),
        "calibration": {
            "bytes": cal.size,
            "calibration_sha256": cal.sha256,
            "records_per_stratum": {
                cfg.input.pass_label: cal.records_pass,
                cfg.input.fail_label: cal.records_fail,
            },
            "repositories": len(cal.repositories),
            "tasks": len(cal.task_ids),
            "tasks_with_both_strata": cal.tasks_with_both,
        },
        "skipped_rungs": skipped,
        "rungs": rungs,
        "selected_task_count": selected,
        "warnings": warnings,
        "numpy_version": np.__version__,
    }
    # The keys camelCase (prereg.outputs); the spec's frozen constants and the class labels
    # keep their spelling.
    plan = camel_keys(plan, keep=frozenset({"frozen", "records_per_stratum"}))
    plan["selfSha256"] = digest_hex(plan)
    return plan
