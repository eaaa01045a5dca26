"""Clustered rows, samples per problem and raters per item: the scenario words `clusters` and
`ratings`, simulated by `simulate` and diagnose's row path and scored with the units applied.

Every oracle below is written here from the registration's words, not from the engine's code:
the data-generating process is re-simulated with numpy (cluster sizes, the latent normal per
cluster, the probit per-problem chance, a true grade per item and each rater's accuracy), the
rules are re-decided with scipy (Student's t on cluster means), the unbiased pass@k formula
with ``math.comb`` and statsmodels' Fleiss' kappa, and diagnose's shares are compared with the
oracle's within a few Monte Carlo standard errors (both sides' errors combined).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import yaml

from prereg.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "units" / "spec" / "studies"


def project(tmp_path: Path, study: str, edit=None) -> Path:
    spec = yaml.safe_load((EXAMPLE / f"{study}.yaml").read_text())
    if edit is not None:
        edit(spec)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{study}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert main(["--project", str(root), "compile"]) == 0
    return root


def diagnose(root: Path, study: str, scenario: str, n: int, seed: int = 7) -> dict:
    out = root / "d" / "DIAGNOSE.json"
    args = ["--project", str(root), study, "diagnose", "--quiet", "--scenario", scenario]
    args += ["--simulations", str(n), "--seed", str(seed), "--out", str(out)]
    assert main(args) == 0
    return json.loads(out.read_text())["conditions"][0]


def share(cond: dict, verdict: str = "supported") -> tuple[float, float]:
    row = next(v for v in cond["hypotheses"][0]["verdicts"] if v["verdict"] == verdict)
    return row["share"], row["count"]


def agree(p_diag: float, n_diag: int, p_oracle: float, n_oracle: int, z: float = 4.0) -> None:
    p = (p_diag * n_diag + p_oracle * n_oracle) / (n_diag + n_oracle)
    se = math.sqrt(max(p * (1 - p), 1e-4) * (1 / n_diag + 1 / n_oracle))
    assert abs(p_diag - p_oracle) <= z * se, (p_diag, p_oracle, se)


# -- the cluster-level t (cluster-arms) ------------------------------------------------------


def test_cluster_level_t_power_matches_an_independent_simulation(tmp_path):
    """Repositories of 4..16 files randomised to a linter (each cell of 200 files its own
    repositories), log seconds with intraclass correlation 0.3; a repository is analysable with
    5 timed files; the gate asks 80% of each arm's repositories; the hypothesis is supported
    when Student's t on repository means (new < old) gives P < 0.05 and the gate holds."""
    from scipy.stats import ttest_ind

    root = project(tmp_path, "cluster-arms")
    cond = diagnose(root, "cluster-arms", "new-faster", 200)
    rng = np.random.default_rng(20261203)
    rho, sd, reps = 0.3, 0.5, 3000
    # every replicate at once: 50 sizes of at least 4 cover 200 rows; a replicate's clusters
    # are its sizes up to the first whose running total reaches 200, that one cut short
    held = np.ones(reps, dtype=bool)
    means = {}
    for arm, mu in (("old", 0.5), ("new", 0.3)):
        drawn = rng.integers(4, 17, (reps, 50))
        ends = np.cumsum(drawn, axis=1)
        count = (ends < 200).sum(axis=1) + 1  # clusters per replicate
        live = np.arange(50) < count[:, None]
        size = np.where(live, drawn, 0)
        size[np.arange(reps), count - 1] -= ends[np.arange(reps), count - 1] - 200
        # the cluster of each row: rows 0..199 against the running totals, replicate by
        # replicate (offset so that one searchsorted serves them all)
        offset = 1000 * np.arange(reps)[:, None]
        code = np.searchsorted(
            (np.cumsum(size, axis=1) + offset).ravel(),
            (np.arange(200)[None, :] + offset).ravel(),
            side="right",
        ).reshape(reps, 200)  # a flat cluster index, replicate r's from 50 r
        w = rng.standard_normal((reps, 50)).ravel()
        z = math.sqrt(rho) * w[code] + math.sqrt(1 - rho) * rng.standard_normal((reps, 200))
        seconds = np.round(np.exp(mu + sd * z), 3)
        total = np.bincount(code.ravel(), weights=seconds.ravel(), minlength=50 * reps)
        analysable = size >= 5
        held &= analysable.sum(axis=1) / count >= 0.8
        mean = total.reshape(reps, 50) / np.maximum(size, 1)
        means[arm] = [m[a] for m, a in zip(mean, analysable, strict=True)]
    failed = int((~held).sum())
    by_shape: dict[tuple[int, int], list] = defaultdict(list)  # one scipy call per shape
    for r in np.flatnonzero(held):
        new, old = means["new"][r], means["old"][r]
        by_shape[(new.size, old.size)].append((new, old))
    supported = 0
    for pairs in by_shape.values():
        new, old = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
        p = ttest_ind(new, old, axis=1, equal_var=True, alternative="less").pvalue
        supported += int((p < 0.05).sum())
    agree(share(cond)[0], 200, supported / reps, reps)
    agree(cond["gates"]["anyFailed"]["share"], 200, failed / reps, reps)
    assert 0.3 < supported / reps < 0.8  # a design where power is neither 0 nor 1


