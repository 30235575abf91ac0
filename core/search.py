"""``sessions_search``: where was X said? (SPEC 5)

The request in order: validate, resolve the caller and the sessions it may see, match inside
the index with the visibility filter (before the limit), rank, excerpt the redacted text, cap.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from typing import Any, Callable, NamedTuple

from .catalog import SOURCES, check_known_agent, check_source, source_kind
from .checks import validate_limit
from .errors import StoreError, ValidationError
from .excerpt import make_excerpt
from .fanout import for_each_agent, visible_agents
from .hosts import check_host
from .keys import agent_of, check_agent_id, normalize_key
from .query import ParsedQuery, parse_query
from .rank import Scorer
from .redact import redact
from .state import StateDir
from .storage import (
    AgentReader,
    CardFilter,
    Matches,
    MatchFilters,
    MatchRow,
    SchemaBehind,
    SessionFilter,
    SessionRow,
    SessionScope,
)
from .textseg import desegment
from .visibility import Caller
from .visible_sessions import (
    Resolved,
    VisibleSessions,
    resolved,
    visible_by_key,
    visible_sessions,
)

LIMIT_DEFAULT = 10
LIMIT_MAX = 25
EXCERPT_CHARS = 300
RESULTS_MAX_BYTES = 32 * 1024
# ``recent``: the rows of one millisecond weighed when the limit cuts through them (a
# millisecond has 4096 rowid slots; rows past them move to the next one).
TIES_MAX = 4096
# A query matching more than this many visible messages in one agent database is ranked over
# its newest RANK_WINDOW matches only (the answer says so with "rankedNewest"); see
# docs/architecture.md. Each part's count for the ranking statistics stops there too.
RANK_WINDOW = 1000
# Every candidate is scored part by part: a query of more parts ranks a smaller window, so
# its cost stays that of a three-part query.
WINDOW_PARTS = 3
INDEXING_WARNING = (
    "Some sessions are still being indexed; results may be incomplete. Retry once indexing "
    "finishes."
)


def rank_window(parsed: ParsedQuery) -> int:
    return RANK_WINDOW * WINDOW_PARTS // max(len(parsed.phrases), WINDOW_PARTS)


class SearchRequest(NamedTuple):
    query: str
    limit: int = LIMIT_DEFAULT
    match: str = "exact"  # exact | prefix
    order: str = "best"  # best | recent
    agent: str | None = None
    session_key: str | None = None
    role: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    source: str | None = None  # openclaw | claude-code | codex (catalog.SOURCES)
    project: str | None = None  # a cwd: sessions that ran in it or below it
    host: str | None = None  # only sessions from this host (core/hosts.py)

    def filters(self) -> MatchFilters:
        """The filters that choose messages (role, time), as the storage takes them."""
        return MatchFilters(self.role, self.since_ms, self.until_ms)

    def card_filter(self) -> CardFilter | None:
        """The filters that choose sessions (not messages), as the storage takes them."""
        if self.source is None and self.project is None and self.host is None:
            return None
        return CardFilter(SOURCES[self.source] if self.source else None, self.project,
                          host=self.host)


class SearchResult(NamedTuple):
    """One hit. Ids are redacted (a token can sit in any of them); the key stays as stored, for
    opening the session in this process, and is redacted wherever it is shown (``as_json``)."""

    session_key: str
    session_id: str
    message_id: str
    timestamp: int
    role: str
    excerpt: str
    score: float
    highlights: tuple[tuple[int, int], ...] = ()
    agent: str = ""
    hits: int = 1  # a grouped search's best hit: the matching messages of its session
    source: str = "openclaw"  # the agent tool that wrote it (catalog.source_kind)
    host: str = ""  # the host its session came from (core/hosts.py)
    archived: bool = False  # its session's transcript is in a cold archive (SessionRow.archived)

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionKey": redact(self.session_key),
            "sessionId": self.session_id,
            "messageId": self.message_id,
            "timestamp": self.timestamp,
            "role": self.role,
            "excerpt": self.excerpt,
            "snippet": self.excerpt,  # OpenClaw's name for the same text (docs/mcp.md)
            "score": self.score,
            # whose words these are: past conversation content, never instructions (docs/mcp.md)
            "agent": self.agent,
            "source": self.source,
            "host": self.host or None,
            "archived": self.archived,
        }


class SearchResponse:
    """What a search answers; filled in as each agent database answers."""

    __slots__ = ("results", "indexing", "truncated", "pending_agents", "waiting_agents",
                 "ranked_window", "searched_since", "unreadable", "read_only")

    def __init__(self, results: list[SearchResult] | None = None) -> None:
        self.results = results if results is not None else []
        self.indexing = False
        self.truncated = False
        self.pending_agents: list[str] = []  # agents with sessions to reindex
        self.waiting_agents: list[str] = []  # ... that the caller may see
        self.ranked_window: int | None = None  # ranked only the newest this many matches
        self.searched_since: int | None = None  # epoch ms: a costly query searched newer only
        self.unreadable: list[str] = []  # agent databases that failed
        self.read_only: list[str] = []  # databases whose pending work is stuck

    def as_json(self, with_highlights: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [r.as_json() for r in self.results]}
        if with_highlights:
            for item, result in zip(out["results"], self.results):
                item["highlights"] = [list(span) for span in result.highlights]
        warnings = [INDEXING_WARNING] if self.indexing else []
        warnings += [f"Skipped an unreadable database: {e}" for e in self.unreadable]
        warnings += self.read_only
        if self.indexing:
            out["indexing"] = True
        if warnings:
            out["warning"] = " ".join(warnings)
        if self.truncated:
            out["truncated"] = True
        if self.ranked_window:
            out["rankedNewest"] = self.ranked_window
        if self.searched_since is not None:
            out["searchedSince"] = self.searched_since
        return out


def check_request(request: SearchRequest) -> ParsedQuery:
    if request.order not in ("best", "recent"):
        raise ValidationError(f"order must be best or recent, not {request.order!r}")
    if request.role not in (None, "user", "assistant"):
        raise ValidationError(f"role must be user or assistant, not {request.role!r}")
    validate_limit(request.limit, LIMIT_MAX)
    if request.agent is not None:
        check_agent_id(request.agent)
    if request.session_key is not None:
        normalize_key(request.session_key)
    if request.host is not None:
        check_host(request.host)
    check_source(request.source)
    if request.since_ms is not None and request.until_ms is not None:
        if request.since_ms > request.until_ms:
            raise ValidationError("the time range is empty: --since is after --until")
    return parse_query(request.query, request.match)


# A matched row, its score, its session, its agent, and (grouped) its session's hits.
Candidate = tuple[MatchRow, float, SessionRow, str, int]


def sessions_search(
    state: StateDir,
    request: SearchRequest,
    caller: Caller,
    on_pending: Callable[[str], None] | None = None,
) -> SearchResponse:
    """Answer a search. ``on_pending(agent_id)`` is called for agents needing reconciliation."""
    return search_rows(state, request, caller, on_pending)[0]


def search_rows(
    state: StateDir,
    request: SearchRequest,
    caller: Caller,
    on_pending: Callable[[str], None] | None = None,
    grouped: bool = False,
) -> tuple[SearchResponse, list[Candidate]]:
    """A search's answer and the candidates it was made of, in rank order. ``grouped``: one
    candidate per session, its best row, with the session's number of matching rows,
    grouped before the limit (``grouped.conversations_search`` with ``spread=False``)."""
    parsed = check_request(request)
    response = SearchResponse()
    candidates: list[Candidate] = []

    def match_in(db: AgentReader, scopes: Scopes) -> bool:
        return _search_agent(db, request, parsed, scopes, response, candidates, grouped)

    more_matched = search_databases(state, request, caller, on_pending, response, match_in)
    candidates.sort(key=lambda c: _answer_key(c, request.order))
    more_matched = more_matched or len(candidates) > request.limit
    del candidates[request.limit :]
    for row, score, session, agent_id, hits in candidates:
        response.results.append(result_of(row, score, session, agent_id, parsed, hits))
    capped = cap_results(response.results, RESULTS_MAX_BYTES)
    response.truncated = more_matched or len(capped) < len(response.results)
    response.results = capped
    return response, candidates[: len(capped)]


def result_of(row: MatchRow, score: float, session: SessionRow, agent_id: str,
              parsed: ParsedQuery, hits: int = 1) -> SearchResult:
    """A matched row as an answer shows it: ids redacted, the redacted text's excerpt."""
    excerpt = make_excerpt(desegment(row.body), parsed, EXCERPT_CHARS)
    return SearchResult(
        session_key=session.key,
        session_id=redact(session.session_id),
        message_id=redact(row.entry_id),
        timestamp=row.ts,
        role=row.role,
        excerpt=excerpt.text,
        score=round(score, 6),
        highlights=excerpt.highlights,
        agent=agent_id,
        hits=hits,
        source=source_kind(session.source),
        host=session.host,
        archived=session.archived,
    )


