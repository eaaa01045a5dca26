"""The engine configuration: read once from the compiled study, then used by attribute name.

Handlers receive ``ctx.config``, the configuration compiled from the study's spec (the
generated ``ENGINE_CONFIG``: ``constants`` keyed by the spec's constant ids, with the spec's
own keys, ``splits``, ``record_contracts``, ...).  :func:`engine_config` is the one place that
reads it into an immutable :class:`EngineConfig`; every public function of the engine accepts
either that compiled mapping or an :class:`EngineConfig`.

Nothing is checked again here: ``prereg compile`` refused every spec whose constants break the
engine's schema (``constants.schema.json``) or its checks (:mod:`.spec_checks`), and a study's
commands run only on the spec they were compiled from.  The one exception is a cheap check of
the two values that would make the engine compute figures other than the registered ones
without failing: the ECE binning and the threshold grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prereg.errors import UserError

if TYPE_CHECKING:  # prereg.rules brings numpy: loaded when a decision is built, not by check
    from prereg.rules import Decision

#: The engine's inputs: the record contract role of each, and the roles of its fields.
FIELD_ROLES = {
    "lists": ("request_id", "question", "candidates"),
    "labels": ("request_id", "split", "correct"),
    "predictions": ("request_id", "refused", "probabilities"),
    "binary": ("request_id", "candidate_index", "probability", "label"),
}

#: What the engine reads in the field of each role: (JSON type, item type of an array, whether
#: null must be allowed); a contract must declare these types (its own bounds and names are
#: free), since the readers take the values as these types whatever the contract says.
FIELD_TYPES = {
    "request_id": ("string", None, False),
    "question": ("string", None, False),
    "candidates": ("array", "string", False),
    "split": ("string", None, False),
    "correct": ("array", "integer", False),
    "refused": ("boolean", None, False),
    "probabilities": ("array", "number", True),  # null for a refusal
    "candidate_index": ("integer", None, False),
    "probability": ("number", None, False),
    "label": ("integer", None, False),  # 0 or 1
}

#: The inputs a study may go without (it then scores no independent binary outputs).
OPTIONAL_INPUTS = ("binary",)

#: The placeholders each text format of constant ``diagnostic`` may use.
TEXT_PLACEHOLDERS = {
    "request_id": ("seed", "split", "index"),
    "question": ("index",),
    "candidate": ("index",),
}

#: The only binning this engine computes (prereg.stats.calibration.ece_ten_bin).
ECE_BINS = 10


@dataclass(frozen=True)
class FiveCopyReference:
    """``diagnostic.five_copy``: the references of contract 7."""

    candidates: tuple[str, ...]
    even: tuple[float, ...]
    even_gap: float
    uneven: tuple[float, ...]
    uneven_gap: float


@dataclass(frozen=True)
class DiagnosticConfig:
    """Constant ``diagnostic`` (``lists.fit`` is ``fit_lists``, ``weight_scale.dominant`` is
    ``dominant_scale``, ``binary_draws.positive`` is ``positive_draws``, ``text.question`` is
    ``question_format``, and so on; ``decision`` is the registered rule of the hypothesis
    ``hypothesis`` names, which decides whether the diagnostic passes)."""

    contracts: tuple[str, ...]
    fit_lists: int
    evaluate_lists: int
    candidates_min: int
    candidates_max: int
    correct_count_weights: tuple[float, ...]
    refusal_rate: float
    empty_refusals_min: int
    dominant_scale: float
    other_correct_scale: float
    distractor_scale: float
    positive_draws: int
    negative_draws: int
    request_id_format: str
    question_format: str
    candidate_format: str
    five_copy: FiveCopyReference
    tolerance: float
    #: the hypothesis whose registered rule decides the diagnostic's pass
    hypothesis: str
    #: the compiled study configuration the rule is read from
    config: Mapping[str, Any] = field(repr=False, compare=False)

    @cached_property
    def decision(self) -> Decision:
        """The registered decision of the diagnostic's pass (prereg.rules, which brings
        numpy: read on first use, so that a command that runs no diagnostic never loads it)."""
        return _decision(self.config, self.hypothesis)


@dataclass(frozen=True)
class EngineConfig:
    """What the engine reads, with where each value is stated in the spec:

    - ``report_schema``, ``diagnostic_schema``: constant ``output-schemas`` (``report``,
      ``diagnostic``);
    - ``fit_split``, ``evaluate_split``, ``threshold_ties``: constant ``threshold-fit``
      (``fit``, ``evaluate``, ``ties``);
    - ``grid_denominator``, ``grid_first``, ``grid_last``, ``grid_step``: constant
      ``threshold-grid``;
    - ``probability_sum_tolerance``: constant ``probability-sum-tolerance``;
    - ``multi_correct_min``, ``gap_scale``, ``ece_bins``: constant ``metric-conventions``;
    - ``candidates_min``, ``candidates_max``: ``min_items`` and ``max_items`` of the
      ``candidates`` field of the record contract with role ``lists``;
    - ``fields``: ``{input: {field role: field name}}`` of the record contracts with roles
      ``lists``, ``labels``, ``predictions`` and ``binary`` (:data:`FIELD_ROLES`; ``binary``
      only when the spec declares it);
    - ``diagnostic``: constant ``diagnostic``; ``diagnostic_seeds``: constant
      ``diagnostic-seeds``.
    """

    report_schema: str
    diagnostic_schema: str
    fit_split: str
    evaluate_split: str
    grid_denominator: int
    grid_first: int
    grid_last: int
    grid_step: int
    threshold_ties: str
    probability_sum_tolerance: float
    candidates_min: int
    candidates_max: int
    multi_correct_min: int
    gap_scale: int
    ece_bins: int
    fields: Mapping[str, Mapping[str, str]]
    diagnostic: DiagnosticConfig
    diagnostic_seeds: tuple[int, ...]

    @property
    def split_names(self) -> tuple[str, str]:
        return (self.fit_split, self.evaluate_split)

    def numerators(self):
        """The grid's integer numerators k (threshold k / denominator), an int64 array."""
        import numpy as np

        return np.arange(self.grid_first, self.grid_last + 1, self.grid_step, dtype=np.int64)

    def thresholds(self):
        """Thresholds ``k / denominator`` as correctly rounded float divisions.

        ``29 / 100`` is the double nearest to 29/100, the same double the decimal literal
        ``0.29`` parses to; so a probability written ``0.29`` is selected at threshold 0.29.
        (``29 * 0.01`` or an accumulated ``arange(0, 1.01, 0.01)`` would not guarantee that.)
        """
        import numpy as np

        return self.numerators().astype(np.float64) / float(self.grid_denominator)


