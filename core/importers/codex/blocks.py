"""Codex payloads in OpenClaw form: content blocks, a function call's arguments, a tool
output's text."""

from __future__ import annotations

import json
import re
from typing import Any

from ...bounds import decode_json
from ...errors import ValidationError


def blocks(value: Any) -> list[dict[str, Any]]:
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def content_block(block: dict[str, Any]) -> dict[str, Any]:
    """A Codex content block in OpenClaw form; unknown blocks pass through (never indexed)."""
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


def json_object(arguments: Any) -> dict[str, Any]:
    """A function call's arguments (a JSON string) as an object."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            value = decode_json(arguments, max_bytes=None)  # deep or broken: kept as text
        except ValidationError:
            return {"raw": arguments}
        return value if isinstance(value, dict) else {"value": value}
    return {}


# Codex's exec output opens with a header (``Chunk ID``, ``Wall time``, then this line); an
# older one is JSON text with ``metadata.exit_code``. A non-zero exit is a failed call, as the
# OpenClaw ``exec`` tool's is (docs/tool-calls.md): the converter sets ``isError``.
_EXITED = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)
_HEADER_CHARS = 300


def output_text(output: Any) -> tuple[str, bool]:
    """A tool output's text, and whether it reports a failure (``success: false``, or a
    non-zero exit code: ``exit_code``)."""
    if isinstance(output, str):
        return output, exit_code(output) not in (None, 0)
    if isinstance(output, dict):
        text = (
            output.get("content") if isinstance(output.get("content"), str) else json.dumps(output)
        )
        return text, output.get("success") is False
    if isinstance(output, list):
        parts = [b.get("text") for b in blocks(output) if isinstance(b.get("text"), str)]
        return "\n".join(parts), False
    return "" if output is None else json.dumps(output), False


def exit_code(text: str) -> int | None:
    """The exit code a Codex exec output records in its header (or, older, in its JSON
    ``metadata``), else None."""
    found = _EXITED.search(text[:_HEADER_CHARS])
    if found:
        return int(found.group(1))
    if text.startswith("{") and '"exit_code"' in text[:_HEADER_CHARS * 100]:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        meta = value.get("metadata") if isinstance(value, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    return None
