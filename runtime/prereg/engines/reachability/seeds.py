"""Seed syntax and the public/private seed policy (``config.seedPolicy``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prereg.errors import UserError

_HEX_RUN = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True)
class SeedClass:
    public: bool
    reason: str
    # set when the seed is private in form but public in fact and accepted only as a
    # development seed (:func:`prereg.development.development_texts`): the label every output it reaches carries
    development: str | None = None

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


def low_entropy(seed: str, policy: Mapping[str, Any]) -> str | None:
    """Why the longest hex run of ``seed`` is not fresh randomness, or None: the registered
    entropy rule (constant ``seed-syntax``: ``minDistinctHex``, ``maxCountingRun``).  Fresh
    randomness uses many of the 16 hex digits and holds no long counting sequence: of 24 random
    hex digits, fewer than 8 distinct happens about once in 40,000 draws (simulated: 5 in
    200,000) and a counting run of 8 about once in 10 million; "aaaa..." or
    "0123456789abcdef..." are typed, not drawn."""
    min_distinct, max_counting = policy["minDistinctHex"], policy["maxCountingRun"]
    runs = _HEX_RUN.findall(seed)
    if not runs:
        return None
    run = max(runs, key=len)
    distinct = len(set(run))
    if distinct < min_distinct:
        return (
            f"its hex run uses {distinct} distinct digits, fewer than {min_distinct}: not"
            " fresh randomness"
        )
    longest = current = 1
    last = 0
    for a, b in zip(run, run[1:], strict=False):
        step = (int(b, 16) - int(a, 16)) % 16
        if step in (1, 15):  # counting up or down (0 follows f)
            current = current + 1 if step == last else 2
        else:
            current = 1
        last = step
        longest = max(longest, current)
    if longest > max_counting:
        return (
            f"its hex run counts {longest} digits in a row, more than {max_counting}: not"
            " fresh randomness"
        )
    return None


def classify_seed(
    seed: str,
    policy: Mapping[str, Any],
    project_root: Path | None = None,
    *,
    history: bool = False,
) -> SeedClass:
    """Public or private, with the reason (checks in order: listed, prefix, length, hex run,
    the hex run's entropy: :func:`low_entropy`; then, with ``project_root``, whether the seed
    occurs in a file committed to the project's git repository, or with ``history`` in any
    commit: :func:`prereg.gitrepo.committed_text`).  A seed written in the plan a demo run
    follows (:func:`prereg.development.development_texts`) is private with its ``development``
    label."""
    from prereg.development import development_label

    sc = _classify(seed, policy)
    if sc.public:
        return sc
    label = development_label(seed)
    if label:
        return SeedClass(False, sc.reason, label)
    if project_root is not None:
        from prereg.gitrepo import committed_text

        why = committed_text(Path(project_root), seed, history=history)
        if why:
            return SeedClass(
                True,
                f"{why}: anyone with the repository can regenerate its gold; a private seed is"
                " drawn fresh and kept out of version control",
            )
    return sc


def _classify(seed: str, policy: Mapping[str, Any]) -> SeedClass:
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
    low = low_entropy(seed, policy)
    if low:
        return SeedClass(True, low)
    return SeedClass(
        False,
        f"not listed, no public prefix, and it holds a run of {run} lowercase hex characters"
        f" (at least {need})",
    )
