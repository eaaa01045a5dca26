"""diagnose's row path: analyses of the catalogue, a statistic of the study's own and numbers a
scenario draws, simulated row by row and scored by the study's own scoring code.

Each figure is compared with an independent computation over the same data-generating process:
the exact power of Fisher's test by enumerating both binomial counts (scipy.stats.fisher_exact
per table), an independent Monte Carlo of Welch's test on log latencies
(scipy.stats.ttest_ind), and the exact power of the win rate's score test by the binomial sum.
Agreement is asked within 4 Monte Carlo standard errors."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT

STUDY = "latency-analyses"
N = 300  # simulated studies per condition


def project(root: Path, edits=(), extra_files=()) -> Path:
    text = (FIXTURES / "diagnose" / f"{STUDY}.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{STUDY}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    for src, rel in extra_files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, root / rel)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def diagnose(root: Path, out: Path, *extra) -> dict:
    args = ["--simulations", str(N), "--seed", "7", "--out", str(out), "--quiet", *extra]
    assert main(["--project", str(root), STUDY, "diagnose", *args]) == 0
    return json.loads(out.read_text())


def verdict_share(doc: dict, scenario: str, hypothesis: str, verdict: str = "supported"):
    cond = next(c for c in doc["conditions"] if c["scenario"] == scenario)
    h = next(h for h in cond["hypotheses"] if h["id"] == hypothesis)
    return next(v for v in h["verdicts"] if v["verdict"] == verdict)["share"], cond


def within_mc(share: float, truth: float, n: int, truth_se: float = 0.0) -> float:
    """|z| of a simulated share against a reference (exact, or itself simulated)."""
    se = math.sqrt(truth * (1 - truth) / n + truth_se**2)
    return abs(share - truth) / se


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> dict:
    root = project(tmp_path_factory.mktemp("rows"))
    return diagnose(root, root / "DIAGNOSE.json")


def fisher_power(n1: int, p1: float, n2: int, p2: float, alpha: float) -> float:
    """P(one-sided Fisher P < alpha) by enumerating both binomial counts."""
    total = 0.0
    for k1 in range(n1 + 1):
        for k2 in range(n2 + 1):
            p = stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="greater").pvalue
            if p < alpha:
                total += stats.binom.pmf(k1, n1, p1) * stats.binom.pmf(k2, n2, p2)
    return total


def welch_log_mc(reps: int, n: int, mu_a: float, mu_b: float, sd: float, seed: int):
    """Independent Monte Carlo of Welch's test of log latencies: (share one-sided P < 0.05,
    share with that and the two-sided 95% upper bound of the ratio below 1)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(mu_a, sd, (reps, n))
    b = rng.normal(mu_b, sd, (reps, n))
    p = stats.ttest_ind(a, b, equal_var=False, alternative="less", axis=1).pvalue
    va, vb = a.var(axis=1, ddof=1) / n, b.var(axis=1, ddof=1) / n
    df = (va + vb) ** 2 / (va**2 / (n - 1) + vb**2 / (n - 1))
    upper = a.mean(axis=1) - b.mean(axis=1) + stats.t.ppf(0.975, df) * np.sqrt(va + vb)
    return float(np.mean(p < 0.05)), float(np.mean((p < 0.05) & (upper < 0)))


def test_fisher_exact_power_matches_the_enumeration(doc):
    exact = fisher_power(30, 0.8, 30, 0.5, 0.05)
    share, cond = verdict_share(doc, "better", "more-accurate")
    assert within_mc(share, exact, N) < 4, (share, exact)
    # under equal rates the test keeps its size (Fisher is conservative: at most alpha)
    size = fisher_power(30, 0.6, 30, 0.6, 0.05)
    null_share, _ = verdict_share(doc, "same", "more-accurate")
    assert size < 0.05 and within_mc(null_share, size, N) < 4
    row = next(a for a in cond["analyses"] if a["id"] == "accuracy-fisher")
    assert row["method"] == "fisher-exact" and row["alphaFrom"] == "rule"
    assert row["rejected"]["share"] == share  # the rule is exactly "p < 0.05"


