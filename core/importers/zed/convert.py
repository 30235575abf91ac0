"""One Zed thread (its ``threads`` row and the JSON of its ``DbThread``) as OpenClaw entries,
in the shapes the Claude Code and Codex converters make, so the indexer's rules apply
unchanged: a ``Text`` item of a ``User`` or ``Agent`` message is a user or assistant message
(indexed); ``Thinking`` a thinking block, ``ToolUse`` a ``toolCall`` and its entry in the
message's ``tool_results`` a ``toolResult`` (stored, not indexed); a ``Mention`` (a file's
text the user attached) and the rest custom entries.

The shapes are Zed's own (zed-industries/zed ``crates/agent/src/db.rs``: ``DbThread``;
``crates/agent/src/thread.rs``: ``Message``, externally tagged ``{"User": …}`` /
``{"Agent": …}`` / ``"Resume"``, ``UserMessageContent``, ``AgentMessageContent``), and the
older ``legacy_thread.rs`` shape (``{role, segments, tool_uses, tool_results}``) that Zed
still reads.

Zed keeps no id on an agent message and no time on any message: a thread is rewritten whole,
so each entry's id is derived from the user message it follows (its ``UserMessageId``) and
its place after it (``<user id>:a<n>:<item>``), a tool call's from its own id. Zed truncating
a thread (a user message edited: it and what follows dropped) gives the new turn a new user
id, so what was stored stays and the new turn is a branch. An entry is timed by the thread's
``updated_at`` when first read (a re-read stores nothing again, so its time is stable).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from ...storage import SessionMeta
from ..common import label_of
from ..format import SessionRead
from ..whole import append_linked, iso


def millis(text: Any) -> int | None:
    """An RFC 3339 time (``updated_at``) in milliseconds, or None."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return int(when.timestamp() * 1000)


def folder_of(folder_paths: Any) -> str | None:
    """The project folder: the first of the thread's ``folder_paths`` (a ``PathList``
    serialized one path a line)."""
    if not isinstance(folder_paths, str):
        return None
    first = next((line for line in folder_paths.splitlines() if line.strip()), None)
    return first


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def convert_thread(row: tuple, thread: dict[str, Any], agent: str,
                   source: str = "zed") -> SessionRead | None:
    """``row`` is (id, summary, updated_at, parent_id, folder_paths, created_at)."""
    tid, summary, updated, parent, folder_paths, created = row
    updated_ms = millis(updated) or millis(thread.get("updated_at"))
    created_ms = millis(created) or updated_ms
    prefix = f"agent:{agent}:{source}:"
    parent_key = prefix + parent if _str(parent) else None
    cwd = folder_of(folder_paths)
    header: dict[str, Any] = {"type": "session", "version": 3, "id": tid}
    if created_ms:
        header["timestamp"] = iso(created_ms)
    if cwd:
        header["cwd"] = cwd
    if parent_key:
        header["parentSession"] = parent
    model, provider = _model(thread.get("model"))
    when = updated_ms
    events: list[dict[str, Any]] = [header]
    first_prompt: str | None = None

    def add(entry: dict[str, Any]) -> None:
        append_linked(events, entry, when)

    def message(entry_id: str, role: str, content: list[dict[str, Any]]) -> None:
        body: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            body["api"] = "zed"
            if provider:
                body["provider"] = provider
            if model:
                body["model"] = model
        add({"type": "message", "id": entry_id, "message": body})

    anchor, after = f"{tid}:", 0
    messages = thread.get("messages") if isinstance(thread.get("messages"), list) else []
    for position, raw in enumerate(messages):
        if isinstance(raw, dict) and "role" in raw:  # the older (agent 1) shape
            text = _legacy(raw, f"{tid}:m{raw.get('id', position)}", message, add)
            if first_prompt is None and raw.get("role") == "user" and text:
                first_prompt = text
            continue
        kind, body = _tagged(raw)
        if kind == "User":
            uid = _str(body.get("id")) or f"{tid}:{position}"
            anchor, after = uid, 0
            for index, item in enumerate(_items(body)):
                item_kind, value = _tagged(item)
                entry_id = f"{uid}:{index}"
                if item_kind == "Text" and isinstance(value, str):
                    message(entry_id, "user", [{"type": "text", "text": value}])
                    if first_prompt is None and value.strip():
                        first_prompt = value
                elif item_kind == "Mention" and isinstance(value, dict):
                    add({"type": "custom_message", "id": entry_id, "customType": "zed.mention",
                         "content": [{"type": "text", "text": str(value.get("content") or "")}],
                         "display": False, "details": {"uri": value.get("uri")}})
                else:
                    add({"type": "custom", "id": entry_id,
                         "customType": f"zed.{(item_kind or 'unknown').lower()}",
                         "data": {} if item_kind == "Image" else {"value": value}})
        elif kind == "Agent":
            after += 1
            base = f"{anchor}:a{after}"
            results = body.get("tool_results") if isinstance(body.get("tool_results"),
                                                             dict) else {}
            for index, item in enumerate(_items(body)):
                item_kind, value = _tagged(item)
                entry_id = f"{base}:{index}"
                if item_kind == "Text" and isinstance(value, str):
                    message(entry_id, "assistant", [{"type": "text", "text": value}])
                elif item_kind == "Thinking" and isinstance(value, dict):
                    message(entry_id, "assistant",
                            [{"type": "thinking", "thinking": str(value.get("text") or "")}])
                elif item_kind == "ToolUse" and isinstance(value, dict):
                    _tool(entry_id, value, results, message, add)
                else:
                    add({"type": "custom", "id": entry_id,
                         "customType": f"zed.{(item_kind or 'unknown').lower()}", "data": {}})
        elif raw == "Resume":
            after += 1
            add({"type": "custom", "id": f"{anchor}:r{after}", "customType": "zed.resume",
                 "data": {}})
    title = _str(summary) or _str(thread.get("title"))
    project = Path(cwd).name if cwd else ""
    meta = SessionMeta(key=prefix + tid, session_id=tid, spawned_by=parent_key,
                       parent_key=parent_key,
                       label=label_of(project, title or first_prompt or tid),
                       created_at=created_ms, updated_at=updated_ms, source=source)
    if len(events) == 1:
        return None
    return SessionRead(meta, events)


