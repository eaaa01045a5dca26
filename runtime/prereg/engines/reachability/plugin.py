"""The reachability-probe engine as registered under the entry-point group ``prereg.engines``."""

from prereg.engines.base import Engine

ENGINE = Engine(
    kind="reachability-probe",
    summary="Synthetic reachability items, text oracle, shortcut audit and scoring.",
    module="prereg.engines.reachability",
    reporter="prereg.reports.reachability:build",
)
