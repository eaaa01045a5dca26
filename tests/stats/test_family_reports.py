"""Every method of the ordered, continuous and equivalence families, called through its catalogue
entry on ordinary data: it fills each figure its entry says it reports, its result is JSON
(exact values as "p/q" strings), and every option the entry names is required."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from prereg.stats.catalogue import entries

RNG = np.random.default_rng(3)
X = RNG.normal(5.0, 1.0, 20).round(2) + 1.0
Y = RNG.normal(4.6, 1.3, 17).round(2) + 1.0
BINOMIAL = (40, 100, 31, 95)
GROUPS = [RNG.normal(m, 1.0, 8) for m in (0.0, 0.4, 1.1)]

CALLS = {
    "chi-square-homogeneity": (([5, 9, 14], [20, 21, 22]), {}),
    "cochran-armitage": (
        ([5, 9, 14], [20, 21, 22]),
        {"scores": [0, 1, 2], "alternative": "greater", "variance": "n"},
    ),
    "cochran-mantel-haenszel": (
        ([10, 12], [30, 31], [6, 7], [29, 33]),
        {"correction": False, "alternative": "two-sided", "level": 0.95},
    ),
    "mantel-haenszel-risk-difference": (
        ([10, 12], [30, 31], [6, 7], [29, 33]),
        {"alternative": "two-sided", "level": 0.95, "margin": 0},
    ),
    "one-way-anova": ((GROUPS,), {}),
    "dunnett": ((GROUPS,), {"treatment": 3, "alternative": "two-sided", "level": 0.95}),
    "kruskal-wallis": ((GROUPS,), {"tie_correction": True}),
    "jonckheere-terpstra": ((GROUPS,), {"alternative": "greater", "method": "exact"}),
    "linear-contrast-proportions": (
        ([5, 9, 14], [20, 21, 22]),
        {"coefficients": [1, -2, 1], "alternative": "two-sided", "level": 0.95, "margin": 0},
    ),
    "linear-contrast-means": (
        (GROUPS,),
        {
            "coefficients": [-1, 0, 1],
            "variance": "welch",
            "alternative": "two-sided",
            "level": 0.95,
            "margin": 0,
        },
    ),
    "one-sample-t": ((X,), {"margin": 5.0, "alternative": "two-sided", "level": 0.95}),
    "welch-t": ((X, Y), {"margin": 0, "alternative": "two-sided", "level": 0.95}),
    "student-t": ((X, Y), {"margin": 0, "alternative": "less", "level": 0.9}),
    "mann-whitney": (
        (X[:9], Y[:8]),
        {"method": "asymptotic", "correction": True, "alternative": "two-sided"},
    ),
    "hodges-lehmann": ((X, Y), {"level": 0.95, "method": "asymptotic"}),
    "ratio-of-geometric-means": ((X, Y), {"margin": 1.0, "alternative": "greater", "level": 0.9}),
    "tost-proportions": (BINOMIAL, {"lower": -0.15, "upper": 0.15, "se": "farrington-manning"}),
    "equivalence-interval-proportions": (BINOMIAL, {"alpha": 0.05, "interval": "newcombe"}),
    "noninferiority-proportions": (
        BINOMIAL,
        {"margin": -0.1, "alternative": "greater", "se": "wald", "level": 0.975},
    ),
    "noninferiority-ratio-proportions": (
        BINOMIAL,
        {"margin": 0.8, "alternative": "greater", "level": 0.975},
    ),
    "tost-means": ((X, Y), {"lower": -1, "upper": 1, "variance": "welch"}),
    "tost-paired": ((X[:17], Y), {"lower": -1, "upper": 1}),
    "equivalence-interval-means": ((X, Y), {"alpha": 0.05, "variance": "pooled"}),
    "equivalence-interval-paired": ((X[:17], Y), {"alpha": 0.05}),
    "noninferiority-means": (
        (X, Y),
        {"margin": -0.5, "alternative": "greater", "variance": "welch", "level": 0.975},
    ),
    "noninferiority-ratio-means": (
        (X, Y),
        {"margin": 0.9, "alternative": "greater", "level": 0.975},
    ),
}

MINE = {
    name: e for name, e in entries().items() if e.family in ("ordered", "continuous", "equivalence")
}


def test_every_method_has_a_call():
    assert set(CALLS) == set(MINE)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_reports_filled_and_json(name):
    entry = MINE[name]
    args, options = CALLS[name]
    fn = entry.load()
    result = fn(*args, **options)
    assert result.method == name
    # a one-sided interval has one bound; the other does not exist (None)
    missing = {"greater": "upper", "less": "lower"}.get(options.get("alternative"))
    for figure in entry.reports:
        if figure == missing:
            assert getattr(result, figure) is None, (name, figure)
        else:
            assert getattr(result, figure) is not None, (name, figure)
    text = json.dumps(result.as_dict(), allow_nan=False, default=None)
    back = json.loads(text)
    for key, value in result.exact.items():
        assert back["exact"][key] == f"{value.numerator}/{value.denominator}"
    # every option the entry documents is a keyword-only argument without a default
    params = inspect.signature(fn).parameters
    assert set(entry.options) == {
        p.name for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    for option in entry.options:
        assert params[option].default is inspect.Parameter.empty
        partial = {k: v for k, v in options.items() if k != option}
        with pytest.raises(TypeError):
            fn(*args, **partial)
