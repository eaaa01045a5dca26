"""The latency-cost example runs from its spec alone, and every figure and verdict agrees with
an independent computation from the raw records: scipy's Welch t test and t intervals,
statsmodels' Welch interval, logs and geometric means by hand, the bootstrap redrawn from its
documented algorithm, and Farrington-Manning from a numerically found constrained MLE."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from tests.engines.factorial.examples import (
    by_id,
    example_project,
    read_jsonl,
    run,
    scored,
    write_jsonl,
)
from tests.engines.factorial.test_answer_position import fm_z
from tests.oracles import multipletests

STUDY = "latency-cost"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = example_project(tmp_path_factory.mktemp("latency"), STUDY)
    assert run(root, STUDY, "items", "--out", root / "items.jsonl") == 0
    return root


def score(project, obs, tag):
    return scored(project, STUDY, obs, tag)


def observed(project, obs):
    """Per registered row: its levels and its last attempt (None when it failed or is absent)."""
    last: dict[str, dict] = {}
    for rec in read_jsonl(obs):
        cur = last.get(rec["rowId"])
        if cur is None or rec["attempt"] > cur["attempt"]:
            last[rec["rowId"]] = rec
    rows = []
    for item in read_jsonl(project / "items.jsonl"):
        rec = last.get(item["rowId"])
        rows.append({**item, "rec": rec if rec is not None and rec["status"] != "error" else None})
    return rows


def values(rows, field, **levels):
    out = [
        r["rec"][field]
        for r in rows
        if r["rec"] is not None and all(r[k] == v for k, v in levels.items())
    ]
    return np.array(out, dtype=float)


def boot_independent(a, b, stat, resamples, seed, level):
    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    for _ in range(resamples):
        ra = a[rng.integers(0, a.size, a.size)]
        rb = b[rng.integers(0, b.size, b.size)]
        out.append(stat(ra, rb))
    return np.quantile(out, [(1 - level) / 2, (1 + level) / 2])


def check(doc, rows):
    c = by_id(doc["contrasts"])
    e = by_id(doc["estimates"])
    lat_c, lat_b = (
        values(rows, "latency_ms", strategy="cached"),
        values(rows, "latency_ms", strategy="baseline"),
    )
    # h1: Welch, pooled over tasks
    w = stats.ttest_ind(lat_c, lat_b, equal_var=False, alternative="less")
    lo, hi = CompareMeans(DescrStatsW(lat_c), DescrStatsW(lat_b)).tconfint_diff(
        0.05, usevar="unequal"
    )
    h1c = c["latency-cached-vs-baseline"]
    diff = lat_c.mean() - lat_b.mean()
    assert h1c["estimate"] == pytest.approx(diff, abs=6e-5)
    assert (h1c["lower"], h1c["upper"]) == (
        pytest.approx(lo, abs=6e-5),
        pytest.approx(hi, abs=6e-5),
    )
    assert h1c["p"] == pytest.approx(w.pvalue, rel=1e-3)
    h1 = w.pvalue < 0.025 and math.floor(diff * 10 + 0.5) / 10 <= -50
    # h2: ratio of geometric means per task, Welch on the logs, Holm over tasks
    ps, h2_parts = [], []
    for task in ("qa", "code"):
        la = np.log(values(rows, "tokens", strategy="cached", task=task))
        lb = np.log(values(rows, "tokens", strategy="baseline", task=task))
        row = c[f"tokens-{task}"]
        assert row["measure"] == "ratio"
        ratio = math.exp(la.mean() - lb.mean())
        assert row["estimate"] == pytest.approx(ratio, abs=6e-5)
        assert row["a"]["estimate"] == pytest.approx(math.exp(la.mean()), rel=1e-6)
        lo, hi = CompareMeans(DescrStatsW(la), DescrStatsW(lb)).tconfint_diff(
            0.05, usevar="unequal"
        )
        assert row["lower"] == pytest.approx(math.exp(lo), abs=6e-5)
        assert row["upper"] == pytest.approx(math.exp(hi), abs=6e-5)
        p = stats.ttest_ind(la, lb, equal_var=False, alternative="less").pvalue
        assert row["p"] == pytest.approx(p, rel=1e-3)
        ps.append(p)
        h2_parts.append(ratio)
    adj = multipletests(ps, method="holm")[1]
    for task, a in zip(("qa", "code"), adj, strict=True):
        assert c[f"tokens-{task}"]["adjustedP"] == pytest.approx(a, rel=1e-3)
    h2 = all(r <= 0.9 and a < 0.05 for r, a in zip(h2_parts, adj, strict=True))
    # h3: the bootstrap of the pooled difference, redrawn
    blo, bhi = boot_independent(lat_c, lat_b, lambda x, y: x.mean() - y.mean(), 2000, 17, 0.95)
    h3c = c["latency-bootstrap"]
    assert h3c["bootstrap"] == {"resamples": 2000, "seed": 17}
    assert (h3c["lower"], h3c["upper"]) == (
        pytest.approx(blo, abs=6e-5),
        pytest.approx(bhi, abs=6e-5),
    )
    h3 = bhi < 0 and w.pvalue < 0.025
    # h4: Farrington-Manning non-inferiority of accuracy, tested after h1
    acc = {
        s: [r["rec"]["correct"] for r in rows if r["rec"] is not None and r["strategy"] == s]
        for s in ("cached", "baseline")
    }
    k1, n1, k2, n2 = (
        sum(acc["cached"]),
        len(acc["cached"]),
        sum(acc["baseline"]),
        len(acc["baseline"]),
    )
    z = fm_z(k1, n1, k2, n2, -0.05)
    p4 = stats.norm.sf(z)
    h4c = c["accuracy-non-inferior"]
    assert (h4c["a"]["k"], h4c["a"]["n"], h4c["b"]["k"], h4c["b"]["n"]) == (k1, n1, k2, n2)
    assert h4c["p"] == pytest.approx(p4, rel=1e-3)
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    assert (h4c["lower"], h4c["upper"]) == (
        pytest.approx(lo, abs=6e-5),
        pytest.approx(hi, abs=6e-5),
    )
    # the reported estimates: t intervals of latency, of log tokens, and of the geometric mean
    for s in ("baseline", "cached"):
        x = values(rows, "latency_ms", strategy=s)
        lo, hi = stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=stats.sem(x))
        assert e[f"latency-{s}"]["estimate"] == pytest.approx(x.mean(), abs=6e-5)
        assert (e[f"latency-{s}"]["lower"], e[f"latency-{s}"]["upper"]) == (
            pytest.approx(lo, abs=6e-5),
            pytest.approx(hi, abs=6e-5),
        )
        assert e[f"latency-{s}"]["sd"] == pytest.approx(x.std(ddof=1), abs=6e-5)
        lx = np.log(values(rows, "tokens", strategy=s))
        lo, hi = stats.t.interval(0.95, lx.size - 1, loc=lx.mean(), scale=stats.sem(lx))
        assert e[f"log-tokens-{s}"]["estimate"] == pytest.approx(lx.mean(), abs=6e-5)
        assert e[f"tokens-{s}"]["estimate"] == pytest.approx(math.exp(lx.mean()), abs=6e-5)
        assert e[f"tokens-{s}"]["upper"] == pytest.approx(math.exp(hi), abs=6e-4)
        assert e[f"tokens-{s}"]["sdLog"] == pytest.approx(lx.std(ddof=1), abs=6e-5)
    coverage = [
        sum(r["rec"] is not None for r in rows if (r["strategy"], r["task"]) == key) / 120
        for key in [(s, t) for s in ("baseline", "cached") for t in ("qa", "code")]
    ]
    gated = min(coverage) < 0.9
    assert doc["gated"] == gated

    def v(x):
        return "supported" if x else "not-supported"

    want = {"h1": v(h1), "h2": v(h2), "h3": v(h3), "h4": v(p4 < 0.025) if h1 else "not-tested"}
    want["figures"] = "reported-only"
    if gated:
        want = {k: x if x == "reported-only" else "inconclusive" for k, x in want.items()}
    assert doc["verdicts"] == want


@pytest.mark.parametrize("scenario, seed", [("caching-helps", 3), ("no-effect", 5)])
def test_scores_agree_with_an_independent_computation(project, scenario, seed):
    obs = project / f"{scenario}.jsonl"
    items = project / "items.jsonl"
    assert (
        run(
            project,
            STUDY,
            "simulate",
            "--items",
            items,
            "--scenario",
            scenario,
            "--seed",
            seed,
            "--out",
            obs,
        )
        == 0
    )
    doc = score(project, obs, scenario)
    check(doc, observed(project, obs))
    if scenario == "caching-helps":
        assert doc["verdicts"]["h1"] == "supported" and doc["verdicts"]["h2"] == "supported"


@pytest.mark.parametrize(
    "shift, verdict", [(-50.04, "supported"), (-49.96, "supported"), (-49.94, "not-supported")]
)
def test_the_registered_rounding_decides_a_difference_at_the_threshold(project, shift, verdict):
    # every baseline request takes 600 ms +/- 100 (alternating), every cached one 600 + shift
    # +/- 100: the difference is `shift`, rounded half-up to one decimal before `le -50`
    recs = []
    for i, item in enumerate(read_jsonl(project / "items.jsonl")):
        base = 600.0 + (100.0 if i % 2 else -100.0)
        lat = base + (shift if item["strategy"] == "cached" else 0.0)
        recs.append(
            {
                "rowId": item["rowId"],
                "attempt": 1,
                "status": "ok",
                "correct": True,
                "latency_ms": lat,
                "tokens": 1000 + i % 7,
            }
        )
    obs = write_jsonl(project / f"edge{shift}.jsonl", recs)
    doc = score(project, obs, f"edge{shift}")
    assert doc["verdicts"]["h1"] == verdict
    check(doc, observed(project, obs))


def test_a_log_of_zero_is_refused_or_left_out_by_among(project, capsys):
    recs = [
        {
            "rowId": it["rowId"],
            "attempt": 1,
            "status": "ok",
            "correct": True,
            "latency_ms": 500.0,
            "tokens": 0 if n < 3 else 900 + n,
        }
        for n, it in enumerate(read_jsonl(project / "items.jsonl"))
    ]
    obs = write_jsonl(project / "zeros.jsonl", recs)
    doc = score(project, obs, "zeros")  # the log metrics register among tokens > 0
    assert by_id(doc["estimates"])["log-tokens-baseline"]["n"] == 237
