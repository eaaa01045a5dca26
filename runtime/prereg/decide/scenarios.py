"""A study's registered scenarios (``scenarios`` in the language): the true rate of each row.

A scenario's ``rates`` are tried in order and the first whose ``where`` filters all hold for a
row gives its rate (a rate without ``where`` holds for every row); filters name the split, a
factor or a row attribute. A scenario with ``effects`` is a family: at effect size ``d`` a
rate with coefficient ``effect`` is ``rate + effect·d``. ``coverage`` (default 1) is the share
of each cell's rows observed, rounded down; ``failed_attempt_rate`` (default 0) the chance that
a row's first attempt fails, after which a second one is drawn.

``clusters`` (with ``pairing`` its one-level case) registers dependence between rows: each
level adds a shared standard normal per cluster to a row's latent, weighted by the square root
of its intraclass correlation (:func:`cluster_latent`), or, for a ``beta`` level, draws each
cluster's chance of the outcome from a beta distribution (:func:`beta_chance`); ``ratings``
registers a true category
per item and each rater's confusion structure (:func:`rating_draws`). A scenario without an
outcome draws only numbers or ratings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prereg.errors import UserError
from prereg.rules import selection_matches


def registered(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(s["id"]): s for s in config.get("scenarios") or ()}


def scenario(config: Mapping[str, Any], sid: str, what: str = "--scenario") -> Mapping[str, Any]:
    found = registered(config)
    if sid not in found:
        raise UserError(
            f"{what}: unknown scenario {sid!r} (registered: {', '.join(found) or 'none'})"
        )
    return found[sid]


def selection(filters: Sequence[Mapping[str, Any]] | None) -> dict[str, tuple[str, ...]]:
    """A rate's ``where`` (level filters) as a selection ``{name: levels}``."""
    return {str(f["factor"]): tuple(str(v) for v in f["levels"]) for f in filters or ()}


def compiled_rates(sc: Mapping[str, Any]) -> list[tuple[dict[str, tuple[str, ...]], float, float]]:
    """``(selection, rate, effect coefficient)`` per rate, in order."""
    return [
        (selection(r.get("where")), float(r["rate"]), float(r.get("effect") or 0.0))
        for r in sc.get("rates") or ()
    ]


def outcome_values(scenario: Mapping[str, Any]) -> tuple[Any, Any]:
    """(the value written when a row's outcome does not hold, the value when it holds): the
    scenario's ``outcome_values`` (an outcome logged as 1 and 0, say), else false and true."""
    got = scenario.get("outcome_values")
    if got is None:
        return (False, True)
    return (got["otherwise"], got["holds"])


def draws_outcome(sc: Mapping[str, Any]) -> bool:
    """Whether the scenario draws an outcome (an outcome field, or a metric's chance); one
    that does not draws only numbers or ratings, and no row of it is right (a rate of 0)."""
    return sc.get("outcome") is not None or sc.get("metric") is not None


def confidence_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A calibration entry as a value entry: its confidence clipped into [0, 1] (its low and
    high within [0, 1]; a uniform confidence is drawn between them)."""
    low = entry.get("low")
    high = entry.get("high")
    return {
        **entry,
        "low": 0.0 if low is None else max(0.0, float(low)),
        "high": 1.0 if high is None else min(1.0, float(high)),
    }


def effects(sc: Mapping[str, Any]) -> tuple[float, ...]:
    """The effect sizes of a family, or ``()`` for a fixed scenario."""
    return tuple(float(e) for e in sc.get("effects") or ())


def rate_for(
    rates: Sequence[tuple[Mapping[str, tuple[str, ...]], float, float]],
    attributes: Mapping[str, str],
    effect: float = 0.0,
) -> float | None:
    """The true rate of a row with these attributes (None when no rate matches)."""
    for where, rate, coef in rates:
        if selection_matches(where, attributes):
            return rate + coef * effect if coef else rate
    return None


def coverage(sc: Mapping[str, Any]) -> float:
    return float(1.0 if sc.get("coverage") is None else sc["coverage"])


def failed_attempt_rate(sc: Mapping[str, Any]) -> float:
    return float(sc.get("failed_attempt_rate") or 0.0)


def kept_rows(rows: int, share: float) -> int:
    """Rows of a cell observed at coverage ``share``: rounded down (and exact for shares that
    are a whole number of rows, despite binary fractions)."""
    import math

    return min(int(rows), math.floor(share * int(rows) + 1e-9))


def fixed(sc: Mapping[str, Any], command: str) -> None:
    """Refuse a family where a command draws one fixed scenario."""
    if sc.get("effects"):
        raise UserError(
            f"{command}: scenario {sc['id']!r} is a family over effects ({', '.join(f'{e:g}' for e in effects(sc))}):"
            " diagnose runs it; simulate draws fixed scenarios only"
        )


def cluster_levels(sc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The scenario's cluster levels, outermost first: ``pairing`` is the one level
    ``{field, correlation}``, ``clusters`` the general case (compile refuses both at once)."""
    if sc.get("pairing") is not None:
        return [sc["pairing"]]
    return list(sc.get("clusters") or ())


