"""Three designs written from the docs alone by a newcomer (tests/fixtures/newcomer/), each
compiled, scored with data placed exactly on its threshold (both sides checked) and diagnosed:

- tostpair.yaml: equivalence (TOST) of paired grades within ±0.5; the student's grades are the
  teacher's less differences whose mean is exactly −0.5 as written, on the lower margin, so
  the lower t is 0 and its P exactly 1/2: `p lt 0.05` fails (statsmodels' ttost_paired);
- niratio.yaml: non-inferiority on a ratio of solve rates, margin 0.9; 36/50 against 40/50 is
  exactly 9/10: `estimate ge 0.9` holds and `gt` fails, z = 0 and P = 1/2; the one-sided
  bound is statsmodels' log-ratio interval, and diagnose reports the bound's coverage;
- difftrend.yaml: a Cochran–Armitage trend over three ordered difficulty levels (scores 1, 2,
  3, one-sided less); 32, 28 and 24 of 40 fall by exactly 1/10 a level, so `estimate le -0.1`
  holds and `lt` fails; z from statsmodels' ordinal association test (its N − 1 variance
  rescaled to N), and diagnose's truth of the slope is −0.1."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES


def _project(root: Path, name: str, text: str) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, name: str, log: Path) -> dict:
    out = root / f"{log.stem}.SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), name, "score", *args]) == 0
    return json.loads(out.read_text())


def _diagnose(root: Path, name: str, n: int = 300) -> dict:
    out = root / "DIAGNOSE.json"
    args = ["--project", str(root), name, "diagnose", "--quiet", "--simulations", str(n)]
    assert main([*args, "--seed", "2", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return {a["id"]: a for a in cond["analyses"]}


def _swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# -- TOST on paired grades ------------------------------------------------------------------------

TEACHER = [7.1, 6.4, 8.2, 5.9, 7.7, 6.8, 7.3, 6.6]
DIFF = [-0.3, -0.8, -0.4, -0.6, -0.2, -0.9, -0.5, -0.3]  # mean exactly -0.5 as written


def _grades(root: Path, shift: str = "0") -> Path:
    student = [float(Decimal(repr(t)) + Decimal(repr(d)) + Decimal(shift)) for t, d in zip(TEACHER, DIFF, strict=True)]  # fmt: skip
    log = root / f"grades{shift}.jsonl"
    rows = []
    for i, (s, t) in enumerate(zip(student, TEACHER, strict=True)):
        rows.append({"item": f"i{i}", "model": "student", "score": s})
        rows.append({"item": f"i{i}", "model": "teacher", "score": t})
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return log


def test_tost_paired_on_its_margin(tmp_path):
    from statsmodels.stats.weightstats import ttost_paired

    assert sum(Decimal(repr(d)) for d in DIFF) / 8 == Decimal("-0.5")
    root = _project(tmp_path, "tostpair", (FIXTURES / "newcomer" / "tostpair.yaml").read_text())
    doc = _score(root, "tostpair", _grades(root))
    (a,) = doc["analyses"]
    assert a["extra"]["statistic_lower"] == 0.0 and a["extra"]["p_lower"] == 0.5
    assert a["p"] == 0.5
    assert doc["verdicts"] == {"equivalent": "not-supported"}
    # 0.3 inside the margin (a mean difference of -0.2): equivalent at 0.05, both P values
    # statsmodels'
    doc = _score(root, "tostpair", _grades(root, "0.3"))
    (a,) = doc["analyses"]
    student = np.array(TEACHER) + np.array(DIFF) + 0.3
    p, lower, upper = ttost_paired(student, np.array(TEACHER), -0.5, 0.5)
    assert a["p"] == pytest.approx(p, rel=1e-9)
    assert a["extra"]["p_lower"] == pytest.approx(lower[1], rel=1e-9)
    assert a["extra"]["p_upper"] == pytest.approx(upper[1], rel=1e-9)
    assert p < 0.05
    assert doc["verdicts"] == {"equivalent": "supported"}


def test_tost_paired_diagnoses(tmp_path):
    root = _project(tmp_path, "tostpair", (FIXTURES / "newcomer" / "tostpair.yaml").read_text())
    got = _diagnose(root, "tostpair")["tost"]
    assert got["truth"] == pytest.approx(-0.1, abs=5e-7)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]


# -- non-inferiority on a ratio -------------------------------------------------------------------


def _runs(root: Path, k: dict[str, int]) -> Path:
    lines = ["task,model,solved"]
    for model, hits in k.items():
        lines += [f"t{i},{model},{'true' if i < hits else 'false'}" for i in range(50)]
    log = root / "runs.csv"
    log.write_text("\n".join(lines) + "\n")
    return log


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_noninferiority_ratio_on_its_margin(tmp_path, op, verdict):
    from statsmodels.stats.proportion import confint_proportions_2indep

    text = (FIXTURES / "newcomer" / "niratio.yaml").read_text()
    old = "compare: {target: ratio, quantity: estimate, op: ge, value: 0.9}"
    root = _project(tmp_path, "niratio", _swap(text, old, old.replace("op: ge", f"op: {op}")))
    doc = _score(root, "niratio", _runs(root, {"cheap": 36, "reference": 40}))
    (a,) = doc["analyses"]
    assert a["exact"]["estimate"] == "9/10"
    assert a["statistic"] == 0.0 and a["p"] == 0.5
    low, _ = confint_proportions_2indep(36, 50, 40, 50, compare="ratio", method="log", alpha=0.1)
    assert a["lower"] == pytest.approx(low, rel=1e-12)
    assert a["upper"] is None
    assert doc["verdicts"] == {"not-inferior": "not-supported", "keeps-ninety": verdict}


def test_noninferiority_ratio_diagnoses_its_one_sided_bound(tmp_path):
    root = _project(tmp_path, "niratio", (FIXTURES / "newcomer" / "niratio.yaml").read_text())
    got = _diagnose(root, "niratio")["ratio"]
    assert got["truth"] == pytest.approx(0.78 / 0.8, abs=5e-7)
    # the lower bound alone is the interval: its coverage is reported (it used to be missing)
    assert got["coverage"] is not None
    assert abs(got["coverage"]["share"] - 0.95) <= 4 * max(got["coverage"]["mcSe"], 0.0126)


# -- a trend over ordered difficulty --------------------------------------------------------------


def _answers(root: Path, k: tuple[int, int, int]) -> Path:
    log = root / "answers.jsonl"
    rows = [
        {"question": f"q{i}", "difficulty": level, "correct": i < hits}
        for level, hits in zip(("easy", "medium", "hard"), k, strict=True)
        for i in range(40)
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return log


@pytest.mark.parametrize(("op", "verdict"), [("le", "supported"), ("lt", "not-supported")])
def test_trend_slope_on_its_threshold(tmp_path, op, verdict):
    from statsmodels.stats.contingency_tables import Table

    text = (FIXTURES / "newcomer" / "difftrend.yaml").read_text()
    old = "compare: {target: trend, quantity: estimate, op: le, value: -0.1}"
    root = _project(tmp_path, "difftrend", _swap(text, old, old.replace("op: le", f"op: {op}")))
    doc = _score(root, "difftrend", _answers(root, (32, 28, 24)))
    (a,) = doc["analyses"]
    assert a["exact"]["estimate"] == "-1/10"
    table = Table(np.array([[32, 8], [28, 12], [24, 16]]), shift_zeros=False)
    res = table.test_ordinal_association(row_scores=np.array([1, 2, 3]))
    # statsmodels uses the N − 1 (permutation) variance; the registered variance is n (N)
    z = res.zscore * math.sqrt(120 / (120 - 1))  # N − 1 variance to the registered N
    assert a["statistic"] == pytest.approx(-abs(z), rel=1e-12)
    assert a["p"] == pytest.approx(stats.norm.cdf(a["statistic"]), rel=1e-12)
    assert a["p"] < 0.05
    assert doc["verdicts"] == {"falls": verdict}


def test_trend_diagnoses_its_slope(tmp_path):
    root = _project(tmp_path, "difftrend", (FIXTURES / "newcomer" / "difftrend.yaml").read_text())
    got = _diagnose(root, "difftrend")["trend"]
    assert got["truth"] == pytest.approx(-0.1, abs=5e-7)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]


# -- a stratified one-sided comparison ------------------------------------------------------------

# strat1.yaml: rows per cell 30, 30, 20, 20; (rag right, plain right) per benchmark. The MH
# weights are n/2 (15, 15, 10, 10), so the risk difference is (15 (3/30) + 10 (2/20))/50 =
# 1/20 exactly: `estimate ge 0.05` holds and `gt` fails.
STRAT = {"nq": (30, 20, 17), "tqa": (30, 18, 18), "hpqa": (20, 11, 9), "wiki": (20, 9, 9)}


def _strat_answers(root: Path) -> Path:
    log = root / "strat.jsonl"
    rows = []
    for bench, (n, ka, kb) in STRAT.items():
        for i in range(n):
            rows.append(
                {"question": f"{bench}{i}", "model": "rag", "bench": bench, "correct": i < ka}
            )
            rows.append({"question": f"{bench}{i}", "model": "plain", "bench": bench, "correct": i < kb})  # fmt: skip
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return log


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_stratified_one_sided(tmp_path, op, verdict):
    from statsmodels.stats.contingency_tables import StratifiedTable

    text = (FIXTURES / "newcomer" / "strat1.yaml").read_text()
    old = "compare: {target: rd, quantity: estimate, op: ge, value: 0.05}"
    root = _project(tmp_path, "strat1", _swap(text, old, old.replace("op: ge", f"op: {op}")))
    doc = _score(root, "strat1", _strat_answers(root))
    got = {a["id"]: a for a in doc["analyses"]}
    assert got["rd"]["exact"]["estimate"] == "1/20"
    tables = [np.array([[ka, n - ka], [kb, n - kb]]) for n, ka, kb in STRAT.values()]
    st = StratifiedTable(tables, shift_zeros=False)
    chi2 = st.test_null_odds(correction=False).statistic
    delta = sum(ka - n * (ka + kb) / (2 * n) for n, ka, kb in STRAT.values())
    z = math.copysign(math.sqrt(chi2), delta)
    cmh = got["cmh"]
    assert cmh["extra"]["z"] == pytest.approx(z, rel=1e-10)
    assert cmh["p"] == pytest.approx(stats.norm.sf(z), rel=1e-9)
    low = math.exp(math.log(st.oddsratio_pooled) - stats.norm.ppf(0.95) * st.logodds_pooled_se)
    assert cmh["lower"] == pytest.approx(low, rel=1e-11) and cmh["upper"] is None
    expected = "supported" if stats.norm.sf(z) < 0.05 else "not-supported"
    assert doc["verdicts"] == {"rag-better": expected, "rag-by-five": verdict}


def test_stratified_one_sided_diagnoses(tmp_path):
    """The scenario's rates (rag 0.65 against 0.5 on nq and tqa, 0.45 against 0.4 on hpqa and
    wiki): the MH risk difference's truth is (2 (15) 0.15 + 2 (10) 0.05)/50 = 0.11 and the
    common odds ratio's Σ w p_a (1 − p_b) / Σ w p_b (1 − p_a) = 15.15/9.65 = 303/193."""
    root = _project(tmp_path, "strat1", (FIXTURES / "newcomer" / "strat1.yaml").read_text())
    got = _diagnose(root, "strat1")
    assert got["rd"]["truth"] == pytest.approx(0.11, abs=5e-7)
    assert got["cmh"]["truth"] == pytest.approx(303 / 193, abs=5e-7)
    assert abs(got["rd"]["bias"]) <= 4 * got["rd"]["biasMcSe"]
    assert got["rd"]["coverage"] is not None and got["cmh"]["coverage"] is not None


