"""The freeze manifest: complete X6/X7 freezes, validation, determinism and every refusal."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import rfc8785
from s3_study import CONFIG, CONSTANTS, context

from prereg.digest import digest_hex
from prereg.engines import StudyContext
from prereg.engines.clusterpower.freeze import build_manifest, validate_manifest
from prereg.engines.clusterpower.freeze_commands import COMMANDS
from prereg.errors import UserError
from tests.mutate import mutations

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[2] / "examples" / "s3"
SPEC_DIGEST = "sha256:" + "5e" * 32
VERSION = "1.2"


def ctx(config: dict[str, Any] | None = None) -> StudyContext:
    return context(config, SPEC_DIGEST, VERSION)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------
# building a complete, valid freeze in a temporary folder


def calibration_lines(n_tasks: int = 6) -> bytes:
    rows = []
    for t in range(n_tasks):
        for label, x in (("official-pass", 0.01 * t), ("official-fail", -0.02 * t)):
            rows.append(
                {
                    "stage": "calibration",
                    "repository_id": f"repo{t % 3}",
                    "task_id": f"task{t}",
                    "class_label": label,
                    "delta_logscore": x,
                }
            )
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def make_plan(calibration: bytes, **changes: Any) -> dict[str, Any]:
    """A power plan with the fields the plan engine writes; selfSha256 computed last."""
    plan = {
        "schemaVersion": CONSTANTS["power_plan"]["schema"],
        "canonical": True,
        "status": "powered",
        "reasons": [],
        "specDigest": SPEC_DIGEST,
        "amendmentVersion": VERSION,
        "frozen": copy.deepcopy(CONSTANTS["frozen"]),
        "eligible": {
            "taskCount": 500,
            "repositoryCount": 12,
            "passItems": 210,
            "failItems": 430,
        },
        "calibration": {
            "bytes": len(calibration),
            "calibrationSha256": sha(calibration),
            "recordsPerStratum": {"official-pass": 6, "official-fail": 6},
            "repositories": 3,
            "tasks": 6,
            "tasksWithBothStrata": 6,
        },
        "skippedRungs": [],
        "rungs": [
            {
                "taskCount": 50,
                "simulations": 10000,
                "successes": 9100,
                "power": 0.91,
                "mcSe": 0.0028618176042508367,
                "degenerate": 0,
                "nullSuccesses": 240,
                "removedNullMean": 0.0001,
                "dfRepository": 11,
                "dfTask": 49,
            }
        ],
        "selectedTaskCount": 50,
        "warnings": [],
        "numpyVersion": "2.4.6",
    }
    plan.update(changes)
    plan["selfSha256"] = digest_hex(plan)
    return plan


def plan_bytes(plan: dict[str, Any]) -> bytes:
    return rfc8785.dumps(plan) + b"\n"


class Case:
    """A root with every role's file, a freeze input outside it and an output path."""

    def __init__(self, tmp: Path, target: str, config: dict[str, Any] | None = None):
        self.config = config or CONFIG
        self.tmp = tmp
        self.root = tmp / "root"
        self.input = tmp / "freeze-input.json"
        self.out = tmp / "out" / "manifest.json"
        self.out.parent.mkdir(parents=True)
        self.calibration = calibration_lines()
        files = {
            "src/analysis.py": b"def analyse():\n    return 0\n",
            "src/power_planning.py": b"def plan():\n    return 1\n",
            "data/calibration.jsonl": self.calibration,
            "plan/power_plan.json": plan_bytes(make_plan(self.calibration)),
            "inventory/candidates.jsonl": b'{"task_id":"task0","patch":"p0"}\n{"task_id":"task1","patch":"p1"}\n',
            "inventory/verifiers.json": b'{"verifiers":[{"id":"v1","kind":"judge"}]}\n',
            "data/stage_assignment.json": b'{"seed":3,"stages":{"task0":"confirmatory"}}\n',
            "env/environment.json": b'{"python":"3.11","packages":{"numpy":"2.4.6"}}\n',
            "prompts/bundle.json": b'{"prompts":[{"id":"judge","text":"Is the patch correct?"}]}\n',
        }
        for rel, data in files.items():
            self.write(rel, data)
        roles = {
            "analysis_code": "src/analysis.py",
            "power_planning_code": "src/power_planning.py",
            "power_plan": "plan/power_plan.json",
            "calibration_statistics": "data/calibration.jsonl",
            "candidate_inventory": "inventory/candidates.jsonl",
            "verifier_inventory": "inventory/verifiers.json",
            "stage_assignment": "data/stage_assignment.json",
            "environment_manifest": "env/environment.json",
        }
        models = [
            {
                "id": "judge-a",
                "checkpoint": "a-2025-01",
                "base_lineage": "alpha",
                "benchmark_specific_finetune": False,
            },
            {
                "id": "judge-b",
                "checkpoint": "b-7b",
                "base_lineage": "beta",
                "benchmark_specific_finetune": False,
            },
        ]
        if target == "X7":
            roles["prompt_bundle"] = "prompts/bundle.json"
            models.append(
                {
                    "id": "judge-c",
                    "checkpoint": "c-v3",
                    "base_lineage": "gamma",
                    "benchmark_specific_finetune": False,
                }
            )
        self.data: dict[str, Any] = {
            "schema": "idkmesh.s3-freeze-input.v1",
            "freeze_target": target,
            "repository_commit": "0123456789abcdef0123456789abcdef01234567",
            "upstream_benchmark": {
                "commit": "89abcdef0123456789abcdef0123456789abcdef",
                "artifact_digests": {"swe-bench-verified.parquet": "sha256:" + "ab" * 32},
            },
            "seeds": {"bootstrap": 11, "permutation": 12, "stage_assignment": 13},
            "execution_boundary": {"executes_untrusted_code": False, "sandbox_required": True},
            "models": models,
            "contamination_status": "no known contamination",
            "container_image_digest": "sha256:" + "cd" * 32,
            "artifacts": [{"role": r, "path": p} for r, p in roles.items()],
        }

    def write(self, rel: str, data: bytes) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    def set_plan(self, plan: dict[str, Any]) -> None:
        (self.root / "plan/power_plan.json").write_bytes(plan_bytes(plan))

    def path_of(self, role: str) -> str:
        return next(a["path"] for a in self.data["artifacts"] if a["role"] == role)

    def set_path(self, role: str, path: str) -> None:
        next(a for a in self.data["artifacts"] if a["role"] == role)["path"] = path

    def drop(self, role: str) -> None:
        self.data["artifacts"] = [a for a in self.data["artifacts"] if a["role"] != role]

    def freeze(self, out: Path | None = None, input_text: str | None = None) -> int:
        self.input.write_text(
            input_text if input_text is not None else json.dumps(self.data, indent=2),
            encoding="utf-8",
        )
        args = SimpleNamespace(input=str(self.input), root=str(self.root), out=str(out or self.out))
        return COMMANDS["freeze_manifest"](ctx(self.config), args)

    def refusal(self, **kw: Any) -> str:
        """Run a freeze that must be refused; return all its messages as one text."""
        with pytest.raises(UserError) as ei:
            self.freeze(**kw)
        assert ei.value.exit_code != 0
        assert not self.out.exists()
        assert os.listdir(self.out.parent) == []  # no partial or temporary file either
        return "\n".join(ei.value.lines())


