"""A private seed committed to the project's repository is public: its gold can be regenerated
by anyone with the repository, so no development review material (gold) is written for it,
whether the seed is in a tracked file now or only in the history.  The demo's own seed (written
in examples/demo.json) reaches gold material only inside a plan run, labelled development."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.development import development_texts
from tests.conftest import copy_project

STUDY = "d17-multifact"
# Never written literally in a committed file: the tests below commit it themselves, in a
# throwaway repository.  Built from two halves so that this file does not hold it.
SEED = "d17mf-" + "5e0c7b19a3f48d" + "26b1e97a0c3d"


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(project), *args], capture_output=True, text=True, check=True,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
             "HOME": str(project), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    return done.stdout


def cli(project: Path, *args) -> int:
    return main(["--project", str(project), STUDY, *map(str, args)])


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, Path]:
    """A git project (the study compiled, committed) and a prepared folder of SEED beside it;
    the seed is not committed yet."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    base = tmp_path_factory.mktemp("committed-seed")
    project = copy_project(base / "project")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "the study")
    prepared = base / "artifacts" / "prepared"
    assert cli(project, "prepare", SEED, prepared) == 0
    return project, prepared


def _refused(capsys, code: int, *needles: str) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: public-demo-seed: "), err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, err
    return err


def test_a_committed_seed_gets_no_review_material_now_or_after_it_is_deleted(repo, capsys):
    project, prepared = repo
    material = prepared.parent / "material.json"
    # not committed: a private seed, its material is written
    assert cli(project, "dev-review-material", prepared, material) == 0
    assert "development" not in json.loads(material.read_text())
    material.unlink()
    # committed in a note: refused, naming the file; nothing written
    (project / "notes").mkdir()
    (project / "notes" / "seeds.txt").write_text(f"the live seed is {SEED}\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "oops")
    code = cli(project, "dev-review-material", prepared, material)
    _refused(capsys, code, f"seed {SEED!r} is public", "the committed file notes/seeds.txt")
    assert not material.exists()
    # the dry run says so too (it is public, never bundled)
    assert cli(project, "dry-run", SEED) == 0
    out = capsys.readouterr().out
    assert (
        f"seed {SEED!r}: syntax ok; public: it appears in the committed file notes/seeds.txt" in out
    )
    # deleted again and committed: still public, the history holds it
    (project / "notes" / "seeds.txt").unlink()
    git(project, "commit", "-q", "-am", "remove the seed")
    head = git(project, "rev-parse", "--short", "HEAD").strip()  # the newest commit with it
    code = cli(project, "dev-review-material", prepared, material)
    _refused(capsys, code, f"commit {head} of the repository's history (file notes/seeds.txt)")
    assert not material.exists()


def test_inside_a_plan_run_a_committed_seed_is_development_material(repo, capsys):
    project, prepared = repo
    (project / "plan-seed.txt").write_text(SEED + "\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a plan's seed")
    material = prepared.parent / "dev-material.json"
    with development_texts(["prepare", SEED], "my-plan.json"):
        assert cli(project, "dev-review-material", prepared, material) == 0
    doc = json.loads(material.read_text())
    assert doc["development"].startswith("the seed is written in the plan my-plan.json")
    assert "not a real freeze" in doc["development"]
    assert "development material: the seed is written in the plan" in capsys.readouterr().out
    # the plan run is over: refused again
    material.unlink()
    _refused(capsys, cli(project, "dev-review-material", prepared, material), "plan-seed.txt")
    assert not material.exists()


def test_the_demo_plan_declares_its_own_seed_and_nothing_else_does(repo):
    """The demo's stand-in private seed is written in examples/demo.json; outside a plan run
    no text has a development label (no option or environment variable gives one)."""
    from prereg.development import development_label

    plan = json.loads((Path(__file__).resolve().parents[2] / "examples/demo.json").read_text())
    seeds = [a for s in plan["steps"] for a in s["args"] if a.startswith("d17mf-4")]
    assert seeds and all(development_label(s) is None for s in seeds)
    with development_texts(seeds, "examples/demo.json"):
        assert all(development_label(s) for s in seeds)
    assert all(development_label(s) is None for s in seeds)


def test_a_repository_that_cannot_be_searched_does_not_pass_the_rule(repo, monkeypatch):
    """A git search that fails or outlasts its bound (here: grep times out) is no evidence that
    the seed is in no committed file: the seed is public, and the reason says why."""
    from prereg import gitrepo
    from prereg.compiler.project import Project
    from prereg.engines.reachability.config import study_config
    from prereg.engines.reachability.seeds import classify_seed
    from prereg.study import study_context

    project, _ = repo
    _, ctx = study_context(Project(project), STUDY)
    policy = study_config(ctx.config).seed_policy
    fresh = "d17mf-" + "7c2e90b4d1a85f" + "36e0b9c4a27d"  # 26 hex, in no file of that repo
    assert not classify_seed(fresh, policy, project).public
    real = gitrepo.git_status

    def slow_grep(root, *args, **kw):
        return (None, b"") if args[0] == "grep" else real(root, *args, **kw)

    monkeypatch.setattr(gitrepo, "git_status", slow_grep)
    sc = classify_seed(fresh, policy, project)
    assert sc.public
    assert sc.reason.startswith(
        "the repository could not be searched for it (git grep failed or took longer than 10 s)"
    )
    # outside any work tree nothing can be searched: the study's policy alone decides
    assert not classify_seed(fresh, policy, project.parent / "artifacts").public
