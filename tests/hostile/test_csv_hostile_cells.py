"""Hostile CSV files: every cell of a number or integer field is read only when it is written
as the type's words say (pyarrow's own conversion also took ``0x10`` as 16, blanks around the
digits, ``inf``, ``NaN`` and ``1e400`` as infinity), and a file no CSV reader reads as its
header says (a ragged row, a quote never closed, bytes that are not UTF-8, an empty file) is
refused at its line, in one process and in partitions alike. A cell longer than Python's csv
field limit was a traceback where a problem's line was worked out."""

from __future__ import annotations

import json

import pytest

from prereg.cli import main
from prereg.errors import UserError
from prereg.tabular import read_contract_columns, read_contract_records

FIELDS = [
    {"name": "id", "type": "string"},
    {"name": "n", "type": "integer"},
    {"name": "x", "type": "number", "nullable": True},
]
SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "n": {"type": "integer"},
        "x": {"type": ["number", "null"]},
    },
    "required": ["id", "n"],
    "additionalProperties": False,
}


def _refusal(tmp_path, text: str | bytes):
    schema = tmp_path / "rec.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    path = tmp_path / "obs.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = []
    for read in (read_contract_records, read_contract_columns):
        with pytest.raises(UserError) as e:
            read(path, schema, FIELDS)
        out.append((e.value.message, e.value.problems))
    assert out[0] == out[1]
    return out[0][0].replace(str(path), "obs.csv"), [
        p.replace(str(path), "obs.csv") for p in out[0][1]
    ]


@pytest.mark.parametrize("cell", ["0x10", "0X1f", " 1", "1 ", "\t1", "+1", "1_000", "1.0", "1e5"])
def test_an_integer_cell_is_digits_alone(tmp_path, cell):
    _, problems = _refusal(tmp_path, f'id,n,x\na,1,0.5\nb,"{cell}",0.5\n')
    # a whole number written as a float (pandas' 5.0) is told how pandas writes it as digits
    floated = [
        "an integer cell is written without a decimal point; pandas writes an integer column"
        " with missing values as floats (5.0): df['n'].astype('Int64') before to_csv writes 5,"
        " and an empty cell for a missing one"
    ]
    assert problems == [
        f"obs.csv:3: field n: {cell!r} is not a whole number (digits, a leading - for a"
        " negative one)",
        *(floated if cell == "1.0" else []),
    ]


def test_an_integer_beyond_64_bits_is_refused_at_its_line(tmp_path):
    _, problems = _refusal(tmp_path, "id,n,x\na,1,0.5\nb,99999999999999999999,0.5\n")
    assert problems == [
        "obs.csv:3: field n: integer 99999999999999999999 is outside the range of a 64-bit"
        " integer (-9,223,372,036,854,775,808 to 9,223,372,036,854,775,807)"
    ]


@pytest.mark.parametrize("cell", ["NaN", "nan", "inf", "-inf", "Infinity", "+nan"])
def test_a_number_cell_that_is_not_finite_is_refused(tmp_path, cell):
    _, problems = _refusal(tmp_path, f"id,n,x\na,1,0.5\nb,2,{cell}\n")
    assert problems == [
        f"obs.csv:3: field x: {cell!r} is not a finite number (JSON has no NaN or infinity; a"
        " missing value is an empty cell, or a word the field's null_values lists)"
    ]


def test_a_number_beyond_the_largest_double_is_refused(tmp_path):
    _, problems = _refusal(tmp_path, "id,n,x\na,1,0.5\nb,2,2e308\n")
    assert problems == ["obs.csv:3: field x: 2e308 is beyond the largest double (about 1.8e308)"]


@pytest.mark.parametrize("cell", [" 0.5", "0.5 ", "0x10", "1_0", "0,5"])
def test_a_number_cell_is_the_number_alone(tmp_path, cell):
    _, problems = _refusal(tmp_path, f'id,n,x\na,1,0.5\nb,2,"{cell}"\n')
    assert problems == [f"obs.csv:3: field x: {cell!r} is not a number"]


