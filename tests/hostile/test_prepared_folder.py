"""A hostile d17 prepared folder: each file refused with its path, no traceback, nothing written.

Covers a 100k-deep gold.json, preregistration.json as a folder or a FIFO, a JSON array where an
object belongs, NaN, duplicate keys and a huge number, for `simulate`, `dev-review-material` and
`calibrator-fit` (which reads gold.json directly).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import ROOT, copy_project

STUDY = "d17-multifact"
# a copy of the project outside git: this file's seed is committed (here), and the
# committed-seed rule refuses it for review material in the repository itself
PROJECT = [ROOT]


@pytest.fixture(scope="module", autouse=True)
def _outside_git(tmp_path_factory):
    PROJECT[0] = copy_project(tmp_path_factory.mktemp("project") / "project")
    yield
    PROJECT[0] = ROOT


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hostile-d17") / "prepared"
    # a private seed: development review material is written for no other
    seed = "d17mf-5e0c7b19a3f48d26b1e97a0c3d"
    assert main(["--project", str(PROJECT[0]), STUDY, "prepare", seed, str(out)]) == 0
    return out


def _break(folder: Path, name: str, how: str) -> None:
    path = folder / name
    path.unlink()
    if how == "folder":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(
            {
                "deep": "[" * 100_000 + "]" * 100_000,
                "array": "[]",
                "nan": '{"labels": NaN}',
                "duplicate": '{"labels": {}, "labels": {}}',
                "huge": '{"labels": 1e400}',
            }[how]
        )


CASES = [
    ("gold.json", "deep", "nesting too deep"),
    ("preregistration.json", "folder", "a folder, not a regular file"),
    ("preregistration.json", "fifo", "a FIFO, not a regular file"),
    ("preregistration.json", "array", "not a JSON object"),
    ("gold.json", "nan", "NaN is not a JSON value"),
    ("gold.json", "duplicate", "duplicate key 'labels'"),
    ("gold.json", "huge", "overflows a double"),
]


@pytest.mark.parametrize("name, how, message", CASES)
def test_simulate_and_review_refuse_a_broken_prepared_folder(
    prepared, tmp_path, capsys, name, how, message
):
    folder = tmp_path / "prepared"
    shutil.copytree(prepared, folder)
    _break(folder, name, how)
    runs = [
        [
            "simulate",
            folder,
            "--scenario",
            "accurate",
            "--seed",
            "1",
            "--out",
            tmp_path / "obs.jsonl",
        ],
        ["dev-review-material", folder, tmp_path / "review.json", "--artifact-root", tmp_path],
    ]
    for args in runs:
        code = main(["--project", str(PROJECT[0]), STUDY, *map(str, args)])
        err = capsys.readouterr().err
        assert code == 2, (args[0], err)
        assert f"{folder / name}" in err and message in err, err
        assert "Traceback" not in err
    assert not (tmp_path / "obs.jsonl").exists() and not (tmp_path / "review.json").exists()


@pytest.mark.parametrize("how, message", [(h, m) for n, h, m in CASES if n == "gold.json"])
def test_calibrator_fit_refuses_a_broken_gold_file(prepared, tmp_path, capsys, how, message):
    obs = tmp_path / "obs.jsonl"
    assert (
        main(
            [
                "--project",
                str(PROJECT[0]),
                STUDY,
                "simulate",
                str(prepared),
                "--scenario",
                "accurate",
                "--seed",
                "1",
                "--out",
                str(obs),
            ]
        )
        == 0
    )
    gold = tmp_path / "gold.json"
    gold.write_text("x")
    _break(tmp_path, "gold.json", how)
    capsys.readouterr()
    out = tmp_path / "cal.json"
    code = main(
        [
            "--project",
            str(PROJECT[0]),
            STUDY,
            "calibrator-fit",
            str(obs),
            str(gold),
            "--effective-at",
            "2026-10-02T10:02:34.263Z",
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not out.exists()