def run_validate(manifest: Path, root: Path | None, capsys, config=None) -> tuple[int, str]:
    capsys.readouterr()
    args = SimpleNamespace(manifest=str(manifest), root=None if root is None else str(root))
    code = COMMANDS["validate"](ctx(config), args)
    cap = capsys.readouterr()
    return code, cap.out + cap.err


@pytest.fixture
def x6(tmp_path: Path) -> Case:
    return Case(tmp_path, "X6")


@pytest.fixture
def x7(tmp_path: Path) -> Case:
    return Case(tmp_path, "X7")


# ------------------------------------------------------------------------------------------
# complete freezes


@pytest.mark.parametrize("target", ["X6", "X7"])
def test_complete_freeze_builds_and_validates(tmp_path: Path, target: str, capsys) -> None:
    case = Case(tmp_path, target)
    assert case.freeze() == 0
    raw = case.out.read_bytes()
    manifest = json.loads(raw)
    # canonical JSON plus one newline, and a self digest over the rest, checked independently
    assert raw == rfc8785.dumps(manifest) + b"\n"
    body = {k: v for k, v in manifest.items() if k != "selfSha256"}
    assert manifest["selfSha256"] == sha(rfc8785.dumps(body))
    assert manifest["schemaVersion"] == "prereg-s3-freeze-manifest/v2"
    assert manifest["specDigest"] == SPEC_DIGEST
    assert manifest["amendmentVersion"] == VERSION
    assert manifest["claims"] == {"executes_untrusted_code": False}
    assert manifest["sandboxIssue"] == {"id": "#804", "canonical": True, "resolved": False}
    assert manifest["frozen"] == CONSTANTS["frozen"]
    expected_input = {k: v for k, v in case.data.items() if k != "artifacts"}
    assert manifest["input"] == expected_input
    # every bound file: role, path relative to the root, byte size and SHA-256 of its bytes
    expected = [
        {
            "role": a["role"],
            "path": a["path"],
            "bytes": len((case.root / a["path"]).read_bytes()),
            "sha256": sha((case.root / a["path"]).read_bytes()),
        }
        for a in case.data["artifacts"]
    ]
    assert manifest["artifacts"] == expected  # the input lists roles in the config's order
    roles = [a["role"] for a in manifest["artifacts"]]
    assert ("prompt_bundle" in roles) == (target == "X7")
    plan = json.loads((case.root / "plan/power_plan.json").read_bytes())
    assert manifest["powerPlan"] == {
        "status": "powered",
        "selectedTaskCount": 50,
        "selfSha256": plan["selfSha256"],
        "calibrationSha256": sha(case.calibration),
        "specDigest": SPEC_DIGEST,
        "amendmentVersion": VERSION,
    }
    assert str(case.root) not in raw.decode()  # no absolute paths
    assert run_validate(case.out, case.root, capsys)[0] == 0
    assert run_validate(case.out, None, capsys)[0] == 0
    assert validate_manifest(case.out, case.root, CONFIG) == []


def test_underpowered_full_universe_plan_is_accepted(x6: Case) -> None:
    x6.set_plan(
        make_plan(x6.calibration, status="underpowered_full_universe", selectedTaskCount=None)
    )
    assert x6.freeze() == 0
    assert json.loads(x6.out.read_bytes())["powerPlan"]["status"] == "underpowered_full_universe"


def test_optional_sandbox_attestation_and_x6_with_untrusted_code_in_a_sandbox(x6: Case) -> None:
    x6.write("env/sandbox.json", b'{"issue":"#804","attested":false}\n')
    x6.data["artifacts"].append({"role": "sandbox_attestation", "path": "env/sandbox.json"})
    x6.data["execution_boundary"] = {"executes_untrusted_code": True, "sandbox_required": True}
    assert x6.freeze() == 0
    manifest = json.loads(x6.out.read_bytes())
    assert manifest["artifacts"][-1]["role"] == "sandbox_attestation"
    # the engine claims nothing it does not do, whatever the input's execution boundary says
    assert manifest["claims"] == {"executes_untrusted_code": False}


def test_deterministic_same_bytes_whatever_the_artifact_order(x7: Case) -> None:
    assert x7.freeze() == 0
    second = x7.tmp / "out" / "second.json"
    assert x7.freeze(out=second) == 0
    assert second.read_bytes() == x7.out.read_bytes()
    x7.data["artifacts"].reverse()
    third = x7.tmp / "out" / "third.json"
    assert x7.freeze(out=third) == 0
    assert third.read_bytes() == x7.out.read_bytes()


