"""What a sync records of the live sources' files and folders (SPEC 14), as
``storage/sqlite/source_writes.py``; loaded with the writer."""

from __future__ import annotations

import json
from typing import Iterable

from ...keys import normalize_key
from ..model import FileState, SessionMeta
from .imports import Imports
from .sources import COLUMNS, SourceReads
from .writes import _clean, _lower


class SourceWrites(Imports, SourceReads):
    def save_file_state(self, state: FileState, moved_from: str | None = None) -> None:
        """Insert or replace a file's row (``moved_from``: its row under the name it had);
        call inside ``atomic()`` with the events read from it."""
        self.ensure_agent(state.synced_at)
        with self.transaction() as conn:
            if moved_from is not None:
                conn.execute("DELETE FROM source_files WHERE agent_id = %s AND host = %s "
                             "AND path = %s", (self.agent_id, self.host, moved_from))
            conn.execute(
                f"INSERT INTO source_files (agent_id, host, {COLUMNS}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (agent_id, host, path) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS.split(", ")[1:]),
                (
                    self.agent_id, self.host, state.path, state.kind, state.root, state.device, state.inode,
                    state.size, state.mtime_ns, state.done_bytes, state.done_lines,
                    state.head_hash, state.tail_hash, state.context,
                    json.dumps(list(state.sessions)), state.synced_at, state.missing_since,
                    _clean(state.problem),
                ),
            )

    def relink_session(self, meta: SessionMeta) -> bool:
        """A session store names the session ``meta.session_id`` anew: take its links and
        label, and its key when it is stored under the placeholder an import without a store
        entry gave it (``agent:<id>:import:<sessionId>``). True when something changed."""
        key = normalize_key(meta.key)
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT pk, key, spawned_by, parent_key, label FROM sessions "
                "WHERE agent_id = %s AND session_id = %s AND host IN (%s, '') "
                "ORDER BY host DESC LIMIT 1 FOR UPDATE",
                (self.agent_id, meta.session_id, self.host),
            ).fetchone()
            if row is None:
                return False
            pk, stored_key, *links = row
            placeholder = f"agent:{self.agent_id}:import:{meta.session_id}".lower()
            taken = conn.execute("SELECT 1 FROM sessions WHERE agent_id = %s AND key = %s "
                                 "AND host = %s", (self.agent_id, key, self.host)).fetchone()
            new_key = key if stored_key == placeholder and not taken else stored_key
            wanted = [_lower(meta.spawned_by), _lower(meta.parent_key),
                      _clean(meta.label) or links[2]]
            if new_key == stored_key and wanted == links:
                return False
            conn.execute(
                "UPDATE sessions SET key = %s, spawned_by = %s, parent_key = %s, label = %s "
                "WHERE pk = %s",
                (new_key, *wanted, pk),
            )
        return True

    def rekey_session(self, session_id: str, key: str, label: str | None) -> bool:
        """As the SQLite backend's."""
        key = normalize_key(key)
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT pk, key, label FROM sessions WHERE agent_id = %s AND session_id = %s "
                "AND host IN (%s, '') ORDER BY host DESC LIMIT 1 FOR UPDATE",
                (self.agent_id, session_id, self.host)).fetchone()
            if row is None or (row[1] == key and _clean(label) in (None, row[2])):
                return False
            if row[1] != key and conn.execute(
                    "SELECT 1 FROM sessions WHERE agent_id = %s AND key = %s AND host = %s",
                    (self.agent_id, key, self.host)).fetchone():
                return False
            conn.execute("UPDATE sessions SET key = %s, label = coalesce(%s, label) "
                         "WHERE pk = %s", (key, _clean(label), row[0]))
        return True

    def mark_archived(self, session_id: str, archived: bool = True) -> bool:
        """As the SQLite backend's."""
        with self.transaction() as conn:
            changed = conn.execute(
                "UPDATE sessions SET archived = %s WHERE archived <> %s AND pk IN ("
                "SELECT pk FROM sessions WHERE agent_id = %s AND session_id = %s "
                "AND host IN (%s, '') ORDER BY host DESC LIMIT 1)",
                (archived, archived, self.agent_id, session_id, self.host)).rowcount
        return changed > 0

    def mark_missing(self, paths: Iterable[str], since: int) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE source_files SET missing_since = %s WHERE agent_id = %s AND host = %s "
                "AND missing_since IS NULL AND path = ANY(%s::text[])",
                (since, self.agent_id, self.host, list(paths)),
            )

    def record_sync(self, roots: Iterable[tuple[str, str]], when: int) -> None:
        self.ensure_agent(when)
        with self.transaction() as conn:
            for root, kind in roots:
                conn.execute(
                    "INSERT INTO source_syncs (agent_id, host, root, kind, synced_at) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (agent_id, host, root) DO UPDATE "
                    "SET kind = excluded.kind, synced_at = excluded.synced_at",
                    (self.agent_id, self.host, root, kind, when),
                )
