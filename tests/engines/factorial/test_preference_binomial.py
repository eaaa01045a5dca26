"""A judge's preferences between two models, written from the docs (tests/fixtures/preference/
pref.yaml): one line per prompt, verdict a, b or tie; A's win rate among the decided prompts by
the exact binomial test against 1/2 (scipy.stats.binomtest as the oracle) and a threshold of
0.6 on the rate. 60 wins of 100 decided prompts sit exactly on the threshold (met by ``ge``),
59 fall short; a P exactly on its threshold (two wins of two against 0.05: 1/400) meets ``le``
and fails ``lt``."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from scipy.stats import binomtest

from prereg.cli import main
from tests.conftest import FIXTURES


def _project(tmp_path, text: str):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "pref.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0


def _score(tmp_path, verdicts: dict[str, list[str]]) -> dict:
    rows = [
        {"prompt": f"{domain}-{i:02d}", "domain": domain, "verdict": v}
        for domain, vs in verdicts.items()
        for i, v in enumerate(vs)
    ]
    log = tmp_path / "judged.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "pref", "score", *args]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("wins, verdict", [(60, "supported"), (59, "not-supported")])
def test_win_rate_on_its_threshold(tmp_path, wins, verdict):
    _project(tmp_path, (FIXTURES / "preference" / "pref.yaml").read_text())
    # 120 prompts: 20 ties, 100 decided, of which `wins` for A
    vs = ["tie"] * 20 + ["a"] * wins + ["b"] * (100 - wins)
    doc = _score(tmp_path, {"code": vs[::2], "chat": vs[1::2]})
    (a,) = doc["analyses"]
    assert a["counts"] == {"k": wins, "n": 100}
    assert a["exact"]["estimate"] == str(Fraction(wins, 100))
    ref = binomtest(wins, 100, 0.5, alternative="greater")
    assert a["p"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert Fraction(a["exact"]["p"]) == sum(
        Fraction(__import__("math").comb(100, j), 2**100) for j in range(wins, 101)
    )
    ci = ref.proportion_ci(0.95, method="exact")
    assert a["lower"] == pytest.approx(ci.low, rel=1e-9) and a["upper"] == 1.0
    assert ref.pvalue < 0.05  # the estimate's threshold decides both cases
    assert doc["verdicts"]["a-preferred"] == verdict
    # the statistic is the count k: an integer in SCORE.json, printed without the registered
    # decimals in SCORE.md (it read k = 60.0000), where the estimate keeps them
    assert type(a["statistic"]) is int and a["statistic"] == wins
    md = (tmp_path / "SCORE.md").read_text()
    row = f"| `win-test` | binomial-test | 0.{wins}00 ["
    assert row in md and f"| k = {wins} |" in md and f"k = {wins}.0" not in md


@pytest.mark.parametrize("op, verdict", [("le", "supported"), ("lt", "not-supported")])
def test_p_exactly_on_its_threshold(tmp_path, op, verdict):
    text = (FIXTURES / "preference" / "pref.yaml").read_text()
    text = text.replace("rows: 60,", "rows: 1,")
    text = text.replace("null_proportion: 0.5", "null_proportion: 0.05")
    text = text.replace(
        "- compare: {target: win-test, quantity: p, op: lt, value: 0.05}",
        f"- compare: {{target: win-test, quantity: p, op: {op}, value: 0.0025}}",
    )
    _project(tmp_path, text)
    doc = _score(tmp_path, {"code": ["a"], "chat": ["a"]})
    (a,) = doc["analyses"]
    assert a["exact"]["p"] == "1/400"
    assert doc["verdicts"]["a-preferred"] == verdict


def test_diagnose_runs_the_rule(tmp_path):
    _project(tmp_path, (FIXTURES / "preference" / "pref.yaml").read_text())
    out = tmp_path / "DIAGNOSE.json"
    args = ["--simulations", "200", "--seed", "3", "--out", str(out), "--quiet"]
    assert main(["--project", str(tmp_path), "pref", "diagnose", *args]) == 0
    doc = json.loads(out.read_text())
    (cond,) = doc["conditions"]
    (a,) = cond["analyses"]
    assert a["method"] == "binomial-test" and a["defined"] == 200
    # the judge gives A 55%, B 30%: A's share of the decided prompts is 11/17
    assert a["meanEstimate"] == pytest.approx(11 / 17, abs=4 * a["meanEstimateMcSe"] + 1e-3)
    (h,) = cond["hypotheses"]
    assert sum(v["count"] for v in h["verdicts"]) == 200
