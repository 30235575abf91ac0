"""The write path on PostgreSQL (SPEC 3): append with the index row in the same transaction,
import without indexing, delete, and the bulk row writes rebuilds use.

Concurrency: every write locks its session's row first (``FOR UPDATE``), so two hosts
appending to one session take turns, and appends to different sessions run side by side.
Rowids are unique per agent; a rowid another transaction took meanwhile is skipped with
``ON CONFLICT DO NOTHING`` and the row moves to the next slot, as in SQLite.
"""

from __future__ import annotations

import json
import uuid
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Iterator

from ...indexer import INDEXER_VERSION, IndexRow, first_rowid, indexes_session, next_rowid, row_for
from ...keys import normalize_key
from ...transcript import advance, indexable, node_id, parse_event
from ..model import AppendResult, SessionMeta, now_ms
from .driver import Conflict, retried
from .fts import index_text
from .reads import Reads
from .text import store_text

_INSERT_ROW = (
    "INSERT INTO message_index (agent_id, rowid, session_pk, entry_id, role, ts, body, "
    "ntokens, exact, tsv) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector) "
    "ON CONFLICT (agent_id, rowid) DO NOTHING RETURNING rowid"
)


class Writes(Reads):
    """Writing methods; the connection is a writer's, in autocommit mode."""

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """BEGIN ... COMMIT, rolled back on any error (nothing half-written)."""
        with self._tx() as conn:
            yield conn

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

    def _locked(self, column: str, value: str) -> tuple | None:
        return self.conn.execute(
            "SELECT pk, key, session_id, created_at, last_seq, leaf_id, state, indexer_version "
            f"FROM sessions WHERE agent_id = %s AND {column} = %s FOR UPDATE",
            (self.agent_id, value),
        ).fetchone()

    def _create_session(self, meta: SessionMeta, clean: bool) -> tuple | None:
        """Insert a session row; None if another transaction created that key meanwhile."""
        created = meta.created_at if meta.created_at is not None else now_ms()
        return self.conn.execute(
            "INSERT INTO sessions (agent_id, key, session_id, spawned_by, parent_key, label, "
            "source, created_at, updated_at, state, indexer_version) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING "
            "RETURNING pk, key, session_id, created_at, last_seq, leaf_id, state, indexer_version",
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
            ),
        ).fetchone()

    @retried
    def append(self, meta: SessionMeta, line: str | dict[str, Any]) -> AppendResult:
        key = normalize_key(meta.key)
        event = parse_event(line)
        body = line if isinstance(line, str) else json.dumps(event, ensure_ascii=False)
        body = body.strip()
        with self._tx() as conn:
            found = self._locked("key", key)
            if found is None:
                found = self._create_session(replace(meta, key=key), True) or self._locked("key", key)
            if found is None:
                raise Conflict(f"session {key} was created and removed meanwhile")
            pk, _key, session_id, created_at, last_seq, leaf, state, version = found
            seq = last_seq + 1
            step = advance(leaf, seq, event, lambda eid: self._has_entry(pk, eid))
            moved_off = step.node is not None and step.leaf == step.node and not step.extends
            outcome = "dirty" if event["type"] == "leaf" or moved_off else "stored"
            if step.extends and state == "clean" and version == INDEXER_VERSION:
                message = indexable(event, created_at)
                if message and indexes_session(key):
                    row = row_for(message.entry_id, message.role, message.timestamp_ms, message.text)
                    self.insert_rows(pk, session_id, [row])
                    outcome = "indexed"
            kind = event["type"]
            stored_id = None if kind in ("session", "leaf") else node_id(event, seq)
            real_id = stored_id if stored_id and not stored_id.startswith("#") else None
            conn.execute(
                "INSERT INTO events (session_pk, seq, entry_id, kind, body) VALUES (%s, %s, %s, %s, %s)",
                (pk, seq, real_id, kind, body),
            )
            conn.execute(
                "UPDATE sessions SET last_seq = %s, leaf_id = %s, updated_at = %s, "
                "messages = messages + %s WHERE pk = %s",
                (seq, step.leaf, now_ms(), int(kind == "message"), pk),
            )
            if state == "claimed" or outcome == "dirty":
                self._mark_dirty(pk)
                outcome = "dirty" if outcome != "indexed" else outcome
            elif state == "clean" and version == INDEXER_VERSION:
                conn.execute(
                    "UPDATE sessions SET indexed_seq = %s, indexed_leaf = %s WHERE pk = %s",
                    (seq, step.leaf, pk),
                )
        return AppendResult(seq, outcome)

    def _mark_dirty(self, pk: int) -> None:
        self.conn.execute(
            "UPDATE sessions SET state = 'dirty', claim_owner = NULL, claim_expires = NULL "
            "WHERE pk = %s",
            (pk,),
        )

    def _has_entry(self, pk: int, entry_id: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM events WHERE session_pk = %s AND entry_id = %s", (pk, entry_id)
        ).fetchone()
        return row is not None

    def insert_rows(self, pk: int, session_id: str, rows: list[IndexRow]) -> None:
        """Insert index rows inside the caller's transaction and count them in the session's
        bm25 statistics. Rowids are placed against the rows stored near them; a rowid taken
        meanwhile by another transaction moves the row to the next free slot."""
        if not rows:
            return
        texts = [index_text(row.body) for row in rows]
        wanted = [first_rowid(session_id, row) for row in rows]
        taken = self._taken_rowids(wanted)
        placed: list[int] = []
        for rowid in wanted:
            while rowid in taken:
                rowid = next_rowid(rowid)
                if rowid not in taken and self._taken_rowids([rowid]):
                    taken.add(rowid)
            taken.add(rowid)
            placed.append(rowid)
        values = [
            (self.agent_id, rowid, pk, row.entry_id, row.role, row.ts, store_text(row.body),
             text.ntokens, text.exact, text.tsv)
            for rowid, row, text in zip(placed, rows, texts)
        ]
        with self.conn.cursor() as cursor:
            cursor.executemany(_INSERT_ROW, values, returning=True)
            stored = set()
            while True:
                found = cursor.fetchone()
                if found is not None:
                    stored.add(found[0])
                if not cursor.nextset():
                    break
        for value in values:
            rowid = value[1]
            while rowid not in stored:  # another transaction took it: the next free slot
                rowid = next_rowid(rowid)
                again = self.conn.execute(_INSERT_ROW, (value[0], rowid, *value[2:])).fetchone()
                if again is not None:
                    stored.add(rowid)
        self.conn.execute(
            "UPDATE sessions SET index_rows = index_rows + %s, index_tokens = index_tokens + %s "
            "WHERE pk = %s",
            (len(rows), sum(text.ntokens for text in texts), pk),
        )

    def _taken_rowids(self, rowids: list[int]) -> set[int]:
        rows = self.conn.execute(
            "SELECT rowid FROM message_index WHERE agent_id = %s AND rowid = ANY(%s::bigint[])",
            (self.agent_id, rowids),
        ).fetchall()
        return {r[0] for r in rows}

    def delete_rows(self, pk: int) -> None:
        """Remove a session's index rows (and their statistics) inside the caller's
        transaction."""
        self.conn.execute("DELETE FROM message_index WHERE session_pk = %s", (pk,))
        self.conn.execute(
            "UPDATE sessions SET index_rows = 0, index_tokens = 0 WHERE pk = %s", (pk,)
        )

    @retried
    def delete_session(self, key: str) -> bool:
        key = normalize_key(key)
        with self._tx() as conn:
            found = self._locked("key", key)
            if found is None:
                return False
            # events and index rows go with it (ON DELETE CASCADE), in this transaction
            conn.execute("DELETE FROM sessions WHERE pk = %s", (found[0],))
        return True

    @retried
    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None
    ) -> tuple[str, int]:
        key = normalize_key(meta.key)
        with self._tx() as conn:
            by = ("session_id", meta.session_id) if meta.session_id else ("key", key)
            found = self._locked(*by)
            if found is None:
                if self._locked("key", key) is not None:
                    # The key now names another transcript (a reset): keep both.
                    key = f"{key}:import-{meta.session_id}".lower()
                found = self._create_session(replace(meta, key=key), clean=not lines)
                if found is None:
                    raise Conflict(f"session {key} was created meanwhile by another writer")
                pk, key, last_seq = found[0], found[1], found[4]
                seen_ids: set[str] = set()
                seen_bodies: set[str] = set()
            else:
                pk, key, last_seq = found[0], found[1], found[4]
                seen_ids = {
                    r[0]
                    for r in conn.execute(
                        "SELECT entry_id FROM events WHERE session_pk = %s AND entry_id IS NOT NULL",
                        (pk,),
                    )
                }
                seen_bodies = {
                    r[0]
                    for r in conn.execute(
                        "SELECT body FROM events WHERE session_pk = %s AND entry_id IS NULL", (pk,)
                    )
                }
            added = []
            messages = 0
            for n, line in enumerate(lines):
                event = parsed[n] if parsed is not None else json.loads(line)
                seq = last_seq + len(added) + 1
                kind = event.get("type")
                stored_id = None if kind in ("session", "leaf") else node_id(event, seq)
                real_id = stored_id if stored_id and not stored_id.startswith("#") else None
                if (real_id and real_id in seen_ids) or (not real_id and line in seen_bodies):
                    continue
                added.append((pk, seq, real_id, kind, line))
                messages += kind == "message"
            if added:
                with conn.cursor() as cursor, cursor.copy(
                    "COPY events (session_pk, seq, entry_id, kind, body) FROM STDIN"
                ) as copy:
                    for row in added:
                        copy.write_row(row)
                conn.execute(
                    "UPDATE sessions SET last_seq = %s, updated_at = greatest(updated_at, %s), "
                    "messages = messages + %s WHERE pk = %s",
                    (last_seq + len(added), meta.updated_at or 0, messages, pk),
                )
                self._mark_dirty(pk)
        return key, len(added)


def _lower(value: str | None) -> str | None:
    return value.lower() if isinstance(value, str) else None


def _clean(value: str | None) -> str | None:
    """A label PostgreSQL can store (a NUL would be refused; it shows as U+FFFD)."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else None
