"""Canonical JSON (RFC 8785) and the SHA-256 digests built on it.

The project has one canonical form: RFC 8785, the JSON Canonicalization Scheme (keys sorted
by UTF-16 code units, no whitespace, ECMAScript number formatting, non-ASCII kept, no NaN).
"""

from __future__ import annotations

import hashlib
import json
import re
from io import BytesIO
from pathlib import Path
from typing import Any

import rfc8785
from rfc8785._impl import _serialize_float

PREFIX = "sha256:"
CHUNK = 1 << 20


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical bytes of a JSON value (refuses NaN and infinities)."""
    out = _fast_canonical(value)
    return out if out is not None else rfc8785.dumps(value)


# -- the same bytes at the C JSON encoder's speed ---------------------------------------------
#
# rfc8785.dumps writes every value from Python, node by node.  With ``ensure_ascii=False`` and
# compact separators, the stdlib encoder writes strings, integers, booleans and null exactly as
# RFC 8785 does (the same escapes: \" \\ \b \f \n \r \t and \u00xx, lowercase, for the other
# control characters; everything else literal); what differs is key order (RFC 8785 sorts by
# UTF-16 code units) and numbers with a fraction or exponent (ECMAScript formatting).  So the
# value is copied once with every object's keys in RFC 8785 order and every float replaced by a
# marker string ("\x00" and its index: no other string may hold a NUL), the copy is encoded,
# and each marker is replaced by the float as rfc8785 itself writes it.  Anything unusual (a
# NUL in a string, a type rfc8785 treats specially or refuses, an integer out of its range, a
# non-finite float, a string that is not UTF-8) is left to rfc8785.dumps, which refuses the
# same values with its own errors.  The tests compare the two on generated values.

_INT_LIMIT = 2**53 - 1
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_MARKER = re.compile(r'"\\u0000(\d+)"')


class _Unusual(Exception):
    pass


_INF = float("inf")


def _first(item: tuple[str, Any]) -> str:
    return item[0]


def _utf16_key(item: tuple[str, Any]) -> bytes:
    return item[0].encode("utf-16be")


def _copy(value: Any, floats: list[float]) -> Any:
    """``value`` ready for the stdlib encoder; the type tests run in rfc8785's order and
    convert as it does (``bool()``, ``int()``, ``float()``, ``list()``, ``dict()``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        value = int(value)
        if value > _INT_LIMIT or value < -_INT_LIMIT:
            raise _Unusual
        return value
    if isinstance(value, str):
        value = str.__str__(value)  # a subclass's characters, as rfc8785 writes them
        if "\x00" in value:
            raise _Unusual
        return value
    if isinstance(value, float):
        value = float(value)
        if value != value or value in (_INF, -_INF):
            raise _Unusual
        floats.append(value)
        return f"\x00{len(floats) - 1}"
    if isinstance(value, list | tuple):
        return [_copy(v, floats) for v in value]
    if isinstance(value, dict):
        items = list(dict(value).items())
        for k, _ in items:
            if type(k) is not str or "\x00" in k:
                raise _Unusual
        if all(k.isascii() for k, _ in items):
            items.sort(key=_first)  # ASCII: code points order as UTF-16 code units do
        else:
            items.sort(key=_utf16_key)
        return {k: _copy(v, floats) for k, v in items}  # the encoder keeps this order
    raise _Unusual  # a type rfc8785 refuses: its own error


def _float_text(f: float) -> str:
    sink = BytesIO()
    _serialize_float(f, sink)
    return sink.getvalue().decode("ascii")


def _fast_canonical(value: Any) -> bytes | None:
    floats: list[float] = []
    try:
        copy = _copy(value, floats)
    except (_Unusual, RecursionError, UnicodeEncodeError):
        return None
    text = _ENCODE(copy)
    if floats:
        texts = {}
        for f in floats:
            if f not in texts:
                texts[f] = _float_text(f)
        text = _MARKER.sub(lambda m: texts[floats[int(m.group(1))]], text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


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
