"""The registered results as SCORE.json rows, shared by every engine that scores.

``figure(x)`` gives a reported figure as SCORE.json writes it: :func:`full`, the float at full
precision (JSON writes its shortest round-trip decimal), None when missing. Rounding belongs to
human displays (SCORE.md, the reports) only; verdicts never read displayed values.
:func:`decision_lines` is the Decision section every SCORE.md opens with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Round = Callable[[Any], Any]


_SIZES = ("n", "positives", "negatives")


def full(x) -> float | None:
    """A figure at full precision: the float (JSON writes its shortest round-trip decimal), or
    None when it is missing (None or NaN)."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _shown(x, against: Mapping[str, Any] | None = None) -> str:
    """A reading's figure: a fraction as ``p/q (float)``, a figure balls decided as the
    decimal inside them, a float to 10 significant digits, or more when 10 would read on the
    other side of the reading's threshold (``against``) than the float does."""
    if isinstance(x, Mapping) and "exact" in x:
        return f"{x['exact']} ({x['value']:.10g})"
    if isinstance(x, Mapping) and "certified" in x:
        return str(x["certified"])
    if isinstance(x, float):
        if against is not None and math.isfinite(x):
            from prereg.reports.numbers import fmt_against

            return fmt_against(x, against["value"], against.get("decimals"), 10)
        return f"{x:.10g}"
    return "–" if x is None else str(x)


def _reading_line(r: Mapping[str, Any]) -> str:
    if "target" in r:
        dec = f" rounded to {r['decimals']} decimals" if "decimals" in r else ""
        return (
            f"`{r['target']}` {r['quantity']} = {_shown(r['figure'], r)}{dec} {r['op']}"
            f" {_shown(r['value'])}: {'holds' if r['held'] else 'does not hold'}"
        )
    if "hypothesis" in r:
        return (
            f"`{r['hypothesis']}` is {r['verdict']} (the rule asks {' or '.join(r['is'])}):"
            f" {'holds' if r['held'] else 'does not hold'}"
        )
    if "gate" in r:
        gates = ", ".join(f"`{g}` {'held' if h else 'failed'}" for g, h in r["held"].items())
        return (
            f"gates {gates} (the rule asks {r['is']}): {'holds' if r['holds'] else 'does not hold'}"
        )
    inner = "; ".join(_reading_line(x) for x in r.get("not", []))
    return f"not ({inner}): {'holds' if r['held'] else 'does not hold'}"


def decision_lines(record: Mapping[str, Any] | None) -> list[str]:
    """The Decision section of a SCORE.md: the outcome, the rule that fired and what it read."""
    lines = ["## Decision", ""]
    if record is None:
        return lines + ["The study registers no decision.", ""]
    title = f" ({record['title']})" if record.get("title") else ""
    lines.append(f"**{record['outcome']}**{title}")
    lines.append("")
    if record.get("rule") == "otherwise":
        if record.get("why") == "no rule held":
            lines.append("No decision rule held; the registered otherwise applies.")
        else:
            lines.append(
                "Registered whatever the data (the decision reads no gate, verdict or figure)."
            )
    else:
        why = f": {record['why']}" if record.get("why") else ""
        lines.append(f"Decision rule {record['rule']} fired{why}.")
        reads = record.get("read") or []
        if reads:
            lines.append("")
            lines += [f"- {_reading_line(r)}" for r in reads]
    return lines + [""]


def _sample_sizes(extra, figure: Round) -> dict[str, Any]:
    """The sizes (and spread) a figure of numbers carries: n, sd or sdLog (with meanLog and
    seLog), positives..., and an ECE's table of bins and exact value."""
    out: dict[str, Any] = {}
    for key, v in extra.items():
        if key in _SIZES:
            out[key] = int(v)
        elif key == "bins":
            out[key] = [
                {
                    k: x if isinstance(x, (int, str)) or x is None else figure(x)
                    for k, x in row.items()
                }
                for row in v
            ]
        elif isinstance(v, str):
            out[key] = v
        else:
            out[key] = figure(v)
    return out


