"""The PostgreSQL backend's own promises: the schema by version, the two roles, one sentence
(password masked) for every failure, the driver loaded only when a URL asks for it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from backscroll.core.errors import Forbidden, StoreError, ValidationError
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SchemaBehind, SessionMeta, database_init_sql
from backscroll.core.storage.dburl import check_url, mask_secrets, mask_url
from backscroll.core.storage.postgres import driver, schema
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main

from .events import BASE_MS, lines, msg
from .older_schema import pg_downgrade


def run(capsys, monkeypatch, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(err: str) -> bool:
    return err.count("\n") == 1 and err.startswith("backscroll: ") and "Traceback" not in err


def sql(url: str, statement: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


@pytest.fixture
def empty_db(pg_cluster) -> str:
    """A database with no backscroll schema at all."""
    name = pg_cluster.new_database()
    yield pg_cluster.url(name)
    driver.close_pools(pg_cluster.url(name))
    pg_cluster.drop_database(name)


# ------------------------------------------------------------------ schema by version


def test_no_schema_is_one_sentence_and_a_writer_creates_it(empty_db: str, tmp_path: Path) -> None:
    state = StateDir(tmp_path, database_url=empty_db)
    with pytest.raises(StoreError, match="holds no backscroll schema yet.*db init"):
        state.require()
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("m", None, "user", "heron")))
    assert state.agents() == ["main"]
    assert sql(empty_db, "SELECT value FROM backscroll.meta") == [(str(schema.SCHEMA_VERSION),)]


def test_a_newer_schema_is_refused_by_readers_and_writers(pg_url: str, tmp_path: Path) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    state.open("main", write=True).close()
    sql(pg_url, "UPDATE backscroll.meta SET value = '99' WHERE key = 'schema_version'")
    driver.close_pools(pg_url)  # what a new process would see
    for write in (False, True):
        with pytest.raises(StoreError, match="newer backscroll schema \\(version 99"):
            state.open("main", write=write)


def test_an_older_schema_waits_for_the_next_writer(pg_url: str, tmp_path: Path, monkeypatch) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("m", None, "user", "heron")))
    now = schema.SCHEMA_VERSION
    migrations = [*schema.MIGRATIONS, ("9999_later_feature", "CREATE TABLE later_feature (x int);")]
    monkeypatch.setattr(schema, "MIGRATIONS", migrations)  # not INDEX_ONLY: the table is needed
    driver.close_pools(pg_url)
    with pytest.raises(SchemaBehind, match=f"older backscroll schema \\(version {now}\\)"):
        state.open("main")
    response = sessions_search(state, SearchRequest("heron"), OPERATOR)  # named, not raised
    assert response.indexing and "older backscroll schema" in response.as_json()["warning"]
    state.open("main", write=True).close()  # the writer migrates
    assert [r.message_id for r in sessions_search(state, SearchRequest("heron"), OPERATOR).results] == ["m"]
    assert sql(pg_url, "SELECT to_regclass('backscroll.later_feature') IS NOT NULL") == [(True,)]


def test_schema_2_fills_the_summaries_of_an_older_database(pg_url: str, tmp_path: Path) -> None:
    """What a list shows (cwd, title, last activity) and the rows' characters, filled from the
    stored events and index rows when a schema-1 database is upgraded."""
    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        meta = SessionMeta("agent:main:main")
        db.append(meta, json.dumps({"type": "session", "id": "h", "cwd": "/srv/app"}))
        db.append(meta, json.dumps(msg("a", None, "assistant", "first the assistant", ms=10)))
        db.append(meta, json.dumps(msg("u", None, "user", "then the user asks", ms=20)))
    columns = "cwd, title, last_message_at, index_chars, index_rows"
    before = sql(pg_url, f"SELECT {columns} FROM backscroll.sessions")
    assert before[0][:3] == ("/srv/app", "then the user asks", BASE_MS + 20)
    assert before[0][3] == len("first the assistant") + len("then the user asks")
    pg_downgrade(pg_url, 4)
    sql(pg_url, "ALTER TABLE backscroll.sessions DROP COLUMN cwd, DROP COLUMN title, "
        "DROP COLUMN last_message_at, DROP COLUMN index_chars")
    sql(pg_url, "DROP TABLE backscroll.source_files, backscroll.source_syncs")
    sql(pg_url, "DROP INDEX backscroll.sessions_by_spawner, backscroll.sessions_by_parent")  # 4's
    sql(pg_url, "DROP TABLE backscroll.branch_messages")  # schema 3's
    sql(pg_url, "ALTER TABLE backscroll.sessions DROP COLUMN branch_seq")
    sql(pg_url, "DROP FUNCTION backscroll.header_cwd")
    sql(pg_url, "ALTER TABLE backscroll.sessions ADD COLUMN index_tokens bigint NOT NULL DEFAULT 0")
    sql(pg_url, "ALTER TABLE backscroll.message_index ADD COLUMN ntokens int NOT NULL DEFAULT 0")
    sql(pg_url, "CREATE TABLE backscroll.lexeme_df (agent_id text, lexeme text, rows int)")
    sql(pg_url, "UPDATE backscroll.meta SET value = '1' WHERE key = 'schema_version'")
    driver.close_pools(pg_url)
    state.open("main", write=True).close()  # the writer migrates
    assert sql(pg_url, f"SELECT {columns} FROM backscroll.sessions") == before


def test_an_indexer_version_change_rebuilds_everything(pg_url: str, tmp_path: Path) -> None:
    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        for n in range(3):
            db.append(SessionMeta(f"agent:main:s{n}"), json.dumps(msg(f"m{n}", None, "user", "kiwi")))
    sql(pg_url, "UPDATE backscroll.sessions SET indexer_version = 1")  # indexed by an older build
    response = sessions_search(state, SearchRequest("kiwi"), OPERATOR)
    assert response.results == [] and response.indexing
    assert reconcile_agent(state, "main").sessions == 3
    assert len(sessions_search(state, SearchRequest("kiwi"), OPERATOR).results) == 3


# ------------------------------------------------------------------ db init and the roles


def test_print_sql_is_the_whole_schema_and_runs_as_is(capsys, monkeypatch, empty_db: str,
                                                      tmp_path: Path) -> None:
    code, out, err = run(capsys, monkeypatch, "db", "init", "--print-sql")
    assert code == 0 and out == database_init_sql()
    assert "CREATE TABLE message_index" in out and "backscroll_reader" in out
    with psycopg.connect(empty_db, autocommit=True) as conn:
        conn.execute(out)
    state = StateDir(tmp_path, database_url=empty_db)
    state.require()  # a current schema: readable at once
    with state.open("main", write=True) as db:
        assert db.append(SessionMeta("agent:main:main"), json.dumps(msg("m", None, "user", "x"))
                         ).outcome == "indexed"


def login_role(cluster, group: str) -> tuple[str, str]:
    """A login in ``group`` (made here when no `db init` of this run has made it yet)."""
    cluster.sql(f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{group}') "
                f"THEN CREATE ROLE {group} NOLOGIN; END IF; END $$")
    name, password = f"u_{uuid.uuid4().hex[:10]}", f"pw-{uuid.uuid4().hex}"
    cluster.sql(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' IN ROLE {group}")
    return name, password


def test_writer_and_read_only_roles(pg_cluster, empty_db: str, tmp_path: Path, capsys, monkeypatch,
                                    data_dir: Path) -> None:
    code, out, err = run(capsys, monkeypatch, "db", "init", "--url", empty_db)
    assert code == 0 and "created the backscroll schema" in out
    code, out, err = run(capsys, monkeypatch, "db", "init", "--url", empty_db, "--json")
    assert json.loads(out)["schemaBefore"] == schema.SCHEMA_VERSION  # again: nothing to do
    database = empty_db.split("@/")[1].split("?")[0]
    writer, writer_pw = login_role(pg_cluster, schema.WRITER_ROLE)
    reader, reader_pw = login_role(pg_cluster, schema.READER_ROLE)
    writer_url = pg_cluster.url(database, writer, writer_pw)
    reader_url = pg_cluster.url(database, reader, reader_pw)
    state = str(tmp_path / "state")

    def cli(url: str, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        code, out, err = run(capsys, monkeypatch, *argv, "--state-dir", state, "--database", url,
                             stdin=stdin)
        assert writer_pw not in out + err and reader_pw not in out + err
        return code, out, err

    events = "\n".join(lines(msg("u1", None, "user", "the nightly backup failed")))
    assert cli(writer_url, "append", "agent:main:main", stdin=events)[0] == 0
    assert cli(writer_url, "import", "openclaw", str(data_dir / "openclaw"))[0] == 0
    assert cli(writer_url, "reindex")[0] == 0
    code, out, _ = cli(reader_url, "search", "backup", "--json")
    assert code == 0 and [r["messageId"] for r in json.loads(out)["results"]] == ["u1"]
    assert cli(reader_url, "history", "agent:main:main", "--json")[0] == 0
    code, out, _ = cli(reader_url, "status", "--json")
    assert code == 0 and f"{reader}:***@" in json.loads(out)["backend"]
    for argv, stdin in [
        (("append", "agent:main:main"), events),
        (("delete", "agent:main:main"), ""),
        (("reindex",), ""),
        (("import", "openclaw", str(data_dir / "openclaw")), ""),
    ]:
        code, _out, err = cli(reader_url, *argv, stdin=stdin)
        assert code == Forbidden.exit_code and one_sentence(err), (argv, err)
        assert "may not do this" in err or "read-only" in err, err
    assert cli(writer_url, "verify")[0] == 0  # the refused writes left nothing behind
    with pytest.raises(Forbidden):
        StateDir(tmp_path, database_url=reader_url).open("newagent", write=True)


@pytest.mark.slow
def test_the_tree_read_walks_the_link_indexes(pg_url: str, tmp_path: Path, monkeypatch) -> None:
    """Schema 4's indexes are what a session caller's tree read (its own spawned tree, link
    by link) looks up: the real query's plan uses both."""
    state = StateDir(tmp_path, database_url=pg_url)
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:root"), json.dumps(msg("r", None, "user", "x")))
        for n in range(3):
            db.append(SessionMeta(f"agent:main:c{n}", spawned_by="agent:main:root"),
                      json.dumps(msg(f"c{n}", None, "user", "x")))
        db.append(SessionMeta("agent:main:t", parent_key="agent:main:c0"),
                  json.dumps(msg("t", None, "user", "x")))
        db.append(SessionMeta("agent:main:other"), json.dumps(msg("o", None, "user", "x")))
    # an agent of 20,000 sessions (the plan depends on the table's size and statistics)
    sql(pg_url, "INSERT INTO backscroll.sessions (agent_id, key, session_id, spawned_by, "
        "created_at, updated_at, state) SELECT 'main', 'agent:main:n' || g, 'n' || g, "
        "CASE WHEN g %% 10 > 0 THEN 'agent:main:n' || (g - g %% 10) END, 0, 0, 'clean' "
        "FROM generate_series(1, 20000) AS g")
    sql(pg_url, "ANALYZE backscroll.sessions")
    with state.open("main") as reader:
        below = sorted(b.key for b in reader.session_briefs(below="agent:main:ROOT"))
        assert below == ["agent:main:c0", "agent:main:c1", "agent:main:c2", "agent:main:root",
                         "agent:main:t"]
        plans: list[str] = []
        real = reader._all

        def explain(sql: str, params=None) -> list:
            plans.append("\n".join(row[0] for row in real("EXPLAIN " + sql, params)))
            return []

        monkeypatch.setattr(reader, "_all", explain)
        reader.session_briefs(below="agent:main:root")
    assert "sessions_by_spawner" in plans[0] and "sessions_by_parent" in plans[0], plans[0]


