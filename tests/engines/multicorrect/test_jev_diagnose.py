"""``prereg jev-multicorrect diagnose``: the registered diagnostic run many times under its
registered synthetic scenario, against an independent simulation of that scenario written
here (plain numpy: the lists, the threshold fitted on the fit split and frozen, the data
conditions contracts 1 and 2 need); bytes independent of --workers; --vary/--target; located
refusals."""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from prereg.cli import main
from prereg.diagnose.redesign import confirmation_seed

ROOT = Path(__file__).resolve().parents[3]
STUDY = "jev-multicorrect"


def registered():
    """The registered scenario (constant diagnostic) and seeds per run, as compiled."""
    sys.path.insert(0, str(ROOT / "generated"))
    try:
        c = importlib.import_module("jev_multicorrect.constants")
    finally:
        sys.path.remove(str(ROOT / "generated"))
    return c.DIAGNOSTIC, len(c.DIAGNOSTIC_SEEDS)


def run(tmp_path: Path, *more: str, name: str = "J.json") -> int:
    argv = ["--project", str(ROOT), STUDY, "diagnose", "--out", str(tmp_path / name), "--quiet"]
    return main([*argv, *more])


def doc(tmp_path: Path, name: str = "J.json") -> dict:
    return json.loads((tmp_path / name).read_text("utf-8"))


# -- the oracle -----------------------------------------------------------------------------


def oracle_seed(rng, d: dict, lists: int) -> dict:
    """One synthetic run with ``lists`` lists per split: the evaluate split's exact-set
    accuracy at the threshold fitted on the fit split (grid k/100, ties to the smallest), and
    whether the two data conditions of contracts 1 and 2 are met."""
    w = np.asarray(d["correct_count_weights"], float)
    w = w / w.sum()
    scale = d["weight_scale"]
    splits = []
    for _ in range(2):
        rows = []
        for _ in range(lists):
            m = int(rng.integers(d["candidates"]["min"], d["candidates"]["max"] + 1))
            g = min(int(np.searchsorted(np.cumsum(w), rng.random(), side="right")), m)
            order = rng.permutation(m)
            correct = set(order[:g].tolist())
            s = np.full(m, scale["distractor"])
            if g:
                s[order[1:g]] = scale["other_correct"]
                s[order[0]] = scale["dominant"]
            p = s * rng.random(m)
            p = p / p.sum()
            rows.append({"p": p, "G": correct, "refused": rng.random() < d["refusal_rate"]})
        splits.append(rows)
    fit, ev = splits
    empty_refused = sum(1 for r in fit + ev if r["refused"] and not r["G"])
    for r in fit:
        if empty_refused >= d["empty_refusals_min"]:
            break
        if not r["G"] and not r["refused"]:
            r["refused"] = True
            empty_refused += 1

    def exact(r, t) -> bool:
        if r["refused"]:
            return False
        chosen = {j for j, x in enumerate(r["p"]) if x >= t}
        return chosen == r["G"]

    # on the grid, a list's selection {j : p_j >= t} is its correct set exactly when every
    # distractor is below t and every correct option at or above it: lo < t <= hi
    grid = np.arange(101) / 100
    lo = np.array([max((x for j, x in enumerate(r["p"]) if j not in r["G"]), default=-1.0)
                   for r in fit])  # fmt: skip
    hi = np.array([min((r["p"][j] for j in r["G"]), default=2.0) for r in fit])
    hits = (lo[:, None] < grid) & (grid <= hi[:, None])
    hits &= ~np.array([r["refused"] for r in fit])[:, None]
    t = float(grid[int(np.argmax(hits.sum(axis=0)))])  # the first maximum: ties to the smallest
    ranked_not_recovered = below = 0
    for r in ev:
        g = len(r["G"])
        if r["refused"] or g < 2:
            continue
        pc = [r["p"][j] for j in r["G"]]
        pd = [x for j, x in enumerate(r["p"]) if j not in r["G"]]
        separated = min(pc) > (max(pd) if pd else -math.inf)
        if separated:
            ranked_not_recovered += not exact(r, t)
            below += sum(1 for x in pc if x < 1 / g)
    # contract 5 needs a refusal of a list with no correct option (after the forced ones);
    # contract 8 needs binary outputs in the first ECE bin and beyond it (q: the largest of
    # `positive` uniforms for a correct option, the smallest of `negative` for a distractor)
    n_correct = sum(len(r["G"]) for r in fit + ev)
    n_other = sum(len(r["p"]) for r in fit + ev) - n_correct
    q = np.concatenate(
        [
            rng.random((n_correct, d["binary_draws"]["positive"])).max(axis=1),
            rng.random((n_other, d["binary_draws"]["negative"])).min(axis=1),
        ]
    )
    return {
        "accuracy": sum(exact(r, t) for r in ev) / lists,
        "c1": ranked_not_recovered > 0,
        "c2": below > 0,
        "c5": any(r["refused"] and not r["G"] for r in fit + ev),
        "c8": q.min() <= 0.1 < q.max(),
    }


