"""A family adjusted over exact P values (Fisher's, McNemar's exact tests give P as a fraction):
the adjusted P values are fractions too, so a rule on `adjusted_p` is decided exactly.

Eleven one-sided Fisher tests, one of them with every success of the 3 + 9 rows in its arm a of
3: P = C(3,3)/C(12,3) = 1/220 (by hand; scipy's fisher_exact agrees to 1e-15); Holm multiplies
the smallest of eleven by 11: adjusted 11/220 = 1/20 exactly. Floats give 11 × 0.004545… =
0.049999999999999996, so `adjusted_p lt 0.05` held; exactly it fails and `le 0.05` holds.
The other members' P are 1/2 (adjusted 1 by Holm's running maximum, capped)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from prereg.rules import Compare, ContrastResult, Family, adjust_families, compare_node
from prereg.stats import multiplicity


class _Member:
    def __init__(self, i: int):
        self.id, self.family = f"c{i}", "arms"


def _results(exact: bool) -> dict:
    ps = [Fraction(1, 220)] + [Fraction(1, 2)] * 10
    return {
        f"c{i}": ContrastResult(
            f"c{i}", 0.0, 0.0, 0.0, p=float(p), certified={"p": p} if exact else None
        )
        for i, p in enumerate(ps)
    }


def test_fisher_p_by_hand_and_scipy():
    from math import comb

    from scipy.stats import fisher_exact

    assert Fraction(comb(3, 3), comb(12, 3)) == Fraction(1, 220)
    _, p = fisher_exact([[3, 0], [0, 9]], alternative="greater")
    assert abs(p - 1 / 220) < 1e-15
    assert 11 * (1 / 220) < 0.05  # the float Holm product


def test_holm_over_exact_p_values_is_exact():
    fams = {"arms": Family("arms", "holm", 0.05)}
    members = [_Member(i) for i in range(11)]
    out = adjust_families(_results(True), members, fams)
    first = out["c0"]
    assert first.certified["adjusted_p"] == Fraction(1, 20) and first.adjusted_p == 0.05
    assert not compare_node(Compare("c0", "adjusted_p", "lt", 0.05), first)
    assert compare_node(Compare("c0", "adjusted_p", "le", 0.05), first)
    assert all(out[f"c{i}"].certified["adjusted_p"] == 1 for i in range(1, 11))
    # bonferroni and hochberg alike (m·p, and the step-up minimum)
    for method in ("bonferroni", "hochberg"):
        got = adjust_families(_results(True), members, {"arms": Family("arms", method, 0.05)})
        assert got["c0"].certified["adjusted_p"] == Fraction(1, 20), method


def test_without_exact_p_values_the_float_convention_stays():
    fams = {"arms": Family("arms", "holm", 0.05)}
    out = adjust_families(_results(False), [_Member(i) for i in range(11)], fams)
    assert out["c0"].adjusted_p == 11 * (1 / 220) and out["c0"].certified is None


def test_the_catalogues_procedures_take_fractions_as_given():
    ps = np.array([Fraction(1, 220)] + [Fraction(1, 2)] * 10, dtype=object)
    r = multiplicity.holm(ps, alpha=0.05, missing="exclude")
    assert r.extra["adjusted"][0] == 0.05 and r.counts["rejected"] == 1
    assert multiplicity.adjusted_fractions(ps, method="holm", missing="exclude")[0] == Fraction(
        1, 20
    )


def test_a_holm_family_of_fisher_analyses_scored_end_to_end(tmp_path):
    """tests/fixtures/holm_exact (written from the docs): eleven prompts of 3 items against a
    control of 9, Fisher's exact test each, Holm over the eleven; prompt a1 right 3 of 3, the
    control and every other prompt right 0 times. a1's P is 1/220, its adjusted P 1/20: the
    rule `adjusted_p lt 0.05` fails, and SCORE.md says so."""
    import json
    from pathlib import Path

    from prereg.cli import main

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "holm_exact" / "holm.yaml"
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "holm.yaml").write_text(fixture.read_text())
    assert main(["--project", str(root), "compile"]) == 0
    obs = tmp_path / "obs.jsonl"
    arms = [f"a{i}" for i in range(1, 12)]
    with obs.open("w") as f:
        for arm in arms:
            for i in range(3):
                f.write(json.dumps({"item": f"{arm}-{i}", "arm": arm, "correct": arm == "a1"}))
                f.write("\n")
        for i in range(9):
            f.write(json.dumps({"item": f"ctl-{i}", "arm": "ctl", "correct": False}) + "\n")
    out = tmp_path / "S.json"
    args = ["--observations", str(obs), "--out", str(out), "--quiet"]
    assert main(["--project", str(root), "holm", "score", *args]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdicts"] == {"a1-better": "not-supported"}
    first = doc["analyses"][0]
    assert first["exact"]["p"] == "1/220" and first["adjustedP"] == 0.05
    assert all(a["adjustedP"] == 1.0 for a in doc["analyses"][1:])
    md = out.with_suffix(".md").read_text()
    assert "adjusted P < 0.05: met by 0 of 1" in md
