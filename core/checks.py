"""Checks of a request's plain fields, shared by every use case that takes them (search,
history, the lists of the CLI and MCP): a rule written once, in a module that imports none of
the use cases. The checks of names (agent ids, keys, hosts) stay with their rules
(``keys.py``, ``hosts.py``)."""

from __future__ import annotations

from typing import Any

from .errors import ValidationError


def validate_limit(value: Any, maximum: int) -> int:
    """A limit from a person or a program: a whole number from 1 to ``maximum``."""
    try:
        limit = int(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        limit = None
    if limit is None or not 1 <= limit <= maximum or str(value).strip() != str(limit):
        raise ValidationError(f"limit must be a whole number from 1 to {maximum}, not {value!r}")
    return limit
