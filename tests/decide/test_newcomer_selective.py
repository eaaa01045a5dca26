"""A preregistration written from the docs alone by a newcomer (tests/fixtures/newcomer/
selective.yaml): adopt the new model when its stated confidence is calibrated (expected
calibration error over 10 equal-width bins at most 0.05) and its 80% most confident answers
are right at least 90% of the time (selective accuracy at coverage 0.8, a method of the
catalogue since this study: the newcomer first had to write it as a statistic of the study's
own, with its tie rule and its rounding of 0.8·N unregistered words of a Python file).

The data are what the evaluation notebook writes: both models' answers in one pandas
DataFrame (the two frames concatenated, so pandas writes its index as a column), exported to
Parquet with float32 confidences. They are placed with the ECE exactly 1/20 and the
selective accuracy exactly 72/80 = 9/10, both on their thresholds, and with ten answers at a
float32 0.7 (the double 0.699999988...) sharing a bin with answers at 0.75, so that binning the
float instead of the decimal the notebook wrote would give 0.09. The oracle: fractions of the
decimals the notebook wrote (numpy's shortest float32 text), rows sorted by hand."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.stats import estimators as es
from prereg.stats.methods import MethodError
from tests.conftest import FIXTURES

SPEC = FIXTURES / "newcomer" / "selective.yaml"

#: (confidence, answers, right) per group; the new model's 80 most confident answers are the
#: 0.95 and 0.85 groups (72 right), and its ECE is (0 + 0 + |9 − 10.75| + |5 − 1.75|)/100
NEW = [(0.95, 40, 38), (0.85, 40, 34), (0.75, 5, 0), (0.7, 10, 9), (0.35, 5, 5)]
#: the base model's cut at 80 answers falls inside the 20 answers tied at 0.6
BASE = [(0.9, 70, 60), (0.6, 20, 12), (0.3, 10, 2)]


def _frame(model: str, groups, seed: int):
    import pandas as pd

    rows = [(c, i < k) for c, n, k in groups for i in range(n)]
    rng = np.random.default_rng(seed)
    rng.shuffle(rows)
    return pd.DataFrame(
        {
            "question_id": [f"q{i:03d}" for i in range(1, len(rows) + 1)],
            "model": model,
            "answer": [f"answer {i}" for i in range(len(rows))],
            "confidence": np.array([c for c, _ in rows], dtype=np.float32),
            "correct": [bool(k) for _, k in rows],
        }
    )


def _export(root: Path, new=NEW, base=BASE) -> Path:
    import pandas as pd

    path = root / "answers.parquet"
    pd.concat([_frame("base", base, 2), _frame("new", new, 1)]).to_parquet(path)
    return path


def _project(root: Path, text: str | None = None) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "selective.yaml").write_text(
        SPEC.read_text() if text is None else text
    )
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, log: Path) -> tuple[dict, str]:
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "selective", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


# -- the oracle -------------------------------------------------------------------------------


def _decimal(x) -> Fraction:
    """The decimal a float32 was written as (numpy prints a float32's shortest digits)."""
    return Fraction(str(np.float32(x)))


def _ece(q, y, edges) -> Fraction:
    """Σ_b |k_b − Σ q_b| / N over bins [e_i, e_i+1) (the last closed), decimals as written."""
    q = [_decimal(v) for v in q]
    edges = [Fraction(str(e)) for e in edges]
    total = Fraction(0)
    for b in range(len(edges) - 1):
        last = b == len(edges) - 2
        inside = [
            i
            for i, v in enumerate(q)
            if edges[b] <= v and (v < edges[b + 1] or (last and v == edges[b + 1]))
        ]
        total += abs(sum(y[i] for i in inside) - sum(q[i] for i in inside))
    return total / len(q)


def _selective_expected(q, y, coverage: Fraction) -> Fraction:
    """The mean accuracy of the ⌈cN⌉ most confident answers over every order of the answers
    tied at the cut (a brute force over the tied answers' arrangements when there are few,
    else their share: the two agree wherever both run)."""
    m = math.ceil(coverage * len(q))
    ranked = sorted(zip(q, y, strict=True), key=lambda t: -t[0])
    cut = ranked[m - 1][0]
    above = [t for t in ranked if t[0] > cut]
    tied = [t for t in ranked if t[0] == cut]
    left = m - len(above)
    if len(tied) <= 7:
        orders = list(itertools.permutations(tied))
        mean = sum(Fraction(sum(t[1] for t in o[:left])) for o in orders) / len(orders)
    else:
        mean = Fraction(left * sum(t[1] for t in tied), len(tied))
    return (sum(t[1] for t in above) + mean) / m


def _groups(groups):
    q = [c for c, n, _ in groups for _ in range(n)]
    y = [int(i < k) for _, n, k in groups for i in range(n)]
    return q, y


EDGES = [i / 10 for i in range(11)]


def test_the_oracle_places_the_data_on_both_thresholds():
    q, y = _groups(NEW)
    assert _ece(q, y, EDGES) == Fraction(1, 20)
    assert _selective_expected(q, y, Fraction(4, 5)) == Fraction(9, 10)
    # binned as the float32's double, the 0.7 answers leave the 0.75 bin: another ECE
    doubles = [float(np.float32(v)) for v in q]
    k = [sum(y[i] for i in range(len(q)) if int(doubles[i] * 10) == b) for b in range(10)]
    s = [
        sum(Fraction(doubles[i]) for i in range(len(q)) if int(doubles[i] * 10) == b)
        for b in range(10)
    ]
    assert float(sum(abs(a - b) for a, b in zip(k, s, strict=True)) / len(q)) == pytest.approx(0.09)


def test_calibrated_and_selective_exactly_on_their_thresholds_adopt_the_new_model(tmp_path):
    root = _project(tmp_path)
    doc, md = _score(root, _export(root))
    q, y = _groups(NEW)
    est = {e["id"]: e for e in doc["estimates"]}
    assert Fraction(est["ece-new"]["exact"]) == _ece(q, y, EDGES) == Fraction(1, 20)
    got = {a["id"]: a for a in doc["analyses"]}
    sel = got["selective-new"]
    assert Fraction(sel["exact"]["estimate"]) == _selective_expected(q, y, Fraction(4, 5))
    assert sel["counts"]["kept"] == 80 and sel["counts"]["tied"] == 40
    assert sel["extra"]["threshold"] == pytest.approx(0.85)
    assert doc["verdicts"]["calibrated"] == "supported"
    assert doc["verdicts"]["selective"] == "supported"
    assert doc["decision"]["outcome"] == "adopt-new"
    assert "selective-new (0.9)" in md
    # the base model: its cut falls inside 20 answers tied at 0.6, which share 10 places
    qb, yb = _groups(BASE)
    base = got["selective-base"]
    assert Fraction(base["exact"]["estimate"]) == _selective_expected(qb, yb, Fraction(4, 5))
    assert Fraction(base["exact"]["estimate"]) == Fraction(60 + Fraction(10 * 12, 20), 80)
    assert base["counts"]["tiedKept"] == 10 and base["counts"]["tied"] == 20
    assert Fraction(est["ece-base"]["exact"]) == _ece(qb, yb, EDGES) == Fraction(1, 25)


def test_one_more_wrong_confident_answer_keeps_the_base_model(tmp_path):
    root = _project(tmp_path)
    worse = [(0.95, 40, 37), *NEW[1:]]  # 71 of 80 right; the 0.95 bin now off by one
    doc, _ = _score(root, _export(root, new=worse))
    q, y = _groups(worse)
    got = {a["id"]: a for a in doc["analyses"]}
    assert Fraction(got["selective-new"]["exact"]["estimate"]) == Fraction(71, 80)
    est = {e["id"]: e for e in doc["estimates"]}
    assert Fraction(est["ece-new"]["exact"]) == _ece(q, y, EDGES) == Fraction(6, 100)
    assert doc["verdicts"]["selective"] == "not-supported"
    assert doc["decision"]["outcome"] == "keep-base"


# -- the method: each tie rule, rounding, refusals ------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("coverage", [0.3, 0.5, 0.8, 1.0])
def test_selective_accuracy_tie_rules_against_counting_by_hand(seed, coverage):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 30))
    q = rng.choice([0.2, 0.5, 0.7, 0.9], size=n).tolist()  # many ties
    y = rng.integers(0, 2, size=n).tolist()
    c = Fraction(str(coverage))
    for rounding, m in (("up", math.ceil(c * n)), ("down", math.floor(c * n))):
        if m == 0:
            r = es.selective_accuracy(y, q, coverage=coverage, rounding=rounding, ties="include")
            assert r.estimate is None and "rounds down to none" in r.extra["undefined"]
            continue
        ranked = sorted(zip(q, y, strict=True), key=lambda t: -t[0])
        cut = ranked[m - 1][0]
        above = [t[1] for t in ranked if t[0] > cut]
        tied = [t[1] for t in ranked if t[0] == cut]
        r = es.selective_accuracy(y, q, coverage=coverage, rounding=rounding, ties="expected")
        share = Fraction(sum(above)) + Fraction((m - len(above)) * sum(tied), len(tied))
        assert r.exact["estimate"] == share / m
        r = es.selective_accuracy(y, q, coverage=coverage, rounding=rounding, ties="include")
        assert r.exact["estimate"] == Fraction(sum(above) + sum(tied), len(above) + len(tied))
        r = es.selective_accuracy(y, q, coverage=coverage, rounding=rounding, ties="exclude")
        if above and len(above) + len(tied) > m:
            assert r.exact["estimate"] == Fraction(sum(above), len(above))
        elif len(above) + len(tied) == m:  # the cut falls between two confidences
            assert r.exact["estimate"] == Fraction(sum(above) + sum(tied), m)
        else:
            assert r.estimate is None and "no answer is kept" in r.extra["undefined"]


