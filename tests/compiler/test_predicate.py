"""The compiled schema predicates (prereg.compiler.predicate) accept exactly what jsonschema
accepts: never a value jsonschema refuses, and (where the predicate is exact, as the language's
is) every value jsonschema accepts. Checked on the project's specs, the malformed-spec corpus,
random mutations of the specs and their constants, and random schemas with random values; and a
spec that holds is checked without importing jsonschema."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prereg.compiler import predicate, validate
from prereg.compiler.engines import _validator_class
from prereg.compiler.load import load_yaml
from prereg.engines import registry
from prereg.engines.base import constants
from prereg.errors import UserError
from tests.conftest import ROOT

LANGUAGE = ROOT / "generated" / "prereg.schema.json"
SPECS = sorted(
    [
        *(ROOT / "spec" / "studies").glob("*.yaml"),
        *(ROOT / "examples").glob("*/spec/studies/*.yaml"),
        *(ROOT / "tests" / "golden").glob("*/project/spec/studies/*.yaml"),
    ]
)
BAD = sorted((ROOT / "tests" / "compiler" / "bad").glob("*.yaml"))


@cache
def _language():
    schema = json.loads(LANGUAGE.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return predicate.compile_schema(schema), cls(schema, format_checker=cls.FORMAT_CHECKER)


@cache
def _engine(kind: str):
    schema = registry.require(kind).config_schema()
    accepts = predicate.compile_schema(schema, draft="2020-12", integer_floats=False, formats=False)
    return accepts, _validator_class()(schema), schema


def _spec(path: Path):
    return load_yaml(path).data


def _agrees(accepts, validator, value, exact: bool) -> None:
    try:
        ok = accepts(value)
    except RecursionError:
        ok = False
    valid = not any(True for _ in validator.iter_errors(value))
    assert not ok or valid, "the predicate accepted a value jsonschema refuses"
    if exact:
        assert ok == valid, "the exact predicate refused a value jsonschema accepts"


def test_every_keyword_jsonschema_acts_on_is_known():
    for cls in (jsonschema.Draft201909Validator, jsonschema.Draft202012Validator):
        assert set(cls.VALIDATORS) <= predicate.ASSERTING


def test_the_language_and_every_engine_schema_compile_and_the_language_is_exact():
    accepts, _ = _language()
    assert accepts is not None
    schema = json.loads(LANGUAGE.read_text(encoding="utf-8"))
    assert predicate._Compiler(schema, draft="2019-09", integer_floats=True, formats=True).exact(
        schema, set()
    )
    for kind in registry.kinds():
        if registry.require(kind).schema is not None:
            assert _engine(kind)[0] is not None, kind


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_the_projects_specs_hold_by_the_predicates(path):
    data = _spec(path)
    accepts, validator = _language()
    assert accepts(data) and not list(validator.iter_errors(data))
    engine = registry.require(data["engine"])
    if engine.schema is not None:
        e_accepts, e_validator, _ = _engine(engine.kind)
        assert e_accepts(constants(data)) and not list(e_validator.iter_errors(constants(data)))


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_the_malformed_corpus_is_judged_as_jsonschema_judges_it(path):
    try:
        data = _spec(path)
    except UserError:
        return  # refused by the loader, before any schema
    accepts, validator = _language()
    _agrees(accepts, validator, data, exact=True)
    kind = data.get("engine") if isinstance(data, dict) else None
    if kind in registry.kinds() and registry.require(kind).schema is not None:
        e_accepts, e_validator, _ = _engine(kind)
        _agrees(e_accepts, e_validator, constants(data), exact=False)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, 1e300, 10**15]),
    st.sampled_from(["", "x", "a-b", "A b", "2024-02-29", "2023-02-29", "0.5", "wilson", "main"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["id", "value", "type", "x", "description"]), inner, max_size=3
        ),
    ),
    max_leaves=6,
)


def _mutate(data, value, draw):
    """One random edit somewhere in ``value`` (in place): replace, delete, add a key, repeat an
    item, or change a number or a string a little."""
    path = draw(st.sampled_from(list(_paths(value))))
    if not path:
        return draw(_VALUES)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    old = parent[key]
    op = draw(st.sampled_from(["replace", "delete", "add", "repeat", "nudge"]))
    if op == "delete":
        del parent[key]
    elif op == "add" and isinstance(old, dict):
        old[draw(st.sampled_from(["id", "extra", "value", "description"]))] = draw(_VALUES)
    elif op == "repeat" and isinstance(old, list) and old:
        old.append(copy.deepcopy(old[0]))
    elif op == "nudge" and type(old) in (int, float):
        parent[key] = draw(st.sampled_from([old + 1, -old - 1, float(old), old + 0.5, str(old)]))
    elif op == "nudge" and isinstance(old, str):
        parent[key] = draw(st.sampled_from([old + "!", old.upper(), "", old + " x", old[:1]]))
    else:
        parent[key] = draw(_VALUES)
    return value


_SPEC_DATA = [(p.stem, _spec(p)) for p in SPECS]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_specs_are_judged_as_jsonschema_judges_them(data):
    _, spec = data.draw(st.sampled_from(_SPEC_DATA))
    value = copy.deepcopy(spec)
    for _ in range(data.draw(st.integers(1, 3))):
        value = _mutate(data, value, data.draw)
    accepts, validator = _language()
    _agrees(accepts, validator, value, exact=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_constants_are_judged_as_jsonschema_judges_them(data):
    name, spec = data.draw(
        st.sampled_from([(n, s) for n, s in _SPEC_DATA if s["engine"] != "factorial"])
    )
    kind = spec["engine"]
    accepts, validator, _ = _engine(kind)
    value = copy.deepcopy(constants(spec))
    for _ in range(data.draw(st.integers(1, 3))):
        value = _mutate(data, value, data.draw)
    exact = predicate._Compiler(
        _engine(kind)[2], draft="2020-12", integer_floats=False, formats=False
    ).exact(_engine(kind)[2], set())
    _agrees(accepts, validator, value, exact=exact)


# -- random schemas -----------------------------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "c"])
_TYPE_NAMES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
_LEAF = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(_TYPE_NAMES, st.lists(_TYPE_NAMES, min_size=1, max_size=3)),
        "enum": st.lists(_VALUES, min_size=1, max_size=3),
        "const": _VALUES,
        "minimum": st.sampled_from([0, 1, 1.5]),
        "maximum": st.sampled_from([1, 2.5]),
        "exclusiveMinimum": st.sampled_from([0, -1.5]),
        "exclusiveMaximum": st.sampled_from([3, 0.5]),
        "minLength": st.integers(0, 2),
        "maxLength": st.integers(0, 2),
        "pattern": st.sampled_from(["^a", "b$", "[0-9]", "^$"]),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "uniqueItems": st.booleans(),
        "minProperties": st.integers(0, 2),
        "maxProperties": st.integers(0, 2),
        "format": st.sampled_from(["date", "email"]),
        "description": st.just("an annotation"),
        "x-message": st.just("ignored"),
        "$ref": st.sampled_from(["#/$defs/d0", "#/$defs/d1", "#/$defs/missing"]),
    },
)
_SCHEMAS = st.recursive(
    st.one_of(st.booleans(), _LEAF),
    lambda inner: st.one_of(
        _LEAF,
        st.fixed_dictionaries(
            {},
            optional={
                "type": _TYPE_NAMES,
                "properties": st.dictionaries(_KEYS, inner, max_size=3),
                "required": st.lists(_KEYS, max_size=2, unique=True),
                "additionalProperties": inner,
                "items": inner,
                "allOf": st.lists(inner, min_size=1, max_size=2),
                "anyOf": st.lists(inner, min_size=1, max_size=2),
                "oneOf": st.lists(inner, min_size=1, max_size=2),
            },
        ),
    ),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=_SCHEMAS,
    defs=st.tuples(_SCHEMAS, _SCHEMAS),
    values=st.lists(_VALUES, min_size=1, max_size=6),
    mode=st.sampled_from(["language-2019", "language-2020", "engine"]),
)
def test_random_schemas_judge_random_values_as_jsonschema_does(schema, defs, values, mode):
    if isinstance(schema, bool):
        schema = {"allOf": [schema]}
    root = {**schema, "$defs": {"d0": defs[0], "d1": defs[1]}}
    if mode == "engine":
        accepts = predicate.compile_schema(
            root, draft="2020-12", integer_floats=False, formats=False
        )
        validator = _validator_class()(root)
        draft = "2020-12"
    else:
        draft = "2019-09" if mode == "language-2019" else "2020-12"
        root["$schema"] = next(uri for uri, d in predicate.DRAFTS.items() if d == draft)
        accepts = predicate.compile_schema(root)
        cls = jsonschema.validators.validator_for(root)
        validator = cls(root, format_checker=cls.FORMAT_CHECKER)
    if accepts is None:
        return  # jsonschema alone decides, as before
    compiler = predicate._Compiler(
        root, draft=draft, integer_floats=mode != "engine", formats=mode != "engine"
    )
    exact = compiler.exact(root, set())
    for value in values:
        try:
            valid = not any(True for _ in validator.iter_errors(value))
        except RecursionError:
            assume(False)  # a reference that only refers to itself: jsonschema never ends
        try:
            ok = accepts(value)
        except RecursionError:
            ok = False
        assert not ok or valid
        if exact:
            assert ok == valid


def test_validate_words_a_refusal_as_jsonschema_does(tmp_path):
    """A spec the predicate refuses gets jsonschema's located problems."""
    path = tmp_path / "s.yaml"
    text = (ROOT / "spec" / "studies" / "jev-multicorrect.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("status: ", "colour: red\nstatus: ", 1), encoding="utf-8")
    problems = validate.validate(load_yaml(path), LANGUAGE)
    assert len(problems) == 1 and "unknown key 'colour'" in problems[0]


PROBE = """\
import sys
from prereg.cli import main
code = main(["--project", sys.argv[1], "check"])
print(code, "jsonschema" in sys.modules)
"""


def test_a_check_of_specs_that_hold_imports_no_jsonschema(tmp_path):
    """jev-multicorrect, d17-multifact and s3-verifier-freeze (whose freeze-input contract is
    plainly a valid schema, so its engine's check asks no metaschema)."""
    project = tmp_path / "p"
    (project / "spec" / "studies").mkdir(parents=True)
    for sid in ("jev-multicorrect", "d17-multifact", "s3-verifier-freeze"):
        for src in (ROOT / "spec" / "studies").glob(f"{sid}.*"):  # the spec and its seal
            (project / "spec" / "studies" / src.name).write_bytes(src.read_bytes())
    (project / "spec" / "prereg.linkml.yaml").write_bytes(
        (ROOT / "spec" / "prereg.linkml.yaml").read_bytes()
    )
    gen = project / "generated"
    gen.mkdir()
    (gen / "prereg.schema.json").write_bytes(LANGUAGE.read_bytes())
    for pkg in ("jev_multicorrect", "d17_multifact", "s3_verifier_freeze"):
        __import__("shutil").copytree(
            ROOT / "generated" / pkg,
            gen / pkg,
            ignore=__import__("shutil").ignore_patterns("__pycache__"),
        )
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(project)], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["0", "False"], r.stdout + r.stderr