def oracle(lists: int, studies: int, seed: int) -> dict:
    d, per = registered()
    rng = np.random.default_rng(seed)
    runs = [[oracle_seed(rng, d, lists) for _ in range(per)] for _ in range(studies)]
    acc = np.array([s["accuracy"] for r in runs for s in r])
    conds = ("c1", "c2", "c5", "c8")
    return {
        "accuracy": acc,
        "c1_fails": sum(1 for r in runs if not all(s["c1"] for s in r)) / studies,
        "c2_fails": sum(1 for r in runs if not all(s["c2"] for s in r)) / studies,
        "passes": sum(1 for r in runs if all(s[c] for s in r for c in conds)) / studies,
    }


def near(a: float, b: float, n_a: int, n_b: int) -> bool:
    """|a − b| within 4 Monte Carlo SEs of a difference of two shares."""
    v = max(b * (1 - b), 1e-4)
    return abs(a - b) <= 4 * math.sqrt(v / n_a + v / n_b)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A copy of jev whose registered diagnostic has 12 lists per split (where its
    data-dependent contracts fail often), compiled, and diagnosed with 150 simulated runs."""
    from tests.conftest import compile_edited

    tmp = tmp_path_factory.mktemp("jev-small")
    edit = ("lists: {fit: 300, evaluate: 300}", "lists: {fit: 12, evaluate: 12}")
    code, err, _ = compile_edited(tmp, STUDY, [edit])
    assert code == 0, err
    project = tmp / "edited"
    out = tmp / "J.json"
    argv = ["--project", str(project), STUDY, "diagnose", "--simulations", "150"]
    assert main([*argv, "--seed", "7", "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text("utf-8")), project


def test_decision_and_figures_agree_with_an_independent_simulation(small):
    d, _ = small
    sims = d["simulations"]
    ref = oracle(12, 2000, 99)
    (cond,) = d["conditions"]
    assert cond["scenario"] == "diagnostic"
    gates = {g["id"]: g["failed"]["share"] for g in cond["gates"]["byGate"]}
    assert near(gates["ranking_vs_set_recovery"], ref["c1_fails"], sims, 2000)
    assert near(gates["below_uniform_counted"], ref["c2_fails"], sims, 2000)
    # the contracts that check the scorer's logic, not the data, never fail
    for cid in ("threshold_frozen", "overlap_refused", "public_callback_blind", "five_copy_gap"):
        assert gates[cid] == 0
    # the registered decision: PASS exactly when every contract held on every seed
    decision = {o["outcome"]: o["share"] for o in cond["decision"]}
    assert set(decision) == {"PASS", "FAIL"}
    assert near(decision["PASS"], ref["passes"], sims, 2000)
    assert 0.05 < ref["passes"] < 0.95  # a size where the decision is genuinely uncertain
    (h,) = cond["hypotheses"]
    shares = {v["verdict"]: v["share"] for v in h["verdicts"]}
    assert shares["supported"] == decision["PASS"]
    (claim,) = d["claims"]
    assert claim["figure"] == decision["PASS"] and not claim["holds"]
    # exact-set accuracy of the evaluate split at the frozen threshold, over every seed run
    (acc,) = [e for e in cond["estimates"] if e["id"] == "exact-set-accuracy"]
    assert acc["defined"] == sims * registered()[1]
    se = float(ref["accuracy"].std(ddof=1)) * math.sqrt(
        1 / acc["defined"] + 1 / ref["accuracy"].size
    )
    assert abs(acc["meanEstimate"] - ref["accuracy"].mean()) <= 4 * se


def test_bytes_do_not_depend_on_workers(small, tmp_path):
    _, project = small
    argv = ["--project", str(project), STUDY, "diagnose", "--simulations", "10", "--seed", "3"]
    argv += ["--vary", "lists=4,16", "--target", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "one.json")]) == 0
    assert main([*argv, "--workers", "2", "--out", str(tmp_path / "two.json")]) == 0
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    assert (tmp_path / "one.md").read_bytes() == (tmp_path / "two.md").read_bytes()
    assert json.loads((tmp_path / "one.json").read_text())["designDigest"].startswith("sha256:")


def test_vary_and_target(small, tmp_path):
    _, project = small
    argv = ["--project", str(project), STUDY, "diagnose", "--simulations", "12", "--seed", "5"]
    argv += ["--vary", "lists:evaluate=2,12,60", "--target", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "J.json")]) == 0
    d = doc(tmp_path)
    red = d["redesign"]
    assert red["parameter"] == "lists:evaluate" and red["values"] == [2, 12, 60]
    for pt in red["points"]:
        assert pt["rows"] == 12 + pt["value"]  # the fit split keeps its registered 12
        (c,) = pt["claims"]
        (cond,) = pt["conditions"]
        passed = next(o for o in cond["decision"] if o["outcome"] == "PASS")
        assert c["figure"] == passed["share"] and c["holds"] == (passed["count"] == 12)
    # common random numbers: the registered size, listed, is the base figure
    (at12,) = [p for p in red["points"] if p["value"] == 12]
    assert at12["claims"][0]["figure"] == d["claims"][0]["figure"]
    meeting = [p["value"] for p in red["points"] if p["allHold"]]
    t = red["target"]
    assert t["value"] == (min(meeting) if meeting else None)
    if meeting:
        assert t["confirmation"]["seed"] == confirmation_seed(5)
    assert "## Redesign: `lists:evaluate`" in (tmp_path / "J.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (["--vary", "lists=0,5"], "0 is outside 1..100000"),
        (["--vary", "rows=5"], "'rows' cannot be varied here"),
        (["--vary", "lists:train=5"], "'lists:train' cannot be varied here"),
        (["--vary", "lists=5,5"], "5 is listed twice"),
        (["--target"], "--target: needs --vary"),
        (["--scenario", "other"], "--scenario 'other': not a registered scenario (registered:"),
        (["--simulations", "0"], "--simulations: must be an integer ≥ 1"),
        (["--scheduler", "nowhere"], "--scheduler"),
    ],
)
def test_bad_options_are_refused_with_their_name(tmp_path, capsys, more, said):
    # an option given twice is refused as such (its value is never silently replaced)
    argv = [*(["--simulations", "2"] if "--simulations" not in more else []), "--seed", "1", *more]
    assert run(tmp_path, *argv) == 2
    assert said in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_diagnose_is_the_engine_s_not_the_sealed_spec_s():
    """diagnose is the engine's standard command: neither the spec nor its seal lists it, and
    the compiled study offers it."""
    from prereg.compiler.load import load_yaml

    seal = json.loads((ROOT / "spec/studies/jev-multicorrect.seal.json").read_text())
    assert "diagnose" not in [c["id"] for c in seal["content"]["commands"]]
    spec = load_yaml(ROOT / "spec/studies/jev-multicorrect.yaml").data
    assert "diagnose" not in [c["id"] for c in spec["commands"]]
    text = (ROOT / "generated/jev_multicorrect/__init__.py").read_text("utf-8")
    assert '"handler": "diagnose"' in text
