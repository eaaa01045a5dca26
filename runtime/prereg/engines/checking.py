"""Helpers for an engine's compile-time checks (``Engine.checks``): names a constant uses that
the spec must declare, and the record contracts (by role) an engine reads its inputs from.

A check receives the parsed spec after the engine's configuration schema held, so every
constant the schema requires is there with the shape it states.  :class:`SpecNames` collects
problems as ``(json_pointer, message)`` pairs pointing inside a constant's value; the compiler
adds the file, the line and ``(engine <kind>, constant <id>)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from prereg.engines.base import Problem, constant_pointer, constants


def _listing(values: Iterable[Any]) -> str:
    shown = ", ".join(str(v) for v in values)
    return shown or "none"


class SpecNames:
    """What a spec declares (splits, factors and their levels, row attributes, metrics, freeze
    roles, record contracts by role) and a problem list for names that miss."""

    def __init__(self, spec: Mapping[str, Any]):
        self.spec = spec
        self.constants = constants(spec)
        self.problems: list[Problem] = []
        self.splits = [str(s.get("id")) for s in spec.get("splits") or ()]
        self.factors = {
            str(f.get("id")): [str(lv.get("id")) for lv in f.get("levels") or ()]
            for f in spec.get("factors") or ()
        }
        self.row_attributes = {
            str(a.get("id")): [str(v) for v in a.get("values") or ()]
            for a in spec.get("row_attributes") or ()
        }
        self.metrics = [str(m.get("id")) for m in spec.get("metrics") or ()]
        self.freeze_roles = {str(r.get("id")): r for r in spec.get("freeze_roles") or ()}
        self.contracts = {
            str(c["role"]): c for c in spec.get("record_contracts") or () if c.get("role")
        }
        self._contract_index = {
            str(c["role"]): i
            for i, c in enumerate(spec.get("record_contracts") or ())
            if c.get("role")
        }

    # -- reporting --------------------------------------------------------------------------

    def report(self, constant: str, path: Iterable[str | int], message: str) -> None:
        ptr = constant_pointer(self.spec, constant, *path) or "/constants"
        self.problems.append((ptr, message))

    def expect(self, ok: bool, constant: str, path: Iterable[str | int], message: str) -> bool:
        if not ok:
            self.report(constant, path, message)
        return ok

    # -- record contracts -------------------------------------------------------------------

    def contract_pointer(self, role: str, *path: str | int) -> str:
        """The JSON pointer of ``path`` inside the record contract with role ``role``."""
        tail = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
        return f"/record_contracts/{self._contract_index[role]}{tail}"

    def field_pointer(self, role: str, field_role: str, *path: str | int) -> str:
        """The JSON pointer of ``path`` inside the field with role ``field_role`` of the record
        contract with role ``role`` (the contract's ``fields`` when it has no such field)."""
        fields = self.contracts[role].get("fields") or ()
        for j, f in enumerate(fields):
            if f.get("role") == field_role:
                return self.contract_pointer(role, "fields", j, *path)
        return self.contract_pointer(role, "fields")

    def contract_fields(
        self, role: str, field_roles: Iterable[str]
    ) -> dict[str, Mapping[str, Any]] | None:
        """``{field role: field}`` of the record contract with role ``role``, whose fields'
        roles must be exactly ``field_roles`` (the language already keeps contract roles unique
        per spec and field roles unique per contract).  Reports a missing contract (and returns
        None), each missing field role and each field role the engine does not read."""
        field_roles = tuple(field_roles)
        contract = self.contracts.get(role)
        if contract is None:
            self.problems.append(
                (
                    "/record_contracts",
                    f"the spec declares no record contract with role {role!r}"
                    " (the engine reads one of its inputs from it)",
                )
            )
            return None
        found: dict[str, Mapping[str, Any]] = {}
        for j, f in enumerate(contract.get("fields") or ()):
            r = f.get("role")
            if r is None:
                continue
            if r in field_roles:
                found[r] = f
            else:
                self.problems.append(
                    (
                        self.contract_pointer(role, "fields", j, "role"),
                        f"record contract {contract.get('id')!r} gives field {f.get('name')!r}"
                        f" the role {r!r}, which the engine does not read"
                        f" (roles: {_listing(field_roles)})",
                    )
                )
        for r in field_roles:
            if r not in found:
                self.problems.append(
                    (
                        self.contract_pointer(role, "fields"),
                        f"record contract {contract.get('id')!r} has no field with role {r!r}"
                        f" (the engine reads roles {_listing(field_roles)})",
                    )
                )
        return found

    # -- names ------------------------------------------------------------------------------

    def split(self, constant: str, path: list, value: Any) -> bool:
        return self.expect(
            value in self.splits,
            constant,
            path,
            f"names split {value!r}, which the spec does not declare (splits: {_listing(self.splits)})",
        )

    def factor(self, constant: str, path: list, value: Any) -> bool:
        return self.expect(
            value in self.factors,
            constant,
            path,
            f"names factor {value!r}, which the spec does not declare"
            f" (factors: {_listing(self.factors)})",
        )

    def level(self, constant: str, path: list, factor: str | None, value: Any) -> bool:
        """``value`` is a level of ``factor`` (None: the factor is unknown, already reported)."""
        if factor is None or factor not in self.factors:
            return False
        levels = self.factors[factor]
        return self.expect(
            str(value) in levels,
            constant,
            path,
            f"names level {str(value)!r} of factor {factor!r}, which that factor does not have"
            f" (levels: {_listing(levels)})",
        )

    def metric(self, constant: str, path: list, value: Any) -> bool:
        return self.expect(
            value in self.metrics,
            constant,
            path,
            f"names metric {value!r}, which the spec does not declare"
            f" (metrics: {_listing(self.metrics)})",
        )

    def freeze_role(self, constant: str, path: list, value: Any) -> bool:
        return self.expect(
            value in self.freeze_roles,
            constant,
            path,
            f"names freeze role {value!r}, which the spec does not declare"
            f" (freeze roles: {_listing(self.freeze_roles)})",
        )

    def selectable(self) -> dict[str, list[str]]:
        """What a row selection may filter on: ``split``, the factors and the row attributes,
        each with its values (as the language's selections do)."""
        out = {"split": list(self.splits)}
        out.update(self.factors)
        for a, values in self.row_attributes.items():
            out.setdefault(a, values)
        return out

    def selection(self, constant: str, path: list, where: Mapping[str, Any]) -> None:
        """``{attribute: [levels]}``: each attribute is selectable and each level is one of its
        values."""
        known = self.selectable()
        for attribute, levels in where.items():
            if attribute not in known:
                self.report(
                    constant,
                    [*path, attribute],
                    f"selects on {attribute!r}, which is neither split, a factor nor a row"
                    f" attribute of the spec (known: {_listing(known)})",
                )
                continue
            for j, level in enumerate(levels):
                self.expect(
                    str(level) in known[attribute],
                    constant,
                    [*path, attribute, j],
                    f"selects {str(level)!r} of {attribute!r}, which it does not have"
                    f" (values: {_listing(known[attribute])})",
                )

    # -- decisions --------------------------------------------------------------------------

    def decision(
        self, constant: str, path: list, hypothesis: Any, *, verdicts: bool
    ) -> tuple[int, Mapping[str, Any]] | None:
        """The hypothesis a constant names as the engine's registered decision: it must be
        registered, not reported only, and decided by verdicts (``verdicts=True``) or by a
        rule (supported when it holds)."""
        for i, h in enumerate(self.spec.get("hypotheses") or ()):
            if h.get("id") != hypothesis:
                continue
            form = "verdicts" if verdicts else "rule"
            if h.get("reported_only") or not h.get(form):
                self.problems.append(
                    (
                        f"/hypotheses/{i}",
                        f"hypothesis {hypothesis!r} is the decision constant {constant} names,"
                        f" so it must register {'verdicts' if verdicts else 'a rule'} and not"
                        " be reported only",
                    )
                )
                return None
            return i, h
        ids = [str(h.get("id")) for h in self.spec.get("hypotheses") or ()]
        self.report(
            constant,
            path,
            f"names hypothesis {hypothesis!r}, which the spec does not register"
            f" (hypotheses: {_listing(ids)})",
        )
        return None


def comparisons(cond: Any, ptr: str, binding: Mapping[str, str] | None = None):
    """``(pointer, filled target, comparison)`` for every comparison of a condition, each
    ``for_each`` instance filled in."""
    import re

    binding = dict(binding or {})
    if not isinstance(cond, Mapping):
        return
    if isinstance(cond.get("compare"), Mapping):
        c = cond["compare"]
        target = re.sub(
            r"\{([a-z][a-z0-9_]*)\}",
            lambda m: binding.get(m.group(1), m.group(0)),
            str(c.get("target")),
        )
        yield f"{ptr}/compare", target, c
    for key in ("all_of", "any_of"):
        for i, sub in enumerate(cond.get(key) or ()):
            yield from comparisons(sub, f"{ptr}/{key}/{i}", binding)
    if isinstance(cond.get("at_least"), Mapping):
        for i, sub in enumerate(cond["at_least"].get("of") or ()):
            yield from comparisons(sub, f"{ptr}/at_least/of/{i}", binding)
    if isinstance(cond.get("for_each"), Mapping):
        fe = cond["for_each"]
        for v in fe.get("values") or ():
            yield from comparisons(
                fe.get("condition"), f"{ptr}/for_each/condition", {**binding, fe["name"]: str(v)}
            )


#: How a handler reads one of its arguments (:func:`command_problems`): ``required``, the spec
#: must declare it and make it required (the handler reads its value); ``declared``, the spec
#: must declare it (the handler reads it, and takes a missing value as None); ``optional``, the
#: handler goes without it when the spec declares none.
NEEDS = ("required", "declared", "optional")


@dataclass(frozen=True)
class Argument:
    """One argument a handler reads: its name as a spec declares it (``--lists``,
    ``calibration``), the argument types it accepts (``flag`` for a flag) and how it is needed
    (one of :data:`NEEDS`); ``repeated``, whether it takes the argument repeated (a list)."""

    name: str
    types: tuple[str, ...]
    need: str = "required"
    repeated: bool = False

    @property
    def dest(self) -> str:
        return argument_dest(self.name)


#: The shared options of a ``diagnose`` command whose engine simulates its own studies
#: (:mod:`prereg.diagnose.plain`), after the engine's own inputs.
DIAGNOSE_ARGUMENTS = (
    Argument("--scenario", ("string",), "declared", repeated=True),
    Argument("--simulations", ("integer",)),
    Argument("--seed", ("integer",)),
    Argument("--out", ("path", "string")),
    Argument("--workers", ("integer",), "optional"),
    Argument("--scheduler", ("string",), "optional"),
    Argument("--vary", ("string",), "optional"),
    Argument("--target", ("flag",), "optional"),
)


def argument_dest(name: str) -> str:
    """The attribute the handler reads an argument under (``--binary-outputs`` →
    ``binary_outputs``), as the CLI's parser names it."""
    return str(name).lstrip("-").replace("-", "_")


def command_problems(
    spec: Mapping[str, Any], kind: str, handlers: Mapping[str, Iterable[Argument]]
) -> list[Problem]:
    """The commands of a spec against the engine's handlers: each command names a handler the
    engine has, and declares every argument that handler reads, under its name, with a type
    it accepts, required where the handler needs a value, not repeated, and no argument the
    handler does not read (an argument it would silently ignore)."""
    out: list[Problem] = []
    for i, c in enumerate(spec.get("commands") or ()):
        handler = c.get("handler")
        cid = c.get("id")
        if handler not in handlers:
            out.append(
                (
                    f"/commands/{i}/handler",
                    f"the {kind} engine has no handler {handler!r}"
                    f" (handlers: {_listing(handlers)})",
                )
            )
            continue
        wanted = {a.dest: a for a in handlers[handler]}
        declared = {}
        for j, a in enumerate(c.get("arguments") or ()):
            dest = argument_dest(a.get("name", ""))
            declared[dest] = (j, a)
            want = wanted.get(dest)
            ptr = f"/commands/{i}/arguments/{j}"
            if want is None:
                if dest in ("json_summary", "json", "quiet"):
                    continue
                out.append(
                    (
                        f"{ptr}/name",
                        f"command {cid!r}: handler {handler!r} reads no argument"
                        f" {a.get('name')!r}, so it would be ignored (it reads"
                        f" {_listing(w.name for w in wanted.values())})",
                    )
                )
                continue
            typ = "flag" if a.get("kind") == "flag" else a.get("type")
            if typ not in want.types:
                out.append(
                    (
                        f"{ptr}/{'kind' if typ == 'flag' else 'type'}",
                        f"command {cid!r}: handler {handler!r} reads {want.name} as"
                        f" {' or '.join(want.types)}, not {typ}",
                    )
                )
            if a.get("repeated") and not want.repeated:
                out.append(
                    (
                        f"{ptr}/repeated",
                        f"command {cid!r}: handler {handler!r} reads one value of"
                        f" {want.name}, so it may not be repeated",
                    )
                )
            required = a.get("required", a.get("kind") == "positional")
            if want.need == "required" and not required:
                out.append(
                    (
                        f"{ptr}/required",
                        f"command {cid!r}: handler {handler!r} needs a value of {want.name},"
                        " so the argument must be required",
                    )
                )
        for dest, want in wanted.items():
            if want.need != "optional" and dest not in declared:
                out.append(
                    (
                        f"/commands/{i}/arguments",
                        f"command {cid!r}: handler {handler!r} reads argument {want.name}"
                        f" ({' or '.join(want.types)}), which the command does not declare",
                    )
                )
    return out


def units_unread(spec: Mapping[str, Any]) -> list[Problem]:
    """A study's ``units`` refused by an engine that scores rows by its own mechanism (only
    engines scoring with the language's vocabulary, such as factorial, read them)."""
    if not spec.get("units"):
        return []
    return [
        (
            "/units",
            f"engine {spec.get('engine')!r} does not read units: its scoring counts rows its own"
            " way, so inclusion rules would not be applied (register the study with an engine"
            " that scores the language's vocabulary, such as factorial)",
        )
    ]
