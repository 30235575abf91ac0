"""One PostgreSQL database for many hosts: moving a local state in (``push``), losing the
connection mid-write, and several processes appending, reconciling and searching at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from backscroll.core.errors import StoreError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.indexer import expected_rows
from backscroll.core.push import push_state
from backscroll.core.reconcile import reconcile_agent, reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.postgres import PgWriter
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import leaf, msg

pytestmark = pytest.mark.slow  # servers stopped, connections dropped, hosts at once


def sql(url: str, statement: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def assert_statistics_exact(url: str) -> None:
    """Ranking's stored statistics equal what the rows say: per session, its rows and their
    characters."""
    assert sql(url, """
        SELECT s.pk FROM backscroll.sessions s LEFT JOIN (
            SELECT m.session_pk, count(*) n, sum(length(t.body)) c FROM backscroll.message_index m
            JOIN backscroll.message_text t USING (agent_id, rowid) GROUP BY m.session_pk
        ) m ON m.session_pk = s.pk
        WHERE s.index_rows <> coalesce(m.n, 0) OR s.index_chars <> coalesce(m.c, 0)""") == []


def local_state(tmp_path: Path, data_dir: Path) -> StateDir:
    """A person's SQLite state: imported transcripts, live appends, a rewound branch."""
    state = StateDir(tmp_path / "local", database_url="")
    import_openclaw(state, data_dir / "openclaw")
    with state.open("main", write=True) as db:
        meta = SessionMeta("agent:main:main")
        for event in (
            msg("q", None, "user", "which database should we pick for the team"),
            msg("a1", "q", "assistant", "postgres with pgbouncer, said the first answer"),
            leaf("l1", "q"),
            msg("a2", "q", "assistant", "postgres, and keep sqlite for laptops"),
        ):
            db.append(meta, json.dumps(event))
    reconcile_all(state)
    return state


QUERIES = ["postgres", "the", "subagent", "pgbouncer", '"keep sqlite"', "数", "sess"]


def answers(state: StateDir, query: str, caller=OPERATOR) -> list[str]:
    request = SearchRequest(query, limit=25, match="prefix" if query == "sess" else "exact")
    return [r.message_id for r in sessions_search(state, request, caller).results]


def test_push_copies_a_local_state_once_and_answers_alike(tmp_path: Path, data_dir: Path,
                                                          pg_url: str) -> None:
    local = local_state(tmp_path, data_dir)
    server = StateDir(tmp_path / "local", database_url=pg_url)
    progress: list[tuple[int, int]] = []
    report = push_state(local, server, on_progress=lambda d, t, _r: progress.append((d, t)))
    with_events = sum(1 for a in local.agents() for s in local.open(a).sessions() if s.last_seq)
    assert report.changed == with_events > 0 and progress[-1] == (report.sessions,) * 2
    assert sessions_search(server, SearchRequest("postgres"), OPERATOR).indexing
    reconcile_all(server, agents=report.agents)
    for query in QUERIES:
        assert answers(server, query) == answers(local, query), query
    caller = Caller("agent:chairong:main", Policy("tree"))
    assert answers(server, "the", caller) == answers(local, "the", caller)
    for key in ("agent:main:main", "agent:chairong:main"):
        want = sessions_history(local, HistoryRequest(key), OPERATOR).as_json()
        assert sessions_history(server, HistoryRequest(key), OPERATOR).as_json() == want
    again = push_state(local, server)  # idempotent: nothing new, nothing dirty
    assert (again.changed, again.events) == (0, 0)
    assert not sessions_search(server, SearchRequest("postgres"), OPERATOR).indexing
    with local.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("a3", "a2", "user", "agreed")))
    assert push_state(local, server).events == 1
    reconcile_all(server)
    assert answers(server, "agreed") == ["a3"] and verify_state(server).ok
    assert_statistics_exact(pg_url)


