"""Import Continue sessions: ``~/.continue/sessions/<id>.json`` (``$CONTINUE_GLOBAL_DIR``
instead of ``~/.continue``), listed in ``sessions.json`` (continuedev/continue
``core/util/paths.ts``, ``core/util/history.ts``; the shapes in ``core/index.d.ts``).

A session file ``{sessionId, title, workspaceDirectory, history[{message, contextItems,
editorState, reasoning, …}], chatModelTitle}`` is rewritten whole on every change and has no
message ids or times (docs/importers.md, "Continue"):

- Each message gets an id derived from its role, its content and how many equal messages came
  before it in the file, so a re-read stores nothing twice, a message the user edited is a new
  one (the old one stays), and a history Continue cut short loses nothing stored.
- User and assistant ``content`` (a string or parts) is indexed; ``editorState`` (the same words
  as the editor held them) is never read; context items (files, terminal output), tool calls,
  tool results, ``thinking`` messages and ``reasoning`` are stored, not indexed. A ``tool``
  message answering a call that its assistant item's tool state marks ``errored`` is a failed
  result (``isError``).
- An answer's ``usage`` is an empty assistant message of its own beside it (it can be written
  after the answer's text, which is stored by then).
- The start time is the index's ``dateCreated`` (else the file's time); the project folder is
  ``workspaceDirectory`` (a ``file://`` URI); the model is ``chatModelTitle``.
- Keys are ``agent:<agent>:continue:<sessionId>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ...state import StateDir
from ...storage import AgentWriter, SessionMeta
from ...transcript import iso_to_ms
from ..common import (
    ImportReport,
    files_under,
    import_each,
    import_start,
    label_of,
    store_converted,
)
from ..usage import minus, openclaw_usage
from ..whole import chain, derived_id, ms_to_iso, read_json, read_json_quietly, unseen

SOURCE = "continue"
INDEX_FILE = "sessions.json"


_SESSION_NAME = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                           r"[0-9a-fA-F]{12}\.json$")


def is_transcript_name(name: str) -> bool:
    """``<sessionId>.json``: Continue names each session by a UUID (``uuidv4()``)."""
    return bool(_SESSION_NAME.match(name))


def folder_of(uri: Any) -> str | None:
    """``file:///home/me/code`` -> ``/home/me/code`` (a plain path is kept)."""
    if not isinstance(uri, str) or not uri:
        return None
    if uri.startswith("file://"):
        path = unquote(urlparse(uri).path)
        if len(path) > 2 and path[0] == "/" and path[2] == ":":  # file:///c:/... on Windows
            path = path[1:]
        return path or None
    return uri


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parts(content: Any) -> list[dict[str, Any]]:
    """Continue's ``MessageContent`` as content blocks (text and images)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            out.append({"type": "text", "text": _text(part.get("text"))})
        elif part.get("type") == "imageUrl":
            url = part.get("imageUrl")
            out.append({"type": "image", "url": _text(url.get("url")) if isinstance(url, dict)
                        else ""})
    return out


def _started(file: Path, session_id: str, given: Any) -> int | None:
    """The session's start: its ``dateCreated`` in the index (epoch ms, as a number or text,
    or an ISO time), else the file's modification time."""
    for item in given if isinstance(given, list) else []:
        if isinstance(item, dict) and item.get("sessionId") == session_id:
            value = item.get("dateCreated")
            if isinstance(value, str) and value.strip().isdigit():
                return int(value.strip())
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
            if iso_to_ms(value):
                return iso_to_ms(value)
    try:
        return file.stat().st_mtime_ns // 1_000_000
    except OSError:
        return None


