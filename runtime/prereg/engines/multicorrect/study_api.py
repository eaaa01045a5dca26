"""The Python API a compiled multicorrect-scoring study exposes: the engine's functions bound to its
configuration (``Engine.api``; a generated study package's attributes resolve through it)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from prereg.engines.multicorrect.config import EngineConfig, engine_config


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

    cfg = engine_config(config)
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
