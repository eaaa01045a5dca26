"""`prereg demo --plan FILE`: a plan of one's own (a new study's steps) runs as the bundled
demo does and gets its reports; a plan that is not one is refused, each problem at its JSON
path, before anything runs or is written."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from prereg.cli import main

STEPS = [
    {"title": "items", "study": "my-study", "args": ["items", "--out", "{out}/items.jsonl"]},
    {
        "title": "simulate",
        "study": "my-study",
        "args": [
            "simulate",
            "--items",
            "{out}/items.jsonl",
            "--scenario",
            "effect",
            "--seed",
            "1",
            "--out",
            "{out}/observations.jsonl",
        ],
    },  # fmt: skip
    {
        "title": "score",
        "study": "my-study",
        "args": [
            "score",
            "--items",
            "{out}/items.jsonl",
            "--observations",
            "{out}/observations.jsonl",
            "--out",
            "{out}/SCORE.json",
        ],
    },  # fmt: skip
]


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def starter(tmp_path) -> Path:
    """A project of one's own: the factorial starter, compiled."""
    project = tmp_path / "p"
    project.mkdir()
    here = Path.cwd()
    os.chdir(project)
    try:
        assert _cli("init", "my-study")[0] == 0
        assert _cli("compile")[0] == 0
    finally:
        os.chdir(here)
    return project


def test_a_plan_of_ones_own_runs_and_gets_its_reports(starter, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": STEPS}), encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out)
    assert code == 0, stderr
    assert "[3/3] score: prereg my-study score" in stdout
    score = json.loads((out / "my-study" / "SCORE.json").read_text())
    assert score["verdicts"] == {"h1": "not-supported"}  # 100-row cells, a 0.1 effect
    assert (out / "my-study" / "report.html").is_file()
    index = (out / "index.md").read_text()
    assert index.startswith("# prereg: plan.json\n")
    assert "| `my-study` | every step ran; gates held" in index


@pytest.mark.parametrize(
    ("plan", "problems"),
    [
        ([1, 2], ["at /: a plan is a JSON object with steps"]),
        ({"steps": []}, ["at /steps: a non-empty list of steps"]),
        ({"steps": 5}, ["at /steps: a non-empty list of steps"]),
        (
            {"steps": [{**STEPS[0], "study": "nowhere", "project": "examples/none"}]},
            ["at /steps/0/study: 'nowhere' is not a study of the project"],
        ),
        ({"steps": STEPS[:1], "extra": 1}, ["at /extra: unknown key (a plan holds steps)"]),
        ({"steps": [7]}, ["at /steps/0: a step is an object (title, study, args)"]),
        (
            {"steps": [{**STEPS[0], "study": "other"}]},
            ["at /steps/0/study: 'other' is not a study of the project (studies: my-study)"],
        ),
        ({"steps": [{**STEPS[0], "args": ["items", 3]}]}, ["at /steps/0/args: a list of strings"]),
        (
            {"steps": [{"study": "my-study", "args": []}]},
            ["at /steps/0: a step needs title"],
        ),
        (
            {"steps": [{**STEPS[0], "expect_exit": [0, "1"]}, {**STEPS[1], "lane": ""}]},
            [
                "at /steps/0/expect_exit: a non-empty list of exit codes (0 to 255)",
                "at /steps/1/lane: a non-empty string",
            ],
        ),
        (
            {"steps": [{**STEPS[0], "json": {}, "args": ["items"]}]},
            ['at /steps/0/args: a step with json writes a file: ["write", PATH]'],
        ),
        (
            {"steps": [{**STEPS[0], "sudy": "x"}]},
            ["at /steps/0/sudy: unknown key (a step has title, study, args, expect_exit, lane,"],
        ),
    ],
)
def test_a_plan_that_is_not_one_is_refused_by_path(starter, tmp_path, plan, problems):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    out = tmp_path / "out"
    code, _, stderr = _cli("--project", starter, "demo", "--plan", path, "--out", out)
    assert code == 2 and "Traceback" not in stderr
    assert f"error: {path}: not a plan of steps this project can run" in stderr
    for p in problems:
        assert p in stderr, stderr
    assert not out.exists()


def test_a_missing_or_broken_plan_file_is_named(starter, tmp_path):
    out = tmp_path / "out"
    code, _, stderr = _cli("--project", starter, "demo", "--plan", tmp_path / "none.json",
                           "--out", out)  # fmt: skip
    assert code == 2 and "none.json: missing (the plan of steps to run)" in stderr
    bad = tmp_path / "dup.json"
    bad.write_text('{"steps": [], "steps": []}', encoding="utf-8")
    code, _, stderr = _cli("--project", starter, "demo", "--plan", bad, "--out", out)
    assert code == 2 and "dup.json: not valid JSON" in stderr and "duplicate" in stderr
    # a project without the bundled plan says how to give one
    code, _, stderr = _cli("--project", starter, "demo", "--out", out)
    assert code == 2 and "the demo plan is missing (give another with --plan)" in stderr
    assert not out.exists()


# -- the runner is confined: this project's commands, writes under --out only ------------------


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda s: {**s, "args": [*s["args"], "--project", "/elsewhere"]},
            "at /steps/0/args/3: '--project': a step runs this project's commands only",
        ),
        (
            lambda s: {**s, "args": ["--project=/elsewhere", *s["args"]]},
            "at /steps/0/args/0: '--project=/elsewhere': a step runs this project's commands",
        ),
        (
            lambda s: {**s, "args": ["items", "--out", "{out}/../../escaped.jsonl"]},
            "at /steps/0/args/2: '{out}/../../escaped.jsonl': outside the output folder",
        ),
        (
            lambda s: {**s, "args": ["items", "--out", "/tmp/escaped.jsonl"]},
            "at /steps/0/args/2: '/tmp/escaped.jsonl': a step writes only under {out}",
        ),
        (
            lambda s: {**s, "args": ["items", "--out", "{root}/escaped.jsonl"]},
            "at /steps/0/args/2: '{root}/escaped.jsonl': a step writes only under {out}",
        ),
        (
            lambda s: {**s, "args": ["items", "--out", "escaped.jsonl"]},
            "at /steps/0/args/2: 'escaped.jsonl': a step writes only under {out}",
        ),
        (
            lambda s: {**s, "json": {"a": 1}, "args": ["write", "{root}/../escaped.json"]},
            "at /steps/0/args/1: '{root}/../escaped.json': a step writes only under {out}",
        ),
        (
            lambda s: {**s, "args": ["items", "../x", "--out", "{out}/i.jsonl"]},
            "at /steps/0/args/1: '../x': a path is {out}/... or {root}/...",
        ),
        (
            lambda s: {**s, "project": "../other"},
            "at /steps/0/project: '../other' is not a folder of the project",
        ),
    ],
)
def test_a_plan_step_cannot_reach_outside_the_project_or_the_output_folder(
    starter, tmp_path, edit, problem
):
    plan = tmp_path / "mine.json"
    plan.write_text(json.dumps({"steps": [edit(STEPS[0]), *STEPS[1:]]}), encoding="utf-8")
    out = tmp_path / "out"
    code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out)
    assert code == 2 and "Traceback" not in stderr, stderr
    assert f"error: {plan}: not a plan of steps this project can run" in stderr
    assert problem in stderr, stderr
    assert not out.exists() and not (tmp_path / "escaped.jsonl").exists()
    assert not (starter / "escaped.jsonl").exists()


