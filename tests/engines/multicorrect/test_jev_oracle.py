"""The vectorized scorer against a plain-Python reference written from the study page."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jev_helpers import CONFIG, TEST, VAL, config, exact_ece, pair, ref_metrics

from prereg.engines.multicorrect import (
    BinaryOutput,
    Packed,
    binary_ece,
    engine_config,
    evaluate_test,
    fit_threshold,
    pack,
    threshold_curve,
)
from prereg.engines.multicorrect.scoring import grid_rank, retrospective_curve, split_metrics
from prereg.errors import UserError

CFG = engine_config(CONFIG)
GRID = [k / 100 for k in range(101)]


@st.composite
def scored_list(draw, rid):
    m = draw(st.integers(2, 7))
    if draw(st.booleans()):
        # integer hundredths: probabilities sit exactly on grid thresholds, with many ties
        cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=m - 1, max_size=m - 1)))
        counts = np.diff([0, *cuts, 100])
        probs = [int(c) / 100 for c in counts]
    else:
        w = draw(st.lists(st.floats(0.0, 1.0), min_size=m, max_size=m))
        s = math.fsum(w)
        probs = [x / s for x in w] if s > 0 else [1.0 / m] * m
    correct = draw(st.sets(st.integers(0, m - 1), max_size=m))
    refused = draw(st.integers(0, 9)) == 0
    return {"rid": rid, "probs": None if refused else probs, "correct": correct, "m": m}


@st.composite
def split(draw, prefix, name):
    n = draw(st.integers(1, 25))
    return [pair(**draw(scored_list(f"{prefix}{i}")), split=name) for i in range(n)]


FIGURES = [
    "lists",
    "exact_count",
    "exact_set_accuracy",
    "tp",
    "fp",
    "fn",
    "micro_precision",
    "micro_recall",
    "gap_count",
    "below_uniform_count",
    "below_uniform_options",
    "below_uniform_share",
    "top_k_exact_count",
    "top_k_exact_share",
    "no_correct_count",
    "no_correct_max",
    "refusals",
    "refusals_empty_correct",
    "refusals_nonempty_correct",
]


def _close(a, b):
    if a is None or b is None:
        return a is b
    return a == pytest.approx(b, rel=1e-12, abs=1e-12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split("v", VAL), st.sampled_from(GRID))
def test_split_metrics_match_reference(pairs, t):
    got = split_metrics(pack(pairs, CFG, VAL), t, CFG)
    ref = ref_metrics(pairs, t)
    for f in FIGURES:
        assert getattr(got, f) == ref[f], f
    for f in ("micro_f1", "gap_mean", "no_correct_mean_max"):
        assert _close(getattr(got, f), ref[f]), f


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split("v", VAL))
def test_curve_and_fit_match_reference(pairs):
    curve = threshold_curve(pairs, CONFIG)
    refs = [ref_metrics(pairs, t) for t in GRID]
    assert [p.threshold for p in curve] == GRID
    for p, r in zip(curve, refs, strict=True):
        assert (p.exact_count, p.tp, p.fp, p.fn) == (r["exact_count"], r["tp"], r["fp"], r["fn"])
        assert p.micro_precision == r["micro_precision"]
        assert _close(p.micro_f1, r["micro_f1"])
    counts = [r["exact_count"] for r in refs]
    fit = fit_threshold(pairs, CONFIG)
    assert fit.threshold == GRID[counts.index(max(counts))]
    # the fitted split's figures agree with the curve at the chosen point
    point = curve[fit.numerator]
    assert fit.validation.exact_count == point.exact_count and fit.validation.tp == point.tp


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split("v", VAL), split("t", TEST))
def test_retrospective_curve_pools_both_splits(val, test):
    pv, pt = pack(val, CFG, VAL), pack(test, CFG, TEST)
    both = Packed.concat([pv, pt])
    from_pairs = threshold_curve(val + test, CONFIG)
    assert threshold_curve(both, CONFIG) == from_pairs
    for p, t in zip(from_pairs, GRID, strict=True):
        r = ref_metrics(val + test, t)
        assert (p.exact_count, p.tp, p.fp, p.fn) == (r["exact_count"], r["tp"], r["fp"], r["fn"])
    fit = fit_threshold(pv, CONFIG)
    got = evaluate_test(fit, pt, CONFIG)
    ref = ref_metrics(test, fit.threshold)
    assert got.exact_count == ref["exact_count"] and got.tp == ref["tp"]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0]),
                st.floats(0.0, 1.0),
            ),
            st.integers(0, 1),
        ),
        max_size=40,
    ),
    st.booleans(),
)
def test_binary_ece_matches_exact_rational_oracle(samples, exclude):
    outs = [BinaryOutput("r", j, q, y) for j, (q, y) in enumerate(samples)]
    got = binary_ece(outs, exclude, config=CONFIG)
    ref = exact_ece([q for q, _ in samples], [y for _, y in samples], exclude)
    if ref is None:
        assert got is None
    else:
        assert got == pytest.approx(float(ref), abs=1e-12)


def test_large_random_split_matches_reference():
    rng = np.random.default_rng(7)
    pairs = []
    for i in range(400):
        m = int(rng.integers(2, 12))
        counts = rng.multinomial(20, np.ones(m) / m)  # multiples of 0.05: many ties
        probs = [int(c) / 20 for c in counts]
        correct = set(rng.choice(m, size=int(rng.integers(0, m + 1)), replace=False).tolist())
        pairs.append(pair(f"r{i}", None if rng.random() < 0.05 else probs, correct, m=m))
    pk = pack(pairs, CFG, VAL)
    for t in GRID:
        got = split_metrics(pk, t, CFG)
        ref = ref_metrics(pairs, t)
        for f in FIGURES:
            assert getattr(got, f) == ref[f], (t, f)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split("v", VAL), split("t", TEST), st.sampled_from([None, 0, 2, 4]))
def test_the_retrospective_curve_sums_the_splits_counts(val, test, decimals):
    """retrospective_curve (the fit curve's counts plus the test split's) gives the points of
    the curve over both splits packed together, the computation it replaced."""
    pv, pt = pack(val, CFG, VAL), pack(test, CFG, TEST)
    fit = fit_threshold(pv, CONFIG, rounding_decimals=decimals)
    got = retrospective_curve(fit, pt, CONFIG, rounding_decimals=decimals)
    assert got == threshold_curve(Packed.concat([pv, pt]), CONFIG, rounding_decimals=decimals)
    assert retrospective_curve(fit, test, CONFIG, rounding_decimals=decimals) == got


def test_the_retrospective_curve_refuses_shared_ids_and_an_empty_split():
    val = [pair("a", [0.5, 0.5], {0}), pair("b", None, {1})]
    fit = fit_threshold(val, CONFIG)
    with pytest.raises(UserError, match="share request ids"):
        retrospective_curve(fit, [pair("a", [0.5, 0.5], {0}, split=TEST)], CONFIG)
    with pytest.raises(UserError, match="no lists of split"):
        retrospective_curve(fit, [], CONFIG)
    with pytest.raises(UserError, match="FittedThreshold"):
        retrospective_curve(None, [pair("c", [1.0, 0.0], {0}, split=TEST)], CONFIG)


def _grid_config(den: int, first: int, step: int, upto: int):
    """The engine configuration with the grid (first + k·step) / den, k = 0, 1, ... up to at
    most ``upto``."""
    last = first + step * ((upto - first) // step)
    grid = {"denominator": den, "first": first, "last": last, "step": step}
    return engine_config(config({"threshold-grid": grid}))


def _grid_values(cfg, rng) -> np.ndarray:
    """Values on, just beside and between a grid's thresholds, the ends, infinities and signed
    zeros, and uniform draws."""
    ts = cfg.thresholds()
    near = [ts, np.nextafter(ts, -np.inf), np.nextafter(ts, np.inf)]
    near += [np.nextafter(near[1], -np.inf), np.nextafter(near[2], np.inf)]
    mids = (ts[:-1] + ts[1:]) / 2 if ts.size > 1 else ts
    fixed = [-np.inf, np.inf, -0.0, 0.0, 1.0, -1e-300, 1e-300, 2.0, -1.0, 5e-324]
    return np.concatenate([*near, mids, fixed, rng.random(5000), rng.random(200) * 3 - 1])


@pytest.mark.parametrize(
    "den, first, upto, step",
    [
        (100, 0, 100, 1),
        (100, 5, 95, 5),
        (1000, 1, 999, 7),
        (3, 0, 3, 1),
        (49, 7, 42, 7),
        (1 << 20, 3, (1 << 20) - 3, 4099),
        (10**9, 10**8, 9 * 10**8, 10**8),
        (37, 10, 10, 1),
    ],
)
def test_grid_rank_is_the_binary_search(monkeypatch, den, first, upto, step):
    """grid_rank, which replaced np.searchsorted in the curves, gives its counts exactly, and
    without falling back on it."""
    cfg = _grid_config(den, first, step, upto)
    rng = np.random.default_rng(den + step)
    v = _grid_values(cfg, rng)
    with_nan = np.concatenate([v[:50], [np.nan]])
    search = np.searchsorted
    expect, expect_nan = (search(cfg.thresholds(), x, side="right") for x in (v, with_nan))
    with monkeypatch.context() as m:
        m.setattr(np, "searchsorted", None)
        assert np.array_equal(grid_rank(v, cfg), expect)
    # NaN takes the binary search itself
    assert np.array_equal(grid_rank(with_nan, cfg), expect_nan)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 10**6).flatmap(
        lambda den: st.tuples(
            st.just(den),
            st.integers(0, den),
            st.integers(1, den),
        )
    ),
    st.lists(st.floats(allow_nan=False), min_size=1, max_size=30),
)
def test_grid_rank_is_the_binary_search_on_any_grid(grid, extra):
    den, first, step = grid
    cfg = _grid_config(den, first, step, den)
    ts = cfg.thresholds()
    v = np.concatenate(
        [ts[:50], np.nextafter(ts[:50], -np.inf), np.nextafter(ts[-50:], np.inf), extra]
    )
    assert np.array_equal(grid_rank(v, cfg), np.searchsorted(ts, v, side="right"))
