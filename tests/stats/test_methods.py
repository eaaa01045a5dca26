"""The method registry, and each registered method against an independent oracle.

Oracles: statsmodels 0.15 for Wilson, Clopper-Pearson ("beta"), Newcombe and the pooled z test
(statsmodels spells "greater" as "larger" and "less" as "smaller"); for Farrington-Manning a
bounded one-dimensional maximisation of the constrained binomial likelihood, and statsmodels'
score test only at margin 0 (with a margin its constrained estimate is wrong in 0.15, its issue
#10269: 90/100 vs 92/100 at -0.1 gives z = 1.8297, not 1.8551); Hanley-McNeil by hand.
"""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import xlog1py, xlogy
from scipy.stats import norm
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
    score_test_proportions_2indep,
)

from prereg.stats import methods as registry
from prereg.stats.methods import KINDS, Method, MethodError, method, methods, register
from prereg.stats.proportions import farrington_manning_estimates

TOL = 1e-9
LEVELS = (0.8, 0.9, 0.95, 0.99)
SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}
GRID_N = (1, 2, 3, 5, 10, 17, 50, 203)


def count_grid():
    ks, ns = [], []
    for n in GRID_N:
        for k in range(n + 1):
            ks.append(k)
            ns.append(n)
    return np.array(ks), np.array(ns)


