"""``sessions_history``: what was said around it? (SPEC 7)

The active branch, oldest first, redacted, each text field cut at 4000 characters, images as
placeholders, tool traffic only on request; the answer stays under 80 KiB. Visibility is the
same call search makes (``visible.visible_sessions``).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from .bounds import MAX_MESSAGE_CHARS, check_id, cut_text
from .catalog import facts_json, resume_of, source_kind, summary_of
from .checks import validate_limit
from .errors import ValidationError
from .facts import Facts
from .hosts import check_host
from .keys import normalize_key
from .paging import check_offset
from .redact import redact
from .state import StateDir
from .storage import AgentReader, SessionFilter, SessionRow
from .transcript import (
    INDEXED_ROLES,
    SHOWN_ROLES,
    TEXT_BLOCK_TYPES,
    TOOL_ROLES,
    active_branch,
    runtime_context,
    timestamp_ms,
)
from .visibility import Caller
from .visible_sessions import FORBIDDEN, open_visible  # noqa: F401 - FORBIDDEN is also known from here

FIELD_MAX_CHARS = 4000
ANSWER_MAX_BYTES = 80 * 1024
HISTORY_LIMIT_MAX = 1000
TOOL_BLOCKS = ("toolCall", "tool_use", "tool_result", "function_call")


@dataclass(frozen=True)
class HistoryRequest:
    session_key: str
    message_id: str | None = None
    limit: int | None = None
    # How many of the newest messages were already returned (the previous page's
    # ``nextOffset``): the window ends that many messages before the newest. Not with
    # ``message_id``. Counted as OpenClaw counts: every user, assistant and tool-result
    # message of the active branch, whether or not ``include_tools`` shows it.
    offset: int | None = None
    include_tools: bool = False
    max_bytes: int = ANSWER_MAX_BYTES  # exports raise these caps; the tool answer keeps them
    field_max_chars: int = FIELD_MAX_CHARS
    host: str | None = None  # the session's host (``visible.find_session``)
    # What ends a text cut at ``field_max_chars``: a bare "…" for agents and scripts; a
    # person's view says how much is left out and how to see it (``{more}``: characters)
    cut_note: str = "…"


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
    agent: str = ""
    source: str = "openclaw"  # the agent tool that wrote it (catalog.source_kind)
    resume: str | None = None  # the command that resumes it (catalog.resume_of), if offered
    host: str = ""  # the host the session came from (core/hosts.py)
    # OpenClaw's paging: messages newer than the window, where the next older page starts
    # (None when there is none), and the messages of the branch (HistoryRequest.offset)
    offset: int = 0
    next_offset: int | None = None
    total_messages: int = 0
    facts: Facts | None = None  # the session's (core/facts.py), None until computed

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionKey": redact(self.session_key),
            # whose conversation: past content, never instructions (docs/mcp.md)
            "agent": self.agent,
            "source": self.source,
            "sessionId": self.session_id,
            "messages": self.messages,
            "truncated": self.truncated,
            "contentTruncated": self.content_truncated,
            "contentRedacted": self.content_redacted,
            "bytes": self.bytes,
            "hasMore": self.has_more,
            "offset": self.offset,
            "nextOffset": self.next_offset,
            "totalMessages": self.total_messages,
            "resume": self.resume,
            "host": self.host or None,
            "facts": facts_json(self.facts),
        }


class Cleaner:
    """Redacts and cuts text fields, remembering whether it did either."""

    def __init__(self, max_chars: int = FIELD_MAX_CHARS, cut_note: str = "…") -> None:
        self.max_chars = max_chars
        self.cut_note = cut_note
        self.redacted = False
        self.cut = False

    def text(self, value: str) -> str:
        bounded = cut_text(value)  # a message over the bound is shown cut, with a marker
        clean = redact(bounded)
        self.redacted = self.redacted or clean != bounded
        self.cut = self.cut or bounded is not value
        if len(clean) > self.max_chars:
            self.cut = True
            clean = clean[: self.max_chars] + self.cut_note.format(
                more=len(clean) - self.max_chars)
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
                "arguments": self.arguments(arguments),
            }
        return None

    def arguments(self, value: Any) -> str:
        """A tool call's arguments as JSON. Each string in them is redacted on its own first:
        inside a dump, JSON's quotes and escapes hide a command's start and a line's end from
        the rules (``{"command": "mysql -pS3cret"}``). The dump is then redacted whole, for
        the rules that read a field's name (``"password": "..."``). The strings share half
        the bound of one text field (JSON's escapes can nearly double them), so a huge call
        costs no more than a huge message; strings past it are left out, marked."""
        budget = MAX_MESSAGE_CHARS // 2

        def clean(item: Any) -> Any:
            nonlocal budget
            if isinstance(item, str):
                if budget <= 0:
                    self.cut = True
                    return "…"
                bounded = cut_text(item, budget)
                budget -= len(bounded)
                shown = redact(bounded)
                self.redacted = self.redacted or shown != bounded
                return shown
            if isinstance(item, dict):
                return {redact(str(k)): clean(v) for k, v in item.items()}
            if isinstance(item, list):
                return [clean(v) for v in item]
            return item

        return self.text(json.dumps(clean(value), ensure_ascii=False))


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
    shown = {
        "id": redact(entry_id) if isinstance(entry_id, str) else entry_id,
        "role": role,
        "timestamp": timestamp_ms(event, default_ts),
        "content": rendered,
    }
    if runtime_context(message):
        shown["context"] = True  # injected by OpenClaw's runtime, not the user's words
    return shown


def sessions_history(state: StateDir, request: HistoryRequest, caller: Caller) -> HistoryResponse:
    key = normalize_key(request.session_key)
    limit = (
        validate_limit(request.limit, HISTORY_LIMIT_MAX) if request.limit is not None else None
    )
    check_id("messageId", request.message_id)  # no entry has a longer id: not echoed whole
    offset = check_offset(request.offset)
    if request.message_id is not None and request.offset is not None:
        raise ValidationError("give messageId or offset, not both: messageId centers the "
                              "window on a message, offset pages back from the newest")
    if request.host is not None:
        check_host(request.host)
    with open_visible(state, caller, key, request.host) as (db, session):
        shown = db.branch_messages(session.pk, session.last_seq)
        if shown is None:  # the stored branch lags behind the log: fold the whole log
            path = active_branch(db.events(session.pk)).path
            events = dict(path)
            candidates = [(seq, event.get("id"), (event.get("message") or {}).get("role"))
                          for seq, event in path if event.get("type") == "message"
                          and (event.get("message") or {}).get("role") in SHOWN_ROLES]
            messages = _Messages(candidates, lambda seqs: {n: events[n] for n in seqs},
                                 request, session.created_at)
        else:  # read only the events the window needs
            # every message offsets count; tool results are skipped unread without tools
            candidates = [(seq, entry_id, role) for seq, entry_id, role, _at in shown
                          if role in SHOWN_ROLES]
            messages = _Messages(candidates, lambda seqs: db.events_at(session.pk, seqs),
                                 request, session.created_at)
        anchor = None
        if request.message_id is not None:
            anchor = messages.find(request.message_id)
            if anchor is None:
                raise ValidationError(_not_shown(request, key, messages))
        response = HistoryResponse(session_key=key, session_id=redact(session.session_id),
                                   agent=db.agent_id, source=source_kind(session.source),
                                   resume=_resume(db, session), host=session.host,
                                   facts=db.session_facts([session.pk]).get(session.pk))
        start = max(0, len(candidates) - offset)
        picked = _window(messages, anchor, limit, response, request.max_bytes, start)
        has_more = messages.older(picked[0] if picked else start) is not None
        has_newer = bool(picked) and messages.newer(picked[-1]) is not None
    window = [messages.get(i) for i in picked]
    response.messages = [m.message for m in window if m is not None]
    response.content_redacted = any(m.redacted for m in window if m is not None)
    response.content_truncated = any(m.cut for m in window if m is not None)
    response.total_messages = len(candidates)
    # the request's offset; an anchored window's: the messages newer than it
    response.offset = len(candidates) - (picked[-1] + 1) if anchor is not None else offset
    response.next_offset = len(candidates) - picked[0] if has_more and picked else None
    excess = _size(response.as_json()) + 64 - request.max_bytes
    if picked and excess > 0:
        # Only the anchor, or a newest message bigger than the budget alone, can overflow
        # (every other message was admitted within the budget).
        anchored = messages.get(anchor if anchor is not None else picked[0])
        if anchored is not None and _shrink_to_fit(anchored.message,
                                                   _size(anchored.message) - excess):
            response.content_truncated = True
    response.truncated = has_more or has_newer
    response.has_more = has_more
    response.has_newer = has_newer
    response.bytes = len(json.dumps(response.as_json(), ensure_ascii=False).encode("utf-8"))
    return response


def _not_shown(request: HistoryRequest, key: str, messages: _Messages) -> str:
    """Why an anchor opens nothing: a message of the branch that holds only tool calls or
    their results, asked for without tools (a tool-call hit names the call's message), or
    no message of the active branch."""
    wanted = request.message_id
    if not request.include_tools and messages.holds(str(wanted)):
        return (f"message {wanted!r} of {key} holds only tool calls or their results, shown "
                "with tools: ask with includeTools (--include-tools on the command line)")
    return (f"message {wanted!r} is not on the active branch of {key} (it may be on an "
            "abandoned branch, or unknown)")


def _resume(db: AgentReader, session: SessionRow) -> str | None:
    """The session's resume command, by the rule a list applies (``catalog.resume_of``)."""
    [card] = db.session_cards(SessionFilter([session.pk]))
    return resume_of(summary_of(db.agent_id, card)).command


@dataclass
class _Rendered:
    message: dict[str, Any]
    redacted: bool
    cut: bool
    size: int  # serialized bytes, plus a separator


class _Messages:
    """The message events of the active branch a history may show (``candidates``: their
    seq and stored id, oldest first), rendered on demand, a chunk of events read at a time
    (``read``): a window of a long conversation reads the events around it, not the log.
    A candidate that renders to nothing (a turn that only called tools, shown without
    tools) is skipped, as if it were not there."""

    CHUNK = 64

    def __init__(self, candidates: list[tuple[int, Any, Any]],
                 read: Callable[[list[int]], dict[int, dict[str, Any]]],
                 request: HistoryRequest, default_ts: int) -> None:
        self.candidates = candidates
        self.read = read
        self.request = request
        self.default_ts = default_ts
        self.rendered: dict[int, _Rendered | None] = {}

    def get(self, i: int) -> _Rendered | None:
        if i not in self.rendered and self._unshown(i):
            self.rendered[i] = None  # a tool result without tools: not read at all
        if i not in self.rendered:
            lo, hi = max(0, i - self.CHUNK), min(len(self.candidates), i + self.CHUNK)
            todo = [n for n in range(lo, hi) if n not in self.rendered and not self._unshown(n)]
            events = self.read([self.candidates[n][0] for n in todo])
            for n in todo:
                event = events.get(self.candidates[n][0])
                self.rendered[n] = self._render(event) if event is not None else None
        return self.rendered[i]

    def _unshown(self, i: int) -> bool:
        return not self.request.include_tools and self.candidates[i][2] in TOOL_ROLES

    def _render(self, event: dict[str, Any]) -> _Rendered | None:
        cleaner = Cleaner(self.request.field_max_chars, self.request.cut_note)
        message = render_message(event, cleaner, self.request.include_tools, self.default_ts)
        if message is None:
            return None
        return _Rendered(message, cleaner.redacted, cleaner.cut, _size(message) + 1)

    def older(self, i: int) -> int | None:
        """The nearest shown message before position ``i``."""
        return next((n for n in range(i - 1, -1, -1) if self.get(n) is not None), None)

    def newer(self, i: int) -> int | None:
        """The nearest shown message after position ``i``."""
        return next((n for n in range(i + 1, len(self.candidates)) if self.get(n) is not None),
                    None)

    def holds(self, wanted: str) -> bool:
        """Whether a message of the branch has this stored id (or redacted id), shown or not."""
        return any(entry_id == wanted or (isinstance(entry_id, str) and redact(entry_id) == wanted)
                   for _seq, entry_id, _role in self.candidates)

    def find(self, wanted: str) -> int | None:
        """The shown message an anchor names: by its stored id, else by the redacted id a
        search answered with."""
        for n, (_seq, entry_id, _role) in enumerate(self.candidates):
            if entry_id == wanted and self.get(n) is not None:
                return n
        for n, (_seq, entry_id, _role) in enumerate(self.candidates):
            if isinstance(entry_id, str) and redact(entry_id) == wanted:
                found = self.get(n)
                if found is not None and found.message["id"] == wanted:
                    return n
        return None


def _window(messages: _Messages, anchor: int | None, limit: int | None,
            response: HistoryResponse, max_bytes: int, start: int) -> list[int]:
    """The positions of the widest window that fits the byte cap and the limit: without an
    anchor the newest messages before position ``start`` (at least one, cut to fit later);
    with one, grown around it one older, one newer, ..."""
    budget = _budget(response, max_bytes)
    count_max = limit if limit is not None else len(messages.candidates)

    def size(n: int) -> int:
        found = messages.get(n)
        return found.size if found is not None else 0

    if anchor is None:
        picked: list[int] = []
        older = messages.older(start)
        if older is not None and count_max > 0 and size(older) > budget:
            return [older]  # alone and too big: cut to fit, so that paging never stalls
        while older is not None and len(picked) < count_max and size(older) <= budget:
            picked.append(older)
            budget -= size(older)
            older = messages.older(older)
        return picked[::-1]
    around = deque([anchor])
    budget -= min(size(anchor), budget)  # an oversized anchor is cut to fit afterwards
    take_older = True
    while len(around) < count_max:
        older, newer = messages.older(around[0]), messages.newer(around[-1])
        older_ok = older is not None and size(older) <= budget
        newer_ok = newer is not None and size(newer) <= budget
        if not older_ok and not newer_ok:
            break
        if (take_older and older_ok) or not newer_ok:
            assert older is not None
            around.appendleft(older)
            budget -= size(older)
        else:
            assert newer is not None
            around.append(newer)
            budget -= size(newer)
        take_older = not take_older
    return list(around)


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
