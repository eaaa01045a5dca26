"""`prereg jev-multicorrect <command>` end to end, on the bundled sample: through the CLI's
`main` in this process, and the demo's steps in a subprocess.

The study's commands (declared in its spec) run as a user runs them; the report is checked
against a plain-Python reference computed from the JSONL files directly, refusals against
their exit codes, and a fact changed in a copy of the spec changes behaviour with no runtime
edit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import rfc8785
import yaml
from jev_helpers import EXAMPLES, MODULE, exact_ece, pair, ref_metrics

from prereg.outputs import camel
from tests.conftest import ROOT, run_main, run_prereg

STUDY = "jev-multicorrect"
GRID = [k / 100 for k in range(101)]
FIGURES = ("exact_count", "tp", "fp", "fn", "gap_count", "below_uniform_count", "refusals")
FIGURES += ("below_uniform_options", "top_k_exact_count", "no_correct_count", "lists")


def prereg(*args, project: Path | None = None):
    pre = ["--project", str(project)] if project is not None else []
    return run_main(*pre, STUDY, *args)


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


def score_args(out: Path, binary: bool = True, rounding: int | None = None, d: Path = EXAMPLES):
    args = ["score", "--lists", d / "lists.jsonl", "--labels", d / "labels.jsonl"]
    args += ["--predictions", d / "predictions.jsonl", "--out", out]
    if binary:
        args += ["--binary-outputs", d / "binary.jsonl"]
    if rounding is not None:
        args += ["--rounding-decimals", str(rounding)]
    return args


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (EXAMPLES / name).read_text("utf-8").splitlines()]


def reference_pairs() -> dict[str, list]:
    """(EvaluatorRow, Prediction) pairs per split, read from the sample with plain json."""
    lists = {r["request_id"]: r for r in _jsonl("lists.jsonl")}
    preds = {r["request_id"]: r for r in _jsonl("predictions.jsonl")}
    out: dict[str, list] = {"validation": [], "test": []}
    for lab in _jsonl("labels.jsonl"):
        rid = lab["request_id"]
        p = preds[rid]
        probs = None if p["refused"] else p["probabilities"]
        cands = lists[rid]["candidates"]
        out[lab["split"]].append(pair(rid, probs, set(lab["correct"]), lab["split"], cands))
    return out


def best_threshold(pairs, ties: str) -> float:
    counts = [ref_metrics(pairs, t)["exact_count"] for t in GRID]
    best = [t for t, c in zip(GRID, counts, strict=True) if c == max(counts)]
    return best[0] if ties == "smallest" else best[-1]


def test_score_matches_the_reference_on_the_sample(tmp_path):
    out = tmp_path / "REPORT.json"
    p = prereg(*score_args(out))
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    doc = json.loads(data)
    t, test = doc["threshold"], doc["splits"]["test"]
    assert p.stderr == "" and p.stdout == (
        f"{out}: threshold {t} fitted on validation; test exact-set accuracy "
        f"{test['exactSetAccuracy']}, micro F1 {test['microF1']}\n"
    )
    assert data == rfc8785.dumps(doc) + b"\n"
    assert doc["studyId"] == STUDY and doc["specDigest"] == MODULE.SPEC_DIGEST
    assert doc["schemaVersion"] == "prereg-jev-multicorrect-report/v2"
    for key, name in (("lists", "lists"), ("labels", "labels"), ("predictions", "predictions")):
        raw = (EXAMPLES / f"{name}.jsonl").read_bytes()
        assert doc["inputs"][key] == {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}
    pairs = reference_pairs()
    t = best_threshold(pairs["validation"], "smallest")
    assert doc["threshold"] == t and doc["thresholdNumerator"] == round(t * 100)
    assert len(doc["fitCurve"]) == 101
    for split in ("validation", "test"):
        ref = ref_metrics(pairs[split], t)
        for f in FIGURES:
            assert doc["splits"][split][camel(f)] == ref[f], (split, f)
        assert doc["splits"][split]["microF1"] == pytest.approx(ref["micro_f1"], abs=1e-12)
        assert doc["splits"][split]["gapMean"] == pytest.approx(ref["gap_mean"], abs=1e-9)
    binary = _jsonl("binary.jsonl")
    q = [b["probability"] for b in binary]
    y = [b["label"] for b in binary]
    assert doc["binaryOutputs"] == len(binary)
    assert doc["ece"] == pytest.approx(float(exact_ece(q, y)), abs=1e-12)
    assert doc["eceExcludingFirstBin"] == pytest.approx(float(exact_ece(q, y, True)), abs=1e-12)


def test_score_rounds_only_what_it_reports(tmp_path):
    raw, rounded = tmp_path / "raw.json", tmp_path / "r2.json"
    assert prereg(*score_args(raw)).returncode == 0
    p = prereg(*score_args(rounded, rounding=2))
    assert p.returncode == 0, p.stderr
    a, b = json.loads(raw.read_bytes()), json.loads(rounded.read_bytes())
    assert b["roundingDecimals"] == 2 and a["roundingDecimals"] is None
    assert b["threshold"] == a["threshold"]  # the fit uses unrounded figures
    for f in ("microF1", "gapMean", "exactSetAccuracy", "belowUniformShare"):
        assert abs(b["splits"]["test"][f] - a["splits"]["test"][f]) <= 0.005 + 1e-12
        assert round(b["splits"]["test"][f], 2) == b["splits"]["test"][f]
    assert abs(b["ece"] - a["ece"]) <= 0.005 + 1e-12


def test_score_without_binary_outputs_has_no_ece(tmp_path):
    out = tmp_path / "R.json"
    assert prereg(*score_args(out, binary=False)).returncode == 0
    doc = json.loads(out.read_bytes())
    assert "ece" not in doc and "binary_outputs" not in doc["inputs"]


def test_score_refuses_an_existing_report(tmp_path):
    out = tmp_path / "R.json"
    out.write_bytes(b"keep")
    p = prereg(*score_args(out))
    assert p.returncode == 2
    assert str(out) in p.stderr and out.read_bytes() == b"keep"
    no_traceback(p)


def test_score_refuses_bad_input_with_file_and_line(tmp_path):
    d = tmp_path / "in"
    shutil.copytree(EXAMPLES, d, ignore=shutil.ignore_patterns("*.py"))
    lines = (d / "predictions.jsonl").read_text("utf-8").splitlines()
    row = json.loads(lines[4])
    row["probabilities"] = [0.9] * len(row["probabilities"] or [0, 0])
    row["refused"] = False
    lines[4] = json.dumps(row)
    (d / "predictions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "R.json"
    p = prereg(*score_args(out, d=d))
    assert p.returncode == 2
    assert "predictions.jsonl:5" in p.stderr and "sum" in p.stderr
    assert not out.exists()
    no_traceback(p)


def test_score_needs_its_required_options(tmp_path):
    p = prereg("score", "--lists", EXAMPLES / "lists.jsonl", "--out", tmp_path / "R.json")
    assert p.returncode == 2
    assert "--labels" in p.stderr and "--predictions" in p.stderr
    assert not (tmp_path / "R.json").exists()


def test_diagnostic_passes_for_the_study_seeds():
    p = prereg("diagnostic", "--seeds", "42,43,44")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert p.stdout.encode() == rfc8785.dumps(doc) + b"\n"
    assert doc["passed"] is True and doc["specDigest"] == MODULE.SPEC_DIGEST
    assert [s["seed"] for s in doc["seeds"]] == [42, 43, 44]
    assert all(len(s["contracts"]) == 8 and s["passed"] for s in doc["seeds"])
    # without --seeds: the spec's diagnostic seeds, the same bytes
    spec = yaml.safe_load((ROOT / "spec" / "studies" / f"{STUDY}.yaml").read_text("utf-8"))
    seeds = next(c["value"] for c in spec["constants"] if c["id"] == "diagnostic-seeds")
    assert seeds == [42, 43, 44]
    assert prereg("diagnostic").stdout == p.stdout


def test_diagnostic_writes_a_new_file_when_asked(tmp_path):
    out = tmp_path / "diagnostic.json"
    p = prereg("diagnostic", "--seeds", "44", "--out", out)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"seed 44: 8 of 8 contracts hold\n{out}: passed\n"
    printed = prereg("diagnostic", "--seeds", "44")
    assert out.read_text("utf-8") == printed.stdout
    again = prereg("diagnostic", "--seeds", "43", "--out", out)
    assert again.returncode == 2 and str(out) in again.stderr
    assert out.read_text("utf-8") == printed.stdout
    no_traceback(again)


@pytest.mark.parametrize("seeds, message", [("4x", "integers"), ("42,42", "twice"), ("", "seed")])
def test_diagnostic_refuses_bad_seeds(seeds, message):
    p = prereg("diagnostic", "--seeds", seeds)
    assert p.returncode == 2 and message in p.stderr and p.stdout == ""
    no_traceback(p)


def test_a_fact_changed_in_the_spec_changes_behaviour(project_copy: Path, tmp_path: Path):
    """Ties go to the largest threshold, the gap is unscaled, the report schema is renamed
    and a diagnostic reference is wrong: no runtime edit."""
    spec = project_copy / "spec" / "studies" / f"{STUDY}.yaml"
    # an unsealed copy: this test changes registered content to see the runtime follow
    spec.with_name(spec.name.replace(".yaml", ".seal.json")).unlink()
    text = spec.read_text(encoding="utf-8")
    edits = [
        ("ties: smallest}", "ties: largest}"),
        ("gap_scale: 100,", "gap_scale: 1,"),
        ("report: prereg-jev-multicorrect-report/v2", "report: example-jev-report/v3"),
        ("uneven_gap: 24", "uneven_gap: 25"),
    ]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec.write_text(text, encoding="utf-8")
    before = tmp_path / "before.json"
    p = prereg(*score_args(before), project=project_copy)
    assert p.returncode == 2 and "spec changed since the last compile" in p.stderr
    assert not before.exists()
    c = run_main("--project", project_copy, "compile", STUDY)
    assert c.returncode == 0, c.stderr
    out, base = tmp_path / "after.json", tmp_path / "base.json"
    assert prereg(*score_args(out), project=project_copy).returncode == 0
    assert prereg(*score_args(base)).returncode == 0
    doc, ref = json.loads(out.read_bytes()), json.loads(base.read_bytes())
    assert doc["schemaVersion"] == "example-jev-report/v3"
    pairs = reference_pairs()
    t = best_threshold(pairs["validation"], "largest")
    assert t != ref["threshold"] and doc["threshold"] == t  # the sample has a tie
    assert doc["splits"]["test"]["exactCount"] == ref_metrics(pairs["test"], t)["exact_count"]
    assert doc["splits"]["validation"]["gapMean"] == pytest.approx(
        ref_metrics(pairs["validation"], t, scale=1)["gap_mean"], abs=1e-12
    )
    d = prereg("diagnostic", "--seeds", "42", project=project_copy)
    assert d.returncode == 1
    assert "seed 42: contract 7 (five_copy_gap) failed" in d.stderr
    assert json.loads(d.stdout)["passed"] is False


@pytest.mark.parametrize("command", ["score", "diagnostic"])
def test_help_lists_the_spec_arguments(command):
    p = prereg(command, "--help")
    assert p.returncode == 0
    assert ("--rounding-decimals" in p.stdout) == (command == "score")
    assert ("--seeds" in p.stdout) == (command == "diagnostic")


def test_the_demo_steps_of_this_study_run(project_copy: Path, tmp_path: Path):
    """examples/demo.json's jev steps, run by `prereg demo` in a copy of the project."""
    steps = json.loads((ROOT / "examples" / "demo.json").read_text(encoding="utf-8"))["steps"]
    ours = [s for s in steps if s["study"] == STUDY]
    assert [s["args"][0] for s in ours] == ["diagnostic", "score"]
    (project_copy / "examples").mkdir()
    shutil.copytree(EXAMPLES, project_copy / "examples" / "jev")
    (project_copy / "examples" / "demo.json").write_text(
        json.dumps({"steps": ours}), encoding="utf-8"
    )
    out = tmp_path / "demo"
    p = run_prereg("--project", project_copy, "demo", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "demo finished: 2 steps" in p.stdout
    assert json.loads((out / STUDY / "diagnostic.json").read_bytes())["passed"] is True
    report = json.loads((out / STUDY / "REPORT.json").read_bytes())
    assert report["roundingDecimals"] == 2 and report["binaryOutputs"] > 0
    assert (out / "index.html").exists()
    # the demo wrote nothing into the examples it read
    assert sorted(p.name for p in (project_copy / "examples" / "jev").rglob("*")) == sorted(
        p.name for p in EXAMPLES.rglob("*")
    )


def test_compiled_study_exposes_the_bound_python_api():
    from prereg.compiler.project import Project
    from prereg.study import load_generated
    from tests.conftest import ROOT

    study = load_generated(Project(ROOT), "jev-multicorrect")
    lst = study.PublicChoiceList(request_id="r1", question="q?", candidates=("a", "b"))
    seen = []
    got = study.collect_public_predictions(lambda item: seen.append(item) or [0.25, 0.75], [lst])
    assert seen == [lst]
    assert list(got) == ["r1"]
    with pytest.raises(AttributeError, match="has no attribute 'not_an_api_name'"):
        _ = study.not_an_api_name


def test_a_field_renamed_in_the_spec_contract_is_what_score_reads(
    project_copy: Path, tmp_path: Path
):
    """The choice lists' question field renamed in the record contract only (no constant
    repeats it): after recompiling, score reads the new name and refuses the old one."""
    spec = project_copy / "spec" / "studies" / f"{STUDY}.yaml"
    # an unsealed copy: this test changes registered content to see the runtime follow
    spec.with_name(spec.name.replace(".yaml", ".seal.json")).unlink()
    text = spec.read_text(encoding="utf-8")
    old = "{name: question, role: question,"
    assert text.count(old) == 1
    spec.write_text(text.replace(old, "{name: prompt, role: question,"), encoding="utf-8")
    c = run_main("--project", project_copy, "compile", STUDY)
    assert c.returncode == 0, c.stderr
    renamed = tmp_path / "renamed"
    shutil.copytree(EXAMPLES, renamed)
    lines = (EXAMPLES / "lists.jsonl").read_text("utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    (renamed / "lists.jsonl").write_text(
        "".join(
            json.dumps({("prompt" if k == "question" else k): v for k, v in r.items()}) + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    out, base = tmp_path / "after.json", tmp_path / "base.json"
    p = prereg(*score_args(out, d=renamed), project=project_copy)
    assert p.returncode == 0, p.stderr
    assert prereg(*score_args(base)).returncode == 0
    doc, ref = json.loads(out.read_bytes()), json.loads(base.read_bytes())
    assert doc.pop("specDigest") != ref.pop("specDigest")
    got, want = doc.pop("inputs"), ref.pop("inputs")
    assert got.pop("lists") != want.pop("lists") and got == want  # only the lists file differs
    assert doc == ref  # the same report from the same lists under the new name
    refused = tmp_path / "refused.json"
    p = prereg(*score_args(refused), project=project_copy)  # the sample, old name
    assert p.returncode == 2 and not refused.exists()
    no_traceback(p)
    assert "prompt" in p.stderr and "question" in p.stderr
