"""The worst-case budget plan and the calibration window (``config.budget``, ``config.calibration``).

Budget arithmetic (exact decimals, from the configured numbers):

- attempts = rows × (1 + retriesPerRequest) (every request retried the maximum number of times);
- reserved tokens = attempts × perRequestTokenBound;
- reserved USD = reserved tokens / 1,000,000 × reservationFloorUsdPerMillionTokens;
- headroom against the study budget: study.calls − attempts, study.tokens − reserved tokens,
  study.usd − reserved USD (negative = the worst case exceeds the budget);
- headroom against the shared cap: sharedCapUsd − floorsUsd.study − reserved USD (the study
  floor is the spend already attested under the shared cap); the portfolio floor is reported.

Calibration window: expiry = effectiveAt + validDays days; a session of sessionMinutes may
start at ``now`` iff now + sessionMinutes ≤ expiry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from prereg.errors import UserError


def _d(x: Any) -> Decimal:
    return Decimal(str(x))


@dataclass(frozen=True)
class BudgetPlan:
    rows: int
    attempts: int
    reserved_tokens: Decimal
    reserved_usd: Decimal
    study_calls: Decimal
    study_tokens: Decimal
    study_usd: Decimal
    shared_cap_usd: Decimal
    study_floor_usd: Decimal
    portfolio_floor_usd: Decimal

    @property
    def headroom_calls(self) -> Decimal:
        return self.study_calls - self.attempts

    @property
    def headroom_tokens(self) -> Decimal:
        return self.study_tokens - self.reserved_tokens

    @property
    def headroom_usd(self) -> Decimal:
        return self.study_usd - self.reserved_usd

    @property
    def headroom_shared_usd(self) -> Decimal:
        return self.shared_cap_usd - self.study_floor_usd - self.reserved_usd

    @property
    def within(self) -> bool:
        return (
            min(
                self.headroom_calls,
                self.headroom_tokens,
                self.headroom_usd,
                self.headroom_shared_usd,
            )
            >= 0
        )


def budget_plan(budget: Mapping[str, Any], rows: int) -> BudgetPlan:
    attempts = rows * (1 + int(budget["retriesPerRequest"]))
    tokens = attempts * _d(budget["perRequestTokenBound"])
    usd = tokens / Decimal(1_000_000) * _d(budget["reservationFloorUsdPerMillionTokens"])
    st = budget["study"]
    return BudgetPlan(
        rows=rows,
        attempts=attempts,
        reserved_tokens=tokens,
        reserved_usd=usd,
        study_calls=_d(st["calls"]),
        study_tokens=_d(st["tokens"]),
        study_usd=_d(st["usd"]),
        shared_cap_usd=_d(budget["sharedCapUsd"]),
        study_floor_usd=_d(budget["floorsUsd"]["study"]),
        portfolio_floor_usd=_d(budget["floorsUsd"]["portfolio"]),
    )


EARLIEST = datetime(2, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 1, 1, tzinfo=UTC)


def parse_instant(text: str, what: str) -> datetime:
    """An ISO 8601 instant with a time zone (``Z`` or an offset); naive times are refused."""
    try:
        t = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise UserError(f"{what}: {text!r} is not an ISO 8601 date-time") from None
    if t.tzinfo is None:
        raise UserError(f"{what}: {text!r} has no time zone (write Z or an offset such as +02:00)")
    try:
        t = t.astimezone(UTC)
    except OverflowError:
        t = None
    if t is None or not EARLIEST <= t < LATEST:
        raise UserError(
            f"{what}: {text!r} is outside the years 0002 to 9998 (a session or a validity"
            " period added to it must stay a date)"
        )
    return t


def iso_ms(t: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC, milliseconds)."""
    t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Window:
    effective_at: datetime
    expires_at: datetime
    session: timedelta

    @property
    def latest_start(self) -> datetime:
        return self.expires_at - self.session

    def may_start(self, now: datetime) -> bool:
        return now + self.session <= self.expires_at


def calibration_window(cal: Mapping[str, Any]) -> Window:
    eff = parse_instant(cal["effectiveAt"], "config.calibration.effectiveAt")
    return Window(
        eff,
        eff + timedelta(days=float(cal["validDays"])),
        timedelta(minutes=float(cal["sessionMinutes"])),
    )
