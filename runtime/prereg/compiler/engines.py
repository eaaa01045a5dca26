"""The engine stage of a compile: the spec's engine is registered.

Runs after the language schema and the semantic checks passed.  The language leaves ``engine``
an identifier; which engines exist is the registry's to say (:mod:`prereg.engines.registry`),
so an unknown one is refused here, where it is written:
``file:line: at /engine: unknown engine 'foo' (registered: ...)``.
"""

from __future__ import annotations

from prereg.compiler.load import Loaded
from prereg.engines import registry


def engine_problems(loaded: Loaded) -> list[str]:
    """Every problem of the engine stage as ``file:line: at /pointer: rule``."""
    kind = loaded.data.get("engine")
    if registry.get(kind) is None:
        return [f"{loaded.where('/engine')}: at /engine: {registry.unknown(kind)}"]
    return []
