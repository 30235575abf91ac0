"""Qwen Code ``ChatRecord`` lines as OpenClaw entries, each keeping its record's
``uuid``/``parentUuid``. An assistant record's ``usageMetadata`` (one model call's) is its
message's usage; the ``ui_telemetry`` record of the same call is not counted again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...transcript import iso_to_ms
from ..appended import Converted, Records, stamp, text_of
from ..common import ImportReport, label_of
from ..usage import count, minus, openclaw_usage, plus, with_usage

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _payload(record: dict[str, Any]) -> dict[str, Any]:
    payload = record.get("systemPayload")
    return payload if isinstance(payload, dict) else {}


def is_record(record: dict[str, Any]) -> bool:
    return isinstance(record.get("uuid"), str) and record.get("type") in RECORD_TYPES


def convert(file: Path, session_id: str, records: Records, carry: dict[str, Any] | None,
            report: ImportReport) -> Converted:
    """The records' entries; ``carry`` (the model in force) continues a file read before."""
    out = Converted()
    model = _str((carry or {}).get("model"))
    first_prompt = title = cwd = None
    for lineno, record in records:
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid or uuid.startswith("#"):
            report.skip(file, lineno, 'a Qwen Code record needs a string "uuid"')
            continue
        ts = _str(record.get("timestamp"))
        if ts and iso_to_ms(ts):
            out.times.append(iso_to_ms(ts))
            out.header.setdefault("timestamp", ts)
        cwd = cwd or _str(record.get("cwd"))
        parent = _str(record.get("parentUuid"))
        kind = record.get("type")
        entry: dict[str, Any]
        if kind == "user":
            content = [_block(p, uuid, i) for i, p in enumerate(_parts(record))]
            entry = {"type": "message", "message": {"role": "user", "content": content}}
            text = "\n".join(b["text"] for b in content if b.get("type") == "text")
            if first_prompt is None and text.strip():
                first_prompt = text
        elif kind == "assistant":
            now = _str(record.get("model"))
            if now and now != model:
                model = now
                out.entries.append(stamp({
                    "type": "model_change", "id": f"{uuid}:model", "parentId": parent,
                    "provider": "qwen-code", "modelId": now}, ts))
                parent = f"{uuid}:model"
            content = [_block(p, uuid, i) for i, p in enumerate(_parts(record))]
            message = {"role": "assistant", "content": content, "provider": "qwen-code"}
            if model:
                message["model"] = model
            entry = {"type": "message",
                     "message": with_usage(message, _usage(record.get("usageMetadata")))}
        elif kind == "tool_result":
            entry = {"type": "message", "message": _tool_result(record)}
        elif kind == "system":
            subtype = _str(record.get("subtype")) or "system"
            payload = _payload(record)
            if subtype == "custom_title" and _str(payload.get("customTitle")):
                title = payload["customTitle"]
            entry = _system(subtype, payload)
        else:
            entry = {"type": "custom", "customType": f"qwen.{kind}", "data": record}
        out.entries.append(stamp({"type": entry.pop("type"), "id": uuid, "parentId": parent,
                                  **entry}, ts))
    if cwd:
        out.header["cwd"] = cwd
    project = Path(cwd.replace("\\", "/")).name if cwd else ""
    out.label = title or label_of(project, first_prompt or file.stem)
    out.carry = {"model": model} if model else {}
    return out


def _usage(meta: Any) -> dict[str, Any] | None:
    """Gemini's usage metadata, as Qwen Code records it for any provider: the prompt includes
    the cached tokens. The thoughts are inside the candidates when the call was an OpenAI-style
    one (the total is prompt plus candidates), beside them for Gemini's own API (the total
    counts them too)."""
    if not isinstance(meta, dict):
        return None
    prompt, answer = meta.get("promptTokenCount"), meta.get("candidatesTokenCount")
    thoughts, total = count(meta.get("thoughtsTokenCount")), count(meta.get("totalTokenCount"))
    apart = thoughts and total is not None and total == plus(prompt, answer, thoughts)
    return openclaw_usage(
        input=minus(prompt, meta.get("cachedContentTokenCount")),
        output=plus(answer, thoughts) if apart else answer,
        cache_read=meta.get("cachedContentTokenCount"),
        total=meta.get("totalTokenCount"),
    )


def _block(part: dict[str, Any], uuid: str, index: int) -> dict[str, Any]:
    """A part of a user or model message as a content block (only plain text is indexed)."""
    if isinstance(part.get("text"), str):
        if part.get("thought") is True:
            return {"type": "thinking", "thinking": part["text"]}
        return {"type": "text", "text": part["text"]}
    call = part.get("functionCall")
    if isinstance(call, dict):
        args = call.get("args")
        return {"type": "toolCall", "id": _str(call.get("id")) or f"{uuid}-{index}",
                "name": _str(call.get("name")) or "tool",
                "arguments": args if isinstance(args, dict) else {"value": args}}
    data = part.get("inlineData")
    if isinstance(data, dict) and isinstance(data.get("data"), str):
        return {"type": "image", "data": data["data"],
                "mimeType": _str(data.get("mimeType")) or "application/octet-stream"}
    return {"type": "qwen.part", "part": part}


def _tool_result(record: dict[str, Any]) -> dict[str, Any]:
    """A ``tool_result`` record (role ``user`` in the file): tool output, never the user's
    words."""
    texts: list[str] = []
    call_id = name = ""
    error = False
    for part in _parts(record):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            call_id = call_id or _str(response.get("id")) or ""
            name = name or _str(response.get("name")) or ""
            body = response.get("response")
            if isinstance(body, dict) and "error" in body and "output" not in body:
                error = True
            texts.append(text_of(body.get("output") if isinstance(body, dict)
                                 and "output" in body else body))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    result = record.get("toolCallResult")
    if isinstance(result, dict):
        call_id = call_id or _str(result.get("callId")) or ""
        error = error or result.get("status") == "error" or bool(result.get("error"))
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": "\n".join(texts)}], "isError": error}


def _system(subtype: str, payload: dict[str, Any]) -> dict[str, Any]:
    if subtype == "chat_compression":
        history = payload.get("compressedHistory")
        texts = [p.get("text") for c in (history if isinstance(history, list) else [])
                 if isinstance(c, dict) for p in (c.get("parts") or [])
                 if isinstance(p, dict) and isinstance(p.get("text"), str)]
        info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
        before = info.get("originalTokenCount")
        return {"type": "compaction", "summary": "\n\n".join(texts),
                "tokensBefore": before if isinstance(before, int) else 0,
                "details": {"source": "qwen-code", "info": info}}
    if subtype == "slash_command":
        raw = payload.get("rawCommand") if isinstance(payload.get("rawCommand"), str) else ""
        return {"type": "custom_message", "customType": "qwen.slash_command",
                "content": [{"type": "text", "text": raw}], "display": False,
                "details": payload}
    return {"type": "custom", "customType": f"qwen.{subtype}", "data": payload}