_D2019 = "https://json-schema.org/draft/2019-09/schema"
#: (schema, value): where the draft's and prereg's readings are easy to get wrong
EDGES = [
    ({"type": "integer"}, 1.0),
    ({"type": "integer"}, 1.5),
    ({"type": "integer"}, True),
    ({"type": ["integer", "null"], "minimum": 2}, 2.0),
    ({"type": "number"}, False),
    ({"minimum": 1}, True),
    ({"maximum": 0}, "text"),
    ({"exclusiveMinimum": 1}, 1),
    ({"exclusiveMaximum": 1.5}, 1.5),
    ({"format": "date"}, "2024-02-29"),
    ({"format": "date"}, "2023-02-29"),
    ({"format": "date"}, "2024-1-01"),
    ({"format": "date"}, "2024-01-01\n"),
    ({"format": "date"}, "２０２４-01-01"),
    ({"format": "date"}, 20240101),
    ({"pattern": "^a$"}, "a\n"),
    ({"pattern": "b"}, "abc"),
    ({"pattern": "^x"}, 5),
    ({"minLength": 2}, "é"),
    ({"maxLength": 1}, "é"),
    ({"uniqueItems": True}, [True, 1]),
    ({"uniqueItems": True}, [1, 1.0]),
    ({"uniqueItems": True}, [0, False]),
    ({"uniqueItems": True}, [["a", "b"], ["a", "b"]]),
    ({"uniqueItems": True}, [["a", "b"], ["b", "a"]]),
    ({"uniqueItems": True}, [{"a": 1}, {"a": 1.0}]),
    ({"uniqueItems": True}, [None, None]),
    ({"enum": [1]}, True),
    ({"enum": [True]}, 1),
    ({"enum": [1]}, 1.0),
    ({"enum": [None, "a"]}, None),
    ({"enum": [[1, 2]]}, [1, 2]),
    ({"enum": [{"a": [1]}]}, {"a": [1.0]}),
    ({"const": "a"}, "a"),
    ({"const": 0}, False),
    ({"required": ["a"]}, ["a"]),
    ({"required": ["a"]}, {"b": 1}),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"b": "x"}),
    ({"additionalProperties": {"type": "integer"}}, {"b": 2.0}),
    ({"items": {"type": "string"}}, {"not": "a list"}),
    ({"items": False}, []),
    ({"items": False}, [1]),
    ({"oneOf": [{"type": "null"}, {"type": "object"}]}, None),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1, "b": 2}),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, "neither"),
    ({"anyOf": [{"type": "string"}, {"minimum": 3}]}, 2),
    (
        {
            "$ref": "#/$defs/n",
            "$defs": {"n": {"type": ["array", "null"], "items": {"$ref": "#/$defs/n"}}},
        },
        [[None, []]],
    ),
    (
        {
            "$ref": "#/$defs/n",
            "$defs": {"n": {"type": ["array", "null"], "items": {"$ref": "#/$defs/n"}}},
        },
        [[1]],
    ),
]


