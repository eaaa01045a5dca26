"""Registered analyses run end to end from YAML alone (tests/fixtures/analyses/): a trend over
three ordered levels (Cochran-Armitage, chi-square of homogeneity), agreement between raters
with one row per (answer, rater) (Fleiss' kappa, weighted Cohen's kappa), several samples per
problem (unbiased pass@k), and equivalence of two means (TOST, the 1 - 2 alpha interval).
Each study is compiled and scored through the CLI on observation files written here; every
figure of SCORE.json and every verdict is checked against an independent oracle (statsmodels,
scipy, scikit-learn, or the published formula computed here by hand), and a threshold placed
exactly on the data's figure shows it is decided exactly."""

from __future__ import annotations

import json
import math
import random
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg import outputs
from prereg.cli import main
from tests.conftest import FIXTURES

SPECS = FIXTURES / "analyses"


def _project(root: Path, study: str, edit=None) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    text = (SPECS / f"{study}.yaml").read_text()
    if edit is not None:
        old, new = edit
        assert text.count(old) == 1, "the edit must be unambiguous"
        text = text.replace(old, new)
    (root / "spec" / "studies" / f"{study}.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, study: str, records: list[dict]) -> dict:
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = root / "SCORE.json"
    args = ["--project", str(root), study, "score", "--observations", str(obs), "--out", str(out)]
    assert main(args) == 0
    doc = json.loads(out.read_text())
    errors = list(outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc))
    assert errors == []
    assert "## Analyses" in out.with_suffix(".md").read_text()
    return doc


def _analysis(doc: dict, aid: str) -> dict:
    return next(a for a in doc["analyses"] if a["id"] == aid)


# -- (a) a trend over three ordered levels ------------------------------------------------------

LEVELS = ("one", "two", "four")
SCORES = (1, 2, 4)


def _trend_records(k: tuple[int, int, int], n: int = 50) -> list[dict]:
    out = []
    for level, kk in zip(LEVELS, k, strict=True):
        for i in range(n):
            out.append(
                {"rowId": f"{level}-{i}", "passages": level, "correct": i < kk, "attempt": 1}
            )
    random.Random(5).shuffle(out)
    return out


def _cochran_armitage(k, n, s):
    """Armitage (1955): T = sum s_i (k_i - n_i pbar), Var = pbar (1 - pbar) (sum n_i s_i^2 -
    (sum n_i s_i)^2 / N), z = T / sqrt(Var); the slope is the least-squares slope of the 0/1
    outcomes on the scores."""
    k, n, s = (np.asarray(v, dtype=float) for v in (k, n, s))
    big_n = n.sum()
    pbar = k.sum() / big_n
    t = float((s * (k - n * pbar)).sum())
    var = pbar * (1 - pbar) * ((n * s * s).sum() - (n * s).sum() ** 2 / big_n)
    return t / math.sqrt(var)


@pytest.mark.parametrize("k", [(22, 26, 45), (25, 24, 27), (30, 22, 21)])
def test_trend_against_statsmodels_and_the_formula(tmp_path, k):
    from statsmodels.stats.contingency_tables import Table

    root = _project(tmp_path, "dose-trend")
    doc = _score(root, "dose-trend", _trend_records(k))
    ca = _analysis(doc, "accuracy-trend")
    n = (50, 50, 50)
    z = _cochran_armitage(k, n, SCORES)
    table = np.array([[kk, nn - kk] for kk, nn in zip(k, n, strict=True)])
    # statsmodels uses N - 1 in the variance: its z is Armitage's times sqrt((N - 1) / N)
    sm = Table(table, shift_zeros=False).test_ordinal_association(
        row_scores=np.array(SCORES, dtype=float), col_scores=np.array([1.0, 0.0])
    )
    assert sm.zscore == pytest.approx(z * math.sqrt(149 / 150), rel=1e-12)
    assert ca["statistic"] == pytest.approx(z, rel=1e-12)
    assert ca["p"] == pytest.approx(stats.norm.sf(z), rel=1e-9, abs=1e-15)
    y = np.concatenate([[1] * kk + [0] * (50 - kk) for kk in k])
    x = np.repeat(SCORES, 50)
    slope = np.polyfit(x, y, 1)[0]
    assert ca["estimate"] == pytest.approx(slope, rel=1e-12)
    assert ca["counts"]["k"] == list(k) and ca["counts"]["n"] == list(n)
    assert ca["options"] == {"scores": [1, 2, 4], "alternative": "greater", "variance": "n"}
    chi = _analysis(doc, "accuracy-homogeneity")
    chi2, p, df, _ = stats.chi2_contingency(table, correction=False)
    assert chi["statistic"] == pytest.approx(chi2, rel=1e-12)
    assert chi["p"] == pytest.approx(p, rel=1e-9)
    assert chi["df"] == df == 2
    trend = "supported" if stats.norm.sf(z) < 0.05 else "not-supported"
    assert doc["verdicts"]["trend"] == trend
    assert doc["verdicts"]["slope"] == ("supported" if slope >= 0.05 else "not-supported")
    assert doc["decision"]["outcome"] == ("adopt" if trend == "supported" else "keep")


