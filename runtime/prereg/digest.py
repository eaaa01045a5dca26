"""Canonical JSON (RFC 8785) and the SHA-256 digests built on it.

The project has one canonical form: RFC 8785, the JSON Canonicalization Scheme (keys sorted
by UTF-16 code units, no whitespace, ECMAScript number formatting, non-ASCII kept, no NaN).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import rfc8785

PREFIX = "sha256:"
CHUNK = 1 << 20


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical bytes of a JSON value (refuses NaN and infinities)."""
    return rfc8785.dumps(value)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """``sha256:`` + hex SHA-256 of the canonical JSON of ``value``."""
    return PREFIX + sha256_hex(canonical_json(value))


def digest_hex(value: Any) -> str:
    """Bare hex SHA-256 of the canonical JSON of ``value``."""
    return sha256_hex(canonical_json(value))


def file_sha256(path: str | Path, chunk: int = CHUNK) -> tuple[str, int]:
    """(hex SHA-256, byte size) of a file, read in bounded chunks."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb", buffering=0) as fh:
        buf = bytearray(chunk)
        view = memoryview(buf)
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            h.update(view[:n])
            size += n
    return h.hexdigest(), size
