"""Reading a prepared folder's corpus and gold file at C speed, with the strict reader's refusals.

``score`` (and ``simulate``) read two things from a prepared folder's large files: each corpus
row's id, split and request ids, in file order, and the gold object with the digest of its
canonical JSON (without ``specDigest``), to compare with the preregistration's
``goldDigest``.  The strict reader (:func:`prereg.records.loads_strict` per line and
``json.dumps`` for the digest) does both in pure Python.  The two functions here do the same
with msgspec when they can prove that the strict reader would accept the input and find the
same values; when they cannot (a file ``prepare`` did not write, or changed), they return None
and the caller runs the strict reader, whose refusals and messages are unchanged.

Corpus (:func:`corpus_rows`).  A prepared corpus line is the record
``{id, familyId, split, slice, input {payload}, requests [{id, arm, definitionId}],
localOutcome: null, provenance {generatorId, seed, outputDigest}}`` in that key order, written
compactly by ``json.dumps`` (:mod:`.generate`): every value a string or null.  The fast path
decodes the lines into that exact shape (unknown fields forbidden; no number fits it, so no
NaN, overflow or huge integer passes) and accepts them only when encoding the records again,
one line each, gives back exactly the file's bytes: so every line is one JSON object, the file
ends with LF and has no blank line, and no key occurs twice (an encoded record has each key
once).  Such a file splits into lines at its LFs alone, as ``str.splitlines`` sees it, unless a
string holds U+0085, U+2028 or U+2029 raw (the encoder escapes every control character): a
file with one of those takes the strict reader.

Gold (:func:`gold_object`).  ``prepare`` writes gold.json as the canonical JSON of the gold
object and a LF.  The fast path decodes it into the gold shape (an object of strings or objects
of strings or objects whose values are strings, 64-bit integers, nulls, and arrays or objects of
those: no float, no boolean, no huge integer) and accepts it only when re-encoding it
canonically gives back exactly the file's bytes; so the file is valid, canonical, and has no
duplicate key (an encoded object has each key once).  The digest is then taken over the same
encoding without the ``specDigest`` member.  msgspec's sorted compact encoding of such values
is byte for byte ``json.dumps`` with sorted keys, compact separators and ``ensure_ascii`` off
(:func:`.canon.canonical_record_json`, the digest ``prepare`` wrote): the same string escapes
and keys in code point order (the tests compare the two encoders over every code point and on
whole prepared folders).
"""

from __future__ import annotations

import hashlib
from operator import attrgetter
from typing import Annotated, Any

import msgspec

from prereg.digest import PREFIX

_SEPARATORS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")  # U+0085, U+2028, U+2029


class _Input(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    payload: str


class _Request(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    arm: str
    definitionId: str  # noqa: N815 (the record's JSON name)


class _Provenance(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    generatorId: str  # noqa: N815
    seed: str
    outputDigest: str  # noqa: N815


class _Row(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    familyId: str  # noqa: N815
    split: str
    slice: str
    input: _Input
    requests: list[_Request]
    localOutcome: None  # noqa: N815
    provenance: _Provenance


_corpus_decoder = msgspec.json.Decoder(_Row)
_ID = attrgetter("id")
_corpus_encoder = msgspec.json.Encoder()
_FAILED = (msgspec.DecodeError, ValueError, RecursionError)


def corpus_records(data: bytes) -> list[_Row] | None:
    """The records of a prepared corpus's bytes, one per line (``id``, ``split``,
    ``requests[].id``, ``provenance.generatorId`` … as attributes), or None when the fast path
    cannot vouch for them (see the module docstring)."""
    if not data.isascii() and any(s in data for s in _SEPARATORS):
        return None
    try:
        rows = _corpus_decoder.decode_lines(data)
    except _FAILED:
        return None
    if not rows or _corpus_encoder.encode_lines(rows) != data:
        return None
    return rows


def corpus_rows(data: bytes) -> list[tuple[str, str, tuple[str, ...]]] | None:
    """``(row id, split, request ids)`` per line of a prepared corpus's bytes, or None when
    the fast path cannot vouch for them (see the module docstring)."""
    rows = corpus_records(data)
    if rows is None:
        return None
    return [(r.id, r.split, tuple(map(_ID, r.requests))) for r in rows]


_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_Scalar = str | _Int | None
_Leaf = str | _Int | None | list[_Scalar] | dict[str, _Scalar]
_Gold = dict[str, str | dict[str, str | dict[str, _Leaf]]]
_gold_decoder = msgspec.json.Decoder(_Gold)
_encode = msgspec.json.Encoder(order="sorted").encode
_EXCLUDED = "specDigest"


def gold_object(raw: bytes) -> tuple[dict[str, Any], str] | None:
    """(the gold object without ``specDigest``, the digest of its canonical JSON) from a
    gold.json's bytes, or None when the fast path cannot vouch for them (see the module
    docstring)."""
    if not raw.endswith(b"\n"):
        return None
    try:
        obj = _gold_decoder.decode(raw)
    except _FAILED:
        return None
    members = [(k, _encode(k) + b":" + _encode(v)) for k, v in sorted(obj.items())]
    if b"{" + b",".join(m for _, m in members) + b"}\n" != raw:
        return None
    rest = b"{" + b",".join(m for k, m in members if k != _EXCLUDED) + b"}"
    gold = {k: v for k, v in obj.items() if k != _EXCLUDED}
    return gold, PREFIX + hashlib.sha256(rest).hexdigest()
