"""The sessions of a state dir, for pickers and listings (the browser's "view as" and its
home list of recent conversations, the MCP server's ``sessions_list``), and the command that
resumes a conversation in the agent tool that wrote it.

What a list shows of a session (title, message count, last activity, cwd) is kept in the
storage when it is written or indexed (``schema.SUMMARY_COLUMNS``): a listing never reads a
transcript. A title is the first user message as the index holds it: redacted.
"""

from __future__ import annotations

import heapq
import re
import shlex
from typing import Any, NamedTuple

from .errors import BackscrollError, Unreachable, ValidationError
from .hosts import check_host
from .keys import check_agent_id, is_incognito
from .redact import redact
from .state import StateDir
from .storage import CardFilter, SessionFilter, SessionRow
from .visibility import Caller, may_see_agent
from .visible import open_visible, resolve_caller, visible_sessions

# Where a session came from, as a person names it, and the ``source`` values stored for it
# (``live``: appended by an agent runtime, OpenClaw's; ``demo``: the demo, in its format).
SOURCES: dict[str, tuple[str, ...]] = {
    "openclaw": ("live", "openclaw", "demo"),
    "claude-code": ("claude-code",),
    "codex": ("codex",),
}
SOURCE_NAMES = {"openclaw": "OpenClaw", "claude-code": "Claude Code", "codex": "Codex"}
LIST_LIMIT_MAX = 1000
# The time OpenClaw's channels write in front of a user message.
_ENVELOPE = re.compile(r"^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?(?: [^\]\n]{1,16})?\]\s*")


def source_kind(stored: str) -> str:
    """``openclaw``, ``claude-code`` or ``codex`` for a stored ``source`` value."""
    return next((kind for kind, values in SOURCES.items() if stored in values), "openclaw")


def check_source(source: str | None) -> str | None:
    if source is not None and source not in SOURCES:
        raise ValidationError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    return source


class SessionSummary(NamedTuple):
    """A session for a picker. The label and session id are redacted; the keys stay as stored
    (they are what a caller is made from) and are redacted wherever they are shown."""

    key: str
    agent: str
    session_id: str
    label: str | None
    spawned_by: str | None
    created_at: int
    updated_at: int
    events: int
    searchable: bool
    incognito: bool
    title: str | None = None  # the first user message (redacted, as indexed), cut
    messages: int = 0  # indexed user and assistant messages of the active branch
    last_activity: int = 0  # epoch ms: the newest message, else the last change
    source: str = "openclaw"  # openclaw | claude-code | codex
    cwd: str | None = None  # the folder a Claude Code or Codex session ran in (redacted)
    host: str = ""  # the host it came from (core/hosts.py); "" stored before hosts were

    @property
    def display_title(self) -> str:
        """What a list names it by: its label, else its first user message (without the
        ``[Mon 2026-11-30 07:42 GMT+2]`` envelope a chat channel puts in front)."""
        return self.label or _ENVELOPE.sub("", self.title or "", count=1)

    def as_json(self) -> dict[str, Any]:
        """For programs (the MCP server's ``sessions_list``): keys are redacted here, as in
        every answer (a key may hold a token); a label is text, so redacted too."""
        return {
            "sessionKey": redact(self.key),
            "sessionId": self.session_id,
            "agent": self.agent,
            "label": redact(self.label) if self.label else None,
            "spawnedBy": redact(self.spawned_by) if self.spawned_by else None,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "indexing": not self.searchable,
            "title": self.title,
            "messages": self.messages,
            "lastActivity": self.last_activity,
            "source": self.source,
            "host": self.host or None,
        }


def summary_of(agent_id: str, s: SessionRow) -> SessionSummary:
    return SessionSummary(
        key=s.key,
        agent=agent_id,
        session_id=redact(s.session_id),
        label=redact(s.label) if s.label else s.label,
        spawned_by=s.spawned_by or s.parent_key,
        created_at=s.created_at,
        updated_at=s.updated_at,
        events=s.last_seq,
        searchable=s.searchable,
        incognito=is_incognito(s.key),
        title=s.title,
        messages=s.messages,
        last_activity=s.last_activity,
        source=source_kind(s.source),
        cwd=redact(s.cwd) if s.cwd else None,
        host=s.host,
    )


def _newest_first(summary: SessionSummary) -> tuple[int, str]:
    return (summary.last_activity, summary.key)


