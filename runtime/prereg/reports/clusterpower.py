"""Report of a cluster-power-freeze study (s3-verifier-freeze kind).

Reads the outputs its commands wrote (found through the steps: the ``power_plan`` step's
``--out``, the ``freeze_manifest`` step's ``--out`` and input, the ``validate`` step's result):

- the power plan: status, selected task count, and a figure of simulated power against the
  task-count ladder with 95% Monte Carlo intervals (±z·mc_se) and the plan's own target power;
  the verdicts: the status as the registered rule's verdict with its deciding figures, and the
  confirmatory hypothesis the plan serves (reported only);
- the freeze manifest: every bound artifact by role with its SHA-256, and whether validation
  (which re-hashes every bound file) held;
- a ``diagnose`` step's operating characteristics (:mod:`prereg.reports.diagnose`): the power
  plan's claim checked at fresh seeds, each rung's power and false-positive rate; a claim that
  fails turns the status line red.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prereg.reports import Step, StudyInfo, plot
from prereg.reports.common import (
    file_input,
    fmt,
    header,
    inputs_block,
    read_json,
    registered,
    sha,
    steps_block,
)
from prereg.reports.diagnose import blocks as diagnose_blocks
from prereg.reports.diagnose import claims_status, failing_claims, unchecked_claims
from prereg.reports.page import Facts, Figure, Heading, Para, Report, Table
from prereg.reports.verdicts import figure_verdicts

MC_LEVEL = 0.95  # the Monte Carlo error bars drawn (a display choice, stated in the caption)


def _target(plan: dict) -> float | None:
    t = (plan.get("frozen") or {}).get("target_power")
    if isinstance(t, dict) and t.get("denominator"):
        return t["numerator"] / t["denominator"]
    return t if isinstance(t, (int, float)) else None


def mc_z(level: float = MC_LEVEL) -> float:
    """The normal quantile of the error bars: ``scipy.stats.norm.ppf(0.5 + level / 2)``, which
    is this compiled ``ndtri`` (times scale 1, plus loc 0), without importing scipy.stats
    (which takes longer than building the rest of the report)."""
    from scipy.special import ndtri

    return float(ndtri(0.5 + level / 2))


def power_figure(plan: dict, name: str = "power") -> Figure:
    rungs = [r for r in plan.get("rungs", []) if r.get("power") is not None]
    target = _target(plan)
    selected = plan.get("selectedTaskCount")
    z = mc_z()
    title = "Simulated power against task count"

    def draw(width: float, narrow: bool = False) -> str:
        """``narrow``: for a phone, the legend under the axes and fewer task counts named."""
        with plot.figure(width, 3.6 + (0.6 if narrow else 0)) as (fig, ax):
            if narrow:
                fig.set_layout_engine("constrained")
            xs = [r["taskCount"] for r in rungs]
            ys = [r["power"] for r in rungs]
            err = [z * r["mcSe"] for r in rungs]
            ax.errorbar(
                xs, ys, yerr=err, fmt="o-", color=plot.BLUE, capsize=3, lw=1.2, ms=4,
                label=f"power ({MC_LEVEL:.0%} Monte Carlo interval)",
            )  # fmt: skip
            if target is not None:
                ax.axhline(
                    target, color=plot.VERMILION, ls="--", lw=1, label=f"target power {fmt(target)}"
                )
            if selected is not None:
                ax.axvline(
                    selected, color=plot.GREEN, ls=":", lw=1.2, label=f"selected: {selected}"
                )
            ax.set_xscale("log")
            # on a phone every other rung is named when more than six are drawn
            step = 2 if narrow and len(xs) > 6 else 1
            ax.set_xticks(xs, [str(x) if i % step == 0 else "" for i, x in enumerate(xs)])
            ax.minorticks_off()
            ax.set_ylim(0, 1.02)
            ax.set_xlabel("confirmatory task count (log scale)")
            ax.set_ylabel("power")
            ax.set_title(title)
            if narrow:  # under the axes, in one column
                fig.legend(loc="outside lower center", ncols=1)
            else:
                ax.legend(loc="lower right")
            return plot.svg(fig, f"{name}-narrow" if narrow else name, title)

    svg = draw(6.4)
    narrow = plot.fit_width(lambda width: draw(width, narrow=True), 4.2)
    n_sims = sorted({r.get("simulations") for r in rungs})
    return Figure(
        name,
        title,
        svg,
        f"Each point is the share of {', '.join(fmt(s) for s in n_sims)} simulated studies that"
        f" reject at that task count; bars are ±{z:.2f} Monte Carlo standard errors"
        f" ({MC_LEVEL:.0%})."
        + (" The vermilion dashed line is the plan's target power." if target is not None else "")
        + (" The green dotted line is the task count it selected." if selected is not None else ""),
        narrow=narrow,
    )


def _verdicts(info: StudyInfo, plan: dict, step: Step, report=None) -> list:
    """The plan's status as the verdict of its registered rule, with the figures it read
    (the stratum counts re-read from the calibration input when it is the one the plan
    recorded), and the reported-only confirmatory hypothesis."""
    from prereg.engines.clusterpower.calibration_input import read_calibration
    from prereg.engines.clusterpower.config import plan_config
    from prereg.engines.clusterpower.figures import report_figures
    from prereg.errors import UserError

    cfg = plan_config(info.config)
    cal = None
    path = step.args[1] if len(step.args) > 1 else None
    if path and Path(path).is_file():
        try:
            cal = read_calibration(path, cfg.input)
        except UserError:
            cal = None
        recorded = (plan.get("calibration") or {}).get("calibrationSha256")
        if cal is not None and cal.sha256 != recorded:
            cal = None
    return figure_verdicts(
        info,
        {cfg.status_decision.hypothesis: str(plan.get("status"))},
        report_figures(plan, cal),
        "The plan's status is the verdict of the registered rule (as PREREG.md states it,"
        " linked) over the figures the engine reports: every comparison the rule reads, with"
        " the figures that met it (powers are successes over simulations, compared exactly).",
        report,
    )


def build(info: StudyInfo, folder: Path, steps: Sequence[Step]) -> Report:
    plan_step = info.steps_for(steps, "power_plan")
    freeze_step = info.steps_for(steps, "freeze_manifest")
    validate_step = info.steps_for(steps, "validate")
    plan_path = plan_step[-1].option("--out") if plan_step else None
    manifest_path = freeze_step[-1].option("--out") if freeze_step else None
    plan = read_json(plan_path)
    manifest = read_json(manifest_path)
    validated = bool(validate_step) and all(s.ok for s in validate_step)
    steps_ok = all(s.ok for s in steps)

    parts = []
    if plan:
        selected = plan.get("selectedTaskCount")
        parts.append(
            f"power plan {plan.get('status')}"
            + (f": {selected} tasks" if selected is not None else ": no task count selected")
        )
        if plan.get("canonical") is not True:
            parts.append("a development plan (not canonical: it cannot authorize a freeze)")
    if manifest:
        parts.append(
            f"{len(manifest.get('artifacts', []))} artifacts frozen"
            + ("; manifest validated" if validated else "; manifest NOT validated")
        )
    status = "; ".join(parts) or "no outputs"
    ok = steps_ok and plan is not None and (manifest is None or validated)
    status, ok = claims_status(
        status, ok, failing_claims(info, steps), unchecked_claims(info, steps)
    )
    report = Report(info.study_id, info.title, status, ok)
    report.add(
        *header(
            info,
            [
                ("power plan", (plan or {}).get("specDigest")),
                ("manifest", (manifest or {}).get("specDigest")),
            ],
        )
    )

    inputs = []
    if plan:
        cal = plan.get("calibration") or {}
        inputs.append(("calibration sample", cal.get("calibrationSha256"), cal.get("bytes")))
    if freeze_step:
        src = freeze_step[-1].args[1] if len(freeze_step[-1].args) > 1 else None
        inputs.append(file_input(f"freeze input ({freeze_step[-1].shown_arg(1)})", src))
    report.add(*inputs_block(inputs))

    if plan:
        report.add(Heading("Power plan"))
        eligible = plan.get("eligible") or {}
        cal = plan.get("calibration") or {}
        report.add(
            Facts(
                [
                    ("status", plan.get("status")),
                    (
                        "canonical",
                        "yes: the frozen constants, no development knob"
                        if plan.get("canonical") is True
                        else "NO: a development plan, which cannot authorize a freeze",
                    ),
                    ("amendment", plan.get("amendmentVersion")),
                    ("selected task count", fmt(plan.get("selectedTaskCount"))),
                    ("target power", fmt(_target(plan))),
                    ("planning method", (plan.get("frozen") or {}).get("planning_method")),
                    (
                        "final confirmatory bootstrap",
                        f"{fmt((plan.get('frozen') or {}).get('final_bootstrap_replicates_per_level'))}"
                        " resamples per clustering level (recorded, not simulated here)",
                    ),
                    ("seed", str((plan.get("frozen") or {}).get("seed"))),  # an id, not a quantity
                    (
                        "calibration",
                        f"{fmt(cal.get('tasks'))} tasks in {fmt(cal.get('repositories'))}"
                        f" repositories; records per class "
                        + ", ".join(
                            f"{k} {fmt(v)}" for k, v in (cal.get("recordsPerStratum") or {}).items()
                        ),
                    ),
                    ("eligible", ", ".join(f"{k} {fmt(v)}" for k, v in eligible.items())),
                    ("plan self digest", sha(plan.get("selfSha256"))),
                ],
                code=frozenset({"plan self digest"}),
            ),
            power_figure(plan),
            Table(
                (
                    "task count",
                    "power",
                    "Monte Carlo SE",
                    "successes / simulations",
                    "degenerate",
                    "null successes",
                    "removed null mean",
                    "df (repository, task)",
                ),
                [
                    (
                        fmt(r["taskCount"]),
                        fmt(r.get("power")),
                        fmt(r.get("mcSe")),
                        f"{fmt(r.get('successes'))} / {fmt(r.get('simulations'))}",
                        fmt(r.get("degenerate")),
                        fmt(r.get("nullSuccesses")),
                        fmt(r.get("removedNullMean"), digits=6),
                        f"{fmt(r.get('dfRepository'))}, {fmt(r.get('dfTask'))}",
                    )
                    for r in plan.get("rungs", [])
                ],
                numeric=frozenset({0, 1, 2, 3, 4, 5, 6}),
                caption="Each rung of the ladder: power, its Monte Carlo SE, degenerate cohorts,"
                " the cohorts that would succeed with no effect (null successes: the planning"
                " approximation's false-positive count, nominally 2.5%), the null mean removed"
                " and the degrees of freedom of the two t bounds",
            ),
        )
        if plan.get("skippedRungs"):
            report.add(
                Para(
                    "skipped rungs (fewer tasks than eligible repositories): "
                    + ", ".join(fmt(n) for n in plan["skippedRungs"]),
                    note=True,
                )
            )
        for key in ("warnings", "reasons"):
            for w in plan.get(key) or []:
                report.add(Para(f"{key[:-1]}: {w}", note=True))
        report.add(*_verdicts(info, plan, plan_step[-1], report))
    report.add(*diagnose_blocks(info, steps))

    if manifest:
        report.add(Heading("Freeze manifest"))
        inp = manifest.get("input") or {}
        models = inp.get("models") or []
        report.add(
            Facts(
                [
                    (
                        "validation",
                        "held: schema, self digest, rules, every file re-hashed"
                        if validated
                        else "did not hold (see the steps)",
                    ),
                    ("freeze target", inp.get("freeze_target")),
                    ("manifest self digest", sha(manifest.get("selfSha256"))),
                    ("repository commit", inp.get("repository_commit")),
                    (
                        "models",
                        "; ".join(f"{m.get('id')} ({m.get('base_lineage')})" for m in models)
                        or None,
                    ),
                    (
                        "claims",
                        ", ".join(
                            f"{k}: {fmt(v)}" for k, v in (manifest.get("claims") or {}).items()
                        ),
                    ),
                ],
                code=frozenset({"manifest self digest", "repository commit"}),
            ),  # fmt: skip
            Table(
                ("role", "path", "bytes", "SHA-256"),
                [
                    (a.get("role"), a.get("path"), fmt(a.get("bytes")), a.get("sha256"))
                    for a in manifest.get("artifacts", [])
                ],
                numeric=frozenset({2}),
                code=frozenset({0, 1, 3}),
            ),
        )
    elif not plan:
        report.add(Para("The steps wrote no power plan or manifest.", note=True))

    report.add(*steps_block(steps), *registered(info))
    return report
