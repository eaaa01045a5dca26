"""The engine's configuration is checked when compiling: the shipped specs pass, and a broken
constant in a copy of one fails `prereg compile` with its file, line and rule, writing nothing."""

from __future__ import annotations

import pytest

from prereg.compiler.load import load_yaml
from prereg.engines import registry
from prereg.engines.base import constants
from tests.conftest import ROOT, run_main

D17 = "spec/studies/d17-multifact.yaml"
SPECS = ["d17-multifact", "jev-multicorrect", "s3-verifier-freeze"]


@pytest.mark.parametrize("study", SPECS)
def test_the_shipped_specs_match_their_engines_schema_and_checks(study):
    import jsonschema

    spec = load_yaml(ROOT / "spec" / "studies" / f"{study}.yaml").data
    engine = registry.require(spec["engine"])
    schema = engine.config_schema()
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(constants(spec))) == []
    assert engine.run_checks(spec) == []
    # every constant the engine reads is required; the shipped spec declares no other
    assert set(schema["required"]) == set(constants(spec))


@pytest.mark.parametrize(
    "old, new, at, rule",
    [
        (
            "      folds: 5\n",
            "",
            "/constants/15/value",
            "missing required key: 'folds' (engine reachability-probe, constant audit)",
        ),
        (
            "      folds: 5\n",
            "      folds: 5.0\n",
            "/constants/15/value/folds",
            "expected integer, got 5.0 (an integer is written without a point or exponent: a"
            " number such as 5.0 or 1e3 is a double) (engine reachability-probe, constant audit)",
        ),
        (
            "      folds: 5\n",
            "      folds: 1\n",
            "/constants/15/value/folds",
            "1 breaks minimum 2 (engine reachability-probe, constant audit)",
        ),
        (
            '      header: "{framing} Day',
            '      header: "Day',
            "/constants/12/value/header",
            "must start with {framing} (engine reachability-probe, constant templates)",
        ),
        (
            "      split: test\n      groupKey",
            "      split: tst\n      groupKey",
            "/constants/15/value/split",
            "names split 'tst', which the spec does not declare (splits: tuning, test)"
            " (engine reachability-probe, constant audit)",
        ),
        (
            "        - {outcome: relay-off, items: 7}",
            "        - {outcome: relay-of, items: 7}",
            "/constants/17/value/perOutcome/1/outcome",
            "names level 'relay-of' of factor 'outcome', which that factor does not have (levels:"
            " yes, relay-off, missing-contrastive, missing-negation, missing-unrelated,"
            " missing-absence) (engine reachability-probe, constant dev-review)",
        ),
        (
            "      tuning: development\n",
            "      tuning: development\n      dev: development\n",
            "/constants/19/value/dev",
            "names split 'dev', which the spec does not declare (splits: tuning, test)"
            " (engine reachability-probe, constant split-roles)",
        ),
        (
            "      permutedSplits: [test]",
            "      permutedSplits: [test, tuning]",
            "/constants/14/value",
            "must list every split exactly once between firstSplits and permutedSplits (splits:"
            " tuning, test) (engine reachability-probe, constant dispatch)",
        ),
        (
            '      rowDrawMessage: "aiwg-holdout-2850-v1:D17MF:{split}',
            '      rowDrawMessage: "aiwg-holdout-2850-v1:D17MF:{splitt}',
            "/constants/3/value/rowDrawMessage",
            "unknown placeholder(s) ['splitt']; allowed: ['counter', 'familyId', 'index', 'split']"
            " (the engine's configuration check) (engine reachability-probe, constant hashing)",
        ),
    ],
)
def test_a_broken_d17_constant_fails_compile_with_file_line_and_rule(
    project_copy, old, new, at, rule
):
    spec = project_copy / D17
    text = spec.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    changed = text.replace(old, new)
    spec.write_text(changed, encoding="utf-8")
    before = {p: p.read_bytes() for p in (project_copy / "generated").rglob("*") if p.is_file()}
    r = run_main("--project", project_copy, "compile")
    assert r.returncode == 2
    line = load_yaml(spec).lines[at]
    assert f"  {D17}:{line}: at {at}: {rule}\n" in r.stderr
    assert "Traceback" not in r.stderr
    after = {p: p.read_bytes() for p in (project_copy / "generated").rglob("*") if p.is_file()}
    assert after == before  # nothing written


def test_removing_folds_fails_check_at_the_line_the_readme_shows(project_copy):
    spec = project_copy / D17
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("      folds: 5\n", ""), encoding="utf-8")
    r = run_main("--project", project_copy, "check")
    assert r.returncode == 2
    line = load_yaml(spec).lines["/constants/15/value"]  # where the spec holds it today
    message = (
        f"{D17}:{line}: at /constants/15/value: missing required key: 'folds'"
        " (engine reachability-probe, constant audit)"
    )
    assert message in r.stderr
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert message in readme
