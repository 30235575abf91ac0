"""Factory Droid lines as OpenClaw entries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...transcript import iso_to_ms
from ..appended import Converted, Records, derived_id, stamp, text_of
from ..common import ImportReport, label_of

_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def is_line(record: dict[str, Any]) -> bool:
    return record.get("type") in ("session_start", "message")


def settings_model(file: Path) -> str | None:
    """The model named in the session's ``<id>.settings.json``, if it can be read."""
    settings = file.with_name(file.name[: -len(".jsonl")] + ".settings.json")
    try:
        data = json.loads(settings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return _str(data.get("model")) if isinstance(data, dict) else None


def convert(file: Path, session_id: str, records: Records, carry: dict[str, Any] | None,
            report: ImportReport) -> Converted:
    out = Converted()
    state = carry or {}
    last = _str(state.get("lastId"))
    model = _str(state.get("model")) if carry is not None else settings_model(file)
    title = first_prompt = cwd = None
    for lineno, record in records:
        kind = record.get("type")
        ts = _str(record.get("timestamp"))
        if ts and iso_to_ms(ts):
            out.times.append(iso_to_ms(ts))
            out.header.setdefault("timestamp", ts)
        eid = _str(record.get("id")) if kind != "session_start" else None
        eid = eid if eid and not eid.startswith("#") else derived_id(session_id, lineno)
        parent = _str(record.get("parentId")) or last
        if kind == "session_start":
            title = _str(record.get("title")) or _str(record.get("sessionTitle"))
            cwd = _str(record.get("cwd"))
            data = {k: v for k, v in record.items() if k not in ("type",)}
            entry: dict[str, Any] = {"type": "custom", "customType": "droid.session_start",
                                     "data": data}
        elif kind == "message":
            message = record.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user",
                                                                           "assistant"):
                report.skip(file, lineno, 'a Droid message line needs "message" with role '
                            "user or assistant")
                continue
            raw = message.get("content")
            blocks = ([b for b in raw if isinstance(b, dict)] if isinstance(raw, list)
                      else [{"type": "text", "text": raw}] if isinstance(raw, str) else [])
            if message["role"] == "assistant":
                content = [_block(b) for b in blocks]
                out_message: dict[str, Any] = {"role": "assistant", "content": content,
                                               "provider": "factory"}
                if _str(message.get("model")) or model:
                    out_message["model"] = _str(message.get("model")) or model
                entry = {"type": "message", "message": out_message}
            else:
                # one line may hold tool results, injected context and the user's words: each
                # its own entry, chained, the last one keeping the line's id (the next line
                # names it as its parent)
                parts = [{"type": "message", "message": _tool_result(b)}
                         for b in blocks if b.get("type") == "tool_result"]
                said, context = _user(blocks)
                if context:
                    parts.append({"type": "custom_message", "customType": "droid.context",
                                  "content": context, "display": False,
                                  "details": {"role": "user", "kind": "system-reminder"}})
                if said:
                    if first_prompt is None:
                        first_prompt = "\n".join(b["text"] for b in said
                                                 if b.get("type") == "text")
                    parts.append({"type": "message",
                                  "message": {"role": "user", "content": said}})
                if not parts:
                    parts.append({"type": "custom", "customType": "droid.empty", "data": {}})
                for n, part in enumerate(parts[:-1]):
                    pid = f"{eid}:{n}"
                    out.entries.append(stamp({"type": part.pop("type"), "id": pid,
                                              "parentId": parent, **part}, ts))
                    parent = pid
                entry = parts[-1]
        else:
            entry = {"type": "custom", "customType": f"droid.{kind}"
                     if isinstance(kind, str) and kind else "droid.line", "data": record}
        out.entries.append(stamp({"type": entry.pop("type"), "id": eid, "parentId": parent,
                                  **entry}, ts))
        last = eid
    if cwd:
        out.header["cwd"] = cwd
    project = Path(cwd.replace("\\", "/")).name if cwd else file.parent.name
    out.label = label_of(project, title or first_prompt or file.stem)
    out.carry = {k: v for k, v in (("lastId", last), ("model", model)) if v}
    return out


def _user(blocks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The user's own blocks, and the injected ``<system-reminder>`` context split off."""
    said: list[dict[str, Any]] = []
    context: list[dict[str, Any]] = []
    for block in blocks:
        kind, text = block.get("type"), block.get("text")
        if kind == "tool_result":
            continue
        if kind != "text" or not isinstance(text, str):
            said.append(_block(block))
            continue
        reminders = [m.group(0).strip() for m in _REMINDER.finditer(text)]
        if reminders:
            context += [{"type": "text", "text": r} for r in reminders]
            text = _REMINDER.sub("\n", text).strip()
        if text:
            said.append({"type": "text", "text": text})
    return said, context


def _block(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "thinking":
        thought = block.get("thinking", block.get("text"))
        return {"type": "thinking", "thinking": thought if isinstance(thought, str) else ""}
    if kind == "tool_use":
        args = block.get("input")
        return {"type": "toolCall", "id": _str(block.get("id")) or "",
                "name": _str(block.get("name")) or "tool",
                "arguments": args if isinstance(args, dict) else {"value": args}}
    if kind == "image":
        return dict(block)
    return {"type": f"droid.{kind}" if isinstance(kind, str) else "droid.block",
            "block": block}


def _tool_result(block: dict[str, Any]) -> dict[str, Any]:
    content = block.get("content")
    if isinstance(content, list):
        text = "\n".join(b.get("text") for b in content
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
    else:
        text = text_of(content)
    return {"role": "toolResult", "toolCallId": _str(block.get("tool_use_id")) or "",
            "toolName": "", "content": [{"type": "text", "text": text}],
            "isError": block.get("is_error") is True}
