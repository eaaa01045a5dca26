"""A structured scenario's layout is worked out again only when its drawn cluster sizes change:
a study drawing the sizes of the study before it gets that study's table and fields again.

What is compared: a Layout drawing study after study from one generator against a fresh Layout
for each study on a generator in the same state (nothing reused), for a layout of fixed sizes
(repo-pairs: repositories of 6, items of 1, every study alike) and of random sizes
(cluster-arms: repositories of 4..16); the generator is left in the same state either way."""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest

from prereg.cli import main
from prereg.compiler.project import find_project
from prereg.engines.factorial import commands
from prereg.engines.factorial.structure import Layout
from prereg.study import study_context
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "units" / "spec" / "studies"


def config_of(tmp_path, study: str):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    shutil.copy(EXAMPLE / f"{study}.yaml", tmp_path / "spec" / "studies")
    assert main(["--project", str(tmp_path), "compile"]) == 0
    _, ctx = study_context(find_project(str(tmp_path)), study)
    return ctx.config


@pytest.mark.parametrize(("study", "fixed"), [("repo-pairs", True), ("cluster-arms", False)])
def test_a_reused_layout_is_the_layout_drawn_afresh(tmp_path, study, fixed):
    config = config_of(tmp_path, study)
    sc = config["scenarios"][0]
    manifest = commands._has(config, "items")
    base = commands.registered_manifest(config) if manifest else commands.registered_rows(config)
    kept = Layout(config, sc, base, manifest)
    rng = np.random.Generator(np.random.PCG64(11))
    tables = []
    for _ in range(5):
        twin = copy.deepcopy(rng)
        table, fields = kept.lay_out(rng)
        fresh = Layout(config, sc, base, manifest)
        want_table, want_fields = fresh.lay_out(twin)
        assert table.ids == want_table.ids
        assert np.array_equal(table.cell, want_table.cell)
        assert fields == want_fields
        got_codes, want_codes = kept.coded(table, fields), fresh.coded(want_table, want_fields)
        assert len(got_codes) == len(want_codes) > 0
        for (c, k, rho), (c2, k2, rho2) in zip(got_codes, want_codes, strict=True):
            assert np.array_equal(c, c2) and (k, rho) == (k2, rho2)
        assert rng.random() == twin.random()  # the same draws consumed
        tables.append(table)
    # fixed sizes: every study is given the first study's table; random sizes: new ones
    assert all((t is tables[0]) == fixed for t in tables[1:])
