"""Hostile coefficients of a linear contrast (the exact fraction words ``"1/3"``): compile
refuses, with the spec's line and JSON path, any coefficient that score could not use; never a
traceback (Python refuses to read more than 4,300 digits as an int, and a fraction beyond the
largest double has no float figure)."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from prereg.cli import main
from prereg.stats.compare import exact_number, is_fraction_word
from tests.conftest import ROOT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "thirds"
WRITTEN = 'coefficients: ["1/3", "1/3", "1/3", -1], alternative: greater'


def _project(tmp_path: Path, first: str) -> Path:
    """The thirds fixture with its first analysis's first coefficient written ``first``."""
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    text = (FIXTURES / "thirds.yaml").read_text().replace("op: OP", "op: ge")
    assert WRITTEN in text
    text = text.replace(WRITTEN, WRITTEN.replace('["1/3"', f"[{first}", 1), 1)
    (root / "spec" / "studies" / "thirds.yaml").write_text(text)
    return root


HUGE = [
    '"1/' + "3" * 5000 + '"',  # a denominator Python will not read as an int (a traceback)
    '"' + "1" * 5000 + '/3"',  # a numerator of as many digits: compiled, then score's traceback
    '"' + "1" * 400 + '/3"',  # beyond the largest double: compiled, then an OverflowError
    '"-' + "9" * 320 + '/1"',
    "1" + "0" * 400,  # a whole number of 401 digits, no fraction
    "1.7e308",  # a double whose sum over groups is not (an OverflowError at score)
    "1e200",  # its square is not a double (an OverflowError at score)
    '"' + "1" * 101 + '/1"',
]


@pytest.mark.parametrize(
    "first",
    HUGE,
    ids=["den5000", "num5000", "num400", "neg320", "int401", "1.7e308", "1e200", "num101"],
)
def test_a_coefficient_beyond_any_figure_is_refused_at_compile(tmp_path, capsys, first):
    root = _project(tmp_path, first)
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err[-2000:]
    assert "thirds.yaml:51" in err, err[:2000]
    # the JSON path, or the YAML reader's own rule for a whole number of 401 digits
    assert "/options/coefficients" in err or "is too large" in err, err[:2000]
    assert len(err) < 4000  # the coefficient is not echoed whole
    assert not (root / "generated" / "thirds").exists()


@pytest.mark.parametrize("first", ['"1/3"', '"-0/7"', '"' + "2" * 300 + "/" + "1" * 300 + '"'])
def test_fractions_within_bounds_compile_and_score(tmp_path, capsys, first):
    root = _project(tmp_path, first)
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "S.json"
    args = ["--observations", str(FIXTURES / "runs.jsonl"), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "thirds", "score", *args]) == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["verdicts"]


@pytest.mark.parametrize(
    "word, ok",
    [("1/3", True), ("-2/3", True), ("1/0", False), ("1/3\n", False), ("1/3 ", False),
     (" 1/3", False), ("1/" + "3" * 5000, False), ("1" * 5000 + "/3", False),
     ("1" * 400 + "/3", False), ("1" * 400 + "/" + "1" * 400, True), ("1/" + "7" * 400, True)],
)  # fmt: skip
def test_what_a_fraction_word_is(word, ok):
    assert is_fraction_word(word) is ok
    if ok:
        assert exact_number(word) == Fraction(*map(int, word.split("/")))
        float(exact_number(word))  # a finite figure
    else:
        with pytest.raises(ValueError):
            exact_number(word)


def test_a_margin_of_1e300_scores(tmp_path, capsys):
    """The statistic squared, (L - 1e300)^2 / var, is beyond a double though its square root
    is one: its float raised OverflowError at score (a traceback)."""
    root = _project(tmp_path, '"1/3"')
    text = (root / "spec" / "studies" / "thirds.yaml").read_text()
    assert text.count("margin: 0.1}") == 2
    (root / "spec" / "studies" / "thirds.yaml").write_text(
        text.replace("margin: 0.1}", "margin: 1e300}")
    )
    assert main(["--project", str(root), "compile"]) == 0
    out = tmp_path / "S.json"
    args = ["--observations", str(FIXTURES / "runs.jsonl"), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "thirds", "score", *args]) == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    lp = next(a for a in doc["analyses"] if a["id"] == "lp")
    # z = (L - 1e300)/se with L = 1/10 + 2/5 = 1/2, se = sqrt(var): far below 0, P of 1
    assert lp["statistic"] < -1e300 and lp["p"] == 1.0