@pytest.mark.parametrize("mode", ["language", "engine"])
@pytest.mark.parametrize(
    "schema, value", EDGES, ids=lambda v: json.dumps(v, ensure_ascii=True)[:40]
)
def test_edge_cases_are_judged_exactly_as_jsonschema_judges_them(schema, value, mode):
    if mode == "engine":
        accepts = predicate.compile_schema(
            schema, draft="2020-12", integer_floats=False, formats=False
        )
        valid = _validator_class()(schema).is_valid(value)
    else:
        schema = {"$schema": _D2019, **schema}
        accepts = predicate.compile_schema(schema)
        cls = jsonschema.validators.validator_for(schema)
        valid = cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(value)
    assert accepts is not None
    assert accepts(value) == valid


# -- a schema that is plainly valid (the s3 freeze-input contract's check) ---------------------


def test_the_metaschema_keywords_are_those_jsonschema_checks():
    from jsonschema_specifications import REGISTRY

    keys = set()
    for uri in REGISTRY:
        if "draft/2020-12/" in uri:
            keys |= set(REGISTRY.contents(uri).get("properties", {}))
    # every keyword the metaschema constrains is listed (a listed keyword it does not constrain,
    # such as draft 2019-09's additionalItems, only sends a schema to jsonschema)
    assert keys <= predicate.METASCHEMA_KEYWORDS
    assert predicate.METASCHEMA_KEYWORDS - keys == {"additionalItems"}


