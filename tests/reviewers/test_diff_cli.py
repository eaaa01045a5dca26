"""prereg diff on the command line: formats, --against GIT_REF in a throwaway repository, errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from prereg.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )


def _pair(rule: str) -> tuple[str, str]:
    return str(FIXTURES / rule / "old.yaml"), str(FIXTURES / rule / "new.yaml")


# -- formats ----------------------------------------------------------------------------------


def test_text_format(capsys, fragments):
    old, new = _pair("cell_rows_changed")
    assert main(["diff", old, new]) == 1
    cell = "tst-pool-a_h1_missing-contrastive_equalized"
    assert capsys.readouterr().out == (
        f"example: {old} -> {new}\n"
        f"  registered  /cells[{cell}]/rows  (/cells/1/rows)  [cell_rows_changed]\n"
        f'      Previously 220 rows, cell "{cell}" now has 200. Not declared by an amendment.\n'
        "1 registered change (0 declared by an amendment, 1 not), 0 editorial changes\n"
    )


def test_markdown_format_for_a_pull_request_comment(capsys, fragments):
    old, new = _pair("rule_quantifier_changed")
    assert main(["diff", "--format", "markdown", old, new]) == 1
    assert capsys.readouterr().out == (
        "## prereg diff\n\n"
        "**1 registered change** (changes what the study does or decides; "
        "0 declared by an amendment, 1 not), 0 editorial changes.\n\n"
        f"### example: `{old}` → `{new}`\n\n"
        "| kind | path | change | rule |\n"
        "|---|---|---|---|\n"
        "| **registered** (undeclared) | `/hypotheses[h2]/rule/for_each/quantifier`"
        "<br>`/hypotheses/0/rule/for_each/quantifier` | "
        'Previously hypothesis "h2" used quantifier "all"; it now uses "any" '
        "(at rule/for_each/quantifier). | `rule_quantifier_changed` |\n"
    )


def test_markdown_escapes_table_pipes(tmp_path, capsys, fragments):
    (tmp_path / "a.yaml").write_text('id: x\ntitle: "a | b"\n')
    (tmp_path / "b.yaml").write_text('id: x\ntitle: "a || b"\n')
    assert (
        main(["diff", "--format", "markdown", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
        == 0
    )
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| editorial"))
    assert row.count(" | ") == 3 and "a \\| b" in row and "a \\|\\| b" in row
    assert "No registered change, 1 editorial change." in out


def test_json_format(capsys, fragments):
    old, new = _pair("prose_changed")
    assert main(["diff", "--format", "json", old, new]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["registered"], doc["undeclared"], doc["editorial"]) == (0, 0, 3)
    (study,) = doc["studies"]
    assert (study["study"], study["old"], study["new"]) == ("example", old, new)
    first = study["changes"][0]
    assert first == {
        "rule": "prose_changed",
        "kind": "editorial",
        "op": "changed",
        "path": "/title",
        "pointer": "/title",
        "oldPointer": "/title",
        "message": 'Previously /title read "Example probe"; it now reads "Example probe, two pools".',
        "old": "Example probe",
        "new": "Example probe, two pools",
        "amendment": None,
    }
    added = study["changes"][2]
    assert (added["op"], added["old"], added["new"]) == ("added", None, "First pool")


def _keys(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            if k not in ("old", "new"):  # spec content, spelt as the spec is
                yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def test_json_keys_are_camel_case_like_every_other_output(capsys, fragments):
    for rule in ("cell_rows_changed", "prose_changed", "rule_quantifier_changed"):
        old, new = _pair(rule)
        main(["diff", "--format", "json", old, new])
        keys = set(_keys(json.loads(capsys.readouterr().out)))
        assert keys and all("_" not in k for k in keys), sorted(keys)


# the cell_rows_changed pair as a registration and its amendment: OLD is version 1.0, NEW makes
# version 1.1 and (perhaps) declares the changed cell's rows
AMENDED = """
version: "1.1"
amendments:
  - {{version: "1.1", date: 2026-01-05, rationale: "More rows were needed.", paths: [{path}]}}
