"""Finding an engine's inputs in the record contracts a spec declares.

The compiled config (``prereg.compiler.build.spec_config``) carries ``record_contracts``: a
list of ``{"id", "format", "role"?, "fields": [{"name", "role"?, "type", ...}]}`` (the bounds
and allowed values a field states, its prose left out).  A contract's ``role`` says which input
of the engine it describes; a field's ``role`` says which part of that input it holds.  Roles
are words of the engine's vocabulary; names, bounds and allowed values are study facts, stated
once in the contract.  These helpers look them up at run time and raise
:class:`prereg.errors.UserError` naming the spec section when something is missing (an engine
whose compile-time checks already require its contracts, with
:meth:`prereg.engines.checking.SpecNames.contract_fields`, can read them without these).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from prereg.errors import UserError


def contract_for(config: Mapping[str, Any], role: str, engine: str) -> Mapping[str, Any]:
    """The record contract whose ``role`` is ``role`` (exactly one)."""
    found = [
        c
        for c in config.get("record_contracts") or ()
        if isinstance(c, Mapping) and c.get("role") == role
    ]
    if len(found) != 1:
        how = "no" if not found else "more than one"
        raise UserError(
            f"engine configuration: the spec declares {how} record contract with role {role!r}"
            f" (the {engine} engine reads its input from the record_contracts section)"
        )
    return found[0]


def fields_by_role(
    contract: Mapping[str, Any], roles: Iterable[str], engine: str
) -> dict[str, Mapping[str, Any]]:
    """``{role: field}`` for each of ``roles`` in ``contract``: every role present, no other."""
    by_role = {f["role"]: f for f in contract.get("fields") or () if f.get("role") is not None}
    roles = tuple(roles)
    missing = [r for r in roles if r not in by_role]
    unknown = sorted(set(by_role) - set(roles))
    if unknown:
        raise UserError(
            f"engine configuration: record contract {contract.get('id')!r} gives a field the"
            f" unknown role {', '.join(repr(r) for r in unknown)} (the {engine} engine reads"
            f" roles {', '.join(roles)})"
        )
    if missing:
        raise UserError(
            f"engine configuration: record contract {contract.get('id')!r} has no field with"
            f" role {', '.join(repr(r) for r in missing)} (the {engine} engine reads roles"
            f" {', '.join(roles)})"
        )
    return {r: by_role[r] for r in roles}


def names_by_role(contract: Mapping[str, Any], roles: Iterable[str], engine: str) -> dict[str, str]:
    """``{role: field name}`` for each of ``roles`` in ``contract``."""
    return {r: f["name"] for r, f in fields_by_role(contract, roles, engine).items()}
