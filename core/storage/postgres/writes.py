"""The write path on PostgreSQL (SPEC 3): append with the index row in the same transaction,
import without indexing, delete, and the bulk row writes rebuilds use.

Concurrency: every write locks its session's row first (``FOR UPDATE``), so two hosts
appending to one session take turns, and appends to different sessions run side by side.
Rowids are unique per agent; a rowid another transaction took meanwhile is skipped with
``ON CONFLICT DO NOTHING`` and the row moves to the next slot, as in SQLite.
"""

from __future__ import annotations

import uuid
import weakref
from contextlib import contextmanager
from typing import Any, Iterator

from ...indexer import INDEXER_VERSION, IndexRow, first_rowid, next_rowid
from ...keys import normalize_key
from ...transcript import parse_event
from ..model import AppendResult, BranchRow, SessionMeta, now_ms
from ..stored import id_spellings, in_log_order, names_as_parent, stored_entry_id
from ..writeplan import Head, body_of, carry_out_append, place_rowids, title_of
from .driver import Conflict, retried
from .erase import Erasing
from .facts import FactsStore
from .fts import index_text
from .locks import locked
from .text import load_text, store_text
from .tool_writes import ToolWrites

# Connections that have their temporary staging table (it lives as long as the connection).
_staging: weakref.WeakSet = weakref.WeakSet()

# One row, and its text when the rowid was free (a CTE: both or neither).
_INSERT_ROW = (
    "WITH stored AS (INSERT INTO message_index (agent_id, rowid, session_pk, entry_id, role, "
    "ts, exact, tsv) VALUES (%(agent)s, %(rowid)s, %(pk)s, %(entry)s, %(role)s, "
    "%(ts)s, %(exact)s, %(tsv)s::tsvector) "
    "ON CONFLICT (agent_id, rowid) DO NOTHING RETURNING agent_id, rowid) "
    "INSERT INTO message_text (agent_id, rowid, body) SELECT agent_id, rowid, %(body)s "
    "FROM stored RETURNING rowid"
)
_COLUMNS = ("agent", "rowid", "pk", "entry", "role", "ts", "body", "exact", "tsv")


