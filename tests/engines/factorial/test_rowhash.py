"""simulate's per-row random words (engines/factorial/rowhash.py), against a plain-Python
reading of the definition in the module's docstring (integers modulo 2**64, MurmurHash3's
fmix64 and SplitMix64's output function as their authors publish them), whatever the batch,
the names' lengths or their characters; and as random numbers: uniform (scipy's
Kolmogorov–Smirnov and chi-square tests), every bit fair, no correlation between a row's words
or between neighbouring rows, one changed character changing half the key's bits."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from scipy import stats

from prereg.engines.factorial import rowhash
from prereg.engines.factorial.draws import row_words, uniforms

M = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def fmix64(x: int) -> int:  # MurmurHash3 (Appleby), finalizer of the 64-bit hash
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M
    return x ^ (x >> 33)


def splitmix64(x: int) -> int:  # SplitMix64 (Steele, Lea, Flood 2014), output function
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M
    return x ^ (x >> 31)


def reference(scenario: str, seed, purpose: str, text: str, k: int) -> list[int]:
    d = hashlib.sha256(f"{scenario}:{seed}:{purpose}".encode()).digest()
    k0, k1 = int.from_bytes(d[:8], "little"), int.from_bytes(d[8:16], "little")
    b = text.encode("utf-8", "surrogatepass")
    h = k0 ^ ((len(b) * GAMMA) & M)
    b += bytes(-len(b) % 8)
    for i in range(0, len(b), 8):
        h = fmix64(h ^ int.from_bytes(b[i : i + 8], "little"))
    r = fmix64(h ^ k1)
    return [splitmix64((r + (j + 1) * GAMMA) & M) for j in range(k)]


TEXTS = [
    "",
    "a",
    "abcdefg",
    "abcdefgh",  # exactly one word
    "abcdefghi",
    "x" * 17,
    "row-\u00e9",  # two-byte UTF-8
    "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8",
    "\U0001f600 emoji",
    "a\x00",  # a NUL is a byte like any other: not the padding
    "a\x00\x00",
    "tab\there",
    'quote"and\\slash',
    "\ud800lone",  # a lone surrogate (passed through as its three bytes)
    "y" * 300,
] + [f"tst-a-pa-plain-{i:04d}" for i in range(40)]


@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_words_are_the_documented_definitions(ascii_only):
    texts = [t for t in TEXTS if t.isascii()] if ascii_only else TEXTS
    want = np.array([reference("s", 7, "rows", t, 6) for t in texts], dtype=np.uint64)
    k0, k1 = rowhash.key("s", 7, "rows")
    got = rowhash.words(rowhash.text_keys(texts, k0, k1), 6)
    assert got.dtype == np.uint64 and got.shape == (len(texts), 6)
    np.testing.assert_array_equal(got, want)
    # words first … first + k − 1 are the same words
    np.testing.assert_array_equal(
        rowhash.words(rowhash.text_keys(texts, k0, k1), 2, 3), want[:, 3:5]
    )


def test_a_texts_words_do_not_depend_on_the_others_or_the_slices(monkeypatch):
    """Each text alone, the texts in reverse, and long names taken a few at a time (the
    slices of bounded bytes, here 64) give each text the same words."""
    k0, k1 = rowhash.key("s", 7, "rows")
    whole = rowhash.text_keys(TEXTS, k0, k1)
    alone = np.array([rowhash.text_keys([t], k0, k1)[0] for t in TEXTS])
    np.testing.assert_array_equal(whole, alone)
    np.testing.assert_array_equal(rowhash.text_keys(TEXTS[::-1], k0, k1), whole[::-1])
    monkeypatch.setattr(rowhash, "_SPAN_BYTES", 64)
    np.testing.assert_array_equal(rowhash.text_keys(TEXTS, k0, k1), whole)


def test_row_words_name_a_tuple_by_the_json_of_its_list_and_key_by_scenario_and_seed():
    got = row_words("sc", 3, [("q1", "ann"), "plain", 12], 5)
    want = [
        reference("sc", 3, "rows", t, 5) for t in ('["q1","ann"]', "plain", "12")
    ]  # fmt: skip
    np.testing.assert_array_equal(got, np.array(want, dtype=np.uint64))
    names = [f"r{i}" for i in range(1000)]
    base = row_words("sc", 3, names, 4)
    for other in (row_words("sc", 4, names, 4), row_words("sd", 3, names, 4)):
        assert not np.any(other == base)  # 4,000 words, none shared by chance (2**-64 each)


N = 200_000


@pytest.fixture(scope="module")
def sequential():
    """Words 0 … 5 of 200,000 names that differ only in their last digits."""
    names = [f"tst-b-pc-json-{i:06d}" for i in range(N)]
    return row_words("position-bias", 1, names, 6)


def test_the_uniforms_are_uniform(sequential):
    u = uniforms(sequential)
    for j in range(u.shape[1]):
        assert stats.kstest(u[:, j], "uniform").pvalue > 1e-4, j
        counts = np.bincount((u[:, j] * 256).astype(np.int64), minlength=256)
        assert stats.chisquare(counts).pvalue > 1e-4, j


def test_every_bit_is_fair(sequential):
    """Each of the 64 × 6 bit positions: ones counted over 200,000 rows; the sum of their
    squared z scores is chi-square with 384 degrees of freedom under fair, independent bits."""
    ones = np.unpackbits(sequential.view(np.uint8), axis=1).sum(axis=0)
    assert ones.size == 384
    z = (ones - N / 2) / math.sqrt(N / 4)
    assert stats.chi2(384).sf(float(np.sum(z**2))) > 1e-4


def test_no_correlation_between_words_or_neighbours(sequential):
    """Pearson correlations of the normals made from the words: between a row's words, and
    between a row's word and the next row's; each within 4.5 SEs (1/sqrt(n)) of zero."""
    z = stats.norm.ppf(uniforms(sequential) + 2.0**-54)
    se = 1 / math.sqrt(N)
    r = np.corrcoef(z.T)
    assert np.all(np.abs(r[np.triu_indices(6, 1)]) < 4.5 * se)
    for j in range(6):
        assert abs(np.corrcoef(z[:-1, j], z[1:, j])[0, 1]) < 4.5 * se, j


def test_one_changed_character_changes_half_the_keys_bits():
    """Avalanche: names that differ in one character (at any place) have keys differing in
    32 bits on average (binomial(64, 1/2): mean within 4 SEs over 20,000 pairs)."""
    rng = np.random.default_rng(5)
    a, b = [], []
    for _ in range(20_000):
        t = "".join(rng.choice(list("abcdefghij0123456789-"), int(rng.integers(1, 40))))
        at = int(rng.integers(0, len(t)))
        a.append(t)
        b.append(t[:at] + ("x" if t[at] != "x" else "y") + t[at + 1 :])
    k0, k1 = rowhash.key("s", 1, "rows")
    diff = rowhash.text_keys(a, k0, k1) ^ rowhash.text_keys(b, k0, k1)
    flips = np.unpackbits(diff.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    assert abs(flips.mean() - 32) < 4 * math.sqrt(16 / flips.size)
    assert flips.min() > 0  # a change in one word never keeps the key
