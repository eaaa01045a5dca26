"""Which interval and test methods fit which estimate or contrast.

A metric's kind says what its figure is: a share of rows (``coverage``, ``proportion``), a
mean of numbers (``mean``, or ``geometric_mean``, a mean on the log scale reported back as a
geometric mean, whose contrasts are ratios), or a figure of the whole selection (``ece``,
``auroc``). An estimate reads one selection; a contrast two, independent or paired (``pair_by``
names the field that pairs a row of arm a with the row of arm b for the same item).

``interval_kinds`` and ``test_kinds`` give the method kinds of :mod:`prereg.stats.methods`
that fit; the compiler refuses a registration whose method is of another kind, and the
runtime dispatches by the same table. ``none`` (no interval, or no test) always fits.
"""

from __future__ import annotations

PROPORTION = ("coverage", "proportion", "units")
SAMPLE = ("mean", "geometric_mean")
WHOLE = ("ece", "auroc")
METRIC_KINDS = PROPORTION + SAMPLE + WHOLE
RATIO = ("geometric_mean",)  # contrasts are ratios a / b; their margins are ratios (default 1)

NONE = "none"


def interval_kinds(metric_kind: str, role: str, paired: bool = False) -> tuple[str, ...]:
    """Method kinds of an interval of an ``estimate`` or a ``contrast`` of a metric kind."""
    if role == "estimate":
        if metric_kind in PROPORTION:
            return ("proportion-interval", "resampling-interval")
        if metric_kind in SAMPLE:
            return ("sample-interval", "resampling-interval")
        if metric_kind == "auroc":
            return ("auroc-interval", "resampling-interval")
        return ("resampling-interval",)
    if metric_kind in PROPORTION:
        if paired:
            return ("paired-difference-interval", "resampling-interval")
        return ("difference-interval", "resampling-interval")
    if metric_kind in SAMPLE:
        if paired:
            return ("sample-interval", "resampling-interval")
        return ("sample-difference-interval", "resampling-interval")
    return ("resampling-interval",)


def test_kinds(metric_kind: str, paired: bool = False) -> tuple[str, ...]:
    """Method kinds of a contrast's test."""
    if metric_kind in PROPORTION:
        return ("paired-proportion-test",) if paired else ("two-proportion-test",)
    if metric_kind in SAMPLE:
        return ("paired-sample-test",) if paired else ("sample-test",)
    return ()


def fitting(kinds: tuple[str, ...]) -> list[str]:
    """The registered method names of these kinds, in registration order."""
    from prereg.stats.methods import methods

    return [name for kind in kinds for name in methods(kind)]


def method_kind(name: str, kinds: tuple[str, ...]) -> str | None:
    """The kind among ``kinds`` under which ``name`` is registered (None when it is not)."""
    from prereg.stats.methods import methods

    for kind in kinds:
        if name in methods(kind):
            return kind
    return None
