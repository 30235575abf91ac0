"""``conversations_search``: which conversation was that? A search answered one row per
session: a conversation matches when each word or phrase of the query occurs somewhere in it
(core/convmatch.py: matching and ranking), with its best hit (where it opens), how many of its
messages hold a word, each word's hits, and what a list shows of the session (title, last
activity, source). Grouping happens inside the query, before the limit, so one session with
many hits takes one slot; visibility, filters and redaction are ``sessions_search``'s own
(the same request, the same code path). ``sessions_search`` keeps its message-level answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from .catalog import SessionSummary, label_cut_marker, resume_of, summary_of
from .convmatch import Found, WordHits, match_conversations, rank_key
from .redact import redact
from .search import (
    RESULTS_MAX_BYTES,
    Scopes,
    SearchRequest,
    SearchResponse,
    SearchResult,
    check_request,
    result_of,
    search_databases,
    search_rows,
)
from .state import StateDir
from .storage import AgentReader
from .visibility import Caller


@dataclass(frozen=True)
class ConversationHit:
    """One conversation of a grouped answer: its best hit, and its matching messages."""

    result: SearchResult
    session: SessionSummary
    words: tuple[WordHits, ...] = ()  # each word's hits (conversation matching)

    @property
    def hits(self) -> int:
        return self.result.hits

    def as_json(self) -> dict[str, Any]:
        best = self.result.as_json()
        del best["sessionKey"], best["sessionId"], best["agent"], best["source"], best["host"]  # said above
        del best["archived"]
        return {
            "sessionKey": redact(self.session.key),
            "sessionId": self.session.session_id,
            "agent": self.session.agent,
            "title": self.session.display_title or None,
            "source": self.session.source,
            "messages": self.session.messages,
            "lastActivity": self.session.last_activity,
            "hits": self.hits,
            "resume": resume_of(self.session).command,
            "words": [w.as_json() for w in self.words],
            "best": best,
            "host": self.session.host or None,
            "archived": self.session.archived,
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
    spread: bool = True,
) -> GroupedResponse:
    """The conversations matching ``request``, best first (``request.limit`` of them), each
    with its best hit, its hits and each word's. The answer stays under the same 32 KiB as a
    message-level one. ``spread=False``: a conversation matches only where one message holds
    every word (the message-level answer grouped; the retrieval benchmark's baseline)."""
    if not spread:
        response, candidates = search_rows(state, request, caller, on_pending, grouped=True)
        conversations = [
            ConversationHit(result, summary_of(agent, session))
            for result, (_row, _score, session, agent, _hits) in zip(response.results, candidates)
        ]
        return _capped(GroupedResponse(response, conversations))
    parsed = check_request(request)
    response = SearchResponse()
    found: list[Found] = []

    def match_in(db: AgentReader, scopes: Scopes) -> bool:
        return match_conversations(db, request, parsed, scopes, response, found)

    more = search_databases(state, request, caller, on_pending, response, match_in)
    if request.order == "recent":
        found.sort(key=lambda f: (-f.row.ts, f.session.key, f.row.entry_id))
    else:
        found.sort(key=lambda f: (*rank_key(f.together, f.score, f.edge), f.session.key))
    response.truncated = more or len(found) > request.limit
    conversations = []
    for f in found[: request.limit]:
        result = result_of(f.row, f.score, f.session, f.agent, parsed, f.hits)
        response.results.append(result)
        conversations.append(ConversationHit(result, summary_of(f.agent, f.session), f.words))
    return _capped(GroupedResponse(response, conversations))


def _capped(grouped: GroupedResponse) -> GroupedResponse:
    """Each conversation within its share, then the lowest ranked dropped until the answer
    fits in RESULTS_MAX_BYTES."""
    grouped.conversations[:] = [_within_share(hit) for hit in grouped.conversations]
    conversations, response = grouped.conversations, grouped.response
    while conversations and _size(grouped) > RESULTS_MAX_BYTES:
        conversations.pop()
        response.results.pop()
        response.truncated = True
    return grouped


# One conversation's share of the answer: a conversation over it has its title cut, so one
# conversation never takes the room of the others (the cap below drops the lowest ranked).
ITEM_MAX_BYTES = RESULTS_MAX_BYTES // 8
_SHARE_TITLE_CHARS = 100


def _within_share(hit: ConversationHit) -> ConversationHit:
    if _json_bytes(hit.as_json()) <= ITEM_MAX_BYTES:
        return hit
    title = hit.session.display_title
    if len(title) <= _SHARE_TITLE_CHARS:
        return hit
    cut = title[:_SHARE_TITLE_CHARS] + label_cut_marker(len(title) - _SHARE_TITLE_CHARS)
    return replace(hit, session=hit.session._replace(label=cut))


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _size(grouped: GroupedResponse) -> int:
    return _json_bytes([c.as_json() for c in grouped.conversations])
