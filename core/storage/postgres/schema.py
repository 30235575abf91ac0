"""The PostgreSQL schema (``backscroll``), its migrations recorded by name, and the two roles.

One schema for every agent: ``agent_id`` is a column. ``MIGRATIONS`` are named steps, applied
in order and recorded in ``backscroll.migrations`` inside one transaction, under an advisory
lock so two hosts starting at once migrate once (the rule: ``core/storage/migrations.py``);
``meta.schema_version`` counts them, and a schema from before names is known by it. A schema
newer than this code (a name it does not know, or a larger count) is refused in one sentence.
The roles: ``backscroll_writer`` (agent hosts: append, import, sync, reconcile) and
``backscroll_reader`` (support staff: search, history, the browser); both are group roles
without login, people and hosts log in as members (docs/postgres.md).
"""

from __future__ import annotations

from typing import Any

from ...errors import StoreError
from ..dburl import mask_url
from ..migrations import Recorded, Step, applied, check_names, pending, readable, unknown
from ..model import now_ms

SCHEMA = "backscroll"
WRITER_ROLE = "backscroll_writer"
READER_ROLE = "backscroll_reader"
_LOCK_ID = 0x6261636B  # "back": the advisory lock migrations hold

MIGRATIONS: list[Step] = [
    ("0001_tables", """
    CREATE TABLE meta (
        key   text PRIMARY KEY,
        value text NOT NULL
    );

    -- One row per agent; visibility_rev moves (trigger below) whenever what a search may use
    -- changes: a session appears or goes, its links change, or its index state does. Its
    -- values come from a sequence, so a recreated agent never repeats an old one.
    CREATE SEQUENCE visibility_revs;
    CREATE TABLE agents (
        agent_id       text PRIMARY KEY,
        visibility_rev bigint NOT NULL DEFAULT nextval('visibility_revs'),
        created_at     bigint NOT NULL
    );

    -- One row per session, with its index state (SPEC 8) and the statistics bm25 needs.
    CREATE TABLE sessions (
        pk              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent_id        text NOT NULL REFERENCES agents ON DELETE CASCADE,
        key             text NOT NULL,             -- agent:<agentId>:<rest>, lower-cased
        session_id      text NOT NULL,
        spawned_by      text,
        parent_key      text,
        label           text,
        source          text NOT NULL DEFAULT 'live',
        created_at      bigint NOT NULL,           -- epoch ms
        updated_at      bigint NOT NULL,
        last_seq        integer NOT NULL DEFAULT 0,
        leaf_id         text,
        messages        integer NOT NULL DEFAULT 0, -- stored message events
        state           text NOT NULL CHECK (state IN ('clean', 'dirty', 'claimed')),
        indexed_seq     integer NOT NULL DEFAULT 0,
        indexed_leaf    text,
        indexer_version integer NOT NULL DEFAULT 0, -- 0 = never indexed
        claim_owner     text,
        claim_expires   bigint,
        problems        text,
        index_rows      integer NOT NULL DEFAULT 0, -- rows and tokens it holds in message_index
        index_tokens    bigint NOT NULL DEFAULT 0,
        UNIQUE (agent_id, key),
        UNIQUE (agent_id, session_id)
    );
    CREATE INDEX sessions_dirty ON sessions (agent_id, pk) WHERE state <> 'clean';
    CREATE INDEX sessions_by_version ON sessions (agent_id, indexer_version);

    -- The append-only event log, one OpenClaw JSONL entry per row, verbatim.
    CREATE TABLE events (
        session_pk bigint NOT NULL REFERENCES sessions ON DELETE CASCADE,
        seq        integer NOT NULL,
        entry_id   text,
        kind       text NOT NULL,
        body       text NOT NULL,
        PRIMARY KEY (session_pk, seq)
    );
    CREATE INDEX events_by_entry ON events (session_pk, entry_id) WHERE entry_id IS NOT NULL;

    -- Index rows: rowid = message time (ms) << 12 | slot, per agent, as in SQLite. tsv holds
    -- the tokens of the SQLite path with their positions (fts.py); ntokens is bm25's |D|.
    -- The text lives apart (message_text), so the rows a search walks stay narrow.
    CREATE TABLE message_index (
        agent_id   text NOT NULL,
        rowid      bigint NOT NULL,
        session_pk bigint NOT NULL REFERENCES sessions ON DELETE CASCADE,
        entry_id   text NOT NULL,
        role       text NOT NULL,
        ts         bigint NOT NULL,
        ntokens    integer NOT NULL,
        exact      boolean NOT NULL,
        tsv        tsvector NOT NULL,
        PRIMARY KEY (agent_id, rowid)
    );
    CREATE INDEX message_index_by_session ON message_index (session_pk, rowid);
    CREATE INDEX message_tsv ON message_index USING gin (tsv) WHERE exact;
    CREATE INDEX message_tsv_checked ON message_index USING gin (tsv) WHERE NOT exact;

    -- The redacted, segmented text of each index row: read for the rows a search keeps.
    CREATE TABLE message_text (
        agent_id text NOT NULL,
        rowid    bigint NOT NULL,
        body     text NOT NULL,
        PRIMARY KEY (agent_id, rowid),
        FOREIGN KEY (agent_id, rowid) REFERENCES message_index ON DELETE CASCADE
    );

    -- bm25's document frequencies: how many exact index rows of the agent hold each lexeme,
    -- kept by the write path in the same transactions as the rows (matching.py reads them).
    CREATE TABLE lexeme_df (
        agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
        lexeme   text COLLATE "C" NOT NULL,
        rows     integer NOT NULL,
        PRIMARY KEY (agent_id, lexeme)
    );

    -- Reconciliation progress and the reconciler lease, one row per agent (SPEC 8).
    CREATE TABLE reconcile_progress (
        agent_id        text PRIMARY KEY REFERENCES agents ON DELETE CASCADE,
        run_id          text,
        state           text NOT NULL DEFAULT 'idle',
        started_at      bigint,
        updated_at      bigint,
        sessions_done   integer NOT NULL DEFAULT 0,
        sessions_total  integer NOT NULL DEFAULT 0,
        messages_done   bigint NOT NULL DEFAULT 0,
        current_session text,
        owner           text,
        lease_expires   bigint
    );

    CREATE FUNCTION bump_visibility_rev() RETURNS trigger LANGUAGE plpgsql
    SET search_path = backscroll, pg_catalog AS $$
    BEGIN
        UPDATE agents SET visibility_rev = nextval('visibility_revs')
        WHERE agent_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.agent_id ELSE NEW.agent_id END;
        RETURN NULL;
    END $$;
    CREATE TRIGGER sessions_added_or_removed AFTER INSERT OR DELETE ON sessions
        FOR EACH ROW EXECUTE FUNCTION bump_visibility_rev();
    CREATE TRIGGER sessions_changed AFTER UPDATE ON sessions FOR EACH ROW
        WHEN (OLD.key IS DISTINCT FROM NEW.key
              OR OLD.spawned_by IS DISTINCT FROM NEW.spawned_by
              OR OLD.parent_key IS DISTINCT FROM NEW.parent_key
              OR OLD.state IS DISTINCT FROM NEW.state
              OR OLD.indexer_version IS DISTINCT FROM NEW.indexer_version)
        EXECUTE FUNCTION bump_visibility_rev();
    """),
]

