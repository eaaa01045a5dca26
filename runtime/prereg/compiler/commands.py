"""A study's effective commands: its engine's standard commands merged with the spec's
``commands:`` section.

An engine provides the commands every study of its kind offers (``items``, ``simulate``,
``score``, ``diagnose`` for a factorial study), each with its handler, summary and arguments
(:attr:`prereg.engines.base.Engine.standard_commands`). A spec's ``commands:`` section only
changes that list; each entry, in order, is one of:

- an **override**: its ``id`` is a standard command's. The fields it writes (``handler``,
  ``summary``, ``description``, ``arguments``) replace the standard command's, the rest are
  kept; ``arguments``, when written, replaces the whole list. The command keeps its place.
- a **rename**: ``renames: <standard id>`` and a new ``id``. The standard command is offered
  under the new name instead (in its place), with the fields the entry writes replacing its
  own as for an override.
- an **addition**: any other ``id``. It names one of the engine's handlers and has a summary;
  it comes after the standard commands, in the spec's order.

An addition whose handler the engine does not have, a rename of a command the engine does
not provide (or of one renamed or overridden twice), and a rename to a standard command's
name are refused at compile time with the line of the entry. Commands are checked by the
engine's checks as they take effect, so an override is checked with the arguments it keeps.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prereg.engines.base import Engine

_FIELDS = ("handler", "summary", "description", "arguments")
_COMMAND = re.compile(r"^/commands/([0-9]+)(/.*)?$")


@dataclass
class Merged:
    """The effective commands, where each came from, and what was refused."""

    commands: list[dict[str, Any]] = field(default_factory=list)
    #: for each effective command, the index of the spec entry that wrote (part of) it, or None
    origin: list[int | None] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (pointer, message)

    def spec_pointer(self, spec: Mapping[str, Any], ptr: str) -> tuple[str, str]:
        """``(pointer into the spec, note)`` for a pointer into the effective commands: a
        command the spec wrote maps to its entry (an inherited argument list to the entry
        itself), an engine's own command to ``/engine`` with a note naming it."""
        m = _COMMAND.match(ptr)
        if not m:
            return ptr, ""
        k, rest = int(m.group(1)), m.group(2) or ""
        if k >= len(self.origin):
            return "/commands", ""
        i = self.origin[k]
        cid = self.commands[k].get("id")
        if i is None:
            return "/engine", f" (the engine's own command {cid!r})"
        entry = (spec.get("commands") or [])[i]
        written = rest.lstrip("/").split("/")[0]  # the field the pointer is in, if any
        if written == "arguments" and written not in entry:
            return f"/commands/{i}", f" (the arguments it keeps of the engine's command {cid!r})"
        if written in _FIELDS and written not in entry:  # a field it keeps of the engine's
            return f"/commands/{i}", ""
        return f"/commands/{i}{rest}", ""


def _normal(command: Mapping[str, Any]) -> dict[str, Any]:
    """A command with every field present (as the generated code lists it)."""
    out = {"id": command.get("id")}
    for name in _FIELDS:
        out[name] = copy.deepcopy(command.get(name))
    if out["arguments"] is None:
        out["arguments"] = []
    return out


def _shape_problems(standard: list) -> list[str]:
    """What is wrong with an engine's standard commands themselves (a plug-in's bug)."""
    out = []
    seen = set()
    for n, c in enumerate(standard):
        if not isinstance(c, Mapping):
            out.append(f"standard command {n} is not a mapping")
            continue
        for name in ("id", "handler", "summary"):
            if not isinstance(c.get(name), str) or not c.get(name):
                out.append(f"standard command {c.get('id', n)!r} has no {name}")
        if c.get("id") in seen:
            out.append(f"standard command {c.get('id')!r} is listed twice")
        seen.add(c.get("id"))
        for a in c.get("arguments") or ():
            if not isinstance(a, Mapping) or not {"name", "kind", "help"} <= set(a):
                out.append(f"standard command {c.get('id')!r}: argument {a!r} is malformed")
    return out


def standard_commands(engine: Engine, spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The engine's standard commands for this spec (checked for shape)."""
    from prereg.errors import UserError

    standard = engine.standard_command_list(spec)
    bad = _shape_problems(standard)
    if bad:
        raise UserError(
            f"engine {engine.kind!r}: its standard commands are malformed; fix the plug-in",
            problems=bad,
        )
    return [_normal(c) for c in standard]


def merge(engine: Engine, spec: Mapping[str, Any]) -> Merged:
    """The effective commands of a spec (see the module's description)."""
    standard = standard_commands(engine, spec)
    kind = engine.kind
    merged = Merged(commands=standard, origin=[None] * len(standard))
    place = {c["id"]: k for k, c in enumerate(standard)}
    taken: dict[str, int] = {}  # standard id -> the spec entry that overrode or renamed it
    offered = ", ".join(place) or "none"
    handlers = None
    additions: list[tuple[int, dict[str, Any]]] = []

    def handler_ok(i: int, entry: Mapping[str, Any]) -> bool:
        nonlocal handlers
        handler = entry.get("handler")
        if handler is None:
            return True
        if handlers is None:
            handlers = engine.commands()
        if handler in handlers:
            return True
        merged.problems.append(
            (
                f"/commands/{i}/handler",
                f"command {entry.get('id')!r}: the {kind} engine has no handler {handler!r}"
                f" (handlers: {', '.join(sorted(handlers))})",
            )
        )
        return False

    for i, entry in enumerate(spec.get("commands") or ()):
        if not isinstance(entry, Mapping):
            continue
        cid = entry.get("id")
        target = entry.get("renames")
        if target is not None:
            if target not in place:
                merged.problems.append(
                    (
                        f"/commands/{i}/renames",
                        f"command {cid!r} renames {target!r}, which the {kind} engine does not"
                        f" provide for this study (its commands: {offered})",
                    )
                )
                continue
            if cid in place and cid != target:
                merged.problems.append(
                    (
                        f"/commands/{i}/id",
                        f"command {cid!r} renames {target!r} to the name of another of the"
                        f" engine's commands; choose a new name",
                    )
                )
                continue
        else:
            target = cid if cid in place else None
        if target is None:  # an addition
            if entry.get("handler") is None:
                merged.problems.append(
                    (
                        f"/commands/{i}",
                        f"command {cid!r} is not one the {kind} engine provides (its commands:"
                        f" {offered}): an added command names the handler that runs it",
                    )
                )
                continue
            if entry.get("summary") is None:
                merged.problems.append(
                    (f"/commands/{i}", f"command {cid!r} is added, so it needs a summary")
                )
            if handler_ok(i, entry):
                additions.append((i, entry))
            continue
        if target in taken:
            merged.problems.append(
                (
                    f"/commands/{i}" + ("/renames" if entry.get("renames") else "/id"),
                    f"command {target!r} of the engine is already changed by"
                    f" /commands/{taken[target]}",
                )
            )
            continue
        taken[target] = i
        if not handler_ok(i, entry):
            continue
        k = place[target]
        command = merged.commands[k]
        command["id"] = cid
        for name in _FIELDS:
            if name in entry:
                command[name] = copy.deepcopy(entry[name])
        if command["arguments"] is None:
            command["arguments"] = []
        merged.origin[k] = i
    for i, entry in additions:
        merged.commands.append(_normal(entry))
        merged.origin.append(i)
    return merged


def with_commands(spec: Mapping[str, Any], merged: Merged) -> dict[str, Any]:
    """The spec as the engine's checks see it: its commands are the effective ones."""
    return {**spec, "commands": merged.commands}
