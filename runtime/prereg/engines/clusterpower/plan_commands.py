"""The ``power_plan`` command: read the calibration input, simulate, write the plan.

``ctx.config`` is the compiled spec config, read by :func:`.config.plan_config`.

Arguments (an ``argparse.Namespace``): ``calibration`` (path of the JSONL input),
``eligible_task_count``, ``eligible_repository_count``, ``eligible_pass_items``,
``eligible_fail_items`` (non-negative integers), ``out`` (path of the plan, never overwritten)
and ``simulations`` (``None`` unless the development knob was given: any explicit value makes
the plan non-canonical).

Exit codes: 0 for a powered or underpowered plan, 3 for an infeasible plan (still written),
2 for bad input (nothing written).  Progress goes to stderr (:class:`prereg.console.Progress`).
"""

from __future__ import annotations

from typing import Any

from prereg import exits
from prereg.console import console_of
from prereg.engines import StudyContext
from prereg.errors import UserError
from prereg.files import canonical_bytes_nl, refuse_existing, write_new

from .calibration_input import read_calibration
from .config import plan_config
from .plan import Eligible, build_plan

EXIT_INFEASIBLE = exits.INFEASIBLE


def _count(args: Any, name: str, minimum: int = 0) -> int:
    v = getattr(args, name, None)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        flag = "--" + name.replace("_", "-")
        raise UserError(f"{flag}: must be an integer ≥ {minimum} (got {v!r})")
    return v


def power_plan(ctx: StudyContext, args: Any) -> int:
    cfg = plan_config(ctx.config)
    eligible = Eligible(
        task_count=_count(args, "eligible_task_count"),
        repository_count=_count(args, "eligible_repository_count"),
        pass_items=_count(args, "eligible_pass_items"),
        fail_items=_count(args, "eligible_fail_items"),
    )
    simulations = getattr(args, "simulations", None)
    if simulations is not None:
        simulations = _count(args, "simulations", 1)
    out = args.out
    refuse_existing(out)
    cal = read_calibration(args.calibration, cfg.input)
    con = console_of(args)
    bar = con.progress("power-plan", 1, unit="cohorts")

    def show(label: str, done: int, total: int) -> None:
        bar.update(done, total, label=label)

    try:
        plan = build_plan(
            cfg,
            cal,
            eligible,
            spec_digest=ctx.spec_digest,
            amendment_version=ctx.version,
            simulations=simulations,
            progress=show,
        )
    finally:
        bar.close()
    write_new(out, canonical_bytes_nl(plan))
    selected = plan["selectedTaskCount"]
    line = f"{out}: status {plan['status']}"
    if selected is not None:
        line += f", selected task count {selected}"
    if not plan["canonical"]:
        line += " (non-canonical: development run)"
    con.line(line)
    for r in plan["reasons"]:
        con.line(f"  reason: {r}")
    for w in plan["warnings"]:
        con.line(f"  warning: {w}")
    con.summary(
        {
            "outputs": [str(out)],
            "status": plan["status"],
            "canonical": plan["canonical"],
            "selectedTaskCount": selected,
            "reasons": plan["reasons"],
            "warnings": plan["warnings"],
            "selfSha256": plan["selfSha256"],
        }
    )
    return EXIT_INFEASIBLE if plan["status"] == cfg.statuses["infeasible"] else 0


COMMANDS = {"power_plan": power_plan}