# What a list of conversations shows of a session, kept in ``sessions`` so a listing never
# reads transcripts (as SQLite's migration 5): the header's cwd, the first user message's
# first 400 characters (written by the write path, ``writes.refresh_summary``), the
# newest message's time; and the characters of the session's index rows (ranking's average
# length over a caller's visible messages, as SQLite's ``index_state.chars``).
MIGRATIONS.append(("0002_session_summaries", """
    ALTER TABLE sessions ADD COLUMN cwd text;
    ALTER TABLE sessions ADD COLUMN title text;
    ALTER TABLE sessions ADD COLUMN last_message_at bigint;
    ALTER TABLE sessions ADD COLUMN index_chars bigint NOT NULL DEFAULT 0;
    -- Ranking moved to core/rank.py (both backends): bm25's tokens and frequencies go.
    ALTER TABLE sessions DROP COLUMN index_tokens;
    ALTER TABLE message_index DROP COLUMN ntokens;
    DROP TABLE lexeme_df;

    CREATE FUNCTION header_cwd(body text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
        RETURN CASE WHEN jsonb_typeof(body::jsonb -> 'cwd') = 'string'
                    THEN body::jsonb ->> 'cwd' END;
    EXCEPTION WHEN others THEN
        RETURN NULL;  -- not JSON: no cwd
    END $$;

    UPDATE sessions s SET
        cwd = (SELECT header_cwd(e.body) FROM events e
               WHERE e.session_pk = s.pk AND e.kind = 'session' ORDER BY e.seq LIMIT 1),
        last_message_at = (SELECT max(m.ts) FROM message_index m WHERE m.session_pk = s.pk),
        title = (SELECT replace(left(t.body, 400), chr(8203), '') FROM message_index m
                 JOIN message_text t USING (agent_id, rowid)
                 WHERE m.session_pk = s.pk AND m.role = 'user' ORDER BY m.rowid LIMIT 1),
        index_chars = (SELECT coalesce(sum(length(t.body)), 0) FROM message_index m
                       JOIN message_text t USING (agent_id, rowid) WHERE m.session_pk = s.pk);
    CREATE INDEX sessions_by_activity
        ON sessions (agent_id, (coalesce(last_message_at, updated_at)));

    -- Live sources (SPEC 14), per agent as in SQLite: what was taken in from each transcript
    -- file (written in the same transaction as its events) and when each folder was synced.
    CREATE TABLE source_files (
        agent_id      text NOT NULL REFERENCES agents ON DELETE CASCADE,
        path          text NOT NULL,
        kind          text NOT NULL,
        root          text NOT NULL,
        device        bigint NOT NULL,
        inode         bigint NOT NULL,
        size          bigint NOT NULL,
        mtime_ns      bigint NOT NULL,
        done_bytes    bigint NOT NULL DEFAULT 0,
        done_lines    bigint NOT NULL DEFAULT 0,
        head_hash     text NOT NULL DEFAULT '',
        tail_hash     text NOT NULL DEFAULT '',
        context       text,
        sessions      text NOT NULL DEFAULT '[]',
        synced_at     bigint NOT NULL,
        missing_since bigint,
        problem       text,
        PRIMARY KEY (agent_id, path)
    );
    CREATE TABLE source_syncs (
        agent_id  text NOT NULL REFERENCES agents ON DELETE CASCADE,
        root      text NOT NULL,
        kind      text NOT NULL,
        synced_at bigint NOT NULL,
        PRIMARY KEY (agent_id, root)
    );
"""))

