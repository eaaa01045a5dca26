"""``prereg s3-verifier-freeze diagnose``: the power plan's cohorts at each task count of the
ladder, against an independent simulation written here; the plan's own figures at the frozen
seed; bytes independent of --workers; --vary/--target; located refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from prereg.diagnose.redesign import confirmation_seed

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "tests" / "fixtures" / "s3" / "calibration-sample.jsonl"
STUDY = "s3-verifier-freeze"
DELTA = 0.09531017980432487  # the registered smallest effect, log(1.10)
TARGET = 0.9  # the registered target power 9/10
LEVEL = 0.95  # the registered two-sided level of both planning bounds


def run(tmp_path: Path, *more: str, name: str = "D.json", n=100, g=8, p=400, f=600) -> int:
    argv = [
        "--project",
        str(ROOT),
        STUDY,
        "diagnose",
        str(SAMPLE),
        "--eligible-task-count",
        str(n),
        "--eligible-repository-count",
        str(g),
        "--eligible-pass-items",
        str(p),
        "--eligible-fail-items",
        str(f),
        "--out",
        str(tmp_path / name),
        "--quiet",
        *more,
    ]
    return main(argv)


def doc(tmp_path: Path, name: str = "D.json") -> dict:
    return json.loads((tmp_path / name).read_text("utf-8"))


def share(d: dict, scenario: str) -> dict:
    (c,) = [c for c in d["conditions"] if c["scenario"] == scenario]
    (h,) = c["hypotheses"]
    return next(v for v in h["verdicts"] if v["verdict"] == "supported")


# -- the oracle: the planning procedure as the spec's sampling plan states it ------------------


def profiles():
    """Repositories sorted, tasks sorted in each; per task its pass and fail statistic (NaN
    where it has none)."""
    rows = [json.loads(x) for x in SAMPLE.read_text("utf-8").splitlines()]
    repos: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        t = repos.setdefault(r["repository_id"], {}).setdefault(r["task_id"], [math.nan, math.nan])
        t[0 if r["class_label"] == "official-pass" else 1] = r["delta_logscore"]
    out = []
    for repo in sorted(repos):
        out.append(np.array([repos[repo][t] for t in sorted(repos[repo])], dtype=float))
    return out


def estimate(x: np.ndarray, wp: float, wf: float) -> float:
    """w_pass·mean(pass statistics) + w_fail·mean(fail statistics); NaN with < 1 of either."""
    px, fx = x[:, 0][~np.isnan(x[:, 0])], x[:, 1][~np.isnan(x[:, 1])]
    if not px.size or not fx.size:
        return math.nan
    return wp * px.mean() + wf * fx.mean()


def jackknife(loo: list[float]) -> float:
    a = np.array(loo)
    if np.isnan(a).any():
        return math.nan
    k = a.size
    return math.sqrt((k - 1) / k * ((a - a.mean()) ** 2).sum())


def leave_one_out_means(col: np.ndarray) -> np.ndarray:
    """Per row i, the mean of the column's statistics without row i (NaN: none): the sum less
    row i's statistic over the count less one where row i has one, else the whole mean; the
    task-level jackknife's estimates, ``estimate(np.delete(slots, i, axis=0))``, at once."""
    has = ~np.isnan(col)
    return (col[has].sum() - np.where(has, col, 0.0)) / (has.sum() - has)


