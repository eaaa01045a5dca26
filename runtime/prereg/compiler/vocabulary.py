"""Semantic checks of the scoring vocabulary: attempt policy, derived fields, metric compute
blocks, scenarios, contrast alternatives and margins.

A field a condition names must be a field of a row: a field of the item manifest (the record
contract with role ``items``), of the attempt policy's observation contract, a derived field
registered earlier, or a field the study's engine provides (:func:`prereg.engines.row_fields`).
"""

from __future__ import annotations

from prereg.compiler.semantic import Reporter, _levels, check, items

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
    conds, ptr: str, known: set[str], what: str, report: Reporter, *, fields=None
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
        elif op == "in":
            if not c.get("values") or has_value or other is not None:
                report(cptr, f"{what}: op in takes a non-empty values list (and no value or other)")
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
    for i, name in enumerate(policy.get("key") or []):
        if name not in types:
            report(f"/attempts/key/{i}", f"key field {name!r} is not a field of {cid!r}")
    if policy.get("order") not in types:
        report("/attempts/order", f"order field {policy.get('order')!r} is not a field of {cid!r}")
    elif types[policy["order"]] not in ("integer", "number"):
        report("/attempts/order", f"order field {policy['order']!r} must be a number")
    fields = set(types)
    for part in ("failed", "where", "select"):
        _conditions(
            policy.get(part), f"/attempts/{part}", fields, "attempt policy", report, fields=fields
        )
    if (policy.get("counts") == "first-match") != bool(policy.get("select")):
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
            _conditions(case.get("when"), f"{ptr}/cases/{j}/when", known, what, report)
        _conditions(d.get("test"), f"{ptr}/test", known, what, report)
        known = known | {did}


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
        if kind == "mean":
            if c.get("field") not in known:
                report(f"{cptr}/field", f"{what}: mean of unknown field {c.get('field')!r}")
            if c.get("where"):
                report(f"{cptr}/where", f"{what}: a mean takes among, not where")
        _conditions(c.get("where"), f"{cptr}/where", known, what, report)
        _conditions(c.get("among"), f"{cptr}/among", known, what, report)


@check
def scenarios_resolve(spec: dict, report: Reporter) -> None:
    levels = _levels(spec)
    levels.setdefault("split", [str(s.get("id")) for s in spec.get("splits") or []])
    policy = spec.get("attempts") or {}
    contract = _contracts(spec).get(policy.get("contract"))
    types = {f.get("name"): f.get("type") for f in (contract or {}).get("fields") or []}
    seen: dict[str, str] = {}
    for ptr, s in items(spec, "scenarios"):
        sid = s.get("id")
        if sid in seen:
            report(f"{ptr}/id", f"duplicate scenario id {sid!r} (first at {seen[sid]})")
        seen.setdefault(sid, ptr)
        if contract is None:
            report(ptr, "a scenario needs the attempt policy's observation contract (attempts)")
        elif types.get(s.get("outcome")) != "boolean":
            report(
                f"{ptr}/outcome",
                f"scenario {sid!r}: outcome {s.get('outcome')!r} is not a boolean field of"
                f" {contract.get('id')!r}",
            )
        for j, rate in enumerate(s.get("rates") or []):
            for k, flt in enumerate(rate.get("where") or []):
                fptr = f"{ptr}/rates/{j}/where/{k}"
                factor = flt.get("factor")
                if factor not in levels:
                    report(
                        f"{fptr}/factor", f"scenario {sid!r} selects on unknown factor {factor!r}"
                    )
                    continue
                for lv in flt.get("levels") or []:
                    if str(lv) not in levels[factor]:
                        report(
                            f"{fptr}/levels",
                            f"scenario {sid!r} selects level {lv!r}, which factor {factor!r} does not have",
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
            if test == "pooled-z" and margin not in (None, 0, 0.0):
                report(
                    f"{ptr}/margin",
                    f"contrast {c.get('id')!r}: pooled-z tests a - b = 0; a margin needs"
                    " farrington-manning",
                )


@check
def item_fields_name_factors(spec: dict, report: Reporter) -> None:
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
            if f.get("type") != "string":
                report(f"{fptr}/type", f"field {f.get('name')!r} holds a level, so it is a string")
            extra = [a for a in f.get("allowed") or [] if str(a) not in levels[factor]]
            if extra:
                report(
                    f"{fptr}/allowed",
                    f"field {f.get('name')!r} allows {extra}, which are not levels of {factor!r}",
                )


@check
def rule_metrics_are_proportions(spec: dict, report: Reporter) -> None:
    """Estimates and contrasts have interval and test methods for proportions only."""
    kinds = {m.get("id"): (m.get("compute") or {}).get("kind") for m in spec.get("metrics") or []}
    for hptr, hyp in items(spec, "hypotheses"):
        for part in ("estimates", "contrasts"):
            for i, e in enumerate(hyp.get(part) or []):
                if kinds.get(e.get("metric")) == "mean":
                    report(
                        f"{hptr}/{part}/{i}/metric",
                        f"{part[:-1]} {e.get('id')!r} names the mean metric {e.get('metric')!r};"
                        " its interval and test methods are for proportions",
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
