"""A list slot the language lets a spec leave null (``where: null``: every cell) compiles as
the list left out: the semantic checks read it as empty (a gate's ``where: null`` was a
TypeError traceback from compile; found by setting every slot of the shipped specs to null,
a number, a string, a list and a mapping in turn)."""

from __future__ import annotations

from pathlib import Path

import pytest

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


H2 = (
    "          all_of:\n"
    '            - compare: {target: "a-vs-d-model-b-{format}", quantity: lower, op: gt, value: -0.15}\n'
    '            - compare: {target: "a-vs-d-model-b-{format}", quantity: upper, op: lt, value: 0.15}'
)


@pytest.mark.parametrize("key", ["all_of", "any_of"])
def test_a_condition_of_no_conditions_is_refused_at_its_line(tmp_path: Path, key):
    """``all_of: []`` passed the checks and was a jinja2 UndefinedError traceback from the
    rules template (found by editing the shipped specs at random and running compile and each
    command)."""
    code, err, line_of = compile_edited(
        tmp_path, "answer-position", [(H2, f"          {key}: []")], SPEC
    )
    at = f"/hypotheses/1/rule/for_each/condition/{key}"
    assert code == 2 and "Traceback" not in err
    assert (
        f"answer-position.yaml:{line_of(at)}: at {at}: {key} lists no conditions; list at least one"
        in err
    )
