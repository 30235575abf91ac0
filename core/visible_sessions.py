"""The sessions a caller may see in one agent database, as search and history both ask it.

``visibility.visible_keys`` is the rule; this module applies it to a database, with a cache,
and decides whether a caller exists at all. Search and history call the same
``visible_sessions``, so they can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from .errors import Forbidden, ValidationError
from .keys import agent_of, is_incognito, normalize_key
from .state import StateDir
from .storage import AgentReader, EverySessionBut, SessionFilter, SessionRow, SessionScope
from .visibility import Caller, SessionLink, may_see_agent, visible_keys, within_own_tree

# The one answer for a session that does not exist and one the caller may not see (SPEC 4).
FORBIDDEN = "session not found or not visible to this caller"


def caller_host(db: AgentReader, caller: Caller) -> str:
    """The host a caller's session is on: the one it gave, else this machine's."""
    return caller.host or db.host


class Resolved:
    """A request's caller, checked once: ``open(agent)`` gives an agent's database for the
    request, the caller's own being the one the check opened (kept open until the request
    ends) and any other opened anew. One request opens the caller's database once (and so
    holds at most two readers at a time: the caller's and the agent being read)."""

    def __init__(self, state: StateDir, own: AgentReader | None = None,
                 own_agent: str | None = None) -> None:
        self.state = state
        self._own = own
        self._own_agent = own_agent

    @contextmanager
    def open(self, agent_id: str) -> Iterator[AgentReader]:
        if self._own is not None and agent_id == self._own_agent:
            yield self._own  # closed by ``resolved`` when the request ends
            return
        with self.state.open(agent_id) as db:
            yield db


@contextmanager
def resolved(state: StateDir, caller: Caller) -> Iterator[Resolved]:
    """Resolve ``caller`` for one request. A caller session must exist on the caller's host
    (``caller_host``: the session of the same key on another host is another session);
    otherwise the caller is forbidden. (An incognito caller may search: it never finds
    incognito sessions, its own included; docs/visibility.md.) When its agent's database
    cannot be read, that is the answer (a StoreError naming the file): the caller is not told
    it does not exist, and still sees nothing. The database the check opened serves the rest
    of the request (``Resolved.open``), whether or not the request reads that agent."""
    if caller.is_operator:
        yield Resolved(state)
        return
    agent = caller.agent_id or ""
    if agent in state.agents():
        with state.open(agent) as db:
            if db.session(caller.key or "", caller_host(db, caller)) is not None:
                yield Resolved(state, db, agent)
                return
    where = f" on host {caller.host}" if caller.host else ""
    raise Forbidden(f"session {caller.key}{where} does not exist or may not search")


def resolve_caller(state: StateDir, caller: Caller) -> None:
    """Check ``caller`` exists (``resolved``), for who only needs the check."""
    with resolved(state, caller):
        pass


def find_session(db: AgentReader, caller: Caller, key: str, host: str | None = None
                 ) -> SessionRow | None:
    """The session a caller means by a key: of ``host`` when given; a session caller's on its
    own host; for the operator this machine's, else the only host's. Keys held by several
    other hosts are bad input naming them (only the operator, who sees every host, is told)."""
    if host is not None or not caller.is_operator:
        return db.session(key, host or caller_host(db, caller))
    hosts = db.key_hosts(key)
    if len(hosts) > 1 and db.host not in hosts:
        raise ValidationError(f"{key} is a session on several hosts ({', '.join(hosts)}): "
                              "name its host (--host NAME; MCP: host)")
    return db.session(key)


def visible_by_key(db: AgentReader, caller: Caller, key: str, host: str | None = None
                   ) -> SessionRow | None:
    """The session a caller means by a key (``find_session``) if it may see it; None for a
    session that does not exist and one it may not see alike (SPEC 4). History, a search's
    session filter and the tool calls' all ask it here."""
    session = find_session(db, caller, key, host)
    if session is None or not visible_sessions(db, caller).sees(session.pk):
        return None
    return session


@contextmanager
def open_visible(state: StateDir, caller: Caller, session_key: str, host: str | None = None
                 ) -> Iterator[tuple[AgentReader, SessionRow]]:
    """One session the caller may see and its database, inside one read snapshot; for a
    session that does not exist and one it may not see alike, ``Forbidden(FORBIDDEN)``.
    History, a conversation's windows and a session lookup all open a session through here.
    ``host``: the host of the session meant (``find_session``)."""
    key = normalize_key(session_key)
    state.require()
    with resolved(state, caller) as who:
        agent = agent_of(key)
        if agent not in state.agents() or not may_see_agent(caller, agent):
            raise Forbidden(FORBIDDEN)
        with who.open(agent) as db, db.snapshot():
            session = visible_by_key(db, caller, key, host)
            if session is None:
                raise Forbidden(FORBIDDEN)
            yield db, session


def listed(db: AgentReader, pks: frozenset[int] | EverySessionBut) -> frozenset[int]:
    """Sessions as numbers: an ``EverySessionBut`` (the operator's) read from ``db``."""
    return pks.resolve(db.session_pks()) if isinstance(pks, EverySessionBut) else pks