def test_push_on_the_command_line(tmp_path: Path, data_dir: Path, pg_url: str, capsys) -> None:
    from backscroll.tui.cli import main

    local = local_state(tmp_path, data_dir)
    assert main(["push", pg_url, "--state-dir", str(local.path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pushed"]["sessions"] > 0 and summary["indexed"]["sessions"] > 0
    assert main(["status", "--state-dir", str(local.path), "--database", pg_url, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["backend"].startswith("PostgreSQL at postgresql://")
    assert all(agent["dirty"] == 0 for agent in status["agents"])


def kill_own_backend(conn: psycopg.Connection, url: str) -> None:
    sql(url, "SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


def test_a_connection_lost_mid_push_leaves_nothing_half_written(
    tmp_path: Path, data_dir: Path, pg_url: str, monkeypatch
) -> None:
    local = local_state(tmp_path, data_dir)
    server = StateDir(tmp_path / "local", database_url=pg_url)
    original = PgWriter._mark_dirty
    calls = []

    def dies_on_the_third_session(self, pk: int) -> None:
        calls.append(pk)
        if len(calls) == 3:  # inside the import's transaction, after its events were copied
            kill_own_backend(self.conn, pg_url)
        original(self, pk)

    monkeypatch.setattr(PgWriter, "_mark_dirty", dies_on_the_third_session)
    with pytest.raises(StoreError, match="lost the connection to .*rolled back.*try again") as err:
        push_state(local, server)
    assert "\n" not in str(err.value)
    monkeypatch.setattr(PgWriter, "_mark_dirty", original)
    stored = dict(sql(pg_url, "SELECT s.session_id, count(e.seq) FROM backscroll.sessions s "
                              "LEFT JOIN backscroll.events e ON e.session_pk = s.pk GROUP BY 1"))
    assert len(stored) == 2  # the third session's transaction is gone whole
    for agent in local.agents():
        with local.open(agent) as db:
            for session in db.sessions():
                if session.session_id in stored:
                    assert stored[session.session_id] == len(db.events(session.pk))
    report = push_state(local, server)  # the pool replaced the dead connection
    assert report.events > 0 and report.changed <= report.sessions - 2
    reconcile_all(server)
    for query in QUERIES:
        assert answers(server, query) == answers(local, query), query
    assert verify_state(server).ok
    assert_statistics_exact(pg_url)


def test_searches_go_on_after_the_server_drops_every_connection(tmp_path: Path, pg_url: str
                                                               ) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("m", None, "user", "heron")))
    assert answers(state, "heron") == ["m"]
    sql(pg_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'backscroll' AND pid <> pg_backend_pid()")
    assert answers(state, "heron") == ["m"]  # pooled connections are checked and replaced
    with state.open("main", write=True) as db:
        assert db.append(SessionMeta("agent:main:main"),
                         json.dumps(msg("n", "m", "user", "heron again"))).outcome == "indexed"


# ------------------------------------------------------------------ many hosts at once

APPENDER = r"""
import json, sys, time
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
host, seconds = sys.argv[1], float(sys.argv[2])
state = StateDir("/nonexistent")  # the server, from $BACKSCROLL_DATABASE_URL
errors = written = 0
end = time.time() + seconds
with state.open("main", write=True) as db:
    while time.time() < end:
        # its own sessions, and two that every host writes to
        key = f"agent:main:{host}-{written % 5}" if written % 3 else f"agent:main:shared-{written % 2}"
        try:
            session = db.session(key)
            parent = session.leaf_id if session else None
            if written % 17 == 16 and parent:  # now and then a rewind: the session goes dirty
                event = {"type": "leaf", "targetId": parent}
            else:
                event = {"type": "message", "id": f"{host}-{written}", "parentId": parent,
                         "message": {"role": "user", "content": f"heron sighting {written} by {host}"}}
            db.append(SessionMeta(key), json.dumps(event))
            written += 1
        except Exception as err:
            errors += 1
            print("ERROR", type(err).__name__, err, file=sys.stderr)
print(json.dumps({"written": written, "errors": errors}))
"""

RECONCILER = r"""
import json, sys, time
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.state import StateDir
seconds = float(sys.argv[1])
state, end, errors, passes, sessions = StateDir("/nonexistent"), time.time() + seconds, 0, 0, 0
while time.time() < end:
    try:
        stats = reconcile_agent(state, "main", lease_ms=2000, batch_events=50)
        passes += stats.started
        sessions += stats.sessions
    except Exception as err:
        errors += 1
        print("ERROR", type(err).__name__, err, file=sys.stderr)
    time.sleep(0.05)
print(json.dumps({"passes": passes, "sessions": sessions, "errors": errors}))
"""

SEARCHER = r"""
import json, sys, time
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR
state, seconds = StateDir("/nonexistent"), float(sys.argv[1])
errors = queries = 0
end = time.time() + seconds
while time.time() < end:
    for q in ("heron", "sighting 7", "imported"):
        try:
            sessions_search(state, SearchRequest(query=q), OPERATOR)
            queries += 1
        except Exception as err:
            errors += 1
            print("ERROR", type(err).__name__, err, file=sys.stderr)
print(json.dumps({"queries": queries, "errors": errors}))
"""


def test_hosts_append_reconcile_and_search_at_once(tmp_path: Path, pg_url: str, monkeypatch
                                                   ) -> None:
    monkeypatch.setenv("BACKSCROLL_DATABASE_URL", pg_url)
    state = StateDir(tmp_path)
    with state.open("main", write=True) as db:  # imported sessions waiting for reconciliation
        for s in range(30):
            events = [msg(f"i{i}", f"i{i - 1}" if i else None, "user", f"imported {i} of {s}")
                      for i in range(60)]
            db.import_session(SessionMeta(f"agent:main:imported-{s}", session_id=f"imp-{s}"),
                              [json.dumps(e) for e in events])

    def start(code: str, *args: object) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", code, *map(str, args)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    seconds = 5.0
    appenders = [start(APPENDER, f"host{h}", seconds) for h in range(4)]
    reconcilers = [start(RECONCILER, seconds) for _ in range(2)]
    searchers = [start(SEARCHER, seconds) for _ in range(2)]
    outcomes = []
    for process in appenders + reconcilers + searchers:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and "ERROR" not in err, err
        outcomes.append(json.loads(out.strip().splitlines()[-1]))
    assert all(o["errors"] == 0 for o in outcomes), outcomes
    written = [o["written"] for o in outcomes[:4]]
    assert all(n > 10 for n in written)
    # one reconciler holds the agent's lease at a time; the other gives way, then takes over
    assert sum(o["passes"] for o in outcomes[4:6]) >= 1 and sum(o["queries"] for o in outcomes[6:]) > 5

    while reconcile_agent(state, "main").sessions:  # what the last writes left pending
        pass
    report = verify_state(state)
    assert report.ok and report.sessions_skipped == 0, report.problems
    with state.open("main") as db:
        total = 0
        for session in db.sessions():
            rows, _ = expected_rows(db.events(session.pk), session.created_at)
            stored = db.index_rows(session.pk)
            assert len(stored) == len(rows) == len({row.entry_id for _rowid, row in stored})
            total += len(stored)
        events = sum(len(db.events(s.pk)) for s in db.sessions())
    assert events == 30 * 60 + sum(written)  # nothing lost, nothing stored twice
    assert total >= 30 * 60
    assert_statistics_exact(pg_url)
    found = sessions_search(state, SearchRequest("heron", limit=25), OPERATOR)
    assert len(found.results) == 25 and not found.indexing
