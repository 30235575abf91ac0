"""Claude content in OpenClaw form: content blocks, assistant messages, the text of a user
record, why a user record is not user speech, and what the user typed for a slash command."""

from __future__ import annotations

import re
from typing import Any

from ..usage import openclaw_usage

_META_PREFIXES = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
    "[Request interrupted by user",
)
_COMMAND_RE = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS_RE = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH_INPUT_RE = re.compile(r"^<bash-input>(.*?)</bash-input>\s*$", re.DOTALL)
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "pause_turn": "stop",
    "refusal": "stop",
}


def blocks(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"]
        for b in blocks(content)
        if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def message_entry(uid: str, base: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": uid, **base, "message": message}


def content_block(block: dict[str, Any]) -> dict[str, Any]:
    """A Claude content block in OpenClaw form; unknown blocks pass through (never indexed)."""
    kind = block.get("type")
    if kind == "text":
        return {
            "type": "text",
            "text": block.get("text") if isinstance(block.get("text"), str) else "",
        }
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking") if isinstance(block.get("thinking"), str) else "",
        }
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "redacted": True}
    if kind in ("tool_use", "server_tool_use"):
        return {
            "type": "toolCall",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input") if isinstance(block.get("input"), dict) else {},
        }
    if kind == "image":
        source = block.get("source") if isinstance(block.get("source"), dict) else {}
        if source.get("type") == "base64":
            return {
                "type": "image",
                "data": source.get("data"),
                "mimeType": source.get("media_type"),
            }
        return {"type": "image", "url": source.get("url"), "mimeType": source.get("media_type")}
    return dict(block)


def assistant_message(message: dict[str, Any], record: dict[str, Any], ms: int) -> dict[str, Any]:
    content = message.get("content")
    converted = (
        [{"type": "text", "text": content}]
        if isinstance(content, str)
        else [content_block(b) for b in blocks(content)]
    )
    out: dict[str, Any] = {
        "role": "assistant",
        "content": converted,
        "api": "anthropic-messages",
        "provider": "anthropic",
    }
    if isinstance(message.get("model"), str):
        out["model"] = message["model"]
    if isinstance(message.get("id"), str):
        out["responseId"] = message["id"]
    stop = message.get("stop_reason")
    if record.get("isApiErrorMessage"):
        out["stopReason"] = "error"
    elif isinstance(stop, str):
        out["stopReason"] = _STOP_REASONS.get(stop, stop)
    if ms:
        out["timestamp"] = ms
    return out


def response_usage(message: dict[str, Any], record: dict[str, Any]) -> dict[str, Any] | None:
    """The usage an assistant line records (as of that line: a response written over several
    lines repeats it, the output growing), with the cost older releases wrote (``costUSD``).
    A ``<synthetic>`` message (written by Claude Code itself, no API call) has none."""
    usage = message.get("usage")
    if message.get("model") == "<synthetic>" or not isinstance(usage, dict):
        return None
    return openclaw_usage(
        input=usage.get("input_tokens"),
        output=usage.get("output_tokens"),
        cache_read=usage.get("cache_read_input_tokens"),
        cache_write=usage.get("cache_creation_input_tokens"),
        cost=record.get("costUSD"),
    )


def meta_kind(record: dict[str, Any], converted: list[dict[str, Any]]) -> str | None:
    """Why a user record is not user speech (injected or command output), or None."""
    if record.get("isMeta"):
        return "isMeta"
    text = plain_text(converted).lstrip()
    if not text and not any(b.get("type") == "image" for b in converted):
        return None
    for prefix in _META_PREFIXES:
        if text.startswith(prefix):
            return prefix.strip("<>[").split(">")[0].split(" by")[0]
    return None


def typed_command(block: dict[str, Any]) -> dict[str, Any]:
    """What the user typed for a slash command or ``!`` shell line, instead of its XML wrapper."""
    text = block.get("text")
    if block.get("type") != "text" or not isinstance(text, str):
        return block
    bash = _BASH_INPUT_RE.match(text.strip())
    if bash:
        return {"type": "text", "text": f"! {bash.group(1).strip()}"}
    name = _COMMAND_RE.search(text)
    if not name or not text.lstrip().startswith(("<command-name>", "<command-message>")):
        return block
    args = _COMMAND_ARGS_RE.search(text)
    typed = name.group(1).strip()
    if args and args.group(1).strip():
        typed = f"{typed} {args.group(1).strip()}"
    return {"type": "text", "text": typed}
