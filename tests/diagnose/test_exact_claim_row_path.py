"""A verdict claim of a study diagnosed row by row (rows named by two key fields of a log, no
item manifest) is not decided by the exact binomial path, whose per-kind contributions such a
design does not have: it used to read them as zeros, find the coverage gate failing and report
P(supported) = 0 "(exact)", so a claim of power failed and a claim of few false positives held,
whatever the data. Oracle: the binomial tail P(X >= 40 | n = 50, p) (scipy)."""

from __future__ import annotations

import json
import math
import shutil

from scipy.stats import binom

from prereg.cli import main
from tests.conftest import ROOT

SPEC = """\
id: one-arm
version: "0.1"
title: One model's accuracy from a log
status: draft
engine: factorial
factors:
  - id: model
    title: Model
    levels: [{id: base}, {id: new}]
crossings:
  - {id: "{model}", rows: 50, factors: [model]}
totals:
  - {scope: all, rows: 100}
record_contracts:
  - id: answer
    format: jsonl
    role: observation
    fields:
      - {name: item, type: string, min_length: 1}
      - {name: model, factor: model, type: string, allowed: [base, new]}
      - {name: correct, type: boolean, nullable: true}
attempts:
  contract: answer
  key: [item, model]
  counts: last
  failed: [{field: correct, op: is_null}]
metrics:
  - {id: coverage, title: Coverage, definition: Observed share., compute: {kind: coverage}}
  - id: accuracy
    title: Accuracy
    definition: Share right.
    compute: {kind: proportion, where: [{field: correct, op: eq, value: true}]}
gates:
  - {id: coverage, metric: coverage, op: ge, value: 0.95}
claims:
  - id: power
    statement: At a true 0.85, the rule holds in at least 80% of studies.
    verdict: {hypothesis: h, scenario: high}
    op: ge
    value: 0.8
  - id: false-positives
    statement: At a true 0.75, at most 10%.
    verdict: {hypothesis: h, scenario: low}
    op: le
    value: 0.1
hypotheses:
  - id: h
    title: new is right at least 80% of the time
    estimates:
      - id: new-acc
        metric: accuracy
        of: {where: [{factor: model, levels: [new]}]}
        interval: wilson
        level: 0.95
    rule: {compare: {target: new-acc, quantity: estimate, op: ge, value: 0.8}}
scenarios:
  - {id: high, outcome: correct, rates: [{rate: 0.85}]}
  - {id: low, outcome: correct, rates: [{rate: 0.75}]}
constants:
  - id: reporting
    value: {decimals: 4, p_value_digits: 4, cell_interval: {method: wilson, level: 0.95}}
"""


def test_a_verdict_claim_on_the_row_path_is_simulated(tmp_path):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "one-arm.yaml").write_text(SPEC)
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "one-arm", "diagnose", "--simulations", "400"]
    assert main([*args, "--seed", "3", "--out", str(out), "--quiet"]) == 0
    claims = {c["id"]: c for c in json.loads(out.read_text())["claims"]}
    n = 400
    for cid, rate in (("power", 0.85), ("false-positives", 0.75)):
        truth = binom.sf(39, 50, rate)  # P(k/50 >= 0.8) = P(k >= 40)
        got = claims[cid]
        assert got["method"] == "simulation"
        assert abs(got["figure"] - truth) < 4 * math.sqrt(truth * (1 - truth) / n)
    assert claims["power"]["holds"] is True  # 0.880 >= 0.8
    assert claims["false-positives"]["holds"] is False  # 0.262 > 0.1
