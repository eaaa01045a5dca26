"""Hostile files: a FIFO or a folder where a file is read, a folder where a file is written.

Every reader refuses a non-regular file at once (a FIFO with no writer used to hang forever)
and every writer refuses a folder, with the path named and no traceback.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.files import read_regular, refuse_existing, write_new
from tests.conftest import ROOT


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "input.fifo"
    os.mkfifo(path)
    return path


def test_read_regular_refuses_fifos_and_folders(fifo, tmp_path):
    with pytest.raises(OSError, match="a FIFO, not a regular file"):
        read_regular(fifo)
    with pytest.raises(OSError, match="a folder, not a regular file"):
        read_regular(tmp_path)
    f = tmp_path / "ok.txt"
    f.write_bytes(b"x" * 3_000_000)
    assert read_regular(f) == b"x" * 3_000_000


def test_writers_refuse_a_folder_target(tmp_path):
    for target in (tmp_path, f"{tmp_path}/sub/"):
        with pytest.raises(UserError, match="is a folder; name the file to create"):
            write_new(target, b"data")
    with pytest.raises(UserError, match=r"already exists \(a folder\); refusing to overwrite it"):
        refuse_existing(tmp_path)
    assert not (tmp_path / "sub").exists()


def _cli(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_a_fifo_spec_is_refused(fifo, tmp_path, capsys):
    project = tmp_path / "p"
    (project / "spec" / "studies").mkdir(parents=True)
    os.mkfifo(project / "spec" / "studies" / "x.yaml")
    code, err = _cli(capsys, "--project", project, "compile")
    assert code == 2 and "x.yaml: cannot read: a FIFO, not a regular file" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["jev-multicorrect", "score", "--lists", "{fifo}", "--labels", "{fifo}", "--predictions", "{fifo}", "--out", "{tmp}/r.json"],
        ["s3-verifier-freeze", "power-plan", "{fifo}", "--eligible-task-count", "500", "--eligible-repository-count", "12",
         "--eligible-pass-items", "210", "--eligible-fail-items", "430", "--out", "{tmp}/plan.json"],
        ["s3-verifier-freeze", "validate", "{fifo}"],
        # each blocked on reading the FIFO, forever
        ["sign-statement", "{fifo}", "--key", "{fifo}", "--out", "{tmp}/e.json"],
        ["verify-statement", "{fifo}", "--public-key", "{fifo}", "--statement", "{fifo}"],
    ],
)  # fmt: skip
def test_engine_inputs_that_are_fifos_are_refused(argv, fifo, tmp_path, capsys):
    args = [a.replace("{fifo}", str(fifo)).replace("{tmp}", str(tmp_path)) for a in argv]
    code, err = _cli(capsys, "--project", ROOT, *args)
    assert code == 2, err
    assert "a FIFO, not a regular file" in err and "Traceback" not in err
    assert not any(p.suffix == ".json" for p in tmp_path.iterdir())


@pytest.mark.parametrize("text", ["<<<<<<< HEAD\n", "[]\n"])
def test_a_language_schema_that_is_not_one_is_refused_naming_it(tmp_path, capsys, text):
    """A project that carries the language (prereg's own checkout) validates against its
    generated/prereg.schema.json: conflict markers left there by a merge were a JSONDecodeError
    traceback from compile."""
    project = tmp_path / "p"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    (project / "spec" / "prereg.linkml.yaml").write_text("id: x\n")
    (project / "generated").mkdir()
    schema = project / "generated" / "prereg.schema.json"
    schema.write_text(text)
    code, err = _cli(capsys, "--project", project, "compile")
    assert code == 2, err
    assert f"  {schema}: the language schema " in err and "run `prereg compile --language`" in err
    assert "Traceback" not in err and not (project / "generated" / "answer_position").exists()


def test_factorial_inputs_and_outputs(fifo, tmp_path, capsys):
    project = tmp_path / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    assert main(["--project", str(project), "compile"]) == 0
    study = ["--project", project, "answer-position"]
    code, err = _cli(capsys, *study, "items", "--out", f"{tmp_path}/new/")
    assert code == 2 and "is a folder; name the file to create" in err
    code, err = _cli(capsys, *study, "items", "--out", tmp_path)
    assert code == 2 and "already exists (a folder)" in err
    items = tmp_path / "items.jsonl"
    assert main([str(a) for a in [*study, "items", "--out", items]]) == 0
    code, err = _cli(
        capsys,
        *study,
        "score",
        "--items",
        items,
        "--observations",
        fifo,
        "--out",
        tmp_path / "S.json",
    )
    assert code == 2 and f"{fifo}: cannot read: a FIFO, not a regular file" in err
    assert not (tmp_path / "S.json").exists()


def test_an_empty_binary_outputs_file_is_refused(tmp_path, capsys):
    src = ROOT / "tests" / "fixtures" / "jev" / "small"
    (tmp_path / "binary.jsonl").write_text("")
    args = ["--lists", src / "lists.jsonl", "--labels", src / "labels.jsonl",
            "--predictions", src / "predictions.jsonl", "--binary-outputs", tmp_path / "binary.jsonl",
            "--out", tmp_path / "R.json"]  # fmt: skip
    code, err = _cli(capsys, "--project", ROOT, "jev-multicorrect", "score", *args)
    assert code == 2 and "the file holds no records" in err
    assert not (tmp_path / "R.json").exists()


def test_a_deeply_nested_calibration_line_is_refused(tmp_path, capsys):
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    args = [deep, "--eligible-task-count", "500", "--eligible-repository-count", "12",
            "--eligible-pass-items", "210", "--eligible-fail-items", "430", "--out", tmp_path / "p.json"]  # fmt: skip
    code, err = _cli(capsys, "--project", ROOT, "s3-verifier-freeze", "power-plan", *args)
    assert code == 2 and "nesting too deep to parse" in err and "Traceback" not in err


def test_a_huge_bad_value_is_not_echoed_whole(tmp_path, capsys):
    project = tmp_path / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    assert main(["--project", str(project), "compile"]) == 0
    items = tmp_path / "items.jsonl"
    assert main(["--project", str(project), "answer-position", "items", "--out", str(items)]) == 0
    obs = tmp_path / "obs.jsonl"
    huge = "x" * 5_000_000
    obs.write_text(json.dumps({"rowId": huge, "correct": huge, "attempt": 1}) + "\n")
    code, err = _cli(capsys, "--project", project, "answer-position", "score", "--items", items,
                     "--observations", obs, "--out", tmp_path / "S.json")  # fmt: skip
    assert code == 2 and len(err) < 2_000, len(err)
    assert f"{obs}:1: at /correct: expected" in err


def test_a_negative_zero_tolerance_is_refused_when_compiling(tmp_path):
    """probability-sum-tolerance -0.0 compiled, then every diagnostic list failed with a
    traceback; a tolerance must be positive."""
    from tests.conftest import compile_edited

    code, err, line_of = compile_edited(
        tmp_path, "jev-multicorrect", [("value: 0.000001", "value: -0.0")]
    )
    assert code == 2
    assert (
        f"jev-multicorrect.yaml:{line_of('/constants/1/value')}: at /constants/1/value: the"
        " tolerance must be a positive number" in err
    )


LONG = "n" * 300  # a file name past the 255-byte limit of every common file system


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """answer-position compiled, its items, observations and SCORE.json."""
    tmp = tmp_path_factory.mktemp("scored")
    project = tmp / "ap"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", project / "spec")
    assert main(["--project", str(project), "compile"]) == 0
    study = ["--project", str(project), "answer-position"]
    assert main([*study, "items", "--out", str(tmp / "items.jsonl")]) == 0
    assert main([*study, "simulate", "--items", str(tmp / "items.jsonl"), "--scenario", "no-bias",
                 "--seed", "1", "--out", str(tmp / "obs.jsonl")]) == 0  # fmt: skip
    assert main([*study, "score", "--items", str(tmp / "items.jsonl"), "--observations",
                 str(tmp / "obs.jsonl"), "--out", str(tmp / "SCORE.json")]) == 0  # fmt: skip
    return project, tmp


@pytest.mark.parametrize(
    "argv",
    [
        ["{study}", "items", "--out", "{tmp}/LONG.jsonl"],
        ["{study}", "score", "--items", "{tmp}/items.jsonl", "--observations", "{tmp}/LONG.csv", "--out", "{out}/S.json"],
        ["{study}", "score", "--items", "{tmp}/items.jsonl", "--observations", "{tmp}/LONG.parquet", "--out", "{out}/S.json"],
        ["{study}", "score", "--items", "{tmp}/items.jsonl", "--observations", "{tmp}/LONG.jsonl", "--out", "{out}/S.json"],
        ["{study}", "score", "--items", "{tmp}/items.jsonl", "--observations", "{tmp}/obs.jsonl", "--out", "{out}/LONG.json"],
        ["{study}", "diagnose", "--simulations", "5", "--seed", "1", "--out", "{out}/LONG.json"],
        ["tables", "{tmp}/SCORE.json", "--csv", "{out}/LONG"],
        ["tables", "{tmp}/SCORE.json", "--parquet", "{out}/LONG/sub"],
        ["tables", "{tmp}/LONG.json", "--csv", "{out}/t"],
        ["export", "answer-position", "--format", "osf", "--out", "{out}/LONG.md"],
        ["diff", "{project}/spec/studies/answer-position.yaml", "{tmp}/LONG.yaml"],
    ],
)  # fmt: skip
def test_a_name_too_long_for_the_file_system_is_refused_naming_it(argv, scored, tmp_path, capsys):
    """Path.is_file and Path.exists raise ENAMETOOLONG where they answer False for a missing
    file: score of a .csv or .parquet and tables --csv were OSError tracebacks."""
    project, tmp = scored
    out = tmp_path / "out"
    out.mkdir()
    args = [
        a.replace("{study}", "answer-position").replace("{tmp}", str(tmp))
        .replace("{out}", str(out)).replace("{project}", str(project)).replace("LONG", LONG)
        for a in argv
    ]  # fmt: skip
    code, err = _cli(capsys, "--project", project, *args)
    assert code == 2, err
    assert err.startswith("error: ") and LONG in err and "Traceback" not in err
    assert list(out.iterdir()) == []


class _FullDisk:
    """A file object whose writes fail as on a full disk (the error names no file)."""

    def __init__(self, fh):
        self.fh = fh

    def write(self, data):
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()


def test_a_full_disk_is_said_with_the_file_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    """ENOSPC carries no file name: the CLI's handler let it through as a traceback."""
    import prereg.files as files

    real = os.fdopen
    monkeypatch.setattr(files.os, "fdopen", lambda *a, **k: _FullDisk(real(*a, **k)))
    out = tmp_path / "sub" / "D.json"
    code, err = _cli(
        capsys, "--project", ROOT, "jev-multicorrect", "diagnostic", "--seeds", "1", "--out", out
    )
    assert code == 2
    assert err.endswith(
        f"error: {out}: cannot write: No space left on device; nothing was written\n"
    )
    assert list(tmp_path.iterdir()) == []  # no temporary, no folder made for it
    with pytest.raises(UserError, match="cannot write: No space left on device"):
        files.write_files_new([(tmp_path / "a", b"1", 0o644), (tmp_path / "b", b"2", 0o644)])
    assert list(tmp_path.iterdir()) == []
