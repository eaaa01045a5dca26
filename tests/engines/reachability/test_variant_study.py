"""A second study of the reachability-probe kind, written in YAML only, runs end to end.

tests/fixtures/reachability/e23-relay-chains.yaml changes what d17-multifact registers: other
ids, factor ids (wording, relays, breakage, format) and levels, two pools without d17's
informational pool role, one and two relays, 374 rows, gold label words true/false, other
observation field names, seed policy, budget, audit, rules, hypotheses, file names and
calibration window.  It is compiled in a scratch project and run through the CLI only.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_main

STUDY = "e23-relay-chains"
SPEC = FIXTURES / "reachability" / f"{STUDY}.yaml"
SEED = "e23-demo"


@pytest.fixture(scope="module")
def variant(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("variant")
    project = root / "project"
    (project / "spec" / "studies").mkdir(parents=True)
    shutil.copy(SPEC, project / "spec" / "studies" / SPEC.name)
    c = run_main("--project", project, "compile")
    assert c.returncode == 0, c.stdout + c.stderr
    prepared = root / "prepared"
    r = run_main("--project", project, STUDY, "prepare", SEED, prepared)
    assert r.returncode == 0, r.stderr
    assert f"prepared 374 rows for seed {SEED!r}" in r.stdout
    return {"root": root, "project": project, "prepared": prepared}


def _study(v, *args):
    return run_main("--project", v["project"], STUDY, *args)


def test_prepare_follows_the_variant(variant):
    prepared = variant["prepared"]
    prereg = json.loads((prepared / "preregistration.json").read_text())
    assert prereg["studyId"] == STUDY and prereg["rows"] == 374
    assert prereg["generatorId"] == "e23-relay-chains/v1"
    gold = json.loads((prepared / "gold.json").read_text())
    assert gold["schemaVersion"] == "e23-gold/v1"
    assert set(gold["labels"].values()) == {"true", "false"}
    rows = [json.loads(line) for line in (prepared / "corpus.jsonl").read_text().splitlines()]
    assert len(rows) == 374
    assert {r["split"] for r in rows} == {"pilot", "main"}
    assert rows[0]["familyId"].startswith("e23-") and rows[0]["familyId"].endswith("-pl-n1-r-b")
    assert rows[0]["slice"] == "lex-north_r1_reachable_balanced"
    assert rows[0]["requests"] == [
        {"id": "primary", "arm": "main", "definitionId": "e23-relay-entailment"}
    ]
    assert "Known facts:" in rows[0]["input"]["payload"]
    audit = json.loads((prepared / "audit.json").read_text())
    assert audit["schemaVersion"] == "e23-shortcut-audit/v1" and audit["folds"] == 3
    assert [g["group"] for g in audit["groups"]][0] == "balanced/lex-north/r1"
    for f in prepared.iterdir():  # nothing of d17's registration leaks into the files
        text = f.read_text()
        for word in ("d17mf", "d17-multifact", "D17", "pool-a", "champion", "tuning"):
            assert word not in text, (f.name, word)


def test_simulate_and_score_follow_the_variant(variant):
    root, prepared = variant["root"], variant["prepared"]
    obs = root / "observations.jsonl"
    r = _study(variant, "simulate", prepared, "--scenario", "contrastive-trap", "--seed", "1",
               "--out", obs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    first = json.loads(obs.read_text().splitlines()[0])
    assert set(first) == {"item", "req", "prob", "try"} and first["req"] == "primary"
    cal = root / "calibrator.json"
    r = _study(variant, "calibrator-fit", obs, prepared / "gold.json",
               "--effective-at", "2026-09-01T08:00:00Z", "--out", cal)  # fmt: skip
    assert r.returncode == 0, r.stderr
    digest = r.stdout.strip().splitlines()[-1]
    assert json.loads(cal.read_text())["id"].startswith("e23-iso-")
    out = root / "SCORE.json"
    r = _study(variant, "score", prepared, obs, "--calibrator", cal, "--calibrator-digest", digest,
               "--session-start", "2026-09-02T09:00:00Z,2026-09-02T09:45:00Z",
               "--evaluated-at", "2026-09-03T12:00:00Z", "--out", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    score = json.loads(out.read_text())
    assert score["schemaVersion"] == "e23-score/v1" and score["decision"]["outcome"] == "NO-GO"
    assert set(score["verdicts"]) == {
        "wording-effect", "relay-decline", "gap-readings", "legacy-format", "anchor"
    }  # fmt: skip
    assert score["observations"]["observedRows"] == 374
    cells = {c["cell"]: c for c in score["cells"]}
    assert len(cells) == 44
    trap = cells["mn-lex-south_r1_gap-contrastive_balanced"]
    assert trap["levels"] == {
        "wording": "lex-south", "relays": "1", "breakage": "gap-contrastive", "format": "balanced"
    }  # fmt: skip
    # the contrastive-trap respondent reads lex-south's contrastive gaps as connections (0.1)
    assert trap["metrics"]["acc-raw"]["estimate"] < 0.3
    assert cells["mn-lex-north_r1_relay-down_balanced"]["metrics"]["acc-raw"]["estimate"] > 0.7
    assert set(trap["byPosition"]) == {"head", "tail"}
    assert "## Decision\n\n**NO-GO**" in (root / "SCORE.md").read_text()


def test_dev_review_material_follows_the_variant(variant):
    out = variant["root"] / "review" / "MATERIAL.json"
    out.parent.mkdir()
    # the demo seed is public: its review material would hold gold anyone can regenerate
    r = _study(variant, "dev-review-material", variant["prepared"], out,
               "--artifact-root", variant["root"])  # fmt: skip
    assert r.returncode == 2 and "error: public-seed: " in r.stderr, r.stderr
    private = variant["root"] / "private-prepared"
    r = _study(variant, "prepare", "e23-9c4f0a7e2b61d83f5a0c7e19", private)
    assert r.returncode == 0, r.stderr
    r = _study(variant, "dev-review-material", private, out,
               "--artifact-root", variant["root"])  # fmt: skip
    assert r.returncode == 0, r.stderr
    material = json.loads(out.read_text())
    assert material["schemaVersion"] == "e23-pilot-review-material/v1"
    assert len(material["items"]) == 11
    assert {i["unblind"]["goldLabel"] for i in material["items"]} == {"true", "false"}
