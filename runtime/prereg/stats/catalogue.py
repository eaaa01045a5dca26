"""The catalogue of registered analyses: which methods exist, what each reads and reports.

Each family module of :mod:`prereg.stats` (see :data:`FAMILIES`) declares ``CATALOGUE``, a
tuple of :class:`Entry`; :func:`entries` gathers them.  An entry names the function that
computes the method (``module:function``, imported only when the method runs), the input shape
it reads (one of :data:`SHAPES`: what the unit table must provide), the options a spec must
register (every statistical choice; none has a default), and the documentation the methods page
is written from (formula, reference, library used as the oracle, how a threshold is decided
exactly).

Importing this module imports no family module; :func:`entries` imports each (they import
numpy, and scipy only inside the functions that need it).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field

FAMILIES = (
    "two_proportions",
    "paired",
    "ordered",
    "continuous",
    "agreement",
    "equivalence",
    "clustered",
    "resampling_methods",
    "estimators",
    "multiplicity",
    "correlation",
)

# The input shapes: what a method's function takes (positional arguments, in order).
SHAPES: Mapping[str, str] = {
    "binomial": "k, n: successes and trials of one proportion",
    "two-binomial": "k1, n1, k2, n2: successes and trials of arms a and b (a - b)",
    "paired-binary": "n11, n10, n01, n00: pairs by (a, b) outcome (n10: a right, b wrong)",
    "binomial-groups": "k, n: arrays of successes and trials, one per group, in registered order",
    "strata-2x2": "k1, n1, k2, n2: arrays, one 2x2 table (arm a against arm b) per stratum",
    "binary-blocks": "x: 2-d 0/1 array, one row per unit, one column per condition",
    "sample": "x: 1-d array of numbers",
    "two-samples": "x, y: 1-d arrays of numbers of arms a and b (independent)",
    "paired-samples": "x, y: 1-d arrays of numbers, element i of both from unit i",
    "samples-groups": "groups: list of 1-d arrays, one per group, in registered order",
    "sample-blocks": "x: 2-d array of numbers, one row per unit present in every group, one"
    " column per group in registered order",
    "two-raters": "a, b: 1-d arrays of category codes (integers) given by two raters to each unit",
    "ratings": "x: 2-d array, one row per unit, one column per rater; NaN where a rating is missing",
    "clustered-sample": "x, cluster: values and cluster ids (equal length); group: arm per value or None",
    "samples-per-problem": "n, c: arrays, per problem the number of samples and of correct ones",
    "paired-samples-per-problem": "n_a, c_a, n_b, c_b: arrays, per problem present in both arms,"
    " the samples and correct ones of arm a and of arm b",
    "answers-per-problem": "answers, gold: per problem the list of sampled answers and the correct one",
    "labels": "y_true, y_pred: 1-d arrays of class labels",
    "probabilities": "y, q: 1-d arrays, the 0/1 outcome and the predicted probability",
    "paired-probabilities": "y_a, q_a, y_b, q_b: 1-d arrays, element i of each from unit i:"
    " arm a's and arm b's 0/1 outcome and predicted probability",
    "p-values": "p: 1-d array of P values (NaN missing), in registered order",
}


#: How a standard error that is the root of a fraction of the counts is decided (a method whose
#: Result gives ``exact['se_squared']``).
SE_ROOT = (
    "se² is a fraction of the counts (exact['se_squared']), and a threshold on se is decided "
    "by balls of its root"
)


@dataclass(frozen=True)
class Entry:
    """One method of the catalogue."""

    name: str  # what a spec writes (lower-case words joined by '-')
    family: str  # one of FAMILIES
    function: str  # "prereg.stats.<family>:<function>"
    shape: str  # one of SHAPES
    summary: str  # one line
    options: Mapping[str, str] = field(default_factory=dict)  # option -> allowed values, in words
    reports: tuple[str, ...] = ()  # the Result fields it fills (estimate, se, statistic, ...)
    formula: str = ""  # the formula, in Markdown
    reference: str = ""  # the literature reference
    oracle: str = ""  # the independent implementation its tests compare with
    exactness: str = ""  # how a threshold on its figures is decided exactly
    # options that name one of the analysis' groups: by its position (from 1) or by its id
    group_options: tuple[str, ...] = ()

    def load(self):
        module, _, name = self.function.partition(":")
        return getattr(importlib.import_module(module), name)


def entries() -> dict[str, Entry]:
    """Every method of the catalogue by name, family by family in :data:`FAMILIES` order."""
    out: dict[str, Entry] = {}
    for family in FAMILIES:
        try:
            module = importlib.import_module(f"prereg.stats.{family}")
        except ModuleNotFoundError as e:
            if e.name == f"prereg.stats.{family}":
                continue  # a family not written yet
            raise
        for entry in getattr(module, "CATALOGUE", ()):
            if entry.name in out:
                raise ValueError(f"method {entry.name!r} is in the catalogue twice")
            if entry.shape not in SHAPES:
                raise ValueError(f"method {entry.name!r}: unknown shape {entry.shape!r}")
            out[entry.name] = entry
    return out
