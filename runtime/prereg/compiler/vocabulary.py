"""Semantic checks of the scoring vocabulary: attempt policy, derived fields, metric compute
blocks, scenarios, contrast alternatives and margins.

A field a condition names must be a field of a row: a field of the item manifest (the record
contract with role ``items``), of the attempt policy's observation contract, a derived field
registered earlier, or a field the study's engine provides (:func:`prereg.engines.row_fields`).
"""

from __future__ import annotations

from prereg.compiler.semantic import Reporter, _levels, check, items, no_split
from prereg.splits import of as split_of

#: The values of the language's AttemptCount (spec/prereg.linkml.yaml; a test holds them equal).
ATTEMPT_COUNTS = ("last", "first", "first-success", "last-any", "first-match")

_VALUE_OPS = ("eq", "ne", "lt", "le", "gt", "ge")
_NULL_OPS = ("is_null", "not_null")


def _contracts(spec: dict) -> dict[str, dict]:
    return {c.get("id"): c for c in spec.get("record_contracts") or []}


def _field_names(contract: dict | None) -> list[str]:
    return [f.get("name") for f in (contract or {}).get("fields") or []]


def row_fields(spec: dict) -> set[str]:
    """The fields every row has before derived fields are added."""
    from prereg.engines import row_fields as engine_row_fields

    names: set[str] = set(engine_row_fields(str(spec.get("engine"))))
    for c in spec.get("record_contracts") or []:
        if c.get("role") == "items":
            names.update(_field_names(c))
    policy = spec.get("attempts") or {}
    names.update(_field_names(_contracts(spec).get(policy.get("contract"))))
    return names


def _conditions(
    conds, ptr: str, known: set[str], what: str, report: Reporter, *, spec: dict, fields=None
) -> None:
    for i, c in enumerate(conds or []):
        cptr = f"{ptr}/{i}"
        name, op = c.get("field"), c.get("op")
        if name not in (fields if fields is not None else known):
            report(f"{cptr}/field", f"{what} names unknown field {name!r}")
        other = c.get("other")
        has_value = "value" in c and c.get("value") is not None
        if op in _NULL_OPS:
            if has_value or other is not None or c.get("values"):
                report(cptr, f"{what}: op {op} takes no value, values or other")
        elif op in ("in", "not_in"):
            if not c.get("values") or has_value or other is not None:
                report(
                    cptr, f"{what}: op {op} takes a non-empty values list (and no value or other)"
                )
        elif op in _VALUE_OPS:
            if has_value == (other is not None) or c.get("values"):
                report(cptr, f"{what}: op {op} takes exactly one of value and other")
            if other is not None and other not in (fields if fields is not None else known):
                report(f"{cptr}/other", f"{what} compares with unknown field {other!r}")
            if (
                op not in ("eq", "ne")
                and has_value
                and (isinstance(c["value"], bool) or not isinstance(c["value"], (int, float)))
            ):
                report(f"{cptr}/value", f"{what}: op {op} compares with a number")
            if op not in ("eq", "ne"):
                # an order holds only between numbers: on anything else it is never true
                for key, named in (("field", name), ("other", other)):
                    why = _not_numeric(spec, named) if named is not None else None
                    if why is not None:
                        report(
                            f"{cptr}/{key}",
                            f"{what}: op {op} orders numbers, and {named!r} is {why}",
                        )


def _expansions(
    policy: dict, contract: dict, items: dict | None, report: Reporter, spec: dict | None = None
) -> None:
    """Each expansion names a key field that names rows, which the manifest does not carry,
    with either values (of the field's allowed values) or a count."""
    from prereg.decide.names import row_name

    exp = policy.get("expand") or []
    if not exp:
        return
    if items is None:
        report(
            "/attempts/expand",
            "expand multiplies the item manifest's records, and the study has no item manifest"
            " (a record contract with role items); without one, the rows are the full keys"
            " found in the observations",
        )
        return
    naming = row_name(policy)[1:] if policy.get("key") else []
    fields = {f.get("name"): f for f in contract.get("fields") or []}
    item_names = {f.get("name") for f in items.get("fields") or []}
    item_factors = {f.get("factor") for f in items.get("fields") or [] if f.get("factor")}
    seen: set[str] = set()
    for i, e in enumerate(exp):
        ptr = f"/attempts/expand/{i}"
        name = e.get("field")
        f = fields.get(name) or {}
        if name in seen:
            report(f"{ptr}/field", f"expand lists {name!r} twice")
        seen.add(name)
        if policy.get("key") and name == policy["key"][0]:
            report(
                f"{ptr}/field",
                f"expand names {name!r}, the first key field, which the manifest's records"
                " name themselves (role row); expand multiplies them by later key fields",
            )
        elif name not in naming:
            report(
                f"{ptr}/field",
                f"expand names {name!r}, which is not a key field naming the rows (key:"
                f" {', '.join(map(str, policy.get('key') or []))})",
            )
        elif name in item_names or (f.get("factor") and f.get("factor") in item_factors):
            report(
                f"{ptr}/field",
                f"expand names {name!r}, which the item manifest {items.get('id')!r} already"
                " carries: each manifest record names its own value",
            )
        has_values, has_count = bool(e.get("values")), e.get("count") is not None
        if has_values == has_count:
            report(ptr, f"expand of {name!r} takes exactly one of values and count")
        allowed = f.get("allowed")
        if has_values and allowed:
            wrong = [v for v in e["values"] if v not in allowed]
            if wrong:
                report(
                    f"{ptr}/values",
                    f"expand of {name!r}: {wrong} not among its allowed values {allowed}",
                )
        if has_values and len({repr(v) for v in e["values"]}) < len(e["values"]):
            report(f"{ptr}/values", f"expand of {name!r} lists a value twice")
        if has_count and f.get("type") not in (None, "integer", "number"):
            report(
                f"{ptr}/count",
                f"expand of {name!r}: count numbers 1..n, and it is a {f.get('type')}",
            )
    factor_fields = {n for n, f in fields.items() if f.get("factor") or f.get("role") == "split"}
    if spec is not None and not any(e.get("field") in factor_fields for e in exp):
        from prereg.compiler.expand import all_cells

        size = 1
        for e in exp:
            size *= len(e.get("values") or []) or int(e.get("count") or 1)
        for c in all_cells(spec):
            rows = c.get("rows")
            if isinstance(rows, int) and rows % size:
                report(
                    "/attempts/expand",
                    f"each manifest record stands for {size} rows (the expansion), and cell"
                    f" {c.get('id')!r} registers {rows} rows, not a multiple of {size}",
                )


