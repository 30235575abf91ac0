"""The storage layer: a state directory of per-agent SQLite databases.

All SQL lives in this module and its siblings ``store_*``: search, history, reconciliation and
the front ends call methods, so another backend (SPEC 13) replaces this layer only.

One ``AgentDB`` wraps one connection; use one per thread.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

from .errors import StoreError
from .indexer import INDEXER_VERSION, IndexRow, first_rowid, indexes_session, next_rowid, row_for
from .keys import agent_of, normalize_key
from .schema import migrate
from .transcript import indexable, moves_leaf, node_id, parse_event

BUSY_TIMEOUT_S = 30.0
DB_NAME = "sessions.sqlite"


def now_ms() -> int:
    return int(time.time() * 1000)


def default_state_dir() -> Path:
    env = os.environ.get("BACKSCROLL_STATE_DIR")
    if env:
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "backscroll"


@dataclass(frozen=True)
class SessionRow:
    pk: int
    key: str
    session_id: str
    spawned_by: str | None
    parent_key: str | None
    label: str | None
    source: str
    created_at: int
    updated_at: int
    last_seq: int
    leaf_id: str | None
    state: str
    indexed_seq: int
    indexer_version: int
    problems: str | None

    @property
    def searchable(self) -> bool:
        """Clean under the current indexer version: its index rows are its active branch."""
        return self.state == "clean" and self.indexer_version == INDEXER_VERSION


_SESSION_COLUMNS = """s.pk, s.key, s.session_id, s.spawned_by, s.parent_key, s.label, s.source,
    s.created_at, s.updated_at, s.last_seq, s.leaf_id, i.state, i.indexed_seq,
    i.indexer_version, i.problems"""


@dataclass(frozen=True)
class MatchRow:
    rowid: int
    session_pk: int
    entry_id: str
    role: str
    ts: int
    body: str
    bm25: float  # FTS5 bm25(): lower is better


@dataclass(frozen=True)
class SessionFilter:
    """Which sessions a match may return: ``pks`` themselves, or all but them."""

    pks: list[int]
    exclude: bool = False


@dataclass(frozen=True)
class SessionMeta:
    """What a caller knows of a session before its events: used by append and import."""

    key: str
    session_id: str | None = None
    spawned_by: str | None = None
    parent_key: str | None = None
    label: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    source: str = "live"


@dataclass(frozen=True)
class AppendResult:
    seq: int
    outcome: str  # indexed | stored | dirty


class StateDir:
    """``<state>/agents/<agentId>/sessions.sqlite`` plus an optional ``config.toml``."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_state_dir()

    @property
    def config_path(self) -> Path:
        return self.path / "config.toml"

    def exists(self) -> bool:
        return self.path.is_dir()

    def require(self) -> None:
        """Raise one sentence when there is no state dir to read."""
        if not self.path.is_dir():
            raise StoreError(
                f"no backscroll state dir at {self.path}: create one with "
                "`backscroll import openclaw PATH`, `backscroll append KEY`, or try "
                "`backscroll demo` (set --state-dir or BACKSCROLL_STATE_DIR to look elsewhere)"
            )

    def agents(self) -> list[str]:
        root = self.path / "agents"
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if (p / DB_NAME).is_file())

    def db_path(self, agent_id: str) -> Path:
        return self.path / "agents" / agent_id / DB_NAME

    def open(self, agent_id: str, create: bool = False) -> "AgentDB":
        path = self.db_path(agent_id)
        if create:
            try:
                self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as err:
                raise StoreError(
                    f"cannot create {path.parent}: {err.strerror or err} "
                    "(choose a writable --state-dir)"
                ) from None
        elif not path.is_file():
            raise StoreError(f"agent {agent_id!r} has no database at {path}")
        return AgentDB(path, agent_id)

    def open_for_key(self, key: str, create: bool = False) -> "AgentDB":
        return self.open(agent_of(key), create=create)


