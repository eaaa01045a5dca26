"""The statistics behind each registered figure in SCORE.json, through `prereg score` on fixture
and example studies, each checked against an independent computation from the files the
commands wrote:

- the standard error and df of every contrast test beside its statistic: the pooled z test by
  hand and statsmodels' proportions_ztest, Farrington-Manning against a 60-digit solution of its
  score equation, Welch's t against scipy.stats.ttest_ind(equal_var=False) and statsmodels'
  ttest_ind(usevar="unequal"), the paired t against scipy.stats.ttest_rel;
- the counts behind quantifiers (met of of, which), recounted from oracle figures;
- an ECE's table of bins (edges, n, correct, mean confidence, accuracy, gap, weight,
  contribution, and the exact contribution over the decimal confidences), by a loop over the
  raw records in fractions; a geometric mean's log scale (mean, sd and SE of the logs).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest
from statsmodels.stats.weightstats import ttest_ind as sm_ttest_ind

from prereg import outputs
from tests.engines.factorial.examples import by_id, example_project, read_jsonl, run, scored
from tests.engines.factorial.test_new_studies import REFUSAL, TOOLS, counted_rows, project_of
from tests.stats.test_fm_stable import decimal_fm


def rel(x, ref):
    return abs(x - ref) / abs(ref) if ref else abs(x)


def valid(doc):
    schema = outputs.schema_for("factorial", "score")
    errors = [
        f"{e.json_path}: {e.message[:160]}" for e in outputs.validator(schema).iter_errors(doc)
    ]
    assert errors == []


@pytest.fixture(scope="module")
def refusal(tmp_path_factory):
    from prereg.cli import main

    root = project_of(tmp_path_factory.mktemp("refusal"), REFUSAL)
    assert main(["--project", str(root), "compile"]) == 0
    assert run(root, REFUSAL, "items", "--out", root / "items.jsonl") == 0
    obs = root / "obs.jsonl"
    assert run(root, REFUSAL, "simulate", "--items", root / "items.jsonl", "--scenario",
               "comparable", "--seed", 7, "--out", obs) == 0  # fmt: skip
    assert run(root, REFUSAL, "score", "--items", root / "items.jsonl", "--observations", obs,
               "--out", root / "SCORE.json") == 0  # fmt: skip
    return json.loads((root / "SCORE.json").read_text())


def test_farrington_manning_se_and_z_against_60_digits(refusal):
    valid(refusal)
    con = by_id(refusal["contrasts"])
    p_oracle = {}
    for model in ("m2", "m3", "m4"):
        c = con[f"ni-{model}"]
        k1, n1, k2, n2 = c["a"]["k"], c["a"]["n"], c["b"]["k"], c["b"]["n"]
        z, se, _, _ = decimal_fm(k1, n1, k2, n2, -0.05)
        assert c["statisticName"] == "z" and c["df"] is None
        assert rel(c["se"], se) <= 1e-15 and rel(c["statistic"], z) <= 1e-15
        assert c["p"] == pytest.approx(stats.norm.sf(z), rel=1e-12)
        p_oracle[model] = stats.norm.sf(z)
    # h1: for_each model, at_least 2 of the three FM tests with P < 0.025
    [h1] = refusal["quantifiers"]["h1"]
    met = [m for m in ("m2", "m3", "m4") if p_oracle[m] < 0.025]
    assert h1["path"] == "rule.for_each" and h1["quantifier"] == "at_least"
    assert (h1["required"], h1["of"], h1["met"]) == (2, 3, len(met))
    assert h1["metBy"] == met and h1["held"] == (len(met) >= 2)
    assert refusal["verdicts"]["h1"] == ("supported" if len(met) >= 2 else "not-supported")


def test_pooled_z_se_by_hand_and_statsmodels(refusal):
    con = by_id(refusal["contrasts"])
    inside = []
    for kind in ("benign", "borderline", "harmful"):
        c = con[f"de-{kind}"]
        k1, n1, k2, n2 = c["a"]["k"], c["a"]["n"], c["b"]["k"], c["b"]["n"]
        pooled = (k1 + k2) / (n1 + n2)
        se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
        z, _ = proportions_ztest([k1, k2], [n1, n2])  # pooled variance under H0 by default
        assert c["se"] == pytest.approx(se, rel=1e-14) and c["df"] is None
        assert c["statistic"] == pytest.approx(z, rel=1e-12)
        assert c["statistic"] == pytest.approx((k1 / n1 - k2 / n2) / se, rel=1e-14)
        lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb")
        if lo > -0.1 and hi < 0.1:
            inside.append(kind)
    # h2's second verdict: for_each kind (all) lower > -0.1 and upper < 0.1
    [row] = [q for q in refusal["quantifiers"]["h2"] if q["verdict"] == "equivalent"]
    assert row["path"] == "verdicts[1].when.for_each" and row["quantifier"] == "all"
    assert (row["required"], row["of"], row["met"], row["metBy"]) == (3, 3, len(inside), inside)


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    from prereg.cli import main

    root = project_of(tmp_path_factory.mktemp("tools"), TOOLS)
    assert main(["--project", str(root), "compile"]) == 0
    assert run(root, TOOLS, "items", "--out", root / "items.jsonl") == 0
    obs = root / "obs.jsonl"
    assert run(root, TOOLS, "simulate", "--items", root / "items.jsonl", "--scenario",
               "gamma-best", "--seed", 3, "--out", obs) == 0  # fmt: skip
    assert run(root, TOOLS, "score", "--items", root / "items.jsonl", "--observations", obs,
               "--out", root / "SCORE.json") == 0  # fmt: skip
    return root


def test_welch_se_and_df_against_scipy_and_statsmodels(tools):
    doc = json.loads((tools / "SCORE.json").read_text())
    valid(doc)
    rows = counted_rows(tools).values()
    a = np.array([r["score"] for r in rows if r["agent"] == "beta"])
    b = np.array([r["score"] for r in rows if r["agent"] == "alpha"])
    c = by_id(doc["contrasts"])["score-beta-ni"]
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    t_sm, _, df_sm = sm_ttest_ind(a, b, usevar="unequal", value=-0.05)
    sp = stats.ttest_ind(a, b, equal_var=False)
    assert c["statisticName"] == "t"
    assert c["df"] == pytest.approx(sp.df, rel=1e-13) == pytest.approx(df_sm, rel=1e-13)
    assert c["se"] == pytest.approx(math.sqrt(va + vb), rel=1e-13)
    assert c["se"] == pytest.approx((a.mean() - b.mean()) / sp.statistic, rel=1e-12)
    assert c["statistic"] == pytest.approx(t_sm, rel=1e-12)


def test_the_hard_tools_quantifier_counts_holm_adjusted_p(tools):
    doc = json.loads((tools / "SCORE.json").read_text())
    con = by_id(doc["contrasts"])
    hyp = next(h for h, v in doc["quantifiers"].items() if v[0]["name"] == "tool")
    [row] = doc["quantifiers"][hyp]
    met = [t for t in ("search", "code") if con[f"hard-{t}"]["adjustedP"] < 0.05]
    assert (row["quantifier"], row["required"], row["of"]) == ("all", 2, 2)
    assert (row["met"], row["metBy"], row["held"]) == (len(met), met, len(met) == 2)
    for t in ("search", "code"):  # a one-sided pooled z test: its SE by hand
        c = con[f"hard-{t}"]
        k1, n1, k2, n2 = c["a"]["k"], c["a"]["n"], c["b"]["k"], c["b"]["n"]
        p = (k1 + k2) / (n1 + n2)
        assert c["se"] == pytest.approx(math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)), rel=1e-14)


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    project = example_project(tmp_path_factory.mktemp("calibration"), "calibration-cells")
    obs = project / "obs.jsonl"
    assert run(project, "calibration-cells", "simulate", "--scenario", "overconfident-m2",
               "--seed", 3, "--out", obs) == 0  # fmt: skip
    return scored(project, "calibration-cells", obs, "cal", items=False), obs


def bins_by_hand(recs, edges):
    """Bins closed on the right, the first closed on both sides: per bin (n, correct, the sum
    of the confidences as decimals)."""
    out = [[0, 0, Fraction(0)] for _ in edges[1:]]
    for r in recs:
        q = Fraction(str(r["confidence"]))  # the decimal as written in the observations
        b = next(i for i in range(len(edges) - 1) if q <= edges[i + 1] and (i == 0 or q > edges[i]))
        out[b][0] += 1
        out[b][1] += bool(r["correct"])
        out[b][2] += q
    return out


def test_ece_bins_against_a_loop_in_fractions(calibration):
    doc, obs = calibration
    valid(doc)
    edges = [Fraction(i, 10) for i in range(11)]
    recs = {}
    for r in read_jsonl(obs):
        if r["attempt"] == 1 and r["domain"] in ("math", "law", "code"):
            recs[r["rowId"]] = r
    est = by_id(doc["estimates"])
    for m in ("m1", "m2"):
        for d in ("math", "law", "code"):
            rows = [r for r in recs.values() if r["model"] == m and r["domain"] == d
                    and r["status"] == "answered" and r["confidence"] is not None]  # fmt: skip
            total = len(rows)
            want = bins_by_hand(rows, edges)
            e = est[f"ece-{m}-{d}"]
            exact = sum((abs(k - s) / total for _, k, s in want), Fraction(0))
            assert e["exact"] == f"{exact.numerator}/{exact.denominator}"
            assert e["estimate"] == pytest.approx(float(exact), rel=1e-13)
            assert len(e["bins"]) == 10
            cell = next(c for c in doc["cells"] if c["cell"] == f"tst-{m}-{d}")
            for got, cell_bin, (n, k, s), lo, hi in zip(
                e["bins"], cell["metrics"]["ece"]["bins"], want, edges[:-1], edges[1:], strict=True
            ):
                assert (got["lower"], got["upper"]) == (float(lo), float(hi))
                assert (got["n"], got["correct"]) == (n, k)
                share = abs(k - s) / total
                assert got["exactContribution"] == f"{share.numerator}/{share.denominator}"
                assert got["contribution"] == pytest.approx(float(share), rel=1e-12, abs=1e-15)
                assert got["weight"] == n / total
                if n:
                    assert got["meanConfidence"] == pytest.approx(float(s / n), rel=1e-13)
                    assert got["accuracy"] == k / n
                    assert got["gap"] == pytest.approx(float(abs(Fraction(k, n) - s / n)),
                                                       rel=1e-12, abs=1e-15)  # fmt: skip
                else:
                    assert got["meanConfidence"] is got["accuracy"] is got["gap"] is None
                # the cell's table is the same floats, without the exact shares
                assert {k2: v for k2, v in got.items() if k2 != "exactContribution"} == cell_bin
    # h1's nested quantifiers: per model, at_least 2 of 3 domains with ECE <= 0.1 at 3 decimals
    rows = doc["quantifiers"]["h1"]
    outer, inner = rows[0], rows[1:]
    assert outer["path"] == "rule.for_each" and outer["quantifier"] == "all"
    for q in inner:
        m = q["binding"]["model"]
        fr = {d: Fraction(est[f"ece-{m}-{d}"]["exact"]) for d in ("math", "law", "code")}
        ok = [
            d for d in ("math", "law", "code") if math.floor(fr[d] * 1000 + Fraction(1, 2)) <= 100
        ]
        assert q["path"] == "rule.for_each.condition.for_each"
        assert (q["met"], q["metBy"], q["required"], q["held"]) == (len(ok), ok, 2, len(ok) >= 2)
    assert outer["metBy"] == [q["binding"]["model"] for q in inner if q["held"]]


def test_paired_t_se_df_and_the_geometric_mean_log_scale(tmp_path):
    import shutil

    from prereg.cli import main
    from tests.conftest import ROOT
    from tests.engines.factorial.examples import write_jsonl

    root = tmp_path
    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(ROOT / "tests/fixtures/factorial/paired-latency.yaml", root / "spec/studies")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    assert run(root, "paired-latency", "items", "--out", root / "items.jsonl") == 0
    items = read_jsonl(root / "items.jsonl")
    rng = np.random.default_rng(11)
    recs = []
    for it in items:
        lat = round(float(rng.normal(500, 60)), 3)
        tok = int(rng.integers(200, 3000))
        recs.append({"rowId": it["rowId"], "attempt": 1, "ok": True, "latency_ms": lat,
                     "tokens": tok})  # fmt: skip
    obs = write_jsonl(root / "runs.jsonl", recs)
    doc = scored(root, "paired-latency", obs, "p")
    valid(doc)
    by_row = {r["rowId"]: r for r in recs}
    per = defaultdict(dict)
    for it in items:
        per[it["itemId"]][it["system"]] = by_row[it["rowId"]]
    new = np.array([p["new"]["latency_ms"] for p in per.values()])
    old = np.array([p["old"]["latency_ms"] for p in per.values()])
    c = by_id(doc["contrasts"])["latency-new-vs-old"]
    t = stats.ttest_rel(new, old)
    assert c["df"] == t.df == new.size - 1
    assert c["se"] == pytest.approx(stats.sem(new - old), rel=1e-13)
    assert c["statistic"] == pytest.approx(t.statistic, rel=1e-12)
    for cell in doc["cells"]:
        system = cell["levels"]["system"]
        logs = np.log([p[system]["tokens"] for p in per.values()])
        f = cell["metrics"]["tokens"]
        assert f["meanLog"] == pytest.approx(logs.mean(), rel=1e-14)
        assert f["sdLog"] == pytest.approx(logs.std(ddof=1), rel=1e-13)
        assert f["seLog"] == pytest.approx(stats.sem(logs), rel=1e-13)
        assert f["estimate"] == pytest.approx(stats.gmean(np.exp(logs)), rel=1e-13)
