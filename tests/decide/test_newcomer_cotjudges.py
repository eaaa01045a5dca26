"""A preregistration written from the docs alone by a newcomer, run end to end from the logs an
evaluation harness writes, its figures checked against independent oracles.

tests/fixtures/newcomer/cotjudges.yaml: two prompting strategies (cot, plain) on 24 reasoning
problems, three models run with two seeds each; the harness writes one JSONL per model and seed
(runs/m1/s1.jsonl, records {problem, strategy, judge, grade}, no model or seed: both fields
`per_file`, the files named --observations m1,s1=PATH) and three judges grade every answer 0 to
10 in steps of 0.5. Per model, each problem's grade is the mean over judges and seeds
(`pair_rows: mean`), cot − plain by a paired t over the problems, Holm over the three models;
H1 holds when at least 2 of 3 models have adjusted P < 0.05 and a mean difference of at least
0.5. A gate asks for at least "2/3" of each cell's 48 registered answers (problem × seed)
graded. m1's mean difference is placed exactly on 0.5, m3's plain cell observes exactly 32 of
48 answers; scipy's ttest_rel on the per-problem means (computed with fractions) and
statsmodels' Holm give the figures. Half a point less on one of m1's grades, or one more lost
answer of m3, and the decision flips."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

MODELS = ["m1", "m2", "m3"]
SEEDS = ["s1", "s2"]
PROBLEMS = [f"p{i:02d}" for i in range(1, 25)]
GAIN = {"m1": 0.5, "m2": 1.5, "m3": 0.25}


def _project(root: Path) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "cotjudges.yaml").read_text()
    (root / "spec" / "studies" / "cotjudges.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _runs(folder: Path, m1_gap: Fraction = Fraction(72), m3_lost: int = 16) -> dict:
    """The harness's logs, runs/<model>/<seed>.jsonl, without model or seed fields. m1 is
    complete, its cot grades nudged by half points until they sum to ``m1_gap`` more than its
    plain grades (a mean difference of m1_gap / 144); m2 misses two judges' grades; m3's plain
    run of seed s2 lost the answers to ``m3_lost`` problems."""
    rng = random.Random(20261204)
    logs: dict = {(m, s): [] for m in MODELS for s in SEEDS}
    for m in MODELS:
        for p in PROBLEMS:
            base = rng.uniform(3, 7)
            for strategy in ("cot", "plain"):
                for s in SEEDS:
                    for judge in ("j1", "j2", "j3"):
                        mu = base + (GAIN[m] if strategy == "cot" else 0) + rng.gauss(0, 0.4)
                        grade = min(20, max(0, round(mu * 2))) / 2
                        logs[m, s].append(
                            {"problem": p, "strategy": strategy, "judge": judge, "grade": grade}
                        )
    m1 = logs["m1", "s1"] + logs["m1", "s2"]
    cot = [r for r in m1 if r["strategy"] == "cot"]
    gap = sum(Fraction(r["grade"]) * (1 if r["strategy"] == "cot" else -1) for r in m1)
    i = 0
    while gap != m1_gap:
        step = Fraction(1, 2) if gap < m1_gap else Fraction(-1, 2)
        r = cot[i % len(cot)]
        if 0 <= Fraction(r["grade"]) + step <= 10:
            r["grade"] = float(Fraction(r["grade"]) + step)
            gap += step
        i += 1
    logs["m2", "s1"] = [
        r for r in logs["m2", "s1"] if (r["problem"], r["strategy"], r["judge"]) != ("p05", "cot", "j3")
    ]  # fmt: skip
    logs["m2", "s2"] = [
        r for r in logs["m2", "s2"] if (r["problem"], r["strategy"], r["judge"]) != ("p11", "plain", "j1")
    ]  # fmt: skip
    lost = set(PROBLEMS[len(PROBLEMS) - m3_lost :])
    logs["m3", "s2"] = [
        r for r in logs["m3", "s2"] if not (r["strategy"] == "plain" and r["problem"] in lost)
    ]
    for (m, s), rows in logs.items():
        path = folder / m / f"{s}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return logs


def _files(folder: Path) -> list[str]:
    return [
        a
        for m in MODELS
        for s in SEEDS
        for a in ("--observations", f"{m},{s}={folder / m / f'{s}.jsonl'}")
    ]


def _score(root: Path, folder: Path, out: Path) -> dict:
    from prereg.outputs import problems, schema_for

    args = ["--project", str(root), "cotjudges", "score", *_files(folder), "--out", str(out)]
    assert main([*args, "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert problems(doc, schema_for("factorial", "score")) == []
    return doc


def _oracle(logs: dict) -> dict:
    """Per model: the exact mean difference, scipy's paired t on the per-problem means (each
    the exact mean of its judges' and seeds' grades), and statsmodels' Holm."""
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    out, ps = {}, []
    for m in MODELS:
        grades = defaultdict(list)
        for s in SEEDS:
            for r in logs[m, s]:
                grades[r["problem"], r["strategy"]].append(Fraction(r["grade"]))
        cot = [sum(grades[p, "cot"]) / len(grades[p, "cot"]) for p in PROBLEMS]
        plain = [sum(grades[p, "plain"]) / len(grades[p, "plain"]) for p in PROBLEMS]
        res = ttest_rel([float(x) for x in cot], [float(x) for x in plain])
        ci = res.confidence_interval(0.95)
        diff = sum(a - b for a, b in zip(cot, plain, strict=True)) / len(PROBLEMS)
        out[m] = {"diff": diff, "t": res.statistic, "p": res.pvalue, "ci": (ci.low, ci.high)}
        ps.append(res.pvalue)
    for m, adj in zip(MODELS, multipletests(ps, method="holm")[1], strict=True):
        out[m]["adjusted"] = adj
    return out


