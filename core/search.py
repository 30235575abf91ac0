"""``sessions_search``: where was X said? (SPEC 5)

The request in order: validate, resolve the caller and the sessions it may see, match inside
the index with the visibility filter (before the limit), rank, excerpt the redacted text, cap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import StoreError, ValidationError
from .excerpt import make_excerpt
from .keys import agent_of, check_agent_id, normalize_key
from .query import ParsedQuery, parse_query
from .state import StateDir
from .storage import AgentReader, MatchRow, SchemaBehind, SessionFilter, SessionRow
from .textseg import desegment
from .visibility import Caller, may_see_agent
from .visible import resolve_caller, visible_sessions

LIMIT_DEFAULT = 10
LIMIT_MAX = 25
EXCERPT_CHARS = 300
RESULTS_MAX_BYTES = 32 * 1024
# A term matching more than this many visible messages is ranked by bm25 over its newest
# RANK_WINDOW matches only (the answer says so with "rankedNewest"); see docs/architecture.md.
RANK_WINDOW = 5000
INDEXING_WARNING = (
    "Some sessions are still being indexed; results may be incomplete. Retry once indexing "
    "finishes."
)


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int = LIMIT_DEFAULT
    match: str = "exact"  # exact | prefix
    order: str = "best"  # best | recent
    agent: str | None = None
    session_key: str | None = None
    role: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None


@dataclass(frozen=True)
class SearchResult:
    session_key: str
    session_id: str
    message_id: str
    timestamp: int
    role: str
    excerpt: str
    score: float
    highlights: tuple[tuple[int, int], ...] = ()
    agent: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionKey": self.session_key,
            "sessionId": self.session_id,
            "messageId": self.message_id,
            "timestamp": self.timestamp,
            "role": self.role,
            "excerpt": self.excerpt,
            "score": self.score,
        }


@dataclass
class SearchResponse:
    results: list[SearchResult] = field(default_factory=list)
    indexing: bool = False
    truncated: bool = False
    pending_agents: list[str] = field(default_factory=list)  # agents with sessions to reindex
    ranked_window: bool = False  # bm25 ranked only the newest RANK_WINDOW matches
    unreadable: list[str] = field(default_factory=list)  # agent databases that failed

    def as_json(self, with_highlights: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [r.as_json() for r in self.results]}
        if with_highlights:
            for item, result in zip(out["results"], self.results):
                item["highlights"] = [list(span) for span in result.highlights]
        warnings = [INDEXING_WARNING] if self.indexing else []
        warnings += [f"Skipped an unreadable database: {e}" for e in self.unreadable]
        if self.indexing:
            out["indexing"] = True
        if warnings:
            out["warning"] = " ".join(warnings)
        if self.truncated:
            out["truncated"] = True
        if self.ranked_window:
            out["rankedNewest"] = RANK_WINDOW
        return out


def validate_limit(value: Any, maximum: int = LIMIT_MAX) -> int:
    """A limit from a person or a program: a whole number from 1 to ``maximum``."""
    try:
        limit = int(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        limit = None
    if limit is None or not 1 <= limit <= maximum or str(value).strip() != str(limit):
        raise ValidationError(f"limit must be a whole number from 1 to {maximum}, not {value!r}")
    return limit


def check_request(request: SearchRequest) -> ParsedQuery:
    if request.order not in ("best", "recent"):
        raise ValidationError(f"order must be best or recent, not {request.order!r}")
    if request.role not in (None, "user", "assistant"):
        raise ValidationError(f"role must be user or assistant, not {request.role!r}")
    validate_limit(request.limit)
    if request.agent is not None:
        check_agent_id(request.agent)
    if request.session_key is not None:
        normalize_key(request.session_key)
    if request.since_ms is not None and request.until_ms is not None:
        if request.since_ms > request.until_ms:
            raise ValidationError("the time range is empty: --since is after --until")
    return parse_query(request.query, request.match)


def _session_filter(searchable: dict[int, SessionRow], all_pks: frozenset[int]) -> SessionFilter:
    """Name the smaller side: the operator's filter is "all but the few dirty ones"."""
    hidden = all_pks - searchable.keys()
    if len(hidden) < len(searchable):
        return SessionFilter(sorted(hidden), exclude=True)
    return SessionFilter(sorted(searchable))


