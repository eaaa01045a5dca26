"""Statistical primitives that generated decision rules and engines call.

Each concern is a small module, re-exported here:

- proportions: Wilson interval, Newcombe hybrid-score difference interval, pooled z test
- multiplicity: Holm step-down adjusted P values (missing P values stay missing)
- roc: AUROC with ties counted half, Hanley-McNeil standard error and interval
- calibration: isotonic calibrator artifact, decile ECE, ten-bin ECE (first-bin exclusion)
- resampling: closed-form delete-one jackknife over many cohorts, t quantiles, bootstrap
- classification: balanced accuracy
- rounding: half-up rounding (binary and shortest-decimal)

No primitive has a statistical default that a spec did not choose: levels, z values, methods
and conventions are arguments.
"""

from prereg.stats.calibration import apply_isotonic, decile_ece, ece_ten_bin, fit_isotonic_blocks
from prereg.stats.classification import balanced_accuracy
from prereg.stats.multiplicity import holm_adjust
from prereg.stats.proportions import critical_z, newcombe_difference, pooled_z_test, wilson_interval
from prereg.stats.roc import auroc, hanley_mcneil
from prereg.stats.rounding import round_half_up, round_half_up_array, round_half_up_shortest

__all__ = [
    "apply_isotonic",
    "auroc",
    "balanced_accuracy",
    "critical_z",
    "decile_ece",
    "ece_ten_bin",
    "fit_isotonic_blocks",
    "hanley_mcneil",
    "holm_adjust",
    "newcombe_difference",
    "pooled_z_test",
    "round_half_up",
    "round_half_up_array",
    "round_half_up_shortest",
    "wilson_interval",
]