# The messages of each session's active branch that a conversation shows, as SQLite's
# migration 7: rebuilds write them, an append that extends the branch adds its message, and
# while branch_seq lags behind last_seq readers compute the branch from the log.
MIGRATIONS.append(("0003_branch_messages", """
    CREATE TABLE branch_messages (
        session_pk bigint NOT NULL REFERENCES sessions ON DELETE CASCADE,
        seq        integer NOT NULL,
        entry_id   text,
        role       text NOT NULL,
        at         bigint,
        PRIMARY KEY (session_pk, seq)
    );
    ALTER TABLE sessions ADD COLUMN branch_seq integer NOT NULL DEFAULT 0;
"""))

# A session caller whose visible set is its spawned tree reads that tree only, following the
# links down from its own session (``reads.session_briefs(below=...)``): each step an index
# lookup instead of a read of every session of the agent, as SQLite's migration 9.
MIGRATIONS.append(("0004_link_indexes", """
    CREATE INDEX sessions_by_spawner ON sessions (agent_id, lower(spawned_by));
    CREATE INDEX sessions_by_parent ON sessions (agent_id, lower(parent_key));
"""))

# The host each session came from (core/hosts.py): two hosts' ``agent:main:main`` are two
# sessions, each under its host, so a session is unique per (agent, host, key) and per (agent,
# host, session id). Sessions stored before keep the host "" until their host writes to them
# (``writes._locked`` claims them). A host change moves the visibility revision.
MIGRATIONS.append(("0005_session_hosts", """
    ALTER TABLE sessions ADD COLUMN host text NOT NULL DEFAULT '';
    ALTER TABLE sessions DROP CONSTRAINT sessions_agent_id_key_key;
    ALTER TABLE sessions DROP CONSTRAINT sessions_agent_id_session_id_key;
    ALTER TABLE sessions ADD CONSTRAINT sessions_host_key UNIQUE (agent_id, host, key);
    ALTER TABLE sessions ADD CONSTRAINT sessions_host_session_id
        UNIQUE (agent_id, host, session_id);
    -- A key looked up without its host (the operator's history, key_hosts) reads this.
    CREATE INDEX sessions_by_key ON sessions (agent_id, key);
    DROP TRIGGER sessions_changed ON sessions;
    CREATE TRIGGER sessions_changed AFTER UPDATE ON sessions FOR EACH ROW
        WHEN (OLD.key IS DISTINCT FROM NEW.key
              OR OLD.host IS DISTINCT FROM NEW.host
              OR OLD.spawned_by IS DISTINCT FROM NEW.spawned_by
              OR OLD.parent_key IS DISTINCT FROM NEW.parent_key
              OR OLD.state IS DISTINCT FROM NEW.state
              OR OLD.indexer_version IS DISTINCT FROM NEW.indexer_version)
        EXECUTE FUNCTION bump_visibility_rev();

    -- What each host's live sources took in is that host's: two hosts may sync the same path.
    ALTER TABLE source_files ADD COLUMN host text NOT NULL DEFAULT '';
    ALTER TABLE source_files DROP CONSTRAINT source_files_pkey;
    ALTER TABLE source_files ADD PRIMARY KEY (agent_id, host, path);
    ALTER TABLE source_syncs ADD COLUMN host text NOT NULL DEFAULT '';
    ALTER TABLE source_syncs DROP CONSTRAINT source_syncs_pkey;
    ALTER TABLE source_syncs ADD PRIMARY KEY (agent_id, host, root);
"""))

