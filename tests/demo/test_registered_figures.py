"""Every figure a shipped study registers is reported, with its value, in what the demo shows
a reader: SCORE.md and the report page's Markdown twin (d17: every metric per cell, the gate,
every expanded estimate and contrast with its estimate, interval, P and adjusted P; every
sizing claim with its checked figure in DIAGNOSE.md and the report), the study figures of s3
and jev in the report's table of them, and jev's registered metrics beside the figures that
report them.

The lists are read from each study's compiled modules and spec (generated/<study>/rules.py,
the compiled spec): a figure a spec adds is checked without editing this file. A value is
checked against its JSON output to the digits shown (a shown decimal within half a unit of
its last digit of the value), so a row that went missing, or showed another figure, fails.
Only what comes before the report's "What ran" section counts: the registered PREREG.md
rendered below it names every id too."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from prereg.compiler.project import Project
from prereg.reports import study_info

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"^−?-?(\d[\d,]*(\.\d+)?(e[-+]\d+)?|\.\d+)$")


def rules_of(study: str):
    """The study's compiled rules module (generated/<study>/rules.py)."""
    from prereg.engines.reachability.score_commands import rules_module
    from prereg.study import study_context

    module, _ = study_context(Project(ROOT), study)
    return rules_module(module)


def body(path: Path) -> str:
    """A report's Markdown before its steps and registration (which name every id)."""
    text = path.read_text(encoding="utf-8")
    assert "\n## What ran" in text, path
    return text.split("\n## What ran", 1)[0]


def cells(line: str) -> list[str]:
    """A Markdown table row's cells (an escaped bar stays in its cell), code marks dropped."""
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip().strip("`") for p in parts]


def row(text: str, first: str, at: int = 0) -> list[str]:
    """The one table row whose cell ``at`` is ``first``, from that cell on."""
    rows = [cells(line) for line in text.splitlines() if line.startswith("|")]
    found = [r[at:] for r in rows if len(r) > at and r[at] == first]
    assert len(found) == 1, (first, len(found))
    return found[0]


def figure_row(text: str, fid: str) -> list[str]:
    """The row of an estimate or contrast (its id in the first cell of SCORE.md's tables, in
    the second of the report's, after its hypothesis) from the id on."""
    rows = [cells(line) for line in text.splitlines() if line.startswith("|")]
    found = [r[r.index(fid) :] for r in rows if fid in r[:2]]
    assert len(found) == 1, (fid, len(found))
    return found[0]


def shows(text: str, value: float) -> bool:
    """Whether the decimal ``text`` shows ``value`` to its digits: within half a unit of its
    last digit (relative to its significant digits when written with an exponent)."""
    text = text.replace(",", "").replace("−", "-")
    assert NUMBER.match(text.lstrip("-")), text
    shown = Decimal(text)
    exponent = shown.as_tuple().exponent
    half = Decimal(5) * Decimal(10) ** (exponent - 1)
    return abs(shown - Decimal(repr(float(value)))) <= half


def interval(text: str) -> tuple[str, str]:
    m = re.fullmatch(r"\[(\S+), (\S+)\]", text)
    assert m, text
    return m.group(1), m.group(2)


@pytest.fixture(scope="module")
def d17(runs):
    out = runs[0] / "d17-multifact"
    return {
        "score": json.loads((out / "SCORE.json").read_text()),
        "score_md": (out / "SCORE.md").read_text(),
        "report": body(out / "report.md"),
        "diagnose": json.loads((out / "DIAGNOSE.json").read_text()),
        "diagnose_md": (out / "DIAGNOSE.md").read_text(),
    }


