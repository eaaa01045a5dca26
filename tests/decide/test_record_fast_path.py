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
    cls = jsonschema.validators.validator_for(schema)
    # the project's integer is an int as written: 1.0 (which JSON Schema's integer takes) is not;
    # and within 64 bits (10**20 is not)
    integers = cls.TYPE_CHECKER.redefine(
        "integer", lambda _c, x: type(x) is int and -(2**63) <= x < 2**63
    )
    validator = jsonschema.validators.extend(cls, type_checker=integers)(schema)
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
    assert records.schema_predicate({"type": "object"})({"any": [1]})
    # a keyword the fast path does not know leaves the schema without a predicate
    for sub in (
        {"type": "object", "patternProperties": {}},
        {"oneOf": [{"type": "string"}]},
        {"enum": ["a", 1]},
        {"type": "strin"},
    ):
        assert records.schema_predicate(sub) is None


# nested schemas in the shapes the freeze contracts use (enum without type, a schema for
# additionalProperties, minProperties, objects in arrays in objects)
NESTED = [
    {
        "type": "object",
        "additionalProperties": False,
        "required": ["kind", "meta", "items"],
        "properties": {
            "kind": {"enum": ["X6", "X7"]},
            "meta": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {"type": "string", "pattern": "^s:[0-9]$"},
            },
            "items": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["n"],
                    "properties": {
                        "n": {"type": "integer", "minimum": 0, "maximum": 2},
                        "x": {"type": ["number", "null"], "exclusiveMaximum": 1},
                    },
                },
            },
        },
    },
    {"type": "array", "maxItems": 2, "items": {"enum": ["a", "b"]}},
    {"type": ["string", "null"], "enum": ["a", "b"], "maxLength": 1},
    {"type": ["string", "null"], "enum": ["a", "b", None]},  # a nullable field's allowed values
    {"enum": ["X6", None]},
]

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, 2, 3, -1, 0.5, 1.0, 2.0]),
    st.sampled_from(["X6", "X7", "X8", "s:1", "s:x", "a", "b", "ab", "", "kind", "n"]),
)
NESTED_VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["kind", "meta", "items", "n", "x", "k"]), inner, max_size=4
        ),
    ),
    max_leaves=12,
)


@pytest.mark.parametrize(
    "schema", NESTED, ids=["object", "array", "nullable-enum", "enum-with-null", "bare-enum-null"]
)
@settings(max_examples=400, deadline=None)
@given(value=NESTED_VALUES)
def test_nested_predicates_accept_only_what_jsonschema_accepts(schema, value):
    accept = records.schema_predicate(schema)
    assert accept is not None
    if accept(value):
        assert not list(jsonschema.Draft202012Validator(schema).iter_errors(value))


def test_nested_predicate_on_examples():
    accept = records.schema_predicate(NESTED[0])
    ok = {"kind": "X6", "meta": {"a": "s:1"}, "items": [{"n": 0}, {"n": 2, "x": None}]}
    assert accept(ok)
    for bad in (
        {**ok, "kind": "X8"},  # enum
        {**ok, "kind": None},  # enum without type refuses a non-string
        {**ok, "meta": {}},  # minProperties
        {**ok, "meta": {"a": "s:x"}},  # additionalProperties schema (pattern)
        {**ok, "items": []},  # minItems
        {**ok, "items": [{"n": 3}]},  # maximum
        {**ok, "items": [{"n": True}]},  # bool is no integer
        {**ok, "items": [{"n": 1.0}]},  # stricter: 1.0 goes to jsonschema
        {**ok, "items": [{"x": 0.5}]},  # required inside an array item
        {**ok, "items": [{"n": 1, "x": 1}]},  # exclusiveMaximum
        {**ok, "other": 1},  # additionalProperties false
    ):
        assert not accept(bad), bad
    nullable = records.schema_predicate(NESTED[2])
    assert nullable("a") and not nullable(None) and not nullable("c")


def test_a_nullable_fields_allowed_values_take_the_fast_path():
    """A contract field with ``nullable`` and ``allowed`` lists null among its enum values; the
    fast path takes it (it used to leave every such record to jsonschema)."""
    accept = records.schema_predicate(NESTED[3])
    assert accept is not None
    assert accept(None) and accept("a") and accept("b")
    for bad in ("c", "", 1, 0, False, ["a"], {"a": 1}):
        assert not accept(bad)
        assert list(jsonschema.Draft202012Validator(NESTED[3]).iter_errors(bad))


def test_a_compiled_nullable_allowed_field_has_a_predicate():
    from prereg.compiler.contracts import field_schema

    schema = field_schema({"type": "string", "nullable": True, "allowed": ["x", "y"]})
    accept = records.schema_predicate(schema)
    assert accept is not None and accept(None) and accept("y") and not accept("z")
