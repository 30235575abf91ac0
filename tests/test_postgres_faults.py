"""A PostgreSQL server that goes away or runs short of connections, seen from a user's seat:
``sync`` of a home with more agents than a pool holds, a handle whose reconnect failed once,
and the driver's pool keeping its complaints off the terminal."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from backscroll.core.catalog import list_sessions, project_list, visible_session_list
from backscroll.core.errors import StoreError, Unreachable
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.sources import sync_sources
from backscroll.core.sources.listing import sources_status
from backscroll.core.state import StateDir
from backscroll.core.status import state_status
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.postgres import driver
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR

from .events import msg
from .fakehome import build_home


def drop_connections(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE application_name = 'backscroll' AND pid <> pg_backend_pid()")


def test_a_sync_of_more_agents_than_the_pool_holds_takes_in_every_one(
    tmp_path: Path, data_dir: Path, pg_url: str, monkeypatch
) -> None:
    monkeypatch.setattr(driver, "POOL_MAX", 2)
    monkeypatch.setattr(driver, "GETCONN_TIMEOUT_S", 1.0)
    agents = build_home(tmp_path / "home", data_dir)["agents"]
    for n in range(3):  # five OpenClaw agents, with claude-code and codex seven in all
        shutil.copytree(data_dir / "openclaw" / "reinforcementsleeping_main",
                        agents / f"extra{n}" / "sessions")
    state = StateDir(tmp_path / "state", database_url=pg_url)
    report = sync_sources(state)
    assert report.problems == []
    assert sorted(state.agents()) == sorted(
        ["chairong", "main", "extra0", "extra1", "extra2", "claude-code", "codex"])
    assert report.pending == set(state.agents())  # each writer was asked before it closed


def test_a_handle_whose_reconnect_failed_reconnects_on_its_next_use(
    tmp_path: Path, pg_url: str, monkeypatch
) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("m", None, "user", "heron")))
        drop_connections(pg_url)
        pools = driver.Pools.getconn

        def server_still_down(self, read_only: bool):
            raise StoreError("no connection (the server is restarting)")

        monkeypatch.setattr(driver.Pools, "getconn", server_still_down)
        with pytest.raises(StoreError, match="restarting"):
            db.session("agent:main:main")
        monkeypatch.setattr(driver.Pools, "getconn", pools)  # the server is back
        assert db.session("agent:main:main").leaf_id == "m"


@pytest.mark.parametrize("when", ["start", "reading", "opening", "writing"])
def test_a_sync_stops_at_the_first_sign_the_server_is_gone(
    when: str, tmp_path: Path, data_dir: Path, pg_url: str, monkeypatch
) -> None:
    """Wherever the sync is when the server goes (listing the agents, reading what one
    remembers, opening its writer, taking in a file), it asks for a connection once and stops
    in one sentence: not a wait for every agent or file left (hundreds would take hours)."""
    monkeypatch.setattr(driver, "GETCONN_TIMEOUT_S", 1.0)
    build_home(tmp_path / "home", data_dir)
    state = StateDir(tmp_path / "state", database_url=pg_url)
    with state.open("claude-code", write=True):
        pass
    if when != "start":
        listed = state.agents()
        monkeypatch.setattr(state, "agents", lambda: listed)  # the server is gone after this
    tries = []
    real_getconn = driver.Pools.getconn
    gone = when in ("start", "reading")

    def getconn(self, read_only: bool):
        if gone or (when == "opening" and not read_only):
            tries.append(read_only)
            raise driver.translate(driver.driver()[1].PoolTimeout("timed out"), self.url)
        return real_getconn(self, read_only)

    def progress(done: int, total: int, path: str) -> None:
        nonlocal gone
        if when == "writing" and done == 1 and not gone:
            drop_connections(pg_url)
            gone = True

    monkeypatch.setattr(driver.Pools, "getconn", getconn)
    with pytest.raises(Unreachable, match="no connection to .* within 1 s"):
        sync_sources(state, on_progress=progress)
    assert len(tries) == 1



@pytest.mark.parametrize("operation", [
    lambda state: reconcile_all(state),
    lambda state: sessions_search(state, SearchRequest(query="heron"), OPERATOR),
    lambda state: state_status(state),
    lambda state: verify_state(state),
    lambda state: list_sessions(state),
    lambda state: visible_session_list(state, OPERATOR),
    lambda state: project_list(state, OPERATOR),
    lambda state: sources_status(state),
], ids=["reconcile_all", "search", "status", "verify", "list_sessions", "visible_session_list",
        "project_list", "sources_status"])
def test_an_operation_over_every_agent_stops_when_the_server_is_gone(
    operation, tmp_path: Path, pg_url: str, monkeypatch
) -> None:
    """An unreadable agent is one problem and the others go on; a server that cannot be
    reached is every agent's problem: one sentence after one wait, not one wait per agent."""
    monkeypatch.setattr(driver, "GETCONN_TIMEOUT_S", 1.0)
    state = StateDir(tmp_path, database_url=pg_url)
    for agent in ("alpha", "beta", "gamma"):
        with state.open(agent, write=True) as db:
            db.append(SessionMeta(f"agent:{agent}:main"), json.dumps(msg("m", None, "user", "heron")))
    listed = state.agents()
    monkeypatch.setattr(state, "agents", lambda: listed)  # the server goes after this
    tries = []

    def server_gone(self, read_only: bool):
        tries.append(read_only)
        raise driver.translate(driver.driver()[1].PoolTimeout("timed out"), self.url)

    monkeypatch.setattr(driver.Pools, "getconn", server_gone)
    with pytest.raises(Unreachable, match="no connection to .* within 1 s"):
        operation(state)
    assert len(tries) == 1


