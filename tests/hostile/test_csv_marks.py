"""The one pass over a CSV file's bytes (tabular._csv_marks) finds every candidate the text
rules' own scans find, wherever the reading blocks cut the file: a NUL byte, a byte-order mark
past the start (not the leading one), a carriage return, a blank line, the header line again
(also as the last line without a line end). A candidate it misses would let a rule pass
unchecked; compared here with each rule's whole-file answer, in blocks of 1 to 7 bytes."""

from __future__ import annotations

import pytest

from prereg import tabular

HEADER = b'"item","score"'
BODY = [b"a,1", b"b,2", b'"c\n\nd",3', b"e,4"]


def _texts() -> list[bytes]:
    lines = [HEADER, *BODY]
    base = b"\n".join(lines) + b"\n"
    out = [base, b"\xef\xbb\xbf" + base, base.rstrip(b"\n")]
    for i in range(1, len(lines) + 1):
        head, tail = b"\n".join(lines[:i]) + b"\n", b"\n".join(lines[i:]) + b"\n"
        out += [
            head + b"\n" + tail,  # a blank line
            head + b"x\0y,5\n" + tail,  # a NUL byte
            head + b"\xef\xbb\xbf" + tail,  # a BOM inside the file
            head.replace(b"\n", b"\r\n") + tail,  # carriage returns
            head + HEADER + b"\n" + tail,  # the header again
            head + tail + HEADER,  # the header again, last, without a line end
        ]
    return out


def _expected(path, text: bytes) -> tabular._Marks:
    body = text.removeprefix(b"\xef\xbb\xbf")
    return tabular._Marks(
        mark=b"\0" in text or b"\xef\xbb\xbf" in text[1:],
        cr=b"\r" in text,
        blank=tabular._blank_in(b"\n" + text),
        header=any(
            body.endswith(a + HEADER) or a + HEADER + z in body
            for a in (b"\n", b"\r")
            for z in (b"\n", b"\r")
        ),
    )


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 1 << 24])
def test_one_pass_finds_what_each_rule_finds(tmp_path, monkeypatch, block):
    monkeypatch.setattr(tabular, "CSV_BLOCK", block)
    for k, text in enumerate(_texts()):
        path = tmp_path / f"t{k}.csv"
        path.write_bytes(text)
        want = _expected(path, text)
        got = tabular._csv_marks(path)
        if want.mark:  # the pass stops at a mark: the rule refusing first
            assert got.mark, (block, text)
            continue
        assert got == want, (block, text)
        # without the blank-line search, a CR stands for a possible blank line
        assert tabular._csv_marks(path, blank=False) == want._replace(blank=want.cr)


def test_a_leading_bom_alone_is_no_mark(tmp_path):
    path = tmp_path / "lead.csv"
    path.write_bytes(b"\xef\xbb\xbf" + HEADER + b"\na,1\n")
    assert tabular._csv_marks(path) == tabular._Marks(False, False, False, False)
