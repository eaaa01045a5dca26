"""``diagnose`` for the cluster power plan: what the registered plan decides, and with what
power, at each task count of its registered ladder (or of ``--vary tasks=...``).

The simulated studies are the power plan's own cohorts: :func:`.plan.simulate_rung`, run with
``--seed`` in place of the frozen seed and ``--simulations`` cohorts per task count, from the
calibration input and the eligible universe the ``power-plan`` command takes (same arguments,
same refusals; an infeasible plan simulates nothing and is refused with its reasons).  With
the frozen seed and ``--simulations`` equal to the plan's, each task count's figures are the
plan's own.  Two scenarios, both the plan's: ``smallest-effect`` (the registered smallest
effect injected) and ``no-effect`` (nothing injected, the same draws: the planning test's
false-positive rate).  A cohort supports the hypothesis the plan sizes when both planning
lower bounds exceed zero; a degenerate cohort fails, and is counted as a failed gate.

The sizing claim is the registered ``powered`` verdict of the status hypothesis (constant
``power_plan``'s ``status_hypothesis``): at the ladder (the rungs below N that are not below
G, then N) its figure is the power at the first rung reaching the registered target power
(else at N), and the status and the study's decision are evaluated by the registered rules
over the diagnosed figures, as the plan evaluates them.  Under ``--vary tasks=V1,...`` (G ≤ V
≤ N) the claim at each value is that its power reaches the target; ``--target`` gives the
smallest listed value that does, confirmed with a fresh seed.

Each (task count, seed) is one task for :mod:`prereg.runner`: a rung is simulated
whole (its θ̂₀ is centred by the rung's own Monte Carlo mean), so the bytes do not depend on
``--workers``.
"""

from __future__ import annotations

import math
from typing import Any

from prereg.diagnose import plain
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.rules import NOT_SUPPORTED, SUPPORTED

from .calibration_input import read_calibration
from .config import plan_config
from .plan import (
    Eligible,
    centred_tables,
    composition_warnings,
    infeasibility_reasons,
    ladder_for,
    simulate_rung,
)

SMALLEST, NULL = "smallest-effect", "no-effect"
SCENARIOS = (SMALLEST, NULL)
DEGENERATE = "degenerate-cohort"
VARIED = "tasks"
#: Bytes a rung holds per simulated cohort: three float64 arrays of --simulations and room for
#: their temporaries (np.empty reserves them untouched, so 10^9 cohorts filled 24 GB slowly).
COHORT_BYTES = 64


def _rung(payload: dict, task: tuple[int, int, int]) -> tuple[int, int, int]:
    """(successes, null successes, degenerate cohorts) of ``simulations`` cohorts of n tasks."""
    n, seed, simulations = task
    res = simulate_rung(
        payload["tables"],
        n,
        payload["g"],
        seed=seed,
        simulations=simulations,
        block_size=payload["block_size"],
        w_pass=payload["w_pass"],
        w_fail=payload["w_fail"],
        effect=payload["effect"],
        bound_level=payload["bound_level"],
    )
    return res.successes, res.null_successes, res.degenerate


def _sized_hypothesis(ctx: StudyContext, status: str) -> str:
    """The hypothesis the plan sizes: the study's one hypothesis other than the status one."""
    others = [str(h["id"]) for h in ctx.config.get("decisions") or () if str(h.get("id")) != status]
    return others[0] if len(others) == 1 else "planning-test"


def _count(args: Any, name: str) -> int:
    from .plan_commands import _count as count

    return count(args, name)


def _power(k: int, n: int) -> tuple[float, float]:
    p = k / n
    return p, math.sqrt(p * (1.0 - p) / n)


