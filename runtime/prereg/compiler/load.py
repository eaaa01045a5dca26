"""Safe YAML loading with source positions.

Specs are read with a YAML 1.2-like resolver (only ``true``/``false`` are booleans, so a level
called ``yes`` or ``no`` stays a string; dates stay strings), no tags that build objects,
duplicate keys refused, merge keys refused, and alias expansion bounded.  Each value's
JSON pointer is mapped to its line so that every error can name ``file:line``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
import yaml.cyaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from prereg.errors import UserError
from prereg.files import read_regular
from prereg.records import MAX_SAFE_INTEGER, imprecise_number, integer_out_of_range, not_utf8

MAX_NODES = 200_000
#: How deep values may nest (the deepest shipped spec nests 15 levels): deeper documents, by
#: brackets or by a chain of aliases, are refused before anything recurses through them.
MAX_DEPTH = 64
STD = "tag:yaml.org,2002:"


class _Resolver(yaml.resolver.BaseResolver):
    pass


_Resolver.add_implicit_resolver(
    STD + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Resolver.add_implicit_resolver(
    STD + "int",
    re.compile(
        r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"
    ),
    list("-+0123456789"),
)
_Resolver.add_implicit_resolver(
    STD + "float",
    re.compile(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
        r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Resolver.add_implicit_resolver(
    STD + "null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Resolver.add_implicit_resolver(STD + "merge", re.compile(r"^(?:<<)$"), ["<"])

# BaseResolver.resolve, specialised (it runs for every key and value): this resolver has no
# path resolvers, so descending and ascending do nothing and a plain scalar's tag is found
# from its first character alone (a test compares it with BaseResolver.resolve).
assert not _Resolver.yaml_path_resolvers
_WILDCARD = tuple(_Resolver.yaml_implicit_resolvers.get(None, ()))
_BY_FIRST = {
    first: (*resolvers, *_WILDCARD)
    for first, resolvers in _Resolver.yaml_implicit_resolvers.items()
    if first is not None
}


def _resolve(self, kind, value, implicit):
    if kind is ScalarNode:
        if implicit[0]:
            for tag, regexp in _BY_FIRST.get(value[:1], _WILDCARD):
                if regexp.match(value):
                    return tag
        return _Resolver.DEFAULT_SCALAR_TAG
    if kind is SequenceNode:
        return _Resolver.DEFAULT_SEQUENCE_TAG
    if kind is MappingNode:
        return _Resolver.DEFAULT_MAPPING_TAG
    return None


def _no_path_resolvers(self, *args):
    return None


_Resolver.resolve = _resolve
_Resolver.descend_resolver = _no_path_resolvers
_Resolver.ascend_resolver = _no_path_resolvers


class _Loader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    yaml.constructor.SafeConstructor,
    _Resolver,
):
    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        _Resolver.__init__(self)


if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(yaml.cyaml.CParser, yaml.constructor.SafeConstructor, _Resolver):
        """The same loader on libyaml's parser (several times faster)."""

        def __init__(self, stream):
            yaml.cyaml.CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            _Resolver.__init__(self)

    _LOADER = _CLoader
else:  # pragma: no cover - PyYAML wheels ship libyaml
    _LOADER = _Loader


class Loaded:
    """A parsed spec: its data and where each JSON pointer starts in the file.

    ``lines`` (``{json pointer: line}``) is worked out from the parsed nodes when first asked
    for: a spec that holds is never asked where anything is.
    """

    __slots__ = ("path", "data", "_lines", "_keys", "_root")

    def __init__(self, path: Path, data: Any, lines: dict[str, int] | None = None, *, root=None):
        self.path = path
        self.data = data
        self._lines = lines
        self._keys: dict[str, tuple[int, int]] = {}
        self._root = root

    @property
    def lines(self) -> dict[str, int]:
        if self._lines is None:
            self._lines = {}
            if self._root is not None:
                _line_map(self._root, "", self._lines, self._keys)
            self._root = None
        return self._lines

    def key_at(self, pointer: str) -> tuple[int, int] | None:
        """(line, column), both from 1, where the key of the mapping entry ``pointer`` is
        written; None for the root, a list item or a spec built without its nodes."""
        self.lines  # noqa: B018 (works the positions out on first use)
        return self._keys.get(pointer)

    def __repr__(self) -> str:
        return f"Loaded(path={self.path!r})"

    def line_of(self, pointer: str) -> int | None:
        """The line of ``pointer`` or of its nearest ancestor that has one."""
        lines = self.lines
        p = pointer
        while True:
            if p in lines:
                return lines[p]
            if not p:
                return None
            p = p.rsplit("/", 1)[0]

    def where(self, pointer: str) -> str:
        line = self.line_of(pointer)
        return f"{self.path}:{line}" if line else str(self.path)


