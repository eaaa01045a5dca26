"""A list slot the language lets a spec leave null (``where: null``: every cell) compiles as
the list left out: the semantic checks read it as empty (a gate's ``where: null`` was a
TypeError traceback from compile; found by setting every slot of the shipped specs to null,
a number, a string, a list and a mapping in turn)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT, compile_edited

SPEC = ROOT / "examples" / "answer-position" / "spec" / "studies" / "answer-position.yaml"
WHERE = "    where: [{factor: split, levels: [test]}]\n    op: ge\n    value: 0.95"


def test_a_gate_whose_where_is_null_selects_every_cell(tmp_path: Path):
    code, err, _ = compile_edited(
        tmp_path,
        "answer-position",
        [(WHERE, WHERE.replace("[{factor: split, levels: [test]}]", "null"))],
        SPEC,
    )
    assert code == 0, err
    assert "Traceback" not in err