@check
def attempt_policy_resolves(spec: dict, report: Reporter) -> None:
    policy = spec.get("attempts")
    if not policy:
        return
    contract = _contracts(spec).get(policy.get("contract"))
    if contract is None:
        report(
            "/attempts/contract",
            f"attempt policy names unknown record contract {policy.get('contract')!r}",
        )
        return
    types = {f.get("name"): f.get("type") for f in contract.get("fields") or []}
    cid = contract.get("id")
    from prereg.decide.names import row_name

    key = list(policy.get("key") or [])
    for i, name in enumerate(key):
        if name not in types:
            report(f"/attempts/key/{i}", f"key field {name!r} is not a field of {cid!r}")
    if len(set(key)) < len(key):
        report("/attempts/key", "a key field is listed twice")
    items = next((c for c in _contracts(spec).values() if c.get("role") == "items"), None)
    if items is not None and key and all(k in types for k in key):
        # with a manifest, the registered rows are its records: each field naming a row must
        # be there too (by name, or as the field of the same factor or the split)
        by_name = {f.get("name") for f in items.get("fields") or []}
        factor_of = {f.get("name"): f.get("factor") for f in contract.get("fields") or []}
        split_of = {f.get("name") for f in contract.get("fields") or [] if f.get("role") == "split"}
        item_factors = {f.get("factor") for f in items.get("fields") or [] if f.get("factor")}
        item_split = any(f.get("role") == "split" for f in items.get("fields") or [])
        expanded = {e.get("field") for e in policy.get("expand") or []}
        for name in row_name(policy)[1:]:
            if name in by_name or name in expanded:
                continue
            if factor_of.get(name) and factor_of[name] in item_factors:
                continue
            if name in split_of and item_split:
                continue
            report(
                f"/attempts/key/{key.index(name)}",
                f"key field {name!r} names the row together with {key[0]!r}, but the item"
                f" manifest {items.get('id')!r} has no field {name!r} (nor one holding the same"
                f" factor), so its records cannot list the rows: add {name} to the manifest,"
                f" register its values (expand: [{{field: {name}, values: [...]}}]),"
                f" or fix {name} to one value with a where condition ({{field: {name}, op: eq,"
                " value: ...})",
            )
    _expansions(policy, contract, items, report, spec)
    order = policy.get("order")
    spec_of = {f.get("name"): f for f in contract.get("fields") or []}
    if order is None:
        pass  # without an order a series is one record
    elif order not in types:
        report("/attempts/order", f"order field {order!r} is not a field of {cid!r}")
    elif types[order] not in ("integer", "number"):
        report("/attempts/order", f"order field {order!r} must be a number")
    elif spec_of[order].get("nullable") or spec_of[order].get("required") is False:
        report(
            "/attempts/order",
            f"order field {order!r} of {cid!r} may be null or absent, so some attempts would"
            " have no place in their series: make it required and not nullable, or leave out"
            " order (a series of one record)",
        )
    fields = set(types)
    for part in ("failed", "failed_if_any", "where", "select"):
        _conditions(
            policy.get(part),
            f"/attempts/{part}",
            fields,
            "attempt policy",
            report,
            spec=spec,
            fields=fields,
        )
    deciding = [p for p in ("order", "failed", "failed_if_any", "select") if policy.get(p)]
    if policy.get("counts") is None and deciding:
        report(
            "/attempts",
            f"missing required key: 'counts' (with {' and '.join(deciding)} the policy must say"
            " which attempt of a row counts, and whether a failed one does; one of: "
            + ", ".join(ATTEMPT_COUNTS)
            + "); without order, failed, failed_if_any and select a row has one record and"
            " counts may be left out",
        )
    elif (policy.get("counts") == "first-match") != bool(policy.get("select")):
        report(
            "/attempts/counts",
            "counts first-match needs select (the conditions of the attempt that counts), and"
            " select is only for first-match",
        )


@check
def derived_fields_resolve(spec: dict, report: Reporter) -> None:
    known = row_fields(spec)
    for ptr, d in items(spec, "derived_fields"):
        did = d.get("id")
        what = f"derived field {did!r}"
        if did in known:
            report(f"{ptr}/id", f"{what} has the name of an existing field")
        if (d.get("cases") is None) == (d.get("test") is None):
            report(ptr, f"{what} takes exactly one of cases and test")
        for j, case in enumerate(d.get("cases") or []):
            _conditions(case.get("when"), f"{ptr}/cases/{j}/when", known, what, report, spec=spec)
        _conditions(d.get("test"), f"{ptr}/test", known, what, report, spec=spec)
        known = known | {did}


def _not_numeric(spec: dict, name: str) -> str | None:
    """Why the row field ``name`` holds no number (None when it may: a numeric field of a
    record contract, a derived field with a numeric case, a field the engine provides)."""
    for d in spec.get("derived_fields") or []:
        if d.get("id") == name:
            if d.get("test") is not None:
                return "a derived test (true or false), not a number"
            values = [case.get("value") for case in d.get("cases") or []]
            if any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                return None
            return "a derived field none of whose cases gives a number"
    policy = spec.get("attempts") or {}
    for contract in spec.get("record_contracts") or []:
        if contract.get("role") != "items" and contract.get("id") != policy.get("contract"):
            continue
        for f in contract.get("fields") or []:
            if f.get("name") == name and f.get("type") not in ("integer", "number"):
                return f"a {f.get('type')} field of {contract.get('id')!r}, not a number"
    return None


def all_fields(spec: dict) -> set[str]:
    return row_fields(spec) | {d.get("id") for d in spec.get("derived_fields") or []}


