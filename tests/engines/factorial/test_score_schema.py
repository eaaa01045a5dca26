"""SCORE.json of every factorial example (numbers, paired designs, calibration) validates against
the shipped factorial score schema, whatever metric kinds and contrast shapes it uses."""

from __future__ import annotations

import json

import pytest
import yaml

from prereg import outputs
from tests.conftest import ROOT
from tests.engines.factorial.examples import example_project, run

EXAMPLES = sorted(
    p.name
    for p in (ROOT / "examples").iterdir()
    if (p / "spec" / "studies" / f"{p.name}.yaml").exists()
)


@pytest.mark.parametrize("study", EXAMPLES)
def test_an_example_score_validates(tmp_path, study):
    spec = yaml.safe_load(
        (ROOT / "examples" / study / "spec/studies" / f"{study}.yaml").read_text()
    )
    assert spec["engine"] == "factorial"
    project = example_project(tmp_path, study)
    items = []
    # the engine offers items (and --items) to a study with an item manifest
    if any(c.get("role") == "items" for c in spec["record_contracts"]):
        assert run(project, study, "items", "--out", tmp_path / "items.jsonl") == 0
        items = ["--items", tmp_path / "items.jsonl"]
    scenario = spec["scenarios"][0]["id"]
    obs = tmp_path / "obs.jsonl"
    assert (
        run(project, study, "simulate", *items, "--scenario", scenario, "--seed", 3, "--out", obs)
        == 0
    )
    out = tmp_path / "SCORE.json"
    assert run(project, study, "score", *items, "--observations", obs, "--out", out) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    errors = [
        f"{e.json_path}: {e.message[:160]}"
        for e in outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc)
    ]
    assert errors == []
