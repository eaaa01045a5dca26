"""Two preregistrations written from the docs alone by a newcomer, run end to end from data
files made as the described tools write them, each decision checked against an oracle.

1. tests/fixtures/newcomer/safetyjudge.yaml: a judge labels 600 responses safe / borderline /
   unsafe; the labelling tool's CSV has a free-text note (commas, quotes, a line break) and a
   blank judge cell where the judge refused (18 of 600). Macro F1 with refusals counted wrong
   (missing_prediction: wrong) is exactly 7/10 on the threshold `ge 0.70` (sklearn, with the
   refusal as a label outside the list); the quadratic-weighted kappa of the labelled rows
   (rating and b_rating: both ratings on one row) and its 95% interval are statsmodels';
   unsafe recall's Wilson interval is statsmodels' proportion_confint. One more refusal puts
   F1 below 0.70 and the decision flips.
2. tests/fixtures/newcomer/seedrecipes.yaml: two fine-tuning recipes, five training seeds each,
   one JSONL per checkpoint (runs/new-seed3.jsonl: the file names the checkpoint, per_file);
   per benchmark, Welch's t of the five per-seed means of each recipe
   (cluster-summary-welch-t, the seed the cluster), Holm over the three benchmarks, and at
   least two benchmarks with adjusted P below 0.05 and a difference of at least 0.25. The
   math difference is placed exactly on 0.25 (its float reads 0.2499999999999991; the exact
   mean of the decimals is 1/4): scipy's ttest_ind(equal_var=False) of the per-seed means and
   statsmodels' Holm give the figures; half a point less on one problem and the decision
   flips."""

from __future__ import annotations

import csv
import json
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

LABELS = ["safe", "borderline", "unsafe"]
# gold (rows) by judge (columns) among the labelled responses; refusals per gold class
TABLE = [[246, 43, 3], [39, 73, 32], [3, 28, 115]]
REFUSED = [8, 6, 4]
NOTES = [
    "",
    "ok",
    'asks about "bypassing" a filter, politely',
    'quotes a "how-to", then refuses',
    "borderline: medical, dosage, context unclear",
    "annotators split 2-1;\nsee the thread",
]


def _project(root: Path, name: str) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / f"{name}.yaml").read_text()
    (root / "spec" / "studies" / f"{name}.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _labels_csv(path: Path, table, refused) -> list[tuple[str, str]]:
    """The labelling tool's export, as Python's csv module writes it (a note with a comma, a
    quote or a line break quoted, quotes doubled); a refusal is a blank judge cell."""
    pairs: list[tuple[str, str]] = []
    for i, g in enumerate(LABELS):
        for j, p in enumerate(LABELS):
            pairs += [(g, p)] * table[i][j]
        pairs += [(g, "")] * refused[i]
    random.Random(7).shuffle(pairs)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "gold", "judge", "note"])
        for n, (g, p) in enumerate(pairs, 1):
            w.writerow([f"resp-{n:04d}", g, p, NOTES[n % len(NOTES)]])
    return pairs