def pair_grid():
    rows = []
    for n1, n2 in ((1, 1), (3, 4), (10, 10), (7, 25), (40, 13), (120, 90)):
        for k1 in sorted({0, 1, n1 // 3, n1 // 2, n1 - 1, n1}):
            for k2 in sorted({0, 1, n2 // 4, n2 // 2, n2 - 1, n2}):
                rows.append((k1, n1, k2, n2))
    return rows


# -- the registry -------------------------------------------------------------------------------


def test_every_kind_lists_its_methods_in_registration_order():
    assert KINDS == (
        "proportion-interval",
        "difference-interval",
        "two-proportion-test",
        "auroc-interval",
        "sample-interval",
        "sample-difference-interval",
        "sample-test",
        "paired-sample-test",
        "paired-difference-interval",
        "paired-proportion-test",
        "resampling-interval",
    )
    assert list(methods("proportion-interval")) == ["wilson", "clopper-pearson"]
    assert list(methods("difference-interval")) == ["newcombe-hybrid"]
    assert list(methods("two-proportion-test")) == ["pooled-z", "farrington-manning"]
    assert list(methods("auroc-interval")) == ["hanley-mcneil"]
    everything = methods()
    assert list(everything) == [name for kind in KINDS for name in methods(kind)]
    for name, m in everything.items():
        assert isinstance(m, Method) and m.name == name and m.kind in KINDS
        assert m.summary.strip() and "\n" not in m.summary
        assert method(m.kind, name) is m
    # a copy: changing it does not change the registry
    methods("auroc-interval").clear()
    assert list(methods("auroc-interval")) == ["hanley-mcneil"]


def test_test_metadata():
    pz = method("two-proportion-test", "pooled-z")
    fm = method("two-proportion-test", "farrington-manning")
    assert pz.alternatives == fm.alternatives == ("two-sided", "greater", "less")
    assert (pz.margin, fm.margin) == (False, True)
    for kind in ("proportion-interval", "difference-interval", "auroc-interval"):
        for m in methods(kind).values():
            assert (m.alternatives, m.margin) == (("two-sided",), False)


def test_unknown_names_and_kinds():
    with pytest.raises(MethodError) as err:
        method("proportion-interval", "agresti-coull")
    text = str(err.value)
    assert "proportion-interval" in text and "agresti-coull" in text
    assert "wilson" in text and "clopper-pearson" in text
    assert isinstance(err.value, ValueError)
    with pytest.raises(MethodError) as err:
        method("two-proportion-test", "wilson")  # a method of another kind
    assert "pooled-z" in str(err.value) and "farrington-manning" in str(err.value)
    for bad in (lambda: method("ratio-interval", "wilson"), lambda: methods("ratio-interval")):
        with pytest.raises(MethodError) as err:
            bad()
        assert "ratio-interval" in str(err.value) and "auroc-interval" in str(err.value)


def test_duplicate_registration_is_refused():
    before = methods()
    for kind, name in (("proportion-interval", "wilson"), ("auroc-interval", "wilson")):
        with pytest.raises(MethodError, match="already registered"):
            register(kind, name, summary="Another Wilson.")(lambda k, n, *, level: (k, n))
    assert methods() == before
    assert method("proportion-interval", "wilson").fn is registry.wilson


def test_register_checks_its_arguments(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {kind: {} for kind in KINDS})

    def fn(*args, **kwargs):
        return args

    refused = [
        dict(kind="ratio-interval", name="x", summary="s"),
        dict(kind="proportion-interval", name="Wilson", summary="s"),
        dict(kind="proportion-interval", name="a b", summary="s"),
        dict(kind="proportion-interval", name="x", summary=""),
        dict(kind="proportion-interval", name="x", summary="two\nlines"),
        dict(kind="proportion-interval", name="x", summary="s", alternatives=("greater",)),
        dict(kind="proportion-interval", name="x", summary="s", margin=True),
        dict(kind="two-proportion-test", name="x", summary="s", alternatives=("larger",)),
        dict(kind="two-proportion-test", name="x", summary="s", alternatives=()),
    ]
    for kwargs in refused:
        with pytest.raises(MethodError):
            register(**kwargs)(fn)
    assert all(not table for table in registry._REGISTRY.values())
    assert register("two-proportion-test", "x", summary="s", alternatives=("less",))(fn) is fn
    assert methods() == {"x": Method("x", "two-proportion-test", fn, "s", ("less",), False)}


def test_test_options_are_checked_against_the_metadata():
    for name, m in methods("two-proportion-test").items():
        for alternative in m.alternatives:
            z, p = m.fn(30, 50, 20, 50, alternative=alternative, margin=0)
            assert math.isfinite(z) and 0 <= p <= 1
        with pytest.raises(MethodError, match=name):
            m.fn(30, 50, 20, 50, alternative="larger", margin=0)
        if m.margin:
            assert math.isfinite(m.fn(30, 50, 20, 50, alternative="less", margin=0.1)[0])
        else:
            with pytest.raises(MethodError, match="margin must be 0"):
                m.fn(30, 50, 20, 50, alternative="two-sided", margin=0.1)
            with pytest.raises(MethodError, match="margin must be 0"):
                m.fn(30, 50, 20, 50, alternative="greater", margin=[0.0, -0.05])
    fm = method("two-proportion-test", "farrington-manning").fn
    for bad in (1.0, -1.0, 1.5, math.nan, math.inf):
        with pytest.raises(ValueError):
            fm(30, 50, 20, 50, alternative="two-sided", margin=bad)


def test_importing_the_registry_imports_neither_numpy_nor_scipy():
    code = (
        "import sys, prereg.stats.methods as m; m.methods(); "
        "print(sorted(k for k in ('numpy', 'scipy') if k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_package_re_exports_resolve():
    import prereg.stats as stats

    for name in stats.__all__:
        module = importlib.import_module(f"prereg.stats.{stats._EXPORTS[name]}")
        assert getattr(stats, name) is getattr(module, name)
    assert stats.MethodError is MethodError and stats.Method is Method


# -- every method: shapes, missing values, levels -----------------------------------------------


def call(m: Method, *counts, option=None):
    """Call ``m`` on counts: intervals at level 0.95 (or ``option``), tests two-sided at 0."""
    if m.kind == "two-proportion-test":
        return m.fn(*counts, alternative=option or "two-sided", margin=0.0)
    return m.fn(*counts, level=option or 0.95)


SAMPLE = {
    "proportion-interval": (3, 10),
    "difference-interval": (3, 10, 6, 12),
    "two-proportion-test": (3, 10, 6, 12),
    "auroc-interval": (0.7, 10, 12),
}
EMPTY = {
    "proportion-interval": [(0, 0)],
    "difference-interval": [(0, 0, 3, 10), (3, 10, 0, 0), (0, 0, 0, 0)],
    "two-proportion-test": [(0, 0, 3, 10), (3, 10, 0, 0), (0, 0, 0, 0)],
    "auroc-interval": [(0.7, 0, 5), (0.7, 5, 0), (math.nan, 5, 5)],
}
# the kinds whose methods broadcast arrays of counts (the others take one sample at a time and
# are tested in test_samples.py)
BROADCAST = ("proportion-interval", "difference-interval", "two-proportion-test", "auroc-interval")
ALL = sorted(n for n, m in methods().items() if m.kind in BROADCAST)


@pytest.mark.parametrize("name", ALL)
def test_scalars_give_floats_and_arrays_broadcast(name):
    m = methods()[name]
    args = SAMPLE[m.kind]
    out = call(m, *args)
    assert all(type(v) is float for v in out)
    arrays = [np.array([a, a]) if i == 0 else a for i, a in enumerate(args)]
    arrays[-1] = np.array([[args[-1]], [args[-1]], [args[-1]]])
    wide = call(m, *arrays)
    for v, scalar in zip(wide, out, strict=True):
        assert v.shape == (3, 2)
        np.testing.assert_array_equal(v, np.full((3, 2), scalar))


@pytest.mark.parametrize("name", ALL)
def test_no_trials_is_missing_without_a_warning(name):
    m = methods()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in EMPTY[m.kind]:
            for option in [None, *m.alternatives[1:]]:
                assert all(math.isnan(v) for v in call(m, *args, option=option))
        columns = list(zip(SAMPLE[m.kind], *EMPTY[m.kind], strict=True))
        out = call(m, *(np.array(c) for c in columns))
    for v in out:
        assert not np.isnan(v[0]) and np.isnan(v[1:]).all()


@pytest.mark.parametrize("name", [n for n in ALL if methods()[n].kind != "two-proportion-test"])
def test_intervals_refuse_a_level_outside_zero_one(name):
    m = methods()[name]
    for bad in (0.0, 1.0, 95):
        with pytest.raises(ValueError):
            m.fn(*SAMPLE[m.kind], level=bad)
    with pytest.raises(TypeError):
        m.fn(*SAMPLE[m.kind])  # no default level


# -- one proportion -----------------------------------------------------------------------------


@pytest.mark.parametrize("name, sm_method", [("wilson", "wilson"), ("clopper-pearson", "beta")])
def test_proportion_intervals_match_statsmodels(name, sm_method):
    fn = method("proportion-interval", name).fn
    k, n = count_grid()
    for level in LEVELS:
        lo, hi = fn(k, n, level=level)
        slo, shi = proportion_confint(k, n, alpha=1 - level, method=sm_method)
        np.testing.assert_allclose(lo, slo, rtol=0, atol=TOL)
        np.testing.assert_allclose(hi, shi, rtol=0, atol=TOL)
        for i in range(0, k.size, 7):
            assert fn(int(k[i]), int(n[i]), level=level) == (lo[i], hi[i])
        # Wilson at k = 0 or k = n may sit an ulp inside p̂ (see test_proportions).
        p = k / n
        assert np.all((0 <= lo) & (lo <= p + 1e-15) & (p - 1e-15 <= hi) & (hi <= 1))


def test_clopper_pearson_hand_values():
    fn = method("proportion-interval", "clopper-pearson").fn
    # k = 0: upper bound solves (1 − u)^n = (1 − level)/2; k = n: lower bound solves l^n = same.
    for n in (1, 4, 30, 500):
        for level in LEVELS:
            tail = (1 - level) / 2
            assert fn(0, n, level=level) == pytest.approx((0.0, 1 - tail ** (1 / n)), abs=1e-12)
            assert fn(n, n, level=level) == pytest.approx((tail ** (1 / n), 1.0), abs=1e-12)
    # 1 of 2: P(X ≥ 1 | l) = 1 − (1 − l)² = tail and P(X ≤ 1 | u) = 1 − u² = tail.
    tail = 0.025
    assert fn(1, 2, level=0.95) == pytest.approx(
        (1 - math.sqrt(1 - tail), math.sqrt(1 - tail)), abs=1e-12
    )
    # exact intervals contain the Wilson ones here
    wl, wh = method("proportion-interval", "wilson").fn(7, 40, level=0.95)
    cl, ch = fn(7, 40, level=0.95)
    assert cl < wl < wh < ch


# -- difference of two proportions --------------------------------------------------------------


def test_newcombe_hybrid_matches_statsmodels():
    fn = method("difference-interval", "newcombe-hybrid").fn
    for level in LEVELS:
        for k1, n1, k2, n2 in pair_grid():
            d, lo, hi = fn(k1, n1, k2, n2, level=level)
            slo, shi = confint_proportions_2indep(
                k1, n1, k2, n2, method="newcomb", compare="diff", alpha=1 - level
            )
            assert d == pytest.approx(k1 / n1 - k2 / n2, abs=1e-15)
            assert (lo, hi) == pytest.approx((slo, shi), abs=TOL)


# -- two-proportion tests -----------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_pooled_z_matches_statsmodels(alternative):
    fn = method("two-proportion-test", "pooled-z").fn
    for k1, n1, k2, n2 in pair_grid():
        z, p = fn(k1, n1, k2, n2, alternative=alternative, margin=0)
        if k1 + k2 in (0, n1 + n2):  # pooled SE 0: statsmodels gives NaN
            assert (z, p) == (0.0, 1.0 if alternative == "two-sided" else 0.5)
            continue
        sz, sp = proportions_ztest([k1, k2], [n1, n2], alternative=SM_ALTERNATIVE[alternative])
        assert (z, p) == pytest.approx((sz, sp), abs=TOL)


def test_pooled_z_one_sided_hand_values():
    fn = method("two-proportion-test", "pooled-z").fn
    # 30/50 vs 20/50: z = 2 (see test_proportions); P(Z > 2) one-sided.
    z, p = fn(30, 50, 20, 50, alternative="greater", margin=0)
    assert z == pytest.approx(2.0, abs=1e-12)
    assert p == pytest.approx(0.5 * math.erfc(2 / math.sqrt(2)), abs=1e-15)
    assert fn(30, 50, 20, 50, alternative="less", margin=0.0)[1] == pytest.approx(1 - p, abs=1e-15)
    assert fn(30, 50, 20, 50, alternative="two-sided", margin=-0.0)[1] == pytest.approx(2 * p)


def fm_oracle(k1, n1, k2, n2, delta):
    """z of the Farrington-Manning test, the constrained MLE found by bounded maximisation."""

    def negloglik(p2):
        p1 = p2 + delta
        return -(xlogy(k1, p1) + xlog1py(n1 - k1, -p1) + xlogy(k2, p2) + xlog1py(n2 - k2, -p2))

    lo, hi = max(0.0, -delta), min(1.0, 1.0 - delta)
    found = minimize_scalar(
        negloglik, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}
    ).x
    # The maximum may sit on an end of the interval (an arm with no successes, say), which the
    # bounded search only approaches.
    with np.errstate(divide="ignore"):
        p2 = min((found, lo, hi), key=negloglik)
    p1 = p2 + delta
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    return (k1 / n1 - k2 / n2 - delta) / se, (p1, p2)


MARGINS = (-0.9, -0.5, -0.2, -0.1, -0.02, 1e-6, 0.05, 0.15, 0.3, 0.75, 0.97)


def test_farrington_manning_matches_the_maximised_likelihood():
    fn = method("two-proportion-test", "farrington-manning").fn
    rows = pair_grid()
    k1, n1, k2, n2 = (np.array(c) for c in zip(*rows, strict=True))
    for delta in MARGINS:
        z, p = fn(k1, n1, k2, n2, alternative="greater", margin=delta)
        t1, t2 = farrington_manning_estimates(k1, n1, k2, n2, margin=delta)
        for i, row in enumerate(rows):
            oz, (o1, o2) = fm_oracle(*row, delta)
            assert z[i] == pytest.approx(oz, rel=1e-6, abs=1e-9), (row, delta)
            assert p[i] == pytest.approx(norm.sf(oz), rel=1e-5, abs=1e-12), (row, delta)
            assert (t1[i], t2[i]) == pytest.approx((o1, o2), abs=1e-6), (row, delta)
        assert np.all((0 <= t2) & (t2 <= 1) & (0 <= t1) & (t1 <= 1))
        np.testing.assert_allclose(t1 - t2, delta, rtol=0, atol=1e-12)


def test_farrington_manning_worked_example():
    fn = method("two-proportion-test", "farrington-manning").fn
    # 90/100 vs 92/100, non-inferiority margin −0.1: H1 p1 − p2 > −0.1.
    z, p = fn(90, 100, 92, 100, alternative="greater", margin=-0.1)
    # 1.8551480122871007 and 0.031787546594634924 from a 50-digit bisection of the score.
    assert z == pytest.approx(1.8551480122871007, rel=1e-12)
    assert z == pytest.approx(fm_oracle(90, 100, 92, 100, -0.1)[0], rel=1e-6)
    assert p == pytest.approx(0.031787546594634924, rel=1e-11)
    assert p == pytest.approx(norm.sf(z), rel=1e-12)
    assert fn(90, 100, 92, 100, alternative="less", margin=-0.1)[1] == pytest.approx(1 - p)
    assert fn(90, 100, 92, 100, alternative="two-sided", margin=-0.1)[1] == pytest.approx(2 * p)
    # The constrained estimates are the root of the likelihood equation: the score is 0.
    t1, t2 = farrington_manning_estimates(90, 100, 92, 100, margin=-0.1)
    assert t1 - t2 == pytest.approx(-0.1, abs=1e-15)
    score = (90 - 100 * t1) / (t1 * (1 - t1)) + (92 - 100 * t2) / (t2 * (1 - t2))
    assert score == pytest.approx(0.0, abs=1e-9)


def test_farrington_manning_at_the_ends_of_the_feasible_set():
    fn = method("two-proportion-test", "farrington-manning").fn
    # All yes in both arms, p1 − p2 = δ > 0: the maximum is p̃1 = 1, p̃2 = 1 − δ, and only arm 2
    # has variance; likewise no successes in either arm at δ < 0 gives p̃1 = 0, p̃2 = −δ.  These
    # are where the closed form alone loses half its digits (z off by 5e-4 relative at 1e-6).
    for delta in (1e-9, 1e-6, 0.01, 0.4):
        for n1, n2 in ((1, 1), (10, 10), (40, 13)):
            z, _ = fn(n1, n1, n2, n2, alternative="less", margin=delta)
            assert z == pytest.approx(-delta / math.sqrt(delta * (1 - delta) / n2), rel=1e-12)
            assert farrington_manning_estimates(n1, n1, n2, n2, margin=delta) == (1.0, 1 - delta)
            z, _ = fn(n2, n2, n1, n1, alternative="greater", margin=-delta)  # the arms swapped
            assert z == pytest.approx(delta / math.sqrt(delta * (1 - delta) / n2), rel=1e-12)
            z, _ = fn(0, n1, 0, n2, alternative="greater", margin=-delta)
            assert z == pytest.approx(delta / math.sqrt(delta * (1 - delta) / n2), rel=1e-12)
            assert farrington_manning_estimates(0, n1, 0, n2, margin=-delta) == (0.0, delta)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_farrington_manning_at_margin_zero_is_the_pooled_score_test(alternative):
    fm = method("two-proportion-test", "farrington-manning").fn
    pz = method("two-proportion-test", "pooled-z").fn
    for k1, n1, k2, n2 in pair_grid():
        z, p = fm(k1, n1, k2, n2, alternative=alternative, margin=0.0)
        assert (z, p) == pytest.approx(pz(k1, n1, k2, n2, alternative=alternative, margin=0))
        if k1 + k2 in (0, n1 + n2):
            assert z == 0.0
            continue
        sm = score_test_proportions_2indep(
            k1,
            n1,
            k2,
            n2,
            value=0,
            compare="diff",
            alternative=SM_ALTERNATIVE[alternative],
            correction=False,
        )
        assert (z, p) == pytest.approx((sm.statistic, sm.pvalue), abs=TOL)


def test_farrington_manning_swapping_the_arms_negates_z():
    """Over the whole grid at each margin in one call of arrays (equal, bit for bit, to the
    call of each row: test_farrington_manning_vectorized_equals_scalar), and row by row on
    every fifth row."""
    fn = method("two-proportion-test", "farrington-manning").fn
    rows = pair_grid()
    k1, n1, k2, n2 = (np.array(c) for c in zip(*rows, strict=True))
    for delta in MARGINS:
        z, p = fn(k1, n1, k2, n2, alternative="greater", margin=delta)
        zs, ps = fn(k2, n2, k1, n1, alternative="less", margin=-delta)
        # pytest.approx's tolerance, the larger of the relative and the absolute one
        assert np.all(np.abs(zs + z) <= np.maximum(1e-9 * np.abs(z), 1e-12)), delta
        assert np.all(np.abs(ps - p) <= np.maximum(1e-7 * np.abs(p), 1e-15)), delta
        for a1, m1, a2, m2 in rows[::5]:
            z, p = fn(a1, m1, a2, m2, alternative="greater", margin=delta)
            zs, ps = fn(a2, m2, a1, m1, alternative="less", margin=-delta)
            assert zs == pytest.approx(-z, rel=1e-9, abs=1e-12)
            assert ps == pytest.approx(p, rel=1e-7, abs=1e-15)


@st.composite
def fm_rows(draw):
    rows = []
    for _ in range(draw(st.integers(min_value=1, max_value=25))):
        n1 = draw(st.integers(min_value=0, max_value=300))
        n2 = draw(st.integers(min_value=0, max_value=300))
        rows.append(
            (
                draw(st.integers(min_value=0, max_value=n1)),
                n1,
                draw(st.integers(min_value=0, max_value=n2)),
                n2,
                draw(st.one_of(st.just(0.0), st.floats(min_value=-0.99, max_value=0.99))),
            )
        )
    return rows


@settings(max_examples=150, deadline=None)
@given(fm_rows(), st.sampled_from(["two-sided", "greater", "less"]))
def test_farrington_manning_vectorized_equals_scalar(rows, alternative):
    fn = method("two-proportion-test", "farrington-manning").fn
    k1, n1, k2, n2, d = (np.array(c) for c in zip(*rows, strict=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z, p = fn(k1, n1, k2, n2, alternative=alternative, margin=d)
        for i, row in enumerate(rows):
            np.testing.assert_array_equal(
                [z[i], p[i]], fn(*row[:4], alternative=alternative, margin=row[4])
            )


# -- AUROC --------------------------------------------------------------------------------------


def test_hanley_mcneil_by_hand():
    fn = method("auroc-interval", "hanley-mcneil").fn
    area, n_pos, n_neg = 0.8, 30, 40
    q1 = area / (2 - area)
    q2 = 2 * area**2 / (1 + area)
    var = (area * (1 - area) + 29 * (q1 - area**2) + 39 * (q2 - area**2)) / (30 * 40)
    z = norm.ppf(0.975)
    lo, hi = fn(area, n_pos, n_neg, level=0.95)
    assert (lo, hi) == pytest.approx((area - z * math.sqrt(var), area + z * math.sqrt(var)))
    # Near 1 with few cases the upper bound is truncated to 1 (and the lower is not).
    lo, hi = fn(0.97, 6, 5, level=0.99)
    q1, q2 = 0.97 / 1.03, 2 * 0.97**2 / 1.97
    se = math.sqrt((0.97 * 0.03 + 5 * (q1 - 0.97**2) + 4 * (q2 - 0.97**2)) / 30)
    assert 0.97 + norm.ppf(0.995) * se > 1
    assert hi == 1.0
    assert lo == pytest.approx(0.97 - norm.ppf(0.995) * se)
    # ... and at 0 the lower bound is truncated to 0
    assert fn(0.0, 3, 3, level=0.95)[0] == 0.0
    assert fn(1.0, 3, 3, level=0.95) == (1.0, 1.0)