def schema_4_set_back(pg_cluster, url: str, version: int, capsys, monkeypatch,
                      indexes: tuple[str, ...] = ("sessions_by_spawner", "sessions_by_parent"),
                      named: str | None = None) -> tuple[str, str]:
    """``url``'s database made by `db init`, then marked as holding schema ``version`` without
    the ``indexes`` of a later migration; a writer's and a reader's URL (logins that do not
    own it). The schema is as a backscroll from before named migrations left it (no table of
    names: ``meta.schema_version`` only), or with ``named`` as one that lacks that step only."""
    assert run(capsys, monkeypatch, "db", "init", "--url", url)[0] == 0
    sql(url, "DROP INDEX " + ", ".join(f"backscroll.{name}" for name in indexes))
    if named is None:
        sql(url, "DROP TABLE backscroll.migrations")
    else:
        sql(url, f"DELETE FROM backscroll.migrations WHERE name = '{named}'")
    sql(url, f"UPDATE backscroll.meta SET value = '{version}' WHERE key = 'schema_version'")
    driver.close_pools(url)
    database = url.split("@/")[1].split("?")[0]
    return (pg_cluster.url(database, *login_role(pg_cluster, schema.WRITER_ROLE)),
            pg_cluster.url(database, *login_role(pg_cluster, schema.READER_ROLE)))