class Writes(Erasing, FactsStore, ToolWrites):
    """Writing methods; the connection is a writer's, in autocommit mode."""

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """BEGIN ... COMMIT, rolled back on any error (nothing half-written)."""
        with self._tx() as conn:
            yield conn

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction around several writes (a file's new events and its new state)."""
        with self._tx():
            yield

    def ensure_agent(self, now: int) -> None:
        """Create the agent's rows (and its progress row) if this is its first writer."""
        if self._one("SELECT 1 FROM agents WHERE agent_id = %s", (self.agent_id,)) is not None:
            return
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO agents (agent_id, created_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (self.agent_id, now),
            )
            conn.execute(
                "INSERT INTO reconcile_progress (agent_id) VALUES (%s) ON CONFLICT DO NOTHING",
                (self.agent_id,),
            )

    def _create_session(self, meta: SessionMeta, clean: bool) -> tuple | None:
        """Insert a session row; None if another transaction created that key meanwhile."""
        created = meta.created_at if meta.created_at is not None else now_ms()
        return self.conn.execute(
            "INSERT INTO sessions (agent_id, key, session_id, spawned_by, parent_key, label, "
            "source, created_at, updated_at, state, indexer_version, host) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING "
            "RETURNING pk, key, session_id, created_at, last_seq, leaf_id, state, indexer_version, "
            "branch_seq",
            (
                self.agent_id,
                meta.key,
                meta.session_id or str(uuid.uuid4()),
                _lower(meta.spawned_by),
                _lower(meta.parent_key),
                _clean(meta.label),
                meta.source,
                created,
                meta.updated_at if meta.updated_at is not None else created,
                "clean" if clean else "dirty",
                INDEXER_VERSION if clean else 0,
                meta.host or self.host,
            ),
        ).fetchone()

    @retried
    def append(
        self, meta: SessionMeta, line: str | bytes | dict[str, Any], skip_known: bool = False
    ) -> AppendResult:
        """As the SQLite backend's (``writeplan.plan_append`` decides, the methods below
        carry it out); the session's row is locked first."""
        key = normalize_key(meta.key)
        event = parse_event(line)
        body = body_of(line, event)
        with self._tx():
            found = locked(self, "key", key, meta.host)
            if found is None:
                found = (self._create_session(meta._replace(key=key), True)
                         or locked(self, "key", key, meta.host))
            if found is None:
                raise Conflict(f"session {key} was created and removed meanwhile")
            pk, _key, session_id, created_at, last_seq, leaf, state, version, branch_seq = found
            head = Head(pk, session_id, created_at, last_seq, leaf, state, version, branch_seq)
            return carry_out_append(self, head, key, event, body, skip_known)

    def _add_row(self, head: Head, row: IndexRow) -> None:
        self.insert_rows(head.pk, head.session_id, [row])

    def _store_event(self, pk: int, seq: int, event: dict[str, Any], body: str,
                     leaf: str | None) -> None:
        kind = event["type"]
        self.conn.execute(
            "INSERT INTO events (session_pk, seq, entry_id, kind, body) VALUES (%s, %s, %s, %s, %s)",
            (pk, seq, stored_entry_id(event), kind, body),
        )
        self.conn.execute(
            "UPDATE sessions SET last_seq = %s, leaf_id = %s, updated_at = %s, "
            "messages = messages + %s WHERE pk = %s",
            (seq, leaf, now_ms(), int(kind == "message"), pk),
        )

    def _note_row(self, pk: int, row: IndexRow, title: str | None) -> None:
        """The summary follows the index (refresh_summaries' rule)."""
        self.conn.execute(
            "UPDATE sessions SET last_message_at = greatest(last_message_at, %s), "
            "title = coalesce(title, %s) WHERE pk = %s",
            (row.ts, _clean_title(title), pk),
        )

    def _set_indexed(self, pk: int, seq: int, leaf: str | None) -> None:
        self.conn.execute(
            "UPDATE sessions SET indexed_seq = %s, indexed_leaf = %s WHERE pk = %s",
            (seq, leaf, pk),
        )

    def _extend_branch(self, pk: int, seq: int, shown: BranchRow | None) -> None:
        """As the SQLite backend's: the branch messages stay current through ``seq``."""
        if shown is not None:
            self.conn.execute("INSERT INTO branch_messages (session_pk, seq, entry_id, role, at) "
                              "VALUES (%s, %s, %s, %s, %s)", (pk, *shown))
        self.conn.execute("UPDATE sessions SET branch_seq = %s WHERE pk = %s", (seq, pk))

    def replace_branches(self, batch: list[tuple[int, int, list[BranchRow]]]) -> None:
        """As the SQLite backend's (never older branch messages over newer; none for a branch
        not in log order)."""
        current = dict(self.conn.execute(
            "SELECT pk, branch_seq FROM sessions WHERE pk = ANY(%s::bigint[])",
            ([pk for pk, _, _ in batch],)).fetchall())
        batch = in_log_order([(pk, seq, shown) for pk, seq, shown in batch
                              if current.get(pk, seq + 1) <= seq])
        if not batch:
            return
        self.conn.execute("DELETE FROM branch_messages WHERE session_pk = ANY(%s::bigint[])",
                          ([pk for pk, _, _ in batch],))
        with self.conn.cursor().copy(
            "COPY branch_messages (session_pk, seq, entry_id, role, at) FROM STDIN"
        ) as copy:
            for pk, _, shown in batch:
                for row in shown:
                    copy.write_row((pk, *row))
        self.conn.cursor().executemany("UPDATE sessions SET branch_seq = %s WHERE pk = %s",
                                       [(seq, pk) for pk, seq, _ in batch])

    def _read_cwd(self, pk: int, seq: int, event: dict[str, Any]) -> None:
        """The session's cwd, as its first header (stored at ``seq``) names it."""
        cwd = event.get("cwd")
        self.conn.execute(
            "UPDATE sessions SET cwd = %s WHERE pk = %s AND NOT EXISTS (SELECT 1 FROM events "
            "WHERE session_pk = %s AND kind = 'session' AND seq < %s)",
            (_clean(cwd) if isinstance(cwd, str) else None, pk, pk, seq),
        )

    def refresh_summary(self, pk: int) -> None:
        """Title and last message time from the session's index rows, inside the caller's
        transaction (a rebuild publishing them)."""
        self.refresh_summaries([pk])

    def refresh_summaries(self, pks: list[int]) -> None:
        if not pks:
            return
        titles = dict(self.conn.execute(  # each text by its key (see matching._rows)
            "SELECT p.pk, (SELECT (SELECT t.body FROM message_text t WHERE t.agent_id = m.agent_id "
            "AND t.rowid = m.rowid) FROM message_index m WHERE m.session_pk = p.pk "
            "AND m.role = 'user' ORDER BY m.rowid LIMIT 1) FROM unnest(%s::bigint[]) AS p(pk)",
            (pks,),
        ).fetchall())
        self.conn.execute(
            "UPDATE sessions s SET title = n.title, last_message_at = (SELECT max(m.ts) FROM "
            "message_index m WHERE m.session_pk = s.pk) "
            "FROM unnest(%s::bigint[], %s::text[]) AS n(pk, title) WHERE s.pk = n.pk",
            (pks, [_clean_title(title_of(load_text(titles[pk]))) if titles.get(pk) else None
                   for pk in pks]),
        )

    def _has_body(self, pk: int, body: str) -> bool:
        """An id-less stored event has this text."""
        return self._has("entry_id IS NULL AND body = %s", pk, body)

    def _has(self, condition: str, pk: int, value: str) -> bool:
        return self.conn.execute(f"SELECT 1 FROM events WHERE session_pk = %s AND {condition}",
                                 (pk, value)).fetchone() is not None

    def _mark_dirty(self, pk: int) -> None:
        self.conn.execute(
            "UPDATE sessions SET state = 'dirty', claim_owner = NULL, claim_expires = NULL "
            "WHERE pk = %s",
            (pk,),
        )

    def _adopted(self, pk: int, node: str) -> bool:
        """As the SQLite backend's: an entry already stored names ``node`` as its parent
        (read only when the last rebuild found the tree broken)."""
        rows = self.conn.execute(
            "SELECT e.seq, e.body FROM sessions s JOIN events e ON e.session_pk = s.pk "
            "WHERE s.pk = %s AND s.problems IS NOT NULL "
            "AND (strpos(e.body, %s) > 0 OR strpos(e.body, %s) > 0)", (pk, *id_spellings(node))
        ).fetchall()
        return names_as_parent(rows, node)

    def _has_entry(self, pk: int, entry_id: str) -> bool:
        return self._has("entry_id = %s", pk, entry_id)

    def insert_rows(self, pk: int, session_id: str, rows: list[IndexRow]) -> None:
        """Insert one session's index rows inside the caller's transaction (``insert_many``)."""
        self.insert_many([(pk, session_id, rows)])

    def insert_many(self, batches: list[tuple[int, str, list[IndexRow]]]) -> None:
        """Insert index rows of sessions ``(pk, session_id, rows)`` inside the caller's
        transaction, and count each session's rows and characters (ranking's statistics).
        Rowids are placed against the rows stored near them; a rowid another transaction
        took meanwhile moves its row to the next free slot."""
        values: list[tuple] = []
        stats: dict[int, list[int]] = {}
        for pk, session_id, rows in batches:
            for row in rows:
                text = index_text(row.body)
                values.append((self.agent_id, first_rowid(session_id, row), pk, row.entry_id,
                               row.role, row.ts, store_text(row.body), text.exact, text.tsv))
            counts = stats.setdefault(pk, [0, 0])
            counts[0] += len(rows)
            counts[1] += sum(len(row.body) for row in rows)
        if not values:
            return
        values = self._placed(values)
        stored = self._copy_rows(values) if len(values) > 4 else set()
        for value in [value for value in values if value[1] not in stored]:
            row = dict(zip(_COLUMNS, value))  # its rowid was taken meanwhile (or not copied)
            while not self.conn.execute(_INSERT_ROW, row).fetchone():
                row["rowid"] = next_rowid(row["rowid"])
        self.conn.execute(
            "UPDATE sessions SET index_rows = index_rows + s.n, index_chars = index_chars + s.c "
            "FROM unnest(%s::bigint[], %s::int[], %s::bigint[]) AS s(pk, n, c) "
            "WHERE sessions.pk = s.pk",
            ([pk for pk in stats], [c[0] for c in stats.values()], [c[1] for c in stats.values()]),
        )

    def _placed(self, values: list[tuple]) -> list[tuple]:
        """The rows with rowids moved off the ones already stored (or placed earlier here):
        ``writeplan.place_rowids``, as on SQLite."""
        placed = place_rowids([(value[1], 0, value) for value in values], self._taken_rowids)
        return [(value[0], rowid, *value[2:]) for rowid, _pk, value in placed]

    def _copy_rows(self, values: list[tuple]) -> set[int]:
        """Bulk insert through a temporary table (COPY, then one INSERT that skips rowids
        taken meanwhile); returns the rowids stored."""
        if self.conn not in _staging:  # once per pooled connection
            self.conn.execute(
                "CREATE TEMP TABLE IF NOT EXISTS staged_rows (agent_id text, rowid bigint, "
                "session_pk bigint, entry_id text, role text, ts bigint, body text, "
                "exact boolean, tsv tsvector)"
            )
            _staging.add(self.conn)
        with self.conn.cursor() as cursor:
            with cursor.copy(
                "COPY staged_rows (agent_id, rowid, session_pk, entry_id, role, ts, body, "
                "exact, tsv) FROM STDIN"
            ) as copy:
                for value in values:
                    copy.write_row(value)
            stored = {
                row[0]
                for row in cursor.execute(
                    "WITH stored AS (INSERT INTO message_index (agent_id, rowid, session_pk, "
                    "entry_id, role, ts, exact, tsv) SELECT agent_id, rowid, session_pk, "
                    "entry_id, role, ts, exact, tsv FROM staged_rows "
                    "ON CONFLICT (agent_id, rowid) DO NOTHING RETURNING agent_id, rowid) "
                    "INSERT INTO message_text (agent_id, rowid, body) SELECT s.agent_id, "
                    "s.rowid, t.body FROM stored s JOIN staged_rows t USING (agent_id, rowid) "
                    "RETURNING rowid"
                )
            }
            cursor.execute("DELETE FROM staged_rows")
        return stored

    def _taken_rowids(self, rowids: list[int]) -> set[int]:
        rows = self.conn.execute(
            "SELECT rowid FROM message_index WHERE agent_id = %s AND rowid = ANY(%s::bigint[])",
            (self.agent_id, rowids),
        ).fetchall()
        return {r[0] for r in rows}

    def delete_rows(self, pk: int) -> None:
        """Remove a session's index rows and their statistics inside the caller's
        transaction."""
        self.conn.execute("DELETE FROM message_index WHERE session_pk = %s", (pk,))
        self.conn.execute(
            "UPDATE sessions SET index_rows = 0, index_chars = 0 WHERE pk = %s", (pk,)
        )

    @retried
    def delete_session(self, key: str, host: str | None = None) -> bool:
        key = normalize_key(key)
        with self._tx() as conn:
            found = locked(self, "key", key, host)
            if found is None:
                return False
            self.delete_rows(found[0])
            # its events go with it (ON DELETE CASCADE), in this transaction
            conn.execute("DELETE FROM sessions WHERE pk = %s", (found[0],))
        if not self._depth:
            self.purge()
        return True


def _lower(value: str | None) -> str | None:
    return value.lower() if isinstance(value, str) else None


def _clean(value: str | None) -> str | None:
    """A label PostgreSQL can store (a NUL would be refused; it shows as U+FFFD)."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else None


def _clean_title(title: str | None) -> str | None:
    """A title (``writeplan.title_of``) PostgreSQL can store."""
    return None if title is None else _clean(title) or ""
