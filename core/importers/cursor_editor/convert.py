"""One Cursor composer (its ``composerData`` record and its bubbles) as OpenClaw entries, in
the shapes the Claude Code and Codex converters make, so the indexer's rules apply
unchanged: a bubble's ``text`` is a user (``type`` 1) or assistant (``type`` 2) message
(indexed); its ``thinking`` a thinking block, its ``toolFormerData`` a ``toolCall`` and a
``toolResult`` (stored, not indexed). Each entry's id is derived from the bubble's id, so a
composer read again stores only its new bubbles.

Cursor is closed source; the shapes are those of its ``state.vscdb`` as described publicly
(``composerData:<composerId>``: ``name``, ``createdAt``, ``lastUpdatedAt`` in milliseconds,
``fullConversationHeadersOnly[{bubbleId, type}]``, the older inline ``conversation``;
``bubbleId:<composerId>:<bubbleId>``: ``type``, ``text``, ``thinking.text``,
``toolFormerData{toolCallId, name, params or rawArgs, result, status}``, ``createdAt``,
``modelInfo.modelName``, ``tokenCount{inputTokens, outputTokens}``). A bubble without a
time takes the one before it (the composer's ``createdAt`` for the first), stable on a
re-read.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...storage import SessionMeta
from ..common import label_of
from ..format import SessionRead
from ..usage import openclaw_usage
from ..whole import append_linked, iso


def ms_of(value: Any) -> int | None:
    """A time as Cursor writes it (milliseconds, or an ISO string) in milliseconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and 0 < value < 32503680000000:
        return int(value)
    if isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return int(when.timestamp() * 1000)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def convert_composer(cid: str, composer: dict[str, Any], bubbles: list[tuple[str, Any]],
                     cwd: str | None, agent: str,
                     source: str = "cursor-editor") -> SessionRead | None:
    """``bubbles``: (bubble id, its decoded record) in the conversation's order."""
    prefix = f"agent:{agent}:{source}:"
    created = ms_of(composer.get("createdAt"))
    updated = ms_of(composer.get("lastUpdatedAt")) or created
    header: dict[str, Any] = {"type": "session", "version": 3, "id": cid}
    if created:
        header["timestamp"] = iso(created)
    if cwd:
        header["cwd"] = cwd
    config = composer.get("modelConfig") if isinstance(composer.get("modelConfig"), dict) else {}
    composer_model = _str(config.get("modelName"))
    events: list[dict[str, Any]] = [header]
    when = created
    first_prompt: str | None = None

    def add(entry: dict[str, Any]) -> None:
        append_linked(events, entry, when)

    for bid, bubble in bubbles:
        when = ms_of(bubble.get("createdAt")) or _client_time(bubble) or when
        role = {1: "user", 2: "assistant"}.get(bubble.get("type"))
        info = bubble.get("modelInfo") if isinstance(bubble.get("modelInfo"), dict) else {}
        model = _str(info.get("modelName")) or composer_model

        def message(entry_id: str, as_role: str, content: list[dict[str, Any]]) -> None:
            body: dict[str, Any] = {"role": as_role, "content": content}
            if as_role == "assistant":
                body["api"] = "cursor"
                if model:
                    body["model"] = model
            add({"type": "message", "id": entry_id, "message": body})

        thinking = bubble.get("thinking")
        thought = thinking.get("text") if isinstance(thinking, dict) else thinking
        if _str(thought):
            message(f"{bid}:thinking", "assistant", [{"type": "thinking", "thinking": thought}])
        tool = bubble.get("toolFormerData")
        if isinstance(tool, dict) and tool:
            _tool(bid, tool, message, add)
        text = bubble.get("text")
        if role is not None and _str(text) and text.strip():
            message(bid, role, [{"type": "text", "text": text}])
            if first_prompt is None and role == "user":
                first_prompt = text
        elif role is None:
            add({"type": "custom", "id": bid, "customType": "cursor.bubble",
                 "data": {"type": bubble.get("type")}})
        usage = _usage(bubble.get("tokenCount")) if role == "assistant" else None
        if usage is not None:
            message(f"{bid}:usage", "assistant", [])
            events[-1]["message"]["usage"] = usage
    if len(events) == 1:
        return None
    project = Path(cwd).name if cwd else ""
    meta = SessionMeta(key=prefix + cid, session_id=cid, spawned_by=None, parent_key=None,
                       label=label_of(project, _str(composer.get("name")) or first_prompt or cid),
                       created_at=created, updated_at=updated, source=source)
    return SessionRead(meta, events)


def _usage(counts: Any) -> dict[str, Any] | None:
    """An answer bubble's ``tokenCount {inputTokens, outputTokens}``, an entry of its own
    (Cursor fills it in after the bubble is written, and an entry stored is never rewritten).
    Cursor writes zeros where it counted nothing, so all zeros is no count."""
    if not isinstance(counts, dict):
        return None
    usage = openclaw_usage(input=counts.get("inputTokens"), output=counts.get("outputTokens"))
    return usage if usage and usage.get("totalTokens") else None


def _client_time(bubble: dict[str, Any]) -> int | None:
    timing = bubble.get("timingInfo")
    return ms_of(timing.get("clientStartTime")) if isinstance(timing, dict) else None


def _json(value: Any) -> Any:
    """``params`` / ``result`` are JSON held in a string."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _tool(bid: str, tool: dict[str, Any], message: Any, add: Any) -> None:
    call_id = _str(tool.get("toolCallId")) or f"{bid}:tool"
    name = _str(tool.get("name")) or str(tool.get("tool") or "tool")
    arguments = _json(tool.get("params") if tool.get("params") is not None
                      else tool.get("rawArgs"))
    if not isinstance(arguments, dict):
        arguments = {} if arguments in (None, "") else {"input": arguments}
    message(f"{bid}:call", "assistant",
            [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}])
    result = tool.get("result")
    if result is None and tool.get("status") != "error":
        return  # not answered (yet)
    # a call that failed is answered even when it holds no result: its status says so
    text = ("" if result is None else result if isinstance(result, str)
            else json.dumps(result, ensure_ascii=False))
    add({"type": "message", "id": f"{bid}:result", "message": {
        "role": "toolResult", "toolCallId": call_id, "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": tool.get("status") == "error"}})
