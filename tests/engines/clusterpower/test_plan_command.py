"""The power_plan command end to end: output bytes, statuses, exit codes, canonical flag."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest
import rfc8785
from s3_study import CONFIG, CONSTANTS, context

from prereg.engines.clusterpower import COMMANDS
from prereg.errors import UserError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "s3"
SAMPLE = FIX / "calibration-sample.jsonl"
DIGEST = "sha256:" + "ab" * 32
PLAN_KEYS = {
    "schemaVersion",
    "canonical",
    "status",
    "reasons",
    "specDigest",
    "amendmentVersion",
    "frozen",
    "eligible",
    "calibration",
    "skippedRungs",
    "rungs",
    "selectedTaskCount",
    "warnings",
    "numpyVersion",
    "selfSha256",
}
RUNG_KEYS = {
    "taskCount",
    "simulations",
    "successes",
    "power",
    "mcSe",
    "degenerate",
    "nullSuccesses",
    "removedNullMean",
    "dfRepository",
    "dfTask",
}

power_plan = COMMANDS["power_plan"]


def ctx(config=CONFIG):
    return context(config, DIGEST, "v1.2")


def run(
    tmp_path,
    name="plan.json",
    calibration=SAMPLE,
    n=500,
    g=12,
    p=210,
    f=430,
    sims=None,
    config=CONFIG,
):
    out = tmp_path / name
    args = Namespace(
        calibration=str(calibration),
        eligible_task_count=n,
        eligible_repository_count=g,
        eligible_pass_items=p,
        eligible_fail_items=f,
        out=str(out),
        simulations=sims,
    )
    code = power_plan(ctx(config), args)
    return code, out


def load(out: Path) -> dict:
    data = out.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    obj = json.loads(data)
    assert rfc8785.dumps(obj) + b"\n" == data  # RFC 8785 canonical bytes plus a newline
    body = {k: v for k, v in obj.items() if k != "selfSha256"}
    assert obj["selfSha256"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    return obj


def write_cal(tmp_path, recs, name="cal.jsonl") -> Path:
    p = tmp_path / name
    p.write_text(
        "".join(
            json.dumps(
                {
                    "stage": "calibration",
                    "repository_id": r,
                    "task_id": t,
                    "class_label": lab,
                    "delta_logscore": v,
                }
            )
            + "\n"
            for r, t, lab, v in recs
        )
    )
    return p


def test_two_runs_are_byte_identical_and_fields_are_complete(tmp_path, capsys):
    code1, a = run(tmp_path, "a.json", sims=300)
    code2, b = run(tmp_path, "b.json", sims=300)
    assert code1 == code2 == 0
    assert a.read_bytes() == b.read_bytes()
    plan = load(a)
    assert set(plan) == PLAN_KEYS
    assert plan["schemaVersion"] == CONSTANTS["power_plan"]["schema"]
    assert plan["specDigest"] == DIGEST and plan["amendmentVersion"] == "v1.2"
    assert plan["eligible"] == {
        "taskCount": 500,
        "repositoryCount": 12,
        "passItems": 210,
        "failItems": 430,
    }
    data = SAMPLE.read_bytes()
    cal = plan["calibration"]
    assert cal["bytes"] == len(data)
    assert cal["calibrationSha256"] == hashlib.sha256(data).hexdigest()
    recs = [json.loads(x) for x in data.splitlines()]
    assert cal["recordsPerStratum"] == {
        "official-pass": sum(r["class_label"] == "official-pass" for r in recs),
        "official-fail": sum(r["class_label"] == "official-fail" for r in recs),
    }
    assert cal["repositories"] == 12 and cal["tasks"] == 150
    tasks = {}
    for r in recs:
        tasks.setdefault(r["task_id"], set()).add(r["class_label"])
    assert cal["tasksWithBothStrata"] == sum(len(v) == 2 for v in tasks.values())
    assert all(set(r) == RUNG_KEYS for r in plan["rungs"])
    assert [r["dfTask"] for r in plan["rungs"]] == [
        n - 1 for n in (50, 75, 100, 150, 200, 300, 500)
    ]
    assert {r["dfRepository"] for r in plan["rungs"]} == {11}
    assert plan["warnings"] == [] and plan["reasons"] == [] and plan["skippedRungs"] == []
    import numpy

    assert plan["numpyVersion"] == numpy.__version__
    # stderr is not a terminal under pytest: no progress output
    assert capsys.readouterr().err == ""


def test_canonical_only_without_the_development_knob(tmp_path):
    code, out = run(tmp_path, "canon.json", n=60)  # rungs 50 and 60: cheap at 10,000 cohorts
    plan = load(out)
    assert code == 0 and plan["canonical"] is True
    assert plan["frozen"] == CONSTANTS["frozen"]
    assert [r["simulations"] for r in plan["rungs"]] == [10000, 10000]
    assert plan["status"] == "underpowered_full_universe" and plan["selectedTaskCount"] is None
    _, explicit = run(tmp_path, "explicit.json", n=60, sims=10000)
    e = load(explicit)
    assert e["canonical"] is False and e["frozen"] == CONSTANTS["frozen"]
    assert e["rungs"] == plan["rungs"]  # the same draws, only the flag differs
    _, small = run(tmp_path, "small.json", n=60, sims=250)
    s = load(small)
    assert s["canonical"] is False
    assert s["frozen"] == dict(CONSTANTS["frozen"], simulations_per_rung=250)
    assert [r["simulations"] for r in s["rungs"]] == [250, 250]


def test_powered(tmp_path, capsys):
    code, out = run(tmp_path, sims=1000)
    plan = load(out)
    assert code == 0 and plan["status"] == "powered"
    first = next(r for r in plan["rungs"] if 10 * r["successes"] >= 9 * r["simulations"])
    assert plan["selectedTaskCount"] == first["taskCount"]
    assert "status powered, selected task count" in capsys.readouterr().out


def test_skipped_rungs_are_listed(tmp_path):
    recs = [
        (f"r{r}", f"r{r}-{t}", lab, 0.01 * (r - t))
        for r in range(70)
        for t in range(2)
        for lab in ("official-pass", "official-fail")
    ]
    code, out = run(
        tmp_path, calibration=write_cal(tmp_path, recs), n=160, g=60, p=100, f=100, sims=50
    )
    plan = load(out)
    assert code == 0 and plan["skippedRungs"] == [50]
    assert [r["taskCount"] for r in plan["rungs"]] == [75, 100, 150, 160]


def test_warnings_are_carried(tmp_path):
    code, out = run(tmp_path, sims=50, n=100, p=20, f=20)
    plan = load(out)
    assert [w.split(":")[0] for w in plan["warnings"]] == ["stratum_share_exceeds_universe"] * 2
    # the class label is named as a label, whatever its first letter ("a official-pass" read
    # as broken English in every plan that carried the warning)
    for w, label in zip(plan["warnings"], ("official-pass", "official-fail"), strict=True):
        assert f"calibration tasks hold a statistic of class {label}, more than" in w


REASON_CASES = {
    "too_few_calibration_repositories": dict(g=12, recs="three_repos"),
    "stratum_in_too_few_calibration_repositories": dict(g=6, recs="pass_in_one_repo"),
    "too_few_eligible_repositories": dict(g=1, n=10),
    "no_eligible_items": dict(p=0),
    "fewer_eligible_tasks_than_repositories": dict(n=11, g=12),
}


def make_recs(kind):
    if kind == "three_repos":
        return [
            (f"r{r}", f"r{r}-{t}", lab, 0.1 * t)
            for r in range(3)
            for t in range(3)
            for lab in ("official-pass", "official-fail")
        ]
    return [("r0", "r0-0", "official-pass", 0.1), ("r0", "r0-1", "official-pass", 0.2)] + [
        (f"r{r}", f"r{r}-{t}", "official-fail", 0.1 * t) for r in range(6) for t in range(3)
    ]


@pytest.mark.parametrize("reason", sorted(REASON_CASES))
def test_each_infeasibility_reason_exits_3_and_writes_the_plan(tmp_path, reason, capsys):
    case = dict(REASON_CASES[reason])
    kind = case.pop("recs", None)
    cal = write_cal(tmp_path, make_recs(kind)) if kind else SAMPLE
    code, out = run(tmp_path, calibration=cal, sims=100, **case)
    plan = load(out)
    assert code == 3
    assert plan["status"] == "infeasible"
    assert [r.split(":")[0] for r in plan["reasons"]] == [reason]
    assert plan["rungs"] == [] and plan["selectedTaskCount"] is None
    assert f"reason: {reason}" in capsys.readouterr().out


def test_every_failing_reason_is_listed(tmp_path):
    code, out = run(
        tmp_path, calibration=write_cal(tmp_path, make_recs("three_repos")), n=0, g=1, p=0, f=0
    )
    plan = load(out)
    assert code == 3 and plan["canonical"] is True
    assert sorted(r.split(":")[0] for r in plan["reasons"]) == [
        "fewer_eligible_tasks_than_repositories",
        "no_eligible_items",
        "no_eligible_items",
        "too_few_eligible_repositories",
    ]
    code, out = run(
        tmp_path,
        "b.json",
        calibration=write_cal(tmp_path, make_recs("pass_in_one_repo"), "x.jsonl"),
        n=11,
        g=12,
        p=0,
    )
    assert sorted(r.split(":")[0] for r in load(out)["reasons"]) == [
        "fewer_eligible_tasks_than_repositories",
        "no_eligible_items",
        "stratum_in_too_few_calibration_repositories",
    ]


def test_bad_input_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(SAMPLE.read_bytes() + b'{"stage": "confirmatory"}\n')
    with pytest.raises(UserError) as e:
        run(tmp_path, calibration=bad, sims=10)
    assert e.value.exit_code == 2 and "confirmatory row refused" in "\n".join(e.value.problems)
    assert not (tmp_path / "plan.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]  # no temporary left


@pytest.mark.parametrize(
    ("field", "value"),
    [("n", -1), ("g", True), ("p", 1.5), ("f", "3"), ("sims", 0), ("sims", -5), ("sims", False)],
)
def test_bad_arguments_are_refused(tmp_path, field, value):
    with pytest.raises(UserError, match="must be an integer") as e:
        run(tmp_path, **{field: value})
    assert e.value.exit_code == 2
    assert not (tmp_path / "plan.json").exists()


def test_existing_output_is_never_overwritten(tmp_path):
    out = tmp_path / "plan.json"
    out.write_text("keep me")
    with pytest.raises(UserError, match="already exists"):
        run(tmp_path, sims=10)
    assert out.read_text() == "keep me"


def test_config_from_the_spec_drives_names(tmp_path):
    cfg = copy.deepcopy(CONFIG)
    cfg["constants"]["power_plan"]["statuses"]["infeasible"] = "not-feasible"
    cfg["constants"]["power_plan"]["schema"] = "example-plan/v9"
    # the registered status rule names its verdicts as the statuses (compile checks it)
    (status_rule,) = [h for h in cfg["decisions"] if h["id"] == "power-plan-status"]
    status_rule["verdicts"][0]["verdict"] = "not-feasible"
    code, out = run(tmp_path, g=1, config=cfg)
    plan = load(out)
    assert (
        code == 3
        and plan["status"] == "not-feasible"
        and plan["schemaVersion"] == "example-plan/v9"
    )


def test_example_generator_reproduces_the_bundled_sample(tmp_path):
    script = ROOT / "examples" / "s3" / "make_calibration.py"
    made = subprocess.run([sys.executable, str(script)], capture_output=True, check=True).stdout
    assert made == (ROOT / "examples" / "s3" / "calibration-sample.jsonl").read_bytes()
    assert made == SAMPLE.read_bytes()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_nothing_otherwise(tmp_path, monkeypatch):
    import prereg.console

    monkeypatch.setattr(prereg.console, "DELAY", 0.0)  # show it however fast the work is
    monkeypatch.setattr(prereg.console, "_rich_bar", lambda *a: None)  # the plain bar
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    run(tmp_path, "tty.json", n=120, sims=200)
    shown = term.getvalue()
    assert "\r\x1b[Kpower-plan [" in shown
    assert "800/800 cohorts rung 4/4 (n = 120)" in shown  # four rungs of 200 cohorts
    assert shown.endswith("\n")  # the bar's line is ended
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    run(tmp_path, "pipe.json", n=120, sims=200)
    assert pipe.getvalue() == ""  # a pipe or a file gets no progress
    assert (tmp_path / "tty.json").read_bytes() == (tmp_path / "pipe.json").read_bytes()


def test_the_command_loads_neither_scipy_nor_the_freeze(tmp_path):
    # the plan's t quantiles come from the table of stdtrit's values (prereg.stats.t_table),
    # and the freeze (its JSON Schema validation, its configuration's classes) is another
    # command's
    code = f"""
import json, sys
from prereg.cli import main
code = main(["s3-verifier-freeze", "power-plan", {str(SAMPLE)!r},
    "--eligible-task-count", "500", "--eligible-repository-count", "12",
    "--eligible-pass-items", "210", "--eligible-fail-items", "430",
    "--simulations", "20", "--out", {str(tmp_path / "p.json")!r}, "--quiet"])
loaded = [m for m in sys.modules
          if m.split(".")[0] in ("scipy", "jsonschema")
          or m.startswith(("prereg.engines.clusterpower.freeze",
                           "prereg.engines.clusterpower.config_freeze"))]
print(json.dumps([code, loaded]))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(proc.stdout.splitlines()[-1]) == [0, []]
    assert load(tmp_path / "p.json")["rungs"]
