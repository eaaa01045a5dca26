"""Three fine-tunes against one baseline, written from the docs by a newcomer (tests/fixtures/
newcomer/dunnett.yaml): Dunnett's many-to-one comparison, one analysis per treatment by
expand, P family-wise over the three. The grades are decimals; ft3's are the baseline's plus
exactly 1/2 in total as written (the floats' difference of means is 0.4999999999999991), so
`estimate ge 0.5` holds and `gt 0.5` fails. The t's are the pooled t's by hand; the adjusted
P values and bounds are scipy.stats.dunnett's (to its quasi-Monte Carlo error)."""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "newcomer" / "dunnett.yaml"
GRADES = {
    "base": [5.0, 6.2, 5.5, 6.4, 6.5, 4.3],
    "ft1": [5.2, 6.0, 5.1, 6.6, 6.2, 4.9],
    "ft2": [6.3, 7.4, 6.9, 7.7, 7.5, 5.6],
    "ft3": [5.3, 6.6, 6.2, 7.0, 7.0, 4.8],
}


def _score(root, text):
    (root / "spec" / "studies").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "studies" / "dunnett.yaml").write_text(text)
    assert main(["--project", str(root), "compile"]) == 0
    log = root / "grades.csv"
    lines = ["item,model,score"]
    lines += [f"i{i},{m},{x!r}" for m, xs in GRADES.items() for i, x in enumerate(xs)]
    log.write_text("\n".join(lines) + "\n")
    out = root / "SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "dunnett", "score", *args]) == 0
    return json.loads(out.read_text())


def test_the_data_sit_on_the_threshold():
    exact = sum(Decimal(repr(x)) for x in GRADES["ft3"]) - sum(
        Decimal(repr(x)) for x in GRADES["base"]
    )
    assert exact / 6 == Decimal("0.5")
    assert np.mean(GRADES["ft3"]) - np.mean(GRADES["base"]) < 0.5


@pytest.mark.parametrize(("op", "verdict"), [("ge", "supported"), ("gt", "not-supported")])
def test_dunnett_study(tmp_path, op, verdict):
    text = SPEC.read_text()
    old = "compare: {target: vs4, quantity: estimate, op: ge, value: 0.5}"
    assert text.count(old) == 1
    doc = _score(tmp_path, text.replace(old, old.replace("op: ge", f"op: {op}")))
    got = {a["id"]: a for a in doc["analyses"]}
    assert sorted(got) == ["vs2", "vs3", "vs4"]
    gs = [np.array(GRADES[m]) for m in ("base", "ft1", "ft2", "ft3")]
    ref = stats.dunnett(
        *gs[1:], control=gs[0], alternative="greater", random_state=np.random.default_rng(0)
    )
    ci = ref.confidence_interval(0.95)
    s2 = sum(((g - g.mean()) ** 2).sum() for g in gs) / (24 - 4)
    for j, aid in enumerate(("vs2", "vs3", "vs4")):
        a = got[aid]
        d = gs[j + 1].mean() - gs[0].mean()
        assert a["statistic"] == pytest.approx(d / np.sqrt(s2 * (2 / 6)), rel=1e-9)
        assert a["df"] == 20
        assert a["p"] == pytest.approx(ref.pvalue[j], abs=2e-3)
        assert a["lower"] == pytest.approx(ci.low[j], abs=5e-3)
        assert a["upper"] is None
    # the difference exactly 1/2 as written is carried exactly and decides the threshold
    assert got["vs4"]["exact"]["estimate"] == "1/2"
    assert doc["verdicts"]["ft3-by-half"] == verdict
    # ft2 (about 1.1 above) is below 0.05 family-wise: at least one fine-tune is better
    assert got["vs3"]["p"] < 0.05 < got["vs2"]["p"]
    assert doc["verdicts"]["some-better"] == "supported"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('"5"', "treatment must lie from 2 to 4"),
        ('"1"', "treatment must lie from 2 to 4"),
        ('"2.5"', "whole number"),
    ],
)
def test_compile_refuses_a_treatment_outside_the_groups(tmp_path, capsys, value, words):
    text = SPEC.read_text().replace('values: ["2", "3", "4"]}]', f'values: ["2", "3", {value}]}}]')
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "dunnett.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "method dunnett refuses option treatment" in err and words in err