def sessions_search(
    state: StateDir,
    request: SearchRequest,
    caller: Caller,
    on_pending: Callable[[str], None] | None = None,
) -> SearchResponse:
    """Answer a search. ``on_pending(agent_id)`` is called for agents needing reconciliation."""
    parsed = check_request(request)
    state.require()
    resolve_caller(state, caller)
    agents = _agents_to_search(state, request, caller)
    response = SearchResponse()
    candidates: list[tuple[MatchRow, SessionRow, str]] = []
    more_matched = False
    for agent_id in agents:
        try:
            with state.open(agent_id) as db, db.snapshot():
                more_matched |= _search_agent(db, request, parsed, caller, response, candidates)
        except SchemaBehind as err:  # reconciliation (a writer) upgrades it
            response.unreadable.append(str(err))
            response.pending_agents.append(agent_id)
            response.indexing = True
        except StoreError as err:
            response.unreadable.append(str(err))  # the other agents still answer
            continue
        if agent_id in response.pending_agents and on_pending is not None:
            on_pending(agent_id)
    candidates.sort(key=lambda c: _rank_key(c[0], request.order))
    more_matched = more_matched or len(candidates) > request.limit
    for row, session, agent_id in candidates[: request.limit]:
        excerpt = make_excerpt(desegment(row.body), parsed, EXCERPT_CHARS)
        response.results.append(
            SearchResult(
                session_key=session.key,
                session_id=session.session_id,
                message_id=row.entry_id,
                timestamp=row.ts,
                role=row.role,
                excerpt=excerpt.text,
                score=round(-row.bm25, 6),
                highlights=excerpt.highlights,
                agent=agent_id,
            )
        )
    capped = cap_results(response.results, RESULTS_MAX_BYTES)
    response.truncated = more_matched or len(capped) < len(response.results)
    response.results = capped
    return response


def _search_agent(
    db: AgentReader,
    request: SearchRequest,
    parsed: ParsedQuery,
    caller: Caller,
    response: SearchResponse,
    candidates: list[tuple[MatchRow, SessionRow, str]],
) -> bool:
    """Match in one agent database (inside one read snapshot, so the visible set and the
    rows agree); add candidates; return whether more than the limit matched."""
    visible = visible_sessions(db, caller)
    searchable = visible.searchable
    if request.session_key:
        key = normalize_key(request.session_key)
        searchable = {pk: s for pk, s in searchable.items() if s.key == key}
    if db.has_pending_sessions():
        response.pending_agents.append(db.agent_id)
    response.indexing = response.indexing or visible.pending
    if not searchable:
        return False
    rows, windowed = db.match(
        parsed,
        _session_filter(searchable, visible.all_pks),
        limit=request.limit + 1,
        order=request.order,
        role=request.role,
        since_ms=request.since_ms,
        until_ms=request.until_ms,
        rank_window=RANK_WINDOW,
    )
    response.ranked_window = response.ranked_window or windowed
    candidates.extend(
        (row, searchable[row.session_pk], db.agent_id) for row in rows if row.session_pk in searchable
    )
    return len(rows) > request.limit


def _rank_key(row: MatchRow, order: str) -> tuple:
    """bm25 (best first), then newest, then message id; or newest first for ``recent``."""
    if order == "recent":
        return (-row.rowid, row.entry_id)
    return (row.bm25, -row.rowid, row.entry_id)


def _agents_to_search(state: StateDir, request: SearchRequest, caller: Caller) -> list[str]:
    agents = [a for a in state.agents() if may_see_agent(caller, a)]
    if request.agent:
        agents = [a for a in agents if a == check_agent_id(request.agent)]
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