def test_build_manifest_returns_the_written_object(x6: Case) -> None:
    x6.input.write_text(json.dumps(x6.data), encoding="utf-8")
    m = build_manifest(x6.input, x6.root, CONFIG, SPEC_DIGEST, VERSION)
    assert x6.freeze() == 0
    assert json.loads(x6.out.read_bytes()) == m


def test_the_engine_follows_the_config(tmp_path: Path, capsys) -> None:
    """Role names, schema ids, the sandbox issue and the X7 rule values all come from config."""
    cfg = copy.deepcopy(CONFIG)
    fz = cfg["constants"]["freeze_rules"]
    cfg["freeze_roles"][7]["id"] = "env_lock"
    fz["manifest_schema"] = "example-manifest/v9"
    fz["sandbox_issue_id"] = "#1"
    fz["false_claims"] = ["executes_untrusted_code", "contacts_network"]
    fz["targets"][1]["min_distinct_base_lineages"] = 2
    case = Case(tmp_path, "X7", config=cfg)
    case.data["models"].pop()
    next(a for a in case.data["artifacts"] if a["role"] == "environment_manifest")["role"] = (
        "env_lock"
    )
    assert case.freeze() == 0
    m = json.loads(case.out.read_bytes())
    assert m["schemaVersion"] == "example-manifest/v9"
    assert m["sandboxIssue"] == {"id": "#1", "canonical": True, "resolved": False}
    assert m["claims"] == {"executes_untrusted_code": False, "contacts_network": False}
    assert [a["role"] for a in m["artifacts"]][7] == "env_lock"
    assert run_validate(case.out, case.root, capsys, config=cfg)[0] == 0
    # the study's own config refuses that manifest: another schema id, role and sandbox issue
    code, text = run_validate(case.out, case.root, capsys)
    assert code == 1 and "$.schemaVersion" in text


# ------------------------------------------------------------------------------------------
# validate


def test_validate_root_names_a_bound_file_changed_afterwards(x7: Case, capsys) -> None:
    assert x7.freeze() == 0
    (x7.root / "inventory/verifiers.json").write_bytes(b'{"verifiers":[]}\n')
    code, text = run_validate(x7.out, x7.root, capsys)
    assert code == 1
    assert "verifier_inventory inventory/verifiers.json: SHA-256 differs" in text
    assert "verifier_inventory inventory/verifiers.json: size differs" in text
    assert "candidate_inventory" not in text  # unchanged files are not reported
    # without --root nothing is re-hashed, and the manifest itself still holds
    assert run_validate(x7.out, None, capsys)[0] == 0


def test_validate_root_reports_each_changed_or_missing_file(x6: Case, capsys) -> None:
    assert x6.freeze() == 0
    (x6.root / "src/analysis.py").write_bytes(b"def analyse():\n    return 1\n")  # same size
    (x6.root / "env/environment.json").unlink()
    code, text = run_validate(x6.out, x6.root, capsys)
    assert code == 1
    assert "analysis_code src/analysis.py: SHA-256 differs" in text
    assert "analysis_code src/analysis.py: size differs" not in text
    assert "environment_manifest env/environment.json: does not exist" in text


def test_validate_root_refuses_a_bound_file_replaced_by_a_symlink(x6: Case, capsys) -> None:
    assert x6.freeze() == 0
    target = x6.root / "src/analysis.py"
    saved = x6.root / "src/saved.py"
    target.rename(saved)
    target.symlink_to("saved.py")  # same bytes behind the link
    code, text = run_validate(x6.out, x6.root, capsys)
    assert code == 1
    assert "passes through a symlink at 'src/analysis.py'" in text


def rewrite(path: Path, change, *, resign: bool) -> None:
    m = json.loads(path.read_bytes())
    change(m)
    if resign:
        m.pop("selfSha256", None)
        m["selfSha256"] = sha(rfc8785.dumps(m))
    path.write_bytes(rfc8785.dumps(m) + b"\n")


def test_validate_detects_an_edited_manifest(x6: Case, capsys) -> None:
    assert x6.freeze() == 0
    rewrite(x6.out, lambda m: m["input"]["seeds"].update(bootstrap=99), resign=False)
    code, text = run_validate(x6.out, x6.root, capsys)
    assert code == 1
    assert "selfSha256 does not verify" in text


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m["claims"].update(executes_untrusted_code=True), "$.claims"),
        (lambda m: m["sandboxIssue"].update(resolved=True), "$.sandboxIssue"),
        (lambda m: m.update(schemaVersion="other-manifest/v1"), "$.schemaVersion"),
        (lambda m: m["artifacts"][0].update(sha256="xyz"), "$.artifacts[0].sha256"),
        (lambda m: m["artifacts"][0].update(bytes=-1), "$.artifacts[0].bytes"),
        (lambda m: m.update(timestamp="2026-01-01"), "'timestamp' was unexpected"),
        (lambda m: m.pop("specDigest"), "'specDigest' is a required property"),
        (lambda m: m["input"]["seeds"].update(bootstrap="11"), "$.input.seeds.bootstrap"),
        (lambda m: m["powerPlan"].update(status="infeasible"), "$.powerPlan.status"),
    ],
)
def test_validate_rechecks_the_schema_even_when_resigned(
    x6: Case, capsys, change, message: str
) -> None:
    assert x6.freeze() == 0
    rewrite(x6.out, change, resign=True)
    code, text = run_validate(x6.out, None, capsys)
    assert code == 1
    assert message in text


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda m: m["artifacts"].append(dict(m["artifacts"][0], role="verdict_matrix")),
            "unknown role 'verdict_matrix'",
        ),
        (lambda m: m["artifacts"].pop(), "required role environment_manifest is missing"),
        (
            lambda m: m["input"]["execution_boundary"].update(
                sandbox_required=False, executes_untrusted_code=True
            ),
            "untrusted code may only run under a required sandbox",
        ),
        (lambda m: m["artifacts"][0].update(path="../analysis.py"), "contains '..'"),
        (lambda m: m["artifacts"][0].update(path="src/analysis.txt"), "wrong file type"),
        (
            lambda m: m["powerPlan"].update(calibrationSha256="0" * 64),
            "differs from $.powerPlan.calibrationSha256",
        ),
    ],
)
def test_validate_rechecks_the_rules_on_a_resigned_manifest(
    x6: Case, capsys, change, message: str
) -> None:
    assert x6.freeze() == 0
    rewrite(x6.out, change, resign=True)
    code, text = run_validate(x6.out, None, capsys)
    assert code == 1
    assert message in text


