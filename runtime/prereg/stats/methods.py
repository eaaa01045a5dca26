"""The interval and test methods a spec can name, one registry for every engine.

A method is one function registered under ``(kind, name)``; ``name`` is what a spec writes
(``wilson``, ``farrington-manning``).  The kinds and the calling convention of their functions:

- ``proportion-interval``: ``fn(k, n, *, level) -> (lower, upper)``
- ``difference-interval``: ``fn(k1, n1, k2, n2, *, level) -> (estimate, lower, upper)`` for
  ``k1/n1 − k2/n2``
- ``two-proportion-test``: ``fn(k1, n1, k2, n2, *, alternative, margin) -> (z, p)``, where
  "greater" means H1: ``p1 − p2 > margin``, "less" H1: ``p1 − p2 < margin`` and "two-sided"
  H1: ``p1 − p2 ≠ margin``; :attr:`Method.alternatives` and :attr:`Method.margin` say what a
  test supports, and the test refuses anything else with :class:`MethodError`
- ``auroc-interval``: ``fn(area, n_pos, n_neg, *, level) -> (lower, upper)``
- ``sample-interval``: ``fn(x, *, level) -> (mean, lower, upper)`` for one sample of numbers (a
  paired contrast of a numeric metric applies it to the pairs' differences)
- ``sample-difference-interval``: ``fn(x, y, *, level) -> (difference, lower, upper)`` for
  ``mean(x) − mean(y)`` of two independent samples
- ``sample-test``: ``fn(x, y, *, alternative, margin) -> (t, p)`` for two independent samples
- ``paired-sample-test``: ``fn(d, *, alternative, margin, pairs=None) -> (t, p)`` for paired
  differences (``pairs``: the two samples a, b whose differences d are, for exactness)
- ``paired-difference-interval``: ``fn(n11, n10, n01, n00, *, level) -> (difference, lower,
  upper)`` for paired proportions (the four counts of the table of pairs)
- ``paired-proportion-test``: ``fn(n11, n10, n01, n00, *, alternative, margin) -> (stat, p)``
- ``resampling-interval``: ``fn(samples, statistic, *, level, resamples, seed, paired,
  arms=None) -> (lower, upper)``: an interval of any statistic of the samples (``arms``:
  groups of samples resampled together)

A test may also give the standard error its statistic divides by and the statistic's degrees
of freedom: :attr:`Method.se_df`, called with the test's data arguments and ``margin``
(``se_df(k1, n1, k2, n2, *, margin)``, ``se_df(x, y, *, margin)``, ``se_df(d, *, margin)``),
returns ``(se, df)`` (df NaN for a statistic referred to the standard normal; NaN both where
the test gives no statistic). A test without one (McNemar's exact test: a binomial count, no
standard error) has ``se_df`` None.

The proportion kinds broadcast numpy arrays (scalars in give floats out) and give NaN, without a
warning, where a count of trials is 0; the sample kinds take one sample (a 1-D array) at a time.

Nothing has a default: the level, the alternative and
the margin are the spec's choices.

Importing this module imports neither numpy nor scipy; each method imports its implementation
(:mod:`prereg.stats.proportions`, :mod:`prereg.stats.roc`) when first called, so listing the
methods (to check a spec, to write documentation) stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

KINDS = (
    "proportion-interval",
    "difference-interval",
    "two-proportion-test",
    "auroc-interval",
    "sample-interval",
    "sample-difference-interval",
    "sample-test",
    "paired-sample-test",
    "paired-difference-interval",
    "paired-proportion-test",
    "resampling-interval",
)
TEST_KINDS = ("two-proportion-test", "sample-test", "paired-sample-test", "paired-proportion-test")
INTERVAL_KINDS = tuple(k for k in KINDS if k not in TEST_KINDS)
ALTERNATIVES = ("two-sided", "greater", "less")

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class MethodError(ValueError):
    """An unknown kind or method, a clashing registration, or an option a method lacks."""


@dataclass(frozen=True)
class Method:
    name: str
    kind: str
    fn: Callable
    summary: str
    alternatives: tuple[str, ...] = ("two-sided",)
    margin: bool = False
    se_df: Callable | None = None


_REGISTRY: dict[str, dict[str, Method]] = {kind: {} for kind in KINDS}


def _kind(kind: str) -> dict[str, Method]:
    table = _REGISTRY.get(kind)
    if table is None:
        raise MethodError(f"unknown method kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return table


def register(
    kind: str,
    name: str,
    *,
    summary: str,
    alternatives: tuple[str, ...] = ("two-sided",),
    margin: bool = False,
):
    """Decorator: register the function as method ``name`` of ``kind`` and return it unchanged.

    ``alternatives`` and ``margin`` describe tests only.  A name already registered for the kind
    is refused, for any kind: a name means one method, so a spec's method names (and
    ``methods()``) need no kind to be read.
    """
    table = _kind(kind)
    if not isinstance(name, str) or not _NAME.match(name):
        raise MethodError(f"method name must be lower-case words joined by '-', got {name!r}")
    if not isinstance(summary, str) or not summary.strip() or "\n" in summary:
        raise MethodError(f"{kind} {name!r}: summary must be one non-empty line")
    alternatives = tuple(alternatives)
    if not alternatives or len(set(alternatives)) != len(alternatives):
        raise MethodError(f"{kind} {name!r}: alternatives must be distinct and non-empty")
    unknown = [a for a in alternatives if a not in ALTERNATIVES]
    if unknown:
        raise MethodError(
            f"{kind} {name!r}: unknown alternatives {unknown}; they are {', '.join(ALTERNATIVES)}"
        )
    if kind not in TEST_KINDS and (alternatives != ("two-sided",) or margin):
        raise MethodError(f"{kind} {name!r}: only tests take alternatives and a margin")

    def decorate(fn: Callable) -> Callable:
        for other, registered in _REGISTRY.items():
            if name in registered:
                raise MethodError(f"method {name!r} is already registered (as a {other})")
        table[name] = Method(name, kind, fn, summary, alternatives, bool(margin))
        return fn

    return decorate


def se_df_of(kind: str, name: str):
    """Decorator: give the registered test ``name`` of ``kind`` its ``se_df`` function (see the
    module notes) and return the function unchanged."""
    if kind not in TEST_KINDS:
        raise MethodError(f"{kind} {name!r}: only tests have a standard error and df")
    table = _kind(kind)

    def decorate(fn: Callable) -> Callable:
        from dataclasses import replace

        table[name] = replace(method(kind, name), se_df=fn)
        return fn

    return decorate


def method(kind: str, name: str) -> Method:
    """The method ``name`` of ``kind``; :class:`MethodError` names the registered ones if none."""
    table = _kind(kind)
    found = table.get(name)
    if found is None:
        known = ", ".join(table) or "none"
        raise MethodError(f"unknown {kind} method {name!r}; registered: {known}")
    return found


def methods(kind: str | None = None) -> dict[str, Method]:
    """The registered methods of ``kind`` (of every kind when None) by name, in registration
    order (kind by kind when None)."""
    if kind is not None:
        return dict(_kind(kind))
    return {name: m for table in _REGISTRY.values() for name, m in table.items()}


def _check_test(name: str, alternative: str, margin, kind: str = "two-proportion-test") -> None:
    """Refuse an alternative or a margin the registered test ``name`` does not support."""
    m = method(kind, name)
    if alternative not in m.alternatives:
        raise MethodError(
            f"{kind} {name!r}: alternative {alternative!r} is not supported; "
            f"it supports {', '.join(m.alternatives)}"
        )
    if not m.margin:
        import numpy as np

        given = np.asarray(margin, dtype=np.float64)
        if given.size and not np.all(given == 0):
            raise MethodError(
                f"{kind} {name!r} tests a difference of 0 only: margin must be 0, got {margin!r}"
            )


@register("proportion-interval", "wilson", summary="Wilson score interval for one proportion.")
def wilson(k, n, *, level):
    from prereg.stats.proportions import wilson_interval

    return wilson_interval(k, n, level=level)


@register(
    "proportion-interval",
    "clopper-pearson",
    summary="Clopper-Pearson exact (beta quantile) interval for one proportion.",
)
def clopper_pearson(k, n, *, level):
    from prereg.stats.proportions import clopper_pearson_interval

    return clopper_pearson_interval(k, n, level=level)


@register(
    "difference-interval",
    "newcombe-hybrid",
    summary="Newcombe hybrid-score interval for a difference of two independent proportions.",
)
def newcombe_hybrid(k1, n1, k2, n2, *, level):
    from prereg.stats.proportions import newcombe_difference

    return newcombe_difference(k1, n1, k2, n2, level=level)


@register(
    "two-proportion-test",
    "pooled-z",
    summary="Pooled two-proportion z test of equal proportions.",
    alternatives=ALTERNATIVES,
)
def pooled_z(k1, n1, k2, n2, *, alternative, margin):
    from prereg.stats.proportions import normal_p_value, pooled_z_test

    _check_test("pooled-z", alternative, margin)
    z, p = pooled_z_test(k1, n1, k2, n2)
    if alternative != "two-sided":
        p = normal_p_value(z, alternative)
    return z, p


@se_df_of("two-proportion-test", "pooled-z")
def pooled_z_se_df(k1, n1, k2, n2, *, margin):
    from prereg.stats.proportions import pooled_z_se

    return pooled_z_se(k1, n1, k2, n2), _normal_df(k1, n1, k2, n2)


def _normal_df(*args):
    """NaN, the df of a standard-normal statistic, in the shape of the broadcast arguments."""
    import numpy as np

    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    return float("nan") if shape == () else np.full(shape, np.nan)


@register(
    "two-proportion-test",
    "farrington-manning",
    summary="Farrington-Manning score test of a difference of two proportions against a margin.",
    alternatives=ALTERNATIVES,
    margin=True,
)
def farrington_manning(k1, n1, k2, n2, *, alternative, margin):
    from prereg.stats.proportions import farrington_manning_test

    _check_test("farrington-manning", alternative, margin)
    return farrington_manning_test(k1, n1, k2, n2, alternative=alternative, margin=margin)


@se_df_of("two-proportion-test", "farrington-manning")
def farrington_manning_se_df(k1, n1, k2, n2, *, margin):
    from prereg.stats.proportions import farrington_manning_se

    se = farrington_manning_se(k1, n1, k2, n2, margin=margin)
    return se, _normal_df(k1, n1, k2, n2, margin)


@register(
    "auroc-interval",
    "hanley-mcneil",
    summary="Hanley-McNeil interval for an AUROC, truncated to [0, 1].",
)
def hanley_mcneil(area, n_pos, n_neg, *, level):
    from prereg.stats.proportions import critical_z
    from prereg.stats.roc import hanley_mcneil as hm

    _, lo, hi = hm(area, n_pos, n_neg, z=critical_z(level=level))
    return lo, hi


@register("sample-interval", "t", summary="Student t interval for the mean of a sample.")
def t(x, *, level):
    from prereg.stats.samples import t_interval

    return t_interval(x, level=level)


@register(
    "sample-difference-interval",
    "welch",
    summary="Welch-Satterthwaite t interval for a difference of two independent means.",
)
def welch(x, y, *, level):
    from prereg.stats.samples import welch as welch_interval

    return welch_interval(x, y, level=level)


@register(
    "sample-test",
    "welch-t",
    summary="Welch t test of a difference of two independent means against a margin.",
    alternatives=ALTERNATIVES,
    margin=True,
)
def welch_t(x, y, *, alternative, margin):
    from prereg.stats.samples import welch_test

    _check_test("welch-t", alternative, margin, "sample-test")
    return welch_test(x, y, alternative=alternative, margin=margin)


@se_df_of("sample-test", "welch-t")
def welch_t_se_df(x, y, *, margin):
    from prereg.stats.samples import welch_se_df

    return welch_se_df(x, y)


@register(
    "paired-sample-test",
    "paired-t",
    summary="One-sample t test of the mean of paired differences against a margin.",
    alternatives=ALTERNATIVES,
    margin=True,
)
def paired_t(d, *, alternative, margin, pairs=None):
    from prereg.stats.samples import paired_t_test

    _check_test("paired-t", alternative, margin, "paired-sample-test")
    return paired_t_test(d, alternative=alternative, margin=margin, pairs=pairs)


@se_df_of("paired-sample-test", "paired-t")
def paired_t_se_df(d, *, margin, pairs=None):
    from prereg.stats.samples import paired_se_df

    return paired_se_df(d, pairs)


@register(
    "paired-difference-interval",
    "newcombe-paired",
    summary="Newcombe method 10 interval for a difference of paired proportions.",
)
def newcombe_paired(n11, n10, n01, n00, *, level):
    from prereg.stats.samples import newcombe_paired as m10

    return m10(n11, n10, n01, n00, level=level)


@register(
    "paired-proportion-test",
    "mcnemar-exact",
    summary="McNemar exact test of paired proportions (binomial on the discordant pairs).",
    alternatives=ALTERNATIVES,
)
def mcnemar_exact(n11, n10, n01, n00, *, alternative, margin):
    from prereg.stats.samples import mcnemar_exact as exact

    _check_test("mcnemar-exact", alternative, margin, "paired-proportion-test")
    b, c = int(n10), int(n01)
    return float(b - c), exact(n11, n10, n01, n00, alternative=alternative)


@register(
    "resampling-interval",
    "bootstrap",
    summary="Seeded percentile bootstrap interval (resampling rows, or pairs when paired).",
)
def bootstrap(samples, statistic, *, level, resamples, seed, paired, arms=None):
    from prereg.stats.samples import bootstrap_interval

    return bootstrap_interval(
        samples, statistic, level=level, resamples=resamples, seed=seed, paired=paired, arms=arms
    )