def level_distribution(level: Mapping[str, Any]) -> str:
    """How a cluster level's chance of the outcome varies between its clusters: ``probit-normal``
    (the latent normal, the default) or ``beta``."""
    return str(level.get("distribution") or "probit-normal")


def beta_chance(rate, rho: float, u):
    """Each cluster's chance of the outcome under a ``beta`` level: the quantile at ``u`` of
    Beta(a, b) with mean ``rate`` and intraclass correlation ``rho`` = 1/(a + b + 1) (arrays
    alike); the rate itself where ``rho`` is 0 or the rate is 0 or 1."""
    import numpy as np
    from scipy.special import betaincinv

    r = np.asarray(rate, dtype=np.float64)
    if rho <= 0.0:
        return r.copy()
    s = 1.0 / float(rho) - 1.0
    inner = (r > 0.0) & (r < 1.0)
    out = r.copy()
    ri = r[inner]
    out[inner] = betaincinv(ri * s, (1.0 - ri) * s, np.asarray(u, dtype=np.float64)[inner])
    return out


def structured(sc: Mapping[str, Any]) -> bool:
    """Whether the scenario registers clusters or ratings (so its rows are laid out and drawn
    with their dependence, :mod:`prereg.engines.factorial.structure`)."""
    return bool(sc.get("clusters")) or sc.get("ratings") is not None


def cluster_latent(levels, rng, n: int):
    """Standard normal latents of ``n`` rows: ``levels`` is a sequence of ``(codes, count,
    rho)`` (each row's cluster code of a level, the level's number of clusters, its intraclass
    correlation); one normal per cluster is drawn for each level in order, then one per row,
    and z = Σ √ρₖ·wₖ[codeₖ] + √(1 − Σ ρₖ)·e."""
    import numpy as np

    z = np.zeros(n)
    total = 0.0
    for codes, count, rho in levels:
        w = rng.standard_normal(int(count))
        z += np.sqrt(float(rho)) * w[codes]
        total += float(rho)
    return z + np.sqrt(1.0 - total) * rng.standard_normal(n)


def cluster_sizes(size: Mapping[str, Any], total: int, rng) -> list[int]:
    """Sizes of consecutive clusters covering ``total`` rows, drawn from ``size`` (uniform
    whole numbers from low to high, or 1 + Poisson(mean − 1)); the last is cut short where the
    rows end. At most ``total`` draws are made, in one call."""
    import numpy as np

    if total <= 0:
        return []
    if size.get("mean") is not None:
        draws = 1 + rng.poisson(float(size["mean"]) - 1.0, total)
    else:
        draws = rng.integers(int(size["low"]), int(size["high"]) + 1, total)
    ends = np.cumsum(draws)
    k = int(np.searchsorted(ends, total)) + 1
    out = [int(x) for x in draws[:k]]
    out[-1] -= int(ends[k - 1]) - total
    return out


