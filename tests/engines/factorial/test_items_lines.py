"""The item manifest's lines written from one encoded row per cell (``lines.spliced``) are the
canonical encoder's own lines, row by row, whatever the cell id holds."""

from __future__ import annotations

import pytest

from prereg.engines.factorial.lines import spliced
from prereg.files import canonical_bytes_nl


def _cell_lines(rows: list[dict], varying: list[str]) -> bytes:
    """The rows spliced into their first: the varying fields as columns."""
    return spliced(rows[0], {name: [r[name] for r in rows] for name in varying})


def rows_of(cell_id: str, n: int, extra: dict) -> list[dict]:
    return [
        {"rowId": f"{cell_id}-{k:03d}", "item": f"item-{k:03d}", "split": "test", **extra}
        for k in range(1, n + 1)
    ]


@pytest.mark.parametrize(
    "cell_id, extra",
    [
        ("tst-a-plain", {"model": "model-a", "format": "plain"}),
        ('quote"back\\slash', {"level": "é ünïcode ☃", "tokens": 16384, "on": True}),
        ("tab\tnew\nline\u2028", {"weight": 0.1, "none": None}),
        ("\ue000row\ue000", {"z": "\ue000item\ue000"}),  # an older marker as data
        ("\ue0000\ue000", {"z": "\ue0001\ue000"}),  # the markers themselves as data
        ("c", {"z": "\ue0000\ue000", "brace": "{0}{}"}),  # a marker, and format's braces
        ("nul\x00inside", {"a": "b"}),  # left to rfc8785 row by row
    ],
)
def test_cell_lines_are_the_canonical_lines(cell_id, extra):
    rows = rows_of(cell_id, 12, extra)
    want = b"".join(canonical_bytes_nl(r) for r in rows)
    assert _cell_lines(rows, ["rowId", "item"]) == want


def test_a_row_whose_varying_field_is_not_a_string_is_encoded_alone():
    rows = rows_of("c", 5, {})
    rows[2] = {**rows[2], "item": 7}
    want = b"".join(canonical_bytes_nl(r) for r in rows)
    assert _cell_lines(rows, ["rowId", "item"]) == want


@pytest.mark.parametrize(
    "example, study",
    [
        ("answer-position", "answer-position"),
        ("paired-verifiers", "paired-verifiers"),
        ("latency-cost", "latency-cost"),
    ],
)
def test_items_knows_the_manifest_size_before_writing(
    tmp_path, monkeypatch, capsys, example, study
):
    """``items`` computes the manifest's size exactly before writing a byte, and refuses,
    writing nothing, a manifest the file system has no room for."""
    import shutil
    from collections import namedtuple

    from tests.engines.factorial.examples import example_project, run

    root = example_project(tmp_path / "p", example)
    out = tmp_path / "items.jsonl"
    sizes = []
    real = shutil.disk_usage

    def usage(where):
        sizes.append(where)
        return real(where)

    monkeypatch.setattr(shutil, "disk_usage", usage)
    assert run(root, study, "items", "--out", out) == 0
    assert sizes  # the room was looked at
    size = out.stat().st_size
    usage_t = namedtuple("usage", "total used free")
    for free, code in ((size, 0), (size - 1, 2)):
        monkeypatch.setattr(shutil, "disk_usage", lambda _w, f=free: usage_t(f, 0, f))
        again = tmp_path / f"again-{free}" / "items.jsonl"
        capsys.readouterr()
        assert run(root, study, "items", "--out", again) == code
        err = capsys.readouterr().err
        if code:
            assert f"is {size:,} bytes" in err and f"has {size - 1:,} bytes free" in err
            assert "nothing was written" in err and "Traceback" not in err
            assert not again.exists() and not again.parent.exists()
        else:
            assert again.read_bytes() == out.read_bytes()