POOL_NOISE = r"""
import json, sys, psycopg
from backscroll.core.errors import BackscrollError
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.postgres import driver
from backscroll.core.visibility import OPERATOR
driver.GETCONN_TIMEOUT_S = 1.0
url, admin, name = sys.argv[1], sys.argv[3], sys.argv[4]
state = StateDir(sys.argv[2], database_url=url)
with state.open("main", write=True) as db:
    db.append(SessionMeta("agent:main:main"), json.dumps(
        {"type": "message", "id": "m", "parentId": None,
         "message": {"role": "user", "content": "heron"}}))
print(len(sessions_search(state, SearchRequest(query="heron"), OPERATOR).results))
with psycopg.connect(admin, autocommit=True) as conn:  # the database goes away for a while
    conn.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE application_name = 'backscroll' AND pid <> pg_backend_pid()")
try:
    sessions_search(state, SearchRequest(query="heron"), OPERATOR)
except BackscrollError as err:
    print(err)
"""


@pytest.mark.slow
def test_the_pools_complaints_stay_off_the_terminal(tmp_path: Path, pg_url: str,
                                                    pg_cluster) -> None:
    """psycopg's pool logs a warning for each connection it discards and each reconnect that
    fails; with no logging set up Python prints those on stderr, many lines for one outage,
    around the one sentence that says what happened."""
    name = pg_url.split("@/")[1].split("?")[0]
    argv = [sys.executable, "-c", POOL_NOISE, pg_url, str(tmp_path / "state"),
            pg_cluster.url(), name]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found, error = done.stdout.splitlines()
    assert found == "1" and error.startswith("cannot connect to ")  # said at once
    assert done.stderr == ""


@pytest.mark.slow
def test_a_stopped_server_is_said_at_once_not_after_the_whole_wait(
    tmp_path: Path, pg_url: str, pg_cluster, monkeypatch
) -> None:
    """A search (the browser's, a host's) whose pooled connection died with the server asks
    the server itself before waiting 15 s for the pool: "cannot connect" with its reason."""
    from backscroll.core.search import SearchRequest, sessions_search
    from backscroll.core.visibility import OPERATOR

    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("m", None, "user", "heron")))
    assert len(sessions_search(state, SearchRequest("heron"), OPERATOR).results) == 1
    name = pg_url.split("@/", 1)[1].split("?", 1)[0]
    pg_cluster.sql(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    try:
        drop_connections(pg_cluster.url())
        with pytest.raises(Unreachable, match=r"^cannot connect to .* is not currently accepting"):
            sessions_search(state, SearchRequest("heron"), OPERATOR)
    finally:
        pg_cluster.sql(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
    assert len(sessions_search(state, SearchRequest("heron"), OPERATOR).results) == 1  # back
