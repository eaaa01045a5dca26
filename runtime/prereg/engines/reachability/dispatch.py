"""Dispatch order and its digest.

Rows of the configured first splits come first, in allocation order; then the rows of the
permuted splits, starting from allocation order and permuted by Fisher–Yates (k from n−1 down
to 1, j = draw(k+1)) on the stream of the dispatch message, whose ``{seedDigest}`` is
digest(seed) with its ``sha256:`` prefix.  dispatchOrderDigest = digest(list of row ids in
dispatch order).
"""

from __future__ import annotations

from .canon import record_digest
from .config import EngineConfig
from .draws import Stream, fill, fisher_yates
from .generate import Corpus, Row


def dispatch_order(ec: EngineConfig, corpus: Corpus) -> list[Row]:
    first = [r for r in corpus.rows if r.cell.split.word in ec.first_splits]
    rest = [r for r in corpus.rows if r.cell.split.word in ec.permuted_splits]
    stream = Stream.from_message(fill(ec.dispatch_draw_message, seedDigest=corpus.seed_digest))
    fisher_yates(rest, stream)
    return first + rest


def dispatch_order_digest(rows: list[Row]) -> str:
    """digest(row ids in dispatch order): the ids are hex strings, so the fast canonical
    encoder of :mod:`.canon` writes the RFC 8785 bytes."""
    return record_digest([r.id for r in rows])