def test_the_expected_tie_rule_is_the_mean_over_every_order_of_the_tied_answers():
    q = [0.9, 0.9, 0.6, 0.6, 0.6, 0.6, 0.6, 0.2]
    y = [1, 0, 1, 1, 0, 0, 1, 1]
    r = es.selective_accuracy(y, q, coverage=0.5, rounding="up", ties="expected")
    assert r.exact["estimate"] == _selective_expected(q, y, Fraction(1, 2)) == Fraction(11, 20)


def test_coverage_is_the_decimal_written_not_the_double_below_it():
    # 0.7 · 10 is 7 exactly, though the double 0.7 · 10 is 7.000000000000001 (⌈⌉ = 8)
    q = [i / 10 for i in range(10, 0, -1)]
    y = [1] * 7 + [0] * 3
    r = es.selective_accuracy(y, q, coverage=0.7, rounding="up", ties="refuse")
    assert r.counts["kept"] == 7 and r.exact["estimate"] == 1


def test_a_cut_inside_a_tie_is_refused_under_refuse_naming_the_tie():
    with pytest.raises(MethodError, match=r"falls inside 3 answers tied at confidence 0\.5"):
        es.selective_accuracy([1, 0, 1, 1], [0.9, 0.5, 0.5, 0.5], coverage=0.5, rounding="up",
                              ties="refuse")  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("{coverage: 0, rounding: up, ties: expected}", "coverage must lie in (0, 1]"),
        ("{coverage: 0.8, rounding: nearest, ties: expected}", "rounding must be one of up, down"),
        ("{coverage: 0.8, rounding: up, ties: random}", "ties must be one of expected"),
    ],
)
def test_compile_refuses_an_option_the_method_refuses(tmp_path, capsys, options, message):
    text = SPEC.read_text().replace("{coverage: 0.8, rounding: up, ties: expected}", options, 1)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "selective.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert "selective.yaml:" in err and message in err


