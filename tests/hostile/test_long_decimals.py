"""A number in data is read as a double and decided as the shortest decimal of that double
(prereg.stats.compare.decimal_fraction): a JSON 0.1 is 1/10. A number written with more
significant digits than a double's 17 was decided as another number than the one written:
``0.30000000000000000001`` read as 0.3, so a rule ``score gt 0.3`` failed for a value above
0.3. Such a number is now refused at its line (and CSV field), as is one below the smallest
double that read as 0 or as another subnormal; a number of up to 17 significant digits names
a double (as ``printf("%.17g")`` writes one) and is read as before, and so is one whose extra
digits are zeros. In a spec, whose thresholds are "the decimal written", any number a double
does not hold as written is refused by compile. docs/vocabulary.md ("Files") says so."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prereg.jsonl
from prereg.cli import main
from prereg.errors import UserError
from prereg.records import read_jsonl_columns, read_jsonl_records, read_records

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["rowId", "score"],
    "properties": {"rowId": {"type": "string"}, "score": {"type": "number"}},
}


@pytest.fixture
def schema(tmp_path):
    path = tmp_path / "obs.schema.json"
    path.write_text(json.dumps(SCHEMA))
    return path


def _lines(values: list[str]) -> bytes:
    return b"".join(f'{{"rowId":"r{i}","score":{v}}}\n'.encode() for i, v in enumerate(values))


def _readers(path, schema):
    def columns(p, s):
        cols = read_jsonl_columns(p, s)
        return [cols.columns["score"][i] for i in range(cols.n)]

    return [
        lambda: [r["score"] for r in read_records(path, schema, "jsonl")],
        lambda: [r["score"] for r in read_jsonl_records(path, schema)],
        lambda: columns(path, schema),
    ]


@pytest.mark.parametrize("block", [None, 64])
@pytest.mark.parametrize(
    "text, words",
    [
        (
            "0.30000000000000000001",
            "number 0.30000000000000000001 has 20 significant digits, more than a double"
            " holds: it would be read as 0.3, not as written",
        ),
        (
            "0.1000000000000000055511151231257827021181583404541015625",
            "number 0.1000000000000000055511151231… has 55 significant digits, more than a"
            " double holds: it would be read as 0.1, not as written",
        ),
        (
            "1e-400",
            "number 1e-400 is below the smallest double (about 5e-324): it would be read as"
            " 0.0, not as written",
        ),
        (
            "3e-324",
            "number 3e-324 is below the smallest double that holds it as written (about"
            " 2.2e-308): it would be read as 5e-324, not as written",
        ),
    ],
)
def test_a_number_a_double_does_not_hold_is_refused_at_its_line(
    tmp_path, schema, monkeypatch, block, text, words
):
    if block is not None:
        monkeypatch.setattr(prereg.jsonl, "BLOCK", block)
    path = tmp_path / "obs.jsonl"
    path.write_bytes(_lines(["0.25"] * 40 + [text] + ["0.5"] * 40))
    for read in _readers(path, schema):
        with pytest.raises(UserError) as got:
            read()
        problems = got.value.problems
        assert len(problems) == 1 and problems[0].startswith(f"{path}:41: "), problems
        if words is not None:
            assert problems[0] == f"{path}:41: {words}", problems


@pytest.mark.parametrize(
    "text, value",
    [
        ("0.30000000000000000000", 0.3),  # extra digits that are zeros
        ("0.30000000000000004", 0.30000000000000004),  # 17 digits: the double 0.1 + 0.2
        ("0.29999999999999999", 0.3),  # printf %.17g of 0.3: names that double
        ("5e-324", 5e-324),  # the smallest double, as written
        ("-0.0", -0.0),
        # an integer is kept as it is (the typed decode of a number field had made it a float)
        # when a double holds it as written (one that does not is refused, as in CSV: round 7)
        ("100000000000000000000000", 10**23),
        ("2.2250738585072014e-308", 2.2250738585072014e-308),
        ("1.7976931348623157e308", 1.7976931348623157e308),
    ],
)
def test_a_number_that_names_a_double_is_read_as_before(tmp_path, schema, text, value):
    path = tmp_path / "obs.jsonl"
    path.write_bytes(_lines(["0.25", text, "0.5"]))
    for read in _readers(path, schema):
        got = read()
        assert got == [0.25, value, 0.5] and type(got[1]) is type(value)


FIELDS = [{"name": "rowId", "type": "string"}, {"name": "score", "type": "number"}]


def test_csv_refuses_such_a_number_at_its_line_and_field(tmp_path, schema):
    from prereg.tabular import read_contract_columns, read_contract_records

    path = tmp_path / "obs.csv"
    path.write_text("rowId,score\na,0.25\nb,0.30000000000000000001\nc,0.30000000000000000000\n")
    for read in (read_contract_records, read_contract_columns):
        with pytest.raises(UserError) as got:
            read(path, schema, FIELDS)
        assert got.value.problems == [
            f"{path}:3: field score: number 0.30000000000000000001 has 20 significant digits,"
            " more than a double holds: it would be read as 0.3, not as written"
        ]
    path.write_text("rowId,score\na,0.25\nc,0.30000000000000000000\n")
    assert [r["score"] for r in read_contract_records(path, schema, FIELDS)] == [0.25, 0.3]


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "p"
    root.mkdir()
    assert main(["--project", str(root), "init", "my-study"]) == 0
    return root


@pytest.mark.parametrize("written", ["0.95000000000000000001", "0.95000000000000001"])
def test_compile_refuses_a_threshold_a_double_does_not_hold_as_written(project, capsys, written):
    spec = project / "spec" / "studies" / "my-study.yaml"
    text = spec.read_text()
    assert text.count("    value: 0.95\n") == 1
    spec.write_text(text.replace("    value: 0.95\n", f"    value: {written}\n"))
    line = spec.read_text().splitlines().index(f"    value: {written}") + 1
    capsys.readouterr()
    assert main(["--project", str(project), "compile"]) != 0
    err = capsys.readouterr().err
    assert f"my-study.yaml:{line}: number {written} is not a decimal a double holds" in err, err
    assert "write 0.95" in err and "Traceback" not in err
    assert not (project / "generated" / "my_study").exists()


# The fast paths skip the strict reader only where :data:`prereg.jsonl.LONG_NUMBER` finds no
# number a double may not hold as written: it must find every one that
# :func:`prereg.records.imprecise_number` refuses, wherever a JSON number may stand.
_NUMBERS = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{'.' + frac if frac else ''}{exp}",
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,25}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,30}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][-+]?[0-9]{1,3}", fullmatch=True)),
)


@settings(max_examples=400, deadline=None)
@given(text=_NUMBERS, place=st.sampled_from(['{"a":%s}', '{"a": %s}', '{"a":[1,%s]}', "[%s]"]))
def test_the_fast_paths_prefilter_finds_every_number_the_strict_reader_refuses(text, place):
    import math

    from prereg.jsonl import LONG_NUMBER, LONG_NUMBER_FLAT
    from prereg.records import imprecise_number

    value = float(text)
    if not math.isfinite(value):
        return
    if imprecise_number(text, value) is None:
        return
    line = (place % text).encode() + b"\n"
    assert LONG_NUMBER.search(line), line
    if place.startswith('{"a":') and "[" not in place:
        assert LONG_NUMBER_FLAT.search(line), line


@settings(max_examples=400, deadline=None)
@given(
    data=st.lists(
        st.sampled_from(
            [b"0", b"1", b"5", b"9", b".", b":", b",", b"[", b" ", b"-", b'"', b"a"]
            + [b"123456789", b"000000000", b"0.", b"0.00", b"98765432"]
        ),
        max_size=40,
    ).map(b"".join)
)
def test_the_array_prefilter_lets_through_whatever_the_pattern_finds(data):
    """The array passes that skip the pattern's search (jsonl._eighteen_digits) answer yes
    wherever the pattern would find a number of 18 significant digits (about one drawn block in
    six holds one)."""
    from prereg.jsonl import LONG_NUMBER, _eighteen_digits

    if LONG_NUMBER._digits.search(data):
        assert _eighteen_digits(data), data
