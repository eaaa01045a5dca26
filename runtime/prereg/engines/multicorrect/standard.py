"""The multicorrect-scoring engine's standard commands: ``diagnose``, offered to every study of
the engine without declaring it (:mod:`prereg.compiler.commands`; a spec's ``commands:`` may
override or rename it).  Imported at compile time: nothing heavy here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def commands(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    from prereg.diagnose.plain import command

    return [
        command(
            [],
            ("diagnostic",),
            "lists=V1,V2,... (both splits' choice lists; lists:fit or lists:evaluate for one):"
            " the registered diagnostic at each count, and whether every run passes",
            "the registered decision and figures over many runs of the registered synthetic"
            " diagnostic, at its list counts or others",
            "Run the registered diagnostic (constant diagnostic's synthetic choice lists, on as"
            " many fresh seeds per run as constant diagnostic-seeds lists) --simulations times,"
            " scored by the engine's own code; report the share of each verdict and decision"
            " outcome, each contract's failure rate and the mean figures of the evaluate split,"
            " and with --vary the same at other list counts.",
        )
    ]
