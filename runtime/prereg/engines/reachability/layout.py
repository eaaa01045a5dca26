"""The file names of a prepared folder (written by ``prepare``, verified by ``score`` and the
hand-off), in a module of their own so that scoring need not import the preparation's."""

from __future__ import annotations

CORPUS = "corpus.jsonl"
GOLD = "gold.json"
AUDIT = "audit.json"
ANALYSIS = "analysis.json"
PREREGISTRATION = "preregistration.json"
