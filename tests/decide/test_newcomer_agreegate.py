"""A preregistration written from the docs alone by a newcomer (tests/fixtures/newcomer/
agreegate.yaml): a first annotator judges all 200 responses of each of two systems right (1)
or wrong (0), a second annotator judges 25 of each again; only when the two agree
(Krippendorff's alpha, nominal, at least 0.67 on the double-coded responses: a hypothesis the
main one is `tested_after`, since a gate reads a metric per cell and not an analysis) is the
main hypothesis tested: the new system's share judged right is at most 0.05 below the
reference's (Farrington–Manning, one-sided 0.025).

The data are the labelling tool's CSV export (its own column order, a free-text column the
contract ignores), placed with alpha exactly 67/100 (`ge 0.67` holds), one disagreement more
(alpha 1528/2419, the main hypothesis not tested) and the difference exactly on the margin
(z = 0, P = 1/2). The oracle: Krippendorff's coincidence matrix in fractions, and the
Farrington–Manning restricted proportions by maximising the binomial likelihood with scipy.

`diagnose` of this study found a bug: the second annotator's 25 rows were named
`new-response_id-01` ... and the first annotator's `new-response_id-001` ..., so no response
was ever double-coded in a simulated study and alpha (and so the agreement) was never
defined: DIAGNOSE.md showed a dash and the agreement supported in 0 studies, without a word."""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from scipy import optimize, stats

from prereg.cli import main
from tests.conftest import FIXTURES

SPEC = FIXTURES / "newcomer" / "agreegate.yaml"

#: (first annotator, second annotator) on the 25 double-coded responses of each system
PAIRS = [(1, 1)] * 13 + [(0, 0)] * 8 + [(1, 0)] * 2 + [(0, 1)] * 2


def _export(root: Path, name: str, new_right: int, ref_right: int, pairs_new=PAIRS) -> Path:
    import pandas as pd

    rows = []
    for system, right, pairs in (("new", new_right, pairs_new), ("ref", ref_right, PAIRS)):
        first = [a for a, _ in pairs]
        labels = first + [1] * (right - sum(first))
        labels += [0] * (200 - len(labels))
        for i, label in enumerate(labels):
            rid = f"{system}-{i:03d}"
            rows.append(
                {"annotator": "ann1", "label": label, "note": "", "response_id": rid,
                 "system": system}
            )  # fmt: skip
            if i < len(pairs):
                rows.append(
                    {"annotator": "ann2", "label": pairs[i][1], "note": "second pass",
                     "response_id": rid, "system": system}
                )  # fmt: skip
    path = root / f"{name}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _project(root: Path, text: str | None = None) -> Path:
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "agreegate.yaml").write_text(
        SPEC.read_text() if text is None else text
    )
    assert main(["--project", str(root), "compile"]) == 0
    return root


def _score(root: Path, log: Path) -> tuple[dict, str]:
    out = root / f"{log.stem}.SCORE.json"
    args = ["--observations", str(log), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "agreegate", "score", *args]) == 0
    return json.loads(out.read_text()), out.with_suffix(".md").read_text()


# -- the oracle -------------------------------------------------------------------------------


