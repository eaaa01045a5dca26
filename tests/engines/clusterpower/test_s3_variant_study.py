"""A different cluster-power freeze written as one YAML file, with no Python: the calibration
contract's field names, stage and class labels, the frozen constants (effect, target power 4/5,
simulations, seed, ladder, block size), the floors, the bound level, the status hypothesis and
its status names, the freeze input's schema field, id, contract and field names, the freeze
roles, the plan and calibration roles, the targets, the forbidden keys, the false claims, the
sandbox issue and the schema ids all changed at once.  It compiles, and assemble, power-plan,
freeze-manifest and validate run through the CLI on the bundled calibration sample renamed to
its contract."""

from __future__ import annotations

import json
import shutil

from tests.conftest import FIXTURES, ROOT, run_main

STUDY = "judge-pilot-freeze"
FIELDS = {
    "stage": "phase",
    "repository_id": "repo",
    "task_id": "problem",
    "class_label": "outcome",
    "delta_logscore": "score_delta",
}
CLASSES = {"official-pass": "resolved", "official-fail": "unresolved"}


def _freeze_input(**changes):
    doc = {
        "kind": "acme.pilot-freeze-input.v2",
        "arm": "B2",
        "repository_commit": "1" * 40,
        "upstream_benchmark": {"commit": "2" * 40, "artifact_digests": {"b": "sha256:" + "3" * 64}},
        "seeds": {"bootstrap": 1, "permutation": 2, "stage_assignment": 3},
        "runtime": {"runs_untrusted": False, "needs_sandbox": True},
        "judges": [
            {"id": "j1", "checkpoint": "c1", "family": "fam-a", "tuned_on_benchmark": False},
            {"id": "j2", "checkpoint": "c2", "family": "fam-b", "tuned_on_benchmark": False},
        ],
        "contamination_status": "not assessed",
        "files": [
            {"category": "main_code", "file": "art/main.R"},
            {"category": "sizing_plan", "file": "art/plan.json"},
            {"category": "pilot_stats", "file": "pilot.ndjson"},
            {"category": "judge_inventory", "file": "art/judges.json"},
            {"category": "prompts", "file": "art/prompts.json"},
        ],
    }
    doc.update(changes)
    return doc


def test_the_variant_plans_freezes_and_validates(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "variants" / STUDY, project)
    r = run_main("--project", project, "compile")
    assert r.returncode == 0, r.stderr
    src = tmp_path / "src"
    (src / "art").mkdir(parents=True)
    lines = []
    for line in (ROOT / "examples" / "s3" / "calibration-sample.jsonl").read_text().splitlines():
        row = json.loads(line)
        row["stage"], row["class_label"] = "pilot", CLASSES[row["class_label"]]
        lines.append(json.dumps({FIELDS[k]: v for k, v in row.items()}))
    (src / "pilot.ndjson").write_text("\n".join(lines) + "\n")
    (src / "art" / "main.R").write_text("# analysis\n")
    (src / "art" / "judges.json").write_text('{"judges": ["j1", "j2"]}\n')
    (src / "art" / "prompts.json").write_text('{"prompt": "Is it right?"}\n')
    inp = tmp_path / "freeze-input.json"
    inp.write_text(json.dumps(_freeze_input()))
    frozen = tmp_path / "frozen"

    def run(*args):
        return run_main("--project", project, STUDY, *args)

    r = run("assemble", inp, "--root", src, "--out", frozen, "--leave-out", "sizing_plan")
    assert r.returncode == 0, r.stderr
    assert "copied 4 bound files" in r.stdout and "left out role sizing_plan" in r.stdout
    plan_path = frozen / "art" / "plan.json"
    r = run(
        "power-plan", frozen / "pilot.ndjson", "--eligible-task-count", "100",
        "--eligible-repository-count", "12", "--eligible-pass-items", "210",
        "--eligible-fail-items", "430", "--out", plan_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    plan = json.loads(plan_path.read_text())
    assert plan["schemaVersion"] == "acme-sizing-plan/v3"
    assert (plan["status"], plan["selectedTaskCount"], plan["canonical"]) == ("adequate", 20, True)
    assert plan["calibration"]["recordsPerStratum"] == {"resolved": 62, "unresolved": 119}
    assert [(x["taskCount"], x["simulations"]) for x in plan["rungs"]] == [
        (20, 400),
        (40, 400),
        (80, 400),
        (100, 400),
    ]
    first = plan["rungs"][0]
    assert first["successes"] == 386 and first["power"] == 386 / 400
    assert abs(first["mcSe"] - (0.965 * 0.035 / 400) ** 0.5) < 1e-15
    assert plan["frozen"]["seed"] == 777 and plan["frozen"]["ladder"] == [20, 40, 80]

    manifest = tmp_path / "manifest.json"
    r = run("freeze-manifest", inp, "--root", frozen, "--out", manifest)
    assert r.returncode == 0, r.stderr
    doc = json.loads(manifest.read_text())
    assert doc["schemaVersion"] == "acme-pilot-manifest/v1"
    assert [a["role"] for a in doc["artifacts"]] == [
        "main_code",
        "sizing_plan",
        "pilot_stats",
        "judge_inventory",
        "prompts",
    ]
    assert doc["claims"] == {"runs_untrusted": False}
    assert doc["sandboxIssue"]["id"] == "#42"
    assert doc["powerPlan"]["status"] == "adequate"
    r = run("validate", manifest, "--root", frozen)
    assert r.returncode == 0, r.stderr
    assert "holds" in r.stdout

    # the variant's own rules refuse, in its own words
    bad = tmp_path / "bad-input.json"
    judges = _freeze_input()["judges"]
    judges[1]["family"] = "fam-a"
    files = [f for f in _freeze_input()["files"] if f["category"] != "prompts"]
    bad.write_text(json.dumps(_freeze_input(judges=judges, files=files)))
    r = run("freeze-manifest", bad, "--root", frozen, "--out", tmp_path / "m2.json")
    assert r.returncode == 2
    assert "freeze target B2 requires role prompts, which is not bound" in r.stderr
    assert (
        "freeze target B2 needs at least 2 distinct family values among models not"
        " benchmark-specifically fine-tuned; found 1 ('fam-a')"
    ) in r.stderr
    assert not (tmp_path / "m2.json").exists()
