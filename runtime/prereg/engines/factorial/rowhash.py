"""Keyed 64-bit words of many texts at once: ``simulate``'s per-row random words.

A row's words depend on the scenario, the seed and the row's name alone, and a batch of rows
is worked out by numpy, a few array operations per 8 bytes of name, instead of a digest per
row.  The definition (every operation modulo 2⁶⁴):

- the key ``(k0, k1)`` of a purpose (``rows``, or ``pair:<what>`` for an item's latent) is
  the first two little-endian 64-bit words of the SHA-256 of ``"<scenario>:<seed>:<purpose>"``;
- a text's UTF-8 bytes (``L`` of them), padded with zero bytes to a multiple of 8, are read
  as little-endian words ``m₀ … m_{W−1}``; from ``h = k0 ⊕ L·γ``, each word gives
  ``h = fmix(h ⊕ mᵢ)``, and the text's key is ``r = fmix(h ⊕ k1)``;
- the text's word ``j`` (j = 0, 1, …) is ``mix(r + (j + 1)·γ)``,

where ``γ = 0x9E3779B97F4A7C15``, ``fmix`` is MurmurHash3's 64-bit finalizer and ``mix`` is
SplitMix64's output function (both bijections of 64-bit words, with full avalanche).  Two
texts of the same length that differ in one 8-byte word never share a key (each step is a
bijection of ``h``); any other two share one with chance about 2⁻⁶⁴.  Not a cryptographic
hash: it draws simulated data, which nobody has a reason to attack.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

GAMMA = 0x9E3779B97F4A7C15
_M64 = (1 << 64) - 1
#: Bytes of padded names worked out at once (longer names are taken a slice at a time).
_SPAN_BYTES = 1 << 24


def key(scenario_id: str, seed, purpose: str) -> tuple[int, int]:
    """The two 64-bit key words of a scenario, seed and purpose."""
    d = hashlib.sha256(f"{scenario_id}:{seed}:{purpose}".encode()).digest()
    return int.from_bytes(d[:8], "little"), int.from_bytes(d[8:16], "little")


def _fmix(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's finalizer, in place."""
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function, in place."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def utf8(texts: Sequence[str], strict: bool = False) -> tuple[list, np.ndarray]:
    """(values for ``numpy.array(…, dtype="S…")``, byte lengths): the texts themselves when
    they are ASCII, else their UTF-8 bytes (lone surrogates passed through, or with
    ``strict`` refused: UnicodeEncodeError)."""
    if "".join(texts).isascii():
        out: list = texts if isinstance(texts, list) else list(texts)
    else:
        errors = "strict" if strict else "surrogatepass"
        out = [t.encode("utf-8", errors) for t in texts]
    return out, np.fromiter(map(len, out), dtype=np.int64, count=len(out))


def padded(values: Sequence, width: int) -> np.ndarray:
    """ASCII texts or bytes as a zero-padded ``S<width>`` array."""
    if not len(values):
        return np.zeros(0, dtype=f"S{max(width, 1)}")
    return np.array(values, dtype=f"S{max(width, 1)}")


def text_keys(texts: Sequence[str], k0: int, k1: int) -> np.ndarray:
    """Each text's key ``r`` (uint64) under the key ``(k0, k1)``."""
    values, lens = utf8(texts)
    return keys_of(values, lens, k0, k1)


def keys_of(
    values: Sequence, lens: np.ndarray, k0: int, k1: int, array: np.ndarray | None = None
) -> np.ndarray:
    """The keys of texts given as :func:`utf8` gives them (``array``: the same as
    :func:`padded` to a multiple of 8 bytes, when the caller has it)."""
    n = lens.size
    out = np.empty(n, dtype=np.uint64)
    if n == 0:
        return out
    if array is not None or n * (int(lens.max()) + 8) <= _SPAN_BYTES:
        spans = [None]
    else:  # long names: the rows in order of length, in slices of bounded bytes
        order = np.argsort(lens, kind="stable")
        sorted_lens = lens[order]
        spans, s = [], 0
        while s < n:
            lo, hi = s + 1, n  # the longest slice from s whose padded bytes fit
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if (mid - s) * (int(sorted_lens[mid - 1]) + 8) <= _SPAN_BYTES:
                    lo = mid
                else:
                    hi = mid - 1
            spans.append(order[s:lo])
            s = lo
    for at in spans:
        mine = lens if at is None else lens[at]
        vals = values if at is None else [values[i] for i in at.tolist()]
        h = (mine.astype(np.uint64) * np.uint64(GAMMA)) ^ np.uint64(k0)
        count = (mine + 7) // 8
        words = int(count.max())
        if words:
            whole = padded(vals, 8 * words) if array is None or at is not None else array
            m = whole.view("<u8").reshape(mine.size, -1)
            uneven = int(count.min()) != words
            for i in range(words):
                if uneven:
                    live = np.flatnonzero(count > i)
                    h[live] = _fmix(h[live] ^ m[live, i])
                else:
                    h ^= m[:, i]
                    _fmix(h)
        h ^= np.uint64(k1)
        if at is None:
            out[:] = _fmix(h)
        else:
            out[at] = _fmix(h)
    return out


def words(r: np.ndarray, k: int, first: int = 0) -> np.ndarray:
    """Words ``first … first + k − 1`` of texts with keys ``r`` (``len(r)`` × ``k``)."""
    out = np.empty((r.size, k), dtype=np.uint64)
    for j in range(k):
        x = r + np.uint64(((first + j + 1) * GAMMA) & _M64)
        out[:, j] = _mix(x)
    return out
