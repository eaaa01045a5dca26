"""Units built from rows, as a registration counts them, scored end to end through the CLI.

The example (examples/units/spec/studies/repo-pairs.yaml) has the rows an evaluation log
has: one per item x arm, no row ids, no attempt numbers, some rows missing and some answers
failed. It registers two unit levels: a pair (an item with both arms answered) and a
repository (at least 5 complete pairs, 40 registered), a gate on the share of analysable
repositories, and a paired contrast. The oracle below recomputes every figure from the raw
rows in plain Python, following the registration's words, not the engine's code.
"""

from __future__ import annotations

import json
import random
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from prereg import outputs
from prereg.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "units"
FIXTURE = EXAMPLE / "spec" / "studies" / "repo-pairs.yaml"


def log_rows(seed: int, repos: int = 40, items: int = 6, gap: float = 0.04) -> list[dict]:
    rnd = random.Random(seed)
    rows = []
    for r in range(repos):
        for i in range(items):
            for arm in ("base", "tuned"):
                u = rnd.random()
                if u < gap:
                    continue  # the log has no row for this item and arm
                status = "error" if u < 2 * gap else "ok"
                correct = None if status == "error" else rnd.random() < 0.7
                rows.append(
                    {"repo": f"repo{r}", "itemId": f"r{r}-i{i}", "arm": arm, "status": status,
                     "correct": correct}
                )  # fmt: skip
    return rows


def oracle(rows: list[dict]) -> dict:
    """The registration in plain Python: a pair counts when both arms answered (status ok); a
    repository is analysable with at least 5 complete pairs; the contrast pairs the answers of
    the complete pairs of analysable repositories."""
    answered: dict[str, dict[str, bool]] = {}
    repo_of: dict[str, str] = {}
    items = set()
    for r in rows:
        items.add(r["itemId"])
        repo_of[r["itemId"]] = r["repo"]
        if r["status"] == "ok":
            answered.setdefault(r["itemId"], {})[r["arm"]] = r["correct"]
    complete = {i for i, a in answered.items() if len(a) == 2}
    pairs_in: dict[str, int] = {}
    for i in complete:
        pairs_in[repo_of[i]] = pairs_in.get(repo_of[i], 0) + 1
    repos = {r["repo"] for r in rows}
    analysable = {g for g in repos if pairs_in.get(g, 0) >= 5}
    used = [i for i in complete if repo_of[i] in analysable]
    n10 = sum(answered[i]["tuned"] and not answered[i]["base"] for i in used)
    n01 = sum(answered[i]["base"] and not answered[i]["tuned"] for i in used)
    return {
        "pairs": len(items),
        "complete": len(complete),
        "analysable": len(analysable),
        "excluded_repos": sorted(repos - analysable),
        "n": len(used),
        "estimate": Fraction(n10 - n01, len(used)),
        "share": Fraction(len(analysable), 40),
    }


def score(tmp_path: Path, rows: list[dict]) -> dict:
    (tmp_path / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE, tmp_path / "spec" / "studies" / "repo-pairs.yaml")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs = tmp_path / "answers.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "SCORE.json"
    assert main(["--project", str(tmp_path), "repo-pairs", "score", "--observations",
                 str(obs), "--out", str(out)]) == 0  # fmt: skip
    doc = json.loads(out.read_text())
    # SCORE.json, units included, is what its published schema says
    assert outputs.problems(doc, outputs.schema_for("factorial", "score")) == []
    return doc


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_units_counts_exclusions_and_the_paired_contrast_equal_the_oracle(tmp_path, capsys, seed):
    rows = log_rows(seed)
    want = oracle(rows)
    doc = score(tmp_path, rows)
    capsys.readouterr()
    pair, repo = doc["units"]
    assert (pair["id"], pair["units"], pair["included"]) == (
        "pair",
        want["pairs"],
        want["complete"],
    )
    assert repo["included"] == want["analysable"]
    assert sorted(x["unit"]["repo"] for x in repo["excludedUnits"]) == want["excluded_repos"]
    for x in repo["excludedUnits"]:
        assert x["reasons"] == [f"pairs {x['figures']['pairs']} < 5"]
    con = doc["contrasts"][0]
    assert con["pairs"]["n"] == want["n"]
    assert Fraction(con["estimate"]).limit_denominator(10**6) == want["estimate"]
    gate = doc["gates"][0]
    assert gate["passed"] == (want["share"] >= Fraction(9, 10))
    for failure in gate["failures"]:
        assert Fraction(failure["figure"]).limit_denominator(1000) == want["share"]
    assert doc["rows"]["observed"] == len(rows)


