"""A session caller whose answer is its own spawned tree reads only the sessions linked under
its own (visible_sessions.py, ``within_own_tree``): on both backends, for random forests with cycles,
links in capitals (SQLite), keys of another agent filed here, incognito and dirty sessions,
and any caller and policy, its view is the one computed from every session as the rule is
stated: ``visible_keys`` over every session's links, each field from those rows."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from backscroll.core import visible_sessions as visible
from backscroll.core.keys import is_incognito
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta, SessionScope
from backscroll.core.visibility import Caller, Policy, SessionLink, visible_keys, within_own_tree

from .events import leaf, msg
from .older_schema import UNDO

pytestmark = pytest.mark.backends

KINDS = ["subagent:s", "subagent:s", "group:g", "dashboard:incognito-", "subagent:incognito-"]
POLICIES = [Policy("self"), Policy("tree"), Policy("agent"), Policy("all"),
            Policy("tree", sandboxed=True), Policy("agent", sandboxed=True),
            Policy("tree", sandboxed=True, sandbox_visibility="all"),
            Policy("all", a2a_enabled=True)]
OTHERS = ["agent:a:subagent:gone", "agent:b:main"]  # a caller with no session here; another agent


def reference_view(db, caller: Caller) -> visible.VisibleSessions:
    """The view from every session: each field as SessionScope and VisibleSessions define it."""
    sessions = db.session_briefs()
    allowed = visible_keys(caller, db.agent_id,
                           [SessionLink(s.key, s.spawned_by, s.parent_key) for s in sessions])
    seen = frozenset(s.pk for s in sessions if s.key in allowed)
    searchable = frozenset(s.pk for s in sessions if s.pk in seen and s.searchable)
    hidden = frozenset(s.pk for s in sessions if s.pk not in searchable and not is_incognito(s.key))
    anchor = next((s.pk for s in sessions if s.key == caller.key), None)
    covered = frozenset(db.sessions_naming(anchor)) if anchor is not None else frozenset()
    return visible.VisibleSessions(
        seen, False, searchable, any(not s.searchable for s in sessions if s.pk in seen),
        any(not s.searchable for s in sessions), SessionScope(searchable, hidden, anchor, covered))


@st.composite
def forests(draw):
    """Sessions of agent ``a``'s database: (key, spawned_by, parent_key, dirty), in the order
    they are created (a link may name a session created later: cycles, late spawners)."""
    count = draw(st.integers(1, 12))
    keys = ["agent:a:main"] + [
        f"agent:{draw(st.sampled_from('aab'))}:{draw(st.sampled_from(KINDS))}{n}"
        for n in range(1, count)
    ]

    def link():
        return draw(st.sampled_from(keys + OTHERS[:1])) if draw(st.booleans()) else None

    return [(key, link(), link(), draw(st.booleans())) for key in keys]


def build(state: StateDir, backend: str, forest) -> None:
    with state.open("a", write=True) as db:
        for n, (key, spawned_by, parent_key, dirty) in enumerate(forest):
            meta = SessionMeta(key, spawned_by=spawned_by, parent_key=parent_key)
            db.append(meta, json.dumps(msg(f"m{n}", None, "user", f"tern {n}", ms=1000 + n)))
            if dirty:  # a rewind after indexing: the session waits for reconciliation
                db.append(SessionMeta(key), json.dumps(leaf(f"l{n}", None)))
    if backend == "sqlite":  # links in capitals, as no writer stores them (the rule folds them)
        with closing(sqlite3.connect(state.db_path("a"))) as conn, conn:
            conn.execute("UPDATE sessions SET spawned_by = upper(spawned_by) WHERE pk % 2 = 0")
            conn.execute("UPDATE sessions SET parent_key = upper(parent_key) WHERE pk % 3 = 0")


CHAIN = [("agent:a:main", None, None, False),
         ("agent:a:subagent:s1", "agent:a:main", None, False),
         ("agent:a:subagent:s2", None, "agent:a:subagent:s1", True),  # pk 3: its link in capitals
         ("agent:a:subagent:s3", "agent:a:subagent:s1", None, False)]  # pk 4: the same


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(forest=forests(), picks=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)),
                                        min_size=1, max_size=4))
@example(forest=CHAIN, picks=[(1, 1), (1, 0), (1, 4)])  # s1 with tree, self, the clamp
@pytest.mark.slow
def test_the_tree_read_sees_what_every_session_gives(fresh_state, backend, forest, picks) -> None:
    state = fresh_state()
    build(state, backend, forest)
    callers = [key for key, *_ in forest] + OTHERS
    with state.open("a") as db, db.snapshot():
        for who, how in picks:
            caller = Caller(callers[who % len(callers)], POLICIES[how % len(POLICIES)])
            assert visible._view(db, caller) == reference_view(db, caller), (
                caller, within_own_tree(caller, "a"))


@pytest.mark.sqlite_only
def test_a_file_without_the_link_indexes_is_read_through_every_session(state: StateDir) -> None:
    """A file without the link indexes (step 0009, index-only) stays readable: the tree read
    falls back to every session, with the same answer."""
    build(state, "sqlite", CHAIN)
    caller = Caller("agent:a:subagent:s1", Policy("tree"))
    with state.open("a") as db:
        current = (visible._view(db, caller), len(db.session_briefs(below=caller.key)))
    with closing(sqlite3.connect(state.db_path("a"))) as conn:  # lacks the link indexes only
        conn.executescript(UNDO[9] + " DELETE FROM migrations WHERE name = '0009_link_indexes';")
    with state.open("a") as db:
        assert (visible._view(db, caller), len(db.session_briefs(below=caller.key))) == (
            current[0], len(CHAIN))
    assert current[1] == 3  # s1, s2, s3


def test_the_tree_read_is_taken_only_where_the_rule_allows_it() -> None:
    assert within_own_tree(Caller("agent:a:subagent:x", Policy("tree")), "a")
    assert within_own_tree(Caller("agent:a:subagent:x", Policy("self")), "A")
    assert within_own_tree(Caller("agent:a:main", Policy("agent", sandboxed=True)), "a")
    assert not within_own_tree(Caller("agent:a:main", Policy("tree")), "a")  # the whole agent
    assert not within_own_tree(Caller("agent:a:subagent:x", Policy("agent")), "a")
    assert not within_own_tree(Caller("agent:a:subagent:x", Policy("tree")), "b")
    assert not within_own_tree(Caller(None), "a")
    lifted = Policy("agent", sandboxed=True, sandbox_visibility="all")
    assert not within_own_tree(Caller("agent:a:subagent:x", lifted), "a")
