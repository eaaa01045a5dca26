"""The s3 report shows what the plan records and the source makes a point of: whether the plan
is canonical (a development run "is marked canonical=false and cannot satisfy the S3 freeze
gate"), the final confirmatory bootstrap count it records, and per rung, beside the power, the
null successes (the study page: they show how far the cluster-t planning approximation is from
its nominal 2.5%), the null mean removed and the degrees of freedom of both bounds; skipped
rungs are listed. The plan below is written by hand; the expected cells follow from it."""

from __future__ import annotations

import json

from prereg.compiler.project import Project
from prereg.reports import Step, build_report, study_info
from prereg.reports.page import render_markdown
from tests.conftest import ROOT

PLAN = {
    "schemaVersion": "prereg-s3-power-plan/v2", "canonical": False, "amendmentVersion": "1.3",
    "status": "underpowered_full_universe", "reasons": [], "warnings": [],
    "selectedTaskCount": None, "skippedRungs": [50],
    "frozen": {"target_power": {"numerator": 9, "denominator": 10}, "seed": 20261011,
               "planning_method": "cluster-t-jackknife",
               "final_bootstrap_replicates_per_level": 10000},
    "calibration": {"tasks": 10, "repositories": 6, "recordsPerStratum": {}},
    "eligible": {"taskCount": 80, "repositoryCount": 60},
    "rungs": [
        {"taskCount": 75, "simulations": 200, "successes": 50, "power": 0.25, "mcSe": 0.0306,
         "degenerate": 3, "nullSuccesses": 7, "removedNullMean": -0.0012346,
         "dfRepository": 59, "dfTask": 74},
    ],
}  # fmt: skip


def test_the_plan_section_shows_canonical_bootstrap_null_successes_and_skipped_rungs(tmp_path):
    out = tmp_path / "power_plan.json"
    out.write_text(json.dumps(PLAN))
    args = ["power-plan", "cal.jsonl", "--out", str(out)]
    info = study_info(Project(ROOT), "s3-verifier-freeze")
    report = build_report(info, tmp_path, [Step("plan", "power-plan", args, args, 0, True)])
    md = render_markdown(report)
    assert report.status.startswith("power plan underpowered_full_universe: no task count")
    assert "not canonical" in report.status
    assert "NO: a development plan, which cannot authorize a freeze" in md
    assert "10,000 resamples per clustering level" in md
    header = next(x for x in md.splitlines() if x.startswith("| task count |"))
    assert "| null successes | removed null mean | df (repository, task) |" in header
    assert "| 75 | 0.25 | 0.0306 | 50 / 200 | 3 | 7 | -0.001235 | 59, 74 |" in md
    assert "skipped rungs (fewer tasks than eligible repositories): 50" in md
