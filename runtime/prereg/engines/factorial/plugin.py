"""The factorial engine as registered under the entry-point group ``prereg.engines``."""

from prereg.engines.base import Engine

ENGINE = Engine(
    kind="factorial",
    summary="Any factorial study written in the scoring vocabulary: items, simulate, score, diagnose.",
    module="prereg.engines.factorial",
    schema="prereg.engines.factorial:constants.schema.json",
    checks="prereg.engines.factorial.spec_checks:checks",
    reporter="prereg.reports.factorial:build",
    standard_commands="prereg.engines.factorial.standard:commands",
    missing_commands="prereg.engines.factorial.standard:unavailable",
)