def _score(root: Path, name: str, out: Path, *files: str) -> dict:
    from prereg.outputs import problems, schema_for

    args = [a for f in files for a in ("--observations", f)]
    assert main(["--project", str(root), name, "score", *args, "--out", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert problems(doc, schema_for("factorial", "score")) == []
    return doc


def test_safety_judge_macro_f1_on_its_threshold(tmp_path):
    from sklearn.metrics import cohen_kappa_score, f1_score
    from statsmodels.stats.inter_rater import cohens_kappa
    from statsmodels.stats.proportion import proportion_confint

    root = _project(tmp_path, "safetyjudge")
    pairs = _labels_csv(tmp_path / "labels.csv", TABLE, REFUSED)
    score = _score(root, "safetyjudge", tmp_path / "SCORE.json", str(tmp_path / "labels.csv"))
    gold = [g for g, _ in pairs]
    judge = [p or "refused" for _, p in pairs]
    f1 = f1_score(gold, judge, labels=LABELS, average="macro")
    by = {a["id"]: a for a in score["analyses"]}
    assert Fraction(by["macro-f1"]["exact"]["estimate"]) == Fraction(7, 10)
    assert by["macro-f1"]["estimate"] == pytest.approx(f1, abs=1e-15)
    assert by["macro-f1"]["counts"]["missingPredictions"] == sum(REFUSED) == 18
    # agreement over the labelled rows only: statsmodels' table is gold by judge
    kept = [(g, p) for g, p in pairs if p]
    code = {c: i for i, c in enumerate(LABELS)}
    table = np.zeros((3, 3), dtype=int)
    for g, p in kept:
        table[code[g], code[p]] += 1
    sm = cohens_kappa(table, wt="quadratic")
    qwk = by["qwk"]
    assert qwk["counts"]["n"] == 582
    assert qwk["estimate"] == pytest.approx(
        cohen_kappa_score([g for g, _ in kept], [p for _, p in kept], labels=LABELS, weights="quadratic"),
        abs=1e-12,
    )  # fmt: skip
    assert (qwk["lower"], qwk["upper"]) == pytest.approx((sm.kappa_low, sm.kappa_upp), abs=1e-12)
    assert qwk["lower"] >= 0.6
    est = {e["id"]: e for e in score["estimates"]}
    assert (est["recall-unsafe"]["k"], est["recall-unsafe"]["n"]) == (115, 150)
    lo, hi = proportion_confint(115, 150, alpha=0.05, method="wilson")
    assert (est["recall-unsafe"]["lower"], est["recall-unsafe"]["upper"]) == pytest.approx((lo, hi))
    assert (est["refused"]["k"], est["refused"]["n"]) == (18, 600)
    assert score["verdicts"] == {
        "primary": "supported",
        "secondary": "supported",
        "reported": "reported-only",
    }
    assert score["decision"]["outcome"] == "adopt"
    # one more refusal (a borderline response the judge got right) and F1 falls below 0.70
    fewer = [row[:] for row in TABLE]
    fewer[1][1] -= 1
    pairs = _labels_csv(tmp_path / "labels2.csv", fewer, [8, 7, 4])
    score = _score(root, "safetyjudge", tmp_path / "SCORE2.json", str(tmp_path / "labels2.csv"))
    by = {a["id"]: a for a in score["analyses"]}
    f1 = f1_score([g for g, _ in pairs], [p or "refused" for _, p in pairs], labels=LABELS, average="macro")  # fmt: skip
    assert f1 < 0.7
    assert by["macro-f1"]["estimate"] == pytest.approx(f1, abs=1e-15)
    assert score["verdicts"]["primary"] == "not-supported"
    assert score["decision"]["outcome"] == "keep-humans"


def test_two_raters_on_one_row_needs_b_rating(tmp_path, capsys):
    """A newcomer's first try names the judge field as the rater: compile says why it cannot be
    and what to write instead, at the analysis' line, and writes nothing."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "safetyjudge.yaml").read_text()
    old = "        rating: judge_code\n        b_rating: gold_code\n"
    assert text.count(old) == 1
    text = text.replace(old, "        rater: judge\n        rating: judge_code\n")
    (tmp_path / "spec" / "studies" / "safetyjudge.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert (
        "at /hypotheses/1/analyses/0/rater: analysis 'qwk': two-raters compares exactly two" in err
    )
    assert "allows 3 values (safe, borderline, unsafe)" in err
    assert "rating and b_rating" in err
    assert not (tmp_path / "generated").exists()


# -- preregistration 2: training seeds ------------------------------------------------------------

BENCH = {"math": 70, "code": 70, "reasoning": 60}
EFFECT = {"math": 0.25, "code": 0.5, "reasoning": 0.1}


def _checkpoints(folder: Path, math_total: Fraction) -> dict:
    """One JSONL per checkpoint as the evaluation harness writes it; every problem shared by
    the ten checkpoints, scores 0 to 10 in steps of 0.5. The new recipe's per-problem scores
    are nudged by half points until the math scores of the new seeds sum to ``math_total``
    more than the base seeds' (so the difference of the means of seed means is
    math_total / 350 exactly). Returns the scores by (run, problem)."""
    rng = np.random.default_rng(3)
    problems = [(f"{b}-{i:03d}", b) for b in BENCH for i in range(1, BENCH[b] + 1)]
    hard = {p: rng.uniform(2, 8) for p, _ in problems}
    runs: dict = {}
    for recipe in ("base", "new"):
        for k in range(1, 6):
            shift = rng.normal(0, 0.05)
            runs[f"{recipe}-seed{k}"] = {
                p: float(np.clip(np.round(2 * (hard[p] + shift + (EFFECT[b] if recipe == "new" else 0) + rng.normal(0, 0.5))) / 2, 0, 10))
                for p, b in problems
            }  # fmt: skip
    maths = [p for p, b in problems if b == "math"]

    def gap() -> Fraction:
        return sum(
            Fraction(runs[f"new-seed{k}"][p]) - Fraction(runs[f"base-seed{k}"][p])
            for k in range(1, 6)
            for p in maths
        )

    i = 0
    while (g := gap()) != math_total:
        run, p = runs[f"new-seed{i % 5 + 1}"], maths[(i // 5) % len(maths)]
        step = 0.5 if g < math_total else -0.5
        if 0 <= run[p] + step <= 10:
            run[p] += step
        i += 1
    folder.mkdir(parents=True)
    for name, scores in runs.items():
        with (folder / f"{name}.jsonl").open("w") as f:
            for p, b in problems:
                f.write(json.dumps({"problem": p, "benchmark": b, "score": scores[p]}) + "\n")
    return {"problems": problems, "runs": runs}


def _oracle(data: dict) -> dict:
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    out = {}
    for b in BENCH:
        mean = {
            run: Fraction(sum(Fraction(s[p]) for p, pb in data["problems"] if pb == b), BENCH[b])
            for run, s in data["runs"].items()
        }
        new = [mean[f"new-seed{k}"] for k in range(1, 6)]
        base = [mean[f"base-seed{k}"] for k in range(1, 6)]
        t = stats.ttest_ind(
            [float(x) for x in new],
            [float(x) for x in base],
            equal_var=False,
            alternative="greater",
        )
        out[b] = {"diff": sum(new) / 5 - sum(base) / 5, "t": t.statistic, "df": t.df, "p": t.pvalue}
    adjusted = multipletests([out[b]["p"] for b in BENCH], method="holm")[1]
    for b, q in zip(BENCH, adjusted, strict=True):
        out[b]["adjusted"] = q
    return out


def _score_runs(root: Path, folder: Path, out: Path) -> dict:
    files = [f"{f.stem}={f}" for f in sorted(folder.glob("*.jsonl"))]
    assert len(files) == 10
    return _score(root, "seedrecipes", out, *files)


def test_seed_recipes_math_difference_on_its_threshold(tmp_path):
    root = _project(tmp_path, "seedrecipes")
    data = _checkpoints(tmp_path / "runs", Fraction(175, 2))
    score = _score_runs(root, tmp_path / "runs", tmp_path / "SCORE.json")
    oracle = _oracle(data)
    assert oracle["math"]["diff"] == Fraction(1, 4)
    by = {a["id"]: a for a in score["analyses"]}
    for b in BENCH:
        got, want = by[f"welch-{b}"], oracle[b]
        assert got["estimate"] == pytest.approx(float(want["diff"]), abs=1e-12)
        assert got["statistic"] == pytest.approx(want["t"], rel=1e-9)
        assert got["df"] == pytest.approx(want["df"], rel=1e-9)
        assert got["p"] == pytest.approx(want["p"], rel=1e-9)
        assert got["adjustedP"] == pytest.approx(want["adjusted"], rel=1e-9)
        assert got["counts"]["clusters_a"] == got["counts"]["clusters_b"] == 5
    assert by["welch-math"]["estimate"] != 0.25  # the float alone would fail `ge 0.25`
    assert Fraction(by["welch-math"]["exact"]["estimate"]) == Fraction(1, 4)
    assert all(oracle[b]["adjusted"] < 0.05 for b in BENCH)
    assert oracle["reasoning"]["diff"] < Fraction(1, 4)
    (q,) = score["quantifiers"]["new-better"]
    assert (q["quantifier"], q["required"], q["met"], q["held"]) == ("at_least", 2, 2, True)
    assert q["metBy"] == ["math", "code"]
    assert score["verdicts"] == {"new-better": "supported"}
    assert score["decision"]["outcome"] == "adopt-new"
    # half a point less on one math problem: the difference is 87/350, below 0.25
    data = _checkpoints(tmp_path / "runs2", Fraction(87))
    score = _score_runs(root, tmp_path / "runs2", tmp_path / "SCORE2.json")
    assert _oracle(data)["math"]["diff"] == Fraction(87, 350)
    assert score["verdicts"] == {"new-better": "not-supported"}
    assert score["decision"]["outcome"] == "keep-base"


def test_seed_recipes_simulate_and_diagnose(tmp_path):
    """The key (problem, run) leaves the benchmark out: simulated problems are named with their
    benchmark (math-problem-01), so a run's math and code problems do not collide (they did:
    diagnose refused every simulated study as duplicate records), and diagnose reports the
    Welch analyses with the truth of a clipped normal's mean difference. The scenario's seed
    effect is a clusters level on the run factor (compile refused it: 'the cell gives it'):
    the Welch interval of the per-seed means covers the truth at about its level."""
    from scipy import integrate, stats

    root = _project(tmp_path, "seedrecipes")
    sim = tmp_path / "sim.jsonl"
    args = ["--project", str(root), "seedrecipes", "simulate", "--scenario", "gain"]
    assert main([*args, "--seed", "1", "--out", str(sim), "--quiet"]) == 0
    recs = [json.loads(line) for line in sim.read_text().splitlines()]
    assert len(recs) == 2000
    assert len({(r["problem"], r["run"]) for r in recs}) == 2000
    assert {r["problem"].split("-")[0] for r in recs if r["benchmark"] == "code"} == {"code"}
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(root), "seedrecipes", "diagnose", "--quiet", "--simulations", "40"]
    assert main([*args, "--seed", "2", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]

    def clipped_mean(mu: float) -> float:
        body = integrate.quad(lambda x: x * stats.norm.pdf(x, mu, 2), 0, 10)[0]
        return body + 10 * stats.norm.sf(10, mu, 2)

    truth = clipped_mean(5.5) - clipped_mean(5.0)
    by = {a["id"]: a for a in cond["analyses"]}
    assert set(by) == {"welch-math", "welch-code", "welch-reasoning"}
    for a in by.values():
        assert a["truth"] == pytest.approx(truth, abs=1e-5)
        assert a["coverage"]["count"] >= 34


def test_a_seed_effect_is_shared_by_the_runs_cells(tmp_path):
    """A clusters level on the run factor gives every row of a run one latent: with half the
    latent variance between runs, the ten runs' means spread far beyond what the problems'
    noise gives, and each run's three benchmark means move together."""
    root = _project(tmp_path, "seedrecipes")
    path = root / "spec" / "studies" / "seedrecipes.yaml"
    text = path.read_text()
    assert text.count("correlation: 0.05") == 1
    path.write_text(text.replace("correlation: 0.05", "correlation: 0.5"))
    assert main(["--project", str(root), "compile"]) == 0
    sim = tmp_path / "sim.jsonl"
    args = ["--project", str(root), "seedrecipes", "simulate", "--scenario", "gain"]
    assert main([*args, "--seed", "4", "--out", str(sim), "--quiet"]) == 0
    recs = [json.loads(line) for line in sim.read_text().splitlines()]
    means = {}
    for b in BENCH:
        for run in {r["run"] for r in recs}:
            xs = [r["score"] for r in recs if r["run"] == run and r["benchmark"] == b]
            means[run, b] = np.mean(xs)
    runs = sorted({r for r, _ in means})
    per_run = np.array([[means[r, b] for b in BENCH] for r in runs])
    for recipe in ("base", "new"):  # each run's deviation from its recipe's mean
        mine = np.array([r.startswith(recipe) for r in runs])
        per_run[mine] -= per_run[mine].mean(axis=0)
    # the benchmarks of one run move together: every pair of benchmark columns correlates
    corr = np.corrcoef(per_run.T)
    assert corr[np.triu_indices(3, 1)].min() > 0.8
    # within a run the problems' noise alone gives each benchmark mean a variance near
    # 2 * 0.5 * 4 / 70; between runs it is about 100 times that
    assert per_run.var(axis=0, ddof=1).min() > 10 * (0.5 * 4 / 60)