def test_a_gate_on_units_is_decided_exactly_at_36_of_40(tmp_path, capsys):
    """Exactly 4 of the 40 registered repositories fall short: 36/40 = 0.9, the gate's
    threshold, holds (ge)."""
    rows = log_rows(5, gap=0.0)
    short = {f"repo{r}" for r in range(4)}
    # in 4 repositories, two pairs lose their tuned answer: 4 complete pairs remain
    rows = [
        r for r in rows
        if not (r["repo"] in short and r["arm"] == "tuned" and r["itemId"][-1] in "01")
    ]  # fmt: skip
    doc = score(tmp_path, rows)
    capsys.readouterr()
    assert oracle(rows)["analysable"] == 36
    assert doc["units"][1]["included"] == 36
    assert doc["gates"][0]["passed"] is True
    assert doc["decision"]["outcome"] != "inconclusive"


def test_registered_units_are_counted_when_never_seen_and_more_are_refused(tmp_path, capsys):
    # 38 repositories in the log: the two never seen count as not analysable, so 38 of the 40
    # registered are (0.95, the gate holds)
    rows = [r for r in log_rows(5, gap=0.0) if r["repo"] not in ("repo38", "repo39")]
    doc = score(tmp_path, rows)
    cells = doc["units"][1]["cells"]
    assert [(c["units"], c["included"], c["registered"]) for c in cells] == [(38, 38, 40)] * 2
    assert [f["figure"] for f in doc["gates"][0]["failures"]] == []
    assert doc["gates"][0]["passed"] is True  # 38/40 = 0.95
    # 41 repositories (of 5 items each, so the rows stay within the cells): refused
    more = log_rows(5, repos=41, items=5, gap=0.0)
    capsys.readouterr()
    obs = tmp_path / "answers.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in more))
    out = tmp_path / "SCORE2.json"
    assert main(["--project", str(tmp_path), "repo-pairs", "score", "--observations", str(obs),
                 "--out", str(out)]) != 0  # fmt: skip
    err = capsys.readouterr().err
    assert "has 41 units of repository, the study registers 40" in err
    assert not out.exists()


SAMPLES = FIXTURE.parent / "samples-units.yaml"


def sample_rows(seed: int) -> list[dict]:
    """20 problems x 2 settings x 12 samples; some samples have no verdict (null) and some
    are missing from the log, so some problems keep fewer than 10 valid samples."""
    rnd = random.Random(seed)
    rows = []
    for p in range(20):
        skill = rnd.random()
        for dec in ("greedy-temp", "nucleus"):
            for s in range(1, 13):
                u = rnd.random()
                if u < 0.06:
                    continue
                passed = None if u < 0.14 else rnd.random() < skill
                rows.append({"problem": f"p{p}", "decoding": dec, "sample": s, "passed": passed})
    return rows


def pass_at_k_oracle(rows: list[dict], dec: str, k: int) -> tuple[Fraction | None, int]:
    """The unbiased pass@k (Chen et al., 2021): per problem 1 - C(n-c, k)/C(n, k) over its n
    valid samples with c passes, averaged over the problems with at least 10 valid samples."""
    from math import comb

    got: dict[str, list[bool]] = {}
    for r in rows:
        if r["decoding"] == dec and r["passed"] is not None:
            got.setdefault(r["problem"], []).append(r["passed"])
    kept = [v for v in got.values() if len(v) >= 10]
    if not kept:
        return None, 0
    vals = [1 - Fraction(comb(len(v) - sum(v), k), comb(len(v), k)) for v in kept]
    return sum(vals) / len(vals), len(kept)


