"""Migrations by name (core/storage/migrations.py), on both backends: a fresh database records
every step's name; a database an older backscroll left at a numbered version is recognised, its
steps recorded without running them again, and ends with the schema of a fresh one; two steps
added on two branches apply in either order; a name this code does not know is refused in one
sentence; a reader reads a database that lacks index-only steps only."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from backscroll.core.errors import StoreError
from backscroll.core.state import StateDir
from backscroll.core.storage import SchemaBehind, SessionMeta
from backscroll.core.storage import migrations as rule
from backscroll.core.storage.postgres import driver
from backscroll.core.storage.postgres import schema as pg_schema
from backscroll.core.storage.sqlite import schema as sqlite_schema

from .events import msg
from .older_schema import PG_UNDO, UNDO, downgrade, pg_downgrade

MAIN = SessionMeta("agent:main:main")
A = ("9990_branch_a", "CREATE TABLE branch_a (x integer);")
B = ("9991_branch_b", "CREATE TABLE branch_b (x integer);")


def write_one(state: StateDir, text: str = "heron") -> None:
    with state.open("main", write=True) as db:
        db.append(MAIN, json.dumps(msg(f"m-{text}", None, "user", text)))


# ------------------------------------------------------------------ the rule, without a database


def test_the_rule_knows_numbered_databases_and_unknown_names() -> None:
    steps = [("0001_a", ""), ("0002_b", ""), ("0003_c", "")]
    old = rule.Recorded(2, None)
    assert rule.applied(steps, old, numbered=3) == ["0001_a", "0002_b"]
    assert rule.pending(steps, ["0001_a", "0002_b"]) == [("0003_c", "")]
    assert rule.unknown(steps, rule.Recorded(4, None), numbered=3) == ["number 4"]
    named = rule.Recorded(3, ("0001_a", "0003_c", "0009_z"))
    assert rule.unknown(steps, named, numbered=3) == ["0009_z"]
    assert rule.pending(steps, named.names) == [("0002_b", "")]
    assert rule.readable(steps, ["0001_a", "0003_c"], frozenset({"0002_b"}))
    assert not rule.readable(steps, ["0001_a", "0002_b"], frozenset({"0002_b"}))


# ------------------------------------------------------------------ SQLite


def sqlite_names(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY rowid")]


def sqlite_shape(path: Path) -> tuple[int, set]:
    """Every table's columns, every index's and trigger's SQL, and the user_version."""
    with closing(sqlite3.connect(path)) as conn:
        shape = set()
        for kind, name, table, text in conn.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"):
            if kind == "table":
                shape.add((kind, name, tuple(conn.execute(f"PRAGMA table_xinfo('{name}')"))))
            else:
                shape.add((kind, name, table, " ".join((text or "").split())))
        return conn.execute("PRAGMA user_version").fetchone()[0], shape


def sqlite_fresh(tmp_path: Path) -> Path:
    state = StateDir(tmp_path / "fresh", database_url="")
    state.open("main", write=True).close()
    return state.db_path("main")


def test_sqlite_a_fresh_database_records_every_name(tmp_path: Path) -> None:
    path = sqlite_fresh(tmp_path)
    assert sqlite_names(path) == [name for name, _ in sqlite_schema.MIGRATIONS]
    assert sqlite_shape(path)[0] == len(sqlite_schema.MIGRATIONS)  # user_version: the count


@pytest.mark.parametrize("version", range(min(UNDO) - 1, sqlite_schema.NUMBERED + 1))
def test_sqlite_a_numbered_database_is_recognised_and_upgraded(tmp_path: Path, version: int) -> None:
    state = StateDir(tmp_path / "old", database_url="")
    write_one(state)
    path = state.db_path("main")
    downgrade(path, version)  # as the numbered backscroll left it: no table of names
    write_one(state, "egret")
    assert sqlite_names(path) == [name for name, _ in sqlite_schema.MIGRATIONS]
    assert sqlite_shape(path) == sqlite_shape(sqlite_fresh(tmp_path))
    with state.open("main") as db:
        assert len(db.sessions()) == 1


@pytest.mark.parametrize("first, merged", [(A, [A, B]), (B, [A, B]), (A, [B, A])])
def test_sqlite_steps_of_two_branches_both_apply(tmp_path: Path, monkeypatch, first, merged) -> None:
    base = sqlite_schema.MIGRATIONS
    state = StateDir(tmp_path / "s", database_url="")
    monkeypatch.setattr(sqlite_schema, "MIGRATIONS", [*base, first])  # the branch's database
    write_one(state)
    monkeypatch.setattr(sqlite_schema, "MIGRATIONS", [*base, *merged])  # after the merge
    write_one(state, "egret")
    path = state.db_path("main")
    assert sorted(sqlite_names(path)) == sorted(name for name, _ in [*base, A, B])
    assert sqlite_names(path)[-2] == first[0]  # the branch's own step was not run again
    assert sqlite_shape(path)[0] == len(base) + 2
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("SELECT * FROM branch_a, branch_b")


def test_sqlite_an_unknown_name_is_refused_in_one_sentence(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "s", database_url="")
    write_one(state)
    with closing(sqlite3.connect(state.db_path("main"))) as conn:
        conn.execute("INSERT INTO migrations VALUES ('9999_from_the_future', 0)")
        conn.commit()
    for write in (False, True):
        with pytest.raises(StoreError) as refused:
            state.open("main", write=write)
        said = str(refused.value)
        assert "written by a newer backscroll (migration 9999_from_the_future is not one" in said
        assert "\n" not in said and said.count(": upgrade backscroll") == 1


