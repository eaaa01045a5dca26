"""The malformed-spec corpus: each bad spec gets its exact message, a non-zero exit, no traceback,
and nothing is written."""

import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.engines import registry

BAD = Path(__file__).parent / "bad"

# name -> (line, message fragment after "at <pointer>: " or the loader's message)
EXPECTED = {
    "alias-bomb": "alias-bomb.yaml:23: document expands to more than 200000 values (alias bomb?)",
    # an alias inside the value it names, and nesting (by brackets or by a chain of aliases)
    # deeper than any spec needs: refused before the loader recurses (RecursionError tracebacks)
    "alias-cycle": "alias-cycle.yaml:23: an alias refers to a value that contains it (a cycle)",
    "alias-chain-depth": "alias-chain-depth.yaml:23: values nest more than 64 levels deep",
    "deep-nesting": "deep-nesting.yaml:23: values nest more than 64 levels deep",
    # 010 is 8 to a YAML 1.1 reader and 10 to a YAML 1.2 one (it was read as 8)
    "leading-zero": "leading-zero.yaml:15: integer 010 has a leading zero: YAML 1.1 reads it as octal (8), YAML 1.2 as 10; write 10 (or 0o... for octal)",
    "amendment-version": "amendment-version.yaml:2: at /version: study version 1.0 differs from the latest amendment, 1.1",
    "bad-identifier": 'bad-identifier.yaml:12: at /factors/0/levels/1/id: "pool-b); import os" does not match the pattern',
    "bad-regex": "bad-regex.yaml:23: at /seed_policy/pattern: not a valid regular expression: unterminated character set",
    "allowed-not-the-levels": "allowed-not-the-levels.yaml:21: at /record_contracts/0/fields/1/allowed: field 'arm' leaves out ['arm-b'], levels of 'arm' (the study's own rows at those levels would break their contract)",
    "allowed-not-the-splits": "allowed-not-the-splits.yaml:23: at /record_contracts/0/fields/1/allowed: field 'split' leaves out ['tuning'], splits of the study (the study's own rows in those splits would break their contract)",
    "allowed-unknown-split": "allowed-unknown-split.yaml:23: at /record_contracts/0/fields/1/allowed: field 'split' allows ['holdout'], which are not splits of the study (splits: tuning, test)",
    "order-on-a-boolean": "order-on-a-boolean.yaml:41: at /metrics/0/compute/where/0/field: metric 'accuracy': op ge orders numbers, and 'correct' is a boolean field of 'observation', not a number",
    "split-not-a-string": "split-not-a-string.yaml:23: at /record_contracts/0/fields/1/type: field 'split' holds a split, so it is a string",
    "attempts-unknown-field": "attempts-unknown-field.yaml:32: at /attempts/order: order field 'attempt_no' is not a field of 'observation'",
    "crossing-repeated-ids": "crossing-repeated-ids.yaml:14: at /crossings/0/id: the cell id template must name every crossed factor ({factor}), or the cells' ids repeat",
    "crossing-unknown-factor": "crossing-unknown-factor.yaml:14: at /crossings/0/factors/1: crossing names unknown factor 'dose'",
    "margin-without-score-test": "margin-without-score-test.yaml:53: at /hypotheses/0/contrasts/0/margin: contrast 'a-vs-b': pooled-z tests a - b = 0; a margin needs farrington-manning",
    "metric-unknown-field": "metric-unknown-field.yaml:41: at /metrics/0/compute/where/0/field: metric 'accuracy' names unknown field 'right'",
    "scenario-outcome-not-boolean": "scenario-outcome-not-boolean.yaml:57: at /scenarios/0/outcome: scenario 'null-arms': outcome 'attempt' is not a boolean field of 'observation'",
    "escape-in-string": "escape-in-string.yaml:3: control character U+001B at position 8 is not allowed in a spec string (only newline and tab are)",
    "huge-integer": "huge-integer.yaml:14: integer 123456789012345678901234… is too large (more than 20 digits)",
    "nul-in-string": "nul-in-string.yaml:3: control character U+0000 at position 7 is not allowed in a spec string (only newline and tab are)",
    # a raw NUL byte: the YAML reader's error gave an offset into the text and no line
    "raw-nul": "raw-nul.yaml:3: invalid YAML: character U+0000 at column 15: control characters are not allowed",
    "unsafe-integer": "unsafe-integer.yaml:14: integer 9007199254740993 is outside ±(2^53 − 1), which JSON does not carry exactly",
    "factorial-bad-interval": "factorial-bad-interval.yaml:57: at /constants/0/value/cell_interval/method: cell_interval method must be a proportion interval (wilson or clopper-pearson) (engine factorial, constant reporting)",
    "factorial-no-compute": "factorial-no-compute.yaml:36: at /metrics/0: metric 'accuracy' has no compute block: the factorial engine computes only what the spec says (engine factorial)",
    "bad-yaml": "bad-yaml.yaml:4: invalid YAML: did not find expected ',' or ']'",
    "dangling-level": "dangling-level.yaml:15: at /cells/1/levels/0/level: cell 'cell-b' uses level 'pool-z', which factor 'pool' does not have",
    "dangling-metric": "dangling-metric.yaml:27: at /hypotheses/0/contrasts/0/metric: contrast 'h1-ab' names unknown metric 'recall'",
    "derived-order": "derived-order.yaml:25: at /derived_fields/0/test/0/field: derived field 'correct' names unknown field 'answer'",
    "dangling-split": "dangling-split.yaml:15: at /cells/1/split: cell 'cell-b' names unknown split 'tuning'",
    "duplicate-id": "duplicate-id.yaml:15: at /cells/1/id: duplicate cell id 'cell-a' (first at /cells/0)",
    "duplicate-contract-role": "duplicate-contract-role.yaml:31: at /record_contracts/1/role: duplicate record contract role 'answers' (first at /record_contracts/0)",
    "duplicate-role": "duplicate-role.yaml:28: at /record_contracts/0/fields/1/role: duplicate field role 'row' (first at /record_contracts/0/fields/0)",
    "duplicate-key": "duplicate-key.yaml:4: duplicate key 'title'",
    "id-mismatch": "id-mismatch.yaml:1: at /id: study id 'other-study' differs from its file name 'id-mismatch'",
    "missing-field": "missing-field.yaml:1: at /: missing required key: 'engine'",
    "nan-constant": "nan-constant.yaml:21: non-finite number '.nan' is not allowed",
    "negative-rows": "negative-rows.yaml:14: at /cells/0/rows: -5 breaks minimum 0",
    "overlapping-cells": "overlapping-cells.yaml:15: at /cells/1: cell 'cell-b' overlaps cell 'cell-a': a row could belong to both",
    "python-tag": "python-tag.yaml:3: tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed in a spec",
    "unbound-placeholder": "unbound-placeholder.yaml:34: at /hypotheses/0/rule/compare/target: placeholder {pair} is not bound by an enclosing for_each",
    "unknown-engine": "unknown-engine.yaml:5: at /engine: unknown engine 'magic' (registered: "
    + ", ".join(registry.kinds())
    + ")",
    "unknown-key": "unknown-key.yaml:4:1; allowed here: amendments, attempts, budget,",
    "wrong-total": "wrong-total.yaml:17: at /totals/0/rows: declared total 13 for 'test' differs from the sum of its cells, 12",
    "wrong-type": 'wrong-type.yaml:14: at /cells/0/rows: expected integer, got "five"',
    # the engine's configuration: its schema over the constants, then its checks
    "engine-missing-setting": "engine-missing-setting.yaml:189: at /constants/15/value: missing required key: 'folds' (engine reachability-probe, constant audit)",
    "engine-wrong-type": 'engine-wrong-type.yaml:62: at /constants/4/value/gap_scale: expected integer, got "100" (engine multicorrect-scoring, constant metric-conventions)',
    "engine-unknown-key": "engine-unknown-key.yaml:57: at /constants/3/value: unknown key 'frozen' (allowed here: evaluate, fit, ties) (engine multicorrect-scoring, constant threshold-fit)",
    "engine-unknown-split": "engine-unknown-split.yaml:57: at /constants/3/value/fit: names split 'calibration', which the spec does not declare (splits: validation, test) (engine multicorrect-scoring, constant threshold-fit)",
    "engine-unknown-factor": "engine-unknown-factor.yaml:234: at /constants/18/value/hops: names factor 'relays', which the spec does not declare (factors: pool, hops, outcome, layout) (engine reachability-probe, constant factor-roles)",
}