def test_a_null_truth_names_the_way_out(tmp_path, capsys):
    """A gold cell left blank: F1 reads the truth on every counted row, and the error says how
    to leave such rows out (the metric's among), not that a present field is 'missing'."""
    root = _project(tmp_path, "safetyjudge")
    text = (root / "spec" / "studies" / "safetyjudge.yaml").read_text()
    old = "      - {name: gold, type: string, allowed: [safe, borderline, unsafe]}"
    assert text.count(old) == 1
    text = text.replace(old, old[:-1] + ", nullable: true}")
    (root / "spec" / "studies" / "safetyjudge.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    _labels_csv(tmp_path / "labels.csv", TABLE, REFUSED)
    lines = (tmp_path / "labels.csv").read_text().split("\n")
    assert lines[1].startswith("resp-0001,")
    cells = lines[1].split(",")
    lines[1] = ",".join([cells[0], "", *cells[2:]])
    (tmp_path / "labels.csv").write_text("\n".join(lines))
    args = ["--observations", str(tmp_path / "labels.csv"), "--out", str(tmp_path / "S.json")]
    assert main(["--project", str(root), "safetyjudge", "score", *args]) == 2
    err = capsys.readouterr().err
    assert "analysis macro-f1 (f1-score): field 'gold' is null or absent on a counted row" in err
    assert "({field: gold, op: not_null})" in err
    assert not (tmp_path / "S.json").exists()


def test_safety_judge_simulate_and_diagnose(tmp_path):
    """The wide kappa's unit is the row's own key: compile lets a ratings scenario drive it (it
    refused: 'its unit item_id is no field the scenario lays out'), simulate writes gold and
    the judge's label on one row, and diagnose scores each simulated study as score does."""
    root = _project(tmp_path, "safetyjudge")
    sim = tmp_path / "sim.jsonl"
    args = ["--project", str(root), "safetyjudge", "simulate", "--scenario", "good-judge"]
    assert main([*args, "--seed", "1", "--out", str(sim), "--quiet"]) == 0
    recs = [json.loads(line) for line in sim.read_text().splitlines()]
    assert len(recs) == 600 and {r["judge"] for r in recs} == set(LABELS)
    hit = sum(r["judge"] == r["gold"] for r in recs) / 600
    assert 0.74 < hit < 0.86
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(root), "safetyjudge", "diagnose", "--quiet", "--simulations", "30"]
    assert main([*args, "--seed", "2", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    by = {a["id"]: a for a in cond["analyses"]}
    # what the two figures converge to: the joint table prevalence x confusion row
    prev = np.array([0.5, 0.25, 0.25])
    joint = prev[:, None] * np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    i, j = np.indices((3, 3))
    w = 1 - (i - j) ** 2 / 4
    po, pe = (w * joint).sum(), (w * np.outer(joint.sum(1), joint.sum(0))).sum()
    qwk = (po - pe) / (1 - pe)
    f1 = np.mean(2 * np.diag(joint) / (joint.sum(1) + joint.sum(0)))
    assert by["qwk"]["meanEstimate"] == pytest.approx(qwk, abs=0.02)
    assert by["macro-f1"]["meanEstimate"] == pytest.approx(f1, abs=0.02)
    # both truths are worked out from the scenario's joint law, the kappa's through the
    # derived fields that code the labels (judge_code, gold_code)
    assert by["macro-f1"]["truth"] == pytest.approx(f1, abs=5e-7)  # written to 6 places
    assert by["qwk"]["truth"] == pytest.approx(qwk, abs=5e-7)
    assert by["qwk"]["coverage"]["count"] >= 25


def test_one_checkpoint_of_ten_says_so(tmp_path, capsys):
    """A newcomer who names one checkpoint's file of ten gets a decision (the study registers no
    coverage gate), and the summary line says how few of the registered rows it read."""
    root = _project(tmp_path, "seedrecipes")
    _checkpoints(tmp_path / "runs", Fraction(175, 2))
    capsys.readouterr()
    one = f"new-seed3={tmp_path / 'runs' / 'new-seed3.jsonl'}"
    args = ["--observations", one, "--out", str(tmp_path / "S.json")]
    assert main(["--project", str(root), "seedrecipes", "score", *args]) == 0
    out = capsys.readouterr().out
    assert "no gate registered and 200 of 2,000 registered rows observed;" in out
    files = [f"{f.stem}={f}" for f in sorted((tmp_path / "runs").glob("*.jsonl"))]
    args = [a for f in files for a in ("--observations", f)]
    assert main(["--project", str(root), "seedrecipes", "score", *args, "--out", str(tmp_path / "S2.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "wrote " in out and "no gate registered; new-better supported" in out


def test_an_f1_written_before_missing_prediction(tmp_path, capsys):
    """A spec written before f1-score had missing_prediction is told what it meant then."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "safetyjudge.yaml").read_text()
    old = ", missing_prediction: wrong}"
    assert text.count(old) == 1
    (tmp_path / "spec" / "studies" / "safetyjudge.yaml").write_text(text.replace(old, "}"))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert "method f1-score needs option(s) missing_prediction" in err
    assert "missing_prediction is new to f1-score: a spec written before it was an option" in err
    assert "write missing_prediction: refuse for that" in err


WIDE_CODES = """
id: widecodes
version: "0.1"
title: A judge's codes against gold codes on one row
status: draft
engine: factorial
cells:
  - {id: all, rows: 400, levels: []}
record_contracts:
  - id: label
    format: jsonl
    role: observation
    fields:
      - {name: item_id, type: string, min_length: 1}
      - {name: gold, type: integer, allowed: [0, 1, 2]}
      - {name: judge, type: integer, nullable: true, allowed: [0, 1, 2]}
attempts:
  contract: label
  key: [item_id]
metrics:
  - id: labelled
    title: Labelled
    definition: Rows the judge labelled.
    compute: {kind: proportion, where: [{field: judge, op: not_null}]}
hypotheses:
  - id: agree
    title: Weighted kappa at least 0.6
    analyses:
      - id: qwk
        method: cohens-kappa
        metric: labelled
        of: {where: []}
        unit: item_id
        rating: judge
        b_rating: gold
        options: {categories: [0, 1, 2], weights: WEIGHTS, level: 0.95, alternative: two-sided}
    rule:
      compare: {target: qwk, quantity: estimate, op: ge, value: 0.6}
scenarios:
  - id: good-judge
    description: Gold from the prevalence; the judge right 80% of the time.
    ratings: {field: judge, item: item_id, categories: [0, 1, 2], truth: gold, prevalence: [0.5, 0.25, 0.25], accuracy: 0.8}
constants:
  - id: reporting
    value: {decimals: 4, p_value_digits: 4, cell_interval: {method: wilson, level: 0.95}}
"""


@pytest.mark.parametrize("weights", ["quadratic", "linear", "none"])
def test_weighted_kappa_truth_of_codes_on_one_row(tmp_path, weights):
    """With the codes themselves on the row (no derived field between), diagnose works out
    the weighted kappa of the judge against the truth it drew: the joint law of prevalence x
    confusion against the identity, weighted by position; the simulated mean comes near it."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = WIDE_CODES.replace("WEIGHTS", weights)
    (tmp_path / "spec" / "studies" / "widecodes.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "widecodes", "diagnose", "--quiet", "--simulations", "40"]
    assert main([*args, "--seed", "3", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    (a,) = cond["analyses"]
    prev = np.array([0.5, 0.25, 0.25])
    joint = prev[:, None] * np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    i, j = np.indices((3, 3))
    d = np.abs(i - j) / 2
    w = {"quadratic": 1 - d**2, "linear": 1 - d, "none": (d == 0) * 1.0}[weights]
    po, pe = (w * joint).sum(), (w * np.outer(joint.sum(1), joint.sum(0))).sum()
    kappa = (po - pe) / (1 - pe)
    assert a["truth"] == pytest.approx(kappa, abs=5e-7)
    assert a["meanEstimate"] == pytest.approx(kappa, abs=0.03)
    assert a["coverage"]["count"] >= 34
