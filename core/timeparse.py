"""Times people type: ISO dates/times, epoch milliseconds, or "3h" / "2d" / "1w" ago."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from .errors import ValidationError
from .redact import quoted

_AGO_RE = re.compile(r"^([0-9]{1,12})\s*(m|min|h|d|w)(?:\s+ago)?$")
_DIGITS = re.compile(r"^[0-9]{1,20}$")  # ASCII digits only: "²".isdigit() is True
MAX_TIME_CHARS = 64
_UNIT_MS = {"m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


def parse_time(text: str | None, now_ms: int | None = None) -> int | None:
    """Epoch milliseconds for a time given on the command line, or None when not given."""
    ms = _parse(text, now_ms)
    if ms is not None and not -MAX_MS <= ms <= MAX_MS:
        raise ValidationError(f"{quoted(text, 40)} is too far from now to be a time")
    return ms


MAX_MS = 2**53


def _parse(text: str | None, now_ms: int | None) -> int | None:
    if text is None or not str(text).strip():
        return None
    value = str(text).strip().lower()
    if len(value) > MAX_TIME_CHARS:
        raise ValidationError(f"{quoted(text, 40)} is not a time: it is {len(value):,} characters long")
    if _DIGITS.match(value):
        number = int(value)
        return number * 1000 if number < 100_000_000_000 else number  # seconds or ms
    match = _AGO_RE.match(value)
    if match:
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        return now - int(match.group(1)) * _UNIT_MS[match.group(2)]
    try:
        moment = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"{quoted(text, 40)} is not a time: use an ISO date (2026-11-30 or 2026-11-30T12:00), "
            "epoch milliseconds, or an age like 3h, 2d, 1w"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return int(moment.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        raise ValidationError(f"{quoted(text, 40)} is too far from now to be a time") from None
