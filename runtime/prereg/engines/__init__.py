"""Engines: one per kind of study mechanism, generic over the studies of that kind.

An engine never imports a particular study.  It receives a :class:`StudyContext` built from
the study's generated module: the spec digest and the engine configuration (plain JSON data
compiled from the spec).  Each engine module exposes ``COMMANDS``: a mapping from handler name
to a function ``handler(ctx, args) -> int`` where ``args`` is an ``argparse.Namespace`` whose
attributes are the arguments the spec declares for that command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ENGINES = {
    "reachability-probe": "prereg.engines.reachability",
    "cluster-power-freeze": "prereg.engines.clusterpower",
    "multicorrect-scoring": "prereg.engines.multicorrect",
    "factorial": "prereg.engines.factorial",
}


#: Row fields an engine provides beside the item and observation fields (a study's conditions
#: and metrics may name them).
ROW_FIELDS: dict[str, tuple[str, ...]] = {
    # the gold label, and the counted P(yes) through the registered calibrator (see
    # prereg.engines.reachability.scoring)
    "reachability-probe": ("gold", "calibratedPYes", "calibratedConfidence"),
}


def row_fields(kind: str) -> tuple[str, ...]:
    return ROW_FIELDS.get(kind, ())


@dataclass(frozen=True)
class StudyContext:
    """What a running study knows about itself."""

    study_id: str
    spec_digest: str
    version: str
    config: Mapping[str, Any]
    extras: Mapping[str, Any] = field(default_factory=dict)
