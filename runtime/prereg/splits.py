"""The split of a study that registers none.

A study without ``splits:`` has one population: its cells name no split, its manifests and
observations carry no split field, and selections cannot filter on ``split``. Inside, the
compiler gives every cell the one implicit split :data:`IMPLICIT` (``all``, the word a total's
``scope`` already uses for every row, which is why no study may declare a split of that id),
so the engines and ``decide/`` see the shape they always see. It is never shown: PREREG.md,
SCORE.json, SCORE.md and the reports leave the split out when it is the implicit one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

IMPLICIT = "all"


def of(cell: Mapping[str, Any]) -> str:
    """A spec cell's split: the one it names, else the implicit one."""
    split = cell.get("split")
    return IMPLICIT if split is None else str(split)


def implicit(config: Mapping[str, Any]) -> bool:
    """Whether a compiled study's configuration (``ctx.config``) has only the implicit split."""
    return [str(s.get("id")) for s in config.get("splits") or ()] == [IMPLICIT]