def test_welch_on_log_latencies_and_the_ratio_rule_match_an_independent_simulation(doc):
    rejected, both = welch_log_mc(40_000, 30, 5.8, 6.0, 0.5, seed=11)
    se = math.sqrt(rejected * (1 - rejected) / 40_000)
    by_catalogue, _ = verdict_share(doc, "better", "faster-by-catalogue")
    assert within_mc(by_catalogue, rejected, N, se) < 4, (by_catalogue, rejected)
    contrast, cond = verdict_share(doc, "better", "faster")
    assert within_mc(contrast, both, N, math.sqrt(both * (1 - both) / 40_000)) < 4
    # the contrast's test and the catalogue's method reject on the same simulated studies
    row = next(c for c in cond["contrasts"] if c["id"] == "latency-ratio")
    assert row["rejected"]["share"] == by_catalogue
    null_share, _ = verdict_share(doc, "same", "faster-by-catalogue")
    assert within_mc(null_share, 0.05, N) < 4


def test_decision_shares_cover_the_analyses(doc):
    """adopt = Fisher supported and the ratio rule supported: accuracy and latency are drawn
    independently, so its chance is the product of the two references."""
    fisher = fisher_power(30, 0.8, 30, 0.5, 0.05)
    _, both = welch_log_mc(40_000, 30, 5.8, 6.0, 0.5, seed=12)
    cond = next(c for c in doc["conditions"] if c["scenario"] == "better")
    adopt = next(o for o in cond["decision"] if o["outcome"] == "adopt")
    assert within_mc(adopt["share"], fisher * both, N) < 4
    assert any(n.startswith("Simulated row by row") for n in doc["notes"])


def test_the_row_path_gives_the_same_bytes_with_two_workers(tmp_path, doc):
    root = project(tmp_path / "p")
    one = diagnose(root, tmp_path / "one.json", "--scenario", "same")
    two = diagnose(root, tmp_path / "two.json", "--scenario", "same", "--workers", "2")
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    assert one == two


WIN_RATE = (
    "  - id: wins\n"
    "    title: The new system's win rate is above one half\n"
    "    analyses:\n"
    "      - id: new-wins\n"
    "        method: win-rate\n"
    "        metric: accuracy\n"
    "        of: {where: [{factor: system, levels: [new]}]}\n"
    "        options: {level: 0.95, null_rate: 0.5}\n"
    "    rule:\n"
    "      compare: {target: new-wins, quantity: p, op: lt, value: 0.05}\n"
    "scenarios:\n"
)
STATISTICS = (
    "statistics:\n  - {id: win-rate, file: win_rate.py, function: win_rate, shape: binomial,"
    " options: [level, null_rate], summary: a win rate}\nhypotheses:\n"
)


def test_a_statistic_of_the_studys_own_is_simulated(tmp_path):
    """The win rate's one-sided score test rejects when (k/n - 1/2)/sqrt(1/(4n)) > z_0.95:
    its power is the binomial sum over those k (here n = 30 rows at rate 0.6)."""
    src = ROOT / "examples" / "custom-statistic" / "statistics" / "win_rate.py"
    root = project(
        tmp_path,
        edits=[("scenarios:\n", WIN_RATE), ("\nhypotheses:\n", "\n" + STATISTICS)],
        extra_files=[(src, "statistics/win_rate.py")],
    )
    doc = diagnose(root, root / "D.json", "--scenario", "same")
    z = stats.norm.ppf(0.95)
    ks = [k for k in range(31) if (k / 30 - 0.5) / math.sqrt(0.25 / 30) > z]
    exact = float(sum(stats.binom.pmf(k, 30, 0.6) for k in ks))
    share, cond = verdict_share(doc, "same", "wins")
    assert within_mc(share, exact, N) < 4, (share, exact)
    row = next(a for a in cond["analyses"] if a["id"] == "new-wins")
    assert row["method"] == "win-rate" and row["rejected"]["share"] == share


