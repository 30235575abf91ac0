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


def billing_conversation(messages: int, first: str | None = None,
                         last: str | None = None) -> list[str]:
    """``messages`` user and assistant messages of about 60 characters; every 100th message
    the agent runs a ``bash`` tool (every other one fails); ``first`` and ``last``, when
    given, are the first and last messages' words (tests/test_export_chromium.py,
    benchmarks/bench_export.py)."""
    events: list[dict[str, Any]] = [header("sid-long")]
    parent: str | None = None
    ms = BASE_MS

    def add(message: dict[str, Any]) -> None:
        nonlocal parent, ms
        ms += 1000
        entry = f"e{len(events)}"
        events.append({"type": "message", "id": entry, "parentId": parent, "timestamp": iso(ms),
                       "message": {**message, "timestamp": ms}})
        parent = entry

    for n in range(messages):
        role = "user" if n % 2 == 0 else "assistant"
        words = f"message {n}: checking the billing queue, step {n} of {messages}."
        if n == 0 and first:
            words = first
        elif n == messages - 1 and last:
            words = last
        if role == "assistant" and n % 100 == 1:
            failed = n % 200 == 1
            add({"role": "assistant", "content": [
                {"type": "text", "text": words},
                {"type": "toolCall", "id": f"c{n}", "name": "bash",
                 "arguments": {"command": f"./deploy.sh billing-api v2.{n}.0"}}]})
            add({"role": "toolResult", "toolCallId": f"c{n}", "toolName": "bash",
                 "isError": failed, "content": [{"type": "text", "text":
                     "ImagePullBackOff\nexit code 1" if failed else "rolled out"}]})
        else:
            add({"role": role, "content": [{"type": "text", "text": words}]})
    return [json.dumps(e) for e in events]
