"""Safe YAML loading with source positions.

Specs are read with a YAML 1.2-like resolver (only ``true``/``false`` are booleans, so a level
called ``yes`` or ``no`` stays a string; dates stay strings), no tags that build objects,
duplicate keys refused, merge keys refused, and alias expansion bounded.  Each value's
JSON pointer is mapped to its line so that every error can name ``file:line``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
import yaml.cyaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from prereg.errors import UserError
from prereg.files import read_regular

MAX_NODES = 200_000
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


@dataclass
class Loaded:
    """A parsed spec: its data and where each JSON pointer starts in the file."""

    path: Path
    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, pointer: str) -> int | None:
        """The line of ``pointer`` or of its nearest ancestor that has one."""
        p = pointer
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return None
            p = p.rsplit("/", 1)[0]

    def where(self, pointer: str) -> str:
        line = self.line_of(pointer)
        return f"{self.path}:{line}" if line else str(self.path)


MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader carries exactly
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


class _Builder:
    def __init__(self, loader: _Loader, path: Path):
        self.loader = loader
        self.path = path
        self.count = 0
        self.lines: dict[str, int] = {}

    def fail(self, node: Node, message: str) -> UserError:
        return UserError(f"{self.path}:{node.start_mark.line + 1}: {message}")

    def build(self, node: Node, pointer: str) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"document expands to more than {MAX_NODES} values (alias bomb?)")
        self.lines.setdefault(pointer, node.start_mark.line + 1)
        tag = node.tag or ""
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if isinstance(node, SequenceNode):
            if tag != STD + "seq":
                raise self.fail(node, f"tag {tag!r} is not allowed in a spec")
            return [self.build(n, f"{pointer}/{i}") for i, n in enumerate(node.value)]
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
                bad = _control_message(key)
                if bad:
                    raise self.fail(knode, bad)
                if key in out:
                    raise self.fail(knode, f"duplicate key {key!r}")
                out[key] = self.build(vnode, f"{pointer}/{_escape(key)}")
            return out
        raise self.fail(node, "unsupported YAML node")  # pragma: no cover

    def scalar(self, node: ScalarNode) -> Any:
        tag = node.tag
        if tag == STD + "str":
            bad = _control_message(node.value)
            if bad:
                raise self.fail(node, bad)
            return node.value
        if tag == STD + "int":
            digits = node.value.lstrip("+-").replace("_", "")
            if len(digits) > 20:
                raise self.fail(
                    node, f"integer {node.value[:24]}… is too large (more than 20 digits)"
                )
            value = self.loader.construct_object(node)
            if abs(value) > MAX_SAFE_INTEGER:
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


def load_yaml_text(text: str, path: Path) -> Loaded:
    """Parse one YAML document from ``text`` (reported as ``path``)."""
    loader = _LOADER(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise UserError(f"{path}{line}: invalid YAML: {exc.problem or exc.context}") from None
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: invalid YAML: {exc}") from None
        if node is None:
            raise UserError(f"{path}: the file is empty")
        builder = _Builder(loader, path)
        data = builder.build(node, "")
        return Loaded(path=path, data=data, lines=builder.lines)
    finally:
        loader.dispose()


def load_yaml(path: Path, display: Path | None = None) -> Loaded:
    """Read and parse a spec file; errors name it as ``display`` (default: ``path``)."""
    shown = display if display is not None else path
    try:
        raw = read_regular(path)
    except OSError as exc:
        raise UserError(f"{shown}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{shown}: not UTF-8 (byte {exc.start})") from None
    return load_yaml_text(text, shown)
