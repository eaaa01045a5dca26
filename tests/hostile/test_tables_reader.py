"""prereg tables reads its SCORE.json as every JSON input is read: a FIFO is refused at once (it
hung), nesting too deep is an error at its place (a RecursionError), NaN and Infinity, duplicate
keys and integers beyond 2^53 are refused (NaN was accepted); nothing is written then."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prereg.cli import main

GOOD = '{"cells": [{"cell": "a", "n": 2, "metrics": {"accuracy": {"estimate": 0.5}}}]}'


def _tables(capsys, score, out):
    rc = main(["tables", str(score), "--csv", str(out)])
    return rc, capsys.readouterr().err


def test_a_score_document_tabulates(tmp_path, capsys):
    score = tmp_path / "SCORE.json"
    score.write_text(GOOD, encoding="utf-8")
    rc, err = _tables(capsys, score, tmp_path / "t")
    assert rc == 0, err
    # the row flattened by hand: cell, n, metrics.accuracy.estimate
    assert (tmp_path / "t" / "cells.csv").read_text() == (
        "cell,n,metrics.accuracy.estimate\na,2,0.5\n"
    )


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"cells": [{"x": NaN}]}', "NaN is not a JSON value"),
        ('{"cells": [{"x": -Infinity}]}', "-Infinity is not a JSON value"),
        ('{"cells": [{"x": 1e999}]}', "overflows a double"),
        ('{"cells": [], "cells": []}', "duplicate key 'cells'"),
        ('{"cells": [{"x": 9007199254740993}]}', "at /cells/0/x: integer 9007199254740993"),
        ('{"cells": [' + "[" * 100000 + "]" * 100000 + "]}", "nesting too deep"),
        ('{"cells": [' + '{"a":' * 200 + "1" + "}" * 200 + "]}",
         "at /cells/0/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a"),
        ('{"cells": "x"}', "not a score document"),
        # a table's rows that are not objects were left out without a word (no cells.csv)
        ('{"cells": ["a", 1]}', "at /cells/0: expected a row of the cells table (an object), got a string"),
        ('{"cells": [{"x": 1}, null]}', "at /cells/1: expected a row of the cells table (an object), got null"),
        ('{"cells": [], "estimates": {"a": [1]}}', "at /estimates: expected a list of rows (objects), got an object"),
        ('{"cells": [], "contrasts": 5}', "at /contrasts: expected a list of rows (objects), got a number"),
        ('{"cells": [], "auroc": [[1]]}', "at /auroc/0: expected a row of the auroc table (an object), got a list"),
        # two keys of one row flattening to one column: one value was silently lost
        ('{"cells": [{"x": 1}, {"a.b": 1, "a": {"b": 2}}]}', "at /cells/1: two keys flatten to the column 'a.b'"),
        ('{"cells": [{"a": {"b": 2}, "a.b": 1}]}', "at /cells/0: two keys flatten to the column 'a.b'"),
        ("[1]", "not a JSON object"),
        # a leading BOM: refused at line 1 (tests/hostile/test_line_endings_and_bom.py)
    ],
)  # fmt: skip
def test_a_score_that_is_not_strict_json_is_refused_at_its_place(tmp_path, capsys, text, needle):
    score = tmp_path / "SCORE.json"
    score.write_text(text, encoding="utf-8")
    rc, err = _tables(capsys, score, tmp_path / "t")
    assert rc == 2 and f"error: {score}: " in err and needle in err, err
    assert "Traceback" not in err and not (tmp_path / "t").exists()


@pytest.mark.parametrize("kind", ["fifo", "folder", "missing", "not-utf8"])
def test_what_is_not_a_file_of_json_is_refused_at_once(tmp_path, capsys, kind):
    score = tmp_path / "SCORE.json"
    if kind == "fifo":
        os.mkfifo(score)
    elif kind == "folder":
        score.mkdir()
    elif kind == "not-utf8":
        score.write_bytes(b'{"cells": ["\xff"]}')
    t0 = time.monotonic()
    rc, err = _tables(capsys, score, tmp_path / "t")
    assert rc == 2 and f"error: {score}: " in err, err
    assert time.monotonic() - t0 < 10 and not (tmp_path / "t").exists()


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_tabulate_or_are_refused_naming_the_file(tmp_path, capsys, data):
    score = tmp_path / "S.json"
    score.write_bytes(data)
    out = tmp_path / "t"
    try:
        rc, err = _tables(capsys, score, out)
        assert rc in (0, 2) and "Traceback" not in err
        if rc == 2:  # FILE: or, for a byte-order mark, FILE:1:
            assert f"error: {score}:" in err and not out.exists()
    finally:
        score.unlink()
        if out.exists():
            for p in out.iterdir():
                p.unlink()
            out.rmdir()