# A session whose transcript its agent moved to a cold archive (OpenClaw's store) says so in a
# column of its own (SessionRow.archived), as in the SQLite backend (0010_session_archived).
MIGRATIONS.append(("0006_session_archived", """
    ALTER TABLE sessions ADD COLUMN archived boolean NOT NULL DEFAULT false;
"""))

# The tool-call index (issue 26, docs/tool-calls.md), as SQLite's 0011_tool_calls: a row per
# tool call of a session's active branch, rowid = call time << 12 | slot per agent, its tokens
# as message_index's (fts.py), its text inline (tool rows are few and short). Each session
# counts its tool rows and characters (a tool search's ranking statistics). A tool name is
# compared folding ASCII case only (lower() under the C collation), as SQLite's NOCASE.
MIGRATIONS.append(("0007_tool_calls", """
    CREATE TABLE tool_index (
        agent_id        text NOT NULL,
        rowid           bigint NOT NULL,
        session_pk      bigint NOT NULL REFERENCES sessions ON DELETE CASCADE,
        entry_id        text NOT NULL,
        block           integer NOT NULL,
        call_id         text,
        tool            text NOT NULL,
        status          text NOT NULL,
        ts              bigint NOT NULL,
        duration_ms     bigint,
        result_entry_id text,
        exact           boolean NOT NULL,
        tsv             tsvector NOT NULL,
        body            text NOT NULL,
        PRIMARY KEY (agent_id, rowid)
    );
    CREATE INDEX tool_index_by_session ON tool_index (session_pk, ts);
    CREATE INDEX tool_index_open ON tool_index (session_pk, call_id) WHERE result_entry_id IS NULL;
    CREATE INDEX tool_index_by_tool ON tool_index (agent_id, lower(tool COLLATE "C"), rowid);
    CREATE INDEX tool_tsv ON tool_index USING gin (tsv) WHERE exact;
    CREATE INDEX tool_tsv_checked ON tool_index USING gin (tsv) WHERE NOT exact;
    ALTER TABLE sessions ADD COLUMN tool_rows integer NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN tool_chars bigint NOT NULL DEFAULT 0;
"""))

