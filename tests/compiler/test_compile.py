"""prereg compile / check: golden output, byte stability, staleness, safety, run-time digest pin."""

import ast
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.digest import digest
from tests.conftest import ROOT, run_prereg

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "compile-basic" / "project"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_golden_example_compiles_to_the_committed_files(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(GOLDEN / "spec", project / "spec")
    result = run_prereg("--project", project, "compile")
    assert result.returncode == 0, result.stderr
    assert _tree(project / "generated") == _tree(GOLDEN / "generated")


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_output_is_byte_identical_across_hash_seeds(tmp_path, seed):
    project = tmp_path / "p"
    shutil.copytree(GOLDEN / "spec", project / "spec")
    result = run_prereg("--project", project, "compile", env={"PYTHONHASHSEED": seed})
    assert result.returncode == 0, result.stderr
    assert _tree(project / "generated") == _tree(GOLDEN / "generated")


def test_every_generated_file_carries_the_header_and_digest():
    spec_digest = None
    for rel, data in _tree(GOLDEN / "generated").items():
        text = data.decode()
        assert "DO NOT EDIT" in text.splitlines()[0] or '"$comment"' in text.splitlines()[1], rel
        if spec_digest is None:
            spec_digest = text.split("sha256:")[1][:64]
        assert f"sha256:{spec_digest}" in text, rel


def test_repository_generated_tree_is_current(repo_root, capsys):
    assert main(["--project", str(repo_root), "check"]) == 0
    assert "generated/ matches the specs" in capsys.readouterr().out


def test_one_character_change_makes_check_fail_then_generate_fixes_it(project_copy, capsys):
    spec = project_copy / "spec/studies/d17-multifact.yaml"
    # a change of registered content: the study is sealed anew below (a registered study must
    # be sealed; the seal tests cover amendments)
    (project_copy / "spec/studies/d17-multifact.seal.json").unlink()
    text = spec.read_text()
    assert "{level: missing-contrastive, rows: 220}" in text
    # one character in the crossing's rows_by: six test cells (3 pools x 2 hops) gain a row
    spec.write_text(
        text.replace(
            "{level: missing-contrastive, rows: 220}", "{level: missing-contrastive, rows: 221}", 1
        )
        .replace("{scope: test, rows: 5700}", "{scope: test, rows: 5706}")
        .replace("{scope: all, rows: 5778}", "{scope: all, rows: 5784}")
        # the registered worst case counts the rows (5,784 × 2 attempts)
        .replace("worstCase: {calls: 11556,", "worstCase: {calls: 11568,")
    )
    assert main(["--project", str(project_copy), "check"]) == 1
    out = capsys.readouterr().out
    assert "stale or edited: generated/d17_multifact/PREREG.md" in out
    assert "stale or edited: generated/d17_multifact/constants.py" in out
    assert "generated/s3_verifier_freeze" not in out
    assert main(["--project", str(project_copy), "compile"]) == 0
    assert main(["--project", str(project_copy), "seal", "d17-multifact"]) == 0
    assert main(["--project", str(project_copy), "check"]) == 0


def test_hand_edit_and_unexpected_file_are_caught(project_copy, capsys):
    target = project_copy / "generated/jev_multicorrect/constants.py"
    target.write_text(target.read_text() + "\nEXTRA = 1\n")
    (project_copy / "generated/jev_multicorrect/notes.txt").write_text("hi\n")
    assert main(["--project", str(project_copy), "check"]) == 1
    out = capsys.readouterr().out
    assert "stale or edited: generated/jev_multicorrect/constants.py" in out
    assert "+EXTRA = 1" not in out and "-EXTRA = 1" in out
    assert "unexpected: generated/jev_multicorrect/notes.txt" in out


def test_stale_language_schema_is_caught_without_linkml(project_copy, capsys):
    src = project_copy / "spec/prereg.linkml.yaml"
    src.write_text(
        src.read_text().replace(
            "title: The prereg preregistration language", "title: The prereg language"
        )
    )
    assert main(["--project", str(project_copy), "check"]) == 1
    assert "stale: generated/prereg.schema.json" in capsys.readouterr().out


def test_language_schema_regenerates_byte_for_byte(repo_root):
    from prereg.compiler.language import render_schema

    assert (
        render_schema(Project(repo_root))
        == (repo_root / "generated/prereg.schema.json").read_bytes()
    )


def test_spec_digest_ignores_comments_and_layout(tmp_path):
    from prereg.compiler.load import load_yaml_text

    a = load_yaml_text("id: x\nrows: [1, 2]\n", Path("a.yaml")).data
    b = load_yaml_text("# a comment\nrows:\n  - 1\n  - 2\nid: 'x'\n", Path("b.yaml")).data
    assert digest(a) == digest(b)
    assert digest(a) != digest(load_yaml_text("id: x\nrows: [1, 3]\n", Path("c.yaml")).data)


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(
        name, path / "__init__.py", submodule_search_locations=[str(path)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_hostile_strings_stay_literals(tmp_path):
    """Quotes, newlines, backslashes and code in spec strings reach generated code only as data."""
    gen = GOLDEN / "generated" / "example_probe"
    for py in gen.glob("*.py"):
        tree = ast.parse(py.read_text())
        calls = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert not calls & {"__import__", "eval", "exec", "print", "system"}, py.name
    pkg = _import(gen, "golden_example_probe")
    from golden_example_probe import constants

    framing = constants.ENGINE_CONFIG["pools"][0]["words"]["framing"]
    assert framing == "A \"fictional\" archive; print('x')\nrecords this."
    assert constants.TEMPLATES["rule"] == 'An entity "X" can reach\\n'
    assert pkg.STUDY_ID == "example-probe"
    assert "__import__('os')" not in (gen / "__init__.py").read_text()


def test_a_spec_is_parsed_once_per_content_and_a_change_is_still_refused(project_copy, monkeypatch):
    """The run-time pin keeps a spec's parse by the file's bytes: two contexts parse it once,
    and the file changed afterwards (same path, same process) is parsed again and refused."""
    from prereg import study

    parsed = []
    real = study.load_yaml_bytes

    def counting(raw, shown):
        parsed.append(shown)
        return real(raw, shown)

    monkeypatch.setattr(study, "load_yaml_bytes", counting)
    monkeypatch.setattr(study, "_PARSED", {})
    project = Project(project_copy)
    study.study_context(project, "jev-multicorrect")
    study.study_context(project, "jev-multicorrect")
    assert len(parsed) == 1
    spec = project_copy / "spec/studies/jev-multicorrect.yaml"
    spec.write_text(spec.read_text().replace("\ntitle: ", "\ntitle: Retitled ", 1))
    with pytest.raises(Exception, match="spec changed since the last compile"):
        study.study_context(project, "jev-multicorrect")
    assert len(parsed) == 2


def test_study_command_refuses_when_spec_changed_since_compile(project_copy):
    spec = project_copy / "spec/studies/jev-multicorrect.yaml"
    text = spec.read_text()
    changed = re.sub(r"^title: .*$", "title: A retitled study", text, count=1, flags=re.M)
    assert changed != text
    spec.write_text(changed)
    from prereg.study import study_context

    with pytest.raises(Exception) as info:
        study_context(Project(project_copy), "jev-multicorrect")
    assert "spec changed since the last compile" in str(info.value)
    assert "run prereg compile" in str(info.value)


def test_help_explains_itself():
    for args in (["--help"], ["compile", "--help"], ["check", "--help"]):
        result = run_prereg(*args)
        assert result.returncode == 0
        assert "usage: prereg" in result.stdout
    assert "generated/" in run_prereg("compile", "--help").stdout


def test_no_project_is_a_clear_error(tmp_path):
    result = run_prereg("check", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: no prereg project here")
    assert "Traceback" not in result.stderr


def test_record_contract_schema_refuses_bad_records(tmp_path):
    from prereg.errors import UserError
    from prereg.records import read_records

    schema = GOLDEN / "generated/example_probe/schemas/observation.schema.json"
    assert json.loads(schema.read_text())["additionalProperties"] is False
    path = tmp_path / "obs.jsonl"
    row = '{"rowId": "' + "a" * 64 + '", "pYes": 0.5, "attempt": 1}'
    path.write_text(
        row
        + "\n"
        + '{"rowId": "x", "pYes": NaN, "attempt": 1}\n'
        + '{"rowId": "'
        + "b" * 64
        + '", "pYes": true, "attempt": 0, "x": 1}\n'
    )
    with pytest.raises(UserError) as info:
        read_records(path, schema, "jsonl")
    text = "\n".join(info.value.lines())
    assert f"{path}:2: not valid JSON: NaN is not a JSON value" in text
    assert f"{path}:3: at /: unexpected field 'x'" in text
    assert f"{path}:3: at /attempt: 0 is less than the minimum of 1" in text
    assert f"{path}:3: at /pYes: expected ['number', 'null'], got true" in text


def test_engine_config_is_the_spec_registered_content(repo_root):
    """What generated/<study>/constants.py hands an engine equals spec_config of the parsed spec."""
    import importlib

    from prereg.compiler.build import engine_config, load_all
    from prereg.study import load_generated

    project = Project(repo_root)
    for study in load_all(project):
        module = load_generated(project, study.id)
        constants = importlib.import_module(module.__name__ + ".constants")
        assert json.loads(json.dumps(constants.ENGINE_CONFIG)) == json.loads(
            json.dumps(engine_config(study.data))
        )


def test_engine_config_carries_the_record_contracts_without_prose():
    from prereg.compiler.build import spec_config

    spec = {
        "id": "s",
        "version": "1",
        "record_contracts": [
            {
                "id": "obs",
                "title": "An observation",
                "description": "prose",
                "format": "jsonl",
                "role": "observations",
                "fields": [
                    {"name": "row", "role": "row", "type": "string", "pattern": "^r$"},
                    {
                        "name": "p",
                        "type": "number",
                        "nullable": True,
                        "minimum": 0,
                        "maximum": 1,
                        "description": "prose",
                        "required": False,
                    },
                    {
                        "name": "xs",
                        "type": "array",
                        "items": "integer",
                        "min_items": 1,
                        "max_items": 3,
                    },
                    {"name": "k", "type": "string", "allowed": ["a", "b"], "min_length": 1},
                ],
            },
            {"id": "art", "format": "json", "fields": [{"name": "id", "type": "string"}]},
        ],
    }
    assert spec_config(spec)["record_contracts"] == [
        {
            "id": "obs",
            "format": "jsonl",
            "role": "observations",
            "fields": [
                {"name": "row", "role": "row", "type": "string", "pattern": "^r$"},
                {
                    "name": "p",
                    "type": "number",
                    "required": False,
                    "nullable": True,
                    "minimum": 0,
                    "maximum": 1,
                },
                {"name": "xs", "type": "array", "min_items": 1, "max_items": 3, "items": "integer"},
                {"name": "k", "type": "string", "allowed": ["a", "b"], "min_length": 1},
            ],
        },
        {"id": "art", "format": "json", "fields": [{"name": "id", "type": "string"}]},
    ]
    assert spec_config({"id": "s", "version": "1"})["record_contracts"] == []


def test_running_a_study_never_imports_linkml(tmp_path):
    code = (
        "import sys\n"
        "from prereg.cli import main\n"
        f"rc = main(['jev-multicorrect', 'diagnostic', '--seeds', '42', '--out', {str(tmp_path / 'd.json')!r}])\n"
        "assert rc == 0, rc\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('linkml', 'linkml_runtime'))\n"
        "print('LINKML', loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "LINKML []" in result.stdout


def test_project_is_found_from_a_subfolder(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(GOLDEN, project)
    sub = project / "spec" / "studies"
    result = run_prereg("check", cwd=sub)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "generated/ matches the specs" in result.stdout


def test_generated_record_class_reads_and_validates(tmp_path):
    from prereg.errors import UserError

    pkg = _import(GOLDEN / "generated" / "example_probe", "golden_example_probe_records")
    records = importlib.import_module(pkg.__name__ + ".records")
    good = tmp_path / "obs.jsonl"
    good.write_text('{"rowId": "' + "a" * 64 + '", "pYes": null, "attempt": 2}\n')
    (row,) = records.Observation.read(good)
    assert row == records.Observation(rowId="a" * 64, pYes=None, attempt=2, arm=None)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"rowId": "x", "pYes": 0.5, "attempt": 1}\n')
    with pytest.raises(UserError) as info:
        records.Observation.read(bad)
    assert f"{bad}:1: at /rowId:" in "\n".join(info.value.lines())


def test_prereg_md_has_every_preregistration_section():
    """Each study's PREREG.md reads as a preregistration: the template sections in order, the
    operator commands last, a header row on the metadata table, long constants as lists."""
    root = Path(__file__).resolve().parents[2]
    sections = [
        "## Study information",
        "### Research question",
        "### Rationale",
        "## Hypotheses and decision rules",
        "## Design plan",
        "### Blinding",
        "## Sampling plan",
        "### Sample size and why",
        "### Stopping rule",
        "## Analysis plan",
        "### Confirmatory analyses",
        "### Exclusions",
        "### Missing data",
        "### Exploratory analyses",
        "## Deviations",
        "## Appendix A: frozen constants",
        "## Appendix B: operator commands",
    ]
    for pkg in ("d17_multifact", "jev_multicorrect", "s3_verifier_freeze"):
        text = (root / "generated" / pkg / "PREREG.md").read_text(encoding="utf-8")
        lines = text.splitlines()
        at = [lines.index(s) if s in lines else -1 for s in sections]
        assert -1 not in at, (pkg, [s for s, i in zip(sections, at, strict=True) if i < 0])
        assert at == sorted(at), pkg
        assert "| | |" not in text and "| field | value |" in text
        assert "Source document | *" in text  # named with its title
        # no one-line JSON blobs (a long paragraph of prose, or a table cell of it, is fine)
        blobs = [ln[:80] for ln in lines if len(ln) >= 1000 and ('{"' in ln or '["' in ln)]
        assert not blobs, (pkg, blobs)


def test_prereg_md_states_the_engine_decisions_in_the_rule_vocabulary():
    """jev's diagnostic pass and s3's plan status are registered rules, rendered from the rule
    tree like d17's; the figures they read are listed; jev says its threshold fit is an argmax
    the vocabulary cannot state."""
    from prereg.reports.verdicts import rule_text

    root = Path(__file__).resolve().parents[2]
    s3 = (root / "generated" / "s3_verifier_freeze" / "PREREG.md").read_text(encoding="utf-8")
    assert "### power-plan-status: The power plan's status" in s3
    assert "- **infeasible** when:\n  - any of:\n    - all of:\n" in s3
    assert "      - `calibration-repositories`: value < 5\n" in s3
    assert "      - `calibration-repositories-beyond-eligible`: value < 0\n" in s3
    assert "    - for some `rung` in 50, 75, 100, 150, 200, 300, 500:\n" in s3
    assert "      - `power-rung-{rung}`: value ≥ 0.9\n" in s3
    assert "    - `power-full-universe`: value ≥ 0.9\n" in s3
    assert "- **underpowered_full_universe** otherwise" in s3
    assert (
        "### positive-at-both-levels: The confirmatory test the power plan serves (reported only)"
        in s3
    )
    assert "  - `confirmatory-lower-bound-task`: value > 0" in s3
    assert "### Figures the rules read" in s3
    assert (
        "| `power-full-universe` | Simulated power at the full eligible universe (N tasks) |" in s3
    )
    assert "another analysis (not this study's engine)" in s3
    words = rule_text(s3, "power-plan-status")
    assert words.startswith("Verdicts (the first that holds): **infeasible** when: any of:")
    assert "**powered** when:" in words and "`power-full-universe`: value ≥ 0.9" in words

    jev = (root / "generated" / "jev_multicorrect" / "PREREG.md").read_text(encoding="utf-8")
    assert "### diagnostic-passes: The diagnostic passes" in jev
    assert "Decision rule (supported when it holds):" in jev
    assert "- for every `contract` in ranking_vs_set_recovery, below_uniform_counted," in jev
    assert "  - `held-{contract}`: value ≥ 1" in jev
    assert "| `held-five_copy_gap` | The five-copy gap is as referenced (contract 7) |" in jev
    assert "which the rule vocabulary's comparisons cannot" in jev and "argmax" in jev
    assert rule_text(jev, "diagnostic-passes").startswith(
        "Decision rule (supported when it holds):"
    )


def test_a_study_compiled_again_within_the_second_runs_its_new_code(tmp_path, monkeypatch):
    """A generated module rewritten with the same size and modification second as the one
    already imported (and cached as bytecode) is run from its new source: compile removes the
    rewritten modules' cached bytecode."""
    import os

    from prereg import study

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    project_dir = tmp_path / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project_dir / "spec")
    project = Project(project_dir)
    assert main(["--project", str(project_dir), "compile"]) == 0
    module, _ = study.study_context(project, "answer-position")
    init = Path(module.__file__)
    assert list((init.parent / "__pycache__").glob("__init__.*.pyc"))  # bytecode was written
    stamp = init.stat()
    spec = project_dir / "spec" / "studies" / "answer-position.yaml"
    text = spec.read_text()
    assert "margin: -0.05" in text
    spec.write_text(text.replace("margin: -0.05", "margin: -0.06", 1))
    assert main(["--project", str(project_dir), "compile"]) == 0
    assert init.stat().st_size == stamp.st_size  # the digest changed, not the size
    os.utime(init, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and within the same second
    module2, ctx = study.study_context(project, "answer-position")
    assert module2.SPEC_DIGEST == ctx.spec_digest != module.SPEC_DIGEST
