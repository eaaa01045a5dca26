import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests with a fixed seed, so a submission is judged by the same examples
# every time; locally they keep exploring (and remember failures in .hypothesis/).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def project_copy(tmp_path) -> Path:
    """A copy of this repository's spec tree, language and generated code in a temp folder."""
    return copy_project(tmp_path / "project")


def copy_project(dst: Path) -> Path:
    """Copy this repository's spec tree, language and generated code to ``dst`` (outside git:
    a seed this repository commits, e.g. in a test file, is private there)."""
    (dst / "spec").mkdir(parents=True)
    shutil.copytree(ROOT / "spec" / "studies", dst / "spec" / "studies")
    shutil.copy(ROOT / "spec" / "prereg.linkml.yaml", dst / "spec" / "prereg.linkml.yaml")
    shutil.copytree(
        ROOT / "generated", dst / "generated", ignore=shutil.ignore_patterns("__pycache__")
    )
    return dst


def run_prereg(*args, cwd=None, env=None):
    """Run the CLI in a subprocess (as a user would); returns CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "prereg.cli", *map(str, args)],
        cwd=cwd or ROOT,
        env=full_env,
        capture_output=True,
        text=True,
    )


def run_main(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """:func:`run_prereg` in this process: ``prereg.cli.main`` with stdout and stderr caught,
    in ``cwd`` (the repository by default) with ``env`` added to the environment, for the tests
    that are not about the process boundary (a subprocess is about half a CPU-second of
    start-up). The exit code is main's, or a usage error's ``SystemExit`` code, as the process
    would exit with; an exception main lets through fails the test (a process would have
    printed a traceback)."""
    import contextlib
    import io

    from prereg.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = list(map(str, args))
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        with (
            contextlib.chdir(cwd or ROOT),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


# d17-multifact registers its 78 cells as crossings; this fixture is the same registration
# written cell by cell (as the spec held it before), for tests that edit one cell.
D17_WRITTEN_CELLS = FIXTURES / "d17" / "cells-written.yaml"


def safe_yaml(text: str):
    """``yaml.safe_load`` of ``text`` through libyaml's parser where PyYAML has it (the same
    safe constructor, a quarter of the pure-Python parser's time: the tests that read a spec
    at import read it while every xdist worker collects them)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def d17_written_cells() -> list[dict]:
    """The d17 cells as written one by one (read with PyYAML, independently of prereg)."""
    return safe_yaml(D17_WRITTEN_CELLS.read_text(encoding="utf-8"))["cells"]


def write_d17_cells(spec: Path) -> None:
    """Replace the crossings of a copy of the d17 spec by its cells written one by one."""
    text = spec.read_text(encoding="utf-8")
    start, end = text.index("\ncrossings:\n") + 1, text.index("\ntotals:\n") + 1
    spec.write_text(text[:start] + D17_WRITTEN_CELLS.read_text(encoding="utf-8") + text[end:])


def study_project(root: Path, study: str, text: str) -> Path:
    """A project at ``root`` holding one study's spec ``text`` and the language schema, not yet
    compiled."""
    import shutil

    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / f"{study}.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    return root


