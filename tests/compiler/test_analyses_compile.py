"""Compile-time refusals of registered analyses: each edit of an analysis fixture breaks one
rule (an unknown method, a missing or extra input for the method's shape, a missing or unknown
option, a metric kind the shape does not take, an unknown field, factor or id, a field the
language does not have) and is refused with the file, line, JSON pointer and the rule, with
nothing written; and diagnose simulates a rule that reads one (row by row, through the
analysis' own method) and leaves an unread one out, saying so."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from prereg.cli import main
from tests.conftest import FIXTURES, ROOT

TREND = "dose-trend"
CA_OPTIONS = "options: {scores: [1, 2, 4], alternative: greater, variance: n}"

GRAPHICAL = """      - id: both
        method: graphical
        of_analyses: [accuracy-trend, accuracy-homogeneity]
        options: {{weights: {weights}, transitions: {transitions}, alpha: 0.05, missing: refuse}}
"""

CASES = [
    (
        TREND,
        "method: cochran-armitage",
        "method: cochran-armitag",
        "/hypotheses/0/analyses/0/method: analysis 'accuracy-trend': 'cochran-armitag' is not a"
        " method of the catalogue; did you mean cochran-armitage",
    ),
    (
        TREND,
        "method: cochran-armitage",
        "method: fisher-exact",
        "/hypotheses/0/analyses/0: analysis 'accuracy-trend': method fisher-exact (shape"
        " two-binomial) needs a; it reads a, b",
    ),
    (
        TREND,
        "method: cochran-armitage",
        "method: fisher-exact",
        "/hypotheses/0/analyses/0/groups: analysis 'accuracy-trend': method fisher-exact (shape"
        " two-binomial) does not read groups; it reads a, b",
    ),
    (
        TREND,
        CA_OPTIONS,
        "options: {scores: [1, 2, 4], alternative: greater}",
        "/hypotheses/0/analyses/0/options: analysis 'accuracy-trend': method cochran-armitage"
        " needs option(s) variance (its options, every one registered: scores: one number per"
        " group, in the registered order; alternative: two-sided | greater",
    ),
    (
        TREND,
        CA_OPTIONS,
        "options: {scores: [1, 2, 4], alternative: greater, variance: n, correction: yates}",
        "/hypotheses/0/analyses/0/options/correction: analysis 'accuracy-trend': method"
        " cochran-armitage has no option 'correction'",
    ),
    (
        TREND,
        CA_OPTIONS,
        "options: {scores: [1, 2, 4], alternative: bigger, variance: n}",
        "/hypotheses/0/analyses/0/options/alternative: analysis 'accuracy-trend': option"
        " alternative of method cochran-armitage is 'bigger', which is not one of its values"
        " (alternative: two-sided | greater (the proportion increases with the score) | less)",
    ),
    (
        # a trend's scores are one per group: two scores for three groups could never be
        # scored (score refused it only once the data were in)
        TREND,
        CA_OPTIONS,
        "options: {scores: [1, 2], alternative: greater, variance: n}",
        "/hypotheses/0/analyses/0/options/scores: analysis 'accuracy-trend': option scores of"
        " method cochran-armitage has 2 number(s), and groups lists 3: one number per group, in"
        " the registered order",
    ),
    (
        TREND,
        CA_OPTIONS,
        "options: {scores: [1, '1/2', 4], alternative: greater, variance: n}",
        "/hypotheses/0/analyses/0/options/scores/1: analysis 'accuracy-trend': option scores of"
        " method cochran-armitage holds '1/2', which is not a number (write a decimal: 0.25,"
        " not '1/4')",
    ),
    (
        TREND,
        CA_OPTIONS,
        "options: {scores: 4, alternative: greater, variance: n}",
        "/hypotheses/0/analyses/0/options/scores: analysis 'accuracy-trend': option scores of"
        " method cochran-armitage is a list of 3, one number per group of groups",
    ),
    (
        TREND,
        "    rule:\n      compare: {target: accuracy-trend, quantity: p,",
        GRAPHICAL.format(weights="[0.5, 0.25, 0.25]", transitions="[[0, 1], [1, 0]]")
        + "    rule:\n      compare: {target: accuracy-trend, quantity: p,",
        "/hypotheses/0/analyses/2/options/weights: analysis 'both': option weights of method"
        " graphical has 3 weight(s), and of_analyses lists 2: one weight per P value, in the"
        " registered order",
    ),
    (
        TREND,
        "    rule:\n      compare: {target: accuracy-trend, quantity: p,",
        GRAPHICAL.format(weights="[0.5, 0.5]", transitions="[[0, 1], [1]]")
        + "    rule:\n      compare: {target: accuracy-trend, quantity: p,",
        "/hypotheses/0/analyses/2/options/transitions: analysis 'both': option transitions of"
        " method graphical is the 2 x 2 matrix over the P values of of_analyses",
    ),
    (
        # pass@k has no P value: a rule reading one would never hold, whatever the data
        "pass-at-k",
        "compare: {target: pass-at-5-nucleus, quantity: estimate, op: ge, value: 0.55}",
        "compare: {target: pass-at-5-nucleus, quantity: p, op: lt, value: 0.05}",
        "/hypotheses/0/rule/compare/quantity: analysis 'pass-at-5-nucleus' (method pass-at-k)"
        " has no P value, so a comparison of its p is never met; it reports estimate (compare"
        " one of those, or register a method with a test)",
    ),
    # the same for every other figure, by the method's entry in the catalogue: a trend test
    # (cochran-armitage: estimate, se, statistic, p) has no df and no interval, pass@k no se
    *(
        (
            TREND,
            "compare: {target: accuracy-trend, quantity: estimate, op: ge, value: 0.05}",
            f"compare: {{target: accuracy-trend, quantity: {q}, op: ge, value: 0.05}}",
            f"/hypotheses/1/rule/compare/quantity: analysis 'accuracy-trend'"
            f" (method cochran-armitage) never reports {q}, so a comparison of its {q} is never"
            " met; method cochran-armitage reports estimate, se, statistic, p",
        )
        for q in ("df", "lower", "upper")
    ),
    (
        "pass-at-k",
        "compare: {target: pass-at-5-nucleus, quantity: estimate, op: ge, value: 0.55}",
        "compare: {target: pass-at-5-nucleus, quantity: se, op: lt, value: 0.05}",
        "/hypotheses/0/rule/compare/quantity: analysis 'pass-at-5-nucleus' (method pass-at-k)"
        " never reports se, so a comparison of its se is never met; method pass-at-k reports"
        " estimate",
    ),
    (
        # a bound pass@k does not report: the refusal names the method of its shape that does
        "pass-at-k",
        "compare: {target: pass-at-5-nucleus, quantity: estimate, op: ge, value: 0.55}",
        "compare: {target: pass-at-5-nucleus, quantity: lower, op: ge, value: 0.5}",
        "/hypotheses/0/rule/compare/quantity: analysis 'pass-at-5-nucleus' (method pass-at-k)"
        " never reports lower, so a comparison of its lower is never met; method pass-at-k"
        " reports estimate (its entry in the methods catalogue, docs/analyses.md); method"
        " pass-at-k-t of its shape samples-per-problem reports lower",
    ),
    (
        # option values the method can never take are refused at compile time, not when the
        # data are scored: a level written as a percentage, a k of 0
        "interaction",
        "options: {coefficients: [1, -1, -1, 1], alternative: greater, level: 0.95, margin: 0}",
        "options: {coefficients: [1, -1, -1, 1], alternative: greater, level: 95, margin: 0}",
        "/hypotheses/0/analyses/0/options/level: analysis 'ix': method"
        " linear-contrast-proportions refuses option level: level must lie strictly between 0"
        " and 1, got 95",
    ),
    (
        # a coefficient may be an exact fraction written "p/q", never one over 0
        "interaction",
        "options: {coefficients: [1, -1, -1, 1], alternative: greater, level: 0.95, margin: 0}",
        "options: {coefficients: ['1/0', -1, -1, 1], alternative: greater, level: 0.95, margin: 0}",
        "/hypotheses/0/analyses/0/options/coefficients/0: analysis 'ix': option coefficients of"
        " method linear-contrast-proportions holds '1/0', which is not a number (write a"
        " decimal, 0.25, or an exact fraction as a string, '1/3')",
    ),
    (
        "pass-at-k",
        "        options: {k: 1}",
        "        options: {k: 0}",
        "/hypotheses/0/analyses/0/options/k: analysis 'pass-at-1-{decoding}': method pass-at-k"
        " refuses option k: k must be a positive whole number, got 0",
    ),
    (
        TREND,
        CA_OPTIONS,
        "options: [1, 2, 4]",
        "/hypotheses/0/analyses/0/options: analysis 'accuracy-trend': options is an object of"
        " the method's options (scores:",
    ),
    (
        TREND,
        "        method: cochran-armitage\n        metric: accuracy\n",
        "        method: cochran-armitage\n        metric: coverages\n",
        "/hypotheses/0/analyses/0/metric: analysis 'accuracy-trend' names unknown metric"
        " 'coverages'",
    ),
    (
        TREND,
        "        method: cochran-armitage\n",
        "        method: cochran-armitage\n        strata: dose\n",
        "/hypotheses/0/analyses/0/strata: analysis 'accuracy-trend': method cochran-armitage"
        " (shape binomial-groups) does not read strata",
    ),
    (
        TREND,
        "compare: {target: accuracy-trend, quantity: p, op: lt, value: 0.05}",
        "compare: {target: accuracy-trnd, quantity: p, op: lt, value: 0.05}",
        "/hypotheses/0/rule/compare/target: comparison names unknown contrast, estimate,"
        " analysis or figure 'accuracy-trnd'",
    ),
    (
        TREND,
        "      - id: accuracy-homogeneity\n",
        "      - id: accuracy-trend\n",
        "/hypotheses/0/analyses/1/id: duplicate analysis id 'accuracy-trend'",
    ),
    (
        TREND,
        "          - {where: [{factor: passages, levels: [four]}]}\n        options: {}",
        "          - {where: [{factor: passages, levels: [eight]}]}\n        options: {}",
        "analysis 'accuracy-homogeneity' selects level 'eight', which factor 'passages' does not"
        " have",
    ),
    (
        TREND,
        "method: chi-square-homogeneity\n        metric: accuracy\n",
        "method: holm\n        metric: accuracy\n        of_analyses: [accuracy-trend, nothing]\n",
        "/hypotheses/0/analyses/1/metric: analysis 'accuracy-homogeneity': method holm adjusts P"
        " values and reads no metric",
    ),
    (
        TREND,
        "method: chi-square-homogeneity\n        metric: accuracy\n",
        "method: holm\n        of_analyses: [accuracy-trend, nothing]\n",
        "/hypotheses/0/analyses/1/of_analyses/1: analysis 'accuracy-homogeneity': names unknown"
        " analysis or contrast 'nothing'",
    ),
    (
        "pass-at-k",
        "        options: {k: 5}\n",
        '        options: {k: "k{decoding}"}\n',
        "/hypotheses/0/analyses/1/options/k: analysis 'pass-at-5-{decoding}': option k holds the"
        " placeholder {decoding} inside its value; an option takes a placeholder only as its"
        ' whole value (k: "{decoding}")',
    ),
    (
        "pass-at-k",
        "        options: {k: 5}\n",
        '        options: {k: "{kk}"}\n',
        "/hypotheses/0/analyses/1/options/k: analysis 'pass-at-5-{decoding}': option k is the"
        " placeholder {kk}, which expand does not name (its placeholders: decoding)",
    ),
    (
        "pass-at-k",
        "        options: {k: 5}\n        expand:\n          - {name: decoding, values: [greedy-temp, nucleus]}\n",
        '        options: {k: "{k}"}\n        expand:\n          - {name: decoding, values: [greedy-temp, nucleus]}\n          - {name: k, values: ["5", "0"]}\n',
        "/hypotheses/0/analyses/1/options/k: analysis 'pass-at-5-{decoding}': method pass-at-k"
        " refuses option k: k must be",
    ),
    (
        "tost-latency",
        "method: tost-means",
        "method: tost-proportions",
        "/hypotheses/0/analyses/0/metric: analysis 'quality-tost': method tost-proportions (shape"
        " two-binomial) takes a proportion or coverage metric, and 'quality' is a mean; the"
        " methods that fit a mean metric are",
    ),
    (
        "dose-trend",
        "method: cochran-armitage",
        "method: one-way-anova",
        "takes a mean or geometric_mean metric, and 'accuracy' is a proportion; the methods that"
        " fit a proportion metric are",
    ),
    (
        "dose-trend",
        "method: cochran-armitage",
        "method: one-way-anova",
        "answers per problem); to give this method the right/wrong outcomes as numbers"
        " (clustered or paired 0/1 outcomes, say), register a derived field that is 1 when the"
        " row is right and 0 otherwise (derived_fields: [{id: right_n, cases: [{when: [<the"
        " metric's where>], value: 1}, {value: 0}]}]) and a mean metric of it ({kind: mean,"
        " field: right_n}); see docs/analyses.md, Picking a method",
    ),
    (
        "rater-agreement",
        "        unit: answer\n        rater: rater\n        rating: grade\n        options: {categories: [0, 1, 2], alternative: greater}",
        "        unit: answr\n        rater: rater\n        rating: grade\n        options: {categories: [0, 1, 2], alternative: greater}",
        "/hypotheses/0/analyses/0/unit: analysis 'fleiss': unit names unknown field 'answr'",
    ),
    (
        "rater-agreement",
        "        unit: answer\n        rater: rater\n        rating: grade\n        options: {categories: [0, 1, 2], alternative: greater}",
        "        unit: answer\n        rating: grade\n        options: {categories: [0, 1, 2], alternative: greater}",
        "/hypotheses/0/analyses/0: analysis 'fleiss': method fleiss-kappa (shape ratings) needs"
        " rater; it reads of, unit, rater, rating",
    ),
    (
        "tost-latency",
        "        method: tost-means\n        metric: quality\n",
        "        method: cluster-summary-t\n        metric: quality\n        cluster: rowId\n",
        "method cluster-summary-t needs option(s) weighting, level, alternative, margin",
    ),
]


def _project(tmp_path, study):
    spec = tmp_path / "spec" / "studies" / f"{study}.yaml"
    spec.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "analyses" / f"{study}.yaml", spec)
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    return spec


@pytest.mark.parametrize("study, old, new, message", CASES)
def test_a_bad_analysis_is_refused_with_its_rule(tmp_path, capsys, study, old, new, message):
    spec = _project(tmp_path, study)
    text = spec.read_text()
    assert text.count(old) == 1, "the edit must be unambiguous"
    spec.write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) != 0
    err = capsys.readouterr().err
    assert message in err
    # the file, the line and the JSON pointer of the problem
    assert re.search(rf"{study}\.yaml:\d+: at /hypotheses/\d+/", err) and "Traceback" not in err
    assert sorted(p.name for p in (tmp_path / "generated").iterdir()) == ["prereg.schema.json"]


def test_an_unknown_field_of_an_analysis_is_named(tmp_path, capsys):
    spec = _project(tmp_path, TREND)
    text = spec.read_text()
    spec.write_text(
        text.replace(
            "        method: cochran-armitage\n",
            "        method: cochran-armitage\n        level: 0.95\n",
        )
    )
    assert main(["--project", str(tmp_path), "compile"]) != 0
    err = capsys.readouterr().err
    # one located line: the key, its file, line and column, and what may stand there
    assert "unknown key 'level' at spec/studies/" in err and "method" in err


def test_a_catalogue_option_the_inputs_give_is_not_written(tmp_path, capsys):
    """cluster-summary-t's arms come from the inputs (of, or a and b): writing it is refused."""
    spec = _project(tmp_path, "tost-latency")
    text = spec.read_text()
    old = "        method: tost-means\n        metric: quality\n"
    new = "        method: cluster-summary-t\n        metric: quality\n        cluster: rowId\n"
    text = text.replace(old, new).replace(
        "options: {lower: -0.3, upper: 0.3, variance: welch}",
        "options: {arms: [a, b], weighting: equal, level: 0.95, alternative: two-sided, margin: 0}",
    )
    spec.write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) != 0
    err = capsys.readouterr().err
    assert "has no option 'arms' to write (the inputs give it)" in err