@pytest.mark.parametrize("op, verdict", [("ge", "supported"), ("gt", "not-supported")])
def test_a_slope_threshold_on_the_figure_is_decided_exactly(tmp_path, op, verdict):
    """k = (22, 27, 44): the slope is (-4*22 - 27 + 5*44) / 700 = 105/700 = 0.15 exactly."""
    edit = (
        "compare: {target: accuracy-trend, quantity: estimate, op: ge, value: 0.05}",
        f"compare: {{target: accuracy-trend, quantity: estimate, op: {op}, value: 0.15}}",
    )
    root = _project(tmp_path, "dose-trend", edit)
    doc = _score(root, "dose-trend", _trend_records((22, 27, 44)))
    assert _analysis(doc, "accuracy-trend")["exact"]["estimate"] == "3/20"
    assert doc["verdicts"]["slope"] == verdict


# -- (b) agreement between raters, one row per (answer, rater) -----------------------------------

RATERS = ("ann", "bob", "llm")


def _ratings(seed: int, answers: int = 30) -> dict[str, list[int]]:
    rng = random.Random(seed)
    out: dict[str, list[int]] = {r: [] for r in RATERS}
    for _ in range(answers):
        truth = rng.choice([0, 1, 2])
        for r, noise in zip(RATERS, (0.15, 0.2, 0.35), strict=True):
            out[r].append(truth if rng.random() > noise else rng.choice([0, 1, 2]))
    return out


def _rating_records(grades: dict[str, list[int]]) -> list[dict]:
    out = []
    for r, gs in grades.items():
        for i, g in enumerate(gs):
            out.append(
                {"ratingId": f"a{i}-{r}", "answer": f"a{i}", "rater": r, "grade": g, "attempt": 1}
            )
    random.Random(1).shuffle(out)
    return out


def _fleiss_null_z(counts: np.ndarray, kappa: float) -> float:
    """Fleiss, Nee & Landis (1979): the standard error of kappa under kappa = 0 with N units
    and m ratings each, se0 = sqrt(2 / (N m (m - 1))) * sqrt((sum p_j q_j)^2 -
    sum p_j q_j (q_j - p_j)) / sum p_j q_j."""
    big_n, m = counts.shape[0], counts[0].sum()
    p = counts.sum(axis=0) / (big_n * m)
    q = 1 - p
    pq = (p * q).sum()
    se0 = math.sqrt(2 / (big_n * m * (m - 1))) * math.sqrt(pq**2 - (p * q * (q - p)).sum()) / pq
    return kappa / se0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rater_agreement_against_statsmodels_and_sklearn(tmp_path, seed):
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

    grades = _ratings(seed)
    root = _project(tmp_path, "rater-agreement")
    doc = _score(root, "rater-agreement", _rating_records(grades))
    data = np.array([grades[r] for r in RATERS]).T
    counts, _ = aggregate_raters(data, n_cat=3)
    kappa = fleiss_kappa(counts, method="fleiss")
    fl = _analysis(doc, "fleiss")
    assert fl["estimate"] == pytest.approx(kappa, rel=1e-12)
    z = _fleiss_null_z(counts, kappa)
    assert fl["statistic"] == pytest.approx(z, rel=1e-10)
    assert fl["p"] == pytest.approx(stats.norm.sf(z), rel=1e-8)
    assert fl["counts"]["units"] == 30 and fl["counts"]["raters"] == 3
    ck = _analysis(doc, "cohen-humans")
    a, b = np.array(grades["ann"]), np.array(grades["bob"])
    weighted = cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2])
    assert ck["estimate"] == pytest.approx(weighted, rel=1e-12)
    table = np.zeros((3, 3))
    for x, y in zip(a, b, strict=True):
        table[x, y] += 1
    sm = cohens_kappa(table, wt="quadratic")
    assert sm.kappa == pytest.approx(weighted, rel=1e-12)
    low = weighted - stats.norm.ppf(0.975) * sm.std_kappa
    assert ck["lower"] == pytest.approx(low, rel=1e-9)
    agree = kappa >= 0.6 and stats.norm.sf(z) < 0.05
    assert doc["verdicts"]["raters-agree"] == ("supported" if agree else "not-supported")
    assert doc["verdicts"]["humans-agree"] == ("supported" if low > 0.7 else "not-supported")
    assert doc["decision"]["outcome"] == ("use-llm-grader" if agree else "keep-humans")


