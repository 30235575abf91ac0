"""Import Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

PATH may be a sessions folder (searched recursively for ``rollout-*.jsonl``, so
``~/.codex/archived_sessions`` works too) or one rollout file. Events are stored without
indexing; reconciliation indexes them later (SPEC 3). Decisions (also in docs/importers.md):

- Agent id ``codex`` unless given; every rollout is ``agent:<id>:codex:<session id>`` (the
  ``session_meta`` id, else the UUID in the file name). A rollout spawned by another thread
  (``source: {"subagent": {"thread_spawn": {"parent_thread_id": …}}}``) keeps that key shape
  and gets ``spawnedBy`` = ``parentSessionKey`` = its parent's key, so the link resolves
  whatever the parent was; a fork records ``forked_from_id`` as the header's ``parentSession``.
- Rollouts have no ids: an entry's id is derived from the session id and the line number
  (``sha1("<session id>:<line>")[:16]``), so importing a file again (or after it grew)
  adds only the new lines. Entries are chained by ``parentId`` in file order.
- ``response_item`` is the conversation: ``message`` user/assistant -> message entries
  (``input_text``/``output_text`` -> ``text`` blocks, ``input_image`` -> image);
  ``reasoning`` -> an assistant message with a thinking block (summary text; the encrypted
  content is dropped); ``function_call``/``custom_tool_call``/``local_shell_call``/
  ``web_search_call`` -> assistant ``toolCall``; their ``*_output`` -> ``toolResult``
  messages. None of those but user/assistant text is indexed.
- Injected context is not user speech: user messages that open with ``# AGENTS.md
  instructions``, ``<environment_context>``, ``<user_instructions>``, ``<INSTRUCTIONS>``,
  ``<permissions instructions>`` or ``<turn_aborted>``, and every ``developer``/``system``
  message, become ``custom_message`` entries (``codex.context``), visible but never indexed.
- ``event_msg`` lines repeat the response items for the UI (user/agent messages, command
  ends, token counts) and are dropped, so nothing is counted twice. ``turn_context`` becomes
  ``model_change`` / ``thinking_level_change`` entries when the model or effort changes;
  ``compacted`` becomes a ``compaction`` entry. A later ``session_meta`` of another thread
  (a spawned or forked thread replaying its parent's history) and the inherited lines after
  it, up to the next ``turn_context``, are skipped: they belong to the parent's rollout.
- Label: ``<project>: <first real user prompt>``, project = last part of ``cwd``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..state import StateDir
from ..storage import SessionMeta
from ..storage.sqlite import AgentWriter
from ..transcript import iso_to_ms
from .common import ImportReport, import_agent_id, json_lines, shorten, store_converted

DEFAULT_AGENT = "codex"
SOURCE = "codex"
_ROLLOUT_UUID_RE = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
_ROLLOUT_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "compacted",
        "turn_context",
        "event_msg",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "world_state",
    }
)
# Bare ResponseItems, as the oldest rollouts wrote them (no envelope).
_RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
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


def import_codex(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Codex sessions folder (recursively) or one rollout file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    agent_id = import_agent_id(agent, DEFAULT_AGENT)
    files = (
        [path]
        if path.is_file()
        else sorted(p for p in path.rglob("rollout-*.jsonl") if p.is_file())
    )
    if not files:
        raise ValidationError(
            f"{path} holds no Codex rollouts (expected ~/.codex/sessions with "
            "YYYY/MM/DD/rollout-*.jsonl files, or one rollout file)"
        )
    report = ImportReport()
    with state.open(agent_id, write=True) as db:
        for file in files:
            _Rollout(db, agent_id, file, report).run()
    return report


@dataclass
class _Rollout:
    db: AgentWriter
    agent_id: str
    file: Path
    report: ImportReport
    session_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    first_ts: str | None = None
    first_prompt: str | None = None
    tool_names: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    effort: str | None = None
    inherited: int = 0

    def run(self) -> None:
        records: list[tuple[int, dict[str, Any]]] = []
        bad = ImportReport()  # reported only if the file turns out to be a rollout
        for lineno, _text, raw in json_lines(self.file, bad):
            record, problem = _normalize(raw, first=not records and not bad.skipped)
            if problem:
                bad.skip(self.file, lineno, problem)
            elif record is not None:
                records.append((lineno, record))
        if not any(r["type"] in ("session_meta", "response_item") for _, r in records):
            if records or bad.skipped:
                self.report.notes.append(f"{self.file}: not a Codex rollout; skipped")
            return
        self.report.skipped.extend(bad.skipped)
        own = next((r["payload"] for _, r in records if r["type"] == "session_meta"), None)
        self.meta = own or {}
        found = _ROLLOUT_UUID_RE.search(self.file.name)
        self.session_id = (
            _str(self.meta.get("id"))
            or (found.group(1).lower() if found else None)
            or self.file.stem
        )
        self._convert(records)
        if self.inherited:
            self.report.notes.append(
                f"{self.file}: {self.inherited} lines replayed from a parent thread skipped"
            )
        self._store()

    # ------------------------------------------------------------------ converting

    def _convert(self, records: list[tuple[int, dict[str, Any]]]) -> None:
        last_ts: str | None = None
        own_seen = replaying = False
        for lineno, record in records:
            kind, payload = record["type"], record["payload"]
            ts = (
                _str(record.get("timestamp"))
                or (_str(payload.get("timestamp")) if kind == "session_meta" else None)
                or last_ts
            )
            last_ts = ts
            if kind == "session_meta":
                if own_seen and _str(payload.get("id")) != self.session_id:
                    replaying = True
                    self.inherited += 1
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
                    self.inherited += 1
                    continue
                replaying = False
            self._note_time(ts)
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
            # event_msg and newer bookkeeping lines duplicate response items: dropped.

    def _note_time(self, ts: str | None) -> None:
        if ts:
            self.first_ts = self.first_ts or ts
            ms = iso_to_ms(ts)
            if ms:
                self.times.append(ms)

    def _add(self, lineno: int, ts: str | None, entry: dict[str, Any], suffix: str = "") -> None:
        digest = hashlib.sha1(f"{self.session_id}:{lineno}{suffix}".encode()).hexdigest()[:16]
        event = {
            "type": entry.pop("type"),
            "id": digest,
            "parentId": self.entries[-1]["id"] if self.entries else None,
        }
        if ts:
            event["timestamp"] = ts
        event.update(entry)
        message = event.get("message")
        if isinstance(message, dict) and ts and iso_to_ms(ts):
            message["timestamp"] = iso_to_ms(ts)
        self.entries.append(event)

    def _turn_context(self, lineno: int, ts: str | None, payload: dict[str, Any]) -> None:
        model = _str(payload.get("model"))
        if model and model != self.model:
            self.model = model
            provider = _str(self.meta.get("model_provider")) or "openai"
            self._add(lineno, ts, {"type": "model_change", "provider": provider, "modelId": model})
        effort = _str(payload.get("effort"))
        if effort and effort != self.effort:
            self.effort = effort
            self._add(
                lineno, ts, {"type": "thinking_level_change", "thinkingLevel": effort}, ":effort"
            )

    def _response_item(self, lineno: int, ts: str | None, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(lineno, ts, item)
        elif kind == "reasoning":
            parts = [
                b.get("text")
                for b in _blocks(item.get("summary"))
                if isinstance(b.get("text"), str)
            ]
            parts += [
                b.get("text")
                for b in _blocks(item.get("content"))
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
            call_id = _str(item.get("call_id")) or _str(item.get("id")) or f"line-{lineno}"
            name = _str(item.get("name")) or _TOOL_CALLS[kind]
            self.tool_names[call_id] = name
            if kind == "function_call":
                arguments = _json_object(item.get("arguments"))
            elif kind == "custom_tool_call":
                arguments = {"input": item.get("input")}
            else:
                arguments = item.get("action") if isinstance(item.get("action"), dict) else {}
            call = {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            self._add(lineno, ts, {"type": "message", "message": self._assistant([call])})
        elif kind in _TOOL_OUTPUTS:
            call_id = _str(item.get("call_id")) or ""
            text, is_error = _output_text(item.get("output"))
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
        blocks = [_content_block(b) for b in _blocks(item.get("content"))]
        if isinstance(item.get("content"), str):
            blocks = [{"type": "text", "text": item["content"]}]
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        if role == "assistant":
            message = self._assistant(blocks)
            if isinstance(item.get("phase"), str):
                message["phase"] = item["phase"]
            self._add(lineno, ts, {"type": "message", "message": message})
        elif role == "user" and not text.lstrip().startswith(_INJECTED_PREFIXES):
            if self.first_prompt is None and text.strip():
                self.first_prompt = text
            self._add(
                lineno, ts, {"type": "message", "message": {"role": "user", "content": blocks}}
            )
        else:
            kind = role if role != "user" else "injected"
            self._add(
                lineno,
                ts,
                {
                    "type": "custom_message",
                    "customType": "codex.context",
                    "content": blocks,
                    "display": False,
                    "details": {"role": role, "kind": kind},
                },
            )

    def _assistant(self, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": "openai-responses",
            "provider": _str(self.meta.get("model_provider")) or "openai",
        }
        if self.model:
            message["model"] = self.model
        return message

    # ------------------------------------------------------------------ storing

    def _store(self) -> None:
        assert self.session_id is not None
        header: dict[str, Any] = {"type": "session", "version": 3, "id": self.session_id}
        started = _str(self.meta.get("timestamp")) or self.first_ts
        if started:
            header["timestamp"] = started
        if _str(self.meta.get("cwd")):
            header["cwd"] = self.meta["cwd"]
        if _str(self.meta.get("forked_from_id")):
            header["parentSession"] = self.meta["forked_from_id"]
        events = [header, *self.entries]
        parent = _spawning_thread(self.meta.get("source"))
        parent_key = f"agent:{self.agent_id}:codex:{parent}" if parent else None
        created = iso_to_ms(started) if started else 0
        meta = SessionMeta(
            key=f"agent:{self.agent_id}:codex:{self.session_id}",
            session_id=self.session_id,
            spawned_by=parent_key,
            parent_key=parent_key,
            label=self._label(parent is not None),
            created_at=created or (min(self.times) if self.times else None),
            updated_at=max(self.times) if self.times else (created or None),
            source=SOURCE,
        )
        store_converted(self.db, meta, events, self.report, self.file)

    def _label(self, spawned: bool) -> str:
        cwd = _str(self.meta.get("cwd"))
        project = Path(cwd.replace("\\", "/")).name if cwd else ""
        what = self.first_prompt or self.file.stem
        if spawned:
            nick = _str(self.meta.get("agent_nickname")) or _str(self.meta.get("agent_role"))
            what = f"subagent {nick}: {what}" if nick else f"subagent: {what}"
        return shorten(f"{project}: {what}" if project else what)


def _normalize(raw: Any, first: bool) -> tuple[dict[str, Any] | None, str | None]:
    """A rollout line as ``{"type", "timestamp"?, "payload"}``, or (None, reason), or (None, None)
    for lines that carry nothing (old ``record_type: state`` lines)."""
    if not isinstance(raw, dict):
        return None, "a rollout line must be a JSON object"
    kind = raw.get("type")
    if "payload" in raw or kind in _ROLLOUT_TYPES:
        if not isinstance(kind, str) or not kind:
            return None, 'a rollout line needs a string "type"'
        if not isinstance(raw.get("payload"), dict):
            return None, '"payload" must be a JSON object'
        return raw, None
    if raw.get("record_type") == "state":
        return None, None
    if kind in _RESPONSE_ITEM_TYPES:  # oldest format: bare ResponseItems
        return {"type": "response_item", "timestamp": raw.get("timestamp"), "payload": raw}, None
    if first and isinstance(raw.get("id"), str) and kind is None:  # oldest format's first line
        return {"type": "session_meta", "timestamp": raw.get("timestamp"), "payload": raw}, None
    if not isinstance(kind, str) or not kind:
        return None, 'a rollout line needs a string "type"'
    return None, None  # an unknown line type from a newer Codex: ignored


def _spawning_thread(source: Any) -> str | None:
    if not isinstance(source, dict):
        return None
    sub = source.get("subagent") or source.get("sub_agent") or source.get("subAgent")
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    return _str(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None


def _session_data(payload: dict[str, Any]) -> dict[str, Any]:
    """What the header line says about the run, without the (huge) system prompt."""
    skip = {"id", "timestamp", "cwd", "base_instructions", "instructions", "dynamic_tools"}
    return {k: v for k, v in payload.items() if k not in skip}


def _blocks(value: Any) -> list[dict[str, Any]]:
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def _content_block(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind in ("input_text", "output_text", "text"):
        return {
            "type": "text",
            "text": block.get("text") if isinstance(block.get("text"), str) else "",
        }
    if kind == "input_image":
        url = block.get("image_url") if isinstance(block.get("image_url"), str) else ""
        data = re.match(r"^data:([^;,]+);base64,(.*)$", url, re.DOTALL)
        if data:
            return {"type": "image", "data": data.group(2), "mimeType": data.group(1)}
        return {"type": "image", "url": url}
    return dict(block)


def _json_object(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            return {"raw": arguments}
        return value if isinstance(value, dict) else {"value": value}
    return {}


def _output_text(output: Any) -> tuple[str, bool]:
    if isinstance(output, str):
        return output, False
    if isinstance(output, dict):
        text = (
            output.get("content") if isinstance(output.get("content"), str) else json.dumps(output)
        )
        return text, output.get("success") is False
    if isinstance(output, list):
        parts = [b.get("text") for b in _blocks(output) if isinstance(b.get("text"), str)]
        return "\n".join(parts), False
    return "" if output is None else json.dumps(output), False


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