# -- agreement with sentences clustered in documents ----------------------------------------------

# cagree.yaml: one row per sentence with both annotators' labels; a derived field is 1 where
# they agree (`other`: the two fields of one row), its mean the agreement, the interval a
# bootstrap over documents. 14 of 20 agree: exactly 7/10 (`ge 0.7` holds, `gt` fails).
AGREE = {"d1": [1, 1, 1, 1], "d2": [1, 1, 0, 1], "d3": [1, 0, 1, 0], "d4": [1, 1, 1, 1], "d5": [0, 1, 0, 0]}  # fmt: skip


def _pairs(root: Path) -> Path:
    log = root / "pairs.jsonl"
    rows, i = [], 0
    for doc, agreed in AGREE.items():
        for a in agreed:
            label_b = "pos" if a else "neu"
            rows.append({"sentence": f"s{i}", "batch": "main", "doc": doc, "label_a": "pos", "label_b": label_b})  # fmt: skip
            i += 1
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return log


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_clustered_agreement(tmp_path, op, verdict):
    text = (FIXTURES / "newcomer" / "cagree.yaml").read_text()
    old = "compare: {target: boot, quantity: estimate, op: ge, value: 0.7}"
    root = _project(tmp_path, "cagree", _swap(text, old, old.replace("op: ge", f"op: {op}")))
    doc = _score(root, "cagree", _pairs(root))
    (a,) = doc["analyses"]
    assert a["exact"]["estimate"] == "7/10"
    assert a["counts"] == {"n": 20, "clusters": 5}
    # the documented resampling by hand: clusters in sorted-id order, B x G indices from
    # Generator(PCG64(7)), each replicate's pooled mean, numpy's linear quantiles at 5%, 95%
    sums = np.array([sum(v) for _, v in sorted(AGREE.items())], dtype=float)
    sizes = np.array([len(v) for _, v in sorted(AGREE.items())], dtype=float)
    idx = np.random.Generator(np.random.PCG64(7)).integers(0, 5, size=(2000, 5))
    reps = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    low, high = np.quantile(reps, [0.05, 0.95], method="linear")
    assert a["lower"] == pytest.approx(low, rel=1e-12)
    assert a["upper"] == pytest.approx(high, rel=1e-12)
    # the lower bound is a replicate itself, exactly 1/2: on its threshold (`ge 0.5` holds)
    assert low == 0.5
    assert doc["verdicts"] == {"agree": verdict}