def diagnose(ctx: StudyContext, args: Any) -> int:
    cfg = plan_config(ctx.config)
    el = Eligible(
        task_count=_count(args, "eligible_task_count"),
        repository_count=_count(args, "eligible_repository_count"),
        pass_items=_count(args, "eligible_pass_items"),
        fail_items=_count(args, "eligible_fail_items"),
    )
    opts = plain.options(args, SCENARIOS)
    cal = read_calibration(args.calibration, cfg.input)
    reasons = infeasibility_reasons(cfg, cal, el)
    if reasons:
        raise UserError(
            f"{args.calibration}: the plan is infeasible for this eligible universe (status"
            f" {cfg.statuses['infeasible']!r}, decided before any simulation): nothing to"
            " diagnose",
            problems=reasons,
        )
    values = None
    if opts.vary is not None:
        values = plain.parse_vary(
            opts.vary,
            (VARIED,),
            el.repository_count,
            el.task_count,
            f"a cohort has at least one task per eligible repository ({el.repository_count})"
            f" and at most the eligible tasks ({el.task_count})",
        )
    scenarios = opts.scenarios or SCENARIOS
    evaluated, skipped = ladder_for(cfg, el)
    total = el.pass_items + el.fail_items
    payload = {
        "tables": centred_tables(cal),
        "g": el.repository_count,
        "block_size": cfg.block_size,
        "w_pass": el.pass_items / total,
        "w_fail": el.fail_items / total,
        "effect": cfg.smallest_effect,
        "bound_level": cfg.bound_level,
    }
    sims, seed = opts.simulations, opts.seed
    # a rung holds three float64 arrays of --simulations (and their temporaries) on each worker
    plain.refuse_beyond_memory(sims, min(opts.workers, 64), COHORT_BYTES)
    sizes = list(dict.fromkeys([*evaluated, *(values or ())]))
    tasks = [(n, seed, sims) for n in sizes]
    got = dict(
        zip(
            tasks,
            plain.run_tasks(args, opts, f"diagnose {ctx.study_id}", _rung, payload, tasks),
            strict=True,
        )
    )
    hyp = _sized_hypothesis(ctx, cfg.status_decision.hypothesis)
    num, den = cfg.target_numerator, cfg.target_denominator
    target = num / den

    def conditions(n: int, at_seed: int) -> list[dict]:
        succ, null, degenerate = got[(n, at_seed, sims)]
        out = []
        for sid in scenarios:
            k = succ if sid == SMALLEST else null
            out.append(
                plain.condition(
                    f"{sid} at {n} tasks",
                    cfg.smallest_effect if sid == SMALLEST else 0.0,
                    sims,
                    [plain.verdicts(hyp, {SUPPORTED: k, NOT_SUPPORTED: sims - k}, sims)],
                    None,
                    {DEGENERATE: degenerate},
                )
            )
        return out

    def claim_at(n: int, at_seed: int) -> dict:
        succ = got[(n, at_seed, sims)][0]
        p, se = _power(succ, sims)
        return {
            "id": "powered",
            "method": "simulation",
            "figure": plain.r(p),
            "mcSe": plain.r(se),
            "withinMonteCarloError": abs(p - target) <= 2 * se,
            "op": "ge",
            "value": target,
            "holds": den * succ >= num * sims,
        }

    # the ladder: the plan's selection, status and decision, by the registered rules
    rungs = [
        {"task_count": n, "successes": got[(n, seed, sims)][0], "simulations": sims}
        for n in evaluated
    ]
    selected = next((r["task_count"] for r in rungs if den * r["successes"] >= num * sims), None)
    status, outcome = _decided(ctx, args, cfg, cal, el, rungs, selected)
    at = selected if selected is not None else el.task_count
    base = claim_at(at, seed)
    claim = {
        "id": base["id"],
        "kind": "power",
        "claim": f"the power at the plan's selected task count reaches {num}/{den} (hypothesis"
        f" {cfg.status_decision.hypothesis}, verdict {cfg.statuses['powered']}: some rung of"
        f" the ladder reaches the target power); here status {status}, decision {outcome}"
        + ("" if selected is None else f" at {selected} tasks"),
        "statement": None,
        "method": "simulation",
        "figure": base["figure"],
        "mcSe": base["mcSe"],
        "withinMonteCarloError": base["withinMonteCarloError"],
        "op": "ge",
        "value": target,
        "holds": selected is not None,
        "details": {
            "selectedTaskCount": selected,
            "taskCount": at,
            "status": status,
            "decision": outcome,
            "ladder": [r["task_count"] for r in rungs],
            "skippedRungs": skipped,
        },
    }
    notes = [
        f"Each simulated study is one cohort of the power plan (calibration {cal.sha256[:12]}…,"
        f" {len(cal.repositories)} repositories; eligible universe N = {el.task_count} tasks in"
        f" G = {el.repository_count} repositories, P = {el.pass_items}, F = {el.fail_items}"
        f" items); seed {seed} in place of the frozen seed {cfg.seed}.",
        f"Status by the registered rule over the diagnosed powers: {status}; decision:"
        f" {outcome}" + (f" (selected task count {selected})." if selected else "."),
        *(f"warning: {w}" for w in composition_warnings(cfg, cal, el)),
    ]
    if skipped:
        notes.append(f"Rungs below G = {el.repository_count} are skipped: {skipped}.")
    doc: dict[str, Any] = {
        **plain.head(
            ctx, sims, seed, cfg.block_size, scenarios, el.task_count, el.repository_count
        ),
        "notes": notes,
        "conditions": [c for n in evaluated for c in conditions(n, seed)],
        "families": [],
        "claims": [claim],
    }
    if values is not None:
        doc["redesign"] = _redesign(
            args, opts, ctx, values, seed, payload, got, sims, conditions, claim_at
        )
    said = f"status {status}, decision {outcome}" + (
        f" at {selected} tasks" if selected is not None else ""
    )
    return plain.write(ctx, args, opts, doc, [f"by the registered rules: {said}"])