def test_every_registered_estimate_and_contrast_is_reported_with_its_figures(d17):
    """Each expanded estimate and contrast of d17's compiled rules has one row in SCORE.md and
    one in the report, each showing its estimate, both bounds of its interval and, for a
    contrast with a test, its P and adjusted P, as SCORE.json has them."""
    rules = rules_of("d17-multifact")
    reported = {x["id"]: x for x in d17["score"]["estimates"] + d17["score"]["contrasts"]}
    registered = [e.id for e in rules.ESTIMATES] + [c.id for c in rules.CONTRASTS]
    assert len(registered) == 13 + 75 and set(registered) == set(reported)
    tested = {c.id for c in rules.CONTRASTS if c.test not in (None, "none")}
    assert tested  # h1 and h4 register pooled-z tests
    for fid in registered:
        figure = reported[fid]
        for text in (d17["score_md"], d17["report"]):
            r = figure_row(text, fid)
            # the estimate stands just before its interval
            est = next(i for i, c in enumerate(r) if c.startswith("[")) - 1
            assert shows(r[est], figure["estimate"]), (fid, r)
            lower, upper = interval(r[est + 1])
            assert shows(lower, figure["lower"]) and shows(upper, figure["upper"]), (fid, r)
            if fid in tested:
                assert shows(r[est + 2], figure["p"]), (fid, r)
                if figure["adjustedP"] is None:  # a test in no family (h4-unmatched-*)
                    assert r[est + 3] == "–" and figure.get("family") is None, (fid, r)
                else:
                    assert shows(r[est + 3], figure["adjustedP"]), (fid, r)
            elif fid in {c.id for c in rules.CONTRASTS}:
                assert r[est + 2 :] == ["–", "–"], (fid, r)


def test_every_registered_metric_and_gate_is_reported_per_cell(d17):
    """Each registered metric of d17 heads a column of SCORE.md's cell table or a section of
    its own (auroc), and of the report's; each test cell's row shows its coverage, the figure
    the registered gate reads; the gate is reported with its outcome in both."""
    info = study_info(Project(ROOT), "d17-multifact")
    metrics = [str(m["id"]) for m in info.spec["metrics"]]
    assert "coverage" in metrics and "auroc" in metrics
    md, report = d17["score_md"], d17["report"]
    header = cells(next(line for line in md.splitlines() if line.startswith("| cell |")))
    report_headers = [
        cells(line)
        for line in report.splitlines()
        if line.startswith("| cell |") or line.startswith("| group |")
    ]
    for metric in metrics:
        in_md = any(h.split(" (")[0] == metric for h in header) or f"## {metric} (" in md
        in_report = any(h.split(" (")[0] == metric for hs in report_headers for h in hs) or (
            f"### {metric} (" in report
        )
        assert in_md and in_report, metric
    position = [h.split(" (")[0] for h in header].index("coverage")
    for cell in d17["score"]["cells"]:
        r = row(md, cell["cell"])
        assert shows(r[position], cell["metrics"]["coverage"]), r
        # its accuracy row and its calibration row
        assert sum(line.startswith(f"| `{cell['cell']}` |") for line in report.splitlines()) == 2
    rules = rules_of("d17-multifact")
    for gate in rules.GATES:
        (done,) = [g for g in d17["score"]["gates"] if g["id"] == gate.id]
        outcome = "passed" if done["passed"] else "failed"
        assert f"- {gate.id}: {gate.metric} {gate.op} {gate.value:g}: {outcome}" in md
        assert row(report, gate.id)[-1] == outcome


def test_every_registered_sizing_claim_is_reported_with_its_figure(d17):
    """Each sizing claim the spec registers has its checked figure in DIAGNOSE.md and in the
    report's section of the diagnosis, as DIAGNOSE.json has it."""
    info = study_info(Project(ROOT), "d17-multifact")
    claims = [str(c["id"]) for c in info.spec.get("claims") or []]
    assert len(claims) == 7
    checked = {c["id"]: c for c in d17["diagnose"]["claims"]}
    assert set(checked) == set(claims)
    for cid in claims:
        figure = checked[cid]["figure"]
        (md_row,) = [
            cells(line)
            for line in d17["diagnose_md"].splitlines()
            if line.startswith(f"| `{cid}`:")
        ]
        report_row = row(d17["report"], cid)
        for shown in (md_row[1], report_row[2]):
            assert shows(shown.split(" ± ")[0], figure), (cid, shown)