def _line_map(
    node: Node, pointer: str, lines: dict[str, int], keys: dict[str, tuple[int, int]]
) -> None:
    """The line of every value of a built document, by JSON pointer, and the line and column
    of every mapping key (the nodes the builder accepted: no tags, merge keys or duplicates
    left to refuse)."""
    lines.setdefault(pointer, node.start_mark.line + 1)
    if isinstance(node, SequenceNode):
        for i, n in enumerate(node.value):
            _line_map(n, f"{pointer}/{i}", lines, keys)
    elif isinstance(node, MappingNode):
        for knode, vnode in node.value:
            at = f"{pointer}/{_escape(knode.value)}"
            keys.setdefault(at, (knode.start_mark.line + 1, knode.start_mark.column + 1))
            _line_map(vnode, at, lines, keys)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _control_message(text: str) -> str | None:
    m = _CONTROL.search(text)
    if m is None:
        return None
    return (
        f"control character U+{ord(m.group()):04X} at position {m.start()} is not allowed in a"
        " spec string (only newline and tab are)"
    )


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


_STR, _SEQ, _MAP, _INT, _FLOAT = (STD + t for t in ("str", "seq", "map", "int", "float"))
_BOOL, _NULL, _MERGE = STD + "bool", STD + "null", STD + "merge"


class _Builder:
    def __init__(self, loader: _Loader, path: Path):
        self.loader = loader
        self.path = path
        self.count = 0
        self.depth = 0
        self.open: set[int] = set()  # the collections being built (an alias to one is a cycle)

    def fail(self, node: Node, message: str) -> UserError:
        return UserError(f"{self.path}:{node.start_mark.line + 1}: {message}")

    def build(self, node: Node) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"document expands to more than {MAX_NODES} values (alias bomb?)")
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if id(node) in self.open:
            raise self.fail(node, "an alias refers to a value that contains it (a cycle)")
        if self.depth >= MAX_DEPTH:
            raise self.fail(node, f"values nest more than {MAX_DEPTH} levels deep")
        self.open.add(id(node))
        self.depth += 1
        try:
            return self.collection(node)
        finally:
            self.depth -= 1
            self.open.discard(id(node))

    def collection(self, node: Node) -> Any:
        tag = node.tag or ""
        if isinstance(node, SequenceNode):
            if tag != _SEQ:
                raise self.fail(node, f"tag {tag!r} is not allowed in a spec")
            build = self.build
            return [build(n) for n in node.value]
        if isinstance(node, MappingNode):
            if tag != _MAP:
                raise self.fail(node, f"tag {tag!r} is not allowed in a spec")
            out: dict[str, Any] = {}
            for knode, vnode in node.value:
                if knode.tag == _MERGE:
                    raise self.fail(knode, "merge keys (<<) are not allowed in a spec")
                if not isinstance(knode, ScalarNode):
                    raise self.fail(knode, "mapping keys must be plain strings")
                key = knode.value
                if _CONTROL.search(key):
                    raise self.fail(knode, _control_message(key))
                if key in out:
                    raise self.fail(knode, f"duplicate key {key!r}")
                out[key] = self.build(vnode)
            return out
        raise self.fail(node, "unsupported YAML node")  # pragma: no cover

    def scalar(self, node: ScalarNode) -> Any:
        tag = node.tag
        if tag == _STR:
            if _CONTROL.search(node.value):
                raise self.fail(node, _control_message(node.value))
            return node.value
        if tag == _INT:
            text = node.value
            if len(text) <= 15 and text.isascii() and text.isdigit():
                if text[0] != "0" or text == "0":  # a plain decimal below 2^53, as
                    return int(text)  # construct_yaml_int reads it
            digits = text.lstrip("+-").replace("_", "")
            if len(digits) > 1 and digits[0] == "0" and digits.isdigit():
                sign = "-" if text.startswith("-") else ""
                raise self.fail(
                    node,
                    f"integer {text} has a leading zero: YAML 1.1 reads it as octal"
                    f" ({sign}{int(digits, 8)}), YAML 1.2 as {sign}{int(digits)}; write"
                    f" {sign}{int(digits)} (or 0o... for octal)",
                )
            if len(digits) > 20:
                raise self.fail(node, f"integer {text[:24]}… is too large (more than 20 digits)")
            value = self.loader.construct_object(node)
            if abs(value) > MAX_SAFE_INTEGER:
                raise self.fail(node, integer_out_of_range(text))
            return value
        if tag == _NULL:
            return None  # construct_yaml_null
        if tag == _BOOL:
            return self.loader.bool_values[node.value.lower()]  # construct_yaml_bool
        if tag == _FLOAT:
            value = self.loader.construct_object(node)
            if not math.isfinite(value):
                raise self.fail(node, f"non-finite number {node.value!r} is not allowed")
            mantissa = node.value.lower().partition("e")[0]
            if value == 0 and any(c in "123456789" for c in mantissa):
                shown = node.value if len(node.value) <= 40 else node.value[:40] + "…"
                raise self.fail(
                    node,
                    f"number {shown!r} is below the smallest double (about 5e-324) and reads as"
                    " 0: a threshold is decided as written, so write 0 or a number a double"
                    " holds",
                )
            problem = imprecise_number(node.value.replace("_", ""), value, spec=True)
            if problem is not None:  # a threshold is decided as the decimal written
                raise self.fail(node, problem)
            return value
        raise self.fail(node, f"tag {tag!r} is not allowed in a spec")


