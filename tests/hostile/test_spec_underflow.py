"""A decimal a double cannot hold is refused where it is written: YAML read ``1e-400`` (or
``2.5e-324``) as 0, so a threshold registered as 1e-400 was decided as 0 (an estimate of
exactly 0 met ``ge 1e-400``), as ``1e400`` would be infinite (refused already)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prereg.cli import main
from tests.conftest import ROOT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "thirds"


def _compile(tmp_path: Path, value: str) -> int:
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    text = (FIXTURES / "thirds.yaml").read_text().replace("op: OP", "op: ge")
    assert text.count("op: ge, value: 0.1}") == 2
    text = text.replace("op: ge, value: 0.1}", f"op: ge, value: {value}}}", 1)
    (root / "spec" / "studies" / "thirds.yaml").write_text(text)
    return main(["--project", str(root), "compile"])


@pytest.mark.parametrize("value", ["1e-400", "-1e-400", "2.4e-324", "0.1e-330", "1.0E-999"])
def test_a_decimal_below_the_smallest_double_is_refused(tmp_path, capsys, value):
    assert _compile(tmp_path, value) == 2
    err = capsys.readouterr().err
    assert "thirds.yaml:63: " in err and f"number {value!r}" in err and "reads as 0" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "p" / "generated" / "thirds").exists()


@pytest.mark.parametrize("value", ["0.0", "-0.0", "0e-400", "5e-324", "1e-320", "0.000"])
def test_zero_and_the_smallest_doubles_compile(tmp_path, capsys, value):
    assert _compile(tmp_path, value) == 0, capsys.readouterr().err
