"""A paired design whose pair holds several rows per side, averaged first (``pair_rows: mean``):
tests/fixtures/pairrows/judgemean.yaml, written from the docs as a newcomer would (two prompt
templates, three judges grade every item under both, each item's grade the mean of its judges'
grades, a paired t test of cot - plain over items).

The data are placed so that every item's mean is a third (10/3 has no decimal form) while the
mean difference over items is exactly 1/2, the registered threshold and margin: `ge`/`le` hold
and `gt`/`lt` fail (the floats of the items' means give 0.4999999999999996), and the paired t
against the margin 1/2 is exactly 0. The oracle is
independent: each item's means formed here with Fractions, then scipy's ttest_rel and
wilcoxon and statsmodels' ttost_paired on them. Rows of a judge left out (a side of two rows,
a side of none) and the compile refusals are checked too."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = (FIXTURES / "pairrows" / "judgemean.yaml").read_text()
ITEMS = [f"q{i:02d}" for i in range(1, 19)]
JUDGES = ["j1", "j2", "j3"]
# each item's cot grades less its plain grades, summed over the judges: 27 in all, so the mean
# over the 18 items of a third of each is exactly 1/2 (the items' own differences are thirds)
SUMS = [4, -1, 2, 5, 1, -2, 3, 2, 1, 4, 0, 2, 1, 3, -1, 2, 1, 0]


def _rows(drop: set[tuple[str, str, str]] = frozenset(), sums: list[int] = SUMS) -> list[dict]:
    """Every (template, item, judge) grade but those in ``drop``; judge j2 grades in halves;
    ``sums``: each item's cot grades less its plain grades, summed over the judges."""
    out = []
    for i, (item, total) in enumerate(zip(ITEMS, sums, strict=True)):
        for j, judge in enumerate(JUDGES):
            plain = (i * 7 + j * 3) % 6 + 3 + (0.5 if judge == "j2" else 0.0)
            cot = plain + total // 3 + (1 if j < total % 3 else 0)
            for template, score in (("cot", cot), ("plain", plain)):
                if (template, item, judge) not in drop:
                    out.append({"item": item, "template": template, "judge": judge, "score": score})
    return out


def _oracle_means(rows: list[dict]) -> tuple[list[Fraction], list[Fraction]]:
    """Each item's exact mean grade under cot and under plain (items graded under both)."""
    by: dict[tuple[str, str], list[Fraction]] = {}
    for r in rows:
        by.setdefault((r["item"], r["template"]), []).append(Fraction(repr(r["score"])))
    items = [i for i in ITEMS if (i, "cot") in by and (i, "plain") in by]
    a = [sum(by[(i, "cot")], Fraction(0)) / len(by[(i, "cot")]) for i in items]
    b = [sum(by[(i, "plain")], Fraction(0)) / len(by[(i, "plain")]) for i in items]
    return a, b


