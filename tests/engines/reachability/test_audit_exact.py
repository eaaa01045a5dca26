"""The shortcut audit's learner score is the balanced accuracy rounded half-up on its exact
value, and a score passes when it is at most the limit as written, decided exactly.

By hand: 32 positives all missed and 57 of 400 negatives kept give (0/32 + 57/400)/2 = 57/800 =
0.07125, which rounds half-up to 0.0713 at 4 decimals; the floats give 0.07124999999999999 and
rounded 0.0712, so a limit of 0.0712 passed a score that exceeds it. sklearn's
balanced_accuracy_score agrees on the unrounded value."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
from sklearn.metrics import balanced_accuracy_score

from prereg.engines.reachability.audit import ShortcutAudit, audit_score

Y = np.array([True] * 32 + [False] * 400)
# the 32 positives all said no (missed); of the 400 negatives, 343 said yes and 57 no (right)
PRED = np.array([False] * 32 + [True] * 343 + [False] * 57)


def test_the_score_rounds_the_exact_value():
    exact = (Fraction(0, 32) + Fraction(57, 400)) / 2
    assert exact == Fraction(57, 800)
    assert math.isclose(balanced_accuracy_score(Y, PRED), 0.07125, rel_tol=1e-12)
    assert math.floor((0 / 32 + 57 / 400) / 2 * 10**4 + 0.5) == 712  # the floats round down
    assert audit_score(Y, PRED, 4) == 0.0713
    assert audit_score(Y, PRED, 3) == 0.071  # 0.07125 to 3 decimals
    assert audit_score(Y[:32], PRED[:32], 4) == 0.5  # one class only


def _audit(limit) -> ShortcutAudit:
    audit = ShortcutAudit.__new__(ShortcutAudit)  # audit_object reads these alone
    audit.limit, audit.folds = limit, 5
    audit.ec = SimpleNamespace(schema_versions={"audit": "audit/v1"})
    return audit


def test_a_score_on_the_limit_passes_and_one_above_does_not():
    scores = {"scalarThreshold": 0.0713, "tokenThreshold": 0.5, "depth2Tree": 0.5, "logistic": 0.5}
    group = {"group": "g", "gated": True, "n": 432, "yes": 32, "scores": scores}
    for limit, passes in ((0.0713, False), (0.5, True), (0.4999, False)):
        out = _audit(limit).audit_object([group])
        assert out["groups"][0]["passes"] is passes
        assert out["equalizedPasses"] is passes