@check
def metric_compute_well_formed(spec: dict, report: Reporter) -> None:
    known = all_fields(spec)
    for ptr, m in items(spec, "metrics"):
        c = m.get("compute")
        if c is None:
            continue
        what = f"metric {m.get('id')!r}"
        kind = c.get("kind")
        cptr = f"{ptr}/compute"
        if kind == "coverage" and (c.get("where") or c.get("among") or c.get("field")):
            report(cptr, f"{what}: coverage takes no where, among or field")
        if kind == "proportion":
            if not c.get("where"):
                report(cptr, f"{what}: a proportion needs where (the rows it counts)")
            if c.get("field") is not None:
                report(f"{cptr}/field", f"{what}: field is for mean")
        if kind in ("mean", "geometric_mean", "ece", "auroc"):
            if c.get("field") not in known:
                report(f"{cptr}/field", f"{what}: {kind} of unknown field {c.get('field')!r}")
            elif (kept := _not_numeric(spec, c.get("field"))) is not None:
                report(f"{cptr}/field", f"{what}: {kind} of {c.get('field')!r}, {kept}")
        if kind in ("mean", "geometric_mean") and c.get("where"):
            report(f"{cptr}/where", f"{what}: a {kind} takes among, not where")
        if kind in ("ece", "auroc") and not c.get("where"):
            sense = "correct" if kind == "ece" else "positive"
            report(cptr, f"{what}: {kind} needs where (the rows that are {sense})")
        if c.get("transform") not in (None, "none") and kind != "mean":
            report(f"{cptr}/transform", f"{what}: transform is for mean")
        if kind == "ece":
            bins = c.get("bins") or []
            nums = [b for b in bins if isinstance(b, (int, float)) and not isinstance(b, bool)]
            if len(nums) != len(bins) or len(bins) < 2:
                report(f"{cptr}/bins", f"{what}: ece needs bins, at least two edges")
            elif any(b >= a2 for b, a2 in zip(nums, nums[1:], strict=False)):
                report(f"{cptr}/bins", f"{what}: the bin edges must be strictly increasing")
        elif c.get("bins") or c.get("closed") is not None:
            report(f"{cptr}/bins", f"{what}: bins and closed are for ece")
        _conditions(c.get("where"), f"{cptr}/where", known, what, report, spec=spec)
        _conditions(c.get("among"), f"{cptr}/among", known, what, report, spec=spec)


def _cell_matches(flts: list, cell: dict) -> bool | None:
    """Whether a cell's rows all meet these level filters (None: a filter names a row
    attribute, so some rows of the cell may and others may not)."""
    attrs = {"split": split_of(cell)}
    for r in cell.get("levels") or []:
        if isinstance(r, dict):
            attrs[str(r.get("factor"))] = str(r.get("level"))
    out: bool | None = True
    for f in flts:
        name = f.get("factor")
        if name not in attrs:
            out = None
            continue
        if attrs[name] not in [str(v) for v in f.get("levels") or []]:
            return False
    return out


def cells_calibrated(s: dict, cells: list) -> list:
    """The cells (of ``cells``) whose rows' outcome a scenario's calibration curve draws: with
    an outcome, the cells a calibration entry's ``where`` takes whole; those need no rate."""
    entries = [c for c in s.get("calibration") or [] if isinstance(c, dict)]
    if s.get("outcome") is None or not entries:
        return []
    return [
        cell for cell in cells if any(_cell_matches(e.get("where") or [], cell) for e in entries)
    ]


def _outcome_values(ptr: str, s: dict, contract: dict, report: Reporter) -> None:
    """A scenario's ``outcome_values``: two different values, neither null, each one the
    outcome field holds (its type, allowed values and bounds, as its JSON Schema says)."""
    import json

    import jsonschema

    from prereg.compiler.contracts import field_schema

    sid, name = s.get("id"), s.get("outcome")
    field = next(f for f in contract.get("fields") or [] if f.get("name") == name)
    if field.get("type") not in ("boolean", "integer", "number", "string"):
        report(
            f"{ptr}/outcome",
            f"scenario {sid!r}: outcome {name!r} is {field.get('type')}; a scenario writes its"
            " outcome into a boolean, integer, number or string field",
        )
        return
    got = s["outcome_values"]
    schema = field_schema(field)
    for key in ("holds", "otherwise"):
        value = got.get(key)
        if value is None:
            report(
                f"{ptr}/outcome_values/{key}",
                f"scenario {sid!r}: outcome_values.{key} is null; a drawn outcome is written as"
                " a value (null marks no outcome)",
            )
        elif not jsonschema.Draft202012Validator(schema).is_valid(value):
            report(
                f"{ptr}/outcome_values/{key}",
                f"scenario {sid!r}: outcome_values.{key} {json.dumps(value)} is not a value field"
                f" {name!r} of {contract.get('id')!r} holds ({field_text(field)})",
            )
    a, b = got.get("holds"), got.get("otherwise")
    if a is not None and type(a) is type(b) and a == b:
        report(
            f"{ptr}/outcome_values",
            f"scenario {sid!r}: outcome_values writes {json.dumps(a)} both when the outcome holds and"
            " when it does not",
        )


def field_text(field: dict) -> str:
    """A field's type and the bounds a value must meet, in words."""
    out = [str(field.get("type"))]
    if field.get("allowed"):
        out.append(f"allowed {list(field['allowed'])}")
    for key in ("minimum", "maximum", "min_length", "pattern"):
        if field.get(key) is not None:
            out.append(f"{key} {field[key]!r}")
    return ", ".join(out)


