"""The write path of one agent's SQLite database (SPEC 3): append with the index row in the
same transaction, import without indexing, delete, and the bulk row writes rebuilds use."""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from ...indexer import INDEXER_VERSION, IndexRow, first_rowid, next_rowid
from ...keys import normalize_key
from ...transcript import parse_event
from ...tree_tags import ancestors
from ...visibility import SessionLink
from ..model import AppendResult, BranchRow, SessionMeta, now_ms
from ..stored import id_spellings, in_log_order, names_as_parent, stored_entry_id
from ..writeplan import Head, body_of, carry_out_append, place_rowids
from .driver import BUSY_TIMEOUT_S, sqlite_errors
from .facts import FactsStore
from .reads import scope_text
from .schema import CWD_COLUMN, SUMMARY_COLUMNS
from .tool_writes import ToolWrites

CHECKPOINT_WAIT_MS = 1000  # how long a purge waits for readers to leave the log


class Writes(FactsStore, ToolWrites):
    """Writing methods; ``self.conn`` is a writer connection in autocommit mode."""

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any error (nothing half-written).
        Inside ``atomic()`` it joins the transaction already open."""
        if self.conn.in_transaction:
            yield self.conn
            return
        with sqlite_errors(self.path):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction around several writes (a file's new events and its new state):
        after a crash, either all of them are stored or none."""
        with self.transaction():
            yield

    def _create_session(self, meta: SessionMeta, clean: bool) -> tuple[int, str, int]:
        created = meta.created_at if meta.created_at is not None else now_ms()
        session_id = meta.session_id or str(uuid.uuid4())
        cursor = self.conn.execute(
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
        assert pk is not None
        self.conn.execute(
            "INSERT INTO index_state (session_pk, state, indexer_version, tree) VALUES (?, ?, ?, ?)",
            (pk, "clean" if clean else "dirty", INDEXER_VERSION if clean else 0,
             self._tree(meta.key)),
        )
        return pk, session_id, created

    def append(
        self, meta: SessionMeta, line: str | bytes | dict[str, Any], skip_known: bool = False
    ) -> AppendResult:
        """Store one event; index it in the same transaction when it extends the active leaf.

        An event that moves the leaf elsewhere (a leaf control, a branch switch, an
        out-of-order parent) marks the session dirty instead; so does any write that lands
        while a rebuild holds the session (the rebuild then abandons its claim). With
        ``skip_known``, an event the session already holds (same id; an id-less one with the
        same text) is not stored again: the outcome is ``known``. The decisions are
        ``writeplan.plan_append``'s; the methods below carry them out.
        """
        key = normalize_key(meta.key)
        event = parse_event(line)  # the entry bounds are checked here (bounds.py)
        body = body_of(line, event)
        with self.transaction() as conn:
            found = conn.execute(
                "SELECT s.pk, s.session_id, s.created_at, s.last_seq, s.leaf_id, i.state, "
                "i.indexer_version, i.branch_seq "
                "FROM sessions s JOIN index_state i ON i.session_pk = s.pk WHERE s.key = ?",
                (key,),
            ).fetchone()
            if found is None:
                pk, session_id, created_at = self._create_session(meta._replace(key=key), True)
                head = Head(pk, session_id, created_at, 0, None, "clean", INDEXER_VERSION, 0)
                skip_known = False
            else:
                head = Head(*found)
            return carry_out_append(self, head, key, event, body, skip_known)

    def _add_row(self, head: Head, row: IndexRow) -> None:
        self._insert_row(head.pk, head.session_id, row, self._scope(head.pk))

    def _store_event(self, pk: int, seq: int, event: dict[str, Any], body: str,
                     leaf: str | None) -> None:
        self.conn.execute(
            "INSERT INTO events (session_pk, seq, entry_id, kind, body) VALUES (?, ?, ?, ?, ?)",
            (pk, seq, stored_entry_id(event), event["type"], body),
        )
        self.conn.execute(
            "UPDATE sessions SET last_seq = ?, leaf_id = ?, updated_at = ? WHERE pk = ?",
            (seq, leaf, now_ms(), pk),
        )

    def _note_row(self, pk: int, row: IndexRow, title: str | None) -> None:
        """The summary follows the index (schema.SUMMARY_COLUMNS)."""
        self.conn.execute(
            "UPDATE sessions SET last_message_at = max(coalesce(last_message_at, ?), ?), "
            "title = coalesce(title, ?) WHERE pk = ?",
            (row.ts, row.ts, title, pk),
        )

    def _set_indexed(self, pk: int, seq: int, leaf: str | None) -> None:
        self.conn.execute(
            "UPDATE index_state SET indexed_seq = ?, indexed_leaf = ? WHERE session_pk = ?",
            (seq, leaf, pk),
        )

    def _extend_branch(self, pk: int, seq: int, shown: BranchRow | None) -> None:
        """The stored branch messages stay current through event ``seq``, adding ``shown``
        (the message of the event that extends the branch, if a conversation shows it)."""
        if shown is not None:
            self.conn.execute("INSERT INTO branch_messages (session_pk, seq, entry_id, role, at) "
                              "VALUES (?, ?, ?, ?, ?)", (pk, *shown))
        self.conn.execute("UPDATE index_state SET branch_seq = ? WHERE session_pk = ?",
                          (seq, pk))

    def replace_branches(self, batch: list[tuple[int, int, list[BranchRow]]]) -> None:
        """The branch messages of sessions ``(pk, seq, shown)`` as of their event ``seq`` (a
        rebuild's, a catch-up's), inside the caller's transaction; never older over newer, and
        none for a branch not in log order (``stored.UNORDERED_BRANCH``)."""
        pks = json.dumps([pk for pk, _, _ in batch])
        current = dict(self.conn.execute(
            "SELECT session_pk, branch_seq FROM index_state "
            "WHERE session_pk IN (SELECT value FROM json_each(?))", (pks,)))
        batch = in_log_order([(pk, seq, shown) for pk, seq, shown in batch
                              if current.get(pk, seq + 1) <= seq])
        if not batch:
            return
        self.conn.execute(
            "DELETE FROM branch_messages WHERE session_pk IN (SELECT value FROM json_each(?))",
            (json.dumps([pk for pk, _, _ in batch]),))
        self.conn.executemany(
            "INSERT INTO branch_messages (session_pk, seq, entry_id, role, at) "
            "VALUES (?, ?, ?, ?, ?)", [(pk, *row) for pk, _, shown in batch for row in shown])
        self.conn.executemany("UPDATE index_state SET branch_seq = ? WHERE session_pk = ?",
                              [(seq, pk) for pk, seq, _ in batch])

    def _read_cwd(self, pk: int, seq: int = 0, event: dict[str, Any] | None = None) -> None:
        """The session's cwd, as its first header names it (schema.CWD_COLUMN, which finds
        that header itself)."""
        self.conn.execute(f"UPDATE sessions SET {CWD_COLUMN} WHERE pk = ?", (pk,))

    def refresh_summary(self, pk: int) -> None:
        """Title and last message time from the session's index rows, inside the caller's
        transaction (a rebuild publishing them)."""
        self.conn.execute(f"UPDATE sessions SET {SUMMARY_COLUMNS} WHERE pk = ?", (pk,))

    def _mark_dirty(self, pk: int) -> None:
        """The session needs a rebuild; a rebuild holding it loses its claim."""
        self.conn.execute(
            "UPDATE index_state SET state = 'dirty', claim_owner = NULL, claim_expires = NULL "
            "WHERE session_pk = ?",
            (pk,),
        )

    def _has_body(self, pk: int, body: str) -> bool:
        """An id-less stored event has this text."""
        return self._has("entry_id IS NULL AND body = ?", pk, body)

    def _has(self, condition: str, pk: int, value: str) -> bool:
        return self.conn.execute(f"SELECT 1 FROM events WHERE session_pk = ? AND {condition}",
                                 (pk, value)).fetchone() is not None

    def _adopted(self, pk: int, node: str) -> bool:
        """Whether a stored entry names ``node`` as its (missing) parent, so a node that does not
        move the leaf still joins the branch. Only a tree the last rebuild found broken is read
        (a missing parent comes with a leaf move), only events spelling the id are parsed."""
        rows = self.conn.execute(  # CROSS JOIN: index_state is the outer loop
            "SELECT e.seq, e.body FROM index_state i CROSS JOIN events e ON e.session_pk = ? "
            "WHERE i.session_pk = ? AND i.problems IS NOT NULL "
            "AND (instr(e.body, ?) > 0 OR instr(e.body, ?) > 0)", (pk, pk, *id_spellings(node))
        ).fetchall()
        return names_as_parent(rows, node)

    def _has_entry(self, pk: int, entry_id: str) -> bool:
        return self._has("entry_id = ?", pk, entry_id)

    def _tree(self, key: str) -> str:
        """The session and the sessions it descends from (core/tree_tags.py), as space-separated
        pks, from the current links."""
        found: dict[str, tuple[int, SessionLink] | None] = {}

        def link_of(k: str) -> SessionLink | None:
            if k not in found:
                row = self.conn.execute(
                    "SELECT pk, spawned_by, parent_key FROM sessions WHERE key = ?", (k,)
                ).fetchone()
                found[k] = (row[0], SessionLink(k, row[1], row[2])) if row else None
            hit = found[k]
            return hit[1] if hit else None

        link_of(key)
        pks = [hit[0] for k in ancestors(key, link_of, self.agent_id) if (hit := found.get(k))]
        return " ".join(map(str, pks))

    def _scope(self, pk: int) -> str:
        """What the scope column of a session's rows holds: the tags of its stored tree."""
        tree = self.conn.execute(
            "SELECT tree FROM index_state WHERE session_pk = ?", (pk,)
        ).fetchone()[0]
        return scope_text(pk, tree)

    def _insert_row(self, pk: int, session_id: str, row: IndexRow, scope: str) -> int:
        rowid = first_rowid(session_id, row)
        while True:
            try:
                self.conn.execute(
                    "INSERT INTO message_index (rowid, session_pk, entry_id, role, ts) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (rowid, pk, row.entry_id, row.role, row.ts),
                )
                break
            except sqlite3.IntegrityError:
                rowid = next_rowid(rowid)
        self.conn.execute(
            "INSERT INTO message_fts (rowid, body, scope) VALUES (?, ?, ?)", (rowid, row.body, scope)
        )
        # OR FAIL: nothing here can fail a constraint, and without a statement journal (which
        # the totals' trigger would open) FTS5 keeps the row pending: a sync's appends in one
        # transaction stay one index segment (see the note below).
        self.conn.execute(
            "UPDATE OR FAIL index_state SET rows = rows + 1, chars = chars + ? "
            "WHERE session_pk = ?",
            (len(row.body), pk),
        )
        return rowid

    # Rebuilds write many rows per transaction. FTS5 keeps new rows in memory until the
    # commit, but writes them out as a segment of their own whenever a later statement of the
    # transaction opens a statement journal (an UPDATE firing a trigger, a multi-row DELETE):
    # per-session statements between inserts would leave one tiny segment per session, merged
    # again and again as the index grows. So every other statement comes first, then one
    # delete and one insert of all the rows of the batch.

    def replace_rows(self, batch: list[tuple[int, str, list[IndexRow]]]) -> None:
        """Replace the index rows of sessions ``(pk, session_id, rows)`` inside the caller's
        transaction; the rows name each session's tree as the links give it now."""
        if not batch:
            return
        for pk, _session_id, rows in batch:
            key = self.conn.execute("SELECT key FROM sessions WHERE pk = ?", (pk,)).fetchone()
            self.conn.execute(
                "UPDATE index_state SET tree = ?, rows = ?, chars = ? WHERE session_pk = ?",
                (self._tree(key[0]) if key else "", len(rows), sum(len(r.body) for r in rows), pk),
            )
        pks = json.dumps([pk for pk, _, _ in batch])
        self.conn.execute(
            "DELETE FROM message_fts WHERE rowid IN (SELECT rowid FROM message_index "
            "WHERE session_pk IN (SELECT value FROM json_each(?)))",
            (pks,),
        )
        self.conn.execute(
            "DELETE FROM message_index WHERE session_pk IN (SELECT value FROM json_each(?))",
            (pks,),
        )
        self._insert_rows(batch)

    def add_rows(self, pk: int, session_id: str, rows: list[IndexRow]) -> None:
        """Add rows to a session being rebuilt in several transactions (after the first)."""
        self.conn.execute(
            "UPDATE index_state SET rows = rows + ?, chars = chars + ? WHERE session_pk = ?",
            (len(rows), sum(len(r.body) for r in rows), pk),
        )
        self._insert_rows([(pk, session_id, rows)])

    def _insert_rows(self, batch: list[tuple[int, str, list[IndexRow]]]) -> None:
        """Place rowids in Python against the rows already stored near them (and each
        other), then write everything with two ``executemany`` calls."""
        wanted = [(first_rowid(sid, row), pk, row) for pk, sid, rows in batch for row in rows]
        if not wanted:
            return
        placed = place_rowids(wanted, self._taken_rowids)  # in rowid order: one FTS5 segment
        scopes = {pk: self._scope(pk) for pk, _, _ in batch}
        self.conn.executemany(
            "INSERT INTO message_index (rowid, session_pk, entry_id, role, ts) "
            "VALUES (?, ?, ?, ?, ?)",
            [(rowid, pk, r.entry_id, r.role, r.ts) for rowid, pk, r in placed],
        )
        self.conn.executemany(
            "INSERT INTO message_fts (rowid, body, scope) VALUES (?, ?, ?)",
            [(rowid, r.body, scopes[pk]) for rowid, pk, r in placed],
        )

    def _taken_rowids(self, rowids: list[int]) -> set[int]:
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT rowid FROM message_index WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(rowids),),
            )
        }

    def delete_session(self, key: str, host: str | None = None) -> bool:
        """Remove a session's events, index rows and index state in one transaction, then
        purge its words from the full-text index and the log (``purge``)."""
        key = normalize_key(key)
        if host is not None and host != self.host:
            return False
        with self.transaction() as conn:
            found = conn.execute("SELECT pk FROM sessions WHERE key = ?", (key,)).fetchone()
            if found is None:
                return False
            pk = found[0]
            self.replace_rows([(pk, "", [])])
            self.replace_tools([(pk, "", [])])
            conn.execute("DELETE FROM events WHERE session_pk = ?", (pk,))
            conn.execute("DELETE FROM branch_messages WHERE session_pk = ?", (pk,))
            conn.execute("DELETE FROM index_state WHERE session_pk = ?", (pk,))
            conn.execute("DELETE FROM sessions WHERE pk = ?", (pk,))
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('purge_pending', '1')")
        self.purge()
        return True

    def purge(self, only_if_pending: bool = False) -> bool:
        """Make deleted text unrecoverable from the files: FTS5 keeps a deleted row's words in
        its older index segments until they are merged, so they are merged into one
        (``optimize``); freed pages are zeroed (``secure_delete``); the WAL, which holds old
        copies of pages, is checkpointed and truncated. A crash before the end leaves
        ``purge_pending`` set, and the next purge (a delete, or a reconciliation pass)
        finishes. Returns whether the log could be emptied (a reader may hold it)."""
        with self.transaction() as conn:
            pending = conn.execute("SELECT 1 FROM meta WHERE key = 'purge_pending'").fetchone()
            if only_if_pending and pending is None:
                return True
            conn.execute("INSERT INTO message_fts (message_fts) VALUES ('optimize')")
            conn.execute("INSERT INTO tool_fts (tool_fts) VALUES ('optimize')")
            conn.execute("DELETE FROM meta WHERE key = 'purge_pending'")
        with sqlite_errors(self.path):
            # TRUNCATE waits for readers to leave the log: briefly, a writer is never held up
            self.conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
            try:
                busy, _log, _done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if busy:  # a reader still uses the log: the next purge truncates it
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('purge_pending', '1')"
                )
        return not busy

    def purge_limits(self) -> list[str]:
        pending = self.conn.execute("SELECT 1 FROM meta WHERE key = 'purge_pending'").fetchone()
        if pending is None:
            return []
        return [f"a purge is pending: another process is reading {self.path.name}, so the "
                f"deleted words stay in its log ({self.path.name}-wal) and old index segments "
                "until the next delete or reconciliation pass (`backscroll reindex` runs "
                "one) after that reader is done finishes it"]


def _lower(value: str | None) -> str | None:
    return value.lower() if isinstance(value, str) else None
