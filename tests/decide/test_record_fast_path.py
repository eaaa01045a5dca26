"""The typed fast path of prereg.records: a record it accepts is one jsonschema accepts, for
every record contract the studies compile to, and the problems reported are jsonschema's."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg import records

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = sorted((ROOT / "generated").glob("*/schemas/*.schema.json"))
RECORDS = [p for p in SCHEMAS if json.loads(p.read_text())["x-prereg-format"] == "jsonl"]
# the one-document inputs with a fast path (the calibrator artifact, whose blocks are objects)
DOCUMENTS = [p for p in SCHEMAS if p not in RECORDS and records._accepts(str(p)) is not None]

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0, 1, 2, 10**20, -1]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-2, max_value=2),
    st.sampled_from([0.0, 1.0, 0.5, -0.0, 1.5]),
    st.text(max_size=3),
    st.sampled_from(["a" * 64, "0" * 64, "f" * 63, "validation", "test", "pass", "fail", "x"]),
    st.lists(st.one_of(st.integers(-1, 3), st.text(max_size=2), st.floats(0, 1)), max_size=4),
    st.dictionaries(st.text(max_size=2), st.integers(0, 2), max_size=2),
    st.lists(st.dictionaries(st.sampled_from(["lower", "n"]), st.integers(0, 2)), max_size=3),
)


def _records(schema: dict):
    props = list(schema.get("properties", {}))
    keys = st.sampled_from(props + ["extra"])
    return st.dictionaries(keys, VALUES, max_size=len(props) + 1)


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_record_contract_has_a_fast_path(path):
    assert records._accepts(str(path)) is not None


@pytest.mark.parametrize(
    "path", RECORDS + DOCUMENTS, ids=lambda p: f"{p.parent.parent.name}/{p.name}"
)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_accepted_records_are_valid_and_problems_are_jsonschemas(path, data):
    schema = json.loads(path.read_text())
    obj = data.draw(_records(schema))
    validator = jsonschema.validators.validator_for(schema)(schema)
    valid = not list(validator.iter_errors(obj))
    if records._accepts(str(path))(obj):
        assert valid
    expected = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    assert records.schema_problems(obj, path) == [
        f"at {records.json_path(e.absolute_path)}: {records.describe(e)}" for e in expected
    ]


def test_a_valid_observation_takes_the_fast_path():
    path = next(p for p in RECORDS if p.name == "observation.schema.json")
    accept = records._accepts(str(path))
    row = {"rowId": "a" * 64, "requestId": "r", "pYes": 0.25, "attempt": 1}
    assert accept(row)
    assert not accept({**row, "attempt": 0})  # minimum
    assert not accept({**row, "attempt": True})  # bool is no integer
    assert not accept({**row, "rowId": "A" * 64})  # pattern
    assert not accept({**row, "other": 1})  # closed
    assert not accept({k: v for k, v in row.items() if k != "pYes"})  # required
    assert accept({**row, "pYes": None, "error": "timeout"})


def test_the_calibrator_takes_the_fast_path_and_only_a_bare_object_value_does():
    path = ROOT / "generated" / "d17_multifact" / "schemas" / "calibrator.schema.json"
    assert path in DOCUMENTS
    accept = records._accepts(str(path))
    doc = {
        "id": "c",
        "effectiveAt": "2026-10-02T10:02:34.263Z",
        "expiresAfterDays": 30,
        "blocks": [{"lower": 0.0, "n": 2, "yes": 1}],
        "digest": "sha256:" + "0" * 64,
    }
    assert accept(doc)
    assert not accept({**doc, "blocks": []})  # minItems
    assert not accept({**doc, "blocks": [[1]]})  # an item that is no object
    assert records.schema_problems({**doc, "blocks": [1]}, path) == [
        "at /blocks/0: expected object, got 1"
    ]
    # an object value with keywords about its members has no fast path
    for sub in ({"type": "object", "properties": {}}, {"type": "object", "required": ["a"]}):
        assert records._value_check(sub) is None
    assert records._value_check({"type": "object"})({"any": [1]})
