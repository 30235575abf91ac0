"""The read side of one agent's SQLite database: sessions, events, index rows, matching,
counts. Every method works on a read-only connection."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from ...indexer import INDEXER_VERSION, IndexRow
from ...keys import INCOGNITO_KINDS
from ..model import IDLE, Progress, SessionBrief, SessionRow, default_host
from ..stored import parse_events
from .driver import sqlite_errors
from .handle import Handle
from .schema import LINK_INDEXES_PRESENT

# The one formulation of "reconciliation has work here" (``SessionRow.pending`` in Python):
# dirty, claimed, or clean under another indexer version. Needs ``:version`` bound.
PENDING = "(i.state != 'clean' OR i.indexer_version != :version)"

SESSION_COLUMNS = """s.pk, s.key, s.session_id, s.spawned_by, s.parent_key, s.label, s.source,
    s.created_at, s.updated_at, s.last_seq, s.leaf_id, i.state, i.indexed_seq,
    i.indexer_version, i.problems, s.archived"""
ARCHIVED_AT = 15  # SESSION_COLUMNS' archived: SQLite's 0 or 1, a bool in SessionRow


def session_row(row: tuple, host: str) -> SessionRow:
    """A row of ``SESSION_COLUMNS`` (and perhaps the card columns) as a ``SessionRow``."""
    return SessionRow(*row[:ARCHIVED_AT], bool(row[ARCHIVED_AT]), *row[ARCHIVED_AT + 1:], host=host)


SESSIONS_JOIN = "FROM sessions s JOIN index_state i ON i.session_pk = s.pk"
# Every session's index rows and characters, summed (what index_totals keeps: schema.py, 8).
SUMS = "SELECT coalesce(sum(rows), 0), coalesce(sum(chars), 0) FROM index_state"


def own_tag(pk: int) -> str:
    return f"s{pk}"


def tree_tag(pk: int) -> str:
    return f"t{pk}"


def scope_text(pk: int, tree: str) -> str:
    """The scope column of a row of session ``pk`` whose stored tree is ``tree``."""
    return " ".join([own_tag(pk)] + [tree_tag(int(p)) for p in tree.split()])


class Reads(Handle):
    """Reading methods; ``self.conn`` is a connection in autocommit mode."""

    conn: sqlite3.Connection
    path: Path
    agent_id: str
    host: str = default_host()  # a local store has one host: this machine (core/hosts.py)

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
        return [session_row(row, self.host) for row in rows]

    def session_briefs(self, odd_only: bool = False, below: str | None = None,
                       host: str | None = None) -> list[SessionBrief]:
        """Every session, with only what deciding visibility needs (cheap to read them all);
        with ``odd_only``, only those whose key is shaped like an incognito one or filed
        under another agent (the only sessions the operator may not see); with ``below`` (not
        with ``odd_only``), the session of that key and every session linked under it
        (``spawned_by`` or ``parent_key``), transitively: a superset of its spawned tree
        (every session, from a file that lacks the link indexes: schema.INDEX_ONLY).
        Every session is of this store's one host: another ``host`` has none."""
        if host is not None and host != self.host:
            return []
        where, params = "", {"version": INDEXER_VERSION}
        if odd_only:  # key ranges, each read through the key's index (no scan of every session)
            own = f"agent:{self.agent_id}:"
            ranges = [("", own), (own[:-1] + ";", None)]  # other agents' keys (";" follows ":")
            ranges += [(f"{own}{kind}:incognito-", f"{own}{kind}:incognito.")
                       for kind in INCOGNITO_KINDS]  # keys shaped like an incognito one
            clauses = []
            for n, (lo, hi) in enumerate(ranges):
                params[f"lo{n}"], params[f"hi{n}"] = lo, hi
                clauses.append(f"s.key >= :lo{n}" + ("" if hi is None else f" AND s.key < :hi{n}"))
            where = "WHERE " + " OR ".join(f"({clause})" for clause in clauses)
        elif below is not None and self._one(LINK_INDEXES_PRESENT)[0] == 2:
            # Each step down through both link indexes (SQLite's OR of two indexes).
            params["root"] = below.lower()
            where = """WHERE s.key IN (
                WITH RECURSIVE tree(key) AS (
                    SELECT :root
                    UNION SELECT c.key FROM tree JOIN sessions c
                        ON lower(c.spawned_by) = tree.key OR lower(c.parent_key) = tree.key
                ) SELECT key FROM tree)"""
        rows = self._all(
            f"SELECT s.pk, s.key, s.spawned_by, s.parent_key, NOT {PENDING} {SESSIONS_JOIN} "
            f"{where}",
            params,
        )
        return [SessionBrief._make(row) for row in rows]

    def session_pks(self) -> list[int]:
        # One JSON array, not a row per session: half the time at 20,000 sessions (the
        # operator's view reads them at every search's start)
        return json.loads(self._one("SELECT json_group_array(pk) FROM sessions")[0])

    def session_count(self) -> int:
        return self._one("SELECT count(*) FROM sessions")[0]

    def pending_pks(self) -> frozenset[int]:
        """Sessions reconciliation has work in (the one ``PENDING`` predicate)."""
        rows = self._all(f"SELECT i.session_pk FROM index_state i WHERE {PENDING}",
                         {"version": INDEXER_VERSION})
        return frozenset(row[0] for row in rows)

    def sessions_naming(self, pk: int) -> list[int]:
        """Sessions whose index rows name ``pk`` in their tree (core/tree_tags.py)."""
        rows = self._all(
            "SELECT session_pk FROM index_state WHERE ' ' || tree || ' ' GLOB ?",
            (f"* {int(pk)} *",),
        )
        return [row[0] for row in rows]

    def sessions_by_pk(self, pks: Iterable[int]) -> dict[int, SessionRow]:
        rows = self._all(
            f"SELECT {SESSION_COLUMNS} {SESSIONS_JOIN} "
            "WHERE s.pk IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(pks)),),
        )
        return {row[0]: session_row(row, self.host) for row in rows}

    def session(self, key: str, host: str | None = None) -> SessionRow | None:
        if host is not None and host != self.host:
            return None
        row = self._one(f"SELECT {SESSION_COLUMNS} {SESSIONS_JOIN} WHERE s.key = ?", (key.lower(),))
        return session_row(row, self.host) if row else None

    def key_hosts(self, key: str) -> list[str]:
        return [self.host] if self.session(key) is not None else []

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
        return parse_events(rows, problems)

    def index_rows(self, session_pk: int) -> list[tuple[int, IndexRow]]:
        rows = self._all(
            "SELECT m.rowid, m.entry_id, m.role, m.ts, f.body FROM message_index m "
            "LEFT JOIN message_fts f ON f.rowid = m.rowid WHERE m.session_pk = ? "
            "ORDER BY m.rowid",
            (session_pk,),
        )
        return [(rowid, IndexRow(eid, role, ts, body)) for rowid, eid, role, ts, body in rows]

    def index_state_problems(self, session_pk: int) -> list[str]:
        """How a session's rows disagree with what its index state says of them: the scope
        every row must carry (its stored tree), their count and characters. Empty if none."""
        found = self._one(
            "SELECT i.tree, i.rows, i.chars, count(f.rowid), coalesce(sum(length(f.body)), 0), "
            "count(DISTINCT f.scope), max(f.scope) FROM index_state i "
            "LEFT JOIN message_index m ON m.session_pk = i.session_pk "
            "LEFT JOIN message_fts f ON f.rowid = m.rowid WHERE i.session_pk = ?",
            (session_pk,),
        )
        if found is None:
            return []
        tree, rows, chars, counted, length, scopes, scope = found
        problems = []
        if (rows, chars) != (counted, length):
            problems.append(f"index state says {rows} rows of {chars} characters, "
                            f"the index holds {counted} of {length}")
        if counted and (scopes != 1 or scope != scope_text(session_pk, tree)):
            problems.append("index rows do not carry the session's scope")
        return problems

    def totals_problems(self) -> list[str]:
        """How the totals kept of every session's rows and characters (``index_totals``,
        which searches read) disagree with the index states they sum. Empty if none."""
        kept = self._one("SELECT rows, chars FROM index_totals")
        if kept is None:
            return ["the index totals are missing"]
        rows, chars = self._one(SUMS)
        if tuple(kept) != (rows, chars):
            return [f"the index totals say {kept[0]} rows of {kept[1]} characters, the "
                    f"sessions' index states {rows} of {chars}"]
        return []

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
