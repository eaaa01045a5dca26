"""The engine configuration: checked once, then read through attribute names.

The keys are documented in the package docstring (:mod:`prereg.engines.multicorrect`).  A
configuration is plain JSON data compiled from a study's spec; :func:`engine_config` checks it
and returns an immutable :class:`EngineConfig`.  Every public function of the engine accepts
either the plain mapping or an :class:`EngineConfig`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

FIELD_ROLES = {
    "lists": ("request_id", "question", "candidates"),
    "labels": ("request_id", "split", "correct"),
    "predictions": ("request_id", "refused", "probabilities"),
    "binary": ("request_id", "candidate_index", "probability", "label"),
}

#: The inputs a study may go without (it then scores no independent binary outputs).
OPTIONAL_INPUTS = ("binary",)

#: The placeholders each text format of constant ``diagnostic`` may use.
TEXT_PLACEHOLDERS = {
    "request_id": ("seed", "split", "index"),
    "question": ("index",),
    "candidate": ("index",),
}

CONTRACT_IDS = (
    "ranking_vs_set_recovery",
    "below_uniform_counted",
    "threshold_frozen",
    "overlap_refused",
    "refusals_fail",
    "public_callback_blind",
    "five_copy_gap",
    "first_bin_exclusion_renormalised",
)

TIE_RULES = ("smallest", "largest")


class ConfigError(ValueError):
    """The engine configuration (compiled from the spec) is malformed: a bug in the spec."""


def _get(d: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(d, Mapping):
        raise ConfigError(f"config{where}: expected an object")
    if key not in d:
        raise ConfigError(f"config{where}.{key}: missing")
    return d[key]


def _int(d, key, where, lo=None, hi=None) -> int:
    v = _get(d, key, where)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"config{where}.{key}: expected an integer, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ConfigError(f"config{where}.{key}: {v} is outside [{lo}, {hi}]")
    return v


def _num(d, key, where, lo=None, hi=None) -> float:
    v = _get(d, key, where)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"config{where}.{key}: expected a finite number, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ConfigError(f"config{where}.{key}: {v} is outside [{lo}, {hi}]")
    return float(v)


def _str(d, key, where) -> str:
    v = _get(d, key, where)
    if not isinstance(v, str) or not v:
        raise ConfigError(f"config{where}.{key}: expected a non-empty string, got {v!r}")
    return v


def _num_list(d, key, where, lo=None, hi=None) -> tuple[float, ...]:
    v = _get(d, key, where)
    if not isinstance(v, list) or not v:
        raise ConfigError(f"config{where}.{key}: expected a non-empty list of numbers")
    out = []
    for i, x in enumerate(v):
        out.append(_num({"x": x}, "x", f"{where}.{key}[{i}]", lo, hi))
    return tuple(out)


@dataclass(frozen=True)
class FiveCopyReference:
    candidates: tuple[str, ...]
    even: tuple[float, ...]
    even_gap: float
    uneven: tuple[float, ...]
    uneven_gap: float


@dataclass(frozen=True)
class DiagnosticConfig:
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


@dataclass(frozen=True)
class EngineConfig:
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

    def numerators(self) -> np.ndarray:
        """The grid's integer numerators k (threshold k / denominator)."""
        return np.arange(self.grid_first, self.grid_last + 1, self.grid_step, dtype=np.int64)

    def thresholds(self) -> np.ndarray:
        """Thresholds ``k / denominator`` as correctly rounded float divisions.

        ``29 / 100`` is the double nearest to 29/100, the same double the decimal literal
        ``0.29`` parses to; so a probability written ``0.29`` is selected at threshold 0.29.
        (``29 * 0.01`` or an accumulated ``arange(0, 1.01, 0.01)`` would not guarantee that.)
        """
        return self.numerators().astype(np.float64) / float(self.grid_denominator)


