"""The per-agent database schema: ``MIGRATIONS``, named steps applied in order and recorded
by name in the file's ``migrations`` table (the rule: ``core/storage/migrations.py``).

``PRAGMA user_version`` counts the steps a file has applied; a file from before names is known by
it. A database newer than this code (a name it does not know, or a larger count) is refused with
one sentence rather than misread. Only FTS5 features available in SQLite 3.40 are used, so the
stock ``sqlite3`` module can read every file.
"""

from __future__ import annotations

import sqlite3
import time

from ...errors import StoreError
from ..migrations import Recorded, Step, applied, check_names, pending, readable, unknown

MIGRATIONS: list[Step] = [
    ("0001_tables", """
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );

    -- One row per session. last_seq / leaf_id describe the transcript as stored; they let the
    -- write path decide "does this event extend the active leaf?" without reading the log.
    CREATE TABLE sessions (
        pk          INTEGER PRIMARY KEY,
        key         TEXT NOT NULL UNIQUE,          -- agent:<agentId>:<rest>, lower-cased
        session_id  TEXT NOT NULL UNIQUE,
        spawned_by  TEXT,
        parent_key  TEXT,
        label       TEXT,
        source      TEXT NOT NULL DEFAULT 'live',  -- live | openclaw | claude-code | codex | demo
        created_at  INTEGER NOT NULL,              -- epoch ms
        updated_at  INTEGER NOT NULL,
        last_seq    INTEGER NOT NULL DEFAULT 0,
        leaf_id     TEXT
    );

    -- The append-only event log, one OpenClaw JSONL entry per row, verbatim.
    CREATE TABLE events (
        session_pk  INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        entry_id    TEXT,                          -- tree id; NULL for headers, leaf controls
        kind        TEXT NOT NULL,                 -- the entry's "type"
        body        TEXT NOT NULL,
        PRIMARY KEY (session_pk, seq)
    ) WITHOUT ROWID;
    CREATE INDEX events_by_entry ON events(session_pk, entry_id);

    -- Per-session index state (SPEC 8). A session is searchable only when clean under the
    -- current indexer version; 'claimed' is a rebuild in progress, owned until claim_expires.
    CREATE TABLE index_state (
        session_pk      INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
        state           TEXT NOT NULL CHECK (state IN ('clean', 'dirty', 'claimed')),
        indexed_seq     INTEGER NOT NULL DEFAULT 0,
        indexed_leaf    TEXT,
        indexer_version INTEGER NOT NULL DEFAULT 0,  -- 0 = never indexed
        claim_owner     TEXT,
        claim_expires   INTEGER,
        problems        TEXT                         -- tree problems found by the last rebuild
    );

    -- Index rows: rowid = message time (ms) << 12 | slot, so "newest first" is rowid order.
    -- The text itself lives once, in message_fts, under the same rowid.
    CREATE TABLE message_index (
        rowid       INTEGER PRIMARY KEY,
        session_pk  INTEGER NOT NULL,
        entry_id    TEXT NOT NULL,
        role        TEXT NOT NULL,
        ts          INTEGER NOT NULL
    );
    CREATE INDEX message_index_by_session ON message_index(session_pk, entry_id);

    CREATE VIRTUAL TABLE message_fts USING fts5(
        body, tokenize = 'unicode61 remove_diacritics 2'
    );

    -- Reconciliation progress, readable by any process (SPEC 8).
    CREATE TABLE reconcile_progress (
        id              INTEGER PRIMARY KEY CHECK (id = 1),
        run_id          TEXT,
        state           TEXT NOT NULL DEFAULT 'idle',  -- idle | running
        started_at      INTEGER,
        updated_at      INTEGER,
        sessions_done   INTEGER NOT NULL DEFAULT 0,
        sessions_total  INTEGER NOT NULL DEFAULT 0,
        messages_done   INTEGER NOT NULL DEFAULT 0,
        current_session TEXT,
        owner           TEXT,
        lease_expires   INTEGER
    );
    INSERT INTO reconcile_progress (id) VALUES (1);
    """),
    ("0002_visibility_rev", """
    -- visibility_rev changes whenever what a search may use changes: a session appears or
    -- goes, its links change, or its index state does. Searches cache the visible-session
    -- set per caller and rebuild it only when this counter moves.
    INSERT OR IGNORE INTO meta (key, value) VALUES ('visibility_rev', '0');
    CREATE TRIGGER sessions_added AFTER INSERT ON sessions BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'visibility_rev';
    END;
    CREATE TRIGGER sessions_removed AFTER DELETE ON sessions BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'visibility_rev';
    END;
    CREATE TRIGGER sessions_relinked AFTER UPDATE OF key, spawned_by, parent_key ON sessions
    BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'visibility_rev';
    END;
    CREATE TRIGGER index_state_changed AFTER UPDATE OF state, indexer_version ON index_state
    BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'visibility_rev';
    END;
    CREATE TRIGGER index_state_added AFTER INSERT ON index_state BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'visibility_rev';
    END;
    """),
    ("0003_fts_scope", """
    -- The full-text index gets a second column, the row's *scope* (core/tree_tags.py): the tag
    -- s<pk> of its session and a tag t<pk> for the session and each session it descends
    -- from, so the sessions a caller may see are selected inside MATCH. A prefix index of
    -- two characters makes search-as-you-type prefixes cheap. The old rows have no scope:
    -- they go, and reconciliation rebuilds every session (a new indexer version).
    DROP TABLE message_fts;
    DELETE FROM message_index;
    CREATE VIRTUAL TABLE message_fts USING fts5(
        body, scope, tokenize = 'unicode61 remove_diacritics 2', prefix = '2'
    );
    -- Per session, written in the same transactions as its index rows: the sessions its
    -- rows name as their tree (space-separated pks, itself first), and the count and
    -- characters of its rows (ranking statistics over a caller's visible sessions).
    ALTER TABLE index_state ADD COLUMN tree TEXT NOT NULL DEFAULT '';
    ALTER TABLE index_state ADD COLUMN rows INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE index_state ADD COLUMN chars INTEGER NOT NULL DEFAULT 0;
    -- A planner trusts the stored trees (storage/sqlite/matching.py): they move the cache key.
    DROP TRIGGER index_state_changed;
    CREATE TRIGGER index_state_changed AFTER UPDATE OF state, indexer_version, tree ON index_state
    BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'visibility_rev';
    END;
    """),
    ("0004_source_files", """
    -- Live sources (SPEC 14): what was taken in from each transcript file, so a sync that
    -- finds a file unchanged only stats it, and a grown file is read from its offset. A
    -- file's new events and its new row here are written in one transaction.
    CREATE TABLE source_files (
        path        TEXT PRIMARY KEY,
        kind        TEXT NOT NULL,              -- openclaw | openclaw-store | claude-code | codex
        root        TEXT NOT NULL,              -- the source folder it was found in
        device      INTEGER NOT NULL,
        inode       INTEGER NOT NULL,
        size        INTEGER NOT NULL,
        mtime_ns    INTEGER NOT NULL,
        done_bytes  INTEGER NOT NULL DEFAULT 0, -- just after the last complete line taken in
        done_lines  INTEGER NOT NULL DEFAULT 0, -- complete lines before done_bytes
        head_hash   TEXT NOT NULL DEFAULT '',   -- of the first few KB (at most done_bytes)
        tail_hash   TEXT NOT NULL DEFAULT '',   -- of the bytes just before done_bytes
        context     TEXT,                       -- what the format needs to read on (JSON)
        sessions    TEXT NOT NULL DEFAULT '[]', -- keys of the sessions it feeds (JSON)
        synced_at   INTEGER NOT NULL,
        missing_since INTEGER,                  -- gone from disk; its sessions stay
        problem     TEXT                        -- why it was not (fully) taken in
    );

    -- One row per source folder: when it was last synced.
    CREATE TABLE source_syncs (
        root        TEXT PRIMARY KEY,
        kind        TEXT NOT NULL,
        synced_at   INTEGER NOT NULL
    );
    """),
]

