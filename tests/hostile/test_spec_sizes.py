"""A spec cannot ask compile for more cells than it can list: a crossing of three factors of
1,000 levels (a billion cells) ran until memory ran out, and 10,000 cells took minutes in the
overlap check, which compared every pair of cells; now a study registers at most 10,000 cells,
refused at the crossing's line before any is listed (and by diff, naming the file), and the
overlap check indexes the cells by their factors."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.cli import main
from prereg.compiler import expand
from prereg.compiler.semantic import _overlapping
from tests.conftest import ROOT, compile_edited

SPEC = ROOT / "examples" / "answer-position" / "spec" / "studies" / "answer-position.yaml"
TEST_CROSSING = (
    '  - {id: "{split}-{model}-{position}-{format}", split: test, rows: 150,'
    " factors: [model, position, format]}\n"
)


def _big_factors(n0: int, n1: int) -> list[tuple[str, str]]:
    """Two factors of n0 and n1 levels and a crossing of them (n0 * n1 cells)."""
    levels = lambda n: "".join(f"      - {{id: l{i}, code: c{i}}}\n" for i in range(n))  # noqa: E731
    factors = f"  - id: f0\n    levels:\n{levels(n0)}  - id: f1\n    levels:\n{levels(n1)}"
    crossing = '  - {id: "x-{f0}-{f1}", split: test, rows: 1, factors: [f0, f1]}\n'
    return [("factors:\n", "factors:\n" + factors), (TEST_CROSSING, TEST_CROSSING + crossing)]


def test_a_crossing_of_more_cells_than_a_study_registers_is_refused_at_its_line(tmp_path):
    code, err, line_of = compile_edited(tmp_path, "answer-position", _big_factors(101, 100), SPEC)
    assert code == 2
    at = "/crossings/2"
    assert err.splitlines()[2:] == [
        f"    spec/studies/answer-position.yaml:{line_of(at)}: at {at}: the crossing crosses"
        " 10,100 combinations of levels; a study registers at most 10,000 cells"
    ]


@pytest.mark.parametrize(
    "most, problem",
    [
        (32, None),  # the study's two crossings of 16 cells each
        (31, "at /crossings: the study registers 32 cells (0 written, the rest crossed); at most 31"),
        (15, "at /crossings/0: the crossing crosses 16 combinations of levels; a study registers at most 15 cells"),
    ],
)  # fmt: skip
def test_the_bound_counts_every_cell(tmp_path, monkeypatch, most, problem):
    monkeypatch.setattr(expand, "MAX_CELLS", most)
    code, err, _ = compile_edited(tmp_path, "answer-position", [], SPEC)
    if problem is None:
        assert code == 0, err
    else:
        assert code == 2 and problem in err, err


def test_diff_refuses_a_spec_of_too_many_cells_naming_it(tmp_path, capsys):
    new = tmp_path / "new.yaml"
    text = SPEC.read_text(encoding="utf-8")
    for old, repl in _big_factors(101, 100):
        text = text.replace(old, repl)
    new.write_text(text, encoding="utf-8")
    assert main(["diff", str(SPEC), str(new)]) == 2
    assert capsys.readouterr().err == (
        f"error: {new}: at /crossings/2: the crossing crosses 10,100 combinations of levels; a"
        " study registers at most 10,000 cells\n"
    )


def _brute(assigns: list[dict]) -> list[tuple[int, int]]:
    """The overlap rule as it reads, over every pair."""
    out = []
    for (i, a), (j, b) in itertools.combinations(enumerate(assigns), 2):
        common = a.keys() & b.keys()
        if all(a[f] == b[f] for f in common) and (a.keys() <= b.keys() or b.keys() <= a.keys()):
            out.append((i, j))
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from("abc"), st.sampled_from(["1", "2"]), max_size=3),
        max_size=12,
    )
)
def test_the_indexed_overlap_check_finds_exactly_the_pairs_of_the_rule(assigns):
    assert _overlapping(assigns) == _brute(assigns)
