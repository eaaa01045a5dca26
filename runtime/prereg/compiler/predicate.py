"""A JSON Schema compiled into a plain Python predicate, so that a spec that holds is accepted
without importing jsonschema (whose import, with the format libraries a development install
brings, costs a command about 0.14 s, and whose validation of a large spec about 0.07 s).

:func:`compile_schema` returns ``accepts(value) -> bool`` for a schema written with the keywords
below, or None when the schema uses anything else (then jsonschema does all the work, as it
always did).  ``accepts`` is *sound*: when it says True, jsonschema (the validator the compiler
uses for that schema) reports no error for the value.  When it says False, jsonschema validates
the value and words every problem, or finds none; so what is accepted is exactly what jsonschema
accepts, and every refusal reads as before.  A test checks both on the project's specs, the
malformed-spec corpus, random mutations of the specs and random schemas.

Values are what :mod:`prereg.compiler.load` builds (``str``, ``int``, ``float``, ``bool``,
``None``, ``list``, ``dict`` with string keys); a value of any other type is left to jsonschema.

Keywords (draft 2019-09 and 2020-12, where they mean the same): ``type``, ``enum``, ``const``,
``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``minLength``,
``maxLength``, ``pattern``, ``minItems``, ``maxItems``, ``uniqueItems``, ``minProperties``,
``maxProperties``, ``properties``, ``required``, ``additionalProperties``, ``items`` (one schema
for every item), ``allOf``, ``anyOf``, ``oneOf``, ``$ref`` to ``#/$defs/<name>`` (recursion
allowed), ``format: date`` (when formats are checked; any format when they are not) and boolean
schemas.  Annotations and keywords jsonschema does not know are ignored, as jsonschema ignores
them.  ``oneOf`` needs the count of valid branches, so its branches must be *exact* (True exactly
when valid): every keyword above is exact except ``uniqueItems`` and an ``enum`` or ``const`` of
arrays or objects.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

Predicate = Callable[[Any], bool]

#: Every keyword the draft 2019-09 and 2020-12 validators of jsonschema act on (a test checks
#: this against jsonschema); any other key is an annotation or unknown, which they ignore.
ASSERTING = frozenset(
    {
        "$dynamicRef",
        "$recursiveRef",
        "$ref",
        "additionalItems",
        "additionalProperties",
        "allOf",
        "anyOf",
        "const",
        "contains",
        "dependentRequired",
        "dependentSchemas",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "if",
        "items",
        "maxContains",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minContains",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "not",
        "oneOf",
        "pattern",
        "patternProperties",
        "prefixItems",
        "properties",
        "propertyNames",
        "required",
        "type",
        "unevaluatedItems",
        "unevaluatedProperties",
        "uniqueItems",
    }
)

DRAFTS = {
    "https://json-schema.org/draft/2019-09/schema": "2019-09",
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
}

_RE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)  # jsonschema's "date" format


class _Unsupported(Exception):
    pass


def _date(x: Any) -> bool:
    if type(x) is not str:
        return True
    if not _RE_DATE.fullmatch(x):
        return False
    try:
        datetime.date.fromisoformat(x)
    except ValueError:
        return False
    return True


def _frozen(x: Any):
    """A hashable key equal for two values exactly when jsonschema's ``equal`` says they are
    equal (strings, numbers with 1 == 1.0, booleans apart from numbers, null, arrays and
    objects by their members)."""
    t = type(x)
    if t is str:
        return ("s", x)
    if t is bool:
        return ("b", x)
    if t in (int, float):
        return ("n", x)
    if x is None:
        return ("z",)
    if t is list:
        return ("l", tuple(map(_frozen, x)))
    if t is dict:
        return ("d", frozenset((k, _frozen(v)) for k, v in x.items()))
    raise _Unsupported(t)


def _equal_to(member: Any) -> tuple[Predicate, bool]:
    """A check for ``x`` equal to an enum or const member (as jsonschema's ``equal``), and
    whether it is exact."""
    t = type(member)
    if t is str:
        return (lambda x, m=member: type(x) is str and x == m), True
    if t is bool or member is None:
        return (lambda x, m=member: x is m), True
    if t in (int, float):
        return (lambda x, m=member: type(x) in (int, float) and x == m), True
    if t in (list, dict):
        key = _frozen(member)

        def same(x: Any, key=key) -> bool:
            try:
                return _frozen(x) == key
            except _Unsupported:
                return False

        return same, False
    raise _Unsupported(f"enum member {member!r}")


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}


class _Compiler:
    def __init__(
        self,
        root: Any,
        *,
        draft: str,
        integer_floats: bool,
        formats: bool,
        int_range: tuple[int, int] | None = None,
    ):
        self.int_range = int_range
        self.root = root
        self.draft = draft
        self.integer_floats = integer_floats
        self.formats = formats
        self.defs: dict[str, list] = {}  # $defs name -> [predicate] (filled once compiled)

    # -- references ---------------------------------------------------------------------------

    def _target(self, ref: Any) -> tuple[str, Any]:
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise _Unsupported(f"$ref {ref!r}")
        name = ref[len("#/$defs/") :]
        defs = self.root.get("$defs") if isinstance(self.root, dict) else None
        if not name or "/" in name or "~" in name or "%" in name or not isinstance(defs, dict):
            raise _Unsupported(f"$ref {ref!r}")
        if name not in defs:
            raise _Unsupported(f"$ref {ref!r} resolves to nothing")
        return name, defs[name]

    def ref(self, ref: Any) -> Predicate:
        name, target = self._target(ref)
        cell = self.defs.get(name)
        if cell is None:
            cell = self.defs[name] = [None]
            cell[0] = self.node(target)
        if cell[0] is not None:
            return cell[0]
        return lambda x, cell=cell: cell[0](x)  # a reference inside its own definition

    def exact(self, node: Any, seen: set[str]) -> bool:
        """Whether the predicate of ``node`` is True exactly when ``node`` holds."""
        if isinstance(node, bool):
            return True
        if not isinstance(node, dict):
            raise _Unsupported("a schema must be an object or a boolean")
        for key, v in node.items():
            if key not in ASSERTING:
                continue
            if key == "uniqueItems" and v is True:
                return False
            if key == "enum" and any(type(m) in (list, dict) for m in v):
                return False
            if key == "const" and type(v) in (list, dict):
                return False
            if key == "$ref":
                name, target = self._target(v)
                if name not in seen:
                    seen.add(name)
                    if not self.exact(target, seen):
                        return False
            elif key in ("properties",):
                if not all(self.exact(s, seen) for s in v.values()):
                    return False
            elif key in ("additionalProperties", "items"):
                if not self.exact(v, seen):
                    return False
            elif key in ("allOf", "anyOf", "oneOf"):
                if not all(self.exact(s, seen) for s in v):
                    return False
        return True

    # -- one schema ---------------------------------------------------------------------------

    def node(self, node: Any) -> Predicate:
        if node is True:
            return _always
        if node is False:
            return _never
        if not isinstance(node, dict):
            raise _Unsupported("a schema must be an object or a boolean")
        if "$id" in node and node is not self.root:
            raise _Unsupported("$id below the root changes how references resolve")
        checks: list[Predicate] = []
        if any(k in node for k in _MEMBERS):
            checks.append(self.members(node))
        for key, v in node.items():
            if key in ASSERTING and key != "type" and key not in _MEMBERS:
                checks.append(self.keyword(key, v, node))
        checks = [c for c in checks if c is not _always]
        if "type" not in node:
            return _all(checks)
        types, integral_floats = self.types(node["type"])
        names = [node["type"]] if isinstance(node["type"], str) else node["type"]
        if self.int_range is not None and "integer" in names and "number" not in names:
            lo, hi = self.int_range
            checks.append(lambda x: type(x) is not int or lo <= x <= hi)
        if integral_floats:  # jsonschema's integer: an int, or a float that is integral

            def typed(x: Any, t=types) -> bool:
                return type(x) in t or (type(x) is float and x.is_integer())

            return _all([typed, *checks])
        if not checks:
            if len(types) == 1:
                (only,) = types
                return lambda x: type(x) is only
            return lambda x: type(x) in types
        if len(checks) == 1:
            (check,) = checks
            return lambda x: type(x) in types and check(x)
        rest = tuple(checks)
        return lambda x: type(x) in types and all(c(x) for c in rest)

    def types(self, v: Any) -> tuple[frozenset, bool]:
        """The Python types of a ``type`` keyword, and whether integral floats count too."""
        names = [v] if isinstance(v, str) else v
        if not isinstance(names, list) or not names:
            raise _Unsupported(f"type {v!r}")
        out: set[type] = set()
        integral_floats = False
        for n in names:
            if not isinstance(n, str) or n not in _PYTHON_TYPES:
                raise _Unsupported(f"type {n!r}")
            out.update(_PYTHON_TYPES[n])
            integral_floats |= n == "integer" and self.integer_floats
        return frozenset(out), integral_floats and float not in out

    def keyword(self, key: str, v: Any, node: dict) -> Predicate:
        if key == "enum":
            if not isinstance(v, list):
                raise _Unsupported("enum must be an array")
            if all(type(m) is str for m in v):
                allowed = frozenset(v)
                return lambda x, a=allowed: type(x) is str and x in a
            return _any([_equal_to(m)[0] for m in v])
        if key == "const":
            return _equal_to(v)[0]
        if key in _BOUNDS:
            if type(v) not in (int, float):
                raise _Unsupported(f"{key} {v!r}")
            op = _BOUNDS[key]
            return lambda x, b=v, op=op: type(x) not in (int, float) or op(x, b)
        if key in (
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
        ):
            if type(v) is not int:
                raise _Unsupported(f"{key} {v!r}")
            kind = {"L": str, "I": list, "P": dict}[key[3]]
            if key.startswith("min"):
                return lambda x, n=v, k=kind: type(x) is not k or len(x) >= n
            return lambda x, n=v, k=kind: type(x) is not k or len(x) <= n
        if key == "pattern":
            if not isinstance(v, str):
                raise _Unsupported(f"pattern {v!r}")
            try:
                rx = re.compile(v)
            except re.error:
                raise _Unsupported(f"pattern {v!r}") from None
            return lambda x, rx=rx: type(x) is not str or rx.search(x) is not None
        if key == "uniqueItems":
            if type(v) is not bool:
                raise _Unsupported(f"uniqueItems {v!r}")
            return _unique if v else _always
        if key == "items":
            if "prefixItems" in node or "additionalItems" in node:
                raise _Unsupported("items beside prefixItems or additionalItems")
            if isinstance(v, list):
                raise _Unsupported("items as an array")
            item = self.node(v)
            return lambda x, f=item: type(x) is not list or all(map(f, x))
        if key == "$ref":
            return self.ref(v)
        if key in ("allOf", "anyOf", "oneOf"):
            if not isinstance(v, list) or not v:
                raise _Unsupported(f"{key} must be a non-empty array")
            subs = [self.node(s) for s in v]
            if key == "allOf":
                return _all(subs)
            if key == "anyOf":
                return _any(subs)
            if not all(self.exact(s, set()) for s in v):
                raise _Unsupported("oneOf over a branch whose predicate is not exact")
            return lambda x, subs=tuple(subs): sum(1 for f in subs if f(x)) == 1
        if key == "format":
            if not self.formats:
                return _always  # the validator has no format checker: an annotation
            if v == "date":
                return _date
            raise _Unsupported(f"format {v!r}")
        raise _Unsupported(f"keyword {key}")

    def members(self, node: dict) -> Predicate:
        """properties, required and additionalProperties as one check of an object."""
        if "patternProperties" in node:
            raise _Unsupported("patternProperties")
        props = node.get("properties", {})
        required = node.get("required", [])
        extra = node.get("additionalProperties", True)
        if not isinstance(props, dict) or not isinstance(required, list):
            raise _Unsupported("properties or required")
        if not all(type(r) is str for r in required):
            raise _Unsupported("required")
        fields = {name: self.node(sub) for name, sub in props.items()}
        need = frozenset(required)
        closed = extra is False
        extra_f = None if isinstance(extra, bool) else self.node(extra)
        get = fields.get

        def members(x: Any) -> bool:
            if type(x) is not dict:
                return True
            if need and not x.keys() >= need:
                return False
            for k, v in x.items():
                f = get(k)
                if f is None:
                    if closed or (extra_f is not None and not extra_f(v)):
                        return False
                elif not f(v):
                    return False
            return True

        return members


_MEMBERS = ("properties", "required", "additionalProperties")

_BOUNDS = {
    "minimum": lambda x, b: x >= b,
    "maximum": lambda x, b: x <= b,
    "exclusiveMinimum": lambda x, b: x > b,
    "exclusiveMaximum": lambda x, b: x < b,
}


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False


def _unique(x: Any) -> bool:
    if type(x) is not list:
        return True
    try:
        return len(set(map(_frozen, x))) == len(x)
    except _Unsupported:
        return False


def _all(preds: list[Predicate]) -> Predicate:
    preds = [p for p in preds if p is not _always]
    if not preds:
        return _always
    if len(preds) == 1:
        return preds[0]
    if len(preds) == 2:
        a, b = preds
        return lambda x: a(x) and b(x)
    t = tuple(preds)
    return lambda x: all(p(x) for p in t)


def _any(preds: list[Predicate]) -> Predicate:
    if len(preds) == 1:
        return preds[0]
    t = tuple(preds)
    return lambda x: any(p(x) for p in t)


def compile_schema(
    schema: Any,
    *,
    draft: str | None = None,
    integer_floats: bool = True,
    formats: bool = True,
    int_range: tuple[int, int] | None = None,
) -> Predicate | None:
    """``accepts(value)`` for ``schema`` (see the module's description), or None.

    ``draft`` is "2019-09" or "2020-12" (default: the schema's ``$schema``; any other draft has
    no predicate); ``integer_floats`` says whether the validator counts 1.0 as an integer
    (jsonschema's default) or only Python ints (prereg's engine schemas); ``formats`` whether it
    checks formats; ``int_range`` (lowest, highest) bounds a value of a node whose type is
    integer and not number, as a validator whose integer type checks the range does.
    """
    if draft is None:
        draft = DRAFTS.get(schema.get("$schema")) if isinstance(schema, dict) else None
    if draft not in ("2019-09", "2020-12"):
        return None
    try:
        compiler = _Compiler(
            schema,
            draft=draft,
            integer_floats=integer_floats,
            formats=formats,
            int_range=int_range,
        )
        return compiler.node(schema)
    except (_Unsupported, TypeError, AttributeError, RecursionError):
        return None


# -- a schema that is plainly a valid draft 2020-12 schema -------------------------------------

#: Every keyword the draft 2020-12 metaschema (with its vocabularies) constrains; any other key
#: of a schema object is unconstrained there (a test checks this list against jsonschema's).
METASCHEMA_KEYWORDS = ASSERTING | frozenset(
    {
        "$anchor", "$comment", "$defs", "$dynamicAnchor", "$id", "$recursiveAnchor", "$schema",
        "$vocabulary", "contentEncoding", "contentMediaType", "contentSchema", "default",
        "definitions", "dependencies", "deprecated", "description", "else", "examples", "then",
        "readOnly", "title", "writeOnly",
    }
)  # fmt: skip
_META_SIMPLE_TYPES = frozenset(
    ("array", "boolean", "integer", "null", "number", "object", "string")
)
_META_COUNTS = frozenset(
    ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")
)
_META_BOUNDS = frozenset(("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"))
_META_TEXTS = frozenset(("title", "description", "$comment", "format"))
_META_FLAGS = frozenset(("uniqueItems", "deprecated", "readOnly", "writeOnly"))
_META_FREE = frozenset(("const", "default"))
_META_SCHEMA_LISTS = frozenset(("allOf", "anyOf", "oneOf"))
_META_SCHEMAS = frozenset(("items", "additionalProperties", "not"))


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _unique_strings(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(s, str) for s in x) and len(set(x)) == len(x)


def plainly_valid_schema(schema: Any, _depth: int = 0) -> bool:
    """True only when ``jsonschema.Draft202012Validator.check_schema(schema)`` passes, for a
    schema written with the common keywords (``type``, ``enum``, ``const``, ``properties``,
    ``required``, ``additionalProperties``, ``items``, the bounds and counts, ``pattern``,
    ``uniqueItems``, ``allOf``/``anyOf``/``oneOf``, ``not``, ``$defs`` and the annotations);
    False when it cannot say (another metaschema keyword, a value of another shape, an
    invalid regular expression), and the caller asks jsonschema.  Values are what JSON or
    :mod:`prereg.compiler.load` builds."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or _depth > 64:
        return False
    for key, v in schema.items():
        if not isinstance(key, str):
            return False
        if key not in METASCHEMA_KEYWORDS or key in _META_FREE:
            continue
        if key == "type":
            if isinstance(v, str):
                ok = v in _META_SIMPLE_TYPES
            else:
                ok = (
                    isinstance(v, list)
                    and bool(v)
                    and all(isinstance(t, str) and t in _META_SIMPLE_TYPES for t in v)
                    and len(set(v)) == len(v)
                )
        elif key == "enum":
            ok = isinstance(v, list)
        elif key in _META_COUNTS:
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
        elif key in _META_BOUNDS:
            ok = _number(v)
        elif key in _META_TEXTS:
            ok = isinstance(v, str)
        elif key in _META_FLAGS:
            ok = isinstance(v, bool)
        elif key == "examples":
            ok = isinstance(v, list)
        elif key == "required":
            ok = _unique_strings(v)
        elif key == "pattern":
            ok = isinstance(v, str) and _compiles(v)
        elif key in _META_SCHEMAS:
            ok = plainly_valid_schema(v, _depth + 1)
        elif key in _META_SCHEMA_LISTS:
            ok = (
                isinstance(v, list)
                and bool(v)
                and all(plainly_valid_schema(s, _depth + 1) for s in v)
            )
        elif key in ("properties", "$defs"):
            ok = isinstance(v, dict) and all(
                plainly_valid_schema(s, _depth + 1) for s in v.values()
            )
        else:
            return False
        if not ok:
            return False
    return True


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True