def _bootstrap(item) -> dict[str, Any]:
    boot = getattr(item, "bootstrap", None)
    return {"bootstrap": {"resamples": boot[0], "seed": boot[1]}} if boot else {}


def estimate_rows(rules, res, figure: Round) -> list[dict[str, Any]]:
    """One row per registered estimate: ``k`` and ``n`` for a proportion, ``n`` and the spread
    (``sd``, or ``sdLog`` for a geometric mean) for a mean, ``positives`` and ``negatives`` for
    an AUROC."""
    rows = []
    for e in rules.ESTIMATES:
        r = res.results[e.id]
        if e.id in res.counts:
            k, n, _, _ = res.counts[e.id]
            sizes: dict[str, Any] = {"k": k, "n": n}
        else:
            sizes = _sample_sizes(r.extra, figure)
        rows.append(
            {
                "id": e.id,
                "hypothesis": e.hypothesis,
                "metric": e.metric,
                **sizes,
                "estimate": figure(r.estimate),
                "lower": figure(r.lower),
                "upper": figure(r.upper),
                "interval": e.interval,
                "level": e.level,
                **_bootstrap(e),
            }
        )
    return rows


def contrast_rows(
    rules, res, figure: Round, p_value: Round, *, test_options: bool = True
) -> list[dict[str, Any]]:
    """One row per registered contrast; ``test_options`` adds its alternative and margin.

    A contrast of proportions shows each arm's ``k`` of ``n``; of numbers, each arm's ``n`` and
    figure (``measure: ratio`` for a ratio of geometric means); a paired contrast its pairs
    (``pairs``: the field, the number of pairs, the table of pairs for proportions, and the
    rows of each arm without a partner)."""
    rows = []
    for c in rules.CONTRASTS:
        r = res.results[c.id]
        e = r.extra
        if c.id in res.counts:
            k1, n1, k2, n2 = res.counts[c.id]
            a = {"k": k1, "n": n1, "estimate": figure(k1 / n1 if n1 else None)}
            b = {"k": k2, "n": n2, "estimate": figure(k2 / n2 if n2 else None)}
        else:
            a = {"n": int(e["na"]), "estimate": figure(e["a"])}
            b = {"n": int(e["nb"]), "estimate": figure(e["b"])}
        row: dict[str, Any] = {
            "id": c.id,
            "hypothesis": c.hypothesis,
            "metric": c.metric,
            "a": a,
            "b": b,
        }
        if getattr(c, "pair_by", None) is not None:
            pairs: dict[str, Any] = {"by": c.pair_by, "n": int(e["pairs"])}
            pairs.update({k: int(e[k]) for k in ("n11", "n10", "n01", "n00") if k in e})
            pairs.update(unpairedA=int(e["unpairedA"]), unpairedB=int(e["unpairedB"]))
            if getattr(c, "pair_rows", "one") == "mean":  # each side's rows averaged first
                pairs.update(rows="mean", rowsA=int(e["rowsA"]), rowsB=int(e["rowsB"]))
            row["pairs"] = pairs
        if e.get("ratio"):
            row["measure"] = "ratio"
        row.update(
            estimate=figure(r.estimate),
            lower=figure(r.lower),
            upper=figure(r.upper),
            interval=c.interval,
            level=c.level,
            **_bootstrap(c),
            test=c.test,
        )
        if test_options:
            row.update(alternative=c.alternative, margin=c.margin)
        if isinstance(e.get("exact"), str):  # a difference of means a comparison formed
            row["exact"] = e["exact"]
        elif isinstance(e.get("certified"), str):  # a ratio balls decided near a threshold
            row["certified"] = e["certified"]
        if "statistic" in e:
            # a count (McNemar's n10 - n01) stays an integer: reports print it without decimals
            stat = e["statistic"]
            stat = stat if type(stat) is int else figure(stat)
            row.update(statistic=stat, statisticName=e["statisticName"])
            if "se" in e:  # the SE the statistic divides by, and its df (None: normal)
                row.update(se=figure(e["se"]), df=figure(e["df"]))
        row.update(p=p_value(r.p), family=c.family, adjustedP=p_value(r.adjusted_p))
        decided = decided_p(r.certified)
        if decided:
            row["decidedP"] = decided
        rows.append(row)
    return rows


