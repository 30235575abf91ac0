"""The sessions a caller may see in one agent database, as search and history both ask it.

``visibility.visible_keys`` is the rule; this module applies it to a database, with a cache,
and decides whether a caller exists at all. Search and history call the same
``visible_sessions``, so they can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Forbidden, StoreError
from .state import StateDir
from .storage import AgentReader, SessionRow
from .visibility import Caller, SessionLink, visible_keys


def resolve_caller(state: StateDir, caller: Caller) -> None:
    """A caller session must exist; otherwise the caller is forbidden. (An incognito caller
    may search: it never finds incognito sessions, its own included; docs/visibility.md.)"""
    if caller.is_operator:
        return
    agent = caller.agent_id or ""
    if agent in state.agents():
        try:
            with state.open(agent) as db:
                if db.session(caller.key or "") is not None:
                    return
        except StoreError:
            pass  # an unreadable database holds no caller we could check
    raise Forbidden(f"session {caller.key} does not exist or may not search")


@dataclass(frozen=True)
class VisibleSessions:
    visible: dict[str, SessionRow]  # key -> session: every session the caller may see
    searchable: dict[int, SessionRow]  # pk -> session: visible and searchable (indexed, clean)
    pending: bool  # a visible session awaits reconciliation
    all_pks: frozenset[int]  # every session of the database


_cache: dict[tuple[str, Caller], tuple[int, VisibleSessions]] = {}
_CACHE_MAX = 64


def visible_sessions(db: AgentReader, caller: Caller) -> VisibleSessions:
    """The sessions of one database a caller may see, cached until they change.

    The cache is keyed by the database's ``visibility_rev``, which the storage moves in the
    same transaction as any change of sessions, links or index states.
    """
    rev = db.visibility_rev()
    slot = (db.location, caller)
    cached = _cache.get(slot)
    if cached is not None and cached[0] == rev:
        return cached[1]
    sessions = db.sessions()
    links = [SessionLink(s.key, s.spawned_by, s.parent_key) for s in sessions]
    allowed = visible_keys(caller, db.agent_id, links)
    visible = {s.key: s for s in sessions if s.key in allowed}
    searchable = {s.pk: s for s in visible.values() if s.searchable}
    pending = any(s.pending for s in visible.values())
    answer = VisibleSessions(visible, searchable, pending, frozenset(s.pk for s in sessions))
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[slot] = (rev, answer)
    return answer
