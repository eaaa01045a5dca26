"""A plan over budget is refused (issue: dry-run reported EXCEEDED and exited 0, and prepare
went ahead): dry-run decides on the registered worst-case reservation (constant
hand-off-budget) against the allowance, the budget and the shared cap, exits 1 when it does
not fit, and prepare refuses with the registered code before writing anything."""

from __future__ import annotations

import json

from prereg.cli import main
from tests.conftest import compile_edited

OVER = (
    "worstCase: {calls: 11556, tokens: 19960000, usd: 1.706}",
    "worstCase: {calls: 11556, tokens: 24000001, usd: 1.706}",
)
SHARED = (
    "worstCase: {calls: 11556, tokens: 19960000, usd: 1.706}",
    "worstCase: {calls: 11556, tokens: 19960000, usd: 3.9}",
)


def _run(tmp_path, edits, *args):
    code, err, _ = compile_edited(tmp_path, "d17-multifact", edits)
    assert code == 0, err
    return main(["--project", str(tmp_path / "edited"), "d17-multifact", *args])


def test_the_registered_plan_fits_and_matches_the_source(capsys):
    assert main(["d17-multifact", "dry-run", "d17mf-public-demo", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    plan = doc["registeredPlan"]
    assert plan["within"] is True and plan["exceeded"] == []
    # the source: "That leaves 1,244 calls, 4.0M tokens and USD 2.29 of headroom"
    left = {k: plan["allowance"][k] - plan["worstCase"][k] for k in ("calls", "tokens", "usd")}
    assert left["calls"] == 1244 and left["tokens"] == 4_040_000 and round(left["usd"], 2) == 2.29


def test_dry_run_refuses_a_plan_over_the_allowance(tmp_path, capsys):
    assert _run(tmp_path, [OVER], "dry-run", "d17mf-public-demo") == 1
    out = capsys.readouterr().out
    assert "tokens: worst case 24,000,001; allowance 24,000,000" in out and "(EXCEEDED)" in out
    assert "plan within the allowance and the shared cap: no (refused)" in out


def test_prepare_refuses_a_plan_over_the_shared_cap_and_writes_nothing(tmp_path, capsys):
    # 8 - 0.892652 - 3.9 is positive, but 3.9 is within the 4.0 allowance: make the cap bind
    edits = [SHARED, ("{id: shared-cap-usd, value: 8,", "{id: shared-cap-usd, value: 4,")]
    out = tmp_path / "prepared"
    code = _run(tmp_path, edits, "prepare", "d17mf-public-demo", str(out))
    err = capsys.readouterr().err
    assert code == 2
    assert "budget-exceeded: the registered worst case exceeds sharedCap" in err
    assert not out.exists()


def test_a_worst_case_that_does_not_count_the_rows_is_refused_at_compile(tmp_path):
    code, err, line_of = compile_edited(
        tmp_path, "d17-multifact", [("worstCase: {calls: 11556,", "worstCase: {calls: 11000,")]
    )
    assert code != 0
    assert "is 11000, but the 5,778 registered rows × (1 + 1 retries) make 11,556 attempts" in err
    assert "hand-off-budget" in err and "d17-multifact.yaml:" in err
