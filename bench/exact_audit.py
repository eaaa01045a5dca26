"""Which figures of each catalogue method a rule decides exactly, certified, or as a float.

Runs each method on small decimal (or count) data through the same path a registered analysis
takes (:func:`prereg.decide.analyses._as_contrast`) and prints, per method, each figure it
reports as ``exact`` (a fraction), ``certified`` (a Certified figure: exact value or balls
behind a float filter) or ``float`` (compared as the shortest decimal of its float).

    .venv/bin/python bench/exact_audit.py [method ...]
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from prereg.decide.analyses import _as_contrast
from prereg.stats.catalogue import entries
from prereg.stats.compare import Certified
from prereg.stats.multiplicity import ADJUSTMENTS

X = [0.1, 0.4, 0.1, 0.7, 0.3, 0.5]
Y = [0.2, 0.2, 0.6, 0.3, 0.9, 0.4]
Q = [0.9, 0.2, 0.7, 0.6, 0.3, 0.8]
YB = [1, 0, 1, 1, 0, 0]
G3 = [[0.1, 0.4, 0.1], [0.3, 0.3, 0.9], [0.5, 0.2, 0.8]]
BIN2 = (8, 13, 1, 13)

SHAPE_ARGS = {
    "binomial": (7, 20),
    "two-binomial": BIN2,
    "paired-binary": (5, 7, 2, 6),
    "binomial-groups": ([5, 9, 14], [20, 21, 22]),
    "strata-2x2": ([10, 12], [30, 31], [6, 7], [29, 33]),
    "binary-blocks": (np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 1, 0]]),),
    "sample": (np.array(X),),
    "two-samples": (np.array(X), np.array(Y)),
    "paired-samples": (np.array(X), np.array(Y)),
    "samples-groups": ([np.array(g) for g in G3],),
    "sample-blocks": (
        np.array([[0.1, 0.3, 0.5], [0.4, 0.3, 0.2], [0.1, 0.9, 0.8], [0.7, 0.2, 0.6]]),
    ),
    "two-raters": (np.array([1, 2, 2, 1, 3, 2]), np.array([1, 2, 1, 1, 3, 3])),
    "ratings": (np.array([[1, 2, 2], [1, 1, 1], [3, 3, 2], [2, 2, 2]], dtype=float),),
    "clustered-sample": (
        np.array(X + Y),
        np.array([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]),
        np.array(["a"] * 6 + ["b"] * 6, dtype=object),
    ),
    "samples-per-problem": (np.array([4, 4, 4, 4]), np.array([1, 3, 0, 2])),
    "paired-samples-per-problem": (
        np.array([4, 4, 4]),
        np.array([1, 3, 0]),
        np.array([4, 4, 4]),
        np.array([2, 2, 1]),
    ),
    "answers-per-problem": ([["1", "2", "1"], ["3", "3", "2"]], ["1", "2"]),
    "labels": (np.array([1, 0, 1, 1, 0]), np.array([1, 1, 1, 0, 0])),
    "probabilities": (np.array(YB), np.array(Q)),
    "paired-probabilities": (np.array(YB), np.array(Q), np.array(YB), np.array(X)),
    "p-values": (np.array([0.01, 0.04, 0.03]),),
}

T = {"alternative": "two-sided", "level": 0.95, "margin": 0}
BOOT = {
    "interval": "percentile",
    "level": 0.95,
    "resamples": 50,
    "seed": 1,
    "quantile_method": "linear",
}
PERM = {
    "alternative": "two-sided",
    "margin": 0,
    "enumeration": "exact",
    "permutations": None,
    "seed": None,
    "p_correction": "none",
    "two_sided": "absolute",
}
MULT = {"alpha": 0.05, "missing": "refuse"}
CLS = {
    "labels": [0, 1],
    "average": "binary",
    "positive": 1,
    "zero_division": "zero",
    "missing_prediction": "refuse",
}
OPTIONS = {
    "wilson": {"level": 0.95},
    "binomial-test": {"alternative": "two-sided", "null_proportion": 0.5, "level": 0.95},
    "wald-difference": {"level": 0.95},
    "wald-difference-test": {"alternative": "two-sided", "margin": 0},
    "pooled-z": {"alternative": "two-sided", "margin": 0},
    "newcombe-hybrid": {"level": 0.95},
    "agresti-caffo": {"level": 0.95},
    "farrington-manning": {"alternative": "greater", "margin": -0.1},
    "miettinen-nurminen-test": {"alternative": "greater", "margin": -0.1},
    "miettinen-nurminen": {"level": 0.95},
    "fisher-exact": {"alternative": "two-sided"},
    "barnard-exact": {"alternative": "two-sided", "variance": "pooled", "grid": 32},
    "boschloo-exact": {"alternative": "two-sided", "grid": 32},
    "pearson-chi-square-2x2": {"correction": "none"},
    "g-test-2x2": {},
    "risk-ratio-katz": {"level": 0.95},
    "odds-ratio-woolf": {"level": 0.95, "haldane": "never"},
    "mcnemar-exact": {"alternative": "two-sided"},
    "mcnemar-mid-p": {"alternative": "two-sided"},
    "mcnemar-asymptotic": {"alternative": "two-sided", "correction": "none"},
    "newcombe-paired": {"level": 0.95},
    "tango": {"level": 0.95},
    "tango-test": {"alternative": "greater", "margin": -0.1},
    "cochran-q": {},
    "sign-test": {"alternative": "two-sided", "margin": 0, "ties": "drop"},
    "wilcoxon-signed-rank": {
        "alternative": "two-sided",
        "margin": 0,
        "zero_method": "wilcox",
        "method": "normal",
        "correction": "none",
    },
    "paired-t": T,
    "friedman": {"method": "chi-square", "tie_correction": True},
    "cohens-kappa": {
        "categories": [1, 2, 3],
        "weights": "none",
        "level": 0.95,
        "alternative": "two-sided",
    },
    "percent-agreement": {"categories": [1, 2, 3]},
    "gwet-ac1": {"categories": [1, 2, 3], "level": 0.95},
    "fleiss-kappa": {"categories": [1, 2, 3], "alternative": "two-sided"},
    "krippendorff-alpha": {"level_of_measurement": "nominal"},
    "fleiss-kappa-bootstrap": {"categories": [1, 2, 3], **BOOT},
    "krippendorff-alpha-bootstrap": {"level_of_measurement": "nominal", **BOOT},
    "intraclass-correlation": {"form": "icc-1-1", "level": 0.95},
    "cluster-summary-t": {"arms": ("a", "b"), "weighting": "equal", **T},
    "cluster-summary-welch-t": {"arms": ("a", "b"), **T},
    "cluster-robust-mean": {"arms": ("a", "b"), "correction": "CR1", "reference": "t", **T},
    "design-effect": {"arms": ("a", "b"), "cluster_size": "mean", "negative_icc": "keep"},
    "cluster-bootstrap": {"arms": ("a", "b"), "weighting": "size", **BOOT},
    "bootstrap-mean": {**BOOT, "studentized_se": None, "inner_resamples": None},
    "bootstrap-mean-difference": {**BOOT, "studentized_se": None, "inner_resamples": None},
    "bootstrap-paired-mean-difference": {**BOOT, "studentized_se": None, "inner_resamples": None},
    "permutation-mean-difference": PERM,
    "permutation-paired-mean-difference": PERM,
    "permutation-mean": PERM,
    "pass-at-k": {"k": 2},
    "pass-at-k-t": {"k": 2, **T},
    "pass-at-k-difference": {"k": 2, **T},
    "pass-at-k-difference-bootstrap": {"k": 2, **BOOT},
    "majority-vote": {"tie_break": "wrong"},
    "precision": CLS,
    "recall": CLS,
    "f1-score": CLS,
    "brier-score": {},
    "brier-score-difference": T,
    "log-loss": {"clip": None},
    "expected-calibration-error": {"edges": [0, 0.5, 1], "closed": "left"},
    "auroc": {"se_method": "delong", "level": 0.95},
    "auroc-difference": T,
    **{m: MULT for m in (*ADJUSTMENTS, "fixed-sequence")},
    "pearson-correlation": {"alternative": "two-sided", "null_value": 0, "level": 0.95},
    "spearman-correlation": {
        "alternative": "two-sided",
        "null_value": 0,
        "level": 0.95,
        "variance": "bonett-wright",
    },
    "kendall-tau-b": {"alternative": "two-sided", "null_value": 0, "level": 0.95},
    "correlation-difference": {"correlation": "pearson", "alternative": "two-sided"},
    # variants of the catalogue's options worth auditing apart
}
VARIANTS = {
    "tost-proportions/wald": ("tost-proportions", {"lower": -0.15, "upper": 0.15, "se": "wald"}),
    "noninferiority-proportions/wald": (
        "noninferiority-proportions",
        {"margin": -0.1, "alternative": "greater", "se": "wald", "level": 0.975},
    ),
    "welch-t": ("welch-t", T),
    "tost-means/welch": ("tost-means", {"lower": -1, "upper": 1, "variance": "welch"}),
    "cluster-robust-mean/one": (
        "cluster-robust-mean",
        {"arms": None, "correction": "CR1", "reference": "t", **T},
    ),
    "cluster-summary-t/size": ("cluster-summary-t", {"arms": ("a", "b"), "weighting": "size", **T}),
}


def kind(figure, value) -> str:
    if isinstance(figure, (int, Fraction)):
        return "exact"
    if isinstance(figure, Certified):
        return "certified"
    if float(value).is_integer():
        return "whole"  # a whole number: its float is exact
    return "float"


def audit(name, entry, options):
    args = SHAPE_ARGS[entry.shape]
    if entry.shape == "clustered-sample" and options.get("arms") is None:
        args = (args[0], args[1], None)
    if entry.shape == "paired-samples-per-problem":
        pass
    result = entry.load()(*args, **options)
    item = SimpleNamespace(id="fig", method=entry.name, options=options)
    contrast = _as_contrast(item, entry, result, args)
    certified = contrast.certified or {}
    out = {}
    for q in ("estimate", "se", "statistic", "df", "lower", "upper", "p"):
        v = getattr(result, q)
        if v is None or isinstance(v, tuple):
            continue
        out[q] = kind(certified.get(q), v)
    return out


def main(argv):
    # the catalogue's calls of the family-report tests, from the repository's tests/ (the
    # docstring's command runs from the repository without PYTHONPATH)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.stats.test_family_reports import CALLS

    cat = entries()
    todo = [(n, n, dict(CALLS[n][1]) if n in CALLS else OPTIONS.get(n)) for n in cat]
    todo += [(label, m, o) for label, (m, o) in VARIANTS.items()]
    if argv:
        todo = [t for t in todo if t[0] in argv or t[1] in argv]
    for label, name, options in todo:
        if options is None:
            print(f"{label:40s} (no options written here)")
            continue
        try:
            found = audit(name, cat[name], options)
        except Exception as e:  # noqa: BLE001 - an audit line, not a result
            print(f"{label:40s} could not run: {type(e).__name__}: {str(e)[:80]}")
            continue
        floats = [q for q, k in found.items() if k == "float" and q not in ("lower", "upper", "p")]
        text = " ".join(f"{q}={k}" for q, k in found.items())
        print(f"{label:40s} {text}" + ("   <- float " + ",".join(floats) if floats else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