@check
def scenarios_resolve(spec: dict, report: Reporter) -> None:
    from prereg.compiler.expand import all_cells
    from prereg.compiler.semantic import _selectable

    selectable = _selectable(spec)
    policy = spec.get("attempts") or {}
    contract = _contracts(spec).get(policy.get("contract"))
    types = {f.get("name"): f.get("type") for f in (contract or {}).get("fields") or []}
    metrics = {m.get("id"): m for m in spec.get("metrics") or []}
    cells = [c for c in all_cells(spec) if isinstance(c, dict)]
    seen: dict[str, str] = {}
    for ptr, s in items(spec, "scenarios"):
        sid = s.get("id")
        if sid in seen:
            report(f"{ptr}/id", f"duplicate scenario id {sid!r} (first at {seen[sid]})")
        seen.setdefault(sid, ptr)
        draws_only = s.get("outcome") is None and s.get("metric") is None
        if s.get("outcome_values") is not None and s.get("outcome") is None:
            report(
                f"{ptr}/outcome_values",
                f"scenario {sid!r} has outcome_values but no outcome field to write them into",
            )
        if s.get("outcome") is not None and s.get("metric") is not None:
            report(ptr, f"scenario {sid!r} takes exactly one of outcome and metric")
        elif draws_only and not (s.get("values") or s.get("ratings")):
            report(
                ptr,
                f"scenario {sid!r} takes one of outcome and metric (or, drawing no outcome,"
                " values or ratings)",
            )
        elif draws_only and s.get("rates"):
            report(f"{ptr}/rates", f"scenario {sid!r} draws no outcome, so it has no rates")
        elif draws_only and contract is None:
            report(ptr, "a scenario needs the attempt policy's observation contract (attempts)")
        elif not draws_only and not s.get("rates") and not cells_calibrated(s, cells):
            report(
                ptr,
                f"scenario {sid!r} needs rates: the true chance of its outcome (or, for a"
                " confidence, calibration entries whose curve draws the outcome of every cell)",
            )
        elif draws_only:
            pass  # numbers or ratings only: checked with their words
        elif s.get("metric") is not None:
            m = metrics.get(s["metric"])
            if m is None:
                report(f"{ptr}/metric", f"scenario {sid!r} names unknown metric {s['metric']!r}")
            elif (m.get("compute") or {}).get("kind") != "proportion":
                report(
                    f"{ptr}/metric",
                    f"scenario {sid!r}: metric {s['metric']!r} is not a proportion (a compute"
                    " block of kind proportion), so a rate cannot be its chance",
                )
        elif contract is None:
            report(ptr, "a scenario needs the attempt policy's observation contract (attempts)")
        elif s.get("outcome") not in types:
            report(
                f"{ptr}/outcome",
                f"scenario {sid!r}: outcome {s.get('outcome')!r} is not a field of"
                f" {contract.get('id')!r}",
            )
        elif s.get("outcome_values") is not None:
            _outcome_values(ptr, s, contract, report)
        elif types.get(s.get("outcome")) != "boolean":
            kind = types.get(s.get("outcome"))
            report(
                f"{ptr}/outcome",
                f"scenario {sid!r}: outcome {s.get('outcome')!r} is not a boolean field of"
                f" {contract.get('id')!r} (it is {kind}): say what the scenario writes there"
                " with outcome_values (for an outcome logged as 1 and 0: {holds: 1,"
                " otherwise: 0})",
            )
        for j, v in enumerate(s.get("values") or []):
            vptr = f"{ptr}/values/{j}"
            if types.get(v.get("field")) not in ("number", "integer"):
                report(
                    f"{vptr}/field",
                    f"scenario {sid!r} draws {v.get('field')!r}, which is not a numeric field of"
                    " the observation contract",
                )
            dist = v.get("distribution")
            need = ("low", "high") if dist == "uniform" else ("mean", "sd")
            missing = [k for k in need if v.get(k) is None]
            if missing:
                report(vptr, f"scenario {sid!r}: a {dist} draw needs {' and '.join(missing)}")
            if v.get("low") is not None and v.get("high") is not None and v["low"] > v["high"]:
                report(vptr, f"scenario {sid!r}: low is above high")
            for k, flt in enumerate(v.get("where") or []):
                if flt.get("factor") not in selectable:
                    report(
                        f"{vptr}/where/{k}/factor",
                        f"scenario {sid!r} selects on unknown factor {flt.get('factor')!r}"
                        + no_split(flt.get("factor")),
                    )
        drawn = {str(v.get("field")) for v in s.get("values") or []}
        by_values = set(drawn)  # several calibration entries may draw one field, cell by cell
        for j, c in enumerate(s.get("calibration") or []):
            cptr = f"{ptr}/calibration/{j}"
            if s.get("outcome") is None:
                report(
                    cptr,
                    f"scenario {sid!r}: a calibration curve draws the outcome field, so the"
                    " scenario names an outcome (not a metric)",
                )
            if types.get(c.get("field")) != "number":
                report(
                    f"{cptr}/field",
                    f"scenario {sid!r} draws confidence {c.get('field')!r}, which is not a number"
                    " field of the observation contract",
                )
            if c.get("field") in by_values:
                report(
                    f"{cptr}/field",
                    f"scenario {sid!r} draws {c.get('field')!r} both by values and by calibration",
                )
            dist = c.get("distribution")
            need = ("low", "high") if dist == "uniform" else ("mean", "sd")
            missing = [k for k in need if c.get(k) is None]
            if missing:
                report(cptr, f"scenario {sid!r}: a {dist} draw needs {' and '.join(missing)}")
            if c.get("low") is not None and c.get("high") is not None and c["low"] > c["high"]:
                report(cptr, f"scenario {sid!r}: low is above high")
            if c.get("curve") == "overconfident" and c.get("margin") is None:
                report(cptr, f"scenario {sid!r}: an overconfident curve needs its margin")
            if c.get("curve") == "calibrated" and c.get("margin") is not None:
                report(f"{cptr}/margin", f"scenario {sid!r}: a calibrated curve has no margin")
            for k, flt in enumerate(c.get("where") or []):
                if flt.get("factor") not in selectable:
                    report(
                        f"{cptr}/where/{k}/factor",
                        f"scenario {sid!r} selects on unknown factor {flt.get('factor')!r}",
                    )
            if c.get("field") is not None:
                drawn.add(str(c["field"]))
        pairing = s.get("pairing")
        if pairing is not None:
            item_fields = {
                f.get("name")
                for c in spec.get("record_contracts") or []
                if c.get("role") == "items"
                for f in c.get("fields") or []
            }
            if s.get("metric") is not None:
                report(f"{ptr}/pairing", f"scenario {sid!r}: pairing needs observations drawn")
            if pairing.get("field") not in item_fields:
                field = pairing.get("field")
                hint = (
                    ""
                    if item_fields
                    else f"; the study has none: pair the rows of a log by {field!r} with a"
                    " cluster level of one row shared by every cell, clusters: [{field:"
                    f" {field}, correlation: {pairing.get('correlation')}, shared: true,"
                    " size: {low: 1, high: 1}}] (docs/vocabulary.md, Scenarios)"
                )
                report(
                    f"{ptr}/pairing/field",
                    f"scenario {sid!r} pairs rows by {field!r}, which is not a"
                    " field of the item manifest (a record contract with role items)" + hint,
                )
            rho = pairing.get("correlation")
            if isinstance(rho, (int, float)) and not 0 <= rho < 1:
                report(
                    f"{ptr}/pairing/correlation",
                    f"scenario {sid!r}: correlation {rho:g} is not in [0, 1)",
                )
        if s.get("ratings") is not None:
            drawn.add(str(s["ratings"].get("field")))
        _drives_every_rule(spec, s, ptr, drawn, report)
        rates = s.get("rates") or []
        by = (s.get("ratings") or {}).get("prevalence_by") or []
        filtered = [(f"{ptr}/rates/{j}", r) for j, r in enumerate(rates)]
        filtered += [(f"{ptr}/ratings/prevalence_by/{j}", r) for j, r in enumerate(by)]
        for eptr, rate in filtered:
            for k, flt in enumerate(rate.get("where") or []):
                fptr = f"{eptr}/where/{k}"
                factor = flt.get("factor")
                if factor not in selectable:
                    report(
                        f"{fptr}/factor",
                        f"scenario {sid!r} selects on unknown factor {factor!r}{no_split(factor)}",
                    )
                    continue
                for lv in flt.get("levels") or []:
                    if str(lv) not in selectable[factor]:
                        report(
                            f"{fptr}/levels",
                            f"scenario {sid!r} selects level {lv!r}, which factor {factor!r} does not have",
                        )
        cov = s.get("coverage")
        sized = [int(c["rows"]) for c in cells if isinstance(c.get("rows"), int)]
        if isinstance(cov, int | float) and sized:
            from prereg.decide.scenarios import kept_rows

            if all(kept_rows(n, float(cov)) == 0 for n in sized):
                report(
                    f"{ptr}/coverage",
                    f"scenario {sid!r}: coverage {cov:g} observes no row of any cell (each"
                    f" cell's rows times {cov:g}, rounded down, is 0; the largest cell has"
                    f" {max(sized)}), so simulate would write no observation and score refuses"
                    " an empty file",
                )
        effects = [float(e) for e in s.get("effects") or []]
        if effects and len(set(effects)) != len(effects):
            report(f"{ptr}/effects", f"scenario {sid!r} lists an effect size twice")
        moving = [j for j, r in enumerate(rates) if r.get("effect") not in (None, 0, 0.0)]
        if moving and not effects:
            report(
                f"{ptr}/rates/{moving[0]}/effect",
                f"scenario {sid!r}: a rate moves with the effect size, so the scenario needs"
                " effects (the sizes diagnose runs it at)",
            )
        for j, r in enumerate(rates):
            coef = float(r.get("effect") or 0.0)
            for e in effects:
                x = float(r.get("rate", 0.0)) + coef * e
                if not 0.0 <= x <= 1.0:
                    report(
                        f"{ptr}/rates/{j}",
                        f"scenario {sid!r}: at effect {e:g} this rate is {x:g}, not a probability",
                    )
                    break
        curved = cells_calibrated(s, cells)
        for cell in cells if rates or not draws_only else ():
            if any(cell is c for c in curved):
                continue  # the calibration curve draws the outcome of the cell's rows
            for r in rates:
                hit = _cell_matches(r.get("where") or [], cell)
                if hit is None:
                    continue  # the rate may take some rows of the cell: look further
                if hit:
                    break
            else:
                if not rates and not curved:
                    break  # said above: the scenario needs rates
                also = ", or a calibration entry whose where takes the cell" if curved else ""
                report(
                    f"{ptr}/rates",
                    f"scenario {sid!r} gives no rate for the rows of cell {cell.get('id')!r}"
                    + (", whose outcome no calibration entry draws" if curved else "")
                    + f" (end with a rate without where{also})",
                )
                break


