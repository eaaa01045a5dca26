"""Ratings with a truth: two verifiers judge the same programs, each program correct or not
(a field of the item manifest both verifiers' rows share), each verifier's verdict drawn from
its own confusion row at the program's correctness (its sensitivity and specificity).

The fixture (tests/fixtures/diagnose/verifiers.yaml): 200 programs, half correct in chance;
verifier a accepts a correct program with chance 0.8 and rejects an incorrect one with 0.7,
verifier b with 0.9 and 0.85. h1: b's accuracy (accepts equal to correct) is above a's, an
exact one-sided McNemar test over programs at 0.05; h2: b's recall (accepted among the correct
programs) has a Wilson 95% lower bound of at least 0.8. Their powers are computed here
independently of prereg by exact sums over scipy's binomial laws.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from prereg.cli import main
from tests.conftest import study_project

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "diagnose" / "verifiers.yaml"
STUDY = "verifiers"
PROGRAMS = 200
SENS = {"va": 0.8, "vb": 0.9}
SPEC = {"va": 0.7, "vb": 0.85}


def _project(root: Path, text: str | None = None) -> Path:
    spec = FIXTURE.read_text(encoding="utf-8") if text is None else text
    return study_project(root, STUDY, spec)


def _edited(*edits: tuple[str, str]) -> str:
    text = FIXTURE.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def _run(root: Path, *args: str) -> int:
    return main(["--project", str(root), *args])


def mcnemar_power() -> float:
    """P(one-sided exact McNemar P < 0.05): n10 (b right, a wrong) and n01 (b wrong, a right)
    are multinomial over the programs; given their sum N, n10 ~ Binomial(N, p10 / (p10 + p01))
    and the test rejects when P(Binomial(N, 1/2) >= n10) < 0.05."""
    p10 = 0.5 * SENS["vb"] * (1 - SENS["va"]) + 0.5 * SPEC["vb"] * (1 - SPEC["va"])
    p01 = 0.5 * (1 - SENS["vb"]) * SENS["va"] + 0.5 * (1 - SPEC["vb"]) * SPEC["va"]
    out = 0.0
    for n in range(1, PROGRAMS + 1):
        k = np.arange(n + 1)
        reject = stats.binom.sf(k - 1, n, 0.5) < 0.05
        chance = stats.binom.pmf(k[reject], n, p10 / (p10 + p01)).sum()
        out += stats.binom.pmf(n, PROGRAMS, p10 + p01) * chance
    return float(out)


def recall_power() -> float:
    """P(Wilson 95% lower bound of b's recall >= 0.8): M ~ Binomial(200, 1/2) correct programs,
    of which b accepts Binomial(M, 0.9)."""
    z = stats.norm.ppf(0.975)
    out = 0.0
    for m in range(1, PROGRAMS + 1):
        x = np.arange(m + 1)
        p = x / m
        centre = p + z * z / (2 * m)
        spread = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
        lower = (centre - spread) / (1 + z * z / m)
        out += stats.binom.pmf(m, PROGRAMS, 0.5) * stats.binom.pmf(x[lower >= 0.8], m, 0.9).sum()
    return float(out)


def test_diagnose_gives_the_power_of_a_paired_verifier_contrast_over_one_truth(tmp_path):
    """The simulated shares of studies supporting h1 and h2 agree with the exact powers
    (0.931 and 0.765) within 4 Monte Carlo standard errors, sqrt(p(1 - p)/n) at n = 1000
    (0.032 and 0.054). Drawn independently, the verifiers' accuracies would not read one
    truth and the paired test's discordant pairs would follow other chances."""
    root = _project(tmp_path)
    assert _run(root, "compile") == 0
    prereg = (root / "generated" / STUDY / "PREREG.md").read_text()
    assert "the item's true category is `correct`" in prereg
    out = root / "DIAGNOSE.json"
    args = ["--simulations", "1000", "--seed", "4", "--quiet", "--out", str(out)]
    assert _run(root, STUDY, "diagnose", *args) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    exact = {"h1": mcnemar_power(), "h2": recall_power()}
    assert exact["h1"] == pytest.approx(0.9313, abs=1e-4)  # the test's own sums
    assert exact["h2"] == pytest.approx(0.7648, abs=1e-4)
    n = cond["simulations"]
    for hyp in cond["hypotheses"]:
        got = {v["verdict"]: v["count"] for v in hyp["verdicts"]}
        share = got.get("supported", 0) / n
        p = exact[hyp["id"]]
        assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / n), (hyp["id"], share, p)


def _manifest(root: Path, correct: list[bool]) -> Path:
    path = root / "programs.jsonl"
    lines = []
    for v in ("va", "vb"):
        for i, c in enumerate(correct):
            rec = {"rowId": f"{v}-{i + 1:03d}", "program": f"p{i + 1:03d}", "verifier": v}
            lines.append(json.dumps({**rec, "correct": c}))
    path.write_text("\n".join(lines) + "\n")
    return path