class VisibleSessions(NamedTuple):
    pks: frozenset[int]  # the sessions the caller may see (or, with ``all_but``, may not)
    all_but: bool
    # pks of visible sessions that are searchable (indexed, clean); the operator's, when few
    # are not, as every session but those (``listed`` gives the numbers)
    searchable: frozenset[int] | EverySessionBut
    pending: bool  # a visible session awaits reconciliation
    reconcile: bool  # any session of the database does (visible or not)
    scope: SessionScope  # the searchable sessions, as the storage plans a match over them

    def sees(self, pk: int) -> bool:
        return (pk not in self.pks) if self.all_but else (pk in self.pks)

    def as_filter(self) -> SessionFilter:
        """The visible sessions (not only the searchable ones) as a storage filter."""
        return SessionFilter(sorted(self.pks), exclude=self.all_but)

    def narrowed(self, db: AgentReader, keep: set[int]) -> SessionScope:
        """The scope of the searchable sessions in ``keep`` only (a session filter)."""
        pks = self.scope.pks & keep
        hidden = self.scope.hidden | (listed(db, self.scope.pks) - pks)
        return SessionScope(pks, hidden)


_cache: dict[tuple[str, str, Caller], tuple[int, VisibleSessions]] = {}
_CACHE_MAX = 64


def visible_sessions(db: AgentReader, caller: Caller) -> VisibleSessions:
    """The sessions of one database a caller may see, cached until they change.

    The cache is keyed by the database's ``visibility_rev``, which the storage moves in the
    same transaction as any change of sessions, links or index states.
    """
    rev = db.visibility_rev()
    slot = (db.location, db.host, caller)  # a caller without a host is on the asking machine
    cached = _cache.get(slot)
    if cached is not None and cached[0] == rev:
        return cached[1]
    answer = _operator_view(db) if caller.is_operator else _view(db, caller)
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[slot] = (rev, answer)
    return answer


def _view(db: AgentReader, caller: Caller) -> VisibleSessions:
    """A session caller's view. The rule is given every session, or, when it can only answer
    with the caller's own tree, the sessions linked under the caller's own (their number,
    not the database's, is then the cost) and the others are read as numbers only."""
    below = caller.key if within_own_tree(caller, db.agent_id) else None
    # Only the sessions of the caller's host: the same key on another host is another session
    # of another machine, never its own, its tree's or its agent's (docs/visibility.md).
    sessions = db.session_briefs(below=below, host=caller_host(db, caller))
    allowed = visible_keys(
        caller, db.agent_id, [SessionLink(s.key, s.spawned_by, s.parent_key) for s in sessions]
    )
    visible = frozenset(s.pk for s in sessions if s.key in allowed)
    searchable = frozenset(s.pk for s in sessions if s.pk in visible and s.searchable)
    others = frozenset(db.session_pks()) - {s.pk for s in sessions} if below is None else ()
    if below is None and not others:  # every session of the database was read
        hidden = frozenset(s.pk for s in sessions
                           if s.pk not in searchable and not is_incognito(s.key))
        reconcile = any(not s.searchable for s in sessions)
    else:  # the sessions not read: their numbers, less those that never hold rows
        incognito = {s.pk for s in db.session_briefs(odd_only=True) if is_incognito(s.key)}
        hidden = frozenset(db.session_pks()) - searchable - incognito
        reconcile = bool(db.pending_pks())
    # The caller's own session anchors its tree: the sessions whose rows name it.
    anchor = next((s.pk for s in sessions if s.key == caller.key), None)
    covered = frozenset(db.sessions_naming(anchor)) if anchor is not None else frozenset()
    return VisibleSessions(
        visible,
        False,
        searchable,
        any(not s.searchable for s in sessions if s.pk in visible),
        reconcile,
        SessionScope(searchable, hidden, anchor, covered),
    )


def _operator_view(db: AgentReader) -> VisibleSessions:
    """The operator's view without reading every session: the rule hides from the operator
    only incognito sessions and keys filed under another agent, so only sessions whose key
    could be one of those are read and put to ``visible_keys``."""
    odd = db.session_briefs(odd_only=True)
    allowed = visible_keys(
        Caller(None), db.agent_id, [SessionLink(s.key, s.spawned_by, s.parent_key) for s in odd]
    )
    unseen = frozenset(s.pk for s in odd if s.key not in allowed)
    pending = db.pending_pks()
    # The sessions that may hold rows the operator may not search (incognito ones never do).
    hidden = frozenset(s.pk for s in odd if s.pk in unseen and not is_incognito(s.key))
    hidden |= pending - unseen
    # Every session but the unseen and pending ones, without reading every session's number
    # when the planners name the hidden side anyway (EverySessionBut).
    excluded, total = pending | unseen, db.session_count()
    if EverySessionBut.naming_is_cheap(hidden, total - len(excluded)):
        searchable: frozenset[int] | EverySessionBut = EverySessionBut(excluded, total)
    else:
        searchable = frozenset(db.session_pks()) - excluded
    return VisibleSessions(
        unseen,
        True,
        searchable,
        bool(pending - unseen),
        bool(pending),
        SessionScope(searchable, hidden),
    )
