"""The match planner against the straightforward plan (bm25 over every match, then the
session filter): for any set of sessions, any query and any filter, every plan returns
exactly the rows the straightforward plan finds, newest first, and counts what ranking
needs over exactly those sessions."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.indexer import ROWID_SHIFT
from backscroll.core.keys import is_incognito
from backscroll.core.query import parse_query
from backscroll.core.state import StateDir
from backscroll.core.storage import MatchFilters, SessionMeta, SessionScope
from backscroll.core.storage.sqlite import matching
from backscroll.core.verify import verify_state

from .events import BASE_MS, leaf, msg

WORDS = ["tern", "otter", "heron", "ibis", "kite", "wren", "café", "数据"]
WEIGHTS = [30, 20, 12, 8, 5, 3, 4, 4]  # some words in most messages, some in few


def _text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(1, 7)))


def _append(db, key: str, entry: str, parent: str | None, text: str, ms: int, role: str,
            spawned_by: str | None = None) -> None:
    meta = SessionMeta(key, spawned_by=spawned_by, parent_key=spawned_by)
    db.append(meta, json.dumps(msg(entry, parent, role, text, ms=ms)))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> StateDir:
    """One agent: a spawn tree four levels deep, group chats, a child whose spawner was
    created after it (its rows do not name the spawner), a session made dirty after it was
    indexed (stale rows), an incognito session."""
    state = StateDir(Path(tmp_path_factory.mktemp("corpus")) / "state")
    rng = random.Random(5)
    plan = [
        ("agent:a:main", None),
        ("agent:a:subagent:s1", "agent:a:main"),
        ("agent:a:subagent:s2", "agent:a:subagent:s1"),
        ("agent:a:subagent:s3", "agent:a:subagent:s2"),
        ("agent:a:subagent:s4", "agent:a:subagent:s3"),
        ("agent:a:subagent:s5", "agent:a:subagent:s1"),
        ("agent:a:telegram:group:1", None),
        ("agent:a:telegram:group:2", None),
        ("agent:a:subagent:late-child", "agent:a:subagent:late"),
        ("agent:a:subagent:late", "agent:a:main"),
        ("agent:a:subagent:gone-dirty", "agent:a:subagent:s1"),
        ("agent:a:dashboard:incognito-x", "agent:a:main"),
        ("agent:a:subagent:s6", "agent:a:subagent:s5"),
    ]
    clock = 0
    with state.open("a", write=True) as db:
        for n, (key, spawned_by) in enumerate(plan):
            parent = None
            for i in range(rng.randint(2, 9)):
                clock += rng.randint(1, 50)
                entry = f"e{n}-{i}"
                role = rng.choice(["user", "assistant"])
                _append(db, key, entry, parent, _text(rng), clock, role, spawned_by)
                parent = entry
        # A rewind after indexing: the session is dirty, its old rows stay until rebuilt.
        db.append(SessionMeta("agent:a:subagent:gone-dirty"), json.dumps(leaf("lf", "e10-0")))
    return state


def _visible_rows(db, pks: set[int]) -> list[tuple[int, str]]:
    return [(rowid, row.body) for pk in pks for rowid, row in db.index_rows(pk)]


queries = st.builds(
    lambda words, phrase, prefix: (words, phrase, prefix),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    query_parts=queries,
    window=st.integers(1, 12),
    limit=st.integers(1, 6),
    order=st.sampled_from(["best", "recent"]),
    role=st.sampled_from([None, "user", "assistant"]),
    since=st.one_of(st.none(), st.integers(0, 400)),
    max_tags=st.sampled_from([1, 2, 3, 48]),
    chunk_cost=st.sampled_from([0, 10**9]),
    budget=st.sampled_from([0, 20, 10**9]),
)
def test_every_plan_returns_what_the_straightforward_plan_finds(
    corpus: StateDir, data, query_parts, window, limit, order, role, since, max_tags, chunk_cost,
    budget,
) -> None:
    words, phrase, prefix = query_parts
    if prefix and len(words[-1]) > 2:  # the last word as someone typing it
        words = words[:-1] + [words[-1][: data.draw(st.integers(2, len(words[-1])))]]
    text = f'"{" ".join(words)}"' if phrase else " ".join(words)
    query = parse_query(text, "prefix" if prefix else "exact")
    with corpus.open("a") as db, db.snapshot():
        sessions = [s for s in db.session_briefs() if not is_incognito(s.key)]
        searchable = sorted(s.pk for s in sessions if s.searchable)
        pks = set(data.draw(st.sets(st.sampled_from(searchable)), label="visible"))
        anchor = data.draw(st.sampled_from([None] + [s.pk for s in sessions]), label="anchor")
        covered = frozenset(db.sessions_naming(anchor) if anchor is not None else ())
        hidden = frozenset(s.pk for s in sessions) - pks
        scope = SessionScope(frozenset(pks), hidden, anchor, covered)
        filters = MatchFilters(role, BASE_MS + since if since is not None else None)
        with patch.object(matching, "MAX_TAGS", max_tags), \
                patch.object(matching, "CHUNK_COST", chunk_cost), \
                patch.object(matching, "WORK_BUDGET", budget):
            found = db.match(query, scope, window, limit, order, filters)
        oracle = [row for row, _score in db.match_all_then_filter(query, pks, 10_000, "recent",
                                                                     filters)]
        wanted = limit if order == "recent" else window
        if found.searched_since is not None:
            # A costly query searched only the newest messages, and found fewer than wanted
            # there: exactly those, and it says where it stopped.
            assert budget < 10**9
            searched = [r for r in oracle if r.rowid >> ROWID_SHIFT >= found.searched_since]
            assert found.rows == searched[:wanted] and len(searched) <= wanted
            return
        assert found.rows == oracle[:wanted]
        assert found.windowed == (order == "best" and len(oracle) > window)
        if not found.rows:
            return
        visible = _visible_rows(db, pks)
        assert found.stats.rows == len(visible)
        assert found.stats.chars == sum(len(body) for _rowid, body in visible)
        if budget < 10**9:
            return  # counts of a cut search are scaled from the stretch searched
        for i, part in enumerate(query.parts):
            holding = db.match_all_then_filter(query._replace(fts=part), pks, 10_000, "recent")
            count = found.stats.parts[i]
            if len(holding) <= window:
                assert (count.found, count.newer) == (len(holding), None)
            else:  # scaled from the newest matches: rows newer, as if spread evenly in time
                cut = holding[window - 1][0].rowid
                newest = max(rowid for rowid, _ in visible)
                oldest = min(rowid for rowid, _ in visible)
                share = (newest - cut + 1) / (newest - oldest + 1)
                assert count.found == window
                assert count.newer == (len(visible) if cut <= oldest
                                       else max(1, round(len(visible) * share)))


def test_the_corpus_exercises_every_plan(corpus: StateDir) -> None:
    """The layout the property test relies on: trees that differ from the links, stale
    rows, and each plan chosen for some set of sessions."""
    with corpus.open("a") as db:
        sessions = {s.key: s for s in db.session_briefs()}
        dirty = db.session("agent:a:subagent:gone-dirty")
        s1 = sessions["agent:a:subagent:s1"].pk
        covered = frozenset(db.sessions_naming(s1))
        naming_late = db.sessions_naming(sessions["agent:a:subagent:late"].pk)
    trees = dict(sqlite3.connect(corpus.db_path("a")).execute(
        "SELECT session_pk, tree FROM index_state"))
    # indexed before its spawner existed, so its rows do not name it
    assert sessions["agent:a:subagent:late-child"].pk not in naming_late
    assert dirty is not None and dirty.state == "dirty"
    s4 = sessions["agent:a:subagent:s4"]
    assert trees[s4.pk].split() == [str(sessions[k].pk) for k in (
        "agent:a:subagent:s4", "agent:a:subagent:s3", "agent:a:subagent:s2",
        "agent:a:subagent:s1", "agent:a:main")]
    assert verify_state(corpus).ok  # the dirty session is skipped, every other one agrees

    pks = sorted(s.pk for s in sessions.values())

    def kind(scope: SessionScope, max_tags: int = 48, chunk_cost: int = 0) -> str:
        with patch.object(matching, "MAX_TAGS", max_tags), \
                patch.object(matching, "CHUNK_COST", chunk_cost):
            return matching.plan_for(scope, lambda: (10, 100), 5).kind

    assert kind(SessionScope(frozenset(pks[1:]), frozenset(pks[:1]))) == "everything"
    assert kind(SessionScope(frozenset(pks[:2]), frozenset(pks[2:]))) == "list"
    assert kind(SessionScope(covered, frozenset(pks) - covered, s1, covered)) == "anchor"
    half = SessionScope(frozenset(pks[:6]), frozenset(pks[6:]))
    assert kind(half, max_tags=2) == "chunks"
    assert kind(half, max_tags=2, chunk_cost=10**9) == "stream"


def test_the_operators_shortcut_sees_what_the_rule_gives(corpus: StateDir, tmp_path: Path) -> None:
    """The operator's view reads only sessions the rule could hide from it; it must agree
    with the rule applied to every session (incognito, a key filed under another agent,
    dirty sessions)."""
    from backscroll.core.visibility import OPERATOR
    from backscroll.core.visible_sessions import _operator_view, _view

    with corpus.open("a", write=True) as db:
        _append(db, "agent:b:filed-here", "f1", None, "tern", 5000, "user")
        _append(db, "agent:0:filed-below", "f2", None, "tern", 5001, "user")  # sorts before a
        for n, kind in enumerate(("dashboard", "internal-session-effects", "subagent")):
            _append(db, f"agent:a:{kind}:incognito-{n}", f"i{n}", None, "tern", 5002 + n, "user")
    with corpus.open("a") as db:
        fast, full = _operator_view(db), _view(db, OPERATOR)
        every = [s.pk for s in db.session_briefs()]
    assert [fast.sees(pk) for pk in every] == [full.sees(pk) for pk in every]
    assert not all(full.sees(pk) for pk in every)  # incognito and the foreign key are hidden
    assert (fast.searchable, fast.pending, fast.reconcile) == (
        full.searchable, full.pending, full.reconcile)
    assert (fast.scope.pks, fast.scope.hidden) == (full.scope.pks, full.scope.hidden)