def test_sqlite_readers_read_a_database_lacking_index_only_steps(tmp_path: Path, monkeypatch) -> None:
    state = StateDir(tmp_path / "s", database_url="")
    write_one(state)
    later = ("9999_later_index", "CREATE INDEX events_later ON events(kind);")
    monkeypatch.setattr(sqlite_schema, "MIGRATIONS", [*sqlite_schema.MIGRATIONS, later])
    with pytest.raises(SchemaBehind):  # not index-only: needed
        state.open("main")
    monkeypatch.setattr(sqlite_schema, "INDEX_ONLY", sqlite_schema.INDEX_ONLY | {later[0]})
    with state.open("main") as db:
        assert len(db.sessions()) == 1
    with closing(sqlite3.connect(state.db_path("main"))) as conn:  # lacks the link indexes only
        conn.executescript(UNDO[9] + " DELETE FROM migrations WHERE name = '0009_link_indexes';")
    with state.open("main") as db:
        assert len(db.sessions()) == 1


# ------------------------------------------------------------------ PostgreSQL


def pg(url: str, statement: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement)
        return cursor.fetchall() if cursor.description else []


def pg_names(url: str) -> list[str]:
    return sorted(row[0] for row in pg(url, "SELECT name FROM backscroll.migrations"))


def pg_shape(url: str) -> tuple:
    return (
        pg(url, "SELECT value FROM backscroll.meta WHERE key = 'schema_version'"),
        set(pg(url, "SELECT table_name, column_name, data_type, is_nullable, column_default "
                    "FROM information_schema.columns WHERE table_schema = 'backscroll'")),
        set(pg(url, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'backscroll'")),
        set(pg(url, "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                    "WHERE connamespace = 'backscroll'::regnamespace")),
        set(pg(url, "SELECT t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t "
                    "JOIN pg_class c ON c.oid = t.tgrelid "
                    "WHERE c.relnamespace = 'backscroll'::regnamespace AND NOT t.tgisinternal")),
    )


@pytest.fixture
def pg_empty(pg_cluster):
    name = pg_cluster.new_database()
    url = pg_cluster.url(name)
    yield url
    driver.close_pools(url)
    pg_cluster.drop_database(name)


def test_postgres_a_fresh_schema_records_every_name(pg_empty: str, tmp_path: Path) -> None:
    write_one(StateDir(tmp_path, database_url=pg_empty))
    assert pg_names(pg_empty) == sorted(name for name, _ in pg_schema.MIGRATIONS)
    assert pg_shape(pg_empty)[0] == [(str(len(pg_schema.MIGRATIONS)),)]


@pytest.mark.parametrize("version", range(min(PG_UNDO) - 1, pg_schema.NUMBERED + 1))
def test_postgres_a_numbered_schema_is_recognised_and_upgraded(
        pg_url: str, pg_empty: str, tmp_path: Path, version: int) -> None:
    state = StateDir(tmp_path / "old", database_url=pg_url)
    write_one(state)
    fresh = pg_shape(pg_url)
    pg_downgrade(pg_url, version)  # as the numbered backscroll left it: no table of names
    driver.close_pools(pg_url)
    write_one(state, "egret")
    assert pg_names(pg_url) == sorted(name for name, _ in pg_schema.MIGRATIONS)
    assert pg_shape(pg_url) == fresh
    write_one(StateDir(tmp_path / "new", database_url=pg_empty))
    assert pg_shape(pg_empty) == fresh


@pytest.mark.parametrize("first, merged", [(A, [A, B]), (B, [A, B])])
def test_postgres_steps_of_two_branches_both_apply(pg_url: str, tmp_path: Path, monkeypatch,
                                                   first, merged) -> None:
    base = pg_schema.MIGRATIONS
    state = StateDir(tmp_path, database_url=pg_url)
    driver.close_pools(pg_url)
    monkeypatch.setattr(pg_schema, "MIGRATIONS", [*base, first])
    write_one(state)
    driver.close_pools(pg_url)
    monkeypatch.setattr(pg_schema, "MIGRATIONS", [*base, *merged])
    write_one(state, "egret")
    assert pg_names(pg_url) == sorted(name for name, _ in [*base, A, B])
    assert pg_shape(pg_url)[0] == [(str(len(base) + 2),)]
    pg(pg_url, "SELECT * FROM backscroll.branch_a, backscroll.branch_b")


def test_postgres_an_unknown_name_is_refused_in_one_sentence(pg_url: str, tmp_path: Path) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    write_one(state)
    pg(pg_url, "INSERT INTO backscroll.migrations VALUES ('9999_from_the_future', 0)")
    driver.close_pools(pg_url)
    for write in (False, True):
        with pytest.raises(StoreError) as refused:
            state.open("main", write=write)
        said = str(refused.value)
        assert "holds a newer backscroll schema (migration 9999_from_the_future is not" in said
        assert "\n" not in said and said.count(": upgrade backscroll") == 1


def test_postgres_readers_read_a_schema_lacking_index_only_steps(
        pg_url: str, tmp_path: Path, monkeypatch) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    write_one(state)
    later = ("9999_later_index", "CREATE INDEX sessions_later ON sessions (agent_id, created_at);")
    monkeypatch.setattr(pg_schema, "MIGRATIONS", [*pg_schema.MIGRATIONS, later])
    driver.close_pools(pg_url)
    with pytest.raises(SchemaBehind):  # not index-only: needed
        state.open("main")
    monkeypatch.setattr(pg_schema, "INDEX_ONLY", pg_schema.INDEX_ONLY | {later[0]})
    with state.open("main") as db:
        assert len(db.sessions()) == 1