def test_vary_alpha_moves_every_p_threshold(tmp_path):
    """--vary alpha: at each level the Fisher rule's power agrees with the enumeration at that
    level; at the registered 0.05 the point repeats the base diagnosis (the same seed)."""
    root = project(tmp_path / "p")
    out = tmp_path / "D.json"
    doc = diagnose(root, out, "--scenario", "better", "--vary", "alpha=0.01,0.05,0.1")
    red = doc["redesign"]
    assert red["parameter"] == "alpha" and red["values"] == [0.01, 0.05, 0.1]
    base, _ = verdict_share(doc, "better", "more-accurate")
    for point in red["points"]:
        (cond,) = point["conditions"]
        got = next(h for h in cond["hypotheses"] if h["id"] == "more-accurate")
        exact = fisher_power(30, 0.8, 30, 0.5, point["value"])
        assert got["verdict"] == "supported" and within_mc(got["share"], exact, N) < 4
        if point["value"] == 0.05:
            assert got["share"] == base
    shares = [
        next(h["share"] for h in p["conditions"][0]["hypotheses"] if h["id"] == "more-accurate")
        for p in red["points"]
    ]
    assert shares == sorted(shares) and shares[0] < shares[-1]  # same draws, a looser level
    md = out.with_suffix(".md").read_text()
    assert "## Redesign: `alpha`" in md


def test_vary_margin_moves_one_tests_margin(tmp_path):
    """--vary margin:latency-rgm: the catalogue's ratio of geometric means tests the ratio
    against each margin (Welch's t of log a - log b against log(margin), one-sided), compared
    with an independent scipy Monte Carlo; the other hypotheses do not move."""
    root = project(tmp_path / "p")
    doc = diagnose(
        root, tmp_path / "D.json", "--scenario", "better", "--vary", "margin:latency-rgm=1,1.1"
    )
    rng = np.random.default_rng(5)
    a = rng.normal(5.8, 0.5, (40_000, 30))
    b = rng.normal(6.0, 0.5, (40_000, 30))
    others = None
    for point in doc["redesign"]["points"]:
        (cond,) = point["conditions"]
        got = {h["id"]: h["share"] for h in cond["hypotheses"]}
        shifted = a - math.log(point["value"])
        p = stats.ttest_ind(shifted, b, equal_var=False, alternative="less", axis=1).pvalue
        ref = float(np.mean(p < 0.05))
        assert within_mc(got["faster-by-catalogue"], ref, N, math.sqrt(ref * (1 - ref) / 4e4)) < 4
        rest = {k: v for k, v in got.items() if k != "faster-by-catalogue"}
        assert others is None or rest == others
        others = rest


