"""A different multi-correct study written as one YAML file, with no Python: every fact the
engine reads changed at once (field names by role, split ids and codes, the threshold grid and
its ties, the tolerance, the gap's scale and multi-correct minimum, the seeds, the diagnostic's
contracts, sizes, texts and five-copy references, its hypothesis, the output schema ids).  It
compiles and its commands run through the CLI on the bundled sample, renamed to its contracts;
the figures were checked by hand (tuning fit over 1/20 .. 19/20, ties to the largest)."""

from __future__ import annotations

import json
import shutil

from tests.conftest import FIXTURES, ROOT, run_main

STUDY = "mc-alloc-replication"
RENAMED = {
    "lists": {"request_id": "item_key", "question": "prompt_text", "candidates": "options"},
    "labels": {"request_id": "item_key", "split": "partition", "correct": "gold_indices"},
    "predictions": {
        "request_id": "item_key",
        "refused": "abstained",
        "probabilities": "option_probs",
    },
    "binary": {
        "request_id": "item_key",
        "candidate_index": "option_index",
        "probability": "p_yes",
        "label": "is_correct",
    },
}
SPLITS = {"validation": "tuning", "test": "heldout"}


def _project(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "variants" / STUDY, project)
    r = run_main("--project", project, "compile")
    assert r.returncode == 0, r.stderr
    inputs = {}
    for kind, names in RENAMED.items():
        lines = []
        for line in (ROOT / "examples" / "jev" / f"{kind}.jsonl").read_text().splitlines():
            row = json.loads(line)
            if "split" in row:
                row["split"] = SPLITS[row["split"]]
            lines.append(json.dumps({names[k]: v for k, v in row.items()}))
        inputs[kind] = tmp_path / f"{kind}.jsonl"
        inputs[kind].write_text("\n".join(lines) + "\n")
    return project, inputs


def test_the_variant_scores_and_runs_its_diagnostic(tmp_path):
    project, inputs = _project(tmp_path)
    report = tmp_path / "REPORT.json"
    r = run_main(
        "--project", project, STUDY, "score",
        "--lists", inputs["lists"], "--labels", inputs["labels"],
        "--predictions", inputs["predictions"], "--binary-outputs", inputs["binary"],
        "--rounding-decimals", "3", "--out", report,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "threshold 0.15 fitted on tuning; heldout exact-set accuracy 0.306" in r.stdout
    doc = json.loads(report.read_text())
    assert doc["schemaVersion"] == "acme-mc-report/v7"
    assert doc["studyId"] == STUDY
    assert (doc["fitSplit"], doc["evaluateSplit"]) == ("tuning", "heldout")
    assert (doc["threshold"], doc["thresholdNumerator"], doc["thresholdDenominator"]) == (
        0.15,
        3,
        20,
    )
    assert [p["threshold"] for p in doc["fitCurve"]][:2] == [0.05, 0.1]
    assert len(doc["fitCurve"]) == 19
    assert sorted(doc["splits"]) == ["heldout", "tuning"]
    tuning, heldout = doc["splits"]["tuning"], doc["splits"]["heldout"]
    assert tuning["exactCount"] == 56
    assert (heldout["lists"], heldout["exactCount"], heldout["exactSetAccuracy"]) == (
        160,
        49,
        0.306,
    )
    # the gap over lists with at least 3 correct options, at scale 1000 (373.6875 by hand)
    assert (heldout["gapCount"], heldout["gapMean"]) == (48, 373.688)
    assert (doc["binaryOutputs"], doc["ece"]) == (2381, 0.118)

    out = tmp_path / "diagnostic.json"
    r = run_main("--project", project, STUDY, "diagnostic", "--out", out)
    assert r.returncode == 0, r.stderr
    diag = json.loads(out.read_text())
    assert diag["schemaVersion"] == "acme-mc-diag/v3" and diag["passed"] is True
    assert [s["seed"] for s in diag["seeds"]] == [7, 11]  # the spec's seeds
    assert [c["contract"] for c in diag["seeds"][0]["contracts"]] == [
        "threshold_frozen",
        "refusals_fail",
        "five_copy_gap",
        "overlap_refused",
        "below_uniform_counted",
    ]
    five = diag["seeds"][0]["contracts"][2]["figures"]
    assert five["unevenGapExpected"] == 300 and abs(five["unevenGap"] - 300) < 1e-9


def test_the_variant_refuses_inputs_in_its_own_words(tmp_path):
    project, inputs = _project(tmp_path)
    labels = inputs["labels"].read_text().splitlines()
    row = json.loads(labels[0])
    row["partition"] = "validation"  # the original study's split
    inputs["labels"].write_text("\n".join([json.dumps(row), *labels[1:]]) + "\n")
    r = run_main(
        "--project", project, STUDY, "score",
        "--lists", inputs["lists"], "--labels", inputs["labels"],
        "--predictions", inputs["predictions"], "--out", tmp_path / "R.json",
    )  # fmt: skip
    assert r.returncode == 2
    assert (
        f"{inputs['labels']}:1: partition: 'validation' is not a split (expected 'tuning' or"
        " 'heldout')"
    ) in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "R.json").exists()
