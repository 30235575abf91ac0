"""``conversations_search``: which conversation was that? A search answered one row per
session: its best hit (the message ``sessions_search`` would rank first among the session's),
how many of its messages match, and what a list shows of the session (title, last activity,
source). Grouping happens inside the query, before the limit, so one session with many hits
takes one slot; visibility, filters and redaction are ``sessions_search``'s own (the same
request, the same code path). ``sessions_search`` keeps its message-level answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from .catalog import SessionSummary, summary_of
from .redact import redact
from .search import RESULTS_MAX_BYTES, SearchRequest, SearchResponse, SearchResult, search_rows
from .state import StateDir
from .visibility import Caller


@dataclass(frozen=True)
class ConversationHit:
    """One conversation of a grouped answer: its best hit, and its matching messages."""

    result: SearchResult
    session: SessionSummary

    @property
    def hits(self) -> int:
        return self.result.hits

    def as_json(self) -> dict[str, Any]:
        best = self.result.as_json()
        del best["sessionKey"], best["sessionId"], best["host"]  # the conversation's own
        return {
            "sessionKey": redact(self.session.key),
            "sessionId": self.session.session_id,
            "agent": self.session.agent,
            "title": self.session.display_title or None,
            "source": self.session.source,
            "messages": self.session.messages,
            "lastActivity": self.session.last_activity,
            "hits": self.hits,
            "best": best,
            "host": self.session.host or None,
        }


@dataclass
class GroupedResponse:
    """A grouped answer; ``response`` carries the flags (indexing, truncated, warnings) and
    the best hits themselves, ``conversations`` the rows."""

    response: SearchResponse
    conversations: list[ConversationHit] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        out = self.response.as_json()
        del out["results"]
        return {"conversations": [c.as_json() for c in self.conversations], **out}


def conversations_search(
    state: StateDir,
    request: SearchRequest,
    caller: Caller,
    on_pending: Callable[[str], None] | None = None,
) -> GroupedResponse:
    """The sessions whose messages match ``request``, best first (``request.limit`` of them),
    each with its best hit and its number of matching messages. The answer stays under the
    same 32 KiB as a message-level one."""
    response, candidates = search_rows(state, request, caller, on_pending, grouped=True)
    conversations = [
        ConversationHit(result, summary_of(agent, session))
        for result, (_row, _score, session, agent, _hits) in zip(response.results, candidates)
    ]
    grouped = GroupedResponse(response, conversations)
    while conversations and _size(grouped) > RESULTS_MAX_BYTES:
        conversations.pop()
        response.results.pop()
        response.truncated = True
    return grouped


def _size(grouped: GroupedResponse) -> int:
    return len(json.dumps([c.as_json() for c in grouped.conversations],
                          ensure_ascii=False).encode("utf-8"))
