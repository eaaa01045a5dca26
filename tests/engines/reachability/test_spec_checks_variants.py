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