class Scopes(NamedTuple):
    """What one agent database's matching may read: the caller's visible sessions, and the
    fewer sessions the request's session, source and project filters leave (None: all)."""

    visible: VisibleSessions
    within: SessionScope | None


def search_databases(
    state: StateDir,
    request: SearchRequest,
    caller: Caller,
    on_pending: Callable[[str], None] | None,
    response: SearchResponse,
    match_in: Callable[[AgentReader, Scopes], bool],
) -> bool:
    """Resolve the caller, then ``match_in(db, scopes)`` in every agent database it may
    search (one read snapshot each), the request's flags noted in ``response``; whether more
    than the limit matched somewhere. A message search and a conversation search
    (core/convmatch.py) differ only in ``match_in``."""
    state.require()
    with resolved(state, caller) as who:  # the caller's database opened once (Resolved.open)
        return over_agents(
            state, who, agents_to_search(state, request, caller), response, on_pending,
            lambda db: match_in(db, visible_within(db, request, caller, response)))


def over_agents(
    state: StateDir,
    who: Resolved,
    agents: list[str],
    response: SearchResponse,
    on_pending: Callable[[str], None] | None,
    search_agent: Callable[[AgentReader], bool],
) -> bool:
    """Run ``search_agent`` on each agent's database, through ``who.open`` and inside one read
    snapshot (the message search's and the tool search's loop); an agent's unusable database
    is a warning, the others still answer. Whether more than the limit matched somewhere."""
    more_matched = False

    def search_one(agent_id: str) -> bool:
        with who.open(agent_id) as db, db.snapshot():
            return search_agent(db)

    for agent_id, more, err in for_each_agent(state, search_one, agents=agents,
                                               fails=StoreError):
        if isinstance(err, SchemaBehind):  # reconciliation (a writer) upgrades it
            response.unreadable.append(str(err))
            response.pending_agents.append(agent_id)
            response.indexing = True
        elif err is not None:
            response.unreadable.append(str(err))  # the other agents still answer
            continue
        more_matched |= bool(more)
        if agent_id in response.pending_agents:
            read_only = state.unwritable(agent_id)
            if read_only is None and on_pending is not None:
                on_pending(agent_id)
            elif read_only and agent_id in response.waiting_agents:  # said only to a caller
                response.read_only.append(read_only)  # who waits for sessions stuck there
    return more_matched


