"""Gemini CLI records to chained entries (google-gemini/gemini-cli
``packages/core/src/services/chatRecordingTypes.ts`` and ``chatRecordingService.ts``).

The records are read in file order, as the CLI's ``loadConversationRecord`` reads them, but
nothing is ever dropped: the CLI's live message list (``current``) only decides where a new
message hangs. A message record written again under its id (tokens, tool calls or tool
results added) stores only the entries the earlier copies did not have; the first stored
text of a message is the one kept (a later copy that masks or replaces it is ignored). A
``$rewindTo`` makes a branch: a ``leaf`` control moves the active leaf back to the message
before the one rewound to, and what follows hangs from there. A ``$set`` of ``messages``
(compression, masking) adds the messages it names that are new (a summary) after the leaf,
and the conversation goes on from the last message of the new list: the older messages stay.

A ``gemini`` message's ``tokens`` (one model call's usage, set once, often on a later copy of
the message than its text) are an assistant entry of their own with no content,
``<id>:usage``: the entries of the first copy are stored before the tokens arrive, and an
entry stored is never rewritten, so the usage cannot ride on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...transcript import iso_to_ms
from ..usage import minus, openclaw_usage, plus

CONTEXT = "gemini.context"
NOTE = "gemini.note"


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parts_of(content: Any) -> list[Any]:
    """A ``PartListUnion`` (a string, one part or a list of parts) as a list of parts."""
    if isinstance(content, list):
        return content
    if content is None:
        return []
    return [content]


def text_of(content: Any) -> str:
    """The text parts of a ``PartListUnion`` (thought parts left out)."""
    out = []
    for part in parts_of(content):
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get(
                "thought"):
            out.append(part["text"])
    return "".join(out)


def _result_text(result: Any) -> str:
    out = []
    for part in parts_of(result):
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response")
                output = response.get("output") if isinstance(response, dict) else None
                out.append(output if isinstance(output, str) else json.dumps(
                    response, ensure_ascii=False))
    return "\n".join(out)


@dataclass
class Converted:
    entries: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # metadata line(s) and $set patches
    first_prompt: str = ""
    model: str | None = None
    times: list[int] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)


class _Converter:
    def __init__(self, carry: dict[str, str | None] | None = None) -> None:
        self.out = Converted()
        # The CLI's message list (ids), as it stands, and each listed message's last entry:
        # all a read of the lines after these needs (a message met again that is not listed
        # makes its entries again, and the store knows them by id).
        self.current: list[str] = list(carry or {})
        self.tails: dict[str, str] = {k: v for k, v in (carry or {}).items() if v}
        self.seen: set[str] = set()  # entry ids made in this read

    def leaf(self) -> str | None:
        """The tail of the last message of the current list that has entries."""
        for mid in reversed(self.current):
            if mid in self.tails:
                return self.tails[mid]
        return None

    def before(self, mid: str) -> str | None:
        """The tail of the message before ``mid`` in the current list."""
        index = self.current.index(mid)
        for prior in reversed(self.current[:index]):
            if prior in self.tails:
                return self.tails[prior]
        return None

    def add(self, entry: dict[str, Any], parent: str | None) -> str | None:
        if entry["id"] in self.seen:
            return None
        self.seen.add(entry["id"])
        entry["parentId"] = parent
        self.out.entries.append(entry)
        return str(entry["id"])

    def message(self, record: dict[str, Any], parent: str | None) -> None:
        mid = record["id"]
        parent = self.tails.get(mid, parent)
        for entry in _entries(record, self.out):
            made = self.add(entry, parent)
            if made is not None:
                parent = made
                self.tails[mid] = made
        ts = str_or_none(record.get("timestamp"))
        if ts and iso_to_ms(ts):
            self.out.times.append(iso_to_ms(ts))

    def record(self, lineno: int, record: dict[str, Any]) -> None:
        if isinstance(record.get("$rewindTo"), str):
            target = record["$rewindTo"]
            before = self.leaf()
            if target in self.current:
                self.current = self.current[: self.current.index(target)]
            else:
                self.current = []
            after = self.leaf()
            if after != before:
                self.add({"type": "leaf", "id": f"rewind:{lineno}:{target}", "targetId": after}, None)
            return
        if isinstance(record.get("$set"), dict):
            patch = record["$set"]
            messages = patch.get("messages")
            if isinstance(messages, list):
                parent = self.leaf()
                listed = [m for m in messages if _is_message(m)]
                for msg in listed:
                    if msg["id"] not in self.tails:
                        self.message(msg, parent)
                        parent = self.tails.get(msg["id"], parent)
                self.current = list(dict.fromkeys(m["id"] for m in listed))
            self.out.meta.update({k: v for k, v in patch.items() if k != "messages"})
            return
        if _is_message(record):
            mid = record["id"]
            if mid not in self.current:
                self.current.append(mid)
            self.message(record, self.before(mid))
            return
        if isinstance(record.get("sessionId"), str):  # the metadata line (or a legacy file)
            self.out.meta.update({k: v for k, v in record.items() if k != "messages"})
            for msg in record.get("messages") or []:
                if _is_message(msg):
                    self.record(lineno, msg)


def _is_message(record: Any) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("id"), str) and bool(record["id"])
            and isinstance(record.get("type"), str) and "content" in record)


def convert(records: list[tuple[int, dict[str, Any]]],
            carry: dict[str, str | None] | None = None) -> tuple[Converted, dict[str, str | None]]:
    """The entries the records make, chained (see the module's docstring), after the lines
    ``carry`` was left by; and the carry for the lines after these (the current message list,
    each with its last entry)."""
    converter = _Converter(carry)
    for lineno, record in records:
        converter.record(lineno, record)
    return converter.out, {mid: converter.tails.get(mid) for mid in converter.current}


def _stamp(entry: dict[str, Any], ts: str | None) -> dict[str, Any]:
    if ts:
        entry["timestamp"] = ts
        message = entry.get("message")
        if isinstance(message, dict) and iso_to_ms(ts):
            message["timestamp"] = iso_to_ms(ts)
    return entry


def _entries(record: dict[str, Any], out: Converted) -> list[dict[str, Any]]:
    """One message record's entries, in order; ids derived from the message id."""
    mid, kind = record["id"], record["type"]
    ts = str_or_none(record.get("timestamp"))
    out.kinds.add(kind)
    content = record.get("content")
    entries: list[dict[str, Any]] = []
    if kind == "user":
        shown = record.get("displayContent")
        typed = text_of(shown) if shown is not None else text_of(content)
        if shown is not None and not typed.strip():  # a tool's answer sent on, not typed
            entries.append({"type": "custom_message", "id": mid, "customType": CONTEXT,
                            "content": text_of(content), "display": False,
                            "details": {"type": kind}})
        else:
            entries.append({"type": "message", "id": mid, "message": {
                "role": "user", "content": [{"type": "text", "text": typed}]}})
            out.first_prompt = out.first_prompt or typed
            expanded = text_of(content)
            if shown is not None and expanded.strip() and expanded != typed:
                entries.append({"type": "custom_message", "id": f"{mid}:expanded",
                                "customType": CONTEXT, "content": expanded, "display": False,
                                "details": {"type": "expanded prompt"}})
    elif kind == "gemini":
        model = str_or_none(record.get("model"))
        out.model = model or out.model
        base = {"role": "assistant", "api": "gemini", "provider": "google"}
        if model:
            base["model"] = model
        thoughts = [t for t in record.get("thoughts") or [] if isinstance(t, dict)]
        if thoughts:
            text = "\n\n".join(
                ": ".join(str(t[k]) for k in ("subject", "description") if t.get(k))
                for t in thoughts)
            entries.append({"type": "message", "id": f"{mid}:thoughts", "message": {
                **base, "content": [{"type": "thinking", "thinking": text}]}})
        said = text_of(content)
        if said.strip():
            entries.append({"type": "message", "id": mid, "message": {
                **base, "content": [{"type": "text", "text": said}]}})
        for call in record.get("toolCalls") or []:
            if not isinstance(call, dict) or not str_or_none(call.get("id")):
                continue
            cid, name = call["id"], str_or_none(call.get("name")) or "tool"
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            entries.append({"type": "message", "id": f"{mid}:call:{cid}", "message": {
                **base, "content": [{"type": "toolCall", "id": cid, "name": name,
                                     "arguments": args}]}})
            if call.get("result") is not None:
                entries.append(_stamp({"type": "message", "id": f"{mid}:result:{cid}", "message": {
                    "role": "toolResult", "toolCallId": cid, "toolName": name,
                    "content": [{"type": "text", "text": _result_text(call["result"])}],
                    "isError": call.get("status") == "error"}},
                    str_or_none(call.get("timestamp")) or ts))
        usage = _usage(record.get("tokens"))
        if usage is not None:
            entries.append({"type": "message", "id": f"{mid}:usage",
                            "message": {**base, "content": [], "usage": usage}})
    else:  # info, error, warning: the CLI's own notes, shown, never indexed
        entries.append({"type": "custom_message", "id": mid, "customType": NOTE,
                        "content": text_of(content), "display": True,
                        "details": {"type": kind}})
    return [e if "timestamp" in e else _stamp(e, ts) for e in entries]


def _usage(tokens: Any) -> dict[str, Any] | None:
    """``tokens {input, output, cached, thoughts, tool, total}`` (Gemini's usage metadata:
    the prompt count includes the cached tokens; tool-use prompt and thought tokens are
    counted apart) in OpenClaw's shape."""
    if not isinstance(tokens, dict):
        return None
    fresh = minus(tokens.get("input"), tokens.get("cached"))
    return openclaw_usage(
        input=plus(fresh, tokens.get("tool")) if fresh is not None else None,
        output=plus(tokens.get("output"), tokens.get("thoughts")),
        cache_read=tokens.get("cached"),
        total=tokens.get("total"),
    )
