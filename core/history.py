"""``sessions_history``: what was said around it? (SPEC 7)

The active branch, oldest first, redacted, each text field cut at 4000 characters, images as
placeholders, tool traffic only on request; the answer stays under 80 KiB. Visibility is the
same call search makes (``visible.visible_sessions``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .bounds import cut_text
from .errors import ValidationError
from .keys import normalize_key
from .redact import redact
from .search import validate_limit
from .state import StateDir
from .transcript import INDEXED_ROLES, TEXT_BLOCK_TYPES, TOOL_ROLES, active_branch, timestamp_ms
from .visibility import Caller
from .visible import FORBIDDEN, open_visible  # noqa: F401 - FORBIDDEN is also known from here

FIELD_MAX_CHARS = 4000
ANSWER_MAX_BYTES = 80 * 1024
HISTORY_LIMIT_MAX = 1000
TOOL_BLOCKS = ("toolCall", "tool_use", "tool_result", "function_call")


@dataclass(frozen=True)
class HistoryRequest:
    session_key: str
    message_id: str | None = None
    limit: int | None = None
    include_tools: bool = False
    max_bytes: int = ANSWER_MAX_BYTES  # exports raise these caps; the tool answer keeps them
    field_max_chars: int = FIELD_MAX_CHARS


@dataclass
class HistoryResponse:
    """A window of a conversation. Ids, tool names and image types are redacted like text; the
    key stays as stored, for opening the session in this process, and is redacted wherever it
    is shown (``as_json``)."""

    session_key: str
    session_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False  # messages left out (cap or limit)
    content_truncated: bool = False  # some text field was cut at FIELD_MAX_CHARS
    content_redacted: bool = False
    bytes: int = 0
    has_more: bool = False  # older messages exist before the window
    has_newer: bool = False  # newer messages exist after the window (anchored windows)

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionKey": redact(self.session_key),
            "sessionId": self.session_id,
            "messages": self.messages,
            "truncated": self.truncated,
            "contentTruncated": self.content_truncated,
            "contentRedacted": self.content_redacted,
            "bytes": self.bytes,
            "hasMore": self.has_more,
        }


class Cleaner:
    """Redacts and cuts text fields, remembering whether it did either."""

    def __init__(self, max_chars: int = FIELD_MAX_CHARS) -> None:
        self.max_chars = max_chars
        self.redacted = False
        self.cut = False

    def text(self, value: str) -> str:
        bounded = cut_text(value)  # a message over the bound is shown cut, with a marker
        clean = redact(bounded)
        self.redacted = self.redacted or clean != bounded
        self.cut = self.cut or bounded is not value
        if len(clean) > self.max_chars:
            self.cut = True
            clean = clean[: self.max_chars] + "…"
        return clean

    def block(self, block: Any, include_tools: bool) -> dict[str, Any] | None:
        if isinstance(block, str):
            return {"type": "text", "text": self.text(block)}
        if not isinstance(block, dict):
            return None
        kind = block.get("type")
        if kind in TEXT_BLOCK_TYPES and isinstance(block.get("text"), str):
            return {"type": "text", "text": self.text(block["text"])}
        if kind in ("thinking", "reasoning"):
            thought = block.get("thinking") or block.get("text") or ""
            return {"type": "thinking", "thinking": self.text(str(thought))} if thought else None
        if kind == "image":
            return {"type": "image", "placeholder": _image_placeholder(block)}
        if kind in TOOL_BLOCKS:
            if not include_tools:
                return None
            arguments = block.get("arguments", block.get("input"))
            return {
                "type": "toolCall",
                "name": self.text(str(block.get("name") or "tool")),
                "arguments": self.text(json.dumps(arguments, ensure_ascii=False)),
            }
        return None


def _image_placeholder(block: dict[str, Any]) -> str:
    data = block.get("data")
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    mime = redact(str(block.get("mimeType") or block.get("mime_type") or "image"))[:100]
    return f"[image {mime}{f', {size // 1024} KB' if size else ''}]"


def render_message(event: dict[str, Any], cleaner: Cleaner, include_tools: bool, default_ts: int
                   ) -> dict[str, Any] | None:
    message = event.get("message") or {}
    role = message.get("role")
    if role not in INDEXED_ROLES and not (include_tools and role in TOOL_ROLES):
        return None
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content] if content else []
    rendered = [b for b in (cleaner.block(b, include_tools) for b in blocks) if b]
    if role in TOOL_ROLES:
        name = cleaner.text(str(message.get("toolName") or "tool"))
        rendered = [{"type": "toolResult", "name": name, "isError": bool(message.get("isError")),
                     "content": rendered}]
    elif not rendered:
        return None  # e.g. an assistant turn that only called tools, shown without tools
    entry_id = event.get("id")
    return {
        "id": redact(entry_id) if isinstance(entry_id, str) else entry_id,
        "role": role,
        "timestamp": timestamp_ms(event, default_ts),
        "content": rendered,
    }


def sessions_history(state: StateDir, request: HistoryRequest, caller: Caller) -> HistoryResponse:
    key = normalize_key(request.session_key)
    limit = (
        validate_limit(request.limit, HISTORY_LIMIT_MAX) if request.limit is not None else None
    )
    with open_visible(state, caller, key) as (db, session):
        branch = active_branch(db.events(session.pk))
    messages: list[dict[str, Any]] = []
    stored_ids: list[Any] = []  # the ids as stored: an anchor may name either form
    flags: list[tuple[bool, bool]] = []  # (redacted, cut) per message, for the window's flags
    for _seq, event in branch.path:
        if event.get("type") != "message":
            continue
        cleaner = Cleaner(request.field_max_chars)
        rendered = render_message(event, cleaner, request.include_tools, session.created_at)
        if rendered is not None:
            messages.append(rendered)
            stored_ids.append(event.get("id"))
            flags.append((cleaner.redacted, cleaner.cut))
    anchor = None
    if request.message_id is not None:
        wanted = request.message_id
        anchor = next((i for i, sid in enumerate(stored_ids) if sid == wanted), None)
        if anchor is None:  # the redacted id a search answered with
            anchor = next((i for i, m in enumerate(messages) if m["id"] == wanted), None)
        if anchor is None:
            raise ValidationError(
                f"message {request.message_id!r} is not on the active branch of {key} "
                "(it may be on an abandoned branch, a tool message, or unknown)"
            )
    response = HistoryResponse(session_key=key, session_id=redact(session.session_id))
    lo, hi = _window(messages, anchor, limit, response, request.max_bytes)
    response.messages = messages[lo:hi]
    response.content_redacted = any(redacted for redacted, _cut in flags[lo:hi])
    response.content_truncated = any(cut for _redacted, cut in flags[lo:hi])
    excess = _size(response.as_json()) + 64 - request.max_bytes
    if anchor is not None and excess > 0:
        # Only the anchor can overflow (every other message was admitted within the budget).
        if _shrink_to_fit(messages[anchor], _size(messages[anchor]) - excess):
            response.content_truncated = True
    response.truncated = (hi - lo) < len(messages)
    response.has_more = lo > 0
    response.has_newer = hi < len(messages)
    response.bytes = len(json.dumps(response.as_json(), ensure_ascii=False).encode("utf-8"))
    return response


def _window(
    messages: list[dict[str, Any]],
    anchor: int | None,
    limit: int | None,
    response: HistoryResponse,
    max_bytes: int,
) -> tuple[int, int]:
    """The widest [lo, hi) that fits the byte cap and the limit: newest messages without an
    anchor; with one, grown around it one older, one newer, ..."""
    sizes = [_size(m) + 1 for m in messages]
    budget = _budget(response, max_bytes)
    count_max = limit if limit is not None else len(messages)
    if anchor is None:
        lo = hi = len(messages)
        while lo > 0 and hi - lo < count_max and sizes[lo - 1] <= budget:
            lo -= 1
            budget -= sizes[lo]
        return lo, hi
    lo, hi = anchor, anchor + 1
    budget -= min(sizes[anchor], budget)  # an oversized anchor is cut to fit afterwards
    take_older = True
    while hi - lo < count_max:
        older_ok = lo > 0 and sizes[lo - 1] <= budget
        newer_ok = hi < len(messages) and sizes[hi] <= budget
        if not older_ok and not newer_ok:
            break
        if (take_older and older_ok) or not newer_ok:
            lo -= 1
            budget -= sizes[lo]
        else:
            budget -= sizes[hi]
            hi += 1
        take_older = not take_older
    return lo, hi


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _budget(response: HistoryResponse, max_bytes: int) -> int:
    """Bytes left for messages once the envelope (and its flags and counts) is counted."""
    return max_bytes - _size(response.as_json()) - 64


def _shrink_to_fit(message: dict[str, Any], budget: int) -> bool:
    """Halve the longest text fields of the anchor message until it fits; True if cut."""
    cut = False
    while _size(message) > budget:
        fields = list(_text_fields(message["content"]))
        if not fields:
            break
        block, name = max(fields, key=lambda f: len(f[0][f[1]]))
        value = block[name].rstrip("…")
        if len(value) < 2:
            break
        block[name] = value[: len(value) // 2] + "…"
        cut = True
    return cut


def _text_fields(blocks: list[dict[str, Any]]):
    for block in blocks:
        for name in ("text", "thinking", "arguments"):
            if isinstance(block.get(name), str):
                yield block, name
        if isinstance(block.get("content"), list):
            yield from _text_fields(block["content"])
