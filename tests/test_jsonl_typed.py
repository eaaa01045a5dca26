"""prereg.jsonl.TypedLines on its own: a block is taken in one decode only when each of its
lines is exactly one record; lines that merely decode into as many records as there are lines
go to the strict reader of one line."""

from __future__ import annotations

import msgspec
import pytest

import prereg.jsonl
from prereg.jsonl import TypedLines, _flat


class Inner(msgspec.Struct, forbid_unknown_fields=True):
    pass


class Nested(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    k: list[Inner]


class Flat(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    k: list[float]


def _read(path, struct) -> list:
    """What the reader yields per line: the typed record, or ('strict', line number)."""
    lines = TypedLines(path, struct, lambda no, raw: ("strict", no))
    return [rec for _, rec in lines]


def test_flat_tells_records_that_can_hold_an_object():
    assert _flat(Flat)
    assert not _flat(Nested)


@pytest.mark.parametrize("size", [None, 64])
def test_an_object_spread_over_two_lines_through_an_inner_array_goes_to_the_strict_reader(
    tmp_path, monkeypatch, size
):
    # Joined with a comma at the line break: [{"id":1,"k":[]},{"id":2,"k":[{},\n{}]}], two
    # valid records of two lines, every line starting with "{", as many colons as two records
    # have keys. Neither line is one record.
    if size is not None:
        monkeypatch.setattr(prereg.jsonl, "BLOCK", size)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[]},{"id":2,"k":[{}\n{}]}\n')
    assert _read(path, Nested) == [("strict", 1), ("strict", 2)]


@pytest.mark.parametrize("struct", [Flat, Nested])
def test_records_one_per_line_are_decoded(tmp_path, struct):
    path = tmp_path / "x.jsonl"
    if struct is Flat:
        path.write_bytes(b'{"id":1,"k":[0.5]}\n{"id":2,"k":[]}\n')
        assert _read(path, Flat) == [Flat(1, [0.5]), Flat(2, [])]
    else:
        path.write_bytes(b'{"id":1,"k":[{}]}\n{"id":2,"k":[]}\n')
        assert _read(path, Nested) == [Nested(1, [Inner()]), Nested(2, [])]


def test_a_flat_record_split_over_two_lines_goes_to_the_strict_reader(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[]},{"id":2\n"k":[]}\n')
    assert _read(path, Flat) == [("strict", 1), ("strict", 2)]


@pytest.mark.parametrize("size", [None, 64])
def test_two_flat_records_on_one_line_go_to_the_strict_reader(tmp_path, monkeypatch, size):
    # Decoded as a sequence of values the block gives three records for two lines; neither
    # line is taken whole, and each is read alone (the first holds two values: strict).
    if size is not None:
        monkeypatch.setattr(prereg.jsonl, "BLOCK", size)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[]} {"id":2,"k":[]}\n{"id":3,"k":[]}\n')
    assert _read(path, Flat) == [("strict", 1), Flat(3, [])]


def test_a_flat_record_and_a_blank_line_go_to_the_strict_reader(tmp_path):
    # Two values, two records' worth of lines: the blank line has none, the first line two.
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[]}{"id":2,"k":[]}\n\n')
    assert _read(path, Flat) == [("strict", 1), ("strict", 2)]


def test_an_inner_object_at_a_line_start_of_a_flat_record_goes_to_the_strict_reader(tmp_path):
    # Line 2 starts with "{" inside line 1's record: the typed decode refuses the object.
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[\n{}]}\n')
    assert _read(path, Flat) == [("strict", 1), ("strict", 2)]


def test_whitespace_after_a_flat_record_keeps_the_block_whole(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(TypedLines, "_line", lambda self, no, raw: calls.append(no))
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[0.5]} \t\n{"id":2,"k":[]}\n')
    assert _read(path, Flat) == [Flat(1, [0.5]), Flat(2, [])]
    assert calls == []


@pytest.mark.parametrize("size", [None, 64])
def test_a_line_holding_a_cr_goes_to_the_strict_reader(tmp_path, monkeypatch, size):
    # CR is JSON whitespace, so the typed decode would take a CRLF line; the format is
    # LF-terminated lines, and the strict reader's is the refusal. A CR inside a line (a lone
    # CR line ending, or CR as whitespace) is the strict reader's to refuse too.
    if size is not None:
        monkeypatch.setattr(prereg.jsonl, "BLOCK", size)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id":1,"k":[0.5]} \t\r\n{"id":2,\r"k":[]}\n{"id":3,"k":[]}\r\n')
    assert _read(path, Flat) == [("strict", 1), ("strict", 2), ("strict", 3)]
