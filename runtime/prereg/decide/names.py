"""How rows and levels are named: the key fields of an attempt policy that name a row
(:func:`row_name`) and the level id a factor field's value stands for (:func:`level_text`).

Numpy-free, so that ``prereg compile`` checks a spec without the array stack
(:mod:`prereg.decide.attempts` and :mod:`prereg.decide.table` re-export these functions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def row_name(policy: Mapping[str, Any]) -> list[str]:
    """The key fields that name a row: the first, and every later one that no ``where`` fixes to
    one value (a fixed field selects the records scored; it does not name rows). A row is one
    value of the whole name: one item x rater, one problem x model x sample."""
    pinned = pinned_key_fields(policy)
    key = list(policy["key"])
    return [key[0], *(f for f in key[1:] if f not in pinned)]


def pinned_key_fields(policy: Mapping[str, Any]) -> set[str]:
    """The key fields after the first that the policy's ``where`` fixes to one value (``eq`` a
    value, or ``in`` a single value): with each of them fixed, a row has one scored series."""
    out = set()
    for c in policy.get("where") or ():
        if c.get("op") == "eq" and c.get("other") is None and c.get("value") is not None:
            out.add(c["field"])
        elif c.get("op") == "in" and len(c.get("values") or ()) == 1:
            out.add(c["field"])
    return out


def level_text(value: Any) -> str:
    """The level id a data value of a factor field stands for: a string is itself, a boolean
    ``true``/``false``, a whole number its digits (``16384``, also for ``16384.0``), another
    number its shortest decimal form (``0.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def level_value(contract_field: Mapping[str, Any], level: Any) -> Any:
    """The data value a factor field holds for a level id: the allowed value written as that
    level (a number or boolean for a typed field), else the level id itself."""
    if contract_field.get("type", "string") == "string" or level is None:
        return level
    for a in contract_field.get("allowed") or ():
        if level_text(a) == str(level):
            return a
    return level
