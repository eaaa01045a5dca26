"""Multiplicity adjustments.

- :func:`holm_adjust` -- Holm step-down (d17-multifact, "Scoring"): sort the P values
  ascending, ``adjusted_k = running max of min(1, (m − k)·p_(k))`` for k = 0, 1, …, where ``m``
  counts only the non-missing P values; a missing P value (None or NaN) stays missing at its
  position.

The catalogue's procedures (below :func:`holm_adjust_rows`; family "multiplicity", input shape
``p-values``) each take an explicit ``missing`` policy for missing P values (None or NaN):

- ``refuse``: a missing P value is an error (:class:`MethodError` naming its position)
- ``exclude``: the procedure runs over the present P values only (m counts them); a missing
  one gets no adjusted value and is not rejected; ``counts["excluded"]`` says how many
- ``as-one``: a missing P value is taken as 1 (counted in m, never rejected)

They compute every adjusted P value in exact rational arithmetic over the floats given (each P
value, alpha and graph weight is taken at its exact value; a P value given as a Fraction, an
exact test's, as that fraction), report the nearest floats in
``extra["adjusted"]`` and decide each rejection exactly (adjusted ≤ alpha). Procedures:
Bonferroni, Holm, Hochberg, Hommel, Benjamini–Hochberg, Benjamini–Yekutieli, fixed-sequence
testing, serial gatekeeping over ordered families and the graphical procedure of Bretz et al.
(2009).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result


def _p_values(p) -> np.ndarray:
    if isinstance(p, np.ndarray) and p.dtype.kind == "f":
        out = p.astype(np.float64).reshape(-1)
    else:
        raw = np.asarray(p, dtype=object).reshape(-1)
        out = np.empty(raw.size, dtype=np.float64)
        for i, v in enumerate(raw):
            if v is None:
                out[i] = np.nan
                continue
            if isinstance(v, (bool, np.bool_)):
                raise ValueError(f"P value at position {i} is a boolean, not a number")
            out[i] = float(v)
    present = ~np.isnan(out)
    if np.any((out[present] < 0) | (out[present] > 1)):
        raise ValueError("every P value must be missing or lie in [0, 1]")
    return out


def holm_adjust(p) -> np.ndarray:
    """Holm-adjusted P values, aligned with ``p`` (a 1-d sequence; None or NaN = missing).

    Ties are ordered stably (by position); tied P values receive the same adjusted value in any
    order, because the running maximum carries the first one's value forward.
    """
    values = _p_values(p)
    adjusted = np.full(values.size, np.nan)
    present = np.flatnonzero(~np.isnan(values))
    m = present.size
    if m == 0:
        return adjusted
    order = present[np.argsort(values[present], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * values[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def holm_adjust_rows(p) -> np.ndarray:
    """:func:`holm_adjust` of each row of a 2-d float array (NaN = missing), at once.

    Row by row the same operations on the same values: the present P values sorted stably
    (NaN sorts last, so the present ones keep their order), scaled by ``m − k`` with ``m`` the
    row's count of present values, and carried forward by the running maximum.
    """
    values = np.array(p, dtype=np.float64, ndmin=2)
    if values.ndim != 2:
        raise ValueError("P values must be a 2-d array, one row per set")
    present = ~np.isnan(values)
    if np.any((values[present] < 0) | (values[present] > 1)):
        raise ValueError("every P value must be missing or lie in [0, 1]")
    rows, width = values.shape
    adjusted = np.full(values.shape, np.nan)
    if values.size == 0:
        return adjusted
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    m = present.sum(axis=1, dtype=np.int64)[:, None]
    rank = np.arange(width, dtype=np.int64)[None, :]
    scaled = np.minimum(1.0, (m - rank) * ordered)
    carried = np.maximum.accumulate(scaled, axis=1)
    np.put_along_axis(adjusted, order, np.where(rank < m, carried, np.nan), axis=1)
    return adjusted


# ---------------------------------------------------------------------------------------------
# the catalogue's procedures, with an explicit policy for missing P values

MISSING = ("refuse", "exclude", "as-one")
ADJUSTMENTS = (
    "bonferroni",
    "holm",
    "hochberg",
    "hommel",
    "benjamini-hochberg",
    "benjamini-yekutieli",
)
WITHIN_FAMILY = ("bonferroni", "holm", "hochberg", "hommel")


def _policy(missing) -> str:
    if not isinstance(missing, str) or missing not in MISSING:
        raise MethodError(f"missing must be one of {', '.join(MISSING)}, got {missing!r}")
    return missing


def _alpha(alpha) -> Fraction:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, Fraction)):
        raise MethodError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    a = Fraction(alpha)
    if not (0 < a < 1):
        raise MethodError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return a


def _read_p(p, missing: str) -> tuple[list[Fraction | None], int]:
    """The P values as exact fractions (None where missing under ``exclude``) and the number
    of missing ones; a P value given as a Fraction (an exact test's) is kept as it is."""
    try:
        values = _p_values(p)
    except ValueError as e:
        raise MethodError(str(e)) from None
    given = [] if isinstance(p, np.ndarray) and p.dtype.kind == "f" else list(np.ravel(p))
    out: list[Fraction | None] = []
    n_missing = 0
    for i, v in enumerate(values.tolist()):
        if v != v:  # NaN
            n_missing += 1
            if missing == "refuse":
                raise MethodError(
                    f"P value at position {i} is missing and the registered policy is "
                    f"missing: refuse"
                )
            out.append(Fraction(1) if missing == "as-one" else None)
        elif given and isinstance(given[i], Fraction):
            out.append(given[i])
        else:
            out.append(Fraction(v))
    return out, n_missing


def _exact_adjust(values: list[Fraction], method: str) -> list[Fraction]:
    """Adjusted P values of ``values`` (all present), aligned with them, exactly."""
    m = len(values)
    if m == 0:
        return []
    order = sorted(range(m), key=lambda i: values[i])  # stable: ties by position
    ps = [values[i] for i in order]
    one = Fraction(1)
    if method == "bonferroni":
        adj_sorted = [min(one, m * v) for v in ps]
    elif method == "holm":
        adj_sorted, run = [], Fraction(0)
        for k, v in enumerate(ps):
            run = max(run, min(one, (m - k) * v))
            adj_sorted.append(run)
    elif method in ("hochberg", "benjamini-hochberg", "benjamini-yekutieli"):
        if method == "hochberg":
            factors = [Fraction(m - k) for k in range(m)]
        else:
            c = sum((Fraction(1, i) for i in range(1, m + 1)), Fraction(0))
            c = c if method == "benjamini-yekutieli" else one
            factors = [Fraction(m, k + 1) * c for k in range(m)]
        adj_sorted = [one] * m
        run = one
        for k in range(m - 1, -1, -1):
            run = min(run, factors[k] * ps[k])
            adj_sorted[k] = run
    elif method == "hommel":
        adj_sorted = _hommel_sorted(ps)
    else:  # pragma: no cover - guarded by the callers
        raise MethodError(f"unknown adjustment {method!r}")
    out = [one] * m
    for k, i in enumerate(order):
        out[i] = adj_sorted[k]
    return out


def _hommel_sorted(ps: list[Fraction]) -> list[Fraction]:
    """Hommel's adjusted P values of ascending ``ps`` (the algorithm of Wright 1992, as R's
    p.adjust writes it; for m = 2 Hommel's procedure is Hochberg's)."""
    n = len(ps)
    if n == 1:
        return [min(Fraction(1), ps[0])]
    if n == 2:
        return [min(max(ps[0], ps[1]), 2 * ps[0]), ps[1]]
    start = min(n * ps[i] / (i + 1) for i in range(n))
    q = [start] * n
    pa = [start] * n
    for m in range(n - 1, 1, -1):
        # i1: the first n − m + 1 positions; i2: the rest
        q1 = min(m * ps[j] / (j - (n - m) + 1) for j in range(n - m + 1, n))
        for j in range(n - m + 1):
            q[j] = min(m * ps[j], q1)
        for j in range(n - m + 1, n):
            q[j] = q[n - m]
        pa = [max(a, b) for a, b in zip(pa, q, strict=True)]
    return [min(Fraction(1), max(a, v)) for a, v in zip(pa, ps, strict=True)]


def _result(
    method: str,
    read: list[Fraction | None],
    adjusted: list[Fraction | None],
    alpha: Fraction,
    n_missing: int,
    missing: str,
    extra=None,
) -> Result:
    rejected = [a is not None and a <= alpha for a in adjusted]
    exact = {f"adjusted[{i}]": a for i, a in enumerate(adjusted) if isinstance(a, Fraction)}
    counts = {
        "m": len(read),
        "tested": sum(v is not None for v in read),
        "missing": n_missing,
        "excluded": n_missing if missing == "exclude" else 0,
        "rejected": sum(rejected),
    }
    out_extra = {
        "adjusted": [None if a is None else float(a) for a in adjusted],
        "rejected": rejected,
        "alpha": float(alpha),
        "missing_policy": missing,
    }
    out_extra.update(extra or {})
    return Result(method=method, exact=exact, counts=counts, extra=out_extra)


# Hommel's algorithm is O(m²); above this many P values it runs in floats (numpy) and only a
# decision within the floats' error bound of alpha is recomputed exactly
HOMMEL_EXACT_MAX = 300
_U = 2.0**-53  # the unit roundoff of float64


def _hommel_float(ps: np.ndarray) -> np.ndarray:
    """:func:`_hommel_sorted` in floats over ascending ``ps``: every figure is a product m·p/k
    rounded twice, and min / max keep relative error bounds, so each value is within a
    relative 2u (plus u²) of the exact one."""
    n = ps.size
    q = np.full(n, np.min(n * ps / np.arange(1, n + 1)))
    pa = q.copy()
    for m in range(n - 1, 1, -1):
        q1 = np.min(m * ps[n - m + 1 :] / np.arange(2, m + 1))
        q[: n - m + 1] = np.minimum(m * ps[: n - m + 1], q1)
        q[n - m + 1 :] = q[n - m]
        pa = np.maximum(pa, q)
    return np.minimum(1.0, np.maximum(pa, ps))


def _present_adjust(read: list, method: str, alpha: Fraction | None = None) -> list:
    present = [i for i, v in enumerate(read) if v is not None]
    values = [read[i] for i in present]
    adj: list = []
    if method == "hommel" and len(values) > HOMMEL_EXACT_MAX:
        order = sorted(range(len(values)), key=lambda i: values[i])
        floats = _hommel_float(np.array([float(values[i]) for i in order]))
        adj = [0.0] * len(values)
        for k, i in enumerate(order):
            adj[i] = float(floats[k])
        if alpha is not None:
            a = float(alpha)
            if any(abs(v - a) <= 4 * _U * max(v, a) for v in adj):
                adj = []  # a decision too close to call in floats: the exact algorithm
    if not adj and values:
        adj = _exact_adjust(values, method)
    out: list = [None] * len(read)
    for i, a in zip(present, adj, strict=True):
        out[i] = a
    return out


def adjust_p_values(p, *, method, missing) -> np.ndarray:
    """Adjusted P values (floats, NaN where a missing one is excluded), aligned with ``p``."""
    if not isinstance(method, str) or method not in ADJUSTMENTS:
        raise MethodError(f"method must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")
    read, _ = _read_p(p, _policy(missing))
    adj = _present_adjust(read, method)
    return np.array([np.nan if a is None else float(a) for a in adj], dtype=np.float64)


def adjusted_fractions(p, *, method, missing) -> list[Fraction | None]:
    """:func:`adjust_p_values` as exact fractions (None where a missing one is excluded); a P
    value given as a Fraction is taken as that fraction."""
    if not isinstance(method, str) or method not in ADJUSTMENTS:
        raise MethodError(f"method must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")
    read, _ = _read_p(p, _policy(missing))
    return [None if a is None else Fraction(a) for a in _present_adjust(read, method)]


def _adjustment(method: str):
    def run(p, *, alpha, missing) -> Result:
        policy = _policy(missing)
        a = _alpha(alpha)
        read, n_missing = _read_p(p, policy)
        adjusted = _present_adjust(read, method, a)
        return _result(method, read, adjusted, a, n_missing, policy)

    return run


def bonferroni(p, *, alpha, missing) -> Result:
    """Bonferroni: adjusted p = min(1, m·p)."""
    return _adjustment("bonferroni")(p, alpha=alpha, missing=missing)


def holm(p, *, alpha, missing) -> Result:
    """Holm (1979) step-down: the running maximum of min(1, (m − k + 1)·p_(k))."""
    return _adjustment("holm")(p, alpha=alpha, missing=missing)


def hochberg(p, *, alpha, missing) -> Result:
    """Hochberg (1988) step-up: the running minimum from the top of (m − k + 1)·p_(k)."""
    return _adjustment("hochberg")(p, alpha=alpha, missing=missing)


def hommel(p, *, alpha, missing) -> Result:
    """Hommel (1988): closed testing with Simes tests, by Wright's (1992) algorithm."""
    return _adjustment("hommel")(p, alpha=alpha, missing=missing)


def benjamini_hochberg(p, *, alpha, missing) -> Result:
    """Benjamini–Hochberg (1995) false discovery rate: min over j ≥ k of m·p_(j)/j."""
    return _adjustment("benjamini-hochberg")(p, alpha=alpha, missing=missing)


def benjamini_yekutieli(p, *, alpha, missing) -> Result:
    """Benjamini–Yekutieli (2001): Benjamini–Hochberg times c(m) = Σ_{i ≤ m} 1/i."""
    return _adjustment("benjamini-yekutieli")(p, alpha=alpha, missing=missing)


def fixed_sequence(p, *, alpha, missing) -> Result:
    """Fixed-sequence testing in the registered order: each hypothesis at the full alpha,
    testing stops at the first one not rejected; adjusted p_i = max_{j ≤ i} p_j.

    ``exclude`` takes a missing P value out of the sequence; ``as-one`` stops the sequence at
    it.
    """
    policy = _policy(missing)
    a = _alpha(alpha)
    read, n_missing = _read_p(p, policy)
    adjusted: list[Fraction | None] = []
    run = Fraction(0)
    for v in read:
        if v is None:
            adjusted.append(None)
            continue
        run = max(run, v)
        adjusted.append(run)
    return _result("fixed-sequence", read, adjusted, a, n_missing, policy)


def _families(families, m: int) -> list[range]:
    if isinstance(families, (str, bytes)) or not hasattr(families, "__iter__"):
        raise MethodError(f"families must be a list of family sizes, got {families!r}")
    sizes = list(families)
    for i, s in enumerate(sizes):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise MethodError(f"families[{i}] must be a positive whole number, got {s!r}")
    if sum(sizes) != m:
        raise MethodError(
            f"the family sizes {sizes} add up to {sum(sizes)}, but there are {m} P values"
        )
    out, start = [], 0
    for s in sizes:
        out.append(range(start, start + int(s)))
        start += int(s)
    return out


def serial_gatekeeping(p, *, families, within, alpha, missing) -> Result:
    """Serial gatekeeping over ordered families: family f is tested (at the full alpha, by the
    registered within-family procedure) only when every hypothesis of the families before it
    is rejected. Adjusted p = max(its within-family adjusted p, every adjusted p of the
    earlier families).

    ``families`` lists the sizes of consecutive families of ``p`` in order. Under ``exclude`` a
    family whose P values are all missing is passed over (it holds nothing to reject).
    """
    policy = _policy(missing)
    if not isinstance(within, str) or within not in WITHIN_FAMILY:
        raise MethodError(f"within must be one of {', '.join(WITHIN_FAMILY)}, got {within!r}")
    a = _alpha(alpha)
    read, n_missing = _read_p(p, policy)
    groups = _families(families, len(read))
    adjusted: list[Fraction | None] = [None] * len(read)
    gate = Fraction(0)
    for g in groups:
        local = _present_adjust([read[i] for i in g], within, a)
        for i, v in zip(g, local, strict=True):
            if v is not None:
                adjusted[i] = max(v, gate)
        present = [adjusted[i] for i in g if adjusted[i] is not None]
        if present:
            gate = max(gate, max(present))
    return _result(
        "serial-gatekeeping",
        read,
        adjusted,
        a,
        n_missing,
        policy,
        extra={"families": [len(g) for g in groups], "within": within},
    )


def _graph_number(v, where: str) -> Fraction:
    if isinstance(v, bool):
        raise MethodError(f"{where} must be a number, got {v!r}")
    try:
        out = Fraction(v) if not isinstance(v, float) else Fraction(v)
    except (TypeError, ValueError, ZeroDivisionError):
        raise MethodError(f"{where} must be a number or a fraction like '1/3', got {v!r}") from None
    if out < 0 or out > 1:
        raise MethodError(f"{where} must lie in [0, 1], got {v!r}")
    return out


def _graph(weights, transitions, m: int) -> tuple[list[Fraction], list[list[Fraction]]]:
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__iter__"):
        raise MethodError("weights must be a list of numbers, one per hypothesis")
    w = [_graph_number(v, f"weights[{i}]") for i, v in enumerate(weights)]
    if len(w) != m:
        raise MethodError(f"weights has {len(w)} entries for {m} P values")
    if sum(w) > 1:
        raise MethodError(
            f"the weights add up to {float(sum(w))!r} > 1 (write thirds and the like as "
            f"fractions, '1/3', to add up exactly)"
        )
    rows = list(transitions) if hasattr(transitions, "__iter__") else None
    if rows is None or len(rows) != m:
        raise MethodError(f"transitions must be an {m} x {m} matrix")
    g = []
    for i, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__") or len(row) != m:
            raise MethodError(f"transitions[{i}] must have {m} entries")
        r = [_graph_number(v, f"transitions[{i}][{j}]") for j, v in enumerate(row)]
        if r[i] != 0:
            raise MethodError(f"transitions[{i}][{i}] must be 0 (no edge from a node to itself)")
        if sum(r) > 1:
            raise MethodError(f"transitions[{i}] adds up to {float(sum(r))!r} > 1")
        g.append(r)
    return w, g


def _remove_node(j: int, active: set[int], w: list[Fraction], g: list[list[Fraction]]):
    """Bretz et al. (2009), Algorithm 1, step 2: pass node j's weight along its edges and
    reconnect its predecessors to its successors; j leaves the graph."""
    active.discard(j)
    new_w = list(w)
    for k in active:
        new_w[k] = w[k] + w[j] * g[j][k]
    new_w[j] = Fraction(0)
    new_g = [list(r) for r in g]
    for l_ in active:
        for k in active:
            if l_ == k:
                new_g[l_][k] = Fraction(0)
                continue
            denom = 1 - g[l_][j] * g[j][l_]
            new_g[l_][k] = (g[l_][k] + g[l_][j] * g[j][k]) / denom if denom > 0 else Fraction(0)
    for r in new_g:
        r[j] = Fraction(0)
    new_g[j] = [Fraction(0)] * len(w)
    return new_w, new_g


def graphical(p, *, weights, transitions, alpha, missing) -> Result:
    """The graphical procedure of Bretz et al. (2009) with weighted Bonferroni tests.

    ``weights``: the initial weight of each hypothesis (sum ≤ 1); ``transitions``: the m x m
    matrix g (g_ii = 0, rows sum ≤ 1). Adjusted P values by their algorithm: repeatedly take
    the active hypothesis with the smallest p_j / w_j, set its adjusted value to the larger of
    that ratio (capped at 1) and the previous one, and remove it from the graph (Algorithm 1's
    update). A hypothesis is rejected when its adjusted P value is ≤ alpha, which is
    Algorithm 1's sequence of rejections.

    ``exclude`` removes a hypothesis without a P value from the graph by the same update
    before testing (its weight passes on along its edges, as if it were never part of the
    family); ``as-one`` keeps it with P = 1.
    """
    policy = _policy(missing)
    a = _alpha(alpha)
    read, n_missing = _read_p(p, policy)
    m = len(read)
    w, g = _graph(weights, transitions, m)
    active = set(range(m))
    for j in range(m):
        if read[j] is None:
            w, g = _remove_node(j, active, w, g)
    adjusted: list[Fraction | None] = [None] * m
    order = []
    previous = Fraction(0)
    while active:
        candidates = [(read[j] / w[j], j) for j in sorted(active) if w[j] > 0]
        if not candidates:
            for j in active:
                adjusted[j] = Fraction(1)
            break
        ratio, j = min(candidates)  # ties: the lowest position
        previous = max(previous, min(Fraction(1), ratio))
        adjusted[j] = previous
        order.append(j)
        w, g = _remove_node(j, active, w, g)
    rejected_order = [j for j in order if adjusted[j] <= a]
    return _result(
        "graphical",
        read,
        adjusted,
        a,
        n_missing,
        policy,
        extra={"rejection_order": rejected_order},
    )


# ---------------------------------------------------------------------------------------------

_FAMILY = "multiplicity"
_MOD = "prereg.stats.multiplicity"
_MISSING_OPTION = (
    "refuse (a missing P value is an error naming its position) | exclude (adjust over the "
    "present ones; counts.excluded says how many) | as-one (a missing P value is 1)"
)
_OPTIONS = {
    "alpha": "the error rate a hypothesis is rejected at (adjusted P ≤ alpha), in (0, 1)",
    "missing": _MISSING_OPTION,
}
_REPORTS = ("exact", "counts", "extra")
_EXACTNESS = (
    "adjusted P values are computed in exact rational arithmetic over the P values' exact "
    "binary values; each rejection is decided exactly (adjusted ≤ alpha); extra.adjusted holds "
    "the nearest floats"
)
_ORACLE_SM = (
    "statsmodels.stats.multitest.multipletests(p, method={}) through tests/oracles.py's "
    "wrapper (statsmodels runs gc.collect per call); on NaN statsmodels counts the missing P "
    "values in m, so the comparisons use complete P vectors"
)


def _entry(name, function, summary, formula, reference, oracle, options=None, exactness=None):
    return Entry(
        name=name,
        family=_FAMILY,
        function=f"{_MOD}:{function}",
        shape="p-values",
        summary=summary,
        options=options or _OPTIONS,
        reports=_REPORTS,
        formula=formula,
        reference=reference,
        oracle=oracle,
        exactness=exactness or _EXACTNESS,
    )


CATALOGUE = (
    _entry(
        "bonferroni",
        "bonferroni",
        "Bonferroni-adjusted P values (family-wise error rate)",
        "p̃_i = min(1, m·p_i).",
        "Dunn OJ (1961), Multiple comparisons among means, JASA 56:52-64",
        _ORACLE_SM.format("'bonferroni'"),
    ),
    _entry(
        "holm",
        "holm",
        "Holm step-down adjusted P values (family-wise error rate)",
        "p_(1) ≤ … ≤ p_(m): p̃_(k) = max_{j ≤ k} min(1, (m − j + 1)·p_(j)).",
        "Holm S (1979), A simple sequentially rejective multiple test procedure, Scand J Stat "
        "6:65-70",
        _ORACLE_SM.format("'holm'") + "; its default method 'hs' is Holm–Šidák, not Holm",
    ),
    _entry(
        "hochberg",
        "hochberg",
        "Hochberg step-up adjusted P values (family-wise error rate, under PRDS)",
        "p̃_(k) = min_{j ≥ k} min(1, (m − j + 1)·p_(j)).",
        "Hochberg Y (1988), A sharper Bonferroni procedure for multiple tests of "
        "significance, Biometrika 75:800-802",
        _ORACLE_SM.format("'simes-hochberg'"),
    ),
    _entry(
        "hommel",
        "hommel",
        "Hommel adjusted P values: closed testing with Simes tests",
        "p̃_i = max over subsets I ∋ i of the Simes P value min_j |I|·p_(j:I)/j, computed by "
        "Wright's (1992) algorithm.",
        "Hommel G (1988), A stagewise rejective multiple test procedure based on a modified "
        "Bonferroni test, Biometrika 75:383-386; Wright SP (1992), Biometrics 48:1005-1013",
        _ORACLE_SM.format("'hommel'") + "; and closed testing over every subset by brute force",
        exactness=(
            _EXACTNESS + ". Above 300 P values (the algorithm is O(m²)) the adjusted values are "
            "floats within a relative 2.1·2⁻⁵³ of the exact ones and carry no exact part; a "
            "rejection within 4·2⁻⁵³ of alpha is then decided by the exact algorithm"
        ),
    ),
    _entry(
        "benjamini-hochberg",
        "benjamini_hochberg",
        "Benjamini-Hochberg adjusted P values (false discovery rate)",
        "p̃_(k) = min_{j ≥ k} min(1, m·p_(j)/j).",
        "Benjamini Y, Hochberg Y (1995), Controlling the false discovery rate, J R Stat Soc B "
        "57:289-300",
        _ORACLE_SM.format("'fdr_bh'"),
    ),
    _entry(
        "benjamini-yekutieli",
        "benjamini_yekutieli",
        "Benjamini-Yekutieli adjusted P values (false discovery rate under any dependence)",
        "p̃_(k) = min_{j ≥ k} min(1, c(m)·m·p_(j)/j), c(m) = Σ_{i=1..m} 1/i.",
        "Benjamini Y, Yekutieli D (2001), The control of the false discovery rate in multiple "
        "testing under dependency, Ann Stat 29:1165-1188",
        _ORACLE_SM.format("'fdr_by'"),
    ),
    _entry(
        "fixed-sequence",
        "fixed_sequence",
        "Fixed-sequence testing in the registered order, each test at the full alpha",
        "p̃_i = max_{j ≤ i} p_j (hypotheses in registered order); testing stops at the first "
        "hypothesis not rejected.",
        "Maurer W, Hothorn LA, Lehmacher W (1995), Multiple comparisons in drug clinical "
        "trials and preclinical assays: a-priori ordered hypotheses, in Vollmar J (ed.), "
        "Biometrie in der chemisch-pharmazeutischen Industrie 6",
        "hand computation in the tests (running maximum written out; the sequence stopped at "
        "the first P value above alpha)",
    ),
    _entry(
        "serial-gatekeeping",
        "serial_gatekeeping",
        "Serial gatekeeping: a family is tested only when every earlier family is rejected",
        "Families F_1, …, F_r in order, each tested at the full alpha by the within-family "
        "procedure; p̃_i = max(within-family p̃_i, max of p̃ over F_1 … F_{f−1}) for i in F_f.",
        "Westfall PH, Krishen A (2001), Optimally weighted, fixed sequence and gatekeeper "
        "multiple testing procedures, J Stat Plan Inference 99:25-40; Dmitrienko A, Tamhane "
        "AC, Bretz F (2010), Multiple Testing Problems in Pharmaceutical Statistics, ch. 5",
        "hand computation in the tests (within-family adjustment by statsmodels, the gate "
        "written out)",
        options={
            "families": "the sizes of the consecutive families of p, in testing order",
            "within": "bonferroni | holm | hochberg | hommel (the procedure within a family)",
            **_OPTIONS,
        },
    ),
    _entry(
        "graphical",
        "graphical",
        "Graphical procedure of Bretz et al. (2009) with weighted Bonferroni tests",
        "Reject H_j when p_j ≤ w_j·alpha; then w_k ← w_k + w_j·g_jk and "
        "g_lk ← (g_lk + g_lj·g_jk)/(1 − g_lj·g_jl) (l ≠ k) over the remaining nodes; repeat. "
        "Adjusted P values: take in turn the node with the least p_j/w_j, "
        "p̃_j = max(previous, min(1, p_j/w_j)), remove it by the same update.",
        "Bretz F, Maurer W, Brannath W, Posch M (2009), A graphical approach to sequentially "
        "rejective multiple test procedures, Stat Med 28:586-604",
        "hand-checked rejections and adjusted P values on a graph of two primary hypotheses, "
        "each passing its weight to its secondary and each secondary on to the other primary "
        "(the structure of the paper's examples); the paper's graphs of Holm's procedure "
        "(equal weights, g_ij = 1/(m − 1)) against statsmodels' Holm, and of fixed-sequence "
        "testing against the running maximum; on random graphs, closed testing of every "
        "intersection by weighted Bonferroni tests (brute force) gives the same adjusted P values",
        options={
            "weights": "the initial weight of each hypothesis (numbers or fractions like "
            "'1/3'; sum ≤ 1)",
            "transitions": "the m x m transition matrix (g_ii = 0, each row sums to ≤ 1)",
            **_OPTIONS,
        },
    ),
)