def test_validate_against_a_new_amendment_names_the_changed_constant(x6: Case, capsys) -> None:
    assert x6.freeze() == 0
    amended = copy.deepcopy(CONFIG)
    amended["constants"]["frozen"]["seed"] = 1
    code, text = run_validate(x6.out, x6.root, capsys, config=amended)
    assert code == 1
    assert "frozen.seed differs from the spec's current amendment" in text
    assert "frozen.ladder" not in text


def test_validate_notes_a_different_spec_digest_without_failing(x6: Case, capsys) -> None:
    assert x6.freeze() == 0
    rewrite(x6.out, lambda m: m.update(specDigest="sha256:" + "00" * 32), resign=True)
    code, text = run_validate(x6.out, x6.root, capsys)
    assert code == 0
    assert "was frozen under spec digest sha256:" + "00" * 32 in text


def test_validate_unreadable_input_exits_2(tmp_path: Path, x6: Case) -> None:
    args = SimpleNamespace(manifest=str(tmp_path / "missing.json"), root=None)
    with pytest.raises(UserError) as ei:
        COMMANDS["validate"](ctx(), args)
    assert ei.value.exit_code == 2 and "cannot read the manifest" in ei.value.message
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": ', encoding="utf-8")
    with pytest.raises(UserError) as ei:
        COMMANDS["validate"](ctx(), SimpleNamespace(manifest=str(bad), root=None))
    assert ei.value.exit_code == 2 and "line 1 column 12: not valid JSON" in ei.value.message
    assert x6.freeze() == 0
    args = SimpleNamespace(manifest=str(x6.out), root=str(tmp_path / "no-such-root"))
    with pytest.raises(UserError) as ei:
        COMMANDS["validate"](ctx(), args)
    assert ei.value.exit_code == 2 and "root is not a readable folder" in ei.value.message


# ------------------------------------------------------------------------------------------
# refusals: roles and file types


def test_unknown_role(x6: Case) -> None:
    x6.data["artifacts"].append({"role": "verdict_matrix", "path": "env/environment.json"})
    assert "$.artifacts[8].role: unknown role 'verdict_matrix'" in x6.refusal()


def test_missing_required_role(x6: Case) -> None:
    x6.drop("environment_manifest")
    assert "required role environment_manifest is missing" in x6.refusal()


def test_repeated_required_role(x6: Case) -> None:
    x6.write("src/other.py", b"pass\n")
    x6.data["artifacts"].append({"role": "analysis_code", "path": "src/other.py"})
    text = x6.refusal()
    assert "role analysis_code appears 2 times ($.artifacts[0].role, $.artifacts[8].role)" in text


def test_repeated_optional_role(x7: Case) -> None:
    x7.data["artifacts"].append({"role": "prompt_bundle", "path": "prompts/bundle.json"})
    assert "role prompt_bundle appears 2 times" in x7.refusal()


@pytest.mark.parametrize(
    "role, path, wanted",
    [
        ("analysis_code", "env/environment.json", ".py"),
        ("environment_manifest", "src/analysis.py", ".json or .jsonl"),
        ("power_plan", "data/calibration.jsonl", ".json"),
    ],
)
def test_wrong_file_type(x6: Case, role: str, path: str, wanted: str) -> None:
    x6.set_path(role, path)
    assert f"{role} {path}: wrong file type for role {role} (expected {wanted})" in x6.refusal()


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"python": "3.11",}\n', "line 1 column 19: not valid JSON"),
        (b'{"a": 1, "a": 2}\n', "not valid JSON: duplicate key 'a'"),
        (b'{"a": NaN}\n', "not valid JSON: NaN is not a JSON value"),
        (b"\xef\xbb\xbf{}\n", "starts with a byte-order mark (U+FEFF)"),
        (b'{"a": "\xff"}\n', "not UTF-8 (byte 7)"),
        (b"\x1f\x8b\x08\x00", "not UTF-8: a gzip-compressed file; decompress it (gunzip) first"),
        (b"", "line 1 column 1: not valid JSON"),
    ],
)
def test_metadata_json_that_does_not_parse(x6: Case, data: bytes, message: str) -> None:
    x6.write("env/environment.json", data)
    assert f"environment_manifest env/environment.json: {message}" in x6.refusal()


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"a":1}\n\n{"b":2}\n', "line 2: blank line"),
        (b'{"a":1}\n{"a":\n', "line 2: not valid JSON"),
        (b"", "empty; a JSON-lines file needs at least one line"),
        (b'{"a":1}\n{"x":1e999}\n', "line 2: not valid JSON: number 1e999 overflows"),
        # LF-terminated lines, as every JSONL reader asks (CR was taken as JSON whitespace)
        (b'{"a":1}\n{"b":2}\r\n', "line 2: CRLF line ending; use LF"),
        # round 7: the rules of every record reader (prereg.records)
        (
            b'{"a":1}\n{"b":' + b"9" * 5000 + b"}\n",
            "line 2: not valid JSON: at /b: integer 999999999999999999999999… is outside the"
            " range of a 64-bit integer",
        ),
        (
            '{"a":1}\n{"b":2}\n'.encode("utf-16"),
            "not UTF-8: UTF-16 text (it starts with UTF-16's byte-order mark); save it as UTF-8",
        ),
        (
            b'{"a":1}\n{"b":"x\x00"}\n',
            "line 2: not valid JSON: a NUL byte (U+0000) at column 8, inside a string",
        ),
    ],
)
def test_metadata_jsonl_that_does_not_parse(x6: Case, data: bytes, message: str) -> None:
    x6.write("inventory/candidates.jsonl", data)
    assert f"candidate_inventory inventory/candidates.jsonl: {message}" in x6.refusal()


