"""Multi-correct scoring engine: external predictions on choice lists with several correct options.

A provider sees only :class:`PublicChoiceList` objects (request id, question, candidate texts)
and answers with probabilities aligned with the candidates, or refuses.  The evaluator joins
the answers with the private correct sets (:class:`EvaluatorRow`), fits one selection
threshold on the fit split only, freezes it, scores the evaluate split, and reports gaps
between correct options, ranking vs set recovery, no-correct confidence, refusals and the
ten-bin ECE of independent binary outputs.  Conventions are stated in
:mod:`~prereg.engines.multicorrect.scoring`; every study constant comes from the configuration.

Python API (``config`` is the study's compiled configuration, ``ENGINE_CONFIG``, or the
:class:`EngineConfig` read from it; it is the last positional parameter, or keyword-only where
a defaulted parameter precedes it, so a study module can bind it with
``functools.partial(f, config=...)``):

- ``collect_public_predictions(provider, lists, config) -> {request_id: Prediction}``
- ``fit_threshold(validation, config, *, rounding_decimals=None) -> FittedThreshold``
- ``evaluate_test(fit, test, config, *, rounding_decimals=None) -> SplitMetrics``
- ``threshold_curve(scored, config, *, rounding_decimals=None) -> tuple[CurvePoint, ...]``
- ``binary_ece(outputs, exclude_first_bin=False, *, config, rounding_decimals=None)``
- ``diagnostic(seed, config) -> dict``

``validation``/``test``/``scored`` are iterables of ``(EvaluatorRow, Prediction)`` pairs (or a
:class:`Packed` from :func:`pack`).  Input problems raise :class:`prereg.errors.UserError`;
handing a provider anything but a bare PublicChoiceList raises :class:`LabelLeakError`.

``api(ENGINE_CONFIG) -> StudyAPI`` returns the names above (and the record types) with a
study's configuration bound; see :mod:`~prereg.engines.multicorrect.study_api`.

Commands (``COMMANDS``): ``score(ctx, args)`` with ``args.lists``, ``args.labels``,
``args.predictions``, ``args.binary_outputs`` (or None), ``args.rounding_decimals`` (or None),
``args.out``; ``diagnostic(ctx, args)`` with ``args.seeds`` (list of ints, or None for the
constant ``diagnostic-seeds``) and ``args.out`` (a new file for the document, or None to
print it).

Configuration: what the engine reads from ``ctx.config``, by the spec's names (all required;
``prereg compile`` checks them against ``constants.schema.json`` and :mod:`.spec_checks`, and
:func:`~prereg.engines.multicorrect.config.engine_config` reads them without checking again):

- constant ``output-schemas``: ``report`` and ``diagnostic``, the schema ids written into
  REPORT.json and the diagnostic output.
- constant ``threshold-fit``: ``fit`` and ``evaluate``, the split names (declared in the
  spec's ``splits``) used in the labels and as the keys of the report's ``splits`` (the
  fit split's curve is the report's ``fitCurve``, named by ``fitSplit``); ``ties``, ``smallest`` or ``largest``: which grid
  threshold wins a tie of exact-set accuracy.
- constant ``threshold-grid``: ``denominator``, ``first``, ``last``, ``step`` integers; the
  thresholds are ``k / denominator`` for ``k = first, first+step, …, last`` (float division,
  so each equals the decimal literal it names; selection compares ``p >= k / denominator``).
- constant ``probability-sum-tolerance``: ``|Σp − 1|`` allowed (inclusive), sum in float
  left to right.
- constant ``metric-conventions``: ``multi_correct_min``, the ``|G|`` from which gap,
  below-uniform share and top-|G| apply; ``gap_scale``, the integer factor of the gap
  (``Δ = gap_scale · (max_G p − min_G p)``); ``ece_bins``, the number of equal-width ECE bins
  (10, ``ece_ten_bin``).
- the record contracts with roles ``lists`` (field roles request_id, question, candidates),
  ``labels`` (request_id, split, correct), ``predictions`` (request_id, refused,
  probabilities) and, optionally, ``binary`` (request_id, candidate_index, probability,
  label; without it the study reads no binary outputs): each field's ``name`` is the JSONL
  field read for its role; the ``candidates`` field's ``min_items`` and ``max_items`` bound
  the candidates per list.
- constant ``diagnostic``: the synthetic data and the contracts (see
  :mod:`~prereg.engines.multicorrect.contracts`): ``contracts`` (ids, in run order),
  ``lists`` ``{"fit", "evaluate"}`` counts, ``candidates`` ``{"min", "max"}``,
  ``correct_count_weights`` (weight of |G| = 0, 1, …), ``refusal_rate``,
  ``empty_refusals_min``, ``weight_scale`` ``{"dominant", "other_correct", "distractor"}``,
  ``binary_draws`` ``{"positive", "negative"}`` (integers), ``text`` ``{"request_id",
  "question", "candidate"}`` (format strings with ``{seed}``, ``{split}``, ``{index}``),
  ``five_copy`` ``{"candidates", "even", "even_gap", "uneven", "uneven_gap"}`` (the contract-7
  references), ``tolerance`` (for comparing figures in the contracts).
- constant ``diagnostic-seeds``: the seeds the ``diagnostic`` command runs when given none.
"""

from __future__ import annotations

# Each public name and the module it lives in; imported on first use, so that registry
# discovery (which imports only .plugin) stays cheap.
_EXPORTS = {
    "EngineConfig": "config",
    "engine_config": "config",
    "diagnostic": "contracts",
    "binary_ece": "ece",
    "BinaryOutput": "records",
    "EvaluatorRow": "records",
    "LabelLeakError": "records",
    "Prediction": "records",
    "PublicChoiceList": "records",
    "collect_public_predictions": "records",
    "CurvePoint": "scoring",
    "FittedThreshold": "scoring",
    "Packed": "scoring",
    "SplitMetrics": "scoring",
    "evaluate_test": "scoring",
    "fit_threshold": "scoring",
    "pack": "scoring",
    "threshold_curve": "scoring",
    "StudyAPI": "study_api",
    "api": "study_api",
}

__all__ = ["COMMANDS", *sorted(_EXPORTS, key=str.lower)]


def __getattr__(name: str):
    import importlib

    if name == "COMMANDS":
        # each handler imports its module when it runs: compile checks a spec's handler names
        # without importing the scoring (numpy)

        def score(ctx, args):
            from prereg.engines.multicorrect.commands import score as run

            return run(ctx, args)

        def diagnostic(ctx, args):
            from prereg.engines.multicorrect.commands import diagnostic as run

            return run(ctx, args)

        def diagnose(ctx, args):
            from prereg.engines.multicorrect.diagnose import diagnose as run

            return run(ctx, args)

        globals()["COMMANDS"] = found = {
            "score": score,
            "diagnostic": diagnostic,
            "diagnose": diagnose,
        }
        return found
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