class _Session:
    def __init__(self, session_id: str, model: str | None) -> None:
        self.session_id = session_id
        self.model = model
        self.entries: list[dict[str, Any]] = []
        self.seen: dict[str, int] = {}
        self.first_prompt: str | None = None
        self.errored: set[str] = set()  # calls an assistant item's tool states mark errored

    def _id(self, *parts: Any) -> str:
        base = derived_id("continue-", self.session_id, *parts)
        n = self.seen.get(base, 0)
        self.seen[base] = n + 1
        return base if n == 0 else f"{base}-{n}"

    def _add(self, entry_id: str, message: dict[str, Any]) -> None:
        self.entries.append({"type": "message", "id": entry_id, "parentId": None,
                             "message": message})

    def item(self, index: int, item: Any, report: ImportReport, file: Path) -> None:
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            report.skip(file, None, f"history item {index}: no message with a role; skipped")
            return
        role, content = message["role"], message.get("content")
        self.errored |= _errored(item)
        base = self._id(role, content, message.get("toolCalls"), message.get("toolCallId"))
        context = [c for c in item.get("contextItems") or [] if isinstance(c, dict)]
        if context:
            self._add(f"{base}-c", {"role": "toolResult", "toolCallId": "", "toolName": "context",
                                    "content": [{"type": "text", "text": "\n\n".join(
                                        f"{_text(c.get('name'))}\n{_text(c.get('content'))}"
                                        for c in context)}], "isError": False})
        reasoning = item.get("reasoning")
        thought = _text(reasoning.get("text")) if isinstance(reasoning, dict) else ""
        if role == "user":
            blocks = _parts(content)
            text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
            if self.first_prompt is None and text.strip():
                self.first_prompt = text
            self._add(base, {"role": "user", "content": blocks})
        elif role in ("assistant", "thinking"):
            blocks = _parts(content)
            if role == "thinking":
                blocks = [{"type": "thinking", "thinking": "\n".join(
                    b.get("text", "") for b in blocks)}]
            if thought:
                blocks.insert(0, {"type": "thinking", "thinking": thought})
            for call in message.get("toolCalls") or []:
                if isinstance(call, dict):
                    function = call.get("function") if isinstance(call.get("function"),
                                                                  dict) else {}
                    blocks.append({"type": "toolCall", "id": _text(call.get("id")),
                                   "name": _text(function.get("name")),
                                   "arguments": {"raw": _text(function.get("arguments"))}})
            answer: dict[str, Any] = {"role": "assistant", "content": blocks, "api": SOURCE}
            if self.model:
                answer["model"] = self.model
            self._add(base, answer)
            usage = _usage(message.get("usage"))
            if usage is not None:  # an entry of its own: it may come after the answer's text
                self._add(f"{base}-u", {**answer, "content": [], "usage": usage})
        elif role == "tool":
            call_id = _text(message.get("toolCallId"))
            self._add(base, {"role": "toolResult", "toolCallId": call_id, "toolName": "",
                             "content": [{"type": "text", "text": _text(content)}],
                             "isError": bool(call_id) and call_id in self.errored})
        else:  # system: stored as context
            self._add(base, {"role": "toolResult", "toolCallId": "", "toolName": role,
                             "content": _parts(content), "isError": False})
        summary = item.get("conversationSummary")
        if isinstance(summary, str) and summary:
            self.entries.append({"type": "custom", "id": f"{base}-s", "parentId": None,
                                 "customType": "continue.summary", "data": {"summary": summary}})


def _errored(item: dict[str, Any]) -> set[str]:
    """The calls an assistant item's tool states (``toolCallStates``, older files'
    ``toolCallState``) mark ``errored``: the failure Continue records, on the call, not on the
    ``tool`` message answering it."""
    states = item.get("toolCallStates")
    states = states if isinstance(states, list) else [item.get("toolCallState")]
    return {s["toolCallId"] for s in states if isinstance(s, dict)
            and s.get("status") == "errored" and isinstance(s.get("toolCallId"), str)}


def _usage(usage: Any) -> dict[str, Any] | None:
    """An answer's ``usage`` (``core/index.d.ts`` ``Usage``, OpenAI's object: the prompt
    counts the cached tokens; the completion the reasoning)."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("promptTokensDetails")
    details = details if isinstance(details, dict) else {}
    return openclaw_usage(input=minus(usage.get("promptTokens"), details.get("cachedTokens")),
                          output=usage.get("completionTokens"),
                          cache_read=details.get("cachedTokens"),
                          cache_write=details.get("cacheWriteTokens"))


def convert_session(file: Path, report: ImportReport) -> tuple[SessionMeta, list[dict[str, Any]]] | None:
    data = read_json(file, report, "a Continue session (a JSON object)")
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        report.skip(file, None, "not a Continue session (no history list); nothing imported")
        return None
    session_id = _text(data.get("sessionId")) or file.stem
    model = _text(data.get("chatModelTitle")) or None
    session = _Session(session_id, model)
    for index, item in enumerate(data["history"]):
        session.item(index, item, report, file)
    started = _started(file, session_id, read_json_quietly(file.parent / INDEX_FILE))
    cwd = folder_of(data.get("workspaceDirectory"))
    header: dict[str, Any] = {"type": "session", "version": 3, "id": session_id}
    if ms_to_iso(started):
        header["timestamp"] = ms_to_iso(started)
    if cwd:
        header["cwd"] = cwd
    title = _text(data.get("title"))
    if not title or title == "New Session":
        title = session.first_prompt or session_id
    project = Path(cwd.replace("\\", "/")).name if cwd else ""
    meta = SessionMeta(key=f"agent:{{agent}}:{SOURCE}:{session_id}", session_id=session_id,
                       label=label_of(project, title), created_at=started,
                       updated_at=started, source=SOURCE)
    return meta, [header, *chain(session.entries)]


def import_session(db: AgentWriter, agent_id: str, file: Path, report: ImportReport,
                   live: bool = False, mark: Any = None) -> tuple[str, list[Any]] | None:
    """Read, convert and store one session file; its id and the mark of what was read
    (``whole.unseen``). None: nothing stored."""
    done = convert_session(file, report)
    if done is None:
        return None
    meta, events = done
    meta = meta._replace(key=meta.key.replace("{agent}", agent_id))
    events, mark = unseen(events, mark, meta.key, report)
    if not events:  # a conversation deleted in backscroll
        return meta.session_id, mark
    if live:
        meta = meta._replace(created_at=None, updated_at=None)  # (a file's time: it moves)
    store_converted(db, meta, events, report, file, live=live)
    return meta.session_id, mark


def import_continue(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Continue sessions folder or one session file."""
    path, agent_id, report = import_start(path, agent, SOURCE)
    files = files_under(path, "*.json", report, lambda p: is_transcript_name(p.name),
                        recursive=False)
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no Continue sessions (expected ~/.continue/sessions with <id>.json "
        "files, or one of them)",
        lambda db, file: import_session(db, agent_id, file, report))