# ------------------------------------------------------------------------------------------
# refusals: paths


def test_absolute_path(x6: Case) -> None:
    x6.set_path("analysis_code", str(x6.root / "src/analysis.py"))
    assert "is absolute; paths are relative to the root" in x6.refusal()


@pytest.mark.parametrize("path", ["../root/src/analysis.py", "src/../src/analysis.py"])
def test_dot_dot(x6: Case, path: str) -> None:
    x6.set_path("analysis_code", path)
    assert f"analysis_code {path}: '{path}' contains '..'" in x6.refusal()


@pytest.mark.parametrize("path", ["./src/analysis.py", "src//analysis.py"])
def test_unnormalised_path(x6: Case, path: str) -> None:
    x6.set_path("analysis_code", path)
    assert "has an empty or '.' component" in x6.refusal()


def test_symlinked_folder_escaping_the_root(x6: Case) -> None:
    outside = x6.tmp / "outside"
    outside.mkdir()
    (outside / "environment.json").write_bytes(b"{}\n")
    (x6.root / "ext").symlink_to(outside, target_is_directory=True)
    x6.set_path("environment_manifest", "ext/environment.json")
    text = x6.refusal()
    assert "environment_manifest ext/environment.json: escapes the root after resolution" in text


def test_symlinked_file_escaping_the_root(x6: Case) -> None:
    (x6.tmp / "outside.py").write_bytes(b"pass\n")
    (x6.root / "src/link.py").symlink_to(x6.tmp / "outside.py")
    x6.set_path("analysis_code", "src/link.py")
    assert "analysis_code src/link.py: escapes the root after resolution" in x6.refusal()


def test_symlink_at_the_file_inside_the_root(x6: Case) -> None:
    (x6.root / "src/alias.py").symlink_to("analysis.py")
    x6.set_path("analysis_code", "src/alias.py")
    text = x6.refusal()
    assert "analysis_code src/alias.py: passes through a symlink at 'src/alias.py'" in text


def test_symlink_at_a_folder_inside_the_root(x6: Case) -> None:
    (x6.root / "code").symlink_to("src", target_is_directory=True)
    x6.set_path("analysis_code", "code/analysis.py")
    assert "passes through a symlink at 'code'; symlinks are refused" in x6.refusal()


def test_missing_file_and_folder_bound_as_file(x6: Case) -> None:
    (x6.root / "src/folder.py").mkdir()
    x6.set_path("analysis_code", "src/folder.py")
    x6.set_path("power_planning_code", "src/missing.py")
    text = x6.refusal()
    assert "analysis_code src/folder.py: is not a regular file" in text
    assert "power_planning_code src/missing.py: does not exist" in text


# ------------------------------------------------------------------------------------------
# refusals: the power plan and the calibration statistics


def test_plan_not_canonical(x6: Case) -> None:
    x6.set_plan(make_plan(x6.calibration, canonical=False))
    assert "power_plan plan/power_plan.json: canonical is false" in x6.refusal()


def test_plan_self_digest_does_not_verify(x6: Case) -> None:
    plan = make_plan(x6.calibration)
    plan["selectedTaskCount"] = 75  # edited after it was signed
    x6.set_plan(plan)
    text = x6.refusal()
    assert f"selfSha256 does not verify (recorded {plan['selfSha256']}" in text


def test_plan_frozen_constants_differ_each_named(x6: Case) -> None:
    frozen = copy.deepcopy(CONSTANTS["frozen"])
    frozen["seed"] = 1
    frozen["ladder"] = [50, 100]
    frozen["planning_method"] = "cluster-t"
    x6.set_plan(make_plan(x6.calibration, frozen=frozen))
    text = x6.refusal()
    for key in ("seed", "ladder", "planning_method"):
        assert f"frozen.{key} differs from the spec's current amendment" in text
    # the values in the file's words (JSON), not Python's
    assert ': "cluster-t" here, "' in text and "[50, 100] here" in text
    for key in ("smallest_effect", "simulations_per_rung", "target_power", "block_size"):
        assert f"frozen.{key}" not in text


def test_development_plan_is_refused_on_both_counts(x6: Case) -> None:
    frozen = dict(CONSTANTS["frozen"], simulations_per_rung=2000)
    x6.set_plan(make_plan(x6.calibration, canonical=False, frozen=frozen))
    text = x6.refusal()
    assert "canonical is false" in text
    assert (
        "frozen.simulations_per_rung differs from the spec's current amendment: 2000 here, 10000"
        in text
    )


def test_plan_frozen_missing_and_extra_keys(x6: Case) -> None:
    frozen = {k: v for k, v in CONSTANTS["frozen"].items() if k != "block_size"}
    frozen["batch_size"] = 64
    x6.set_plan(make_plan(x6.calibration, frozen=frozen))
    text = x6.refusal()
    assert "frozen.block_size is missing" in text
    assert "frozen.batch_size is not a frozen constant" in text


def test_infeasible_plan(x6: Case) -> None:
    x6.set_plan(
        make_plan(
            x6.calibration,
            status="infeasible",
            reasons=["eligible_repository_count < 2"],
            rungs=[],
            selectedTaskCount=None,
        )
    )
    assert 'status "infeasible" cannot authorize a freeze' in x6.refusal()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1, 2]", "a power plan is a JSON object"),
        ('{"schema": "x"}', "not a power plan: $: 'canonical' is a required property"),
    ],
)
def test_plan_not_a_plan(x6: Case, text: str, message: str) -> None:
    x6.write("plan/power_plan.json", text.encode())
    assert message in x6.refusal()


