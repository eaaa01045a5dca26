"""Clustered methods on their margin, and a cluster holding both arms.

By hand: arm a is right 36 times of 60, arm b 30 of 60 (0/1 outcomes), so a − b = 1/10 exactly
(the floats' 0.6 − 0.5 is 0.09999999999999998); against a margin of 0.1 the statistic is 0
and the one-sided P exactly 1/2. Decimal data: a = 0.3, 0.5, 0.4 and b = 0.1, 0.3, 0.2 differ
by 1/5 exactly (the floats by 0.20000000000000004). A summary t needs every cluster within one
arm: the refusal names the cluster (it was an AttributeError traceback for string ids)."""

from __future__ import annotations

import numpy as np
import pytest

from prereg.stats import clustered
from prereg.stats.methods import MethodError

X = np.array([1.0] * 36 + [0.0] * 24 + [1.0] * 30 + [0.0] * 30)
GROUP = np.array(["a"] * 60 + ["b"] * 60, dtype=object)
BY_TENS = np.array([f"c{i // 10}" for i in range(120)], dtype=object)  # 6 clusters an arm


def test_cluster_robust_mean_on_its_margin():
    assert float(np.mean(X[:60])) - float(np.mean(X[60:])) != 0.1
    for correction in ("CR1", "CR0"):
        r = clustered.cluster_robust_mean(
            X, BY_TENS, GROUP, arms=("a", "b"), correction=correction, reference="t",
            level=0.95, alternative="greater", margin=0.1,
        )  # fmt: skip
        assert r.statistic == 0.0 and r.p == 0.5
    x = np.array([0.3, 0.5, 0.4, 0.1, 0.3, 0.2])
    ids = np.array(list("abcdef"), dtype=object)
    r = clustered.cluster_robust_mean(
        x, ids, GROUP[[0, 1, 2, 60, 61, 62]], arms=("a", "b"), correction="CR1",
        reference="normal", level=0.95, alternative="less", margin=0.2,
    )  # fmt: skip
    assert r.statistic == 0.0 and r.p == 0.5


@pytest.mark.parametrize("weighting", ["equal", "size"])
def test_cluster_summary_t_on_its_margin(weighting):
    r = clustered.cluster_summary_t(
        X, BY_TENS, GROUP, arms=("a", "b"), weighting=weighting, level=0.95,
        alternative="greater", margin=0.1,
    )  # fmt: skip
    assert str(r.exact["estimate"]) == "1/10"
    assert r.statistic == 0.0 and r.p == 0.5


@pytest.mark.parametrize("dtype", [object, str])
def test_a_cluster_in_both_arms_is_refused_by_name(dtype):
    mixed = np.array([f"c{i % 12}" for i in range(120)], dtype=dtype)
    with pytest.raises(MethodError, match="cluster 'c0' holds units of both arms"):
        clustered.cluster_summary_t(
            X, mixed, GROUP, arms=("a", "b"), weighting="equal", level=0.95,
            alternative="two-sided", margin=0,
        )  # fmt: skip
