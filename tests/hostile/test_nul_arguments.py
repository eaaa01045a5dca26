"""A NUL character in a command-line argument (possible when prereg is called in-process, or
from a plan; no shell can pass one) is refused with the argument's position before any work:
a path holding one raised ValueError ("embedded null byte", a traceback) in items, the jev
diagnostic and d17's prepare."""

from __future__ import annotations

import pytest

from prereg.cli import main
from tests.conftest import ROOT


@pytest.mark.parametrize(
    "argv",
    [
        ["jev-multicorrect", "diagnostic", "--out", "a\x00b"],
        ["d17-multifact", "prepare", "d17mf-public-demo", "out\x00dir"],
        ["d17-multifact", "dev-review-material", "x", "\x00"],
        ["compile", "\x00"],
    ],
)
def test_a_nul_in_an_argument_is_refused_without_a_traceback(tmp_path, capsys, argv):
    rc = main(["--project", str(ROOT), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert "NUL" in err or "\\x00" in err, err  # its own refusal, or the NUL named
