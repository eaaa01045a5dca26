"""From the compiled spec to this engine's configuration, and the study's Python API.

A study's generated package hands every handler ``ctx.config``: the generic shape compiled from
the spec (``prereg.compiler.build.spec_config``: ``study_id``, ``version``, ``constants`` keyed
by id, ``splits`` and the sections other engines use).  :func:`config_from_spec` maps it onto
the engine's own shape (the keys documented in :mod:`prereg.engines.multicorrect`); mechanism
only, every value comes from the spec.

Where the values come from
--------------------------
``constants.output-schemas``
    ``{"report", "diagnostic"}`` -> ``report_schema``, ``diagnostic_schema``.
``constants.threshold-fit``
    ``{"fit", "evaluate", "ties"}`` -> ``splits`` ``{"fit", "evaluate"}`` and
    ``threshold_ties``; both split names must be declared in the spec's ``splits`` section.
``constants.threshold-grid``
    -> ``threshold_grid`` (``{"denominator", "first", "last", "step"}``).
``constants.probability-sum-tolerance``
    -> ``probability_sum_tolerance``.
``constants.metric-conventions``
    ``{"multi_correct_min", "gap_scale", "ece_bins"}`` -> the three top-level keys.
``record_contracts``
    The four score inputs are the contracts with ``role`` ``lists``, ``labels``,
    ``predictions`` and ``binary``; each field's ``role`` (the keys of
    :data:`prereg.engines.multicorrect.config.FIELD_ROLES`) says what it holds ->
    ``fields`` (file kind -> role -> field name).  The ``lists`` contract's ``candidates``
    field's ``min_items`` and ``max_items`` -> ``candidate_count`` (``{"min", "max"}``).  The
    ``labels`` contract's ``split`` field, when it states ``allowed`` values, must allow
    exactly the ``fit`` and ``evaluate`` splits.
``constants.diagnostic``
    -> ``diagnostic``.
``constants.diagnostic-seeds``
    -> ``diagnostic_seeds``: the seeds the ``diagnostic`` command runs when given none.

Generated constants are Python literals (tuples for lists); the result is plain JSON data
(lists and dicts), a fresh copy the caller may keep or change.  :func:`study_config` maps and
checks in one step, turning a malformed constant into a :class:`prereg.errors.UserError` that
names the spec constant.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from prereg.engines.contract_roles import contract_for, fields_by_role
from prereg.engines.multicorrect.config import (
    FIELD_ROLES,
    ConfigError,
    EngineConfig,
    engine_config,
)
from prereg.errors import UserError

#: Each engine configuration key and the spec constant it comes from (or the record contracts).
SOURCES = {
    "report_schema": "output-schemas",
    "diagnostic_schema": "output-schemas",
    "splits": "threshold-fit",
    "threshold_ties": "threshold-fit",
    "threshold_grid": "threshold-grid",
    "probability_sum_tolerance": "probability-sum-tolerance",
    "candidate_count": "record_contracts",
    "multi_correct_min": "metric-conventions",
    "gap_scale": "metric-conventions",
    "ece_bins": "metric-conventions",
    "fields": "record_contracts",
    "diagnostic": "diagnostic",
    "diagnostic_seeds": "diagnostic-seeds",
}

_ENGINE = "multicorrect-scoring"


def plain(value: Any) -> Any:
    """A deep copy with mappings as dicts and sequences (lists, tuples) as lists."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _constant(constants: Mapping[str, Any], cid: str, keys: tuple[str, ...] | None = None) -> Any:
    if cid not in constants:
        known = ", ".join(sorted(set(SOURCES.values()) - {"record_contracts"}))
        raise UserError(
            f"engine configuration: the spec declares no constant {cid!r} "
            f"(the {_ENGINE} engine reads constants {known})"
        )
    value = plain(constants[cid])
    if keys is not None:
        if not isinstance(value, dict):
            raise UserError(f"engine configuration: constant {cid!r} must be a mapping")
        missing = [k for k in keys if k not in value]
        extra = sorted(set(value) - set(keys))
        if missing or extra:
            raise UserError(
                f"engine configuration: constant {cid!r} must have exactly the keys "
                f"{', '.join(keys)}"
                + (f" (missing {', '.join(missing)})" if missing else "")
                + (f" (unknown {', '.join(extra)})" if extra else "")
            )
    return value


