"""The OpenClaw entries of one Claude Code record: user and assistant messages, tool results
(their own ``toolResult`` messages), ``claude-code.meta`` messages that are not user speech,
compaction entries (a compact summary folded into its boundary) and other system entries."""

from __future__ import annotations

from typing import Any

from ...transcript import iso_to_ms
from .blocks import (
    assistant_message,
    blocks,
    content_block,
    message_entry,
    meta_kind,
    plain_text,
    typed_command,
)
from .reading import Transcript

_ENVELOPE = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "isSidechain",
        "userType",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
        "slug",
        "timestamp",
        "agentId",
    }
)


class EntryMaker:
    """Makes each record's entries (``of``); remembers compaction boundaries across records."""

    def __init__(self, transcript: Transcript) -> None:
        self.by_uuid = transcript.by_uuid
        self.tool_names = transcript.tool_names
        self.compactions: dict[str, dict[str, Any]] = {}  # boundary uuid -> compaction entry
        self.folded: dict[str, str] = {}  # compact summary uuid -> compaction entry it joined

    def of(
        self, record: dict[str, Any], uid: str, ts: str | None
    ) -> list[dict[str, Any]] | None:
        kind = record["type"]
        ms = iso_to_ms(ts) if ts else 0
        base = {"timestamp": ts} if ts else {}
        if kind == "system":
            return [self._system_entry(record, uid, base)]
        message = record["message"]
        if kind == "assistant":
            return [message_entry(uid, base, assistant_message(message, record, ms))]
        # user
        content = message.get("content")
        if record.get("isCompactSummary"):
            text = plain_text(content)
            boundary = self.by_uuid.get(record.get("parentUuid") or "")
            if boundary is not None and boundary.get("subtype") == "compact_boundary":
                target = self.compactions.get(boundary.get("uuid"))
                if target is not None and not target.get("summary"):
                    target["summary"] = text
                    self.folded[uid] = target["id"]
                    return None
            return [
                {
                    "type": "compaction",
                    "id": uid,
                    **base,
                    "summary": text,
                    "tokensBefore": 0,
                    "details": {"source": "claude-code", "isCompactSummary": True},
                }
            ]
        entries: list[dict[str, Any]] = []
        rest: list[dict[str, Any]] = []
        for block in blocks(content) if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                entries.append(message_entry("", base, self._tool_result(block, record, ms)))
            else:
                rest.append(block)
        if isinstance(content, str):
            rest = [{"type": "text", "text": content}]
        if rest:
            converted = [content_block(b) for b in rest]
            why = meta_kind(record, converted)
            if why:
                entries.append(
                    {
                        "type": "custom_message",
                        "id": "",
                        **base,
                        "customType": "claude-code.meta",
                        "content": converted,
                        "display": False,
                        "details": {"kind": why},
                    }
                )
            else:
                converted = [typed_command(b) for b in converted]
                user = {"role": "user", "content": converted}
                if ms:
                    user["timestamp"] = ms
                entries.append(message_entry("", base, user))
        for n, entry in enumerate(entries):
            entry["id"] = uid if n == 0 else f"{uid}:{n}"
            if n:
                entry["parentId"] = entries[n - 1]["id"]
        return entries

    def _system_entry(
        self, record: dict[str, Any], uid: str, base: dict[str, Any]
    ) -> dict[str, Any]:
        subtype = record.get("subtype") if isinstance(record.get("subtype"), str) else "system"
        if subtype == "compact_boundary":
            meta = (
                record.get("compactMetadata")
                if isinstance(record.get("compactMetadata"), dict)
                else {}
            )
            entry = {
                "type": "compaction",
                "id": uid,
                **base,
                "summary": "",
                "tokensBefore": meta.get("preTokens")
                if isinstance(meta.get("preTokens"), int)
                else 0,
                "details": {"source": "claude-code", "trigger": meta.get("trigger")},
            }
            self.compactions[uid] = entry
            return entry
        data = {k: v for k, v in record.items() if k not in _ENVELOPE and v is not None}
        return {
            "type": "custom",
            "id": uid,
            **base,
            "customType": f"claude-code.{subtype}",
            "data": data,
        }

    def _tool_result(
        self, block: dict[str, Any], record: dict[str, Any], ms: int
    ) -> dict[str, Any]:
        call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else ""
        raw = block.get("content")
        if isinstance(raw, str):
            content = [{"type": "text", "text": raw}]
        else:
            content = [content_block(b) for b in blocks(raw)]
        result: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": self.tool_names.get(call_id, ""),
            "content": content,
            "isError": bool(block.get("is_error")),
        }
        extra = record.get("toolUseResult")
        if isinstance(extra, dict) and isinstance(extra.get("agentId"), str):
            result["details"] = {"agentId": extra["agentId"], "status": extra.get("status")}
        if ms:
            result["timestamp"] = ms
        return result
