"""`prereg s3-verifier-freeze <command>` end to end, on the bundled inputs: through the CLI's
`main` in this process, and the demo's steps in a subprocess.

The study's commands (declared in its spec) are run as a user runs them: the demo's
assemble -> power-plan -> freeze-manifest -> validate sequence, refusals with their exit codes,
and a fact changed in a copy of the spec changing behaviour with no runtime edit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import rfc8785

from tests.conftest import ROOT, run_main, run_prereg

STUDY = "s3-verifier-freeze"
EXAMPLES = ROOT / "examples" / "s3"
INPUT = EXAMPLES / "freeze-demo" / "freeze-input.json"
ELIGIBLE = [
    "--eligible-task-count",
    "500",
    "--eligible-repository-count",
    "12",
    "--eligible-pass-items",
    "210",
    "--eligible-fail-items",
    "430",
]


def prereg(*args, project: Path | None = None):
    pre = ["--project", str(project)] if project is not None else []
    return run_main(*pre, STUDY, *args)


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def demo_root(tmp: Path) -> Path:
    """A private copy of examples/s3 without any plan someone may have dropped in."""
    root = tmp / "examples-s3"
    shutil.copytree(EXAMPLES, root)
    (root / "freeze-demo" / "power_plan.json").unlink(missing_ok=True)
    return root


def freeze_flow(tmp: Path, project: Path | None = None, input_path: Path = INPUT):
    """The demo's four steps; returns (folder, plan path, manifest path, [processes])."""
    folder = tmp / "frozen"
    plan = folder / "freeze-demo" / "power_plan.json"
    manifest = tmp / "manifest.json"
    procs = [
        prereg(
            "assemble",
            input_path,
            "--root",
            demo_root(tmp),
            "--out",
            folder,
            "--leave-out",
            "power_plan",
            project=project,
        ),
    ]
    procs.append(
        prereg(
            "power-plan",
            folder / "calibration-sample.jsonl",
            *ELIGIBLE,
            "--out",
            plan,
            project=project,
        )
    )
    procs.append(
        prereg(
            "freeze-manifest",
            input_path,
            "--root",
            folder,
            "--out",
            manifest,
            project=project,
        )
    )
    procs.append(prereg("validate", manifest, "--root", folder, project=project))
    return folder, plan, manifest, procs