@pytest.mark.parametrize("study", ["s3-verifier-freeze", "jev-multicorrect"])
def test_every_registered_study_figure_is_in_the_reports_table_of_them(runs, study):
    """Each study figure the spec registers has a row in the report's "Study figures" table,
    with its title and unit; the rows are the registered figures, in registered order."""
    info = study_info(Project(ROOT), study)
    declared = [f for f in info.spec.get("figures") or []]
    assert declared
    report = body(runs[0] / study / "report.md")
    table = report.split("### Study figures", 1)[1].split("\n## ", 1)[0]
    rows = [cells(line) for line in table.splitlines() if line.startswith("| `")]
    assert [r[0] for r in rows] == [str(f["id"]) for f in declared]
    for f, r in zip(declared, rows, strict=True):
        assert r[1] == str(f.get("title") or "") and r[3] == str(f.get("unit") or ""), r
        assert r[2], r


def test_s3_study_figures_show_the_plans_values(runs):
    """s3's power rungs in the table are the plan's successes over simulations (the written
    plan's JSON), each rung the plan simulated below the eligible task count."""
    out = runs[0] / "s3-verifier-freeze"
    plans = [json.loads(p.read_text()) for p in out.rglob("power_plan.json")]
    assert plans
    plan = plans[0]
    report = body(out / "report.md")
    eligible = plan["eligible"]["taskCount"]
    rungs = [r for r in plan["rungs"] if r["taskCount"] < eligible]
    assert rungs
    for rung in rungs:
        r = row(report, f"power-rung-{rung['taskCount']}")
        assert shows(r[2].split(" (")[0], rung["successes"] / rung["simulations"]), r


def test_every_registered_jev_metric_is_named_beside_the_figure_that_reports_it(runs):
    """jev's registered metrics are computed by its engine under names of its own; the report
    names the registered metric beside each figure (the split table's metric column, the ECE
    lines of the score), so each one can be found, with its value as REPORT.json has it."""
    info = study_info(Project(ROOT), "jev-multicorrect")
    metrics = [str(m["id"]) for m in info.spec["metrics"]]
    out = runs[0] / "jev-multicorrect"
    doc = json.loads((out / "REPORT.json").read_text())
    report = body(out / "report.md")
    rows = [cells(line) for line in report.splitlines() if line.startswith("|")]
    by_metric = {r[5]: r for r in rows if len(r) == 6 and r[5] not in ("–", "metric")}
    evaluate, fit = doc["evaluateSplit"], doc["fitSplit"]
    for metric in metrics:
        if metric in by_metric:
            r = by_metric[metric]
            key = r[4]
            assert shows(r[2], doc["splits"][fit][key]), r
            assert shows(r[3], doc["splits"][evaluate][key]), r
        else:
            line = next(
                (ln for ln in report.splitlines() if re.search(rf", metric {metric}: ", ln)), None
            )
            assert line is not None, f"registered metric {metric} is not named in the report"


@pytest.mark.parametrize(
    "study", ["d17-multifact", "s3-verifier-freeze", "jev-multicorrect", "answer-position"]
)
def test_no_verdict_row_leaves_a_cell_blank(runs, study):
    """A reported-only hypothesis registers no rule and reads no figure: its row says so (a
    blank "registered rule" read as a rule that went missing)."""
    report = body(runs[0] / study / "report.md")
    rows = [cells(line) for line in report.splitlines() if line.startswith("| [")]
    assert rows
    for r in rows:
        assert all(c for c in r), r


def test_jev_study_figures_show_each_contracts_share_of_seeds(runs):
    """jev's held-<contract> figures in the table are each contract's share of the diagnostic
    seeds on which it held (diagnostic.json), counted here by hand."""
    out = runs[0] / "jev-multicorrect"
    diag = json.loads((out / "diagnostic.json").read_text())
    report = body(out / "report.md")
    contracts = {c["contract"] for s in diag["seeds"] for c in s["contracts"]}
    assert len(contracts) == 8
    for contract in sorted(contracts):
        held = sum(
            c["passed"] for s in diag["seeds"] for c in s["contracts"] if c["contract"] == contract
        )
        r = row(report, f"held-{contract}")
        assert shows(r[2], held / len(diag["seeds"])), r
