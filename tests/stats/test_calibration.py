"""Ten-bin ECE (jev), decile ECE (d17), and the isotonic calibrator.

The PAV part (min_block_size = 1) is cross-checked with scikit-learn's IsotonicRegression: the
block yes-rates equal sklearn's fitted values.  sklearn has no minimum block size and returns
fitted values, not blocks; the block merging rule for min_block_size > 1 is ours and is checked
by its properties and hand-worked cases.

Difference from sklearn 1.9 on purpose: sklearn pools x values closer than float64 resolution
(1e-15, in ``_make_unique``) into one tie group; we tie only equal scores.  The sklearn
comparison therefore draws scores on a 1e-9 grid, and test_sklearn_pools_near_ties shows the
difference.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from prereg.stats.calibration import (
    apply_isotonic,
    decile_ece,
    ece_ten_bin,
    fit_isotonic_blocks,
    ten_bin_index,
)

SETTINGS = settings(max_examples=150, deadline=None)

unit = st.one_of(
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.1 + 0.2, 1.0]),  # edges and ties
)


@st.composite
def samples(draw, min_size=0, max_size=60, values=unit):
    n = draw(st.integers(min_value=min_size, max_value=max_size))
    q = draw(st.lists(values, min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return q, y


# ---------------------------------------------------------------- ten-bin ECE (jev convention)


def ten_bin_by_hand(q):
    # (k-1)/10 < q <= k/10 with the decimal edges as Python floats; [0, 0.1] for the first bin
    for k in range(1, 10):
        if q <= k / 10:
            return k - 1
    return 9


def ece_by_hand(q, y, bin_of, exclude_first=False):
    rows = []
    for qi, yi in zip(q, y, strict=True):
        b = bin_of(qi)
        if not (exclude_first and b == 0):
            rows.append((b, qi, yi))
    total = len(rows)
    if total == 0:
        return None
    ece = 0.0
    for b in range(10):
        members = [(qi, yi) for bb, qi, yi in rows if bb == b]
        if members:
            mq = sum(qi for qi, _ in members) / len(members)
            my = sum(yi for _, yi in members) / len(members)
            ece += len(members) / total * abs(mq - my)
    return ece


def test_ten_bin_edges_are_exact():
    # each decimal edge belongs to the bin it closes
    edges = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert ten_bin_index(edges).tolist() == list(range(10))
    assert ten_bin_index([0.0]).tolist() == [0]
    after = [math.nextafter(e, 2.0) for e in edges[:-1]]
    assert ten_bin_index(after).tolist() == list(range(1, 10))
    # The floats 0.1, 0.2, 0.4, 0.8, 0.9 are stored above k/10 and 0.3, 0.6, 0.7 below it; every
    # one of them still closes its own bin, because the comparison is with the same float.  An
    # exact rational comparison would instead put the float 0.1 into (0.1, 0.2].
    above = [k for k in range(1, 10) if Fraction(k / 10) > Fraction(k, 10)]
    below = [k for k in range(1, 10) if Fraction(k / 10) < Fraction(k, 10)]
    assert above == [1, 2, 4, 8, 9] and below == [3, 6, 7]
    assert ten_bin_index([0.1, 0.3, 0.6, 0.7]).tolist() == [0, 2, 5, 6]
    # 0.1 + 0.2 is the float after 0.3: (0.3, 0.4]
    assert 0.1 + 0.2 == math.nextafter(0.3, 1.0)
    assert ten_bin_index(0.1 + 0.2) == 3


@SETTINGS
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=50))
def test_ten_bin_index_matches_comparisons(q):
    assert ten_bin_index(q).tolist() == [ten_bin_by_hand(v) for v in q]


@SETTINGS
@given(samples(), st.booleans())
def test_ece_ten_bin_matches_hand_loop(qy, exclude):
    q, y = qy
    got = ece_ten_bin(q, y, exclude_first_bin=exclude)
    want = ece_by_hand(q, y, ten_bin_by_hand, exclude)
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want, abs=1e-12)
        assert 0.0 <= got <= 1.0


def test_ece_ten_bin_hand_values():
    # bins: 0.05 -> b0 (0.05), {0.15, 0.2} -> b1 (|0.175 - 0.5|), 0.95 -> b9 (0.05)
    q, y = [0.05, 0.15, 0.2, 0.95], [0, 1, 0, 1]
    assert ece_ten_bin(q, y) == pytest.approx((0.05 + 2 * 0.325 + 0.05) / 4, abs=1e-15)
    # excluding the first bin drops 0.05 and renormalises over the remaining 3
    assert ece_ten_bin(q, y, exclude_first_bin=True) == pytest.approx(0.7 / 3, abs=1e-15)
    # 0.1 is in the first bin, so it is excluded too
    assert ece_ten_bin([0.1, 0.0], [1, 0], exclude_first_bin=True) is None
    assert ece_ten_bin([], []) is None
    assert ece_ten_bin([0.1, 0.0], [1, 0]) == pytest.approx(0.45, abs=1e-15)
    # perfectly calibrated bins
    assert ece_ten_bin([0.5, 0.5], [0, 1]) == 0.0
    assert ece_ten_bin([1.0, 0.0], [1, 0]) == 0.0
    assert ece_ten_bin([1.0], [True]) == 0.0
    # the edge decides: 0.3 with 0.25 in one bin (means 0.275 vs 0.5), 0.1 + 0.2 alone
    assert ece_ten_bin([0.25, 0.3], [0, 1]) == pytest.approx(0.225, abs=1e-15)
    assert ece_ten_bin([0.25, 0.1 + 0.2], [0, 1]) == pytest.approx(
        0.5 * 0.25 + 0.5 * (1 - (0.1 + 0.2)), abs=1e-15
    )


def test_ece_refuses_bad_input():
    for bad_q in ([1.5], [-0.1], [math.nan]):
        with pytest.raises(ValueError):
            ece_ten_bin(bad_q, [1])
        with pytest.raises(ValueError):
            decile_ece(bad_q, [1])
    with pytest.raises(ValueError):
        ece_ten_bin([0.5], [2])
    with pytest.raises(ValueError):
        ece_ten_bin([0.5, 0.4], [1])


# ---------------------------------------------------------------- decile ECE (d17 convention)


def decile_by_hand(c):
    return min(9, math.floor(c * 10))


@SETTINGS
@given(samples())
def test_decile_ece_matches_hand_loop(cy):
    c, y = cy
    got = decile_ece(c, y)
    want = ece_by_hand(c, y, decile_by_hand)
    if want is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


def test_decile_ece_hand_values():
    # 0.3·10 rounds to 3.0 -> bin 3 (alone: |0.3 - 1|); 0.05 -> bin 0; 1.0 -> bin 9
    assert 0.3 * 10 == 3.0 and math.nextafter(0.3, 0.0) * 10 < 3.0
    assert decile_ece([math.nextafter(0.3, 0.0), 0.25], [1, 1]) == pytest.approx(
        1 - (math.nextafter(0.3, 0.0) + 0.25) / 2, abs=1e-15
    )
    assert decile_ece([0.3, 0.05, 1.0], [1, 0, 1]) == pytest.approx((0.7 + 0.05) / 3, abs=1e-15)
    # left-closed bins: 0.2 is in bin 2 with 0.25, unlike the ten-bin convention
    assert decile_ece([0.2, 0.25], [0, 1]) == pytest.approx(abs(0.225 - 0.5), abs=1e-15)
    assert ece_ten_bin([0.2, 0.25], [0, 1]) == pytest.approx(0.5 * 0.2 + 0.5 * 0.75, abs=1e-15)
    # 0.6 and 0.7 are stored below 6/10 and 7/10, yet 0.6·10 and 0.7·10 round to 6.0 and 7.0
    assert [decile_by_hand(v) for v in (0.6, 0.7)] == [6, 7]
    assert decile_ece([0.6, 0.7], [1, 1]) == pytest.approx(0.35, abs=1e-15)
    assert math.isnan(decile_ece([], []))
    assert decile_ece([0.95, 0.95], [1, 1]) == pytest.approx(0.05, abs=1e-15)


# ---------------------------------------------------------------- isotonic calibrator


def block_of(blocks, score):
    """The d17 lookup by a plain loop: last block (in lower order) with lower <= score."""
    ordered = sorted(blocks, key=lambda b: b["lower"])
    chosen = ordered[0]
    for b in ordered:
        if b["lower"] <= score:
            chosen = b
    return chosen


def check_block_invariants(blocks, scores, labels, min_n):
    assert blocks, "at least one block"
    lowers = [b["lower"] for b in blocks]
    assert lowers == sorted(set(lowers)), "strictly increasing lower bounds"
    assert all(type(b["yes"]) is int and type(b["n"]) is int for b in blocks)
    assert lowers[0] == min(scores)
    assert set(lowers) <= set(scores), "each lower bound is an observed score"
    assert sum(b["n"] for b in blocks) == len(scores)
    assert sum(b["yes"] for b in blocks) == sum(labels)
    # each block holds exactly the rows whose score falls in [lower, next lower): ties never split
    for i, b in enumerate(blocks):
        hi = blocks[i + 1]["lower"] if i + 1 < len(blocks) else math.inf
        rows = [y for s, y in zip(scores, labels, strict=True) if b["lower"] <= s < hi]
        assert (b["n"], b["yes"]) == (len(rows), sum(rows))
    rates = [Fraction(b["yes"], b["n"]) for b in blocks]
    assert rates == sorted(rates), "non-decreasing yes-rates"
    if len(scores) >= min_n:
        assert all(b["n"] >= min_n for b in blocks)
    else:
        assert len(blocks) == 1


grid_unit = st.integers(0, 10**9).map(lambda i: i / 10**9)


@SETTINGS
@given(samples(min_size=1, max_size=80, values=st.one_of(grid_unit, st.sampled_from([0.1, 0.3]))))
def test_pav_rates_match_sklearn(sy):
    scores, labels = sy
    blocks = fit_isotonic_blocks(scores, labels, 1)
    check_block_invariants(blocks, scores, labels, 1)
    fitted = IsotonicRegression(increasing=True).fit(scores, labels).predict(scores)
    ours = [(lambda b: b["yes"] / b["n"])(block_of(blocks, s)) for s in scores]
    np.testing.assert_allclose(ours, fitted, rtol=0, atol=1e-9)


@SETTINGS
@given(samples(min_size=1, max_size=80), st.integers(1, 30))
def test_min_block_size_invariants(sy, min_n):
    scores, labels = sy
    blocks = fit_isotonic_blocks(scores, labels, min_n)
    check_block_invariants(blocks, scores, labels, min_n)
    # input order does not matter
    order = np.random.default_rng(len(scores)).permutation(len(scores))
    shuffled = fit_isotonic_blocks(np.asarray(scores)[order], np.asarray(labels)[order], min_n)
    assert shuffled == blocks


def test_sklearn_pools_near_ties():
    scores, labels = [0.0, 0.0, 5e-275], [0, 0, 1]
    assert fit_isotonic_blocks(scores, labels, 1) == [
        {"lower": 0.0, "yes": 0, "n": 2},
        {"lower": 5e-275, "yes": 1, "n": 1},
    ]
    fitted = IsotonicRegression(increasing=True).fit(scores, labels).predict(scores)
    np.testing.assert_allclose(fitted, [1 / 3, 1 / 3, 1 / 3])


def test_fit_hand_cases():
    scores = [0.1, 0.2, 0.2, 0.3, 0.5, 0.6, 0.9]
    labels = [0, 1, 0, 0, 1, 1, 1]
    # PAV: tie group 0.2 (1/2) then 0.3 (0/1) violate and pool to 1/3
    assert fit_isotonic_blocks(scores, labels, 1) == [
        {"lower": 0.1, "yes": 0, "n": 1},
        {"lower": 0.2, "yes": 1, "n": 3},
        {"lower": 0.5, "yes": 1, "n": 1},
        {"lower": 0.6, "yes": 1, "n": 1},
        {"lower": 0.9, "yes": 1, "n": 1},
    ]
    # min 3: 0.1 (1 row) absorbs 0.2 -> 1/3; 0.3 violates -> 1/4; 0.5 absorbs 0.6, then 0.9 -> 3/3
    assert fit_isotonic_blocks(scores, labels, 3) == [
        {"lower": 0.1, "yes": 1, "n": 4},
        {"lower": 0.5, "yes": 3, "n": 3},
    ]
    # min 4: the trailing 3-row block is merged down; the pooled rate 4/7 ends as one block
    assert fit_isotonic_blocks(scores, labels, 4) == [{"lower": 0.1, "yes": 4, "n": 7}]
    # fewer rows than the minimum: one block
    assert fit_isotonic_blocks([0.4, 0.2], [1, 0], 5) == [{"lower": 0.2, "yes": 1, "n": 2}]
    # a single score value: ties kept together whatever the labels
    assert fit_isotonic_blocks([0.7] * 5, [1, 0, 1, 0, 0], 1) == [{"lower": 0.7, "yes": 2, "n": 5}]
    # all-yes and all-no: equal rates are not pooled when each block is big enough
    assert fit_isotonic_blocks([0.1, 0.2, 0.3], [1, 1, 1], 1) == [
        {"lower": 0.1, "yes": 1, "n": 1},
        {"lower": 0.2, "yes": 1, "n": 1},
        {"lower": 0.3, "yes": 1, "n": 1},
    ]
    assert fit_isotonic_blocks([0.1, 0.2, 0.3, 0.4], [0, 0, 0, 0], 2) == [
        {"lower": 0.1, "yes": 0, "n": 2},
        {"lower": 0.3, "yes": 0, "n": 2},
    ]
    # a decreasing relation pools everything
    assert fit_isotonic_blocks([0.1, 0.2, 0.3], [1, 1, 0], 1) == [{"lower": 0.1, "yes": 2, "n": 3}]


def test_fit_refuses_bad_input():
    with pytest.raises(ValueError):
        fit_isotonic_blocks([], [], 1)
    with pytest.raises(ValueError):
        fit_isotonic_blocks([0.1], [1], 0)
    with pytest.raises(ValueError):
        fit_isotonic_blocks([0.1], [1], 1.5)
    with pytest.raises(ValueError):
        fit_isotonic_blocks([math.nan], [1], 1)
    with pytest.raises(ValueError):
        fit_isotonic_blocks([0.1], [3], 1)


def test_apply_hand_cases():
    # listed out of order on purpose: the lookup sorts by lower bound
    blocks = [
        {"lower": 0.6, "yes": 8, "n": 8},
        {"lower": 0.2, "yes": 1, "n": 4},
        {"lower": 0.4, "yes": 3, "n": 4},
    ]
    # below every lower bound -> first block; equal to a lower bound -> that block
    got = apply_isotonic(blocks, [0.0, 0.2, 0.39, 0.4, 0.6, 1.0])
    np.testing.assert_allclose(got, [2 / 6, 2 / 6, 2 / 6, 4 / 6, 9 / 10, 9 / 10], rtol=0, atol=0)
    assert apply_isotonic(blocks, 0.5) == 4 / 6
    assert type(apply_isotonic(blocks, 0.5)) is float
    # an empty block maps to 1/2
    assert apply_isotonic([{"lower": 0.0, "yes": 0, "n": 0}], 0.3) == 0.5
    # equal lower bounds: the later listed one is the last block whose lower <= score
    dup = [{"lower": 0.5, "yes": 0, "n": 1}, {"lower": 0.5, "yes": 1, "n": 1}]
    assert apply_isotonic(dup, 0.7) == 2 / 3


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {"lower": unit, "n": st.integers(0, 50), "yes": st.integers(0, 50)}
        ).filter(lambda b: b["yes"] <= b["n"]),
        min_size=1,
        max_size=12,
        unique_by=lambda b: b["lower"],
    ),
    st.lists(st.floats(min_value=-0.5, max_value=1.5), max_size=40),
)
def test_apply_matches_loop(blocks, scores):
    got = apply_isotonic(blocks, scores)
    want = [(block_of(blocks, s)["yes"] + 1) / (block_of(blocks, s)["n"] + 2) for s in scores]
    np.testing.assert_array_equal(got, want)


def test_apply_refuses_bad_blocks():
    for bad in (
        [],
        [{"lower": 0.1, "yes": 3, "n": 2}],
        [{"lower": 0.1, "yes": -1, "n": 2}],
        [{"lower": 0.1, "yes": 1.5, "n": 2}],
        [{"lower": math.nan, "yes": 1, "n": 2}],
        [{"lower": 0.1, "yes": True, "n": 2}],
    ):
        with pytest.raises(ValueError):
            apply_isotonic(bad, [0.5])
    with pytest.raises(ValueError):
        apply_isotonic([{"lower": 0.1, "yes": 1, "n": 2}], [math.nan])


def test_fit_then_apply_round_trip():
    rng = np.random.default_rng(7)
    scores = rng.random(2000)
    labels = (rng.random(2000) < scores).astype(int)
    blocks = fit_isotonic_blocks(scores, labels, 50)
    check_block_invariants(blocks, scores.tolist(), labels.tolist(), 50)
    probs = apply_isotonic(blocks, scores)
    assert np.all(np.diff(probs[np.argsort(scores)]) >= 0)
    assert decile_ece(probs, labels) < 0.05
