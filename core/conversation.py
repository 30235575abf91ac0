"""One conversation read in windows, for a browser: an outline of its messages (cheap to hold
for 50,000 of them), any window of them rendered as ``sessions_history`` renders messages
(redacted, each text field cut, tool traffic included), and the hits of a query inside it.

A long conversation is read once per change: the active branch's messages (their sequence
numbers, ids, roles and times) are stored beside the log (``branch_messages``: rebuilds write
them, appends that extend the branch add to them) and found by parsing the log only while
they lag behind it; what is read is cached per session and transcript length. A window then
reads and redacts only its own events.
Every call checks visibility with the rule search and history use (``visible_sessions``), so
a conversation stops opening the moment its caller may no longer see it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .errors import ValidationError
from .history import FIELD_MAX_CHARS, Cleaner, HistoryResponse, render_message
from .query import part_query
from .redact import redact
from .search import SearchRequest, check_request
from .state import StateDir
from .storage import AgentReader, MatchFilters, SessionRow
from .transcript import INDEXED_ROLES, TOOL_ROLES, active_branch, shown_messages
from .visibility import Caller
from .visible_sessions import open_visible

WINDOW_MAX = 1000  # messages one window may hold
HITS_MAX = 100_000


@dataclass(frozen=True)
class Outline:
    """Every message a conversation shows, oldest first: ``ids`` (redacted, as a search
    answers with them), ``roles`` and ``timestamps`` (epoch ms). Tool results are messages
    too; ``said`` numbers the user and assistant messages (1, 2, ...; 0 for tool traffic), so
    "message 120 of 317" counts what a person said and what the agent answered."""

    session_key: str
    session_id: str
    ids: tuple[str, ...]
    roles: tuple[str, ...]
    timestamps: tuple[int, ...]
    said: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def said_total(self) -> int:
        return max(self.said, default=0)

    @cached_property
    def _positions(self) -> dict[str, int]:
        positions: dict[str, int] = {}
        for n, message_id in enumerate(self.ids):
            positions.setdefault(message_id, n)
        return positions

    def index_of(self, message_id: str | None) -> int | None:
        """The position of a message (the first, should an id repeat)."""
        return None if message_id is None else self._positions.get(message_id)


@dataclass(frozen=True)
class _Branch:
    seqs: tuple[int, ...]
    stored_ids: tuple[Any, ...]
    outline: Outline
    created_at: int


_cache: OrderedDict[tuple[str, int, int, str | None], _Branch] = OrderedDict()
_CACHE_MAX = 4
_locks: dict[tuple[str, int, int, str | None], threading.Lock] = {}  # outlines being read
_locks_lock = threading.Lock()


def conversation_outline(state: StateDir, caller: Caller, session_key: str,
                         host: str | None = None) -> Outline:
    """The outline of a conversation the caller may see (else ``Forbidden``, as history);
    ``host``: the session's host, as every function here takes it (``visible.find_session``)."""
    with open_visible(state, caller, session_key, host) as (db, session):
        return _branch(db, session).outline


def conversation_window(
    state: StateDir, caller: Caller, session_key: str, start: int, stop: int,
    field_max_chars: int = FIELD_MAX_CHARS, host: str | None = None, cut_note: str = "…",
) -> list[dict[str, Any]]:
    """Messages ``start`` to ``stop`` (outline positions, at most ``WINDOW_MAX``) rendered as
    ``sessions_history`` renders them, tool traffic included; a text cut at
    ``field_max_chars`` ends with ``cut_note`` (``HistoryRequest.cut_note``). A message with
    nothing left to show (an empty turn) is an empty list of blocks."""
    with open_visible(state, caller, session_key, host) as (db, session):
        branch = _branch(db, session)
        start = max(0, start)
        stop = min(len(branch.seqs), stop, start + WINDOW_MAX)
        wanted = branch.seqs[start:stop]
        events = db.events_at(session.pk, list(wanted))
    messages = []
    for offset, seq in enumerate(wanted):
        event = events.get(seq, {})
        rendered = render_message(event, Cleaner(field_max_chars, cut_note), True,
                                  branch.created_at) if event else None
        outline = branch.outline
        index = start + offset
        messages.append(rendered or {"id": outline.ids[index], "role": outline.roles[index],
                                     "timestamp": outline.timestamps[index], "content": []})
    return messages


def failed_tool_results(state: StateDir, caller: Caller, session_key: str,
                        host: str | None = None) -> list[int]:
    """The outline positions of the tool results the agent's runtime marked as errors
    (``isError``), oldest first: what "next failed call" walks. Reads the tool messages of
    the branch only."""
    with open_visible(state, caller, session_key, host) as (db, session):
        branch = _branch(db, session)
        tools = [n for n, role in enumerate(branch.outline.roles) if role in TOOL_ROLES]
        failed: list[int] = []
        for chunk in range(0, len(tools), WINDOW_MAX):
            part = tools[chunk:chunk + WINDOW_MAX]
            events = db.events_at(session.pk, [branch.seqs[n] for n in part])
            failed += [n for n in part
                       if ((events.get(branch.seqs[n]) or {}).get("message") or {}).get("isError")]
    return failed


