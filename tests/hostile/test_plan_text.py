"""A plan's step title is a line of a report (a heading, a Markdown table's cell): a title
with a line break or another control character broke index.md's table (a title of
``"a\\n# injected"`` became a heading of its own) and is refused, at its JSON path, before
anything runs; so is a step's argument holding one (a file named across two lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.demo.test_demo_plan import STEPS, _cli, starter  # noqa: F401 (a fixture)


@pytest.mark.parametrize(
    "change, pointer",
    [
        ({"title": "a\n# injected"}, "/steps/0/title"),
        ({"title": "tab\there"}, "/steps/0/title"),
        ({"title": "bell\x07"}, "/steps/0/title"),
        ({"title": "line\u2028separator"}, "/steps/0/title"),
        ({"args": ["items", "--out", "{out}/a\nb.jsonl"]}, "/steps/0/args/2"),
        ({"args": ["items", "--out", "{out}/a\rb.jsonl"]}, "/steps/0/args/2"),
    ],
)
def test_a_control_character_in_a_title_or_argument_is_refused_by_path(
    starter,  # noqa: F811 (the fixture imported above)
    tmp_path,
    change,
    pointer,
):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [{**STEPS[0], **change}]}), encoding="utf-8")
    out = tmp_path / "out"
    code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out)
    assert code == 2 and "Traceback" not in stderr, stderr
    assert f"error: {plan}: not a plan of steps this project can run" in stderr
    assert f"at {pointer}: " in stderr and "control character" in stderr, stderr
    assert not out.exists()


def test_a_title_of_unicode_letters_and_markup_runs(starter, tmp_path):  # noqa: F811
    """Not a control character: kept, and escaped where a report shows it."""
    plan = tmp_path / "plan.json"
    title = "Ünïcode — <b>bold</b> | pipe"
    plan.write_text(json.dumps({"steps": [{**STEPS[0], "title": title}]}), encoding="utf-8")
    out = tmp_path / "out"
    code, _, stderr = _cli("--project", starter, "demo", "--plan", plan, "--out", out)
    assert code == 0, stderr
    html = Path(out / "index.html").read_text()
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
