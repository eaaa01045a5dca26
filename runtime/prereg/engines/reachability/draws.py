"""The rejection-sampled SHA-256 draw scheme.

A stream is a message template with a ``{counter}`` placeholder (its other placeholders are
already filled).  ``draw(bound)`` hashes the UTF-8 message for the current counter with
SHA-256 (the counter increments after each hash), reads the first 4 bytes as a big-endian
unsigned 32-bit ``v``, and returns ``v mod bound`` when ``v < floor(2^32 / bound) · bound``;
otherwise it hashes again with the next counter.  No global state: a stream is a pure
function of its message.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import struct

_TWO32 = 1 << 32
_sha256 = hashlib.sha256
_N_COUNTERS = 4096
_COUNTERS = [b"%d" % n for n in range(_N_COUNTERS)]  # decimal counters, precomputed
_mod = operator.mod


@functools.lru_cache(maxsize=256)
def _heads(n: int) -> struct.Struct:
    """The struct reading the first four bytes (big-endian) of each of n joined digests."""
    return struct.Struct(">" + "I28x" * n)


def split_counter_template(message: str) -> tuple[bytes, bytes]:
    """Split a message (other placeholders filled, ``{counter}`` literal) around the counter."""
    head, sep, tail = message.partition("{counter}")
    if not sep:
        raise ValueError("a draw message needs a {counter} placeholder")
    if "{counter}" in tail:
        raise ValueError("a draw message may hold {counter} only once")
    return head.encode("utf-8"), tail.encode("utf-8")


class Stream:
    """One seeded stream of draws (see the module docstring).

    Hash values are computed in batches of exactly the draws asked for (the values for
    counters c, c+1, ... do not depend on how they are consumed; a rejected value costs one
    more), so that no hash is computed ahead and left unused.
    """

    __slots__ = ("_head", "_tail", "_buf", "_pos", "_next", "_hasher")

    def __init__(self, head: bytes, tail: bytes = b""):
        self._head = head
        self._tail = tail
        self._hasher = None  # SHA-256 state after the message head
        self._buf: list[int] = []
        self._pos = 0
        self._next = 0  # counter of the next value to compute

    @classmethod
    def from_message(cls, message: str) -> Stream:
        head, tail = split_counter_template(message)
        return cls(head, tail)

    @property
    def counter(self) -> int:
        """The counter the next hash will use (hashes already consumed)."""
        return self._next - (len(self._buf) - self._pos)

    def reserve(self, k: int) -> None:
        """Compute ahead so that at least ``k`` values are buffered."""
        have = len(self._buf) - self._pos
        if have >= k:
            return
        c = self._next
        more = k - have
        buf = self._buf[self._pos :]
        if self._hasher is None:
            self._hasher = _sha256(self._head)
        end = c + more
        if end <= _N_COUNTERS:
            suffixes = _COUNTERS[c:end]
        else:
            suffixes = [b"%d" % n for n in range(c, end)]
        if self._tail:
            tail = self._tail
            suffixes = [x + tail for x in suffixes]
        copy = self._hasher.copy
        digests = []
        append = digests.append
        for x in suffixes:
            h = copy()
            h.update(x)
            append(h.digest())
        # the first four bytes of each 32-byte digest, big-endian, in one call
        buf.extend(_heads(more).unpack(b"".join(digests)))
        self._buf = buf
        self._pos = 0
        self._next = end

    def draw(self, bound: int) -> int:
        if bound < 1:
            raise ValueError("draw bound must be at least 1")
        limit = _TWO32 // bound * bound
        while True:
            if self._pos >= len(self._buf):
                self.reserve(1)
            v = self._buf[self._pos]
            self._pos += 1
            if v < limit:
                return v % bound

    def draws(self, bounds) -> list[int]:
        """``[draw(b) for b in bounds]``, in one call.

        A value below ``2^32 − b`` is below ``floor(2^32 / b) · b`` (which exceeds
        ``2^32 − b``), so when every one of the next ``len(bounds)`` values is below
        ``2^32 − max(bounds)`` none is rejected and draw k is value k mod bound k; otherwise
        the draws are taken one by one."""
        bounds = bounds if isinstance(bounds, (list, tuple, range)) else list(bounds)
        n = len(bounds)
        if not n:
            return []
        if min(bounds) < 1:
            raise ValueError("draw bound must be at least 1")
        if len(self._buf) - self._pos < n:
            self.reserve(n)
        pos = self._pos
        vals = self._buf[pos : pos + n]
        if max(vals) < _TWO32 - max(bounds):
            self._pos = pos + n
            return list(map(_mod, vals, bounds))
        out = []
        append = out.append
        for bound in bounds:
            limit = _TWO32 // bound * bound
            while True:
                if self._pos >= len(self._buf):
                    self.reserve(1)
                v = self._buf[self._pos]
                self._pos += 1
                if v < limit:
                    append(v % bound)
                    break
        return out


def fill(template: str, **values) -> str:
    """Fill named placeholders but keep ``{counter}`` literal."""
    return template.format(counter="{counter}", **values)


def fisher_yates(items: list, stream: Stream) -> list:
    """In place: for k from len−1 down to 1, j = draw(k+1), swap k and j."""
    n = len(items)
    if n < 2:
        return items
    for k, j in zip(range(n - 1, 0, -1), stream.draws(range(n, 1, -1)), strict=True):
        items[k], items[j] = items[j], items[k]
    return items
