"""Factor levels that are numbers or booleans in the data (``context_tokens: 16384``): the
factor field is typed, its allowed values are the level ids as the data write them, and rows
are placed by comparing the data's values with the level ids. Figures are recounted by hand
from the files the commands wrote."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from prereg.cli import main


def starter(tmp_path, monkeypatch, edits) -> str:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "ctx"]) == 0
    spec = tmp_path / "spec" / "studies" / "ctx.yaml"
    text = spec.read_text()
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new)
    spec.write_text(text)
    return text


TOKENS = [
    ("{id: system-a, code: a}", '{id: "16384", code: a}'),
    ("{id: system-b, code: b}", '{id: "32768", code: b}'),
    ("[system-a, system-b]", '["16384", "32768"]'),
    (
        '{name: system, factor: system, type: string, allowed: ["16384", "32768"]}',
        "{name: context_tokens, factor: system, type: integer, allowed: [16384, 32768]}",
    ),
]
FLAG = [
    ("{id: control, code: c}", '{id: "false", code: c}'),
    ("{id: treatment, code: t}", '{id: "true", code: t}'),
    ("levels: [treatment]", 'levels: ["true"]'),
    ("levels: [control]", 'levels: ["false"]'),
    (
        "{name: condition, factor: condition, type: string, allowed: [control, treatment]}",
        "{name: tool_use, factor: condition, type: boolean, allowed: [false, true]}",
    ),
]


def test_integer_and_boolean_levels_place_rows_as_the_data_write_them(
    tmp_path, monkeypatch, capsys
):
    starter(tmp_path, monkeypatch, TOKENS + FLAG)
    assert main(["compile"]) == 0, capsys.readouterr().err
    items, obs, out = (tmp_path / n for n in ("i.jsonl", "o.jsonl", "S.json"))
    assert main(["ctx", "items", "--out", str(items)]) == 0
    manifest = [json.loads(x) for x in items.read_text().splitlines()]
    # the manifest writes the data's values: numbers and booleans, not their level ids
    assert Counter((r["context_tokens"], r["tool_use"]) for r in manifest) == {
        (16384, False): 100,
        (16384, True): 100,
        (32768, False): 100,
        (32768, True): 100,
    }
    argv = ["ctx", "simulate", "--items", str(items), "--scenario", "effect", "--seed", "1"]
    assert main([*argv, "--out", str(obs)]) == 0
    argv = ["ctx", "score", "--items", str(items), "--observations", str(obs)]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    # recount accuracy per (tokens, tool use) from the files: last attempt per row counts
    level = {r["rowId"]: (r["context_tokens"], r["tool_use"]) for r in manifest}
    last: dict[str, dict] = {}
    for rec in map(json.loads, obs.read_text().splitlines()):
        if rec["rowId"] not in last or rec["attempt"] > last[rec["rowId"]]["attempt"]:
            last[rec["rowId"]] = rec
    right = Counter(level[r] for r, rec in last.items() if rec["correct"] is True)
    cells = json.loads(out.read_text())["cells"]
    got = {
        (c["levels"]["system"], c["levels"]["condition"]): c["metrics"]["accuracy"]["k"]
        for c in cells
    }
    want = {(str(t), "true" if u else "false"): k for (t, u), k in right.items()}
    assert got == want and len(got) == 4


def test_a_value_outside_the_levels_is_refused_at_its_line(tmp_path, monkeypatch, capsys):
    starter(tmp_path, monkeypatch, TOKENS)
    assert main(["compile"]) == 0, capsys.readouterr().err
    items = tmp_path / "i.jsonl"
    assert main(["ctx", "items", "--out", str(items)]) == 0
    rows = items.read_text().splitlines()
    rows[1] = rows[1].replace('"context_tokens":16384', '"context_tokens":"16384"')
    items.write_text("\n".join(rows) + "\n")
    obs = tmp_path / "o.jsonl"
    capsys.readouterr()
    argv = ["ctx", "simulate", "--items", str(items), "--scenario", "effect", "--seed", "1"]
    assert main([*argv, "--out", str(obs)]) == 2
    err = capsys.readouterr().err
    assert "i.jsonl:2" in err  # a string where the contract says integer
    assert not obs.exists()


@pytest.mark.parametrize(
    "field, message",
    [
        (
            "{name: context_tokens, factor: system, type: integer, allowed: [16384, 65536]}",
            "allows [65536], which are not levels of 'system'",
        ),
        (
            "{name: context_tokens, factor: system, type: integer}",
            "lists the levels' values as the data write them",
        ),
        (
            '{name: context_tokens, factor: system, type: integer, allowed: [16384, "32768"]}',
            "allowed values ['32768'] are not of type integer",
        ),
    ],
)
def test_compile_refuses_typed_levels_that_do_not_match(
    tmp_path, monkeypatch, capsys, field, message
):
    text = starter(tmp_path, monkeypatch, [*TOKENS[:3], (TOKENS[3][0], field)])
    line = next(i for i, x in enumerate(text.splitlines(), 1) if "name: context_tokens" in x)
    capsys.readouterr()
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert f"ctx.yaml:{line}" in err and message in err


def test_an_unquoted_number_as_a_level_id_says_to_quote_it(tmp_path, monkeypatch, capsys):
    starter(tmp_path, monkeypatch, [("{id: system-a, code: a}", "{id: 16384, code: a}")])
    capsys.readouterr()
    assert main(["compile"]) == 2
    assert 'expected string, got 16384 (an id is text: write it in quotes, "16384")' in (
        capsys.readouterr().err
    )
