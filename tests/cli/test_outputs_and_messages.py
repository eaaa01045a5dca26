"""Messages that fit where the user is: outputs may go into folders that do not exist yet
(created, and removed again when the write fails), a stale or uncompiled study says to run
``prereg compile`` (a user's project has no Makefile), and a problem with the rows of an
observations file names the observations."""

from __future__ import annotations

import json
import os

import pytest

from prereg.cli import main
from prereg.decide.table import from_items
from prereg.errors import UserError
from prereg.files import write_files_new, write_new


@pytest.fixture
def starter(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-study"]) == 0
    assert main(["compile"]) == 0
    capsys.readouterr()
    return tmp_path


def test_every_factorial_command_writes_into_new_folders(starter, capsys):
    items = "in/manifest/items.jsonl"
    obs = "logs/2026/obs.jsonl"
    assert main(["my-study", "items", "--out", items]) == 0
    argv = ["my-study", "simulate", "--items", items, "--scenario", "effect", "--seed", "1"]
    assert main([*argv, "--out", obs]) == 0
    argv = ["my-study", "score", "--items", items, "--observations", obs]
    assert main([*argv, "--out", "results/run1/SCORE.json"]) == 0, capsys.readouterr().err
    assert (starter / "results/run1/SCORE.md").is_file()
    argv = ["my-study", "diagnose", "--simulations", "20", "--seed", "1"]
    assert main([*argv, "--out", "diag/a/DIAGNOSE.json"]) == 0, capsys.readouterr().err
    assert (starter / "diag/a/DIAGNOSE.md").is_file()
    argv = ["tables", "results/run1/SCORE.json", "--csv", "tables/csv/run1"]
    assert main(argv) == 0, capsys.readouterr().err
    assert any((starter / "tables/csv/run1").glob("*.csv"))


def test_a_refused_command_creates_no_folder(starter, capsys):
    assert main(["my-study", "items", "--out", "items.jsonl"]) == 0
    (starter / "obs.jsonl").write_text('{"rowId": "nope", "attempt": 1, "correct": true}\n')
    argv = ["my-study", "score", "--items", "items.jsonl", "--observations", "obs.jsonl"]
    assert main([*argv, "--out", "results/run1/SCORE.json"]) == 2
    assert "obs.jsonl:1: unknown row id 'nope'" in capsys.readouterr().err
    assert not (starter / "results").exists()


def test_folders_created_for_a_write_that_fails_are_removed(tmp_path):
    target = tmp_path / "a" / "b" / "x.json"
    # the second file is the first again: its link fails after the first was written
    with pytest.raises(UserError, match="already exists"):
        write_files_new([(target, "1", 0o644), (target, "2", 0o644)])
    assert os.listdir(tmp_path) == []
    (tmp_path / "keep").mkdir()
    with pytest.raises(UserError, match="already exists"):
        write_files_new(
            [(tmp_path / "keep/new/x", "1", 0o644), (tmp_path / "keep/new/x", "", 0o644)]
        )
    assert os.listdir(tmp_path) == ["keep"] and os.listdir(tmp_path / "keep") == []


def test_a_file_in_the_way_of_a_folder_is_refused(tmp_path):
    (tmp_path / "results").write_text("a file\n")
    with pytest.raises(UserError, match="results is not a folder"):
        write_new(tmp_path / "results" / "run1" / "S.json", "{}")
    assert sorted(os.listdir(tmp_path)) == ["results"]


def test_a_stale_or_uncompiled_study_says_prereg_compile(starter, capsys):
    spec = starter / "spec" / "studies" / "my-study.yaml"
    spec.write_text(spec.read_text().replace("title: ", "title: Retitled ", 1))
    assert main(["my-study", "items", "--out", "i.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "spec changed since the last compile" in err
    assert "run prereg compile my-study" in err and "make" not in err
    assert main(["init", "other"]) == 0
    capsys.readouterr()
    assert main(["other", "items", "--out", "i.jsonl"]) != 0
    err = capsys.readouterr().err
    assert "prereg compile" in err and "make" not in err


def test_rows_read_from_observations_are_named_as_observations():
    config = {
        "splits": [{"id": "test"}],
        "factors": [{"id": "arm", "levels": [{"id": "a"}, {"id": "b"}]}],
        "cells": [
            {"id": "a", "split": "test", "levels": {"arm": "a"}, "rows": 1},
            {"id": "b", "split": "test", "levels": {"arm": "b"}, "rows": 1},
        ],
    }
    contract = {
        "id": "answer",
        "fields": [{"name": "rowId", "type": "string"}, {"name": "arm", "factor": "arm"}],
    }
    records = [{"rowId": "r1", "arm": "a"}, {"rowId": "r2", "arm": "c"}]
    with pytest.raises(UserError) as exc:
        from_items(config, contract, records, "answers.jsonl", row_field="rowId", complete=False)
    assert exc.value.message == "answers.jsonl: 1 problem(s) in the observations"
    assert "answers.jsonl:2: row 'r2' (arm=c) is in no registered cell" in json.dumps(
        exc.value.problems
    )


def test_compile_quiet_prints_the_summary_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-study"]) == 0
    capsys.readouterr()
    assert main(["compile", "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [next(line for line in out if line.startswith("compiled 1 study: my-study;"))]
    assert (tmp_path / "generated" / "my_study" / "rules.py").is_file()
    assert main(["compile"]) == 0  # nothing changed: the summary says 0 files either way
    assert capsys.readouterr().out.endswith("0 file(s) changed\n")
