"""Semantic checks of a scenario's structure: ``clusters`` (levels of clustered rows, laid out
with registered sizes or read from the item manifest) and ``ratings`` (a true category per
item, a confusion structure per rater), and that a scenario of a study with units lays out
every field its units group rows by. Each mistake is reported at its JSON path."""

from __future__ import annotations

import math

from prereg.compiler.semantic import Reporter, check, items


def _fields(spec: dict) -> tuple[dict[str, dict], dict[str, dict]]:
    """(observation contract fields, item manifest fields) by name."""
    contracts = {c.get("id"): c for c in spec.get("record_contracts") or []}
    policy = spec.get("attempts") or {}
    obs = contracts.get(policy.get("contract")) or {}
    manifest = [c for c in spec.get("record_contracts") or [] if c.get("role") == "items"]
    return (
        {f.get("name"): f for f in obs.get("fields") or []},
        {f.get("name"): f for c in manifest for f in c.get("fields") or []},
    )


def _rows_per_cell(spec: dict) -> int:
    from prereg.compiler.expand import all_cells

    rows = [c.get("rows") for c in all_cells(spec) if isinstance(c, dict)]
    return max([int(r) for r in rows if isinstance(r, int)] or [0])


def _matrix(m, k: int, ptr: str, sid, report: Reporter) -> None:
    if not isinstance(m, list) or len(m) != k:
        report(ptr, f"scenario {sid!r}: a confusion matrix has one row per category ({k})")
        return
    for i, row in enumerate(m):
        if (
            not isinstance(row, list)
            or len(row) != k
            or not all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in row)
        ):
            report(f"{ptr}/{i}", f"scenario {sid!r}: row {i} needs {k} chances from 0 to 1")
        elif not math.isclose(sum(row), 1.0, abs_tol=1e-9):
            report(f"{ptr}/{i}", f"scenario {sid!r}: row {i} sums to {sum(row):g}, not 1")


def _one_structure(entry: dict, k: int, ptr: str, sid, report: Reporter, what: str) -> None:
    has = [w for w in ("accuracy", "confusion") if entry.get(w) is not None]
    if len(has) != 1:
        report(ptr, f"scenario {sid!r}: {what} takes exactly one of accuracy and confusion")
    if entry.get("confusion") is not None:
        _matrix(entry["confusion"], k, f"{ptr}/confusion", sid, report)


def _admits(spec_field: dict, c) -> bool:
    """Whether a field (its type, allowed values and bounds) admits the value ``c``."""
    typed = {
        "integer": isinstance(c, int) and not isinstance(c, bool),
        "boolean": isinstance(c, bool),
        "string": isinstance(c, str),
        "number": isinstance(c, (int, float)) and not isinstance(c, bool),
    }.get(spec_field.get("type"), True)
    allowed = spec_field.get("allowed")
    lo, hi = spec_field.get("minimum"), spec_field.get("maximum")
    out = (allowed is not None and c not in allowed) or (
        isinstance(c, (int, float)) and ((lo is not None and c < lo) or (hi is not None and c > hi))
    )
    return typed and not out


def _read_by_rules(spec: dict) -> dict[str, str]:
    """The metrics a registered rule reads (through an estimate, contrast or analysis of a
    hypothesis with a rule, or a gate), each with where it is read."""
    out: dict[str, str] = {}
    for hi, hyp in enumerate(spec.get("hypotheses") or []):
        if not isinstance(hyp, dict) or hyp.get("reported_only"):
            continue
        if hyp.get("rule") is None and not hyp.get("verdicts"):
            continue
        for part in ("estimates", "contrasts", "analyses"):
            for j, x in enumerate(hyp.get(part) or []):
                for key in ("metric", "b_metric"):
                    if isinstance(x, dict) and x.get(key) is not None:
                        word = {"analyses": "analysis"}.get(part, part[:-1])
                        where = f"{word} {x.get('id')!r} (hypotheses/{hi}/{part}/{j})"
                        out.setdefault(str(x[key]), where)
    for gi, g in enumerate(spec.get("gates") or []):
        if isinstance(g, dict) and g.get("metric") is not None:
            out.setdefault(str(g["metric"]), f"gate {g.get('id')!r} (gates/{gi})")
    return out


