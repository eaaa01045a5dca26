"""The spec loader's faster resolver and builder read every document exactly as the reference
loader does (PyYAML's BaseResolver.resolve, and the builder that recorded each value's line as
it went, kept below as it was): the same data, value types included, the same line of every
JSON pointer, and the same refusal, on the project's specs, the language source, the
malformed-spec corpus and random documents."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml.cyaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from prereg.compiler import load
from prereg.errors import UserError
from tests.conftest import ROOT


class _ReferenceResolver(yaml.resolver.BaseResolver):
    yaml_implicit_resolvers = load._Resolver.yaml_implicit_resolvers  # the same rules


class _ReferenceLoader(yaml.cyaml.CParser, yaml.constructor.SafeConstructor, _ReferenceResolver):
    def __init__(self, stream):
        yaml.cyaml.CParser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        _ReferenceResolver.__init__(self)


STD = load.STD


class _ReferenceBuilder:
    """The builder as it was before lines were worked out on demand."""

    def __init__(self, loader, path: Path):
        self.loader = loader
        self.path = path
        self.count = 0
        self.lines: dict[str, int] = {}

    def fail(self, node: Node, message: str) -> UserError:
        return UserError(f"{self.path}:{node.start_mark.line + 1}: {message}")

    def build(self, node: Node, pointer: str, within: tuple = ()) -> Any:
        self.count += 1
        if self.count > load.MAX_NODES:
            raise self.fail(
                node, f"document expands to more than {load.MAX_NODES} values (alias bomb?)"
            )
        self.lines.setdefault(pointer, node.start_mark.line + 1)
        tag = node.tag or ""
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        # the collections this one is inside: itself among them is a cycle; more than
        # MAX_DEPTH of them is too deep
        if any(node is outer for outer in within):
            raise self.fail(node, "an alias refers to a value that contains it (a cycle)")
        if len(within) == load.MAX_DEPTH:
            raise self.fail(node, f"values nest more than {load.MAX_DEPTH} levels deep")
        within = (*within, node)
        if isinstance(node, SequenceNode):
            if tag != STD + "seq":
                raise self.fail(node, f"tag {tag!r} is not allowed in a spec")
            return [self.build(n, f"{pointer}/{i}", within) for i, n in enumerate(node.value)]
        if isinstance(node, MappingNode):
            if tag != STD + "map":
                raise self.fail(node, f"tag {tag!r} is not allowed in a spec")
            out: dict[str, Any] = {}
            for knode, vnode in node.value:
                if knode.tag == STD + "merge":
                    raise self.fail(knode, "merge keys (<<) are not allowed in a spec")
                if not isinstance(knode, ScalarNode):
                    raise self.fail(knode, "mapping keys must be plain strings")
                key = knode.value
                bad = load._control_message(key)
                if bad:
                    raise self.fail(knode, bad)
                if key in out:
                    raise self.fail(knode, f"duplicate key {key!r}")
                out[key] = self.build(vnode, f"{pointer}/{load._escape(key)}", within)
            return out
        raise self.fail(node, "unsupported YAML node")

    def scalar(self, node: ScalarNode) -> Any:
        tag = node.tag
        if tag == STD + "str":
            bad = load._control_message(node.value)
            if bad:
                raise self.fail(node, bad)
            return node.value
        if tag == STD + "int":
            digits = node.value.lstrip("+-").replace("_", "")
            if re.fullmatch(r"0[0-9]+", digits):  # octal to YAML 1.1, decimal to YAML 1.2
                sign = node.value[:1] if node.value[:1] == "-" else ""
                as_octal, as_decimal = int(digits, 8), int(digits, 10)
                raise self.fail(
                    node,
                    f"integer {node.value} has a leading zero: YAML 1.1 reads it as octal"
                    f" ({sign}{as_octal}), YAML 1.2 as {sign}{as_decimal}; write"
                    f" {sign}{as_decimal} (or 0o... for octal)",
                )
            if len(digits) > 20:
                raise self.fail(
                    node, f"integer {node.value[:24]}… is too large (more than 20 digits)"
                )
            value = self.loader.construct_object(node)
            if abs(value) > load.MAX_SAFE_INTEGER:
                raise self.fail(
                    node,
                    f"integer {node.value} is outside ±(2^53 − 1), which JSON does not carry exactly",
                )
            return value
        if tag in (STD + "bool", STD + "null"):
            return self.loader.construct_object(node)
        if tag == STD + "float":
            value = self.loader.construct_object(node)
            if not math.isfinite(value):
                raise self.fail(node, f"non-finite number {node.value!r} is not allowed")
            return value
        raise self.fail(node, f"tag {tag!r} is not allowed in a spec")


def _reference(text: str, path: Path):
    # refused before parsing (tests/hostile/test_line_endings_and_bom.py): a byte-order mark,
    # and the characters YAML takes as line breaks but an editor does not
    if text.startswith("\ufeff"):
        raise UserError(
            f"{path}:1: starts with a byte-order mark (U+FEFF); save it as UTF-8 without BOM"
        )
    at = min((text.find(c) for c in "\x85\u2028\u2029" if c in text), default=-1)
    if at >= 0:
        before = text[:at]
        line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
        raise UserError(
            f"{path}:{line}: character U+{ord(text[at]):04X} at column {column} is a line"
            " break to YAML but not to an editor or a diff; not allowed in a spec (lines end"
            " with LF)"
        )
    loader = _ReferenceLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise UserError(f"{path}{line}: invalid YAML: {exc.problem or exc.context}") from None
        except yaml.reader.ReaderError as exc:  # a character YAML never takes: its line
            before = text[: exc.position]
            line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
            code = ord(exc.character) if isinstance(exc.character, str) else exc.character
            raise UserError(
                f"{path}:{line}: invalid YAML: character U+{code:04X} at column"
                f" {column}: {exc.reason}"
            ) from None
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: invalid YAML: {exc}") from None
        if node is None:
            raise UserError(f"{path}: the file is empty")
        builder = _ReferenceBuilder(loader, path)
        return builder.build(node, ""), builder.lines
    finally:
        loader.dispose()


def _typed(value):
    """The value with every scalar's type beside it (True == 1 and 1 == 1.0 in Python)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _outcome(fn):
    try:
        return "ok", fn()
    except UserError as exc:
        return "refused", exc.lines()
    except Exception as exc:  # noqa: BLE001 - the same failure either way
        return "raised", type(exc).__name__