def oracle(n: int, g: int, p: int, f: int, sims: int, seed: int) -> tuple[int, int]:
    """(successes with the smallest effect, successes with none) over ``sims`` cohorts."""
    profs = profiles()
    rng = np.random.default_rng(seed)
    wp, wf = p / (p + f), f / (p + f)
    thetas, ses = [], []
    for _ in range(sims):
        drawn = rng.integers(0, len(profs), size=g)
        m = [len(profs[c]) for c in drawn]
        total, extra = sum(m), n - g
        alloc = [1 + extra * mi // total for mi in m]
        rem = [extra * mi % total for mi in m]
        left = n - sum(alloc)
        for j in sorted(range(g), key=lambda j: (-rem[j], j))[:left]:
            alloc[j] += 1
        clusters = []
        for c, a in zip(drawn, alloc, strict=True):
            prof = profs[c]
            clusters.append(prof[(rng.random(a) * len(prof)).astype(int)])
        slots = np.concatenate(clusters)
        theta = estimate(slots, wp, wf)
        if (
            (~np.isnan(slots[:, 0])).sum() < 2
            or (~np.isnan(slots[:, 1])).sum() < 2
            or math.isnan(theta)
        ):
            thetas.append(math.nan)
            ses.append((math.nan, math.nan))
            continue
        se_r = jackknife(
            [estimate(np.concatenate(clusters[:j] + clusters[j + 1 :]), wp, wf) for j in range(g)]
        )
        se_t = jackknife(
            list(wp * leave_one_out_means(slots[:, 0]) + wf * leave_one_out_means(slots[:, 1]))
        )
        thetas.append(theta)
        ses.append((se_r, se_t))
    t0 = np.array(thetas)
    ok = ~np.isnan(t0) & ~np.isnan(np.array(ses)).any(axis=1)
    centred = t0 - t0[ok].mean()
    tr = stats.t.ppf(1 - (1 - LEVEL) / 2, g - 1)
    tt = stats.t.ppf(1 - (1 - LEVEL) / 2, n - 1)
    se = np.array(ses)
    counts = []
    for d in (DELTA, 0.0):
        th = centred + d
        with np.errstate(invalid="ignore"):
            hit = ok & (th - tr * se[:, 0] > 0) & (th - tt * se[:, 1] > 0)
        counts.append(int(hit.sum()))
    return counts[0], counts[1]


@pytest.mark.parametrize("n", [50, 100])
def test_power_and_false_positives_agree_with_an_independent_simulation(tmp_path, n):
    sims = 1500
    assert run(tmp_path, "--simulations", str(sims), "--seed", "11", n=100, g=8) == 0
    d = doc(tmp_path)
    got = {
        "smallest-effect": share(d, f"smallest-effect at {n} tasks"),
        "no-effect": share(d, f"no-effect at {n} tasks"),
    }
    want = dict(
        zip(("smallest-effect", "no-effect"), oracle(n, 8, 400, 600, sims, 2024), strict=True)
    )
    for sid in got:
        a, b = got[sid]["count"] / sims, want[sid] / sims
        se = math.sqrt(a * (1 - a) / sims + b * (1 - b) / sims)
        assert abs(a - b) <= 4 * se, (sid, n, a, b, se)
    # the figures are not trivial: the effect is seen far more often than no effect
    assert got["smallest-effect"]["share"] > 3 * got["no-effect"]["share"]


def test_at_the_frozen_seed_each_rung_is_the_plan_s_own(tmp_path):
    """diagnose runs the power plan's simulation: with the frozen seed and the plan's number
    of cohorts it finds the plan's successes at every rung, and its status and decision."""
    sims = "300"
    args = ["--eligible-task-count", "120", "--eligible-repository-count", "8"]
    args += ["--eligible-pass-items", "400", "--eligible-fail-items", "600"]
    plan = tmp_path / "plan.json"
    assert main(["--project", str(ROOT), STUDY, "power-plan", str(SAMPLE), *args,
                 "--out", str(plan), "--simulations", sims, "--quiet"]) == 0  # fmt: skip
    p = json.loads(plan.read_text("utf-8"))
    assert run(tmp_path, "--simulations", sims, "--seed", "20261011", n=120, g=8) == 0
    d = doc(tmp_path)
    for rung in p["rungs"]:
        got = share(d, f"smallest-effect at {rung['taskCount']} tasks")
        assert got["count"] == rung["successes"]
        nul = share(d, f"no-effect at {rung['taskCount']} tasks")
        assert nul["count"] == rung["nullSuccesses"]
    (claim,) = d["claims"]
    assert claim["details"]["status"] == p["status"]
    assert claim["details"]["selectedTaskCount"] == p["selectedTaskCount"]
    assert claim["holds"] == (p["status"] == "powered")
    assert [c["scenario"] for c in d["conditions"]][:2] == [
        "smallest-effect at 50 tasks",
        "no-effect at 50 tasks",
    ]


def test_decision_by_the_registered_rules(tmp_path):
    """Underpowered at a small universe (the registered 'otherwise' outcome), powered at a
    large one: the claim and the decision follow the diagnosed powers."""
    assert run(tmp_path, "--simulations", "200", "--seed", "3", n=30, g=8, name="a.json") == 0
    small = doc(tmp_path, "a.json")["claims"][0]
    assert small["figure"] < TARGET and not small["holds"]
    assert small["details"]["decision"] == "descriptive-only"
    assert small["details"]["status"] == "underpowered_full_universe"
    assert run(tmp_path, "--simulations", "200", "--seed", "3", n=500, g=12, name="b.json") == 0
    big = doc(tmp_path, "b.json")["claims"][0]
    assert big["holds"] and big["figure"] >= TARGET
    assert big["details"]["decision"] == "run-at-selected-task-count"
    sel = big["details"]["selectedTaskCount"]
    assert f"decision run-at-selected-task-count at {sel} tasks" in big["claim"]
    md = (tmp_path / "b.md").read_text("utf-8")
    assert f"decision run-at-selected-task-count at {sel} tasks" in md
    d = doc(tmp_path, "b.json")
    # the first rung reaching the target is selected; every earlier one is below it
    for c in d["conditions"]:
        n = int(c["scenario"].split(" at ")[1].split()[0])
        if c["scenario"].startswith("smallest-effect") and n < sel:
            assert share(d, c["scenario"])["share"] < TARGET


def test_bytes_do_not_depend_on_workers(tmp_path):
    more = ["--simulations", "300", "--seed", "9", "--vary", "tasks=20,60,100", "--target"]
    assert run(tmp_path, *more, name="one.json") == 0
    assert run(tmp_path, *more, "--workers", "2", name="two.json") == 0
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    assert (tmp_path / "one.md").read_bytes() == (tmp_path / "two.md").read_bytes()
    d = doc(tmp_path, "one.json")
    assert d["designDigest"].startswith("sha256:")


def test_vary_and_target(tmp_path):
    sims = 400
    assert run(tmp_path, "--simulations", str(sims), "--seed", "4",
               "--vary", "tasks=10,50,200,400", "--target", n=400, g=8) == 0  # fmt: skip
    d = doc(tmp_path)
    red = d["redesign"]
    assert red["parameter"] == "tasks" and red["values"] == [10, 50, 200, 400]
    figures = {}
    for pt in red["points"]:
        (c,) = pt["claims"]
        assert pt["rows"] == pt["value"] and pt["seed"] == 4
        k = round(c["figure"] * sims)
        assert c["holds"] == (10 * k >= 9 * sims) == pt["allHold"]
        figures[pt["value"]] = c["figure"]
        # common random numbers: a value on the ladder is that rung's figure
        if pt["value"] in (50, 200, 400):
            assert c["figure"] == share(d, f"smallest-effect at {pt['value']} tasks")["share"]
    assert figures[10] < figures[50] < figures[400]
    meeting = [v for v in red["values"] if figures[v] >= TARGET]
    t = red["target"]
    assert t["value"] == (min(meeting) if meeting else None)
    if meeting:
        assert t["confirmation"]["seed"] == confirmation_seed(4)
        assert t["confirmation"]["value"] == t["value"]
    md = (tmp_path / "D.md").read_text("utf-8")
    assert "## Redesign: `tasks`" in md


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (["--vary", "tasks=4,50"], "4 is outside 8..100"),
        (["--vary", "tasks=50,101"], "101 is outside 8..100"),
        (["--vary", "rows=50"], "'rows' cannot be varied here; the registered size is tasks"),
        (["--vary", "tasks=50,50"], "50 is listed twice"),
        (["--vary", "tasks=5x"], "'5x' is not a whole number"),
        (["--target"], "--target: needs --vary"),
        (["--scenario", "huge-effect"], "--scenario 'huge-effect': not a registered scenario"),
        (["--workers", "0"], "--workers: must be an integer ≥ 1"),
        (["--scheduler", "no-port"], "--scheduler"),
    ],
)
def test_bad_options_are_refused_with_their_name(tmp_path, capsys, more, said):
    assert run(tmp_path, "--simulations", "10", "--seed", "1", *more) == 2
    assert said in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_an_infeasible_plan_is_refused_with_its_reasons(tmp_path, capsys):
    assert run(tmp_path, "--simulations", "10", "--seed", "1", n=100, g=1) == 2
    err = capsys.readouterr().err
    assert "infeasible" in err and "too_few_eligible_repositories" in err
    assert not list(tmp_path.iterdir())


def test_an_existing_output_is_not_overwritten(tmp_path, capsys):
    (tmp_path / "D.md").write_text("mine\n")
    assert run(tmp_path, "--simulations", "10", "--seed", "1") == 2
    assert "D.md" in capsys.readouterr().err
    assert (tmp_path / "D.md").read_text() == "mine\n"
    assert not (tmp_path / "D.json").exists()


def test_one_scenario_asked(tmp_path):
    """--scenario no-effect: only the false-positive conditions (the claim still reads the
    powers, simulated on the same draws)."""
    assert run(tmp_path, "--simulations", "100", "--seed", "2", "--scenario", "no-effect") == 0
    d = doc(tmp_path)
    assert d["requested"] == ["no-effect"]
    assert [c["scenario"] for c in d["conditions"]] == [
        "no-effect at 50 tasks",
        "no-effect at 75 tasks",
        "no-effect at 100 tasks",
    ]
    assert all(c["effect"] == 0 for c in d["conditions"])
    assert d["claims"][0]["figure"] is not None