def _numbers_read_by_rules(spec: dict) -> dict[str, str]:
    """Observation fields whose numbers a registered rule reads (the field of a mean,
    geometric mean, ECE or AUROC metric that an estimate, contrast or analysis of a hypothesis
    with a rule, or a gate, reads), each with what reads it."""
    policy = spec.get("attempts") or {}
    contract = _contracts(spec).get(policy.get("contract"))
    observed = set(_field_names(contract))
    for c in spec.get("record_contracts") or []:
        if c.get("role") == "items":
            observed -= set(_field_names(c))  # a manifest's numbers are not drawn
    numeric = {}
    for m in spec.get("metrics") or []:
        comp = m.get("compute") or {}
        if comp.get("kind") in ("mean", "geometric_mean", "ece", "auroc"):
            if comp.get("field") in observed:
                numeric[m.get("id")] = str(comp["field"])
    out: dict[str, str] = {}
    for hyp in spec.get("hypotheses") or []:
        if hyp.get("reported_only") or (hyp.get("rule") is None and not hyp.get("verdicts")):
            continue
        for part, what in (("estimates", "estimate"), ("contrasts", "contrast")):
            for item in hyp.get(part) or []:
                f = numeric.get(item.get("metric"))
                if f is not None:
                    out.setdefault(f, f"{what} {item.get('id')!r} (metric {item.get('metric')!r})")
        for item in hyp.get("analyses") or []:
            f = numeric.get(item.get("metric"))
            if f is not None:
                out.setdefault(f, f"analysis {item.get('id')!r} (metric {item.get('metric')!r})")
    for g in spec.get("gates") or []:
        f = numeric.get(g.get("metric"))
        if f is not None:
            out.setdefault(f, f"gate {g.get('id')!r} (metric {g.get('metric')!r})")
    return out


def _drives_every_rule(spec: dict, s: dict, ptr: str, drawn: set[str], report: Reporter) -> None:
    """A scenario that draws observations (an outcome field) draws every number a registered
    rule reads: otherwise simulate writes rows without it and diagnose has nothing to decide
    the rule on."""
    if s.get("metric") is not None:
        return
    for name, reader in sorted(_numbers_read_by_rules(spec).items()):
        if name not in drawn:
            report(
                ptr,
                f"scenario {s.get('id')!r} cannot drive the registered rules: {reader} reads"
                f" the numbers of {name!r}, which the scenario does not draw (add values or"
                " calibration for it)",
            )


@check
def contrast_tests_well_formed(spec: dict, report: Reporter) -> None:
    for hptr, hyp in items(spec, "hypotheses"):
        for i, c in enumerate(hyp.get("contrasts") or []):
            ptr = f"{hptr}/contrasts/{i}"
            test = c.get("test")
            margin = c.get("margin")
            if test == "none" and (c.get("alternative") is not None or margin is not None):
                report(ptr, f"contrast {c.get('id')!r} has no test, so no alternative or margin")


@check
def item_fields_name_factors(spec: dict, report: Reporter) -> None:
    from prereg.decide.names import level_text

    levels = _levels(spec)
    for ptr, contract in items(spec, "record_contracts"):
        for j, f in enumerate(contract.get("fields") or []):
            factor = f.get("factor")
            if factor is None:
                continue
            fptr = f"{ptr}/fields/{j}"
            if factor not in levels:
                report(f"{fptr}/factor", f"field {f.get('name')!r} names unknown factor {factor!r}")
                continue
            if f.get("type") not in ("string", "integer", "number", "boolean"):
                report(
                    f"{fptr}/type",
                    f"field {f.get('name')!r} holds a level, so it is a string, integer, number"
                    " or boolean",
                )
            elif f.get("type") != "string" and not f.get("allowed"):
                report(
                    f"{fptr}/allowed",
                    f"field {f.get('name')!r} holds a level as a {f.get('type')}, so it lists the"
                    f" levels' values as the data write them (allowed: each level id of"
                    f" {factor!r} as a {f.get('type')})",
                )
            extra = [a for a in f.get("allowed") or [] if level_text(a) not in levels[factor]]
            if extra:
                report(
                    f"{fptr}/allowed",
                    f"field {f.get('name')!r} allows {extra}, which are not levels of {factor!r}",
                )
            allowed = {level_text(a) for a in f.get("allowed") or []}
            missing = [lv for lv in levels[factor] if allowed and lv not in allowed]
            if missing:
                report(
                    f"{fptr}/allowed",
                    f"field {f.get('name')!r} leaves out {missing}, levels of {factor!r}"
                    " (the study's own rows at those levels would break their contract)",
                )