def _same(text: str) -> None:
    path = Path("doc.yaml")

    def new():
        loaded = load.load_yaml_text(text, path)
        return _typed(loaded.data), dict(loaded.lines)

    def old():
        data, lines = _reference(text, path)
        return _typed(data), lines

    assert _outcome(new) == _outcome(old)


DOCUMENTS = sorted(
    [
        *(ROOT / "spec" / "studies").glob("*.yaml"),
        ROOT / "spec" / "prereg.linkml.yaml",
        *(ROOT / "examples").glob("*/spec/studies/*.yaml"),
        *(ROOT / "tests" / "compiler" / "bad").glob("*.yaml"),
    ]
)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.stem)
def test_project_documents_load_as_the_reference_loads_them(path):
    _same(path.read_text(encoding="utf-8"))


SCALARS = [
    "0", "00", "07", "08", "0x1F", "0o17", "0b101", "1_000", "+5", "-0", "-12", "1:30",
    "123456789012345", "1234567890123456", "9007199254740993", "123456789012345678901",
    "1e3", "1.5e-3", ".5", "-.5", "1.", ".inf", "-.Inf", ".nan", "1_0.5",
    "true", "True", "TRUE", "tRue", "false", "yes", "no", "on", "~", "null", "Null", "",
    "'quoted 1'", '"2"', "a: b", "<<", "２", "١٢", "x\u0085y", "é", "!!bool yes", "!!bool maybe",
    "!!int 0x10", "!!int 1:20", "!!float 3", "!!str 5", "!!null ''", "!!binary aGk=", "!foo x",
    "\"a\\x1bb\"", "\"\\x85\"", "\"\\t\"",
]  # fmt: skip


@pytest.mark.parametrize("scalar", SCALARS)
def test_scalars_load_as_the_reference_loads_them(scalar):
    _same(f"a: {scalar}\nb: [{scalar}]\n{scalar}: 1\n")


def test_the_resolver_resolves_as_base_resolver_does():
    fast = load._Resolver()
    reference = _ReferenceResolver()
    values = [*SCALARS, "", "yes", "-", "+", ".", "0b", "<<<", "~x", "nullx"]
    values += [chr(c) + "1" for c in range(32, 127)]
    for value in values:
        for implicit in [(True, False), (False, True), (True, True), (False, False)]:
            assert fast.resolve(ScalarNode, value, implicit) == reference.resolve(
                ScalarNode, value, implicit
            )
    for kind in (SequenceNode, MappingNode):
        assert fast.resolve(kind, None, (True, False)) == reference.resolve(
            kind, None, (True, False)
        )


_KEY = st.sampled_from(["id", "a/b", "c~d", "0", "x y", "levels", "é"])
_SCALAR = st.one_of(
    st.sampled_from(SCALARS),
    st.integers(-(2**60), 2**60).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="ab0-. :\t#'\"\\", max_size=6),
)
_TREE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEY, inner, max_size=4)),
    max_leaves=20,
)


def _render(value, indent: int = 0) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "\n" + "\n".join(f"{pad}{k}: {_render(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return "[]"
        return "\n" + "\n".join(f"{pad}- {_render(v, indent + 2).lstrip(chr(10))}" for v in value)
    return value


@settings(max_examples=300, deadline=None)
@given(tree=st.dictionaries(_KEY, _TREE, min_size=1, max_size=5), style=st.booleans())
def test_random_documents_load_as_the_reference_loads_them(tree, style):
    """Hand-written block YAML (scalars as written, so that the resolver sees every form) and
    PyYAML's own rendering of the same tree with anchors and aliases."""
    if style:
        text = _render(tree).lstrip("\n") + "\n"
    else:
        shared = [1, "x"]
        text = yaml.safe_dump({"tree": tree, "a": shared, "b": shared}, default_flow_style=None)
    _same(text)
