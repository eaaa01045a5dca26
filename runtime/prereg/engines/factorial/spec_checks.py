"""Compile-time checks of a factorial study: what the engine needs to run it at all."""

from __future__ import annotations

from prereg.engines.base import Problem


def checks(spec: dict) -> list[Problem]:
    out: list[Problem] = []
    roles = {c.get("role"): c for c in spec.get("record_contracts") or []}
    policy = spec.get("attempts")
    if "observation" not in roles:
        out.append(
            ("/record_contracts", "a factorial study needs a record contract with role observation")
        )
    if not policy:
        out.append(
            ("/", "a factorial study needs an attempts policy (which observation of a row counts)")
        )
    elif "observation" in roles and policy.get("contract") != roles["observation"].get("id"):
        out.append(
            (
                "/attempts/contract",
                f"the attempt policy reads {policy.get('contract')!r}, not the observation contract"
                f" {roles['observation'].get('id')!r}",
            )
        )
    items = roles.get("items")
    placing = items or roles.get("observation") or {}
    fields = placing.get("fields") or []
    named = {f.get("factor") for f in fields if f.get("factor")}
    for i, factor in enumerate(spec.get("factors") or []):
        fid = factor.get("id")
        # A factor every cell leaves out need not be named; one a cell sets must be.
        in_cells = any(
            r.get("factor") == fid for c in spec.get("cells") or [] for r in c.get("levels") or []
        )
        crossed = any(fid in (x.get("factors") or []) for x in spec.get("crossings") or [])
        if fid not in named and (in_cells or crossed):
            out.append(
                (
                    f"/factors/{i}",
                    f"no field of {placing.get('id')!r} names factor {fid!r} (factor: {fid}), so rows"
                    " cannot be placed in cells",
                )
            )
    if len(spec.get("splits") or []) > 1 and not any(f.get("role") == "split" for f in fields):
        out.append(
            (
                "/record_contracts",
                f"the study has several splits, so a field of {placing.get('id')!r} needs role split",
            )
        )
    if items is not None and not any(f.get("role") == "row" for f in items.get("fields") or []):
        out.append(("/record_contracts", f"no field of {items.get('id')!r} has role row"))
    for i, m in enumerate(spec.get("metrics") or []):
        if not m.get("compute"):
            out.append(
                (
                    f"/metrics/{i}",
                    f"metric {m.get('id')!r} has no compute block: the factorial engine computes"
                    " only what the spec says",
                )
            )
    for i, s in enumerate(spec.get("scenarios") or []):
        if s.get("metric") is not None:
            out.append(
                (
                    f"/scenarios/{i}",
                    f"scenario {s.get('id')!r}: the factorial engine writes observations, so a"
                    " scenario draws an outcome field of the observation contract (outcome),"
                    " or only numbers (values) or ratings",
                )
            )
    return out
