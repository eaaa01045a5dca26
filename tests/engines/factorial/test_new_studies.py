"""Two factorial studies written as a methodologist would, in YAML alone, run through the CLI.

``tool-agents``: one split, three factors crossed with ``rows_by`` and ``exclude``, first-success
attempts with ``failed_if_any`` and ``unknown_rows: ignore``, derived fields with cases, means
over numeric fields, pairwise contrasts (``pairs_of``) under Holm, a Welch non-inferiority
margin with ordered verdicts, Clopper-Pearson estimates. ``refusal-ni``: two splits, crossings
with ``subset``, ``fixed`` and ``exclude``, first-match attempts behind a scored-attempt filter,
Farrington-Manning non-inferiority, ``at_least`` over a placeholder, a scenario family.
Figures are checked against an independent computation from the files the commands wrote."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT
from tests.engines.factorial.examples import by_id, read_jsonl, run

TOOLS = "tool-agents"
REFUSAL = "refusal-ni"


def tools_span(start: str, end: str) -> str:
    """The text of the tool-agents fixture from the line ``start`` up to the line ``end``."""
    text = (FIXTURES / "factorial" / f"{TOOLS}.yaml").read_text(encoding="utf-8")
    return text[text.index(start) : text.index(end)]


def project_of(root: Path, *studies: str, edits=()) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    for study in studies:
        text = (FIXTURES / "factorial" / f"{study}.yaml").read_text(encoding="utf-8")
        for old, new in edits:
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        (root / "spec" / "studies" / f"{study}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return root


@pytest.fixture(scope="module")
def tools(tmp_path_factory) -> Path:
    root = project_of(tmp_path_factory.mktemp("tools"), TOOLS)
    assert main(["--project", str(root), "compile"]) == 0
    assert run(root, TOOLS, "items", "--out", root / "items.jsonl") == 0
    obs = root / "obs.jsonl"
    assert run(root, TOOLS, "simulate", "--items", root / "items.jsonl", "--scenario",
               "gamma-best", "--seed", 3, "--out", obs) == 0  # fmt: skip
    ghost = {"attempt": 1, "passed": True, "rowId": "ghost-1", "score": 0.9, "status": "ok",
             "steps": 3}  # fmt: skip
    with obs.open("a") as f:
        f.write(json.dumps(ghost) + "\n")
    assert run(root, TOOLS, "score", "--items", root / "items.jsonl", "--observations", obs,
               "--out", root / "SCORE.json") == 0  # fmt: skip
    return root


def counted_rows(root: Path) -> dict[str, dict]:
    """First-success by hand: the lowest attempt whose status is ok, registered rows only."""
    items = {r["rowId"]: r for r in read_jsonl(root / "items.jsonl")}
    attempts = defaultdict(list)
    for r in read_jsonl(root / "obs.jsonl"):
        attempts[r["rowId"]].append(r)
    out = {}
    for rid, rs in attempts.items():
        ok = sorted((r for r in rs if r["status"] == "ok"), key=lambda r: r["attempt"])
        if rid in items and ok:
            out[rid] = {**items[rid], **ok[0]}
    return out


def test_tool_agents_end_to_end(tools):
    items = read_jsonl(tools / "items.jsonl")
    assert len(items) == 780  # 3 agents x (3 tools easy x 60 + 2 tools hard x 40)
    assert not any(r["tool"] == "calc" and r["difficulty"] == "hard" for r in items)
    doc = json.loads((tools / "SCORE.json").read_text())
    assert doc["rows"] == {"registered": 780, "observed": 780, "ignoredRecords": 1}
    assert doc["verdicts"] == {
        "h1": "supported", "h2": "supported", "h3": "non-inferior", "h4": "reported-only"
    }  # fmt: skip
    est, con = by_id(doc["estimates"]), by_id(doc["contrasts"])

    rows = counted_rows(tools)
    assert len(rows) == 780

    def sel(**kw):
        return [r for r in rows.values() if all(r[k] in v for k, v in kw.items())]

    def kn(rs):
        return sum(r["passed"] is True for r in rs), len(rs)

    (ka, na), (kg, ng) = kn(sel(agent=["alpha"])), kn(sel(agent=["gamma"]))
    assert (na, ng) == (260, 260)
    assert (est["pass-alpha"]["k"], est["pass-gamma"]["k"]) == (ka, kg)
    # SCORE.json keeps full precision (not rounded for display): the difference of the two
    # shares to within a few units in the last place of a double
    assert con["pass-alpha-vs-gamma"]["estimate"] == pytest.approx((ka - kg) / 260, abs=1e-15)

    for agent in ("alpha", "beta", "gamma"):
        k, n = kn(sel(agent=[agent]))
        e = est[f"pass-{agent}"]
        assert (e["k"], e["n"]) == (k, n)
        lo, hi = proportion_confint(k, n, method="beta")
        assert (e["lower"], e["upper"]) == pytest.approx((lo, hi), rel=1e-12)
        credited = sum(r["score"] >= 0.5 for r in sel(agent=[agent]))
        assert est[f"credit-{agent}"]["k"] == credited
        steps = np.array([r["steps"] for r in sel(agent=[agent]) if r["passed"]], dtype=float)
        assert est[f"steps-{agent}"]["n"] == steps.size
        assert est[f"steps-{agent}"]["estimate"] == pytest.approx(float(steps.mean()), rel=1e-12)
    pairs = [("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")]
    ps = []
    for x, y in pairs:
        (ka, na), (kb, nb) = kn(sel(agent=[x])), kn(sel(agent=[y]))
        pooled = (ka + kb) / (na + nb)
        z = (ka / na - kb / nb) / np.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
        ps.append(2 * stats.norm.sf(abs(z)))
        lo, hi = confint_proportions_2indep(ka, na, kb, nb, method="newcomb")
        c = con[f"pass-{x}-vs-{y}"]
        assert (c["lower"], c["upper"]) == pytest.approx((lo, hi), rel=1e-12)
    holm = multipletests(ps, method="holm")[1]
    for (x, y), adj in zip(pairs, holm, strict=True):
        assert con[f"pass-{x}-vs-{y}"]["adjustedP"] == pytest.approx(adj, rel=1e-3, abs=1e-7)
    # Welch non-inferiority of beta's mean score against alpha's at margin -0.05 (90% interval)
    a = np.array([r["score"] for r in sel(agent=["beta"])])
    b = np.array([r["score"] for r in sel(agent=["alpha"])])
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    d, se = a.mean() - b.mean(), np.sqrt(va + vb)
    c = con["score-beta-ni"]
    assert c["lower"] == pytest.approx(d - stats.t.ppf(0.95, df) * se, rel=1e-12)
    assert c["p"] == pytest.approx(stats.t.sf((d + 0.05) / se, df), rel=1e-3)


def compiled_or_refused(tmp_path: Path, study: str, edits, capsys) -> tuple[int, str]:
    root = project_of(tmp_path / "edited", study, edits=edits)
    code = main(["--project", str(root), "compile"])
    return code, capsys.readouterr().err


def test_first_match_rows_simulate_as_observed(tmp_path):
    """simulate writes the counted attempt of a first-match policy meeting its select (status
    final); it wrote the first allowed status (partial), so no row was ever observed."""
    root = project_of(tmp_path, REFUSAL)
    assert main(["--project", str(root), "compile"]) == 0
    assert run(root, REFUSAL, "items", "--out", root / "items.jsonl") == 0
    obs = root / "obs.jsonl"
    assert run(root, REFUSAL, "simulate", "--items", root / "items.jsonl", "--scenario",
               "comparable", "--seed", 5, "--out", obs) == 0  # fmt: skip
    records = read_jsonl(obs)
    assert {r["status"] for r in records} == {"final", "error"}
    assert all(r["judge"] == "primary" for r in records)
    assert run(root, REFUSAL, "score", "--items", root / "items.jsonl", "--observations", obs,
               "--out", root / "SCORE.json") == 0  # fmt: skip
    doc = json.loads((root / "SCORE.json").read_text())
    assert doc["rows"]["observed"] == doc["rows"]["registered"] == 1170
    con = by_id(doc["contrasts"])
    assert (con["ni-m4"]["a"]["n"], con["ni-m4"]["b"]["n"]) == (50, 100)
    assert doc["gates"][0]["passed"] is True
    out = root / "DIAGNOSE.json"
    assert run(root, REFUSAL, "diagnose", "--scenario", "comparable", "--simulations", 50,
               "--seed", 1, "--out", out, "--quiet") == 0  # fmt: skip
    (condition,) = json.loads(out.read_text())["conditions"]
    assert condition["gates"]["anyFailed"]["count"] == 0


def test_rows_by_missing_a_level_is_reported(tmp_path, capsys):
    """A rows_by that leaves a crossed level out is one problem at the crossing (the totals
    check crashed on the cells it left without rows)."""
    code, err = compiled_or_refused(
        tmp_path, TOOLS, [("        - {level: hard, rows: 40}\n", "")], capsys
    )
    assert code == 2
    assert "Traceback" not in err
    assert (
        "tool-agents.yaml:36: at /crossings/0/rows_by: rows_by must give the rows of each"
        " crossed level of 'difficulty' once; missing ['hard']"
    ) in err
    assert "declared total" not in err


@pytest.mark.parametrize(
    ("field", "why"),
    [
        ("status", "a string field of 'attempt', not a number"),
        ("passed", "a boolean field of 'attempt', not a number"),
        ("credited", "a derived test (true or false), not a number"),
        ("grade", "a derived field none of whose cases gives a number"),
    ],
)
def test_a_mean_of_a_field_without_numbers_is_refused(tmp_path, capsys, field, why):
    """A mean of a string, boolean or derived non-numeric field compiled, and score then
    averaged nothing (every row skipped, the figure missing) without a word."""
    edit = ("compute: {kind: mean, field: score}", f"compute: {{kind: mean, field: {field}}}")
    code, err = compiled_or_refused(tmp_path, TOOLS, [edit], capsys)
    assert code == 2
    assert f"at /metrics/3/compute/field: metric 'mean-score': mean of {field!r}, {why}" in err


def test_diagnose_simulates_rules_that_read_drawn_numbers(tmp_path, capsys):
    """A rule reading a mean of a number the scenarios draw (h3's Welch non-inferiority of the
    partial credit) takes the row path: every row's records are drawn and scored as score
    scores them. h3 is tested after h1 (fixed sequence), so in every simulated study where h1
    is not supported h3 is not tested; the mean's truth comes from the scenario's distributions."""
    root = project_of(tmp_path, TOOLS)
    assert main(["--project", str(root), "compile"]) == 0
    capsys.readouterr()
    out = root / "DIAGNOSE.json"
    args = ["--simulations", 20, "--seed", 1, "--out", out, "--quiet"]
    assert run(root, TOOLS, "diagnose", *args) == 0
    doc = json.loads(out.read_text())
    assert any(n.startswith("Simulated row by row") for n in doc["notes"])
    assert not [n for n in doc["notes"] if "is not simulated" in n]  # nothing left out
    for cond in doc["conditions"]:
        shares = {
            h["id"]: {v["verdict"]: v["count"] for v in h["verdicts"]} for h in cond["hypotheses"]
        }
        assert shares["h3"]["not-tested"] == 20 - shares["h1"]["supported"]
        row = next(c for c in cond["contrasts"] if c["id"] == "score-beta-ni")
        # by hand: a passed task's score is uniform on [0.6, 1] (mean 0.8), a failed one's on
        # [0, 0.7] (mean 0.35); beta passes 0.05 more often than alpha in every cell under
        # gamma-best, so the true difference is 0.45 * 0.05; all-equal draws U(0, 1) for all
        truth = 0.45 * 0.05 if cond["scenario"] == "gamma-best" else 0.0
        assert row["truth"] == pytest.approx(truth, abs=1e-12)
        assert row["alphaFrom"] == "interval level" and row["defined"] == 20
        steps = next(e for e in cond["estimates"] if e["id"] == "steps-alpha")
        assert steps["defined"] == 20 and steps["meanEstimate"] >= 1  # drawn with low 1
    # the credit rate (a proportion of a field derived from a drawn number) read by a rule
    h3 = tools_span("  - id: h3\n", "  - id: h4\n")
    ruled = h3.replace("metric: mean-score", "metric: credit-rate")
    ruled = ruled.replace("interval: welch\n", "interval: newcombe-hybrid\n").replace(
        "test: welch-t", "test: farrington-manning"
    )
    root = project_of(tmp_path / "ruled", TOOLS, edits=[(h3, ruled)])
    assert main(["--project", str(root), "compile"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    out = root / "DIAGNOSE.json"
    args = ["--simulations", 20, "--seed", 1, "--out", out, "--quiet"]
    assert run(root, TOOLS, "diagnose", *args) == 0
    doc = json.loads(out.read_text())
    for cond in doc["conditions"]:
        row = next(c for c in cond["contrasts"] if c["id"] == "score-beta-ni")
        assert row["truth"] is None and row["defined"] == 20


def test_diagnose_leaves_out_reported_figures_it_cannot_simulate(tmp_path):
    """Without h3 (the rule reading a mean), the study diagnoses: h4's reported estimates of
    the credit rate (a drawn number) and of the steps (a mean) are left out, each named in
    the notes and in DIAGNOSE.md, and its pass-rate estimates are simulated."""
    root = project_of(tmp_path, TOOLS, edits=[(tools_span("  - id: h3\n", "  - id: h4\n"), "")])
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "DIAGNOSE.json"
    args = ["--simulations", 40, "--seed", 1, "--out", out, "--quiet"]
    assert run(root, TOOLS, "diagnose", *args) == 0
    doc = json.loads(out.read_text())
    left = [n for n in doc["notes"] if "is not simulated" in n]
    assert sorted(n.split(" ")[1] for n in left) == [
        "credit-alpha", "credit-beta", "credit-gamma", "steps-alpha", "steps-beta", "steps-gamma",
    ]  # fmt: skip
    assert (
        "estimate steps-alpha is not simulated: it reads metric 'steps-solved', a mean, and no"
        " rule reads it"
    ) in left
    shown = {e["id"] for c in doc["conditions"] for e in c["estimates"]}
    assert shown == {"pass-alpha", "pass-beta", "pass-gamma"}
    md = out.with_suffix(".md").read_text()
    assert (
        "Not simulated (reported figures no rule reads):" in md and "- estimate credit-beta" in md
    )


def test_diagnose_of_the_outcome_alone_runs(tmp_path):
    """Without the rules that read numbers, the same design diagnoses, and its pass-rate
    estimates are unbiased under every scenario."""
    root = project_of(tmp_path, TOOLS, edits=[(tools_span("  - id: h3\n", "constants:\n"), "")])
    assert main(["--project", str(root), "compile"]) == 0
    out = root / "DIAGNOSE.json"
    args = ["--simulations", 100, "--seed", 1, "--out", out, "--quiet"]
    assert run(root, TOOLS, "diagnose", *args) == 0
    doc = json.loads(out.read_text())
    for condition in doc["conditions"]:
        for c in condition["contrasts"]:
            assert abs(c["bias"]) < 0.03, (condition["scenario"], c)