#: NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR: line breaks to YAML 1.1, not to an editor.
_YAML_BREAK = re.compile("[\x85\u2028\u2029]")


def load_yaml_text(text: str, path: Path) -> Loaded:
    """Parse one YAML document from ``text`` (reported as ``path``)."""
    if text[:1] == "\ufeff":  # YAML skips it; every reader of the project refuses it
        from prereg.records import BOM_WORDS

        raise UserError(f"{path}:1: {BOM_WORDS}")
    breaks = _YAML_BREAK.search(text)
    if breaks is not None:  # YAML counts lines by them (and folds them in quoted text)
        at = breaks.start()
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        raise UserError(
            f"{path}:{line}: character U+{ord(breaks.group()):04X} at column {column} is a line"
            " break to YAML but not to an editor or a diff; not allowed in a spec (lines end"
            " with LF)"
        )
    loader = _LOADER(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise UserError(f"{path}{line}: invalid YAML: {exc.problem or exc.context}") from None
        except yaml.reader.ReaderError as exc:  # a character YAML never takes (a raw NUL)
            raise UserError(_reader_problem(path, text, exc)) from None
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: invalid YAML: {exc}") from None
        if node is None:
            raise UserError(f"{path}: the file is empty")
        data = _Builder(loader, path).build(node)
        return Loaded(path=path, data=data, root=node)
    finally:
        loader.dispose()


def _reader_problem(path: Path, text: str, exc) -> str:
    """The message for a character the YAML reader refuses (a raw NUL, say): its error gives
    an offset into the text, not a line, so the line and column are worked out here."""
    at = exc.position if isinstance(exc.position, int) else None
    if at is None or not 0 <= at <= len(text):
        return f"{path}: invalid YAML: {exc.reason}"
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    ch = exc.character
    code = ch if isinstance(ch, int) else ord(ch[:1]) if ch else None
    what = f"character U+{code:04X}" if code is not None else "a character"
    return f"{path}:{line}: invalid YAML: {what} at column {column}: {exc.reason}"


#: The largest spec file read (about a hundred times the largest study here): a spec of
#: hundreds of megabytes took its size many times over in memory, and wrote it into PREREG.md.
MAX_SPEC_BYTES = 8 << 20


def read_spec_bytes(path: Path, shown: Path) -> bytes:
    """A spec file's bytes (a regular file of at most :data:`MAX_SPEC_BYTES`); errors name it
    as ``shown``."""
    try:
        raw = read_regular(path, most=MAX_SPEC_BYTES)
    except OSError as exc:
        raise UserError(f"{shown}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise UserError(
            f"{shown}: more than {MAX_SPEC_BYTES >> 20} MiB; a spec is at most"
            f" {MAX_SPEC_BYTES >> 20} MiB"
        )
    return raw


def load_yaml_bytes(raw: bytes, shown: Path) -> Loaded:
    """Parse a spec file's bytes (UTF-8); errors name it as ``shown``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{shown}: {not_utf8(raw, exc.start)}") from None
    return load_yaml_text(text, shown)


def load_yaml(path: Path, display: Path | None = None) -> Loaded:
    """Read and parse a spec file; errors name it as ``display`` (default: ``path``)."""
    shown = display if display is not None else path
    return load_yaml_bytes(read_spec_bytes(path, shown), shown)