def _tagged(value: Any) -> tuple[str | None, Any]:
    """An externally tagged enum value: ``{"Tag": body}`` -> (Tag, body)."""
    if isinstance(value, dict) and len(value) == 1:
        [(kind, body)] = value.items()
        return kind, body
    if isinstance(value, str):
        return value, None
    return None, value


def _items(body: Any) -> list[Any]:
    content = body.get("content") if isinstance(body, dict) else None
    return content if isinstance(content, list) else []


def _model(model: Any) -> tuple[str | None, str | None]:
    if not isinstance(model, dict):
        return None, None
    return _str(model.get("model")), _str(model.get("provider"))


def _result_text(content: Any) -> str:
    """A ``LanguageModelToolResultContent``: a string, ``{"Text": …}``, or a list of them."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_result_text(c) for c in content)
    kind, value = _tagged(content)
    if kind == "Text" and isinstance(value, str):
        return value
    return "" if content is None else json.dumps(content, ensure_ascii=False)[:2000]


def _tool(entry_id: str, use: dict[str, Any], results: dict[str, Any], message: Any,
          add: Any) -> None:
    call_id = _str(use.get("id")) or entry_id
    name = _str(use.get("name")) or "tool"
    arguments = use.get("input") if isinstance(use.get("input"), dict) else {}
    message(f"{entry_id}:{call_id}", "assistant",
            [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}])
    result = results.get(call_id)
    if isinstance(result, dict):
        add({"type": "message", "id": f"{entry_id}:{call_id}:result", "message": {
            "role": "toolResult", "toolCallId": call_id,
            "toolName": _str(result.get("tool_name")) or name,
            "content": [{"type": "text", "text": _result_text(result.get("content"))}],
            "isError": bool(result.get("is_error"))}})


def _legacy(raw: dict[str, Any], base: str, message: Any, add: Any) -> str | None:
    """A message of the older shape (``legacy_thread.rs``: ``SerializedMessage``)."""
    role = "user" if raw.get("role") == "user" else "assistant"
    if raw.get("role") not in ("user", "assistant"):
        return None
    first: str | None = None
    segments = raw.get("segments") if isinstance(raw.get("segments"), list) else []
    for index, segment in enumerate(segments):
        if not isinstance(segment, dict):
            continue
        text = segment.get("text") if isinstance(segment.get("text"), str) else None
        if segment.get("type") == "text" and text is not None:
            message(f"{base}:{index}", role, [{"type": "text", "text": text}])
            first = first or text
        elif segment.get("type") == "thinking" and text is not None:
            message(f"{base}:{index}", "assistant", [{"type": "thinking", "thinking": text}])
    results = {r.get("tool_use_id"): {"tool_name": None, **r}
               for r in (raw.get("tool_results") or []) if isinstance(r, dict)}
    for index, use in enumerate(raw.get("tool_uses") or []):
        if isinstance(use, dict):
            _tool(f"{base}:t{index}", use, results, message, add)
    return first
