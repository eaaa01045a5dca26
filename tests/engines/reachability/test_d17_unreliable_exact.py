"""d17's calibration-unreliable flag is decided as a threshold is, exactly: a cell is flagged iff
mean confidence − calibrated accuracy exceeds ``unreliableGap`` (0.1) and the calibrated
accuracy's Wilson upper bound is below the mean confidence.

Every calibrated P(yes) here is 0.2 or 0.8 (the calibrator's blocks (0 + 1)/(3 + 2) and (3 + 1)/(3 + 2)), so every
confidence is 0.8. In a 220-row cell answered correctly 154 times the calibrated accuracy is
154/220 = 0.7, and by hand the gap is 0.8 − 0.7 = 1/10: on the threshold, not above it, so the
flag is off. The floats said otherwise (the summed confidences' mean is 0.8000000000000016).
With 153 correct the gap is 0.8 − 153/220 > 1/10 and the flag is on."""

from __future__ import annotations

from fractions import Fraction

import d17_score_helpers as h
import pytest
from statsmodels.stats.proportion import proportion_confint

from prereg.engines.reachability import scoring

# a block's probability is (yes + 1)/(n + 2): 1/5 below 0.5, 4/5 from 0.5
BLOCKS = [{"lower": 0.0, "yes": 0, "n": 3}, {"lower": 0.5, "yes": 3, "n": 3}]
CELL = "tst-pool-a_h1_missing-contrastive_equalized"


@pytest.mark.parametrize(("correct", "flag"), [(154, False), (153, True)])
def test_the_gap_on_its_threshold_is_not_above_it(correct, flag):
    module, ctx, rules = h.study()
    resp = h.Respondent(h.table(ctx.config))
    resp.set_correct(
        correct,
        split="test",
        pool="pool-a",
        hops="1",
        layout="equalized",
        outcome="missing-contrastive",
    )
    s = scoring.score(ctx.config, rules, resp.t, resp.p_yes(), BLOCKS)
    cell = next(c for c in s.cells if c["cell"] == CELL)
    assert cell["observed"] == 220
    assert cell["metrics"]["calibrated-accuracy"]["correct"] == correct
    # by hand: every confidence is 0.8, the accuracy correct/220
    assert 1 - 0.2 == 0.8
    gap = Fraction("0.8") - Fraction(correct, 220)
    upper = proportion_confint(correct, 220, alpha=0.05, method="wilson")[1]
    assert upper < 0.8  # the interval's side of the flag holds either way
    assert (gap > Fraction(1, 10)) is flag
    assert cell["calibrationUnreliable"] is flag