@check
def split_fields_allow_the_splits(spec: dict, report: Reporter) -> None:
    """A field with role ``split`` is a string, and one that lists allowed values allows
    only registered splits; in the contract of the study's own rows (role ``items``), every
    registered split, as a field naming a factor lists every level of it.  A contract of
    another input may allow fewer (an engine that reads labels of two splits only says
    which, and checks it)."""
    splits = [str(s.get("id")) for s in spec.get("splits") or []]
    for ptr, contract in items(spec, "record_contracts"):
        for j, f in enumerate(contract.get("fields") or []):
            if f.get("role") != "split":
                continue
            if not splits:
                report(
                    f"{ptr}/fields/{j}/role",
                    f"field {f.get('name')!r} holds a split, but the study registers no splits"
                    " (its rows are one population): leave the field out, or declare the splits",
                )
                continue
            if f.get("type") != "string":
                report(
                    f"{ptr}/fields/{j}/type",
                    f"field {f.get('name')!r} holds a split, so it is a string",
                )
            if not f.get("allowed"):
                continue
            fptr = f"{ptr}/fields/{j}/allowed"
            allowed = [str(a) for a in f["allowed"]]
            extra = [a for a in allowed if a not in splits]
            if extra:
                report(
                    fptr,
                    f"field {f.get('name')!r} allows {extra}, which are not splits of the study"
                    f" (splits: {', '.join(splits) or 'none'})",
                )
            missing = [s for s in splits if s not in allowed]
            if missing and contract.get("role") == "items":
                report(
                    fptr,
                    f"field {f.get('name')!r} leaves out {missing}, splits of the study"
                    " (the study's own rows in those splits would break their contract)",
                )


@check
def pair_rows_fit(spec: dict, report: Reporter) -> None:
    """``pair_rows`` is written only beside ``pair_by``; ``mean`` (each side of a pair the mean
    of its rows) only for a mean of numbers (not of logs) read by the methods of a mean of
    paired differences: a contrast's ``t``/``bootstrap`` interval and ``paired-t`` test, an
    analysis of :data:`prereg.decide.shapes.PAIR_ROWS_MEAN_METHODS`. A per-item share is a
    number, not a 0/1 outcome, so the methods of 0/1 pairs are refused with it. (A contrast's
    interval and test are those of a paired mean: :func:`rule_methods_fit` checks them.)"""
    from prereg.decide.shapes import PAIR_ROWS_MEAN_METHODS

    computes = {m.get("id"): m.get("compute") or {} for m in spec.get("metrics") or []}
    methods = ", ".join(PAIR_ROWS_MEAN_METHODS)

    def metric_fits(ptr: str, what: str, name, word: str = "metric") -> None:
        c = computes.get(name)
        if c is None:
            return  # an unknown or engine metric: its own checks apply
        kind = c.get("kind")
        if kind == "mean" and c.get("transform") in (None, "none"):
            return
        shown = f"a {kind}" if kind != "mean" else "a mean of logs"
        hint = (
            "; a per-item share is a number, not a 0/1 outcome: compare per-item shares with"
            " a mean metric of the 0/1 field"
            if kind in ("proportion", "coverage")
            else ""
        )
        report(
            f"{ptr}/{word}",
            f"{what}: pair_rows mean averages each side's rows into a mean of numbers, and"
            f" {word} {name!r} is {shown}{hint}",
        )

    for hptr, hyp in items(spec, "hypotheses"):
        for part in ("contrasts", "analyses"):
            for i, e in enumerate(hyp.get(part) or []):
                if not isinstance(e, dict) or e.get("pair_rows") is None:
                    continue
                ptr = f"{hptr}/{part}/{i}"
                what = f"{part[:-1] if part == 'contrasts' else 'analysis'} {e.get('id')!r}"
                if e.get("pair_by") is None:
                    report(
                        f"{ptr}/pair_rows",
                        f"{what}: pair_rows says how many rows a side of a pair holds, and"
                        " there are no pairs without pair_by",
                    )
                    continue
                if e.get("pair_rows") != "mean":
                    continue
                if part == "contrasts":
                    # the interval and test: rule_methods_fit (a paired mean's)
                    metric_fits(ptr, what, e.get("metric"))
                    continue
                if str(e.get("method")) not in PAIR_ROWS_MEAN_METHODS:
                    report(
                        f"{ptr}/pair_rows",
                        f"{what}: pair_rows mean feeds the methods of a mean of paired"
                        f" differences ({methods}), and {e.get('method')!r} is not one (a pair's"
                        " mean of rows is a number, not a 0/1 outcome nor a probability)",
                    )
                    continue
                metric_fits(ptr, what, e.get("metric"))
                if e.get("b_metric") is not None:
                    metric_fits(ptr, what, e.get("b_metric"), "b_metric")