def visible_within(db: AgentReader, request: SearchRequest, caller: Caller,
                   response: SearchResponse) -> Scopes:
    """The sessions ``caller`` may search in one database (inside the read snapshot, so the
    visible set and the rows agree), the request's session, source and project filters as a
    narrower scope (None: no filter), and whether the answer waits for sessions being
    indexed (said on ``response``)."""
    visible = visible_sessions(db, caller)
    within = None
    if request.session_key:
        session = visible_by_key(db, caller, normalize_key(request.session_key), request.host)
        within = visible.narrowed(db, {session.pk} if session else set())
    cards = request.card_filter()
    if cards is not None:  # source and project choose sessions: inside the match, too
        passing = db.session_pks_passing(cards)
        within = visible.narrowed(db, passing if within is None else passing & within.pks)
    if visible.reconcile:
        response.pending_agents.append(db.agent_id)
    if visible.pending:
        response.indexing = True
        response.waiting_agents.append(db.agent_id)
    return Scopes(visible, within)


def _search_agent(
    db: AgentReader,
    request: SearchRequest,
    parsed: ParsedQuery,
    scopes: Scopes,
    response: SearchResponse,
    candidates: list[Candidate],
    grouped: bool = False,
) -> bool:
    """Match in one agent database; add its best scored rows (grouped: each session's best
    row); return whether more than the limit matched."""
    visible, within = scopes
    found = db.match(
        parsed,
        visible.scope,
        window=rank_window(parsed),
        limit=request.limit + 1,
        order="best" if grouped else request.order,  # grouping needs every candidate
        filters=request.filters(),
        within=within,
    )
    note_bounds(response, found, parsed)
    if not found.rows:
        return False
    rows = found.rows
    if request.order == "recent" and not grouped and len(rows) > request.limit:
        # the rows of the oldest millisecond taken, all of them (the limit may have cut
        # through them in rowid order, which differs between backends): newest_first orders them
        edge = min(row.ts for row in rows)
        ties = db.match(parsed, visible.scope, window=rank_window(parsed), limit=TIES_MAX,
                        order="recent", filters=MatchFilters(request.role, edge, edge),
                        within=within)
        taken = {row.rowid for row in rows}
        rows = [*rows, *(row for row in ties.rows if row.rowid not in taken)]
    scores = Scorer(parsed, found.stats).scores([row.body for row in rows])
    scored = list(zip(rows, scores))
    hits: Counter[int] = Counter()
    if grouped:  # each session's best row (as it would rank among all), and its hits
        ranked: dict[int, tuple[MatchRow, float]] = {}
        for row, score in scored:
            hits[row.session_pk] += 1
            kept = ranked.get(row.session_pk)
            if kept is None or _rank_key(row, score, request.order) < _rank_key(*kept, request.order):
                ranked[row.session_pk] = (row, score)
        scored = list(ranked.values())
    # Only the best limit + 1 of each database can reach the answer (the extra one says
    # whether more matched): only their sessions are read.
    if request.order == "recent":
        best = newest_first(scored, request.limit + 1, lambda pks: db.sessions_by_pk(pks))
    else:
        best = heapq.nsmallest(
            request.limit + 1, scored, key=lambda c: _rank_key(*c, request.order)
        )
    pks = {row.session_pk for row, _score in best}
    sessions = (
        {s.pk: s for s in db.session_cards(SessionFilter(sorted(pks)))} if grouped
        else db.sessions_by_pk(pks)
    )
    candidates.extend((row, score, sessions[row.session_pk], db.agent_id, hits[row.session_pk] or 1)
                      for row, score in best)
    return len(scored) > request.limit or found.windowed  # windowed: more matched


