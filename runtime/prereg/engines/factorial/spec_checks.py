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
    if not out:
        out += scenario_problems(spec)
    return out


def scenario_problems(spec: dict) -> list[Problem]:
    """What ``simulate`` and ``diagnose`` would refuse of the registered scenarios, refused
    here first: the records a scenario draws are written by the engine's own
    :class:`~prereg.engines.factorial.draws.RecordWriter` over what the spec compiles to,
    which keeps every problem instead of refusing the first (the observation contract requires
    a field the scenario does not draw, a failed attempt no value meets, a cell's rows that no
    entry of a field draws a number for, a number beyond what its field holds); and diagnose
    runs every scenario over one outcome field."""
    scenarios = [s for s in spec.get("scenarios") or [] if isinstance(s, dict)]
    drawing = [(i, s) for i, s in enumerate(scenarios) if s.get("metric") is None]
    if not drawing:
        return []
    from prereg.compiler.build import engine_config

    from .draws import RecordWriter

    config = engine_config(dict(spec))
    out: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for i, s in drawing:
        config_sc = next(c for c in config["scenarios"] if c.get("id") == s.get("id"))
        for where, rule in RecordWriter(config, config_sc, strict=False).problems:
            ptr = (
                where
                if where.startswith("/")
                else f"/scenarios/{i}" + (f"/{where}" if where else "")
            )
            if where.startswith("/"):
                if (where, rule) in seen:  # the policy's: said once, for the first scenario
                    continue
                seen.add((where, rule))
                rule = f"{rule}, and scenario {s.get('id')} writes a failed attempt before the one that counts (the policy has an order)"
            out.append((ptr, rule))
    outcomes: dict[str, int] = {}
    for i, s in drawing:
        if s.get("outcome") is not None:
            outcomes.setdefault(str(s["outcome"]), i)
    if len(outcomes) > 1:
        (first, i0), (second, i1) = list(outcomes.items())[:2]
        out.append(
            (
                f"/scenarios/{i1}/outcome",
                f"scenario {scenarios[i1].get('id')} draws outcome {second!r} and scenario"
                f" {scenarios[i0].get('id')} {first!r}: diagnose runs every scenario over one"
                " outcome field",
            )
        )
    written: dict[str, tuple[int, tuple]] = {}
    for i, s in drawing:
        if s.get("outcome") is None:
            continue
        got = _written(s)
        first = written.setdefault(str(s["outcome"]), (i, got))
        if first[1] != got:
            out.append(
                (
                    f"/scenarios/{i}/outcome_values",
                    f"scenario {scenarios[i].get('id')} writes outcome {s['outcome']!r} as"
                    f" {_values_text(got)} and scenario {scenarios[first[0]].get('id')} as"
                    f" {_values_text(first[1])}: diagnose scores every scenario's rows by one"
                    " pair of values",
                )
            )
    return out


def _written(s: dict) -> tuple:
    """(value when the outcome holds, value otherwise), each with its type (1 is not true)."""
    got = s.get("outcome_values") or {"holds": True, "otherwise": False}
    return tuple((type(got.get(k)).__name__, got.get(k)) for k in ("holds", "otherwise"))


def _values_text(got: tuple) -> str:
    import json

    return f"{json.dumps(got[0][1])} when it holds, {json.dumps(got[1][1])} otherwise"