def _diagnostic(d: Mapping[str, Any]) -> DiagnosticConfig:
    w = ".diagnostic"
    contracts = _get(d, "contracts", w)
    if not isinstance(contracts, list) or not contracts:
        raise ConfigError(f"config{w}.contracts: expected a non-empty list")
    for i, c in enumerate(contracts):
        if c not in CONTRACT_IDS:
            raise ConfigError(
                f"config{w}.contracts[{i}]: unknown contract {c!r} (known: {', '.join(CONTRACT_IDS)})"
            )
    if len(set(contracts)) != len(contracts):
        raise ConfigError(f"config{w}.contracts: a contract is listed twice")
    lists = _get(d, "lists", w)
    cands = _get(d, "candidates", w)
    scale = _get(d, "weight_scale", w)
    draws = _get(d, "binary_draws", w)
    text = _get(d, "text", w)
    five = _get(d, "five_copy", w)
    weights = _num_list(d, "correct_count_weights", w, lo=0.0)
    if sum(weights) <= 0:
        raise ConfigError(f"config{w}.correct_count_weights: the weights sum to 0")
    cmin = _int(cands, "min", f"{w}.candidates", lo=2)
    cmax = _int(cands, "max", f"{w}.candidates", lo=cmin)
    if len(weights) > cmax + 1:
        raise ConfigError(
            f"config{w}.correct_count_weights: more sizes than {cmax} candidates allow"
        )
    fc = f"{w}.five_copy"
    fcands = _get(five, "candidates", fc)
    if (
        not isinstance(fcands, list)
        or len(fcands) < 2
        or not all(isinstance(t, str) for t in fcands)
    ):
        raise ConfigError(f"config{fc}.candidates: expected a list of at least two strings")
    even = _num_list(five, "even", fc, 0.0, 1.0)
    uneven = _num_list(five, "uneven", fc, 0.0, 1.0)
    for name, v in (("even", even), ("uneven", uneven)):
        if len(v) != len(fcands):
            raise ConfigError(f"config{fc}.{name}: expected {len(fcands)} probabilities")
    fmt = {}
    for key, fields in (
        ("request_id", ("seed", "split", "index")),
        ("question", ("index",)),
        ("candidate", ("index",)),
    ):
        s = _str(text, key, f"{w}.text")
        try:
            s.format(**{f: 0 for f in fields})
        except (KeyError, IndexError, ValueError) as e:
            raise ConfigError(
                f"config{w}.text.{key}: placeholders must be among {{{'}, {'.join(fields)}}}: {e}"
            ) from None
        fmt[key] = s
    return DiagnosticConfig(
        contracts=tuple(contracts),
        fit_lists=_int(lists, "fit", f"{w}.lists", lo=1),
        evaluate_lists=_int(lists, "evaluate", f"{w}.lists", lo=1),
        candidates_min=cmin,
        candidates_max=cmax,
        correct_count_weights=weights,
        refusal_rate=_num(d, "refusal_rate", w, 0.0, 1.0),
        empty_refusals_min=_int(d, "empty_refusals_min", w, lo=0),
        dominant_scale=_num(scale, "dominant", f"{w}.weight_scale", lo=1e-9),
        other_correct_scale=_num(scale, "other_correct", f"{w}.weight_scale", lo=1e-9),
        distractor_scale=_num(scale, "distractor", f"{w}.weight_scale", lo=1e-9),
        positive_draws=_int(draws, "positive", f"{w}.binary_draws", lo=1),
        negative_draws=_int(draws, "negative", f"{w}.binary_draws", lo=1),
        request_id_format=fmt["request_id"],
        question_format=fmt["question"],
        candidate_format=fmt["candidate"],
        five_copy=FiveCopyReference(
            candidates=tuple(fcands),
            even=even,
            even_gap=_num(five, "even_gap", fc),
            uneven=uneven,
            uneven_gap=_num(five, "uneven_gap", fc),
        ),
        tolerance=_num(d, "tolerance", w, lo=0.0),
    )


def _seeds(config: Mapping[str, Any]) -> tuple[int, ...]:
    seeds = _get(config, "diagnostic_seeds", "")
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ConfigError("config.diagnostic_seeds: expected a non-empty list of seeds")
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise ConfigError(
                f"config.diagnostic_seeds[{i}]: expected a non-negative integer, got {s!r}"
            )
    if len(set(seeds)) != len(seeds):
        raise ConfigError("config.diagnostic_seeds: a seed is listed twice")
    return tuple(seeds)


