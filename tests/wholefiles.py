"""Helpers of the whole-file importers' tests (Cline, Roo Code, Continue, Aider)."""

from __future__ import annotations

import json
from typing import Any

from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR


def search(state: StateDir, query: str, source: str | None = None) -> list[str]:
    """The session keys of the hits for ``query``, once each (after indexing what is pending)."""
    reconcile_all(state)
    response = sessions_search(state, SearchRequest(query=query, limit=25, source=source),
                               OPERATOR)
    assert not response.indexing
    return sorted({r.session_key for r in response.results})


def history_json(state: StateDir, key: str, tools: bool) -> str:
    """The session's history as the tool answers it (with or without tools), as JSON text."""
    request = HistoryRequest(key, include_tools=tools, limit=1000, max_bytes=10**8,
                             field_max_chars=10**6)
    messages = sessions_history(state, request, OPERATOR).messages
    return json.dumps(messages, ensure_ascii=False, default=str)


def events_of(state: StateDir, agent: str, key: str) -> list[dict[str, Any]]:
    with state.open(agent) as db:
        session = db.session(key)
        assert session is not None, key
        return [e for _, e in db.events(session.pk)]


def session_of(state: StateDir, agent: str, key: str) -> Any:
    with state.open(agent) as db:
        session = db.session(key)
        assert session is not None, key
        return session