def test_plan_of_another_schema(x6: Case) -> None:
    x6.set_plan(make_plan(x6.calibration, schemaVersion="other-plan/v1"))
    assert 'schemaVersion "other-plan/v1" is not "prereg-s3-power-plan/v2"' in x6.refusal()


def test_calibration_statistics_differ_from_the_plan(x6: Case) -> None:
    changed = x6.calibration + x6.calibration.splitlines(keepends=True)[0].replace(
        b"task0", b"task9"
    )
    x6.write("data/calibration.jsonl", changed)
    text = x6.refusal()
    assert (
        f"calibration_statistics data/calibration.jsonl: SHA-256 {sha(changed)} differs from "
        f"the power plan's calibrationSha256 {sha(x6.calibration)}"
    ) in text


# ------------------------------------------------------------------------------------------
# refusals: outcome material in metadata


def test_forbidden_key_deep_in_a_json_file(x6: Case) -> None:
    doc = {
        "python": "3.11",
        "runs": [{"id": 1}, {"id": 2, "meta": {"scores": {"VERDICT": "pass"}}}],
    }
    text = json.dumps(doc, indent=2)
    x6.write("env/environment.json", text.encode())
    # the line, found independently: the only line holding the key
    line = 1 + text.splitlines().index('          "VERDICT": "pass"')
    msg = x6.refusal()
    assert (
        f"environment_manifest env/environment.json: line {line}: $.runs[1].meta.scores.VERDICT: "
        "forbidden key 'VERDICT' (normalised 'verdict')"
    ) in msg


def test_forbidden_key_on_line_1000_of_a_jsonl_file(x6: Case) -> None:
    lines = [json.dumps({"task_id": f"t{i}", "info": {"lang": "py"}}) for i in range(1, 1201)]
    lines[999] = json.dumps({"task_id": "t1000", "info": {"runs": [{"Model-Output": "diff"}]}})
    x6.write("inventory/candidates.jsonl", ("\n".join(lines) + "\n").encode())
    msg = x6.refusal()
    assert (
        'candidate_inventory inventory/candidates.jsonl: line 1000: $.info.runs[0]["Model-Output"]: '
        "forbidden key 'Model-Output' (normalised 'model_output')"
    ) in msg
    assert "line 999" not in msg and "line 1001" not in msg


@pytest.mark.parametrize("key", ["verdicts", "Vote", "VOTES", "model-outputs", "Model_Output"])
def test_every_forbidden_spelling(x7: Case, key: str) -> None:
    x7.write("prompts/bundle.json", json.dumps({"prompts": [{key: 1}]}).encode())
    text = x7.refusal()
    assert f"$.prompts[0].{key}: forbidden key {key!r}" in text or (
        f'$.prompts[0]["{key}"]: forbidden key {key!r}' in text
    )


def test_forbidden_key_in_the_calibration_statistics_and_the_plan(x6: Case) -> None:
    plan = make_plan(x6.calibration, warnings=[{"votes": 3}])
    x6.set_plan(plan)
    assert (
        "power_plan plan/power_plan.json: line 1: $.warnings[0].votes: forbidden key"
        in x6.refusal()
    )


def test_forbidden_keys_are_capped_per_file(x6: Case) -> None:
    lines = [json.dumps({"verdict": i}) for i in range(120)]
    x6.write("inventory/candidates.jsonl", ("\n".join(lines) + "\n").encode())
    with pytest.raises(UserError) as ei:
        x6.freeze()
    hits = [p for p in ei.value.problems if p.startswith("candidate_inventory")]
    assert len(hits) == CONSTANTS["freeze_rules"]["error_cap"] + 1
    assert hits[-1] == "candidate_inventory inventory/candidates.jsonl: … and 70 more"


def test_forbidden_names_only_as_keys(x6: Case) -> None:
    x6.write(
        "env/environment.json", b'{"notes": ["verdict", "vote"], "verdict_count": 0, "voter": 1}\n'
    )
    assert x6.freeze() == 0


# ------------------------------------------------------------------------------------------
# refusals: execution boundary, X7 and models


def test_untrusted_code_without_a_required_sandbox(x6: Case) -> None:
    x6.data["execution_boundary"] = {"executes_untrusted_code": True, "sandbox_required": False}
    text = x6.refusal()
    assert (
        "$.execution_boundary.executes_untrusted_code is true while "
        "$.execution_boundary.sandbox_required is false"
    ) in text


def test_x7_without_prompt_bundle(x7: Case) -> None:
    x7.drop("prompt_bundle")
    assert "freeze target X7 requires role prompt_bundle, which is not bound" in x7.refusal()


def test_x7_with_two_lineages(x7: Case) -> None:
    x7.data["models"][2]["base_lineage"] = "alpha"
    text = x7.refusal()
    assert (
        "freeze target X7 needs at least 3 distinct base_lineage values among models not "
        "benchmark-specifically fine-tuned; found 2 ('alpha', 'beta')"
    ) in text


def test_fine_tuned_model_is_named_and_not_counted(x7: Case) -> None:
    x7.data["models"][2]["benchmark_specific_finetune"] = True
    x7.data["models"][2]["id"] = "swe-tuned-judge"
    text = x7.refusal()
    assert (
        "$.models[2]: model 'swe-tuned-judge' is benchmark-specifically fine-tuned "
        "(benchmark_specific_finetune true) and is refused from the X7 freeze"
    ) in text
    assert "found 2 ('alpha', 'beta')" in text


def test_fine_tuned_model_refused_from_x6_too(x6: Case) -> None:
    x6.data["models"][0]["benchmark_specific_finetune"] = True
    assert "model 'judge-a' is benchmark-specifically fine-tuned" in x6.refusal()


