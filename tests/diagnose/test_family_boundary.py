"""Family adjustment of many simulated studies at once (``adjust_families_many``, in floats)
decides a study whose adjusted P sits on its family's alpha as the one-study scorer does.

The boundary: eleven prompts of 3 rows each against a control of 9 rows, Fisher's one-sided
test; a prompt right 3 of 3 times against a control right 0 of 9 has P = 1/C(12, 3) = 1/220,
so Holm's (and Bonferroni's) adjusted P of the smallest is 11/220 = 1/20, exactly the alpha
0.05 (not below it), while in floats 11 × 0.004545… is 0.049999999999999996 (below it). The
oracle is the arithmetic in fractions (here) and, for diagnose, the one-study scorer on the
same drawn rows (score's own code, which adjusts an exact test's P exactly).
"""

from __future__ import annotations

import importlib
import shutil
from fractions import Fraction

import numpy as np
import pytest

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.diagnose import rows as row_path
from prereg.diagnose.command import build_plan
from prereg.diagnose.design import Rules
from prereg.engines.factorial.commands import diagnose_design
from prereg.rules import Family, ResultArrays, adjust_families, adjust_families_many
from prereg.study import study_context
from tests.conftest import FIXTURES, ROOT


def test_the_boundary_in_floats_and_fractions():
    p = 1 / 220
    assert Fraction(11, 220) == Fraction(1, 20)
    assert 11 * p < 0.05  # the float product falls below the threshold it equals


class _Contrast:
    def __init__(self, cid: str, family: str):
        self.id, self.family = cid, family


@pytest.mark.parametrize("adjustment", ["holm", "bonferroni"])
def test_many_studies_adjust_float_p_values_as_each_study_does(adjustment):
    """Float P values (a counts-path test carries no fraction) on and around the boundary:
    each study's adjusted P from adjust_families_many is the one adjust_families gives it,
    to the bit."""
    members = [_Contrast(f"c{i}", "f") for i in range(11)]
    fams = {"f": Family("f", adjustment, 0.05, "exclude")}
    rows = np.array(
        [
            [1 / 220] + [0.5] * 10,
            [1 / 220] * 11,
            [np.nextafter(1 / 220, 1)] + [0.9] * 10,
            [0.05 / 11, 0.05 / 10] + [0.7] * 9,
            [np.nan, 1 / 220] + [0.3] * 9,
        ]
    )
    nan = np.full(len(rows), np.nan)
    many = adjust_families_many(
        {c.id: ResultArrays(c.id, nan, nan, nan, rows[:, j], nan) for j, c in enumerate(members)},
        members,
        fams,
    )
    from prereg.rules import ContrastResult

    for r, row in enumerate(rows):
        one = adjust_families(
            {
                c.id: ContrastResult(c.id, 0.0, 0.0, 0.0, p=None if np.isnan(x) else float(x))
                for c, x in zip(members, row, strict=True)
            },
            members,
            fams,
        )
        for c in members:
            want = one[c.id].adjusted_p
            got = float(many[c.id].adjusted_p[r])
            assert (np.isnan(got) and want is None) or got == want, (r, c.id, got, want)


SCENARIO = """scenarios:
  - id: boundary
    description: the first prompt nearly always right, the control nearly always wrong
    outcome: correct
    rates:
      - {where: [{factor: arm, levels: [ctl]}], rate: 0.02}
      - {where: [{factor: arm, levels: [a1]}], rate: 0.97}
      - {rate: 0.2}
constants:"""
RULE = "compare: {target: fisher-a1, quantity: adjusted_p, op: lt, value: 0.05}"


@pytest.mark.parametrize("adjustment", ["holm", "bonferroni"])
def test_diagnose_counts_a_study_on_the_boundary_as_score_does(tmp_path, adjustment):
    """The Holm fixture with a scenario drawing the boundary often, and a rule that reads the
    raw P (so no rule screens the adjusted one): every study's adjusted P counts against the
    family's alpha (DIAGNOSE.json's rejectedAdjusted) as the one-study scorer counts it, on the
    same drawn rows; the studies on the boundary are scored alone (their adjusted P is the
    scorer's, 1/20, to the bit). Away from the alpha the block's float Holm may differ from the
    scorer's fractions in the last bit, which nothing reported reads."""
    text = (FIXTURES / "holm_exact" / "holm.yaml").read_text(encoding="utf-8")
    for old, new in [
        ("constants:", SCENARIO),
        (RULE, RULE.replace("adjusted_p", "p")),
        ("adjustment: holm", f"adjustment: {adjustment}"),
        ("key: [item, arm]", "key: [item]"),  # a row named by one field: drawn as columns
    ]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    root = tmp_path / "p"
    (root / "spec" / "studies").mkdir(parents=True)
    (root / "spec" / "studies" / "holm.yaml").write_text(text, encoding="utf-8")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    module, ctx = study_context(Project(root), "holm")
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    design = diagnose_design(ctx.config)
    n = 120
    plan, _ = build_plan(ctx, design, rules, ["boundary"], n, 3, "rows")
    one = row_path._run_records(plan, 0, 0)
    seen = []
    real = row_path._put_clear

    def spy(plan_, out, clear, *args):
        seen.append(clear)
        return real(plan_, out, clear, *args)

    row_path._put_clear = spy
    try:
        whole = row_path._run_batched(plan, 0, 0)
    finally:
        row_path._put_clear = real
    assert whole is not None and seen
    want, got = one.analyses[:, :, 4], whole.analyses[:, :, 4]  # every adjusted P
    on = np.flatnonzero((want == 0.05).any(axis=1))
    assert on.size >= 10, on.size  # the boundary is drawn often
    assert not np.isin(on, seen[0]).any()  # each scored alone
    assert np.array_equal(got[on], want[on], equal_nan=True)
    assert np.array_equal(got < 0.05, want < 0.05)  # rejected after adjustment, study by study
    assert np.allclose(got, want, rtol=1e-15, atol=0, equal_nan=True)
    assert np.array_equal(whole.analyses[:, :, :4], one.analyses[:, :, :4], equal_nan=True)
    assert whole.verdicts == one.verdicts