PERFECT_A = (
    "- {value: va, confusion: [[0.8, 0.2], [0.3, 0.7]]}",
    "- {value: va, confusion: [[1, 0], [0, 1]]}",
)


def test_simulate_reads_each_programs_truth_from_the_manifest(tmp_path):
    """With a manifest that records each program's correctness, the truth is the manifest's:
    a perfect verifier a accepts exactly the correct programs, and b accepts a number of the
    100 correct ones, and of the 100 incorrect ones, that is not in a tail below 1e-6 of
    Binomial(100, 0.9), and of Binomial(100, 0.15)."""
    root = _project(tmp_path, _edited(PERFECT_A))
    assert _run(root, "compile") == 0
    correct = [i % 2 == 0 for i in range(PROGRAMS)]
    items = _manifest(root, correct)
    out = root / "judgements.jsonl"
    args = ["--items", str(items), "--scenario", "b-better", "--seed", "2", "--out", str(out)]
    assert _run(root, STUDY, "simulate", *args) == 0
    got = {r["rowId"]: r["accepts"] for r in map(json.loads, out.read_text().splitlines())}
    assert len(got) == 2 * PROGRAMS
    assert [got[f"va-{i + 1:03d}"] for i in range(PROGRAMS)] == correct
    b_hits = sum(got[f"vb-{i + 1:03d}"] for i in range(PROGRAMS) if correct[i])
    b_false = sum(got[f"vb-{i + 1:03d}"] for i in range(PROGRAMS) if not correct[i])
    # b accepts ~90 of the 100 correct and ~15 of the 100 incorrect programs
    assert stats.binom.cdf(b_hits, 100, 0.9) > 1e-6 and stats.binom.sf(b_hits - 1, 100, 0.9) > 1e-6
    assert (
        stats.binom.cdf(b_false, 100, 0.15) > 1e-6 and stats.binom.sf(b_false - 1, 100, 0.15) > 1e-6
    )


def test_simulate_refuses_a_program_whose_rows_disagree_on_its_truth(tmp_path, capsys):
    root = _project(tmp_path)
    assert _run(root, "compile") == 0
    items = _manifest(root, [True] * PROGRAMS)
    text = items.read_text().replace(
        '"program": "p007", "verifier": "vb", "correct": true',
        '"program": "p007", "verifier": "vb", "correct": false',
    )
    items.write_text(text)
    capsys.readouterr()
    out = root / "judgements.jsonl"
    args = ["--items", str(items), "--scenario", "b-better", "--seed", "2", "--out", str(out)]
    assert _run(root, STUDY, "simulate", *args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: scenario b-better: the rows of one item disagree on its correct in the item"
        " manifest (true and false, row 'vb-007')"
    ]
    assert not out.exists()


REFUSED = {
    "a truth no scenario draws": (
        ("      truth: correct\n", ""),
        "at /scenarios/0: scenario 'b-better' cannot drive analysis 'acc-b-vs-a'"
        " (hypotheses/0/analyses/0): its metric 'accuracy' reads 'correct' of the item manifest,"
        " which the rows diagnose lays out do not carry (items writes the row id, split, levels"
        " and item); draw it per item with ratings' truth",
    ),
    "a truth that is no field": (
        ("truth: correct", "truth: passes"),
        "at /scenarios/0/ratings/truth: scenario 'b-better': ratings' truth 'passes' is neither"
        " a field of the item manifest nor of the observation contract",
    ),
    "categories the truth field does not hold": (
        ("{name: correct, type: boolean}", "{name: correct, type: integer}"),
        "at /scenarios/0/ratings/categories/0: scenario 'b-better': category True is not a"
        " value field 'correct' admits",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_compile_refuses_a_truth_it_cannot_write(case, tmp_path, capsys):
    edit, rule = REFUSED[case]
    root = _project(tmp_path, _edited(edit))
    assert _run(root, "compile") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line.strip() for line in err.splitlines() if "at /scenarios" in line]
    assert any(rule in line for line in lines), err  # a line per problem
    assert all(line.startswith(f"spec/studies/{STUDY}.yaml:") for line in lines)
    assert not (root / "generated" / STUDY).exists()


def test_preregistration_writes_boolean_categories_as_the_spec_does(tmp_path):
    """PREREG.md names a rating's categories as the spec writes them: true and false, not
    Python's True and False."""
    root = _project(tmp_path)
    assert _run(root, "compile", "--quiet") == 0
    text = (root / "generated" / STUDY / "PREREG.md").read_text(encoding="utf-8")
    assert "drawn from true: 0.5, false: 0.5;" in text
    assert "True" not in text and "False" not in text
