"""Compile refuses a scenario that simulate or diagnose could not draw, before anything is
written, at the scenario's (or the policy's) JSON path with the rule; and the same spec, had it
been compiled by an older prereg, is refused by each command in its own name.

Each case edits the latency-cost example (two strategies x two tasks, a latency and a token
count drawn per row, an attempt policy whose failed attempt has status error). The runtime
side builds the engine's configuration from the edited spec directly (as compile would give
it) and asks the engine's own writer, design and simulation for it.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import numpy as np
import pytest
import yaml

from prereg.cli import main
from prereg.compiler.build import engine_config
from prereg.errors import UserError
from tests.conftest import ROOT

STUDY = "latency-cost"
SPEC = ROOT / "examples" / STUDY / "spec" / "studies" / f"{STUDY}.yaml"

NO_EFFECT_VALUES = (
    "      - {field: latency_ms, distribution: normal, mean: 600, sd: 110, low: 0, decimals: 1}\n"
    "      - {field: tokens, distribution: lognormal, mean: 7.0, sd: 0.4}\n"
)


def edited(edits) -> str:
    text = SPEC.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def project(root: Path, text: str) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{STUDY}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return root


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of ``text`` holding ``needle``."""
    return text[: text.index(needle)].count("\n") + 1


def config_of(text: str) -> dict:
    return engine_config(yaml.safe_load(text))