BUILT_IN_ENGINES = {"cluster-power-freeze", "multicorrect-scoring", "reachability-probe"}


def test_corpus_is_complete():
    assert sorted(p.stem for p in BAD.glob("*.yaml")) == sorted(EXPECTED)
    assert len(EXPECTED) >= 15
    assert BUILT_IN_ENGINES <= set(registry.kinds())  # the unknown-engine message lists them


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_spec_is_refused_with_its_message(name, tmp_path, capsys):
    project = tmp_path / "p"
    (project / "spec" / "studies").mkdir(parents=True)
    shutil.copy(BAD / f"{name}.yaml", project / "spec" / "studies" / f"{name}.yaml")
    code = main(["--project", str(project), "compile"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: the specs have problems; nothing was written\n")
    assert f"spec/studies/{EXPECTED[name]}" in err
    assert "Traceback" not in err + out
    assert not (project / "generated").exists()


def test_a_bad_spec_blocks_every_output(tmp_path, capsys, repo_root):
    """One broken spec among good ones: nothing is written for any of them."""
    project = tmp_path / "p"
    (project / "spec" / "studies").mkdir(parents=True)
    shutil.copy(
        repo_root / "tests/golden/compile-basic/project/spec/studies/example-probe.yaml",
        project / "spec/studies",
    )
    shutil.copy(BAD / "wrong-total.yaml", project / "spec/studies")
    assert main(["--project", str(project), "compile"]) == 2
    assert not (project / "generated").exists()


def test_study_ids_that_share_a_package_or_shadow_a_command_are_refused(tmp_path, capsys):
    project = tmp_path / "p"
    studies = project / "spec" / "studies"
    studies.mkdir(parents=True)
    # A valid factorial spec (the bad case with its field name put right).
    base = (BAD / "metric-unknown-field.yaml").read_text().replace("field: right", "field: correct")
    for sid in ("jev-x", "jev_x", "compile"):
        (studies / f"{sid}.yaml").write_text(base.replace("id: metric-unknown-field", f"id: {sid}"))
    code = main(["--project", str(project), "compile"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert (
        "spec/studies/jev_x.yaml:1: at /id: study id 'jev_x' and 'jev-x' (spec/studies/jev-x.yaml)"
        " compile to the same package generated/jev_x/" in err
    )
    assert "spec/studies/compile.yaml:1: at /id: study id 'compile' is a prereg command" in err
    assert not (project / "generated").exists()
    # The CLI itself still works in such a project (its help, its own commands).
    from tests.conftest import run_prereg

    shown = run_prereg("--project", project, "--help")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert main(["--project", str(project), "check"]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("length", [128, 129, 250])
def test_a_study_id_too_long_to_name_its_files_is_refused(length, tmp_path, capsys):
    """Files are named after the id (<id>.seal.json: 250 + 10 bytes is past the 255-byte
    limit on a name), so seal and the study's commands failed with ENAMETOOLONG tracebacks."""
    sid = "a" * length
    project = tmp_path / "p"
    studies = project / "spec" / "studies"
    studies.mkdir(parents=True)
    base = (BAD / "metric-unknown-field.yaml").read_text().replace("field: right", "field: correct")
    (studies / f"{sid}.yaml").write_text(base.replace("id: metric-unknown-field", f"id: {sid}"))
    code = main(["--project", str(project), "compile"])
    err = capsys.readouterr().err
    if length <= 128:
        assert code == 0, err
        return
    assert code == 2
    assert f"at /id: study id of {length} characters is longer than 128" in err
    assert not (project / "generated").exists()


@pytest.mark.parametrize("name", ["other.yml", "other.YAML", "other.Yml"])
def test_a_spec_not_named_yaml_is_refused_not_left_out(name, tmp_path, capsys):
    """A spec saved as .yml was never compiled nor checked, without a word."""
    project = tmp_path / "p"
    studies = project / "spec" / "studies"
    studies.mkdir(parents=True)
    base = (BAD / "metric-unknown-field.yaml").read_text().replace("field: right", "field: correct")
    (studies / "good.yaml").write_text(base.replace("id: metric-unknown-field", "id: good"))
    (studies / name).write_text(base.replace("id: metric-unknown-field", "id: other"))
    for command in ("compile", "check"):
        code = main(["--project", str(project), command])
        err = capsys.readouterr().err
        assert code == 2
        assert f"error: spec/studies/{name}: a spec is named <study-id>.yaml; rename it" in err
    assert not (project / "generated").exists()


@pytest.mark.parametrize("others", [True, False])
@pytest.mark.parametrize("name", ["other.yaml", "other.yml"])
def test_a_folder_named_like_a_spec_is_refused_not_skipped(name, others, tmp_path, capsys):
    """A folder spec/studies/other.yaml was skipped without a word beside other specs, and
    alone read "no *.yaml specs to compile" though the folder listing shows one."""
    project = tmp_path / "p"
    studies = project / "spec" / "studies"
    studies.mkdir(parents=True)
    if others:
        base = (BAD / "metric-unknown-field.yaml").read_text()
        base = base.replace("field: right", "field: correct")
        (studies / "good.yaml").write_text(base.replace("id: metric-unknown-field", "id: good"))
    (studies / name).mkdir()
    (studies / name / "spec.yaml").write_text("id: inside\n")
    for command in ("compile", "check"):
        code = main(["--project", str(project), command])
        err = capsys.readouterr().err
        assert code == 2
        assert (
            f"error: spec/studies/{name}/: a folder named like a spec; a spec is a YAML file"
            " spec/studies/<study-id>.yaml: move the folder out of spec/studies/ or rename it"
        ) in err
    assert not (project / "generated").exists()


@pytest.mark.parametrize("word", ["csv", "parquet"])
def test_a_contract_format_naming_a_file_kind_says_files_are_read_by_extension(word, tmp_path):
    """A newcomer with a CSV export writes `format: csv`; the refusal says the file is read
    as CSV by its extension and what to write, not only the two allowed words."""
    from tests.conftest import FIXTURES, compile_edited

    source = FIXTURES / "mean_threshold" / "grader-mean.yaml"
    code, err, line_of = compile_edited(
        tmp_path, "grader-mean", [("format: jsonl", f"format: {word}")], source
    )
    assert code == 2
    assert (
        f'at /record_contracts/0/format: "{word}" is not one of: json, jsonl (a .csv or'
        " .parquet file is read as such by its extension, whatever the contract's format says:"
        " write jsonl)"
    ) in " ".join(err.split())
