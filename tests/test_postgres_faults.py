"""A PostgreSQL server that goes away or runs short of connections, seen from a user's seat:
``sync`` of a home with more agents than a pool holds, a handle whose reconnect failed once,
and the driver's pool keeping its complaints off the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from backscroll.core.errors import StoreError
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.postgres import driver

from .events import msg


def drop_connections(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE application_name = 'backscroll' AND pid <> pg_backend_pid()")


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