# What a list of conversations shows of a session, kept in ``sessions`` so a listing never
# reads transcripts (migration 5). The cwd is the header's (Claude Code and Codex name one);
# the rest follows the index, which holds the active branch's redacted user and assistant
# messages (their number is index_state.rows): the newest one's time, and the title (the
# first user message, its first TITLE_CHARS characters, with the CJK segmentation's U+200B
# taken out). ``sessions.pk`` is the session; each statement is the one rule, used by the
# write path, reconciliation and the backfill alike.
TITLE_CHARS = 400
SUMMARY_COLUMNS = f"""
    last_message_at = (SELECT max(m.ts) FROM message_index m WHERE m.session_pk = sessions.pk),
    title = (SELECT replace(substr(f.body, 1, {TITLE_CHARS}), char(8203), '')
             FROM message_index m JOIN message_fts f ON f.rowid = m.rowid
             WHERE m.session_pk = sessions.pk AND m.role = 'user' ORDER BY m.rowid LIMIT 1)"""
CWD_COLUMN = """
    cwd = (SELECT CASE WHEN json_valid(e.body) THEN
                  CASE WHEN json_type(e.body, '$.cwd') = 'text' THEN json_extract(e.body, '$.cwd') END
                  END
           FROM events e WHERE e.session_pk = sessions.pk AND e.kind = 'session'
           ORDER BY e.seq LIMIT 1)"""

