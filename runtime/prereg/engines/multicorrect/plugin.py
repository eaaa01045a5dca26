"""The multicorrect-scoring engine as registered under the entry-point group ``prereg.engines``."""

from prereg.engines.base import Engine

ENGINE = Engine(
    kind="multicorrect-scoring",
    summary="Multi-correct choice-list scoring with a validation-fitted threshold.",
    module="prereg.engines.multicorrect",
    schema="prereg.engines.multicorrect:constants.schema.json",
    checks="prereg.engines.multicorrect.spec_checks:checks",
    reporter="prereg.reports.multicorrect:build",
    api="prereg.engines.multicorrect.study_api:api",
    figures="prereg.engines.multicorrect.figures:reported",
    standard_commands="prereg.engines.multicorrect.standard:commands",
)