def _fields_read(spec: dict, compute: dict) -> set[str]:
    """The fields a metric's compute block reads, through the derived fields it names."""
    from prereg.decide.fields import fields_read

    conds = [*(compute.get("where") or ()), *(compute.get("among") or ())]
    also = [compute["field"]] if compute.get("field") else []
    return fields_read(spec.get("derived_fields"), conds, also)


def _unlaid_item_fields(spec: dict, s: dict, manifest: dict, obs: dict) -> set[str]:
    """The fields of the item manifest that the rows diagnose lays out leave empty under a
    scenario: ``items`` writes the row id, the split, the factors' levels and the item, and the
    scenario may draw a ratings' truth or name a cluster level (the observations' own fields
    are the scenario's to draw)."""
    written = {
        name
        for name, f in manifest.items()
        if f.get("role") in ("row", "split", "item") or f.get("factor")
    }
    ratings = s.get("ratings") or {}
    drawn = {str(ratings["truth"])} if ratings.get("truth") else set()
    drawn |= {str(lv.get("field")) for lv in s.get("clusters") or [] if isinstance(lv, dict)}
    if s.get("pairing"):
        drawn.add(str(s["pairing"].get("field")))
    return {name for name in manifest if name not in obs} - written - drawn


@check
def scenario_truths(spec: dict, report: Reporter) -> None:
    """A rule's metric that reads a field of the item manifest the simulated rows leave empty
    (a program's known correctness, say) would be diagnosed on rows without it: a share
    among no rows, a verdict never supported. Refused at the scenario, naming the field."""
    if spec.get("engine") != "factorial":
        return
    obs, manifest = _fields(spec)
    if not manifest:
        return
    metrics = {str(m.get("id")): m for m in spec.get("metrics") or [] if isinstance(m, dict)}
    read = _read_by_rules(spec)
    for ptr, s in items(spec, "scenarios"):
        if s.get("metric") is not None:
            continue
        empty = _unlaid_item_fields(spec, s, manifest, obs)
        for mid, where in read.items():
            m = metrics.get(mid)
            if m is None:
                continue
            lacking = sorted(_fields_read(spec, m.get("compute") or {}) & empty)
            if lacking:
                report(
                    ptr,
                    f"scenario {s.get('id')!r} cannot drive {where}: its metric {mid!r} reads"
                    f" {lacking[0]!r} of the item manifest, which the rows diagnose lays out do"
                    " not carry (items writes the row id, split, levels and item); draw it per"
                    " item with ratings' truth",
                )
                break


