"""The reachability-probe engine as registered under the entry-point group ``prereg.engines``."""

from prereg.engines.base import Engine

ENGINE = Engine(
    kind="reachability-probe",
    summary="Synthetic reachability items, text oracle, shortcut audit and scoring.",
    module="prereg.engines.reachability",
    schema="prereg.engines.reachability:constants.schema.json",
    checks="prereg.engines.reachability.spec_checks:checks",
    reporter="prereg.reports.reachability:build",
    # the gold label, and the counted P(yes) through the registered calibrator (.scoring)
    row_fields=("gold", "calibratedPYes", "calibratedConfidence"),
)