def _project(root: Path, text: str = SPEC) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "judgemean.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, rows: list[dict], tag: str = "s") -> dict:
    obs = root / f"{tag}.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = root / f"{tag}.SCORE.json"
    args = ["--project", str(root), "judgemean", "score", "--observations", str(obs)]
    assert main([*args, "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text())


def _verdicts(doc: dict) -> dict[str, str]:
    return doc["verdicts"]


def test_data_place_the_mean_difference_on_the_threshold_with_third_item_means():
    a, b = _oracle_means(_rows())
    d = [x - y for x, y in zip(a, b, strict=True)]
    assert sum(d, Fraction(0)) / len(d) == Fraction(1, 2)
    assert any(x.denominator % 3 == 0 for x in a)  # items' means no decimal writes
    assert any(x.denominator == 3 for x in d)


def test_mean_difference_exactly_on_the_threshold(tmp_path):
    root = _project(tmp_path)
    doc = _score(root, _rows())
    v = _verdicts(doc)
    assert v["gain-ge"] == "supported" and v["gain-le"] == "supported"
    assert v["gain-gt"] == "not-supported" and v["gain-lt"] == "not-supported"
    # the analysis' estimate is on 1/2 and its t against the margin 1/2 is exactly 0
    assert v["t-ge"] == "supported" and v["t-gt"] == "not-supported"
    (c,) = doc["contrasts"]
    assert c["pairs"] == {
        "by": "item",
        "n": 18,
        "unpairedA": 0,
        "unpairedB": 0,
        "rows": "mean",
        "rowsA": 54,
        "rowsB": 54,
    }
    assert c["exact"] == "1/2"
    from prereg import outputs

    assert not list(outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc))
    assert c["statistic"] == 0.0 and c["p"] == 0.5
    prereg = (root / "generated" / "judgemean" / "PREREG.md").read_text()
    assert "(paired by `item`; each side's rows of a pair averaged first)" in prereg
    assert "pair_by: item; pair_rows: mean (each side of a pair is the mean of its" in prereg
    md = (root / "s.SCORE.md").read_text()
    assert "18 pairs by item, each side the mean of its rows (54 rows of a, 54 of b" in md
    assert "- `ttest`: 18 pairs, each side the mean of its rows (54 rows of a, 54 of b" in md


def test_figures_against_scipy_on_the_items_means(tmp_path):
    rows = _rows()
    a, b = _oracle_means(rows)
    fa, fb = np.array([float(x) for x in a]), np.array([float(x) for x in b])
    d = np.array([float(x - y) for x, y in zip(a, b, strict=True)])
    doc = _score(_project(tmp_path), rows)
    an = {x["id"]: x for x in doc["analyses"]}
    (c,) = doc["contrasts"]

    ref = stats.ttest_rel(fa - 0.5, fb, alternative="greater")
    t = an["ttest"]
    assert t["counts"]["n"] == 18 and t["counts"]["pairs"] == 18
    assert t["counts"]["rowsA"] == 54 and t["df"] == 17
    assert t["estimate"] == pytest.approx(0.5, abs=1e-15)
    assert t["statistic"] == pytest.approx(ref.statistic, abs=1e-12)
    assert t["p"] == pytest.approx(ref.pvalue, abs=1e-12)
    ci = stats.ttest_rel(fa, fb).confidence_interval(0.95)
    assert t["lower"] == pytest.approx(ci.low, rel=1e-12)
    assert t["upper"] == pytest.approx(ci.high, rel=1e-12)
    assert t["se"] == pytest.approx(float(np.std(d, ddof=1)) / np.sqrt(18), rel=1e-12)
    # the contrast: the same t interval and test
    assert c["lower"] == pytest.approx(ci.low, rel=1e-12)
    assert c["upper"] == pytest.approx(ci.high, rel=1e-12)
    assert c["se"] == pytest.approx(t["se"], rel=1e-12)
    assert c["a"]["estimate"] == pytest.approx(float(sum(a) / 18), rel=1e-15)

    w = an["signed-rank"]
    ref = stats.wilcoxon(d, zero_method="wilcox", correction=False, method="approx")
    assert w["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    nonzero = d[d != 0]
    ranks = stats.rankdata(np.abs(nonzero))
    assert w["statistic"] == float(ranks[nonzero > 0].sum())

    from statsmodels.stats.weightstats import ttost_paired

    p, lo, hi = ttost_paired(fa, fb, -0.5, 0.5)
    assert an["tost"]["p"] == pytest.approx(p, abs=1e-12)
    assert an["tost"]["p"] == 0.5  # the mean difference is the upper margin: t = 0 exactly

    s = an["signs"]
    above, below = int((d > 0).sum()), int((d < 0).sum())
    assert s["counts"] == {
        "pairs": 18,
        "unpairedA": 0,
        "unpairedB": 0,
        "rowsA": 54,
        "rowsB": 54,
        "above": above,
        "below": below,
        "tied": 18 - above - below,
        "n": 18,
    }
    ref = stats.binomtest(above, above + below, 0.5, alternative="greater")
    assert s["p"] == pytest.approx(ref.pvalue, rel=1e-12)
    e = an["equivalence"]
    ci = stats.ttest_rel(fa, fb).confidence_interval(0.90)
    assert e["lower"] == pytest.approx(ci.low, rel=1e-12)
    assert e["upper"] == pytest.approx(ci.high, rel=1e-12)
    assert e["estimate"] == pytest.approx(0.5, abs=1e-15)


def test_missing_judge_rows(tmp_path):
    """q02 lost judge j3's cot grade (its cot side is the mean of two: halves, the scale 6);
    q05 lost every plain grade (no pair: its three cot rows are unpaired)."""
    drop = {("cot", "q02", "j3")} | {("plain", "q05", j) for j in JUDGES}
    rows = _rows(drop)
    a, b = _oracle_means(rows)
    exact = (sum(a, Fraction(0)) - sum(b, Fraction(0))) / len(a)
    doc = _score(_project(tmp_path), rows)
    (c,) = doc["contrasts"]
    assert c["pairs"]["n"] == 17
    assert (c["pairs"]["unpairedA"], c["pairs"]["unpairedB"]) == (3, 0)
    assert (c["pairs"]["rowsA"], c["pairs"]["rowsB"]) == (50, 51)
    assert c["estimate"] == float(exact)
    fa, fb = np.array([float(x) for x in a]), np.array([float(x) for x in b])
    ref = stats.ttest_rel(fa - 0.5, fb, alternative="greater")
    assert c["statistic"] == pytest.approx(ref.statistic, abs=1e-12)
    an = {x["id"]: x for x in doc["analyses"]}
    assert an["ttest"]["extra"]["pairScale"] == 6
    assert an["ttest"]["statistic"] == pytest.approx(ref.statistic, abs=1e-12)
    # one more item below the threshold: the gain is no longer 1/2
    v = _verdicts(doc)
    assert (v["gain-ge"], v["gain-lt"]) == (
        ("supported", "not-supported")
        if exact >= Fraction(1, 2)
        else ("not-supported", "supported")
    )


def test_one_row_per_side_refuses_several_and_names_pair_rows(tmp_path, capsys):
    # pair_rows one (the default): a side of three rows is refused, the refusal naming mean
    line = "        pair_rows: mean\n"
    text = SPEC.replace(line, line.replace("mean", "one"), 1).replace(line, "")
    root = _project(tmp_path, text)
    obs = root / "o.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    args = ["--project", str(root), "judgemean", "score", "--observations", str(obs)]
    assert main([*args, "--out", str(root / "o.SCORE.json"), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "item 'q01' has more than one counted row in arm a" in err
    assert "register pair_rows: mean" in err
    assert not (root / "o.SCORE.json").exists()


def _refused(tmp_path, capsys, old: str, new: str, count: int = 1) -> str:
    assert SPEC.count(old) >= count, old
    text = SPEC.replace(old, new, count)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "judgemean.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) != 0
    return capsys.readouterr().err


def test_compile_refuses_an_unknown_value(tmp_path, capsys):
    err = _refused(tmp_path, capsys, "        pair_rows: mean", "        pair_rows: median")
    assert '/contrasts/0/pair_rows: "median" is not one of: one, mean' in err


def test_compile_refuses_pair_rows_without_pair_by(tmp_path, capsys):
    err = _refused(tmp_path, capsys, "pair_by: item\n        pair_rows: mean", "pair_rows: mean")
    assert "there are no pairs without pair_by" in err


def test_compile_refuses_a_method_of_0_1_pairs(tmp_path, capsys):
    old = "method: wilcoxon-signed-rank"
    err = _refused(tmp_path, capsys, old, "method: mcnemar-exact")
    assert "pair_rows mean feeds the methods of a mean of paired differences" in err


def test_compile_refuses_a_proportion(tmp_path, capsys):
    old = "compute: {kind: mean, field: score}}"
    new = "compute: {kind: proportion, where: [{field: score, op: ge, value: 5}]}}"
    err = _refused(tmp_path, capsys, old, new)
    assert "a per-item share is a number, not a 0/1 outcome" in err


def test_diagnose_simulates_several_rows_per_item_and_arm(tmp_path):
    root = _project(tmp_path)
    out = root / "d.json"
    args = ["--project", str(root), "judgemean", "diagnose", "--simulations", "20"]
    assert main([*args, "--seed", "3", "--out", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    (cond,) = doc["conditions"]
    (c,) = cond["contrasts"]
    assert c["truth"] == pytest.approx(0.5) and c["defined"] == 20
    t = {a["id"]: a for a in cond["analyses"]}["ttest"]
    assert t["truth"] == pytest.approx(0.5) and t["defined"] == 20


def test_the_methods_compile_allows_are_those_score_scales():
    from prereg.decide.analyses import AVERAGED
    from prereg.decide.shapes import PAIR_ROWS_MEAN_METHODS
    from prereg.stats.catalogue import entries

    assert tuple(AVERAGED) == PAIR_ROWS_MEAN_METHODS
    assert {entries()[m].shape for m in AVERAGED} == {"paired-samples"}


def test_a_grade_of_seventeen_digits_keeps_the_estimate_exact(tmp_path):
    """A computed grade written with float noise (0.30000000000000004): its item's mean times 3
    has no decimal a double writes, so the methods read its float; the estimate stays the
    exact mean of the pairs' differences."""
    rows = _rows()
    rows[0]["score"] = 0.1 + 0.2  # q01, cot, j1
    a, b = _oracle_means(rows)
    exact = (sum(a, Fraction(0)) - sum(b, Fraction(0))) / len(a)
    assert exact.denominator % 3 == 0 and (exact * 3).denominator > 10**17
    doc = _score(_project(tmp_path), rows)
    an = {x["id"]: x for x in doc["analyses"]}
    assert an["ttest"]["exact"]["estimate"] == f"{exact.numerator}/{exact.denominator}"
    assert an["ttest"]["estimate"] == pytest.approx(float(exact), rel=1e-15)
    fa, fb = np.array([float(x) for x in a]), np.array([float(x) for x in b])
    ref = stats.ttest_rel(fa - 0.5, fb, alternative="greater")
    assert an["ttest"]["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert doc["verdicts"]["gain-lt"] == "supported"


def test_a_unit_rule_leaves_items_out_before_the_pairs_are_formed(tmp_path):
    """The unit by item included only with all six grades: q02 (five) and q05 (three) are
    left out whole, and the pairs are the 16 complete items."""
    drop = {("cot", "q02", "j3")} | {("plain", "q05", j) for j in JUDGES}
    rows = _rows(drop)
    old = "{figure: grades, op: ge, value: 2, reason: graded at least twice}"
    new = "{figure: grades, op: ge, value: 6, reason: all three judges under both templates}"
    root = _project(tmp_path, SPEC.replace(old, new))
    doc = _score(root, rows)
    (c,) = doc["contrasts"]
    assert c["pairs"]["n"] == 16
    assert (c["pairs"]["unpairedA"], c["pairs"]["unpairedB"]) == (0, 0)
    assert (c["pairs"]["rowsA"], c["pairs"]["rowsB"]) == (48, 48)
    kept = [r for r in rows if r["item"] not in ("q02", "q05")]
    a, b = _oracle_means(kept)
    assert c["estimate"] == float((sum(a, Fraction(0)) - sum(b, Fraction(0))) / 16)


def test_a_bootstrap_of_averaged_pairs_is_that_of_one_row_per_item_holding_its_mean(tmp_path):
    """The contrast's bootstrap resamples pairs of means: the same study scored from one row
    per item and template holding its mean grade (pair_rows one) gives the same bounds."""
    t_lines = "        interval: t\n        level: 0.95\n        test: paired-t\n"
    boot = "        interval: bootstrap\n        bootstrap: {resamples: 500, seed: 7}\n"
    boot += "        level: 0.9\n        test: paired-t\n"
    text = SPEC.replace(t_lines, boot)
    rows = _rows()
    doc = _score(_project(tmp_path / "mean", text), rows)
    a, b = _oracle_means(rows)
    means = [
        {"item": i, "template": t, "judge": "j1", "score": float(v)}
        for i, x, y in zip(ITEMS, a, b, strict=True)
        for t, v in (("cot", x), ("plain", y))
    ]
    line = "        pair_rows: mean\n"
    one = _project(tmp_path / "one", text.replace(line, line.replace("mean", "one")))
    ref = _score(one, means)
    (c,), (r,) = doc["contrasts"], ref["contrasts"]
    assert c["lower"] < 0.5 < c["upper"]
    assert (c["lower"], c["upper"]) == (r["lower"], r["upper"])
    assert r["pairs"]["n"] == c["pairs"]["n"] == 18


def test_a_mean_difference_of_one_third_on_a_fraction_threshold(tmp_path):
    """The items' differences sum to 18 thirds over 18 items: the mean difference is exactly
    1/3, which no decimal writes; registered as the fraction "1/3", ge and le hold, gt and lt
    fail (the floats of the items' means give 0.333333333333333)."""
    import re

    sums = [*SUMS[:-3], -1, -2, -3]
    rows = _rows(sums=sums)
    a, b = _oracle_means(rows)
    exact = (sum(a, Fraction(0)) - sum(b, Fraction(0))) / len(a)
    assert exact == Fraction(1, 3)
    floats = np.array([float(x) for x in a]) - np.array([float(x) for x in b])
    assert float(np.mean(floats)) != 1 / 3  # what floats would have decided on
    pattern = r"(target: cot-vs-plain, quantity: estimate, op: \w+, value: )0\.5"
    text, n = re.subn(pattern, r'\1"1/3"', SPEC)
    assert n == 4
    doc = _score(_project(tmp_path, text), rows)
    v = _verdicts(doc)
    assert (v["gain-ge"], v["gain-le"]) == ("supported", "supported")
    assert (v["gain-gt"], v["gain-lt"]) == ("not-supported", "not-supported")
    assert doc["contrasts"][0]["exact"] == "1/3"
