"""One comparison for every registered threshold: ``figure op threshold``, decided exactly.

Every rule, gate, claim and decision compares a figure with a threshold through
:func:`compare`; no engine compares a float with a threshold on its own.  The threshold is the
decimal written in the spec (``0.9`` is exactly 9/10).  The figure is one of:

- an ``int`` or a :class:`~fractions.Fraction`: a figure rational in the data (a proportion
  k/n, a difference of proportions, an AUROC, a count, an exact test's P value) is compared
  exactly;
- a :class:`Certified` figure: its float value, an error bound on that float, and a way to
  obtain the exact value (``exact``: a Fraction, for figures rational in decimal data such as
  a mean or an ECE) or an enclosing ball at any precision (``ball``: an arb ball of
  python-flint, for logs, geometric means, square roots and P values).  The float decides
  when it is farther from the threshold than its error bound (the fast path, as robust
  geometric predicates filter in floating point); otherwise the exact value decides, or balls
  of rising precision (64 to 4096 bits) until the ball lies on one side;
- a plain ``float``: the shortest decimal that reads back as it (what SCORE.json shows; an
  engine figure with no certified form, deterministic but with no guarantee that the float is
  the true value);
- ``None`` or NaN: a missing figure, for which every comparison is false.

Ties follow one convention: a figure equal to its threshold meets ``le``, ``ge`` and ``eq``
and fails ``lt`` and ``gt``.  A certified figure whose ball still contains the threshold at
4096 bits (2^-4096 relative) is taken to equal it: no registered decision turns on a
difference that small, and only a true tie gets there.

A certified figure that balls decide keeps what they found (``decided``: each threshold, the
sign and the ball's bounds); :func:`representative` gives from it a short decimal that lies
inside every deciding ball and so on the same side of every threshold as the true value: what
SCORE.json shows (``certified``) of a figure whose float may read on the other side.

``decimals`` rounds the figure half-up (``floor(x * 10**d + 1/2) / 10**d``) on its exact value
(or, for a ball, on the rounding that every point of the ball agrees on) before comparing:
2.675 rounds to 2.68, whatever binary float stores it.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

OPS = ("lt", "le", "gt", "ge", "eq", "ne")
PRECISIONS = (64, 128, 256, 512, 1024, 2048, 4096)
EPS = 2.0**-52


def threshold(value) -> Fraction:
    """A registered threshold as the decimal written in the spec (0.1 is exactly 1/10)."""
    if type(value) is float:  # the commonest; isinstance against Fraction (an ABC) is slow
        return _float_threshold(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise TypeError("a threshold is a number, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):  # an exact fraction as the spec writes it, "2/3"
        return exact_number(value)
    return _float_threshold(float(value))


@lru_cache(maxsize=1024)
def _float_threshold(value: float) -> Fraction:
    # a spec registers few thresholds and every rule of every simulated study reads them:
    # parsed once (a Fraction is immutable; 0.0 and -0.0, equal keys, are the same Fraction)
    return Fraction(repr(value))


#: an exact fraction as a spec writes one, "p/q" (as a JSON Schema pattern)
FRACTION_PATTERN = "^-?[0-9]+/[0-9]+$"
_FRACTION_WORD = re.compile(r"\A(-?)([0-9]+)/([0-9]+)\Z")
#: the most digits a side of a fraction word may have (Python reads no more as an int)
FRACTION_DIGITS = 4300
#: the largest magnitude of a number a spec writes: the largest finite double (a figure
#: computed from a larger coefficient has no float to report)
LARGEST = Fraction(sys.float_info.max)


def is_fraction_word(value) -> bool:
    """Whether ``value`` is an exact fraction as a spec writes one: a string ``"p/q"`` of
    whole numbers (``"1/3"``, ``"-2/3"``), ``q`` not 0, each of at most 4,300 digits, whose
    value a double holds (at most about 1.8e308 in magnitude; nothing else around it, not
    even a space or a line end)."""
    if not isinstance(value, str):
        return False
    m = _FRACTION_WORD.match(value)
    if m is None or max(len(m[2]), len(m[3])) > FRACTION_DIGITS:
        return False
    q = int(m[3])
    return q != 0 and abs(Fraction(int(m[2]), q)) <= LARGEST


def beyond_a_double(value) -> bool:
    """Whether ``value`` is a whole number or a fraction word too large for a double (a
    spec's number that no figure can be computed from)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > LARGEST
    if isinstance(value, str):
        m = _FRACTION_WORD.match(value)
        if m is None:
            return False
        if max(len(m[2]), len(m[3])) > FRACTION_DIGITS:
            return True
        q = int(m[3])
        return q != 0 and abs(Fraction(int(m[2]), q)) > LARGEST
    return False


def exact_number(value) -> Fraction:
    """A number a spec writes, exactly: a decimal as written (0.1 is 1/10), an integer, a
    Fraction, or an exact fraction written as the string ``"p/q"`` (``"1/3"``). Anything else
    raises ValueError."""
    if isinstance(value, str):
        if not is_fraction_word(value):
            raise ValueError(f"{value!r} is not an exact fraction p/q of whole numbers, q not 0")
        return Fraction(value)
    if isinstance(value, bool):
        raise ValueError("a number, not a boolean")
    return threshold(value)


def decimal_fraction(x: float) -> Fraction:
    """A number read from data as the shortest decimal that reads back as it (a JSON 0.1 is
    1/10): how data values enter exact figures."""
    return Fraction(repr(float(x)))


def _sign(cmp: int, op: str) -> bool:
    if op == "lt":
        return cmp < 0
    if op == "le":
        return cmp <= 0
    if op == "gt":
        return cmp > 0
    if op == "ge":
        return cmp >= 0
    if op == "eq":
        return cmp == 0
    if op == "ne":
        return cmp != 0
    raise ValueError(f"unknown comparison {op!r}; the comparisons are {', '.join(OPS)}")


def _cmp(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def round_half_up(x: Fraction, decimals: int) -> Fraction:
    """``x`` rounded half-up to ``decimals`` decimals, exactly."""
    scale = 10**decimals
    return Fraction(math.floor(x * scale + Fraction(1, 2)), scale)


class Certified:
    """A figure that is not (cheaply) a fraction: its float ``value`` with ``error``, a bound
    on ``|value - true value|`` (None: unknown), and ``exact()`` (the true value as a
    Fraction) or ``ball(prec)`` (an arb ball holding the true value, at ``prec`` bits).
    ``decided`` lists what balls decided of the figure: ``(t, decimals, sign, lo, hi)``, the
    threshold, the rounding, the sign found and the deciding ball's bounds (None for a tie:
    the ball still held ``t`` at the highest precision, and the figure is then ``t``).
    ``on_ball(figure)``, when set, is called after each such decision, so that a report that
    would decide from the figure's float (0.9000000000000001 for a ratio exactly 9/10, or just
    below it) can be given the threshold it ties or :func:`representative` instead."""

    __slots__ = ("value", "error", "exact", "ball", "on_ball", "decided")

    def __init__(
        self,
        value: float,
        *,
        error: float | None = None,
        exact: Callable[[], Fraction] | None = None,
        ball: Callable[[int], object] | None = None,
    ):
        if exact is None and ball is None:
            raise ValueError("a certified figure needs exact() or ball(prec)")
        self.value = float(value)
        self.error = error
        self.exact = exact
        self.ball = ball
        self.on_ball: Callable[[Certified], None] | None = None
        self.decided: list[tuple] = []

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"Certified({self.value!r}, error={self.error!r})"


def _missing(figure) -> bool:
    if figure is None:
        return True
    if isinstance(figure, float):
        return math.isnan(figure)
    if isinstance(figure, Certified):
        return math.isnan(figure.value)
    return False


def _arb_fraction(x) -> Fraction:
    """The exact value of an exact arb (a ball's bound) as a fraction."""
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def _bounds(b) -> tuple[Fraction, Fraction]:
    """An interval of fractions holding the arb ball ``b`` (its bounds taken at the highest
    precision, so that rounding them does not widen the interval)."""
    from flint import ctx

    saved = ctx.prec
    try:
        ctx.prec = PRECISIONS[-1]
        return _arb_fraction(b.lower()), _arb_fraction(b.upper())
    finally:
        ctx.prec = saved


def _ball_cmp(
    ball_of: Callable[[int], object], t: Fraction, decimals: int | None
) -> tuple[int, tuple[Fraction, Fraction] | None]:
    """Sign of (true value, rounded when asked) - t, from balls of rising precision; 0 when
    still undecided at the highest precision (the tie convention); with the bounds of the ball
    that decided, every point of which gives the same sign (None: no such ball, a tie or a
    rounding boundary)."""
    from flint import arb, ctx, fmpq

    saved = ctx.prec
    try:
        for prec in PRECISIONS:
            ctx.prec = prec
            b = ball_of(prec)
            if not isinstance(b, arb):
                b = arb(b)
            if not b.is_finite():
                if b.is_nan():
                    continue
                return (1 if b > 0 else -1), None
            if decimals is not None:
                scale = arb(10) ** decimals
                y = b * scale + arb(fmpq(1, 2))
                lo, hi = y.lower().floor(), y.upper().floor()
                if lo == hi:  # every point of the ball rounds to the same decimal
                    m = lo.unique_fmpz()
                    return _cmp(Fraction(int(m), 10**decimals), t), _bounds(b)
                continue
            tt = arb(fmpq(t.numerator, t.denominator))
            if b > tt:
                return 1, _bounds(b)
            if b < tt:
                return -1, _bounds(b)
            if b.is_exact() and b.mid() == tt.mid():
                return 0, None
        if decimals is not None:  # on a rounding boundary: it rounds up
            y = b * (arb(10) ** decimals) + arb(fmpq(1, 2))
            m = y.upper().floor().unique_fmpz()
            return _cmp(Fraction(int(m), 10**decimals), t), None
        return 0, None
    finally:
        ctx.prec = saved


def sign(figure, value, *, decimals: int | None = None) -> int | None:
    """The sign of ``figure - threshold`` (-1, 0, 1) decided exactly, or None when the figure
    is missing.  ``value`` is the registered threshold (a float as written, an int or a
    Fraction)."""
    if type(figure) is float:  # the commonest figure, decided before any isinstance
        if figure != figure:
            return None  # NaN: missing
        return _float_sign(figure, threshold(value), decimals)
    if _missing(figure):
        return None
    t = threshold(value)
    if isinstance(figure, bool):
        figure = int(figure)
    if isinstance(figure, (int, Fraction)):
        return _ratio_cmp(figure.numerator, figure.denominator, t, decimals)
    if isinstance(figure, Certified):
        v = figure.value
        if math.isinf(v) and figure.error is not None:
            return 1 if v > 0 else -1
        if figure.error is not None and decimals is None and math.isfinite(v):
            gap = v - float(t)
            # the float threshold is within half an ulp of t: widen the band by it
            band = figure.error + abs(float(t)) * EPS
            if gap > band:
                return 1
            if gap < -band:
                return -1
        if figure.exact is not None:
            x = Fraction(figure.exact())
            return _ratio_cmp(x.numerator, x.denominator, t, decimals)
        for seen in figure.decided:  # a rule, its counts and the report ask again
            if seen[0] == t and seen[1] == decimals:
                return seen[2]
        s, bounds = _ball_cmp(figure.ball, t, decimals)
        if bounds is not None or (s == 0 and decimals is None):
            lo, hi = bounds if bounds is not None else (None, None)
            figure.decided.append((t, decimals, s, lo, hi))
            if figure.on_ball is not None:
                figure.on_ball(figure)
        return s
    if isinstance(figure, float):
        return _float_sign(float(figure), t, decimals)
    raise TypeError(f"not a figure: {figure!r}")


def tie(figure: Certified) -> Fraction | None:
    """The threshold balls found a certified figure equal to (the tie convention), or None."""
    for t, decimals, s, _, _ in figure.decided:
        if s == 0 and decimals is None:
            return t
    return None


def abs_ball_decided(figure: Certified, absolute: Certified, ball) -> None:
    """Balls decided ``absolute`` (|figure|) against a threshold, the last of them holding
    |x| for ``ball``, a ball of the figure x itself: ``figure`` keeps that ball's bounds (every
    point of it has its |·| on the decided side, so :func:`representative` stays on the side
    the verdict took), or, for a tie |x| = t, the threshold with x's sign, and its ``on_ball``
    hook is told."""
    if not absolute.decided or ball is None:
        return
    t, decimals, s, lo, _ = absolute.decided[-1]
    if lo is not None:
        figure.decided.append((None, decimals, s, *_bounds(ball)))
    elif s == 0 and decimals is None:
        figure.decided.append((t if ball.mid() >= 0 else -t, None, 0, None, None))
    else:
        return
    if figure.on_ball is not None:
        figure.on_ball(figure)


def representative(figure: Certified) -> Fraction | None:
    """A decimal on the same side of every threshold balls decided ``figure`` against as its
    true value: the one of fewest digits inside every deciding ball (nearest the middle of
    their common part), the threshold itself for a tie; None when no ball decided it."""
    tied = tie(figure)
    if tied is not None:
        return tied
    found = [(lo, hi) for _, _, _, lo, hi in figure.decided if lo is not None]
    if not found:
        return None
    lo = max(x for x, _ in found)
    hi = min(x for _, x in found)
    if lo >= hi:  # a ball of radius 0 (or bounds that meet): the value itself
        return lo
    return shortest_between(lo, hi)


def shortest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The decimal of fewest digits strictly between ``lo`` < ``hi`` (of those, the nearest
    their middle)."""
    top = max(abs(math.floor(lo)), abs(math.ceil(hi)), 1)
    k = -len(str(top))  # digits after the point (negative: tens, hundreds ...)
    middle = (lo + hi) / 2
    while True:
        scale = Fraction(10) ** k
        first, last = math.floor(lo * scale) + 1, math.ceil(hi * scale) - 1
        if first <= last:
            n = min(max(round(middle * scale), first), last)
            return Fraction(n) / scale
        k += 1


def decimal_text(x: Fraction) -> str:
    """A fraction whose denominator divides a power of ten as its decimal, without an
    exponent (``-0.8999999999999999999``); any other fraction as ``p/q``."""
    den, twos, fives = x.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{x.numerator}/{x.denominator}"
    places = max(twos, fives)
    digits = str(abs(x.numerator) * 10**places // x.denominator).rjust(places + 1, "0")
    text = digits if places == 0 else f"{digits[:-places]}.{digits[-places:]}"
    return ("-" if x < 0 else "") + text


def _float_sign(figure: float, t: Fraction, decimals: int | None) -> int:
    """:func:`sign` of a float figure that is not NaN."""
    if math.isinf(figure):
        return 1 if figure > 0 else -1
    if decimals is None:
        # The figure stands for the shortest decimal that reads back as it, d; t reads as the
        # float nearest it, f. Rounding to the nearest float never reverses an order (d <= t
        # gives figure <= f), so a figure above f has d above t, one below f has d below t;
        # only a figure equal to f needs d itself.
        f = t.numerator / t.denominator  # correctly rounded, as float(t)
        if figure > f:
            return 1
        if figure < f:
            return -1
    # the shortest decimal that reads back as the figure, as a ratio (decimal_fraction's value,
    # without building a Fraction)
    num, den = Decimal(repr(figure)).as_integer_ratio()
    return _ratio_cmp(num, den, t, decimals)


def _ratio_cmp(num: int, den: int, t: Fraction, decimals: int | None) -> int:
    """The sign of ``num/den`` (``den`` > 0), rounded half-up to ``decimals`` when given, minus
    ``t``: :func:`round_half_up` and :func:`_cmp` in integers (a figure of every rule of every
    simulated study passes here; Fraction arithmetic made most of a comparison's time)."""
    if decimals is None:
        a, b = num * t.denominator, t.numerator * den
    elif type(decimals) is int and decimals >= 0:
        scale = 10**decimals
        # floor(num/den * scale + 1/2) = floor((2 num scale + den) / (2 den)), den > 0
        a = (2 * num * scale + den) // (2 * den) * t.denominator
        b = t.numerator * scale
    else:
        return _cmp(round_half_up(Fraction(num, den), decimals), t)
    return (a > b) - (a < b)


def compare(figure, op: str, value, *, decimals: int | None = None) -> bool:
    """Whether ``figure op threshold`` holds, decided exactly; a missing figure fails every
    comparison."""
    s = sign(figure, value, decimals=decimals)
    if s is None:
        return False
    return _sign(s, op)


def mean_certified(values, *, log: bool = False) -> Certified | float | None:
    """The mean of numbers read from data (a float array), certified: its float, a bound on
    the float's error, and the exact mean of the values as decimals (or, with ``log``, a ball
    of the mean of their natural logs)."""
    import numpy as np

    x = np.asarray(values, dtype=np.float64).reshape(-1)
    n = x.size
    if n == 0:
        return None
    if log:
        lx = np.log(x)
        m = float(lx.mean())
        # each log within 1 ulp-ish (|log x| eps), the sum within n eps sum|.|
        err = (n + 4) * EPS * float(np.abs(lx).mean()) + 4 * EPS * abs(m)
        return Certified(m, error=err, ball=lambda prec, x=x: _mean_log_ball(x))
    m = float(x.mean())
    err = (n + 4) * EPS * float(np.abs(x).mean())
    return Certified(m, error=err, exact=lambda x=x: _exact_mean(x))


def _grouped(x):
    """(distinct values, their counts) of a float array: exact figures sum each distinct value
    once, so data made of a few values (the usual tie) cost little however many rows."""
    import numpy as np

    values, counts = np.unique(x, return_counts=True)
    return values.tolist(), counts.tolist()


#: digits of the decimal context the exact sums run in (a square of the smallest subnormal beside
#: 1 needs about 700); a result that would need more raises
#: (``Inexact`` is trapped), so no sum is ever rounded
_DIGITS = 1500


def exact_decimals():
    """A decimal context in which every sum and product is exact or raises."""
    from decimal import Context, Inexact, Rounded

    return Context(prec=_DIGITS, traps=[Inexact, Rounded], Emax=10**6, Emin=-(10**6))


def decimal_sum(values, counts, square_less=None) -> Fraction:
    """Σ count · value over float values read as decimals (:func:`decimal_fraction`), or with
    ``square_less`` (integers) Σ count · (value − t)²: in the C decimal module, exact (a sum
    that would be rounded raises), a fraction at the end."""
    from decimal import Decimal, localcontext

    with localcontext(exact_decimals()):
        decs = list(map(Decimal, map(repr, map(float, values))))
        if square_less is not None:
            decs = [(d - t) * (d - t) for d, t in zip(decs, square_less, strict=True)]
        if any(c != 1 for c in counts):
            decs = [d * c if c != 1 else d for d, c in zip(decs, counts, strict=True)]
        total = sum(decs, Decimal(0))
    return Fraction(total)


def _exact_mean(x) -> Fraction:
    return decimal_sum(*_grouped(x)) / len(x)


def _mean_log_ball(x):
    from flint import arb, fmpq

    values, counts = _grouped(x)
    total = arb(0)
    for v, c in zip(values, counts, strict=True):
        f = decimal_fraction(v)
        total += arb(fmpq(f.numerator, f.denominator)).log() * c
    return total / len(x)


def exp_ball(inner: Callable[[int], object]) -> Callable[[int], object]:
    """The ball of exp(x) from a ball function of x."""
    return lambda prec: inner(prec).exp()


def difference_ball(a: Callable[[int], object], b: Callable[[int], object]):
    """The ball of a - b from two ball functions."""
    return lambda prec: a(prec) - b(prec)
