"""Paging by ``offset``, as OpenClaw's tools page: how many items were already returned."""

from __future__ import annotations

from typing import Any

from .errors import ValidationError

OFFSET_MAX = 10_000_000  # past any conversation or list; bounds what a caller can ask


def check_offset(value: Any) -> int:
    """An offset from a person or a program: a whole number from 0 (None is 0)."""
    if value is None:
        return 0
    try:
        offset = int(value) if not isinstance(value, (bool, float)) else None
    except (TypeError, ValueError):
        offset = None
    if offset is None or not 0 <= offset <= OFFSET_MAX or str(value).strip() != str(offset):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise ValidationError(f"offset must be a whole number from 0 to {OFFSET_MAX:,}, "
                              f"not {shown}")
    return offset
