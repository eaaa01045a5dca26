"""A study without `splits:` has one population, through the CLI: the starter (split-free)
compiles, writes its manifest, simulates, scores and diagnoses with no split anywhere a user
sees; a split where the study has none, or none where it has some, is refused at its line.

Oracles: the figures of SCORE.json are recomputed from the observation file the test reads
itself (the last attempt of a row counts; a null `correct` is a failed attempt), the pooled z
test by statsmodels' ``proportions_ztest`` and the Holm adjustment by statsmodels'
``multipletests``."""

from __future__ import annotations

import contextlib
import io
import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from prereg.cli import main
from tests.conftest import run_main

STUDY = "solo"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    monkeypatch.chdir(root)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["init", STUDY]) == 0
    return root


def _spec(project: Path) -> Path:
    return project / "spec" / "studies" / f"{STUDY}.yaml"


def _run(project: Path, *argv) -> str:
    """The CLI in this process (the refusals below run it in a subprocess, as a user would)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--project", str(project), *map(str, argv)])
    assert code == 0, err.getvalue()
    return out.getvalue()


def test_a_split_free_study_runs_end_to_end_and_shows_no_split(project, tmp_path):
    spec = yaml.safe_load(_spec(project).read_text())
    assert "splits" not in spec
    assert all("split" not in c for c in spec["crossings"])
    _run(project, "compile")
    prereg_md = (project / "generated" / "solo" / "PREREG.md").read_text()
    assert "| # | cell | levels | rows |" in prereg_md
    assert "split" not in prereg_md.split("### Cells (allocation order)", 1)[1].split("##", 1)[0]

    out = tmp_path / "out"
    _run(project, STUDY, "items", "--out", out / "items.jsonl")
    manifest = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    assert len(manifest) == 400
    assert all(set(r) == {"rowId", "system", "condition"} for r in manifest)
    _run(project, STUDY, "simulate", "--items", out / "items.jsonl", "--scenario", "effect",
         "--seed", "11", "--out", out / "obs.jsonl")  # fmt: skip
    _run(project, STUDY, "score", "--items", out / "items.jsonl", "--observations",
         out / "obs.jsonl", "--out", out / "SCORE.json")  # fmt: skip
    score = json.loads((out / "SCORE.json").read_text())
    assert all("split" not in c for c in score["cells"])

    # the oracle: last attempt per row, cell from the manifest
    cell_of = {r["rowId"]: (r["system"], r["condition"]) for r in manifest}
    last: dict[str, dict] = {}
    for line in (out / "obs.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["rowId"] not in last or rec["attempt"] > last[rec["rowId"]]["attempt"]:
            last[rec["rowId"]] = rec
    k, n = defaultdict(int), defaultdict(int)
    for rid, rec in last.items():
        if rec["correct"] is not None:
            n[cell_of[rid]] += 1
            k[cell_of[rid]] += rec["correct"] is True
    by_levels = {(c["levels"]["system"], c["levels"]["condition"]): c for c in score["cells"]}
    assert set(by_levels) == set(cell_of.values())
    for levels, c in by_levels.items():
        acc = c["metrics"]["accuracy"]
        assert (acc["k"], acc["n"]) == (k[levels], n[levels]), levels

    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportions_ztest

    contrasts = {c["id"]: c for c in score["contrasts"]}
    raw = []
    for system in ("system-a", "system-b"):
        t, c = (system, "treatment"), (system, "control")
        _, p = proportions_ztest([k[t], k[c]], [n[t], n[c]])  # pooled variance
        assert contrasts[f"treatment-{system}"]["p"] == pytest.approx(p, abs=1e-12)
        raw.append(p)
    holm = multipletests(raw, method="holm")[1]
    for system, adjusted in zip(("system-a", "system-b"), holm, strict=True):
        assert contrasts[f"treatment-{system}"]["adjustedP"] == pytest.approx(adjusted, abs=1e-12)
    supported = all(p < 0.05 for p in holm)
    assert score["verdicts"]["h1"] == ("supported" if supported else "not-supported")

    text = _run(project, STUDY, "diagnose", "--simulations", "50", "--seed", "2",
                "--out", out / "DIAGNOSE.json")  # fmt: skip
    # the starter's power claim fails at its 100 rows a cell (its comment says so)
    assert "sizing claims FAIL: h1-power (of 3)" in text
    assert "split" not in (out / "DIAGNOSE.md").read_text()


def _refused(project: Path, edits: list[tuple[str, str]], append: str = "") -> str:
    path = _spec(project)
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text + append)
    p = run_main("--project", project, "compile")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert not (project / "generated" / "solo").exists()
    return p.stderr


def _line(project: Path, needle: str) -> int:
    lines = _spec(project).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


WHERE = f"spec/studies/{STUDY}.yaml"


def test_a_split_named_where_the_study_has_none_is_refused_at_its_line(project):
    err = _refused(project, [("rows: 100, factors", "split: test, rows: 100, factors")])
    line = _line(project, "split: test, rows: 100")
    assert (
        f"{WHERE}:{line}: at /crossings/0/split: crossing names split 'test', but the study"
        " registers no splits (its rows are one population)"
    ) in err


def test_a_split_placeholder_field_or_selection_without_splits_is_refused(project):
    err = _refused(
        project,
        [
            ('{id: "{system}-{condition}"', '{id: "{split}-{system}-{condition}"'),
            (
                "      - {name: rowId, role: row, type: string, min_length: 1}\n",
                "      - {name: rowId, role: row, type: string, min_length: 1}\n"
                "      - {name: part, role: split, type: string}\n",
            ),
            (
                "    metric: coverage\n",
                "    metric: coverage\n    where: [{factor: split, levels: [t]}]\n",
            ),
        ],
    )
    crossing = _line(project, "{split}-{system}")
    field = _line(project, "name: part, role: split")
    gate = _line(project, "where: [{factor: split, levels: [t]}]")
    assert (
        f"{WHERE}:{crossing}: at /crossings/0/id: placeholder {{split}} of the cell id names the"
        " split, but the study registers no splits"
    ) in err
    assert (
        f"{WHERE}:{field}: at /record_contracts/0/fields/1/role: field 'part' holds a split, but"
        " the study registers no splits"
    ) in err
    assert (
        f"{WHERE}:{gate}: at /gates/0/where/0/factor: gate 'coverage' selects on unknown factor"
        " 'split' (the study registers no splits: its rows are one population)"
    ) in err


def test_a_study_with_splits_needs_a_split_in_each_crossing(project):
    err = _refused(
        project, [], append="splits:\n  - {id: test, code: t}\n  - {id: tuning, code: u}\n"
    )
    line = _line(project, '{id: "{system}-{condition}"')
    assert (
        f"{WHERE}:{line}: at /crossings/0: crossing names no split; the study registers splits"
        " (test, tuning), so each cell names one"
    ) in err


def test_the_implicit_split_is_a_reserved_id(project):
    err = _refused(project, [], append="splits:\n  - {id: all, code: a}\n")
    line = _line(project, "{id: all, code: a}")
    assert f"{WHERE}:{line}: at /splits/0/id: split id 'all' is reserved" in err


def test_one_declared_split_still_shows_it(project, tmp_path):
    # the old shape of the starter: one named split, shown as registered
    path = _spec(project)
    text = path.read_text().replace("rows: 100, factors", "split: test, rows: 100, factors")
    path.write_text(text + "splits:\n  - {id: test, code: tst}\n")
    _run(project, "compile")
    prereg_md = (project / "generated" / "solo" / "PREREG.md").read_text()
    assert "| # | cell | split | levels | rows |" in prereg_md
    out = tmp_path / "o"
    _run(project, STUDY, "items", "--out", out / "items.jsonl")
    _run(project, STUDY, "simulate", "--items", out / "items.jsonl", "--scenario", "null",
         "--seed", "1", "--out", out / "obs.jsonl")  # fmt: skip
    _run(project, STUDY, "score", "--items", out / "items.jsonl", "--observations",
         out / "obs.jsonl", "--out", out / "SCORE.json")  # fmt: skip
    cells = json.loads((out / "SCORE.json").read_text())["cells"]
    assert {c["split"] for c in cells} == {"test"}
