"""A session caller whose answer is its own spawned tree reads only the sessions linked under
its own (visible.py, ``within_own_tree``): on both backends, for random forests with cycles,
links in capitals (SQLite), keys of another agent filed here, incognito and dirty sessions,
its view is the view computed from every session."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core import visible
from backscroll.core.keys import is_incognito
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import Caller, Policy, within_own_tree

from .events import leaf, msg

pytestmark = pytest.mark.backends

KINDS = ["subagent:s", "subagent:s", "group:g", "dashboard:incognito-", "subagent:incognito-"]
POLICIES = [Policy("self"), Policy("tree"), Policy("agent"), Policy("all"),
            Policy("tree", sandboxed=True), Policy("agent", sandboxed=True),
            Policy("tree", sandboxed=True, sandbox_visibility="all")]


@st.composite
def forests(draw):
    """Sessions of agent ``a``'s database: (key, spawned_by, parent_key, dirty), in the order
    they are created (a link may name a session created later: cycles, late spawners)."""
    count = draw(st.integers(1, 12))
    keys = ["agent:a:main"] + [
        f"agent:{draw(st.sampled_from('aab'))}:{draw(st.sampled_from(KINDS))}{n}"
        for n in range(1, count)
    ]
    out = []
    for key in keys:
        def link():
            if not draw(st.booleans()):
                return None
            return draw(st.sampled_from(keys + ["agent:a:subagent:gone"]))

        out.append((key, link(), link(), draw(st.booleans())))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(forest=forests(), picks=st.lists(st.integers(0, 100), min_size=1, max_size=4))
def test_the_tree_read_sees_what_every_session_gives(fresh_state, backend, forest, picks
                                                    ) -> None:
    state = fresh_state()
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
    callers = [key for key, *_ in forest if not is_incognito(key)] + ["agent:a:subagent:gone"]
    with state.open("a") as db, db.snapshot():
        for pick in picks:
            caller = Caller(callers[pick % len(callers)], POLICIES[pick % len(POLICIES)])
            visible._cache.clear()
            fast = visible._view(db, caller)
            with patch.object(visible, "within_own_tree", lambda *_: False):
                full = visible._view(db, caller)
            assert fast == full, (caller, within_own_tree(caller, "a"))


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
