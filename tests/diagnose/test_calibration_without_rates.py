"""A calibration scenario in the docs' words: an outcome and a calibration entry per cell (the
confidence's law and curve), no rates.  The curve draws every row's outcome, so a rate would be
unused: the study compiles, simulate writes the same records and diagnose reports the same
figures as the same study with rates invented for it (the fixture's 0.75 and 0.3 "not used"),
and the truths are the curve's (ECE 0.12 when overconfident by 0.12 above 0.5).  A cell no
entry takes still needs a rate: compile refuses, at the scenario's line, naming the cell and
both ways out."""

from __future__ import annotations

import json
import shutil

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT

WITH_RATES = (FIXTURES / "diagnose" / "calibration.yaml").read_text(encoding="utf-8")
RATES = (
    "    rates:\n      - {rate: 0.75}\n",
    "    rates:\n      - {rate: 0.3}  # not used: the calibration curve draws every row's outcome\n",
)


def project(root, text: str):
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "calibration.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return root


def without_rates() -> str:
    text = WITH_RATES
    for r in RATES:
        assert text.count(r) == 1
        text = text.replace(r, "")
    return text


def run(root, *args) -> int:
    return main(["--project", str(root), "calibration", *args])


def test_a_calibration_scenario_needs_no_rates(tmp_path):
    a = project(tmp_path / "a", WITH_RATES)
    b = project(tmp_path / "b", without_rates())
    for p in (a, b):
        assert main(["--project", str(p), "compile"]) == 0
        assert run(p, "simulate", "--scenario", "overconfident", "--seed", "4", "--out",
                   str(p / "obs.jsonl")) == 0  # fmt: skip
        assert run(p, "diagnose", "--simulations", "120", "--seed", "2", "--out",
                   str(p / "D.json")) == 0  # fmt: skip
    assert (a / "obs.jsonl").read_bytes() == (b / "obs.jsonl").read_bytes()
    da, db = (json.loads((p / "D.json").read_text()) for p in (a, b))
    assert da["conditions"] == db["conditions"]
    truths = {
        c["scenario"]: {e["id"]: e["truth"] for e in c["estimates"]} for c in db["conditions"]
    }
    # uniform confidences on [0.5, 1]: calibrated, ECE 0; overconfident by 0.12, ECE 0.12
    assert truths["calibrated"]["ece-all"] == 0.0
    assert truths["overconfident"]["ece-all"] == 0.12


def test_a_cell_no_calibration_entry_takes_still_needs_a_rate(tmp_path, capsys):
    text = without_rates().replace(
        "      - {field: confidence, distribution: uniform, low: 0.5, high: 1, curve: calibrated}",
        "      - {field: confidence, where: [{factor: prompt, levels: [plain]}], distribution:"
        " uniform, low: 0.5, high: 1, curve: calibrated}",
    )
    assert text != without_rates()
    p = project(tmp_path, text)
    assert main(["--project", str(p), "compile"]) == 2
    err = capsys.readouterr().err
    line = text.splitlines().index("scenarios:") + 2  # the scenario's first line
    assert (
        f"spec/studies/calibration.yaml:{line}: at /scenarios/0/rates: scenario 'calibrated'"
        " gives no rate for the rows of cell 'cot', whose outcome no calibration entry draws"
        " (end with a rate without where, or a calibration entry whose where takes the cell)"
    ) in err
    assert "'overconfident'" not in err  # its entry takes every cell
    assert not (p / "generated" / "calibration").exists()


def test_a_scenario_with_neither_rates_nor_calibration_is_refused(tmp_path, capsys):
    text = without_rates().replace(
        "    calibration:\n      - {field: confidence, distribution: uniform, low: 0.5, high: 1,"
        " curve: calibrated}\n",
        "",
    )
    assert text != without_rates()
    p = project(tmp_path, text)
    assert main(["--project", str(p), "compile"]) == 2
    err = capsys.readouterr().err
    assert (
        "at /scenarios/0: scenario 'calibrated' needs rates: the true chance of its outcome (or,"
        " for a confidence, calibration entries whose curve draws the outcome of every cell)"
    ) in err
