"""A key the language does not know is one line: where it is written (file, line and column,
found here from the spec's text) and the key it was probably meant to be; never a dump of the
value and "is not valid under any of the given schemas"."""

from __future__ import annotations

import pytest

from prereg.cli import main

LIMIT = 600  # characters a message may take


def _project(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "x"]) == 0
    capsys.readouterr()
    return tmp_path / "spec" / "studies" / "x.yaml"


def _position(text: str, needle: str) -> str:
    """``line:column`` (from 1) of the first ``needle`` in ``text``, counted by hand."""
    at = text.index(needle)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"{line}:{column}"


def _compile(capsys) -> list[str]:
    assert main(["compile"]) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert lines[0] == "error: the specs have problems; nothing was written"
    return [line.strip() for line in lines[2:]]


@pytest.mark.parametrize(
    ("written", "misspelt", "meant"),
    [
        # inside a hypothesis' rule: for_each is an optional slot (an anyOf of the form and
        # null), the case that printed the whole rule
        ("        quantifier: all\n", "quantifer", "quantifier"),
        ("title:", "titel", "title"),  # a required key: one problem, not also "missing 'title'"
        ("    levels:", "levles", "levels"),
    ],
)
def test_a_misspelt_key_is_one_located_line_with_a_suggestion(
    tmp_path, monkeypatch, capsys, written, misspelt, meant
):
    spec = _project(tmp_path, monkeypatch, capsys)
    text = spec.read_text(encoding="utf-8")
    assert written in text
    text = text.replace(written, written.replace(meant, misspelt), 1)
    spec.write_text(text, encoding="utf-8")
    (problem,) = _compile(capsys)
    assert problem == (
        f"unknown key {misspelt!r} at spec/studies/x.yaml:{_position(text, misspelt + ':')}; "
        f"did you mean {meant!r}?"
    )
    assert len(problem) < LIMIT


def test_a_key_like_no_other_lists_what_is_allowed_in_one_short_line(tmp_path, monkeypatch, capsys):
    spec = _project(tmp_path, monkeypatch, capsys)
    text = spec.read_text(encoding="utf-8")
    text = text.replace("        quantifier: all\n", "        quantifier: all\n        zzz: 1\n", 1)
    text = text.replace("title:", "wholly_unrelated_words: 1\ntitle:", 1)
    spec.write_text(text, encoding="utf-8")
    top, nested = _compile(capsys)
    where = _position(text, "wholly_unrelated_words")
    assert top.startswith(f"unknown key 'wholly_unrelated_words' at spec/studies/x.yaml:{where}; ")
    # the top level allows many keys: the list is cut short, the line stays short
    assert "allowed here: amendments, attempts," in top and top.endswith(", ...")
    assert len(top) < LIMIT
    where = _position(text, "zzz")
    assert nested == (
        f"unknown key 'zzz' at spec/studies/x.yaml:{where}; "
        "allowed here: condition, count, name, quantifier, values"
    )


def test_a_value_of_none_of_a_slots_forms_names_the_forms(tmp_path, monkeypatch, capsys):
    spec = _project(tmp_path, monkeypatch, capsys)
    text = spec.read_text(encoding="utf-8")
    text = text.replace("      for_each:\n", "      for_each: 3\n      unused:\n", 1)
    spec.write_text(text, encoding="utf-8")
    problems = _compile(capsys)
    line = _position(text, "for_each: 3").split(":")[0]
    assert problems[0] == (
        f"spec/studies/x.yaml:{line}: at /hypotheses/0/rule/for_each: expected object or null, got 3"
    )
    assert not any("is not valid under any" in p for p in problems)
