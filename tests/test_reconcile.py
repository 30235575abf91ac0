from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.indexer import expected_rows
from backscroll.core.reconcile import reconcile_agent, start_background
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR

from .events import header, leaf, lines, msg

pytestmark = pytest.mark.backends


def search_ids(state: StateDir, query: str) -> tuple[list[str], bool]:
    response = sessions_search(state, SearchRequest(query=query, limit=25), OPERATOR)
    return [r.message_id for r in response.results], response.indexing


def test_imported_sessions_are_found_only_after_reconciliation(
    state: StateDir, data_dir: Path
) -> None:
    import_openclaw(state, data_dir / "openclaw")
    pending: list[str] = []
    response = sessions_search(
        state, SearchRequest(query="subagent"), OPERATOR, on_pending=pending.append
    )
    assert response.results == [] and response.indexing
    assert "retry" in response.as_json()["warning"].lower()
    assert sorted(pending) == ["chairong", "reinforcementsleeping_main"]

    for agent in state.agents():
        stats = reconcile_agent(state, agent)
        assert stats.started and stats.sessions > 0
    report = verify_state(state)
    assert report.ok and report.sessions_skipped == 0
    # every message of every active branch is now found by a word of its own text
    for agent in state.agents():
        with state.open(agent) as db:
            for session in db.sessions():
                rows, _ = expected_rows(db.events(session.pk), session.created_at)
                assert len(db.index_rows(session.pk)) == len(rows)
    response = sessions_search(state, SearchRequest(query="subagent"), OPERATOR)
    assert not response.indexing


def test_rewind_hides_the_abandoned_branch_at_once_and_reindexes_the_active_one(
    state: StateDir,
) -> None:
    key = SessionMeta("agent:main:main")
    db = state.open("main", write=True)
    for line in lines(
        header(),
        msg("q", None, "user", "which database should we pick"),
        msg("a1", "q", "assistant", "use postgres with pgbouncer"),
        msg("u2", "a1", "user", "what about pgbouncer pooling modes"),
    ):
        db.append(key, line)
    assert set(
        search_ids(state, "pgbouncer")[0]
    ) == {"u2", "a1"}
    assert db.append(key, json.dumps(leaf("l1", "q"))).outcome == "dirty"
    ids, indexing = search_ids(state, "pgbouncer")
    assert ids == [] and indexing  # the rewound branch is hidden immediately
    db.append(key, json.dumps(msg("a2", "q", "assistant", "use sqlite, it is enough")))
    reconcile_agent(state, "main")
    assert search_ids(state, "pgbouncer") == ([], False)
    assert search_ids(state, "sqlite")[0] == ["a2"]
    assert sorted(r.entry_id for _rowid, r in db.index_rows(db.session(key.key).pk)) == ["a2", "q"]
    assert verify_state(state).ok


@pytest.mark.sqlite_only  # the PostgreSQL twin is in test_postgres.py
def test_indexer_version_change_rebuilds_everything(state: StateDir) -> None:
    db = state.open("main", write=True)
    for n in range(3):
        meta = SessionMeta(f"agent:main:s{n}")
        db.append(meta, json.dumps(msg(f"m{n}", None, "user", f"kiwi number {n}")))
    db.close()
    conn = sqlite3.connect(state.db_path("main"))
    conn.execute("UPDATE index_state SET indexer_version = 1")  # as if indexed by an older build
    conn.commit()
    conn.close()
    ids, indexing = search_ids(state, "kiwi")
    assert ids == [] and indexing
    stats = reconcile_agent(state, "main")
    assert stats.sessions == 3
    assert sorted(search_ids(state, "kiwi")[0]) == ["m0", "m1", "m2"]


def test_broken_trees_are_indexed_as_far_as_sound_and_reported_once(state: StateDir) -> None:
    db = state.open("main", write=True)
    events = lines(
        header(),
        msg("a", None, "user", "alpha lemur"),
        msg("b", "a", "assistant", "beta lemur"),
        msg("b", "a", "assistant", "duplicate lemur"),
        msg("x", "y", "user", "cycle lemur x"),
        msg("y", "x", "assistant", "cycle lemur y"),
    )
    db.import_session(SessionMeta("agent:main:broken", session_id="broken-1"), events)
    stats = reconcile_agent(state, "main")
    assert stats.sessions == 1 and len(stats.problems) == 1
    assert "duplicate" in stats.problems[0] and "cycle" in stats.problems[0]
    assert sorted(search_ids(state, "lemur")[0]) == ["x", "y"]
    again = reconcile_agent(state, "main")
    assert again.sessions == 0 and again.problems == []  # nothing pending, nothing re-reported
    assert verify_state(state).ok