# -- diagnose -----------------------------------------------------------------------------------

ANALYSIS = """    analyses:
      - id: b-fisher
        method: fisher-exact
        metric: accuracy
        a: {where: [{factor: split, levels: [test]}, {factor: model, levels: [model-b]}, {factor: position, levels: [a]}]}
        b: {where: [{factor: split, levels: [test]}, {factor: model, levels: [model-b]}, {factor: position, levels: [d]}]}
        options: {alternative: two-sided}
"""
H2 = "    title: Model B shows no position effect larger than 0.15\n"


def _answer_position(tmp_path, *, read: bool):
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    spec = tmp_path / "spec" / "studies" / "answer-position.yaml"
    text = spec.read_text()
    assert text.count(H2) == 1
    text = text.replace(H2, H2 + ANALYSIS)
    if read:
        old = '            - compare: {target: "a-vs-d-model-b-{format}", quantity: upper, op: lt, value: 0.15}\n'
        assert text.count(old) == 1
        text = text.replace(
            old,
            old + "            - compare: {target: b-fisher, quantity: p, op: ge, value: 0.05}\n",
        )
    spec.write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    return ["--project", str(tmp_path), "answer-position"]


def test_diagnose_simulates_a_rule_that_reads_an_analysis(tmp_path, capsys):
    """A rule reading the analysis' P takes the row path: every condition reports the
    analysis (the rule asks P >= 0.05, no rejection threshold, so no rejection rate)."""
    study = _answer_position(tmp_path, read=True)
    out = tmp_path / "DIAGNOSE.json"
    args = ["diagnose", "--scenario", "no-bias", "--simulations", "4", "--seed", "1"]
    assert main([*study, *args, "--out", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert any(n.startswith("Simulated row by row") for n in doc["notes"])
    for cond in doc["conditions"]:
        (row,) = cond["analyses"]
        assert row["id"] == "b-fisher" and row["method"] == "fisher-exact"
        assert "alpha" not in row and "rejected" not in row
        assert row["withP"] == 4 and row["defined"] <= 4


def test_diagnose_leaves_an_unread_analysis_out(tmp_path, capsys):
    study = _answer_position(tmp_path, read=False)
    out = tmp_path / "DIAGNOSE.json"
    args = ["diagnose", "--scenario", "no-bias", "--simulations", "4", "--seed", "1"]
    assert main([*study, *args, "--out", str(out)]) == 0
    notes = json.loads(out.read_text())["notes"]
    assert any(n.startswith("analysis b-fisher is not simulated:") for n in notes)


def test_the_methods_page_lists_the_catalogue_as_it_is():
    """docs/analyses.md ends with the reference rendered from the catalogue's entries: every
    method with its shape, inputs, metric kinds and options (a new method or option shows
    here, or this fails)."""
    from prereg.compiler.analyses import BEGIN, methods_reference
    from prereg.stats.catalogue import entries

    page = (ROOT / "docs" / "analyses.md").read_text()
    assert page[page.index(BEGIN) :] == methods_reference()
    for name, entry in entries().items():
        assert f"### {name}\n" in page
        for option in entry.options:
            if option != "arms":
                assert f"  - `{option}`: " in page


def test_prereg_md_shows_each_analysis_as_registered(tmp_path):
    _project(tmp_path, TREND)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    page = (tmp_path / "generated" / "dose_trend" / "PREREG.md").read_text()
    assert (
        "| `accuracy-trend` | cochran-armitage | accuracy | groups (in order): passages∈one;"
        ' passages∈two; passages∈four | scores [1, 2, 4], alternative "greater", variance "n" |'
    ) in page
    rules = (tmp_path / "generated" / "dose_trend" / "rules.py").read_text()
    assert 'options={"scores": (1, 2, 4), "alternative": "greater", "variance": "n"}' in rules


def test_diff_reports_a_changed_option_as_registered(tmp_path, capsys):
    spec = _project(tmp_path, TREND)
    new = tmp_path / "new.yaml"
    new.write_text(
        spec.read_text().replace(CA_OPTIONS, CA_OPTIONS.replace("[1, 2, 4]", "[0, 1, 2]"))
    )
    assert main(["--project", str(tmp_path), "diff", str(spec), str(new)]) == 1
    out = capsys.readouterr().out
    assert "registered  /hypotheses[trend]/analyses[accuracy-trend]/options/scores" in out


def test_se_statistic_and_df_are_read_of_analyses_only(tmp_path, capsys):
    """A contrast has no se, statistic or df to compare: such a rule is refused at compile."""
    shutil.copytree(ROOT / "examples" / "answer-position" / "spec", tmp_path / "spec")
    (tmp_path / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", tmp_path / "generated")
    spec = tmp_path / "spec" / "studies" / "answer-position.yaml"
    text = spec.read_text()
    old = '            - compare: {target: "a-vs-d-model-b-{format}", quantity: upper, op: lt, value: 0.15}\n'
    new = '            - compare: {target: "a-vs-d-model-b-{format}", quantity: statistic, op: lt, value: 2}\n'
    assert text.count(old) == 1
    spec.write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) != 0
    err = capsys.readouterr().err
    assert "/compare/quantity: quantity statistic is a figure of an analysis, and" in err
    assert "'a-vs-d-model-b-{format}' is not one" in err


def test_list_options_of_the_right_length_compile(tmp_path):
    """The length checks refuse only what can never be scored: three scores for three groups
    and a graphical procedure with two weights and a 2 x 2 matrix over two P values compile."""
    spec = _project(tmp_path, TREND)
    text = spec.read_text()
    old = "    rule:\n      compare: {target: accuracy-trend, quantity: p,"
    assert text.count(old) == 1
    new = GRAPHICAL.format(weights="[0.5, 0.5]", transitions="[[0, 1], [1, 0]]") + old
    spec.write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) == 0


def test_prereg_md_shows_each_expanded_analysis_with_its_values(tmp_path):
    """An option written as an expand placeholder (``k: "{k}"``) is shown, in each expanded
    analysis' row, as the value that analysis takes, beside the values that gave it; the id
    and the inputs are filled the same way, and no placeholder is left in the table."""
    spec = _project(tmp_path, "pass-at-k")
    text = spec.read_text()
    old = (
        '      - id: "pass-at-5-{decoding}"\n        method: pass-at-k\n        metric: solved\n'
        '        of: {where: [{factor: decoding, levels: ["{decoding}"]}]}\n'
        "        unit: problem\n        options: {k: 5}\n        expand:\n"
        "          - {name: decoding, values: [greedy-temp, nucleus]}\n"
    )
    new = (
        '      - id: "pass-at-{k}-{decoding}"\n        method: pass-at-k\n        metric: solved\n'
        '        of: {where: [{factor: decoding, levels: ["{decoding}"]}]}\n'
        '        unit: problem\n        options: {k: "{k}"}\n        expand:\n'
        "          - {name: decoding, values: [greedy-temp, nucleus]}\n"
        '          - {name: k, values: ["3", "5"]}\n'
    )
    assert text.count(old) == 1
    spec.write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) == 0
    page = (tmp_path / "generated" / "pass_at_k" / "PREREG.md").read_text()
    table = page.split("| analysis | method |", 1)[1].split("\n\n", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| `pass-at-")]
    over = "decoding ∈ {greedy-temp, nucleus} × k ∈ {3, 5}"
    for decoding in ("greedy-temp", "nucleus"):
        for k in ("3", "5"):
            row = (
                f"| `pass-at-{k}-{decoding}` | pass-at-k | solved | of: decoding∈{decoding};"
                f" unit: problem | k {k} |  | decoding = {decoding}, k = {k} (one of 4 over {over}) |"
            )
            assert row in rows, (row, rows)
    assert len(rows) == 2 + 4
    assert "{k}" not in table and '"{' not in table and "∈{decoding}" not in table
    rules = (tmp_path / "generated" / "pass_at_k" / "rules.py").read_text()
    assert rules.count('options={"k": 3}') == 2 and rules.count('options={"k": 5}') == 2
