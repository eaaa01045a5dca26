"""Shared set-up of the diagnose tests: compiled studies, their designs and plans."""

from __future__ import annotations

import functools
import importlib
import shutil
from pathlib import Path

from prereg.cli import main
from prereg.compiler.project import Project
from prereg.diagnose.command import build_plan
from prereg.diagnose.design import Rules
from prereg.study import study_context
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "answer-position"
AP = "answer-position"
D17 = "d17-multifact"


def compile_example(root: Path) -> Path:
    shutil.copytree(EXAMPLE / "spec", root / "spec")
    (root / "generated").mkdir()
    shutil.copy(ROOT / "generated" / "prereg.schema.json", root / "generated")
    assert main(["--project", str(root), "compile"]) == 0
    return root


@functools.cache
def study(root: Path, study_id: str):
    """(context, Rules, Design) of a compiled study."""
    module, ctx = study_context(Project(root), study_id)
    rules = Rules(importlib.import_module(module.__name__ + ".rules"))
    if study_id == D17:
        from prereg.engines.reachability.diagnose import diagnose_design
    else:
        from prereg.engines.factorial.commands import diagnose_design
    return ctx, rules, diagnose_design(ctx.config)


def plan_for(root: Path, study_id: str, scenarios, simulations: int, seed: int = 1):
    ctx, rules, design = study(root, study_id)
    plan, found = build_plan(ctx, design, rules, list(scenarios), simulations, seed)
    return plan, found


def condition_index(plan, scenario: str, effect=None) -> int:
    return next(
        i
        for i, c in enumerate(plan.conditions)
        if c.scenario == scenario and c.effect == (None if effect is None else float(effect))
    )
