"""Builders of OpenClaw-format events for tests."""

from __future__ import annotations

import itertools
import json
from typing import Any

BASE_MS = 1_780_000_000_000
_clock = itertools.count(1000, 1000)


def iso(ms: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def header(session_id: str = "sess-1", ms: int = BASE_MS) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": iso(ms)}


def msg(
    entry_id: str,
    parent: str | None,
    role: str,
    content: Any,
    ms: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    ms = BASE_MS + (next(_clock) if ms is None else ms)
    event = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": iso(ms),
        "message": {"role": role, "content": content, "timestamp": ms},
    }
    event.update(extra)
    return event


def leaf(entry_id: str, target: str | None, parent: str | None = None) -> dict[str, Any]:
    return {"type": "leaf", "id": entry_id, "parentId": parent, "targetId": target}


def lines(*events: dict[str, Any]) -> list[str]:
    return [json.dumps(e, ensure_ascii=False) for e in events]
