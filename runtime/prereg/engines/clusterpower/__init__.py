"""Cluster power simulation and digest freeze manifests (engine ``cluster-power-freeze``).

:mod:`.plan` simulates the power plan from calibration repository profiles
(:mod:`.calibration_input` reads and checks the calibration JSONL); :mod:`.plan_commands`
exposes the ``power_plan`` command handler; :mod:`.freeze` builds and validates freeze
manifests (:mod:`.freeze_commands`: ``assemble``, ``freeze_manifest`` and ``validate``).  Every
handler receives the compiled spec config (``ctx.config``); :mod:`.config` reads it, by the
spec's names, into the plan's and the freeze's typed configuration (:func:`.config.plan_config`,
:func:`.config.freeze_config`).
"""

from __future__ import annotations

__all__ = ["COMMANDS", "freeze_config", "plan_config"]


def __getattr__(name: str):
    # imported on first use: registry discovery imports only .plugin
    if name == "COMMANDS":
        globals()["COMMANDS"] = commands = {
            "power_plan": _handler("plan_commands", "power_plan"),
            "assemble": _handler("freeze_commands", "assemble"),
            "freeze_manifest": _handler("freeze_commands", "freeze_manifest"),
            "validate": _handler("freeze_commands", "validate"),
            "diagnose": _handler("diagnose", "diagnose"),
        }
        return commands
    if name in ("plan_config", "freeze_config"):
        from . import config

        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _handler(module: str, name: str):
    """The handler ``name`` of ``module``, imported when it is called: the power plan needs
    neither the freeze's JSON Schema validation nor the freeze the plan's simulation."""

    def handler(ctx, args):
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{module}"), name)(ctx, args)

    handler.__name__ = handler.__qualname__ = name
    return handler