def window_around(
    state: StateDir, caller: Caller, session_key: str, message_id: str | None, count: int,
    host: str | None = None, cut_note: str = "…",
) -> HistoryResponse:
    """``count`` messages around ``message_id`` (None: the newest ones), as a history answer
    (a preview pane shows it): read from the outline, so a long conversation costs a window,
    not the whole branch. An id not on the active branch is a ``ValidationError``, as for
    ``sessions_history``."""
    with open_visible(state, caller, session_key, host) as (db, session):
        outline = _branch(db, session).outline
        host = session.host
    total = len(outline)
    focus = outline.index_of(message_id) if message_id is not None else max(total - 1, 0)
    if focus is None:
        raise ValidationError(
            f"message {message_id!r} is not on the active branch of {outline.session_key} "
            "(it may be on an abandoned branch, a tool message, or unknown)"
        )
    start = max(0, min(focus - count // 2, total - count))
    messages = conversation_window(state, caller, session_key, start, start + count, host=host,
                                   cut_note=cut_note)
    return HistoryResponse(outline.session_key, outline.session_id, messages,
                           truncated=len(messages) < total, has_more=start > 0,
                           has_newer=start + len(messages) < total, host=host)


def session_hits(state: StateDir, caller: Caller, request: SearchRequest,
                 any_word: bool = False) -> list[str]:
    """The messages of ``request.session_key``'s conversation that match ``request`` (its
    query, match mode, role and time range), as outline ids, oldest first: what "hit 3 of
    17" counts. ``any_word``: the messages holding any word or phrase of the query (a
    conversation found by conversation matching, core/convmatch.py; what its ``hits``
    counts), else those holding every one. Only indexed messages can be hits: none while the
    session awaits indexing."""
    if request.session_key is None:
        raise ValueError("session_hits needs a session key")
    parsed = check_request(request)
    filters = MatchFilters(request.role, request.since_ms, request.until_ms)
    queries = ([part_query(parsed, k) for k in range(len(parsed.phrases))] if any_word
               else [parsed])
    with open_visible(state, caller, request.session_key, request.host) as (db, session):
        stored = {sid for query in queries
                  for sid in db.session_hit_ids(query, session.pk, HITS_MAX, filters)}
        branch = _branch(db, session)
    position = {sid: n for n, sid in enumerate(branch.stored_ids) if isinstance(sid, str)}
    found = sorted(position[sid] for sid in stored if sid in position)
    return [branch.outline.ids[n] for n in found[:HITS_MAX]]


def _branch(db: AgentReader, session: SessionRow) -> _Branch:
    """The active branch's messages, read once per transcript length and leaf: a preview and
    the conversation opened right after it (two threads) wait for one reading, not two."""
    slot = (db.location, session.pk, session.last_seq, session.leaf_id)
    with _reading(slot):
        cached = _cache.get(slot)
        if cached is not None:
            _cache.move_to_end(slot)
            return cached
        return _read_branch(db, session, slot)


@contextmanager
def _reading(slot: tuple[str, int, int, str | None]) -> Iterator[None]:
    with _locks_lock:
        lock = _locks.setdefault(slot, threading.Lock())
    try:
        with lock:
            yield
    finally:
        with _locks_lock:
            if not lock.locked():
                _locks.pop(slot, None)


def _read_branch(db: AgentReader, session: SessionRow, slot: tuple[str, int, int, str | None]
                 ) -> _Branch:
    """The branch's messages as stored (rebuilds and extending appends keep them), or, when
    the log has moved on in a way they do not follow yet (a rewind not rebuilt, an import),
    computed from the log by the tree rules."""
    shown = db.branch_messages(session.pk, session.last_seq)
    if shown is None:
        shown = shown_messages(active_branch(db.tree_events(session.pk)).path)
    seqs, stored_ids, roles, times, said = [], [], [], [], []
    count = 0
    for seq, entry_id, role, at in shown:
        seqs.append(seq)
        stored_ids.append(entry_id)
        roles.append(role)
        times.append(session.created_at if at is None else at)
        count += role in INDEXED_ROLES
        said.append(count if role in INDEXED_ROLES else 0)
    ids = _redacted_ids(stored_ids)
    outline = Outline(session.key, redact(session.session_id), ids, tuple(roles),
                      tuple(times), tuple(said))
    branch = _Branch(tuple(seqs), tuple(stored_ids), outline, session.created_at)
    _cache[slot] = branch
    while len(_cache) > _CACHE_MAX:
        _cache.popitem(last=False)
    return branch


def _redacted_ids(stored: list[Any]) -> tuple[str, ...]:
    """Each id redacted (an id can hold a token), in one pass over the ids joined by newlines
    (tens of thousands of calls would cost a second); if a rule ever matched across a
    newline, the ids are redacted one by one instead."""
    texts = [sid if isinstance(sid, str) else "" for sid in stored]
    if any("\n" in text for text in texts):
        return tuple(redact(text) for text in texts)
    joined = redact("\n".join(texts)).split("\n")
    if len(joined) != len(texts):
        return tuple(redact(text) for text in texts)
    return tuple(joined)
