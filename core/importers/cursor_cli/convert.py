"""Cursor CLI transcript lines as OpenClaw entries with derived ids and times."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...transcript import iso_to_ms
from ..appended import Converted, Records, derived_id, file_time, stamp
from ..common import ImportReport, label_of

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)


def is_line(record: dict[str, Any]) -> bool:
    return record.get("role") in ("user", "assistant") and isinstance(record.get("message"),
                                                                     dict)


def project_of(file: Path) -> str:
    """The encoded project folder a transcript sits under (``projects/<this>/…``)."""
    parts = file.parts
    if "agent-transcripts" in parts:
        at = len(parts) - 1 - parts[::-1].index("agent-transcripts")
        return parts[at - 1] if at > 0 else ""
    return ""


def convert(file: Path, session_id: str, records: Records, carry: dict[str, Any] | None,
            report: ImportReport) -> Converted:
    out = Converted()
    last = (carry or {}).get("lastId")
    last = last if isinstance(last, str) else None
    ts = file_time(file)  # this read's time, for the lines it takes in
    first_prompt = None
    for lineno, record in records:
        role = record.get("role")
        message = record.get("message")
        if role not in ("user", "assistant") or not isinstance(message, dict):
            report.skip(file, lineno, 'a Cursor transcript line needs "role" user or '
                        'assistant and a "message" object')
            continue
        raw = message.get("content")
        blocks = ([b for b in raw if isinstance(b, dict)] if isinstance(raw, list)
                  else [{"type": "text", "text": raw}] if isinstance(raw, str) else [])
        if role == "user":
            said, context = _user_text(blocks)
            if context:
                eid = derived_id(session_id, lineno, ":context")
                out.entries.append(stamp({
                    "type": "custom_message", "id": eid, "parentId": last,
                    "customType": "cursor.context", "content": context, "display": False,
                    "details": {"role": "user"}}, ts))
                last = eid
            if not said:
                continue
            first_prompt = first_prompt or "\n".join(b["text"] for b in said)
            message_out: dict[str, Any] = {"role": "user", "content": said}
        else:
            content = [_assistant_block(b, session_id, lineno, i) for i, b in enumerate(blocks)]
            message_out = {"role": "assistant", "content": content, "provider": "cursor"}
        eid = derived_id(session_id, lineno)
        out.entries.append(stamp({"type": "message", "id": eid, "parentId": last,
                                  "message": message_out}, ts))
        last = eid
    if out.entries and iso_to_ms(ts):
        out.times.append(iso_to_ms(ts))
        out.header["timestamp"] = ts
    subagent = file.parent.name == "subagents"
    what = first_prompt or file.stem
    out.label = label_of(project_of(file), what, "subagent: " if subagent else "")
    out.carry = {"lastId": last} if last else {}
    return out


def _user_text(blocks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                       list[dict[str, Any]]]:
    """What the user typed (the ``<user_query>`` insides) and what else the line holds."""
    said: list[dict[str, Any]] = []
    context: list[dict[str, Any]] = []
    for block in blocks:
        text = block.get("text")
        if block.get("type") != "text" or not isinstance(text, str):
            context.append(block)
            continue
        queries = _QUERY.findall(text)
        if not queries:  # no tags at all: what the user typed, as written
            said.append({"type": "text", "text": text})
            continue
        said += [{"type": "text", "text": q} for q in queries if q]
        rest = _QUERY.sub("", text).strip()
        if rest:
            context.append({"type": "text", "text": rest})
    return said, context


def _assistant_block(block: dict[str, Any], session_id: str, lineno: int,
                     index: int) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "tool_use":
        args = block.get("input")
        call_id = block.get("id") if isinstance(block.get("id"), str) and block["id"] else (
            derived_id(session_id, lineno, f":call{index}"))
        name = block.get("name") if isinstance(block.get("name"), str) else "tool"
        return {"type": "toolCall", "id": call_id, "name": name or "tool",
                "arguments": args if isinstance(args, dict) else {"value": args}}
    if kind in ("thinking", "reasoning"):
        thought = block.get("thinking", block.get("text"))
        return {"type": "thinking", "thinking": thought if isinstance(thought, str) else ""}
    return {"type": f"cursor.{kind}" if isinstance(kind, str) else "cursor.block",
            "block": block}