@pytest.mark.parametrize("seed", [1, 2])
def test_pass_at_k_reads_only_the_problems_the_units_include(tmp_path, capsys, seed):
    rows = sample_rows(seed)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(SAMPLES, tmp_path / "spec" / "studies" / "samples-units.yaml")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs = tmp_path / "samples.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "SCORE.json"
    assert main(["--project", str(tmp_path), "samples-units", "score", "--observations",
                 str(obs), "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    doc = json.loads(out.read_text())
    analyses = {a["id"]: a for a in doc["analyses"]}
    (level,) = doc["units"]
    for c, dec in zip(level["cells"], ("greedy-temp", "nucleus"), strict=True):
        want, kept = pass_at_k_oracle(rows, dec, 5)
        assert c["included"] == kept
        assert abs(analyses[f"pass-at-5-{dec}"]["estimate"] - float(want)) < 1e-12
    for x in level["excludedUnits"]:
        assert x["figures"]["valid"] < 10 or x["reasons"] == ["no counted row"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("by: [repo]", "by: [repository]", "unit 'repository' is named by unknown field 'repository'"),
        ("{id: pairs, units: pair}", "{id: pairs, units: repository}",
         "figure 'pairs' counts the unit's own level"),
        ("{figure: pairs, op: ge, value: 5}", "{figure: pair, op: ge, value: 5}",
         "rule reads unknown figure 'pair' (its figures: pairs)"),
        ("{kind: units, unit: repository}", "{kind: units, unit: repo}",
         "metric 'analysable': units of unknown unit 'repo' (registered: pair, repository)"),
        ("{figure: answered, op: ge, value: 2, reason: both arms answered}",
         "{figure: answered, op: ge, value: 2.5}", "value"),
    ],
)  # fmt: skip
def test_compile_refuses_a_unit_it_cannot_build_at_its_line(tmp_path, capsys, old, new, message):
    text = FIXTURE.read_text()
    assert old in text
    text = text.replace(old, new, 1)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if new in t)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    capsys.readouterr()
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert f"repo-pairs.yaml:{line}" in err
    assert not (tmp_path / "generated" / "repo_pairs").exists()


