"""A confidence level, an alpha or a power must lie strictly between 0 and 1: the language's
bounds are inclusive, and a contrast of level 0 compiled, then score raised "level must lie
strictly between 0 and 1" as a ValueError traceback (found by editing the shipped specs at
random and running compile and each command)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, compile_edited

SPEC = ROOT / "examples" / "answer-position" / "spec" / "studies" / "answer-position.yaml"
CONTRAST = (
    "        interval: newcombe-hybrid\n        level: 0.95\n        test: pooled-z\n        family"
)
ESTIMATE = "        interval: wilson\n        level: 0.95\n        expand:"


@pytest.mark.parametrize(
    "edit, at, rule",
    [
        ((CONTRAST, CONTRAST.replace("0.95", "0")), "/hypotheses/0/contrasts/0/level",
         "the confidence level 0 must lie strictly between 0 and 1"),
        ((ESTIMATE, ESTIMATE.replace("0.95", "1")), "/hypotheses/3/estimates/0/level",
         "the confidence level 1 must lie strictly between 0 and 1"),
        (("alpha: 0.05, description: \"Position", "alpha: 0, description: \"Position"),
         "/families/0/alpha", "alpha 0 must lie strictly between 0 and 1"),
        (("interval: wilson, level: 0.95, p: 0.75}", "interval: wilson, level: 1.0, p: 0.75}"),
         "/claims/0/half_width/level", "the confidence level 1.0 must lie strictly between 0 and 1"),
    ],
)  # fmt: skip
def test_a_level_or_alpha_of_0_or_1_is_refused_at_its_line(tmp_path: Path, edit, at, rule):
    code, err, line_of = compile_edited(tmp_path, "answer-position", [edit], SPEC)
    assert code == 2 and "Traceback" not in err
    assert f"spec/studies/answer-position.yaml:{line_of(at)}: at {at}: {rule}" in err, err
