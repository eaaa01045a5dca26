"""The power plan's status is the verdict of the registered rule (hypothesis
power-plan-status) over the engine's figures, decided by the shared evaluator; the engine's
own test (floors, first rung reaching the target) must agree or nothing is written.

The rule is read two ways: from the compiled configuration (what the engine uses,
``prereg.rules.condition``) and from the generated rules.py (what the template renders); both
must give the plan's status."""

from __future__ import annotations

import copy
import importlib
import json
from fractions import Fraction
from pathlib import Path

import pytest
from s3_study import CONFIG, MODULE

from prereg.engines.clusterpower import plan as plan_module
from prereg.engines.clusterpower.calibration_input import parse_calibration, read_calibration
from prereg.engines.clusterpower.config import plan_config
from prereg.engines.clusterpower.figures import (
    decided_status,
    plan_figures,
    report_figures,
    results,
)
from prereg.engines.clusterpower.plan import Eligible, RungResult, build_plan
from prereg.errors import UserError
from prereg.rules import AllOf, AnyOf, Compare, ForEach, Verdict

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "s3" / "calibration-sample.jsonl"
CFG = plan_config(CONFIG)
RULES = importlib.import_module(MODULE.__name__ + ".rules")


def generated_status(figures) -> str:
    """The status by the generated rules.py (the template's rendering of the same rule)."""
    return RULES.HYPOTHESES["power-plan-status"](results(figures))


def plan(cal, el, cfg=CFG, **kw):
    return build_plan(cfg, cal, el, spec_digest="sha256:" + "0" * 64, amendment_version="1.2", **kw)


def figures_of(p: dict, cal) -> dict:
    return report_figures(p, cal)


def calibration(repos: int, *, fail_repos: int | None = None):
    """Calibration statistics from ``repos`` repositories, two tasks each, every task with a
    pass statistic; only the first ``fail_repos`` repositories have fail statistics."""
    fail_repos = repos if fail_repos is None else fail_repos
    lines = []
    for r in range(repos):
        for t in range(2):
            for label in ("official-pass", "official-fail"):
                if label == "official-fail" and r >= fail_repos:
                    continue
                v = 0.05 * (r + 1) * (1 if t else -1) + (0.3 if label == "official-pass" else 0)
                lines.append(
                    json.dumps(
                        {
                            "stage": "calibration",
                            "repository_id": f"repo-{r}",
                            "task_id": f"repo-{r}-task-{t}",
                            "class_label": label,
                            "delta_logscore": v,
                        }
                    )
                )
    return parse_calibration(("\n".join(lines) + "\n").encode(), "cal.jsonl", CFG.input)


def test_the_compiled_rule_is_the_generated_one():
    d = CFG.status_decision
    assert d.hypothesis == "power-plan-status" and d.rule is None
    assert d.verdicts == RULES.POWER_PLAN_STATUS_VERDICTS
    assert isinstance(d.verdicts[0].when, AnyOf) and isinstance(d.verdicts[1].when, AnyOf)
    assert d.verdicts[-1] == Verdict("underpowered_full_universe", None)
    first = d.verdicts[0].when.conditions[0]
    assert isinstance(first, AllOf) and first.conditions[0] == Compare(
        "calibration-repositories", "estimate", "lt", 5.0
    )
    assert isinstance(d.verdicts[1].when.conditions[0], ForEach)


def test_the_demo_plan_status_is_the_rules_verdict():
    cal = read_calibration(SAMPLE, CFG.input)
    p = plan(cal, Eligible(500, 12, 210, 430), simulations=400)
    figs = figures_of(p, cal)
    assert p["status"] == CFG.status_decision.decide(results(figs)) == generated_status(figs)
    # each simulated rung is a figure: the ladder's rungs below N, then N as the full universe
    ladder = [r["taskCount"] for r in p["rungs"]]
    assert ladder == [50, 75, 100, 150, 200, 300, 500]
    assert figs["power-full-universe"] == Fraction(p["rungs"][-1]["successes"], 400)
    assert "power-rung-500" not in figs and figs["power-rung-50"] == Fraction(
        p["rungs"][0]["successes"], 400
    )
    first = next(
        (r["taskCount"] for r in p["rungs"] if Fraction(r["successes"], 400) >= Fraction(9, 10)),
        None,
    )
    assert p["status"] == ("powered" if first is not None else "underpowered_full_universe")
    assert p["selectedTaskCount"] == first


