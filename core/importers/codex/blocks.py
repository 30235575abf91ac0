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


def output_text(output: Any) -> tuple[str, bool]:
    """A tool output's text, and whether it reports a failure."""
    if isinstance(output, str):
        return output, False
    if isinstance(output, dict):
        text = (
            output.get("content") if isinstance(output.get("content"), str) else json.dumps(output)
        )
        return text, output.get("success") is False
    if isinstance(output, list):
        parts = [b.get("text") for b in blocks(output) if isinstance(b.get("text"), str)]
        return "\n".join(parts), False
    return "" if output is None else json.dumps(output), False