def _refs(x) -> bool:
    if isinstance(x, dict):
        return "$ref" in x or any(_refs(v) for v in x.values())
    return isinstance(x, list) and any(_refs(v) for v in x)


_BROKEN = st.sampled_from(
    [
        ("type", "strin"), ("type", []), ("type", ["string", "string"]), ("type", 3),
        ("enum", "x"), ("minLength", -1), ("minLength", 1.5), ("minLength", True),
        ("maxItems", "2"), ("minimum", "0"), ("minimum", None), ("pattern", "("),
        ("pattern", 3), ("required", ["a", "a"]), ("required", "a"), ("required", [1]),
        ("allOf", []), ("anyOf", {}), ("oneOf", [3]), ("properties", []),
        ("properties", {"a": 3}), ("items", "x"), ("additionalProperties", []),
        ("not", 1), ("uniqueItems", 1), ("title", 3), ("format", 3), ("$defs", {"d": 2}),
        ("examples", {}), ("deprecated", "yes"), ("dependentRequired", {"a": 3}),
        ("prefixItems", []), ("$id", "#frag"), ("definitions", {"d": 2}), ("x-any", object),
    ]
)  # fmt: skip


def _break(schema, at, draw):
    """``schema`` with one keyword set to an invalid (or unsupported) value at a random depth."""
    if isinstance(schema, dict) and draw(st.booleans()):
        subs = [k for k, v in schema.items() if isinstance(v, dict)]
        if subs:
            k = draw(st.sampled_from(subs))
            return {**schema, k: _break(schema[k], at, draw)}
    key, value = at
    if value is object:
        value = draw(_VALUES)
    base = schema if isinstance(schema, dict) else {}
    return {**base, key: value}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_SCHEMAS, data=st.data())
