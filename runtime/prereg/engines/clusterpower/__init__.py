"""Cluster power simulation and digest freeze manifests (engine ``cluster-power-freeze``).

:mod:`.plan` simulates the power plan from calibration repository profiles
(:mod:`.calibration_input` reads and checks the calibration JSONL); :mod:`.plan_commands`
exposes the ``power_plan`` command handler.
"""

from __future__ import annotations

from .plan_commands import COMMANDS as _PLAN

COMMANDS = dict(_PLAN)
