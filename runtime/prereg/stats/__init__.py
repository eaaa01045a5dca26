"""Statistical primitives that generated decision rules and engines call.

Each concern is a small module, re-exported here:

- methods: the registry of interval and test methods by the names specs write (wilson,
  clopper-pearson, newcombe-hybrid, pooled-z, farrington-manning, hanley-mcneil); use it as
  ``from prereg.stats.methods import method, methods, register`` (``prereg.stats.methods`` is
  the module, so only ``Method`` and ``MethodError`` are re-exported here)
- proportions: Wilson and Clopper-Pearson intervals, Newcombe hybrid-score difference interval,
  pooled z test, Farrington-Manning score test against a margin, one-sided normal P values
- multiplicity: Holm step-down adjusted P values (missing P values stay missing)
- roc: AUROC with ties counted half, Hanley-McNeil standard error and interval
- calibration: isotonic calibrator artifact, decile ECE, ten-bin ECE (first-bin exclusion)
- resampling: closed-form delete-one jackknife over many cohorts, t quantiles, bootstrap
- classification: balanced accuracy
- rounding: half-up rounding (binary and shortest-decimal)

No primitive has a statistical default that a spec did not choose: levels, z values, methods
and conventions are arguments.
"""

from __future__ import annotations

import importlib

# Re-exports are resolved on first use, so importing one module (say resampling, on the power
# plan's path) does not pay for scipy imports the others need.
_EXPORTS = {
    "apply_isotonic": "calibration",
    "decile_ece": "calibration",
    "ece_ten_bin": "calibration",
    "fit_isotonic_blocks": "calibration",
    "balanced_accuracy": "classification",
    "holm_adjust": "multiplicity",
    "Method": "methods",
    "MethodError": "methods",
    "clopper_pearson_interval": "proportions",
    "critical_z": "proportions",
    "farrington_manning_estimates": "proportions",
    "farrington_manning_test": "proportions",
    "newcombe_difference": "proportions",
    "normal_p_value": "proportions",
    "pooled_z_test": "proportions",
    "wilson_interval": "proportions",
    "auroc": "roc",
    "hanley_mcneil": "roc",
    "jackknife_se": "resampling",
    "percentile_bootstrap_interval": "resampling",
    "t_quantile": "resampling",
    "round_half_up": "rounding",
    "round_half_up_array": "rounding",
    "round_half_up_shortest": "rounding",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prereg.stats' has no attribute {name!r}")
    return getattr(importlib.import_module(f"prereg.stats.{module}"), name)
