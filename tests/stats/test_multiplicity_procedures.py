"""The catalogue's multiplicity procedures (Bonferroni, Holm, Hochberg, Hommel, BH, BY, fixed
sequence, serial gatekeeping, graphical) with their explicit missing-P policies.

Oracles: statsmodels' multipletests through tests/oracles.py's wrapper (statsmodels runs a
full gc.collect per call), with the method spelled out (its default "hs" is Holm-Šidák);
statsmodels counts a NaN in m, so it is called on complete vectors only. Hommel also against
closed testing with Simes tests over every subset (brute force). The graphical procedure on
hand-checked examples and on Bretz et al.'s (2009) graphs of Holm's and of fixed-sequence
testing.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.stats import multiplicity as mt
from prereg.stats.catalogue import entries
from prereg.stats.methods import MethodError
from tests.oracles import multipletests

SM = {
    "bonferroni": "bonferroni",
    "holm": "holm",
    "hochberg": "simes-hochberg",
    "hommel": "hommel",
    "benjamini-hochberg": "fdr_bh",
    "benjamini-yekutieli": "fdr_by",
}
FUNCTIONS = {
    "bonferroni": mt.bonferroni,
    "holm": mt.holm,
    "hochberg": mt.hochberg,
    "hommel": mt.hommel,
    "benjamini-hochberg": mt.benjamini_hochberg,
    "benjamini-yekutieli": mt.benjamini_yekutieli,
}

p_value = st.one_of(
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.025, 0.05, 0.5, 1.0]),  # ties
)


@settings(max_examples=40, deadline=None)
@given(st.lists(p_value, min_size=1, max_size=25), st.sampled_from(sorted(SM)))
def test_adjustments_match_statsmodels(p, method):
    ours = FUNCTIONS[method](p, alpha=0.05, missing="refuse")
    reject, theirs, _, _ = multipletests(p, alpha=0.05, method=SM[method])
    np.testing.assert_allclose(ours.extra["adjusted"], theirs, rtol=1e-12, atol=1e-15)
    # rejections decided exactly; they agree with statsmodels except where an adjusted value
    # lies within float rounding of alpha
    for r_ours, r_sm, adj in zip(ours.extra["rejected"], reject, theirs, strict=True):
        if abs(adj - 0.05) > 1e-12:
            assert r_ours == bool(r_sm)
    np.testing.assert_allclose(
        mt.adjust_p_values(p, method=method, missing="refuse"), theirs, rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("method", sorted(SM))
def test_adjustments_on_fixed_vectors(method):
    rng = np.random.default_rng(12)
    for p in (
        [0.01],
        [0.01, 0.04],
        [0.04, 0.01],
        [0.01, 0.01, 0.01],
        rng.random(200) ** 3,
        np.r_[rng.random(50) * 0.01, rng.random(50)],
    ):
        ours = FUNCTIONS[method](p, alpha=0.1, missing="refuse")
        theirs = multipletests(p, alpha=0.1, method=SM[method])[1]
        np.testing.assert_allclose(ours.extra["adjusted"], theirs, rtol=1e-12, atol=1e-15)


def simes(ps):
    s = sorted(ps)
    return min(len(s) * v / (j + 1) for j, v in enumerate(s))


def hommel_closed_testing(p):
    """Hommel = closed testing with Simes tests: adjusted p_i = max over subsets I ∋ i of the
    Simes P value of I (every subset, by brute force)."""
    m = len(p)
    out = []
    for i in range(m):
        worst = 0.0
        others = [j for j in range(m) if j != i]
        for r in range(m):
            for rest in itertools.combinations(others, r):
                worst = max(worst, simes([p[i]] + [p[j] for j in rest]))
        out.append(min(1.0, worst))
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(p_value, min_size=1, max_size=7))
def test_hommel_is_closed_simes_testing(p):
    ours = mt.hommel(p, alpha=0.05, missing="refuse").extra["adjusted"]
    np.testing.assert_allclose(ours, hommel_closed_testing(p), rtol=1e-12, atol=1e-15)


def test_bh_by_hand():
    # m = 4, p = 0.01, 0.02, 0.03, 0.5: m·p/j = 0.04, 0.04, 0.04, 0.5 (running min from top)
    r = mt.benjamini_hochberg([0.03, 0.01, 0.5, 0.02], alpha=0.04, missing="refuse")
    assert r.extra["adjusted"] == [0.04, 0.04, 0.5, 0.04]
    # the decisions use the exact products of the floats' values (the float 0.01 times 4 is
    # not the value of the float 0.04), so the adjusted value is compared with alpha exactly
    exact = r.exact["adjusted[1]"]
    assert exact == min(4 * Fraction(0.01), 2 * Fraction(0.02), Fraction(4, 3) * Fraction(0.03))
    assert r.extra["rejected"] == [exact <= Fraction(0.04)] * 2 + [False, exact <= Fraction(0.04)]


# --------------------------------------------------------------------------------------------
# missing P values


@pytest.mark.parametrize("method", sorted(SM))
def test_missing_policies(method):
    p = [0.01, None, 0.03, math.nan, 0.2]
    fn = FUNCTIONS[method]
    with pytest.raises(MethodError, match="P value at position 1 is missing.*missing: refuse"):
        fn(p, alpha=0.05, missing="refuse")
    excluded = fn(p, alpha=0.05, missing="exclude")
    present = multipletests([0.01, 0.03, 0.2], method=SM[method])[1]
    got = excluded.extra["adjusted"]
    assert got[1] is None and got[3] is None
    np.testing.assert_allclose([got[0], got[2], got[4]], present, rtol=1e-12)
    assert excluded.counts["excluded"] == 2 and excluded.counts["tested"] == 3
    assert excluded.extra["rejected"][1] is False
    as_one = fn(p, alpha=0.05, missing="as-one")
    full = multipletests([0.01, 1.0, 0.03, 1.0, 0.2], method=SM[method])[1]
    np.testing.assert_allclose(as_one.extra["adjusted"], full, rtol=1e-12)
    assert as_one.counts["excluded"] == 0 and as_one.counts["missing"] == 2


def test_existing_holm_adjust_keeps_excluding_silently():
    # the old API is unchanged: missing P values stay missing and do not count in m
    out = mt.holm_adjust([0.01, None, 0.3])
    assert out[0] == 0.02 and math.isnan(out[1]) and out[2] == 0.3
    new = mt.holm([0.01, None, 0.3], alpha=0.05, missing="exclude").extra["adjusted"]
    assert new == [0.02, None, 0.3]


# --------------------------------------------------------------------------------------------
# fixed sequence and serial gatekeeping


def test_fixed_sequence_by_hand():
    p = [0.01, 0.04, 0.03, 0.06, 0.001]
    r = mt.fixed_sequence(p, alpha=0.05, missing="refuse")
    # running max: 0.01, 0.04, 0.04, 0.06, 0.06; at alpha 0.05 the first three are rejected and
    # testing stops at the fourth (0.001 comes too late)
    assert r.extra["adjusted"] == [0.01, 0.04, 0.04, 0.06, 0.06]
    assert r.extra["rejected"] == [True, True, True, False, False]
    skip = mt.fixed_sequence([0.01, None, 0.03], alpha=0.05, missing="exclude")
    assert skip.extra["rejected"] == [True, False, True]
    stop = mt.fixed_sequence([0.01, None, 0.03], alpha=0.05, missing="as-one")
    assert stop.extra["rejected"] == [True, False, False]
    assert stop.extra["adjusted"] == [0.01, 1.0, 1.0]


@pytest.mark.parametrize("within", ["bonferroni", "holm", "hochberg", "hommel"])
def test_serial_gatekeeping_by_hand(within):
    # families of sizes 2, 3, 1: F1 = (0.01, 0.02), F2 = (0.03, 0.001, 0.2), F3 = (0.004)
    p = [0.01, 0.02, 0.03, 0.001, 0.2, 0.004]
    r = mt.serial_gatekeeping(p, families=[2, 3, 1], within=within, alpha=0.05, missing="refuse")
    f1 = multipletests(p[:2], method=SM[within])[1]
    f2 = multipletests(p[2:5], method=SM[within])[1]
    f3 = multipletests(p[5:], method=SM[within])[1]
    gate1 = max(f1)
    gate2 = max(gate1, *np.maximum(f2, gate1))
    expected = list(f1) + list(np.maximum(f2, gate1)) + list(np.maximum(f3, gate2))
    np.testing.assert_allclose(r.extra["adjusted"], expected, rtol=1e-12)
    # F1 is all rejected at 0.05; F2 holds 0.2, never rejected: F3 is not reached
    assert r.extra["rejected"][:2] == [True, True]
    assert r.extra["rejected"][4] is False and r.extra["rejected"][5] is False
    assert r.extra["families"] == [2, 3, 1]


def test_serial_gatekeeping_exclude_passes_over_an_empty_family():
    p = [0.01, None, 0.02]
    r = mt.serial_gatekeeping(p, families=[1, 1, 1], within="holm", alpha=0.05, missing="exclude")
    assert r.extra["rejected"] == [True, False, True]
    r = mt.serial_gatekeeping(p, families=[1, 1, 1], within="holm", alpha=0.05, missing="as-one")
    assert r.extra["rejected"] == [True, False, False]
    with pytest.raises(MethodError, match=r"add up to 4, but there are 3 P values"):
        mt.serial_gatekeeping(p, families=[2, 2], within="holm", alpha=0.05, missing="as-one")


# --------------------------------------------------------------------------------------------
# graphical procedure

# Two primary hypotheses H1, H2 (weight 1/2 each); H1 passes all of its weight to its
# secondary H3, H2 to its secondary H4; H3 passes on to H2 and H4 to H1.
W = [Fraction(1, 2), Fraction(1, 2), 0, 0]
G = [[0, 0, 1, 0], [0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 0, 0]]


def test_graphical_hand_checked_example():
    p = [0.01, 0.005, 0.015, 0.022]
    r = mt.graphical(p, weights=W, transitions=G, alpha=0.025, missing="refuse")
    # By hand (alpha 0.025): H1 0.01 <= 0.0125 and H2 0.005 <= 0.0125, reject H2 (least p/w).
    # H2's weight passes to H4 (w = 1/2, 1/2 on H1, H4); g_34 becomes g_34 + g_32·g_24 = 1.
    # H1 0.01 <= 0.0125: reject; its weight passes to H3 (w3 = 1/2, w4 = 1/2).
    # H3 0.015 > 0.0125 and H4 0.022 > 0.0125: stop. Rejected: H1, H2.
    assert r.extra["rejected"] == [True, True, False, False]
    # Adjusted: H2 0.005/0.5 = 0.01; H1 0.01/0.5 = 0.02; then H3 0.015/0.5 = 0.03 < H4's
    # 0.022/0.5 = 0.044: H3 0.03; H3's weight goes to H4 (w4 = 1): max(0.022, 0.03) = 0.03.
    assert [r.exact[f"adjusted[{i}]"] for i in range(4)] == [
        Fraction(0.01) * 2,
        Fraction(0.005) * 2,
        Fraction(0.015) * 2,
        Fraction(0.015) * 2,
    ]
    assert r.extra["rejection_order"] == [1, 0]
    # at alpha 0.05 everything falls: adjusted 0.03 <= 0.05
    r = mt.graphical(p, weights=W, transitions=G, alpha=0.05, missing="refuse")
    assert r.extra["rejected"] == [True, True, True, True]


@settings(max_examples=30, deadline=None)
@given(st.lists(p_value, min_size=2, max_size=6))
def test_graphical_holm_graph_is_holm(p):
    # Bretz et al. (2009), section 3: Holm's procedure is the graph with weights 1/m and
    # g_ij = 1/(m − 1)
    m = len(p)
    w = [Fraction(1, m)] * m
    g = [[0 if i == j else Fraction(1, m - 1) for j in range(m)] for i in range(m)]
    ours = mt.graphical(p, weights=w, transitions=g, alpha=0.05, missing="refuse")
    np.testing.assert_allclose(
        ours.extra["adjusted"], multipletests(p, method="holm")[1], rtol=1e-12, atol=1e-15
    )


@settings(max_examples=30, deadline=None)
@given(st.lists(p_value, min_size=1, max_size=6))
def test_graphical_chain_is_fixed_sequence(p):
    m = len(p)
    w = [1] + [0] * (m - 1)
    g = [[1 if j == i + 1 else 0 for j in range(m)] for i in range(m)]
    ours = mt.graphical(p, weights=w, transitions=g, alpha=0.05, missing="refuse")
    fixed = mt.fixed_sequence(p, alpha=0.05, missing="refuse")
    assert ours.extra["adjusted"] == fixed.extra["adjusted"]


def test_graphical_missing_policies():
    p = [0.01, None, 0.015, 0.022]
    # exclude: H2 leaves the graph by the update, its weight passing to H4 (w = 1/2, 0, 0, 1/2)
    r = mt.graphical(p, weights=W, transitions=G, alpha=0.025, missing="exclude")
    assert r.counts["excluded"] == 1
    # H1 0.01 <= 0.0125: reject, weight to H3 (1/2): H3 0.015 > 0.0125, H4 0.022 > 0.0125
    assert r.extra["rejected"] == [True, False, False, False]
    # as-one: H2 never rejected, its weight never passed on: H4 keeps weight 0
    r = mt.graphical(p, weights=W, transitions=G, alpha=0.025, missing="as-one")
    assert r.extra["rejected"] == [True, False, False, False]
    assert r.extra["adjusted"][3] == 1.0


def test_graphical_refuses_a_bad_graph():
    with pytest.raises(MethodError, match=r"the weights add up to .* > 1"):
        mt.graphical(
            [0.1, 0.2],
            weights=[0.6, 0.6],
            transitions=[[0, 1], [1, 0]],
            alpha=0.05,
            missing="refuse",
        )
    with pytest.raises(MethodError, match=r"transitions\[1\]\[1\] must be 0"):
        mt.graphical(
            [0.1, 0.2],
            weights=[0.5, 0.5],
            transitions=[[0, 1], [0, 1]],
            alpha=0.05,
            missing="refuse",
        )
    with pytest.raises(MethodError, match=r"transitions\[0\] adds up to"):
        mt.graphical(
            [0.1, 0.2, 0.3],
            weights=["1/3"] * 3,
            transitions=[[0, 0.7, 0.7], [0, 0, 0], [0, 0, 0]],
            alpha=0.05,
            missing="refuse",
        )
    with pytest.raises(MethodError, match=r"weights\[0\] must be a number or a fraction"):
        mt.graphical([0.1], weights=["half"], transitions=[[0]], alpha=0.05, missing="refuse")


# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mt.holm([0.1], alpha=0.05, missing="drop"), "missing must be one of refuse"),
        (lambda: mt.holm([0.1], alpha=5, missing="refuse"), "alpha must lie strictly between"),
        (lambda: mt.hommel([1.5], alpha=0.05, missing="refuse"), r"lie in \[0, 1\]"),
        (lambda: mt.bonferroni([True], alpha=0.05, missing="refuse"), "is a boolean"),
        (
            lambda: mt.adjust_p_values([0.1], method="sidak", missing="refuse"),
            "method must be one of bonferroni",
        ),
        (
            lambda: mt.serial_gatekeeping(
                [0.1], families=[1], within="fdr", alpha=0.05, missing="refuse"
            ),
            "within must be one of bonferroni, holm, hochberg, hommel",
        ),
    ],
)
def test_bad_input_raises_method_error(call, message):
    with pytest.raises(MethodError, match=message):
        call()


def test_catalogue_entries_are_complete():
    import inspect

    mine = {name: e for name, e in entries().items() if e.family == "multiplicity"}
    assert set(mine) == set(SM) | {"fixed-sequence", "serial-gatekeeping", "graphical"}
    for e in mine.values():
        assert e.shape == "p-values"
        for field in ("summary", "formula", "reference", "oracle", "exactness"):
            assert getattr(e, field).strip(), (e.name, field)
        params = inspect.signature(e.load()).parameters.values()
        keyword_only = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
        assert keyword_only == set(e.options), e.name


def test_hommel_above_the_exact_limit():
    rng = np.random.default_rng(21)
    p = rng.random(mt.HOMMEL_EXACT_MAX + 50) ** 2
    r = mt.hommel(p, alpha=0.05, missing="refuse")
    assert not r.exact  # the float path
    exact = mt._exact_adjust([Fraction(v) for v in p], "hommel")
    for got, want in zip(r.extra["adjusted"], exact, strict=True):
        assert abs(Fraction(got) - want) <= Fraction(2.2 * 2.0**-53) * want
    np.testing.assert_allclose(
        r.extra["adjusted"], multipletests(p, method="hommel")[1], rtol=1e-12
    )
    # every P value 0.05: every adjusted value is 0.05, too close to alpha 0.05 to decide in
    # floats: the exact algorithm decides (0.05 <= 0.05: all rejected)
    same = mt.hommel([0.05] * (mt.HOMMEL_EXACT_MAX + 1), alpha=0.05, missing="refuse")
    assert same.exact and all(same.extra["rejected"])


def intersection_weights(w, g, keep):
    """The weights of the intersection hypothesis over ``keep``: every other node removed from
    the graph by Bretz et al.'s (2009) update, written out here again."""
    w = list(w)
    g = [list(r) for r in g]
    active = list(range(len(w)))
    for j in [i for i in range(len(w)) if i not in keep]:
        active.remove(j)
        nw = list(w)
        ng = [list(r) for r in g]
        for k in active:
            nw[k] = w[k] + w[j] * g[j][k]
            for l_ in active:
                if l_ == k:
                    ng[l_][k] = Fraction(0)
                else:
                    d = 1 - g[l_][j] * g[j][l_]
                    ng[l_][k] = (g[l_][k] + g[l_][j] * g[j][k]) / d if d > 0 else Fraction(0)
        w, g = nw, ng
    return {k: w[k] for k in active}


