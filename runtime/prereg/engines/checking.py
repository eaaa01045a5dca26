"""Helpers for an engine's compile-time checks (``Engine.checks``): names a constant uses that
the spec must declare.

A check receives the parsed spec after the engine's configuration schema held, so every
constant the schema requires is there with the shape it states.  :class:`SpecNames` collects
problems as ``(json_pointer, message)`` pairs pointing inside a constant's value; the compiler
adds the file, the line and ``(engine <kind>, constant <id>)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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

    # -- reporting --------------------------------------------------------------------------

    def report(self, constant: str, path: Iterable[str | int], message: str) -> None:
        ptr = constant_pointer(self.spec, constant, *path) or "/constants"
        self.problems.append((ptr, message))

    def expect(self, ok: bool, constant: str, path: Iterable[str | int], message: str) -> bool:
        if not ok:
            self.report(constant, path, message)
        return ok

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