def test_a_plainly_valid_schema_passes_jsonschemas_check(schema, data):
    """Soundness: whatever ``plainly_valid_schema`` accepts, check_schema accepts, on random
    schemas and on schemas with a keyword broken anywhere; and the common schemas (no $ref)
    are accepted, so the check takes the fast path."""

    def valid(x) -> bool:
        try:
            jsonschema.Draft202012Validator.check_schema(x)
        except jsonschema.SchemaError:
            return False
        return True

    broken = _break(schema, data.draw(_BROKEN), data.draw)
    for x in (schema, broken):
        if predicate.plainly_valid_schema(x):
            assert valid(x), x
    if valid(schema) and not _refs(schema):
        assert predicate.plainly_valid_schema(schema), schema


def test_a_contract_that_is_no_schema_is_refused_in_jsonschemas_words(tmp_path):
    """The s3 spec's freeze-input contract is checked by the predicate; one with a broken
    keyword goes to jsonschema, which names it."""
    import re as _re

    from prereg.engines.clusterpower import spec_checks

    spec = _spec(ROOT / "spec" / "studies" / "s3-verifier-freeze.yaml")
    assert spec_checks.checks(spec) == []
    const = next(c for c in spec["constants"] if "contract" in (c.get("value") or {}))
    assert predicate.plainly_valid_schema(const["value"]["contract"])
    const["value"]["contract"]["properties"]["seeds"] = {"type": "lists"}
    found = [message for _pointer, message in spec_checks.checks(spec)]
    assert any(_re.search(r"not a valid JSON Schema: 'lists' is not valid", m) for m in found), (
        found
    )


def test_an_integer_range_bounds_integer_nodes_only():
    """``int_range`` bounds a value whose node's type is integer (as a validator whose integer
    type checks the range), not one that a number type admits as well."""
    from prereg.compiler.predicate import compile_schema

    accept = compile_schema(
        {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "x": {"type": ["integer", "number"]}},
        },
        draft="2020-12",
        integer_floats=False,
        int_range=(-(2**63), 2**63 - 1),
    )
    assert accept({"n": 2**63 - 1}) and accept({"n": -(2**63)})
    assert not accept({"n": 2**63}) and not accept({"n": -(2**63) - 1})
    assert accept({"x": 2**70})
    unbounded = compile_schema({"type": "integer"}, draft="2020-12", integer_floats=False)
    assert unbounded(2**70)