def confusion_matrix(entry: Mapping[str, Any], k: int):
    """The k × k confusion matrix of a ratings entry or rater entry: its ``confusion``, or
    ``accuracy`` on the diagonal and the rest spread evenly (None when it gives neither)."""
    import numpy as np

    if entry.get("confusion") is not None:
        return np.asarray([[float(x) for x in row] for row in entry["confusion"]])
    if entry.get("accuracy") is None:
        return None
    a = float(entry["accuracy"])
    if k == 1:
        return np.ones((1, 1))
    m = np.full((k, k), (1.0 - a) / (k - 1))
    np.fill_diagonal(m, a)
    return m


def rating_draws(
    ratings: Mapping[str, Any], item_codes, items: int, raters, rng, given=None, prevalence=None
):
    """(each item's true category, each row's label), as indices of the categories, under a
    ratings entry: the true category of each of ``items`` items drawn from the prevalence (one
    uniform per item, drawn also when ``given`` gives the items' true categories), then each
    row's label from its rater's confusion row at the item's true category (one uniform per
    row). ``raters`` holds each row's rater value (None: the scenario's own structure);
    ``prevalence``, an (items, k) array, each item's own chances (``prevalence_by``)."""
    import numpy as np

    k = len(ratings["categories"])
    if prevalence is None:
        prev = np.cumsum([float(x) for x in ratings["prevalence"]])
        truth = np.minimum(np.searchsorted(prev, rng.random(int(items)), side="right"), k - 1)
    else:
        prev = np.cumsum(np.asarray(prevalence, dtype=np.float64), axis=1)
        u = rng.random(int(items))
        truth = np.minimum((u[:, None] >= prev).sum(axis=1), k - 1)
    if given is not None:
        truth = np.asarray(given, dtype=np.int64)
    base = confusion_matrix(ratings, k)
    own = {str(r["value"]): confusion_matrix(r, k) for r in ratings.get("raters") or ()}
    mats = [base]
    which = np.zeros(len(raters), dtype=np.int64)
    index: dict[str, int] = {}
    for i, r in enumerate(raters):
        m = own.get(str(r)) if r is not None else None
        if m is None:
            continue
        j = index.get(str(r))
        if j is None:
            j = index[str(r)] = len(mats)
            mats.append(m)
        which[i] = j
    stack = np.cumsum(np.stack([np.eye(k) if m is None else m for m in mats]), axis=2)
    t = truth[np.asarray(item_codes, dtype=np.int64)]
    rows = stack[which, t]  # (n, k) cumulative chances of each label
    u = rng.random(len(raters))
    label = np.minimum((u[:, None] >= rows).sum(axis=1), k - 1)
    return truth, label


def item_prevalences(
    ratings: Mapping[str, Any], item_codes, items: int, cell_of_row, cells, scenario: str = ""
):
    """Each item's chances of the categories under ``prevalence_by`` (an (items, k) array), or
    None without it: the first entry whose ``where`` holds for the cells of the item's rows
    (``cell_of_row``, an index into ``cells`` per row), else ``prevalence``. An item whose rows
    lie in cells that different entries take is refused, naming it."""
    import numpy as np

    from prereg.decide.table import cell_attributes

    entries = list(ratings.get("prevalence_by") or ())
    if not entries:
        return None
    chances = [[float(x) for x in e["prevalence"]] for e in entries]
    chances.append([float(x) for x in ratings["prevalence"]])
    which_cell = []
    for cell in cells:
        attrs = cell_attributes(cell)
        found = next(
            (j for j, e in enumerate(entries) if selection_matches(selection(e["where"]), attrs)),
            len(entries),
        )
        which_cell.append(found)
    codes = np.asarray(item_codes, dtype=np.int64)
    per_row = np.asarray(which_cell, dtype=np.int64)[np.asarray(cell_of_row, dtype=np.int64)]
    per_item = np.full(int(items), -1, dtype=np.int64)
    for i, (code, j) in enumerate(zip(codes.tolist(), per_row.tolist(), strict=True)):
        if per_item[code] < 0:
            per_item[code] = j
        elif per_item[code] != j:
            raise UserError(
                f"scenario {scenario}: the rows of one item lie in cells that different"
                f" prevalence_by entries take (row {i}, cell"
                f" {cells[int(cell_of_row[i])]['id']}); an item's rows must take one prevalence"
            )
    per_item[per_item < 0] = len(entries)
    return np.asarray(chances, dtype=np.float64)[per_item]