def test_a_writer_who_is_not_the_owner_works_on_a_schema_only_missing_indexes(
        pg_cluster, empty_db: str, tmp_path: Path, capsys, monkeypatch) -> None:
    """A member of the writer role may not create indexes (the owner may): on a schema whose
    missing migrations add indexes only (``INDEX_ONLY``), it writes and searches as it is,
    readers too, and the owner's `db init` upgrades it later. (Schema 4 was such a migration;
    schema 5's host column and 0006's archived flag are not, so a later index-only migration
    stands in for it.)"""
    base = schema.SCHEMA_VERSION  # every step but the later one (named: 0006 is not index-only)
    later = base + 1
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, (
        "9999_sessions_later", "CREATE INDEX sessions_later ON sessions (agent_id, created_at);")])
    monkeypatch.setattr(schema, "INDEX_ONLY", schema.INDEX_ONLY | {"9999_sessions_later"})
    writer_url, reader_url = schema_4_set_back(pg_cluster, empty_db, base, capsys, monkeypatch,
                                               ("sessions_later",), named="9999_sessions_later")
    state = str(tmp_path / "state")

    def cli(url: str, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        return run(capsys, monkeypatch, *argv, "--state-dir", state, "--database", url, stdin=stdin)

    events = "\n".join(lines(msg("u1", None, "user", "the nightly backup failed")))
    code, _out, err = cli(writer_url, "append", "agent:main:main", stdin=events)
    assert code == 0, err
    for url in (writer_url, reader_url):
        code, out, err = cli(url, "search", "backup", "--json")
        found = json.loads(out)
        assert code == 0 and [r["messageId"] for r in found["results"]] == ["u1"], err
        assert not found.get("indexing") and "warning" not in found
    version = "SELECT value FROM backscroll.meta WHERE key = 'schema_version'"
    assert sql(empty_db, version) == [(str(base),)]
    code, out, _err = run(capsys, monkeypatch, "db", "init", "--url", empty_db, "--json")
    assert code == 0 and json.loads(out)["schemaBefore"] == base
    assert sql(empty_db, version) == [(str(later),)]
    assert sql(empty_db, "SELECT count(*) FROM pg_indexes WHERE indexname = 'sessions_later'"
               ) == [(1,)]


def test_a_writer_who_is_not_the_owner_is_told_who_upgrades_an_older_schema(
        pg_cluster, empty_db: str, tmp_path: Path, capsys, monkeypatch) -> None:
    """Lacking more than indexes (``INDEX_ONLY``), the writer may not go on, and the cure is
    the owner's `db init`, not "the writer role" the writer already has."""
    older = schema.NUMBERED - 1
    writer_url, _reader_url = schema_4_set_back(pg_cluster, empty_db, older, capsys, monkeypatch)
    events = "\n".join(lines(msg("u1", None, "user", "the nightly backup failed")))
    code, _out, err = run(capsys, monkeypatch, "append", "agent:main:main", "--state-dir",
                          str(tmp_path), "--database", writer_url, stdin=events)
    assert code == 3 and one_sentence(err), err
    assert f"holds an older backscroll schema (version {older}) that this role may not " \
        "upgrade: run `backscroll db init --url URL` as the schema's owner" in err
    assert "writer role" not in err
    assert sql(empty_db, "SELECT count(*) FROM backscroll.events") == [(0,)]


# ------------------------------------------------------------------ bad input, one sentence


def test_wrong_urls_servers_and_credentials_are_one_sentence(pg_cluster, pg_url: str, capsys,
                                                             monkeypatch, tmp_path: Path) -> None:
    database = pg_url.split("@/")[1].split("?")[0]
    user, password = login_role(pg_cluster, schema.READER_ROLE)
    cases = [
        ("mysql://root:hunter2secret@db.example/x", 2, "is not a PostgreSQL URL"),
        (f"postgresql://u:hunter2secret@/x?host={tmp_path}/nowhere&port=5432", 1, "cannot connect"),
        (pg_cluster.url(database, user, "hunter2secret"), 1, "password authentication failed"),
        ("postgresql://u:hunter2secret@localhost:notaport/x", 2, "cannot use the database URL"),
        (pg_cluster.url("no_such_db", user, password), 1, "does not exist"),
    ]
    for url, exit_code, words in cases:
        code, out, err = run(capsys, monkeypatch, "search", "x", "--database", url,
                             "--state-dir", str(tmp_path))
        assert code == exit_code and one_sentence(err) and words in err, (url, err)
        assert "hunter2secret" not in err + out and password not in err + out
        assert "***" in err


def test_the_driver_is_loaded_only_for_a_url_and_named_when_missing(pg_url: str, tmp_path: Path,
                                                                     monkeypatch, capsys) -> None:
    code = (
        "import sys, json\n"
        "from backscroll.tui.cli import main\n"
        f"main(['search', 'x', '--state-dir', {str(tmp_path / 's')!r}, '--json'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('psycopg'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    driver.close_pools(pg_url)
    code, out, err = run(capsys, monkeypatch, "status", "--database", pg_url)
    assert code == 1 and one_sentence(err) and "pip install 'backscroll[postgres]'" in err


@given(
    user=st.text("abcdefghij", min_size=1, max_size=8),
    password=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="*"),
                     max_size=20),
)
def test_a_password_never_survives_masking(user: str, password: str) -> None:
    password += "#9!"  # never a piece of the rest of the URL

    url = f"postgresql://{user}:{quote(password, safe='')}@db.example:5432/team?sslmode=require"
    shown = mask_url(url)
    assert shown == f"postgresql://{user}:***@db.example:5432/team?sslmode=require"
    message = f"cannot connect to {url}: password {password!r} for {quote(password, safe='')}"
    cleaned = mask_secrets(message, url)
    assert password not in cleaned.replace(shown, "") and quote(password, safe="") not in cleaned
    query_url = f"postgresql://db.example/team?user={user}&password={quote(password, safe='')}"
    assert quote(password, safe="") not in mask_url(query_url)


