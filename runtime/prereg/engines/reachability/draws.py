"""The rejection-sampled SHA-256 draw scheme.

A stream is a message template with a ``{counter}`` placeholder (its other placeholders are
already filled).  ``draw(bound)`` hashes the UTF-8 message for the current counter with
SHA-256 (the counter increments after each hash), reads the first 4 bytes as a big-endian
unsigned 32-bit ``v``, and returns ``v mod bound`` when ``v < floor(2^32 / bound) · bound``;
otherwise it hashes again with the next counter.  No global state: a stream is a pure
function of its message.
"""

from __future__ import annotations

import hashlib

_TWO32 = 1 << 32
_sha256 = hashlib.sha256


def split_counter_template(message: str) -> tuple[bytes, bytes]:
    """Split a message (other placeholders filled, ``{counter}`` literal) around the counter."""
    head, sep, tail = message.partition("{counter}")
    if not sep:
        raise ValueError("a draw message needs a {counter} placeholder")
    if "{counter}" in tail:
        raise ValueError("a draw message may hold {counter} only once")
    return head.encode("utf-8"), tail.encode("utf-8")


class Stream:
    """One seeded stream of draws (see the module docstring)."""

    __slots__ = ("_head", "_tail", "counter")

    def __init__(self, head: bytes, tail: bytes = b"", counter: int = 0):
        self._head = _sha256(head)
        self._tail = tail
        self.counter = counter

    @classmethod
    def from_message(cls, message: str) -> Stream:
        head, tail = split_counter_template(message)
        return cls(head, tail)

    def draw(self, bound: int) -> int:
        if bound < 1:
            raise ValueError("draw bound must be at least 1")
        limit = _TWO32 // bound * bound
        head = self._head
        tail = self._tail
        while True:
            h = head.copy()
            h.update(b"%d%b" % (self.counter, tail))
            self.counter += 1
            v = int.from_bytes(h.digest()[:4], "big")
            if v < limit:
                return v % bound


def fill(template: str, **values) -> str:
    """Fill named placeholders but keep ``{counter}`` literal."""
    return template.format(counter="{counter}", **values)


def fisher_yates(items: list, stream: Stream) -> list:
    """In place: for k from len−1 down to 1, j = draw(k+1), swap k and j."""
    for k in range(len(items) - 1, 0, -1):
        j = stream.draw(k + 1)
        items[k], items[j] = items[j], items[k]
    return items