@check
def scenario_structure(spec: dict, report: Reporter) -> None:
    obs, manifest = _fields(spec)
    policy = spec.get("attempts") or {}
    key = [str(k) for k in policy.get("key") or []]
    placed = {n for n, f in obs.items() if f.get("factor") or f.get("role") == "split"}
    derived = {str(d.get("id")) for d in spec.get("derived_fields") or []}
    rows = _rows_per_cell(spec)
    units = [u for u in spec.get("units") or [] if isinstance(u, dict)]
    for ptr, s in items(spec, "scenarios"):
        sid = s.get("id")
        clusters = s.get("clusters") or []
        if clusters and s.get("pairing") is not None:
            report(
                f"{ptr}/pairing",
                f"scenario {sid!r} registers both pairing and clusters (pairing is the one-level"
                " case of clusters: write it as a level)",
            )
        laid: set[str] = set()
        own_before: str | None = None  # the first laid-out level of each cell's own
        total = 0.0
        for j, lv in enumerate(clusters):
            lptr = f"{ptr}/clusters/{j}"
            field = lv.get("field")
            size = lv.get("size")
            rho = lv.get("correlation")
            if isinstance(rho, (int, float)):
                total += float(rho)
                if not 0 <= rho < 1:
                    report(
                        f"{lptr}/correlation",
                        f"scenario {sid!r}: correlation {rho:g} is not in [0, 1)",
                    )
            if field in manifest or field in placed:
                # a manifest's values, or a factor's levels (the rows of one training run, one
                # level, sharing its latent across the cells it spans), form the clusters
                if size is not None:
                    whose = (
                        "a field of the item manifest, whose values"
                        if field in manifest
                        else "a factor's field (or the split), whose levels"
                    )
                    report(
                        f"{lptr}/size",
                        f"scenario {sid!r}: {field!r} is {whose} form the clusters, so the"
                        " level has no size",
                    )
                continue
            if field not in obs:
                report(
                    f"{lptr}/field",
                    f"scenario {sid!r} clusters rows by {field!r}, which is neither a field of"
                    " the item manifest nor of the observation contract",
                )
                continue
            if lv.get("shared") and own_before is not None:
                report(
                    f"{lptr}/shared",
                    f"scenario {sid!r}: a level shared by every cell cannot lie within"
                    f" {own_before!r}, whose clusters are each cell's own",
                )
            if not lv.get("shared") and own_before is None:
                own_before = str(field)
            laid.add(str(field))
            if size is None:
                report(
                    lptr,
                    f"scenario {sid!r} lays out clusters of {field!r}, so the level needs a size"
                    " (low and high, or mean)",
                )
                continue
            uniform = size.get("low") is not None or size.get("high") is not None
            if uniform == (size.get("mean") is not None) or (
                uniform and (size.get("low") is None or size.get("high") is None)
            ):
                report(
                    f"{lptr}/size",
                    f"scenario {sid!r}: a cluster size takes low and high (uniform) or mean",
                )
                continue
            if uniform and size["low"] > size["high"]:
                report(f"{lptr}/size", f"scenario {sid!r}: low is above high")
                continue
            smallest = int(size["low"]) if uniform else 1
            most = -(-rows // smallest)
            for u in units:
                if [str(b) for b in u.get("by") or []] == [str(field)] and isinstance(
                    u.get("registered"), int
                ):
                    if most > u["registered"]:
                        report(
                            f"{lptr}/size",
                            f"scenario {sid!r}: clusters of {field!r} as small as {smallest}"
                            f" row(s) make up to {most} units of {u.get('id')!r} in a cell of"
                            f" {rows} rows, and the study registers {u['registered']}",
                        )
        if total >= 1:
            report(
                f"{ptr}/clusters",
                f"scenario {sid!r}: the levels' correlations sum to {total:g}, not below 1",
            )
        _repeated_keys(spec, s, clusters, obs, manifest, placed | derived, ptr, report)
        for j, lv in enumerate(clusters):
            if lv.get("distribution") != "beta":
                continue
            dptr = f"{ptr}/clusters/{j}/distribution"
            if len(clusters) > 1:
                report(
                    dptr,
                    f"scenario {sid!r}: a beta level is the scenario's only level (it has"
                    f" {len(clusters)}: the beta chance of a cluster does not nest in others)",
                )
            if s.get("outcome") is None and s.get("metric") is None:
                report(
                    dptr,
                    f"scenario {sid!r}: a beta level draws the chance of the outcome, and the"
                    " scenario draws none (no outcome and rates)",
                )
            if s.get("calibration"):
                report(
                    dptr,
                    f"scenario {sid!r}: a beta level draws the chance of the outcome, which"
                    " calibration draws from its curve instead (drop one of them)",
                )
        ratings = s.get("ratings")
        if ratings is not None:
            rptr = f"{ptr}/ratings"
            known = set(key) | set(manifest) | laid | placed  # a value per row
            for what in ("field", "item", "rater"):
                name = ratings.get(what)
                if name is not None and name not in (obs if what == "field" else known):
                    report(
                        f"{rptr}/{what}",
                        f"scenario {sid!r}: ratings' {what} {name!r} is not a field of the"
                        + (
                            " observation contract"
                            if what == "field"
                            else " rows (a key field, a field of the item manifest or a"
                            " laid-out cluster's field)"
                        ),
                    )
            cats = list(ratings.get("categories") or [])
            k = len(cats)
            if k == 0:
                report(f"{rptr}/categories", f"scenario {sid!r}: ratings need categories")
                continue
            truth = ratings.get("truth")
            if truth is not None and truth not in manifest and truth not in obs:
                report(
                    f"{rptr}/truth",
                    f"scenario {sid!r}: ratings' truth {truth!r} is neither a field of the item"
                    " manifest nor of the observation contract",
                )
            if truth is not None and truth == ratings.get("field"):
                report(
                    f"{rptr}/truth",
                    f"scenario {sid!r}: ratings' truth {truth!r} is also the field of the"
                    " raters' labels",
                )
            holders = [ratings.get("field")]
            if truth is not None and truth != ratings.get("field"):
                holders.append(truth)
            for name in holders:
                spec_field = obs.get(name) or manifest.get(name) or {}
                for i, c in enumerate(cats):
                    if not _admits(spec_field, c):
                        report(
                            f"{rptr}/categories/{i}",
                            f"scenario {sid!r}: category {c!r} is not a value field {name!r}"
                            " admits",
                        )
            prev = ratings.get("prevalence") or []
            if len(prev) != k:
                report(
                    f"{rptr}/prevalence",
                    f"scenario {sid!r}: prevalence has {len(prev)} chance(s) for {k} categories",
                )
            elif not math.isclose(sum(float(p) for p in prev), 1.0, abs_tol=1e-9):
                report(
                    f"{rptr}/prevalence",
                    f"scenario {sid!r}: prevalence sums to {sum(prev):g}, not 1",
                )
            # the factors an item's rows range over: those of the key's other fields and the
            # rater's (an item's rows lie in a cell per rater); an entry may not select by them
            apart = {str(ratings.get("rater"))} | {str(f) for f in key}
            apart.discard(str(ratings.get("item")))
            ranging = {
                str(spec.get("factor")): name
                for name, spec in {**manifest, **obs}.items()
                if name in apart and isinstance(spec, dict) and spec.get("factor")
            }
            for j, by in enumerate(ratings.get("prevalence_by") or []):
                for m, flt in enumerate(by.get("where") or []):
                    name = ranging.get(str(flt.get("factor")))
                    if name is not None:
                        report(
                            f"{rptr}/prevalence_by/{j}/where/{m}/factor",
                            f"scenario {sid!r}: prevalence_by selects by factor"
                            f" {flt.get('factor')!r}, whose levels the rows of one item range"
                            f" over (they are named by {name!r}); an item has one prevalence,"
                            " so select by a factor its rows share",
                        )
                chances = by.get("prevalence") or []
                if len(chances) != k:
                    report(
                        f"{rptr}/prevalence_by/{j}/prevalence",
                        f"scenario {sid!r}: prevalence has {len(chances)} chance(s) for {k}"
                        " categories",
                    )
                elif not math.isclose(sum(float(p) for p in chances), 1.0, abs_tol=1e-9):
                    report(
                        f"{rptr}/prevalence_by/{j}/prevalence",
                        f"scenario {sid!r}: prevalence sums to {sum(chances):g}, not 1",
                    )
            _one_structure(ratings, k, rptr, sid, report, "ratings")
            if ratings.get("raters") and ratings.get("rater") is None:
                report(
                    f"{rptr}/raters",
                    f"scenario {sid!r}: per-rater entries need the ratings' rater field",
                )
            seen = set()
            for i, r in enumerate(ratings.get("raters") or []):
                _one_structure(r, k, f"{rptr}/raters/{i}", sid, report, "a rater entry")
                v = str(r.get("value"))
                if v in seen:
                    report(f"{rptr}/raters/{i}/value", f"scenario {sid!r}: rater {v!r} twice")
                seen.add(v)
        if s.get("metric") is not None or spec.get("engine") != "factorial":
            continue
        # the fields units group rows by must come from somewhere in simulated data
        given = set(key) | placed | set(manifest) | laid | derived
        if not manifest and not any(k in placed for k in key):
            # a key field nothing lays out names each row alone (a string by its position in
            # its cell): one row per unit, so no unit of several rows; a field with allowed
            # values or an integer counts within a cluster and may group rows
            given -= {
                k
                for k in key
                if k not in laid | placed | derived
                and obs.get(k, {}).get("type") not in ("integer",)
                and not obs.get(k, {}).get("allowed")
            }
        drawn = {str(v.get("field")) for v in s.get("values") or []}
        drawn |= {str(c.get("field")) for c in s.get("calibration") or []}
        drawn |= {str(s["outcome"])} if s.get("outcome") else set()
        drawn |= {str(ratings.get("field"))} if ratings is not None else set()
        for hi, hyp in enumerate(spec.get("hypotheses") or []):
            if hyp.get("reported_only") or (hyp.get("rule") is None and not hyp.get("verdicts")):
                continue
            for ai, an in enumerate(hyp.get("analyses") or []):
                where = f"analysis {an.get('id')!r} (hypotheses/{hi}/analyses/{ai})"
                if an.get("method") == "auroc-difference":
                    report(
                        ptr,
                        f"scenario {sid!r} cannot drive {where}: auroc-difference ranks both"
                        " arms against one truth per item, and a scenario draws each row's"
                        " outcome on its own, so the arms of an item disagree on it (diagnose"
                        " would refuse the first simulated study); register no scenario, or"
                        " the analysis in a reported_only hypothesis",
                    )
                rating = an.get("rating")
                if rating in obs and rating not in manifest and rating not in drawn | given:
                    report(
                        ptr,
                        f"scenario {sid!r} cannot drive {where}: it reads the labels of"
                        f" {rating!r}, which the scenario does not draw (add ratings or values"
                        " for it)",
                    )
                # a wide analysis (b_metric: two fields of one row) pairs each row with
                # itself, so its pair_by may be the row's own key, which names each row alone
                wide = {an.get("pair_by")} & set(key) if an.get("b_metric") is not None else set()
                # so does two-raters with b_rating (both ratings on one row): its unit
                if an.get("b_rating") is not None and an.get("unit") in key:
                    wide.add(an.get("unit"))
                for w in ("unit", "rater", "cluster", "pair_by"):
                    name = an.get(w)
                    if w in ("pair_by", "unit") and name in wide:
                        continue
                    if name is not None and name in obs and name not in given:
                        report(
                            ptr,
                            f"scenario {sid!r} cannot drive {where}: its {w} {name!r} is no"
                            " field the scenario lays out (add a clusters level for it)",
                        )
        for ui, u in enumerate(units):
            for b in u.get("by") or []:
                if b not in given:
                    report(
                        ptr,
                        f"scenario {sid!r} cannot drive unit {u.get('id')!r}: it groups rows by"
                        f" {b!r}, which the scenario does not lay out (add a clusters level for"
                        f" {b!r}; units/{ui})",
                    )


def _repeated_keys(spec, s, clusters, obs, manifest, placed, ptr, report) -> None:
    """Refuse clusters larger than the rows their key fields tell apart: without an item
    manifest the rows of the innermost laid-out cluster are named by the key fields nothing
    else writes, which take their allowed values' combinations in turn; past the product of
    their numbers of values the keys repeat, and score refuses simulate's records as
    duplicates (an integer field, counting the rows, or a string, naming each row's place in
    its cell, tells any number apart)."""
    from prereg.decide.names import row_name

    policy = spec.get("attempts") or {}
    if manifest or not policy.get("key"):
        return
    sized = [
        (j, lv)
        for j, lv in enumerate(clusters)
        if isinstance(lv, dict)
        and isinstance(lv.get("size"), dict)
        and lv.get("field") in obs
        and lv.get("field") not in placed
    ]
    if not sized:
        return
    j, inner = sized[-1]
    laid = {str(lv.get("field")) for _, lv in sized}
    leaves = [str(k) for k in row_name(policy) if str(k) not in laid | placed]
    turns = []
    for k in leaves:
        f = obs.get(k) or {}
        if f.get("type") == "integer" or not f.get("allowed"):
            return  # counted, or named by the row's place in its cell: never repeated
        turns.append((k, len(f["allowed"])))
    combos = math.prod(n for _, n in turns)
    size = inner["size"]
    high = size.get("high")
    if isinstance(high, (int, float)) and high <= combos:
        return
    if size.get("mean") is None and not isinstance(high, (int, float)):
        return  # a malformed size, reported above
    held = f"up to {high:g} rows" if size.get("mean") is None else "any number of rows (mean)"
    named = ", ".join(f"{k} ({n} values)" for k, n in turns) or "none"
    report(
        f"{ptr}/clusters/{j}/size",
        f"scenario {s.get('id')!r}: clusters of {inner.get('field')!r} hold {held}, but the key"
        f" fields laid out in them (taking their values in turn: {named}) tell only {combos}"
        " rows of a cluster apart, so simulate would write repeated keys that score refuses;"
        f" draw clusters of at most {combos} rows (low and high), or name the rows by an"
        " integer key field counting them",
    )