def test_a_short_password_is_masked_where_it_stands_whole() -> None:
    """Not inside other words: the password "x" masked everywhere made "timeout e***pired"."""
    url = "postgresql://ann:x@db.example/team"
    message = f"cannot connect to {url}: connection timeout expired (password x, 'x')"
    assert mask_secrets(message, url) == (
        "cannot connect to postgresql://ann:***@db.example/team: connection timeout expired "
        "(password ***, '***')"
    )
    long_url = "postgresql://ann:k7Vq2pLm9@db.example/team"  # a long one: wherever it stands
    assert mask_secrets("seen: xk7Vq2pLm9x", long_url) == "seen: x***x"
    for password, text, masked in [
        ("hunter22", "hunter22 hunter22x", "*** ***x"),  # 8 characters: wherever it stands
        ("hunter2", "hunter2 hunter2x", "*** hunter2x"),  # 7: whole only
        ("pa$$", "pa$$word", "***word"),  # an end that is no letter cuts no word
        ("-x-", "a-x-b", "a***b"),
        ("a.b*c+d", "a.b*c+d aXbbc+d", "*** aXbbc+d"),  # regular expression characters: literal
        ("bö", "bö böse über", "*** böse über"),  # letters of any script
    ]:
        url = f"postgresql://ann:{quote(password, safe='')}@db.example/team"
        assert mask_secrets(text, url) == masked, password