# -- pass@k over samples per problem (samples-units) -------------------------------------------


def pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_pass_at_k_power_matches_the_unbiased_formula_on_an_independent_simulation(tmp_path):
    """20 problems x 12 samples per decoding, the same problems under both (a problem's latent
    normal shared by them, intraclass correlation 0.4); 232 of each decoding's 240 samples
    observed at random; a problem is analysed with 10 valid samples; pass@5 of nucleus by the
    unbiased estimator over the analysed problems must reach 0.55, the gate 75% of 20."""
    from scipy.special import ndtri

    def lower(spec):
        spec["scenarios"][0]["rates"][0]["rate"] = 0.24

    root = project(tmp_path, "samples-units", lower)
    cond = diagnose(root, "samples-units", "nucleus-better", 300)
    rng = np.random.default_rng(5)
    reps, rho = 4000, 0.4
    q = {"greedy-temp": ndtri(0.2), "nucleus": ndtri(0.24)}
    # the unbiased estimator for every (n, c) a problem can show, from math.comb
    table = np.full((13, 13), np.nan)
    for n_ in range(5, 13):
        for c_ in range(n_ + 1):
            table[n_, c_] = pass_at_k(n_, c_, 5)
    problem = np.repeat(np.arange(20), 12)
    flat = 20 * np.arange(reps)[:, None] + problem[None, :]  # replicate r's problems 20 r..
    w = rng.standard_normal((reps, 20))
    held = np.ones(reps, dtype=bool)
    for decoding in ("greedy-temp", "nucleus"):
        z = math.sqrt(rho) * w[:, problem] + math.sqrt(1 - rho) * rng.standard_normal((reps, 240))
        passed = z < q[decoding]
        # 232 of the 240 samples seen, a uniformly random subset in each replicate
        seen = np.zeros((reps, 240), dtype=bool)
        np.put_along_axis(seen, rng.random((reps, 240)).argsort(axis=1)[:, :232], True, axis=1)
        n = np.bincount(flat[seen], minlength=20 * reps).reshape(reps, 20)
        c = np.bincount(flat[seen & passed], minlength=20 * reps).reshape(reps, 20)
        ok = n >= 10
        held &= ok.sum(axis=1) / 20 >= 0.75
        if decoding == "nucleus":
            per_problem = np.where(ok, table[n, np.minimum(c, n)], 0.0)
            estimates = per_problem.sum(axis=1) / np.maximum(ok.sum(axis=1), 1)
    supported = int((held & (estimates >= 0.55)).sum())
    agree(share(cond)[0], 300, supported / reps, reps)
    assert 0.2 < supported / reps < 0.8
    mean, se = np.mean(estimates), np.std(estimates) / math.sqrt(reps)
    got = next(a for a in cond["analyses"] if a["id"] == "pass-at-5-nucleus")
    assert abs(got["meanEstimate"] - mean) <= 4 * math.hypot(got["meanEstimateMcSe"], se)


# -- Fleiss' kappa over raters per item (raters-units) -----------------------------------------


