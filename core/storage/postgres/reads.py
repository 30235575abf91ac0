"""The read side of one agent's rows on PostgreSQL: sessions, events, index rows, counts,
progress. Every method works on a read-only connection."""

from __future__ import annotations

from typing import Any, Iterable

from ...indexer import INDEXER_VERSION, IndexRow
from ..model import IDLE, Progress, SessionBrief, SessionRow, default_host
from ..stored import parse_events
from .handle import Handle
from .text import load_text

# The one formulation of "reconciliation has work here" (``SessionRow.pending`` in Python),
# as in the SQLite backend. Needs ``%(version)s`` bound.
PENDING = "(state <> 'clean' OR indexer_version <> %(version)s)"

SESSION_COLUMNS = """pk, key, session_id, spawned_by, parent_key, label, source, created_at,
    updated_at, last_seq, leaf_id, state, indexed_seq, indexer_version, problems, archived"""


def session_row(row: tuple) -> SessionRow:
    """A row of ``SESSION_COLUMNS`` (and perhaps the card columns) followed by ``host``."""
    return SessionRow(*row[:-1], host=row[-1])


class Reads(Handle):
    """Reading methods of both handle classes."""

    host: str = default_host()  # this machine's label (core/hosts.py), set by the storage

    # ----------------------------------------------------------------- sessions and events

    def sessions(self) -> list[SessionRow]:
        rows = self._all(
            f"SELECT {SESSION_COLUMNS}, host FROM sessions WHERE agent_id = %s ORDER BY pk",
            (self.agent_id,),
        )
        return [session_row(row) for row in rows]

    def session_briefs(self, odd_only: bool = False, below: str | None = None,
                       host: str | None = None) -> list[SessionBrief]:
        """Every session with only what deciding visibility needs; with ``odd_only``, only
        those shaped like an incognito key or filed under another agent; with ``below``, that
        session and every session linked under it, transitively; with ``host``, only that
        host's (its links followed within it)."""
        where = "AND host = %(host)s " if host is not None else ""
        link_host = "AND c.host = %(host)s" if host is not None else ""
        if odd_only:
            where += "AND (key LIKE '%%incognito-%%' OR left(key, %(n)s) <> %(own)s)"
        elif below is not None:
            where += f"""AND key IN (
                WITH RECURSIVE tree(key) AS (
                    SELECT %(root)s::text
                    UNION SELECT c.key FROM tree JOIN sessions c ON c.agent_id = %(agent)s
                        {link_host}
                        AND (lower(c.spawned_by) = tree.key OR lower(c.parent_key) = tree.key)
                ) SELECT key FROM tree)"""
        rows = self._all(
            f"SELECT pk, key, spawned_by, parent_key, NOT {PENDING} FROM sessions "
            f"WHERE agent_id = %(agent)s {where}",
            {"agent": self.agent_id, "version": INDEXER_VERSION, "root": (below or "").lower(),
             "n": len(self.agent_id) + 7, "own": f"agent:{self.agent_id}:", "host": host},
        )
        return [SessionBrief._make(row) for row in rows]

    def session_pks(self) -> list[int]:
        return [row[0] for row in self._all(
            "SELECT pk FROM sessions WHERE agent_id = %s", (self.agent_id,)
        )]

    def session_count(self) -> int:
        return self._one("SELECT count(*) FROM sessions WHERE agent_id = %s", (self.agent_id,))[0]

    def pending_pks(self) -> frozenset[int]:
        rows = self._all(
            f"SELECT pk FROM sessions WHERE agent_id = %(agent)s AND {PENDING}",
            {"agent": self.agent_id, "version": INDEXER_VERSION},
        )
        return frozenset(row[0] for row in rows)

    def sessions_naming(self, pk: int) -> list[int]:
        """Rows here carry no tree tags (SQLite's planner uses them; ``match`` filters by
        session): no session is known to name ``pk``, so a scope's ``covered`` stays empty."""
        return []

    def sessions_by_pk(self, pks: Iterable[int]) -> dict[int, SessionRow]:
        rows = self._all(
            f"SELECT {SESSION_COLUMNS}, host FROM sessions WHERE agent_id = %s "
            "AND pk = ANY(%s::bigint[])",
            (self.agent_id, sorted(pks)),
        )
        return {row[0]: session_row(row) for row in rows}

    def session(self, key: str, host: str | None = None) -> SessionRow | None:
        """That host's session of the key; with None, this machine's, else the first host's."""
        row = self._one(
            f"SELECT {SESSION_COLUMNS}, host FROM sessions WHERE agent_id = %(agent)s "
            "AND key = %(key)s AND (%(host)s::text IS NULL OR host = %(host)s) "
            "ORDER BY host = %(own)s DESC, host LIMIT 1",
            {"agent": self.agent_id, "key": key.lower(), "host": host, "own": self.host},
        )
        return session_row(row) if row else None

    def key_hosts(self, key: str) -> list[str]:
        return [row[0] for row in self._all(
            "SELECT host FROM sessions WHERE agent_id = %s AND key = %s ORDER BY host",
            (self.agent_id, key.lower()))]

    def visibility_rev(self) -> int:
        row = self._one("SELECT visibility_rev FROM agents WHERE agent_id = %s", (self.agent_id,))
        return int(row[0]) if row else 0

    def events(
        self, session_pk: int, problems: list[str] | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        rows = self._all(
            "SELECT seq, body FROM events WHERE session_pk = %s ORDER BY seq", (session_pk,)
        )
        return parse_events(rows, problems)

    def index_rows(self, session_pk: int) -> list[tuple[int, IndexRow]]:
        rows = self._all(
            "SELECT m.rowid, m.entry_id, m.role, m.ts, (SELECT t.body FROM message_text t "
            "WHERE t.agent_id = m.agent_id AND t.rowid = m.rowid) FROM message_index m "
            "WHERE m.session_pk = %s ORDER BY m.rowid",
            (session_pk,),
        )
        return [
            (rowid, IndexRow(eid, role, ts, load_text(body) if body is not None else None))
            for rowid, eid, role, ts, body in rows
        ]

    def index_state_problems(self, session_pk: int) -> list[str]:
        """How a session's rows disagree with the counters kept beside them (their count
        and characters, ranking's statistics). Empty if none."""
        found = self._one("SELECT index_rows, index_chars FROM sessions WHERE pk = %s",
                          (session_pk,))
        if found is None:
            return []
        rows, chars = (int(v) for v in found)
        stored = self.index_rows(session_pk)  # texts as stored for NUL are longer: decoded
        counted, length = len(stored), sum(len(row.body or "") for _rowid, row in stored)
        if (rows, chars) != (counted, length):
            return [f"index state says {rows} rows of {chars} characters, "
                    f"the index holds {counted} of {length}"]
        return []

    def totals_problems(self) -> list[str]:
        """None: no totals of every session are kept here (matching.py sums the agent's
        sessions' counters)."""
        return []

    # ----------------------------------------------------------------- counts and progress

    def has_pending_sessions(self) -> bool:
        row = self._one(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE agent_id = %(agent)s AND state <> 'clean') "
            "OR EXISTS (SELECT 1 FROM sessions WHERE agent_id = %(agent)s "
            "AND (indexer_version < %(version)s OR indexer_version > %(version)s))",
            {"agent": self.agent_id, "version": INDEXER_VERSION},
        )
        return bool(row[0])

    def pending_count(self) -> tuple[int, int]:
        row = self._one(
            f"SELECT count(*), coalesce(sum(last_seq), 0) FROM sessions "
            f"WHERE agent_id = %(agent)s AND {PENDING}",
            {"agent": self.agent_id, "version": INDEXER_VERSION},
        )
        return int(row[0]), int(row[1])

    def counts(self) -> dict[str, int]:
        """From the per-session counters the write path keeps: no scan of events or rows."""
        row = self._one(
            f"SELECT count(*), coalesce(sum(messages), 0), coalesce(sum(index_rows), 0), "
            f"count(*) FILTER (WHERE {PENDING}), "
            f"count(*) FILTER (WHERE {PENDING} AND indexer_version = 0) "
            "FROM sessions WHERE agent_id = %(agent)s",
            {"agent": self.agent_id, "version": INDEXER_VERSION},
        )
        sessions, messages, indexed, pending, never = (int(v) for v in row)
        return {
            "sessions": sessions,
            "messages": messages,
            "indexed": indexed,
            "dirty": pending,
            "neverIndexed": never,
        }

    def integrity_problems(self, limit: int = 5) -> list[str]:
        """The server keeps its own pages' integrity (checksums, WAL): what can be checked
        from here is that the agent's rows are readable and agree with their sessions."""
        found = self._one(
            "SELECT count(*) FROM message_index m LEFT JOIN message_text t USING (agent_id, rowid) "
            "WHERE m.agent_id = %s AND t.rowid IS NULL",
            (self.agent_id,),
        )
        missing = int(found[0])
        return [f"{missing} index rows have no text"][:limit] if missing else []

    def orphan_index_rows(self) -> tuple[int, int]:
        """(index rows of no session of this agent, text rows with no index row). A text
        without its row cannot exist (a foreign key); a row without its text shows in
        ``index_rows`` (text None), which ``verify`` then reports."""
        row = self._one(
            "SELECT count(*) FROM message_index m LEFT JOIN sessions s ON s.pk = m.session_pk "
            "WHERE m.agent_id = %s AND (s.pk IS NULL OR s.agent_id <> m.agent_id)",
            (self.agent_id,),
        )
        return int(row[0]), 0

    def read_progress(self) -> Progress:
        row = self._one(
            "SELECT state, run_id, started_at, updated_at, sessions_done, sessions_total, "
            "messages_done, current_session, owner, lease_expires FROM reconcile_progress "
            "WHERE agent_id = %s",
            (self.agent_id,),
        )
        return Progress(*row) if row else IDLE