def test_cot_gain_per_model_and_seed_logs(tmp_path):
    root = _project(tmp_path / "project")
    logs = _runs(tmp_path / "runs")
    score = _score(root, tmp_path / "runs", tmp_path / "out" / "SCORE.json")
    oracle = _oracle(logs)
    assert oracle["m1"]["diff"] == Fraction(1, 2)
    by = {a["id"]: a for a in score["analyses"]}
    for m in MODELS:
        a, o = by[f"gain-{m}"], oracle[m]
        assert Fraction(a["exact"]["estimate"]) == o["diff"]
        # the reported float is the double nearest the exact mean, not the scaled mean's
        # float divided back
        assert a["estimate"] == float(o["diff"])
        assert a["statistic"] == pytest.approx(o["t"], rel=1e-12)
        assert a["p"] == pytest.approx(o["p"], rel=1e-9)
        assert a["adjustedP"] == pytest.approx(o["adjusted"], rel=1e-9)
        assert (a["lower"], a["upper"]) == pytest.approx(o["ci"], rel=1e-12)
        assert a["counts"]["n"] == 24
    assert (by["gain-m2"]["counts"]["rowsA"], by["gain-m2"]["counts"]["rowsB"]) == (143, 143)
    assert (by["gain-m3"]["counts"]["rowsA"], by["gain-m3"]["counts"]["rowsB"]) == (144, 96)
    # each file's values, in the contract's order
    assert [f["perFile"] for f in score["inputs"]["observations"]] == [
        {"model": m, "seed": s} for m in MODELS for s in SEEDS
    ]
    # m3's plain cell observes 32 of its 48 answers: exactly 2/3, which meets ge "2/3"
    cell = next(c for c in score["cells"] if c["cell"] == "m3-plain")
    assert (cell["metrics"]["answered"]["k"], cell["metrics"]["answered"]["n"]) == (32, 48)
    gate = score["gates"][0]
    assert (gate["valueExact"], gate["passed"], gate["failures"]) == ("2/3", True, [])
    assert score["verdicts"] == {"h1": "supported"}  # m1 (exactly 0.5) and m2; m3 below 0.5
    assert score["decision"]["outcome"] == "prefer-cot"

    # half a point less on one of m1's grades: its mean difference is 1/2 − 1/288
    logs = _runs(tmp_path / "runs2", m1_gap=Fraction(143, 2))
    score = _score(root, tmp_path / "runs2", tmp_path / "out2" / "SCORE.json")
    m1 = next(a for a in score["analyses"] if a["id"] == "gain-m1")
    assert Fraction(m1["exact"]["estimate"]) == _oracle(logs)["m1"]["diff"] == Fraction(143, 288)
    assert score["verdicts"] == {"h1": "not-supported"}
    assert score["decision"]["outcome"] == "no-preference"

    # one more lost answer of m3: 31 of 48 is below 2/3, and the gate fails
    _runs(tmp_path / "runs3", m3_lost=17)
    score = _score(root, tmp_path / "runs3", tmp_path / "out3" / "SCORE.json")
    assert score["gates"][0]["passed"] is False
    assert score["verdicts"] == {"h1": "insufficient"}
    assert score["decision"]["outcome"] == "inconclusive"