def engine_config(config: Mapping[str, Any] | EngineConfig) -> EngineConfig:
    """Check a configuration mapping and return it as an :class:`EngineConfig`."""
    if isinstance(config, EngineConfig):
        return config
    if not isinstance(config, Mapping):
        raise ConfigError(f"config: expected an object, got {type(config).__name__}")
    splits = _get(config, "splits", "")
    fit_split = _str(splits, "fit", ".splits")
    evaluate_split = _str(splits, "evaluate", ".splits")
    if fit_split == evaluate_split:
        raise ConfigError("config.splits: the fit and evaluate splits must differ")
    grid = _get(config, "threshold_grid", "")
    den = _int(grid, "denominator", ".threshold_grid", lo=1)
    first = _int(grid, "first", ".threshold_grid", lo=0, hi=den)
    last = _int(grid, "last", ".threshold_grid", lo=first, hi=den)
    step = _int(grid, "step", ".threshold_grid", lo=1)
    if (last - first) % step:
        raise ConfigError("config.threshold_grid: last - first must be a multiple of step")
    ties = _get(config, "threshold_ties", "")
    if ties not in TIE_RULES:
        raise ConfigError(f"config.threshold_ties: expected one of {TIE_RULES}, got {ties!r}")
    counts = _get(config, "candidate_count", "")
    cmin = _int(counts, "min", ".candidate_count", lo=1)
    cmax = _int(counts, "max", ".candidate_count", lo=cmin)
    fields_in = _get(config, "fields", "")
    fields: dict[str, Mapping[str, str]] = {}
    for file_kind, roles in FIELD_ROLES.items():
        f = _get(fields_in, file_kind, ".fields")
        names = {role: _str(f, role, f".fields.{file_kind}") for role in roles}
        if len(set(names.values())) != len(names):
            raise ConfigError(f"config.fields.{file_kind}: two roles share a field name")
        extra = set(f) - set(roles)
        if extra:
            raise ConfigError(f"config.fields.{file_kind}: unknown roles {sorted(extra)}")
        fields[file_kind] = MappingProxyType(names)
    ece_bins = _int(config, "ece_bins", "", lo=1)
    if ece_bins != 10:
        # prereg.stats.calibration.ece_ten_bin is the only binning this engine uses.
        raise ConfigError(f"config.ece_bins: this engine computes ten-bin ECE only, got {ece_bins}")
    cfg = EngineConfig(
        report_schema=_str(config, "report_schema", ""),
        diagnostic_schema=_str(config, "diagnostic_schema", ""),
        fit_split=fit_split,
        evaluate_split=evaluate_split,
        grid_denominator=den,
        grid_first=first,
        grid_last=last,
        grid_step=step,
        threshold_ties=ties,
        probability_sum_tolerance=_num(config, "probability_sum_tolerance", "", lo=0.0),
        candidates_min=cmin,
        candidates_max=cmax,
        multi_correct_min=_int(config, "multi_correct_min", "", lo=1),
        gap_scale=_int(config, "gap_scale", "", lo=1, hi=1 << 20),
        ece_bins=ece_bins,
        fields=MappingProxyType(fields),
        diagnostic=_diagnostic(_get(config, "diagnostic", "")),
        diagnostic_seeds=_seeds(config),
    )
    dg = cfg.diagnostic
    if dg.candidates_min < cmin or dg.candidates_max > cmax:
        raise ConfigError(
            f"config.diagnostic.candidates: must lie within config.candidate_count [{cmin}, {cmax}]"
        )
    if not cmin <= len(dg.five_copy.candidates) <= cmax:
        raise ConfigError(
            "config.diagnostic.five_copy.candidates: count outside config.candidate_count"
        )
    known = {
        "report_schema",
        "diagnostic_schema",
        "splits",
        "threshold_grid",
        "threshold_ties",
        "probability_sum_tolerance",
        "candidate_count",
        "multi_correct_min",
        "gap_scale",
        "ece_bins",
        "fields",
        "diagnostic",
        "diagnostic_seeds",
    }
    extra = set(config) - known
    if extra:
        raise ConfigError(f"config: unknown keys {sorted(extra)}")
    return cfg
