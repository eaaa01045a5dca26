"""The study's decision: registered in the language, checked when compiling, evaluated once after
the verdicts, and reported first.

The compile cases start from the paired-verifiers example (a gate, a rule hypothesis with
tested_after, a reported-only one) and change one thing each; the evaluation cases call
:func:`prereg.decide.decision.decide` over hand-made verdicts, gates and results, and one case
runs the example end to end through the CLI.
"""

from __future__ import annotations

import copy
import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from prereg.cli import main
from prereg.decide.decision import decide, from_spec, in_words
from prereg.rules import ContrastResult
from tests.conftest import safe_yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "paired-verifiers"
SPEC = safe_yaml((EXAMPLE / "spec" / "studies" / "paired-verifiers.yaml").read_text())


def compile_with(tmp_path: Path, capsys, change) -> tuple[int, str]:
    spec = copy.deepcopy(SPEC)
    change(spec)
    project = tmp_path / "project"
    (project / "spec" / "studies").mkdir(parents=True)
    (project / "spec" / "studies" / "paired-verifiers.yaml").write_text(
        yaml.safe_dump(spec, sort_keys=False)
    )
    code = main(["--project", str(project), "compile"])
    err = capsys.readouterr().err
    if code:
        assert not (project / "generated").exists(), "a refused spec wrote generated files"
    return code, err


def test_the_example_decision_compiles(tmp_path, capsys):
    code, err = compile_with(tmp_path, capsys, lambda s: None)
    assert code == 0, err
    rules = (tmp_path / "project" / "generated" / "paired_verifiers" / "rules.py").read_text()
    assert 'GateIs("coverage", "failed")' in rules
    assert 'VerdictIs("h1", ("supported",))' in rules
    assert 'otherwise="keep-a"' in rules


def _rule(spec, i):
    return spec["decision"]["rules"][i]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda s: _rule(s, 1)["when"]["verdict"].update(hypothesis="h9"),
            "at /decision/rules/1/when/verdict/hypothesis: verdict condition names unknown hypothesis 'h9'",
        ),
        (
            lambda s: _rule(s, 1)["when"]["verdict"].update({"is": ["passed"]}),
            "at /decision/rules/1/when/verdict/is/0: hypothesis 'h1' can never have verdict 'passed'; its verdicts are supported, not-supported, inconclusive",
        ),
        (
            lambda s: _rule(s, 0)["when"]["gate"].update(id="cover"),
            "at /decision/rules/0/when/gate/id: gate condition names unknown gate 'cover' (gates: coverage)",
        ),
        (
            lambda s: s.pop("gates"),
            "at /decision/rules/0/when/gate: gate condition in a study that registers no gate",
        ),
        (
            lambda s: _rule(s, 1).update(outcome="adopt-c"),
            "at /decision/rules/1/outcome: decision rule gives unknown outcome 'adopt-c' (outcomes: inconclusive, adopt-b, keep-a)",
        ),
        (
            lambda s: s["decision"].update(otherwise="keep"),
            "at /decision/otherwise: otherwise names unknown outcome 'keep'",
        ),
        (
            lambda s: s["decision"]["outcomes"].append({"id": "retest"}),
            "at /decision/outcomes/3: outcome 'retest' can never be reached: no rule gives it and it is not otherwise",
        ),
        (
            # supported implies "not inconclusive", which the first rule already took
            lambda s: s["decision"].update(
                rules=[
                    {
                        "outcome": "keep-a",
                        "when": {"not": {"verdict": {"hypothesis": "h1", "is": ["inconclusive"]}}},
                    },
                    {
                        "outcome": "adopt-b",
                        "when": {"verdict": {"hypothesis": "h1", "is": ["supported"]}},
                    },
                    {"outcome": "inconclusive", "when": {"gate": {"is": "failed"}}},
                ]
            ),
            "at /decision/rules/1: decision rule 2 (outcome 'adopt-b') can never fire",
        ),
        (
            # h2 is not-tested only when every gate held: with a failed gate it is inconclusive
            lambda s: s["decision"].update(
                rules=[
                    {
                        "outcome": "inconclusive",
                        "when": {
                            "all_of": [
                                {"gate": {"is": "failed"}},
                                {"verdict": {"hypothesis": "h2", "is": ["not-tested"]}},
                            ]
                        },
                    },
                    {
                        "outcome": "adopt-b",
                        "when": {"verdict": {"hypothesis": "h1", "is": ["supported"]}},
                    },
                ]
            ),
            "at /decision/rules/0: decision rule 1 (outcome 'inconclusive') can never fire",
        ),
        (
            lambda s: s["hypotheses"][0]["rule"]["all_of"].append(
                {"verdict": {"hypothesis": "h2", "is": ["supported"]}}
            ),
            "at /hypotheses/0/rule/all_of/2/verdict: a verdict condition belongs in the study's decision rules",
        ),
        (
            lambda s: s["gates"][0].update(otherwise="not-supported"),
            "at /gates/0/otherwise: gate 'coverage': otherwise 'not-supported' would give a failed gate the word of another verdict",
        ),
        (
            lambda s: _rule(s, 1)["when"].update(
                {"not": {"verdict": {"hypothesis": "h1", "is": ["supported"]}}}
            ),
            "at /decision/rules/1/when: a condition takes exactly one of",
        ),
    ],
)
def test_compile_refuses(tmp_path, capsys, change, message):
    code, err = compile_with(tmp_path, capsys, change)
    assert code != 0
    assert message in err, err
    assert "Traceback" not in err


REGISTERED = from_spec(SPEC["decision"])
VERDICTS = {"h1": "supported", "h2": "supported", "accuracy-by-verifier": "reported-only"}


