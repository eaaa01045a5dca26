"""Cluster power simulation and digest freeze manifests (engine ``cluster-power-freeze``).

:mod:`.plan` simulates the power plan from calibration repository profiles
(:mod:`.calibration_input` reads and checks the calibration JSONL); :mod:`.plan_commands`
exposes the ``power_plan`` command handler; :mod:`.freeze` builds and validates freeze
manifests (:mod:`.freeze_commands`: ``freeze_manifest`` and ``validate``).
"""

from __future__ import annotations

from .freeze_commands import COMMANDS as _FREEZE
from .plan_commands import COMMANDS as _PLAN

COMMANDS = {**_PLAN, **_FREEZE}
