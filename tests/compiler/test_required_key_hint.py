"""`counts` of the attempts policy: which attempt of a row counts. A newcomer's attempts block
without `counts` (tests/fixtures/newcomer/verif.yaml has no `order`, `failed` nor `select`, so
a row has one record and which attempt counts is moot) compiles and scores as with any rule;
with `order`, `failed`, `failed_if_any` or `select` the rule decides something (which attempt,
and whether a failed one counts), so leaving it out is refused, naming what makes it needed and
the words to choose from."""

from __future__ import annotations

import json

import pytest
import yaml

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT


def _project(tmp_path, name: str, text: str):
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / f"{name}.yaml").write_text(text)
    return tmp_path


def _verdicts(path, *, repeat: bool = False):
    rows = []
    for v in ("v1", "v2"):
        for i in range(50):
            acc = None if i < 2 else (i % 4 != 0)
            rows.append({"task": f"t{i:02d}", "verifier": v, "accepted": acc, "timed_out": False})
    if repeat:
        rows.append(dict(rows[7]))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _score(root, log):
    out = root / "SCORE.json"
    code = main(["--project", str(root), "verif", "score", "--observations", str(log),
                 "--out", str(out), "--quiet"])  # fmt: skip
    return code, (json.loads(out.read_text()) if code == 0 else None)


def test_counts_may_be_left_out_when_a_row_has_one_record(tmp_path):
    text = (FIXTURES / "newcomer" / "verif.yaml").read_text()
    assert text.count("  counts: first\n") == 1
    figures = {}
    for rule in ("first", "last", "last-any", None):
        body = text if rule == "first" else text.replace("  counts: first\n", "")
        if rule not in ("first", None):
            body = body.replace(
                "  key: [task, verifier]\n", f"  key: [task, verifier]\n  counts: {rule}\n"
            )
        root = _project(tmp_path / str(rule), "verif", body)
        assert main(["--project", str(root), "compile"]) == 0
        if rule is None:
            prereg = (root / "generated" / "verif" / "PREREG.md").read_text()
            assert "A row's one record counts." in prereg
        code, doc = _score(root, _verdicts(root / "v.jsonl"))
        assert code == 0
        figures[rule] = (doc["verdicts"], doc["estimates"] if "estimates" in doc else doc["cells"])
        # a second record of a row is still refused: without order a row has one record
        code, _ = _score(root, _verdicts(root / "w.jsonl", repeat=True))
        assert code != 0
    assert figures["first"] == figures["last"] == figures["last-any"] == figures[None]


@pytest.mark.parametrize(
    "extra, named",
    [
        ("  failed: [{field: accepted, op: is_null}]\n", "failed"),
        ("  failed_if_any: [{field: timed_out, op: eq, value: true}]\n", "failed_if_any"),
    ],
)
def test_counts_is_required_where_it_decides(tmp_path, capsys, extra, named):
    text = (FIXTURES / "newcomer" / "verif.yaml").read_text().replace("  counts: first\n", extra)
    root = _project(tmp_path, "verif", text)
    assert main(["--project", str(root), "compile"]) == 2
    err = capsys.readouterr().err
    assert (
        f"at /attempts: missing required key: 'counts' (with {named} the policy must say which"
        " attempt of a row counts, and whether a failed one does; one of: last, first,"
        " first-success, last-any, first-match)"
    ) in " ".join(err.split())
    assert not (root / "generated").exists() or not any((root / "generated").rglob("rules.py"))


def test_counts_is_required_with_an_order(tmp_path, capsys):
    text = (FIXTURES / "newcomer" / "verif.yaml").read_text()
    text = text.replace(
        "      - {name: timed_out, type: boolean}\n",
        "      - {name: timed_out, type: boolean}\n      - {name: try, type: integer}\n",
    )
    text = text.replace("  counts: first\n", "  order: try\n")
    root = _project(tmp_path, "verif", text)
    assert main(["--project", str(root), "compile"]) == 2
    assert "with order the policy must say which attempt" in " ".join(
        capsys.readouterr().err.split()
    )


def test_the_listed_words_are_the_languages():
    from prereg.compiler.vocabulary import ATTEMPT_COUNTS

    schema = yaml.safe_load((ROOT / "spec" / "prereg.linkml.yaml").read_text())
    assert tuple(schema["enums"]["AttemptCount"]["permissible_values"]) == ATTEMPT_COUNTS
