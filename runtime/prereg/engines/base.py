"""What prereg knows about an engine before it runs one: a small, cheap-to-import description.

An engine is registered as an object of :class:`Engine` under the entry-point group
``prereg.engines`` (see :mod:`prereg.engines.registry`); the entry point's name is the engine's
``kind``.  Everything heavy is named, not imported: the command handlers, the compile-time
checks, the reporter and the Python API are ``"module"`` or ``"module:attribute"`` strings
resolved on first use, and the configuration schema is a JSON file inside a package, read when
a spec that uses the engine is compiled.

The configuration schema is a JSON Schema (draft 2020-12) over the study's constants as one
object, ``{constant id: value}``.  ``integer`` means a JSON integer (``5.0`` is a number, not an
integer); a schema node may carry ``x-message``, the rule reported when that node fails.
``figures(spec) -> {figure id, ...}`` names the study-level figures the engine can report for
a spec (its ``figures:`` section may declare only these, unless marked external; decision rules
compare them, and the shared evaluator of :mod:`prereg.rules` decides over the values the
engine supplies at run time); it too receives the spec after the schema held.
``checks(spec) -> [(json_pointer, message), ...]`` receives the parsed spec after the schema
held and reports what a schema cannot say (a constant naming a split or a factor level the
spec does not declare, say); each pointer is into the spec (:func:`constant_pointer` builds
one).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from prereg.errors import UserError

#: A spec's ``engine:`` value (the language's Identifier).
KIND = re.compile(r"^[a-z][a-z0-9]*([-_][a-z0-9]+)*$")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
MODULE = re.compile(rf"^{_DOTTED}$")
REFERENCE = re.compile(rf"^{_DOTTED}:{_DOTTED}$")
RESOURCE = re.compile(rf"^{_DOTTED}:[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")

Problem = tuple[str, str]  # (JSON pointer into the spec, message)


@dataclass(frozen=True)
class Engine:
    """One engine, as registered under the entry-point group ``prereg.engines``.

    - ``kind``: the value a spec writes in ``engine:`` (and the entry point's name).
    - ``summary``: one line saying what the engine does.
    - ``module``: the dotted module whose ``COMMANDS`` maps handler names to
      ``handler(ctx, args) -> int``; imported only when a command runs.
    - ``schema``: ``"package:path/in/package.json"``, the JSON Schema of the study's constants
      as ``{constant id: value}``; None accepts any constants.
    - ``checks``: ``"module:function"``, ``function(spec) -> [(json_pointer, message)]``, run
      at compile time after the schema held; None for no checks.
    - ``reporter``: ``"module:function"``, ``function(info, folder, steps) -> Report`` (see
      :mod:`prereg.reports`); None for the generic report.
    - ``api``: ``"module:function"``, ``function(config) -> NamedTuple``: the Python API a
      compiled study's package exposes, bound to its configuration; None for no API.
    - ``figures``: ``"module:function"``, ``function(spec) -> iterable of figure ids``: the
      study-level figures the engine can report for this spec (which a spec's ``figures:``
      may declare and its rules compare); None when it reports none.
    - ``standard_commands``: ``"module:function"``, ``function(spec) -> [command, ...]``: the
      commands every study of this kind offers without declaring them, each a mapping shaped
      as an entry of a spec's ``commands:`` (``id``, ``handler``, ``summary``, optional
      ``description``, ``arguments``), in the order ``prereg <study-id> --help`` lists them; a
      spec's ``commands:`` overrides, renames or adds to them (:mod:`prereg.compiler.commands`).
      None: the engine offers none, and a study's commands are the ones its spec declares.
    - ``missing_commands``: ``"module:function"``, ``function(spec, command) -> str | None``:
      why a study of this kind lacks one of the engine's standard commands (the spec registers
      nothing it needs), said when a user asks for it; None for no explanation.
    - ``row_fields``: names of the per-row fields the engine provides beside the item and
      observation fields (say a gold label), which a study's conditions and metrics may name.
    """

    kind: str
    summary: str
    module: str
    schema: str | None = None
    checks: str | None = None
    reporter: str | None = None
    api: str | None = None
    row_fields: tuple[str, ...] = ()
    figures: str | None = None
    standard_commands: str | None = None
    missing_commands: str | None = None

    def problems(self) -> list[str]:
        """What is wrong with this description itself (empty when it is well formed)."""
        out = []
        if not isinstance(self.kind, str) or not KIND.match(self.kind):
            out.append(f"kind {self.kind!r} is not an identifier ({KIND.pattern})")
        if not isinstance(self.summary, str) or not self.summary.strip():
            out.append("summary must be a non-empty string")
        if not isinstance(self.module, str) or not MODULE.match(self.module):
            out.append(f"module {self.module!r} is not a dotted module name")
        for name, pattern, form in (
            ("schema", RESOURCE, "package:path.json"),
            ("checks", REFERENCE, "module:function"),
            ("reporter", REFERENCE, "module:function"),
            ("api", REFERENCE, "module:function"),
            ("figures", REFERENCE, "module:function"),
            ("standard_commands", REFERENCE, "module:function"),
            ("missing_commands", REFERENCE, "module:function"),
        ):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not pattern.match(value)):
                out.append(f"{name} {value!r} is not of the form {form}")
        return out

    # -- resolved on first use ----------------------------------------------------------------

    def commands(self) -> Mapping[str, Callable[..., Any]]:
        """The engine's ``COMMANDS`` (imports :attr:`module`)."""
        module = _import(self.module, f"engine {self.kind!r}: its module")
        handlers = getattr(module, "COMMANDS", None)
        if not isinstance(handlers, Mapping):
            raise UserError(f"engine {self.kind!r}: module {self.module} has no COMMANDS mapping")
        return handlers

    def config_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the study's constants, or None (read once per process)."""
        return None if self.schema is None else _schema(self.kind, self.schema)

    def run_checks(self, spec: Mapping[str, Any]) -> list[Problem]:
        """The engine's compile-time checks over a parsed spec (after the schema held)."""
        if self.checks is None:
            return []
        fn = resolve(self.checks, f"engine {self.kind!r}: its checks")
        return [(str(p), str(m)) for p, m in fn(spec) or ()]

    def reported_figures(self, spec: Mapping[str, Any]) -> frozenset[str]:
        """The ids of the study-level figures the engine can report for a parsed spec."""
        if self.figures is None:
            return frozenset()
        fn = resolve(self.figures, f"engine {self.kind!r}: its figures")
        return frozenset(str(f) for f in fn(spec) or ())

    def standard_command_list(self, spec: Mapping[str, Any]) -> list[Any]:
        """The engine's standard commands for a parsed spec (after the schema held)."""
        if self.standard_commands is None:
            return []
        fn = resolve(self.standard_commands, f"engine {self.kind!r}: its standard commands")
        return list(fn(spec) or ())

    def missing_command(self, spec: Mapping[str, Any], command: str) -> str | None:
        """Why a study with this spec has no standard ``command`` (None: no explanation)."""
        if self.missing_commands is None:
            return None
        fn = resolve(self.missing_commands, f"engine {self.kind!r}: its missing commands")
        found = fn(spec, command)
        return None if found is None else str(found)

    def report_builder(self) -> Callable[..., Any] | None:
        return (
            None
            if self.reporter is None
            else resolve(self.reporter, f"engine {self.kind!r}: its reporter")
        )

    def api_factory(self) -> Callable[..., Any] | None:
        return None if self.api is None else resolve(self.api, f"engine {self.kind!r}: its api")