def decided_p(certified: Mapping[str, Any] | None) -> dict[str, str]:
    """A contrast's P values as the verdict decided them (``decidedP``): an exact test's P
    (McNemar's, up to 2,000 discordant pairs) as its fraction ``p/q``; a P value certified by
    balls (beyond) that balls decided against a threshold its float lies too near, as the
    decimal of fewest digits inside every deciding ball (on the side the verdict took,
    whichever side its float reads); the adjusted P likewise. A report decides and places
    each P with these, not with the float beside them."""
    from fractions import Fraction

    from prereg.stats.compare import Certified, decimal_text, representative

    out: dict[str, str] = {}
    for quantity, key in (("p", "p"), ("adjusted_p", "adjustedP")):
        x = (certified or {}).get(quantity)
        if isinstance(x, Certified):
            x = representative(x)  # None: no ball decided it (its float was decisive)
        if isinstance(x, Fraction):
            out[key] = decimal_text(x)
    return out


def gate_rows(rules, decision, figure: Round) -> list[dict[str, Any]]:
    from prereg.rules import threshold_fields

    rows = []
    for g in rules.GATES:
        fails = [(cid, x) for gate, cid, x in decision.failures if gate is g]
        rows.append(
            {
                "id": g.id,
                "metric": g.metric,
                "where": {k: list(v) for k, v in g.where.items()},
                "op": g.op,
                **threshold_fields(g.value),
                "passed": not fails,
                "failures": [{"cell": cid, "figure": figure(x)} for cid, x in fails],
            }
        )
    return rows


def whole_statistic(row: Mapping[str, Any]) -> str | None:
    """An analysis' statistic as the whole number it exactly is (a count such as J, U, W or
    T+), or None when it is not whole or not exact: reports show 66, not 66.0000."""
    whole = (row.get("exact") or {}).get("statistic", "").removesuffix("/1")
    return whole if whole.lstrip("-").isdigit() else None


def size_text(row: dict[str, Any]) -> str:
    """An estimate's or a contrast arm's size in words: ``k/n`` for a proportion, ``n = …``
    (with the mean) for numbers, ``positives/negatives`` for an AUROC."""
    if "k" in row:
        return f"{row['k']}/{row['n']}"
    if "positives" in row:
        return f"{row['positives']} positive, {row['negatives']} negative"
    return f"n = {row.get('n')}"


def arm_text(arm: dict[str, Any]) -> str:
    """A contrast arm: ``k/n`` for proportions, ``figure (n = …)`` for numbers."""
    if "k" in arm:
        return f"{arm['k']}/{arm['n']}"
    est = arm.get("estimate")
    return f"{'–' if est is None else f'{est:g}'} (n = {arm.get('n')})"


def pairs_text(row: dict[str, Any]) -> str:
    """A paired contrast's pairs in words ('' for an independent one)."""
    p = row.get("pairs")
    if not p:
        return ""
    text = f"{p['n']} pairs by {p['by']}"
    if "n10" in p:
        text += f" ({p['n10']} favour a, {p['n01']} favour b)"
    if p.get("rows") == "mean":
        text += (
            f", each side the mean of its rows ({p['rowsA']} rows of a, {p['rowsB']} of b averaged)"
        )
    if p["unpairedA"] or p["unpairedB"]:
        text += f"; unpaired rows left out: {p['unpairedA']} of a, {p['unpairedB']} of b"
    return text


