"""A cold conversation is archived by a stored flag (``sessions.archived``, ``SessionRow.archived``),
set when OpenClaw's store moved its window to a cold archive, never read from a label: a session
whose own label ends in "(archived)" is not archived. The flag's migration (SQLite
``0010_session_archived``, PostgreSQL ``0006_session_archived``) keeps every row, not archived."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from backscroll.core.catalog import visible_session_list
from backscroll.core.grouped import conversations_search
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SchemaBehind, SessionMeta
from backscroll.core.storage.postgres import driver
from backscroll.core.storage.postgres import schema as pg_schema
from backscroll.core.storage.sqlite import schema as sqlite_schema
from backscroll.core.visibility import OPERATOR

from .events import msg
from .older_schema import pg_undo_named, undo_named
from .test_openclaw_live import KEY, store_with_one, sync
from .test_openclaw_store import header, message

TEASING = "agent:main:teasing"  # a hot session a person labelled "... (archived)"


@pytest.mark.backends
def test_archived_is_the_stored_flag_not_the_label(state: StateDir) -> None:
    store = store_with_one(Path.home() / ".openclaw")
    store.node(TEASING, "s-5", label="Old plans (archived)")
    store.window("s-5", TEASING)
    store.events("s-5", [header("s-5"), message("t1", None, "user", "kestrel still hot")])
    try:
        sync(state)
        store.make_cold("s-1")
        assert sync(state).problems == []
    finally:
        store.con.close()
    with state.open("main") as db:
        rows = {s.key: (s.label, s.archived) for s in db.sessions()}
    assert rows == {KEY: ("Daily chat (archived)", True), TEASING: ("Old plans (archived)", False)}
    want = {KEY: True, TEASING: False}
    request = SearchRequest("kestrel", limit=25)
    hits = sessions_search(state, request, OPERATOR).as_json()["results"]
    assert {h["sessionKey"]: h["archived"] for h in hits} == want
    grouped = conversations_search(state, request, OPERATOR).as_json()["conversations"]
    assert {c["sessionKey"]: c["archived"] for c in grouped} == want
    listed = visible_session_list(state, OPERATOR)
    assert {s.key: s.as_json()["archived"] for s in listed} == want
    assert [s.key for s in visible_session_list(state, OPERATOR, archived=True)] == [KEY]
    assert [s.key for s in visible_session_list(state, OPERATOR, archived=False)] == [TEASING]


@pytest.mark.backends
def test_mark_archived_sets_and_clears_the_flag(state: StateDir) -> None:
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main", "s-1", label="x (archived)"),
                  json.dumps(msg("m1", None, "user", "heron")))
        assert db.session("agent:main:main").archived is False
        assert db.mark_archived("s-1") is True
        assert db.mark_archived("s-1") is False  # nothing changed
        assert db.session("agent:main:main").archived is True
        assert db.mark_archived("s-1", False) is True
        assert db.session("agent:main:main").archived is False
        assert db.mark_archived("no-such-session") is False


def write_one(state: StateDir, text: str) -> None:
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main", "s-1", label="Notes (archived)"),
                  json.dumps(msg(f"m-{text}", None, "user", text)))


def test_sqlite_the_archived_step_keeps_rows_not_archived(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "s", database_url="")
    write_one(state, "heron")
    path = state.db_path("main")
    steps = [name for name, _sql in sqlite_schema.MIGRATIONS]
    before = steps.index("0010_session_archived")  # the steps before it
    undo_named(path, before)  # as the backscroll with the steps before it left it
    with closing(sqlite3.connect(path)) as conn:
        assert "archived" not in {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    with pytest.raises(SchemaBehind) as behind:  # a reader: one sentence, the writer upgrades
        state.open("main")
    assert "next write" in str(behind.value) and "\n" not in str(behind.value)
    write_one(state, "egret")
    with closing(sqlite3.connect(path)) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY rowid")]
    assert names[before:] == steps[before:]  # the archived step, and the later ones, again
    with state.open("main") as db:
        [session] = db.sessions()
        assert (session.label, session.archived) == ("Notes (archived)", False)
        assert [e["id"] for _, e in db.events(session.pk)] == ["m-heron", "m-egret"]


def test_postgres_the_archived_step_keeps_rows_not_archived(pg_url: str, tmp_path: Path) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    write_one(state, "heron")
    before = [name for name, _sql in pg_schema.MIGRATIONS].index("0006_session_archived")
    pg_undo_named(pg_url, before)
    driver.close_pools(pg_url)
    with pytest.raises(SchemaBehind):
        state.open("main")
    write_one(state, "egret")
    with state.open("main") as db:
        [session] = db.sessions()
        assert (session.label, session.archived) == ("Notes (archived)", False)
        assert [e["id"] for _, e in db.events(session.pk)] == ["m-heron", "m-egret"]