@check
def rule_methods_fit(spec: dict, report: Reporter) -> None:
    """Each estimate's and contrast's interval and test fit its metric and design
    (:mod:`prereg.decide.designs`); a bootstrap interval has its block; a paired contrast names
    a field; a margin is one the test can take."""
    from prereg.decide import designs
    from prereg.stats.methods import methods

    kinds = {m.get("id"): (m.get("compute") or {}).get("kind") for m in spec.get("metrics") or []}
    known = all_fields(spec)
    registered = methods()
    for hptr, hyp in items(spec, "hypotheses"):
        for part in ("estimates", "contrasts"):
            role = part[:-1]
            for i, e in enumerate(hyp.get(part) or []):
                ptr = f"{hptr}/{part}/{i}"
                what = f"{role} {e.get('id')!r}"
                kind = kinds.get(e.get("metric"))
                paired = role == "contrast" and e.get("pair_by") is not None
                if paired and e.get("pair_by") not in known:
                    report(
                        f"{ptr}/pair_by",
                        f"{what} pairs rows by unknown field {e.get('pair_by')!r} (a field of the"
                        " item manifest or the observations)",
                    )
                interval = e.get("interval")
                if (interval == "bootstrap") != bool(e.get("bootstrap")):
                    report(
                        f"{ptr}/bootstrap",
                        f"{what}: interval bootstrap needs a bootstrap block (resamples, seed),"
                        " and a bootstrap block is only for interval bootstrap",
                    )
                if kind is None:
                    continue  # the engine computes the metric: its own checks apply
                article = "an" if str(kind)[0] in "aeiou" else "a"
                design = f"a paired {kind}" if paired else f"{article} {kind}"
                fit = designs.interval_kinds(kind, role, paired)
                if interval != designs.NONE and designs.method_kind(str(interval), fit) is None:
                    names = ", ".join([*designs.fitting(fit), designs.NONE])
                    report(
                        f"{ptr}/interval",
                        f"{what}: interval {interval!r} does not fit {design} {role} of metric"
                        f" {e.get('metric')!r} (fitting: {names})",
                    )
                if role != "contrast":
                    continue
                test = e.get("test")
                tfit = designs.test_kinds(kind, paired)
                tkind = designs.method_kind(str(test), tfit) if test != designs.NONE else None
                if test != designs.NONE and tkind is None:
                    names = ", ".join([*designs.fitting(tfit), designs.NONE])
                    report(
                        f"{ptr}/test",
                        f"{what}: test {test!r} does not fit {design} contrast of metric"
                        f" {e.get('metric')!r} (fitting: {names})",
                    )
                    continue
                margin = e.get("margin")
                if kind in designs.RATIO:
                    if margin is not None and not float(margin) > 0:
                        report(
                            f"{ptr}/margin",
                            f"{what}: a ratio's margin is the ratio under the null, above 0",
                        )
                elif kind in designs.PROPORTION and margin is not None:
                    if not -1.0 <= float(margin) <= 1.0:
                        report(
                            f"{ptr}/margin",
                            f"{what}: a difference of proportions' margin lies in [-1, 1]",
                        )
                if tkind is None:
                    continue
                m = registered[str(test)]
                if not m.margin and margin not in (None, 0, 0.0) and kind not in designs.RATIO:
                    report(
                        f"{ptr}/margin",
                        f"{what}: {test} tests a - b = 0; a margin needs "
                        + (
                            "farrington-manning"
                            if kind in designs.PROPORTION and not paired
                            else "a test that takes one"
                        ),
                    )
                if not m.margin and kind in designs.RATIO and margin not in (None, 1, 1.0):
                    report(f"{ptr}/margin", f"{what}: {test} tests a ratio of 1 only")
                alt = e.get("alternative") or "two-sided"
                if alt not in m.alternatives:
                    report(
                        f"{ptr}/alternative",
                        f"{what}: {test} takes the alternatives {', '.join(m.alternatives)}",
                    )


@check
def metric_roles_unique(spec: dict, report: Reporter) -> None:
    """A metric's role names it for the engine, so one role means one metric."""
    seen: dict[str, str] = {}
    for ptr, m in items(spec, "metrics"):
        role = m.get("role")
        if role is None:
            continue
        if role in seen:
            report(f"{ptr}/role", f"duplicate metric role {role!r} (first at {seen[role]})")
        seen.setdefault(role, ptr)


CLAIM_KINDS = ("half_width", "power", "detectable", "verdict")
_EXACT_HALF_WIDTH = ("wilson",)  # intervals whose half-width has a closed form in p


def _expanded_contrasts(spec: dict) -> dict[str, dict]:
    """Every expanded contrast id -> its registration (with its hypothesis' family)."""
    from prereg.compiler.semantic import _expansions, fill

    out: dict[str, dict] = {}
    for _, hyp in items(spec, "hypotheses"):
        for c in hyp.get("contrasts") or []:
            for binding in _expansions(c):
                out.setdefault(fill(str(c.get("id")), binding), c)
    return out


@check
def claims_resolve(spec: dict, report: Reporter) -> None:
    """Each claim states one figure, and names cells, contrasts, hypotheses and scenarios the
    study registers."""
    from prereg.compiler.expand import all_cells

    cells = {c.get("id") for c in all_cells(spec)}
    contrasts = _expanded_contrasts(spec)
    hypotheses = {h.get("id"): h for h in spec.get("hypotheses") or []}
    scenarios = {s.get("id"): s for s in spec.get("scenarios") or []}
    seen: dict[str, str] = {}
    for ptr, claim in items(spec, "claims"):
        cid = claim.get("id")
        what = f"claim {cid!r}"
        if cid in seen:
            report(f"{ptr}/id", f"duplicate claim id {cid!r} (first at {seen[cid]})")
        seen.setdefault(cid, ptr)
        kinds = [k for k in CLAIM_KINDS if claim.get(k) is not None]
        if len(kinds) != 1:
            report(
                ptr, f"{what} takes exactly one of {', '.join(CLAIM_KINDS)} (found {len(kinds)})"
            )
            continue
        kind = kinds[0]
        body = claim[kind]
        bptr = f"{ptr}/{kind}"
        if kind == "half_width":
            if (body.get("cell") is None) == (body.get("rows") is None):
                report(bptr, f"{what}: a half-width claim takes exactly one of cell and rows")
            elif body.get("cell") is not None and body["cell"] not in cells:
                report(f"{bptr}/cell", f"{what} names unknown cell {body['cell']!r}")
            if body.get("interval") not in _EXACT_HALF_WIDTH:
                report(
                    f"{bptr}/interval",
                    f"{what}: the half-width of a {body.get('interval')} interval has no closed"
                    f" form here (only {', '.join(_EXACT_HALF_WIDTH)})",
                )
            if body.get("p_to") is not None and body["p_to"] < body.get("p", 0):
                report(f"{bptr}/p_to", f"{what}: p_to is below p")
            level = body.get("level")
            if isinstance(level, int | float) and not 0 < level < 1:
                report(
                    f"{bptr}/level",
                    f"{what}: the level of an interval is strictly between 0 and 1 (got {level})",
                )
        elif kind in ("power", "detectable"):
            c = contrasts.get(body.get("contrast"))
            if c is None:
                report(
                    f"{bptr}/contrast", f"{what} names unknown contrast {body.get('contrast')!r}"
                )
            elif c.get("test") in (None, "none"):
                report(
                    f"{bptr}/contrast",
                    f"{what}: contrast {body['contrast']!r} has no test, so no power",
                )
            base = float(body.get("base", 0.0))
            if kind == "power" and not 0.0 <= base + float(body.get("difference", 0.0)) <= 1.0:
                report(bptr, f"{what}: base + difference is not a probability")
            if kind == "detectable" and body.get("sign") not in (None, 1, -1):
                report(f"{bptr}/sign", f"{what}: sign is +1 or -1")
        else:
            h = hypotheses.get(body.get("hypothesis"))
            if h is None:
                report(
                    f"{bptr}/hypothesis",
                    f"{what} names unknown hypothesis {body.get('hypothesis')!r}",
                )
            else:
                named = [v.get("verdict") for v in h.get("verdicts") or []]
                allowed = named or (["supported", "not-supported"] if h.get("rule") else [])
                verdict = body.get("verdict")
                if not allowed:
                    report(
                        f"{bptr}/hypothesis", f"{what}: hypothesis {h.get('id')!r} has no verdict"
                    )
                elif verdict is None and named:
                    report(
                        bptr,
                        f"{what}: hypothesis {h.get('id')!r} has verdicts ({', '.join(named)}):"
                        " name one",
                    )
                elif verdict is not None and verdict not in allowed:
                    report(
                        f"{bptr}/verdict",
                        f"{what}: hypothesis {h.get('id')!r} gives no verdict {verdict!r}"
                        f" ({', '.join(allowed)})",
                    )
            s = scenarios.get(body.get("scenario"))
            if s is None:
                report(
                    f"{bptr}/scenario", f"{what} names unknown scenario {body.get('scenario')!r}"
                )
            elif s.get("effects") and body.get("effect") is None:
                report(bptr, f"{what}: scenario {s.get('id')!r} is a family; give its effect")
            elif not s.get("effects") and body.get("effect") is not None:
                report(
                    f"{bptr}/effect",
                    f"{what}: scenario {s.get('id')!r} has no effects, so no effect size",
                )
            elif body.get("effect") is not None:
                e = float(body["effect"])
                for r in s.get("rates") or []:
                    x = float(r.get("rate", 0.0)) + float(r.get("effect") or 0.0) * e
                    if not 0.0 <= x <= 1.0:
                        report(
                            f"{bptr}/effect",
                            f"{what}: at effect {e:g} a rate of scenario {s.get('id')!r} is"
                            f" {x:g}, not a probability",
                        )
                        break


