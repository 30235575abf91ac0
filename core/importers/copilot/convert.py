"""GitHub Copilot CLI records to chained entries. The CLI is closed source: the shapes are
those of its files (``/work/shared/data/agent_formats.md`` and real sessions):
``session-state/<id>/events.jsonl`` lines ``{type, data, id, timestamp, parentId}`` and the
older ``history-session-state/<id>.json`` ``{sessionId, startTime, chatMessages, timeline}``.

Only ``user.message`` / ``assistant.message`` ``content`` (legacy: ``user`` / ``copilot``
timeline ``text``) is indexed. ``transformedContent`` (the prompt with a date and reminders
added) and ``system.message`` (the whole system prompt) are not stored; reasoning, tool
requests and tool results are stored, never indexed. ``parentId`` chains the events in file
order; it makes no branches, so entries are chained in file order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ...resume import UUID
from ...transcript import iso_to_ms
from ..usage import minus, openclaw_usage, with_usage

NOTE = "copilot.note"
_DROPPED = frozenset({"system.message", "assistant.turn_start", "assistant.turn_end",
                      "session.model_change"})


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class Converted:
    entries: list[dict[str, Any]] = field(default_factory=list)
    session_id: str | None = None
    started: str | None = None
    cwd: str | None = None
    first_prompt: str = ""
    times: list[int] = field(default_factory=list)


@dataclass
class Carry:
    """What reading on in a growing ``events.jsonl`` needs from the lines before: the entry
    the next hangs from, the model in force, the tool calls not yet answered (id -> name)."""

    last_id: str | None = None
    model: str | None = None
    calls: dict[str, str] = field(default_factory=dict)


class _Chain:
    def __init__(self, session_id: str, carry: Carry | None = None, own_ids: bool = False):
        carry = carry or Carry()
        self.out = Converted(session_id=session_id)
        self.ids: set[str] = set()
        self.own_ids = own_ids  # events.jsonl: an id is the event's own when it is a UUID
        self.last = carry.last_id
        self.model = carry.model
        self.calls = dict(carry.calls)  # tool call id -> tool name

    def carry(self) -> Carry:
        return Carry(self.last, self.model, dict(self.calls))

    def entry_id(self, wanted: str | None, lineno: int, suffix: str = "") -> str:
        """The record's own id (in ``events.jsonl``: when it is a UUID, as the CLI writes
        them, so a read that starts mid-file names entries as a whole read does; in the
        older file: when not used already), else one derived from the session id and the
        line."""
        usable = bool(UUID.fullmatch(wanted or "")) if self.own_ids else (
            bool(wanted) and f"{wanted}{suffix}" not in self.ids)
        if wanted and usable:
            return wanted + suffix
        digest = hashlib.sha1(f"{self.out.session_id}:{lineno}{suffix}".encode()).hexdigest()
        return digest[:16]

    def add(self, eid: str, ts: str | None, entry: dict[str, Any]) -> None:
        self.ids.add(eid)
        event = {"type": entry.pop("type"), "id": eid, "parentId": self.last}
        self.last = eid
        if ts:
            event["timestamp"] = ts
            ms = iso_to_ms(ts)
            if ms:
                self.out.times.append(ms)
                if isinstance(entry.get("message"), dict):
                    entry["message"]["timestamp"] = ms
        event.update(entry)
        self.out.entries.append(event)

    def assistant(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content, "api": "copilot",
                                   "provider": "github-copilot"}
        if self.model:
            message["model"] = self.model
        return message

    def user(self, eid: str, ts: str | None, text: str) -> None:
        self.add(eid, ts, {"type": "message",
                           "message": {"role": "user", "content": [{"type": "text", "text": text}]}})
        self.out.first_prompt = self.out.first_prompt or text

    def call(self, eid: str, ts: str | None, cid: str, name: str, args: Any) -> None:
        self.calls[cid] = name
        if not isinstance(args, dict):
            args = {"value": args} if args is not None else {}
        self.add(eid, ts, {"type": "message", "message": self.assistant(
            [{"type": "toolCall", "id": cid, "name": name, "arguments": args}])})

    def result(self, eid: str, ts: str | None, cid: str, text: str, error: bool) -> None:
        self.add(eid, ts, {"type": "message", "message": {
            "role": "toolResult", "toolCallId": cid, "toolName": self.calls.pop(cid, ""),
            "content": [{"type": "text", "text": text}], "isError": error}})

    def note(self, eid: str, ts: str | None, kind: str, text: str) -> None:
        self.add(eid, ts, {"type": "custom_message", "customType": NOTE, "content": text,
                           "display": True, "details": {"type": kind}})


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("content", "detailedContent", "log", "message", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def convert_events(session_id: str, records: list[tuple[int, dict[str, Any]]],
                   carry: Carry | None = None) -> tuple[Converted, Carry]:
    """The entries of an ``events.jsonl`` (of its lines after those ``carry`` was left by),
    and the carry for the lines after these."""
    chain = _Chain(session_id, carry, own_ids=True)
    done: set[str] = set()  # tool calls asked for in these lines (a start repeats them)
    for lineno, record in records:
        kind, data = record.get("type"), record.get("data")
        data = data if isinstance(data, dict) else {}
        ts = str_or_none(record.get("timestamp"))
        own = str_or_none(record.get("id"))
        if kind == "session.start":
            chain.out.session_id = str_or_none(data.get("sessionId")) or session_id
            chain.out.started = str_or_none(data.get("startTime")) or ts
            context = data.get("context") if isinstance(data.get("context"), dict) else {}
            chain.out.cwd = str_or_none(context.get("cwd"))
        elif kind == "session.model_change":
            chain.model = str_or_none(data.get("newModel")) or chain.model
        if kind in _DROPPED or not isinstance(kind, str):
            continue
        if kind == "user.message":
            chain.user(chain.entry_id(own, lineno), ts, _text(data.get("content")))
        elif kind == "assistant.message":
            made = len(chain.out.entries)
            chain.model = str_or_none(data.get("model")) or chain.model  # newer releases
            reasoning = str_or_none(data.get("reasoningText"))
            if reasoning:
                chain.add(chain.entry_id(own, lineno, ":thinking"), ts, {
                    "type": "message",
                    "message": chain.assistant([{"type": "thinking", "thinking": reasoning}])})
            said = _text(data.get("content"))
            if said.strip():
                chain.add(chain.entry_id(own, lineno), ts, {
                    "type": "message",
                    "message": chain.assistant([{"type": "text", "text": said}])})
            for request in data.get("toolRequests") or []:
                if isinstance(request, dict) and str_or_none(request.get("toolCallId")):
                    cid = request["toolCallId"]
                    done.add(cid)
                    chain.call(chain.entry_id(own, lineno, f":call:{cid}"), ts, cid,
                               str_or_none(request.get("name")) or "tool",
                               request.get("arguments"))
            answer = chain.out.entries[made:]
            if answer:  # an answer's output tokens (its input is counted at shutdown)
                with_usage(answer[-1]["message"], openclaw_usage(output=data.get("outputTokens")))
        elif kind == "session.shutdown":
            chain.add(chain.entry_id(own, lineno), ts, {
                "type": "custom", "customType": f"copilot.{kind}", "data": data})
            _shutdown_usage(chain, own, lineno, ts, data.get("modelMetrics"))
        elif kind == "tool.execution_start":
            cid = str_or_none(data.get("toolCallId"))
            if cid and cid not in chain.calls and cid not in done:  # not asked for before
                chain.call(chain.entry_id(own, lineno), ts, cid,
                           str_or_none(data.get("toolName")) or "tool", data.get("arguments"))
        elif kind == "tool.execution_complete":
            cid = str_or_none(data.get("toolCallId")) or ""
            error = data.get("success") is False
            chain.result(chain.entry_id(own, lineno), ts, cid,
                         _text(data.get("result") if not error or "result" in data
                               else data.get("error")), error)
        elif kind in ("session.info", "session.error", "session.warning"):
            chain.note(chain.entry_id(own, lineno), ts, kind, _text(data.get("message")))
        else:
            chain.add(chain.entry_id(own, lineno), ts, {
                "type": "custom", "customType": f"copilot.{kind}", "data": data})
    return chain.out, chain.carry()


def _shutdown_usage(chain: _Chain, own: str | None, lineno: int, ts: str | None,
                    metrics: Any) -> None:
    """A run's input by model, from ``session.shutdown``'s ``modelMetrics`` (one per process:
    a resumed session writes another, for its own run): an empty assistant message per
    model. The input counts the cached tokens (OpenAI's way); the output was counted on each
    answer, so it is left out here."""
    for model, metric in (metrics.items() if isinstance(metrics, dict) else []):
        usage = metric.get("usage") if isinstance(metric, dict) else None
        if not isinstance(usage, dict):
            continue
        counted = openclaw_usage(input=minus(usage.get("inputTokens"), usage.get("cacheReadTokens")),
                                 cache_read=usage.get("cacheReadTokens"),
                                 cache_write=usage.get("cacheWriteTokens"))
        if counted is None:
            continue
        message = chain.assistant([])
        message["model"] = model
        chain.add(chain.entry_id(own, lineno, f":usage:{model}"), ts,
                  {"type": "message", "message": with_usage(message, counted)})


def convert_legacy(record: dict[str, Any], session_id: str) -> Converted:
    """The entries of a ``history-session-state/<id>.json`` (its ``timeline``; its
    ``chatMessages`` repeat the conversation for the model)."""
    chain = _Chain(session_id)
    chain.out.started = str_or_none(record.get("startTime"))
    for n, item in enumerate(record.get("timeline") or [], start=1):
        if not isinstance(item, dict):
            continue
        kind, ts = item.get("type"), str_or_none(item.get("timestamp"))
        eid = chain.entry_id(str_or_none(item.get("id")), n)
        if kind == "user":
            chain.user(eid, ts, _text(item.get("text")))
        elif kind == "copilot":
            chain.add(eid, ts, {"type": "message", "message": chain.assistant(
                [{"type": "text", "text": _text(item.get("text"))}])})
        elif kind in ("tool_call_requested", "tool_call_completed"):
            cid = str_or_none(item.get("callId")) or eid
            if cid not in chain.calls:
                chain.call(chain.entry_id(str_or_none(item.get("id")), n, ":call"), ts, cid,
                           str_or_none(item.get("name")) or "tool", item.get("arguments"))
            if kind == "tool_call_completed":
                result = item.get("result")
                error = isinstance(result, dict) and result.get("type") not in (None, "success")
                chain.result(eid, ts, cid, _text(result), error)
        elif isinstance(kind, str):
            chain.note(eid, ts, kind, _text(item.get("text")))
    return chain.out
