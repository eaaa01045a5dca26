"""Crossings register exactly the cells written one by one: d17-multifact's four crossings
against its 78 cells as they were written, and the crossing words' own checks."""

from __future__ import annotations

import shutil

from prereg.cli import main
from prereg.compiler import diff
from prereg.compiler.expand import all_cells
from prereg.compiler.load import load_yaml
from tests.conftest import D17_WRITTEN_CELLS, ROOT, d17_written_cells, write_d17_cells

D17 = ROOT / "spec" / "studies" / "d17-multifact.yaml"


def test_d17_crossings_expand_to_the_written_cells_in_allocation_order():
    spec = load_yaml(D17).data
    written = [
        {**c, "levels": [{"factor": r["factor"], "level": str(r["level"])} for r in c["levels"]]}
        for c in d17_written_cells()
    ]
    assert all_cells(spec) == written
    assert len(written) == 78


def test_written_and_crossed_d17_are_the_same_registration(tmp_path, capsys):
    copy = tmp_path / "d17.yaml"
    shutil.copy(D17, copy)
    write_d17_cells(copy)
    old, new = diff.read_spec_file(copy), diff.read_spec_file(D17)
    assert diff.diff_specs(old, new) == []
    assert diff.registered_content(old) == diff.registered_content(new)
    assert main(["diff", str(copy), str(D17)]) == 0
    assert "no semantic changes" in capsys.readouterr().out
    assert D17_WRITTEN_CELLS.read_text().startswith("cells:\n")