def test_fleiss_kappa_distribution_matches_statsmodels_on_data_drawn_here(tmp_path):
    """15 items per domain, three raters each; true grades 0/1/2 in shares 0.3/0.3/0.4; ann and
    bob right 90% of the time, cat 75%, a wrong grade either other one alike; 44 of each
    domain's 45 labels observed; kappa over the items all three raters labelled."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    root = project(tmp_path, "raters-units")
    cond = diagnose(root, "raters-units", "good-raters", 300)
    rng = np.random.default_rng(11)
    reps = 3000
    # 44 of a domain's 45 labels observed: one item per domain loses a label, so every
    # replicate keeps 28 complete items, and its 28 x 3 label table is drawn for all at once
    truth = rng.choice(3, size=(reps, 2, 15), p=[0.3, 0.3, 0.4])
    labels = np.empty((reps, 2, 15, 3), dtype=int)
    for r, acc in enumerate((0.9, 0.9, 0.75)):
        right = rng.random((reps, 2, 15)) < acc
        other = (truth + rng.integers(1, 3, (reps, 2, 15))) % 3
        labels[..., r] = np.where(right, truth, other)
    gone = rng.integers(0, 45, (reps, 2)) // 3  # the item of the label not observed
    kept = np.arange(15)[None, None, :] != gone[..., None]
    complete = labels[kept].reshape(reps, 28, 3)
    # Fleiss' kappa of each replicate by its formula (Fleiss 1971), checked against
    # statsmodels' on the first 300 replicates
    counts = (complete[..., None] == np.arange(3)).sum(axis=2)  # (reps, 28 items, 3 categories)
    share_cat = counts.sum(axis=1) / (28 * 3)
    agreement = ((counts * (counts - 1)).sum(axis=2) / (3 * 2)).mean(axis=1)
    chance = (share_cat**2).sum(axis=1)
    kappas = (agreement - chance) / (1 - chance)
    for i in range(300):
        table, _ = aggregate_raters(complete[i], n_cat=3)
        assert abs(kappas[i] - fleiss_kappa(table, method="fleiss")) < 1e-12
    got = cond["analyses"][0]
    se = kappas.std() / math.sqrt(reps)
    assert abs(got["meanEstimate"] - kappas.mean()) <= 4 * math.hypot(got["meanEstimateMcSe"], se)
    agree(share(cond)[0], 300, float((kappas >= 0.6).mean()), reps)


# -- the layout simulate writes, scored with the units applied ----------------------------------


def simulate(root: Path, study: str, scenario: str, seed: int = 1) -> list[dict]:
    out = root / f"{scenario}-{seed}.jsonl"
    args = ["--project", str(root), study, "simulate", "--quiet", "--scenario", scenario]
    assert main([*args, "--seed", str(seed), "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def score(root: Path, study: str, observations: list[dict], name: str) -> dict:
    path = root / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in observations))
    out = root / "s" / name / "SCORE.json"
    args = ["--project", str(root), study, "score", "--quiet", "--observations", str(path)]
    assert main([*args, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def unit_counts(doc: dict, level: str) -> dict[str, int]:
    u = next(u for u in doc["units"] if u["id"] == level)
    return {"units": u["units"], "included": u["included"], "excluded": u["excluded"]}


def test_simulated_repositories_are_scored_with_their_units_applied(tmp_path):
    """cluster-arms, 2,000 files per linter: files carry their repository (each cell its own),
    sizes 4..16 (the last cut short), seconds from a latent whose intraclass correlation within
    a repository is the registered 0.3 (one-way ANOVA estimator on the log); score counts the
    repositories with 5 timed files as the oracle counts them from the written rows."""

    def big(spec):
        spec["crossings"][0]["rows"] = 2000
        for sc in spec["scenarios"]:
            for v in sc["values"]:
                v.pop("decimals")

    root = project(tmp_path, "cluster-arms", big)
    rows = simulate(root, "cluster-arms", "same-speed")
    assert len(rows) == 4000
    by_repo: dict[str, list[float]] = defaultdict(list)
    arm_of = {}
    for r in rows:
        by_repo[r["repo"]].append(math.log(r["seconds"]))
        assert arm_of.setdefault(r["repo"], r["linter"]) == r["linter"]  # randomised whole
    assert len({(r["repo"], r["file"]) for r in rows}) == 4000
    sizes_ = np.array([len(v) for v in by_repo.values()])
    assert sizes_.max() <= 16 and abs(sizes_[sizes_ >= 4].mean() - 10) < 0.6
    # the one-way ANOVA estimator of the intraclass correlation of the log seconds
    groups = list(by_repo.values())
    n, g = sum(map(len, groups)), len(groups)
    grand = np.mean([x for v in groups for x in v])
    ssb = sum(len(v) * (np.mean(v) - grand) ** 2 for v in groups)
    ssw = sum(((np.asarray(v) - np.mean(v)) ** 2).sum() for v in groups)
    msb, msw = ssb / (g - 1), ssw / (n - g)
    n0 = (n - sum(len(v) ** 2 for v in groups) / n) / (g - 1)
    icc = (msb - msw) / (msb + (n0 - 1) * msw)
    assert abs(icc - 0.3) < 0.06  # SE about 0.02 with ~400 repositories of ~10 files
    doc = score(root, "cluster-arms", rows, "cluster")
    small = sum(1 for v in groups if len(v) < 5)
    assert unit_counts(doc, "repository") == {
        "units": g, "included": g - small, "excluded": small
    }  # fmt: skip


def test_simulated_pairs_share_items_across_arms_and_score_as_registered(tmp_path):
    """repo-pairs: the same 240 items under both arms, 6 per repository (40 repositories, the
    registered count), 470 of 480 rows observed; pairs and analysable repositories counted here
    from the written rows; the two answers of an item agree more often than independent
    answers would (the item's latent correlation 0.4)."""
    root = project(tmp_path, "repo-pairs")
    rows = simulate(root, "repo-pairs", "equal-arms", seed=2)
    assert len(rows) == 470
    arms: dict[str, dict[str, bool]] = defaultdict(dict)
    repo_of = {}
    for r in rows:
        arms[r["itemId"]][r["arm"]] = r["correct"]
        assert repo_of.setdefault(r["itemId"], r["repo"]) == r["repo"]
    assert 235 <= len(arms) <= 240 and len(set(repo_of.values())) == 40
    complete = [i for i, a in arms.items() if len(a) == 2]
    per_repo = defaultdict(int)
    for i in complete:
        per_repo[repo_of[i]] += 1
    analysable = sum(1 for v in per_repo.values() if v >= 5)
    doc = score(root, "repo-pairs", rows, "pairs")
    assert unit_counts(doc, "pair")["included"] == len(complete)
    assert unit_counts(doc, "repository")["included"] == analysable
    # the two answers of an item agree with the chance the bivariate probit gives at latent
    # correlation 0.5 (the item's 0.4 and the repository's 0.1): P(both right) twice, plus
    # 1 - 2 * 0.7; independent answers would agree 58% of the time
    from scipy.special import ndtri
    from scipy.stats import multivariate_normal

    q = ndtri(0.7)
    both = multivariate_normal(mean=[0, 0], cov=[[1, 0.5], [0.5, 1]]).cdf([q, q])
    expected = 2 * both + 1 - 2 * 0.7
    same = sum(a["base"] == a["tuned"] for a in (arms[i] for i in complete))
    for seed in (3, 4, 5):
        more = simulate(root, "repo-pairs", "equal-arms", seed=seed)
        pair: dict[str, dict[str, bool]] = defaultdict(dict)
        for r in more:
            pair[r["itemId"]][r["arm"]] = r["correct"]
        done = [a for a in pair.values() if len(a) == 2]
        same += sum(a["base"] == a["tuned"] for a in done)
        complete += done
    m = len(complete)
    assert abs(same / m - expected) < 4 * math.sqrt(expected * (1 - expected) / m)
    assert expected > 0.63


def test_bivariate_probit_agreement_of_a_clustered_pair():
    """The chance that two rows of one cluster are both right is the bivariate normal CDF at
    the rates' quantiles with correlation rho (scipy's multivariate normal): the latent the
    scenario draws, checked on 200,000 pairs."""
    from scipy.special import ndtr, ndtri
    from scipy.stats import multivariate_normal

    from prereg.decide.scenarios import cluster_latent

    rng = np.random.default_rng(3)
    m = 200_000
    codes = np.repeat(np.arange(m), 2)
    outer = np.repeat(np.arange(m // 5), 10)  # a second level over five pairs
    z = cluster_latent([(outer, m // 5, 0.1), (codes, m, 0.3)], rng, 2 * m)
    right = (ndtr(z) < 0.7).reshape(m, 2)
    both = (right[:, 0] & right[:, 1]).mean()
    q = ndtri(0.7)
    exact = multivariate_normal(mean=[0, 0], cov=[[1, 0.4], [0.4, 1]]).cdf([q, q])
    assert abs(both - exact) < 4 * math.sqrt(exact * (1 - exact) / m)
    assert abs(right.mean() - 0.7) < 4 * math.sqrt(0.21 / (2 * m))
    # rows of one outer cluster but different pairs correlate by the outer level alone
    a, b = z.reshape(-1, 10)[:, 0], z.reshape(-1, 10)[:, 2]
    assert abs(np.corrcoef(a, b)[0, 1] - 0.1) < 4 / math.sqrt(a.size)


# -- compile refuses a structure it cannot simulate, at its path -------------------------------


def test_compile_refuses_each_structure_mistake_at_its_path(tmp_path, capsys):
    def broken(spec):
        sc = spec["scenarios"][0]
        sc["ratings"]["prevalence"] = [0.3, 0.3, 0.3]
        sc["ratings"]["raters"].append({"value": "ann"})
        sc["ratings"]["categories"] = [0, 1, 3]
        sc["clusters"] = [
            {"field": "itemId", "correlation": 0.5, "size": {"low": 2, "high": 2}},
            {"field": "note", "correlation": 0.6, "size": {"low": 3, "high": 1}},
        ]
        spec["record_contracts"][1]["fields"].append({"name": "note", "type": "string"})
        spec["scenarios"].append(
            {"id": "empty", "clusters": [{"field": "note", "correlation": 0.2}]}
        )
        spec["scenarios"].append(
            {
                "id": "nested",
                "ratings": dict(sc["ratings"]),
                "clusters": [
                    {"field": "note", "correlation": 0.1, "size": {"low": 2, "high": 4}},
                    {"field": "desk", "correlation": 0.1, "shared": True, "size": {"mean": 2}},
                ],
            }
        )
        spec["record_contracts"][1]["fields"].append({"name": "desk", "type": "string"})

    spec = yaml.safe_load((EXAMPLE / "raters-units.yaml").read_text())
    broken(spec)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "raters-units.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    expected = [
        "/scenarios/0/clusters/0/size: scenario 'good-raters': 'itemId' is a field of the item"
        " manifest, whose values form the clusters, so the level has no size",
        "/scenarios/0/clusters/1/size: scenario 'good-raters': low is above high",
        "/scenarios/0/clusters: scenario 'good-raters': the levels' correlations sum to 1.1",
        "/scenarios/0/ratings/categories/2: scenario 'good-raters': category 3 is not a value"
        " field 'grade' admits",
        "/scenarios/0/ratings/prevalence: scenario 'good-raters': prevalence sums to 0.9",
        "/scenarios/0/ratings/raters/1: scenario 'good-raters': a rater entry takes exactly one"
        " of accuracy and confusion",
        "/scenarios/1/clusters/0: scenario 'empty' lays out clusters of 'note', so the level"
        " needs a size",
        "/scenarios/1: scenario 'empty' takes one of outcome and metric (or, drawing no"
        " outcome, values or ratings)",
        "/scenarios/2/clusters/1/shared: scenario 'nested': a level shared by every cell cannot"
        " lie within 'note', whose clusters are each cell's own",
    ]
    for line in expected:
        assert line in err, line
    assert "raters-units.yaml:" in err
    assert not (root / "generated" / "raters_units").exists()


@pytest.mark.parametrize(
    "confusion, message",
    [
        ([[1, 0], [0, 1]], "a confusion matrix has one row per category (3)"),
        ([[1, 0, 0], [0, 0.5, 0.4], [0, 0, 1]], "row 1 sums to 0.9, not 1"),
    ],
)
def test_compile_refuses_a_confusion_matrix_of_the_wrong_shape(
    tmp_path, capsys, confusion, message
):
    spec = yaml.safe_load((EXAMPLE / "raters-units.yaml").read_text())
    ratings = spec["scenarios"][0]["ratings"]
    ratings.pop("accuracy")
    ratings["confusion"] = confusion
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "raters-units.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(root), "compile"]) == 2
    assert message in capsys.readouterr().err


# -- diagnose's row path scores a structured study as score does --------------------------------


@pytest.mark.parametrize(
    "study, scenario",
    [
        ("repo-pairs", "tuned-worse"),
        ("samples-units", "nucleus-better"),
        ("cluster-arms", "new-faster"),
        ("raters-units", "good-raters"),
    ],
)
def test_a_simulated_study_with_units_scores_as_score_scores_its_records(tmp_path, study, scenario):
    """One simulated study of the row path, written out as observations (with the manifest
    `items` writes, for the study that has one) and scored by the score command: the same
    verdicts, gates, decision and figures as diagnose's scorer gave it, so the units are
    applied once, by the same code, and the layout's row table differs from score's only in
    the order of its rows."""
    import importlib

    from prereg.compiler.project import Project
    from prereg.diagnose.command import build_plan
    from prereg.diagnose.design import Rules
    from prereg.diagnose.rows import RowScorer, Stream
    from prereg.engines.factorial.commands import diagnose_design
    from prereg.study import study_context

    root = project(tmp_path, study)
    module, ctx = study_context(Project(root), study)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    design = diagnose_design(ctx.config)
    plan, _ = build_plan(ctx, design, rules, [scenario], 1, 4, "rows")
    records = design.rows.records(plan.conditions[0], Stream(9, plan.conditions[0].stream), 0)
    res, decision, outcome = RowScorer(plan).score(records)
    obs = tmp_path / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "SCORE.json"
    args = ["score", "--observations", str(obs), "--out", str(out), "--quiet"]
    if study == "raters-units":
        items = tmp_path / "items.jsonl"
        assert main(["--project", str(root), study, "items", "--out", str(items)]) == 0
        args += ["--items", str(items)]
    assert main(["--project", str(root), study, *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == decision.verdicts
    assert bool(doc["gated"]) == bool(decision.failures)
    assert (doc["decision"] or {}).get("outcome") == outcome
    for a in doc.get("analyses") or []:
        mine = res.analyses[a["id"]]
        assert (a["estimate"], a["p"]) == (mine.estimate, mine.p)
    for c in doc.get("contrasts") or []:
        assert c["estimate"] == res.results[c["id"]].estimate
    assert [u["id"] for u in doc["units"]] == [u["id"] for u in ctx.config["units"]]
    if ctx.config.get("decision"):
        assert outcome is not None


def test_a_calibration_curve_under_clusters_still_draws_the_outcome(tmp_path):
    """tests/fixtures/diagnose/calibration.yaml's over-confident scenario, its rows clustered
    in tasks of 10 (latent intraclass correlation 0.5): each row's chance of being right is
    still its confidence less 0.12 (confidence uniform on [0.5, 1]: 0.63 on average, 0.83 for
    confidences of 0.9 and more), and tasks differ more than independent rows would."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "diagnose" / "calibration.yaml"
    spec = yaml.safe_load(fixture.read_text())
    spec["crossings"][0]["rows"] = 2000
    spec["record_contracts"][0]["fields"].append({"name": "task", "type": "string"})
    sc = next(s for s in spec["scenarios"] if s["id"] == "overconfident")
    sc["clusters"] = [{"field": "task", "correlation": 0.5, "size": {"low": 10, "high": 10}}]
    spec["scenarios"] = [sc]  # the calibrated one lays out no tasks (compile refuses it)
    spec.pop("claims", None)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{spec['id']}.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(root), "compile"]) == 0
    rows = simulate(root, spec["id"], "overconfident")
    assert len(rows) == 4000
    right = np.array([r["correct"] for r in rows], dtype=float)
    conf = np.array([r["confidence"] for r in rows])
    assert abs(right.mean() - 0.63) < 4 * math.sqrt(0.63 * 0.37 / right.size)
    top = right[conf >= 0.9]
    assert abs(top.mean() - 0.83) < 4 * math.sqrt(0.83 * 0.17 / top.size)
    by_task: dict[str, list[float]] = defaultdict(list)
    for r, x in zip(rows, right, strict=True):
        by_task[r["task"]].append(x)
    assert {len(v) for v in by_task.values()} == {10}
    # the variance of task means: about p(1 - p)/10 for independent rows; far more here
    spread = np.var([np.mean(v) for v in by_task.values()])
    assert spread > 2.5 * 0.63 * 0.37 / 10


def test_cluster_sizes_follow_their_registered_distribution():
    """Sizes covering 200,000 rows: 1 + Poisson(mean - 1) has the mean and variance scipy's
    Poisson gives; uniform sizes stay within low..high with mean (low + high) / 2; the sizes
    cover the rows exactly, the last cut short."""
    from scipy.stats import poisson

    from prereg.decide.scenarios import cluster_sizes

    rng = np.random.default_rng(8)
    got = cluster_sizes({"mean": 6.5}, 200_000, rng)
    assert sum(got) == 200_000 and min(got) >= 1
    body = np.array(got[:-1])
    mean, var = poisson(5.5).stats(moments="mv")
    assert abs(body.mean() - (1 + mean)) < 4 * math.sqrt(var / body.size)
    assert abs(body.var() - var) < 0.05 * var
    got = cluster_sizes({"low": 3, "high": 9}, 200_000, rng)
    assert sum(got) == 200_000 and max(got) <= 9 and min(got[:-1]) >= 3
    assert abs(np.mean(got[:-1]) - 6) < 4 * math.sqrt(4 / len(got))
    assert cluster_sizes({"low": 4, "high": 4}, 10, rng) == [4, 4, 2]


def test_compile_refuses_a_scenario_without_the_clusters_its_rules_read(tmp_path, capsys):
    """cluster-arms without its clusters level: neither the repository units nor the
    cluster-level t's cluster field would have a value in simulated rows."""
    spec = yaml.safe_load((EXAMPLE / "cluster-arms.yaml").read_text())
    for sc in spec["scenarios"]:
        sc.pop("clusters")
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "cluster-arms.yaml").write_text(yaml.safe_dump(spec))
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    for sid in ("new-faster", "same-speed"):
        assert f"scenario '{sid}' cannot drive unit 'repository': it groups rows by 'repo'" in err
        assert (
            f"scenario '{sid}' cannot drive analysis 'new-vs-old' (hypotheses/0/analyses/0):"
            " its cluster 'repo' is no field the scenario lays out" in err
        )


def test_clusters_of_each_cell_numbered_alike_are_still_each_cells_own(tmp_path):
    """An integer repository field numbers each cell's repositories 1, 2, ...: repository 7
    of one linter is not repository 7 of the other, so their latents are independent (the
    correlation of matched repositories' mean log seconds is near 0, not near the 0.94 a shared
    latent with intraclass correlation 0.6 in repositories of 10 would give)."""

    def integer_repos(spec):
        spec["crossings"][0]["rows"] = 2000
        spec["record_contracts"][0]["fields"][0] = {"name": "repo", "type": "integer"}
        for sc in spec["scenarios"]:
            sc["clusters"] = [
                {"field": "repo", "correlation": 0.6, "size": {"low": 10, "high": 10}}
            ]

    root = project(tmp_path, "cluster-arms", integer_repos)
    rows = simulate(root, "cluster-arms", "same-speed")
    means = {arm: defaultdict(list) for arm in ("old", "new")}
    for r in rows:
        means[r["linter"]][r["repo"]].append(math.log(r["seconds"]))
    assert sorted(means["old"]) == list(range(1, 201)) == sorted(means["new"])
    a = [np.mean(means["old"][k]) for k in range(1, 201)]
    b = [np.mean(means["new"][k]) for k in range(1, 201)]
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.3
    assert np.var(a) > 0.5 * 0.25  # the repositories do differ (0.6 of the log's variance)
