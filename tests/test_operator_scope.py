"""The operator's searchable sessions as "every session but these" (storage.EverySessionBut):
taken when few sessions are left out and many are in, so a search's start reads no session
numbers; every answer must be the one given with the sessions read as numbers."""

from __future__ import annotations

import json
from unittest.mock import patch

import pytest

from backscroll.core import visible_sessions as visible
from backscroll.core.query import parse_query
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import EverySessionBut, MatchFilters, SessionMeta, SessionScope
from backscroll.core.storage.sqlite import matching
from backscroll.core.visibility import OPERATOR

from .events import leaf, msg

pytestmark = pytest.mark.backends

SESSIONS = 60  # more than EverySessionBut.FEW


def build(state: StateDir) -> None:
    """SESSIONS sessions of agent ``a``, two of them dirty (waiting for reconciliation), more
    incognito ones than ``FEW`` (the operator never sees them; they hold no rows) and a key
    filed under another agent."""
    keys = [f"agent:a:subagent:s{n}" for n in range(SESSIONS)]
    keys += [f"agent:a:dashboard:incognito-{n}" for n in range(EverySessionBut.FEW + 2)]
    keys += ["agent:b:filed-here"]
    with state.open("a", write=True) as db:
        for n, key in enumerate(keys):
            words = "tern heron" if n % 3 else "tern"
            db.append(SessionMeta(key), json.dumps(msg(f"m{n}", None, "user", f"{words} {n}",
                                                       ms=1000 + n)))
            if n in (7, 40):  # a rewind after indexing: the session waits for reconciliation
                db.append(SessionMeta(key), json.dumps(leaf(f"l{n}", None)))


def read_as_numbers():
    """The operator's view with every session's number read (the form before this one)."""
    visible._cache.clear()
    return patch.object(EverySessionBut, "naming_is_cheap", classmethod(lambda cls, h, n: False))


def test_the_operator_names_every_session_but_a_few_and_sees_the_same(state: StateDir) -> None:
    build(state)
    with state.open("a") as db, db.snapshot():
        visible._cache.clear()
        fast = visible.visible_sessions(db, OPERATOR)
        with read_as_numbers():
            full = visible.visible_sessions(db, OPERATOR)
        every = db.session_pks()
        assert isinstance(fast.scope.pks, EverySessionBut)
        assert isinstance(full.scope.pks, frozenset)
        assert visible.listed(db, fast.scope.pks) == full.scope.pks
        assert len(fast.scope.pks) == len(full.scope.pks) == SESSIONS - 2
        assert fast.scope.hidden == full.scope.hidden and len(fast.scope.hidden) == 3
        assert [pk in fast.scope.pks for pk in every] == [pk in full.scope.pks for pk in every]
        assert (fast.pending, fast.reconcile) == (full.pending, full.reconcile) == (True, True)
        parsed = parse_query("heron")
        for window, limit, order in ((5, 3, "best"), (100, 100, "best"), (5, 4, "recent")):
            assert (db.match(parsed, fast.scope, window, limit, order) ==
                    db.match(parsed, full.scope, window, limit, order))
        keep = set(every[::5])
        narrowed = fast.narrowed(db, keep)
        assert narrowed == full.narrowed(db, keep)
        assert (db.match(parsed, fast.scope, 5, 10, within=narrowed) ==
                db.match(parsed, full.scope, 5, 10, within=narrowed))
        assert (db.tool_calls(fast.scope, MatchFilters(), 10) ==
                db.tool_calls(full.scope, MatchFilters(), 10))


def test_searches_answer_the_same_either_way(state: StateDir) -> None:
    build(state)
    requests = [SearchRequest("heron", limit=25), SearchRequest("tern", limit=5, order="recent"),
                SearchRequest("heron", session_key="agent:a:subagent:s4"),
                SearchRequest("tern", source="openclaw", limit=20)]

    def answers() -> list[list[tuple[str, str, str, float]]]:
        visible._cache.clear()
        return [[(r.session_key, r.message_id, r.excerpt, r.score)
                 for r in sessions_search(state, request, OPERATOR).results]
                for request in requests]

    fast = answers()
    with read_as_numbers():
        full = answers()
    assert fast == full
    assert [len(a) for a in fast] == [25, 5, 1, 20]


def test_every_session_but_answers_what_a_planner_asks() -> None:
    every = EverySessionBut(frozenset({3, 9}), 100)
    assert len(every) == 98 and every and 4 in every and 3 not in every
    assert every & {1, 3, 9, 50} == {1, 50} == {1, 3, 9, 50} & every
    assert every == EverySessionBut(frozenset({9, 3}), 100) != frozenset(range(1, 101))
    with pytest.raises(TypeError):
        sorted(every)
    assert every.resolve(range(1, 101)) == frozenset(range(1, 101)) - {3, 9}


@pytest.mark.parametrize("hidden", [0, 1, EverySessionBut.FEW])
def test_the_planner_names_the_few_hidden(hidden: int) -> None:
    """Wherever the form is taken, SQLite's planner names the hidden sessions (it never lists
    the set); PostgreSQL's and both tool readers pick the smaller side the same way."""
    few = frozenset(range(hidden))
    size = EverySessionBut.FEW + 1
    assert EverySessionBut.naming_is_cheap(few, size)
    assert not EverySessionBut.naming_is_cheap(few, size - 1)
    assert not EverySessionBut.naming_is_cheap(frozenset(range(EverySessionBut.FEW + 1)), 10**6)
    excluded = few | frozenset(range(1000, 1100))  # incognito ones too
    scope = SessionScope(EverySessionBut(excluded, size + len(excluded)), few)
    assert len(scope.pks) == size
    assert matching.plan_for(scope, lambda: (1, 1), 5).kind == "everything"
    assert len(scope.hidden) < len(scope.pks)
