"""The study figures the power plan reports, and the plan's status decided from them by the
registered rule (the shared evaluator of :mod:`prereg.rules`).

The engine computes the figures; the spec's hypothesis named by constant ``power_plan``'s
``status_hypothesis`` decides the status with verdicts named as the ``statuses``.  Figures
(ids fixed here; a spec declares the ones its rule reads under ``figures:``):

- ``calibration-repositories``: C, the calibration repositories;
- ``calibration-repositories-beyond-eligible``: C − G (G the eligible repositories), so that
  "C < min(G, floor)" is "C < floor and C − G < 0";
- ``pass-stratum-calibration-repositories`` / ``fail-stratum-calibration-repositories``: the
  calibration repositories holding a statistic of each stratum;
- ``eligible-repositories``: G; ``eligible-pass-items`` / ``eligible-fail-items``: P and F;
- ``eligible-tasks-beyond-repositories``: N − G;
- ``power-rung-<n>`` for each rung n of the frozen ladder below N that was simulated, and
  ``power-full-universe`` for the rung N: successes / simulations, an exact share (a rung
  not simulated, skipped or beyond the universe, is missing and meets no comparison).

Every count is an exact integer and every power an exact share, so a registered threshold is
met exactly as the engine's own integer test (den·successes ≥ num·simulations) meets it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from prereg.errors import UserError

if TYPE_CHECKING:
    from prereg.rules import ContrastResult

FULL_UNIVERSE = "power-full-universe"
RUNG = "power-rung-{}"

#: The feasibility figures: the comparison each must fail for the plan to be feasible, as
#: (op, constant key of ``power_plan`` or None for the literal in ``_LITERAL``).
FEASIBILITY = {
    "calibration-repositories": ("lt", "min_calibration_repositories"),
    "calibration-repositories-beyond-eligible": ("lt", None),
    "pass-stratum-calibration-repositories": ("lt", "min_repositories_per_stratum"),
    "fail-stratum-calibration-repositories": ("lt", "min_repositories_per_stratum"),
    "eligible-repositories": ("lt", "min_eligible_repositories"),
    "eligible-pass-items": ("lt", None),
    "eligible-fail-items": ("lt", None),
    "eligible-tasks-beyond-repositories": ("lt", None),
}
_LITERAL = {
    "calibration-repositories-beyond-eligible": 0,
    "eligible-pass-items": 1,
    "eligible-fail-items": 1,
    "eligible-tasks-beyond-repositories": 0,
}


def reported(spec: Mapping[str, Any]) -> list[str]:
    """The figures this engine can report for a spec (``Engine.figures``)."""
    ladder = []
    for c in spec.get("constants") or ():
        if (
            isinstance(c, Mapping)
            and c.get("id") == "frozen"
            and isinstance(c.get("value"), Mapping)
        ):
            ladder = list(c["value"].get("ladder") or [])
    return [*FEASIBILITY, *(RUNG.format(n) for n in ladder), FULL_UNIVERSE]


def expected_comparison(figure: str, constants: Mapping[str, Any]) -> tuple[str, Fraction] | None:
    """(op, threshold) the registered status rule must compare ``figure`` with so that it says
    what the constants fix (None for a figure that is not the engine's)."""
    if figure in FEASIBILITY:
        op, key = FEASIBILITY[figure]
        value = _LITERAL[figure] if key is None else constants["power_plan"][key]
        return op, Fraction(value)
    if figure == FULL_UNIVERSE or figure.startswith("power-rung-"):
        tp = constants["frozen"]["target_power"]
        return "ge", Fraction(tp["numerator"], tp["denominator"])
    return None


def plan_figures(
    *,
    calibration_repositories: int | None,
    pass_repositories: int | None,
    fail_repositories: int | None,
    eligible: Mapping[str, int],
    rungs: Iterable[Mapping[str, Any]],
) -> dict[str, int | Fraction | None]:
    """Every figure from the plan's inputs and its simulated rungs (``taskCount`` or
    ``task_count``, ``successes``, ``simulations``); ``eligible`` by the plan's snake_case or
    camelCase keys.  A count given as None is missing."""
    from prereg.rules import share  # lazily: prereg.rules brings numpy

    g = eligible.get("repository_count", eligible.get("repositoryCount"))
    n = eligible.get("task_count", eligible.get("taskCount"))
    out: dict[str, int | Fraction | None] = {
        "calibration-repositories": calibration_repositories,
        "calibration-repositories-beyond-eligible": (
            None if calibration_repositories is None else calibration_repositories - g
        ),
        "pass-stratum-calibration-repositories": pass_repositories,
        "fail-stratum-calibration-repositories": fail_repositories,
        "eligible-repositories": g,
        "eligible-pass-items": eligible.get("pass_items", eligible.get("passItems")),
        "eligible-fail-items": eligible.get("fail_items", eligible.get("failItems")),
        "eligible-tasks-beyond-repositories": n - g,
    }
    for r in rungs:
        count = r.get("task_count", r.get("taskCount"))
        fid = FULL_UNIVERSE if count == n else RUNG.format(count)
        out[fid] = share(int(r["successes"]), int(r["simulations"]))
    return out


def results(figures: Mapping[str, int | Fraction | None]) -> dict[str, ContrastResult]:
    from prereg.rules import figure_result  # lazily: prereg.rules brings numpy

    return {k: figure_result(k, v) for k, v in figures.items()}


def decided_status(cfg, figures: Mapping[str, int | Fraction | None], engine_status: str) -> str:
    """The plan's status: the registered rule's verdict over the figures.  The engine's own
    test (the floors and the first rung reaching the target) must agree, else nothing is
    written: the spec's rule and its constants would say different things."""
    verdict = cfg.status_decision.decide(results(figures))
    if verdict != engine_status:
        raise UserError(
            f"the registered rule of hypothesis {cfg.status_decision.hypothesis!r} gives status"
            f" {verdict!r}, but the plan's constants (floors, ladder, target power) give"
            f" {engine_status!r}: the spec's rule and constants disagree; no plan written"
        )
    return verdict


def report_figures(plan: Mapping[str, Any], cal) -> dict[str, int | Fraction | None]:
    """The figures of a written plan, for its report: from the plan, and the stratum counts
    from its calibration input ``cal`` (None when it cannot be re-read as the plan read it)."""
    cal_info = plan.get("calibration") or {}
    return plan_figures(
        calibration_repositories=cal_info.get("repositories"),
        pass_repositories=None if cal is None else cal.repositories_with("pass"),
        fail_repositories=None if cal is None else cal.repositories_with("fail"),
        eligible=plan.get("eligible") or {},
        rungs=plan.get("rungs") or (),
    )
