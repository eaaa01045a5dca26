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


def test_dry_run_names_the_usd_the_registered_tokens_cost_at_the_reservation_floor(capsys):
    """Source: "19.96M reserved tokens and USD 1.706 reserved, at the USD 0.10/1M reservation
    floor": the tokens at that floor cost USD 1.996. The plan stays decided on the registered
    1.706; dry-run says what the tokens cost at the floor and the headroom that would leave
    (allowance 4.0 − 1.996 = 2.004; cap 8 − floor 0.892652 − 1.996 = 5.111348)."""
    assert main(["d17-multifact", "dry-run", "d17mf-public-demo"]) == 0
    out = capsys.readouterr().out
    assert (
        "  usd at the reservation floor: 19,960,000 tokens × 0.1 per 1M = 1.996, not the"
        " registered 1.706 (the plan is decided on the registered figure; at 1.996 the headroom"
        " would be 2.004 and the shared cap 5.111348 left: ok)" in out
    )
    assert "plan within the allowance and the shared cap: yes" in out
    assert main(["d17-multifact", "dry-run", "d17mf-public-demo", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["registeredPlan"]
    assert plan["usdAtReservationFloor"] == 1.996 and plan["worstCase"]["usd"] == 1.706


def test_no_floor_line_when_the_registered_usd_is_the_tokens_at_the_floor(tmp_path, capsys):
    """A worst case whose USD is its tokens at the reservation floor (19.96M × 0.1 = 1.996)
    has nothing to explain; and a floor price that would break the plan says so, while the
    decision stays on the registered figure."""
    agree = ("worstCase: {calls: 11556, tokens: 19960000, usd: 1.706}",
             "worstCase: {calls: 11556, tokens: 19960000, usd: 1.996}")  # fmt: skip
    assert _run(tmp_path, [agree], "dry-run", "d17mf-public-demo") == 0
    assert "usd at the reservation floor" not in capsys.readouterr().out
    # at USD 0.25 per million, 19.96M tokens cost 4.99: over the 4.0 allowance
    price = ("value: 0.1\n", "value: 0.25\n")
    assert _run(tmp_path / "b", [price], "dry-run", "d17mf-public-demo") == 0
    out = capsys.readouterr().out
    assert "= 4.99, not the registered 1.706" in out and "would be -0.99" in out
    assert "left: EXCEEDED)" in out
    assert "plan within the allowance and the shared cap: yes" in out