# -- diagnose: the truth under a calibration scenario ------------------------------------------


def test_diagnose_gives_the_selective_accuracys_truth(tmp_path):
    root = _project(tmp_path)
    out = root / "DIAGNOSE.json"
    args = ["--project", str(root), "selective", "diagnose", "--quiet", "--simulations", "200"]
    assert main([*args, "--seed", "3", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    got = {a["id"]: a for a in cond["analyses"]}
    # confidences uniform on [0.5, 1]; the top 80% lie above 0.6: the new model's chance of a
    # right answer is its confidence (mean 0.8), the base model's 0.1 less (0.7)
    assert got["selective-new"]["truth"] == pytest.approx(0.8, abs=1e-9)
    assert got["selective-base"]["truth"] == pytest.approx(0.7, abs=1e-9)
    for a in got.values():
        assert a["defined"] == 200
        assert abs(a["meanEstimate"] - a["truth"]) < 4 * a["biasMcSe"] + 1e-9


def test_simulate_draws_a_log_from_the_calibration_curves_alone(tmp_path):
    # the scenario registers no rates: each model's calibration entry draws its rows' outcomes
    # (simulate refused it, "gives no rate for cell base", though diagnose ran it)
    root = _project(tmp_path)
    log = root / "sim.jsonl"
    args = ["--scenario", "new-calibrated", "--seed", "5", "--out", str(log)]
    assert main(["--project", str(root), "selective", "simulate", *args]) == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 200
    for model, over in (("new", 0.0), ("base", 0.1)):
        mine = [r for r in records if r["model"] == model]
        assert len(mine) == 100 and all(0.5 <= r["confidence"] <= 1 for r in mine)
        # the outcome follows the curve: right with chance confidence − over (a z of 4)
        chance = [r["confidence"] - over for r in mine]
        expected = sum(chance)
        sd = math.sqrt(sum(p * (1 - p) for p in chance))
        assert abs(sum(r["correct"] for r in mine) - expected) < 4 * sd
    doc, _ = _score(root, log)
    assert doc["rows"] == {"registered": 200, "observed": 200}
