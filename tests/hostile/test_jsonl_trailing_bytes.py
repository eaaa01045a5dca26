"""A JSONL line holding more than one JSON object (a NUL byte, other text or a second object
after it) is refused at its line and column in the project's words, where Python's json said
"Extra data: line 1 column 47 (char 46)"; a control character where a value should start is
named too. In one process and in partitions alike."""

from __future__ import annotations

import json

import pytest

from prereg.errors import UserError
from prereg.records import json_line_problem, loads_strict
from prereg.tabular import read_contract_columns, read_contract_records

SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["id", "n"],
    "additionalProperties": False,
}
FIELDS = [{"name": "id", "type": "string"}, {"name": "n", "type": "integer"}]
OBJ = '{"id": "b", "n": 2}'  # 19 characters


@pytest.mark.parametrize(
    "line, problem",
    [
        (OBJ + "\x00", "a NUL byte (U+0000) at column 20, after the JSON object"),
        (OBJ + "  \x1b", "the control character U+001B at column 22, after the JSON object"),
        (OBJ + " x", "text 'x' at column 21, after the JSON object"),
        (OBJ + OBJ, "a second JSON value at column 20, after the JSON object"),
        (OBJ + ",1", "',' at column 20, after the JSON object"),
    ],
)
def test_bytes_after_the_object_are_named_at_their_column(tmp_path, line, problem):
    schema = tmp_path / "rec.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    path = tmp_path / "obs.jsonl"
    path.write_text('{"id": "a", "n": 1}\n' + line + "\n")
    want = [f"{path}:2: not valid JSON: {problem}; a line holds one JSON object and nothing else"]
    for read in (read_contract_records, read_contract_columns):
        with pytest.raises(UserError) as e:
            read(path, schema, FIELDS)
        assert e.value.problems == want
        assert "Extra data" not in str(e.value.problems)


def test_a_nul_byte_where_the_object_should_start_is_named():
    with pytest.raises(ValueError) as e:
        loads_strict("\x00" + OBJ)
    assert json_line_problem(e.value, "\x00" + OBJ) == (
        "not valid JSON: a NUL byte (U+0000) at column 1 (Expecting value)"
    )


def test_other_problems_keep_json_words():
    with pytest.raises(ValueError) as e:
        loads_strict('{"id": }')
    assert json_line_problem(e.value, '{"id": }').startswith("not valid JSON: Expecting value")


def test_a_raw_control_character_inside_a_string_is_named_with_its_escape():
    line = '{"id": "a\x00b", "n": 1}'
    with pytest.raises(ValueError) as e:
        loads_strict(line)
    assert json_line_problem(e.value, line) == (
        "not valid JSON: a NUL byte (U+0000) at column 10, inside a string: JSON writes it"
        " escaped (\\u0000)"
    )