def test_several_problems_reported_together(x7: Case) -> None:
    x7.drop("prompt_bundle")
    x7.drop("stage_assignment")
    x7.data["execution_boundary"] = {"executes_untrusted_code": True, "sandbox_required": False}
    x7.set_plan(make_plan(x7.calibration, canonical=False))
    with pytest.raises(UserError) as ei:
        x7.freeze()
    assert len(ei.value.problems) == 4
    assert "freeze refused (4 problem(s))" in ei.value.message


# ------------------------------------------------------------------------------------------
# refusals: the freeze input itself


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d.update(repository_commit="0123456789abcdef"),
            "$.repository_commit: '0123456789abcdef' does not match",
        ),
        (
            lambda d: d.update(repository_commit="0123456789ABCDEF0123456789ABCDEF01234567"),
            "(a 40-hex lowercase git commit)",
        ),
        (
            lambda d: d["upstream_benchmark"].update(commit=123),
            "$.upstream_benchmark.commit: 123 is not of type 'string'",
        ),
        (
            lambda d: d["upstream_benchmark"]["artifact_digests"].update(x="md5:00"),
            "$.upstream_benchmark.artifact_digests.x: 'md5:00' does not match",
        ),
        (
            lambda d: d.update(container_image_digest="sha256:" + "AB" * 32),
            "$.container_image_digest:",
        ),
        (
            lambda d: d["seeds"].update(bootstrap=1.0),
            "$.seeds.bootstrap: 1.0 is not of type 'integer'",
        ),
        (
            lambda d: d["seeds"].update(permutation=True),
            "$.seeds.permutation: True is not of type 'integer'",
        ),
        (
            lambda d: d["seeds"].update(stage_assignment="13"),
            "$.seeds.stage_assignment: '13' is not of type 'integer'",
        ),
        (
            lambda d: d["seeds"].update(bootstrap=-1),
            "$.seeds.bootstrap: -1 is less than the minimum of 0",
        ),
        (
            lambda d: d["seeds"].update(bootstrap=2**60),
            "$.seeds.bootstrap: 1152921504606846976 is greater than the maximum",
        ),
        (
            lambda d: d["execution_boundary"].update(sandbox_required="yes"),
            "$.execution_boundary.sandbox_required: 'yes' is not of type 'boolean'",
        ),
        (
            lambda d: d["models"][0].update(benchmark_specific_finetune=0),
            "$.models[0].benchmark_specific_finetune: 0 is not of type 'boolean'",
        ),
        (
            lambda d: d.update(freeze_target="X8"),
            "$.freeze_target: 'X8' is not one of ['X6', 'X7']",
        ),
        (
            lambda d: d.pop("contamination_status"),
            "$: 'contamination_status' is a required property",
        ),
        (
            lambda d: d.update(verdicts=[]),
            "$: Additional properties are not allowed ('verdicts' was unexpected)",
        ),
        (lambda d: d["artifacts"][0].pop("path"), "$.artifacts[0]: 'path' is a required property"),
        (
            lambda d: d.update(schema="idkmesh.s3-freeze-input.v0"),
            "$.schema: 'idkmesh.s3-freeze-input.v0' is not 'idkmesh.s3-freeze-input.v1'",
        ),
        (lambda d: d["models"][0].update(id="\ud800"), "canonical JSON cannot represent"),
    ],
)
def test_input_contract(x6: Case, change, message: str) -> None:
    change(x6.data)
    text = x6.refusal()
    assert "freeze-input.json: freeze input refused" in text
    assert message in text


def test_a_huge_bad_value_of_the_input_is_not_echoed_whole(x6: Case) -> None:
    # jsonschema's message holds the whole value: 200,000 items made a 1.2 MB message
    x6.data["freeze_target"] = [1] * 200_000
    with pytest.raises(UserError) as ei:
        x6.freeze()
    (problem,) = ei.value.problems
    # 199 characters of the message ("[" and 66 times "1, "), then "…"
    assert problem.split("$.freeze_target: ", 1)[1] == "[" + "1, " * 66 + "…"


def test_input_problems_collected_together(x6: Case) -> None:
    x6.data["repository_commit"] = "zz"
    x6.data["seeds"]["bootstrap"] = "1"
    x6.data["execution_boundary"]["sandbox_required"] = None
    with pytest.raises(UserError) as ei:
        x6.freeze()
    assert len(ei.value.problems) == 3


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"schema": "idkmesh.s3-freeze-input.v1",\n "seeds": {"a": 1, "a": 2}}',
            "duplicate key 'a'",
        ),
        ('{"seeds": NaN}', "NaN is not a JSON value"),
        ('{"schema": \n', "line 2 column 1: not valid JSON"),
        ("[]", "$: a freeze input is a JSON object"),
    ],
)
def test_input_that_does_not_parse(x6: Case, text: str, message: str) -> None:
    assert message in x6.refusal(input_text=text)


def test_unreadable_input_and_root(x6: Case) -> None:
    args = SimpleNamespace(input=str(x6.tmp / "nope.json"), root=str(x6.root), out=str(x6.out))
    with pytest.raises(UserError, match="cannot read the freeze input"):
        COMMANDS["freeze_manifest"](ctx(), args)
    x6.input.write_text(json.dumps(x6.data), encoding="utf-8")
    args = SimpleNamespace(input=str(x6.input), root=str(x6.tmp / "no-root"), out=str(x6.out))
    with pytest.raises(UserError, match="root is not a readable folder"):
        COMMANDS["freeze_manifest"](ctx(), args)
    assert not x6.out.exists()


def test_existing_output_is_never_overwritten(x6: Case) -> None:
    x6.out.write_bytes(b"keep me\n")
    with pytest.raises(UserError) as ei:
        x6.freeze()
    assert ei.value.exit_code != 0
    assert "output file already exists; refusing to overwrite it" in ei.value.message
    assert x6.out.read_bytes() == b"keep me\n"
    assert os.listdir(x6.out.parent) == ["manifest.json"]


