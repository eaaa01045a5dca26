"""A win rate with its Wilson score interval and the one-sided score test against a null rate.

The study's own statistic (registered under `statistics` in spec/studies/win-rate.yaml): prereg
calls ``win_rate(k, n, level=..., null_rate=...)`` with the wins ``k`` and the judged comparisons
``n`` of the analysis' selection (shape ``binomial``).

- estimate: k / n, returned as an exact fraction, so a threshold on it is decided exactly;
- lower, upper: Wilson (1927) score interval at ``level`` (two-sided),
  (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = Phi^-1(1 - (1-level)/2);
- statistic, p: the score test of H0 rate = ``null_rate`` against rate > ``null_rate``,
  z = (p - null_rate) / sqrt(null_rate (1 - null_rate) / n), P = 1 - Phi(z);
- se: the standard error under the null, sqrt(null_rate (1 - null_rate) / n).
"""

import math
from fractions import Fraction
from statistics import NormalDist


def win_rate(k, n, *, level, null_rate):
    if n <= 0:
        raise ValueError("no judged comparison in the selection")
    if not 0 < level < 1 or not 0 < null_rate < 1:
        raise ValueError(
            f"level {level} and null_rate {null_rate} must lie strictly between 0 and 1"
        )
    rate = Fraction(int(k), int(n))
    p = float(rate)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    se0 = math.sqrt(null_rate * (1 - null_rate) / n)
    stat = (p - null_rate) / se0
    return {
        "estimate": rate,
        "se": se0,
        "statistic": stat,
        "statistic_name": "z",
        "lower": (centre - half) / scale,
        "upper": (centre + half) / scale,
        "p": 0.5 * math.erfc(stat / math.sqrt(2)),
        "counts": {"wins": int(k), "comparisons": int(n)},
    }
