"""The cluster-power-freeze engine as registered under the entry-point group ``prereg.engines``."""

from prereg.engines.base import Engine

ENGINE = Engine(
    kind="cluster-power-freeze",
    summary="Cluster power simulation and content-digest freeze manifests.",
    module="prereg.engines.clusterpower",
    schema="prereg.engines.clusterpower:constants.schema.json",
    checks="prereg.engines.clusterpower.spec_checks:checks",
    reporter="prereg.reports.clusterpower:build",
    figures="prereg.engines.clusterpower.figures:reported",
    standard_commands="prereg.engines.clusterpower.standard:commands",
)
