"""A misspelt study, command or option gets a suggestion; a study without commands says so."""

import re
import shutil

import pytest

from tests.conftest import ROOT, run_main


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["d17-multifac"], "did you mean 'd17-multifact'?"),
        (["compil"], "did you mean 'compile'?"),
        (["d17-multifact", "dry-rn"], "did you mean 'dry-run'?"),
        (["d17-multifact", "dry-run", "d17mf-smoke", "--nw", "x"], "did you mean '--now'?"),
        # an option of another command of the study: said so, not suggested as itself
        (
            ["d17-multifact", "prepare", "d17mf-smoke", "out", "--out", "x"],
            "'prepare' has no option --out ('bundle', 'calibrator-fit', 'diagnose' and others"
            " have it; see `prereg d17-multifact prepare --help`)",
        ),
        (
            ["check", "--out", "x"],
            "'check' has no option --out ('demo', 'export', 'sign-statement' have it; see",
        ),
        # the suggestion comes from the command given, not from every command
        (["d17-multifact", "prepare", "d17mf-smoke", "out", "--quite"], "did you mean '--quiet'?"),
    ],
)
def test_suggestions(argv, hint):
    p = run_main(*argv)
    assert p.returncode == 2 and hint in p.stderr and "Traceback" not in p.stderr
    assert "did you mean '" + argv[-1] + "'" not in p.stderr


@pytest.mark.parametrize("argv", [["check", "--out", "x"], ["compile", "--chek"]])
def test_no_far_fetched_suggestion(argv):
    p = run_main(*argv)
    assert p.returncode == 2 and "did you mean" not in p.stderr, p.stderr


def test_the_project_option_after_a_core_command(tmp_path):
    # as after a study command: `prereg check --project DIR` is `prereg --project DIR check`
    p = run_main("check", "--project", tmp_path / "none")
    assert p.returncode == 2
    assert "not a prereg project (no spec/studies/ folder)" in p.stderr, p.stderr
    assert "unrecognized" not in p.stderr


def test_a_study_without_commands_says_so(tmp_path):
    # the reachability engine provides no standard commands: its spec's are all there are
    project = tmp_path / "p"
    (project / "spec" / "studies").mkdir(parents=True)
    spec = project / "spec" / "studies" / "e23-relay-chains.yaml"
    text = (ROOT / "tests" / "fixtures" / "reachability" / "e23-relay-chains.yaml").read_text()
    start = text.index("\ncommands:\n") + 1
    rest = re.search(r"^[a-z_]+:", text[start + len("commands:\n") :], re.M)
    spec.write_text(
        text[:start] + (text[start + len("commands:\n") + rest.start() :] if rest else "")
    )
    assert run_main("--project", project, "compile").returncode == 0
    p = run_main("--project", project, "e23-relay-chains", "diagnose")
    assert p.returncode == 2
    assert "study 'e23-relay-chains' has no commands (its engine provides none" in p.stderr


def test_a_study_without_commands_has_its_engine_s_diagnose(tmp_path):
    # the multicorrect engine's standard command is all a spec without commands has
    project = tmp_path / "p"
    golden = ROOT / "tests" / "golden" / "compile-basic" / "project" / "spec"
    shutil.copytree(golden, project / "spec")
    (project / "spec" / "studies" / "example-probe.seal.json").unlink()  # not sealed here
    spec = project / "spec" / "studies" / "example-probe.yaml"
    text = spec.read_text()
    start = text.index("commands:\n")
    rest = re.search(r"^[a-z_]+:", text[start + len("commands:\n") :], re.M)
    spec.write_text(
        text[:start] + (text[start + len("commands:\n") + rest.start() :] if rest else "")
    )
    assert run_main("--project", project, "compile").returncode == 0
    p = run_main("--project", project, "example-probe", "diagnostic")
    assert p.returncode == 2
    assert "invalid choice: 'diagnostic' (choose from 'diagnose')" in p.stderr


@pytest.mark.parametrize(
    "argv, option",
    [
        (["--project", ".", "--project", "elsewhere", "check"], "--project"),
        (["export", "--format", "osf", "--format", "json", "d17-multifact"], "--format"),
        (["export", "--format", "osf", "--out", "a.md", "--out", "b.md", "d17-multifact"], "--out"),
    ],
)
def test_an_option_of_one_value_given_twice_is_refused_by_every_command(tmp_path, argv, option):
    # argparse would keep the last value silently: which project, which format was meant?
    res = run_main(*argv, cwd=tmp_path if "--project" in argv else None)
    assert res.returncode == 2
    assert f"argument {option}: given twice; it takes one value" in res.stderr
    assert not list(tmp_path.iterdir())
