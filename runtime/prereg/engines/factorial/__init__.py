"""The factorial engine: any study written in the language's scoring vocabulary, no Python.

A factorial study registers its factors, splits and cells (written or crossed), an item
manifest contract (``role: items``: the row id, the split, and one field per factor), an
observation contract (``role: observation``), its attempt policy, derived fields, metrics
with ``compute`` blocks, estimates, contrasts, families, gates, hypotheses and scenarios.
The engine's commands:

- ``items --out ITEMS``: the item manifest of every registered row (ids ``<cell>-<n>``), for
  simulation and as the template a study's own manifest follows; every row is checked against
  the study's item contract first, and a manifest that breaks it is refused, nothing written.
- ``simulate --items ITEMS --scenario NAME --seed N --out OBS``: synthetic observations from a
  registered scenario, seeded per row (the bytes do not depend on the order of work).
- ``score --items ITEMS --observations OBS --out SCORE.json``: validated observations →
  counted attempts → derived fields → per-cell figures → registered estimates and contrasts →
  families → gates → verdicts → decision; SCORE.json and SCORE.md (written together, never
  overwritten).

The engine's constants (checked by its configuration schema): ``reporting`` (``decimals``,
``p_value_digits``, ``cell_interval: {method, level}``) and optionally ``decision``.
"""

from __future__ import annotations

from collections.abc import Callable


def _lazy(name: str) -> Callable:
    def handler(ctx, args):
        from prereg.engines.factorial import commands

        return getattr(commands, name)(ctx, args)

    handler.__name__ = name
    return handler


COMMANDS = {name: _lazy(name) for name in ("items", "simulate", "score", "diagnose")}