def _import(name: str, what: str):
    try:
        return importlib.import_module(name)
    except Exception as exc:  # a plug-in's import error is the user's to fix, not a traceback
        raise UserError(f"{what} cannot be imported: {type(exc).__name__}: {exc}") from None


def resolve(reference: str, what: str) -> Any:
    """The object a ``"module:attribute.path"`` reference names."""
    module_name, _, attribute = reference.partition(":")
    obj = _import(module_name, f"{what} ({reference})")
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UserError(f"{what} ({reference}): {module_name} has no {attribute}") from None
    return obj


@cache
def _schema(kind: str, resource: str) -> dict[str, Any]:
    from importlib import resources

    package, _, path = resource.partition(":")
    what = f"engine {kind!r}: its configuration schema {resource}"
    try:
        text = resources.files(package).joinpath(path).read_text(encoding="utf-8")
    except (ImportError, OSError) as exc:
        raise UserError(f"{what} cannot be read: {type(exc).__name__}: {exc}") from None
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise UserError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise UserError(f"{what} is not a JSON Schema (an object)")
    return schema


def constant_pointer(spec: Mapping[str, Any], constant: str, *path: str | int) -> str | None:
    """The JSON pointer of ``path`` inside constant ``constant``'s value (None when the spec
    declares no such constant): ``constant_pointer(spec, "audit", "split")`` is
    ``/constants/15/value/split``."""
    for i, c in enumerate(spec.get("constants") or ()):
        if isinstance(c, Mapping) and c.get("id") == constant:
            tail = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
            return f"/constants/{i}/value{tail}"
    return None


def constants(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The study's constants as one object, ``{constant id: value}`` (what the schema checks)."""
    return {
        c["id"]: c.get("value")
        for c in spec.get("constants") or ()
        if isinstance(c, Mapping) and "id" in c
    }
