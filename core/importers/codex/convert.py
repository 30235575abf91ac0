"""Converting a read :class:`Rollout` into OpenClaw entries chained in file order: messages,
reasoning, tool calls and their outputs, injected context, model and effort changes,
compactions, each response's token count (an assistant message carrying only ``usage``).
Lines replayed from a parent thread are skipped and counted."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ...transcript import iso_to_ms
from ..usage import minus, openclaw_usage, with_usage
from .blocks import blocks, content_block, json_object, output_text
from .reading import Rollout, str_or_none

_INJECTED_PREFIXES = (
    "# AGENTS.md instructions",
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<turn_aborted>",
)
_TOOL_CALLS = {
    "function_call": "function_call",
    "custom_tool_call": "custom_tool_call",
    "local_shell_call": "local_shell",
    "web_search_call": "web_search",
}
_TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_TURN_STARTS = frozenset({"task_started", "turn_started"})  # event_msg types opening a turn
_PROMPT_KINDS = (None, "plain", "user")  # a user_message event's ``kind`` when it is a prompt
OPEN_CALLS = 256  # tool-call names carried to the next read (an output names its call)


@dataclass
class Converted:
    """A rollout's entries and what its session record needs: times, the first real prompt,
    and how many lines replayed from a parent thread were skipped."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    first_ts: str | None = None
    first_prompt: str | None = None
    inherited: int = 0
    carry: Carry | None = None  # where the conversion stopped, to go on from the next line


@dataclass
class Carry:
    """What the lines after the converted ones need to convert as the whole file would: the
    last entry (their parent), the model and effort in force, whether a parent thread is being
    replayed, the names of the latest tool calls (their outputs name them), and the
    session's token total at the last ``token_count`` (a repeat of it is not a response)."""

    provider: str | None = None
    own_seen: bool = False
    replaying: bool = False
    model: str | None = None
    effort: str | None = None
    last_ts: str | None = None
    last_id: str | None = None
    tool_names: dict[str, str] = field(default_factory=dict)
    turn_items: int = 0  # the turn's prompts seen as response_item user messages
    turn_events: int = 0  # and as event_msg user_message events
    tokens_total: dict[str, Any] | None = None


def convert(rollout: Rollout, carry: Carry | None = None) -> Converted:
    """The entries of ``rollout``, each chained to the one before it; with ``carry``, the
    records continue a rollout converted up to there (line numbers go on from it)."""
    return _Converter(rollout, carry or Carry(str_or_none(rollout.meta.get("model_provider")))).run()


