"""One OpenCode session (its row, messages and parts) as OpenClaw entries, in the shapes the
Claude Code and Codex converters make, so the indexer's rules apply unchanged: a text part
(not ``synthetic``, not ``ignored``) is a user or assistant message (indexed); a reasoning
part a ``thinking`` block, a tool part a ``toolCall`` and its ``toolResult`` (stored, not
indexed); the rest (files, steps, snapshots, patches, compactions, synthetic text) custom
entries. Each entry's id is the part's (``prt_…``), so a session read again stores only what
is new, and a part rewritten in place is matched by id, never stored twice.

Part and message shapes: anomalyco/opencode ``packages/opencode/src/session/message-v2.ts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...storage import SessionMeta
from ..common import ImportReport, label_of
from ..sqlite_source import iso_ms, json_object
from ..usage import openclaw_usage, plus, with_usage

# custom entries keep the part without its bulky payloads
_DROPPED = frozenset({"id", "sessionID", "messageID"})


@dataclass
class ConvertedSession:
    meta: SessionMeta
    events: list[dict[str, Any]] = field(default_factory=list)
    open: bool = False  # its last assistant message is still being written: read again


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def convert_session(path: Path, row: tuple, messages: list[tuple], parts: list[tuple],
                    agent: str, source: str, report: ImportReport,
                    bad: set[str]) -> ConvertedSession:
    """``row`` is (id, time_updated, title, directory, time_created, parent_id)."""
    sid, updated, title, directory, created, parent = row
    prefix = f"agent:{agent}:{source}:"
    parent_key = prefix + parent if isinstance(parent, str) and parent else None
    by_message: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for part_id, message_id, data in parts:
        part = json_object(data)
        if part is None:
            _bad(report, path, bad, part_id, f"part {part_id} of session {sid}")
            continue
        by_message.setdefault(message_id, []).append((part_id, part))
    out = ConvertedSession(SessionMeta(
        key=prefix + sid, session_id=sid, spawned_by=parent_key, parent_key=parent_key,
        label=None, created_at=created if isinstance(created, int) else None,
        updated_at=updated if isinstance(updated, int) else None, source=source))
    header: dict[str, Any] = {"type": "session", "version": 3, "id": sid}
    if iso_ms(created):
        header["timestamp"] = iso_ms(created)
    if _str(directory):
        header["cwd"] = directory
    if parent_key:
        header["parentSession"] = parent
    events: list[dict[str, Any]] = [header]
    first_prompt: str | None = None
    decoded = []
    for message_id, message_created, data in messages:
        info = json_object(data)
        if info is None:
            _bad(report, path, bad, message_id, f"message {message_id} of session {sid}")
            continue
        decoded.append((message_id, message_created, info))
    for index, (message_id, message_created, info) in enumerate(decoded):
        role = info.get("role")
        times = info.get("time") if isinstance(info.get("time"), dict) else {}
        if (role == "assistant" and index == len(decoded) - 1 and times.get("completed") is None
                and info.get("error") is None):
            out.open = True  # still being written: taken when whole
            break
        model, provider = _model(info)
        when = times.get("created", message_created)
        usage = _Usage(events, model, provider)
        for part_id, part in by_message.get(message_id, []):
            for entry in _entries(part_id, part, role, model, provider, when):
                usage.link(entry)
            if role == "assistant" and part.get("type") == "step-finish":
                usage.step(part, f"{part_id}:usage")
        if role == "assistant" and not usage.steps:
            usage.step(info, f"{message_id}:usage")
            if (first_prompt is None and role == "user" and part.get("type") == "text"
                    and not part.get("synthetic") and _str(part.get("text"))):
                first_prompt = part["text"]
    project = Path(directory).name if _str(directory) else ""
    out.meta = out.meta._replace(label=label_of(project, _str(title) or first_prompt or sid))
    out.events = events if len(events) > 1 else []
    return out


class _Usage:
    """Puts each model call's usage on the last assistant entry of its step. OpenCode ends
    each call (a step) with a ``step-finish`` part holding its ``tokens`` and ``cost``; the
    message's own ``tokens`` are the last step's alone (its ``cost`` the sum), so they are
    taken only from a message without steps. A step with no assistant entry gets an empty
    assistant message (nothing shown or indexed) to carry them."""

    def __init__(self, events: list[dict[str, Any]], model: str | None,
                 provider: str | None) -> None:
        self.events, self.model, self.provider = events, model, provider
        self.answer: dict[str, Any] | None = None
        self.steps = 0

    def link(self, entry: dict[str, Any]) -> None:
        """Append ``entry``, chained to the entry before it."""
        entry["parentId"] = self.events[-1]["id"] if len(self.events) > 1 else None
        self.events.append(entry)
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            self.answer = message

    def step(self, holder: dict[str, Any], usage_id: str) -> None:
        self.steps += 1
        answer, self.answer = self.answer, None
        usage = _usage(holder)
        if usage is None:
            return
        if answer is None:
            answer = {"role": "assistant", "content": [], "api": "opencode"}
            answer.update({k: v for k, v in (("provider", self.provider), ("model", self.model))
                           if v})
            self.link({"type": "message", "id": usage_id, "message": answer})
            self.answer = None
        with_usage(answer, usage)


def _usage(holder: dict[str, Any]) -> dict[str, Any] | None:
    """A step's (or a message's) usage: ``tokens {input, output, reasoning, cache {read,
    write}, total?}`` (input without the cache, output without the reasoning) and ``cost``."""
    tokens = holder.get("tokens") if isinstance(holder.get("tokens"), dict) else {}
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    return openclaw_usage(
        input=tokens.get("input"),
        output=plus(tokens.get("output"), tokens.get("reasoning")),
        cache_read=cache.get("read"),
        cache_write=cache.get("write"),
        total=tokens.get("total"),
        cost=holder.get("cost"),
    )


def _bad(report: ImportReport, path: Path, bad: set[str], row_id: str, what: str) -> None:
    """A ``data`` column that is not a JSON object: said once (the watermark remembers it),
    the rest of the session kept."""
    if row_id not in bad:
        bad.add(row_id)
        report.skip(path, None, f"{what}: its data is not a JSON object; skipped")


def _model(info: dict[str, Any]) -> tuple[str | None, str | None]:
    if _str(info.get("modelID")):
        return info["modelID"], _str(info.get("providerID"))
    model = info.get("model")
    if isinstance(model, dict):
        return _str(model.get("modelID")), _str(model.get("providerID"))
    return None, None


def _entries(part_id: str, part: dict[str, Any], role: Any, model: str | None,
             provider: str | None, created: Any) -> list[dict[str, Any]]:
    kind = part.get("type")
    times = part.get("time") if isinstance(part.get("time"), dict) else {}
    ms = times.get("start") if isinstance(times.get("start"), (int, float)) else created
    base: dict[str, Any] = {"id": part_id}
    if iso_ms(ms):
        base["timestamp"] = iso_ms(ms)

    def message(content: list[dict[str, Any]], as_role: str) -> dict[str, Any]:
        body: dict[str, Any] = {"role": as_role, "content": content}
        if as_role == "assistant":
            body["api"] = "opencode"
            if provider:
                body["provider"] = provider
            if model:
                body["model"] = model
        if iso_ms(ms):
            body["timestamp"] = int(ms)
        return {"type": "message", **base, "message": body}

    text = part.get("text") if isinstance(part.get("text"), str) else None
    if kind == "text" and text is not None and not part.get("synthetic") \
            and not part.get("ignored") and role in ("user", "assistant"):
        return [message([{"type": "text", "text": text}], role)]
    if kind == "reasoning" and text is not None:
        return [message([{"type": "thinking", "thinking": text}], "assistant")]
    if kind == "tool":
        return _tool(part_id, part, message)
    data = {k: v for k, v in part.items() if k not in _DROPPED}
    if kind == "text":  # synthetic or ignored: context the user did not type
        return [{"type": "custom_message", **base, "customType": "opencode.context",
                 "content": [{"type": "text", "text": text or ""}], "display": False,
                 "details": {"role": role, "synthetic": bool(part.get("synthetic"))}}]
    return [{"type": "custom", **base, "customType": f"opencode.{kind}", "data": data}]


def _tool(part_id: str, part: dict[str, Any], message: Any) -> list[dict[str, Any]]:
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    call_id = _str(part.get("callID")) or part_id
    name = _str(part.get("tool")) or "tool"
    arguments = state.get("input") if isinstance(state.get("input"), dict) else {}
    call = message([{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}],
                   "assistant")
    status = state.get("status")
    if status not in ("completed", "error"):
        return [call]
    output = state.get("output") if status == "completed" else state.get("error")
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    result = {"type": "message", "id": f"{part_id}:result", "message": {
        "role": "toolResult", "toolCallId": call_id, "toolName": name,
        "content": [{"type": "text", "text": text}], "isError": status == "error"}}
    if "timestamp" in call:
        result["timestamp"] = call["timestamp"]
    return [call, result]