def test_two_raters_needs_exactly_two(tmp_path, capsys):
    """Cohen's kappa over a selection holding three raters is refused, naming the analysis."""
    edit = (
        "of: {where: [{factor: rater, levels: [ann, bob]}]}",
        "of: {where: [{factor: rater, levels: [ann, bob, llm]}]}",
    )
    root = _project(tmp_path, "rater-agreement", edit)
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in _rating_records(_ratings(1))))
    out = root / "SCORE.json"
    args = ["--project", str(root), "rater-agreement", "score"]
    assert main([*args, "--observations", str(obs), "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert "analysis cohen-humans (cohens-kappa)" in err and "exactly two values of 'rater'" in err
    assert "Traceback" not in err and not out.exists()


# -- (c) pass@k: several samples per problem ----------------------------------------------------


def _pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Chen et al. (2021), eq. 1: 1 - C(n - c, k) / C(n, k) per problem."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def _sample_records(correct: dict[str, list[int]], samples: int = 10) -> list[dict]:
    out = []
    for decoding, cs in correct.items():
        for p, c in enumerate(cs):
            for s in range(samples):
                out.append(
                    {
                        "sampleId": f"{decoding}-{p}-{s}",
                        "problem": f"p{p}",
                        "decoding": decoding,
                        "passed": s < c,
                        "attempt": 1,
                    }
                )
    random.Random(2).shuffle(out)
    return out


def test_pass_at_k_against_the_unbiased_estimator(tmp_path):
    rng = random.Random(4)
    correct = {d: [rng.randint(0, 10) for _ in range(20)] for d in ("greedy-temp", "nucleus")}
    root = _project(tmp_path, "pass-at-k")
    doc = _score(root, "pass-at-k", _sample_records(correct))
    for d, cs in correct.items():
        for k in (1, 5):
            want = sum(_pass_at_k(10, c, k) for c in cs) / 20
            got = _analysis(doc, f"pass-at-{k}-{d}")
            assert got["exact"]["estimate"] == f"{want.numerator}/{want.denominator}"
            assert got["estimate"] == pytest.approx(float(want), rel=1e-15)
            assert got["counts"]["problems"] == 20
    want5 = sum(_pass_at_k(10, c, 5) for c in correct["nucleus"]) / 20
    assert doc["verdicts"]["nucleus-pass-at-5"] == (
        "supported" if want5 >= Fraction(55, 100) else "not-supported"
    )


@pytest.mark.parametrize("op, verdict", [("ge", "supported"), ("gt", "not-supported")])
def test_pass_at_5_on_its_threshold(tmp_path, op, verdict):
    """9 problems with 6 of 10 right (pass@5 = 1), 4 with 1 right (1 - C(9,5)/C(10,5) = 1/2)
    and 7 with none: pass@5 = (9 + 4/2) / 20 = 0.55 exactly."""
    edit = ("op: ge, value: 0.55", f"op: {op}, value: 0.55")
    root = _project(tmp_path, "pass-at-k", edit)
    cs = [6] * 9 + [1] * 4 + [0] * 7
    doc = _score(root, "pass-at-k", _sample_records({"greedy-temp": [3] * 20, "nucleus": cs}))
    assert _analysis(doc, "pass-at-5-nucleus")["exact"]["estimate"] == "11/20"
    assert doc["verdicts"]["nucleus-pass-at-5"] == verdict


# -- (d) equivalence of two means: TOST ---------------------------------------------------------


def _quality_records(student: list[float], teacher: list[float]) -> list[dict]:
    out = []
    for model, xs in (("student", student), ("teacher", teacher)):
        for i, x in enumerate(xs):
            out.append({"rowId": f"{model}-{i}", "model": model, "quality": x, "attempt": 1})
    return out


@pytest.mark.parametrize("seed, shift", [(1, 0.0), (2, 0.05), (3, 0.25)])
def test_tost_against_statsmodels(tmp_path, seed, shift):
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, ttost_ind

    rng = np.random.default_rng(seed)
    teacher = np.round(rng.normal(3.0, 0.4, 40), 2)
    student = np.round(rng.normal(3.0 + shift, 0.5, 40), 2)
    root = _project(tmp_path, "tost-latency")
    doc = _score(root, "tost-latency", _quality_records(student.tolist(), teacher.tolist()))
    p, _, _ = ttost_ind(student, teacher, -0.3, 0.3, usevar="unequal")
    tost = _analysis(doc, "quality-tost")
    assert tost["p"] == pytest.approx(p, rel=1e-9)
    diff = student.mean() - teacher.mean()
    assert tost["estimate"] == pytest.approx(diff, rel=1e-12, abs=1e-14)
    lo, hi = CompareMeans(DescrStatsW(student), DescrStatsW(teacher)).tconfint_diff(
        alpha=0.1, usevar="unequal"
    )
    interval = _analysis(doc, "quality-interval")
    assert interval["lower"] == pytest.approx(lo, rel=1e-10)
    assert interval["upper"] == pytest.approx(hi, rel=1e-10)
    se = math.sqrt(student.var(ddof=1) / 40 + teacher.var(ddof=1) / 40)
    assert tost["se"] == pytest.approx(se, rel=1e-12)
    supported = p < 0.05 and abs(diff) <= 0.1
    assert doc["verdicts"]["equivalent"] == ("supported" if supported else "not-supported")


@pytest.mark.parametrize("op, verdict", [("le", "supported"), ("lt", "not-supported")])
def test_a_mean_difference_on_its_threshold(tmp_path, op, verdict):
    """Student scores are the teacher's plus 0.1 on average, exactly in decimals (the float
    difference of the means is not 0.1): |a - b| <= 0.1 holds and |a - b| < 0.1 does not."""
    teacher = [round(2.5 + 0.1 * (i % 7), 1) for i in range(40)]
    student = [round(t + (0.3 if i % 2 else -0.1), 1) for i, t in enumerate(teacher)]
    floats = sum(student) / 40 - sum(teacher) / 40
    edit = (
        "quantity: abs_estimate, op: le, value: 0.1",
        f"quantity: abs_estimate, op: {op}, value: 0.1",
    )
    root = _project(tmp_path, "tost-latency", edit)
    doc = _score(root, "tost-latency", _quality_records(student, teacher))
    exact = (
        sum(Fraction(str(x)) for x in student) / 40 - sum(Fraction(str(x)) for x in teacher) / 40
    )
    assert exact == Fraction(1, 10) and floats != 0.1
    assert _analysis(doc, "quality-tost")["p"] < 0.05
    assert doc["verdicts"]["equivalent"] == verdict


# -- most other shapes in one study --------------------------------------------------------------


def _runs(seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for domain in ("d1", "d2"):
        for i in range(40):
            item = f"{domain}-{i}"
            repo = f"repo-{i % 8}"
            base = rng.random()
            for system, skill, slow in (("x", 0.75, 0.0), ("y", 0.55, 0.8)):
                gold = rng.choice(["cat", "dog"])
                right = rng.random() < skill + (0.1 if domain == "d2" else 0.0)
                out.append(
                    {
                        "rowId": f"{system}-{item}",
                        "item": item,
                        "repo": repo,
                        "system": system,
                        "domain": domain,
                        "correct": right,
                        "latency": round(2.0 + slow + base + rng.gauss(0, 0.5), 3),
                        "conf": round(rng.random(), 2),
                        "label": gold if rng.random() < 0.8 else rng.choice(["cat", "dog"]),
                        "gold": gold,
                        "attempt": 1,
                    }
                )
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_the_other_shapes_against_their_oracles(tmp_path, seed):
    import statsmodels.api as sm
    from sklearn.metrics import brier_score_loss, f1_score
    from statsmodels.stats.contingency_tables import StratifiedTable, cochrans_q, mcnemar
    from statsmodels.stats.multitest import multipletests

    runs = _runs(seed)
    root = _project(tmp_path, "many-shapes")
    doc = _score(root, "many-shapes", runs)
    by = {(r["system"], r["item"]): r for r in runs}
    items = [r["item"] for r in runs if r["system"] == "x"]
    xa = np.array([by["x", i]["correct"] for i in items])
    ya = np.array([by["y", i]["correct"] for i in items])
    table = [
        [int((xa & ya).sum()), int((xa & ~ya).sum())],
        [int((~xa & ya).sum()), int((~xa & ~ya).sum())],
    ]
    p_mc = mcnemar(table, exact=True).pvalue
    assert _analysis(doc, "mcnemar")["p"] == pytest.approx(p_mc, rel=1e-12)
    # McNemar's statistic is a count (n10): an integer in SCORE.json, without decimals in
    # SCORE.md, where the figures beside it keep the registered decimals
    n10 = _analysis(doc, "mcnemar")["statistic"]
    assert type(n10) is int and n10 == table[0][1]
    row = next(ln for ln in (root / "SCORE.md").read_text().splitlines() if "| `mcnemar` |" in ln)
    assert f"| n10 = {n10} |" in row and re.search(r"\| -?\d+\.\d{4} \[", row), row
    tables = []
    for d in ("d1", "d2"):
        k = [sum(r["correct"] for r in runs if r["system"] == s and r["domain"] == d) for s in "xy"]
        tables.append(np.array([[k[0], 40 - k[0]], [k[1], 40 - k[1]]], dtype=float))
    st = StratifiedTable(tables)
    cmh = _analysis(doc, "cmh")
    assert cmh["estimate"] == pytest.approx(st.oddsratio_pooled, rel=1e-12)
    assert cmh["p"] == pytest.approx(st.test_null_odds(correction=False).pvalue, rel=1e-9)
    q = cochrans_q(np.stack([xa, ya], axis=1).astype(int))
    assert _analysis(doc, "cochran-q")["statistic"] == pytest.approx(q.statistic, rel=1e-12)
    lat = {d: [r["latency"] for r in runs if r["domain"] == d] for d in ("d1", "d2")}
    f, p = stats.f_oneway(lat["d1"], lat["d2"])
    assert _analysis(doc, "anova")["statistic"] == pytest.approx(f, rel=1e-10)
    assert _analysis(doc, "anova")["p"] == pytest.approx(p, rel=1e-9)
    lx = np.array([r["latency"] for r in runs if r["system"] == "x"])
    ly = np.array([r["latency"] for r in runs if r["system"] == "y"])
    w = stats.ttest_ind(lx, ly, equal_var=False)
    welch = _analysis(doc, "welch")
    assert welch["statistic"] == pytest.approx(w.statistic, rel=1e-12)
    assert welch["p"] == pytest.approx(w.pvalue, rel=1e-9)
    adjusted = multipletests([p_mc, w.pvalue], method="holm")[1]
    assert _analysis(doc, "mcnemar")["adjustedP"] == pytest.approx(adjusted[0], rel=1e-12)
    assert welch["adjustedP"] == pytest.approx(adjusted[1], rel=1e-12)
    holm = _analysis(doc, "holm-primary")
    rejected = int(multipletests([p_mc, w.pvalue], alpha=0.05, method="holm")[0].sum())
    assert holm["counts"]["rejected"] == rejected
    assert holm["estimate"] == rejected and holm["exact"]["estimate"] == f"{rejected}/1"
    assert doc["verdicts"]["shapes"] == ("supported" if rejected >= 1 else "not-supported")
    # cluster-robust (CR1, t with G - 1 df): statsmodels OLS of latency on arm a, by repo
    rows = [r for r in runs]
    y = np.array([r["latency"] for r in rows])
    arm = np.array([1.0 if r["system"] == "x" else 0.0 for r in rows])
    groups = np.array([int(r["repo"].split("-")[1]) for r in rows])
    fit = sm.OLS(y, sm.add_constant(arm)).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    cl = _analysis(doc, "clustered")
    assert cl["estimate"] == pytest.approx(fit.params[1], rel=1e-12)
    assert cl["se"] == pytest.approx(fit.bse[1], rel=1e-10)
    assert cl["p"] == pytest.approx(fit.pvalues[1], rel=1e-8)
    f1 = f1_score([r["gold"] for r in runs], [r["label"] for r in runs], average="macro")
    assert _analysis(doc, "f1")["estimate"] == pytest.approx(f1, rel=1e-12)
    xs = [r for r in runs if r["system"] == "x"]
    brier = brier_score_loss([int(r["correct"]) for r in xs], [r["conf"] for r in xs])
    assert _analysis(doc, "brier")["estimate"] == pytest.approx(brier, rel=1e-12)
    # SCORE.md explains the verdict with the analysis' figures the rule read
    md = (root / "SCORE.md").read_text()
    assert f"standard error < 1: met by 1 of 1: welch ({welch['se']:.4g})" in md
    ws = welch["statistic"] > 2 and welch["se"] < 1 and welch["df"] > 10
    assert doc["verdicts"]["welch-statistic"] == ("supported" if ws else "not-supported")


EQUIVALENT = """  - id: same-pass-at-5
    title: Nucleus and greedy sampling have equivalent pass@5 (within 0.1)
    analyses:
      - id: pass-at-5-difference
        method: pass-at-k-difference
        metric: solved
        a: {where: [{factor: decoding, levels: [nucleus]}]}
        b: {where: [{factor: decoding, levels: [greedy-temp]}]}
        unit: problem
        options: {k: 5, alternative: two-sided, level: 0.9, margin: 0}
    rule:
      all_of:
        - compare: {target: pass-at-5-difference, quantity: lower, op: ge, value: -0.1}
        - compare: {target: pass-at-5-difference, quantity: upper, op: le, value: 0.1}
        - compare: {target: pass-at-5-difference, quantity: estimate, op: OP, value: 0.05}
constants:
"""


@pytest.mark.parametrize("op, verdict", [("le", "supported"), ("lt", "not-supported")])
def test_an_equivalence_claim_on_a_difference_of_pass_at_k(tmp_path, op, verdict):
    """Two decoding settings on the same 20 problems, an equivalence claim on their pass@5
    difference (the two-sided 90% interval within +/-0.1, TOST at 0.05), and a difference of
    exactly 1/20 read with `le` and `lt`: greedy has 3 of 10 right on every problem (pass@5 =
    1 - C(7,5)/C(10,5) = 1 - 21/252 = 11/12), nucleus the same except 12 problems with 6 right
    (pass@5 = 1), so by hand D = 12 (1 - 11/12)/20 = 1/20 (the float of the per-problem
    values' mean is not needed: the figure is the fraction). Checked against scipy's paired t
    of the per-problem values."""
    edit = ("constants:\n", EQUIVALENT.replace("op: OP", f"op: {op}"))
    root = _project(tmp_path, "pass-at-k", edit)
    nucleus = [3] * 20
    nucleus[:12] = [6] * 12  # 12 problems at pass@5 = 1: each +1/12
    greedy = [3] * 20
    per = [
        _pass_at_k(10, a, 5) - _pass_at_k(10, b, 5) for a, b in zip(nucleus, greedy, strict=True)
    ]
    assert sum(per) / 20 == Fraction(1, 20)  # 12 * (1 - 11/12) / 20 = 1/20, by hand
    doc = _score(root, "pass-at-k", _sample_records({"greedy-temp": greedy, "nucleus": nucleus}))
    row = _analysis(doc, "pass-at-5-difference")
    assert row["exact"]["estimate"] == "1/20"
    want = stats.ttest_rel([float(x) for x in per], [0.0] * 20)
    ci = want.confidence_interval(0.9)
    assert row["statistic"] == pytest.approx(want.statistic, rel=1e-10)
    assert row["lower"] == pytest.approx(ci.low, rel=1e-10)
    assert row["upper"] == pytest.approx(ci.high, rel=1e-10)
    assert ci.low >= -0.1 and ci.high <= 0.1
    assert row["counts"]["problems"] == 20 and row["counts"]["unpairedA"] == 0
    assert doc["verdicts"]["same-pass-at-5"] == verdict


def test_data_the_method_refuses_stop_score_naming_the_analysis(tmp_path, capsys):
    """pass@5 of a problem with 3 samples does not exist: score stops, naming the analysis and
    the method's reason, and writes nothing."""
    records = [
        r
        for r in _sample_records({"greedy-temp": [3] * 20, "nucleus": [5] * 20})
        if not (r["problem"] == "p0" and r["decoding"] == "nucleus" and r["sampleId"][-1] > "2")
    ]
    root = _project(tmp_path, "pass-at-k")
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = root / "SCORE.json"
    args = ["--project", str(root), "pass-at-k", "score", "--observations", str(obs)]
    assert main([*args, "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert "analysis pass-at-5-nucleus (pass-at-k): the method refuses its input or options" in err
    assert "Traceback" not in err and not out.exists() and not out.with_suffix(".md").exists()


def test_pass_at_k_over_two_settings_is_refused_not_pooled(tmp_path, capsys):
    """A newcomer's `of` selecting both decoding settings: the same problem ids in both cells
    would make one problem of 20 samples (10 of each setting), and pass@5 of neither (with 3
    and 5 right of 10 per setting, the pooled problem has 8 of 20: 1 - C(12,5)/C(20,5) =
    0.949, while each setting's own pass@5 is 1 - C(7,5)/C(10,5) = 0.917 and 1 - C(5,5)/C(10,5)
    = 0.996). score stops naming the analysis, the problem and both cells; nothing is written."""
    edit = (
        'levels: ["{decoding}"]}]}\n        unit: problem\n        options: {k: 5}',
        "levels: [greedy-temp, nucleus]}]}\n        unit: problem\n        options: {k: 5}",
    )
    root = _project(tmp_path, "pass-at-k", edit)
    obs = root / "obs.jsonl"
    records = _sample_records({"greedy-temp": [3] * 20, "nucleus": [5] * 20})
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = root / "SCORE.json"
    args = ["--project", str(root), "pass-at-k", "score", "--observations", str(obs)]
    assert main([*args, "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert "(pass-at-k): problem 'p" in err
    assert "has samples in cells greedy-temp and nucleus" in err or (
        "has samples in cells nucleus and greedy-temp" in err
    )
    assert "register one analysis per level" in err
    assert "Traceback" not in err and not out.exists() and not out.with_suffix(".md").exists()


def test_the_report_shows_the_analyses_and_explains_the_verdict(tmp_path):
    """report.html (prereg demo --plan) lists each analysis with its figures, and the verdict's
    deciding figures name the analysis the rule read."""
    root = _project(tmp_path, "dose-trend")
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in _trend_records((22, 26, 45))))
    plan = root / "plan.json"
    step = ["score", "--observations", "{root}/obs.jsonl", "--out", "{out}/SCORE.json"]
    plan.write_text(
        json.dumps({"steps": [{"title": "score", "study": "dose-trend", "args": step}]})
    )
    out = tmp_path / "out"
    assert main(["--project", str(root), "demo", "--plan", str(plan), "--out", str(out)]) == 0
    page = (out / "dose-trend" / "report.md").read_text()
    assert "## Analyses" in page
    doc = json.loads((out / "dose-trend" / "SCORE.json").read_text())
    z = _analysis(doc, "accuracy-trend")["statistic"]
    assert f"z = {z:.4g}" in page or f"z = {z:.6g}" in page
    assert "met by 1 of 1: accuracy-trend" in page