"""


def _amended(tmp_path, path: str, version: str = "1.1") -> tuple[str, str]:
    old, new = _pair("cell_rows_changed")
    text = Path(new).read_text(encoding="utf-8").replace('version: "1.0"\n', "")
    out = tmp_path / f"new-{len(list(tmp_path.iterdir()))}.yaml"
    amended = AMENDED.format(path=json.dumps(path)).replace('"1.1"', json.dumps(version))
    out.write_text(text + amended, encoding="utf-8")
    return old, str(out)


@pytest.mark.parametrize(
    "declared",
    [
        "/cells/1/rows",  # the JSON pointer
        "/cells[tst-pool-a_h1_missing-contrastive_equalized]/rows",  # the id path
        "/cells",  # a prefix covers everything below it
    ],
)
def test_exit_0_when_an_amendment_declares_every_registered_change(
    tmp_path, capsys, declared, fragments
):
    old, new = _amended(tmp_path, declared)
    assert main(["diff", old, new]) == 0
    text = capsys.readouterr().out
    assert "Declared by amendment 1.1." in text
    assert "1 registered change (1 declared by an amendment, 0 not)" in text
    assert main(["diff", "--format", "json", old, new]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["registered"], doc["undeclared"]) == (1, 0)
    rows = next(c for c in doc["studies"][0]["changes"] if c["rule"] == "cell_rows_changed")
    assert rows["amendment"] == "1.1"


def test_exit_1_when_a_registered_change_is_not_declared(tmp_path, capsys, fragments):
    # an amendment naming another path, and one naming the path but not after OLD's version
    for path, version in (("/cells/0/rows", "1.1"), ("/cells/1/rows", "1.0")):
        old, new = _amended(tmp_path, path, version)
        assert main(["diff", old, new]) == 1, (path, version)
        assert "Not declared by an amendment." in capsys.readouterr().out
        assert main(["diff", "--format", "json", old, new]) == 1
        assert json.loads(capsys.readouterr().out)["undeclared"] == 1


def test_diff_runs_outside_a_project(tmp_path, monkeypatch, capsys, fragments):
    old, new = _pair("budget_changed")
    monkeypatch.chdir(tmp_path)
    assert main(["diff", old, new]) == 1
    assert 'Previously budget item "usd" was 5 USD; it is now 6 USD.' in capsys.readouterr().out


def test_diff_argument_and_input_errors(tmp_path, capsys):
    old, _ = _pair("budget_changed")
    assert main(["diff", old]) == 2
    assert "diff needs OLD.yaml NEW.yaml" in capsys.readouterr().err
    assert main(["diff", old, str(tmp_path / "missing.yaml")]) == 2
    assert f"{tmp_path / 'missing.yaml'}: cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nid: y\n")
    assert main(["diff", old, str(bad)]) == 2
    assert f"{bad}:2: duplicate key 'id'" in capsys.readouterr().err
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just text\n")
    assert main(["diff", old, str(scalar)]) == 2
    assert f"{scalar}:1: a spec must be a mapping" in capsys.readouterr().err


# -- a NEW spec that does not compile ---------------------------------------------------------

WHOLE = (
    Path(__file__).resolve().parents[1]
    / "golden/compile-basic/project/spec/studies/example-probe.yaml"
)
ROWS_10 = "{id: a-h1-yes, split: test, rows: 10"


@pytest.mark.parametrize(
    "edit, shown, problems",
    [
        # a registered change that compile refuses: the totals no longer add up (semantic)
        (
            (ROWS_10, ROWS_10.replace("10", "11")),
            "/cells[a-h1-yes]/rows",
            [
                "{new}:52: at /totals/0/rows: declared total 60 for 'test' differs from the sum"
                " of its cells, 61",
                "{new}:54: at /totals/2/rows: declared total 62 for 'all' differs from the sum"
                " of its cells, 63",
            ],
        ),
        # a misspelt key (the language), an engine no plug-in provides (the engine stage)
        (
            ("\ntitle:", "\ntitel:"),
            "/titel",
            ["unknown key 'titel' at {new}:4:1; did you mean 'title'?"],
        ),
        (
            ("engine: multicorrect-scoring", "engine: nope"),
            "/engine",
            ["{new}:6: at /engine: unknown engine 'nope' (registered: "],
        ),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_new_spec_that_does_not_compile_is_an_error_naming_its_lines(
    tmp_path, monkeypatch, capsys, edit, shown, problems, fmt
):
    monkeypatch.chdir(tmp_path)  # outside any project: the language prereg ships
    text = WHOLE.read_text(encoding="utf-8")
    assert text.count(edit[0]) == 1
    Path("old.yaml").write_text(text, encoding="utf-8")
    Path("new.yaml").write_text(text.replace(edit[0], edit[1]), encoding="utf-8")
    assert main(["diff", "--format", fmt, "old.yaml", "new.yaml"]) == 2
    got = capsys.readouterr()
    assert shown in got.out  # the changes are still listed (and JSON stays JSON)
    if fmt == "json":
        assert json.loads(got.out)["registered"] >= 1
    err = got.err.splitlines()
    n = len(problems)
    assert err[0] == (
        f"error: new.yaml: does not compile ({n} problem{'s' * (n > 1)}); the changes above are"
        " to a spec that `prereg compile` refuses"
    )
    assert len(err) == 1 + n
    for line, want in zip(err[1:], problems, strict=True):
        assert line.startswith("  " + want.format(new="new.yaml")), line
    assert "Traceback" not in got.err


def test_a_new_spec_compiles_as_its_project_compiles_it(tmp_path, monkeypatch, capsys):
    """In a project's spec/studies/, NEW's file name must be its id (as compile asks); outside
    it, any name will do; the same spec unchanged is no change and exit 0."""
    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    shutil.copy(WHOLE, studies / "renamed.yaml")
    shutil.copy(WHOLE, tmp_path / "anywhere.yaml")
    monkeypatch.chdir(tmp_path)
    assert main(["diff", str(WHOLE), "anywhere.yaml"]) == 0
    assert "no semantic changes" in capsys.readouterr().out
    assert main(["diff", str(WHOLE), "spec/studies/renamed.yaml"]) == 2
    assert (
        "  spec/studies/renamed.yaml:2: at /id: study id 'example-probe' differs from its file"
        " name 'renamed'"
    ) in capsys.readouterr().err.splitlines()


def test_against_a_working_tree_spec_that_does_not_compile(tmp_path, monkeypatch, capsys):
    studies = tmp_path / "spec" / "studies"
    studies.mkdir(parents=True)
    spec = studies / "example-probe.yaml"
    shutil.copy(WHOLE, spec)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    spec.write_text(spec.read_text().replace(ROWS_10, ROWS_10.replace("10", "11")))
    monkeypatch.chdir(tmp_path)
    assert main(["diff", "--against", "HEAD"]) == 2
    got = capsys.readouterr()
    assert 'Previously 10 rows, cell "a-h1-yes" now has 11.' in got.out
    assert got.err.splitlines()[:2] == [
        "error: spec/studies/example-probe.yaml: does not compile (2 problems); the changes"
        " above are to a spec that `prereg compile` refuses",
        "  spec/studies/example-probe.yaml:52: at /totals/0/rows: declared total 60 for 'test'"
        " differs from the sum of its cells, 61",
    ]


# -- --against GIT_REF ------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path) -> Path:
    """A throwaway repository whose project lives in a subfolder, with two commits."""
    root = tmp_path / "repo"
    studies = root / "sub" / "project" / "spec" / "studies"
    studies.mkdir(parents=True)
    git(root, "init", "-q")
    shutil.copy(FIXTURES / "cell_rows_changed" / "old.yaml", studies / "example.yaml")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    shutil.copy(FIXTURES / "cell_rows_changed" / "new.yaml", studies / "example.yaml")
    shutil.copy(FIXTURES / "prose_changed" / "old.yaml", studies / "other.yaml")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "second")
    return root / "sub" / "project"


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_against_head_minus_one_in_a_repository(repo, monkeypatch, capsys, fragments):
    monkeypatch.chdir(repo)
    code, out, err = _run(capsys, "diff", "--against", "HEAD~1", "example")
    assert code == 1, err
    assert out.splitlines()[0] == (
        "example: spec/studies/example.yaml@HEAD~1 -> spec/studies/example.yaml"
    )
    assert "Previously 220 rows, cell" in out
    code, out, err = _run(capsys, "diff", "--against", "HEAD")
    assert code == 0, err
    assert out.count("no semantic changes") == 2


def test_against_all_studies_reports_a_study_added_since(repo, capsys, fragments):
    code, out, err = _run(
        capsys, "--project", repo, "diff", "--against", "HEAD~1", "--format", "json"
    )
    assert code == 1, err
    doc = json.loads(out)
    by_study = {s["study"]: s for s in doc["studies"]}
    assert sorted(by_study) == ["example", "other"]
    assert [c["rule"] for c in by_study["other"]["changes"]] == ["study_added"]
    assert [c["rule"] for c in by_study["example"]["changes"]] == ["cell_rows_changed"]


def test_against_uses_the_working_tree_and_a_removed_study(repo, monkeypatch, capsys, fragments):
    (repo / "spec/studies/other.yaml").unlink()
    text = (repo / "spec/studies/example.yaml").read_text()
    (repo / "spec/studies/example.yaml").write_text(text.replace("rows: 200", "rows: 220"))
    monkeypatch.chdir(repo)
    code, out, err = _run(capsys, "diff", "--against", "HEAD")
    assert code == 1, err
    assert 'Previously present study "other" was removed.' in out
    assert (
        'Previously 200 rows, cell "tst-pool-a_h1_missing-contrastive_equalized" now has 220.'
        in out
    )


def test_against_errors_are_user_errors(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    code, _, err = _run(capsys, "diff", "--against", "no-such-branch")
    assert code == 2
    assert "unknown git revision 'no-such-branch'" in err
    code, _, err = _run(capsys, "diff", "--against", "HEAD~1", "other")
    assert code == 2
    assert "spec/studies/other.yaml does not exist at revision HEAD~1" in err
    code, _, err = _run(capsys, "diff", "--against", "HEAD", "nope")
    assert code == 2 and "no spec for study 'nope'" in err
    code, _, err = _run(capsys, "diff", "--against=--output=x")
    assert code == 2 and "not a git revision" in err
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain)
    monkeypatch.chdir(plain)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    code, _, err = _run(capsys, "diff", "--against", "HEAD")
    assert code == 2
    assert "is not inside a git repository" in err


def test_help_explains_diff_seal_and_check(capsys):
    for args, words in (
        (["diff", "--help"], ["registered", "editorial", "--against", "--format"]),
        (["seal", "--help"], ["seal.json", "amendment", "never overwritten"]),
        (["check", "--help"], ["sealed study", "amendment"]),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 0
        out = " ".join(capsys.readouterr().out.split())
        for word in words:
            assert word in out, (args, word)
