"""The s3-verifier-freeze study as the engine tests see it: compiled from the spec.

``CONFIG`` is what a handler receives (``ctx.config`` of the compiled study, as plain data:
``constants`` keyed by the spec's constant ids, ``freeze_roles``, ``record_contracts``, ...),
and what the engine's readers take; ``CONSTANTS`` is its ``constants``.  Tests that change a
fact edit a deep copy of ``CONFIG`` and hand :func:`context` of it to the handlers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prereg.compiler.project import Project
from prereg.engines import StudyContext
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
STUDY_ID = "s3-verifier-freeze"
MODULE, STUDY_CTX = study_context(Project(ROOT), STUDY_ID)
CONFIG: dict[str, Any] = json.loads(json.dumps(STUDY_CTX.config))
CONSTANTS: dict[str, Any] = CONFIG["constants"]


def context(config: dict[str, Any] | None, spec_digest: str, version: str) -> StudyContext:
    """A context for the handlers with a compiled config (the study's when None)."""
    return StudyContext(STUDY_ID, spec_digest, version, CONFIG if config is None else config)
