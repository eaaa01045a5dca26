"""The regenerated study is kept in the process: a folder prepared (or checked) once is checked
again without generating the study again, and a folder changed afterwards is still refused."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil

import pytest
from d17_helpers import DEMO, ctx

from prereg.engines.reachability import COMMANDS, handoff
from prereg.engines.reachability import commands as cmd
from prereg.engines.reachability.config import study_config
from prereg.errors import UserError

NS = argparse.Namespace


@pytest.fixture
def counted(monkeypatch):
    """prepare_memory, counting its calls, with an empty memo (restored afterwards)."""
    calls = []
    real = cmd.prepare_memory

    def counting(ec, seed, **kw):
        calls.append(seed)
        return real(ec, seed, **kw)

    monkeypatch.setattr(cmd, "prepare_memory", counting)
    monkeypatch.setattr(cmd, "_REGENERATED", {})
    return calls


def verify(folder):
    c = ctx()
    return handoff.verify_prepared(c, handoff.HandOff.of(c), folder)


def test_a_prepared_seed_is_checked_without_generating_it_again(tmp_path, counted):
    folder = tmp_path / "prepared"
    assert COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(folder))) == 0
    assert counted == [DEMO]
    prereg = json.loads((folder / "preregistration.json").read_text())
    assert verify(folder) == prereg
    assert verify(folder) == prereg
    assert counted == [DEMO]  # one generation for the prepare and both checks


def test_the_memo_holds_the_regenerated_side_only(tmp_path, counted):
    """Changing the folder after it was prepared is refused with the memo warm; the memo's
    entry is the regeneration's digests, not the folder's."""
    folder = tmp_path / "prepared"
    assert COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(folder))) == 0
    changed = tmp_path / "changed"
    shutil.copytree(folder, changed)
    corpus = changed / "corpus.jsonl"
    data = corpus.read_bytes()
    corpus.write_bytes(data.replace(b'"split":"test"', b'"split":"tuning"', 1))
    with pytest.raises(UserError, match="corpus.jsonl: differs from the study regenerated"):
        verify(changed)
    assert counted == [DEMO]
    # a checked-in copy of the returned object cannot change what the memo holds
    got = verify(folder)
    got["rows"] = 0
    assert verify(folder)["rows"] == 5778


def test_a_cold_memo_regenerates_and_a_changed_configuration_is_another_entry(tmp_path, counted):
    folder = tmp_path / "prepared"
    assert COMMANDS["prepare"](ctx(), NS(seed=DEMO, outdir=str(folder))) == 0
    cmd._REGENERATED.clear()
    verify(folder)
    assert counted == [DEMO, DEMO]
    ec = study_config(ctx().config)
    key = cmd._regenerated_key(ctx(), ec, DEMO)
    assert key in cmd._REGENERATED
    assert cmd._regenerated_key(ctx(), ec, DEMO + "x") != key
    other = dataclasses.replace(ec, raw={**ec.raw, "generatorId": "another/v1"})
    assert cmd._regenerated_key(ctx(), other, DEMO) != key


def test_the_memo_keeps_a_bounded_number_of_seeds(counted):
    for k in range(cmd._REGENERATED_KEPT + 3):
        cmd._remember(("s", "d", "{}", f"seed-{k}"), [("a", b"x", 0o644)], {"k": k})
    assert len(cmd._REGENERATED) == cmd._REGENERATED_KEPT
    assert ("s", "d", "{}", "seed-0") not in cmd._REGENERATED
    assert ("s", "d", "{}", f"seed-{cmd._REGENERATED_KEPT + 2}") in cmd._REGENERATED