#: name -> (edits, JSON path, the line's text the path is written at, rule, scenario id)
CASES = {
    "a required field no scenario draws": (
        [
            (
                "      - {name: tokens, type: integer, minimum: 0,",
                "      - {name: judge, type: string}\n      - {name: tokens, type: integer,"
                " minimum: 0,",
            )
        ],
        "/scenarios/0",
        "  - id: caching-helps",
        "scenario caching-helps: the observation contract request requires field(s) ['judge'],"
        " which the scenario does not draw (draw them with values, or mark them required:"
        " false)",
        "caching-helps",
    ),
    "a failed attempt no value meets": (
        [
            (
                "    - {field: status, op: eq, value: error}",
                "    - {field: status, op: ne, value: ok}",
            )
        ],
        "/attempts/failed/0",
        "    - {field: status, op: ne, value: ok}",
        "cannot write a failed attempt meeting status ne (only is_null, eq with a value, and in)",
        "caching-helps",
    ),
    "a policy with an order and no failed condition": (
        [
            (
                "  failed:\n    - {field: status, op: eq, value: error}",
                "  where:\n    - {field: status, op: eq, value: ok}",
            )
        ],
        "/attempts",
        "  contract: request",  # a mapping is placed at its first key's line
        "the attempt policy registers no failed condition",
        "caching-helps",
    ),
    "a field drawn only for right rows": (
        [
            (
                NO_EFFECT_VALUES,
                NO_EFFECT_VALUES.replace(
                    "{field: latency_ms,", "{field: latency_ms, outcome: true,"
                ),
            )
        ],
        "/scenarios/1/values/0",
        "      - {field: latency_ms, outcome: true,",
        "scenario no-effect: no entry of 'latency_ms' draws a number for the rows of cell"
        " tst-base-qa when they are wrong (end the field's entries with one without where or"
        " outcome)",
        "no-effect",
    ),
    "a lognormal whose far draws overflow": (
        [(NO_EFFECT_VALUES, NO_EFFECT_VALUES.replace("mean: 7.0, sd: 0.4", "mean: 7.0, sd: 90"))],
        "/scenarios/1/values/1",
        "      - {field: tokens, distribution: lognormal, mean: 7.0, sd: 90}",
        "scenario no-effect: a number of 'tokens' drawn 8.21 standard deviations out is not"
        " finite (clip it with low/high)",
        "no-effect",
    ),
    "a whole number beyond 2^53": (
        [
            (
                NO_EFFECT_VALUES,
                NO_EFFECT_VALUES.replace(
                    "distribution: lognormal, mean: 7.0, sd: 0.4",
                    "distribution: normal, mean: 0, sd: 1200000000000000.0",
                ),
            )
        ],
        "/scenarios/1/values/1",
        "      - {field: tokens, distribution: normal, mean: 0, sd: 1200000000000000.0}",
        "scenario no-effect: a number of 'tokens' drawn 8.21 standard deviations out is a whole"
        " number beyond ±2^53 (clip it with low/high)",
        "no-effect",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compile_refuses_first(tmp_path, capsys, name):
    edits, ptr, at, rule, _ = CASES[name]
    text = edited(edits)
    root = project(tmp_path, text)
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    where = f"spec/studies/{STUDY}.yaml:{line_of(text, at)}: at {ptr}: {rule}"
    assert where in err, err
    assert "Traceback" not in err and "simulate:" not in err and "diagnose:" not in err
    assert not (root / "generated" / "latency_cost").exists()


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_command_refuses_in_its_own_name(name):
    """What compile refuses is what the commands refuse: the writer simulate builds and the
    design diagnose builds, over the configuration the spec compiles to."""
    from prereg.engines.factorial.commands import diagnose_design, registered_rows
    from prereg.engines.factorial.draws import RecordWriter
    from prereg.engines.factorial.simulation import Simulation

    edits, _, _, rule, sid = CASES[name]
    config = config_of(edited(edits))
    sc = next(s for s in config["scenarios"] if s["id"] == sid)
    with pytest.raises(UserError) as got:
        Simulation(config, registered_rows(config), sc, 1)
    assert got.value.message == f"simulate: {rule}"
    with pytest.raises(UserError) as got:
        RecordWriter(config, sc, "diagnose")
    assert got.value.message == f"diagnose: {rule}"
    if sid == config["scenarios"][0]["id"]:  # the design's prototype rows are the first's
        with pytest.raises(UserError) as got:
            diagnose_design(config)
        assert got.value.message == f"diagnose: {rule}"


def test_diagnose_names_itself_on_a_spec_an_older_prereg_compiled(tmp_path, capsys):
    """A spec compiled before these checks keeps its generated code and digest: diagnose meets
    the unwritable scenario itself and says so as diagnose (it said "simulate:")."""
    import prereg.engines.factorial.spec_checks as spec_checks

    edits, _, _, rule, _ = CASES["a required field no scenario draws"]
    root = project(tmp_path, edited(edits))
    keep = spec_checks.scenario_problems
    spec_checks.scenario_problems = lambda spec: []  # the compile of an older prereg
    try:
        assert main(["--project", str(root), "compile"]) == 0
    finally:
        spec_checks.scenario_problems = keep
    capsys.readouterr()
    out = root / "DIAGNOSE.json"
    rc = main(
        ["--project", str(root), STUDY, "diagnose", "--simulations", "5", "--seed", "1"]
        + ["--out", str(out), "--quiet"]
    )
    err = capsys.readouterr().err
    assert rc == 2 and f"diagnose: {rule}" in err, err
    assert not out.exists()


def test_two_outcome_fields_are_refused_for_diagnose(tmp_path, capsys):
    text = edited(
        [
            ("      - {name: correct, type: boolean, nullable: true}\n",
             "      - {name: correct, type: boolean, nullable: true}\n"
             "      - {name: solved, type: boolean, nullable: true, required: false}\n"),
            ("  - id: no-effect\n    description: Both strategies alike.\n    outcome: correct\n",
             "  - id: no-effect\n    description: Both strategies alike.\n    outcome: solved\n"),
        ]
    )  # fmt: skip
    root = project(tmp_path, text)
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    line = line_of(text, "    outcome: solved")
    assert (
        f"{STUDY}.yaml:{line}: at /scenarios/1/outcome: scenario no-effect draws outcome 'solved'"
        " and scenario caching-helps 'correct': diagnose runs every scenario over one outcome"
        " field"
    ) in err, err


def test_an_entry_for_right_rows_only_is_enough_when_no_row_is_wrong(tmp_path):
    """At a rate of 1 no row is wrong, so an entry drawn only for right rows covers them all;
    simulate writes every row with its number."""
    text = edited(
        [
            (
                NO_EFFECT_VALUES,
                NO_EFFECT_VALUES.replace(
                    "{field: latency_ms,", "{field: latency_ms, outcome: true,"
                ),
            ),
            (
                "  - id: no-effect\n    description: Both strategies alike.\n    outcome: correct\n"
                "    failed_attempt_rate: 0.04\n    rates:\n      - {rate: 0.8}\n",
                "  - id: no-effect\n    description: Both strategies alike.\n    outcome: correct\n"
                "    failed_attempt_rate: 0.04\n    rates:\n      - {rate: 1.0}\n",
            ),
        ]
    )
    root = project(tmp_path, text)
    assert main(["--project", str(root), "compile"]) == 0
    items, obs = root / "items.jsonl", root / "obs.jsonl"
    assert main(["--project", str(root), STUDY, "items", "--out", str(items)]) == 0
    args = ["simulate", "--items", str(items), "--scenario", "no-effect", "--seed", "3"]
    assert main(["--project", str(root), STUDY, *args, "--out", str(obs)]) == 0
    counted = [r for r in map(json.loads, obs.read_text().splitlines()) if r["status"] == "ok"]
    assert len(counted) == 480 and all(r["correct"] is True for r in counted)
    assert all(r["latency_ms"] >= 0 for r in counted)


def test_a_scenario_of_numbers_only_simulates(tmp_path):
    """A scenario that draws no outcome (numbers only) compiles, and simulate writes its rows
    with the numbers and no outcome, as diagnose draws them (no row is right); simulate used to
    refuse it for want of a rate, which compile forbids it to have."""
    text = edited(
        [
            (
                "  - id: no-effect\n    description: Both strategies alike.\n    outcome: correct\n"
                "    failed_attempt_rate: 0.04\n    rates:\n      - {rate: 0.8}\n",
                "  - id: no-effect\n    description: Both strategies alike.\n",
            ),
            (
                "      - {name: correct, type: boolean, nullable: true}",
                "      - {name: correct, type: boolean, nullable: true, required: false}",
            ),
        ]
    )
    root = project(tmp_path, text)
    assert main(["--project", str(root), "compile"]) == 0
    items, obs = root / "items.jsonl", root / "obs.jsonl"
    assert main(["--project", str(root), STUDY, "items", "--out", str(items)]) == 0
    args = ["simulate", "--items", str(items), "--scenario", "no-effect", "--seed", "3"]
    assert main(["--project", str(root), STUDY, *args, "--out", str(obs)]) == 0
    records = [json.loads(x) for x in obs.read_text().splitlines()]
    assert len(records) == 480 and all("correct" not in r for r in records)
    latency = np.array([r["latency_ms"] for r in records])
    # normal(600, 110) clipped at 0: the mean within 4 standard errors of 600
    assert abs(latency.mean() - 600) < 4 * 110 / np.sqrt(480)


def test_the_reach_of_a_word_normal():
    """The farthest normal simulate draws from a word is Φ⁻¹(2⁻⁵³) (the midpoint of the first
    interval of 52 bits), by Python's own NormalDist (Wichura's AS 241), not scipy's ndtri."""
    from prereg.engines.factorial.draws import WORD_NORMAL_REACH, normals

    assert WORD_NORMAL_REACH == pytest.approx(-statistics.NormalDist().inv_cdf(2.0**-53), 1e-12)
    ends = normals(np.array([0, (1 << 64) - 1], dtype=np.uint64))
    assert ends.tolist() == [-WORD_NORMAL_REACH, WORD_NORMAL_REACH]


@pytest.mark.parametrize(("sd", "refused"), [(1.097e15, False), (1.098e15, True)])
def test_a_whole_number_just_within_or_beyond_2_53(sd, refused):
    """2^53 / 8.2095 = 1.0971e15: an sd below it keeps every draw a whole number a double
    holds exactly; above it the farthest draw passes 2^53."""
    from prereg.engines.factorial.draws import value_problems

    assert 1.097e15 * 8.209536151601387 < 2.0**53 < 1.098e15 * 8.209536151601387
    sc = {"id": "s", "values": [{"field": "n", "distribution": "normal", "mean": 0, "sd": sd}]}
    cells = [{"id": "c", "split": "all", "rows": 1, "levels": {}}]
    got = value_problems(cells, sc, {"n": True})
    assert bool(got) == refused, got
    assert value_problems(cells, sc, {"n": False}) == []  # a float holds it
