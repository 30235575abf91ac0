"""Searching what agents did (issue 26, SPEC 18): the tool-call index (core/tool_index.py).

``tools_search``: the request in ``sessions_search``'s order, through its pieces: validate
(``search.check_request``: the same query language), resolve the caller and the sessions it
may see (``visible_within``: the same visibility), match inside the tool index with the
filters (``match_tools``: the same planner, work budget and statistics), rank
(``rank.Scorer``), excerpt the redacted text, cap. Words are optional when a filter (a tool,
failed calls, a session) is given: then the newest calls passing it, no full-text index.

``tool_calls``: what an agent (or one session) did in a time window, newest first, with
status and duration: the row table only.

A session filter naming a session the caller may not see, or none at all (a typo), gets
history's answer (``FORBIDDEN``, the same for both), not an empty list that would read as
"that session made no calls".

Both answer an agent caller only if ``config.toml`` grants it (``may_search_tools``); a
caller without the grant gets exactly the answer of a search that matches nothing.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, NamedTuple

from .catalog import source_kind
from .errors import Forbidden, ValidationError
from .excerpt import make_excerpt
from .keys import normalize_key
from .query import ParsedQuery
from .rank import Scorer
from .redact import redact
from .search import (
    EXCERPT_CHARS,
    TIES_MAX,
    SearchRequest,
    SearchResponse,
    agents_to_search,
    check_request,
    over_agents,
    rank_window,
    visible_within,
)
from .state import StateDir
from .storage import AgentReader, MatchFilters, StoredTool
from .textseg import desegment
from .tool_index import shown
from .tool_pairs import arguments_preview, head_and_tail
from .visibility import Caller, may_search_tools
from .visible_sessions import FORBIDDEN, resolved, visible_by_key

ARGUMENTS_CHARS = 300  # of a hit's arguments, on one line
RESULT_CHARS = 300  # of a listed call's result, on one line
CALLS_LIMIT_DEFAULT = 50
CALLS_LIMIT_MAX = 1000


class ToolSearchRequest(NamedTuple):
    """A tool search: a message search's request (its words, limit, order, agent, session,
    time range, host) and the tool filters."""

    search: SearchRequest
    tool: str | None = None  # exact name, ignoring ASCII case
    failed: bool = False

    def filters(self) -> MatchFilters:
        return MatchFilters(None, self.search.since_ms, self.search.until_ms, self.tool,
                            self.failed)


class ToolHit(NamedTuple):
    """One tool call found. Ids are redacted; the key stays as stored (``SearchResult``)."""

    session_key: str
    session_id: str
    agent: str
    message_id: str  # the assistant message making the call: open the conversation there
    call_id: str | None
    tool: str
    arguments: str  # redacted, on one line, bounded
    status: str  # ok | failed | none (no result yet)
    duration_ms: int | None
    timestamp: int
    excerpt: str  # the matching text (the call or its result); a listing: the result's ends
    score: float
    highlights: tuple[tuple[int, int], ...] = ()
    result_id: str | None = None
    source: str = "openclaw"
    host: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionKey": redact(self.session_key), "sessionId": self.session_id,
            "agent": self.agent, "messageId": self.message_id, "callId": self.call_id,
            "tool": self.tool, "arguments": self.arguments, "status": self.status,
            "durationMs": self.duration_ms, "timestamp": self.timestamp,
            "excerpt": self.excerpt, "score": self.score, "resultId": self.result_id,
            "source": self.source, "host": self.host or None,
        }


class ToolSearchResponse(SearchResponse):
    """A ``SearchResponse`` whose results are ``ToolHit``s."""

    __slots__ = ()


# A matched or listed row, its score, its agent and its database's session rows.
_Found = tuple[StoredTool, float, str, Any]


def tools_search(state: StateDir, request: ToolSearchRequest, caller: Caller,
                 on_pending: Callable[[str], None] | None = None) -> ToolSearchResponse:
    """Search the tool calls ``caller`` may see (module docstring)."""
    parsed = _check(request)
    state.require()
    response = ToolSearchResponse()
    if not may_search_tools(caller):
        return response  # the answer of a search matching nothing: no error, no hint
    search = request.search
    found: list[_Found] = []
    seen: list[str] = []
    with resolved(state, caller) as who:
        more = over_agents(
            state, who, agents_to_search(state, search, caller), response, on_pending,
            lambda db: _search_agent(db, request, parsed, caller, response, found, seen))
    _require_session(search, seen, response)
    found.sort(key=lambda f: _order(f, search.order, parsed is None))
    more = more or len(found) > search.limit
    del found[search.limit:]
    response.results = [_hit(row, score, agent, session, parsed)
                        for row, score, agent, session in found]
    response.truncated = more
    return response


def _check(request: ToolSearchRequest) -> ParsedQuery | None:
    """The words as a query (None: none, a listing), or one sentence."""
    search = request.search
    if request.tool is not None and not request.tool.strip():
        raise ValidationError("--tool needs a tool name")
    if search.role is not None:
        raise ValidationError("a tool search has no role filter: tool calls are the agent's")
    if search.query.strip():
        return check_request(search)
    check_request(search._replace(query="x"))  # every other field, checked the same way
    if request.tool is None and not request.failed and search.session_key is None:
        raise ValidationError("give words to search for, or a filter (--tool, --failed, "
                              "--session) to list the newest calls passing it")
    return None


def _require_session(search: SearchRequest, seen: list[str], response: SearchResponse
                     ) -> None:
    """The answer to a session filter that no searched database showed the caller (module
    docstring); a database that could not be read is not that: its warning is the answer."""
    if search.session_key and not seen and not response.unreadable:
        raise Forbidden(FORBIDDEN)


def _note_session(db: AgentReader, search: SearchRequest, caller: Caller,
                  seen: list[str]) -> None:
    if search.session_key and visible_by_key(db, caller, normalize_key(search.session_key),
                                             search.host) is not None:
        seen.append(db.agent_id)


def _search_agent(db: AgentReader, request: ToolSearchRequest, parsed: ParsedQuery | None,
                  caller: Caller, response: SearchResponse, found: list[_Found],
                  seen: list[str]) -> bool:
    search = request.search
    visible, within = visible_within(db, search, caller, response)
    _note_session(db, search, caller, seen)
    scope = visible.scope if within is None else within
    if parsed is None:  # a listing: the newest calls passing the filters
        rows, more = _newest_calls(db, scope, request.filters(), search.limit)
        scored = [(row, 0.0) for row in rows]
    else:
        matches = db.match_tools(parsed, visible.scope, window=rank_window(parsed),
                                 limit=search.limit + 1, order=search.order,
                                 filters=request.filters(), within=within)
        if matches.windowed:
            response.ranked_window = rank_window(parsed)
        if matches.searched_since is not None:
            response.searched_since = max(response.searched_since or 0, matches.searched_since)
        if not matches.rows:
            return False
        rows = matches.rows
        if search.order == "recent" and len(rows) > search.limit:  # the edge's ties, all
            edge = min(row.ts for row in rows)
            ties = db.match_tools(parsed, visible.scope, window=rank_window(parsed),
                                  limit=TIES_MAX, order="recent", within=within,
                                  filters=request.filters()._replace(since_ms=edge, until_ms=edge))
            rows = [row for row in rows if row.ts > edge] + list(ties.rows)
        scores = Scorer(parsed, matches.stats).scores([row.body for row in rows])
        # recent: every row kept (the newest limit + 1 and the edge's ties), ordered by _order
        best = list(zip(rows, scores)) if search.order == "recent" else heapq.nsmallest(
            search.limit + 1, zip(rows, scores), key=lambda c: (-c[1], -c[0].rowid, c[0].entry_id))
        stored = {row.rowid: row for row in db.tools_by_rowid([row.rowid for row, _ in best])}
        scored = [(stored[row.rowid], score) for row, score in best if row.rowid in stored]
        more = len(matches.rows) > search.limit or matches.windowed
    sessions = db.sessions_by_pk({row.session_pk for row, _ in scored})
    found.extend((row, score, db.agent_id, sessions[row.session_pk]) for row, score in scored
                 if row.session_pk in sessions)
    return more


def _newest_calls(db: AgentReader, scope: Any, filters: MatchFilters, limit: int
                  ) -> tuple[list[StoredTool], bool]:
    """The newest ``limit`` calls passing ``filters`` (and every call of the oldest
    millisecond taken: the limit may cut through them in rowid order, which differs between
    backends; ``_order`` orders them), and whether more passed."""
    rows = db.tool_calls(scope, filters, limit + 1)
    if len(rows) <= limit:
        return rows, False
    edge = min(row.ts for row in rows)
    ties = db.tool_calls(scope, filters._replace(since_ms=edge, until_ms=edge), TIES_MAX)
    return [row for row in rows if row.ts > edge] + ties, True


def _order(found: _Found, order: str, listing: bool) -> tuple:
    """Best score first (then newest), or newest first for ``recent`` and a listing; ties
    by session key, message id and block, the same total order on every backend."""
    row, score, _agent, session = found
    if order == "recent" or listing:
        return (-row.ts, session.key, row.entry_id, row.block)
    return (-score, -row.ts, session.key, row.entry_id, row.block)


def _hit(row: StoredTool, score: float, agent: str, session: Any,
         parsed: ParsedQuery | None) -> ToolHit:
    text = desegment(row.body)
    parts = shown(text)
    if parsed is None:
        excerpt, highlights = head_and_tail(parts.result, RESULT_CHARS), ()
    else:
        cut = make_excerpt(text, parsed, EXCERPT_CHARS)
        excerpt, highlights = cut.text, cut.highlights
    return ToolHit(
        session_key=session.key, session_id=redact(session.session_id), agent=agent,
        message_id=redact(row.entry_id), call_id=redact(row.call_id) if row.call_id else None,
        tool=parts.tool, arguments=arguments_preview(parts.arguments, ARGUMENTS_CHARS),
        status=row.status, duration_ms=row.duration_ms, timestamp=row.ts, excerpt=excerpt,
        score=round(score, 6), highlights=highlights,
        result_id=redact(row.result_entry_id) if row.result_entry_id else None,
        source=source_kind(session.source), host=session.host,
    )


def tool_calls(state: StateDir, caller: Caller, agent: str | None = None,
               session_key: str | None = None, since_ms: int | None = None,
               until_ms: int | None = None, tool: str | None = None, failed: bool = False,
               limit: int = CALLS_LIMIT_DEFAULT) -> ToolSearchResponse:
    """What an agent (or one session) did: its tool calls across sessions in a time window,
    newest first, with status and duration (``backscroll calls``)."""
    from .checks import validate_limit

    validate_limit(limit, CALLS_LIMIT_MAX)
    search = SearchRequest("", limit=min(limit, CALLS_LIMIT_MAX), agent=agent,
                           session_key=session_key, since_ms=since_ms, until_ms=until_ms,
                           order="recent")
    request = ToolSearchRequest(search, tool, failed)
    if tool is not None and not tool.strip():
        raise ValidationError("--tool needs a tool name")
    check_request(search._replace(query="x", limit=min(limit, 25)))
    state.require()
    response = ToolSearchResponse()
    if not may_search_tools(caller):
        return response
    found: list[_Found] = []
    seen: list[str] = []

    def list_agent(db: AgentReader) -> bool:
        visible, within = visible_within(db, search, caller, response)
        _note_session(db, search, caller, seen)
        rows, more = _newest_calls(db, visible.scope if within is None else within,
                                   request.filters(), limit)
        sessions = db.sessions_by_pk({row.session_pk for row in rows})
        found.extend((row, 0.0, db.agent_id, sessions[row.session_pk]) for row in rows
                     if row.session_pk in sessions)
        return more

    with resolved(state, caller) as who:
        more = over_agents(state, who, agents_to_search(state, search, caller), response,
                           None, list_agent)
    _require_session(search, seen, response)
    found.sort(key=lambda f: _order(f, "recent", True))
    response.truncated = more or len(found) > limit
    response.results = [_hit(row, 0.0, agent_id, session, None)
                        for row, _score, agent_id, session in found[:limit]]
    return response