def test_each_path_of_the_decision():
    held = {"coverage": True}
    got = decide(REGISTERED, VERDICTS, {"coverage": False}, {})
    assert (got["outcome"], got["rule"]) == ("inconclusive", 1)
    assert got["read"] == [
        {"gate": "coverage", "held": {"coverage": False}, "is": "failed", "holds": True}
    ]
    got = decide(REGISTERED, VERDICTS, held, {})
    assert (got["outcome"], got["rule"], got["title"]) == (
        "adopt-b",
        2,
        "verifier B replaces verifier A",
    )
    assert got["read"] == [
        {"hypothesis": "h1", "verdict": "supported", "is": ["supported"], "held": True}
    ]
    got = decide(REGISTERED, {**VERDICTS, "h1": "not-supported"}, held, {})
    assert got == {
        "outcome": "keep-a",
        "title": "verifier A stays",
        "rule": "otherwise",
        "why": "no rule held",
    }
    assert in_words(got) == "keep-a (verifier A stays): no rule held (otherwise)"


def test_a_rule_over_a_figure_is_decided_exactly_at_its_threshold():
    registered = from_spec(
        {
            "outcomes": [{"id": "ship"}, {"id": "hold"}],
            "rules": [
                {
                    "outcome": "ship",
                    "when": {
                        "compare": {
                            "target": "gain",
                            "quantity": "estimate",
                            "op": "ge",
                            "value": 0.03,
                        }
                    },
                }
            ],
            "otherwise": "hold",
        }
    )
    # 57/100 - 27/50 is 0.03 exactly; its float is 0.029999999999999916
    tie = ContrastResult(
        "gain", 57 / 100 - 27 / 50, 0.0, 0.1, extra={"k1": 57, "n1": 100, "k2": 27, "n2": 50}
    )
    got = decide(registered, {}, {}, {"gain": tie})
    assert got["outcome"] == "ship"
    assert got["read"][0]["figure"] == {"value": 0.03, "exact": "3/100"}
    below = ContrastResult("gain", 0.0, 0.0, 0.1, extra={"k1": 56, "n1": 100, "k2": 27, "n2": 50})
    assert decide(registered, {}, {}, {"gain": below})["outcome"] == "hold"
    missing = ContrastResult("gain", float("nan"), float("nan"), float("nan"))
    assert decide(registered, {}, {}, {"gain": missing})["outcome"] == "hold"
    assert Fraction(57, 100) - Fraction(27, 50) == Fraction(3, 100)


def test_always_one_outcome():
    registered = from_spec({"outcomes": [{"id": "HOLD"}], "otherwise": "HOLD"})
    got = decide(registered, VERDICTS, {}, {})
    assert got == {
        "outcome": "HOLD",
        "rule": "otherwise",
        "why": "the registered decision reads no data",
    }
    assert decide(None, VERDICTS, {}, {}) is None


def test_score_reports_the_decision_first(tmp_path, capsys):
    project = tmp_path / "pv"
    shutil.copytree(EXAMPLE, project)
    assert main(["--project", str(project), "compile"]) == 0
    out = project / "out"
    out.mkdir()

    def run(*args):
        return main(["--project", str(project), "paired-verifiers", *map(str, args)])

    assert run("items", "--out", out / "items.jsonl") == 0
    assert (
        run(
            "simulate",
            "--items",
            out / "items.jsonl",
            "--scenario",
            "no-difference",
            "--seed",
            3,
            "--out",
            out / "obs.jsonl",
        )
        == 0
    )
    capsys.readouterr()
    assert (
        run(
            "score",
            "--items",
            out / "items.jsonl",
            "--observations",
            out / "obs.jsonl",
            "--out",
            out / "SCORE.json",
        )
        == 0
    )
    printed = capsys.readouterr().out
    doc = json.loads((out / "SCORE.json").read_text())
    assert next(iter(doc)) == "decision"
    # the registered order: a failed gate first, then h1, then otherwise
    if doc["gated"]:
        want = "inconclusive"
    elif doc["verdicts"]["h1"] == "supported":
        want = "adopt-b"
    else:
        want = "keep-a"
    assert doc["decision"]["outcome"] == want
    assert printed.splitlines()[0].startswith(f"decision: {want}")
    md = (out / "SCORE.md").read_text()
    assert md.index("## Decision") < md.index("## Verdicts")
    assert f"**{want}**" in md


def test_score_json_answers_with_the_decision(tmp_path, capsys):
    project = tmp_path / "pv"
    shutil.copytree(EXAMPLE, project)
    assert main(["--project", str(project), "compile"]) == 0
    out = project / "out"
    out.mkdir()
    study = ["--project", str(project), "paired-verifiers"]
    assert main([*study, "items", "--out", str(out / "items.jsonl")]) == 0
    assert main([*study, "simulate", "--items", str(out / "items.jsonl"), "--scenario",
                 "b-better", "--seed", "5", "--out", str(out / "obs.jsonl")]) == 0  # fmt: skip
    capsys.readouterr()
    code = main([*study, "score", "--items", str(out / "items.jsonl"), "--observations",
                 str(out / "obs.jsonl"), "--out", str(out / "SCORE.json"), "--json"])  # fmt: skip
    answer = json.loads(capsys.readouterr().out)  # one JSON object, nothing else on stdout
    doc = json.loads((out / "SCORE.json").read_text())
    assert code == 0 and answer["exitCode"] == 0
    assert answer["decision"] == doc["decision"] and answer["verdicts"] == doc["verdicts"]
    assert answer["outputs"] == [str(out / "SCORE.json"), str(out / "SCORE.md")]
