"""A Cline / Roo Code task's ``ui_messages.json`` (``ClineMessage``: ``{ts, type: say/ask,
say/ask, text, partial, modelInfo}``; cline/cline ``src/shared/ExtensionMessage.ts``), read
only for a task whose folder holds no ``api_conversation_history.json``: what the user saw.

- The first ``say: text`` is the task and ``user_feedback`` the user's later words (indexed);
  ``say: text``, ``completion_result`` and a ``followup`` question are the assistant's
  (indexed); ``reasoning`` is thinking; every other say/ask (commands, tools, api requests,
  checkpoints, errors) is stored as a tool result named after it, never indexed.
- An ``api_req_started`` message's ``tokensIn``, ``tokensOut``, ``cacheReads``,
  ``cacheWrites`` and ``cost`` (one model call, filled in when its answer is whole) are an
  empty assistant message of their own (the call's answer follows it and may be stored before
  the counts are written), its id derived from the request's ``ts``.
- Ids derive from the task, ``ts``, the kind and the text. A partial message is kept when
  others follow it (the extension will not finish it); the last one waits until it is whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...bounds import decode_json
from ...errors import ValidationError
from ..common import ImportReport
from ..usage import openclaw_usage
from ..whole import derived_id, ms_to_iso

UI_FILE = "ui_messages.json"
_USER = ("user_feedback", "user_feedback_diff")
_ASSISTANT = ("text", "completion_result", "followup", "plan_mode_respond")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _ts(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    return None


def _spoken(kind: str, text: str) -> str:
    """A followup question or plan response is JSON holding the words."""
    if kind in ("followup", "plan_mode_respond") and text.startswith("{"):
        try:
            value = decode_json(text)
        except ValidationError:
            return text
        if isinstance(value, dict):
            return _text(value.get("question")) or _text(value.get("response")) or text
    return text


def ui_entries(task_id: str, source: str, data: list[Any], report: ImportReport,
               file: Path) -> tuple[list[dict[str, Any]], list[int], str | None, str | None]:
    """The entries of a UI message list, its times, first prompt and model."""
    entries: list[dict[str, Any]] = []
    times: list[int] = []
    first: str | None = None
    model: str | None = None
    for index, record in enumerate(data):
        if not isinstance(record, dict) or record.get("type") not in ("say", "ask"):
            report.skip(file, None, f"UI message {index}: not a say or ask message; skipped")
            continue
        partial = record.get("partial") in (True, "True", "true")
        if partial and index == len(data) - 1:
            continue  # still being written
        kind = _text(record.get(record["type"]))
        text = _text(record.get("text"))
        ts = _ts(record.get("ts"))
        if ts is not None:
            times.append(ts)
        info = record.get("modelInfo")
        if isinstance(info, dict) and isinstance(info.get("modelId"), str):
            model = info["modelId"]
        if not text.strip():
            continue
        entry_id = derived_id(f"{source}-ui-", task_id, ts, record["type"], kind, text)
        if (kind == "text" and record["type"] == "say" and first is None) or kind in _USER:
            first = first or text
            message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}]}
        elif kind in _ASSISTANT:
            message = {"role": "assistant", "api": source,
                       "content": [{"type": "text", "text": _spoken(kind, text)}]}
            if model:
                message["model"] = model
        elif kind == "reasoning":
            message = {"role": "assistant", "api": source,
                       "content": [{"type": "thinking", "thinking": text}]}
        else:
            message = {"role": "toolResult", "toolCallId": "", "toolName": kind or "ui",
                       "content": [{"type": "text", "text": text}], "isError": "error" in kind}
        entry = {"type": "message", "id": entry_id, "parentId": None, "message": message}
        if ms_to_iso(ts):
            entry["timestamp"] = ms_to_iso(ts)
        entries.append(entry)
        usage = _request_usage(text) if kind == "api_req_started" else None
        if usage is not None:
            message = {"role": "assistant", "api": source, "content": [], "usage": usage}
            if model:
                message["model"] = model
            entries.append({**entry, "id": derived_id(f"{source}-ui-usage-", task_id, ts),
                            "message": message})
    return entries, times, first, model


def _request_usage(text: str) -> dict[str, Any] | None:
    """The usage an ``api_req_started`` message records once its call is answered."""
    try:
        value = decode_json(text)
    except ValidationError:
        return None
    if not isinstance(value, dict):
        return None
    return openclaw_usage(input=value.get("tokensIn"), output=value.get("tokensOut"),
                          cache_read=value.get("cacheReads"),
                          cache_write=value.get("cacheWrites"), cost=value.get("cost"))


def has_history(file: Path) -> bool:
    """A UI message list whose task has its api history too (that one is read instead)."""
    return (file.parent / "api_conversation_history.json").is_file()


def same_task(key: str, path: str, holder: str) -> bool:
    """A task's two files feed its one session."""
    return Path(path).parent == Path(holder).parent

