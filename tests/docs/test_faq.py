"""docs/faq.md quotes what prereg prints: for each message the FAQ quotes (marked by a
``case: NAME`` comment), this test builds that situation from the starter of
``prereg init my-study``, runs the command, and checks every quoted line is printed (leading
spaces aside; a ``sha256:`` digest compared as a pattern)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

from prereg.cli import main

ROOT = Path(__file__).resolve().parents[2]
FAQ = ROOT / "docs" / "faq.md"
DIGEST = r"sha256:[0-9a-f]{64}"
CASE = re.compile(r"<!-- case: (?P<name>[a-z-]+) -->\n```text\n(?P<text>.*?)```\n", re.S)
REGISTRATION = """registration:
  authors: []
  source_title: A test.
  registration_date: Not registered.
  identifier: Not registered.
  data_status: No data.
  research_question: Does the treatment change accuracy?
  rationale: A test.
  sampling_plan: 100 rows a cell.
  stopping_rule: Every row attempted.
  exclusions: None.
  missing_data: Failed attempts are unobserved.
  confirmatory: h1.
  exploratory: None.
  blinding: Not stated.
  deviations: Amendments.
"""


def run(argv: list[str], cwd: Path) -> tuple[int, str]:
    old = os.getcwd()
    os.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(old)
    return code, out.getvalue() + err.getvalue()


def starter(folder: Path) -> Path:
    folder.mkdir(parents=True)
    assert run(["init", "my-study"], folder)[0] == 0
    return folder / "spec" / "studies" / "my-study.yaml"


def edit(spec: Path, old: str, new: str) -> None:
    text = spec.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    spec.write_text(text.replace(old, new), encoding="utf-8")


def compiled_with_data(folder: Path) -> Path:
    spec = starter(folder)
    assert run(["compile"], folder)[0] == 0
    assert run(["my-study", "items", "--out", "items.jsonl"], folder)[0] == 0
    argv = ["my-study", "simulate", "--items", "items.jsonl", "--scenario", "effect"]
    assert run([*argv, "--seed", "1", "--out", "obs.jsonl"], folder)[0] == 0
    return spec


def score(name: str) -> list[str]:
    return ["my-study", "score", "--items", "items.jsonl", "--observations", name]


def case_unknown_key(d: Path):
    edit(starter(d), "quantifier: all", "quantifer: all")
    return 2, run(["compile"], d)


def case_rule_never_fires(d: Path):
    rule = "      when: {gate: {id: coverage, is: failed}}\n"
    edit(starter(d), rule, f"{rule}    - outcome: keep-control\n{rule}")
    return 2, run(["compile"], d)


def case_verdict_never(d: Path):
    edit(starter(d), "h1, is: [supported]}", "h1, is: [not-tested]}")
    return 2, run(["compile"], d)


def case_compound_key(d: Path):
    spec = starter(d)
    attempt = "      - {name: attempt, type: integer, minimum: 1}\n"
    edit(spec, attempt, attempt + "      - {name: rater, type: string}\n")
    edit(spec, "  key: [rowId]\n", "  key: [rowId, rater]\n")
    return 2, run(["compile"], d)


def case_duplicate_record(d: Path):
    compiled_with_data(d)
    lines = (d / "obs.jsonl").read_text().splitlines(keepends=True)
    (d / "dup.jsonl").write_text("".join([*lines[:3], lines[1], *lines[3:]]))
    result = run([*score("dup.jsonl"), "--out", "S.json"], d)
    assert not (d / "S.json").exists()
    return 2, result


def case_output_exists(d: Path):
    compiled_with_data(d)
    assert run([*score("obs.jsonl"), "--out", "S.json"], d)[0] == 0
    before = (d / "S.json").read_bytes()
    result = run([*score("obs.jsonl"), "--out", "S.json"], d)
    assert (d / "S.json").read_bytes() == before
    return 2, result


def case_stale(d: Path):
    spec = compiled_with_data(d)
    edit(spec, "rows: 100, factors", "rows: 90, factors")
    edit(spec, "{scope: all, rows: 400}", "{scope: all, rows: 360}")
    return 2, run(["my-study", "items", "--out", "items2.jsonl"], d)


def case_not_ready_to_seal(d: Path):
    starter(d)
    assert run(["compile"], d)[0] == 0
    return 2, run(["seal", "my-study"], d)


def case_sealed_changed(d: Path):
    spec = starter(d)
    spec.write_text(spec.read_text() + REGISTRATION)
    assert run(["compile"], d)[0] == 0
    assert run(["seal", "my-study"], d)[0] == 0
    edit(spec, "rows: 100, factors", "rows: 400, factors")
    edit(spec, "{scope: all, rows: 400}", "{scope: all, rows: 1600}")
    code, text = run(["compile"], d)
    assert run(["check"], d)[0] == 1  # check says the same of the edited spec
    # and the FAQ's fix: a new version, amended, with an amendment naming the paths
    text_spec = spec.read_text().replace('version: "0.1"', 'version: "0.2"', 1)
    text_spec = text_spec.replace("status: registered", "status: amended", 1)
    spec.write_text(
        text_spec + 'amendments:\n  - version: "0.2"\n    date: "2026-12-03"\n'
        "    paths: [/cells, /totals]\n    rationale: more rows.\n"
    )
    assert run(["compile"], d)[0] == 0
    assert run(["check"], d)[0] == 0
    return 2, (code, text)


def case_claim_fails(d: Path):
    starter(d)
    assert run(["compile"], d)[0] == 0
    argv = ["my-study", "diagnose", "--simulations", "200", "--seed", "1"]
    assert run([*argv, "--out", "run1/DIAGNOSE.json"], d)[0] == 0
    return 0, run(["check"], d)


def case_no_diagnose(d: Path):
    spec = starter(d)
    text = spec.read_text(encoding="utf-8")
    for start, end in (("claims:\n", "hypotheses:\n"), ("scenarios:\n", "constants:\n")):
        text = text[: text.index(start)] + text[text.index(end) :]
    spec.write_text(text, encoding="utf-8")
    assert run(["compile"], d)[0] == 0
    return 2, run(["my-study", "diagnose", "--simulations", "10", "--seed", "1"], d)


def case_nested_log(d: Path):
    import json
    import shutil

    compiled_with_data(d)
    with (d / "nested.jsonl").open("w") as f:
        for line in (d / "obs.jsonl").read_text().splitlines():
            r = json.loads(line)
            nested = {"rowId": r["rowId"], "attempt": r["attempt"], "scores": {"match": {}}}
            nested["scores"]["match"]["value"] = r["correct"]
            f.write(json.dumps(nested) + "\n")
    refused = run([*score("nested.jsonl"), "--out", "S.json"], d)
    # the FAQ's remedy, in a project of its own (a schema is read once per process and path):
    # the field says where its value lies, and the log is scored as it comes
    fixed = d.with_name(d.name + "-fixed")
    spec = starter(fixed)
    edit(
        spec,
        "{name: correct, type: boolean, nullable: true, description: null when the attempt failed}",
        "{name: correct, path: [scores, match, value], type: boolean, nullable: true}",
    )
    assert run(["compile"], fixed)[0] == 0
    for name in ("items.jsonl", "nested.jsonl"):
        shutil.copy(d / name, fixed / name)
    scored = run([*score("nested.jsonl"), "--out", "S.json"], fixed)
    assert scored[0] == 0, scored[1]
    return 2, refused


def case_bit_for_boolean(d: Path):
    import json
    import shutil

    compiled_with_data(d)
    records = [json.loads(x) for x in (d / "obs.jsonl").read_text().splitlines()]
    bits = [{**r, "correct": None if r["correct"] is None else int(r["correct"])} for r in records]
    with (d / "bits.jsonl").open("w") as f:
        f.writelines(json.dumps(r) + "\n" for r in [*records[:2], *bits[2:]])
    refused = run([*score("bits.jsonl"), "--out", "S.json"], d)
    assert not (d / "S.json").exists()
    # the FAQ's remedy, in a project of its own: the field as the log writes it, the metric's
    # value, and the scenarios writing the same two values; the 1/0 log then scores as the
    # boolean log did, and simulate writes 1 and 0
    fixed = d.with_name(d.name + "-fixed")
    spec = starter(fixed)
    edit(
        spec,
        "{name: correct, type: boolean, nullable: true, description: null when the attempt failed}",
        "{name: correct, type: integer, allowed: [0, 1], nullable: true}",
    )
    edit(spec, "{field: correct, op: eq, value: true}", "{field: correct, op: eq, value: 1}")
    text = spec.read_text(encoding="utf-8")
    spec.write_text(
        text.replace(
            "    outcome: correct\n",
            "    outcome: correct\n    outcome_values: {holds: 1, otherwise: 0}\n",
        ),
        encoding="utf-8",
    )
    assert run(["compile"], fixed)[0] == 0
    with (fixed / "bits.jsonl").open("w") as f:
        f.writelines(json.dumps(r) + "\n" for r in bits)
    shutil.copy(d / "items.jsonl", fixed / "items.jsonl")
    assert run([*score("obs.jsonl"), "--out", "B.json"], d)[0] == 0
    scored = run([*score("bits.jsonl"), "--out", "S.json"], fixed)
    assert scored[0] == 0, scored[1]
    by_bool = json.loads((d / "B.json").read_text())
    by_bits = json.loads((fixed / "S.json").read_text())
    assert by_bits["decision"] == by_bool["decision"]
    assert by_bits["estimates"] == by_bool["estimates"]
    argv = ["my-study", "simulate", "--items", "items.jsonl", "--scenario", "effect"]
    assert run([*argv, "--seed", "1", "--out", "sim.jsonl"], fixed)[0] == 0
    drawn = {json.loads(x)["correct"] for x in (fixed / "sim.jsonl").read_text().splitlines()}
    assert drawn <= {0, 1, None} and {0, 1} <= drawn
    return 2, refused


CASES = {
    "bit-for-boolean": case_bit_for_boolean,
    "nested-log": case_nested_log,
    "claim-fails": case_claim_fails,
    "no-diagnose": case_no_diagnose,
    "unknown-key": case_unknown_key,
    "rule-never-fires": case_rule_never_fires,
    "verdict-never": case_verdict_never,
    "compound-key": case_compound_key,
    "duplicate-record": case_duplicate_record,
    "output-exists": case_output_exists,
    "stale": case_stale,
    "not-ready-to-seal": case_not_ready_to_seal,
    "sealed-changed": case_sealed_changed,
}


def printed(quoted: str, output: str) -> list[str]:
    """The quoted lines not printed (as a whole line, leading spaces aside)."""
    lines = [line.strip() for line in output.splitlines()]
    missing = []
    for q in quoted.splitlines():
        pattern = "".join(
            DIGEST if re.fullmatch(DIGEST, part) else re.escape(part)
            for part in re.split(f"({DIGEST})", q.strip())
        )
        if not any(re.fullmatch(pattern, line) for line in lines):
            missing.append(q)
    return missing


def test_printed_is_line_by_line_and_digests_only_are_patterns():
    d = "sha256:" + "1" * 64
    assert printed(f"  error: x ({d})", f"error: x (sha256:{'2' * 64})\n") == []
    assert printed("error: x", "error: xy\n") == ["error: x"]
    assert printed("a.b", "axb\n") == ["a.b"]


def test_every_quoted_message_is_what_prereg_prints(tmp_path):
    quoted = {m["name"]: m["text"] for m in CASE.finditer(FAQ.read_text(encoding="utf-8"))}
    assert len(quoted) >= 6
    assert set(quoted) <= set(CASES), set(quoted) - set(CASES)
    for name, text in quoted.items():
        status, (code, output) = CASES[name](tmp_path / name)
        assert code == status, f"{name}: exit {code}\n{output}"
        assert printed(text, output) == [], f"{name}: printed\n{output}"
