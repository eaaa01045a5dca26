"""Seed syntax and the public/private seed policy (``config.seedPolicy``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prereg.errors import UserError

_HEX_RUN = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True)
class SeedClass:
    public: bool
    reason: str

    @property
    def word(self) -> str:
        return "public" if self.public else "private"


def check_seed_syntax(seed: str, policy: Mapping[str, Any]) -> None:
    """Raise a UserError unless ``seed`` matches ``seedPolicy.pattern``."""
    if not isinstance(seed, str) or re.fullmatch(policy["pattern"], seed) is None:
        rule = policy.get("syntax") or f"the pattern {policy['pattern']}"
        raise UserError(f"seed {seed!r} is invalid: a corpus seed must be {rule}")


def longest_hex_run(seed: str) -> int:
    return max((len(m) for m in _HEX_RUN.findall(seed)), default=0)


def classify_seed(seed: str, policy: Mapping[str, Any]) -> SeedClass:
    """Public or private, with the reason (checks in order: listed, prefix, length, hex run)."""
    if seed in policy["publicSeeds"]:
        return SeedClass(True, f"{seed!r} is a listed committed seed")
    for prefix in policy["publicPrefixes"]:
        if seed.startswith(prefix):
            return SeedClass(True, f"it starts with the public prefix {prefix!r}")
    if len(seed) > policy["maxLength"]:
        return SeedClass(True, f"it is longer than {policy['maxLength']} characters")
    run = longest_hex_run(seed)
    need = policy["privateMinHexRun"]
    if run < need:
        return SeedClass(
            True,
            f"its longest run of lowercase hex characters is {run}, fewer than {need}",
        )
    return SeedClass(
        False,
        f"not listed, no public prefix, and it holds a run of {run} lowercase hex characters"
        f" (at least {need})",
    )
