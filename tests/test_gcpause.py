"""prereg.gcpause: the collector's state is restored, cycles are still collected inside
``relaxed``, and a study command's handler runs inside it."""

from __future__ import annotations

import gc
import shutil
import weakref

import pytest

from prereg import gcpause
from prereg.cli import main
from tests.conftest import ROOT


class Node:
    pass


def test_paused_restores_the_previous_state_even_on_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():  # nested: the inner exit leaves it paused
            pass
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()  # was off before: stays off
    finally:
        gc.enable()


def test_relaxed_freezes_raises_the_threshold_and_restores_both():
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with pytest.raises(KeyError), gcpause.relaxed():
        assert gc.get_threshold() == (gcpause.RELAXED_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > frozen
        raise KeyError
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_relaxed_still_collects_cycles():
    with gcpause.relaxed():
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        # a pass runs once the kept containers outnumber the threshold
        kept = [[] for _ in range(3 * gcpause.RELAXED_THRESHOLD)]
        assert gone() is None
        del kept


def test_a_study_command_runs_its_handler_relaxed(tmp_path, monkeypatch):
    seen = []
    real = gcpause.relaxed

    def spy():
        seen.append(gc.get_threshold())
        return real()

    monkeypatch.setattr(gcpause, "relaxed", spy)
    root = tmp_path / "p"
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    before = gc.get_threshold()
    assert main(["--project", str(root), "compile"]) == 0
    assert main(["--project", str(root), "answer-position", "items", "--out", str(root / "i")]) == 0
    assert seen == [before]  # one study command, entered once
    assert gc.get_threshold() == before