@pytest.mark.parametrize("url", [
    "postgresql://db.example/team?user=me@corp.example&password=s3cret",  # an @ in the query
    "postgresql://ann:a/b@db.example/team?sslpassword=s3cret",  # a cut user info
    "postgresql://[::1/team?password=s3cret",  # not parsed at all
])
def test_a_query_password_stays_hidden_in_a_url_read_loosely(url: str) -> None:
    """A URL read loosely (an ``@`` after the host, or no parse at all) hides its query's
    password too: the refusal sentence showed ``password=s3cret``."""
    assert "s3cret" not in mask_url(url) and "***" in mask_url(url)
    with pytest.raises(ValidationError) as refused:
        check_url(url)
    assert "s3cret" not in str(refused.value)


def test_a_url_without_a_password_is_shown_as_given() -> None:
    for url in ("sqlite:///x", "postgresql:///team?host=/tmp", "postgresql://ann@db/team"):
        assert mask_url(url) == url


def test_a_bad_url_is_refused_before_anything_happens(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not a PostgreSQL URL") as refused:
        StateDir(tmp_path, database_url="sqlite:///x")
    assert "sqlite:///x" in str(refused.value)
    assert not (tmp_path / "agents").exists()


@given(before=st.text("ab/#?@:%&=!", max_size=8), after=st.text("ab/#?@:%&=!", max_size=8))
def test_a_password_written_unescaped_is_never_shown(before: str, after: str) -> None:
    """``/``, ``#`` or ``?`` in a raw password make a URL parser end the user info early and
    read the rest as a path or fragment; the password must stay hidden all the same."""
    url = f"postgresql://ann:{before}Zq9{after}@db.example/team?host=/tmp"
    assert "Zq9" not in mask_url(url)
    message = f"cannot connect to {url}: password {before}Zq9{after} refused for ann"
    assert "Zq9" not in mask_secrets(message, url)
    if set("/#?") & set(before + after):
        with pytest.raises(ValidationError, match="must be percent-encoded") as refused:
            check_url(url)
        assert "Zq9" not in str(refused.value)