@pytest.mark.parametrize(
    ("vary", "message"),
    [
        ("alpha=0,0.05", "alpha 0 is not strictly between 0 and 1"),
        ("alpha:x=0.05", "alpha takes no id"),
        ("margin=1,1.1", "name the contrast or analysis (margin:ID=...): 2 register a non-zero"),
        ("margin:nope=1", "no registered contrast with a test or analysis with a margin option"),
        ("level=0.9", "'level' cannot be varied"),
        ("alpha=0.05,0.05", "0.05 is listed twice"),
    ],
)
def test_vary_refuses_what_it_cannot_vary(tmp_path, capsys, vary, message):
    root = project(tmp_path / "p")
    out = tmp_path / "D.json"
    args = ["--simulations", "2", "--seed", "1", "--out", str(out), "--vary", vary]
    assert main(["--project", str(root), STUDY, "diagnose", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not out.exists()


def test_a_failed_gate_decides_every_verdict_on_the_row_path(tmp_path):
    """A coverage gate of 0.9 under a scenario observing 80% of each cell fails in every
    simulated study (floor(0.8 * 30) = 24 of 30 rows), so every tested hypothesis gets the
    gate's otherwise, as score gives it; without the low coverage no gate fails."""
    gate = "gates:\n  - {id: coverage, metric: coverage, op: ge, value: 0.9}\nhypotheses:\n"
    low = "    outcome: ok\n    coverage: 0.8\n    rates:\n      - {rate: 0.6}\n"
    root = project(
        tmp_path / "p",
        edits=[
            ("\nhypotheses:\n", "\n" + gate),
            ("    outcome: ok\n    rates:\n      - {rate: 0.6}\n", low),
        ],
    )
    doc = diagnose(root, tmp_path / "D.json")
    for cond in doc["conditions"]:
        failed = cond["gates"]["anyFailed"]["share"]
        assert failed == (1.0 if cond["scenario"] == "same" else 0.0)
        if cond["scenario"] == "same":
            for h in cond["hypotheses"]:
                got = {v["verdict"]: v["share"] for v in h["verdicts"]}
                assert got["inconclusive"] == 1.0, h
            keep = next(o for o in cond["decision"] if o["outcome"] == "keep")
            assert keep["share"] == 1.0


def test_a_simulated_study_scores_as_score_scores_its_records(tmp_path):
    """One simulated study of the row path, its records written as observations and scored by
    the score command: the same verdicts, decision and analysis figures as diagnose's scorer
    gave it (the row path adds no arithmetic of its own)."""
    import importlib

    from prereg.compiler.project import Project
    from prereg.diagnose.command import build_plan
    from prereg.diagnose.design import Rules
    from prereg.diagnose.rows import RowScorer, Stream
    from prereg.engines.factorial.commands import diagnose_design
    from prereg.study import study_context

    root = project(tmp_path / "p")
    module, ctx = study_context(Project(root), STUDY)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    design = diagnose_design(ctx.config)
    plan, _ = build_plan(ctx, design, rules, ["better"], 1, 4, "rows")
    records = design.rows.records(plan.conditions[0], Stream(4, plan.conditions[0].stream), 0)
    res, decision, outcome = RowScorer(plan).score(records)
    obs = tmp_path / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "SCORE.json"
    args = ["score", "--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), STUDY, *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == decision.verdicts
    assert doc["decision"]["outcome"] == outcome
    assert [a["id"] for a in doc["analyses"]] == ["accuracy-fisher", "latency-rgm"]
    for a in doc["analyses"]:
        mine = res.analyses[a["id"]]
        assert a["p"] == mine.p and a["estimate"] == mine.estimate
    (contrast,) = doc["contrasts"]
    assert contrast["p"] == res.results["latency-ratio"].p


def test_the_truth_of_a_ratio_of_geometric_means(doc):
    """Lognormal latencies with log-means 5.8 and 6.0: the true ratio of geometric means is
    exp(-0.2) (by hand); the contrast's Welch interval covers it about 95% of the time."""
    cond = next(c for c in doc["conditions"] if c["scenario"] == "better")
    row = next(c for c in cond["contrasts"] if c["id"] == "latency-ratio")
    assert row["truth"] == round(math.exp(-0.2), 6)
    assert abs(row["bias"]) < 4 * row["biasMcSe"]
    assert within_mc(row["coverage"]["share"], 0.95, N) < 4


@pytest.mark.parametrize(
    ("entry", "log"),
    [
        ({"distribution": "normal", "mean": 1.0, "sd": 2.0, "low": 0.0}, False),
        ({"distribution": "normal", "mean": 1.0, "sd": 2.0, "low": -1.0, "high": 2.5}, False),
        ({"distribution": "normal", "mean": 1.0, "sd": 2.0, "high": 0.5}, False),
        ({"distribution": "lognormal", "mean": 0.3, "sd": 0.7}, False),
        ({"distribution": "uniform", "low": 0.5, "high": 3.0}, True),
        ({"distribution": "uniform", "low": 0.5, "high": 3.0}, False),
    ],
)
def test_expected_numbers_against_numerical_integration(entry, log):
    """The closed forms of the row path's truths against scipy.integrate.quad of the clipped
    (or logged) number times the distribution's density."""
    from scipy import integrate

    from prereg.engines.factorial.commands import expected_number

    lo, hi = entry.get("low", -np.inf), entry.get("high", np.inf)
    if entry["distribution"] == "normal":
        dist = stats.norm(entry["mean"], entry["sd"])
    elif entry["distribution"] == "lognormal":
        dist = stats.lognorm(entry["sd"], scale=math.exp(entry["mean"]))
    else:
        dist = stats.uniform(entry["low"], entry["high"] - entry["low"])
        lo, hi = -np.inf, np.inf

    def f(x):
        y = min(max(x, lo), hi)
        return (math.log(y) if log else y) * dist.pdf(x)

    a, b = dist.support()
    points = [p for p in (lo, hi) if np.isfinite(p)]
    ref = (
        integrate.quad(f, a, b, points=points or None, limit=200)[0]
        if np.isfinite(a) and np.isfinite(b)
        else integrate.quad(f, a, b, limit=200)[0]
    )
    assert expected_number(entry, log) == pytest.approx(ref, rel=1e-8, abs=1e-10)


def test_vary_rows_at_the_registered_size_repeats_the_base_diagnosis(tmp_path):
    """--vary rows=20,30 on a study drawn row by row: the registered size (30) has the base
    plan's key but a row model of its own; its point is the base diagnosis again (the same
    seed), not a refusal of every drawn row as unknown (the kept scorer of the base plan)."""
    root = project(tmp_path / "p")
    doc = diagnose(root, tmp_path / "D.json", "--scenario", "better", "--vary", "rows=20,30")
    base, _ = verdict_share(doc, "better", "more-accurate")
    small, same = doc["redesign"]["points"]
    assert (small["rows"], same["rows"]) == (40, 60)
    got = next(h for h in same["conditions"][0]["hypotheses"] if h["id"] == "more-accurate")
    assert got["share"] == base


def test_vary_rows_at_the_registered_size_on_a_structured_scenario(tmp_path):
    """The same on a study drawn study by study (rows named by [item_id, arm], no manifest, a
    cluster of one row shared by both arms: the paired non-inferiority fixture, 205 rows a
    cell): the registered size's point is the base diagnosis, not 'unknown row' refusals."""
    root = tmp_path / "ni"
    (root / "spec" / "studies").mkdir(parents=True)
    shutil.copy(FIXTURES / "diagnose" / "ni.yaml", root / "spec" / "studies" / "ni.yaml")
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "D.json"
    args = ["--simulations", "20", "--seed", "1", "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "ni", "diagnose", *args, "--vary", "rows=205"]) == 0
    doc = json.loads(out.read_text())
    (point,) = doc["redesign"]["points"]
    for cond, again in zip(doc["conditions"], point["conditions"], strict=True):
        shares = [h["verdicts"][0]["share"] for h in cond["hypotheses"]]
        assert [h["share"] for h in again["hypotheses"]] == shares


# an equivalence analysis of the latencies (ms) with two margins, -100 and 100
TOST = (
    "scenarios:\n",
    """  - id: same-latency
    title: The two systems' mean latencies are within 100 ms
    analyses:
      - id: latency-tost
        method: tost-means
        metric: latency
        a: {where: [{factor: system, levels: [new]}]}
        b: {where: [{factor: system, levels: [old]}]}
        options: {lower: -100, upper: 100, variance: welch}
    rule:
      compare: {target: latency-tost, quantity: p, op: lt, value: 0.05}
scenarios:
""",
)


def tost_share(lower: float, upper: float, studies: int = 40_000) -> float:
    """Share of studies a Welch TOST at 0.05 declares equivalent, both arms lognormal(6, 0.5)
    of 30 rows (the scenario 'same'): an independent Monte Carlo with scipy's t."""
    rng = np.random.default_rng(11)
    a = np.exp(rng.normal(6.0, 0.5, (studies, 30)))
    b = np.exp(rng.normal(6.0, 0.5, (studies, 30)))
    va, vb = a.var(axis=1, ddof=1) / 30, b.var(axis=1, ddof=1) / 30
    se = np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / 29 + vb**2 / 29)
    d = a.mean(axis=1) - b.mean(axis=1)
    p = np.maximum(stats.t.sf((d - lower) / se, df), stats.t.cdf((d - upper) / se, df))
    return float(np.mean(p < 0.05))


@pytest.mark.parametrize(
    ("vary", "margins"),
    [
        ("margin:latency-tost=120,180", [(-120, 120), (-180, 180)]),
        ("upper=150,250", [(-100, 150), (-100, 250)]),  # the one analysis with two margins
        ("lower:latency-tost=-150", [(-150, 100)]),
    ],
)
def test_vary_an_equivalence_analysis_margins(tmp_path, vary, margins):
    """--vary lower/upper move one of a TOST's margins, --vary margin a symmetric pair;
    each point's equivalence share against a scipy Monte Carlo of the Welch TOST; the other
    hypotheses do not move."""
    root = project(tmp_path / "p", edits=[TOST])
    doc = diagnose(root, tmp_path / "D.json", "--scenario", "same", "--vary", vary)
    others = None
    for point, (lo, hi) in zip(doc["redesign"]["points"], margins, strict=True):
        (cond,) = point["conditions"]
        got = {h["id"]: h["share"] for h in cond["hypotheses"]}
        ref = tost_share(lo, hi)
        assert within_mc(got["same-latency"], ref, N, math.sqrt(ref * (1 - ref) / 4e4)) < 4
        rest = {k: v for k, v in got.items() if k != "same-latency"}
        assert others is None or rest == others
        others = rest
    shares = [
        next(h for h in p["conditions"][0]["hypotheses"] if h["id"] == "same-latency")["share"]
        for p in doc["redesign"]["points"]
    ]
    assert shares == sorted(shares)  # same draws, wider margins: never fewer equivalent


@pytest.mark.parametrize(
    ("vary", "message"),
    [
        ("lower:latency-tost=100", "lower 100 is not below latency-tost's upper margin 100"),
        ("upper:latency-tost=-100", "upper -100 is not above latency-tost's lower margin -100"),
        ("lower:latency-rgm=1", "no registered analysis with lower and upper margins"),
        ("margin:latency-tost=0,50", "latency-tost's margins are -m and m: m must be positive"),
    ],
)
def test_vary_refuses_margins_it_cannot_move(tmp_path, capsys, vary, message):
    root = project(tmp_path / "p", edits=[TOST])
    out = tmp_path / "D.json"
    args = ["--simulations", "2", "--seed", "1", "--out", str(out), "--vary", vary]
    assert main(["--project", str(root), STUDY, "diagnose", *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_vary_margin_of_an_asymmetric_pair_says_to_vary_each_side(tmp_path, capsys):
    root = project(
        tmp_path / "p", edits=[TOST, ("lower: -100, upper: 100", "lower: -50, upper: 100")]
    )
    args = ["--simulations", "2", "--seed", "1", "--out", str(tmp_path / "D.json")]
    args += ["--vary", "margin:latency-tost=50"]
    assert main(["--project", str(root), STUDY, "diagnose", *args]) == 2
    err = capsys.readouterr().err
    assert "registers the margins lower -50 and upper 100, not a symmetric pair" in err
    assert "--vary lower:latency-tost=... or --vary upper:latency-tost=..." in err
