"""The sessions of a state dir, for pickers and listings (the browser's "view as")."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import BackscrollError
from .keys import is_incognito
from .redact import redact
from .state import StateDir


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


def list_sessions(state: StateDir) -> list[SessionSummary]:
    """Every session of every readable agent, newest activity first."""
    found = []
    for agent_id in state.agents():
        try:
            with state.open(agent_id) as db:
                sessions = db.sessions()
        except BackscrollError:
            continue
        found.extend(
            SessionSummary(
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
            for s in sessions
        )
    found.sort(key=lambda s: s.updated_at, reverse=True)
    return found
