"""Specs the reachability engine could not run as registered are refused at compile time, with
the file, the line, the JSON pointer and the rule (not by a later command, nor silently)."""

from __future__ import annotations

from tests.conftest import FIXTURES, compile_edited

D17 = "d17-multifact"
VARIANT = "e23-relay-chains"
VARIANT_SPEC = FIXTURES / "reachability" / f"{VARIANT}.yaml"


def _variant(tmp_path, edits):
    return compile_edited(tmp_path, VARIANT, edits, source=VARIANT_SPEC)


def test_the_variant_compiles_as_it_is(tmp_path):
    # among others: pools without d17's informational pool role, factors named otherwise
    code, err, _ = _variant(tmp_path, [])
    assert code == 0, err


def test_a_crossing_cell_the_engine_refuses_is_placed_at_its_crossing(tmp_path):
    # the faithful layout's one-enabled-relay rule at three hops: the crossing registering it
    code, err, line_of = compile_edited(
        tmp_path,
        D17,
        [
            (
                '    fixed: [{factor: hops, level: "1"}, {factor: layout, level: d17-faithful}]\n'
                "  - id:",
                '    fixed: [{factor: hops, level: "3"}, {factor: layout, level: d17-faithful}]\n'
                "  - id:",
            )
        ],
    )
    assert code == 2
    line = line_of("/crossings/1")
    assert (
        f"d17-multifact.yaml:{line}: at /crossings/1: cell"
        " 'dev-pool-a_h3_yes_d17-faithful': rule 'd17' is defined for one relay only"
    ) in err
    assert "at /cells/" not in err
