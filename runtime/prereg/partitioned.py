"""A JSONL file read in partitions, on local worker processes or a Dask cluster, into the
same :class:`prereg.columnar.RecordColumns` and the same refusals as one process.

The reading process plans the partitions in one pass over the file (:func:`plan`): the file's
SHA-256 and size (which SCORE.json names), and for each partition of about ``size`` bytes of
whole lines its byte offset, length, the number of lines before it and the SHA-256 of its
bytes (so that a worker reads the very bytes the file's digest names). Each partition is then decoded and checked against the contract where it is run
(:func:`read_part`: the typed column decoder, or the strict reader line by line, with the
file's own line numbers and byte offsets in every message); a worker that finds other bytes
than were planned (the file changed meanwhile) refuses them. The parts are joined in file
order, so the records, the first problems listed and their count are those one process finds:
the bytes written from them do not depend on the number of workers or of partitions.

Workers read the file by its path: on a cluster every worker must see the file at the same
path (a shared file system), as Dask's own readers require. Contracts the typed decoder has no
Struct for, Parquet and CSV files are read in the calling process (pyarrow reads columns on
threads of its own).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from prereg.errors import UserError

#: the partition size when none is given: big enough that a partition's decoding outweighs
#: sending its columns back, small enough that four workers share a 100 MB file
DEFAULT_BYTES = 16 << 20
#: the largest partition: a worker reads its partition whole
MAX_BYTES = 1 << 30
_SIZE = re.compile(r"([0-9]+)\s*(|k|K|KiB|M|MiB|G|GiB)")
_UNITS = {"": 1, "k": 1 << 10, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20}
_UNITS |= {"G": 1 << 30, "GiB": 1 << 30}


def partition_bytes(text: str) -> int:
    """``--partition-bytes``: a whole number of bytes, optionally with K/KiB, M/MiB or G/GiB
    (powers of 1,024), at least 1."""
    m = _SIZE.fullmatch(text.strip()) if isinstance(text, str) else None
    if m is None or int(m[1]) * _UNITS[m[2]] < 1:
        raise UserError(
            f"--partition-bytes: {text!r} is not a size (a whole number of bytes, at least 1,"
            " optionally followed by K, M or G: 64M)"
        )
    size = int(m[1]) * _UNITS[m[2]]
    if size > MAX_BYTES:
        raise UserError(
            f"--partition-bytes: {text!r} is more than 1G (a worker holds its partition's bytes"
            " and records at once)"
        )
    return size


@dataclass(frozen=True)
class Part:
    """A partition of a file: ``length`` bytes at ``offset``, after ``lines`` lines, their
    SHA-256 ``sha256``."""

    path: str
    offset: int
    length: int
    lines: int
    sha256: str


def plan(path, size: int) -> tuple[list[Part], str, int]:
    """(the partitions of about ``size`` bytes of whole lines, the file's SHA-256, its size);
    an unreadable, empty or byte-order-marked file refused as the one-process reader refuses
    it."""
    from prereg.jsonl import BLOCK
    from prereg.records import _file_blocks

    path = Path(path)
    parts: list[Part] = []
    # the file in blocks of at most BLOCK bytes of whole lines (bounded memory whatever the
    # size), gathered into partitions of at most ``size`` bytes (a longer line: its own)
    blocks = _file_blocks(path, min(size, BLOCK))
    start = length = lines = 0
    digest = hashlib.sha256()
    while True:
        try:
            data, n, offset, before = next(blocks)
        except StopIteration as end:
            source = end.value
            break
        if length and length + len(data) > size:  # this block would overflow the partition
            parts.append(Part(str(path), start, length, lines, digest.hexdigest()))
            length = 0
        if not length:
            start, lines, digest = offset, before, hashlib.sha256()
        digest.update(data)
        length += len(data)
    if length:
        parts.append(Part(str(path), start, length, lines, digest.hexdigest()))
    return parts, source.sha256, source.size


def _sub_blocks(data: bytes, block: int):
    """The blocks of whole lines of ``data`` (each ``block`` bytes or more but the last), as
    :class:`prereg.jsonl.LineBlocks` cuts a file: (block, LF count, offset in data)."""
    pos, n = 0, len(data)
    while pos < n:
        limit = pos + block
        if limit >= n:
            cut = n
        else:
            cut = data.rfind(b"\n", pos, limit) + 1
            if cut == 0:  # a line longer than a block: keep it whole
                cut = data.find(b"\n", limit) + 1 or n
        piece = data[pos:cut]
        yield piece, piece.count(b"\n"), pos
        pos = cut


def read_part(payload: tuple[str, int], part: Part):
    """One partition's (parts of columns, problems shown, problem count, error): the
    columns as :func:`prereg.records.blocks_columns` gives them, at most ``max_problems``
    problems with the file's line numbers and their count, or the message of a refusal that
    stops the reading (not UTF-8, the file changed)."""
    from prereg.jsonl import BLOCK
    from prereg.records import _column_decoders, blocks_columns

    schema_path, max_problems = payload
    path = Path(part.path)
    try:
        from prereg.files import open_regular

        fd = open_regular(path)
        try:
            data = os.pread(fd, part.length, part.offset)
        finally:
            os.close(fd)
        if len(data) != part.length or hashlib.sha256(data).hexdigest() != part.sha256:
            raise UserError(
                f"{path}: the file changed while it was read (bytes {part.offset} to"
                f" {part.offset + part.length}); nothing was scored"
            )
        decoders = _column_decoders(schema_path)
        problems: list[str] = []
        lines = part.lines
        blocks = []
        for piece, n, at in _sub_blocks(data, BLOCK):
            blocks.append((piece, n, part.offset + at, lines))
            lines += n
        parts = blocks_columns(path, Path(schema_path), decoders, blocks, problems)
    except OSError as exc:
        return [], [], 0, UserError(f"{path}: cannot read: {exc.strerror}")
    except UserError as exc:
        return [], [], 0, exc
    return parts, problems[:max_problems], len(problems), None


def read_jsonl_columns(
    path,
    schema_path: Path,
    *,
    size: int = DEFAULT_BYTES,
    workers: int = 1,
    scheduler: str | None = None,
    max_problems: int = 50,
    share=None,
):
    """:func:`prereg.records.read_jsonl_columns` of ``path``, its partitions read on
    ``workers`` local processes or the Dask cluster at ``scheduler``; ``share`` as
    :func:`prereg.records.share_columns`, applied here to the joined columns (the workers'
    strings are copies)."""
    from prereg import records, runner

    decoders = records._column_decoders(str(schema_path))
    if decoders is None:
        return records.read_jsonl_columns(path, schema_path, max_problems=max_problems, share=share)
    parts, sha256, nbytes = plan(path, size)
    results = runner.run(
        read_part, (str(schema_path), max_problems), parts, workers=workers, scheduler=scheduler
    )
    columns = []
    shown: list[str] = []
    total = 0
    for part_columns, problems, count, error in results:
        if error is not None:  # the first refusal in file order, as one process meets it
            raise error
        columns.extend(part_columns)
        shown.extend(problems[: max_problems - len(shown)])
        total += count
    records.refuse_counted(path, Path(schema_path), shown, total, max_problems)
    out = records.joined_columns(decoders[2], columns)
    out.positions = records.share_columns(out.columns, share)
    out.digest = (sha256, nbytes)
    return out
