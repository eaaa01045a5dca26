"""Estimators of evaluation studies: pass@k, majority vote, precision / recall / F1, Brier
score, log loss, binned calibration error and AUROC with its standard error.

Input shapes (:data:`prereg.stats.catalogue.SHAPES`):

- ``samples-per-problem``: ``n, c``, per problem the number of samples drawn and of correct ones
- ``answers-per-problem``: ``answers, gold``, per problem the list of sampled answers and the
  correct answer (any values compared with ``==``; hashable)
- ``labels``: ``y_true, y_pred``, class labels (integers or strings)
- ``probabilities``: ``y, q``, the 0/1 outcome and the predicted probability of outcome 1

Figures that are rational in the data are computed exactly and reported in ``exact``: pass@k,
majority-vote accuracy, precision, recall, F1, the Brier score, the calibration error and the
AUROC (the Brier score and the calibration error read each probability as the shortest
decimal that gives its float, the decimal the data write, as the ``ece`` metric does). Log loss and standard errors are
floats. Importing this module does not import scipy.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np

from prereg.stats.catalogue import Entry
from prereg.stats.methods import MethodError
from prereg.stats.result import Result

TIE_BREAKS = ("wrong", "first", "split")
AVERAGES = ("binary", "micro", "macro")
ZERO_DIVISION = ("zero", "one", "undefined")
MISSING_PREDICTION = ("refuse", "wrong")
AUROC_SE = ("hanley-mcneil", "delong")


def _choice(value, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise MethodError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)):
        raise MethodError(f"level must be a number strictly between 0 and 1, got {level!r}")
    lv = float(level)
    if not (0.0 < lv < 1.0):
        raise MethodError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def _integers(values, name: str) -> list[int]:
    a = np.asarray(values)
    if a.ndim != 1:
        raise MethodError(f"{name} must be a 1-d array of counts")
    out = []
    for i, v in enumerate(a.tolist()):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
            raise MethodError(f"{name}[{i}] is {v!r}, not a whole number")
        if v < 0:
            raise MethodError(f"{name}[{i}] is {v!r}, a negative count")
        out.append(int(v))
    return out


# ---------------------------------------------------------------------------------------------
# pass@k


def pass_at_k(n, c, *, k) -> Result:
    """The unbiased pass@k of Chen et al. (2021), averaged over problems, as an exact fraction.

    Per problem ``1 − C(n − c, k) / C(n, k)``: the probability that k samples drawn without
    replacement from the n include a correct one.
    """
    k = _whole_k(k)
    ns, cs = _integers(n, "n"), _integers(c, "c")
    if len(ns) != len(cs):
        raise MethodError(f"n and c differ in length ({len(ns)} vs {len(cs)})")
    per_problem = _pass_at_k_per_problem(ns, cs, k)
    counts = {"problems": len(ns), "samples": sum(ns), "correct": sum(cs), "k": k}
    if not ns:
        return Result(method="pass-at-k", counts=counts)
    mean = sum(per_problem, Fraction(0)) / len(ns)
    return Result(
        method="pass-at-k",
        estimate=mean,
        exact={"estimate": mean},
        counts=counts,
        extra={"per_problem": [float(v) for v in per_problem]},
    )


def pass_at_k_t(n, c, *, k, alternative, level, margin) -> Result:
    """The unbiased pass@k averaged over problems with the t interval and test over problems:
    per problem ``x_j = 1 − C(n_j − c_j, k)/C(n_j, k)`` (an exact fraction), ``m = mean x_j``
    exactly, ``se = s_x/√P`` and ``t = (m − margin)/se`` with ``P − 1`` degrees of freedom; the
    interval is two-sided at ``level`` (one-sided, the one bound, for a one-sided alternative).
    ``m − margin`` is exact: a pass@k exactly on the margin gives t = 0.  The problems are the
    sampled units (Miller 2024, section 2): the interval is over the problems' population,
    the k-of-n draw within a problem is averaged exactly by the estimator."""
    from prereg.stats import checks

    k = _whole_k(k)
    checks.alternative(alternative)
    level = checks.level(level)
    checks.number(margin, "margin")
    margin_q = margin if isinstance(margin, Fraction) else Fraction(repr(float(margin)))
    ns, cs = _integers(n, "n"), _integers(c, "c")
    if len(ns) != len(cs):
        raise MethodError(f"n and c differ in length ({len(ns)} vs {len(cs)})")
    per = _pass_at_k_per_problem(ns, cs, k)
    problems = len(per)
    counts = {"problems": problems, "samples": sum(ns), "correct": sum(cs), "k": k}
    name = "pass-at-k-t"
    if problems == 0:
        return Result(name, statistic_name="t", counts=counts)
    mean = sum(per, Fraction(0)) / problems
    figures: dict = {
        "estimate": mean,
        "exact": {"estimate": mean},
        "counts": counts,
        "extra": {"per_problem": [float(v) for v in per]},
    }
    if problems < 2:
        return Result(name, statistic_name="t", **figures)
    var = sum(((x - mean) ** 2 for x in per), Fraction(0)) / (problems - 1)
    if var == 0:
        return Result(name, statistic_name="t", **figures)
    se = math.sqrt(float(var / problems))
    return _paired_t(
        name, mean, se, problems - 1, margin_q, alternative, level, figures, var / problems
    )


# ---------------------------------------------------------------------------------------------
# majority vote


def _pass_at_k_per_problem(
    ns: list[int], cs: list[int], k: int, arm: str | None = None
) -> list[Fraction]:
    """Each problem's unbiased pass@k ``1 − C(n − c, k) / C(n, k)``, exactly; a problem with
    more correct samples than samples, or fewer samples than k, refused (naming ``arm``)."""
    where = "" if arm is None else f"arm {arm}, "
    out = []
    for i, (ni, ci) in enumerate(zip(ns, cs, strict=True)):
        if ci > ni:
            raise MethodError(f"{where}problem {i}: c = {ci} correct samples exceed n = {ni}")
        if k > ni:
            raise MethodError(
                f"{where}problem {i}: k = {k} exceeds its n = {ni} samples; pass@{k} needs"
                f" at least {k} samples per problem"
            )
        total = math.comb(ni, k)
        out.append(Fraction(total - math.comb(ni - ci, k), total))
    return out


def _whole_k(k) -> int:
    """``k`` of a pass@k method, a positive whole number."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise MethodError(f"k must be a positive whole number, got {k!r}")
    return int(k)


def _paired_pass_at_k(n_a, c_a, n_b, c_b, k: int) -> tuple[list, list]:
    """Each problem's unbiased pass@k (exact fractions) of arm a and of arm b, the two arms
    paired problem by problem."""
    arms = []
    for arm, n, c in (("a", n_a, c_a), ("b", n_b, c_b)):
        ns, cs = _integers(n, f"n_{arm}"), _integers(c, f"c_{arm}")
        if len(ns) != len(cs):
            raise MethodError(f"n_{arm} and c_{arm} differ in length ({len(ns)} vs {len(cs)})")
        arms.append(_pass_at_k_per_problem(ns, cs, k, arm))
    pa, pb = arms
    if len(pa) != len(pb):
        raise MethodError(f"the arms must pair problem by problem: {len(pa)} against {len(pb)}")
    return pa, pb


def pass_at_k_difference(n_a, c_a, n_b, c_b, *, k, alternative, level, margin) -> Result:
    """The difference of two arms' unbiased pass@k over the same problems, with the paired t
    over problems: per problem ``d_j = pass@k_a(j) − pass@k_b(j)`` (each Chen et al.'s
    estimator, an exact fraction), ``D = mean d_j`` exactly, ``se = s_d/√P`` and
    ``t = (D − margin)/se`` with ``P − 1`` degrees of freedom; the interval is two-sided at
    ``level`` (one-sided for a one-sided alternative), so an equivalence claim reads the
    two-sided interval at 1 − 2α.  ``D − margin`` is exact: on the margin t = 0."""
    from prereg.stats import checks

    k = _whole_k(k)
    checks.alternative(alternative)
    level = checks.level(level)
    checks.number(margin, "margin")
    margin_q = margin if isinstance(margin, Fraction) else Fraction(repr(float(margin)))
    pa, pb = _paired_pass_at_k(n_a, c_a, n_b, c_b, k)
    problems = len(pa)
    counts = {"problems": problems, "k": k}
    name = "pass-at-k-difference"
    if problems == 0:
        return Result(name, statistic_name="t", counts=counts)
    d = [x - y for x, y in zip(pa, pb, strict=True)]
    mean = sum(d, Fraction(0)) / problems
    figures: dict = {
        "estimate": mean,
        "exact": {"estimate": mean},
        "counts": counts,
        "extra": {
            "pass_at_k_a": float(sum(pa, Fraction(0)) / problems),
            "pass_at_k_b": float(sum(pb, Fraction(0)) / problems),
        },
    }
    if problems < 2:
        return Result(name, statistic_name="t", **figures)
    var = sum(((x - mean) ** 2 for x in d), Fraction(0)) / (problems - 1)
    if var == 0:
        return Result(name, statistic_name="t", **figures)
    se = math.sqrt(float(var / problems))
    return _paired_t(
        name, mean, se, problems - 1, margin_q, alternative, level, figures, var / problems
    )


