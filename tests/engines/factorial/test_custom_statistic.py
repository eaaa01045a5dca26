"""A statistic of one's own (``statistics``), end to end through the CLI on the worked example
examples/custom-statistic/ (a win rate with the Wilson score interval and a one-sided score
test, in statistics/win_rate.py): compiled, scored on observations written here, every figure
of SCORE.json checked against statsmodels; the file's digest pinned (a changed file makes
`check` stale and `score` refuse until recompiled); compile refusals of a file, a function or an
analysis that do not match the registration, without running the file; score-time refusals of a
function that raises or returns something that is not a Result; diagnose refusing a rule that
reads one."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from prereg import custom, outputs
from prereg.cli import main
from prereg.errors import UserError
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "custom-statistic"
SPEC = "spec/studies/win-rate.yaml"
STAT = "statistics/win_rate.py"


def _project(tmp_path: Path, edit=None, stat_edit=None) -> Path:
    root = tmp_path / "p"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("generated"))
    for rel, change in ((SPEC, edit), (STAT, stat_edit)):
        if change is not None:
            text = (root / rel).read_text()
            old, new = change
            assert text.count(old) == 1, "the edit must be unambiguous"
            (root / rel).write_text(text.replace(old, new))
    return root


def _compile(root: Path) -> int:
    return main(["--project", str(root), "compile"])


def _records(wins: dict[str, int], n: int = 60) -> list[dict]:
    return [
        {"rowId": f"{d}-{i}", "domain": d, "new_wins": i < wins[d], "attempt": 1}
        for d in ("math", "prose")
        for i in range(n)
    ]


def _score(root: Path, records: list[dict], out_name: str = "SCORE.json") -> tuple[int, Path]:
    obs = root / "obs.jsonl"
    obs.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = root / out_name
    args = ["--project", str(root), "win-rate", "score", "--observations", str(obs)]
    return main([*args, "--out", str(out)]), out


@pytest.mark.parametrize("wins", [{"math": 40, "prose": 30}, {"math": 31, "prose": 28}])
def test_the_worked_example_against_statsmodels(tmp_path, wins):
    from statsmodels.stats.proportion import proportion_confint, proportions_ztest

    root = _project(tmp_path)
    assert _compile(root) == 0
    code, out = _score(root, _records(wins))
    assert code == 0
    doc = json.loads(out.read_text())
    assert list(outputs.validator(outputs.schema_for("factorial", "score")).iter_errors(doc)) == []
    row = next(a for a in doc["analyses"] if a["id"] == "win-rate")
    k, n = wins["math"] + wins["prose"], 120
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    z, p = proportions_ztest(k, n, value=0.5, alternative="larger", prop_var=0.5)
    assert row["method"] == "win-rate" and row["options"] == {"level": 0.95, "null_rate": 0.5}
    assert row["estimate"] == k / n and row["exact"] == {"estimate": str(Fraction(k, n))}
    assert row["lower"] == pytest.approx(lo, rel=1e-12)
    assert row["upper"] == pytest.approx(hi, rel=1e-12)
    assert row["statistic"] == pytest.approx(z, rel=1e-12) and row["statisticName"] == "z"
    assert row["p"] == pytest.approx(p, rel=1e-9)
    assert row["se"] == pytest.approx((0.25 / n) ** 0.5, rel=1e-15)
    assert row["counts"] == {"wins": k, "comparisons": n}
    # the file is pinned in the row: its path and its SHA-256 as compiled
    sha = custom.file_digest(root / STAT)
    assert row["extra"]["statistic"] == {"file": STAT, "sha256": sha}
    rules = (root / "generated" / "win_rate" / "rules.py").read_text()
    assert f'"sha256": "{sha}"' in rules
    prereg_md = (root / "generated" / "win_rate" / "PREREG.md").read_text()
    assert (
        f"| `win-rate` | `{STAT}` | `win_rate` | binomial | level, null_rate | `{sha}` |"
        in prereg_md
    )
    # the rule: P below 0.05 and a rate of at least 0.55 (70/120 = 0.583: p = 0.034; 59/120:
    # p = 0.57)
    verdict = doc["verdicts"]["new-better"]
    supported = p < 0.05 and Fraction(k, n) >= Fraction("0.55")
    assert supported == (k == 70)
    assert (verdict == "supported") == supported
    assert "## Analyses" in out.with_suffix(".md").read_text()


@pytest.mark.parametrize(("op", "holds"), [("ge", True), ("gt", False)])
def test_a_threshold_at_the_exact_rate_is_decided_exactly(tmp_path, op, holds):
    """220 wins of 400 is exactly 0.55 (z = 2, p = 0.023): ge holds and gt does not."""
    root = _project(
        tmp_path,
        edit=(
            "quantity: estimate, op: ge, value: 0.55",
            f"quantity: estimate, op: {op}, value: 0.55",
        ),
    )
    text = (root / SPEC).read_text().replace("rows: 60", "rows: 200")
    (root / SPEC).write_text(text)
    assert _compile(root) == 0
    code, out = _score(root, _records({"math": 120, "prose": 100}, n=200))
    assert code == 0
    doc = json.loads(out.read_text())
    row = next(a for a in doc["analyses"] if a["id"] == "win-rate")
    assert row["exact"] == {"estimate": "11/20"} and row["statistic"] == pytest.approx(2.0)
    verdict = doc["verdicts"]["new-better"]
    assert (verdict == "supported") is holds


def test_a_changed_file_is_a_changed_registration(tmp_path, capsys):
    root = _project(tmp_path)
    assert _compile(root) == 0
    assert main(["--project", str(root), "check"]) == 0
    first = custom.file_digest(root / STAT)
    with (root / STAT).open("a") as fh:
        fh.write("\n# a comment is a change too\n")
    second = custom.file_digest(root / STAT)
    capsys.readouterr()
    assert main(["--project", str(root), "check"]) != 0
    shown = capsys.readouterr()
    assert "stale or edited: generated/win_rate/rules.py" in shown.out + shown.err
    assert f'-            "sha256": "{first}"' in shown.out + shown.err
    code, out = _score(root, _records({"math": 40, "prose": 30}))
    err = capsys.readouterr().err
    assert code != 0 and not out.exists()
    assert "spec changed since the last compile" in err and f"sha256:{second}" in err
    assert STAT in err and "Traceback" not in err
    assert _compile(root) == 0
    code, out = _score(root, _records({"math": 40, "prose": 30}))
    assert code == 0
    row = json.loads(out.read_text())["analyses"][0]
    assert row["extra"]["statistic"]["sha256"] == second != first


def test_the_runtime_checks_the_file_against_the_compiled_digest(tmp_path):
    """Between the spec's pin and the import, the file is digested again: a mismatch is refused
    with both digests."""
    root = _project(tmp_path)
    stat = {"id": "win-rate", "path": STAT, "function": "win_rate", "sha256": "0" * 64}
    got = custom.file_digest(root / STAT)
    with pytest.raises(UserError) as e:
        custom.load_function(root, stat, "rules: analysis win-rate")
    assert (
        f"file sha256:{got}" in e.value.message and f"compiled sha256:{'0' * 64}" in e.value.message
    )
    fn, _ = custom.load_function(root, {**stat, "sha256": got}, "x")
    assert fn(3, 4, level=0.95, null_rate=0.5)["estimate"] == Fraction(3, 4)


def test_compile_reads_the_file_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    root = _project(
        tmp_path,
        stat_edit=("import math\n", f"import math\nopen({str(marker)!r}, 'w').close()\n"),
    )
    assert _compile(root) == 0
    assert not marker.exists()


ANALYSIS_PTR = "/hypotheses/0/analyses/0"

REFUSALS = [
    (
        ("file: win_rate.py", "file: ../win_rate.py"),
        None,
        "at /statistics/0/file: statistic 'win-rate': file '../win_rate.py' climbs out with '..'",
    ),
    (
        ("file: win_rate.py", "file: /etc/win_rate.py"),
        None,
        "at /statistics/0/file: statistic 'win-rate': file '/etc/win_rate.py' is an absolute path",
    ),
    (
        ("file: win_rate.py", "file: rate.py"),
        None,
        "file 'rate.py' is neither beside the spec nor under the project's statistics/ folder",
    ),
    (
        ("function: win_rate", "function: winrate"),
        None,
        "at /statistics/0/function: statistic 'win-rate': statistics/win_rate.py: the file"
        " defines no top-level function 'winrate'",
    ),
    (
        None,
        ("def win_rate(k, n, *, level, null_rate):", "def win_rate(k, n, level, *, null_rate):"),
        "win_rate (line 20) takes 3 positional parameter(s); shape binomial passes 2 (k, n)",
    ),
    (
        None,
        (
            "def win_rate(k, n, *, level, null_rate):",
            "def win_rate(k, n, *, level, null_rate=0.5):",
        ),
        "option null_rate has a default; every option is registered",
    ),
    (
        ("options: [level, null_rate]", "options: [level]"),
        None,
        "takes keyword-only null_rate, which the statistic does not declare among its options",
    ),
    (
        ("shape: binomial", "shape: binomials"),
        None,
        "at /statistics/0/shape: statistic 'win-rate': 'binomials' is not a shape",
    ),
    (
        ("id: win-rate\n    file", "id: wilson\n    file"),
        None,
        "'wilson': wilson is a method of the catalogue; give the statistic its own id",
    ),
    (
        ("options: {level: 0.95, null_rate: 0.5}", "options: {level: 0.95}"),
        None,
        f"at {ANALYSIS_PTR}/options: analysis 'win-rate': method win-rate needs option(s)"
        " null_rate",
    ),
    (
        ("        of: {where: [{factor: domain, levels: [math, prose]}]}\n", ""),
        None,
        f"at {ANALYSIS_PTR}: analysis 'win-rate': method win-rate (shape binomial) needs of",
    ),
]


@pytest.mark.parametrize(("edit", "stat_edit", "message"), REFUSALS)
def test_compile_refuses_what_does_not_match(tmp_path, capsys, edit, stat_edit, message):
    root = _project(tmp_path, edit=edit, stat_edit=stat_edit)
    if edit is not None and "wilson" in edit[1]:
        text = (root / SPEC).read_text().replace("method: win-rate", "method: wilson")
        (root / SPEC).write_text(text)
    assert _compile(root) != 0
    err = capsys.readouterr().err
    assert message in err
    assert f"{SPEC}:" in err and "Traceback" not in err
    assert not (root / "generated" / "win_rate").exists()


def test_a_method_neither_in_the_catalogue_nor_registered_is_refused(tmp_path, capsys):
    root = _project(tmp_path, edit=("method: win-rate", "method: win-rates"))
    assert _compile(root) != 0
    err = capsys.readouterr().err
    assert f"at {ANALYSIS_PTR}/method: analysis 'win-rate': 'win-rates' is not a method" in err
    assert "nor a statistic of the study's own (registered under statistics)" in err


RAISES = (
    "    rate = Fraction(int(k), int(n))\n",
    '    if k > 60:\n        raise ArithmeticError(f"too many wins: {k}")\n'
    "    rate = Fraction(int(k), int(n))\n",
)


@pytest.mark.parametrize(
    ("stat_edit", "message"),
    [
        (RAISES, "raised ArithmeticError: too many wins: 70 (statistics/win_rate.py:28)"),
        (
            (
                '    return {\n        "estimate": rate,',
                '    return [rate]\n    return {\n        "estimate": rate,',
            ),
            "returned list, not a Result nor a mapping of its keys",
        ),
        (
            ('"statistic_name": "z",', '"statistic_name": "z", "pvalue": 0.1,'),
            "returned key 'pvalue', which is not a Result key",
        ),
        (
            ('"p": 0.5 * math.erfc', '"p": 2 + 0.5 * math.erfc'),
            "p is 2.03394457743091",
        ),
        (
            ('"estimate": rate,', '"estimate": str(rate),'),
            "estimate is str '7/12', not a number or None",
        ),
    ],
)
def test_score_refuses_what_the_function_gets_wrong(tmp_path, capsys, stat_edit, message):
    root = _project(tmp_path, stat_edit=stat_edit)
    assert _compile(root) == 0
    capsys.readouterr()
    code, out = _score(root, _records({"math": 40, "prose": 30}))
    err = capsys.readouterr().err
    assert code != 0 and not out.exists()
    assert "analysis win-rate (statistic win-rate): statistics/win_rate.py:" in err
    assert message in err and "Traceback" not in err


def test_a_result_is_accepted_as_returned(tmp_path):
    """The function may return prereg's Result; exact fractions beside floats are checked."""
    from prereg.stats.result import Result

    def fail(message):
        raise UserError(message)

    r = custom.as_result(
        Result("mine", estimate=0.25, p=0.5, exact={"estimate": Fraction(1, 4)}), "own", fail
    )
    assert r.method == "own" and r.exact == {"estimate": Fraction(1, 4)} and r.p == 0.5
    with pytest.raises(UserError, match="estimate is 0.3 and exact estimate is 1/4"):
        custom.as_result({"estimate": 0.3, "exact": {"estimate": Fraction(1, 4)}}, "own", fail)
    with pytest.raises(UserError, match="lower 0.5 is above upper 0.25"):
        custom.as_result({"lower": 0.5, "upper": 0.25}, "own", fail)
    # a count statistic is kept as marked, whole, and written as an integer; one that is not
    # whole, or a mark that is not true or false, is refused
    counted = custom.as_result({"statistic": 7, "statistic_count": True}, "own", fail)
    assert counted.statistic_count and counted.as_dict()["statistic"] == 7
    assert type(counted.as_dict()["statistic"]) is int
    assert not custom.as_result({"statistic": 7}, "own", fail).statistic_count
    with pytest.raises(UserError, match="statistic 7.5 is not a whole number"):
        custom.as_result({"statistic": 7.5, "statistic_count": True}, "own", fail)
    with pytest.raises(UserError, match="statistic_count is 'yes', not true or false"):
        custom.as_result({"statistic": 7, "statistic_count": "yes"}, "own", fail)