class _Converter:
    def __init__(self, rollout: Rollout, carry: Carry) -> None:
        self.rollout = rollout
        self.session_id = rollout.session_id
        self.provider = carry.provider or "openai"
        self.out = Converted()
        self.carry = carry
        self.tool_names: dict[str, str] = dict(carry.tool_names)
        self.model: str | None = carry.model
        self.effort: str | None = carry.effort
        self.turn_items, self.turn_events = carry.turn_items, carry.turn_events
        self.tokens_total = carry.tokens_total

    def run(self) -> Converted:
        carry = self.carry
        last_ts, own_seen, replaying = carry.last_ts, carry.own_seen, carry.replaying
        for lineno, record in self.rollout.records:
            kind, payload = record["type"], record["payload"]
            ts = (
                str_or_none(record.get("timestamp"))
                or (str_or_none(payload.get("timestamp")) if kind == "session_meta" else None)
                or last_ts
            )
            last_ts = ts
            if kind == "session_meta":
                if own_seen and str_or_none(payload.get("id")) != self.session_id:
                    replaying = True
                    self.out.inherited += 1
                    continue
                if not own_seen:
                    own_seen = True
                    self._note_time(ts)
                    self._add(
                        lineno,
                        ts,
                        {
                            "type": "custom",
                            "customType": "codex.session_meta",
                            "data": _session_data(payload),
                        },
                    )
                continue
            if replaying:
                if kind != "turn_context":
                    self.out.inherited += 1
                    continue
                replaying = False
            self._note_time(ts)
            if kind == "turn_context" or (
                kind == "event_msg" and payload.get("type") in _TURN_STARTS
            ):
                self.turn_items = self.turn_events = 0  # a new turn: its prompts pair anew
            if kind == "turn_context":
                self._turn_context(lineno, ts, payload)
            elif kind == "compacted":
                summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
                self._add(
                    lineno,
                    ts,
                    {
                        "type": "compaction",
                        "summary": summary,
                        "tokensBefore": 0,
                        "details": {"source": "codex"},
                    },
                )
            elif kind == "response_item":
                self._response_item(lineno, ts, payload)
            elif kind == "event_msg" and payload.get("type") == "user_message":
                self._user_event(lineno, ts, payload)
            elif kind == "event_msg" and payload.get("type") == "token_count":
                self._token_count(lineno, ts, payload)
            # Other event_msg and newer bookkeeping lines repeat response items: dropped.
        entries = self.out.entries
        recent_calls = list(self.tool_names.items())[-OPEN_CALLS:]
        self.out.carry = Carry(
            carry.provider, own_seen, replaying, self.model, self.effort, last_ts,
            entries[-1]["id"] if entries else carry.last_id, dict(recent_calls),
            self.turn_items, self.turn_events, self.tokens_total,
        )
        return self.out

    def _note_time(self, ts: str | None) -> None:
        if ts:
            self.out.first_ts = self.out.first_ts or ts
            ms = iso_to_ms(ts)
            if ms:
                self.out.times.append(ms)

    def _add(self, lineno: int, ts: str | None, entry: dict[str, Any], suffix: str = "") -> None:
        entries = self.out.entries
        digest = hashlib.sha1(f"{self.session_id}:{lineno}{suffix}".encode()).hexdigest()[:16]
        event = {
            "type": entry.pop("type"),
            "id": digest,
            "parentId": entries[-1]["id"] if entries else self.carry.last_id,
        }
        if ts:
            event["timestamp"] = ts
        event.update(entry)
        message = event.get("message")
        if isinstance(message, dict) and ts and iso_to_ms(ts):
            message["timestamp"] = iso_to_ms(ts)
        entries.append(event)

    def _turn_context(self, lineno: int, ts: str | None, payload: dict[str, Any]) -> None:
        model = str_or_none(payload.get("model"))
        if model and model != self.model:
            self.model = model
            self._add(
                lineno, ts, {"type": "model_change", "provider": self.provider, "modelId": model}
            )
        effort = str_or_none(payload.get("effort"))
        if effort and effort != self.effort:
            self.effort = effort
            self._add(
                lineno, ts, {"type": "thinking_level_change", "thinkingLevel": effort}, ":effort"
            )

    def _response_item(self, lineno: int, ts: str | None, item: dict[str, Any]) -> None:
        kind = str_or_none(item.get("type"))
        if kind == "message":
            self._message(lineno, ts, item)
        elif kind == "reasoning":
            parts = [
                b.get("text")
                for b in blocks(item.get("summary"))
                if isinstance(b.get("text"), str)
            ]
            parts += [
                b.get("text")
                for b in blocks(item.get("content"))
                if isinstance(b.get("text"), str)
            ]
            self._add(
                lineno,
                ts,
                {
                    "type": "message",
                    "message": self._assistant(
                        [{"type": "thinking", "thinking": "\n\n".join(parts)}]
                    ),
                },
            )
        elif kind in _TOOL_CALLS:
            call_id = (
                str_or_none(item.get("call_id")) or str_or_none(item.get("id")) or f"line-{lineno}"
            )
            name = str_or_none(item.get("name")) or _TOOL_CALLS[kind]
            self.tool_names[call_id] = name
            if kind == "function_call":
                arguments = json_object(item.get("arguments"))
            elif kind == "custom_tool_call":
                arguments = {"input": item.get("input")}
            else:
                arguments = item.get("action") if isinstance(item.get("action"), dict) else {}
            call = {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            self._add(lineno, ts, {"type": "message", "message": self._assistant([call])})
        elif kind in _TOOL_OUTPUTS:
            call_id = str_or_none(item.get("call_id")) or ""
            text, is_error = output_text(item.get("output"))
            result = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": self.tool_names.get(call_id, ""),
                "content": [{"type": "text", "text": text}],
                "isError": is_error,
            }
            self._add(lineno, ts, {"type": "message", "message": result})
        elif isinstance(kind, str):
            data = {k: v for k, v in item.items() if k not in ("type", "encrypted_content")}
            self._add(lineno, ts, {"type": "custom", "customType": f"codex.{kind}", "data": data})

    def _message(self, lineno: int, ts: str | None, item: dict[str, Any]) -> None:
        role = item.get("role")
        converted = [content_block(b) for b in blocks(item.get("content"))]
        if isinstance(item.get("content"), str):
            converted = [{"type": "text", "text": item["content"]}]
        text = "\n".join(b["text"] for b in converted if b.get("type") == "text")
        if role == "assistant":
            message = self._assistant(converted)
            if isinstance(item.get("phase"), str):
                message["phase"] = item["phase"]
            self._add(lineno, ts, {"type": "message", "message": message})
        elif role == "user" and not text.lstrip().startswith(_INJECTED_PREFIXES):
            taken = self.turn_events <= self.turn_items  # its event not taken in its place
            self.turn_items += 1
            if taken:
                self._prompt(lineno, ts, text, converted)
        else:
            kind = role if role != "user" else "injected"
            self._add(
                lineno,
                ts,
                {
                    "type": "custom_message",
                    "customType": "codex.context",
                    "content": converted,
                    "display": False,
                    "details": {"role": role, "kind": kind},
                },
            )

    def _user_event(self, lineno: int, ts: str | None, payload: dict[str, Any]) -> None:
        """A prompt as the UI event records it. Codex writes each prompt of a turn as a
        ``response_item`` user message and as this event (newer releases: the event only), in
        either order; the k-th of each kind in a turn are the same prompt, so the one that
        comes first is taken and its twin skipped (the counts travel in the carry)."""
        text = payload.get("message") if isinstance(payload.get("message"), str) else ""
        if payload.get("kind") not in _PROMPT_KINDS or text.lstrip().startswith(
            _INJECTED_PREFIXES
        ):
            return  # injected context, kept from its response item when there is one
        taken = self.turn_items <= self.turn_events
        self.turn_events += 1
        if not taken:
            return
        images = payload.get("images") if isinstance(payload.get("images"), list) else []
        content = [{"type": "text", "text": text}] if text else []
        content += [
            content_block({"type": "input_image", "image_url": url})
            for url in images
            if isinstance(url, str)
        ]
        if content:
            self._prompt(lineno, ts, text, content)

    def _prompt(
        self, lineno: int, ts: str | None, text: str, content: list[dict[str, Any]]
    ) -> None:
        if self.out.first_prompt is None and text.strip():
            self.out.first_prompt = text
        self._add(lineno, ts, {"type": "message", "message": {"role": "user", "content": content}})

    def _token_count(self, lineno: int, ts: str | None, payload: dict[str, Any]) -> None:
        """The usage of the model response that just ended (``info.last_token_usage``; Codex
        writes a ``token_count`` after each response's items) as an assistant message of its
        own with no content (nothing shown, nothing indexed), made from this line alone. Not
        on the response's last item: a sync may have stored that item before the count was
        written, and an entry stored is never rewritten, so the entries would depend on where
        the reads fell. A repeated count (the session's total unchanged) is not a response."""
        info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict) or (total is not None and total == self.tokens_total):
            return
        self.tokens_total = total if isinstance(total, dict) else None
        usage = openclaw_usage(
            input=minus(last.get("input_tokens"), last.get("cached_input_tokens")),
            output=last.get("output_tokens"),  # reasoning tokens are part of them
            cache_read=last.get("cached_input_tokens"),
            total=last.get("total_tokens"),
        )
        if usage is not None:
            self._add(lineno, ts, {"type": "message",
                                   "message": with_usage(self._assistant([]), usage)})

    def _assistant(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "openai-responses",
            "provider": self.provider,
        }
        if self.model:
            message["model"] = self.model
        return message


def _session_data(payload: dict[str, Any]) -> dict[str, Any]:
    """What the header line says about the run, without the (huge) system prompt."""
    skip = {"id", "timestamp", "cwd", "base_instructions", "instructions", "dynamic_tools"}
    return {k: v for k, v in payload.items() if k not in skip}
