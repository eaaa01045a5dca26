"""A scenario's `pairing` reads the item manifest; a study scored from a log alone (no
manifest) is told how to pair its rows instead (a cluster level of one row shared by every
cell), and the form the message gives compiles."""

from __future__ import annotations

import shutil

from prereg.cli import main
from tests.conftest import ROOT

SPEC = """\
id: paired-log
version: "0.1"
title: Paired verifiers from a log without a manifest
status: draft
engine: factorial
factors:
  - id: arm
    title: Verifier
    levels: [{id: cheap}, {id: costly}]
crossings:
  - {id: "{arm}", rows: 50, factors: [arm]}
totals:
  - {scope: all, rows: 100}
record_contracts:
  - id: verdict
    format: jsonl
    role: observation
    fields:
      - {name: item_id, type: string, min_length: 1}
      - {name: arm, factor: arm, type: string, allowed: [cheap, costly]}
      - {name: correct, type: boolean, nullable: true}
attempts:
  contract: verdict
  key: [item_id, arm]
  counts: last
  failed: [{field: correct, op: is_null}]
metrics:
  - id: accuracy
    title: Accuracy
    definition: Share right.
    compute: {kind: proportion, where: [{field: correct, op: eq, value: true}]}
hypotheses:
  - id: h
    title: Not inferior by more than 0.1
    analyses:
      - id: tango
        method: tango-test
        metric: accuracy
        a: {where: [{factor: arm, levels: [cheap]}]}
        b: {where: [{factor: arm, levels: [costly]}]}
        pair_by: item_id
        options: {alternative: greater, margin: -0.1}
    rule: {compare: {target: tango, quantity: p, op: lt, value: 0.05}}
decision:
  outcomes: [{id: cheap}, {id: costly}]
  rules:
    - {outcome: cheap, when: {verdict: {hypothesis: h, is: [supported]}}}
  otherwise: costly
scenarios:
  - id: same
    outcome: correct
    DEPENDENCE
    rates: [{rate: 0.85}]
constants:
  - id: reporting
    value: {decimals: 4, p_value_digits: 4, cell_interval: {method: wilson, level: 0.95}}
"""

CLUSTERS = "clusters: [{field: item_id, correlation: 0.5, shared: true, size: {low: 1, high: 1}}]"


def _compile(tmp_path, dependence: str) -> int:
    (tmp_path / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "spec" / "studies" / "paired-log.yaml"
    spec.write_text(SPEC.replace("DEPENDENCE", dependence))
    (tmp_path / "generated").mkdir(exist_ok=True)
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    return main(["--project", str(tmp_path), "compile"])


def test_pairing_without_a_manifest_names_the_clusters_form(tmp_path, capsys):
    assert _compile(tmp_path, "pairing: {field: item_id, correlation: 0.5}") == 2
    err = capsys.readouterr().err
    assert "paired-log.yaml:" in err and "at /scenarios/0/pairing/field" in err
    assert "the study has none: pair the rows of a log by 'item_id'" in err
    assert CLUSTERS in err
    assert "Traceback" not in err


def test_the_form_the_message_gives_compiles(tmp_path, capsys):
    assert _compile(tmp_path, CLUSTERS) == 0