def test_diagnose_simulates_a_rule_that_reads_a_statistic_of_ones_own(tmp_path, capsys):
    spec_dir = ROOT / "examples" / "answer-position" / "spec"
    shutil.copytree(spec_dir, tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    (tmp_path / "statistics").mkdir()
    shutil.copy(EXAMPLE / STAT, tmp_path / STAT)
    spec = tmp_path / "spec" / "studies" / "answer-position.yaml"
    text = spec.read_text()
    h2 = "    title: Model B shows no position effect larger than 0.15\n"
    rule = (
        '            - compare: {target: "a-vs-d-model-b-{format}", quantity: upper, op: lt,'
        " value: 0.15}\n"
    )
    assert text.count(h2) == 1 and text.count(rule) == 1 and "\nhypotheses:\n" in text
    text = text.replace(
        h2,
        h2
        + "    analyses:\n      - id: b-wins\n        method: win-rate\n        metric: accuracy\n"
        "        of: {where: [{factor: split, levels: [test]}, {factor: model, levels: [model-b]}]}\n"
        "        options: {level: 0.95, null_rate: 0.5}\n",
    )
    text = text.replace(
        rule, rule + "            - compare: {target: b-wins, quantity: p, op: lt, value: 0.05}\n"
    )
    text = text.replace(
        "\nhypotheses:\n",
        "\nstatistics:\n  - {id: win-rate, file: win_rate.py, function: win_rate, shape: binomial,"
        " options: [level, null_rate], summary: a win rate}\nhypotheses:\n",
    )
    spec.write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["diagnose", "--scenario", "no-bias", "--simulations", "4", "--seed", "1"]
    assert main(["--project", str(tmp_path), "answer-position", *args, "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    for cond in doc["conditions"]:
        row = next(a for a in cond["analyses"] if a["id"] == "b-wins")
        assert row["method"] == "win-rate" and row["withP"] == 4
        assert row["alphaFrom"] == "rule" and 0 <= row["meanEstimate"] <= 1


def test_a_seal_sees_a_changed_file_as_a_registered_change(tmp_path):
    """The seal holds the registered content with each statistic's digest: a changed file is
    an undeclared registered change at /statistics[<id>]/sha256."""
    from prereg.compiler import build, seal
    from prereg.compiler.project import Project

    root = _project(tmp_path)
    project = Project(root)
    sealed = seal.make_seal(build.load_study(project, root / SPEC).data)
    first = custom.file_digest(root / STAT)
    assert seal.undeclared(build.load_study(project, root / SPEC).data, sealed) == []
    with (root / STAT).open("a") as fh:
        fh.write("# changed\n")
    changes = seal.undeclared(build.load_study(project, root / SPEC).data, sealed)
    assert [c.path for c in changes] == ["/statistics[win-rate]/sha256"]
    assert first in changes[0].message and custom.file_digest(root / STAT) in changes[0].message


def test_diff_against_a_revision_shows_a_changed_file(tmp_path, capsys):
    import subprocess

    root = _project(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=root, check=True)
    before = custom.file_digest(root / STAT)
    main(["--project", str(root), "diff", "--against", "HEAD", "--format", "json"])
    assert "statistics" not in capsys.readouterr().out
    with (root / STAT).open("a") as fh:
        fh.write("# changed\n")
    main(["--project", str(root), "diff", "--against", "HEAD", "--format", "json"])
    out = capsys.readouterr().out
    assert "/statistics[win-rate]/sha256" in out
    assert before in out and custom.file_digest(root / STAT) in out


def test_a_file_that_fails_to_import_is_refused_with_its_line(tmp_path, capsys):
    root = _project(tmp_path, stat_edit=("import math\n", "import math\n\nLIMIT = 1 / 0\n"))
    assert _compile(root) == 0  # compile reads the syntax tree only
    capsys.readouterr()
    code, out = _score(root, _records({"math": 40, "prose": 30}))
    err = capsys.readouterr().err
    assert code != 0 and not out.exists()
    line = (root / STAT).read_text().splitlines().index("LIMIT = 1 / 0") + 1
    assert f"importing {STAT}:{line} failed: ZeroDivisionError: division by zero" in err
    assert "Traceback" not in err


def test_a_statistic_beside_the_spec(tmp_path):
    """The file may live beside the spec instead of under statistics/; the pin names where."""
    root = _project(tmp_path)
    (root / STAT).rename(root / "spec" / "studies" / "win_rate.py")
    (root / "statistics").rmdir()
    assert _compile(root) == 0
    code, out = _score(root, _records({"math": 40, "prose": 30}))
    assert code == 0
    row = json.loads(out.read_text())["analyses"][0]
    assert row["extra"]["statistic"]["file"] == "spec/studies/win_rate.py"
    assert row["exact"] == {"estimate": "7/12"}
