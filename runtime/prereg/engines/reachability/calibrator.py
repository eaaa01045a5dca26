"""The isotonic calibrator artifact: fit, load, verify, and its validity window.

An artifact is one JSON object with five fields, named by the study's calibrator record
contract; ``names`` maps each role to its field name (``ScoringSpec.calibrator_fields``): ``id``,
``effectiveAt`` (an instant), ``validDays`` (days), ``blocks`` (``[{lower, yes, n}]``) and
``digest``, which is :func:`prereg.digest.digest` of the object without it (RFC 8785 canonical
JSON).  It is valid from its effective instant to that instant plus its days, both ends
included.  Blocks map scores as :func:`prereg.stats.calibration.apply_isotonic` describes.

Configuration (``config["constants"]``):

- ``calibration``: ``validDays`` (the validity period a fitted artifact gets, and the longest a
  scored artifact may claim) and ``sessionMinutes`` (a collection session's length).
- ``calibrator-fit``: ``minBlockSize`` (the fit's smallest block, see
  :func:`prereg.stats.calibration.fit_isotonic_blocks`) and ``idPrefix`` (artifact id =
  ``<idPrefix>-<first 12 hex digits of the blocks' digest>``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from prereg.digest import digest, digest_hex
from prereg.errors import UserError
from prereg.stats.calibration import fit_isotonic_blocks

from .budget import iso_ms, parse_instant


@dataclass(frozen=True)
class Calibrator:
    id: str
    effective_at: datetime
    expires_at: datetime
    blocks: tuple[Mapping[str, Any], ...]
    digest: str
    artifact: Mapping[str, Any]

    def valid_at(self, t: datetime) -> bool:
        return self.effective_at <= t <= self.expires_at

    def window(self) -> str:
        return f"{iso_ms(self.effective_at)} to {iso_ms(self.expires_at)}"


def artifact_digest(artifact: Mapping[str, Any], digest_field: str) -> str:
    return digest({k: v for k, v in artifact.items() if k != digest_field})


def fit_artifact(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[int] | np.ndarray,
    *,
    effective_at: str,
    valid_days: float,
    min_block_size: int,
    id_prefix: str,
    names: Mapping[str, str],
) -> dict[str, Any]:
    """A new artifact (with its digest) fitted on raw P(yes) ``scores`` and gold 0/1 ``labels``."""
    t = parse_instant(effective_at, "--effective-at")
    try:
        blocks = fit_isotonic_blocks(scores, labels, min_block_size)
    except ValueError as exc:
        raise UserError(f"cannot fit a calibrator: {exc}") from None
    if float(valid_days) == int(valid_days):
        valid_days = int(valid_days)
    body = {
        names["id"]: f"{id_prefix}-{digest_hex(blocks)[:12]}",
        names["effectiveAt"]: iso_ms(t),
        names["validDays"]: valid_days,
        names["blocks"]: blocks,
    }
    return {**body, names["digest"]: digest(body)}


def _check_blocks(blocks: Any, source: str, field: str) -> list[str]:
    problems = []
    if not isinstance(blocks, list) or not blocks:
        return [f"{source}: at /{field}: a calibrator needs at least one block"]
    for i, b in enumerate(blocks):
        where = f"{source}: at /{field}/{i}"
        if not isinstance(b, dict) or set(b) != {"lower", "yes", "n"}:
            problems.append(f"{where}: a block is exactly {{lower, yes, n}}")
            continue
        lo, k, n = b["lower"], b["yes"], b["n"]
        if isinstance(lo, bool) or not isinstance(lo, (int, float)) or not math.isfinite(lo):
            problems.append(f"{where}/lower: not a finite number")
        for name, v in (("yes", k), ("n", n)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                problems.append(f"{where}/{name}: not a non-negative integer")
        if isinstance(k, int) and isinstance(n, int) and k > n:
            problems.append(f"{where}: yes ({k}) exceeds n ({n})")
    return problems


def load_calibrator(
    path: str | Path,
    schema_path: Path,
    expected_digest: str,
    max_valid_days: float,
    names: Mapping[str, str],
) -> Calibrator:
    """Read, validate and verify an artifact against the digest the operator expects."""
    from prereg.records import read_records

    path = Path(path)
    (obj,) = read_records(path, schema_path, "json")
    problems = _check_blocks(obj.get(names["blocks"]), str(path), names["blocks"])
    days_field = names["validDays"]
    days = obj[days_field]
    if not (isinstance(days, (int, float)) and not isinstance(days, bool) and days > 0):
        problems.append(f"{path}: at /{days_field}: must be a positive number of days")
    elif days > max_valid_days:
        problems.append(
            f"{path}: at /{days_field}: {days} days exceeds the registered validity period"
            f" of {max_valid_days} days"
        )
    if problems:
        raise UserError(f"{path}: not a valid calibrator artifact", problems=problems)
    actual = artifact_digest(obj, names["digest"])
    if obj[names["digest"]] != actual:
        raise UserError(
            f"{path}: the artifact's digest field {obj[names['digest']]} does not match its"
            f" content ({actual}); the artifact was altered"
        )
    if expected_digest != actual:
        raise UserError(
            f"{path}: calibrator digest {actual} differs from --calibrator-digest"
            f" {expected_digest}; refusing to score with another calibrator"
        )
    eff = parse_instant(obj[names["effectiveAt"]], f"{path}: at /{names['effectiveAt']}")
    return Calibrator(
        id=obj[names["id"]],
        effective_at=eff,
        expires_at=eff + timedelta(days=float(days)),
        blocks=tuple(obj[names["blocks"]]),
        digest=actual,
        artifact=obj,
    )
