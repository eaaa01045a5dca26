"""The one shape every method of the catalogue returns.

A method of :mod:`prereg.stats` (one module per family: ``two_proportions``, ``paired``,
``ordered``, ``continuous``, ``agreement``, ``equivalence``, ``clustered``, ``estimators``,
``multiplicity``) is a pure function over counts or unit columns whose every statistical choice
(level, alternative, margin, correction, scores, weights) is a keyword argument without a
default. It returns a :class:`Result`: the figures a registration may read and a reviewer needs
to recompute it, at full precision.

- ``estimate``: the method's point estimate (a difference, a ratio, kappa, a mean, pass@k ...)
- ``se``: the standard error the method uses (None when it has none)
- ``statistic`` and ``statistic_name``: the test statistic (``z``, ``t``, ``chi2``, ``F``,
  ``H``, ``Q``, ``W``, ``U`` ...), None for a method that only estimates
- ``statistic_count``: the statistic is a count (binomial-test's ``k``, the sign test's
  ``above``, McNemar's ``n10``): a whole number, written to SCORE.json as an integer, so
  that every report prints it without decimals (``k = 60``, not ``k = 60.0000``)
- ``df``: degrees of freedom (a number, or a pair for F), None when not applicable
- ``lower``, ``upper``: the interval bounds at the registered level (None without one)
- ``p``: the P value under the registered alternative (None without a test)
- ``exact``: the exact rational value of a figure where the data make one
  (``{"estimate": Fraction(7, 20)}``), which the certified comparison decides with
- ``counts``: the integer counts behind the figures (``k``, ``n``, discordant pairs, per-group
  counts ...), so that SCORE.json can show what a reader needs to recompute
- ``extra``: further method-specific figures (per-bin tables, per-stratum odds ratios ...)

A figure that cannot be computed (an empty arm, a zero variance) is None, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction


def _clean(x):
    """A float, or None for None and NaN (infinities are kept: a ratio with a zero arm)."""
    if x is None:
        return None
    if isinstance(x, Fraction):
        return float(x)
    x = float(x)
    return None if math.isnan(x) else x


@dataclass(frozen=True)
class Result:
    method: str
    estimate: float | None = None
    se: float | None = None
    statistic: float | None = None
    statistic_name: str | None = None
    statistic_count: bool = False
    df: float | tuple[float, float] | None = None
    lower: float | None = None
    upper: float | None = None
    p: float | None = None
    exact: Mapping[str, Fraction] = field(default_factory=dict)
    counts: Mapping[str, object] = field(default_factory=dict)
    extra: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("estimate", "se", "statistic", "lower", "upper", "p"):
            object.__setattr__(self, name, _clean(getattr(self, name)))
        df = self.df
        if isinstance(df, tuple):
            object.__setattr__(self, "df", tuple(_clean(d) for d in df))
        else:
            object.__setattr__(self, "df", _clean(df))
        if self.statistic_count and self.statistic is not None:
            if not float(self.statistic).is_integer():
                raise ValueError(
                    f"{self.method}: a count statistic {self.statistic!r} is not whole"
                )

    def as_dict(self) -> dict:
        """The figures as JSON-ready values (floats at full precision; exact values as
        ``"p/q"`` strings; None where a figure does not exist; an infinite figure (a ratio
        with an empty arm) is None and listed in ``infinite`` with its sign)."""
        out: dict = {"method": self.method}
        infinite: list[str] = []
        for name in ("estimate", "se", "statistic", "statistic_name", "df", "lower", "upper", "p"):
            value = getattr(self, name)
            if name == "statistic_name":  # JSON keys are camelCase, as in every output
                name = "statisticName"
            if isinstance(value, float) and math.isinf(value):
                # JSON has no infinity: the figure is null and named here with its sign
                infinite.append(("+" if value > 0 else "-") + name)
                value = None
            if name == "statistic" and self.statistic_count and value is not None:
                value = int(value)  # a count: an integer in JSON, printed without decimals
            out[name] = list(value) if isinstance(value, tuple) else value
        if infinite:
            out["infinite"] = infinite
        if self.exact:
            out["exact"] = {k: f"{v.numerator}/{v.denominator}" for k, v in self.exact.items()}
        if self.counts:
            out["counts"] = dict(self.counts)
        if self.extra:
            out["extra"] = dict(self.extra)
        return out
