"""diagnose's truth for `mantel-haenszel-risk-difference` (the newcomer's strata study,
tests/fixtures/newcomer/strata.yaml, with a scenario of its own): the Mantel–Haenszel weighted
difference of the cells' chances, Σ w_s (p_as − p_bs)/Σ w_s with w_s = n_as n_bs/(n_as + n_bs),
by hand in fractions. With 20 rows in every cell the weights are equal (10 each) and the truth
is the mean of the strata's differences; with rows that differ by language (rows_by) the
registered rows weight them. Its interval is one-sided (`alternative: greater`), and diagnose
reports its coverage (the share of studies whose lower bound is at most the truth; at least
0.85 here, a Wald bound on 20 rows a cell)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from prereg.cli import main
from tests.conftest import FIXTURES

RATES = {  # (system, lang) -> chance of a right answer
    ("new", "py"): Fraction(7, 10),
    ("old", "py"): Fraction(1, 2),
    ("new", "js"): Fraction(3, 5),
    ("old", "js"): Fraction(11, 20),
    ("new", "go"): Fraction(4, 5),
    ("old", "go"): Fraction(1, 2),
}


def _scenario() -> str:
    lines = [
        "scenarios:",
        "  - id: mixed",
        "    description: The new system is better in py and go, about even in js.",
        "    outcome: correct",
        "    rates:",
    ]
    for (system, lang), p in RATES.items():
        where = f"[{{factor: system, levels: [{system}]}}, {{factor: lang, levels: [{lang}]}}]"
        lines.append(f"      - {{where: {where}, rate: {float(p)!r}}}")
    return "\n".join(lines) + "\n"


CROSSING = '  - {id: "{system}-{lang}", rows: 20, factors: [system, lang]}\n'


def _diagnose(tmp_path, rows=None, n=400):
    text = (FIXTURES / "newcomer" / "strata.yaml").read_text()
    text = text.replace("constants:\n", _scenario() + "constants:\n")
    if rows is not None:
        assert text.count(CROSSING) == 1
        listed = ", ".join(f"{{level: {lang}, rows: {m}}}" for lang, m in rows.items())
        text = text.replace(
            CROSSING,
            '  - id: "{system}-{lang}"\n    factors: [system, lang]\n'
            f"    rows_by: {{factor: lang, rows: [{listed}]}}\n",
        )
    (tmp_path / "spec" / "studies").mkdir(parents=True)
    (tmp_path / "spec" / "studies" / "strata.yaml").write_text(text)
    assert main(["--project", str(tmp_path), "compile"]) == 0
    out = tmp_path / "DIAGNOSE.json"
    args = ["--project", str(tmp_path), "strata", "diagnose", "--quiet"]
    assert main([*args, "--simulations", str(n), "--seed", "3", "--out", str(out)]) == 0
    (cond,) = json.loads(out.read_text())["conditions"]
    return {a["id"]: a for a in cond["analyses"]}


def _truth(rows: dict[str, int]) -> Fraction:
    num = den = Fraction(0)
    for lang in ("py", "js", "go"):
        na = nb = rows[lang]
        w = Fraction(na * nb, na + nb)
        num += w * (RATES[("new", lang)] - RATES[("old", lang)])
        den += w
    return num / den


def test_truth_with_every_row(tmp_path):
    got = _diagnose(tmp_path)["mhrd"]
    truth = _truth({"py": 20, "js": 20, "go": 20})
    assert truth == Fraction(11, 60)  # (0.2 + 0.05 + 0.3)/3
    assert got["truth"] == pytest.approx(float(truth), abs=5e-7)  # DIAGNOSE's 6 digits
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]
    assert got["coverage"] is not None
    assert got["coverage"]["share"] >= 0.85


def test_truth_weighs_the_strata_by_their_rows(tmp_path):
    """10, 20 and 40 rows a cell in py, js and go: weights 5, 10 and 20, so the truth is
    (5 (0.2) + 10 (0.05) + 20 (0.3))/35 = 3/14, not the plain mean of the differences."""
    rows = {"py": 10, "js": 20, "go": 40}
    got = _diagnose(tmp_path, rows)["mhrd"]
    truth = _truth(rows)
    assert truth == Fraction(3, 14)
    assert got["truth"] == pytest.approx(float(truth), abs=5e-7)
    assert abs(got["bias"]) <= 4 * got["biasMcSe"]