def test_per_file_hint_names_every_field(tmp_path, capsys):
    """A log per model and seed named without its values is refused once, naming the fields no
    record writes and the way to name the file (MODEL,SEED=PATH), not once a line."""
    root = _project(tmp_path / "project")
    _runs(tmp_path / "runs")
    files = _files(tmp_path / "runs")
    files[1] = str(tmp_path / "runs" / "m1" / "s1.jsonl")
    args = ["--project", str(root), "cotjudges", "score", *files, "--out", str(tmp_path / "S.json")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "1 problem(s) with model, seed (given per file)" in err
    assert "s1.jsonl: no record writes model or seed; name the file with their values" in err
    assert "(--observations MODEL,SEED=" in err
    assert not (tmp_path / "S.json").exists()
    # a record of such a file that leaves one field out is refused at its line, with the hint
    path = tmp_path / "runs" / "m1" / "s1.jsonl"
    lines = path.read_text().splitlines()
    lines = [json.dumps({**json.loads(x), "model": "m1", "seed": "s1"}) for x in lines]
    lines[2] = json.dumps({k: v for k, v in json.loads(lines[2]).items() if k != "seed"})
    path.write_text("\n".join(lines) + "\n")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert ":3: seed is absent; write it in every record, or name the file with their" in err
    assert "(--observations MODEL,SEED=" in err


def test_prereg_md_says_how_rows_are_named_and_given(tmp_path):
    root = _project(tmp_path)
    text = (root / "generated" / "cotjudges" / "PREREG.md").read_text()
    assert "`judge`, `model`, `seed` (together they name the row)" in text
    assert "(the first names the row)" not in text
    assert "`grades`: every counted row |" in text
    assert "rows with every row" not in text
    assert (
        "| `seed` | string | yes | one of s1, s2; given per file (`--observations model,seed=PATH`"
        in text
    )


def test_scenarios_simulate_and_diagnose(tmp_path):
    root = _project(tmp_path)
    base = ["--project", str(root), "cotjudges"]
    assert main([*base, "simulate", "--scenario", "gain", "--seed", "1", "--out", str(tmp_path / "sim.jsonl"), "--quiet"]) == 0  # fmt: skip
    records = [json.loads(x) for x in (tmp_path / "sim.jsonl").read_text().splitlines()]
    assert len(records) == 864
    # each answer (problem x seed) graded by the three judges
    assert len({(r["model"], r["strategy"], r["problem"], r["seed"], r["judge"]) for r in records}) == 864  # fmt: skip
    assert main([*base, "score", "--observations", str(tmp_path / "sim.jsonl"), "--out", str(tmp_path / "S.json"), "--quiet"]) == 0  # fmt: skip
    out = tmp_path / "DIAGNOSE.json"
    assert main([*base, "diagnose", "--simulations", "20", "--seed", "1", "--out", str(out), "--quiet"]) == 0  # fmt: skip
    doc = json.loads(out.read_text())
    assert doc["study"] == "cotjudges"


def test_judges_times_seeds_laid_out_in_each_cluster(tmp_path):
    """Two judges and two seeds in clusters of four rows per problem: the key fields with
    allowed values take their combinations in turn (j1 s1, j1 s2, j2 s1, j2 s2), so each row
    has a key of its own; cycled each on its own they repeated j1 s1 at the third row, and
    score refused simulate's own records as duplicates."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "cotjudges.yaml").read_text()
    for old, new in [
        ("allowed: [j1, j2, j3]", "allowed: [j1, j2]"),
        ("rows: 144,", "rows: 96,"),
        ("rows: 864}", "rows: 576}"),
        ("size: {low: 6, high: 6}", "size: {low: 4, high: 4}"),
    ]:
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "spec" / "studies" / "cotjudges.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile", "--quiet"]) == 0
    base = ["--project", str(tmp_path), "cotjudges"]
    sim = tmp_path / "sim.jsonl"
    assert main([*base, "simulate", "--scenario", "gain", "--seed", "1", "--out", str(sim), "--quiet"]) == 0  # fmt: skip
    records = [json.loads(x) for x in sim.read_text().splitlines()]
    first = [(r["judge"], r["seed"]) for r in records if r["problem"] == "problem-1"][:4]
    assert first == [("j1", "s1"), ("j1", "s2"), ("j2", "s1"), ("j2", "s2")]
    keys = {(r["model"], r["strategy"], r["problem"], r["judge"], r["seed"]) for r in records}
    assert len(keys) == len(records) == 576
    assert main([*base, "score", "--observations", str(sim), "--out", str(tmp_path / "S.json"), "--quiet"]) == 0  # fmt: skip


@pytest.mark.parametrize(
    ("size", "held"),
    [("{low: 12, high: 12}", "up to 12 rows"), ("{mean: 4}", "any number of rows (mean)")],
)
def test_clusters_larger_than_their_keys_refused(tmp_path, capsys, size, held):
    """Clusters of 12 rows whose rows are told apart by 3 judges x 2 seeds alone would repeat
    every key at the seventh row: compile refuses, at the level's size, what score would refuse
    of simulate's records."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "cotjudges.yaml").read_text()
    assert text.count("size: {low: 6, high: 6}") == 2
    text = text.replace("size: {low: 6, high: 6}", f"size: {size}")
    (tmp_path / "spec" / "studies" / "cotjudges.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        f"at /scenarios/0/clusters/0/size: scenario 'gain': clusters of 'problem' hold {held},"
        " but the key fields laid out in them (taking their values in turn: judge (3 values),"
        " seed (2 values)) tell only 6 rows of a cluster apart" in err
    )
    assert "at /scenarios/1/clusters/0/size: scenario 'null'" in err
    assert not (tmp_path / "generated").exists()


def test_grades_in_half_points_drawn_with_one_decimal_refused(tmp_path, capsys):
    """The grade allows 0, 0.5, ..., 10; a scenario rounding its draws to one decimal would
    write 7.4, which score refuses of simulate's records: compile refuses the entry first.
    Whole grades (decimals: 0, clipped to 0..10) are all listed, and compile."""
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    text = (FIXTURES / "newcomer" / "cotjudges.yaml").read_text()
    assert text.count("decimals: 0") == 3
    (tmp_path / "spec" / "studies" / "cotjudges.yaml").write_text(
        text.replace("decimals: 0", "decimals: 1", 1)
    )
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "at /scenarios/0/values/0: scenario gain: 'grade' allows only the numbers it lists, and"
        " this entry draws more numbers with 1 decimal(s) between 0.0 and 10.0 than it lists"
    ) in err
    assert "/scenarios/0/values/1" not in err
    assert not (tmp_path / "generated").exists()