def test_existing_output_that_is_a_dangling_symlink(x6: Case) -> None:
    x6.out.symlink_to(x6.tmp / "elsewhere.json")
    with pytest.raises(UserError, match="already exists"):
        x6.freeze()
    assert not (x6.tmp / "elsewhere.json").exists()


# ------------------------------------------------------------------------------------------
# the bundled demo


def test_bundled_demo_input_freezes(tmp_path: Path, capsys) -> None:
    """The demo's artifacts and input freeze with a plan over its calibration statistics.

    The demo's plan is written by the plan engine (see examples/s3/freeze-demo/README.md);
    here a plan with the same fields is made for a stand-in calibration file.
    """
    demo = EXAMPLES / "freeze-demo"
    root = tmp_path / "s3"
    shutil.copytree(demo, root / "freeze-demo")
    data = json.loads((demo / "freeze-input.json").read_text(encoding="utf-8"))
    paths = {a["role"]: a["path"] for a in data["artifacts"]}
    calibration = calibration_lines(12)
    (root / paths["calibration_statistics"]).write_bytes(calibration)
    (root / paths["power_plan"]).write_bytes(plan_bytes(make_plan(calibration)))
    out = tmp_path / "manifest.json"
    args = SimpleNamespace(input=str(demo / "freeze-input.json"), root=str(root), out=str(out))
    assert COMMANDS["freeze_manifest"](ctx(), args) == 0
    manifest = json.loads(out.read_bytes())
    assert manifest["input"]["freeze_target"] == "X7"
    assert len(manifest["artifacts"]) == len(data["artifacts"])
    assert run_validate(out, root, capsys)[0] == 0


def plan_engine_context() -> StudyContext:
    """The compiled study's context: the plan engine and the freeze read one spec."""
    return ctx()


def run_plan_engine(context: StudyContext, out: Path, **over: Any) -> int:
    from prereg.engines.clusterpower.plan_commands import COMMANDS as PLAN

    args = dict(
        calibration=str(out.parent.parent / "calibration-sample.jsonl"),
        eligible_task_count=500,
        eligible_repository_count=12,
        eligible_pass_items=210,
        eligible_fail_items=430,
        out=str(out),
        simulations=None,
    )
    args.update(over)
    return PLAN["power_plan"](context, SimpleNamespace(**args))


def test_bundled_demo_with_a_canonical_plan_from_the_plan_engine(tmp_path: Path, capsys) -> None:
    root = tmp_path / "s3"
    shutil.copytree(EXAMPLES, root)
    context = plan_engine_context()
    plan = root / "freeze-demo" / "power_plan.json"
    plan.unlink(missing_ok=True)  # a plan dropped into the demo folder is made afresh here
    assert run_plan_engine(context, plan) == 0
    out = tmp_path / "manifest.json"
    args = SimpleNamespace(
        input=str(root / "freeze-demo" / "freeze-input.json"), root=str(root), out=str(out)
    )
    assert COMMANDS["freeze_manifest"](context, args) == 0
    manifest = json.loads(out.read_bytes())
    bound = {a["role"]: a for a in manifest["artifacts"]}
    assert bound["calibration_statistics"]["sha256"] == sha(
        (EXAMPLES / "calibration-sample.jsonl").read_bytes()
    )
    assert manifest["powerPlan"]["status"] in CONSTANTS["freeze_rules"]["accepted_plan_statuses"]
    code, text = run_validate(out, root, capsys)
    assert code == 0, text


@pytest.mark.parametrize(
    "over, messages",
    [
        (
            {"simulations": 200},
            ["canonical is false", "frozen.simulations_per_rung differs"],
        ),
        (
            {"simulations": 200, "eligible_repository_count": 1},
            ["canonical is false", 'status "infeasible" cannot authorize a freeze'],
        ),
    ],
)
def test_development_and_infeasible_plans_from_the_plan_engine_are_refused(
    tmp_path: Path, over: dict[str, Any], messages: list[str]
) -> None:
    root = tmp_path / "s3"
    shutil.copytree(EXAMPLES, root)
    context = plan_engine_context()
    plan = root / "freeze-demo" / "power_plan.json"
    plan.unlink(missing_ok=True)
    run_plan_engine(context, plan, **over)
    out = tmp_path / "manifest.json"
    args = SimpleNamespace(
        input=str(root / "freeze-demo" / "freeze-input.json"), root=str(root), out=str(out)
    )
    with pytest.raises(UserError) as ei:
        COMMANDS["freeze_manifest"](context, args)
    text = "\n".join(ei.value.lines())
    for m in messages:
        assert m in text
    assert not out.exists()


def test_the_contracts_predicates_agree_with_jsonschema(x7: Case) -> None:
    """What ``contract_problems`` accepts without jsonschema is what jsonschema (with the
    contract's integer rule: 1.0 is not an integer) accepts, for the manifest, the freeze
    input and the power plan, on each written document and 300 mutations of it."""
    import random

    from prereg.engines.clusterpower import freeze
    from prereg.engines.clusterpower.config_freeze import freeze_config

    assert x7.freeze() == 0
    fc = freeze_config(CONFIG)
    manifest = json.loads(x7.out.read_text())
    plan = json.loads((x7.root / "plan/power_plan.json").read_text())
    cases = [
        (freeze.manifest_contract(fc), manifest),
        (fc.contract, x7.data),
        (fc.engine_contract, x7.data),
        (freeze._PLAN_CONTRACT, plan),
    ]
    rng = random.Random(16)
    for schema, doc in cases:
        accept = freeze._contract_predicate(schema)
        assert accept is not None
        validator = freeze._contract_validator(schema)
        assert accept(doc) and validator.is_valid(doc)
        refused = 0
        for m in mutations(doc, rng, 300):
            assert accept(m) == validator.is_valid(m), m
            refused += not accept(m)
            if not accept(m):
                assert freeze.contract_problems(m, schema)
        assert refused > 30