# The facts of each session and its usage per (UTC day, model), as SQLite's 0012_session_facts
# (core/facts.py): written with the events, replaced by a rebuild; NULL: nothing recorded it.
MIGRATIONS.append(("0008_session_facts", """
    CREATE TABLE session_facts (
        session_pk   bigint PRIMARY KEY REFERENCES sessions ON DELETE CASCADE,
        models       text NOT NULL DEFAULT '[]',
        input        bigint,
        output       bigint,
        cache_read   bigint,
        cache_write  bigint,
        cost         double precision,
        first_at     bigint,
        last_at      bigint,
        tool_calls   integer NOT NULL DEFAULT 0,
        failed_calls integer NOT NULL DEFAULT 0,
        files        text NOT NULL DEFAULT '[]',
        files_capped boolean NOT NULL DEFAULT false
    );
    CREATE TABLE usage_days (
        session_pk  bigint NOT NULL REFERENCES sessions ON DELETE CASCADE,
        day         text NOT NULL,
        model       text NOT NULL,
        input       bigint,
        output      bigint,
        cache_read  bigint,
        cache_write bigint,
        cost        double precision,
        PRIMARY KEY (session_pk, day, model)
    );
    CREATE INDEX usage_days_by_day ON usage_days (day);
"""))

# The steps numbered by hand before migrations had names: a schema without a table of names
# whose meta.schema_version is N has applied the first N of them.
NUMBERED = 5
# The steps that add indexes only: the code reads and writes a schema lacking only these as it
# is. Creating an index takes the table's owner; a writer that is only a member of the writer
# role goes on without them until the owner's `db init` (or a writer logged in as the owner)
# adds them. 0005's host column is read and written by every query: not such a step, nor
# 0006's archived column (read with every session).
INDEX_ONLY = frozenset({"0004_link_indexes"})
check_names(MIGRATIONS, INDEX_ONLY)
# meta.schema_version counts the steps applied (what an older backscroll compares).
SCHEMA_VERSION = len(MIGRATIONS)
_TABLE = "CREATE TABLE IF NOT EXISTS migrations (name text PRIMARY KEY, applied_at bigint NOT NULL)"
_RECORD = "INSERT INTO migrations (name, applied_at) VALUES (%s, %s)"
_COUNT = ("INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
          "ON CONFLICT (key) DO UPDATE SET value = excluded.value")


def roles_sql() -> str:
    """Create (if missing) the two group roles and grant them what they need."""
    tables = "ALL TABLES IN SCHEMA backscroll"
    return f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{WRITER_ROLE}') THEN
        CREATE ROLE {WRITER_ROLE} NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
        CREATE ROLE {READER_ROLE} NOLOGIN;
    END IF;