#: numpy quantile methods whose value over whole-number replicates is decided exactly: the
#: virtual index h = (B − 1)·p with p the registered tail as a fraction (linear, lower,
#: higher, midpoint); the others give the float bound alone (compared as the shortest decimal of the float).
EXACT_QUANTILES = ("linear", "lower", "higher", "midpoint")
BOOTSTRAP_INTERVALS = ("percentile", "basic", "bca")


def _exact_quantile(sums: np.ndarray, p: Fraction, method: str) -> Fraction | None:
    """The numpy ``method`` quantile at ``p`` of the whole-number replicates ``sums``, as a
    fraction (None for a method not in EXACT_QUANTILES)."""
    if method not in EXACT_QUANTILES:
        return None
    srt = np.sort(sums)
    h = (len(srt) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(srt) - 1) if h != lo else lo
    x_lo, x_hi = int(srt[lo]), int(srt[hi])
    if method == "lower":
        return Fraction(x_lo)
    if method == "higher":
        return Fraction(x_hi)
    if method == "midpoint":
        return Fraction(x_lo + x_hi, 2)
    return x_lo + (h - lo) * (x_hi - x_lo)


def pass_at_k_difference_bootstrap(
    n_a, c_a, n_b, c_b, *, k, interval, level, resamples, seed, quantile_method
) -> Result:
    """The difference of two arms' unbiased pass@k over the same problems with a paired
    bootstrap interval: the problems (each with both arms' samples) resampled with
    replacement, ``I = rng.integers(0, P, size=(B, P))`` from ``Generator(PCG64(seed))``, the
    draws of bootstrap-paired-mean-difference over the per-problem differences ``d_j``.
    ``D = mean d_j`` is an exact fraction; every replicate is a whole number over a common
    denominator, so a percentile or basic bound of a quantile method in EXACT_QUANTILES is an
    exact fraction too (``exact['lower']``, ``exact['upper']``), decided exactly."""
    from prereg.stats import checks
    from prereg.stats.resampling_methods import (
        QUANTILE_METHODS,
        _bootstrap_ratio,
        _rows,
        _units,
    )

    k = _whole_k(k)
    _choice(interval, BOOTSTRAP_INTERVALS, "interval")
    level = checks.level(level)
    for name, value, least in (("resamples", resamples, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise MethodError(f"{name} must be a whole number of at least {least}, got {value!r}")
    resamples, seed = int(resamples), int(seed)
    _choice(quantile_method, QUANTILE_METHODS, "quantile_method")
    pa, pb = _paired_pass_at_k(n_a, c_a, n_b, c_b, k)
    problems = len(pa)
    name = "pass-at-k-difference-bootstrap"
    counts = {"problems": problems, "k": k}
    if problems == 0:
        return Result(name, counts=counts)
    d = [x - y for x, y in zip(pa, pb, strict=True)]
    mean = sum(d, Fraction(0)) / problems
    floats = np.array([float(v) for v in d])
    res = _bootstrap_ratio(
        name,
        [_units(floats)],
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
        quantile_method=quantile_method,
        exact={},
        counts=counts,
    )
    exact: dict[str, Fraction] = {"estimate": mean}
    denominator = math.lcm(*(v.denominator for v in d))
    whole = [int(v * denominator) for v in d]
    if interval in ("percentile", "basic") and max(map(abs, whole)) * problems < 2**62:
        # the same draws again, as whole-number sums: replicate r is sums[r]/(denominator·P)
        rng = np.random.Generator(np.random.PCG64(seed))
        e = np.array(whole, dtype=np.int64)
        sums = np.empty(resamples, dtype=np.int64)
        step = _rows(problems)
        for lo in range(0, resamples, step):
            hi = min(lo + step, resamples)
            sums[lo:hi] = e[rng.integers(0, problems, size=(hi - lo, problems))].sum(axis=-1)
        tail = (1 - Fraction(repr(float(level)))) / 2
        scale = denominator * problems
        qs = [_exact_quantile(sums, p, quantile_method) for p in (tail, 1 - tail)]
        if all(q is not None for q in qs):
            lo_q, hi_q = (q / scale for q in qs)
            if interval == "percentile":
                exact["lower"], exact["upper"] = lo_q, hi_q
            else:
                exact["lower"], exact["upper"] = 2 * mean - hi_q, 2 * mean - lo_q
    extra = {
        **dict(res.extra),
        "pass_at_k_a": float(sum(pa, Fraction(0)) / problems),
        "pass_at_k_b": float(sum(pb, Fraction(0)) / problems),
    }
    return Result(
        name,
        estimate=float(mean),
        se=res.se,
        lower=float(exact["lower"]) if "lower" in exact else res.lower,
        upper=float(exact["upper"]) if "upper" in exact else res.upper,
        exact=exact,
        counts=counts,
        extra=extra,
    )


def _paired_t(
    name, mean: Fraction, se: float, df: int, margin_q, alternative, level, figures, se2=None
):
    """The t test and interval of an exact mean difference ``mean`` (its ``se`` over ``df``
    degrees of freedom) against the margin: t = (mean − margin)/se, exactly 0 on the margin;
    two-sided interval at ``level``, or the one bound a one-sided alternative claims. ``se2``,
    se² as a fraction when the method has it, gives t² exactly (``exact['statistic_squared']``),
    by whose root a threshold on t is decided."""
    from prereg.stats import checks

    dev = mean - margin_q
    if se2:
        figures["exact"]["statistic_squared"] = dev * dev / se2
        figures["exact"]["se_squared"] = se2
    t = float(dev) / se if dev else 0.0
    a = 1.0 - level
    est = float(mean)
    lower = upper = None
    if alternative == "two-sided":
        half = checks.t_quantile(1.0 - a / 2.0, df) * se
        lower, upper = est - half, est + half
    elif alternative == "greater":
        lower = est - checks.t_quantile(1.0 - a, df) * se
    else:
        upper = est + checks.t_quantile(1.0 - a, df) * se
    return Result(
        name,
        se=se,
        statistic=t,
        statistic_name="t",
        df=df,
        lower=lower,
        upper=upper,
        p=checks.t_p(t, df, alternative),
        **figures,
    )


def majority_vote(answers, gold, *, tie_break) -> Result:
    """Majority-vote (self-consistency) accuracy: per problem the most frequent sampled answer
    is the prediction; ``tie_break`` decides a problem whose top count is shared.

    - ``wrong``: a tie counts as a wrong prediction
    - ``first``: the tied answer sampled first wins
    - ``split``: the problem scores 1/t when the correct answer is one of the t tied answers
      (the expected accuracy under a uniformly random choice among them)
    """
    _choice(tie_break, TIE_BREAKS, "tie_break")
    if isinstance(answers, (str, bytes)) or isinstance(gold, (str, bytes)):
        raise MethodError("answers and gold must be sequences, one item per problem")
    answers, gold = list(answers), list(gold)
    if len(answers) != len(gold):
        raise MethodError(f"answers and gold differ in length ({len(answers)} vs {len(gold)})")
    score = Fraction(0)
    ties = 0
    for i, (sampled, truth) in enumerate(zip(answers, gold, strict=True)):
        if isinstance(sampled, (str, bytes)) or not hasattr(sampled, "__iter__"):
            raise MethodError(f"answers[{i}] must be the list of the problem's sampled answers")
        sampled = list(sampled)
        if not sampled:
            raise MethodError(f"answers[{i}] is empty: problem {i} has no sampled answer")
        try:
            tally = Counter(sampled)
        except TypeError:
            raise MethodError(f"answers[{i}] holds an answer that cannot be compared") from None
        top = max(tally.values())
        tied = [a for a in tally if tally[a] == top]  # in order of first appearance
        if len(tied) > 1:
            ties += 1
        if len(tied) == 1 or tie_break == "first":
            score += int(tied[0] == truth)
        elif tie_break == "split":
            score += Fraction(int(any(a == truth for a in tied)), len(tied))
    counts = {"problems": len(gold), "ties": ties}
    if not gold:
        return Result(method="majority-vote", counts=counts)
    accuracy = score / len(gold)
    return Result(
        method="majority-vote",
        estimate=accuracy,
        exact={"estimate": accuracy, "score": score},
        counts=counts,
    )


# ---------------------------------------------------------------------------------------------
# precision, recall, F1


def _label_list(labels) -> list:
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise MethodError(f"labels must be the list of the class labels, got {labels!r}")
    out = list(labels.tolist() if isinstance(labels, np.ndarray) else labels)
    if not out:
        raise MethodError("labels must list at least one class")
    if len(set(out)) != len(out):
        raise MethodError("labels must be distinct")
    return out


def _labels_in(values, name: str, allowed: list) -> list:
    a = np.asarray(values)
    if a.ndim != 1:
        raise MethodError(f"{name} must be a 1-d array of class labels")
    known = set(allowed)
    out = a.tolist()
    for i, v in enumerate(out):
        if v not in known:
            raise MethodError(f"{name}[{i}] is {v!r}, not one of the registered labels {allowed}")
    return out


def _ratio(num: int, den: int, zero_division: str) -> Fraction | None:
    if den:
        return Fraction(num, den)
    return {"zero": Fraction(0), "one": Fraction(1), "undefined": None}[zero_division]


def _predictions(y_pred, allowed: list, missing_prediction: str) -> tuple[list, int]:
    """The predictions and the number that are missing (None: no label given, a refusal).
    ``refuse`` stops at the first; ``wrong`` keeps them, each a miss of its true class (a false
    negative of that class, a false positive of none), as sklearn counts a prediction outside
    ``labels``."""
    _choice(missing_prediction, MISSING_PREDICTION, "missing_prediction")
    a = np.asarray(y_pred, dtype=object)
    if a.ndim != 1:
        raise MethodError("y_pred must be a 1-d array of class labels")
    out = a.tolist()
    known = set(allowed)
    missing = 0
    for i, v in enumerate(out):
        if v is None:
            if missing_prediction == "refuse":
                raise MethodError(
                    f"y_pred[{i}] is missing (no label predicted) and missing_prediction is"
                    " refuse; register missing_prediction: wrong to count a missing prediction"
                    " as a miss of its true class, or leave such rows out of the metric"
                )
            missing += 1
        elif v not in known:
            raise MethodError(f"y_pred[{i}] is {v!r}, not one of the registered labels {allowed}")
    return out, missing


def _prf(
    metric: str, y_true, y_pred, labels, average, positive, zero_division, missing_prediction
) -> Result:
    _choice(average, AVERAGES, "average")
    _choice(zero_division, ZERO_DIVISION, "zero_division")
    cls = _label_list(labels)
    if average == "binary":
        if positive not in cls:
            raise MethodError(
                f"average binary needs positive, one of the registered labels {cls}; "
                f"got {positive!r}"
            )
    elif positive is not None:
        raise MethodError(f"positive applies to average binary only; give None for {average}")
    yt = _labels_in(y_true, "y_true", cls)
    yp, missing = _predictions(y_pred, cls, missing_prediction)
    if len(yt) != len(yp):
        raise MethodError(f"y_true and y_pred differ in length ({len(yt)} vs {len(yp)})")
    tp = Counter(t for t, p in zip(yt, yp, strict=True) if t == p)
    pred = Counter(p for p in yp if p is not None)
    true = Counter(yt)
    per = []
    for c in cls:
        t, f_p, f_n = tp[c], pred[c] - tp[c], true[c] - tp[c]
        per.append(
            {
                "label": c,
                "tp": t,
                "fp": f_p,
                "fn": f_n,
                "precision": _ratio(t, t + f_p, zero_division),
                "recall": _ratio(t, t + f_n, zero_division),
                "f1": _ratio(2 * t, 2 * t + f_p + f_n, zero_division),
            }
        )
    if average == "binary":
        row = per[cls.index(positive)]
        figures = {m: row[m] for m in ("precision", "recall", "f1")}
        counts = {"tp": row["tp"], "fp": row["fp"], "fn": row["fn"], "n": len(yt)}
        counts["missingPredictions"] = missing
    elif average == "micro":
        t = sum(r["tp"] for r in per)
        f_p = sum(r["fp"] for r in per)
        f_n = sum(r["fn"] for r in per)
        figures = {
            "precision": _ratio(t, t + f_p, zero_division),
            "recall": _ratio(t, t + f_n, zero_division),
            "f1": _ratio(2 * t, 2 * t + f_p + f_n, zero_division),
        }
        counts = {"tp": t, "fp": f_p, "fn": f_n, "n": len(yt), "missingPredictions": missing}
    else:
        figures = {}
        for m in ("precision", "recall", "f1"):
            defined = [r[m] for r in per if r[m] is not None]
            figures[m] = sum(defined, Fraction(0)) / len(defined) if defined else None
        counts = {"classes": len(cls), "n": len(yt), "missingPredictions": missing}
    exact = {m: v for m, v in figures.items() if v is not None}
    if figures[metric] is not None:
        exact["estimate"] = figures[metric]
    extra = {m: (None if v is None else float(v)) for m, v in figures.items()}
    extra["per_class"] = [
        {
            key: (None if r[key] is None else float(r[key]))
            if key in ("precision", "recall", "f1")
            else r[key]
            for key in r
        }
        for r in per
    ]
    return Result(
        method=metric if metric != "f1" else "f1-score",
        estimate=figures[metric],
        exact=exact,
        counts=counts,
        extra=extra,
    )


def precision(
    y_true, y_pred, *, labels, average, positive, zero_division, missing_prediction
) -> Result:
    """Precision tp / (tp + fp): of the positive class (binary), of the pooled counts (micro) or
    the mean over the registered classes (macro)."""
    return _prf(
        "precision", y_true, y_pred, labels, average, positive, zero_division, missing_prediction
    )


def recall(
    y_true, y_pred, *, labels, average, positive, zero_division, missing_prediction
) -> Result:
    """Recall tp / (tp + fn), averaged as :func:`precision`."""
    return _prf(
        "recall", y_true, y_pred, labels, average, positive, zero_division, missing_prediction
    )


def f1_score(
    y_true, y_pred, *, labels, average, positive, zero_division, missing_prediction
) -> Result:
    """F1 2tp / (2tp + fp + fn), averaged as :func:`precision` (macro: the mean of the
    per-class F1, not the F1 of the mean precision and recall)."""
    return _prf("f1", y_true, y_pred, labels, average, positive, zero_division, missing_prediction)


# ---------------------------------------------------------------------------------------------
# probabilities: Brier score, log loss, ECE, AUROC


def _probabilities(y, q) -> tuple[np.ndarray, np.ndarray]:
    ya = np.asarray(y)
    qa = np.asarray(q, dtype=np.float64) if np.asarray(q).dtype.kind in "fiub" else None
    if qa is None:
        raise MethodError("q must be an array of probabilities")
    if ya.ndim != 1 or qa.ndim != 1:
        raise MethodError("y and q must be 1-d arrays")
    if ya.size != qa.size:
        raise MethodError(f"y and q differ in length ({ya.size} vs {qa.size})")
    bad = ~((ya == 0) | (ya == 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise MethodError(f"y[{i}] is {ya[i].item()!r}; every outcome must be 0 or 1")
    bad = ~(np.isfinite(qa) & (qa >= 0) & (qa <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise MethodError(f"q[{i}] is {qa[i].item()!r}; every probability must lie in [0, 1]")
    return ya.astype(np.int64), qa


def brier_score(y, q) -> Result:
    """The Brier score mean((q − y)²), exact over the probabilities read as the decimals the
    data write (:func:`prereg.stats.compare.decimal_fraction`: 0.8 is 4/5), as every figure
    of data is."""
    from prereg.stats.compare import decimal_sum

    ya, qa = _probabilities(y, q)
    n = ya.size
    counts = {"n": n, "positives": int(ya.sum())}
    if n == 0:
        return Result(method="brier-score", counts=counts)
    from prereg.stats.compare import _grouped

    # each distinct probability once per outcome: (q − y)² of its decimal, times its count
    total = Fraction(0)
    for t in (0, 1):
        values, times = _grouped(qa[ya == t])
        total += decimal_sum(values, times, [t] * len(values))
    score = total / n
    return Result(method="brier-score", estimate=score, exact={"estimate": score}, counts=counts)


SELECTIVE_TIES = ("expected", "include", "exclude", "refuse")
SELECTIVE_ROUNDING = ("up", "down")


def _share(value, name: str) -> Fraction:
    """A share in (0, 1] as the decimal written (0.8 is 4/5, not the double below it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise MethodError(f"{name} must be a number in (0, 1], got {value!r}")
    share = value if isinstance(value, Fraction) else Fraction(repr(float(value)))
    if not 0 < share <= 1:
        raise MethodError(f"{name} must lie in (0, 1] (a share of the answers), got {value!r}")
    return share


def selective_accuracy(y, q, *, coverage, rounding, ties) -> Result:
    """Selective accuracy at a registered coverage: the share right among the answers whose
    confidence ranks in the top ``coverage`` share (the most confident m of N, m = ⌈cN⌉ with
    ``rounding`` up, ⌊cN⌋ down). Answers tied with the m-th at the cut are ``ties``:

    - ``expected``: the tied answers share the places left (m − a of b, a the answers above
      the cut): they add (m − a)·h/b right answers, h of them right, the expected accuracy
      over every order of the tied answers; m answers are kept;
    - ``include``: every tied answer is kept (more than m);
    - ``exclude``: none is kept (fewer than m; none above the cut leaves no figure);
    - ``refuse``: a cut inside a run of ties stops the analysis, naming it.

    The estimate is a fraction of the counts (exact)."""
    name = "selective-accuracy"
    c = _share(coverage, "coverage")
    _choice(rounding, SELECTIVE_ROUNDING, "rounding")
    _choice(ties, SELECTIVE_TIES, "ties")
    ya, qa = _probabilities(y, q)
    n = ya.size
    counts: dict = {"n": n}
    if n == 0:
        return Result(method=name, counts=counts)
    cn = c * n
    m = math.ceil(cn) if rounding == "up" else math.floor(cn)
    counts["target"] = m
    if m == 0:
        return Result(
            method=name,
            counts=counts,
            extra={"undefined": f"coverage {coverage} of {n} answers rounds down to none"},
        )
    cut = float(np.sort(qa)[::-1][m - 1])
    above = qa > cut
    tied = qa == cut
    a, b = int(above.sum()), int(tied.sum())
    hits_above, hits_tied = int(ya[above].sum()), int(ya[tied].sum())
    counts.update({"above": a, "tied": b, "tiedKept": m - a})
    if a + b > m and ties == "refuse":
        raise MethodError(
            f"the cut at {m} of {n} answers falls inside {b} answers tied at confidence "
            f"{cut!r} ({m - a} of them would be kept); register ties expected, include or "
            "exclude to say which count"
        )
    if ties == "include" or a + b == m:
        kept, right = a + b, Fraction(hits_above + hits_tied)
    elif ties == "exclude":
        kept, right = a, Fraction(hits_above)
    else:  # expected
        kept, right = m, hits_above + Fraction((m - a) * hits_tied, b)
    counts["kept"] = kept
    extra = {"threshold": cut, "coverage": kept / n}
    if kept == 0:
        extra["undefined"] = f"no answer is kept: the {b} answers tied at the cut are excluded"
        return Result(method=name, counts=counts, extra=extra)
    accuracy = right / kept
    return Result(
        method=name,
        estimate=accuracy,
        exact={"estimate": accuracy, "right": right, "coverage": Fraction(kept, n)},
        counts=counts,
        extra=extra,
    )


def _no_spread(ya, qa, yb, qb) -> bool:
    """Whether every pair's difference of squared errors is the same, over the decimals the
    data write (the floats of 0.9 − 1 and 0.1 − 0 square to different numbers)."""
    from decimal import Decimal, localcontext

    from prereg.stats.compare import exact_decimals

    with localcontext(exact_decimals()):
        first = None
        for a, p, b, r in zip(ya.tolist(), qa.tolist(), yb.tolist(), qb.tolist(), strict=True):
            e = (Decimal(repr(p)) - a) ** 2 - (Decimal(repr(r)) - b) ** 2
            if first is None:
                first = e
            elif e != first:
                return False
    return True


def _paired_arms(y_a, q_a, y_b, q_b, alternative, level, margin):
    """(level, the margin as the decimal written, y_a, q_a, y_b, q_b) of a comparison of two
    arms' probabilities over the same units, its options checked and the arms of one length."""
    from prereg.stats import checks

    checks.alternative(alternative)
    lv = checks.level(level)
    checks.number(margin, "margin")
    margin_q = margin if isinstance(margin, Fraction) else Fraction(repr(float(margin)))
    ya, qa = _probabilities(y_a, q_a)
    yb, qb = _probabilities(y_b, q_b)
    if ya.size != yb.size:
        raise MethodError(f"the arms must pair unit by unit: {ya.size} against {yb.size}")
    return lv, margin_q, ya, qa, yb, qb


def brier_score_difference(y_a, q_a, y_b, q_b, *, alternative, level, margin) -> Result:
    """The difference of two arms' Brier scores over the same units, with the paired t over
    units (the Diebold–Mariano test of squared-error loss without autocorrelation): per unit
    ``d_i = (q_a − y_a)² − (q_b − y_b)²``, ``D = mean d_i`` exactly over the probabilities read
    as the decimals the data write (the Brier score of a less that of b over the pairs),
    ``se = s_d/√n`` and ``t = (D − margin)/se`` with ``n − 1`` degrees of freedom.  A lower
    Brier score is better: "a is better than b" is ``alternative: less``.  The interval is
    two-sided at ``level`` for a two-sided alternative, else the one-sided bound at ``level``.
    ``D − margin`` is exact: on the margin t = 0."""
    from prereg.stats.compare import _grouped, decimal_sum

    level, margin_q, ya, qa, yb, qb = _paired_arms(y_a, q_a, y_b, q_b, alternative, level, margin)
    n = int(ya.size)
    name = "brier-score-difference"
    counts = {"pairs": n, "positivesA": int(ya.sum()), "positivesB": int(yb.sum())}
    if n == 0:
        return Result(name, statistic_name="t", counts=counts)

    def total(y, q) -> Fraction:
        out = Fraction(0)
        for t in (0, 1):
            values, times = _grouped(q[y == t])
            out += decimal_sum(values, times, [t] * len(values))
        return out

    brier_a, brier_b = total(ya, qa) / n, total(yb, qb) / n
    mean = brier_a - brier_b
    figures: dict = {
        "estimate": mean,
        "exact": {"estimate": mean},
        "counts": counts,
        "extra": {"brier_a": float(brier_a), "brier_b": float(brier_b)},
    }
    d = (qa - ya) ** 2 - (qb - yb) ** 2
    sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
    if n < 2 or (sd <= 2.0**-46 and _no_spread(ya, qa, yb, qb)):  # a float spread of 0 or noise
        return Result(name, statistic_name="t", **figures)
    return _paired_t(name, mean, sd / math.sqrt(n), n - 1, margin_q, alternative, level, figures)


def log_loss(y, q, *, clip) -> Result:
    """Mean negative log-likelihood −mean(y·ln q + (1 − y)·ln(1 − q)), natural log.

    ``clip``: None (no clipping: a probability 0 on the outcome that happened gives an infinite
    loss) or eps in (0, 0.5): q is first clipped to [eps, 1 − eps].
    """
    if clip is not None:
        if isinstance(clip, bool) or not isinstance(clip, (int, float)) or not 0 < clip < 0.5:
            raise MethodError(f"clip must be None or a number in (0, 0.5), got {clip!r}")
    ya, qa = _probabilities(y, q)
    n = ya.size
    counts = {"n": n, "positives": int(ya.sum())}
    if n == 0:
        return Result(method="log-loss", counts=counts)
    if clip is not None:
        qa = np.clip(qa, float(clip), 1.0 - float(clip))
    clipped = int((qa != np.asarray(q, dtype=np.float64)).sum())
    with np.errstate(divide="ignore"):
        terms = np.where(ya == 1, -np.log(qa), -np.log1p(-qa))
    loss = math.fsum(terms.tolist()) / n
    return Result(method="log-loss", estimate=loss, counts=counts, extra={"clipped": clipped})


def expected_calibration_error(y, q, *, edges, closed) -> Result:
    """Σ_b (n_b / N)·|mean(y_b) − mean(q_b)| over the registered bins, with each bin's n, mean
    predicted probability and observed frequency of outcome 1 in ``extra["bins"]``."""
    from prereg.stats.calibration import bin_index, ece_binned

    _choice(closed, ("left", "right"), "closed")
    if isinstance(edges, (str, bytes)) or not hasattr(edges, "__iter__"):
        raise MethodError(f"edges must be a list of bin edges, got {edges!r}")
    e = [float(v) for v in edges]
    if (
        len(e) < 2
        or any(not math.isfinite(v) for v in e)
        or any(b <= a for a, b in zip(e, e[1:], strict=False))
    ):
        raise MethodError("edges must be at least two strictly increasing finite numbers")
    ya, qa = _probabilities(y, q)
    n = ya.size
    counts = {"n": n}
    if n == 0:
        return Result(method="expected-calibration-error", counts=counts)
    try:
        idx = bin_index(qa, e, closed)
        figure = ece_binned(qa, ya, e, closed)
    except ValueError as err:
        raise MethodError(f"q: {err}") from None
    from prereg.stats.compare import _grouped, decimal_sum

    # each bin's |k_b − Σ q_i| over the probabilities read as the decimals the data write
    # (0.8 is 4/5), as the ece metric decides it
    k = len(e) - 1
    n_b = np.bincount(idx, minlength=k).tolist()
    sum_y = np.bincount(idx, weights=ya, minlength=k).astype(np.int64).tolist()
    sum_q = [decimal_sum(*_grouped(qa[idx == b])) if n_b[b] else Fraction(0) for b in range(k)]
    exact = sum((abs(sum_y[b] - sum_q[b]) for b in range(k)), Fraction(0)) / n
    bins = [
        {
            "lower": e[b],
            "upper": e[b + 1],
            "n": n_b[b],
            "mean_confidence": float(sum_q[b] / n_b[b]) if n_b[b] else None,
            "accuracy": (sum_y[b] / n_b[b]) if n_b[b] else None,
        }
        for b in range(k)
    ]
    return Result(
        method="expected-calibration-error",
        estimate=figure,
        exact={"estimate": exact},
        counts=counts,
        extra={"bins": bins},
    )


def _midranks_doubled(values: np.ndarray) -> np.ndarray:
    """Twice the 1-based mid-ranks (integers: ties share the mean of their ranks)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (2 * ends - (counts - 1))[inverse].astype(np.int64)


def _auroc_variance(area: Fraction, n1: int, n0: int, r2, pos, qa, se_method: str) -> Fraction:
    """The variance of the AUROC, exactly: Hanley–McNeil's of the area (Q1 = A/(2 − A),
    Q2 = 2A²/(1 + A)), or DeLong's of the placements (fractions of the doubled mid-ranks)."""
    if se_method == "hanley-mcneil":
        q1, q2, a2 = area / (2 - area), 2 * area * area / (1 + area), area * area
        var = (area * (1 - area) + (n1 - 1) * (q1 - a2) + (n0 - 1) * (q2 - a2)) / (n1 * n0)
        return max(var, Fraction(0))

    def spread(w: list[int], scale: int, centre: Fraction) -> Fraction:
        """Σ (w_i/scale − centre)² from whole-number sums (Python integers: exact)."""
        total, squares = sum(w), sum(v * v for v in w)
        return (
            Fraction(squares, scale * scale)
            - 2 * centre * Fraction(total, scale)
            + len(w) * centre * centre
        )

    # V10_i = w_i/(2 n0); V01_j = 1 − w_j/(2 n1), so V01_j − A = −(w_j/(2 n1) − (1 − A))
    w10 = (r2[pos] - _midranks_doubled(qa[pos])).tolist()
    w01 = (r2[~pos] - _midranks_doubled(qa[~pos])).tolist()
    s10 = spread(w10, 2 * n0, area) / (n1 - 1)
    s01 = spread(w01, 2 * n1, 1 - area) / (n0 - 1)
    return s10 / n1 + s01 / n0


def auroc(y, q, *, se_method, level) -> Result:
    """The area under the ROC curve (ties count one half), with the Hanley–McNeil (1982) or the
    DeLong et al. (1988) standard error and the Wald interval ``A ± z·SE`` clipped to [0, 1]."""
    from prereg.stats.proportions import critical_z
    from prereg.stats.roc import auroc as roc_auroc
    from prereg.stats.roc import hanley_mcneil

    _choice(se_method, AUROC_SE, "se_method")
    lv = _level(level)
    ya, qa = _probabilities(y, q)
    pos = ya == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    counts = {"n_pos": n1, "n_neg": n0}
    if n1 == 0 or n0 == 0:
        return Result(method="auroc", counts=counts)
    r2 = _midranks_doubled(qa)
    # 2U = Σ 2·rank(positive) − n1(n1 + 1)
    u2 = int(r2[pos].sum()) - n1 * (n1 + 1)
    area = Fraction(u2, 2 * n1 * n0)
    a = roc_auroc(qa, ya)  # the figure as prereg.stats.roc computes it (mid-ranks, floats)
    zc = critical_z(level=lv)
    se_hm, _, _ = hanley_mcneil(a, n1, n0, z=zc)
    # DeLong's placements: V10_i = (rank_all(x_i) − rank_pos(x_i)) / n0,
    # V01_j = 1 − (rank_all(y_j) − rank_neg(y_j)) / n1
    se_dl = None
    if n1 > 1 and n0 > 1:
        v10 = (r2[pos] - _midranks_doubled(qa[pos])) / (2.0 * n0)
        v01 = 1.0 - (r2[~pos] - _midranks_doubled(qa[~pos])) / (2.0 * n1)
        s10 = float(((v10 - a) ** 2).sum()) / (n1 - 1)
        s01 = float(((v01 - a) ** 2).sum()) / (n0 - 1)
        se_dl = math.sqrt(s10 / n1 + s01 / n0)
    se = se_hm if se_method == "hanley-mcneil" else se_dl
    lower = upper = None
    if se is not None and math.isfinite(se):
        lower, upper = max(0.0, a - zc * se), min(1.0, a + zc * se)
    exact = {"estimate": area}
    if se is not None and math.isfinite(se):  # se² a fraction of the ranks: se by its root
        exact["se_squared"] = _auroc_variance(area, n1, n0, r2, pos, qa, se_method)
    return Result(
        method="auroc",
        estimate=a,
        se=se,
        lower=lower,
        upper=upper,
        exact=exact,
        counts=counts,
        extra={"se_hanley_mcneil": se_hm, "se_delong": se_dl},
    )


def _placements_doubled(q: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's structural components of one arm, doubled to integers: for each positive,
    2·#{negatives below} + #{negatives tied} (= 2n₀·V₁₀); for each negative, 2·#{positives
    below} + #{positives tied} (= 2n₁·(1 − V₀₁)).  Both are a unit's doubled mid-rank among all
    units less its doubled mid-rank within its own class."""
    r2 = _midranks_doubled(q)
    return r2[pos] - _midranks_doubled(q[pos]), r2[~pos] - _midranks_doubled(q[~pos])


def _sample_variance(d: np.ndarray) -> Fraction:
    """The exact sample variance (divisor n − 1) of integer values, n ≥ 2."""
    values = [int(v) for v in d.tolist()]
    n, total = len(values), sum(values)
    return Fraction(n * sum(v * v for v in values) - total * total, n * (n - 1))


def paired_delong(pos, q_a, q_b) -> dict[str, Fraction]:
    """Both arms' AUROCs over the same units and DeLong's variances, as exact fractions:
    ``auroc_a``, ``auroc_b``, ``var_a``, ``var_b`` (each arm's), ``cov`` and ``var_diff`` =
    Var(A_a − A_b) = s²(V₁₀ᵃ − V₁₀ᵇ)/n₁ + s²(V₀₁ᵃ − V₀₁ᵇ)/n₀ (sample variances of the
    structural components).  ``pos`` marks the positives (at least two of each class)."""
    pos = np.asarray(pos, dtype=bool)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    c_a, g_a = _placements_doubled(np.asarray(q_a, dtype=np.float64), pos)
    c_b, g_b = _placements_doubled(np.asarray(q_b, dtype=np.float64), pos)
    # V10 = c/(2n0), V01 = 1 − g/(2n1): scale the integer variances back
    s10, s01 = Fraction(1, 4 * n0 * n0 * n1), Fraction(1, 4 * n1 * n1 * n0)

    def var(c, g) -> Fraction:
        return _sample_variance(c) * s10 + _sample_variance(g) * s01

    var_a, var_b, var_diff = var(c_a, g_a), var(c_b, g_b), var(c_a - c_b, g_a - g_b)
    return {
        "auroc_a": Fraction(int(c_a.sum()), 2 * n1 * n0),
        "auroc_b": Fraction(int(c_b.sum()), 2 * n1 * n0),
        "var_a": var_a,
        "var_b": var_b,
        "cov": (var_a + var_b - var_diff) / 2,
        "var_diff": var_diff,
    }


def auroc_difference(y_a, q_a, y_b, q_b, *, alternative, level, margin) -> Result:
    """The difference of two arms' AUROCs over the same units (arm a's less arm b's), with
    DeLong, DeLong & Clarke-Pearson's (1988) paired variance from the structural components
    and the z test of ``A_a − A_b − margin``.  Each unit is one positive or one negative for
    both arms (the same programs, the same ground truth): a unit whose outcome differs between
    the arms is refused.  Ties count one half, as in the Mann–Whitney kernel.  ``A_a − A_b``
    and its variance are exact fractions of the ranks; on the margin z = 0 exactly."""
    from prereg.stats import checks

    name = "auroc-difference"
    lv, margin_q, ya, qa, yb, qb = _paired_arms(y_a, q_a, y_b, q_b, alternative, level, margin)
    differ = np.flatnonzero(ya != yb)
    if differ.size:
        i = int(differ[0])
        raise MethodError(
            f"pair {i} is a positive in one arm and a negative in the other ({differ.size} "
            "pair(s) so): a paired AUROC difference ranks the same units against one truth, "
            "so each unit's outcome must be the same in both arms"
        )
    pos = ya == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    counts = {"pairs": int(ya.size), "n_pos": n1, "n_neg": n0}
    if n1 == 0 or n0 == 0:
        return Result(name, statistic_name="z", counts=counts)
    if n1 < 2 or n0 < 2:  # the variance of the components needs two units of each class
        u2 = [int(_placements_doubled(q, pos)[0].sum()) for q in (qa, qb)]
        diff = Fraction(u2[0] - u2[1], 2 * n1 * n0)
        return Result(
            name, estimate=diff, statistic_name="z", exact={"estimate": diff}, counts=counts
        )
    d = paired_delong(pos, qa, qb)
    diff, var = d["auroc_a"] - d["auroc_b"], d["var_diff"]
    figures: dict = {
        "estimate": diff,
        "exact": {"estimate": diff},
        "counts": counts,
        "extra": {
            "auroc_a": float(d["auroc_a"]),
            "auroc_b": float(d["auroc_b"]),
            "se_a": math.sqrt(d["var_a"]),
            "se_b": math.sqrt(d["var_b"]),
            "covariance": float(d["cov"]),
        },
    }
    if var == 0:  # the components' differences do not vary (D need not be 0): no test
        return Result(name, se=0.0, statistic_name="z", **figures)
    se = math.sqrt(var)
    dev = diff - margin_q
    z = float(dev) / se if dev else 0.0
    if isinstance(var, Fraction):  # z² exactly: a threshold on z is decided by its root
        figures["exact"]["statistic_squared"] = dev * dev / var
        figures["exact"]["se_squared"] = var
    est = float(diff)
    lower, upper = checks.bounds(est, se, alternative, lv, to=lambda v: min(1.0, max(-1.0, v)))
    return Result(
        name,
        se=se,
        statistic=z,
        statistic_name="z",
        lower=lower,
        upper=upper,
        p=checks.normal_p(z, alternative),
        **figures,
    )


# ---------------------------------------------------------------------------------------------

_FAMILY = "estimators"
_MOD = "prereg.stats.estimators"

_PRF_OPTIONS = {
    "labels": "the list of the class labels (every label of y_true and y_pred must be one)",
    "average": "binary (the positive class) | micro (pooled counts) | macro (mean over labels)",
    "positive": "the positive label for average binary; None for micro and macro",
    "zero_division": (
        "zero | one | undefined: the value of a ratio with a zero denominator (undefined: "
        "None, and a macro mean over the classes where it is defined)"
    ),
    "missing_prediction": (
        "refuse | wrong: a row whose prediction is missing (null: the model gave no label, a "
        "refusal) stops score (refuse), or counts as a miss of its true class (wrong: a false "
        "negative of that class, a false positive of none; counts.missingPredictions says how "
        "many)"
    ),
}
_PRF_ORACLE = (
    "sklearn.metrics.precision_recall_fscore_support(labels=labels, pos_label=positive, "
    "average='binary'|'micro'|'macro', zero_division=0|1|np.nan): our zero / one / "
    "undefined; its default 'warn' acts as 0; with np.nan its macro mean skips undefined "
    "classes, as ours does; missing_prediction wrong is sklearn with each missing prediction "
    "replaced by a label outside labels"
)
_PRF_EXACT = (
    "the figure is a fraction of the counts (a mean of fractions for macro), compared exactly"
)

#: How the t and se of the pass@k t tests are decided (their estimate's words precede it).
_PASS_T_ROOTS = (
    "(on the margin t = 0, a one-sided P of 1/2); t² is a fraction too "
    "(exact['statistic_squared']), and a threshold on t is decided by balls of its root; so is "
    "se² (exact['se_squared']), a threshold on se decided by balls of its root; P and the "
    "bounds are floating point, each compared as the shortest decimal of its float"
)

CATALOGUE = (
    Entry(
        name="pass-at-k",
        family=_FAMILY,
        function=f"{_MOD}:pass_at_k",
        shape="samples-per-problem",
        summary="Unbiased pass@k averaged over problems, an exact fraction (no interval: "
        "pass-at-k-t adds the t interval and test over problems)",
        options={"k": "the number of samples a solver may submit (a whole number, 1 <= k <= n)"},
        reports=("estimate", "exact", "counts", "extra"),
        formula="pass@k = mean over problems of 1 − C(n − c, k) / C(n, k).",
        reference=(
            "Chen M et al. (2021), Evaluating Large Language Models Trained on Code, "
            "arXiv:2107.03374, section 2.1"
        ),
        oracle=(
            "the paper's numerically stable form 1 − Π_{i=n−c+1..n} (1 − k/i) and "
            "scipy.special.comb(exact=True), per problem, in the tests"
        ),
        exactness="the estimate is a fraction of binomial coefficients, compared exactly",
    ),
    Entry(
        name="pass-at-k-t",
        family=_FAMILY,
        function=f"{_MOD}:pass_at_k_t",
        shape="samples-per-problem",
        summary="Unbiased pass@k averaged over problems, with the t interval and test over "
        "problems (a rule on its lower bound)",
        options={
            "k": "the number of samples a solver may submit (a whole number, 1 <= k <= n)",
            "alternative": "two-sided | greater (H1: pass@k exceeds the margin; the interval "
            "is the one lower bound) | less (the one upper bound)",
            "level": "the interval's level, in (0, 1); one-sided with a one-sided alternative",
            "margin": "the pass@k under the null (a finite number; 0 for none)",
        },
        reports=(
            "estimate",
            "se",
            "statistic",
            "df",
            "lower",
            "upper",
            "p",
            "exact",
            "counts",
            "extra",
        ),
        formula="x_j = 1 − C(n_j − c_j, k)/C(n_j, k) per problem; m = mean x_j (pass@k); "
        "se = s_x/√P over the P problems; t = (m − margin)/se, P − 1 df; interval "
        "m ± t(1 − α/2, P − 1)·se (two-sided), or m − t(1 − α, P − 1)·se (greater); no se, "
        "t or bounds with one problem or when every problem has the same pass@k",
        reference=(
            "Chen M et al. (2021), arXiv:2107.03374, section 2.1 (the estimator); Miller E "
            "(2024), Adding Error Bars to Evals, arXiv:2411.00640, section 2 (the standard "
            "error of a mean over questions)"
        ),
        oracle=(
            "scipy.stats.ttest_1samp of the per-problem pass@k values (the paper's product "
            "form) against the margin, and its confidence_interval(level)"
        ),
        exactness="m and m − margin are fractions of binomial coefficients and the margin as "
        "written, compared exactly " + _PASS_T_ROOTS,
    ),
    Entry(
        name="pass-at-k-difference",
        family=_FAMILY,
        function=f"{_MOD}:pass_at_k_difference",
        shape="paired-samples-per-problem",
        summary="Difference of two arms' unbiased pass@k over the same problems, with the "
        "paired t over problems (an equivalence claim reads its interval)",
        options={
            "k": "the number of samples a solver may submit (a whole number, 1 <= k <= n)",
            "alternative": "two-sided | greater (H1: a's pass@k exceeds b's by more than the "
            "margin) | less",
            "level": "the interval's level, in (0, 1); one-sided with a one-sided alternative "
            "(an equivalence claim at alpha: two-sided at 1 - 2 alpha)",
            "margin": "the difference under the null (a finite number; 0 for none)",
        },
        reports=("estimate", "se", "statistic", "df", "lower", "upper", "p", "exact", "counts"),
        formula="d_j = pass@k_a(j) − pass@k_b(j) per problem present in both arms (each "
        "1 − C(n − c, k)/C(n, k)); D = mean d_j; se = s_d/√P; t = (D − margin)/se, P − 1 df; "
        "interval D ± t(1 − α/2, P − 1)·se",
        reference=(
            "Chen M et al. (2021), arXiv:2107.03374, section 2.1 (the estimator); Miller E "
            "(2024), Adding Error Bars to Evals, arXiv:2411.00640, section 4 (paired "
            "differences over questions)"
        ),
        oracle=(
            "scipy.stats.ttest_rel of the per-problem pass@k values (the paper's product "
            "form) and ttest_1samp of their differences against the margin"
        ),
        exactness="D and D − margin are fractions of binomial coefficients and the margin as "
        "written, compared exactly " + _PASS_T_ROOTS,
    ),
    Entry(
        name="pass-at-k-difference-bootstrap",
        family=_FAMILY,
        function=f"{_MOD}:pass_at_k_difference_bootstrap",
        shape="paired-samples-per-problem",
        summary="Difference of two arms' unbiased pass@k over the same problems, with a paired "
        "bootstrap interval over problems (a non-inferiority claim reads its lower bound)",
        options={
            "k": "the number of samples a solver may submit (a whole number, 1 <= k <= n)",
            "interval": "percentile | basic | bca",
            "level": "the interval's level, strictly between 0 and 1 (two-sided)",
            "resamples": "the number of bootstrap resamples B (at least 1)",
            "seed": "the PCG64 seed (a whole number, at least 0)",
            "quantile_method": "numpy.quantile's method (linear, lower, higher, midpoint: "
            "bounds exact; inverted_cdf, hazen, weibull, median_unbiased, ...: floating point)",
        },
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula="d_j = pass@k_a(j) − pass@k_b(j) per problem present in both arms (each "
        "1 − C(n − c, k)/C(n, k)); D = mean d_j; rng = Generator(PCG64(seed)), "
        "I = rng.integers(0, P, size=(B, P)) over the problems; D*_r = mean of d over row r; "
        "α = (1 − level)/2; percentile [q(α), q(1 − α)], basic [2D − q(1 − α), 2D − q(α)], BCa "
        "as bootstrap-paired-mean-difference's; SE = sd(D*) (ddof 1)",
        reference=(
            "Chen M et al. (2021), arXiv:2107.03374, section 2.1 (the estimator); Efron B, "
            "Tibshirani RJ (1993), An Introduction to the Bootstrap, ch. 13-14 (percentile, "
            "BCa); Miller E (2024), arXiv:2411.00640, section 4 (paired differences over "
            "questions)"
        ),
        oracle=(
            "scipy.stats.bootstrap((d,), numpy.mean, method='percentile' | 'basic' | 'BCa', "
            "batch=None, rng=Generator(PCG64(seed))) over the per-problem differences (the "
            "paper's product form), which draws the same indices; exact bounds against "
            "Fraction arithmetic over the same draws"
        ),
        exactness="D is a fraction of binomial coefficients, compared exactly; every replicate "
        "is a whole number over the common denominator of the d_j, so a percentile or basic "
        "bound of the linear, lower, higher or midpoint quantile is an exact fraction "
        "(exact['lower'], exact['upper'], the tail α taken from the level as written), "
        "compared exactly: a bound exactly on a threshold meets ge and fails gt; other bounds "
        "are floating point, each compared as the shortest decimal of its float",
    ),
    Entry(
        name="majority-vote",
        family=_FAMILY,
        function=f"{_MOD}:majority_vote",
        shape="answers-per-problem",
        summary="Majority-vote (self-consistency) accuracy with a registered tie rule",
        options={
            "tie_break": (
                "wrong (a tie is wrong) | first (the tied answer sampled first) | split "
                "(1/t credit when the correct answer is among the t tied)"
            )
        },
        reports=("estimate", "exact", "counts"),
        formula=(
            "Per problem the answer with the most votes among its samples; accuracy = "
            "(number of problems whose voted answer equals the correct one) / problems, ties "
            "per tie_break."
        ),
        reference=(
            "Wang X et al. (2023), Self-Consistency Improves Chain of Thought Reasoning in "
            "Language Models, ICLR"
        ),
        oracle="hand-counted votes in the tests (collections.Counter written out per case)",
        exactness="the estimate is a fraction of problems, compared exactly",
    ),
    Entry(
        name="precision",
        family=_FAMILY,
        function=f"{_MOD}:precision",
        shape="labels",
        summary="Precision of predicted class labels (binary, micro or macro)",
        options=_PRF_OPTIONS,
        reports=("estimate", "exact", "counts", "extra"),
        formula="tp / (tp + fp) per class; micro pools tp and fp over classes; macro averages.",
        reference="e.g. Manning CD, Raghavan P, Schütze H (2008), Introduction to IR, ch. 8 and 13",
        oracle=_PRF_ORACLE,
        exactness=_PRF_EXACT,
    ),
    Entry(
        name="recall",
        family=_FAMILY,
        function=f"{_MOD}:recall",
        shape="labels",
        summary="Recall of predicted class labels (binary, micro or macro)",
        options=_PRF_OPTIONS,
        reports=("estimate", "exact", "counts", "extra"),
        formula="tp / (tp + fn) per class; micro pools tp and fn over classes; macro averages.",
        reference="e.g. Manning CD, Raghavan P, Schütze H (2008), Introduction to IR, ch. 8 and 13",
        oracle=_PRF_ORACLE,
        exactness=_PRF_EXACT,
    ),
    Entry(
        name="f1-score",
        family=_FAMILY,
        function=f"{_MOD}:f1_score",
        shape="labels",
        summary="F1 of predicted class labels (binary, micro or macro)",
        options=_PRF_OPTIONS,
        reports=("estimate", "exact", "counts", "extra"),
        formula=(
            "2tp / (2tp + fp + fn) per class (zero_division only when tp + fp + fn = 0); micro "
            "from pooled counts; macro is the mean of the per-class F1."
        ),
        reference="van Rijsbergen CJ (1979), Information Retrieval, 2nd ed., ch. 7",
        oracle=_PRF_ORACLE,
        exactness=_PRF_EXACT,
    ),
    Entry(
        name="brier-score",
        family=_FAMILY,
        function=f"{_MOD}:brier_score",
        shape="probabilities",
        summary="Brier score: the mean squared difference of probability and 0/1 outcome",
        options={},
        reports=("estimate", "exact", "counts"),
        formula="mean over units of (q − y)².",
        reference="Brier GW (1950), Verification of forecasts expressed in terms of probability, "
        "Monthly Weather Review 78:1-3",
        oracle="sklearn.metrics.brier_score_loss(y, q) (binary: the plain mean squared error)",
        exactness="the estimate is the exact mean of the squares over the probabilities read as the decimals the data write (0.8 is 4/5), compared exactly",
    ),
    Entry(
        name="selective-accuracy",
        family=_FAMILY,
        function=f"{_MOD}:selective_accuracy",
        shape="probabilities",
        summary="Accuracy on the most confident answers at a registered coverage (selective "
        "prediction)",
        options={
            "coverage": "the share c of answers kept, in (0, 1] (0.8: the 80% most confident)",
            "rounding": "up (m = ⌈cN⌉ answers kept) | down (m = ⌊cN⌋)",
            "ties": "expected (the answers tied at the cut share the places left: the expected "
            "accuracy over their orders) | include (every tied answer kept) | exclude (none "
            "kept) | refuse (a cut inside a run of ties stops score)",
        },
        reports=("estimate", "exact", "counts", "extra"),
        formula="Sort the N answers by confidence q, highest first; m = ⌈cN⌉ (or ⌊cN⌋); t = the "
        "m-th highest q; a answers above t (h_a right), b at t (h_t right). expected: (h_a + "
        "(m − a)·h_t/b)/m; include: (h_a + h_t)/(a + b); exclude: h_a/a. extra: threshold t, "
        "coverage (answers kept / N); the risk at that coverage is 1 − the estimate.",
        reference="Geifman Y, El-Yaniv R (2017), Selective classification for deep neural "
        "networks, NeurIPS (risk-coverage); El-Yaniv R, Wiener Y (2010), On the foundations of "
        "noise-free selective classification, JMLR 11:1605-1641",
        oracle="counting by hand over the answers sorted by confidence in the tests, with the "
        "expected tie rule checked against the mean over every order of the tied answers",
        exactness="the estimate is a fraction of the counts (with ties expected, of the tied "
        "answers' share), compared exactly; the coverage is the decimal written (0.8 is 4/5)",
    ),
    Entry(
        name="brier-score-difference",
        family=_FAMILY,
        function=f"{_MOD}:brier_score_difference",
        shape="paired-probabilities",
        summary="Difference of two arms' Brier scores over the same units, with the paired t",
        options={
            "alternative": "two-sided | greater | less (H1 about the Brier score of a less that "
            "of b against the margin; a lower Brier score is better, so 'a is better' is less)",
            "level": "the interval's level, strictly between 0 and 1 (two-sided interval for a "
            "two-sided alternative, else the one-sided bound)",
            "margin": "the difference under the null (0 for none; 0.01 with less: a is worse by "
            "less than 0.01, a non-inferiority margin)",
        },
        reports=(
            "estimate",
            "se",
            "statistic",
            "df",
            "lower",
            "upper",
            "p",
            "exact",
            "counts",
            "extra",
        ),
        formula="d_i = (q_a,i − y_a,i)² − (q_b,i − y_b,i)² per pair; D = mean d_i (Brier a − "
        "Brier b); se = s_d/√n; t = (D − margin)/se, n − 1 df; interval D ± t(1 − α/2, n − 1)·se "
        "(one-sided: t(level, n − 1)); extra: brier_a, brier_b",
        reference="Brier GW (1950), Monthly Weather Review 78:1-3; Diebold FX, Mariano RS (1995), "
        "Comparing predictive accuracy, J Bus Econ Stat 13:253-263 (the paired test of a loss "
        "difference)",
        oracle="sklearn.metrics.brier_score_loss of each arm over the pairs; "
        "scipy.stats.ttest_rel of the per-unit squared errors (its statistic, P and, through "
        "confidence_interval(level), its interval)",
        exactness="the estimate is the exact difference of the two Brier scores over the "
        "probabilities read as the decimals the data write, compared exactly; D − margin is "
        "exact (on the margin t = 0, one-sided P = 1/2); t² and se² are fractions of the "
        "decimals too, and a threshold on t or se is decided by balls of the root near it (a t "
        "of exactly 19/4 meets `ge 4.75`); the bounds and P are floating point",
    ),
    Entry(
        name="log-loss",
        family=_FAMILY,
        function=f"{_MOD}:log_loss",
        shape="probabilities",
        summary="Mean negative log-likelihood (natural log) of the 0/1 outcomes",
        options={
            "clip": (
                "None (no clipping; a probability 0 on the outcome that happened gives an "
                "infinite loss) or eps in (0, 0.5): q clipped to [eps, 1 − eps] first"
            )
        },
        reports=("estimate", "counts", "extra"),
        formula="−mean(y·ln q + (1 − y)·ln(1 − q)), ln(1 − q) computed as log1p(−q).",
        reference="e.g. Good IJ (1952), Rational decisions, J R Stat Soc B 14:107-114",
        oracle=(
            "sklearn.metrics.log_loss(y, q, labels=[0, 1]), which always clips q to [eps, 1 − "
            "eps] with eps the float64 machine epsilon (no option since sklearn 1.5): equal to "
            "ours where q lies inside that range; our clip=eps is compared with sklearn on q "
            "clipped beforehand"
        ),
        exactness="the mean of the logs of the probabilities read as the decimals the data write "
        "(clipped first, as the method does) is decided by balls of rising precision near a "
        "threshold",
    ),
    Entry(
        name="expected-calibration-error",
        family=_FAMILY,
        function=f"{_MOD}:expected_calibration_error",
        shape="probabilities",
        summary="Expected calibration error over registered bins, with the per-bin table",
        options={
            "edges": "the bin edges, strictly increasing, covering every q",
            "closed": "left ([e0, e1), ..., last bin closed) | right ((e_k-1, e_k], first closed)",
        },
        reports=("estimate", "exact", "counts", "extra"),
        formula="Σ_b (n_b / N)·|mean(y_b) − mean(q_b)| over the registered bins.",
        reference=(
            "Naeini MP, Cooper GF, Hauskrecht M (2015), Obtaining well calibrated probabilities "
            "using Bayesian binning, AAAI; Guo C et al. (2017), On calibration of modern neural "
            "networks, ICML"
        ),
        oracle="a plain loop over the registered bins in the tests (no library function)",
        exactness=(
            "estimate: prereg.stats.calibration.ece_binned's float; exact.estimate the exact "
            "value over the floats given, which a threshold is decided with"
        ),
    ),
    Entry(
        name="auroc",
        family=_FAMILY,
        function=f"{_MOD}:auroc",
        shape="probabilities",
        summary="AUROC (ties count half) with Hanley-McNeil or DeLong SE and Wald interval",
        options={
            "se_method": "hanley-mcneil | delong",
            "level": "the interval's confidence level, in (0, 1)",
        },
        reports=("estimate", "se", "lower", "upper", "exact", "counts", "extra"),
        formula=(
            "A = (#{x > y} + ½#{x = y}) / (n₁n₀) over positive scores x and negative y. "
            "Hanley–McNeil: SE² = (A(1 − A) + (n₁ − 1)(Q₁ − A²) + (n₀ − 1)(Q₂ − A²))/(n₁n₀), "
            "Q₁ = A/(2 − A), Q₂ = 2A²/(1 + A). DeLong: V₁₀(x_i) = mean_j ψ(x_i, y_j), "
            "V₀₁(y_j) = mean_i ψ(x_i, y_j), SE² = s²(V₁₀)/n₁ + s²(V₀₁)/n₀ (sample variances). "
            "Interval A ± z·SE clipped to [0, 1]."
        ),
        reference=(
            "Hanley JA, McNeil BJ (1982), Radiology 143:29-36; DeLong ER, DeLong DM, "
            "Clarke-Pearson DL (1988), Biometrics 44:837-845"
        ),
        oracle=(
            "sklearn.metrics.roc_auc_score for A; DeLong's placements by brute force over all "
            "pairs in the tests; Hanley–McNeil's formula by hand and their published example"
        ),
        exactness=(
            "estimate: prereg.stats.roc.auroc's float; exact.estimate the fraction 2U/(2n₁n₀), "
            "which a threshold is decided with; SE² is a fraction of the area (Hanley–McNeil) "
            "or of the mid-ranks (DeLong's placements), exact['se_squared'], and a threshold on "
            "SE is decided by balls of its root; the bounds are floats, each compared as the "
            "shortest decimal of its float"
        ),
    ),
    Entry(
        name="auroc-difference",
        family=_FAMILY,
        function=f"{_MOD}:auroc_difference",
        shape="paired-probabilities",
        summary="Difference of two arms' AUROCs over the same units (DeLong's paired z test)",
        options={
            "alternative": "two-sided | greater | less (H1 about the AUROC of a less that of b "
            "against the margin; a higher AUROC is better, so 'a is better' is greater)",
            "level": "the interval's level, strictly between 0 and 1 (two-sided interval for a "
            "two-sided alternative, else the one-sided bound)",
            "margin": "the difference under the null (0 for none; -0.05 with greater: a's AUROC "
            "is below b's by less than 0.05, a non-inferiority margin)",
        },
        reports=("estimate", "se", "statistic", "lower", "upper", "p", "exact", "counts", "extra"),
        formula="Each unit is a positive or a negative for both arms (one truth; a unit whose "
        "outcome differs between the arms is refused). ψ(x, y) = 1 if x > y, ½ if x = y, 0 "
        "otherwise; per arm V₁₀(x_i) = mean_j ψ(x_i, y_j) over the negatives, V₀₁(y_j) = "
        "mean_i ψ(x_i, y_j) over the positives, A = mean V₁₀. D = A_a − A_b; Var(D) = "
        "s²(V₁₀ᵃ − V₁₀ᵇ)/n₁ + s²(V₀₁ᵃ − V₀₁ᵇ)/n₀ (sample variances, n − 1); z = (D − "
        "margin)/√Var(D), P from the normal; interval D ± z(1 − α/2)·se (one-sided: z(level)), "
        "clipped to [−1, 1]. No se with fewer than two units of a class; no test when Var(D) "
        "= 0 (the components' differences do not vary: two arms that rank every unit alike, or "
        "a perfect arm against a constant one, D = ½), as a t test has none without spread; "
        "no figure without a positive or a negative. "
        "extra: auroc_a, auroc_b, se_a, se_b (each arm's DeLong se), covariance",
        reference="DeLong ER, DeLong DM, Clarke-Pearson DL (1988), Comparing the areas under two "
        "or more correlated receiver operating characteristic curves: a nonparametric approach, "
        "Biometrics 44:837-845; Sun X, Xu W (2014), Fast implementation of DeLong's algorithm, "
        "IEEE Signal Process Lett 21:1389-1393 (the components from mid-ranks)",
        oracle="sklearn.metrics.roc_auc_score of each arm; DeLong's structural components and "
        "variance written out in Fractions over every pair of units in the tests (exact); a "
        "paired bootstrap of the units for the variance",
        exactness="the estimate A_a − A_b is the exact fraction (2U_a − 2U_b)/(2n₁n₀), compared "
        "exactly; Var(D) is formed exactly and D − margin is exact, so on the margin z = 0 and "
        "a one-sided P is exactly 1/2; z² is a fraction (exact['statistic_squared']) and a "
        "threshold on z is decided by balls of its root; so is se² (exact['se_squared']), a "
        "threshold on se decided by balls of its root; bounds and P are floating point, each "
        "compared as the shortest decimal of its float",
    ),
)
