"""A database as an older backscroll left it: what each migration of
``core/storage/sqlite/schema.py`` added, taken away again, for tests of what the next
writer's migration does with it. The states are the numbered ones from before migrations had
names: no table of names, the version number only (``core/storage/migrations.py``)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from backscroll.core.storage.sqlite.schema import SCHEMA_VERSION

UNDO = {  # keyed by the step's place in MIGRATIONS
    12: "DROP TABLE session_facts; DROP TABLE usage_days;",  # 0012_session_facts
    11: "DROP TABLE tool_index; DROP TABLE tool_fts; "  # 0011_tool_calls
        "ALTER TABLE index_state DROP COLUMN tool_rows; "
        "ALTER TABLE index_state DROP COLUMN tool_chars;",
    10: "ALTER TABLE sessions DROP COLUMN archived;",
    9: "DROP INDEX sessions_by_spawner; DROP INDEX sessions_by_parent;",
    8: "DROP TRIGGER index_totals_added; DROP TRIGGER index_totals_removed; "
       "DROP TRIGGER index_totals_changed; DROP TABLE index_totals;",
    7: "DROP TABLE branch_messages; ALTER TABLE index_state DROP COLUMN branch_seq;",
    6: "DROP INDEX events_messages;",
    5: "DROP INDEX sessions_by_activity; ALTER TABLE sessions DROP COLUMN cwd; "
       "ALTER TABLE sessions DROP COLUMN title; ALTER TABLE sessions DROP COLUMN last_message_at;",
}


def downgrade(path: Path, version: int) -> None:
    """Take the current-schema database at ``path`` back to schema ``version``."""
    steps = range(SCHEMA_VERSION, version, -1)
    assert all(n in UNDO for n in steps), "a new migration needs its UNDO entry"
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(" ".join(UNDO[n] for n in steps) + " DROP TABLE migrations;"
                           f" PRAGMA user_version = {version};")


# What each PostgreSQL migration (core/storage/postgres/schema.py) added, taken away again.
PG_UNDO = {  # keyed by place, as UNDO
    8: "DROP TABLE backscroll.session_facts; DROP TABLE backscroll.usage_days;",  # 0008
    7: "DROP TABLE backscroll.tool_index; ALTER TABLE backscroll.sessions DROP COLUMN tool_rows, "
       "DROP COLUMN tool_chars;",  # 0007_tool_calls
    6: "ALTER TABLE backscroll.sessions DROP COLUMN archived;",
    5: """
    DROP INDEX backscroll.sessions_by_key;
    ALTER TABLE backscroll.sessions DROP COLUMN host CASCADE;
    ALTER TABLE backscroll.sessions ADD UNIQUE (agent_id, key), ADD UNIQUE (agent_id, session_id);
    CREATE TRIGGER sessions_changed AFTER UPDATE ON backscroll.sessions FOR EACH ROW
        WHEN (OLD.key IS DISTINCT FROM NEW.key
              OR OLD.spawned_by IS DISTINCT FROM NEW.spawned_by
              OR OLD.parent_key IS DISTINCT FROM NEW.parent_key
              OR OLD.state IS DISTINCT FROM NEW.state
              OR OLD.indexer_version IS DISTINCT FROM NEW.indexer_version)
        EXECUTE FUNCTION backscroll.bump_visibility_rev();
    ALTER TABLE backscroll.source_files DROP COLUMN host, ADD PRIMARY KEY (agent_id, path);
    ALTER TABLE backscroll.source_syncs DROP COLUMN host, ADD PRIMARY KEY (agent_id, root);
    """,
}


def pg_downgrade(url: str, version: int) -> None:
    """Take the current-schema PostgreSQL database at ``url`` back to schema ``version`` (as
    far as ``PG_UNDO`` knows: steps below it are the test's own)."""
    import psycopg

    from backscroll.core.storage.postgres.schema import SCHEMA_VERSION as PG_VERSION

    with psycopg.connect(url, autocommit=True) as conn:
        for n in range(PG_VERSION, version, -1):
            if n in PG_UNDO:
                conn.execute(PG_UNDO[n])
        conn.execute("DROP TABLE backscroll.migrations")
        conn.execute("UPDATE backscroll.meta SET value = %s WHERE key = 'schema_version'",
                     (str(version),))


def undo_named(path: Path, version: int) -> None:
    """Take the current-schema SQLite database at ``path`` back to the named state of its first
    ``version`` steps (its table of names kept, the later names taken out), as a backscroll with
    only those steps left it."""
    from backscroll.core.storage.sqlite.schema import MIGRATIONS

    steps = range(SCHEMA_VERSION, version, -1)
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(" ".join(UNDO[n] for n in steps) + f" PRAGMA user_version = {version};")
        conn.executemany("DELETE FROM migrations WHERE name = ?",
                         [(MIGRATIONS[n - 1][0],) for n in steps])
        conn.commit()


def pg_undo_named(url: str, version: int) -> None:
    """``undo_named`` for PostgreSQL: back to the named state of the first ``version`` steps."""
    import psycopg

    from backscroll.core.storage.postgres.schema import MIGRATIONS as PG_MIGRATIONS

    with psycopg.connect(url, autocommit=True) as conn:
        for n in range(len(PG_MIGRATIONS), version, -1):
            conn.execute(PG_UNDO[n])
            conn.execute("DELETE FROM backscroll.migrations WHERE name = %s",
                         (PG_MIGRATIONS[n - 1][0],))
        conn.execute("UPDATE backscroll.meta SET value = %s WHERE key = 'schema_version'",
                     (str(version),))
