"""Two designs written from the docs by a newcomer, scored end to end.

tests/fixtures/newcomer/metriccorr.yaml: a metric's agreement with human ratings. COMET's
scores rank the eight items 1, 2, 4, 6, 7, 8, 5, 3 against the humans' 1..8: Σd² = 42, so
Spearman's rho is 1 − 6·42/(8·63) = 1/2 exactly (scipy's float is 0.5000000000000001): a rule
`estimate ge 0.5` holds and `gt 0.5` fails, as exact arithmetic decides. Oracles:
scipy.stats.spearmanr, kendalltau, pearsonr(...).confidence_interval, and Steiger's eq. 7 for
Williams' t.

tests/fixtures/newcomer/friedman.yaml: four models on the same problems, Friedman's test then
Wilcoxon signed-rank with Holm. Oracles: scipy.stats.friedmanchisquare and scipy.stats.wilcoxon
(exact, no ties), Holm by hand.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES

CORR = FIXTURES / "newcomer" / "metriccorr.yaml"
FRIED = FIXTURES / "newcomer" / "friedman.yaml"
HUMAN = [1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]
COMET = [0.15, 0.25, 0.45, 0.65, 0.75, 0.85, 0.55, 0.35]
BLEU = [12.5, 30.1, 18.4, 22.0, 41.3, 25.7, 19.9, 35.2]


def _project(root, name, text):
    (root / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text)


def _score(root, name, lines):
    assert main(["--project", str(root), "compile"]) == 0
    log = root / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), name, "score", *args]) == 0
    return json.loads(out.read_text())


def _corr_log():
    rows = []
    for i in range(8):
        for source, xs in (("human", HUMAN), ("comet", COMET), ("bleu", BLEU)):
            rows.append({"item": f"i{i}", "source": source, "score": xs[i]})
    rows.append({"item": "lonely", "source": "human", "score": 3.0})  # no metric scored it
    return rows


def test_the_data_sit_on_the_threshold():
    d2 = sum(
        (h - c) ** 2 for h, c in zip(stats.rankdata(HUMAN), stats.rankdata(COMET), strict=True)
    )
    assert 1 - Fraction(6 * int(d2), 8 * 63) == Fraction(1, 2)
    assert stats.spearmanr(HUMAN, COMET).statistic != 0.5  # the float misses it


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_metric_correlation_study(tmp_path, op, verdict):
    text = CORR.read_text()
    old = "- compare: {target: rho-comet, quantity: estimate, op: ge, value: 0.5}"
    assert text.count(old) == 1
    # the registered rule asks P < 0.05 too, which 8 items cannot give; the threshold alone here
    text = text.replace(
        "        - compare: {target: rho-comet, quantity: p, op: lt, value: 0.05}\n        " + old,
        "        " + old.replace("op: ge", f"op: {op}"),
    )
    assert text.count("quantity: p, op: lt, value: 0.05}\n        - compare: {target: rho") == 0
    _project(tmp_path, "metriccorr", text)
    doc = _score(tmp_path, "metriccorr", _corr_log())
    got = {a["id"]: a for a in doc["analyses"]}
    rho = got["rho-comet"]
    assert rho["exact"]["estimate"] == "1/2" and rho["estimate"] == 0.5
    assert rho["counts"]["pairs"] == 8 and rho["counts"]["unpairedA"] == 1
    assert rho["p"] == 0.5 and rho["exact"]["p"] == "1/2"  # rho exactly on its null value
    assert doc["verdicts"]["comet-agrees"] == verdict
    tau = got["tau-comet"]
    assert tau["estimate"] == pytest.approx(stats.kendalltau(HUMAN, COMET).statistic, rel=1e-12)
    r = got["r-comet"]
    ref = stats.pearsonr(HUMAN, COMET)
    ci = ref.confidence_interval(0.95)
    assert r["estimate"] == pytest.approx(ref.statistic, rel=1e-12)
    assert (r["lower"], r["upper"]) == pytest.approx((ci.low, ci.high), rel=1e-12)
    w = got["williams"]
    r12 = stats.spearmanr(HUMAN, COMET).statistic
    r13 = stats.spearmanr(HUMAN, BLEU).statistic
    r23 = stats.spearmanr(COMET, BLEU).statistic
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (r12 - r13) * math.sqrt(
        7 * (1 + r23) / (2 * 7 / 5 * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3)
    )
    assert w["statistic"] == pytest.approx(t, rel=1e-10) and w["df"] == 5
    assert w["p"] == pytest.approx(stats.t.sf(t, 5), rel=1e-9)
    assert w["counts"]["units"] == 8 and w["counts"]["incompleteUnits"] == 1


def test_an_irrational_r_carries_no_fraction_and_is_decided(tmp_path):
    """COMET's last two scores 0.35 and 0.56: ranks 1, 2, 4, 6, 7, 8, 3, 5, Σd² = 38, rho = 1 −
    6·38/504 = 23/42 (rational, exact); the Pearson r of the decimals is irrational (r² is not
    the square of a fraction), so it is no exact fraction, and a rule on it is decided as its
    true value is (here 0.555, which its float decides; next to its float a ball decides, as
    tests/stats/test_correlation.py checks)."""
    text = CORR.read_text().replace(
        "        - compare: {target: rho-comet, quantity: p, op: lt, value: 0.05}\n"
        "        - compare: {target: rho-comet, quantity: estimate, op: ge, value: 0.5}",
        "        - compare: {target: r-comet, quantity: estimate, op: ge, value: 0.5}",
    )
    _project(tmp_path, "metriccorr", text)
    rows = _corr_log()
    comet = [*COMET[:6], 0.35, 0.56]
    for row in rows:
        if row["source"] == "comet" and row["item"] in ("i6", "i7"):
            row["score"] = comet[int(row["item"][1])]
    doc = _score(tmp_path, "metriccorr", rows)
    got = {a["id"]: a for a in doc["analyses"]}
    d2 = sum((a - b) ** 2 for a, b in zip(range(1, 9), [1, 2, 4, 6, 7, 8, 3, 5], strict=True))
    assert d2 == 38 and 1 - Fraction(6 * d2, 504) == Fraction(23, 42)
    assert got["rho-comet"]["exact"]["estimate"] == "23/42"
    xs = [Fraction(repr(v)) for v in HUMAN]
    ys = [Fraction(repr(v)) for v in comet]
    mx, my = sum(xs) / 8, sum(ys) / 8
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    r2 = sxy**2 / (sum((a - mx) ** 2 for a in xs) * sum((b - my) ** 2 for b in ys))
    assert math.isqrt(r2.numerator) ** 2 != r2.numerator or (
        math.isqrt(r2.denominator) ** 2 != r2.denominator
    )
    r = stats.pearsonr(HUMAN, comet).statistic
    assert "estimate" not in (got["r-comet"].get("exact") or {})
    assert got["r-comet"]["estimate"] == pytest.approx(r, rel=1e-12)
    above = sxy > 0 and r2 >= Fraction(1, 4)
    assert doc["verdicts"]["comet-agrees"] == ("supported" if above else "not-supported")


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("null_value: 0.5, level", "null_value: 1.5, level", "refuses option null_value"),
        ("variance: bonett-wright}", "variance: exact}", "refuses option variance"),
        (
            "          - {where: [{factor: source, levels: [bleu]}]}\n        unit: item",
            "        unit: item",
            "correlation-difference reads three groups",
        ),
    ],
)
def test_compile_refuses_what_score_would(tmp_path, capsys, old, new, words):
    text = CORR.read_text()
    assert text.count(old) == 1
    _project(tmp_path, "metriccorr", text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    assert words in " ".join(capsys.readouterr().err.split())


def test_a_constant_metric_is_refused_at_score_naming_the_analysis(tmp_path, capsys):
    _project(tmp_path, "metriccorr", CORR.read_text())
    rows = [r if r["source"] != "comet" else {**r, "score": 0.5} for r in _corr_log()]
    assert main(["--project", str(tmp_path), "compile"]) == 0
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["--observations", str(log), "--out", str(tmp_path / "S.json"), "--quiet"]
    assert main(["--project", str(tmp_path), "metriccorr", "score", *args]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "analysis rho-comet (spearman-correlation)" in err
    assert "y (arm b) is constant (0.5 in all 8 pairs)" in err
    assert not (tmp_path / "S.json").exists()


BLEU4 = {
    "m1": [20.1, 25.3, 18.2, 30.5, 22.4, 27.7, 19.9, 24.6, 21.3, 28.8, 23.5, 26.0],
    "m2": [21.0, 24.1, 19.5, 29.9, 23.3, 26.2, 20.4, 25.8, 20.7, 27.5, 24.9, 25.1],
    "m3": [19.4, 26.6, 17.8, 31.2, 21.9, 28.4, 18.5, 23.9, 22.6, 29.3, 22.8, 26.9],
    "m4": [24.2, 29.0, 22.7, 33.4, 26.1, 30.9, 23.8, 28.5, 25.4, 32.6, 27.2, 29.7],
}


def test_friedman_study(tmp_path):
    _project(tmp_path, "friedman", FRIED.read_text())
    rows = [
        {"problem": f"p{i}", "model": m, "bleu": x}
        for m, xs in BLEU4.items()
        for i, x in enumerate(xs)
    ]
    doc = _score(tmp_path, "friedman", rows)
    got = {a["id"]: a for a in doc["analyses"]}
    f = got["friedman"]
    ref = stats.friedmanchisquare(*BLEU4.values())
    assert f["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert f["p"] == pytest.approx(ref.pvalue, rel=1e-10) and f["df"] == 3
    assert f["counts"]["units"] == 12
    assert doc["verdicts"]["models-differ"] == "supported"
    raw = []
    for o in ("m1", "m2", "m3"):
        w = stats.wilcoxon(BLEU4["m4"], BLEU4[o], alternative="greater", method="exact")
        assert got[f"m4-vs-{o}"]["p"] == pytest.approx(w.pvalue, rel=1e-12)
        raw.append(w.pvalue)
    order = np.argsort(raw)
    holm = np.empty(3)
    running = 0.0
    for rank, j in enumerate(order):
        running = max(running, min(1.0, (3 - rank) * raw[j]))
        holm[j] = running
    for j, o in enumerate(("m1", "m2", "m3")):
        assert got[f"m4-vs-{o}"]["adjustedP"] == pytest.approx(holm[j], rel=1e-12)
    assert doc["verdicts"]["m4-best"] == "supported"


def test_friedman_exact_is_a_fraction_and_diagnose_runs(tmp_path):
    text = FRIED.read_text().replace(
        "options: {method: chi-square, tie_correction: true}",
        "options: {method: exact, tie_correction: true}",
    )
    _project(tmp_path, "friedman", text)
    rows = [
        {"problem": f"p{i}", "model": m, "bleu": x}
        for m, xs in BLEU4.items()
        for i, x in enumerate(xs)
    ]
    doc = _score(tmp_path, "friedman", rows)
    f = next(a for a in doc["analyses"] if a["id"] == "friedman")
    num, den = map(int, f["exact"]["p"].split("/"))
    assert (24**12) % den == 0  # a share of the 24^12 arrangements (no ties within a problem)
    assert f["p"] == pytest.approx(num / den, rel=1e-15)
    # an independent estimate: 40,000 random arrangements of every problem's four grades
    x = np.array(list(BLEU4.values())).T
    observed = (stats.rankdata(x, axis=1).sum(axis=0) ** 2).sum()
    rng = np.random.default_rng(8)
    ranks = np.argsort(rng.random((40_000, 12, 4)), axis=2) + 1
    share = float(((ranks.sum(axis=1) ** 2).sum(axis=1) >= observed - 1e-9).mean())
    assert abs(share - num / den) < 4 * math.sqrt(share * (1 - share) / 40_000) + 1e-4
    assert f["p"] < 0.05
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "friedman", "diagnose", "--quiet", "--simulations", "20"]
    assert main([*args, "--seed", "3", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    assert cond["scenario"] == "m4-better"