@contextmanager
def sqlite_errors(path: Path) -> Iterator[None]:
    """Turn SQLite failures into one sentence naming the database."""
    try:
        yield
    except sqlite3.OperationalError as err:
        text = str(err)
        if "locked" in text or "busy" in text:
            raise StoreError(f"{path} stayed locked by another process; try again") from None
        if "unable to open" in text or "readonly" in text or "read-only" in text:
            raise StoreError(f"cannot open {path} for writing ({text})") from None
        if "disk I/O" in text or "full" in text:
            raise StoreError(f"cannot write {path}: {text}") from None
        raise StoreError(f"{path}: {text}") from None
    except sqlite3.DatabaseError as err:
        raise StoreError(f"{path} is not a usable backscroll database ({err})") from None


class AgentDB:
    """One agent's database. Not thread-safe: open one per thread."""

    def __init__(self, path: Path, agent_id: str) -> None:
        self.path = path
        self.agent_id = agent_id
        with sqlite_errors(path):
            self.conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            migrate(self.conn, str(path))
            self._invalidate_old_indexer_versions()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "AgentDB":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any error (nothing half-written)."""
        with sqlite_errors(self.path):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every read inside sees one consistent state (WAL snapshot)."""
        with sqlite_errors(self.path):
            self.conn.execute("BEGIN")
            try:
                yield
            finally:
                self.conn.execute("COMMIT")

    def _invalidate_old_indexer_versions(self) -> None:
        """A new indexer version makes older sessions dirty: one cheap UPDATE, no rebuild."""
        stale = self.conn.execute(
            "SELECT 1 FROM index_state WHERE state = 'clean' AND indexer_version != ? LIMIT 1",
            (INDEXER_VERSION,),
        ).fetchone()
        if stale:
            with self.transaction() as conn:
                conn.execute(
                    "UPDATE index_state SET state = 'dirty' "
                    "WHERE state = 'clean' AND indexer_version != ?",
                    (INDEXER_VERSION,),
                )

    # ----------------------------------------------------------------- reading sessions

    def sessions(self) -> list[SessionRow]:
        with sqlite_errors(self.path):
            rows = self.conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s JOIN index_state i "
                "ON i.session_pk = s.pk ORDER BY s.pk"
            ).fetchall()
        return [SessionRow(*row) for row in rows]

    def visibility_rev(self) -> int:
        """A counter the schema's triggers move whenever sessions or their index state
        change (see schema migration 2): equal values mean an unchanged session table."""
        with sqlite_errors(self.path):
            row = self.conn.execute(
                "SELECT value FROM meta WHERE key = 'visibility_rev'"
            ).fetchone()
        return int(row[0]) if row else 0

    def session(self, key: str) -> SessionRow | None:
        with sqlite_errors(self.path):
            row = self.conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s JOIN index_state i "
                "ON i.session_pk = s.pk WHERE s.key = ?",
                (key.lower(),),
            ).fetchone()
        return SessionRow(*row) if row else None

    def events(self, session_pk: int) -> list[tuple[int, dict[str, Any]]]:
        """The stored log, parsed; rows that no longer parse are skipped (never raised)."""
        with sqlite_errors(self.path):
            rows = self.conn.execute(
                "SELECT seq, body FROM events WHERE session_pk = ? ORDER BY seq", (session_pk,)
            ).fetchall()
        parsed = []
        for seq, body in rows:
            try:
                parsed.append((seq, json.loads(body)))
            except ValueError:
                continue
        return parsed

    def index_rows(self, session_pk: int) -> list[tuple[int, IndexRow]]:
        with sqlite_errors(self.path):
            rows = self.conn.execute(
                "SELECT m.rowid, m.entry_id, m.role, m.ts, f.body FROM message_index m "
                "LEFT JOIN message_fts f ON f.rowid = m.rowid WHERE m.session_pk = ? "
                "ORDER BY m.rowid",
                (session_pk,),
            ).fetchall()
        return [(rowid, IndexRow(eid, role, ts, body)) for rowid, eid, role, ts, body in rows]

    def match(
        self,
        fts_query: str,
        sessions: SessionFilter,
        limit: int,
        order: str = "best",
        role: str | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        rank_window: int | None = None,
    ) -> tuple[list[MatchRow], bool]:
        """Top matches among the given sessions, and whether ranking was windowed.

        The session filter runs inside the query, before the limit, so sessions a caller
        may not see never take a slot. With ``rank_window``, a term matching more rows than
        that is ranked by bm25 over its newest ``rank_window`` matches only (rowids follow
        time, so "newest" is a rowid bound the FTS index applies for free).
        """
        where = ["message_fts MATCH ?"]
        params: list[Any] = [fts_query]
        if sessions.pks or not sessions.exclude:
            where.append(
                f"m.session_pk {'NOT IN' if sessions.exclude else 'IN'} "
                "(SELECT value FROM json_each(?))"
            )
            params.append(json.dumps(sessions.pks))
        for clause, value in (
            ("m.role = ?", role),
            ("m.ts >= ?", since_ms),
            ("m.ts <= ?", until_ms),
        ):
            if value is not None:
                where.append(clause)
                params.append(value)
        # With nothing to filter (the operator on a clean index) the join is skipped: the
        # FTS index alone orders and ranks, and only the kept rows are looked up.
        join = "JOIN message_index m ON m.rowid = f.rowid " if len(where) > 1 else ""
        base = f"FROM message_fts f {join}WHERE {' AND '.join(where)}"
        windowed = False
        with sqlite_errors(self.path):
            if order == "best" and rank_window:
                cutoff = self.conn.execute(
                    f"SELECT f.rowid {base} ORDER BY f.rowid DESC LIMIT 1 OFFSET ?",
                    (*params, rank_window - 1),
                ).fetchone()
                if cutoff is not None:
                    base += " AND f.rowid >= ?"
                    params.append(cutoff[0])
                    windowed = True
            order_by = "f.rowid DESC" if order == "recent" else "score, f.rowid DESC"
            top = self.conn.execute(
                f"SELECT f.rowid, bm25(message_fts) AS score {base} ORDER BY {order_by} LIMIT ?",
                (*params, limit),
            ).fetchall()
            # Metadata and text only for the rows kept: reading every match would dominate.
            kept = self.conn.execute(
                "SELECT m.rowid, m.session_pk, m.entry_id, m.role, m.ts, f.body "
                "FROM message_index m JOIN message_fts f ON f.rowid = m.rowid "
                "WHERE m.rowid IN (SELECT value FROM json_each(?))",
                (json.dumps([row[0] for row in top]),),
            ).fetchall()
        details = {row[0]: row[1:] for row in kept}
        rows = [MatchRow(rowid, *details[rowid], score) for rowid, score in top if rowid in details]
        return rows, windowed

    def has_pending_sessions(self) -> bool:
        """Any session (visible or not) whose index is not current: reconciliation work."""
        with sqlite_errors(self.path):
            return (
                self.conn.execute(
                    "SELECT 1 FROM index_state WHERE state != 'clean' OR indexer_version != ? "
                    "LIMIT 1",
                    (INDEXER_VERSION,),
                ).fetchone()
                is not None
            )

    def orphan_index_rows(self) -> tuple[int, int]:
        """(index rows of no session, text rows with no index row): both must be 0."""
        with sqlite_errors(self.path):
            no_session = self.conn.execute(
                "SELECT count(*) FROM message_index WHERE session_pk NOT IN "
                "(SELECT pk FROM sessions)"
            ).fetchone()[0]
            no_index = self.conn.execute(
                "SELECT count(*) FROM message_fts WHERE rowid NOT IN "
                "(SELECT rowid FROM message_index)"
            ).fetchone()[0]
        return no_session, no_index

    def counts(self) -> dict[str, int]:
        """Sessions, stored messages, indexed rows and dirty sessions, for ``status``."""
        with sqlite_errors(self.path):
            sessions, dirty = self.conn.execute(
                "SELECT count(*), coalesce(sum(state != 'clean' OR indexer_version != ?), 0) "
                "FROM index_state",
                (INDEXER_VERSION,),
            ).fetchone()
            never = self.conn.execute(
                "SELECT count(*) FROM index_state WHERE indexer_version = 0 AND state != 'clean'"
            ).fetchone()[0]
            messages = self.conn.execute(
                "SELECT count(*) FROM events WHERE kind = 'message'"
            ).fetchone()[0]
            indexed = self.conn.execute("SELECT count(*) FROM message_index").fetchone()[0]
        return {
            "sessions": sessions,
            "messages": messages,
            "indexed": indexed,
            "dirty": dirty,
            "neverIndexed": never,
        }

    # ----------------------------------------------------------------- writing

    def _create_session(
        self, conn: sqlite3.Connection, meta: SessionMeta, clean: bool
    ) -> tuple[int, str]:
        created = meta.created_at if meta.created_at is not None else now_ms()
        session_id = meta.session_id or str(uuid.uuid4())
        cursor = conn.execute(
            "INSERT INTO sessions (key, session_id, spawned_by, parent_key, label, source, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                meta.key,
                session_id,
                _lower(meta.spawned_by),
                _lower(meta.parent_key),
                meta.label,
                meta.source,
                created,
                meta.updated_at if meta.updated_at is not None else created,
            ),
        )
        pk = cursor.lastrowid
        conn.execute(
            "INSERT INTO index_state (session_pk, state, indexer_version) VALUES (?, ?, ?)",
            (pk, "clean" if clean else "dirty", INDEXER_VERSION if clean else 0),
        )
        return pk, session_id

    def append(self, meta: SessionMeta, line: str | dict[str, Any]) -> AppendResult:
        """Store one event; index it in the same transaction when it extends the active leaf.

        An event that moves the leaf elsewhere (a leaf control, a branch switch, an
        out-of-order parent) marks the session dirty instead; so does any write that lands
        while a rebuild holds the session (the rebuild then abandons its claim).
        """
        key = normalize_key(meta.key)
        event = parse_event(line)
        body = line if isinstance(line, str) else json.dumps(event, ensure_ascii=False)
        body = body.strip()
        with self.transaction() as conn:
            found = conn.execute(
                "SELECT s.pk, s.session_id, s.created_at, s.last_seq, s.leaf_id, i.state, "
                "i.indexer_version "
                "FROM sessions s JOIN index_state i ON i.session_pk = s.pk WHERE s.key = ?",
                (key,),
            ).fetchone()
            if found is None:
                pk, session_id = self._create_session(conn, replace(meta, key=key), clean=True)
                created_at = conn.execute(
                    "SELECT created_at FROM sessions WHERE pk = ?", (pk,)
                ).fetchone()[0]
                last_seq, leaf, state, version = 0, None, "clean", INDEXER_VERSION
            else:
                pk, session_id, created_at, last_seq, leaf, state, version = found
            seq = last_seq + 1
            kind = event["type"]
            stored_id = None if kind in ("session", "leaf") else node_id(event, seq)
            real_id = stored_id if stored_id and not stored_id.startswith("#") else None
            outcome = "stored"
            new_leaf = leaf
            if kind == "leaf":
                new_leaf = self._leaf_target(conn, pk, event, leaf)
                outcome = "dirty"
            elif kind != "session" and moves_leaf(event) and not self._has_entry(conn, pk, real_id):
                parent = event.get("parentId") or leaf
                new_leaf = stored_id
                if parent != leaf:
                    outcome = "dirty"
                else:
                    message = indexable(event, created_at)
                    if (
                        message
                        and state == "clean"
                        and version == INDEXER_VERSION
                        and indexes_session(key)
                    ):
                        row = row_for(
                            message.entry_id, message.role, message.timestamp_ms, message.text
                        )
                        self._insert_row(conn, pk, session_id, row)
                        outcome = "indexed"
            conn.execute(
                "INSERT INTO events (session_pk, seq, entry_id, kind, body) VALUES (?, ?, ?, ?, ?)",
                (pk, seq, real_id, kind, body),
            )
            conn.execute(
                "UPDATE sessions SET last_seq = ?, leaf_id = ?, updated_at = ? WHERE pk = ?",
                (seq, new_leaf, now_ms(), pk),
            )
            if state == "claimed" or outcome == "dirty":
                conn.execute(
                    "UPDATE index_state SET state = 'dirty', claim_owner = NULL, "
                    "claim_expires = NULL WHERE session_pk = ?",
                    (pk,),
                )
                outcome = "dirty" if outcome != "indexed" else outcome
            elif state == "clean" and version == INDEXER_VERSION:
                conn.execute(
                    "UPDATE index_state SET indexed_seq = ?, indexed_leaf = ? WHERE session_pk = ?",
                    (seq, new_leaf, pk),
                )
        return AppendResult(seq, outcome)

    @staticmethod
    def _has_entry(conn: sqlite3.Connection, pk: int, entry_id: str | None) -> bool:
        if entry_id is None:
            return False
        return (
            conn.execute(
                "SELECT 1 FROM events WHERE session_pk = ? AND entry_id = ?", (pk, entry_id)
            ).fetchone()
            is not None
        )

    def _leaf_target(
        self, conn: sqlite3.Connection, pk: int, event: dict[str, Any], leaf: str | None
    ) -> str | None:
        if "targetId" in event and event["targetId"] is None:
            return None
        return event["targetId"] if self._has_entry(conn, pk, event.get("targetId")) else leaf

    @staticmethod
    def _insert_row(conn: sqlite3.Connection, pk: int, session_id: str, row: IndexRow) -> int:
        rowid = first_rowid(session_id, row)
        while True:
            try:
                conn.execute(
                    "INSERT INTO message_index (rowid, session_pk, entry_id, role, ts) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (rowid, pk, row.entry_id, row.role, row.ts),
                )
                break
            except sqlite3.IntegrityError:
                rowid = next_rowid(rowid)
        conn.execute("INSERT INTO message_fts (rowid, body) VALUES (?, ?)", (rowid, row.body))
        return rowid

    def insert_rows(
        self, conn: sqlite3.Connection, pk: int, session_id: str, rows: list[IndexRow]
    ) -> None:
        """Insert many index rows inside the caller's transaction (rebuilds, backfills).

        Rowids are placed in Python against the rows already stored near them, then written
        with two ``executemany`` calls: the bulk path that makes backfills fast.
        """
        if not rows:
            return
        wanted = [first_rowid(session_id, row) for row in rows]
        taken = self._taken_rowids(conn, wanted)
        placed: list[int] = []
        for rowid in wanted:
            while rowid in taken:
                rowid = next_rowid(rowid)
                if rowid not in taken and self._taken_rowids(conn, [rowid]):
                    taken.add(rowid)
            taken.add(rowid)
            placed.append(rowid)
        conn.executemany(
            "INSERT INTO message_index (rowid, session_pk, entry_id, role, ts) "
            "VALUES (?, ?, ?, ?, ?)",
            [(rowid, pk, r.entry_id, r.role, r.ts) for rowid, r in zip(placed, rows)],
        )
        conn.executemany(
            "INSERT INTO message_fts (rowid, body) VALUES (?, ?)",
            [(rowid, r.body) for rowid, r in zip(placed, rows)],
        )

    @staticmethod
    def _taken_rowids(conn: sqlite3.Connection, rowids: list[int]) -> set[int]:
        return {
            r[0]
            for r in conn.execute(
                "SELECT rowid FROM message_index WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(rowids),),
            )
        }

    @staticmethod
    def delete_rows(conn: sqlite3.Connection, pk: int) -> None:
        """Remove a session's index rows inside the caller's transaction."""
        conn.execute(
            "DELETE FROM message_fts WHERE rowid IN "
            "(SELECT rowid FROM message_index WHERE session_pk = ?)",
            (pk,),
        )
        conn.execute("DELETE FROM message_index WHERE session_pk = ?", (pk,))

    def delete_session(self, key: str) -> bool:
        """Remove a session's events, index rows and index state in one transaction."""
        key = normalize_key(key)
        with self.transaction() as conn:
            found = conn.execute("SELECT pk FROM sessions WHERE key = ?", (key,)).fetchone()
            if found is None:
                return False
            pk = found[0]
            self.delete_rows(conn, pk)
            conn.execute("DELETE FROM events WHERE session_pk = ?", (pk,))
            conn.execute("DELETE FROM index_state WHERE session_pk = ?", (pk,))
            conn.execute("DELETE FROM sessions WHERE pk = ?", (pk,))
        return True

    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None
    ) -> tuple[str, int]:
        """Store already-validated event lines without indexing; return (key, events added).
        ``parsed`` may carry the lines' parsed events, to spare parsing them twice.

        Importing the same transcript again adds nothing: entries already stored are
        recognised by their id (id-less rows by their exact text). New events make the session dirty, so
        reconciliation picks it up.
        """
        key = normalize_key(meta.key)
        with self.transaction() as conn:
            found = (
                conn.execute(
                    "SELECT pk, key, last_seq FROM sessions WHERE session_id = ?",
                    (meta.session_id,),
                ).fetchone()
                if meta.session_id
                else conn.execute(
                    "SELECT pk, key, last_seq FROM sessions WHERE key = ?", (key,)
                ).fetchone()
            )
            if found is None:
                if conn.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone():
                    # The key now names another transcript (a reset): keep both.
                    key = f"{key}:import-{meta.session_id}".lower()
                pk, _ = self._create_session(conn, replace(meta, key=key), clean=not lines)
                last_seq, seen_ids, seen_bodies = 0, set(), set()
            else:
                pk, key, last_seq = found
                seen_ids = {
                    r[0]
                    for r in conn.execute(
                        "SELECT entry_id FROM events WHERE session_pk = ? AND entry_id IS NOT NULL",
                        (pk,),
                    )
                }
                seen_bodies = {
                    r[0]
                    for r in conn.execute(
                        "SELECT body FROM events WHERE session_pk = ? AND entry_id IS NULL", (pk,)
                    )
                }
            added = []
            for n, line in enumerate(lines):
                event = parsed[n] if parsed is not None else json.loads(line)
                seq = last_seq + len(added) + 1
                kind = event.get("type")
                stored_id = None if kind in ("session", "leaf") else node_id(event, seq)
                real_id = stored_id if stored_id and not stored_id.startswith("#") else None
                # Skip what an earlier import stored; repeats inside this file are data (the
                # tree rules report and ignore duplicate ids), so they are kept.
                if (real_id and real_id in seen_ids) or (not real_id and line in seen_bodies):
                    continue
                added.append((pk, seq, real_id, kind, line))
            if added:
                conn.executemany(
                    "INSERT INTO events (session_pk, seq, entry_id, kind, body) "
                    "VALUES (?, ?, ?, ?, ?)",
                    added,
                )
                conn.execute(
                    "UPDATE sessions SET last_seq = ?, updated_at = max(updated_at, ?) "
                    "WHERE pk = ?",
                    (last_seq + len(added), meta.updated_at or 0, pk),
                )
                conn.execute(
                    "UPDATE index_state SET state = 'dirty', claim_owner = NULL, "
                    "claim_expires = NULL WHERE session_pk = ?",
                    (pk,),
                )
        return key, len(added)


def _lower(value: str | None) -> str | None:
    return value.lower() if isinstance(value, str) else None