@check
def test_sequence_resolves(spec: dict, report: Reporter) -> None:
    """Fixed-sequence testing names earlier, tested hypotheses."""
    earlier: list[str] = []
    for ptr, h in items(spec, "hypotheses"):
        for j, before in enumerate(h.get("tested_after") or []):
            if before == h.get("id") or before not in earlier:
                report(
                    f"{ptr}/tested_after/{j}",
                    f"hypothesis {h.get('id')!r} is tested after {before!r}, which is not an"
                    " earlier hypothesis",
                )
        earlier.append(h.get("id"))


@check
def verdicts_end_with_a_default(spec: dict, report: Reporter) -> None:
    """Verdicts are tried in order; the last one has no `when`, so some verdict always applies."""
    for ptr, h in items(spec, "hypotheses"):
        verdicts = h.get("verdicts") or []
        if verdicts and verdicts[-1].get("when") is not None:
            report(
                f"{ptr}/verdicts/{len(verdicts) - 1}",
                f"hypothesis {h.get('id')!r}: the last verdict needs no when (the verdict given"
                " when no earlier one applies)",
            )
        for j, v in enumerate(verdicts[:-1]):
            if v.get("when") is None:
                report(
                    f"{ptr}/verdicts/{j}/when",
                    f"hypothesis {h.get('id')!r}: only the last verdict may omit when (the"
                    " verdicts after it could never apply)",
                )


@check
def units_well_formed(spec: dict, report: Reporter) -> None:
    """Each unit names known fields, its figures count rows or earlier units, its rules read
    its own figures; a units metric names a unit."""
    known = all_fields(spec)
    seen: list[str] = []
    for ptr, u in items(spec, "units"):
        uid = u.get("id")
        what = f"unit {uid!r}"
        if uid in seen:
            report(f"{ptr}/id", f"{what} is registered twice")
        kinds = {
            f.get("name"): f.get("type")
            for c in spec.get("record_contracts") or []
            for f in c.get("fields") or []
        }
        for i, f in enumerate(u.get("by") or []):
            if f not in known:
                report(f"{ptr}/by/{i}", f"{what} is named by unknown field {f!r}")
            elif kinds.get(f) in ("array", "object"):
                report(
                    f"{ptr}/by/{i}",
                    f"{what} is named by {f!r}, an {kinds[f]} field: a unit is named by"
                    " string, number or boolean fields",
                )
        if len(set(u.get("by") or [])) < len(u.get("by") or []):
            report(f"{ptr}/by", f"{what}: a field is listed twice in by")
        figures: list[str] = []
        for j, fig in enumerate(u.get("figures") or []):
            fptr = f"{ptr}/figures/{j}"
            fid = fig.get("id")
            if fid in figures:
                report(f"{fptr}/id", f"{what}: figure {fid!r} is registered twice")
            figures.append(fid)
            if fig.get("units") is not None:
                if fig.get("rows"):
                    report(fptr, f"{what}: figure {fid!r} counts rows or units, not both")
                if fig["units"] == uid:
                    report(f"{fptr}/units", f"{what}: figure {fid!r} counts the unit's own level")
                elif fig["units"] not in seen:
                    report(
                        f"{fptr}/units",
                        f"{what}: figure {fid!r} counts units of {fig['units']!r}, which is not"
                        " an earlier unit (levels apply in order)",
                    )
            _conditions(fig.get("rows"), f"{fptr}/rows", known, what, report, spec=spec)
        for j, rule in enumerate(u.get("include") or []):
            if rule.get("figure") not in figures:
                report(
                    f"{ptr}/include/{j}/figure",
                    f"{what}: rule reads unknown figure {rule.get('figure')!r} (its figures:"
                    f" {', '.join(map(str, figures)) or 'none'})",
                )
        seen.append(uid)
    for ptr, m in items(spec, "metrics"):
        c = m.get("compute") or {}
        if c.get("kind") == "units":
            if c.get("unit") not in seen:
                report(
                    f"{ptr}/compute/unit",
                    f"metric {m.get('id')!r}: units of unknown unit {c.get('unit')!r}"
                    f" (registered: {', '.join(map(str, seen)) or 'none'})",
                )
            for key in ("where", "among", "field", "transform", "bins"):
                if c.get(key):
                    report(f"{ptr}/compute/{key}", f"metric {m.get('id')!r}: units takes no {key}")
        elif c.get("unit") is not None:
            report(f"{ptr}/compute/unit", f"metric {m.get('id')!r}: unit is for kind units")


@check
def manifest_counts_have_a_manifest(spec: dict, report: Reporter) -> None:
    """row_counts: manifest takes the counts of an item manifest, which the study must read."""
    if spec.get("row_counts") != "manifest":
        return
    if not any(c.get("role") == "items" for c in spec.get("record_contracts") or []):
        report(
            "/row_counts",
            "row_counts: manifest takes each cell's rows from the item manifest, and the study"
            " reads none (a record contract with role items)",
        )
