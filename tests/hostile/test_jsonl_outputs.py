"""items and simulate write JSONL; an --out named .csv or .parquet would be read back by
score as a table of that format (score picks a reader by the file's name), so it is refused
before any work, exit 2, nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import ROOT

STUDY = "answer-position"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("p")
    shutil.copytree(ROOT / "examples" / STUDY / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    assert main(["--project", str(root), STUDY, "items", "--out", str(root / "items.jsonl")]) == 0
    return root


@pytest.mark.parametrize("name", ["out.csv", "out.parquet", "OUT.CSV", "out.Parquet"])
@pytest.mark.parametrize("command", ["items", "simulate"])
def test_an_output_named_as_a_table_is_refused(project, tmp_path, capsys, command, name):
    out = tmp_path / name
    extra = []
    if command == "simulate":
        extra = ["--items", project / "items.jsonl", "--scenario", "position-bias", "--seed", 1]
    capsys.readouterr()
    code = main([str(a) for a in ["--project", project, STUDY, command, *extra, "--out", out]])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"--out {out}: this command writes JSONL" in err and "name it .jsonl" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_csv_observations_are_refused_at_their_lines(project, tmp_path, capsys):
    """A quoted CSV value may hold a line break, so a record's line is not its position plus
    one: the attempt policy's problems name the line each record starts on."""
    obs = tmp_path / "obs.csv"
    obs.write_text(
        "rowId,correct,attempt\n"
        "dev-a-pa-plain-01,true,1\n"
        '"no such\nrow",true,1\n'  # lines 3 and 4
        "zzz,false,1\n"  # line 5: the fourth line of records, the third record
    )
    out = tmp_path / "S.json"
    argv = ["--project", project, STUDY, "score", "--items", project / "items.jsonl"]
    capsys.readouterr()
    code = main([str(a) for a in [*argv, "--observations", obs, "--out", out]])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{obs}:3: " in err and f"{obs}:5: " in err and f"{obs}:4: " not in err
    assert not out.exists()
