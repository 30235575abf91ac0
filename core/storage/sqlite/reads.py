"""The read side of one agent's SQLite database: sessions, events, index rows, matching,
counts. Every method works on a read-only connection."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ...errors import ValidationError
from ...indexer import INDEXER_VERSION, IndexRow
from ...query import ParsedQuery
from ...transcript import decode_line
from ..model import IDLE, MatchRow, Progress, SessionFilter, SessionRow
from .connection import sqlite_errors

# The one formulation of "reconciliation has work here" (``SessionRow.pending`` in Python):
# dirty, claimed, or clean under another indexer version. Needs ``:version`` bound.
PENDING = "(i.state != 'clean' OR i.indexer_version != :version)"

SESSION_COLUMNS = """s.pk, s.key, s.session_id, s.spawned_by, s.parent_key, s.label, s.source,
    s.created_at, s.updated_at, s.last_seq, s.leaf_id, i.state, i.indexed_seq,
    i.indexer_version, i.problems"""
SESSIONS_JOIN = "FROM sessions s JOIN index_state i ON i.session_pk = s.pk"


class Reads:
    """Reading methods; ``self.conn`` is a connection in autocommit mode."""

    conn: sqlite3.Connection
    path: Path
    agent_id: str

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every read inside sees one consistent state (WAL snapshot)."""
        with sqlite_errors(self.path):
            self.conn.execute("BEGIN")
            try:
                yield
            finally:
                self.conn.execute("COMMIT")

    def _all(self, sql: str, params: Any = ()) -> list[Any]:
        with sqlite_errors(self.path):
            return self.conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Any = ()) -> Any:
        with sqlite_errors(self.path):
            return self.conn.execute(sql, params).fetchone()

    # ----------------------------------------------------------------- sessions and events

    def sessions(self) -> list[SessionRow]:
        rows = self._all(f"SELECT {SESSION_COLUMNS} {SESSIONS_JOIN} ORDER BY s.pk")
        return [SessionRow(*row) for row in rows]

    def session(self, key: str) -> SessionRow | None:
        row = self._one(f"SELECT {SESSION_COLUMNS} {SESSIONS_JOIN} WHERE s.key = ?", (key.lower(),))
        return SessionRow(*row) if row else None

    def visibility_rev(self) -> int:
        """A counter the schema's triggers move whenever sessions or their index state
        change (see schema migration 2): equal values mean an unchanged session table."""
        row = self._one("SELECT value FROM meta WHERE key = 'visibility_rev'")
        return int(row[0]) if row else 0

    def events(
        self, session_pk: int, problems: list[str] | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """The stored log, parsed within the entry bounds (depth, Unicode; not size, so an
        event stored before the bounds is read whole). A row that does not parse, stored by an
        older backscroll, is skipped and named in ``problems``, never raised."""
        rows = self._all(
            "SELECT seq, body FROM events WHERE session_pk = ? ORDER BY seq", (session_pk,)
        )
        parsed = []
        for seq, body in rows:
            try:
                event = decode_line(body, max_bytes=None)
            except ValidationError as err:
                event = err
            if isinstance(event, dict):
                parsed.append((seq, event))
            elif problems is not None:
                reason = event if isinstance(event, ValidationError) else "not a JSON object"
                problems.append(f"event {seq}: {reason}; skipped")
        return parsed

    def index_rows(self, session_pk: int) -> list[tuple[int, IndexRow]]:
        rows = self._all(
            "SELECT m.rowid, m.entry_id, m.role, m.ts, f.body FROM message_index m "
            "LEFT JOIN message_fts f ON f.rowid = m.rowid WHERE m.session_pk = ? "
            "ORDER BY m.rowid",
            (session_pk,),
        )
        return [(rowid, IndexRow(eid, role, ts, body)) for rowid, eid, role, ts, body in rows]

    # ----------------------------------------------------------------- matching

    def match(
        self,
        query: ParsedQuery,
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
        base, params = _match_where(query, sessions, role, since_ms, until_ms)
        with sqlite_errors(self.path):
            base, params, windowed = self._rank_window(base, params, order, rank_window)
            order_by = "f.rowid DESC" if order == "recent" else "score, f.rowid DESC"
            top = self.conn.execute(
                f"SELECT f.rowid, bm25(message_fts) AS score {base} ORDER BY {order_by} LIMIT ?",
                (*params, limit),
            ).fetchall()
            rows = self._match_rows(top)
        return [row for row, _ in rows], windowed

    def match_sessions(
        self,
        query: ParsedQuery,
        sessions: SessionFilter,
        limit: int,
        order: str = "best",
        role: str | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        rank_window: int | None = None,
    ) -> tuple[list[tuple[MatchRow, int]], bool]:
        """``match`` grouped by session inside the query, before the limit: each session's
        best row (the one ``match`` ranks first among its rows) with its number of matching
        rows, the sessions ordered as their best rows rank; so one session with many hits
        takes one slot. Ranked over the same rows as ``match`` (the same window), so the
        counts are of those rows too."""
        base, params = _match_where(query, sessions, role, since_ms, until_ms, joined=True)
        within = "ORDER BY rowid DESC" if order == "recent" else "ORDER BY score, rowid DESC"
        with sqlite_errors(self.path):
            base, params, windowed = self._rank_window(base, params, order, rank_window)
            top = self.conn.execute(
                "WITH hits AS (SELECT f.rowid AS rowid, m.session_pk AS pk, "
                f"bm25(message_fts) AS score {base}), "
                "ranked AS (SELECT rowid, score, count(*) OVER (PARTITION BY pk) AS hits, "
                f"row_number() OVER (PARTITION BY pk {within}) AS n FROM hits) "
                f"SELECT rowid, score, hits FROM ranked WHERE n = 1 {within} LIMIT ?",
                (*params, limit),
            ).fetchall()
            rows = self._match_rows(top)
        return rows, windowed

    def _rank_window(self, base: str, params: list[Any], order: str, rank_window: int | None
                     ) -> tuple[str, list[Any], bool]:
        """Bound ``base`` to its newest ``rank_window`` matches when it has more (best order)."""
        if order != "best" or not rank_window:
            return base, params, False
        cutoff = self.conn.execute(
            f"SELECT f.rowid {base} ORDER BY f.rowid DESC LIMIT 1 OFFSET ?",
            (*params, rank_window - 1),
        ).fetchone()
        if cutoff is None:
            return base, params, False
        return f"{base} AND f.rowid >= ?", [*params, cutoff[0]], True

    def _match_rows(self, top: list[tuple[Any, ...]]) -> list[tuple[MatchRow, Any]]:
        """``(rowid, score, extra...)`` rows with their metadata and text, in order; the
        second item is the first extra column (None without one). Only the rows kept are
        read: reading every match would dominate."""
        kept = self.conn.execute(
            "SELECT m.rowid, m.session_pk, m.entry_id, m.role, m.ts, f.body "
            "FROM message_index m JOIN message_fts f ON f.rowid = m.rowid "
            "WHERE m.rowid IN (SELECT value FROM json_each(?))",
            (json.dumps([row[0] for row in top]),),
        ).fetchall()
        details = {row[0]: row[1:] for row in kept}
        return [
            (MatchRow(row[0], *details[row[0]], row[1]), row[2] if len(row) > 2 else None)
            for row in top
            if row[0] in details
        ]

    # ----------------------------------------------------------------- counts and progress

    def has_pending_sessions(self) -> bool:
        """Any session (visible or not) whose index is not current: reconciliation work."""
        sql = f"SELECT 1 FROM index_state i WHERE {PENDING} LIMIT 1"
        return self._one(sql, {"version": INDEXER_VERSION}) is not None

    def pending_count(self) -> tuple[int, int]:
        """(sessions needing a rebuild, their stored events)."""
        return self._one(
            f"SELECT count(*), coalesce(sum(s.last_seq), 0) {SESSIONS_JOIN} WHERE {PENDING}",
            {"version": INDEXER_VERSION},
        )

    def counts(self) -> dict[str, int]:
        """Sessions, stored messages, indexed rows, pending and never-indexed sessions."""
        sessions, pending, never = self._one(
            f"SELECT count(*), coalesce(sum({PENDING}), 0), "
            f"coalesce(sum({PENDING} AND i.indexer_version = 0), 0) FROM index_state i",
            {"version": INDEXER_VERSION},
        )
        messages = self._one("SELECT count(*) FROM events WHERE kind = 'message'")[0]
        indexed = self._one("SELECT count(*) FROM message_index")[0]
        return {
            "sessions": sessions,
            "messages": messages,
            "indexed": indexed,
            "dirty": pending,
            "neverIndexed": never,
        }

    def integrity_problems(self, limit: int = 5) -> list[str]:
        """What SQLite's ``quick_check`` finds wrong with the file (every page is read)."""
        rows = self._all(f"PRAGMA quick_check({int(limit)})")
        return [row[0] for row in rows if row[0] != "ok"]

    def orphan_index_rows(self) -> tuple[int, int]:
        """(index rows of no session, text rows with no index row): both must be 0."""
        no_session = self._one(
            "SELECT count(*) FROM message_index WHERE session_pk NOT IN (SELECT pk FROM sessions)"
        )[0]
        no_index = self._one(
            "SELECT count(*) FROM message_fts WHERE rowid NOT IN (SELECT rowid FROM message_index)"
        )[0]
        return no_session, no_index

    def read_progress(self) -> Progress:
        row = self._one(
            "SELECT state, run_id, started_at, updated_at, sessions_done, sessions_total, "
            "messages_done, current_session, owner, lease_expires FROM reconcile_progress "
            "WHERE id = 1"
        )
        return Progress(*row) if row else IDLE


def _match_where(
    query: ParsedQuery,
    sessions: SessionFilter,
    role: str | None,
    since_ms: int | None,
    until_ms: int | None,
    joined: bool = False,
) -> tuple[str, list[Any]]:
    """``FROM ... WHERE ...`` of a match: the query, the sessions (inside the query, before
    any limit) and the filters. With nothing to filter (the operator on a clean index) the
    join is left out unless ``joined``: the FTS index alone orders and ranks."""
    where = ["message_fts MATCH ?"]
    params: list[Any] = [query.fts]
    if sessions.pks or not sessions.exclude:
        where.append(
            f"m.session_pk {'NOT IN' if sessions.exclude else 'IN'} "
            "(SELECT value FROM json_each(?))"
        )
        params.append(json.dumps(sessions.pks))
    for clause, value in (("m.role = ?", role), ("m.ts >= ?", since_ms), ("m.ts <= ?", until_ms)):
        if value is not None:
            where.append(clause)
            params.append(value)
    join = "JOIN message_index m ON m.rowid = f.rowid " if joined or len(where) > 1 else ""
    return f"FROM message_fts f {join}WHERE {' AND '.join(where)}", params