def test_compile_refuses_a_scenario_that_lays_out_no_field_a_unit_groups_by(tmp_path, capsys):
    # without a clusters level for repo, simulated rows would have no repository, and the
    # repository units (and the gate on them) could not be diagnosed
    text = FIXTURE.read_text()
    start = text.index("scenarios:\n")
    text = (
        text[:start]
        + "scenarios:\n  - id: flat\n    outcome: correct\n    rates: [{rate: 0.7}]\n"
        + text[text.index("constants:\n") :]
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    line = text[:start].count("\n") + 2  # the scenario's first line
    assert f"repo-pairs.yaml:{line}: at /scenarios/0: scenario 'flat' cannot drive unit" in err
    assert "'repository': it groups rows by 'repo'" in err
    assert not (tmp_path / "generated" / "repo_pairs").exists()


RATERS = FIXTURE.parent / "raters-units.yaml"


def rater_data(seed: int) -> tuple[list[dict], list[dict]]:
    """30 items (15 per domain); each rater's label agrees with a true grade most of the time;
    some labels are null (the rater skipped) and some rows are missing from the log."""
    rnd = random.Random(seed)
    items = [{"itemId": f"q{i}", "domain": "code" if i < 15 else "prose"} for i in range(30)]
    labels = []
    for it in items:
        truth = rnd.randrange(3)
        for rater in ("ann", "bob", "cat"):
            u = rnd.random()
            if u < 0.03:
                continue  # no row for this item and rater
            grade = None if u < 0.07 else (truth if rnd.random() < 0.8 else rnd.randrange(3))
            labels.append({"itemId": it["itemId"], "rater": rater, "grade": grade})
    return items, labels


@pytest.mark.parametrize("seed", [3, 4])
def test_an_expanded_manifest_and_fleiss_kappa_over_the_included_items(tmp_path, capsys, seed):
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    items, labels = rater_data(seed)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(RATERS, tmp_path / "spec" / "studies" / "raters-units.yaml")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    out = tmp_path / "SCORE.json"
    assert main(["--project", str(tmp_path), "raters-units", "score", "--items",
                 str(tmp_path / "items.jsonl"), "--observations",
                 str(tmp_path / "labels.jsonl"), "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    doc = json.loads(out.read_text())
    # the oracle: the items all three raters graded, by statsmodels
    grades: dict[str, dict[str, int]] = {}
    for r in labels:
        if r["grade"] is not None:
            grades.setdefault(r["itemId"], {})[r["rater"]] = r["grade"]
    full = [g for g in grades.values() if len(g) == 3]
    table, _ = aggregate_raters([[g["ann"], g["bob"], g["cat"]] for g in full], n_cat=3)
    want = fleiss_kappa(table, method="fleiss")
    (fleiss,) = doc["analyses"]
    assert abs(fleiss["estimate"] - want) < 1e-12
    assert doc["rows"]["registered"] == 90  # 30 items x 3 raters, from the expansion
    assert doc["rows"]["observed"] == len(labels)
    (level,) = doc["units"]
    assert level["included"] == len(full)
    excluded = {x["unit"]["itemId"] for x in level["excludedUnits"]}
    assert excluded == {it["itemId"] for it in items} - {
        i for i, g in grades.items() if len(g) == 3
    }


def test_expand_is_refused_with_values_not_allowed_and_of_the_rows_own_name(tmp_path, capsys):
    text = RATERS.read_text().replace(
        "    - {field: rater, values: [ann, bob, cat]}",
        "    - {field: rater, values: [ann, bob, dan]}\n    - {field: itemId, count: 2}",
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "raters-units.yaml").write_text(text)
    capsys.readouterr()
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert "expand of 'rater': ['dan'] not among its allowed values" in err
    assert "expand names 'itemId', the first key field" in err
    assert "expand of 'itemId': count numbers 1..n, and it is a string" in err


def test_expand_is_refused_in_a_study_without_a_manifest(tmp_path, capsys):
    text = FIXTURE.read_text().replace(
        "  counts: first\n", "  counts: first\n  expand:\n    - {field: arm, values: [base]}\n"
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    capsys.readouterr()
    assert main(["--project", str(tmp_path), "compile"]) == 2
    assert "the study has no item manifest" in capsys.readouterr().err


def test_the_bundled_example_data_score_as_the_oracles_say(tmp_path, capsys):
    """examples/units runs from its README's commands on its bundled logs."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    project = tmp_path / "units"
    shutil.copytree(EXAMPLE, project)
    assert main(["--project", str(project), "compile"]) == 0
    data = project / "data"

    def run(study: str, *args: str) -> dict:
        out = project / "out" / study / "SCORE.json"
        assert main(["--project", str(project), study, "score", *args, "--out", str(out)]) == 0
        return json.loads(out.read_text())

    read = [json.loads(x) for x in (data / "answers.jsonl").read_text().splitlines()]
    doc = run("repo-pairs", "--observations", str(data / "answers.jsonl"))
    want = oracle(read)
    assert doc["units"][1]["included"] == want["analysable"]
    assert doc["contrasts"][0]["pairs"]["n"] == want["n"]

    read = [json.loads(x) for x in (data / "samples.jsonl").read_text().splitlines()]
    doc = run("samples-units", "--observations", str(data / "samples.jsonl"))
    got = {a["id"]: a["estimate"] for a in doc["analyses"]}
    assert abs(got["pass-at-5-nucleus"] - float(pass_at_k_oracle(read, "nucleus", 5)[0])) < 1e-12

    labels = [json.loads(x) for x in (data / "labels.jsonl").read_text().splitlines()]
    doc = run("raters-units", "--items", str(data / "items.jsonl"), "--observations",
              str(data / "labels.jsonl"))  # fmt: skip
    grades: dict[str, dict[str, int]] = {}
    for r in labels:
        if r["grade"] is not None:
            grades.setdefault(r["itemId"], {})[r["rater"]] = r["grade"]
    full = [g for g in grades.values() if len(g) == 3]
    table, _ = aggregate_raters([[g["ann"], g["bob"], g["cat"]] for g in full], n_cat=3)
    assert abs(doc["analyses"][0]["estimate"] - fleiss_kappa(table, method="fleiss")) < 1e-12
    capsys.readouterr()


def test_preregistration_and_its_export_state_the_units_and_their_rules(tmp_path, capsys):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(FIXTURE, tmp_path / "spec" / "studies" / "repo-pairs.yaml")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    prereg = (tmp_path / "generated" / "repo_pairs" / "PREREG.md").read_text()
    row = "| `repository` | A repository with its complete pairs | `repo` | `pairs`: included"
    assert row + " `pair` units | `pairs` ≥ 5 | 40 |" in prereg
    capsys.readouterr()
    assert main(["--project", str(tmp_path), "export", "repo-pairs", "--format", "osf"]) == 0
    form = capsys.readouterr().out
    exclusion = form[form.index("### Data exclusion") : form.index("### Missing data")]
    assert "`answered` ≥ 2" in exclusion and "`pairs` ≥ 5" in exclusion


def test_clustered_files_in_repositories_analysed_by_repository(tmp_path, capsys):
    """Files nested in repositories randomised to two linters: a repository counts with at
    least 5 timed files, and the cluster-level t test (equal weights) reads the included
    repositories' means; the oracle is scipy's Student t test of those means."""
    from scipy import stats

    project = tmp_path / "units"
    shutil.copytree(EXAMPLE, project)
    assert main(["--project", str(project), "compile"]) == 0
    out = project / "out" / "SCORE.json"
    assert main(["--project", str(project), "cluster-arms", "score", "--observations",
                 str(project / "data" / "runs.jsonl"), "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    doc = json.loads(out.read_text())
    rows = [json.loads(x) for x in (project / "data" / "runs.jsonl").read_text().splitlines()]
    timed: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["seconds"] is not None:
            timed.setdefault((r["repo"], r["linter"]), []).append(r["seconds"])
    kept = {k: sum(v) / len(v) for k, v in timed.items() if len(v) >= 5}
    new = [m for (_, arm), m in kept.items() if arm == "new"]
    old = [m for (_, arm), m in kept.items() if arm == "old"]
    want = stats.ttest_ind(new, old, alternative="less")
    (an,) = doc["analyses"]
    assert abs(an["estimate"] - (sum(new) / len(new) - sum(old) / len(old))) < 1e-12
    assert abs(an["p"] - want.pvalue) < 1e-12
    assert an["df"] == len(kept) - 2
    (level,) = doc["units"]
    assert level["included"] == len(kept)
    assert all(x["figures"]["timed"] < 5 for x in level["excludedUnits"])
    # 13 of 20 repositories are analysable: below the registered 80%, so the gate fails
    assert doc["gated"] and doc["decision"]["outcome"] == "inconclusive"


def test_rows_beyond_the_registered_count_say_that_a_row_is_a_full_key(tmp_path, capsys):
    text = FIXTURE.read_text().replace("rows: 240", "rows: 100")
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs = tmp_path / "answers.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in log_rows(7)))
    capsys.readouterr()
    out = tmp_path / "SCORE.json"
    assert main(["--project", str(tmp_path), "repo-pairs", "score", "--observations", str(obs),
                 "--out", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "cell tst-base has 228 distinct rows, the study registers 100" in err
    assert "a row is one value of (itemId, arm), the attempt policy's key" in err
    assert not out.exists()


def _raters_project(tmp_path: Path, extra: str) -> Path:
    text = RATERS.read_text().replace("attempts:\n", extra + "attempts:\n", 1)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "raters-units.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    return tmp_path


def _score_raters(project: Path, items: list[dict], labels: list[dict], name: str) -> int:
    (project / f"{name}-items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (project / f"{name}-labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    return main(["--project", str(project), "raters-units", "score", "--items",
                 str(project / f"{name}-items.jsonl"), "--observations",
                 str(project / f"{name}-labels.jsonl"), "--out",
                 str(project / name / "SCORE.json")])  # fmt: skip


def test_row_counts_from_the_manifest_with_the_registered_total_held(tmp_path, capsys):
    """The same spec scores a manifest that plans 20 code and 10 prose items (the cells
    register 15 and 15): with row_counts: manifest the cells take the manifest's counts, and
    the registered total (90 rows: 30 items x 3 raters) is still checked."""
    items, labels = rater_data(3)
    items = [{**it, "domain": "code" if i < 20 else "prose"} for i, it in enumerate(items)]
    # without the word, the registered counts hold: refused
    plain = _raters_project(tmp_path / "plain", "")
    capsys.readouterr()
    assert _score_raters(plain, items, labels, "run") == 2
    assert "cell code has 60 rows, the study registers 45" in capsys.readouterr().err
    project = _raters_project(
        tmp_path / "manifest", "row_counts: manifest\ntotals:\n  - {scope: all, rows: 90}\n"
    )
    prereg = (project / "generated" / "raters_units" / "PREREG.md").read_text()
    assert "Row counts come from the item manifest" in prereg
    capsys.readouterr()
    assert _score_raters(project, items, labels, "run") == 0
    doc = json.loads((project / "run" / "SCORE.json").read_text())
    assert [(c["cell"], c["rows"]) for c in doc["cells"]] == [("code", 60), ("prose", 30)]
    assert doc["rows"]["registered"] == 90
    # one item more breaks the registered total: refused, nothing written
    more = [*items, {"itemId": "q30", "domain": "prose"}]
    capsys.readouterr()
    assert _score_raters(project, more, labels, "more") == 2
    err = capsys.readouterr().err
    assert "the manifest lists 93 rows in 'all', the study registers a total of 90" in err
    assert not (project / "more").exists()


def test_row_counts_manifest_without_a_manifest_is_refused(tmp_path, capsys):
    text = FIXTURE.read_text().replace("attempts:\n", "row_counts: manifest\nattempts:\n", 1)
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    capsys.readouterr()
    assert main(["--project", str(tmp_path), "compile"]) == 2
    assert "row_counts: manifest takes each cell's rows from the item manifest" in (
        capsys.readouterr().err
    )


def test_a_unit_named_by_an_array_field_is_refused_at_its_line(tmp_path, capsys):
    text = (
        FIXTURE.read_text()
        .replace(
            "      - {name: correct, type: boolean, nullable: true}\n",
            "      - {name: correct, type: boolean, nullable: true}\n"
            "      - {name: tags, type: array, items: string, required: false}\n",
        )
        .replace("by: [repo]", "by: [tags]")
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "by: [tags]" in t)
    capsys.readouterr()
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert f"repo-pairs.yaml:{line}" in err
    assert "unit 'repository' is named by 'tags', an array field" in err


def test_a_unit_named_by_a_derived_field_with_list_values_scores(tmp_path, capsys):
    """A derived field's cases may give any JSON value, lists included: such a value names a
    unit as its JSON text, never a traceback."""
    text = (
        FIXTURE.read_text()
        .replace(
            "units:\n",
            "derived_fields:\n  - id: half\n    cases:\n"
            "      - {when: [{field: arm, op: eq, value: base}], value: [1, 2]}\n"
            "      - {value: [3]}\nunits:\n",
        )
        .replace("by: [repo]", "by: [half]")
        .replace("registered: 40", "registered: 2")
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "repo-pairs.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    obs = tmp_path / "answers.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in log_rows(7)))
    out = tmp_path / "SCORE.json"
    assert main(["--project", str(tmp_path), "repo-pairs", "score", "--observations", str(obs),
                 "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    level = json.loads(out.read_text())["units"][1]
    # the rows of included pairs fall into the two halves, one per arm
    assert level["units"] == 2
    assert {x["unit"]["half"] for x in level["excludedUnits"]} <= {"[1, 2]", "[3]"}
