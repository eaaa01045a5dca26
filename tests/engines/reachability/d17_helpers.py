"""Shared helpers for the d17 reachability-probe engine tests (computed once per session)."""

from __future__ import annotations

import copy
import functools
import gzip
import json
from pathlib import Path

from prereg.compiler.project import Project
from prereg.engines import StudyContext
from prereg.engines.reachability.config import config_from_spec, load_config
from prereg.engines.reachability.pipeline import prepare_memory
from prereg.study import study_context

ROOT = Path(__file__).resolve().parents[3]
STUDY = "d17-multifact"
FIXTURES = ROOT / "tests" / "fixtures" / "d17"
GOLDEN = FIXTURES / "golden-public-demo"
_MODULE, STUDY_CTX = study_context(Project(ROOT), STUDY)
SPEC_CONFIG = STUDY_CTX.config  # the compiled spec's generic config (ENGINE_CONFIG)
CONFIG = config_from_spec(SPEC_CONFIG)  # the engine's own shape, mapped from it
DEMO = SPEC_CONFIG["seed_policy"]["demo_seed"]
SPEC_DIGEST = "sha256:" + "ab" * 32


def config() -> dict:
    """A deep copy of the engine-shape config (for tests that change it)."""
    return copy.deepcopy(CONFIG)


def spec_config() -> dict:
    """A deep copy of the compiled spec config, as plain data (for tests that change a fact)."""
    return json.loads(json.dumps(SPEC_CONFIG))


def ctx(cfg: dict | None = None, spec_digest: str = SPEC_DIGEST) -> StudyContext:
    """A context holding the compiled spec config (or ``cfg``, in the same generic shape)."""
    return StudyContext(STUDY, spec_digest, "test", SPEC_CONFIG if cfg is None else cfg)


@functools.cache
def engine_config():
    return load_config(CONFIG)


@functools.cache
def demo():
    """The in-memory preparation of the public demo seed."""
    return prepare_memory(engine_config(), DEMO)


@functools.cache
def demo_positive_control():
    return demo().positive_control()


@functools.cache
def golden_lines() -> tuple[str, ...]:
    """The reference corpus lines (dispatch order, with the private gold and world fields)."""
    with gzip.open(GOLDEN / "corpus-with-gold.jsonl.gz", "rt", encoding="utf-8") as fh:
        return tuple(fh.read().splitlines(keepends=True))


@functools.cache
def summary() -> dict:
    return json.loads((GOLDEN / "summary.json").read_text(encoding="utf-8"))
