"""The sessions of a state dir, for pickers and listings (the browser's "view as", the MCP
server's ``sessions_list``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import BackscrollError
from .keys import check_agent_id, is_incognito
from .redact import redact
from .state import StateDir
from .storage import SessionRow
from .visibility import Caller, may_see_agent
from .visible import resolve_caller, visible_sessions


@dataclass(frozen=True)
class SessionSummary:
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

    def as_json(self) -> dict[str, Any]:
        """For programs (the MCP server's ``sessions_list``); a label is text, so redacted."""
        return {
            "sessionKey": self.key,
            "sessionId": self.session_id,
            "agent": self.agent,
            "label": redact(self.label) if self.label else None,
            "spawnedBy": self.spawned_by,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "indexing": not self.searchable,
        }


def _summary(agent_id: str, s: SessionRow) -> SessionSummary:
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
    )


def list_sessions(state: StateDir) -> list[SessionSummary]:
    """Every session of every readable agent, newest activity first."""
    found = []
    for agent_id in state.agents():
        try:
            with state.open(agent_id) as db:
                sessions = db.sessions()
        except BackscrollError:
            continue
        found.extend(_summary(agent_id, s) for s in sessions)
    found.sort(key=lambda s: s.updated_at, reverse=True)
    return found


def visible_session_list(
    state: StateDir, caller: Caller, agent: str | None = None, since_ms: int | None = None
) -> list[SessionSummary]:
    """The sessions ``caller`` may see (the rule search and history apply), newest activity
    first; optionally of one agent, or active since ``since_ms``."""
    wanted = check_agent_id(agent) if agent is not None else None
    state.require()
    resolve_caller(state, caller)
    found = []
    for agent_id in state.agents():
        if not may_see_agent(caller, agent_id) or wanted not in (None, agent_id):
            continue
        try:
            with state.open(agent_id) as db, db.snapshot():
                visible = visible_sessions(db, caller)
                sessions = [s for s in db.sessions() if visible.sees(s.pk)]
        except BackscrollError:
            continue  # as in search: an unreadable database hides nothing else
        found.extend(
            _summary(agent_id, s)
            for s in sessions
            if since_ms is None or s.updated_at >= since_ms
        )
    found.sort(key=lambda s: (s.updated_at, s.key), reverse=True)
    return found
