"""d17 scoring end to end on the public demo seed, through the CLI: simulate, calibrator-fit,
score; scenario outcomes, determinism, and every refusal (clear message, no output)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from d17_helpers import demo

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.digest import digest
from prereg.engines.reachability.commands import prepared_files
from prereg.files import write_files_new
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
STUDY = "d17-multifact"
STARTS = "2026-10-15T09:00:00Z,2026-10-15T10:00:00.000Z"
EVALUATED = "2026-10-20T00:00:00Z"
EFFECTIVE = "2026-10-02T10:02:34.263Z"
HYPS = ("h1", "h2", "h3", "h3a", "h4", "replication")


def cli(*args) -> int:
    return main(["--project", str(ROOT), STUDY, *map(str, args)])


@pytest.fixture(scope="session")
def prepared(tmp_path_factory) -> Path:
    """The demo seed prepared under the current spec (in-memory preparation, shared)."""
    _, ctx = study_context(Project(ROOT), STUDY)
    out = tmp_path_factory.mktemp("d17score") / "prepared"
    out.mkdir()
    files, _ = prepared_files(ctx, demo())
    write_files_new([(out / n, data, mode) for n, data, mode in files])
    return out


def simulate(prepared: Path, out: Path, scenario: str, seed: int = 1, *extra) -> Path:
    assert (
        cli("simulate", prepared, "--scenario", scenario, "--seed", seed, "--out", out, *extra) == 0
    )
    return out


def fit(obs: Path, prepared: Path, out: Path, capsys) -> str:
    capsys.readouterr()
    assert (
        cli(
            "calibrator-fit", obs, prepared / "gold.json", "--effective-at", EFFECTIVE, "--out", out
        )
        == 0
    )
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed == json.loads(out.read_text())["digest"]
    return printed


def score(prepared, obs, cal, cal_digest, out, starts=STARTS, evaluated=EVALUATED) -> int:
    return cli(
        "score", prepared, obs, "--calibrator", cal, "--calibrator-digest", cal_digest,
        "--session-start", starts, "--evaluated-at", evaluated, "--out", out,
    )  # fmt: skip


@pytest.fixture(scope="session")
def finding(prepared, tmp_path_factory):
    """(observations, calibrator, digest, SCORE.json path) for the d17-finding scenario."""
    d = tmp_path_factory.mktemp("finding")
    obs = simulate(prepared, d / "obs.jsonl", "d17-finding", 1)
    assert (
        cli(
            "calibrator-fit",
            obs,
            prepared / "gold.json",
            "--effective-at",
            EFFECTIVE,
            "--out",
            d / "cal.json",
        )
        == 0
    )
    cal_digest = json.loads((d / "cal.json").read_text())["digest"]
    assert score(prepared, obs, d / "cal.json", cal_digest, d / "SCORE.json") == 0
    return obs, d / "cal.json", cal_digest, d / "SCORE.json"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_d17_finding_is_contrastive_specific_and_replicates(finding):
    doc = load(finding[3])
    assert doc["complete"] is True
    assert doc["verdicts"]["h3a"] == "contrastive-specific"
    assert doc["verdicts"]["replication"] == "supported"
    assert doc["verdicts"]["h3"] == "supported"
    assert doc["decision"]["outcome"] == "HOLD"
    assert doc["observations"]["observedRows"] == doc["observations"]["rows"] == 5778
    # 78 + 5,700 rows; some first attempts failed and were retried
    assert doc["observations"]["records"] > 5778
    assert len(doc["cells"]) == 78
    rep = next(e for e in doc["estimates"] if e["id"] == "replication-pool-c")
    assert rep["n"] == 30 and rep["upper"] <= 0.5
    # AUROC per pool x hops: pooled and per encoding (absence only at three hops)
    assert len(doc["auroc"]) == 3 * (1 + 3) + 3 * (1 + 4)
    md = finding[3].with_suffix(".md").read_text(encoding="utf-8")
    assert "| h3a | contrastive-specific |" in md and "## Decision\n\n**HOLD**" in md


def test_score_md_and_json_stamped(finding, prepared):
    doc = load(finding[3])
    pre = load(prepared / "preregistration.json")
    assert doc["specDigest"] == pre["specDigest"]
    assert doc["corpusDigest"] == pre["corpusDigest"]
    assert doc["calibrator"]["digest"] == finding[2]
    assert doc["clock"]["collectionEndBound"] == "2026-10-15T10:30:00.000Z"
    # every registered contrast is reported, with Holm-adjusted P for family members
    h1 = [c for c in doc["contrasts"] if c["family"] == "h1-pool-pairs"]
    assert len(h1) == 21 and all(c["adjustedP"] >= c["p"] for c in h1)


def test_accurate_fails_replication(prepared, tmp_path, capsys):
    obs = simulate(prepared, tmp_path / "obs.jsonl", "accurate", 2)
    d = fit(obs, prepared, tmp_path / "cal.json", capsys)
    assert score(prepared, obs, tmp_path / "cal.json", d, tmp_path / "S.json") == 0
    doc = load(tmp_path / "S.json")
    assert doc["verdicts"]["replication"] == "not-supported"
    assert doc["verdicts"]["h3a"] != "contrastive-specific"


def test_coin_is_uninformative(prepared, tmp_path, capsys):
    obs = simulate(prepared, tmp_path / "obs.jsonl", "coin", 3)
    d = fit(obs, prepared, tmp_path / "cal.json", capsys)
    assert score(prepared, obs, tmp_path / "cal.json", d, tmp_path / "S.json") == 0
    doc = load(tmp_path / "S.json")
    assert doc["verdicts"]["replication"] == "not-supported"
    pooled = [a for a in doc["auroc"] if a["negative"] == "pooled"]
    assert all(a["lower"] <= 0.5 + 0.1 and a["upper"] >= 0.5 - 0.1 for a in pooled)


def test_coverage_090_is_insufficient_everywhere(prepared, finding, tmp_path):
    obs = simulate(prepared, tmp_path / "obs.jsonl", "d17-finding", 1, "--coverage", "0.9")
    assert score(prepared, obs, finding[1], finding[2], tmp_path / "S.json") == 0
    doc = load(tmp_path / "S.json")
    assert doc["complete"] is False
    assert doc["verdicts"] == {h: "insufficient" for h in HYPS}
    (gate,) = doc["gates"]
    assert gate["passed"] is False and len(gate["failures"]) == 39  # every test cell
    assert doc["decision"]["outcome"] == "HOLD"


def test_same_inputs_same_bytes(prepared, finding, tmp_path):
    again = simulate(prepared, tmp_path / "obs.jsonl", "d17-finding", 1)
    assert again.read_bytes() == finding[0].read_bytes()
    assert score(prepared, again, finding[1], finding[2], tmp_path / "S.json") == 0
    a, b = load(tmp_path / "S.json"), load(finding[3])
    a.pop("observations"), b.pop("observations")
    assert a == b
    other = simulate(prepared, tmp_path / "obs2.jsonl", "d17-finding", 2)
    assert other.read_bytes() != finding[0].read_bytes()


# The bytes simulate wrote before the scenarios moved into the language (rates under
# scenarios, P(yes) ranges in the constant respondents): seed 1 of the public demo corpus.
SIMULATED = {
    ("accurate",): "ded2aa31fe116e24f37a018cbbcad4c84329a0fd4de3a06dd9a69ac6d4625abe",
    ("coin",): "d5e2e29110db38d76ece206411ddc492187172b2a7bfac170526b1652501ce85",
    ("d17-finding",): "793e94e78e4f915f796b05d279b1cbf90386b3c7f016c3a96253b36c355963b2",
    ("d17-finding", "--coverage", "0.9"): (
        "46026a7d5eab84e8554ba7fc34cd11505a8f5065e4e85e7e81b51420563df734"
    ),
}


@pytest.mark.parametrize("case", sorted(SIMULATED))
def test_simulated_bytes_are_pinned(prepared, tmp_path, case):
    out = simulate(prepared, tmp_path / "obs.jsonl", case[0], 1, *case[1:])
    assert hashlib.sha256(out.read_bytes()).hexdigest() == SIMULATED[case]


def test_diagnose_only_scenarios_are_not_simulated(prepared, tmp_path, capsys):
    for scenario, needle in (
        ("no-difference", "has no respondent in the constant respondents"),
        ("replication-accuracy", "is a family over effects"),
    ):
        out = tmp_path / f"{scenario}.jsonl"
        rc = cli("simulate", prepared, "--scenario", scenario, "--seed", 1, "--out", out)
        refused(capsys, rc, needle, outputs=[out])


# -- refusals ------------------------------------------------------------------------------------


def refused(capsys, rc: int, *needles: str, outputs=()) -> str:
    err = capsys.readouterr().err
    assert rc == 2, err
    for n in needles:
        assert n in err, err
    for p in outputs:
        assert not Path(p).exists()
    return err


@pytest.fixture
def copy(prepared, tmp_path) -> Path:
    dst = tmp_path / "prepared"
    shutil.copytree(prepared, dst)
    return dst


def test_tampered_corpus_is_refused(copy, finding, tmp_path, capsys):
    path = copy / "corpus.jsonl"
    data = bytearray(path.read_bytes())
    i = data.index(b"Facts:")
    data[i : i + 6] = b"facts:"
    path.write_bytes(bytes(data))
    out = tmp_path / "S.json"
    rc = score(copy, finding[0], finding[1], finding[2], out)
    refused(capsys, rc, "corpus.jsonl", "corpusDigest", outputs=[out, out.with_suffix(".md")])


def test_tampered_gold_is_refused(copy, finding, tmp_path, capsys):
    path = copy / "gold.json"
    gold = json.loads(path.read_text())
    rid = next(iter(gold["labels"]))
    gold["labels"][rid] = "no" if gold["labels"][rid] == "yes" else "yes"
    path.write_text(json.dumps(gold))
    out = tmp_path / "S.json"
    rc = score(copy, finding[0], finding[1], finding[2], out)
    refused(capsys, rc, "gold.json", "goldDigest", outputs=[out])
    rc = cli("simulate", copy, "--scenario", "coin", "--seed", 1, "--out", tmp_path / "o.jsonl")
    refused(capsys, rc, "goldDigest", outputs=[tmp_path / "o.jsonl"])


def test_wrong_calibrator_digest_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    wrong = "sha256:" + "0" * 64
    rc = score(prepared, finding[0], finding[1], wrong, out)
    refused(capsys, rc, "--calibrator-digest", wrong, outputs=[out, out.with_suffix(".md")])


def test_altered_calibrator_is_refused(prepared, finding, tmp_path, capsys):
    cal = json.loads(finding[1].read_text())
    cal["blocks"][0]["yes"] += 1
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(cal))
    out = tmp_path / "S.json"
    rc = score(prepared, finding[0], path, finding[2], out)
    refused(capsys, rc, "does not match its content", outputs=[out])


def test_expired_calibrator_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    # the calibrator expires 2026-11-01T10:02:34.263Z
    rc = score(prepared, finding[0], finding[1], finding[2], out, evaluated="2026-11-02T00:00:00Z")
    refused(capsys, rc, "expired", "--evaluated-at", outputs=[out])
    rc = score(
        prepared, finding[0], finding[1], finding[2], out,
        starts="2026-11-01T09:45:00Z", evaluated="2026-11-05T00:00:00Z",
    )  # fmt: skip
    refused(capsys, rc, "expired", "collection-end bound", outputs=[out])


def test_calibrator_not_yet_effective_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    rc = score(
        prepared, finding[0], finding[1], finding[2], out,
        starts="2026-09-30T09:00:00Z", evaluated="2026-10-03T00:00:00Z",
    )  # fmt: skip
    refused(capsys, rc, "not yet effective", outputs=[out])


def test_evaluated_before_collection_end_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    rc = score(prepared, finding[0], finding[1], finding[2], out, evaluated="2026-10-15T10:29:59Z")
    refused(capsys, rc, "collection-end bound 2026-10-15T10:30:00.000Z", outputs=[out])
    # exactly at the bound is accepted
    assert (
        score(prepared, finding[0], finding[1], finding[2], out, evaluated="2026-10-15T10:30Z") == 0
    )


def test_evaluated_in_the_future_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    rc = score(prepared, finding[0], finding[1], finding[2], out, evaluated="2999-01-01T00:00:00Z")
    refused(capsys, rc, "in the future", outputs=[out])


def test_bad_session_start_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    rc = score(prepared, finding[0], finding[1], finding[2], out, starts="2026-10-15T09:00:00")
    refused(capsys, rc, "--session-start", "time zone", outputs=[out])


def test_duplicate_and_unknown_observations_are_refused(prepared, finding, tmp_path, capsys):
    lines = finding[0].read_text().splitlines(keepends=True)
    unknown = json.loads(lines[4])
    unknown["rowId"] = "f" * 64
    bad = lines[:3] + [lines[1], json.dumps(unknown) + "\n"] + lines[3:]
    obs = tmp_path / "obs.jsonl"
    obs.write_text("".join(bad))
    out = tmp_path / "S.json"
    rc = score(prepared, obs, finding[1], finding[2], out)
    refused(
        capsys,
        rc,
        f"{obs}:4: duplicate attempt 1",
        "first on line 2",
        f"{obs}:5: unknown row id",
        outputs=[out],
    )


def test_observation_contract_is_enforced(prepared, finding, tmp_path, capsys):
    lines = finding[0].read_text().splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["pYes"] = 1.5
    obs = tmp_path / "obs.jsonl"
    obs.write_text(json.dumps(rec) + "\n" + "".join(lines[1:]))
    out = tmp_path / "S.json"
    rc = score(prepared, obs, finding[1], finding[2], out)
    refused(capsys, rc, f"{obs}:1: at /pYes", outputs=[out])


def test_existing_output_is_refused(prepared, finding, tmp_path, capsys):
    out = tmp_path / "S.json"
    out.with_suffix(".md").write_text("mine")
    rc = score(prepared, finding[0], finding[1], finding[2], out)
    refused(capsys, rc, "already exists", outputs=[out])
    assert out.with_suffix(".md").read_text() == "mine"


def test_unknown_scenario_is_refused(prepared, tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    rc = cli("simulate", prepared, "--scenario", "oracle", "--seed", 1, "--out", out)
    refused(capsys, rc, "unknown scenario 'oracle'", outputs=[out])


def test_calibrator_artifact_shape(finding):
    cal = json.loads(finding[1].read_text())
    assert set(cal) == {"id", "effectiveAt", "expiresAfterDays", "blocks", "digest"}
    assert cal["effectiveAt"] == EFFECTIVE and cal["expiresAfterDays"] == 30
    assert cal["digest"] == digest({k: v for k, v in cal.items() if k != "digest"})
    blocks = cal["blocks"]
    assert all(b["n"] >= 20 for b in blocks)  # the spec's smallest block
    assert [b["lower"] for b in blocks] == sorted(b["lower"] for b in blocks)
    # isotonic: yes rates never decrease (compared exactly)
    assert all(
        a["yes"] * b["n"] <= b["yes"] * a["n"] for a, b in zip(blocks[:-1], blocks[1:], strict=True)
    )


def test_figures_recomputed_independently(prepared, finding):
    """Cell accuracy, said-yes rate and one AUROC from the raw files (sklearn for the AUROC)."""
    from sklearn.metrics import roc_auc_score

    doc = load(finding[3])
    gold = load(prepared / "gold.json")
    split = {}
    for line in (prepared / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        split[rec["id"]] = rec["split"]
    last: dict[str, tuple[int, float | None]] = {}
    for line in finding[0].read_text().splitlines():
        o = json.loads(line)
        if o["rowId"] not in last or o["attempt"] > last[o["rowId"]][0]:
            last[o["rowId"]] = (o["attempt"], o["pYes"])

    def rows(pool, hops, outcome):
        return [
            r
            for r, w in gold["worlds"].items()
            if split[r] == "test"
            and (w["pool"], w["hops"], w["outcome"], w["layout"])
            == (pool, hops, outcome, "equalized")
        ]

    mc = rows("pool-b", 3, "missing-contrastive")
    p = [last[r][1] for r in mc]
    correct = sum(
        (x > 0.5) == (gold["labels"][r] == "yes") and x != 0.5 for r, x in zip(mc, p, strict=True)
    )
    cell = next(
        c for c in doc["cells"] if c["cell"] == "tst-pool-b_h3_missing-contrastive_equalized"
    )
    assert cell["metrics"]["raw-accuracy"]["correct"] == correct
    assert cell["metrics"]["said-yes-rate"] == pytest.approx(
        sum(x > 0.5 for x in p) / len(p), rel=1e-12
    )
    yes = rows("pool-b", 3, "yes")
    y = [1] * len(yes) + [0] * len(mc)
    s = [last[r][1] for r in yes] + p
    auc = next(
        a
        for a in doc["auroc"]
        if a["group"] == {"pool": "pool-b", "hops": "3"} and a["negative"] == "missing-contrastive"
    )
    assert auc["estimate"] == pytest.approx(roc_auc_score(y, s), abs=5e-5)
    assert (auc["positives"], auc["negatives"]) == (110, 220)
