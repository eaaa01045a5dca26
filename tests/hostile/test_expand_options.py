"""An option written as an expand placeholder (``k: "{k}"``) takes the placeholder's value
read as a number when it reads as one. A value of 5,000 digits was a ValueError traceback at
compile (Python reads no more than 4,300 digits as an int); ``"1e400"`` became an infinite
option, a number YAML's reader refuses where it is written. Neither is a number here: the
method refuses the text, at the option's JSON path, in a message that does not echo it whole.
"""

from __future__ import annotations

import re

import pytest

from prereg.cli import main
from prereg.compiler.semantic import _scalar
from tests.compiler.test_analyses_compile import _project

OLD = "        options: {k: 5}\n        expand:\n          - {name: decoding, values: [greedy-temp, nucleus]}\n"


def _new(value: str) -> str:
    return (
        '        options: {k: "{k}"}\n        expand:\n'
        "          - {name: decoding, values: [greedy-temp, nucleus]}\n"
        f"          - {{name: k, values: [{value}]}}\n"
    )


@pytest.mark.parametrize(
    "value", ['"' + "9" * 5000 + '"', '"1e400"', '"-1e400"', '"' + "1" * 25 + '"']
)
def test_a_placeholder_value_that_is_no_double_is_refused_at_its_path(tmp_path, capsys, value):
    spec = _project(tmp_path, "pass-at-k")
    text = spec.read_text()
    assert text.count(OLD) == 1
    spec.write_text(text.replace(OLD, _new(value)))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(r"pass-at-k\.yaml:\d+: at /hypotheses/0/analyses/1/options/k: ", err), err
    assert "refuses option k" in err and "inf" not in err, err[:600]
    assert len(err) < 1200, len(err)


@pytest.mark.parametrize(
    "text, value",
    [("5", 5), ("-3", -3), ("0.05", 0.05), ("1e-3", 0.001), ("true", True), ("x", "x"),
     ("1e400", "1e400"), ("-1e400", "-1e400"), ("9" * 5000, "9" * 5000),
     ("1" * 21, "1" * 21), ("1" * 20, int("1" * 20))],
)  # fmt: skip
def test_what_a_placeholder_value_reads_as(text, value):
    got = _scalar(text)
    assert got == value and type(got) is type(value)