def test_a_second_reconciler_gives_way_while_the_first_holds_the_lease(state: StateDir) -> None:
    db = state.open("main", write=True)
    db.import_session(
        SessionMeta("agent:main:x", session_id="x"), lines(msg("a", None, "user", "hi"))
    )
    assert db.start_run("someone-else", "run-1", lease_ms=60_000)
    stats = reconcile_agent(state, "main")
    assert not stats.started and stats.sessions == 0
    assert db.read_progress().running
    assert start_background(state, "main") is False


def test_progress_is_stored_for_other_processes(state: StateDir) -> None:
    db = state.open("main", write=True)
    for n in range(5):
        db.import_session(
            SessionMeta(f"agent:main:s{n}", session_id=f"s{n}"),
            lines(msg(f"m{n}", None, "user", f"message {n}")),
        )
    seen = []
    reconcile_agent(state, "main", on_progress=seen.append, batch_events=2)
    running = [p for p in seen if p.state == "running"]
    assert [p.sessions_done for p in running] == sorted(p.sessions_done for p in running)
    assert running[-1].sessions_done == 5 and running[-1].sessions_total == 5
    assert running[-1].messages_done == 5
    assert db.read_progress().state == "idle"


def test_large_sessions_are_rebuilt_in_batches_and_abandoned_on_concurrent_write(
    state: StateDir,
) -> None:
    db = state.open("main", write=True)
    events = [header()] + [
        msg(f"m{i}", f"m{i - 1}" if i else None, "user", f"word{i} otter") for i in range(50)
    ]
    db.import_session(SessionMeta("agent:main:big", session_id="big"), lines(*events))

    AgentWriter = type(db)  # the backend's writer class
    original = AgentWriter.write_rows
    calls = []

    def write_then_interfere(self, *args, **kwargs):
        ok = original(self, *args, **kwargs)
        calls.append(ok)
        if len(calls) == 2:  # a live write lands between two batches
            db.append(
                SessionMeta("agent:main:big"), json.dumps(msg("late", "m49", "user", "late otter"))
            )
        return ok

    AgentWriter.write_rows = write_then_interfere
    try:
        stats = reconcile_agent(state, "main", batch_events=10)
    finally:
        AgentWriter.write_rows = original
    assert stats.abandoned >= 1 and stats.sessions == 1  # abandoned once, then rebuilt whole
    assert len(search_ids(state, "otter")[0]) == 25  # limit; 51 match
    assert verify_state(state).ok
    assert len(db.index_rows(db.session("agent:main:big").pk)) == 51


def test_big_backfills_build_rows_in_a_helper_process_and_stay_exact(
    state: StateDir, monkeypatch
) -> None:
    import backscroll.core.reconcile as reconcile

    monkeypatch.setattr(reconcile, "PARALLEL_MIN_EVENTS", 1)
    submitted: list[int] = []
    original_submit = reconcile._RowBuilder.submit
    monkeypatch.setattr(
        reconcile._RowBuilder, "submit",
        lambda self, claims: (submitted.append(len(claims)), original_submit(self, claims))[1],
    )
    db = state.open("main", write=True)
    keys = [f"agent:main:s{n}" for n in range(12)]
    for n, key in enumerate(keys):
        events = [msg(f"m{i}", f"m{i - 1}" if i else None, "user", f"bison {n} {i}") for i in range(20)]
        db.import_session(SessionMeta(key, session_id=f"sid{n}"), lines(*events))
    written: list[str] = []

    def write_while_a_batch_is_in_flight(_progress) -> None:
        if not written:  # once: every session gets a live write, in flight or not
            for key in keys:
                session = db.session(key)
                db.append(SessionMeta(key), json.dumps(msg("late", session.leaf_id, "user", "late bison")))
                written.append(key)

    stats = reconcile_agent(state, "main", on_progress=write_while_a_batch_is_in_flight, batch_events=40)
    assert len(submitted) > 1  # the helper-process path really ran, batch after batch
    assert stats.sessions >= len(keys) and stats.abandoned >= 1  # the in-flight batch lost
    while reconcile_agent(state, "main").sessions:  # whatever the writes re-dirtied
        pass
    report = verify_state(state)
    assert report.ok and report.sessions_checked == len(keys)
    assert sum(len(db.index_rows(db.session(k).pk)) for k in keys) == len(keys) * 21


