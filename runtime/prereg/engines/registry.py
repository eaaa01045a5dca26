"""The engines this installation knows: every :class:`~prereg.engines.base.Engine` registered
under the entry-point group ``prereg.engines``.

prereg's own engines are registered the way a third party's are, in ``pyproject.toml``::

    [project.entry-points."prereg.engines"]
    reachability-probe = "prereg.engines.reachability.plugin:ENGINE"

The entry point's name is the engine's ``kind``.  Discovery runs once per process (on first
use) and loads every plug-in object, which must be cheap: a plug-in module holds an Engine and
names everything else.  A plug-in that cannot be imported, is not an Engine, is malformed, or
claims a kind another entry point already claimed is reported as a :class:`UserError` naming
the entry point, never as a traceback.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from prereg.engines.base import Engine
from prereg.errors import UserError

GROUP = "prereg.engines"


def _where(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    source = f", distribution {dist.name} {dist.version}" if dist is not None else ""
    return f"entry point {ep.name} = {ep.value} (group {GROUP}{source})"


@lru_cache(maxsize=1)
def registry() -> Mapping[str, Engine]:
    """``{kind: Engine}`` of every registered engine, sorted by kind."""
    found: dict[str, tuple[Engine, importlib.metadata.EntryPoint]] = {}
    problems: list[str] = []
    entry_points = sorted(
        importlib.metadata.entry_points(group=GROUP), key=lambda e: (e.name, e.value)
    )
    for ep in entry_points:
        where = _where(ep)
        try:
            engine = ep.load()
        except Exception as exc:  # whatever a broken plug-in raises while importing
            problems.append(f"{where}: cannot be loaded: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(engine, Engine):
            problems.append(
                f"{where}: names a {type(engine).__name__}, not a prereg.engines.base.Engine"
            )
            continue
        bad = engine.problems()
        if engine.kind != ep.name:
            bad.append(f"describes engine {engine.kind!r}; the entry point's name must be its kind")
        if bad:
            problems.extend(f"{where}: {b}" for b in bad)
            continue
        if engine.kind in found:
            first_engine, first = found[engine.kind]
            if first.value == ep.value and first_engine == engine:
                continue  # the same registration seen twice (a distribution on the path twice)
            problems.append(
                f"{where}: engine {engine.kind!r} is already registered by {_where(first)}"
            )
            continue
        found[engine.kind] = (engine, ep)
    if problems:
        noun = "plug-in is" if len(problems) == 1 else "plug-ins are"
        raise UserError(f"the engine {noun} broken; fix or uninstall it", problems=problems)
    return MappingProxyType({kind: found[kind][0] for kind in sorted(found)})


def kinds() -> list[str]:
    return list(registry())


def get(kind: str) -> Engine | None:
    return registry().get(kind)


def unknown(kind: object) -> str:
    """The rule an unknown ``engine:`` value breaks, listing the registered kinds."""
    known = ", ".join(kinds())
    if not known:
        known = "none; is prereg installed? run make setup"
    return f"unknown engine {str(kind)!r} (registered: {known})"


def require(kind: str, what: str = "") -> Engine:
    """The engine of ``kind``, or a UserError saying it is not registered."""
    engine = get(kind)
    if engine is None:
        raise UserError(f"{what}{unknown(kind)}")
    return engine


def reset() -> None:
    """Forget the discovered engines (tests that install or remove a plug-in call this)."""
    registry.cache_clear()