def averaged_pairs_text(counts: dict[str, Any]) -> str:
    """An analysis' pairs of averaged rows (``pair_rows: mean``) in words."""
    text = (
        f"{counts['pairs']} pairs, each side the mean of its rows ({counts['rowsA']} rows of a,"
        f" {counts['rowsB']} of b averaged)"
    )
    if counts.get("unpairedA") or counts.get("unpairedB"):
        text += f"; unpaired rows left out: {counts['unpairedA']} of a, {counts['unpairedB']} of b"
    return text


def quantifier_rows(rules, results) -> dict[str, list[dict[str, Any]]]:
    """Per hypothesis whose rule or verdicts quantify (``at_least``, ``for_each``), the count
    behind each quantifier (:func:`prereg.rules.hypothesis_quantifiers`): ``met`` of ``of``
    against ``required``, which met it (``metBy``) and which did not (``notMetBy``), and
    whether it held. Hypotheses without a quantifier are left out."""
    from prereg.rules import hypothesis_quantifiers

    out: dict[str, list[dict[str, Any]]] = {}
    for h, (rule, verdicts) in getattr(rules, "RULES", {}).items():
        rows = hypothesis_quantifiers(rule, verdicts, results)
        if rows:
            out[h] = rows
    return out


def family_rows(rules, res) -> list[dict[str, Any]]:
    """One row per multiplicity family: its adjustment, alpha, convention for a missing P
    value, members in registration order and the members whose P value was missing."""
    from prereg.rules import family_members

    members = family_members(tuple(rules.CONTRASTS) + tuple(getattr(rules, "ANALYSES", ())))
    rows = []
    for fid, fam in rules.FAMILIES.items():
        ids = members.get(fid, [])
        rows.append(
            {
                "id": fid,
                "adjustment": fam.adjustment,
                "alpha": fam.alpha,
                "missing": fam.missing,
                "members": ids,
                "withoutP": [i for i in ids if res.results[i].p is None],
            }
        )
    return rows


def _jsonable(x):
    """A method's counts and extra figures as strict JSON: numpy scalars and arrays as numbers
    and lists, fractions as ``"p/q"``, a NaN or infinite float as None."""
    from fractions import Fraction

    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        return _jsonable(x.tolist())
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else x
    return str(x)


def analysis_rows(rules, res) -> list[dict[str, Any]]:
    """One row per registered analysis: its method and options as registered, and every
    figure of the method's Result at full precision (``Result.as_dict``), with the P value
    adjusted over its family."""
    rows = []
    for a in getattr(rules, "ANALYSES", ()):
        result = res.analyses[a.id]
        figures = result.as_dict()
        figures.pop("method", None)
        row: dict[str, Any] = {
            "id": a.id,
            "hypothesis": a.hypothesis,
            "method": a.method,
            "metric": a.metric,
            "options": _jsonable(dict(a.options)),
        }
        row.update(_jsonable(figures))
        formed = res.results[a.id].extra.get("exact")  # a mean's exact value a rule formed
        if isinstance(formed, str) and "estimate" not in (row.get("exact") or {}):
            row["exact"] = {**(row.get("exact") or {}), "estimate": formed}
        near = res.results[a.id].extra.get("certified")  # a ratio balls decided, as a decimal
        if isinstance(near, str) and "estimate" not in (row.get("exact") or {}):
            row["certified"] = {"estimate": near}
        extra = res.results[a.id].extra
        for q, text in (extra.get("exact_figures") or {}).items():  # a t, z or se balls tied
            if q not in (row.get("exact") or {}):
                row["exact"] = {**(row.get("exact") or {}), q: text}
        for q, text in (extra.get("certified_figures") or {}).items():  # ... or decided
            if q not in (row.get("exact") or {}):
                row["certified"] = {**(row.get("certified") or {}), q: text}
        row["adjustedP"] = full(res.results[a.id].adjusted_p)
        if a.family is not None:
            row["family"] = a.family
        rows.append(row)
    return rows
