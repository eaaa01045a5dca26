"""Canonical JSON lines of many records that differ in a few values, without a dict per record.

RFC 8785 writes each value alone, whatever its neighbours, and orders an object's members by
their keys only.  So the lines of records that share their keys and all but a few values are
one canonical encoding with a marker string in each varying value (a *template*), and each
record's line is the template with its own values' JSON in the markers' places.  ``items``
splices each row's id and item into one row per cell, ``simulate`` a row's key values,
outcome and numbers into one row per cell and kind (:mod:`.simulation`).  Callers check the
first line of what they splice against :func:`prereg.files.canonical_bytes_nl` and encode
record by record whatever cannot be spliced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prereg.files import canonical_bytes_nl

_MARK = "\ue000{}\ue000"
_SLOT = re.compile('"\ue000(\\d+)\ue000"')
#: The printable ASCII characters JSON writes as they are (all but the quote and the backslash).
_PLAIN_ASCII = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')


def mark(k: int) -> str:
    """The marker string of slot ``k``."""
    return _MARK.format(k)


def plain(text: str) -> bool:
    """Whether JSON writes the string as it is between quotes: every character printable
    (no control character, no lone surrogate), none a quote or a backslash.  Text with a
    character Python does not call printable (a non-ASCII space, a format character) counts
    as not plain too: it is encoded value by value, which writes the same."""
    if text.isascii():  # printable ASCII is 0x20 … 0x7e: nothing is left once they are deleted
        return not text.encode("ascii").translate(None, _PLAIN_ASCII)
    return text.isprintable() and '"' not in text and "\\" not in text


def value_texts(values: Sequence[Any]) -> tuple[list[str], bool]:
    """(texts, raw): the values themselves when every one is a plain string (``raw``: the
    template quotes them), else each value's canonical JSON."""
    if set(map(type, values)) <= {str} and plain("".join(values)):
        return list(values), True
    from prereg.digest import canonical_json

    return [canonical_json(v).decode("utf-8") for v in values], False


def float_texts(x: np.ndarray) -> list[str]:
    """RFC 8785's text of each float: Python's shortest repr where it writes the same digits
    in the same form (fixed notation, less a trailing ``.0``), else the canonical encoder's."""
    from prereg.digest import canonical_json

    out = []
    for v in x.tolist():
        t = repr(v)
        if "e" in t or "n" in t or v == 0.0:
            t = canonical_json(v).decode("ascii")
        elif t.endswith(".0"):
            t = t[:-2]
        out.append(t)
    return out


class Template:
    """Canonical lines with a placeholder per marker: ``parts`` are the constant texts
    between the placeholders, ``at[i]`` the slot the i-th placeholder shows (a slot may show
    several times, or not at all)."""

    def __init__(self, parts: list[str], at: list[int]):
        self.parts = parts
        self.at = at
        self._formats: dict[tuple[bool, ...], str] = {}

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any]], slots: int, blank) -> Template | None:
        """The template of ``records`` (holding the markers of slots 0 … slots − 1), or None
        when their text cannot be one: ``blank`` are the same records with any other value in
        the markers' places, which must show no marker-like string of their own."""
        try:
            text = "".join(canonical_bytes_nl(r).decode("utf-8") for r in records)
            other = "".join(canonical_bytes_nl(r).decode("utf-8") for r in blank)
        except (TypeError, ValueError):
            return None
        if _SLOT.search(other):  # the data hold a marker themselves
            return None
        pieces = _SLOT.split(text)
        at = [int(p) for p in pieces[1::2]]
        if any(k >= slots for k in at):
            return None
        return cls(pieces[0::2], at)

    def format(self, raw: Sequence[bool]) -> str:
        """The ``str.format`` string of the lines: slot k's placeholder quoted when
        ``raw[k]`` (its values are plain strings) and bare otherwise (JSON texts)."""
        key = tuple(raw)
        fmt = self._formats.get(key)
        if fmt is None:
            out = [self.parts[0].replace("{", "{{").replace("}", "}}")]
            for k, part in zip(self.at, self.parts[1:], strict=True):
                out.append(f'"{{{k}}}"' if raw[k] else f"{{{k}}}")
                out.append(part.replace("{", "{{").replace("}", "}}"))
            fmt = self._formats[key] = "".join(out)
        return fmt

    def _pieces(self, raw: Sequence[bool]) -> list[bytes]:
        """The constant texts as UTF-8 bytes, each with the quotes of the raw slots beside it."""
        out = [p.encode("utf-8") for p in self.parts]
        for i, k in enumerate(self.at):
            if raw[k]:
                out[i] += b'"'
                out[i + 1] = b'"' + out[i + 1]
        return out

    def width(self, widths: Sequence[int], raw: Sequence[bool]) -> int:
        """The bytes of the longest lines, slot k's texts being at most ``widths[k]`` bytes."""
        return sum(map(len, self._pieces(raw))) + sum(widths[k] for k in self.at)

    def joined(self, columns: Sequence[np.ndarray], raw: Sequence[bool]) -> np.ndarray:
        """One text per row as a zero-padded ``S`` array: ``columns[k]`` holds slot k's UTF-8
        texts (an ``S`` array, its values holding no NUL), ``raw[k]`` whether they are quoted."""
        pieces = self._pieces(raw)
        if not self.at:
            n = len(columns[0]) if columns else 0
            return np.full(n, pieces[0], dtype=f"S{max(1, len(pieces[0]))}")
        out = np.char.add(pieces[0], columns[self.at[0]])
        for k, piece in zip(self.at[1:], pieces[1:-1], strict=True):
            out = np.char.add(np.char.add(out, piece), columns[k])
        return np.char.add(out, pieces[-1])

    def lines(self, columns: Sequence[Sequence[str]], raw: Sequence[bool]) -> list[str]:
        """One text per row: columns[k] holds slot k's value (or text) of every row."""
        return list(map(self.format(raw).format, *columns))


def spliced(first: Mapping[str, Any], columns: Mapping[str, Sequence[Any]]) -> bytes:
    """The canonical lines of the records ``{**first, name: columns[name][k], …}``, k = 0, 1,
    … (every column as long): spliced into one template, checked against the canonical
    encoder at the first and the last record, else encoded record by record."""
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    if n == 0:
        return b""

    def record(k: int) -> dict[str, Any]:
        return {**first, **{name: columns[name][k] for name in names}}

    tpl = Template.of(
        [{**first, **{name: mark(i) for i, name in enumerate(names)}}],
        len(names),
        [{**first, **{name: "" for name in names}}],
    )
    if tpl is not None:
        texts = [value_texts(columns[name]) for name in names]
        lines = tpl.lines([t for t, _ in texts], [raw for _, raw in texts])
        if all(lines[k] == canonical_bytes_nl(record(k)).decode("utf-8") for k in (0, n - 1)):
            try:
                return "".join(lines).encode("utf-8")
            except UnicodeEncodeError:
                pass
    return b"".join(canonical_bytes_nl(record(k)) for k in range(n))
