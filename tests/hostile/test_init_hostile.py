"""prereg init on hostile ground: a failure leaves nothing behind (the folders it would have
created included), --from reads only the project's own studies, and every refusal is an error
naming its place, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prereg.cli import main


def _init(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().err


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["init", "Bad Id"], "is not an identifier"),
        (["init", "compile"], "is a prereg command"),
        (["init", "new", "--from", "../../../etc/passwd"], "is not a study id of the project"),
        (["init", "new", "--from", "/etc/hosts"], "is not a study id of the project"),
        (["init", "new", "--from", "missing"], "--from: no study 'missing'"),
        (["init", "new", "--engine", "nope"], "unknown engine 'nope'"),
        # what compile would refuse (it wrote the spec, and compile then refused it)
        (["init", "a" * 129], "study id of 129 characters is longer than 128"),
    ],
)
def test_a_refused_init_in_an_empty_folder_leaves_it_empty(
    tmp_path, capsys, monkeypatch, argv, needle
):
    monkeypatch.chdir(tmp_path)
    rc, err = _init(capsys, *argv)
    assert rc == 2 and needle in err and "Traceback" not in err, err
    assert _tree(tmp_path) == []


def test_from_a_link_that_leads_outside_the_project_is_refused(tmp_path, capsys):
    outside = tmp_path / "secret.yaml"
    outside.write_text("id: secret\nfoo: bar\n")
    project = tmp_path / "p"
    (project / "spec" / "studies").mkdir(parents=True)
    (project / "spec" / "studies" / "linked.yaml").symlink_to(outside)
    rc, err = _init(capsys, "--project", project, "init", "new", "--from", "linked")
    assert rc == 2 and "leads outside the project's spec/studies/" in err, err
    assert "foo" not in err
    assert not (project / "spec" / "studies" / "new.yaml").exists()


def test_a_failure_after_the_spec_removes_it_and_the_folders_init_created(tmp_path, capsys):
    project = tmp_path / "p"
    project.mkdir()
    (project / "generated").mkdir(0o500)  # the editors' schema copy cannot be written
    try:
        rc, err = _init(capsys, "--project", project, "init", "new")
    finally:
        os.chmod(project / "generated", 0o700)
    if os.geteuid() == 0:  # root writes anyway: then the init succeeds whole
        assert rc == 0
        return
    assert rc == 2 and "nothing was written" in err and "Traceback" not in err, err
    assert _tree(project) == ["generated"]


def test_a_failure_writing_the_schema_copy_removes_the_spec(tmp_path, capsys, monkeypatch):
    from prereg.compiler import init

    def fails(project):
        raise OSError(28, "No space left on device", str(project.root / "generated" / "x"))

    monkeypatch.setattr(init, "_language_copy", fails)
    project = tmp_path / "p"
    project.mkdir()
    rc, err = _init(capsys, "--project", project, "init", "new")
    assert rc == 2 and "No space left on device" in err and "nothing was written" in err, err
    assert _tree(project) == []


def test_a_project_that_is_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    rc, err = _init(capsys, "--project", f, "init", "new")
    assert rc == 2 and "Traceback" not in err and str(f) in err, err
    assert f.read_text() == "x"


@pytest.mark.parametrize("new", ["my_study", "My-Study"])
def test_an_id_of_the_package_of_another_study_is_refused(tmp_path, capsys, new):
    """Two ids of one package (generated/my_study/) never compile together: init refuses the
    second, and writes nothing (it wrote it)."""
    rc, err = _init(capsys, "--project", tmp_path, "init", "my-study")
    assert rc == 0, err
    before = _tree(tmp_path)
    rc, err = _init(capsys, "--project", tmp_path, "init", new)
    assert rc == 2 and err == (
        f"error: study id {new!r} and 'my-study' (spec/studies/my-study.yaml) would compile to"
        " the same package generated/my_study/; choose another\n"
    )
    assert _tree(tmp_path) == before