def _alpha(pairs) -> Fraction:
    """Krippendorff's nominal alpha of units rated twice: 1 − (n − 1)·D_o/D_e over the
    coincidence matrix o_ck (each unit adds its two ordered pairs, divided by m_u − 1 = 1)."""
    o = Counter()
    for a, b in pairs:
        o[a, b] += 1
        o[b, a] += 1
    n_c = Counter()
    for (c, _), v in o.items():
        n_c[c] += v
    n = sum(n_c.values())
    observed = sum(v for (c, k), v in o.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    return 1 - Fraction((n - 1) * observed, expected)


def _farrington_manning(k1, n1, k2, n2, margin) -> tuple[float, float]:
    """(z, one-sided P for 'greater') with the proportions restricted to p1 − p2 = margin by
    maximum likelihood (scipy's bounded scalar minimiser), as Farrington & Manning (1990)."""
    lo, hi = max(0.0, margin), min(1.0, 1.0 + margin)

    def minus_loglik(p1):
        p2 = p1 - margin
        return -(stats.binom.logpmf(k1, n1, p1) + stats.binom.logpmf(k2, n2, p2))

    p1 = optimize.minimize_scalar(
        minus_loglik, bounds=(lo + 1e-12, hi - 1e-12), method="bounded",
        options={"xatol": 1e-13},
    ).x  # fmt: skip
    p2 = p1 - margin
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    z = (k1 / n1 - k2 / n2 - margin) / se
    return z, float(stats.norm.sf(z))


def test_the_oracle_places_alpha_exactly_on_the_gate():
    assert _alpha(PAIRS + PAIRS) == Fraction(67, 100)
    below = [(1, 0), *PAIRS[1:]]
    assert _alpha(below + PAIRS) == Fraction(1528, 2419) < Fraction(67, 100)


def test_alpha_exactly_on_067_opens_the_main_test_and_adopts_the_new_system(tmp_path):
    root = _project(tmp_path)
    doc, md = _score(root, _export(root, "agree", 170, 160))
    got = {a["id"]: a for a in doc["analyses"]}
    alpha = got["alpha"]
    assert Fraction(alpha["exact"]["estimate"]) == _alpha(PAIRS + PAIRS) == Fraction(67, 100)
    assert alpha["counts"]["pairable_units"] == 50
    ni = got["ni"]
    assert Fraction(ni["exact"]["estimate"]) == Fraction(1, 20)
    z, p = _farrington_manning(170, 200, 160, 200, -0.05)
    assert ni["statistic"] == pytest.approx(z, rel=1e-7)
    assert ni["p"] == pytest.approx(p, rel=1e-6)
    # the one-sided 97.5% bound: the margin at which the restricted z reaches z(0.975)
    crit = stats.norm.ppf(0.975)
    bound = optimize.brentq(
        lambda d: _farrington_manning(170, 200, 160, 200, d)[0] - crit, -0.5, 0.049
    )
    assert ni["lower"] == pytest.approx(bound, abs=1e-7)
    assert doc["verdicts"] == {"agree": "supported", "not-worse": "supported"}
    assert doc["decision"]["outcome"] == "adopt-new"
    assert "alpha (0.67)" in md


def test_one_disagreement_more_leaves_the_main_hypothesis_untested(tmp_path):
    root = _project(tmp_path)
    below = [(1, 0), *PAIRS[1:]]
    doc, _ = _score(root, _export(root, "disagree", 170, 160, pairs_new=below))
    got = {a["id"]: a for a in doc["analyses"]}
    assert Fraction(got["alpha"]["exact"]["estimate"]) == Fraction(1528, 2419)
    assert doc["verdicts"] == {"agree": "not-supported", "not-worse": "not-tested"}
    assert doc["decision"]["outcome"] == "relabel"


def test_a_difference_exactly_on_the_margin_is_not_non_inferior(tmp_path):
    root = _project(tmp_path)
    doc, _ = _score(root, _export(root, "margin", 150, 160))
    ni = {a["id"]: a for a in doc["analyses"]}["ni"]
    assert Fraction(ni["exact"]["estimate"]) == Fraction(-1, 20)
    assert ni["statistic"] == 0 and ni["p"] == 0.5
    assert _farrington_manning(150, 200, 160, 200, -0.05)[1] == pytest.approx(0.5, abs=1e-6)
    assert doc["verdicts"] == {"agree": "supported", "not-worse": "not-supported"}
    assert doc["decision"]["outcome"] == "keep-ref"


# -- diagnose: the double-coded rows pair with the first annotator's ------------------------------


def _diagnose(root: Path, n: int = 60, scenario: str = "careful") -> tuple[dict, str]:
    out = root / f"DIAGNOSE-{scenario}.json"
    args = ["--project", str(root), "agreegate", "diagnose", "--quiet", "--simulations", str(n)]
    args += ["--scenario", scenario]
    assert main([*args, "--seed", "3", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return {a["id"]: a for a in cond["analyses"]}, out.with_suffix(".md").read_text()


def test_diagnose_pairs_the_second_annotators_subset_with_the_first_annotators_rows(tmp_path):
    got, md = _diagnose(_project(tmp_path))
    alpha = got["alpha"]
    # every simulated study has 50 double-coded responses, so alpha is always defined and
    # centres on its truth (both annotators right 90% of the time, 80% of responses right)
    assert alpha["defined"] == 60
    assert abs(alpha["meanEstimate"] - alpha["truth"]) < 4 * alpha["biasMcSe"]
    assert "gave no estimate" not in md


def test_diagnose_says_when_an_analysis_never_gives_an_estimate(tmp_path):
    # alpha over the first annotator's rows alone: no response is rated twice
    text = SPEC.read_text().replace(
        "of: {where: [{factor: annotator, levels: [ann1, ann2]}]}",
        "of: {where: [{factor: annotator, levels: [ann1]}]}",
        1,
    )
    got, md = _diagnose(_project(tmp_path, text), n=20)
    assert got["alpha"]["defined"] == 0
    assert "- `alpha` gave no estimate in 20 of 20 simulated studies" in md


# -- a ratings scenario whose prevalence differs by system (prevalence_by) ------------------------


def test_diagnose_draws_each_systems_responses_from_its_own_prevalence(tmp_path):
    # without prevalence_by both systems' responses shared one prevalence, so the
    # non-inferiority test could be diagnosed only where the systems do not differ
    got, md = _diagnose(_project(tmp_path), n=100, scenario="new-better")
    ni = got["ni"]
    # ann1 labels a response right with chance 0.9·0.95 + 0.1·0.05 (new), 0.8·0.95 + 0.2·0.05
    expected = (0.9 * 0.95 + 0.1 * 0.05) - (0.8 * 0.95 + 0.2 * 0.05)
    assert abs(ni["meanEstimate"] - expected) < 4 * ni["meanEstimateMcSe"]
    assert ni["rejected"]["share"] > 0.8  # 0.09 above a margin of -0.05, 200 a system
    assert "the items' prevalence varies by cell (prevalence_by)" in md
    careful, _ = _diagnose(tmp_path, n=100, scenario="careful")
    assert abs(careful["ni"]["meanEstimate"]) < 4 * careful["ni"]["meanEstimateMcSe"]


def test_prevalence_by_in_the_preregistration(tmp_path):
    _project(tmp_path)
    text = (tmp_path / "generated" / "agreegate" / "PREREG.md").read_text()
    assert "drawn from 0: 0.2, 1: 0.8 (in the cells system∈new: 0: 0.1, 1: 0.9)" in text


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        (
            "{factor: system, levels: [new]}], prevalence: [0.1, 0.9]",
            "{factor: annotator, levels: [ann1]}], prevalence: [0.1, 0.9]",
            "/ratings/prevalence_by/0/where/0/factor",
            "prevalence_by selects by factor 'annotator', whose levels the rows of one item"
            " range over (they are named by 'annotator')",
        ),
        (
            "prevalence: [0.1, 0.9]",
            "prevalence: [0.1, 0.8]",
            "/ratings/prevalence_by/0/prevalence",
            "prevalence sums to 0.9, not 1",
        ),
        (
            "prevalence: [0.1, 0.9]",
            "prevalence: [1]",
            "/ratings/prevalence_by/0/prevalence",
            "prevalence has 1 chance(s) for 2 categories",
        ),
        (
            "{factor: system, levels: [new]}], prevalence: [0.1, 0.9]",
            "{factor: system, levels: [newer]}], prevalence: [0.1, 0.9]",
            "/ratings/prevalence_by/0/where/0/levels",
            "selects level 'newer', which factor 'system' does not have",
        ),
    ],
)
def test_compile_refuses_a_prevalence_by_that_cannot_hold(
    tmp_path, capsys, old, new, where, message
):
    text = SPEC.read_text()
    assert text.count(old) == 1
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "agreegate.yaml").write_text(text.replace(old, new))
    assert main(["--project", str(tmp_path), "compile"]) == 2
    err = capsys.readouterr().err
    assert where in err and message in err


def test_each_item_takes_the_prevalence_of_its_cells_and_one_item_cannot_take_two():
    from prereg.decide.scenarios import item_prevalences
    from prereg.errors import UserError

    ratings = {
        "prevalence": [0.5, 0.5],
        "prevalence_by": [{"where": [{"factor": "s", "levels": ["a"]}], "prevalence": [0.1, 0.9]}],
    }
    cells = [
        {"id": "a", "split": None, "levels": {"s": "a"}},
        {"id": "b", "split": None, "levels": {"s": "b"}},
    ]
    got = item_prevalences(ratings, [0, 1, 1], 2, [0, 1, 1], cells, "sc")
    assert got.tolist() == [[0.1, 0.9], [0.5, 0.5]]
    assert item_prevalences({"prevalence": [0.5, 0.5]}, [0], 1, [0], cells, "sc") is None
    with pytest.raises(UserError, match=r"scenario sc: the rows of one item lie in cells that"):
        item_prevalences(ratings, [0, 0], 1, [0, 1], cells, "sc")