END $$;
GRANT USAGE ON SCHEMA {SCHEMA} TO {WRITER_ROLE}, {READER_ROLE};
GRANT SELECT ON {tables} TO {READER_ROLE};
GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {WRITER_ROLE};
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {SCHEMA} TO {WRITER_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA {SCHEMA} GRANT SELECT ON TABLES TO {READER_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA {SCHEMA}
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {WRITER_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA {SCHEMA} GRANT USAGE, SELECT ON SEQUENCES TO {WRITER_ROLE};
"""


def init_sql() -> str:
    """The whole schema and the roles, as one script a database owner can run (``psql``) on
    a database without one."""
    parts = ["BEGIN;", f"CREATE SCHEMA IF NOT EXISTS {SCHEMA};", f"SET search_path TO {SCHEMA};",
             _TABLE + ";"]
    for name, script in MIGRATIONS:
        parts.append(f"-- migration {name}")
        parts.append(_dedent(script))
        parts.append(f"INSERT INTO migrations (name, applied_at) VALUES "
                     f"('{name}', (extract(epoch FROM now()) * 1000)::bigint);")
    parts.append(_COUNT.replace("%s", f"'{len(MIGRATIONS)}'") + ";")
    parts.append(roles_sql().strip())
    parts.append("COMMIT;")
    return "\n".join(parts) + "\n"


def recorded(conn: Any) -> Recorded:
    """The schema's count (0: no schema yet) and, once it has a table of names, the names."""
    tables = conn.execute(
        "SELECT to_regclass('backscroll.meta') IS NOT NULL, "
        "to_regclass('backscroll.migrations') IS NOT NULL"
    ).fetchone()
    if not tables[0]:
        return Recorded(0, None)
    row = conn.execute("SELECT value FROM backscroll.meta WHERE key = 'schema_version'").fetchone()
    version = int(row[0]) if row else 0
    if not tables[1]:
        return Recorded(version, None)
    rows = conn.execute(
        "SELECT name FROM backscroll.migrations ORDER BY applied_at, name"
    ).fetchall()
    return Recorded(version, tuple(r[0] for r in rows))


def schema_version(conn: Any) -> int:
    """The schema's count of steps applied; 0 when there is none yet."""
    return recorded(conn).version


def refuse_newer(version: int, url: str) -> None:
    if version > len(MIGRATIONS):
        raise StoreError(
            f"{mask_url(url)} holds a newer backscroll schema (version {version}; this "
            f"version reads up to {len(MIGRATIONS)}): upgrade backscroll to use it"
        )


def check(state: Recorded, url: str) -> list[str]:
    """Refuse a schema from a newer backscroll in one sentence; the names it has applied."""
    refuse_newer(state.version, url)
    strange = unknown(MIGRATIONS, state, NUMBERED)
    if strange:
        raise StoreError(
            f"{mask_url(url)} holds a newer backscroll schema (migration {strange[0]} is not one "
            "this version knows): upgrade backscroll to use it"
        )
    return applied(MIGRATIONS, state, NUMBERED)


def works(done: list[str]) -> bool:
    """Whether the code reads and writes a schema that applied ``done`` as it is."""
    return readable(MIGRATIONS, done, INDEX_ONLY)


def current(done: list[str]) -> bool:
    """Whether nothing is left to apply."""
    return not pending(MIGRATIONS, done)


def migrate(conn: Any, url: str, roles: bool = False) -> int:
    """Apply every step not yet recorded, recording each by name (a schema from before names
    has its steps recorded first), and with ``roles`` create and grant the roles; returns the
    count found before."""
    state = recorded(conn)
    done = check(state, url)
    if state.names is not None and current(done) and not roles:
        return state.version
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
        state = recorded(conn)  # another host may have won the race
        done = check(state, url)
        now = now_ms()
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        if state.names is None or not current(done):
            conn.execute(_TABLE)
            if state.names is None:  # from before names: its steps ran, only their names are new
                for name in done:
                    conn.execute(_RECORD, (name, now))
            for name, script in pending(MIGRATIONS, done):
                conn.execute(script)
                conn.execute(_RECORD, (name, now))
                done.append(name)
            conn.execute(_COUNT, (str(len(done)),))
        if roles:
            conn.execute(roles_sql())
    return state.version


def _dedent(script: str) -> str:
    lines = script.strip("\n").splitlines()
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[indent:] for x in lines)
