"""A clustered difference of mean grades exactly on its threshold (tests/fixtures/cluster_margin,
written from docs/analyses.md by a newcomer's non-inferiority study, data as a CSV file): over
18 items in five repositories the new model's grades (hundredths) are 0.05 an item below the old
model's, and the repositories' mean differences average -0.05 too, so the pooled difference and
the difference of the teams' means (a team is one model's work on one repository) are both
exactly -1/20, while the floats give -0.04999999999999993 and -0.050000000000000155. The clustered methods decided their estimate on
the float, so `estimate le -0.05` failed for the sandwich and `ge -0.05` for the teams; they are
now decided on the exact means of the decimals the CSV writes, as the t tests' are. The sandwich's
SE and interval are statsmodels' cluster-robust OLS; the teams' t is scipy's pooled t test of
the cluster means (docs/analyses.md names both as the oracles)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np

from prereg.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cluster_margin" / "ni.yaml"
# (repository, new model's grade, old model's grade), in hundredths
ROWS = [
    ("r0", 26, 56), ("r0", 48, 50), ("r0", 47, 48),
    ("r1", 49, 43), ("r1", 45, 52), ("r1", 42, 37), ("r1", 22, 37),
    ("r2", 43, 48), ("r2", 49, 60), ("r2", 73, 69), ("r2", 33, 48), ("r2", 56, 64),
    ("r3", 84, 79), ("r3", 49, 60),
    ("r4", 80, 74), ("r4", 60, 75), ("r4", 68, 69), ("r4", 79, 74),
]  # fmt: skip


def test_clustered_differences_exactly_on_the_margin(tmp_path):
    import statsmodels.api as sm
    from scipy import stats

    repos = sorted({r for r, _, _ in ROWS})
    # by hand: the differences (hundredths) sum to -5 an item, and the repositories' mean
    # differences to -5 a repository
    assert sum(n - o for _, n, o in ROWS) == -5 * len(ROWS)
    by_repo = [[n - o for r, n, o in ROWS if r == g] for g in repos]
    assert sum(Fraction(sum(d), len(d)) for d in by_repo) == -5 * len(repos)
    new = np.array([n / 100 for _, n, _ in ROWS])
    old = np.array([o / 100 for _, _, o in ROWS])
    cluster_means = {
        arm: [float(np.mean([v for (r, *_), v in zip(ROWS, xs, strict=True) if r == g])) for g in repos]
        for arm, xs in (("new", new), ("old", old))
    }  # fmt: skip
    assert float(new.mean() - old.mean()) > -0.05  # the floats miss -1/20 both ways
    assert float(np.mean(cluster_means["new"]) - np.mean(cluster_means["old"])) < -0.05

    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "ni-cluster.yaml").write_text(FIXTURE.read_text())
    assert main(["--project", str(root), "compile"]) == 0
    obs = tmp_path / "fixes.csv"
    lines = ["item,model,repo,team,score"]
    for i, (repo, n, o) in enumerate(ROWS):
        lines.append(f"i{i},new,{repo},new-{repo},{n / 100}")
        lines.append(f"i{i},old,{repo},old-{repo},{o / 100}")
    obs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "S.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "ni-cluster", "score", *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == {
        "on-margin-robust": "supported",
        "on-margin-teams": "supported",
        "on-margin-boot": "supported",
    }
    rows = {a["id"]: a for a in doc["analyses"]}
    for name in ("robust", "teams", "boot"):
        assert Fraction(rows[name]["exact"]["estimate"]) == Fraction(-1, 20)
    robust = rows["robust"]
    assert robust["statistic"] == 0.0 and robust["p"] == 0.5  # on the margin: t = 0, P = 1/2

    x = np.concatenate([new, old])
    arm = np.r_[np.ones(len(ROWS)), np.zeros(len(ROWS))]
    groups = np.tile([repos.index(r) for r, _, _ in ROWS], 2)
    fit = sm.OLS(x, sm.add_constant(arm)).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": True}, use_t=True
    )
    se = float(fit.bse[1])
    assert math.isclose(robust["se"], se, rel_tol=1e-9)
    half = stats.t.ppf(0.95, len(repos) - 1) * se
    assert math.isclose(robust["lower"], -0.05 - half, rel_tol=1e-9)
    ref = stats.ttest_ind(cluster_means["new"], cluster_means["old"], equal_var=True)
    assert math.isclose(rows["teams"]["statistic"], float(ref.statistic), rel_tol=1e-9)
    assert math.isclose(rows["teams"]["p"], float(ref.pvalue), rel_tol=1e-9)
    md = out.with_suffix(".md").read_text()
    assert "estimate ≥ -0.05: met by 1 of 1: teams (-0.05)" in md
