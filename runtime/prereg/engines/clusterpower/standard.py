"""The cluster-power-freeze engine's standard commands: ``diagnose``, offered to every study
of the engine without declaring it (:mod:`prereg.compiler.commands`; a spec's ``commands:``
may override or rename it).  Imported at compile time: nothing heavy here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def commands(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    from prereg.diagnose.plain import command

    def option(name: str, help_: str) -> dict:
        return {"name": name, "kind": "option", "type": "integer", "required": True, "help": help_}

    return [
        command(
            [
                {
                    "name": "calibration",
                    "kind": "positional",
                    "type": "path",
                    "required": True,
                    "help": "the calibration statistics (JSONL), as power-plan reads them",
                },
                option("--eligible-task-count", "eligible confirmatory tasks N"),
                option("--eligible-repository-count", "eligible confirmatory repositories G"),
                option("--eligible-pass-items", "eligible official-pass items P"),
                option("--eligible-fail-items", "eligible official-fail items F"),
            ],
            ("smallest-effect", "no-effect"),
            "tasks=V1,V2,... (cohort task counts, G to N): the power at each, and whether it"
            " reaches the registered target power",
            "the power plan's operating characteristics at each task count of its ladder, the"
            " registered status and decision over them",
            "Simulate the power plan's cohorts (its own simulation, --seed and --simulations in"
            " place of the frozen ones) at every rung of the registered ladder, under the"
            " registered smallest effect and under no effect; report each rung's power and"
            " false-positive rate with Monte Carlo SEs, the status and decision the registered"
            " rules give over them, and with --vary the power at other task counts.",
        )
    ]
