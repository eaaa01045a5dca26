"""Streaming JSONL: the lines of a regular file in bounded blocks, and a typed fast path.

:class:`LineBlocks` reads a regular file (a FIFO, a folder or a device is refused, see
:func:`prereg.files.open_regular`) in blocks of whole lines and hashes the bytes as they pass,
so a reader holds one block and the records it keeps, never the whole file, and the file's
SHA-256 needs no second read.

:class:`TypedLines` decodes the lines of such a file into a typed record (a ``msgspec.Struct``
whose fields are the contract's, unknown fields forbidden) at C speed, and hands every line it
cannot vouch for to the caller's strict reader of one line (``strict(line number, bytes)``,
which reports problems in the caller's words and returns the parsed object or None; a file's
last line that no LF ends and that ends in CR is handed as ``strict(line number, bytes,
False)``, a lone CR, not a CRLF ending). The fast
path takes a whole block at once only when every rule of the strict reader is known to hold
for it; otherwise each line is decoded alone, and a line that fails any test goes to the
strict reader:

- valid UTF-8 and no byte-order mark at the start of the file;
- no carriage return: a block holding a CR byte is read a line at a time, and a line holding
  a CR (a CRLF line ending or a lone CR, which every reader refuses) goes to the strict reader;
- exactly one JSON object per line, no blank line: a block is decoded as one JSON array whose
  elements are its lines (each LF becomes ``,`` LF). A count of elements equal to the count of
  lines is not enough (a line ``{"a":1,"b":2},{"a":3`` followed by ``"b":4}`` makes two valid
  elements of two lines, the inserted comma serving inside the second object), so the array
  is also decoded into raw elements, which joined by LF must be the block itself: then no
  element holds a line break and each element is exactly its line. Where the record's fields
  can hold no object (strings, numbers, booleans, literals and arrays of those), the block is
  decoded as it is, as a sequence of values (no copy with commas), and as many values as lines
  with every line starting with ``{`` is proof enough: each line then starts a record (see
  :meth:`TypedLines._flat_block`);
- no duplicate key: the typed decode proves every field present, so a line whose count of
  colons (or, failing that, of key-ending ``"`` … ``:`` sequences) equals the number of fields
  has no key twice (a colon inside a string only raises the count, sending the line to the
  strict reader);
- no number of 18 significant digits, of 300 zeros after its point or with an exponent of
  three digits (:data:`LONG_NUMBER`): a number that a double may not hold as written is the
  strict reader's to refuse;
- NaN, Infinity and numbers that overflow a double are refused by the decoder itself, and so
  are malformed JSON, nesting where the type has none, and wrong types (``bool`` is never an
  integer or a number).

A typed record that passes the decoder but breaks a rule of the caller's (a value out of
range, a repeated id) is re-read with :meth:`TypedLines.strict_at`, so every message is the
strict reader's own.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from prereg.files import open_regular

BLOCK = 1 << 18  # 256 KiB: the records of a bigger block cost tens of MiB while alive
READ = 1 << 20  # bytes read (and handed to the hashing thread) at a time
BOM = b"\xef\xbb\xbf"
_SPACED_KEY = re.compile(rb'"[ \t\r]+:')


class _LongNumber:
    """Whether bytes may hold a number :func:`prereg.records.imprecise_number` refuses, in a
    JSON number's place (after ``:``, or with ``arrays`` also ``,`` or ``[``, and blanks; a
    string starts with a quote): 18 significant digits, a negative exponent of three digits,
    or 300 zeros in a row. A block or line holding one is read by the strict reader, which
    sees each number's text. A hex id or a digest is inside a string, and a double's 17-digit
    repr (``0.12345678901234568``) has 17 significant digits: those keep the fast path. A
    record whose fields hold no array has every number after a ``:`` (a search about half as
    costly, its pattern starting with a literal)."""

    _EXPONENT = re.compile(rb"e-[0-9]{3}|E-[0-9]{3}")
    _ZEROS = b"0" * 300

    def __init__(self, arrays: bool) -> None:
        place = rb"[:,\[]" if arrays else rb":"
        self._digits = re.compile(place + rb"[ \t]*+-?(?:0\.0*+)?[1-9](?:\.?[0-9]){17}")

    # digits to D and all else to x: 18 significant digits hold 9 in a row (a point splits
    # them in two at most), which a plain search finds at C speed before the pattern runs
    _RUNS = bytes.maketrans(bytes(range(256)), b"x" * 48 + b"D" * 10 + b"x" * 198)
    _NINE = b"D" * 9

    def search(self, data: bytes) -> bool:
        if (b"e-" in data or b"E-" in data) and self._EXPONENT.search(data):
            return True
        if self._ZEROS in data:
            return True
        if self._NINE not in data.translate(self._RUNS):
            return False
        if not _eighteen_digits(data):
            return False
        return self._digits.search(data) is not None


def _eighteen_digits(data: bytes) -> bool:
    """Whether some run of digits and points in ``data`` holds 18 digits from its first
    non-zero digit on: every number of 18 significant digits does (a point splits its digits,
    a leading ``0.0…`` is not counted), so a block without one keeps the fast path without the
    pattern's search, which costs about ten times these array passes (a double's repr,
    ``0.28307907973981217``, has 17). A run found is only a candidate (a string of digits, a
    version number): the pattern decides."""
    import numpy as np

    a = np.frombuffer(data, dtype=np.uint8)
    digit = (a - 48) < 10  # uint8 arithmetic wraps: every other byte lands above 9
    run = digit | (a == 46)
    edges = np.flatnonzero(np.diff(run.view(np.int8), prepend=0, append=0))
    starts, ends = edges[0::2], edges[1::2]
    long = (ends - starts) >= 18
    if not long.any():
        return False
    starts, ends = starts[long], ends[long]
    nonzero = np.flatnonzero((a - 49) < 9)  # the digits 1-9
    if not nonzero.size:
        return False
    at = np.searchsorted(nonzero, starts)
    inside = at < nonzero.size
    first = np.where(inside, nonzero[np.minimum(at, nonzero.size - 1)], ends)
    first = np.minimum(first, ends)  # a run of zeros and points alone has no significant digit
    counted = np.concatenate(([0], np.cumsum(digit, dtype=np.int64)))
    return bool(((counted[ends] - counted[first]) >= 18).any())


#: :class:`_LongNumber` for any record, and for records whose fields hold no array.
LONG_NUMBER = _LongNumber(arrays=True)
LONG_NUMBER_FLAT = _LongNumber(arrays=False)


class LineBlocks:
    """``(first line number, block, LF count)`` for a regular file, each block whole
    LF-terminated lines (the file's last line may lack its LF). ``size`` counts the bytes
    read so far; after a complete iteration ``sha256`` and ``size`` describe the whole
    file."""

    def __init__(self, path: str | os.PathLike, block: int | None = None) -> None:
        self.path = path
        self.block = block or BLOCK
        self.size = 0
        self._hash = hashlib.sha256()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def __iter__(self) -> Iterator[tuple[int, bytes, int]]:
        no = 1
        for block in self.blocks():
            n = block.count(b"\n")
            yield no, block, n
            no += n

    def blocks(self) -> Iterator[bytes]:
        """The blocks alone, each whole LF-terminated lines (the file's last may lack its LF),
        not counted.

        The file is read :data:`READ` bytes at a time (or a block, if larger). A file of at
        least that size is hashed on a thread of its own while the caller works on the
        blocks (hashlib lets go of the interpreter lock over a large buffer); the hash is
        complete when the iteration ends."""
        fd = open_regular(self.path)
        hasher: _Hasher | None = None
        block = self.block
        try:
            rest = b""  # the bytes after the last block's end: less than a block, or one line
            while chunk := os.read(fd, max(READ, block)):
                self.size += len(chunk)
                if hasher is None and len(chunk) >= READ:
                    hasher = _Hasher(self._hash)
                if hasher is None:
                    self._hash.update(chunk)
                else:
                    hasher.put(chunk)
                pos, n = 0, len(chunk)
                while True:  # the next block: rest, then chunk[pos:cut] up to a line end
                    limit = pos + max(block - len(rest), 1)
                    if limit >= n:
                        break
                    cut = chunk.rfind(b"\n", pos, limit) + 1
                    if cut == 0:  # a line longer than a block: keep it whole
                        cut = chunk.find(b"\n", limit) + 1
                        if cut == 0:
                            break
                    yield rest + chunk[pos:cut] if rest else chunk[pos:cut]
                    rest, pos = b"", cut
                rest += chunk[pos:] if pos else chunk
            if hasher is not None:
                hasher.close()
                hasher = None
            cut = rest.rfind(b"\n") + 1
            if cut:
                yield rest[:cut]
            if cut < len(rest):
                yield rest[cut:]
        finally:
            if hasher is not None:
                hasher.close()
            os.close(fd)


class _Hasher:
    """Feeds chunks to a hash object on a thread of its own, in the order given."""

    def __init__(self, hash_object) -> None:
        import threading
        from queue import SimpleQueue

        self._queue: SimpleQueue = SimpleQueue()
        self._thread = threading.Thread(target=self._run, args=(hash_object,), daemon=True)
        self._thread.start()

    def _run(self, hash_object) -> None:
        get, update = self._queue.get, hash_object.update
        while (chunk := get()) is not None:
            update(chunk)

    def put(self, chunk: bytes) -> None:
        self._queue.put(chunk)

    def close(self) -> None:
        """Wait until every chunk given is hashed."""
        self._queue.put(None)
        self._thread.join()


def _utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _colons(data: bytes) -> int:
    """How many ``:`` bytes ``data`` holds (numpy's vectorized comparison: about four times
    ``bytes.count``'s speed on a block)."""
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 58))


def _keys(data: bytes) -> int:
    """How many ``"`` [whitespace] ``:`` sequences ``data`` holds: at least its key count."""
    n = data.count(b'":')
    if b'" ' in data or b'"\t' in data or b'"\r' in data:
        n += len(_SPACED_KEY.findall(data))
    return n


def _flat(struct: type) -> bool:
    """Whether no field of ``struct`` can hold a JSON object (only strings, numbers, booleans,
    null, literals and arrays of those): then a record's only object is the record itself."""
    import msgspec.inspect as mi

    scalar = (
        mi.StrType, mi.IntType, mi.FloatType, mi.BoolType, mi.NoneType, mi.LiteralType,
    )  # fmt: skip
    arrays = (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)

    def flat(t) -> bool:
        if isinstance(t, scalar):
            return True
        if isinstance(t, arrays):
            return flat(t.item_type)
        if isinstance(t, mi.UnionType):
            return all(map(flat, t.types))
        return False

    info = mi.type_info(struct)
    return isinstance(info, mi.StructType) and all(flat(f.type) for f in info.fields)


@lru_cache(maxsize=64)
def _decoders(struct: type) -> tuple[Any, Any, Any, bool]:
    """The decoders of ``struct``, of a JSON array of them and of an array of raw values, and
    :func:`_flat`: made once per struct class (a decoder holds no state between documents;
    inspecting and compiling a struct took a few milliseconds a file, more than reading a
    small one)."""
    import msgspec

    return (
        msgspec.json.Decoder(struct),
        msgspec.json.Decoder(list[struct]),
        msgspec.json.Decoder(list[msgspec.Raw]),
        _flat(struct),
    )


class TypedLines:
    """``(line number, record)`` for each line of a JSONL file that yields a record: an
    instance of ``struct`` (decoded on the fast path) or whatever ``strict`` returned (lines
    for which it returns None are left out); :meth:`blocks` gives them a block at a time. See
    the module docstring for the rules."""

    def __init__(
        self,
        path: str | os.PathLike,
        struct: type,
        strict: Callable[[int, bytes], Any],
        block: int | None = None,
    ) -> None:
        import msgspec

        self.source = LineBlocks(path, block)
        self.strict = strict
        self._decoder, self._array, self._raw, self._flat = _decoders(struct)
        self._errors = (msgspec.DecodeError, msgspec.ValidationError)
        self._fields = len(struct.__struct_fields__)
        self._first = 1
        self._block = b""
        self._lines: list[bytes] | None = None
        self._open = 0  # the line number of the block's last line when no LF ends it

    @property
    def size(self) -> int:
        return self.source.size

    @property
    def sha256(self) -> str:
        return self.source.sha256

    def _whole_block(self, first: int, block: bytes) -> tuple[list | None, int]:
        """``(records or None, the block's LF count)``."""
        if not block.endswith(b"\n"):  # the file's last line, without its LF
            return None, 0
        if self._flat:
            return self._flat_block(first, block)
        # One JSON array whose elements are the lines: a blank line, a second value on a line
        # or a value running on over a line break (a raw LF is never inside a JSON string) is
        # malformed, so n elements are exactly the n lines. Each LF gains one byte, so the
        # lengths count the lines.
        body = block[:-1].replace(b"\n", b",\n")
        n = len(body) - len(block) + 2
        if (first == 1 and block.startswith(BOM)) or LONG_NUMBER.search(block):
            return None, n
        if _colons(block) != self._fields * n and _keys(block) != self._fields * n:
            return None, n
        if not _utf8(block):
            return None, n
        doc = b"".join((b"[", body, b"]"))
        try:
            records = self._array.decode(doc)
        except self._errors:
            return None, n
        if len(records) != n:
            return None, n
        # The elements must be the lines: joined by LF, the raw elements give back the block
        # only if none holds a line break, and then element k is line k (module docstring).
        if b"\n".join(self._raw.decode(doc)) != block[:-1]:
            return None, n
        return records, n

    def _flat_block(self, first: int, block: bytes) -> tuple[list | None, int]:
        """:meth:`_whole_block` for a record that can hold no object below its top: the block
        is decoded as a sequence of JSON values (``decode_lines``, which takes any whitespace,
        line breaks included, between values), accepted when there are as many values as
        lines and every line starts with ``{``.

        Then each line is exactly one record: the byte after an LF is outside any string (a
        raw LF is never inside a JSON string), so each line's ``{`` starts an object, and that
        object is a record, not a member or element of one (the record's fields hold no
        object: the typed decode refuses one). The n lines thus start n distinct records; as
        there are only n, record k starts at line k's first byte and ends before line k + 1
        starts, and only whitespace follows it on its line."""
        import numpy as np

        a = np.frombuffer(block, dtype=np.uint8)
        ends = np.flatnonzero(a == 10)  # the LFs; the block ends with one
        n = int(ends.size)
        if (first == 1 and block.startswith(BOM)) or LONG_NUMBER.search(block):
            return None, n
        if a[0] != 123 or not (a[ends[:-1] + 1] == 123).all():
            return None, n
        if _colons(block) != self._fields * n and _keys(block) != self._fields * n:
            return None, n
        if not _utf8(block):
            return None, n
        try:
            records = self._decoder.decode_lines(block)
        except self._errors:
            return None, n
        if len(records) != n:
            return None, n
        return records, n

    def _line(self, no: int, raw: bytes) -> Any:
        if (
            (raw.count(b":") == self._fields or _keys(raw) == self._fields)
            and _utf8(raw)
            and not (no == 1 and raw.startswith(BOM))
            and b"\r" not in raw  # a CRLF ending, a lone CR: the strict reader's to refuse
            and not LONG_NUMBER.search(raw)
        ):
            try:
                return self._decoder.decode(raw)
            except self._errors:
                pass
        return self._strict(no, raw)

    def _strict(self, no: int, raw: bytes) -> Any:
        if no == self._open and raw.endswith(b"\r"):  # a lone CR ends the file
            return self.strict(no, raw, False)
        return self.strict(no, raw)

    def _split(self) -> list[bytes]:
        if self._lines is None:
            lines = self._block.split(b"\n")
            if self._block.endswith(b"\n"):
                lines.pop()
            self._lines = lines
        return self._lines

    def strict_at(self, no: int) -> Any:
        """Line ``no`` of the block being read, through the strict reader."""
        return self._strict(no, self._split()[no - self._first])

    def blocks(self) -> Iterator[tuple[int, list, bool]]:
        """``(first line number, records, typed)`` per block: ``records[k]`` is line
        ``first + k``'s record (a ``struct`` instance, what ``strict`` returned, or None);
        ``typed`` says every one of them is a ``struct`` instance decoded in one go."""
        first = 1
        for block in self.source.blocks():
            self._first, self._block, self._lines = first, block, None
            self._open = 0 if block.endswith(b"\n") else first + block.count(b"\n")
            if b"\r" in block:  # a CRLF line ending is the strict reader's to refuse
                records, n = None, block.count(b"\n")
            else:
                records, n = self._whole_block(first, block)
            if records is not None:
                yield first, records, True
            else:
                lines = self._split()
                yield (
                    first,
                    [self._line(no, raw) for no, raw in enumerate(lines, start=first)],
                    False,
                )
            first += n

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        for first, records, _ in self.blocks():
            for no, record in enumerate(records, start=first):
                if record is not None:
                    yield no, record
