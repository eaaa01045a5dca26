"""What a registered analysis writes in a spec for each input shape of
:mod:`prereg.stats.catalogue`: the inputs it names, the metric kinds that feed it, the options
the runtime fills.  Words only (no numpy): compile checks a spec's analyses against them
without importing :mod:`prereg.decide.analyses`, which builds the inputs when rows are scored."""

from __future__ import annotations

from collections.abc import Mapping

#: The shape's inputs a spec writes (beside ``metric`` and ``options``).
INPUTS: Mapping[str, tuple[str, ...]] = {
    "binomial": ("of",),
    "two-binomial": ("a", "b"),
    "paired-binary": ("a", "b", "pair_by"),
    "binomial-groups": ("groups",),
    "strata-2x2": ("a", "b", "strata"),
    "binary-blocks": ("groups", "unit"),
    "sample": ("of",),
    "two-samples": ("a", "b"),
    "paired-samples": ("a", "b", "pair_by"),
    "samples-groups": ("groups",),
    "sample-blocks": ("groups", "unit"),
    "two-raters": ("of", "unit", "rater", "rating"),
    "ratings": ("of", "unit", "rater", "rating"),
    "clustered-sample": ("cluster",),  # with of, or with a and b
    "samples-per-problem": ("of", "unit"),
    "paired-samples-per-problem": ("a", "b", "unit"),
    "answers-per-problem": ("of", "unit", "rating", "truth"),
    "labels": ("of", "prediction", "truth"),
    "probabilities": ("of",),
    "paired-probabilities": ("a", "b", "pair_by"),
    "p-values": ("of_analyses",),
}

#: The input words of an analysis that name one field of the rows (a factor or a record's).
FIELD_INPUTS = ("pair_by", "unit", "rater", "rating", "b_rating", "cluster", "prediction", "truth")

#: Every input word an analysis may carry.
ALL_INPUTS = ("of", "a", "b", "groups", "pair_by", "strata", *FIELD_INPUTS[1:], "of_analyses")

#: The metric kinds that feed each shape (None: any kind; the metric says which rows count).
METRIC_KINDS: Mapping[str, tuple[str, ...] | None] = {
    **{
        s: ("proportion", "coverage")
        for s in (
            "binomial",
            "two-binomial",
            "paired-binary",
            "binomial-groups",
            "strata-2x2",
            "binary-blocks",
            "samples-per-problem",
            "paired-samples-per-problem",
        )
    },
    **{
        s: ("mean", "geometric_mean")
        for s in (
            "sample",
            "two-samples",
            "paired-samples",
            "samples-groups",
            "sample-blocks",
            "clustered-sample",
        )
    },
    "two-raters": None,
    "ratings": None,
    "answers-per-problem": None,
    "labels": None,
    "probabilities": ("ece", "auroc"),
    "paired-probabilities": ("ece", "auroc"),
    "p-values": (),  # no metric
}

#: Options the runtime fills from the inputs (the spec does not write them).
FILLED_OPTIONS: Mapping[str, tuple[str, ...]] = {"clustered-sample": ("arms",)}


def shape_inputs_text(shape: str) -> str:
    """The inputs a shape needs, in words (for compile errors and docs)."""
    if shape == "clustered-sample":
        return "cluster, with of (one sample) or a and b (two arms)"
    if shape == "two-raters":
        return "of, unit, rater, rating (a wide log, both ratings on one row: of, unit, rating, b_rating)"
    return ", ".join(INPUTS[shape])


def required_options(entry) -> list[str]:
    filled = FILLED_OPTIONS.get(entry.shape, ())
    return [o for o in entry.options if o not in filled]


#: The paired-samples methods an analysis registered with ``pair_rows: mean`` may name: their
#: figures are those of a mean of paired differences (or of their ranks and signs), which
#: :mod:`prereg.decide.analyses` computes exactly on each pair's means
#: (``analyses.AVERAGED`` says which options and figures are in the data's units).
PAIR_ROWS_MEAN_METHODS = (
    "paired-t",
    "tost-paired",
    "equivalence-interval-paired",
    "wilcoxon-signed-rank",
    "sign-test",
)
