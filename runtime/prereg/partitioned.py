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
Struct for, Parquet and CSV files are read here in the calling process (pyarrow reads columns
on threads of its own); score's buckets (:mod:`prereg.bucketed`) cut those files too
(:func:`cuts`: a CSV file at its lines, a Parquet file between its row groups).
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
    shown = repr(text) if not isinstance(text, str) or len(text) <= 40 else repr(text[:40]) + "…"
    # a number of more than 4,300 digits is no int for Python (ValueError): any number of more
    # than 12 digits (leading zeros aside) is more than 1G
    digits = m[1].lstrip("0") if m is not None else ""
    number = int(digits) if digits and len(digits) <= 12 else (MAX_BYTES + 1) * bool(digits)
    if m is None or number * _UNITS[m[2]] < 1:
        raise UserError(
            f"--partition-bytes: {shown} is not a size (a whole number of bytes, at least 1,"
            " optionally followed by K, M or G: 64M)"
        )
    size = number * _UNITS[m[2]]
    if size > MAX_BYTES:
        raise UserError(
            f"--partition-bytes: {shown} is more than 1G (a worker holds its partition's bytes"
            " and records at once)"
        )
    return size


@dataclass(frozen=True)
class Part:
    """A partition of a file: ``length`` bytes at ``offset``, after ``lines`` lines, their
    SHA-256 ``sha256``. A partition of a CSV file (``kind`` "csv") carries the file's header
    line (``header``), which a worker puts before its bytes; one of a Parquet file ("parquet")
    holds row groups ``groups`` (first, end) and is read with the file's footer, ``footer``
    (offset, length, SHA-256); its ``weight`` is its row groups' bytes once decompressed,
    which size it and the buckets of its rows (its ``length`` is compressed)."""

    path: str
    offset: int
    length: int
    lines: int
    sha256: str
    kind: str = "jsonl"
    header: bytes = b""
    groups: tuple[int, int] = (0, 0)
    footer: tuple[int, int, str] = (0, 0, "")
    weight: int = 0

    @property
    def size(self) -> int:
        """The bytes the partition weighs: its ``weight``, else its ``length``."""
        return self.weight or self.length


class Uncut(Exception):
    """A file that cannot be cut into partitions, or a partition that cannot be read as one
    process reads its file (the cut is not proven to fall between records, the bytes changed):
    one process reads the file and names its problems."""


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


def cuts(path, size: int) -> list[Part]:
    """The partitions of about ``size`` bytes of a file, by its extension: a Parquet file's
    row groups (:func:`parquet_cuts`), a CSV file's lines after its header
    (:func:`csv_cuts`), else JSONL lines (:func:`line_cuts`). Raises OSError when the file
    cannot be read, :class:`Uncut` when it cannot be cut."""
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return parquet_cuts(path, size)
    if suffix == ".csv":
        return csv_cuts(path, size)
    return line_cuts(path, size)


def line_cuts(path, size: int) -> list[Part]:
    """The partitions of about ``size`` bytes of whole lines of a file, found without reading
    it: each cut is just after the first LF at or past the next multiple of ``size``, found
    by reading a little from there (a longer line stays whole in its partition). A partition's
    ``lines`` and ``sha256`` are not known (0 and ""): :func:`digests` gives the hashes on a
    thread of its own while the partitions are read, and the lines before each partition are
    the records of those before it. Raises OSError when the file cannot be read."""
    from prereg.files import open_regular

    fd = open_regular(Path(path))
    try:
        n = os.fstat(fd).st_size
        bounds = [0]
        while bounds[-1] + size < n:
            at, found = bounds[-1] + size - 1, -1
            while at < n and found < 0:
                chunk = os.pread(fd, 1 << 16, at)
                if not chunk:
                    break
                i = chunk.find(b"\n")
                found = at + i if i >= 0 else -1
                at += len(chunk)
            if found < 0 or found + 1 >= n:
                break
            bounds.append(found + 1)
    finally:
        os.close(fd)
    bounds.append(n)
    return [
        Part(str(path), lo, hi - lo, 0, "")
        for lo, hi in zip(bounds, bounds[1:], strict=False)
        if hi > lo
    ]


def input_bytes(path) -> int:
    """The bytes a file weighs as input: a Parquet file's row groups once decompressed (from
    its footer; its size when that cannot be read), any other file's size."""
    size = Path(path).stat().st_size
    if Path(path).suffix.lower() != ".parquet":
        return size
    try:
        return max(sum(p.weight for p in parquet_cuts(path, MAX_BYTES)), size)
    except (OSError, Uncut):
        return size


def csv_cuts(path, size: int) -> list[Part]:
    """:func:`line_cuts` of a CSV file, each partition carrying the file's header line (the
    bytes up to its first LF). Whether a cut falls between records (a quoted value may hold
    line breaks) is known only when the partitions are read
    (:func:`prereg.tabular.read_part_columns` refuses any value holding a line break, so
    that, from the first partition on, each one starts where a record does). Raises
    :class:`Uncut` when the file has no line after its header."""
    from prereg.files import open_regular

    parts = line_cuts(path, size)
    fd = open_regular(Path(path))
    try:
        header = b""
        while b"\n" not in header:
            chunk = os.pread(fd, 1 << 16, len(header))
            if not chunk:
                raise Uncut("no line after the header")
            header += chunk
    finally:
        os.close(fd)
    header = header[: header.index(b"\n") + 1]
    return [
        Part(p.path, p.offset, p.length, p.lines, p.sha256, kind="csv", header=header)
        for p in parts
    ]


