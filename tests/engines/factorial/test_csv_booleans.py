"""A CSV export's booleans as it writes them (docs/vocabulary.md, Files): pandas writes True
and False, R TRUE and FALSE; a boolean field's `true_values` and `false_values` name its cells.
The study (tests/fixtures/csvbool/acc.yaml) tests accuracy above 0.8 on 200 items by the exact
binomial test: the same file written with JSON booleans, with pandas' words and with R's gives
the same figures, 170 right of 200 (0.85) against scipy.stats.binomtest; a cell the field does
not list is refused at its line, naming the words it lists; without the words, `True` is
refused with the hint that names them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "csvbool" / "acc.yaml"


def _right(i: int) -> bool:
    return i % 20 not in (0, 7, 13)  # 170 of 200 right


def _project(root: Path, text: str) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "acc.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _csv(path: Path, yes: str, no: str, at: dict[int, str] | None = None) -> Path:
    lines = ["split,correct,item"]
    for i in range(200):
        cell = (at or {}).get(i, yes if _right(i) else no)
        lines.append(f"test,{cell},q{i:03d}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _score(root: Path, obs: Path, out: str = "SCORE.json") -> dict:
    args = ["--observations", str(obs), "--out", str(root / out), "--quiet"]
    assert main(["--project", str(root), "acc", "score", *args]) == 0
    return json.loads((root / out).read_text())


def test_pandas_and_r_booleans_read_as_the_field_says(tmp_path):
    text = SPEC.read_text()
    root = _project(tmp_path / "pandas", text)
    pandas = _score(root, _csv(tmp_path / "pandas.csv", "True", "False"))
    r_text = text.replace('["True"]', '["TRUE", "T"]').replace('["False"]', '["FALSE", "F"]')
    root_r = _project(tmp_path / "r", r_text)
    r_doc = _score(root_r, _csv(tmp_path / "r.csv", "TRUE", "FALSE", at={3: "T", 7: "F"}))
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"item": f"q{i:03d}", "split": "test", "correct": _right(i)}) + "\n"
            for i in range(200)
        )
    )
    plain = _score(root, jsonl, "PLAIN.json")
    ref = binomtest(170, 200, 0.8, alternative="greater")
    for doc in (pandas, r_doc, plain):
        (a,) = doc["analyses"]
        assert a["counts"] == {"k": 170, "n": 200}
        assert a["exact"]["estimate"] == "17/20"
        assert a["p"] == pytest.approx(ref.pvalue, rel=1e-12)
        assert doc["verdicts"] == plain["verdicts"]
    assert pandas["analyses"] == plain["analyses"] == r_doc["analyses"]


def test_a_cell_the_field_does_not_list_is_refused_at_its_line(tmp_path, capsys):
    root = _project(tmp_path, SPEC.read_text())
    obs = _csv(tmp_path / "obs.csv", "True", "False", at={4: "true", 9: "yes"})
    args = ["--observations", str(obs), "--out", str(tmp_path / "S.json")]
    assert main(["--project", str(root), "acc", "score", *args]) != 0
    err = capsys.readouterr().err
    assert f"{obs}:6: field correct: 'true' is not one of" in err  # record 4 is line 6
    assert f"{obs}:11: field correct: 'yes'" in err
    assert "'True'" in err and "'False'" in err
    assert not (tmp_path / "S.json").exists()


def test_without_the_words_true_is_refused_with_the_hint(tmp_path, capsys):
    text = SPEC.read_text().replace(', true_values: ["True"], false_values: ["False"]', "")
    root = _project(tmp_path, text)
    obs = _csv(tmp_path / "obs.csv", "True", "False")
    args = ["--observations", str(obs), "--out", str(tmp_path / "S.json")]
    assert main(["--project", str(root), "acc", "score", *args]) != 0
    err = capsys.readouterr().err
    assert f"{obs}:2: field correct: 'False' is not true or false\n" in err
    assert f"{obs}:3: field correct: 'True' is not true or false\n" in err
    assert 'true_values: ["True"], false_values: ["False"]} for pandas' in err
    assert err.count("true_values") == 1  # the hint once, not on every line


def test_null_values_beside_the_words(tmp_path):
    text = SPEC.read_text().replace(
        '{name: correct, type: boolean, true_values: ["True"], false_values: ["False"]}',
        '{name: correct, type: boolean, nullable: true, true_values: ["True"],'
        ' false_values: ["False"], null_values: ["NA"]}',
    )
    root = _project(tmp_path, text)
    doc = _score(root, _csv(tmp_path / "obs.csv", "True", "False", at={0: "NA", 1: ""}))
    (a,) = doc["analyses"]
    # two rows without an answer count as not right (the proportion's where is correct eq true)
    assert a["counts"]["n"] == 200
    assert a["counts"]["k"] == 170 - sum(_right(i) for i in (0, 1))


@pytest.mark.parametrize(
    "field, words",
    [
        ('{name: correct, type: boolean, true_values: ["True"]}', "without false_values"),
        (
            '{name: correct, type: boolean, true_values: ["1", "True"], false_values: ["0", "1"]}',
            "listed twice (also in true_values)",
        ),
        ("{name: correct, type: boolean, true_values: [True], false_values: [False]}", "quote it"),
        (
            '{name: correct, type: boolean, nullable: true, true_values: ["True"],'
            ' false_values: ["NA"], null_values: ["NA"]}',
            "both in false_values and in null_values",
        ),
    ],
)
def test_compile_refuses_words_that_cannot_be_read(tmp_path, capsys, field, words):
    text = SPEC.read_text().replace(
        '{name: correct, type: boolean, true_values: ["True"], false_values: ["False"]}', field
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "acc.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) != 0
    assert words in capsys.readouterr().err
    assert not (tmp_path / "generated").exists()


def test_the_words_are_for_boolean_fields(tmp_path, capsys):
    text = SPEC.read_text().replace(
        "{name: item, type: string, min_length: 1}",
        '{name: item, type: string, min_length: 1, true_values: ["y"], false_values: ["n"]}',
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "acc.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) != 0
    assert "true_values are only for boolean fields" in capsys.readouterr().err