MIGRATIONS.append(("0005_session_summaries", f"""
    -- A list of conversations (the browser's home, sessions_list) reads these, never the
    -- transcripts: see SUMMARY_COLUMNS and CWD_COLUMN above.
    ALTER TABLE sessions ADD COLUMN cwd TEXT;
    ALTER TABLE sessions ADD COLUMN title TEXT;
    ALTER TABLE sessions ADD COLUMN last_message_at INTEGER;
    UPDATE sessions SET {CWD_COLUMN};
    UPDATE sessions SET {SUMMARY_COLUMNS};
    -- "Newest activity first" without sorting every session.
    CREATE INDEX sessions_by_activity ON sessions(coalesce(last_message_at, updated_at));
"""))

MIGRATIONS.append(("0006_events_messages_index", """
    -- status counts stored messages on every poll of the browser's status bar: through this
    -- index (covering: it holds kind), not a scan of every event (300 -> ~45 ms at a million
    -- messages).
    CREATE INDEX events_messages ON events(kind) WHERE kind = 'message';
"""))

MIGRATIONS.append(("0007_branch_messages", """
    -- The messages of each session's active branch that a conversation shows, so opening a
    -- long one reads plain columns, not every event's JSON (50,000 messages: ~1.4 s -> ~0.1 s).
    -- Rebuilds write them with the index rows; an append that extends the branch adds its
    -- message. branch_seq: the log position they describe; while it lags behind last_seq (a
    -- rewind not rebuilt yet, an import, a database from before this migration) readers
    -- compute the branch from the log instead.
    CREATE TABLE branch_messages (
        session_pk  INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        entry_id    TEXT,                          -- the id as written; NULL: none
        role        TEXT NOT NULL,
        at          INTEGER,                       -- epoch ms; NULL: no plausible time
        PRIMARY KEY (session_pk, seq)
    ) WITHOUT ROWID;
    ALTER TABLE index_state ADD COLUMN branch_seq INTEGER NOT NULL DEFAULT 0;
"""))