def test_the_demo_sequence(tmp_path: Path) -> None:
    folder, plan_path, manifest_path, procs = freeze_flow(tmp_path)
    for p in procs:
        no_traceback(p)
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [p.stderr for p in procs]
    # assemble copied the 8 bound files byte for byte (the plan left out)
    data = json.loads(INPUT.read_text(encoding="utf-8"))
    bound = {a["role"]: a["path"] for a in data["artifacts"]}
    for role, rel in bound.items():
        if role != "power_plan":
            assert sha(folder / rel) == sha(EXAMPLES / rel)
    assert "copied 8 bound files" in procs[0].stdout
    # the canonical plan: its own digest verifies, it binds the sample, and it is powered
    plan_bytes = plan_path.read_bytes()
    plan = json.loads(plan_bytes)
    assert plan_bytes == rfc8785.dumps(plan) + b"\n"
    body = {k: v for k, v in plan.items() if k != "selfSha256"}
    assert plan["selfSha256"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    assert plan["canonical"] is True
    assert plan["calibration"]["calibrationSha256"] == sha(EXAMPLES / "calibration-sample.jsonl")
    assert plan["eligible"] == {
        "taskCount": 500,
        "repositoryCount": 12,
        "passItems": 210,
        "failItems": 430,
    }
    assert plan["status"] == "powered"
    assert plan["selectedTaskCount"] in [r["taskCount"] for r in plan["rungs"]]
    assert f"status powered, selected task count {plan['selectedTaskCount']}" in procs[1].stdout
    # the manifest binds every file by its SHA-256 and records the plan
    manifest = json.loads(manifest_path.read_bytes())
    assert {a["role"]: a["path"] for a in manifest["artifacts"]} == bound
    for a in manifest["artifacts"]:
        assert a["sha256"] == sha(folder / a["path"])
        assert a["bytes"] == (folder / a["path"]).stat().st_size
    assert manifest["powerPlan"]["selfSha256"] == plan["selfSha256"]
    assert manifest["specDigest"] == plan["specDigest"]
    assert manifest["specDigest"].startswith("sha256:")
    assert "holds" in procs[3].stdout and "every bound file re-hashed" in procs[3].stdout


def test_validate_fails_after_a_bound_file_changes(tmp_path: Path) -> None:
    folder, _, manifest, procs = freeze_flow(tmp_path)
    assert [p.returncode for p in procs] == [0, 0, 0, 0]
    (folder / "freeze-demo" / "analysis.py").write_text("print('changed')\n", encoding="utf-8")
    p = prereg("validate", manifest, "--root", folder)
    assert p.returncode == 1
    assert "freeze-demo/analysis.py" in p.stderr
    no_traceback(p)
    # without --root nothing is re-hashed, and the manifest itself still holds
    p = prereg("validate", manifest)
    assert p.returncode == 0 and "files not re-hashed" in p.stdout


def test_an_infeasible_plan_exits_3_and_cannot_authorize_a_freeze(tmp_path: Path) -> None:
    root = demo_root(tmp_path)
    plan = root / "freeze-demo" / "power_plan.json"
    args = list(ELIGIBLE)
    args[args.index("--eligible-repository-count") + 1] = "1"
    p = prereg("power-plan", root / "calibration-sample.jsonl", *args, "--out", plan)
    assert p.returncode == 3 and "status infeasible" in p.stdout
    assert json.loads(plan.read_bytes())["selectedTaskCount"] is None
    out = tmp_path / "manifest.json"
    p = prereg("freeze-manifest", INPUT, "--root", root, "--out", out)
    assert p.returncode == 2 and p.stderr.startswith("error: ")
    assert 'status "infeasible" cannot authorize a freeze' in p.stderr
    assert not out.exists()
    no_traceback(p)


def test_refusals_exit_2_without_traceback_or_output(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    p = prereg("power-plan", tmp_path / "missing.jsonl", *ELIGIBLE, "--out", out)
    assert p.returncode == 2 and "missing.jsonl" in p.stderr and not out.exists()
    no_traceback(p)
    # argparse: a required option of the spec's command is missing
    p = prereg("power-plan", EXAMPLES / "calibration-sample.jsonl", "--out", out)
    assert p.returncode == 2 and "--eligible-task-count" in p.stderr and not out.exists()
    # an existing output is never overwritten
    out.write_text("keep me", encoding="utf-8")
    p = prereg("power-plan", EXAMPLES / "calibration-sample.jsonl", *ELIGIBLE, "--out", out)
    assert p.returncode == 2 and "already exists" in p.stderr
    assert out.read_text(encoding="utf-8") == "keep me"
    # a manifest that is not one
    p = prereg("validate", out)
    assert p.returncode == 2 and p.stderr.startswith("error: ")
    no_traceback(p)


def test_assemble_refusals_copy_nothing(tmp_path: Path) -> None:
    root = demo_root(tmp_path)
    folder = tmp_path / "frozen"
    # the plan is not there yet: without --leave-out the copy is refused as a whole
    p = prereg("assemble", INPUT, "--root", root, "--out", folder)
    assert p.returncode == 2 and "power_plan freeze-demo/power_plan.json" in p.stderr
    assert "does not exist" in p.stderr
    assert not folder.exists() and [x.name for x in tmp_path.iterdir()] == ["examples-s3"]
    p = prereg("assemble", INPUT, "--root", root, "--out", folder, "--leave-out", "plans")
    assert p.returncode == 2 and "'plans' is not a freeze role" in p.stderr
    folder.mkdir()
    p = prereg("assemble", INPUT, "--root", root, "--out", folder, "--leave-out", "power_plan")
    assert p.returncode == 2 and "already exists" in p.stderr
    assert list(folder.iterdir()) == []
    no_traceback(p)


def test_a_fact_changed_in_the_spec_changes_behaviour(project_copy: Path, tmp_path: Path) -> None:
    """X7 needs 4 distinct base lineages and the plan schema is renamed: no runtime edit."""
    spec = project_copy / "spec" / "studies" / f"{STUDY}.yaml"
    # an unsealed copy: this test changes registered content to see the runtime follow
    spec.with_name(spec.name.replace(".yaml", ".seal.json")).unlink()
    text = spec.read_text(encoding="utf-8")
    edits = [
        ("min_distinct_base_lineages: 3,", "min_distinct_base_lineages: 4,"),
        ("schema: prereg-s3-power-plan/v2", "schema: example-s3-power-plan/v3"),
    ]
    for old, new in edits:
        assert text.count(old) == 1
        text = text.replace(old, new)
    spec.write_text(text, encoding="utf-8")
    # the runtime refuses to run a study whose spec changed since the last compile
    p = prereg("validate", tmp_path / "none.json", project=project_copy)
    assert p.returncode == 2 and "spec changed since the last compile" in p.stderr
    c = run_main("--project", project_copy, "compile", STUDY)
    assert c.returncode == 0, c.stderr
    _, plan, manifest, procs = freeze_flow(tmp_path, project=project_copy)
    assert [p.returncode for p in procs[:3]] == [0, 0, 2]
    assert json.loads(plan.read_bytes())["schemaVersion"] == "example-s3-power-plan/v3"
    assert "freeze target X7 needs at least 4 distinct base_lineage values" in procs[2].stderr
    assert "found 3 ('alpha', 'beta', 'gamma')" in procs[2].stderr
    assert not manifest.exists()
    # the same steps under the project's own spec freeze (see test_the_demo_sequence)


@pytest.mark.parametrize("command", ["power-plan", "assemble", "freeze-manifest", "validate"])
def test_help_lists_the_spec_arguments(command: str) -> None:
    p = prereg(command, "--help")
    assert p.returncode == 0
    assert "--out" in p.stdout or command == "validate"
    assert "--root" in p.stdout or command == "power-plan"


def test_the_demo_steps_of_this_study_run(project_copy: Path, tmp_path: Path) -> None:
    """examples/demo.json's s3 steps, run by `prereg demo` in a copy of the project."""
    steps = json.loads((ROOT / "examples" / "demo.json").read_text(encoding="utf-8"))["steps"]
    ours = [s for s in steps if s["study"] == STUDY]
    assert [s["args"][0] for s in ours] == [
        "assemble", "power-plan", "diagnose", "freeze-manifest", "validate"
    ]  # fmt: skip
    # this study alone, so another study's work in progress cannot fail this test
    for spec in (project_copy / "spec" / "studies").glob("*.yaml"):
        if spec.stem != STUDY:
            spec.unlink()
            shutil.rmtree(project_copy / "generated" / spec.stem.replace("-", "_"))
    (project_copy / "examples").mkdir()
    shutil.copytree(EXAMPLES, project_copy / "examples" / "s3")
    (project_copy / "examples" / "s3" / "freeze-demo" / "power_plan.json").unlink(missing_ok=True)
    (project_copy / "examples" / "demo.json").write_text(
        json.dumps({"steps": ours}), encoding="utf-8"
    )
    out = tmp_path / "demo"
    p = run_prereg("--project", project_copy, "demo", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "demo finished: 5 steps" in p.stdout
    manifest = json.loads((out / STUDY / "freeze-manifest.json").read_bytes())
    assert len(manifest["artifacts"]) == 9
    assert (out / "index.html").exists()
    diagnosed = json.loads((out / STUDY / "DIAGNOSE.json").read_bytes())
    assert [c["id"] for c in diagnosed["claims"]] == ["powered"]
    # the demo wrote nothing into the examples it read
    assert sorted(p.name for p in (project_copy / "examples" / "s3").rglob("*")) == sorted(
        p.name for p in EXAMPLES.rglob("*") if p.name != "power_plan.json"
    )
