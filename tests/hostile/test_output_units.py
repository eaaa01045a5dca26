"""Multi-file outputs are one unit under kill -9 (SCORE.json and SCORE.md, DIAGNOSE.json and
its Markdown): a writer killed among its links leaves a journal, and the next write or check of
those outputs removes what it linked; what a killed writer left beside an output (temporaries,
partial folders) is cleared by the next run, and only what a dead process left is touched."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from pathlib import Path

import pytest

from prereg import files
from prereg.errors import UserError
from prereg.files import refuse_existing, write_files_new, write_folder_new, write_new

FORK = mp.get_context("fork")


def _killed_after_first_link(out: str, md: str) -> None:
    real = os.link
    calls = []

    def link(src, dst, *a, **kw):
        real(src, dst, *a, **kw)
        calls.append(dst)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGKILL)  # kill -9 between the two links

    os.link = link
    write_files_new([(out, b"score\n", 0o644), (md, b"# score\n", 0o644)])


def _kill_a_unit(tmp_path: Path) -> tuple[Path, Path]:
    out, md = tmp_path / "SCORE.json", tmp_path / "SCORE.md"
    p = FORK.Process(target=_killed_after_first_link, args=(str(out), str(md)))
    p.start()
    p.join()
    assert p.exitcode == -signal.SIGKILL
    # the state kill -9 leaves: one file of the unit, and the dead writer's journal
    assert out.is_file() and not md.exists()
    assert any(n.name.endswith(".unit") for n in tmp_path.iterdir())
    return out, md


def test_a_unit_killed_among_its_links_is_removed_by_the_next_write(tmp_path):
    out, md = _kill_a_unit(tmp_path)
    write_files_new([(out, b"again\n", 0o644), (md, b"# again\n", 0o644)])
    assert out.read_bytes() == b"again\n" and md.read_bytes() == b"# again\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SCORE.json", "SCORE.md"]


def test_the_check_before_work_clears_a_killed_unit_too(tmp_path):
    out, md = _kill_a_unit(tmp_path)
    refuse_existing(out, md)  # a command's first check: the half unit is not "existing output"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_finished_unit_is_never_touched(tmp_path):
    out, md = tmp_path / "SCORE.json", tmp_path / "SCORE.md"
    write_files_new([(out, b"1\n", 0o644), (md, b"2\n", 0o644)])
    with pytest.raises(UserError, match="already exists"):
        write_files_new([(out, b"x\n", 0o644), (md, b"y\n", 0o644)])
    assert out.read_bytes() == b"1\n" and md.read_bytes() == b"2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SCORE.json", "SCORE.md"]


def _dead_pid() -> int:
    p = FORK.Process(target=lambda: None)
    p.start()
    p.join()
    return p.pid  # ended and reaped: no process has this id now (short of reuse)


def test_leftovers_of_a_dead_writer_are_cleared_and_a_live_writers_kept(tmp_path):
    dead, live = _dead_pid(), os.getppid()
    (tmp_path / f".SCORE.json.{dead}.abcd1234.tmp").write_bytes(b"half")
    (tmp_path / f".prepared.{dead}.x_y9.partial").mkdir()
    (tmp_path / f".prepared.{dead}.x_y9.partial" / "corpus.jsonl").write_bytes(b"half")
    (tmp_path / f".SCORE.json.{live}.abcd1234.tmp").write_bytes(b"being written")
    (tmp_path / ".SCORE.json.abcd1234.tmp").write_bytes(b"not ours to judge")
    write_new(tmp_path / "SCORE.json", b"{}\n")
    write_folder_new(tmp_path / "prepared", [("a.json", b"{}\n", 0o644)])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [
            "SCORE.json",
            "prepared",
            f".SCORE.json.{live}.abcd1234.tmp",
            ".SCORE.json.abcd1234.tmp",
        ]
    )


def test_a_journal_that_is_not_one_is_removed_without_harm(tmp_path):
    dead = _dead_pid()
    keep = tmp_path / "other.txt"
    keep.write_text("mine")
    (tmp_path / f".SCORE.json.{dead}.zz.unit").write_text(f'[["{keep}", "{keep}x"]]')
    (tmp_path / f".SCORE.json.{dead}.zy.unit").write_bytes(b"\xff not json")
    refuse_existing(tmp_path / "SCORE.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]
    assert keep.read_text() == "mine"  # not the same file as its "temporary": kept
    assert files.sweep_stale(tmp_path / "nowhere" / "x") is None  # a missing folder is fine