def test_diagnose_gives_the_difference_of_means_as_truth(tmp_path):
    """A scenario where ft2 grades one point above the others (normal, sd 1): the truth of
    each treatment's analysis is its mean less the baseline's (0, 1, 0), and each one-sided
    interval (lower bound only) has a coverage, which as a simultaneous bound is at least its
    95% less four Monte Carlo SEs."""
    text = SPEC.read_text().replace(
        "constants:\n",
        "scenarios:\n"
        "  - id: ft2-better\n"
        "    description: ft2 one point above the baseline; the others equal to it.\n"
        "    values:\n"
        "      - {field: score, where: [{factor: model, levels: [ft2]}], distribution: normal,"
        " mean: 7, sd: 1}\n"
        "      - {field: score, distribution: normal, mean: 6, sd: 1}\n"
        "constants:\n",
    )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "dunnett.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "dunnett", "diagnose", "--quiet", "--simulations", "200"]
    assert main([*args, "--seed", "5", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    got = {a["id"]: a for a in cond["analyses"]}
    for aid, truth in (("vs2", 0.0), ("vs3", 1.0), ("vs4", 0.0)):
        a = got[aid]
        assert a["truth"] == truth
        assert abs(a["bias"]) <= 4 * a["biasMcSe"]
        cover = a["coverage"]
        assert cover["share"] >= 0.95 - 4 * max(cover["mcSe"], 0.01)


def _named(text: str) -> str:
    """The fixture with its groups named by model and its treatments by those names."""
    for m in ("base", "ft1", "ft2", "ft3"):
        old = f"- {{where: [{{factor: model, levels: [{m}]}}]}}"
        assert text.count(old) == 1
        text = text.replace(old, f"- {{id: {m}, where: [{{factor: model, levels: [{m}]}}]}}")
    old = 'values: ["2", "3", "4"]'
    assert text.count(old) == 2
    text = text.replace(old, "values: [ft1, ft2, ft3]").replace('"vs{t}"', '"vs-{t}"')
    return text.replace("target: vs4,", "target: vs-ft3,")


def test_treatments_named_by_their_groups_ids(tmp_path):
    """Groups registered with ids, each treatment named by its group's id: the same figures as
    the positions give, the analyses named after the models, and PREREG.md listing the groups
    under their ids."""
    by_position = _score(tmp_path / "positions", SPEC.read_text())
    by_name = _score(tmp_path / "names", _named(SPEC.read_text()))
    got = {a["id"]: a for a in by_name["analyses"]}
    assert sorted(got) == ["vs-ft1", "vs-ft2", "vs-ft3"]
    for j in range(3):
        a = {k: v for k, v in got[f"vs-ft{j + 1}"].items() if k != "id"}
        b = {k: v for k, v in by_position["analyses"][j].items() if k != "id"}
        assert a == b
    assert by_name["verdicts"] == by_position["verdicts"]
    prereg = (tmp_path / "names" / "generated" / "dunnett" / "PREREG.md").read_text()
    assert "groups (in order): base: model∈base; ft1: model∈ft1;" in prereg
    assert 'treatment "ft2"' in prereg


@pytest.mark.parametrize(
    ("edit", "where", "words"),
    [
        # a treatment naming no group: the ids are listed
        (
            lambda t: t.replace("values: [ft1, ft2, ft3]}]", "values: [ft1, ft2, ft9]}]", 1),
            "/hypotheses/0/analyses/0/options/treatment",
            "option treatment is 'ft9', which names no group (the groups' ids, in order: base,"
            " ft1, ft2, ft3)",
        ),
        # two groups of one id
        (
            lambda t: t.replace("{id: ft2, where", "{id: ft1, where"),
            "/hypotheses/0/analyses/0/groups/2/id",
            "two groups are named 'ft1'",
        ),
        # the control named as the treatment: the method's own rule, at compile
        (
            lambda t: t.replace("values: [ft1, ft2, ft3]}]", "values: [base, ft2, ft3]}]", 1),
            "/hypotheses/0/analyses/0/options/treatment",
            "treatment must lie from 2 to 4",
        ),
    ],
)
def test_compile_refuses_a_group_name_it_cannot_place(tmp_path, capsys, edit, where, words):
    text = edit(_named(SPEC.read_text()))
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "dunnett.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert where in err and words in err
    assert not (tmp_path / "generated").exists()


def test_a_name_without_group_ids_says_how_to_give_them(tmp_path, capsys):
    text = SPEC.read_text().replace('values: ["2", "3", "4"]}]', "values: [ft1, ft2, ft3]}]")
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "dunnett.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "option treatment is 'ft1', which names no group; give the groups ids" in err


def test_an_id_on_a_side_that_is_not_a_group_is_refused(tmp_path, capsys):
    """of, a and b are named by their place: an id there would name nothing, so compile says
    so at its line rather than dropping it."""
    text = (FIXTURES / "newcomer" / "niratio.yaml").read_text()
    old = "a: {where: [{factor: model, levels: [cheap]}]}"
    assert text.count(old) == 1
    text = text.replace(old, "a: {id: cheap, where: [{factor: model, levels: [cheap]}]}")
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "niratio.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "niratio.yaml:39: at /hypotheses/0/analyses/0/a/id" in err
    assert "an id names one of an analysis' groups; a needs none" in err