def config_from_spec(config: Mapping[str, Any]) -> dict[str, Any]:
    """Map the generic compiled config (``ctx.config``) onto this engine's config shape."""
    if not isinstance(config, Mapping) or not isinstance(config.get("constants"), Mapping):
        raise UserError("engine configuration: expected the compiled spec config with constants")
    constants = config["constants"]
    schemas = _constant(constants, "output-schemas", ("report", "diagnostic"))
    fit = _constant(constants, "threshold-fit", ("fit", "evaluate", "ties"))
    declared = [s.get("id") for s in config.get("splits") or () if isinstance(s, Mapping)]
    for role in ("fit", "evaluate"):
        if fit[role] not in declared:
            raise UserError(
                f"engine configuration: constant 'threshold-fit' names split {fit[role]!r} "
                f"as {role!r}, but the spec's splits are {declared}"
            )
    metrics = _constant(
        constants, "metric-conventions", ("multi_correct_min", "gap_scale", "ece_bins")
    )
    fields: dict[str, dict[str, str]] = {}
    roles: dict[str, dict[str, Mapping[str, Any]]] = {}
    for kind, kind_roles in FIELD_ROLES.items():
        roles[kind] = fields_by_role(contract_for(config, kind, _ENGINE), kind_roles, _ENGINE)
        fields[kind] = {role: f["name"] for role, f in roles[kind].items()}
    candidates = roles["lists"]["candidates"]
    for bound in ("min_items", "max_items"):
        if bound not in candidates:
            raise UserError(
                f"engine configuration: the candidates field {candidates['name']!r} of the "
                f"lists contract must state {bound} (the candidate count per list)"
            )
    allowed = roles["labels"]["split"].get("allowed")
    if allowed is not None and sorted(allowed) != sorted((fit["fit"], fit["evaluate"])):
        raise UserError(
            f"engine configuration: the labels contract's split field allows {list(allowed)}, "
            f"but constant 'threshold-fit' fits on {fit['fit']!r} and evaluates "
            f"{fit['evaluate']!r}"
        )
    return {
        "report_schema": schemas["report"],
        "diagnostic_schema": schemas["diagnostic"],
        "splits": {"fit": fit["fit"], "evaluate": fit["evaluate"]},
        "threshold_grid": _constant(constants, "threshold-grid"),
        "threshold_ties": fit["ties"],
        "probability_sum_tolerance": _constant(constants, "probability-sum-tolerance"),
        "candidate_count": {"min": candidates["min_items"], "max": candidates["max_items"]},
        **metrics,
        "fields": fields,
        "diagnostic": _constant(constants, "diagnostic"),
        "diagnostic_seeds": _constant(constants, "diagnostic-seeds"),
    }


def study_config(config: Mapping[str, Any] | EngineConfig) -> EngineConfig:
    """The checked :class:`EngineConfig` of a compiled spec config (an EngineConfig passes).

    A malformed value raises :class:`UserError` naming the spec constant it came from.
    """
    if isinstance(config, EngineConfig):
        return config
    mapped = config_from_spec(config)
    try:
        return engine_config(mapped)
    except ConfigError as e:
        text = str(e)
        m = re.match(r"config\.([a-z_]+)", text)
        source = SOURCES.get(m.group(1)) if m else None
        where = (
            "the section 'record_contracts'"
            if source == "record_contracts"
            else f"constant {source!r}"
            if source
            else "the spec's constants"
        )
        raise UserError(
            f"engine configuration: {where} is malformed ({text}); fix the spec and recompile"
        ) from None


class StudyAPI(NamedTuple):
    """The engine's Python API with one study's configuration bound (see :func:`api`)."""

    PublicChoiceList: type
    EvaluatorRow: type
    Prediction: type
    BinaryOutput: type
    LabelLeakError: type
    collect_public_predictions: Callable[..., Any]
    fit_threshold: Callable[..., Any]
    evaluate_test: Callable[..., Any]
    threshold_curve: Callable[..., Any]
    binary_ece: Callable[..., Any]
    diagnostic: Callable[..., Any]
    config: EngineConfig


def api(config: Mapping[str, Any] | EngineConfig) -> StudyAPI:
    """The Python API bound to a study: ``config`` is the compiled spec config (ENGINE_CONFIG).

    The functions are :func:`functools.partial` objects with ``config=`` bound, so
    ``api(ENGINE_CONFIG).fit_threshold(validation_pairs)`` fits with the study's grid.
    ``StudyAPI._fields`` lists the names; ``_asdict()`` gives them as a dict.
    """
    from prereg.engines.multicorrect.contracts import diagnostic
    from prereg.engines.multicorrect.ece import binary_ece
    from prereg.engines.multicorrect.records import (
        BinaryOutput,
        EvaluatorRow,
        LabelLeakError,
        Prediction,
        PublicChoiceList,
        collect_public_predictions,
    )
    from prereg.engines.multicorrect.scoring import evaluate_test, fit_threshold, threshold_curve

    cfg = study_config(config)
    bind = functools.partial
    return StudyAPI(
        PublicChoiceList=PublicChoiceList,
        EvaluatorRow=EvaluatorRow,
        Prediction=Prediction,
        BinaryOutput=BinaryOutput,
        LabelLeakError=LabelLeakError,
        collect_public_predictions=bind(collect_public_predictions, config=cfg),
        fit_threshold=bind(fit_threshold, config=cfg),
        evaluate_test=bind(evaluate_test, config=cfg),
        threshold_curve=bind(threshold_curve, config=cfg),
        binary_ece=bind(binary_ece, config=cfg),
        diagnostic=bind(diagnostic, config=cfg),
        config=cfg,
    )
