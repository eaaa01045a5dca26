"""A scenario whose outcome field is not boolean (an answer logged as 1 and 0, a verdict as
accept and reject) writes the two registered ``outcome_values``: simulate writes the records in
the contract's own types, and diagnose scores them by the metric's condition as it scores a log.

The fixture (tests/fixtures/diagnose/onezero.yaml) is one cell of 60 rows whose `correct` is
an integer 1 or 0; h1 holds when the Clopper-Pearson 95% lower bound of the share of 1s is at
least 0.6. Its power is computed here independently: the least count k whose bound reaches 0.6
(scipy's beta quantile), and P(X >= k) for X ~ Binomial(60, p) (scipy's binom).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import study_project

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "diagnose" / "onezero.yaml"
STUDY = "onezero"
ROWS = 60


def _project(root: Path, text: str | None = None) -> Path:
    spec = FIXTURE.read_text(encoding="utf-8") if text is None else text
    return study_project(root, STUDY, spec)


def _edited(*edits: tuple[str, str]) -> str:
    text = FIXTURE.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new)
    return text


def _run(root: Path, *args: str) -> int:
    return main(["--project", str(root), *args])


def _power(p: float) -> float:
    """P(h1 supported) at true accuracy p: the least k whose two-sided 95% Clopper-Pearson
    lower bound is at least 0.6, and the binomial chance of k or more of 60."""
    k = next(k for k in range(1, ROWS + 1) if stats.beta.ppf(0.025, k, ROWS - k + 1) >= 0.6)
    return float(stats.binom.sf(k - 1, ROWS, p))


def _simulated(root: Path, scenario: str, seed: int = 1) -> list[dict]:
    items, obs = root / "run" / "items.jsonl", root / "run" / f"{scenario}.jsonl"
    if not items.exists():
        assert _run(root, STUDY, "items", "--out", str(items)) == 0
    args = ["--items", str(items), "--scenario", scenario, "--seed", str(seed)]
    assert _run(root, STUDY, "simulate", *args, "--out", str(obs)) == 0
    return [json.loads(line) for line in obs.read_text().splitlines()]


def test_simulate_writes_the_outcome_as_1_and_0_and_the_contract_admits_it(tmp_path):
    root = _project(tmp_path)
    assert _run(root, "compile") == 0
    prereg = (root / "generated" / STUDY / "PREREG.md").read_text()
    assert "| `good` | `correct` (written 1 when it holds, 0 otherwise) |" in prereg
    schema = json.loads(
        (root / "generated" / STUDY / "schemas" / "observation.schema.json").read_text()
    )
    records = _simulated(root, "good")
    validator = jsonschema.Draft202012Validator(schema)
    assert [e.message for r in records for e in validator.iter_errors(r)] == []
    last = {}
    for r in records:  # the counted attempt is the last of its row
        last[r["rowId"]] = r
    assert len(last) == ROWS
    counted = [r["correct"] for r in last.values()]
    assert all(type(v) is int and v in (0, 1) for v in counted)
    assert 0 < sum(counted) < ROWS  # both values are written
    failed = [r for r in records if r["correct"] is None]
    assert failed and all(last[r["rowId"]] is not r for r in failed)  # retried, then counted


def test_the_1_0_log_is_the_boolean_log_written_otherwise(tmp_path):
    """The same study with `correct` boolean (and no outcome_values) draws, at one seed, the
    same rows right: the 1/0 log is the boolean one with true written 1 and false 0."""
    root = _project(tmp_path / "ones")
    assert _run(root, "compile") == 0
    ones = _simulated(root, "good", seed=7)
    text = _edited(
        ("type: integer, allowed: [0, 1], nullable: true", "type: boolean, nullable: true"),
        ("    outcome_values: {holds: 1, otherwise: 0}\n", ""),
        ("{field: correct, op: eq, value: 1}", "{field: correct, op: eq, value: true}"),
    )
    root = _project(tmp_path / "bools", text)
    assert _run(root, "compile") == 0
    bools = _simulated(root, "good", seed=7)
    coded = {True: 1, False: 0, None: None}
    assert ones == [{**r, "correct": coded[r["correct"]]} for r in bools]


def test_diagnose_gives_the_exact_binomial_power_of_a_1_0_outcome(tmp_path):
    """The claims are computed exactly (an enumeration of the counts); the simulated share of
    studies supporting h1 agrees with the exact power within 4 Monte Carlo standard errors
    (sqrt(p(1 - p)/n), n = 2000 studies: at most 0.027 at p = 0.92)."""
    root = _project(tmp_path)
    assert _run(root, "compile") == 0
    out = root / "run" / "DIAGNOSE.json"
    assert (
        _run(root, STUDY, "diagnose", "--simulations", "2000", "--seed", "3", "--out", str(out))
        == 0
    )
    got = json.loads(out.read_text())
    truth = {"good": _power(0.8), "null": _power(0.6)}
    assert truth["good"] == pytest.approx(0.9228, abs=1e-4)  # the test's own arithmetic
    claims = {c["id"]: c for c in got["claims"]}
    assert claims["h1-power"]["method"] == "exact"
    assert claims["h1-power"]["figure"] == pytest.approx(truth["good"], abs=1e-6)
    assert claims["h1-false-positives"]["figure"] == pytest.approx(truth["null"], abs=1e-6)
    assert claims["h1-power"]["holds"] and claims["h1-false-positives"]["holds"]
    n = got["simulations"]
    for cond in got["conditions"]:
        (estimate,) = cond["estimates"]  # the share of 1s has the scenario's rate as truth
        assert estimate["truth"] == {"good": 0.8, "null": 0.6}[cond["scenario"]]
        p = truth[cond["scenario"]]
        share = _supported_share(cond, "h1")
        assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / n), (cond["scenario"], share, p)


def _supported_share(cond: dict, hypothesis: str) -> float:
    hyp = next(h for h in cond["hypotheses"] if h["id"] == hypothesis)
    got = {v["verdict"]: v for v in hyp["verdicts"]}
    assert sum(v["count"] for v in got.values()) == cond["simulations"]
    return got["supported"]["count"] / cond["simulations"]


def test_a_string_outcome_writes_its_two_words(tmp_path):
    """A verdict logged as accept or reject: the metric counts accept, the scenario writes
    accept when the outcome holds; the power is the same as with 1 and 0."""
    text = _edited(
        (
            "type: integer, allowed: [0, 1], nullable: true",
            "type: string, allowed: [accept, reject], nullable: true",
        ),
        ("{holds: 1, otherwise: 0}", "{holds: accept, otherwise: reject}"),
        ("{field: correct, op: eq, value: 1}", "{field: correct, op: eq, value: accept}"),
    )
    root = _project(tmp_path, text)
    assert _run(root, "compile") == 0
    records = _simulated(root, "null")
    assert {r["correct"] for r in records} == {"accept", "reject"}
    out = root / "run" / "DIAGNOSE.json"
    assert (
        _run(root, STUDY, "diagnose", "--simulations", "20", "--seed", "1", "--out", str(out)) == 0
    )
    claims = {c["id"]: c for c in json.loads(out.read_text())["claims"]}
    assert claims["h1-power"]["figure"] == pytest.approx(_power(0.8), abs=1e-6)


REFUSED = {
    "an integer outcome without outcome_values": (
        [
            (
                "    outcome_values: {holds: 1, otherwise: 0}\n    failed_attempt_rate",
                "    failed_attempt_rate",
            )
        ],
        "at /scenarios/0/outcome: scenario 'good': outcome 'correct' is not a boolean field of"
        " 'observation' (it is integer): say what the scenario writes there with outcome_values"
        " (for an outcome logged as 1 and 0: {holds: 1, otherwise: 0})",
    ),
    "a value the field does not allow": (
        [("{holds: 1, otherwise: 0}\n    failed", "{holds: 1, otherwise: 2}\n    failed")],
        "at /scenarios/0/outcome_values/otherwise: scenario 'good': outcome_values.otherwise 2 is"
        " not a value field 'correct' of 'observation' holds (integer, allowed [0, 1])",
    ),
    "true for an integer field": (
        [("{holds: 1, otherwise: 0}\n    failed", "{holds: true, otherwise: 0}\n    failed")],
        "at /scenarios/0/outcome_values/holds: scenario 'good': outcome_values.holds true is not"
        " a value field 'correct' of 'observation' holds (integer, allowed [0, 1])",
    ),
    "one value for both": (
        [("{holds: 1, otherwise: 0}\n    failed", "{holds: 1, otherwise: 1}\n    failed")],
        "at /scenarios/0/outcome_values: scenario 'good': outcome_values writes 1 both when the"
        " outcome holds and when it does not",
    ),
    "two scenarios writing the field differently": (
        [
            (
                "{holds: 1, otherwise: 0}\n    rates:\n      - {rate: 0.6}",
                "{holds: 0, otherwise: 1}\n    rates:\n      - {rate: 0.4}",
            )
        ],
        "at /scenarios/1/outcome_values: scenario null writes outcome 'correct' as 0 when it"
        " holds, 1 otherwise and scenario good as 1 when it holds, 0 otherwise: diagnose scores"
        " every scenario's rows by one pair of values",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_compile_refuses_outcome_values_it_cannot_write_in_one_line(case, tmp_path, capsys):
    edits, rule = REFUSED[case]
    root = _project(tmp_path, _edited(*edits))
    assert _run(root, "compile") == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "at /scenarios" in line]
    assert len(lines) == 1, err
    assert rule in lines[0] and "Traceback" not in err
    assert lines[0].strip().startswith(f"spec/studies/{STUDY}.yaml:")
    assert not (root / "generated" / STUDY).exists()
