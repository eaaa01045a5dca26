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


def test_more_review_items_than_development_rows_are_refused(tmp_path):
    # d17 registers 18 tuning rows of outcome yes (2 in each of 9 cells): 19 items cannot be drawn
    code, err, line_of = compile_edited(
        tmp_path, D17, [('{outcome: "yes", items: 8}', '{outcome: "yes", items: 19}')]
    )
    assert code == 2
    ptr = "/constants/17/value/perOutcome/0/items"
    assert (
        f"d17-multifact.yaml:{line_of(ptr)}: at {ptr}: asks for 19 review items of outcome" in err
    )
    assert "the development splits (tuning) register 18 rows of it" in err
    assert "constant dev-review" in err and "Traceback" not in err


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


def test_equal_label_words_are_refused(tmp_path):
    code, err, line_of = _variant(tmp_path, [('"no": "false"', '"no": "true"')])
    assert code == 2
    ptr = "/constants/2/value"
    assert f"{VARIANT}.yaml:{line_of(ptr)}: at {ptr}: yes and no must be different words" in err


def test_a_family_id_that_does_not_tell_cells_apart_is_refused(tmp_path):
    # without the pool letter, the two pools' cells would draw the same rows
    code, err, line_of = _variant(
        tmp_path,
        [("-{splitShort}-{poolLetter}{hops}-", "-{splitShort}-{hops}-")],
    )
    assert code == 2
    assert (
        f"{VARIANT}.yaml:{line_of('/crossings/0')}: at /crossings/0: cell"
        " 'pl-lex-south_r1_reachable_balanced': draws the same rows as the pilot cell"
        " lex-north_r1_reachable_balanced"
    ) in err
    assert "hashing.familyId and hashing.rowDrawMessage must tell every two cells apart" in err


def test_an_answer_that_never_takes_a_gold_label_word_is_refused(tmp_path):
    # gold is true/false: an answer of yes/no would never be correct
    code, err, line_of = _variant(
        tmp_path,
        [
            ('{field: prob, op: gt, value: 0.5}], value: "true"}',
             '{field: prob, op: gt, value: 0.5}], value: "yes"}'),
            ('{field: prob, op: lt, value: 0.5}], value: "false"}',
             '{field: prob, op: lt, value: 0.5}], value: "no"}'),
        ],
    )  # fmt: skip
    assert code == 2
    ptr = "/derived_fields/0/cases"
    assert (
        f"{VARIANT}.yaml:{line_of(ptr)}: at {ptr}: derived field 'answer' is compared with gold"
        " (in 'correct'), but it never takes the gold label word(s) 'true', 'false'"
    ) in err