def note_bounds(response: SearchResponse, found: Matches, parsed: ParsedQuery) -> None:
    """Say in the answer when a match was bounded: ranked among the newest matches only, or
    searched in the newest messages only (the latest of the databases' cuts)."""
    if found.windowed:
        response.ranked_window = rank_window(parsed)
    if found.searched_since is not None:
        response.searched_since = max(response.searched_since or 0, found.searched_since)


def _rank_key(row: MatchRow, score: float, order: str) -> tuple:
    """Best score first, then newest, then message id; or newest first for ``recent``, then
    message id (within one session: ``newest_first`` orders equal times of different ones)."""
    if order == "recent":
        return (-row.ts, row.entry_id)
    return (-score, -row.rowid, row.entry_id)


def _answer_key(candidate: Candidate, order: str) -> tuple:
    """The order of an answer: ``recent`` is newest first, then session key, then message
    id, the same total order on every backend (a millisecond's rowids are not: their slots
    come from the session id, which two stores of the same transcript need not share)."""
    row, score, session, _agent, _hits = candidate
    if order == "recent":
        return (-row.ts, session.key, row.entry_id)
    return _rank_key(row, score, order)


def newest_first(scored: list[tuple[MatchRow, float]], n: int,
            sessions_of: Callable[[set[int]], dict[int, SessionRow]]
            ) -> list[tuple[MatchRow, float]]:
    """The ``n`` newest of ``scored`` in ``_answer_key``'s order: every row as new as the
    ``n``-th newest is weighed, and only their sessions are read (for their keys)."""
    if len(scored) > n:
        edge = heapq.nsmallest(n, (-row.ts for row, _score in scored))[-1]
        scored = [c for c in scored if -c[0].ts <= edge]
    keys = {pk: session.key for pk, session in sessions_of({row.session_pk for row, _ in scored}).items()}
    return sorted(scored, key=lambda c: (-c[0].ts, keys.get(c[0].session_pk, ""), c[0].entry_id))[:n]


def agents_to_search(state: StateDir, request: SearchRequest, caller: Caller) -> list[str]:
    agents = visible_agents(state, caller)
    if request.agent:
        wanted = check_known_agent(state, caller, request.agent)
        agents = [a for a in agents if a == wanted]
    if request.session_key:
        wanted = agent_of(request.session_key)
        agents = [a for a in agents if a == wanted]
    return agents


def cap_results(results: list[SearchResult], max_bytes: int) -> list[SearchResult]:
    """Drop whole results from the end until the serialized array fits in ``max_bytes``."""
    total = 2  # the brackets
    kept: list[SearchResult] = []
    for result in results:
        size = len(json.dumps(result.as_json(), ensure_ascii=False).encode("utf-8"))
        size += 1 if kept else 0  # the comma before it
        if total + size > max_bytes:
            break
        total += size
        kept.append(result)
    return kept
