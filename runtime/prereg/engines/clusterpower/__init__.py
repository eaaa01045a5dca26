"""Cluster power simulation and digest freeze manifests (engine ``cluster-power-freeze``).

:mod:`.plan` simulates the power plan from calibration repository profiles
(:mod:`.calibration_input` reads and checks the calibration JSONL); :mod:`.plan_commands`
exposes the ``power_plan`` command handler; :mod:`.freeze` builds and validates freeze
manifests (:mod:`.freeze_commands`: ``freeze_manifest`` and ``validate``).  Every handler
receives the compiled spec config and maps it with :func:`.spec_config.config_from_spec`.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "config_from_spec"]


def __getattr__(name: str):
    # imported on first use: registry discovery imports only .plugin
    if name == "COMMANDS":
        from .freeze_commands import COMMANDS as freeze
        from .plan_commands import COMMANDS as plan

        globals()["COMMANDS"] = commands = {**plan, **freeze}
        return commands
    if name == "config_from_spec":
        from .spec_config import config_from_spec

        return config_from_spec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
