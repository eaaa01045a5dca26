"""Counts and sizes a user can make huge: jev's ``diagnostic --seeds`` is capped (it ran every
seed listed, about 0.2 CPU-s each, however many), and compile refuses a registered seed list the
command would refuse; d17's ``audit-sweep COUNT`` is capped (it listed every seed first); a schema rule broken by a huge value is said without echoing the value
(a list of a thousand seeds was printed whole)."""

from __future__ import annotations

import json
import os

import jsonschema
import pytest

from prereg.cli import main
from prereg.compiler.validate import describe
from prereg.engines.multicorrect import commands
from tests.conftest import ROOT


def _diagnostic(capsys, seeds) -> tuple[int, str, str]:
    argv = ["--project", str(ROOT), "jev-multicorrect", "diagnostic", "--seeds"]
    code = main([*argv, ",".join(map(str, seeds))])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_diagnostic_seeds_beyond_the_cap_are_refused_before_any_run(capsys):
    code, out, err = _diagnostic(capsys, range(1001))
    assert (code, out) == (2, "")
    assert err == (
        "error: --seeds: 1,001 seeds; at most 1,000 (each runs the whole diagnostic; for the"
        " rules' behaviour over many runs, use diagnose --simulations)\n"
    )
    # the registered seed list has the same bound at compile (test_jev_compile_checks.py)
    schema = json.loads(
        (ROOT / "runtime/prereg/engines/multicorrect/constants.schema.json").read_text()
    )
    assert schema["properties"]["diagnostic-seeds"]["maxItems"] == commands.MAX_SEEDS == 1000


def test_diagnostic_seeds_up_to_the_cap_run(capsys, monkeypatch):
    monkeypatch.setattr(commands, "MAX_SEEDS", 2)
    code, out, _ = _diagnostic(capsys, [5, 6])
    assert code in (0, 1)
    assert [s["seed"] for s in json.loads(out)["seeds"]] == [5, 6]
    code, _, err = _diagnostic(capsys, [5, 6, 7])
    assert code == 2 and "--seeds: 3 seeds; at most 2 " in err


@pytest.mark.parametrize("count", ["100001", "9007199254740991"])
def test_an_audit_sweep_beyond_the_cap_is_refused_before_any_seed(capsys, count):
    # 2^53 - 1 seeds were listed in memory before the first ran
    code = main(["--project", str(ROOT), "d17-multifact", "audit-sweep", "demo-", count])
    got = capsys.readouterr()
    assert (code, got.out) == (2, "")
    assert got.err == (
        f"error: COUNT: {int(count):,} seeds; at most 100,000 (each prepares and audits a"
        " corpus, about 2 CPU-s; the seeds are listed and held until the summary)\n"
    )


BIG = list(range(5000))
TEXT = "x" * 100_000


@pytest.mark.parametrize(
    "schema, value, message",
    [
        ({"maxItems": 3}, BIG, "expected at most 3 items, got 5000"),
        ({"minItems": 1}, [], "expected at least 1 item, got 0"),
        ({"maxLength": 10}, TEXT, "expected at most 10 characters, got 100000"),
        ({"minProperties": 2}, {"a": TEXT}, "expected at least 2 keys, got 1"),
        ({"uniqueItems": True}, [*BIG, 7], "7 is listed more than once (items must be unique)"),
        (
            {"const": 10},
            BIG,
            "must be 10, got [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, …",  # 59 characters, then …,
        ),
        ({"pattern": "^a"}, TEXT, '"' + "x" * 58 + "… does not match the pattern ^a"),
        ({"enum": [1, 2]}, TEXT, '"' + "x" * 58 + "… is not one of: 1, 2"),
        ({"type": "integer"}, TEXT, 'expected integer, got "' + "x" * 58 + "…"),
        ({"multipleOf": 7}, 10, "10 is not a multiple of 7"),  # jsonschema's own words
    ],
)
def test_a_broken_schema_rule_is_said_without_the_whole_value(schema, value, message):
    (err,) = jsonschema.Draft202012Validator(schema).iter_errors(value)
    assert describe(err) == message


def test_a_hand_off_file_breaking_its_schema_is_said_without_the_whole_value():
    # the d17 hand-off files (approval, review, context, score config) are checked with
    # prereg.outputs.problems: jsonschema's message held the whole value
    from prereg.outputs import problems

    schema = {"type": "object", "properties": {"floorsUsd": {"type": "number"}}}
    (said,) = problems({"floorsUsd": BIG}, schema)
    # 199 characters of jsonschema's message ("[0, 1, 2, ..." and so on), then "…"
    text = "[" + ", ".join(map(str, BIG))
    assert said == "at /floorsUsd: " + text[:199] + "…"


@pytest.mark.parametrize(
    "argv",
    [
        ["d17-multifact", "audit-sweep", "demo-", "2"],
        ["d17-multifact", "diagnose", "--simulations", "2", "--seed", "1", "--out", "{tmp}/D.json"],
        [
            "jev-multicorrect",
            "diagnose",
            "--simulations",
            "2",
            "--seed",
            "1",
            "--out",
            "{tmp}/D.json",
        ],
    ],
)
def test_more_workers_than_the_machine_runs_are_refused_before_any(tmp_path, capsys, argv):
    """A --workers of a million forked as many processes as the command had tasks."""
    from prereg.runner import most_workers

    most = most_workers()
    assert most == max(8, 4 * (os.cpu_count() or 1))
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code = main(["--project", str(ROOT), *args, "--workers", str(most + 1)])
    got = capsys.readouterr()
    assert (code, got.out) == (2, "")
    assert got.err == (
        f"error: --workers: {most + 1:,} worker processes; at most {most} on this machine (four a"
        " CPU, at least eight)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_s3_plan_of_more_repositories_than_an_array_holds_is_out_of_memory(tmp_path, capsys):
    """numpy refuses such an array with a ValueError (not a MemoryError): a traceback."""
    huge = "9007199254740991"
    counts = ["--eligible-task-count", "--eligible-repository-count", "--eligible-pass-items",
              "--eligible-fail-items"]  # fmt: skip
    argv = ["--project", str(ROOT), "s3-verifier-freeze", "power-plan",
            str(ROOT / "examples/s3/calibration-sample.jsonl"), "--out", str(tmp_path / "P.json")]  # fmt: skip
    code = main([*argv, *(x for c in counts for x in (c, huge))])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        "error: out of memory: the inputs ask for more than this machine has (array is too big"
    ), err
    assert err.endswith("; nothing was written\n") and list(tmp_path.iterdir()) == []