def parquet_cuts(path, size: int) -> list[Part]:
    """The partitions of a Parquet file: its row groups gathered in file order until their
    bytes once decompressed (which the footer gives: the file's are compressed) reach
    ``size``, read from its footer (the file's other bytes are not read). The
    partitions tile the file (the first from byte 0, the last to its end, so that
    :func:`digests` hashes every byte); each carries the footer's offset, length and SHA-256,
    with which its worker reads its row groups. Raises :class:`Uncut` when the footer cannot
    be read, or the row groups' bytes do not follow one another."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from prereg.files import open_regular

    fd = open_regular(Path(path))
    try:
        n = os.fstat(fd).st_size
        tail = os.pread(fd, 8, n - 8) if n >= 12 else b""
        if len(tail) != 8 or tail[4:] != b"PAR1":
            raise Uncut("not a Parquet file")
        at = n - 8 - int.from_bytes(tail[:4], "little")
        if at < 4:
            raise Uncut("a footer longer than the file")
        footer = os.pread(fd, n - at, at)
    finally:
        os.close(fd)
    if len(footer) != n - at:
        raise Uncut("the file changed")
    try:
        meta = pq.read_metadata(pa.BufferReader(footer))
        spans = [_group_span(meta.row_group(g)) for g in range(meta.num_row_groups)]
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise Uncut(f"unreadable footer: {exc}") from None
    if not spans:
        raise Uncut("no row group")
    ends = [4, *(hi for _, hi in spans)]
    if any(lo < end for (lo, _), end in zip(spans, ends, strict=False)):
        raise Uncut("row groups out of order")
    if ends[-1] > at:
        raise Uncut("row groups past the footer")
    foot = (at, n - at, hashlib.sha256(footer).hexdigest())
    bounds, groups, rows, weights = [0], [0], [0], [0]
    before = 0
    for g, (lo, _) in enumerate(spans):
        weight = max(meta.row_group(g).total_byte_size, 1)
        if g > groups[-1] and weights[-1] + weight > size:
            bounds.append(lo)
            groups.append(g)
            rows.append(before)
            weights.append(0)
        weights[-1] += weight
        before += meta.row_group(g).num_rows
    bounds.append(n)
    groups.append(len(spans))
    return [
        Part(str(path), lo, hi - lo, k, "", "parquet", b"", (g, h), foot, w)
        for lo, hi, g, h, k, w in zip(
            bounds, bounds[1:], groups, groups[1:], rows, weights, strict=False
        )
    ]


def _group_span(group) -> tuple[int, int]:
    """The bytes (from, to) of a row group's column chunks."""
    lo, hi = None, None
    for c in range(group.num_columns):
        col = group.column(c)
        start = col.data_page_offset
        if col.has_dictionary_page and col.dictionary_page_offset:
            start = min(start, col.dictionary_page_offset)
        end = start + col.total_compressed_size
        if start < 0 or col.total_compressed_size < 0:
            raise ValueError("a column chunk at a negative offset")
        lo = start if lo is None else min(lo, start)
        hi = end if hi is None else max(hi, end)
    if lo is None:
        raise ValueError("a row group of no column")
    return lo, hi


def digests(path, parts: list[Part], stop=None) -> tuple[str, int, list[str]]:
    """(the SHA-256 of the file, its size, the SHA-256 of each partition's bytes), reading the
    file once (hashlib lets go of the interpreter lock over each megabyte, so this runs beside
    the partitions' decoding). Raises OSError when the file cannot be read, or when ``stop``
    (a :class:`threading.Event`) is set: no one waits for the digests any more."""
    from prereg.files import open_regular

    fd = open_regular(Path(path))
    whole = hashlib.sha256()
    size, each = 0, []
    try:
        for part in parts:
            one = hashlib.sha256()
            at, end = part.offset, part.offset + part.length
            while at < end:
                if stop is not None and stop.is_set():
                    raise OSError("stopped: the digests are not wanted any more")
                chunk = os.pread(fd, min(1 << 20, end - at), at)
                if not chunk:
                    break
                whole.update(chunk)
                one.update(chunk)
                at += len(chunk)
            size += at - part.offset
            each.append(one.hexdigest())
        while chunk := os.pread(fd, 1 << 20, size):  # bytes after the last cut: it grew
            whole.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return whole.hexdigest(), size, each


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
    return read_part_digest(payload, part)[:4]


def read_part_digest(payload: tuple[str, int], part: Part):
    """:func:`read_part`'s four and the SHA-256 of the bytes read; a partition of
    :func:`cuts` (its ``sha256`` not known) is not checked here: its caller compares the
    digest with :func:`digests`'."""
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
        digest = hashlib.sha256(data).hexdigest()
        if len(data) != part.length or (part.sha256 and digest != part.sha256):
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
        return [], [], 0, UserError(f"{path}: cannot read: {exc.strerror}"), ""
    except UserError as exc:
        return [], [], 0, exc, ""
    return parts, problems[:max_problems], len(problems), None, digest


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
