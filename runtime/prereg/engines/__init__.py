"""Engines: one per kind of study mechanism, generic over the studies of that kind.

An engine never imports a particular study.  It receives a :class:`StudyContext` built from
the study's generated module: the spec digest and the engine configuration (plain JSON data
compiled from the spec).  Each engine module exposes ``COMMANDS``: a mapping from handler name
to a function ``handler(ctx, args) -> int`` where ``args`` is an ``argparse.Namespace`` whose
attributes are the arguments the spec declares for that command.

Engines are plug-ins: each is described by an :class:`~prereg.engines.base.Engine` registered
under the entry-point group ``prereg.engines`` (:mod:`prereg.engines.registry`).
:data:`ENGINES` is that registry, ``{kind: Engine}``, discovered on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prereg.engines.base import Engine

__all__ = ["ENGINES", "Engine", "StudyContext"]


def row_fields(kind: str) -> tuple[str, ...]:
    """The per-row fields engine ``kind`` provides (none for an unknown engine)."""
    from prereg.engines.registry import registry

    engine = registry().get(kind)
    return tuple(engine.row_fields) if engine is not None else ()


@dataclass(frozen=True)
class StudyContext:
    """What a running study knows about itself."""

    study_id: str
    spec_digest: str
    version: str
    config: Mapping[str, Any]
    extras: Mapping[str, Any] = field(default_factory=dict)


def __getattr__(name: str):
    if name == "ENGINES":  # the registry, discovered when first asked for
        from prereg.engines.registry import registry

        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