MIGRATIONS.append(("0008_index_totals", """
    -- The rows and characters of every session's index rows, summed: a search as the
    -- operator reads them here instead of summing index_state over every session (2-3 ms a
    -- search at 20,000 sessions). The triggers follow every change of index_state in the
    -- transaction that makes it, so the totals cannot drift from the sums.
    CREATE TABLE index_totals (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        rows    INTEGER NOT NULL,
        chars   INTEGER NOT NULL
    );
    INSERT INTO index_totals (id, rows, chars)
        SELECT 1, coalesce(sum(rows), 0), coalesce(sum(chars), 0) FROM index_state;
    CREATE TRIGGER index_totals_added AFTER INSERT ON index_state BEGIN
        UPDATE index_totals SET rows = rows + new.rows, chars = chars + new.chars;
    END;
    CREATE TRIGGER index_totals_removed AFTER DELETE ON index_state BEGIN
        UPDATE index_totals SET rows = rows - old.rows, chars = chars - old.chars;
    END;
    CREATE TRIGGER index_totals_changed AFTER UPDATE OF rows, chars ON index_state BEGIN
        UPDATE index_totals
        SET rows = rows + new.rows - old.rows, chars = chars + new.chars - old.chars;
    END;
"""))

MIGRATIONS.append(("0009_link_indexes", """
    -- A session caller whose visible set is its spawned tree reads that tree only, following
    -- the links down from its own session (Reads.session_briefs(below=...)): each step an
    -- index lookup, not a read of every session (its view 55 -> 5 ms at 10,000 sessions).
    CREATE INDEX sessions_by_spawner ON sessions(lower(spawned_by));
    CREATE INDEX sessions_by_parent ON sessions(lower(parent_key));
"""))

# A session whose transcript its agent moved to a cold archive (OpenClaw's store) says so in a
# column of its own (SessionRow.archived), set by the importer that reads the archive: never
# read from a label, which a person may end with "(archived)" too. Existing sessions are not.
MIGRATIONS.append(("0010_session_archived", """
    ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
"""))

# The tool-call index (issue 26, docs/tool-calls.md): a row per tool call of a session's active
# branch (rowid = call time << 12 | slot, as message_index), its text in tool_fts with the
# same scope tags as message_fts (one visibility machinery), written in the transactions that
# write the message rows. index_state counts each session's tool rows and characters (the
# ranking statistics of a tool search, as rows/chars are a message search's).
MIGRATIONS.append(("0011_tool_calls", """
    CREATE TABLE tool_index (
        rowid           INTEGER PRIMARY KEY,
        session_pk      INTEGER NOT NULL,
        entry_id        TEXT NOT NULL,              -- the assistant message making the call
        block           INTEGER NOT NULL,           -- the call's place in that message
        call_id         TEXT,
        tool            TEXT NOT NULL COLLATE NOCASE,
        status          TEXT NOT NULL,              -- ok | failed | none (no result yet)
        ts              INTEGER NOT NULL,
        duration_ms     INTEGER,
        result_entry_id TEXT
    );
    CREATE INDEX tool_index_by_session ON tool_index(session_pk, ts);
    CREATE INDEX tool_index_open ON tool_index(session_pk, call_id) WHERE result_entry_id IS NULL;
    CREATE INDEX tool_index_by_tool ON tool_index(tool, rowid);
    CREATE VIRTUAL TABLE tool_fts USING fts5(
        body, scope, tokenize = 'unicode61 remove_diacritics 2', prefix = '2'
    );
    ALTER TABLE index_state ADD COLUMN tool_rows INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE index_state ADD COLUMN tool_chars INTEGER NOT NULL DEFAULT 0;
"""))