def closed_weighted_bonferroni(p, w, g):
    """Adjusted P values by closed testing over every intersection, each tested by the
    weighted Bonferroni test with the graph's intersection weights (brute force)."""
    m = len(p)
    out = []
    for i in range(m):
        worst = Fraction(0)
        for r in range(m):
            for rest in itertools.combinations([j for j in range(m) if j != i], r):
                keep = {i, *rest}
                wk = intersection_weights(w, g, keep)
                local = min(
                    (Fraction(p[j]) / wk[j] for j in keep if wk[j] > 0), default=Fraction(1)
                )
                worst = max(worst, min(Fraction(1), local))
        out.append(worst)
    return out


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda m: st.tuples(
            st.lists(p_value, min_size=m, max_size=m),
            st.lists(st.integers(0, 4), min_size=m, max_size=m),
            st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m), min_size=m, max_size=m),
        )
    )
)
def test_graphical_equals_closed_testing(case):
    # random graphs: integer scores normalised to weights summing to 1 and rows summing to 1
    p, raw_w, raw_g = case
    m = len(p)
    if sum(raw_w) == 0:
        raw_w = [1] * m
    w = [Fraction(v, sum(raw_w)) for v in raw_w]
    g = []
    for i, row in enumerate(raw_g):
        row = [0 if j == i else v for j, v in enumerate(row)]
        total = sum(row)
        g.append([Fraction(v, total) if total else Fraction(0) for v in row])
    r = mt.graphical(p, weights=w, transitions=g, alpha=0.05, missing="refuse")
    expected = closed_weighted_bonferroni(p, w, g)
    assert [r.exact[f"adjusted[{i}]"] for i in range(m)] == expected
