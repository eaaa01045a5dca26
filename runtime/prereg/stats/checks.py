"""Argument checks and distribution tails shared by the catalogue's family modules.

Every check raises :class:`prereg.stats.methods.MethodError` with a message naming the
argument and what it must be; nothing here has a statistical default.  The tails are
scipy.special's public ufuncs, imported inside the functions, so importing this module imports
neither scipy nor its special functions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from prereg.stats.methods import ALTERNATIVES, MethodError


def level(value, name: str = "level") -> float:
    """A level (or an alpha) strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise MethodError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    v = float(value)
    if not 0.0 < v < 1.0:
        raise MethodError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return v


def alternative(value, allowed: tuple[str, ...] = ALTERNATIVES) -> str:
    if value not in allowed:
        raise MethodError(f"alternative must be one of {', '.join(allowed)}, got {value!r}")
    return value


def choice(value, name: str, allowed: tuple) -> object:
    """``value`` if it is one of ``allowed`` (booleans compared as booleans)."""
    for a in allowed:
        if type(value) is type(a) and value == a:
            return value
    shown = ", ".join(repr(a) for a in allowed)
    raise MethodError(f"{name} must be one of {shown}, got {value!r}")


def number(value, name: str) -> float:
    """A finite number (a margin)."""
    if isinstance(value, bool) or not isinstance(
        value, int | float | Fraction | np.floating | np.integer
    ):
        raise MethodError(f"{name} must be a finite number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise MethodError(f"{name} must be a finite number, got {value!r}")
    return v


def sample(x, name: str) -> np.ndarray:
    """A 1-D float array of finite numbers (possibly empty)."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise MethodError(f"{name} must be a 1-d array of numbers ({e})") from None
    if a.ndim != 1:
        raise MethodError(f"{name} must be a 1-d array of numbers, got {a.ndim} dimensions")
    if not np.all(np.isfinite(a)):
        raise MethodError(f"{name} must hold finite numbers only (no NaN or infinity)")
    return a


def groups(gs, minimum: int = 2) -> list[np.ndarray]:
    """A list of at least ``minimum`` samples (each 1-d, finite)."""
    if isinstance(gs, np.ndarray) and gs.ndim != 2:
        raise MethodError("groups must be a list of 1-d arrays, one per group")
    try:
        out = [sample(g, f"groups[{i}]") for i, g in enumerate(gs)]
    except TypeError:
        raise MethodError("groups must be a list of 1-d arrays, one per group") from None
    if len(out) < minimum:
        raise MethodError(f"groups must hold at least {minimum} groups, got {len(out)}")
    return out


def counts(values, name: str) -> list[int]:
    """A 1-d sequence of non-negative whole numbers, as Python ints."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise MethodError(f"{name} must be a 1-d array of counts")
    out = []
    for i, v in enumerate(a.tolist()):
        if isinstance(v, bool) or not isinstance(v, int | float) or v != v or v < 0:
            raise MethodError(f"{name}[{i}] must be a non-negative whole number, got {v!r}")
        if isinstance(v, float):
            if not v.is_integer():
                raise MethodError(f"{name}[{i}] must be a whole number, got {v!r}")
            v = int(v)
        out.append(v)
    return out


def count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise MethodError(f"{name} must be a non-negative whole number, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v >= 0 and v.is_integer()):
        raise MethodError(f"{name} must be a non-negative whole number, got {value!r}")
    return int(value)


def binomial(k, n, names: tuple[str, str]) -> tuple[int, int]:
    ki, ni = count(k, names[0]), count(n, names[1])
    if ki > ni:
        raise MethodError(f"{names[0]} ({ki}) must not exceed {names[1]} ({ni})")
    return ki, ni


def integral(a: np.ndarray) -> bool:
    """Whether every value is a whole number small enough to sum exactly as a float64 would
    be converted (|x| < 2**53)."""
    return bool(a.size == 0 or (np.all(a == np.floor(a)) and np.max(np.abs(a)) < 2.0**53))


def exact_sum(a: np.ndarray) -> int:
    """The exact sum of whole-number values (see :func:`integral`)."""
    return sum(int(v) for v in a.tolist())


# -- distribution tails -------------------------------------------------------------------------


def _special(name: str):
    import scipy.special

    return getattr(scipy.special, name)


def normal_sf(z: float) -> float:
    """P(Z > z)."""
    import scipy.special

    return float(scipy.special.ndtr(-z))


def normal_p(z: float, alt: str) -> float:
    if alt == "two-sided":
        return min(1.0, 2.0 * normal_sf(abs(z)))
    if alt == "greater":
        return normal_sf(z)
    return normal_sf(-z)


def normal_quantile(p: float) -> float:
    return float(_special("ndtri")(p))


def bounds(estimate: float, se: float, alternative: str, level: float, quantile=None, to=None):
    """(lower, upper) of the interval a test inverts, ``estimate ± q·se``: two-sided at
    ``level`` for a two-sided alternative, else the one bound on the side the alternative
    claims (the other None). ``quantile`` is the reference distribution's (the normal's unless
    given: a t's, ``lambda q: t_quantile(q, df)``); ``to`` maps each bound from the scale it was
    found on (``math.exp`` of a log odds ratio, ``math.tanh`` of a Fisher z)."""
    quantile = quantile or normal_quantile
    to = to or (lambda v: v)
    a = 1.0 - level
    if alternative == "two-sided":
        half = quantile(1.0 - a / 2.0) * se
        return to(estimate - half), to(estimate + half)
    if alternative == "greater":
        return to(estimate - quantile(1.0 - a) * se), None
    return None, to(estimate + quantile(1.0 - a) * se)


def t_sf(t: float, df: float) -> float:
    """P(T > t), Student's t with ``df`` degrees of freedom."""
    return float(_special("stdtr")(df, -t))


def t_p(t: float, df: float, alt: str) -> float:
    if alt == "two-sided":
        return min(1.0, 2.0 * t_sf(abs(t), df))
    if alt == "greater":
        return t_sf(t, df)
    return t_sf(-t, df)


def t_quantile(p: float, df: float) -> float:
    return float(_special("stdtrit")(df, p))


def chi2_sf(x: float, df: float) -> float:
    return float(_special("chdtrc")(df, x))


def f_sf(f: float, df1: float, df2: float) -> float:
    return float(_special("fdtrc")(df1, df2, f))