# The facts of each session (core/facts.py: models, tokens, cost, first and last message,
# tool calls, files edited) and its usage per (UTC day, model), written in the transactions
# that store its events (an append folds its message in) and replaced by a rebuild (which
# computes them from the whole log: the indexer version moved to 7, so every session is
# rebuilt once and gets them). A number nothing recorded is NULL: unknown is not zero.
MIGRATIONS.append(("0012_session_facts", """
    CREATE TABLE session_facts (
        session_pk   INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
        models       TEXT NOT NULL DEFAULT '[]',  -- JSON array, in order of first use
        input        INTEGER,
        output       INTEGER,
        cache_read   INTEGER,
        cache_write  INTEGER,
        cost         REAL,
        first_at     INTEGER,
        last_at      INTEGER,
        tool_calls   INTEGER NOT NULL DEFAULT 0,
        failed_calls INTEGER NOT NULL DEFAULT 0,
        files        TEXT NOT NULL DEFAULT '[]',  -- JSON array, at most facts.FILES_MAX
        files_capped INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE usage_days (
        session_pk  INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
        day         TEXT NOT NULL,                 -- YYYY-MM-DD, UTC
        model       TEXT NOT NULL,                 -- '' when the message names none
        input       INTEGER,
        output      INTEGER,
        cache_read  INTEGER,
        cache_write INTEGER,
        cost        REAL,
        PRIMARY KEY (session_pk, day, model)
    ) WITHOUT ROWID;
    CREATE INDEX usage_days_by_day ON usage_days(day);
"""))

# The steps that were numbered by hand before migrations had names: a file without a table of
# names whose user_version is N has applied the first N of them.
NUMBERED = 9
# The steps that add indexes only: a reader reads a file lacking only these as it is (a writer
# adds them). The link indexes decide how Reads.session_briefs walks a tree: asked of the
# file itself (a file may lack 0009 and have a later step, so no count of steps tells).
INDEX_ONLY = frozenset({"0006_events_messages_index", "0009_link_indexes"})
LINK_INDEXES_PRESENT = ("SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                        "AND name IN ('sessions_by_spawner', 'sessions_by_parent')")
check_names(MIGRATIONS, INDEX_ONLY)
# user_version counts the steps a file has applied (what an older backscroll compares).
SCHEMA_VERSION = len(MIGRATIONS)


def refuse_newer(version: int, path: str) -> None:
    """One sentence for a database this code cannot read without misreading it."""
    if version > len(MIGRATIONS):
        raise StoreError(
            f"{path} was written by a newer backscroll (schema {version}; this version reads "
            f"up to {len(MIGRATIONS)}): upgrade backscroll to open it"
        )


def recorded(conn: sqlite3.Connection) -> Recorded:
    """The file's user_version and, once it has a table of names, the names in the order
    they were applied."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    try:  # one query in the common case (every reader's open pays it)
        rows = conn.execute("SELECT name FROM migrations ORDER BY rowid").fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" not in str(error):
            raise
        return Recorded(version, None)
    return Recorded(version, tuple(row[0] for row in rows))


def check(state: Recorded, path: str) -> list[str]:
    """Refuse a file from a newer backscroll in one sentence; the names it has applied."""
    refuse_newer(state.version, path)
    strange = unknown(MIGRATIONS, state, NUMBERED)
    if strange:
        raise StoreError(
            f"{path} was written by a newer backscroll (migration {strange[0]} is not one this "
            "version knows): upgrade backscroll to open it"
        )
    return applied(MIGRATIONS, state, NUMBERED)


def is_readable(done: list[str]) -> bool:
    """Whether a reader reads a file that applied ``done`` as it is."""
    return readable(MIGRATIONS, done, INDEX_ONLY)


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Apply every step not yet recorded, recording each by name (and a file from before
    names recorded first); refuse databases from a newer backscroll."""
    state = recorded(conn)
    done = check(state, path)
    if state.names is not None and not pending(MIGRATIONS, done):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        state = recorded(conn)  # another process may have won
        done = check(state, path)
        now = time.time_ns() // 1_000_000
        conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
        )
        if state.names is None:  # from before names: its steps ran, only their names are new
            conn.executemany("INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                             [(name, now) for name in done])
        for name, script in pending(MIGRATIONS, done):
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, now))
            done.append(name)
        conn.execute(f"PRAGMA user_version = {len(done)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return [s for s in statements if s]