def list_sessions(state: StateDir) -> list[SessionSummary]:
    """Every session of every readable agent, newest activity first."""
    found = []
    for agent_id in state.agents():
        try:
            with state.open(agent_id) as db:
                sessions = db.session_cards(SessionFilter([], exclude=True))
        except Unreachable:
            raise  # the server: every other agent would wait for it the same way
        except BackscrollError:
            continue
        found.extend(summary_of(agent_id, s) for s in sessions)
    found.sort(key=_newest_first, reverse=True)
    return found


def visible_session_list(
    state: StateDir,
    caller: Caller,
    agent: str | None = None,
    since_ms: int | None = None,
    *,
    until_ms: int | None = None,
    source: str | None = None,
    project: str | None = None,
    limit: int | None = None,
    host: str | None = None,
) -> list[SessionSummary]:
    """The sessions ``caller`` may see (the rule search and history apply), newest activity
    first; optionally only of one agent or ``source`` (openclaw, claude-code, codex), in a
    ``project`` (a cwd, or below it), from one ``host``, last active in a time range, the
    first ``limit``. Every filter runs inside the query, before the limit."""
    wanted = check_agent_id(agent) if agent is not None else None
    cards = CardFilter(SOURCES[source] if check_source(source) else None, project, since_ms,
                       until_ms, check_host(host) if host is not None else None)
    if limit is not None and not 1 <= limit <= LIST_LIMIT_MAX:
        raise ValidationError(f"limit must be from 1 to {LIST_LIMIT_MAX}, not {limit}")
    state.require()
    resolve_caller(state, caller)
    per_agent = []
    for agent_id in state.agents():
        if not may_see_agent(caller, agent_id) or wanted not in (None, agent_id):
            continue
        try:
            with state.open(agent_id) as db, db.snapshot():
                visible = visible_sessions(db, caller)
                rows = db.session_cards(visible.as_filter(), cards, limit)
        except Unreachable:
            raise
        except BackscrollError:
            continue  # as in search: an unreadable database hides nothing else
        per_agent.append([summary_of(agent_id, s) for s in rows])
    merged = heapq.merge(*per_agent, key=_newest_first, reverse=True)
    return list(merged)[:limit] if limit is not None else list(merged)


def visible_session(state: StateDir, caller: Caller, session_key: str,
                    host: str | None = None) -> SessionSummary:
    """What a list shows of one session the caller may see (of ``host``); ``Forbidden`` (the
    same sentence as history's) when it may not, or when there is no such session."""
    with open_visible(state, caller, session_key, host) as (db, session):
        [card] = db.session_cards(SessionFilter([session.pk]))
    return summary_of(db.agent_id, card)


def project_list(state: StateDir, caller: Caller) -> list[tuple[str, int]]:
    """The projects (cwds, redacted) of the sessions ``caller`` may see, with how many
    sessions each, most first: the choices of a project filter."""
    state.require()
    resolve_caller(state, caller)
    counts: dict[str, int] = {}
    for agent_id in state.agents():
        if not may_see_agent(caller, agent_id):
            continue
        try:
            with state.open(agent_id) as db, db.snapshot():
                found = db.projects(visible_sessions(db, caller).as_filter())
        except Unreachable:
            raise
        except BackscrollError:
            continue
        for cwd, count in found:
            counts[cwd] = counts.get(cwd, 0) + count
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


class Resume(NamedTuple):
    """How to go back into a conversation: a shell command (``command``) for Claude Code and
    Codex, the session key (``key``) for OpenClaw, whose runtime opens sessions by key."""

    kind: str  # command | key
    text: str


def resume_of(summary: SessionSummary) -> Resume | None:
    """The way back into ``summary``'s conversation; None when it cannot be said (a Claude
    Code or Codex session whose cwd is unknown, a sub-agent's sidechain)."""
    if summary.source == "openclaw":
        return Resume("key", redact(summary.key))
    rest = summary.key.split(":", 2)[2] if summary.key.count(":") >= 2 else ""
    tool = {"claude-code": "claude --resume", "codex": "codex resume"}[summary.source]
    if not summary.cwd or not rest.startswith(f"{summary.source}:") or not summary.session_id:
        return None
    return Resume("command", f"cd {shlex.quote(summary.cwd)} && {tool} {shlex.quote(summary.session_id)}")