def _redesign(args, opts, ctx, values, seed, payload, got, sims, conditions, claim_at) -> dict:
    def point(n: int, at_seed: int) -> dict:
        c = claim_at(n, at_seed)
        return {
            "value": n,
            "seed": at_seed,
            "rows": n,
            "claims": [c],
            "allHold": c["holds"],
            "conditions": [
                {
                    "scenario": x["scenario"],
                    "effect": x["effect"],
                    "decision": [],
                    "hypotheses": [
                        {
                            "id": h["id"],
                            **{k: h["verdicts"][0][k] for k in ("verdict", "share", "mcSe")},
                        }
                        for h in x["hypotheses"]
                    ],
                }
                for x in conditions(n, at_seed)
            ],
        }

    points = [point(n, seed) for n in values]
    out: dict[str, Any] = {"parameter": VARIED, "values": list(values), "points": points}
    if opts.target:
        meeting = [p["value"] for p in points if p["allHold"]]
        target: dict[str, Any] = {"value": min(meeting) if meeting else None, "confirmation": None}
        if meeting:
            fresh = plain.confirmation_seed(seed)
            task = (target["value"], fresh, sims)
            (res,) = plain.run_tasks(
                args, opts, f"confirm {VARIED}={target['value']}", _rung, payload, [task]
            )
            got[task] = res
            target["confirmation"] = point(target["value"], fresh)
            target["confirmed"] = target["confirmation"]["allHold"]
        else:
            target["confirmed"] = False
        out["target"] = target
    return out


def _decided(ctx, args, cfg, cal, el, rungs, selected) -> tuple[str, str]:
    """(status, decision outcome) by the registered rules over the diagnosed figures; the
    status must be the engine's own selection's (as the plan requires)."""
    from prereg.decide.decision import decide
    from prereg.diagnose.command import _rules_module

    from .figures import decided_status, plan_figures, results

    figures = plan_figures(
        calibration_repositories=len(cal.repositories),
        pass_repositories=cal.repositories_with("pass"),
        fail_repositories=cal.repositories_with("fail"),
        eligible=el.as_dict(),
        rungs=rungs,
    )
    engine = cfg.statuses["powered" if selected is not None else "underpowered"]
    status = decided_status(cfg, figures, engine)
    registered = getattr(_rules_module(ctx, args), "DECISION", None)
    record = decide(registered, {cfg.status_decision.hypothesis: status}, {}, results(figures))
    return status, (record["outcome"] if record else status)


COMMANDS = {"diagnose": diagnose}
