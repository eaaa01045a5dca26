"""Shared helpers for the d17 reachability-probe engine tests (computed once per session)."""

from __future__ import annotations

import copy
import functools
import gzip
import json
from pathlib import Path

from prereg.engines import StudyContext
from prereg.engines.reachability.config import load_config
from prereg.engines.reachability.pipeline import prepare_memory

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "d17"
GOLDEN = FIXTURES / "golden-public-demo"
CONFIG = json.loads((FIXTURES / "config.json").read_text(encoding="utf-8"))
DEMO = "d17mf-public-demo"
SPEC_DIGEST = "sha256:" + "ab" * 32


def config() -> dict:
    """A deep copy of the study config (for tests that change it)."""
    return copy.deepcopy(CONFIG)


def ctx(cfg: dict | None = None, spec_digest: str = SPEC_DIGEST) -> StudyContext:
    return StudyContext("d17-multifact", spec_digest, "test", CONFIG if cfg is None else cfg)


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