def _floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _decision(config: Mapping[str, Any], hypothesis: str) -> Decision:
    from prereg.rules import decision_of

    try:
        return decision_of(config, hypothesis)
    except KeyError:
        raise UserError(
            f"engine configuration: hypothesis {hypothesis!r} (constant diagnostic's"
            " hypothesis) is not among the compiled decisions; prereg compile refuses such a"
            " spec, so compile it (prereg compile)"
        ) from None


def _diagnostic(d: Mapping[str, Any], config: Mapping[str, Any]) -> DiagnosticConfig:
    five, text, scale = d["five_copy"], d["text"], d["weight_scale"]
    return DiagnosticConfig(
        contracts=tuple(d["contracts"]),
        fit_lists=d["lists"]["fit"],
        evaluate_lists=d["lists"]["evaluate"],
        candidates_min=d["candidates"]["min"],
        candidates_max=d["candidates"]["max"],
        correct_count_weights=_floats(d["correct_count_weights"]),
        refusal_rate=float(d["refusal_rate"]),
        empty_refusals_min=d["empty_refusals_min"],
        dominant_scale=float(scale["dominant"]),
        other_correct_scale=float(scale["other_correct"]),
        distractor_scale=float(scale["distractor"]),
        positive_draws=d["binary_draws"]["positive"],
        negative_draws=d["binary_draws"]["negative"],
        request_id_format=text["request_id"],
        question_format=text["question"],
        candidate_format=text["candidate"],
        five_copy=FiveCopyReference(
            candidates=tuple(five["candidates"]),
            even=_floats(five["even"]),
            even_gap=float(five["even_gap"]),
            uneven=_floats(five["uneven"]),
            uneven_gap=float(five["uneven_gap"]),
        ),
        tolerance=float(d["tolerance"]),
        hypothesis=d["hypothesis"],
        config=config,
    )


def _inputs(config: Mapping[str, Any]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """``{input: {field role: field}}`` of the record contracts the engine reads (an optional
    input the spec does not declare is left out)."""
    by_role = {c.get("role"): c for c in config.get("record_contracts") or ()}
    out = {}
    for kind, roles in FIELD_ROLES.items():
        if kind not in by_role:
            if kind in OPTIONAL_INPUTS:
                continue
            raise UserError(
                f"engine configuration: no record contract with role {kind!r}; prereg compile"
                " refuses such a spec, so compile it (prereg compile)"
            )
        fields = by_role[kind]["fields"]
        out[kind] = {f["role"]: f for f in fields if f.get("role") in roles}
    return out


def engine_config(config: Mapping[str, Any] | EngineConfig) -> EngineConfig:
    """The :class:`EngineConfig` of a compiled study configuration (``ctx.config``); an
    :class:`EngineConfig` is returned as it is."""
    if isinstance(config, EngineConfig):
        return config
    k = config["constants"]
    fit, grid = k["threshold-fit"], k["threshold-grid"]
    metrics, schemas = k["metric-conventions"], k["output-schemas"]
    inputs = _inputs(config)
    candidates = inputs["lists"]["candidates"]
    cfg = EngineConfig(
        report_schema=schemas["report"],
        diagnostic_schema=schemas["diagnostic"],
        fit_split=fit["fit"],
        evaluate_split=fit["evaluate"],
        grid_denominator=grid["denominator"],
        grid_first=grid["first"],
        grid_last=grid["last"],
        grid_step=grid["step"],
        threshold_ties=fit["ties"],
        probability_sum_tolerance=float(k["probability-sum-tolerance"]),
        candidates_min=candidates["min_items"],
        candidates_max=candidates["max_items"],
        multi_correct_min=metrics["multi_correct_min"],
        gap_scale=metrics["gap_scale"],
        ece_bins=metrics["ece_bins"],
        fields=MappingProxyType(
            {
                kind: MappingProxyType({r: fields[r]["name"] for r in FIELD_ROLES[kind]})
                for kind, fields in inputs.items()
            }
        ),
        diagnostic=_diagnostic(k["diagnostic"], config),
        diagnostic_seeds=tuple(k["diagnostic-seeds"]),
    )
    # The two values that would change the figures without an error (see the docstring).
    if cfg.ece_bins != ECE_BINS:
        raise UserError(
            f"engine configuration: constant 'metric-conventions' has ece_bins {cfg.ece_bins};"
            f" this engine computes {ECE_BINS}-bin ECE only"
        )
    if not 0 <= cfg.grid_first <= cfg.grid_last or (cfg.grid_last - cfg.grid_first) % cfg.grid_step:
        raise UserError(
            "engine configuration: constant 'threshold-grid' does not step from first to last"
        )
    return cfg