def test_a_nul_character_in_a_message_is_a_separator_and_verify_agrees(state: StateDir) -> None:
    # SQLite's length() stops at a NUL, so a row holding one would look shorter than the
    # index state says: the index holds a space there instead (NUL is a separator anyway).
    db = state.open("main", write=True)
    live, rebuilt = SessionMeta("agent:main:live"), SessionMeta("agent:main:rebuilt")
    db.append(live, json.dumps(msg("n1", None, "user", "before\u0000after walrus")))
    db.append(rebuilt, json.dumps(msg("n2", None, "user", "tusk\u0000walrus")))
    db.append(rebuilt, json.dumps(leaf("l1", "n2")))  # a leaf control: rebuilt by reconcile
    reconcile_agent(state, "main")
    assert sorted(search_ids(state, "walrus")[0]) == ["n1", "n2"]
    assert search_ids(state, "after")[0] == ["n1"]
    bodies = {r.entry_id: r.body for _rowid, r in db.index_rows(db.session(live.key).pk)}
    assert bodies == {"n1": "before after walrus"}
    report = verify_state(state)
    assert report.ok, report.problems
    assert report.rows_checked == 2


def test_a_backfill_without_a_helper_process_builds_its_rows_here(
    state: StateDir, monkeypatch
) -> None:
    import backscroll.core.reconcile as reconcile

    def no_pool(*_args, **_kwargs):
        raise ValueError("bad value(s) in fds_to_keep")  # what a captured stderr gives

    monkeypatch.setattr(reconcile, "PARALLEL_MIN_EVENTS", 1)
    monkeypatch.setattr(reconcile, "ProcessPoolExecutor", no_pool)
    db = state.open("main", write=True)
    for n in range(3):
        events = [msg(f"m{i}", f"m{i - 1}" if i else None, "user", f"walrus {n} {i}") for i in range(10)]
        db.import_session(SessionMeta(f"agent:main:s{n}", session_id=f"sid{n}"), lines(*events))
    assert reconcile_agent(state, "main").sessions == 3
    assert verify_state(state).ok and search_ids(state, "walrus")[0]


def test_catching_up_a_branch_does_not_store_it_for_a_session_made_meanwhile(
    state: StateDir, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Catching up reads a lagging session's log outside the transaction that stores its
    branch. If the session is deleted meanwhile and a new one is written (which SQLite may
    give the same pk), the old branch is not stored for the new session, where it would read
    as current once the new log reaches the old length."""
    from backscroll.core import reconcile

    def write(key: str, prefix: str) -> None:
        with state.open("main", write=True) as db:
            meta = SessionMeta(key, session_id=f"sid-{prefix}")
            db.append(meta, json.dumps(header(f"sid-{prefix}")))
            db.append(meta, json.dumps(msg(f"{prefix}0", None, "user", f"{prefix} says hello")))

    write("agent:main:old", "old")
    with state.open("main", write=True) as db:  # as migration 7 leaves a session: lagging
        with db.transaction():
            db.conn.execute("DELETE FROM branch_messages")
            db.conn.execute("UPDATE sessions SET branch_seq = 0" if backend == "postgres"
                            else "UPDATE index_state SET branch_seq = 0")
    computed = reconcile.active_branch

    def meanwhile(events):  # the branch is computed; before it is stored, the session goes
        branch = computed(events)
        with state.open("main", write=True) as db:
            if db.session("agent:main:old") is not None:
                db.delete_session("agent:main:old")
                write("agent:main:new", "new")
        return branch

    monkeypatch.setattr(reconcile, "active_branch", meanwhile)
    reconcile_agent(state, "main")
    with state.open("main") as db, db.snapshot():
        session = db.session("agent:main:new")
        assert session is not None
        stored = db.branch_messages(session.pk, session.last_seq)
    assert stored is None or [row[1] for row in stored] == ["new0"]
    assert not verify_state(state).problems