def _fixed_successes(monkeypatch, successes_by_n: dict[int, int]):
    """simulate_rung replaced by rungs with the given successes (others 0)."""

    def fake(tab, n, g, *, simulations, **kw):
        return RungResult(n, simulations, successes_by_n.get(n, 0), 0, 0, 0.0, g - 1, n - 1)

    monkeypatch.setattr(plan_module, "simulate_rung", fake)


@pytest.mark.parametrize(
    ("successes", "status", "selected"),
    [
        ({150: 9000}, "powered", 150),  # exactly 0.90: a tie reaches the target
        ({150: 8999}, "underpowered_full_universe", None),  # 0.8999 does not
        ({150: 8999, 500: 9000}, "powered", 500),  # the full universe itself reaches it
        ({100: 9001, 150: 9500}, "powered", 100),  # the first rung reaching it is selected
        ({}, "underpowered_full_universe", None),
    ],
)
def test_power_exactly_at_the_target_is_powered(monkeypatch, successes, status, selected):
    _fixed_successes(monkeypatch, successes)
    cal = read_calibration(SAMPLE, CFG.input)
    p = plan(cal, Eligible(500, 12, 210, 430), simulations=10000)
    assert (p["status"], p["selectedTaskCount"]) == (status, selected)
    assert generated_status(figures_of(p, cal)) == status


@pytest.mark.parametrize(
    ("repos", "fail_repos", "eligible", "status"),
    [
        # C = 4 < min(G 12, 5): too few calibration repositories
        (4, None, Eligible(100, 12, 50, 50), "infeasible"),
        # C = 4 = min(G 4, 5): enough (the floor is the smaller of G and 5)
        (4, None, Eligible(100, 4, 50, 50), "feasible"),
        # C = 5 with G = 12: enough
        (5, None, Eligible(100, 12, 50, 50), "feasible"),
        # the fail stratum from 1 repository, below 2
        (6, 1, Eligible(100, 6, 50, 50), "infeasible"),
        # the fail stratum from exactly 2 repositories: enough
        (6, 2, Eligible(100, 6, 50, 50), "feasible"),
        # 1 eligible repository, below 2
        (6, None, Eligible(100, 1, 50, 50), "infeasible"),
        # no eligible pass items, no eligible fail items
        (6, None, Eligible(100, 6, 0, 50), "infeasible"),
        (6, None, Eligible(100, 6, 50, 0), "infeasible"),
        # fewer eligible tasks than repositories; exactly as many is enough
        (6, None, Eligible(5, 6, 50, 50), "infeasible"),
        (6, None, Eligible(6, 6, 50, 50), "feasible"),
    ],
)
def test_feasibility_floors(repos, fail_repos, eligible, status):
    cal = calibration(repos, fail_repos=fail_repos)
    p = plan(cal, eligible, simulations=20)
    figs = figures_of(p, cal)
    assert generated_status(figs) == p["status"]
    if status == "infeasible":
        assert p["status"] == "infeasible" and p["reasons"] and p["rungs"] == []
    else:
        assert p["status"] != "infeasible" and p["reasons"] == []


def test_a_rule_disagreeing_with_the_constants_is_refused():
    # prereg compile refuses such a spec (test_s3_compile_checks); a configuration edited by
    # hand is refused when the plan is built, before anything is written
    cfg = copy.deepcopy(CONFIG)
    (rule,) = [h for h in cfg["decisions"] if h["id"] == "power-plan-status"]
    rule["verdicts"][1]["when"]["any_of"][1]["compare"]["value"] = 1.5
    rule["verdicts"][1]["when"]["any_of"][0]["for_each"]["condition"]["compare"]["value"] = 1.5
    cal = read_calibration(SAMPLE, CFG.input)
    el = Eligible(500, 12, 210, 430)
    assert plan(cal, el, simulations=400)["status"] == "powered"  # by the registered rule
    with pytest.raises(UserError, match="rule and constants disagree") as e:
        plan(cal, el, plan_config(cfg), simulations=400)
    assert "'power-plan-status' gives status 'underpowered_full_universe'" in e.value.message
    assert "constants (floors, ladder, target power) give 'powered'" in e.value.message


def test_decided_status_reads_missing_rungs_as_not_reaching_the_target():
    figs = plan_figures(
        calibration_repositories=12,
        pass_repositories=12,
        fail_repositories=12,
        eligible={"task_count": 40, "repository_count": 12, "pass_items": 1, "fail_items": 1},
        rungs=[{"task_count": 40, "successes": 3, "simulations": 4}],
    )
    # N = 40 is below every ladder rung: only the full universe was simulated
    assert [k for k in figs if k.startswith("power-")] == ["power-full-universe"]
    assert decided_status(CFG, figs, "underpowered_full_universe") == "underpowered_full_universe"
