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

Every function broadcasts numpy arrays (scalars in give floats out) and gives NaN, without a
warning, where a count of trials is 0.  Nothing has a default: the level, the alternative and
the margin are the spec's choices.

Importing this module imports neither numpy nor scipy; each method imports its implementation
(:mod:`prereg.stats.proportions`, :mod:`prereg.stats.roc`) when first called, so listing the
methods (to check a spec, to write documentation) stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

KINDS = ("proportion-interval", "difference-interval", "two-proportion-test", "auroc-interval")
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
    if kind != "two-proportion-test" and (alternatives != ("two-sided",) or margin):
        raise MethodError(f"{kind} {name!r}: only tests take alternatives and a margin")

    def decorate(fn: Callable) -> Callable:
        for other, registered in _REGISTRY.items():
            if name in registered:
                raise MethodError(f"method {name!r} is already registered (as a {other})")
        table[name] = Method(name, kind, fn, summary, alternatives, bool(margin))
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


def _check_test(name: str, alternative: str, margin) -> None:
    """Refuse an alternative or a margin the registered test ``name`` does not support."""
    m = method("two-proportion-test", name)
    if alternative not in m.alternatives:
        raise MethodError(
            f"two-proportion-test {name!r}: alternative {alternative!r} is not supported; "
            f"it supports {', '.join(m.alternatives)}"
        )
    if not m.margin:
        import numpy as np

        given = np.asarray(margin, dtype=np.float64)
        if given.size and not np.all(given == 0):
            raise MethodError(
                f"two-proportion-test {name!r} tests p1 - p2 = 0 only: margin must be 0, "
                f"got {margin!r}"
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