def test_plan_refusals_name_the_users_plan_file(starter, tmp_path):
    plan = tmp_path / "mine.json"
    steps = [{**STEPS[0], "args": ["items", "--out", "{out}/i.jsonl"]},
             {**STEPS[1], "args": ["simulate", "{sha256:{out}/never-written.json}"]}]  # fmt: skip
    plan.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", tmp_path / "o")
    assert code == 1
    assert f"{plan}: {{sha256:" in stderr and "no such file (yet)" in stderr, stderr
    assert "examples/demo.json" not in stderr


def test_a_second_run_into_the_same_out_is_refused_clearly(starter, tmp_path):
    import fcntl

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": STEPS[:1]}), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a run writing there now
    try:
        for extra in ((), ("--force",)):
            code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out,
                                   *extra)  # fmt: skip
            assert code == 2 and "Traceback" not in stderr
            assert f"{out}: another demo run is writing there now" in stderr
    finally:
        os.close(fd)
    assert list(out.iterdir()) == []
    assert _cli("--project", starter, "demo", "--plan", plan, "--out", out)[0] == 0
    code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out)
    assert code == 2 and f"{out}: an earlier demo run is there" in stderr
    assert (out / "my-study" / "items.jsonl").is_file()  # the earlier run is untouched


def test_a_root_input_that_does_not_exist_fails_its_step(starter, tmp_path):
    plan = tmp_path / "mine.json"
    steps = [{**STEPS[0], "args": ["items", "{root}/no-such-input", "--out", "{out}/i.jsonl"]}]
    plan.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    out = tmp_path / "out"
    code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out)
    assert code == 1 and "Traceback" not in stderr
    assert f"{plan}: at /steps/0/args/1: '{{root}}/no-such-input': no such file" in stderr
    assert not (out / "my-study" / "i.jsonl").exists()