def score_records(root: Path, study: str, records: list[dict]) -> dict:
    """SCORE.json of a compiled study's score of ``records`` written as one JSONL log."""
    import json

    from prereg.cli import main

    log = root / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), study, "score", *args]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def compile_edited(tmp_path: Path, study: str, edits, source: Path | None = None):
    """Compile, in process, a project holding only a copy of ``study``'s spec (or of the spec
    file ``source``) with each ``(old, new)`` text replacement applied (``old`` must occur
    exactly once).

    Returns the exit code, what was written to stderr and a function giving the line of a JSON
    pointer in the edited spec (or of its nearest ancestor that has one).
    """
    import contextlib
    import io

    from prereg.cli import main
    from prereg.compiler.load import load_yaml

    project = tmp_path / "edited"
    studies = project / "spec" / "studies"
    studies.mkdir(parents=True)
    text = (source or ROOT / "spec" / "studies" / f"{study}.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec = studies / f"{study}.yaml"
    spec.write_text(text, encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["--project", str(project), "compile"])
    assert not (project / "generated").exists() or code == 0  # a refusal writes nothing
    loaded = load_yaml(spec)
    return code, err.getvalue(), loaded.line_of


def data_free_decision(spec: str) -> tuple[str, str]:
    """A :func:`compile_edited` edit replacing a spec's decision by one that reads nothing (for
    the cases that break what its rules read, so that the engine's own check is what compile
    reports)."""
    import re

    text = (ROOT / spec).read_text(encoding="utf-8")
    start = text.index("\ndecision:\n") + 1
    end = start + 1 + re.search(r"\n[a-z_]+:", text[start + 1 :]).start() + 1
    return text[start:end], "decision: {outcomes: [{id: any}], otherwise: any}\n"


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder ``build(folder)`` fills once per test run, for fixtures whose output the tests
    only read. Under pytest-xdist the workers share it: the first to ask builds it while the
    others wait for it (each worker held its own copy before, built again). A build that failed
    is removed and built again by the next worker to ask, which then fails as it did."""
    return built_once_each(tmp_path_factory, {name: build})[name]


def built_once_each(tmp_path_factory, builds: dict) -> dict[str, Path]:
    """:func:`built_once` of several folders (``{name: build}``), each built once per test
    run: a worker builds those no other worker is building, and only then waits for the
    others' (two workers asking at once build one each instead of one building both while the
    other waits)."""
    base = tmp_path_factory.getbasetemp()
    try:
        import fcntl
    except ImportError:  # no advisory locks: each worker builds its own, as before
        fcntl = None
    if fcntl is not None and os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, which holds each worker's own

    def once(name: str, build, wait: bool) -> bool:
        folder, done = base / f"once-{name}", base / f"once-{name}.done"
        with open(base / f"once-{name}.lock", "w") as lock:
            if fcntl is not None:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                except BlockingIOError:
                    return False  # another worker is building it
            if not done.exists():
                if folder.exists():
                    shutil.rmtree(folder)
                folder.mkdir()
                build(folder)
                done.touch()
        return True

    busy = [name for name, build in builds.items() if not once(name, build, wait=False)]
    for name in busy:
        once(name, builds[name], wait=True)
    return {name: base / f"once-{name}" for name in builds}


# -- the order pytest-xdist hands files to its workers ------------------------------------------
#
# `--dist loadfile` gives each worker a whole file at a time, by default the files with the most
# tests first; a file of few slow tests then comes last and one worker runs it while the other
# has finished (the tail). The workers are handed the slowest files first instead (the longest
# first: the tail is then a short file); a file not listed follows them, most tests first as
# before. The two demo files come first, one per worker: both ask for the shared demo runs at
# once, and each makes one (`built_once_each`). The rest are ordered by CPU seconds measured one
# file at a time in one process (user + sys with its subprocesses, bytecode written as CI
# writes it): the first 44 in session 15, less what that session cut from them, the others as
# session 14 measured them (the files over about 4 CPU-s: a file that grows past them should be
# added here, or it runs late and makes a tail). Session 16 moved the CLI files whose commands
# now run in process (run_main) down to their new cost (test_d17_cli ~11, test_json_and_progress
# ~8, test_jev_cli and test_s3_cli ~5 CPU-s) and dropped three that fell under 4 CPU-s.
SLOWEST_FIRST = [
    "demo/test_demo_reports.py",
    "demo/test_demo_outputs.py",
    "engines/multicorrect/test_jev_reader_oracle.py",
    "engines/reachability/test_d17_score_fast_readers.py",
    "diagnose/test_structured_truths.py",
    "diagnose/test_more_truths.py",
    "engines/reachability/test_d17_handoff.py",
    "diagnose/test_batched.py",
    "engines/multicorrect/test_jev_diagnose.py",
    "compiler/test_predicate.py",
    "decide/test_record_fast_path.py",
    "engines/reachability/test_d17_commands.py",
    "engines/reachability/test_d17_score_cli.py",
    "diagnose/test_confidence_truths.py",
    "diagnose/test_rows_path.py",
    "engines/reachability/test_d17_audit.py",
    "engines/reachability/test_d17_cli.py",
    "diagnose/test_row_batches.py",
    "diagnose/test_redesign.py",
    "diagnose/test_units_dgp.py",
    "engines/multicorrect/test_jev_oracle.py",
    "hostile/test_kill.py",
    "stats/test_calibration.py",
    "stats/test_methods.py",
    "compiler/test_language_docs.py",
    "demo/test_report_parts.py",
    "compiler/test_compile.py",
    "engines/factorial/test_simulate_batches.py",
    "cli/test_json_and_progress.py",
    "docs/test_tutorial.py",
    "engines/reachability/test_d17_golden.py",
    "diagnose/test_examples_diagnose.py",
    "engines/factorial/test_answer_position.py",
    "engines/multicorrect/test_jev_cli.py",
    "engines/clusterpower/test_s3_cli.py",
    "reviewers/test_seal_check.py",
    "engines/factorial/test_calibration_example.py",
    "diagnose/test_calibration_dgp.py",
    "engines/test_plugins.py",
    "engines/factorial/test_analyses.py",
    "diagnose/test_redesign_units.py",
    "engines/factorial/test_score_partitioned.py",
    "hostile/test_prepared_folder.py",
    "diagnose/test_operating_characteristics.py",
    "engines/clusterpower/test_s3_diagnose.py",
    "hostile/test_jsonl_records.py",
    "diagnose/test_command.py",
    "diagnose/test_paired_dgp.py",
    "hostile/test_reader_properties.py",
    "cli/test_init.py",
    "diagnose/test_counts_path.py",
    "engines/factorial/test_custom_statistic.py",
    "compiler/test_language_examples.py",
    "engines/factorial/test_continuous_example.py",
    "decide/test_units.py",
    "diagnose/test_beta_problems.py",
    "diagnose/test_exact_claim_row_path.py",
    "diagnose/test_row_truths.py",
    "decide/test_record_columns.py",
    "engines/reachability/test_d17_pipeline_parts.py",
    "engines/factorial/test_paired_example.py",
    "cli/test_check_claims.py",
    "compiler/test_analyses_compile.py",
    "engines/reachability/test_variant_study.py",
    "reviewers/test_diff_cli.py",
    "engines/clusterpower/test_plan_sim.py",
    "engines/multicorrect/test_jev_diagnostic.py",
    "stats/test_canonical_json.py",
    "engines/clusterpower/test_plan_oracle.py",
]


def pytest_configure(config):
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False  # the order below is the order handed out


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # one process runs the files in the order they were collected
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    tests = ROOT / "tests"
    per_file: dict[str, int] = {}
    names = {}
    for item in items:
        try:
            names[item] = item.path.relative_to(tests).as_posix()
        except ValueError:
            names[item] = str(item.path)
        per_file[names[item]] = per_file.get(names[item], 0) + 1
    # a stable sort keeps each file's tests together and in their order
    items.sort(key=lambda item: (rank.get(names[item], len(rank)), -per_file[names[item]]))