def test_a_nan_listed_in_null_values_is_null(tmp_path):
    schema = tmp_path / "rec.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    path = tmp_path / "obs.csv"
    path.write_text("id,n,x\na,1,NaN\nb,2,+.5\n")
    fields = [*FIELDS[:2], {**FIELDS[2], "null_values": ["NaN"]}]
    for read in (read_contract_records, read_contract_columns):
        assert [dict(r) for r in read(path, schema, fields)] == [
            {"id": "a", "n": 1, "x": None},
            {"id": "b", "n": 2, "x": 0.5},
        ]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("id,n,x\na,1,0.5\nb,2\n", "obs.csv:3: 2 cells where the header names 3 columns"),
        ("id,n,x\na,1,0.5\nb,2,0.5,9\n", "obs.csv:3: 4 cells where the header names 3 columns"),
        (
            'id,n,x\na,1,0.5\n"b,2,0.5\nc,3,0.5\n',
            "obs.csv:3: a quoted cell starting on this line is never closed (it runs to the end"
            ' of the file): close its quote ("), and write a quote inside a cell as ""',
        ),
        (
            b"id,n,x\na,1,0.5\nb\xe9,2,0.5\n",
            "obs.csv:3: byte 0xe9 at column 2 is not UTF-8; save the file as UTF-8 (a"
            " spreadsheet's CSV UTF-8)",
        ),
        ("", "obs.csv:1: the file is empty; a CSV file's first line names its columns"),
    ],
)
def test_a_file_no_reader_reads_is_refused_at_its_line(tmp_path, text, problem):
    message, problems = _refusal(tmp_path, text)
    assert message == "obs.csv: not a CSV file of this contract"
    assert problems == [problem]


def test_a_cell_longer_than_the_csv_field_limit_is_located_not_a_traceback(tmp_path):
    long = "q" * 200_000  # Python's csv module refuses a field above 131,072 characters
    _, problems = _refusal(tmp_path, f'id,n,x\n"{long}",1,0.5\n"b",x,0.5\n')
    assert problems == [
        "obs.csv:3: field n: 'x' is not a whole number (digits, a leading - for a negative one)"
    ]


# -- through score, in one process and in partitions ------------------------------------------


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    root = tmp_path_factory.mktemp("csvstudy")
    assert main(["--project", str(root), "init", "cs"]) == 0
    assert main(["--project", str(root), "compile"]) == 0
    items = root / "items.jsonl"
    assert main(["--project", str(root), "cs", "items", "--out", str(items), "--quiet"]) == 0
    obs = root / "obs.jsonl"
    assert main(["--project", str(root), "cs", "simulate", "--items", str(items), "--scenario",
                 "effect", "--seed", "1", "--out", str(obs), "--quiet"]) == 0  # fmt: skip
    rows = [json.loads(x) for x in obs.read_text().splitlines()]
    lines = [
        f"{r['rowId']},{'' if r['correct'] is None else str(r['correct']).lower()},{r['attempt']}"
        for r in rows
    ]
    return root, items, lines


@pytest.mark.parametrize(
    "line, problem",
    [
        ("{id},true,0x1", "field attempt: '0x1' is not a whole number"),
        ('{id},true," 1"', "field attempt: ' 1' is not a whole number"),
        ("{id},true", "2 cells where the header names 3 columns"),
    ],
)
@pytest.mark.parametrize("extra", [(), ("--workers", "2", "--partition-bytes", "1K")])
def test_score_refuses_at_the_line_in_one_process_and_in_partitions(
    starter, tmp_path, capsys, line, problem, extra
):
    root, items, lines = starter
    lines = list(lines)
    at = len(lines) // 2
    lines[at] = line.format(id=lines[at].split(",")[0])
    path = tmp_path / "obs.csv"
    path.write_text("rowId,correct,attempt\n" + "\n".join(lines) + "\n")
    out = tmp_path / "out" / "SCORE.json"
    argv = ["--project", str(root), "cs", "score", "--items", str(items), "--observations"]
    assert main([*argv, str(path), "--out", str(out), "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{at + 2}: {problem}" in err
    assert "Traceback" not in err
    assert not out.exists()
